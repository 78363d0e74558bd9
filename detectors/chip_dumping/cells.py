"""The heads-up own-baseline tests of chip dumping from counts per ordered pair and cell.

The counts per (player, opponent, cell) of each test are the sums of the day tables over the window
(``baseline_pair_cells``, computed once per hand day by :func:`detectors.features.days.compute_day`; summed by
:meth:`detectors.features.gameplay.store.FeatureStore.baseline_cells`): a night counts the new day's decisions,
not the window's. Without them (or for cells other than the day tables', e.g. other ``junk_bins``) the window's
heads-up decisions, a DuckDB relation over the day files
(:func:`detectors.features.gameplay.cached_decision_relation`), are counted there (:func:`pair_cells`). Either
way only the counts, a frame sized by the pairs and cells, are tested by
:func:`detectors.stats.own_baseline_from_counts` (:func:`detectors.stats.robust_own_baseline` on such counts: that
function groups the decisions into the same counts first and reads nothing else of them), and
:func:`baseline_tests` is :func:`detectors.stats.replace_baseline_tests` on them.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import polars as pl

from detectors import stats
from detectors.features.days import BASELINE_TESTS


def as_relation(dec: pl.DataFrame | duckdb.DuckDBPyRelation | None, con: duckdb.DuckDBPyConnection | None = None
                ) -> duckdb.DuckDBPyRelation | None:
    """``dec`` (heads-up decisions: a relation, or a Polars frame of them) as a DuckDB relation on ``con`` (default:
    DuckDB's default connection); None for no decisions."""
    if dec is None or isinstance(dec, duckdb.DuckDBPyRelation):
        return dec
    if dec.is_empty():
        return None
    return (con or duckdb.default_connection()).from_arrow(dec.to_arrow())


def pair_cells(dec: duckdb.DuckDBPyRelation, y: str, where: str | None, bins: tuple[str, ...]) -> pl.DataFrame:
    """Per (player, opponent, cell) the decisions ``n`` with a known hand strength (``sbin``) that ``where`` selects
    and ``k``: how many of them show ``y``, counted by DuckDB (the first step of
    :func:`detectors.stats.robust_own_baseline`).

    Parameters
    ----------
    dec : the heads-up decisions (:func:`as_relation`). y : the indicator column. where : a SQL condition on its
    columns (a constant of this package, never data), or None. bins : the cell columns.

    Returns
    -------
    player, opponent, the bins, ``n`` (UInt32), ``k`` (Int64)."""
    keys = ", ".join(["player", "opponent", *bins])
    cond = "sbin IS NOT NULL" + (f" AND ({where})" if where else "")
    return dec.filter(cond).aggregate(
        f"{keys}, count(*)::UINTEGER AS n, coalesce(sum({y}::BIGINT), 0)::BIGINT AS k", keys).pl()


#: the tests: (name, indicator, SQL condition, side, cells); a test whose name, indicator and cells are those of
#: :data:`detectors.features.days.BASELINE_TESTS` is read from the day tables' sums (the same selection)
BASELINE_SPECS = (("aggr", "aggr", None, "less", stats.OWN_BASELINE_BINS),
                  ("fold", "fold", "facing", "greater", stats.OWN_BASELINE_BINS),
                  ("junk", "commit", "sbin <= 0", "greater", stats.JUNK_BINS))


def _from_days(name: str, y: str, bins: tuple[str, ...]) -> bool:
    """Whether test ``name`` on indicator ``y`` and cells ``bins`` is the day tables' (``BASELINE_TESTS``)."""
    day = BASELINE_TESTS.get(name)
    return day is not None and day[0] == y and tuple(day[2]) == tuple(bins)


def baseline_tests(pairs: pl.DataFrame, dec: duckdb.DuckDBPyRelation | None, *, alpha: float = 0.01,
                   rare_tail: str = "poisson", junk_bins: tuple[str, ...] = stats.JUNK_BINS,
                   cells: Callable[[str], pl.DataFrame] | None = None) -> pl.DataFrame:
    """:func:`detectors.stats.replace_baseline_tests` from counts per pair and cell: ``pairs`` with the aggression,
    fold and weak-hand commitment ("junk") own-baseline columns (``<name>_n``, ``_obs``, ``_exp``, ``_p``, ``_u``,
    ``_v``, ``_n0``) of :func:`detectors.stats.own_baseline_from_counts`.

    Parameters
    ----------
    pairs : the pair features. dec : the heads-up decisions (:func:`as_relation`), counted for a test ``cells``
    does not give. alpha, rare_tail, junk_bins : as :func:`~detectors.stats.replace_baseline_tests`.
    cells : test name -> the window's counts of that test (player, opponent, cells, n, k: the sums of the day
    tables, :meth:`~detectors.features.gameplay.store.FeatureStore.baseline_cells`), used for the tests with the
    day tables' cells; None: every test counted from ``dec`` (:func:`pair_cells`, the same counts).

    Returns
    -------
    ``pairs`` with those columns (replaced where present)."""
    specs = [(n, y, w, side, tuple(junk_bins) if n == "junk" else bins) for n, y, w, side, bins in BASELINE_SPECS]
    out = pairs
    for name, y, where, side, bins in specs:
        if cells is not None and _from_days(name, y, bins):
            counted = cells(name)
        else:
            counted = pair_cells(dec, y, where, bins) if dec is not None else pl.DataFrame()
        t = stats.own_baseline_from_counts(counted, bins, side=side, alpha=alpha,
                                           rare_tail=rare_tail if side == "greater" else "poisson")
        out = stats.with_baseline_columns(out, name, t)
    return out
