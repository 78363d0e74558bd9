"""Soft play's main test read street by street: each street's own p-value kept in the score frame (issue 32)."""

from __future__ import annotations

import numpy as np
import polars as pl

from tests.detect.conftest import build_world

STREETS = ("preflop", "flop", "turn", "river")


def test_street_tests_return_each_streets_p_value():
    """``street_tests`` returns each street's own p-value (``st_p_<street>``), the smallest being ``st_p``."""
    from detectors.stats import street_tests
    from tests.detect.test_stats import _street_world

    st = street_tests(_street_world(), "aggr", side="less")
    row = st.filter((pl.col("player") == "A") & (pl.col("opponent") == "B")).row(0, named=True)
    parts = [row[f"st_p_{s}"] for s in STREETS]
    assert row["st_p_river"] == row["st_p"] == min(parts) and row["st_p_river"] < 1e-4
    assert all(p is not None for p in parts)


def test_score_frame_keeps_each_streets_p_value_and_fishers_combination_of_them():
    """The detector's score frame carries ``st_p_<street>`` for every street; where each is made, the streets'
    ``st_p_value`` is Fisher's combination of them (``st_k`` parts), and the smallest is ``st_p``."""
    from scipy.stats import chi2

    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=16, n_hands=1500, seed=5)
    scores = SoftPlayDetector().fit(w.con).score(w.con)
    cols = [f"st_p_{s}" for s in STREETS]
    assert set(cols) <= set(scores.columns)
    made = scores.filter(pl.col("st_p_value").is_not_null())
    assert len(made) > 0
    P = made.select(cols).to_numpy().astype(float)
    k = (~np.isnan(P)).sum(axis=1)
    assert (k == made["st_k"].to_numpy()).all()
    fisher = chi2.sf(-2 * np.nansum(np.log(P), axis=1), 2 * k)
    assert np.allclose(fisher, made["st_p_value"].to_numpy(), rtol=1e-9, atol=1e-300)
    assert np.allclose(np.nanmin(P, axis=1), made["st_p"].to_numpy(), rtol=0)
