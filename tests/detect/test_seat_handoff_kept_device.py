"""SeatHandoffDetector at a login that keeps the device: someone else takes the seat on the owner's own
phone, from another network, seconds after its logout. No device was changed, so nothing rescales the
decision times: the play after the login is compared with all the account's other play (as the
population's simulated same-player moves are), and its speed shift is ranked among those moves' own speed
drifts, not among the population's switches of device. Before, such a login had no timing baseline at
all (the account's decisions "under other devices" were none) and a helper who kept the owner's game but
not his pace went unseen. An honest owner whose phone only changes network mid-event, playing on at his
own pace, stays unflagged; so do ten honest phone-to-desktop movers (1.3 times faster on the desktop)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from test_identity_features_world import World, at, event_rows, regular_style

from detectors.seat_handoff import SeatHandoffDetector

EVERY = 45
CP = 30  # the round of the login in event 900
GAP = 6 / 60  # the login comes 6 s after the logout
MOVERS = [f"m{i:02d}" for i in range(30, 40)]
HELPED, NET_ONLY = "k01", "k02"


@pytest.fixture(scope="module")
def world():
    w = World(seed=83)
    names = [f"m{i:02d}" for i in range(40)] + [HELPED, NET_ONLY]
    special = set(MOVERS) | {HELPED, NET_ONLY}
    rng = np.random.default_rng(9)
    for n in names:
        w.account(n)
        w.styles[n] = regular_style(rng)
    cp = CP * EVERY / 60
    for i, n in enumerate(names):
        home = f"10.{i}.0.1"
        if n not in special:
            w.session(n, home, f"phone-{n}", at(-5), at(600))
            continue
        if n in MOVERS:  # the owner's desktop at home
            dev, ip = f"desk-{n}", home
        else:  # the owner's own phone, on a carrier's network (NET_ONLY) or at the helper's home (HELPED)
            dev, ip = f"phone-{n}", (f"100.64.{i}.9" if n == NET_ONLY else f"77.{i}.1.1")
        w.session(n, home, f"phone-{n}", at(-5), at(cp - GAP))
        w.session(n, ip, dev, at(cp), at(110))
        w.session(n, home, f"phone-{n}", at(115), at(600))  # events 901, 902 on the phone at home again
    after = {n: (CP, replace(w.styles[n], log_ms=w.styles[n].log_ms - math.log(1.3))) for n in MOVERS}
    # the helper keeps the owner's game, not his pace: three times slower, a wider spread of times
    after[HELPED] = (CP, replace(w.styles[HELPED], log_ms=w.styles[HELPED].log_ms + math.log(3.0), sd_ms=0.75))
    late = sorted(special)
    order = [n for n in names if n not in special] + late
    w.tournament("900", names, at(0), n_hands=100, every_s=EVERY, bust_order=order, styles_from=after)
    w.tournament("901", names, at(120), n_hands=60, every_s=EVERY, bust_order=order)
    w.tournament("902", names, at(200), n_hands=60, every_s=EVERY, bust_order=order)
    return w


@pytest.fixture(scope="module")
def det(con):
    d = SeatHandoffDetector(min_switch_shifts=10)  # a small world: ten switches of device to rank among
    sigs = d.detect(con)
    return d, sigs


def test_a_helper_on_the_owners_own_device_is_timed_against_the_owners_play_and_flagged(det):
    d, sigs = det
    r = event_rows(d, "900")[HELPED]
    assert r["device"] == f"phone-{HELPED}" and not r["device_changed"] and r["net_changed"]
    assert r["n_hist_dec"] > 50  # the account's own decisions on its phone are the baseline
    assert r["p_time"] < 0.05  # the spread of another person
    assert r["p_shift"] <= 2 / (1 + min(d.null_.size, d.null_match))  # three times slower: beyond every move
    flagged = {(s.accounts[0], s.tournaments[0]) for s in sigs if s.flagged}
    assert (HELPED, "900") in flagged


def test_an_owner_whose_phone_only_changes_network_and_honest_movers_are_not_flagged(det):
    d, sigs = det
    r = event_rows(d, "900")[NET_ONLY]
    assert not r["device_changed"] and r["net_changed"] and r["p_shift"] > 0.05
    flagged = {s.accounts[0] for s in sigs if s.flagged}
    assert not flagged & (set(MOVERS) | {NET_ONLY})


def test_the_case_says_the_speed_was_ranked_among_the_same_player_moves(det):
    d, _ = det
    r = event_rows(d, "900")[HELPED]
    text = d._timing_evidence(r)[0].text
    assert "simulated same-player moves (the device was kept" in text and f"p {r['p_shift']:.2g}" in text


def test_a_kept_devices_speed_beyond_every_move_is_read_from_the_moves_fitted_tail():
    """1,000 simulated same-player moves whose speed drifts by about 5 % (log shift sd 0.05): a helper 2.2 times
    slower on the owner's phone (log 0.79) lies beyond all of them, where a rank alone says no more than
    1 / 1,001; the moves' fitted tail (their distances' generalised Pareto fit, a light tail read as the
    exponential one, never as an end point beyond which p would be 0) puts it far below, and above 0. A shift of
    the moves' own size keeps its rank."""
    det = SeatHandoffDetector()
    rng = np.random.default_rng(11)
    det.null_shift_ = rng.normal(0.0, 0.05, 1000)
    det.null_after_ = rng.uniform(200.0, 400.0, 1000)
    p = det._kept_device_shift_p(np.array([0.79, 0.05, np.nan]), np.array([300.0, 300.0, 300.0]))
    assert 0.0 < p[0] < 1e-6
    assert 0.2 < p[1] < 0.5 and np.isnan(p[2])
