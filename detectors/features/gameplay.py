"""Gameplay features: every heads-up decision judged by the cards, and per-pair tables.

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

import numpy as np
import polars as pl

import duckdb
from datasets import cards as _cards
from detectors import stats

STRENGTH_BINS = [0.0, 0.3, 0.5, 0.65, 0.8, 1.01]
PRICE_BINS = (0.2, 0.3, 0.4)  # a call's price, to call / (pot + to call): cells <= 0.2, <= 0.3, <= 0.4, more
VALUE_CAP = 15.0  # bb per hand, for the value-given tests
CARD_INDEX = {_cards.card_str(i): i for i in range(52)}

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


# every card's text at position 2 * code: a card text (rank then suit, disjoint alphabets) is only found there
_DECK_TEXT = "".join(_cards.card_str(i) for i in range(52))


def _card_codes_sql(cards: str) -> str:
    """SQL: a list of card texts such as ['Ah', 'Kd'] as TINYINT codes (:mod:`datasets.cards`), -1 where not a card."""
    pos = f"instr('{_DECK_TEXT}', c)"
    return f"list_transform({cards}, lambda c: CAST(CASE WHEN length(c) = 2 AND {pos} % 2 = 1 THEN ({pos} - 1) // 2 ELSE -1 END AS TINYINT))"


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
    the hands (smaller hash tables; on the million-hand replica chip dumping's preflop decisions took 2.4-3.1 s in
    four parts against 3.2-4.1 s whole). One part (small warehouses): the query as it is.
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


# ------------------------------------------------------------------ card arrays


def _card_matrix(col: pl.Series, width: int) -> np.ndarray:
    """List-of-card-strings column -> (n, width) int array, -1 where missing."""
    out = np.full((len(col), width), -1, dtype=np.int64)
    if len(col) == 0:
        return out
    for j in range(width):
        cj = col.list.get(j, null_on_oob=True).replace_strict(CARD_INDEX, default=-1, return_dtype=pl.Int64)
        out[:, j] = cj.fill_null(-1).to_numpy()
    return out


_PREFLOP_TABLE: np.ndarray | None = None


def preflop_equity_table(samples: int = 1500, random_state: int = 12345) -> np.ndarray:
    """13x13 all-in equity of each starting-hand class against one random hand.

    ``[hi][lo]`` offsuit, ``[lo][hi]`` suited, diagonal pairs (Monte Carlo with
    ``samples`` deals per class, seeded; built once per process).
    """
    global _PREFLOP_TABLE
    if _PREFLOP_TABLE is not None:
        return _PREFLOP_TABLE
    rng = np.random.default_rng(random_state)
    reps = []
    for hi in range(13):
        for lo in range(13):
            if hi == lo:
                reps.append((hi * 4, hi * 4 + 1, hi, lo))
            elif hi > lo:  # offsuit
                reps.append((hi * 4, lo * 4 + 1, hi, lo))
            else:  # suited, stored at [lo][hi] with hi<lo swapped
                reps.append((lo * 4, hi * 4, hi, lo))
    hole = np.array([[a, b] for a, b, _, _ in reps], dtype=np.int64)
    hole = np.repeat(hole, samples, axis=0)
    others = _sample_excluding(hole, 7, rng)
    board = others[:, 2:]
    mine = _cards.evaluate_batch(np.concatenate([hole, board], axis=1))
    theirs = _cards.evaluate_batch(np.concatenate([others[:, :2], board], axis=1))
    share = np.where(mine > theirs, 1.0, np.where(mine == theirs, 0.5, 0.0))
    eq = share.reshape(len(reps), samples).mean(axis=1)
    table = np.zeros((13, 13))
    for (_, _, i, j), e in zip(reps, eq):
        table[i, j] = e
    _PREFLOP_TABLE = table
    return table


def _sample_excluding(used: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """For each row, ``k`` distinct cards not in ``used`` (-1 entries ignored)."""
    return _draw_excluding(_card_mask(used), k, rng)


def _card_mask(cards: np.ndarray) -> np.ndarray:
    """52-bit mask (bit ``c`` for card ``c``) of each row's cards, -1 entries ignored."""
    one = np.int64(1)
    mask = np.zeros(cards.shape[0], dtype=np.int64)
    for j in range(cards.shape[1]):
        c = cards[:, j]
        mask |= np.where(c >= 0, np.left_shift(one, np.clip(c, 0, 51)), 0)
    return mask


def _draw_excluding(mask: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """For each row, ``k`` distinct cards whose bits are not set in the 52-bit ``mask``.

    Vectorised rejection sampling: each column is drawn for all rows, and only
    the rows that hit a card already out are drawn again.
    """
    n = mask.shape[0]
    one = np.int64(1)
    mask = mask.copy()
    out = np.empty((n, k), dtype=np.int64)
    for j in range(k):
        col = rng.integers(0, 52, size=n)
        idx = np.nonzero((np.right_shift(mask, col) & 1) == 1)[0]
        while idx.size:
            col[idx] = rng.integers(0, 52, size=idx.size)
            idx = idx[(np.right_shift(mask[idx], col[idx]) & 1) == 1]
        out[:, j] = col
        mask |= np.left_shift(one, col)
    return out


_PREFLOP_PCT: np.ndarray | None = None


def preflop_percentile_table() -> np.ndarray:
    """13x13 (same layout as :func:`preflop_equity_table`): share of the 1,326 starting
    combinations with lower all-in equity against a random hand (ties count half).

    Preflop strength is this percentile, so strength bins mean the same share of
    hands on every street (equity against a random hand only spans 0.32..0.85 preflop).
    """
    global _PREFLOP_PCT
    if _PREFLOP_PCT is not None:
        return _PREFLOP_PCT
    t = preflop_equity_table()
    w = np.array([[6.0 if i == j else (12.0 if i > j else 4.0) for j in range(13)] for i in range(13)])
    eq, wt = t.ravel(), w.ravel()
    order = np.argsort(eq)
    cum = np.cumsum(wt[order])
    below = np.empty_like(eq)
    below[order] = cum - wt[order] / 2.0
    _PREFLOP_PCT = (below / wt.sum()).reshape(13, 13)
    return _PREFLOP_PCT


def _preflop_strength(hole: np.ndarray) -> np.ndarray:
    t = preflop_percentile_table()
    r1, r2 = hole[:, 0] >> 2, hole[:, 1] >> 2
    hi, lo = np.maximum(r1, r2), np.minimum(r1, r2)
    suited = ((hole[:, 0] & 3) == (hole[:, 1] & 3)) & (hi != lo)
    return np.where(suited, t[lo, hi], t[hi, lo])


def starting_hand_percentile(df: pl.DataFrame) -> pl.Series:
    """``strength``: the percentile of each row's starting hand among the 1,326 (Hold'em with both cards
    known, from the ``hole`` and ``game`` columns; null elsewhere: Omaha, the player view)."""
    hole = _card_matrix(df["hole"], 2)
    hole[(df["game"] != "holdem").to_numpy()] = -1
    ok = (hole >= 0).all(axis=1)
    strength = np.full(len(df), np.nan)
    if ok.any():
        strength[ok] = _preflop_strength(hole[ok])
    return pl.Series("strength", strength, nan_to_null=True)


def _share(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """1 where ``mine`` wins, 0.5 on a tie, 0 where it loses."""
    return ((mine > theirs).astype(np.float64) + (mine >= theirs)) * 0.5


def card_values(
    hole: np.ndarray,
    opp: np.ndarray,
    board: np.ndarray,
    board_len: np.ndarray,
    *,
    samples: int = 24,
    random_state: int = 0,
    chunk: int = 50000,
) -> tuple[np.ndarray, np.ndarray]:
    """``strength`` and ``equity`` (see the module docstring) for Hold'em decision rows.

    ``hole``/``opp``: (n, 2) card codes (-1 unknown); ``board``: (n, 5), of
    which the first ``board_len`` cards are out. NaN where cards are unknown.
    Equity is exact on the river (one comparison) and on the turn (every one
    of the 44 river cards), Monte Carlo with ``samples`` run-outs on the flop
    and preflop; postflop strength is Monte Carlo with ``samples`` random
    holdings. Hands are valued as additive states (:func:`datasets.cards.hand_state`):
    the known cards' state is built once per row and each drawn card's added.
    """
    n = hole.shape[0]
    strength = np.full(n, np.nan)
    equity = np.full(n, np.nan)
    rng = np.random.default_rng(random_state)
    known = (hole >= 0).all(axis=1)
    pre = known & (board_len == 0)
    if pre.any():
        strength[pre] = _preflop_strength(hole[pre])
    vis = np.where(np.arange(5)[None, :] < board_len[:, None], board, -1)
    # equity against the actual opponent: rows where both hands are known
    both = known & (opp >= 0).all(axis=1)
    for L in (0, 3, 4, 5):
        rows_all = np.nonzero(both & (board_len == L))[0]
        for start in range(0, rows_all.size, chunk):
            rows = rows_all[start:start + chunk]
            equity[rows] = _equity_rows(hole[rows], opp[rows], vis[rows], samples, rng)
    # strength now against a random holding, on the current board (postflop)
    for L in (3, 4, 5):
        rows_all = np.nonzero(known & (board_len == L))[0]
        for start in range(0, rows_all.size, chunk):
            rows = rows_all[start:start + chunk]
            strength[rows] = _strength_rows(hole[rows], vis[rows, :L], samples, rng)
    return strength, equity


def _equity_rows(h: np.ndarray, o: np.ndarray, vis: np.ndarray, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Pot share of ``h`` against ``o`` on boards ``vis`` (-1 = to come; every row the same number out)."""
    m = h.shape[0]
    hk, hb = _cards.hand_state(h)
    ok, ob = _cards.hand_state(o)
    bk, bb = _cards.hand_state(vis)
    hk, hb, ok, ob = hk + bk, hb + bb, ok + bk, ob + bb
    to_come = int((vis < 0).sum(axis=1).max()) if m else 0
    if to_come == 0:  # river: exact, one comparison
        return _share(_cards.evaluate_state(hk, hb), _cards.evaluate_state(ok, ob))
    used = _card_mask(np.concatenate([h, o, vis], axis=1))
    if to_come == 1:  # turn: exact, every river card not out
        total = np.zeros(m)
        count = np.zeros(m)
        for c in range(52):
            free = (np.right_shift(used, c) & 1) == 0
            ck, cb = _cards.STATE_KEY[c], _cards.STATE_BIT[c]
            sh = _share(_cards.evaluate_state(hk + ck, hb + cb), _cards.evaluate_state(ok + ck, ob + cb))
            total += np.where(free, sh, 0.0)
            count += free
        return total / count
    # flop and preflop: Monte Carlo over run-outs, both hands on the same boards
    dk, db = _cards.hand_state(_draw_excluding(np.repeat(used, samples), to_come, rng))
    mine = _cards.evaluate_state(np.repeat(hk, samples) + dk, np.repeat(hb, samples) + db)
    theirs = _cards.evaluate_state(np.repeat(ok, samples) + dk, np.repeat(ob, samples) + db)
    return _share(mine, theirs).reshape(m, samples).mean(axis=1)


def _strength_rows(h: np.ndarray, bvis: np.ndarray, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Share of ``samples`` random holdings that ``h`` beats on the board ``bvis`` (ties half)."""
    m = h.shape[0]
    hk, hb = _cards.hand_state(h)
    bk, bb = _cards.hand_state(bvis)
    me = _cards.evaluate_state(hk + bk, hb + bb)
    # the random holding avoids the player's cards and the board (not the opponent's: unknown to the player)
    used = _card_mask(np.concatenate([h, bvis], axis=1))
    dk, db = _cards.hand_state(_draw_excluding(np.repeat(used, samples), 2, rng))
    ro = _cards.evaluate_state(np.repeat(bk, samples) + dk, np.repeat(bb, samples) + db)
    return _share(np.repeat(me, samples), ro).reshape(m, samples).mean(axis=1)


def omaha_strength(
    hole: np.ndarray, board: np.ndarray, board_len: np.ndarray, *, samples: int = 6, random_state: int = 0,
    chunk: int = 4000,
) -> np.ndarray:
    """Omaha high ``strength``: share of random holdings (same number of cards) beaten.

    Postflop on the current board; preflop, all-in against a random holding on
    a random board. Monte Carlo with ``samples`` draws per row, evaluated with
    :func:`datasets.cards.evaluate_omaha_batch`. ``hole`` (n, k) with k = 4..6.
    """
    n, k = hole.shape
    out = np.full(n, np.nan)
    rng = np.random.default_rng(random_state + 7919)
    known = (hole >= 0).all(axis=1)
    for L in (0, 3, 4, 5):
        rows_all = np.nonzero(known & (board_len == L))[0]
        for start in range(0, rows_all.size, chunk):
            rows = rows_all[start:start + chunk]
            m = rows.size
            rep = np.repeat(np.arange(m), samples)
            h = hole[rows]
            bvis = board[rows, :L]
            draw = _sample_excluding(np.concatenate([h, bvis], axis=1)[rep], k + (5 - L if L == 0 else 0), rng)
            if L == 0:
                bfull = draw[:, k:]
                me = _cards.evaluate_omaha_batch(h[rep], bfull)
            else:
                bfull = bvis[rep]
                me = np.repeat(_cards.evaluate_omaha_batch(h, bvis), samples)
            ro = _cards.evaluate_omaha_batch(draw[:, :k], bfull)
            res = np.where(me > ro, 1.0, np.where(me == ro, 0.5, 0.0)).reshape(m, samples)
            out[rows] = res.mean(axis=1)
    return out


# ------------------------------------------------------------------ decisions


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
    sign = -1.0 if side == "less" else 1.0
    g = g.with_columns(
        rate_pair=pl.col("observed") / pl.col("n"),
        rate_own=pl.col("expected") / pl.col("n"),
        z=(sign * pl.col("score_u") - 0.5) / pl.col("var").clip(1e-9).sqrt(),
    )
    from scipy.stats import norm, poisson

    p = norm.sf(g["z"].to_numpy())
    if side == "greater":
        # rare events (expected near zero): the normal tail is far too small; the Poisson tail is not
        p_pois = poisson.sf(g["observed"].to_numpy() - 1, np.maximum(g["expected"].to_numpy(), 1e-9))
        p = np.maximum(p, p_pois)
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
    pair totals). Returns player (loser), opponent (winner), flow_bb, hands.
    """
    return con.sql(
        f"""
        WITH {seat_nets_cte()}
        SELECT l.player, x.player AS opponent,
               sum(-l.net_bb * x.net_bb / w.won) AS flow_bb, count(*)::BIGINT AS hands
        FROM s l JOIN s x ON l.hand_id = x.hand_id AND l.net_bb < 0 AND x.net_bb > 0
        JOIN w ON w.hand_id = l.hand_id
        GROUP BY ALL
        """
    ).pl()


def pair_features(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame | None = None, *, baseline: bool = True,
                  **kw) -> pl.DataFrame:
    """One row per ordered pair that met heads-up: counts, aggression, folds, value and chip flow.

    Columns: player, opponent, hands_together, hu_hands, hu_decisions, aggr/
    fold/junk-commit observed, expected (own baseline) and p-values,
    value_given_bb (card-aware), flow_bb (chips lost to the opponent).
    ``baseline=False``: without the aggr/fold/junk columns (:func:`own_baseline_columns` adds them): the
    detectors read their robust versions instead (:func:`detectors.stats.replace_baseline_tests`), and on a
    million hands these three tests are a third of this function's time.
    """
    if dec is None:
        dec = hu_decisions(con, **kw)
    base = dec.group_by(["player", "opponent"]).agg(
        hu_hands=pl.col("hand_id").filter(pl.col("hu")).n_unique(),
        hands_targeted=pl.col("hand_id").n_unique(),
        hu_decisions=pl.len(),
    )
    # value given per hand (the decisions of one hand are not independent), winsorised at
    # +-VALUE_CAP bb a hand for the tests: one honest cooler must not decide a pair
    per_hand = (
        dec.filter(pl.col("value_given").is_not_null())
        .group_by(["player", "opponent", "hand_id"])
        .agg(v=pl.col("value_given").sum())
        .group_by(["player", "opponent"])
        .agg(
            value_given_bb=pl.col("v").sum(),
            value_w=pl.col("v").clip(-VALUE_CAP, VALUE_CAP).sum(),
            value_sq=(pl.col("v").clip(-VALUE_CAP, VALUE_CAP) ** 2).sum(),
            value_n=pl.len(),
        )
    )
    base = base.join(per_hand, on=["player", "opponent"], how="left").with_columns(
        pl.col("value_given_bb", "value_w", "value_sq").fill_null(0.0), pl.col("value_n").fill_null(0)
    )
    out = base.join(hands_together(con), on=["player", "opponent"], how="left")
    out = out.join(cached_chip_flow(con).select("player", "opponent", "flow_bb"), on=["player", "opponent"], how="left")
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


# ------------------------------------------------------------------ shared cache and SQL for evidence

_CACHE: dict[tuple, tuple[pl.DataFrame, pl.DataFrame]] = {}


def _fingerprint(con: duckdb.DuckDBPyConnection) -> tuple:
    files = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    where = files[0][0] if files and files[0][0] else id(con)  # a file: any connection to it; in memory: this one
    row = con.execute(
        "SELECT (SELECT count(*) FROM actions), (SELECT max(hand_id) FROM hands), "
        "(SELECT count(*) FROM hole_cards), (SELECT count(*) FROM hands)"
    ).fetchall()[0]
    return (where, *row)


def cached_pair_features(
    con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(hu_decisions, pair_features without the own-baseline columns) for this warehouse state, computed once per
    process.

    The three gameplay detectors share them; the key is the connection and a
    fingerprint of the warehouse (row counts, last hand), so a changed
    warehouse is recomputed. The published table adds the own-baseline
    columns (:func:`own_baseline_columns`); the detectors test their robust
    versions (:func:`detectors.stats.replace_baseline_tests`).
    """
    key = (*_fingerprint(con), samples, random_state)
    if key not in _CACHE:
        _CACHE.clear()
        dec = hu_decisions(con, samples=samples, random_state=random_state)
        _CACHE[key] = (dec, pair_features(con, dec, baseline=False))
    return _CACHE[key]


_FLOW: dict[tuple, pl.DataFrame] = {}


def cached_chip_flow(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """:func:`chip_flow` for this warehouse state (the key of :func:`cached_pair_features`), computed once per
    process: the pair features and chip dumping both read it."""
    key = _fingerprint(con)
    if key not in _FLOW:
        _FLOW.clear()
        _FLOW[key] = chip_flow(con)
    return _FLOW[key]


# one index per decisions frame (the detectors explain hundreds of signals from the same frame):
# (the frame, hand -> tournament, player -> its row numbers)
_INDEX: list = [None, None, None]


def _index(dec: pl.DataFrame) -> list:
    if _INDEX[0] is not dec:
        tour = dec.filter(pl.col("tournament_id").is_not_null()).select("hand_id", "tournament_id").unique()
        rows = dec.select("player").with_row_index("_row").group_by("player").agg(pl.col("_row"))
        _INDEX[:] = [dec, dict(zip(tour["hand_id"].to_list(), tour["tournament_id"].to_list())),
                     dict(zip(rows["player"].to_list(), (r.to_numpy() for r in rows["_row"])))]
    return _INDEX


def tournaments_of(dec: pl.DataFrame, hands: list[str]) -> list[str]:
    """Tournaments of the given hands in a :func:`hu_decisions` frame (empty for cash games)."""
    if not hands:
        return []
    tour = _index(dec)[1]
    return sorted({tour[h] for h in hands if h in tour})


def decisions_of(dec: pl.DataFrame, players: list[str]) -> pl.DataFrame:
    """The rows of a :func:`hu_decisions` frame whose ``player`` is one of ``players``, in frame order.

    Same as ``dec.filter(pl.col("player").is_in(players))``, through a per-player
    row index built once per frame (explaining a signal no longer scans every decision).
    """
    by_player = _index(dec)[2]
    parts = [by_player[p] for p in players if p in by_player]
    if not parts:
        return dec.clear()
    return dec[np.sort(np.concatenate(parts))]


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
), w AS (SELECT hand_id, sum(net_bb) AS won FROM s WHERE net_bb > 0 GROUP BY hand_id)"""


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


# ------------------------------------------------------------------ knockouts

BOUNTY_SPOTS_SQL = """
WITH ko AS (
    SELECT DISTINCT s.hand_id FROM seats s WHERE s.bounty IS NOT NULL AND s.bounty > 0
), allin AS (
    SELECT a.hand_id, a.player AS target, min(a.seq) AS s_c
    FROM actions a JOIN ko USING (hand_id) WHERE a.is_all_in GROUP BY ALL
), folds AS (
    -- (only the hands with an all-in target are read: the rest would be grouped and never joined)
    SELECT hand_id, player, min(seq) AS fold_seq FROM actions SEMI JOIN allin USING (hand_id)
    WHERE action = 'fold' GROUP BY ALL
), vol AS (
    SELECT hand_id, player, bool_or(action IN ('call', 'bet', 'raise')) AS vol,
           min(seq) FILTER (WHERE action IN ('call', 'bet', 'raise')) AS first_vol
    FROM actions SEMI JOIN allin USING (hand_id) GROUP BY ALL
), post AS (
    SELECT ai.hand_id, ai.target, a.player, count(*) AS post_bets
    FROM allin ai JOIN actions a ON a.hand_id = ai.hand_id AND a.seq > ai.s_c
         AND a.street <> 'preflop' AND a.action IN ('bet', 'raise')
    GROUP BY ALL
)
SELECT ai.hand_id, h.tournament_id, ai.target, s.player,
       (coalesce(v.vol, false) AND coalesce(f.fold_seq, 2147483647) > v.first_vol) AS contested,
       coalesce(p.post_bets, 0) AS post_bets,
       coalesce(len(bd.cards), 0) >= 3 AS saw_flop,
       bo.winner AS bounty_winner,
       s.stack_start::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS stack_bb,
       ts.stack_start::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS target_bb,
       hc.cards AS hole, h.game
FROM allin ai
JOIN hands h ON h.hand_id = ai.hand_id
JOIN seats s ON s.hand_id = ai.hand_id AND s.dealt_in AND s.player <> ai.target
JOIN seats ts ON ts.hand_id = ai.hand_id AND ts.player = ai.target
LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
LEFT JOIN vol v ON v.hand_id = s.hand_id AND v.player = s.player
LEFT JOIN post p ON p.hand_id = ai.hand_id AND p.target = ai.target AND p.player = s.player
LEFT JOIN boards bd ON bd.hand_id = ai.hand_id AND bd.run = 1
LEFT JOIN (SELECT hand_id, eliminated, any_value(winner) AS winner FROM bounties GROUP BY ALL) bo
       ON bo.hand_id = ai.hand_id AND bo.eliminated = ai.target
LEFT JOIN hole_cards hc ON hc.hand_id = ai.hand_id AND hc.player = s.player
WHERE coalesce(f.fold_seq, 2147483647) > ai.s_c OR coalesce(v.first_vol, 2147483647) < coalesce(f.fold_seq, 2147483647)
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
    # wide calls: each player's contests with a bottom-half hand when the other is in the spot too,
    # against the same player's rate in every other spot (own baseline)
    s_known = s.filter(pl.col("strength").is_not_null()).with_columns(
        wide=(pl.col("contested") & (pl.col("strength") < 0.5)).cast(pl.Int64)
    )
    tot = s_known.group_by("player").agg(N=pl.len(), K=pl.col("wide").sum())
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
-- at the start of the hand) is still in, one row per other player still in the hand at that moment (the 'partner')
WITH ko AS (
    SELECT DISTINCT hand_id FROM seats WHERE bounty IS NOT NULL AND bounty > 0
), folds AS (
    -- (only the knockout hands are read: the rest would be grouped and never joined)
    SELECT hand_id, player, min(seq) AS fold_seq FROM actions SEMI JOIN ko USING (hand_id)
    WHERE action = 'fold' GROUP BY ALL
), targets AS (
    SELECT s.hand_id, s.player AS target, coalesce(f.fold_seq, 2147483647) AS t_fold
    FROM seats s JOIN ko USING (hand_id) JOIN hands h USING (hand_id)
    LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
    WHERE s.dealt_in AND s.bounty > 0 AND s.stack_start <= $max_bb * h.big_blind
), dec AS (
    SELECT a.hand_id, h.tournament_id, a.seq, a.player, a.action <> 'fold' AS cont,
           a.to_call::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS to_call_bb, h.game, ps.position
    FROM actions a SEMI JOIN ko USING (hand_id) JOIN hands h USING (hand_id)
    LEFT JOIN seats ps ON ps.hand_id = a.hand_id AND ps.player = a.player
    WHERE a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise') AND a.to_call > 0
), live AS (
    SELECT d.hand_id, d.seq, list(t.target) AS tgts
    FROM dec d JOIN targets t ON t.hand_id = d.hand_id AND t.target <> d.player AND t.t_fold > d.seq
    GROUP BY ALL
)
SELECT d.hand_id, d.tournament_id, d.seq, d.player, s.player AS partner, d.cont, d.to_call_bb, d.game,
       d.position, hc.cards AS hole
FROM dec d
JOIN live l ON l.hand_id = d.hand_id AND l.seq = d.seq
JOIN seats s ON s.hand_id = d.hand_id AND s.dealt_in AND s.player <> d.player
LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
LEFT JOIN hole_cards hc ON hc.hand_id = d.hand_id AND hc.player = d.player
WHERE coalesce(f.fold_seq, 2147483647) > d.seq
  AND len(list_filter(l.tgts, lambda x: x <> s.player)) > 0
"""


# the deciding player's seat position in four cells: blinds, early, middle, late (seats.position)
POSITION_BIN = {"SB": 0, "BB": 0, "UTG": 1, "UTG1": 1, "UTG2": 1, "LJ": 2, "HJ": 2, "CO": 3, "BTN": 3}
# cells of the bounty own-baseline tests beyond hand strength and price: the position (see bounty_presence_pairs)
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


def _bounty_cells(d: pl.DataFrame, bins: list[str], looseness_tau: float | None) -> pl.DataFrame:
    """The cells of the bounty own-baseline tests (:func:`bounty_presence_pairs`, :func:`bounty_wide_calls`): per
    (player, partner, cell) the pair's decisions ``n`` and continuations ``k`` (``d``'s ``_y``), the player's in the
    cell against everyone ``N``, ``K`` (a decision once per other player still in), ``Dn`` distinct decisions and
    ``Dk`` continuations among them (each decision once, whoever was in), the cell's Beta prior ``pa``, ``pb`` (its
    own-looseness offset applied when ``looseness_tau`` is set) and ``scale`` = Dn / N, which turns the per-opponent
    counts back into decisions."""
    pair = d.group_by(["player", "partner", *bins]).agg(n=pl.len(), k=pl.col("_y").sum())
    me = d.group_by(["player", *bins]).agg(N=pl.len(), K=pl.col("_y").sum())
    dec = d.unique(["hand_id", "seq"]).group_by(["player", *bins]).agg(Dn=pl.len(), Dk=pl.col("_y").sum())
    pri = stats.beta_priors_by_bin(dec, bins, "Dk", "Dn")
    t = pair.join(me, on=["player", *bins]).join(dec, on=["player", *bins]).join(pri, on=bins)
    if looseness_tau is not None:
        t = _offset_rates(t, bounty_offset_priors(dec, pri, bins, tau=looseness_tau))
    return t.with_columns(scale=pl.col("Dn") / pl.col("N"))


def bounty_presence_pairs(rows: pl.DataFrame, *, context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                          looseness_tau: float | None = BOUNTY_LOOSENESS_TAU,
                          tournament_effect: bool = True) -> pl.DataFrame:
    """Per ordered pair (player, partner): the player's continuations with the partner still in, against own baseline.

    Decisions are binned by starting-hand strength (quintile), price and the
    ``context`` cells (default :data:`BOUNTY_CONTEXT_BINS`: the player's
    position). Position sets preflop ranges (early position plays tighter than
    the cut-off and button: Sklansky & Miller, "No Limit Hold 'em: Theory and
    Practice", 2006), and a partner who has yet to act counts as still in, so
    the decisions with a given partner in come from earlier positions than the
    player's other decisions: pooled over positions the own rate is biased
    (upwards for a pair that meets early in the order, hiding a gang's wide
    calls there; downwards for one that meets late). The expected count is the sum over the pair's decisions of the player's rate in
    the same bin when *other* players were still in (empirical-Bayes shrunk to
    the population's rate in the bin). A decision appears once per other player
    still in, so the baseline's sample is counted in decisions, not rows
    (scaled by the player's distinct decisions over rows). Test: the score test
    for one multiplier on the player's rates (as :func:`own_baseline`), one-sided
    (more continuations with the partner in). Returns player, partner, n,
    observed, expected, base_strength, rate_pair, rate_own, p_value (the score test's normal
    approximation: use :func:`bounty_presence_unordered`, exact), tournaments, hands, and per
    (strength, price) bin the decisions ``bin_n``, the own rate ``bin_r`` and its Beta posterior
    strength ``bin_s`` (the exact null distribution of the count). ``looseness_tau`` (None: off): the population's
    prior of each bin is moved to the player's own looseness over all bins, without the pair's decisions
    (:func:`bounty_offset_priors`, ridge ``tau``), so that where a player has few decisions a loose player is not
    held to the population's rate. The bins are listed per tournament (``bin_t``: the pair's decisions of one
    tournament in the bin, with the bin's rate and strength) and ``sigma2`` carries the players' tournament effect
    (:func:`bounty_tournament_effect`; 0 with ``tournament_effect=False`` or rows without ``tournament_id``), the
    null of :func:`bounty_presence_unordered`.
    """
    cols = {"player": pl.Utf8, "partner": pl.Utf8, "n": pl.Float64, "observed": pl.Float64, "expected": pl.Float64,
            "base_strength": pl.Float64, "score_u": pl.Float64, "score_var": pl.Float64,
            "rate_pair": pl.Float64, "rate_own": pl.Float64, "z": pl.Float64, "p_value": pl.Float64,
            "tournaments": pl.List(pl.Utf8), "hands": pl.List(pl.Utf8),
            "bin_n": pl.List(pl.Float64), "bin_r": pl.List(pl.Float64), "bin_s": pl.List(pl.Float64),
            "bin_t": pl.List(pl.Utf8), "sigma2": pl.Float64}
    d = rows.filter(pl.col("sbin").is_not_null()) if not rows.is_empty() else rows
    if d.is_empty():
        return pl.DataFrame(schema=cols)
    d = d.with_columns(pl.col("cont").cast(pl.Int64).alias("_y"))
    bins = ["sbin", "cbin", *(c for c in context if c in d.columns)]
    d = d.with_columns(pl.col(c).fill_null(-1) for c in bins[2:])
    t = _bounty_cells(d, bins, looseness_tau)
    t = t.with_columns(n0=(pl.col("N") - pl.col("n")) * pl.col("scale"), k0=(pl.col("K") - pl.col("k")) * pl.col("scale"))
    t = t.with_columns(
        r=((pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb"))).clip(1e-4, 1 - 1e-4),
        s=pl.col("n0") + pl.col("pa") + pl.col("pb"),
    )
    t = t.with_columns(score_test_terms())
    # the components of the exact null: per (tournament, bin) the pair's decisions with the bin's own rate, and the
    # spread of a player's looseness between tournaments that the pair's decisions share (bounty_tournament_effect)
    tour = "tournament_id" in d.columns
    comps = (d.group_by(["player", "partner", "tournament_id", *bins]).agg(nt=pl.len()) if tour
             else d.group_by(["player", "partner", *bins]).agg(nt=pl.len()).with_columns(tournament_id=pl.lit("")))
    comps = comps.join(t.select("player", "partner", *bins, "r", "s"), on=["player", "partner", *bins]).group_by(
        ["player", "partner"]).agg(bin_n=pl.col("nt").cast(pl.Float64), bin_r=pl.col("r"), bin_s=pl.col("s").cast(pl.Float64),
                                   bin_t=pl.col("tournament_id").cast(pl.Utf8))
    sigma2 = bounty_tournament_effect(d, t, bins) if tour and tournament_effect else 0.0
    g = t.group_by(["player", "partner"]).agg(
        n=pl.col("n").sum().cast(pl.Float64), observed=pl.col("k").sum().cast(pl.Float64), expected=pl.col("e").sum(),
        u=pl.col("u").sum(), v=pl.col("v").sum(), n0=pl.col("n0").sum(), k0=pl.col("k0").sum(),
        # the baseline's weight (Beta posterior strength), averaged over the pair's decisions
        base_strength=(pl.col("n") * pl.col("s")).sum() / pl.col("n").sum(),
    ).join(comps, on=["player", "partner"], how="left")
    g = g.rename({"u": "score_u", "v": "score_var"})
    z = (g["score_u"] / g["score_var"].sqrt()).to_numpy()
    p = np.where(np.isfinite(z), np.clip(_sf(z), 1e-300, 1.0), np.nan)
    where = d.filter(pl.col("cont")).group_by(["player", "partner"]).agg(
        tournaments=pl.col("tournament_id").unique().sort(), hands=pl.col("hand_id").unique().sort())
    return g.with_columns(
        pl.Series("z", z), pl.Series("p_value", p, nan_to_null=True),
        rate_pair=pl.col("observed") / pl.col("n"),
        rate_own=pl.col("k0") / pl.col("n0").clip(1e-9, None),
        sigma2=pl.lit(float(sigma2)),
    ).join(where, on=["player", "partner"], how="left").select(list(cols))


def bounty_tournament_effect(d: pl.DataFrame, t: pl.DataFrame, bins: list[str]) -> float:
    """The variance sigma^2 of a player's looseness from one tournament to the next (logit scale), by moments.

    A player's rate of continuing against short bounty targets is not the same in every tournament (the table, the
    stage they reach, their stack's path): on mixed-270, over the players' tournaments with 20-40 such decisions, the
    squared residuals against their own cell rates were 2.6x the binomial variance. A pair that meets in one
    tournament has all its decisions there, so the presence count of an honest pair is overdispersed (honest pairs'
    standardised counts had variance 1.43, 2.06 for pairs with 80+ decisions) and its tail was liberal. The model is
    a random intercept per (player, tournament) on the logit of every cell rate, u ~ N(0, sigma^2) (Breslow &
    Clayton, JASA 1993): to first order the count of a unit with own-rate variances v_i has variance sum v_i +
    sigma^2 (sum v_i)^2 beyond the baseline's own estimation error, so sigma^2 = sum over units of ((k - e)^2 -
    v - v_base) / sum v^2 (the moment estimator of extra-binomial variation of Williams, Applied Statistics 1982),
    units = (player, tournament) over the player's distinct decisions, each against the player's own rate in the
    cell without that tournament (the same Beta prior and looseness offset as the test). It never looks at pairs or
    labels; a gang's own tournaments can only raise it (a more conservative test). ``d``: the rows with ``_y``,
    ``tournament_id`` and the cell columns ``bins``; ``t``: :func:`_bounty_cells` (``K``, ``N``, ``scale``,
    ``pa``, ``pb`` per player and cell)."""
    me = t.group_by(["player", *bins]).agg(pl.col("K", "N", "scale").first(), pl.col("pa", "pb").mean())
    rows_u = d.group_by(["player", "tournament_id", *bins]).agg(Nu=pl.len(), Ku=pl.col("_y").sum())
    dec_u = d.unique(["hand_id", "seq"]).group_by(["player", "tournament_id", *bins]).agg(nu=pl.len(), ku=pl.col("_y").sum())
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
    as if they loosen up for each other. On the tuning populations (seeds 212-214, 270-277, 222-223; 93,000
    pairs with no colluder), sorted into quarters by the product of the two players' looseness (own continuations
    over the population's rates), the loosest quarter held the whole excess of small p-values (wide calls p <=
    1e-3: 11x nominal; presence 16x) and the other three quarters none; one honest pair of them (mixed-271) was
    flagged. The fix is a logistic model with the cells as fixed effects and one effect per player (the
    multilevel model of Gelman & Hill, "Data Analysis Using Regression and Multilevel/Hierarchical Models", 2007,
    ch. 14), fitted per player with the cells' population log-odds as offsets: ``delta`` solves
    sum_c Dn_c expit(logit m_c + delta) + tau delta = sum_c Dk_c over the player's decisions (``dec``: ``Dn``,
    ``Dk`` per player and bin; ``pri``: ``pa``, ``pb`` per bin, m = pa / (pa + pb)), with ``tau`` the precision
    of a N(0, 1 / tau) prior on delta (a ridge: a player with few decisions stays at the population's rates;
    ``tau`` = 30 was set from the honest pairs' calibration, see :class:`detectors.bounty_collusion.BountyCollusionDetector`).
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


def _sf(z: np.ndarray) -> np.ndarray:
    from scipy.stats import norm

    return norm.sf(z)


def _sum_sf_components(group, n, r, s, *extra: np.ndarray) -> tuple[np.ndarray, ...]:
    """The components of an exact sum tail as arrays: counts rounded to integers, rates kept inside (0, 1), and
    components with no decision dropped (from ``extra`` too, row for row)."""
    n = np.rint(np.asarray(n, dtype=float)).astype(np.int64)
    keep = n > 0
    r = np.clip(np.asarray(r, dtype=float), 1e-12, 1 - 1e-12)
    arrays = (np.asarray(group, dtype=np.int64), n, r, np.asarray(s, dtype=float), *extra)
    return tuple(a[keep] for a in arrays)


def betabinom_sum_sf(group: np.ndarray, n: np.ndarray, r: np.ndarray, s: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Exact upper tail P(X_1 + ... + X_m >= k_g) of a sum of independent beta-binomials, per group g.

    Row i of ``group``/``n``/``r``/``s`` is one component of group ``group[i]`` (0 .. G-1):
    X_i ~ BetaBinomial(n_i, r_i s_i, (1 - r_i) s_i), a count of n_i decisions whose common rate is uncertain
    with mean r_i and Beta posterior strength s_i (``s = inf``: the rate is known, X_i ~ Bin(n_i, r_i), and the
    sum is the Poisson-binomial distribution). ``k`` holds one observed count per group. The distribution of
    the sum is the convolution of the components' probability functions, computed exactly (the direct
    convolution of the recursive method; Hong, "On computing the distribution function for the Poisson
    binomial distribution", CSDA 2013, compares it with his DFT-CF method: same result, and the direct sums of
    non-negative terms keep their relative accuracy in the far tail, where an inverse Fourier transform's
    rounding (~1e-16 absolute) swamps tails below ~1e-13). Vectorised: groups are bucketed by their total
    count (power-of-two widths) and the convolution runs over the components' ranks and values, never over
    groups in Python. Counts ``n`` are rounded to integers; groups with no component or ``k <= 0`` get 1.
    """
    k = np.asarray(k, dtype=float)
    G = len(k)
    out = np.ones(G)
    if G == 0 or len(group) == 0:
        return out
    group, n, r, s = _sum_sf_components(group, n, r, s)
    tot = np.bincount(group, weights=n, minlength=G).astype(np.int64)
    big = np.zeros(G, dtype=np.int64)
    np.maximum.at(big, group, n)
    kint = np.maximum(k, 0).astype(np.int64)
    # the support kept: 0 .. k, the last cell holding P(S >= k) (mass at or beyond k is folded into it after each
    # component), plus room for one component's counts before the fold
    width = np.maximum(8, 2 ** np.ceil(np.log2(np.minimum(tot, kint + big) + 1)).astype(np.int64))
    order = np.lexsort((s, r, n, group))  # a fixed order of the components: the same sums in every run
    group, n, r, s = group[order], n[order], r[order], s[order]
    first = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    rank = np.arange(len(group)) - np.repeat(first, np.diff(np.r_[first, len(group)]))
    todo = (k > 0) & (tot >= k)
    out[(k > 0) & (tot < k)] = 0.0
    for L in np.unique(width[todo]):
        gs = np.flatnonzero(todo & (width == L))
        slot = np.full(G, -1)
        slot[gs] = np.arange(len(gs))
        acc = np.zeros((len(gs), L))
        acc[:, 0] = 1.0
        rows = slot[group] >= 0
        for m in range(int(rank[rows].max()) + 1 if rows.any() else 0):
            sel = rows & (rank == m)
            if not sel.any():
                continue
            gi, ni, ri, si = slot[group[sel]], n[sel], r[sel], s[sel]
            x = np.arange(int(ni.max()) + 1)
            pmf = _component_pmf(x[None, :], ni[:, None], ri[:, None], si[:, None])
            cur = acc[gi]
            new = np.zeros_like(cur)
            for j in x:
                new[:, j:] += cur[:, : L - j] * pmf[:, j : j + 1]
            acc[gi] = _fold(new, kint[gs[gi]])
        out[gs] = acc[np.arange(len(gs)), kint[gs]]
    return np.clip(out, 0.0, 1.0)


def _component_pmf(x: np.ndarray, n: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P(X = x) for X ~ BetaBinomial(n, r s, (1 - r) s) (binomial where s is infinite), 0 for x > n."""
    from scipy import stats as st

    finite = np.broadcast_to(np.isfinite(s), np.broadcast_shapes(x.shape, n.shape, r.shape, s.shape))
    n, r, s, x = (np.broadcast_to(v, finite.shape) for v in (n, r, s, x))
    out = np.zeros(finite.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        if finite.any():
            out[finite] = st.betabinom.pmf(x[finite], n[finite], r[finite] * s[finite], (1 - r[finite]) * s[finite])
        if (~finite).any():
            out[~finite] = st.binom.pmf(x[~finite], n[~finite], r[~finite])
    return np.where(x <= n, np.nan_to_num(out), 0.0)


def _convolve_groups(group: np.ndarray, comp, kfold: np.ndarray, size: np.ndarray | None = None) -> np.ndarray:
    """The probability function of per-group sums of independent components, folded at ``kfold``.

    ``group`` (R,): each component's group (0 .. G-1); ``comp(idx)``: the probability functions of components
    ``idx`` as a (len(idx), X) matrix over 0 .. X-1; ``kfold`` (G,): per group the cell that receives the mass at or
    beyond it. Returns (G, max(kfold) + 1): cell j < kfold[g] is P(S_g = j), cell kfold[g] is P(S_g >= kfold[g]),
    cells beyond are 0. The convolution runs over the components' ranks within their group and their values (the
    direct sums of non-negative terms of :func:`betabinom_sum_sf`), never over groups in Python. ``size``: the
    components' support sizes; the largest of each group come first, so later ranks compute narrow functions."""
    G = len(kfold)
    L = int(kfold.max()) + 1 if G else 1
    acc = np.zeros((G, L))
    acc[:, 0] = 1.0
    if len(group) == 0:
        return _fold(acc, kfold)
    order = np.lexsort((-np.asarray(size), group)) if size is not None else np.argsort(group, kind="stable")
    g = group[order]
    first = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
    rank = np.empty(len(g), dtype=np.int64)
    rank[order] = np.arange(len(g)) - np.repeat(first, np.diff(np.r_[first, len(g)]))
    for m in range(int(rank.max()) + 1):
        idx = np.flatnonzero(rank == m)
        gi = group[idx]
        pmf = comp(idx)
        cur = acc[gi]
        new = np.zeros_like(cur)
        for j in range(min(pmf.shape[1], L + 1)):
            pj = pmf[:, j : j + 1]
            new[:, j:] += cur[:, : L - j] * pj
            if j > 0:  # sums beyond the last cell: into the last cell (folded below at kfold anyway)
                new[:, L - 1] += cur[:, L - j :].sum(axis=1) * pj[:, 0]
        if pmf.shape[1] > L + 1:  # values beyond L: every outcome lands beyond the fold
            new[:, L - 1] += cur.sum(axis=1) * pmf[:, L + 1 :].sum(axis=1)
        acc[gi] = _fold(new, kfold[gi])
    return acc


def _fold(a: np.ndarray, kfold: np.ndarray) -> np.ndarray:
    """Move each row's mass at or beyond ``kfold`` into cell ``kfold`` (right to left: the small terms added first).

    The fold of :func:`betabinom_sum_sf` and :func:`_convolve_groups` after each component."""
    cols = np.arange(a.shape[1])[None, :]
    beyond = cols >= kfold[:, None]
    over = np.cumsum(np.where(beyond, a, 0.0)[:, ::-1], axis=1)[:, -1]
    a = np.where(beyond, 0.0, a)
    a[np.arange(len(a)), kfold] = over
    return a


def overdispersed_sum_sf(group: np.ndarray, block: np.ndarray, n: np.ndarray, r: np.ndarray, s: np.ndarray,
                         k: np.ndarray, sigma: float, nodes: int = 15) -> np.ndarray:
    """Upper tail P(S_g >= k_g) of a count whose components share a random effect within blocks, per group g.

    Row i is one component of group ``group[i]`` (0 .. G-1) and block ``block[i]`` (a block lies in one group):
    given its block's effect u ~ N(0, sigma^2), independent between blocks, X_i ~ BetaBinomial(n_i, rho_i s_i,
    (1 - rho_i) s_i) with rho_i = expit(logit r_i + u) (binomial where s_i is infinite); S_g is the sum of its
    components. This is the logistic-normal random-intercept model (Breslow & Clayton, JASA 1993) around the
    beta-binomial posterior-predictive components of :func:`betabinom_sum_sf`: the effect integrated by
    Gauss-Hermite quadrature (``nodes`` points) within each block, the blocks' distributions then convolved
    exactly. ``sigma = 0``: the components are independent and the result is :func:`betabinom_sum_sf`'s.
    Groups with ``k <= 0`` or no component get 1.
    """
    if not sigma or sigma <= 0:
        return betabinom_sum_sf(group, n, r, s, k)
    k = np.asarray(k, dtype=float)
    G = len(k)
    out = np.ones(G)
    if G == 0 or len(group) == 0:
        return out
    group, n, r, s, block = _sum_sf_components(group, n, r, s, np.asarray(block, dtype=np.int64))
    kint = np.maximum(k, 0).astype(np.int64)
    tot = np.bincount(group, weights=n, minlength=G).astype(np.int64)
    todo = (kint > 0) & (tot >= kint)
    out[(kint > 0) & (tot < kint)] = 0.0
    sel = todo[group]
    group, block, n, r, s = group[sel], block[sel], n[sel], r[sel], s[sel]
    if not len(group):
        return out
    # blocks renumbered 0 .. B-1, each with its group's fold
    ub, bidx = np.unique(block, return_inverse=True)
    bgroup = np.zeros(len(ub), dtype=np.int64)
    bgroup[bidx] = group
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    Q = len(x)
    lr = np.log(r / (1 - r))
    # per (block, node): the convolution of the block's components at rates shifted by the node's effect
    qg = (bidx[:, None] * Q + np.arange(Q)[None, :]).ravel()
    qn = np.repeat(n, Q)
    qs = np.repeat(s, Q)
    qr = (1.0 / (1.0 + np.exp(-(lr[:, None] + sigma * x[None, :])))).ravel()
    qk = np.repeat(kint[bgroup], Q)

    def comp_a(idx):
        xs = np.arange(int(qn[idx].max()) + 1)
        one = qn[idx] == 1  # one decision: Bernoulli at its mean rate, whatever the rate's uncertainty
        out = np.zeros((len(idx), len(xs)))
        out[one, 0], out[one, 1] = 1 - qr[idx][one], qr[idx][one]
        if (~one).any():
            j = idx[~one]
            out[~one] = _component_pmf(xs[None, :], qn[j][:, None], qr[j][:, None], qs[j][:, None])
        return out

    # bucket by the fold (power-of-two widths), as betabinom_sum_sf
    width = 2 ** np.ceil(np.log2(kint + 1)).astype(np.int64)
    blockpmf = np.zeros((len(ub), int(kint.max()) + 1))
    for Lw in np.unique(width[bgroup]):
        bs = np.flatnonzero(width[bgroup] == Lw)  # blocks in this bucket
        rows = np.isin(bidx, bs)
        ridx = np.flatnonzero(np.repeat(rows, Q))
        slot = np.full(len(ub) * Q, -1)
        slot[(bs[:, None] * Q + np.arange(Q)[None, :]).ravel()] = np.arange(len(bs) * Q)
        kf = np.repeat(kint[bgroup[bs]], Q)
        mix = _convolve_groups(slot[qg[ridx]], lambda i, ridx=ridx: comp_a(ridx[i]), kf, size=qn[ridx])
        mix = (mix.reshape(len(bs), Q, -1) * w[None, :, None]).sum(axis=1)
        blockpmf[bs, : mix.shape[1]] = mix
    # the blocks of each group convolved (independent effects), folded at k
    gs = np.flatnonzero(todo)
    gslot = np.full(G, -1)
    gslot[gs] = np.arange(len(gs))
    for Lw in np.unique(width[gs]):
        sub = gs[width[gs] == Lw]
        bsel = np.flatnonzero(np.isin(bgroup, sub))
        ssl = np.full(G, -1)
        ssl[sub] = np.arange(len(sub))
        acc = _convolve_groups(ssl[bgroup[bsel]], lambda i, bsel=bsel: blockpmf[bsel[i], : int(kint[sub].max()) + 1],
                               kint[sub])
        out[sub] = acc[np.arange(len(sub)), kint[sub]]
    return np.clip(out, 0.0, 1.0)


def bounty_presence_unordered(pairs: pl.DataFrame) -> pl.DataFrame:
    """Both directions of :func:`bounty_presence_pairs` summed per unordered pair (``player`` < ``opponent``).

    Partners loosen up in both directions, so the pair's continuations with the
    other still in are added up: ``pres_k`` observed of ``pres_n`` decisions
    against ``pres_e`` expected from each player's own rates. ``pres_p`` is the
    exact tail P(K >= ``pres_k``) of the count under the null "each player
    continues at their own rate, at the same hand strength (quintile) and price,
    whoever is in": in each (direction, strength, price) bin the n decisions
    share the player's own rate, known only through its Beta posterior (mean r,
    strength s, from the player's decisions with other players in), so the
    bin's count is beta-binomial and K the sum of the pair's independent bins
    (:func:`betabinom_sum_sf`: the direct convolution, exact in the far tail;
    with known rates it is the Poisson-binomial of Hong 2013). It is the
    posterior-predictive check of :func:`detectors.stats.baseline_tail` over
    several bins. It replaces the smaller of the score test's normal tail and a
    binomial tail at the mean rate (x2), which was liberal in the far tail where
    rates are low: 2x at 1e-5 for 40 decisions at rate 0.3, 13x at 1e-6 for 100
    at 0.1 (the normal tail ignores the binomial's skew), and, at few
    decisions, by orders of magnitude (6 decisions at rate 0.1, 4 continued:
    ~4e-6 where P(k >= 4) = 1.3e-3). Per-direction figures are kept for the
    evidence (``a_*``: ``player`` with ``opponent`` in, ``b_*`` the reverse).
    ``pairs`` must carry the per-bin lists ``bin_n``, ``bin_r``, ``bin_s``.

    The bins are split by tournament (``bin_t``) and a player's looseness in one tournament is not their
    looseness in the next: with ``sigma2`` > 0 (:func:`bounty_tournament_effect`) each (direction, tournament)
    block of bins shares one draw of a logit-normal effect, integrated exactly per block
    (:func:`overdispersed_sum_sf`). Without it the test was liberal: an honest pair meets mostly in one tournament,
    so all its decisions share that tournament's draw (on mixed-270, -271 and tuning seed 150, 19,902 honest
    pairs: p < 1e-3 1.46x nominal, p < 1e-4 5.5x; standardised counts' variance 1.26, growing with the pair's
    decisions). Without ``bin_t`` (hand-made rows) each direction is one block; without ``sigma2`` the bins are
    independent, as before.
    """
    schema = {"player": pl.Utf8, "opponent": pl.Utf8, "pres_n": pl.Float64, "pres_k": pl.Float64, "pres_e": pl.Float64,
              "pres_p": pl.Float64, "a_n": pl.Float64, "a_k": pl.Float64, "a_e": pl.Float64, "a_own": pl.Float64,
              "b_n": pl.Float64, "b_k": pl.Float64, "b_e": pl.Float64, "b_own": pl.Float64,
              "pres_tournaments": pl.List(pl.Utf8), "pres_hands": pl.List(pl.Utf8)}
    if pairs.is_empty():
        return pl.DataFrame(schema=schema)
    lo = pl.min_horizontal("player", "partner")
    d = pairs.with_columns(x=lo, y=pl.max_horizontal("player", "partner"), fwd=pl.col("player") == lo)
    g = d.group_by(pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(
        pres_n=pl.col("n").sum(), pres_k=pl.col("observed").sum(), pres_e=pl.col("expected").sum(),
        a_n=pl.col("n").filter("fwd").sum(), a_k=pl.col("observed").filter("fwd").sum(),
        a_e=pl.col("expected").filter("fwd").sum(), a_own=pl.col("rate_own").filter("fwd").first(),
        b_n=pl.col("n").filter(~pl.col("fwd")).sum(), b_k=pl.col("observed").filter(~pl.col("fwd")).sum(),
        b_e=pl.col("expected").filter(~pl.col("fwd")).sum(), b_own=pl.col("rate_own").filter(~pl.col("fwd")).first(),
        pres_tournaments=pl.col("tournaments").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls().unique().sort(),
        pres_hands=pl.col("hands").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls().unique().sort(),
    ).sort("player", "opponent").with_row_index("_g")
    if "bin_t" not in d.columns:
        d = d.with_columns(bin_t=pl.col("bin_n").list.eval(pl.lit("")))
    bins = d.select(pl.col("x").alias("player"), pl.col("y").alias("opponent"), pl.col("player").alias("dir"), "bin_n",
                    "bin_r", "bin_s", "bin_t").explode(["bin_n", "bin_r", "bin_s", "bin_t"]).drop_nulls().join(
        g.select("player", "opponent", "_g"), on=["player", "opponent"])
    # a block: one direction of the pair in one tournament (one draw of the player's tournament effect)
    block = (pl.struct("_g", "dir", "bin_t").rank("dense") - 1).cast(pl.Int64)
    bins = bins.with_columns(_b=block if not bins.is_empty() else pl.lit(0, pl.Int64))
    sigma2 = float(pairs["sigma2"].drop_nulls().max() or 0.0) if "sigma2" in pairs.columns else 0.0
    p = overdispersed_sum_sf(bins["_g"].to_numpy(), bins["_b"].to_numpy(), bins["bin_n"].to_numpy(),
                             bins["bin_r"].to_numpy(), bins["bin_s"].to_numpy(), g["pres_k"].to_numpy(),
                             float(np.sqrt(sigma2)))
    return g.with_columns(pl.Series("pres_p", np.clip(p, 1e-300, 1.0))).select(list(schema))


def bounty_wide_cells(rows: pl.DataFrame, *, floor: float = 0.02, context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                      looseness_tau: float | None = BOUNTY_LOOSENESS_TAU, without_partner: bool = True) -> tuple | None:
    """The cells of :func:`bounty_wide_calls`: (the decisions with cards known, their cell columns, the cells with
    the player's own rate ``r`` without the partner, at least ``floor``), or None without such decisions. Compute
    once and pass as ``cells=`` to test several rate ranges of the same rows (the detector's wide calls and the
    rest of its calls) without counting and fitting the offsets again.

    ``without_partner`` (default): ``r`` is the rate over the player's decisions in the cell at which this partner
    was *not* in, each decision once: the player's distinct decisions in the cell (``Dn``, ``Dk`` continuations)
    minus the distinct decisions with the partner in (the pair's ``n``, ``k``: one row per decision and partner), then shrunk by the cell's Beta prior
    (``pa``, ``pb``): r = (Dk - k + pa) / (Dn - n + pa + pb). ``False``: the former baseline, from the rows per
    (decision, other player still in): the player's rows in the cell less the pair's, (K - k), (N - n), scaled by
    Dn / N back to decisions. There a decision with three others in weighs three times, and the decisions in which
    the partner was in stay in it through the other players' rows: a partner present in most of the player's
    decisions (a gang's usual table) is most of the "without the partner" baseline, and the gang's own wide calls
    raise the rate they are held to. Kept reachable to measure the change (see
    :class:`detectors.bounty_collusion.BountyCollusionDetector`)."""
    d = rows.filter(pl.col("strength").is_not_null()) if not rows.is_empty() else rows
    if d.is_empty():
        return None
    bins = ["sdec", "cbin", *(c for c in context if c in d.columns)]
    d = d.with_columns(sdec=(pl.col("strength") * 10).floor().clip(0, 9).cast(pl.Int8), _y=pl.col("cont").cast(pl.Int64),
                       *(pl.col(c).fill_null(-1) for c in bins[2:]))
    t = _bounty_cells(d, bins, looseness_tau)
    if without_partner:
        # the decisions the partner was in, to take out of the player's distinct decisions: the pair's ``n``, ``k``
        # (bounty_presence has one row per (decision, partner), so the pair's rows are its distinct decisions)
        t = t.with_columns(
            r=(((pl.col("Dk") - pl.col("k")).clip(0, None) + pl.col("pa"))
               / ((pl.col("Dn") - pl.col("n")).clip(0, None) + pl.col("pa") + pl.col("pb"))).clip(floor, 1.0))
    else:
        t = t.with_columns(
            r=(((pl.col("K") - pl.col("k")) * pl.col("scale") + pl.col("pa"))
               / ((pl.col("N") - pl.col("n")) * pl.col("scale") + pl.col("pa") + pl.col("pb"))).clip(floor, 1.0))
    return d, bins, t


def bounty_wide_calls(rows: pl.DataFrame, *, max_rate: float = 0.3, floor: float = 0.02, hands: bool = True,
                      min_rate: float = 0.0, context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                      looseness_tau: float | None = BOUNTY_LOOSENESS_TAU, cells: tuple | None = None,
                      without_partner: bool = True) -> pl.DataFrame:
    """Per unordered pair: continuations against a short bounty target that the player's own baseline folds.

    The deviation of a bounty gang is a fold turned into a call: with a hand
    and a price at which the player, without the partner in, folds nearly
    always. Among the :func:`bounty_presence` decisions (cards known), each
    (player, partner) decision is put in a cell of starting-hand decile x price
    bin x ``context`` (default: the position, as :func:`bounty_presence_pairs`
    says why); ``r`` is the player's own rate of continuing in that cell when the
    partner was *not* in (empirical-Bayes shrunk to the population's rate in
    the cell, at least ``floor``). Cells with ``r < max_rate`` are the spots
    where the player's own baseline folds at least 70 % of the time. Per
    unordered pair, both directions pooled: ``wc_k`` continuations in
    ``wc_n`` such decisions against ``wc_e`` = sum of r expected. Under H0
    the count is a sum of independent Bernoullis with different rates (a
    Poisson-binomial); at ``wc_k >= wc_e + 1`` ``wc_p`` is its exact upper tail, the
    cells' binomials convolved (:func:`betabinom_sum_sf` with known rates; Hong, CSDA 2013), below that
    point, where nothing is significant, the larger Poisson tail. (It was the binomial tail at the mean
    rate, P(Bin(wc_n, wc_e / wc_n) >= wc_k): Hoeffding, "On the distribution of the number of successes in
    independent trials", Ann. Math. Stat. 1956, showed it an upper bound, valid but loose where the cells'
    rates differ, as they do from decile to decile.) Only the decisions where a call is
    unlikely for this player are counted: a gang's wide calls are not diluted
    by the premium hands everyone plays nor the trash no one does (the
    likelihood-ratio ordering of Neyman–Pearson; the own-baseline idea of
    :func:`own_baseline`). ``wc_hands``: the hands of those continuations, the
    least likely first (the evidence an investigator opens first);
    ``wc_a_*``/``wc_b_*`` per direction (``player`` with ``opponent`` in, and the reverse).
    ``hands=False`` leaves ``wc_hands`` empty (faster, when only the p-values are needed).
    ``min_rate`` (default 0: every cell below ``max_rate``) keeps only the cells with ``min_rate <= r``:
    ``min_rate=0.3, max_rate=1.01`` is the complement of the default, the decisions where the player's own
    baseline continues at least 30 % of the time (disjoint decisions, so a test independent of the default's).
    ``looseness_tau``: the cells' priors centred on the player's own looseness, as :func:`bounty_presence_pairs`.
    ``cells``: :func:`bounty_wide_cells` of the same ``rows`` (then ``floor``, ``context``, ``looseness_tau`` and
    ``without_partner`` are theirs), to test another rate range without computing them again. ``without_partner``
    (default): ``r`` from the player's distinct decisions without this partner in; False: the former per-row
    baseline (:func:`bounty_wide_cells` says why it changed).
    """
    schema = {"player": pl.Utf8, "opponent": pl.Utf8, "wc_n": pl.Float64, "wc_k": pl.Float64, "wc_e": pl.Float64,
              "wc_p": pl.Float64, "wc_a_n": pl.Float64, "wc_a_k": pl.Float64, "wc_a_e": pl.Float64,
              "wc_b_n": pl.Float64, "wc_b_k": pl.Float64, "wc_b_e": pl.Float64, "wc_hands": pl.List(pl.Utf8)}
    if cells is None:
        cells = bounty_wide_cells(rows, floor=floor, context=context, looseness_tau=looseness_tau,
                                  without_partner=without_partner)
    if cells is None:
        return pl.DataFrame(schema=schema)
    d, bins, t = cells
    t = t.filter((pl.col("r") < max_rate) & (pl.col("r") >= min_rate))
    if t.is_empty():
        return pl.DataFrame(schema=schema)
    lo, hi = pl.min_horizontal("player", "partner"), pl.max_horizontal("player", "partner")
    t = t.with_columns(x=lo, y=hi, fwd=pl.col("player") == lo, e=pl.col("n") * pl.col("r"))
    g = t.group_by(pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(
        wc_n=pl.col("n").sum().cast(pl.Float64), wc_k=pl.col("k").sum().cast(pl.Float64), wc_e=pl.col("e").sum(),
        wc_a_n=pl.col("n").filter("fwd").sum().cast(pl.Float64), wc_a_k=pl.col("k").filter("fwd").sum().cast(pl.Float64),
        wc_a_e=pl.col("e").filter("fwd").sum(),
        wc_b_n=pl.col("n").filter(~pl.col("fwd")).sum().cast(pl.Float64),
        wc_b_k=pl.col("k").filter(~pl.col("fwd")).sum().cast(pl.Float64), wc_b_e=pl.col("e").filter(~pl.col("fwd")).sum(),
    )
    k, e = g["wc_k"].to_numpy(), np.maximum(g["wc_e"].to_numpy(), 1e-9)
    # the exact Poisson-binomial tail where the count is above its mean (each cell's decisions at the cell's own
    # rate, convolved), the Poisson tail below (conservative there, and nothing below the mean is significant)
    p = _st_poisson_sf(k - 1.0, e)
    above = k >= e + 1
    if above.any():
        g = g.with_row_index("_g")
        c = t.join(g.filter(pl.Series(above)).select("_g", x="player", y="opponent"), on=["x", "y"])
        p[above] = betabinom_sum_sf(c["_g"].to_numpy().astype(np.int64), c["n"].to_numpy().astype(float),
                                    c["r"].to_numpy(), np.full(len(c), np.inf), k)[above]
        g = g.drop("_g")
    g = g.with_columns(pl.Series("wc_p", np.clip(p, 1e-300, 1.0)))
    if not hands:
        return g.with_columns(pl.lit([], pl.List(pl.Utf8)).alias("wc_hands")).select(list(schema))
    calls = d.filter(pl.col("cont")).join(t.select("player", "partner", *bins, "r"), on=["player", "partner", *bins])
    where = calls.with_columns(x=lo, y=hi).sort("r", "hand_id").group_by(
        pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(wc_hands=pl.col("hand_id").unique(maintain_order=True))
    return g.join(where, on=["player", "opponent"], how="left").with_columns(
        pl.col("wc_hands").fill_null(pl.lit([], pl.List(pl.Utf8)))).select(list(schema))


def _st_poisson_sf(k: np.ndarray, mu: np.ndarray) -> np.ndarray:
    from scipy.stats import poisson

    return poisson.sf(k, mu)


def bounty_unshadowed(rows: pl.DataFrame, wide: pl.DataFrame, *, max_p: float = 0.01) -> pl.DataFrame:
    """:func:`bounty_presence` rows without the decisions that a player's strongest partner explains.

    A colluder who calls wide whenever the partner is in also calls wide with
    every third player who happens to be in those hands: pair tests alone
    would accuse the bystander. Each player's *strongest partner* is the one
    of smallest :func:`bounty_wide_calls` p-value (if at most ``max_p``); a
    (decision, partner) row is dropped when the player's strongest partner was
    also still in at that decision and is not this partner. The pair then
    keeps only the decisions that the stronger pair cannot explain (the
    explaining-away of a conditional test: is C's presence informative
    given B's?). The strongest pair itself loses nothing.
    """
    best = bounty_strongest_partner(wide, max_p=max_p)
    if rows.is_empty() or best.is_empty():
        return rows
    shadowed = rows.join(best, on="player").filter(pl.col("partner") == pl.col("best")).select(
        "hand_id", "seq", "player", "best").unique()
    return rows.join(shadowed, on=["hand_id", "seq", "player"], how="left").filter(
        pl.col("best").is_null() | (pl.col("partner") == pl.col("best"))).drop("best")


def bounty_strongest_partner(wide: pl.DataFrame, *, max_p: float = 0.01) -> pl.DataFrame:
    """Each player's partner of smallest :func:`bounty_wide_calls` p-value, where it is at most ``max_p``.

    Returns ``player``, ``best`` (ties: the first name), for :func:`bounty_unshadowed` and ``bounty_pairs(best=)``.
    """
    if wide.is_empty():
        return pl.DataFrame(schema={"player": pl.Utf8, "best": pl.Utf8})
    both = pl.concat([
        wide.select("player", pl.col("opponent").alias("best"), "wc_p"),
        wide.select(pl.col("opponent").alias("player"), pl.col("player").alias("best"), "wc_p"),
    ]).filter(pl.col("wc_p") <= max_p)
    return both.sort("wc_p", "best").group_by("player", maintain_order=True).first().select("player", "best")
