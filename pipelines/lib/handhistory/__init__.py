"""PokerStars hand-history parser: bytes -> text -> the warehouse hand tables.

``decode_bytes`` (decode.py), ``parse_text`` / ``ParsedHands`` (parse.py) and
``parse_files`` (below). See parse.py for the method.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterable

from .decode import decode_bytes
from .parse import ParsedHands, TABLE_COLUMNS, TABLE_SCHEMAS, _lines_frame, _parse_lines, parse_text

__all__ = ["decode_bytes", "parse_text", "parse_files", "ParsedHands", "TABLE_COLUMNS", "TABLE_SCHEMAS"]

# Batches are cut by bytes; a batch bigger than this is worth a second process.
_BATCH_BYTES = 24 * 1024 * 1024


def _parse_batch(paths: list[str]) -> ParsedHands:
    texts = []
    for p in paths:
        with open(p, "rb") as fh:
            texts.append(decode_bytes(fh.read()))
    return _parse_lines(_lines_frame(texts, paths), paths)


def parse_files(paths: Iterable[str | Path], workers: int | None = None) -> ParsedHands:
    """Read, decode and parse files. Large inputs are cut into batches of about
    24 MB parsed by a process pool (2 workers by default, or RAILBIRD_PARSE_WORKERS);
    small inputs are parsed in-process as one batch. Worker processes are
    spawned (not forked)."""
    paths = [str(p) for p in paths]
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
    # "spawn", not fork: forking a process whose Polars thread pool is running can deadlock
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(batches)), mp_context=ctx) as ex:
        return ParsedHands.concat(list(ex.map(_parse_batch, batches)))
