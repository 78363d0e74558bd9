"""``railbird sql "SELECT …" [--format table|csv|json] [--limit N]``: read-only SQL over the published snapshot.

The same walls as the web app's SQL page (``pipelines.lib.readonly_sql``):
one SELECT / WITH / EXPLAIN only, checked with DuckDB's own parser, on a
``read_only`` connection to the snapshot (never the live warehouse) without
file-system access. A refusal is reported as one line.
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
from pipelines.lib.readonly_sql import SqlDoesNotParse, SqlRefused, check_query, open_snapshot


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="one SQL statement (tables and views: see docs/warehouse.md)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="print at most N rows")
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


def render(columns: list[str], rows: list[tuple], fmt: str, out=None) -> None:
    out = out or sys.stdout
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        w.writerows([[("" if v is None else _fmt(v)) for v in r] for r in rows])
    elif fmt == "json":
        for r in rows:
            out.write(json.dumps({c: _jsonable(v) for c, v in zip(columns, r)}, default=str) + "\n")
    else:
        cells = [[_fmt(v) for v in r] for r in rows]
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
    try:
        con = open_snapshot(db)
    except duckdb.Error as exc:
        raise RailbirdError(f"cannot open {db}: {exc}") from None
    if con is None:
        raise RailbirdError(f"no published warehouse snapshot at {db}: run `railbird ingest` or `railbird run` first")
    try:
        try:
            cur = con.execute(args.query)
            columns = [d[0] for d in cur.description] if cur.description else []
            rows = cur.fetchmany(args.limit) if args.limit is not None else cur.fetchall()
        except duckdb.Error as exc:
            raise RailbirdError(f"query failed: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    render(columns, rows, args.format)
    return 0
