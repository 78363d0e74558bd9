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

from detectors.features.gameplay.bounty import BOUNTY_PRESENCE_SQL, POSITION_BIN
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
FROM ({presence}) p
LEFT JOIN _sh_{tag} sh ON p.game = 'holdem' AND sh.c1 = p.hole[1] AND sh.c2 = p.hole[2]
LEFT JOIN _pos_{tag} pb ON pb.position = p.position
"""

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
FROM (SELECT DISTINCT hand_id, seq, player, cont, tournament_id, sdec, cbin, pos FROM _bp_{tag} WHERE sdec IS NOT NULL)
GROUP BY ALL
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
    FROM _bp_{tag} b JOIN _wt_{tag} w ON w.player = b.player AND w.partner = b.partner AND w.sdec = b.sdec
         AND w.cbin = b.cbin AND w.pos = b.pos
    WHERE b.cont GROUP BY ALL
)
SELECT x AS player, y AS opponent, list(hand_id ORDER BY r, hand_id) AS wc_hands FROM c GROUP BY ALL
"""

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
    con : the connection holding the temporary table ``_bp_<tag>``. tag : its name's suffix."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tag: str) -> None:
        self.con, self.tag = con, tag

    def _frame(self, sql: str, keys: str = "") -> pl.DataFrame:
        """The Polars frame of one of this module's queries on the table (``keys``: its cell columns)."""
        return self.con.sql(sql.format(tag=self.tag, keys=keys)).pl()

    def summary(self) -> tuple[float, float]:
        """The population's continuation rate against short bounty targets (per player and hand, the first
        decision's; NaN without rows) and the share of rows with the cards known (0 without rows)."""
        cont, known = self.con.execute(SUMMARY_SQL.format(tag=self.tag)).fetchall()[0]
        return (float("nan") if cont is None else float(cont)), float(known or 0.0)

    def wide_counts(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The counts of :func:`~detectors.features.gameplay.bounty_wide_cells` (``counts=``): per (player, partner,
        sdec, cbin, pos) ``n``, ``k``; per (player, sdec, cbin, pos) ``Dn``, ``Dk``."""
        return self._frame(PAIR_COUNTS_SQL, "sdec, cbin, pos"), self._frame(DECISION_COUNTS_SQL, "sdec, cbin, pos")

    def presence_counts(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, bool]:
        """The counts of :func:`~detectors.features.gameplay.bounty_presence_pairs` (``counts=``,
        :func:`~detectors.features.gameplay.bounty.presence_counts`' shape): per (player, partner, tournament_id,
        sbin, cbin, pos) ``n``, ``k``; per (player, tournament_id, sbin, cbin, pos) ``Dn``, ``Dk``; per ordered
        pair its continuations' tournaments and hands; True (the rows carry tournaments). ``sbin`` = ``sdec`` // 2,
        :func:`~detectors.features.gameplay.bounty_presence`'s quintile (10 s = 2 (5 s) in floating point)."""
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
        ``opponent``): the hands of the continuations in ``cells`` (player, partner, sdec, cbin, pos, r: the cells
        tested), least likely first."""
        self.con.register(f"_wt_{self.tag}", cells.select("player", "partner", "sdec", "cbin", "pos", "r"))
        try:
            return self._frame(CALL_HANDS_SQL)
        finally:
            self.con.unregister(f"_wt_{self.tag}")


@contextmanager
def bounty_presence_table(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0) -> Iterator[BountyPresenceTable]:
    """The rows of :func:`~detectors.features.gameplay.bounty_presence` as a DuckDB temporary table on ``con``,
    with their cells (``sdec``, ``cbin``, ``pos``), dropped on leaving.

    Parameters
    ----------
    con : the warehouse (read through the window by the caller). max_bb : the short stack's depth in big blinds.

    Yields
    ------
    :class:`BountyPresenceTable` over it."""
    tag = f"{os.getpid()}_{id(con)}_{next(_TAGS)}"
    con.register(f"_sh_{tag}", _starting_hands())
    con.register(f"_pos_{tag}", pl.DataFrame({"position": list(POSITION_BIN),
                                              "pos": list(POSITION_BIN.values())}, schema_overrides={"pos": pl.Int8}))
    try:
        con.execute(f"CREATE TEMP TABLE _bp_{tag} AS "
                    + PRESENCE_CELLS_SQL.format(tag=tag, presence=BOUNTY_PRESENCE_SQL), {"max_bb": float(max_bb)})
        yield BountyPresenceTable(con, tag)
    finally:
        con.execute(f"DROP TABLE IF EXISTS _bp_{tag}")
        con.unregister(f"_sh_{tag}")
        con.unregister(f"_pos_{tag}")
