"""Shared statistics for railbird's detectors: honest uncertainty over many pairs.

Every detector compares an account's behaviour towards one partner with the
same account's behaviour towards everyone else (its own baseline), on samples
that are often small, across thousands of candidate pairs. This module holds
the pieces they share, all vectorised over numpy arrays (one entry per
candidate):

- :func:`bh_qvalues` / :func:`bh_reject`: the Benjamini–Hochberg step-up
  procedure controlling the false-discovery rate across candidates
  (Benjamini & Hochberg, "Controlling the false discovery rate", JRSS B 1995).
- :func:`fit_beta_prior` (per bin: :func:`beta_priors_by_bin`) / :func:`shrink_rate`: empirical-Bayes beta-binomial
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
- :func:`predictive_count_tail`: the upper tail of a count of rare events whose expected number comes from an
  estimated rate (negative binomial with the predictive mean and variance, not the plug-in Poisson).
- :func:`weighted_mean_test`: a z-test for a mean of per-decision values
  against the player's own mean, with the variance estimated from the
  player's own decisions (Welch-style, for continuous features such as value
  given per decision).
- :func:`permutation_pvalue`: a seeded Monte Carlo permutation test with the
  (b+1)/(m+1) correction of Phipson & Smyth (SAGMB 2010).
- :func:`fisher_combine`: Fisher's method for independent p-values.
- :func:`min_p_bonferroni` / :func:`weighted_bonferroni`: the smallest of
  several p-values, (weighted) Bonferroni-corrected, valid under any dependence.
- :func:`z_sum_with_support`: a main test plus a supporting one (disjoint data) that only adds evidence.
- :func:`all_below_product_pvalue`: several independent tests that must all point the same way (a ring of pairs).
- :func:`score_from_q`: the comparable score, −log10 q, capped.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as _st

if TYPE_CHECKING:  # polars is imported where it is used (annotations only here)
    import polars as pl

_TINY = 1e-300


# the cells of the own-baseline tests on heads-up decisions (columns of detectors.features.gameplay.hu_decisions):
# preflop or not, facing a bet or not, heads-up or not, hand strength
OWN_BASELINE_BINS: tuple[str, ...] = ("preflop", "facing", "hu", "sbin")
# the weak-hand commitment ("junk") test's cells: those and the price of a call (``pbin``: a weak hand calls a
# third-pot bet far more often than a pot-sized one; detectors.chip_dumping says what it changed)
JUNK_BINS: tuple[str, ...] = (*OWN_BASELINE_BINS, "pbin")


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


def beta_priors_by_bin(rates: pl.DataFrame, bins: list[str], k: str, n: str) -> pl.DataFrame:
    """One :func:`fit_beta_prior` per bin: ``rates`` holds one row per unit (player) and bin with its
    successes ``k`` and trials ``n``; returns the bins with the prior's ``pa``, ``pb`` (bin columns keep
    their dtypes, for joining back)."""
    import polars as pl

    priors = []
    for key, grp in rates.group_by(bins):
        a, b = fit_beta_prior(grp[k].to_numpy(), grp[n].to_numpy())
        priors.append({**dict(zip(bins, key)), "pa": a, "pb": b})
    return pl.DataFrame(priors).cast({b: rates.schema[b] for b in bins})


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


__all__ = [
    "baseline_tail",
    "bh_qvalues",
    "bh_reject",
    "binom_tail",
    "fisher_combine",
    "fisher_tail",
    "fit_beta_prior",
    "beta_priors_by_bin",
    "min_p_bonferroni",
    "permutation_pvalue",
    "score_from_q",
    "shrink_rate",
    "weighted_bonferroni",
    "own_rates_per_decision",
    "hand_passivity_test",
    "weighted_mean_test",
    "z_sum_with_support",
]


# ------------------------------------------------------------------ robust own baseline (polars)

_ROBUST_CACHE: dict[tuple, object] = {}


# (id of the frame, selection) -> (a weak reference to the frame: an id is never taken for another frame's, the first pass)
_FIRST_CACHE: dict[tuple, tuple] = {}
_TOKENS = itertools.count()  # names of selected decisions, never reused
# (selection, id) -> (the columns read, the first pass): other frames with the same decisions match it (only these
# columns are kept, not the frame)
_SAME_SELECTION: dict[tuple, tuple] = {}


def _baseline_pass(pair_o, totals, pri, bins: list[str], max_rate: float):
    """One pass of :func:`robust_own_baseline`: per (player, opponent, bin) rows ``pair_o`` (``n``, ``k``, ``_o``: the
    opponent left out of the baseline), the player's totals per bin and the bins' priors -> the score test's sums per
    ordered pair."""
    import polars as pl

    t = pair_o.join(totals, on=["player", *bins]).join(pri, on=bins)
    t = t.with_columns(
        n0=(pl.col("N") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("n"))).clip(0),
        k0=(pl.col("K") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("k"))).clip(0))
    t = t.with_columns(r=((pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb"))).clip(1e-6, max_rate),
                       s=pl.col("n0") + pl.col("pa") + pl.col("pb"))
    n, k, r, s = pl.col("n"), pl.col("k"), pl.col("r"), pl.col("s")
    t = t.with_columns(e=n * r, u=(k - n * r) / (1 - r), v=n * r / (1 - r) + n**2 * r / ((1 - r) * (s + 1)),
                       k3=n * r * (2 * r - 1) / (1 - r) ** 2,
                       # the count's variance beyond the plug-in binomial's (beta-binomial, rate uncertain)
                       ex=n * (n - 1) * r * (1 - r) / (s + 1))
    return t.group_by(["player", "opponent"]).agg(
        n=pl.col("n").sum(), observed=pl.col("k").sum(), expected=pl.col("e").sum(),
        score_u=pl.col("u").sum(), var=pl.col("v").sum(), n0=pl.col("n0").sum(), k3=pl.col("k3").sum(),
        extra_var=pl.col("ex").sum())


def _baseline_first_pass(dec, y: str, where, bins: tuple[str, ...], alpha: float, max_rate: float):
    """The counts and first pass of :func:`robust_own_baseline` (and :func:`own_rates_per_decision`), which do not
    depend on the test's side, tail or extra outliers: (a token naming the selected decisions, pair counts per bin,
    the player's totals per bin, the bins' priors, the first pass's outliers with ``_o``), or None when no decision
    is selected. Computed once per selection of the same decisions and reused: the detectors ask for the same
    selection several times (soft play's outliers of the check, raise and fold tests, then the tests themselves),
    and chip dumping and soft play read the same columns of their two decision frames (soft play's adds columns to
    the shared one). A frame not seen before is matched by the columns the counts read (equal values: the same
    counts); only those columns are filtered."""
    import polars as pl

    key = (id(dec), len(dec), y, str(where), bins, alpha, max_rate)
    hit = _FIRST_CACHE.get(key)
    if hit is not None and hit[0]() is dec:
        return hit[1]
    need = list(dict.fromkeys(["player", "opponent", y, "sbin", *bins,
                               *([] if where is None else where.meta.root_names())]))
    narrow = dec.select(need)
    same = (len(dec), tuple(need), y, str(where), bins, alpha, max_rate)
    for k, (frame, res) in _SAME_SELECTION.items():
        if k[0] == same and frame.equals(narrow):
            _FIRST_CACHE[key] = (weakref.ref(dec), res)
            return res
    d = narrow.filter(pl.col("sbin").is_not_null())
    if where is not None:
        d = d.filter(where)
    if d.is_empty():
        res = None
    else:
        bins = list(bins)
        d = d.with_columns(pl.col(y).cast(pl.Int64).alias("_y"))
        pair = d.group_by(["player", "opponent", *bins]).agg(n=pl.len(), k=pl.col("_y").sum())
        # the player's totals per bin from the pair counts (integer sums: the same counts, from far fewer rows)
        me = pair.group_by(["player", *bins]).agg(N=pl.col("n").sum().cast(pair.schema["n"]), K=pl.col("k").sum())
        pri = beta_priors_by_bin(me, bins, "K", "N")
        first = _baseline_pass(pair.with_columns(_o=pl.lit(False)), me, pri, bins, max_rate)
        z1 = (first["score_u"] / first["var"].clip(1e-9).sqrt()).to_numpy()
        p2 = np.clip(2 * _st.norm.sf(np.abs(z1)), _TINY, 1.0)
        out = first.filter(pl.Series(bh_reject(p2, alpha))).select("player", "opponent", _o=pl.lit(True))
        res = (next(_TOKENS), pair, me, pri, out)
    if len(_FIRST_CACHE) > 32:
        _FIRST_CACHE.clear()
        _SAME_SELECTION.clear()
    _FIRST_CACHE[key] = (weakref.ref(dec), res)
    _SAME_SELECTION[(same, id(narrow))] = (narrow, res)
    return res


def robust_own_baseline(dec, y: str, *, where=None, bins: tuple[str, ...] = OWN_BASELINE_BINS,
                        side: str = "less", alpha: float = 0.01, max_rate: float = 1 - 1e-6, also_out=None,
                        outliers_only: bool = False, rare_tail: str = "poisson"):
    """Own-baseline score test of indicator ``y`` per ordered pair, with the player's outlying partners left out.

    As :func:`detectors.features.gameplay.own_baseline` (expected count from
    the player's shrunk rate per bin against everyone else; score test for one
    multiplier on the rates, its variance carrying the rates' uncertainty), in
    two passes. The first pass tests every pair two-sided and takes the pairs
    with BH q <= ``alpha`` as outliers: opponents the player treats unlike the
    rest (a chip-dump receiver raises its feeders, a soft player spares its
    partner). The second pass leaves the outliers' decisions out of the
    player's baseline, so one planted partner does not make every honest
    opponent look soft or favoured by contrast (a robust, trimmed baseline in
    the spirit of Huber's contamination model). Returns player, opponent, n,
    observed, expected, rate_pair, rate_own, z, p_value, and the score test's
    ``score_u`` (sum of (k - n r) / (1 - r)) and ``var``, so that tests of
    several pairs (both directions of one pair) can be pooled, and ``n0``: the
    player's own decisions against others in the pair's bins (the baseline's
    sample; where it is tiny the "own" rate is the population's prior).

    ``also_out`` (player, opponent rows): more opponents to leave out of the player's baseline with the
    first pass's own outliers (for example those found by another test of the same player, see
    :func:`baseline_outliers`). ``outliers_only``: return the first pass's outliers (player, opponent) instead.

    ``max_rate`` caps the own rates: a score weight r / (1 - r) near r = 1 lets one decision decide the test (a
    player who always calls with the nuts folds once), which the normal and Edgeworth tails cannot follow.

    ``rare_tail`` (``side="greater"`` only): the floor under the normal tail for rare events. ``"poisson"``: the
    Poisson tail at the expected count, the rates taken as known; ``"predictive"``:
    :func:`predictive_count_tail`, the rates' Beta posteriors (baseline plus prior, per bin) carried into the
    count's distribution, so a few events where the baseline saw none (a thin baseline, or one whose only events
    went with the first pass's outliers) are not read as impossible.
    """
    import polars as pl

    if rare_tail not in ("poisson", "predictive"):
        raise ValueError(f"rare_tail must be 'poisson' or 'predictive', not {rare_tail!r}")
    cols = ["player", "opponent", "n", "observed", "expected", "rate_pair", "rate_own", "z", "p_value", "score_u", "var", "n0",
            "k3"]
    fp = _baseline_first_pass(dec, y, where, tuple(bins), alpha, max_rate)
    if fp is None:
        return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "opponent") else pl.Float64) for c in cols})
    token, pair, me, pri, out = fp
    # the same selected decisions (fp's token), whichever frame they came in
    key = (token, y, str(where), bins, side, alpha, max_rate,
           None if also_out is None else (id(also_out), len(also_out)), outliers_only, rare_tail)
    if key in _ROBUST_CACHE:
        return _ROBUST_CACHE[key]
    bins = list(bins)
    if outliers_only:
        return out.select("player", "opponent")
    if also_out is not None and not also_out.is_empty():
        out = pl.concat([out, also_out.select("player", "opponent", _o=pl.lit(True))]).unique(["player", "opponent"])
    pair = pair.join(out, on=["player", "opponent"], how="left").with_columns(pl.col("_o").fill_null(False))
    removed = pair.filter(pl.col("_o")).group_by(["player", *bins]).agg(rn=pl.col("n").sum(), rk=pl.col("k").sum())
    clean = me.join(removed, on=["player", *bins], how="left").with_columns(
        N=pl.col("N") - pl.col("rn").fill_null(0), K=pl.col("K") - pl.col("rk").fill_null(0)).drop("rn", "rk")
    g = _baseline_pass(pair, clean, pri, bins, max_rate)
    sign = -1.0 if side == "less" else 1.0
    g = g.with_columns(
        rate_pair=pl.col("observed") / pl.col("n"),
        rate_own=pl.col("expected") / pl.col("n"),
        z=(sign * pl.col("score_u") - 0.5) / pl.col("var").clip(1e-9).sqrt(),
    )
    p = _st.norm.sf(g["z"].to_numpy())
    if side == "greater":
        # rare events (expected near zero): the normal tail is far too small; the Poisson tail is not
        if rare_tail == "predictive":
            p = np.maximum(p, predictive_count_tail(g["observed"].to_numpy(), np.maximum(g["expected"].to_numpy(), 1e-9),
                                                    g["extra_var"].to_numpy()))
        else:
            p = np.maximum(p, _st.poisson.sf(g["observed"].to_numpy() - 1, np.maximum(g["expected"].to_numpy(), 1e-9)))
    res = g.with_columns(pl.col("n", "observed").cast(pl.Float64), p_value=pl.Series(np.clip(p, _TINY, 1.0))).select(cols)
    # k3: third cumulant of the "fewer than expected" score (sum of (r - y) / (1 - r) over the decisions), for
    # :func:`pool_directions` with ``skew``; the "more" score's is its negative
    if len(_ROBUST_CACHE) > 16:
        _ROBUST_CACHE.clear()
    _ROBUST_CACHE[key] = res
    return res


def baseline_outliers(dec, specs, *, alpha: float = 0.01):
    """The union over several own-baseline tests of each player's outlying opponents (first pass of
    :func:`robust_own_baseline`, two-sided BH at ``alpha``): (player, opponent) rows.

    ``specs``: (y, keyword arguments of :func:`robust_own_baseline`) per test. A partner a player treats unlike the rest in one respect
    (a chip-dump receiver who hardly ever folds to its feeders) is left out of that player's baseline in
    every test: its hands would otherwise inflate the player's own rates (the receiver's bets into the
    feeders) and make the player look passive against every honest opponent (explaining away).
    """
    import polars as pl

    parts = [robust_own_baseline(dec, y, alpha=alpha, outliers_only=True, **kw) for y, kw in specs]
    parts = [p for p in parts if not p.is_empty()]
    if not parts:
        return pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8})
    return pl.concat(parts).unique(["player", "opponent"]).sort("player", "opponent")


def replace_baseline_tests(pairs, dec, alpha: float = 0.01, rare_tail: str = "poisson",
                           junk_bins: tuple[str, ...] = OWN_BASELINE_BINS):
    """``pairs`` (gameplay pair features) with the aggr / fold / junk own-baseline columns recomputed by
    :func:`robust_own_baseline` (same names: ``<name>_n``, ``_obs``, ``_exp``, ``_p``; and ``_u``, ``_v``:
    the score test's statistic and variance; ``_n0``: the own baseline's decisions in the pair's bins).
    ``rare_tail``: passed to the one-sided "greater" tests (fold, junk), see :func:`robust_own_baseline`.
    ``junk_bins``: the junk test's cells (default :data:`OWN_BASELINE_BINS`, as the other two; chip dumping passes
    :data:`JUNK_BINS`, with the price of a call)."""
    import polars as pl

    out = pairs
    specs = (("aggr", "aggr", None, "less", OWN_BASELINE_BINS),
             ("fold", "fold", pl.col("facing"), "greater", OWN_BASELINE_BINS),
             ("junk", "commit", pl.col("sbin") <= 0, "greater", tuple(junk_bins)))
    for name, y, where, side, bins in specs:
        t = robust_own_baseline(dec, y, where=where, bins=bins, side=side, alpha=alpha,
                                rare_tail=rare_tail if side == "greater" else "poisson")
        out = out.drop([c for c in (f"{name}_n", f"{name}_obs", f"{name}_exp", f"{name}_p", f"{name}_u", f"{name}_v",
                                    f"{name}_n0") if c in out.columns])
        out = out.join(t.select("player", "opponent", pl.col("n").alias(f"{name}_n"), pl.col("observed").alias(f"{name}_obs"),
                                pl.col("expected").alias(f"{name}_exp"), pl.col("p_value").alias(f"{name}_p"),
                                pl.col("score_u").alias(f"{name}_u"), pl.col("var").alias(f"{name}_v"),
                                pl.col("n0").cast(pl.Float64).alias(f"{name}_n0")),
                       on=["player", "opponent"], how="left")
    return out


def pool_directions(t, *, side: str = "less", skew: bool = False):
    """Both directions of an ordered-pair score test (:func:`robust_own_baseline` output) pooled per unordered pair.

    Soft play is mutual: both partners spare each other, so the score
    statistics U and their variances add up (the directions rest on different
    players' decisions, hence independent): z = (±ΣU − 0.5) / sqrt(ΣVar),
    one-sided; for ``side="greater"`` the Poisson tail of the pooled count is
    the floor (rare events). Returns player (< opponent), opponent, n,
    observed, expected, p_value.

    ``skew``: the normal tail corrected for the skewness of the score (one
    Edgeworth term; needs the ``k3`` column). The score of a check where the
    player's own rate of betting is r is r / (1 - r) with probability 1 - r
    and -1 otherwise: for the spots where a player nearly always bets it is
    strongly right-skewed, so with few decisions the normal tail of their sum
    is far too thin and a pair that met in a handful of hands gets a p-value
    it has not earned. The one-term Edgeworth expansion (Hall, *The Bootstrap
    and Edgeworth Expansion*, 1992, ch. 2) P(Z > z) = 1 - Phi(z) + gamma / 6
    (z^2 - 1) phi(z), with gamma = k3 / Var^(3/2) the standardised third
    cumulant summed over both directions, is used only where it makes the
    tail heavier (the correction never makes a p-value smaller). Adds the
    columns ``z`` and ``skew``.
    """
    import polars as pl

    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "n": pl.Float64, "observed": pl.Float64,
            "expected": pl.Float64, "p_value": pl.Float64}
    if skew:
        cols |= {"z": pl.Float64, "skew": pl.Float64}
    if t.is_empty():
        return pl.DataFrame(schema=cols)
    lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
    g = t.group_by(lo.alias("player"), hi.alias("opponent")).agg(
        pl.col("n", "observed", "expected").cast(pl.Float64).sum(), U=pl.col("score_u").sum(), V=pl.col("var").sum(),
        *([pl.col("k3").sum().alias("K3")] if skew else []))
    sign = -1.0 if side == "less" else 1.0
    v = np.maximum(g["V"].to_numpy(), 1e-9)
    z = (sign * g["U"].to_numpy() - 0.5) / np.sqrt(v)
    p = _st.norm.sf(z)
    extra = {}
    if skew:
        gamma = -sign * g["K3"].to_numpy() / v**1.5
        p = np.maximum(p, np.minimum(1.0, p + gamma / 6.0 * (z**2 - 1.0) * _st.norm.pdf(z)))
        extra = {"z": pl.Series(z), "skew": pl.Series(gamma)}
    if side == "greater":
        p = np.maximum(p, _st.poisson.sf(g["observed"].to_numpy() - 1, np.maximum(g["expected"].to_numpy(), 1e-9)))
    return g.with_columns(p_value=pl.Series(np.clip(p, _TINY, 1.0)), **extra).select(list(cols))


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


def own_rates_per_decision(dec, y: str, *, where=None, bins: tuple[str, ...] = OWN_BASELINE_BINS,
                           side: str = "less", alpha: float = 0.01, max_rate: float = 1 - 1e-6, also_out=None,
                           posterior: bool = False):
    """Each decision of ``dec`` (filtered by ``where``) with the acting player's own rate ``r`` of ``y`` in its bin.

    The rate is the one :func:`robust_own_baseline`'s second pass uses for the
    pair's expected count: the player's shrunk rate (beta prior per bin) from
    the decisions against everyone else, with the first pass's outlying
    opponents (and ``also_out``) left out of the baseline. Returns the
    decision columns with ``_y`` (0/1) and ``r`` added, for tests that need the
    decisions themselves (e.g. :func:`hand_passivity_test`).

    ``posterior``: also the rate's Beta posterior, ``ra`` = prior a + k0 and ``rb`` = prior b + n0 - k0 (``k0`` of
    ``n0`` decisions against everyone else in the bin; ``r`` is its mean), for tests that carry the baseline's uncertainty
    (:func:`hand_passivity_predictive`).
    """
    import polars as pl

    d = dec.filter(pl.col("sbin").is_not_null())
    if where is not None:
        d = d.filter(where)
    if d.is_empty():
        return d.with_columns(_y=pl.lit(0, pl.Int64), r=pl.lit(None, pl.Float64))
    bins = list(bins)
    d = d.with_columns(pl.col(y).cast(pl.Int64).alias("_y"))
    # the counts, priors and first-pass outliers of robust_own_baseline's test on the same selection
    _, pair, me, pri, out = _baseline_first_pass(dec, y, where, tuple(bins), alpha, max_rate)
    out = out.select("player", "opponent")
    if also_out is not None and not also_out.is_empty():
        out = pl.concat([out, also_out.select("player", "opponent")]).unique(["player", "opponent"])
    out = out.with_columns(_o=pl.lit(True))
    pair = pair.join(out, on=["player", "opponent"], how="left").with_columns(pl.col("_o").fill_null(False))
    removed = pair.filter(pl.col("_o")).group_by(["player", *bins]).agg(rn=pl.col("n").sum(), rk=pl.col("k").sum())
    clean = me.join(removed, on=["player", *bins], how="left").with_columns(
        N=pl.col("N") - pl.col("rn").fill_null(0), K=pl.col("K") - pl.col("rk").fill_null(0)).drop("rn", "rk")
    t = pair.join(clean, on=["player", *bins]).join(pri, on=bins).with_columns(
        n0=(pl.col("N") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("n"))).clip(0),
        k0=(pl.col("K") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("k"))).clip(0))
    t = t.select("player", "opponent", *bins,
                 r=((pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb"))).clip(1e-6, max_rate),
                 *([(pl.col("k0") + pl.col("pa")).cast(pl.Float64).alias("ra"),
                    (pl.col("n0") - pl.col("k0") + pl.col("pb")).cast(pl.Float64).alias("rb"),
                    pl.col("k0").cast(pl.Float64), pl.col("n0").cast(pl.Float64)] if posterior else []))
    return d.join(t, on=["player", "opponent", *bins], how="left")


def hand_passivity_test(rated, *, max_weight: float = 10.0, directed: bool = False):
    """Per unordered pair, a test of whole hands played passively between them (sparse soft play).

    ``rated``: decisions from :func:`own_rates_per_decision` where the only
    choice is to bet or check at the opponent (``_y`` = 1 for a bet, own rate
    ``r``). A pair that colludes in a fraction e of its hands checks *every*
    such spot in those hands and plays normally in the rest. Under the null
    each decision follows the player's own rate independently, so hand h is
    passive (no bet by either) with probability pi_h = prod (1 - r_i). The
    locally most powerful statistic for the mixture alternative
    (1 - e) * null + e * "all checks" counts the passive hands weighted by their
    surprise; here the bounded weight w_h = min(-ln pi_h, ``max_weight``) (the
    log-likelihood ratio of a hand that a fully passive partner would have
    played so, capped so that one improbable hand cannot decide the test),
    S = sum 1[passive_h] w_h against its null mean sum pi_h w_h and variance
    sum pi_h (1 - pi_h) w_h^2 (``hp_z``); the p-value is the Chernoff
    bound min over theta of exp(K(theta) - theta S), K the exact cumulant
    generating function of S under the null: valid for pairs that met in one
    hand or in hundreds (a normal or Edgeworth tail is far too thin when one
    improbable hand carries the sum), and conservative. This is the hand-level reading of
    the per-decision comparison of Mazrooei, Archibald & Bowling (AAAI 2013):
    the per-decision score test spreads a sparse deviation over every hand the
    pair played, while this one pools the decisions of each hand first (a
    mixture test in the spirit of higher criticism, Donoho & Jin, Ann. Stat.
    2004). Returns player (<), opponent, hands, passive, hp_observed (S),
    hp_expected, hp_z, hp_p_value.

    ``directed``: the same test on each player's own decisions only (a hand is
    passive for the ordered pair (player, opponent) when the player never bet
    at the opponent), per ordered pair: whether each side of a pair shows it.
    """
    import polars as pl

    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "hands": pl.Float64, "passive": pl.Float64,
            "hp_observed": pl.Float64, "hp_expected": pl.Float64, "hp_z": pl.Float64, "hp_p_value": pl.Float64}
    if rated.is_empty():
        return pl.DataFrame(schema=cols)
    if directed:
        lo, hi = pl.col("player"), pl.col("opponent")
    else:
        lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
    h = rated.filter(pl.col("r").is_not_null()).group_by("hand_id", lo.alias("player"), hi.alias("opponent")).agg(
        bets=pl.col("_y").sum(), logpi=(1 - pl.col("r")).log().sum())
    h = h.with_columns(pi=pl.col("logpi").exp(), w=(-pl.col("logpi")).clip(0, max_weight),
                       x=(pl.col("bets") == 0).cast(pl.Float64))
    g = h.group_by("player", "opponent").agg(
        hands=pl.len().cast(pl.Float64), passive=pl.col("x").sum(), hp_observed=(pl.col("x") * pl.col("w")).sum(),
        hp_expected=(pl.col("pi") * pl.col("w")).sum(),
        V=(pl.col("pi") * (1 - pl.col("pi")) * pl.col("w") ** 2).sum(),
        K3=(pl.col("pi") * (1 - pl.col("pi")) * (1 - 2 * pl.col("pi")) * pl.col("w") ** 3).sum())
    v = np.maximum(g["V"].to_numpy(), 1e-9)
    z = (g["hp_observed"].to_numpy() - g["hp_expected"].to_numpy()) / np.sqrt(v)
    # Chernoff bound P(S >= s) <= min_theta exp(K(theta) - theta s), K the cumulant generating function of S (a sum of
    # independent weighted Bernoullis), minimised over a fixed grid of theta: valid for any number of hands, exact
    # in the limit for one hand (the bound tends to pi_h), conservative by a modest factor for many
    gid = h.join(g.select("player", "opponent").with_row_index("_g"), on=["player", "opponent"])
    p = _chernoff_tail(gid["_g"].to_numpy().astype(np.int64), gid["pi"].to_numpy(), gid["w"].to_numpy(),
                       g["hp_observed"].to_numpy(), len(g))
    return g.with_columns(hp_z=pl.Series(z), hp_p_value=pl.Series(np.clip(p, _TINY, 1.0))).select(list(cols))


def _chernoff_tail(idx, pi, w, s, groups: int) -> np.ndarray:
    """min over a fixed grid of theta of exp(K(theta) - theta s) per group, K the cumulant generating function of a sum of
    independent Bernoulli(pi) indicators weighted w (one row per indicator, ``idx`` its group): the bound of
    :func:`hand_passivity_test`.

    K(theta) - theta s is convex in theta (a cumulant generating function minus a line), so along the increasing grid
    it falls to its minimum and then only rises, each step by at least the previous rise (the steps grow): a group
    leaves the loop at the first grid point where it rose (from 0 at theta = 0) by more than rounding, and its rows are
    dropped from the remaining, costly log-sum-exp passes (most honest pairs rise from the start). Each remaining
    group's sum runs over its rows in the same order, so its values, and every group's minimum, are the full grid's."""
    pi = np.clip(pi, 1e-300, 1.0)
    best = np.zeros(groups)
    l1 = np.log1p(-np.minimum(pi, 1 - 1e-15))
    lp = np.log(pi)
    prev = np.zeros(groups)  # K(0) - 0 s
    active = np.ones(groups, dtype=bool)
    for theta in np.geomspace(1e-3, 50.0, 64):
        if not active.any():
            break
        k = np.bincount(idx, weights=np.logaddexp(l1, lp + theta * w), minlength=groups)
        f = k - theta * s
        best = np.where(active, np.minimum(best, f), best)
        # risen by more than the sums' rounding (every term of k is >= 0, so its error is a tiny share of k): by
        # convexity every later point is higher still, and the minimum is already the full grid's, bit for bit
        rose = active & (f - prev > 1e-9 * (k + theta * np.abs(s)))
        prev = f
        if rose.any():
            active &= ~rose
            keep = active[idx]
            if np.count_nonzero(keep) < 0.875 * len(idx):
                # drop the finished groups' rows (order kept) once they are an eighth of what is computed
                idx, l1, lp, w = idx[keep], l1[keep], lp[keep], w[keep]
    return np.exp(best)


def hand_passivity_predictive(rated, *, bins: tuple[str, ...] = OWN_BASELINE_BINS,
                              max_weight: float = 10.0, draws: int = 64, random_state: int = 0,
                              max_rate: float = 1 - 1e-6, prior_strength: float | None = None):
    """:func:`hand_passivity_test` with the own rates' uncertainty carried: a predictive p-value per unordered pair.

    ``rated``: decisions from :func:`own_rates_per_decision` with ``posterior=True`` (the plug-in rate ``r`` and its
    Beta posterior ``ra``, ``rb`` from the player's k0 of n0 decisions against everyone else in the bin, with the
    empirical-Bayes prior of the bin). The statistic is the hand test's, fixed by the plug-in rates: S = sum over the
    pair's hands of 1[neither bet] w_h, w_h = min(-ln pi_h, ``max_weight``). Its null distribution is taken under the
    rates the baseline allows rather than the plug-in ones: each (player, opponent, bin) rate is drawn from its
    posterior, the hands are independent given the rates, and the p-value is the average over ``draws`` draws of the
    Chernoff bound of S's tail given the rates: an upper bound of the predictive tail (Box, J. R. Stat. Soc. A 1980)
    whose posterior rests on the decisions against others only, never on the pair's own, so no decision is used twice
    (Bayarri & Berger, JASA 2000); the beta-binomial model of the own-baseline tests, here per hand.
    Where the baseline is deep the posterior is narrow and the p-value that of :func:`hand_passivity_test`; where
    it is thin (a player who plays mostly the partner) the draws include every rate the few decisions against
    others allow, and a pair whose passivity could be that player's style gets the heavier tail it deserves.
    ``prior_strength``: the bin's prior kept at its mean with a + b at most this (None: as fitted), so that the
    player's own few decisions, not the population's spread, say which rates are possible. Seeded
    (``random_state``); the draws are taken ``block`` at a time (memory hands x 32). Returns player (<), opponent,
    hp_pred_p_value.
    """
    import polars as pl

    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "hp_pred_p_value": pl.Float64}
    d = rated.filter(pl.col("r").is_not_null() & pl.col("ra").is_not_null())
    if d.is_empty():
        return pl.DataFrame(schema=cols)
    lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
    cells = d.select("player", "opponent", *bins, "ra", "rb", "k0", "n0").unique(["player", "opponent", *bins],
                                                                                maintain_order=True)
    if prior_strength is not None:
        # the bin's prior kept at its mean but at most this strength (a + b): the rates a player's few decisions
        # against others allow, not the ones the population's spread allows
        a0, b0 = pl.col("ra") - pl.col("k0"), pl.col("rb") - (pl.col("n0") - pl.col("k0"))
        f = (prior_strength / (a0 + b0)).clip(upper_bound=1.0)
        cells = cells.with_columns(ra=pl.col("k0") + a0 * f, rb=pl.col("n0") - pl.col("k0") + b0 * f)
    cells = cells.with_row_index("_c")
    d = d.join(cells.select("player", "opponent", *bins, "_c"), on=["player", "opponent", *bins])
    h = d.group_by("hand_id", lo.alias("pa_"), hi.alias("pb_")).agg(
        bets=pl.col("_y").sum(), logpi=(1 - pl.col("r")).log().sum())
    h = h.with_columns(w=(-pl.col("logpi")).clip(0, max_weight), x=(pl.col("bets") == 0).cast(pl.Float64))
    g = h.group_by("pa_", "pb_").agg(s=(pl.col("x") * pl.col("w")).sum()).sort("pa_", "pb_").with_row_index("_g")
    h = h.join(g.select("pa_", "pb_", "_g"), on=["pa_", "pb_"]).sort("_g", "hand_id").with_row_index("_h")
    hc = d.group_by("hand_id", lo.alias("pa_"), hi.alias("pb_"), "_c").agg(c=pl.len()).join(
        h.select("hand_id", "pa_", "pb_", "_h"), on=["hand_id", "pa_", "pb_"])
    rng = np.random.default_rng(random_state)
    theta = rng.beta(cells["ra"].to_numpy()[:, None], cells["rb"].to_numpy()[:, None], size=(len(cells), draws))
    l1m = np.log1p(-np.clip(theta, 1e-6, max_rate))  # (cells, draws)
    hi_, ci_, cnt = hc["_h"].to_numpy(), hc["_c"].to_numpy(), hc["c"].to_numpy().astype(float)
    nh, ng = len(h), len(g)
    gidx = h["_g"].to_numpy().astype(np.int64)
    total = np.zeros(ng)
    block = 32  # draws at a time: memory (hands x block), not (hands x draws)
    for m0 in range(0, draws, block):
        ms = range(m0, min(m0 + block, draws))
        # log pi_h per draw: sum over the hand's decisions of ln(1 - theta) (draws x hands, flattened draw-major)
        lpi = np.stack([np.bincount(hi_, weights=cnt * l1m[ci_, m], minlength=nh) for m in ms])
        idx = (gidx[None, :] + ng * np.arange(len(ms))[:, None]).ravel()
        w = np.tile(h["w"].to_numpy(), len(ms))
        s = np.tile(g["s"].to_numpy(), len(ms))
        total += _chernoff_tail(idx, np.exp(lpi.ravel()), w, s, ng * len(ms)).reshape(len(ms), ng).sum(axis=0)
    p = np.clip(total / draws, _TINY, 1.0)
    return g.select(pl.col("pa_").alias("player"), pl.col("pb_").alias("opponent"),
                    hp_pred_p_value=pl.Series(p))


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
