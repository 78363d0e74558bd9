"""Nights one by one equal one full recompute: the gate of the day features (tests/detect/compare_signals.py's
detector processes and comparison, on a planted world loaded night by night into a warehouse file)."""

from __future__ import annotations

import datetime as dt
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest


ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "detect"))
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


def night(path: Path, out: Path, kinds: tuple[str, ...] = ("soft_play", "chip_dumping")
          ) -> tuple[list[dict], list[dt.date]]:
    """One night's run of the ``kinds`` detectors over the warehouse file ``path``, in a process of its own as
    compare_signals runs a checkout (one thread, input-ordered group-bys): their signals and the days whose
    features it computed (their manifests rewritten)."""
    folder = path.parent / "features" / "_manifest"
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*.json")} if folder.is_dir() else {}
    run = cs.signals_of(ROOT, path, out, list(kinds), sys.executable)
    after = {p: p.stat().st_mtime_ns for p in folder.rglob("*.json")}
    computed = sorted(dt.date.fromisoformat(p.parent.name[4:]) for p, t in after.items() if before.get(p) != t)
    return [s for kind in kinds for s in run[kind]["signals"]], computed


@pytest.mark.slow
def test_nights_one_by_one_give_the_signals_of_a_full_recompute(world, tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "full").mkdir()
    inc = tmp_path / "inc" / "warehouse.duckdb"
    days = sorted(r[0] for r in world.con.execute("SELECT DISTINCT day FROM hands").fetchall())
    assert len(days) == 3
    # the full recompute: its own warehouse file and features, run beside the nights (the detector processes
    # use one thread each, so on the other core)
    full = tmp_path / "full" / "warehouse.duckdb"
    load_until(world.con, full, None)
    with ThreadPoolExecutor(1) as pool:
        full_night = pool.submit(night, full, tmp_path / "full.jsonl")
        # night 1: the first day and the first hours of the second (a day that is still growing)
        load_until(world.con, inc, dt.datetime.combine(days[1], dt.time(6)))
        assert night(inc, tmp_path / "n1.jsonl", ("chip_dumping",))[1] == days[:2]
        # night 2: the rest of the second day arrives, the third day's first hands: days 2 and 3 are computed
        load_until(world.con, inc, dt.datetime.combine(days[2], dt.time(0, 30)))
        assert night(inc, tmp_path / "n2.jsonl", ("chip_dumping",))[1] == days[1:]
        # night 3: everything; only the last day is computed
        load_until(world.con, inc, None)
        got, computed = night(inc, tmp_path / "n3.jsonl")
        assert computed == days[2:]
        want, computed = full_night.result()
    assert computed == days
    assert sum(s["flagged"] for s in want) >= 2
    assert cs.differences(want, got, 1e-12) == []
    # the features the nights stored are those the full recompute stored
    a = sorted(p.relative_to(tmp_path / "inc") for p in (tmp_path / "inc" / "features").rglob("*.parquet"))
    b = sorted(p.relative_to(tmp_path / "full") for p in (tmp_path / "full" / "features").rglob("*.parquet"))
    assert a == b and len(a) == 3 * 7
