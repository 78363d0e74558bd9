"""Nights one by one equal one full recompute: the gate of the day features (tests/detect/compare_signals.py's
comparison, in one process, on a planted world loaded night by night into a warehouse file)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import duckdb
import pytest

from detectors.chip_dumping import ChipDumpingDetector
from detectors.features import gameplay as gp
from detectors.soft_play import SoftPlayDetector

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "detect"))
import compare_signals as cs  # noqa: E402  (a script beside the detect tests, not a package)


@pytest.fixture
def world(days_world):
    return days_world


def load_until(world_con: duckdb.DuckDBPyConnection, path: Path, cut: dt.datetime | None) -> None:
    """Make the warehouse file ``path`` hold the world's hands started before ``cut`` (all when None): what
    the ingest stage would have loaded by then."""
    world_con.execute("ATTACH ? AS out", [str(path)])
    try:
        if not world_con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'out'").fetchone()[0]:
            world_con.execute("COPY FROM DATABASE memory TO out")
        tables = [r[0] for r in world_con.execute(
            "SELECT DISTINCT table_name FROM duckdb_columns() WHERE database_name = 'memory' AND column_name = 'hand_id'"
            " AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE database_name = 'memory')").fetchall()]
        for t in tables:  # names from the catalog, quoted
            world_con.execute(f'DELETE FROM out."{t}"')
            world_con.execute(f'INSERT INTO out."{t}" SELECT x.* FROM memory."{t}" x SEMI JOIN '
                              "(SELECT hand_id FROM memory.hands WHERE $cut IS NULL OR started_at < $cut) h USING (hand_id)", {"cut": cut})
    finally:
        world_con.execute("DETACH out")


def signals(path: Path) -> tuple[list[dict], list[dt.date]]:
    """The soft-play and chip-dumping signals of the warehouse ``path`` as compare_signals compares them, and the
    days its feature store had to compute."""
    con = duckdb.connect(str(path))
    try:
        out = [s.to_dict() for det in (SoftPlayDetector(), ChipDumpingDetector()) for s in det.detect(con)]
        return out, gp.store_for(con).computed
    finally:
        gp.release()
        con.close()


@pytest.mark.slow
def test_nights_one_by_one_give_the_signals_of_a_full_recompute(world, tmp_path):
    first = world.con.execute("SELECT min(started_at) FROM hands").fetchone()[0]
    (tmp_path / "inc").mkdir()
    (tmp_path / "full").mkdir()
    inc = tmp_path / "inc" / "warehouse.duckdb"
    days = sorted(r[0] for r in world.con.execute("SELECT DISTINCT day FROM hands").fetchall())
    # night 1: the first day and the first hours of the second (a day that is still growing)
    load_until(world.con, inc, dt.datetime.combine(days[1], dt.time(6)))
    con = duckdb.connect(str(inc))
    try:
        gp.cached_pair_features(con)
        assert gp.store_for(con).computed == days[:2]
    finally:
        gp.release()
        con.close()
    # night 2: the rest of the second day arrives, the third day's first hands: days 2 and 3 are computed
    load_until(world.con, inc, dt.datetime.combine(days[2], dt.time(0, 30)))
    con = duckdb.connect(str(inc))
    try:
        gp.cached_pair_features(con)
        assert gp.store_for(con).computed == days[1:]
    finally:
        gp.release()
        con.close()
    # night 3: everything; only the last day is computed
    load_until(world.con, inc, None)
    got, computed = signals(inc)
    assert computed == days[2:]
    full = tmp_path / "full" / "warehouse.duckdb"
    load_until(world.con, full, None)
    want, computed = signals(full)
    assert computed == days and first.date() == days[0]
    assert sum(s["flagged"] for s in want) >= 2
    assert cs.differences(want, got, 1e-12) == []
    # the features the nights stored are those the full recompute stored
    a = sorted(p.relative_to(tmp_path / "inc") for p in (tmp_path / "inc" / "features").rglob("*.parquet"))
    b = sorted(p.relative_to(tmp_path / "full") for p in (tmp_path / "full" / "features").rglob("*.parquet"))
    assert a == b and len(a) == 3 * 7
