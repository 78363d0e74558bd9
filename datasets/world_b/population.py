"""World B's people and accounts: names, styles, devices, networks, households.

Every account belongs to a person; a person owns one account, or several
when it is a multi-accounter. A person has a style (:class:`policy.Agent`),
one to three devices (a phone and a desktop, say), a home network, a country,
hours they like to play, a taste for cash or tournaments (bounty hunters
favour knockout events) and stakes. Households: two people sharing an
address and a network but nothing else (half of them also play together).
Friends: pairs who like the same tables and often start at the same time
(honest, by chance or habit).
"""

from __future__ import annotations

import random

from .policy import Agent

STYLES = (("nit", 0.14), ("tag", 0.2), ("lag", 0.1), ("rec", 0.34), ("station", 0.14), ("maniac", 0.08))
COUNTRIES = (("DE", 0.18), ("GB", 0.16), ("CA", 0.12), ("BR", 0.1), ("SE", 0.06), ("FR", 0.08), ("RU", 0.07),
             ("MX", 0.05), ("FI", 0.04), ("AT", 0.04), ("IE", 0.05), ("NZ", 0.05))
SYL = ["ka", "ro", "mi", "zu", "tan", "vel", "do", "ri", "pok", "ace", "lu", "mar", "sen", "tor", "bi", "gra",
       "fish", "nut", "riv", "jam", "flo", "ox", "qui", "yel", "wen", "sha", "dor", "lin", "pe", "max"]


class Rng(random.Random):
    """Python's Mersenne Twister with the two numpy-style helpers the world uses."""

    def normal(self, mu: float, sigma: float) -> float:
        return self.gauss(mu, sigma)

    def pick(self, pairs):
        """One key of ``((key, weight), ..)`` drawn by weight."""
        return self.choices([k for k, _ in pairs], [w for _, w in pairs])[0]


class Acct:
    """One account and the person behind it."""

    __slots__ = ("name", "person", "agent", "devices", "ip", "country", "created", "payment", "address",
                 "peak", "rate", "tour_rate", "ko_rate", "stakes", "sizes", "switcher", "friend", "idx")

    def __repr__(self):
        return f"Acct({self.name!r})"


def _name(rng: Rng, taken: set) -> str:
    while True:
        parts = [rng.choice(SYL) for _ in range(rng.randint(2, 3))]
        r = rng.random()
        if r < 0.35:
            s = "".join(parts) + str(rng.randint(1, 999))
        elif r < 0.55:
            s = "_".join(parts)
        elif r < 0.7:
            s = "".join(parts).capitalize() + rng.choice(["", "77", "_pk", "-X", "88"])
        elif r < 0.8:
            s = " ".join(p.capitalize() for p in parts)
        elif r < 0.86:
            s = ".".join(parts) + rng.choice(["", ".", "!"])
        elif r < 0.9:
            s = rng.choice(["Zoë", "Jürgen", "Łukasz", "Beyoncé", "Ørjan", "Mañana"]) + str(rng.randint(1, 99))
        elif r < 0.94:
            s = "".join(parts) + rng.choice(["'s", "$", "#1", "&co", "(nl)"])
        else:
            s = "".join(parts).upper()
        if s not in taken:
            taken.add(s)
            return s


def _hex(rng: Rng, k: int) -> str:
    return f"{rng.getrandbits(4 * k):0{k}x}"


def new_ip(rng: Rng) -> str:
    """A public-looking IPv4 address."""
    return f"{rng.choice([5, 31, 46, 77, 82, 89, 93, 109, 151, 176, 185, 188, 212, 217])}." \
           f"{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def new_account(rng: Rng, taken: set, t0: float, person: int, agent: Agent | None = None) -> Acct:
    """A fresh honest-looking account for ``person`` (style drawn unless ``agent`` given)."""
    a = Acct()
    a.name = _name(rng, taken)
    a.person = person
    a.agent = agent or Agent(rng, rng.pick(STYLES))
    kinds = ["phone", "desktop", "tablet"]
    a.devices = [f"{kinds[k]}-{_hex(rng, 12)}" for k in range(rng.choice([1, 1, 2, 2, 3]))]
    a.ip = new_ip(rng)
    a.country = rng.pick(COUNTRIES)
    a.created = t0 - rng.uniform(3, 1800) * 86400
    a.payment = "" if rng.random() < 0.1 else _hex(rng, 24)
    a.address = _hex(rng, 16)
    a.peak = rng.normal(20.5, 2.5) % 24
    reg = a.agent.style in ("nit", "tag", "lag")
    a.rate = rng.uniform(1.0, 3.0) if reg else rng.uniform(0.3, 1.5)
    a.tour_rate = rng.uniform(0.05, 1.0)
    a.ko_rate = rng.uniform(0.0, 1.0) ** 2
    if rng.random() < 0.1:
        a.ko_rate = rng.uniform(3, 6)  # bounty hunter
    a.stakes = sorted(rng.sample(range(6), rng.randint(1, 2)))
    if reg and rng.random() < 0.5:
        a.stakes = [min(5, s + 1) for s in a.stakes]
    a.sizes = rng.choice([(9,), (6,), (6, 9), (6, 2), (9, 6, 2)])
    a.switcher = rng.random() < 0.06
    a.friend = None
    return a


def make_population(rng: Rng, n: int, t0: float) -> list:
    """``n`` honest accounts, with households (shared address and network) and friend pairs."""
    taken: set = set()
    accts = [new_account(rng, taken, t0, p) for p in range(n)]
    order = list(range(n))
    rng.shuffle(order)
    k = int(n * 0.04) // 2 * 2
    for x, y in zip(order[:k:2], order[1:k:2]):
        accts[y].ip, accts[y].address, accts[y].country = accts[x].ip, accts[x].address, accts[x].country
        if rng.random() < 0.5:  # couples who play the same tables at the same hours
            accts[x].friend, accts[y].friend = accts[y], accts[x]
            accts[y].stakes, accts[y].sizes, accts[y].peak = accts[x].stakes, accts[x].sizes, accts[x].peak
    f = int(n * 0.08) // 2 * 2
    for x, y in zip(order[k:k + f:2], order[k + 1:k + f:2]):
        accts[x].friend, accts[y].friend = accts[y], accts[x]
        accts[y].stakes, accts[y].sizes = accts[x].stakes, accts[x].sizes
    for i, a in enumerate(accts):
        a.idx = i
    return accts
