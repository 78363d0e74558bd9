"""The whole-hand test's null from the population's own hands (detectors.soft_play.handcal): a hand's decisions
are not independent and their number is not fixed (a check lets the hand go on, a bet often ends it), so the hands
the product of the own rates calls improbable are mostly check-downs that honest pairs play too. An honest pair
with a handful of such hands is not accused; a pair that checks through far more hands than the population's
hands like them still is."""

import numpy as np
import polars as pl
import pytest

from detectors import stats
from detectors.soft_play import SoftPlayDetector
from detectors.soft_play.handcal import calibrate_hand_sums, calibration_table


def _population(seed=3, pairs=300, hands=20):
    """Per hand and pair sums as the detector makes them: each hand's predicted log-probability of no bet (the product
    of the own rates) and its bets. Long hands (small predicted pi) are the checked-through ones: passive 20 % of the
    time whatever the product says; short hands are passive at the product's rate."""
    rng = np.random.default_rng(seed)
    n = pairs * hands
    logpi = np.where(rng.random(n) < 0.3, rng.uniform(-7.0, -4.0, n), rng.uniform(-1.5, -0.1, n))
    passive = np.where(logpi < -4.0, rng.random(n) < 0.2, rng.random(n) < np.exp(logpi))
    return pl.DataFrame({
        "hand_id": [str(i) for i in range(n)],
        "player": [f"a{i // hands:03d}" for i in range(n)],
        "opponent": [f"b{i // hands:03d}" for i in range(n)],
        "bets": np.where(passive, 0, 1 + rng.integers(0, 3, n)).astype(np.int64),
        "logpi": logpi,
    })


def _with_pair(h, name, logpi, bets):
    k = len(logpi)
    return pl.concat([h, pl.DataFrame({"hand_id": [f"{name}{i}" for i in range(k)], "player": [name] * k,
                                       "opponent": [name + "x"] * k, "bets": np.asarray(bets, dtype=np.int64),
                                       "logpi": np.asarray(logpi, dtype=float)})])


def _p(h, name):
    t = stats.hand_passivity_from_hands(h)
    return t.filter(pl.col("player") == name)["hp_p_value"].item()


def test_honest_pair_with_a_few_long_checked_through_hands_is_not_accused():
    """Four of five long hands checked through (predicted pi 0.002 each, the population's such hands passive 20 % of
    the time): the product reads p < 1e-6 (the old test: a flag on four hands); against the population's own hands the
    p-value is that of four passive hands in five at about 0.2 each (>= 0.005)."""
    h = _with_pair(_population(), "hon", [-6.2] * 5, [0, 0, 0, 0, 2])
    assert _p(h, "hon") < 1e-6
    table = calibration_table(h)
    assert table["rate"].min() > 0.1 and (table["hands"] >= 50).all()
    p = _p(calibrate_hand_sums(h, table), "hon")
    assert p > 0.005
    # the exact tail of four or more passive hands in five at the calibrated rate bounds it from below
    r = float(np.exp(calibrate_hand_sums(h, table).filter(pl.col("player") == "hon")["logpi"][0]))
    exact = 5 * r ** 4 * (1 - r) + r ** 5
    assert p >= exact * 0.999


def test_pair_that_checks_through_most_of_its_long_hands_still_found():
    """Thirty of thirty-five long hands checked through where the population checks through a fifth: p < 1e-10."""
    h = _with_pair(_population(), "soft", [-6.0] * 35, [0] * 30 + [1] * 5)
    table = calibration_table(h)
    assert _p(calibrate_hand_sums(h, table), "soft") < 1e-10


def test_short_hands_keep_the_products_rate():
    """Where the product is right (short hands), the calibrated rate is the product's, within the bins' noise."""
    h = _population(seed=5, pairs=400)
    t = calibration_table(h).filter(pl.col("lo") >= -1.5)
    assert t.height >= 2
    assert np.allclose(t["rate"].to_numpy(), t["pred"].to_numpy(), atol=0.05)


def test_a_hands_probability_is_never_lowered_below_the_product():
    """Short hands the population played passively less often than the product says (one rated decision: mostly a
    bet that ended the hand) keep the product's probability: a passive short hand never becomes a surprise."""
    rng = np.random.default_rng(8)
    n = 4000
    logpi = rng.uniform(-0.5, -0.1, n)
    h = pl.DataFrame({"hand_id": [str(i) for i in range(n)], "player": ["a"] * n, "opponent": ["b"] * n,
                      "bets": (rng.random(n) > 0.1).astype(np.int64), "logpi": logpi})
    table = calibration_table(h)
    assert (table["rate"] < table["pred"]).all()
    assert np.array_equal(calibrate_hand_sums(h, table)["logpi"].to_numpy(), logpi)


def test_order_kept_and_empty_table_leaves_the_sums():
    h = _population(pairs=20)
    out = calibrate_hand_sums(h, calibration_table(h))
    assert out["hand_id"].to_list() == h["hand_id"].to_list() and out.columns == h.columns
    assert calibrate_hand_sums(h, calibration_table(h.head(0))).equals(h)


@pytest.mark.parametrize("on", [True, False])
def test_detector_reads_the_hand_test_against_the_population(planted_world, on):
    """With ``hand_calibrate`` the detector's hand test uses the population's table (``hand_calibration_``), off (the
    default) the product; the planted soft pair is flagged either way."""
    assert SoftPlayDetector().hand_calibrate is False
    det = SoftPlayDetector(hand_calibrate=on).fit(planted_world.con)
    assert hasattr(det, "hand_calibration_") == on
    if on:
        assert set(det.hand_calibration_) == {"pairs", "sides"}
        assert all(t.height > 0 and (t["rate"] > 0).all() for t in det.hand_calibration_.values())
    s = det.threshold(det.score(planted_world.con))
    assert s.filter(pl.col("flagged") & pl.col("accounts").list.contains("p01")
                    & pl.col("accounts").list.contains("p02")).height == 1
