"""Soft play and chip dumping run directly on populations already built: recall, flags and right flags per population.

Each folder is a population built by ``benchmarks/worlds_bench.py`` or ``quality_bench.py`` (``pop/labels.jsonl``
and ``home/warehouse.duckdb``). The warehouse is copied to ``--copies`` and opened read-only, each detector is
fitted, scored and thresholded there (``Detector.fit``, ``score``, ``threshold``: what ``detect`` does before
``explain``), and its flagged rows are matched to the labels by ``pipelines.lib.evaluation.matches`` (the rule of
``../shared/spec/evaluation.md``). Printed per population and kind: groups found of the kind's groups, rows
flagged, flagged rows matching a group of any kind, accounts in flagged rows (on an honest-only population: the
accounts accused), seconds. Keyword arguments of the detectors as JSON (``--soft-play``, ``--chip-dumping``), to
compare a parameter on tuning populations. No pipeline run: a detector change is measured in seconds.

    python benchmarks/pair_kinds_bench.py /work/tune/mixed-2-a-60000 /work/tune/mixed-1-b-60000
    python benchmarks/pair_kinds_bench.py /work/tune/mixed-2-a-60000 --soft-play '{"thin_check": true}'
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import duckdb
import polars as pl

from detectors.chip_dumping import ChipDumpingDetector
from detectors.soft_play import SoftPlayDetector
from pipelines.lib import evaluation as ev

KINDS = {"soft_play": SoftPlayDetector, "chip_dumping": ChipDumpingDetector}


def run(folder: Path, copies: Path, kinds: dict[str, dict]) -> list[str]:
    """The lines printed for one population folder (see the module docstring)."""
    copies.mkdir(parents=True, exist_ok=True)
    w = copies / f"{folder.name}.duckdb"
    if not w.exists():
        shutil.copy(folder / "home" / "warehouse.duckdb", w)
    labels_path = folder / "pop" / "labels.jsonl"
    labels = ev.read_jsonl(labels_path, "labels") if labels_path.exists() else []
    out = []
    con = duckdb.connect(str(w), read_only=True)
    try:
        for kind, kw in kinds.items():
            t = time.perf_counter()
            det = KINDS[kind](**kw)
            rows = det.threshold(det.fit(con).score(con)).filter(pl.col("flagged"))
            cases = [{"kind": kind, "accounts": list(a), "flagged": True} for a in rows["accounts"].to_list()]
            groups = [g for g in labels if g.get("kind") == kind]
            found = sum(any(ev.matches(c, g) for c in cases) for g in groups)
            right = sum(any(ev.matches(c, g) for g in labels) for c in cases)
            accused = len({a for c in cases for a in c["accounts"]})
            out.append(f"{folder.name} {kind}: found {found}/{len(groups)} flagged {len(cases)} right {right} "
                       f"accounts in flags {accused} ({time.perf_counter() - t:.0f} s)")
    finally:
        con.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path, help="population folders (pop/, home/warehouse.duckdb)")
    ap.add_argument("--copies", type=Path, default=Path("/tmp/pair_kinds_bench"), help="where the warehouses are copied")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    ap.add_argument("--soft-play", default="{}", help="SoftPlayDetector keyword arguments as JSON")
    ap.add_argument("--chip-dumping", default="{}", help="ChipDumpingDetector keyword arguments as JSON")
    a = ap.parse_args(argv)
    kw = {"soft_play": json.loads(a.soft_play), "chip_dumping": json.loads(a.chip_dumping)}
    for folder in a.folders:
        for line in run(folder, a.copies, {k: kw[k] for k in a.kinds}):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
