"""The null of a pair's coincidences: a marked Poisson count per event (closeness of each coincidence, and
whether the two runs last as many hands), with its exact tail."""

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
