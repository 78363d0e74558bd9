"""One hand's settlement once the betting is over: the uncalled bet, the pots, the rake, the winners, the knockouts.

Each function takes the lists :class:`datasets.betting.BettingState` kept
(indexed by dealing order) and returns what :class:`~datasets.records.HandRecord`
records; the rules (pots layered by contributions, odd chips clockwise from the
button, hi/lo halves, rake in proportion to the pots, the relevant pot's
winners taking a bounty) are listed in :mod:`datasets.engine`'s docstring.
"""

from __future__ import annotations

from typing import Sequence

from datasets.cards import NO_LOW, evaluate, evaluate_omaha, evaluate_omaha_low8
from datasets.records import ActionRecord, BountyAward, Collection, GameConfig, Pot, SeatState, TournamentInfo


def return_uncalled(names: list[str], bet: list[int], put: list[int],
                    stack: list[int]) -> tuple[tuple[str, int] | None, list[int]]:
    """Return the largest street bet's unmatched part to its owner's ``stack``.

    Returns ``(uncalled, contributions)``: ``(player, amount)`` or None, and
    each player's chips in the pots after the return.
    """
    top_bet = max(bet)
    top = bet.index(top_bet)
    second = max(bet[:top] + bet[top + 1:], default=0)
    contrib = list(put)
    if bet[top] > second:
        back = bet[top] - second
        stack[top] += back
        contrib[top] -= back
        return (names[top], back), contrib
    return None, contrib


def layer_pots(names: list[str], contrib: list[int], folded: list[bool]) -> list[Pot]:
    """Main pot then side pots, layered by contributions, each eligible to the players in it who did not fold."""
    n = len(names)
    pots: list[Pot] = []
    remaining = list(contrib)
    while True:
        live_left = [j for j in range(n) if not folded[j] and remaining[j] > 0]
        if not live_left:
            leftover = sum(remaining)
            if leftover:
                if pots:
                    pots[-1].amount += leftover
                else:
                    pots.append(Pot(leftover, [names[j] for j in range(n) if not folded[j]]))
            return pots
        level = min(remaining[j] for j in live_left)
        amount = 0
        for j in range(n):
            take = remaining[j] if remaining[j] < level else level
            amount += take
            remaining[j] -= take
        pots.append(Pot(amount, [names[j] for j in live_left]))


def take_rake(config: GameConfig, pots: list[Pot], n_dealt: int, saw_flop: bool, is_tour: bool) -> int:
    """The hand's rake, taken from the pots in proportion to their size (the remainder from the main pot)."""
    if config.rake is None or is_tour:
        return 0
    total = sum(p.amount for p in pots)
    rake = config.rake.rake(total, n_dealt, saw_flop)
    if rake:
        given = 0
        for p in pots:
            p.rake = rake * p.amount // total
            given += p.rake
        pots[0].rake += rake - given
    return rake


def _share_out(pot_index: int, eligible_best: list[str], net: int, order: dict[str, int],
               stack: list[int], collections: list[Collection], low: bool) -> tuple[list[str], list[int]]:
    """Split ``net`` between the winners, the odd chips one by one clockwise from the button."""
    winners = sorted(eligible_best, key=lambda q: order[q])
    share, odd = divmod(net, len(winners))
    shares = [share + (1 if wi < odd else 0) for wi in range(len(winners))]
    for q, amt in zip(winners, shares):
        if amt:
            collections.append(Collection(q, amt, pot_index, low))
        stack[order[q]] += amt
    return winners, shares


def award_pots(config: GameConfig, pots: list[Pot], names: list[str], folded: list[bool], holes: list[list[int]],
               board: list[int], stack: list[int], showdown: bool) -> tuple[dict[str, int], dict[str, int],
                                                                          list[Collection]]:
    """Give every pot (net of its rake) to its winners; returns ``(values, low_values, collections)``.

    Without a showdown the one player left takes every pot.  At a showdown each
    pot goes to its best eligible hand, split evenly; in hi/lo a qualifying low
    takes half (the odd chip to the high half).
    """
    n = len(names)
    values: dict[str, int] = {}
    low_values: dict[str, int] = {}
    collections: list[Collection] = []
    if not showdown:
        w = next(j for j in range(n) if not folded[j])
        for pi, p in enumerate(pots):
            net = p.amount - p.rake
            p.winners = [names[w]]
            p.shares = [net]
            if net:
                collections.append(Collection(names[w], net, pi))
            stack[w] += net
        return values, low_values, collections
    order = {names[j]: j for j in range(n)}
    contenders = [j for j in range(n) if not folded[j]]
    for j in contenders:
        hole = holes[j]
        values[names[j]] = evaluate(hole + board) if config.game == "holdem" else evaluate_omaha(hole, board)
    if config.hi_lo:
        for j in contenders:
            low_values[names[j]] = evaluate_omaha_low8(holes[j], board)
    for pi, p in enumerate(pots):
        net = p.amount - p.rake
        low_net = 0
        low_best = NO_LOW
        if config.hi_lo:
            low_best = max(low_values[q] for q in p.eligible)
            if low_best != NO_LOW:
                low_net = net // 2  # the odd chip goes to the high half
        best = max(values[q] for q in p.eligible)
        p.winners, p.shares = _share_out(pi, [q for q in p.eligible if values[q] == best], net - low_net, order,
                                         stack, collections, False)
        if low_best != NO_LOW:
            p.low_winners, p.low_shares = _share_out(pi, [q for q in p.eligible if low_values[q] == low_best],
                                                     low_net, order, stack, collections, True)
    return values, low_values, collections


def showing_order(config: GameConfig, names: list[str], folded: list[bool], allin: list[bool],
                  acts: list[ActionRecord], streets_seen: int, pots: list[Pot],
                  values: dict[str, int]) -> tuple[list[str], list[str]]:
    """Who shows and who mucks at a showdown, in showing order: ``(shown, mucked)``.

    The last aggressor of the last betting street shows first, else the first
    player left of the button; a player shows when all-in, in hi/lo, when they
    win a pot or their hand is at least the best shown so far.
    """
    n = len(names)
    contenders = [j for j in range(n) if not folded[j]]
    any_allin = any(allin[j] for j in contenders)
    last_street_aggr = None
    for a in reversed(acts):
        if a.street != streets_seen and a.street < streets_seen:
            break
        if a.kind in ("bet", "raise"):
            last_street_aggr = a.player
            break
    order = list(contenders)
    if last_street_aggr is not None and not any_allin:
        s0 = names.index(last_street_aggr)
        order.sort(key=lambda j: (j - s0) % n)
    shown: list[str] = []
    mucked: list[str] = []
    best_shown = -1
    for j in order:
        v = values[names[j]]
        if any_allin or v >= best_shown or config.hi_lo or any(names[j] in p.winners for p in pots):
            shown.append(names[j])
            if v > best_shown:
                best_shown = v
        else:
            mucked.append(names[j])
    return shown, mucked


def knockouts(tournament: TournamentInfo, live: Sequence[SeatState], start: list[int], stack: list[int],
              pots: list[Pot], collections: list[Collection]) -> tuple[list[str], list[BountyAward]]:
    """The players busted this hand (best finisher first) and the bounties paid for them.

    A bounty goes to the winners of the highest pot the busted player was
    eligible for, split equally with odd cents to the earliest; progressive
    knockouts pay half (rounded up) in cash and add the rest to the winner's bounty.
    """
    n = len(live)
    names = [s.player for s in live]
    busted = [j for j in range(n) if stack[j] == 0]
    busted.sort(key=lambda j: (-start[j], j))
    awards: list[BountyAward] = []
    bounty_now = {names[j]: live[j].bounty for j in range(n)}
    for j in busted:
        b = live[j].bounty
        if not b:
            continue
        rel = 0  # folded with chips all in: the main pot's winners knocked them out
        for pi, p in enumerate(pots):
            if names[j] in p.eligible:
                rel = pi
        winners = [q for q in pots[rel].winners if q != names[j]] or [
            c.player for c in collections if c.player != names[j]
        ][:1]
        if not winners:
            continue
        m = len(winners)
        cash_total, inc_total = (b - b // 2, b // 2) if tournament.progressive else (b, 0)
        cs, co = divmod(cash_total, m)
        is_, io = divmod(inc_total, m)
        for wi, q in enumerate(winners):
            cash = cs + (1 if wi < co else 0)
            inc = is_ + (1 if wi < io else 0)
            nb = None
            if tournament.progressive:
                nb = (bounty_now.get(q) or 0) + inc
                bounty_now[q] = nb
            awards.append(BountyAward(q, names[j], cash, inc, nb, m))
    return [names[j] for j in busted], awards
