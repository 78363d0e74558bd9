"""Where one kind's detect spends its time and memory: the detect of ``--kind`` on a warehouse (opened read-only,
DuckDB at the pipeline's 1 GB limit), the main thread's stack and the process's resident memory (VmRSS) sampled every
20 ms, printed as the kind's wall and CPU seconds, its peak, then the samples grouped by the detector's own frames
(the first ``--depth`` frames of ``detectors/`` code under ``detect``: seconds sampled there and the peak seen there),
and by the innermost line.

Unlike :mod:`benchmarks.kind_peak` it needs no stored day features (a kind that reads the raw tables, as seat
hand-offs do, runs on an ingested warehouse as it is). The detectors imported are those of ``PYTHONPATH``: run it
with ``PYTHONPATH`` set to each checkout to compare two versions on the same warehouse.

    PYTHONPATH=. python benchmarks/kind_phases.py --warehouse W --kind seat_handoff [--depth 4] [--top 30]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import threading
import time

import duckdb

from detectors import get_detector


def rss_mb() -> int:
    """This process's resident memory (VmRSS), MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


class Sampler:
    """Every ``every`` s, the main thread's frames of ``detectors/`` code (outermost first, ``file:function:line``)
    and the resident memory: ``samples`` a list of ``(rss_mb, frames)``."""

    def __init__(self, every: float = 0.02) -> None:
        self.every, self.samples, self._stop = every, [], threading.Event()
        self._main = threading.get_ident()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """The sampling loop (the sampler's thread)."""
        while not self._stop.wait(self.every):
            fr, st = sys._current_frames().get(self._main), []
            while fr is not None:
                if f"{os.sep}detectors{os.sep}" in fr.f_code.co_filename:
                    st.append(f"{os.path.basename(fr.f_code.co_filename)}:{fr.f_code.co_name}:{fr.f_lineno}")
                fr = fr.f_back
            self.samples.append((rss_mb(), tuple(reversed(st))))

    def stop(self) -> None:
        """Stop sampling (the samples stay)."""
        self._stop.set()
        self._thread.join()

    def grouped(self, key) -> list[tuple[str, float, int]]:
        """The samples grouped by ``key(frames)``: (group, seconds sampled, peak MB), most sampled first."""
        agg: dict[str, list] = collections.defaultdict(lambda: [0, 0])
        for mb, st in self.samples:
            a = agg[key(st)]
            a[0], a[1] = a[0] + 1, max(a[1], mb)
        return sorted(((k, n * self.every, m) for k, (n, m) in agg.items()), key=lambda x: -x[1])


def main() -> None:
    """Run the kind's detect once, sampled, and print its figures (the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--kind", default="seat_handoff")
    ap.add_argument("--duckdb-memory", default="1GB")
    ap.add_argument("--depth", type=int, default=4, help="frames of detectors/ code a group is keyed by")
    ap.add_argument("--top", type=int, default=30, help="groups printed")
    args = ap.parse_args()
    con = duckdb.connect(args.warehouse, read_only=True)
    con.execute("SET memory_limit = ?", [args.duckdb_memory])
    before = rss_mb()
    sampler = Sampler()
    t, c = time.perf_counter(), time.process_time()
    signals = get_detector(args.kind).detect(con)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    sampler.stop()
    peak = max((mb for mb, _ in sampler.samples), default=before)
    print(f"{args.kind}: {len(signals)} signals, {sum(s.flagged for s in signals)} flagged; {wall:.1f} s wall, "
          f"{cpu:.1f} CPU s; VmRSS before {before:,} MB, peak {peak:,} MB (sampled every 20 ms)")
    print(f"--- by the first {args.depth} frames (seconds sampled, peak MB there)")
    for k, s, m in sampler.grouped(lambda st: " > ".join(st[:args.depth]) or "(outside detectors)")[:args.top]:
        print(f"{s:8.1f} s {m:7,} MB  {k}")
    print("--- by the innermost line")
    for k, s, m in sampler.grouped(lambda st: st[-1] if st else "(outside detectors)")[:args.top]:
        print(f"{s:8.1f} s {m:7,} MB  {k}")


if __name__ == "__main__":
    main()
