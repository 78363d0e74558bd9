"""Plan a generator's world: cash sessions and tables, tournaments and their entrants, transfers.

Everything here runs in the parent process from the world's one seeded RNG
(see :mod:`datasets.generate`): :func:`plan_cash` seats the sessions day by
day into table plans (:mod:`datasets.cash`), :func:`plan_tournaments` the
sit-and-gos and multi-table events with their entrants and the planted
groups' entries (:mod:`datasets.tournaments`), :func:`plan_transfers` the
groups' chip transfers as platform events.
"""

from __future__ import annotations

import itertools
import math
import random

from datasets.cash import (DAY_MS, MIN_MS, CashPlanner, CashTablePlan, person_buckets, session_minutes,
                           session_start, trim_short_tables)
from datasets.collusion import Group
from datasets.events import EventLog
from datasets.population import Population, derive_seed
from datasets.tournaments import Entry, TournamentPlan
from datasets.units import World

TOURNAMENT_ID_BASE = 3_400_000_000
SNG_HANDS_EST = 105
MTT_HANDS_PER_ENTRANT = 9.0


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


def plan_cash(world: World, planner: CashPlanner, target: int, rng: random.Random, events: EventLog,
              groups: list[Group], min_days: int = 1, max_days: int = 400) -> tuple[list[CashTablePlan], int]:
    """Sessions day by day until the tables' estimated hands reach ``target``, over at least ``min_days``.

    Each day, the cash players' and groups' session requests (:func:`_day_requests`) are seated by the
    ``planner`` (:func:`_seat_requests`); the last day is thinned so the world stops near the target.
    Events (logins, sessions) go to ``events``. Returns the tables with two seats or more and the
    number of days planned (at most ``max_days``).
    """
    pop = world.pop
    pids = [p.pid for p in pop.persons if p.activity > 0 and p.accounts]
    cash_people = [pid for pid in pids if pop.persons[pid].favourite == "cash" or rng.random() < 0.25]
    cash_groups = [g for g in groups if g.venue == "cash"]
    fav, house = _cash_buckets(world, planner, pids, cash_people, cash_groups, rng)
    in_group = {pid for g in cash_groups for pid in g.pids}
    friend_rng = random.Random(derive_seed(world.seed, "friends"))
    est = 0
    day = 0
    if target <= 0:
        return [], 0
    # spread the target over at least ``min_days`` days: scale everyone's activity down if needed
    per_session = (85.0 / 60.0) * 1.6 * 95.0 / 5.5
    day_est0 = sum(pop.persons[pid].activity * 0.9 for pid in cash_people if pid not in in_group) * 1.1 * per_session
    scale = max(0.6, min(1.0, target / max(1.0, min_days * day_est0)))  # but keep tables populated
    while est < target and day < max_days:
        solo = [pid for pid in cash_people if pid not in in_group]
        reqs = _day_requests(world, solo, house, cash_groups, fav, scale, day, rng, friend_rng)
        # the last day is thinned so the world stops near the target
        day_est = len(reqs) * per_session
        if est + day_est > target:
            keep = max(0.05, (target - est) / day_est)
            reqs = [r for r in reqs if r[1] == "group" or rng.random() < keep]
        _seat_requests(planner, pop, reqs, fav, day, events, rng)
        for t in planner.day_tables.get(day, []):
            trim_short_tables(t, rng)
        est += sum(t.estimated_hands() for t in planner.day_tables.get(day, []))
        day += 1
    tables = [t for t in planner.tables if len(t.seats) >= 2]
    return tables, day


def _cash_buckets(world: World, planner: CashPlanner, pids: list[int], cash_people: list[int],
                  cash_groups: list[Group], rng: random.Random) -> tuple[dict[int, list], dict[int, list[int]]]:
    """The games (the planner's buckets, usual first) of everyone who may sit at a cash table, and the households.

    Cash players, the cash groups' members and everyone sharing a household get their buckets
    (:func:`datasets.cash.person_buckets`); friends play the same game: the one's usual bucket comes
    first for the other. Returns (person -> buckets, household -> its active persons).
    """
    pop = world.pop
    fav = {pid: person_buckets(pop.persons[pid], planner.buckets, rng) for pid in cash_people}
    for g in cash_groups:
        for pid in g.pids:
            if pid not in fav:
                fav[pid] = person_buckets(pop.persons[pid], planner.buckets, rng)
    for a, b in world.traits.friends:
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
    return fav, house


def _day_requests(world: World, solo: list[int], house: dict[int, list[int]], cash_groups: list[Group], fav: dict,
                  scale: float, day: int, rng: random.Random, friend_rng: random.Random) -> list[tuple]:
    """One day's session requests ``(start ms, "solo" | "group", person | group)``, in start order.

    Each of ``solo`` starts a Poisson number of sessions (activity times ``scale``), housemates often
    join from the same home; friends meet (:func:`_friends_meet`, from ``friend_rng``); a cash group
    meets with probability ``world.params.cash_meet`` and its members also play alone.
    """
    pop = world.pop
    reqs = []
    for pid in solo:
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
    return reqs


def _seat_requests(planner: CashPlanner, pop: Population, reqs: list[tuple], fav: dict, day: int, events: EventLog,
                   rng: random.Random) -> None:
    """Seat one day's requests through ``planner``: a player on one to four tables of their games, a group
    together (its lead first, the others within four minutes at the lead's tables)."""
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


def plan_tournaments(world: World, sng_target: int, mtt_target: int, days: int, rng: random.Random,
                     groups: list[Group], first_unit: int, play: float = 1.0) -> list[TournamentPlan]:
    """Sit-and-gos and multi-table tournaments over the world's days, with the groups entered.

    ``sng_target`` and ``mtt_target``: the hands wanted of each format (events are counted from
    ``SNG_HANDS_EST`` and ``MTT_HANDS_PER_ENTRANT``); ``play``: hands per account against the preset's
    (:func:`_enter_groups`). Returns the plans numbered from ``first_unit`` in start-time order.
    """
    pop = world.pop
    people = [p.pid for p in pop.persons if p.activity > 0 and p.accounts]
    group_pids = {pid for g in groups for pid in g.pids}
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
    if any(g.venue == "mtt" for g in groups):
        while len(mtt_entrants) < 3:
            mtt_entrants.append(max(18, entrants_cap // 2))
    plans = _schedule_events(world, people, group_pids, n_sng, mtt_entrants, max(1, days) * DAY_MS, rng)
    _enter_groups(plans, groups, rng, world, play)
    for i, pl in enumerate(sorted(plans, key=lambda p: (p.start_ms, p.tid))):
        pl.unit = first_unit + i
        pl.name = pl.tid
    return sorted(plans, key=lambda p: p.unit)


def _entry_weights(pop: Population, people: list[int]) -> tuple[list[float], list[float], list[float]]:
    """Cumulative entry weights of ``people`` for sit-and-gos, knockouts and freezeouts.

    A person enters their favourite format six times as often as another. A bounty hunter's taste
    (population.draw_format_taste) moves their multi-table entries towards knockouts, not their number:
    weights t and 1 for knockout and freezeout, scaled by the mean 1 / (rho t + 1 - rho) over the
    schedule's knockout share rho.
    """
    w_sng = [pop.persons[pid].activity * (3.0 if pop.persons[pid].favourite == "sng" else 0.5) + 0.05 for pid in people]
    w_mtt = [pop.persons[pid].activity * (3.0 if pop.persons[pid].favourite == "mtt" else 0.5) + 0.05 for pid in people]
    rho = 1.0 - _MTT_TYPES[0]
    norm = [1.0 / (rho * pop.persons[pid].knockout + 1.0 - rho) for pid in people]
    w_ko = [w * n * pop.persons[pid].knockout for w, n, pid in zip(w_mtt, norm, people)]
    w_free = [w * n for w, n in zip(w_mtt, norm)]
    return (list(itertools.accumulate(w_sng)), list(itertools.accumulate(w_ko)),
            list(itertools.accumulate(w_free)))


def _schedule_events(world: World, people: list[int], group_pids: set[int], n_sng: int, mtt_entrants: list[int],
                     span: int, rng: random.Random) -> list[TournamentPlan]:
    """``n_sng`` sit-and-gos and one multi-table event per ``mtt_entrants`` size, with honest entrants.

    Starts are uniform over ``span`` ms from the world's start; the first two multi-table events are a
    knockout and a progressive knockout, the others drawn by ``_MTT_TYPES``; a few registrations to a
    multi-table event are withdrawn. Group members (``group_pids``) are left to :func:`_enter_groups`.
    """
    pop = world.pop
    w_sng, w_ko, w_free = _entry_weights(pop, people)
    tid_seq = 0

    def new_tid() -> str:
        nonlocal tid_seq
        tid_seq += 1
        return str(TOURNAMENT_ID_BASE + tid_seq * 7919 + rng.randrange(7000))

    plans: list[TournamentPlan] = []
    for _ in range(n_sng):
        start = world.t0_ms + rng.randrange(span) // 60_000 * 60_000
        bi, fee = rng.choice(_BUYINS[:4])
        pl = TournamentPlan(unit=-1, tid=new_tid(), kind="sng", start_ms=start, buy_in=bi, fee=fee, stack=1500)
        pids = _pick_entrants(people, w_sng, 9, rng, group_pids)
        pl.entries = [Entry(pop.persons[pid].accounts[0], pid, start - rng.randrange(10_000, 40 * MIN_MS)) for pid in pids]
        plans.append(pl)
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
    return plans


def _enter_groups(plans: list[TournamentPlan], groups: list[Group], rng: random.Random, world: World,
                  play: float) -> None:
    """Each group enters a few events of its venue together (in place, through :func:`_enter_group`).

    Colluders play regularly (that is how collusion pays): each group enters enough events of its
    venue for its behaviour to have chances at its strength; how often it then acts is the strength's
    coin in each opportunity (a hand dealt together, a sit-out stage, an event entered). The counts
    (``world.params``) are for a world of its preset's size: one with more hands per account (``play``
    times the preset's) gives its groups that many times the events, as it gives everyone more play.
    """
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
        as one (docs/measurements.md).
        """
        order = sorted(pool, key=lambda p: (planted_in.get((kind, p.tid), 0), rng.random()))
        return order[:k]

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


def plan_transfers(groups: list[Group], world: World, days: int, rng: random.Random, events: EventLog) -> None:
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
