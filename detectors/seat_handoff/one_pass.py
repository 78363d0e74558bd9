"""A coded query of the seat hand-off fit's accounts run once over all of them and fetched a record batch at a
time: the decision times by account (``_TIMING_CODES_SQL``), read once per batch of accounts, scanned the
warehouse's ``actions`` and ``decisions`` whole for every batch.
"""

from __future__ import annotations

from typing import Callable

import duckdb
import polars as pl

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

