"""A window of days: bring its day features up to date, and sum its day statistics.

:func:`refresh_days` computes (:func:`~detectors.features.days.compute.compute_day`) the days of a window that
are missing or whose warehouse content changed since they were stored (a late file, a backfill) and nothing
else: a night with one new day computes one day. :func:`window_pair_features` and :func:`window_chip_flow` sum
the stored day statistics over the window into the frames the game-play detectors read
(:func:`~detectors.features.gameplay.pairs.pair_features` without the own-baseline columns and
:func:`~detectors.features.gameplay.pairs.chip_flow`), :func:`window_baseline_cells` the own-baseline tests' counts
per ordered pair and cell (what chip dumping tests instead of counting the window's decisions);
:func:`window_decisions` reads the window's
decisions (only the columns asked for). Every per-pair statistic is a sum over hands and a hand lies in one day, so the sums equal the
whole-window computation (``tests/features``).
"""

from __future__ import annotations

import datetime as dt

import duckdb
import polars as pl

from detectors.features.days.compute import BASELINE_TESTS, HANDS_PER_PART, as_date, compute_day
from detectors.features.days.storage import DayStore, day_fingerprints

#: the default window the detectors judge: the last 90 hand days of the warehouse
#: the hand days judged by default: 0, every day the warehouse holds (a room judging a rolling window
#: sets it, e.g. 90: ``store_for(con, window_days=90)``, docs/scale.md)
DEFAULT_WINDOW_DAYS = 0

_PAIR = ["player", "opponent"]
# pair_features' columns (baseline=False) and types, in its order
_PAIR_TYPES = {"hu_hands": pl.UInt32, "hands_targeted": pl.UInt32, "hu_decisions": pl.UInt32,
               "value_given_bb": pl.Float64, "value_w": pl.Float64, "value_sq": pl.Float64, "value_n": pl.UInt32}


def window_of(days: list[dt.date], window_days: int = DEFAULT_WINDOW_DAYS, end: dt.date | str | None = None
              ) -> list[dt.date]:
    """The days of ``days`` in the ``window_days`` days ending at ``end`` (default: the latest of ``days``);
    ``window_days`` 0 (or less): every day up to ``end``."""
    if not days:
        return []
    last = max(days) if end is None else as_date(end)
    if int(window_days) <= 0:
        return sorted(d for d in days if d <= last)
    first = last - dt.timedelta(days=int(window_days) - 1)
    return sorted(d for d in days if first <= d <= last)


def refresh_days(con: duckdb.DuckDBPyConnection, store: DayStore, days: list[dt.date] | None = None,
                 fingerprints: dict[dt.date, list[int]] | None = None, *, hands_per_part: int = HANDS_PER_PART
                 ) -> list[dt.date]:
    """Compute and store each of ``days`` (default: every hand day of the warehouse) that ``store`` lacks or holds
    from other content; returns the days computed.

    Parameters
    ----------
    con : the warehouse.
    store : where the day tables go (its samples and random_state value the cards).
    days : the days to bring up to date (those without hands in the warehouse are dropped from the store).
    fingerprints : :func:`~detectors.features.days.storage.day_fingerprints` of ``con`` when the caller has them.
    hands_per_part : :func:`~detectors.features.days.compute.compute_day`'s parts (memory against per-part cost).
    """
    fp = day_fingerprints(con) if fingerprints is None else fingerprints
    todo = sorted(fp) if days is None else sorted(as_date(d) for d in days)
    done = []
    for d in todo:
        if d not in fp:
            store.drop(d)
        elif not store.is_current(d, fp[d]):
            with store.writing(d, fp[d]) as w:  # the decisions go to the day's file part by part
                w.put(compute_day(con, d, samples=store.samples, random_state=store.random_state,
                                  hands_per_part=hands_per_part, decisions_to=lambda f: w.append("hu_decisions", f)))
            done.append(d)
    return done


#: the columns that order the window's decisions (one row per hand and decision: the order is unique)
DECISION_ORDER = ["hand_id", "seq"]


def window_decisions(store: DayStore, days: list[dt.date], columns: list[str] | None = None) -> pl.DataFrame:
    """The heads-up decisions of ``days`` (:func:`~detectors.features.gameplay.decisions.hu_decisions`' frame),
    in hand and decision order as that function gives them.

    Parameters
    ----------
    store : the day tables.
    days : the days read, in order.
    columns : the columns returned, in this order (None: every column). Only these and the order's columns
        (:data:`DECISION_ORDER`) are read from the day files (column pushdown): a detector that reads a
        few columns holds those, not the window's decisions whole.
    """
    read = None if columns is None else list(dict.fromkeys([*DECISION_ORDER, *columns]))
    dec = store.read("hu_decisions", days, columns=read)
    dec = dec.sort(DECISION_ORDER) if dec.height else dec
    return dec if columns is None or not dec.width else dec.select(columns)


def _sum_pairs(store: DayStore, table: str, days: list[dt.date], cols: list[str]) -> pl.DataFrame:
    """``table``'s ``cols`` summed per ordered pair over ``days``.

    Method: a fold over the days in order, one day's table read at a time (its pairs are unique) and joined to
    the running sums (a full join keeping the running pairs' order, new pairs after), so memory holds the
    window's pairs once, never every day's rows; the sums are taken in day order, the pairs listed in the order
    they first appear (as ``group_by(maintain_order=True)`` over the days' rows would give them).
    """
    acc = None
    for d in days:
        f = store.read(table, [d], columns=[*_PAIR, *cols])
        if f.height == 0:
            continue
        if acc is None:
            acc = f
            continue
        j = acc.join(f, on=_PAIR, how="full", coalesce=True, suffix="__day", maintain_order="left_right")
        acc = j.select(*_PAIR, *[pl.when(pl.col(f"{c}__day").is_null()).then(pl.col(c))
                                 .when(pl.col(c).is_null()).then(pl.col(f"{c}__day"))
                                 .otherwise(pl.col(c) + pl.col(f"{c}__day")).alias(c) for c in cols])
    if acc is None:
        return pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8, **{c: pl.Float64 for c in cols}})
    return acc


def window_chip_flow(store: DayStore, days: list[dt.date]) -> pl.DataFrame:
    """:func:`~detectors.features.gameplay.pairs.chip_flow` of the window: the days' flows and hands summed."""
    out = _sum_pairs(store, "chip_flow", days, ["flow_bb", "hands"])
    return out.with_columns(pl.col("flow_bb").cast(pl.Float64), pl.col("hands").cast(pl.Int64))


def window_pair_features(store: DayStore, days: list[dt.date], flow: pl.DataFrame | None = None) -> pl.DataFrame:
    """:func:`~detectors.features.gameplay.pairs.pair_features` (``baseline=False``) of the window, from the day
    sums: every pair with a targeted decision, its decision counts and values, hands together and chip flow."""
    base = _sum_pairs(store, "pair_decisions", days, list(_PAIR_TYPES))
    base = base.with_columns(pl.col(c).cast(t) for c, t in _PAIR_TYPES.items()).select(*_PAIR, *_PAIR_TYPES)
    together = _sum_pairs(store, "hands_together", days, ["hands_together"])
    flow = window_chip_flow(store, days) if flow is None else flow
    out = base.join(together.with_columns(pl.col("hands_together").cast(pl.Int64)), on=_PAIR, how="left")
    out = out.join(flow.select(*_PAIR, "flow_bb"), on=_PAIR, how="left")
    return out.with_columns(pl.col("flow_bb").fill_null(0.0), pl.col("hands_together").fill_null(0))


def window_baseline_cells(store: DayStore, days: list[dt.date], test: str,
                          con: duckdb.DuckDBPyConnection | None = None) -> pl.DataFrame:
    """The own-baseline counts of ``test`` (:data:`~detectors.features.days.compute.BASELINE_TESTS`) over the
    window: per ordered pair and cell, the days' ``baseline_pair_cells`` summed.

    Parameters
    ----------
    store : the day tables.
    days : the window's days.
    test : ``"aggr"``, ``"fold"`` or ``"junk"``.
    con : a DuckDB connection that sums a store's files (its memory limit and threads); None: Polars does, a day
        at a time (a store in memory always).

    Returns
    -------
    player, opponent, the test's cell columns, ``n`` (UInt32: the decisions with a known strength the test selects)
    and ``k`` (Int64: those showing its behaviour), sorted by the key (nulls last); the rows
    :func:`detectors.chip_dumping.cells.pair_cells` counts from the window's decisions, in a fixed order. Empty
    (no columns) where the window holds no such decision.

    Method
    ------
    The test's rows of the days (only the columns of its key and counts; the day files are sorted by test, so
    DuckDB skips the other tests' row groups) are summed per key. The counts are sums over hands and a hand lies
    in one day, so the window's sums equal the counts over the window's decisions exactly (integers: in any
    order); the cost is the window's cells, never its decisions' other columns.
    """
    bins = list(BASELINE_TESTS[test][2])
    keys = ["player", "opponent", *bins]
    paths = store.paths("baseline_pair_cells", days)
    if paths and con is not None:
        rel = con.read_parquet(paths, union_by_name=True).filter(
            duckdb.ColumnExpression("test") == duckdb.ConstantExpression(test))
        key = ", ".join(keys)  # column names of BASELINE_TESTS, a module constant
        f = rel.aggregate(f"{key}, sum(n)::UBIGINT AS n, sum(k)::BIGINT AS k", key).pl()
    else:
        frames = []
        for d in days:
            f = store.read("baseline_pair_cells", [d], columns=["test", *keys, "n", "k"])
            f = f.filter(pl.col("test") == test).drop("test") if f.height else f
            if f.height:
                frames.append(f)
        if not frames:
            return pl.DataFrame()
        f = pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]
        del frames
        f = f.group_by(keys).agg(pl.col("n").sum(), pl.col("k").sum()) if len(days) > 1 else f
    if f.is_empty():
        return pl.DataFrame()
    return f.with_columns(pl.col("n").cast(pl.UInt32), pl.col("k").cast(pl.Int64)).sort(keys, nulls_last=True)
