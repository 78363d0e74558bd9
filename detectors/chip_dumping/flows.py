"""The receiver tests (late folds, receiver aggression) and the deviation flow: the chips a giver lost to a
receiver in the hands where its play deviates, against its own rate in such hands against others."""

from __future__ import annotations

import os

import duckdb
import polars as pl

from detectors import stats
from detectors.features import gameplay as gp


#: what seat ``a`` lost to seat ``b`` in one hand (``s``/``w`` of gameplay.seat_nets_cte): a loser's loss shared among
#: the winners in proportion to their wins, as gameplay.chip_flow (negative where ``a`` won from ``b``)
PAIR_LOSS_BB = """CASE WHEN a.net_bb < 0 AND b.net_bb > 0 THEN -a.net_bb * b.net_bb / w.won
            WHEN a.net_bb > 0 AND b.net_bb < 0 THEN b.net_bb * a.net_bb / w.won ELSE 0.0 END"""


DEVIATION_FLOW_SQL = """
-- per (giver, receiver, hand) of _dev_{tag}: the chips the giver lost to the receiver in the hand, net of what it won
-- from them (a loser's loss shared among the winners in proportion to their wins, as gameplay.chip_flow)
WITH """ + gp.seat_nets_cte("_dev_{tag}") + f"""
SELECT d.player, d.opponent, d.hand_id, {PAIR_LOSS_BB} AS net_bb
FROM _dev_{{tag}} d JOIN s a ON a.hand_id = d.hand_id AND a.player = d.player
JOIN s b ON b.hand_id = d.hand_id AND b.player = d.opponent JOIN w ON w.hand_id = d.hand_id
"""


def deviation_flow(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame, *,
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
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "met_hands": pl.UInt32, "dev_hands": pl.UInt32,
            "dev_loss_hands": pl.UInt32, "dev_flow_bb": pl.Float64, "dev_exp_bb": pl.Float64}
    if dec.is_empty() or con is None:
        return pl.DataFrame(schema=cols)
    made = pl.col("strength") >= (late_fold_min_strength if late_fold_min_strength is not None else -1.0)
    late = (pl.col("hu") & ~pl.col("preflop") & pl.col("facing") & pl.col("street").is_in(["turn", "river"])
            & pl.col("fold") & made)
    junk = pl.col("commit") & (pl.col("sbin") <= 0)
    per = (dec.filter(pl.col("opponent").is_not_null())
           .group_by("player", "opponent", "hand_id").agg(dev=(junk | late).fill_null(False).any()))
    tag = f"{os.getpid()}_{id(per)}"
    con.register(f"_dev_{tag}", per.filter(pl.col("dev")).select("player", "opponent", "hand_id"))
    try:
        fl = con.sql(DEVIATION_FLOW_SQL.format(tag=tag)).pl()
    finally:
        con.unregister(f"_dev_{tag}")
    per = per.join(fl, on=["player", "opponent", "hand_id"], how="left").with_columns(pl.col("net_bb").fill_null(0.0))
    g = per.group_by("player", "opponent").agg(
        met_hands=pl.len().cast(pl.UInt32), dev_hands=pl.col("dev").sum().cast(pl.UInt32),
        dev_loss_hands=(pl.col("dev") & (pl.col("net_bb") > 0)).sum().cast(pl.UInt32),
        dev_flow_bb=pl.col("net_bb").filter(pl.col("dev")).sum())
    # A's own rate: the chips lost in its deviation hands per hand met, against everyone but B
    tot = g.group_by("player").agg(_n=pl.col("met_hands").sum(), _f=pl.col("dev_flow_bb").sum())
    g = g.join(tot, on="player").with_columns(
        dev_exp_bb=pl.col("met_hands") * (pl.col("_f") - pl.col("dev_flow_bb"))
        / (pl.col("_n") - pl.col("met_hands")).cast(pl.Float64).clip(1.0))
    return g.select(list(cols)).cast(cols)


POSTFLOP_BINS = ("street", "facing", "sbin")


def receiver_tests(dec: pl.DataFrame, *, alpha: float = 0.01,
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
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8}
    if dec.is_empty():
        return pl.DataFrame(schema=cols)
    post = ~pl.col("preflop") & pl.col("hu")
    aggr = stats.robust_own_baseline(dec, "aggr", where=post, bins=POSTFLOP_BINS, side="greater", alpha=alpha)
    # B's decisions towards A: swap the roles so the row is keyed (giver A, receiver B)
    aggr = aggr.rename({"player": "opponent", "opponent": "player"})
    late_spot = post & pl.col("facing") & pl.col("street").is_in(["turn", "river"])
    if late_fold_min_strength is not None:
        # only made hands: the folds of weak hands are what every player does, and their spots (the most frequent,
        # and weighted 1 / (1 - r) in the score test where r is high) only add noise to the feeder's surrendered
        # strong hands
        late_spot = late_spot & (pl.col("strength") >= late_fold_min_strength)
    late = stats.robust_own_baseline(dec, "fold", where=late_spot, bins=("street", "sbin"), side="greater", alpha=alpha,
                                     rare_tail=rare_tail)

    def named(t: pl.DataFrame, name: str) -> pl.DataFrame:
        return t.select("player", "opponent", pl.col("n").alias(f"{name}_n"), pl.col("observed").alias(f"{name}_obs"),
                        pl.col("expected").alias(f"{name}_exp"), pl.col("p_value").alias(f"{name}_p"),
                        pl.col("n0").cast(pl.Float64).alias(f"{name}_n0"))

    return named(aggr, "raggr").join(named(late, "lfold"), on=["player", "opponent"], how="full", coalesce=True)
