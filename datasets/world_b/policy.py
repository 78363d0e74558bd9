"""How world B's players decide: honest styles and the colluders' departures from them.

An :class:`Agent` holds one person's style (VPIP, share of raises, aggression,
calling stickiness, bluffing, bet size) and decision-time profile. Preflop it
ranks its two cards by Chen's score percentile (:func:`cards.preflop_pct`) and
plays the top ``vpip`` of hands, tighter facing a raise; postflop it maps the
made hand (and flush draws) to a rough equity and compares it with the pot
odds. State that moves within a session: ``tilt`` (looser and more aggressive
after a big loss, decays), ``fatigue`` (looser and slower late), and a
regular's loosening when a player it marks as weak is in the hand.

Colluders carry ``rules``: {partner name: role}. Roles: ``soft`` (no bets or
raises into the partner, folds to his bets on the agreed streets),
``dump``/``recv`` (the dumper enters pots with the receiver and bets then
folds to his raise, or shoves into him; the receiver raises the dumper), and
``gang`` (knockout gang: soft play, plus a short member shoves into a
partner who calls so the bounty stays in the gang).
"""

from __future__ import annotations

import math

from . import cards as C


class Agent:
    """One person's way of playing; ``decide(g, i, rng)`` returns (code, to)."""

    __slots__ = ("vpip", "pfr", "aggr", "sticky", "bluff", "size", "ms_mu", "ms_sigma", "tilt", "fatigue",
                 "weak", "hunts_weak", "rules", "p_soft", "soft_streets", "p_dump", "dump_big",
                 "p_gang_call", "feed_bb", "style")

    def __init__(self, rng, style: str):
        base = {"nit": (0.13, 0.75, 1.2, 0.2), "tag": (0.22, 0.75, 2.2, 0.3), "lag": (0.32, 0.7, 3.0, 0.35),
                "rec": (0.42, 0.35, 0.9, 0.6), "station": (0.55, 0.2, 0.6, 0.85), "maniac": (0.6, 0.6, 3.5, 0.5)}
        v, p, a, s = base[style]
        self.style = style
        self.vpip = min(0.85, max(0.08, v * math.exp(rng.normal(0, 0.15))))
        self.pfr = min(0.95, max(0.1, p + rng.normal(0, 0.08)))
        self.aggr = max(0.3, a * math.exp(rng.normal(0, 0.2)))
        self.sticky = min(0.95, max(0.05, s + rng.normal(0, 0.08)))
        self.bluff = min(0.4, max(0.0, 0.06 * self.aggr + rng.normal(0, 0.03)))
        self.size = min(1.1, max(0.33, rng.normal(0.6, 0.15)))
        self.ms_mu = math.log(rng.uniform(1500, 6000))
        self.ms_sigma = rng.uniform(0.35, 0.8)
        self.tilt = 0.0
        self.fatigue = 0.0
        self.weak = style in ("rec", "station", "maniac")
        self.hunts_weak = style in ("tag", "lag") and rng.random() < 0.6
        self.rules = {}
        self.p_soft, self.soft_streets, self.p_dump, self.dump_big = 0.0, (0, 1, 2, 3), 0.0, False
        self.p_gang_call, self.feed_bb = 0.0, 0.0

    def copy_style(self, other: "Agent") -> None:
        """Take another person's style and timing (a multi-account's second login)."""
        for k in ("vpip", "pfr", "aggr", "sticky", "bluff", "size", "ms_mu", "ms_sigma", "weak", "hunts_weak",
                  "style"):
            setattr(self, k, getattr(other, k))

    def ms(self, rng, code: str) -> int:
        """Milliseconds this decision took."""
        slow = 1.0 + 0.6 * self.fatigue + (0.4 if code in ("r", "b") else 0.0)
        return int(min(29000, 250 + math.exp(rng.normal(self.ms_mu, self.ms_sigma)) * slow))

    def decide(self, g, i, rng):
        """(code, to): f fold, k check, c call, b bet, r raise; ``to`` is this street's total."""
        if self.rules:
            r = _collude(self, g, i, rng)
            if r is not None:
                return r
        if g.street == 0:
            return _preflop(self, g, i, rng)
        return _postflop(self, g, i, rng)


def _loose(a: Agent, g, i) -> float:
    v = a.vpip * (1.0 + 0.8 * a.tilt + 0.25 * a.fatigue)
    if a.hunts_weak and any(getattr(g.agents[j], "weak", False) for j in range(g.n) if j != i and not g.folded[j]):
        v *= 1.35
    return min(0.9, v)


def _preflop(a: Agent, g, i, rng):
    pct = C.preflop_pct(*g.hole[i])
    bb = g.bb
    to_call = g.cur - g.bet[i]
    v = _loose(a, g, i)
    stack_bb = (g.stack[i] + g.bet[i]) / bb
    raised = g.cur > bb
    if raised:
        call_thr, raise_thr = 1 - v * (0.45 + 0.3 * a.sticky), 1 - v * a.pfr * 0.25
    else:
        call_thr, raise_thr = 1 - v, 1 - v * a.pfr
    if pct >= raise_thr and rng.random() < 0.85:
        if stack_bb < 14 or (raised and g.cur > 0.3 * (g.stack[i] + g.bet[i])):
            return "r", g.stack[i] + g.bet[i]
        to = g.cur * 3 if raised else int(bb * (2.5 + rng.random())) + bb * g.raises
        return "r", to
    if pct >= call_thr:
        if to_call > 0.4 * g.stack[i] and pct < 1 - v * 0.3:
            return "f", 0
        return "c", 0
    return "f", 0


def equity(hole, board) -> float:
    """Rough strength in [0, 1] of hole cards on a board: made hand over the board's own, plus flush draws."""
    sc = C.evaluate(hole + board)
    cat = sc >> 20
    bcat = C.evaluate(board) >> 20
    if cat == bcat and cat < C.STRAIGHT:
        e = 0.12
    elif cat == C.PAIR:
        pr = (sc >> 16) & 0xF
        e = 0.64 if pr >= max(c >> 2 for c in board) else 0.42
    else:
        e = (0.12, 0.5, 0.75, 0.85, 0.88, 0.9, 0.96, 0.99, 1.0)[cat]
    if len(board) < 5 and cat < C.FLUSH:
        for s in range(4):
            k = sum(1 for c in board if c & 3 == s)
            if k + sum(1 for c in hole if c & 3 == s) == 4 and k < 4:
                e += 0.2
                break
    return min(e, 1.0)


def _postflop(a: Agent, g, i, rng):
    e = equity(g.hole[i], g.board) + 0.15 * a.tilt
    to_call = g.cur - g.bet[i]
    pot = g.pot()
    if to_call <= 0:
        if e > 0.6 - 0.04 * a.aggr or rng.random() < a.bluff:
            return "b", int(pot * a.size * (0.8 + 0.4 * rng.random()))
        return "k", 0
    odds = to_call / (pot + to_call)
    if e > 0.82 and rng.random() < 0.25 * a.aggr:
        return "r", g.cur * 3
    if e + 0.25 * a.sticky > odds + 0.3 or (e > 0.55 and to_call < g.stack[i] * 0.5):
        return "c", 0
    return "f", 0


def _collude(a: Agent, g, i, rng):
    """A colluder's departure from its honest play, or None to play honestly."""
    opp = [j for j in range(g.n) if j != i and not g.folded[j]]
    mates = [j for j in opp if g.names[j] in a.rules]
    if not mates:
        return None
    to_call = g.cur - g.bet[i]
    lead = g.last_bettor if g.street > 0 else g.aggressor
    for j in mates:
        role = a.rules[g.names[j]]
        if role == "dump" and rng.random() < a.p_dump:
            if a.dump_big and g.street == 0:
                return "r", g.stack[i] + g.bet[i]
            if to_call > 0 and lead == j and g.street > 0:
                return "f", 0
            if g.street == 0:
                return ("c", 0) if to_call > 0 else ("k", 0)
            if to_call == 0 and len(opp) == 1:
                return "b", int(g.pot() * (0.7 + 0.5 * rng.random()))
        if role == "recv" and lead == j and to_call > 0 and rng.random() < a.p_dump:
            if g.allin[j]:
                return "c", 0
            return "r", g.cur * 2 + g.bb
        if role == "gang":
            if g.allin[j] and lead == j and rng.random() < a.p_gang_call:
                return "c", 0
            stack_bb = (g.stack[i] + g.bet[i]) / g.bb
            if stack_bb < a.feed_bb and g.street == 0 and rng.random() < a.p_gang_call:
                return "r", g.stack[i] + g.bet[i]
        if role in ("soft", "gang") and g.street in a.soft_streets and rng.random() < a.p_soft:
            if to_call > 0 and lead == j:
                e = equity(g.hole[i], g.board) if g.street else C.preflop_pct(*g.hole[i])
                return ("c", 0) if e > 0.9 else ("f", 0)
            if to_call == 0 and g.street > 0:
                return "k", 0
    return None
