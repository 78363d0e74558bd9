"""World B's colluders: six kinds, each group planted with a strength and drawn mechanisms.

``strength`` runs from 1.0 (blatant) to 0.05 (subtle); it scales how often
and how hard a group departs from honest play, and the mechanism is drawn
per group (ranges in README.md):

- soft_play: 2-3 accounts who sit together at cash tables and spare each
  other (no bets or raises into a partner, folding to his bets) on some
  streets only, with probability ``p_soft``.
- chip_dumping: a dumper and a receiver at cash tables; small dumps (bet,
  fold to the receiver's raise) or big ones (shoving preflop into him), often
  or rarely.
- coordinated_sitout: 2-4 entrants of the same tournaments who sit out
  within seconds to minutes of each other, by ``sit_out`` events or by
  letting the clock run out, once or many times, in one to three events.
- bounty_collusion: knockout gangs of 2-4 seated together who spare each
  other and feed a partner their bounty (a short member shoves, a partner
  calls), calling often or rarely.
- multi_accounting: one person behind 2-3 accounts, entering the same
  tournaments and tables; device, network and payment shared or separate.
- seat_handoff: a tournament entrant whose seat someone else takes over
  after a gap of seconds to minutes, on a new device or the same one, with a
  style near or far from the owner's, once or in several events.
"""

from __future__ import annotations

from .cash import Session
from .policy import Agent
from .population import _hex, new_account, new_ip

KINDS = ("soft_play", "chip_dumping", "coordinated_sitout", "bounty_collusion", "multi_accounting",
         "seat_handoff")
SESSION_SCALE = [1.0]  # arranged cash sessions shrink with small worlds (set by plan_groups)
STRENGTHS = (1.0, 0.5, 0.25, 0.1, 0.05, 0.75, 0.35, 0.15, 0.07, 0.6)


class Group:
    """One planted group: its label and the hooks that make it play."""

    def __init__(self, gid: str, kind: str, strength: float, accts: list):
        self.gid, self.kind, self.strength, self.accts = gid, kind, strength, accts
        self.n_tour, self.ko, self.cash = 0, False, []
        self.setup = None
        self.tournaments: list = []
        self.retries = 0

    def came_to_play(self, w, tid: int) -> bool:
        """Whether the plan for tournament ``tid`` happened (a hand-off whose owner busted first did not)."""
        if self.kind == "seat_handoff":
            return (tid, self.accts[0].name) in w.handoff_first
        if self.kind == "coordinated_sitout":
            names = {a.name for a in self.accts}
            return len({n for t, n, _ in w.sitlog if t == tid and n in names}) >= 2
        return True

    def label(self, w) -> dict | None:
        """The labels.jsonl line, or None where the plan never came to play."""
        d = {"group": self.gid, "kind": self.kind, "accounts": [a.name for a in self.accts],
             "tournaments": [str(t) for t in self.tournaments], "strength": self.strength}
        if self.kind == "seat_handoff":
            hit = [(t, w.handoff_first[(t, self.accts[0].name)]) for t in self.tournaments
                   if (t, self.accts[0].name) in w.handoff_first]
            if not hit:
                return None
            d["tournaments"] = [str(t) for t, _ in hit]
            d["hands"] = [h for _, h in hit]
        if self.kind == "coordinated_sitout":
            sat = {}
            names = {a.name for a in self.accts}
            for tid, name, ts in w.sitlog:
                if tid in self.tournaments and name in names:
                    sat.setdefault(tid, set()).add(name)
            d["tournaments"] = [str(t) for t in self.tournaments if len(sat.get(t, ())) >= 2]
            if not d["tournaments"]:
                return None
        return d


def _pick(rng, pool: list, k: int, used: set) -> list:
    out = []
    while len(out) < k:
        a = rng.choice(pool)
        if a.name not in used and a.friend is None:
            used.add(a.name)
            out.append(a)
    return out


def _pair_sessions(rng, g: Group, times: int, t0: float, days: int) -> None:
    """Cash sessions in which the group's accounts arrive at one pool together."""
    lead = g.accts[0]
    for _ in range(max(1, round(times * SESSION_SCALE[0]))):
        start = t0 + rng.randrange(days) * 86400 + (lead.peak + rng.normal(0, 2)) % 24 * 3600
        length = rng.uniform(2400, 9000)
        stake, size = rng.choice(lead.stakes), rng.choice([6, 6, 9, 2] if len(g.accts) == 2 else [6, 9])
        for j, a in enumerate(g.accts):
            comp = lead if j else None
            g.cash.append(Session(a, start + j * rng.uniform(5, 300), start + length + rng.uniform(-600, 600),
                                  stake, size, comp))


def plan_groups(rng, accts: list, taken: set, scale: float, t0: float, days: int) -> list:
    """Draw every planted group of every kind; returns the groups (new accounts appended to ``accts``)."""
    n_per = max(3, round(5 * scale ** 0.5))
    SESSION_SCALE[0] = min(1.0, scale ** 0.5)
    used: set = set()
    groups = []
    for kind in KINDS:
        for j in range(n_per):
            s = STRENGTHS[j % len(STRENGTHS)]
            g = Group(f"b-{kind}-{j + 1}", kind, s, [])
            globals()["_" + kind](rng, g, accts, taken, used, t0, days)
            groups.append(g)
    return groups


def _soft_play(rng, g, accts, taken, used, t0, days):
    g.accts = _pick(rng, accts, rng.choice([2, 2, 2, 3]), used)
    s = g.strength
    streets = rng.choice([(0, 1, 2, 3), (1, 2, 3), (2, 3), (3,), (1,), (0, 1)])
    for a in g.accts:
        a.agent.rules.update({b.name: "soft" for b in g.accts if b is not a})
        a.agent.p_soft = min(1.0, 0.25 + 0.75 * s + rng.uniform(-0.1, 0.1))
        a.agent.soft_streets = streets
    _pair_sessions(rng, g, 2 + round(10 * s * rng.uniform(0.6, 1.4)), t0, days)


def _chip_dumping(rng, g, accts, taken, used, t0, days):
    g.accts = _pick(rng, accts, 2, used)
    d, r = g.accts
    s = g.strength
    d.agent.rules[r.name] = "dump"
    r.agent.rules[d.name] = "recv"
    d.agent.dump_big = rng.random() < 0.4
    d.agent.p_dump = min(1.0, (0.1 if d.agent.dump_big else 0.3) + 0.7 * s)
    r.agent.p_dump = min(1.0, 0.4 + 0.6 * s)
    _pair_sessions(rng, g, 1 + round(6 * s * rng.uniform(0.5, 1.5)), t0, days)


def _coordinated_sitout(rng, g, accts, taken, used, t0, days):
    g.accts = _pick(rng, accts, rng.choice([2, 2, 3, 4]), used)
    s = g.strength
    g.n_tour = rng.choice([1, 1, 2, 3]) if s < 0.3 else rng.choice([2, 3])
    mode = rng.choice(["event", "timeout", "mix"])
    times = 1 if s < 0.2 else rng.randint(1, 1 + round(4 * s))
    jitter = 3 + 150 * (1 - s) * rng.random()

    def setup(t):
        for _ in range(times):
            at = t.start + rng.uniform(300, 2700)
            dur = rng.uniform(150, 300 + 700 * s)
            for a in g.accts:
                m = mode if mode != "mix" else rng.choice(["event", "timeout"])
                a0 = at + rng.uniform(0, jitter)
                t.plan.setdefault(a.name, []).append((a0, a0 + dur, m))
    g.setup = setup


def _bounty_collusion(rng, g, accts, taken, used, t0, days):
    g.accts = _pick(rng, accts, rng.choice([2, 3, 3, 4]), used)
    s = g.strength
    g.ko = True
    g.n_tour = 1 + round(3 * s * rng.random()) + rng.randint(0, 1)
    call = min(1.0, rng.choice([0.25, 0.6, 0.95]) * (0.4 + 0.6 * s) + 0.1)
    for a in g.accts:
        a.agent.rules.update({b.name: "gang" for b in g.accts if b is not a})
        a.agent.p_soft = 0.2 + 0.7 * s
        a.agent.p_gang_call = call
        a.agent.feed_bb = rng.uniform(4, 14)

    def setup(t):
        t.together.append(g.accts)
    g.setup = setup


def _multi_accounting(rng, g, accts, taken, used, t0, days):
    s = g.strength
    owner = _pick(rng, accts, 1, used)[0]
    extra = []
    for _ in range(rng.choice([1, 1, 2])):
        a = new_account(rng, taken, t0, owner.person, agent=owner.agent)
        a.created = min(t0 - 86400, owner.created + rng.uniform(0.1, 6 if s > 0.5 else 60) * 86400)
        a.country = owner.country
        a.stakes, a.sizes, a.peak, a.rate = owner.stakes, owner.sizes, owner.peak, owner.rate * 0.7
        if rng.random() < s:
            a.devices = list(owner.devices)
        if rng.random() < s:
            a.ip = owner.ip
        else:
            a.ip = new_ip(rng)
        if rng.random() < 0.8 * s:
            a.payment = owner.payment
        a.address = owner.address if rng.random() < s else _hex(rng, 16)
        a.idx = len(accts)
        accts.append(a)
        used.add(a.name)
        extra.append(a)
    g.accts = [owner] + extra
    g.n_tour = 1 + round(3 * s)
    _pair_sessions(rng, g, 1 + round(5 * s * rng.random()), t0, days)
    g.setup = lambda t: None


def _seat_handoff(rng, g, accts, taken, used, t0, days):
    g.accts = _pick(rng, accts, 1, used)
    a = g.accts[0]
    s = g.strength
    g.n_tour = rng.choice([1, 1, 2]) if s < 0.3 else rng.choice([1, 2, 3, 4])
    near = rng.random() < 0.5
    helper = Agent(rng, a.agent.style if near else rng.choice(["nit", "tag", "lag", "maniac"]))
    same_dev = rng.random() < 0.3 * (1 - s) + 0.1
    dev = a.devices[0] if same_dev else f"desktop-{_hex(rng, 12)}"
    ip = a.ip if rng.random() < 0.3 else new_ip(rng)
    gap = rng.choice([rng.uniform(5, 40), rng.uniform(40, 180), rng.uniform(180, 600)])

    def setup(t):
        th = t.start + rng.uniform(900, 3000)
        t.agent_at[a.name] = (th + gap, helper)
        if gap > 30:
            t.plan.setdefault(a.name, []).append((th, th + gap, "timeout"))
        g.switch = (th + gap, dev, ip, gap)
        g.pending_switch.append((th + gap, dev, ip, gap))
    g.pending_switch = []
    g.setup = setup
