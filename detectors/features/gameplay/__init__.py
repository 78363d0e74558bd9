"""Game-play features: every heads-up decision judged by the cards, and per-pair tables.

One module per concern, every public name importable from here
(``from detectors.features import gameplay as gp``):

- :mod:`~detectors.features.gameplay.cards`: card arrays, all-in equity, hand strength,
  starting-hand percentiles (Hold'em and Omaha).
- :mod:`~detectors.features.gameplay.decisions`: :func:`hu_decisions` (each decision aimed at one
  opponent, with strength, equity and value given), the own-baseline test, the bet faced and stack depth.
- :mod:`~detectors.features.gameplay.pairs`: per ordered pair tables (:func:`pair_features`, its sums over
  hands :func:`pair_decisions`, :func:`chip_flow`, hands together) and the SQL the evidence shows.
- :mod:`~detectors.features.gameplay.store`: :class:`FeatureStore`, the features of one warehouse state
  computed once per run and shared by the detectors (:func:`cached_pair_features`, :func:`cached_chip_flow`),
  and the per-frame index behind :func:`decisions_of` and :func:`tournaments_of`.
- :mod:`~detectors.features.gameplay.bounty` and :mod:`~detectors.features.gameplay.bounty_tests`:
  knockout spots, per-pair bounty rows and their tests; :mod:`~detectors.features.gameplay.bounty_passing`:
  a short stack's bounty kept within a pair (calls of the partner's raise, shoves with the partner in).
- :mod:`~detectors.features.gameplay.distributions`: exact tails of sums of beta-binomial counts.
"""

from __future__ import annotations

from detectors.features.gameplay.bounty import (
    BOUNTY_CONTEXT_BINS,
    BOUNTY_LOOSENESS_TAU,
    BOUNTY_PRESENCE_SQL,
    BOUNTY_SPOTS_SQL,
    POSITION_BIN,
    bounty_offset_priors,
    bounty_pairs,
    bounty_presence,
    bounty_spots,
    bounty_tournament_effect,
)
from detectors.features.gameplay.bounty_passing import (
    BOUNTY_PARTNER_RAISE_SQL,
    BOUNTY_SHOVE_SQL,
    PASSING_COLS,
    bounty_partner_raises,
    bounty_passing,
    bounty_shoves,
    discrete_bh,
)
from detectors.features.gameplay.bounty_tests import (
    bounty_strongest_partner,
    bounty_unshadowed,
    bounty_wide_calls,
    bounty_wide_cells,
    wide_tail,
    wide_tournament_effect,
)
from detectors.features.gameplay.cards import (  # _preflop_strength: tests/detect/test_seat_handoff_range.py
    CARD_INDEX,
    _preflop_strength,
    card_values,
    omaha_strength,
    preflop_equity_table,
    preflop_percentile_table,
    starting_hand_percentile,
)
from detectors.features.gameplay.decisions import (
    BOARD_COLS,
    CARD_COLS,
    HOLE_COLS,
    HU_DECISIONS_PARTS_SQL,
    HU_DECISIONS_SQL,
    OPP_COLS,
    PREFLOP_RAISES_SQL,
    PRICE_BINS,
    STRENGTH_BINS,
    TOURNAMENT_STACKS_SQL,
    VALUE_CAP,
    by_hand_ranges,
    hu_decisions,
    own_baseline,
    score_test_terms,
    with_bet_faced,
    with_stack_depth,
)
from detectors.features.gameplay.distributions import betabinom_sum_sf, overdispersed_sum_sf
from detectors.features.gameplay.pairs import (
    CHIP_FLOW_SQL,
    HU_COUNTS_SQL,
    card_coverage,
    chip_flow,
    dealt_in_keys,
    encode,
    hands_together,
    name_codes,
    own_baseline_columns,
    pair_decisions,
    pair_features,
    seat_nets_cte,
    unordered,
)
from detectors.features.gameplay.store import (
    FeatureStore,
    cached_chip_flow,
    cached_decision_relation,
    cached_pair_features,
    decisions_of,
    release,
    store_for,
    tournaments_of,
    warehouse_identity,
)

__all__ = [
    "BOARD_COLS", "BOUNTY_CONTEXT_BINS", "BOUNTY_LOOSENESS_TAU", "BOUNTY_PARTNER_RAISE_SQL", "BOUNTY_PRESENCE_SQL",
    "BOUNTY_SHOVE_SQL", "BOUNTY_SPOTS_SQL", "PASSING_COLS",
    "CARD_COLS", "CARD_INDEX", "CHIP_FLOW_SQL", "HOLE_COLS", "HU_COUNTS_SQL", "HU_DECISIONS_PARTS_SQL",
    "HU_DECISIONS_SQL", "OPP_COLS", "POSITION_BIN", "PREFLOP_RAISES_SQL", "PRICE_BINS", "STRENGTH_BINS",
    "TOURNAMENT_STACKS_SQL", "VALUE_CAP", "FeatureStore",
    "betabinom_sum_sf", "bounty_offset_priors", "bounty_pairs", "bounty_partner_raises", "bounty_passing",
    "bounty_shoves", "discrete_bh", "bounty_presence", "bounty_spots", "bounty_strongest_partner", "bounty_tournament_effect",
    "bounty_unshadowed", "bounty_wide_calls", "bounty_wide_cells", "by_hand_ranges", "cached_chip_flow",
    "cached_decision_relation", "cached_pair_features", "card_coverage", "card_values", "chip_flow", "dealt_in_keys", "decisions_of", "encode",
    "hands_together", "hu_decisions", "name_codes", "omaha_strength", "overdispersed_sum_sf", "own_baseline",
    "own_baseline_columns", "pair_decisions", "pair_features", "preflop_equity_table", "preflop_percentile_table",
    "release", "score_test_terms", "seat_nets_cte", "starting_hand_percentile", "store_for", "tournaments_of",
    "unordered", "warehouse_identity", "with_bet_faced", "with_stack_depth", "wide_tail", "wide_tournament_effect",
]
