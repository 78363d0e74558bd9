"""Reading landing files: opened only as discovered, hand files in bounded pieces.

:func:`open_landing` opens a discovered file so that a link planted after discovery is refused: ``os.open`` with
``O_NOFOLLOW`` (the last path component may not be a link), then the open file's ``fstat`` compared with the
device and inode seen at discovery (a file swapped for another, or a folder above it swapped for a link, is another
inode), and the open file's real path (``/proc/self/fd``, where the system has it) compared with the discovered
path, which :func:`pipelines.lib.ingest.discover` resolved inside the landing folder.

:func:`read_pieces` reads an open hand file in blocks and yields it in pieces cut at hand headers, each with the
number of lines before it, so memory is bounded by a piece (about ``piece_bytes``; twice that where no header comes)
and never by the file or one of its lines: a line longer than :data:`MAX_LINE_BYTES` is replaced, as it is read,
by one line saying so with its first bytes (see ``handhistory.decode.cap_lines`` for what the parser then does with
it), and the rest of the file is still read.
"""
from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
from typing import BinaryIO, Iterator

from pipelines.lib.handhistory.decode import KEPT_CHARS, MAX_LINE_CHARS, _looks_utf16, decode_bytes, file_name

# a line longer than this (in bytes) is never held whole: real lines hold a few hundred characters
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS
BLOCK_BYTES = 4 * 1024 * 1024
# a hand header at a line start (as lines.HEADER_RE, in bytes; a UTF-8 byte-order mark may precede it)
_HEADER_AT_LINE = re.compile(rb"\n(?:\xef\xbb\xbf)?(?i:PokerStars (?:[A-Za-z]+ )*?(?:Hand|Game)) #\d")


class Refused(Exception):
    """A discovered file that is not what discovery saw (a link planted since, another file): not read."""


def open_landing(path: os.PathLike | str, dev: int | None, ino: int | None) -> BinaryIO:
    """Open the discovered file ``path`` for reading, refusing a link or another file in its place.

    ``dev``/``ino``: the device and inode :func:`os.stat` gave at discovery (``None``: not compared). Raises
    :class:`Refused` with what was found, ``OSError`` when the file cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise Refused(f"now a symbolic link to {_target(path)} (planted after discovery): not followed, "
                          "not read") from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("no longer a regular file: not read")
        if ino is not None and (st.st_dev, st.st_ino) != (dev, ino):
            raise Refused("another file than the one discovered (swapped after discovery): not read")
        real = _fd_path(fd)
        if real is not None and real != os.fsencode(os.path.abspath(path)):
            raise Refused(f"opened as {file_name(real)}, outside what was discovered: not read")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _fd_path(fd: int) -> bytes | None:
    """The real path of the open file ``fd`` (``None`` where the system does not say)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}".encode())
    except OSError:
        return None


def _target(path) -> str:
    try:
        return file_name(os.readlink(path))
    except OSError as exc:
        return f"(unreadable link: {type(exc).__name__})"


def read_pieces(fh: BinaryIO, piece_bytes: int, sha=None, block_bytes: int = BLOCK_BYTES,
                max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[bytes, int]]:
    """The bytes of ``fh`` in pieces of about ``piece_bytes``: (piece, lines of the file before it).

    A piece ends before a hand header (a line break then ``PokerStars ... Hand #``) found past its first byte;
    where none comes within twice ``piece_bytes``, after its last blank line, else its last line break, within
    ``piece_bytes``. A line longer than ``max_line`` bytes becomes ``[railbird: a line of N bytes was not read; it
    began: ...]`` (its first ``KEPT_CHARS`` bytes, decoded as UTF-8 with replacement). ``sha`` (a hashlib object),
    when given, is updated with every byte read. Every other byte is passed on as read."""
    buf = bytearray()
    lines_before = 0
    long_head: bytes | None = None  # the start of a line too long to keep, while it is being skipped
    long_len = 0
    while True:
        block = fh.read(block_bytes)
        if sha is not None and block:
            sha.update(block)
        if long_head is not None:
            nl = block.find(b"\n") if block else -1
            if nl < 0 and block:
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
        while len(buf) >= piece_bytes:
            cut = _cut(buf, piece_bytes)
            if cut is None:
                break
            piece = bytes(buf[:cut])
            del buf[:cut]
            yield piece, lines_before
            lines_before += piece.count(b"\n")
        if not block and long_head is None:
            break
    if buf:
        yield bytes(buf), lines_before


def _cut(buf: bytearray, piece_bytes: int) -> int | None:
    """Where to end a piece of ``buf`` (``None``: read on): before its last hand header past the first byte; with
    none in twice ``piece_bytes``, after the last blank line, else line break, within ``piece_bytes``; with none
    of them, nowhere."""
    last = None
    for m in _HEADER_AT_LINE.finditer(buf, 1):
        last = m.start() + 1
    if last is not None:
        return last
    if len(buf) < 2 * piece_bytes:
        return None
    nl = buf.rfind(b"\n\n", 1, piece_bytes)
    nl = nl + 1 if nl >= 0 else buf.rfind(b"\n", 1, piece_bytes)
    return nl + 1 if nl >= 0 else None  # (no line break: a line too long is cut as it is read, by the caller)


def _long_line(head: bytes, n: int) -> bytes:
    text = head.decode("utf-8", errors="replace").replace("\r", " ")
    return f"[railbird: a line of {n:,} bytes was not read; it began: {text}]".encode("utf-8")


def read_whole(info) -> bytes:
    """The bytes of a discovered file (``info``: an ingest ``FileInfo``), opened safely (:func:`open_landing`); sets ``info.sha256`` and
    ``info.size``. Raises ``OSError`` or :class:`Refused`."""
    with open_landing(info.path, info.dev, info.ino) as fh:
        data = fh.read()
    info.sha256, info.size = hashlib.sha256(data).hexdigest(), len(data)
    return data


def hand_pieces(info, chunk_bytes: int) -> Iterator[tuple[str, int, bool]]:
    """The decoded text of a hand file in pieces: (text, lines of the file before it, last piece?); sets
    ``info.sha256`` and ``info.size`` once read. A file larger than ``chunk_bytes`` is read in bounded pieces
    cut at hand headers (:func:`read_pieces`: memory bounded by the chunk, not by the file or one of
    its lines); a smaller one, and a UTF-16 one (whose line breaks are two bytes), whole. Raises ``OSError`` or
    :class:`Refused` before yielding anything."""
    fh = open_landing(info.path, info.dev, info.ino)
    with fh:
        head = fh.read(1024)
        utf16 = head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _looks_utf16(head) is not None
        if utf16 or os.fstat(fh.fileno()).st_size <= chunk_bytes:
            data = head + fh.read()
            info.sha256, info.size = hashlib.sha256(data).hexdigest(), len(data)
            yield decode_bytes(data), 0, True
            return
        fh.seek(0)
        sha = hashlib.sha256()
        pending = None
        for piece, before in read_pieces(fh, chunk_bytes, sha):
            if pending is not None:
                yield decode_bytes(pending[0]), pending[1], False
            pending = (piece, before)
        info.sha256, info.size = sha.hexdigest(), fh.tell()
        if pending is not None:
            yield decode_bytes(pending[0]), pending[1], True


def refused_row(link, detail: str | None = None) -> dict:
    """The quarantine row of a link out of the landing folder (its target is named, never opened), or with
    ``detail`` of a file refused as it was opened (:class:`Refused`)."""
    if detail is None:
        detail = f"a symbolic link to {_target(link)}: not followed, not read"
        reason = "link out of the landing folder"
    else:
        reason = "changed after discovery"
    return {"source_file": file_name(link), "position": 0, "input_kind": "file", "hand_id": None,
            "reason": reason, "detail": detail, "raw": ""}


def unreadable_row(path, exc: BaseException) -> dict:
    """The quarantine row of a file that could not be read (``OSError``) or was refused at open (:class:`Refused`)."""
    if isinstance(exc, Refused):
        return refused_row(path, f"{exc}")
    return {"source_file": file_name(path), "position": 0, "input_kind": "file", "hand_id": None,
            "reason": "unreadable", "detail": f"{type(exc).__name__}: {exc}", "raw": ""}


def sha256_of(fh: BinaryIO) -> str:
    """The SHA-256 of the rest of ``fh``, read in blocks."""
    h = hashlib.sha256()
    for chunk in iter(lambda: fh.read(1 << 20), b""):
        h.update(chunk)
    return h.hexdigest()
