"""Bounty collusion's third family: a pair started at one table of its knockout tournaments more often than the
site's random draw seats two entrants together; beside it, for the case, how they spared each other after the flop
(bets and raises into the other against each player's own rate).

Two statistics:

- *starting tables*: over the knockout tournaments both started (first hands), the count started at one table
  against a Poisson-binomial of each tournament's chance that two of its entrants share a starting table (sum over
  its starting tables of k (k - 1) over N (N - 1), the population's own seats): the exact upper tail ``cs_p`` and
  its smallest attainable value ``cs_min`` (every one at one table); tournaments of one table are left out;
- *postflop passivity*, per direction: the player's bets and raises after the flop with the other still in the pot
  against the player's own rate in the same cell (street, players left, a bet faced) with everyone else in (the
  pair's decisions left out, shrunk by ``tau`` decisions to the population's cell rate); the exact lower tail of
  the Poisson-binomial of those rates (``pa_ab_p``, ``pa_ba_p``) and its smallest attainable value (no bet).

The family's test is the starting tables alone (``seat_p`` = ``cs_p``, ``seat_min`` = ``cs_min``: its null is the
site's random draw, exact), a discrete family (Tarone's selection, BH) in
:meth:`~detectors.bounty_collusion.detector.BountyCollusionDetector.family_q`. The passivity is not in the test:
its own-rate null does not hold for every pair (an honest pair of world b's seed 2047 that met in one tournament
bets 15 times in 137 decisions into each other against 44.5 predicted: docs/measurements.md, 2026-12-07, issue 32).
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

# each player's first hand's table in every knockout tournament (the starting table), with the tournament's chance
# that two of its entrants start at one table
STARTS_SQL = """
WITH s AS (SELECT s.player, h.tournament_id, arg_min(h.table_name, h.started_at) AS tab
           FROM seats s JOIN hands h USING (hand_id) JOIN tournaments t USING (tournament_id)
           WHERE s.dealt_in AND t.bounty_kind <> 'none' GROUP BY ALL),
k AS (SELECT tournament_id, tab, count(*) AS k FROM s GROUP BY ALL),
q AS (SELECT tournament_id, sum(k * (k - 1)) / (sum(k) * (sum(k) - 1)) AS q FROM k GROUP BY ALL)
SELECT s.*, q.q FROM s JOIN q USING (tournament_id) WHERE q.q < 1
"""

# postflop decisions in knockout tournaments (no post) with each other player still in the pot at that decision
POSTFLOP_SQL = """
WITH a AS (SELECT a.* FROM actions a JOIN hands h USING (hand_id) JOIN tournaments t USING (tournament_id)
           WHERE t.bounty_kind <> 'none' AND a.action NOT LIKE 'post%'),
f AS (SELECT hand_id, player, min(seq) AS fseq FROM a WHERE action = 'fold' GROUP BY ALL),
inh AS (SELECT DISTINCT hand_id, player FROM a)
SELECT d.hand_id, d.seq, d.player, o.player AS opponent,
       (d.action IN ('bet', 'raise'))::INT AS aggr,
       d.street || least(greatest(d.n_active, 2), 4)::VARCHAR || (d.to_call > 0)::VARCHAR AS cell
FROM a d JOIN inh o ON o.hand_id = d.hand_id AND o.player <> d.player
LEFT JOIN f ON f.hand_id = o.hand_id AND f.player = o.player
WHERE d.street <> 'preflop' AND d.action IN ('check', 'bet', 'call', 'raise', 'fold')
  AND (f.fseq IS NULL OR f.fseq > d.seq)
"""

# any hand seen from a player's seat: the starting tables are then the hero's, not the site's draw
HERO_HANDS_SQL = "SELECT count(*) FROM hands WHERE hero IS NOT NULL"

SEAT_COLS = ("cs_n", "cs_k", "cs_p", "cs_min", "pa_n", "pa_k", "pa_e", "pa_ab_p", "pa_ba_p", "seat_p", "seat_min")


def poisson_binomial(q: list[float] | np.ndarray) -> np.ndarray:
    """The distribution of a sum of independent Bernoulli(q_i): P(K = 0..n), by the exact convolution."""
    dist = np.zeros(len(q) + 1)
    dist[0] = 1.0
    for x in q:
        dist[1:] = dist[1:] * (1.0 - x) + dist[:-1] * x
        dist[0] *= 1.0 - x
    return dist


def poisson_binomial_sf(k: int, q: list[float] | np.ndarray) -> float:
    """P(K >= k) for K a sum of independent Bernoulli(q_i)."""
    return float(min(1.0, poisson_binomial(q)[k:].sum()))


def starting_tables(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per unordered pair (``player`` < ``opponent``) of the knockout tournaments' starting tables: ``cs_n``
    (tournaments both started), ``cs_k`` (at one table), ``cs_p`` (the exact upper tail under random seating) and
    ``cs_min`` (its smallest attainable value: the product of the tournaments' chances)."""
    s = con.sql(STARTS_SQL).pl()
    pairs = s.join(s.select("tournament_id", "player", "tab"), on="tournament_id", suffix="_o").filter(
        pl.col("player") < pl.col("player_o"))
    agg = pairs.group_by(pl.col("player"), pl.col("player_o").alias("opponent")).agg(
        cs_n=pl.len(), cs_k=(pl.col("tab") == pl.col("tab_o")).sum(), qs=pl.col("q"),
        cs_min=pl.col("q").log().sum().exp())
    p = [1.0 if k == 0 else poisson_binomial_sf(k, qs) for k, qs in zip(agg["cs_k"].to_list(), agg["qs"].to_list())]
    return agg.drop("qs").with_columns(cs_p=pl.Series(p, dtype=pl.Float64))


def passivity_directions(con: duckdb.DuckDBPyConnection, tau: float = 5.0) -> pl.DataFrame:
    """Per ordered pair (``player`` facing ``opponent`` in the pot): ``n`` decisions after the flop, ``k`` bets or
    raises, ``e`` expected from the own rates (module docstring), ``p`` the exact lower tail and ``p_min`` its
    smallest attainable value (P(K = 0))."""
    d = con.sql(POSTFLOP_SQL).pl()
    if d.is_empty():
        return pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8, "n": pl.UInt32, "k": pl.Int64,
                                    "e": pl.Float64, "p": pl.Float64, "p_min": pl.Float64})
    one = d.unique(["hand_id", "seq"])
    own = one.group_by("player", "cell").agg(n=pl.len(), k=pl.col("aggr").sum())
    cell = one.group_by("cell").agg(pr=pl.col("aggr").mean())
    pc = d.group_by("player", "opponent", "cell").agg(pn=pl.len(), pk=pl.col("aggr").sum())
    d = d.join(own, on=["player", "cell"]).join(pc, on=["player", "opponent", "cell"]).join(cell, on="cell")
    r = ((pl.col("k") - pl.col("pk") + tau * pl.col("pr")) / (pl.col("n") - pl.col("pn") + tau)).clip(0.001, 0.99)
    a = d.with_columns(r=r).group_by("player", "opponent").agg(
        n=pl.len(), k=pl.col("aggr").sum(), e=pl.col("r").sum(), rs=pl.col("r"))
    p, pmin = [], []
    for k, rs in zip(a["k"].to_list(), a["rs"].to_list()):
        dist = poisson_binomial(rs)
        p.append(float(min(1.0, dist[: k + 1].sum())))
        pmin.append(float(dist[0]))
    return a.drop("rs").with_columns(p=pl.Series(p, dtype=pl.Float64), p_min=pl.Series(pmin, dtype=pl.Float64))


def seated_pairs(con: duckdb.DuckDBPyConnection, tau: float = 5.0) -> pl.DataFrame:
    """Per unordered pair that started a knockout tournament of several tables (whatever the tables: which pairs are
    tested never depends on the outcome): :data:`SEAT_COLS` (``pa_n``, ``pa_k``, ``pa_e`` summed over both
    directions; a direction without decisions left out of ``seat_p``)."""
    cs = starting_tables(con)
    pa = passivity_directions(con, tau)
    ab = pa.select("player", "opponent", ab_n="n", ab_k="k", ab_e="e", pa_ab_p="p", ab_min="p_min")
    ba = pa.select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"), ba_n="n", ba_k="k",
                   ba_e="e", pa_ba_p="p", ba_min="p_min")
    t = cs.join(ab, on=["player", "opponent"], how="left").join(ba, on=["player", "opponent"], how="left")
    # the test is the starting tables alone (an exact null); the passivity is the case's context only
    return t.with_columns(
        pa_n=(pl.col("ab_n").fill_null(0) + pl.col("ba_n").fill_null(0)).cast(pl.Int64),
        pa_k=(pl.col("ab_k").fill_null(0) + pl.col("ba_k").fill_null(0)).cast(pl.Int64),
        pa_e=pl.col("ab_e").fill_null(0.0) + pl.col("ba_e").fill_null(0.0),
        seat_p=pl.col("cs_p"), seat_min=pl.col("cs_min"),
    ).select("player", "opponent", *SEAT_COLS)
