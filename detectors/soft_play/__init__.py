"""Soft play: two accounts that play less aggressively against each other than against everyone else.

Method
------
Each heads-up decision is judged by the acting player's own cards
(:mod:`detectors.features.gameplay`: strength = share of random holdings
beaten on the current board, so luck cancels). For every pair, each player's
decisions aimed at the partner are compared with that player's own rates
*against everyone else* in the same bins (street, facing a bet or not,
heads-up or not, strength; the stage of play for the check test; shrunk
empirically towards the population, :mod:`detectors.stats`), the baselines
robust (opponents a player treats unlike the rest left out,
:func:`detectors.stats.robust_own_baseline`). Both directions are pooled
(:func:`detectors.stats.pool_directions`, Edgeworth-corrected tails never below the exact
probability of the most extreme outcome), split
by the spot where sparing shows:

- *checks*: bets against the partner heads-up with no bet to call;
- *raises* and *folds*: facing the partner's real bet or raise
  (:func:`detectors.features.gameplay.with_bet_faced`);
- *preflop*: calls and raises facing the partner's open or re-raise, by the
  starting hand's tenth of the 1,326;
- *hands*: whole heads-up hands with no bet from either, surprise-weighted
  (:func:`detectors.stats.hand_passivity_test`, a sparse-mixture test, Donoho
  & Jin, Ann. Stat. 2004; where a baseline is thin, its predictive form,
  Box, JRSS A 1980, and the check test as a two-sample test).

The main test is the check test made street by street and the preflop test,
Fisher-combined as parts on disjoint decisions (:func:`detectors.stats.street_tests`,
``street_support``); where the streets' test was not made, T = 4 z_check +
max(z_preflop, 0) (:func:`detectors.stats.z_sum_with_support`). It, the raise,
fold and hand tests enter a weighted Bonferroni (Genovese, Roeder & Wasserman, Biometrika
2006). Benjamini–Hochberg, weighted by power and by a co-entry prior
(colluders choose to enter together: :func:`detectors.features.identity.co_entries`;
Roeder & Wasserman, Stat. Sci. 2009), controls the false-discovery rate over
the pairs with at least ``min_spots`` decisions aimed at each other. A pair is
flagged (:meth:`SoftPlayDetector.flag`) when q <= alpha, they met heads-up at
least ``min_hu_hands`` times, a deficit is material (``max_ratio``) and it is
mutual (each side's z at least ``mutual_z``, by the check test, its share of
the hand test or its Stouffer z over every test). Triangles of tested pairs
each leaning the sparing way have one combined test (a truncated product,
Zaykin et al., Genet. Epidemiol. 2002, Bonferroni over the triangles). Flagged
pairs form a suspicion graph whose dense communities are rings
(:mod:`detectors.graphs`).

This is the pairwise "play against this partner vs play against others"
comparison of Mazrooei, Archibald & Bowling (AAAI 2013) reduced to
interpretable counts. Benign look-alikes considered: regulars who meet often
(the test is per decision), passive players (own baseline), cautious folds
of weak hands (bins by strength), check-downs with weak hands.

Every test reads the window's decisions through counts per ordered pair, cell
and action, which DuckDB makes over the day files
(:mod:`detectors.soft_play.cells`); the whole-hand test's per-hand sums are
made there too, and only the thin pairs' decisions and those of the pairs
shown are read as rows: memory set by the pairs, not by the decisions. Each
day's decisions with their cells and their counts are made once and stored
beside the day features (:mod:`detectors.soft_play.daycells`): a night joins
and counts its new day only and sums the days' counts.

Score: −log10 q of the pair (the best pair of a ring), comparable within the
kind. The figures behind each rule are in docs/measurements.md ("Detector
notes moved from docstrings").
"""

from detectors.soft_play.detector import SoftPlayDetector
from detectors.soft_play.evidence import COENTRY_SQL, PRE_COUNTS_SQL

__all__ = ["COENTRY_SQL", "PRE_COUNTS_SQL", "SoftPlayDetector"]
