"""The two-sample tests of a change point, in array form (one row per comparison): Mann-Whitney (exact
for small samples, stratified, against a band), Cochran-Mantel-Haenszel for the range, chi-square and the
G2 three-way interaction. The candidates' and the population null's moves go through the same code."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy import stats as sps

from detectors import stats as mt
from detectors.seat_handoff.ranks import u_against as _u_against



# ------------------------------------------------------------------ the tests, one implementation
# Every two-sample test of a change point (the candidates' and the simulated same-player moves'
# of the population's null) goes through these array forms, one row per comparison: the
# candidates' samples are passed as lists of arrays, the null's as prefix sums over
# account-events split at many hands at once. The same code gives both their p-values, so a
# candidate is ranked against moves put through exactly its own tests.

#: the decision classes of the timing tests (``cls`` of queries.py's timing read): a quick preflop fold, an ordinary
#: decision, a big one (a third of the stack or more); a preflop fold to a big bet is read as ``FOLD_TO_BIG`` and
#: counted with one of the first and the last by :func:`fold_to_big_class`
CLASSES = (0, 1, 2)
FOLD_TO_BIG = 3


def fold_to_big_class(log_ms: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """The decision classes with each preflop fold to a big bet (``FOLD_TO_BIG``) counted with the class whose times
    it resembles in this population: the big decisions (2) where the median of its log times is nearer theirs than
    the quick preflop folds' (0), else the quick folds. A fold to a shove is weighed like a big decision by some
    players and made at once by others; it grows common late in an event (short stacks face shoves), so counted with
    a class whose times it does not share, a late segment's class looks wider than the same player's own history.

    Parameters
    ----------
    log_ms : the decisions' log times. cls : their classes (0, 1, 2 or ``FOLD_TO_BIG``).

    Returns
    -------
    The classes, every ``FOLD_TO_BIG`` replaced by 0 or 2 (by 0 where a median cannot be taken)."""
    log_ms, cls = np.asarray(log_ms, dtype=float), np.asarray(cls)
    folds = cls == FOLD_TO_BIG
    if not folds.any():
        return cls
    med = {k: float(np.median(log_ms[cls == k])) if (cls == k).any() else float("nan") for k in (0, 2, FOLD_TO_BIG)}
    big = abs(med[FOLD_TO_BIG] - med[2]) < abs(med[FOLD_TO_BIG] - med[0])  # False where a median is missing
    return np.where(folds, 2 if big else 0, cls).astype(cls.dtype)


_EXACT_MAX = 8  # Mann-Whitney: the exact null distribution where a sample has at most this many values and no ties


def _u_cdf(m: int, n: int, k: int) -> float:
    """Exact P(U <= k) for the Mann-Whitney U of two samples of sizes m and n without ties:
    the arrangements with U = u are the coefficients of q^u in the Gaussian binomial
    coefficient [m+n choose m]_q = prod_{i<=min(m,n)} (1 - q^(n'+i)) / (1 - q^i), n' the
    larger size (Mann & Whitney 1947; Andrews, *The Theory of Partitions*, 1976, ch. 3),
    built factor by factor in exact integers (the counts outgrow 64 bits) up to q^k only:
    each factor's coefficient u depends on lower ones alone."""
    m, n = min(m, n), max(m, n)
    if k < 0:
        return 0.0
    if k >= m * n:
        return 1.0
    c = np.zeros(k + 1, dtype=object)
    c[:] = 0
    c[0] = 1
    for i in range(1, m + 1):
        for r in range(min(i, k + 1)):  # divide by (1 - q^i): running sums with stride i
            c[r::i] = np.cumsum(c[r::i])
        d = n + i  # multiply by (1 - q^(n+i)), high powers first
        if d <= k:
            c[d:] = c[d:] - c[:-d].copy()
    return int(np.sum(c)) / math.comb(m + n, m)


def _midranks(group: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks of ``value`` within each ``group`` and each group's tie term
    sum(t^3 - t) over its runs of equal values (for the Mann-Whitney variance)."""
    if group.size == 0:
        return np.zeros(0), np.zeros(0)
    df = pl.DataFrame({"g": group, "v": value})
    r = df.select(pl.col("v").rank("average").over("g")).to_series().to_numpy().astype(float)
    ties = df.group_by("g", "v").len().with_columns(t=pl.col("len").cast(pl.Float64))
    tie = ties.group_by("g").agg((pl.col("t") ** 3 - pl.col("t")).sum().alias("s"))
    out = np.zeros(int(group.max()) + 1)
    out[tie["g"].to_numpy()] = tie["s"].to_numpy()
    return r, out


def _u_sd(n1: np.ndarray, n2: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Standard deviation of Mann-Whitney U under the null, with the tie correction (``tie``: the
    pooled samples' sum of t^3 - t over runs of equal values); NaN for an empty pair."""
    n = n1 + n2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(n1 * n2 / 12.0 * ((n + 1.0) - tie / (n * (n - 1.0))))


def _mwu_p_vec(n1: np.ndarray, n2: np.ndarray, u1: np.ndarray, tie: np.ndarray, min_n: int = 5) -> np.ndarray:
    """Two-sided Mann-Whitney p for many pairs of samples at once, from the sizes, the first
    sample's U and the pooled samples' tie term (Mann & Whitney, Ann. Math. Stat. 18, 1947):
    the exact null distribution of U where the smaller sample has at most ``_EXACT_MAX``
    values and there are no ties (``_u_cdf``), otherwise the normal approximation with tie and
    continuity corrections (scipy's ``mannwhitneyu`` chooses the same way by default). NaN
    where a sample has fewer than ``min_n`` values."""
    n1, n2 = np.asarray(n1, dtype=float), np.asarray(n2, dtype=float)
    u1, tie = np.asarray(u1, dtype=float), np.asarray(tie, dtype=float)
    mu = n1 * n2 / 2.0
    u = np.maximum(u1, n1 * n2 - u1)
    s = _u_sd(n1, n2, tie)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - mu - 0.5) / s
    p = np.clip(2.0 * sps.norm.sf(z), 0.0, 1.0)
    p = np.where(s > 0, p, 1.0)
    ok = (n1 >= min_n) & (n2 >= min_n)
    exact = ok & (np.minimum(n1, n2) <= _EXACT_MAX) & (tie == 0)
    for i in np.flatnonzero(exact):  # one small count per small sample
        # P(U >= u) = P(U <= n1 n2 - u) by symmetry; two-sided: twice the smaller tail
        p[i] = min(1.0, 2.0 * _u_cdf(int(n1[i]), int(n2[i]), int(round(n1[i] * n2[i] - u[i]))))
    return np.where(ok, p, np.nan)


def _mwu_p_many(xs: list[np.ndarray], ys: list[np.ndarray], min_n: int = 5) -> np.ndarray:
    """``_mwu_p_vec`` for a list of pairs of samples (xs[i] against ys[i]; NaN values left out),
    U of the first sample counted by ``_u_against``."""
    xs = [np.asarray(x, dtype=float) for x in xs]
    ys = [np.asarray(y, dtype=float) for y in ys]
    xs, ys = [x[~np.isnan(x)] for x in xs], [y[~np.isnan(y)] for y in ys]
    if not xs:
        return np.zeros(0)
    return _mwu_p_vec(*_u_against(xs, ys), min_n=min_n)


def _fisher_classes(P: np.ndarray) -> np.ndarray:
    """Row-wise combination of the decision classes' Mann-Whitney p-values (columns; NaN:
    class not tested): one class tested, its p; several, Fisher's method (disjoint samples,
    independent tests; Fisher 1925); none, NaN."""
    ntest = (~np.isnan(P)).sum(axis=1)
    stat = -2.0 * np.nansum(np.log(np.clip(P, 1e-300, 1.0)), axis=1)
    one = np.nanmin(np.where(np.isnan(P), np.inf, P), axis=1) if P.shape[1] else np.full(P.shape[0], np.nan)
    p = np.where(ntest == 1, one, sps.chi2.sf(stat, 2 * np.maximum(ntest, 1)))
    return np.where(ntest == 0, np.nan, p)


def _strat_mwu_many(xa: list[np.ndarray], ca: list[np.ndarray], xb: list[np.ndarray], cb: list[np.ndarray],
                    min_n: int = 5) -> np.ndarray:
    """Stratified two-sample test of decision times for each row: Mann-Whitney U within each
    decision class (:data:`CLASSES`: quick preflop folds, ordinary decisions, big decisions; a class is
    tested where both samples have ``min_n`` of it), the classes combined by ``_fisher_classes``. A
    change in how often each class arises (a looser player folds less) then does not pass for
    a change in speed."""
    if not xa:
        return np.zeros(0)
    P = np.column_stack([
        _mwu_p_many([x[c == k] for x, c in zip(xa, ca)], [x[c == k] for x, c in zip(xb, cb)], min_n)
        for k in CLASSES])
    return _fisher_classes(P)


# The entry line is compared in like situations: the stack depth in big blinds (push-or-fold
# ranges widen as the stack shrinks: at most 12 big blinds or deeper), a short-handed table (at
# most ``_SHORT_MAX`` players dealt in: with fewer opponents every range widens, and the blinds
# come round more often; Sklansky & Malmuth 1999, Harrington & Robertie, *Harrington on Hold'em*
# vol. 2, 2005, on short-handed and short-stacked play) and facing a raise. Starting hands in
# bins of 10 percentiles, not 5: a stratum with one sample empty adds nothing, and a 40-hand
# segment spread over 160 strata left most of them so. The table size is what made the test
# liberal over the rest of an event from a point (the population's simulated moves run into the
# late short-handed stages): with four depths (6 / 12 / 25 bb) and no table size, p < 0.05 /
# 0.01 / 0.001 for 5.9 / 1.6 / 0.38 % of 32,075 same-player moves on six tuning populations; with
# two depths and the short-handed stratum 5.4 / 1.2 / 0.26 %, and other accounts' 40-hand
# segments are found more often (with the own-history action mix, at a same-player rate of 5 /
# 1 / 0.1 %: 44.3 / 28.5 / 12.1 -> 45.0 / 30.1 / 12.5 % of 9,190). At most 2, 3 or 4 players did
# the same there; four depths with the table size (160 strata) were as nominal and no more
# powerful; the position (blinds or not) added nothing.
_DEPTH_BB = np.array([12.0])
_SHORT_MAX = 3  # a short-handed table: at most this many players dealt in
_BINS = 10  # starting hands in bins of 10 percentiles
# starting-hand bins x depth x facing a raise x short-handed (``_with_strength``)
_N_STRATA = _BINS * (len(_DEPTH_BB) + 1) * 2 * 2


def _cmh_p_vec(a1: np.ndarray, a: np.ndarray, b1: np.ndarray, b: np.ndarray, min_n: int = 5) -> np.ndarray:
    """Cochran-Mantel-Haenszel test of many stratified 2 x 2 tables at once (rows: comparisons,
    columns: strata): ``a1`` of ``a`` events in the first sample, ``b1`` of ``b`` in the second,
    stratum by stratum. The one-degree-of-freedom statistic (sum(a1 - E))^2 / sum V with
    E and V the hypergeometric mean and variance of a1 given the stratum's margins (Cochran,
    Biometrics 10, 1954; Mantel & Haenszel, J. Natl. Cancer Inst. 22, 1959), against chi-square
    with 1 dof: a consistent shift of the rate the same way across strata. Without Mantel and
    Haenszel's continuity correction (-1/2 on |sum(a1 - E)|): with sparse strata the corrected
    test is conservative (a same player's p of exactly 1 was common; below 0.01 for 0.3 % of
    same-player splits) and dilutes a style shift it joins by Fisher's method (the continuity
    correction's conservatism: Grizzle, Am. Stat. 21, 1967). Uncorrected, it is about nominal
    on same-player segments from early in an event (p < 0.01 for 1.0 %) and, with the
    short-handed stratum (``_with_strength``), over the rest of an event from a point (1.2 % of
    the simulated same-player moves; without that stratum 1.6 %: the late, short-handed stages
    drift). Strata with one
    sample empty or no variation add nothing. NaN where the first sample has fewer than
    ``min_n`` observations or no stratum varies."""
    a1, a, b1, b = (np.asarray(x, dtype=float) for x in (a1, a, b1, b))
    n = a + b
    m1 = a1 + b1
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(n > 0, a * m1 / n, 0.0)
        v = np.where(n > 1, a * b * m1 * (n - m1) / (n * n * (n - 1.0)), 0.0)
        d = np.abs((a1 - e).sum(axis=1))
        sv = v.sum(axis=1)
        stat = np.where(sv > 0, d ** 2 / sv, 0.0)
    p = sps.chi2.sf(stat, 1)
    return np.where((a.sum(axis=1) >= min_n) & (sv > 0), p, np.nan)


def _range_p_many(sa: list[np.ndarray], ea: list[np.ndarray], sb: list[np.ndarray], eb: list[np.ndarray],
                  min_n: int = 5) -> np.ndarray:
    """Does the player enter pots with other cards after a change point? ``sa``: the stratum of
    each hand after the point (``_with_strength``: the starting hand's percentile in bins of 10,
    the stack depth, facing a raise, a short-handed table), ``ea``: its entry decision (2 raised, 1 entered without
    raising, 0 folded); ``sb``, ``eb``: the baseline's. Two lines are compared stratum by
    stratum (``_cmh_p_vec``): the entry line (entered or folded, all hands) and the raising
    line (raised or not, the hands entered), Fisher over the two (``_fisher_classes``; the
    second is conditional on the first's outcomes). A player enters, and raises, with about
    the best share of hands their looseness and aggression allow, the lines moved by position
    and situation (Sklansky & Malmuth, *Hold'em Poker for Advanced Players*, 1999; opponent
    modelling by the hands a player enters with: Billings, Davidson, Schaeffer & Szafron,
    Artif. Intell. 134, 2002): another person draws the lines elsewhere, and a device cannot
    change which cards a person plays. Conditioning on the cards dealt removes the luck of
    the deal that the plain rates (the action mix) carry: a hand far above or below a line is
    played the same by either player and adds no noise, the hands near the line decide.
    Directional: a player who enters as often with other hands shifts the rate up in some
    bins and down in others, and is not seen."""
    N = len(sa)
    if N == 0:
        return np.zeros(0)
    S = _N_STRATA

    def counts(ss: list[np.ndarray], ee: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = np.array([x.size for x in ss], dtype=np.int64)
        g = np.repeat(np.arange(N), n)
        key = g * S + np.concatenate([np.asarray(x, dtype=np.int64) for x in ss] + [np.zeros(0, np.int64)])
        en = np.concatenate([np.asarray(x, dtype=np.int64) for x in ee] + [np.zeros(0, np.int64)])
        tot = np.bincount(key, minlength=N * S).reshape(N, S).astype(float)
        ent = np.bincount(key, weights=(en >= 1).astype(float), minlength=N * S).reshape(N, S)
        rai = np.bincount(key, weights=(en == 2).astype(float), minlength=N * S).reshape(N, S)
        return tot, ent, rai
    a, a1, a2 = counts(sa, ea)
    b, b1, b2 = counts(sb, eb)
    return _range_p_counts(a, a1, a2, b, b1, b2, min_n)


def _range_p_counts(a: np.ndarray, a1: np.ndarray, a2: np.ndarray, b: np.ndarray, b1: np.ndarray, b2: np.ndarray,
                    min_n: int = 5) -> np.ndarray:
    """``_range_p_many`` from counts per stratum (rows: comparisons): hands with an entry
    decision ``a``, entered ``a1``, raised ``a2`` after the point; ``b``, ``b1``, ``b2`` the
    baseline's."""
    return _fisher_classes(np.column_stack([_cmh_p_vec(a1, a, b1, b, min_n), _cmh_p_vec(a2, a1, b2, b1, min_n)]))


def _mwu_z_many(xs: list[np.ndarray], ys: list[np.ndarray], min_n: int = 5) -> np.ndarray:
    """Signed normal score of the Mann-Whitney U of each pair (xs[i] against ys[i]; positive:
    the first sample tends larger), with the tie and continuity corrections of ``_mwu_p_vec``;
    NaN where a sample has fewer than ``min_n`` values. For one-sided tests."""
    if not xs:
        return np.zeros(0)
    n1, n2, u1, tie = (np.asarray(a, dtype=float) for a in _u_against(xs, ys))
    d = u1 - n1 * n2 / 2.0
    s = _u_sd(n1, n2, tie)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(s > 0, np.sign(d) * np.maximum(np.abs(d) - 0.5, 0.0) / s, 0.0)
    return np.where((n1 >= min_n) & (n2 >= min_n), z, np.nan)


def _medians(xs: list[np.ndarray]) -> np.ndarray:
    """Median of each array of a list at once (NaN for an empty one)."""
    n = np.array([x.size for x in xs], dtype=np.int64)
    out = np.full(len(xs), np.nan)
    if n.sum() == 0:
        return out
    df = pl.DataFrame({"g": np.repeat(np.arange(len(xs)), n), "v": np.concatenate([np.asarray(x, dtype=float) for x in xs])})
    m = df.group_by("g").agg(pl.col("v").median())
    out[m["g"].to_numpy()] = m["v"].to_numpy()
    return out


def _device_time_many(xa: list[np.ndarray], ca: list[np.ndarray], xb: list[np.ndarray], cb: list[np.ndarray],
                      log_band: float, min_n: int = 5, speed: bool = True) -> dict[str, np.ndarray]:
    """Decision timing of an after-segment (``xa``, log ms, decision classes ``ca``) against a
    baseline (``xb``, ``cb``) when the segment was played on another device: a test of the
    person, not of the machine.

    A person's decision times follow a lognormal model with a speed of their own and a
    profile over kinds of decision (van der Linden, *A lognormal model for response times on
    test items*, J. Educ. Behav. Stat. 31, 2006: log T = item intensity - person speed +
    noise of a person-specific spread). A device (a phone's touch screen, a desktop's mouse)
    rescales the time the person takes, i.e. shifts every log time by about one constant;
    another person brings their own profile (how much quicker their easy preflop folds are,
    how much longer their big decisions take, relative to their ordinary ones) and their own
    spread, and a speed of their own that may lie beyond what a device does. Three parts,
    each about uniform for the same person on another device:

    * profile: the common shift (the class medians' differences, weighted by the classes'
      effective sizes) is removed from the after-segment, then Mann-Whitney per class, Fisher
      over the classes (NaN with fewer than two classes tested: one class fits the shift
      exactly);
    * spread: Mann-Whitney per class on absolute deviations from each sample's own class
      median (a rank test for dispersion in the manner of Fligner & Killeen, JASA 71, 1976),
      Fisher over the classes;
    * speed beyond a device: the shift is tested against a band of +-``log_band`` rather
      than against zero (an interval null hypothesis, Hodges & Lehmann, JRSS B 16, 1954):
      one-sided Mann-Whitney of the segment moved by the band's edge in each direction,
      Stouffer over classes, the two directions Bonferroni-corrected.

    The three are combined by Fisher's method (without ``speed``: profile and spread only, the
    shift judged elsewhere). Returns ``p`` and its parts (``p_profile``, ``p_spread``,
    ``p_speed``) and the estimated common shift ``shift``."""
    N = len(xa)
    out = {k: np.full(N, np.nan) for k in ("p", "p_profile", "p_spread", "p_speed", "shift")}
    if N == 0:
        return out
    A = [[np.asarray(x, dtype=float)[np.asarray(c) == k] for x, c in zip(xa, ca)] for k in CLASSES]
    # the baselines sorted once: the profile's and the speed's counts read them as they are (``_u_against``)
    B = [[np.sort(np.asarray(x, dtype=float)[np.asarray(c) == k]) for x, c in zip(xb, cb)] for k in CLASSES]
    nk = len(CLASSES)
    ma = np.column_stack([_medians(A[k]) for k in range(nk)])  # (N, classes)
    mb = np.column_stack([_medians(B[k]) for k in range(nk)])
    na = np.array([[a.size for a in A[k]] for k in range(nk)]).T.astype(float)
    nb = np.array([[b.size for b in B[k]] for k in range(nk)]).T.astype(float)
    ok = (na >= min_n) & (nb >= min_n)
    w = np.where(ok, _eff_n(na, nb), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(w.sum(axis=1) > 0, np.nansum(np.where(ok, w * (ma - mb), 0.0), axis=1) / w.sum(axis=1), np.nan)
    sh = np.nan_to_num(shift)
    prof = np.column_stack([_mwu_p_many([a - s for a, s in zip(A[k], sh)], B[k], min_n) for k in range(nk)])
    p_profile = np.where(ok.sum(axis=1) >= 2, _fisher_classes(prof), np.nan)
    spread = np.column_stack([
        _mwu_p_many([np.abs(a - m) for a, m in zip(A[k], np.nan_to_num(ma[:, k]))],
                    [np.abs(b - m) for b, m in zip(B[k], np.nan_to_num(mb[:, k]))], min_n) for k in range(nk)])
    p_spread = _fisher_classes(spread)
    zs = np.column_stack([_mwu_z_many([a - log_band for a in A[k]], B[k], min_n) for k in range(nk)])
    zf = np.column_stack([_mwu_z_many([a + log_band for a in A[k]], B[k], min_n) for k in range(nk)])
    nt = (~np.isnan(zs)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        zs_c = np.nansum(zs, axis=1) / np.sqrt(nt)
        zf_c = np.nansum(zf, axis=1) / np.sqrt(nt)
    p_speed = np.where(nt > 0, np.minimum(1.0, 2.0 * np.minimum(sps.norm.sf(zs_c), sps.norm.cdf(zf_c))), np.nan)
    parts = np.column_stack([p_profile, p_spread] + ([p_speed] if speed else []))
    p = mt.fisher_combine(np.asarray(parts, dtype=float), untested=1.0)
    out.update(p=np.where(np.isnan(parts).all(axis=1), np.nan, p), p_profile=p_profile, p_spread=p_spread,
               p_speed=p_speed, shift=shift)
    return out


def _chi2_stat_vec(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson chi-square homogeneity statistics of many 2 x k tables (rows a and b, shape (N, k)) at
    once, columns with no counts in either row left out (Pearson 1900). Returns (X2, dof), both 0 where
    fewer than two columns are left or a row is empty (no test)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    t = np.stack([a, b], axis=1).astype(float)  # (N, 2, k)
    col = t.sum(axis=1)
    row = t.sum(axis=2)
    tot = row.sum(axis=1)
    used = col > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        e = row[:, :, None] * col[:, None, :] / tot[:, None, None]
        x2 = np.where(used[:, None, :], (t - e) ** 2 / np.where(e > 0, e, 1.0), 0.0).sum(axis=(1, 2))
    dof = used.sum(axis=1) - 1
    ok = (dof >= 1) & (row > 0).all(axis=1)
    return np.where(ok, x2, 0.0), np.where(ok, dof, 0).astype(np.int64)


def _chi2_p_vec(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson chi-square homogeneity p of many 2 x k tables (rows a and b, shape (N, k)) at
    once (:func:`_chi2_stat_vec`); NaN where fewer than two columns are left or a row is empty."""
    x2, dof = _chi2_stat_vec(a, b)
    return np.where(dof >= 1, sps.chi2.sf(x2, np.maximum(dof, 1)), np.nan)


def _g2_interaction_vec(T: np.ndarray, iters: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Likelihood-ratio G2 of the three-way interaction in many who x period x action tables
    (shape (N, 2, 2, k); who: the account / the rest of the field; period: before / after the
    change point): does the account's play change more than the field's does as the event
    moves on (blinds up, stacks short)? The no-three-way-interaction model is fitted by
    iterative proportional fitting (Deming & Stephan 1940; Bishop, Fienberg & Holland,
    *Discrete Multivariate Analysis*, 1975, ch. 3), action columns with no counts left out;
    dof = (actions used - 1). Returns (G2, dof), both 0 where a table has fewer than two
    actions or an empty who x period cell (no test; ``_g2_p``)."""
    T = np.asarray(T, dtype=float)
    used = T.sum(axis=(1, 2)) > 0  # (N, k)
    E = np.broadcast_to(used[:, None, None, :], T.shape).astype(float).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(iters):
            E *= (T.sum(axis=3) / np.maximum(E.sum(axis=3), 1e-300))[:, :, :, None]
            E *= (T.sum(axis=2) / np.maximum(E.sum(axis=2), 1e-300))[:, :, None, :]
            E *= (T.sum(axis=1) / np.maximum(E.sum(axis=1), 1e-300))[:, None, :, :]
        g2 = 2.0 * np.where(T > 0, T * np.log(np.where(T > 0, T, 1.0) / np.where(E > 0, E, 1.0)), 0.0).sum(axis=(1, 2, 3))
    dof = used.sum(axis=1) - 1
    ok = (dof >= 1) & ~(T.sum(axis=3) == 0).any(axis=(1, 2))
    return np.where(ok, np.maximum(g2, 0.0), 0.0), np.where(ok, dof, 0).astype(np.int64)


def _g2_p(g2: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """Chi-square tail of G2 statistics (summed over independent strata, dof added); NaN
    where there are no degrees of freedom."""
    g2, dof = np.asarray(g2, dtype=float), np.asarray(dof)
    return np.where(dof > 0, sps.chi2.sf(g2, np.maximum(dof, 1)), np.nan)


def _eff_n(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Effective size a*b/(a+b) of a two-sample comparison (the factor the variance of a
    difference of means scales with); 0 where a sample is empty."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((a > 0) & (b > 0), a * b / (a + b), 0.0)


def _prefix(bin_idx: np.ndarray, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """Cumulative sums over a flat array of bins (an account-event's bins are contiguous):
    the sum up to bin j of its event is cs[j] - cs[first bin of the event - 1]."""
    return np.cumsum(np.bincount(bin_idx, weights=weights, minlength=n_bins))


def _own_timing(hdec: pl.DataFrame | None, tournament: int, cp_time, base_dev: int | None) -> tuple:
    """Timing after a change point against the account's own decisions under its other devices (``base_dev``: the
    code of the device of the login, None when the login kept it: every other decision), class by class: the log
    times and classes after the point in ``tournament`` (its code) and those of the baseline, and the baseline's size.
    ``hdec``: the account's decision times with the tournament and the device as codes (``tc``, ``dc``; -1 for none:
    :class:`~detectors.seat_handoff.frames.Codes`)."""
    if hdec is None or not hdec.height:
        empty_t, empty_c = np.array([], dtype=float), np.array([], dtype=np.int64)
        return empty_t, empty_c, empty_t, empty_c, 0
    # the columns as arrays (no copy where a column has no null and one chunk), compared by NumPy
    tc, started, dev, lm, cl = (hdec[c].to_numpy() for c in ("tc", "started_at", "dc", "log_ms", "cls"))
    same_event = tc == tournament  # (tc has no null: the queries code none as -1)
    after_t = started >= np.datetime64(cp_time, "us")
    a_mask = same_event & after_t
    b_mask = ~a_mask & ((dev != base_dev) if base_dev is not None else np.ones(hdec.height, bool))
    return lm[a_mask], cl[a_mask], lm[b_mask], cl[b_mask], int(b_mask.sum())
