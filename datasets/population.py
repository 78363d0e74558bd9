"""The people behind the accounts: styles, decision timing, devices, networks.

Method. A *person* is a human being with a persistent playing style
(:class:`Style`: VPIP, PFR, 3-bet, postflop aggression, bluff frequency,
stickiness, bet sizing, skill), a decision-time distribution of their own
(:class:`Timing`: lognormal per person, slower for big decisions), a home
network (an IP inside one of the country's ISP prefixes), some devices
(desktop, laptop, phone fingerprints), an activity level, a favourite game
and, for some tournament players, a taste for knockout events
(:func:`draw_format_taste`). An *account* is a row of ``accounts.csv``; normally one person holds one
account. Styles are drawn from archetypes (nit, TAG, LAG, calling station,
maniac, weak-tight, recreational) and jittered so no two players are alike.

Confounders are built in here, where they belong: housemates share a home IP
(different devices, independent styles) and sometimes a family payment card;
phone users behind carrier-grade NAT share mobile IPs with strangers;
regulars have high activity at the same stakes. Multi-accounters (one person,
several accounts) are created by :func:`add_multi_accounts`, sharing the
person's style and timing and, only *some of the time*, device, IP or payment.

Everything is drawn from one seeded ``random.Random`` so a population is a
pure function of its seed.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

WORLD_START = datetime(2026, 3, 2, 0, 0, tzinfo=timezone.utc)

# country, weight, UTC offset (hours) used for preferred playing hours
COUNTRIES: list[tuple[str, float, int]] = [
    ("DE", 12, 1), ("GB", 12, 0), ("CA", 9, -5), ("SE", 6, 1), ("FI", 4, 2), ("NO", 3, 1),
    ("NL", 6, 1), ("IT", 6, 1), ("PT", 3, 0), ("DK", 3, 1), ("PL", 5, 1), ("CZ", 3, 1),
    ("BR", 8, -3), ("MX", 4, -6), ("JP", 3, 9), ("AR", 3, -3), ("AT", 3, 1), ("IE", 3, 0),
]

_SYL = ["ka", "ro", "mi", "tan", "vel", "sor", "lin", "dra", "ko", "pe", "ra", "zu", "ne", "bo",
        "li", "ta", "gor", "fin", "mar", "jo", "el", "an", "to", "sa", "vi", "den", "ul", "ax"]
_WORDS = ["river", "shark", "nuts", "flop", "ace", "king", "donk", "fish", "grind", "tilt", "bluff",
          "chip", "stack", "luck", "jack", "queen", "felt", "rail", "pot", "card", "wolf", "fox",
          "bear", "owl", "moon", "star", "rock", "lion", "tiger", "eagle", "viking", "ninja"]


@dataclass(frozen=True)
class Style:
    """Persistent playing tendencies of one person (all shares in [0, 1])."""

    archetype: str
    vpip: float        # share of hands put money in voluntarily preflop
    pfr: float         # share of hands raised preflop
    three_bet: float   # propensity to re-raise preflop when the hand allows
    aggression: float  # postflop: propensity to bet/raise rather than check/call
    bluff: float       # share of weak postflop spots bet as a bluff
    sticky: float      # propensity to call down with marginal hands
    bet_size: float    # mean bet size as a fraction of the pot
    size_noise: float  # spread of bet sizes (std of the fraction)
    skill: float       # how well pot odds and position are used
    sitout_rate: float  # chance per cash seat-interval to take a short sit-out


@dataclass(frozen=True)
class Timing:
    """Decision times of one person: lognormal with median ``median_ms``.

    ``big`` multiplies the median for big decisions (facing or making a large
    bet relative to the stack, all-ins); ``fast`` multiplies it for easy
    preflop folds; ``mobile`` is the slow-down on a phone.
    """

    median_ms: float
    sigma: float
    big: float
    fast: float
    mobile: float


@dataclass
class Device:
    fingerprint: str
    kind: str  # desktop | laptop | phone


@dataclass
class Person:
    pid: int
    country: str
    utc_offset: int
    style: Style
    timing: Timing
    home_ip: str
    devices: list[Device]
    activity: float          # expected sessions per day
    favourite: str            # "cash" | "sng" | "mtt"
    stake_level: int          # index into the cash stakes ladder
    multi_table: int          # usual number of tables in a cash session
    household: int | None = None
    accounts: list[str] = field(default_factory=list)
    payment: str = ""
    knockout: float = 1.0     # weight of a knockout / PKO multi-table event against a freezeout (1: no taste)


@dataclass
class Account:
    name: str
    pid: int                  # the person who normally plays it
    created_at: datetime
    country: str
    payment: str


@dataclass
class Population:
    persons: list[Person]
    accounts: dict[str, Account]
    mobile_ips: list[str]     # carrier-grade NAT addresses shared by many phones

    def person_of(self, account: str) -> Person:
        return self.persons[self.accounts[account].pid]


ARCHETYPES: dict[str, tuple[float, dict]] = {
    # name: (weight, means)
    "nit": (10, dict(vpip=0.13, pfr=0.10, three_bet=0.03, aggression=0.40, bluff=0.04, sticky=0.25, bet_size=0.60, skill=0.55)),
    "tag": (22, dict(vpip=0.22, pfr=0.18, three_bet=0.07, aggression=0.55, bluff=0.12, sticky=0.35, bet_size=0.65, skill=0.75)),
    "lag": (10, dict(vpip=0.32, pfr=0.26, three_bet=0.11, aggression=0.68, bluff=0.22, sticky=0.40, bet_size=0.75, skill=0.70)),
    "station": (14, dict(vpip=0.45, pfr=0.07, three_bet=0.02, aggression=0.20, bluff=0.05, sticky=0.80, bet_size=0.50, skill=0.20)),
    "maniac": (4, dict(vpip=0.58, pfr=0.42, three_bet=0.18, aggression=0.80, bluff=0.35, sticky=0.55, bet_size=0.95, skill=0.30)),
    "weak_tight": (12, dict(vpip=0.18, pfr=0.06, three_bet=0.02, aggression=0.25, bluff=0.03, sticky=0.30, bet_size=0.50, skill=0.35)),
    "rec": (28, dict(vpip=0.30, pfr=0.12, three_bet=0.04, aggression=0.38, bluff=0.10, sticky=0.55, bet_size=0.60, skill=0.40)),
}

CASH_STAKES: list[tuple[str, str]] = [  # (small blind, big blind) as strings of dollars
    ("0.01", "0.02"), ("0.02", "0.05"), ("0.05", "0.10"), ("0.10", "0.25"), ("0.25", "0.50"), ("0.50", "1"), ("1", "2"),
]


def _clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def draw_style(rng: random.Random, archetype: str | None = None) -> Style:
    """Draw a style: an archetype's means jittered per person (pfr never above vpip)."""
    if archetype is None:
        names = list(ARCHETYPES)
        archetype = rng.choices(names, weights=[ARCHETYPES[n][0] for n in names])[0]
    m = ARCHETYPES[archetype][1]
    vpip = _clip(rng.gauss(m["vpip"], 0.035), 0.06, 0.85)
    pfr = _clip(rng.gauss(m["pfr"], 0.03), 0.01, vpip * 0.95)
    return Style(
        archetype=archetype,
        vpip=vpip,
        pfr=pfr,
        three_bet=_clip(rng.gauss(m["three_bet"], 0.015), 0.0, 0.35),
        aggression=_clip(rng.gauss(m["aggression"], 0.07), 0.05, 0.95),
        bluff=_clip(rng.gauss(m["bluff"], 0.03), 0.0, 0.6),
        sticky=_clip(rng.gauss(m["sticky"], 0.08), 0.05, 0.95),
        bet_size=_clip(rng.gauss(m["bet_size"], 0.08), 0.3, 1.3),
        size_noise=_clip(rng.gauss(0.12, 0.05), 0.02, 0.3),
        skill=_clip(rng.gauss(m["skill"], 0.08), 0.05, 0.95),
        sitout_rate=_clip(rng.expovariate(1 / 0.12), 0.0, 0.6),
    )


def draw_timing(rng: random.Random) -> Timing:
    """A person's own lognormal decision-time parameters."""
    return Timing(
        median_ms=_clip(rng.lognormvariate(7.55, 0.35), 700.0, 7000.0),  # ~1.9 s typical
        sigma=_clip(rng.gauss(0.55, 0.12), 0.25, 0.95),
        big=_clip(rng.gauss(2.2, 0.5), 1.2, 4.0),
        fast=_clip(rng.gauss(0.55, 0.12), 0.25, 0.9),
        mobile=_clip(rng.gauss(1.25, 0.1), 1.0, 1.6),
    )


def fingerprint(rng: random.Random) -> str:
    return "%016x" % rng.getrandbits(64)


def payment_hash(rng: random.Random) -> str:
    return hashlib.sha256(rng.getrandbits(128).to_bytes(16, "big")).hexdigest()[:32]


class NameMaker:
    """Unique, plausible screen names (letters, digits and underscores)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def make(self) -> str:
        rng = self.rng
        while True:
            form = rng.random()
            if form < 0.35:
                name = "".join(rng.choice(_SYL) for _ in range(rng.randint(2, 3)))
                name = name.capitalize() if rng.random() < 0.5 else name
                if rng.random() < 0.6:
                    name += str(rng.randint(1, 999))
            elif form < 0.7:
                name = rng.choice(_WORDS) + rng.choice(["_", "", ""]) + rng.choice(_WORDS)
                if rng.random() < 0.5:
                    name += str(rng.randint(1, 99))
                if rng.random() < 0.3:
                    name = name.title().replace("_", "")
            else:
                name = "".join(rng.choice(_SYL) for _ in range(2)) + rng.choice(["_", ".", ""]) + rng.choice(_WORDS)
                if rng.random() < 0.4:
                    name += str(rng.randint(70, 2005))
            if 3 <= len(name) <= 18 and name not in self.used:
                self.used.add(name)
                return name


def _ip_prefixes(rng: random.Random) -> dict[str, list[tuple[int, int]]]:
    """A few ISP /16 prefixes per country (fixed for the world)."""
    prefixes: dict[str, list[tuple[int, int]]] = {}
    for country, _, _ in COUNTRIES:
        prefixes[country] = [(rng.randint(31, 223), rng.randint(0, 255)) for _ in range(rng.randint(2, 4))]
    return prefixes


def make_population(n_accounts: int, rng: random.Random) -> Population:
    """Draw ``n_accounts`` honest persons, one account each, with households.

    About 6 % of persons live in two- or three-person households that share
    the home IP (each keeps their own devices and style); half of those
    households also share a family payment card. Persons whose favourite is
    cash get a stake level and a multi-tabling habit; activity is
    heavy-tailed so a core of regulars meets at the same tables all day.
    """
    names = NameMaker(rng)
    prefixes = _ip_prefixes(rng)
    mobile_ips = [f"{rng.randint(100, 110)}.{rng.randint(64, 127)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(max(4, n_accounts // 40))]
    persons: list[Person] = []
    accounts: dict[str, Account] = {}
    cweights = [c[1] for c in COUNTRIES]
    for pid in range(n_accounts):
        country, _, offset = rng.choices(COUNTRIES, weights=cweights)[0]
        a, b = rng.choice(prefixes[country])
        home_ip = f"{a}.{b}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        devices = [Device(fingerprint(rng), rng.choice(["desktop", "laptop"]))]
        if rng.random() < 0.55:
            devices.append(Device(fingerprint(rng), "phone"))
        if rng.random() < 0.15:
            devices.append(Device(fingerprint(rng), "laptop"))
        fav = rng.choices(["cash", "sng", "mtt"], weights=[0.55, 0.2, 0.25])[0]
        regular = rng.random() < 0.15
        p = Person(
            pid=pid, country=country, utc_offset=offset, style=draw_style(rng), timing=draw_timing(rng),
            home_ip=home_ip, devices=devices,
            activity=(rng.uniform(2.0, 4.0) if regular else rng.expovariate(1 / 0.6)),
            favourite=fav, stake_level=min(len(CASH_STAKES) - 1, int(rng.expovariate(1 / 1.8))),
            multi_table=(rng.choice([2, 3, 4]) if regular else rng.choices([1, 2, 3], weights=[6, 3, 1])[0]),
            payment=payment_hash(rng) if rng.random() < 0.9 else "",
        )
        persons.append(p)
        name = names.make()
        created = WORLD_START - timedelta(days=rng.uniform(3, 2500), seconds=rng.uniform(0, 86400))
        accounts[name] = Account(name=name, pid=pid, created_at=created, country=country, payment=p.payment)
        p.accounts.append(name)
    # households: share the home IP (and sometimes the family card)
    n_house = max(1, int(n_accounts * 0.03))
    pool = list(range(n_accounts))
    rng.shuffle(pool)
    hid = 0
    while n_house > 0 and len(pool) >= 3:
        size = 2 if rng.random() < 0.8 else 3
        members = [pool.pop() for _ in range(size)]
        head = persons[members[0]]
        share_card = rng.random() < 0.5
        for m in members:
            pm = persons[m]
            pm.household = hid
            pm.home_ip = head.home_ip
            pm.country, pm.utc_offset = head.country, head.utc_offset
            if share_card and head.payment:
                pm.payment = head.payment
            for acc in pm.accounts:
                accounts[acc].payment = pm.payment
                accounts[acc].country = pm.country
        hid += 1
        n_house -= size
    return Population(persons=persons, accounts=accounts, mobile_ips=mobile_ips)


# Bounty hunters: the share of persons whose favourite is multi-table tournaments who prefer
# knockout and progressive-knockout events, and how many times a freezeout's weight they give one.
# Online schedules run bounties beside freezeouts (this world: 60 % of its multi-table events), and
# a bounty specialist is a recognised type of regular, but a minority one: most tournament players
# enter by time slot and buy-in, not by format. One in six (about 17 %) of the multi-table players
# gives a world of the mixed preset's size (about 150 of them among 600 accounts) some 25 hunters,
# several of whom meet in most knockouts of a day, without making the knockout fields a closed
# club; 3 to 6 times the weight puts about 80-90 % of a hunter's multi-table entries into knockouts
# against 60 % for everyone else (before the limits of a field: a regular cannot enter more than
# every event). Without them the co-entry null of a detector never met honest players who share a
# taste for a format (docs/measurements.md, eighteenth and nineteenth sessions).
BOUNTY_HUNTER_SHARE = 1 / 6
BOUNTY_HUNTER_TASTE = (3.0, 6.0)


def draw_format_taste(pop: Population, rng: random.Random, share: float = BOUNTY_HUNTER_SHARE,
                      taste: tuple[float, float] = BOUNTY_HUNTER_TASTE) -> list[int]:
    """Give a minority of multi-table players a taste for knockouts; returns their pids.

    Each person whose favourite is ``mtt`` is a bounty hunter with
    probability ``share`` (default :data:`BOUNTY_HUNTER_SHARE`); a hunter's ``knockout`` weight
    (knockout and PKO events against freezeouts when entrants are drawn) is
    uniform in ``taste`` (default :data:`BOUNTY_HUNTER_TASTE`). Everyone else keeps 1. Drawn from
    its own RNG (the caller's), after the persons and groups, so the rest of
    a world drawn from the same seed is unchanged.
    """
    hunters = []
    for p in pop.persons:
        if p.favourite == "mtt" and rng.random() < share:
            p.knockout = rng.uniform(*taste)
            hunters.append(p.pid)
    return hunters


def add_multi_accounts(pop: Population, pid: int, n_extra: int, rng: random.Random, names: NameMaker | None = None) -> list[str]:
    """Give person ``pid`` ``n_extra`` more accounts; returns all their accounts.

    The extra accounts are registered a little later, sometimes from another
    country, and share the person's payment card only some of the time (else a
    fresh card or none): the identity links are real but incomplete.
    """
    names = names or NameMaker(rng)
    names.used.update(pop.accounts)
    p = pop.persons[pid]
    base = pop.accounts[p.accounts[0]]
    for _ in range(n_extra):
        name = names.make()
        shared_card = rng.random() < 0.4
        pay = p.payment if shared_card else (payment_hash(rng) if rng.random() < 0.8 else "")
        country = p.country if rng.random() < 0.7 else rng.choice(COUNTRIES)[0]
        created = base.created_at + timedelta(days=rng.uniform(1, 400))
        if created > WORLD_START - timedelta(days=1):
            created = WORLD_START - timedelta(days=rng.uniform(1, 30))
        pop.accounts[name] = Account(name=name, pid=pid, created_at=created, country=country, payment=pay)
        p.accounts.append(name)
    return list(p.accounts)


def new_person(pop: Population, rng: random.Random, like: Person | None = None) -> Person:
    """Append a person without an account of their own (e.g. who takes over a seat).

    They live elsewhere: own devices, own network, own style and timing.
    """
    pid = len(pop.persons)
    country, _, offset = rng.choice(COUNTRIES)
    p = Person(
        pid=pid, country=country, utc_offset=offset, style=draw_style(rng), timing=draw_timing(rng),
        home_ip=f"{rng.randint(31, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        devices=[Device(fingerprint(rng), "desktop")], activity=0.0, favourite="mtt", stake_level=0, multi_table=1,
    )
    pop.persons.append(p)
    return p


def jitter_style(style: Style, rng: random.Random, amount: float = 0.02) -> Style:
    """The same person on another account: the same style up to small noise."""
    return replace(
        style,
        vpip=_clip(style.vpip + rng.gauss(0, amount), 0.06, 0.85),
        pfr=_clip(style.pfr + rng.gauss(0, amount), 0.01, style.vpip),
        aggression=_clip(style.aggression + rng.gauss(0, amount), 0.05, 0.95),
    )


def derive_seed(*parts) -> int:
    """A 64-bit seed from any reprs (stable across processes, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(), "big")
