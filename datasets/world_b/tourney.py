"""World B's multi-table tournaments, with knockout (fixed or progressive) events.

A :class:`Tourney` has entrants, a buy-in (``$b+$k+$f``: prize, bounty, fee),
a starting stack, levels on a clock (blinds and antes rise every
``level_s`` seconds), 6- or 9-max tables. :func:`run_tourney` seats entrants
at random (groups that asked to sit together are placed at one table), plays
all tables hand by hand, eliminates busted players (finish places, prizes for
the top ~15 %, bounties to the winner of the pot the player was all-in for:
half in cash and half onto the winner's own bounty in progressive events),
breaks tables as the field shrinks, and writes each hand. Sit-outs come from
``plan``: per account, windows where the seat sits out, begun by a
``sit_out`` event or by the clock running out (``has timed out``), and
hand-offs/device switches where another agent or device takes the seat.
"""

from __future__ import annotations

from . import engine
from .text import chips, money, seat_line, tour_header, with_chat

LEVELS = [(10, 20, 0), (15, 30, 0), (25, 50, 0), (50, 100, 10), (75, 150, 15), (100, 200, 25), (150, 300, 40),
          (200, 400, 50), (300, 600, 75), (400, 800, 100), (600, 1200, 150), (800, 1600, 200),
          (1000, 2000, 250), (1500, 3000, 400), (2000, 4000, 500), (3000, 6000, 750), (4000, 8000, 1000),
          (6000, 12000, 1500), (8000, 16000, 2000), (10000, 20000, 3000), (15000, 30000, 4000),
          (20000, 40000, 5000), (30000, 60000, 8000), (40000, 80000, 10000)]


class Tourney:
    """One tournament's settings and entrants."""

    __slots__ = ("tid", "start", "buyin", "bounty", "fee", "progressive", "size", "chips", "level_s",
                 "entrants", "together", "plan", "agent_at")

    def __init__(self, tid, start, buyin, bounty, fee, progressive, size, stack, level_s):
        self.tid, self.start, self.buyin, self.bounty, self.fee = tid, start, buyin, bounty, fee
        self.progressive, self.size, self.chips, self.level_s = progressive, size, stack, level_s
        self.entrants, self.together = [], []
        self.plan: dict = {}      # name -> list of (from, to, mode) sit-out windows
        self.agent_at: dict = {}  # name -> (ts, agent) another agent plays from ts on

    def label(self) -> str:
        """``$10+$10+$2`` or ``$3.19+$0.31``."""
        if self.bounty:
            return f"{money(self.buyin)}+{money(self.bounty)}+{money(self.fee)}"
        return f"{money(self.buyin)}+{money(self.fee)}"


class Entry:
    __slots__ = ("acct", "stack", "bounty", "table", "seat", "first_hand", "out_at")


def _seat_all(rng, t: Tourney):
    n = len(t.entrants)
    ntab = max(1, -(-n // t.size))
    tables = [dict() for _ in range(ntab)]
    order = []
    grouped = set()
    for g in t.together:
        k = rng.randrange(ntab)
        for a in g:
            if a in t.entrants and a.name not in grouped:
                order.append((k, a))
                grouped.add(a.name)
    rest = [a for a in t.entrants if a.name not in grouped]
    rng.shuffle(rest)
    entries = {}
    for k, a in order + [(None, a) for a in rest]:
        if k is None or len(tables[k]) >= t.size:
            k = min(range(ntab), key=lambda j: (len(tables[j]), rng.random()))
        e = Entry()
        e.acct, e.stack, e.bounty, e.table, e.first_hand, e.out_at = a, t.chips, t.bounty, k, True, None
        e.seat = rng.choice([s for s in range(1, t.size + 1) if s not in tables[k]])
        tables[k][e.seat] = e
        entries[a.name] = e
    return tables, entries


def _payouts(n: int, pool: int) -> list:
    paid = max(1, int(n * 0.15))
    w = [1.0 / (k + 1) ** 0.9 for k in range(paid)]
    tot = sum(w)
    out = [int(pool * x / tot) for x in w]
    out[0] += pool - sum(out)
    return out


def run_tourney(w, t: Tourney) -> None:
    """Play tournament ``t`` to its winner, writing hands and events."""
    rng = w.rng
    tables, entries = _seat_all(rng, t)
    for a in t.entrants:
        w.event(t.start - rng.uniform(60, 3 * 3600), "register", a.name, tournament=str(t.tid))
    pays = _payouts(len(t.entrants), t.buyin * len(t.entrants))
    state = {"left": len(t.entrants), "buttons": [0] * len(tables), "serials": [w.table_serial() for _ in tables],
             "sitting": {}, "pays": pays}
    now = t.start
    while state["left"] > 1:
        dur = 0.0
        for k, tab in enumerate(tables):
            if len(tab) >= 2:
                dur = max(dur, _hand(w, t, k, tab, now + rng.uniform(0, 20), state, entries))
        now += max(dur, 30.0)
        _rebalance(rng, t, tables, state)
    w.flush(f"mtt/{t.tid}.txt")


def _rebalance(rng, t: Tourney, tables: list, state: dict) -> None:
    """Break the smallest table while the others can hold its players; even out big gaps."""
    live = [k for k in range(len(tables)) if tables[k]]
    left = sum(len(tables[k]) for k in live)
    while len(live) > 1 and left <= (len(live) - 1) * t.size:
        k = min(live, key=lambda j: len(tables[j]))
        movers = list(tables[k].values())
        tables[k].clear()
        live.remove(k)
        for e in movers:
            j = min(live, key=lambda x: (len(tables[x]), rng.random()))
            _move(rng, t, tables, e, j)
    if len(live) > 1:
        big = max(live, key=lambda j: len(tables[j]))
        small = min(live, key=lambda j: len(tables[j]))
        if len(tables[big]) - len(tables[small]) >= 3:
            e = tables[big].pop(rng.choice(list(tables[big])))
            _move(rng, t, tables, e, small)


def _move(rng, t, tables, e, j) -> None:
    for s, x in list(tables[e.table].items()):
        if x is e:
            del tables[e.table][s]
    e.table = j
    e.seat = rng.choice([s for s in range(1, t.size + 1) if s not in tables[j]])
    tables[j][e.seat] = e


def _hand(w, t: Tourney, k: int, tab: dict, ts: float, state: dict, entries: dict) -> float:
    """One hand at table ``k`` at ``ts``; returns its duration in seconds."""
    rng = w.rng
    lv = min(int((ts - t.start) // t.level_s), len(LEVELS) - 1)
    sb, bb, ante = LEVELS[lv]
    seats = sorted(tab)
    later = [s for s in seats if s > state["buttons"][k]]
    state["buttons"][k] = later[0] if later else seats[0]
    es = [tab[s] for s in seats]
    names = [e.acct.name for e in es]
    agents, sitting, timeouts, returned = [], set(), {}, []
    for i, e in enumerate(es):
        swap = t.agent_at.get(e.acct.name)
        if swap and ts >= swap[0]:
            agents.append(swap[1])
            w.handoff_first.setdefault((t.tid, e.acct.name), hid_guess(w, ts, state, k))
        else:
            agents.append(e.acct.agent)
        mode = _sit_mode(t, e.acct.name, ts)
        was = state["sitting"].get(e.acct.name)
        if mode:
            if was:
                sitting.add(i)
            elif mode == "event":
                sitting.add(i)
                w.event(ts - rng.uniform(1, 20), "sit_out", e.acct.name, table=f"{t.tid} {k + 1}",
                        tournament=str(t.tid))
            else:
                timeouts[i] = mode
            state["sitting"][e.acct.name] = mode
            if not was:
                w.sitlog.append((t.tid, e.acct.name, ts))
        elif was:
            if was == "event":
                w.event(ts - rng.uniform(1, 20), "sit_in", e.acct.name, table=f"{t.tid} {k + 1}",
                        tournament=str(t.tid))
            returned.append(e.acct.name)
            del state["sitting"][e.acct.name]
    bi = seats.index(state["buttons"][k])
    stacks = [e.stack for e in es]
    out = engine.play_hand(rng, names, agents, stacks, bi, sb, bb, ante, chips, rake=None,
                           sitting=sitting, timeouts=timeouts, ctx={"seats": seats})
    if sum(out["stacks"]) != sum(stacks):
        w.balance_errors += 1
    hid = w.hand_id(ts, state["serials"][k])
    head = tour_header(hid, t.tid, t.label(), lv, sb, bb, ts, k + 1, t.size, state["buttons"][k])
    head += [seat_line(s, e.acct.name, chips(e.stack), e.bounty if t.bounty else None, i in sitting)
             for i, (s, e) in enumerate(zip(seats, es))]
    for e, new in zip(es, out["stacks"]):
        e.stack = new
    tail = _eliminate(t, es, out, state, tab, hid)
    body = with_chat(rng, out["lines"], names)
    if returned:  # back in the seat: said once the cards are dealt, as the client writes it
        at = body.index("*** HOLE CARDS ***") + len(names) + 1
        body = body[:at] + [f"{n} has returned" for n in returned] + body[at:]
    lines = head + body + tail + out["summary"]
    w.write_hand(f"mtt/{t.tid}.txt", lines)
    w.decisions(ts + 2, hid, names, agents, out["decisions"], rng)
    for e in es:
        if e.first_hand:
            e.first_hand = False
        if e.stack == 0:
            w.interval(e.acct, t.start - 60, ts + 5)
    if state["left"] == 1:
        last = [e for e in es if e.stack > 0][0]
        w.interval(last.acct, t.start - 60, ts + 5)
    return 20 + 5 * len(es) + rng.uniform(0, 20)


def hid_guess(w, ts: float, state: dict, k: int) -> str:
    """The id the hand at table ``k`` and time ``ts`` gets."""
    return str(w.hand_id(ts, state["serials"][k]))


def _sit_mode(t: Tourney, name: str, ts: float):
    for a, b, mode in t.plan.get(name, ()):
        if a <= ts < b:
            return mode
    return None


def _eliminate(t: Tourney, es, out, state, tab, hid) -> list:
    """Bounty and finish lines for players busted in this hand; removes them from the table."""
    busted = [i for i, e in enumerate(es) if e.stack == 0]
    if not busted:
        return []
    lines = []
    for i in busted:
        if t.bounty:
            lines += _bounty(t, es, out, i)
    busted.sort(key=lambda i: -out["start"][i])
    for i in busted:
        place = state["left"]
        state["left"] -= 1
        prize = state["pays"][place - 1] if place <= len(state["pays"]) else 0
        e = es[i]
        tail = f" and received {money(prize)}." if prize else ""
        lines.append(f"{e.acct.name} finished the tournament in {_ordinal(place)} place{tail}")
        del tab[e.seat]
    if state["left"] == 1:
        win = [e for e in es if e.stack > 0][0]
        lines.append(f"{win.acct.name} wins the tournament and receives {money(state['pays'][0])} - congratulations!")
    return lines


def _bounty(t: Tourney, es, out, i: int) -> list:
    """Who eliminated seat i: the winners of the biggest pot it was all-in for."""
    pots = [p for p in out["pots"] if i in p[2]]
    if not pots:
        return []
    winners = pots[0][1]  # pots run from the top side pot down to the main pot
    bounty = es[i].bounty
    lines = []
    share = bounty // len(winners)
    for w_i in winners:
        we = es[w_i]
        if t.progressive:
            cash = share // 2
            add = share - cash
            we.bounty += add
            lines.append(f"{we.acct.name} wins {money(cash)} for eliminating {es[i].acct.name} and their own "
                         f"bounty increases by {money(add)} to {money(we.bounty)}")
        else:
            lines.append(f"{we.acct.name} wins the {money(share)} bounty for eliminating {es[i].acct.name}")
    return lines


def _ordinal(n: int) -> str:
    suf = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suf}"
