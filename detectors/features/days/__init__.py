"""Features by hand day: what the detectors share, computed once per day, stored by day, summed over a window.

- :mod:`~detectors.features.days.compute`: :func:`compute_day`, one day's tables from that day's rows (a
  warehouse and a day, or the day's frames: what a distributed engine calls, one task per day).
- :mod:`~detectors.features.days.storage`: :class:`DayStore`, Parquet partitions ``<table>/day=YYYY-MM-DD/``
  written atomically with a manifest per day (or in memory; :class:`DayWriter` writes a table part by part),
  :func:`day_fingerprints`, :func:`feature_root`.
- :mod:`~detectors.features.days.window`: :func:`refresh_days` (compute the days missing or changed),
  the window's decisions and the sums of its day statistics (pair features, chip flow, own-baseline cells).

docs/scale.md describes the layout and the nightly pass.
"""

from __future__ import annotations

from detectors.features.days.compute import (
    ACCOUNT_TABLES,
    BASELINE_TESTS,
    DAY_TABLES,
    HAND_TABLES,
    HANDS_PER_PART,
    INPUT_TABLES,
    account_days,
    as_date,
    baseline_cells,
    baseline_pair_cells,
    baseline_player_cells,
    compute_day,
    day_parts,
    day_seed,
    pair_decisions,
    read_day,
)
from detectors.features.days.storage import FORMAT_VERSION, DayStore, DayWriter, day_fingerprints, feature_root
from detectors.features.days.window import (
    DEFAULT_WINDOW_DAYS,
    refresh_days,
    window_baseline_cells,
    window_chip_flow,
    window_decisions,
    window_of,
    window_pair_features,
)

__all__ = [
    "ACCOUNT_TABLES", "BASELINE_TESTS", "DAY_TABLES", "DEFAULT_WINDOW_DAYS", "DayStore", "DayWriter", "FORMAT_VERSION",
    "HAND_TABLES", "HANDS_PER_PART", "INPUT_TABLES", "account_days", "as_date", "baseline_cells", "baseline_pair_cells", "baseline_player_cells", "compute_day", "day_fingerprints",
    "day_parts", "day_seed", "feature_root", "pair_decisions", "read_day", "refresh_days", "window_baseline_cells", "window_chip_flow",
    "window_decisions", "window_of", "window_pair_features",
]
