"""A device's events pooled (detectors/seat_handoff/candidates.py, ``_pool_devices``): the profile and spread of
the pooled decision times take each event's after-segment at its own pace. One person on one other device at a
quick pace in one event and a slow one in another is the same person (a pace differs from day to day); pooled at
their two paces the segments look like a wider spread than the account's own, which flagged honest device movers
(issue 32). A device whose times are spread otherwise in every event (another person) stays found."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from detectors.seat_handoff import candidates as candidates_module
from detectors.seat_handoff.candidates import CandidatesMixin
from detectors.seat_handoff.statistics import _device_time_many

BAND = 1.5  # the detector's default device band: only the speed part uses it, off here (the switches' null)
CLASS_MEANS = np.log([900.0, 2500.0, 7000.0])  # quick folds, ordinary, big decisions (log ms)


def _times(rng: np.random.Generator, n: int, shift: float, sd: float) -> tuple[np.ndarray, np.ndarray]:
    """``n`` decisions a class: log times around the class means moved by ``shift``, spread ``sd``."""
    c = np.repeat(np.arange(3), n)
    return CLASS_MEANS[c] + shift + rng.normal(0.0, sd, c.size), c


def _row(rng: np.random.Generator, shift: float, sd: float, base: tuple) -> dict:
    """One event's compared row, as ``_compare`` and ``_test_rows`` leave it, with only what the pooling reads."""
    ta, cta = _times(rng, 25, shift, sd)
    own = _device_time_many([ta], [cta], [base[0]], [base[1]], math.log(BAND), speed=False)
    empty = np.zeros(0)
    return {"_g2": 1.0, "_dof": 2, "_sb": empty, "_sa": empty, "_xb": empty, "_xa": empty, "_ra": empty,
            "_cra": empty, "_ta": ta, "_cta": cta, "_ntb": base[0].size, "_nrb": 0, "_base": base,
            "_hc": np.array([30, 10, 5]), "_ca": np.array([20, 8, 4]), "p_hist_mix": 0.5,
            "time_shift_event": float(own["shift"][0])}


def _pooled_p_time(monkeypatch, events: list[tuple[float, float]], seed: int) -> float:
    """The pooled ``p_time`` of one device's events (each ``(shift, sd)`` of its after-segment) against an
    account's own decisions (spread 0.3), by ``CandidatesMixin._pool_devices`` on rows made here."""
    rng = np.random.default_rng(seed)
    base = _times(rng, 150, 0.0, 0.3)
    monkeypatch.setattr(candidates_module, "time_baseline", lambda r: r["_base"])
    monkeypatch.setattr(candidates_module, "range_baseline", lambda r: (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    det = SimpleNamespace(has_sessions_=True, device_band=BAND, use_switch_null_=True, use_range=False)
    rows = [_row(rng, s, sd, base) for s, sd in events]
    CandidatesMixin._pool_devices(det, [rows])
    return rows[0]["p_time"]


def test_one_person_at_two_paces_is_not_a_wider_spread(monkeypatch):
    # the same profile and spread as the account's own, a quicker pace in one event and a slower one in the other
    # (the old pooling: p 1e-47 to 1e-41 on these draws)
    ps = [_pooled_p_time(monkeypatch, [(-0.7, 0.3), (0.7, 0.3)], seed) for seed in range(5)]
    assert min(ps) > 0.01, ps


def test_another_persons_spread_on_the_device_stays_found(monkeypatch):
    # a device whose times are spread twice as wide as the account's own in both events, at two paces
    ps = [_pooled_p_time(monkeypatch, [(-0.4, 0.6), (0.4, 0.6)], seed) for seed in range(5)]
    assert max(ps) < 1e-4, ps
