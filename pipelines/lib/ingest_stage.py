"""Staging (the Dagster path): a Batch written as Parquet by hand day under the staging folder, the days and files
staged batches hold, and their load into the warehouse in one transaction (:func:`load_staged`). A file larger than
a chunk comes in several Batches (``ingest.chunk_parts``): each is staged as a folder of its own, named so that
folders sort in the order they were staged, and loaded in that order."""
from __future__ import annotations

import datetime as _dt
import itertools
import os
import uuid
from pathlib import Path
from typing import Iterable

import duckdb
import polars as pl

from pipelines.lib import warehouse as wh


_SEQUENCE = itertools.count()


def _with_days(batch: wh.Batch, today: _dt.date) -> dict[str, pl.DataFrame]:
    """Every frame of ``batch`` with a ``_day`` column: the hand's day, the event's ts day, else ``today``."""
    out: dict[str, pl.DataFrame] = {}
    hands = batch.tables.get("hands")
    hand_days = hands.select("hand_id", pl.col("day").cast(pl.Date).alias("_day")).unique("hand_id", keep="first") if hands is not None and hands.height else None
    for name, df in batch.tables.items():
        if df is None or df.height == 0:
            continue
        if name == "hands":
            df = df.with_columns(pl.col("day").cast(pl.Date).alias("_day"))
        elif "hand_id" in df.columns and name in wh.CHILD_TABLES and hand_days is not None:
            df = df.join(hand_days, on="hand_id", how="left").with_columns(pl.col("_day").fill_null(today))
        elif name == "tournaments":
            df = df.with_columns(pl.col("first_hand_at").cast(pl.Date).fill_null(today).alias("_day"))
        elif "ts" in df.columns:
            df = df.with_columns(pl.col("ts").cast(pl.Date).fill_null(today).alias("_day"))
        else:
            df = df.with_columns(pl.lit(today).alias("_day"))
        out[name] = df
    out["quarantine"] = wh._as_quarantine(batch.quarantine).with_columns(pl.lit(today).alias("_day"))
    if batch.files is not None:
        out["ingest_log"] = batch.files.with_columns(pl.lit(today).alias("_day"))
    return out


def stage(batch: wh.Batch, staging_dir: str | os.PathLike, *, today: _dt.date | None = None) -> tuple[Path, list[str]]:
    """Write ``batch`` as Parquet under ``staging_dir/<batch id>/``; return the folder and the days it holds."""
    today = today or _dt.datetime.now(_dt.UTC).date()
    # (microseconds and a sequence number: the Batches of one run, the pieces of one file among them, load in the
    # order they were staged; an older name, to the second, sorts before the newer ones of its second)
    folder = Path(staging_dir) / f"{_dt.datetime.now(_dt.UTC):%Y%m%dT%H%M%S%f}-{next(_SEQUENCE):08d}-{uuid.uuid4().hex[:8]}"
    tmp = folder.with_name(folder.name + ".partial")
    tmp.mkdir(parents=True)
    days: set[str] = set()
    for name, df in _with_days(batch, today).items():
        df.write_parquet(tmp / f"{name}.parquet")
        days.update(d.isoformat() for d in df.get_column("_day").unique().to_list() if d is not None)
    os.replace(tmp, folder)
    return folder, sorted(days)


def staged_batches(staging_dir: str | os.PathLike) -> list[Path]:
    root = Path(staging_dir)
    if not root.exists():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.endswith(".partial"))


def staged_days(staging_dir: str | os.PathLike) -> list[str]:
    """The days that staged batches still hold rows for."""
    days: set[str] = set()
    for folder in staged_batches(staging_dir):
        for f in folder.glob("*.parquet"):
            days.update(d.isoformat() for d in pl.scan_parquet(f).select("_day").unique().collect().get_column("_day").to_list())
    return sorted(days)


def staged_files(staging_dir: str | os.PathLike) -> dict[str, tuple]:
    """(size, mtime, sha256, status) of the files in staged batches: they count as already read."""
    out: dict[str, tuple] = {}
    for folder in staged_batches(staging_dir):
        f = folder / "ingest_log.parquet"
        if f.exists():
            for r in pl.read_parquet(f).select("source_file", "size_bytes", "mtime", "sha256", "status").iter_rows():
                out[r[0]] = tuple(r[1:])
    return out


def load_staged(con: duckdb.DuckDBPyConnection, staging_dir: str | os.PathLike, days: Iterable[str], *, run_id: str,
                fail_hook=None) -> wh.LoadResult:
    """Load the staged rows of ``days`` in one transaction, then drop them from the staging folder.

    Staged batches are read and loaded one at a time (memory stays at one
    batch), all inside the same transaction.  Reading a file also counts its
    rows of other days: a file with none is deleted after ``COMMIT`` without
    being read a second time (the usual case, a run that loads every staged
    day); the others are read again and rewritten with their remaining rows.
    """
    wanted = sorted({_dt.date.fromisoformat(d) for d in days})
    folders = staged_batches(staging_dir)
    rest_rows: dict[Path, int] = {}  # rows of other days per file read

    def batches():
        for folder in folders:
            part = wh.Batch()
            for f in sorted(folder.glob("*.parquet")):
                whole = pl.read_parquet(f)
                df = whole.filter(pl.col("_day").is_in(wanted))
                rest_rows[f] = whole.height - df.height
                del whole
                if df.height == 0:
                    continue
                name = f.stem
                if name == "quarantine":
                    part.quarantine = df.drop("_day")
                elif name == "ingest_log":
                    part.files = df.drop("_day")
                else:
                    part.tables[name] = df
            yield part

    result = wh.load_many(con, batches(), run_id=run_id, fail_hook=fail_hook)
    for folder in folders:  # committed: drop what was loaded
        for f in folder.glob("*.parquet"):
            if rest_rows.get(f) == 0:
                f.unlink()
                continue
            rest = pl.read_parquet(f).filter(~pl.col("_day").is_in(wanted))
            if rest.height:
                rest.write_parquet(f)
            else:
                f.unlink()
        if not any(folder.iterdir()):
            folder.rmdir()
    return result
