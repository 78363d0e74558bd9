"""Coordinated sit-outs: a pair's shared events combined by the exact law of its per-event p-values. An event
both sat out in without a coincidence has p-value 1 with the probability that no coincidence falls (most events),
so Fisher's method, which takes every p-value as uniform on (0, 1], charges the pair for events where nothing
happened; the exact law does not, and keeps the level."""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats
from test_identity_features_world import World, at

from detectors.coordinated_sitout import CoordinatedSitoutDetector
from detectors.coordinated_sitout.null import exact_product_sf


def _null_pvalues(rng: np.random.Generator, lam: np.ndarray, n: int) -> np.ndarray:
    """Per-event p-values under the null: 1 without a coincidence, uniform on (0, 1 - exp(-lam)] with one."""
    c = -np.expm1(-lam)
    hit = rng.random((n, lam.size)) < c
    return np.where(hit, rng.random((n, lam.size)) * c, 1.0)


def test_the_exact_law_keeps_its_level_and_is_never_above_fishers():
    """Three shared events (expected coincidences 0.1, 0.3, 0.05), 20,000 simulated pairs: the exact law rejects
    at its level (Fisher's method at under half of it: conservative) and is at most Fisher's p for every pair."""
    rng = np.random.default_rng(11)
    lam = np.array([0.1, 0.3, 0.05])
    ps = _null_pvalues(rng, lam, 20_000)
    c = -np.expm1(-lam)
    exact = np.array([exact_product_sf(p, c) for p in ps])
    fisher = stats.chi2.sf(-2 * np.log(ps).sum(axis=1), 2 * lam.size)
    for alpha in (0.005, 0.01, 0.05):
        sd = np.sqrt(alpha * (1 - alpha) / ps.shape[0])
        assert abs(float((exact <= alpha).mean()) - alpha) <= 3 * sd
        assert float((fisher <= alpha).mean()) <= 0.5 * alpha
    assert np.all(exact <= fisher + 1e-12)


def test_the_exact_law_does_not_depend_on_the_order_of_the_events():
    """The same events in any order give the same p-value to the last bit (a group-by hands them in no fixed order;
    the detector's signals must be the same run after run)."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(2, 9))
        cs = rng.uniform(0.001, 0.5, n)
        ps = np.where(rng.random(n) < cs, rng.uniform(0, 1, n) * cs, 1.0)
        first = exact_product_sf(ps, cs)
        for _ in range(3):
            perm = rng.permutation(n)
            assert exact_product_sf(ps[perm], cs[perm]) == first


def test_one_event_alone_is_its_own_p_value():
    """With one shared event the exact law is the event's own p-value; without any coincidence it is 1."""
    assert abs(exact_product_sf(np.array([0.003]), np.array([0.06])) - 0.003) < 1e-12
    assert exact_product_sf(np.array([1.0, 1.0]), np.array([0.1, 0.2])) == 1.0


def _world() -> World:
    """Twelve events of 20 regulars who sit out now and then; x and y enter events 0-5, sit out in each, together
    (the same round) in events 0 and 1 only."""
    w = World(seed=41)
    honest = [f"k{i:02d}" for i in range(60)]
    for p in honest + ["x", "y"]:
        w.account(p)
    rng = np.random.default_rng(43)
    for t in range(12):
        mine = ["x", "y"] if t < 6 else []
        players = rng.choice(honest, 20, replace=False).tolist() + mine
        so: dict[str, list[tuple[int, int]]] = {}
        for p in players:
            if p not in mine and rng.random() < 0.3:
                r0 = int(rng.integers(2, 60))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        if mine:
            r_x = 20 if t < 2 else 10
            r_y = 20 if t < 2 else 45
            so["x"], so["y"] = [(r_x, r_x + 3)], [(r_y, r_y + 3)]
        w.tournament(str(900 + t), players, at(120 * t), n_hands=70, every_s=45, sitouts=so,
                     bust_order=[p for p in players if p not in mine] + mine)
    return w


def test_a_pair_is_not_charged_for_the_events_where_nothing_happened():
    """x and y sat out in six shared events and together in two: their p is the exact law of the six per-event
    p-values, below Fisher's combination of them (which counts the four quiet events as four more p-values), and
    the pair is flagged; combined by Fisher's method (``exact_events=False``, the former test) it is not."""
    con = _world().build()
    try:
        det = CoordinatedSitoutDetector().fit(con)
        r = det.scores_.filter((pl.col("a") == "x") & (pl.col("b") == "y")).row(0, named=True)
        ev = det.per_event_.filter((pl.col("a") == "x") & (pl.col("b") == "y"))
        assert r["n_co"] == 2 and ev.height == 6
        fisher = stats.chi2.sf(-2 * np.log(ev["p_marked"].to_numpy()).sum(), 2 * ev.height)
        exact = exact_product_sf(ev["p_marked"].to_numpy(), -np.expm1(-ev["lam"].to_numpy()))
        assert abs(r["p_gap"] - exact) <= 1e-12 * max(exact, 1e-300)
        assert r["p_gap"] < 0.2 * fisher
        assert r["q_value"] <= det.alpha
        old = CoordinatedSitoutDetector(exact_events=False).fit(con)
        assert old.scores_.filter((pl.col("a") == "x") & (pl.col("b") == "y"))["q_value"][0] > old.alpha
    finally:
        con.close()


def test_the_population_closeness_mark_is_uniform_under_its_own_null():
    """The population's own closeness null (``own_closeness``, off by default): where a quarter of a stratum's
    coincidences fall at the resolution (two starts seen on one hand at one table) the mark there is about a
    quarter, not ``res / win``, and the mark is uniform when gaps follow that law; a stratum with the uniform
    share keeps ``gap / win``."""
    from detectors.coordinated_sitout.null import own_closeness

    rng = np.random.default_rng(3)
    n, res, win = 4000, 5.0, 120.0
    at_res = rng.random(n) < 0.25
    gap = np.where(at_res, rng.uniform(0, res, n), rng.uniform(res, win, n))
    u = own_closeness(gap, np.full(n, res), np.full(n, win), np.zeros(n, dtype=int))
    assert abs(float(u[at_res].max()) - 0.25) < 0.03
    for alpha in (0.3, 0.5, 0.8):
        assert abs(float((u <= alpha).mean()) - alpha) < 0.03
    flat = rng.uniform(0, win, n)
    v = own_closeness(flat, np.full(n, res), np.full(n, win), np.ones(n, dtype=int))
    assert np.allclose(v[flat > res], flat[flat > res] / win, atol=0.01)
