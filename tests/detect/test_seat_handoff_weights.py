"""The identity's rank as the weight of a weighted Benjamini-Hochberg, in place of its p-value in Fisher's method
(detectors/seat_handoff/identity.py ``identity_weights``, detector.py ``identity_weight``)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from detectors import stats as mt
from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff.identity import identity_weights


def _population():
    cols = ["account", "device", "device_changed", "dev_own_sessions", "new_net", "net_accounts"]
    rows = [(f"own'{i}", f"d{i}", True, 3, True, 40) for i in range(14)]  # owners' devices from a carrier's network
    rows += [(f"home:{i}", f"t{i}", True, 0, True, 1) for i in range(5)]  # take-over-only on a new home network
    rows += [("helped\\1", "h1", True, 0, True, 1), ("kept", "k", False, 0, True, 1)]
    return pl.DataFrame([dict(zip(cols, r)) for r in rows], schema={
        "account": pl.Utf8, "device": pl.Utf8, "device_changed": pl.Boolean, "dev_own_sessions": pl.Int64,
        "new_net": pl.Boolean, "net_accounts": pl.Int64})


def test_the_weights_are_the_ranks_inverse_mean_one_and_the_unranked_rows_neutral():
    p_id = np.array([0.25, 0.5, 1.0, np.nan, 0.25])
    neutral = np.array([False, False, False, False, True])
    w = identity_weights(p_id, neutral)
    assert math.isclose(w.mean(), 1.0)
    assert math.isclose(w[0] / w[1], 2.0) and math.isclose(w[1] / w[2], 2.0)  # 1 / p among the ranked rows
    assert math.isclose(w[3], 1.0) and math.isclose(w[4], 1.0)  # no device ranked, a two-places row: neutral
    assert np.allclose(identity_weights(np.array([np.nan, 0.5]), np.array([False, True])), 1.0)  # none ranked


def test_weighted_bh_keeps_the_false_discovery_rate_under_the_null():
    # every row null, its weight drawn from a population's identity ranks independently of the play's p: the
    # chance of any rejection (the false-discovery rate under the global null) at most the level
    rng = np.random.default_rng(7)
    reps, m, alpha = 4000, 40, 0.05
    any_rej = 0
    for _ in range(reps):
        p_id = rng.choice([1.0, 0.6, 0.3, 0.1], size=m, p=[0.4, 0.3, 0.2, 0.1])
        w = identity_weights(p_id, np.zeros(m, bool))
        q = mt.bh_qvalues(np.minimum(1.0, rng.uniform(size=m) / w))
        any_rej += bool((q <= alpha).any())
    assert any_rej / reps <= alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)


def _rows():
    return pl.DataFrame({"account": ["helped\\1", "own'0", "kept", "home:0"], "device": ["h1", "d0", "k", "t0"],
                         "p_value": [6e-6, 6e-6, 6e-6, 6e-6]})


def test_a_strong_play_shift_is_not_diluted_by_a_middling_identity_rank():
    det = SeatHandoffDetector(identity_weight=True)
    det.has_sessions_, det.missing_ = True, []
    df = det._with_identity(_rows(), _population())
    fisher = dict(zip(df["account"], df["p_value"]))
    assert fisher["helped\\1"] > 4 * 6e-6  # Fisher's method: a rank of 6 / 20 takes the play's 6e-6 to 2.6e-5
    df = det._weighted(df.with_columns(p_two_places=pl.Series([np.nan, np.nan, np.nan, 1e-3])))
    out = {r["account"]: r for r in df.iter_rows(named=True)}
    assert out["helped\\1"]["p_value"] == 6e-6  # the play's p alone, the identity in the weight
    assert out["helped\\1"]["id_weight"] > 1.0 > out["own'0"]["id_weight"]  # a device like the owners': below 1
    assert math.isclose(out["kept"]["id_weight"], 1.0)  # no device ranked
    assert math.isclose(out["home:0"]["id_weight"], 1.0)  # the two-places row keeps its p and weight 1
    assert out["home:0"]["p_value"] == fisher["home:0"]
    assert math.isclose(df["id_weight"].mean(), 1.0)


def test_off_by_default_and_not_made_without_the_identity():
    det = SeatHandoffDetector()
    det.has_sessions_, det.missing_ = True, []
    df = det._with_identity(_rows(), _population()).with_columns(p_two_places=pl.lit(float("nan")))
    assert det._weighted(df).columns == df.columns  # no weight: Fisher's method as before
    few = SeatHandoffDetector(identity_weight=True, min_switch_shifts=50)
    few.has_sessions_, few.missing_ = True, []
    df = few._with_identity(_rows(), _population()).with_columns(p_two_places=pl.lit(float("nan")))
    assert "id_weight" not in few._weighted(df).columns


def test_the_case_tells_the_weight():
    det = SeatHandoffDetector(identity_weight=True)
    det.has_sessions_ = True
    row = {"account": "helped\\1", "tournament_id": "t'1", "session": "s9", "cp_time": "2026-03-02 10:00:00",
           "device": "h1", "prev_device": "d0", "ip": "77.7.7.7", "new_device": True, "new_net": True, "n_pooled": 1,
           "takeover_only": False, "two_places": False, "other_switches": 0, "events_played": 3, "p_value": 6e-6,
           "p_event": 6e-6, "p_play": 6e-6, "p_identity": 0.3, "id_n": 20, "id_signs": 3, "id_takeover_only": True,
           "id_new_net": True, "id_home_net": True, "id_weight": 2.5, "p_weighted": 2.4e-6, "p_two_places": None}
    e = {e.name: e for e in det._login_evidence(row)}["identity of the device that took the seat"]
    assert "weighted Benjamini-Hochberg 2.5" in e.text and "Fisher" not in e.text
