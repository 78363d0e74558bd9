"""Write a synthetic population: hand histories, events, accounts and labels.

Method. :func:`generate` plans the whole world in the parent process from
one seeded RNG: the persons and accounts (:mod:`datasets.population`), the
planted groups (:func:`datasets.collusion.plant_groups`), the cash sessions
and table-days (:mod:`datasets.cash`), the sit-and-gos and multi-table
tournaments and who enters them (:mod:`datasets.tournaments`). Each table-day
and tournament is a *unit* with its own RNG stream derived from
``(seed, unit number)``; units are grouped into *chunks* of roughly equal
size, and a process pool of two plays the chunks, each writing its own
``hands/chunk-NNNN.txt`` and ``events/chunk-NNNN-k.jsonl`` as it goes, so
memory does not grow with the number of hands and the bytes written do not
depend on scheduling: the same seed gives byte-identical files. The parent
then writes the planner's events (logins, registrations, transfers),
``accounts.csv`` and ``labels.jsonl`` from the hits the units reported
(only hands in which collusion actually happened).

Layout written under ``out_dir``::

    hands/chunk-0000.txt ...       PokerStars text, operator view by default
    events/chunk-0000-0.jsonl ...  decisions, sessions, sit-outs, registrations
    events/platform-0.jsonl ...    planner sessions, transfers
    accounts.csv
    labels.jsonl
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import random
import shutil
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from datasets.cash import (DAY_MS, MIN_MS, CashPlanner, CashTablePlan, DayDevices, make_buckets, person_buckets,
                           play_cash_table, session_minutes, session_start, trim_short_tables)
from datasets.collusion import Group, links_for, make_policy, plant_groups
from datasets.events import EventLog, HandSink, iso_s, to_ms, write_events
from datasets.names import dress_names
from datasets.policies import DecisionLog
from datasets.population import (WORLD_START, Population, derive_seed, draw_format_taste, jitter_style,
                                 make_population)
from datasets.presets import PRESETS, Preset
from datasets.tournaments import Entry, TournamentPlan, play_tournament
from datasets.worlds import AdaptivePolicy, Traits, WorldParams, draw_params, draw_traits, no_traits

HAND_ID_BASE = 230_000_000_000
HANDS_PER_UNIT = 100_000
TOURNAMENT_ID_BASE = 3_400_000_000
SNG_HANDS_EST = 105
MTT_HANDS_PER_ENTRANT = 9.0


@dataclass
class World:
    """Everything a worker needs to play units (handed to each worker process once, by the pool initializer)."""

    seed: int
    pop: Population
    groups: list[Group]
    account_style: dict
    devices: DayDevices
    t0_ms: int
    view: str
    ma_accounts: dict  # account -> group (multi-accounting)
    handoff: dict      # account -> group
    waves: list        # disconnect waves: (start ms, end ms, IP prefix)
    plain: dict = field(default_factory=dict)  # shown account name -> plain name (dressed names only)
    params: WorldParams = field(default_factory=WorldParams)  # the mechanisms (datasets.worlds)
    traits: Traits = field(default_factory=no_traits)

    def key(self, account: str) -> str:
        """The name ``account`` was drawn under: what per-account seeds are derived from."""
        return self.plain.get(account, account)


_WORLD: World | None = None


# ----------------------------------------------------------------------------
# Worker side


class UnitContext:
    """Per-chunk services for the unit players (policies, ids, events, labels)."""

    def __init__(self, world: World, sink: HandSink, events: EventLog):
        self.w = world
        self.sink = sink
        self.events = events
        self.decisions = DecisionLog()
        self.table_info: dict = {}
        self.current_hand = ("", 0, None)
        self._coin_hand = None
        self._coins: dict = {}
        self.unit = 0
        self._hand_seq = 0
        self._sess_seq = 0
        self.rng = random.Random(0)
        self.np_rng = np.random.default_rng(0)
        self.results: list = []
        self._sitout_active: dict = {}
        self._handoff_active: set = set()
        self._clock_out: dict = {}  # account -> [hands left, group]: a planted sit-out by timing out

    def start_unit(self, unit: int) -> None:
        self.unit = unit
        self._hand_seq = 0
        self._sess_seq = 0
        self.rng = random.Random(derive_seed(self.w.seed, "unit", unit))
        self.np_rng = np.random.default_rng(derive_seed(self.w.seed, "deck", unit))
        self.table_info = {}
        self._sitout_active = {}
        self._handoff_active = set()
        self._offline = {}
        self._clock_out = {}

    def connection(self, t: int, players: dict, table: str, tid, sessions: dict | None = None,
                   ends: dict | None = None) -> tuple[set, list[str]]:
        """Who is disconnected at ``t`` (a wave hit their network) and the table lines it causes.

        A player whose IP of the day starts with a wave's prefix loses the
        connection for the wave: ``NAME is disconnected`` in the first hand,
        timed-out decisions meanwhile, ``NAME is connected`` and a new
        ``login`` (new session, same device and IP) when it is back. In
        tournaments (``sessions`` given) the dropped session is closed at the
        disconnect; at cash tables the new session ends when the seat does
        (``ends``).
        """
        lines: list[str] = []
        active = [wv for wv in self.w.waves if wv[0] <= t < wv[1]]
        now: set = set()
        if active:
            for acc, pid in players.items():
                ip = self.device_of(pid, acc, t)[0]
                if any(ip.startswith(wv[2]) for wv in active):
                    now.add(acc)
        for acc in now:
            if acc not in self._offline:
                self._offline[acc] = players[acc]
                lines.append(f"{acc} is disconnected")
                if sessions is not None and sessions.get(acc):
                    self.events.logout(t - self.rng.randrange(500, 5_000), acc, sessions[acc])
                    sessions[acc] = ""  # closed by the server; a new one opens on reconnect
        for acc in list(self._offline):
            if acc not in now and acc in players:
                pid = self._offline.pop(acc)
                ip, dev, _ = self.device_of(pid, acc, t)
                sid = self.new_session_id()
                self.events.login(t - self.rng.randrange(1_000, 20_000), acc, sid, ip, dev)
                if sessions is not None:
                    sessions[acc] = sid
                else:
                    end = (ends or {}).get(acc, t + 30 * MIN_MS)
                    self.events.logout(max(end, t) + self.rng.randrange(5_000, 60_000), acc, sid)
                lines.append(f"{acc} is connected")
        return now, lines

    def next_hand_id(self) -> str:
        self._hand_seq += 1
        return str(HAND_ID_BASE + self.unit * HANDS_PER_UNIT + self._hand_seq)

    def new_session_id(self) -> str:
        self._sess_seq += 1
        return f"u{self.unit}-{self._sess_seq}"

    def to_dt(self, ms: int) -> datetime:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)

    def coin(self, gid: str, hand_id: str, strength: float) -> bool:
        """One throw per (group, hand): does the group collude in this hand?"""
        if self._coin_hand != hand_id:
            self._coin_hand = hand_id
            self._coins = {}
        c = self._coins.get(gid)
        if c is None:
            c = self.rng.random() < strength
            self._coins[gid] = c
        return c

    def hit(self, gid: str) -> None:
        hid, t, tid = self.current_hand
        self.sink.hit(gid, hid, t, tid)

    def policy_for(self, account: str, pid: int, mobile: bool, table, tid, person: bool = False):
        w = self.w
        p = w.pop.persons[pid]
        style = p.style if person else w.account_style.get(account, p.style)
        links = [] if person else links_for(w.groups, account)
        mood = None if person or links else w.traits.moods.get(pid)
        if mood is not None:
            return AdaptivePolicy(account, style, p.timing, self.rng, self.decisions, mobile, mood=mood,
                                  weak=w.traits.weak)
        return make_policy(account, style, p.timing, self.rng, self.decisions, mobile, links, self)

    def device_of(self, pid: int, account: str, ms: int, person_only: bool = False) -> tuple[str, str, bool]:
        """Device and IP of whoever plays ``account`` now.

        A person's second account uses the same device and IP as the first
        only some of the time (else another device of theirs, a VPN address).
        """
        w = self.w
        day = int((ms - w.t0_ms) // DAY_MS)
        p = w.pop.persons[pid]
        if person_only:
            return p.home_ip, p.devices[0].fingerprint, False
        ip, dev, mobile = w.devices.get(pid, day)
        if p.accounts and account != p.accounts[0]:
            r = random.Random(derive_seed(w.seed, "ma", w.key(account), day))
            if r.random() < w.params.ma_vpn:
                ip = f"{r.randint(5, 95)}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"  # VPN exit
            if r.random() < w.params.ma_other_device:
                others = [d for d in p.devices if d.fingerprint != dev]
                dev = others[0].fingerprint if others else "%016x" % r.getrandbits(64)
        return ip, dev, mobile

    def seat_together(self, plan: TournamentPlan) -> list[list[str]]:
        accs = {e.account for e in plan.entries}
        out = []
        for g in self.w.groups:
            if g.kind == "bounty_collusion" and sum(a in accs for a in g.accounts) >= 2:
                out.append([a for a in g.accounts if a in accs])
        return out

    def plan_sitouts(self, plan, tables, remaining, bubble_at, sitting, sitout_log, coord_done, clock) -> None:
        """Planted coordinated sit-outs (at the bubble, and twice earlier) and honest single sit-outs.

        A group of a drawn world may use only some of the three stages, and may let the clock run out
        (its partners stay dealt in and time out, no ``sit_out`` event) instead of clicking sit-out.
        """
        rng = self.rng
        P = self.w.params
        seat_of = {acc: tb for tb in tables for acc in tb.seats.values()}
        for gid, accounts, strength in plan.sitout_groups:
            present = [a for a in accounts if a in seat_of]
            if len(present) < 2:
                continue
            done = coord_done.get(gid, 0)
            # opportunities: 15 % of the field gone, 40 % gone, then the bubble (a stage passed while
            # a partner was away or sitting is a missed opportunity, not a later one)
            n0 = len(plan.entries)
            reached = [i for i, level in enumerate((n0 * 0.85, n0 * 0.6, bubble_at)) if remaining <= level]
            if not reached:
                continue
            stage = max(reached)
            if done & (1 << stage):
                continue
            coord_done[gid] = done | ((1 << (stage + 1)) - 1)
            if stage not in P.sitout_stages or rng.random() >= strength:
                continue
            k = rng.randint(*P.sitout_hands)
            t0 = max(clock[seat_of[a].name] for a in present)
            for a in present:
                if a in sitting or a in self._clock_out:
                    continue
                if gid in self.w.traits.sitout_timeout:
                    self._clock_out[a] = [k, gid]
                    continue
                sitting[a] = k
                sitout_log[a] = (gid, seat_of[a].name)
                self.events.sit_out(t0 - rng.randrange(0, P.sitout_sync_ms), a, seat_of[a].name, plan.tid)
                self._sitout_active[a] = gid
        # honest sit-outs: someone steps away for a hand or three
        for acc, tb in seat_of.items():
            if acc not in sitting and rng.random() < 0.0015:
                sitting[acc] = rng.randint(1, 3)
                sitout_log[acc] = (None, tb.name)
                self.events.sit_out(clock[tb.name] - rng.randrange(0, 20_000), acc, tb.name, plan.tid)

    def clocked_out(self, accounts) -> set:
        """The accounts among ``accounts`` letting the clock run out (a planted sit-out without sit_out)."""
        return {a for a in accounts if a in self._clock_out} if self._clock_out else set()

    def handoff_started(self, account: str, tid: str) -> None:
        self._handoff_active.add(account)

    def after_hand(self, rec, t: int) -> None:
        """Label hits decided by what happened in the hand (tournament kinds)."""
        w = self.w
        dealt = rec.dealt
        tid = rec.tournament.tournament_id if rec.tournament else None
        if w.ma_accounts:
            seen: dict[str, int] = {}
            for a in dealt:
                g = w.ma_accounts.get(a)
                if g is not None:
                    seen[g.gid] = seen.get(g.gid, 0) + 1
            for gid, c in seen.items():
                if c >= 2:
                    self.sink.hit(gid, rec.hand_id, t, tid)
        if self._handoff_active:
            for a in dealt:
                if a in self._handoff_active:
                    self.sink.hit(w.handoff[a].gid, rec.hand_id, t, tid)
        if self._clock_out:
            for a in dealt:
                left = self._clock_out.get(a)
                if left is not None:
                    self.sink.hit(left[1], rec.hand_id, t, tid)
                    left[0] -= 1
                    if left[0] <= 0:
                        del self._clock_out[a]
        if self._sitout_active:
            out = {s.player for s in rec.seats if s.sitting_out}
            for a, gid in list(self._sitout_active.items()):
                if a in out:
                    self.sink.hit(gid, rec.hand_id, t, tid)
                elif a not in out and a not in {s.player for s in rec.seats if not s.sitting_out}:
                    pass
            for a in list(self._sitout_active):
                if a not in out and any(s.player == a for s in rec.seats):
                    del self._sitout_active[a]

    def finished(self, tid, account, place, amount, own_bounty=0) -> None:
        self.results.append(("finish", tid, account, place, amount))

    def tournament_done(self, plan, place_of, bounty_cash) -> None:
        self.results.append(("tournament", plan.tid, plan.kind, len(plan.entries), plan.buy_in, plan.bounty,
                             plan.progressive, sum(bounty_cash.values())))


def _set_world(world: World) -> None:
    """Worker initializer: the planned world every chunk of this worker plays in."""
    global _WORLD
    _WORLD = world


def _run_chunk(args) -> dict:
    """Play one chunk of units into its own files (runs in a worker)."""
    chunk_no, units, out_dir, on_record = args
    w = _WORLD
    out = Path(out_dir)
    events = EventLog()
    with open(out / "hands" / f"chunk-{chunk_no:04d}.txt", "w", encoding="utf-8", newline="\n") as fh:
        sink = HandSink(fh, events, w.view, random.Random(derive_seed(w.seed, "view", chunk_no)), on_record=on_record)
        ctx = UnitContext(w, sink, events)
        for kind, unit_no, plan in units:
            ctx.start_unit(unit_no)
            if kind == "cash":
                play_cash_table(plan, ctx)
            else:
                play_tournament(plan, ctx)
    write_events(events.rows, out / "events", f"chunk-{chunk_no:04d}", random.Random(derive_seed(w.seed, "ev", chunk_no)))
    return {"chunk": chunk_no, "hands": sink.hands, "hits": sink.hits, "results": ctx.results}


# ----------------------------------------------------------------------------
# Planning


def _poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    L = math.exp(-lam)
    k, p = 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1


def _friends_meet(world: World, reqs: list, fav: dict, rng: random.Random) -> None:
    """Honest friends meet by chance: for each session one of a pair starts, the other starts one in the
    same game within 15 minutes with probability ``friend_meet`` (they are seated as anyone else is)."""
    friend_of: dict[int, list[int]] = {}
    for a, b in world.traits.friends:
        friend_of.setdefault(a, []).append(b)
        friend_of.setdefault(b, []).append(a)
    extra = []
    for st, what, who in reqs:
        if what == "solo":
            for f in friend_of.get(who, ()):
                if f in fav and rng.random() < world.params.friend_meet:
                    extra.append((st + rng.randrange(-15 * MIN_MS, 15 * MIN_MS), "solo", f))
    reqs.extend(extra)


def _plan_cash(world: World, planner: CashPlanner, target: int, rng: random.Random, events: EventLog,
               groups: list[Group], min_days: int = 1, max_days: int = 400) -> tuple[list[CashTablePlan], int]:
    """Sessions day by day until the tables' estimated hands reach ``target``, over at least ``min_days``."""
    pop = world.pop
    pids = [p.pid for p in pop.persons if p.activity > 0 and p.accounts]
    cash_people = [pid for pid in pids if pop.persons[pid].favourite == "cash" or rng.random() < 0.25]
    fav = {pid: person_buckets(pop.persons[pid], planner.buckets, rng) for pid in cash_people}
    cash_groups = [g for g in groups if g.venue == "cash"]
    for g in cash_groups:
        for pid in g.pids:
            if pid not in fav:
                fav[pid] = person_buckets(pop.persons[pid], planner.buckets, rng)
    in_group = {pid for g in cash_groups for pid in g.pids}
    friend_rng = random.Random(derive_seed(world.seed, "friends"))
    for a, b in world.traits.friends:  # friends play the same game: the one's usual bucket first for the other
        if a in fav and b in fav:
            fav[b] = fav[a][:1] + [x for x in fav[b] if x != fav[a][0]]
    house: dict[int, list[int]] = {}
    for pid in pids:
        h = pop.persons[pid].household
        if h is not None:
            house.setdefault(h, []).append(pid)
    for members in house.values():
        for pid in members:
            if pid not in fav:
                fav[pid] = person_buckets(pop.persons[pid], planner.buckets, rng)
    est = 0
    day = 0
    if target <= 0:
        return [], 0
    # spread the target over at least ``min_days`` days: scale everyone's activity down if needed
    per_session = (85.0 / 60.0) * 1.6 * 95.0 / 5.5
    day_est0 = sum(pop.persons[pid].activity * 0.9 for pid in cash_people if pid not in in_group) * 1.1 * per_session
    scale = max(0.6, min(1.0, target / max(1.0, min_days * day_est0)))  # but keep tables populated
    while est < target and day < max_days:
        reqs = []
        for pid in cash_people:
            if pid in in_group:
                continue
            p = pop.persons[pid]
            for _ in range(_poisson(rng, p.activity * 0.9 * scale)):
                st = session_start(p, day, rng, world.t0_ms)
                reqs.append((st, "solo", pid))
                # housemates often play the same evening from the same home IP (own devices, own game)
                for mate in house.get(p.household, ()) if p.household is not None else ():
                    if mate != pid and rng.random() < 0.4:
                        reqs.append((st + rng.randrange(-20 * MIN_MS, 20 * MIN_MS), "solo", mate))
        if world.traits.friends:
            _friends_meet(world, reqs, fav, friend_rng)
        for g in cash_groups:
            if rng.random() < world.params.cash_meet:
                lead = pop.persons[g.pids[0]]
                reqs.append((session_start(lead, day, rng, world.t0_ms), "group", g))
            # group members also play alone (their honest baseline)
            for pid in g.pids:
                if rng.random() < 0.6:
                    reqs.append((session_start(pop.persons[pid], day, rng, world.t0_ms), "solo", pid))
        reqs.sort(key=lambda r: (r[0], r[1], r[2] if isinstance(r[2], int) else -1))
        # the last day is thinned so the world stops near the target
        day_est = len(reqs) * per_session
        if est + day_est > target:
            keep = max(0.05, (target - est) / day_est)
            reqs = [r for r in reqs if r[1] == "group" or rng.random() < keep]
        for start, what, who in reqs:
            if what == "solo":
                p = pop.persons[who]
                n_tab = max(1, min(4, p.multi_table + rng.choice([-1, 0, 0, 0, 1])))
                planner.add_session(p.accounts[0], who, day, start, session_minutes(rng), n_tab, fav[who], events)
            else:
                g = who
                minutes = session_minutes(rng) * 1.3
                lead_pid = g.pids[0]
                lead_acc = g.accounts[0]
                n_tab = rng.choice([1, 1, 2])
                tabs = planner.add_session(lead_acc, lead_pid, day, start, minutes, n_tab, fav[lead_pid], events,
                                           need=len(g.accounts) + 1)
                for acc, pid in zip(g.accounts[1:], g.pids[1:]):
                    s2 = start + rng.randrange(0, 4 * MIN_MS)
                    planner.add_session(acc, pid, day, s2, minutes - 4, len(tabs), fav[lead_pid], events,
                                        with_tables=tabs)
        for t in planner.day_tables.get(day, []):
            trim_short_tables(t, rng)
        est += sum(t.estimated_hands() for t in planner.day_tables.get(day, []))
        day += 1
    tables = [t for t in planner.tables if len(t.seats) >= 2]
    return tables, day


_BUYINS = [(100, 10), (500, 50), (1000, 100), (2000, 200), (300, 30), (1000, 90)]
_MTT_TYPES = [0.4, 0.3, 0.3]  # weights of a multi-table event's type: freezeout, knockout, progressive knockout


def _pick_entrants(pool: list[int], cum_weights: list[float], k: int, rng: random.Random, exclude: set[int]) -> list[int]:
    """``k`` distinct persons drawn by weight (activity and taste for the format)."""
    out: list[int] = []
    seen = set(exclude)
    tries = 0
    while len(out) < k and tries < k * 30:
        tries += 1
        pid = rng.choices(pool, cum_weights=cum_weights)[0]
        if pid not in seen:
            seen.add(pid)
            out.append(pid)
    return out


def _plan_tournaments(world: World, sng_target: int, mtt_target: int, days: int, rng: random.Random,
                      groups: list[Group], first_unit: int, play: float = 1.0) -> list[TournamentPlan]:
    """Sit-and-gos and multi-table tournaments over the world's days, with the groups entered."""
    pop = world.pop
    people = [p.pid for p in pop.persons if p.activity > 0 and p.accounts]
    w_sng = [pop.persons[pid].activity * (3.0 if pop.persons[pid].favourite == "sng" else 0.5) + 0.05 for pid in people]
    w_mtt = [pop.persons[pid].activity * (3.0 if pop.persons[pid].favourite == "mtt" else 0.5) + 0.05 for pid in people]
    # a bounty hunter's taste (population.draw_format_taste) moves their multi-table entries towards
    # knockouts, not their number: weights t and 1 for knockout and freezeout, scaled by the mean
    # 1 / (rho t + 1 - rho) over the schedule's knockout share rho
    rho = 1.0 - _MTT_TYPES[0]
    norm = [1.0 / (rho * pop.persons[pid].knockout + 1.0 - rho) for pid in people]
    w_ko = [w * n * pop.persons[pid].knockout for w, n, pid in zip(w_mtt, norm, people)]
    w_free = [w * n for w, n in zip(w_mtt, norm)]
    w_sng = list(itertools.accumulate(w_sng))
    w_ko = list(itertools.accumulate(w_ko))
    w_free = list(itertools.accumulate(w_free))
    group_pids = {pid for g in groups for pid in g.pids}
    plans: list[TournamentPlan] = []
    tid_seq = 0
    n_sng = int(round(sng_target / SNG_HANDS_EST))
    # enough sit-and-gos for the groups that play them to have a few events each without crowding
    n_sng = max(n_sng, 2 * sum(1 for g in groups if g.venue == "sng"))
    entrants_cap = max(18, min(180, len(people) // 3))
    mtt_entrants = []
    budget = mtt_target
    while budget > 0:
        e = rng.randint(max(18, entrants_cap // 2), entrants_cap)
        mtt_entrants.append(e)
        budget -= e * MTT_HANDS_PER_ENTRANT
    span = max(1, days) * DAY_MS

    def new_tid() -> str:
        nonlocal tid_seq
        tid_seq += 1
        return str(TOURNAMENT_ID_BASE + tid_seq * 7919 + rng.randrange(7000))

    for _ in range(n_sng):
        start = world.t0_ms + rng.randrange(span) // 60_000 * 60_000
        bi, fee = rng.choice(_BUYINS[:4])
        pl = TournamentPlan(unit=-1, tid=new_tid(), kind="sng", start_ms=start, buy_in=bi, fee=fee, stack=1500)
        pids = _pick_entrants(people, w_sng, 9, rng, group_pids)
        pl.entries = [Entry(pop.persons[pid].accounts[0], pid, start - rng.randrange(10_000, 40 * MIN_MS)) for pid in pids]
        plans.append(pl)
    need_mtt = any(g.venue == "mtt" for g in groups)
    while need_mtt and len(mtt_entrants) < 3:
        mtt_entrants.append(max(18, entrants_cap // 2))
    for k_mtt, e in enumerate(mtt_entrants):
        start = world.t0_ms + (rng.randrange(span) // (15 * MIN_MS)) * 15 * MIN_MS
        typ = rng.choices(["freeze", "ko", "pko"], weights=_MTT_TYPES)[0] if k_mtt >= 2 else ("ko", "pko")[k_mtt]
        bi, fee = rng.choice(_BUYINS)
        bounty = None
        if typ != "freeze":
            bounty = bi // 2
            bi = bi - bounty
        pl = TournamentPlan(unit=-1, tid=new_tid(), kind="mtt", start_ms=start, buy_in=bi, fee=fee, bounty=bounty,
                            progressive=typ == "pko", stack=rng.choice([1500, 3000]))
        pids = _pick_entrants(people, w_free if typ == "freeze" else w_ko, e, rng, group_pids)
        pl.entries = [Entry(pop.persons[pid].accounts[0], pid, start - rng.randrange(10_000, 6 * 60 * MIN_MS)) for pid in pids]
        for _ in range(rng.randint(0, max(1, e // 20))):
            pid = rng.choice(people)
            if pid not in pids and pid not in group_pids:
                pl.unregistered.append((pop.persons[pid].accounts[0], pid, start - rng.randrange(11 * MIN_MS, 120 * MIN_MS)))
        plans.append(pl)
    # the groups: each enters a few events of its venue together
    sngs = [p for p in plans if p.kind == "sng"]
    mtts = [p for p in plans if p.kind == "mtt"]
    kos = [p for p in mtts if p.bounty]
    planted_in: dict[tuple[str, str], int] = {}

    def pick(pool: list[TournamentPlan], k: int, kind: str) -> list[TournamentPlan]:
        """``k`` events of ``pool``, preferring those with the fewest entrants planted by groups of ``kind`` so far.

        Rings of one kind are spread over the schedule (two sit-out rings in one event would sit out at
        the same bubble), but a ring does not know where rings of other kinds go: counting every planted
        entrant made the groups planted after the bounty gangs avoid the knockouts the gangs had filled,
        a taste for freezeouts that no real ring has and that a co-entry null knowing format tastes reads
        as one (docs/measurements.md, twenty-first session).
        """
        order = sorted(pool, key=lambda p: (planted_in.get((kind, p.tid), 0), rng.random()))
        return order[:k]

    # Colluders play regularly (that is how collusion pays): each group enters enough events of its
    # venue for its behaviour to have chances at its strength; how often it then acts is the strength's
    # coin in each opportunity (a hand dealt together, a sit-out stage, an event entered). The counts
    # are for a world of its preset's size: one with more hands per account (``play`` times the
    # preset's) gives its groups that many times the events, as it gives everyone more play.
    per = max(1.0, play)
    P = world.params

    def count(lo: int, hi: int) -> int:
        return rng.randint(round(lo * per), round(hi * per))

    for g in groups:
        if g.kind in ("soft_play", "chip_dumping") and g.venue == "sng":
            events = pick(sngs, count(*P.dump_sng_events), g.kind)
        elif g.kind == "bounty_collusion":
            events = pick(kos or mtts, count(*P.bounty_events), g.kind)
        elif g.kind == "coordinated_sitout":
            events = pick(mtts, count(*P.sitout_events), g.kind)
        elif g.kind == "multi_accounting":
            events = pick((sngs if g.venue == "sng" else mtts) or sngs or mtts, count(4, 7), g.kind)
        elif g.kind == "seat_handoff":
            events = pick(mtts, count(*P.handoff_events), g.kind)
        else:
            events = []
        for pl in events:
            if _enter_group(pl, g, rng, world):
                planted_in[g.kind, pl.tid] = planted_in.get((g.kind, pl.tid), 0) + len(g.accounts)
    for i, pl in enumerate(sorted(plans, key=lambda p: (p.start_ms, p.tid))):
        pl.unit = first_unit + i
        pl.name = pl.tid
    return sorted(plans, key=lambda p: p.unit)


def _enter_group(pl: TournamentPlan, g: Group, rng: random.Random, world: World) -> bool:
    """Put a group's accounts into a tournament (replacing random honest entrants in a full SNG)."""
    if g.kind == "multi_accounting":
        k = len(g.accounts) if rng.random() < g.strength else 1  # together only at the group's strength
        accs = g.accounts[:]
        rng.shuffle(accs)
        chosen = accs[:k]
        pids = [g.pids[0]] * k
    elif g.kind == "seat_handoff":
        chosen = [g.accounts[0]]
        pids = [g.pids[0]]
    else:
        chosen = list(g.accounts)
        pids = list(g.pids)
    taken = {e.account for e in pl.entries}
    if any(a in taken for a in chosen):
        return False
    new = []
    for acc, pid in zip(chosen, pids):
        e = Entry(acc, pid, pl.start_ms - rng.randrange(10_000, 30 * MIN_MS))
        if g.kind == "seat_handoff" and rng.random() < g.strength:
            e.handoff_hand = rng.randint(*world.params.handoff_hand)
            e.handoff_pid = g.pids[1]
        new.append(e)
    if pl.kind == "sng":
        planted = {a for gg in world.groups for a in gg.accounts}
        if sum(e.account not in planted for e in pl.entries) < len(new):
            return False
        for _ in new:
            honest = [i for i, e in enumerate(pl.entries) if e.account not in planted]
            pl.entries.pop(rng.choice(honest))
    pl.entries.extend(new)
    if g.kind != "multi_accounting" or len(new) >= 2:
        g.tournaments.append(pl.tid)
        g.starts[pl.tid] = pl.start_ms
    if g.kind == "coordinated_sitout":
        pl.sitout_groups.append((g.gid, list(chosen), g.strength))
    return True


def _transfers(groups: list[Group], world: World, days: int, rng: random.Random, events: EventLog) -> None:
    """Cashier transfers: some chip-dumping receivers pass money back; honest friends and family send some too."""
    span = max(1, days) * DAY_MS
    for g in groups:
        if g.kind == "chip_dumping" and rng.random() < 0.6:
            recv = [a for a in g.accounts if g.roles.get(a) == "receiver"]
            feed = [a for a in g.accounts if g.roles.get(a) == "feeder"]
            for _ in range(rng.randint(1, 3)):
                a, b = rng.choice(recv), rng.choice(feed)
                ts = world.t0_ms + rng.randrange(span)
                events.add(ts, "transfer", a, to=b, amount=round(rng.uniform(20, 400), 2), currency="USD")
    pop = world.pop
    households: dict[int, list[str]] = {}
    for p in pop.persons:
        if p.household is not None and p.accounts:
            households.setdefault(p.household, []).append(p.accounts[0])
    for accs in households.values():
        if len(accs) >= 2 and rng.random() < 0.4:
            a, b = rng.sample(accs, 2)
            events.add(world.t0_ms + rng.randrange(span), "transfer", a, to=b, amount=round(rng.uniform(10, 200), 2), currency="USD")
    names = [p.accounts[0] for p in pop.persons if p.accounts]
    for _ in range(max(1, len(names) // 60)):
        a, b = rng.sample(names, 2)
        events.add(world.t0_ms + rng.randrange(span), "transfer", a, to=b, amount=round(rng.uniform(5, 100), 2), currency="USD")


def _chunks(units: list[tuple[str, int, object, int]], per_chunk: int) -> list[list[tuple[str, int, object]]]:
    out: list[list] = []
    cur: list = []
    size = 0
    for kind, unit_no, plan, est in units:
        cur.append((kind, unit_no, plan))
        size += est
        if size >= per_chunk:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


NAME_STYLES = ("realistic", "plain")


def _dress(pop: Population, groups: list[Group], account_style: dict, rng: random.Random) -> dict[str, str]:
    """Rename every account to its dressed name (:func:`datasets.names.dress_names`) everywhere the plan
    holds it; returns ``{shown: plain}`` for the renamed ones."""
    shown = dress_names(list(pop.accounts), rng)
    pop.accounts = {shown[a]: replace(acc, name=shown[a]) for a, acc in pop.accounts.items()}
    for p in pop.persons:
        p.accounts = [shown[a] for a in p.accounts]
    for g in groups:
        g.accounts = [shown[a] for a in g.accounts]
        g.roles = {shown[a]: r for a, r in g.roles.items()}
    for a in list(account_style):
        account_style[shown[a]] = account_style.pop(a)
    return {s: a for a, s in shown.items() if s != a}


def plan_world(*, preset: str | Preset = "demo", seed: int = 7, accounts: int | None = None, hands: int | None = None,
               mix: dict[str, int] | None = None, view: str = "operator", names: str = "realistic",
               world_seed: int | None = None):
    """The planned world and its units (no hands played yet).

    ``names``: ``"realistic"`` (default) dresses a share of the account names
    as real rooms have them (:mod:`datasets.names`, from a stream of its own:
    the world is otherwise the one ``"plain"`` gives); ``"plain"`` keeps the
    letters-and-digits names. ``world_seed``: None keeps the first world's fixed mechanisms; an int draws
    every mechanism's parameters from the documented ranges (:func:`datasets.worlds.draw_params`).
    """
    if names not in NAME_STYLES:
        raise ValueError(f"names must be one of {', '.join(NAME_STYLES)}")
    spec = PRESETS[preset] if isinstance(preset, str) else preset
    n_accounts = accounts if accounts is not None else spec.accounts
    n_hands = hands if hands is not None else spec.hands
    mix = dict(spec.mix if mix is None else mix)
    rng = random.Random(derive_seed(seed, "world"))
    # multi-accounters add 1-2 accounts each (1.33 on average): leave room for them in the total
    params = draw_params(world_seed)
    pop = make_population(max(10, n_accounts - int(mix.get("multi_accounting", 0) * 1.33)), rng)
    groups = plant_groups(pop, mix, spec.strength, rng, gang=params.bounty_gang)
    # bounty hunters from a stream of their own: the persons and groups of a seed are what they were
    draw_format_taste(pop, random.Random(derive_seed(seed, "taste")), params.hunter_share, params.hunter_taste)
    # the multi-accounters' other accounts: the person's style up to noise
    account_style = {}
    for g in groups:
        if g.kind == "multi_accounting":
            p = pop.persons[g.pids[0]]
            for acc in g.accounts[1:]:
                account_style[acc] = jitter_style(p.style, random.Random(derive_seed(seed, "style", acc)))
    plain = {}
    if names == "realistic":
        plain = _dress(pop, groups, account_style, random.Random(derive_seed(seed, "names")))
    traits = draw_traits(pop, groups, params, derive_seed(seed, world_seed))
    t0 = to_ms(WORLD_START)
    devices = DayDevices(pop, seed)
    world = World(seed=seed, pop=pop, groups=groups, account_style=account_style, devices=devices, t0_ms=t0, view=view,
                  ma_accounts={a: g for g in groups if g.kind == "multi_accounting" for a in g.accounts},
                  handoff={g.accounts[0]: g for g in groups if g.kind == "seat_handoff"}, waves=[], plain=plain,
                  params=params, traits=traits)
    cash_share, sng_share, mtt_share = spec.shares
    planner_events = EventLog()
    buckets = make_buckets(sum(1 for p in pop.persons if p.favourite == "cash"), rng)
    planner = CashPlanner(pop, buckets, devices, t0, rng)
    if params.short_share:
        planner.short = (params.short_share, random.Random(derive_seed(seed, world_seed, "short")))
    cash_tables, days = _plan_cash(world, planner, int(n_hands * cash_share), rng, planner_events, groups,
                                   min_days=spec.days)
    days = max(days, 2)
    units: list[tuple[str, int, object, int]] = []
    for t in sorted(cash_tables, key=lambda t: (t.start_ms, t.name)):
        units.append(("cash", 0, t, t.estimated_hands()))
    # hands per account against the preset's: a bigger world plays more, groups included
    play = (n_hands / max(1, n_accounts)) / (spec.hands / max(1, spec.accounts))
    tplans = _plan_tournaments(world, int(n_hands * sng_share), int(n_hands * mtt_share), days, rng, groups, 0, play)
    for pl in tplans:
        est = SNG_HANDS_EST if pl.kind == "sng" else int(len(pl.entries) * MTT_HANDS_PER_ENTRANT)
        units.append(("sng" if pl.kind == "sng" else "mtt", 0, pl, est))
    # unit numbers in start-time order (hand ids grow roughly with time)
    units.sort(key=lambda u: (u[2].start_ms, u[0], getattr(u[2], "name", "")))
    numbered = []
    for i, (kind, _, plan, est) in enumerate(units):
        plan.unit = i
        numbered.append((kind, i, plan, est))
    _transfers(groups, world, days, rng, planner_events)
    # disconnect waves: an ISP or a mobile carrier drops for one to four minutes, once or twice a day
    for day in range(days):
        for _ in range(rng.randint(1, 2)):
            start = t0 + day * DAY_MS + int(rng.uniform(17, 24) * 3_600_000)
            if rng.random() < 0.7:
                ip = rng.choice(pop.persons).home_ip
            else:
                ip = rng.choice(pop.mobile_ips)
            prefix = ".".join(ip.split(".")[:2]) + "."
            world.waves.append((start, start + int(rng.uniform(1, 4) * MIN_MS), prefix))
    world.waves.sort()
    return world, numbered, planner_events, days


def generate(out_dir, *, preset: str = "demo", seed: int = 7, accounts: int | None = None, hands: int | None = None,
             mix: dict[str, int] | None = None, view: str = "operator", progress: bool = True, workers: int | None = None,
             chunk_hands: int = 4000, on_record=None, results_out: list | None = None, names: str = "realistic",
             world_seed: int | None = None) -> Path:
    """Write a population under ``out_dir`` (see the module docstring); returns the path.

    ``workers`` defaults to 2 (a process pool); 1 plays everything in this
    process. ``on_record`` (tests) is called with every ``HandRecord`` and
    forces ``workers=1``; ``results_out`` (tests) receives the units'
    tournament results (finishes, prize pools, bounties paid); ``names`` and
    ``world_seed`` as :func:`plan_world`.
    """
    global _WORLD
    if view not in ("operator", "player"):
        raise ValueError("view must be 'operator' or 'player'")
    out = Path(out_dir)
    world, units, planner_events, days = plan_world(preset=preset, seed=seed, accounts=accounts, hands=hands, mix=mix,
                                                    view=view, names=names, world_seed=world_seed)
    for sub in ("hands", "events"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
        (out / sub).mkdir(parents=True, exist_ok=True)
    chunks = _chunks(units, chunk_hands)
    _WORLD = world
    n_workers = 1 if on_record is not None else (workers or 2)
    tasks = [(i, ch, str(out), on_record) for i, ch in enumerate(chunks)]
    results = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=sum(u[3] for u in units), unit="hand", desc="generate", dynamic_ncols=True)
    try:
        if n_workers <= 1 or len(tasks) <= 1:
            for task in tasks:
                r = _run_chunk(task)
                results.append(r)
                if bar:
                    bar.update(sum(u[3] for u in units if u[1] in {x[1] for x in task[1]}))
        else:
            import multiprocessing as mp

            # spawn, not fork: a fork of a process whose other threads hold locks (Polars', DuckDB's
            # pools in a test session or a Dagster run) can leave a worker waiting forever
            ctx = mp.get_context("spawn")
            with ctx.Pool(n_workers, initializer=_set_world, initargs=(world,)) as pool:
                for r in pool.imap_unordered(_run_chunk, tasks):
                    results.append(r)
                    if bar:
                        bar.update(sum(x[3] for x in units if x[1] in {y[1] for y in chunks[r["chunk"]]}))
                # let the workers finish on their own: leaving the block terminates them with SIGTERM, which a
                # worker that inherited an ignored SIGTERM never obeys (the pool then waits for it forever)
                pool.close()
                pool.join()
    finally:
        if bar:
            bar.close()
        _WORLD = None
    results.sort(key=lambda r: r["chunk"])
    if results_out is not None:
        for r in results:
            results_out.extend(r["results"])
    write_events(planner_events.rows, out / "events", "platform", random.Random(derive_seed(seed, "platform")), parts=2)
    _write_accounts(world, out / "accounts.csv")
    _write_labels(world, results, out / "labels.jsonl")
    return out


def _write_accounts(world: World, path: Path) -> None:
    rows = sorted(world.pop.accounts.values(), key=lambda a: (a.created_at, a.name))
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["account", "created_at", "country", "payment"])
        for a in rows:
            w.writerow([a.name, a.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"), a.country, a.payment])


def _write_labels(world: World, results: list[dict], path: Path) -> None:
    """One line per planted group: the hands where it actually colluded, its events and time span."""
    hits: dict[str, list] = {}
    for r in results:
        for gid, lst in r["hits"].items():
            hits.setdefault(gid, []).extend(lst)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for g in world.groups:
            lst = sorted(hits.get(g.gid, []), key=lambda x: (x[1], x[0]))
            hands = []
            seen = set()
            for hid, _, _ in lst:
                if hid not in seen:
                    seen.add(hid)
                    hands.append(hid)
            tours = sorted({tid for _, _, tid in lst if tid})
            if g.kind == "multi_accounting":  # entering one event on several accounts is the act itself
                tours = sorted(set(tours) | set(g.tournaments))
            obj = {"group": g.gid, "kind": g.kind, "accounts": list(g.accounts), "tournaments": tours, "hands": hands}
            if lst:  # a group that never acted has no time span: the keys are absent (inputs.md allows it)
                obj["from"] = iso_s(lst[0][1])
                obj["to"] = iso_s(lst[-1][1])
            elif g.kind == "multi_accounting" and tours:  # entered together, never met at one table
                starts = [g.starts[t] for t in tours if t in g.starts]
                if starts:
                    obj["from"] = iso_s(min(starts))
                    obj["to"] = iso_s(max(starts))
            obj["strength"] = g.strength
            if g.roles:
                obj["roles"] = dict(g.roles)
            fh.write(json.dumps(obj) + "\n")


__all__ = ["generate", "plan_world"]
