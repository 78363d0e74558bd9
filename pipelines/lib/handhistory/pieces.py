"""Reading a hand file in bounded pieces: its bytes -> decoded text pieces cut at hand headers.

:func:`text_pieces` is the one way a hand file is read, by ingest (``landing_read.hand_pieces``, on a file opened
as discovered) and by :func:`pipelines.lib.handhistory.parse_files`. A file up to ``piece_bytes`` is read whole;
a larger one in blocks (:func:`read_pieces`), so that memory is bounded by a piece and never by the file or one of
its lines:

- pieces end before a hand header (a line break then ``PokerStars ... Hand #``) once about ``piece_bytes`` are held;
- where no header comes for twice :data:`HEADERLESS_BYTES` (no real hand comes near that size: text outside any
  hand, or a hand of absurd size), a piece ends at the last blank line, else line break, within
  :data:`HEADERLESS_BYTES`: a file of lines with no hands is parsed a small piece at a time;
- a line longer than :data:`MAX_LINE_BYTES` is replaced, as it is read, by one line saying so with its first bytes
  (``decode.cap_lines`` says what the parser then does with it), and the rest of the file is read;
- a UTF-16 file (byte-order mark, or the zero bytes of its first KB: ``decode.utf16_encoding``), whose line breaks
  are two bytes, is decoded as it is read by an incremental decoder and handed to the same cutting as UTF-8
  (:class:`Utf16AsUtf8`), never held whole.
"""
from __future__ import annotations

import codecs
import os
import re
from typing import BinaryIO, Iterator

from .decode import KEPT_CHARS, MAX_LINE_CHARS, clean_text, decode_bytes, utf16_encoding

# a line longer than this (in bytes) is never held whole: real lines hold a few hundred characters
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS
BLOCK_BYTES = 4 * 1024 * 1024
# text this long without a hand header is never a hand to keep whole (as handhistory._MIN_LINE_CUT)
HEADERLESS_BYTES = 1 << 20
# a hand header at a line start (as lines.HEADER_RE, in bytes; a UTF-8 byte-order mark may precede it)
_HEADER_AT_LINE = re.compile(rb"\n(?:\xef\xbb\xbf)?(?i:PokerStars (?:[A-Za-z]+ )*?(?:Hand|Game)) #\d")

__all__ = ["BLOCK_BYTES", "HEADERLESS_BYTES", "KEPT_CHARS", "MAX_LINE_BYTES", "Utf16AsUtf8", "read_pieces",
           "text_pieces"]


class Utf16AsUtf8:
    """A binary reader over the rest of a UTF-16 file that hands out its text as UTF-8 bytes.

    ``fh``: the file, positioned after its byte-order mark; ``encoding``: ``utf-16-le`` or ``utf-16-be``; ``sha``
    (a hashlib object, optional) is updated with every byte of ``fh`` read. Undecodable units become U+FFFD (as
    ``decode_bytes`` does); a character split between two blocks is decoded whole (``codecs`` incremental
    decoder)."""

    def __init__(self, fh: BinaryIO, encoding: str, sha=None):
        self._fh, self._sha = fh, sha
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def read(self, n: int) -> bytes:
        """About ``n`` bytes of the file decoded, as UTF-8; ``b""`` only at the end of the file."""
        while True:
            raw = self._fh.read(n)
            if self._sha is not None and raw:
                self._sha.update(raw)
            text = self._decoder.decode(raw, final=not raw)
            if text or not raw:
                return text.encode("utf-8")


def read_pieces(fh, piece_bytes: int, sha=None, block_bytes: int = BLOCK_BYTES,
                max_line: int = MAX_LINE_BYTES, headerless_bytes: int = HEADERLESS_BYTES) -> Iterator[tuple[bytes, int]]:
    """The bytes of ``fh`` (anything with ``read(n)``) in pieces: (piece, lines of the file before it).

    A piece ends before the last hand header past its first byte and within ``piece_bytes`` once that much is held
    (a piece is longer only to hold a hand longer than that); where no header
    comes within twice ``h = min(headerless_bytes, piece_bytes)``, after its last blank line, else its last line
    break, within ``h``. A line longer than ``max_line`` bytes becomes ``[railbird: a line of N bytes was not read;
    it began: ...]`` (its first ``KEPT_CHARS`` bytes, decoded as UTF-8 with replacement). ``sha`` (a hashlib
    object), when given, is updated with every byte read. Line ends (``\\r\\n``, a lone ``\\r``) are passed on as
    ``\\n``; every other byte as read."""
    h = min(headerless_bytes, piece_bytes)
    buf = bytearray()
    lines_before = 0
    long_head: bytes | None = None  # the start of a line too long to keep, while it is being skipped
    long_len = 0
    cr = False  # a carriage return ended the last block: it may be the first half of "\r\n"
    while True:
        block = raw = fh.read(block_bytes)
        if sha is not None and raw:
            sha.update(raw)
        if cr or b"\r" in raw:  # (every line end as "\n", as decode_bytes makes them: old Macs wrote "\r" alone)
            block = (b"\r" if cr else b"") + raw
            cr = bool(raw) and block.endswith(b"\r")
            block = (block[:-1] if cr else block).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if long_head is not None:
            nl = block.find(b"\n") if block else -1
            if nl < 0 and raw:
                long_len += len(block)
                continue
            long_len += nl if nl >= 0 else 0
            buf += _long_line(long_head, long_len) + (b"\n" if nl >= 0 else b"")
            block = block[nl + 1:] if nl >= 0 else b""
            long_head = None
        if block:
            buf += block
            last_nl = buf.rfind(b"\n")
            if len(buf) - (last_nl + 1) > max_line:  # the line being read is too long: keep only its start
                long_head, long_len = bytes(buf[last_nl + 1:last_nl + 1 + KEPT_CHARS]), len(buf) - (last_nl + 1)
                del buf[last_nl + 1:]
        while len(buf) >= min(piece_bytes, 2 * h):
            cut = _cut(buf, piece_bytes, h)
            if cut is None:
                break
            piece = bytes(buf[:cut])
            del buf[:cut]
            yield piece, lines_before
            lines_before += piece.count(b"\n")
        if not raw and long_head is None and not cr:
            break
    if buf:
        yield bytes(buf), lines_before


def _cut(buf: bytearray, piece_bytes: int, h: int) -> int | None:
    """Where to end a piece of ``buf`` (``None``: read on): with no hand header past the first byte within twice
    ``h`` (and that much held), after the last blank line, else line break, within ``h``; else, with
    ``piece_bytes`` held, before the last hand header past the first byte and within ``piece_bytes`` (with none,
    before the first one after); else nowhere."""
    if len(buf) >= 2 * h and _HEADER_AT_LINE.search(buf, 1, 2 * h) is None:
        nl = buf.rfind(b"\n\n", 1, h)
        nl = nl + 1 if nl >= 0 else buf.rfind(b"\n", 1, h)
        return nl + 1 if nl >= 0 else None  # (no line break: a line too long is cut as it is read, by the caller)
    if len(buf) < piece_bytes:
        return None
    last = None
    for m in _HEADER_AT_LINE.finditer(buf, 1, piece_bytes):
        last = m.start() + 1
    if last is None:  # (one hand longer than the piece: to the next header)
        m = _HEADER_AT_LINE.search(buf, piece_bytes)
        last = None if m is None else m.start() + 1
    return last


def _long_line(head: bytes, n: int) -> bytes:
    text = head.decode("utf-8", errors="replace").replace("\r", " ")
    return f"[railbird: a line of {n:,} bytes was not read; it began: {text}]".encode("utf-8")


def text_pieces(fh: BinaryIO, piece_bytes: int, sha=None) -> Iterator[tuple[str, int, bool]]:
    """The decoded text of the open hand file ``fh`` (read from its start) in pieces: (text, lines of the file
    before it, last piece?). A file up to ``piece_bytes`` comes whole (``decode_bytes``); a larger one in pieces of
    :func:`read_pieces` (UTF-8 or a single-byte code page: each piece by ``decode_bytes``; UTF-16: through
    :class:`Utf16AsUtf8`, then ``clean_text``). ``sha`` (a hashlib object, optional) is updated with every byte
    of the file; once the pieces are all taken, ``fh.tell()`` is the file's size."""
    head = fh.read(1024)
    if os.fstat(fh.fileno()).st_size <= piece_bytes:
        data = head + fh.read()
        if sha is not None:
            sha.update(data)
        yield decode_bytes(data), 0, True
        return
    wide = utf16_encoding(head)
    fh.seek(0)
    if wide:
        mark = fh.read(wide[1])
        if sha is not None:
            sha.update(mark)
        pieces = read_pieces(Utf16AsUtf8(fh, wide[0], sha), piece_bytes)

        def decode(piece: bytes) -> str:
            return clean_text(piece.decode("utf-8"))
    else:
        pieces = read_pieces(fh, piece_bytes, sha)
        decode = decode_bytes
    pending = None
    for piece, before in pieces:
        if pending is not None:
            yield decode(pending[0]), pending[1], False
        pending = (piece, before)
    if pending is not None:
        yield decode(pending[0]), pending[1], True
