"""The heads-up own-baseline tests of chip dumping from counts per ordered pair and cell, counted inside DuckDB.

The window's heads-up decisions are a DuckDB relation over the day files
(:func:`detectors.features.gameplay.cached_decision_relation`); each test's decisions are counted there per
(player, opponent, cell) (:func:`pair_cells`) and only those counts, a frame sized by the pairs and cells, come
back to be tested by :func:`detectors.stats.own_baseline_from_counts` (:func:`detectors.stats.robust_own_baseline`
on such counts: that function groups the decisions into the same counts first and reads nothing else of them), and
:func:`baseline_tests` is :func:`detectors.stats.replace_baseline_tests` on them.
"""

from __future__ import annotations

import duckdb
import polars as pl

from detectors import stats


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


def baseline_tests(pairs: pl.DataFrame, dec: duckdb.DuckDBPyRelation | None, *, alpha: float = 0.01,
                   rare_tail: str = "poisson", junk_bins: tuple[str, ...] = stats.JUNK_BINS) -> pl.DataFrame:
    """:func:`detectors.stats.replace_baseline_tests` from DuckDB's counts: ``pairs`` with the aggression, fold and
    weak-hand commitment ("junk") own-baseline columns (``<name>_n``, ``_obs``, ``_exp``, ``_p``, ``_u``, ``_v``,
    ``_n0``) of :func:`detectors.stats.own_baseline_from_counts`.

    Parameters
    ----------
    pairs : the pair features. dec : the heads-up decisions (:func:`as_relation`). alpha, rare_tail, junk_bins : as
    :func:`~detectors.stats.replace_baseline_tests`.

    Returns
    -------
    ``pairs`` with those columns (replaced where present)."""
    specs = (("aggr", "aggr", None, "less", stats.OWN_BASELINE_BINS),
             ("fold", "fold", "facing", "greater", stats.OWN_BASELINE_BINS),
             ("junk", "commit", "sbin <= 0", "greater", tuple(junk_bins)))
    out = pairs
    for name, y, where, side, bins in specs:
        cells = pair_cells(dec, y, where, bins) if dec is not None else pl.DataFrame()
        t = stats.own_baseline_from_counts(cells, bins, side=side, alpha=alpha,
                                           rare_tail=rare_tail if side == "greater" else "poisson")
        out = stats.with_baseline_columns(out, name, t)
    return out
