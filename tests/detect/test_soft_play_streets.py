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


def _one_street_world(b_spares: bool, seed: int = 3):
    """A and B bet into each other at the population's 0.4 on the preflop, flop and turn (150 spots per direction)
    and on the river (60 spots): A never bets into B there, B does not either when ``b_spares``; against eight
    others everyone bets at 0.4 on every street."""
    rng = np.random.default_rng(seed)
    rows = []
    for p, q in (("A", "B"), ("B", "A")):
        for street, n in (("preflop", 150), ("flop", 150), ("turn", 150), ("river", 60)):
            rate = 0.0 if street == "river" and (p == "A" or b_spares) else 0.4
            rows += [{"player": p, "opponent": q, "street": street, "aggr": bool(v)} for v in rng.random(n) < rate]
    for p in "AB":
        for x in "CDEFGHIJ":
            for street in STREETS:
                rows += [{"player": p, "opponent": x, "street": street, "aggr": bool(v)} for v in rng.random(60) < 0.4]
                rows += [{"player": x, "opponent": p, "street": street, "aggr": bool(v)} for v in rng.random(60) < 0.4]
    return pl.DataFrame(rows).with_columns(preflop=pl.col("street") == "preflop", facing=pl.lit(False), hu=pl.lit(True),
                                           sbin=pl.lit(2, pl.Int8))


def test_street_tests_give_each_directions_z_on_the_best_street():
    """``st_dz`` and ``st_dz_r`` are each direction's z on the street with the smallest p-value: both sides high
    where both spare each other on the river, only A's where A alone does."""
    from detectors.stats import street_tests

    ab = (pl.col("player") == "A") & (pl.col("opponent") == "B")
    both = street_tests(_one_street_world(True), "aggr", side="less").filter(ab).row(0, named=True)
    assert both["st_street"] == "river" and both["st_dz"] > 3 and both["st_dz_r"] > 3
    one = street_tests(_one_street_world(False), "aggr", side="less").filter(ab).row(0, named=True)
    assert one["st_street"] == "river" and one["st_dz"] > 3 and one["st_dz_r"] < 1


def _scores(**z):
    """One pair's score row with every ratio material and q under alpha, the mutual rule's z given in ``z``."""
    row = {"player": "A", "opponent": "B", "q_value": 0.001, "hu": 100, "aggr_ratio": 0.5, "chk_ratio": 0.5,
           "rse_ratio": 1.0, "fold_ratio": 1.0, "fld_ratio": 1.0, "hp_ratio": 1.0, "st_ratio": 0.5,
           "dir_z": 2.0, "dir_z_r": 0.4, "hdir_z": 0.3, "hdir_z_r": 0.2, "sdir_z": 0.1, "sdir_z_r": -0.5,
           "st_dz": 4.0, "st_dz_r": 3.0}
    return pl.DataFrame([{**row, **z}])


def test_mutual_rule_reads_each_sides_z_on_the_best_street():
    """A pair sparing each other on one street only: each side's z pooled over the streets (0.4 for one side) is
    under the mutual rule's 1.0, its z on that street (4.0, 3.0) is not. The rule reads the street's z
    (``street_mutual``, the default) and keeps the flag; without it the flag is dropped. A side whose street z is
    under the line (0.5) is still dropped."""
    from detectors.soft_play import SoftPlayDetector

    assert SoftPlayDetector().flag(_scores())["flagged"][0]
    assert not SoftPlayDetector(street_mutual=False).flag(_scores())["flagged"][0]
    assert not SoftPlayDetector().flag(_scores(st_dz_r=0.5))["flagged"][0]
