"""The identity side of a seat hand-off: the device that took the seat ranked among the population's own
switch devices, and combined with the play's p-value (detectors/seat_handoff/identity.py)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy.stats import chi2

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff.identity import identity_p


def _cand(rows):
    cols = ["account", "device", "device_changed", "dev_own_sessions", "new_net", "net_accounts"]
    return pl.DataFrame([dict(zip(cols, r)) for r in rows], schema={
        "account": pl.Utf8, "device": pl.Utf8, "device_changed": pl.Boolean, "dev_own_sessions": pl.Int64,
        "new_net": pl.Boolean, "net_accounts": pl.Int64})


def _population():
    rows = [(f"own'{i}", f"d{i}", True, 3, False, 1) for i in range(16)]  # owners' known devices at home
    rows += [(f"cell:{i}", f"c{i}", True, 0, True, 40) for i in range(3)]  # switchers on a carrier's network
    rows += [("helped\\1", "h1", True, 0, True, 1), ("helped\\1", "h1", True, 0, False, 1)]  # two events
    rows += [("same", None, True, 0, True, 1), ("kept", "k", False, 0, True, 1)]  # not ranked: no device change
    return _cand(rows)


def test_a_takeover_only_device_on_a_new_home_network_ranks_first_among_the_population_switches():
    ids = identity_p(_population(), household_max=4)
    by = {(r["account"], r["device"]): r for r in ids.iter_rows(named=True)}
    assert set(by) == {(f"own'{i}", f"d{i}") for i in range(16)} | {(f"cell:{i}", f"c{i}") for i in range(3)} | {
        ("helped\\1", "h1")}
    n = 20
    assert all(r["id_n"] == n for r in by.values())
    h = by["helped\\1", "h1"]
    assert (h["id_takeover_only"], h["id_new_net"], h["id_home_net"], h["id_signs"]) == (True, True, True, 3)
    assert math.isclose(h["p_identity"], 1 / n)  # its own device is the one as foreign
    assert all(math.isclose(by[f"cell:{i}", f"c{i}"]["p_identity"], 4 / n) for i in range(3))  # shared network
    assert all(by[f"own'{i}", f"d{i}"]["p_identity"] == 1.0 for i in range(16))  # no sign: nothing to rank


def test_the_play_and_the_identity_are_combined_and_a_kept_device_is_not_ranked():
    det = SeatHandoffDetector()
    det.has_sessions_, det.missing_ = True, []
    df = pl.DataFrame({"account": ["helped\\1", "kept", "own'0"], "device": ["h1", "k", "d0"],
                       "p_value": [0.02, 0.02, 0.02]})
    out = det._with_identity(df, _population())
    p = dict(zip(out["account"], out["p_value"]))
    assert math.isclose(p["helped\\1"], chi2.sf(-2 * (math.log(0.02) + math.log(1 / 20)), 4))  # Fisher
    assert math.isclose(p["kept"], 0.02)  # the device that held the seat: the play alone
    assert p["own'0"] > 0.02  # a switch with no foreign sign weighs against
    assert out["p_play"].to_list() == [0.02] * 3
    off = SeatHandoffDetector(identity=False)
    off.has_sessions_ = True
    assert np.allclose(off._with_identity(df, _population())["p_value"].to_numpy(), 0.02)


def test_not_made_with_too_few_switch_devices_to_rank_among():
    det = SeatHandoffDetector(min_switch_shifts=21)  # the population has 20 switch devices
    det.has_sessions_, det.missing_ = True, []
    df = pl.DataFrame({"account": ["helped\\1"], "device": ["h1"], "p_value": [0.02]})
    out = det._with_identity(df, _population())
    assert math.isclose(out["p_value"][0], 0.02) and out["p_identity"][0] == 1 / 20
    assert any("identity" in m for m in det.missing_)


def test_the_case_tells_the_identity_and_its_rank():
    det = SeatHandoffDetector()
    det.has_sessions_ = True
    row = {"account": "helped\\1", "tournament_id": "t'1", "session": "s9", "cp_time": "2026-03-02 10:00:00",
           "device": "h1", "prev_device": "d0", "ip": "77.7.7.7", "new_device": True, "new_net": True, "n_pooled": 1,
           "takeover_only": False, "two_places": False, "other_switches": 0, "events_played": 3, "p_value": 0.004,
           "p_event": 0.004, "p_play": 0.02, "p_identity": 0.05, "id_n": 20, "id_signs": 3, "id_takeover_only": True,
           "id_new_net": True, "id_home_net": True}
    ev = {e.name: e for e in det._login_evidence(row)}
    e = ev["identity of the device that took the seat"]
    assert (e.value, e.n, e.p_value) == (3.0, 20, 0.05)
    assert "never starts play of its own" in e.text and "population's 20 devices" in e.text and "Fisher" in e.text
