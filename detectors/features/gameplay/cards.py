"""Card arrays and what the cards are worth: equity, strength, starting-hand percentiles (Hold'em, Omaha).

Cards are valued as additive hand states (:func:`datasets.cards.hand_state`): the known cards' state is
built once per row and each drawn card's state added to it.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from datasets import cards as _cards

CARD_INDEX = {_cards.card_str(i): i for i in range(52)}


# every card's text at position 2 * code: a card text (rank then suit, disjoint alphabets) is only found there
_DECK_TEXT = "".join(_cards.card_str(i) for i in range(52))


def _card_codes_sql(cards: str) -> str:
    """SQL: a list of card texts such as ['Ah', 'Kd'] as TINYINT codes (:mod:`datasets.cards`), -1 where not a card."""
    pos = f"instr('{_DECK_TEXT}', c)"
    return f"list_transform({cards}, lambda c: CAST(CASE WHEN length(c) = 2 AND {pos} % 2 = 1 THEN ({pos} - 1) // 2 ELSE -1 END AS TINYINT))"




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
    """Preflop strength of (n, 2) Hold'em hole-card codes: the starting hand's percentile among the 169 classes
    (:func:`preflop_percentile_table`; suited at ``[lo][hi]``, offsuit and pairs at ``[hi][lo]``)."""
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
