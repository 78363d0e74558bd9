"""Chip dumping's value test with the population's spread between opponents (issue 32): an honest player gives some
opponents more value than others, and a pair of several hundred hands made that spread significant on its own."""

import numpy as np
import polars as pl


def _pairs(seed: int = 3) -> pl.DataFrame:
    """Forty players, twelve opponents each, 20-300 heads-up hands a pair; each pair's true value per hand drawn
    around the player's -0.3 bb with a spread of 0.4 bb between opponents, 3 bb per hand around it. A -> B, honest:
    900 hands at +0.6 bb beyond A's own mean to the others (a spread the population's pairs show). F -> R, a dump:
    +3 bb a hand over 60 hands."""
    rng = np.random.default_rng(seed)
    players = [f"p{i:02d}" for i in range(40)]
    rows = []

    def add(a: str, b: str, mean: float, n: int) -> None:
        v = mean + 3.0 * rng.standard_normal(n)
        rows.append({"player": a, "opponent": b, "value_w": float(v.sum()), "value_sq": float((v ** 2).sum()),
                     "value_n": n})

    for a in players + ["A", "F"]:
        for b in rng.choice([x for x in players if x != a], 12, replace=False):
            add(a, str(b), -0.3 + 0.4 * rng.standard_normal(), int(rng.integers(20, 301)))
    add("A", "B", 0.55, 900)
    add("F", "R", 2.7, 60)
    return pl.DataFrame(rows).with_columns(pl.col("value_n").cast(pl.UInt32))


def test_the_value_test_reads_the_spread_between_opponents_that_honest_pairs_show():
    """Without the between-pair variance (the old test) the honest A -> B is significant at p < 1e-4 (900 hands make
    +0.6 bb a hand certain) and so are many honest pairs (their spread between opponents is not sampling error: p
    under 0.01 in over 10 %); with it (tau about 0.4 bb) A -> B is not (p > 0.01), the honest pairs are calibrated,
    and the dump F -> R stays strong (p < 1e-5)."""
    from detectors.chip_dumping import ChipDumpingDetector

    pf = _pairs()
    det = ChipDumpingDetector()
    new = det._value_tests(pf)
    p = {(a, b): v for a, b, v in new.select("player", "opponent", "value_p").iter_rows()}
    assert p[("F", "R")] < 1e-5
    assert p[("A", "B")] > 0.01
    assert 0.3 < new["value_tau2"][0] ** 0.5 < 0.55
    honest = new.filter(~pl.col("player").is_in(["A", "F"]))["value_p"].drop_nulls()
    assert (honest < 0.01).mean() < 0.02 and honest.median() > 0.4
    old = ChipDumpingDetector(value_between=False)._value_tests(pf)
    q = {(a, b): v for a, b, v in old.select("player", "opponent", "value_p").iter_rows()}
    assert q[("A", "B")] < 1e-4 and q[("F", "R")] < 1e-5
    assert (old.filter(~pl.col("player").is_in(["A", "F"]))["value_p"].drop_nulls() < 0.01).mean() > 0.1
    from detectors.chip_dumping.moved import between_pair_variance

    # the estimate: none from too few pairs, none where the pairs' spread is their sampling error alone
    assert between_pair_variance(np.array([5.0, 4.0]), np.array([1.0, 1.0])) == 0.0
    z = np.random.default_rng(1).standard_normal(2000)
    assert between_pair_variance(z, np.ones(2000)) < 0.05


def test_the_between_pair_variance_solves_its_defining_equation():
    """The fitted tau^2 makes the median of z^2 / (1 + tau^2 / var), z = diff / sqrt(var), the median of a
    chi-square with one degree of freedom, over spreads from 1e-6 to 1e3 and with tau^2 above every squared effect
    (pairs whose effects are all alike and far beyond their sampling error: the old bisection searched only up to
    the largest squared effect and returned that bound, tau^2 = 1 here against the root 1 / 0.455 - 0.01)."""
    from scipy import stats

    from detectors.chip_dumping.moved import between_pair_variance

    target = stats.chi2(1).median()
    rng = np.random.default_rng(7)
    cases = [(np.ones(40), np.full(40, 0.01))]
    for scale in (1e-6, 1e-3, 1.0, 1e3):
        v = scale * rng.uniform(0.2, 2.0, 500)
        cases.append((rng.standard_normal(500) * np.sqrt(v + 0.7 * scale), v))
    for diff, var in cases:
        tau2 = between_pair_variance(diff, var)
        assert tau2 > 0
        z2 = diff ** 2 / var
        assert abs(np.median(z2 / (1 + tau2 / var)) - target) < 1e-12
    assert abs(between_pair_variance(*cases[0]) - (1 / target - 0.01)) < 1e-12
