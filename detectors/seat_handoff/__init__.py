"""Seat hand-off: someone else takes over an account's seat in mid-event.

Method
------
Candidate change points (:mod:`detectors.seat_handoff.candidates`): per
account and tournament, a login during the account's play from a device or
network the previous session did not use, at a hand-over (the session the
event began on is closed by then). Without sessions every split of the
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

The samples of one helper device are pooled over every event it took over.
Style and timing are combined with Fisher's method and each candidate's
combined p is ranked against simulated same-player moves in this population
(:mod:`detectors.seat_handoff.null`; an empirical null, Efron, JASA 2004),
keeping the larger of that Monte Carlo p and the tests' own;
Benjamini–Hochberg controls the false-discovery rate over the candidates. A
candidate is flagged (:meth:`SeatHandoffDetector.threshold`) at a hand-over
(a login within ``handover_s`` of one of the account's logouts) from a device
the account had never used with a shift in style or timing, or from a known
device with a field-relative style shift beyond ``known_device_p``; a clean
quick hand-over to a new device on a new network, a device that only ever
takes the account's seat, or a seat left from one home network and taken on
another (two places at once) relax the level to ``handover_p`` /
``repeat_p`` but still need the play to shift. One login takes one seat.

The figures behind each rule are in docs/measurements.md ("Detector notes
moved from docstrings").
"""

from detectors.seat_handoff.detector import SeatHandoffDetector
