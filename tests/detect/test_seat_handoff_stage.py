"""The benign explanation of stage (detectors/seat_handoff/stage.py): the account's own play at the same hand of its
events without a switch sets the dispersion its switch's style tests are judged at."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff.queries import ACTS
from detectors.seat_handoff.stage import _f_p, prior_dispersion
from detectors.seat_handoff.statistics import _g2_interaction_vec, _g2_p

T0 = dt.datetime(2026, 1, 1)
N_HANDS, K = 60, 30


def _event(rng, drift: bool) -> tuple[np.ndarray, np.ndarray]:
    """An account's 60 hands of one event and the field's over the same hands: the field plays one mix
    throughout; the account the same mix before hand 30 and, with ``drift``, folds far more after it."""
    base = np.array([0.4, 0.2, 0.2, 0.1, 0.1])
    late = np.array([0.8, 0.1, 0.04, 0.03, 0.03]) if drift else base
    own = np.stack([rng.multinomial(5, base if j < K else late) for j in range(N_HANDS)]).astype(float)
    field = np.stack([rng.multinomial(30, base) for _ in range(N_HANDS)]).astype(float)
    return own, field


def _world(drift_accounts: set[str], seed: int = 0):
    """Five accounts, each with one switch event (tournament s-<acc>; A two, its second o-A-1, on the same
    device: pooled) and four events without a switch; the accounts in ``drift_accounts`` fold far more after
    hand 30 of every event, switch or not. Returns the detector (its ``field_`` set), the rows of the switch
    events and the accounts' history."""
    rng = np.random.default_rng(seed)
    det = SeatHandoffDetector()
    det.field_ = {}
    hist, rows = [], []
    for a in ["A", "B", "C", "D", "E"]:
        for e in range(5):
            tid = f"s-{a}" if e == 0 else f"o-{a}-{e}"
            own, field = _event(rng, a in drift_accounts)
            t = np.array([np.datetime64(T0 + dt.timedelta(days=e, minutes=j), "us") for j in range(N_HANDS)])
            det.field_[tid] = (t, np.array(["field"] * N_HANDS), field)
            hist.append(pl.DataFrame({"account": [a] * N_HANDS, "tournament_id": [tid] * N_HANDS,
                                      "started_at": t.astype("datetime64[us]").tolist(),
                                      **{f"n_{x}": own[:, i] for i, x in enumerate(ACTS)}}))
            if e == 0 or (a == "A" and e == 1):
                cb, ca = own[:K].sum(axis=0), own[K:].sum(axis=0)
                fb, fa = field[:K].sum(axis=0), field[K:].sum(axis=0)
                g2, dof = _g2_interaction_vec(np.array([[[cb, ca], [fb, fa]]]))
                hc = sum(h.filter(pl.col("account") == a).select([f"n_{x}" for x in ACTS]).to_numpy().sum(axis=0)
                         for h in hist) - ca
                rows.append({"account": a, "device": f"dev-{a}", "tournament_id": tid, "k": K,
                             "_g2": float(g2[0]), "_dof": int(dof[0]), "p_mix": float(_g2_p(g2, dof)[0]),
                             "_ca": ca, "_hc": hc, "p_hist_mix": 0.5})
    return det, rows, pl.concat(hist)


def test_a_habitual_late_drift_discounts_the_switch():
    """An account whose play moves late in every event, switch or not, carries that move into its switch: its
    style p is judged at its own same-stage dispersion and rises well above the chi-square's; an account whose
    switch alone moved keeps a small p."""
    det, rows, hist = _world({"A", "B"})
    sw = pl.DataFrame({"account": [r["account"] for r in rows], "tournament_id": [r["tournament_id"] for r in rows]})
    det._stage_baseline(rows, hist, sw)
    by = {r["account"]: r for r in rows}
    a = [r for r in rows if r["account"] == "A"]
    assert len(a) == 2
    # (each row's p_mix the pooled one, as ``_pool`` leaves it: here the two events' own)
    p_pooled = float(_g2_p(np.array([sum(r["_g2"] for r in a)]), np.array([sum(r["_dof"] for r in a)]))[0])
    assert p_pooled < 1e-6
    assert a[0]["stage_events"] == 3 and a[0]["stage_disp_field"] > 3 and a[0]["stage_mod_field"] > 2
    assert a[0]["p_mix_stage"] > 1000 * p_pooled
    assert a[0]["p_mix"] == max(a[0]["p_mix_chi2"], a[0]["p_mix_stage"])
    # an honest account without drift: its own dispersion near chance
    assert by["C"]["stage_disp_field"] < 2.5
    assert set(det.stage_prior_) == {"field", "hist"}


def test_a_switch_that_alone_moved_keeps_its_evidence():
    """The same late move in the switch event only (the account's other events steady) stays significant."""
    rng = np.random.default_rng(3)
    det, rows, hist = _world(set(), seed=2)
    # E's switch event: fold far more after hand 30, its four other events unchanged
    own, field = _event(rng, True)
    t, _, _ = det.field_["s-E"]
    det.field_["s-E"] = (t, np.array(["field"] * N_HANDS), field)
    hist = pl.concat([hist.filter(pl.col("tournament_id") != "s-E"),
                      pl.DataFrame({"account": ["E"] * N_HANDS, "tournament_id": ["s-E"] * N_HANDS,
                                    "started_at": t.tolist(), **{f"n_{x}": own[:, i] for i, x in enumerate(ACTS)}})])
    cb, ca = own[:K].sum(axis=0), own[K:].sum(axis=0)
    g2, dof = _g2_interaction_vec(np.array([[[cb, ca], [field[:K].sum(axis=0), field[K:].sum(axis=0)]]]))
    e = next(r for r in rows if r["account"] == "E")
    e.update(_g2=float(g2[0]), _dof=int(dof[0]), p_mix=float(_g2_p(g2, dof)[0]), _ca=ca)
    sw = pl.DataFrame({"account": [r["account"] for r in rows], "tournament_id": [r["tournament_id"] for r in rows]})
    det._stage_baseline(rows, hist, sw)
    assert e["p_mix_chi2"] < 1e-4
    assert e["stage_disp_field"] < 2.5
    assert e["p_mix"] < 1e-3


def test_prior_dispersion_recovers_a_common_dispersion():
    """Per-account dispersions drawn as scaled chi-squares around one common value give it back, with prior
    degrees of freedom infinite or large (no spread beyond sampling); spread out, a finite prior."""
    rng = np.random.default_rng(0)
    dof = rng.integers(4, 20, 400).astype(float)
    disp = 2.0 * rng.chisquare(dof) / dof
    s0, d0 = prior_dispersion(disp, dof)
    assert abs(s0 - 2.0) < 0.2 and d0 > 50
    het = np.exp(rng.normal(0, 0.8, 400)) * rng.chisquare(dof) / dof
    _, d0h = prior_dispersion(het, dof)
    assert np.isfinite(d0h) and d0h < 10
    assert np.isnan(prior_dispersion(disp[:2], dof[:2])[0])


def test_f_p_is_the_chi_square_at_dispersion_one_and_known():
    """At dispersion 1 known exactly (infinite degrees of freedom) the F p is the chi-square's; a larger
    dispersion, or one less well known, gives a larger p."""
    p1 = _f_p(np.array([20.0]), np.array([4]), np.array([1.0]), np.array([np.inf]))
    assert np.isclose(p1[0], sps.chi2.sf(20.0, 4))
    p2 = _f_p(np.array([20.0]), np.array([4]), np.array([2.0]), np.array([np.inf]))
    p3 = _f_p(np.array([20.0]), np.array([4]), np.array([2.0]), np.array([8.0]))
    assert p1[0] < p2[0] < p3[0]
