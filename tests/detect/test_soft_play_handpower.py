"""Soft play's power weights from the test a pair's p-value comes from: the whole-hand test's null moments per pair
and the combined test's power at each part's Bonferroni share of alpha / m (``power_tests``; issue 32)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest


def _hand_sums():
    """Per-hand sums of two pairs: a/b three hands (pi 0.2, 0.5, 0.05), c/d one hand (pi 0.9)."""
    return pl.DataFrame({"hand_id": ["1", "2", "3", "4"], "player": ["a", "a", "a", "c"],
                         "opponent": ["b", "b", "b", "d"], "bets": [0, 2, 0, 1],
                         "logpi": np.log([0.2, 0.5, 0.05, 0.9])})


def test_hand_moments_are_the_statistics_null_variance_and_its_smallest_tail_without_the_outcome():
    """hp_var = sum pi (1 - pi) w^2 (w = min(-ln pi, cap)), hp_logpi = sum ln pi (every hand passive), hp_wsum = sum
    w; the same whichever hands were passive (``bets`` changed), and the cap bounds each hand's weight."""
    from detectors.soft_play.power import hand_moments

    h = _hand_sums()
    got = {r["player"]: r for r in hand_moments(h, max_weight=10.0).iter_rows(named=True)}
    pi = np.array([0.2, 0.5, 0.05])
    w = -np.log(pi)
    assert got["a"]["hp_var"] == pytest.approx(float((pi * (1 - pi) * w ** 2).sum()), rel=1e-12)
    assert got["a"]["hp_logpi"] == pytest.approx(float(np.log(pi).sum()), rel=1e-12)
    assert got["a"]["hp_wsum"] == pytest.approx(float(w.sum()), rel=1e-12)
    flipped = hand_moments(h.with_columns(bets=pl.Series([3, 0, 1, 0])), max_weight=10.0)
    assert flipped.sort("player").equals(hand_moments(h, max_weight=10.0).sort("player"))
    capped = {r["player"]: r for r in hand_moments(h, max_weight=1.0).iter_rows(named=True)}
    assert capped["a"]["hp_wsum"] == pytest.approx(float(np.minimum(w, 1.0).sum()), rel=1e-12)
    assert hand_moments(h.clear()).is_empty()


def _pairs():
    """Three tested pairs: a heavy one (400 expected bets), a thin one whose hand test is strong (many improbable
    passive hands possible, 2 expected bets) and a thin one with neither (2 expected bets, no hand test)."""
    return pl.DataFrame({
        "chk_expected": [400.0, 2.0, 2.0], "rse_expected": [10.0, 0.5, 0.5], "fld_expected": [40.0, 1.0, 1.0],
        "chk_p_value": [0.5, 0.5, 0.5], "rse_p_value": [0.5, 0.5, 0.5], "fld_p_value": [0.5, 0.5, 0.5],
        "hp_expected": [30.0, 40.0, None], "hp_var": [60.0, 20.0, None], "hp_p_value": [0.5, 0.5, None],
        "hp_predictive": [False, False, None]})


def test_pair_power_main_is_the_main_tests_and_the_others_count_the_hand_test():
    """"main" is :func:`detectors.stats.deficit_power` of the main test's expected bets at alpha / m; "main_hand"
    adds the hand test's power (the thin pair with a strong hand test gains, the pair without one does not);
    "combined" reads each part at its share of the level, so the heavy pair's power is below "main"'s (its main test
    at 0.45 alpha / m) and the hand-test pair's below "main_hand"'s."""
    from detectors.soft_play.power import hand_power, pair_power
    from detectors.stats import deficit_power

    u, tested = _pairs(), np.array([True, True, True])
    lvl = 0.01 / 3
    main = pair_power(u, tested, main="chk", ratio=0.75, alpha=0.01)
    assert main == pytest.approx(deficit_power(np.array([400.0, 2.0, 2.0]), 0.75, lvl), rel=1e-12)
    mh = pair_power(u, tested, main="chk", ratio=0.75, alpha=0.01, tests="main_hand")
    assert mh[1] == pytest.approx(hand_power([40.0], [20.0], 0.75, lvl)[0], rel=1e-12) and mh[1] > 20 * main[1]
    assert mh[2] == main[2] and mh[0] >= main[0]
    comb = pair_power(u, tested, main="chk", ratio=0.75, alpha=0.01, tests="combined")
    assert comb[0] < main[0] and comb[0] == pytest.approx(deficit_power(np.array([400.0]), 0.75, 0.45 * lvl)[0], rel=1e-9)
    assert main[1] < comb[1] < mh[1]
    with pytest.raises(ValueError):
        pair_power(u, tested, main="chk", ratio=0.75, alpha=0.01, tests="nope")


def test_pair_power_reads_no_outcome_and_shares_the_level_over_the_tests_made():
    """The weights do not move when the p-values do (only whether a test was made counts), and a pair whose hand
    test was not made gives its share to the others: with only the main test made its power is the main test's at
    the whole level."""
    from detectors.soft_play.power import pair_power
    from detectors.stats import deficit_power

    u, tested = _pairs(), np.array([True, True, True])
    comb = pair_power(u, tested, main="chk", ratio=0.75, alpha=0.01, tests="combined")
    moved = u.with_columns(chk_p_value=pl.Series([1e-9, 0.9, 0.01]), hp_p_value=pl.Series([1e-7, 1.0, None]))
    assert np.array_equal(comb, pair_power(moved, tested, main="chk", ratio=0.75, alpha=0.01, tests="combined"))
    alone = u.with_columns(pl.lit(None, pl.Float64).alias(c) for c in ("rse_p_value", "fld_p_value", "hp_p_value"))
    got = pair_power(alone, tested, main="chk", ratio=0.75, alpha=0.01, tests="combined")
    assert got == pytest.approx(deficit_power(np.array([400.0, 2.0, 2.0]), 0.75, 0.01 / 3), rel=1e-9)


def test_detector_keeps_the_hand_moments_and_weighs_by_the_chosen_tests():
    """The score frame carries each pair's hand-test moments (a variance wherever the hand test was made); the
    default weights are the main test's ("main": the same q-values); the planted mutual checkers are flagged with
    the combined test's weights too."""
    from detectors.soft_play import SoftPlayDetector
    from tests.detect.test_soft_play import _mutual_checkers, _pair_row

    w = _mutual_checkers()
    det = SoftPlayDetector().fit(w.con)
    scores = det.score(w.con)
    made = scores.filter(pl.col("hp_p_value").is_not_null())
    assert made.height and (made["hp_var"] > 0).all() and (made["hp_logpi"] < 0).all()
    det.power_tests = "main"
    same = det.score(w.con)
    assert np.allclose(same["q_value"].to_numpy(), scores["q_value"].to_numpy(), equal_nan=True, rtol=0, atol=0)
    det.power_tests = "combined"
    assert _pair_row(det.threshold(det.score(w.con)), "p12", "p13")["flagged"]
