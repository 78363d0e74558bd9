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
import os
from pathlib import Path
from typing import Callable, Iterable

import duckdb
import polars as pl

from pipelines.lib.errors import RailbirdError
# (the names other modules and tests read here are re-exported: the load is one module to its callers)
from pipelines.lib.warehouse_batch import (  # noqa: F401
    CHILD_TABLES, EVENT_TABLES, FILE_TABLES, HAND_TABLES, INGEST_TABLES, QUARANTINE_COLUMNS, SPILL_TABLES, Batch,
    LoadResult, _as_quarantine, empty_quarantine,
)
from pipelines.lib.warehouse_events import _has_primary_key, _load_accounts, _load_events  # noqa: F401
from pipelines.lib.warehouse_hands import _load_hands, _one_copy_rows, _RawText, _Reparse  # noqa: F401
from pipelines.lib.warehouse_stage import _insert, _Stage, stage_folder, table_columns  # noqa: F401

HERE = Path(__file__).resolve().parent
SCHEMA_SQL = HERE / "schema.sql"
VIEWS_SQL = HERE / "views.sql"


# ---------------------------------------------------------------- connections

#: DuckDB's ``memory_limit`` on the pipeline's warehouse connections (a DuckDB size: '1GB', '512MB');
#: unset: :func:`memory_limit`'s default from the machine's memory
MEMORY_VAR = "RAILBIRD_DUCKDB_MEMORY"


def machine_memory() -> int:
    """Bytes of memory this process may use: the machine's physical memory, or its cgroup's limit (a
    container's) when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        cap = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
    except OSError:
        cap = "max"
    return min(total, int(cap)) if cap.isdigit() else total


def memory_limit() -> str:
    """DuckDB's ``memory_limit`` for the pipeline's warehouse connections: ``$RAILBIRD_DUCKDB_MEMORY`` when set,
    else a twenty-fourth of :func:`machine_memory` kept between 256 MB and 1 GB (1 GB from 24 GB on).

    DuckDB's own default is 80 % of the memory, and it fills that with the blocks of the warehouse a run scans
    (its buffer pool) on top of what the pipeline's Polars frames and Arrow tables hold: a night over 10M hands
    of history peaked at 8.3 GB with it, and at the size of one day's work with a limit (docs/scale.md). Beyond
    the limit DuckDB evicts cached blocks and spills its operators to its temporary folder.
    """
    value = os.environ.get(MEMORY_VAR, "").strip()
    if value:
        return value
    mb = min(1024, max(256, machine_memory() // (24 * 2**20)))
    return f"{mb}MB"



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
        con.execute("SET memory_limit = ?", [memory_limit()]).fetchall()
        con.execute("SET preserve_insertion_order = false").fetchall()
        ensure_schema(con)
    return con


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Run schema.sql (tables + comments) and views.sql; both are idempotent."""
    con.execute(SCHEMA_SQL.read_text(encoding="utf-8")).fetchall()
    if VIEWS_SQL.exists():
        con.execute(VIEWS_SQL.read_text(encoding="utf-8")).fetchall()


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
    unlogged: dict[str, dict[str, int]] = {}  # per-file counts of the Batches since the file's last log row
    con.execute("BEGIN TRANSACTION").fetchall()
    try:
        for batch in batches:
            result.merge(_load_part(con, batch, run_id=run_id, started_at=started_at, raw=raw, hook=hook,
                                    stage=stage if staged else None, later=later, unlogged=unlogged))
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
               stage: _Stage | None, later: _Reparse, unlogged: dict[str, dict[str, int]] | None = None) -> LoadResult:
    """Load one Batch of a run. ``unlogged`` (updated here): per file, the counts of the run's earlier Batches
    that its ``ingest_log`` has no row for yet: a file read in pieces comes in several Batches, its log row with
    the last, and that row counts every piece."""
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
        zero = {"stored": 0, "duplicates": 0, "quarantined": 0}
        earlier = unlogged if unlogged is not None else {}
        counts = {k: {kk: result.per_file.get(k, zero)[kk] + earlier.get(k, zero)[kk] for kk in zero}
                  for k in set(result.per_file) | set(earlier)}
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
    if unlogged is not None:
        logged = set() if batch.files is None else set(batch.files.get_column("source_file").to_list())
        for f, c in result.per_file.items():
            if f not in logged:
                mine = unlogged.setdefault(f, {"stored": 0, "duplicates": 0, "quarantined": 0})
                for k, v in c.items():
                    mine[k] += v
        for f in logged:
            unlogged.pop(f, None)
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
