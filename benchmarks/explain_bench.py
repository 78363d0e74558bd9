"""What each kind's explanations cost: CPU seconds of fit, score and threshold, then of ``explain`` over every row.

For each kind named, the detector is fitted on a warehouse (opened read-only, the pipeline's 1 GB DuckDB limit unless
``--duckdb-memory``), its rows are thresholded, and every row is explained as :meth:`detectors.base.Detector.detect`
does; the process's CPU seconds (all threads) of each part are printed, with the rows' shapes (pair, ring, star,
group). A kind whose ``explain`` reads the warehouse per signal shows it here as seconds that grow with the window.

    python benchmarks/explain_bench.py /work/pops/P/home/warehouse.duckdb --kinds chip_dumping soft_play
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def cpu() -> float:
    """The process's user and system CPU seconds so far."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    from detectors import get_detector
    from detectors.kinds import KINDS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), help="kinds (default: every kind)")
    ap.add_argument("--duckdb-memory", default="1GB")
    args = ap.parse_args()
    con = duckdb.connect(args.warehouse, read_only=True, config={"memory_limit": args.duckdb_memory})
    for kind in args.kinds:
        det = get_detector(kind)
        c = cpu()
        rows = list(det.threshold(det.fit(con).score(con)).iter_rows(named=True))
        fit = cpu() - c
        shapes = Counter(r.get("shape") or ("group" if len(r.get("accounts") or []) > 2 else "pair") for r in rows)
        c, w = cpu(), time.perf_counter()
        for r in rows:
            det.explain(con, r)
        print(f"{kind:<20} fit+score+threshold {fit:7.1f} CPU s  explain {len(rows):>4} rows {cpu() - c:6.1f} CPU s "
              f"({time.perf_counter() - w:6.1f} s wall)  {dict(sorted(shapes.items()))}", flush=True)
    con.close()


if __name__ == "__main__":
    main()
