"""The window's heads-up decisions as soft play reads them: counted per pair and cell in DuckDB, never held whole.

Soft play's tests compare counts (decisions ``n``, bets, raises, folds or continues ``k``) per ordered pair and
cell with the player's own counts per cell (:mod:`detectors.stats.baselines`), so they need the decisions only
through those counts. :class:`WindowDecisions` names where the window's decisions are (the day files of the
:class:`~detectors.features.gameplay.FeatureStore`, ``<features>/hu_decisions/day=*/...``, or its frame for a
warehouse in memory) and runs DuckDB over them, out of core:

- :meth:`WindowDecisions.cells`: one row per distinct (pair, cell, action), its decisions counted (``_w``,
  :data:`detectors.stats.WEIGHT`), the rows in the order of their first decision: a frame whose size is set by
  the pairs, which every own-baseline test reads as it would read the decisions;
- :meth:`WindowDecisions.hand_sums`: per heads-up hand and pair, the bets and the log-probability of none
  under the own rates (the whole-hand test, :func:`detectors.stats.hand_passivity_from_hands`);
- :meth:`WindowDecisions.decisions`: the decisions of some players or pairs only (the thin pairs' predictive
  hand test, the evidence of a signal shown), in hand and decision order.

Each decision gets the cells soft play bins by (:data:`DECISION_CELLS_SQL`): ``vs_bet`` (facing a real bet:
preflop after the first raise, :func:`detectors.features.gameplay.with_bet_faced`), ``tour`` (tournament or
cash), ``pbin`` (preflop the starting hand's tenth, else the strength bin + 10) and ``stage`` (tournament
decisions by effective stack, :func:`detectors.features.gameplay.with_stack_depth`; 0 for cash), joined in
DuckDB to the warehouse's preflop raises and tournament stacks. On files, each day's decisions with these cells
and their counts are made once and kept (:mod:`detectors.soft_play.daycells`); the fit reads them in place of the
joins and the count over the window.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import duckdb
import polars as pl

from detectors.features import gameplay as gp
from detectors.soft_play import daycells
from detectors.stats import WEIGHT

#: the decision columns read from the day files
SOURCE_COLUMNS = ["hand_id", "seq", "street", "player", "opponent", "is_tournament", "tournament_id", "game", "bb",
                  "strength", "aggr", "facing", "fold", "commit", "preflop", "hu", "sbin"]
#: the temporary table of :meth:`WindowDecisions.kept` and its columns (``stage`` added when the stage cell is on)
KEPT = "_sp_decision_cells"
KEPT_COLUMNS = ["hand_id", "seq", "street", "player", "opponent", "preflop", "facing", "hu", "sbin", "vs_bet", "tour",
                "pbin", "aggr", "fold", "commit"]
#: the cells of a decision (with ``stage`` when the stage bin is on) and the actions counted in them
CELL_COLUMNS = ["player", "opponent", "street", "preflop", "facing", "hu", "sbin", "vs_bet", "tour", "pbin"]
ACTION_COLUMNS = ["aggr", "fold", "commit"]

# every decision with its cells; {stage} is the stage expression (:func:`_stage_sql`), {source} the decisions
DECISION_CELLS_SQL = """
WITH d AS (SELECT hand_id, seq, street, player, opponent, is_tournament, tournament_id, game, bb, strength,
                  aggr, facing, fold, commit, preflop, hu, CAST(sbin AS TINYINT) AS sbin FROM {source}),
dh AS (SELECT DISTINCT hand_id FROM d),
fr AS (SELECT hand_id, min(seq) AS first_raise_seq FROM actions SEMI JOIN dh USING (hand_id)
       WHERE street = 'preflop' AND action IN ('bet', 'raise') GROUP BY hand_id),
st AS (SELECT s.hand_id, s.player, s.stack_start::DOUBLE AS stack FROM seats s JOIN hands h USING (hand_id)
       SEMI JOIN dh USING (hand_id) WHERE h.tournament_id IS NOT NULL AND s.dealt_in),
x AS (SELECT d.*, coalesce(d.is_tournament, false) AS tour,
             d.facing AND (NOT d.preflop OR d.seq > coalesce(fr.first_raise_seq, 2147483647)) AS vs_bet,
             CAST(CASE WHEN d.preflop THEN least(greatest(floor(d.strength * 10), 0), 9) ELSE d.sbin + 10 END
                  AS TINYINT) AS pbin,
             CASE WHEN coalesce(d.is_tournament, false) THEN least(sp.stack, so.stack) / greatest(d.bb, 1e-9) END
                 AS eff_bb
      FROM d LEFT JOIN fr ON fr.hand_id = d.hand_id
      LEFT JOIN st sp ON sp.hand_id = d.hand_id AND sp.player = d.player
      LEFT JOIN st so ON so.hand_id = d.hand_id AND so.player = d.opponent),
cells AS (SELECT * EXCLUDE (eff_bb), {stage} FROM x)
"""


#: log(1 - r) summed over a hand's decisions in decision order by Kahan's compensated summation (Kahan, CACM 1965),
#: the summation Polars' group-by sum of floats performs, so the sums are Polars' to the bit: a fold over the hand's
#: terms with the running sum ``s`` and its compensation ``c`` (t = s + (x - c); c = (t - s) - (x - c))
KAHAN_LOG_SUM = ("list_reduce(list({'s': ln(1 - r.r), 'c': 0.0} ORDER BY c.seq), "
                 "lambda a, e: {'s': a.s + (e.s - a.c), 'c': ((a.s + (e.s - a.c)) - a.s) - (e.s - a.c)}).s")


def _stage_sql(stage_bb: tuple[float, ...] | None) -> tuple[str, dict]:
    """The ``stage`` column's expression and its parameters: 0 cash, tournament decisions 1 + the cuts
    ``stage_bb`` their effective stack is at or under (an unknown stack counts as deep); no column for None."""
    if not stage_bb:
        return "NULL AS _no_stage", {}
    eff = "coalesce(eff_bb, 'inf'::DOUBLE)"
    terms = " + ".join(f"CAST({eff} <= $cut{i} AS INTEGER)" for i in range(len(stage_bb)))
    return (f"CAST(CASE WHEN tour THEN 1 + {terms} ELSE 0 END AS TINYINT) AS stage",
            {f"cut{i}": float(c) for i, c in enumerate(stage_bb)})


class WindowDecisions:
    """The window's heads-up decisions of one warehouse, read by DuckDB (see the module docstring).

    Parameters
    ----------
    paths : the day files (``hu_decisions`` Parquet) of the window, or empty for a warehouse in memory.
    frame : the window's decisions (``SOURCE_COLUMNS``) when they are in memory (no files), else None.
    stage_bb : the effective-stack cuts of the ``stage`` cell (None: no stage cell).
    days : the window's decisions with their cells and their counts stored by day
        (:func:`detectors.soft_play.daycells.ensure`: decision files, count files), or None: the cells are joined
        and counted over the window's decisions.
    """

    def __init__(self, paths: list[str], frame: pl.DataFrame | None, stage_bb: tuple[float, ...] | None,
                 days: tuple[list[str], list[str]] | None = None) -> None:
        self.paths, self.frame, self.stage_bb = list(paths), frame, stage_bb
        self.days = days if days and days[0] else None
        self._kept = False

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection, *, samples: int, random_state: int,
           stage_bb: tuple[float, ...] | None) -> "WindowDecisions":
        """The window of ``con``'s feature store (:func:`detectors.features.gameplay.store_for`), its days brought
        up to date for the card-value setting (``samples``, ``random_state``)."""
        store = gp.store_for(con)
        days = store.days(con, samples=samples, random_state=random_state)
        paths = days.paths("hu_decisions", store.window)
        frame = None if paths else store.decisions(con, columns=SOURCE_COLUMNS, samples=samples,
                                                   random_state=random_state)
        # on files: the days' cells and counts, made for the days that lack them (daycells)
        by_day = daycells.ensure(con, days, store.window, stage_bb) if paths else None
        return cls(paths, frame, stage_bb, by_day)

    @property
    def empty(self) -> bool:
        """Whether the window holds no decision file and no decision frame (an empty window)."""
        return not self.paths and (self.frame is None or self.frame.width == 0)

    @property
    def cell_columns(self) -> list[str]:
        """The cell columns of :meth:`cells` (``stage`` last when the stage cell is on)."""
        return [*CELL_COLUMNS, *(["stage"] if self.stage_bb else [])]

    def query(self, con: duckdb.DuckDBPyConnection, select: str, params: dict | None = None, *,
              cells: bool = True) -> pl.DataFrame:
        """``select`` run by DuckDB over the window's decisions: a query over ``cells`` (the decisions with their
        cells, :data:`DECISION_CELLS_SQL`) or, ``cells`` False, over ``d`` (the decisions as stored, no join);
        ``params`` its bound parameters."""
        stage, sp = _stage_sql(self.stage_bb) if cells else ("", {})
        if self.frame is None:
            source, sp = "read_parquet($files, union_by_name = true)", {**sp, "files": self.paths}
        else:
            source = "_sp_window_decisions"
        head = DECISION_CELLS_SQL.replace("{stage}", stage) if cells else "WITH d AS (SELECT * FROM {source})\n"
        if cells and self._kept:
            head, sp = f"WITH cells AS (SELECT * FROM {KEPT})\n", {}
            if self.days:  # the days' decisions with their cells, read as stored
                head, sp = "WITH cells AS (SELECT * FROM read_parquet($cell_files, union_by_name = true))\n", {
                    "cell_files": self.days[0]}
        sql = head.replace("{source}", source) + select
        if self.empty:
            return pl.DataFrame()
        if self.frame is not None:
            con.register("_sp_window_decisions", self.frame.to_arrow())
        try:
            return con.sql(sql, params={**sp, **(params or {})}).pl()
        finally:
            if self.frame is not None:
                con.unregister("_sp_window_decisions")

    @contextlib.contextmanager
    def kept(self, con: duckdb.DuckDBPyConnection) -> Iterator[None]:
        """Within the block, the queries over ``cells`` read one DuckDB temporary table of the decisions' cells
        (:data:`KEPT_COLUMNS`, made once: the joins to the warehouse are not made again for each query; DuckDB
        keeps it under its memory limit, spilling to its temporary folder); dropped when the block ends. With the
        cells stored by day (``days``) the queries read those files instead and no table is made."""
        if self.empty or self.days:
            self._kept = bool(self.days)
            try:
                yield
            finally:
                self._kept = False
            return
        keep = ", ".join([*KEPT_COLUMNS, *(["stage"] if self.stage_bb else [])])
        stage, sp = _stage_sql(self.stage_bb)
        source = "read_parquet($files, union_by_name = true)" if self.frame is None else "_sp_window_decisions"
        sql = (DECISION_CELLS_SQL.replace("{stage}", stage).replace("{source}", source)
               + f"SELECT {keep} FROM cells")
        if self.frame is None:
            sp = {**sp, "files": self.paths}
        else:
            con.register("_sp_window_decisions", self.frame.to_arrow())
        try:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {KEPT} AS {sql}", sp)
        finally:
            if self.frame is not None:
                con.unregister("_sp_window_decisions")
        self._kept = True
        try:
            yield
        finally:
            self._kept = False
            con.execute(f"DROP TABLE IF EXISTS {KEPT}")

    def cells(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """Every distinct (pair, cell, action) of the window with its decisions counted (``_w``), in the order of
        its first decision (by hand and decision): the decisions as the own-baseline tests read them
        (:data:`detectors.stats.WEIGHT`), in a frame sized by the pairs and cells, not by the decisions. With the
        cells stored by day (``days``): the days' counts summed, the same rows in the same order."""
        keys = ", ".join([*self.cell_columns, *ACTION_COLUMNS])
        if self.empty:
            types = {"player": pl.Utf8, "opponent": pl.Utf8, "street": pl.Utf8, "sbin": pl.Int8, "pbin": pl.Int8,
                     "stage": pl.Int8}
            return pl.DataFrame(schema={c: types.get(c, pl.Boolean) for c in [*self.cell_columns, *ACTION_COLUMNS]}
                                | {WEIGHT: pl.Int64})
        if self.days:
            # the days' counts summed; each cell's first decision the smallest of its days': the same rows, the
            # same order as counted over the window's decisions
            return con.sql(f"SELECT {keys}, CAST(sum(_w) AS BIGINT) AS {WEIGHT} "
                           f"FROM read_parquet($files, union_by_name = true) GROUP BY ALL ORDER BY min(_first)",
                           params={"files": self.days[1]}).pl()
        return self.query(con, f"SELECT {keys}, count(*) AS {WEIGHT} FROM cells GROUP BY ALL "
                               f"ORDER BY min((hand_id, seq))")

    def summary(self, con: duckdb.DuckDBPyConnection) -> tuple[int, int, bool]:
        """(decisions, decisions with the strength known, any decision not Hold'em)."""
        f = self.query(con, "SELECT count(*) AS n, count(strength) AS known, "
                            "coalesce(bool_or(game <> 'holdem'), false) AS other FROM d", cells=False)
        return (int(f["n"][0]), int(f["known"][0]), bool(f["other"][0])) if f.height else (0, 0, False)

    def hand_sums(self, con: duckdb.DuckDBPyConnection, rated: pl.DataFrame, *, directed: bool = False
                  ) -> pl.DataFrame:
        """Per hand and pair (unordered, player < opponent; ``directed``: per ordered pair, the player's own
        decisions only) over the decisions of the cells ``rated`` (rows of :meth:`cells` with ``_y`` and the own
        rate ``r``, :func:`detectors.stats.own_rates_per_decision`; only its cells are read) whose rate is known:
        ``bets`` (the sum of ``_y``) and ``logpi`` (of log(1 - r)), summed in decision order as Polars sums a group
        (:data:`KAHAN_LOG_SUM`), the rows in the order of the hands and their first decision: the frame of
        :func:`detectors.stats.hand_passivity_sums` over the decisions, made out of core."""
        keys = [*self.cell_columns, *ACTION_COLUMNS]
        lo, hi = ("c.player", "c.opponent") if directed else ("least(c.player, c.opponent)",
                                                             "greatest(c.player, c.opponent)")
        on = " AND ".join(f"c.{k} = r.{k}" for k in keys)
        con.register("_sp_rated", rated.select(*keys, "_y", "r").to_arrow())
        try:
            return self.query(con, f"""
                SELECT c.hand_id, {lo} AS player, {hi} AS opponent,
                       CAST(sum(r._y) AS BIGINT) AS bets, {KAHAN_LOG_SUM} AS logpi
                FROM cells c JOIN _sp_rated r ON {on}
                WHERE r.r IS NOT NULL
                GROUP BY ALL ORDER BY c.hand_id, min(c.seq)""")
        finally:
            con.unregister("_sp_rated")

    def between(self, con: duckdb.DuckDBPyConnection, accounts: list[str], columns: list[str]) -> pl.DataFrame:
        """``columns`` of the decisions (as stored) that one of ``accounts`` aimed at another, in hand and decision
        order: a filtered read of the window, no join (the evidence of a signal shown)."""
        cols = ", ".join(c for c in dict.fromkeys(columns) if c in SOURCE_COLUMNS)
        return self.query(con, f"SELECT {cols} FROM d WHERE list_contains($acc, player) AND list_contains($acc, opponent) "
                               f"ORDER BY hand_id, seq", {"acc": list(accounts)}, cells=False)

    def between_pairs(self, con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
        """``columns`` of the decisions (as stored) between the two players of a row of ``pairs`` (player,
        opponent), in hand and decision order: one filtered read of the window for many pairs, no join."""
        cols = ", ".join(f"c.{c}" for c in dict.fromkeys(columns) if c in SOURCE_COLUMNS)
        con.register("_sp_pairs", pairs.select("player", "opponent").to_arrow())
        try:
            return self.query(con, f"""SELECT {cols} FROM d c SEMI JOIN _sp_pairs p
                ON p.player = least(c.player, c.opponent) AND p.opponent = greatest(c.player, c.opponent)
                ORDER BY c.hand_id, c.seq""", cells=False)
        finally:
            con.unregister("_sp_pairs")

    def decisions(self, con: duckdb.DuckDBPyConnection, *, players: list[str] | None = None,
                  pairs: pl.DataFrame | None = None) -> pl.DataFrame:
        """The decisions with their cells (every column of ``cells``) in hand and decision order: those whose
        player is one of ``players``, or whose unordered pair is a row of ``pairs`` (player < opponent), or all."""
        cols = "hand_id, seq, street, player, opponent, is_tournament, tournament_id, game, bb, strength, aggr, " \
               "facing, fold, commit, preflop, hu, sbin, tour, vs_bet, pbin" + (", stage" if self.stage_bb else "")
        if self._kept:
            # within kept(): the kept columns only (what the tests read)
            cols = ", ".join([*KEPT_COLUMNS, *(["stage"] if self.stage_bb else [])])
        if pairs is not None:
            con.register("_sp_pairs", pairs.select("player", "opponent").to_arrow())
            try:
                return self.query(con, f"""SELECT {cols} FROM cells c SEMI JOIN _sp_pairs p
                    ON p.player = least(c.player, c.opponent) AND p.opponent = greatest(c.player, c.opponent)
                    ORDER BY hand_id, seq""")
            finally:
                con.unregister("_sp_pairs")
        if players is not None:
            return self.query(con, f"SELECT {cols} FROM cells WHERE list_contains($players, player) "
                                   f"ORDER BY hand_id, seq", {"players": list(players)})
        return self.query(con, f"SELECT {cols} FROM cells ORDER BY hand_id, seq")
