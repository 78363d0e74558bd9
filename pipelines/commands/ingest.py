"""``railbird ingest PATH… [--warehouse FILE]``: read hand histories, events and accounts into the warehouse.

Loads everything new or changed under the given files/folders in one
transaction (see :mod:`pipelines.lib.ingest`), publishes the snapshot that
readers use, and prints one summary line.
"""

from __future__ import annotations

import argparse

from pipelines.lib import ingest as _ingest
from pipelines.lib import paths
from pipelines.lib import warehouse as wh


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (any sub-folder layout)")
    parser.add_argument("--warehouse", metavar="FILE", help=f"DuckDB file to write (default: {paths.warehouse_path()})")
    parser.add_argument("--growing-seconds", type=float, default=_ingest.GROWING_SECONDS, metavar="S",
                        help="a file modified less than S seconds ago is still being written: read its complete "
                             "hands and read it again next run (default: %(default)s)")
    parser.add_argument("--no-snapshot", action="store_true", help="do not publish the read-only snapshot")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(args: argparse.Namespace) -> int:
    target = args.warehouse or paths.warehouse_path()
    con = wh.connect(target)
    try:
        report = _ingest.ingest(args.paths, con, growing_seconds=args.growing_seconds,
                                progress=False if args.no_progress else None)
        if not args.no_snapshot:
            snapshot = paths.snapshot_path() if not args.warehouse else None
            if snapshot is not None:
                wh.publish_snapshot(con, snapshot)
    finally:
        con.close()
    print(report.summary())
    if report.growing:
        print(f"still growing (read again next run): {len(report.growing)} file(s)")
    if report.files_skipped:
        print(f"unchanged since last ingest: {report.files_skipped} file(s) skipped")
    return 0
