"""Shared statistics for railbird's detectors: honest uncertainty over many pairs.

Every detector compares an account's behaviour towards one partner with the
same account's behaviour towards everyone else (its own baseline), on samples
that are often small, across thousands of candidate pairs. This module holds
the pieces they share, all vectorised over numpy arrays (one entry per
candidate):

- :func:`bh_qvalues` / :func:`bh_reject`: the Benjamini–Hochberg step-up
  procedure controlling the false-discovery rate across candidates
  (Benjamini & Hochberg, "Controlling the false discovery rate", JRSS B 1995).
- :func:`fit_beta_prior` / :func:`shrink_rate`: empirical-Bayes beta-binomial
  shrinkage of rates estimated on small samples towards the population's rate
  (method-of-moments fit, as in Efron, "Large-Scale Inference", 2010, ch. 1;
  Robbins 1956). A player seen 3 times is pulled to the population; one seen
  3,000 times keeps their own rate.
- :func:`baseline_tail`: the own-baseline test. The player's rate against
  others is uncertain (Beta posterior from the shrinkage prior and their
  counts); the count towards the partner is then beta-binomial under the null
  "same behaviour as against everyone else". The tail probability of the
  observed count is the p-value. This is the predictive (posterior-predictive)
  check of Gelman, Meng & Stern (Statistica Sinica 1996) with a conjugate
  prior, and it is exact for small samples where a z-test is not.
- :func:`binom_tail`, :func:`fisher_tail`: exact binomial and one-sided
  Fisher tests (hypergeometric tail), vectorised.
- :func:`weighted_mean_test`: a z-test for a mean of per-decision values
  against the player's own mean, with the variance estimated from the
  player's own decisions (Welch-style, for continuous features such as value
  given per decision).
- :func:`permutation_pvalue`: a seeded Monte Carlo permutation test with the
  (b+1)/(m+1) correction of Phipson & Smyth (SAGMB 2010).
- :func:`fisher_combine`: Fisher's method for independent p-values.
- :func:`score_from_q`: the comparable score, −log10 q, capped.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats as _st

_TINY = 1e-300


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=float)


# ------------------------------------------------------------------ multiple testing


def bh_qvalues(p) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values), same order as ``p``.

    NaN p-values (tests not made) stay NaN and do not count towards m.
    """
    p = _arr(p)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return q
    pv = np.clip(p[ok], 0.0, 1.0)
    order = np.argsort(pv, kind="mergesort")
    ranked = pv[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    q[ok] = out
    return q


def bh_reject(p, alpha: float = 0.05) -> np.ndarray:
    """Boolean mask of discoveries at false-discovery rate ``alpha``."""
    q = bh_qvalues(p)
    return np.where(np.isnan(q), False, q <= alpha)


def score_from_q(q, cap: float = 30.0) -> np.ndarray:
    """−log10 q, capped at ``cap``: higher is more suspicious, comparable within a kind."""
    q = _arr(q)
    return np.where(np.isnan(q), 0.0, np.minimum(-np.log10(np.clip(q, 10.0**-cap, 1.0)), cap))


# ------------------------------------------------------------------ shrinkage


def fit_beta_prior(k, n, *, min_n: int = 5, max_strength: float = 1e4) -> tuple[float, float]:
    """Fit a Beta(a, b) prior to many binomial rates ``k/n`` by the method of moments.

    Removes the binomial sampling noise from the observed variance of the rates
    (the beta-binomial moment estimator). Units with fewer than ``min_n``
    trials are ignored for the fit. Falls back to a weak prior (strength 2)
    centred on the pooled rate when the rates show no extra-binomial spread.
    """
    k, n = _arr(k), _arr(n)
    use = n >= min_n
    if use.sum() < 3:
        use = n > 0
    if not use.any():
        return 1.0, 1.0
    k, n = k[use], n[use]
    pooled = float(np.clip(k.sum() / n.sum(), 1e-4, 1 - 1e-4))
    r = k / n
    w = n / n.sum()
    mean = float(np.clip((w * r).sum(), 1e-4, 1 - 1e-4))
    var = float((w * (r - mean) ** 2).sum())
    # expected binomial noise in the weighted variance
    noise = mean * (1 - mean) * float((w / n).sum())
    between = var - noise
    if between <= 1e-12:
        s = max_strength
        return pooled * s, (1 - pooled) * s
    s = mean * (1 - mean) / between - 1.0
    s = float(np.clip(s, 2.0, max_strength))
    return mean * s, (1 - mean) * s


def shrink_rate(k, n, a: float, b: float) -> np.ndarray:
    """Posterior mean rate (k + a) / (n + a + b) under the Beta(a, b) prior."""
    return (_arr(k) + a) / (_arr(n) + a + b)


# ------------------------------------------------------------------ tests


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


def fisher_combine(*pvalues) -> np.ndarray:
    """Fisher's method, element-wise; NaNs are skipped (a test not made adds nothing)."""
    P = np.vstack([_arr(p) for p in pvalues])
    ok = ~np.isnan(P)
    stat = -2.0 * np.where(ok, np.log(np.clip(P, _TINY, 1.0)), 0.0).sum(axis=0)
    dof = 2 * ok.sum(axis=0)
    out = np.where(dof > 0, _st.chi2.sf(stat, np.maximum(dof, 1)), np.nan)
    return out


def min_p_bonferroni(*pvalues) -> np.ndarray:
    """min(p) × (number of tests made), capped at 1: valid under any dependence."""
    P = np.vstack([_arr(p) for p in pvalues])
    ok = ~np.isnan(P)
    m = ok.sum(axis=0)
    mn = np.where(ok, P, 1.0).min(axis=0)  # columns with no test made are masked below (no inf * 0)
    return np.where(m > 0, np.minimum(mn * m, 1.0), np.nan)


__all__ = [
    "baseline_tail",
    "bh_qvalues",
    "bh_reject",
    "binom_tail",
    "fisher_combine",
    "fisher_tail",
    "fit_beta_prior",
    "min_p_bonferroni",
    "permutation_pvalue",
    "score_from_q",
    "shrink_rate",
    "weighted_mean_test",
]
