"""The seat hand-off fit's coded queries of its accounts run once over all of them and fetched a record batch at a
time: the decision times by account (``_TIMING_CODES_SQL``) and the accounts' tournament hands
(``_HISTORY_CODES_SQL``, :func:`read_history`), read once per batch of accounts, scanned the warehouse's
``actions`` (and ``decisions``) whole for every batch.
"""

from __future__ import annotations

from typing import Callable

import duckdb
import polars as pl

from detectors.seat_handoff.queries import ACTS, _HISTORY_CODES_SQL, _with_strength

#: rows of a record batch fetched from the one pass (each reduced before the next is fetched)
FETCH_ROWS = 1_000_000


def read_coded_once(con: duckdb.DuckDBPyConnection, sql: str, names: list[str],
                    transform: Callable[[pl.DataFrame], pl.DataFrame], fetch_rows: int | None = None) -> pl.DataFrame:
    """``sql`` (a query of the accounts in the registered ``_rb_ac``: ``account``, ``code``) run once with every
    account of ``names`` registered, its result fetched by record batches (at most ``fetch_rows`` rows each,
    default :data:`FETCH_ROWS`), each reduced by ``transform`` before the next is fetched: the rows of
    :func:`~detectors.seat_handoff.frames.read_coded`'s batches of accounts, by one scan of the tables.

    Parameters
    ----------
    con : the warehouse (with the :class:`~detectors.seat_handoff.frames.Codes` frames registered). sql : the
    query (its rows independent of one another: a row-wise transform of each batch is that of the whole). names :
    the accounts, sorted: an account's code is its index here. transform : what is kept of a batch's rows (it
    must keep each row on its own: an account's rows may come in several batches). fetch_rows : the rows of a
    record batch.

    Returns
    -------
    The batches' kept rows, one frame (an account's rows in the order DuckDB returned them; the rows of several
    accounts interleaved: a caller that needs them by account sorts them,
    :func:`~detectors.seat_handoff.frames.key_slices`).

    Method
    ------
    DuckDB's memory limit bounds the one pass (its joins spill past it); the result in Python is what the caller
    keeps of it, a batch of raw rows at a time."""
    con.register("_rb_ac", pl.DataFrame({"account": pl.Series(names, dtype=pl.Utf8),
                                         "code": pl.Series(range(len(names)), dtype=pl.Int32)}))
    try:
        reader = con.sql(sql).to_arrow_reader(FETCH_ROWS if fetch_rows is None else fetch_rows)
        parts = [transform(pl.from_arrow(b)) for b in reader]
        if not parts:  # (no row: the query's columns, empty)
            parts = [transform(pl.from_arrow(reader.schema.empty_table()))]
    finally:
        con.unregister("_rb_ac")
    return pl.concat(parts, how="vertical_relaxed")


def null_history(hist: pl.DataFrame, key: str = "account") -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the population's null reads of its accounts' tournament hands (:mod:`detectors.seat_handoff.null`),
    taken from their rows so that the rows need not be held: the action counts summed by account, and the hands
    with an entry decision counted by account and range stratum.

    Parameters
    ----------
    hist : tournament-hand rows (``account``, the action counts ``n_<action>``, ``rstr``, ``rcls``).
    key : the column of the account (``account``, or a code of it).

    Returns
    -------
    ``(sums, ranges)``: ``sums`` one row per account (``key``, the counts summed); ``ranges`` one row per
    account and stratum with ``rcls >= 0`` (``key``, ``rstr``, ``n`` hands, ``n1`` of them entered, ``n2``
    entered with a raise)."""
    sums = hist.group_by(key).agg([pl.col(f"n_{a}").sum() for a in ACTS])
    ranges = (hist.filter(pl.col("rcls") >= 0).group_by(key, "rstr")
              .agg(n=pl.len(), n1=(pl.col("rcls") >= 1).sum(), n2=(pl.col("rcls") == 2).sum()))
    return sums, ranges


def read_history(con: duckdb.DuckDBPyConnection, names: list[str], null_ev: pl.DataFrame
                 ) -> tuple[pl.DataFrame, tuple[pl.DataFrame, pl.DataFrame]]:
    """The tournament hands of ``names`` read by one pass of :data:`_HISTORY_CODES_SQL` (:func:`read_coded_once`),
    coded by DuckDB: the candidate accounts' kept, the null accounts' (those of ``null_ev``) reduced as the null
    reads them (:func:`null_history`) as each record batch is fetched.

    Parameters
    ----------
    con : the warehouse (the codes of :class:`~detectors.seat_handoff.frames.Codes` and ``_rb_strength``
    registered). names : the accounts, sorted. null_ev : the null's account-events (``account``, ...).

    Returns
    -------
    ``(hist, null_hist)``: ``hist`` the candidate accounts' rows (``acc``: the index in ``names``; ``tc``,
    ``started_at``, the action counts, ``dc``, ``rstr``, ``rcls``), in no order; ``null_hist`` the null accounts'
    ``(sums, ranges)`` of :func:`null_history` by account name (an account's rows may come in several batches: the
    batches' sums and counts summed again, integers)."""
    null_acc = set(null_ev["account"].to_list())
    null_codes = pl.Series([i for i, a in enumerate(names) if a in null_acc], dtype=pl.Int32)
    accs = pl.Series(names, dtype=pl.Utf8)
    null_parts: list[tuple[pl.DataFrame, pl.DataFrame]] = []

    def keep(df: pl.DataFrame) -> pl.DataFrame:
        # (the columns the tests read: the entry decision's situation is in rstr and rcls); the null
        # accounts' rows reduced to what the null reads
        df = _with_strength(df).select("acc", "tc", "started_at", *[f"n_{a}" for a in ACTS], "dc", "rstr", "rcls")
        is_null = pl.col("acc").is_in(null_codes.implode())
        sums, ranges = null_history(df.filter(is_null), "acc")
        null_parts.append(tuple(x.with_columns(account=accs.gather(x["acc"].cast(pl.UInt32))).select(
            "account", pl.exclude("account", "acc")) for x in (sums, ranges)))
        return df.filter(~is_null)

    hist = read_coded_once(con, _HISTORY_CODES_SQL, names, keep)
    sums, ranges = (pl.concat([p[i] for p in null_parts], how="vertical_relaxed") for i in (0, 1))
    return hist, (sums.group_by("account", maintain_order=True).agg(pl.exclude("account").sum()).cast(sums.schema),
                  ranges.group_by("account", "rstr", maintain_order=True).agg(pl.exclude("account", "rstr").sum())
                  .cast(ranges.schema))
