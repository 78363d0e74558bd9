"""Bounty collusion's sparing test: bets and raises after the flop into a partner still in the pot, against the
player's own rate in the same tournament with other opponents in (:func:`sparing_counts`, :func:`sparing_tested`)."""

from __future__ import annotations

import numpy as np
import polars as pl

import duckdb
from detectors.features.gameplay.distributions import overdispersed_sum_sf

#: every postflop decision of a knockout tournament's hand dealt at least three-handed, once per other player
#: still in the pot who could still be bet into (not folded, not all in before the decision): the deciding
#: ``player``, that ``partner``, the ``tournament_id``, ``hand_id``, the ``cell`` (street, players left in the
#: hand 2 / 3 / 4+, a bet faced, the table 3-4 or 5+ dealt in, the pot raised before the flop, a check before
#: the decision on its street) and ``y`` (the decision a bet or raise)
SPARING_ROWS_SQL = """
WITH ko AS (SELECT h.hand_id, h.tournament_id, CASE WHEN h.n_players <= 4 THEN 's' ELSE 'f' END AS tsize
            FROM hands h JOIN tournaments t USING (tournament_id)
            WHERE t.bounty_kind <> 'none' AND h.n_players >= 3),
a AS (SELECT a.hand_id, a.seq, a.street, a.player, a.action, a.is_all_in, a.to_call, a.n_active, ko.tournament_id,
             ko.tsize FROM actions a JOIN ko USING (hand_id) WHERE a.action NOT LIKE 'post%'),
gone AS (SELECT hand_id, player, min(seq) AS gseq FROM a WHERE action = 'fold' OR is_all_in GROUP BY ALL),
inh AS (SELECT DISTINCT hand_id, player FROM a),
lp AS (SELECT hand_id, CASE WHEN bool_or(action = 'raise' AND street = 'preflop') THEN 'r' ELSE 'l' END AS pf
       FROM a GROUP BY ALL),
d AS (SELECT hand_id, seq, player, tournament_id, (action IN ('bet', 'raise'))::INT AS y,
             (count(*) FILTER (WHERE action = 'check') OVER (PARTITION BY hand_id, street ORDER BY seq
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) > 0)::INT::VARCHAR AS ck,
             street || least(greatest(n_active, 2), 4)::VARCHAR || (to_call > 0)::VARCHAR || tsize || pf || ck AS cell
      FROM a JOIN lp USING (hand_id) WHERE street <> 'preflop' AND action IN ('check', 'bet', 'call', 'raise', 'fold'))
SELECT d.hand_id, d.seq, d.player, o.player AS partner, d.tournament_id, d.cell, d.y
FROM d JOIN inh o ON o.hand_id = d.hand_id AND o.player <> d.player
LEFT JOIN gone g ON g.hand_id = o.hand_id AND g.player = o.player
WHERE g.gseq IS NULL OR g.gseq > d.seq
"""

#: the pair counts per (player, partner, tournament, hand, cell) of :data:`SPARING_ROWS_SQL`'s rows: decisions ``n``,
#: bets or raises ``k``
_PAIR_COUNTS = "player, partner, tournament_id, hand_id, cell, count(*) AS n, sum(y) AS k"
#: the player's distinct decisions per (player, tournament, hand, cell): ``hn``, ``hk``
_DECISION = "hand_id, seq, player, tournament_id, cell, y"
_OWN_COUNTS = "player, tournament_id, hand_id, cell, count(*) AS hn, sum(y) AS hk"

#: the hands seen from a player's seat (a hero's tables): the sparing test is not made on such a view
HERO_HANDS_SQL = "SELECT count(*) FROM hands WHERE hero IS NOT NULL"

#: the columns of :func:`sparing_tested`
SPARING_SCHEMA = {"player": pl.Utf8, "opponent": pl.Utf8, "sp_n": pl.Float64, "sp_k": pl.Float64,
                  "sp_e": pl.Float64, "sp_p": pl.Float64, "sp_min": pl.Float64, "sp_tournaments": pl.Int64,
                  "sp_hands": pl.Int64, "spare_hands": pl.List(pl.Utf8)}


def sparing_counts(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The sparing test's counts, made by DuckDB from :data:`SPARING_ROWS_SQL` (``con``: the warehouse, read
    through the window's views). Returns (pair counts: ``player``, ``partner``, ``tournament_id``, ``hand_id``,
    ``cell``, ``n``, ``k``; the player's own distinct decisions: ``player``, ``tournament_id``, ``hand_id``,
    ``cell``, ``hn``, ``hk``)."""
    rows = con.sql(SPARING_ROWS_SQL)
    pairs = rows.aggregate(_PAIR_COUNTS).pl().cast({"n": pl.Int64, "k": pl.Int64})
    own = rows.project(_DECISION).distinct().aggregate(_OWN_COUNTS).pl().cast({"hn": pl.Int64, "hk": pl.Int64})
    return pairs, own


def _icc(n: np.ndarray, k: np.ndarray, p: np.ndarray) -> float:
    """The intra-unit correlation of units of ``n`` decisions and ``k`` successes around the reference rates ``p``
    (a unit's count beta-binomial with variance n p (1 - p) (1 + (n - 1) rho)): the moment estimator
    sum((k - n p)^2 - n p (1 - p)) / sum(n (n - 1) p (1 - p)) (Williams, Applied Statistics 1982), in [1e-4, 0.5]."""
    v = n * p * (1 - p)
    den = float((v * (n - 1)).sum())
    if den <= 0:
        return 0.5
    return float(np.clip((((k - n * p) ** 2) - v).sum() / den, 1e-4, 0.5))


def sparing_rates(pairs: pl.DataFrame, own: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, float]]:
    """Each pair component's null rate and its Beta strength (see :func:`sparing_tested`). Returns (``pairs``
    with ``r``, ``s``; the population's ``rho_p``, ``rho_t``: the correlations between players and between
    tournaments)."""
    tc = own.group_by("player", "tournament_id", "cell").agg(Dn=pl.col("hn").sum(), Dk=pl.col("hk").sum())
    cell = tc.group_by("cell").agg(pc=(pl.col("Dk").sum() + 1) / (pl.col("Dn").sum() + 2))
    win = tc.group_by("player", "cell").agg(Wn=pl.col("Dn").sum(), Wk=pl.col("Dk").sum()).join(cell, on="cell")
    rho_p = _icc(*(win[c].to_numpy().astype(float) for c in ("Wn", "Wk")), win["pc"].to_numpy())
    s_p = (1 - rho_p) / rho_p
    # a unit (player, tournament, cell) against the player's window rate in the cell without that tournament
    u = tc.join(win, on=["player", "cell"]).with_columns(
        pw=((pl.col("Wk") - pl.col("Dk") + s_p * pl.col("pc")) / (pl.col("Wn") - pl.col("Dn") + s_p)))
    rho_t = _icc(*(u[c].to_numpy().astype(float) for c in ("Dn", "Dk")), u["pw"].to_numpy())
    s_t = (1 - rho_t) / rho_t
    pt = pairs.group_by("player", "partner", "tournament_id", "cell").agg(nt=pl.col("n").sum(), kt=pl.col("k").sum())
    pw = pt.group_by("player", "partner", "cell").agg(nw=pl.col("nt").sum(), kw=pl.col("kt").sum())
    t = pt.join(tc, on=["player", "tournament_id", "cell"]).join(win, on=["player", "cell"]).join(
        pw, on=["player", "partner", "cell"])
    # the player's window rate in the cell without this partner, shrunk to the population's; then the rate in this
    # tournament without this partner, shrunk to it: the Beta posterior (mean r, strength s)
    t = t.with_columns(rw=(pl.col("Wk") - pl.col("kw") + s_p * pl.col("pc")) / (pl.col("Wn") - pl.col("nw") + s_p))
    t = t.with_columns(s=(pl.col("Dn") - pl.col("nt")).clip(0, None) + s_t).with_columns(
        r=((pl.col("Dk") - pl.col("kt")).clip(0, None) + s_t * pl.col("rw")) / pl.col("s"))
    t = pairs.join(t.select("player", "partner", "tournament_id", "cell", "r", "s"),
                   on=["player", "partner", "tournament_id", "cell"])
    return t, {"rho_p": rho_p, "rho_t": rho_t}


def _pair_sigma2(t: pl.DataFrame) -> float:
    """The variance sigma^2 (logit scale) of a pair's effect from one tournament to the next, by moments: units
    (unordered pair, tournament) of ``t`` (the components of :func:`sparing_rates` with ``x``, ``y`` the pair),
    sigma^2 = sum((k - e)^2 - v) / sum(v^2) (Williams 1982), at least 0. Every pair of the window, gangs included
    (they can only raise it)."""
    u = t.group_by("x", "y", "tournament_id").agg(
        k=pl.col("k").sum(), e=(pl.col("n") * pl.col("r")).sum(), v=(pl.col("n") * pl.col("r") * (1 - pl.col("r"))).sum())
    den = float((u["v"] ** 2).sum()) if not u.is_empty() else 0.0
    return max(0.0, float(((u["k"] - u["e"]) ** 2 - u["v"]).sum()) / den) if den > 0 else 0.0


def _per_hand(t: pl.DataFrame) -> pl.DataFrame:
    """The components of :func:`sparing_rates` (with ``x``, ``y``) as one per (pair, tournament, hand): ``n`` 1,
    ``k`` 1 where either bet or raised into the other, ``r`` 1 - prod (1 - r)^n (the hand's chance of a bet under
    the own rates, known: ``s`` infinite)."""
    return t.group_by("x", "y", "tournament_id", "hand_id").agg(
        player=pl.col("x").first(), partner=pl.col("y").first(), cell=pl.lit("hand"), n=pl.lit(1, pl.Int64),
        k=(pl.col("k").sum() > 0).cast(pl.Int64),
        r=(1 - (pl.col("n") * (1 - pl.col("r")).log()).sum().exp()).clip(1e-6, 1 - 1e-6), s=pl.lit(np.inf))


def sparing_tested(pairs: pl.DataFrame, own: pl.DataFrame, *, pair_effect: bool = True,
                   per_hand: bool = False) -> pl.DataFrame:
    """Per unordered pair: the bets and raises after the flop into each other, and the exact lower tail.

    ``pairs``, ``own``: :func:`sparing_counts`. Method: each decision of a player with the partner still in the
    pot (and able to be bet into) is a bet or raise at the player's own rate in the same tournament and cell
    (street, players left in the hand, a bet faced, a check before it on the street, the pot raised before the
    flop, the table's size: 3-4 or 5 or more dealt in; tables dealt two-handed have no other opponent) with other
    opponents in: the player's decisions of that tournament and cell at which this partner was not in
    (leave-the-pair-out), under a Beta prior centred on the player's own rate in the cell over the window without
    this partner (itself shrunk to the population's cell rate). The prior strengths are the population's own, from
    the intra-class correlations of its units by moments (between players per cell, between tournaments per player
    and cell: :func:`_icc`), never from pairs or labels. A pair that plays a long match in one tournament is held
    to what each of them did in that tournament against the others. Each component is beta-binomial (the
    posterior predictive; Gelman et al., Bayesian Data Analysis, 2013, ch. 6); the pair's decisions in one
    tournament (both directions) share a logit-normal effect u ~ N(0, sigma^2) whose variance is the population's
    own between (pair, tournament) units (:func:`_pair_sigma2`; ``pair_effect=False``: 0), integrated exactly by
    :func:`overdispersed_sum_sf` (Breslow & Clayton 1993): the hands of one match are not independent decisions
    (a hand checked down is several checks; two players' table dynamics last the match). The pair's count is the
    sum of both directions', its lower tail P(K <= ``sp_k``) exact (the upper tail of the decisions without a bet,
    rates 1 - r). ``sp_min``: the smallest attainable p, every decision without a bet (fixed by the opportunities,
    for Tarone's selection). ``per_hand``: the test over hands instead of decisions (a hand counts when either bet
    or raised into the other, at its chance under the own rates, :func:`_per_hand`), measured and not the
    detector's (docs/measurements.md, 2026-12-08). Returns :data:`SPARING_SCHEMA` (``sp_e`` the expected bets, ``sp_tournaments``, ``sp_hands`` with decisions)."""
    if pairs.is_empty():
        return pl.DataFrame(schema=SPARING_SCHEMA)
    t, fit = sparing_rates(pairs, own)
    lo, hi = pl.min_horizontal("player", "partner"), pl.max_horizontal("player", "partner")
    t = t.with_columns(x=lo, y=hi)
    if per_hand:
        t = _per_hand(t)
    fit["sigma2"] = _pair_sigma2(t) if pair_effect else 0.0
    sigma = float(np.sqrt(fit["sigma2"]))
    g = t.group_by(pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(
        sp_n=pl.col("n").sum().cast(pl.Float64), sp_k=pl.col("k").sum().cast(pl.Float64),
        sp_e=(pl.col("n") * pl.col("r")).sum(), sp_tournaments=pl.col("tournament_id").n_unique().cast(pl.Int64),
        sp_hands=pl.col("hand_id").n_unique().cast(pl.Int64),
        spare_hands=pl.col("hand_id").filter(pl.col("k") == 0).unique().sort(),
    ).sort("player", "opponent").with_row_index("_g")
    c = t.join(g.select("_g", x="player", y="opponent"), on=["x", "y"])
    c = c.with_columns(_b=(pl.struct("_g", "tournament_id").rank("dense") - 1).cast(pl.Int64))
    gi, b, n = c["_g"].to_numpy().astype(np.int64), c["_b"].to_numpy(), c["n"].to_numpy().astype(float)
    q, s = 1.0 - c["r"].to_numpy(), c["s"].to_numpy()
    p = overdispersed_sum_sf(gi, b, n, q, s, (g["sp_n"] - g["sp_k"]).to_numpy(), sigma)
    p_min = overdispersed_sum_sf(gi, b, n, q, s, g["sp_n"].to_numpy(), sigma)
    return g.with_columns(pl.Series("sp_p", np.clip(p, 1e-300, 1.0)), pl.Series("sp_min", np.clip(p_min, 1e-300, 1.0))
                          ).select(list(SPARING_SCHEMA))
