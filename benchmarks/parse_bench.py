"""Parser speed: decode + parse of >= 200,000 real hands, next to a plain read.

Builds a temporary folder with the real PokerStars corpus files repeated, each
copy with new hand ids (the header's ``#<id>`` gets a copy prefix), until at
least ``--hands`` hand headers are there. Then times, in this order:

1. a plain read of every file (bytes, no decoding);
2. ``parse_files`` (read + decode + parse, process pool of ``--workers``).

Prints hands/s, MB/s, CPU-seconds (fairer than wall time on a shared
machine) and peak resident memory (``resource.getrusage``: this
process and, separately, the largest worker).

    .venv/bin/python benchmarks/parse_bench.py [--hands 200000] [--workers 2]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus import replicate  # noqa: E402  (benchmarks/corpus.py)
from pipelines.lib.handhistory import parse_files  # noqa: E402

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="railbird-bench-"))
    try:
        t0 = time.perf_counter()
        files, headers = replicate(tmp, args.hands)
        size = sum(f.stat().st_size for f in files)
        print(f"built {len(files)} files, {headers} hand headers, {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f}s")

        t0 = time.perf_counter()
        n = 0
        for f in files:
            n += len(f.read_bytes())
        read_s = time.perf_counter() - t0
        print(f"plain read:          {read_s:6.2f}s  {size / 1e6 / read_s:8.0f} MB/s  {headers / read_s:10.0f} hands/s")

        def cpu() -> float:
            a = resource.getrusage(resource.RUSAGE_SELF)
            b = resource.getrusage(resource.RUSAGE_CHILDREN)
            return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

        c0 = cpu()
        t0 = time.perf_counter()
        r = parse_files(files, workers=args.workers)
        parse_s = time.perf_counter() - t0
        parse_cpu = cpu() - c0
        assert r.headers_seen == headers, (r.headers_seen, headers)
        stored = r.tables["hands"].height
        print(f"decode+parse:        {parse_s:6.2f}s  {size / 1e6 / parse_s:8.0f} MB/s  {headers / parse_s:10.0f} hands/s "
              f"({stored} stored, {r.quarantine.height} quarantined, workers={args.workers})")
        print(f"CPU time:            {parse_cpu:6.2f}s  {headers / parse_cpu:10.0f} hands per CPU-second "
              f"(the machine is shared: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS: this process {me:.0f} MB, largest worker {kids:.0f} MB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
