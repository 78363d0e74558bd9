"""All-in equity: each player's share of the pot if the board were run out.

:func:`equity` for one hand (exact enumeration of the run-outs when they are
few, else Monte Carlo), :func:`equity_batch` for many hands at once; both
value the run-outs with :func:`datasets.cards.evaluate_batch` (or
:func:`datasets.cards.evaluate_omaha_batch` for Omaha).
"""

from __future__ import annotations

from itertools import combinations
from math import comb
from typing import Sequence

import numpy as np

from datasets.cards import evaluate_batch, evaluate_omaha_batch


def equity(
    hole_cards_by_player: Sequence[Sequence[int]],
    board: Sequence[int],
    rng: np.random.Generator | None = None,
    n: int = 2000,
    *,
    game: str = "holdem",
    dead: Sequence[int] = (),
    exact_limit: int = 2000,
) -> np.ndarray:
    """Each player's share of the pot if the board were run out: ``(players,)`` floats summing to 1.

    Ties split the share equally.  The missing board cards are enumerated
    exactly when there are at most ``exact_limit`` run-outs (always on the
    turn and river, and on the flop: C(45,2) = 990), otherwise ``n`` run-outs
    are drawn at random without replacement from the unseen cards (Monte
    Carlo, preflop).  All run-outs are valued at once with
    :func:`evaluate_batch` (or :func:`evaluate_omaha_batch` when ``game`` is
    ``'omaha'``/``'omaha5'``, or when the hole cards have four or more cards).
    """
    holes = [list(h) for h in hole_cards_by_player]
    board = list(board)
    used = set(board) | set(dead)
    for h in holes:
        used.update(h)
    deck = np.array([c for c in range(52) if c not in used], dtype=np.int64)
    k = 5 - len(board)
    if k < 0:
        raise ValueError("board has more than five cards")
    if k == 0:
        runs = np.empty((1, 0), dtype=np.int64)
    elif comb(len(deck), k) <= exact_limit:
        runs = np.array(list(combinations(range(len(deck)), k)), dtype=np.int64)
        runs = deck[runs]
    else:
        if rng is None:
            rng = np.random.default_rng()
        runs = deck[np.argsort(rng.random((n, len(deck))), axis=1)[:, :k]]
    m = runs.shape[0]
    full_board = np.concatenate([np.broadcast_to(np.array(board, dtype=np.int64), (m, len(board))), runs], axis=1)
    omaha = game in ("omaha", "omaha5") or any(len(h) >= 4 for h in holes)
    vals = np.empty((len(holes), m), dtype=np.int64)
    for i, h in enumerate(holes):
        hh = np.broadcast_to(np.array(h, dtype=np.int64), (m, len(h)))
        if omaha:
            vals[i] = evaluate_omaha_batch(hh, full_board)
        else:
            vals[i] = evaluate_batch(np.concatenate([hh, full_board], axis=1))
    best = vals.max(axis=0)
    win = vals == best
    share = win / win.sum(axis=0)
    return share.mean(axis=1)


def equity_batch(
    holes: np.ndarray,
    boards: np.ndarray,
    rng: np.random.Generator | None = None,
    n: int = 500,
    *,
    game: str = "holdem",
    exact_max_cards: int = 1,
    max_rows: int = 2_000_000,
) -> np.ndarray:
    """All-in pot shares of many hands at once: ``(m, players, h)`` hole cards, ``(m, b)`` boards -> ``(m, players)``.

    Every hand of a call has the same number of players, hole cards and board
    cards ``b`` (group hands by street before calling).  With at most
    ``exact_max_cards`` cards to come (default: turn and river) every run-out
    of the unseen cards is enumerated; otherwise ``n`` run-outs per hand are
    drawn without replacement (random keys on the unseen cards, sorted).  The
    unseen cards of each hand are found from a used-card mask; all run-outs
    of all hands are valued with :func:`evaluate_batch` /
    :func:`evaluate_omaha_batch` in chunks of at most ``max_rows`` rows; ties
    split the share.  Row ``i`` equals ``equity(holes[i], boards[i])`` for
    the exact cases and estimates it otherwise.
    """
    holes = np.asarray(holes, dtype=np.int64)
    boards = np.asarray(boards, dtype=np.int64).reshape(holes.shape[0], -1)
    m, p, h = holes.shape
    b = boards.shape[1]
    k = 5 - b
    if k < 0:
        raise ValueError("boards have more than five cards")
    omaha = game in ("omaha", "omaha5") or h >= 4
    used = np.zeros((m, 52), dtype=bool)
    rows = np.arange(m)[:, None]
    used[rows, holes.reshape(m, -1)] = True
    if b:
        used[rows, boards] = True
    n_unseen = 52 - p * h - b
    # unseen cards of each hand, ascending: stable sort puts unused (False) first
    unseen = np.argsort(used, axis=1, kind="stable")[:, :n_unseen]
    if k == 0:
        runs_idx = None
        per = 1
    elif k <= exact_max_cards:
        runs_idx = np.array(list(combinations(range(n_unseen), k)), dtype=np.int64)
        per = runs_idx.shape[0]
    else:
        runs_idx = None
        per = n
        if rng is None:
            rng = np.random.default_rng()
    out = np.zeros((m, p), dtype=np.float64)
    step = max(1, max_rows // per)
    for lo in range(0, m, step):
        hi = min(m, lo + step)
        mm = hi - lo
        if k == 0:
            run_cards = np.empty((mm, 1, 0), dtype=np.int64)
        elif runs_idx is not None:
            run_cards = unseen[lo:hi][:, runs_idx]  # (mm, per, k)
        else:
            order = np.argsort(rng.random((mm, per, n_unseen)), axis=2)[:, :, :k]
            run_cards = np.take_along_axis(unseen[lo:hi][:, None, :].repeat(per, axis=1), order, axis=2)
        full_board = np.concatenate(
            [np.broadcast_to(boards[lo:hi][:, None, :], (mm, per, b)), run_cards], axis=2).reshape(mm * per, 5)
        vals = np.empty((p, mm * per), dtype=np.int64)
        for j in range(p):
            hj = np.broadcast_to(holes[lo:hi, j][:, None, :], (mm, per, h)).reshape(mm * per, h)
            if omaha:
                vals[j] = evaluate_omaha_batch(hj, full_board)
            else:
                vals[j] = evaluate_batch(np.concatenate([hj, full_board], axis=1))
        win = vals == vals.max(axis=0)
        share = win / win.sum(axis=0)
        out[lo:hi] = share.reshape(p, mm, per).mean(axis=2).T
    return out
