"""PokerStars text layout for world B's hands: header, seats, showdown, summary.

Follows the layout of the real hand histories in ``shared/corpora/pokerstars``
(the 2019-2023 client): ``PokerStars Hand #..`` headers with the time in ET,
``Seat N: name (stack in chips[, $B bounty])``, ``*** SHOW DOWN ***`` with
``shows``/``mucks hand``, ``collected X from pot|main pot|side pot[-N]`` and
the ``*** SUMMARY ***`` block. The room's operator view is written: a
``Dealt to`` line for every player dealt in.
"""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from . import cards as C

ET = ZoneInfo("America/New_York")
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV",
         "XVI", "XVII", "XVIII", "XIX", "XX", "XXI", "XXII", "XXIII", "XXIV", "XXV", "XXVI", "XXVII",
         "XXVIII", "XXIX", "XXX"]
STREET_NAMES = ("Flop", "Turn", "River")


def money(cents: int) -> str:
    """Cents as PokerStars writes dollars: ``$2``, ``$0.09``, ``$1.26``."""
    d, c = divmod(int(cents), 100)
    return f"${d}" if c == 0 else f"${d}.{c:02d}"


def chips(n: int) -> str:
    """Tournament chips: a plain integer."""
    return str(int(n))


def et_stamp(ts: float) -> str:
    """Unix seconds as the header's ``2026/03/04 16:15:20 ET`` (US Eastern, DST-aware)."""
    t = datetime.fromtimestamp(ts, timezone.utc).astimezone(ET)
    return f"{t:%Y/%m/%d} {t.hour}:{t:%M:%S} ET"


def iso_utc(ts: float) -> str:
    """Unix seconds as ISO-8601 UTC with milliseconds and ``Z``."""
    t = datetime.fromtimestamp(ts, timezone.utc)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z"


def cash_header(hid: int, sb: int, bb: int, ts: float, table: str, size: int, button_seat: int) -> list:
    """The two header lines of a cash hand."""
    return [f"PokerStars Hand #{hid}:  Hold'em No Limit ({money(sb)}/{money(bb)} USD) - {et_stamp(ts)}",
            f"Table '{table}' {size}-max Seat #{button_seat} is the button"]


def tour_header(hid: int, tid: int, buyin: str, level: int, sb: int, bb: int, ts: float, table_no: int,
                size: int, button_seat: int) -> list:
    """The two header lines of a tournament hand (``buyin`` like ``$10+$10+$2``)."""
    return [f"PokerStars Hand #{hid}: Tournament #{tid}, {buyin} USD Hold'em No Limit - "
            f"Level {ROMAN[min(level, len(ROMAN) - 1)]} ({sb}/{bb}) - {et_stamp(ts)}",
            f"Table '{tid} {table_no}' {size}-max Seat #{button_seat} is the button"]


def seat_line(seat: int, name: str, stack: str, bounty: int | None = None, sitting: bool = False) -> str:
    """``Seat 3: amy (3420 in chips, $1.50 bounty) is sitting out``."""
    b = f", {money(bounty)} bounty" if bounty is not None else ""
    return f"Seat {seat}: {name} ({stack} in chips{b})" + (" is sitting out" if sitting else "")


CHAT = ("nh", "gl all", "ty", "lol", "unlucky 😂", 'he said "all in" and meant it', "C:\\poker\\hands",
        "ok: fine", "<b>gg</b>", "fold pre 🙈", "wp", "sick river...", "100% bluff", "why!!", "brb")


def with_chat(rng, lines: list, names: list) -> list:
    """The body with one table chat line (``NAME said, "..."``) after a random action, now and then."""
    if rng.random() >= 0.025:
        return lines
    try:
        first = lines.index("*** HOLE CARDS ***") + len(names) + 1
    except ValueError:
        return lines
    at = rng.randint(first, len(lines))
    return lines[:at] + [f'{rng.choice(names)} said, "{rng.choice(CHAT)}"'] + lines[at:]


def showdown(g, act, scores) -> dict:
    """Write ``*** SHOW DOWN ***`` and the shows/mucks; returns {index: score or None if mucked}."""
    g.lines.append("*** SHOW DOWN ***")
    n = g.n
    start = g.aggressor if g.aggressor in act else (g.button + 1) % n
    order = sorted(act, key=lambda i: (i - start) % n)
    any_allin = any(g.allin[i] for i in act)
    best, shown = -1, {}
    for i in order:
        s = scores[i]
        if any_allin or s >= best or not shown:
            g.lines.append(f"{g.names[i]}: shows [{C.cards_str(g.hole[i])}] ({C.describe(s)})")
            shown[i] = s
            best = max(best, s)
        else:
            g.lines.append(f"{g.names[i]}: mucks hand")
            shown[i] = None
    return shown


def _pos(g, i, sbi, bbi) -> str:
    out = " (button)" if i == g.button else ""
    if i == sbi:
        out += " (small blind)"
    if i == bbi:
        out += " (big blind)"
    return out


def summary_lines(g, pots, rk, won, shown, sbi, bbi) -> list:
    """The ``*** SUMMARY ***`` block: totals, pots, rake, board and one line per seat."""
    fmt = g.fmt
    total = sum(g.total)
    if len(pots) <= 1:
        head = f"Total pot {fmt(total)} | Rake {fmt(rk)}"
    elif len(pots) == 2:
        head = f"Total pot {fmt(total)} Main pot {fmt(pots[0][0])}. Side pot {fmt(pots[1][0])}. | Rake {fmt(rk)}"
    else:
        sides = " ".join(f"Side pot-{k} {fmt(p[0])}." for k, p in enumerate(pots[1:], 1))
        head = f"Total pot {fmt(total)} Main pot {fmt(pots[0][0])}. {sides} | Rake {fmt(rk)}"
    out = ["*** SUMMARY ***", head]
    if g.board:
        out.append(f"Board [{C.cards_str(g.board)}]")
    seats = g.ctx["seats"]
    for i in range(g.n):
        who = f"Seat {seats[i]}: {g.names[i]}{_pos(g, i, sbi, bbi)}"
        if g.folded[i]:
            s = g.fold_street[i]
            if s == 0:
                quiet = not g.voluntary[i] and i not in (sbi, bbi)
                out.append(f"{who} folded before Flop" + (" (didn't bet)" if quiet else ""))
            else:
                out.append(f"{who} folded on the {STREET_NAMES[s - 1]}")
        elif i in shown:
            sc = shown[i]
            if sc is None:
                out.append(f"{who} mucked [{C.cards_str(g.hole[i])}]")
            elif won[i] > 0:
                out.append(f"{who} showed [{C.cards_str(g.hole[i])}] and won ({fmt(won[i])}) with {C.describe(sc)}")
            else:
                out.append(f"{who} showed [{C.cards_str(g.hole[i])}] and lost with {C.describe(sc)}")
        else:
            out.append(f"{who} collected ({fmt(won[i])})")
    return out
