"""Coordinated sit-outs: players of one event who agree to sit out together.

Method
------
1. **Sit-out starts** per account and tournament, from the platform events
   (``sit_events``) and from the hands (``seats.sitting_out`` and the table
   events), starts of one account closer than ``merge_s`` merged; starts seen
   only in the hands are timed on the event's consensus clock
   (:func:`consensus_clock`: the deal order of hand numbers, since each
   table's own clock drifts).
2. **Waves are not coordination.** A start shared by ``wave_share`` of the
   players still in the event (and at least ``wave_min``), or in the first
   hand after a scheduled break, is a break or a disconnect wave and is
   dropped before testing.
3. **Co-occurrence.** Two players' starts co-occur when they fall within the
   sum of their timing tolerances (``tol_event_s``, ``tol_hand_s``). A pair is
   flagged (:meth:`CoordinatedSitoutDetector.flag`) when it co-occurs at
   least ``min_cooccur`` times with q <= ``alpha``, or once when the pair
   co-entered far beyond the configuration model
   (:func:`detectors.features.identity.co_entries`) and the coincidence alone
   is unusual under a Bonferroni bound at ``single_alpha`` over every pair that
   co-entered so and could have sat out together (a sit-out of each in a shared
   event; family-wise control, Holm 1979). The co-entry selects and is no
   evidence: honest friends and housemates co-enter too.
4. **Null: each player's own sit-out rate in the event.** Under independence
   coincidences fall as a Poisson count with mean
   ``lam = sum over start pairs of 2 w / T`` and each gap over its window is
   uniform; per event the statistic ``S = sum of -log(gap / w)`` is a marked
   Poisson variable with an exact tail, and where every sit-out of both
   players has a known length a second mark, whether the two end together:
   the platform's ``sit_in`` seconds after its ``sit_out`` against the
   population's platform sit-out lengths (:func:`_return_mark`), else the
   hands sat out (:func:`_length_mark`). Per-event p-values are combined over the shared
   events by their exact law (:func:`~detectors.coordinated_sitout.null.exact_product_sf`: an event without a
   coincidence has p-value 1 with the chance that none falls, so it costs the pair nothing, where Fisher's method
   counts it as a uniform draw); weighted Benjamini–Hochberg (Genovese,
   Roeder & Wasserman 2006) controls the false-discovery rate over every pair
   of players with a sit-out in a shared event, each pair weighted by the
   number of events in which both sat out (``share_count="moments"``: the
   moments at which both could have sat out together, per shared event the
   smaller of the two players' sit-outs there), cubed (``share_power``:
   pairs of independent players sharing k such events grow rarer fast with
   k, so the error budget moves to them faster than linearly): the test is
   conditional on each player's sit-outs per event, so that count is
   independent of its p-value under the null. A seeded permutation test (Phipson & Smyth, SAGMB 2010) is
   reported for the most suspicious pairs.
5. **Groups** (:mod:`detectors.coordinated_sitout.groups`). A group of three or more accounts, every pair of
   which sat out together and each member with the others in ``group_min_events`` events or more, is tested at
   once: Fisher's combination of its pairs' coincidence tests against ``group_null`` simulated populations whose
   sit-outs follow each event's own rate at that moment (each start moved to a time drawn from the event's other
   players' starts, kernel ``group_bandwidth_s``, within the player's span: a table break or a disconnect of
   several players keeps its rate in the null). Its q is the permutation estimate of the false-discovery rate
   over every group looked at (Storey & Tibshirani 2003); a group at q <= ``alpha`` flags its pairs.
6. **Bubble weight.** The score is -log10(p) times (1 + the mean proximity to
   the money at the co-occurrences); flagged pairs join into groups
   (connected components, :class:`detectors.base.GroupDetector`).
7. **One group per case** (:mod:`detectors.coordinated_sitout.split`). Groups that sit out at the same moments
   (the bubble) coincide across groups too: each component of three or more accounts is split into Louvain
   communities of its flagged pairs, weighted by each pair's evidence times the share of its sit-outs that
   coincided; an account stays only with evidence of its own in its community, and a pair across communities is
   listed on its own with its own q.

The test of near-coincident point events against each unit's own rate follows
the spike-train synchrony literature (Grün, Diesmann & Aertsen, "Unitary event
analysis", Neural Computation 14, 2002). The figures behind each rule are in
docs/measurements.md ("Detector notes moved from docstrings").
"""

from detectors.coordinated_sitout.detector import CoordinatedSitoutDetector
from detectors.coordinated_sitout.null import _length_mark, _marked_poisson_sf, _return_mark
from detectors.coordinated_sitout.starts import consensus_clock

__all__ = ["CoordinatedSitoutDetector", "consensus_clock"]
