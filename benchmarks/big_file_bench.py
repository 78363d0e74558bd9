"""Peak memory of ``railbird ingest`` on large hand files: one 200 MB line, 200 MB of 1,000-char lines, the same
lines in UTF-16 (with a byte-order mark; 200 MB of bytes), and 200 MB of hands (a three-player hand, ids apart) in
UTF-16 and in UTF-8.

Each file is written alone into a fresh landing folder (dated two days back, so it is neither growing nor new),
then ingested by ``python -m pipelines.cli ingest`` of a checkout (this one, or ``--checkout DIR`` for another, e.g.
``git worktree add --detach /tmp/before main``) in its own process; the figure is that process's peak resident set
(``getrusage(RUSAGE_CHILDREN).ru_maxrss``, one fresh measuring process per file) and its CPU time.

    .venv/bin/python benchmarks/big_file_bench.py [--mb 200] [--checkout DIR] [--work DIR] [--only WORD] [--read-only]
"""
from __future__ import annotations

import argparse
import codecs
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

# one cash hand (it balances: $0.65 pot, $0.03 rake, $0.62 collected), written with a distinct id each time
HAND = """PokerStars Hand #{id}:  Hold'em No Limit ($0.05/$0.10 USD) - 2026/12/04 10:00:00 ET
Table 'Bench' 6-max Seat #1 is the button
Seat 1: amy ($10 in chips)
Seat 2: bob ($10 in chips)
Seat 3: cat ($10 in chips)
bob: posts small blind $0.05
cat: posts big blind $0.10
*** HOLE CARDS ***
amy: raises $0.20 to $0.30
bob: folds
cat: calls $0.20
*** FLOP *** [2c 7d Th]
cat: checks
amy: bets $0.40
cat: folds
Uncalled bet ($0.40) returned to amy
amy collected $0.62 from pot
*** SUMMARY ***
Total pot $0.65 | Rake $0.03
Board [2c 7d Th]
Seat 1: amy (button) collected ($0.62)
Seat 2: bob (small blind) folded before Flop
Seat 3: cat (big blind) folded on the Flop


"""


def write_files(folder: Path, mb: int) -> dict[str, Path]:
    """The hostile files, ``mb`` MB each: one line (a hand header then ``A``s), lines of 1,000 characters, and lines
    of 1,000 characters in UTF-16 LE with its byte-order mark (half as many characters)."""
    size = mb * 1_000_000
    one = folder / "one_line" / "one.txt"
    many = folder / "long_lines" / "many.txt"
    wide = folder / "utf16_lines" / "wide.txt"
    for p in (one, many, wide):
        p.parent.mkdir(parents=True)
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
    with open(wide, "wb") as fh:
        fh.write(codecs.BOM_UTF16_LE)
        block = ("x" * 999 + "\n").encode("utf-16-le") * 1000
        for _ in range(size // len(block)):
            fh.write(block)
    hands = folder / "utf16_hands" / "hands.txt"
    narrow = folder / "utf8_hands" / "hands.txt"
    for p, encoding, mark in ((hands, "utf-16-le", codecs.BOM_UTF16_LE), (narrow, "utf-8", b"")):
        p.parent.mkdir(parents=True)
        with open(p, "wb") as fh:
            fh.write(mark)
            n, written = 0, len(mark)
            while written < size:
                block = "".join(HAND.format(id=10_000_000_000 + n + i) for i in range(1000)).encode(encoding)
                fh.write(block)
                n, written = n + 1000, written + len(block)
    old = time.time() - 2 * 86400
    for p in (one, many, wide, hands, narrow):
        os.utime(p, (old, old))
    return {f"one {mb} MB line": one.parent, f"{mb} MB of 1,000-char lines": many.parent,
            f"{mb} MB UTF-16 1,000-char lines": wide.parent, f"{mb} MB UTF-16 hands": hands.parent,
            f"{mb} MB UTF-8 hands": narrow.parent}


_READ = """
import os, sys
from pipelines.lib import ingest
from pipelines.lib.landing_read import hand_pieces
for name in sorted(os.listdir(sys.argv[1])):
    path = os.path.join(sys.argv[1], name)
    st = os.stat(path)
    info = ingest.FileInfo(path, "hands", st.st_size, ingest._mtime(st), st.st_mtime, dev=st.st_dev, ino=st.st_ino)
    for _ in hand_pieces(info, ingest.piece_bytes(info, ingest.PARSE_BATCH_BYTES)):
        pass
"""


def measure(checkout: Path, folder: Path, work: Path, read_only: bool = False) -> tuple[float, float, float]:
    """(peak RSS in MB, CPU seconds, wall seconds) of one ingest of ``folder`` by ``checkout``; ``read_only``: of
    reading its files alone (``landing_read.hand_pieces``: opened, read and decoded in the ingest's pieces, not
    parsed)."""
    db = work / f"wh-{time.monotonic_ns()}.duckdb"
    env = dict(os.environ, PYTHONPATH=str(checkout), RAILBIRD_HOME=str(work / "home"))
    cmd = [sys.executable, "-m", "pipelines.cli", "ingest", str(folder), "--warehouse", str(db), "--no-snapshot",
           "--no-progress", "--growing-seconds", "0"]
    if read_only:
        cmd = [sys.executable, "-c", _READ, str(folder)]
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], cwd=checkout, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024, float(out[1]), float(out[2])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the checkout whose ingest is measured")
    ap.add_argument("--work", type=Path, default=None, help="a folder for the files (default: a temporary one)")
    ap.add_argument("--only", default="", help="measure only the inputs whose label holds this text")
    ap.add_argument("--read-only", action="store_true", help="measure reading the files alone (no parse, no load)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="railbird-bigfile-", dir=args.work))
    try:
        print(f"checkout {args.checkout}, load average {os.getloadavg()[0]:.1f}")
        for label, folder in write_files(work, args.mb).items():
            if args.only not in label:
                continue
            rss, cpu, wall = measure(args.checkout.resolve(), folder, work, args.read_only)
            print(f"{label:<28} peak RSS {rss:,.0f} MB  CPU {cpu:.1f} s  wall {wall:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
