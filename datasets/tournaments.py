"""Tournaments: sit-and-gos and multi-table tournaments with bounties.

Method, by the house rules (``shared/house-rules``):

* **Sit-and-go**: nine seats, 1,500 chips, no-limit hold'em; blinds rise every
  10 hands over 8 levels (the 8th lasts until the end); the first button goes
  to the high card (suit order spades, hearts, diamonds, clubs); prizes are
  50/30/20 % of the prize pool; at most three raises a betting round (five
  heads-up), kept by the players' policies; no breaks.
* **Multi-table**: 9-max tables, 1,500 or 3,000 chips, levels by hands
  played at the tournament's busiest table (a proxy for the clock), antes from
  level 4; players are seated at random, tables are balanced (a player moves
  from the fullest to the shortest table when the difference reaches two,
  landing where the big blind is not about to skip them) and broken when the
  remaining players fit in one fewer table; the final table gathers the last
  nine. Prizes go to the top 15 % (at least 3), a decreasing schedule.
  ``KO`` events pay a fixed bounty for every elimination, ``PKO`` events pay
  half the bounty in cash and add half to the eliminator's own bounty; the
  bounty goes to the winner(s) of the relevant pot and splits between tied
  winners (the engine). The winner's own bounty is paid to them at the end.
  Every hour of play (a synchronised break at 55 minutes past the hour) all
  players sit out for five minutes: ``sit_out``/``sit_in`` events for most of
  them, and a few come back late (``is sitting out`` for a hand or two).
* **Button and blinds**: dead-button rule. The big blind moves forward one
  live player each hand; the small blind is the seat that had the big blind
  (none if that player was eliminated); the button is the seat that had the
  small blind, even when empty. Heads-up the button posts the small blind and
  acts first preflop.
* **Eliminations**: players busted in one hand are ranked by their chips at
  the start of the hand (more chips finish higher); equal starting stacks tie
  and share the prizes of the places they cover.

Planted tournament behaviour (the truth in ``labels.jsonl``) is applied
here: coordinated sit-outs near the bubble, seat hand-offs, accounts of one
person in one event; in-hand collusion comes from the policies.

Honest look-alike of a hand-off: an owner who starts a multi-table event on
the phone moves to the desktop mid-event about one time in six (its own
seeded stream): the phone session logs out between two hands, the desktop
(home network) logs in 2-15 s later half of the time, else 15-40 s later, the
player sitting out the hands dealt meanwhile, and the same person plays on at
desktop speed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import entrants

SNG_LEVELS = [(10, 20), (15, 30), (25, 50), (50, 100), (75, 150), (100, 200), (150, 300), (200, 400)]
SNG_HANDS_PER_LEVEL = 10
SNG_STACK = 1500
SNG_PAYOUT = (50, 30, 20)

MTT_LEVELS = [(10, 20, 0), (15, 30, 0), (25, 50, 0), (50, 100, 10), (75, 150, 15), (100, 200, 25), (150, 300, 40),
              (200, 400, 50), (300, 600, 75), (400, 800, 100), (600, 1200, 150), (800, 1600, 200),
              (1000, 2000, 250), (1500, 3000, 400), (2000, 4000, 500), (3000, 6000, 750), (4000, 8000, 1000),
              (6000, 12000, 1500), (8000, 16000, 2000), (10000, 20000, 2500), (15000, 30000, 4000),
              (20000, 40000, 5000), (30000, 60000, 7500), (40000, 80000, 10000)]


def first_button_by_high_card(seats: list[int], rng: random.Random) -> tuple[int, dict[int, int]]:
    """Deal one card face up to each seat; the highest card (rank, then suit
    spades > hearts > diamonds > clubs, i.e. the card code) gets the button."""
    cards = rng.sample(range(52), len(seats))
    drawn = dict(zip(seats, cards))
    return max(seats, key=lambda s: drawn[s]), drawn


def split_prizes(places: list[int], prizes: dict[int, int]) -> list[int]:
    """Prizes of players tied over ``places``: each place's prize pooled and split, odd cents to the first."""
    total = sum(prizes.get(p, 0) for p in places)
    q, r = divmod(total, len(places))
    return [q + (1 if i < r else 0) for i in range(len(places))]


def mtt_payouts(entrants: int, pool: int) -> dict[int, int]:
    """Prize per place (cents) for the top ~15 %: weights ~ 1/place^0.9, rounded down, remainder to 1st."""
    n_paid = max(3, int(entrants * 0.15))
    w = [1.0 / (k ** 0.9) for k in range(1, n_paid + 1)]
    s = sum(w)
    prizes = {k + 1: int(pool * w[k] / s) for k in range(n_paid)}
    prizes[1] += pool - sum(prizes.values())
    return prizes


def sng_payouts(pool: int) -> dict[int, int]:
    prizes = {k + 1: pool * p // 100 for k, p in enumerate(SNG_PAYOUT)}
    prizes[1] += pool - sum(prizes.values())
    return prizes


@dataclass
class Entry:
    """One account's entry into a tournament."""

    account: str
    pid: int                 # the person who plays it (at the start)
    register_ms: int
    mobile: bool = False
    handoff_hand: int = -1   # index of the tournament hand from which another person plays (seat hand-off)
    handoff_pid: int = -1
    late_after_break: int = 0
    switch_hand: int = -1    # index of the tournament hand from which the owner plays on the desktop


@dataclass
class TournamentPlan:
    unit: int
    tid: str
    kind: str                # "sng" | "mtt"
    start_ms: int
    buy_in: int              # cents to the prize pool
    fee: int
    bounty: int | None = None   # cents, KO/PKO only
    progressive: bool = False
    stack: int = SNG_STACK
    entries: list[Entry] = field(default_factory=list)
    name: str = ""
    sitout_groups: list[tuple[str, list[str], float]] = field(default_factory=list)  # (gid, accounts, strength)
    unregistered: list[tuple[str, int, int]] = field(default_factory=list)  # (account, pid, ms)


class TourTable:
    """One tournament table: seats, dead-button blinds, levels."""

    def __init__(self, name: str, max_seats: int = 9):
        self.name = name
        self.max_seats = max_seats
        self.seats: dict[int, str] = {}   # seat -> account
        self.button: int | None = None
        self.last_bb: int | None = None
        self.last_sb: int | None = None
        self.hands = 0

    def free_seats(self) -> list[int]:
        return [s for s in range(1, self.max_seats + 1) if s not in self.seats]

    def clockwise(self, after: int) -> list[int]:
        return sorted(self.seats, key=lambda s: (s - after - 1) % self.max_seats)

    def next_blinds(self, rng: random.Random) -> tuple[int, tuple[int | None, int] | None]:
        """(button seat, ``(sb seat or None, bb seat)`` or None for heads-up) for the next hand.

        Positions are seat numbers: the big blind moves to the next live
        player; the small blind is last hand's big-blind seat (no small blind if
        that seat is now empty); the button is last hand's small-blind seat
        (a dead button if empty). Heads-up the engine places the blinds with
        the button on the small blind.
        """
        alive = sorted(self.seats)
        if self.last_bb is None:
            if self.button is None or self.button not in self.seats:
                self.button, _ = first_button_by_high_card(alive, rng)
            cw = self.clockwise(self.button)
            if len(alive) == 2:
                self.last_sb, self.last_bb = self.button, cw[0]
                return self.button, None
            self.last_sb, self.last_bb = cw[0], cw[1]
            return self.button, (cw[0], cw[1])
        bb = self.clockwise(self.last_bb)[0]
        if len(alive) == 2:
            button = alive[0] if alive[1] == bb else alive[1]
            self.button, self.last_sb, self.last_bb = button, button, bb
            return button, None
        sb_pos = self.last_bb
        button = self.last_sb
        sb = sb_pos if (sb_pos in self.seats and sb_pos != bb) else None
        if button == bb or (sb is not None and button == sb):
            ref = sb if sb is not None else bb
            button = (ref - 2) % self.max_seats + 1
            if button == bb:
                button = (button - 2) % self.max_seats + 1
        self.button, self.last_sb, self.last_bb = button, sb_pos, bb
        return button, (sb, bb)


# ----------------------------------------------------------------------------
# Playing a tournament

MTT_HANDS_PER_LEVEL = 12
BREAK_MS = 5 * 60_000


def _bubble_size(plan: TournamentPlan, n_paid: int) -> int:
    """How many players remain when the bubble phase starts."""
    if plan.kind == "sng":
        return 4
    return n_paid + max(2, n_paid // 3)


def play_tournament(plan: TournamentPlan, ctx) -> int:
    """Play ``plan`` to the end into ``ctx.sink``; returns the number of hands.

    Rounds: every table plays one hand per round (hand-for-hand timing);
    eliminations of a round are ranked together by chips at the start of
    their hands. See the module docstring for blinds, levels, balancing,
    breaks, prizes and bounties. Seating (:func:`_seat_entrants`),
    registration (:func:`datasets.entrants.register`), each table's hand of a round
    (:func:`_deal_table`), the settling of a round (:func:`_settle_round`)
    and its writing (:func:`_close_round`) are functions of their own.
    """
    rng = ctx.rng
    ev = ctx.events
    entries = list(plan.entries)
    n = len(entries)
    pool = plan.buy_in * n
    prizes = sng_payouts(pool) if plan.kind == "sng" else mtt_payouts(n, pool)
    bubble_at = _bubble_size(plan, len(prizes))
    stacks = {e.account: plan.stack for e in entries}
    bounty = {e.account: plan.bounty for e in entries} if plan.bounty else {}
    bounty_cash: dict[str, int] = {}
    tid = plan.tid
    ps = entrants.Players({e.account: e for e in entries})
    tables, together = _seat_entrants(plan, entries, ps.by_acc, ctx)
    entrants.register(plan, entries, ps, ctx)
    clock = {tb.name: plan.start_ms for tb in tables}
    hands = 0
    level_hands = 0          # hands at the busiest table (SNG: the only table)
    remaining = n
    next_break = plan.start_ms + 55 * 60_000 if plan.kind == "mtt" else None
    if plan.kind == "mtt":
        entrants.plan_switches(plan, entries, ctx)
    coord_done: dict[str, int] = {}
    place_of: dict[str, int] = {}
    table_info = ctx.table_info
    table_info.clear()
    if bounty:
        table_info["bounties"] = bounty
    if plan.kind == "sng":
        # house rule 11: at most three raises (four bets) a round, five raises (six bets) heads-up
        table_info["raise_cap"] = (4, 6)
    while remaining > 1:
        config, info = _level(plan, level_hands)
        if next_break is not None and min(clock[tb.name] for tb in tables) >= next_break:
            next_break = _scheduled_break(tables, clock, ps, ev, rng, tid)
        # planted coordinated sit-outs near the bubble, and the odd honest one
        ctx.plan_sitouts(plan, tables, remaining, bubble_at, ps.sitting, ps.sitout_log, coord_done, clock)
        round_recs = []
        for tb in tables:
            if len(tb.seats) >= 2:
                round_recs.append(_deal_table(tb, clock[tb.name], ps, stacks, bounty, config, info, ctx, tid))
        if not round_recs:
            break
        busted = _settle_round(round_recs, stacks, bounty, bounty_cash, plan.progressive)
        remaining = _rank_eliminations(busted, remaining, prizes, bounty_cash, place_of, ctx, tid)
        for _, _, acc, tb, rec in busted:
            for s_no, a in list(tb.seats.items()):
                if a == acc:
                    del tb.seats[s_no]
            bounty.pop(acc, None)
            ps.sitting.pop(acc, None)
        if remaining == 1:
            _crown_winner(tables, round_recs, prizes, bounty, bounty_cash, place_of, ctx, tid)
        hands += _close_round(round_recs, busted, clock, ps, ctx, tid)
        level_hands = max(tb.hands for tb in tables)
        # break and balance tables
        if plan.kind == "mtt":
            _rebalance(tables, clock, rng, together)
    if remaining == 1 and hands:
        winner = next(a for tb in tables for a in tb.seats.values())
        tname = next(tb.name for tb in tables if winner in tb.seats.values())
        if ps.sessions[winner]:
            ev.logout(clock[tname] + rng.randrange(10_000, 300_000), winner, ps.sessions[winner])
    ctx.tournament_done(plan, place_of, bounty_cash)
    return hands


def _level(plan: TournamentPlan, level_hands: int) -> tuple:
    """The game and tournament header of the level reached after ``level_hands`` hands at the busiest
    table (the schedule's last level at most)."""
    from datasets.records import GameConfig, TournamentInfo

    lvl = min(level_hands // (SNG_HANDS_PER_LEVEL if plan.kind == "sng" else MTT_HANDS_PER_LEVEL),
              (len(SNG_LEVELS) if plan.kind == "sng" else len(MTT_LEVELS)) - 1)
    if plan.kind == "sng":
        sb, bb = SNG_LEVELS[lvl]
        ante = 0
    else:
        sb, bb, ante = MTT_LEVELS[lvl]
    config = GameConfig(game="holdem", limit="no_limit", small_blind=sb, big_blind=bb, ante=ante)
    info = TournamentInfo(plan.tid, plan.buy_in, plan.fee, level=lvl + 1, bounty=plan.bounty,
                          progressive=plan.progressive)
    return config, info


def _crown_winner(tables: list[TourTable], round_recs: list, prizes: dict, bounty: dict, bounty_cash: dict,
                  place_of: dict, ctx, tid) -> None:
    """The last player left wins: first place in the last hand they played, first prize and their own bounty."""
    from datasets.records import Finish

    winner = next(a for tb in tables for a in tb.seats.values())
    last_rec = round_recs[-1][1]
    for tb, rec, *_ in round_recs:
        if winner in rec.final_stacks:
            last_rec = rec
    last_rec.finishes.append(Finish(winner, 1, prizes.get(1)))
    own = bounty.get(winner, 0) or 0
    bounty_cash[winner] = bounty_cash.get(winner, 0) + own
    place_of[winner] = 1
    ctx.finished(tid, winner, 1, prizes.get(1, 0) + bounty_cash.get(winner, 0), own_bounty=own)


def _seat_entrants(plan: TournamentPlan, entries: list, by_acc: dict, ctx) -> tuple[list[TourTable], list]:
    """Seat the entrants at random on as few nine-seat tables as hold them, filled evenly.

    Partners of bounty groups (``ctx.seat_together``) start at one table: they registered together and
    were lucky (planted). Returns the tables and those partner groups.
    """
    rng = ctx.rng
    order = list(entries)
    rng.shuffle(order)
    n_tables = max(1, -(-len(entries) // 9))
    tables = [TourTable(f"{plan.tid} {k + 1}", 9) for k in range(n_tables)]
    together = ctx.seat_together(plan)
    placed: set[str] = set()
    ti = 0
    for grp in together:
        t = tables[rng.randrange(n_tables)]
        for acc in grp:
            if acc in by_acc and acc not in placed and t.free_seats():
                t.seats[rng.choice(t.free_seats())] = acc
                placed.add(acc)
    for e in order:
        if e.account in placed:
            continue
        # fill tables evenly
        t = min(tables, key=lambda tb: (len(tb.seats), (tables.index(tb) - ti) % n_tables))
        ti += 1
        t.seats[rng.choice(t.free_seats())] = e.account
        placed.add(e.account)
    return tables, together


def _scheduled_break(tables: list[TourTable], clock: dict[str, int], ps: entrants.Players, ev, rng, tid) -> int:
    """A scheduled break: every table finishes its hand, then everyone is away 5 minutes (the clocks of
    the tables still running: a broken table's clock stops when it breaks). Returns the next break's time."""
    brk_start = max(clock[tb.name] for tb in tables)
    brk_end = brk_start + BREAK_MS
    for tb in tables:
        for acc in tb.seats.values():
            if rng.random() < 0.7:
                ev.sit_out(brk_start + rng.randrange(0, 40_000), acc, tb.name, tid)
                if rng.random() < 0.1:
                    ps.sitting[acc] = rng.randint(1, 2)
                    ps.sitout_log[acc] = (None, tb.name)
                else:
                    ev.sit_in(brk_end - rng.randrange(0, 60_000), acc, tb.name, tid)
        clock[tb.name] = brk_end
    return brk_start + 60 * 60_000


def _deal_table(tb: TourTable, t: int, ps: entrants.Players, stacks: dict, bounty: dict, config, info, ctx, tid) -> tuple:
    """Play one table's hand of a round at ``t`` (not yet written): device switches, the seats, hand-offs,
    connections. Returns (table, record, t, its decisions, start stacks)."""
    from datasets.engine import play_hand
    from datasets.records import SeatState

    rng = ctx.rng
    table_info = ctx.table_info
    button, blinds = tb.next_blinds(rng)
    seat_states = []
    extra = []
    start_stacks = {}
    entrants.switch_devices(tb, t, ps, ctx, tid)
    for s_no in sorted(tb.seats):
        acc = tb.seats[s_no]
        out = ps.sitting.get(acc, 0) > 0
        if not out and acc in ps.returning:
            ps.returning.discard(acc)
            extra.append(f"{acc} has returned")
        seat_states.append(SeatState(s_no, acc, stacks[acc], sitting_out=out,
                                     bounty=bounty.get(acc) if bounty else None))
        start_stacks[acc] = stacks[acc]
    entrants.hand_offs(tb, t, ps, seat_states, ctx, tid)
    table_info["start_stacks"] = start_stacks
    by_acc = ps.by_acc
    players = {acc: (by_acc[acc].handoff_pid if ps.handed_off.get(acc) else by_acc[acc].pid) for acc in tb.seats.values()}
    disc, conn_lines = ctx.connection(t, players, tb.name, tid, sessions=ps.sessions)
    table_info["disconnected"] = disc | ctx.clocked_out(tb.seats.values())
    extra.extend(conn_lines)
    hid = ctx.next_hand_id()
    ctx.decisions.clear()
    ctx.current_hand = (hid, t, tid)
    rec = play_hand(config, seat_states, button, ps.policies, ctx.np_rng, hid, ctx.to_dt(t), tb.name, tb.max_seats,
                    tournament=info, blinds=blinds, table=table_info)
    for line in extra:
        rec.extra_lines.append((-1, line))
    decisions = list(ctx.decisions.rows)
    tb.hands += 1
    return tb, rec, t, decisions, start_stacks


def _settle_round(round_recs: list, stacks: dict, bounty: dict, bounty_cash: dict, progressive: bool) -> list:
    """Settle a round's hands: stacks, bounties won (a progressive bounty grows). Returns the eliminated
    as (start stack, -order, account, table, record), best first."""
    busted = []
    for tb, rec, t, decisions, start_stacks in round_recs:
        for acc, st in rec.final_stacks.items():
            stacks[acc] = st
        for aw in rec.bounty_awards:
            bounty_cash[aw.winner] = bounty_cash.get(aw.winner, 0) + aw.cash
            if progressive and aw.new_bounty is not None:
                bounty[aw.winner] = aw.new_bounty
        for acc in rec.eliminated:
            busted.append((start_stacks[acc], -len(busted), acc, tb, rec))
    busted.sort(key=lambda x: (-x[0], -x[1]))
    return busted


def _rank_eliminations(busted: list, remaining: int, prizes: dict, bounty_cash: dict, place_of: dict, ctx,
                       tid) -> int:
    """Places and prizes of a round's eliminated: the smallest start stack finishes lowest, equal start
    stacks tie and split their places' prizes. Returns the players remaining."""
    from datasets.records import Finish

    place = remaining
    i = 0
    worst_first = list(reversed(busted))
    while i < len(worst_first):
        j = i
        while j + 1 < len(worst_first) and worst_first[j + 1][0] == worst_first[i][0]:
            j += 1
        tied = worst_first[i:j + 1]
        places = list(range(place - len(tied) + 1, place + 1))
        shares = split_prizes(places, prizes) if len(tied) > 1 else [prizes.get(place, 0)]
        for k, (_, _, acc, tb, rec) in enumerate(tied):
            pl = places[0] if len(tied) > 1 else place
            place_of[acc] = pl
            rec.finishes.append(Finish(acc, pl, shares[k] or None))
            ctx.finished(tid, acc, pl, shares[k] + bounty_cash.get(acc, 0))
        place -= len(tied)
        i = j + 1
    return place


def _close_round(round_recs: list, busted: list, clock: dict[str, int], ps: entrants.Players, ctx, tid) -> int:
    """Write the round's hands and advance the clocks; the eliminated log out; sit-outs count down and
    those coming back sit in. Returns the number of hands written."""
    rng = ctx.rng
    hands = 0
    for tb, rec, t, decisions, start_stacks in round_recs:
        dur = ctx.sink.record(rec, t, decisions)
        ctx.current_hand = (rec.hand_id, t, tid)
        ctx.after_hand(rec, t)
        clock[tb.name] = t + dur
        hands += 1
        for acc in rec.dealt:
            ps.hands_of[acc] = ps.hands_of.get(acc, 0) + 1
    end_t = max(clock.values())
    for _, _, acc, tb, rec in busted:
        if ps.sessions[acc]:
            ctx.events.logout(clock[tb.name] + rng.randrange(3_000, 180_000), acc, ps.sessions[acc])
    for acc in list(ps.sitting):
        ps.sitting[acc] -= 1
        if ps.sitting[acc] <= 0:
            del ps.sitting[acc]
            gid, tname = ps.sitout_log.pop(acc, (None, None))
            ps.returning.add(acc)
            ctx.events.sit_in(clock.get(tname, end_t) - rng.randrange(500, 6_000), acc, tname, tid)
    return hands


def _rebalance(tables: list[TourTable], clock: dict[str, int], rng: random.Random, together: list | None = None) -> None:
    """Break the shortest table when the players fit in one fewer; move one player at a time
    from the fullest to the shortest table while they differ by two or more.

    A table receiving a player waits until that player's old table's clock
    (nobody's timeline runs backwards). ``together`` (planted bounty partners)
    are kept at one table where the seats allow: a broken table's partner joins the table of their partner,
    and partners are not the ones picked to balance.
    """
    partner_of: dict[str, set] = {}
    for grp in together or []:
        for a in grp:
            partner_of[a] = set(grp) - {a}
    live = [tb for tb in tables if tb.seats]
    total = sum(len(tb.seats) for tb in live)
    need = max(1, -(-total // 9))
    while len(live) > need:
        victim = min(live, key=lambda tb: (len(tb.seats), tb.name))
        live.remove(victim)
        for s_no, acc in sorted(victim.seats.items()):
            dest = None
            for tb in live:
                if tb.free_seats() and partner_of.get(acc, set()) & set(tb.seats.values()):
                    dest = tb
            if dest is None:
                dest = min(live, key=lambda tb: (len(tb.seats), tb.name))
            dest.seats[rng.choice(dest.free_seats())] = acc
            # a moved player never goes back in time: the table waits for them
            clock[dest.name] = max(clock[dest.name], clock[victim.name])
        victim.seats.clear()
    while True:
        full = max(live, key=lambda tb: len(tb.seats))
        short = min(live, key=lambda tb: len(tb.seats))
        if len(full.seats) - len(short.seats) < 2:
            break
        # move the player who would be big blind next (similar position), unless a planted partner
        cands = [s for s in full.seats if full.seats[s] not in partner_of] or list(full.seats)
        nxt = full.clockwise(full.last_bb)[0] if full.last_bb else None
        s_no = nxt if nxt in cands else rng.choice(cands)
        acc = full.seats.pop(s_no)
        short.seats[rng.choice(short.free_seats())] = acc
        clock[short.name] = max(clock[short.name], clock[full.name])
    tables[:] = [tb for tb in tables if tb.seats]
