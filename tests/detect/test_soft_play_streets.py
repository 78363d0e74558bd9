"""Soft play's streets combined other than by Fisher's method: the min-p and the truncated product (issue 32)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest


def test_min_p_and_truncated_product_keep_their_level_under_independent_uniform_parts():
    """Five independent uniform parts, one of them not made in a fifth of the rows: the Šidák min-p and the
    truncated product (tau 0.05) reject at their level (0.05 / 0.01 / 0.001 within Monte Carlo error)."""
    from detectors.stats import sidak_min_p, truncated_product_pvalue

    rng = np.random.default_rng(11)
    n = 60_000
    P = rng.uniform(size=(n, 5))
    P[rng.uniform(size=n) < 0.2, 4] = np.nan
    for f in (sidak_min_p, lambda x: truncated_product_pvalue(x, 0.05)):
        p = f(P)
        for a in (0.05, 0.01, 0.001):
            assert abs((p <= a).mean() - a) < 4 * np.sqrt(a * (1 - a) / n) + 1e-4
    assert np.isnan(sidak_min_p(np.full((1, 3), np.nan))[0])
    assert truncated_product_pvalue(np.array([[0.5, 0.9, np.nan]]))[0] == 1.0


def test_one_soft_street_keeps_its_evidence_where_fishers_method_dilutes_it():
    """One street at p 1e-6 and four parts that do not move: Fisher's method over the five reads about 1e-4, the
    min-p 5e-6 (m p), the truncated product in between; several moderate parts (0.01 each) still add up in Fisher's
    method and the truncated product, not in the min-p."""
    from detectors.stats import fisher_combine, sidak_min_p, truncated_product_pvalue

    one = np.array([[1e-6, 0.7, 0.6, 0.9, 0.8]])
    assert sidak_min_p(one)[0] == pytest.approx(5e-6, rel=1e-3)
    assert fisher_combine(one)[0] > 20 * sidak_min_p(one)[0]
    assert sidak_min_p(one)[0] < truncated_product_pvalue(one)[0] < fisher_combine(one)[0]
    several = np.array([[0.01, 0.01, 0.01, 0.8, 0.9]])
    assert truncated_product_pvalue(several)[0] < 1e-3 and fisher_combine(several)[0] < 2e-3
    assert sidak_min_p(several)[0] > 0.04


def test_street_tests_return_each_streets_p_value():
    """``street_tests`` returns each street's own p-value (``st_p_<street>``), the smallest being ``st_p``."""
    from detectors.stats import street_tests
    from tests.detect.test_stats import _street_world

    st = street_tests(_street_world(), "aggr", side="less")
    row = st.filter((pl.col("player") == "A") & (pl.col("opponent") == "B")).row(0, named=True)
    parts = [row[f"st_p_{s}"] for s in ("preflop", "flop", "turn", "river")]
    assert row["st_p_river"] == row["st_p"] == min(parts) and row["st_p_river"] < 1e-4
    assert all(p is not None for p in parts)


def test_streets_min_p_with_the_support_keeps_the_level_and_fisher_stays_the_default():
    """SoftPlayDetector._combined_p with ``street_combine="streets_minp"``: under the null (independent uniform
    street parts, some not made, and the preflop support) the main p-value is uniform; the default reads the
    streets by Fisher's method as before; a pair soft on one street only (p 1e-6 there) reads about m p with the
    min-p, ten times less than by Fisher's method."""
    from scipy.stats import chi2

    from detectors.soft_play import SoftPlayDetector

    rng = np.random.default_rng(5)
    n = 60_000
    parts = rng.uniform(size=(n, 4))
    parts[rng.uniform(size=(n, 4)) < 0.25] = np.nan
    parts[:, 0] = np.where(np.isnan(parts).all(axis=1), rng.uniform(size=n), parts[:, 0])
    parts[0] = [1e-6, 0.6, 0.7, 0.8]
    k = (~np.isnan(parts)).sum(axis=1)
    st = chi2.sf(-2 * np.nansum(np.log(parts), axis=1), 2 * k)
    pre = rng.uniform(size=n)
    pre[0] = 0.5
    cols = {f"st_p_{s}": parts[:, i] for i, s in enumerate(("preflop", "flop", "turn", "river"))}
    u = pl.DataFrame({"st_p_value": st, "st_k": k, "pre_p_value": pre, "chk_p_value": rng.uniform(size=n),
                      "rse_p_value": np.ones(n), "fld_p_value": np.ones(n), **cols}).with_columns(
        pl.col(c).fill_nan(None) for c in cols)
    kw = {"hand_test": False, "test_weights": (0.9, 0.05, 0.05)}
    fisher = SoftPlayDetector(**kw)._combined_p(u)["main_p_value"].to_numpy()
    smin = SoftPlayDetector(street_combine="streets_minp", **kw)._combined_p(u)["main_p_value"].to_numpy()
    for main in (fisher, smin):
        for a in (0.05, 0.01, 0.001):
            assert abs((main[1:] <= a).mean() - a) < 4 * np.sqrt(a * (1 - a) / n) + 1e-4
    assert smin[0] < 1e-4 and fisher[0] > 10 * smin[0]


def test_check_max_rate_caps_the_check_tests_own_rates_only_when_asked():
    """``check_max_rate`` reaches the check test's baseline arguments (its pooled test, its streets and the hand test
    read them); by default the check test keeps the statistics' own cap, the preflop test its 0.95."""
    from detectors.soft_play import SoftPlayDetector

    assert "max_rate" not in SoftPlayDetector()._baseline_args("chk")[1]
    assert SoftPlayDetector(check_max_rate=0.95)._baseline_args("chk")[1]["max_rate"] == 0.95
    assert SoftPlayDetector(check_max_rate=0.95)._baseline_args("pre")[1]["max_rate"] == 0.95
    assert "max_rate" not in SoftPlayDetector(check_max_rate=0.95)._baseline_args("rse")[1]
