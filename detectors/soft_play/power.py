"""Each tested pair's power at the family's level: its weight in soft play's weighted Benjamini-Hochberg step.

A pair's p-value is the weighted-Bonferroni combination of its main, raise, fold and whole-hand tests
(:meth:`detectors.soft_play.SoftPlayDetector._combined_p`); the main test carries the heavy pairs' evidence, the
hand test the thin pairs' (a few heads-up hands checked through). :func:`hand_moments` gives the hand test's null
moments per pair from its per-hand sums (no outcome read: each hand's probability of no bet under the own rates), and
:func:`pair_power` each pair's power to show a material deficit at alpha / m by the main test alone
(``tests="main"``) or by the better of the main and the hand test (``tests="main_hand"``).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats as _st

from detectors import stats


def hand_moments(h: pl.DataFrame, *, max_weight: float = 10.0) -> pl.DataFrame:
    """The whole-hand test's null moments per pair from its per-hand sums.

    Parameters
    ----------
    h : per hand and pair, ``bets`` and ``logpi`` (:func:`detectors.stats.hand_passivity_sums`' columns).
    max_weight : the test's surprise cap (w_h = min(-log pi_h, max_weight)).

    Returns
    -------
    ``player``, ``opponent``, ``hp_var`` (the statistic's null variance, sum pi_h (1 - pi_h) w_h^2) and
    ``hp_logpi`` (sum of log pi_h: the log-probability under the null that every hand of the pair is passive, the
    smallest p-value the test can give) and ``hp_wsum`` (sum w_h: the statistic when every hand is passive). None
    reads whether a hand was passive (``bets``).
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "hp_var": pl.Float64, "hp_logpi": pl.Float64,
            "hp_wsum": pl.Float64}
    if h.is_empty():
        return pl.DataFrame(schema=cols)
    pi, w = pl.col("logpi").exp(), (-pl.col("logpi")).clip(0, max_weight)
    return h.group_by("player", "opponent").agg(
        hp_var=(pi * (1 - pi) * w ** 2).sum().cast(pl.Float64), hp_logpi=pl.col("logpi").sum().cast(pl.Float64),
        hp_wsum=w.sum().cast(pl.Float64))


def hand_power(expected, var, ratio: float, level: float) -> np.ndarray:
    """Per pair, the power of the whole-hand test to show a material excess of passive hands at ``level``.

    Parameters
    ----------
    expected, var : array-like of float
        the test statistic's null mean (``hp_expected``) and variance (``hp_var``); NaN: no hand test (power 0).
    ratio : float
        the flag rule's material deficit: the observed statistic at least expected / ``ratio``.
    level : float
        the one-sided level (alpha / m).

    Returns
    -------
    numpy.ndarray: Phi((1 / ratio - 1) E / sqrt(V) - z), z the normal quantile of 1 - ``level``: the normal
    approximation to the shifted statistic, its null variance kept (as :func:`detectors.stats.deficit_power`).
    """
    e = np.clip(np.nan_to_num(np.asarray(expected, dtype=float), nan=0.0), 0.0, None)
    v = np.nan_to_num(np.asarray(var, dtype=float), nan=0.0)
    z = _st.norm.isf(min(max(level, 1e-300), 0.5))
    shift = np.where(v > 0, (1.0 / ratio - 1.0) * e / np.sqrt(np.maximum(v, 1e-300)), -np.inf)
    return _st.norm.cdf(shift - z)


def pair_power(u: pl.DataFrame, tested: np.ndarray, *, main: str, ratio: float, alpha: float,
               tests: str = "main", parts: tuple[str, ...] = ("chk", "rse", "fld"),
               weights: tuple[float, ...] = (0.45, 0.05, 0.05, 0.45),
               thin_weights: tuple[float, ...] = (0.8, 0.05, 0.05, 0.1)) -> np.ndarray:
    """Each pair's power at the family's level: its weight for :func:`detectors.stats.weighted_bh_pvalues`.

    Parameters
    ----------
    u : the unordered pairs, with ``<name>_expected`` (and ``_p_value``) of each test of ``parts`` and the hand
        test's ``hp_expected``, ``hp_var``, ``hp_p_value`` (and ``hp_predictive``).
    tested : the pairs in the family (m of them).
    main : the main test's name (its expected bets ``<main>_expected``).
    ratio, alpha : the material deficit (``max_ratio``) and the false-discovery rate.
    tests : "main": the main test's power to show a deficit to ``ratio`` at alpha / m
        (:func:`detectors.stats.deficit_power`); "main_hand": the larger of it and the hand test's (:func:`hand_power`),
        both at alpha / m; "combined": the pair's combined test's (the weighted-Bonferroni combination of the main,
        raise, fold and hand tests): the largest of its parts' powers, each at its share of alpha / m (its weight over
        the weights of the parts made, ``thin_weights`` where the hand test is the predictive one), the fold test's
        to show an excess to 1 / ``ratio``.
    parts, weights, thin_weights : the combined test's spot tests (main, raise, fold) and Bonferroni weights.

    Returns
    -------
    numpy.ndarray of powers in [0, 1], one per row of ``u``.

    Method: weights proportional to power (Roeder & Wasserman, Stat. Sci. 2009); every power reads only the pair's
    opportunities (the bets or folds its own rates expect, the hands' probabilities of no bet), and which tests were
    made (fixed by the counts), never an outcome. The combined p-value is at most a part's p over its share, so the
    pair's power is at least each part's at its share of the level; the largest is a lower bound of the same order.
    """
    m = max(int(np.count_nonzero(tested)), 1)
    level = alpha / m
    expected = lambda c: u[c].fill_null(0).to_numpy() if c in u.columns else np.zeros(len(u))  # noqa: E731
    if tests == "main":
        return stats.deficit_power(expected(f"{main}_expected"), ratio, level)
    hp_made = u["hp_p_value"].is_not_null().to_numpy() if "hp_p_value" in u.columns else np.zeros(len(u), bool)
    has_hp = {"hp_expected", "hp_var"} <= set(u.columns)

    def hand(lvl):
        if not has_hp:
            return np.zeros(len(u))
        hp = hand_power(u["hp_expected"].to_numpy(allow_copy=True), u["hp_var"].to_numpy(allow_copy=True), ratio, lvl)
        return np.where(hp_made, hp, 0.0)

    if tests == "main_hand":
        return np.maximum(stats.deficit_power(expected(f"{main}_expected"), ratio, level), hand(level))
    if tests != "combined":
        raise ValueError(f"unknown power tests {tests!r}")
    made = np.vstack([u[f"{x}_p_value"].is_not_null().to_numpy() if f"{x}_p_value" in u.columns
                      else np.zeros(len(u), bool) for x in parts] + [hp_made])
    thin = u["hp_predictive"].fill_null(False).to_numpy() if "hp_predictive" in u.columns else np.zeros(len(u), bool)
    w = np.where(thin, np.asarray(thin_weights, float)[:, None], np.asarray(weights, float)[:, None])
    share = np.where(made, w, 0.0) / np.maximum(np.where(made, w, 0.0).sum(axis=0), 1e-300)
    powers = []
    for i, x in enumerate(parts):
        z = _st.norm.isf(np.clip(share[i] * level, 1e-300, 0.5))
        e = np.sqrt(expected(f"{x}_expected"))
        shift = (1.0 / ratio - 1.0) if x == "fld" else (1.0 - ratio)
        # (the main test's expected bets are those of its first part; the raise and fold tests' their own)
        powers.append(np.where(made[i], _st.norm.cdf(shift * e - z), 0.0))
    zh = _st.norm.isf(np.clip(share[-1] * level, 1e-300, 0.5))
    ev, vv = ((u["hp_expected"].to_numpy(allow_copy=True), u["hp_var"].to_numpy(allow_copy=True)) if has_hp
              else (np.zeros(len(u)), np.zeros(len(u))))
    ev, vv = np.clip(np.nan_to_num(ev), 0, None), np.nan_to_num(vv)
    hshift = np.where(vv > 0, (1.0 / ratio - 1.0) * ev / np.sqrt(np.maximum(vv, 1e-300)), -np.inf)
    powers.append(np.where(hp_made, _st.norm.cdf(hshift - zh), 0.0))
    return np.maximum.reduce(powers)
