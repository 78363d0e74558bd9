"""Heads-up matches and planted heads-up flipping (house rules 003: "play out heads-up matches in a normal way").

Method. When the mix names ``heads_up_flipping`` (even at 0: an honest world
with heads-up play), the world adds heads-up tournaments of three kinds,
planned from streams of their own after every other unit (so the other kinds'
hands, events and hand ids are byte for byte what they were):

* **heads-up sit-and-gos**: two entrants, winner takes the pool; the regular
  structure is 1,500 chips at 10/20 (75 big blinds) with the sit-and-go levels
  every 10 hands; a **hyper-turbo** (share ``hyper_share``) starts at 500 chips
  (25 big blinds) with levels every 3 hands, so honest push-or-fold shoves and
  calls are common;
* **scheduled heads-up tournaments**: 4 or 8 entrants in a bracket of matches
  at two-seat tables, 65/35 % prizes; the players of the final match flip
  it out by agreement at share ``final_flip`` of them, which the rule allows
  ("does not apply to the final match of a scheduled heads-up tournament");
* the entrants are a pool of heads-up regulars (one active person in twelve,
  at least 12), a few honest **rival pairs** who meet again and again
  (share ``rival_share`` of the honest matches), and the flipping pairs;
* honest **gamblers** (share ``gambler_share`` of the regulars, drawn from a
  stream of their own): in any hand of any match they move all in preflop
  with any cards at rate ``gamble``, whoever the opponent, who calls or folds
  as its own play says. A gambler who meets a rival often flips with them
  often, and no more than with anyone else.

A flipping pair (:class:`datasets.collusion.Group`, ``venue`` ``"hu"``) plays
``pair_matches`` matches against each other and ``own_matches`` each against
other regulars (their honest baseline), times the hands per account against
the preset's. In a hand of a match between the two, the pair flips with
probability ``strength`` during the first ``early_hands`` hands of the match
and ``strength * late`` afterwards (one coin per hand and group): the first
to act moves all in preflop whatever it holds and the other calls all in.
Labels hold the hands in which a flipper's action differed from its honest one.

Parameters are fixed in the first world (:data:`FIRST`) and drawn uniformly
from :data:`RANGES` per world seed (``Random(derive_seed(world_seed, "flipping"))``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, fields, replace

from datasets.records import Action
from datasets.population import derive_seed
from datasets.tournaments import SNG_LEVELS, Entry, TournamentPlan, TourTable

KIND = "heads_up_flipping"
HU_TID_BASE = 3_900_000_000
HU_HANDS_EST = 70
HU_SHARE = 0.1  # heads-up hands wanted, as a share of the world's target
MAX_MATCH_HANDS = 600


@dataclass(frozen=True)
class FlipParams:
    """The heads-up world's mechanisms (defaults: the first world's)."""

    hyper_share: float = 0.3
    early_hands: int = 8
    late: float = 0.25
    pair_matches: tuple = (6, 10)
    own_matches: tuple = (5, 8)
    rival_share: float = 0.2
    final_flip: float = 0.5
    gambler_share: float = 0.15
    gamble: float = 0.08


FIRST = FlipParams()
#: parameter -> (low, high) drawn uniformly; a tuple parameter draws lo in the first range, hi = lo + the second
RANGES: dict[str, tuple] = {
    "hyper_share": (0.1, 0.6),
    "early_hands": (4, 15),
    "late": (0.05, 0.6),
    "pair_matches": ((3, 8), (2, 6)),
    "own_matches": ((3, 8), (1, 5)),
    "rival_share": (0.05, 0.4),
    "final_flip": (0.2, 0.9),
    "gambler_share": (0.05, 0.3),
    "gamble": (0.02, 0.2),
}


def draw_flip_params(world_seed: int | None) -> FlipParams:
    """The heads-up mechanisms of ``world_seed`` (None: :data:`FIRST`), drawn in the order of :data:`RANGES`."""
    if world_seed is None:
        return FIRST
    rng = random.Random(derive_seed(world_seed, "flipping"))
    drawn = {}
    for f in fields(FlipParams):
        spec = RANGES[f.name]
        if isinstance(spec[0], tuple):
            lo = rng.randint(*spec[0])
            drawn[f.name] = (lo, lo + rng.randint(*spec[1]))
        elif isinstance(f.default, int):
            drawn[f.name] = rng.randint(*spec)
        else:
            drawn[f.name] = round(rng.uniform(*spec), 3)
    return replace(FIRST, **drawn)


@dataclass
class HeadsUpPlan(TournamentPlan):
    """A heads-up tournament: a sit-and-go of two or a scheduled bracket of 4 or 8."""

    hyper: bool = False
    final_flip: bool = False
    early_hands: int = FIRST.early_hands
    late: float = FIRST.late
    gamblers: list = field(default_factory=list)  # entrants who gamble (honest), at rate ``gamble``
    gamble: float = FIRST.gamble


# ----------------------------------------------------------------------------- the colluders' deviation

def flip_chance(view, link) -> float:
    """The coin's probability that ``link``'s pair flips this hand (0 when the spot is not theirs).

    A spot is a preflop decision of a heads-up match (``view.table['hu_match']``) with only the
    player and a partner in the hand."""
    hu = view.table.get("hu_match") if view.table else None
    if not hu or view.street != 0 or len(view.in_hand) != 2:
        return 0.0
    if not any(p in link.partners for p in view.in_hand if p != view.player):
        return 0.0
    if link.role == "gambler":
        return link.strength
    return link.strength if hu["hand"] <= hu["early"] else link.strength * hu["late"]


def flip_action(view, a: Action) -> Action:
    """All in preflop whatever the cards: call an all-in, else move all in."""
    if view.to_call > 0 and (view.to_call >= view.stack or not view.can_raise):
        return Action("call")
    if view.can_raise:
        return Action("raise", view.max_raise_to)
    return a


# ----------------------------------------------------------------------------- planning

def plant_flippers(pop, groups: list, count: int, strength: tuple[float, float], seed: int) -> list:
    """``count`` flipping pairs among active persons in no group, strengths spread evenly over ``strength``.

    Drawn from ``Random(derive_seed(seed, "flipping"))``; persons keep their activity (their other play
    is what it was). Group ids continue the others' numbering."""
    from datasets.collusion import Group

    rng = random.Random(derive_seed(seed, "flipping"))
    taken = {pid for g in groups for pid in g.pids}
    free = [p.pid for p in pop.persons if p.accounts and p.activity >= 0.3 and p.household is None
            and p.pid not in taken]
    rng.shuffle(free)
    lo, hi = strength
    strengths = [lo + (hi - lo) * (i / (count - 1) if count > 1 else 1.0) for i in range(count)]
    rng.shuffle(strengths)
    out = []
    for k in range(count):
        if len(free) < 2:
            break
        pids = [free.pop(), free.pop()]
        out.append(Group(f"g{len(groups) + k + 1}", KIND, [pop.persons[p].accounts[0] for p in pids],
                         round(strengths[k], 3), pids=pids, venue="hu"))
    return out


def heads_up_units(world, mix: dict[str, int], strength: tuple[float, float], n_hands: int, days: int, play: float,
                   world_seed: int | None, first_unit: int) -> list[tuple[str, int, HeadsUpPlan, int]]:
    """Where ``mix`` names :data:`KIND` (none otherwise): plant its count of flipping pairs
    (:func:`plant_flippers`, added to ``world.groups``) and plan the heads-up tournaments
    (:func:`plan_heads_up`); returns the units ``("hu", number, plan, estimated hands)`` numbered from
    ``first_unit``."""
    if KIND not in mix:
        return []
    flippers = plant_flippers(world.pop, world.groups, mix[KIND], strength, world.seed)
    plans = plan_heads_up(world, flippers, n_hands, days, play, world_seed, first_unit)
    world.groups.extend(flippers)
    return [("hu", pl.unit, pl, HU_HANDS_EST * (len(pl.entries) - 1)) for pl in plans]


def plan_heads_up(world, flippers: list, n_hands: int, days: int, play: float, world_seed: int | None,
                  first_unit: int) -> list[HeadsUpPlan]:
    """The heads-up tournaments (module docstring), numbered from ``first_unit`` in start order.

    ``flippers``: the planted pairs; ``n_hands``: the world's hand target (the honest matches aim at
    ``HU_SHARE`` of it); ``play``: hands per account against the preset's."""
    P = draw_flip_params(world_seed)
    rng = random.Random(derive_seed(world.seed, world_seed, "heads-up"))
    pop = world.pop
    in_group = {pid for g in world.groups for pid in g.pids} | {pid for g in flippers for pid in g.pids}
    active = sorted(p.pid for p in pop.persons if p.accounts and p.activity > 0 and p.pid not in in_group)
    regulars = rng.sample(active, min(len(active), max(12, len(pop.persons) // 12)))
    span = max(1, days) * 86_400_000
    per = max(1.0, play)
    matches: list[tuple[list[int], list[str]]] = []  # (pids, accounts)

    def acc(pid: int) -> str:
        return pop.persons[pid].accounts[0]

    def count(lo_hi: tuple) -> int:
        return rng.randint(round(lo_hi[0] * per), round(lo_hi[1] * per))

    rivals = [tuple(rng.sample(regulars, 2)) for _ in range(max(2, len(regulars) // 8))]
    for _ in range(max(20, int(n_hands * HU_SHARE / HU_HANDS_EST))):
        pids = list(rng.choice(rivals)) if rng.random() < P.rival_share else rng.sample(regulars, 2)
        matches.append((pids, [acc(p) for p in pids]))
    for g in flippers:
        for _ in range(count(P.pair_matches)):
            matches.append((list(g.pids), list(g.accounts)))
        for pid, a in zip(g.pids, g.accounts):
            for _ in range(count(P.own_matches)):
                o = rng.choice(regulars)
                matches.append(([pid, o], [a, acc(o)]))
    plans: list[HeadsUpPlan] = []
    for pids, accs in matches:
        start = world.t0_ms + rng.randrange(span) // 60_000 * 60_000
        hyper = rng.random() < P.hyper_share
        plans.append(_plan(rng, start, list(zip(pids, accs)), hyper, False, P))
    for _ in range(max(2, days)):
        start = world.t0_ms + (rng.randrange(span) // 3_600_000) * 3_600_000
        who = rng.sample(regulars, min(len(regulars), rng.choice([4, 8])))
        plans.append(_plan(rng, start, [(p, acc(p)) for p in who], False, rng.random() < P.final_flip, P))
    g_rng = random.Random(derive_seed(world.seed, world_seed, "gamblers"))
    gamblers = {acc(pid) for pid in regulars if g_rng.random() < P.gambler_share}
    for pl in plans:
        pl.gamblers = sorted(e.account for e in pl.entries if e.account in gamblers)
        pl.gamble = P.gamble
    plans.sort(key=lambda p: (p.start_ms, p.tid))
    for i, pl in enumerate(plans):
        pl.unit = first_unit + i
        pl.name = pl.tid
    return plans


def _plan(rng: random.Random, start: int, who: list[tuple[int, str]], hyper: bool, final_flip: bool,
          P: FlipParams) -> HeadsUpPlan:
    bi, fee = rng.choice([(500, 25), (1000, 50), (2000, 100), (5000, 250)])
    tid = str(HU_TID_BASE + rng.randrange(90_000_000))
    pl = HeadsUpPlan(unit=-1, tid=tid, kind="hu", start_ms=start, buy_in=bi, fee=fee, stack=500 if hyper else 1500,
                     hyper=hyper, final_flip=final_flip, early_hands=P.early_hands, late=P.late)
    pl.entries = [Entry(a, pid, start - rng.randrange(5_000, 10 * 60_000)) for pid, a in who]
    return pl


# ----------------------------------------------------------------------------- playing

def play_heads_up(plan: HeadsUpPlan, ctx) -> int:
    """Play a heads-up tournament into ``ctx.sink``: one match, or a bracket round by round (byes for odd
    counts); each match starts both players at ``plan.stack``. Returns the hands played."""
    from datasets import entrants

    rng = ctx.rng
    entries = list(plan.entries)
    n = len(entries)
    pool = plan.buy_in * n
    prizes = {1: pool} if n == 2 else {1: pool * 65 // 100, 2: pool - pool * 65 // 100}
    ps = entrants.Players({e.account: e for e in entries})
    entrants.register(plan, entries, ps, ctx)
    for e in entries:
        _flip_policy(plan, ctx, ps, e, final=False)
    ctx.table_info.clear()
    ctx.table_info["raise_cap"] = (4, 6)
    alive = [e.account for e in entries]
    rng.shuffle(alive)
    state = {"t": plan.start_ms, "remaining": n, "hands": 0, "place_of": {}}
    rnd = 0
    while len(alive) > 1:
        rnd += 1
        final = len(alive) == 2 and n > 2
        nxt, t0, t_end = [], state["t"], state["t"]
        for k in range(0, len(alive), 2):
            pair = alive[k:k + 2]
            if len(pair) == 1:
                nxt.append(pair[0])
                continue
            if final and plan.final_flip:
                for a in pair:
                    _flip_policy(plan, ctx, ps, ps.by_acc[a], final=True, partner=[x for x in pair if x != a][0])
            tb, t_done = _play_match(plan, ctx, ps, pair, t0, f"{plan.tid} {rnd}-{k // 2 + 1}", prizes, state)
            nxt.extend(tb.seats.values())
            t_end = max(t_end, t_done)
        alive, state["t"] = nxt, t_end + rng.randrange(30_000, 120_000)
    if len(alive) == 1 and ps.sessions.get(alive[0]):
        ctx.events.logout(t_end + rng.randrange(10_000, 300_000), alive[0], ps.sessions[alive[0]])
    ctx.tournament_done(plan, state["place_of"], {})
    return state["hands"]


def _flip_policy(plan: HeadsUpPlan, ctx, ps, e: Entry, final: bool, partner: str | None = None) -> None:
    """A planted flipper's policy (its group's link), at an agreed final both players' and a gambler's
    (links of their own, never labelled); others keep the policy :func:`datasets.entrants.register` gave them."""
    from datasets.collusion import ColludingPolicy, Link

    w = ctx.w
    if final:
        links = [Link(f"final-{plan.tid}", KIND, frozenset([partner]), 1.0)]
    elif e.account in plan.gamblers:
        others = frozenset(x.account for x in plan.entries if x.account != e.account)
        links = [Link(f"gamble-{e.account}", KIND, others, plan.gamble, role="gambler")]
    else:
        links = [Link(g.gid, KIND, frozenset(a for a in g.accounts if a != e.account), g.strength)
                 for g in w.groups if g.kind == KIND and e.account in g.accounts]
    if not links:
        return
    p = w.pop.persons[e.pid]
    ps.policies[e.account] = ColludingPolicy(e.account, w.account_style.get(e.account, p.style), p.timing, ctx.rng,
                                             ctx.decisions, e.mobile, links=links, ctx=ctx)


def _level(plan: HeadsUpPlan, hands: int):
    from datasets.records import GameConfig, TournamentInfo

    lvl = min(hands // (3 if plan.hyper else 10), len(SNG_LEVELS) - 1)
    sb, bb = SNG_LEVELS[lvl]
    return (GameConfig(game="holdem", limit="no_limit", small_blind=sb, big_blind=bb, ante=0),
            TournamentInfo(plan.tid, plan.buy_in, plan.fee, level=lvl + 1))


def _play_match(plan: HeadsUpPlan, ctx, ps, pair: list[str], t: int, name: str, prizes: dict,
                state: dict) -> tuple[TourTable, int]:
    """One match at a two-seat table from ``t`` until one player has every chip (or ``MAX_MATCH_HANDS``)."""
    from datasets.tournaments import _close_round, _crown_winner, _deal_table, _rank_eliminations, _settle_round

    tb = TourTable(name, 2)
    tb.seats = {1: pair[0], 2: pair[1]}
    stacks = {a: plan.stack for a in pair}
    clock = {name: t}
    while len(tb.seats) == 2 and tb.hands < MAX_MATCH_HANDS:
        config, info = _level(plan, tb.hands)
        ctx.table_info["hu_match"] = {"hand": tb.hands + 1, "early": plan.early_hands, "late": plan.late}
        rec = _deal_table(tb, clock[name], ps, stacks, {}, config, info, ctx, plan.tid)
        busted = _settle_round([rec], stacks, {}, {}, False)
        state["remaining"] = _rank_eliminations(busted, state["remaining"], prizes, {}, state["place_of"], ctx,
                                                plan.tid)
        for _, _, acc, _, _ in busted:
            tb.seats = {s: a for s, a in tb.seats.items() if a != acc}
        if state["remaining"] == 1:
            _crown_winner([tb], [rec], prizes, {}, {}, state["place_of"], ctx, plan.tid)
        state["hands"] += _close_round([rec], busted, clock, ps, ctx, plan.tid)
    return tb, clock[name]


__all__ = ["KIND", "FlipParams", "HeadsUpPlan", "draw_flip_params", "flip_action", "flip_chance", "heads_up_units",
           "plan_heads_up", "plant_flippers", "play_heads_up"]
