"""Speed and memory of world B's generator: prints wall and CPU seconds, peak RSS, and the summary.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/world_b_bench.py --hands 60000 --seed 7
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from datasets.world_b import generate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--hands", type=int, default=60_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--honest-only", action="store_true")
    a = p.parse_args()
    out = Path(tempfile.mkdtemp(prefix="world_b_bench_"))
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        s = generate(out, seed=a.seed, hands=a.hands, honest_only=a.honest_only)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(s))
    print(f"world_b --hands {a.hands} --seed {a.seed}: {s['hands']} hands in {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"({s['hands'] / cpu:,.0f} hands per CPU second), peak RSS {rss:.0f} MB, {size / 1e6:.0f} MB written")


if __name__ == "__main__":
    main()
