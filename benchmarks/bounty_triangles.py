"""A group (triangle) test of bounty passing on built populations: what it finds and what it accuses.

Not the detector's: a measurement of a candidate false-discovery family for
:class:`detectors.bounty_collusion.BountyCollusionDetector` (docs/measurements.md, "Bounty passing in
triangles"). The decisions are those of :func:`detectors.features.gameplay.bounty_passing` (calls of a short
bounty player's all-in with hands the caller's own baseline folds; shoves with a player yet to act with hands the
shover's own baseline does not shove), each with the player's own rate ``r`` without that partner
(:func:`detectors.features.gameplay.bounty_tests.bounty_wide_cells`, cells below ``wide_rate``).

Family: every triangle of players whose three pairs each had at least one such decision (opportunities, fixed
before the outcomes are looked at). Per triangle, the decisions of a member with another member as the partner,
each decision (hand, player, action) counted once (a shove with two members yet to act is one decision, at the
larger of its two rates: an upper bound of its probability); the count of continuations against the exact
Poisson-binomial tail (:func:`detectors.features.gameplay.distributions.betabinom_sum_sf`), calls and shoves
joined by Fisher's method. Gilbert's discrete BH (:func:`detectors.features.gameplay.discrete_bh`; Tarone's
filter on the calls' smallest attainable p) over the family at ``--alpha``.

Two nulls:

- ``union`` (default): no pair of the triangle passes bounties. Rejecting it says *some* pair does: a gang pair
  with any third player it met rejects it too.
- ``member``: every member passes bounties to another (intersection-union, Berger 1982): the triangle's p-value is
  the largest of its members' p-values, each from the member's decisions with the two others and theirs with it.

Printed per population: triangles, the family's size after Tarone's filter, the three smallest p-values, the
planted gang's best triangle and its rank, flagged triangles with whether all three belong to one planted gang.

    python benchmarks/bounty_triangles.py --null union /work/pops/tune-b-2001 /work/pops/tune-honest-b-2001
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from detectors import stats  # noqa: E402
from detectors.features import gameplay as gp  # noqa: E402
from detectors.features.gameplay.bounty_passing import bounty_partner_raises, bounty_shoves  # noqa: E402
from detectors.features.gameplay.bounty_tests import bounty_wide_cells  # noqa: E402
from detectors.features.gameplay.distributions import betabinom_sum_sf  # noqa: E402


def wide_rows(rows: pl.DataFrame, extra: str, wide_rate: float) -> pl.DataFrame:
    """The decisions in cells where the player's own rate without the partner is below ``wide_rate``, with ``r``."""
    d, bins, t = bounty_wide_cells(rows, context=(*gp.BOUNTY_CONTEXT_BINS, extra), looseness_tau=gp.BOUNTY_LOOSENESS_TAU)
    t = t.filter(pl.col("r") < wide_rate).select("player", "partner", *bins, "r")
    return d.join(t, on=["player", "partner", *bins]).select("hand_id", "seq", "player", "partner", "cont", "r")


def triangles(*rows: pl.DataFrame) -> pl.DataFrame:
    """Every triangle ``a < b < c`` whose three pairs each have a decision in ``rows``; ``t`` its index."""
    lo, hi = pl.min_horizontal("player", "partner"), pl.max_horizontal("player", "partner")
    e = pl.concat([r.select(a=lo, b=hi) for r in rows]).unique()
    return (e.join(e.rename({"b": "c"}), on="a").filter(pl.col("b") < pl.col("c"))
            .join(e.rename({"a": "b", "b": "c"}), on=["b", "c"]).sort("a", "b", "c")
            .with_row_index("t").with_columns(pl.col("t").cast(pl.Int64)))


def tri_test(tri: pl.DataFrame, rows: pl.DataFrame, only: str | None = None) -> pl.DataFrame:
    """Per triangle: ``n`` decisions of a member with another member as the partner (each decision once, at its
    largest rate), ``k`` continuations, ``e`` expected, ``lmin`` the log of the smallest attainable p and ``p`` the
    exact Poisson-binomial tail. ``only``: a column of ``tri`` naming one member: its decisions and those with it
    as the partner."""
    pairs = [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")]
    m = pl.concat([tri.select("t", "a", "b", "c", x=x, y=y) for x, y in pairs])
    if only is not None:
        m = m.filter((pl.col("x") == pl.col(only)) | (pl.col("y") == pl.col(only)))
    j = rows.join(m.select("t", "x", "y"), left_on=["player", "partner"], right_on=["x", "y"])
    dd = j.group_by("t", "hand_id", "seq", "player").agg(pl.col("r").max(), pl.col("cont").first()).sort("t")
    g = dd.group_by("t").agg(n=pl.len(), k=pl.col("cont").sum(), e=pl.col("r").sum(), lmin=pl.col("r").log().sum())
    out = tri.select("t").join(g, on="t", how="left").sort("t")
    k = out["k"].fill_null(0).to_numpy().astype(float)
    has = out["n"].fill_null(0).to_numpy() > 0
    p = np.full(tri.height, np.nan)
    if dd.height:
        pe = betabinom_sum_sf(dd["t"].to_numpy().astype(np.int64), np.ones(dd.height), dd["r"].to_numpy(),
                              np.full(dd.height, np.inf), k)
        p[has] = np.clip(pe[has], 1e-300, 1.0)
    return out.with_columns(pl.Series("p", p, nan_to_null=True))


def triangle_family(con: duckdb.DuckDBPyConnection, *, null: str = "union", alpha: float = 0.025,
                    max_bb: float = 20.0, wide_rate: float = 0.3) -> pl.DataFrame:
    """The triangles with calls ``tc_k``/``tc_e``, shoves ``sh_k``/``sh_e``, ``p`` (of ``null``) and ``q``."""
    tc = wide_rows(bounty_partner_raises(con, max_bb=max_bb), "rpos", wide_rate)
    sh = wide_rows(bounty_shoves(con, max_bb=max_bb), "tix", wide_rate)
    tri = triangles(tc, sh)
    rc, rs = tri_test(tri, tc), tri_test(tri, sh)

    def joined(c: pl.DataFrame, s: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        pmin = np.where(c["n"].fill_null(0).to_numpy() > 0, np.exp(c["lmin"].fill_null(0).to_numpy()), np.nan)
        return stats.fisher_combine(c["p"].to_numpy(), s["p"].to_numpy()), pmin

    p, pmin = joined(rc, rs)
    if null == "member":
        per = [joined(tri_test(tri, tc, z), tri_test(tri, sh, z)) for z in ("a", "b", "c")]
        p = np.max(np.vstack([x[0] for x in per]), axis=0)  # NaN where a member has no decision: not tested
        pmin = np.max(np.vstack([x[1] for x in per]), axis=0)
    q = gp.discrete_bh(p, pmin, alpha)
    return tri.with_columns(pl.Series("p", p, nan_to_null=True), pl.Series("q", q, nan_to_null=True),
                            tc_k=rc["k"], tc_e=rc["e"], sh_k=rs["k"], sh_e=rs["e"])


def report(pop: Path, null: str, alpha: float) -> None:
    """Print one population's figures (see the module's docstring)."""
    gangs = [set(r["accounts"]) for r in map(json.loads, (pop / "pop" / "labels.jsonl").read_text().splitlines())
             if r.get("kind") == "bounty_collusion"]
    con = duckdb.connect(str(pop / "home" / "warehouse.duckdb"), read_only=True)
    t = triangle_family(con, null=null, alpha=alpha)
    con.close()
    t = t.with_columns(gang=pl.concat_list("a", "b", "c").map_elements(
        lambda m: any(set(m) <= g for g in gangs), return_dtype=pl.Boolean))
    print(f"{pop.name}: {t.height} triangles, {t['q'].is_not_null().sum()} after Tarone's filter ({null} null)")
    for r in t.sort("p", nulls_last=True).head(3).iter_rows(named=True):
        print(f"  {r['a']} / {r['b']} / {r['c']}: calls {r['tc_k'] or 0}/{r['tc_e'] or 0:.2f}, shoves "
              f"{r['sh_k'] or 0}/{r['sh_e'] or 0:.2f}, p {r['p']:.2g}, q {r['q'] if r['q'] is not None else float('nan'):.2g}"
              f"{'  (gang)' if r['gang'] else ''}")
    g = t.filter("gang").sort("p", nulls_last=True)
    if g.height and g["p"][0] is not None:
        print(f"  best gang triangle p {g['p'][0]:.2g}, rank {int((t['p'] < g['p'][0]).sum()) + 1}")
    fl = t.filter(pl.col("q") <= alpha)
    print(f"  flagged {fl.height}, not all three of one gang {fl.filter(~pl.col('gang')).height}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pops", nargs="+", type=Path)
    ap.add_argument("--null", choices=("union", "member"), default="union")
    ap.add_argument("--alpha", type=float, default=0.025)
    a = ap.parse_args()
    for pop in a.pops:
        report(pop, a.null, a.alpha)


if __name__ == "__main__":
    main()
