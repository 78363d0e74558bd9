"""Chip dumping: one account losing chips to another on purpose.

Method
------
Chip flow alone cannot tell a dump from a cooler, so every heads-up decision
is valued with the cards known (:mod:`detectors.features.gameplay`, after
Mazrooei, Archibald & Bowling, AAAI 2013): a fold facing a bet gives the
opponent ``equity*(pot+to_call) - to_call``; chips put in give
``amount*(1 - 2*equity)``. For every ordered pair (giver A, receiver B) five
tests are made, each against the tested player's own play towards everyone
else (robust baselines, :func:`detectors.stats.robust_own_baseline`):

1. *value given*: A's mean value given per decision to B against A's to
   others (z-test with A's own variance);
2. *junk commitment*: A calls, bets or raises B with a weak hand more often
   than A's own rate in the same cells (street, facing a bet, heads-up,
   strength, price of a call: :data:`detectors.stats.JUNK_BINS`) predicts; a
   predictive tail for the estimated rare rate (Gelman, Meng & Stern,
   Statistica Sinica 1996);
3. *late folds* (:func:`receiver_tests`): A folds a made hand to B's turn or
   river bets more often than A's own rate;
4. *receiver aggression* (:func:`receiver_tests`): B bets or raises into A
   after the flop more often than B does against everyone else;
5. *presence* (:func:`presence_tests`): A continues preflop more often with B
   dealt in than in A's hands without B, in the same cells, with table-mates
   of a receiver explained away greedily and thin cells shrunk towards the
   population's rate moved by A's own looseness.

A test whose baseline rests on fewer than ``min_value_n`` (presence:
``min_presence_own``) decisions is not made. Fisher's method combines the
p-values; Benjamini–Hochberg controls the false-discovery rate over the
ordered pairs that met often enough (independent filtering, Bourgon,
Gentleman & Huber, PNAS 2010), in two families: the pairs that met heads-up
at ``alpha * heads_up_share``, the pairs seen by the presence test alone at
the rest (:meth:`ChipDumpingDetector._family_q`), each family's p-values read
on its own null tail (:func:`~detectors.chip_dumping.detector.null_tail_ratio`:
the honest pairs' combined p-values fall below a bound less often than a
uniform null says). A pair is flagged
(:meth:`ChipDumpingDetector.flag`) when q <= alpha and the chips moved:
"the chips did not move" is rejected by one of three tests sharing the
gate's level ``moved_level`` (alpha by default; Bonferroni,
:meth:`ChipDumpingDetector._gate_levels`): the value given, cards known,
against A's own (a quarter of the level), A's losses to B in the
*deviation hands*, those where it put chips in with a weak hand or folded
a made hand late (:func:`deviation_flow`), against A's own per-hand losses
in such hands against everyone else with the pair's variance
(:func:`~detectors.chip_dumping.moved.deviation_moved_p`, a quarter, half
where the value test is not made), or the amount ranked among the
population's pairs (half,
:func:`~detectors.chip_dumping.moved.amount_rank_p`), or, where the
cards are unknown (no deviation hands, no value given), the last two tests,
at half of the level each, over every hand in which chips moved between A and B
(:func:`~detectors.chip_dumping.moved.exchange_moved_p`: A's losses to B
per such hand against A's own per-hand losses to everyone else, and the
amount ranked among the population's pairs). Flagged edges form a value-flow graph
(:mod:`detectors.graphs`): one account feeding many (or many feeding one) is
one *star*. One case per set of accounts: an unflagged direction between two
accounts flagged pairs already join, and the weaker direction of an unflagged
pair, are not cases of their own (:meth:`ChipDumpingDetector.threshold`).

Benign look-alikes considered: coolers (value with the cards known), loose
players (own baselines), regulars (per-decision tests), aggressive players
(the receiver test is against B's own rate), table-mates of a receiver
(explained away), a stronger player winning from a weaker one (with the cards
known the net flow over all hands is no gate: the chips must have moved in
the deviation hands or as value given; where the cards are unknown, the
chips A lost to B are judged against A's own losses to everyone else), a big
pot lost once (the pair's own variance in the chips-moved tests).

Score: −log10 q, comparable within the kind. The figures behind each rule are
in docs/measurements.md ("Detector notes moved from docstrings").
"""

from detectors.chip_dumping.detector import ChipDumpingDetector
from detectors.chip_dumping.evidence import DEVIATION_FLOW_COUNTS_SQL, PRESENCE_COUNTS_SQL, RECEIVER_COUNTS_SQL
from detectors.chip_dumping.flows import deviation_flow, receiver_tests
from detectors.chip_dumping.presence import preflop_decisions, presence_tests

__all__ = ["DEVIATION_FLOW_COUNTS_SQL", "PRESENCE_COUNTS_SQL", "RECEIVER_COUNTS_SQL", "ChipDumpingDetector", "deviation_flow", "preflop_decisions", "presence_tests", "receiver_tests"]
