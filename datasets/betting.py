"""One hand's betting: who is dealt in, the posts, and each street's decisions under the limit's rules.

:func:`datasets.engine.play_hand` builds a :class:`BettingState` from the seats,
posts the antes and blinds with :func:`post_blinds` and bets every street with
:func:`bet_street`; the rules themselves (minimum raises, short all-ins that do
not reopen the betting, pot-limit and fixed-limit caps, illegal choices
corrected) are listed in :mod:`datasets.engine`'s docstring.

The state is plain lists indexed by dealing order (first player clockwise from
the button first); ``stacks``, ``bets``, ``in_hand`` and the action list are
the live views every :class:`~datasets.records.DecisionView` hands a policy.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from datasets.records import (
    PREFLOP,
    TURN,
    Action,
    ActionRecord,
    DecisionView,
    GameConfig,
    Policy,
    SeatState,
)


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


def blind_indices(
    blinds: tuple[int | None, int] | None, seat_no: list[int], button_seat: int,
) -> tuple[int | None, int, int | None, int]:
    """The small and big blind of a hand: ``(sb_i, bb_i, sb_seat, bb_seat)``.

    ``seat_no`` lists the dealt-in seats in dealing order.  ``blinds`` fixes
    ``(sb_seat or None, bb_seat)`` (dead-button play); without it the first two
    players after the button post, and heads-up the button posts the small
    blind.  ``sb_i`` / ``sb_seat`` are None when no small blind is posted.
    """
    idx_of_seat = {s: i for i, s in enumerate(seat_no)}
    if blinds is not None:
        sb_seat, bb_seat = blinds
        sb_i = idx_of_seat.get(sb_seat) if sb_seat is not None else None
        bb_i = idx_of_seat.get(bb_seat)
        if bb_i is None:
            raise ValueError("big blind seat is not dealt in")
        if sb_i is None:
            sb_seat = None
        return sb_i, bb_i, sb_seat, bb_seat
    if len(seat_no) == 2:
        btn_i = idx_of_seat.get(button_seat)
        sb_i = btn_i if btn_i is not None else 0
        bb_i = 1 - sb_i
        return sb_i, bb_i, seat_no[sb_i], seat_no[bb_i]
    return 0, 1, seat_no[0], seat_no[1]


class BettingState:
    """The chips, flags and action lines of one hand while it is bet.

    Parameters
    ----------
    live : the dealt-in seats in dealing order.
    config : the game (blinds, limit, caps).
    policies : a policy per player name (players sitting out get the engine's check-or-fold).
    hand_id, holes, tournament, table : passed on to every decision view.
    sb_i, bb_i : the blinds' indices in ``live`` (``sb_i`` None: no small blind).
    positions, pos_index : each player's position label and offset from the button.
    """

    __slots__ = ("n", "hand_id", "names", "seat_no", "holes", "stack", "bet", "put", "folded", "allin", "acts",
                 "folded_street", "n_in", "sb_i", "bb_i", "positions", "pos_index", "pol", "is_tour", "table",
                 "bb_amt", "limit", "game", "fixed", "pot_limit", "cap", "stacks_d", "bets_d", "in_hand", "pot_total")

    def __init__(self, live: Sequence[SeatState], config: GameConfig, policies: Mapping[str, Policy],
                 hand_id: str, holes: list[list[int]], is_tour: bool, table: dict[str, Any],
                 sb_i: int | None, bb_i: int, positions: list[str], pos_index: list[int]):
        n = len(live)
        self.n = n
        self.hand_id = hand_id
        self.names = [s.player for s in live]
        self.seat_no = [s.seat for s in live]
        self.holes = holes
        self.stack = [s.stack for s in live]
        self.bet = [0] * n          # live street bets
        self.put = [0] * n          # total put in this hand
        self.folded = [False] * n
        self.allin = [False] * n
        self.acts: list[ActionRecord] = []
        self.folded_street: dict[str, int] = {}
        self.n_in = n
        self.sb_i, self.bb_i = sb_i, bb_i
        self.positions, self.pos_index = positions, pos_index
        self.pol = [(_AUTO if live[i].sitting_out else policies[self.names[i]]) for i in range(n)]
        self.is_tour = is_tour
        self.table = table
        self.bb_amt = config.big_blind
        self.limit = config.limit
        self.game = config.game
        self.fixed = config.limit == "fixed_limit"
        self.pot_limit = config.limit == "pot_limit"
        self.cap = config.fl_cap_heads_up if n == 2 else config.fl_cap
        self.stacks_d: dict[str, int] = {}
        self.bets_d: dict[str, int] = {}
        self.in_hand = list(self.names)
        self.pot_total = 0

    def post(self, i: int, kind: str, amount: int, live_part: int) -> None:
        """Post ``amount`` (capped by the stack) for player ``i``; ``live_part`` of it counts as a street bet."""
        amt = min(amount, self.stack[i])
        lv = min(live_part, amt)  # a short "small & big blinds" post is live first, like readers assume
        self.stack[i] -= amt
        self.put[i] += amt
        self.bet[i] += lv
        if self.stack[i] == 0:
            self.allin[i] = True
        self.record(PREFLOP, i, kind, amt, self.bet[i], self.stack[i] == 0)

    def record(self, street: int, i: int, kind: str, amount: int, to: int, all_in: bool,
               timed_out: bool = False, raise_by: int = 0) -> None:
        """Append player ``i``'s action line; its sequence number is the lines before it."""
        self.acts.append(ActionRecord(len(self.acts), street, self.names[i], kind, amount, to, all_in, timed_out,
                                      raise_by))

    def fold(self, i: int, street: int, timed_out: bool) -> None:
        """Player ``i`` folds on ``street``."""
        name = self.names[i]
        self.folded[i] = True
        self.n_in -= 1
        self.in_hand.remove(name)
        self.folded_street[name] = street
        self.record(street, i, "fold", 0, self.bet[i], False, timed_out)

    def put_chips(self, i: int, add: int, to: int) -> bool:
        """Player ``i`` adds ``add`` chips, making their street bet ``to``; True when that leaves them all-in."""
        name = self.names[i]
        st = self.stack[i] - add
        self.stack[i] = st
        self.stacks_d[name] = st
        self.put[i] += add
        self.pot_total += add
        self.bet[i] = to
        self.bets_d[name] = to
        if st == 0:
            self.allin[i] = True
            return True
        return False

    def start_views(self) -> None:
        """Fill the live views the policies read once the posts are in."""
        self.stacks_d.update(zip(self.names, self.stack))
        self.bets_d.update(zip(self.names, self.bet))
        self.pot_total = sum(self.put)


def post_blinds(h: BettingState, config: GameConfig, live: Sequence[SeatState]) -> None:
    """Post antes (by seat order), the small and big blind, then returning cash players' missed blinds."""
    n = h.n
    by_seat = sorted(range(n), key=lambda j: h.seat_no[j])
    if config.ante:
        for i in by_seat:
            h.post(i, "ante", config.ante, 0)
    sb_i, bb_i = h.sb_i, h.bb_i
    sb_amt, bb_amt = config.small_blind, config.big_blind
    if sb_i is not None and not h.allin[sb_i]:
        h.post(sb_i, "small_blind", sb_amt, sb_amt)
    if not h.allin[bb_i]:
        h.post(bb_i, "big_blind", bb_amt, bb_amt)
    if not h.is_tour and any(s.posts_dead for s in live):
        for i in by_seat:
            pd = live[i].posts_dead
            if not pd or i == sb_i or i == bb_i or h.allin[i]:
                continue
            if pd == "bb":
                h.post(i, "big_blind", bb_amt, bb_amt)
            elif pd == "sb":
                h.post(i, "dead_small_blind", sb_amt, 0)
            elif pd == "sb_bb":
                h.post(i, "small_big_blinds", sb_amt + bb_amt, bb_amt)


def positions_of(n: int, sb_i: int | None, btn_i: int | None) -> tuple[list[str], list[int]]:
    """Each dealt-in player's position label and offset from the button (dead button: the last player dealt)."""
    pos_names = _POS_CACHE.get(n) or _position_names(n)
    if n == 2:
        pos_index = [0 if i == sb_i else 1 for i in range(n)]
    elif btn_i is not None:
        pos_index = [(i - btn_i) % n for i in range(n)]
    else:  # dead button: the last player in dealing order is still called the button
        pos_index = [(i + 1) % n for i in range(n)]
    return [pos_names[min(p, len(pos_names) - 1)] for p in pos_index], pos_index


def raise_bounds(h: BettingState, current: int, bi: int, st: int, min_inc: int, unit: int) -> tuple[int, int]:
    """The smallest and largest street total player with street bet ``bi`` and stack ``st`` may bet or raise to."""
    all_in_to = bi + st
    if h.fixed:
        mn = current + unit
        return (all_in_to, all_in_to) if mn > all_in_to else (mn, mn)
    mn = current + min_inc if current else h.bb_amt
    if h.pot_limit:
        mx = current + h.pot_total + (current - bi) if current else h.pot_total
        if mx < mn:
            mx = mn
        if mx > all_in_to:
            mx = all_in_to
    else:
        mx = all_in_to
    if mn > all_in_to:
        mn = all_in_to
    return mn, mx


def legal_kind(kind: str, to_call: int, can_raise: bool) -> str:
    """A policy's choice corrected to a legal one (check facing a bet folds; bet/raise when closed calls)."""
    if kind == "check":
        return "fold" if to_call > 0 else kind
    if kind == "call":
        return "check" if to_call == 0 else kind
    if kind == "bet" or kind == "raise":
        if not can_raise:
            return "call" if to_call > 0 else "check"
        return kind
    if kind != "fold":
        return "fold" if to_call > 0 else "check"
    return kind


def chips_of(a: Action, kind: str, to_call: int, bi: int, st: int, mn: int, mx: int, fixed: bool,
             current: int) -> tuple[str, int, int]:
    """``(kind, chips added, street total)`` of a call, bet or raise, the amount clamped into ``[mn, mx]``.

    A bet or raise that cannot exceed the current bet (an all-in for less) becomes a call.
    """
    if kind == "call":
        return kind, to_call, bi + to_call
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
        to = bi + st
    if to <= current:
        kind = "call"  # an all-in that does not exceed the bet
    return kind, add, to


def bet_street(h: BettingState, street: int, board: list[int]) -> tuple[bool, int]:
    """Bet one street; returns ``(ended by folds, players still able to act)``."""
    n, names, stack, folded, allin = h.n, h.names, h.stack, h.folded, h.allin
    can_act = [not folded[i] and not allin[i] for i in range(n)]
    n_can = sum(can_act)
    if street == PREFLOP:
        current, n_bets, first, last_aggr = max(max(h.bet), h.bb_amt), 1, (h.bb_i + 1) % n, names[h.bb_i]
    else:
        h.bet = [0] * n
        h.bets_d.update(dict.fromkeys(names, 0))
        current, n_bets, first, last_aggr = 0, 0, 0, None
    bet, fixed, pol, acts, stacks_d, bets_d, in_hand = h.bet, h.fixed, h.pol, h.acts, h.stacks_d, h.bets_d, h.in_hand
    hand_id, seat_no, positions, pos_index, holes, bb_amt = h.hand_id, h.seat_no, h.positions, h.pos_index, h.holes, h.bb_amt
    min_inc = bb_amt
    unit = bb_amt if street < TURN else 2 * bb_amt
    # Betting is skipped when at most one player can act and owes nothing.
    if n_can == 0 or (n_can == 1 and all(bet[i] >= current for i in range(n) if can_act[i])):
        return False, n_can
    need = list(can_act)
    acted_at = [-1] * n  # the bet level each player last acted at this street (-1: not yet)
    n_need = n_can
    i = first
    while n_need:
        if not need[i]:
            i = (i + 1) % n
            continue
        st, bi = stack[i], bet[i]
        to_call = current - bi
        if to_call > st:
            to_call = st
        others_live = n_can > 1  # i itself can act (need implies can_act)
        need[i] = False
        n_need -= 1
        if to_call == 0 and not others_live:  # everyone else is all-in or folded: nothing left to decide
            i = (i + 1) % n
            continue
        lv = acted_at[i]
        can_raise = (lv < 0 or current - lv >= (unit if fixed else min_inc)) and st > to_call and others_live
        if fixed and n_bets >= h.cap:
            can_raise = False
        mn, mx = raise_bounds(h, current, bi, st, min_inc, unit)
        a = pol[i].act(DecisionView(
            hand_id, names[i], seat_no[i], positions[i], pos_index[i], holes[i], board, street,
            h.pot_total, to_call, current, bi, mn, mx, st, to_call == 0, to_call > 0,
            can_raise, h.n_in, n, acts, stacks_d, bets_d, in_hand, last_aggr,
            h.is_tour, bb_amt, h.limit, h.game, n_bets, h.table,
        ))
        kind = legal_kind(a.kind, to_call, can_raise)
        if kind == "fold":
            h.fold(i, street, a.timed_out)
            can_act[i] = False
            n_can -= 1
            if h.n_in == 1:
                return True, n_can
        elif kind == "check":
            acted_at[i] = current
            acts.append(ActionRecord(len(acts), street, names[i], "check", 0, bi, False, a.timed_out))
        else:
            kind, add, to = chips_of(a, kind, to_call, bi, st, mn, mx, fixed, current)
            ai = h.put_chips(i, add, to)
            if ai:
                can_act[i] = False
                n_can -= 1
            if kind == "call":
                acts.append(ActionRecord(len(acts), street, names[i], "call", add, to, ai, a.timed_out))
            else:
                inc = to - current
                acts.append(ActionRecord(len(acts), street, names[i], "raise" if current else "bet", add, to, ai,
                                         a.timed_out, inc))
                current, last_aggr = to, names[i]
                if inc >= (unit if fixed else min_inc):  # a full bet or raise reopens the betting
                    n_bets += 1
                    if not fixed:
                        min_inc = inc
                need = [can_act[j] and j != i for j in range(n)]
                n_need = sum(need)
            acted_at[i] = current
        i = (i + 1) % n
    return False, n_can
