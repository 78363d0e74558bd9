"""Whether the chips moved: the chips a giver lost to a receiver in the hands where its play deviates (cards known),
or in every hand they met (cards unknown), tested against the giver's own losses in such hands against everyone else
and ranked among the population's pairs (the benign explanation of a chip-dumping case whose play is odd: "the chips
did not move")."""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import optimize, stats

#: the deviation flow's columns the test reads (:func:`detectors.chip_dumping.flows.deviation_flow`): the pair's hands
#: met, the chips lost in its deviation hands and their squares, and the same three against everyone else
MOVED_COLUMNS = ("dev_met_hands", "dev_flow_bb", "dev_flow_sq", "dev_met0", "dev_flow0", "dev_sq0")
#: the same over every hand in which chips moved between the two (:func:`detectors.chip_dumping.flows.exchange_flow`):
#: where the cards are unknown there are no deviation hands, and the chips that moved are those of every such hand
EXCHANGE_COLUMNS = ("xch_hands", "xch_flow_bb", "xch_flow_sq", "xch_hands0", "xch_flow0", "xch_sq0")


def population_variance(devflow: pl.DataFrame, columns: tuple[str, ...] = MOVED_COLUMNS,
                        hands: str = "met_hands") -> float | None:
    """The variance of the chips lost per hand met in deviation hands, pooled over every ordered pair of ``devflow``
    (:func:`~detectors.chip_dumping.flows.deviation_flow`; with ``columns`` :data:`EXCHANGE_COLUMNS` and ``hands``
    ``"xch_hands"``, per hand in which chips moved between the two, :func:`~detectors.chip_dumping.flows.exchange_flow`):
    the null's spread for a giver with too thin an own baseline. Returns None without any hands."""
    flow, sq = columns[1], columns[2]
    if devflow.is_empty() or sq not in devflow.columns:
        return None
    n = float(devflow[hands].cast(pl.Float64).sum())
    if n <= 0:
        return None
    mean = float(devflow[flow].sum()) / n
    return max(float(devflow[sq].sum()) / n - mean ** 2, 1e-6)


def _robust_baseline(t: pl.DataFrame, alpha: float, columns: tuple[str, ...] = MOVED_COLUMNS) -> pl.DataFrame:
    """``t`` with ``_n0``, ``_f0``, ``_q0``: each giver's hands, chips lost in deviation hands (``columns``
    :data:`EXCHANGE_COLUMNS`: in every hand in which chips moved between the two) and their squares against everyone
    else, without its other partners in whose direction the combined test already finds a dump (q <= ``alpha``,
    chips lost in those hands): a feeder of several receivers would otherwise be compared with its own dumps (a
    star's feeder losing as much to every receiver)."""
    strong = (pl.col("q_value").fill_null(1.0) <= alpha) & (pl.col(columns[1]).fill_null(0.0) > 0)
    own = dict(zip(columns[:3], columns[3:]))
    t = t.with_columns(_strong=strong)
    out = t.filter(pl.col("_strong")).group_by("player").agg(
        [pl.col(c).fill_null(0).cast(pl.Float64).sum().alias(f"_x{i}") for i, c in enumerate(own)])
    t = t.join(out, on="player", how="left")
    return t.with_columns([
        (pl.col(b).fill_null(0.0) - pl.col(f"_x{i}").fill_null(0.0)
         + pl.when(pl.col("_strong")).then(pl.col(c).fill_null(0).cast(pl.Float64)).otherwise(0.0)).alias(name)
        for i, ((c, b), name) in enumerate(zip(own.items(), ("_n0", "_f0", "_q0")))])


def deviation_moved_p(t: pl.DataFrame, *, alpha: float, prior_df: float, min_n0: int,
                      pop_var: float | None = None, columns: tuple[str, ...] = MOVED_COLUMNS) -> np.ndarray:
    """The p-value of "the chips did not move" per ordered pair (giver A, receiver B) of ``t``.

    Parameters
    ----------
    t : the scored pairs with ``columns`` and ``q_value``.
    alpha : the false-discovery level: A's partners at q <= alpha are left out of A's baseline (:func:`_robust_baseline`).
    prior_df : the degrees of freedom of the prior on the pair's variance (the value test's ``value_prior_df``).
    min_n0 : the fewest hands against others that make an own baseline; with fewer, the null is "A lost nothing to
        B" with the population's spread ``pop_var`` (:func:`population_variance`; None: the rows' own pooled).
    columns : the pair's hands met, chips lost and their squares, and A's three against everyone else:
        :data:`MOVED_COLUMNS` (the deviation hands, cards known) or :data:`EXCHANGE_COLUMNS` (every hand in which
        chips moved between the two, the test where the cards are unknown: :func:`exchange_moved_p`).

    Returns
    -------
    One p per row, NaN where the test cannot be made (fewer than two hands met, or a column missing).

    Method: per hand that A met B, x is the chips A lost to B if A's play deviated in it (0 otherwise: how often A
    deviates is part of how much moved). The pair's mean of x over its n hands is tested one-sided against A's
    mean over its n0 hands against everyone else, floored at 0 (a giver who wins in such hands must still have
    lost to B), as the value test is: the pair's variance s^2 read with a scaled inverse-chi-square prior
    centred on A's own variance v0 with ``prior_df`` degrees of freedom, ((n - 1) s^2 + nu v0) / (n - 1 + nu), the
    statistic (mean - max(mean0, 0)) / sqrt(var / n + v0 / n0) on Student's t with n - 1 + nu degrees of freedom.
    A big pot lost once inflates the pair's own variance and counts little; a small loss in every hand, or a large
    one over many hands, counts."""
    if any(c not in t.columns for c in columns) or t.is_empty():
        return np.full(t.height, np.nan)
    r = _robust_baseline(t, alpha, columns)
    g = lambda c: r[c].fill_null(0).to_numpy().astype(float)  # noqa: E731
    n, s, q, n0, s0, q0 = (g(c) for c in (*columns[:3], "_n0", "_f0", "_q0"))
    if pop_var is None:
        tot = max(float(n.sum()), 1.0)
        pop_var = max(float(q.sum()) / tot - (float(s.sum()) / tot) ** 2, 1e-6)
    thin = n0 < min_n0
    nu = float(prior_df)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean0 = np.where(thin, 0.0, s0 / np.maximum(n0, 1.0))
        var0 = np.where(thin, pop_var, np.maximum(q0 / np.maximum(n0, 1.0) - mean0 ** 2, 1e-6))
        se0 = np.where(thin, 0.0, var0 / np.maximum(n0, 1.0))  # the population's spread: no estimate of a mean
        m = s / n
        s2 = np.maximum(q / n - m ** 2, 0.0) * n / (n - 1)
        var = ((n - 1) * s2 + nu * var0) / (n - 1 + nu)
        z = (m - np.maximum(mean0, 0.0)) / np.sqrt(var / n + se0)
    p = stats.t.sf(z, np.maximum(n - 1 + nu, 1.0))
    return np.where((n >= 2) & np.isfinite(z), np.clip(p, 1e-300, 1.0), np.nan)


def exchange_moved_p(t: pl.DataFrame, *, alpha: float, prior_df: float, min_n0: int,
                     pop_var: float | None = None) -> np.ndarray:
    """:func:`deviation_moved_p` over every hand in which chips moved between A and B (:data:`EXCHANGE_COLUMNS`): the
    p-value of "the chips did not move" where the cards are unknown (no deviation hands), per row of ``t``.

    Parameters
    ----------
    t, alpha, prior_df, min_n0, pop_var : as :func:`deviation_moved_p` (``pop_var``: the variance per such hand,
        :func:`population_variance` with :data:`EXCHANGE_COLUMNS`).

    Returns
    -------
    One p per row, NaN where it cannot be made. Method: per hand in which one of A and B lost chips to the other
    (:func:`~detectors.chip_dumping.flows.exchange_flow`), x = the chips A lost to B in it (negative where A won from
    B); the pair's mean against A's mean over such hands with everyone else, floored at 0, with the pair's variance
    read through the prior on A's own: "A loses to everyone like this" (a weak or loose player) is the benign
    explanation it tests."""
    return deviation_moved_p(t, alpha=alpha, prior_df=prior_df, min_n0=min_n0, pop_var=pop_var,
                             columns=EXCHANGE_COLUMNS)


def amount_rank_p(t: pl.DataFrame, flow: str = "dev_flow_bb", expected: str = "dev_exp_bb",
                  hands: str = "dev_met_hands") -> np.ndarray:
    """The p-value of "the chips did not move more than in the population's pairs" per ordered pair of ``t``.

    Parameters
    ----------
    t : the scored pairs with ``hands``, ``flow`` and ``expected`` (the deviation flow: ``dev_met_hands``,
        ``dev_flow_bb`` and ``dev_exp_bb``; over every hand in which chips moved between the two, the test where the
        cards are unknown: ``xch_hands``, ``xch_flow_bb`` and ``xch_exp_bb``).

    Returns
    -------
    One p per row, 1 where the pair met in fewer than two hands. Method: the pair's excess, the chips A lost to B in
    its deviation hands beyond what A's own rate there predicts (a rate below zero counts as zero), ranked among the
    excesses of every scored pair that met in two hands or more: p = (#pairs with at least this excess + 1) / (k + 1),
    the population's own null for the amount (what an honest match-up of this population moves), on the chips'
    own scale whatever the stakes and stacks."""
    need = (hands, flow, expected)
    if t.is_empty() or any(c not in t.columns for c in need):
        return np.ones(t.height)
    exc = (t[flow].fill_null(0.0) - t[expected].fill_null(0.0).clip(lower_bound=0.0)).to_numpy()
    use = t[hands].fill_null(0).to_numpy() >= 2
    pool = np.sort(exc[use])
    ge = pool.size - np.searchsorted(pool, exc, side="left")
    return np.where(use, (ge + 1.0) / (pool.size + 1.0), 1.0)


def between_pair_variance(diff: np.ndarray, var: np.ndarray) -> float:
    """The variance between the population's pairs of a per-hand effect beyond its sampling error (the random
    effect of a giver's opponents: an honest player gives some opponents more than others, a stronger one, a
    table's depth), estimated robustly from the pairs themselves.

    Parameters
    ----------
    diff : each pair's effect (the value test's mean per hand against the giver's own mean to the others).
    var : its sampling variance (the test's var / n + var0 / n0).

    Returns
    -------
    tau^2 >= 0 such that the median of diff^2 / (var + tau^2) over the pairs is the median of a chi-square with one
    degree of freedom, 0 where it already is at most that or fewer than :data:`MIN_BETWEEN_PAIRS` pairs are given.
    Method: the median, not the mean (DerSimonian and Laird's moment estimator), so that the few planted or real
    dumps, whose effects are far out, do not set the honest pairs' spread. The median falls continuously as tau^2
    grows and is at most the target at tau^2 = max(diff^2) / target, so Brent's method
    (:func:`scipy.optimize.brentq`) finds the root in [0, that bound] to the last bits."""
    ok = np.isfinite(diff) & np.isfinite(var) & (var > 0)
    d2, v = diff[ok] ** 2, var[ok]
    if d2.size < MIN_BETWEEN_PAIRS:
        return 0.0
    target = float(stats.chi2.ppf(0.5, 1))

    def excess(t2: float) -> float:
        return float(np.median(d2 / (v + t2))) - target

    if excess(0.0) <= 0:
        return 0.0
    # every d2 / (v + hi) <= max(d2) / hi == target there: the root lies in [0, hi]
    hi = float(d2.max()) / target
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


#: the fewest pairs whose spread estimates the between-pair variance (:func:`between_pair_variance`)
MIN_BETWEEN_PAIRS = 30
