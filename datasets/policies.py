"""How honest synthetic players decide, and how long they take.

Method, hand strength (cheap estimates).

* Preflop hold'em: the Chen formula scores each of the 1326 starting combos;
  a combo's *percentile* is the share of combos scoring strictly higher plus
  half the ties, so ``pct < 0.2`` means "a top-20 % hand". Players play a hand
  when its percentile is below their (position-adjusted) VPIP.
* Preflop Omaha: a heuristic score (pairs, suitedness, connectedness, high
  cards, penalties for trips/quads); percentiles come from 20,000 random
  hands drawn once with a fixed seed.
* Postflop: *hand strength* is the share of sampled random opponent holdings
  that the hand beats or ties (half) on the current board, with the
  evaluator from :mod:`datasets.cards` (Monte Carlo with ``n`` samples, default
  16); *draw* adds the chance-weighted value of flush and open-ended straight
  draws on the flop and turn. The result, ``effective = hs + draw bonus``,
  drives betting, calling and folding.

Method, decisions (:class:`HonestPolicy`). Preflop a player plays hands whose
percentile is under their VPIP (raising under their PFR), widened on the
button and cut-off and narrowed in early position (more so for skilled
players); facing a raise they continue with a narrower range, 3-bet with the
top of it (their 3-bet share), and weigh the price (pot odds). Short stacks
in tournaments play push/fold with ranges that widen as the stack shrinks.
Honest habits that look like collusion to a naive eye are kept on
purpose: a dry side pot is checked down when a third player is all-in, and
short stacks with a bounty get looser calls in knockouts. Postflop the
multiway-adjusted strength (``hs ** opponents`` plus draws) is
compared with thresholds set by aggression; weak hands are bet as bluffs with
the player's bluff frequency; the preflop raiser continuation-bets the flop
with much of their range; facing a bet the player calls when
strength (plus stickiness) beats the pot odds, raises strong hands with their
aggression, folds otherwise. Bet sizes are the player's mean fraction of the
pot with their own spread. Every choice carries some randomness.

Method, timing. Each decision takes ``median * exp(sigma * z)`` ms from the
player's own lognormal (:class:`~datasets.population.Timing`), times ``fast``
for easy preflop folds, ``big`` for big decisions (facing or making a bet of
a third of the stack or more), ``mobile`` on a phone; clipped to
250 ms .. 30 s (the time bank). A disconnected player times out after 15-30 s
and is checked or folded.
"""

from __future__ import annotations

import bisect
import math as _math
import random
from itertools import combinations

from datasets.cards import evaluate, evaluate_omaha
from datasets.records import Action, DecisionView
from datasets.population import Style, Timing


def _chen(r1: int, r2: int, suited: bool) -> float:
    """Chen formula score (ranks 0 = deuce .. 12 = ace)."""
    hi, lo = max(r1, r2), min(r1, r2)
    pts = {12: 10.0, 11: 8.0, 10: 7.0, 9: 6.0}.get(hi, (hi + 2) / 2.0)
    if hi == lo:
        return max(5.0, pts * 2)
    if suited:
        pts += 2
    gap = hi - lo - 1
    pts -= [0, 1, 2, 4][gap] if gap < 4 else 5
    if gap <= 1 and hi < 10:
        pts += 1
    return pts


def _build_holdem_table() -> list[list[float]]:
    combos = []
    for a, b in combinations(range(52), 2):
        r1, r2 = a >> 2, b >> 2
        suited = (a & 3) == (b & 3)
        combos.append((_chen(r1, r2, suited) + max(r1, r2) * 0.01 + min(r1, r2) * 0.001, r1, r2, suited))
    scores = sorted(c[0] for c in combos)
    n = len(scores)
    table = [[0.0] * 13 for _ in range(13)]  # [hi][lo] offsuit, [lo][hi] suited, diagonal pairs
    for s, r1, r2, suited in combos:
        above = n - bisect.bisect_right(scores, s)
        ties = bisect.bisect_right(scores, s) - bisect.bisect_left(scores, s)
        pct = (above + ties / 2) / n
        hi, lo = max(r1, r2), min(r1, r2)
        if suited:
            table[lo][hi] = pct
        else:
            table[hi][lo] = pct
    return table


_HOLDEM_PCT = _build_holdem_table()


def holdem_percentile(c1: int, c2: int) -> float:
    """Share of starting hands better than ``c1 c2`` (0 = aces, ~1 = seven-deuce)."""
    r1, r2 = c1 >> 2, c2 >> 2
    hi, lo = (r1, r2) if r1 >= r2 else (r2, r1)
    if (c1 & 3) == (c2 & 3) and hi != lo:
        return _HOLDEM_PCT[lo][hi]
    return _HOLDEM_PCT[hi][lo]


def _omaha_score(cards) -> float:
    ranks = sorted((c >> 2 for c in cards), reverse=True)
    suits = [c & 3 for c in cards]
    score = sum(r for r in ranks) * 0.3
    counts = {r: ranks.count(r) for r in set(ranks)}
    for r, k in counts.items():
        if k == 2:
            score += 4 + r * 0.6
        elif k >= 3:
            score -= 4
    scount = {s: suits.count(s) for s in set(suits)}
    suited_pairs = sum(1 for k in scount.values() if k == 2)
    score += 3 * suited_pairs
    for s, k in scount.items():
        if k == 2:
            top = max(c >> 2 for c in cards if c & 3 == s)
            if top == 12:
                score += 2
        if k >= 3:
            score += 1
    uniq = sorted(set(ranks))
    span = uniq[-1] - uniq[0] if len(uniq) > 1 else 0
    if len(uniq) >= 3 and span <= 4:
        score += 4
    elif len(uniq) >= 3 and span <= 6:
        score += 1.5
    return score


def _build_omaha_table(n: int = 20000) -> list[float]:
    rng = random.Random(20260302)
    deck = list(range(52))
    return sorted(_omaha_score(rng.sample(deck, 4)) for _ in range(n))


_OMAHA_SCORES = _build_omaha_table()


def omaha_percentile(cards) -> float:
    """Share of random four-card Omaha hands scoring higher than ``cards``."""
    s = _omaha_score(cards)
    n = len(_OMAHA_SCORES)
    return (n - bisect.bisect_right(_OMAHA_SCORES, s)) / n


def preflop_percentile(hole) -> float:
    if len(hole) == 2:
        return holdem_percentile(hole[0], hole[1])
    return omaha_percentile(hole)


def _draw_bonus(hole, board) -> float:
    """Value of flush and open-ended straight draws that use a hole card (flop/turn only)."""
    if len(board) >= 5:
        return 0.0
    cards = list(hole) + list(board)
    bonus = 0.0
    for s in range(4):
        n_all = sum(1 for c in cards if c & 3 == s)
        if n_all == 4 and any(c & 3 == s for c in hole):
            bonus += 0.18 if len(board) == 3 else 0.10
            break
    mask = 0
    for c in cards:
        mask |= 1 << (c >> 2)
    if mask & (1 << 12):
        mask |= 1 << 13  # ace plays low too
    hole_mask = 0
    for c in hole:
        hole_mask |= 1 << (c >> 2)
    for lo in range(0, 10):
        window = 0b1111 << lo
        if mask & window == window and hole_mask & window:
            bonus += 0.12 if len(board) == 3 else 0.07
            break
    return bonus


_DECK = tuple(range(52))


def postflop_strength(hole, board, rng: random.Random, n: int = 16, omaha: bool = False) -> tuple[float, float]:
    """``(hs, draw)``: share of ``n`` random opponent hands beaten on ``board`` and the draw bonus."""
    dead = set(hole)
    dead.update(board)
    deck = [c for c in _DECK if c not in dead]
    k = len(hole)
    if omaha:
        mine = evaluate_omaha(hole, board)
    else:
        mine = evaluate(list(hole) + list(board))
    wins = 0.0
    board_l = list(board)
    m = len(deck)
    rand = rng.random
    for _ in range(n):
        # k distinct cards by partial Fisher-Yates on the remaining deck
        for j in range(k):
            r = j + int(rand() * (m - j))
            deck[j], deck[r] = deck[r], deck[j]
        opp = deck[:k]
        theirs = evaluate_omaha(opp, board) if omaha else evaluate(opp + board_l)
        if mine > theirs:
            wins += 1
        elif mine == theirs:
            wins += 0.5
    return wins / n, _draw_bonus(hole, board)


# ----------------------------------------------------------------------------
# Decisions



def capped(view: DecisionView, a: Action) -> Action:
    """A raise past the table's raise cap (``table['raise_cap']`` = bets a round, heads-up) becomes a call."""
    cap = view.table.get("raise_cap") if view.table else None
    if cap and a.kind in ("bet", "raise"):
        limit = cap[1] if view.n_players == 2 else cap[0]
        if view.n_bets >= limit:
            return Action("call" if view.to_call > 0 else "check")
    return a


class DecisionLog:
    """Decision times of one hand: ``(seq, player, ms)`` for each policy call."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: list[tuple[int, str, int]] = []

    def clear(self) -> None:
        self.rows.clear()


class HonestPolicy:
    """An honest player's decisions and decision times (see the module docstring).

    ``log`` receives ``(action seq, player, ms)`` for each decision so the
    world can write ``decision`` events; ``style``/``timing`` may be swapped
    (a seat hand-off) by assigning new ones.
    """

    __slots__ = ("style", "timing", "rng", "log", "mobile", "_cache_key", "_cache_val", "_pre_key", "_pre_val", "name")

    def __init__(self, name: str, style: Style, timing: Timing, rng: random.Random, log: DecisionLog, mobile: bool = False):
        self.name = name
        self.style = style
        self.timing = timing
        self.rng = rng
        self.log = log
        self.mobile = mobile
        self._cache_key = None
        self._cache_val = (0.0, 0.0)
        self._pre_key = None
        self._pre_val = 0.5

    # -- strength, cached per hand and street
    def preflop_pct(self, view: DecisionView) -> float:
        if self._pre_key != view.hand_id:
            self._pre_key = view.hand_id
            self._pre_val = preflop_percentile(view.hole)
        return self._pre_val

    def postflop(self, view: DecisionView) -> tuple[float, float]:
        key = (view.hand_id, len(view.board))
        if self._cache_key != key:
            self._cache_key = key
            omaha = view.game != "holdem"
            self._cache_val = postflop_strength(view.hole, view.board, self.rng, n=6 if omaha else 10, omaha=omaha)
        return self._cache_val

    # -- timing
    def think_ms(self, view: DecisionView, action: Action) -> int:
        t = self.timing
        ms = t.median_ms * _math.exp(t.sigma * self.rng.gauss(0.0, 1.0))
        big = view.to_call * 3 >= view.stack or (action.kind in ("bet", "raise") and (action.amount_to - view.street_bet) * 3 >= view.stack)
        if big:
            ms *= t.big
        elif view.street == 0 and action.kind == "fold":
            ms *= t.fast
        if view.street == 3:
            ms *= 1.15
        if self.mobile:
            ms *= t.mobile
        return int(250 if ms < 250 else 30000 if ms > 30000 else ms)

    def act(self, view: DecisionView) -> Action:
        if view.table and view.player in view.table.get("disconnected", ()):
            return self.time_out(view)
        a = capped(view, self.decide(view))
        self.log.rows.append((len(view.history), view.player, self.think_ms(view, a)))
        return a

    def time_out(self, view: DecisionView) -> Action:
        """A disconnected player: the clock and the time bank run out, then check or fold."""
        self.log.rows.append((len(view.history), view.player, int(self.rng.uniform(15_000, 30_000))))
        return Action("check" if view.can_check else "fold", timed_out=True)

    # -- sizing
    def _size_to(self, view: DecisionView, frac: float) -> int:
        """A bet/raise total for a ``frac``-of-pot bet (NL/PL), clamped to the legal range."""
        if view.limit == "fixed_limit":
            return view.min_raise_to
        s = self.style
        f = max(0.25, self.rng.gauss(frac, s.size_noise))
        if view.to_call > 0:
            pot_after_call = view.pot + view.to_call
            to = view.current_bet + int(pot_after_call * f)
        else:
            to = view.street_bet + int(view.pot * f)
        if to < view.min_raise_to:
            to = view.min_raise_to
        if to > view.max_raise_to:
            to = view.max_raise_to
        # leave no silly remainder: commit when the rest would be under a third of the pot
        if view.max_raise_to - to < view.pot * 0.3:
            to = view.max_raise_to
        return to

    def _preflop_raise_to(self, view: DecisionView) -> int:
        if view.limit == "fixed_limit":
            return view.min_raise_to
        bb = view.big_blind
        rng = self.rng
        if view.current_bet <= bb:  # open
            limpers = sum(1 for p, b in view.bets.items() if b >= bb) - 1
            to = int(bb * (rng.choice((2.0, 2.2, 2.5, 2.5, 3.0, 3.0, 3.5)) + max(0, limpers)))
        else:
            to = int(view.current_bet * rng.uniform(2.6, 3.4))
        if to < view.min_raise_to:
            to = view.min_raise_to
        if to > view.max_raise_to:
            to = view.max_raise_to
        if view.max_raise_to - to < 2.5 * bb or to * 2.5 > view.stack + view.street_bet:
            to = view.max_raise_to  # short: just shove
        return to

    def decide(self, view: DecisionView) -> Action:
        if view.street == 0:
            return self._preflop(view)
        return self._postflop(view)

    def _pos_factor(self, view: DecisionView) -> float:
        n = view.n_players
        p = view.pos_index
        if n <= 2:
            return 1.5
        if p == 0:
            f = 1.45
        elif p == n - 1:
            f = 1.25
        elif p == 1:
            f = 0.9
        elif p == 2:
            f = 1.0
        else:
            f = 0.7 + 0.35 * (p - 3) / max(1, n - 4)
        sk = self.style.skill
        return 1.0 + (f - 1.0) * (0.4 + sk)

    def _preflop(self, view: DecisionView) -> Action:
        s = self.style
        rng = self.rng
        pct = self.preflop_pct(view)
        bb = view.big_blind
        eff_bb = (view.stack + view.street_bet) / bb if bb else 100.0
        pf = self._pos_factor(view)
        noise = rng.uniform(0.85, 1.15)
        # short-stack push/fold (mostly tournaments)
        if eff_bb <= 12 and view.limit == "no_limit":
            push = min(0.65, (0.09 + 0.6 / max(eff_bb, 1.0)) * (0.6 + s.vpip * 1.6)) * pf * noise
            if view.to_call <= 0 or view.current_bet <= bb:
                if pct < push:
                    return Action("raise", view.max_raise_to)
                return Action("check") if view.can_check else Action("fold")
            call_range = push * (0.6 + s.sticky * 0.5)
            bounties = view.table.get("bounties") if view.table else None
            if bounties and view.facing_player and bounties.get(view.facing_player):
                call_range *= 1.4  # the bounty pays for a loose call (honest and common in knockouts)
            if view.to_call * 2 <= bb and pct < 0.7:
                return Action("call")
            return Action("call") if pct < call_range else Action("fold")
        if view.current_bet <= bb:  # unopened (maybe limped)
            if pct < s.pfr * pf * noise and view.can_raise:
                return Action("raise", self._preflop_raise_to(view))
            if pct < s.vpip * pf * noise:
                if view.can_check:
                    return Action("check")
                if rng.random() < 1.0 - s.aggression * 0.6 or view.to_call * 2 <= bb:
                    return Action("call")
                return Action("fold")
            return Action("check") if view.can_check else Action("fold")
        # facing a raise
        raises = view.n_bets - 1
        price = view.to_call / max(1, view.pot + view.to_call)
        if raises <= 1:
            top = s.three_bet * pf * noise
            cont = s.vpip * (0.45 + 0.35 * s.sticky) * pf * noise * (1.2 - price)
            if pct < top and view.can_raise:
                return Action("raise", self._preflop_raise_to(view))
            if pct < cont:
                return Action("call")
            if view.to_call * 6 <= view.pot and pct < s.vpip * 1.3:
                return Action("call")
            return Action("fold")
        # facing a 3-bet or more
        if pct < 0.025 + s.aggression * 0.01 and view.can_raise:
            return Action("raise", view.max_raise_to if rng.random() < 0.5 else self._preflop_raise_to(view))
        if pct < 0.06 + s.sticky * 0.04 + (0.05 if price < 0.25 else 0.0):
            return Action("call")
        return Action("fold")

    @staticmethod
    def _was_preflop_aggressor(view: DecisionView) -> bool:
        last = None
        for a in view.history:
            if a.street > 0:
                break
            if a.kind == "raise":
                last = a.player
        return last == view.player

    def _postflop(self, view: DecisionView) -> Action:
        s = self.style
        rng = self.rng
        hs, draw = self.postflop(view)
        opp = max(1, len(view.in_hand) - 1)
        eq = hs ** (1 + 0.7 * (opp - 1)) + draw * (0.7 + 0.3 * s.skill)
        eq += rng.gauss(0.0, 0.06 * (1.2 - s.skill))
        if view.to_call <= 0:
            if len(view.in_hand) >= 3 and any(view.stacks.get(p, 1) == 0 for p in view.in_hand if p != view.player):
                # a third player is all-in: the side pot is checked down unless we hold the nuts (everyone does)
                if eq > 0.93 and rng.random() < 0.5 and view.can_raise:
                    return Action("bet", self._size_to(view, s.bet_size))
                return Action("check")
            value_line = 0.70 - 0.2 * s.aggression
            if eq > value_line and rng.random() < 0.45 + 0.5 * s.aggression and view.can_raise:
                return Action("bet", self._size_to(view, s.bet_size * (1.15 if eq > 0.9 else 1.0)))
            if view.street == 1 and view.can_raise and opp <= 2 and self._was_preflop_aggressor(view):
                # continuation bet: the preflop raiser bets the flop with much of their range
                if rng.random() < 0.25 + 0.5 * s.aggression:
                    return Action("bet", self._size_to(view, s.bet_size * 0.85))
            if eq < 0.35 and rng.random() < s.bluff * (1.6 if opp == 1 else 0.6) and view.can_raise:
                return Action("bet", self._size_to(view, s.bet_size))
            if draw > 0 and rng.random() < s.aggression * 0.5 and view.can_raise:
                return Action("bet", self._size_to(view, s.bet_size))
            return Action("check")
        price = view.to_call / max(1, view.pot + view.to_call)
        big = view.to_call * 2 >= view.stack
        if eq > 0.86 and view.can_raise and rng.random() < 0.25 + 0.6 * s.aggression:
            return Action("raise", self._size_to(view, s.bet_size * 1.1))
        if eq < 0.3 and view.can_raise and opp == 1 and rng.random() < s.bluff * 0.25:
            return Action("raise", self._size_to(view, s.bet_size))
        need = price + 0.12 + 0.05 * view.street + 0.08 * (1 - s.skill) + (0.08 if big else 0.0)
        if eq + 0.15 * s.sticky > need:
            return Action("call")
        if view.limit == "fixed_limit" and eq + 0.25 * s.sticky > price:
            return Action("call")
        return Action("fold")
