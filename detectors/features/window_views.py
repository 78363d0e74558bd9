"""The feature store's window as the warehouse's own tables: temporary views holding only the window's rows.

A detector that reads raw tables (the identity detectors: sessions, decisions, sit-outs, registrations) judges the
window (``store_for(con).window_days``: every day by default, else the last that many hand days) by reading through
:func:`window_tables`: a cursor of the same database on which each table of :data:`WINDOW_VIEWS` is a temporary view
of the same name over the warehouse's table, filtered to the window's days. Every unqualified read of the detector
and of the features it calls then sees the window without a change to its SQL; with the default window the tables
are read as they are (``con`` itself), so the signals are those of the whole warehouse. A row belongs to the day
the day features give it (:func:`detectors.features.days.read_day`): a hand to its hand day, a hand's rows to their
hand, an account table's rows to the UTC day of their time stamp. docs/scale.md ("What still reads the whole
warehouse") lists who reads through it.
"""

from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from typing import Iterator

import duckdb

from detectors.features.gameplay import store_for

_IN_WINDOW = "BETWEEN (SELECT lo FROM _rb_window) AND (SELECT hi FROM _rb_window)"
_OF_HANDS = "hand_id IN (SELECT hand_id FROM hands)"

#: The tables read through the window (:func:`window_tables`), each with the filter that keeps its rows of the
#: window, in the order they are made (a later one reads an earlier one): hands by their hand day; seats, actions,
#: the table events, the finishes stated in a hand, the hole cards, boards and bounties by their hand; sessions by
#: the day of their login, decisions and platform sit-outs by the day of their time (as the day features assign rows
#: to days, :func:`detectors.features.days.read_day`); registrations of the window's events; accounts seen in any
#: of them.
WINDOW_VIEWS = (
    ("hands", "day " + _IN_WINDOW),
    ("seats", _OF_HANDS),
    ("actions", _OF_HANDS),
    ("table_events", _OF_HANDS),
    ("tournament_finishes", _OF_HANDS),
    ("hole_cards", _OF_HANDS),
    ("boards", _OF_HANDS),
    ("bounties", _OF_HANDS),
    ("sessions", "CAST(login_at AS DATE) " + _IN_WINDOW),
    ("decisions", "CAST(ts AS DATE) " + _IN_WINDOW),
    ("sit_events", "CAST(ts AS DATE) " + _IN_WINDOW),
    ("registrations", "tournament_id IN (SELECT tournament_id FROM hands)"),
    ("accounts", "account IN (SELECT account FROM sessions UNION SELECT player FROM seats UNION SELECT account FROM decisions)"),
)
#: the views that select by hand: not made when the window holds every hand day of the warehouse (each would be
#: the whole table, at the cost of a hash of the window's hand ids at every reference)
_BY_HAND = frozenset(t for t, where in WINDOW_VIEWS if t == "hands" or "FROM hands" in where)


def window_span(con: duckdb.DuckDBPyConnection) -> tuple[dt.date, dt.date] | None:
    """The days a detector judges: the feature store's window (``store_for(con).window_days``, the last that many
    days up to the warehouse's last hand day, as :func:`detectors.features.days.window_of` counts them).

    Parameters
    ----------
    con : the warehouse.

    Returns
    -------
    (first day, last day), inclusive; None for every day (``window_days`` 0, the default) or a warehouse without
    hands."""
    n = int(store_for(con).window_days)
    last = con.execute("SELECT max(day) FROM hands").fetchall()[0][0] if n > 0 else None
    return None if last is None else (last - dt.timedelta(days=n - 1), last)


@contextmanager
def window_tables(con: duckdb.DuckDBPyConnection, window: tuple[dt.date, dt.date] | None
                  ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection on which the tables of :data:`WINDOW_VIEWS` hold only the rows of ``window`` (first, last day):
    a cursor of ``con`` (the same database) with temporary views of those names over the warehouse's tables;
    ``con`` itself when ``window`` is None (every day: the tables whole, as they are). A table the warehouse lacks
    gets no view; the accounts are those of the window only where sessions, seats and decisions are all present.

    Parameters
    ----------
    con : the warehouse. window : (first day, last day), inclusive (:func:`window_span`), or None.

    Yields
    ------
    The connection to read through; a cursor is closed (its views gone) on leaving."""
    if window is None:
        yield con
        return
    cur = con.cursor()
    try:
        db = cur.execute("SELECT current_database()").fetchall()[0][0]
        have = {r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = "
                                          "current_database() AND schema_name = 'main'").fetchall()}
        cur.execute("CREATE TEMP TABLE _rb_window AS SELECT ?::DATE AS lo, ?::DATE AS hi", list(window))
        first = cur.execute("SELECT min(day) FROM hands").fetchall()[0][0] if "hands" in have else None
        every_hand = first is None or window[0] <= first
        # a view's unqualified table names are the window's views where made, else the warehouse's tables
        cur.execute(";\n".join(
            f"CREATE TEMP VIEW {_ident(t)} AS SELECT * FROM {_ident(db)}.main.{_ident(t)} WHERE {where}"
            for t, where in WINDOW_VIEWS if t in have and not (every_hand and t in _BY_HAND)
            and (t != "accounts" or {"sessions", "seats", "decisions"} <= have)))
        yield cur
    finally:
        cur.close()


def _ident(s: str) -> str:
    """A SQL identifier, quotes doubled (a table or database name from the catalog, never data)."""
    return '"' + s.replace('"', '""') + '"'
