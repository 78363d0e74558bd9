"""Ingest speed and memory, end to end: landing files → fresh DuckDB warehouse.

Builds a temporary landing folder from the real PokerStars corpus, repeated
with new hand ids (each copy prefixes the header's ``#<id>`` with its copy
number) until at least ``--hands`` hand headers are there.  Then, for each
number of parse workers (default: 1 and 2) and each size (half and all of
the files), in a fresh subprocess so peak memory is its own:

1. a plain read of the same files (bytes only);
2. ``pipelines.lib.ingest.ingest`` into a new DuckDB file: discover,
   fingerprint, decode, parse (process pool of ``--workers``), dedupe and load
   in one transaction.

Prints hands/s end to end (wall clock and per CPU-second: on a shared
machine the second is the fairer figure; split into the main process, which
loads, and the parse workers), MB/s, the plain-read time, and peak resident
memory of the main process and of the largest parse worker, so the two sizes
show whether memory stays flat as input grows.

The serial share: with one worker the chunks are parsed inline, so the CPU
the loader spends waiting for its next batch is the parse (the parallel part)
and the rest of the ingest call (discover, dedupe, load, COMMIT) is the serial
part ``s``.  Amdahl's law (Amdahl 1967) then projects the speed-up with N
parse workers on N free cores to ``1 / (s + (1 - s) / N)`` (the serial part
not overlapped with the parse: the conservative bound), at most ``1 / s``;
the measured 2-worker run is printed beside its projection (on 2 cores the
loader shares them with the two workers, and on a shared machine with the
neighbours: the load average is printed).

    .venv/bin/python benchmarks/ingest_bench.py [--hands 200000] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import replicate  # noqa: E402  (benchmarks/corpus.py)


def one(files_list: Path, workers: int) -> dict:
    """Measure one size (run in its own process)."""
    from pipelines.lib import ingest
    from pipelines.lib import warehouse as wh

    files = [Path(x) for x in files_list.read_text().splitlines()]
    size = sum(f.stat().st_size for f in files)
    t0 = time.perf_counter()
    for f in files:
        f.read_bytes()
    plain = time.perf_counter() - t0
    db = files_list.with_suffix(".duckdb")
    con = wh.connect(db)
    held = {}

    def at_commit(stage: str) -> None:
        # what DuckDB holds for the run's one open transaction: the most after any batch, and just before
        # COMMIT (after the staged rows went in); BASE_TABLE (blocks of the file, evictable) apart
        q = ("SELECT coalesce(sum(memory_usage_bytes) FILTER (WHERE tag <> 'BASE_TABLE'), 0) / 1e6, "
             "coalesce(sum(memory_usage_bytes) FILTER (WHERE tag = 'BASE_TABLE'), 0) / 1e6 FROM duckdb_memory()")
        if stage == "ingest_log":
            held["batch_mb"] = max(held.get("batch_mb", 0.0), con.execute(q).fetchall()[0][0])
        elif stage == "commit":
            held["mb"], held["cache_mb"] = con.execute(q).fetchall()[0]

    waits: list[float] = []
    wait_cpu: list[float] = []
    batches = ingest.iter_batches

    def timed_batches(*a, **k):
        # the loader's wait for each batch (wall and this process's CPU): with one worker, the parse itself
        it = batches(*a, **k)
        while True:
            t, c = time.perf_counter(), time.process_time()
            b = next(it, None)
            waits.append(time.perf_counter() - t)
            wait_cpu.append(time.process_time() - c)
            if b is None:
                return
            yield b

    ingest.iter_batches = timed_batches
    t0, c0 = time.perf_counter(), time.process_time()
    report = ingest.ingest(files, con, progress=False, workers=workers, fail_hook=at_commit)
    elapsed, ingest_cpu = time.perf_counter() - t0, time.process_time() - c0
    con.close()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
        "main_cpu_s": me.ru_utime + me.ru_stime, "workers_cpu_s": kids.ru_utime + kids.ru_stime,
        "main_sys_s": me.ru_stime, "workers_sys_s": kids.ru_stime,
        "files": len(files), "mb": size / 1e6, "plain_read_s": plain, "ingest_s": elapsed, "wait_s": sum(waits),
        "ingest_main_cpu_s": ingest_cpu, "wait_cpu_s": sum(wait_cpu), "load": os.getloadavg()[0],
        "hands_read": report.result.hands_stored + report.result.duplicates,
        "hands_stored": report.result.hands_stored, "quarantined": report.result.quarantined,
        "summary": report.summary(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "warehouse_mb": db.stat().st_size / 1e6,
        "duckdb_mb_at_commit": held.get("mb") or 0.0, "duckdb_cache_mb_at_commit": held.get("cache_mb") or 0.0,
        "duckdb_mb_batches": held.get("batch_mb") or 0.0,
    }


def show(label: str, workers: int, r: dict) -> None:
    """Print one measured run."""
    rate = r["hands_read"] / r["ingest_s"]
    print(f"[{label}, {workers} parse worker{'s' if workers > 1 else ''}] {r['files']} files, {r['mb']:.0f} MB, "
          f"{r['hands_read']:,} hands read ({r['hands_stored']:,} stored, {r['quarantined']:,} quarantined)")
    print(f"    ingest end to end: {r['ingest_s']:.1f} s = {rate:,.0f} hands/s, {r['mb'] / r['ingest_s']:.1f} MB/s"
          f" (load average {r['load']:.1f} at the end)"
          f"   | plain read of the same files: {r['plain_read_s']:.2f} s")
    print(f"    loader waiting for parsed batches: {r['wait_s']:.1f} s; loader busy (discover, dedupe, load, "
          f"COMMIT): {r['ingest_s'] - r['wait_s']:.1f} s")
    print(f"    CPU time (main + parse workers, includes the plain read): {r['cpu_s']:.1f} s = "
          f"{r['hands_read'] / r['cpu_s']:,.0f} hands per CPU-second (wall time depends on the machine's load)")
    print(f"    of which main process (imports, plain read, receiving batches, dedupe and load into DuckDB): "
          f"{1e6 * r['main_cpu_s'] / r['hands_read']:.0f} us per hand (the ingest call alone "
          f"{1e6 * r['ingest_main_cpu_s'] / r['hands_read']:.0f}); parse workers "
          f"{1e6 * r['workers_cpu_s'] / r['hands_read']:.0f} us per hand (in the kernel: main "
          f"{1e6 * r['main_sys_s'] / r['hands_read']:.0f}, workers {1e6 * r['workers_sys_s'] / r['hands_read']:.0f})")
    print(f"    peak RSS: main {r['peak_rss_mb']:.0f} MB, largest parse worker {r['peak_worker_rss_mb']:.0f} MB"
          f"   | warehouse file {r['warehouse_mb']:.0f} MB")
    print(f"    DuckDB's own memory (duckdb_memory() less BASE_TABLE, the evictable cache of file blocks):"
          f" at most {r['duckdb_mb_batches']:.0f} MB after a batch, {r['duckdb_mb_at_commit']:.0f} MB just"
          f" before COMMIT (+ {r['duckdb_cache_mb_at_commit']:.0f} MB BASE_TABLE)")
    print(f"    {r['summary']}")


def amdahl(serial: dict, measured: dict[int, dict]) -> None:
    """Print the serial share of a one-worker run and the Amdahl projection to N parse workers.

    In CPU-seconds of the ingest call (this process, all its threads): the inline parse is the CPU spent
    waiting for batches, the serial part the rest; CPU is what a shared machine cannot distort. Wall-clock
    figures beside them."""
    hands = serial["hands_read"]
    parse, ser = serial["wait_cpu_s"], serial["ingest_main_cpu_s"] - serial["wait_cpu_s"]
    s = ser / (ser + parse)
    s_wall = (serial["ingest_s"] - serial["wait_s"]) / serial["ingest_s"]
    print(f"serial share (one worker, CPU of the ingest call: dedupe, load, COMMIT, discover over all): s = {s:.1%} "
          f"({1e6 * ser / hands:.0f} us per hand serial, {1e6 * parse / hands:.0f} us per hand parse); "
          f"by wall clock {s_wall:.1%}")
    for n in (1, 2, 4, 8, 16, 32):
        projected = hands / (ser + parse / n)
        got = measured.get(n)
        seen = (f"   measured {got['hands_read'] / got['ingest_s']:,.0f} (wall clock at load {got['load']:.1f})"
                if got and n > 1 else "")
        print(f"    {n:>2} parse workers on {n} free cores: projected {projected:,.0f} hands/s{seen}")
    print(f"    ceiling (parse free, the loader alone): {hands / ser:,.0f} hands/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=200_000, help="at least this many hand headers (default: 200000)")
    ap.add_argument("--workers", default="1,2", help="parse processes, one run per number (default: 1,2)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    counts = [int(x) for x in str(args.workers).split(",")]
    if args.one:
        print(json.dumps(one(args.one, counts[0])))
        return
    tmp = Path(tempfile.mkdtemp(prefix="railbird-ingest-bench-"))
    try:
        t0 = time.perf_counter()
        files, headers = replicate(tmp / "landing", args.hands)
        print(f"built {len(files)} files, {headers:,} hand headers in {time.perf_counter() - t0:.1f} s ({tmp})")
        whole: dict[int, dict] = {}
        for workers in counts:
            for label, chosen in [("half", files[: len(files) // 2]), ("all", files)]:
                lst = tmp / f"{label}-{workers}.txt"
                lst.write_text("\n".join(str(f) for f in chosen))
                out = subprocess.run([sys.executable, __file__, "--one", str(lst), "--workers", str(workers)],
                                     capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                show(label, workers, r)
                if label == "all":
                    whole[workers] = r
        if 1 in whole:
            amdahl(whole[1], whole)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
