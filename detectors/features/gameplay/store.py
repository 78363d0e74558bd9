"""The game-play features of one warehouse, computed once and shared by the detectors that read them.

Soft play, chip dumping, bounty collusion and the ``pair_features`` asset all
start from the same heads-up decisions (:func:`~detectors.features.gameplay.decisions.hu_decisions`,
the costliest step of a detect run: every decision valued by the cards), the
same pair table and the same chip flow. A :class:`FeatureStore` holds them for
one warehouse *state*: its identity is the database (the file, or for a
warehouse in memory the connection object itself, held weakly so that a new
connection never inherits a dead one's features) and a fingerprint of what it
holds (row counts of actions, hole cards and hands, the last hand id and a
hash over every hand's content hash). A warehouse that changed, or another
warehouse with the same row counts, gets a new store.

The store fills from the features *by hand day* (:mod:`detectors.features.days`) of
the window it judges, the last ``window_days`` hand days of the warehouse (by
default every day it holds; a room judging a rolling window sets e.g. 90): days already computed and unchanged are read from their Parquet
partitions under the warehouse's ``features/`` folder, the others (the night's new
day, a backfilled day) are computed and stored first. The decisions are the window's
days' decisions (read from the day files for each detector that asks, only the
columns it names, and never kept by the store), the pair table and the chip flow the
sums of their day statistics (kept): a night computes one day, not the history. Card values are seeded per day
(:func:`~detectors.features.days.day_seed`), so features computed night by night
equal features computed in one go (``tests/features``).

:func:`store_for` returns the store of a connection's warehouse, creating it
(and forgetting the previous one) when the state differs: one store lives at a
time, so a long process never holds two warehouses' sums.
:func:`release` drops it (the end of a run). The module-level functions
:func:`cached_pair_features` and :func:`cached_chip_flow` are what the detectors
call; :func:`cached_decision_relation` gives the window's decisions as a DuckDB relation over the day files, for
a detector that aggregates them out of core instead of holding them.

Example
-------
>>> import duckdb
>>> con = duckdb.connect()  # a warehouse (these three tables are all the identity reads)
>>> _ = con.execute("CREATE TABLE hands (hand_id VARCHAR, content_hash VARCHAR); "
...                 "CREATE TABLE actions (hand_id VARCHAR); CREATE TABLE hole_cards (hand_id VARCHAR)")
>>> store_for(con) is store_for(con)
True
>>> other = duckdb.connect()  # the same (empty) content, another database
>>> _ = other.execute("CREATE TABLE hands (hand_id VARCHAR, content_hash VARCHAR); "
...                   "CREATE TABLE actions (hand_id VARCHAR); CREATE TABLE hole_cards (hand_id VARCHAR)")
>>> store_for(other) is store_for(con)
False
>>> release()
"""

from __future__ import annotations

import weakref

import duckdb
import numpy as np
import polars as pl

# the module, not its names: detectors.features.days imports the game-play features (either package may load first)
from detectors.features import days as fd

FINGERPRINT_SQL = """
SELECT (SELECT count(*) FROM actions), (SELECT count(*) FROM hole_cards),
       count(*), max(hand_id), bit_xor(hash(hand_id, content_hash))
FROM hands
"""


def warehouse_identity(con: duckdb.DuckDBPyConnection) -> tuple:
    """What a store is keyed on: (database file or None, fingerprint of the content).

    Parameters
    ----------
    con : the warehouse connection.

    Returns
    -------
    tuple
        ``(path, n_actions, n_hole_cards, n_hands, last_hand_id, content_hash)``; ``path`` is None for a
        database in memory (such a store is tied to its connection object instead).
    """
    files = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    path = files[0][0] if files and files[0][0] else None
    return (path, *con.execute(FINGERPRINT_SQL).fetchall()[0])


class FeatureStore:
    """The features of one warehouse state (see the module docstring), filled from the window's day features.

    Parameters
    ----------
    con : the warehouse connection the store is created for.
    identity : its :func:`warehouse_identity` (computed when not given).
    window_days : the hand days judged: the last ``window_days`` days of the warehouse
        (:func:`~detectors.features.days.window_of`; default ``DEFAULT_WINDOW_DAYS``: 0, every day).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, identity: tuple | None = None, *,
                 window_days: int | None = None) -> None:
        self.identity = warehouse_identity(con) if identity is None else identity
        # in memory: only this connection sees this database
        self._con = weakref.ref(con) if self.identity[0] is None else None
        self.window_days = int(fd.DEFAULT_WINDOW_DAYS if window_days is None else window_days)
        self._pairs: dict[tuple[int, int], pl.DataFrame] = {}
        self._flow: pl.DataFrame | None = None
        self._days: fd.DayStore | None = None
        self.window: list = []  # the hand days the features cover, once read
        self.computed: list = []  # the days of the window that had to be computed (missing or changed)

    def days(self, con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0) -> fd.DayStore:
        """The day features of the window, brought up to date (:func:`~detectors.features.days.refresh_days`: only
        days missing or changed are computed), in their :class:`~detectors.features.days.DayStore`: Parquet under
        the warehouse's ``features/`` folder, or in memory for a warehouse in memory."""
        ds = self._days
        if ds is None or (ds.samples, ds.random_state) != (samples, random_state):
            ds = self._days = fd.DayStore(fd.feature_root(con), samples=samples, random_state=random_state)
            fp = fd.day_fingerprints(con)
            self.window = fd.window_of(sorted(fp), self.window_days)
            self.computed = fd.refresh_days(con, ds, self.window, fp)
        return ds

    def serves(self, con: duckdb.DuckDBPyConnection, identity: tuple) -> bool:
        """Whether this store holds the features of ``con``'s warehouse in the state ``identity``."""
        if identity != self.identity:
            return False
        return self._con is None or self._con() is con

    def chip_flow(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """:func:`~detectors.features.gameplay.pairs.chip_flow` of the window, summed from its days once."""
        if self._flow is None:
            ds = self._days if self._days is not None else self.days(con)
            self._flow = fd.window_chip_flow(ds, self.window)
        return self._flow

    def pair_table(self, con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0) -> pl.DataFrame:
        """The pair features without the own-baseline columns, summed from the window's days once per
        (``samples``, ``random_state``) and kept (one pair table per window, never the decisions).

        Parameters
        ----------
        con : the warehouse.
        samples : Monte Carlo draws per decision for strength and equity.
        random_state : seed of those draws.
        """
        key = (samples, random_state)
        if key not in self._pairs:
            self._pairs.clear()  # one card-value setting at a time
            ds = self.days(con, samples=samples, random_state=random_state)
            self._pairs[key] = fd.window_pair_features(ds, self.window, flow=self.chip_flow(con))
        return self._pairs[key]

    def baseline_cells(self, con: duckdb.DuckDBPyConnection, test: str, *, samples: int = 16, random_state: int = 0
                       ) -> pl.DataFrame:
        """The own-baseline counts of ``test`` per ordered pair and cell over the window, summed from the days'
        ``baseline_pair_cells`` by DuckDB on ``con`` (:func:`~detectors.features.days.window_baseline_cells`) at
        each call, not kept: the window's decisions are not read.

        Parameters
        ----------
        con : the warehouse.
        test : a test of :data:`~detectors.features.days.BASELINE_TESTS` (``"aggr"``, ``"fold"``, ``"junk"``).
        samples, random_state : the card-value setting (as :meth:`pair_table`: strength bins follow the cards).
        """
        ds = self.days(con, samples=samples, random_state=random_state)
        return fd.window_baseline_cells(ds, self.window, test, con)

    def decisions(self, con: duckdb.DuckDBPyConnection, *, columns: list[str] | None = None, samples: int = 16,
                  random_state: int = 0) -> pl.DataFrame:
        """The window's heads-up decisions (:func:`~detectors.features.days.window_decisions`), read from the day
        files at each call and not kept by the store: the frame lives as long as the detector that asked for it,
        so the detectors of one run never hold two windows of decisions at once.

        Parameters
        ----------
        con : the warehouse.
        columns : the columns read (column pushdown; None: every column).
        samples, random_state : the card-value setting (as :meth:`pair_table`).
        """
        ds = self.days(con, samples=samples, random_state=random_state)
        return fd.window_decisions(ds, self.window, columns)

    def decision_source(self, con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0
                        ) -> "DecisionSource | None":
        """Where the window's heads-up decisions are (:class:`DecisionSource`: the day files, or for a warehouse in
        memory its day frames), their days brought up to date; None where the window holds no decision.

        Parameters
        ----------
        con : the warehouse. samples, random_state : the card-value setting (as :meth:`pair_table`)."""
        ds = self.days(con, samples=samples, random_state=random_state)
        paths = ds.paths("hu_decisions", self.window)
        if paths:
            return DecisionSource(tuple(str(p) for p in paths))
        dec = fd.window_decisions(ds, self.window) if ds.root is None and self.window else pl.DataFrame()
        return DecisionSource((), dec) if dec.height else None

    def decision_relation(self, con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0
                          ) -> duckdb.DuckDBPyRelation | None:
        """The window's heads-up decisions as a DuckDB relation on ``con`` (:meth:`decision_source`'s
        :meth:`DecisionSource.relation`), None where the window holds no decision."""
        src = self.decision_source(con, samples=samples, random_state=random_state)
        return None if src is None else src.relation(con)

    def pair_features(self, con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0,
                      columns: list[str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(:meth:`decisions` with ``columns``, :meth:`pair_table`) for one card-value setting: the Monte Carlo card
        values depend on ``samples`` and ``random_state``."""
        return (self.decisions(con, columns=columns, samples=samples, random_state=random_state),
                self.pair_table(con, samples=samples, random_state=random_state))


class DecisionSource:
    """Where a window's heads-up decisions are: its day files (Parquet), or a frame of them for a warehouse in memory.

    A plain value (a detector keeps it as a fitted attribute: it copies and pickles, unlike a DuckDB relation, which
    lives on one connection); :meth:`relation` opens it on a connection.

    Parameters
    ----------
    paths : the day files of the window (empty for a warehouse in memory).
    frame : the window's decisions when they are in memory (no files), else None.
    """

    def __init__(self, paths: tuple[str, ...], frame: pl.DataFrame | None = None) -> None:
        self.paths, self.frame = tuple(paths), frame

    def relation(self, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
        """The decisions as a DuckDB relation on ``con``: the day files read by ``read_parquet`` (by column name),
        so nothing is read until a query runs on it and each query reads, out of core, the columns and row groups it
        needs; or the frame. Rows in no particular order (a query that sums floats orders them itself,
        :data:`~detectors.features.days.DECISION_ORDER`)."""
        if self.paths:
            return con.read_parquet(list(self.paths), union_by_name=True)
        return con.from_arrow(self.frame.to_arrow())


_CURRENT: list[FeatureStore | None] = [None]


def store_for(con: duckdb.DuckDBPyConnection, *, window_days: int | None = None) -> FeatureStore:
    """The :class:`FeatureStore` of ``con``'s warehouse in its present state (a new one, replacing the
    previous store, when the warehouse or its content differ); ``window_days``: the window of a new store
    (default: the present store's, else ``DEFAULT_WINDOW_DAYS``)."""
    identity = warehouse_identity(con)
    store = _CURRENT[0]
    if window_days is None:
        window_days = store.window_days if store is not None else fd.DEFAULT_WINDOW_DAYS
    if store is None or not store.serves(con, identity) or store.window_days != window_days:
        store = _CURRENT[0] = FeatureStore(con, identity, window_days=window_days)
    return store


def release(con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Forget the store (of ``con``'s warehouse only, when given): its frames are freed."""
    store = _CURRENT[0]
    if store is not None and (con is None or store.serves(con, warehouse_identity(con))):
        _CURRENT[0] = None


def cached_pair_features(con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0,
                         columns: list[str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(hu_decisions, pair_features without the own-baseline columns) of ``con``'s warehouse, from its
    :class:`FeatureStore`: the pair table summed by the first detector that asks and shared by the others; the
    decisions read from the day files for each caller, ``columns`` only (None: every column).

    The published table adds the own-baseline columns
    (:func:`~detectors.features.gameplay.pairs.own_baseline_columns`); the detectors test their robust
    versions (:func:`detectors.stats.replace_baseline_tests`).
    """
    return store_for(con).pair_features(con, samples=samples, random_state=random_state, columns=columns)


def cached_decision_relation(con: duckdb.DuckDBPyConnection, *, samples: int = 16, random_state: int = 0
                             ) -> duckdb.DuckDBPyRelation | None:
    """The window's heads-up decisions of ``con``'s warehouse as a DuckDB relation over the day files
    (:meth:`FeatureStore.decision_relation`): for detectors that count and sum them inside DuckDB rather than hold
    them (None where the window holds no decision)."""
    return store_for(con).decision_relation(con, samples=samples, random_state=random_state)


def cached_chip_flow(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """:func:`~detectors.features.gameplay.pairs.chip_flow` of ``con``'s warehouse, from its :class:`FeatureStore`."""
    return store_for(con).chip_flow(con)


# one index per decisions frame (the detectors explain hundreds of signals from the same frame):
# (a weak reference to the frame, hand -> tournament, player -> its row numbers); the frame itself is the key
# (``is``), held weakly so that the index never keeps a detector's decisions alive after the detector is gone
_INDEX: list = [None, None, None]


def _index(dec: pl.DataFrame) -> list:
    """The index of ``dec`` (built when ``dec`` is not the frame indexed last)."""
    if _INDEX[0] is None or _INDEX[0]() is not dec:
        tour = dec.filter(pl.col("tournament_id").is_not_null()).select("hand_id", "tournament_id").unique()
        rows = dec.select("player").with_row_index("_row").group_by("player").agg(pl.col("_row"))
        _INDEX[:] = [weakref.ref(dec), dict(zip(tour["hand_id"].to_list(), tour["tournament_id"].to_list())),
                     dict(zip(rows["player"].to_list(), (r.to_numpy() for r in rows["_row"])))]
    return _INDEX


def tournaments_of(dec: pl.DataFrame, hands: list[str]) -> list[str]:
    """Tournaments of the given hands in a :func:`hu_decisions` frame (empty for cash games)."""
    if not hands:
        return []
    tour = _index(dec)[1]
    return sorted({tour[h] for h in hands if h in tour})


def decisions_of(dec: pl.DataFrame, players: list[str]) -> pl.DataFrame:
    """The rows of a :func:`hu_decisions` frame whose ``player`` is one of ``players``, in frame order.

    Same as ``dec.filter(pl.col("player").is_in(players))``, through a per-player
    row index built once per frame (explaining a signal no longer scans every decision).
    """
    by_player = _index(dec)[2]
    parts = [by_player[p] for p in players if p in by_player]
    if not parts:
        return dec.clear()
    return dec[np.sort(np.concatenate(parts))]

