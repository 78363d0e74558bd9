"""SeatHandoffDetector and the hand histories' clock: a hand's start is recorded in whole seconds,
so a login a fraction of a second after the recorded start of an event's last hand may precede
that hand (``hand_clock_s``). A helper's machine that takes the seat for the last hand of an event
(the account busts in it) logged in *after* the recorded start: read as exact, that login lies
outside every span of the account's tournament play and counts as the device starting play of its
own, the mark of an owner's machine, and the helper's other take-over is no longer judged as one.

t05: the owner plays at home (yesterday too); a helper takes the seat from his own home in event
900 (a weak shift: another game at the owner's speed) and again 0.4 s after the recorded start of
t05's last hand of event 901. t21: the same take-over in 900 by his own laptop at a second place
of his, which logs in 1.5 s after the recorded start of his last hand of 901, beyond the clock's
second: the laptop starts play of its own there (an owner's machine), with either setting."""

from __future__ import annotations

import datetime as dt

import pytest
from test_identity_features_world import Style, World, at, event_rows

from detectors.seat_handoff import SeatHandoffDetector

EVERY = 45
CP = 30  # the round of the take-over / move in event 900
GAP = 5 / 60  # the new device logs in 5 s after the logout
OWNER = Style(vpip=0.24, pfr=0.16, aggr=0.5, size=0.66, log_ms=7.9, sd_ms=0.4)
# another game (looser, more passive, bigger bets) at the owner's speed: a weak shift
AFTER = Style(vpip=0.38, pfr=0.1, aggr=0.32, size=0.95, log_ms=7.9, sd_ms=0.4)
SPECIAL = ("t05", "t21")
S = dt.timedelta(seconds=1)


def _last_hand(w: World, acc: str, tid: str) -> dt.datetime:
    hands = {r[0]: r[13] for r in w.rows["hands"] if r[8] == tid}
    return max(hands[r[0]] for r in w.rows["seats"] if r[2] == acc and r[0] in hands)


@pytest.fixture(scope="module")
def world():
    w = World(seed=8)
    names = w.accounts("t", 30)
    for n in SPECIAL:
        w.styles[n] = OWNER
    order = [n for n in names if n not in SPECIAL] + list(SPECIAL)
    w.tournament("900", names, at(0), n_hands=100, every_s=EVERY, bust_order=order,
                 styles_from={n: (CP, AFTER) for n in SPECIAL})
    w.tournament("901", names, at(120), n_hands=60, every_s=EVERY, bust_order=order)
    last = {n: _last_hand(w, n, "901") for n in SPECIAL}
    cp = CP * EVERY / 60
    yesterday = -24 * 60
    for i, n in enumerate(names):
        if n not in SPECIAL:
            w.session(n, f"10.{i}.0.1", f"dev-{n}", at(-5), at(600))
    # t05: home, the helper from his own home in 900, and again 0.4 s after the recorded start of
    # t05's last hand of 901 (the hand began later in that second: the helper plays it)
    w.session("t05", "10.5.0.1", "pc-t05", at(yesterday), at(yesterday + 60))
    w.session("t05", "10.5.0.1", "pc-t05", at(-5), at(cp - GAP))
    w.session("t05", "77.5.1.1", "helper-t05", at(cp), at(110))
    w.session("t05", "10.5.0.1", "pc-t05", at(115), last["t05"] - 4 * S)
    w.session("t05", "77.5.1.1", "helper-t05", last["t05"] + 0.4 * S, last["t05"] + 60 * S)
    # t21: home, his laptop at a second place in 900; the laptop logs in again 1.5 s after the
    # recorded start of his last hand of 901: after that hand, his own play
    w.session("t21", "10.21.0.1", "pc-t21", at(yesterday), at(yesterday + 60))
    w.session("t21", "10.21.0.1", "pc-t21", at(-5), at(cp - GAP))
    w.session("t21", "88.21.3.3", "laptop-t21", at(cp), at(110))
    w.session("t21", "10.21.0.1", "pc-t21", at(115), last["t21"] - 4 * S)
    w.session("t21", "88.21.3.3", "laptop-t21", last["t21"] + 1.5 * S, last["t21"] + 60 * S)
    return w


@pytest.fixture(scope="module")
def runs(con):
    out = {}
    for clock in (1.0, 0.0):
        d = SeatHandoffDetector(hand_clock_s=clock)
        out[clock] = (d, d.detect(con))
    return out


def test_login_in_the_last_hands_second_is_inside_the_event(runs):
    d, _ = runs[1.0]
    rows = event_rows(d, "900")
    assert not rows["t05"]["owner_device"] and rows["t05"]["two_places"]
    assert rows["t21"]["owner_device"] and not rows["t21"]["two_places"]  # 1.5 s: beyond the clock
    # the take-over of 901's last hand is a candidate (too short to test) and counts among the
    # device's quick take-overs
    c = d.cand_.filter((d.cand_["account"] == "t05") & (d.cand_["tournament_id"] == "901"))
    assert c.height == 1 and c["dev_own_sessions"][0] == 0 and c["dev_quick_takeovers"][0] == 2
    d0, _ = runs[0.0]
    rows0 = event_rows(d0, "900")  # the recorded start read as exact: the helper's login "starts own play"
    assert rows0["t05"]["owner_device"] and not rows0["t05"]["two_places"]
    assert rows0["t21"]["owner_device"]


def test_helper_flagged_owner_not(runs):
    d, sigs = runs[1.0]
    assert sorted((s.accounts[0], s.tournaments[0]) for s in sigs if s.flagged) == [("t05", "900")]
    r = event_rows(d, "900")["t05"]
    assert r["q_value"] <= d.fdr and r["p_time"] > d.signal_p  # the style carries it
    # the flag is the calibrated q-value, which no device structure enters: read as exact, the clock
    # only changes what the case says of the helper's machine (an owner's), not the decision
    _, sigs0 = runs[0.0]
    assert sorted((s.accounts[0], s.tournaments[0]) for s in sigs0 if s.flagged) == [("t05", "900")]
