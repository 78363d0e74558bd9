"""Worlds, not a world: the mechanisms of colluders and honest confounders drawn per world seed.

Method. :class:`WorldParams` holds every parameter of the planted mechanisms
(how a hand-off, a sit-out, a bounty gang, a dump and soft play happen) and of
the honest confounders (device switchers, players whose play drifts within a
session, regulars who loosen against weak players, short-handed tables,
friends who meet by chance, bounty hunters). Its defaults are the fixed
mechanisms of the first world (``world_seed=None``: the files of a seed are
byte for byte what they were). :func:`draw_params` draws every parameter,
from a stream of its own, uniformly from the ranges of :data:`RANGES` (the
documented ranges, datasets/README.md), so that a detector tuned on some world
seeds can be reported on others it never met (issue 32).

Per-group and per-person traits (a hand-off on the owner's own device, a
sit-out by letting the clock run out, a tilting recreational player) are
drawn by :func:`draw_traits` at planning time, also from their own stream.

The confounders follow what investigators meet in real rooms: players who
change device mid-event as a habit; recreational players who loosen after a
big loss (tilt) or loosen or tighten as a long session wears on (fatigue);
regulars who play more hands while a weak player sits at the table; tables
that run three or four handed; friends who sit down at the same table by
chance, never colluding; knockout specialists who meet in most knockouts.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, fields, replace

from datasets.policies import HonestPolicy
from datasets.population import Device, derive_seed, fingerprint, jitter_style

RECREATIONAL = ("rec", "station", "weak_tight", "maniac")


@dataclass(frozen=True)
class WorldParams:
    """Parameters of the mechanisms; the defaults are the first world's fixed ones."""

    # soft play: streets on which partners spare each other (0 preflop .. 3 river); share of a partner's
    # raised pot left alone
    soft_streets: tuple = (0, 1, 2, 3)
    soft_leave: float = 0.5
    # chip dumping: share of unopened pots the feeder raises into the receiver, the raise in big blinds,
    # the feeder's flop bet (share of the pot), the largest preflop call with any cards (share of stack),
    # sit-and-go events a dumping group enters
    dump_open: float = 0.6
    dump_open_bb: float = 3.0
    dump_bet: float = 0.6
    dump_call: float = 0.25
    dump_sng_events: tuple = (10, 16)
    # cash groups (soft play, dumping) meet on this share of days
    cash_meet: float = 0.85
    # bounty gangs: size range, the preflop percentile a partner calls a short all-in with (target all-in,
    # not yet all-in), share of isolation raises, knockout events entered
    bounty_gang: tuple = (2, 2)
    bounty_call: tuple = (0.85, 0.6)
    bounty_isolate: float = 1.0
    bounty_events: tuple = (7, 10)
    # coordinated sit-outs: opportunities used (0: 15 % of the field gone, 1: 40 %, 2: the bubble), hands
    # sat out, spread of the partners' sit-out times (ms), share of groups that let the clock run out
    # instead of clicking sit-out, events entered
    sitout_stages: tuple = (0, 1, 2)
    sitout_hands: tuple = (3, 6)
    sitout_sync_ms: int = 4_000
    sitout_timeout: float = 0.0
    sitout_events: tuple = (6, 9)
    # seat hand-offs: the tournament hand it happens at, the gap between the owner's logout and the helper's
    # login (s; None: the first world's 1-5 s between two hands), share of helpers who play like the owner,
    # share who play on the owner's device and network, events entered
    handoff_hand: tuple = (5, 25)
    handoff_gap_s: tuple | None = None
    handoff_near: float = 0.0
    handoff_same_device: float = 0.0
    handoff_events: tuple = (4, 7)
    # multi-accounting: share of days a second account uses a VPN address, another device
    ma_vpn: float = 0.5
    ma_other_device: float = 0.5
    # honest confounders: share of multi-table players who switch device mid-event as a habit, the share of
    # their events they do it in, and at which tournament hand
    switcher_share: float = 0.0
    switcher_rate: float = 0.8
    switcher_hand: tuple = (20, 120)
    # recreational players who tilt (loosen after losing tilt_bb big blinds in a hand, for tilt_hands hands,
    # VPIP times 1 + tilt) and whose play drifts over a session (VPIP times 1 + fatigue per 100 hands, either
    # sign); regulars who loosen (VPIP times 1 + fish) while a weak player is dealt in
    tilt_share: float = 0.0
    tilt: float = 0.0
    tilt_bb: float = 40.0
    tilt_hands: tuple = (10, 40)
    fatigue_share: float = 0.0
    fatigue: float = 0.0
    fish_share: float = 0.0
    fish: float = 0.0
    # cash tables that run short-handed (three or four seats open), honest friend pairs among cash players and
    # the share of a friend's sessions the other joins at about the same time and game
    short_share: float = 0.0
    friend_share: float = 0.0
    friend_meet: float = 0.0
    # bounty hunters: share of multi-table players, their knockout weight range
    hunter_share: float = 1 / 6
    hunter_taste: tuple = (3.0, 6.0)


# The ranges a drawn world takes each parameter from: (low, high) for a number, ("pick", [choices]) for a
# choice, ("range", (lo range), (span range)) for a (lo, hi) pair drawn as lo, then lo + span,
# ("logrange", (lo range), (ratio range)) for one drawn log-uniformly as lo, then lo times the ratio.
RANGES: dict[str, tuple] = {
    "soft_streets": ("pick", [(0, 1, 2, 3), (0, 1, 2, 3), (1, 2, 3), (0,), (2, 3), (0, 1)]),
    "soft_leave": (0.2, 0.8),
    "dump_open": (0.3, 0.9),
    "dump_open_bb": (2.0, 8.0),
    "dump_bet": (0.3, 1.2),
    "dump_call": (0.1, 0.5),
    "dump_sng_events": ("range", (4, 12), (2, 8)),
    "cash_meet": (0.35, 0.95),
    "bounty_gang": ("pick", [(2, 2), (2, 3), (2, 4), (3, 4)]),
    "bounty_call": ("pair", (0.5, 0.95), (0.3, 0.7)),
    "bounty_isolate": (0.2, 1.0),
    "bounty_events": ("range", (3, 9), (1, 5)),
    "sitout_stages": ("pick", [(0, 1, 2), (2,), (1, 2), (0, 2), (1,), (0, 1)]),
    "sitout_hands": ("range", (1, 4), (0, 8)),
    "sitout_sync_ms": (2_000, 90_000),
    "sitout_timeout": (0.0, 1.0),
    "sitout_events": ("range", (3, 8), (1, 5)),
    "handoff_hand": ("range", (3, 40), (5, 80)),
    "handoff_gap_s": ("logrange", (1.0, 60.0), (1.5, 10.0)),
    "handoff_near": (0.0, 1.0),
    "handoff_same_device": (0.0, 0.6),
    "handoff_events": ("range", (1, 5), (0, 6)),
    "ma_vpn": (0.1, 0.9),
    "ma_other_device": (0.1, 0.9),
    "switcher_share": (0.02, 0.12),
    "switcher_rate": (0.3, 0.9),
    "switcher_hand": ("range", (5, 60), (10, 120)),
    "tilt_share": (0.1, 0.5),
    "tilt": (0.2, 1.0),
    "tilt_bb": (15.0, 60.0),
    "tilt_hands": ("range", (5, 30), (5, 60)),
    "fatigue_share": (0.05, 0.4),
    "fatigue": (0.05, 0.4),
    "fish_share": (0.1, 0.6),
    "fish": (0.1, 0.6),
    "short_share": (0.05, 0.3),
    "friend_share": (0.02, 0.1),
    "friend_meet": (0.2, 0.7),
    "hunter_share": (0.05, 0.3),
    "hunter_taste": ("range", (1.5, 4.0), (0.5, 4.0)),
}


def _draw(spec: tuple, rng: random.Random, integer: bool):
    if spec[0] == "pick":
        return rng.choice(spec[1])
    if spec[0] == "pair":
        return (round(rng.uniform(*spec[1]), 3), round(rng.uniform(*spec[2]), 3))
    if spec[0] == "logrange":
        lo = math.exp(rng.uniform(math.log(spec[1][0]), math.log(spec[1][1])))
        return (round(lo, 3), round(lo * math.exp(rng.uniform(math.log(spec[2][0]), math.log(spec[2][1]))), 3))
    if spec[0] == "range":
        if integer:
            lo = rng.randint(*spec[1])
            return (lo, lo + rng.randint(*spec[2]))
        lo = rng.uniform(*spec[1])
        return (round(lo, 3), round(lo + rng.uniform(*spec[2]), 3))
    x = rng.uniform(*spec)
    return int(x) if integer else round(x, 3)


def draw_params(world_seed: int | None) -> WorldParams:
    """The parameters of world ``world_seed``: each drawn uniformly from :data:`RANGES` (None: the defaults).

    Drawn in the order of :data:`RANGES` from ``Random(derive_seed(world_seed, "world-params"))``: a
    world seed always gives the same mechanisms, whatever the population seed.
    """
    if world_seed is None:
        return WorldParams()
    rng = random.Random(derive_seed(world_seed, "world-params"))
    defaults = {f.name: f.default for f in fields(WorldParams)}
    drawn = {}
    for name, spec in RANGES.items():
        d = defaults[name]
        integer = isinstance(d, int) or (isinstance(d, tuple) and d and isinstance(d[0], int))
        drawn[name] = _draw(spec, rng, integer)
    return WorldParams(**drawn)


@dataclass(frozen=True)
class Mood:
    """How one honest person's play drifts: tilt, fatigue per 100 hands, loosening against weak players."""

    tilt: float = 0.0
    tilt_bb: float = 40.0
    tilt_hands: tuple = (10, 40)
    fatigue: float = 0.0
    fish: float = 0.0


@dataclass
class Traits:
    """What a drawn world decides per group and per person (empty for the first world)."""

    sitout_timeout: set            # gids of sit-out groups that let the clock run out
    handoff_same_device: set       # gids of hand-off groups whose helper plays on the owner's device
    switchers: set                 # pids of habitual device switchers
    moods: dict                    # pid -> Mood
    weak: frozenset                # accounts a regular loosens against
    friends: list                  # (pid, pid) honest friend pairs among cash players


def no_traits() -> Traits:
    return Traits(set(), set(), set(), {}, frozenset(), [])


def draw_traits(pop, groups, params: WorldParams, seed: int) -> Traits:
    """Per-group and per-person traits of a drawn world, from ``Random(derive_seed(seed, "traits"))``.

    Also moves hand-off helpers near their owners (style up to small noise, timing within 20 %) at
    ``handoff_near``, and gives habitual switchers with a single device a laptop.
    """
    if params == WorldParams():
        return no_traits()
    rng = random.Random(derive_seed(seed, "traits"))
    t = no_traits()
    for g in groups:
        if g.kind == "coordinated_sitout" and rng.random() < params.sitout_timeout:
            t.sitout_timeout.add(g.gid)
        if g.kind == "seat_handoff":
            if rng.random() < params.handoff_same_device:
                t.handoff_same_device.add(g.gid)
            if rng.random() < params.handoff_near and len(g.pids) > 1:
                owner, helper = pop.persons[g.pids[0]], pop.persons[g.pids[1]]
                helper.style = jitter_style(owner.style, rng, 0.03)
                helper.timing = replace(owner.timing, median_ms=owner.timing.median_ms * rng.uniform(0.8, 1.25))
    planted = {pid for g in groups for pid in g.pids}
    for p in pop.persons:
        if p.pid in planted or not p.accounts:
            continue
        if p.favourite == "mtt" and rng.random() < params.switcher_share:
            t.switchers.add(p.pid)
            if len(p.devices) < 2:
                p.devices.append(Device(fingerprint(rng), "laptop"))
        rec = p.style.archetype in RECREATIONAL
        regular = p.style.skill >= 0.65 and p.activity >= 1.0
        mood = Mood(
            tilt=params.tilt if rec and rng.random() < params.tilt_share else 0.0,
            tilt_bb=params.tilt_bb, tilt_hands=params.tilt_hands,
            fatigue=params.fatigue * rng.choice((-1, 1)) if rec and rng.random() < params.fatigue_share else 0.0,
            fish=params.fish if regular and rng.random() < params.fish_share else 0.0,
        )
        if mood != Mood(tilt_bb=params.tilt_bb, tilt_hands=params.tilt_hands):
            t.moods[p.pid] = mood
    t.weak = frozenset(a for p in pop.persons if p.style.skill < 0.3 for a in p.accounts)
    cash = [p.pid for p in pop.persons if p.favourite == "cash" and p.pid not in planted and p.household is None]
    rng.shuffle(cash)
    n_pairs = int(len(cash) * params.friend_share / 2)
    t.friends = [(cash[2 * i], cash[2 * i + 1]) for i in range(n_pairs)]
    return t


class AdaptivePolicy(HonestPolicy):
    """An honest player whose looseness drifts: tilt after a big loss, fatigue, weak players at the table.

    At the first decision of each hand the player's stack is compared with the previous hand's: a loss of
    at least ``mood.tilt_bb`` big blinds starts a tilt of ``mood.tilt_hands`` hands. The style used is the
    person's with VPIP and PFR times ``1 + loosen`` (aggression up by a third of it), where ``loosen`` sums
    the tilt, the fatigue times hands played / 100, and the weak-player term while one is dealt in.
    """

    __slots__ = ("base", "mood", "weak", "_hand", "_hands", "_last", "_tilt_left", "_variants")

    def __init__(self, *args, mood: Mood, weak: frozenset, **kw):
        super().__init__(*args, **kw)
        self.base = self.style
        self.mood = mood
        self.weak = weak
        self._hand = None
        self._hands = 0
        self._last = None
        self._tilt_left = 0
        self._variants: dict = {}

    def _style(self, loosen: float):
        key = round(max(-0.6, min(1.5, loosen)) * 20) / 20
        if key not in self._variants:
            b = self.base
            vpip = min(0.85, max(0.06, b.vpip * (1 + key)))
            self._variants[key] = replace(b, vpip=vpip, pfr=min(vpip * 0.95, max(0.01, b.pfr * (1 + key / 2))),
                                          aggression=min(0.95, max(0.05, b.aggression + key / 3)))
        return self._variants[key]

    def decide(self, view):
        m = self.mood
        if view.hand_id != self._hand:
            self._hand = view.hand_id
            self._hands += 1
            stack = view.stack + view.street_bet
            if self._last is not None and m.tilt and self._last - stack >= m.tilt_bb * max(1, view.big_blind):
                self._tilt_left = self.rng.randint(*m.tilt_hands)
            elif self._tilt_left:
                self._tilt_left -= 1
            self._last = stack
        loosen = m.fatigue * self._hands / 100 + (m.tilt if self._tilt_left else 0.0)
        if m.fish and any(p in self.weak for p in view.in_hand if p != self.name):
            loosen += m.fish
        self.style = self._style(loosen)
        return super().decide(view)


__all__ = ["WorldParams", "RANGES", "draw_params", "Traits", "no_traits", "draw_traits", "Mood", "AdaptivePolicy"]
