"""Features by hand day (detectors.features.days): one day's tables, their storage, and the window's sums."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from detectors.features import days as fd
from detectors.features import gameplay as gp

PAIR = ["player", "opponent"]


@pytest.fixture(scope="module")
def world(days_world):
    return days_world


def test_a_day_from_its_frames_equals_a_day_read_from_the_warehouse(world):
    """What a distributed engine hands compute_day (the day's rows as frames) gives the same tables."""
    con = world.con
    day = sorted(fd.day_fingerprints(con))[1]
    from_con = fd.compute_day(con, day)
    frames = {t: pl.from_arrow(a) for t, a in fd.read_day(con, day).items()}
    from_frames = fd.compute_day(frames, day.isoformat())
    assert set(from_con) == set(fd.DAY_TABLES)
    assert from_con["hu_decisions"].height > 500
    for t, f in from_con.items():
        assert_frame_equal(from_frames[t], f, check_row_order=t == "hu_decisions")
    # only that day's hands
    assert set(from_con["hu_decisions"]["hand_id"]) <= set(
        con.sql("SELECT hand_id FROM hands WHERE day = ?", params=[day]).pl()["hand_id"])


@pytest.fixture(scope="module")
def stored(world):
    """Every day of the world computed into a store in memory: (store, days)."""
    store = fd.DayStore(None)
    days = sorted(fd.day_fingerprints(world.con))
    assert len(days) == 3
    assert fd.refresh_days(world.con, store) == days
    return store, days


def test_the_window_sums_equal_the_window_computed_whole(world, stored):
    """Pair features and chip flow summed over the days equal pair_features over the window's decisions."""
    con = world.con
    store, days = stored
    dec = fd.window_decisions(store, days)
    assert dec.height == dec.unique(["hand_id", "seq"]).height
    whole = gp.pair_features(con, dec, baseline=False).sort(PAIR)
    summed = fd.window_pair_features(store, days).sort(PAIR)
    assert summed.columns == whole.columns
    assert_frame_equal(summed, whole, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(fd.window_chip_flow(store, days).sort(PAIR), gp.chip_flow(con).sort(PAIR).with_columns(
        pl.col("hands").cast(pl.Int64)), check_exact=False, rel_tol=1e-12)
    # the own-baseline cells: the player's counts are the pair counts summed over opponents
    cells = store.read("baseline_pair_cells", days)
    mine = store.read("baseline_player_cells", days)
    assert cells["n"].sum() == mine["N"].sum() > 0 and cells["k"].sum() == mine["K"].sum()
    aggr = cells.filter(pl.col("test") == "aggr")
    assert aggr["n"].sum() == dec.filter(pl.col("sbin").is_not_null()).height


def test_a_day_is_valued_with_its_own_seed(world, stored):
    """The Monte Carlo values of a day do not depend on the other days computed with it."""
    store, days = stored
    alone = fd.compute_day(world.con, days[0])["hu_decisions"]
    assert_frame_equal(store.read("hu_decisions", days[:1]), alone)
    assert fd.day_seed(0, days[0]) != fd.day_seed(0, days[1]) != fd.day_seed(1, days[0])


def test_stored_days_are_recomputed_only_when_their_content_changes(world, stored, tmp_path):
    con = world.con
    mem, days = stored
    fp = fd.day_fingerprints(con)
    store = fd.DayStore(tmp_path / "features")
    for d in days:  # what refresh_days would have written (computed above)
        store.write(d, {t: mem.read(t, [d]) for t in fd.DAY_TABLES}, fp[d])
    assert (tmp_path / "features" / "hu_decisions" / f"day={days[0]}" / "s16-r0.parquet").is_file()
    manifest = json.loads((tmp_path / "features" / "_manifest" / f"day={days[0]}" / "s16-r0.json").read_text())
    assert manifest["fingerprint"] == fp[days[0]]
    assert not list((tmp_path / "features").rglob(".tmp-*"))  # nothing half-written left behind
    assert fd.refresh_days(con, store) == []  # nothing changed: nothing computed
    again = fd.DayStore(tmp_path / "features")  # another process reads the same files
    assert again.days() == days and fd.refresh_days(con, again) == []
    assert_frame_equal(again.read("pair_decisions", days), mem.read("pair_decisions", days))
    # a hand of the first day changes (a backfill): that day only
    con.execute("UPDATE hands SET content_hash = content_hash || 'x' WHERE hand_id = "
                "(SELECT min(hand_id) FROM hands WHERE day = ?)", [days[0]])
    try:
        assert fd.refresh_days(con, store) == [days[0]]
    finally:
        con.execute("UPDATE hands SET content_hash = rtrim(content_hash, 'x')")
    # another card-value setting is another file; a day without hands is dropped
    other = fd.DayStore(tmp_path / "features", samples=8)
    assert other.days() == [] and fd.refresh_days(con, other, days=days[:1]) == days[:1]
    fd.refresh_days(con, store, days=[days[-1] + dt.timedelta(days=5)])
    assert store.days() == days


def test_a_killed_write_leaves_the_day_to_be_recomputed(world, tmp_path, monkeypatch):
    """A run killed while writing a day's tables leaves no manifest: the day counts as missing."""
    con = world.con
    store = fd.DayStore(tmp_path / "f")
    day = sorted(fd.day_fingerprints(con))[0]
    fd.refresh_days(con, store, days=[day])
    calls = []

    def dying(self, path, **kw):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, path, **kw)

    real = pl.DataFrame.write_parquet
    monkeypatch.setattr(pl.DataFrame, "write_parquet", dying)
    con.execute("UPDATE hands SET content_hash = content_hash || 'y' WHERE hand_id = (SELECT min(hand_id) FROM hands)")
    try:
        with pytest.raises(KeyboardInterrupt):
            fd.refresh_days(con, store, days=[day])
        assert store.manifest(day) is None and store.days() == []
        assert not list((tmp_path / "f").rglob(".tmp-*"))
        monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
        assert fd.refresh_days(con, store, days=[day]) == [day]
    finally:
        con.execute("UPDATE hands SET content_hash = rtrim(content_hash, 'y')")


def test_window_of_counts_days_back_from_the_latest():
    days = [dt.date(2026, 1, 1) + dt.timedelta(days=i) for i in range(0, 200, 2)]
    w = fd.window_of(days, 90)
    assert w[-1] == days[-1] and w[0] == days[-1] - dt.timedelta(days=88) and len(w) == 45
    assert fd.window_of(days, 1, end="2026-01-03") == [dt.date(2026, 1, 3)]
    assert fd.window_of([], 90) == []


def test_account_days_summarise_devices_networks_and_timing():
    sessions = pl.DataFrame({"account": ["a", "a", "b'\"x"], "session": ["1", "2", "3"], "ip": ["10.0.0.1", None, "::1"],
                             "device": ["d1", "d2", "d1"],
                             "login_at": [dt.datetime(2026, 1, 1, 1)] * 3, "logout_at": [dt.datetime(2026, 1, 1, 2), None, None]})
    decisions = pl.DataFrame({"hand_id": ["h"] * 3, "seq": [1, 2, 3], "account": ["a", "a", "c"], "ms": [100, 1000, 0],
                              "ts": [dt.datetime(2026, 1, 1, 1)] * 3}, schema_overrides={"seq": pl.Int32, "ms": pl.Int32})
    out = fd.account_days({"sessions": sessions, "decisions": decisions}).sort("account")
    assert out["account"].to_list() == ["a", "b'\"x", "c"]
    a = out.row(0, named=True)
    assert a["sessions"] == 2 and a["devices"] == ["d1", "d2"] and a["networks"] == ["10.0.0.1"]
    assert a["online_s"] == 3600 and a["decisions_timed"] == 2 and a["sit_outs"] == 0
    assert a["log_ms_sum"] == pytest.approx(__import__("math").log(100_000))
    assert out.row(2, named=True)["log_ms_sum"] == 0.0  # 0 ms counts as 1 ms


def test_a_day_valued_in_parts_is_the_same_from_either_source(world):
    """A day split in parts of 300 hands: the same tables from the warehouse and from the day's frames, every
    hand's decisions once, and the count tables equal to the day valued in one part."""
    con = world.con
    day = sorted(fd.day_fingerprints(con))[1]
    whole = fd.compute_day(con, day)
    parts = fd.compute_day(con, day, hands_per_part=300)
    frames = fd.compute_day({t: pl.from_arrow(a) for t, a in fd.read_day(con, day).items()}, day, hands_per_part=300)
    ids = con.sql("SELECT hand_id FROM hands WHERE day = ?", params=[day]).pl()["hand_id"]
    cuts = fd.day_parts(ids, 300)
    assert len(cuts) == -(-ids.len() // 300) > 3 and cuts[0][0] == "" and all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
    for t in fd.DAY_TABLES:
        assert_frame_equal(parts[t], frames[t])
    dec = parts["hu_decisions"]
    assert dec.select("hand_id", "seq").equals(whole["hu_decisions"].select("hand_id", "seq"))
    assert not dec["strength"].equals(whole["hu_decisions"]["strength"])  # each part draws with its own seed
    for t in ("hands_together", "chip_flow"):
        assert_frame_equal(parts[t], whole[t], check_exact=False, rel_tol=1e-12)
    assert_frame_equal(parts["pair_decisions"].drop("value_given_bb", "value_w", "value_sq"),
                       whole["pair_decisions"].drop("value_given_bb", "value_w", "value_sq"))


def test_a_day_written_part_by_part_equals_the_day_computed_whole(world, tmp_path):
    """refresh_days writes the decisions part by part into the day's one file: the same tables as compute_day
    returns, the parts' temporary files gone, the manifest counting every table's rows."""
    con = world.con
    day = sorted(fd.day_fingerprints(con))[1]
    store = fd.DayStore(tmp_path / "f")
    assert fd.refresh_days(con, store, days=[day], hands_per_part=300) == [day]
    parts = []
    want = fd.compute_day(con, day, hands_per_part=300, decisions_to=parts.append)
    assert "hu_decisions" not in want and len(parts) > 3
    want["hu_decisions"] = pl.concat(parts)
    for t, f in want.items():
        assert_frame_equal(store.read(t, [day]), f)
    assert store.manifest(day)["rows"] == {t: f.height for t, f in want.items()}
    assert not list((tmp_path / "f").rglob(".tmp-*"))


def test_a_write_that_fails_between_parts_leaves_no_part_file_and_no_manifest(world, tmp_path):
    con = world.con
    day = sorted(fd.day_fingerprints(con))[0]
    store = fd.DayStore(tmp_path / "f")
    fd.refresh_days(con, store, days=[day])
    with pytest.raises(RuntimeError):
        with store.writing(day, [1, 2]) as w:
            w.append("hu_decisions", pl.DataFrame({"hand_id": ["a"]}))
            w.append("hu_decisions", pl.DataFrame({"hand_id": ["b"]}))
            assert len(list((tmp_path / "f").rglob(".tmp-part-*"))) == 2
            raise RuntimeError("killed")
    assert store.manifest(day) is None
    assert not list((tmp_path / "f").rglob(".tmp-*"))


def test_the_window_decisions_read_only_the_columns_asked_for(stored):
    """Column pushdown: the columns named, in that order, the same rows in the same order as the whole frame's."""
    store, days = stored
    whole = fd.window_decisions(store, days)
    cols = ["player", "opponent", "aggr", "sbin"]  # neither order column asked for: still ordered by them
    narrow = fd.window_decisions(store, days, cols)
    assert narrow.columns == cols
    assert_frame_equal(narrow, whole.select(cols))


def test_the_feature_store_keeps_the_pair_table_and_never_a_detectors_decisions(world):
    """Each caller gets the window's decisions read for it and the store keeps no reference to them: the frame
    of one detector is freed with that detector, so the kinds of a run never hold two windows of decisions at once;
    the pair table is summed once and shared. Neither the evidence index nor the first-pass cache keeps the frame."""
    import gc
    import weakref

    from detectors import stats

    con = world.con
    gp.release()
    dec, pairs = gp.cached_pair_features(con, columns=["hand_id", "player", "opponent", "tournament_id", "aggr",
                                                       "preflop", "facing", "hu", "sbin"])
    assert dec.columns[:3] == ["hand_id", "player", "opponent"] and dec.height > 500
    again, pairs_again = gp.cached_pair_features(con)
    assert pairs_again is pairs and again is not dec and "value_given" in again.columns
    assert_frame_equal(again.select(dec.columns), dec)
    gp.decisions_of(dec, ["p01"])  # builds the evidence index of this frame
    stats.robust_own_baseline(dec, "aggr", alpha=0.01)  # the first pass, cached for frames with the same decisions
    gone = weakref.ref(dec)
    del dec
    gc.collect()
    assert gone() is None
    gp.release()
