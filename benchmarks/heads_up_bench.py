"""Heads-up flipping quality: generate, ingest and detect populations, one table row each (issue 36).

Each population is ``railbird generate --preset P --seed S --hands H --mix heads_up_flipping=N
[--world-seed W]`` (``N`` 0: the heads-up world with no flippers), read into its own warehouse
(``pipelines.lib.ingest``), and scored by :class:`detectors.heads_up_flipping.HeadsUpFlippingDetector`
with its default parameters alone (the nightly job runs every detector; this runs one). A flagged
pair is true when both its accounts are a planted pair's (``spec/evaluation.md``'s pair rule).
Printed per population: hands, heads-up hands, flips, the honest pairs' weak flips under
``min_depth_bb`` and at or over it (not exempt), weak flips in exempt finals, planted pairs, true and
false flags, the strengths missed, seconds to detect.

    python benchmarks/heads_up_bench.py --work /tmp/hu --pop 404:1002:5 --pop 505:1003:0
    python benchmarks/heads_up_bench.py --work /tmp/hu --preset heads_up --hands 60000 --pop 606:1004:5

``--pop SEED[:WORLD_SEED][:N]`` (N defaults to 5). An existing warehouse under ``--work`` is reused.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import duckdb
import polars as pl


def build(work: Path, preset: str, hands: int, seed: int, world_seed: int | None, n: int) -> Path:
    """The population's folder and warehouse under ``work`` (made if absent); returns the folder."""
    from datasets.generate import generate
    from pipelines.lib.ingest import ingest

    name = f"{preset}-{seed}-w{world_seed}-n{n}-{hands}"
    out = work / name
    if not (work / f"{name}.duckdb").exists():
        generate(out, preset=preset, seed=seed, hands=hands, mix={"heads_up_flipping": n}, world_seed=world_seed,
                 progress=False)
        ingest([out], work / f"{name}.duckdb", growing_seconds=0, progress=False)
    return out


def row(folder: Path) -> str:
    """The table row of one population (module docstring)."""
    from detectors.heads_up_flipping import HeadsUpFlippingDetector

    con = duckdb.connect(str(folder) + ".duckdb", read_only=True)
    labels = [json.loads(x) for x in (folder / "labels.jsonl").read_text().splitlines()]
    truth = {tuple(sorted(g["accounts"])): g["strength"] for g in labels if g["kind"] == "heads_up_flipping"}
    n_hands = con.execute("SELECT count(*) FROM hands").fetchone()[0]
    t = time.perf_counter()
    det = HeadsUpFlippingDetector()
    flagged = {tuple(sorted(s.accounts)) for s in det.detect(con) if s.flagged}
    secs = time.perf_counter() - t
    h = det.hands_
    planted = pl.DataFrame([{"a": a, "b": b} for a, b in truth], schema={"a": pl.Utf8, "b": pl.Utf8})
    honest = h.join(planted, on=["a", "b"], how="anti").filter(pl.col("weak"))
    shallow = honest.filter(pl.col("eff_bb") < det.min_depth_bb).height
    deep = honest.filter((pl.col("eff_bb") >= det.min_depth_bb) & ~pl.col("exempt")).height
    missed = sorted(v for k, v in truth.items() if k not in flagged)
    return (f"| {folder.name} | {n_hands} | {h.height} | {int(h['flip'].sum())} | {shallow} | {deep} | "
            f"{h.filter(pl.col('exempt') & pl.col('weak')).height} | {len(truth)} | {len(flagged & set(truth))} | "
            f"{len(flagged - set(truth))} | {missed or 'none'} | {secs:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--preset", default="mixed")
    ap.add_argument("--hands", type=int, default=20000)
    ap.add_argument("--pop", action="append", required=True, help="SEED[:WORLD_SEED][:N]")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print("| population | hands | heads-up hands | flips | honest weak flips shallow | honest weak flips deep | "
          "weak flips in exempt finals | planted | flagged true | flagged false | missed (strength) | detect s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.pop:
        parts = spec.split(":")
        seed = int(parts[0])
        ws = int(parts[1]) if len(parts) > 1 and parts[1] else None
        n = int(parts[2]) if len(parts) > 2 else 5
        print(row(build(args.work, args.preset, args.hands, seed, ws, n)), flush=True)


if __name__ == "__main__":
    main()
