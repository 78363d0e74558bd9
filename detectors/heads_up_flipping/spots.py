"""The hands of heads-up matches, the flips among them and the per-pair count test.

A heads-up match is the hands two accounts play against each other in a
tournament played only two-handed (every hand's dealt-in count is two). The
final match of a *scheduled* heads-up tournament (more than two entrants,
played as a bracket of matches) is exempt by the house rule and left out of
every count: it is the pair of the tournament's last hand.

A **flip** is a hand in which both players commit at least the effective
stack (the smaller starting stack) preflop; a **weak flip** one in which the
weaker of the two starting hands lies below ``weak_pct`` (the percentile among
the 1,326 starting hands, :func:`detectors.features.gameplay.starting_hand_percentile`):
at depth an honest player neither shoves nor calls all in with it. With a
player's cards unknown (the player view) the flip counts as weak, alike in the
pair's count and in the baselines.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.features.gameplay import starting_hand_percentile

HU_HANDS_SQL = """
WITH dealt AS (
    SELECT h.hand_id, h.tournament_id, h.started_at, h.big_blind::DOUBLE AS bb, h.game,
           count(*) AS n, min(s.player) AS a, max(s.player) AS b, min(s.stack_start)::DOUBLE AS eff
    FROM hands h JOIN seats s ON s.hand_id = h.hand_id AND s.dealt_in
    WHERE h.is_tournament AND h.tournament_id IS NOT NULL
    GROUP BY ALL
),
tours AS (
    SELECT tournament_id, max(n) AS max_n, arg_max(a || chr(0) || b, (started_at, hand_id)) AS last_pair
    FROM dealt GROUP BY ALL
),
ents AS (
    SELECT tournament_id, count(DISTINCT p) AS entrants
    FROM (SELECT tournament_id, a AS p FROM dealt UNION ALL SELECT tournament_id, b FROM dealt) GROUP BY ALL
),
pre AS (
    SELECT hand_id, player, sum(amount)::DOUBLE AS put_pre
    FROM actions WHERE street = 'preflop' GROUP BY ALL
)
SELECT d.hand_id, d.tournament_id, d.started_at, d.a, d.b, d.game,
       d.eff / coalesce(nullif(d.bb, 0), 1) AS eff_bb,
       row_number() OVER (PARTITION BY d.tournament_id, d.a, d.b ORDER BY d.started_at, d.hand_id) AS match_hand,
       (coalesce(pa.put_pre, 0) >= d.eff AND coalesce(pb.put_pre, 0) >= d.eff AND d.eff > 0) AS flip,
       (e.entrants > 2 AND t.last_pair = d.a || chr(0) || d.b) AS exempt,
       ha.cards AS hole_a, hb.cards AS hole_b
FROM dealt d
JOIN tours t ON t.tournament_id = d.tournament_id AND t.max_n = 2
JOIN ents e ON e.tournament_id = d.tournament_id
LEFT JOIN pre pa ON pa.hand_id = d.hand_id AND pa.player = d.a
LEFT JOIN pre pb ON pb.hand_id = d.hand_id AND pb.player = d.b
LEFT JOIN hole_cards ha ON ha.hand_id = d.hand_id AND ha.player = d.a
LEFT JOIN hole_cards hb ON hb.hand_id = d.hand_id AND hb.player = d.b
WHERE d.n = 2
ORDER BY d.hand_id
"""


def hu_hands(con: duckdb.DuckDBPyConnection, *, weak_pct: float, depth_bins: tuple[float, ...]) -> pl.DataFrame:
    """One row per hand of a heads-up match: ``a`` < ``b`` the players, ``eff_bb`` the effective stack in big
    blinds, ``bin`` its depth bin (edges ``depth_bins``), ``match_hand`` the hand's number in the match,
    ``flip``, ``weak`` (a weak flip), ``strength_min`` (the weaker hand's percentile, null if unknown) and
    ``exempt`` (the final match of a scheduled heads-up tournament); ``bin`` counts the edges at or below
    ``eff_bb``."""
    df = con.sql(HU_HANDS_SQL).pl()
    if df.is_empty():
        return df.drop("hole_a", "hole_b").with_columns(
            pl.lit(None, pl.Float64).alias("strength_min"), pl.lit(False).alias("weak"), pl.lit(0, pl.Int32).alias("bin"))
    sa = starting_hand_percentile(df.select(pl.col("hole_a").alias("hole"), "game"))
    sb = starting_hand_percentile(df.select(pl.col("hole_b").alias("hole"), "game"))
    df = df.drop("hole_a", "hole_b").with_columns(sa.alias("sa"), sb.alias("sb")).with_columns(
        strength_min=pl.when(pl.col("sa").is_null() | pl.col("sb").is_null()).then(None)
        .otherwise(pl.min_horizontal("sa", "sb")),
    ).drop("sa", "sb")
    df = df.with_columns(bin=pl.Series(np.searchsorted(np.asarray(depth_bins, float), df["eff_bb"].to_numpy(),
                                                       side="right").astype(np.int32)))
    return df.with_columns(weak=pl.col("flip") & pl.col("strength_min").fill_null(0.0).lt(weak_pct))


def pair_tests(hands: pl.DataFrame, *, prior_strength: float, alpha: float,
               min_depth_bb: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The weak-flip test of every pair (:func:`count_tests`) at depth, robust to the flippers themselves.

    Hands with an effective stack under ``min_depth_bb`` big blinds (push-or-fold: short stacks must
    shove) are left out of the test and counted apart (``short``). A first pass finds the pairs whose
    count is an outlier (q <= ``alpha``, :func:`pair_qvalues`), the second leaves their hands out of the
    population's rates and of every player's own baseline (each pair's own count stays), so that planted
    flips do not raise the rate the others are judged by. Returns as :func:`count_tests`, the pairs with ``short`` (weak
    flips under ``min_depth_bb``) and ``n_short`` (hands)."""
    h_all = hands.filter(~pl.col("exempt"))
    h = h_all.filter(pl.col("eff_bb") >= min_depth_bb)
    first, _ = count_tests(h, h, prior_strength=prior_strength)
    out = first.filter(pl.Series(pair_qvalues(first) <= alpha)).select("player", "opponent")
    base = h.join(out.rename({"player": "a", "opponent": "b"}), on=["a", "b"], how="anti")
    pairs, pop = count_tests(h, base, prior_strength=prior_strength)
    short = (h_all.filter(pl.col("eff_bb") < min_depth_bb).group_by("a", "b")
             .agg(short=pl.col("weak").sum().cast(pl.Int64), n_short=pl.len().cast(pl.Int64))
             .rename({"a": "player", "b": "opponent"}))
    return (pairs.join(short, on=["player", "opponent"], how="left")
            .with_columns(pl.col("short", "n_short").fill_null(0)), pop)


def pair_weights(pairs: pl.DataFrame) -> np.ndarray:
    """Each pair's weight in the weighted Benjamini–Hochberg procedure: its matches played together, rescaled
    to mean 1 over the pairs tested.

    Flipping is settling match after match between the same two accounts; how many matches two accounts
    play is fixed by who enters which tournament, not by the flips, so under the null it is independent of
    the pair's p-value, and the weighted procedure keeps the false-discovery rate while moving its budget to
    the pairs who meet again and again (Genovese, Roeder & Wasserman, Biometrika 2006; Roeder & Wasserman,
    Stat. Sci. 2009: :func:`detectors.stats.weighted_bh_pvalues` with the matches as its ``prior``)."""
    m = pairs["matches"].to_numpy().astype(float)
    return m * len(m) / m.sum() if len(m) and m.sum() > 0 else np.ones_like(m)


def pair_qvalues(pairs: pl.DataFrame) -> np.ndarray:
    """The q-values of the pairs' tests: Benjamini–Hochberg on the p-values weighted by :func:`pair_weights`."""
    w = pair_weights(pairs)
    return stats.bh_qvalues(stats.weighted_bh_pvalues(pairs["p_value"].to_numpy(), np.ones_like(w), prior=w))


def count_tests(h: pl.DataFrame, base: pl.DataFrame, *, prior_strength: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The weak-flip count of every pair against its players' own rate versus other opponents.

    Method: per depth bin, the population's weak-flip rate ``r_b`` over every non-exempt heads-up hand is
    a Beta prior of strength ``prior_strength`` hands; the two players' own weak flips ``k0`` in ``n0``
    hands against other opponents update it, and the pair's count in its ``n_b`` hands of that bin is
    binomial with that rate. Summed over bins the count is tested by its predictive tail
    (:func:`detectors.stats.predictive_count_tail`: a negative binomial with the plug-in mean and the
    rates' posterior variance).

    Returns (pairs: ``player``, ``opponent``, ``n``, ``k``, ``expected``, ``p_value``, ``matches``,
    ``flip_matches``, ``early``, ``deep``, ``tournaments``, ``own_n``; population: ``bin``, ``K``, ``N``, ``rate``)."""
    pop = base.group_by("bin").agg(K=pl.col("weak").sum(), N=pl.len()).with_columns(
        rate=((pl.col("K") + 0.5) / (pl.col("N") + 1.0)))
    pb = (h.group_by("a", "b", "bin").agg(k=pl.col("weak").sum(), n=pl.len())
          .join(base.group_by("a", "b", "bin").agg(kx=pl.col("weak").sum(), nx=pl.len()), on=["a", "b", "bin"],
                how="left").with_columns(pl.col("kx", "nx").fill_null(0)))
    long = pl.concat([base.select(player="a", bin="bin", weak="weak"), base.select(player="b", bin="bin", weak="weak")])
    tot = long.group_by("player", "bin").agg(kt=pl.col("weak").sum(), nt=pl.len())
    cells = (pb.join(tot.rename({"player": "a", "kt": "ka", "nt": "na"}), on=["a", "bin"], how="left")
             .join(tot.rename({"player": "b", "kt": "kb", "nt": "nb"}), on=["b", "bin"], how="left")
             .join(pop.select("bin", "rate"), on="bin", how="left")
             .with_columns(pl.col("ka", "kb", "na", "nb").fill_null(0), pl.col("rate").fill_null(0.5))
             .with_columns(pl.col("k", "n", "kx", "nx", "ka", "kb", "na", "nb").cast(pl.Int64))
             .with_columns(k0=pl.col("ka") + pl.col("kb") - 2 * pl.col("kx"),
                           n0=pl.col("na") + pl.col("nb") - 2 * pl.col("nx"))
             .with_columns(r=(prior_strength * pl.col("rate") + pl.col("k0")) / (prior_strength + pl.col("n0")),
                           s=prior_strength + pl.col("n0")))
    per = (cells.group_by("a", "b").agg(
        n=pl.col("n").sum(), k=pl.col("k").sum(), own_n=pl.col("n0").sum(),
        expected=(pl.col("n") * pl.col("r")).sum(),
        extra=(pl.col("n") * (pl.col("n") - 1) * pl.col("r") * (1 - pl.col("r")) / (pl.col("s") + 1)).sum()))
    desc = h.group_by("a", "b").agg(
        matches=pl.col("tournament_id").n_unique(),
        flip_matches=pl.col("tournament_id").filter(pl.col("weak")).n_unique(),
        early=pl.col("match_hand").filter(pl.col("weak")).median(),
        tournaments=pl.col("tournament_id").filter(pl.col("weak")).unique().sort())
    per = per.join(desc, on=["a", "b"]).sort("a", "b")
    p = stats.predictive_count_tail(per["k"].to_numpy(), per["expected"].to_numpy(), per["extra"].to_numpy())
    p = np.where(per["k"].to_numpy() > 0, p, 1.0)
    return per.rename({"a": "player", "b": "opponent"}).with_columns(p_value=pl.Series(p)).drop("extra"), pop.sort("bin")


__all__ = ["HU_HANDS_SQL", "hu_hands", "pair_qvalues", "pair_tests", "pair_weights"]
