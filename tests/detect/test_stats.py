"""detectors.stats on known distributions: BH, shrinkage, own-baseline tests."""

import numpy as np
import pytest
from scipy import stats as st

from detectors import stats
from detectors.stats import baselines, passivity


def test_bh_matches_reference_order_and_values():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan, 0.5])
    q = stats.bh_qvalues(p)
    # m = 5 tests made; sorted p: .005 .01 .03 .04 .5 -> p*m/rank: .025 .025 .05 .05 .5
    assert np.isnan(q[4])
    np.testing.assert_allclose(q[[3, 0, 2, 1, 5]], [0.025, 0.025, 0.05, 0.05, 0.5])
    assert stats.bh_reject(p, 0.03).tolist() == [True, False, False, True, False, False]


def test_bh_controls_fdr_on_nulls():
    rng = np.random.default_rng(1)
    fdr_hits = 0
    for _ in range(200):
        p = rng.uniform(size=500)
        fdr_hits += stats.bh_reject(p, 0.05).any()
    # all nulls: P(any rejection) <= alpha (BH = FWER control under the global null)
    assert fdr_hits / 200 < 0.1


def test_beta_prior_recovers_spread_and_shrinks_small_samples():
    rng = np.random.default_rng(2)
    true = rng.beta(8, 32, size=3000)  # mean 0.2, strength 40
    n = rng.integers(20, 400, size=3000)
    k = rng.binomial(n, true)
    a, b = stats.fit_beta_prior(k, n)
    assert a / (a + b) == pytest.approx(0.2, abs=0.01)
    assert 25 < a + b < 60
    r = stats.shrink_rate([3, 300], [3, 300], a, b)
    assert r[0] < 0.3  # 3/3 pulled hard towards 0.2
    assert r[1] > 0.88  # 300/300 keeps most of its own rate


def test_baseline_tail_is_calibrated_under_null_and_powerful_under_alternative():
    rng = np.random.default_rng(3)
    m = 4000
    rate = rng.beta(6, 14, size=m)
    n0 = rng.integers(50, 500, size=m)
    k0 = rng.binomial(n0, rate)
    n = rng.integers(10, 60, size=m)
    k_null = rng.binomial(n, rate)
    a, b = stats.fit_beta_prior(k0, n0)
    p = stats.baseline_tail(k_null, n, k0, n0, a, b, side="less")
    assert (p < 0.01).mean() < 0.015  # conservative for discrete data
    k_alt = rng.binomial(n, rate * 0.2)  # passive towards the partner
    p_alt = stats.baseline_tail(k_alt, n, k0, n0, a, b, side="less")
    assert (p_alt < 0.01).mean() > 0.5


def test_fisher_tail_matches_scipy():
    ours = stats.fisher_tail([8], [10], [2], [10], side="greater")[0]
    ref = st.fisher_exact([[8, 2], [2, 8]], alternative="greater").pvalue
    assert ours == pytest.approx(ref)
    ours_less = stats.fisher_tail([1], [20], [10], [20], side="less")[0]
    ref_less = st.fisher_exact([[1, 19], [10, 10]], alternative="less").pvalue
    assert ours_less == pytest.approx(ref_less)


def test_binom_and_mean_tests():
    assert stats.binom_tail([5], [5], [0.5])[0] == pytest.approx(1 / 32)
    assert np.isnan(stats.binom_tail([0], [0], [0.5])[0])
    # mean well above the baseline: small p; equal: about one half
    p = stats.weighted_mean_test([50.0, 0.0], [60.0, 100.0], [50, 50], [0.0, 0.0], [1.0, 2.0], [1000, 1000])
    assert p[0] < 1e-6 and 0.3 < p[1] < 0.7


def test_permutation_is_seeded_and_detects_shift():
    x = np.r_[np.zeros(30), np.ones(30)]
    lab = np.r_[np.zeros(30), np.ones(30)].astype(bool)
    stat = lambda v, l: v[l].mean() - v[~l].mean()  # noqa: E731
    p1 = stats.permutation_pvalue(x, lab, stat, n_perm=199, random_state=5)
    p2 = stats.permutation_pvalue(x, lab, stat, n_perm=199, random_state=5)
    assert p1 == p2 == pytest.approx(1 / 200)


def test_combine_and_score():
    c = stats.fisher_combine([0.01, np.nan], [0.01, np.nan])
    assert c[0] < 0.01 and np.isnan(c[1])
    # chi2 with 4 dof at -2 ln(1e-4): 1e-4 (1 + ln 1e4)
    assert c[0] == pytest.approx(1e-4 * (1 + np.log(1e4)))
    s = stats.score_from_q([1e-5, 1.0, np.nan, 0.0])
    assert s.tolist() == [pytest.approx(5.0), 0.0, 0.0, 30.0]
    assert stats.min_p_bonferroni([0.01, 0.5], [0.2, np.nan])[0] == pytest.approx(0.02)


def test_weighted_bonferroni():
    """min p_i / w_i with the weights renormalised over the tests made; equal weights = plain Bonferroni."""
    nan = np.nan
    p = [[0.01, 0.5, nan, 0.01], [0.2, nan, nan, 0.001], [0.3, 0.01, nan, nan]]
    out = stats.weighted_bonferroni(p, [0.9, 0.05, 0.05])
    assert out[0] == pytest.approx(0.01 / 0.9)
    assert out[1] == pytest.approx(0.01 * 0.95 / 0.05)  # the fold-like test with weight 0.05 of the 0.95 made
    assert np.isnan(out[2])
    assert out[3] == pytest.approx(0.01 * 0.95 / 0.9)
    assert stats.weighted_bonferroni(p, [1, 1, 1]) == pytest.approx(stats.min_p_bonferroni(*p), nan_ok=True)
    assert stats.weighted_bonferroni([[0.9], [0.9]], [0.5, 0.5])[0] == 1.0
    # valid under the null: P(combined <= a) <= a for independent uniforms
    rng = np.random.default_rng(0)
    u = rng.uniform(size=(3, 200_000))
    assert (stats.weighted_bonferroni(u, [0.9, 0.05, 0.05]) <= 0.05).mean() <= 0.05 + 0.003


def test_robust_own_baseline_leaves_the_planted_partner_out():
    """A raises partner B in 90 % of 300 spots and eight others in 30 % of 100 each: against the plain baseline
    (which counts B) honest C looks passive; the robust baseline leaves B out and clears C; B is an outlier (greater)."""
    import polars as pl

    from detectors.stats import robust_own_baseline

    rng = np.random.default_rng(3)
    rows = []
    for opp, rate, n in (("B", 0.9, 300), *((x, 0.3, 100) for x in "CDEFGHIJ")):
        y = rng.random(n) < rate
        rows += [{"player": "A", "opponent": opp, "aggr": bool(v), "preflop": False, "facing": False, "hu": True,
                  "sbin": 2} for v in y]
    for p in ("C", "D", "E"):  # the others' own decisions, so the population prior has several players
        rows += [{"player": p, "opponent": "A", "aggr": bool(v), "preflop": False, "facing": False, "hu": True,
                  "sbin": 2} for v in rng.random(300) < 0.3]
    dec = pl.DataFrame(rows).with_columns(pl.col("sbin").cast(pl.Int8))
    from detectors.features.gameplay import own_baseline

    plain = own_baseline(dec, "aggr", side="less").filter((pl.col("player") == "A") & (pl.col("opponent") == "C"))
    robust = robust_own_baseline(dec, "aggr", side="less").filter((pl.col("player") == "A") & (pl.col("opponent") == "C"))
    assert plain["p_value"][0] < 0.01  # contaminated: C looks spared
    assert robust["p_value"][0] > 0.05  # clean: A treats C like D and E
    assert abs(robust["rate_own"][0] - 0.3) < 0.1 < plain["rate_own"][0] - robust["rate_own"][0]
    up = robust_own_baseline(dec, "aggr", side="greater").filter(pl.col("opponent") == "B")
    assert up["p_value"][0] < 1e-10
    # n0: the own baseline's sample. The first (two-sided) pass sets B and also E-J aside against the
    # contaminated baseline, so C's baseline is D's 100 decisions and an outlier's baseline is C's and D's 200
    n0 = dict(robust_own_baseline(dec, "aggr", side="less").filter(pl.col("player") == "A").select("opponent", "n0").rows())
    assert n0 == {"B": 200, "C": 100, "D": 100, **{x: 200 for x in "EFGHIJ"}}


def test_pool_directions_adds_both_directions_score_statistics():
    import polars as pl
    from scipy import stats as st

    from detectors.stats import pool_directions

    t = pl.DataFrame({"player": ["a", "b", "c"], "opponent": ["b", "a", "a"], "n": [10.0, 20.0, 5.0],
                      "observed": [1.0, 2.0, 4.0], "expected": [4.0, 6.0, 1.0],
                      "score_u": [-5.0, -6.0, 4.0], "var": [9.0, 16.0, 2.0]})
    low = pool_directions(t, side="less").sort("opponent")
    ab = low.row(0, named=True)
    assert (ab["player"], ab["opponent"], ab["n"], ab["observed"], ab["expected"]) == ("a", "b", 30.0, 3.0, 10.0)
    assert abs(ab["p_value"] - st.norm.sf((11.0 - 0.5) / 5.0)) < 1e-12
    high = pool_directions(t, side="greater").filter(pl.col("opponent") == "c").row(0, named=True)
    # a rare event: the Poisson tail of the count (4 seen, 1 expected) floors the normal tail
    assert high["player"] == "a" and abs(high["p_value"] - st.poisson.sf(3, 1.0)) < 1e-12
    assert pool_directions(t.clear(), side="less").is_empty()


def test_skew_corrected_pooled_tail_is_heavier_for_few_lopsided_spots_and_calibrated():
    """A pair's check score from spots where both players nearly always bet (r = 0.9) is right-skewed: with a few
    decisions the normal tail is far too thin. The Edgeworth-corrected tail is never thinner, much heavier for
    12 such spots (though still below the exact tail that far out), nearly the normal one for 2,000 moderate
    spots, and holds its level at 0.05, 0.01 and 0.001 where the normal does not (simulated null, exact rates)."""
    import polars as pl

    r = 0.9

    def frame(n, k, rate):
        u = (k - n * rate) / (1 - rate)  # the score of "more bets than expected"; the "less" side flips it
        return pl.DataFrame({"player": ["a", "b"], "opponent": ["b", "a"], "n": [n / 2] * 2, "observed": [k / 2] * 2,
                             "expected": [n * rate / 2] * 2, "score_u": [u / 2] * 2,
                             "var": [n * rate / (1 - rate) / 2] * 2,
                             "k3": [n * rate * (2 * rate - 1) / (1 - rate) ** 2 / 2] * 2})

    few = frame(12, 6, r)  # six checks in 12 spots where 10.8 bets were expected
    plain, skew = stats.pool_directions(few)["p_value"][0], stats.pool_directions(few, skew=True)["p_value"][0]
    assert skew > 10 * plain and plain < 1e-5
    # one Edgeworth term does not reach the exact binomial tail this far out (5.4e-4): a saddlepoint would
    assert skew < st.binom.cdf(6, 12, r)
    assert stats.pool_directions(few, skew=True)["skew"][0] > 0.5
    many = frame(2000, 560, 0.3)
    assert stats.pool_directions(many, skew=True)["p_value"][0] == pytest.approx(stats.pool_directions(many)["p_value"][0], rel=0.3)
    # calibration under the null: 12 spots at r = 0.9 per pair, 100,000 simulated pairs
    rng = np.random.default_rng(1)
    k = rng.binomial(12, r, size=100_000).astype(float)
    u = (k - 12 * r) / (1 - r)
    sims = pl.DataFrame({"player": [f"a{i}" for i in range(k.size)], "opponent": "z", "n": 12.0, "observed": k,
                         "expected": 12 * r, "score_u": u, "var": 12 * r / (1 - r),
                         "k3": 12 * r * (2 * r - 1) / (1 - r) ** 2})
    p_plain = stats.pool_directions(sims).sort("player")["p_value"].to_numpy()
    p_skew = stats.pool_directions(sims, skew=True).sort("player")["p_value"].to_numpy()
    assert (p_skew >= p_plain).all()
    for a in (0.05, 0.01, 0.001):
        assert (p_plain <= a).mean() > 2 * a  # the normal tail: more than twice the level
        assert (p_skew <= a).mean() <= a


def test_weighted_bh_weights_follow_power_average_one_and_keep_untested_out():
    p = np.array([0.001, 0.001, 0.02, np.nan, 0.5])
    power = np.array([5.0, 0.25, 1.0, 9.0, 0.0])  # weights min(1, power): 1, 0.25, 1, -, 0 -> mean 1 over the tested
    out = stats.weighted_bh_pvalues(p, power)
    w = np.array([1, 0.25, 1, 0]) * 4 / 2.25
    assert np.isnan(out[3])
    assert out[[0, 1, 2]] == pytest.approx(p[[0, 1, 2]] / w[:3])
    assert out[4] == 1.0  # weight 0: never rejected
    # equal power: plain BH
    assert stats.weighted_bh_pvalues(p, np.ones(5)) == pytest.approx(p, nan_ok=True)
    # FDR under the global null (independent uniforms, weights fixed in advance) stays at the level
    rng = np.random.default_rng(2)
    power = rng.uniform(0, 2, size=400)
    hits = [stats.bh_reject(stats.weighted_bh_pvalues(rng.uniform(size=400), power), 0.05).any() for _ in range(2000)]
    assert np.mean(hits) <= 0.05 + 0.012


def _rated_hands(rng, pairs, hands, spots, rate, passive_share=0.0):
    """Bet-or-check spots (``_y``, own rate ``r``) of ``hands`` hands per pair, ``spots`` decisions each; a share of
    the hands played fully passively (every spot a check) by the planted pairs."""
    import polars as pl

    rows = []
    for a, b, planted in pairs:
        for h in range(hands):
            passive = planted and rng.random() < passive_share
            for i in range(spots):
                y = 0 if passive else int(rng.random() < rate)
                rows.append({"hand_id": f"{a}{b}{h}", "player": a if i % 2 == 0 else b,
                             "opponent": b if i % 2 == 0 else a, "_y": y, "r": rate})
    return pl.DataFrame(rows)


def test_hand_passivity_counts_exact_and_single_hand_tail_is_pi():
    """Exact counts on a hand-made frame, and for one fully passive hand the Chernoff bound is pi = prod(1 - r)."""
    import polars as pl

    rated = pl.DataFrame({"hand_id": ["h1", "h1", "h1", "h2", "h2"], "player": ["a", "b", "a", "b", "a"],
                          "opponent": ["b", "a", "b", "a", "b"], "_y": [0, 0, 0, 1, 0], "r": [0.5, 0.4, 0.6, 0.5, 0.5]})
    t = stats.hand_passivity_test(rated).row(0, named=True)
    pi1, pi2 = 0.5 * 0.6 * 0.4, 0.25
    w1, w2 = -np.log(pi1), -np.log(pi2)
    assert (t["player"], t["opponent"], t["hands"], t["passive"]) == ("a", "b", 2.0, 1.0)
    assert t["hp_observed"] == pytest.approx(w1)
    assert t["hp_expected"] == pytest.approx(pi1 * w1 + pi2 * w2)
    one = stats.hand_passivity_test(rated.filter(pl.col("hand_id") == "h1")).row(0, named=True)
    assert one["hp_p_value"] == pytest.approx(pi1, rel=0.05) and one["hp_p_value"] >= pi1 * (1 - 1e-9)
    assert stats.hand_passivity_test(rated.clear()).is_empty()
    # directed: each player's own decisions, per ordered pair (a never bet at b in either hand; b bet in h2)
    d = {(r["player"], r["opponent"]): r for r in stats.hand_passivity_test(rated, directed=True).iter_rows(named=True)}
    assert sorted(d) == [("a", "b"), ("b", "a")]
    assert (d["a", "b"]["hands"], d["a", "b"]["passive"], d["b", "a"]["hands"], d["b", "a"]["passive"]) == (2.0, 2.0, 2.0, 1.0)
    assert d["a", "b"]["hp_observed"] == pytest.approx(-np.log(0.5 * 0.4) - np.log(0.5))
    assert d["b", "a"]["hp_observed"] == pytest.approx(-np.log(0.6))


def test_hand_passivity_is_calibrated_under_null_and_finds_sparse_passive_pair():
    """Null: 2,000 pairs, 6 spots per hand at own rate 0.3, 5-40 hands: the p-value holds its level (the Chernoff
    bound is conservative) where the normal tail of the same statistic does not. A pair that checks every spot in
    a quarter of 80 hands is found far below every null pair, and far below the per-decision score test's p-value."""
    rng = np.random.default_rng(7)
    null = []
    for n in (5, 10, 40):
        f = _rated_hands(rng, [(f"a{n}_{i}", f"z{n}_{i}", False) for i in range(700)], n, 6, 0.3)
        null.append(stats.hand_passivity_test(f))
    import polars as pl

    null = pl.concat(null)
    p = null["hp_p_value"].to_numpy()
    p_normal = st.norm.sf(null["hp_z"].to_numpy())
    for a in (0.05, 0.01, 0.001):
        assert (p <= a).mean() <= a
    assert (p_normal <= 0.001).mean() > 0.003  # the normal tail of the skewed sum: far above its level
    planted = _rated_hands(np.random.default_rng(11), [("m", "n", True)], 80, 6, 0.3, passive_share=0.25)
    hp = stats.hand_passivity_test(planted).row(0, named=True)
    assert hp["passive"] == 30 and hp["hp_p_value"] < 1e-6 and hp["hp_p_value"] < p.min() / 100
    # the per-decision score test on the same decisions (one multiplier on the rates, variance n r / (1 - r))
    k, n, r = planted["_y"].sum(), planted.height, 0.3
    z_dec = -((k - n * r) / (1 - r)) / np.sqrt(n * r / (1 - r))
    assert hp["hp_p_value"] < st.norm.sf(z_dec) / 100


def test_is_missing_reads_none_and_nan_of_any_float_kind():
    """detectors.base.is_missing: a test not made (None) or NaN, including NumPy's and Polars' floats; 0 is a figure."""
    import numpy as np
    import polars as pl

    from detectors.base import is_missing

    assert is_missing(None) and is_missing(float("nan")) and is_missing(np.float64("nan"))
    assert is_missing(pl.Series([None, float("nan")], dtype=pl.Float64).to_list()[1])
    assert not any(is_missing(x) for x in (0.0, 1e-300, np.float64(0.5), 3, "n/a"))


def test_predictive_count_tail_is_poisson_for_a_known_rate_and_beta_binomial_for_an_estimated_one():
    k, mu = np.array([0, 1, 2, 5]), np.array([0.3, 0.3, 0.002, 1.0])
    np.testing.assert_allclose(stats.predictive_count_tail(k, mu, 0.0), st.poisson.sf(k - 1, mu))
    # one bin, n = 3 decisions, no event in 80 baseline decisions under a Beta(0.047, 2.95) prior (issue 4's pattern):
    # the exact predictive (beta-binomial, stats.baseline_tail) of two events is ~2e-5, the plug-in Poisson 1.4e-6
    a, b, n, n0 = 0.047, 2.95, 3, 80
    s = n0 + a + b
    r = a / s
    exact = float(stats.baseline_tail(2, n, 0, n0, a, b))
    pred = float(stats.predictive_count_tail(2, n * r, n * (n - 1) * r * (1 - r) / (s + 1)))
    plug = float(stats.predictive_count_tail(2, n * r, 0.0))
    assert plug < 2e-6 and 1e-5 < exact < 3e-5
    assert pred == pytest.approx(exact, rel=0.1)
    assert np.isnan(stats.predictive_count_tail([1], [np.nan], [0.1])[0])


def test_predictive_count_tail_is_calibrated_for_rare_events_on_a_thin_baseline():
    """Honest players whose rates vary as Beta(0.1, 10) (mean 1 %), each seen 50 times against others and 5 times
    against the partner: at 1e-4 the plug-in Poisson tail at the posterior mean rejects twice as often as its level
    (a second event where the baseline saw none), the predictive tail no more than its level."""
    rng = np.random.default_rng(4)
    a, b, n, n0, m = 0.1, 10.0, 5, 50, 400_000
    rate = rng.beta(a, b, size=m)
    k0, k = rng.binomial(n0, rate), rng.binomial(n, rate)
    s = n0 + a + b
    r = (k0 + a) / s
    pred = stats.predictive_count_tail(k, n * r, n * (n - 1) * r * (1 - r) / (s + 1))
    plug = stats.predictive_count_tail(k, n * r, 0.0)
    for level in (1e-2, 1e-3, 1e-4, 1e-5):
        assert (pred <= level).mean() <= level
    assert (plug <= 1e-4).mean() > 1.5e-4


def test_robust_own_baseline_predictive_rare_tail_on_the_issue_4_pattern():
    """A commits with a weak hand in 2 of 3 spots against B, never in 80 spots against eight others; the population
    commits rarely (about 1 %, spread between players): the plug-in Poisson tail makes it a 1e-6 event, the
    predictive tail (the rate's posterior carried) does not; the default stays the Poisson tail."""
    import polars as pl

    from detectors.stats import robust_own_baseline

    rng = np.random.default_rng(5)
    rows = [{"player": "A", "opponent": "B", "commit": v} for v in (True, True, False)]
    rows += [{"player": "A", "opponent": x, "commit": False} for x in "CDEFGHIJ" for _ in range(10)]
    for i in range(60):  # the population: rates Beta(0.05, 3)
        r = rng.beta(0.05, 3.0)
        rows += [{"player": f"P{i}", "opponent": "A", "commit": bool(v)} for v in rng.random(60) < r]
    dec = pl.DataFrame(rows).with_columns(preflop=pl.lit(True), facing=pl.lit(True), hu=pl.lit(False),
                                          sbin=pl.lit(0, pl.Int8))
    ab = (pl.col("player") == "A") & (pl.col("opponent") == "B")
    plug = robust_own_baseline(dec, "commit", side="greater").filter(ab)
    same = robust_own_baseline(dec, "commit", side="greater", rare_tail="poisson").filter(ab)
    pred = robust_own_baseline(dec, "commit", side="greater", rare_tail="predictive").filter(ab)
    assert plug["n0"][0] == 80 and plug["observed"][0] == 2 and plug["expected"][0] < 0.01
    assert plug["p_value"][0] == same["p_value"][0] < 1e-5
    assert pred["expected"][0] == pytest.approx(plug["expected"][0])
    assert pred["p_value"][0] > 5 * plug["p_value"][0] and pred["p_value"][0] > 1e-5
    with pytest.raises(ValueError):
        robust_own_baseline(dec, "commit", side="greater", rare_tail="plug-in")


def test_robust_own_baseline_counts_and_first_pass_once_per_selection(monkeypatch):
    """The outliers of a test (soft play's explaining away), then the test itself with more outliers, then the
    per-decision rates: the counts and first pass are made once per (frame, selection) and reused, and every
    result equals the one made from scratch (caches cleared). Columns the counts do not read are not needed."""
    import polars as pl

    rng = np.random.default_rng(11)
    rows = []
    for p, opps in (("A", "BCDEFG"), ("B", "ACDE"), ("C", "ABDF"), ("D", "ABC")):
        for o in opps:
            rate = 0.05 if {p, o} == {"A", "B"} else 0.35  # A and B spare each other
            for i in range(120):
                rows.append({"player": p, "opponent": o, "aggr": bool(rng.random() < rate), "facing": bool(i % 3 == 0),
                             "preflop": bool(i % 4 == 0), "hu": True, "sbin": int(i % 5) if i % 7 else None,
                             "hand_id": f"{p}{o}{i}", "note": "x" * 20})
    dec = pl.DataFrame(rows).with_columns(pl.col("sbin").cast(pl.Int8))
    where = ~pl.col("facing")
    passes = []
    real = baselines._baseline_pass
    monkeypatch.setattr(baselines, "_baseline_pass", lambda *a, **k: passes.append(1) or real(*a, **k))

    def fresh(f):
        baselines._ROBUST_CACHE.clear()
        baselines._FIRST_CACHE.clear()
        return f()

    out = fresh(lambda: stats.baseline_outliers(dec, [("aggr", {"where": where, "side": "less"})]))
    assert len(passes) == 1 and len(baselines._FIRST_CACHE) == 1
    also = pl.DataFrame({"player": ["C"], "opponent": ["F"]})
    got = stats.robust_own_baseline(dec, "aggr", where=where, side="less", also_out=also)
    assert len(passes) == 2  # the second pass only: counts and first pass reused
    rated = stats.own_rates_per_decision(dec, "aggr", where=where, also_out=also, posterior=True)
    assert len(passes) == 2 and len(baselines._FIRST_CACHE) == 1
    # the same as from scratch, and the unread columns are not needed
    narrow = dec.select("player", "opponent", "aggr", "facing", "preflop", "hu", "sbin")
    ref_out = fresh(lambda: stats.baseline_outliers(narrow, [("aggr", {"where": where, "side": "less"})]))
    ref = fresh(lambda: stats.robust_own_baseline(narrow, "aggr", where=where, side="less", also_out=also))
    assert out.sort("player", "opponent").equals(ref_out.sort("player", "opponent"))
    assert {("A", "B"), ("B", "A")} <= set(out.rows())
    a, b = got.sort("player", "opponent"), ref.sort("player", "opponent")
    assert a.select("player", "opponent", "n", "observed").equals(b.select("player", "opponent", "n", "observed"))
    np.testing.assert_allclose(a.select(pl.exclude("player", "opponent")).to_numpy(),
                               b.select(pl.exclude("player", "opponent")).to_numpy(), rtol=1e-12, atol=0)
    ref_rated = fresh(lambda: stats.own_rates_per_decision(dec, "aggr", where=where, also_out=also, posterior=True))
    key = ["hand_id"]
    np.testing.assert_allclose(rated.sort(key).select("r", "ra", "rb").to_numpy(),
                               ref_rated.sort(key).select("r", "ra", "rb").to_numpy(), rtol=1e-12, atol=0)
    # A spares B: the test sees it against A's baseline without B
    ab = got.filter((pl.col("player") == "A") & (pl.col("opponent") == "B"))
    assert ab["p_value"][0] < 1e-4
    # another frame with the same decisions and more columns (soft play's, built from chip dumping's): no new pass,
    # the same result; a frame whose read columns differ is counted afresh
    again = stats.robust_own_baseline(dec, "aggr", where=where, side="less", also_out=also)
    before = len(passes)
    wider = dec.with_columns(extra=pl.lit(1))
    assert stats.robust_own_baseline(wider, "aggr", where=where, side="less", also_out=also) is again
    assert len(passes) == before
    changed = dec.with_columns(aggr=~pl.col("aggr"))
    flipped = stats.robust_own_baseline(changed, "aggr", where=where, side="less", also_out=also)
    assert len(passes) == before + 2
    assert flipped.sort("player", "opponent")["observed"].to_list() != a["observed"].to_list()
    # a freed frame's id taken by another frame does not find the freed frame's first pass
    import gc

    n_before = len(passes)
    del wider
    gc.collect()
    other = dec.with_columns(aggr=pl.col("aggr") & pl.col("hu").not_())  # all False: other counts, maybe the same id
    stats.robust_own_baseline(other, "aggr", where=where, side="less")
    assert len(passes) == n_before + 2


def test_chernoff_tail_stopping_at_the_minimum_equals_the_full_grid():
    """The tail stops each group once its convex exponent has risen and drops its rows; every group's minimum must be
    the full 64-point grid's, bit for bit (groups of 1-60 indicators, rates 1e-4-0.99, observed sums from 0 to far
    above the mean, so that minima fall at the start, inside and at the end of the grid)."""
    rng = np.random.default_rng(11)
    groups = 3000
    sizes = rng.integers(1, 61, groups)
    idx = np.repeat(np.arange(groups), sizes)
    pi = rng.uniform(1e-4, 0.99, idx.size)
    w = rng.exponential(1.0, idx.size)
    mean = np.bincount(idx, weights=pi * w, minlength=groups)
    s = mean * rng.choice([0.0, 0.5, 1.0, 1.5, 3.0, 10.0], groups)
    got = passivity._chernoff_tail(idx, pi, w, s, groups)
    # the full grid, written out plainly
    pic = np.clip(pi, 1e-300, 1.0)
    l1, lp = np.log1p(-np.minimum(pic, 1 - 1e-15)), np.log(pic)
    best = np.zeros(groups)
    for theta in np.geomspace(1e-3, 50.0, 64):
        k = np.bincount(idx, weights=np.logaddexp(l1, lp + theta * w), minlength=groups)
        best = np.minimum(best, k - theta * s)
    np.testing.assert_array_equal(got, np.exp(best))
    assert (got < 1).sum() > groups // 3 and (got == 1).sum() > 0  # both kinds of group were exercised


def test_detect_lists_tied_scores_in_a_fixed_order():
    """Signals of equal score (capped p-values) come out by accounts, whatever order the frames produced them in."""
    import polars as pl

    from detectors.base import Detector, Signal

    class Tied(Detector):
        kind = "soft_play"

        def __init__(self, order):
            super().__init__()
            self.order = order

        def fit(self, con):
            self.missing_ = []  # fit sets every fitted attribute (the contract)
            return self

        def score(self, con):
            return pl.DataFrame({"a": self.order, "score": [5.0 if x != "z" else 9.0 for x in self.order]})

        def threshold(self, scores):
            return scores

        def explain(self, con, row):
            return Signal(kind=self.kind, accounts=[row["a"], "x"], score=row["score"], flagged=False, summary="")

    runs = [[s.accounts[0] for s in Tied(order).detect(None)] for order in (["b", "z", "a", "c"], ["c", "a", "z", "b"])]
    assert runs[0] == runs[1] == ["z", "a", "b", "c"]


def test_untested_is_nan_unless_the_caller_asks_for_a_number():
    """One BH and one Fisher: a test not made (NaN) stays out of the family and the combination; its result is
    NaN, or ``untested`` where the caller needs a number."""
    p = np.array([0.01, 0.04, np.nan, 0.5])
    q = stats.bh_qvalues(p)
    assert np.isnan(q[2]) and q[0] == pytest.approx(0.01 * 3 / 1)  # m = 3: the NaN does not count
    q1 = stats.bh_qvalues(p, untested=1.0)
    assert q1[2] == 1.0 and np.array_equal(q1[[0, 1, 3]], q[[0, 1, 3]])
    assert np.isnan(stats.bh_qvalues([np.nan, np.nan])).all()
    assert stats.bh_qvalues([np.nan], untested=1.0).tolist() == [1.0]
    rows = np.array([[0.01, 0.2], [np.nan, 0.3], [np.nan, np.nan]])
    by_row = stats.fisher_combine(rows, untested=1.0)
    by_test = stats.fisher_combine(rows[:, 0], rows[:, 1], untested=1.0)
    assert np.array_equal(by_row, by_test)
    assert by_row[1] == pytest.approx(0.3) and by_row[2] == 1.0  # one test made: its own p; none: untested
    assert np.isnan(stats.fisher_combine(rows)[2])
    assert stats.fisher_combine(np.empty((0, 2))).shape == (0,)


def test_robust_baseline_cache_never_serves_a_dead_frames_result():
    """``also_out`` frames are cached by id: a new frame that takes a freed one's id (and length) must get its own
    result, not the freed frame's."""
    import gc

    import polars as pl

    rng = np.random.default_rng(3)
    rows = [{"player": p, "opponent": o, "aggr": bool(rng.random() < 0.3), "facing": False, "preflop": True,
             "hu": True, "sbin": int(i % 3)}
            for p in "ABCD" for o in "ABCD" if o != p for i in range(60)]
    dec = pl.DataFrame(rows).with_columns(pl.col("sbin").cast(pl.Int8))
    run = lambda out: stats.robust_own_baseline(dec, "aggr", also_out=out).sort("player", "opponent")  # noqa: E731
    fresh = {}
    for who in ("B", "C", "D"):
        baselines._ROBUST_CACHE.clear()
        fresh[who] = run(pl.DataFrame({"player": ["A"], "opponent": [who]}))
    # a freed frame's id taken by the next frame (CPython does it often, not always), made certain: once B is gone,
    # B's entry is keyed to C's id
    baselines._ROBUST_CACHE.clear()
    out_b = pl.DataFrame({"player": ["A"], "opponent": ["B"]})
    assert run(out_b).equals(fresh["B"])
    [(key, entry)] = [(k, v) for k, v in baselines._ROBUST_CACHE.items() if k[7] is not None]
    del out_b
    gc.collect()
    out_c = pl.DataFrame({"player": ["A"], "opponent": ["C"]})
    baselines._ROBUST_CACHE.clear()
    baselines._ROBUST_CACHE[key[:7] + ((id(out_c), len(out_c)),) + key[8:]] = entry
    assert run(out_c).equals(fresh["C"])
    assert not fresh["B"].equals(fresh["C"])  # the case matters: B's result would be wrong for C


def _street_world(seed: int = 11, river_rate: float = 0.0):
    """A and B bet into each other at their own 0.4 on the preflop, flop and turn (150 spots each per direction) and at
    ``river_rate`` on the river (40 spots each); against eight others everyone bets at 0.4 on every street."""
    import polars as pl

    rng = np.random.default_rng(seed)
    rows = []
    for p, q in (("A", "B"), ("B", "A")):
        for street, n in (("preflop", 150), ("flop", 150), ("turn", 150), ("river", 40)):
            rate = river_rate if street == "river" else 0.4
            rows += [{"player": p, "opponent": q, "street": street, "aggr": bool(v)} for v in rng.random(n) < rate]
    for p in "AB":
        for x in "CDEFGHIJ":
            for street in ("preflop", "flop", "turn", "river"):
                rows += [{"player": p, "opponent": x, "street": street, "aggr": bool(v)} for v in rng.random(60) < 0.4]
                rows += [{"player": x, "opponent": p, "street": street, "aggr": bool(v)} for v in rng.random(60) < 0.4]
    return pl.DataFrame(rows).with_columns(preflop=pl.col("street") == "preflop", facing=pl.lit(False), hu=pl.lit(True),
                                           sbin=pl.lit(2, pl.Int8))


def test_street_tests_find_a_deficit_on_one_street_that_the_pooled_test_dilutes():
    """A and B never bet into each other on the river and play normally elsewhere: the test pooled over the streets
    leaves them at p > 1e-3; the streets tested apart and Fisher-combined find them (p < 1e-4), naming the river.
    Pairs who play normally everywhere keep p-values spread over (0, 1)."""
    import polars as pl

    from detectors.stats import pool_directions, robust_own_baseline, street_tests

    dec = _street_world()
    ab = (pl.col("player") == "A") & (pl.col("opponent") == "B")
    pooled = pool_directions(robust_own_baseline(dec, "aggr", side="less"), side="less", skew=True).filter(ab)
    st = street_tests(dec, "aggr", side="less")
    row = st.filter(ab).row(0, named=True)
    assert pooled["p_value"][0] > 1e-3
    assert row["st_p_value"] < 1e-4 and row["st_street"] == "river" and row["st_k"] == 4
    assert row["st_observed"] == 0 and row["st_expected"] > 20
    honest = st.filter(~ab)["st_p_value"]
    assert len(honest) == 16 and honest.min() > 1e-3 and honest.max() > 0.3
    # nothing on the river either: no street stands out
    calm = street_tests(_street_world(river_rate=0.4), "aggr", side="less").filter(ab).row(0, named=True)
    assert calm["st_p_value"] > 0.01
