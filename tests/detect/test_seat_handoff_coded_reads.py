"""The seat hand-off fit's reads of its accounts' tournament hands and decision times with the account, the
tournament and the device coded by DuckDB (detectors/seat_handoff/frames.py ``read_coded``, queries.py
``_HISTORY_CODES_SQL`` and ``_TIMING_CODES_SQL``), a batch of accounts at a time, batches sized by the rows they
return: the rows of the named queries (``_HISTORY_SQL``, ``_TIMING_SQL``) read whole and coded in Python, whatever
the batches."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff.frames import HIST_ROWS_SQL, TIMING_ROWS_SQL, Codes, account_batches, read_coded
from detectors.seat_handoff.queries import (
    ACTS, _HISTORY_CODES_SQL, _HISTORY_SQL, _TIMING_CODES_SQL, _TIMING_SQL, _with_strength, strength_table,
)

HIST_COLS = ["account", "tc", "started_at", *[f"n_{a}" for a in ACTS], "dc", "rstr", "rcls"]
TIM_COLS = ["account", "tc", "started_at", "log_ms", "cls", "dc"]


@pytest.fixture(scope="module")
def world():
    return build_world()


@pytest.fixture()
def coded(con):
    """The warehouse with the codes and the strength table registered; the accounts (one without a seat)."""
    codes = Codes(con)
    names = sorted(set(con.sql("SELECT DISTINCT player FROM seats").pl()["player"].to_list()) | {"zz-no-seat"})
    con.register("_rb_at", pl.DataFrame({"account": names, "tournament_id": ["x"] * len(names)}))
    con.register("_rb_strength", strength_table())
    codes.register(con)
    yield con, codes, names
    Codes.unregister(con)
    con.unregister("_rb_at")
    con.unregister("_rb_strength")


def _named(con, codes: Codes, hist: bool) -> pl.DataFrame:
    """The named query's rows read whole, coded in Python as the fit coded them before."""
    if hist:
        return codes.encode_hist(_with_strength(con.sql(_HISTORY_SQL).pl())).select(HIST_COLS)
    return codes.encode_timing(con.sql(_TIMING_SQL).pl()).select(TIM_COLS)


def _read(con, names: list[str], hist: bool, max_rows: int | None, heights: list[int]) -> pl.DataFrame:
    """The coded query's rows read by batches, the account's name put back from its code."""
    def keep(df: pl.DataFrame) -> pl.DataFrame:
        heights.append(df.height)
        return _with_strength(df) if hist else df

    sql, sizes = (_HISTORY_CODES_SQL, HIST_ROWS_SQL) if hist else (_TIMING_CODES_SQL, TIMING_ROWS_SQL)
    df = read_coded(con, sql, names, sizes, keep, max_rows)
    acc = pl.Series(names, dtype=pl.Utf8)
    return df.with_columns(account=acc.gather(df["acc"].cast(pl.UInt32))).select(HIST_COLS if hist else TIM_COLS)


@pytest.mark.parametrize("hist", [True, False], ids=["history", "timing"])
@pytest.mark.parametrize("max_rows", [1, 400, None], ids=["one-account-a-read", "a-few", "default"])
def test_coded_reads_are_the_named_rows_coded(coded, hist, max_rows):
    con, codes, names = coded
    want = _named(con, codes, hist)
    heights: list[int] = []
    got = _read(con, names, hist, max_rows, heights)
    assert want.height > 0 and (want["dc"] >= 0).any() and (want["tc"] >= 0).any()
    assert_frame_equal(got.sort(got.columns), want.sort(want.columns), check_exact=True)
    sizes = HIST_ROWS_SQL if hist else TIMING_ROWS_SQL
    batches = account_batches(con, pl.Series(names), max_rows if max_rows is not None else 500_000, sizes)
    assert len(heights) == len(batches)
    if max_rows == 1:  # every account with rows read alone
        assert all(len(b) == 1 for b in batches[:-1])


@pytest.mark.parametrize("hist", [True, False], ids=["history", "timing"])
def test_the_rows_counted_before_a_read_bound_the_rows_it_returns(coded, hist):
    con, codes, names = coded
    got = _named(con, codes, hist).group_by("account").len("rows")
    con.register("_rb_acc", pl.DataFrame({"account": names}))
    try:
        n = con.sql(HIST_ROWS_SQL if hist else TIMING_ROWS_SQL).pl()
    finally:
        con.unregister("_rb_acc")
    both = got.join(n, on="account", how="left")
    assert both.height > 0 and (both["rows"] <= both["n"].fill_null(0)).all()
