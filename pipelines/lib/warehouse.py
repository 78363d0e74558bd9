"""The warehouse: open it, load a batch into it in one transaction, publish a snapshot.

Method
------
* ``connect`` opens (creating if needed) a DuckDB file and runs ``schema.sql``
  (tables and their ``COMMENT ON``) and ``views.sql`` (analyst views), both
  idempotent, so every open brings an old file up to the current contract.
* ``load`` writes one :class:`Batch` (parsed hands, platform events, accounts,
  quarantined input, the files' log rows) inside a single ``BEGIN … COMMIT``;
  any exception rolls the whole run back, so a run that dies midway leaves the
  warehouse exactly as it was.  Frames go in through Arrow (``con.register``
  + ``INSERT … SELECT``), never row by row.  In a run of several batches
  (``load_many``) the new hands and their child rows are written to Parquet
  in a temporary folder and inserted with one ``INSERT … SELECT FROM
  read_parquet`` per table just before ``COMMIT`` (:class:`_Stage`): still
  one transaction, but DuckDB writes those rows straight to the file instead
  of holding every batch's small inserts in memory until ``COMMIT``.  When
  ``ingest`` parses in worker processes, each worker writes the stage files
  of its batch's child rows itself (:meth:`Batch.spill`: the rows of the
  hands the batch holds once); the loader only decides which of those hands
  are new and drops the others' rows when it inserts the files.  That took
  the loading process from 72–90 to 48–63 µs of CPU per hand in
  ``benchmarks/ingest_bench.py`` (193,648 and 96,824 replicated real hands,
  two alternations with the previous code on a loaded machine), the parse
  workers' CPU unchanged within noise.
* Hands dedupe on ``hand_id``.  Each incoming hand is classified against the
  stored hands and against earlier copies in the same batch: unseen → stored;
  same ``content_hash`` as the stored/first copy → counted as *duplicate*;
  different ``content_hash`` → quarantined with reason ``conflict`` (the stored
  or first copy is kept) with its raw text cut from the source file.  Child
  rows (seats, actions, …) are inserted only for stored hands; when a batch
  holds several copies of one new hand, the first copy's text is parsed alone
  so its child rows are exactly its own.  Neither ``hands`` nor its child
  tables carry a primary-key index (``schema.sql``): ``hand_id`` and the child
  keys ((hand_id, seq) …) stay unique because rows go in only for hands new
  to the warehouse, each batch's hands are classified against the stored and
  earlier copies, and each batch's child rows are deduplicated on the key
  first.  Maintaining the six child-table ART indexes cost more than half of
  DuckDB's insert + commit time (4.5 s vs 2.0 s CPU for 40,000 hands) and
  doubled the file; the one on ``hands.hand_id`` cost ≈ 5.5 µs of CPU per
  hand of the load (≈ 7 %, 96,852 replicated real hands, two alternations)
  and served no lookup (the per-batch classification is a hash join, which
  DuckDB runs as a scan of ``hands`` with or without it).  Warehouses
  created before keep their indexes and load the same way.
* Tournaments merge: first/last hand times take min/max, other attributes keep
  the first non-null value.
* Events have no id: each event table dedupes on the whole normalised row
  (``EXCEPT`` against what is stored), ``decisions`` on its key (hand_id,
  seq), kept unique by the loader without an index: a key already stored is
  not inserted again (an anti-join against the stored keys the conflict check
  reads anyway).  Its primary-key index cost ≈ 15–20 µs of CPU per hand of
  the load on a generated population (~7 decisions per hand: insert and
  commit, 92 → 70–77 µs per hand, mixed seed 151, two alternations).  Login and
  logout lines are kept in ``session_events`` and ``sessions`` is recomputed
  for the touched (account, session) pairs, so a logout that arrives before
  its login (another file, another night) still pairs up.
* Quarantine rows dedupe on (file, position, kind, reason, raw): re-reading a
  growing or changed file does not repeat them.
* ``publish_snapshot`` copies the database into ``snap.tmp`` with
  ``COPY FROM DATABASE`` and ``os.replace``-s it over the published file;
  readers only ever open the snapshot.
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import duckdb
import polars as pl

from pipelines.lib.errors import RailbirdError
from pipelines.lib.handhistory import decode_bytes, file_path, parse_texts
from pipelines.lib.handhistory.lines import HEADER_RE

HERE = Path(__file__).resolve().parent
SCHEMA_SQL = HERE / "schema.sql"
VIEWS_SQL = HERE / "views.sql"

HAND_TABLES = [
    "hands", "seats", "actions", "hole_cards", "boards", "pots", "collections",
    "table_events", "tournaments", "tournament_finishes", "bounties", "unknown_lines",
]
#: hand child tables (keyed by hand_id) and their unique key: a batch's rows are deduplicated on it
#: (the hand-keyed tables have no index to enforce it; ``tournament_finishes`` uses ``ON CONFLICT DO NOTHING``)
CHILD_TABLES = {
    "seats": ("hand_id", "seat"),
    "actions": ("hand_id", "seq"),
    "hole_cards": ("hand_id", "player"),
    "boards": ("hand_id", "run"),
    "pots": ("hand_id", "pot"),
    "collections": None,
    "table_events": ("hand_id", "line"),
    "tournament_finishes": ("tournament_id", "player"),
    "bounties": None,
    "unknown_lines": ("hand_id", "line"),
}
#: child tables keyed by their hand (every row belongs to one hand): a parse worker may write them to Parquet itself
SPILL_TABLES = [name for name, key in CHILD_TABLES.items() if key is None or key[0] == "hand_id"]
EVENT_TABLES = ["session_events", "sit_events", "registrations", "decisions", "transfers", "other_events"]
FILE_TABLES = ["accounts", "quarantine", "ingest_log"]
#: every table the ingest stage writes (the Dagster asset keys), in load order
INGEST_TABLES = HAND_TABLES + ["sessions"] + EVENT_TABLES + FILE_TABLES

QUARANTINE_COLUMNS = ["source_file", "position", "input_kind", "hand_id", "reason", "detail", "raw"]


def empty_quarantine() -> pl.DataFrame:
    return pl.DataFrame(
        schema={"source_file": pl.String, "position": pl.Int64, "input_kind": pl.String, "hand_id": pl.String,
                "reason": pl.String, "detail": pl.String, "raw": pl.String}
    )


def _to_ipc(df: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.write_ipc(buf, compression="uncompressed")
    return buf.getvalue()


@dataclass
class Batch:
    """Everything one run brings to the warehouse.

    ``tables`` maps a warehouse table name to a frame with (a subset of) its
    columns; event frames may carry ``_file``/``_line`` provenance columns,
    which are not stored.  ``files`` holds one ``ingest_log`` row per file
    (without run_id / counts, filled in by :func:`load`).
    """

    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    quarantine: pl.DataFrame = field(default_factory=empty_quarantine)
    files: pl.DataFrame | None = None
    headers_seen: int = 0
    #: child table -> Parquet file (written by :meth:`spill`) of the rows of the hands that occur once in ``tables["hands"]``
    spilled: dict[str, str] = field(default_factory=dict)

    # Parse workers hand their batch back through pickle. Polars' own pickling costs a worker about 2.5 times
    # the CPU of writing the frames as uncompressed Arrow IPC (≈ 0.25 s vs 0.10 s for one 24 MB batch of hand
    # text, ≈ 12 vs 7 µs per hand); reading back costs the same either way. Uncompressed: the bytes only cross
    # a pipe.
    def __getstate__(self) -> dict:
        return {"tables": {k: _to_ipc(v) for k, v in self.tables.items()}, "quarantine": _to_ipc(self.quarantine),
                "files": None if self.files is None else _to_ipc(self.files), "headers_seen": self.headers_seen,
                "spilled": self.spilled}

    def __setstate__(self, state: dict) -> None:
        self.tables = {k: pl.read_ipc(io.BytesIO(v)) for k, v in state["tables"].items()}
        self.quarantine = pl.read_ipc(io.BytesIO(state["quarantine"]))
        self.files = None if state["files"] is None else pl.read_ipc(io.BytesIO(state["files"]))
        self.headers_seen = state["headers_seen"]
        self.spilled = state.get("spilled", {})

    def spill(self, folder: str | os.PathLike) -> "Batch":
        """Move the bulk of the child rows to Parquet files in ``folder`` (run in the parse worker).

        Why: the loader's own work per hand was mostly moving child rows
        (seats, actions, …) that go into the warehouse unchanged: receiving
        them from the worker (Arrow IPC), a semi-join against the new hands,
        a repeated-key check and writing them to the run's Parquet stage.
        The worker already holds them, so it writes the stage file itself:
        for every hand-keyed child table, the rows of the hands that occur
        exactly once in this batch's ``hands`` (their first row per key, the
        dedupe :func:`_load_hands` applies; the key starts with ``hand_id``,
        so it never mixes two hands), with the stage's Parquet settings.  The
        other rows (hands the batch holds several times, rows of no parsed
        hand) stay in ``tables`` and take the usual path.  The loader then
        only decides, from ``hands``, which of those single hands are not
        new (stored before, or conflicting) and drops their rows from the
        file when it inserts it (:meth:`_Stage.add_spilled`).
        """
        hands = self.tables.get("hands")
        if hands is None or hands.height == 0 or self.spilled:
            return self
        singles = hands.filter(pl.col("hand_id").is_unique()).get_column("hand_id")
        folder = Path(folder)
        for name in SPILL_TABLES:
            df = self.tables.get(name)
            if df is None or df.height == 0:
                continue
            mask = df.get_column("hand_id").is_in(singles.implode())
            every = bool(mask.all())
            one = df if every else df.filter(mask)
            key = CHILD_TABLES[name]
            if key:
                one = _first_per_key(one, list(key))
            fd, path = tempfile.mkstemp(prefix=f"{name}-", suffix=".parquet", dir=folder)
            os.close(fd)
            _write_stage_parquet(one, path)
            self.spilled[name] = path
            self.tables[name] = df.clear() if every else df.filter(~mask)
        return self

    def extend(self, other: "Batch") -> "Batch":
        if self.spilled or other.spilled:
            # which hands occur once is a property of one batch's ``hands``: spilled batches are never merged
            raise ValueError("cannot extend a batch whose child rows were spilled")
        for name, df in other.tables.items():
            if name in self.tables and self.tables[name].height:
                self.tables[name] = pl.concat([self.tables[name], df], how="diagonal_relaxed") if df.height else self.tables[name]
            else:
                self.tables[name] = df
        self.quarantine = pl.concat([self.quarantine, _as_quarantine(other.quarantine)], how="diagonal_relaxed")
        if other.files is not None:
            self.files = other.files if self.files is None else pl.concat([self.files, other.files], how="diagonal_relaxed")
        self.headers_seen += other.headers_seen
        return self


@dataclass
class LoadResult:
    """What one load did, with per-file counts for ``ingest_log``."""

    run_id: str
    hands_stored: int = 0
    duplicates: int = 0
    quarantined: int = 0
    quarantine_reasons: Counter = field(default_factory=Counter)
    events_stored: int = 0
    accounts_stored: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    days: list[str] = field(default_factory=list)
    per_file: dict[str, dict[str, int]] = field(default_factory=dict)

    def merge(self, other: "LoadResult") -> "LoadResult":
        """Add another part's counts to this one (parts of one run)."""
        self.hands_stored += other.hands_stored
        self.duplicates += other.duplicates
        self.quarantined += other.quarantined
        self.quarantine_reasons.update(other.quarantine_reasons)
        self.events_stored += other.events_stored
        self.accounts_stored += other.accounts_stored
        for k, v in other.rows.items():
            self.rows[k] = self.rows.get(k, 0) + v
        self.days = sorted(set(self.days) | set(other.days))
        for f, c in other.per_file.items():
            mine = self.per_file.setdefault(f, {"stored": 0, "duplicates": 0, "quarantined": 0})
            for k, v in c.items():
                mine[k] += v
        return self

    def summary(self, seconds: float | None = None) -> str:
        reasons = ", ".join(f"{r}: {n}" for r, n in self.quarantine_reasons.most_common())
        q = f"quarantined {self.quarantined}" + (f" ({reasons})" if reasons else "")
        line = f"hands stored {self.hands_stored} / duplicate {self.duplicates} / {q} · events {self.events_stored} · accounts {self.accounts_stored}"
        if seconds is not None:
            rate = (self.hands_stored + self.duplicates) / seconds if seconds > 0 else 0.0
            line += f" · {rate:,.0f} hands/s"
        return line


# ---------------------------------------------------------------- connections


def connect(path: str | os.PathLike | None = None, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse at ``path`` (``:memory:`` if None); create/upgrade its schema unless read-only."""
    target = ":memory:" if path is None else str(path)
    if target != ":memory:" and not read_only:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    if read_only and not Path(target).exists():
        raise RailbirdError(f"no warehouse at {target}: run `railbird ingest` or `railbird run` first")
    try:
        con = duckdb.connect(target, read_only=read_only)
    except duckdb.IOException as exc:
        raise RailbirdError(f"cannot open warehouse {target}: {exc}") from None
    if not read_only:
        # a run is one transaction: cap DuckDB's memory so a big run spills to disk instead of growing
        con.execute("SET memory_limit = ?", [os.environ.get("RAILBIRD_DUCKDB_MEMORY", "1GB")]).fetchall()
        con.execute("SET preserve_insertion_order = false").fetchall()
        ensure_schema(con)
    return con


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Run schema.sql (tables + comments) and views.sql; both are idempotent."""
    con.execute(SCHEMA_SQL.read_text(encoding="utf-8")).fetchall()
    if VIEWS_SQL.exists():
        con.execute(VIEWS_SQL.read_text(encoding="utf-8")).fetchall()


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index",
        [table],
    ).fetchall()
    return [r[0] for r in rows]


def publish_snapshot(con_or_path: duckdb.DuckDBPyConnection | str | os.PathLike, snapshot_path: str | os.PathLike) -> Path:
    """Copy the warehouse to ``snapshot_path`` atomically (ATTACH tmp, COPY FROM DATABASE, DETACH, os.replace)."""
    snapshot = Path(snapshot_path).resolve()
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    tmp = snapshot.with_name(snapshot.name + ".tmp")
    for stale in (tmp, Path(str(tmp) + ".wal")):
        if stale.exists():
            stale.unlink()
    own = not isinstance(con_or_path, duckdb.DuckDBPyConnection)
    con = connect(con_or_path) if own else con_or_path
    try:
        db = con.execute("SELECT current_database()").fetchall()[0][0]
        con.execute("ATTACH ? AS railbird_snapshot", [str(tmp)]).fetchall()
        try:
            con.execute(f'COPY FROM DATABASE "{db}" TO railbird_snapshot').fetchall()
        finally:
            con.execute("DETACH railbird_snapshot").fetchall()
    finally:
        if own:
            con.close()
    os.replace(tmp, snapshot)
    return snapshot


# ---------------------------------------------------------------- helpers


def _as_quarantine(df: pl.DataFrame | None) -> pl.DataFrame:
    if df is None or df.height == 0:
        return empty_quarantine()
    out = df.with_columns([pl.lit(None, dtype=pl.String).alias(c) for c in QUARANTINE_COLUMNS if c not in df.columns])
    return out.select(
        pl.col("source_file").cast(pl.String), pl.col("position").cast(pl.Int64), pl.col("input_kind").cast(pl.String),
        pl.col("hand_id").cast(pl.String), pl.col("reason").cast(pl.String), pl.col("detail").cast(pl.String),
        pl.col("raw").cast(pl.String).fill_null(""),
    )


def _insert(con, table: str, df: pl.DataFrame, *, conflict: str = "", except_existing: bool = False) -> int:
    """Insert the columns of ``df`` that ``table`` has; returns the rows inserted."""
    if df is None or df.height == 0:
        return 0
    cols = [c for c in table_columns(con, table) if c in df.columns]
    collist = ", ".join(f'"{c}"' for c in cols)
    con.register("_railbird_in", df.select(cols))
    try:
        if except_existing:
            src = f'SELECT {collist} FROM _railbird_in EXCEPT SELECT {collist} FROM "{table}"'
        else:
            src = f"SELECT {collist} FROM _railbird_in"
        rows = con.execute(f'INSERT INTO "{table}" ({collist}) {src} {conflict}').fetchall()
    finally:
        con.unregister("_railbird_in")
    return int(rows[0][0]) if rows else 0  # DuckDB returns the number of rows inserted


def _write_stage_parquet(df: pl.DataFrame, path: str | os.PathLike) -> None:
    """The run stage's Parquet settings (lz4, no statistics: the file is read once, whole)."""
    df.write_parquet(path, compression="lz4", statistics=False)


def stage_folder(con) -> Path:
    """A new temporary folder beside the warehouse file (the disk that must hold the rows anyway; /tmp may be in
    memory), for a run's staged rows; the caller removes it."""
    db = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    where = Path(db[0][0]).parent if db and db[0][0] else None
    return Path(tempfile.mkdtemp(prefix=".railbird-load-", dir=where))


class _Stage:
    """A run's new hands and their child rows, kept on disk (Parquet) until the end of the run.

    Why: DuckDB keeps the rows of an ``INSERT`` smaller than one row group
    (122,880 rows) in the transaction's in-memory local storage until
    ``COMMIT``; only an ``INSERT`` of at least a row group is written straight
    to the database file (optimistic write).  A run that inserted every
    ~17,000-hand batch directly grew by ~0.6 MB per 1,000 hands (tag
    ``IN_MEMORY_TABLE`` in ``duckdb_memory()``: 118 MB at 188k hands).  So
    every batch's new hands and child rows are written here, and
    :meth:`flush` inserts them with one ``INSERT … SELECT FROM read_parquet``
    per table just before ``COMMIT``: DuckDB then writes full row groups to
    the file and holds at most one partial row group per table in memory.
    Still one transaction, so a run that fails leaves the warehouse as it was.

    Only plain inserts are staged: hands new to the warehouse *and* to this
    run (:meth:`stored_hashes` lets the next batch's classification see the
    hands staged before it), their hand-keyed child rows, which nothing
    stored can collide with, and new quarantine rows (:meth:`quarantined`
    lets a later batch that reads the same file again skip the rows staged
    before it; quarantine rows carry raw text, ~1.5 MB per batch of the real
    corpus).  Child rows a parse worker already wrote (:meth:`add_spilled`)
    go in from its files, in the same one ``INSERT`` per table.
    """

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.files: dict[str, list[str]] = {}
        self.counts: dict[str, int] = {}  # rows of ``files`` per table (counted when added)
        # spilled child rows (Batch.spill): files inserted whole; files less the hands listed in ``drops``
        self.spilled: dict[str, list[str]] = {}
        self.partial: dict[str, list[str]] = {}
        self.drops: list[str] = []
        # each table's columns, read once per run (the schema cannot change inside the run's transaction; a
        # read of duckdb_columns() costs ~2 ms, and every batch stages up to a dozen tables)
        self.columns: dict[str, list[str]] = {}

    def _columns(self, con, table: str) -> list[str]:
        if table not in self.columns:
            self.columns[table] = table_columns(con, table)
        return self.columns[table]

    def stored_hashes(self, con, ids_view: str) -> pl.DataFrame | None:
        """``hand_id, _stored_hash`` of the hands staged so far in this run whose id is in ``ids_view``."""
        return self._query(con, "hands", "SELECT hand_id, content_hash AS _stored_hash FROM read_parquet(?) "
                                         f"SEMI JOIN {ids_view} USING (hand_id)")

    def quarantined(self, con, files_view: str) -> pl.DataFrame | None:
        """The dedupe key of the quarantine rows staged so far in this run for the files in ``files_view``."""
        return self._query(con, "quarantine", "SELECT source_file, position::BIGINT AS position, input_kind, reason, raw "
                                              f"FROM read_parquet(?) WHERE source_file IN (SELECT source_file FROM {files_view})")

    def _query(self, con, table: str, sql: str) -> pl.DataFrame | None:
        files = self.files.get(table)
        return con.sql(sql, params=[files]).pl() if files else None

    def add(self, con, table: str, df: pl.DataFrame) -> int:
        if df.height == 0:
            return 0
        cols = [c for c in self._columns(con, table) if c in df.columns]
        files = self.files.setdefault(table, [])
        path = self._folder(con) / f"{table}-{len(files):05d}.parquet"
        _write_stage_parquet(df.select(cols), path)
        files.append(str(path))
        self.counts[table] = self.counts.get(table, 0) + df.height
        return df.height

    def _folder(self, con) -> Path:
        if self.folder is None:
            self.folder = stage_folder(con)
        return self.folder

    def add_spilled(self, con, spilled: dict[str, str], drop: pl.DataFrame, singles: int) -> None:
        """Stage a batch's spilled child rows (:meth:`Batch.spill`) but those of the hands in ``drop``.

        ``drop`` holds the ``hand_id`` of the batch's single hands that are not
        new (``singles`` of them in all): none, the file goes in whole; all,
        it is left out; some, their ids are written beside it and
        :meth:`flush` anti-joins them (on the file's name and ``hand_id``).
        The files' rows are counted when :meth:`flush` inserts them.
        """
        if drop.height >= singles:
            return
        # a file staged once already cannot come back here: the batch's single hands it holds rows of were then
        # new, so they are stored (staged) now and all of them would be dropped
        if not drop.height:
            for table, path in spilled.items():
                self.spilled.setdefault(table, []).append(path)
            return
        drop_path = str(self._folder(con) / f"drop-{len(self.drops):05d}.parquet")
        _write_stage_parquet(pl.concat([drop.select("hand_id", pl.lit(path, dtype=pl.String).alias("file"))
                                        for path in spilled.values()]), drop_path)
        self.drops.append(drop_path)
        for table, path in spilled.items():
            self.partial.setdefault(table, []).append(path)

    def flush(self, con) -> dict[str, int]:
        """Insert every staged table (inside the caller's transaction); returns the spilled rows inserted per table.

        One ``INSERT`` per table: the rows staged here, the spilled files whole,
        and the spilled files less their dropped hands, as one ``UNION ALL``."""
        counted: dict[str, int] = {}
        for table in dict.fromkeys([*self.files, *self.spilled, *self.partial]):
            parts, params = [], []
            staged, whole, partial = self.files.get(table), self.spilled.get(table), self.partial.get(table)
            first = (staged or whole or partial)[0]
            cols = [c for c in self._columns(con, table) if c in pl.read_parquet_schema(first)]
            collist = ", ".join(f'"{c}"' for c in cols)
            for files in (staged, whole):
                if files:
                    parts.append(f"SELECT {collist} FROM read_parquet(?)")
                    params.append(files)
            if partial:
                tcols = ", ".join(f't."{c}"' for c in cols)
                parts.append(f"SELECT {tcols} FROM read_parquet(?, filename = true) t ANTI JOIN read_parquet(?) d "
                             "ON t.filename = d.file AND t.hand_id = d.hand_id")
                params += [partial, self.drops]
            n = con.execute(f'INSERT INTO "{table}" ({collist}) ' + " UNION ALL ".join(parts), params).fetchall()[0][0]
            counted[table] = int(n) - self.counts.get(table, 0)
        self.files, self.spilled, self.partial, self.drops, self.counts = {}, {}, {}, [], {}
        return counted

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class _RawText:
    """Cuts a hand's raw text out of its source file (for conflicts and re-parsing)."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def lines(self, source_file: str) -> list[str]:
        if source_file not in self._lines:
            try:
                with open(file_path(source_file), "rb") as fh:
                    self._lines[source_file] = decode_bytes(fh.read()).splitlines()
            except OSError:
                self._lines[source_file] = []
        return self._lines[source_file]

    def hand(self, source_file: str, line: int) -> str:
        lines = self.lines(source_file)
        if not lines or line < 1 or line > len(lines):
            return ""
        out = [lines[line - 1]]
        for text in lines[line:]:
            if _is_header(text):
                break
            out.append(text)
        while out and not out[-1].strip():
            out.pop()
        return "\n".join(out)


_HEADER = re.compile(HEADER_RE)


def _is_header(line: str) -> bool:
    """A hand header line, by the parser's own grammar."""
    return _HEADER.match(line.lstrip("\ufeff")) is not None


# ---------------------------------------------------------------- hands


def _classify_hands(con, hands: pl.DataFrame, stage: "_Stage | None" = None) -> pl.DataFrame:
    """Add ``_status`` ∈ new / duplicate / conflict and ``_copies`` to the incoming hands."""
    h = hands.with_row_index("_ord").with_columns(
        pl.col("content_hash").first().over("hand_id", order_by="_ord").alias("_first_hash"),
        pl.col("_ord").rank("ordinal").over("hand_id").alias("_occ"),
        pl.len().over("hand_id").alias("_copies"),
    )
    con.register("_railbird_ids", h.select("hand_id").unique())
    try:
        stored = con.sql(
            "SELECT s.hand_id, s.content_hash AS _stored_hash FROM hands s JOIN _railbird_ids USING (hand_id)"
        ).pl()
        staged = stage.stored_hashes(con, "_railbird_ids") if stage is not None else None
        if staged is not None and staged.height:
            stored = pl.concat([stored, staged], how="vertical_relaxed")
    finally:
        con.unregister("_railbird_ids")
    h = h.join(stored, on="hand_id", how="left")
    return h.with_columns(
        pl.when(pl.col("_stored_hash").is_not_null())
        .then(pl.when(pl.col("_stored_hash") == pl.col("content_hash")).then(pl.lit("duplicate")).otherwise(pl.lit("conflict")))
        .when(pl.col("_occ") == 1).then(pl.lit("new"))
        .when(pl.col("content_hash") == pl.col("_first_hash")).then(pl.lit("duplicate"))
        .otherwise(pl.lit("conflict"))
        .alias("_status")
    )


def _reparse_children(texts: list[str], names: list[str]) -> dict[str, pl.DataFrame]:
    """Parse, alone, the first copy of each new hand that a batch held several times.

    All those hand texts go through the parser in one batch; each text holds
    one hand, so the child rows of a hand_id are exactly that copy's.
    """
    if not texts:
        return {}
    parsed = parse_texts(texts, names)
    return {name: df for name, df in parsed.tables.items() if df.height}


class _Reparse:
    """The run's hands whose child rows come from parsing their first copy alone, parsed once before ``COMMIT``.

    Why once per run: the parser is one vectorised pass of ~600 Polars
    operations whatever its input, ~0.35 CPU-s even for the handful of hand
    texts a batch of the real corpus re-parses (~6 per 17,000 hands: a hand
    whose copies in the batch differ).  Re-parsing them batch by batch cost
    ~20 µs per hand of the whole load (load alone, 96,852 replicated hands:
    2.1 of 9.6 CPU-s); one call for the run costs that once.  Each batch cuts
    its hands' texts from the source files while it holds them decoded
    (:class:`_RawText`) and remembers which batch it was.

    The hand-keyed child rows of those hands cannot collide with any other
    rows (their hands are new to the warehouse and to the run), so inserting
    them at the end changes nothing.  ``tournament_finishes`` is keyed by
    (tournament, player) and keeps the first row seen, so its rows are held
    here for the whole run, in the order the batch-by-batch load gave them
    (each batch's own rows, then its re-parsed hands' rows), and inserted in
    that order at the end: the same row wins as before.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.names: list[str] = []
        self.part_of: list[pl.DataFrame] = []  # hand_id -> the batch number its text came from
        self.finishes: list[tuple[tuple[int, int], pl.DataFrame]] = []  # ((batch, 0 own | 1 re-parsed), rows)
        self.part = -1

    def add(self, new_multi: pl.DataFrame, raw: _RawText) -> None:
        """Cut the text of the first copy of each hand of ``new_multi`` (rows: hand_id, source_file, source_line)."""
        ids = []
        for hand_id, source_file, line in new_multi.select("hand_id", "source_file", "source_line").iter_rows():
            text = raw.hand(source_file, int(line))
            if text:
                self.texts.append(text + "\n")
                self.names.append(source_file)
                ids.append(hand_id)
        if ids:
            self.part_of.append(pl.DataFrame({"hand_id": ids, "_part": [self.part] * len(ids)},
                                             schema={"hand_id": pl.String, "_part": pl.Int64}))

    def flush(self, con, stage: "_Stage | None", result: "LoadResult") -> None:
        """Parse the held texts in one call and insert their child rows; then the run's tournament finishes."""
        parsed = _reparse_children(self.texts, self.names) if self.texts else {}
        ids = pl.concat(self.part_of) if self.part_of else None
        for name, key in CHILD_TABLES.items():
            rows = parsed.get(name)
            if rows is None or rows.height == 0 or ids is None:
                continue
            rows = rows.join(ids.select("hand_id"), on="hand_id", how="semi")
            if key and key[0] != "hand_id":
                parts = rows.join(ids, on="hand_id", how="inner")
                for part in parts.get_column("_part").unique().sort().to_list():
                    self.finishes.append(((part, 1), parts.filter(pl.col("_part") == part).drop("_part")))
                continue
            if key:
                rows = _first_per_key(rows, list(key))
            n = stage.add(con, name, rows) if stage is not None else _insert(con, name, rows)
            result.rows[name] = result.rows.get(name, 0) + n
        if self.finishes:
            rows = pl.concat([df for _, df in sorted(self.finishes, key=lambda x: x[0])], how="diagonal_relaxed")
            rows = _first_per_key(rows, list(CHILD_TABLES["tournament_finishes"]))
            n = _insert(con, "tournament_finishes", rows, conflict="ON CONFLICT DO NOTHING")
            result.rows["tournament_finishes"] = result.rows.get("tournament_finishes", 0) + n
        self.__init__()


def _one_copy_rows(batch: Batch, same: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """One copy's child rows of the hands a batch holds ``_c`` times with the same content.

    Copies with one ``content_hash`` have the same lines, so the parser gives
    each copy the same rows: every distinct row occurs a multiple of ``_c``
    times, and keeping ``count / _c`` of each gives exactly one copy's rows
    without parsing the hand again.  A hand where some row count is not a
    multiple of ``_c`` (its copies parsed differently, e.g. a line-numbered
    row) is returned in the second frame and re-parsed from its first copy.
    """
    out: dict[str, pl.DataFrame] = {}
    uneven = [same.select("hand_id").clear()]
    for name in CHILD_TABLES:
        df = batch.tables.get(name)
        if df is None or df.height == 0:
            continue
        cols = df.columns
        m = df.join(same, on="hand_id", how="inner").with_columns(
            pl.len().over(cols).alias("_n"), pl.int_range(pl.len()).over(cols).alias("_i"))
        uneven.append(m.filter(pl.col("_n") % pl.col("_c") != 0).select("hand_id"))
        out[name] = m.filter(pl.col("_i") < pl.col("_n") // pl.col("_c")).select(cols)
    return out, pl.concat(uneven).unique()


def _load_hands(con, batch: Batch, result: LoadResult, quarantine: list[pl.DataFrame], raw: _RawText,
                stage: "_Stage | None", later: _Reparse) -> pl.DataFrame:
    """Store new hands and their child rows; returns the hands classification (for per-file counts)."""
    hands = batch.tables.get("hands")
    if hands is None or hands.height == 0:
        for name in ("tournaments",):
            _merge_tournaments(con, batch.tables.get(name), result)
        return pl.DataFrame()
    h = _classify_hands(con, hands, stage)
    new = h.filter(pl.col("_status") == "new")
    conflicts = h.filter(pl.col("_status") == "conflict")
    result.duplicates += h.filter(pl.col("_status") == "duplicate").height

    if conflicts.height:
        raws = [raw.hand(f, int(line)) for f, line in conflicts.select("source_file", "source_line").iter_rows()]
        quarantine.append(
            conflicts.select(
                "source_file", pl.col("source_line").alias("position"), pl.lit("hand").alias("input_kind"), "hand_id",
                pl.lit("conflict").alias("reason"),
                pl.format("hand {} already stored with different content (kept the stored copy)", "hand_id").alias("detail"),
            ).with_columns(pl.Series("raw", raws, dtype=pl.String))
        )

    new_rows = new.drop([c for c in new.columns if c.startswith("_")])
    result.rows["hands"] = stage.add(con, "hands", new_rows) if stage is not None else _insert(con, "hands", new_rows)
    result.hands_stored += result.rows["hands"]

    single_ids = new.filter(pl.col("_copies") == 1).select("hand_id")
    if batch.spilled:
        # the worker wrote the child rows of the batch's single hands (Batch.spill): drop those of the ones not new
        singles = h.filter(pl.col("_copies") == 1)
        drop = singles.filter(pl.col("_status") != "new").select("hand_id")
        if stage is not None:
            stage.add_spilled(con, batch.spilled, drop, singles.height)
        elif drop.height < singles.height:
            for name, path in batch.spilled.items():
                rows = pl.read_parquet(path).join(drop, on="hand_id", how="anti")
                result.rows[name] = result.rows.get(name, 0) + _insert(con, name, rows)
    multi = new.filter(pl.col("_copies") > 1)
    # copies of a new hand that all carry its content: their child rows are the first copy's, c times over
    same = multi.join(h.filter(pl.col("_status") == "conflict"), on="hand_id", how="anti").select(
        "hand_id", pl.col("_copies").alias("_c"))
    one_copy, uneven = _one_copy_rows(batch, same) if same.height else ({}, same.select("hand_id"))
    same_ids = same.select("hand_id").join(uneven, on="hand_id", how="anti")
    multi = multi.join(same_ids, on="hand_id", how="anti")
    later.part += 1
    if multi.height:
        later.add(multi, raw)  # their child rows: parsed alone, once for the run (_Reparse)
    for name, key in CHILD_TABLES.items():
        df = batch.tables.get(name)
        parts = []
        if df is not None and df.height:
            parts.append(df.join(single_ids, on="hand_id", how="semi"))
        if name in one_copy:
            parts.append(one_copy[name].join(same_ids, on="hand_id", how="semi"))
        if not parts:
            result.rows.setdefault(name, 0)
            continue
        rows = pl.concat(parts, how="diagonal_relaxed")
        if key and key[0] != "hand_id":
            # finishes are keyed by tournament and keep the first row seen: inserted in order at the end of the run
            later.finishes.append(((later.part, 0), rows))
            result.rows.setdefault(name, 0)
            continue
        if key:
            # hand-keyed rows of new hands cannot collide with stored rows: dedupe the batch itself and use a
            # plain INSERT (ON CONFLICT costs an index probe per row)
            rows = _first_per_key(rows, list(key))
        if stage is not None:
            result.rows[name] = result.rows.get(name, 0) + stage.add(con, name, rows)
        else:
            result.rows[name] = result.rows.get(name, 0) + _insert(con, name, rows)
    _merge_tournaments(con, batch.tables.get("tournaments"), result)
    result.days = sorted({d.isoformat() for d in new.get_column("day").unique().to_list() if d is not None}) if new.height else []
    return h


def _first_per_key(rows: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """``rows.unique(subset=key, keep="first", maintain_order=True)``, without its cost when no key repeats.

    The parser gives one hand's rows distinct keys, so a batch's child rows
    usually hold no repeated key, and the order-keeping ``unique`` (a hash
    table over the string ``hand_id`` and a gather) is then the identity.  A
    64-bit hash of each row's key is tested for repeats first (~40% of the
    ``unique``'s CPU): equal keys have equal hashes, so no repeated hash means
    no repeated key and the rows are returned as they are; any repeated hash
    (a repeated key or a collision) takes the exact ``unique``.
    """
    if rows.height < 2 or not rows.select(pl.struct(key).hash().is_duplicated().any()).item():
        return rows
    return rows.unique(subset=key, keep="first", maintain_order=True)


def _merge_tournaments(con, df: pl.DataFrame | None, result: LoadResult) -> None:
    if df is None or df.height == 0:
        result.rows.setdefault("tournaments", 0)
        return
    cols = [c for c in table_columns(con, "tournaments") if c in df.columns]
    aggs, sets = [], []
    for c in cols:
        if c == "tournament_id":
            continue
        if c == "first_hand_at":
            aggs.append(f'min("{c}") AS "{c}"')
            sets.append(f'"{c}" = least(tournaments."{c}", excluded."{c}")')
        elif c == "last_hand_at":
            aggs.append(f'max("{c}") AS "{c}"')
            sets.append(f'"{c}" = greatest(tournaments."{c}", excluded."{c}")')
        else:
            aggs.append(f'first("{c}" ORDER BY "{c}" IS NULL) AS "{c}"')
            if c == "bounty_kind":
                sets.append(f"\"{c}\" = CASE WHEN tournaments.\"{c}\" = 'none' THEN excluded.\"{c}\" ELSE tournaments.\"{c}\" END")
            else:
                sets.append(f'"{c}" = coalesce(tournaments."{c}", excluded."{c}")')
    collist = ", ".join(f'"{c}"' for c in cols)
    con.register("_railbird_t", df.select(cols))
    try:
        before = con.execute("SELECT count(*) FROM tournaments").fetchall()[0][0]
        con.execute(
            f"INSERT INTO tournaments ({collist}) SELECT tournament_id, {', '.join(aggs)} FROM _railbird_t "
            f"WHERE tournament_id IS NOT NULL GROUP BY tournament_id "
            f"ON CONFLICT (tournament_id) DO UPDATE SET {', '.join(sets)}"
        ).fetchall()
        result.rows["tournaments"] = result.rows.get("tournaments", 0) + con.execute("SELECT count(*) FROM tournaments").fetchall()[0][0] - before
    finally:
        con.unregister("_railbird_t")


# ---------------------------------------------------------------- events and accounts


def _load_decisions(con, df: pl.DataFrame, quarantine: list[pl.DataFrame]) -> int:
    """Decisions are keyed by (hand_id, seq): an identical repeat is a duplicate; a different one is a conflict.

    A conflicting line (same hand and action, other account/ms/ts than the stored
    or first one) is quarantined with its file, line and raw text.
    """
    key = ["hand_id", "seq"]
    d = df.with_row_index("_ord")
    first = d.sort("_ord").unique(subset=key, keep="first", maintain_order=True)
    con.register("_railbird_dk", first.select(key))
    try:
        stored = con.sql("SELECT hand_id, seq, account AS _s_account, ms AS _s_ms, ts AS _s_ts FROM decisions "
                         "SEMI JOIN _railbird_dk USING (hand_id, seq)").pl()
    finally:
        con.unregister("_railbird_dk")
    ref = first.select(*key, pl.col("account").alias("_r_account"), pl.col("ms").alias("_r_ms"), pl.col("ts").alias("_r_ts"))
    if stored.height:
        ref = ref.join(stored.with_columns(pl.col("seq").cast(ref.schema["seq"])), on=key, how="left").select(
            *key, pl.coalesce("_s_account", "_r_account").alias("_r_account"), pl.coalesce("_s_ms", "_r_ms").alias("_r_ms"),
            pl.coalesce("_s_ts", "_r_ts").alias("_r_ts"))
    d = d.join(ref, on=key, how="left")
    # ne_missing: a value on one side and null on the other is a difference too (``!=`` gives null and drops the row)
    differs = pl.any_horizontal(pl.col(c).ne_missing(pl.col(f"_r_{c}")) for c in ("account", "ms", "ts"))
    bad = d.filter(differs)
    if bad.height and "_file" in bad.columns:
        quarantine.append(bad.select(
            pl.col("_file").alias("source_file"), pl.col("_line").alias("position"), pl.lit("event").alias("input_kind"),
            "hand_id", pl.lit("conflict").alias("reason"),
            pl.format("decision for hand {} action {} already known with other values", "hand_id", "seq").alias("detail"),
            pl.col("_raw").fill_null("").alias("raw") if "_raw" in bad.columns else pl.lit("").alias("raw"),
        ))
    cols = [c for c in table_columns(con, "decisions") if c in df.columns]
    # a key already stored keeps its stored row (what ON CONFLICT DO NOTHING did against the primary key that
    # warehouses created before carry; new ones have none): only the keys new to the warehouse go in
    new = first.join(stored.select(key).with_columns(pl.col("seq").cast(first.schema["seq"])), on=key, how="anti") \
        if stored.height else first
    conflict = "ON CONFLICT DO NOTHING" if _has_primary_key(con, "decisions") else ""
    return _insert(con, "decisions", new.select(cols), conflict=conflict)


def _has_primary_key(con, table: str) -> bool:
    """Whether ``table`` carries a primary key (warehouses created before an index was dropped keep theirs)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = ? AND schema_name = 'main' "
                            "AND database_name = current_database() AND constraint_type = 'PRIMARY KEY'",
                            [table]).fetchall()[0][0])


def _load_events(con, batch: Batch, result: LoadResult, quarantine: list[pl.DataFrame] | None = None) -> None:
    quarantine = quarantine if quarantine is not None else []
    for name in EVENT_TABLES:
        df = batch.tables.get(name)
        if df is None or df.height == 0:
            result.rows.setdefault(name, 0)
            continue
        if name == "decisions":
            n = _load_decisions(con, df, quarantine)
        else:
            n = _insert(con, name, df, except_existing=True)
        result.rows[name] = n
        result.events_stored += n
    ev = batch.tables.get("session_events")
    before = con.execute("SELECT count(*) FROM sessions").fetchall()[0][0]
    if ev is not None and ev.height:
        con.register("_railbird_keys", ev.select("account", "session").unique())
        try:
            con.execute(
                """
                INSERT INTO sessions (account, session, ip, device, login_at, logout_at)
                SELECT e.account, e.session,
                       arg_min(e.ip, e.ts) FILTER (WHERE e.kind = 'login'),
                       arg_min(e.device, e.ts) FILTER (WHERE e.kind = 'login'),
                       min(e.ts) FILTER (WHERE e.kind = 'login'),
                       max(e.ts) FILTER (WHERE e.kind = 'logout')
                FROM session_events e SEMI JOIN _railbird_keys k ON e.account = k.account AND e.session = k.session
                GROUP BY e.account, e.session
                HAVING count(*) FILTER (WHERE e.kind = 'login') > 0
                ON CONFLICT (account, session) DO UPDATE SET
                    ip = excluded.ip, device = excluded.device,
                    login_at = excluded.login_at, logout_at = excluded.logout_at
                """
            ).fetchall()
        finally:
            con.unregister("_railbird_keys")
    result.rows["sessions"] = con.execute("SELECT count(*) FROM sessions").fetchall()[0][0] - before


def _load_accounts(con, batch: Batch, result: LoadResult) -> None:
    df = batch.tables.get("accounts")
    if df is None or df.height == 0:
        result.rows.setdefault("accounts", 0)
        return
    cols = [c for c in table_columns(con, "accounts") if c in df.columns]
    df = df.select(cols).unique(subset=["account"], keep="last", maintain_order=True)
    collist = ", ".join(f'"{c}"' for c in cols)
    sets = ", ".join(f'"{c}" = excluded."{c}"' for c in cols if c != "account")
    con.register("_railbird_acc", df)
    try:
        changed = con.execute(
            f"SELECT count(*) FROM (SELECT {collist} FROM _railbird_acc EXCEPT SELECT {collist} FROM accounts)"
        ).fetchall()[0][0]
        con.execute(
            f"INSERT INTO accounts ({collist}) SELECT {collist} FROM _railbird_acc "
            f"ON CONFLICT (account) DO UPDATE SET {sets}"
        ).fetchall()
    finally:
        con.unregister("_railbird_acc")
    result.rows["accounts"] = changed
    result.accounts_stored += changed


# ---------------------------------------------------------------- the load


def load(
    con: duckdb.DuckDBPyConnection,
    batch: Batch,
    *,
    run_id: str,
    started_at: _dt.datetime | None = None,
    fail_hook: Callable[[str], None] | None = None,
) -> LoadResult:
    """Write ``batch`` in one transaction; on any error roll back and re-raise.

    ``fail_hook(stage)`` is called between stages (tests inject failures with it).
    """
    return load_many(con, [batch], run_id=run_id, started_at=started_at, fail_hook=fail_hook)


def load_many(
    con: duckdb.DuckDBPyConnection,
    batches: Iterable[Batch],
    *,
    run_id: str,
    started_at: _dt.datetime | None = None,
    fail_hook: Callable[[str], None] | None = None,
    staged: bool = True,
) -> LoadResult:
    """Write a stream of batches in **one** transaction (memory stays at one batch).

    Each batch is deduplicated against everything stored before it, earlier
    batches of the same run included (they are visible inside the transaction).
    Any error, in loading or in producing the next batch, rolls everything back.
    New hands and their child rows go through :class:`_Stage` unless
    ``staged`` is false (then each batch inserts them directly: same rows,
    but DuckDB holds them in memory until ``COMMIT``).
    """
    result = LoadResult(run_id=run_id)
    started_at = started_at or _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    raw = _RawText()
    hook = fail_hook or (lambda stage: None)
    stage = _Stage()
    later = _Reparse()
    con.execute("BEGIN TRANSACTION").fetchall()
    try:
        for batch in batches:
            result.merge(_load_part(con, batch, run_id=run_id, started_at=started_at, raw=raw, hook=hook,
                                    stage=stage if staged else None, later=later))
            raw = _RawText()  # decoded source files are only needed for the part that cited them
        later.flush(con, stage if staged else None, result)
        hook("reparsed")
        for name, n in stage.flush(con).items():
            result.rows[name] = result.rows.get(name, 0) + n
        hook("staged")
        hook("commit")
        con.execute("COMMIT").fetchall()
    except BaseException:
        con.execute("ROLLBACK").fetchall()
        raise
    finally:
        stage.close()
    return result


def _load_part(con, batch: Batch, *, run_id: str, started_at: _dt.datetime, raw: _RawText, hook,
               stage: _Stage | None, later: _Reparse) -> LoadResult:
    result = LoadResult(run_id=run_id)
    now = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    quarantine: list[pl.DataFrame] = [_as_quarantine(batch.quarantine)]
    classified = _load_hands(con, batch, result, quarantine, raw, stage, later)
    hook("hands")
    _load_events(con, batch, result, quarantine)
    hook("events")
    _load_accounts(con, batch, result)
    hook("accounts")

    q = pl.concat([_as_quarantine(x) for x in quarantine], how="vertical_relaxed")
    if q.height:
        keys = ["source_file", "position", "input_kind", "reason", "raw"]
        q = q.unique(subset=keys, keep="first", maintain_order=True)
        con.register("_railbird_qf", q.select("source_file").unique())
        try:
            stored = con.sql("SELECT source_file, position::BIGINT AS position, input_kind, reason, raw FROM quarantine "
                             "WHERE source_file IN (SELECT source_file FROM _railbird_qf)").pl()
            staged = stage.quarantined(con, "_railbird_qf") if stage is not None else None
            if staged is not None and staged.height:
                stored = pl.concat([stored, staged], how="vertical_relaxed")
        finally:
            con.unregister("_railbird_qf")
        q_new = q.join(stored, on=keys, how="anti", nulls_equal=True) if stored.height else q
        q_new = q_new.with_columns(pl.lit(run_id).alias("run_id"), pl.lit(now).alias("quarantined_at"))
        result.rows["quarantine"] = stage.add(con, "quarantine", q_new) if stage is not None else _insert(con, "quarantine", q_new)
        result.quarantined = q_new.height
        result.quarantine_reasons.update(dict(q_new.group_by("reason").len().iter_rows()))
    else:
        result.rows["quarantine"] = 0
    hook("quarantine")

    _per_file_counts(batch, classified, q if q.height else None, result)
    if batch.files is not None and batch.files.height:
        counts = {k: {kk: result.per_file[k][kk] for kk in ("stored", "duplicates", "quarantined")} for k in result.per_file}
        files = batch.files.with_columns(
            pl.lit(run_id).alias("run_id"),
            *[pl.col("source_file").replace_strict({k: v[c] for k, v in counts.items()}, default=0,
                                                   return_dtype=pl.Int32).alias(c)
              for c in ("stored", "duplicates", "quarantined")],
            pl.lit(started_at).alias("started_at"),
            pl.lit(_dt.datetime.now(_dt.UTC).replace(tzinfo=None)).alias("finished_at"),
        )
        result.rows["ingest_log"] = _insert(con, "ingest_log", files)
    else:
        result.rows["ingest_log"] = 0
    hook("ingest_log")
    return result


def _per_file_counts(batch: Batch, classified: pl.DataFrame, quarantine: pl.DataFrame | None, result: LoadResult) -> None:
    per: dict[str, dict[str, int]] = {}

    def add(df: pl.DataFrame | None, col: str, key: str) -> None:
        if df is None or df.height == 0 or col not in df.columns:
            return
        for f, n in df.group_by(col).len().iter_rows():
            per.setdefault(f, {"stored": 0, "duplicates": 0, "quarantined": 0})[key] += n

    if classified.height:
        add(classified.filter(pl.col("_status") == "new"), "source_file", "stored")
        add(classified.filter(pl.col("_status") == "duplicate"), "source_file", "duplicates")
    for name in EVENT_TABLES + ["accounts"]:
        add(batch.tables.get(name), "_file", "stored")
    add(quarantine, "source_file", "quarantined")
    result.per_file = per
