"""The seat hand-off fit's frames (detectors/seat_handoff/frames.py): an account's rows as slices of one sorted
frame, the history read a batch of accounts at a time, the field's counts with integer account codes. Each must
give what the one read and the per-account copies gave: the same rows, the same counts, the same scores; and the compared change points tested some rows at a time,
each row's baselines made where they are tested, give the scores of all tested at once."""

from __future__ import annotations

import datetime as dt

import duckdb
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import candidates as candidates_module
from detectors.seat_handoff import detector as detector_module
from detectors.seat_handoff import frames
from detectors.seat_handoff.frames import FieldCounts, account_batches, key_slices


def test_key_slices_are_partition_by_without_copies():
    df = pl.DataFrame({"account": ["b", "a", "b", "c", "a", "b"], "x": [1, 2, 3, 4, 5, 6]})
    srt, groups = key_slices(df, "account")
    want = {k[0]: g for k, g in df.partition_by(["account"], as_dict=True).items()}
    assert set(groups) == set(want)
    for k, g in groups.items():
        assert_frame_equal(g, want[k])  # each group's rows in their order in df
    assert srt["account"].to_list() == ["a", "a", "b", "b", "b", "c"]
    assert key_slices(df.clear(), "account")[1] == {}


@pytest.fixture()
def seats_con():
    con = duckdb.connect()
    con.execute("CREATE TABLE seats (player VARCHAR, hand_id VARCHAR)")
    con.execute("INSERT INTO seats SELECT 'a', 'h' || i FROM range(5) t(i)")
    con.execute("INSERT INTO seats SELECT 'b', 'h' || i FROM range(3) t(i)")
    con.execute("INSERT INTO seats SELECT 'c', 'h' || i FROM range(9) t(i)")
    con.execute("INSERT INTO seats SELECT 'd', 'h' || i FROM range(2) t(i)")
    yield con
    con.close()


def test_account_batches_pack_seats_in_name_order(seats_con):
    acc = pl.Series(["d", "c", "b", "a", "zz"])  # zz has no seat: read with the last batch
    assert account_batches(seats_con, acc, 8) == [["a", "b"], ["c"], ["d", "zz"]]
    assert account_batches(seats_con, acc, 100) == [["a", "b", "c", "d", "zz"]]
    assert account_batches(seats_con, pl.Series([], dtype=pl.Utf8), 8) == [[]]


def test_field_counts_are_the_other_players_counts():
    t0 = dt.datetime(2026, 1, 1)
    rng = np.random.default_rng(3)
    n = 60
    field = pl.DataFrame({
        "tournament_id": rng.choice(["T1", "T2"], n), "started_at": [t0 + dt.timedelta(seconds=int(s)) for s in
                                                                     rng.integers(0, 100, n)],
        "account": rng.choice(["a", "b", "c"], n),
        **{f"n_{a}": rng.integers(0, 4, n) for a in ("fold", "check", "call", "bet", "raise")}})
    fc = FieldCounts(field)
    cut = t0 + dt.timedelta(seconds=50)
    for tid in ("T1", "T2"):
        for acc in ("a", "b", "nobody"):
            f = field.filter((pl.col("tournament_id") == tid) & (pl.col("account") != acc))
            X = f.select(pl.selectors.starts_with("n_")).to_numpy().astype(float)
            after = (f["started_at"] >= cut).to_numpy()
            b, a = fc.counts(tid, acc, cut)
            assert b.tolist() == X[~after].sum(axis=0).tolist() and a.tolist() == X[after].sum(axis=0).tolist()
            assert b.dtype == np.float64
    assert [x.tolist() for x in fc.counts("T9", "a", cut)] == [[0.0] * 5, [0.0] * 5]


@pytest.fixture(scope="module")
def world():
    return build_world()


def test_one_account_a_read_and_one_row_a_test_give_the_same_scores(con, monkeypatch):
    one_read = SeatHandoffDetector().fit(con).score(con)
    monkeypatch.setattr(frames, "ROWS_PER_READ", 1)  # every account read alone
    # every compared change point (and pooled device) tested alone, its baselines made for it alone
    monkeypatch.setattr(detector_module, "TEST_ROWS", 1)
    monkeypatch.setattr(candidates_module, "TEST_ROWS", 1)
    assert len(account_batches(con, one_read["account"], 1, frames.HIST_ROWS_SQL)) == one_read["account"].n_unique()
    by_account = SeatHandoffDetector().fit(con).score(con)
    assert one_read.height > 0
    assert_frame_equal(by_account, one_read, check_exact=True)


def test_each_change_point_makes_its_timing_baseline_once(con, monkeypatch):
    # _own_timing (the account's own decisions off the login's device) once per compared change point, in
    # _compare, its baseline tested in the same pass; once more per pooled device only (candidates._pool_devices)
    calls, compared, pooled = [0], [0], [0]
    own_timing, compare = detector_module._own_timing, SeatHandoffDetector._compare
    pool_devices = SeatHandoffDetector._pool_devices

    def counted_timing(*a, **k):
        calls[0] += 1
        return own_timing(*a, **k)

    def counted_compare(self, *a, **k):
        compared[0] += 1
        return compare(self, *a, **k)

    def counted_pool(self, multi):
        pooled[0] += len(multi)
        return pool_devices(self, multi)

    monkeypatch.setattr(detector_module, "_own_timing", counted_timing)
    monkeypatch.setattr(frames, "_own_timing", counted_timing)
    monkeypatch.setattr(SeatHandoffDetector, "_compare", counted_compare)
    monkeypatch.setattr(SeatHandoffDetector, "_pool_devices", counted_pool)
    SeatHandoffDetector().fit(con).score(con)
    assert compared[0] > 0
    assert calls[0] == compared[0] + pooled[0]
