"""Kinds' detects (fit, score, threshold, explain of every signal) one after the other on an existing warehouse, in
this process as the night runs them: per kind wall and CPU seconds, the CPU seconds of ``explain`` apart (with the
rows' shapes: a kind whose explanations read the warehouse per signal shows it here as seconds that grow with the
window), the resident memory before it and its peak (VmRSS sampled every 20 ms), the largest frame the fitted
detector keeps, and what stays resident once the kind is done and its detector dropped.

The warehouse's features by day are summed before the clock starts (the feature store's pair table), as the
night's feature pass leaves them; ``--no-day-features`` skips that for a kind that reads the raw tables (seat
hand-offs run on an ingested warehouse as it is). DuckDB gets the pipeline's 1 GB limit unless ``--duckdb-memory``
says otherwise.

    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse /tmp/night/warehouse.duckdb --kind soft_play
    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse W --kind soft_play chip_dumping bounty_collusion --probe
    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse W --kind seat_handoff --no-day-features --phases
    PYTHONPATH=. python benchmarks/kind_peak.py --warehouse W --kind seat_handoff --no-day-features --param relogins=true

``--phases``: where each kind spends its time and memory: the main thread's stack is sampled with the memory and
the samples are printed grouped by the detector's own frames (the first ``--depth`` frames of ``detectors/`` code:
seconds sampled there and the peak seen there), then by the innermost line.

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
import collections
import ctypes
import gc
import json
import os
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


class Sampler:
    """Every ``every`` s the resident memory and, with ``stacks``, the main thread's frames of ``detectors/`` code
    (outermost first, ``file:function:line``): ``samples`` a list of ``(rss_mb, frames)``."""

    def __init__(self, stacks: bool = False, every: float = 0.02) -> None:
        self.every, self.stacks, self.samples, self._stop = every, stacks, [], threading.Event()
        self._main = threading.get_ident()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """The sampling loop (the sampler's thread)."""
        while not self._stop.wait(self.every):
            fr, st = sys._current_frames().get(self._main) if self.stacks else None, []
            while fr is not None:
                if f"{os.sep}detectors{os.sep}" in fr.f_code.co_filename:
                    st.append(f"{os.path.basename(fr.f_code.co_filename)}:{fr.f_code.co_name}:{fr.f_lineno}")
                fr = fr.f_back
            self.samples.append((rss_mb(), tuple(reversed(st))))

    def stop(self) -> int:
        """Stop sampling (the samples stay); returns the peak sampled, MB."""
        self._stop.set()
        self._thread.join()
        return max((mb for mb, _ in self.samples), default=rss_mb())

    def grouped(self, key) -> list[tuple[str, float, int]]:
        """The samples grouped by ``key(frames)``: (group, seconds sampled, peak MB), most sampled first."""
        agg: dict[str, list] = collections.defaultdict(lambda: [0, 0])
        for mb, st in self.samples:
            a = agg[key(st)]
            a[0], a[1] = a[0] + 1, max(a[1], mb)
        return sorted(((k, n * self.every, m) for k, (n, m) in agg.items()), key=lambda x: -x[1])


def timed_explain(det) -> dict:
    """Make ``det.explain`` (an instance attribute over the method, so :meth:`~detectors.base.Detector.detect` runs
    unchanged) count its rows, their shapes and its CPU seconds into the dict returned."""
    tally = {"rows": 0, "cpu": 0.0, "shapes": collections.Counter()}
    explain = det.explain

    def counted(con, row):
        c = time.process_time()
        try:
            return explain(con, row)
        finally:
            tally["cpu"] += time.process_time() - c
            tally["rows"] += 1
            tally["shapes"][row.get("shape") or ("group" if len(row.get("accounts") or []) > 2 else "pair")] += 1

    det.explain = counted
    return tally


def print_phases(sampler: Sampler, depth: int, top: int) -> None:
    """The samples by the first ``depth`` frames of detector code, then by the innermost line (``top`` of each)."""
    print(f"--- by the first {depth} frames (seconds sampled, peak MB there)")
    for k, s, m in sampler.grouped(lambda st: " > ".join(st[:depth]) or "(outside detectors)")[:top]:
        print(f"{s:8.1f} s {m:7,} MB  {k}")
    print("--- by the innermost line")
    for k, s, m in sampler.grouped(lambda st: st[-1] if st else "(outside detectors)")[:top]:
        print(f"{s:8.1f} s {m:7,} MB  {k}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--kind", nargs="+", default=["soft_play"], help="kinds run one after the other, in this order")
    ap.add_argument("--window-days", type=int, default=90)
    ap.add_argument("--duckdb-memory", default="1GB")
    ap.add_argument("--no-day-features", action="store_true",
                    help="do not sum the stored day features first (a kind that reads the raw tables)")
    ap.add_argument("--probe", action="store_true", help="after each kind, what stays resident (module docstring)")
    ap.add_argument("--phases", action="store_true", help="each kind's samples by detector frames (module docstring)")
    ap.add_argument("--depth", type=int, default=4, help="with --phases: frames of detectors/ code a group is keyed by")
    ap.add_argument("--top", type=int, default=30, help="with --phases: groups printed")
    ap.add_argument("--param", nargs="*", default=[], metavar="NAME=VALUE",
                    help="detector options (a JSON value: --param relogins=true), passed to every kind")
    args = ap.parse_args()
    params = {k: json.loads(v) for k, v in (p.split("=", 1) for p in args.param)}
    con = duckdb.connect(args.warehouse, read_only=True)
    con.execute("SET memory_limit = ?", [args.duckdb_memory])
    if not args.no_day_features:
        gp.store_for(con, window_days=args.window_days).pair_table(con)
    for kind in args.kind:
        start, sampler = rss_mb(), Sampler(stacks=args.phases)
        t, c = time.perf_counter(), time.process_time()
        det = get_detector(kind, **params)
        tally = timed_explain(det)
        signals = det.detect(con)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        peak = sampler.stop()
        vars(det).pop("explain", None)  # the counting wrapper holds the detector: drop it, as the night drops it
        frames = {k: v for k, v in vars(det).items() if isinstance(v, pl.DataFrame)}
        big = max(frames, key=lambda k: frames[k].estimated_size()) if frames else None
        kept = (f"{big}: {frames[big].height:,} rows, {frames[big].estimated_size() / 1e6:,.0f} MB" if big else "none")
        print(f"{kind}: {len(signals)} signals, {sum(s.flagged for s in signals)} flagged; {wall:.1f} s wall, "
              f"{cpu:.1f} CPU s (explain {tally['rows']} rows {tally['cpu']:.1f} CPU s, "
              f"{dict(sorted(tally['shapes'].items()))}); VmRSS before {start:,} MB, peak {peak:,} MB "
              f"(+{peak - start:,}); largest fitted frame {kept}", flush=True)
        if args.phases:
            print_phases(sampler, args.depth, args.top)
        del det, signals, frames, sampler
        if args.probe:
            print(f"    after {kind}: {probe(con)}", flush=True)


if __name__ == "__main__":
    main()
