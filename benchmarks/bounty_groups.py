"""Each planted bounty gang of a population, as bounty collusion sees it, beside what else its pairs leave: the fast
loop's look at misses, and the population's own tails of the same statistics.

For every ``bounty_collusion`` group of ``pop/labels.jsonl`` at strength >= ``--min-strength``, each pair of its
accounts: the knockout events shared (``events``: the main family tests a pair from ``min_events``), the main
family's p and q (``p_value``, ``q_main``), the presence test's p (``p_presence``, a tournament effect in its null),
the wide calls' (``p_wide_calls``, own rates only), bounty passing's p and q (``pass_p``, ``q_pass``; its calls
``tc_k`` of ``tc_n``), the starting-tables family's statistics for every pair
(:mod:`detectors.bounty_collusion.seating`: the tournaments started at one table ``cs_k`` of ``cs_n`` and their
tail ``cs_p``, each direction's bets after the flop ``pa_ab_p``, ``pa_ba_p``, joined ``seat_p``; ``q_seat`` where
the detector's Tarone selection tested the pair) and each p's rank among the population's pairs.

Then, per statistic, the population's tail: over the pairs below ``min_events`` and at it or above, how many have
a p under 1e-2 .. 1e-5 against the count a uniform null expects (m x t): the calibration a test of those pairs would
need before it could flag. The warehouse is copied to a temporary file (never opened in place); the detector runs
with its default parameters, as the pipeline calls it.

    python benchmarks/bounty_groups.py --pops /work/pops/tune-seen-b-2047 /work/pops/tune-seen-h-b-2047
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import duckdb  # noqa: E402
import polars as pl  # noqa: E402

from detectors.bounty_collusion import BountyCollusionDetector  # noqa: E402
from detectors.bounty_collusion.seating import seated_pairs  # noqa: E402
from kind_bench import populations  # noqa: E402  (a script beside this one)

STAT_COLUMNS = ("p_presence", "p_wide_calls", "p_value", "pass_p", "cs_p", "pa_ab_p", "pa_ba_p", "seat_p")
THRESHOLDS = (1e-2, 1e-3, 1e-4, 1e-5)


def pair_table(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, int]:
    """The detector's scored pairs (default parameters) joined with every pair's
    :func:`~detectors.bounty_collusion.seating.seated_pairs`; and the detector's ``min_events``."""
    det = BountyCollusionDetector()
    rows = det.fit(con).score(con)
    keep = ["player", "opponent", "events", "p_value", "q_main", "q_pass", "q_seat", "q_value", "p_presence",
            "p_wide_calls", "pass_p", "tc_n", "tc_k"]
    t = rows.select([c for c in keep if c in rows.columns])
    # every pair's starting tables and passivity (the detector keeps those of Tarone's selection only)
    t = t.join(seated_pairs(con), on=["player", "opponent"], how="full", coalesce=True)
    return t.with_columns(pl.col("events").fill_null(0)), det.min_events


def tails(t: pl.DataFrame, min_events: int) -> list[str]:
    """Per statistic and side of ``min_events``: the pairs with it (m) and, per threshold, the pairs under it
    against m x threshold."""
    out = []
    for col in STAT_COLUMNS:
        for name, sel in (("below", pl.col("events") < min_events), ("at or above", pl.col("events") >= min_events)):
            v = t.filter(sel & pl.col(col).is_not_null())[col].to_numpy()
            counts = ", ".join(f"<{x:g}: {int((v < x).sum())} ({len(v) * x:.2g})" for x in THRESHOLDS)
            out.append(f"  tail {col} events {name} {min_events}: m {len(v)}; {counts}")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    ap.add_argument("--min-strength", type=float, default=0.25, help="the groups printed: at least this strength")
    ap.add_argument("--table-out", type=Path, help="a folder: each population's pair table as <name>.parquet")
    args = ap.parse_args(argv)
    for d, con, labels, _ in populations(args.pops):
        t, min_events = pair_table(con)
        if args.table_out:
            args.table_out.mkdir(parents=True, exist_ok=True)
            t.write_parquet(args.table_out / f"{d.name}.parquet")
        ranked = t.with_columns(rank=pl.col("p_value").rank("min"), cs_rank=pl.col("cs_p").rank("min"),
                                seat_rank=pl.col("seat_p").rank("min"))
        print(d.name, "pairs", t.height, "main family", t["q_main"].is_not_null().sum(), "passing family",
              t["q_pass"].is_not_null().sum(), flush=True)
        for g in labels:
            if g["kind"] != "bounty_collusion" or g["strength"] < args.min_strength:
                continue
            print(f" {g['group']} strength {g['strength']} tournaments {len(g['tournaments'])}")
            acc = list(g["accounts"])
            for r in ranked.filter(pl.col("player").is_in(acc) & pl.col("opponent").is_in(acc)).iter_rows(named=True):
                print("   ", {k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in r.items()})
        for line in tails(t, min_events):
            print(line)


if __name__ == "__main__":
    main()
