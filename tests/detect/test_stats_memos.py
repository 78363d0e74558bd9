"""The own-baseline memos of :mod:`detectors.stats.baselines` live no longer than the decisions they were computed
from: in the nightly process one kind's first passes and tests must not stay resident through the next kinds."""

import gc

import numpy as np
import polars as pl

from detectors.stats import baselines, robust_own_baseline


def _decisions(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"player": p, "opponent": o, "aggr": bool(v), "preflop": False, "facing": False, "hu": True,
             "sbin": 2} for p in "ABCD" for o in "ABCD" if p != o for v in rng.random(40) < 0.3]
    return pl.DataFrame(rows).with_columns(pl.col("sbin").cast(pl.Int8))


def _entries() -> int:
    return len(baselines._FIRST_CACHE) + len(baselines._SAME_SELECTION) + len(baselines._ROBUST_CACHE)


def test_memos_are_freed_with_their_decisions():
    gc.collect()
    before = _entries()
    dec = _decisions(1)
    first = robust_own_baseline(dec, "aggr", side="less")
    again = robust_own_baseline(dec, "aggr", side="less")  # a hit while the frame lives
    assert again is first
    assert _entries() > before
    del dec, first, again
    gc.collect()
    assert _entries() == before


def test_a_living_frame_keeps_its_memo_when_another_dies():
    keep, drop = _decisions(2), _decisions(3)
    kept = robust_own_baseline(keep, "aggr", side="less")
    robust_own_baseline(drop, "aggr", side="less")
    del drop
    gc.collect()
    assert robust_own_baseline(keep, "aggr", side="less") is kept
