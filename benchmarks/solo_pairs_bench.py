"""Multi-accounting on behaviour alone, on built populations: where the labelled groups' pairs rank among every pair.

For each population folder (``pop/labels.jsonl``, ``home/warehouse.duckdb``, as ``benchmarks/kind_bench.py`` reads
them) the warehouse is copied to a temporary file and :func:`detectors.features.identity.behaviour_pairs` is run on
it as the detector runs it. Printed per population: the pairs judged, the seconds it took, the smallest ``q_solo``
(on an honest-only population any q at most alpha would be a false lead), the rank and q of the strongest pair that is
not of a labelled multi-accounting group, and for every pair of a labelled
multi-accounting group its rank by ``p_solo`` (1 = strongest), its figures and whether its accounts share an
identifier (:func:`detectors.features.identity.identifiers`). The labels score; they are never an input.

    python benchmarks/solo_pairs_bench.py --pops /work/pops/tune-b-1 /work/pops/tune-h-b-2001
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import duckdb  # noqa: E402
import polars as pl  # noqa: E402

from detectors.features import identity as idf  # noqa: E402
from kind_bench import populations  # noqa: E402  (a script beside this one)


def labelled_pairs(labels: list[dict]) -> pl.DataFrame:
    """Every pair (``a`` < ``b``) of every labelled multi-accounting group, with ``group`` and ``strength``."""
    rows = [(min(x, y), max(x, y), g["group"], float(g.get("strength") or 0.0))
            for g in labels if g["kind"] == "multi_accounting"
            for i, x in enumerate(g["accounts"]) for y in g["accounts"][i + 1:]]
    return pl.DataFrame(rows, schema={"a": pl.Utf8, "b": pl.Utf8, "group": pl.Utf8, "strength": pl.Float64},
                        orient="row")


def population(con: duckdb.DuckDBPyConnection, labels: list[dict]) -> tuple[dict, pl.DataFrame]:
    """The figures of one population: a summary and the labelled pairs' rows."""
    t = time.perf_counter()
    out = idf.behaviour_pairs(con, idf.style_fingerprints(con))
    secs = time.perf_counter() - t
    if out is None:
        return {"pairs": None, "seconds": round(secs, 1)}, pl.DataFrame()
    ranked = out.sort("p_solo").with_row_index("rank", offset=1)
    ids = idf.identifiers(con).group_by("kind", "value").agg(pl.col("account").unique())
    shared = {tuple(sorted((x, y))) for accs in ids["account"].to_list() for x in accs for y in accs if x != y}
    lab = labelled_pairs(labels).join(ranked, on=["a", "b"], how="left").with_columns(
        shares_id=pl.struct("a", "b").map_elements(lambda s: (s["a"], s["b"]) in shared, return_dtype=pl.Boolean))
    other = ranked.join(labelled_pairs(labels).select("a", "b"), on=["a", "b"], how="anti")
    summary = {"pairs": out.height, "seconds": round(secs, 1), "min_q_solo": float(out["q_solo"].min()),
               "pairs_q_le_0.05": int((out["q_solo"] <= 0.05).sum()),
               "first_unlabelled_rank": int(other["rank"].min()) if other.height else None,
               "its_q": float(other.sort("rank")["q_solo"][0]) if other.height else None}
    return summary, lab.sort("rank", nulls_last=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    args = ap.parse_args(argv)
    pl.Config.set_tbl_rows(100)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(220)
    for d, con, labels, _ in populations(args.pops):
        summary, lab = population(con, labels)
        print(d.name, json.dumps(summary))
        if lab.height:
            print(lab.select("rank", "group", "strength", "shares_id", "p_style", "p_timing", "p_hours", "p_opened",
                             "p_country", "p_seated", "p_solo", "q_solo"))


if __name__ == "__main__":
    main()
