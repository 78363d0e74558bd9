"""The receiver tests (late folds, receiver aggression) and the deviation flow: the chips a giver lost to a
receiver in the hands where its play deviates, against its own rate in such hands against others."""

from __future__ import annotations

import os

import duckdb
import polars as pl

from detectors import stats
from detectors.chip_dumping.cells import as_relation, pair_cells
from detectors.features import gameplay as gp


#: what seat ``a`` lost to seat ``b`` in one hand (``s``/``w`` of gameplay.seat_nets_cte): a loser's loss shared among
#: the winners in proportion to their wins, as gameplay.chip_flow (negative where ``a`` won from ``b``)
PAIR_LOSS_BB = """CASE WHEN a.net_bb < 0 AND b.net_bb > 0 THEN -a.net_bb * b.net_bb / w.won
            WHEN a.net_bb > 0 AND b.net_bb < 0 THEN b.net_bb * a.net_bb / w.won ELSE 0.0 END"""


DEVIATION_FLOW_SQL = """
-- per (giver, receiver, hand) of the decisions _dev_{tag}: whether the giver's play deviates there (a weak hand's chips
-- put in, the junk test's spots, or a made hand folded to the receiver's bet heads-up on the turn or river, the late
-- fold test's), and in those hands the chips the giver lost to the receiver, net of what it won from them (a loser's
-- loss shared among the winners in proportion to their wins, as gameplay.chip_flow); summed per ordered pair
WITH per AS (
    SELECT player, opponent, hand_id,
           bool_or(coalesce((commit AND sbin <= 0) OR (hu AND NOT preflop AND facing AND street IN ('turn', 'river')
                            AND fold AND strength >= $made), false)) AS dev
    FROM _dev_{tag} WHERE opponent IS NOT NULL GROUP BY ALL
), devh AS (SELECT DISTINCT hand_id FROM per WHERE dev), """ + gp.seat_nets_cte("devh") + f""", fl AS (
    SELECT d.player, d.opponent, d.hand_id, {PAIR_LOSS_BB} AS net_bb
    FROM per d JOIN s a ON a.hand_id = d.hand_id AND a.player = d.player
    JOIN s b ON b.hand_id = d.hand_id AND b.player = d.opponent JOIN w ON w.hand_id = d.hand_id WHERE d.dev
)
SELECT per.player, per.opponent, count(*)::UINTEGER AS met_hands, count(*) FILTER (WHERE dev)::UINTEGER AS dev_hands,
       count(*) FILTER (WHERE dev AND fl.net_bb > 0)::UINTEGER AS dev_loss_hands,
       coalesce(sum(fl.net_bb ORDER BY per.hand_id) FILTER (WHERE dev), 0.0)::DOUBLE AS dev_flow_bb,
       coalesce(sum(fl.net_bb * fl.net_bb ORDER BY per.hand_id) FILTER (WHERE dev), 0.0)::DOUBLE AS dev_flow_sq
FROM per LEFT JOIN fl USING (player, opponent, hand_id)
GROUP BY per.player, per.opponent ORDER BY per.player, per.opponent
"""


def deviation_flow(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame | duckdb.DuckDBPyRelation | None, *,
                   late_fold_min_strength: float | None = 0.5) -> pl.DataFrame:
    """Per ordered pair (giver A, receiver B): the chips that moved A -> B in the hands where A's play deviates.

    The deviation hands are the spots the count tests look at, cards known: A
    puts chips in against B with a weak hand (strength < 0.3, the junk
    commitment test's spots) or folds a made hand (strength at least
    ``late_fold_min_strength``) to B's bet heads-up on the turn or river (the
    late-fold test's). ``dev_flow_bb``: the net chips A lost to B in those
    hands; ``dev_loss_hands``: how many of them A lost to B; ``dev_exp_bb``:
    what A's own rate predicts, the chips A loses in such hands per hand met
    against everyone else (``met_hands``: hands in which A made a decision
    against B) times the hands A met B. A feeder whose honest hands against
    its receiver won back more than it dumped has a negative net flow over
    all their hands but not in these: the dump hands are where the chips
    moved. Where the cards are unknown (player view) there are no such hands.

    Parameters
    ----------
    con : the warehouse (the seats' nets). dec : the heads-up decisions, a DuckDB relation on ``con``
    (:func:`detectors.features.gameplay.cached_decision_relation`) or a Polars frame; every per-hand row is
    counted and summed inside DuckDB (:data:`DEVIATION_FLOW_SQL`), only the pairs come back.
    late_fold_min_strength : the made hands of the late-fold spots (None: every strength).

    Returns
    -------
    player, opponent, met_hands, dev_hands, dev_loss_hands, dev_flow_bb, ``dev_flow_sq`` (the sum of the squared
    per-hand losses in the deviation hands), dev_exp_bb, and A's against everyone but B: ``dev_met0`` (hands met),
    ``dev_flow0``, ``dev_sq0``."""
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "met_hands": pl.UInt32, "dev_hands": pl.UInt32,
            "dev_loss_hands": pl.UInt32, "dev_flow_bb": pl.Float64, "dev_flow_sq": pl.Float64,
            "dev_exp_bb": pl.Float64, "dev_met0": pl.Float64, "dev_flow0": pl.Float64, "dev_sq0": pl.Float64}
    rel = as_relation(dec, con) if con is not None else None
    if rel is None:
        return pl.DataFrame(schema=cols)
    tag = f"{os.getpid()}_{id(rel)}"
    con.register(f"_dev_{tag}", rel)
    try:
        made = -1.0 if late_fold_min_strength is None else float(late_fold_min_strength)
        g = con.sql(DEVIATION_FLOW_SQL.format(tag=tag), params={"made": made}).pl()
    finally:
        con.unregister(f"_dev_{tag}")
    # A's own rate: the chips lost in its deviation hands per hand met, against everyone but B (with their squares:
    # the chips-moved test's variance, detectors.chip_dumping.moved)
    tot = g.group_by("player").agg(_n=pl.col("met_hands").sum(), _f=pl.col("dev_flow_bb").sum(),
                                   _q=pl.col("dev_flow_sq").sum())
    g = g.join(tot, on="player").with_columns(
        dev_met0=(pl.col("_n") - pl.col("met_hands")).cast(pl.Float64),
        dev_flow0=pl.col("_f") - pl.col("dev_flow_bb"), dev_sq0=pl.col("_q") - pl.col("dev_flow_sq"),
    ).with_columns(dev_exp_bb=pl.col("met_hands") * pl.col("dev_flow0") / pl.col("dev_met0").clip(1.0))
    return g.select(list(cols)).cast(cols)


#: per ordered pair (loser, winner) over the hands read: the chips the loser lost to the winner (a loser's loss shared
#: among the winners in proportion to their wins, as gameplay.chip_flow), their squares per hand and the hands
EXCHANGE_FLOW_SQL = "WITH " + gp.seat_nets_cte() + """
SELECT l.player, x.player AS opponent, count(*)::BIGINT AS hands,
       sum(-l.net_bb * x.net_bb / w.won ORDER BY l.hand_id)::DOUBLE AS flow_bb,
       sum((l.net_bb * x.net_bb / w.won) * (l.net_bb * x.net_bb / w.won) ORDER BY l.hand_id)::DOUBLE AS flow_sq
FROM s l JOIN s x ON l.hand_id = x.hand_id AND l.net_bb < 0 AND x.net_bb > 0
JOIN w ON w.hand_id = l.hand_id
GROUP BY ALL ORDER BY ALL
"""


def exchange_flow(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per ordered pair (giver A, receiver B): the chips A lost to B per hand in which chips moved between them, with
    their squares, and the same of A against everyone else (the chips-moved test where the cards are unknown,
    :func:`~detectors.chip_dumping.moved.exchange_moved_p`).

    Parameters
    ----------
    con : the warehouse (read through the detector's window: ``seats``, ``hands``).

    Returns
    -------
    player (A), opponent (B), ``xch_hands`` (the hands in which one of them lost chips to the other), ``xch_loss_hands``
    (those A lost), ``xch_flow_bb`` (the chips A lost to B in them, net of what A won from B), ``xch_flow_sq`` (the sum
    of the squared per-hand flows), and A's against everyone but B: ``xch_hands0``, ``xch_flow0``, ``xch_sq0``;
    ``xch_exp_bb``, what A's own rate predicts (A's chips lost per such hand against the others times the pair's
    hands). Method: the hands are those of :func:`~detectors.features.gameplay.pairs.chip_flow` (every hand both were
    dealt in where one lost and the other won, whatever the street and whoever acted against whom: a dump by shoves
    into a field moves chips without a heads-up decision), summed once per (loser, winner) by DuckDB; a hand of A's
    against B is either one A lost to B or one B lost to A (never both), so the pair's hands, sums and squares are the
    two directions' added, the loss counted negative where A won."""
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "xch_hands": pl.Float64, "xch_loss_hands": pl.Float64,
            "xch_flow_bb": pl.Float64, "xch_flow_sq": pl.Float64, "xch_hands0": pl.Float64, "xch_flow0": pl.Float64,
            "xch_sq0": pl.Float64, "xch_exp_bb": pl.Float64}
    g = con.sql(EXCHANGE_FLOW_SQL).pl()
    if g.is_empty():
        return pl.DataFrame(schema=cols)
    rev = g.select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                   pl.col("hands").alias("_bh"), pl.col("flow_bb").alias("_bf"), pl.col("flow_sq").alias("_bq"))
    t = g.join(rev, on=["player", "opponent"], how="full", coalesce=True).with_columns(
        xch_loss_hands=pl.col("hands").fill_null(0).cast(pl.Float64),
        xch_hands=(pl.col("hands").fill_null(0) + pl.col("_bh").fill_null(0)).cast(pl.Float64),
        xch_flow_bb=pl.col("flow_bb").fill_null(0.0) - pl.col("_bf").fill_null(0.0),
        xch_flow_sq=pl.col("flow_sq").fill_null(0.0) + pl.col("_bq").fill_null(0.0),
    ).sort("player", "opponent")
    tot = t.group_by("player").agg(_n=pl.col("xch_hands").sum(), _f=pl.col("xch_flow_bb").sum(),
                                   _q=pl.col("xch_flow_sq").sum())
    t = t.join(tot, on="player").with_columns(
        xch_hands0=pl.col("_n") - pl.col("xch_hands"), xch_flow0=pl.col("_f") - pl.col("xch_flow_bb"),
        xch_sq0=pl.col("_q") - pl.col("xch_flow_sq"),
    ).with_columns(xch_exp_bb=pl.col("xch_hands") * pl.col("xch_flow0") / pl.col("xch_hands0").clip(1.0))
    return t.select(list(cols)).cast(cols)


POSTFLOP_BINS = ("street", "facing", "sbin")
LATE_FOLD_BINS = ("street", "sbin")


def receiver_tests(dec: pl.DataFrame | duckdb.DuckDBPyRelation | None, *, alpha: float = 0.01,
                   late_fold_min_strength: float | None = 0.5, rare_tail: str = "predictive") -> pl.DataFrame:
    """Two heads-up postflop own-baseline tests per ordered pair (giver A, receiver B), cards known.

    *receiver aggression* (``raggr_*``): B bets or raises into A, heads-up
    after the flop, more often than B does against everyone else on the same
    street, facing a bet or not, with a hand of the same strength (score test
    of :func:`detectors.stats.robust_own_baseline`, one-sided "greater"). A
    dump needs the receiver to put the feeder to a decision; B's baseline is
    B's play against the whole population, so it is rich even when A's is
    not (a feeder who sits almost only with its receivers).

    *late folds* (``lfold_*``): A folds to B's bets heads-up on the turn or
    river more often than A's own rate at the same street and hand strength
    (the feeder folds whatever it holds, strong hands included). The
    all-streets fold test of the pair features mixes in the preflop and flop
    spots where a feeder calls with any two cards, and so points the wrong way.
    The late-fold test's rare-event floor is ``rare_tail`` (see
    :func:`detectors.stats.robust_own_baseline`; "predictive": the own
    rate's uncertainty carried into the tail, as for the junk test).
    Only made hands count (``late_fold_min_strength``, what A knew: the share
    of random holdings A's hand beats on the board; None: every strength): a
    dump in a quarter of the hands is a handful of surrendered strong hands,
    rare events for an honest player, and is found by counting them, while the
    weak hands' folds, frequent for everyone and weighted 1 / (1 - r) by the
    score test, drown them (the sparse-signal argument for tail counts over
    means, e.g. Donoho & Jin, *Ann. Statist.* 32, 2004). On nine tuning
    populations (mixed 224, 225, 270-275; honest 276) the planted feeders'
    late-fold p fell (0.0046 -> 1e-7 on 13 spots, 0.016 -> 0.0027 on 9,
    8e-7 -> 6e-17) and one more group was flagged (37 -> 38 of 40: strength
    0.25, 788 heads-up hands, q 0.014 -> 0.003); the same cases otherwise, no
    unlabelled pair's late-fold p below 1e-3 before or after, the honest
    population still without a flag. At 0.65 the new group was lost again.

    Both follow the own-baseline tests of Mazrooei, Archibald & Bowling (AAAI
    2013): the decision is judged with the cards known against the player's
    own decisions in the same spot. Returns player (A), opponent (B) and for
    each test ``_n``, ``_obs``, ``_exp``, ``_p`` and ``_n0`` (the baseline's
    decisions in the pair's bins).

    ``dec``: the heads-up decisions, a DuckDB relation (:func:`detectors.features.gameplay.cached_decision_relation`)
    or a Polars frame; each test's decisions are counted per pair and cell inside DuckDB
    (:func:`~detectors.chip_dumping.cells.pair_cells`) and tested from those counts
    (:func:`detectors.stats.own_baseline_from_counts`).
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8}
    rel = as_relation(dec)
    if rel is None:
        return pl.DataFrame(schema=cols)
    post = "hu AND NOT preflop"
    aggr = stats.own_baseline_from_counts(pair_cells(rel, "aggr", post, POSTFLOP_BINS), POSTFLOP_BINS, side="greater",
                                   alpha=alpha)
    # B's decisions towards A: swap the roles so the row is keyed (giver A, receiver B)
    aggr = aggr.rename({"player": "opponent", "opponent": "player"})
    late_spot = f"{post} AND facing AND street IN ('turn', 'river')"
    late_rel = rel
    if late_fold_min_strength is not None:
        # only made hands: the folds of weak hands are what every player does, and their spots (the most frequent,
        # and weighted 1 / (1 - r) in the score test where r is high) only add noise to the feeder's surrendered
        # strong hands (the strength is a value, bound by the expression API rather than written into the SQL)
        late_rel = rel.filter(duckdb.ColumnExpression("strength") >= duckdb.ConstantExpression(float(late_fold_min_strength)))
    late_cells = pair_cells(late_rel, "fold", late_spot, LATE_FOLD_BINS)
    late = stats.own_baseline_from_counts(late_cells, LATE_FOLD_BINS, side="greater", alpha=alpha, rare_tail=rare_tail)

    def named(t: pl.DataFrame, name: str) -> pl.DataFrame:
        return t.select("player", "opponent", pl.col("n").alias(f"{name}_n"), pl.col("observed").alias(f"{name}_obs"),
                        pl.col("expected").alias(f"{name}_exp"), pl.col("p_value").alias(f"{name}_p"),
                        pl.col("n0").cast(pl.Float64).alias(f"{name}_n0"))

    return named(aggr, "raggr").join(named(late, "lfold"), on=["player", "opponent"], how="full", coalesce=True)
