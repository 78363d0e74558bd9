"""Per-day work on one machine or on a Dask cluster, and the day-partitioned Parquet layout it reads and writes.

What is computed
----------------
:func:`run_days` applies a per-day function ``fn(day_input) -> dict[str, pl.DataFrame]`` to every day of a
mapping ``{day: day_input}`` and returns ``{day: {table: frame}}``; with ``out``, each day's frames are written
where they were computed (:func:`write_day`) and only their paths come back. ``engine="embedded"`` calls the
function in this process, day after day (the default: a laptop, ``make demo`` and ``make test`` need no
cluster); ``engine="dask"`` submits one task per day to a Dask cluster: the one at ``address``
(``tcp://scheduler:8786``) or, without one, a local cluster of ``workers`` processes started for the call (the
engine's local mode, used by the tests). The function is the same object either way, unchanged: Dask ships it
and its input by pickle, and the frames come back as Arrow IPC inside Polars' pickle.

The layout (docs/scale-out.md)
------------------------------
``<root>/<table>/day=<YYYY-MM-DD>/part.parquet``: one Parquet file per table and day. Writers on different
days never touch the same file, so any number of machines write days at once; a day written again (a
backfill) replaces its file in one atomic rename, so a reader sees the old day or the new one, never half of
either. One reader queries every day with DuckDB (:func:`read_days`: ``read_parquet`` over the glob with Hive
partitioning, which adds the ``day`` column). The root is a folder every worker and the reader reach (a shared
file system in this module; an object store's single-object PUT is atomic the same way).

The interim per-day function :func:`day_decisions` reads one day of warehouse tables from the layout
(:func:`export_day` writes them) into an in-memory DuckDB and returns
:func:`detectors.features.gameplay.decisions.hu_decisions` over that day's hands.

Reference: Dask distributed, https://distributed.dask.org (``Client.map``, ``LocalCluster``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import duckdb
import polars as pl

DayFn = Callable[[Any], "dict[str, pl.DataFrame]"]
ENGINES = ("embedded", "dask")
_TABLE = re.compile(r"[a-z_][a-z0-9_]*")
# the warehouse tables a day's hand features start from, and how each one finds its hand day
DAY_TABLES = ("hands", "seats", "actions", "hole_cards", "boards")


def day_key(day: str | _dt.date) -> str:
    """``day`` as ``YYYY-MM-DD``; anything that is not a calendar date raises ``ValueError`` (it names a folder)."""
    return (day if isinstance(day, _dt.date) else _dt.date.fromisoformat(str(day))).isoformat()


def day_path(root: str | os.PathLike, table: str, day: str | _dt.date) -> Path:
    """Where ``table``'s rows of ``day`` live under ``root``; a table name other than ``[a-z_][a-z0-9_]*`` raises."""
    if not _TABLE.fullmatch(table):
        raise ValueError(f"not a table name: {table!r}")
    return Path(root) / table / f"day={day_key(day)}" / "part.parquet"


def write_day(root: str | os.PathLike, day: str | _dt.date, frames: Mapping[str, pl.DataFrame]) -> dict[str, str]:
    """Write each frame as ``table``'s file of ``day`` (replacing a previous one atomically); return the paths.

    A frame's own ``day`` column, if any, is dropped: the folder name carries the day."""
    out: dict[str, str] = {}
    for table, df in frames.items():
        path = day_path(root, table, day)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".part-{uuid.uuid4().hex}.tmp")
        try:
            df.drop("day", strict=False).write_parquet(tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        out[table] = str(path)
    return out


def days_written(root: str | os.PathLike, table: str) -> list[str]:
    """The days ``table`` has a file for under ``root``, sorted."""
    folder = day_path(root, table, "2000-01-01").parent.parent
    if not folder.is_dir():
        return []
    return sorted(p.parent.name.removeprefix("day=") for p in folder.glob("day=*/part.parquet"))


def read_days(con: duckdb.DuckDBPyConnection, root: str | os.PathLike, table: str) -> duckdb.DuckDBPyRelation:
    """Every day of ``table`` under ``root`` as one DuckDB relation, with its ``day`` (DATE) from the folder names."""
    pattern = str(day_path(root, table, "2000-01-01").parent.parent / "day=*" / "part.parquet")
    return con.sql("SELECT * FROM read_parquet($files, hive_partitioning = true, hive_types = {'day': DATE})",
                   params={"files": pattern})


def export_day(con: duckdb.DuckDBPyConnection, root: str | os.PathLike, day: str | _dt.date,
               tables: tuple[str, ...] = DAY_TABLES) -> dict[str, str]:
    """Write the warehouse rows of one hand day (``hands.day``; other tables through their ``hand_id``)."""
    key = _dt.date.fromisoformat(day_key(day))
    frames = {}
    for table in tables:
        if not _TABLE.fullmatch(table):
            raise ValueError(f"not a table name: {table!r}")
        if table == "hands":
            q = "SELECT * FROM hands WHERE day = $day"
        else:
            q = f"SELECT t.* FROM {table} t SEMI JOIN (SELECT hand_id FROM hands WHERE day = $day) h USING (hand_id)"
        frames[table] = con.sql(q, params={"day": key}).pl()
    return write_day(root, key, frames)


@dataclass(frozen=True)
class DayInput:
    """One day of warehouse tables in the layout: what a worker needs to find them (small, pickled to it)."""

    root: str
    day: str


def day_connection(source: DayInput, tables: tuple[str, ...] = DAY_TABLES) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with one view per table over ``source``'s day file, named as the warehouse table."""
    con = duckdb.connect()
    for table in tables:
        path = day_path(source.root, table, source.day)
        # a view's definition cannot take a bound parameter: the path is checked (day_path) and quoted as a literal
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet({_sql_literal(str(path))})")
    return con


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def day_decisions(source: DayInput) -> dict[str, pl.DataFrame]:
    """The heads-up decisions of one day (``hu_decisions`` over that day's hands), as ``{"hu_decisions": frame}``."""
    from detectors.features.gameplay.decisions import hu_decisions

    con = day_connection(source)
    try:
        return {"hu_decisions": hu_decisions(con)}
    finally:
        con.close()


def _run_and_write(fn: DayFn, day_input: Any, out: str, day: str) -> dict[str, str]:
    return write_day(out, day, fn(day_input))


def run_days(fn: DayFn, inputs: Mapping[str, Any], *, engine: str = "embedded", workers: int = 2,
             address: str | None = None, out: str | os.PathLike | None = None) -> dict[str, dict[str, Any]]:
    """Apply ``fn`` to every day's input; return ``{day: {table: frame}}``, or ``{day: {table: path}}`` with ``out``.

    Parameters: ``fn`` a picklable module-level function; ``inputs`` ``{day: input}``; ``engine`` ``embedded``
    (this process) or ``dask``; ``workers`` processes of the local Dask cluster (one thread each), ignored with
    ``address``; ``address`` a running Dask scheduler; ``out`` a layout root every worker reaches. Days come
    back in the order of ``inputs``. A day whose function raises raises here, after the other days finished.
    """
    days = [day_key(d) for d in inputs]
    args = list(inputs.values())
    if engine == "embedded":
        if out is None:
            return {d: fn(x) for d, x in zip(days, args)}
        return {d: _run_and_write(fn, x, str(out), d) for d, x in zip(days, args)}
    if engine != "dask":
        raise ValueError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    with _dask_client(workers, address) as client:
        if out is None:
            futures = client.map(fn, args, pure=False)
        else:
            futures = client.map(_run_and_write, [fn] * len(days), args, [str(out)] * len(days), days, pure=False)
        results = client.gather(futures, errors="raise")
    return dict(zip(days, results))


@contextlib.contextmanager
def _dask_client(workers: int, address: str | None) -> Iterator[Any]:
    """A Dask client of the scheduler at ``address``, or of a local cluster of ``workers`` processes it owns."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # the optional extra
        raise ImportError("engine 'dask' needs the cluster extra: pip install 'railbird[cluster]'") from exc
    if address is not None:
        with Client(address) as client:
            yield client
        return
    # one Polars thread per worker process: the cluster already keeps the cores busy
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      worker_dashboard_address=None,
                      silence_logs=logging.ERROR, env={"POLARS_MAX_THREADS": "1"}) as cluster, Client(cluster) as client:
        yield client
