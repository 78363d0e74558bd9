"""The seat hand-off fit's decision times by account read by one pass of ``_TIMING_CODES_SQL`` over every account
(detectors/seat_handoff/one_pass.py ``read_coded_once``), fetched a record batch at a time: the rows of the named
query (test_seat_handoff_coded_reads.py ``_TIMING_SQL``) read whole and coded in Python, whatever the batches' size;
and the fit runs the query once, however its accounts' history is batched."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_coded_reads import TIM_COLS, _named, coded  # noqa: F401  (``coded``: the fixture)
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import frames
from detectors.seat_handoff.one_pass import read_coded_once
from detectors.seat_handoff.queries import _TIMING_CODES_SQL


@pytest.fixture(scope="module")
def world():
    return build_world()


@pytest.mark.parametrize("fetch_rows", [1, 37, None], ids=["a-row-a-batch", "a-few", "default"])
def test_one_pass_gives_the_named_rows_coded(coded, fetch_rows):  # noqa: F811
    con, codes, names = coded
    want = _named(con, codes, hist=False)
    heights: list[int] = []

    def keep(df: pl.DataFrame) -> pl.DataFrame:
        heights.append(df.height)
        return df

    got = read_coded_once(con, _TIMING_CODES_SQL, names, keep, fetch_rows)
    got = got.with_columns(account=pl.Series(names, dtype=pl.Utf8).gather(got["acc"].cast(pl.UInt32))).select(TIM_COLS)
    assert want.height > 0 and (want["dc"] >= 0).any() and (want["tc"] >= 0).any()
    assert_frame_equal(got.sort(got.columns), want.sort(want.columns), check_exact=True)
    assert sum(heights) == want.height
    if fetch_rows == 1:  # every row fetched, and kept, alone
        assert set(heights) == {1}


def test_no_account_with_a_row_gives_the_columns_empty(coded):  # noqa: F811
    con, _, _ = coded
    got = read_coded_once(con, _TIMING_CODES_SQL, ["zz-nobody"], lambda df: df)
    assert got.height == 0 and got.columns == ["acc", "tc", "started_at", "log_ms", "cls", "dc"]


class _Counting:
    """A connection that counts the runs of ``_TIMING_CODES_SQL`` and passes everything else through."""

    def __init__(self, con) -> None:
        self.con, self.runs = con, 0

    def sql(self, query, *args, **kwargs):
        self.runs += query == _TIMING_CODES_SQL
        return self.con.sql(query, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.con, name)


def test_the_fit_reads_the_decision_times_once_whatever_its_batches(con, monkeypatch):
    counting = _Counting(con)
    want = SeatHandoffDetector().fit(con).score(con)
    monkeypatch.setattr(frames, "ROWS_PER_READ", 1)  # the history read an account at a time
    got = SeatHandoffDetector().fit(counting).score(con)
    assert want.height > 0 and counting.runs == 1
    assert_frame_equal(got, want, check_exact=True)
