"""Where day features live: Parquet partitions by day, written atomically, or the same layout in memory.

Layout under a root (``$RAILBIRD_HOME/features`` beside the warehouse, :func:`feature_root`)::

    <table>/day=YYYY-MM-DD/s<samples>-r<random_state>.parquet   one file per table, day and card-value setting
    _manifest/day=YYYY-MM-DD/s<samples>-r<random_state>.json    what the day was computed from

A file is written under a temporary name in its folder and renamed into place
(``os.replace``: atomic on one file system), so a reader or a killed run never
sees half a file. A day counts as computed only when its manifest names the
warehouse content it was computed from (:func:`day_fingerprints`): the manifest
is removed before a day's tables are rewritten and written after them, so a run
killed in between leaves a day that is recomputed, never a mix. Many writers
(one per day) and one reader (DuckDB or Polars over the ``day=`` folders) need
no coordination: each day's files are its own.

A warehouse in memory (tests, notebooks) keeps the same tables in a
:class:`DayStore` without a root.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

#: the content of each hand day in the warehouse: hands and a hash over their ids and content hashes
DAY_FINGERPRINTS_SQL = """
SELECT day, count(*)::BIGINT AS n_hands, bit_xor(hash(hand_id, content_hash))::UBIGINT AS content
FROM hands GROUP BY day ORDER BY day
"""

#: bump when compute_day's output changes meaning, so stored days are recomputed
FORMAT_VERSION = 1


def day_fingerprints(con: duckdb.DuckDBPyConnection) -> dict[dt.date, list[int]]:
    """Each hand day of warehouse ``con`` -> [hands, content hash] (:data:`DAY_FINGERPRINTS_SQL`)."""
    return {d: [int(n), int(c)] for d, n, c in con.execute(DAY_FINGERPRINTS_SQL).fetchall()}


def feature_root(con: duckdb.DuckDBPyConnection) -> Path | None:
    """``features/`` beside the warehouse file of ``con`` (``$RAILBIRD_HOME/features``); None in memory."""
    files = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    path = files[0][0] if files and files[0][0] else None
    return Path(path).resolve().parent / "features" if path else None


def _atomic_write(path: Path, write) -> None:
    """Call ``write(tmp)`` on a temporary file in ``path``'s folder, then rename it to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class DayStore:
    """The day tables of one warehouse for one card-value setting (``samples``, ``random_state``).

    Parameters
    ----------
    root : the folder of the layout above, or None to hold the tables in memory.
    samples, random_state : the Monte Carlo setting the stored decisions were valued with (part of the file name).
    """

    def __init__(self, root: Path | None, *, samples: int = 16, random_state: int = 0) -> None:
        self.root = None if root is None else Path(root)
        self.name = f"s{int(samples)}-r{int(random_state)}"
        self.samples, self.random_state = int(samples), int(random_state)
        self._mem: dict[dt.date, tuple[dict, dict[str, pl.DataFrame]]] = {}

    def _file(self, table: str, day: dt.date, suffix: str = ".parquet") -> Path:
        return self.root / table / f"day={day.isoformat()}" / f"{self.name}{suffix}"

    def manifest(self, day: dt.date) -> dict | None:
        """What ``day`` was computed from (``fingerprint``, ``samples``, ``random_state``, ``version``), or None."""
        if self.root is None:
            return self._mem[day][0] if day in self._mem else None
        try:
            return json.loads(self._file("_manifest", day, ".json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None

    def is_current(self, day: dt.date, fingerprint: list[int]) -> bool:
        """Whether ``day`` is stored, computed from the content ``fingerprint`` with this setting and format."""
        m = self.manifest(day)
        return m is not None and m.get("fingerprint") == list(fingerprint) and m.get("version") == FORMAT_VERSION

    def write(self, day: dt.date, tables: dict[str, pl.DataFrame], fingerprint: list[int]) -> None:
        """Store ``day``'s tables (:func:`~detectors.features.days.compute.compute_day`) and then its manifest."""
        with self.writing(day, fingerprint) as w:
            w.put(tables)

    @contextlib.contextmanager
    def writing(self, day: dt.date, fingerprint: list[int]) -> Iterator[DayWriter]:
        """A :class:`DayWriter` of ``day``: tables are given whole (``put``) or in parts (``append``); when the
        block ends without an error, the parts of each table become its one file, the whole tables are written
        and then the manifest. The manifest is removed first, so a run that dies in between leaves the day
        missing (recomputed), never a mix; the parts' temporary files are removed on an error."""
        if self.root is not None:
            self._file("_manifest", day, ".json").unlink(missing_ok=True)
        w = DayWriter(self, day)
        try:
            yield w
            tables = w.finish()
        finally:
            w.discard()
        meta = {"day": day.isoformat(), "fingerprint": list(fingerprint), "samples": self.samples,
                "random_state": self.random_state, "version": FORMAT_VERSION, "rows": tables}
        if self.root is None:
            self._mem[day] = (meta, dict(w.frames))
            return
        _atomic_write(self._file("_manifest", day, ".json"),
                      lambda tmp: Path(tmp).write_text(json.dumps(meta, sort_keys=True), encoding="utf-8"))

    def drop(self, day: dt.date) -> None:
        """Forget ``day`` (a day no longer in the warehouse): its manifest goes, so it no longer counts."""
        if self.root is None:
            self._mem.pop(day, None)
        else:
            self._file("_manifest", day, ".json").unlink(missing_ok=True)

    def days(self) -> list[dt.date]:
        """The days with a manifest for this setting, in order."""
        if self.root is None:
            return sorted(self._mem)
        folder = self.root / "_manifest"
        if not folder.is_dir():
            return []
        return sorted(dt.date.fromisoformat(p.parent.name[4:]) for p in folder.glob(f"day=*/{self.name}.json"))

    def read(self, table: str, days: list[dt.date], columns: list[str] | None = None) -> pl.DataFrame:
        """``table`` of ``days`` concatenated in day order (the days must be stored), ``columns`` only if given."""
        if self.root is None:
            frames = [self._mem[d][1][table] for d in days]
            frames = [f.select(columns) for f in frames] if columns else frames
            return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
        frames = [pl.read_parquet(self._file(table, d), columns=columns) for d in days]
        # by name and relaxed: a day without a row of some kind stores null-typed columns, in another order
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()

    def paths(self, table: str, days: list[dt.date]) -> list[str]:
        """The Parquet files of ``table`` for ``days`` (for DuckDB's ``read_parquet``); empty in memory."""
        return [] if self.root is None else [str(self._file(table, d)) for d in days]


class DayWriter:
    """The tables of one day being written into a :class:`DayStore` (:meth:`DayStore.writing`).

    ``append(table, frame)`` adds the next part of ``table`` (in a store with a folder, to a temporary Parquet
    file of its own: the parts are not held in memory); ``put(tables)`` gives whole tables (written at once).
    ``finish`` turns each table's parts into its one file, in the order appended (Polars' streaming engine
    reads the part files and writes the day's file; columns typed as ``pl.concat(how="vertical_relaxed")``
    would type them), and returns the rows of every table.
    """

    def __init__(self, store: DayStore, day: dt.date) -> None:
        self.store, self.day = store, day
        self.frames: dict[str, pl.DataFrame] = {}  # in memory: the day's tables
        self._parts: dict[str, list] = {}  # table -> the parts (frames in memory, temporary files on disk)
        self._rows: dict[str, int] = {}

    def append(self, table: str, frame: pl.DataFrame) -> None:
        """Add ``frame`` as the next part of ``table``."""
        self._rows[table] = self._rows.get(table, 0) + frame.height
        if self.store.root is None:
            self._parts.setdefault(table, []).append(frame)
            return
        folder = self.store._file(table, self.day).parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-part-", suffix=".parquet")
        os.close(fd)
        self._parts.setdefault(table, []).append(tmp)
        frame.write_parquet(tmp, statistics=False)

    def rows(self) -> dict[str, int]:
        """The rows given so far, per table."""
        return dict(self._rows)

    def put(self, tables: dict[str, pl.DataFrame]) -> None:
        """Write each of ``tables`` whole (atomically, :func:`_atomic_write`)."""
        for t, f in tables.items():
            self._rows[t] = f.height
            if self.store.root is None:
                self.frames[t] = f
            else:
                _atomic_write(self.store._file(t, self.day), lambda tmp, f=f: f.write_parquet(tmp, statistics=True))

    def finish(self) -> dict[str, int]:
        """Write every appended table as its one file; return the rows of each table written."""
        for t, parts in list(self._parts.items()):
            if self.store.root is None:
                self.frames[t] = pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]
            else:
                lazy = pl.concat([pl.scan_parquet(p) for p in parts], how="vertical_relaxed")
                _atomic_write(self.store._file(t, self.day),
                              lambda tmp, lazy=lazy: lazy.sink_parquet(tmp, statistics=True, engine="streaming"))
            del self._parts[t]
            self.discard_parts(parts)
        return self.rows()

    def discard(self) -> None:
        """Remove the temporary files of parts not yet written."""
        for parts in self._parts.values():
            self.discard_parts(parts)
        self._parts.clear()

    @staticmethod
    def discard_parts(parts: list) -> None:
        for p in parts:
            if isinstance(p, str):
                Path(p).unlink(missing_ok=True)
