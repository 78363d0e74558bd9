"""What one huge SQL answer costs the server: 80 cells of 10 MB, fetched unlimited or through the SQL limits.

``python benchmarks/sql_limits_bench.py old`` fetches the rows as the SQL page
did before the limits (``con.execute(q).fetchmany(1001)``);
``python benchmarks/sql_limits_bench.py new`` through
:func:`pipelines.lib.readonly_sql.run_query`. Run each in its own process: it
prints the characters that reached Python, the process's peak RSS and the time.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from pipelines.lib.readonly_sql import open_snapshot, run_query

QUERY = "SELECT repeat('x', 10000000) AS s FROM range(80)"


def main(mode: str) -> None:
    db = Path(tempfile.mkdtemp()) / "snapshot.duckdb"
    duckdb.connect(str(db)).close()
    t0 = time.monotonic()
    if mode == "old":
        con = open_snapshot(db)
        chars = sum(len(r[0]) for r in con.execute(QUERY).fetchmany(1001))
        con.close()
    else:
        chars = sum(len(r[0]) for r in run_query(db, QUERY).rows)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{mode}: {chars:,} characters in Python, peak RSS {rss:,.0f} MB, {time.monotonic() - t0:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "new")
