"""Soft play's ring test: three accounts whose three pairs each lean the sparing way, one combined test."""

from __future__ import annotations

import networkx as nx
import numpy as np
import polars as pl

from detectors import stats


class RingsMixin:
    """The ring test of :class:`~detectors.soft_play.SoftPlayDetector` (``ring_tau``, ``min_spots``,
    ``min_hu_hands``, ``alpha`` are the detector's)."""

    def _with_rings(self, u: pl.DataFrame) -> pl.DataFrame:
        """Each tested pair's best ring: three accounts whose three pairs each lean the sparing way.

        A ring of three whose pairs each spared the others a little is often
        missed pair by pair (each pair's q is diluted by the thousand pairs
        tested). The three pairs' tests rest on disjoint decisions (each on
        the decisions two of them aimed at each other), so their p-values are
        independent under the null; a triangle of tested pairs (the same
        filter as the pairs': enough decisions and heads-up hands, never the
        p-values) is judged by :func:`detectors.stats.all_below_product_pvalue`
        (every pair p <= ``ring_tau``, their product; a truncated product,
        Zaykin et al., Genet. Epidemiol. 2002), and the multiple-testing cost
        of choosing the ring is paid in full: Bonferroni over *every*
        triangle of tested pairs (``ring_tests``, about a thousand on a
        600-account population), whatever its p-values. Adds ring_accounts,
        ring_pairs_p (the three pair p-values), ring_p_value, ring_tests and
        ring_q_value (the Bonferroni-corrected p-value) to each pair of a
        candidate ring; the score becomes the larger of the pair's and the
        ring's −log10. On the tuning populations no triangle of honest
        accounts had all three pair p-values below 0.05; a ring of strength
        0.625 on tuning population 160 whose pairs had q 0.36-1 (p 0.002-0.008)
        has ring q 0.002.
        """
        spots = pl.col("aggr_n").fill_null(0) + pl.col("aggr_n_r").fill_null(0)
        e = u.filter((spots >= self.min_spots) & (pl.col("hu") >= self.min_hu_hands) & pl.col("p_value").is_not_null()
                     & pl.col("p_value").is_not_nan()).select(
            a=pl.min_horizontal("player", "opponent"), b=pl.max_horizontal("player", "opponent"), p="p_value")

        def triangles(x: pl.DataFrame) -> pl.DataFrame:
            # a < b < c with edges ab, ac (joined on a) and bc
            t = x.join(x, on="a", suffix="_c").filter(pl.col("b") < pl.col("b_c"))
            t = t.rename({"b_c": "c", "p": "p_ab", "p_c": "p_ac"})
            return t.join(x.rename({"b": "c", "a": "b", "p": "p_bc"}), on=["b", "c"])

        # every triangle of tested pairs (networkx counts them with neighbour-set intersections, memory linear in
        # the pairs; the join above would hold every wedge of a regular who met thousands of players)
        m = sum(nx.triangles(nx.Graph(zip(e["a"], e["b"]))).values()) // 3
        t = triangles(e.filter(pl.col("p") <= self.ring_tau))
        cols = {"ring_accounts": pl.List(pl.Utf8), "ring_pairs_p": pl.List(pl.Float64), "ring_p_value": pl.Float64,
                "ring_tests": pl.Int64, "ring_q_value": pl.Float64}
        if t.is_empty():
            return u.with_columns(pl.lit(None, dt).alias(c) for c, dt in cols.items())
        rp = stats.all_below_product_pvalue(t.select("p_ab", "p_ac", "p_bc").to_numpy(), self.ring_tau)
        t = t.with_columns(ring_p_value=pl.Series(rp), ring_tests=pl.lit(m, pl.Int64),
                           ring_accounts=pl.concat_list("a", "b", "c"), ring_pairs_p=pl.concat_list("p_ab", "p_ac", "p_bc"))
        t = t.with_columns(ring_q_value=(pl.col("ring_p_value") * m).clip(upper_bound=1.0))
        # each pair of a ring, its best ring
        per = pl.concat([t.select(pl.col(x).alias("player"), pl.col(y).alias("opponent"), *cols)
                         for x, y in (("a", "b"), ("a", "c"), ("b", "c"))])
        per = per.sort(["ring_q_value", "ring_accounts"]).unique(["player", "opponent"], keep="first")
        lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
        u = u.with_columns(_lo=lo, _hi=hi).join(per.rename({"player": "_lo", "opponent": "_hi"}), on=["_lo", "_hi"],
                                                  how="left").drop("_lo", "_hi")
        ring_score = stats.score_from_q(u["ring_q_value"].fill_null(1.0).to_numpy())
        return u.with_columns(score=pl.Series(np.maximum(u["score"].to_numpy(), ring_score)))
