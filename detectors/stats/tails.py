"""Exact and predictive tail tests of one count or mean against a baseline.

- :func:`baseline_tail`: the own-baseline test. The player's rate against
  others is uncertain (Beta posterior from the shrinkage prior and their
  counts); the count towards the partner is then beta-binomial under the null
  "same behaviour as against everyone else". The tail probability of the
  observed count is the p-value: the posterior-predictive check of Gelman,
  Meng & Stern (Statistica Sinica 1996) with a conjugate prior, exact for
  small samples where a z-test is not.
- :func:`binom_tail`, :func:`fisher_tail`: exact binomial and one-sided
  Fisher tests (hypergeometric tail), vectorised.
- :func:`predictive_count_tail`: the upper tail of a count of rare events whose expected number comes from an
  estimated rate (negative binomial with the predictive mean and variance, not the plug-in Poisson).
- :func:`weighted_mean_test`: a z-test for a mean of per-decision values
  against the player's own mean, with the variance estimated from the
  player's own decisions (Welch-style).
- :func:`permutation_pvalue`: a seeded Monte Carlo permutation test with the
  (b+1)/(m+1) correction of Phipson & Smyth (SAGMB 2010).
- :func:`estimated_baseline_pvalue`: a one-sample test re-read as a two-sample one when its baseline is thin.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats as _st

from detectors.stats._common import _TINY, _arr

def binom_tail(k, n, p, *, side: str = "greater") -> np.ndarray:
    """Exact binomial tail P(X >= k) (``greater``) or P(X <= k) (``less``), X ~ Bin(n, p)."""
    k, n, p = _arr(k), _arr(n), np.clip(_arr(p), 1e-12, 1 - 1e-12)
    if side == "greater":
        out = _st.binom.sf(k - 1, n, p)
    else:
        out = _st.binom.cdf(k, n, p)
    return np.where(n > 0, np.clip(out, _TINY, 1.0), np.nan)


def baseline_tail(k, n, k0, n0, a: float, b: float, *, side: str = "greater") -> np.ndarray:
    """Own-baseline test: is ``k`` of ``n`` (towards the partner) unusual for this player?

    The player's rate is Beta(a + k0, b + n0 − k0) after their ``k0`` of ``n0``
    against everyone else (prior from :func:`fit_beta_prior`); under the null
    the partner count is beta-binomial with that posterior. Returns
    P(X >= k) for ``side="greater"``, P(X <= k) for ``"less"``; NaN where n = 0.
    """
    k, n, k0, n0 = _arr(k), _arr(n), _arr(k0), _arr(n0)
    aa = a + k0
    bb = b + np.maximum(n0 - k0, 0.0)
    nn = np.maximum(n, 0).astype(int)
    kk = np.round(k).astype(int)
    if side == "greater":
        out = _st.betabinom.sf(kk - 1, nn, aa, bb)
    else:
        out = _st.betabinom.cdf(kk, nn, aa, bb)
    return np.where(n > 0, np.clip(out, _TINY, 1.0), np.nan)


def fisher_tail(k1, n1, k2, n2, *, side: str = "greater") -> np.ndarray:
    """One-sided Fisher exact test of rate k1/n1 against k2/n2 (hypergeometric tail).

    ``greater``: the first rate is higher than the second. Vectorised.
    """
    k1, n1, k2, n2 = (np.round(_arr(x)).astype(np.int64) for x in (k1, n1, k2, n2))
    total = n1 + n2
    succ = k1 + k2
    if side == "greater":
        out = _st.hypergeom.sf(k1 - 1, total, succ, n1)
    else:
        out = _st.hypergeom.cdf(k1, total, succ, n1)
    return np.where((n1 > 0) & (n2 > 0), np.clip(out, _TINY, 1.0), np.nan)


def predictive_count_tail(k, mean, extra_var) -> np.ndarray:
    """P(X >= k) for a count whose expected value ``mean`` rests on estimated rates: the predictive tail.

    Under the null the count towards a partner is a sum over bins of
    Bin(n_b, r_b), each rate r_b known only through a Beta posterior
    (``s_b`` pseudo-decisions: the player's baseline plus the prior's
    strength). Its predictive distribution is a sum of beta-binomials, whose
    variance exceeds the plug-in one by ``extra_var`` = sum of
    n_b (n_b - 1) r_b (1 - r_b) / (s_b + 1). For rare events (r_b small) each
    beta-binomial is the Poisson with a gamma-distributed mean, and their sum
    is matched by one gamma-Poisson mixture, the negative binomial with
    mean ``mean`` and variance ``mean + extra_var`` (shape mean^2 / extra_var;
    Johnson, Kemp & Kotz, *Univariate Discrete Distributions*, 3rd ed. 2005,
    sec. 5.3 and 6.7; the moment match of Satterthwaite, *Biometrics
    Bulletin* 2, 1946). The plug-in Poisson tail at ``mean`` takes the rate
    as known: two events where 0.002 are expected get p 2e-6 even when the
    rate's posterior (no event in 80 baseline decisions, a prior of
    strength 3) allows rates ten times higher; the predictive tail is 2e-5.
    ``extra_var`` 0 (one decision per bin, or a certain rate) is the Poisson
    tail. NaN where ``mean`` is NaN.
    """
    k, mu, ex = _arr(k), _arr(mean), _arr(extra_var)
    mu = np.maximum(mu, 1e-12)
    ex = np.nan_to_num(np.maximum(ex, 0.0), nan=0.0)
    pois = _st.poisson.sf(k - 1, mu)
    nb_ok = ex > 1e-12 * mu
    shape = np.where(nb_ok, mu**2 / np.where(nb_ok, ex, 1.0), 1.0)
    nb = _st.nbinom.sf(k - 1, shape, shape / (shape + mu))
    out = np.where(nb_ok, nb, pois)
    return np.where(np.isnan(_arr(mean)), np.nan, np.clip(out, _TINY, 1.0))


def weighted_mean_test(sum_x, sum_x2, n, mean0, var0, n0, *, side: str = "greater") -> np.ndarray:
    """z-test of a partner mean (from sums of per-decision values) against the own baseline.

    ``mean0``/``var0``/``n0`` are the player's own mean, variance and count
    against others. The standard error combines the partner sample's variance
    (floored at the baseline variance, so a handful of identical values cannot
    fake certainty) and the baseline's.
    """
    sum_x, sum_x2, n = _arr(sum_x), _arr(sum_x2), _arr(n)
    mean0, var0, n0 = _arr(mean0), _arr(var0), _arr(n0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = sum_x / n
        var = np.maximum(sum_x2 / n - mean**2, 0.0)
        var = np.maximum(var, var0)
        se = np.sqrt(var / n + var0 / np.maximum(n0, 1.0))
        z = (mean - mean0) / se
    out = _st.norm.sf(z) if side == "greater" else _st.norm.cdf(z)
    return np.where((n > 1) & np.isfinite(z), np.clip(out, _TINY, 1.0), np.nan)


def permutation_pvalue(
    x: np.ndarray,
    labels: np.ndarray,
    statistic: Callable[[np.ndarray, np.ndarray], float],
    *,
    n_perm: int = 999,
    random_state: int = 0,
) -> float:
    """One-sided permutation p-value of ``statistic(x, labels)`` (larger = more extreme).

    Labels are shuffled ``n_perm`` times with a seeded generator; the p-value
    is (b + 1) / (n_perm + 1) (Phipson & Smyth 2010), never zero.
    """
    rng = np.random.default_rng(random_state)
    obs = statistic(x, labels)
    b = 0
    lab = np.array(labels, copy=True)
    for _ in range(n_perm):
        rng.shuffle(lab)
        if statistic(x, lab) >= obs:
            b += 1
    return (b + 1) / (n_perm + 1)


def estimated_baseline_pvalue(p, base_ratio) -> np.ndarray:
    """One-sided p-value of a one-sample score test re-read as a two-sample comparison when its baseline is thin.

    A test of a player's decisions against one opponent (``n`` of them) with
    the player's own rate against everyone else as the null takes that rate
    as known. It is estimated from ``n0`` decisions; when ``n0`` is small
    next to ``n`` (a pair that plays mostly each other) its error is of the
    order of the effect. The two-sample comparison of proportions (Wald /
    score test for p1 - p2, e.g. Agresti, *Categorical Data Analysis*, 2002,
    sec. 3.1) has the variance p (1 - p) (1/n + 1/n0), the one-sample test's
    p (1 - p) / n times (1 + n / n0): z = Phi^-1(1 - p) is divided by
    sqrt(1 + 1 / base_ratio), ``base_ratio`` = n0 / n (the thinner side of
    the pair: conservative, the shrinkage prior of the rate only narrows it).
    NaN or non-positive ratios leave p unchanged.
    """
    pv = _arr(p)
    r = _arr(base_ratio)
    ok = np.isfinite(r) & (r > 0) & np.isfinite(pv)
    z = _st.norm.isf(np.clip(np.nan_to_num(pv, nan=0.5), _TINY, 1.0))
    adj = _st.norm.sf(z / np.sqrt(1.0 + 1.0 / np.where(ok, r, 1.0)))
    return np.where(ok, np.clip(adj, _TINY, 1.0), pv)
