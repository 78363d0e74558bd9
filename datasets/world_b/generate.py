"""World B's entry point: a whole population from one seed.

:func:`generate` draws the people (``population``), the planted groups
(``plant``), the cash sessions and the tournaments, plays them (``cash``,
``tourney``), and writes ``hh/**.txt`` (PokerStars text), ``events/*.jsonl``,
``accounts.csv`` and ``labels.jsonl`` as ``shared/spec/inputs.md`` fixes.
About 55 % of the hands are cash, 45 % tournament; at 60,000 hands about 600
accounts over 6 days (accounts and days grow with the square root of the
hands). Deterministic per seed.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime, timezone
from pathlib import Path

from . import plant
from .cash import STAKES, Session, run_pool
from .population import Rng, _hex, make_population, new_ip
from .text import iso_utc
from .tourney import Tourney, run_tourney
from .world import World, sessions_to_events, write_events


def generate(out: Path, *, seed: int, hands: int = 60_000, honest_only: bool = False) -> dict:
    """Write one world B population into ``out``; returns a small summary dict.

    ``seed`` fixes everything; ``hands`` is the approximate number of hands;
    ``honest_only`` plants no colluders (and writes an empty labels.jsonl).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = Rng(seed)
    scale = max(hands, 2000) / 60_000
    n_acc = max(60, round(600 * scale ** 0.5))
    days = max(2, round(6 * scale ** 0.5))
    # November to February: US Eastern time has no DST change inside any world
    t0 = datetime(2026, 11, 9, tzinfo=timezone.utc).timestamp() + rng.randrange(90) * 86400
    accts = make_population(rng, n_acc, t0)
    taken = {a.name for a in accts}
    groups = [] if honest_only else plant.plan_groups(rng, accts, taken, scale, t0, days)
    w = World(rng, out / "hh", t0, accts)
    w.root = out
    pools: dict = {}
    for s in _cash_sessions(rng, accts, hands * 0.55, t0, days) + [s for g in groups for s in g.cash]:
        pools.setdefault((s.stake, s.size), []).append(s)
    for key in sorted(pools):
        run_pool(w, key[0], key[1], pools[key])
    cash_hands = w.n_hands
    n_tour = _tournaments(w, rng, accts, groups, hands - cash_hands, t0, days)
    sessions_to_events(w)
    _transfers(w, rng, accts, t0, days)
    w.out = out
    n_events = write_events(w)
    _accounts_csv(out / "accounts.csv", accts)
    labels = [d for d in (g.label(w) for g in groups) if d is not None]
    with open(out / "labels.jsonl", "w", encoding="utf-8") as f:
        for d in labels:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    return {"seed": seed, "hands": w.n_hands, "cash_hands": cash_hands, "tournaments": n_tour,
            "accounts": len(accts), "days": days, "events": n_events, "groups": len(labels),
            "balance_errors": w.balance_errors}


def _cash_sessions(rng, accts, target: float, t0: float, days: int) -> list:
    """Honest cash sessions: enough player-hours for ``target`` hands; friends often arrive together."""
    hours = target * 2.6 / 55.0
    weights = [a.rate for a in accts]
    out, got = [], 0.0
    while got < hours:
        a = rng.choices(accts, weights)[0]
        start = t0 + rng.randrange(days) * 86400 + ((a.peak + rng.normal(0, 2.5)) % 24) * 3600
        length = rng.lognormvariate(8.3 if a.agent.weak else 8.8, 0.5)
        stake, size = rng.choice(a.stakes), rng.choice(a.sizes)
        out.append(Session(a, start, start + length, stake, size))
        got += length / 3600
        f = a.friend
        if f is not None and rng.random() < 0.5:
            out.append(Session(f, start + rng.uniform(10, 900), start + length * rng.uniform(0.5, 1.3), stake,
                               size, a))
            got += length / 3600
    return out


def _tournaments(w, rng, accts, groups, target: int, t0: float, days: int) -> int:
    """Schedule and play tournaments until ``target`` hands and every planted wish are played."""
    wishes = []
    for g in groups:
        for j in range(g.n_tour):
            wishes.append((3 * j + rng.randrange(3), g))  # distinct events per group
    wishes.sort(key=lambda x: (x[0], x[1].gid))
    start_hands = w.n_hands
    k = 0
    tid_base = 3_400_000_000 + rng.randrange(10_000_000) * 10
    while w.n_hands - start_hands < target or wishes:
        mine = [g for slot, g in wishes if slot <= k]
        wishes = [(slot, g) for slot, g in wishes if slot > k]
        ko = any(g.ko for g in mine) or rng.random() < 0.4
        t = _new_tourney(rng, tid_base + k * 7, t0, days, k, ko)
        size = rng.choice([18, 27, 36, 45, 60, 90, 120])
        field = _field(rng, accts, ko, max(9, round(size * min(1.0, len(accts) / 600))))
        for g in mine:
            field += [a for a in g.accts if a not in field]
            g.tournaments.append(t.tid)
        t.entrants = field
        _honest_quirks(w, rng, t)
        for g in mine:
            g.setup(t)
        run_tourney(w, t)
        for g in mine:
            if not g.came_to_play(w, t.tid) and g.retries < 3 and not any(x is g for _, x in wishes):
                g.retries += 1
                wishes.append((k + 1 + rng.randrange(3), g))
            for sw in getattr(g, "pending_switch", []):
                w.switch(g.accts[0], *sw)
            if hasattr(g, "pending_switch"):
                g.pending_switch.clear()
        k += 1
    return k


def _new_tourney(rng, tid, t0, days, k, ko) -> Tourney:
    buy = rng.choice([100, 250, 500, 1000, 2000])
    fee = max(10, buy // 10)
    start = t0 + (k % days) * 86400 + rng.uniform(15, 25) * 3600
    if ko:
        return Tourney(tid, start, buy // 2, buy - buy // 2, fee, rng.random() < 0.7, rng.choice([6, 9]),
                       rng.choice([1500, 3000]), rng.choice([300, 420, 600]))
    return Tourney(tid, start, buy, 0, fee, False, rng.choice([6, 9, 9]), rng.choice([1500, 3000, 5000]),
                   rng.choice([300, 420, 600]))


def _field(rng, accts, ko: bool, n: int) -> list:
    weights = [a.tour_rate * (1 + (a.ko_rate if ko else 0.0)) for a in accts]
    seen, out = set(), []
    while len(out) < min(n, len(accts)):
        a = rng.choices(accts, weights)[0]
        if a.name not in seen:
            seen.add(a.name)
            out.append(a)
    return out


def _honest_quirks(w, rng, t: Tourney) -> None:
    """Honest sit-outs (breaks, disconnections), late device switches, registrations taken back."""
    for a in t.entrants:
        r = rng.random()
        if r < 0.12:
            at = t.start + rng.uniform(300, 5400)
            mode = rng.choice(["event", "event", "timeout", "disc"])
            t.plan.setdefault(a.name, []).append((at, at + rng.uniform(60, 600), mode))
        if a.switcher and rng.random() < 0.7:
            if len(a.devices) == 1:
                a.devices.append(f"desktop-{_hex(rng, 12)}")
            ip = a.ip if rng.random() < 0.6 else new_ip(rng)
            w.switch(a, t.start + rng.uniform(2400, 6000), a.devices[-1], ip, rng.uniform(3, 90))
    for a in rng.sample(w.accts, 2):
        if a not in t.entrants:
            w.event(t.start - rng.uniform(600, 7200), "register", a.name, tournament=str(t.tid))
            w.event(t.start - rng.uniform(10, 500), "unregister", a.name, tournament=str(t.tid))


def _transfers(w, rng, accts, t0, days) -> None:
    """Honest cashier transfers: between friends and within households, small and rare."""
    for a in accts:
        if (a.friend is not None and rng.random() < 0.3) or rng.random() < 0.01:
            to = a.friend or rng.choice(accts)
            if to is not a:
                w.event(t0 + rng.uniform(0, days * 86400), "transfer", a.name, to=to.name,
                        amount=round(rng.uniform(5, 200), 2), currency="USD")


def _accounts_csv(path: Path, accts) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["account", "created_at", "country", "payment", "address"])
        for a in accts:
            wr.writerow([a.name, iso_utc(a.created), a.country, a.payment, a.address])
