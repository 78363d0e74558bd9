"""The exact floor of the pooled own-baseline test (:func:`detectors.stats.pool_directions`)."""

import numpy as np
import pytest


def test_pooled_test_of_one_decision_never_below_its_exact_p_value():
    """One check by A aimed at B where A's own rate of betting is 0.9: the exact p-value of that one decision is 0.1
    (a check happens one time in ten). The score test's normal tail, even corrected for skew, read it near 0.02; the
    pooled test is floored at the probability of the most extreme outcome, here the exact p-value. Two checks at
    0.9 both ways: 0.01. Many decisions with a real deficit keep the approximate tail (the floor is far below)."""
    import polars as pl

    from detectors.stats import pool_directions, robust_own_baseline

    rng = np.random.default_rng(3)

    def world(n_ab: int, n_ba: int, rate_ab: float = 0.0) -> pl.DataFrame:
        rows = []
        for p, q, n in (("A", "B", n_ab), ("B", "A", n_ba)):
            rows += [{"player": p, "opponent": q, "aggr": bool(v)} for v in rng.random(n) < rate_ab]
        for p in "AB":
            for x in "CDEFGHIJKL":
                rows += [{"player": p, "opponent": x, "aggr": bool(v)} for v in rng.random(200) < 0.9]
                rows += [{"player": x, "opponent": p, "aggr": bool(v)} for v in rng.random(200) < 0.9]
        return pl.DataFrame(rows).with_columns(preflop=pl.lit(False), facing=pl.lit(False), hu=pl.lit(True),
                                               sbin=pl.lit(2, pl.Int8))

    ab = (pl.col("player") == "A") & (pl.col("opponent") == "B")

    def pooled(dec: pl.DataFrame) -> tuple[dict, dict]:
        d = robust_own_baseline(dec, "aggr", side="less")
        return pool_directions(d, side="less", skew=True).filter(ab).row(0, named=True), d.filter(ab).row(0, named=True)

    one, a = pooled(world(1, 0))
    assert one["n"] == 1 and one["observed"] == 0
    assert one["p_value"] == pytest.approx(1 - a["rate_own"], rel=1e-9) and 0.07 < one["p_value"] < 0.13
    two, _ = pooled(world(1, 1))
    assert 0.005 < two["p_value"] < 0.02
    # a clear deficit over many decisions: the floor (0.1 ** 60) is far below the approximate tail, which stays
    many, _ = pooled(world(30, 30, rate_ab=0.5))
    assert 1e-30 < many["p_value"] < 1e-6
    # without the extreme outcome's probability the pooled test falls back to the skew-corrected normal tail
    plain = robust_own_baseline(world(1, 0), "aggr", side="less").drop("l0", "l1")
    assert pool_directions(plain, side="less", skew=True).filter(ab)["p_value"][0] < 0.3 * one["p_value"]
