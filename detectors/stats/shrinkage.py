"""Empirical-Bayes shrinkage of rates estimated on small samples.

:func:`fit_beta_prior` (per bin: :func:`beta_priors_by_bin`) / :func:`shrink_rate`: beta-binomial
shrinkage towards the population's rate (method-of-moments fit, as in Efron, "Large-Scale Inference",
2010, ch. 1; Robbins 1956). A player seen 3 times is pulled to the population; one seen 3,000 times
keeps their own rate.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.stats._common import _arr

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


def beta_priors_by_bin(rates: pl.DataFrame, bins: list[str], k: str, n: str) -> pl.DataFrame:
    """One :func:`fit_beta_prior` per bin: ``rates`` holds one row per unit (player) and bin with its
    successes ``k`` and trials ``n``; returns the bins with the prior's ``pa``, ``pb`` (bin columns keep
    their dtypes, for joining back)."""
    priors = []
    for key, grp in rates.group_by(bins):
        a, b = fit_beta_prior(grp[k].to_numpy(), grp[n].to_numpy())
        priors.append({**dict(zip(bins, key)), "pa": a, "pb": b})
    return pl.DataFrame(priors).cast({b: rates.schema[b] for b in bins})


def shrink_rate(k, n, a: float, b: float) -> np.ndarray:
    """Posterior mean rate (k + a) / (n + a + b) under the Beta(a, b) prior."""
    return (_arr(k) + a) / (_arr(n) + a + b)
