"""Reading landing files: opened only as discovered, hand files in bounded pieces.

:func:`open_landing` opens a discovered file so that a link planted after discovery is refused: ``os.open`` with
``O_NOFOLLOW`` (the last path component may not be a link), then the open file's ``fstat`` compared with the
device and inode seen at discovery (a file swapped for another, or a folder above it swapped for a link, is another
inode), and the open file's real path (``/proc/self/fd``, where the system has it) compared with the discovered
path, which :func:`pipelines.lib.ingest.discover` resolved inside the landing folder.

:func:`hand_pieces` reads a hand file so opened in pieces cut at hand headers (``handhistory.pieces``: memory
bounded by a piece, never by the file or one of its lines, UTF-16 files included).
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from pipelines.lib.handhistory.decode import file_name
from pipelines.lib.handhistory.pieces import text_pieces


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


def read_whole(info) -> bytes:
    """The bytes of a discovered file (``info``: an ingest ``FileInfo``), opened safely (:func:`open_landing`); sets ``info.sha256`` and
    ``info.size``. Raises ``OSError`` or :class:`Refused`."""
    with open_landing(info.path, info.dev, info.ino) as fh:
        data = fh.read()
    info.sha256, info.size = hashlib.sha256(data).hexdigest(), len(data)
    return data


def hand_pieces(info, chunk_bytes: int) -> Iterator[tuple[str, int, bool]]:
    """The decoded text of a hand file in pieces: (text, lines of the file before it, last piece?); sets
    ``info.sha256`` and ``info.size`` once read. The file is opened as discovered (:func:`open_landing`) and read
    by ``handhistory.pieces.text_pieces``: a file up to ``chunk_bytes`` whole, a larger one (UTF-8, a code page
    or UTF-16) in pieces cut at hand headers, memory bounded by the chunk, not by the file or one of its lines.
    Raises ``OSError`` or :class:`Refused` before yielding anything."""
    with open_landing(info.path, info.dev, info.ino) as fh:
        sha = hashlib.sha256()
        yield from text_pieces(fh, chunk_bytes, sha)
        info.sha256, info.size = sha.hexdigest(), fh.tell()


def resolves(link: os.PathLike | str) -> Path | None:
    """Where the symbolic link ``link`` leads (``Path.resolve``; the target need not exist), ``None`` for a loop of
    links (``RuntimeError`` on Python 3.11, ``OSError`` with ``ELOOP`` later)."""
    try:
        return Path(link).resolve()
    except (OSError, RuntimeError):
        return None


def refused_row(link, detail: str | None = None) -> dict:
    """The quarantine row of a link out of the landing folder or of one that leads to no file (a loop of links, a
    missing target; its target is named, never opened), or with ``detail`` of a file refused as it was opened (:class:`Refused`)."""
    target = resolves(link) if detail is None else None
    if detail is None and target is not None and target.exists():
        detail = f"a symbolic link to {_target(link)}: not followed, not read"
        reason = "link out of the landing folder"
    elif detail is None:
        why = "a loop of links" if target is None else "no such file"
        detail = f"a symbolic link to {_target(link)} ({why}): not read"
        reason = "link to no file"
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
