"""Soft play's cells by hand day: each day's decisions with their cells and their counts, made once, summed over a window.

:class:`~detectors.soft_play.cells.WindowDecisions` needs every decision of the window with its cells (``vs_bet``,
``tour``, ``pbin``, ``stage``: joins to the warehouse's preflop raises and tournament stacks,
:data:`~detectors.soft_play.cells.DECISION_CELLS_SQL`) and their counts per (pair, cell, action). Both are
functions of one hand's rows, and a hand lies in one day, so they are made per day from that day's stored
decisions (``hu_decisions`` of the :class:`~detectors.features.days.DayStore`) and kept beside the day features:

    <features>_soft_play/decisions/day=YYYY-MM-DD/<setting>-<stage>-<day tag>.parquet   the day's decisions, cells
    <features>_soft_play/counts/day=YYYY-MM-DD/<setting>-<stage>-<day tag>.parquet      per (pair, cell, action):
                                                                                       ``_w`` and the first decision

``<setting>`` is the store's card-value setting (``s16-r0``), ``<stage>`` the stage cuts, ``<day tag>`` a hash of
the day's manifest (its warehouse fingerprint and format): a day recomputed from other content gets new files, the
old ones are removed. A night makes the files of the days that lack them (the new day, a backfilled one) and
reads the others: the joins to the warehouse are made for the new day only, and the window's counts are the sums
of the days' (the same integers; each cell's first decision is the smallest of its days' first decisions, so the
rows come in the order of a count over the window's decisions, and every float sum over them is the same).
Files are written under a temporary name and renamed into place (atomic on one file system).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from pathlib import Path

import duckdb

#: the two tables of a day: its decisions with their cells, and their counts per (pair, cell, action)
TABLES = ("decisions", "counts")


def folder(root: Path) -> Path:
    """The folder of soft play's day files beside the day features' folder ``root``."""
    root = Path(root)
    return root.with_name(root.name + "_soft_play")


def stage_tag(stage_bb: tuple[float, ...] | None) -> str:
    """The stage cuts as a file-name part (``st20``, ``st10-20``; ``st`` when there is no stage cell)."""
    return "st" + "-".join(f"{float(c):g}" for c in (stage_bb or ()))


def day_tag(manifest: dict) -> str:
    """A hash of what a stored day was computed from (fingerprint, format version, card-value setting)."""
    key = json.dumps([manifest.get(k) for k in ("fingerprint", "version", "samples", "random_state")])
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def day_files(root: Path, name: str, day: dt.date, stage_bb: tuple[float, ...] | None,
              manifest: dict) -> dict[str, Path]:
    """The paths of ``day``'s two files (:data:`TABLES`) for the store setting ``name`` and the stage cuts."""
    base = f"{name}-{stage_tag(stage_bb)}-{day_tag(manifest)}.parquet"
    return {t: folder(root) / t / f"day={day.isoformat()}" / base for t in TABLES}


def _copy(con: duckdb.DuckDBPyConnection, sql: str, params: dict, path: Path) -> None:
    """Write the result of ``sql`` to the Parquet file ``path`` through a temporary file renamed into place; the
    older files of the same setting and stage in its folder (another day content's) are removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".parquet")
    os.close(fd)
    try:
        con.execute(f"COPY ({sql}) TO $_out (FORMAT parquet)", {**params, "_out": tmp})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    prefix = path.name.rsplit("-", 1)[0]
    for old in path.parent.glob(prefix + "-*.parquet"):
        # (the same setting part exactly: ``st10-`` also begins the names of the cuts ``st10-20``)
        if old != path and old.name.rsplit("-", 1)[0] == prefix:
            old.unlink(missing_ok=True)


def ensure(con: duckdb.DuckDBPyConnection, store, days: list[dt.date], stage_bb: tuple[float, ...] | None
           ) -> tuple[list[str], list[str]]:
    """The window's day files of soft play, the missing ones made from the days' stored decisions.

    Parameters
    ----------
    con : the warehouse (its ``actions``, ``seats`` and ``hands`` give the cells' joins).
    store : the :class:`~detectors.features.days.DayStore` of the window (on files), its days stored and current.
    days : the window's days.
    stage_bb : the effective-stack cuts of the ``stage`` cell (None: none).

    Returns
    -------
    (decision files, count files), in day order; a day without heads-up decisions has neither.

    Method: :data:`~detectors.soft_play.cells.DECISION_CELLS_SQL` over the day's ``hu_decisions`` file, its rows in
    hand and decision order; the counts ``GROUP BY`` the cells and actions with the first decision
    ``min((hand_id, seq))`` as ``_first``.
    """
    from detectors.soft_play.cells import ACTION_COLUMNS, CELL_COLUMNS, DECISION_CELLS_SQL, KEPT_COLUMNS, _stage_sql

    decisions, counts = [], []
    stage, sp = _stage_sql(stage_bb)
    keep = ", ".join([*KEPT_COLUMNS, *(["stage"] if stage_bb else [])])
    keys = ", ".join([*CELL_COLUMNS, *(["stage"] if stage_bb else []), *ACTION_COLUMNS])
    head = DECISION_CELLS_SQL.replace("{stage}", stage).replace("{source}", "read_parquet($files)")
    for day in days:
        files = day_files(store.root, store.name, day, stage_bb, store.manifest(day) or {})
        if not (files["decisions"].exists() and files["counts"].exists()):
            src = store.paths("hu_decisions", [day])
            n = con.execute("SELECT count(*) FROM read_parquet($files)", {"files": src}).fetchone()[0]
            if not n:
                continue
            params = {**sp, "files": src}
            _copy(con, head + f"SELECT {keep} FROM cells ORDER BY hand_id, seq", params, files["decisions"])
            _copy(con, f"SELECT {keys}, count(*) AS _w, min((hand_id, seq)) AS _first "
                       f"FROM read_parquet($files) GROUP BY ALL ORDER BY _first",
                  {"files": [str(files["decisions"])]}, files["counts"])
        decisions.append(str(files["decisions"]))
        counts.append(str(files["counts"]))
    return decisions, counts
