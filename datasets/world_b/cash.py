"""World B's cash games: sessions, tables that fill and empty, tilt and fatigue.

A :class:`Session` is one account's sitting at one pool (stake and table
size) from ``start`` to ``end``, possibly wanting a companion's table (friends,
and colluders who arrange to sit together). :func:`run_pool` plays every
table of a pool in time order: arrivals take a seat (the companion's table
if it has room, else a random table with room, else a new table), players
leave when their session ends, stacks are topped up to the buy-in when low,
and each hand is written with its decision events. Stakes and rake follow
the house rules' rake table (percentage, caps by players dealt in).
"""

from __future__ import annotations

import heapq

from . import engine
from .text import cash_header, money, seat_line, with_chat

STAKES = ((2, 5), (5, 10), (10, 25), (25, 50), (50, 100), (100, 200))
RAKE = ((0.0415, (50, 50, 100)), (0.045, (50, 100, 150)), (0.045, (50, 100, 200)), (0.05, (75, 75, 200)),
        (0.05, (100, 100, 250)), (0.05, (125, 125, 275)))
STARS = ("Acamar", "Achernar", "Adhara", "Albireo", "Alcor", "Aldebaran", "Algol", "Alhena", "Alnair", "Altair",
         "Ankaa", "Antares", "Arcturus", "Bellatrix", "Betria", "Canopus", "Capella", "Caph", "Castor", "Deneb",
         "Diphda", "Elnath", "Enif", "Gacrux", "Hadar", "Hamal", "Izar", "Kochab", "Markab", "Menkar", "Merak",
         "Mimosa", "Mirach", "Nunki", "Peacock", "Polaris", "Procyon", "Rigel", "Sabik", "Schedar", "Shaula",
         "Sirius", "Spica", "Suhail", "Vega", "Wezen", "Zaurak")
ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


class Session:
    """One account's cash session at one pool."""

    __slots__ = ("acct", "start", "end", "stake", "size", "companion", "stack", "buyin", "seat")

    def __init__(self, acct, start, end, stake, size, companion=None):
        self.acct, self.start, self.end, self.stake, self.size = acct, start, end, stake, size
        self.companion = companion
        self.stack = self.buyin = self.seat = 0


class Table:
    """A cash table: name, seats (seat number -> Session), button seat, file key."""

    __slots__ = ("name", "size", "seats", "button", "serial", "busy")

    def __init__(self, name, size, serial):
        self.name, self.size, self.serial = name, size, serial
        self.seats: dict = {}
        self.button = 0
        self.busy = False


def _buyin(rng, s: Session) -> int:
    bb = STAKES[s.stake][1]
    deep = rng.choice([100, 100, 100, 60, 40, 150]) if s.acct.agent.weak else rng.choice([100, 100, 120])
    return bb * deep


def _seat(w, tables, heap, s: Session, where: dict, rng, names_used) -> None:
    """Seat an arriving session (at ``s.start``) and wake its table."""
    choice = None
    comp = s.companion
    if comp is not None and comp.name in where:
        t = where[comp.name]
        if len(t.seats) < t.size:
            choice = t
    if choice is None:
        open_ = [t for t in tables if 0 < len(t.seats) < t.size and s.acct.name not in where]
        if open_ and rng.random() < 0.9:
            choice = rng.choice(open_)
    if choice is None:
        empty = [t for t in tables if not t.seats]
        if empty:
            choice = empty[0]
        else:
            name = _table_name(rng, names_used)
            choice = Table(name, s.size, w.table_serial())
            tables.append(choice)
    free = [k for k in range(1, choice.size + 1) if k not in choice.seats]
    s.seat = rng.choice(free)
    s.buyin = s.stack = _buyin(rng, s)
    choice.seats[s.seat] = s
    where[s.acct.name] = choice
    if not choice.busy:
        choice.busy = True
        heapq.heappush(heap, (s.start + rng.uniform(5, 40), tables.index(choice)))


def _table_name(rng, used: set) -> str:
    while True:
        n = f"{rng.choice(STARS)} {rng.choice(ROMAN)}"
        if n not in used:
            used.add(n)
            return n


def run_pool(w, stake: int, size: int, sessions: list) -> None:
    """Play every hand of one cash pool (``STAKES[stake]``, ``size``-max) in time order."""
    rng = w.rng
    sessions.sort(key=lambda s: s.start)
    tables, heap, where, used = [], [], {}, set()
    ai = 0
    while True:
        t_next = heap[0][0] if heap else float("inf")
        if ai < len(sessions) and sessions[ai].start <= t_next:
            s = sessions[ai]
            ai += 1
            if s.acct.name in where:
                continue
            _seat(w, tables, heap, s, where, rng, used)
            continue
        if not heap:
            break
        t, k = heapq.heappop(heap)
        tab = tables[k]
        for seat, s in list(tab.seats.items()):
            if s.end <= t:
                del tab.seats[seat]
                where.pop(s.acct.name, None)
                w.interval(s.acct, s.start, t)
        if len(tab.seats) < 2:
            if tab.seats:
                heapq.heappush(heap, (t + 60, k))
            else:
                tab.busy = False
            continue
        dur = _play(w, tab, stake, t)
        heapq.heappush(heap, (t + dur, k))
    for key in list(w.files):
        if key.startswith(f"cash/{STAKES[stake][1]}-{size}max/"):
            w.flush(key)


def _play(w, tab: Table, stake: int, t: float) -> float:
    """One hand at a cash table at time ``t``; returns seconds until the next hand."""
    rng = w.rng
    sb, bb = STAKES[stake]
    seats = sorted(tab.seats)
    for k in seats:
        s = tab.seats[k]
        if s.stack < s.buyin * 0.4:
            s.stack = s.buyin
        ag = s.acct.agent
        if ag.weak:
            ag.fatigue = min(1.0, max(0.0, (t - s.start) / 10800.0))
    later = [k for k in seats if k > tab.button]
    tab.button = later[0] if later else seats[0]
    ss = [tab.seats[k] for k in seats]
    names = [s.acct.name for s in ss]
    agents = [s.acct.agent for s in ss]
    stacks = [s.stack for s in ss]
    bi = seats.index(tab.button)
    out = engine.play_hand(rng, names, agents, stacks, bi, sb, bb, 0, money, rake=RAKE[stake],
                           ctx={"seats": seats})
    if sum(out["stacks"]) + out["rake"] != sum(stacks):
        w.balance_errors += 1
    hid = w.hand_id(t, tab.serial)
    head = cash_header(hid, sb, bb, t, tab.name, tab.size, tab.button)
    head += [seat_line(k, s.acct.name, money(s.stack)) for k, s in zip(seats, ss)]
    day = w.day_of(t)
    w.write_hand(f"cash/{bb}-{tab.size}max/{day}/{tab.name} - {money(sb)}-{money(bb)} USD.txt",
                 head + with_chat(rng, out["lines"], names) + out["summary"])
    w.decisions(t + 2, hid, names, agents, out["decisions"], rng)
    for s, a, new in zip(ss, agents, out["stacks"]):
        lost = s.stack - new
        s.stack = new
        if a.weak and lost > 40 * bb and rng.random() < 0.6:
            a.tilt = 1.0
        else:
            a.tilt *= 0.92
    return 18 + 5.5 * len(ss) + rng.uniform(0, 25) + 12 * len(out["board"]) / 5
