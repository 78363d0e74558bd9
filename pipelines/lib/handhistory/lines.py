"""Line grammar of the PokerStars text format, as vectorised Polars expressions.

Every pattern here is applied to whole columns of lines (``str.contains``,
``str.extract_groups``), never line by line in Python. Line classes are first
told apart with cheap literal prefix/suffix tests, and the full regular
expression of a class is only run on the lines of that class.

Names are attacker-controlled and may contain ``': '``, ``' said, '``,
brackets, quotes or unicode, so patterns that start with a name are anchored at
both ends and the name they extract is afterwards checked against the seat list
of the same hand (see ``names.py``).
"""
from __future__ import annotations

import re

import polars as pl

# A hand header: any PokerStars header naming a hand ("Hand", "Zoom Hand",
# "Game", "Home Game Hand"), in any case (PokerTracker 2 exports write "POKERSTARS GAME #").
HEADER_RE = r"^(?i:PokerStars (?:[A-Za-z]+ )*?(?:Hand|Game)) #\d+"

# An amount as written: optional currency prefix ("$", "€", "Rs. "), digits
# with separators, optional currency suffix ("€" on decimal-comma clients).
AMT = r"(?:Rs\. ?)?[^\s\d()\[\]]{0,3}\d[\d.,]*(?: ?[€$£₹])?"

# --- classes of lines within a hand (all anchored) ---------------------------------
SEAT_RE = (
    r"^Seat (\d+): (.+) \(([^()]*?) in chips(?:, ([^()]*?) bounty)?\)(.*)$"
)
# Capture-free: a seat line with one pair of brackets (most of them). With one
# " in chips" as well (tested apart), SEAT_RE matches it in exactly one way.
PLAIN_SEAT_RE = r"^Seat [0-9]+: [^()]+ \([^()]* in chips(?:, [^()]* bounty)?\)[^()]*$"
TABLE_RE = r"^Table '(.*)'(?: (\d+)-max)?(.*?)(?: Seat #(\d+) is the button)?$"
MARKER_RE = r"^\*\*\* ?(.+?) ?\*\*\*"
# "NAME: verb..." lines (actions and showdown); the name is greedy, the verb list
# closed, the tail validated separately.
VERB_RE = (
    r"^(.+): (posts small & big blinds|posts small blind|posts big blind|posts the ante|"
    r"posts ante|posts straddle|posts button blind|posts dead blind|folds|checks|calls|bets|raises|"
    r"shows|mucks hand|mucks|doesn't show hand|doesn't show|sits out|is sitting out|"
    r"discards|stands pat|draws|brings in|brings|bring-in)(.*)$"
)
VERBS = [
    "posts small & big blinds", "posts small blind", "posts big blind", "posts the ante", "posts ante",
    "posts straddle", "posts button blind", "posts dead blind", "folds", "checks", "calls", "bets", "raises",
    "shows", "mucks hand", "mucks", "doesn't show hand", "doesn't show", "sits out", "is sitting out",
    "discards", "stands pat", "draws", "brings in", "brings", "bring-in",
]
# Leftmost ": <verb>" followed by a space or the end: removing it leaves the name.
VERB_SUFFIX_RE = r": (?:" + "|".join(re.escape(v) for v in VERBS) + r")(?: .*)?$"
VERB_PREFIX_RE = r"^(" + "|".join(re.escape(v) for v in VERBS) + r")"
# A verb at the start followed by a space or the end: the rest of a line after
# ": " that VERB_SUFFIX_RE would match right there.
VERB_AT_START_RE = r"^(?:" + "|".join(re.escape(v) for v in VERBS) + r")(?: |$)"
# (" (disconnect)": a converted file's note on a fold or check the client made for a disconnected player)
TAIL_SUFFIX_RE = r"(?: and is all-in| and has reached the \S+ cap)?(?: \[[^\]]*\])?(?: \(disconnect(?:ed)?\))?$"
ACTION_TAIL_RE = (
    r"^(?: (" + AMT + r"))?(?: to (" + AMT + r"))?"
    r"( and is all-in| and has reached the \S+ cap)?(?: \[[^\]]*\])?(?: \(disconnect(?:ed)?\))?$"
)
# The tails most action lines have ("", " $1.50", " $1 to $3", "... and is all-in"):
# every tail this matches also matches ACTION_TAIL_RE.
PLAIN_ACTION_TAIL_RE = (
    r"^(?: [$€£]?[0-9]+(?:\.[0-9]+)?(?: to [$€£]?[0-9]+(?:\.[0-9]+)?)?)?(?: and is all-in)?$"
)
DEALT_RE = r"^Dealt to (.+?) \[([^\]]*)\](?: \[([^\]]*)\])?$"
UNCALLED_RE = r"^Uncalled bet \((" + AMT + r")\) returned to (.+)$"
COLLECTED_RE = (
    r"^(.+) collected (" + AMT + r") from (?:(main pot)|side pot(?:-(\d+))?|pot)$"
)
CASHOUT_RE = (
    r"^(.+) cashed out the hand for (" + AMT + r")(?: \| Cash Out Fee (" + AMT + r"))?$"
)
CHAT_RE = r'^(.+?) said, "(.*)"$'
FINISH_RE = (
    r"^(.+) finished the tournament in (\d+)(?:st|nd|rd|th) place"
    r"(?: and received (.+?))?\.?$"
)
WINS_TOURNEY_RE = (
    r"^(.+) wins the tournament and receives (" + AMT + r") - congratulations!$"
)
BOUNTY_RE = (
    r"^(.+) wins (?:the )?(" + AMT + r")(?: bounty)? for (?:splitting the elimination of|eliminating) "
    r"(.+?)(?: and their own bounty increases by (" + AMT + r") to (" + AMT + r"))?$"
)
TOTAL_RE = r"^Total pot (" + AMT + r")(.*?)(?:\s*\|\s*Rake (" + AMT + r"))?(.*)$"
SPLIT_BOUNTY_RE = r"^(.+) split the (" + AMT + r") bounty for eliminating (.+)$"
BOARD_RE = r"^(?:(FIRST|SECOND) )?Board \[([^\]]*)\]$"

# Table events: (regex with the name as group 1 and optional detail as group 2, event)
EVENT_PATTERNS: list[tuple[str, str]] = [
    (r"^(.+) has timed out while (?:being )?disconnected$", "timed_out_disconnected"),
    (r"^(.+) has timed out$", "timed_out"),
    (r"^(.+) is disconnected$", "disconnected"),
    (r"^(.+) is connected$", "connected"),
    (r"^(.+) has returned$", "returned"),
    (r"^(.+) joins the table at seat #(\d+)$", "joins"),
    (r"^(.+) leaves the table$", "leaves"),
    (r"^(.+) is sitting out$", "sitting_out"),
    (r"^(.+): (?:sits out|is sitting out)$", "sitting_out"),
    (r"^(.+) will be allowed to play after the button$", "other"),
    (r"^(.+) was removed from the table for failing to post$", "other"),
    (r"^(.+) re-buys and receives (.+)$", "other"),
    (r"^(.+) takes the add-on and receives (.+)$", "other"),
    (r"^(.+) has been disconnected and will be removed", "disconnected"),
    (r"^(.+) is feeling (.+)$", "other"),
    # a converted file's top-up between hands: chips added to the stack, not to any pot (read for a seated name only)
    (DEPOSIT_RE := r"^(.+): (Table deposit " + AMT + r")$", "other"),
]
# Lines carrying no player and no money that may appear inside a hand.
NEUTRAL_RE = (
    r"^(?:Hand was run twice|Hand was run three times|No low hand qualified|Betting is capped|"
    r"Pair on board - a double bet is allowed|Board was run twice|"
    r"The hand was run twice|Dealing .*)$"
)
CANCELLED_RE = r"(?i)^hand cancelled$|hand was cancelled|^Hand canceled$"
# a line saying cards were dealt: a deal marker (Hold'em/Omaha, draw, stud) or a player's cards
DEALT_MARK_RE = r"^\*\*\* (?:HOLE CARDS|DEALING HANDS|3rd STREET) \*\*\*|^Dealt to "


# Amounts as almost all lines write them: an optional currency sign, digits, an
# optional decimal point. For these the general cleaning below only drops the sign.
_PLAIN_AMOUNT = r"^[$€£]?[0-9]+(?:\.[0-9]+)?$"


# The largest amount read, in cents (about 11 billion units): a written amount above it reads as null, so the line
# holding it is unparsed and its hand quarantined. Running sums of a hand's amounts stay far inside Int64, and the
# group-wise running maximum of frames.py (which adds group offsets of this size) cannot carry a hand into the next.
MAX_CENTS = (1 << 40) - 1


def _in_range(cents: pl.Series) -> pl.Series:
    return cents.set(cents > MAX_CENTS, None) if cents.len() else cents


def _money_series(s: pl.Series) -> pl.Series:
    s = s.cast(pl.String)
    # (an amount written with more than ~30 characters is out of range anyway, and would overflow the decimal cast)
    s = s.set(s.str.len_bytes() > 30, None) if s.len() else s
    # (no amount a room writes is negative: "$-5" is null, never read as 5)
    s = s.set(s.str.contains("-", literal=True), None) if s.len() else s
    plain = s.str.contains(_PLAIN_AMOUNT)
    n_other = s.len() - s.null_count() - int(plain.sum())
    if n_other == 0:
        return _in_range((s.str.strip_chars_start("$€£").str.to_decimal(scale=2) * 100).cast(pl.Int64, strict=False))
    if n_other * 4 < s.len():
        # clean only the other ones (thousands separators, decimal commas, "Rs. ")
        other = (~plain).fill_null(False).arg_true()
        cleaned = _money_clean(s.gather(other))
        s = s.str.strip_chars_start("$€£").scatter(other, cleaned)
    else:
        s = _money_clean(s)
    return _in_range((s.str.to_decimal(scale=2) * 100).cast(pl.Int64, strict=False))


def _money_clean(s: pl.Series) -> pl.Series:
    s = s.str.replace_all(r"[^\d.,]", "").str.strip_chars(".,")
    comma_decimal = s.str.contains(r"^\d[\d.]*,\d{1,2}$").fill_null(False)
    if comma_decimal.any():
        s = pl.select(
            pl.when(comma_decimal)
            .then(s.str.replace_all(".", "", literal=True).str.replace(",", ".", literal=True))
            .otherwise(s.str.replace_all(",", "", literal=True))
        ).to_series()
    else:
        s = s.str.replace_all(",", "", literal=True)
    return s.set(s == "", None) if s.len() else s


def money_cents(expr: pl.Expr) -> pl.Expr:
    """An amount string ("$1,234.50", "€0,25", "1500", "Rs. 100") to Int64 cents.

    Everything but digits and separators is dropped; a comma is a decimal
    comma when it is the last separator and is followed by one or two digits
    ("0,25", "1.234,50"), otherwise commas group thousands; the result is
    read as a decimal with two places; an amount above :data:`MAX_CENTS`, or holding a minus sign, reads as null. Evaluated once per column (Series
    operations, no per-row Python). Null in, null out.
    """
    return expr.map_batches(_money_series, return_dtype=pl.Int64)


def cents_to_decimal(expr: pl.Expr) -> pl.Expr:
    """Int64 cents to DECIMAL(18,2), exactly."""
    return (expr.cast(pl.Decimal(18, 2)) / 100).cast(pl.Decimal(18, 2))
