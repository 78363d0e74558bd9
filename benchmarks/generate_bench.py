"""Throughput and memory of ``railbird generate`` at two sizes.

Prints hands written per second (wall clock, the default pool of two worker
processes), hands per CPU-second (what the wall figure would be per core on an
idle machine) and the peak resident memory of the parent and of the largest
worker, for a small and a ten-times larger population, so that memory that
grows with the number of hands would show. Usage::

    .venv/bin/python benchmarks/generate_bench.py [--sizes 20000 200000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from datasets.generate import generate
out, hands, accounts, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t = time.perf_counter()
generate(out, preset="mixed", seed=7, hands=hands, accounts=accounts, progress=False, workers=workers)
dt = time.perf_counter() - t
n = 0
import pathlib
for f in pathlib.Path(out, "hands").glob("*.txt"):
    with open(f, encoding="utf-8") as fh:
        n += sum(1 for line in fh if line.startswith("PokerStars Hand #"))
ru_s, ru_c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru_s.ru_utime + ru_s.ru_stime + ru_c.ru_utime + ru_c.ru_stime
print(json.dumps({"hands": n, "seconds": dt, "cpu_seconds": cpu,
                  "rss_parent_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rss_worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def run(hands: int, workers: int) -> dict:
    accounts = max(300, min(3000, hands // 100))
    with tempfile.TemporaryDirectory(prefix="railbird-bench-") as tmp:
        proc = subprocess.run([sys.executable, "-c", CHILD, tmp, str(hands), str(accounts), str(workers)],
                              capture_output=True, text=True, check=True)
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    res["accounts"] = accounts
    res["mb_written"] = size / 1e6
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    for hands in args.sizes:
        r = run(hands, args.workers)
        print(f"target {hands:>9,} hands: wrote {r['hands']:,} hands ({r['accounts']} accounts, {r['mb_written']:.0f} MB) "
              f"in {r['seconds']:.1f}s = {r['hands'] / r['seconds']:,.0f} hands/s with {args.workers} workers "
              f"({r['hands'] / r['cpu_seconds']:,.0f} hands per CPU-second, {r['cpu_seconds']:.0f} CPU-s); "
              f"peak RSS parent {r['rss_parent_mb']:.0f} MB, largest worker {r['rss_worker_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
