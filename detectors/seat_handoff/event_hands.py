"""The hands of the seat hand-off fit's account-events read a batch of account-events at a time, and the candidate
account-events that can be compared at all.

With re-logins as candidates (``relogins``) nearly every reconnection of a long window is a candidate event: the
hands of every candidate account-event read by one query (:data:`~detectors.seat_handoff.queries._HAND_ROWS_SQL`:
one group per account and hand, each with a list of bet sizes) held more than the pipeline's 1 GB DuckDB limit. Here
the account-events are read in batches of at most :data:`HAND_ROWS_PER_READ` of their seats, each batch's rows
reduced (the range strata made, the situation columns dropped) before the next is read; and a candidate
account-event is read only when one of its logins has the hands a comparison needs on each side
(:func:`testable_events`): the others never become a compared change point (``_split_plans``), so their hands,
decision times and history were read for nothing.
"""

from __future__ import annotations

from typing import Callable

import duckdb
import polars as pl

from detectors.seat_handoff.queries import _HAND_ROWS_SQL

#: seats of the account-events one read of their hands covers at most (an account-event with more is a batch of its
#: own): every candidate account-event's hands read at once ran out of the pipeline's 1 GB DuckDB limit at 2.4M hands
HAND_ROWS_PER_READ = 800_000

# each registered login ``_rb_cl`` (``account``, ``tournament_id``, ``login_at``; ``login_at`` null for an
# account-event read whole) with the account's seats in the event not sitting out (``n``), and of them those of
# hands started before the login (``n_before``). An account acts only in a hand it has a seat in: these are at least
# the hands _HAND_ROWS_SQL reads there (an account's hands with a voluntary action, not sitting out)
_LOGIN_SEATS_SQL = """
SELECT c.account, c.tournament_id, c.login_at,
       count(*) FILTER (WHERE h.started_at < c.login_at) AS n_before, count(*) AS n
FROM _rb_cl c JOIN hands h ON h.tournament_id = c.tournament_id
JOIN seats s ON s.hand_id = h.hand_id AND s.player = c.account
WHERE NOT coalesce(s.sitting_out, FALSE)
GROUP BY ALL
"""


def login_seats(con: duckdb.DuckDBPyConnection, logins: pl.DataFrame) -> pl.DataFrame:
    """Each login's seats in its event, before it and in all (:data:`_LOGIN_SEATS_SQL`).

    Parameters
    ----------
    con : the warehouse (``hands``, ``seats``). logins : ``account``, ``tournament_id`` and ``login_at`` (null for an
        account-event counted whole).

    Returns
    -------
    One row per login with a seat (``account``, ``tournament_id``, ``login_at``, ``n_before``, ``n``)."""
    cl = logins.select(pl.col("account").cast(pl.Utf8), pl.col("tournament_id").cast(pl.Utf8),
                       pl.col("login_at").cast(pl.Datetime("us"))).unique()
    con.register("_rb_cl", cl)
    try:
        return con.sql(_LOGIN_SEATS_SQL).pl()
    finally:
        con.unregister("_rb_cl")


def testable_events(con: duckdb.DuckDBPyConnection, cand: pl.DataFrame, null_ev: pl.DataFrame, min_before: int,
                    min_segment: int) -> pl.DataFrame:
    """The account-events whose hands the fit reads: the candidates' with a login that has at least ``min_before``
    seats of the account before it and ``min_segment`` from it (an upper bound of the hands ``_split_plans`` counts
    there: a login short of it on either side is never compared), and the null's account-events, with their seats.

    Parameters
    ----------
    con : the warehouse. cand : the candidate logins (``account``, ``tournament_id``, ``login_at``; without
        ``login_at``, hands only, every candidate account-event).
    null_ev : the null's account-events (``account``, ``tournament_id``). min_before, min_segment : the detector's.

    Returns
    -------
    ``account``, ``tournament_id``, ``n`` (the account's seats in the event), one row per account-event, sorted."""
    login = pl.col("login_at") if "login_at" in cand.columns else pl.lit(None)  # (hands only: no login, read whole)
    logins = pl.concat([cand.select("account", "tournament_id", login_at=login.cast(pl.Datetime("us"))),
                        null_ev.select("account", "tournament_id", login_at=pl.lit(None, pl.Datetime("us")))],
                       how="vertical_relaxed")
    seats = login_seats(con, logins)
    ok = (pl.col("login_at").is_null() | ((pl.col("n_before") >= min_before)
                                          & (pl.col("n") - pl.col("n_before") >= min_segment)))
    return (seats.filter(ok).group_by("account", "tournament_id").agg(pl.col("n").max())
            .sort("account", "tournament_id"))


def event_sizes(con: duckdb.DuckDBPyConnection, events: pl.DataFrame) -> pl.DataFrame:
    """The seats of each account-event of ``events`` (``account``, ``tournament_id``) as :func:`login_seats` counts
    them whole: ``account``, ``tournament_id``, ``n`` (0 for an account-event without a seat), sorted."""
    ev = events.select(pl.col("account").cast(pl.Utf8), pl.col("tournament_id").cast(pl.Utf8)).unique()
    seats = login_seats(con, ev.with_columns(login_at=pl.lit(None, pl.Datetime("us")))).select(
        "account", "tournament_id", "n")
    return (ev.join(seats, on=["account", "tournament_id"], how="left", nulls_equal=True)
            .with_columns(pl.col("n").fill_null(0)).sort("account", "tournament_id"))


def event_batches(sizes: pl.DataFrame, max_rows: int) -> list[pl.DataFrame]:
    """``sizes``' account-events in consecutive batches of at most ``max_rows`` of ``n`` each (an account-event with
    more alone), in their order.

    Parameters
    ----------
    sizes : ``account``, ``tournament_id``, ``n``. max_rows : the rows of a batch.

    Returns
    -------
    The batches (``account``, ``tournament_id``); every account-event in one."""
    out, lo, tot = [], 0, 0
    ns = sizes["n"].fill_null(0).to_list()
    for i, n in enumerate(ns):
        if i > lo and tot + n > max_rows:
            out.append((lo, i))
            lo, tot = i, 0
        tot += n
    if sizes.height:
        out.append((lo, sizes.height))
    return [sizes.slice(a, b - a).select("account", "tournament_id") for a, b in out]


def read_hand_rows(con: duckdb.DuckDBPyConnection, sizes: pl.DataFrame,
                   transform: Callable[[pl.DataFrame], pl.DataFrame], max_rows: int | None = None) -> pl.DataFrame:
    """:data:`_HAND_ROWS_SQL` run a batch of account-events at a time (:func:`event_batches`, each registered as
    ``_rb_at``), each batch's rows reduced by ``transform`` before the next is read.

    Parameters
    ----------
    con : the warehouse (``_rb_strength`` registered; ``_rb_at`` is registered here and left unregistered).
    sizes : the account-events (``account``, ``tournament_id``, ``n``: their seats, the batches' sizes).
    transform : what is kept of a batch's rows. max_rows : a batch's seats (default :data:`HAND_ROWS_PER_READ`).

    Returns
    -------
    The batches' kept rows, one frame (the rows of one read of every account-event, in another order)."""
    parts = []
    for b in event_batches(sizes, HAND_ROWS_PER_READ if max_rows is None else max_rows):
        con.register("_rb_at", b)
        try:
            parts.append(transform(con.sql(_HAND_ROWS_SQL).pl()))
        finally:
            con.unregister("_rb_at")
    if not parts:
        con.register("_rb_at", sizes.select("account", "tournament_id"))
        try:
            parts.append(transform(con.sql(_HAND_ROWS_SQL).pl()))
        finally:
            con.unregister("_rb_at")
    return pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]
