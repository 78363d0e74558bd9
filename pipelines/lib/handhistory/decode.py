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


def decode_bytes(data: bytes) -> str:
    """Decode the bytes of a hand-history file to text with ``\\n`` line ends.

    Never raises on content: undecodable bytes become U+FFFD.
    """
    if data.startswith(codecs.BOM_UTF16_LE) and not data.startswith(codecs.BOM_UTF32_LE):
        text = data[2:].decode("utf-16-le", errors="replace")
    elif data.startswith(codecs.BOM_UTF16_BE):
        text = data[2:].decode("utf-16-be", errors="replace")
    else:
        guess = _looks_utf16(data)
        if guess:
            text = data.decode(guess, errors="replace")
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
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Byte-order marks (possibly doubled, possibly mid-file where files were
    # concatenated) are not content.
    text = text.replace("\ufeff", "")
    return text
