"""The slow hand-over test (detectors/seat_handoff/handover.py): the seconds a seat stood empty before the login that
took it, against this population's own re-logins of the same kind (the device's own left out), a device counted
once by its shortest hand-over (a person's pace repeats: its logins are not independent draws); made where the
two-places test is not (the homes' labels change).

The world: 30 accounts; t00-t04 move to a tablet 15 s after a logout in event 901, their game unchanged; 25 of them
moved yesterday from one device to another 20 to 50 s after a logout, each login on a network of its own (the null
of a change of device: the line is the longest of their gaps, and no re-login on one device leaves a home: no
two-places test); t05's helper takes the seat on three days (events 900, 902, 904) three minutes after the owner's
logout, playing the owner's game; t20, an honest mover, moves to a desktop 12 s after a logout in event 900 and plays
another game (his phone starts his play on the other days); with ``slow_owner`` t21's own laptop (which also starts
t21's play) takes t21's seat four minutes after a logout on the same three days (an owner slow to come back: his
rows are not tested, and the population's owners come back slower than its re-logins allow: the test is not
made)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from test_identity_features_world import World, at, event_rows
from test_seat_handoff_two_places import AFTER, CP, EVERY, OWNER

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff.handover import owner_slow, slow_counts, slow_law, slow_product_p
from detectors.seat_handoff.places import product_p

DAY = 24 * 60
DAYS = (0, DAY, 2 * DAY)


def build_slow_world(slow_owner: bool) -> World:
    """The world of this module's docstring."""
    w = World(seed=8)
    names = w.accounts("t", 30)
    cp = CP * EVERY / 60
    special = ("t05", "t20", "t21")
    for i, n in enumerate(names):
        if n in special:
            continue
        if i >= 5:  # yesterday: a move to another device, a new network each login
            gap = (20 + 30 * (i - 5) / 24) / 60
            w.session(n, f"10.{i}.1.1", f"phone-{n}", at(-DAY), at(-DAY + 30))
            w.session(n, f"10.{i}.2.1", f"pc-{n}", at(-DAY + 30 + gap), at(-DAY + 60))
        for k, day in enumerate(DAYS):
            if i < 5 and day == 0:  # t00-t04 move to a tablet 15 s after a logout in event 901, their game unchanged
                w.session(n, f"10.{i}.3.1", f"pc-{n}", at(-5), at(120 + cp - 0.25))
                w.session(n, f"10.{i}.9.1", f"tab-{n}", at(120 + cp), at(600))
                continue
            w.session(n, f"10.{i}.{3 + k}.1", f"pc-{n}", at(day - 5), at(day + 600))
    for k, day in enumerate(DAYS):
        # t05: the owner, then three minutes later a helper on a machine of his own
        w.session("t05", f"10.5.{3 + k}.1", "pc-t05", at(day - 5), at(day + cp - 3))
        w.session("t05", f"77.5.{k}.1", "helper-t05", at(day + cp), at(day + 600))
        if slow_owner:
            w.session("t21", f"10.21.{3 + k}.1", "pc-t21", at(day - 5), at(day + cp - 4))
            w.session("t21", f"10.21.{6 + k}.1", "laptop-t21", at(day + cp), at(day + 600))
            w.session("t21", f"10.21.{9 + k}.1", "laptop-t21", at(day + 700), at(day + 760))
        else:
            w.session("t21", f"10.21.{3 + k}.1", "pc-t21", at(day - 5), at(day + 600))
        if day == 0:  # t20: the owner moves to his desktop 12 s after the logout
            w.session("t20", "10.20.3.1", "phone-t20", at(-5), at(cp - 0.2))
            w.session("t20", "10.20.4.1", "desk-t20", at(cp), at(600))
        else:
            w.session("t20", f"10.20.{3 + k}.1", "phone-t20", at(day - 5), at(day + 600))
    for n in special:
        w.styles[n] = OWNER
    order = [n for n in names if n not in special] + list(special)
    for k, day in enumerate(DAYS):
        styles = {"t20": (CP, AFTER)} if day == 0 else {}
        w.tournament(str(900 + 2 * k), names, at(day), n_hands=100, every_s=EVERY, bust_order=order,
                     styles_from=styles)
        w.tournament(str(901 + 2 * k), names, at(day + 120), n_hands=60, every_s=EVERY, bust_order=order)
    return w


@pytest.fixture(scope="module", params=[False, True], ids=["no-slow-owner", "slow-owner"])
def world(request):
    return build_slow_world(request.param)


@pytest.fixture(scope="module")
def run(con):
    d = SeatHandoffDetector(slow_handover=True)
    return d, d.detect(con)


def test_the_helpers_slow_hand_overs_count_together_against_the_populations_re_logins(run):
    d, _ = run
    # the homes' labels change at every login here: no two-places test, the slow hand-over is made
    k, n = d.places_null_
    assert (k + 1) / (n + 1) > d.fdr
    h = event_rows(d, "900")["t05"]
    if d.slow_owner_[0] > 0:
        # t21's laptop, an owner device, slow on its three days: the owners' habit (3 of 3 slow), no test made
        assert d.slow_owner_[:2] == (3, 3) and d.slow_owner_[2] <= d.fdr
        assert all(np.isnan(r["p_slow"]) for r in d.scores_.iter_rows(named=True))
        return
    assert d.slow_owner_[0] == 0
    assert (h["slow_logins"], h["slow_shown"]) == (3, 3)
    # the null: the other accounts' re-logins on another device (the helper's own left out), the line the longest
    assert h["slow_rank"] == 1 and h["slow_line"] < 60
    # the device counts once: one chance of 1 / (n + 1), not three
    r = 1 / (h["slow_null"] + 1)
    assert math.isclose(h["p_slow"], r)
    assert math.isclose(h["p_event"], float(product_p(np.array([h["p_play"]]), np.array([r]), r)[0]))
    assert h["p_event"] < h["p_play"] / 10
    # the honest mover: quick, not slow, pays the law's price (below 2)
    m = event_rows(d, "900")["t20"]
    assert (m["slow_logins"], m["slow_shown"]) == (1, 0) and m["p_slow"] == 1.0
    assert m["p_play"] < m["p_event"] < 2 * m["p_play"]


def test_the_helper_is_flagged_with_the_slow_hand_over_and_not_without_it(con, run):
    d, sigs = run
    flagged = {(s.accounts[0], s.tournaments[0]) for s in sigs if s.flagged}
    assert not any(a in ("t20", "t21") for a, _ in flagged)
    off = SeatHandoffDetector()  # the default: no slow hand-over test
    assert not any(s.flagged and s.accounts == ["t05"] for s in off.detect(con))
    assert np.isnan(off.scores_["p_slow"].to_numpy()).all()
    if d.slow_owner_[0]:
        return
    assert ("t05", "900") in flagged
    s = next(s for s in sigs if s.accounts == ["t05"] and s.tournaments == ["900"])
    ev = next(e for e in s.evidence if e.name == "slow hand-over")
    assert "3 of them after the seat stood empty longer than" in ev.text and "re-logins on another device" in ev.text
    assert "counted once, by its shortest hand-over" in ev.text
    assert "A slow hand-over (counted in the p-value" in s.benign


def test_slow_counts_leave_the_device_out_and_count_the_owners():
    gaps = pl.DataFrame({"account": ["a"] * 3 + [f"o{i}" for i in range(39)],
                         "device": ["h"] * 3 + [f"d{i}" for i in range(39)],
                         "kept": [False] * 42, "gap": [200.0] * 3 + [10.0 + i for i in range(39)]})
    cand = pl.DataFrame({"account": ["a"] * 3 + ["b"], "session": ["s1", "s2", "s3", "s4"],
                         "device": ["h", "h", "h", "k"], "device_changed": [True] * 4,
                         "since_logout": [200.0, 200.0, 200.0, 30.0], "dev_own_sessions": [0, 0, 0, 2]})
    c = {(r["account"], r["device"]): r for r in slow_counts(cand, gaps, 600.0, 0.05).iter_rows(named=True)}
    # a's own three long gaps are not in its null: 39 others, the line their 2nd longest (j = 2: 2 / 40 <= 0.05)
    assert (c["a", "h"]["slow_null"], c["a", "h"]["slow_rank"], c["a", "h"]["slow_line"]) == (39, 2, 47.0)
    assert (c["a", "h"]["slow_logins"], c["a", "h"]["slow_shown"]) == (3, 3)
    # b's device is not in the re-logins: all 42 are its null, a's three the longest
    assert (c["b", "k"]["slow_null"], c["b", "k"]["slow_line"], c["b", "k"]["slow_shown"]) == (42, 200.0, 0)
    # the owners' habit: b's device is an owner's, 0 slow of 1
    assert owner_slow(slow_counts(cand, gaps, 600.0, 0.05), 0.05) == (0, 1, 1.0)


def test_the_rank_law_is_exact_and_the_product_valid():
    rng = np.random.default_rng(3)
    n, j = 30, 1
    for big_m in (1, 2, 4):
        g = slow_law(big_m, n, j)
        # exchangeable gaps: the device's M among n + M, counted beyond the j-th longest of the others
        sims = 60_000
        x = rng.exponential(size=(sims, n + big_m))
        line = np.sort(x[:, :n], axis=1)[:, -j]
        m = (x[:, n:] > line[:, None]).sum(axis=1)
        for k in range(1, big_m + 1):
            assert abs((m >= k).mean() - g[k]) < 4 * math.sqrt(g[k] * (1 - g[k]) / sims) + 1e-4
        u = rng.uniform(size=sims)
        _, p = slow_product_p(u, m, np.full(sims, big_m), np.full(sims, n), np.full(sims, j))
        for a in (0.001, 0.01, 0.05):
            assert (p <= a).mean() <= a * 1.1 + 3e-4
    assert np.allclose(slow_law(1, 39, 2), [1.0, 0.05, 0.0])
    # no test: the row's p unchanged, no statistic
    u = rng.uniform(size=10)
    t, p = slow_product_p(u, np.zeros(10), np.zeros(10), np.zeros(10), np.zeros(10))
    assert np.isnan(t).all() and np.array_equal(p, u)
