"""PokerStars hand-history text from a :class:`datasets.records.HandRecord`.

:func:`write_hand` renders one hand in the text format the PokerStars client
writes (the modern layout without trailing spaces, e.g.
``PokerStars Hand #247946884164: Tournament #3688115389, ...``), line for line
as in the real files under ``shared/corpora/pokerstars``:

* header: cash ``PokerStars Hand #<id>:  Hold'em No Limit ($0.05/$0.10 USD) -
  2026/03/04 16:15:20 ET`` (two spaces after the colon, as the client writes);
  Omaha Hi/Lo is ``Omaha Hi/Lo Pot Limit`` with ``(HI: ..; LO: 8,6,4,3,A)``
  descriptions and one ``collected`` line per half, high first;
  tournaments ``PokerStars Hand #<id>: Tournament #<tid>, $10+$1 USD Hold'em No
  Limit - Level II (15/30) - ...`` with ``$5+$5+$1`` for bounty events and
  ``Freeroll`` for freerolls.  Fixed-limit stakes are written as small bet /
  big bet (``Hold'em Limit ($0.10/$0.20 USD)`` for 0.05/0.10 blinds).
  Time is US Eastern (``America/New_York``, daylight saving included), hours
  without a leading zero like the client (``2009/11/25 6:21:05 ET``).
* ``Table 'name' 9-max Seat #3 is the button``; seat lines with stacks,
  ``, $5 bounty`` in bounty tournaments, `` is sitting out``.
* posts, ``*** HOLE CARDS ***``, ``Dealt to`` lines (operator view: every
  player dealt in, in dealing order; player view: only the hero), actions,
  street headers, ``Uncalled bet (X) returned to NAME``, ``*** SHOW DOWN ***``
  with ``shows [..] (description)`` / ``mucks hand``, ``collected X from
  pot`` / ``main pot`` / ``side pot`` / ``side pot-N``, bounty lines
  (``wins the $X bounty for eliminating``; progressive ``wins $X for
  eliminating .. and their own bounty increases by $Y to $Z``, ``for
  splitting the elimination of`` when tied winners share it), finish lines, ``*** SUMMARY ***`` with ``Total pot X Main pot Y. Side pot-1 Z. |
  Rake R``, ``Board [..]`` and one summary line per player dealt in.

Money is written like the client: ``$0.05``, ``$1``, ``$10.50`` (whole
amounts without cents) for stakes, stacks, pots and bounties; tournament
prizes always with cents (``received $40.00.``); tournament chips as
integers.
"""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from datasets.cards import _CARD_STR, NO_LOW, describe, describe_low
from datasets.records import FLOP, PREFLOP, RIVER, TURN, HandRecord

ET = ZoneInfo("America/New_York")
CURRENCY_SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}
GAME_NAME = {"holdem": "Hold'em", "omaha": "Omaha", "omaha5": "5 Card Omaha"}
LIMIT_NAME = {"no_limit": "No Limit", "pot_limit": "Pot Limit", "fixed_limit": "Limit"}
STREET_WORD = {PREFLOP: "before Flop", FLOP: "on the Flop", TURN: "on the Turn", RIVER: "on the River"}

_ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def roman(n: int) -> str:
    """Roman numeral of a positive level number (``2 -> 'II'``)."""
    out = []
    for v, s in _ROMAN:
        while n >= v:
            out.append(s)
            n -= v
    return "".join(out)


def ordinal(n: int) -> str:
    """``1 -> '1st'``, ``2 -> '2nd'``, ``11 -> '11th'``, ``23 -> '23rd'``."""
    if 10 <= n % 100 <= 20:
        suf = "th"
    else:
        suf = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suf}"


def money(cents: int, symbol: str = "$") -> str:
    """Cash amount as the client writes it: ``$0.05``, ``$1``, ``$10.50``."""
    if cents % 100 == 0:
        return f"{symbol}{cents // 100}"
    neg = "-" if cents < 0 else ""
    c = abs(cents)
    return f"{neg}{symbol}{c // 100}.{c % 100:02d}"


def prize(cents: int, symbol: str = "$") -> str:
    """A tournament prize as the client writes it, always with cents: ``$40.00``, ``$141.51``."""
    return f"{symbol}{cents // 100}.{cents % 100:02d}"


def et_time(ts: datetime) -> str:
    """``2026/03/04 16:15:20 ET`` for an instant (naive datetimes are taken as UTC)."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    t = ts.astimezone(ET)
    return f"{t.year}/{t.month:02d}/{t.day:02d} {t.hour}:{t.minute:02d}:{t.second:02d} ET"


_MONEY_CACHE: dict[str, dict[int, str]] = {}


def _cards(cs) -> str:
    return " ".join([_CARD_STR[c] for c in cs])


def write_hand(record: HandRecord, *, view: str = "operator", hero: str | None = None) -> str:
    """The PokerStars text of one hand (lines joined by ``\\n``, no trailing blank line).

    ``view='operator'`` writes a ``Dealt to`` line for every player dealt in
    (the room's export); ``view='player'`` only the ``hero``'s (default: the
    first player dealt in) and shows other players' cards only when shown at
    showdown. The sections in order: header and seats, the betting
    (:func:`_write_betting`), showdown, bounties and finishes
    (:func:`_write_results`), summary (:func:`_write_summary`).
    """
    sym, amt = _money_format(record)
    out: list[str] = []
    _write_header(record, sym, amt, out)
    _write_betting(record, amt, view, hero, out)
    desc_of = _hand_describer(record)
    _write_results(record, sym, amt, desc_of, out)
    _write_summary(record, amt, view, hero, desc_of, out)
    return "\n".join(out)


def _money_format(r: HandRecord):
    """The currency symbol of the hand and its amount formatter: money in a cash game (cached per
    symbol), chips (``str``) in a tournament."""
    tour = r.tournament
    if tour is not None:
        return CURRENCY_SYMBOL.get(tour.currency, "$"), str
    sym = CURRENCY_SYMBOL.get(r.config.currency, "$")
    cache = _MONEY_CACHE.get(sym)
    if cache is None:
        cache = _MONEY_CACHE[sym] = {}

    def amt(x: int) -> str:
        t = cache.get(x)
        if t is None:
            t = cache[x] = money(x, sym)
        return t
    return sym, amt


def _write_header(r: HandRecord, sym: str, amt, out: list[str]) -> None:
    """Append the hand line (game, stakes or tournament and level, time), the table line and the seats."""
    cfg = r.config
    tour = r.tournament
    game = f"{GAME_NAME[cfg.game]}{' Hi/Lo' if cfg.hi_lo else ''} {LIMIT_NAME[cfg.limit]}"
    if cfg.limit == "fixed_limit":
        lo, hi = cfg.big_blind, 2 * cfg.big_blind
    else:
        lo, hi = cfg.small_blind, cfg.big_blind
    when = et_time(r.started_at)
    if tour is None:
        out.append(f"PokerStars Hand #{r.hand_id}:  {game} ({amt(lo)}/{amt(hi)} {cfg.currency}) - {when}")
    else:
        if tour.freeroll:
            buy = "Freeroll "
        else:
            parts = [tour.buy_in] + ([tour.bounty] if tour.bounty is not None else []) + [tour.fee]
            buy = "+".join(money(p, sym) for p in parts) + f" {tour.currency}"
        out.append(f"PokerStars Hand #{r.hand_id}: Tournament #{tour.tournament_id}, {buy} {game} - "
                   f"Level {roman(tour.level)} ({lo}/{hi}) - {when}")
    out.append(f"Table '{r.table_name}' {r.max_seats}-max Seat #{r.button_seat} is the button")
    for s in r.seats:
        if tour is not None and s.bounty is not None:
            line = f"Seat {s.seat}: {s.player} ({amt(s.stack)} in chips, {money(s.bounty, sym)} bounty)"
        else:
            line = f"Seat {s.seat}: {s.player} ({amt(s.stack)} in chips)"
        if s.sitting_out:
            line += " is sitting out"
        out.append(line)


def _write_betting(r: HandRecord, amt, view: str, hero: str | None, out: list[str]) -> None:
    """Append the posts, the hole cards (as ``view`` sees them), the actions street by street with the
    table lines (``extra_lines``) after the action they follow, the uncalled bet and the streets dealt
    after the last action (all-in run-outs)."""
    extra: dict[int, list[str]] = {}
    if r.extra_lines:
        last = len(r.actions) - 1
        for after, text in r.extra_lines:
            extra.setdefault(min(after, last), []).append(text)
        out.extend(extra.pop(-1, []))
    acts = r.actions
    n_posts = 0
    for a in acts:
        if a.kind in _POST_TEXT:
            n_posts += 1
        else:
            break
    for a in acts[:n_posts]:
        line = f"{a.player}: {_POST_TEXT[a.kind]} {amt(a.amount)}"
        if a.all_in:
            line += " and is all-in"
        out.append(line)
        if extra and a.seq in extra:
            out.extend(extra.pop(a.seq))
    out.append("*** HOLE CARDS ***")
    hole = r.hole
    if view == "operator":
        for p in r.dealt:
            out.append(f"Dealt to {p} [{_cards(hole[p])}]")
    else:
        h = hero if hero is not None else r.dealt[0]
        if h in hole:
            out.append(f"Dealt to {h} [{_cards(hole[h])}]")
    board = r.board
    street = PREFLOP
    for a in acts[n_posts:]:
        if a.street != street:
            street = a.street
            out.append(_street_line(street, board))
        if a.timed_out:
            out.append(f"{a.player} has timed out")
        out.append(_action_line(a, amt))
        if extra and a.seq in extra:
            out.extend(extra.pop(a.seq))
    for lines in extra.values():
        out.extend(lines)
    if r.uncalled:
        out.append(f"Uncalled bet ({amt(r.uncalled[1])}) returned to {r.uncalled[0]}")
    last_street = {0: PREFLOP, 3: FLOP, 4: TURN, 5: RIVER}[len(board)]
    while street < last_street:
        street += 1
        out.append(_street_line(street, board))


def _action_line(a, amt) -> str:
    """The line of one action after the posts (fold, check, call, bet or raise; all-in marked)."""
    k = a.kind
    if k == "fold":
        line = f"{a.player}: folds"
    elif k == "check":
        line = f"{a.player}: checks"
    elif k == "call":
        line = f"{a.player}: calls {amt(a.amount)}"
    elif k == "bet":
        line = f"{a.player}: bets {amt(a.amount)}"
    else:
        line = f"{a.player}: raises {amt(a.raise_by)} to {amt(a.to)}"
    if a.all_in:
        line += " and is all-in"
    return line


def _pot_name(pots: list, i: int) -> str:
    """How the text names pot ``i``: "pot" alone, else "main pot", "side pot" or "side pot-i"."""
    if len(pots) <= 1:
        return "pot"
    if i == 0:
        return "main pot"
    return "side pot" if len(pots) == 2 else f"side pot-{i}"


def _hand_describer(r: HandRecord):
    """A function naming a player's shown hand (high, and low in a hi/lo game)."""
    values = r.values
    if r.config.hi_lo:
        lows = r.low_values

        def desc_of(p: str) -> str:
            lo = lows.get(p, NO_LOW)
            if lo == NO_LOW:
                return f"HI: {describe(values[p])}"
            return f"HI: {describe(values[p])}; LO: {describe_low(lo)}"
    else:
        def desc_of(p: str) -> str:
            return describe(values[p])
    return desc_of


def _write_results(r: HandRecord, sym: str, amt, desc_of, out: list[str]) -> None:
    """Append the showdown (shown and mucked hands) or the collections, the bounties won and the finishes."""
    pots = r.pots
    hole = r.hole
    if r.showdown:
        out.append("*** SHOW DOWN ***")
        for p in r.shown:
            out.append(f"{p}: shows [{_cards(hole[p])}] ({desc_of(p)})")
        for p in r.mucked:
            out.append(f"{p}: mucks hand")
        for c in sorted(r.collections, key=lambda c: -c.pot):
            out.append(f"{c.player} collected {amt(c.amount)} from {_pot_name(pots, c.pot)}")
    else:
        for c in r.collections:
            out.append(f"{c.player} collected {amt(c.amount)} from {_pot_name(pots, c.pot)}")
    if r.bounty_awards:
        for b in r.bounty_awards:
            if b.new_bounty is not None:
                how = "splitting the elimination of" if b.split > 1 else "eliminating"
                out.append(f"{b.winner} wins {money(b.cash, sym)} for {how} {b.eliminated} and their own "
                           f"bounty increases by {money(b.increase, sym)} to {money(b.new_bounty, sym)}")
            else:
                out.append(f"{b.winner} wins the {money(b.cash, sym)} bounty for eliminating {b.eliminated}")
    for f in r.finishes:
        if f.place == 1:
            if f.prize:
                out.append(f"{f.player} wins the tournament and receives {prize(f.prize, sym)} - congratulations!")
            else:
                out.append(f"{f.player} wins the tournament")
        elif f.prize:
            out.append(f"{f.player} finished the tournament in {ordinal(f.place)} place and received "
                       f"{prize(f.prize, sym)}.")
        else:
            out.append(f"{f.player} finished the tournament in {ordinal(f.place)} place")


def _write_summary(r: HandRecord, amt, view: str, hero: str | None, desc_of, out: list[str]) -> None:
    """Append the summary: total pot, side pots and rake, the board, and one line per seat dealt in
    (blinds and button, when it folded, what it collected, showed or mucked)."""
    pots = r.pots
    hole = r.hole
    out.append("*** SUMMARY ***")
    total = sum(p.amount for p in pots)
    if len(pots) > 1:
        parts = [f"Main pot {amt(pots[0].amount - pots[0].rake)}."]
        if len(pots) == 2:
            parts.append(f"Side pot {amt(pots[1].amount - pots[1].rake)}.")
        else:
            parts.extend(f"Side pot-{i} {amt(p.amount - p.rake)}." for i, p in enumerate(pots) if i)
        out.append(f"Total pot {amt(total)} {' '.join(parts)} | Rake {amt(r.rake)}")
    else:
        out.append(f"Total pot {amt(total)} | Rake {amt(r.rake)}")
    if r.board:
        out.append(f"Board [{_cards(r.board)}]")
    won: dict[str, int] = {}
    for c in r.collections:
        won[c.player] = won.get(c.player, 0) + c.amount
    shown = set(r.shown)
    voluntary = set()
    for a in r.actions:
        if a.kind != "ante" and a.kind != "fold" and a.kind != "check":
            voluntary.add(a.player)
    hero_p = hero if hero is not None else (r.dealt[0] if r.dealt else None)
    for s in r.seats:
        if not s.dealt_in:
            continue
        p = s.player
        label = ""
        if s.seat == r.button_seat:
            label += " (button)"
        if s.seat == r.sb_seat:
            label += " (small blind)"
        elif s.seat == r.bb_seat:
            label += " (big blind)"
        fs = r.folded_street.get(p)
        if fs is not None:
            tail = f"folded {STREET_WORD[fs]}"
            if fs == PREFLOP and p not in voluntary:
                tail += " (didn't bet)"
        elif not r.showdown:
            tail = f"collected ({amt(won.get(p, 0))})"
        elif p in shown:
            desc = desc_of(p)
            if p in won:
                tail = f"showed [{_cards(hole[p])}] and won ({amt(won[p])}) with {desc}"
            else:
                tail = f"showed [{_cards(hole[p])}] and lost with {desc}"
        else:
            if view == "operator" or p == hero_p:
                tail = f"mucked [{_cards(hole[p])}]"
            else:
                tail = "mucked"
        out.append(f"Seat {s.seat}: {p}{label} {tail}")


_POST_TEXT = {
    "ante": "posts the ante",
    "small_blind": "posts small blind",
    "big_blind": "posts big blind",
    "dead_small_blind": "posts dead blind",
    "small_big_blinds": "posts small & big blinds",
}


def _street_line(street: int, board) -> str:
    if street == FLOP:
        return f"*** FLOP *** [{_cards(board[:3])}]"
    if street == TURN:
        return f"*** TURN *** [{_cards(board[:3])}] [{_CARD_STR[board[3]]}]"
    return f"*** RIVER *** [{_cards(board[:4])}] [{_CARD_STR[board[4]]}]"


def write_hands(records, *, view: str = "operator", hero: str | None = None) -> str:
    """Several hands as one file's text: hands separated by two blank lines, ending with a newline."""
    return "\n\n\n".join(write_hand(r, view=view, hero=hero) for r in records) + "\n"
