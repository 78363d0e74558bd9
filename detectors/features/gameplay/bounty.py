"""Knockout (bounty) tournaments: the spots where a short-stacked bounty target is in, per pair and per
player, and the priors of each player's looseness there."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from scipy import stats as _st

from detectors import stats
from detectors.features.gameplay.cards import starting_hand_percentile
from detectors.features.gameplay.decisions import score_test_terms

BOUNTY_SPOTS_SQL = """
-- the knockout hands with an all-in, their targets and each player's row in them are built apart, each table cut to
-- those hands before it is joined and a player's actions in a hand aggregated once; the spots are then one join of
-- the targets with the players of their hand (the hash tables hold those hands only and no wide row is carried
-- through a chain of joins: the query fits a small memory limit)
WITH ko AS (
    SELECT DISTINCT s.hand_id FROM seats s WHERE s.bounty IS NOT NULL AND s.bounty > 0
), allin AS (
    SELECT a.hand_id, a.player AS target, min(a.seq) AS s_c
    FROM actions a JOIN ko USING (hand_id) WHERE a.is_all_in GROUP BY ALL
), acts AS (
    -- per player and hand: the first fold, whether and when they first put chips in voluntarily
    SELECT hand_id, player, min(seq) FILTER (WHERE action = 'fold') AS fold_seq,
           bool_or(action IN ('call', 'bet', 'raise')) AS vol,
           min(seq) FILTER (WHERE action IN ('call', 'bet', 'raise')) AS first_vol
    FROM actions SEMI JOIN allin USING (hand_id) GROUP BY ALL
), post AS (
    SELECT ai.hand_id, ai.target, a.player, count(*) AS post_bets
    FROM allin ai JOIN actions a ON a.hand_id = ai.hand_id AND a.seq > ai.s_c
         AND a.street <> 'preflop' AND a.action IN ('bet', 'raise')
    GROUP BY ALL
), st AS (
    SELECT hand_id, player, dealt_in, stack_start FROM seats SEMI JOIN allin USING (hand_id)
), players AS (
    -- per (hand, player dealt in): the stack, the actions' summary and the hole cards
    SELECT s.hand_id, s.player, s.stack_start, v.vol, v.fold_seq, v.first_vol, hc.cards AS hole
    FROM st s
    LEFT JOIN acts v ON v.hand_id = s.hand_id AND v.player = s.player
    LEFT JOIN (SELECT hand_id, player, cards FROM hole_cards SEMI JOIN allin USING (hand_id)) hc
           ON hc.hand_id = s.hand_id AND hc.player = s.player
    WHERE s.dealt_in
), targets AS (
    -- per (hand, target): the hand, the target's stack, the board's length and the bounty's winner
    SELECT ai.hand_id, ai.target, ai.s_c, h.tournament_id, h.game,
           coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS bb, ts.stack_start AS t_stack,
           coalesce(bd.n_cards, 0) >= 3 AS saw_flop, bo.winner AS bounty_winner
    FROM allin ai
    JOIN hands h ON h.hand_id = ai.hand_id
    JOIN st ts ON ts.hand_id = ai.hand_id AND ts.player = ai.target
    LEFT JOIN (SELECT hand_id, len(cards) AS n_cards FROM boards SEMI JOIN allin USING (hand_id) WHERE run = 1) bd
           ON bd.hand_id = ai.hand_id
    LEFT JOIN (SELECT hand_id, eliminated, any_value(winner) AS winner FROM bounties SEMI JOIN allin USING (hand_id)
               GROUP BY ALL) bo ON bo.hand_id = ai.hand_id AND bo.eliminated = ai.target
)
SELECT t.hand_id, t.tournament_id, t.target, s.player,
       (coalesce(s.vol, false) AND coalesce(s.fold_seq, 2147483647) > s.first_vol) AS contested,
       coalesce(p.post_bets, 0) AS post_bets, t.saw_flop, t.bounty_winner,
       s.stack_start::DOUBLE / t.bb AS stack_bb, t.t_stack::DOUBLE / t.bb AS target_bb, s.hole, t.game
FROM targets t
JOIN players s ON s.hand_id = t.hand_id AND s.player <> t.target
LEFT JOIN post p ON p.hand_id = t.hand_id AND p.target = t.target AND p.player = s.player
WHERE coalesce(s.fold_seq, 2147483647) > t.s_c OR coalesce(s.first_vol, 2147483647) < coalesce(s.fold_seq, 2147483647)
"""


def bounty_spots(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per (knockout hand, all-in target, other player who could contest it).

    ``contested``: the player put chips in voluntarily (a fold may come later, in the side pot);
    ``post_bets``: their bets/raises after the target's all-in, after the flop
    (0 = the side pot was checked down); ``strength``: preflop all-in equity
    of their hole cards against one random hand (Hold'em, cards known).
    """
    df = con.sql(BOUNTY_SPOTS_SQL).pl()
    if df.is_empty():
        return df.with_columns(pl.lit(None, pl.Float64).alias("strength")).drop("hole")
    return df.drop("hole").with_columns(starting_hand_percentile(df))


def bounty_pairs(spots: pl.DataFrame, best: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per unordered pair: joint contests of all-in targets against independence, check-downs, bounties.

    ``best`` (optional, ``player``, ``best``: :func:`bounty_strongest_partner`): a pair does not count the spots in
    which the strongest partner of one of them (not the other) could contest too: a bystander of a gang's spots
    is not tested on them (the explaining-away of :func:`bounty_unshadowed`).

    Each player's contest rate (shrunk to the population's) is rescaled per
    spot so the rates of the players who could contest sum to the number who
    did (a tiny shove is called by more players: no pair gains from that);
    the expected joint contests of a pair is the sum over spots of the product
    of the two rescaled rates.
    """
    cols = ["player", "opponent", "spots", "joint", "expected", "weak_joint", "weak_expected",
            "joint_postflop", "checked_down", "bounties_won", "tournaments", "hands"]
    if spots.is_empty():
        return pl.DataFrame(schema={c: pl.Float64 for c in cols})
    s = _spot_rates(spots)
    j = _joint_spots(s, best)
    j = j.with_columns(
        wide_a=(pl.col("contested") & (pl.col("strength") < 0.5)).cast(pl.Int64),
        wide_b=(pl.col("contested_r") & (pl.col("strength_r") < 0.5)).cast(pl.Int64),
        known_a=pl.col("strength").is_not_null().cast(pl.Int64),
        known_b=pl.col("strength_r").is_not_null().cast(pl.Int64),
    )
    out = j.group_by("player", "opponent").agg(
        spots=pl.len(),
        wide_a=pl.col("wide_a").sum(),
        wide_a_n=pl.col("known_a").sum(),
        wide_b=pl.col("wide_b").sum(),
        wide_b_n=pl.col("known_b").sum(),
        joint=pl.col("joint").sum(),
        expected=pl.col("e").sum(),
        var=(pl.col("e") * (1 - pl.col("e"))).sum(),
        weak_joint=pl.col("weak").sum(),
        weak_expected=pl.col("e_weak").sum(),
        joint_postflop=pl.col("jp").sum(),
        checked_down=pl.col("cd").sum(),
        bounties_won=pl.col("won").sum(),
        tournaments=pl.col("tournament_id").filter(pl.col("joint")).unique().sort(),
        hands=pl.col("hand_id").filter(pl.col("joint")).unique().sort(),
        won_hands=pl.col("hand_id").filter(pl.col("won")).unique().sort(),
        cd_hands=pl.col("hand_id").filter(pl.col("cd")).unique().sort(),
    )
    return _with_wide_call_tests(out, s)


def _spot_rates(spots: pl.DataFrame) -> pl.DataFrame:
    """The spots of :func:`bounty_pairs` with each player's contest rate (``rate``, shrunk to the population's),
    rescaled per spot (``rate_s``) so that the rates of the players who could contest sum to the number who did,
    and the player's share of weak hands among their contests (``weak_rate``, 0.25 when unknown)."""
    me = spots.group_by("player").agg(n=pl.len(), k=pl.col("contested").cast(pl.Int64).sum())
    a, b = stats.fit_beta_prior(me["k"].to_numpy(), me["n"].to_numpy())
    me = me.with_columns(rate=(pl.col("k") + a) / (pl.col("n") + a + b))
    weak_me = spots.filter(pl.col("contested") & pl.col("strength").is_not_null()).group_by("player").agg(
        weak_rate=((pl.col("strength") < 0.5).cast(pl.Float64).sum() + 0.5) / (pl.len() + 2.0)
    )
    s = spots.join(me.select("player", "rate"), on="player").join(weak_me, on="player", how="left")
    s = s.with_columns(pl.col("weak_rate").fill_null(0.25))
    s = s.with_columns(
        rate_s=(pl.col("rate") * pl.col("contested").cast(pl.Float64).sum().over(["hand_id", "target"])
                / pl.col("rate").sum().over(["hand_id", "target"])).clip(0.0, 0.99)
    )
    return s


def _joint_spots(s: pl.DataFrame, best: pl.DataFrame | None) -> pl.DataFrame:
    """Per spot and unordered pair (``player`` < ``opponent``) both could contest: did both (``joint``), expected
    (``e``, the product of the rescaled rates), weak joint contests, seen flops, check-downs, bounties won; spots
    shadowed by a strongest partner (``best``) left out."""
    left = s.select("hand_id", "tournament_id", "target", "player", "contested", "post_bets", "saw_flop",
                    "bounty_winner", "rate_s", "strength", "weak_rate")
    right = left.select("hand_id", "target", pl.col("player").alias("opponent"), pl.col("contested").alias("contested_r"),
                        pl.col("post_bets").alias("post_bets_r"), pl.col("rate_s").alias("rate_s_r"),
                        pl.col("strength").alias("strength_r"), pl.col("weak_rate").alias("weak_rate_r"))
    j = left.join(right, on=["hand_id", "target"]).filter(pl.col("player") < pl.col("opponent"))
    if best is not None and not best.is_empty():
        # (spot, player, their strongest partner) where that partner could contest the same target
        sb = s.select("hand_id", "target", "player").join(best, on="player").join(
            s.select("hand_id", "target", pl.col("player").alias("best")), on=["hand_id", "target", "best"])
        for side, other in (("player", "opponent"), ("opponent", "player")):
            j = j.join(sb.rename({"player": side}), on=["hand_id", "target", side], how="left").filter(
                pl.col("best").is_null() | (pl.col("best") == pl.col(other))).drop("best")
    j = j.with_columns(
        joint=pl.col("contested") & pl.col("contested_r"),
        e=pl.col("rate_s") * pl.col("rate_s_r"),
    )
    j = j.with_columns(
        weak=pl.col("joint") & ((pl.col("strength") < 0.5) | (pl.col("strength_r") < 0.5)).fill_null(False),
        e_weak=pl.col("joint").cast(pl.Float64)
        * (1 - (1 - pl.col("weak_rate")) * (1 - pl.col("weak_rate_r"))),
        jp=pl.col("joint") & pl.col("saw_flop"),
        cd=pl.col("joint") & pl.col("saw_flop") & (pl.col("post_bets") + pl.col("post_bets_r") == 0),
        won=pl.col("joint") & pl.col("bounty_winner").is_in([None]).not_()
        & ((pl.col("bounty_winner") == pl.col("player")) | (pl.col("bounty_winner") == pl.col("opponent"))).fill_null(False),
    )
    return j


def _with_wide_call_tests(out: pl.DataFrame, s: pl.DataFrame) -> pl.DataFrame:
    """``out`` with the wide-call tests: each player's contests with a bottom-half hand when the other is in the
    spot too (``wide_a``, ``wide_b``), against the same player's rate in every other spot (own baseline,
    :func:`detectors.stats.baseline_tail`): ``wide_a_p``, ``wide_b_p`` and the baselines ``wide_a_base``,
    ``wide_b_base``."""
    # each player's contests with a bottom-half hand when the other is in the spot too,
    # against the same player's rate in every other spot (own baseline)
    s_known = s.filter(pl.col("strength").is_not_null()).with_columns(
        wide=(pl.col("contested") & (pl.col("strength") < 0.5)).cast(pl.Int64)
    )
    tot = s_known.group_by("player").agg(N=pl.len(), K=pl.col("wide").sum())
    if tot.is_empty():
        return out.with_columns(pl.lit(None, pl.Float64).alias(c) for c in ("wide_a_p", "wide_b_p", "wide_a_base", "wide_b_base"))
    pa, pb = stats.fit_beta_prior(tot["K"].to_numpy(), tot["N"].to_numpy())
    out = out.join(tot.rename({"player": "player", "N": "Na", "K": "Ka"}), on="player", how="left").join(
        tot.rename({"player": "opponent", "N": "Nb", "K": "Kb"}), on="opponent", how="left"
    )
    f = lambda c: out[c].fill_null(0).to_numpy().astype(float)  # noqa: E731
    pa_ = stats.baseline_tail(f("wide_a"), f("wide_a_n"), f("Ka") - f("wide_a"), f("Na") - f("wide_a_n"), pa, pb)
    pb_ = stats.baseline_tail(f("wide_b"), f("wide_b_n"), f("Kb") - f("wide_b"), f("Nb") - f("wide_b_n"), pa, pb)
    return out.with_columns(
        pl.Series("wide_a_p", pa_, nan_to_null=True),
        pl.Series("wide_b_p", pb_, nan_to_null=True),
        wide_a_base=(pl.col("Ka") - pl.col("wide_a") + pa) / (pl.col("Na") - pl.col("wide_a_n") + pa + pb),
        wide_b_base=(pl.col("Kb") - pl.col("wide_b") + pa) / (pl.col("Nb") - pl.col("wide_b_n") + pa + pb),
    )


BOUNTY_PRESENCE_SQL = """
-- preflop decisions facing a bet in knockout hands while a short-stacked bounty target (<= $max_bb big blinds
-- at the start of the hand) is still in, one row per other player still in the hand at that moment (the 'partner').
-- The hole cards and the first folds are joined to the decisions and the seats before these meet (no wide row is
-- carried into an outer join's hash table), and the targets still in are summed up by a min and a max (which spill,
-- where a list of them would not): the query fits a small memory limit
WITH ko AS (
    SELECT DISTINCT hand_id FROM seats WHERE bounty IS NOT NULL AND bounty > 0
), folds AS (
    -- (only the knockout hands are read: the rest would be grouped and never joined)
    SELECT hand_id, player, min(seq) AS fold_seq FROM actions SEMI JOIN ko USING (hand_id)
    WHERE action = 'fold' GROUP BY ALL
), seated AS (
    -- the players dealt in to a knockout hand, with their first fold (never: the greatest seq)
    SELECT s.hand_id, s.player, s.bounty, s.stack_start, coalesce(f.fold_seq, 2147483647) AS fold_seq
    FROM seats s SEMI JOIN ko USING (hand_id)
    LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
    WHERE s.dealt_in
), targets AS (
    SELECT s.hand_id, s.player AS target, s.fold_seq AS t_fold
    FROM seated s JOIN hands h USING (hand_id)
    WHERE s.bounty > 0 AND s.stack_start <= $max_bb * h.big_blind
), dec AS (
    SELECT a.hand_id, h.tournament_id, a.seq, a.player, a.action <> 'fold' AS cont,
           a.to_call::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS to_call_bb, h.game, ps.position
    FROM actions a SEMI JOIN ko USING (hand_id) JOIN hands h USING (hand_id)
    LEFT JOIN seats ps ON ps.hand_id = a.hand_id AND ps.player = a.player
    WHERE a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise') AND a.to_call > 0
), live AS (
    -- the targets still in at the decision, by their least and greatest name: a target other than a partner is in
    -- unless both are that partner
    SELECT d.hand_id, d.seq, min(t.target) AS t_min, max(t.target) AS t_max
    FROM dec d JOIN targets t ON t.hand_id = d.hand_id AND t.target <> d.player AND t.t_fold > d.seq
    GROUP BY ALL
), pairs AS (
    SELECT d.hand_id, d.tournament_id, d.seq, d.player, s.player AS partner, d.cont, d.to_call_bb, d.game, d.position
    FROM dec d
    JOIN live l ON l.hand_id = d.hand_id AND l.seq = d.seq
    JOIN seated s ON s.hand_id = d.hand_id AND s.player <> d.player AND s.fold_seq > d.seq
    WHERE NOT (l.t_min = s.player AND l.t_max = s.player)
)
SELECT p.*, hc.cards AS hole
FROM pairs p
LEFT JOIN (SELECT hand_id, player, cards FROM hole_cards SEMI JOIN live USING (hand_id)) hc
       ON hc.hand_id = p.hand_id AND hc.player = p.player
"""


# the deciding player's seat position in four cells: blinds, early, middle, late (seats.position)
POSITION_BIN = {"SB": 0, "BB": 0, "UTG": 1, "UTG1": 1, "UTG2": 1, "LJ": 2, "HJ": 2, "CO": 3, "BTN": 3}
# cells of the bounty own-baseline tests beyond hand strength and price: the position (see presence_parts)
BOUNTY_CONTEXT_BINS: tuple[str, ...] = ("pos",)
# ridge of the players' looseness offsets in the bounty own-baseline tests (see bounty_offset_priors; None: no offset)
BOUNTY_LOOSENESS_TAU: float | None = 30.0


def bounty_presence(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0) -> pl.DataFrame:
    """One row per (preflop decision facing a bet with a short bounty target still in, other player still in).

    ``cont``: the decision was a call or raise (not a fold); ``strength``: the
    percentile of the starting hand (Hold'em, cards known); ``cbin``: the price
    (to call, in big blinds: <= 2, <= 6, <= 15, more); ``pos``: the deciding
    player's position (:data:`POSITION_BIN`: blinds 0, UTG-UTG2 1, LJ/HJ 2, CO/BTN
    3; null where the seat line gives none). The 'partner' is every
    other player not yet folded at that moment who is not the only target.
    """
    df = con.sql(BOUNTY_PRESENCE_SQL, params={"max_bb": float(max_bb)}).pl()
    if df.is_empty():
        return df.drop("hole").with_columns(pl.lit(None, pl.Float64).alias("strength"), pl.lit(None, pl.Int8).alias("sbin"),
                                            pl.lit(None, pl.Int8).alias("cbin"), pl.lit(None, pl.Int8).alias("pos"))
    return df.drop("hole").with_columns(starting_hand_percentile(df)).with_columns(
        sbin=(pl.col("strength") * 5).floor().clip(0, 4).cast(pl.Int8),
        cbin=pl.when(pl.col("to_call_bb") <= 2).then(0).when(pl.col("to_call_bb") <= 6).then(1)
        .when(pl.col("to_call_bb") <= 15).then(2).otherwise(3).cast(pl.Int8),
        pos=pl.col("position").replace_strict(POSITION_BIN, default=None, return_dtype=pl.Int8),
    )


def _cell_counts(d: pl.DataFrame, keys: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The counts the bounty own-baseline tests read, from rows (one per decision and partner, ``_y`` the
    continuation): per (player, partner, ``keys``) the pair's rows ``n`` and continuations ``k``, and per (player,
    ``keys``) the distinct decisions ``Dn`` and continuations ``Dk`` among them (each decision once, whoever was in).
    :class:`detectors.features.gameplay.bounty_counts.BountyPresenceTable` counts the same in DuckDB."""
    pair = d.group_by(["player", "partner", *keys]).agg(n=pl.len(), k=pl.col("_y").sum())
    dec = d.unique(["hand_id", "seq"]).group_by(["player", *keys]).agg(Dn=pl.len(), Dk=pl.col("_y").sum())
    return pair, dec


def _bounty_cells(d: pl.DataFrame | None, bins: list[str], looseness_tau: float | None,
                  counts: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> pl.DataFrame:
    """The cells of the bounty own-baseline tests (:func:`presence_parts`, :func:`bounty_wide_calls`): per
    (player, partner, cell) the pair's decisions ``n`` and continuations ``k`` (``d``'s ``_y``), the player's in the
    cell against everyone ``N``, ``K`` (a decision once per other player still in), ``Dn`` distinct decisions and
    ``Dk`` continuations among them (each decision once, whoever was in), the cell's Beta prior ``pa``, ``pb`` (its
    own-looseness offset applied when ``looseness_tau`` is set) and ``scale`` = Dn / N, which turns the per-opponent
    counts back into decisions. ``counts``: :func:`_cell_counts` of the rows over ``bins`` when they were counted
    elsewhere (DuckDB), ``d`` then unread."""
    pair, dec = counts if counts is not None else _cell_counts(d, bins)
    # the player's rows in the cell: the sum of the pair counts over the partners (the same integers as a count)
    me = pair.group_by(["player", *bins]).agg(N=pl.col("n").sum(), K=pl.col("k").sum())
    pri = stats.beta_priors_by_bin(dec, bins, "Dk", "Dn")
    t = pair.join(me, on=["player", *bins]).join(dec, on=["player", *bins]).join(pri, on=bins)
    if looseness_tau is not None:
        t = _offset_rates(t, bounty_offset_priors(dec, pri, bins, tau=looseness_tau))
    return t.with_columns(scale=pl.col("Dn") / pl.col("N"))


#: the columns of :func:`presence_parts`' pairs (with ``sigma2``)
PRESENCE_PAIR_COLS = {"player": pl.Utf8, "partner": pl.Utf8, "n": pl.Float64, "observed": pl.Float64,
                      "expected": pl.Float64, "base_strength": pl.Float64, "score_u": pl.Float64,
                      "score_var": pl.Float64, "rate_pair": pl.Float64, "rate_own": pl.Float64, "z": pl.Float64,
                      "p_value": pl.Float64, "tournaments": pl.List(pl.Utf8), "hands": pl.List(pl.Utf8)}
#: the columns of :func:`presence_parts`' components
PRESENCE_COMPONENT_COLS = {"player": pl.Utf8, "partner": pl.Utf8, "bin_n": pl.Float64, "bin_r": pl.Float64,
                           "bin_s": pl.Float64, "bin_t": pl.Utf8}


def presence_parts(counts: list, *, looseness_tau: float | None = BOUNTY_LOOSENESS_TAU,
                   tournament_effect: bool = True) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per ordered pair (player, partner): the player's continuations with the partner still in, against its own
    baseline, and the components of the count's exact null.

    ``counts``: the four items of
    :meth:`~detectors.features.gameplay.bounty_counts.BountyPresenceTable.presence_counts` as a list, emptied here:
    the per-tournament counts are freed once the components are made, whoever called. Returns the ordered pairs
    (:data:`PRESENCE_PAIR_COLS` and ``sigma2``, the players' tournament effect, :func:`bounty_tournament_effect`; 0
    with ``tournament_effect=False`` or counts without tournaments) and the components
    (:data:`PRESENCE_COMPONENT_COLS`: per pair, tournament ``bin_t`` and cell the decisions ``bin_n``, the own rate
    ``bin_r`` and its Beta posterior strength ``bin_s``), in the order of the join that makes them.

    Method: decisions are binned by starting-hand strength (quintile), price and the context cells of the counts
    (:data:`BOUNTY_CONTEXT_BINS`: the player's position). Position sets preflop ranges (early position plays
    tighter than the cut-off and button: Sklansky & Miller, "No Limit Hold 'em: Theory and Practice", 2006), and a
    partner who has yet to act counts as still in, so the decisions with a given partner in come from earlier
    positions than the player's other decisions: pooled over positions the own rate is biased. The expected count
    is the sum over the pair's decisions of the player's rate in the same bin when *other* players were still in
    (empirical-Bayes shrunk to the population's rate in the bin). A decision appears once per other player still
    in, so the baseline's sample is counted in decisions, not rows (scaled by the player's distinct decisions over
    rows). ``p_value``: the score test for one multiplier on the player's rates (as :func:`own_baseline`),
    one-sided, a normal approximation (the exact tail:
    :func:`~detectors.features.gameplay.bounty_tests.presence_tail`).
    ``looseness_tau`` (None: off): the population's prior of each bin is moved to the player's own looseness over
    all bins, without the pair's decisions (:func:`bounty_offset_priors`, ridge ``tau``), so that where a player
    has few decisions a loose player is not held to the population's rate."""
    pt, dt, where, tour = counts
    counts.clear()
    cols = {**PRESENCE_PAIR_COLS, "sigma2": pl.Float64}
    if pt.is_empty():
        return pl.DataFrame(schema=cols), pl.DataFrame(schema=PRESENCE_COMPONENT_COLS)
    bins = [c for c in pt.columns if c not in ("player", "partner", "tournament_id", "n", "k")]
    t = _bounty_cells(None, bins, looseness_tau, counts=(pt.group_by(["player", "partner", *bins]).agg(pl.col("n", "k").sum()),
                                                         dt.group_by(["player", *bins]).agg(pl.col("Dn", "Dk").sum())))
    t = t.with_columns(n0=(pl.col("N") - pl.col("n")) * pl.col("scale"), k0=(pl.col("K") - pl.col("k")) * pl.col("scale"))
    t = t.with_columns(
        r=((pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb"))).clip(1e-4, 1 - 1e-4),
        s=pl.col("n0") + pl.col("pa") + pl.col("pb"),
    )
    t = t.with_columns(score_test_terms())
    # the tournament effect (bounty_tournament_effect), then the exact null's components per (tournament, bin)
    sigma2 = bounty_tournament_effect(None, t, bins, counts=(pt, dt)) if tour and tournament_effect else 0.0
    del dt
    comps = pt.select("player", "partner", "tournament_id", *bins, nt="n").join(
        t.select("player", "partner", *bins, "r", "s"), on=["player", "partner", *bins]).select(
        "player", "partner", bin_n=pl.col("nt").cast(pl.Float64), bin_r="r", bin_s=pl.col("s").cast(pl.Float64),
        bin_t=pl.col("tournament_id").cast(pl.Utf8))
    del pt  # the counts per tournament (millions of rows at a 2.4M-hand window) not held further
    g = t.group_by(["player", "partner"]).agg(
        n=pl.col("n").sum().cast(pl.Float64), observed=pl.col("k").sum().cast(pl.Float64), expected=pl.col("e").sum(),
        u=pl.col("u").sum(), v=pl.col("v").sum(), n0=pl.col("n0").sum(), k0=pl.col("k0").sum(),
        # the baseline's weight (Beta posterior strength), averaged over the pair's decisions
        base_strength=(pl.col("n") * pl.col("s")).sum() / pl.col("n").sum(),
    )
    del t
    g = g.rename({"u": "score_u", "v": "score_var"})
    z = (g["score_u"] / g["score_var"].sqrt()).to_numpy()
    p = np.where(np.isfinite(z), np.clip(_st.norm.sf(z), 1e-300, 1.0), np.nan)
    g = g.with_columns(
        pl.Series("z", z), pl.Series("p_value", p, nan_to_null=True),
        rate_pair=pl.col("observed") / pl.col("n"),
        rate_own=pl.col("k0") / pl.col("n0").clip(1e-9, None),
        sigma2=pl.lit(float(sigma2)),
    ).join(where, on=["player", "partner"], how="left").select(list(cols))
    return g, comps


def bounty_tournament_effect(d: pl.DataFrame | None, t: pl.DataFrame, bins: list[str],
                             counts: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> float:
    """The variance sigma^2 of a player's looseness from one tournament to the next (logit scale), by moments.

    A player's rate of continuing against short bounty targets is not the same in every tournament (the table, the
    stage they reach, their stack's path). A pair that meets in one tournament has all its decisions there, so the
    presence count of an honest pair is overdispersed and a binomial tail is liberal (docs/measurements.md,
    2026-12-06, for the figures). The model is
    a random intercept per (player, tournament) on the logit of every cell rate, u ~ N(0, sigma^2) (Breslow &
    Clayton, JASA 1993): to first order the count of a unit with own-rate variances v_i has variance sum v_i +
    sigma^2 (sum v_i)^2 beyond the baseline's own estimation error, so sigma^2 = sum over units of ((k - e)^2 -
    v - v_base) / sum v^2 (the moment estimator of extra-binomial variation of Williams, Applied Statistics 1982),
    units = (player, tournament) over the player's distinct decisions, each against the player's own rate in the
    cell without that tournament (the same Beta prior and looseness offset as the test). It never looks at pairs or
    labels; a gang's own tournaments can only raise it (a more conservative test). ``d``: the rows with ``_y``,
    ``tournament_id`` and the cell columns ``bins``; ``t``: :func:`_bounty_cells` (``K``, ``N``, ``scale``,
    ``pa``, ``pb`` per player and cell); ``counts``: :func:`_cell_counts` of the rows over ``tournament_id`` and
    ``bins`` when they were counted elsewhere, ``d`` then unread."""
    me = t.group_by(["player", *bins]).agg(pl.col("K", "N", "scale").first(), pl.col("pa", "pb").mean())
    pt, dt = counts if counts is not None else _cell_counts(d, ["tournament_id", *bins])
    rows_u = pt.group_by(["player", "tournament_id", *bins]).agg(Nu=pl.col("n").sum(), Ku=pl.col("k").sum())
    dec_u = dt.select("player", "tournament_id", *bins, nu="Dn", ku="Dk")
    u = dec_u.join(rows_u, on=["player", "tournament_id", *bins]).join(me, on=["player", *bins]).with_columns(
        s=(pl.col("N") - pl.col("Nu")) * pl.col("scale") + pl.col("pa") + pl.col("pb"))
    u = u.with_columns(r=(((pl.col("K") - pl.col("Ku")) * pl.col("scale") + pl.col("pa")) / pl.col("s")).clip(1e-4, 1 - 1e-4))
    u = u.group_by("player", "tournament_id").agg(
        k=pl.col("ku").sum(), e=(pl.col("nu") * pl.col("r")).sum(), v=(pl.col("nu") * pl.col("r") * (1 - pl.col("r"))).sum(),
        vb=(pl.col("nu") * (pl.col("nu") - 1) * pl.col("r") * (1 - pl.col("r")) / (pl.col("s") + 1)).sum())
    den = float((u["v"] ** 2).sum()) if not u.is_empty() else 0.0
    if den <= 0:
        return 0.0
    num = float(((u["k"] - u["e"]) ** 2 - u["v"] - u["vb"]).sum())
    return max(0.0, num / den)


def bounty_offset_priors(dec: pl.DataFrame, pri: pl.DataFrame, bins: list[str], *, tau: float = 30.0,
                         iters: int = 8) -> pl.DataFrame:
    """Each player's looseness over the population's cells: per player an offset ``delta`` on the logit scale.

    The own-baseline tests shrink a player's rate in a cell (hand strength x price x position) towards the
    population's prior for the cell (:func:`detectors.stats.beta_priors_by_bin`). Most of a player's cells hold a
    few decisions, and where the players' rates in a cell show no spread beyond the binomial noise the prior's
    strength is the maximum (1e4): there the "own" rate is the population's. For a loose player (who continues
    more often than the population in cell after cell) it is too low, and two loose players who share tables look
    as if they loosen up for each other (the excess of small p-values sits with the loosest pairs:
    docs/measurements.md, 2026-12-06). The model is a logistic model with the cells as fixed effects and one effect per player (the
    multilevel model of Gelman & Hill, "Data Analysis Using Regression and Multilevel/Hierarchical Models", 2007,
    ch. 14), fitted per player with the cells' population log-odds as offsets: ``delta`` solves
    sum_c Dn_c expit(logit m_c + delta) + tau delta = sum_c Dk_c over the player's decisions (``dec``: ``Dn``,
    ``Dk`` per player and bin; ``pri``: ``pa``, ``pb`` per bin, m = pa / (pa + pb)), with ``tau`` the precision
    of a N(0, 1 / tau) prior on delta (a ridge: a player with few decisions stays at the population's rates;
    the default of ``tau`` is the detector's, :class:`detectors.bounty_collusion.BountyCollusionDetector`).
    Newton's method. Chip dumping's presence test carries the same player effect in another form
    (:func:`detectors.chip_dumping.presence_tests`, ``offset_a``: a closed-form offset from the player's smoothed
    rate without the partner, computed in DuckDB); the two are kept apart only because each was tuned and
    measured with its own, and one of them should replace the other once that is measured on both detectors.
    Returns player, delta, info (the penalised Fisher information, for the one-step
    leave-pair-out update of :func:`_offset_rates`).
    """
    x = dec.join(pri, on=bins).with_columns(lm=(pl.col("pa") / (pl.col("pa") + pl.col("pb"))).clip(1e-4, 1 - 1e-4))
    x = x.with_columns(lm=(pl.col("lm") / (1 - pl.col("lm"))).log())
    # the players in sorted order and each row's index among them (np.unique's, without sorting Python strings)
    players = x["player"].unique().sort()
    code = (x["player"].rank("dense") - 1).cast(pl.Int64).to_numpy()
    n, k, lm = (x[c].cast(pl.Float64).to_numpy() for c in ("Dn", "Dk", "lm"))
    delta = np.zeros(len(players))
    kk = np.bincount(code, weights=k, minlength=len(players))
    for _ in range(iters):
        mu = 1.0 / (1.0 + np.exp(-(lm + delta[code])))
        info = np.bincount(code, weights=n * mu * (1 - mu), minlength=len(players)) + tau
        u = kk - np.bincount(code, weights=n * mu, minlength=len(players)) - tau * delta
        delta = np.clip(delta + u / info, -6.0, 6.0)
    mu = 1.0 / (1.0 + np.exp(-(lm + delta[code])))
    info = np.bincount(code, weights=n * mu * (1 - mu), minlength=len(players)) + tau
    return pl.DataFrame({"player": players, "delta": delta, "info": info})


def _offset_rates(t: pl.DataFrame, off: pl.DataFrame) -> pl.DataFrame:
    """The prior of each (player, partner, bin) row centred on the player's own looseness, the pair left out.

    ``t``: rows with ``n``, ``k`` (the pair's decisions and continuations in the bin), ``pa``, ``pb`` (population
    prior); ``off``: :func:`bounty_offset_priors`. The player's offset is refitted without the pair's decisions by
    one Newton step from the full fit (delta - U_pair / (info - J_pair), the leave-one-out approximation of the
    influence function): a gang's extra calls do not make its members look loose. Returns ``t`` with ``pa``,
    ``pb`` replaced (same strength, mean expit(logit m + delta)).
    """
    t = t.join(off, on="player", how="left").with_columns(pl.col("delta").fill_null(0.0), pl.col("info").fill_null(1.0))
    m = (pl.col("pa") / (pl.col("pa") + pl.col("pb"))).clip(1e-4, 1 - 1e-4)
    lm = (m / (1 - m)).log()
    t = t.with_columns(_mu=1.0 / (1.0 + (-(lm + pl.col("delta"))).exp()))
    t = t.with_columns(_u=(pl.col("k") - pl.col("n") * pl.col("_mu")).sum().over("player", "partner"),
                       _j=(pl.col("n") * pl.col("_mu") * (1 - pl.col("_mu"))).sum().over("player", "partner"))
    d = (pl.col("delta") - pl.col("_u") / (pl.col("info") - pl.col("_j")).clip(1e-3, None)).clip(-6.0, 6.0)
    mean = 1.0 / (1.0 + (-(lm + d)).exp())
    return t.with_columns(pa=mean * (pl.col("pa") + pl.col("pb")), pb=(1 - mean) * (pl.col("pa") + pl.col("pb"))).drop(
        "delta", "info", "_mu", "_u", "_j")
