"""Several p-values of one candidate made one.

- :func:`fisher_combine`: Fisher's method for independent p-values.
- :func:`min_p_bonferroni` / :func:`weighted_bonferroni`: the smallest of
  several p-values, (weighted) Bonferroni-corrected, valid under any dependence.
- :func:`z_sum_with_support`: a main test plus a supporting one (disjoint data) that only adds evidence.
- :func:`all_below_product_pvalue`: several independent tests that must all point the same way (a ring of pairs).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _st

from detectors.stats._common import _TINY, _arr

def fisher_combine(*pvalues, untested: float = np.nan) -> np.ndarray:
    """Fisher's method, element-wise: independent tests of each candidate combined into one p-value.

    Parameters
    ----------
    *pvalues : array-like of float
        one array per test, aligned (entry i of each is candidate i); or a
        single 2-D array with a row per candidate and a column per test. NaN:
        the test was not made for that candidate; it adds nothing (neither to
        the statistic nor to the degrees of freedom).
    untested : float
        the result for a candidate with no test made at all: NaN (default) or
        1.0 where the caller needs a number.

    Returns
    -------
    numpy.ndarray
        P(chi2 with 2k degrees of freedom > -2 sum ln p_i), k the tests made
        (p-values clipped below at 1e-300 so that a zero stays finite).

    Method: Fisher, *Statistical Methods for Research Workers*, 1925, §21.1.

    Example
    -------
    >>> import numpy as np
    >>> fisher_combine([0.01, np.nan], [0.01, np.nan], untested=1.0).round(5).tolist()
    [0.00102, 1.0]
    """
    if len(pvalues) == 1 and np.ndim(pvalues[0]) == 2:
        P = _arr(pvalues[0]).T
    else:
        P = np.vstack([_arr(p) for p in pvalues])
    ok = ~np.isnan(P)
    stat = -2.0 * np.where(ok, np.log(np.clip(P, _TINY, 1.0)), 0.0).sum(axis=0)
    dof = 2 * ok.sum(axis=0)
    return np.where(dof > 0, _st.chi2.sf(stat, np.maximum(dof, 1)), untested)


def min_p_bonferroni(*pvalues) -> np.ndarray:
    """min(p) × (number of tests made), capped at 1: valid under any dependence."""
    P = np.vstack([_arr(p) for p in pvalues])
    ok = ~np.isnan(P)
    m = ok.sum(axis=0)
    mn = np.where(ok, P, 1.0).min(axis=0)  # columns with no test made are masked below (no inf * 0)
    return np.where(m > 0, np.minimum(mn * m, 1.0), np.nan)


def weighted_bonferroni(pvalues, weights) -> np.ndarray:
    """min_i p_i / w_i, capped at 1: the weighted Bonferroni combination (valid under any dependence).

    ``weights`` (one per test, fixed before the data are seen) are renormalised
    over the tests made for each entry (NaN p-values: the test could not be
    made, which depends on the counts, not on the outcome), so they always sum
    to one. Equal weights give :func:`min_p_bonferroni`. Prior weights put the
    error budget where the effect is expected (Genovese, Roeder & Wasserman,
    "False discovery control with p-value weighting", Biometrika 2006).
    """
    P = np.vstack([_arr(p) for p in pvalues])
    w = _arr(weights).reshape(-1, 1)
    ok = ~np.isnan(P)
    tot = np.where(ok, w, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(ok, P * tot / np.maximum(w, 1e-300), np.inf).min(axis=0)
    return np.where(ok.any(axis=0), np.minimum(r, 1.0), np.nan)


def z_sum_with_support(p_main, p_support, w_main: float = 4.0, w_support: float = 1.0, grid: int = 401) -> np.ndarray:
    """One-sided p-value of T = w_main z_main + w_support max(z_support, 0), two independent tests.

    z = Phi^-1(1 - p) for each. A supporting test (on disjoint data) adds its
    evidence when it points the same way as the main test and costs nothing
    when it points the other way, so a pair that shows only in the main test
    keeps most of that test's power, unlike the weighted Z method (Stouffer;
    Whitlock, J. Evol. Biol. 2005), where a supporting z below zero takes
    evidence away. The null distribution of T is exact for normal z's:
    P(T > t) = Phi(0) (1 - Phi(t / w_main)) + int_0^inf phi(x) (1 - Phi((t - w_support x) / w_main)) dx,
    the integral by the trapezoid rule on [0, 10] (``grid`` points). It
    depends on t alone, so it is computed at nodes 0.01 w_main apart over the
    range of the t's and interpolated linearly in log p (relative error below
    1e-4; memory stays flat for millions of pairs). NaN support: the main
    test's own p-value; NaN main: NaN. (A truncated combination in the spirit
    of Zaykin et al.'s truncated product method, Genet. Epidemiol. 2002, on the
    Z scale.)
    """
    pm, ps = _arr(p_main), _arr(p_support)
    zm = _st.norm.isf(np.clip(np.nan_to_num(pm, nan=0.5), _TINY, 1.0))
    zs = np.where(np.isnan(ps), 0.0, _st.norm.isf(np.clip(np.nan_to_num(ps, nan=0.5), _TINY, 1.0)))
    # (z clipped to +-40: p = 1 gives z = -inf, and 1e-300 is z = 37)
    t = w_main * np.clip(zm, -40.0, 40.0) + w_support * np.clip(zs, 0.0, 40.0)
    x = np.linspace(0.0, 10.0, grid)
    dens = _st.norm.pdf(x)

    def sf(u: np.ndarray) -> np.ndarray:
        tail = _st.norm.sf((u[:, None] - w_support * x[None, :]) / w_main)
        return 0.5 * _st.norm.sf(u / w_main) + np.trapezoid(dens[None, :] * tail, x, axis=1)

    if t.size:
        nodes = np.linspace(t.min(), t.max(), int(np.ceil((t.max() - t.min()) / (0.01 * w_main))) + 2)
        out = np.exp(np.interp(t, nodes, np.log(np.clip(sf(nodes), _TINY, 1.0))))
    else:
        out = t
    out = np.where(np.isnan(ps), pm, out)
    return np.where(np.isnan(pm), np.nan, np.clip(out, _TINY, 1.0))


def all_below_product_pvalue(P, tau: float) -> np.ndarray:
    """Per row of ``P`` (n x k independent p-values), the p-value of "all k below ``tau``, product W".

    The statistic is defined for every row: W = prod p_i when every p_i <= tau,
    none otherwise (p-value 1). Under the null (independent uniform p-values)
    P(all p_i <= tau and prod p_i <= w) = tau^k F_k(w / tau^k), F_k the
    distribution of a product of k uniforms, F_k(x) = x sum_{j<k} (-ln x)^j / j!
    (the distribution behind Fisher's method), because given p_i <= tau each
    p_i / tau is uniform. The event is a lower set in every p_i, so independent
    valid (super-uniform) p-values keep the bound. It is the truncated product
    of Zaykin, Zhivotovsky, Westfall & Weir (Genet. Epidemiol. 2002) with
    every component required below the truncation point: a group is claimed
    only when each of its parts points the same way, and the price of the
    truncation is paid once (tau^k) instead of per part. Computed in logs
    (products down to 1e-300 and below). NaN anywhere in a row: NaN.
    """
    P = np.atleast_2d(np.asarray(P, dtype=float))
    n, k = P.shape
    out = np.ones(n)
    bad = np.isnan(P).any(axis=1)
    ok = ~bad & (np.nan_to_num(P, nan=1.0) <= tau).all(axis=1)
    if ok.any():
        lx = np.log(np.clip(P[ok], _TINY, 1.0)).sum(axis=1) - k * np.log(tau)  # log(w / tau^k) <= 0
        lx = np.minimum(lx, 0.0)
        terms = np.stack([(-lx) ** j / math.factorial(j) for j in range(k)])
        lf = lx + np.log(terms.sum(axis=0))
        out[ok] = np.exp(np.minimum(k * np.log(tau) + lf, 0.0))
    out[bad] = np.nan
    return np.where(np.isnan(out), np.nan, np.clip(out, _TINY, 1.0))
