"""Seat hand-offs' decision classes (detectors/seat_handoff/queries.py ``_TIMING_CODES_SQL``, statistics.py
``fold_to_big_class``): a preflop fold facing a third of the stack or more is counted with the class its times
resemble in the population, the big decisions or the quick folds (issue 32).

Late in an event stacks are short and a player faces shoves more often; where a fold to a shove is considered (as
slow as a big decision in the first world's populations), counted among the quick preflop folds those slow folds
make the quick class's spread after a late switch wider than the same player's own history: one person, read as
another (docs/measurements.md, 2026-12-07, "Seat hand-offs: the honest device switcher's folds to a shove")."""

from __future__ import annotations

import datetime as dt
import math

import duckdb
import numpy as np
import polars as pl

from detectors.seat_handoff.queries import _TIMING_CODES_SQL
from detectors.seat_handoff.statistics import FOLD_TO_BIG, _device_time_many, fold_to_big_class

T0 = dt.datetime(2026, 3, 1, 12, 0, 0)


def _warehouse(shove: list[bool], log_ms: list[float]) -> duckdb.DuckDBPyConnection:
    """One account's tournament hands, each a preflop fold: facing a shove of its whole stack (``shove``) or a big
    blind, taken in ``exp(log_ms)`` ms; one session on one device; the codes ``_TIMING_CODES_SQL`` joins
    registered."""
    n = len(shove)
    hid = [f"h{i}" for i in range(n)]
    con = duckdb.connect()
    frames = {
        "hands": pl.DataFrame({"hand_id": hid, "tournament_id": ["t1"] * n,
                               "started_at": [T0 + dt.timedelta(seconds=30 * i) for i in range(n)],
                               "big_blind": [100.0] * n}),
        "seats": pl.DataFrame({"hand_id": hid, "player": ["p"] * n, "stack_start": [1500.0] * n,
                               "sitting_out": [False] * n}),
        "actions": pl.DataFrame({"hand_id": hid, "seq": [5] * n, "street": ["preflop"] * n, "action": ["fold"] * n,
                                 "amount": [0.0] * n, "raise_to": pl.Series([None] * n, dtype=pl.Float64),
                                 "is_all_in": [False] * n, "to_call": [1500.0 if s else 100.0 for s in shove]}),
        "decisions": pl.DataFrame({"hand_id": hid, "seq": [5] * n, "account": ["p"] * n,
                                   "ms": [int(round(math.exp(v))) for v in log_ms]}),
        "sessions": pl.DataFrame({"account": ["p"], "login_at": [T0 - dt.timedelta(minutes=5)], "device": ["dev"]}),
    }
    for name, frame in frames.items():  # the tables the query reads, under their own names
        con.register(name, frame)
    con.register("_rb_ac", pl.DataFrame({"account": ["p"], "code": [0]}))
    con.register("_rb_tc", pl.DataFrame({"tournament_id": ["t1"], "tc": pl.Series([0], dtype=pl.Int32)}))
    con.register("_rb_dc", pl.DataFrame({"device": ["dev"], "dc": pl.Series([0], dtype=pl.Int32)}))
    return con


def test_a_fold_to_a_shove_is_read_apart_from_the_quick_folds():
    con = _warehouse([True, False], [math.log(1500.0), math.log(400.0)])
    cls = con.sql(_TIMING_CODES_SQL).pl().sort("started_at")["cls"].to_list()
    assert cls == [FOLD_TO_BIG, 0]


def test_a_fold_to_a_shove_counts_with_the_class_its_times_resemble():
    rng = np.random.default_rng(0)
    cls = np.repeat([0, 1, 2, FOLD_TO_BIG], 200)
    slow = np.log(np.repeat([1000.0, 2000.0, 4200.0, 4100.0], 200)) + rng.normal(0.0, 0.7, 800)
    quick = np.log(np.repeat([3900.0, 4200.0, 4750.0, 3950.0], 200)) + rng.normal(0.0, 0.05, 800)
    assert set(fold_to_big_class(slow, cls)[cls == FOLD_TO_BIG]) == {2}
    assert set(fold_to_big_class(quick, cls)[cls == FOLD_TO_BIG]) == {0}
    assert (fold_to_big_class(slow, cls)[cls != FOLD_TO_BIG] == cls[cls != FOLD_TO_BIG]).all()


def test_more_shoves_faced_late_is_not_a_wider_spread():
    """One player: quick folds at 400 ms, folds to a shove at 1,200 ms (log sd 0.3 each); 5 % of the first 240
    folds face a shove, 40 % of the 120 after the point; the population's big decisions at 1,300 ms. The quick class
    after the point against before: its spread test is not small (below 1e-4 with the folds to a shove counted as
    quick folds, over these draws)."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n_b, n_a = 240, 120
        shove = np.concatenate([rng.random(n_b) < 0.05, rng.random(n_a) < 0.4])
        lm = np.where(shove, math.log(1200.0), math.log(400.0)) + rng.normal(0.0, 0.3, n_b + n_a)
        df = _warehouse(list(map(bool, shove)), list(lm)).sql(_TIMING_CODES_SQL).pl().sort("started_at")
        # the population's other decisions: big ones about as slow as the folds to a shove
        big = math.log(1300.0) + rng.normal(0.0, 0.3, 200)
        x = np.concatenate([df["log_ms"].to_numpy(), big])
        c = fold_to_big_class(x, np.concatenate([df["cls"].to_numpy(), np.full(200, 2)]))[: n_b + n_a]
        x = x[: n_b + n_a]
        out = _device_time_many([x[n_b:]], [c[n_b:]], [x[:n_b]], [c[:n_b]], math.log(1.5), speed=False)
        assert out["p"][0] > 1e-3, (seed, out)
