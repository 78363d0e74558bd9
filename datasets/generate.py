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
(only hands in which collusion actually happened). The planning of cash,
tournaments and transfers is :mod:`datasets.planning`; the world a worker
plays in and the services its units use are :mod:`datasets.units`.

Layout written under ``out_dir``::

    hands/chunk-0000.txt ...       PokerStars text, operator view by default
    events/chunk-0000-0.jsonl ...  decisions, sessions, sit-outs, registrations
    events/platform-0.jsonl ...    planner sessions, transfers
    accounts.csv
    labels.jsonl
"""

from __future__ import annotations

import csv
import json
import random
import shutil
from dataclasses import replace
from pathlib import Path

from datasets.cash import DAY_MS, MIN_MS, CashPlanner, DayDevices, make_buckets
from datasets import chat, flipping
from datasets.collusion import Group, plant_groups
from datasets.events import EventLog, iso_s, to_ms, write_events
from datasets.names import dress_names
from datasets.planning import MTT_HANDS_PER_ENTRANT, SNG_HANDS_EST, plan_cash, plan_tournaments, plan_transfers
from datasets.population import (WORLD_START, Population, derive_seed, draw_format_taste, jitter_style,
                                 make_population)
from datasets.presets import PRESETS, Preset
from datasets.units import World, run_chunk, set_world
from datasets.worlds import draw_params, draw_traits


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
    cash_tables, days = plan_cash(world, planner, int(n_hands * cash_share), rng, planner_events, groups,
                                   min_days=spec.days)
    days = max(days, 2)
    units: list[tuple[str, int, object, int]] = []
    for t in sorted(cash_tables, key=lambda t: (t.start_ms, t.name)):
        units.append(("cash", 0, t, t.estimated_hands()))
    # hands per account against the preset's: a bigger world plays more, groups included
    play = (n_hands / max(1, n_accounts)) / (spec.hands / max(1, spec.accounts))
    tplans = plan_tournaments(world, int(n_hands * sng_share), int(n_hands * mtt_share), days, rng, groups, 0, play)
    for pl in tplans:
        est = SNG_HANDS_EST if pl.kind == "sng" else int(len(pl.entries) * MTT_HANDS_PER_ENTRANT)
        units.append(("sng" if pl.kind == "sng" else "mtt", 0, pl, est))
    # unit numbers in start-time order (hand ids grow roughly with time)
    units.sort(key=lambda u: (u[2].start_ms, u[0], getattr(u[2], "name", "")))
    numbered = []
    for i, (kind, _, plan, est) in enumerate(units):
        plan.unit = i
        numbered.append((kind, i, plan, est))
    plan_transfers(groups, world, days, rng, planner_events)
    # heads-up play and its flippers where the mix names them, after every other unit (datasets.flipping)
    numbered += flipping.heads_up_units(world, mix, spec.strength, n_hands, days, play, world_seed, len(numbered))
    world.chat = chat.plan_world_chat(pop, groups, mix, spec.strength, seed, world_seed)
    world.waves = _disconnect_waves(pop, days, t0, rng)
    return world, numbered, planner_events, days


def _disconnect_waves(pop, days: int, t0: int, rng: random.Random) -> list[tuple[int, int, str]]:
    """An ISP or a mobile carrier dropping for one to four minutes, once or twice a day.

    Returns ``(start ms, end ms, address prefix)`` sorted by start: every
    connection whose address begins with the prefix drops in that window.
    """
    waves = []
    for day in range(days):
        for _ in range(rng.randint(1, 2)):
            start = t0 + day * DAY_MS + int(rng.uniform(17, 24) * 3_600_000)
            if rng.random() < 0.7:
                ip = rng.choice(pop.persons).home_ip
            else:
                ip = rng.choice(pop.mobile_ips)
            prefix = ".".join(ip.split(".")[:2]) + "."
            waves.append((start, start + int(rng.uniform(1, 4) * MIN_MS), prefix))
    waves.sort()
    return waves


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
    if view not in ("operator", "player"):
        raise ValueError("view must be 'operator' or 'player'")
    out = Path(out_dir)
    world, units, planner_events, days = plan_world(preset=preset, seed=seed, accounts=accounts, hands=hands, mix=mix,
                                                    view=view, names=names, world_seed=world_seed)
    for sub in ("hands", "events"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
        (out / sub).mkdir(parents=True, exist_ok=True)
    # heads-up units in chunks of their own: the other units' files are what they were without them
    chunks = _chunks([u for u in units if u[0] != "hu"], chunk_hands) + _chunks([u for u in units if u[0] == "hu"],
                                                                                 chunk_hands)
    set_world(world)
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
                r = run_chunk(task)
                results.append(r)
                if bar:
                    bar.update(sum(u[3] for u in units if u[1] in {x[1] for x in task[1]}))
        else:
            import multiprocessing as mp

            # spawn, not fork: a fork of a process whose other threads hold locks (Polars', DuckDB's
            # pools in a test session or a Dagster run) can leave a worker waiting forever
            ctx = mp.get_context("spawn")
            with ctx.Pool(n_workers, initializer=set_world, initargs=(world,)) as pool:
                for r in pool.imap_unordered(run_chunk, tasks):
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
        set_world(None)
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
    """One line per planted group that acted in the data: the hands where it colluded, its events and time span.

    A group is labelled only if it acted (a hit: a hand where it colluded, or for a bounty gang or a sit-out
    group an event where it did). A planned group that never acted (its strength drew no act in its events,
    or the account busted first) left nothing in the data: it has no line, and counts neither in recall nor
    as a false flag. Multi-accounting is the exception: one person holding several accounts is the act
    itself, so its group keeps its line, with the events its accounts entered together."""
    hits: dict[str, list] = {}
    chat_groups = world.chat.groups if world.chat is not None else []
    for r in results:
        for gid, lst in r["hits"].items():
            hits.setdefault(gid, []).extend(lst)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for g in [*world.groups, *chat_groups]:
            lst = sorted(hits.get(g.gid, []), key=lambda x: (x[1], x[0]))
            if not lst and g.kind != "multi_accounting":
                # planned but never acted (e.g. no event drew a hand-off or a sit-out at the group's strength,
                # or the owner busted before the hand-off hand): nothing to find
                continue
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
