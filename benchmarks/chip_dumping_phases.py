"""Chip dumping's fit, phase by phase: wall and CPU seconds and the process's memory (VmRSS, VmHWM) after each step.

The steps of :meth:`detectors.chip_dumping.ChipDumpingDetector.fit` run one at a time on a warehouse (opened
read-only, the pipeline's 1 GB DuckDB limit unless ``--duckdb-memory``), then score, threshold and the explanation
of the first ``--explain`` rows. Tracemalloc does not see Polars' or DuckDB's memory; the kernel's counters do.

    python benchmarks/chip_dumping_phases.py /work/nb-chip-small/warehouse.duckdb [--explain 50]
    python benchmarks/chip_dumping_phases.py W/warehouse.duckdb --baseline-only   # the own-baseline tests' A/B

The own-baseline tests test the window's sums of the day tables' counts; ``--count-decisions`` counts the window's
decisions instead (as before issue 33's per-day counts).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class Phases:
    """Prints each phase's wall and CPU seconds and the memory after it."""

    def __init__(self) -> None:
        self.t, self.cpu = time.perf_counter(), self._cpu()

    @staticmethod
    def _cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime

    def __call__(self, name: str) -> None:
        st = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
                  if line.startswith(("VmRSS", "VmHWM")))
        mb = {k: int(v.split()[0]) // 1024 for k, v in st.items()}
        now, cpu = time.perf_counter(), self._cpu()
        print(f"{name:<30} {now - self.t:7.1f} s {cpu - self.cpu:7.1f} CPU s  VmRSS {mb['VmRSS']:>6,} MB  "
              f"VmHWM {mb['VmHWM']:>6,} MB", flush=True)
        self.t, self.cpu = now, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse")
    ap.add_argument("--duckdb-memory", default="1GB")
    ap.add_argument("--explain", type=int, default=50, help="rows explained (default 50)")
    ap.add_argument("--count-decisions", action="store_true",
                    help="the own-baseline tests count the window's decisions (as before the day tables' sums)")
    ap.add_argument("--baseline-only", action="store_true",
                    help="only the own-baseline tests, from the day sums and counted in turn (three times each)")
    args = ap.parse_args()
    from detectors.chip_dumping import ChipDumpingDetector, deviation_flow, receiver_tests
    from detectors.chip_dumping.cells import baseline_tests
    from detectors.chip_dumping.presence import PRESENCE_COLUMNS, preflop_table
    from detectors.features import gameplay as gp
    from detectors.features.window_views import window_span, window_tables

    phase = Phases()
    con = duckdb.connect(args.warehouse, read_only=True, config={"memory_limit": args.duckdb_memory})
    det = ChipDumpingDetector()
    det._new_evidence_folder()
    store = gp.store_for(con)
    pairs, det.flow_ = store.pair_table(con), store.chip_flow(con)
    phase("feature store (pairs, flow)")
    det.dec_ = store.decision_source(con, samples=det.samples, random_state=det.random_state)
    dec = None if det.dec_ is None else det.dec_.relation(con)
    sums = lambda test: store.baseline_cells(con, test, samples=det.samples, random_state=det.random_state)  # noqa: E731
    det.pairs_ = baseline_tests(pairs, dec, alpha=det.alpha, rare_tail=det.rare_tail, junk_bins=det.junk_bins,
                                cells=None if args.count_decisions else sums)
    phase("own-baseline tests" + (" (counted)" if args.count_decisions else " (day sums)"))
    if args.baseline_only:  # the two ways in turn, twice
        for counting in (not args.count_decisions, args.count_decisions) * 2:
            baseline_tests(pairs, dec, alpha=det.alpha, rare_tail=det.rare_tail, junk_bins=det.junk_bins,
                           cells=None if counting else sums)
            phase("own-baseline tests" + (" (counted)" if counting else " (day sums)"))
        return
    det.recv_ = receiver_tests(dec, alpha=det.alpha, late_fold_min_strength=det.late_fold_min_strength,
                               rare_tail=det.rare_tail)
    phase("receiver tests")
    det.devflow_ = deviation_flow(con, dec, late_fold_min_strength=det.late_fold_min_strength)
    phase("deviation flow")
    det._fit_value_rows(con, dec)
    phase("evidence's value rows file")
    if dec is not None:
        dec.aggregate("avg(CASE WHEN equity IS NULL THEN 0.0 ELSE 1.0 END)").fetchall()
    phase("known share")
    det.window_, det.missing_ = window_span(con), []
    with window_tables(con, det.window_) as wcon, preflop_table(wcon, ("did", *PRESENCE_COLUMNS, "strength")) as pdec:
        phase("preflop table")
        det._fit_presence_rows(wcon, pdec)
        phase("evidence's presence rows files")
        det._presence_passes(wcon, pdec)
        phase("presence passes")
    rows = list(det.threshold(det.score(con)).iter_rows(named=True))
    phase(f"score, threshold ({len(rows)} rows)")
    for r in rows[:args.explain]:
        det.explain(con, r)
    phase(f"explain {min(len(rows), args.explain)} rows")


if __name__ == "__main__":
    main()
