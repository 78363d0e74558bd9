"""Decoding hand-history bytes into text.

Method: look at byte-order marks first (UTF-16 LE/BE, UTF-8, and the doubled
UTF-8 BOM some exporters write when they re-save a file), then try strict
UTF-8; if that fails, decide between UTF-8 with a few damaged bytes and
Windows-1252: a file that is mostly valid UTF-8 multi-byte sequences is decoded
as UTF-8 with replacement characters (an invalid byte in a player name must not
lose the hand), otherwise as Windows-1252 (old European clients); a leading UTF-8
byte-order mark is dropped before either, so it never reads as ``ï»¿``. BOM/zero-width
characters left at the start of a line are stripped, and ``\\r\\n`` and a lone
``\\r`` both become ``\\n``.
"""
from __future__ import annotations

import codecs
import os
import re

_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")


def _looks_utf16(data: bytes) -> str | None:
    """Guess BOM-less UTF-16 from the pattern of zero bytes in the first KB."""
    head = data[:1024]
    if len(head) < 4:
        return None
    even_zero = head[0::2].count(0)
    odd_zero = head[1::2].count(0)
    half = len(head) // 2
    if odd_zero > 0.4 * half and even_zero < 0.05 * half:
        return "utf-16-le"
    if even_zero > 0.4 * half and odd_zero < 0.05 * half:
        return "utf-16-be"
    return None


def utf16_encoding(head: bytes) -> tuple[str, int] | None:
    """The UTF-16 codec of a file whose first bytes are ``head`` and the length of its byte-order mark:
    ``("utf-16-le", 2)``, ``("utf-16-be", 2)``, a BOM-less guess from the zero bytes of the first KB
    (:func:`_looks_utf16`) with 0, or ``None`` (not UTF-16). A UTF-32 LE mark is not UTF-16."""
    if head.startswith(codecs.BOM_UTF16_LE) and not head.startswith(codecs.BOM_UTF32_LE):
        return "utf-16-le", 2
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    guess = _looks_utf16(head)
    return (guess, 0) if guess else None


def decode_bytes(data: bytes) -> str:
    """Decode the bytes of a hand-history file to text with ``\\n`` line ends.

    Never raises on content: undecodable bytes become U+FFFD.
    """
    wide = utf16_encoding(data[:1024])
    if wide:
        text = data[wide[1]:].decode(wide[0], errors="replace")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            # a UTF-8 byte-order mark (or several) on a file with damaged bytes: not content in any decoding
            while data.startswith(codecs.BOM_UTF8):
                data = data[len(codecs.BOM_UTF8):]
            good = len(_UTF8_MULTIBYTE.findall(data))
            high = len(_HIGH_BYTE.findall(data))
            # Each valid multibyte sequence holds >= 2 high bytes; if most of
            # the high bytes are explained by UTF-8 sequences, keep UTF-8.
            if good and good * 2 >= 0.6 * high:
                text = data.decode("utf-8", errors="replace")
            else:
                text = data.decode("cp1252", errors="replace")
    return clean_text(text)


def clean_text(text: str) -> str:
    """Decoded text as the parser reads it: ``\\r\\n`` and a lone ``\\r`` become ``\\n``, byte-order marks
    (possibly doubled, possibly mid-file where files were concatenated) are dropped, and every line longer than
    :data:`MAX_LINE_CHARS` is replaced (:func:`cap_lines`)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\ufeff", "")
    return cap_lines(text)


# The longest line read (real hand-history and event lines hold at most a few hundred characters), and how much of a
# longer line is kept in its place.
MAX_LINE_CHARS = 20_000
KEPT_CHARS = 200
_WINDOW = MAX_LINE_CHARS // 2


def cap_lines(text: str) -> str:
    """``text`` with every line longer than :data:`MAX_LINE_CHARS` replaced by one line that says so and keeps the
    first :data:`KEPT_CHARS` characters, e.g. ``[railbird: a line of 200,000,000 characters was not read; it began:
    PokerStars Hand #...]``.

    What a parser does with a line costs a multiple of its length, for every line of a batch: a file of one 200 MB
    line would cost gigabytes. The replacement reads as an unknown line holding numbers, so a hand holding it is
    quarantined as an unparsed line with that text, and outside a hand it is text outside any hand: the line is
    accounted for, never dropped in silence.

    Method: a line longer than the limit holds a whole window of ``MAX_LINE_CHARS // 2`` characters starting at a
    multiple of it, and such a window holds no line break; one ``str.find`` per window (it stops at the window's
    first line break) finds the candidates, and only their lines are measured."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    parts: list[str] = []
    end = 0
    for k in range(0, len(text), _WINDOW):
        if k < end or text.find("\n", k, k + _WINDOW) >= 0:
            continue
        start = text.rfind("\n", 0, k) + 1
        stop = text.find("\n", k)
        stop = len(text) if stop < 0 else stop
        if stop - start > MAX_LINE_CHARS:
            parts.append(text[end:start])
            parts.append(f"[railbird: a line of {stop - start:,} characters was not read; it began: "
                         f"{text[start:start + KEPT_CHARS]}]")
        else:
            parts.append(text[end:stop])
        end = stop
    if not parts:
        return text
    parts.append(text[end:])
    return "".join(parts)


def file_name(path: str | os.PathLike) -> str:
    """A file's path as text that any encoder takes: the path's bytes read as UTF-8, each byte that is not UTF-8
    written as ``\\xNN`` (``b'bad\\xffname.txt'`` -> ``'bad\\\\xffname.txt'``). A valid UTF-8 path comes back as
    ``str(path)``. This is the ``source_file`` stored and shown for the file; :func:`file_path` finds it again."""
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


_ESCAPED_BYTE = re.compile(rb"\\x([0-9a-f]{2})")


def file_path(name: str) -> str | bytes:
    """The path to open for a ``source_file`` written by :func:`file_name`: the name itself when such a file
    exists, else the name with its ``\\xNN`` escapes turned back into bytes."""
    if os.path.lexists(name) or "\\x" not in name:
        return name
    return _ESCAPED_BYTE.sub(lambda m: bytes([int(m.group(1), 16)]), name.encode("utf-8"))
