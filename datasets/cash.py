"""Cash games: planning who sits where and when, and playing the tables.

Planning (pure, in the parent process). Persons who play cash get sessions
day by day: a start time around their local evening (heavy peak between
18:00 and 24:00 local, some daytime play), a lognormal length (median ~80
minutes), and their usual number of tables (multi-tabling). Each session is
seated greedily at the tables of the person's game bucket (game, limit,
table size, stakes) that have a free seat, preferring fuller tables, opening
a new table when none has room; tables live for one day. Within a seat
interval a player may take a short break (sit out a few minutes, come back and
post what they missed). Sessions produce ``login``/``logout`` events, with the
person's device and IP of the day (a phone behind carrier NAT, or home); a
few sessions switch from phone to desktop midway (logout, new login on the new
device, play continues).

Playing (in a worker, one table-day at a time): hands are dealt while at least
two players are seated, each hand's duration comes from the players' own
decision times plus dealing overhead; players join when their interval starts
(posting to enter unless they wait for the big blind) and leave when it ends.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from decimal import Decimal

from datasets.population import CASH_STAKES, Person, Population, derive_seed

DAY_MS = 86_400_000
MIN_MS = 60_000

TABLE_NAMES = ["Aludra", "Vega", "Altair", "Ceres", "Deneb", "Rigel", "Spica", "Mira", "Polaris", "Sirius",
               "Castor", "Pollux", "Antares", "Capella", "Hadar", "Mimosa", "Shaula", "Bellatrix", "Alnair",
               "Acrux", "Procyon", "Achernar", "Arcturus", "Fomalhaut", "Regulus", "Adhara", "Gacrux", "Elnath"]
ROMAN = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV",
         "XVI", "XVII", "XVIII", "XIX", "XX"]


@dataclass(frozen=True)
class Bucket:
    """A lobby line: game, betting limit, table size and stakes."""

    game: str       # "holdem" | "omaha"
    limit: str      # "NL" | "PL" | "FL"
    max_seats: int  # 6 or 9
    stake: int      # index into CASH_STAKES

    @property
    def blinds(self) -> tuple[Decimal, Decimal]:
        sb, bb = CASH_STAKES[self.stake]
        return Decimal(sb), Decimal(bb)

    @property
    def hands_per_hour(self) -> float:
        return 118.0 if self.max_seats == 6 else 95.0


@dataclass
class Session:
    """One client session of one account: login..logout on one device and IP."""

    account: str
    pid: int
    session: str
    start_ms: int
    end_ms: int
    ip: str
    device: str
    mobile: bool


@dataclass
class SeatPlan:
    """An account sitting at a cash table from ``start_ms`` to ``end_ms``."""

    account: str
    pid: int
    start_ms: int
    end_ms: int
    buyin_bb: int
    mobile: bool
    breaks: list[tuple[int, int]] = field(default_factory=list)
    wait_for_bb: bool = False
    seat: int = 0
    keep: bool = False  # planted partners stay together (not trimmed off a short table)


@dataclass
class CashTablePlan:
    unit: int
    name: str
    bucket: Bucket
    day: int
    seats: list[SeatPlan] = field(default_factory=list)
    free_from: list[int] = field(default_factory=list)  # per seat slot: ms when it becomes free

    @property
    def start_ms(self) -> int:
        return min(s.start_ms for s in self.seats)

    @property
    def end_ms(self) -> int:
        return max(s.end_ms for s in self.seats)

    def estimated_hands(self) -> int:
        """Hours with at least two players seated times the bucket's hands per hour."""
        pts = []
        for s in self.seats:
            pts.append((s.start_ms, 1))
            pts.append((s.end_ms, -1))
        pts.sort()
        n = 0
        last = None
        busy = 0
        for t, d in pts:
            if last is not None and n >= 2:
                busy += t - last
            n += d
            last = t
        return int(busy / 3_600_000 * self.bucket.hands_per_hour)


def make_buckets(n_cash_persons: int, rng: random.Random) -> list[Bucket]:
    """Enough lobby lines for the population, always NL hold'em 6-max first.

    Small worlds get few lines so tables fill; the mix includes 9-max,
    PL Omaha, some fixed-limit hold'em and a little PL hold'em.
    """
    n = max(3, min(14, n_cash_persons // 60))
    buckets = [Bucket("holdem", "NL", 6, 2), Bucket("holdem", "NL", 9, 1), Bucket("omaha", "PL", 6, 2)]
    extra = [Bucket("holdem", "FL", 9, 2), Bucket("holdem", "NL", 6, 3), Bucket("holdem", "NL", 6, 1),
             Bucket("omaha", "PL", 6, 3), Bucket("holdem", "PL", 6, 2), Bucket("holdem", "NL", 9, 2),
             Bucket("holdem", "NL", 6, 4), Bucket("holdem", "FL", 6, 3), Bucket("omaha", "PL", 9, 1),
             Bucket("holdem", "NL", 6, 5), Bucket("omaha", "PL", 6, 4)]
    buckets += extra[: n - 3]
    return buckets


BUCKET_WEIGHT = {("holdem", "NL"): 5.0, ("omaha", "PL"): 2.0, ("holdem", "FL"): 0.8, ("holdem", "PL"): 0.5}


def person_buckets(p: Person, buckets: list[Bucket], rng: random.Random) -> list[int]:
    """One or two favourite lobby lines of a person, near their stake level."""
    w = []
    for b in buckets:
        base = BUCKET_WEIGHT[(b.game, b.limit)] * (1.0 if b.max_seats == 6 else 0.6)
        w.append(base / (1.0 + abs(b.stake - p.stake_level)))
    first = rng.choices(range(len(buckets)), weights=w)[0]
    out = [first]
    if rng.random() < 0.35:
        second = rng.choices(range(len(buckets)), weights=w)[0]
        if second != first:
            out.append(second)
    return out


def session_start(p: Person, day: int, rng: random.Random, t0_ms: int) -> int:
    """A session start: mostly local evening, sometimes any time of day."""
    if rng.random() < 0.9:
        local_h = rng.gauss(20.5, 1.8)
    else:
        local_h = rng.uniform(8, 26)
    utc_h = (local_h - p.utc_offset) % 24
    return t0_ms + day * DAY_MS + int(utc_h * 3_600_000) + rng.randrange(60_000)


class DayDevices:
    """Which device and IP each person uses on a given day (stable within the day)."""

    def __init__(self, pop: Population, seed: int):
        self.pop = pop
        self.seed = seed
        self.cache: dict[tuple[int, int], tuple[str, str, bool]] = {}

    def get(self, pid: int, day: int) -> tuple[str, str, bool]:
        key = (pid, day)
        if key not in self.cache:
            rng = random.Random(derive_seed(self.seed, pid, day, "dev"))
            p = self.pop.persons[pid]
            phones = [d for d in p.devices if d.kind == "phone"]
            others = [d for d in p.devices if d.kind != "phone"] or p.devices
            if phones and rng.random() < 0.3:
                dev = phones[0]
                ip = rng.choice(self.pop.mobile_ips) if rng.random() < 0.7 else p.home_ip
                self.cache[key] = (ip, dev.fingerprint, True)
            else:
                ip = p.home_ip
                if rng.random() < 0.08:  # dynamic address: same /24, another host
                    a, b, c, _ = ip.split(".")
                    ip = f"{a}.{b}.{c}.{rng.randint(1, 254)}"
                self.cache[key] = (ip, rng.choice(others).fingerprint, False)
        return self.cache[key]

    def desktop(self, pid: int) -> tuple[str, str]:
        p = self.pop.persons[pid]
        others = [d for d in p.devices if d.kind != "phone"] or p.devices
        return p.home_ip, others[0].fingerprint


class CashPlanner:
    """Greedy seating of sessions at the day's tables of each bucket."""

    def __init__(self, pop: Population, buckets: list[Bucket], devices: DayDevices, t0_ms: int, rng: random.Random):
        self.pop = pop
        self.buckets = buckets
        self.devices = devices
        self.t0 = t0_ms
        self.rng = rng
        self.tables: list[CashTablePlan] = []
        self.sessions: list[Session] = []
        self.day_tables: dict[int, list[CashTablePlan]] = {}
        self.name_count: dict[str, int] = {}
        self.session_seq = 0
        self.unit_base = 0
        self.short: tuple[float, random.Random] | None = None  # (share of short-handed tables, their stream)

    def _new_table(self, bucket_idx: int, day: int) -> CashTablePlan:
        b = self.buckets[bucket_idx]
        base = TABLE_NAMES[(len(self.tables) * 7 + bucket_idx) % len(TABLE_NAMES)]
        k = self.name_count.get(base, 0) + 1
        self.name_count[base] = k
        name = base if k == 1 else f"{base} {ROMAN[k] if k < len(ROMAN) else k}"
        t = CashTablePlan(unit=-1, name=name, bucket=b, day=day, free_from=[0] * b.max_seats)
        t.bucket_idx = bucket_idx  # type: ignore[attr-defined]
        if self.short is not None and self.short[1].random() < self.short[0]:
            cap = self.short[1].randint(3, 4)  # a short-handed table: the other seats never open
            t.free_from[cap:] = [1 << 62] * (b.max_seats - cap)
        self.tables.append(t)
        self.day_tables.setdefault(day, []).append(t)
        return t

    def new_session_id(self) -> str:
        self.session_seq += 1
        return "s%07d" % self.session_seq

    def seat(self, account: str, pid: int, bucket_idx: int, day: int, start: int, end: int, mobile: bool,
             together_with: CashTablePlan | None = None, exclude: set | None = None, need: int = 1,
             keep: bool = False) -> CashTablePlan:
        """Seat ``account`` for [start, end) at a table of the bucket (or ``together_with``)."""
        rng = self.rng
        cands = []
        if together_with is not None:
            cands = [together_with]
        else:
            for t in self.day_tables.get(day, []):
                if t.bucket_idx != bucket_idx or (exclude and id(t) in exclude):  # type: ignore[attr-defined]
                    continue
                free = sum(1 for f in t.free_from if f <= start)
                if free >= need and not any(s.account == account and s.end_ms > start for s in t.seats):
                    occupied = len(t.free_from) - free
                    cands.append((occupied + rng.random() * 0.6, t))
            cands = [max(cands, key=lambda x: x[0])[1]] if cands else []
        table = cands[0] if cands else self._new_table(bucket_idx, day)
        if any(s.account == account and s.start_ms < end and s.end_ms > start for s in table.seats):
            return table  # already seated there (a partner's own session at the lead's table): one seat per account
        free_slots = [i for i, f in enumerate(table.free_from) if f <= start]
        if not free_slots:  # forced togetherness on a full table: the plan gives up the join
            return table
        slot = free_slots[0]
        table.free_from[slot] = end
        b = table.bucket
        breaks = []
        p = self.pop.persons[pid]
        if rng.random() < p.style.sitout_rate and end - start > 20 * MIN_MS:
            bs = start + int((end - start) * rng.uniform(0.2, 0.8))
            breaks.append((bs, min(end - MIN_MS, bs + int(rng.uniform(1.5, 12) * MIN_MS))))
        table.seats.append(SeatPlan(account=account, pid=pid, start_ms=start, end_ms=end,
                                    buyin_bb=rng.choice([40, 60, 80, 100, 100, 100, 100]) if b.limit != "FL" else 50,
                                    mobile=mobile, breaks=breaks, wait_for_bb=rng.random() < 0.3, seat=slot + 1,
                                    keep=keep))
        return table

    def add_session(self, account: str, pid: int, day: int, start: int, minutes: float, n_tables: int,
                    bucket_idxs: list[int], events, with_tables: list[CashTablePlan] | None = None,
                    need: int = 1) -> list[CashTablePlan]:
        """Plan one session: login/logout events and seats at ``n_tables`` tables."""
        rng = self.rng
        end = start + int(minutes * MIN_MS)
        ip, device, mobile = self.devices.get(pid, day)
        sid = self.new_session_id()
        login_at = start - rng.randrange(20_000, 240_000)
        logout_at = end + rng.randrange(5_000, 120_000)
        if mobile and rng.random() < 0.15 and minutes > 40:
            # phone -> desktop mid-session: new device, same person, play goes on
            switch = start + int((end - start) * rng.uniform(0.3, 0.7))
            dip, ddev = self.devices.desktop(pid)
            events.login(login_at, account, sid, ip, device)
            events.logout(switch, account, sid)
            sid2 = self.new_session_id()
            events.login(switch + rng.randrange(20_000, 90_000), account, sid2, dip, ddev)
            events.logout(logout_at, account, sid2)
        else:
            events.login(login_at, account, sid, ip, device)
            events.logout(logout_at, account, sid)
        used: list[CashTablePlan] = []
        excl: set = set()
        for k in range(n_tables):
            if with_tables is not None and k < len(with_tables):
                t = self.seat(account, pid, bucket_idxs[0], day, start, end, mobile, together_with=with_tables[k],
                              keep=True)
            else:
                bi = bucket_idxs[k % len(bucket_idxs)]
                s_k = start + (0 if k == 0 else rng.randrange(0, 10 * MIN_MS))
                e_k = end - (0 if k == 0 else rng.randrange(0, int(max(1, (end - s_k) * 0.4))))
                t = self.seat(account, pid, bi, day, s_k, min(end, max(s_k + 10 * MIN_MS, e_k)), mobile, exclude=excl,
                              need=need,
                              keep=need > 1)
            excl.add(id(t))
            used.append(t)
        return used


def trim_short_tables(table: CashTablePlan, rng: random.Random) -> None:
    """Players leave tables that have gone heads-up for a while (most look for a fuller game).

    Sweep the table's occupancy; when exactly two players stay alone together
    for more than 6 minutes, with probability 0.85 both leave 1-5 minutes
    into that stretch (their seat intervals end; their sessions go on).
    """
    for _ in range(40):
        pts = sorted([(sp.start_ms, 1, id(sp)) for sp in table.seats] + [(sp.end_ms, -1, id(sp)) for sp in table.seats])
        n = 0
        seg_start = None
        changed = False
        for t, d, _ in pts:
            if n == 2 and seg_start is not None and t - seg_start > 6 * MIN_MS:
                if rng.random() < 0.85:
                    cut = seg_start + int(rng.uniform(1, 5) * MIN_MS)
                    for sp in table.seats:
                        if sp.start_ms <= seg_start < sp.end_ms and not sp.keep:
                            sp.end_ms = max(sp.start_ms + MIN_MS, cut)
                            sp.breaks = [(a, z) for a, z in sp.breaks if z < sp.end_ms]
                    changed = True
                    break
            n += d
            seg_start = t if n == 2 else None
        if not changed:
            return


def session_minutes(rng: random.Random) -> float:
    return max(12.0, min(420.0, rng.lognormvariate(math.log(80), 0.6)))


# ----------------------------------------------------------------------------
# Playing a table-day

LIMIT_OF = {"NL": "no_limit", "PL": "pot_limit", "FL": "fixed_limit"}


def cents(d: Decimal) -> int:
    return int(d * 100)


class _Occupant:
    __slots__ = ("plan", "stack", "sitting_out", "missed_sb", "missed_bb", "waiting_bb", "joined", "on_break", "left")

    def __init__(self, plan: SeatPlan, stack: int):
        self.plan = plan
        self.stack = stack
        self.sitting_out = False
        self.missed_sb = False
        self.missed_bb = False
        self.waiting_bb = plan.wait_for_bb
        self.joined = False
        self.on_break = False
        self.left = False


def play_cash_table(plan: CashTablePlan, ctx) -> int:
    """Play one table-day of ``plan`` into ``ctx.sink``; returns the number of hands.

    ``ctx`` carries the unit's RNGs, the persons (styles, timing), the policy
    factory and the hand-id allocator (see :class:`datasets.units.UnitContext`).
    Joining players post a big blind (or wait for it to reach them); players
    returning from a break post what they missed (``sb``, ``bb`` or both);
    busted players re-buy or leave; short stacks top up between hands.
    Between hands: arrivals (:func:`_arrivals`), departures and breaks
    (:func:`_departures`), top-ups (:func:`_top_ups`); then the seats of the
    next hand (:func:`_hand_seats`) and the hand itself.
    """
    from datasets.engine import play_hand
    from datasets.rake import rake_rule_for
    from datasets.records import GameConfig

    b = plan.bucket
    sb, bb = (cents(x) for x in b.blinds)
    limit = LIMIT_OF[b.limit]
    config = GameConfig(game=b.game, limit=limit, small_blind=sb, big_blind=bb, rake=rake_rule_for(sb, bb, limit))
    rng = ctx.rng
    seats_plan = sorted(plan.seats, key=lambda s: s.start_ms)
    occ: dict[int, _Occupant] = {}
    pending = list(seats_plan)
    policies: dict[str, object] = {}
    t = seats_plan[0].start_ms
    end_all = max(s.end_ms for s in seats_plan)
    button = 0
    hands = 0
    n_seats = b.max_seats
    log = ctx.decisions
    while t < end_all:
        pending, join_lines = _arrivals(pending, occ, policies, t, bb, plan, ctx)
        leave_lines = _departures(occ, t, plan, ctx)
        _top_ups(occ, bb, rng)
        ready = [s for s, o in occ.items() if not o.sitting_out and o.stack > 0]
        if len(ready) < 2:
            nxt = [sp.start_ms for sp in pending if sp.start_ms > t]
            for o in occ.values():
                nxt += [z for a, z in o.plan.breaks if z > t]
                nxt.append(o.plan.end_ms)
            t = max(t + 1000, min(nxt) if nxt else end_all)
            continue
        button, hand_seats = _hand_seats(occ, ready, button, n_seats)
        disc, conn_lines = ctx.connection(t, {o.plan.account: o.plan.pid for o in occ.values()}, plan.name, None,
                                          ends={o.plan.account: o.plan.end_ms for o in occ.values()})
        ctx.table_info["disconnected"] = disc
        hid = ctx.next_hand_id()
        log.clear()
        ctx.current_hand = (hid, t, None)
        started = ctx.to_dt(t)
        rec = play_hand(config, hand_seats, button, policies, ctx.np_rng, hid, started, plan.name, n_seats,
                        table=ctx.table_info)
        for line in join_lines:
            rec.extra_lines.append((-1, line))
        for line in leave_lines + conn_lines:
            rec.extra_lines.append((-1, line))
        dur = ctx.sink.record(rec, t, log.rows)
        ctx.after_hand(rec, t)
        for name, st in rec.final_stacks.items():
            for o in occ.values():
                if o.plan.account == name:
                    o.stack = st
        hands += 1
        t += dur
    return hands


def _arrivals(pending: list, occ: dict, policies: dict, t: int, bb: int, plan: CashTablePlan,
              ctx) -> tuple[list, list[str]]:
    """Seat the planned sessions that have started by ``t`` (in ``occ``, their policies in ``policies``).

    A session with under four minutes left is dropped; one whose seat is still busy waits for the next
    hand. Returns the sessions still pending and the "joins the table" lines.
    """
    join_lines: list[str] = []
    still = []
    for sp in pending:
        if sp.start_ms <= t:
            if sp.end_ms - 240_000 <= t:
                continue
            if sp.seat in occ:  # seat still busy (late leaver): try next hand
                still.append(sp)
                continue
            o = _Occupant(sp, sp.buyin_bb * bb)
            occ[sp.seat] = o
            policies[sp.account] = ctx.policy_for(sp.account, sp.pid, sp.mobile, plan.name, None)
            join_lines.append(f"{sp.account} joins the table at seat #{sp.seat}")
        else:
            still.append(sp)
    return still, join_lines


def _departures(occ: dict, t: int, plan: CashTablePlan, ctx) -> list[str]:
    """Unseat the sessions that end (no new hand in their last four minutes) or left; start and end breaks
    (sit-out and sit-in events). Returns the "leaves the table" lines."""
    rng = ctx.rng
    leave_lines: list[str] = []
    for seat_no in list(occ):
        o = occ[seat_no]
        sp = o.plan
        if sp.end_ms - 240_000 <= t or o.left:  # no new hand in the last minutes: the session ends after
            leave_lines.append(f"{sp.account} leaves the table")
            del occ[seat_no]
            continue
        brk = any(a <= t < z for a, z in sp.breaks)
        if brk and not o.on_break:
            o.on_break = True
            ctx.events.sit_out(t - rng.randrange(1000, 20000), sp.account, plan.name, None)
        elif not brk and o.on_break:
            o.on_break = False
            ctx.events.sit_in(t - rng.randrange(500, 8000), sp.account, plan.name, None)
        o.sitting_out = o.on_break
    return leave_lines


def _top_ups(occ: dict, bb: int, rng) -> None:
    """Between hands: a busted player re-buys (60 %) or leaves; a stack under 35 % of the buy-in tops up
    half the time."""
    for o in occ.values():
        full = o.plan.buyin_bb * bb
        if o.stack <= 0:
            if rng.random() < 0.6:
                o.stack = full
            else:
                o.left = True
                o.sitting_out = True
        elif o.stack < full * 0.35 and rng.random() < 0.5:
            o.stack = full


def _hand_seats(occ: dict, ready: list[int], button: int, n_seats: int) -> tuple[int, list]:
    """The next hand's button (the next ready seat clockwise) and its seats.

    A player waiting for the big blind is dealt in only when it reaches them; a newcomer not in the
    blinds posts a big blind, a player back from a break what they missed. Blinds passing a player on
    a break are marked missed. Returns (button seat, the engine's ``SeatState`` list in seat order).
    """
    from datasets.records import SeatState

    order = sorted(ready, key=lambda s: (s - button - 1) % n_seats)
    button = order[0]
    clockwise = sorted(ready, key=lambda s: (s - button - 1) % n_seats)
    if len(clockwise) == 2:
        blind_seats = [button, clockwise[0] if clockwise[0] != button else clockwise[1]]
    else:
        blind_seats = clockwise[:2]
    dealt_seats = []
    for s_no in clockwise:
        o = occ[s_no]
        if o.waiting_bb and s_no != blind_seats[-1]:
            continue
        dealt_seats.append(s_no)
    if len(dealt_seats) < 2:
        dealt_seats = clockwise
    hand_seats = []
    for s_no in sorted(occ):
        o = occ[s_no]
        out = o.sitting_out or s_no not in dealt_seats or o.stack <= 0
        pd = None
        if not out:
            if o.waiting_bb:
                o.waiting_bb = False
            elif not o.joined and s_no not in blind_seats:
                pd = "bb"
            elif o.missed_sb or o.missed_bb:
                pd = "sb_bb" if (o.missed_sb and o.missed_bb) else ("bb" if o.missed_bb else "sb")
            o.joined = True
            o.missed_sb = o.missed_bb = False
        hand_seats.append(SeatState(s_no, o.plan.account, o.stack, sitting_out=out, posts_dead=pd))
    all_cw = sorted(occ, key=lambda s: (s - button - 1) % n_seats)
    for k, s_no in enumerate(all_cw[:2]):
        o = occ[s_no]
        if o.on_break:
            if k == 0:
                o.missed_sb = True
            else:
                o.missed_bb = True
    return button, hand_seats
