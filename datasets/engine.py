"""The rules engine of the synthetic poker world: one hand, played to the chip.

:func:`play_hand` deals one hand of no-limit / pot-limit / fixed-limit Hold'em
or Omaha (4 or 5 cards), asks a :class:`Policy` per player for every decision,
enforces the betting rules, settles main and side pots and returns a
:class:`HandRecord` that :mod:`datasets.hhwriter` turns into PokerStars text
and the world uses to update stacks, finishes and labels.

Rules implemented (from ``shared/house-rules``):

* Blinds: the world passes ``button_seat`` (which may be an empty seat: dead
  button) and optionally ``blinds=(sb_seat, bb_seat)`` (``sb_seat`` may be
  ``None``: no small blind this hand, as the dead-button rule requires).
  Without ``blinds`` the engine places them itself: the first two players
  dealt in clockwise after the button; heads-up (two dealt in) the button
  posts the small blind and the other player the big blind.
* Antes are posted first (dead money), then SB, BB, then missed-blind posts
  of returning cash players (:attr:`SeatState.posts_dead`: ``'bb'`` a live big
  blind; ``'sb'`` a dead small blind, written ``posts small blind``; ``'sb_bb'``
  a live big blind plus a dead small blind, written ``posts small & big
  blinds``).  A post larger than the stack puts the player all-in.
* Action order: pre-flop the first player clockwise after the big blind
  (heads-up that is the button/small blind); after the flop the first player
  clockwise after the button (heads-up the big blind).
* No-limit / pot-limit: a bet is at least the big blind; a raise at least the
  size of the previous full bet or raise on the street.  An all-in for less
  does not reopen the betting: a player who already acted may raise again
  only when facing at least a full raise over the bet they last acted on
  (short all-ins that add up to a full raise do reopen, as the TDA rules
  say); a short all-in does not change the minimum raise increment.  Pot-limit caps a raise at
  ``current bet + pot after calling``.
* Fixed limit: bets and raises of one small bet (pre-flop, flop = big blind)
  or big bet (turn, river = two big blinds); at most ``fl_cap`` bets a street
  (bet + three raises, the big blind counting as the first pre-flop bet),
  ``fl_cap_heads_up`` (six) when only two players are dealt in.
* Illegal actions are corrected, never raised: ``call`` with nothing to call
  becomes ``check``; ``check`` facing a bet becomes ``fold`` (the house
  time-out rule); ``bet`` facing a bet is a ``raise`` and vice versa; amounts
  are clamped into [min, max] (an all-in below the minimum stays an all-in);
  a raise when raising is closed becomes a call.  ``fold`` is always allowed.
* An uncalled bet (the part of the largest street bet nobody matched) is
  returned before the pots are settled.
* Omaha Hi/Lo (``GameConfig.hi_lo``): each pot is halved between the best
  high hand and the best eight-or-better low (odd chip to the high half),
  each half split as below; no qualifying low: the high hand takes all.
  Bounties follow the high hand.
* Pots are layered by total contributions (antes and dead blinds included):
  main pot then side pots, each with the players still in the hand who
  contributed to that layer.  Each pot goes to its best eligible hand; split
  pots divide evenly and the odd chips (cents in cash) go one by one to the
  winners in clockwise order starting left of the button.
* Rake (cash only, :class:`RakeRule`): a percentage of the whole pot with a
  cap by the number of players dealt in, none when no flop was dealt ("no
  flop, no drop"), rounded to the cent ('half_even' as the house rules'
  ring-game rake says, or 'down').  The rake is taken from the pots in
  proportion to their size (rounded down, remainder from the main pot).
* Bounties (tournaments): every player who started the hand with chips and
  ends with none is eliminated; the bounty goes to the winner(s) of the
  *relevant pot*, the highest pot the eliminated player was eligible for
  (where they were all-in for their last chips), split equally with odd
  cents to the earliest positions.  Progressive knockouts pay half (rounded
  up) in cash and add the other half to the winner's own bounty.
* Cash players ``sitting_out`` are not dealt in; tournament players sitting
  out are dealt in, post, and are checked/folded by the engine.

* Pre-flop every player owes a full big blind, even when the big blind was
  posted short (all-in) or not at all (all-in on the ante).
* Eliminations (tournaments) are listed best finisher first: more chips at
  the start of the hand first, equal stacks by seat order from the button
  (the first left of the button ahead); the world decides places and ties.

Balancing: for every record ``sum(put in) - uncalled == total pot`` (rake
included), ``sum(collected) + rake == total pot``, and ``final stack ==
start - put in + returned + collected`` for every player dealt in (see
:meth:`HandRecord.check_balance`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from datasets.cards import NO_LOW, evaluate, evaluate_omaha, evaluate_omaha_low8

STREETS = ("preflop", "flop", "turn", "river")
PREFLOP, FLOP, TURN, RIVER = 0, 1, 2, 3

HOLE_CARDS = {"holdem": 2, "omaha": 4, "omaha5": 5}
LIMITS = ("no_limit", "pot_limit", "fixed_limit")

# Action line kinds.  Posts first, then player decisions.
POST_KINDS = ("ante", "small_blind", "big_blind", "dead_small_blind", "small_big_blinds")
DECISION_KINDS = ("fold", "check", "call", "bet", "raise")


# ----------------------------------------------------------------------------
# Configuration


@dataclass(slots=True)
class RakeRule:
    """Cash-game rake: ``percent_bp`` basis points of the pot (450 = 4.5 %), capped.

    ``percent_bp`` is one int, or three for 2, 3-4 and 5+ players dealt in
    (the house rules' fixed-limit table varies the percentage too).
    ``caps`` are the caps in cents for 2, 3-4 and 5+ players dealt in.
    ``rounding`` is ``'half_even'`` (the house rules: "a true percentage
    using the round half to even method") or ``'down'``.
    """

    percent_bp: int | tuple[int, int, int]
    caps: tuple[int, int, int]
    rounding: str = "half_even"
    no_flop_no_drop: bool = True

    @staticmethod
    def _bucket(n_dealt: int) -> int:
        return 0 if n_dealt <= 2 else 1 if n_dealt <= 4 else 2

    def cap_for(self, n_dealt: int) -> int:
        """The cap for a hand with ``n_dealt`` players dealt in."""
        return self.caps[self._bucket(n_dealt)]

    def percent_for(self, n_dealt: int) -> int:
        """The percentage (basis points) for a hand with ``n_dealt`` players dealt in."""
        p = self.percent_bp
        return p if isinstance(p, int) else p[self._bucket(n_dealt)]

    def rake(self, pot: int, n_dealt: int, saw_flop: bool) -> int:
        """Rake in cents of a ``pot`` (cents): percent, rounded, capped; 0 without a flop."""
        if self.no_flop_no_drop and not saw_flop:
            return 0
        q, r = divmod(pot * self.percent_for(n_dealt), 10000)
        if self.rounding == "half_even":
            if 2 * r > 10000 or (2 * r == 10000 and q & 1):
                q += 1
        return min(q, self.cap_for(n_dealt))


# The house rules' USD ring-game rake tables: (small, big) in cents -> (basis
# points, caps for 2 / 3-4 / 5+ players).  No Limit / Pot Limit (first table
# and its $5/$10-and-above continuation):
_NLPL_USD = [
    ((1, 2), 350, (30, 30, 30)),
    ((2, 5), 415, (50, 50, 100)),
    ((5, 10), 450, (50, 100, 150)),
    ((10, 25), 450, (50, 100, 200)),
    ((25, 50), 500, (75, 75, 200)),
    ((50, 100), 500, (100, 100, 250)),
    ((100, 200), 500, (125, 125, 275)),
    ((200, 400), 500, (150, 150, 300)),
    ((250, 500), 500, (150, 150, 300)),
    ((300, 600), 500, (150, 150, 350)),
    ((500, 1000), 450, (150, 150, 300)),
    ((1000, 2000), 450, (175, 175, 300)),
    ((2500, 5000), 450, (225, 200, 300)),
    ((5000, 10000), 450, (250, 300, 500)),
    ((10000, 20000), 450, (300, 500, 500)),
]
# No Limit / Pot Limit Omaha micro stakes (the table the first one excludes):
_PLO_MICRO_USD = [
    ((1, 2), 330, (30, 30, 30)),
    ((2, 5), 390, (50, 50, 100)),
    ((5, 10), 425, (50, 100, 150)),
    ((10, 25), 425, (50, 100, 200)),
]
# Fixed Limit, keyed by small bet / big bet:
_FL_USD = [
    ((2, 4), 450, (1, 1, 1)),
    ((4, 8), 450, (4, 4, 4)),
    ((10, 20), 450, (10, 10, 10)),
    ((25, 50), 450, (16, 16, 16)),
    ((50, 100), 450, (40, 40, 40)),
    ((100, 200), (200, 300, 400), (50, 70, 80)),
    ((200, 400), (200, 300, 300), (50, 70, 125)),
    ((300, 600), (200, 300, 300), (50, 200, 300)),
    ((1000, 2000), (200, 250, 250), (50, 200, 300)),
    ((1500, 3000), (200, 200, 200), (100, 200, 300)),
    ((2000, 4000), 100, (100, 200, 300)),
    ((15000, 30000), 100, (200, 500, 500)),
]


def rake_rule_for(small_blind: int, big_blind: int, limit: str = "no_limit", game: str = "holdem") -> RakeRule:
    """The house rules' USD rake rule for a stake in cents: the listed stake at or below it.

    No-limit and pot-limit games use the NL/PL table (Omaha at the micro
    stakes up to $0.10/$0.25 its own lower percentages); fixed-limit games
    the Fixed Limit table keyed by small bet / big bet (``big_blind``,
    ``2 * big_blind``).  Stakes between two rows take the lower row (e.g.
    $0.06/$0.12 is in the "$0.05/$0.10 to $0.08/$0.16" row).
    """
    if limit == "fixed_limit":
        key = 2 * big_blind
        table = _FL_USD
    else:
        key = big_blind
        table = _PLO_MICRO_USD if game != "holdem" and big_blind <= 25 else _NLPL_USD
    chosen = table[0]
    for row in table:
        if row[0][1] <= key:
            chosen = row
    return RakeRule(chosen[1], chosen[2])


@dataclass(slots=True)
class GameConfig:
    """The game dealt: ``game`` ('holdem'|'omaha'|'omaha5'), ``limit`` ('no_limit'|'pot_limit'|'fixed_limit').

    Amounts are ints in the smallest unit: cents for cash, chips for
    tournaments.  In fixed limit the small bet is ``big_blind`` and the big
    bet ``2 * big_blind``.  ``fl_cap`` counts bets a street (bet + 3 raises);
    ``fl_cap_heads_up`` applies when only two players are dealt in.
    ``currency`` is used by the writer for cash games.  ``hi_lo`` deals
    Omaha Hi/Lo (eight or better): each pot is split between the best high
    hand and the best qualifying low, the odd chip to the high half; without
    a qualifying low the high hand takes it all.
    """

    game: str = "holdem"
    limit: str = "no_limit"
    small_blind: int = 5
    big_blind: int = 10
    ante: int = 0
    rake: RakeRule | None = None
    fl_cap: int = 4
    fl_cap_heads_up: int = 6
    currency: str = "USD"
    hi_lo: bool = False

    def __post_init__(self):
        if self.game not in HOLE_CARDS:
            raise ValueError(f"unknown game {self.game!r}")
        if self.limit not in LIMITS:
            raise ValueError(f"unknown limit {self.limit!r}")
        if self.hi_lo and self.game == "holdem":
            raise ValueError("hi/lo is dealt for Omaha only")


@dataclass(slots=True)
class TournamentInfo:
    """Tournament context of a hand: ids, buy-in parts (cents), level, bounty kind.

    ``bounty`` is the per-entrant knockout part of the buy-in (None: no
    bounty tournament); ``progressive`` selects progressive knockout payouts.
    """

    tournament_id: str
    buy_in: int
    fee: int
    level: int = 1
    bounty: int | None = None
    progressive: bool = False
    currency: str = "USD"
    freeroll: bool = False


@dataclass(slots=True)
class SeatState:
    """A seat at the start of a hand.

    ``posts_dead``: missed blinds a returning cash player posts this hand:
    None, ``'bb'`` (live big blind: new player or missed big blind),
    ``'sb'`` (dead small blind) or ``'sb_bb'`` (small & big blinds: big live,
    small dead).  Ignored for the players in the blinds.  ``bounty`` in cents
    (tournaments with bounties).
    """

    seat: int
    player: str
    stack: int
    sitting_out: bool = False
    bounty: int | None = None
    posts_dead: str | None = None


@dataclass(slots=True)
class Action:
    """A policy's decision: ``kind`` in fold/check/call/bet/raise; ``amount_to`` = total street bet after a bet/raise.

    ``timed_out`` marks a decision the player did not make in time (the writer
    adds ``NAME has timed out`` before the line).  The engine corrects illegal
    choices (see the module docstring).
    """

    kind: str
    amount_to: int = 0
    timed_out: bool = False


@dataclass(slots=True)
class ActionRecord:
    """One action line: posts and decisions, numbered ``seq`` 0.. in the order written.

    ``amount`` is the chips this line added to the pot (a raise's increment
    over the player's earlier street bet, a call's amount), ``to`` the
    player's street total after a bet/raise (else the same as the street
    total), ``all_in`` whether it left the player with no chips.
    """

    seq: int
    street: int
    player: str
    kind: str
    amount: int
    to: int
    all_in: bool
    timed_out: bool = False
    raise_by: int = 0


@dataclass(slots=True)
class DecisionView:
    """What a policy sees when it must act (its own cards only, plus public state).

    Amounts are in the game's unit.  ``pot`` is every chip put in so far this
    hand (antes, blinds and this street's bets included).  ``to_call`` is
    capped by the stack.  ``min_raise_to``/``max_raise_to`` bound a bet or
    raise (street totals; the same value in fixed limit; ``min_raise_to`` may
    be an all-in below the full minimum).  ``history`` is the hand's action
    list so far (do not modify); ``len(history)`` is the ``seq`` the line of
    this decision will get (the ``action`` number of its platform
    ``decision`` event).  ``stacks`` maps every dealt-in player to their
    current stack, ``bets`` to their current street bet, ``in_hand`` lists
    the players not folded.  ``history``, ``stacks``, ``bets`` and
    ``in_hand`` are live views of the hand (the engine updates them in
    place): read them inside ``act()``, copy what you keep.
    ``facing_player`` made the last bet/raise this street (pre-flop the big
    blind until someone raises; None if none).  ``n_bets`` counts bets and
    full raises this street (pre-flop the big blind is the first).
    ``table`` is the dict passed to :func:`play_hand`, for the world.
    """

    hand_id: str
    player: str
    seat: int
    position: str
    pos_index: int
    hole: list[int]
    board: list[int]
    street: int
    pot: int
    to_call: int
    current_bet: int
    street_bet: int
    min_raise_to: int
    max_raise_to: int
    stack: int
    can_check: bool
    can_call: bool
    can_raise: bool
    n_active: int
    n_players: int
    history: list[ActionRecord]
    stacks: dict[str, int]
    bets: dict[str, int]
    in_hand: list[str]
    facing_player: str | None
    is_tournament: bool
    big_blind: int
    limit: str
    game: str
    n_bets: int
    table: dict[str, Any]


class Policy(Protocol):
    """A player's decision rule: ``act(view) -> Action``."""

    def act(self, view: DecisionView) -> Action: ...


@dataclass(slots=True)
class Pot:
    """A main (index 0) or side pot: ``amount`` before rake, ``rake`` taken from it, eligible players.

    ``winners``/``shares``: the (high) hand winners and what each got;
    ``low_winners``/``low_shares`` the low half in hi/lo games (empty when
    no low qualified).
    """

    amount: int
    eligible: list[str]
    rake: int = 0
    winners: list[str] = field(default_factory=list)
    shares: list[int] = field(default_factory=list)
    low_winners: list[str] = field(default_factory=list)
    low_shares: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Collection:
    """``player`` collected ``amount`` from pot number ``pot`` (0 = main); ``low`` for a low half."""

    player: str
    amount: int
    pot: int
    low: bool = False


@dataclass(slots=True)
class BountyAward:
    """A knockout: ``winner`` gets ``cash`` (and ``increase`` of own bounty, progressive) for ``eliminated``.

    ``split`` is the number of players sharing it; ``new_bounty`` the
    winner's bounty after the increase (progressive only).
    """

    winner: str
    eliminated: str
    cash: int
    increase: int = 0
    new_bounty: int | None = None
    split: int = 1


@dataclass(slots=True)
class Finish:
    """A tournament finish to write into the hand: ``place`` 1.., ``prize`` in cents or None."""

    player: str
    place: int
    prize: int | None = None


@dataclass(slots=True)
class SeatRecord:
    """A seat as written at the top of the hand (``stack`` = start stack)."""

    seat: int
    player: str
    stack: int
    sitting_out: bool
    bounty: int | None
    dealt_in: bool


@dataclass(slots=True)
class HandRecord:
    """Everything about one played hand, for the writer and the world.

    ``actions`` are the action lines (posts and decisions) in order; their
    ``seq`` is the 0-based ``action`` number of platform ``decision`` events.
    ``uncalled`` is ``(player, amount)`` or None (written after the last
    action).  ``pots`` are main then side pots; ``collections`` who took what
    from which pot.  ``shown`` players whose cards are shown at showdown (in
    showing order), ``mucked`` those who mucked.  ``values`` hand values of
    players at showdown.  ``put_in`` total chips each player put in (posts
    included, uncalled part included), ``final_stacks`` stacks after the hand.
    ``eliminated`` players who busted, best finisher first (more chips at the
    start first; ties by seat order from the button).  ``finishes`` and
    ``extra_lines`` are for the world to fill: ``extra_lines`` are
    ``(after_seq, text)`` written after action line ``after_seq`` (-1: before
    the first post; a large number: after the last action).
    """

    hand_id: str
    started_at: datetime
    table_name: str
    max_seats: int
    config: GameConfig
    tournament: TournamentInfo | None
    button_seat: int
    sb_seat: int | None
    bb_seat: int | None
    seats: list[SeatRecord]
    dealt: list[str]
    hole: dict[str, list[int]]
    actions: list[ActionRecord]
    board: list[int]
    streets_seen: int
    uncalled: tuple[str, int] | None
    pots: list[Pot]
    collections: list[Collection]
    rake: int
    showdown: bool
    shown: list[str]
    mucked: list[str]
    values: dict[str, int]
    low_values: dict[str, int]
    put_in: dict[str, int]
    final_stacks: dict[str, int]
    folded_street: dict[str, int]
    eliminated: list[str]
    bounty_awards: list[BountyAward]
    finishes: list[Finish] = field(default_factory=list)
    extra_lines: list[tuple[int, str]] = field(default_factory=list)

    @property
    def total_pot(self) -> int:
        """Chips in the pot after the uncalled bet was returned (rake included)."""
        return sum(p.amount for p in self.pots)

    def collected(self, player: str) -> int:
        """Total ``player`` collected from all pots."""
        return sum(c.amount for c in self.collections if c.player == player)

    def check_balance(self) -> None:
        """Raise AssertionError unless the hand balances to the chip (see module docstring)."""
        ret = self.uncalled[1] if self.uncalled else 0
        total_in = sum(self.put_in.values())
        assert total_in - ret == self.total_pot, (total_in, ret, self.total_pot)
        assert sum(c.amount for c in self.collections) + self.rake == self.total_pot
        assert sum(p.rake for p in self.pots) == self.rake
        start = {s.player: s.stack for s in self.seats}
        for p, fin in self.final_stacks.items():
            back = self.collected(p) + (ret if self.uncalled and self.uncalled[0] == p else 0)
            assert fin == start[p] - self.put_in.get(p, 0) + back, p
            assert fin >= 0
        assert sum(start[p] for p in self.final_stacks) - self.rake == sum(self.final_stacks.values())


# ----------------------------------------------------------------------------
# Playing a hand


def _position_names(n: int) -> list[str]:
    """Position labels by offset from the button: index 0 = button, 1 = SB, 2 = BB, ... CO last.

    Heads-up the button is also the small blind: ``['BTN', 'BB']``.  Between
    the big blind and the button, seats are named from the button backwards
    ``CO``, ``HJ``, ``LJ`` and the earlier ones ``UTG``, ``UTG1``, ``UTG2``
    (the same names the hand-history parser gives).
    """
    if n == 2:
        return ["BTN", "BB"]
    rest = n - 3
    tail = ["LJ", "HJ", "CO"][3 - min(rest, 3):] if rest else []
    head = ["UTG"] + [f"UTG{i}" for i in range(1, rest - 3)] if rest > 3 else []
    return ["BTN", "SB", "BB"] + head + tail


_POS_CACHE = {n: _position_names(n) for n in range(2, 11)}


class _Auto:
    """Policy used for tournament players sitting out: check if free, else fold."""

    def act(self, view: DecisionView) -> Action:
        return Action("check" if view.can_check else "fold")


_AUTO = _Auto()


def play_hand(
    config: GameConfig,
    seats: Sequence[SeatState],
    button_seat: int,
    policies: Mapping[str, Policy],
    rng: np.random.Generator,
    hand_id: str,
    started_at: datetime,
    table_name: str,
    max_seats: int,
    tournament: TournamentInfo | None = None,
    deck: Sequence[int] | None = None,
    blinds: tuple[int | None, int] | None = None,
    table: dict[str, Any] | None = None,
) -> HandRecord:
    """Play one hand and return its :class:`HandRecord` (``seats`` are not modified).

    Dealing: the deck is ``deck`` if given (a sequence of distinct card codes,
    at least enough for the hole cards plus five), else a permutation from
    ``rng``.  Hole cards go out in dealing order (first player clockwise from
    the button first), each player taking the next ``k`` cards (2 Hold'em,
    4 Omaha, 5 five-card Omaha); the board is the next five cards.
    ``blinds`` optionally fixes ``(sb_seat or None, bb_seat)`` (dead-button
    play); see the module docstring for every rule.

    One function on purpose: one hand's betting is one state machine (stacks,
    bets, the pot and its side pots, who is to act and who has acted, what a
    player may still do, the dealt cards); split into helpers, that state would
    travel through a dozen parameters or an object that only this function uses.
    """
    is_tour = tournament is not None
    # Dealt-in players in clockwise order starting left of the button.
    ms = max(max_seats, max((s.seat for s in seats), default=1))
    live = [s for s in seats if s.stack > 0 and (is_tour or not s.sitting_out)]
    live.sort(key=lambda s: (s.seat - button_seat - 1) % ms)
    n = len(live)
    if n < 2:
        raise ValueError("a hand needs at least two players dealt in")
    names = [s.player for s in live]
    seat_no = [s.seat for s in live]
    idx_of_seat = {s.seat: i for i, s in enumerate(live)}
    start = [s.stack for s in live]
    stack = list(start)
    k = HOLE_CARDS[config.game]
    if n * k + 5 > 52:
        raise ValueError(f"{n} players cannot be dealt {config.game}: {n * k} hole cards + 5 board cards > 52")
    if deck is None:
        deck = rng.permutation(52).tolist()
    else:
        deck = list(deck)
    holes = [deck[i * k:(i + 1) * k] for i in range(n)]
    board_all = deck[n * k:n * k + 5]

    # Blind positions.
    if blinds is not None:
        sb_seat, bb_seat = blinds
        sb_i = idx_of_seat.get(sb_seat) if sb_seat is not None else None
        bb_i = idx_of_seat.get(bb_seat)
        if bb_i is None:
            raise ValueError("big blind seat is not dealt in")
        if sb_i is None:
            sb_seat = None
    elif n == 2:
        btn_i = idx_of_seat.get(button_seat)
        sb_i = btn_i if btn_i is not None else 0
        bb_i = 1 - sb_i
        sb_seat, bb_seat = seat_no[sb_i], seat_no[bb_i]
    else:
        sb_i, bb_i = 0, 1
        sb_seat, bb_seat = seat_no[0], seat_no[1]

    sb_amt, bb_amt = config.small_blind, config.big_blind
    limit = config.limit
    fixed = limit == "fixed_limit"
    pot_limit = limit == "pot_limit"
    cap = config.fl_cap_heads_up if n == 2 else config.fl_cap

    bet = [0] * n          # live street bets
    put = [0] * n          # total put in this hand
    folded = [False] * n
    allin = [False] * n
    acts: list[ActionRecord] = []
    folded_street: dict[str, int] = {}
    seq = 0

    def post(i: int, kind: str, amount: int, live_part: int) -> None:
        nonlocal seq
        amt = min(amount, stack[i])
        lv = min(live_part, amt)  # a short "small & big blinds" post is live first, like readers assume
        stack[i] -= amt
        put[i] += amt
        bet[i] += lv
        if stack[i] == 0:
            allin[i] = True
        acts.append(ActionRecord(seq, PREFLOP, names[i], kind, amt, bet[i], stack[i] == 0))
        seq += 1

    if config.ante:
        for i in sorted(range(n), key=lambda j: seat_no[j]):
            post(i, "ante", config.ante, 0)
    if sb_i is not None and not allin[sb_i]:
        post(sb_i, "small_blind", sb_amt, sb_amt)
    if not allin[bb_i]:
        post(bb_i, "big_blind", bb_amt, bb_amt)
    if not is_tour and any(s.posts_dead for s in live):
        for i in sorted(range(n), key=lambda j: seat_no[j]):
            pd = live[i].posts_dead
            if not pd or i == sb_i or i == bb_i or allin[i]:
                continue
            if pd == "bb":
                post(i, "big_blind", bb_amt, bb_amt)
            elif pd == "sb":
                post(i, "dead_small_blind", sb_amt, 0)
            elif pd == "sb_bb":
                post(i, "small_big_blinds", sb_amt + bb_amt, bb_amt)

    pos_names = _POS_CACHE.get(n) or _position_names(n)
    btn_i = idx_of_seat.get(button_seat)
    if n == 2:
        pos_index = [0 if i == sb_i else 1 for i in range(n)]
    elif btn_i is not None:
        pos_index = [(i - btn_i) % n for i in range(n)]
    else:  # dead button: the last player in dealing order is still called the button
        pos_index = [(i + 1) % n for i in range(n)]
    positions = [pos_names[min(p, len(pos_names) - 1)] for p in pos_index]
    tbl = table if table is not None else {}
    pol = [(_AUTO if live[i].sitting_out else policies[names[i]]) for i in range(n)]

    board: list[int] = []
    n_in = n
    uncalled: tuple[str, int] | None = None
    streets_seen = 0
    ended_by_fold = False
    # Live views handed to policies (updated in place as the hand goes on).
    stacks_d = dict(zip(names, stack))
    bets_d = dict(zip(names, bet))
    zero_bets = dict.fromkeys(names, 0)
    in_hand = list(names)
    pot_total = sum(put)
    game = config.game

    for street in range(4):
        if street == FLOP:
            board = board_all[:3]
        elif street == TURN:
            board = board_all[:4]
        elif street == RIVER:
            board = board_all[:5]
        streets_seen = street
        can_act = [not folded[i] and not allin[i] for i in range(n)]
        n_can = sum(can_act)
        if street == PREFLOP:
            current = max(max(bet), bb_amt)
            n_bets = 1
            first = (bb_i + 1) % n
            last_aggr = names[bb_i]
        else:
            bet = [0] * n
            bets_d.update(zero_bets)
            current = 0
            n_bets = 0
            first = 0
            last_aggr = None
        min_inc = bb_amt
        unit = bb_amt if street < TURN else 2 * bb_amt
        # Betting is skipped when at most one player can act and owes nothing.
        if not (n_can == 0 or (n_can == 1 and all(bet[i] >= current for i in range(n) if can_act[i]))):
            need = list(can_act)
            acted_at = [-1] * n  # the bet level each player last acted at this street (-1: not yet)
            n_need = n_can
            i = first
            while n_need:
                if not need[i]:
                    i = (i + 1) % n
                    continue
                st = stack[i]
                bi = bet[i]
                to_call = current - bi
                if to_call > st:
                    to_call = st
                others_live = n_can - 1 > 0  # i itself can act (need implies can_act)
                if to_call == 0 and not others_live:
                    # everyone else is all-in or folded: nothing left to decide
                    need[i] = False
                    n_need -= 1
                    i = (i + 1) % n
                    continue
                lv = acted_at[i]
                can_raise = (lv < 0 or current - lv >= (unit if fixed else min_inc)) and st > to_call and others_live
                all_in_to = bi + st
                if fixed:
                    if n_bets >= cap:
                        can_raise = False
                    mn = current + unit
                    if mn > all_in_to:
                        mn = all_in_to
                    mx = mn
                else:
                    mn = current + min_inc if current else bb_amt
                    if pot_limit:
                        mx = current + pot_total + (current - bi) if current else pot_total
                        if mx < mn:
                            mx = mn
                        if mx > all_in_to:
                            mx = all_in_to
                    else:
                        mx = all_in_to
                    if mn > all_in_to:
                        mn = all_in_to
                name = names[i]
                a = pol[i].act(DecisionView(
                    hand_id, name, seat_no[i], positions[i], pos_index[i], holes[i], board, street,
                    pot_total, to_call, current, bi, mn, mx, st, to_call == 0, to_call > 0,
                    can_raise, n_in, n, acts, stacks_d, bets_d, in_hand, last_aggr,
                    is_tour, bb_amt, limit, game, n_bets, tbl,
                ))
                kind = a.kind
                # --- correct illegal choices
                if kind == "check":
                    if to_call > 0:
                        kind = "fold"
                elif kind == "call":
                    if to_call == 0:
                        kind = "check"
                elif kind == "bet" or kind == "raise":
                    if not can_raise:
                        kind = "call" if to_call > 0 else "check"
                elif kind != "fold":
                    kind = "fold" if to_call > 0 else "check"
                need[i] = False
                n_need -= 1
                if kind == "fold":
                    folded[i] = True
                    can_act[i] = False
                    n_can -= 1
                    n_in -= 1
                    in_hand.remove(name)
                    folded_street[name] = street
                    acts.append(ActionRecord(seq, street, name, "fold", 0, bi, False, a.timed_out))
                    seq += 1
                    if n_in == 1:
                        ended_by_fold = True
                        break
                elif kind == "check":
                    acted_at[i] = current
                    acts.append(ActionRecord(seq, street, name, "check", 0, bi, False, a.timed_out))
                    seq += 1
                else:
                    if kind == "call":
                        add = to_call
                        to = bi + add
                    else:
                        to = a.amount_to
                        if type(to) is not int:
                            try:
                                to = int(to)
                            except (TypeError, ValueError, OverflowError):
                                to = mn
                        if fixed or to < mn:
                            to = mn
                        elif to > mx:
                            to = mx
                        add = to - bi
                        if add >= st:
                            add = st
                            to = all_in_to
                        if to <= current:
                            kind = "call"  # an all-in that does not exceed the bet
                    st -= add
                    stack[i] = st
                    stacks_d[name] = st
                    put[i] += add
                    pot_total += add
                    bet[i] = to
                    bets_d[name] = to
                    ai = st == 0
                    if ai:
                        allin[i] = True
                        can_act[i] = False
                        n_can -= 1
                    if kind == "call":
                        acts.append(ActionRecord(seq, street, name, "call", add, to, ai, a.timed_out))
                        seq += 1
                    else:
                        inc = to - current
                        full = inc >= (unit if fixed else min_inc)
                        acts.append(ActionRecord(seq, street, name, "raise" if current else "bet", add, to, ai,
                                                 a.timed_out, inc))
                        seq += 1
                        current = to
                        last_aggr = name
                        if full:
                            n_bets += 1
                            if not fixed:
                                min_inc = inc
                        n_need = 0
                        for j in range(n):
                            if can_act[j] and j != i:
                                need[j] = True
                                n_need += 1
                    acted_at[i] = current
                i = (i + 1) % n
        if ended_by_fold:
            break
        if street == RIVER:
            break
        if n_can <= 1:
            # all-in: run the board out without more betting
            board = board_all[:5]
            streets_seen = RIVER
            break

    # --- uncalled bet: the largest street bet above everyone else's
    top_bet = max(bet)
    top = bet.index(top_bet)
    second = max(bet[:top] + bet[top + 1:], default=0)
    if bet[top] > second:
        back = bet[top] - second
        stack[top] += back
        uncalled = (names[top], back)
        # contributions count after return for pots
    contrib = list(put)
    if uncalled:
        contrib[top] -= uncalled[1]

    saw_flop = streets_seen >= FLOP and len(board) >= 3

    # --- pots
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
            break
        level = min(remaining[j] for j in live_left)
        amount = 0
        for j in range(n):
            take = remaining[j] if remaining[j] < level else level
            amount += take
            remaining[j] -= take
        pots.append(Pot(amount, [names[j] for j in live_left]))
    total = sum(p.amount for p in pots)

    # --- rake
    rake = 0
    if config.rake is not None and not is_tour:
        rake = config.rake.rake(total, n, saw_flop)
        if rake:
            given = 0
            for p in pots:
                p.rake = rake * p.amount // total
                given += p.rake
            pots[0].rake += rake - given

    # --- settle
    values: dict[str, int] = {}
    low_values: dict[str, int] = {}
    collections: list[Collection] = []
    shown: list[str] = []
    mucked: list[str] = []
    showdown = not ended_by_fold
    idx_of_name = {names[j]: j for j in range(n)}
    if not showdown:
        w = next(j for j in range(n) if not folded[j])
        for pi, p in enumerate(pots):
            net = p.amount - p.rake
            p.winners = [names[w]]
            p.shares = [net]
            if net:
                collections.append(Collection(names[w], net, pi))
            stack[w] += net
    else:
        contenders = [j for j in range(n) if not folded[j]]
        if config.game == "holdem":
            for j in contenders:
                values[names[j]] = evaluate(holes[j] + board)
        else:
            for j in contenders:
                values[names[j]] = evaluate_omaha(holes[j], board)
        hi_lo = config.hi_lo
        if hi_lo:
            for j in contenders:
                low_values[names[j]] = evaluate_omaha_low8(holes[j], board)
        for pi, p in enumerate(pots):
            net = p.amount - p.rake
            low_net = 0
            has_low = False
            if hi_lo:
                low_best = max(low_values[q] for q in p.eligible)
                if low_best != NO_LOW:
                    has_low = True
                    low_net = net // 2  # the odd chip goes to the high half
            high_net = net - low_net
            best = max(values[q] for q in p.eligible)
            winners = [q for q in p.eligible if values[q] == best]
            winners.sort(key=lambda q: idx_of_name[q])  # clockwise from the button
            share, odd = divmod(high_net, len(winners))
            p.winners = winners
            p.shares = [share + (1 if wi < odd else 0) for wi in range(len(winners))]
            for q, amt in zip(winners, p.shares):
                if amt:
                    collections.append(Collection(q, amt, pi))
                stack[idx_of_name[q]] += amt
            if has_low:
                lw = [q for q in p.eligible if low_values[q] == low_best]
                lw.sort(key=lambda q: idx_of_name[q])
                share, odd = divmod(low_net, len(lw))
                p.low_winners = lw
                p.low_shares = [share + (1 if wi < odd else 0) for wi in range(len(lw))]
                for q, amt in zip(lw, p.low_shares):
                    if amt:
                        collections.append(Collection(q, amt, pi, True))
                    stack[idx_of_name[q]] += amt
        # showing order: last aggressor on the last betting street, else first left of the button
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
            s0 = idx_of_name[last_street_aggr]
            order.sort(key=lambda j: (j - s0) % n)
        best_shown = -1
        for j in order:
            v = values[names[j]]
            if (any_allin or v >= best_shown or config.hi_lo
                    or any(names[j] in p.winners for p in pots)):
                shown.append(names[j])
                if v > best_shown:
                    best_shown = v
            else:
                mucked.append(names[j])

    # --- eliminations and bounties
    eliminated: list[str] = []
    awards: list[BountyAward] = []
    if is_tour:
        busted = [j for j in range(n) if stack[j] == 0]
        busted.sort(key=lambda j: (-start[j], j))
        eliminated = [names[j] for j in busted]
        bounty_now = {names[j]: live[j].bounty for j in range(n)}
        for j in busted:
            b = live[j].bounty
            if not b:
                continue
            rel = None
            for pi, p in enumerate(pots):
                if names[j] in p.eligible:
                    rel = pi
            if rel is None:
                # folded with chips all in: the main pot's winners knocked them out
                rel = 0
            winners = [q for q in pots[rel].winners if q != names[j]] or [
                c.player for c in collections if c.player != names[j]
            ][:1]
            if not winners:
                continue
            m = len(winners)
            if tournament.progressive:
                cash_total = b - b // 2
                inc_total = b // 2
            else:
                cash_total, inc_total = b, 0
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

    return HandRecord(
        hand_id=hand_id,
        started_at=started_at,
        table_name=table_name,
        max_seats=max_seats,
        config=config,
        tournament=tournament,
        button_seat=button_seat,
        sb_seat=sb_seat,
        bb_seat=bb_seat,
        seats=[SeatRecord(s.seat, s.player, s.stack, s.sitting_out, s.bounty, s.player in idx_of_name)
               for s in sorted(seats, key=lambda s: s.seat)],
        dealt=names,
        hole=dict(zip(names, holes)),
        actions=acts,
        board=board,
        streets_seen=streets_seen,
        uncalled=uncalled,
        pots=pots,
        collections=collections,
        rake=rake,
        showdown=showdown,
        shown=shown,
        mucked=mucked,
        values=values,
        low_values=low_values,
        put_in=dict(zip(names, put)),
        final_stacks=dict(zip(names, stack)),
        folded_street=folded_street,
        eliminated=eliminated,
        bounty_awards=awards,
    )


def _benchmark(n_hands: int = 20000) -> None:
    """Print hands/s of play_hand + write_hand with a trivial random policy (CPU time of this process)."""
    import random
    import time
    from datetime import timezone

    from datasets.hhwriter import write_hand

    class _Random:
        def __init__(self, seed: int):
            self.r = random.Random(seed)

        def act(self, v: DecisionView) -> Action:
            x = self.r.random()
            if x < 0.3:
                return Action("fold")
            if x < 0.8:
                return Action("call" if v.to_call else "check")
            return Action("raise", v.min_raise_to + int(self.r.random() * (v.max_raise_to - v.min_raise_to) * 0.3))

    for game, limit, n in [("holdem", "no_limit", 6), ("holdem", "no_limit", 9), ("holdem", "no_limit", 2),
                           ("omaha", "pot_limit", 6), ("holdem", "fixed_limit", 9)]:
        rng = np.random.default_rng(0)
        pol = _Random(1)
        cfg = GameConfig(game, limit, 5, 10, 0, rake_rule_for(5, 10, limit))
        seats = [SeatState(i + 1, f"player{i}", 1000 + 37 * i) for i in range(n)]
        pols = {s.player: pol for s in seats}
        t = datetime(2026, 3, 4, tzinfo=timezone.utc)
        play_s = write_s = 0.0
        for h in range(n_hands):
            a = time.process_time()
            rec = play_hand(cfg, seats, 1 + h % n, pols, rng, str(h), t, "Juno", 9)
            b = time.process_time()
            write_hand(rec)
            c = time.process_time()
            play_s += b - a
            write_s += c - b
        tot = play_s + write_s
        print(f"{game:7s} {limit:12s} {n} players: {n_hands / tot:7.0f} hands/s   "
              f"play_hand {play_s / n_hands * 1e6:6.1f} us   write_hand {write_s / n_hands * 1e6:6.1f} us")


if __name__ == "__main__":
    import sys

    _benchmark(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
