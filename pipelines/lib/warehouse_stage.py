"""Inserting frames into the warehouse: column-matched inserts, and the Parquet stage of a run of
several batches (:class:`_Stage`, see :mod:`pipelines.lib.warehouse`)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import duckdb
import polars as pl

from pipelines.lib.warehouse_batch import _write_stage_parquet


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index",
        [table],
    ).fetchall()
    return [r[0] for r in rows]


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
