"""Bounty collusion's detect, phase by phase: each step's wall seconds, the process's peak memory during it
(VmHWM, reset before and after the step through /proc/self/clear_refs: a step that calls others, the fit,
reports the peak since the last of them returned), its memory after it (VmRSS) and the size of the frame
it returned (rows, ``estimated_size``).

The detector's own ``detect`` runs (fit, score, threshold, explain of every signal) on a warehouse opened
read-only (the pipeline's 1 GB DuckDB limit unless ``--duckdb-memory``); the feature functions it calls are
wrapped to print a line as each returns. The frames a step leaves alive are those the fit still holds.
Tracemalloc does not see Polars' or DuckDB's memory; the kernel's counters do.

    PYTHONPATH=. python benchmarks/bounty_phases.py /work/nb-chip/warehouse.duckdb
"""

from __future__ import annotations

import argparse
import functools
import importlib
import time
from pathlib import Path
from typing import Any, Callable

import duckdb
import polars as pl

STEPS = ("bounty_presence", "bounty_spots", "bounty_wide_cells", "bounty_wide_calls", "bounty_unshadowed",
         "bounty_strongest_partner", "bounty_pairs", "bounty_passing")


def memory_mb() -> dict[str, int]:
    """This process's VmRSS and VmHWM, MB."""
    lines = Path("/proc/self/status").read_text().splitlines()
    return {k: int(v.split()[0]) // 1024 for k, v in (ln.split(":", 1) for ln in lines) if k in ("VmRSS", "VmHWM")}


def reset_peak() -> None:
    """Sets VmHWM back to the current VmRSS (Linux: ``5`` written to /proc/self/clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


def size(out: Any) -> str:
    """Rows and estimated size of a frame (the first frame of a tuple)."""
    f = next((x for x in (out if isinstance(out, tuple) else (out,)) if isinstance(x, pl.DataFrame)), None)
    return f"{f.height:,} rows, {f.estimated_size() / 1e6:,.0f} MB" if f is not None else "-"


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` printing its wall seconds, the peak and final memory of its call and its result's size."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        reset_peak()
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        mb = memory_mb()
        reset_peak()
        print(f"{name:<28} {time.perf_counter() - t:7.1f} s  peak {mb['VmHWM']:>6,} MB  after {mb['VmRSS']:>6,} MB"
              f"  {size(out)}", flush=True)
        return out
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse")
    ap.add_argument("--duckdb-memory", default="1GB")
    args = ap.parse_args()
    from detectors.bounty_collusion import BountyCollusionDetector
    from detectors.bounty_collusion import detector as mod
    from detectors.features import gameplay as gp
    passing = importlib.import_module("detectors.features.gameplay.bounty_passing")

    for name in STEPS:
        if hasattr(gp, name):
            setattr(gp, name, timed(name, getattr(gp, name)))
    for name in ("bounty_partner_raises", "bounty_shoves"):
        setattr(passing, name, timed(name, getattr(passing, name)))
    for name in ("fit", "score", "threshold"):
        setattr(BountyCollusionDetector, name, timed(name, getattr(BountyCollusionDetector, name)))
    print(f"(detector module {mod.__file__})")
    con = duckdb.connect(args.warehouse, read_only=True, config={"memory_limit": args.duckdb_memory})
    gp.store_for(con).pair_table(con)
    print(f"start: {memory_mb()}", flush=True)
    t = time.perf_counter()
    signals = BountyCollusionDetector().detect(con)
    mb = memory_mb()
    print(f"{'explain (every signal)':<28} {'':>9}  peak {mb['VmHWM']:>6,} MB  after {mb['VmRSS']:>6,} MB", flush=True)
    print(f"detect: {len(signals)} signals, {sum(s.flagged for s in signals)} flagged, "
          f"{time.perf_counter() - t:.1f} s", flush=True)


if __name__ == "__main__":
    main()
