"""Chip dumping's chips-moved gate where the cards are unknown, on built populations: main's 20 bb gate and this rule.

Each population folder (``pop/labels.jsonl``, ``home/warehouse.duckdb``, as ``kind_bench.py`` reads them) is fitted
once (``ChipDumpingDetector().fit(con).score(con)``); each rule is then applied to that score frame as ``threshold``
applies the detector's own, and scored as ``kind_bench.kind_figures`` scores. The rules differ only on the rows whose
cards are unknown (the value test not made on ``min_value_n`` heads-up hands): main's (at 8bdd3b9) asks there a net
flow of at least 20 bb over all hands in at least 5 hands lost; "after" is this checkout's ``flag`` (the two tests of
"the chips did not move" per hand in which chips moved between the two, each at alpha / 2); "own-null alone" and
"amount alone" keep one of the two. Printed per population: groups found per rule (honest populations: accounts flagged), the number of
rows whose flag rests on the cards-unknown gate, and the chips of those hands beyond the giver's own rate at
the population's top alpha / 2 (what the amount's test asks, in bb); then per world (a population's name holding
``-b-`` is world b, ``-p`` the player view) the pooled figures of each rule (``kind_bench.pool``). ``--frames DIR``
keeps each population's score frame (parquet) there.

    python benchmarks/chip_flow_study.py --pops /work/pops/tune-a-1 /work/pops/tune-h-a-4
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


def _unknown(det: ChipDumpingDetector) -> pl.Expr:
    """The rows whose cards are unknown, as ``_flow_moved`` reads them."""
    return pl.col("value_n").fill_null(0) < det.min_value_n


def rule_with(flow: Callable[[ChipDumpingDetector], pl.Expr]) -> Rule:
    """The flag with the cards-unknown gate ``flow(det)`` in place of ``_flow_moved`` (the rest of ``flag``'s own)."""
    def rule(s: pl.DataFrame) -> pl.Series:
        det = ChipDumpingDetector()
        s = det.flag(s)  # the columns (amount_p, flow_amount_p, ...)
        moved = (flow(det) & _unknown(det)) | det._value_moved() | det._deviation_moved()
        return s.select(((pl.col("q_value").fill_null(1.0) <= det.alpha) & moved).alias("f"))["f"]
    return rule


RULES: dict[str, Rule] = {
    "before (20 bb)": rule_with(lambda d: (pl.col("net_flow_bb") >= 20.0) & (pl.col("flow_hands") >= 5)),
    "after": lambda s: ChipDumpingDetector().flag(s)["flagged"],
    "own-null alone": rule_with(lambda d: pl.col("flow_moved_p").fill_null(1.0).fill_nan(1.0) <= d.alpha / 2),
    "amount alone": rule_with(lambda d: pl.col("flow_amount_p").fill_null(1.0).fill_nan(1.0) <= d.alpha / 2),
}


def figures(scores: pl.DataFrame, labels: list[dict], accounts: int, rule: Rule) -> dict:
    """``rule`` applied to ``scores`` through ``threshold``: the figures of :func:`kind_bench.kind_figures`."""
    det = ChipDumpingDetector()
    det.flag = lambda sc: det.__class__.flag(det, sc).with_columns(flagged=rule(sc))  # type: ignore[method-assign]
    return kb.rows_figures(det.kind, det.threshold(scores), labels, accounts)


def top_excess(scores: pl.DataFrame, share: float) -> float | None:
    """The excess per hand exchanged (bb) at the top ``share`` of the scored pairs with two such hands or more."""
    if "xch_flow_bb" not in scores.columns:
        return None
    exc = (scores["xch_flow_bb"].fill_null(0.0) - scores["xch_exp_bb"].fill_null(0.0).clip(lower_bound=0.0)).to_numpy()
    pool = np.sort(exc[scores["xch_hands"].fill_null(0).to_numpy() >= 2])
    return round(float(np.quantile(pool, 1.0 - share)), 1) if pool.size else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    ap.add_argument("--frames", type=Path, default=None, help="keep each population's score frame here (parquet)")
    args = ap.parse_args(argv)
    seen: dict[tuple[str, str], list[dict]] = {}
    for d, con, labels, db in kb.populations(args.pops):
        accounts = ev.accounts_in_warehouse(db)
        det = ChipDumpingDetector()
        scores = det.fit(con).score(con)
        if args.frames is not None:
            args.frames.mkdir(parents=True, exist_ok=True)
            scores.write_parquet(args.frames / f"{d.name}.parquet")
        world = "b" if "-b-" in d.name else "player view" if "-p" in d.name else "a"
        found = {}
        for name, rule in RULES.items():
            f = figures(scores, labels, accounts, rule)
            seen.setdefault((world, name), []).append(f)
            found[name] = f"{f['found']}/{f['groups']}" + (f" honest {f['flagged_accounts']}" if not f["groups"] else "")
        flagged = det.flag(scores)
        on_flow = flagged.filter(pl.col("flagged") & ~(det._value_moved() | det._deviation_moved())).height
        print(d.name, json.dumps({"found": found, "flags on the cards-unknown gate alone": on_flow,
                                  "top excess (bb)": top_excess(flagged, det.alpha / 2)}), flush=True)
    for (world, name), figs in seen.items():
        print("pooled", world, name, json.dumps(kb.pool(figs)))


if __name__ == "__main__":
    main()
