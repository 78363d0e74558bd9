"""Seat hand-off: someone else takes over an account's seat in mid-event.

Method
------
Candidate change points (:mod:`detectors.seat_handoff.candidates`): per
account and tournament, a login during the account's play from a device or
network the previous session did not use, at a hand-over (the session the
event began on is closed by then); and a re-login on the device and network of a session
that logged out within ``handover_s`` (``relogins``: someone at the owner's own machine leaves
nothing in the login), judged alone in its event, never pooled by its device. Without sessions every split of the
account's hand sequence is a candidate and the split maximising the
action-mix chi-square is taken, Bonferroni over the splits scanned
(binary segmentation, Scott & Knott, Biometrics 1974; Killick, Fearnhead &
Eckley, JASA 2012); such change points are ranked, never flagged.

Before and after the change point the play is compared
(:mod:`detectors.seat_handoff.statistics`):

* decision timing, device-invariant: a device rescales a person's times, so
  the common shift is removed and the profile over decision classes and the
  spread compared (Mann-Whitney, 1947; van der Linden's lognormal
  response-time model, J. Educ. Behav. Stat. 2006), the shift tested against
  a band (``device_band``; an interval null, Hodges & Lehmann, JRSS B 1954);
* style: the action mix against the rest of the field over the same two
  periods (the who x period x action interaction, G2 by iterative
  proportional fitting) and against the account's own hands under other
  devices, bet sizes (Mann-Whitney), and with every hole card known the
  range: entry and raise given the hand dealt (Cochran-Mantel-Haenszel).

At a login that kept the device (another network only) the baseline is all the account's other play, as
for the simulated moves below, and the speed shift is ranked among those moves' own (no device rescales the
times on one machine); at a change of device, among the other accounts' switches of device.

The samples of one helper device are pooled over every event it took over (the timing's profile and
spread each event's segment moved by its own shift: a pace differs from day to day).
Style and timing are combined with Fisher's method and each candidate's
combined p is ranked against simulated same-player moves in this population
(:mod:`detectors.seat_handoff.null`; an empirical null, Efron, JASA 2004),
beyond the simulated moves' range by their fitted tail (a generalised Pareto
fit, Knijnenburg et al., Bioinformatics 2009), keeping the larger of that
Monte Carlo p and the tests' own: the play's p ``p_play``. The identity side of the login
(:mod:`detectors.seat_handoff.identity`): the device that took the seat (one that never starts play of its
own on the account, arriving on a network new to it, a home-sized one) ranked among the population's own
switch devices, combined with the play's p by Fisher's method: ``p_event``. A seat left from the account's own home on another
device is judged by the two-places test instead (:mod:`detectors.seat_handoff.places`: taken seconds later on
another home-sized network by a device not the owner's, against how often the population's own re-logins on one
device that left a home arrived on another home-sized network; with the play's p by their product's exact law),
where that null can reach the false-discovery level; a device that did so on several days counts each day (the
binomial tail of its days at that rate), unless the population's own owner devices arrive on another home more
often than the re-logins allow (an owner's second place). With ``slow_handover`` (off by default), where that
test is not made (the homes' labels change at re-logins), the slow hand-over is
(:mod:`detectors.seat_handoff.handover`): the seconds the seat stood empty before the login against the population's
other re-logins of the same kind (another device, or the same one), a device counted once by its shortest
hand-over, with the row's p by their product's exact law; an owner's own device is not judged by it. The benign
explanation of a
habit of switching devices (:mod:`detectors.seat_handoff.history`): each
account's mid-event switches are one family of hypotheses, ``p_event``
adjusted within it (Benjamini-Hochberg; an untested switch at p = 1) is the
candidate's ``p_value``, and Benjamini–Hochberg over the candidates gives
``q_value``. A candidate is flagged (:meth:`SeatHandoffDetector.threshold`)
iff its q-value is at most ``fdr``, at a login from a changed device or
network (or, with ``relogins``, a re-login) within ``handover_s`` of one of the account's logouts, with the
population's simulated moves there to calibrate it. The take-over-only structure is
told in the case, not counted; "two places at once" counts only through the two-places test. One login
takes one seat.

The figures behind each rule are in docs/measurements.md ("Detector notes
moved from docstrings").
"""

from detectors.seat_handoff.detector import SeatHandoffDetector
