"""Read-only SQL over the published snapshot, for investigators (web SQL page) and analysts (`railbird sql`).

Four walls, each enough on its own to stop a write:

1. the text is parsed with DuckDB's own parser (``duckdb.extract_statements``)
   and refused unless it is exactly one SELECT (``WITH ...`` included) or an
   EXPLAIN [ANALYZE] of one;
2. the connection is ``read_only=True`` on the snapshot, never the live
   warehouse;
3. ``enable_external_access = false`` (no files: no COPY TO, ATTACH, INSTALL,
   read_csv of server files) and ``lock_configuration = true`` (no SET to
   undo it), extension auto-install/auto-load off;
4. a watchdog thread calls ``con.interrupt()`` after the time limit.

Beside the walls, limits on what a query may cost the server: rows, the
characters of all cells and of one cell (cut inside DuckDB, so a query of
80 cells of 10 MB never brings 800 MB into Python), seconds; the web app
runs queries on a few low-priority worker threads (:class:`SqlRunner`), never
on its event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

READ_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
    "threads": 1,
    "memory_limit": "1GB",
}
ALLOWED = {duckdb.StatementType.SELECT}
_EXPLAIN = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*explain\s+(?:analyze\s+)?(.*)$", re.I | re.S)
MAX_QUERY_CHARS = 20_000


class SqlRefused(Exception):
    """The text is not one read-only query."""


class SqlDoesNotParse(SqlRefused):
    """The text is not SQL DuckDB can parse (a typo, not an attempt to write)."""


@dataclass
class SqlResult:
    """What a query returned within the limits: column names, rows, and whether and why it was cut."""
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False
    cut_reason: str = ""  # "" or a sentence: which limit cut the rows or the cells
    seconds: float = 0.0


@dataclass(frozen=True)
class SqlLimits:
    """The limits of one query: rows, characters of all cells together, characters of one cell, seconds."""
    rows: int = 1000
    chars: int = 2_000_000
    cell_chars: int = 10_000
    seconds: float = 10.0


class SqlBusy(SqlRefused):
    """Every SQL worker is busy: the query was not started."""


def open_snapshot(path: str | Path) -> duckdb.DuckDBPyConnection | None:
    """A read-only, file-system-less connection to the snapshot, or None if no run published one yet."""
    p = Path(path)
    if not p.exists():
        return None
    return duckdb.connect(str(p), read_only=True, config=dict(READ_CONFIG))


def check_query(query: str) -> str:
    """Return the one statement if it is a SELECT / WITH / EXPLAIN of one; raise SqlRefused otherwise."""
    if len(query) > MAX_QUERY_CHARS:
        raise SqlRefused(f"query longer than {MAX_QUERY_CHARS} characters")
    try:
        stmts = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise SqlDoesNotParse(f"does not parse: {exc}") from None
    if len(stmts) != 1:
        raise SqlRefused(f"exactly one statement, please (got {len(stmts)})")
    st = stmts[0]
    if st.type == duckdb.StatementType.EXPLAIN:
        m = _EXPLAIN.match(st.query)
        inner = duckdb.extract_statements(m.group(1)) if m else []
        if len(inner) != 1 or inner[0].type not in ALLOWED:
            raise SqlRefused("EXPLAIN only of a SELECT")
    elif st.type not in ALLOWED:
        raise SqlRefused(f"only SELECT, WITH ... SELECT and EXPLAIN are allowed (this is {st.type.name})")
    return query


# DuckDB type ids whose values print short: kept as they are; every other column (text, blobs, lists,
# structs, maps, unions, JSON) is cast to VARCHAR and cut inside DuckDB, so a huge cell never reaches Python
_SHORT_TYPES = {"boolean", "tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint",
                "uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "date", "time", "time with time zone",
                "timestamp", "timestamp with time zone", "timestamp_s", "timestamp_ms", "timestamp_ns", "interval",
                "uuid", "null"}


def fetch_limited(con: duckdb.DuckDBPyConnection, query: str, limits: SqlLimits) -> SqlResult:
    """Run one checked query on ``con`` and fetch it within ``limits`` (no time limit here: see :func:`run_query`).

    Method: the query becomes a DuckDB relation (parsed alone, never pasted
    into other SQL); a star projection gives its columns unique names; every
    column not of a short type is cast to VARCHAR and cut to
    ``cell_chars + 1`` characters by DuckDB, and the relation is limited to
    ``rows + 1`` rows; rows are then read 64 at a time until the rows or
    the characters of all cells run out. A cut cell ends with "…".

    Returns an :class:`SqlResult` with typed cells (``None`` for NULL).
    """
    rel = con.sql(query)
    if rel is None:  # not a query with a result (check_query lets none through)
        return SqlResult()
    names = list(rel.columns)
    flat = rel.project(duckdb.StarExpression())  # duplicate names become a, a_1, ...
    text = duckdb.sqltype("VARCHAR")
    exprs, cut = [], []
    for col, typ in zip(flat.columns, flat.types):
        e = duckdb.ColumnExpression(col)
        if typ.id in _SHORT_TYPES:
            exprs.append(e)
            cut.append(False)
        else:
            exprs.append(duckdb.FunctionExpression("left", e.cast(text), duckdb.ConstantExpression(limits.cell_chars + 1)))
            cut.append(True)
    cur = flat.project(*exprs).limit(limits.rows + 1)
    rows: list[list[Any]] = []
    budget, reason, cells_cut = limits.chars, "", 0
    for r in cur.iter_rows(batch_size=64):
        if len(rows) == limits.rows:
            reason = f"cut at the limit of {limits.rows} rows"
            break
        row = list(r)
        for i, v in enumerate(row):
            if cut[i] and v is not None and len(v) > limits.cell_chars:
                row[i] = v[: limits.cell_chars] + "…"
                cells_cut += 1
        size = sum(len(v) if isinstance(v, str) else 8 for v in row)
        if size > budget:
            reason = f"cut at {len(rows)} rows: the limit of {limits.chars:,} characters in all"
            break
        budget -= size
        rows.append(row)
    if cells_cut:
        reason = "; ".join(x for x in (reason, f"{cells_cut} cells cut at {limits.cell_chars:,} characters") if x)
    return SqlResult(columns=names, rows=rows, truncated=bool(reason), cut_reason=reason)


def _cell(v: Any) -> str:
    return "NULL" if v is None else str(v)


def run_query(snapshot: str | Path, query: str, *, limit: int | None = None, timeout: float | None = None,
              limits: SqlLimits | None = None) -> SqlResult:
    """Check, then run on a fresh read-only connection within the limits; cells as text ("NULL" for NULL).

    ``limits`` (default :class:`SqlLimits`), with ``limit`` (rows) and
    ``timeout`` (seconds) overriding its fields. A watchdog thread calls
    ``con.interrupt()`` when the time is up, wherever the query is.
    """
    lim = limits or SqlLimits()
    lim = SqlLimits(rows=lim.rows if limit is None else limit, chars=lim.chars, cell_chars=lim.cell_chars,
                    seconds=lim.seconds if timeout is None else timeout)
    check_query(query)
    con = open_snapshot(snapshot)
    if con is None:
        raise SqlRefused("no run has published a snapshot yet")
    t0 = time.monotonic()
    try:
        res = run_with_timeout(con, query, lim)
    finally:
        con.close()
    res.rows = [[_cell(v) for v in r] for r in res.rows]
    res.seconds = time.monotonic() - t0
    return res


def run_with_timeout(con: duckdb.DuckDBPyConnection, query: str, limits: SqlLimits) -> SqlResult:
    """:func:`fetch_limited` with a watchdog that interrupts ``con`` after ``limits.seconds``."""
    timer = threading.Timer(limits.seconds, con.interrupt)
    timer.start()
    try:
        return fetch_limited(con, query, limits)
    except duckdb.InterruptException:
        raise SqlRefused(f"stopped after the time limit of {limits.seconds:g} s") from None
    finally:
        timer.cancel()


class SqlRunner:
    """Queries of the web SQL page, run off the event loop on a few low-priority worker threads.

    At most ``workers`` queries run at once; one more is refused at once
    (:class:`SqlBusy`) instead of queueing. The worker threads run ``niceness``
    above the process's own nice value (Linux: per thread; at most 19), so the app's other pages keep the CPU
    when queries are running; each query runs on one DuckDB thread and is
    interrupted at its time limit.
    """

    def __init__(self, snapshot: str | Path, limits: SqlLimits, workers: int = 2, niceness: int = 10) -> None:
        self.snapshot, self.limits = snapshot, limits
        self._slots = threading.BoundedSemaphore(workers)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="railbird-sql",
                                        initializer=_lower_priority, initargs=(niceness,))

    async def run(self, query: str) -> SqlResult:
        """Check and run one query in a worker; raises SqlRefused / SqlBusy / duckdb.Error."""
        check_query(query)
        if not self._slots.acquire(blocking=False):
            raise SqlBusy("every SQL worker is busy with other queries: try again in a few seconds")
        fut = self._pool.submit(run_query, self.snapshot, query, limits=self.limits)
        fut.add_done_callback(lambda _: self._slots.release())  # released when the query ends, not when the client leaves
        return await asyncio.wrap_future(fut)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _lower_priority(niceness: int) -> None:
    """Raise this thread's nice value by ``niceness`` over the process's, at most 19 (Linux schedules threads by
    their own nice value; an absolute value would raise the priority of a server started under ``nice``); no-op
    elsewhere."""
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, own + niceness))
    except (AttributeError, OSError):
        pass
