"""PokerStars hand-history parser: bytes -> text -> the warehouse hand tables.

``decode_bytes`` (decode.py), ``parse_text`` / ``ParsedHands`` (parse.py),
``parse_texts`` and ``parse_files`` (below). See parse.py for the method.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator

from .decode import decode_bytes, file_name, file_path
from .lines import HEADER_RE
from .pieces import text_pieces
from .parse import ParsedHands, TABLE_COLUMNS, TABLE_SCHEMAS, _parse_lines, lines_frame, parse_text

__all__ = ["decode_bytes", "file_name", "file_path", "parse_text", "parse_texts", "parse_files", "ParsedHands", "parse_pool", "TABLE_COLUMNS", "TABLE_SCHEMAS"]

# Batches are cut by bytes; a batch bigger than this is worth a second process.
_BATCH_BYTES = 24 * 1024 * 1024


_HEADER_LINE = re.compile(HEADER_RE, re.M)
# No real hand comes near this size: text this long without a hand header is never a hand to keep whole.
_MIN_LINE_CUT = 1 << 20


def _pieces(text: str, max_chars: int) -> list[tuple[int, int, int]]:
    """Cut a long text into pieces of about ``max_chars``: (start, end, number of lines before the piece).

    Cuts fall at hand-header lines; where no header comes for twice ``max_chars`` and at least
    ``_MIN_LINE_CUT`` (text outside any hand, or a hand of absurd size), after the last blank line (else line
    break) within ``max_chars``, so a piece never holds more than that. Short texts come back whole."""
    if len(text) <= max_chars:
        return [(0, len(text), 0)]
    bounds: list[int] = [0]

    limit = max(2 * max_chars, _MIN_LINE_CUT)

    def line_cuts(upto: int) -> None:  # cut [bounds[-1], upto) at line breaks while it is over the limit
        while upto - bounds[-1] > limit:
            lo, hi = bounds[-1] + 1, bounds[-1] + max_chars
            nl = text.rfind("\n\n", lo, hi)  # (a blank line ends a hand: no hand is cut when there is one)
            nl = nl + 1 if nl >= 0 else text.rfind("\n", lo, hi)
            bounds.append(nl + 1 if nl >= 0 else hi)

    for m in _HEADER_LINE.finditer(text):
        line_cuts(m.start())
        if m.start() - bounds[-1] >= max_chars:
            bounds.append(m.start())
    line_cuts(len(text))
    bounds.append(len(text))
    out, lines_before = [], 0
    for start, end in zip(bounds, bounds[1:]):
        out.append((start, end, lines_before))
        lines_before += text.count("\n", start, end)
    return out


def parse_texts(texts: list[str], names: list[str], max_chars: int | None = None,
                line_offsets: list[int] | None = None) -> ParsedHands:
    """Parse decoded texts (``names[i]`` is the source file of ``texts[i]``) in
    vectorised batches of about ``max_chars``: short texts share a batch, a text
    longer than that is cut at hand headers into pieces (line numbers stay
    those of its file), so memory stays bounded by the batch size (default:
    24 MB). ``line_offsets[i]``: lines of its file before ``texts[i]`` (a piece of a file; default 0)."""
    max_chars = _BATCH_BYTES if max_chars is None else max_chars
    line_offsets = [0] * len(texts) if line_offsets is None else line_offsets
    batch: list[str] = []
    batch_names: list[str] = []
    offsets: list[int] = []
    parts: list[ParsedHands] = []
    size = 0
    for text, name, off in zip(texts, names, line_offsets):
        for start, end, before in _pieces(text, max_chars):
            before += off
            piece = text[start:end]
            if batch and size + len(piece) > max_chars:
                parts.append(_parse_lines(lines_frame(batch, batch_names, offsets), batch_names))
                batch, batch_names, offsets, size = [], [], [], 0
            batch.append(piece)
            batch_names.append(name)
            offsets.append(before)
            size += len(piece)
    if batch:
        parts.append(_parse_lines(lines_frame(batch, batch_names, offsets), batch_names))
    return ParsedHands.concat(parts)


def _parse_batch(paths: list[str]) -> ParsedHands:
    """Read, decode and parse files (see :func:`parse_texts`): each file by ``pieces.text_pieces``, a file larger
    than the batch parsed a piece at a time as it is read (memory bounded by a piece, not by the file), the
    others together; the results in file order."""
    texts: list[str] = []
    names: list[str] = []
    parts: list[ParsedHands] = []
    for p in paths:
        name = file_name(p)
        with open(p, "rb") as fh:
            for text, before, last in text_pieces(fh, _BATCH_BYTES):
                if before == 0 and last:
                    texts.append(text)
                    names.append(name)
                    continue
                if texts:
                    parts.append(parse_texts(texts, names))
                    texts, names = [], []
                parts.append(parse_texts([text], [name], line_offsets=[before]))
    if texts:
        parts.append(parse_texts(texts, names))
    return ParsedHands.concat(parts)


def parse_files(paths: Iterable[str | Path], workers: int | None = None) -> ParsedHands:
    """Read, decode and parse files. Large inputs are cut into batches of about
    24 MB parsed by a process pool (2 workers by default, or RAILBIRD_PARSE_WORKERS);
    small inputs are parsed in-process as one batch. Worker processes are
    spawned (not forked)."""
    paths = [os.fsdecode(p) for p in paths]
    if not paths:
        return ParsedHands()
    sizes = [os.path.getsize(p) for p in paths]
    batches: list[list[str]] = [[]]
    acc = 0
    for p, s in zip(paths, sizes):
        if acc and acc + s > _BATCH_BYTES:
            batches.append([])
            acc = 0
        batches[-1].append(p)
        acc += s
    if workers is None:
        workers = int(os.environ.get("RAILBIRD_PARSE_WORKERS", "2"))
    if len(batches) == 1 or workers <= 1:
        return ParsedHands.concat([_parse_batch(b) for b in batches])
    with parse_pool(min(workers, len(batches))) as ex:
        return ParsedHands.concat(list(ex.map(_parse_batch, batches)))


# Polars allocates through its own jemalloc, configured by this variable, which ``import polars`` sets to its defaults
# ("dirty_decay_ms:500,muzzy_decay_ms:1000") followed by any value the environment already held; jemalloc reads it
# once, options in order, a later one overriding an earlier one.
_MALLOC_CONF_VAR = "_RJEM_MALLOC_CONF"
_WORKER_MALLOC_CONF = "narenas:1,dirty_decay_ms:5000"


@contextlib.contextmanager
def parse_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool for parsing: spawned workers with one Polars thread each and one allocator arena.

    "spawn", not fork: forking a process whose Polars thread pool is running
    can deadlock. One Polars thread per worker (unless POLARS_MAX_THREADS says
    otherwise): the pool already keeps the cores busy, and Polars' own threads
    on top of it cost ~25% more CPU per hand (parallel overhead on many small
    operations). Polars reads the variable when it is imported, so it is in
    the environment while the pool spawns its workers.

    Polars' allocator (jemalloc) in the workers uses one arena and keeps
    the pages it frees for 5 s instead of Polars' 0.5 s: a worker frees and
    re-allocates hundreds of MB per batch, and with Polars' settings spent
    about a fifth of its CPU in the kernel faulting in pages it had just
    released, its threads (Python's, Polars' one) each in their own arena.
    Ingest of 96,824 replicated real hands, two alternations: workers' kernel
    time 2.97/2.98 -> 1.82/1.84 s, their CPU 141/139 -> 122/127 us per hand,
    largest worker 702/732 -> 762/755 MB (keeping freed pages for good
    saved as much CPU but cost ~350 MB more per worker). The setting is
    appended to this process's own (Polars' defaults and any override set
    before Polars was imported), so it wins over both.
    """
    saved = {k: os.environ.get(k) for k in ("POLARS_MAX_THREADS", _MALLOC_CONF_VAR)}
    if saved["POLARS_MAX_THREADS"] is None:
        os.environ["POLARS_MAX_THREADS"] = "1"
    os.environ[_MALLOC_CONF_VAR] = ",".join(x for x in (saved[_MALLOC_CONF_VAR], _WORKER_MALLOC_CONF) if x)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as ex:
            yield ex
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
