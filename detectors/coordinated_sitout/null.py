"""The null of a pair's coincidences: a marked Poisson count per event (closeness of each coincidence, and
whether the two sit-outs end together: in seconds to the platform's sit_in, or in hands sat out), with its exact
tail."""

from __future__ import annotations

import numpy as np
from scipy import special as _sp


def _length_mark(len_a: np.ndarray, len_b: np.ndarray, population: np.ndarray) -> np.ndarray:
    """How unusual it is that two coinciding sit-outs last as long as each other: under
    independence the partner's run length (hands sat out) is a draw from the
    population's run lengths, so ``P(|L - L_a| <= |L_b - L_a|)`` is a p-value (discrete,
    hence conservative); the larger of the two directions is kept (still valid). A
    length unknown (0: the hands show no sitting out) gives 1, no evidence."""
    pop = np.asarray(population, dtype=float)
    pop = np.sort(pop[pop > 0])
    la, lb = np.asarray(len_a, dtype=float), np.asarray(len_b, dtype=float)
    out = np.ones(la.shape)
    if pop.size == 0:
        return out
    d = np.abs(la - lb)

    def within(center: np.ndarray) -> np.ndarray:
        return (np.searchsorted(pop, center + d, side="right") - np.searchsorted(pop, center - d, side="left")) / pop.size

    ok = (la > 0) & (lb > 0)
    out[ok] = np.maximum(within(la), within(lb))[ok]
    return np.clip(out, 1.0 / (pop.size + 1), 1.0)


def _marked_poisson_sf(x: np.ndarray, s: np.ndarray, lam: np.ndarray, k_max: int = 200, marks: int = 1) -> np.ndarray:
    """P(S >= s) for S = sum of -log(U_i) over a Poisson(lam) number of
    coincidences with independent uniform closeness U_i (gap over window): the
    null of two players sitting out independently at their own rates, where
    coincidences fall as a Poisson process and, given one, its gap is uniform
    within the window. Given K = k, S ~ Gamma(k, 1), so
    P(S >= s) = sum_k Pois(k; lam) Gamma_sf(s; k) (s > 0), and 1 - exp(-lam) when
    all coincidences sit at the window's edge (s = 0, x >= 1); 1 with none.
    Counts and closeness both count: three sit-outs 1 s apart in a window of 30 s
    are far rarer than one. With ``marks`` independent uniform marks per
    coincidence (closeness, and run length where starts are known only to the
    hand) S given K = k is Gamma(marks * k, 1)."""
    x = np.asarray(x, dtype=float)
    s = np.asarray(s, dtype=float)
    lam = np.maximum(np.asarray(lam, dtype=float), 1e-12)
    ks = np.arange(1, k_max + 1, dtype=float)
    logpois = ks[None, :] * np.log(lam)[:, None] - lam[:, None] - _sp.gammaln(ks + 1)[None, :]
    gsf = _sp.gammaincc(marks * ks[None, :], np.maximum(s, 0.0)[:, None])
    with np.errstate(divide="ignore"):
        p = np.exp(logpois + np.log(np.maximum(gsf, 1e-300))).sum(axis=1)
    p = np.where(x < 1, 1.0, np.clip(p, 1e-300, 1.0))
    return p


def _return_mark(t_a: np.ndarray, dur_a: np.ndarray, t_b: np.ndarray, dur_b: np.ndarray, population: np.ndarray,
                 res_s: float = 1.0) -> np.ndarray:
    """How unusual it is that two coinciding platform sit-outs end together: under independence the partner's
    sit-out length (seconds from its ``sit_out`` to its ``sit_in``) is a draw ``D`` from the population's platform
    sit-out lengths, so with the partner starting at ``t_b`` and the other back at ``r_a = t_a + dur_a``,
    ``P(|t_b + D - r_a| <= |r_b - r_a|)`` is a p-value (the gap floored at ``res_s``, the events' resolution:
    conservative); the larger of the two directions is kept (still valid), as :func:`_length_mark` does with
    run lengths in hands, which this mark replaces where both lengths in seconds are known. A length unknown
    (NaN: no ``sit_in``, or a sit-out seen only in the hands) gives 1, no evidence.

    Parameters
    ----------
    t_a, t_b : the two starts (epoch seconds). dur_a, dur_b : their lengths in seconds (NaN unknown).
    population : every platform sit-out length of the population (seconds; NaN ignored). res_s : as above.

    Returns
    -------
    The mark per coincidence, in [1 / (n + 1), 1] for a population of ``n`` lengths."""
    pop = np.asarray(population, dtype=float)
    pop = np.sort(pop[np.isfinite(pop)])
    ta, tb = np.asarray(t_a, dtype=float), np.asarray(t_b, dtype=float)
    da, db = np.asarray(dur_a, dtype=float), np.asarray(dur_b, dtype=float)
    out = np.ones(ta.shape)
    if pop.size == 0:
        return out
    ok = np.isfinite(da) & np.isfinite(db)
    gap = np.maximum(np.abs((ta + da) - (tb + db)), res_s)

    def within(center: np.ndarray) -> np.ndarray:
        return (np.searchsorted(pop, center + gap, side="right")
                - np.searchsorted(pop, center - gap, side="left")) / pop.size

    with np.errstate(invalid="ignore"):
        both = np.maximum(within(ta + da - tb), within(tb + db - ta))
    out[ok] = both[ok]
    return np.clip(out, 1.0 / (pop.size + 1), 1.0)


def _end_mark(len_a: np.ndarray, len_b: np.ndarray, runs: np.ndarray, t_a: np.ndarray, dur_a: np.ndarray,
              t_b: np.ndarray, dur_b: np.ndarray, durations: np.ndarray, res_s: float = 1.0) -> np.ndarray:
    """The second mark of a coincidence, whether the two sit-outs end together: :func:`_return_mark` (seconds,
    the platform's ``sit_in``) where both lengths in seconds are known, :func:`_length_mark` (hands sat out)
    elsewhere."""
    secs = np.isfinite(np.asarray(dur_a, dtype=float)) & np.isfinite(np.asarray(dur_b, dtype=float))
    return np.where(secs, _return_mark(t_a, dur_a, t_b, dur_b, durations, res_s), _length_mark(len_a, len_b, runs))


def own_closeness(gap: np.ndarray, res: np.ndarray, win: np.ndarray, stratum: np.ndarray,
                  prior: float = 10.0) -> np.ndarray:
    """The closeness mark of each coincidence against the population's own coincidences of its stratum: under the
    uniform null a gap at or below the resolution ``res`` has probability ``res / win``; two starts seen at one
    table on the same hand, or logged by the platform within a second across tables, meet far more often than that
    (a deal's quantisation, a client's). Per stratum the share of coincidences at the resolution, ``f``, is
    estimated from the population's coincidences (shrunk towards ``res / win`` with ``prior`` pseudo-counts, and
    never below it); the mark is the distribution function of a gap under "at the resolution with probability
    ``f``, uniform over (res, win] otherwise": ``f`` at the resolution, ``f + (1 - f) (gap - res) / (win - res)``
    above it. Where ``f`` is ``res / win`` this is ``gap / win``, the uniform mark.

    Parameters
    ----------
    gap : each coincidence's gap in seconds. res, win : its resolution and window (the sum of the two tolerances).
    stratum : each coincidence's stratum (integer codes: one table or two, platform events or hands).
    prior : the pseudo-counts of the shrinkage towards the uniform share.

    Returns
    -------
    The mark per coincidence, in (0, 1]."""
    gap, res, win = (np.asarray(v, dtype=float) for v in (gap, res, win))
    stratum = np.asarray(stratum)
    u0 = np.clip(res / win, 0.0, 1.0)
    at_res = gap <= res
    f = u0.copy()
    for s in np.unique(stratum):
        m = stratum == s
        f[m] = np.maximum(u0[m], (at_res[m].sum() + prior * u0[m].mean()) / (m.sum() + prior))
    above = f + (1.0 - f) * np.clip(gap - res, 0.0, None) / np.maximum(win - res, 1e-9)
    return np.clip(np.where(at_res, f, above), 1e-12, 1.0)


def exact_product_sf(ps: np.ndarray, cs: np.ndarray, max_events: int = 10) -> float:
    """P(prod of the per-event p-values <= their observed product) under the exact law of the per-event marked
    Poisson p-values: in event ``e`` the p-value is 1 (no coincidence) with probability ``1 - cs[e]`` and uniform
    on (0, ``cs[e]``] otherwise (``cs[e] = 1 - exp(-lam_e)``). Summed over every set ``J`` of events that could have
    had a coincidence: ``P(J) * F_|J|(t / prod_J c)``, ``F_k`` the law of a product of ``k`` uniforms
    (``y sum_{i<k} (-log y)^i / i!``). Fisher's method, which takes every p-value as uniform on (0, 1], bounds this
    from above (the p-values are super-uniform): an event both sat out in without a coincidence costs the pair
    nothing here. One event: its own p-value. Above ``max_events`` events (``2 ** n`` sets), Fisher's method. The
    events are summed in one order (by p-value, then chance), so the result does not depend on the order given.

    Parameters
    ----------
    ps : the per-event p-values (1 where no coincidence). cs : each event's chance of any coincidence.

    Returns
    -------
    The combined p-value."""
    ps = np.clip(np.asarray(ps, dtype=float), 1e-300, 1.0)
    cs = np.clip(np.asarray(cs, dtype=float), 1e-300, 1.0)
    order = np.lexsort((cs, ps))  # one order of the events, so the sums' rounding is the same whatever order they come in
    ps, cs = ps[order], cs[order]
    n = ps.size
    log_t = float(np.log(ps).sum())
    if log_t >= 0:
        return 1.0
    if n == 1:
        return float(ps[0])
    if n > max_events:
        from scipy import stats as _st
        return float(_st.chi2.sf(-2 * log_t, 2 * n))
    masks = np.arange(1, 1 << n)
    inside = ((masks[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    log_w = np.where(inside, np.log(cs)[None, :], np.log1p(-np.minimum(cs, 1 - 1e-16))[None, :]).sum(axis=1)
    k = inside.sum(axis=1)
    log_y = log_t - np.where(inside, np.log(cs)[None, :], 0.0).sum(axis=1)
    ell = np.maximum(-log_y, 0.0)
    i = np.arange(n)[None, :]
    terms = np.where(i < k[:, None], np.exp(i * np.log(np.maximum(ell[:, None], 1e-300)) - _sp.gammaln(i + 1.0)), 0.0)
    terms[:, 0] = 1.0
    f = np.where(log_y >= 0, 1.0, np.exp(np.minimum(log_y, 0.0)) * terms.sum(axis=1))
    return float(np.clip((np.exp(log_w) * np.minimum(f, 1.0)).sum(), 1e-300, 1.0))
