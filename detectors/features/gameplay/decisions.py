"""Every decision aimed at one opponent, judged by the cards: :func:`hu_decisions` and the own-baseline test.

Method
------
Collusion at the table shows in *decisions*, not in results: a colluder plays
differently against the partner than the same colluder plays against everyone
else holding the same cards. Following Mazrooei, Archibald & Bowling
("Automating collusion detection in sequential games", AAAI 2013), each
decision is valued with the cards known (operator view) and attributed to the
opponent it helps; following the card-aware per-pair features of the strong
public solutions to Kaggle's "Detect Suspicious Value Transfers in Poker",
the values are summed per ordered pair and compared with the player's own
baseline.

:func:`hu_decisions` takes every voluntary action (fold, check, call, bet,
raise) that is aimed at one opponent: facing a bet or raise, the player who
made the last one on the street; with exactly two players left
(``n_active = 2``), the other one. It names that opponent and computes from the
hole cards:

``strength``
    what the acting player knew (Hold'em and Omaha): the share of random opponent holdings their
    hand beats now (ties half) on the current board, by Monte Carlo (``samples``
    random holdings per row, 16 in the detectors); preflop, the percentile of
    the starting hand's all-in equity against one random hand (a table of
    the 169 classes built once, seeded). Luck cancels because decisions are
    compared *at equal strength*.
``equity``
    the share of the pot the player would win against the opponent's actual
    cards if the board were run out: exact on the river (one comparison) and
    on the turn (all 44 river cards), Monte Carlo before (``samples`` run-outs
    of the flop's two cards or the whole board, both hands on the same boards).
``value_given``
    (heads-up decisions only) what the decision hands the opponent, in big
    blinds, with the cards known:
    a fold facing ``to_call`` into ``pot_before`` gives
    ``equity*(pot_before+to_call) - to_call`` (the value of calling it gave
    up); chips ``x`` put in by a call, bet or raise give ``x*(1-2*equity)``
    (negative when the player was ahead); a check gives 0.

:func:`own_baseline` is the own-baseline test shared by the detectors: for an
indicator (e.g. "bet or raised") over decisions binned by what the player knew
(street, facing a bet, strength bin), the expected count towards the partner is
the sum of the player's own rates *against everyone else* in the same bins
(empirical-Bayes shrunk to the population's bin rate, :mod:`detectors.stats`),
and the observed count is tested against it with a normal approximation whose
variance carries both the binomial noise and the uncertainty of the rates.

Cards are valued once per (hand, player, opponent, street), not per decision,
as additive hand states (:func:`datasets.cards.hand_state`): the known cards'
state is built once and each drawn card's state added to it.

Omaha: strength only (``omaha_strength``), equity and value given are left
null. Player view: hole cards exist only for the hero and showdowns. Decisions whose
cards are unknown get null strength/equity and are left out of the card-aware
tests (the detectors say so in ``missing``).
"""

from __future__ import annotations

import re

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.features.gameplay.cards import _card_codes_sql, card_values, omaha_strength

STRENGTH_BINS = [0.0, 0.3, 0.5, 0.65, 0.8, 1.01]
PRICE_BINS = (0.2, 0.3, 0.4)  # a call's price, to call / (pot + to call): cells <= 0.2, <= 0.3, <= 0.4, more
VALUE_CAP = 15.0  # bb per hand, for the value-given tests


HU_DECISIONS_SQL = """
WITH {part_tables} folds AS (
    SELECT hand_id, player, min(seq) AS fold_seq FROM actions WHERE action = 'fold' GROUP BY ALL
), dec AS (
    SELECT * FROM actions
    WHERE action IN ('fold', 'check', 'call', 'bet', 'raise') AND (n_active = 2 OR to_call > 0)
), aggressor AS (
    -- facing a bet or raise: the one who made the last one on this street
    SELECT d.hand_id, d.seq, arg_max(a.player, a.seq) AS aggressor
    FROM dec d JOIN actions a ON a.hand_id = d.hand_id AND a.street = d.street AND a.seq < d.seq
         AND a.action IN ('bet', 'raise') AND a.player <> d.player
    WHERE d.to_call > 0
    GROUP BY d.hand_id, d.seq
), live AS (
    -- every player dealt in, with the seq of their first fold (never folded: past every seq)
    SELECT s.hand_id, s.player, coalesce(f.fold_seq, 2147483647) AS fold_seq
    FROM seats s LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
    WHERE s.dealt_in
), opp AS (
    -- heads-up: the one other player still in the hand
    SELECT d.hand_id, d.seq, any_value(l.player) AS opponent, count(*) AS n_opp
    FROM dec d
    JOIN live l ON l.hand_id = d.hand_id AND l.player <> d.player AND l.fold_seq > d.seq
    WHERE d.n_active = 2
    GROUP BY d.hand_id, d.seq
), target AS (
    -- each decision with its opponent ((hand_id, seq) is unique in actions: one row per decision)
    SELECT d.*, coalesce(g.aggressor, CASE WHEN o.n_opp = 1 THEN o.opponent END) AS opponent
    FROM dec d
    LEFT JOIN aggressor g ON g.hand_id = d.hand_id AND g.seq = d.seq
    LEFT JOIN opp o ON o.hand_id = d.hand_id AND o.seq = d.seq
), hole_codes AS MATERIALIZED (
    -- the hole cards as codes once, for the player's and the opponent's join
    {hole_codes}
)
SELECT d.hand_id, d.seq, d.street, d.player, d.opponent, d.action, d.n_active,
       CAST(d.amount AS DOUBLE) AS amount, CAST(d.to_call AS DOUBLE) AS to_call,
       CAST(d.pot_before AS DOUBLE) AS pot_before, d.is_all_in,
       h.is_tournament, h.tournament_id, h.table_name, h.started_at, h.game,
       CAST(coalesce(nullif(h.big_blind, 0), 1) AS DOUBLE) AS bb,
       {cards}
FROM target d
JOIN hands h ON h.hand_id = d.hand_id
LEFT JOIN hole_codes hp ON hp.hand_id = d.hand_id AND hp.player = d.player
LEFT JOIN hole_codes ho ON ho.hand_id = d.hand_id AND ho.player = d.opponent
LEFT JOIN {board_codes} b ON b.hand_id = d.hand_id
WHERE d.opponent IS NOT NULL
"""


# the cards as small ints, not lists of text: the player's first six hole cards (Hold'em two, Omaha four
# to six), the opponent's first two and the five board cards of the first run (null where unknown)
HOLE_COLS = [f"_h{i}" for i in range(6)]
OPP_COLS = ["_o0", "_o1"]
BOARD_COLS = [f"_b{i}" for i in range(5)]
HU_DECISIONS_SQL = (
    HU_DECISIONS_SQL
    .replace("{cards}", ", ".join([f"hp.codes[{i + 1}] AS {c}" for i, c in enumerate(HOLE_COLS)]
                                  + [f"ho.codes[{i + 1}] AS {c}" for i, c in enumerate(OPP_COLS)]
                                  + [f"b.codes[{i + 1}] AS {c}" for i, c in enumerate(BOARD_COLS)]))
    .replace("{hole_codes}", f"SELECT hand_id, player, {_card_codes_sql('cards')} AS codes FROM hole_cards")
    .replace("{board_codes}", f"(SELECT hand_id, {_card_codes_sql('cards')} AS codes FROM boards WHERE run = 1)")
)
_PART_TABLES = ("actions", "seats", "hands", "hole_cards", "boards")


def _partitioned(sql: str) -> str:
    """``sql`` over one range of hand ids, ``$lo <= hand_id < $hi``, on every table it reads.

    Each query's joins then hold one share of the warehouse (peak memory; hands
    load in id order, so the scans skip the other ranges' row groups), and the
    ranges together are the whole query (every decision's rows share its hand).
    """
    for t in _PART_TABLES:
        sql = re.sub(rf"\b(FROM|JOIN) {t}\b", rf"\1 _p_{t}", sql)
    return sql.replace("{part_tables}", "".join(
        f"_p_{t} AS (SELECT * FROM {t} WHERE hand_id >= $lo AND hand_id < $hi), " for t in _PART_TABLES))


def by_hand_ranges(con: duckdb.DuckDBPyConnection, sql: str, *, hands_per_query: int = 250_000) -> pl.DataFrame:
    """The rows of ``sql`` read in parts of about ``hands_per_query`` hands each (:func:`_partitioned`), concatenated
    (in no particular order, as the whole query's).

    ``sql`` starts ``WITH {part_tables}`` and each of its rows depends on the rows of one hand only (the parts are
    then exact). Caps DuckDB's join memory on large warehouses, and its joins on text keys run faster on a share of
    the hands (smaller hash tables; docs/measurements.md, 2026-12-06). One part (small warehouses): the query as it is.
    """
    n_hands = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
    parts = max(1, -(-n_hands // hands_per_query))
    if parts == 1:
        return con.sql(sql.replace("{part_tables}", "")).pl()
    cuts = con.execute("SELECT quantile_disc(hand_id, $q) FROM hands",
                       {"q": [i / parts for i in range(1, parts)]}).fetchall()[0][0]
    # '' sorts before every id; the last range ends above the largest id
    top = con.execute("SELECT max(hand_id) || chr(1114111) FROM hands").fetchall()[0][0]
    bounds = ["", *cuts, top]
    part_sql = _partitioned(sql)
    return pl.concat([con.sql(part_sql, params={"lo": lo, "hi": hi}).pl()
                      for lo, hi in zip(bounds, bounds[1:]) if lo < hi])


HU_DECISIONS_PARTS_SQL = HU_DECISIONS_SQL  # for by_hand_ranges
HU_DECISIONS_SQL = HU_DECISIONS_SQL.replace("{part_tables}", "")
CARD_COLS = HOLE_COLS + OPP_COLS + BOARD_COLS

_BOARD_LEN = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}




def _codes(u: pl.DataFrame, cols: list[str]) -> np.ndarray:
    """(n, len(cols)) int64 card codes from the TINYINT card columns of :data:`HU_DECISIONS_SQL`."""
    return np.stack([u[c].fill_null(-1).to_numpy().astype(np.int64) for c in cols], axis=1)


def _card_columns(u: pl.DataFrame, *, samples: int, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """strength and equity for rows with game, street, _hu and the card code columns (:data:`CARD_COLS`)."""
    holdem = (u["game"] == "holdem").to_numpy()
    games = u["game"].to_numpy()
    blen = u["street"].replace_strict(_BOARD_LEN, default=0, return_dtype=pl.Int64).to_numpy()
    board = _codes(u, BOARD_COLS)
    board_ok = ((np.arange(5)[None, :] >= blen[:, None]) | (board >= 0)).all(axis=1)
    hole6 = _codes(u, HOLE_COLS)
    omaha_col = np.full(len(u), np.nan)
    for game, width in (("omaha", 4), ("omaha5", 5), ("omaha6", 6)):
        rows = np.nonzero(games == game)[0]
        if rows.size:
            oh = hole6[rows, :width].copy()
            oh[~board_ok[rows]] = -1
            omaha_col[rows] = omaha_strength(oh, board[rows], blen[rows], random_state=random_state)
    hole = hole6[:, :2].copy()
    opp = _codes(u, OPP_COLS)
    hole[~holdem | ~board_ok] = -1  # Omaha: strength above, no equity here
    opp[~holdem] = -1
    # equity against the actual hand feeds only the heads-up value given: skip it elsewhere
    opp[~u["_hu"].to_numpy()] = -1
    strength, equity = card_values(hole, opp, board, blen, samples=samples, random_state=random_state)
    return np.where(holdem, strength, omaha_col), equity


def hu_decisions(
    con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0, hands_per_query: int = 250_000
) -> pl.DataFrame:
    """Every heads-up voluntary decision with its opponent, cards, strength, equity and value given.

    The decisions are read in parts of about ``hands_per_query`` hands each
    (:func:`by_hand_ranges`), which caps DuckDB's join memory on large warehouses.
    """
    df = by_hand_ranges(con, HU_DECISIONS_PARTS_SQL, hands_per_query=hands_per_query)
    if df.is_empty():
        return df.drop(CARD_COLS).with_columns(
            pl.lit(None, pl.Float64).alias("strength"),
            pl.lit(None, pl.Float64).alias("equity"),
            pl.lit(None, pl.Float64).alias("value_given"),
            pl.lit(None, pl.Int8).alias("sbin"),
            pl.lit(False).alias("aggr"),
            pl.lit(False).alias("facing"),
            pl.lit(False).alias("fold"),
            pl.lit(False).alias("commit"),
            pl.lit(False).alias("preflop"),
            pl.lit(False).alias("hu"),
            pl.lit(None, pl.Int8).alias("pbin"),
        )
    df = df.sort(["hand_id", "seq"]).with_columns(_hu=pl.col("n_active") == 2)
    # the cards are the same for every decision of a player against one opponent on one street:
    # value each (hand, player, opponent, street) once
    keys = ["hand_id", "player", "opponent", "street", "_hu"]
    u = df.select(*keys, "game", *CARD_COLS).unique(subset=keys, keep="first", maintain_order=True)
    strength, equity = _card_columns(u, samples=samples, random_state=random_state)
    u = u.select(keys).with_columns(
        pl.Series("strength", strength, nan_to_null=True),
        pl.Series("equity", equity, nan_to_null=True),
    )
    df = df.drop(CARD_COLS).join(u, on=keys, how="left", maintain_order="left").drop("_hu")
    a = pl.col("action")
    df = df.with_columns(
        aggr=a.is_in(["bet", "raise"]),
        facing=pl.col("to_call") > 0,
        fold=a == "fold",
        commit=a.is_in(["call", "bet", "raise"]),
        preflop=pl.col("street") == "preflop",
        hu=pl.col("n_active") == 2,
        # the price of a call (to call / (pot + to call)) in four cells, -1 where nothing is to call
        pbin=pl.when(pl.col("to_call") <= 0).then(-1)
        .otherwise(sum((pl.col("to_call") / (pl.col("pot_before") + pl.col("to_call")) > t).cast(pl.Int8)
                       for t in PRICE_BINS)).cast(pl.Int8),
        sbin=pl.when(pl.col("strength").is_null()).then(None).otherwise(
            sum((pl.col("strength") >= t).cast(pl.Int8) for t in STRENGTH_BINS[1:-1])
        ).cast(pl.Int8),
        value_given=pl.when(pl.col("n_active") != 2)
        .then(None)
        .when(a == "fold")
        .then(pl.col("equity") * (pl.col("pot_before") + pl.col("to_call")) - pl.col("to_call"))
        .when(a.is_in(["call", "bet", "raise"]))
        .then(pl.col("amount") * (1 - 2 * pl.col("equity")))
        .otherwise(0.0)
        / pl.col("bb"),
    )
    return df


def score_test_terms() -> list[pl.Expr]:
    """Per-row terms of the score test for a common multiplier theta on a player's own rates (H0: theta = 1).

    Rows carry ``n`` decisions, ``k`` of them the behaviour tested, ``r`` the
    player's own shrunk rate elsewhere and ``s`` the strength of r's Beta
    posterior. U = sum (k - n r) / (1 - r); Var U = sum n r / (1 - r) plus
    n^2 r / ((1 - r)(s + 1)) for the uncertainty of r, so spots where the
    player nearly always acts weigh most. ``e`` is the expected count n r.
    """
    n, k, r, s = pl.col("n"), pl.col("k"), pl.col("r"), pl.col("s")
    return [
        (n * r).alias("e"),
        ((k - n * r) / (1 - r)).alias("u"),
        (n * r / (1 - r) + n**2 * r / ((1 - r) * (s + 1))).alias("v"),
    ]


def own_baseline(
    dec: pl.DataFrame,
    y: str,
    *,
    where: pl.Expr | None = None,
    bins: tuple[str, ...] = stats.OWN_BASELINE_BINS,
    side: str = "less",
) -> pl.DataFrame:
    """Own-baseline test of indicator ``y`` per ordered pair (player, opponent).

    Among decisions selected by ``where`` with known strength, the expected
    count of ``y`` towards the opponent is the sum over bins of the pair's
    decisions times the player's shrunk rate r in that bin against *everyone
    else*. The test is the score test for one multiplier on all of the
    player's rates (weights 1/(1-r): a missing raise where the player nearly
    always raises counts most), its variance including the uncertainty of the
    rates. Returns player, opponent, n, observed, expected, z and p_value
    (``side="less"``: fewer than expected; ``"greater"``: more).
    """
    d = dec.filter(pl.col("sbin").is_not_null())
    if where is not None:
        d = d.filter(where)
    cols = ["player", "opponent", "n", "observed", "expected", "rate_pair", "rate_own", "z", "p_value"]
    if d.is_empty():
        return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "opponent") else pl.Float64) for c in cols})
    d = d.with_columns(pl.col(y).cast(pl.Int64).alias("_y"))
    pair = d.group_by(["player", "opponent", *bins]).agg(n=pl.len(), k=pl.col("_y").sum())
    me = d.group_by(["player", *bins]).agg(N=pl.len(), K=pl.col("_y").sum())
    # population prior per bin from per-player rates (method of moments)
    pri = stats.beta_priors_by_bin(me, list(bins), "K", "N")
    t = pair.join(me, on=["player", *bins]).join(pri, on=list(bins))
    t = t.with_columns(n0=pl.col("N") - pl.col("n"), k0=pl.col("K") - pl.col("k"))
    t = t.with_columns(
        r=(pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb")),
        s=pl.col("n0") + pl.col("pa") + pl.col("pb"),
    )
    t = t.with_columns(score_test_terms())
    g = t.group_by(["player", "opponent"]).agg(
        n=pl.col("n").sum(),
        observed=pl.col("k").sum(),
        expected=pl.col("e").sum(),
        score_u=pl.col("u").sum(),
        var=pl.col("v").sum(),
        n0=pl.col("n0").sum(),
        k0=pl.col("k0").sum(),
    )
    g, p = stats.score_test_pvalues(g, side)
    return g.with_columns(p_value=pl.Series(np.clip(p, 1e-300, 1.0))).select(cols)


PREFLOP_RAISES_SQL = """
SELECT hand_id, min(seq) AS first_raise_seq, arg_max(player, seq) AS preflop_aggressor
FROM actions
WHERE street = 'preflop' AND action IN ('bet', 'raise')
GROUP BY hand_id
"""


def with_bet_faced(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame) -> pl.DataFrame:
    """``dec`` (:func:`hu_decisions`) plus ``vs_bet``: the decision faces a real bet or raise, not just the blinds.

    Preflop a decision with chips to call faces only the blinds until the
    first raise of the hand (an open or a limp is no answer to anyone's bet);
    after the flop every chip to call is someone's bet. Also
    ``preflop_aggressor``, the last preflop raiser of the hand (null when
    nobody raised). One aggregate over the preflop raises (one row per hand).
    """
    if dec.is_empty():
        return dec.with_columns(vs_bet=pl.lit(False), preflop_aggressor=pl.lit(None, pl.Utf8))
    fr = con.sql(PREFLOP_RAISES_SQL).pl()
    out = dec.join(fr, on="hand_id", how="left", maintain_order="left")
    return out.with_columns(
        vs_bet=pl.col("facing") & (~pl.col("preflop") | (pl.col("seq") > pl.col("first_raise_seq").fill_null(2**31 - 1)))
    ).drop("first_raise_seq")


# every tournament seat's starting stack (chips), for the effective stack of a decision (with_stack_depth)
TOURNAMENT_STACKS_SQL = """
SELECT s.hand_id, s.player, s.stack_start::DOUBLE AS stack
FROM seats s JOIN hands h USING (hand_id)
WHERE h.tournament_id IS NOT NULL AND s.dealt_in
"""


def with_stack_depth(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame) -> pl.DataFrame:
    """``dec`` (:func:`hu_decisions`) plus ``eff_bb``: the effective stack of a tournament decision in big blinds.

    The smaller of the acting player's and the opponent's stacks at the start
    of the hand over the big blind (what can be won or lost between them;
    Sklansky & Malmuth, *Hold'em Poker for Advanced Players*, on playing by
    effective stack; the one known where the other is not); null for cash hands. Short
    effective stacks late in a tournament change how everyone bets (push or
    fold, the bubble's payout pressure: Harrington & Robertie, *Harrington on
    Hold'em* vol. 2, 2005), so tests that compare a player with their own
    rates can compare like stages with this.
    """
    if dec.is_empty():
        return dec.with_columns(eff_bb=pl.lit(None, pl.Float64))
    st = con.sql(TOURNAMENT_STACKS_SQL).pl()
    out = dec.join(st, on=["hand_id", "player"], how="left", maintain_order="left").join(
        st.rename({"player": "opponent", "stack": "_ostack"}), on=["hand_id", "opponent"], how="left", maintain_order="left")
    return out.with_columns(
        eff_bb=pl.when(pl.col("is_tournament").fill_null(False))
        .then(pl.min_horizontal("stack", "_ostack") / pl.col("bb").clip(1e-9))
    ).drop("stack", "_ostack")
