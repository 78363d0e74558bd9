"""Ingest: discover a landing folder, read what is new, load it into the warehouse.

Method
------
1. **Discover** (:func:`discover`): walk the given files/folders in any
   sub-folder layout and classify each file by name: ``*.txt`` → hands,
   ``labels.jsonl`` → labels (ground truth: logged, never loaded), other
   ``*.jsonl`` → events, ``accounts.csv`` → accounts, anything else →
   ignored (logged in ``ingest_log``, never fatal).
2. **Skip what is unchanged**: a file whose last ``ingest_log`` row says
   ``done``/``ignored`` with the same path, size, mtime and sha256 is not read
   again (sha256 is only computed when size and mtime already match).
3. **Read** (:func:`iter_batches`): hand files are decoded (BOMs, UTF-16,
   cp1252) and parsed by the hand-history parser, a chunk of files at a time; events and
   accounts by :mod:`pipelines.lib.events`.  A file is **growing** when it was
   modified within the last ``growing_seconds`` (default 120 s) or its last
   hand has no ``*** SUMMARY ***``: its complete hands are read, the trailing
   hand is left out when it is unfinished (no summary, or the file does not
   end with a line break while still being written), and the file is logged
   ``growing`` so the next run reads it again (already stored hands then
   count as duplicates).  A file left untouched for ``ABANDONED_SECONDS`` (a
   day) is not growing whatever its end: an unfinished last hand is then
   quarantined as truncated.  An unreadable file is logged ``failed`` and
   quarantined as input kind ``file``; a file that is no longer the one
   discovered (a link planted since: :mod:`pipelines.lib.landing_read`) is
   logged ``refused``, never read.
4. **Load** with :func:`pipelines.lib.warehouse.load`: one transaction for
   the whole run.

Files are read in chunks of about 24 MB: a chunk's hand texts go through the
parser in one vectorised pass (a file larger than a chunk is read from disk
and parsed in pieces of about 8 MB cut at hand headers, with its own line
numbers, each piece's tables handed to the loader before the next piece is
read, so one huge file, or one huge line, costs no more memory than a piece:
:func:`chunk_parts`); with several chunks a process pool parses the
next chunks while the current one is loaded. Every chunk's new rows are
staged as Parquet files (the bulk of its child rows written by the process
that parsed it, ``Batch.spill``) and inserted once per table just before the run's
single COMMIT (DuckDB keeps an insert smaller than a row group in memory until
COMMIT; one large insert per table is written straight to the file), so
memory stays at a few chunks whatever the size of the landing folder.  A growing events file is read up to its last
complete line.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import pickle
import re
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generator, Iterable, Iterator

import duckdb
import polars as pl

from pipelines.lib import events as _events
from pipelines.lib import warehouse as wh
from pipelines.lib.errors import RailbirdError
from pipelines.lib.handhistory import decode_bytes, file_name, parse_pool
from pipelines.lib.handhistory import parse_texts as _parse_texts
from pipelines.lib.handhistory.parse import QUARANTINE_RAW_CHARS
from pipelines.lib.landing_read import (Refused, hand_pieces, open_landing, read_whole, refused_row, resolves, sha256_of,
                                        unreadable_row)

GROWING_SECONDS = 120
# A client writes each hand whole when it ends; a file untouched for a day whose last hand still has no summary was
# cut short (a crash, a partial copy), not being written: its last hand is quarantined as truncated, the file done.
ABANDONED_SECONDS = 24 * 3600
_HEADER = re.compile(r"^\ufeff?(?i:PokerStars (?:Zoom |Home Game )?(?:Hand|Game)) #", re.MULTILINE)

FILES_SCHEMA = {
    "source_file": pl.String, "file_kind": pl.String, "size_bytes": pl.Int64, "mtime": pl.Datetime("us"),
    "sha256": pl.String, "status": pl.String,
}


def file_kind(path: Path) -> str:
    """What a discovered file is, by its name; ``refused`` for a link :func:`discover` would not follow."""
    if path.is_symlink():
        return "refused"
    name = path.name.lower()
    if name == "labels.jsonl":
        return "labels"
    if name.endswith(".txt"):
        return "hands"
    if name.endswith(".jsonl"):
        return "events"
    if name == "accounts.csv":
        return "accounts"
    return "ignored"


def discover(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Every file under ``paths`` (files or folders, any depth), resolved and sorted; a missing path is an error.

    Inside a folder, a symbolic link (to a file or a folder) whose target lies inside that folder is read at its
    target (once, however many links lead there); one whose target lies outside it is returned unresolved, as
    the link itself, never followed: :func:`file_kind` calls it ``refused`` and ingest logs and quarantines it
    without opening it; so is a link that leads to no file (a loop of links, a missing target). A path given by name is read wherever it points.

    A folder is resolved once and walked: resolving each of its files (a ``stat`` per
    path component) cost ~40 us per file (3,598 files of the replicated real corpus: 0.15 -> 0.06 CPU-s)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise RailbirdError(f"no such file or folder: {file_name(path)}")
        if path.is_file():
            out.append(path.resolve())
            continue
        root = path.resolve()
        for folder, dirs, files in os.walk(root):
            # os.walk enters no linked folder: those inside the landing folder are walked at their target anyway
            links = [Path(folder, d) for d in dirs if os.path.islink(os.path.join(folder, d))]
            out.extend(q for q in links if not q.resolve().is_relative_to(root))
            for q in (Path(folder, f) for f in files):
                if not q.is_symlink():
                    out.append(q)
                else:  # (a loop of links, or a link to nothing: the link itself, refused)
                    target = resolves(q)
                    inside = target is not None and target.is_relative_to(root) and target.exists()
                    out.append(target if inside else q)
    return sorted(dict.fromkeys(out))


def _mtime(st: os.stat_result) -> _dt.datetime:
    return _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=st.st_mtime_ns // 1000)


@dataclass
class FileInfo:
    path: Path
    kind: str
    size: int
    mtime: _dt.datetime
    mtime_epoch: float
    sha256: str | None = None
    dev: int | None = None  # (device and inode at discovery: the file read must be this one, see landing_read)
    ino: int | None = None


def known_files(con: duckdb.DuckDBPyConnection | None) -> dict[str, tuple]:
    """The last logged (size, mtime, sha256, status) of every file in ``ingest_log``."""
    if con is None:
        return {}
    rows = con.execute(
        """SELECT source_file, size_bytes, mtime, sha256, status FROM ingest_log
           QUALIFY row_number() OVER (PARTITION BY source_file ORDER BY started_at DESC, finished_at DESC NULLS LAST) = 1"""
    ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def changed_files(paths: Iterable[Path], known: dict[str, tuple]) -> tuple[list[FileInfo], int]:
    """Files that are new or changed since their last ``done``/``ignored`` log row; and how many were skipped."""
    todo: list[FileInfo] = []
    skipped = 0
    for path in paths:
        kind = file_kind(path)
        try:
            st = path.lstat() if kind == "refused" else path.stat()  # (a refused link's target is never looked at)
        except OSError:
            todo.append(FileInfo(path, kind, -1, _dt.datetime(1970, 1, 1), 0.0))
            continue
        info = FileInfo(path, kind, st.st_size, _mtime(st), st.st_mtime, dev=st.st_dev, ino=st.st_ino)
        prev = known.get(file_name(path))
        if kind == "refused":
            if not (prev and prev[3] == "refused" and prev[0] == info.size and prev[1] == info.mtime):
                todo.append(info)
            else:
                skipped += 1
            continue
        if prev and prev[3] in ("done", "ignored") and prev[0] == info.size and prev[1] == info.mtime:
            try:
                with open_landing(path, info.dev, info.ino) as fh:
                    info.sha256 = sha256_of(fh)
            except (OSError, Refused):  # (read, and refused or logged failed, with the changed files)
                pass
            if info.sha256 == prev[2]:
                skipped += 1
                continue
        todo.append(info)
    return todo, skipped


def _last_header(text: str) -> int:
    """Start of the last hand-header line of ``text`` (-1 when there is none).

    Searched backwards from the end (usually one ``rfind``) instead of listing
    every header of the file."""
    end = len(text)
    while True:
        i = max(text.rfind("PokerStars ", 0, end), text.rfind("POKERSTARS ", 0, end))
        if i < 0:
            return -1
        for start in (i, i - 1):
            if start >= 0 and _HEADER.match(text, start):
                return start
        end = i


def complete_part(text: str, recent: bool, abandoned: bool = False) -> tuple[str, bool]:
    """Cut an unfinished trailing hand off ``text``; return (text to parse, growing?).

    ``recent``: modified within the growing window; ``abandoned``: untouched so long that an unfinished last hand
    will never be finished (it is then parsed, and quarantined by the parser, instead of waited for)."""
    last = _last_header(text)
    if last < 0:
        return text, recent
    tail = text[last:]
    if "*** SUMMARY ***" not in tail:
        return (text, False) if abandoned else (text[:last], True)
    if recent and not text.endswith("\n"):
        return text[:last], True
    return text, recent


PARSE_BATCH_BYTES = 24 * 1024 * 1024
# A file larger than a chunk is parsed in pieces of this size: the parse of one piece, not the reading, sets the
# peak memory of its ingest (docs/measurements.md, 2026-12-06)
LARGE_FILE_PIECE_BYTES = 8 * 1024 * 1024


def piece_bytes(info: FileInfo, chunk_bytes: int) -> int:
    """The size of the pieces ``info``'s file is read in: ``chunk_bytes`` (a file up to that size is read whole),
    or :data:`LARGE_FILE_PIECE_BYTES` for a file larger than a chunk (never more than the chunk)."""
    return min(chunk_bytes, LARGE_FILE_PIECE_BYTES) if info.size > chunk_bytes else chunk_bytes


def _parsed_to_batch(parsed) -> wh.Batch:
    return wh.Batch(tables=dict(parsed.tables), quarantine=parsed.quarantine, headers_seen=int(parsed.headers_seen))


def _parser_error(source_file: str, text: str, exc: Exception) -> dict:
    """The quarantine row of a whole file a parser failed on (a bug to fix, not a verdict on the file)."""
    return {"source_file": source_file, "position": 0, "input_kind": "file", "hand_id": None, "reason": "parser error",
            "detail": f"{type(exc).__name__}: {exc}"[:1000], "raw": text[:QUARANTINE_RAW_CHARS]}


def _parse_or_quarantine(texts: list[str], names: list[str], offsets: list[int], chunk_bytes: int,
                         fail_q: list[dict], failed: set[str]) -> wh.Batch:
    """``texts`` parsed into a Batch; when the parser fails, each text alone, and the ones that still fail are
    quarantined whole (``parser error``) and their files named in ``failed`` (logged failed: read again next run,
    when a fixed parser may take them). A file the parser cannot take must not cost the others their night."""
    try:
        return _parsed_to_batch(_parse_texts(texts, names, chunk_bytes, offsets))
    except Exception:  # noqa: BLE001
        batch = wh.Batch()
        for text, name, off in zip(texts, names, offsets):
            try:
                batch.extend(_parsed_to_batch(_parse_texts([text], [name], chunk_bytes, [off])))
            except Exception as exc:  # noqa: BLE001
                fail_q.append(_parser_error(name, text, exc))
                failed.add(name)
        return batch


def _read_hands(info: FileInfo, small: tuple[list, list], growing_seconds: float, now: float, chunk_bytes: int,
                fail_q: list[dict], failed: set[str]) -> Generator[tuple[wh.Batch, int], None, str]:
    """Read one hand file: a small file's text (growing check done) is added to ``small`` (texts, names) to be
    parsed with the chunk's other small files; a large one is parsed piece by piece as it is read, each piece's
    Batch yielded with the characters of its text as soon as it is parsed (so that it can be loaded or spilled
    before the next piece is read).
    Returns the file's status (``done``, ``growing``, ``failed``, ``refused``)."""
    age = now - info.mtime_epoch
    name, status = file_name(info.path), "done"
    try:
        for text, before, last in hand_pieces(info, piece_bytes(info, chunk_bytes)):
            if last:  # (only the last piece can hold an unfinished last hand: pieces end before a header)
                text, growing = complete_part(text, age < growing_seconds, age >= ABANDONED_SECONDS)
                status = "growing" if growing else status
            if not text.strip():
                continue
            if before == 0 and last:
                small[0].append(text)
                small[1].append(name)
            else:
                part = _parse_or_quarantine([text], [name], [before], chunk_bytes, fail_q, failed)
                size, text = len(text), None  # (the piece's text is not kept while its tables are handed on)
                yield part, size
    except (OSError, Refused) as exc:
        fail_q.append(unreadable_row(info.path, exc))
        return "refused" if isinstance(exc, Refused) else "failed"
    return status


def _read_other(info: FileInfo, now: float, growing_seconds: float, parts: list[wh.Batch], fail_q: list[dict]) -> str:
    """Read one events or accounts file whole into ``parts``; returns its status."""
    try:
        text = decode_bytes(read_whole(info))
    except (OSError, Refused) as exc:
        fail_q.append(unreadable_row(info.path, exc))
        return "refused" if isinstance(exc, Refused) else "failed"
    status = "done"
    if info.kind == "events" and (now - info.mtime_epoch) < growing_seconds:
        status = "growing"
        if not text.endswith("\n"):  # a line still being written: read it next time
            text = text[: text.rfind("\n") + 1]
    parse = _events.parse_events_text if info.kind == "events" else _events.parse_accounts_text
    try:
        parts.append(parse(text, file_name(info.path)))
    except Exception as exc:  # noqa: BLE001 - one file must not stop the night
        status = "failed"
        fail_q.append(_parser_error(file_name(info.path), text, exc))
    return status


def chunk_parts(files: list[FileInfo], growing_seconds: float, now: float,
                chunk_bytes: int = PARSE_BATCH_BYTES, spill_dir: str | None = None) -> Iterator[wh.Batch]:
    """Read one chunk of files (decode, growing check, parse) as a stream of Batches, the last one with the
    chunk's log rows; with ``spill_dir``, the bulk of each Batch's child rows are written there as the load's
    stage files (``Batch.spill``).

    A file larger than the chunk is read in pieces (``landing_read.hand_pieces``) and each piece's parsed tables
    are yielded as a Batch of their own as soon as they are parsed (pieces of less than half a piece, as text with
    no hand is cut, together up to that), so memory is bounded by a piece, never by a file; the small files of the chunk (up to ``chunk_bytes`` together) are parsed in one call and come in the last
    Batch. The rows are the same, in the same order, as one Batch of the whole chunk: the loader deduplicates each
    Batch against the earlier ones of its run."""
    small: tuple[list[str], list[str]] = ([], [])
    parts: list[wh.Batch] = []
    log: list[dict] = []
    fail_q: list[dict] = []
    failed: set[str] = set()
    for info in files:
        status = "done" if info.kind not in ("ignored", "labels") else "ignored"
        if info.kind == "hands":
            pieces = _read_hands(info, small, growing_seconds, now, chunk_bytes, fail_q, failed)
            # (pieces of less than half a large file's piece, as text with no hand is cut, go together)
            held, held_size, limit = None, 0, piece_bytes(info, chunk_bytes) // 2
            while True:
                try:
                    part, size = next(pieces)
                except StopIteration as stop:
                    status = stop.value
                    break
                held, held_size = (part if held is None else held.extend(part)), held_size + size
                if held_size >= limit:
                    yield held.spill(spill_dir) if spill_dir is not None else held
                    held, held_size = None, 0
                part = None
            if held is not None:
                yield held.spill(spill_dir) if spill_dir is not None else held
                held = None
        elif info.kind in ("events", "accounts"):
            status = _read_other(info, now, growing_seconds, parts, fail_q)
        elif info.kind == "refused":
            status = "refused"
            fail_q.append(refused_row(info.path))
        elif info.sha256 is None:
            try:
                with open_landing(info.path, info.dev, info.ino) as fh:
                    info.sha256 = sha256_of(fh)
            except (OSError, Refused):
                pass
        log.append({"source_file": file_name(info.path), "file_kind": info.kind, "size_bytes": info.size if info.size >= 0 else None,
                    "mtime": info.mtime, "sha256": info.sha256, "status": status})
    batch = wh.Batch()
    if small[0]:
        # decode_bytes already normalised line ends and BOMs
        batch = _parse_or_quarantine(small[0], small[1], [0] * len(small[0]), chunk_bytes, fail_q, failed)
    for row in log:
        if row["source_file"] in failed:
            row["status"] = "failed"
    for part in parts:
        batch.extend(part)
    batch.files = pl.DataFrame(log, schema=FILES_SCHEMA) if log else pl.DataFrame(schema=FILES_SCHEMA)
    if fail_q:
        batch.quarantine = pl.concat([batch.quarantine, pl.DataFrame(fail_q, schema=wh.empty_quarantine().schema)],
                                     how="vertical_relaxed")
    yield batch.spill(spill_dir) if spill_dir is not None else batch


def _read_chunk_parked(files: list[FileInfo], growing_seconds: float, now: float,
                       chunk_bytes: int = PARSE_BATCH_BYTES, spill_dir: str | None = None,
                       park_dir: str | None = None) -> list[wh.Batch | str]:
    """:func:`chunk_parts` run in a parse worker: its Batches, every one but the last written (pickled, as a
    worker hands a Batch back) to a file in ``park_dir`` (default ``spill_dir``) as soon as it is made and named by
    that file's path, so that the worker holds one piece's tables at a time; with neither, the Batches themselves."""
    out: list[wh.Batch | str] = []
    pending: wh.Batch | None = None
    for part in chunk_parts(files, growing_seconds, now, chunk_bytes, spill_dir):
        if pending is not None:
            out.append(_park(pending, park_dir or spill_dir))
        pending = part
    if pending is not None:
        out.append(pending)
    return out


def _park(batch: wh.Batch, spill_dir: str | None) -> wh.Batch | str:
    """``batch`` pickled to a new file in ``spill_dir`` (its path returned); ``batch`` itself without a folder."""
    if spill_dir is None:
        return batch
    fd, path = tempfile.mkstemp(prefix="part-", suffix=".pickle", dir=spill_dir)
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(batch, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _unpark(item: wh.Batch | str) -> wh.Batch:
    """A Batch :func:`_park` wrote (its file removed once read), or ``item`` itself."""
    if isinstance(item, wh.Batch):
        return item
    try:
        with open(item, "rb") as fh:
            return pickle.load(fh)  # noqa: S301 - a file this run's own worker wrote in the run's stage folder
    finally:
        os.unlink(item)


def chunks(files: list[FileInfo], chunk_bytes: int = PARSE_BATCH_BYTES) -> list[list[FileInfo]]:
    """Cut the file list into chunks of about ``chunk_bytes`` (a file is never split)."""
    out: list[list[FileInfo]] = [[]]
    acc = 0
    for f in files:
        if acc and acc + max(f.size, 0) > chunk_bytes:
            out.append([])
            acc = 0
        out[-1].append(f)
        acc += max(f.size, 0)
    return [c for c in out if c]


# a parse worker's peak on 24 MB chunks is ~0.55-0.77 GB (docs/measurements.md, ingest_bench): one per GB
WORKER_MEMORY_BYTES = 1 << 30


def default_workers() -> int:
    """Parse processes when none are asked for: ``RAILBIRD_PARSE_WORKERS`` if set, else one per core this process
    may run on (its CPU affinity), at most one per ``WORKER_MEMORY_BYTES`` of the machine's memory, at least one."""
    if os.environ.get("RAILBIRD_PARSE_WORKERS"):
        return max(1, int(os.environ["RAILBIRD_PARSE_WORKERS"]))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = cores * WORKER_MEMORY_BYTES
    return max(1, min(cores, memory // WORKER_MEMORY_BYTES))


def iter_batches(files: list[FileInfo], *, growing_seconds: float = GROWING_SECONDS, now: float | None = None,
                 progress: bool | None = None, workers: int | None = None,
                 chunk_bytes: int = PARSE_BATCH_BYTES, spill_dir: str | os.PathLike | None = None) -> Iterator[wh.Batch]:
    """Read ``files`` chunk by chunk, in order; with several chunks, parse them in a process pool.

    At most ``workers + 1`` chunks are in flight, so memory stays bounded by
    the chunk size whatever the input size; the caller loads each batch while
    the next ones are parsed.  With ``spill_dir`` (a folder the caller removes
    after loading), each batch's hand-keyed child rows are written there by
    the process that parsed them (``Batch.spill``), for ``load_many``.
    """
    spill = None if spill_dir is None else str(spill_dir)
    now = time.time() if now is None else now
    parts = chunks(files, chunk_bytes)
    total = sum(max(f.size, 0) for f in files)
    if progress is None:
        progress = sys.stderr.isatty() or total > 256 * 1024 * 1024
    bar = cleanup = None
    if progress and files:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="B", unit_scale=True, desc="ingest", file=sys.stderr, leave=False)
    if workers is None:
        workers = default_workers()
    try:
        if workers <= 1 or len(parts) <= 1:
            for part in parts:
                yield from chunk_parts(part, growing_seconds, now, chunk_bytes, spill)
                if bar is not None:
                    bar.update(sum(max(f.size, 0) for f in part))
            return
        # (a folder for the Batches a worker parks when the caller gave none to spill into: removed below)
        park = spill or tempfile.mkdtemp(prefix="railbird-parts-")
        cleanup = None if spill else park
        with parse_pool(workers) as ex:
            pending = []
            it = iter(parts)
            for part in it:
                pending.append((part, ex.submit(_read_chunk_parked, part, growing_seconds, now, chunk_bytes, spill,
                                                park)))
                if len(pending) > workers:
                    break
            while pending:
                part, fut = pending.pop(0)
                nxt = next(it, None)
                if nxt is not None:
                    pending.append((nxt, ex.submit(_read_chunk_parked, nxt, growing_seconds, now, chunk_bytes, spill,
                                                    park)))
                items = fut.result()
                for i, item in enumerate(items):
                    items[i] = None  # (each part is let go once loaded)
                    yield _unpark(item)
                if bar is not None:
                    bar.update(sum(max(f.size, 0) for f in part))
    finally:
        if bar is not None:
            bar.close()
        if cleanup is not None:
            shutil.rmtree(cleanup, ignore_errors=True)


@dataclass
class IngestReport:
    result: wh.LoadResult
    seconds: float
    files_read: int
    files_skipped: int
    growing: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return self.result.summary(self.seconds)


def ingest(paths: Iterable[str | os.PathLike], warehouse: str | os.PathLike | duckdb.DuckDBPyConnection, *,
           growing_seconds: float = GROWING_SECONDS, run_id: str | None = None, progress: bool | None = None,
           fail_hook=None, workers: int | None = None) -> IngestReport:
    """Discover, read and load ``paths`` into ``warehouse`` (a path or an open connection) in one transaction."""
    t0 = time.perf_counter()
    started = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    all_files = discover(paths)
    own = not isinstance(warehouse, duckdb.DuckDBPyConnection)
    con = wh.connect(warehouse) if own else warehouse
    spill_dir = None
    try:
        todo, skipped = changed_files(all_files, known_files(con))
        logs: list[pl.DataFrame] = []
        # the parse workers write the bulk of the child rows as the load's stage files (Batch.spill): the loader,
        # one process for the whole run, neither receives nor re-writes them
        spill_dir = wh.stage_folder(con)

        def stream():
            for batch in iter_batches(todo, growing_seconds=growing_seconds, progress=progress, workers=workers,
                                      spill_dir=spill_dir):
                if batch.files is not None:
                    logs.append(batch.files)
                yield batch

        batches = stream()
        try:
            result = wh.load_many(con, batches, run_id=run_id or f"ingest-{uuid.uuid4().hex[:12]}",
                                  started_at=started, fail_hook=fail_hook)
        finally:
            batches.close()  # a failed run: stop the parse pool before its folder goes
    finally:
        if spill_dir is not None:
            shutil.rmtree(spill_dir, ignore_errors=True)
        if own:
            con.close()
    files = pl.concat(logs) if logs else pl.DataFrame(schema=FILES_SCHEMA)
    return IngestReport(
        result=result, seconds=time.perf_counter() - t0, files_read=len(todo), files_skipped=skipped,
        growing=files.filter(pl.col("status") == "growing").get_column("source_file").to_list(),
        ignored=files.filter(pl.col("status") == "ignored").get_column("source_file").to_list(),
    )


# ---------------------------------------------------------------- staging (the Dagster path)
# (in ingest_stage; its names are re-exported: the Dagster assets and `railbird run` read them here)
from pipelines.lib.ingest_stage import load_staged, stage, staged_batches, staged_days, staged_files  # noqa: E402,F401
