"""Planted collusion: the groups, their strengths and how colluders deviate.

Method. A :class:`Group` is a set of accounts of one kind with a
``strength`` in (0, 1]: the share of its *opportunities* in which it colludes
(blatant at 1.0, subtle at 0.05). An opportunity is a hand in which the
partners are dealt in together (soft play, chip dumping, bounty
collusion), a stage of a tournament they play together (coordinated
sit-outs: 15 % and 40 % of the field gone, then the bubble), a tournament
they enter together (multi-accounting) or a tournament the account plays
(seat hand-off). Groups enter enough events of their venue for the strength
to show (sit-and-go soft play and dumping 10-16, bounty gangs 7-10 knockout
events, sit-out groups 6-9, hand-offs 4-7, in a world of its preset's size;
times its hands per account against the preset's in a bigger one). For
in-hand kinds the coin is thrown once per hand and group; when it falls, the
colluder first computes the honest decision (:class:`~datasets.policies.HonestPolicy`)
and then applies the kind's deviation:

* ``soft_play``: never raise a partner's bet or 3-bet a partner's open (call
  instead, or fold a strong hand); half the time leave the partner's raised
  pot alone instead of calling; when only partners remain, check it down and
  fold more to a partner's bet.
* ``chip_dumping``: the *feeder* puts chips in against the *receiver* with
  any two cards (calls, small raises, a flop bet) and then folds to the
  receiver's bet on the turn or river whatever it holds; the receiver bets
  and raises into the feeder. Stars are groups with one feeder and several
  receivers or the reverse.
* ``bounty_collusion``: when a short stack with a bounty is all-in or nearly
  (at most 20 big blinds at the start of the hand), partners call it much wider, raise to isolate it, and once the target
  is all-in they check the side pot down between themselves so the best of
  their hands takes the pot and the bounty.
* ``multi_accounting`` accounts soft-play each other where natural (same
  deviation as soft play, at the group's strength).

Truth: a hand is written to the group's label only when a colluder's action
actually differed from its honest decision in that hand (or, for the
tournament kinds, when the planted behaviour happened: the sit-out hands, the
hands after a hand-off, the hands the accounts of one person shared).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from datasets.records import Action, DecisionView
from datasets.flipping import flip_action, flip_chance
from datasets.policies import HonestPolicy, capped

KINDS = ("soft_play", "chip_dumping", "bounty_collusion", "coordinated_sitout", "multi_accounting", "seat_handoff",
         "heads_up_flipping", "hand_chat")


@dataclass
class Group:
    """A planted group and everything the planner needs about it."""

    gid: str
    kind: str
    accounts: list[str]
    strength: float
    pids: list[int] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)  # chip dumping: feeder / receiver
    venue: str = "cash"  # where it mostly operates: cash | sng | mtt
    tournaments: list[str] = field(default_factory=list)
    starts: dict = field(default_factory=dict)  # tournament -> start ms (for the label's time span)


@dataclass(frozen=True)
class Link:
    """One colluder's tie to a group: who its partners are and its role."""

    gid: str
    kind: str
    partners: frozenset
    strength: float
    role: str = ""


class ColludingPolicy(HonestPolicy):
    """An honest policy plus the deviations of the groups the player belongs to."""

    __slots__ = ("links", "ctx", "params")

    def __init__(self, *args, links: list[Link], ctx, **kw):
        from datasets.worlds import WorldParams

        super().__init__(*args, **kw)
        self.links = links
        self.ctx = ctx
        self.params = getattr(getattr(ctx, "w", None), "params", None) or WorldParams()

    def act(self, view: DecisionView) -> Action:
        if view.table and view.player in view.table.get("disconnected", ()):
            return self.time_out(view)
        honest = capped(view, self.decide(view))
        a = honest
        in_hand = view.in_hand
        for link in self.links:
            present = [p for p in in_hand if p in link.partners]
            if link.kind == "bounty_collusion":
                target = self._bounty_target(view, link)
                if target is None or not present:
                    continue
                if not self.ctx.coin(link.gid, view.hand_id, link.strength):
                    continue
                a = self._bounty(view, a, target, link)
            elif link.kind == "heads_up_flipping":  # datasets.flipping
                p = flip_chance(view, link)
                if not p or not self.ctx.coin(link.gid, view.hand_id, p):
                    continue
                a = flip_action(view, a)
            else:
                if not present:
                    # a feeder may open into a receiver who is still to act preflop
                    if not (link.kind == "chip_dumping" and view.street == 0 and any(p in view.stacks for p in link.partners)):
                        continue
                if not self.ctx.coin(link.gid, view.hand_id, link.strength):
                    continue
                if link.kind in ("soft_play", "multi_accounting"):
                    if view.street not in self.params.soft_streets:
                        continue
                    a = self._soft(view, a, link)
                elif link.kind == "chip_dumping":
                    a = self._dump(view, a, link)
            a = capped(view, a)
            if a.kind != honest.kind or a.amount_to != honest.amount_to:
                self.ctx.hit(link.gid)
                break
        self.log.rows.append((len(view.history), view.player, self.think_ms(view, a)))
        return a

    # -- soft play
    def _soft(self, view: DecisionView, a: Action, link: Link) -> Action:
        others = [p for p in view.in_hand if p != view.player and p not in link.partners]
        facing_partner = view.facing_player in link.partners and view.n_bets >= (2 if view.street == 0 else 1)
        if facing_partner and a.kind in ("raise", "bet"):
            return Action("fold") if (not others and self.rng.random() < 0.5) else Action("call")
        if facing_partner and a.kind == "call" and (not others or view.street == 0) and self.rng.random() < self.params.soft_leave:
            return Action("fold")  # don't contest the partner's pot
        if not others and view.to_call <= 0 and a.kind in ("bet", "raise"):
            return Action("check")
        return a

    # -- chip dumping
    def _dump(self, view: DecisionView, a: Action, link: Link) -> Action:
        others = [p for p in view.in_hand if p != view.player and p not in link.partners]
        rng = self.rng
        P = self.params
        if link.role == "feeder":
            if view.street == 0:
                if view.to_call > 0:
                    if a.kind == "fold" and view.to_call <= view.stack * P.dump_call:
                        return Action("call")
                    return a
                if a.kind in ("check", "fold", "call") and view.can_raise and rng.random() < P.dump_open:
                    open_to = int(view.big_blind * P.dump_open_bb)
                    return Action("raise", min(view.max_raise_to, max(view.min_raise_to, open_to)))
                return a
            if others:
                return a
            if view.to_call > 0:
                if view.street == 1 and view.to_call <= view.stack * 0.3:
                    return Action("call")
                return Action("fold")
            if view.street == 1 and view.can_raise:
                return Action("bet", min(view.max_raise_to, max(view.min_raise_to, int(view.pot * P.dump_bet))))
            return Action("check")
        # receiver: put the feeder to a decision
        if others:
            return a
        if view.to_call > 0:
            if a.kind == "fold":
                return Action("call") if view.street == 0 or view.to_call <= view.stack * 0.3 else a
            if view.street >= 1 and view.can_raise and a.kind == "call":
                return Action("raise", min(view.max_raise_to, max(view.min_raise_to, int((view.pot + view.to_call) * 0.8))))
            return a
        if view.street >= 2 and view.can_raise and a.kind == "check":
            return Action("bet", min(view.max_raise_to, max(view.min_raise_to, int(view.pot * 0.75))))
        return a

    # -- bounty collusion
    def _bounty_target(self, view: DecisionView, link: Link) -> str | None:
        info = view.table
        bounties = info.get("bounties") if info else None
        if not bounties:
            return None
        starts = info.get("start_stacks", {})
        bb = view.big_blind
        best = None
        for p in view.in_hand:
            if p == view.player or p in link.partners:
                continue
            if bounties.get(p) and starts.get(p, 10**12) <= 20 * bb:
                best = p
        return best

    def _bounty(self, view: DecisionView, a: Action, target: str, link: Link) -> Action:
        target_allin = view.stacks.get(target, 1) == 0
        partners_in = [p for p in view.in_hand if p in link.partners]
        if view.street == 0:
            if view.to_call > 0 and a.kind == "fold" and view.to_call <= max(view.stack * 0.35, 15 * view.big_blind):
                pct = self.preflop_pct(view)
                if pct < self.params.bounty_call[0 if target_allin else 1]:
                    return Action("call")
            isolate = self.params.bounty_isolate >= 1 or self.rng.random() < self.params.bounty_isolate
            if view.to_call <= 0 and a.kind == "check" and not target_allin and view.can_raise and isolate:
                # isolate the short stack: put them to a decision for their chips
                return Action("raise", view.min_raise_to)
            if view.to_call > 0 and a.kind == "raise" and target_allin and partners_in:
                return Action("call")  # keep the partner in
            return a
        if target_allin and partners_in:
            if view.to_call <= 0 and a.kind in ("bet", "raise"):
                return Action("check")
            if view.to_call > 0 and view.facing_player in link.partners and a.kind == "fold":
                return Action("call")
        return a


def make_policy(name: str, style, timing, rng: random.Random, log, mobile: bool, links: list[Link], ctx) -> HonestPolicy:
    """An honest policy, or a colluding one when the account has links at this venue."""
    if links:
        return ColludingPolicy(name, style, timing, rng, log, mobile, links=links, ctx=ctx)
    return HonestPolicy(name, style, timing, rng, log, mobile)


def links_for(groups: list[Group], account: str) -> list[Link]:
    """The in-hand links of ``account`` (its partners in each in-hand group)."""
    out = []
    for g in groups:
        # flipping pairs get their link in heads-up matches only (datasets.flipping)
        if account not in g.accounts or g.kind in ("coordinated_sitout", "seat_handoff", "heads_up_flipping"):
            continue
        if g.kind == "chip_dumping":
            role = g.roles.get(account, "")
            partners = frozenset(a for a in g.accounts if a != account and g.roles.get(a) != role)
        else:
            partners = frozenset(a for a in g.accounts if a != account)
        if partners:
            out.append(Link(g.gid, g.kind, partners, g.strength, g.roles.get(account, "")))
    return out


VENUES = {
    "soft_play": ("cash", "cash", "sng"),
    "chip_dumping": ("cash", "cash", "sng"),
    "bounty_collusion": ("mtt",),
    "coordinated_sitout": ("mtt",),
    "multi_accounting": ("sng", "mtt", "mtt"),
    "seat_handoff": ("mtt",),
}


def plant_groups(pop, mix: dict[str, int], strength: tuple[float, float], rng: random.Random,
                 gang: tuple[int, int] = (2, 2)) -> list[Group]:
    """Choose the colluders among the persons and create the extra accounts.

    Strengths of the groups of one kind are spread evenly over the range
    (then shuffled), so every kind spans blatant to subtle. Colluders are
    persons with some activity (in-hand kinds: players with a VPIP of at
    least 18 %, who actually contest pots); a person joins at most one group. Chip
    dumping groups are stars (one feeder and 2-3 receivers, or the reverse)
    a third of the time; bounty gangs have ``gang`` (low, high) members.
    Multi-accounting gives one person 1-2 extra accounts; a seat hand-off
    adds a person with no account who takes over.
    """
    from datasets.population import NameMaker, add_multi_accounts, new_person

    groups: list[Group] = []
    free = [p.pid for p in pop.persons if p.household is None]
    rng.shuffle(free)
    free.sort(key=lambda pid: -min(pop.persons[pid].activity, 1.5))
    names = NameMaker(rng)
    gid = 0
    lo, hi = strength
    for kind in KINDS:
        count = mix.get(kind, 0)
        if count <= 0 or kind not in VENUES:  # heads-up flipping and hand chat: datasets.flipping, datasets.chat
            continue
        strengths = [lo + (hi - lo) * (i / (count - 1) if count > 1 else 1.0) for i in range(count)]
        rng.shuffle(strengths)
        for k in range(count):
            gid += 1
            venue = rng.choice(VENUES[kind])
            take = 2
            roles: dict[str, str] = {}
            if kind == "soft_play" and rng.random() < 0.25:
                take = 3
            if kind == "coordinated_sitout" and rng.random() < 0.35:
                take = 3
            if kind == "bounty_collusion" and gang != (2, 2):
                take = rng.randint(*gang)
            star = kind == "chip_dumping" and rng.random() < 0.34
            if star:
                take = rng.choice([3, 4])
            if kind in ("multi_accounting", "seat_handoff"):
                take = 1
            if len(free) < take:
                break
            if kind in ("soft_play", "chip_dumping", "bounty_collusion"):
                # in-hand colluders are people who play pots (not the tightest nits)
                cands = [i for i, pid in enumerate(free[:80]) if pop.persons[pid].style.vpip >= 0.18]
                if len(cands) < take:
                    cands = list(range(min(len(free), 40)))
                idx = sorted(rng.sample(cands, take), reverse=True)
                pids = [free.pop(i) for i in idx]
            else:
                pids = [free.pop(rng.randrange(min(len(free), 40))) for _ in range(take)]
            for pid in pids:
                p = pop.persons[pid]
                p.activity = max(p.activity, 0.6)
            accounts = [pop.persons[pid].accounts[0] for pid in pids]
            if kind == "chip_dumping":
                if star and rng.random() < 0.5:
                    roles = {a: ("receiver" if i == 0 else "feeder") for i, a in enumerate(accounts)}
                else:
                    roles = {a: ("feeder" if i == 0 else "receiver") for i, a in enumerate(accounts)}
            if kind == "multi_accounting":
                accounts = add_multi_accounts(pop, pids[0], rng.choice([1, 1, 2]), rng, names)
                pids = [pids[0]] * len(accounts)
                pop.persons[pids[0]].favourite = venue
            if kind == "seat_handoff":
                other = new_person(pop, rng)
                pids = [pids[0], other.pid]
                pop.persons[pids[0]].favourite = "mtt"
            g = Group(f"g{gid}", kind, accounts, round(strengths[k], 3), pids=pids, roles=roles, venue=venue)
            groups.append(g)
    return groups


__all__ = ["Group", "Link", "ColludingPolicy", "make_policy", "links_for", "plant_groups", "KINDS"]
