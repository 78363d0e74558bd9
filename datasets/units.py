"""The world a generator's worker plays in, and the per-chunk services its units use.

:class:`World` is everything a worker needs (handed to each worker process
once, by the pool initializer :func:`set_world`); :class:`UnitContext` gives
the unit players (:func:`datasets.cash.play_cash_table`,
:func:`datasets.tournaments.play_tournament`) their policies, hand ids,
events and labels; :func:`run_chunk` plays one chunk of units into its own
files. Planning is :mod:`datasets.planning`, the whole run
:mod:`datasets.generate`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from datasets.cash import DAY_MS, MIN_MS, DayDevices, play_cash_table
from datasets.collusion import Group, links_for, make_policy
from datasets.events import EventLog, HandSink, write_events
from datasets.flipping import play_heads_up
from datasets.policies import DecisionLog
from datasets.population import Population, derive_seed
from datasets.tournaments import TournamentPlan, play_tournament
from datasets.worlds import AdaptivePolicy, Traits, WorldParams, no_traits

HAND_ID_BASE = 230_000_000_000
HANDS_PER_UNIT = 100_000


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
    chat: object = None  # datasets.chat.ChatPlan: the table chat and the hand-chat groups

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
        # in the seats' order, not a set's: a set of names iterates in an order drawn from the hash seed
        hit = [acc for acc, pid in players.items()
               if any(self.device_of(pid, acc, t)[0].startswith(wv[2]) for wv in active)] if active else []
        now = set(hit)
        for acc in hit:
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


def set_world(world: World | None) -> None:
    """Worker initializer: the planned world every chunk of this worker plays in (None: forget it)."""
    global _WORLD
    _WORLD = world


def run_chunk(args) -> dict:
    """Play one chunk of units into its own files (runs in a worker)."""
    chunk_no, units, out_dir, on_record = args
    w = _WORLD
    out = Path(out_dir)
    events = EventLog()
    with open(out / "hands" / f"chunk-{chunk_no:04d}.txt", "w", encoding="utf-8", newline="\n") as fh:
        sink = HandSink(fh, events, w.view, random.Random(derive_seed(w.seed, "view", chunk_no)), on_record=on_record)
        if w.chat is not None:  # the table chat, from a stream of its own (datasets.chat)
            from datasets.chat import ChatWriter

            sink.chat = ChatWriter(w.chat, random.Random(derive_seed(w.seed, "chat", chunk_no)))
        ctx = UnitContext(w, sink, events)
        for kind, unit_no, plan in units:
            ctx.start_unit(unit_no)
            if kind == "cash":
                play_cash_table(plan, ctx)
            elif kind == "hu":
                play_heads_up(plan, ctx)
            else:
                play_tournament(plan, ctx)
    write_events(events.rows, out / "events", f"chunk-{chunk_no:04d}", random.Random(derive_seed(w.seed, "ev", chunk_no)))
    return {"chunk": chunk_no, "hands": sink.hands, "hits": sink.hits, "results": ctx.results}
