"""A tournament's entrants between hands: sessions, policies, sit-outs and device moves.

:class:`Players` is their state across the tournament's hands;
:func:`register` logs them in and registers them (and the withdrawn
registrations); :func:`plan_switches` picks who moves to another device and
when, :func:`switch_devices` plays the move (the phone logs out, the player
sits out until the other device has logged in); :func:`hand_offs` hands a seat
to another person. Used by :func:`datasets.tournaments.play_tournament`; the
timings are the module docstring of :mod:`datasets.tournaments`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .population import derive_seed

if TYPE_CHECKING:
    from .tournaments import TournamentPlan, TourTable


@dataclass
class Players:
    """The entrants' state across a tournament's hands: sessions, policies, sit-outs and device moves."""

    by_acc: dict                                        # account -> Entry
    sessions: dict = field(default_factory=dict)        # account -> session id ("" while logged out)
    policies: dict = field(default_factory=dict)        # account -> decision policy
    hands_of: dict = field(default_factory=dict)        # account -> hands dealt in this tournament
    sitting: dict = field(default_factory=dict)         # account -> hands left sitting out
    sitout_log: dict = field(default_factory=dict)      # account -> (gid or None, table)
    returning: set = field(default_factory=set)         # back from a sit-out: "has returned" at the next deal
    handed_off: dict = field(default_factory=dict)      # account -> True once another person plays it
    away: dict = field(default_factory=dict)            # account -> when its desktop logs in (moving off the phone)
    away_dev: dict = field(default_factory=dict)        # account -> (ip, device) of that login, if not the desktop


def register(plan: TournamentPlan, entries: list, ps: Players, ctx) -> None:
    """Each entrant's login, registration, session and policy (into ``ps``); the withdrawn
    registrations' login, register, unregister and logout events."""
    rng = ctx.rng
    ev = ctx.events
    tid = plan.tid
    for e in entries:
        ip, device, mobile = ctx.device_of(e.pid, e.account, plan.start_ms)
        e.mobile = mobile
        sid = ctx.new_session_id()
        login = min(e.register_ms, plan.start_ms - rng.randrange(30_000, 20 * 60_000)) - rng.randrange(5_000, 60_000)
        ev.login(login, e.account, sid, ip, device)
        ev.add(e.register_ms, "register", e.account, tournament=tid)
        ps.sessions[e.account] = sid
        ps.policies[e.account] = ctx.policy_for(e.account, e.pid, mobile, None, tid)
    for acc, pid, ms in plan.unregistered:
        ip, device, mobile = ctx.device_of(pid, acc, ms)
        sid = ctx.new_session_id()
        ev.login(ms - rng.randrange(60_000, 600_000), acc, sid, ip, device)
        ev.add(ms - rng.randrange(30 * 60_000, 90 * 60_000), "register", acc, tournament=tid)
        ev.add(ms, "unregister", acc, tournament=tid)
        ev.logout(ms + rng.randrange(10_000, 300_000), acc, sid)


def plan_switches(plan: TournamentPlan, entries: list, ctx) -> None:
    """Which entrants of a multi-table event move to another device, and after how many hands
    (``Entry.switch_hand``): a sixth of those on a phone, and the world's switchers by habit."""
    P = ctx.w.params
    for e in entries:
        sw = random.Random(derive_seed(ctx.w.seed, "switch", plan.tid, ctx.w.key(e.account)))
        if e.mobile and e.handoff_pid < 0 and sw.random() < 1 / 6:
            e.switch_hand = sw.randint(5, 40)
        elif e.pid in ctx.w.traits.switchers and e.handoff_pid < 0 and sw.random() < P.switcher_rate:
            e.switch_hand = sw.randint(*P.switcher_hand)  # a habit: another device of theirs, late


#: the sit-out count of a seat that sits out until its player logs in again. The tournament's hand loop
#: counts every sitting seat down by one a hand, so such a seat is recognised by a count above half of it
#: (a test on the exact value found it only before the first hand dealt while it sat out, and the seat then
#: sat out for the rest of the event: the hand-off's new player never played).
UNTIL_LOGIN = 1 << 30


def waits_for_login(ps: Players, acc: str) -> bool:
    """Whether ``acc``'s seat sits out until the account logs in again (see :data:`UNTIL_LOGIN`)."""
    return ps.sitting.get(acc, 0) > UNTIL_LOGIN // 2


def switch_devices(tb: TourTable, t: int, ps: Players, ctx, tid) -> None:
    """The owner moves from the phone to the desktop between hands: the phone logs out, and the player
    sits out the hands dealt until the desktop has logged in."""
    rng = ctx.rng
    ev = ctx.events
    for acc in tb.seats.values():
        e = ps.by_acc[acc]
        if e.switch_hand >= 0 and ps.hands_of.get(acc, 0) >= e.switch_hand and ps.sessions[acc]:
            e.switch_hand = -1
            sw = random.Random(derive_seed(ctx.w.seed, "switch-at", tid, ctx.w.key(acc)))
            if e.pid in ctx.w.traits.switchers:
                ps.away_dev[acc] = other_device(ctx, e, t)
            logout = t - sw.randrange(4_000, 5_500)
            ev.logout(logout, acc, ps.sessions[acc])
            ps.sessions[acc] = ""
            ps.away[acc] = logout + (sw.randrange(2_000, 15_000) if sw.random() < 0.5 else sw.randrange(15_000, 40_000))
            if ps.away[acc] + 300 > t and acc not in ps.sitting:
                ps.sitting[acc] = UNTIL_LOGIN
                ps.sitout_log[acc] = (None, tb.name)
                ev.sit_out(logout + sw.randrange(200, 1_500), acc, tb.name, tid)
        if acc in ps.away and ps.away[acc] + 300 <= t:
            ip, device = ps.away_dev.pop(acc) if acc in ps.away_dev else ctx.w.devices.desktop(e.pid)
            sid = ctx.new_session_id()
            ev.login(ps.away.pop(acc), acc, sid, ip, device)
            ps.sessions[acc] = sid
            ps.policies[acc].mobile = False
            if waits_for_login(ps, acc):
                del ps.sitting[acc]
                ps.sitout_log.pop(acc, None)
                ev.sit_in(t - rng.randrange(100, 300), acc, tb.name, tid)
                ps.returning.add(acc)


def hand_offs(tb: TourTable, t: int, ps: Players, seat_states: list, ctx, tid) -> None:
    """Seat hand-off: from this hand on another person plays the account (logout, the helper's login
    from their device or the owner's; a seat whose helper is not back by the deal sits out)."""
    rng = ctx.rng
    ev = ctx.events
    P = ctx.w.params
    for acc in tb.seats.values():
        e = ps.by_acc[acc]
        if e.handoff_pid >= 0 and not ps.handed_off.get(acc) and ps.hands_of.get(acc, 0) >= e.handoff_hand:
            ps.handed_off[acc] = True
            # between hands (the last decision is at least 6 s before the next deal)
            logout = t - rng.randrange(4_000, 5_500)
            if ps.sessions[acc]:
                ev.logout(logout, acc, ps.sessions[acc])
            ip, device, mobile = ctx.device_of(e.handoff_pid, acc, t, person_only=True)
            if ctx.w.handoff[acc].gid in ctx.w.traits.handoff_same_device:
                ip, device, mobile = ctx.device_of(e.pid, acc, t)  # the helper sits at the owner's device
            login = t - rng.randrange(300, 3_000)
            if P.handoff_gap_s is not None:
                login = logout + int(rng.uniform(*P.handoff_gap_s) * 1000)
            if login + 300 <= t:
                sid = ctx.new_session_id()
                ev.login(login, acc, sid, ip, device)
                ps.sessions[acc] = sid
            else:  # not back by this deal: the seat sits out until the helper logs in
                ps.sessions[acc] = ""
                ps.away[acc], ps.away_dev[acc] = login, (ip, device)
                ps.sitting[acc] = UNTIL_LOGIN
                ps.sitout_log[acc] = (None, tb.name)
                for st in seat_states:
                    if st.player == acc:
                        st.sitting_out = True
            ps.policies[acc] = ctx.policy_for(acc, e.handoff_pid, mobile, None, tid, person=True)
            ctx.handoff_started(acc, tid)


def other_device(ctx, e, t: int) -> tuple[str, str]:
    """A habitual switcher's next device: one of theirs other than the one in use now, on the home network."""
    p = ctx.w.pop.persons[e.pid]
    _, now, _ = ctx.device_of(e.pid, e.account, t)
    others = [d for d in p.devices if d.fingerprint != now] or p.devices
    return p.home_ip, others[-1].fingerprint
