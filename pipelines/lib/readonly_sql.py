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
4. a watchdog thread calls ``con.interrupt()`` after the time limit, and at
   most ``limit`` rows are fetched.
"""

from __future__ import annotations

import re
import threading
import time
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
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    truncated: bool = False
    seconds: float = 0.0


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


def _cell(v: Any) -> str:
    return "NULL" if v is None else str(v)


def run_query(snapshot: str | Path, query: str, *, limit: int = 1000, timeout: float = 10.0) -> SqlResult:
    """Check, then run on a fresh read-only connection with the row and time limits of the module doc."""
    check_query(query)
    con = open_snapshot(snapshot)
    if con is None:
        raise SqlRefused("no run has published a snapshot yet")
    timer = threading.Timer(timeout, con.interrupt)
    t0 = time.monotonic()
    timer.start()
    try:
        cur = con.execute(query)
        columns = [d[0] for d in cur.description or []]
        rows = cur.fetchmany(limit + 1)
    except duckdb.InterruptException:
        raise SqlRefused(f"stopped after the time limit of {timeout:g} s") from None
    finally:
        timer.cancel()
        con.close()
    return SqlResult(columns=columns, rows=[[_cell(v) for v in r] for r in rows[:limit]],
                     truncated=len(rows) > limit, seconds=time.monotonic() - t0)
