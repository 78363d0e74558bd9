"""The seat hand-off fit's history held small (detectors/seat_handoff/frames.py, stage.py, null.py): the candidate
accounts' tournament hands with the tournament and the device as integer codes, the null accounts' reduced to the
sums and counts the null reads (``null_history``) as they are read, and the same-stage baseline made an account at
a time from the history's slices. Each must give what the rows with names, held whole, gave."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_stage import _world
from test_seat_handoff_coded_reads import encode_hist
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import null as null_module
from detectors.seat_handoff.frames import Codes, hist_base, key_slices, null_history
from detectors.seat_handoff.null import move_chunks
from detectors.seat_handoff.queries import ACTS

T0 = dt.datetime(2026, 1, 1)


def _codes(tournaments: list[str], devices: list[str]) -> Codes:
    """Codes as :class:`Codes` makes them from a warehouse, here from the names given."""
    codes = Codes.__new__(Codes)
    codes.tournaments = sorted(tournaments)
    codes.tournament = {t: i for i, t in enumerate(codes.tournaments)}
    codes.device = {d: i for i, d in enumerate(sorted(devices))}
    return codes


def _hist() -> pl.DataFrame:
    """Eight tournament hands of one account in two events on two devices (one hand before any login)."""
    return pl.DataFrame({
        "account": ["a"] * 8, "tournament_id": ["T1"] * 4 + ["T2"] * 4,
        "started_at": [T0 + dt.timedelta(minutes=m) for m in range(8)],
        **{f"n_{x}": [i + j for j in range(8)] for i, x in enumerate(ACTS)},
        "device": ["d1", "d1", "d2", "d2", None, "d1", "d2", "d2"],
        "rstr": [0, 1, 1, -1, 2, 2, 0, 1], "rcls": [0, 2, 1, -1, 2, 0, 1, 2]})


def test_hist_base_on_codes_leaves_out_the_after_segment_and_the_device():
    codes = _codes(["T1", "T2"], ["d1", "d2"])
    h = encode_hist(codes, _hist())
    assert h["tc"].to_list() == [0] * 4 + [1] * 4 and h["dc"].to_list() == [0, 0, 1, 1, -1, 0, 1, 1]
    cut = T0 + dt.timedelta(minutes=6)
    # T2 from minute 6 on left out (rows 6, 7), and the hands on d2 (rows 2, 3, 6, 7): rows 0, 1, 4, 5 kept
    hc, rb, crb = hist_base(h, codes.tournament["T2"], cut, codes.device["d2"])
    X = _hist().select([f"n_{x}" for x in ACTS]).to_numpy().astype(float)
    assert hc.tolist() == X[[0, 1, 4, 5]].sum(axis=0).tolist()
    assert rb.tolist() == [0, 1, 2, 2] and crb.tolist() == [0, 2, 2, 0]
    # no device left out: the hand before any login and the other device's are kept
    hc, rb, _ = hist_base(h, codes.tournament["T2"], cut, None)
    assert hc.tolist() == X[:6].sum(axis=0).tolist() and rb.tolist() == [0, 1, 1, 2, 2]


def test_null_history_gives_the_counts_the_null_read_from_the_rows():
    h = pl.concat([_hist(), _hist().with_columns(account=pl.lit("b"), rcls=pl.lit(2, dtype=pl.Int64))])
    sums, ranges = null_history(h)
    by = dict(zip(sums["account"].to_list(), sums.select([f"n_{x}" for x in ACTS]).to_numpy().tolist()))
    X = _hist().select([f"n_{x}" for x in ACTS]).to_numpy()
    assert by == {"a": X.sum(axis=0).tolist(), "b": X.sum(axis=0).tolist()}
    # the old read: per account and stratum, the hands with rcls >= 0, those >= 1 and those == 2
    got = {(r["account"], r["rstr"]): (r["n"], r["n1"], r["n2"]) for r in ranges.iter_rows(named=True)}
    want: dict = {}
    for r in h.filter(pl.col("rcls") >= 0).iter_rows(named=True):
        n, n1, n2 = want.get((r["account"], r["rstr"]), (0, 0, 0))
        want[(r["account"], r["rstr"])] = (n + 1, n1 + (r["rcls"] >= 1), n2 + (r["rcls"] == 2))
    assert got == want


def test_the_stage_baseline_from_coded_slices_is_the_whole_frames():
    det, rows, hist = _world({"A", "B"})
    sw = pl.DataFrame({"account": [r["account"] for r in rows], "tournament_id": [r["tournament_id"] for r in rows]})
    whole = [dict(r) for r in rows]
    det._stage_baseline(whole, hist, sw)
    # the fit's form: the tournament a code, each account's rows a slice of one frame sorted by account
    det.codes_ = _codes(hist["tournament_id"].unique().to_list(), [])
    coded = hist.select("account", tc=pl.col("tournament_id").replace_strict(det.codes_.tournament,
                                                                             return_dtype=pl.Int32),
                        started_at="started_at", *[f"n_{x}" for x in ACTS])
    _, by_acc = key_slices(coded.sample(fraction=1.0, shuffle=True, seed=1), "account")
    sliced = [dict(r) for r in rows]
    det._stage_baseline(sliced, by_acc, sw)
    assert whole[0]["stage_events"] > 0
    for a, b in zip(whole, sliced):
        assert {k: v for k, v in a.items() if not isinstance(v, np.ndarray)} == \
            {k: v for k, v in b.items() if not isinstance(v, np.ndarray)}


def test_move_chunks_bound_moves_and_values():
    sizes = np.array([3, 3, 3, 10, 1, 1, 1, 1])
    assert [list(r) for r in move_chunks(sizes, 3, 6)] == [[0, 1], [2], [3], [4, 5, 6], [7]]
    assert [list(r) for r in move_chunks(sizes, 100, 100)] == [list(range(8))]
    assert move_chunks(np.zeros(0, dtype=np.int64), 3, 6) == []


@pytest.fixture(scope="module")
def world():
    return build_world()


def test_the_null_timing_by_small_chunks_gives_the_same_scores(con, monkeypatch):
    whole = SeatHandoffDetector().fit(con).score(con)
    monkeypatch.setattr(null_module, "NULL_TEST_VALUES", 1)  # every simulated move's timing test alone
    alone = SeatHandoffDetector().fit(con).score(con)
    assert whole.height > 0
    assert_frame_equal(alone, whole, check_exact=True)


def test_key_slices_on_two_columns_are_partition_by_without_copies():
    df = pl.DataFrame({"a": ["y", "x", "y", "x", "y"], "t": ["1", "2", "1", "2", "2"], "v": [1, 2, 3, 4, 5]})
    _, groups = key_slices(df, ["a", "t"])
    want = df.partition_by(["a", "t"], as_dict=True)
    assert set(groups) == set(want) == {("y", "1"), ("x", "2"), ("y", "2")}
    for k, g in want.items():
        assert_frame_equal(groups[k], g)
