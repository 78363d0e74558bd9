"""Text that leaves railbird for a spreadsheet or a terminal, made harmless.

Player names, table names, chat and query results are attacker-controlled.
Two places read them with a side channel:

* a spreadsheet opening a CSV runs a cell that starts with ``=``, ``+``,
  ``-``, ``@``, TAB or CR as a formula (CSV injection; OWASP, "CSV
  Injection", https://owasp.org/www-community/attacks/CSV_Injection):
  :func:`csv_cell` prefixes such a text cell with a single quote, the
  OWASP remedy, so it is shown as text; quoting and embedded quotes are
  left to the ``csv`` module's writer.
* a terminal obeys escape sequences (ECMA-48: CSI ``ESC [`` … final byte,
  OSC ``ESC ]`` … BEL/ST, and the other ``ESC`` forms, plus the 8-bit C1
  introducers) and C0/C1 control characters: :func:`terminal_safe` drops
  whole escape sequences and replaces every other control character (and
  the Unicode line separators and bidirectional overrides that can
  reorder what is shown) by ``?``.

Both functions take any value and return a string (or the value itself,
for :func:`csv_cell` on non-text cells).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["CSV_FORMULA_STARTS", "csv_cell", "csv_row", "terminal_safe"]

#: First characters that make a spreadsheet read a cell as a formula (OWASP).
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# ECMA-48 escape sequences, 7-bit and 8-bit forms:
#   CSI: ESC [ or 0x9B, parameter bytes 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E
#   OSC/DCS/SOS/PM/APC: ESC ] P X ^ _ or 0x9D 0x90 0x98 0x9E 0x9F, up to BEL or ST (ESC \ or 0x9C)
#     (an unterminated one runs to the end of the text: a terminal would swallow the rest too)
#   other: ESC, intermediates 0x20-0x2F, one final byte 0x30-0x7E
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x9c\x1b]*(?:\x07|\x9c|\x1b\\|$)"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
# C0 (but TAB/LF when kept), DEL, C1; Unicode line/paragraph separators; bidi embeddings, overrides, isolates
_CONTROLS = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"


def terminal_safe(value: Any, *, keep: str = "", width: int | None = None) -> str:
    """``str(value)`` with no way to drive a terminal.

    Parameters
    ----------
    value:
        Anything; ``None`` becomes the empty string.
    keep:
        Control characters to leave alone, e.g. ``"\\n"`` for multi-line text
        (only TAB and LF make sense here).
    width:
        If given, the result is cut to at most this many characters, the
        last one an ellipsis when cut.

    Returns
    -------
    The text with escape sequences removed whole and every other control
    character (C0, DEL, C1, U+2028/2029, bidirectional marks, embeddings,
    overrides and isolates) replaced by ``?``.
    """
    text = "" if value is None else str(value)
    text = _ESCAPES.sub("", text)
    pattern = _control_pattern(keep)
    text = pattern.sub("?", text)
    if width is not None and len(text) > width:
        text = text[: max(width - 1, 0)] + "…" if width > 0 else ""
    return text


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _control_pattern(keep: str) -> re.Pattern[str]:
    """The character class of controls to replace, less those in ``keep`` (cached)."""
    pat = _PATTERNS.get(keep)
    if pat is None:
        excluded = "".join(re.escape(ch) for ch in sorted(set(keep)))
        cls = f"[{_CONTROLS}]" if not excluded else f"(?![{excluded}])[{_CONTROLS}]"
        pat = _PATTERNS[keep] = re.compile(cls)
    return pat


def csv_cell(value: Any) -> Any:
    """One CSV cell that a spreadsheet shows as text, never runs as a formula.

    A string starting with ``=``, ``+``, ``-``, ``@``, TAB or CR gets a
    leading single quote (OWASP's remedy; the ``csv`` writer then quotes
    the cell as needed). Numbers, dates, booleans and ``None`` are returned
    unchanged: the writer prints them as literals, which no spreadsheet
    evaluates (``-3`` stays a number).
    """
    if isinstance(value, str) and value.startswith(CSV_FORMULA_STARTS):
        return "'" + value
    return value


def csv_row(values: Iterable[Any]) -> list[Any]:
    """:func:`csv_cell` over a row, for ``csv.writer(...).writerow(csv_row(row))``."""
    return [csv_cell(v) for v in values]
