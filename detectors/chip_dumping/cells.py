"""The heads-up own-baseline tests of chip dumping from counts per ordered pair and cell, counted inside DuckDB.

The window's heads-up decisions are a DuckDB relation over the day files
(:func:`detectors.features.gameplay.cached_decision_relation`); each test's decisions are counted there per
(player, opponent, cell) (:func:`pair_cells`) and only those counts, a frame sized by the pairs and cells, come
back. :func:`own_baseline_from_cells` is :func:`detectors.stats.robust_own_baseline` on such counts (that
function groups the decisions into the same counts first and reads nothing else of them), and
:func:`baseline_tests` is :func:`detectors.stats.replace_baseline_tests` on them.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from scipy import stats as st

from detectors import stats
from detectors.stats.baselines import _baseline_pass, score_test_pvalues

_TINY = 1e-300
_COLS = ["player", "opponent", "n", "observed", "expected", "rate_pair", "rate_own", "z", "p_value", "score_u", "var",
         "n0", "k3", "l0", "l1"]


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


def own_baseline_from_cells(pair: pl.DataFrame, bins: tuple[str, ...], *, side: str, alpha: float = 0.01,
                            rare_tail: str = "poisson", max_rate: float = 1 - 1e-6) -> pl.DataFrame:
    """:func:`detectors.stats.robust_own_baseline` from its counts per (player, opponent, cell) (:func:`pair_cells`).

    The same two passes (method and reference there): the player's totals per cell from the pair counts, the bins'
    Beta priors, a first two-sided pass whose BH outliers at ``alpha`` leave the player's baseline, and the
    one-sided score test of the second pass with its ``rare_tail`` floor.

    Parameters
    ----------
    pair : player, opponent, ``bins``, ``n``, ``k``. bins : the cell columns. side, alpha, rare_tail, max_rate : as
    :func:`~detectors.stats.robust_own_baseline`.

    Returns
    -------
    Its columns: player, opponent, n, observed, expected, rate_pair, rate_own, z, p_value, score_u, var, n0, k3, l0,
    l1."""
    if pair.is_empty():
        return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "opponent") else pl.Float64) for c in _COLS})
    bins = list(bins)
    me = pair.group_by(["player", *bins]).agg(N=pl.col("n").sum().cast(pair.schema["n"]), K=pl.col("k").sum())
    pri = stats.beta_priors_by_bin(me, bins, "K", "N")
    first = _baseline_pass(pair.with_columns(_o=pl.lit(False)), me, pri, bins, max_rate)
    z1 = (first["score_u"] / first["var"].clip(1e-9).sqrt()).to_numpy()
    p2 = np.clip(2 * st.norm.sf(np.abs(z1)), _TINY, 1.0)
    out = first.filter(pl.Series(stats.bh_reject(p2, alpha))).select("player", "opponent", _o=pl.lit(True))
    pair = pair.join(out, on=["player", "opponent"], how="left").with_columns(pl.col("_o").fill_null(False))
    removed = pair.filter(pl.col("_o")).group_by(["player", *bins]).agg(rn=pl.col("n").sum(), rk=pl.col("k").sum())
    clean = me.join(removed, on=["player", *bins], how="left").with_columns(
        N=pl.col("N") - pl.col("rn").fill_null(0), K=pl.col("K") - pl.col("rk").fill_null(0)).drop("rn", "rk")
    g, p = score_test_pvalues(_baseline_pass(pair, clean, pri, bins, max_rate), side, rare_tail)
    return g.with_columns(pl.col("n", "observed").cast(pl.Float64),
                          p_value=pl.Series(np.clip(p, _TINY, 1.0))).select(_COLS)


def baseline_tests(pairs: pl.DataFrame, dec: duckdb.DuckDBPyRelation | None, *, alpha: float = 0.01,
                   rare_tail: str = "poisson", junk_bins: tuple[str, ...] = stats.JUNK_BINS) -> pl.DataFrame:
    """:func:`detectors.stats.replace_baseline_tests` from DuckDB's counts: ``pairs`` with the aggression, fold and
    weak-hand commitment ("junk") own-baseline columns (``<name>_n``, ``_obs``, ``_exp``, ``_p``, ``_u``, ``_v``,
    ``_n0``) of :func:`own_baseline_from_cells`.

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
        t = own_baseline_from_cells(cells, bins, side=side, alpha=alpha,
                                    rare_tail=rare_tail if side == "greater" else "poisson")
        out = out.drop([f"{name}_{c}" for c in ("n", "obs", "exp", "p", "u", "v", "n0") if f"{name}_{c}" in out.columns])
        out = out.join(t.select("player", "opponent", pl.col("n").alias(f"{name}_n"), pl.col("observed").alias(f"{name}_obs"),
                                pl.col("expected").alias(f"{name}_exp"), pl.col("p_value").alias(f"{name}_p"),
                                pl.col("score_u").alias(f"{name}_u"), pl.col("var").alias(f"{name}_v"),
                                pl.col("n0").cast(pl.Float64).alias(f"{name}_n0")),
                       on=["player", "opponent"], how="left")
    return out
