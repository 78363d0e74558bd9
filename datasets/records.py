"""The synthetic world's hand data: what a hand is dealt with, what a policy sees, what a played hand records.

:class:`GameConfig`, :class:`TournamentInfo` and :class:`SeatState` go into
:func:`datasets.engine.play_hand`; a :class:`Policy` answers each
:class:`DecisionView` with an :class:`Action`; the hand comes back as a
:class:`HandRecord` (its action lines, pots, collections and knockouts) that
:mod:`datasets.hhwriter` writes as PokerStars text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from datasets.rake import RakeRule

STREETS = ("preflop", "flop", "turn", "river")
PREFLOP, FLOP, TURN, RIVER = 0, 1, 2, 3

HOLE_CARDS = {"holdem": 2, "omaha": 4, "omaha5": 5}
LIMITS = ("no_limit", "pot_limit", "fixed_limit")

# Action line kinds.  Posts first, then player decisions.
POST_KINDS = ("ante", "small_blind", "big_blind", "dead_small_blind", "small_big_blinds")
DECISION_KINDS = ("fold", "check", "call", "bet", "raise")


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
