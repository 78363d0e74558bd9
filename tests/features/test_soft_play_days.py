"""Soft play's cells by hand day (detectors.soft_play.daycells): the days' decisions with their cells and their counts,
made once per day and read over the window, give what the joins and the count over the window's decisions give,
to the row and in the same order, whichever nights made the days; a night makes the files of its new day only."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from detectors import stats
from detectors.features import days as fd
from detectors.soft_play import SoftPlayDetector, daycells
from detectors.soft_play.cells import WindowDecisions


@pytest.fixture(scope="module")
def world(days_world):
    return days_world


def _files(tmp_path) -> dict:
    """Each of soft play's day files under ``tmp_path`` -> its modification time."""
    return {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.parquet") if "_soft_play" in str(p)}


def _same_window(con, store, days, stage_bb) -> None:
    """The window ``days`` read from soft play's day files equals it joined and counted over the decisions:
    the counted cells (rows and order), the whole-hand sums both ways and the thin pairs' decisions."""
    paths = store.paths("hu_decisions", days)
    full = WindowDecisions(paths, None, stage_bb)
    inc = WindowDecisions(paths, None, stage_bb, daycells.ensure(con, store, days, stage_bb))
    assert inc.days and not full.days
    det = SoftPlayDetector(stage_bb=stage_bb)
    with full.kept(con), inc.kept(con):
        a, b = full.cells(con), inc.cells(con)
        assert a.height > 100
        assert_frame_equal(b, a, check_exact=True)
        det.cells_ = a
        y, kw = det._baseline_args(det.tests[0])
        kw.pop("side")
        rated = stats.own_rates_per_decision(a, y, **kw).filter(pl.col("hu"))
        for directed in (False, True):
            want = full.hand_sums(con, rated, directed=directed)
            assert want.height > 50
            assert_frame_equal(inc.hand_sums(con, rated, directed=directed), want, check_exact=True)
        pairs = a.select("player", "opponent").unique().filter(pl.col("player") < pl.col("opponent")).sort(
            "player", "opponent").head(5)
        assert_frame_equal(inc.decisions(con, pairs=pairs), full.decisions(con, pairs=pairs), check_exact=True)
    assert inc.summary(con) == full.summary(con)


@pytest.mark.parametrize("stage_bb", [(20.0,), None], ids=["stage cell", "no stage cell"])
def test_the_days_cells_equal_the_window_joined_and_counted(world, tmp_path, stage_bb):
    """Two days, then the third (only its files made), then a backfill of one day (only its files made again, the
    old ones removed): each window read from the day files equals the full count, exactly."""
    con = world.con
    days = sorted(fd.day_fingerprints(con))
    assert len(days) == 3
    store = fd.DayStore(tmp_path / "features")
    fd.refresh_days(con, store, days[:2])
    _same_window(con, store, days[:2], stage_bb)
    first = _files(tmp_path)
    assert len(first) == 4
    fd.refresh_days(con, store, days)
    _same_window(con, store, days, stage_bb)
    second = _files(tmp_path)
    assert {p: t for p, t in second.items() if p in first} == first and len(second) == 6
    con.execute("UPDATE hands SET content_hash = content_hash || 'x' WHERE hand_id = "
                "(SELECT min(hand_id) FROM hands WHERE day = ?)", [days[1]])
    try:
        assert fd.refresh_days(con, store, days) == [days[1]]
        _same_window(con, store, days, stage_bb)
    finally:
        con.execute("UPDATE hands SET content_hash = rtrim(content_hash, 'x')")
    third = _files(tmp_path)
    assert len(third) == 6
    changed = {p for p in third if second.get(p) != third[p]}
    assert len(changed) == 2 and all(f"day={days[1].isoformat()}" in str(p) for p in changed)


def test_a_stage_settings_files_leave_another_settings_alone(world, tmp_path):
    """A day's files of one stage setting never remove another's: the cuts ``st10`` begin the name of the cuts
    ``st10-20``, and making the one must not delete the other (each setting's older files are removed only when
    their setting part is exactly the same)."""
    con = world.con
    days = sorted(fd.day_fingerprints(con))[:1]
    store = fd.DayStore(tmp_path / "features")
    fd.refresh_days(con, store, days)
    made = [daycells.ensure(con, store, days, stage_bb) for stage_bb in ((10.0, 20.0), (10.0,), (20.0,), None)]
    assert len({dec[0] for dec, _ in made}) == 4
    assert all(Path(p).exists() for dec, cnt in made for p in dec + cnt)
