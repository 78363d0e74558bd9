"""Seat hand-offs' own timing baseline (detectors/seat_handoff/statistics.py ``_own_timing``) reads an account's
decision times as NumPy arrays: the samples are those of the frame's columns compared in Polars, whatever the order
in which frames are asked for."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from detectors.seat_handoff.statistics import _own_timing


def _frame(seed: int, n: int = 200) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    t0 = dt.datetime(2026, 1, 1)
    return pl.DataFrame({"tc": rng.integers(-1, 4, n).astype(np.int32),
                         "started_at": [t0 + dt.timedelta(seconds=int(s)) for s in rng.integers(0, 1000, n)],
                         "log_ms": rng.normal(7, 1, n), "cls": rng.integers(0, 3, n).astype(np.int32),
                         "dc": rng.integers(-1, 3, n).astype(np.int32)})


def _polars_timing(hdec: pl.DataFrame, tournament, cp_time, base_dev) -> tuple:
    """The samples as ``_own_timing`` made them from the frame's columns in Polars."""
    same_event = (hdec["tc"] == tournament).fill_null(False).to_numpy()
    a_mask = same_event & (hdec["started_at"].to_numpy() >= np.datetime64(cp_time, "us"))
    dev = hdec["dc"].to_numpy()
    b_mask = ~a_mask & ((dev != base_dev) if base_dev is not None else np.ones(hdec.height, bool))
    lm, cl = hdec["log_ms"].to_numpy(), hdec["cls"].to_numpy()
    return lm[a_mask], cl[a_mask], lm[b_mask], cl[b_mask], int(b_mask.sum())


def test_own_timing_from_arrays_gives_the_polars_samples():
    frames = [_frame(s) for s in range(3)]
    cut = dt.datetime(2026, 1, 1, 0, 8)
    # frames asked for in turn and again: each call's samples those of its own frame
    for h in frames + frames[::-1] + frames:
        for tournament in (-1, 0, 2, -2):
            for base_dev in (None, -1, 1):
                got, want = _own_timing(h, tournament, cut, base_dev), _polars_timing(h, tournament, cut, base_dev)
                assert got[4] == want[4] and got[4] > 0
                for g, w in zip(got[:4], want[:4]):
                    assert g.dtype == w.dtype and g.tolist() == w.tolist()
