"""The seat hand-off fit's reads of its accounts' tournament hands and decision times with the account, the
tournament and the device coded by DuckDB (detectors/seat_handoff/frames.py ``read_coded``, queries.py
``_HISTORY_CODES_SQL`` and ``_TIMING_CODES_SQL``), a batch of accounts at a time, batches sized by the rows they
return: the rows of the named queries below (``_HISTORY_SQL``, ``_TIMING_SQL``: the fit's reads before they were coded, kept
here as the reference) read whole and coded in Python, whatever the batches."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff.frames import HIST_ROWS_SQL, Codes, account_batches, read_coded
from detectors.seat_handoff.queries import (
    _HOLE_JOIN, _HISTORY_CODES_SQL, _PER_HAND_COLS, _STRENGTH_JOIN, _TIMING_CODES_SQL, ACTS, _with_strength,
    strength_table,
)

#: the rows :data:`_TIMING_CODES_SQL` can return for each account (at most one a decision); the fit reads the
#: decision times in one pass now (one_pass.py), so only this test batches them
TIMING_ROWS_SQL = """
SELECT account, count(*) AS n FROM decisions WHERE account IN (SELECT account FROM _rb_acc)
GROUP BY ALL ORDER BY ALL
"""

HIST_COLS = ["account", "tc", "started_at", *[f"n_{a}" for a in ACTS], "dc", "rstr", "rcls"]
TIM_COLS = ["account", "tc", "started_at", "log_ms", "cls", "dc"]

# every decision time of the candidate accounts (cash and tournaments), with its
# decision class and the device of the session it was played under (the latest
# login of the account before the hand): the account's own timing history.
# Classes follow how decision times are made: a preflop fold is quick, a decision
# over a third of the stack or more (all-in, a big call or bet) is slow, a preflop
# fold to such a bet a class of its own, the rest in between; the classes are
# compared separately.
_TIMING_SQL = """
WITH acc AS (SELECT DISTINCT account FROM _rb_at),
d AS (
  SELECT d.account, d.hand_id, h.tournament_id, h.started_at, ln(greatest(d.ms, 1)) AS log_ms,
         CASE WHEN a.street = 'preflop' AND a.action = 'fold'
                   THEN CASE WHEN s.stack_start > 0 AND a.to_call * 3 >= s.stack_start THEN 3 ELSE 0 END
              WHEN a.is_all_in OR (s.stack_start > 0 AND (a.to_call * 3 >= s.stack_start
                   OR (a.action IN ('bet', 'raise') AND coalesce(a.raise_to, a.amount) * 3 >= s.stack_start))) THEN 2
              ELSE 1 END AS cls
  FROM decisions d JOIN acc ON acc.account = d.account
  JOIN hands h USING (hand_id)
  JOIN actions a ON a.hand_id = d.hand_id AND a.seq = d.seq
  LEFT JOIN seats s ON s.hand_id = d.hand_id AND s.player = d.account
  WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM acc))
SELECT d.account, d.tournament_id, d.started_at, d.log_ms, d.cls, ss.device
FROM d ASOF LEFT JOIN ss ON d.account = ss.account AND d.started_at >= ss.login_at
"""

# the account's own tournament play, hand by hand, with the device of the session
# it was played under: the action-mix history (tournament hands only: cash stacks
# are deeper and change the mix)
_HISTORY_SQL = f"""
WITH acc AS (SELECT DISTINCT account FROM _rb_at),
x AS (
  SELECT a.player AS account, a.hand_id, h.tournament_id, h.started_at,{_PER_HAND_COLS}
  FROM actions a JOIN hands h USING (hand_id) JOIN acc ON acc.account = a.player
  LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
  WHERE a.action NOT LIKE 'post%' AND h.is_tournament AND NOT coalesce(s.sitting_out, FALSE)
  GROUP BY ALL
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM acc)),
y AS (SELECT x.*, ss.device FROM x ASOF LEFT JOIN ss ON x.account = ss.account AND x.started_at >= ss.login_at)
SELECT x.* EXCLUDE (game), st.strength FROM y x
{_HOLE_JOIN}
  ON hc.hand_id = x.hand_id AND hc.player = x.account
{_STRENGTH_JOIN}
"""


def encode_timing(codes: Codes, df: pl.DataFrame) -> pl.DataFrame:
    """Decision-time rows (``account``, ``tournament_id``, ``started_at``, ``log_ms``, ``cls``, ``device``) with
    the tournament and the device as codes (``tc``, ``dc``; -1 for none), as the fit coded them in Python."""
    return df.select(
        "account", tc=pl.col("tournament_id").replace_strict(codes.tournament, default=-1, return_dtype=pl.Int32),
        started_at="started_at", log_ms="log_ms", cls="cls",
        dc=pl.col("device").replace_strict(codes.device, default=-1, return_dtype=pl.Int32))


def encode_hist(codes: Codes, df: pl.DataFrame) -> pl.DataFrame:
    """Tournament-hand rows (``account``, ``tournament_id``, ``started_at``, the action counts, ``device``,
    ``rstr``, ``rcls``) with the tournament and the device as codes (``tc``, ``dc``; -1 for none)."""
    return df.select(
        "account", tc=pl.col("tournament_id").replace_strict(codes.tournament, default=-1, return_dtype=pl.Int32),
        started_at="started_at", *[f"n_{a}" for a in ACTS],
        dc=pl.col("device").replace_strict(codes.device, default=-1, return_dtype=pl.Int32), rstr="rstr", rcls="rcls")


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
        return encode_hist(codes, _with_strength(con.sql(_HISTORY_SQL).pl())).select(HIST_COLS)
    return encode_timing(codes, con.sql(_TIMING_SQL).pl()).select(TIM_COLS)


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
