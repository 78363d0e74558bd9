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
