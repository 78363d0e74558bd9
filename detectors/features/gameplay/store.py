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

:func:`store_for` returns the store of a connection's warehouse, creating it
(and forgetting the previous one) when the state differs: one store lives at a
time, so a long process never holds two warehouses' decisions.
:func:`release` drops it (the end of a run). The module-level functions
:func:`cached_pair_features` and :func:`cached_chip_flow` are what the detectors
call.

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

from detectors.features.gameplay.decisions import hu_decisions
from detectors.features.gameplay.pairs import chip_flow, pair_features

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
    """The features of one warehouse state (see the module docstring).

    Parameters
    ----------
    con : the warehouse connection the store is created for.
    identity : its :func:`warehouse_identity` (computed when not given).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, identity: tuple | None = None) -> None:
        self.identity = warehouse_identity(con) if identity is None else identity
        # in memory: only this connection sees this database
        self._con = weakref.ref(con) if self.identity[0] is None else None
        self._pairs: dict[tuple[int, int], tuple[pl.DataFrame, pl.DataFrame]] = {}
        self._flow: pl.DataFrame | None = None

    def serves(self, con: duckdb.DuckDBPyConnection, identity: tuple) -> bool:
        """Whether this store holds the features of ``con``'s warehouse in the state ``identity``."""
        if identity != self.identity:
            return False
        return self._con is None or self._con() is con

    def chip_flow(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """:func:`~detectors.features.gameplay.pairs.chip_flow` of the warehouse, read once."""
        if self._flow is None:
            self._flow = chip_flow(con)
        return self._flow

    def pair_features(self, con: duckdb.DuckDBPyConnection, *, samples: int = 16,
                      random_state: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(heads-up decisions, pair features without the own-baseline columns), computed once per
        (``samples``, ``random_state``): the Monte Carlo card values depend on both.

        Parameters
        ----------
        con : the warehouse.
        samples : Monte Carlo draws per decision for strength and equity.
        random_state : seed of those draws.
        """
        key = (samples, random_state)
        if key not in self._pairs:
            self._pairs.clear()  # one set of decisions at a time
            dec = hu_decisions(con, samples=samples, random_state=random_state)
            self._pairs[key] = (dec, pair_features(con, dec, baseline=False, flow=self.chip_flow(con)))
        return self._pairs[key]


_CURRENT: list[FeatureStore | None] = [None]


def store_for(con: duckdb.DuckDBPyConnection) -> FeatureStore:
    """The :class:`FeatureStore` of ``con``'s warehouse in its present state (a new one, replacing the
    previous store, when the warehouse or its content differ)."""
    identity = warehouse_identity(con)
    store = _CURRENT[0]
    if store is None or not store.serves(con, identity):
        store = _CURRENT[0] = FeatureStore(con, identity)
    return store


def release(con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Forget the store (of ``con``'s warehouse only, when given): its frames are freed."""
    store = _CURRENT[0]
    if store is not None and (con is None or store.serves(con, warehouse_identity(con))):
        _CURRENT[0] = None


def cached_pair_features(con: duckdb.DuckDBPyConnection, *, samples: int = 16,
                         random_state: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(hu_decisions, pair_features without the own-baseline columns) of ``con``'s warehouse, from its
    :class:`FeatureStore`: computed by the first detector that asks, shared by the others.

    The published table adds the own-baseline columns
    (:func:`~detectors.features.gameplay.pairs.own_baseline_columns`); the detectors test their robust
    versions (:func:`detectors.stats.replace_baseline_tests`).
    """
    return store_for(con).pair_features(con, samples=samples, random_state=random_state)


def cached_chip_flow(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """:func:`~detectors.features.gameplay.pairs.chip_flow` of ``con``'s warehouse, from its :class:`FeatureStore`."""
    return store_for(con).chip_flow(con)


# one index per decisions frame (the detectors explain hundreds of signals from the same frame):
# (the frame, hand -> tournament, player -> its row numbers); the frame itself is the key (``is``)
_INDEX: list = [None, None, None]


def _index(dec: pl.DataFrame) -> list:
    """The index of ``dec`` (built when ``dec`` is not the frame indexed last)."""
    if _INDEX[0] is not dec:
        tour = dec.filter(pl.col("tournament_id").is_not_null()).select("hand_id", "tournament_id").unique()
        rows = dec.select("player").with_row_index("_row").group_by("player").agg(pl.col("_row"))
        _INDEX[:] = [dec, dict(zip(tour["hand_id"].to_list(), tour["tournament_id"].to_list())),
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

