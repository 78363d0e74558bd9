"""Soft play's day files (:func:`detectors.soft_play.daycells.ensure`) of a warehouse's stored days, made one day at a
time: each day's wall and CPU seconds and the process's peak RSS so far, what a night pays for its new day.

By default every stored day but the newest (a night's history, made beforehand, so that the night's own fit makes
only its new day's files); ``--all`` every stored day. Days whose files exist are read, not made again. DuckDB gets
the pipeline's 1 GB limit.

    PYTHONPATH=. python benchmarks/soft_play_days.py /work/nb-soft3
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detectors.features import days as fd  # noqa: E402
from detectors.soft_play import SoftPlayDetector, daycells  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Make the day files of the folder's warehouse (``<folder>/warehouse.duckdb``, ``<folder>/features``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the folder of warehouse.duckdb and its features/")
    ap.add_argument("--all", action="store_true", help="the newest day too")
    args = ap.parse_args(argv)
    det = SoftPlayDetector()
    con = duckdb.connect(str(args.folder / "warehouse.duckdb"))
    con.execute("SET memory_limit = '1GB'")
    store = fd.DayStore(args.folder / "features", samples=det.samples, random_state=det.random_state)
    days = store.days() if args.all else store.days()[:-1]
    for day in days:
        t, c = time.perf_counter(), time.process_time()
        daycells.ensure(con, store, [day], det.stage_bb)
        print(f"{day}: {time.perf_counter() - t:.1f} s, {time.process_time() - c:.1f} CPU s, peak RSS so far "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024:,} MB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
