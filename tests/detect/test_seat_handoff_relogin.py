"""SeatHandoffDetector at a re-login on the seat's own device and network: someone else takes the seat on the
owner's own phone at the owner's own home, seconds after its logout (the helper in the next room). Nothing of
the login changes, so before such a login was no candidate at all and the play after it was never compared. With
``relogins`` (off by default) it is one: the play after it against all the account's other play, its speed shift
ranked among the population's simulated same-player moves (the null of a login that kept the device), each such
login judged in its own event (never pooled by the device, which says nothing of who sits at it). An honest owner
who logs out and back in on the same phone mid-event, playing on at his own pace, stays unflagged, and so do ten
honest phone-to-desktop movers. With ``relogins=False`` the re-login is no candidate, as before."""

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
HELPED, OWNER = "k01", "k02"


@pytest.fixture(scope="module")
def world():
    w = World(seed=84)
    names = [f"m{i:02d}" for i in range(40)] + [HELPED, OWNER]
    special = set(MOVERS) | {HELPED, OWNER}
    rng = np.random.default_rng(10)
    for n in names:
        w.account(n)
        w.styles[n] = regular_style(rng)
    cp = CP * EVERY / 60
    for i, n in enumerate(names):
        home = f"10.{i}.0.1"
        if n not in special:
            w.session(n, home, f"phone-{n}", at(-5), at(600))
            continue
        # the movers' desktop at home; the helped account's and the honest owner's own phone at their own home
        dev = f"desk-{n}" if n in MOVERS else f"phone-{n}"
        w.session(n, home, f"phone-{n}", at(-5), at(cp - GAP))
        w.session(n, home, dev, at(cp), at(110))
        w.session(n, home, f"phone-{n}", at(115), at(600))  # events 901, 902 on the phone again
    after = {n: (CP, replace(w.styles[n], log_ms=w.styles[n].log_ms - math.log(1.3))) for n in MOVERS}
    # the helper plays another game at another pace: looser, three times slower, a wider spread of times
    after[HELPED] = (CP, replace(w.styles[HELPED], vpip=0.6, aggr=0.15, log_ms=w.styles[HELPED].log_ms + math.log(3.0),
                                 sd_ms=0.75))
    order = [n for n in names if n not in special] + sorted(special)
    w.tournament("900", names, at(0), n_hands=100, every_s=EVERY, bust_order=order, styles_from=after)
    w.tournament("901", names, at(120), n_hands=60, every_s=EVERY, bust_order=order)
    w.tournament("902", names, at(200), n_hands=60, every_s=EVERY, bust_order=order)
    return w


@pytest.fixture(scope="module")
def det(con):
    d = SeatHandoffDetector(min_switch_shifts=10, relogins=True)  # a small world: ten switches of device to rank among
    sigs = d.detect(con)
    return d, sigs


def test_a_helper_at_the_owners_own_phone_and_home_is_a_candidate_and_flagged(det):
    d, sigs = det
    rows = event_rows(d, "900")
    assert HELPED in rows  # before: no candidate (neither the device nor the network changed)
    r = rows[HELPED]
    assert r["device"] == f"phone-{HELPED}" and not r["device_changed"] and not r["net_changed"]
    assert r["n_pooled"] == 1 and r["n_hist_dec"] > 50  # its own event; the account's other play the baseline
    flagged = {(s.accounts[0], s.tournaments[0]) for s in sigs if s.flagged}
    assert (HELPED, "900") in flagged


def test_an_owner_back_on_the_same_phone_and_the_honest_movers_are_not_flagged(det):
    d, sigs = det
    r = event_rows(d, "900")[OWNER]
    assert not r["device_changed"] and not r["net_changed"]
    flagged = {s.accounts[0] for s in sigs if s.flagged}
    assert not flagged & (set(MOVERS) | {OWNER})


def test_without_relogins_the_login_is_no_candidate(con):
    d = SeatHandoffDetector(min_switch_shifts=10, relogins=False)
    d.fit(con)
    assert HELPED not in event_rows(d, "900") and OWNER not in event_rows(d, "900")
    assert f"phone-{HELPED}" not in set(d.cand_.filter(d.cand_["account"] == HELPED)["device"].to_list())


def test_the_case_says_the_login_was_a_relogin(det, con):
    d, _ = det
    r = event_rows(d, "900")[HELPED]
    text = d._login_evidence(r)[0].text
    assert "a re-login on the device and network that held the seat" in text
    assert "re-login" not in d._login_evidence(event_rows(d, "900")["m30"])[0].text


def test_a_relogins_speed_is_ranked_among_the_populations_other_relogins_where_there_are_enough():
    """Thirty re-logins of thirty accounts whose pace moves after a break by about 0.3 in log time (sd 0.1), and one
    switch of device: a re-login 0.35 slower ranks in the middle of the other re-logins (a simulated move, with no
    break, would put it far out), one 1.5 slower beyond all of them; the device switch gets no p here. With fewer
    re-logins than ``min_switch_shifts`` none is ranked (NaN: the caller keeps the simulated moves' rank)."""
    import polars as pl
    rng = np.random.default_rng(3)
    n = 30
    shifts = np.concatenate([rng.normal(0.3, 0.1, n), [0.35, 1.5, 0.0]])
    df = pl.DataFrame({"account": [f"a{i}" for i in range(n + 3)],
                       "device_changed": [False] * (n + 2) + [True], "net_changed": [False] * (n + 2) + [True],
                       "time_shift": shifts, "time_shift_event": shifts})
    d = SeatHandoffDetector(min_switch_shifts=20, relogins=True)
    p, relog = d._relogin_shift_p(df)
    assert relog.sum() == n + 2 and not relog[-1] and np.isnan(p[-1])
    assert p[n] > 0.3 and p[n + 1] <= 1 / (n + 2)
    p_few, _ = SeatHandoffDetector(min_switch_shifts=40, relogins=True)._relogin_shift_p(df)
    assert np.isnan(p_few).all()
