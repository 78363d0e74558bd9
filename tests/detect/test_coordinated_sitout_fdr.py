"""Coordinated sit-outs: the false-discovery control weighs each pair by the events in which both sat out
(weighted Benjamini-Hochberg, Genovese, Roeder & Wasserman 2006), and stays valid under the null."""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.coordinated_sitout import CoordinatedSitoutDetector


def _det(n_shared: dict[tuple[str, str], int], **kw) -> CoordinatedSitoutDetector:
    det = CoordinatedSitoutDetector(**kw)
    det.family_pairs_ = pl.DataFrame({"a": [a for a, _ in n_shared], "b": [b for _, b in n_shared],
                                      "n_shared": list(n_shared.values())}, schema_overrides={"n_shared": pl.UInt32})
    det.family_ = len(n_shared)
    return det


def _scores(p: dict[tuple[str, str], float]) -> pl.DataFrame:
    return pl.DataFrame({"a": [a for a, _ in p], "b": [b for _, b in p], "p_value": list(p.values())})


def test_a_pair_that_sat_out_together_in_three_events_gets_more_of_the_error_budget():
    """Ten pairs in the family; x/y both sat out in three shared events, the nine others in one. With p 0.008 the
    plain BH q is 0.08 (not flagged at 0.05); weighted by its events cubed (weight 27 x 10 / 36 = 7.5) it is
    0.0107 (linearly, 3 x 10 / 12 = 2.5, it was 0.032). A lone pair's weight falls below 1 (10 / 36): the weights
    average 1, the budget is moved, not enlarged."""
    fam = {("x", "y"): 3, **{(f"a{i}", f"b{i}"): 1 for i in range(9)}}
    s = _scores({("x", "y"): 0.008, ("a0", "b0"): 0.5})
    q = _det(fam)._with_q(s)
    row = q.filter(pl.col("a") == "x").row(0, named=True)
    assert abs(row["bh_weight"] - 7.5) < 1e-9 and row["n_shared"] == 3
    assert abs(row["q_value"] - 0.008 / 7.5 * 10) < 1e-9
    lone = q.filter(pl.col("a") == "a0").row(0, named=True)
    assert abs(lone["bh_weight"] - 10 / 36) < 1e-9
    linear = _det(fam, share_power=1.0)._with_q(s).filter(pl.col("a") == "x").row(0, named=True)
    assert abs(linear["bh_weight"] - 2.5) < 1e-9 and abs(linear["q_value"] - 0.032) < 1e-9
    plain = _det(fam, share_power=0.0)._with_q(s).filter(pl.col("a") == "x").row(0, named=True)
    assert abs(plain["q_value"] - 0.08) < 1e-9 and plain["bh_weight"] == 1.0


def test_weighted_control_keeps_the_false_discovery_rate_under_the_null():
    """Every pair independent (uniform p-values) with 1-6 shared events: some pair flagged (q <= 0.05) in at most
    about 5 % of 400 simulated populations of 150 pairs (under the global null the FDR is that probability)."""
    rng = np.random.default_rng(7)
    n, reps, hits = 150, 400, 0
    keys = [(f"a{i}", f"b{i}") for i in range(n)]
    for _ in range(reps):
        shared = rng.choice([1, 1, 1, 2, 3, 6], size=n)
        det = _det(dict(zip(keys, shared.tolist())))
        tested = rng.random(n) < 0.4  # candidates: pairs with a co-occurrence; the rest count at p = 1
        s = _scores({k: float(p) for k, p, t in zip(keys, rng.random(n), tested) if t})
        hits += bool((det._with_q(s)["q_value"] <= 0.05).any()) if s.height else False
    assert hits / reps <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)


def test_return_mark_is_a_valid_p_value():
    """Under independence (each partner's length an independent draw from the population's lengths) the return
    mark is a valid p-value; two sit-outs that end a second apart are rare, two that end minutes apart are not;
    an unknown length (no sit_in) is no evidence."""
    from detectors.coordinated_sitout.null import _return_mark

    rng = np.random.default_rng(5)
    pop = rng.gamma(2.0, 150.0, 4000)
    n = 20_000
    ta = rng.uniform(0, 1e4, n)
    tb = ta + rng.uniform(-30, 30, n)
    u = _return_mark(ta, rng.choice(pop, n), tb, rng.choice(pop, n), pop, 1.0)
    for alpha in (0.01, 0.05, 0.2, 0.5):
        assert float((u <= alpha).mean()) <= alpha * 1.05
    close, far, unknown = _return_mark(np.array([0.0, 0.0, 0.0]), np.array([300.0, 300.0, 300.0]),
                                       np.array([10.0, 10.0, 10.0]), np.array([291.0, 100.0, np.nan]), pop, 1.0)
    assert close < 0.02 and far > 0.3 and unknown == 1.0
