"""Soft play's weighted Benjamini-Hochberg: each pair weighted by its power to show a material deficit at the level
the first discovery needs, so that a window with more pairs that cannot reach it does not dilute those that can
(issue 32)."""

from __future__ import annotations

import numpy as np
import pytest


def test_deficit_power_is_the_normal_power_of_a_count_test():
    """Phi((1 - ratio) sqrt(e) - z): 100 expected, a deficit to 0.75 of it, level with z = 3: Phi(-0.5); it grows with
    the count, falls as the level tightens, is 0-safe for no or missing counts."""
    from scipy.stats import norm

    from detectors.stats import deficit_power

    lvl = norm.sf(3.0)
    assert deficit_power(np.array([100.0]), 0.75, lvl)[0] == pytest.approx(norm.cdf(-0.5), rel=1e-9)
    p = deficit_power(np.array([0.0, 5.0, 20.0, 100.0, 400.0, np.nan]), 0.75, lvl)
    assert np.all(np.diff(p[:5]) > 0) and p[5] == p[0] and 0 < p[0] < 1e-2
    assert deficit_power(np.array([100.0]), 0.75, lvl / 100)[0] < deficit_power(np.array([100.0]), 0.75, lvl)[0]


def test_power_weights_keep_a_strong_pair_when_the_family_of_weak_pairs_grows():
    """Forty pairs with 200 expected bets (one of them soft, p 1e-5) among m - 40 pairs with 5 expected bets, whose
    uniform p-values cannot reach the level: with the weights capped at 20 expected bets the soft pair's q grows with
    m and is lost at m = 6,000; with power weights its q hardly moves, and the null pairs stay unflagged."""
    from detectors.stats import bh_qvalues, deficit_power, weighted_bh_pvalues

    rng = np.random.default_rng(3)
    qs = {}
    for m in (1_000, 6_000):
        e = np.r_[np.full(40, 200.0), np.full(m - 40, 5.0)]
        p = rng.uniform(size=m)
        p[0] = 1e-5
        capped = bh_qvalues(weighted_bh_pvalues(p, e / 20.0))
        power = bh_qvalues(weighted_bh_pvalues(p, deficit_power(e, 0.75, 0.01 / m)))
        qs[m] = (capped[0], power[0])
        assert (power[1:] > 0.01).all()
    assert qs[1_000][0] <= 0.01 < qs[6_000][0]
    assert qs[6_000][1] <= 0.01 and qs[6_000][1] < 2 * qs[1_000][1]


def test_detector_weights_by_power_by_default():
    """The planted pair p12/p13 (checks instead of bets into each other in 60 % of their hands, many spots) is flagged
    with the power weights (the default) as with the capped ones (``power_weights=False``), its q from the power
    weights (in a world of 24 players, about the capped one's: the family is small)."""
    from detectors.soft_play import SoftPlayDetector
    from tests.detect.test_soft_play import _mutual_checkers, _pair_row

    w = _mutual_checkers()

    def row(**kw):
        det = SoftPlayDetector(**kw).fit(w.con)
        return _pair_row(det.threshold(det.score(w.con)), "p12", "p13")

    power, capped = row(), row(power_weights=False)
    assert power["flagged"] and capped["flagged"]
    assert power["q_value"] != capped["q_value"] and power["q_value"] <= 0.5 * SoftPlayDetector().alpha
