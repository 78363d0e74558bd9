"""Multiple testing: Benjamini–Hochberg q-values, weighted BH, the comparable score.

- :func:`bh_qvalues` / :func:`bh_reject`: the Benjamini–Hochberg step-up
  procedure controlling the false-discovery rate across candidates
  (Benjamini & Hochberg, "Controlling the false discovery rate", JRSS B 1995).
- :func:`weighted_bh_pvalues`: p-values divided by power weights for weighted BH
  (Genovese, Roeder & Wasserman, Biometrika 2006).
- :func:`deficit_power`: a count test's power to show a given relative deficit at a given level, a weight for it.
- :func:`score_from_q`: the comparable score, −log10 q, capped.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from detectors.stats._common import _arr

def bh_qvalues(p, *, untested: float = np.nan) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values), in the order of ``p``.

    Parameters
    ----------
    p : array-like of float
        one p-value per hypothesis; NaN for a test not made.
    untested : float
        the q-value of a test not made: NaN (default: no q at all) or 1.0
        where the caller needs a number (never a discovery).

    Returns
    -------
    numpy.ndarray
        q_i = min over j with p_(j) >= p_i of p_(j) m / rank_j, capped at 1,
        where m counts only the tests made (a NaN does not enlarge the family).

    Method: the step-up procedure of Benjamini & Hochberg, "Controlling the
    false discovery rate", JRSS B 57(1), 1995; ties keep their order (stable sort).
    """
    p = _arr(p)
    q = np.full(p.shape, untested, dtype=float)
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


def weighted_bh_pvalues(p, power, prior=None) -> np.ndarray:
    """p-values divided by weights for the weighted Benjamini–Hochberg procedure; NaN (untested) stays NaN.

    Genovese, Roeder & Wasserman (Biometrika 2006): with non-negative weights
    that average 1 over the tested hypotheses, BH on p_i / w_i still controls
    the false-discovery rate, and weights that grow with a test's power move
    the budget to the tests that can use it. ``power`` is any non-negative
    measure fixed before the outcome is seen (for a count test, its expected
    count); the weight is min(1, power), rescaled to mean 1 over the tested.
    ``prior`` (optional, >= 0, NaN read as 1) multiplies that weight before the
    rescaling: side information that is independent of the tests' p-values
    under the null and says which hypotheses are more likely false (Roeder &
    Wasserman, Stat. Sci. 2009: weights from prior information keep the
    procedure valid and pay off when the information is right; a wrong prior
    costs power, never the error rate).
    Returns min(1, p / w) (1 where w = 0).
    """
    p = _arr(p)
    ok = ~np.isnan(p)
    w = np.where(ok, np.clip(np.nan_to_num(_arr(power), nan=0.0), 0.0, 1.0), 0.0)
    if prior is not None:
        w = w * np.clip(np.nan_to_num(_arr(prior), nan=1.0), 0.0, None)
    if not ok.any() or w.sum() <= 0:
        return p
    w = w * ok.sum() / w.sum()
    out = np.where(w > 0, p / np.maximum(w, 1e-300), 1.0)
    return np.where(ok, np.minimum(out, 1.0), np.nan)


def deficit_power(expected, ratio: float, level: float) -> np.ndarray:
    """Per test, the power of a one-sided count test with ``expected`` events under the null to show a count of
    ``ratio`` times that, at ``level``: Phi((1 - ratio) sqrt(e) - z), z the normal quantile of 1 - ``level``.

    Parameters
    ----------
    expected : array-like of float
        the count each test expects under the null (NaN or negative read as 0).
    ratio : float
        the observed / expected that counts as a material deficit (below 1).
    level : float
        the one-sided level the test must reach (for a family of m tests at false-discovery rate alpha, alpha / m:
        the level the first discovery needs).

    Returns
    -------
    numpy.ndarray of powers in [0, 1]; a weight for :func:`weighted_bh_pvalues` fixed before the outcome.

    Method: the count's null variance taken as its mean (Poisson; a sum of Bernoulli events varies less, so the
    power is a lower bound of the same order), the normal approximation to the shifted count. Weights that grow with
    power move the false-discovery budget to the tests that can use it (Genovese, Roeder & Wasserman, Biometrika
    2006; Roeder & Wasserman, Stat. Sci. 2009, weights proportional to power); unlike a weight capped at a fixed
    count, the power at alpha / m falls for the tests with few events as the family m grows, so the many tests
    that cannot reach the level do not dilute those that can.
    """
    e = np.clip(np.nan_to_num(_arr(expected), nan=0.0), 0.0, None)
    z = _st.norm.isf(min(max(level, 1e-300), 0.5))
    return _st.norm.cdf((1.0 - ratio) * np.sqrt(e) - z)
