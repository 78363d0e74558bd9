"""Soft play with other parameters on already-built populations: kind_bench's figures per variant, pooled per world.

Each variant is a JSON object of :class:`detectors.soft_play.SoftPlayDetector` parameters (``{}``: the defaults). Every
population's warehouse is copied aside (:func:`kind_bench.populations`), the detector fitted and scored per variant
(``threshold(fit(con).score(con))``), its rows scored against the labels as ``benchmarks/kind_bench.py`` scores them.
Printed: one line per population and variant, then per variant the populations pooled by world (the first world's
names hold ``-a-`` or start ``tune-a``, world b's ``-b-`` or ``tune-b``; populations without groups are the honest
ones) with :func:`kind_bench.pool`.

    python benchmarks/soft_play_variants.py --variant '{}' --variant '{"mutual_z": null}' --pops /work/pops/tune-a-1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kind_bench import pool, populations, rows_figures  # noqa: E402

from detectors.soft_play import SoftPlayDetector  # noqa: E402
from pipelines.lib import evaluation as ev  # noqa: E402


def variant_figures(con, params: dict, labels: list[dict], accounts: int) -> dict:
    """Soft play with ``params`` on ``con``, scored against ``labels``: kind_bench's figures and the flagged cases'
    accounts (``flagged_pairs``)."""
    det = SoftPlayDetector(**params)
    rows = det.threshold(det.fit(con).score(con))
    flagged = [list(r["accounts"]) for r in rows.filter(rows["flagged"]).iter_rows(named=True)]
    return {**rows_figures("soft_play", rows, labels, accounts), "flagged_pairs": flagged}


def world(name: str) -> str:
    """'a' (the first world), 'b' or '?' from a population's folder name."""
    if "-a-" in name or name.startswith("tune-a"):
        return "a"
    return "b" if "-b-" in name or name.startswith("tune-b") else "?"


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, run every variant on every population, print the lines and the pooled figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", action="append", required=True, help="JSON object of SoftPlayDetector parameters")
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    args = ap.parse_args(argv)
    variants = [json.loads(v) for v in args.variant]
    seen: dict[int, list[tuple[str, dict]]] = {i: [] for i in range(len(variants))}
    for d, con, labels, db in populations(args.pops):
        accounts = ev.accounts_in_warehouse(db)
        for i, params in enumerate(variants):
            fig = variant_figures(con, params, labels, accounts)
            seen[i].append((d.name, fig))
            print(d.name, json.dumps(params), json.dumps(fig, default=str), flush=True)
    for i, params in enumerate(variants):
        for w in ("a", "b"):
            figs = [f for n, f in seen[i] if world(n) == w and f["groups"]]
            if figs:
                print("pooled", json.dumps(params), w, len(figs), json.dumps(pool(figs)))
        honest = [f for _, f in seen[i] if not f["groups"]]
        if honest:
            print("pooled", json.dumps(params), "honest", len(honest), json.dumps(pool(honest)))


if __name__ == "__main__":
    main()
