"""One kind's detect (fit, score, threshold, explain of every signal) on an existing warehouse, in this process:
wall and CPU seconds, the resident memory before it and its peak (VmRSS sampled every 20 ms), and the largest
frame the fitted detector keeps.

The warehouse's features by day must be stored (a night bench's replica, or a warehouse a run has judged); the
feature store's pair table is summed before the clock starts, as the night's feature pass leaves it. DuckDB gets
the pipeline's 1 GB limit unless ``--duckdb-memory`` says otherwise.

    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse /tmp/night/warehouse.duckdb --kind soft_play

The detectors imported are those of ``PYTHONPATH``: run it with ``PYTHONPATH`` set to each checkout to compare
two versions of a detector on the same warehouse.
"""

from __future__ import annotations

import argparse
import threading
import time

import duckdb
import polars as pl

from detectors import get_detector
from detectors.features import gameplay as gp


def rss_mb() -> int:
    """This process's resident memory (VmRSS), MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) // 1024 for line in fh if line.startswith("VmRSS"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--kind", default="soft_play")
    ap.add_argument("--window-days", type=int, default=90)
    ap.add_argument("--duckdb-memory", default="1GB")
    args = ap.parse_args()
    peak = [0]

    def sample() -> None:
        while True:
            peak[0] = max(peak[0], rss_mb())
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()
    con = duckdb.connect(args.warehouse, read_only=True)
    con.execute("SET memory_limit = ?", [args.duckdb_memory])
    gp.store_for(con, window_days=args.window_days).pair_table(con)
    start = peak[0] = rss_mb()
    t, c = time.perf_counter(), time.process_time()
    det = get_detector(args.kind)
    signals = det.detect(con)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    frames = {k: v for k, v in vars(det).items() if isinstance(v, pl.DataFrame)}
    big = max(frames, key=lambda k: frames[k].estimated_size()) if frames else None
    kept = (f"{big}: {frames[big].height:,} rows, {frames[big].estimated_size() / 1e6:,.0f} MB" if big else "none")
    print(f"{args.kind}: {len(signals)} signals, {sum(s.flagged for s in signals)} flagged; {wall:.1f} s wall, "
          f"{cpu:.1f} CPU s; VmRSS before {start:,} MB, peak {peak[0]:,} MB (+{peak[0] - start:,}); "
          f"largest fitted frame {kept}")


if __name__ == "__main__":
    main()
