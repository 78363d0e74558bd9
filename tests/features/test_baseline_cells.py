"""The own-baseline counts by day: the window's sums of the day tables equal the counts over the window's decisions,
whichever nights computed the days, and chip dumping's fit tests those sums without counting the decisions."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from detectors.chip_dumping import cells as cdc
from detectors.chip_dumping import ChipDumpingDetector
from detectors.features import days as fd
from detectors.features import gameplay as gp


@pytest.fixture(scope="module")
def world(days_world):
    return days_world


def counted(dec: pl.DataFrame, name: str) -> pl.DataFrame:
    """Test ``name``'s counts per pair and cell made from the decisions ``dec`` by chip dumping's DuckDB count."""
    _, y, where, _, bins = next(s for s in cdc.BASELINE_SPECS if s[0] == name)
    con = duckdb.connect()
    try:
        got = cdc.pair_cells(cdc.as_relation(dec, con), y, where, bins)
    finally:
        con.close()
    return got.sort(["player", "opponent", *bins], nulls_last=True)


@pytest.mark.parametrize("on_disk", [False, True], ids=["in memory, summed by Polars", "files, summed by DuckDB"])
def test_the_window_sums_of_the_day_cells_equal_the_counts_of_the_window_decisions(world, tmp_path, on_disk):
    """Days computed at different times (two, then the third, then one recomputed after a backfill) give the
    counts of the window's decisions, cell by cell and exactly, for every test."""
    con = world.con
    days = sorted(fd.day_fingerprints(con))
    assert len(days) == 3
    store = fd.DayStore(tmp_path / "features" if on_disk else None)
    summer = duckdb.connect() if on_disk else None
    assert fd.refresh_days(con, store, days[:2]) == days[:2]
    assert fd.refresh_days(con, store, days) == days[2:]
    con.execute("UPDATE hands SET content_hash = content_hash || 'x' WHERE hand_id = "
                "(SELECT min(hand_id) FROM hands WHERE day = ?)", [days[1]])
    try:
        assert fd.refresh_days(con, store, days) == [days[1]]
    finally:
        con.execute("UPDATE hands SET content_hash = rtrim(content_hash, 'x')")
    dec = fd.window_decisions(store, days)
    for name in ("aggr", "fold", "junk"):
        summed = fd.window_baseline_cells(store, days, name, summer)
        want = counted(dec, name)
        assert summed.height == want.height > 50
        assert_frame_equal(summed, want, check_exact=True)
        # a window of one day is that day's decisions' counts
        one = fd.window_baseline_cells(store, days[1:2], name, summer)
        assert_frame_equal(one, counted(dec.filter(pl.col("hand_id").is_in(fd.window_decisions(store, days[1:2])[
            "hand_id"].implode())), name), check_exact=True)
    assert fd.window_baseline_cells(store, [], "aggr", summer).is_empty()


def test_chip_dumpings_fit_tests_the_day_sums_and_counts_no_decision(world, monkeypatch):
    """The fit's own-baseline tests read the window's sums of the day tables: counting the window's decisions
    (``pair_cells``) is never called, and the tests' columns are those the counting gives (floats within 1e-9:
    the counts come in another row order, so the float sums over them add in another order)."""
    con = world.con
    gp.release()
    store = gp.store_for(con)
    pairs = store.pair_table(con)
    src = store.decision_source(con)
    det = ChipDumpingDetector()
    # counted from the decisions, with the detector's settings
    want = cdc.baseline_tests(pairs, src.relation(con), alpha=det.alpha, rare_tail=det.rare_tail)
    assert want["junk_p"].is_not_null().sum() > 20

    def no_counting(*a, **k):
        raise AssertionError("the window's decisions were counted")

    monkeypatch.setattr(cdc, "pair_cells", no_counting)
    det.fit(con)
    key = ["player", "opponent"]
    cols = [c for c in want.columns if c.split("_")[0] in ("aggr", "fold", "junk")]
    assert len(cols) == 21
    assert_frame_equal(det.pairs_.select(*key, *cols).sort(key), want.select(*key, *cols).sort(key),
                       check_exact=False, rel_tol=1e-9)
    # other junk cells than the day tables' are still counted from the decisions
    with pytest.raises(AssertionError, match="counted"):
        cdc.baseline_tests(pairs, src.relation(con), junk_bins=("sbin", "hu"),
                           cells=lambda t: store.baseline_cells(con, t))
    gp.release()
