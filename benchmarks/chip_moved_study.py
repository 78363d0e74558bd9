"""Chip dumping's chips-moved gate on built populations: main's 20 bb gate, this flag rule and the own-null test alone.

Each population folder (``pop/labels.jsonl``, ``home/warehouse.duckdb``, as ``kind_bench.py`` reads them) is fitted
once (``ChipDumpingDetector().fit(con).score(con)``); each rule is then applied to that score frame as ``threshold``
applies the detector's own, and scored as ``kind_bench.kind_figures`` scores. Printed per population: groups found
per rule and the excess at the population's top alpha / 2 (what the amount's test asks, in bb); then per world
(a population's name holding ``-b-`` is world b) the pooled figures of each rule (``kind_bench.pool``).

    python benchmarks/chip_moved_study.py --pops /work/pops/tune-b-1 /work/pops/honest-b-6
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

import kind_bench as kb  # noqa: E402
from detectors.chip_dumping import ChipDumpingDetector  # noqa: E402
from pipelines.lib import evaluation as ev  # noqa: E402

Rule = Callable[[pl.DataFrame], pl.Series]


def main_flow(det: ChipDumpingDetector) -> pl.Expr:
    """main's gate where the cards are unknown at 6c505e8 (until 2026-12-07, issue 32: now the chips-moved test over
    every hand met, ``benchmarks/chip_flow_study.py``): a net flow of 20 bb in 5 hands lost, the value test not made."""
    return ((pl.col("net_flow_bb") >= 20.0) & (pl.col("flow_hands") >= 5)
            & (pl.col("value_n").fill_null(0) < det.min_value_n))


def main_rule(s: pl.DataFrame) -> pl.Series:
    """main's flag at 6c505e8: q <= alpha and (the net flow where the cards are unknown, the value given, or at least
    20 bb beyond the giver's own rate in the deviation hands, lost in at least 5 of them)."""
    det = ChipDumpingDetector()
    exc = pl.col("dev_flow_bb").fill_null(0.0) - pl.col("dev_exp_bb").fill_null(0.0).clip(lower_bound=0.0)
    dev = (exc >= 20.0) & (pl.col("dev_loss_hands").fill_null(0) >= 5)
    moved = main_flow(det) | det._value_moved() | dev
    return s.select(((pl.col("q_value").fill_null(1.0) <= det.alpha) & moved).alias("f"))["f"]


def own_null_rule(level: float) -> Rule:
    """The flag with the deviation hands read by the own-null test alone (``moved_p`` <= ``level``)."""
    def rule(s: pl.DataFrame) -> pl.Series:
        det = ChipDumpingDetector()
        moved = main_flow(det) | det._value_moved() | (pl.col("moved_p").fill_null(1.0) <= level)
        return s.select(((pl.col("q_value").fill_null(1.0) <= det.alpha) & moved).alias("f"))["f"]
    return rule


def figures(scores: pl.DataFrame, labels: list[dict], accounts: int, rule: Rule) -> dict:
    """``rule`` applied to ``scores`` through ``threshold``: the figures of :func:`kind_bench.kind_figures`."""
    det = ChipDumpingDetector()
    det.flag = lambda sc: sc.with_columns(flagged=rule(sc))  # type: ignore[method-assign]
    return kb.rows_figures(det.kind, det.threshold(scores), labels, accounts)


def top_excess(scores: pl.DataFrame, share: float) -> float | None:
    """The deviation hands' excess (bb) at the top ``share`` of the scored pairs that met in two hands or more."""
    exc = (scores["dev_flow_bb"].fill_null(0.0) - scores["dev_exp_bb"].fill_null(0.0).clip(lower_bound=0.0)).to_numpy()
    pool = np.sort(exc[scores["dev_met_hands"].fill_null(0).to_numpy() >= 2])
    return float(np.quantile(pool, 1.0 - share)) if pool.size else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    args = ap.parse_args(argv)
    rules: dict[str, Rule] = {"before (20 bb)": main_rule,
                              "after": lambda s: ChipDumpingDetector().flag(s)["flagged"],
                              **{f"own-null alone at {lv:g}": own_null_rule(lv) for lv in (0.005, 0.01, 0.05)}}
    seen: dict[tuple[str, str], list[dict]] = {}
    for d, con, labels, db in kb.populations(args.pops):
        accounts = ev.accounts_in_warehouse(db)
        det = ChipDumpingDetector()
        scores = det.fit(con).score(con)
        world = "b" if "-b-" in d.name else "a"
        found = {}
        for name, rule in rules.items():
            f = figures(scores, labels, accounts, rule)
            seen.setdefault((world, name), []).append(f)
            found[name] = f"{f['found']}/{f['groups']}" + (f" honest {f['flagged_accounts']}" if not f["groups"] else "")
        print(d.name, json.dumps({"found": found, "top excess (bb)": top_excess(scores, det.alpha / 2)}), flush=True)
    for (world, name), figs in seen.items():
        print("pooled", world, name, json.dumps(kb.pool(figs)))


if __name__ == "__main__":
    main()
