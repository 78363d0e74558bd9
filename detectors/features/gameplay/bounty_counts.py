"""Bounty collusion's presence rows held and counted by DuckDB: the rows of
:data:`~detectors.features.gameplay.bounty.BOUNTY_PRESENCE_SQL` (one per preflop decision with a short bounty
target in and other player still in) as a temporary table with their cells, and what the tests read of them as
counts per (player, partner, cell), the explaining-away of :func:`~detectors.features.gameplay.bounty_unshadowed`
done on the table: no frame of the rows comes to Python."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import polars as pl

from detectors.features.gameplay.bounty import (BOUNTY_CONTEXT_BINS, BOUNTY_LOOSENESS_TAU, BOUNTY_PRESENCE_SQL,
                                                POSITION_BIN)
from detectors.features.gameplay.bounty_passing import (BOUNTY_PARTNER_RAISE_SQL, BOUNTY_SHOVE_SQL, SEAT_BIN,
                                                        passing_combined, table_effect_p, view_columns)
from detectors.features.gameplay.bounty_tests import bounty_wide_calls, bounty_wide_cells
from detectors.features.gameplay.cards import CARD_INDEX, starting_hand_percentile

# the rows of BOUNTY_PRESENCE_SQL with bounty_presence's cells: the starting hand's decile (``sdec``, looked up in
# _sh_{tag}: every ordered pair of card texts with starting_hand_percentile's value; null where the cards are not
# known or the game is not Hold'em), the price (``cbin``) and the position (``pos``, POSITION_BIN in _pos_{tag}; -1
# where the seat line gives none)
PRESENCE_CELLS_SQL = """
SELECT p.hand_id, p.seq, p.player, p.partner, p.tournament_id, p.cont,
       -- (DuckDB's least and greatest skip a null: the unknown hand kept null by the CASE)
       CASE WHEN sh.strength IS NOT NULL THEN least(greatest(floor(sh.strength * 10), 0), 9) END::TINYINT AS sdec,
       (CASE WHEN p.to_call_bb <= 2 THEN 0 WHEN p.to_call_bb <= 6 THEN 1 WHEN p.to_call_bb <= 15 THEN 2 ELSE 3 END)::TINYINT
       AS cbin,
       coalesce(pb.pos, -1)::TINYINT AS pos
FROM ({source}) p
LEFT JOIN _sh_{tag} sh ON p.game = 'holdem' AND sh.c1 = p.hole[1] AND sh.c2 = p.hole[2]
LEFT JOIN _pos_{tag} pb ON pb.position = p.position
"""

# bounty passing's rows (bounty_passing._rows' cells): the calls of a partner's short-stacked raise, the price
# their pot odds cut at 0.2, 0.3, 0.4 (-1 unknown), the seat and the raiser's seat in SEAT_BIN's cells (_pos_{tag})
RAISE_CELLS_SQL = """
SELECT p.hand_id, p.seq, p.player, p.partner, p.tournament_id, p.cont,
       CASE WHEN sh.strength IS NOT NULL THEN least(greatest(floor(sh.strength * 10), 0), 9) END::TINYINT AS sdec,
       (CASE WHEN p.odds IS NULL THEN -1 ELSE (p.odds > 0.2::DOUBLE)::INT + (p.odds > 0.3::DOUBLE)::INT
             + (p.odds > 0.4::DOUBLE)::INT END)::TINYINT AS cbin,
       coalesce(s1.pos, -1)::TINYINT AS pos, coalesce(s2.pos, -1)::TINYINT AS rpos
FROM ({source}) p
LEFT JOIN _sh_{tag} sh ON p.game = 'holdem' AND sh.c1 = p.hole[1] AND sh.c2 = p.hole[2]
LEFT JOIN _pos_{tag} s1 ON s1.position = p.position
LEFT JOIN _pos_{tag} s2 ON s2.position = p.raiser_position
"""
# ... and the shoves with a partner to act: the stack cut at 5, 10, 15 big blinds, the seat, the tournament's rank
# among the rows' (``tix``) and the table
SHOVE_CELLS_SQL = """
SELECT p.hand_id, p.seq, p.player, p.partner, p.tournament_id, p.table_name, p.cont,
       CASE WHEN sh.strength IS NOT NULL THEN least(greatest(floor(sh.strength * 10), 0), 9) END::TINYINT AS sdec,
       (CASE WHEN p.stack_bb IS NULL THEN -1 ELSE (p.stack_bb > 5::DOUBLE)::INT + (p.stack_bb > 10::DOUBLE)::INT
             + (p.stack_bb > 15::DOUBLE)::INT END)::TINYINT AS cbin,
       coalesce(s1.pos, -1)::TINYINT AS pos, coalesce(dense_rank() OVER (ORDER BY p.tournament_id), -1)::BIGINT AS tix
FROM ({source}) p
LEFT JOIN _sh_{tag} sh ON p.game = 'holdem' AND sh.c1 = p.hole[1] AND sh.c2 = p.hole[2]
LEFT JOIN _pos_{tag} s1 ON s1.position = p.position
"""
#: per kind of rows: the query of its cells (None: PRESENCE_CELLS_SQL), its source, its cell columns and the seat
#: cells of ``pos``
ROW_KINDS = {
    "presence": (None, BOUNTY_PRESENCE_SQL, ("sdec", "cbin", "pos"), POSITION_BIN),
    "raises": (RAISE_CELLS_SQL, BOUNTY_PARTNER_RAISE_SQL, ("sdec", "cbin", "pos", "rpos"), SEAT_BIN),
    "shoves": (SHOVE_CELLS_SQL, BOUNTY_SHOVE_SQL, ("sdec", "cbin", "pos", "tix"), SEAT_BIN),
}

# the population's continuation rate (per player and hand: the first decision's) and the share of rows with the cards
# known, over every row
SUMMARY_SQL = """
SELECT (SELECT avg(c::DOUBLE) FROM (SELECT arg_min(cont, seq) AS c FROM _bp_{tag} GROUP BY hand_id, player)) AS cont,
       (SELECT avg((sdec IS NOT NULL)::DOUBLE) FROM _bp_{tag}) AS known
"""

# per (player, partner, cell) the rows and continuations, and per (player, cell) the distinct decisions and
# continuations (the cards known); {keys}: the cell columns, with the tournament for the presence test
PAIR_COUNTS_SQL = """
SELECT player, partner, {keys}, count(*)::UINTEGER AS n, sum(cont::BIGINT)::BIGINT AS k
FROM _bp_{tag} WHERE sdec IS NOT NULL GROUP BY ALL
"""
DECISION_COUNTS_SQL = """
SELECT player, {keys}, count(*)::UINTEGER AS Dn, sum(cont::BIGINT)::BIGINT AS Dk
FROM (SELECT DISTINCT ON (hand_id, seq) * FROM _bp_{tag} WHERE sdec IS NOT NULL) GROUP BY ALL
"""
# per (player, cell) the rows and continuations (every partner)
ROW_COUNTS_SQL = """
SELECT player, {keys}, count(*)::UINTEGER AS n, sum(cont::BIGINT)::BIGINT AS k
FROM _bp_{tag} WHERE sdec IS NOT NULL GROUP BY ALL
"""
# per unordered pair the sorted tournaments of every row (the cards known or not)
TOURS_SQL = """
SELECT least(player, partner) AS player, greatest(player, partner) AS opponent,
       list_sort(list_distinct(list(tournament_id))) AS tournaments
FROM _bp_{tag} GROUP BY ALL
"""

# bounty_unshadowed: a (decision, partner) row goes where the player's strongest partner (_best_{tag}) was also in
# at that decision and is not this partner
UNSHADOW_SQL = """
DELETE FROM _bp_{tag} r USING (
    SELECT b.hand_id, b.seq, s.best FROM _bp_{tag} b JOIN _best_{tag} s ON s.player = b.player AND s.best = b.partner
) x
WHERE r.hand_id = x.hand_id AND r.seq = x.seq AND r.partner <> x.best
"""

# per ordered pair the sorted tournaments and hands of its continuations (the cards known)
WHERE_SQL = """
SELECT player, partner, list_sort(list_distinct(list(tournament_id))) AS tournaments,
       list_sort(list_distinct(list(hand_id))) AS hands
FROM _bp_{tag} WHERE sdec IS NOT NULL AND cont GROUP BY ALL
"""

# bounty_wide_calls' evidence hands: per unordered pair the hands of the continuations in the cells of _wt_{tag}
# (player, partner, cell, r), each at its least likely cell, the least likely first
CALL_HANDS_SQL = """
WITH c AS (
    SELECT least(b.player, b.partner) AS x, greatest(b.player, b.partner) AS y, b.hand_id, min(w.r) AS r
    FROM _bp_{tag} b JOIN _wt_{tag} w ON w.player = b.player AND w.partner = b.partner AND {on}
    WHERE b.cont GROUP BY ALL
)
SELECT x AS player, y AS opponent, list(hand_id ORDER BY r, hand_id) AS wc_hands FROM c GROUP BY ALL
"""

#: the presence rows' cell columns
PRESENCE_BINS = ("sdec", "cbin", "pos")
#: the units of BountyPresenceTable.unit_counts: the tournament, or a table of it
UNITS = {"tournament": "tournament_id", "table": "tournament_id || '|' || table_name AS tournament_id"}

_TAGS = itertools.count()  # names of temporary tables, never reused within a process


def _starting_hands() -> pl.DataFrame:
    """Every ordered pair of card texts (c1, c2) with its Hold'em starting-hand ``strength``
    (:func:`~detectors.features.gameplay.starting_hand_percentile`, the one definition), for DuckDB to look up."""
    cards = list(CARD_INDEX)
    f = pl.DataFrame({"c1": [a for a in cards for _ in cards], "c2": [b for _ in cards for b in cards]})
    f = f.with_columns(hole=pl.concat_list("c1", "c2"), game=pl.lit("holdem"))
    return f.select("c1", "c2", starting_hand_percentile(f))


class BountyPresenceTable:
    """The presence rows in DuckDB (:func:`bounty_presence_table`) and the counts the tests read of them.

    Parameters
    ----------
    con : the connection holding the temporary table ``_bp_<tag>``. tag : its name's suffix. bins : its cell
    columns (the starting hand's decile ``sdec`` first; :data:`PRESENCE_BINS` for the presence rows)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tag: str, bins: tuple[str, ...] = ("sdec", "cbin", "pos")) -> None:
        self.con, self.tag, self.bins = con, tag, tuple(bins)

    def _frame(self, sql: str, keys: str = "", on: str = "") -> pl.DataFrame:
        """The Polars frame of one of this module's queries on the table (``keys``: its cell columns; ``on``: the
        join of :data:`CALL_HANDS_SQL` on them)."""
        return self.con.sql(sql.format(tag=self.tag, keys=keys, on=on)).pl()

    def cell_counts(self, keys: tuple[str, ...] = ()) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Per (player, partner, ``keys``, cell) ``n``, ``k`` and per (player, ``keys``, cell) ``Dn``, ``Dk``: the
        counts of :func:`~detectors.features.gameplay.bounty.bounty_tournament_effect` (``keys``: the
        tournament) and, without ``keys``, of :func:`~detectors.features.gameplay.bounty_wide_cells`."""
        cols = ", ".join((*keys, *self.bins))
        return self.pair_counts(keys), self._frame(DECISION_COUNTS_SQL, cols)

    def pair_counts(self, keys: tuple[str, ...] = ()) -> pl.DataFrame:
        """Per (player, partner, ``keys``, cell) ``n``, ``k``: the first frame of :meth:`cell_counts` alone (the
        wide calls' tail with the tournament effect reads no more of the counts per tournament)."""
        return self._frame(PAIR_COUNTS_SQL, ", ".join((*keys, *self.bins)))

    def unit_counts(self, unit: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Per (player, unit, cell) the rows ``n``, ``k`` (every partner) and the distinct decisions ``Dn``,
        ``Dk``, the unit named ``tournament_id``: the counts of
        :func:`~detectors.features.gameplay.bounty.bounty_tournament_effect` over ``unit`` (:data:`UNITS`)."""
        cols = ", ".join((UNITS[unit], *self.bins))
        return self._frame(ROW_COUNTS_SQL, cols), self._frame(DECISION_COUNTS_SQL, cols)

    def tournaments(self) -> pl.DataFrame:
        """Per unordered pair (``player``, ``opponent``) the sorted tournaments of its rows."""
        return self._frame(TOURS_SQL)

    def summary(self) -> tuple[float, float]:
        """The population's continuation rate against short bounty targets (per player and hand, the first
        decision's; NaN without rows) and the share of rows with the cards known (0 without rows)."""
        cont, known = self.con.execute(SUMMARY_SQL.format(tag=self.tag)).fetchall()[0]
        return (float("nan") if cont is None else float(cont)), float(known or 0.0)

    def wide_counts(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The counts of :func:`~detectors.features.gameplay.bounty_wide_cells` (``counts=``): per (player, partner,
        sdec, cbin, pos) ``n``, ``k``; per (player, sdec, cbin, pos) ``Dn``, ``Dk``."""
        return self.cell_counts()

    def presence_counts(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, bool]:
        """The counts of the presence test (:func:`~detectors.features.gameplay.bounty.presence_parts`): per
        (player, partner, tournament_id, sbin, cbin, pos) ``n``, ``k``; per (player, tournament_id, sbin, cbin,
        pos) ``Dn``, ``Dk``; per ordered pair its continuations' tournaments and hands; True (the rows carry
        tournaments). ``sbin`` = ``sdec`` // 2, :func:`~detectors.features.gameplay.bounty_presence`'s quintile
        (10 s = 2 (5 s) in floating point)."""
        keys = "tournament_id, (sdec // 2)::TINYINT AS sbin, cbin, pos"
        pt = self._frame(PAIR_COUNTS_SQL, keys)
        dt = self._frame(DECISION_COUNTS_SQL, keys)
        return pt, dt, self._frame(WHERE_SQL), True

    def unshadow(self, best: pl.DataFrame) -> None:
        """Drop the rows :func:`~detectors.features.gameplay.bounty_unshadowed` drops, ``best`` its strongest
        partners (``player``, ``best``)."""
        if best.is_empty():
            return
        self.con.register(f"_best_{self.tag}", best.select("player", "best"))
        try:
            self.con.execute(UNSHADOW_SQL.format(tag=self.tag)).fetchall()
        finally:
            self.con.unregister(f"_best_{self.tag}")

    def call_hands(self, cells: pl.DataFrame) -> pl.DataFrame:
        """``wc_hands`` of :func:`~detectors.features.gameplay.bounty_wide_calls` per unordered pair (``player``,
        ``opponent``): the hands of the continuations in ``cells`` (player, partner, the cell columns, r: the
        cells tested), least likely first."""
        self.con.register(f"_wt_{self.tag}", cells.select("player", "partner", *self.bins, "r"))
        try:
            # the cell columns are this table's own names (PRESENCE_BINS, PASSING_BINS)
            return self._frame(CALL_HANDS_SQL, on=" AND ".join(f"w.{c} = b.{c}" for c in self.bins))
        finally:
            self.con.unregister(f"_wt_{self.tag}")


@contextmanager
def bounty_presence_table(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0,
                          kind: str = "presence") -> Iterator[BountyPresenceTable]:
    """The rows of :func:`~detectors.features.gameplay.bounty_presence` as a DuckDB temporary table on ``con``,
    with their cells (``sdec``, ``cbin``, ``pos``), dropped on leaving; ``kind`` "raises" or "shoves": those of
    bounty passing's :func:`~detectors.features.gameplay.bounty_partner_raises` or
    :func:`~detectors.features.gameplay.bounty_shoves` (:data:`ROW_KINDS`).

    Parameters
    ----------
    con : the warehouse (read through the window by the caller). max_bb : the short stack's depth in big blinds.
    kind : the rows (a key of :data:`ROW_KINDS`).

    Yields
    ------
    :class:`BountyPresenceTable` over it."""
    cells_sql, source, bins, seats = ROW_KINDS[kind]
    tag = f"{os.getpid()}_{id(con)}_{next(_TAGS)}"
    con.register(f"_sh_{tag}", _starting_hands())
    con.register(f"_pos_{tag}", pl.DataFrame({"position": list(seats), "pos": list(seats.values())},
                                             schema_overrides={"pos": pl.Int8}))
    try:
        # the query is one of this module's constants, formatted with the tag and one of the module constants of
        # the rows' queries
        query = (cells_sql or PRESENCE_CELLS_SQL).format(tag=tag, source=source)
        con.execute(f"CREATE TEMP TABLE _bp_{tag} AS " + query, {"max_bb": float(max_bb)})
        yield BountyPresenceTable(con, tag, bins)
    finally:
        con.execute(f"DROP TABLE IF EXISTS _bp_{tag}")
        con.unregister(f"_sh_{tag}")
        con.unregister(f"_pos_{tag}")


def _view_counted(rows: BountyPresenceTable, prefix: str, wide_rate: float, looseness_tau: float | None,
                  table_effect: bool = False) -> pl.DataFrame:
    """Bounty passing's ``_view`` of the rows held by DuckDB (``rows``), from their counts: the same columns."""
    cells = bounty_wide_cells(None, looseness_tau=looseness_tau, counts=rows.cell_counts())
    if cells is None:
        return pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8,
                                    **{f"{prefix}_{c}": pl.Float64 for c in ("n", "k", "e", "p", "min")},
                                    f"{prefix}_hands": pl.List(pl.Utf8), f"{prefix}_tournaments": pl.List(pl.Utf8)})
    wide = bounty_wide_calls(pl.DataFrame(), max_rate=wide_rate, hands=False, cells=cells)
    if not wide.is_empty():
        hands = rows.call_hands(cells[2].filter(pl.col("r") < wide_rate))
        wide = wide.drop("wc_hands").join(hands, on=["player", "opponent"], how="left").with_columns(
            pl.col("wc_hands").fill_null(pl.lit([], pl.List(pl.Utf8)))).select(wide.columns)
    if table_effect:
        wide = table_effect_p(wide, cells, wide_rate, unit_counts=rows.unit_counts("table")).drop("sigma2")
    return view_columns(wide, cells, rows.tournaments(), prefix, wide_rate)


def bounty_passing_counted(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0, wide_rate: float = 0.3,
                           context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                           looseness_tau: float | None = BOUNTY_LOOSENESS_TAU) -> pl.DataFrame:
    """:func:`~detectors.features.gameplay.bounty_passing` with each view's rows held and counted by DuckDB (one
    view's table at a time), no frame of them in Python: the same rows and columns.

    Parameters
    ----------
    con : the warehouse (read through the window by the caller). max_bb, wide_rate, looseness_tau : as
    :func:`~detectors.features.gameplay.bounty_passing`. context : the position only (the tables' cells).

    Returns
    -------
    :func:`~detectors.features.gameplay.bounty_passing`'s frame."""
    if tuple(context) != ("pos",):
        raise ValueError(f"bounty passing's rows are counted by the seat only, not {context}")
    with bounty_presence_table(con, max_bb=max_bb, kind="raises") as rows:
        tc = _view_counted(rows, "tc", wide_rate, looseness_tau)
    with bounty_presence_table(con, max_bb=max_bb, kind="shoves") as rows:
        sh = _view_counted(rows, "sh", wide_rate, looseness_tau, table_effect=True).drop("sh_min")
    return passing_combined(tc, sh)
