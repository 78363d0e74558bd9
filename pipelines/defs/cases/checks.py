"""Checks on the end of the nightly job: the export is what evaluation.md fixes, the snapshot opens."""


import json
from pathlib import Path

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from detectors.base import KINDS
from pipelines.defs.cases.assets import cases, warehouse_snapshot
from pipelines.defs.resources import RailbirdSettings
from pipelines.lib.cases import EXPORT_FIELDS

_TYPES = {"case": str, "kind": str, "accounts": list, "tournaments": list, "score": (int, float),
          "flagged": bool, "hands": list, "summary": str}


def export_problems(path: Path) -> list[str]:
    """Every way ``cases.jsonl`` departs from evaluation.md (fields, types, kinds, unique case ids)."""
    problems: list[str] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                rec = json.loads(line)
            except ValueError as exc:
                problems.append(f"line {n}: not JSON ({exc})")
                continue
            missing = [k for k in EXPORT_FIELDS if k not in rec]
            if missing:
                problems.append(f"line {n}: missing {missing}")
                continue
            bad = [k for k, t in _TYPES.items() if not isinstance(rec[k], t)]
            if bad:
                problems.append(f"line {n}: wrong types for {bad}")
            if rec["kind"] not in KINDS:
                problems.append(f"line {n}: unknown kind {rec['kind']!r}")
            if rec["case"] in seen:
                problems.append(f"line {n}: case id {rec['case']} repeated")
            seen.add(rec["case"])
    return problems


@dg.asset_check(asset=cases, description="cases.jsonl has the fields and types of evaluation.md and unique case ids")
def cases_export_matches_evaluation(settings: RailbirdSettings) -> dg.AssetCheckResult:
    path = Path(settings.out_dir) / "cases.jsonl"
    if not path.exists():
        return dg.AssetCheckResult(passed=False, metadata={"problem": f"{path} missing"})
    problems = export_problems(path)
    return dg.AssetCheckResult(passed=not problems, metadata={"problems": dg.MetadataValue.json(problems[:20]),
                                                                "n_problems": len(problems)})


@dg.asset_check(asset=warehouse_snapshot, description="the published snapshot opens read-only and holds this run's cases")
def snapshot_matches_warehouse(warehouse: DuckDBResource, settings: RailbirdSettings) -> dg.AssetCheckResult:
    with warehouse.get_connection() as con:
        live = con.execute("SELECT count(*) FROM cases").fetchone()[0]
    snap = duckdb.connect(settings.snapshot_path, read_only=True)
    try:
        published = snap.execute("SELECT count(*) FROM cases").fetchone()[0]
    finally:
        snap.close()
    return dg.AssetCheckResult(passed=live == published, metadata={"warehouse": live, "snapshot": published})
