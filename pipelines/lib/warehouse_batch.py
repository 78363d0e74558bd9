"""The unit of a load: the tables the ingest stage writes, a :class:`Batch` of their rows and the
:class:`LoadResult` of loading it; quarantine rows in their one shape; the stage files' Parquet settings
and the first row per key, which a batch's spill and the loader share."""
from __future__ import annotations

import io
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl


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


def _as_quarantine(df: pl.DataFrame | None) -> pl.DataFrame:
    if df is None or df.height == 0:
        return empty_quarantine()
    out = df.with_columns([pl.lit(None, dtype=pl.String).alias(c) for c in QUARANTINE_COLUMNS if c not in df.columns])
    return out.select(
        pl.col("source_file").cast(pl.String), pl.col("position").cast(pl.Int64), pl.col("input_kind").cast(pl.String),
        pl.col("hand_id").cast(pl.String), pl.col("reason").cast(pl.String), pl.col("detail").cast(pl.String),
        pl.col("raw").cast(pl.String).fill_null(""),
    )


def _write_stage_parquet(df: pl.DataFrame, path: str | os.PathLike) -> None:
    """The run stage's Parquet settings (lz4, no statistics: the file is read once, whole)."""
    df.write_parquet(path, compression="lz4", statistics=False)


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
