"""Per ordered pair tables: decisions and value given summed per pair, hands together, chip flow, and the SQL
that the evidence of a signal shows."""

from __future__ import annotations

import duckdb
import polars as pl

from detectors import stats
from detectors.features.gameplay.decisions import VALUE_CAP, hu_decisions, own_baseline

def name_codes(*cols: pl.Series, ordered: bool = True) -> pl.Series:
    """The distinct values of ``cols`` (player names, hand ids), sorted: a value's integer key is its position.

    Group-bys and joins on these keys run on integers rather than text, and the keys sort and compare as the names
    do (order-preserving: the smaller name has the smaller key), so ``min``/``max``/sorts over keys give the rows the
    names would. ``ordered=False``: in order of first appearance (cheaper; for keys that are only joined on).
    Encode columns with :func:`encode`, decode keys with ``codes.gather(keys)``.
    """
    v = pl.concat([c.cast(pl.Utf8).rename("v") for c in cols]).drop_nulls()
    return v.unique().sort() if ordered else v.unique(maintain_order=True)


def encode(df: pl.DataFrame, cols: list[str], codes: pl.Series) -> pl.DataFrame:
    """``df`` with its text columns ``cols`` replaced in place by their UInt32 positions in ``codes``
    (:func:`name_codes`; null where a value is not in it), by a left join that keeps the rows' order."""
    keys = codes.to_frame("_v").with_row_index("_k")
    for c in cols:
        df = df.join(keys, left_on=c, right_on="_v", how="left", maintain_order="left").with_columns(
            pl.col("_k").alias(c)).drop("_k")
    return df


def dealt_in_keys(con: duckdb.DuckDBPyConnection, players: pl.Series, hands: pl.Series
                  ) -> tuple[pl.DataFrame, pl.Series, pl.Series]:
    """Every dealt-in seat as integer keys (``hand_id``, ``player``: UInt32 positions in the two :func:`name_codes`),
    with those codes: (seats, player codes, hand codes). The codes cover the seats' and the given ``players`` and
    ``hands`` (a frame's own keys), so a frame encoded with them joins the seats on integers."""
    seats = con.sql("SELECT hand_id, player FROM seats WHERE dealt_in").pl()
    pcodes = name_codes(seats["player"], players)
    hcodes = name_codes(seats["hand_id"], hands, ordered=False)
    return encode(encode(seats, ["hand_id"], hcodes), ["player"], pcodes), pcodes, hcodes


def hands_together(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Ordered pairs (player, opponent) with the number of hands both were dealt into."""
    return con.sql(
        """
        SELECT a.player, b.player AS opponent, count(*)::BIGINT AS hands_together
        FROM seats a JOIN seats b ON a.hand_id = b.hand_id AND a.player <> b.player
        WHERE a.dealt_in AND b.dealt_in
        GROUP BY ALL
        """
    ).pl()


def chip_flow(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Chips (in big blinds) each player lost to each winner, per ordered pair (loser, winner).

    In every hand, a loser's net loss is shared among the hand's winners in
    proportion to their net wins (the pot-by-pot split is not needed for the
    pair totals). The sums run in hand order: a float sum follows its input's
    order, and DuckDB's threads would otherwise hand it over in a different
    order from process to process (a pair's 9.5 bb read 9 in one run, 10 in
    the next). Returns player (loser), opponent (winner), flow_bb, hands.
    """
    return con.sql(
        f"""
        WITH {seat_nets_cte()}
        SELECT l.player, x.player AS opponent,
               sum(-l.net_bb * x.net_bb / w.won ORDER BY l.hand_id) AS flow_bb, count(*)::BIGINT AS hands
        FROM s l JOIN s x ON l.hand_id = x.hand_id AND l.net_bb < 0 AND x.net_bb > 0
        JOIN w ON w.hand_id = l.hand_id
        GROUP BY ALL
        """
    ).pl()


def pair_decisions(dec: pl.DataFrame) -> pl.DataFrame:
    """Per ordered pair, the additive part of :func:`pair_features`: sums over hands, so a window's are its days'.

    ``dec``: :func:`~detectors.features.gameplay.decisions.hu_decisions`. Returns player, opponent, ``hu_hands``,
    ``hands_targeted`` (distinct hands: a hand lies in one day, so the days' counts add), ``hu_decisions``, and over
    the hands with a value given: ``value_given_bb`` (sum), ``value_w`` and ``value_sq`` (sum and sum of squares of
    the per-hand value winsorised at +-VALUE_CAP bb: one honest cooler must not decide a pair), ``value_n`` (hands).
    The value is summed per hand first (the decisions of one hand are not independent), then over each pair's hands
    in hand order: a float sum follows its input's order, and a hash group-by's order differs from process to process.
    """
    base = dec.group_by(["player", "opponent"]).agg(
        hu_hands=pl.col("hand_id").filter(pl.col("hu")).n_unique(),
        hands_targeted=pl.col("hand_id").n_unique(),
        hu_decisions=pl.len(),
    )
    per_hand = (
        dec.filter(pl.col("value_given").is_not_null())
        .group_by(["player", "opponent", "hand_id"]).agg(v=pl.col("value_given").sum())
        .sort(["player", "opponent", "hand_id"])
        .group_by(["player", "opponent"], maintain_order=True).agg(
            value_given_bb=pl.col("v").sum(),
            value_w=pl.col("v").clip(-VALUE_CAP, VALUE_CAP).sum(),
            value_sq=(pl.col("v").clip(-VALUE_CAP, VALUE_CAP) ** 2).sum(),
            value_n=pl.len(),
        )
    )
    return base.join(per_hand, on=["player", "opponent"], how="left").with_columns(
        pl.col("value_given_bb", "value_w", "value_sq").fill_null(0.0), pl.col("value_n").fill_null(0).cast(pl.UInt32))


def pair_features(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame | None = None, *, baseline: bool = True,
                  flow: pl.DataFrame | None = None, **kw) -> pl.DataFrame:
    """One row per ordered pair that met heads-up: counts, aggression, folds, value and chip flow.

    Columns: player, opponent, hands_together, hu_hands, hu_decisions, aggr/
    fold/junk-commit observed, expected (own baseline) and p-values,
    value_given_bb (card-aware), flow_bb (chips lost to the opponent).
    ``baseline=False``: without the aggr/fold/junk columns (:func:`own_baseline_columns` adds them): the
    detectors read their robust versions instead (:func:`detectors.stats.replace_baseline_tests`), and these
    three tests are a third of this function's time. ``flow``: :func:`chip_flow` of
    ``con`` when the caller has it (:class:`~detectors.features.gameplay.store.FeatureStore`); else it is read.
    """
    if dec is None:
        dec = hu_decisions(con, **kw)
    base = pair_decisions(dec)
    out = base.join(hands_together(con), on=["player", "opponent"], how="left")
    out = out.join((chip_flow(con) if flow is None else flow).select("player", "opponent", "flow_bb"), on=["player", "opponent"], how="left")
    out = out.with_columns(pl.col("flow_bb").fill_null(0.0), pl.col("hands_together").fill_null(0))
    return own_baseline_columns(out, dec) if baseline else out


def own_baseline_columns(pf: pl.DataFrame, dec: pl.DataFrame) -> pl.DataFrame:
    """``pf`` (:func:`pair_features` with ``baseline=False``) with the own-baseline tests of :func:`own_baseline`
    on ``dec``: ``aggr`` (bet or raise, fewer than expected), ``fold`` (facing a bet, more) and ``junk`` (putting
    chips in with the weakest hands, more), each ``_n``, ``_obs``, ``_exp``, ``_p``, placed before
    ``hands_together`` and ``flow_bb`` (the columns of the published ``pair_features`` table, in its order)."""
    aggr = own_baseline(dec, "aggr", side="less")
    fold = own_baseline(dec, "fold", where=pl.col("facing"), side="greater")
    junk = own_baseline(dec, "commit", where=pl.col("sbin") <= 0, bins=stats.JUNK_BINS, side="greater")
    out = pf
    for name, t in (("aggr", aggr), ("fold", fold), ("junk", junk)):
        out = out.join(
            t.select(
                "player",
                "opponent",
                pl.col("n").alias(f"{name}_n"),
                pl.col("observed").alias(f"{name}_obs"),
                pl.col("expected").alias(f"{name}_exp"),
                pl.col("p_value").alias(f"{name}_p"),
            ),
            on=["player", "opponent"],
            how="left",
        )
    last = ["hands_together", "flow_bb"]
    return out.select([c for c in out.columns if c not in last] + last)


def card_coverage(con: duckdb.DuckDBPyConnection) -> float:
    """Share of hands whose every dealt-in player's hole cards are known (operator view = 1)."""
    row = con.execute("SELECT avg(CASE WHEN all_cards_known THEN 1.0 ELSE 0.0 END) FROM hands").fetchall()[0]
    return float(row[0] or 0.0)


# Reproduces the raw (not card-binned) heads-up counts of $player against $opponent and
# against everyone else; bind $player and $opponent.
HU_COUNTS_SQL = """
WITH folds AS (
    SELECT hand_id, player, min(seq) AS fold_seq FROM actions WHERE action = 'fold' GROUP BY ALL
), dec AS (
    SELECT * FROM actions WHERE n_active = 2 AND player = $player
      AND action IN ('fold', 'check', 'call', 'bet', 'raise')
), opp AS (
    SELECT d.hand_id, d.seq, any_value(s.player) AS opponent
    FROM dec d JOIN seats s ON s.hand_id = d.hand_id AND s.dealt_in AND s.player <> d.player
    LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
    WHERE coalesce(f.fold_seq, 2147483647) > d.seq GROUP BY d.hand_id, d.seq HAVING count(*) = 1
)
SELECT (o.opponent = $opponent) AS against_partner,
       count(*) AS decisions,
       count(DISTINCT d.hand_id) AS hands,
       avg(CASE WHEN d.action IN ('bet', 'raise') THEN 1.0 ELSE 0.0 END) AS bet_or_raise_rate,
       avg(CASE WHEN d.action = 'fold' THEN 1.0 ELSE 0.0 END) FILTER (WHERE d.to_call > 0) AS fold_to_bet_rate,
       sum(d.amount) FILTER (WHERE d.action IN ('call', 'bet', 'raise')) AS chips_put_in
FROM dec d JOIN opp o ON o.hand_id = d.hand_id AND o.seq = d.seq
GROUP BY ALL ORDER BY against_partner DESC
"""

def seat_nets_cte(hands_from: str | None = None) -> str:
    """The ``s`` (each dealt-in seat's net, in big blinds) and ``w`` (each hand's total won) common table expressions
    of the chip-flow queries, for a ``WITH``; ``hands_from``: a relation whose ``hand_id`` restricts them."""
    restrict = f" AND s.hand_id IN (SELECT hand_id FROM {hands_from})" if hands_from else ""
    return f"""s AS (
    SELECT s.hand_id, s.player, CAST(s.net AS DOUBLE) / CAST(coalesce(nullif(h.big_blind, 0), 1) AS DOUBLE) AS net_bb
    FROM seats s JOIN hands h USING (hand_id) WHERE s.dealt_in{restrict}
), w AS (SELECT hand_id, sum(net_bb ORDER BY player) AS won FROM s WHERE net_bb > 0 GROUP BY hand_id)"""


CHIP_FLOW_SQL = f"""
WITH {seat_nets_cte()}
SELECT sum(-l.net_bb * x.net_bb / w.won) AS flow_bb, count(*) AS hands
FROM s l JOIN s x ON l.hand_id = x.hand_id AND l.net_bb < 0 AND x.net_bb > 0
JOIN w ON w.hand_id = l.hand_id
WHERE l.player = $player AND x.player = $opponent
"""


def unordered(pf: pl.DataFrame) -> pl.DataFrame:
    """Join each ordered pair row (a -> b) with its reverse (b -> a) once, a < b; reverse columns get ``_r``."""
    fwd = pf.filter(pl.col("player") < pl.col("opponent"))
    rev = pf.filter(pl.col("player") > pl.col("opponent")).rename(
        {c: f"{c}_r" for c in pf.columns if c not in ("player", "opponent")}
    ).rename({"player": "opponent", "opponent": "player"})
    # pairs seen only in the reverse direction
    only_rev = rev.join(fwd.select("player", "opponent"), on=["player", "opponent"], how="anti")
    both = fwd.join(rev, on=["player", "opponent"], how="left")
    if not only_rev.is_empty():
        both = pl.concat([both, only_rev], how="diagonal_relaxed")
    return both
