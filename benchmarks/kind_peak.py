"""Kinds' detects (fit, score, threshold, explain of every signal) one after the other on an existing warehouse, in
this process as the night runs them: per kind wall and CPU seconds, the resident memory before it and its peak
(VmRSS sampled every 20 ms), the largest frame the fitted detector keeps, and what stays resident once the kind is
done and its detector dropped.

The warehouse's features by day must be stored (a night bench's replica, or a warehouse a run has judged); the
feature store's pair table is summed before the clock starts, as the night's feature pass leaves it. DuckDB gets
the pipeline's 1 GB limit unless ``--duckdb-memory`` says otherwise.

    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse /tmp/night/warehouse.duckdb --kind soft_play
    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse W --kind soft_play chip_dumping bounty_collusion --probe

``--probe``: after each kind, the resident memory (VmRSS and its anonymous part, RssAnon) is printed at each step
of taking back what the kind left: as it ends (its detector dropped), after Python's garbage collection, after
the own-baseline memos of :mod:`detectors.stats.baselines` emptied (a diagnosis: their entries outlive the frames
they were computed from), then after glibc's ``malloc_trim(0)`` and 3 s later (Polars' jemalloc purges freed pages
0.5 s + 1 s after they are freed, its ``_RJEM_MALLOC_CONF`` as Polars sets it); with glibc's bytes in use and
free (``mallinfo2``), the Polars frames still alive before the
memos are emptied (found through the garbage collector, by the module-level name that holds them: count and
estimated size), DuckDB's own accounting (``duckdb_memory()``) and Arrow's pool. Each step's drop says who held
the memory: our objects (collection, memos), glibc's free lists (trim), or neither (another allocator's cache:
Polars' jemalloc, whose freed pages go back within about 1.5 s here, or Arrow's).

The detectors imported are those of ``PYTHONPATH``: run it with ``PYTHONPATH`` set to each checkout to compare
two versions of a detector on the same warehouse.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import sys
import threading
import time
import types

import duckdb
import polars as pl

from detectors import get_detector
from detectors.features import gameplay as gp
from detectors.stats import baselines


def status_mb() -> dict[str, int]:
    """This process's resident memory from ``/proc/self/status``: VmRSS and RssAnon, MB."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "RssAnon"):
                out[key] = int(line.split()[1]) // 1024
    return out


def rss_mb() -> int:
    """This process's resident memory (VmRSS), MB."""
    return status_mb()["VmRSS"]


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                               "uordblks", "fordblks", "keepcost")]


def glibc_mb() -> tuple[int, int]:
    """glibc malloc's bytes in use (``uordblks`` + ``hblkhd``: every arena and the mmapped blocks) and free in its
    arenas (``fordblks``), MB, from ``mallinfo2`` (glibc >= 2.33)."""
    fn = ctypes.CDLL("libc.so.6").mallinfo2
    fn.restype = _Mallinfo2
    m = fn()
    return (m.uordblks + m.hblkhd) >> 20, m.fordblks >> 20


def holder(obj: object, modules: dict[int, str], depth: int = 6) -> str:
    """The module-level name that keeps ``obj`` alive (``module.name``), found by walking its referrers up to
    ``depth`` levels; ``?`` when none is found (held by a running frame, or deeper)."""
    todo, seen = [obj], {id(obj)}
    for _ in range(depth):
        nxt = []
        for o in todo:
            for r in gc.get_referrers(o):
                if id(r) in seen or isinstance(r, types.FrameType) or r is todo or r is nxt:
                    continue
                seen.add(id(r))
                if id(r) in modules:
                    return f"{modules[id(r)]}.{next((k for k, v in r.items() if v is o), '?')}"
                nxt.append(r)
        todo = nxt
    return "?"


def live_frames() -> str:
    """Polars frames alive in this process (reachable by the garbage collector), by what holds them: the module-level
    name, how many frames, their estimated MB."""
    frames = [o for o in gc.get_objects() if isinstance(o, pl.DataFrame)]
    modules = {id(m.__dict__): name for name, m in list(sys.modules.items())
               if isinstance(m, types.ModuleType) and name != "__main__"}
    held: dict[str, list] = {}
    for f in frames:
        h = held.setdefault(holder(f, modules), [0, 0.0])
        h[0], h[1] = h[0] + 1, h[1] + f.estimated_size() / 1e6
    del frames
    return ", ".join(f"{k} {n} ({mb:,.0f} MB)" for k, (n, mb) in sorted(held.items(), key=lambda x: -x[1][1])) or "none"


def probe(con: duckdb.DuckDBPyConnection) -> str:
    """Resident memory at each step of taking back what a finished kind left (see the module docstring)."""
    import pyarrow as pa

    steps = [("ended", status_mb())]
    gc.collect()
    steps.append(("gc", status_mb()))
    frames = live_frames()
    # what the own-baseline memos of detectors.stats keep (a diagnosis: their entries outlive the frames they were
    # computed from); the names are looked up, so the step is skipped where the memos are gone
    memos = [getattr(baselines, n) for n in ("_FIRST_CACHE", "_SAME_SELECTION", "_ROBUST_CACHE")
             if isinstance(getattr(baselines, n, None), dict)]
    if memos:
        for m in memos:
            m.clear()
        gc.collect()
        steps.append(("stats memos cleared", status_mb()))
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    steps.append(("malloc_trim", status_mb()))
    time.sleep(3)  # Polars' jemalloc gives freed pages back 0.5 s (dirty) + 1 s (muzzy) after they are freed
    steps.append(("3 s later", status_mb()))
    glibc = glibc_mb()
    duck = con.execute("SELECT sum(memory_usage_bytes) // 1048576 FROM duckdb_memory()").fetchone()[0]
    return ("  ".join(f"{k} {v['VmRSS']:,}/{v['RssAnon']:,}" for k, v in steps)
            + f"  (VmRSS/anon MB); glibc in use {glibc[0]:,} MB, free {glibc[1]:,} MB; live frames: {frames}; duckdb {duck} MB, arrow "
            f"{pa.total_allocated_bytes() // 1048576} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--kind", nargs="+", default=["soft_play"], help="kinds run one after the other, in this order")
    ap.add_argument("--window-days", type=int, default=90)
    ap.add_argument("--duckdb-memory", default="1GB")
    ap.add_argument("--probe", action="store_true", help="after each kind, what stays resident (module docstring)")
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
    for kind in args.kind:
        start = peak[0] = rss_mb()
        t, c = time.perf_counter(), time.process_time()
        det = get_detector(kind)
        signals = det.detect(con)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        frames = {k: v for k, v in vars(det).items() if isinstance(v, pl.DataFrame)}
        big = max(frames, key=lambda k: frames[k].estimated_size()) if frames else None
        kept = (f"{big}: {frames[big].height:,} rows, {frames[big].estimated_size() / 1e6:,.0f} MB" if big else "none")
        print(f"{kind}: {len(signals)} signals, {sum(s.flagged for s in signals)} flagged; {wall:.1f} s wall, "
              f"{cpu:.1f} CPU s; VmRSS before {start:,} MB, peak {peak[0]:,} MB (+{peak[0] - start:,}); "
              f"largest fitted frame {kept}", flush=True)
        del det, signals, frames
        if args.probe:
            print(f"    after {kind}: {probe(con)}", flush=True)


if __name__ == "__main__":
    main()
