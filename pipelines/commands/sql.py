"""``railbird sql "SELECT …" [--format table|csv|json] [--limit N] [--timeout S]``: read-only SQL over the snapshot.

The same walls and limits as the web app's SQL page
(``pipelines.lib.readonly_sql``): one SELECT / WITH / EXPLAIN only, checked
with DuckDB's own parser, on a ``read_only`` connection to the snapshot
(never the live warehouse) without file-system access; at most ``--limit``
rows (1000 by default), 2,000,000 characters in all and 10,000 per cell,
stopped after ``--timeout`` seconds (10 by default). What was cut is said on
standard error.

Names and chat are attacker-controlled: the table drops terminal escape
sequences and shows control characters as ``?``; the CSV prefixes cells a
spreadsheet would run as formulas with a quote (and, on a terminal, drops
escapes too); JSON escapes every control character.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import decimal
import json
import sys

import duckdb

from pipelines.lib import paths
from pipelines.lib.errors import RailbirdError
from pipelines.lib.readonly_sql import (SqlDoesNotParse, SqlLimits, SqlRefused, check_query, open_snapshot,
                                        run_with_timeout)
from pipelines.lib.safe_text import csv_row, terminal_safe


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="one SQL statement (tables and views: see docs/warehouse.md)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    parser.add_argument("--limit", type=int, default=SqlLimits.rows, metavar="N",
                        help="print at most N rows (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=SqlLimits.seconds, metavar="S",
                        help="stop the query after S seconds (default: %(default)s)")
    parser.add_argument("--database", metavar="FILE", help=f"database to read (default: {paths.snapshot_path()})")


def _jsonable(v):
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (_dt.timedelta,)):
        return str(v)
    return v


def _fmt(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def render(columns: list[str], rows: list, fmt: str, out=None) -> None:
    """Print rows as an aligned table, CSV or JSON lines, made safe for terminals and spreadsheets (module doc)."""
    out = out or sys.stdout
    if fmt == "csv":
        to_tty = out.isatty() if hasattr(out, "isatty") else False
        clean = (lambda v: terminal_safe(v, keep="\t\n")) if to_tty else (lambda v: v)
        w = csv.writer(out, lineterminator="\n")
        w.writerow(csv_row(clean(c) for c in columns))
        w.writerows([csv_row(("" if v is None else clean(_fmt(v))) for v in r) for r in rows])
    elif fmt == "json":  # ensure_ascii: every control character leaves as a \u escape
        for r in rows:
            out.write(json.dumps({c: _jsonable(v) for c, v in zip(columns, r)}, default=str, ensure_ascii=True) + "\n")
    else:
        columns = [terminal_safe(c) for c in columns]
        cells = [[terminal_safe(_fmt(v)) for v in r] for r in rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
        out.write(" | ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip() + "\n")
        out.write("-+-".join("-" * w for w in widths) + "\n")
        for r in cells:
            out.write(" | ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() + "\n")
        out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")


def main(args: argparse.Namespace) -> int:
    db = args.database or str(paths.snapshot_path())
    try:
        check_query(args.query)
    except SqlDoesNotParse as exc:
        raise RailbirdError(str(exc)) from None
    except SqlRefused as exc:
        raise RailbirdError(f"refused: the snapshot is read-only: {exc}") from None
    if args.limit < 0 or args.timeout <= 0:
        raise RailbirdError("--limit must be 0 or more and --timeout more than 0")
    try:
        con = open_snapshot(db)
    except duckdb.Error as exc:
        raise RailbirdError(f"cannot open {db}: {exc}") from None
    if con is None:
        raise RailbirdError(f"no published warehouse snapshot at {db}: run `railbird ingest` or `railbird run` first")
    try:
        result = run_with_timeout(con, args.query, SqlLimits(rows=args.limit, seconds=args.timeout))
    except SqlRefused as exc:
        raise RailbirdError(str(exc)) from None
    except duckdb.Error as exc:
        raise RailbirdError(f"query failed: {terminal_safe(str(exc).splitlines()[0])}") from None
    finally:
        con.close()
    render(result.columns, result.rows, args.format)
    if result.truncated:
        print(f"railbird sql: {result.cut_reason} (see --limit)", file=sys.stderr)
    return 0
