"""What the statistics modules share: the smallest p-value kept, the cells of the own-baseline tests."""

from __future__ import annotations

import numpy as np

_TINY = 1e-300


# the cells of the own-baseline tests on heads-up decisions (columns of detectors.features.gameplay.hu_decisions):
# preflop or not, facing a bet or not, heads-up or not, hand strength
OWN_BASELINE_BINS: tuple[str, ...] = ("preflop", "facing", "hu", "sbin")
# the weak-hand commitment ("junk") test's cells: those and the price of a call (``pbin``: a weak hand calls a
# third-pot bet far more often than a pot-sized one; detectors.chip_dumping says what it changed)
JUNK_BINS: tuple[str, ...] = (*OWN_BASELINE_BINS, "pbin")
#: a decisions frame may carry this column: each row then stands for that many decisions with the same values (the
#: counts of one pair, cell and action, detectors.soft_play.cells), and the own-baseline tests count it so
WEIGHT = "_w"


def _arr(x) -> np.ndarray:
    """``x`` as a float array (lists, scalars and integer arrays alike)."""
    return np.asarray(x, dtype=float)
