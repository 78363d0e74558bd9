"""Peak memory of ``railbird ingest`` on hostile large hand files: one 200 MB line, and 200 MB of 1,000-char lines.

Each file is written alone into a fresh landing folder (dated two days back, so it is neither growing nor new),
then ingested by ``python -m pipelines.cli ingest`` of a checkout (this one, or ``--checkout DIR`` for another, e.g.
``git worktree add --detach /tmp/before main``) in its own process; the figure is that process's peak resident set
(``getrusage(RUSAGE_CHILDREN).ru_maxrss``, one fresh measuring process per file) and its CPU time.

    .venv/bin/python benchmarks/big_file_bench.py [--mb 200] [--checkout DIR] [--work DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_MEASURE = """
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(ru.ru_maxrss, ru.ru_utime + ru.ru_stime, time.perf_counter() - t)
"""


def write_files(folder: Path, mb: int) -> dict[str, Path]:
    """The two hostile files, ``mb`` MB each: one line (a hand header then ``A``s), and lines of 1,000 characters."""
    size = mb * 1_000_000
    one = folder / "one_line" / "one.txt"
    many = folder / "long_lines" / "many.txt"
    one.parent.mkdir(parents=True)
    many.parent.mkdir(parents=True)
    with open(one, "wb") as fh:
        fh.write(b"PokerStars Hand #1: ")
        block = b"A" * 1_000_000
        for _ in range(size // len(block)):
            fh.write(block)
    with open(many, "wb") as fh:
        line = b"x" * 999 + b"\n"
        block = line * 1000
        for _ in range(size // len(block)):
            fh.write(block)
    old = time.time() - 2 * 86400
    for p in (one, many):
        os.utime(p, (old, old))
    return {f"one {mb} MB line": one.parent, f"{mb} MB of 1,000-char lines": many.parent}


def measure(checkout: Path, folder: Path, work: Path) -> tuple[float, float, float]:
    """(peak RSS in MB, CPU seconds, wall seconds) of one ingest of ``folder`` by ``checkout``."""
    db = work / f"wh-{time.monotonic_ns()}.duckdb"
    env = dict(os.environ, PYTHONPATH=str(checkout), RAILBIRD_HOME=str(work / "home"))
    cmd = [sys.executable, "-m", "pipelines.cli", "ingest", str(folder), "--warehouse", str(db), "--no-snapshot",
           "--no-progress", "--growing-seconds", "0"]
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], cwd=checkout, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024, float(out[1]), float(out[2])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the checkout whose ingest is measured")
    ap.add_argument("--work", type=Path, default=None, help="a folder for the files (default: a temporary one)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="railbird-bigfile-", dir=args.work))
    try:
        print(f"checkout {args.checkout}, load average {os.getloadavg()[0]:.1f}")
        for label, folder in write_files(work, args.mb).items():
            rss, cpu, wall = measure(args.checkout.resolve(), folder, work)
            print(f"{label:<28} peak RSS {rss:,.0f} MB  CPU {cpu:.1f} s  wall {wall:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
