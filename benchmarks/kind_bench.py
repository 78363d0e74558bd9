"""One or more detector kinds on already-built populations, without the nightly job: the fast loop of detector work.

Each population folder is one that ``benchmarks/worlds_bench.py`` or ``quality_bench.py`` built (``pop/labels.jsonl``,
``home/warehouse.duckdb``). Its warehouse is copied to a temporary file (never opened in place), each kind's detector
runs on it as the pipeline calls it (``threshold(fit(con).score(con))``, default parameters) and its rows are scored
(ranked as the pipeline ranks its cases: q-value, then score) against the labels by ``pipelines.lib.evaluation.evaluate`` (the rule of ``../shared/spec/evaluation.md``). Printed per
population and kind: groups found, recall by strength, flagged cases and those matching a group, average precision,
and the accounts in flagged cases (on an honest-only population every one is a false flag). Then, per kind, the
populations pooled: recall at strength >= 0.25 and in [0.1, 0.25), flagged cases matching a group, mean AP over the
populations with groups, and flagged accounts on the populations without any.

    python benchmarks/kind_bench.py --kinds coordinated_sitout bounty_collusion --pops /tmp/hw-worlds/*
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from detectors import get_detector  # noqa: E402
from pipelines.lib import evaluation as ev  # noqa: E402


def kind_figures(con: duckdb.DuckDBPyConnection, kind: str, labels: list[dict], accounts: int,
                 flagged_out: list[dict] | None = None) -> dict:
    """One kind's detector on ``con``, scored against ``labels``: the figures printed per population. With
    ``flagged_out``, each flagged case is appended to it: the detector's row and its explanation (``explain``)."""
    det = get_detector(kind)
    rows = det.threshold(det.fit(con).score(con))
    if flagged_out is not None:
        for r in rows.filter(rows["flagged"]).iter_rows(named=True):
            flagged_out.append({"kind": kind, "row": r, "signal": det.explain(con, r).to_dict()})
    return rows_figures(kind, rows, labels, accounts)


def rows_figures(kind: str, rows, labels: list[dict], accounts: int) -> dict:
    """The figures of a detector's thresholded ``rows`` scored against ``labels`` (``accounts`` accounts seen): groups
    found, flagged and right, AP, recall by strength, accounts in flagged cases."""
    cases = [{"kind": kind, "accounts": r["accounts"], "tournaments": r["tournaments"], "score": r["score"],
              "q_value": r.get("q_value"), "flagged": r["flagged"]} for r in rows.iter_rows(named=True)]
    f = ev.evaluate(cases, labels, accounts, kinds=[kind]).kinds.get(kind)
    flagged_accounts = len({a for c in cases if c["flagged"] for a in c["accounts"]})
    if f is None:
        return {"groups": 0, "found": 0, "flagged": 0, "matching": 0, "ap": None, "by_strength": {},
                "flagged_accounts": flagged_accounts, "accounts": accounts}
    return {"groups": f.groups, "found": f.groups_found, "flagged": f.flagged, "matching": f.flagged_matching_any,
            "ap": f.average_precision, "by_strength": f.recall_by_strength, "flagged_accounts": flagged_accounts,
            "accounts": accounts}


def pool(figures: list[dict]) -> dict:
    """One kind's figures (:func:`kind_figures`) over several populations: the pooled line printed at the end."""
    out = {"recall >= 0.25": [0, 0], "recall 0.1-0.25": [0, 0], "precision": [0, 0], "honest flagged": [0, 0]}
    aps = [f["ap"] for f in figures if f["groups"] and f["ap"] is not None]
    for f in figures:
        if not f["groups"]:
            out["honest flagged"][0] += f["flagged_accounts"]
            out["honest flagged"][1] += f["accounts"]
            continue
        out["precision"][0] += f["matching"]
        out["precision"][1] += f["flagged"]
        for band, b in f["by_strength"].items():
            lo = float(band.strip("[(").split(",")[0])
            key = "recall >= 0.25" if lo >= 0.25 else "recall 0.1-0.25" if lo >= 0.1 else None
            if key:
                out[key][0] += b["found"]
                out[key][1] += b["groups"]
    return {**{k: f"{a}/{n}" for k, (a, n) in out.items()}, "mean AP": round(sum(aps) / len(aps), 2) if aps else None}


def populations(pops: list[Path]) -> Iterator[tuple[Path, duckdb.DuckDBPyConnection, list[dict], Path]]:
    """Each population folder of ``pops`` (``pop/labels.jsonl``, ``home/warehouse.duckdb``) in turn: its warehouse
    copied aside and opened read-only (a run never touches the population's own file), and its labels. Yields
    (folder, connection, labels, the copy's path); the connection is closed and the copy removed before the next."""
    with tempfile.TemporaryDirectory() as tmp:
        for d in pops:
            db = Path(tmp) / "w.duckdb"
            shutil.copy(d / "home" / "warehouse.duckdb", db)
            labels = ev.read_jsonl(d / "pop" / "labels.jsonl", "labels")
            con = duckdb.connect(str(db), read_only=True)
            try:
                yield d, con, labels, db
            finally:
                con.close()
                db.unlink()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", required=True, help="detector kinds (detectors/kinds.py)")
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    ap.add_argument("--flagged-out", type=Path, help="JSON lines file: every flagged case, its row and explanation")
    args = ap.parse_args(argv)
    seen: dict[str, list[dict]] = {k: [] for k in args.kinds}
    for d, con, labels, db in populations(args.pops):
        accounts = ev.accounts_in_warehouse(db)
        for kind in args.kinds:
            cases: list[dict] | None = [] if args.flagged_out else None
            seen[kind].append(kind_figures(con, kind, labels, accounts, cases))
            print(d.name, kind, json.dumps(seen[kind][-1]), flush=True)
            if args.flagged_out and cases:
                with args.flagged_out.open("a", encoding="utf-8") as fh:
                    for c in cases:
                        fh.write(json.dumps({"population": d.name, **c}, default=str) + "\n")
    for kind, figures in seen.items():
        print("pooled", kind, json.dumps(pool(figures)))


if __name__ == "__main__":
    main()
