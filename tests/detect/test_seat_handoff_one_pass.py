"""The seat hand-off fit's decision times by account and its accounts' tournament hands read by one pass of
``_TIMING_CODES_SQL`` and ``_HISTORY_CODES_SQL`` over every account (detectors/seat_handoff/one_pass.py
``read_coded_once``, ``read_history``), fetched a record batch at a time: the rows of the named queries
(test_seat_handoff_coded_reads.py ``_TIMING_SQL``, ``_HISTORY_SQL``) read whole and coded in Python, the null
accounts' sums and counts those of their rows, whatever the batches' size; and the fit runs each query once."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_coded_reads import TIM_COLS, _named, coded  # noqa: F401  (``coded``: the fixture)
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import frames, one_pass
from detectors.seat_handoff.one_pass import null_history, read_coded_once, read_history
from detectors.seat_handoff.queries import _HISTORY_CODES_SQL, _TIMING_CODES_SQL


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
    """A connection that counts the runs of ``_TIMING_CODES_SQL`` and ``_HISTORY_CODES_SQL`` and passes everything
    through."""

    def __init__(self, con) -> None:
        self.con, self.runs = con, {_TIMING_CODES_SQL: 0, _HISTORY_CODES_SQL: 0}

    def sql(self, query, *args, **kwargs):
        if query in self.runs:
            self.runs[query] += 1
        return self.con.sql(query, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.con, name)


def test_the_fit_reads_the_decision_times_and_the_history_once(con, monkeypatch):
    counting = _Counting(con)
    want = SeatHandoffDetector().fit(con).score(con)
    monkeypatch.setattr(frames, "ROWS_PER_READ", 1)  # the history read an account at a time
    got = SeatHandoffDetector().fit(counting).score(con)
    assert want.height > 0 and list(counting.runs.values()) == [1, 1]
    assert_frame_equal(got, want, check_exact=True)


@pytest.mark.parametrize("fetch_rows", [1, 37, None], ids=["a-row-a-batch", "a-few", "default"])
def test_the_history_read_once_keeps_the_candidates_rows_and_the_nulls_sums(coded, monkeypatch, fetch_rows):  # noqa: F811
    con, codes, names = coded
    monkeypatch.setattr(one_pass, "FETCH_ROWS", fetch_rows or one_pass.FETCH_ROWS)
    named = _named(con, codes, hist=True)
    null_acc = sorted(set(named["account"].to_list()))[::2]
    null_ev = pl.DataFrame({"account": null_acc, "tournament_id": ["x"] * len(null_acc)})
    hist, (sums, ranges) = read_history(con, names, null_ev)
    hist = hist.with_columns(account=pl.Series(names, dtype=pl.Utf8).gather(hist["acc"].cast(pl.UInt32)))
    is_null = pl.col("account").is_in(null_acc)
    want = named.filter(~is_null)
    assert want.height > 0 and sums.height == len(null_acc)
    assert_frame_equal(hist.select(want.columns).sort(want.columns), want.sort(want.columns), check_exact=True)
    want_sums, want_ranges = null_history(named.filter(is_null))
    for got, exp, key in ((sums, want_sums, ["account"]), (ranges, want_ranges, ["account", "rstr"])):
        assert got.schema == exp.schema
        assert_frame_equal(got.sort(key), exp.sort(key), check_exact=True)
