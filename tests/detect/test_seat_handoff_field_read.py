"""The seat hand-off fit's field read small (detectors/seat_handoff/frames.py): the players' counts of the
candidates' events read a batch of events at a time with the tournament, the start and the player as integers from
DuckDB (``FieldCounts.read``), and the null's rows of it without their accounts (``FieldCounts.frame``). Each must
give what the rows of ``_FIELD_SQL`` read whole with their names gave: the same counts, the same rows, the same
scores."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import frames
from detectors.seat_handoff.frames import Codes, FieldCounts, _code_ranges, _small_counts
from detectors.seat_handoff.queries import ACTS

# the field as it was read before FieldCounts.read: every player's voluntary actions per hand, with the names
_FIELD_SQL = """
SELECT h.tournament_id, h.started_at, a.player AS account,
       count(*) FILTER (WHERE a.action = 'fold')  AS n_fold,
       count(*) FILTER (WHERE a.action = 'check') AS n_check,
       count(*) FILTER (WHERE a.action = 'call')  AS n_call,
       count(*) FILTER (WHERE a.action = 'bet')   AS n_bet,
       count(*) FILTER (WHERE a.action = 'raise') AS n_raise
FROM actions a JOIN hands h USING (hand_id)
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
  AND h.tournament_id IN (SELECT DISTINCT tournament_id FROM _rb_at)
GROUP BY ALL
"""


@pytest.fixture(scope="module")
def world():
    return build_world()


def _field_whole(con, tournaments: list[str]) -> pl.DataFrame:
    """The rows of ``_FIELD_SQL`` for ``tournaments``, read at once with their names (the former read)."""
    con.register("_rb_at", pl.DataFrame({"account": ["x"] * len(tournaments), "tournament_id": tournaments}))
    try:
        return con.sql(_FIELD_SQL).pl()
    finally:
        con.unregister("_rb_at")


def test_code_ranges_pack_sizes_in_code_order():
    assert _code_ranges(np.array([0, 2, 3, 7]), np.array([5, 3, 9, 2]), 8) == [(0, 2), (3, 3), (7, 7)]
    assert _code_ranges(np.array([0, 2, 3, 7]), np.array([5, 3, 9, 2]), 100) == [(0, 7)]
    assert _code_ranges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), 8) == []


def test_small_counts_keep_the_sums():
    X = np.array([[0, 3], [2, 40000]])
    assert _small_counts(X[:, :1]).dtype == np.int16 and _small_counts(X).dtype == np.int32
    assert _small_counts(X).sum(axis=0).tolist() == X.sum(axis=0).tolist()


@pytest.mark.parametrize("max_hands", [1, 50, 10**9])
def test_field_read_by_batches_of_events_gives_the_counts_of_the_whole_read(con, max_hands):
    codes = Codes(con)
    tids = codes.tournaments[:: 2] + ["no-such-event"]
    whole = FieldCounts(_field_whole(con, tids))
    read = FieldCounts.read(con, tids, codes, max_hands=max_hands)
    assert set(read.bounds) == set(whole.bounds) and read.t.size == whole.t.size > 0
    assert read.X.dtype == np.int16
    accounts = sorted(set(whole.codes)) + ["nobody"]
    for tid in sorted(whole.bounds) + ["no-such-event"]:
        lo, hi = whole.bounds.get(tid, (0, 0))
        cuts = np.unique(whole.t[lo:hi])
        for cut in [cuts[0], cuts[len(cuts) // 2], cuts[-1]] if cuts.size else [np.datetime64("2026-01-01")]:
            for acc in accounts[:: max(1, len(accounts) // 6)] + ["nobody"]:
                b, a = read.counts(tid, acc, cut.astype(dt.datetime))
                wb, wa = whole.counts(tid, acc, cut.astype(dt.datetime))
                assert b.tolist() == wb.tolist() and a.tolist() == wa.tolist() and b.dtype == np.float64


def test_field_frame_is_the_rows_of_the_events_without_accounts(con):
    codes = Codes(con)
    tids = codes.tournaments[1:4]
    whole = _field_whole(con, codes.tournaments)
    read = FieldCounts.read(con, codes.tournaments, codes, max_hands=40)
    got = read.frame(tids + ["no-such-event"])
    assert got.columns == ["tc", "ts", *[f"n_{a}" for a in ACTS]]
    got = got.select(tournament_id=pl.Series(codes.tournaments).gather(got["tc"]),
                     started_at=pl.col("ts").cast(pl.Datetime("us")), *[pl.col(f"n_{a}").cast(pl.Int64) for a in ACTS])
    want = whole.filter(pl.col("tournament_id").is_in(tids)).drop("account")
    key = ["tournament_id", "started_at", *[f"n_{a}" for a in ACTS]]
    assert got.height > 0
    assert_frame_equal(got.sort(key), want.sort(key), check_dtypes=True, check_column_order=False)
    assert read.frame([]).height == 0


def test_a_few_events_a_read_give_the_same_scores(con, monkeypatch):
    one_read = SeatHandoffDetector().fit(con).score(con)
    monkeypatch.setattr(frames, "FIELD_HANDS_PER_READ", 30)  # a few events a read, many reads
    assert one_read.height > 0
    assert_frame_equal(SeatHandoffDetector().fit(con).score(con), one_read, check_exact=True)

