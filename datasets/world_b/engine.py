"""World B's table engine: one hand of No Limit Hold'em from the deal to the pot.

:func:`play_hand` deals, posts antes and blinds, runs the four betting rounds
(asking each seat's agent through ``decide(g, i)``), returns uncalled bets,
builds main and side pots from the contributions, takes the cash-game rake
(no flop, no drop; percentage rounded half to even, capped by players dealt
in, as the house rules' rake table sets), evaluates the showdown and splits
pots (odd chip to the first winner left of the button). It writes the body of
the hand in PokerStars' text layout and returns the figures the caller needs.
Amounts are ints: cents at cash tables, chips in tournaments.
"""

from __future__ import annotations

from . import cards as C
from .text import showdown, summary_lines

STREETS = ("Flop", "Turn", "River")


class Hand:
    """State of one hand in play; agents read it in ``decide(g, i)``."""

    __slots__ = ("n", "names", "agents", "stack", "start", "hole", "board", "street", "bet", "total",
                 "folded", "allin", "cur", "min_raise", "bb", "button", "aggressor", "lines", "fmt",
                 "n_actions", "decisions", "sitting", "timeouts", "fold_street", "voluntary", "ctx",
                 "last_bettor", "raises")

    def active(self):
        """Indices still holding cards."""
        return [i for i in range(self.n) if not self.folded[i]]

    def pot(self) -> int:
        """Chips in the middle, this street's bets included."""
        return sum(self.total)


def _post(g: Hand, i: int, amount: int, what: str) -> None:
    amount = min(amount, g.stack[i])
    g.stack[i] -= amount
    g.total[i] += amount
    if what != "the ante":
        g.bet[i] += amount
    tail = " and is all-in" if g.stack[i] == 0 else ""
    if g.stack[i] == 0:
        g.allin[i] = True
    g.lines.append(f"{g.names[i]}: posts {what} {g.fmt(amount)}{tail}")
    g.n_actions += 1


def _act(g: Hand, i: int, rng) -> bool:
    """Ask seat i, apply its action, write its line; True when it raised (reopens the round)."""
    to_call = g.cur - g.bet[i]
    if i in g.timeouts:
        kind = g.timeouts.pop(i)
        g.lines.append(f"{g.names[i]} is disconnected" if kind == "disc" else f"{g.names[i]} has timed out")
        if kind == "disc":
            g.lines.append(f"{g.names[i]} has timed out while disconnected")
        g.sitting.add(i)
        code, to = ("f", 0) if to_call > 0 else ("k", 0)
        g.decisions.append((g.n_actions, i, "timeout"))
        _write(g, i, code, to, to_call)
        g.lines.append(f"{g.names[i]} is sitting out")
        return False
    if i in g.sitting:
        code, to = ("f", 0) if to_call > 0 else ("k", 0)
    else:
        code, to = g.agents[i].decide(g, i, rng)
        g.decisions.append((g.n_actions, i, code))
    return _write(g, i, code, to, to_call)


def _write(g: Hand, i: int, code: str, to: int, to_call: int) -> bool:
    name, st = g.names[i], g.stack[i]
    if code == "f" and to_call <= 0:
        code = "k"
    if code in ("b", "r"):
        to = max(to, g.cur + g.min_raise) if g.cur > 0 else max(to, g.bb)
        if to - g.bet[i] >= st:
            to = g.bet[i] + st
        if to <= g.cur:
            code = "c"
    if code == "c" and to_call <= 0:
        code = "k"
    if code == "f":
        g.folded[i] = True
        g.fold_street[i] = g.street
        g.lines.append(f"{name}: folds")
    elif code == "k":
        g.lines.append(f"{name}: checks")
    elif code == "c":
        pay = min(to_call, st)
        g.stack[i] -= pay
        g.bet[i] += pay
        g.total[i] += pay
        g.voluntary[i] = True
        tail = ""
        if g.stack[i] == 0:
            g.allin[i] = True
            tail = " and is all-in"
        g.lines.append(f"{name}: calls {g.fmt(pay)}{tail}")
    else:
        pay = to - g.bet[i]
        g.stack[i] -= pay
        g.total[i] += pay
        g.voluntary[i] = True
        tail = ""
        if g.stack[i] == 0:
            g.allin[i] = True
            tail = " and is all-in"
        if g.cur == 0:
            g.lines.append(f"{name}: bets {g.fmt(pay)}{tail}")
        else:
            g.lines.append(f"{name}: raises {g.fmt(to - g.cur)} to {g.fmt(to)}{tail}")
        g.min_raise = max(g.min_raise, to - g.cur)
        g.cur = to
        g.bet[i] = to
        g.aggressor = i
        g.last_bettor = i
        g.raises += 1
        g.n_actions += 1
        return True
    g.n_actions += 1
    return False


def _round(g: Hand, first: int, rng) -> None:
    """One betting round starting at seat index ``first``."""
    n = g.n
    pending = {i for i in range(n) if not g.folded[i] and not g.allin[i]}
    if len(pending) <= 1 and all(g.bet[i] >= g.cur for i in pending):
        return
    i = first
    while pending:
        if len(g.active()) == 1:
            return
        if i in pending:
            pending.discard(i)
            if _act(g, i, rng):
                pending = {j for j in range(n) if j != i and not g.folded[j] and not g.allin[j]}
        i = (i + 1) % n


def _return_uncalled(g: Hand) -> None:
    top = max(g.bet)
    lead = [i for i in range(g.n) if g.bet[i] == top]
    if len(lead) != 1:
        return
    i = lead[0]
    second = max(g.bet[j] for j in range(g.n) if j != i)
    back = top - second
    if back > 0:
        g.bet[i] -= back
        g.total[i] -= back
        g.stack[i] += back
        if g.stack[i] > 0:
            g.allin[i] = False
        g.lines.append(f"Uncalled bet ({g.fmt(back)}) returned to {g.names[i]}")


def _pots(g: Hand):
    """Main and side pots as (amount, eligible indices), main first."""
    levels = sorted({g.total[i] for i in range(g.n) if not g.folded[i] and g.total[i] > 0})
    pots, prev = [], 0
    for lv in levels:
        amt = sum(min(t, lv) - min(t, prev) for t in g.total)
        elig = [i for i in range(g.n) if not g.folded[i] and g.total[i] >= lv]
        if amt > 0:
            if pots and set(pots[-1][1]) == set(elig):
                pots[-1][0] += amt
            else:
                pots.append([amt, elig])
        prev = lv
    leftover = sum(g.total) - sum(p[0] for p in pots)
    if leftover and pots:
        pots[0][0] += leftover
    return pots


def rake_for(pot: int, dealt: int, pct: float, caps) -> int:
    """Cash rake in cents: ``pct`` of the pot rounded half to even, capped by players dealt in."""
    cap = caps[0] if dealt == 2 else caps[1] if dealt <= 4 else caps[2]
    return min(cap, round(pot * pct))


def _deal_board(g: Hand, deck, k: int) -> None:
    g.board.extend(deck[2 * g.n + len(g.board):2 * g.n + len(g.board) + k])


def _street_line(g: Hand, s: int) -> None:
    b = g.board
    if s == 1:
        g.lines.append(f"*** FLOP *** [{C.cards_str(b[:3])}]")
    elif s == 2:
        g.lines.append(f"*** TURN *** [{C.cards_str(b[:3])}] [{C.card_str(b[3])}]")
    else:
        g.lines.append(f"*** RIVER *** [{C.cards_str(b[:4])}] [{C.card_str(b[4])}]")


def play_hand(rng, names, agents, stacks, button, sb, bb, ante, fmt, rake=None,
              sitting=(), timeouts=None, ctx=None) -> dict:
    """Play one hand; ``names/agents/stacks`` in seat order, ``button`` an index into them.

    ``rake`` is ``(pct, caps)`` at cash tables, None in tournaments; ``sitting`` are
    indices sitting out (blinds posted, checked or folded by the room);
    ``timeouts`` maps an index to "timeout" or "disc" for the seat whose clock
    runs out at its first decision. Returns a dict: ``lines`` (body text),
    ``summary``, ``stacks`` after the hand, ``won`` per seat, ``pot``, ``rake``,
    ``pots`` (amount, winners, eligible), ``board``, ``hole``, ``decisions``
    (action index, seat index, code), ``fold_street``, ``voluntary``, ``shown``.
    """
    n = len(names)
    g = Hand()
    g.n, g.names, g.agents, g.fmt, g.bb, g.ctx = n, names, agents, fmt, bb, ctx
    g.stack, g.start = list(stacks), list(stacks)
    g.bet, g.total = [0] * n, [0] * n
    g.folded, g.allin, g.voluntary = [False] * n, [False] * n, [False] * n
    g.fold_street = [-1] * n
    g.board, g.lines, g.decisions = [], [], []
    g.sitting, g.timeouts = set(sitting), dict(timeouts or {})
    g.n_actions, g.cur, g.min_raise, g.street, g.button = 0, 0, bb, 0, button
    g.aggressor, g.last_bettor, g.raises = -1, -1, 0
    deck = list(range(52))
    rng.shuffle(deck)
    g.hole = [deck[2 * i:2 * i + 2] for i in range(n)]
    if ante:
        for k in range(n):
            _post(g, (button + 1 + k) % n, ante, "the ante")
    if n == 2:
        sbi, bbi = button, (button + 1) % n
    else:
        sbi, bbi = (button + 1) % n, (button + 2) % n
    if sb:
        _post(g, sbi, sb, "small blind")
    _post(g, bbi, bb, "big blind")
    g.cur = max(max(g.bet), bb)  # a short all-in big blind still makes the others call a full blind
    g.lines.append("*** HOLE CARDS ***")
    for i in range(n):
        g.lines.append(f"Dealt to {names[i]} [{C.cards_str(g.hole[i])}]")
    _round(g, (bbi + 1) % n, rng)
    _return_uncalled(g)
    first_post = (button + 1) % n if n > 2 else bbi
    for s in (1, 2, 3):
        if len(g.active()) == 1:
            break
        _deal_board(g, deck, 3 if s == 1 else 1)
        g.street = s
        _street_line(g, s)
        g.bet, g.cur, g.min_raise, g.last_bettor = [0] * n, 0, bb, -1
        if sum(1 for i in g.active() if not g.allin[i]) >= 2:
            _round(g, first_post, rng)
            _return_uncalled(g)
    return _settle(g, rake, sbi, bbi)


def _settle(g: Hand, rake, sbi: int, bbi: int) -> dict:
    """Showdown, pots, rake, collected lines and the summary."""
    n = g.n
    total = sum(g.total)
    act = g.active()
    rk = 0
    if rake is not None and g.board:
        rk = rake_for(total, n, rake[0], rake[1])
    pots = _pots(g)
    left = rk
    for p in pots:
        take = min(left, p[0])
        p[0] -= take
        left -= take
    won = [0] * n
    shown = {}
    awards = []
    if len(act) == 1:
        w = act[0]
        won[w] = sum(p[0] for p in pots)
        g.lines.append(f"{g.names[w]} collected {g.fmt(won[w])} from pot")
        awards.append((won[w], [w], [w]))
    else:
        scores = {i: C.evaluate(g.hole[i] + g.board) for i in act}
        shown = showdown(g, act, scores)
        labels = _pot_labels(len(pots))
        for k in range(len(pots) - 1, -1, -1):
            amt, elig = pots[k]
            best = max(scores[i] for i in elig)
            winners = [i for i in elig if scores[i] == best]
            order = sorted(winners, key=lambda i: (i - g.button - 1) % n)
            share, odd = divmod(amt, len(order))
            for j, w in enumerate(order):
                got = share + (1 if j < odd else 0)
                won[w] += got
                g.lines.append(f"{g.names[w]} collected {g.fmt(got)} from {labels[k]}")
            awards.append((amt, order, elig))
    for i in range(n):
        g.stack[i] += won[i]
    summ = summary_lines(g, pots, rk, won, shown, sbi, bbi)
    return {"lines": g.lines, "summary": summ, "stacks": g.stack, "won": won, "pot": total, "rake": rk,
            "pots": awards, "board": g.board, "hole": g.hole, "decisions": g.decisions,
            "fold_street": g.fold_street, "voluntary": g.voluntary, "shown": shown, "total": g.total,
            "start": g.start}


def _pot_labels(k: int):
    if k == 1:
        return ["pot"]
    if k == 2:
        return ["main pot", "side pot"]
    return ["main pot"] + [f"side pot-{j}" for j in range(1, k)]
