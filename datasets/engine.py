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
:meth:`~datasets.records.HandRecord.check_balance`).

The hand's data (configuration, seats, decisions, the record) lives in
:mod:`datasets.records`, the rake tables in :mod:`datasets.rake`; the
betting in :mod:`datasets.betting` and the settlement in :mod:`datasets.settle`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Sequence

import numpy as np

from datasets.betting import BettingState, bet_street, blind_indices, positions_of, post_blinds
from datasets.records import (
    FLOP,
    HOLE_CARDS,
    RIVER,
    Action,
    DecisionView,
    GameConfig,
    HandRecord,
    Policy,
    SeatRecord,
    SeatState,
    TournamentInfo,
)
from datasets.settle import award_pots, knockouts, layer_pots, return_uncalled, showing_order, take_rake


def _deal(config: GameConfig, n: int, rng: np.random.Generator,
          deck: Sequence[int] | None) -> tuple[list[list[int]], list[int]]:
    """Each dealt-in player's hole cards (in dealing order) and the five board cards."""
    k = HOLE_CARDS[config.game]
    if n * k + 5 > 52:
        raise ValueError(f"{n} players cannot be dealt {config.game}: {n * k} hole cards + 5 board cards > 52")
    deck = rng.permutation(52).tolist() if deck is None else list(deck)
    return [deck[i * k:(i + 1) * k] for i in range(n)], deck[n * k:n * k + 5]


def _bet_streets(h: BettingState, board_all: list[int]) -> tuple[list[int], int, bool]:
    """Bet street by street until one player is left, the river is bet, or the rest are all-in.

    Returns ``(board, streets_seen, ended_by_fold)``; an all-in runs the board out.
    """
    board: list[int] = []
    for street in range(4):
        if street >= FLOP:
            board = board_all[:street + 2]
        ended_by_fold, n_can = bet_street(h, street, board)
        if ended_by_fold:
            return board, street, True
        if street == RIVER:
            return board, street, False
        if n_can <= 1:
            return board_all[:5], RIVER, False
    raise AssertionError("unreachable")


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
    """Play one hand and return its :class:`~datasets.records.HandRecord` (``seats`` are not modified).

    Dealing: the deck is ``deck`` if given (a sequence of distinct card codes,
    at least enough for the hole cards plus five), else a permutation from
    ``rng``.  Hole cards go out in dealing order (first player clockwise from
    the button first), each player taking the next ``k`` cards (2 Hold'em,
    4 Omaha, 5 five-card Omaha); the board is the next five cards.
    ``blinds`` optionally fixes ``(sb_seat or None, bb_seat)`` (dead-button
    play); see the module docstring for every rule.  ``policies`` maps each
    player to the :class:`~datasets.records.Policy` asked for their decisions;
    ``table`` is handed to every decision view, for the world.
    """
    is_tour = tournament is not None
    # Dealt-in players in clockwise order starting left of the button.
    ms = max(max_seats, max((s.seat for s in seats), default=1))
    live = [s for s in seats if s.stack > 0 and (is_tour or not s.sitting_out)]
    live.sort(key=lambda s: (s.seat - button_seat - 1) % ms)
    n = len(live)
    if n < 2:
        raise ValueError("a hand needs at least two players dealt in")
    holes, board_all = _deal(config, n, rng, deck)
    seat_no = [s.seat for s in live]
    sb_i, bb_i, sb_seat, bb_seat = blind_indices(blinds, seat_no, button_seat)
    btn_i = seat_no.index(button_seat) if button_seat in seat_no else None
    positions, pos_index = positions_of(n, sb_i, btn_i)
    h = BettingState(live, config, policies, hand_id, holes, is_tour, table if table is not None else {},
                     sb_i, bb_i, positions, pos_index)
    post_blinds(h, config, live)
    h.start_views()
    board, streets_seen, ended_by_fold = _bet_streets(h, board_all)

    names, stack = h.names, h.stack
    uncalled, contrib = return_uncalled(names, h.bet, h.put, stack)
    pots = layer_pots(names, contrib, h.folded)
    rake = take_rake(config, pots, n, streets_seen >= FLOP and len(board) >= 3, is_tour)
    showdown = not ended_by_fold
    values, low_values, collections = award_pots(config, pots, names, h.folded, holes, board, stack, showdown)
    shown: list[str] = []
    mucked: list[str] = []
    if showdown:
        shown, mucked = showing_order(config, names, h.folded, h.allin, h.acts, streets_seen, pots, values)
    eliminated, awards = knockouts(tournament, live, [s.stack for s in live], stack, pots, collections) \
        if is_tour else ([], [])
    dealt = set(names)
    return HandRecord(
        hand_id=hand_id, started_at=started_at, table_name=table_name, max_seats=max_seats, config=config,
        tournament=tournament, button_seat=button_seat, sb_seat=sb_seat, bb_seat=bb_seat,
        seats=[SeatRecord(s.seat, s.player, s.stack, s.sitting_out, s.bounty, s.player in dealt)
               for s in sorted(seats, key=lambda s: s.seat)],
        dealt=names, hole=dict(zip(names, holes)), actions=h.acts, board=board, streets_seen=streets_seen,
        uncalled=uncalled, pots=pots, collections=collections, rake=rake, showdown=showdown, shown=shown,
        mucked=mucked, values=values, low_values=low_values, put_in=dict(zip(names, h.put)),
        final_stacks=dict(zip(names, stack)), folded_street=h.folded_street, eliminated=eliminated,
        bounty_awards=awards,
    )


def _benchmark(n_hands: int = 20000) -> None:
    """Print hands/s of play_hand + write_hand with a trivial random policy (CPU time of this process)."""
    import random
    import time
    from datetime import timezone

    from datasets.hhwriter import write_hand
    from datasets.rake import rake_rule_for

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
