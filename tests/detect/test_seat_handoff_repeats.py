"""The two-places test counted over a device's days (detectors/seat_handoff/places.py): a helper who takes the
seat from the owner's home on several days brings the same machine from the same other home each time; the owner's
home label changing at a switch is a chance of at most r a day, so m such days of M are the binomial tail
P(Bin(M, r) >= m), not one chance r. Unless the population's owner devices (that also start play of their own)
arrive on another home more often than the re-logins allow: an owner's second place shows the structure at every
login, and then a device's repeats count once.

The world: 30 accounts, 23 of them re-logging in at home on their own device yesterday (the re-logins' null: 0 of 23
arrived elsewhere); t05's helper takes the seat from t05's home on two days (events 900 and 902), with the same weak
shift of play as the one-day world of test_seat_handoff_two_places.py; with ``second_place`` t21's own laptop (which
also starts t21's play) takes t21's seat from its home at a second place of t21's."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from test_identity_features_world import World, at, event_rows
from test_seat_handoff_two_places import AFTER, CP, EVERY, GAP, OWNER

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff.places import (
    device_repeats, owner_places_p, owner_switch_homes, product_p, repeated_product_p,
)

DAY = 24 * 60


def build_repeat_world(second_place: bool) -> World:
    """The world of this module's docstring."""
    w = World(seed=8)
    names = w.accounts("t", 30)
    cp = CP * EVERY / 60
    special = ("t05", "t21")
    for i, n in enumerate(names):
        if n in special:
            continue
        home = f"10.{i}.0.1"
        if i >= 5:
            w.session(n, home, f"dev-{n}", at(-DAY), at(-DAY + 30))
            w.session(n, home, f"dev-{n}", at(-DAY + 30 + 1 / 3), at(-DAY + 60))
        w.session(n, home, f"dev-{n}", at(-5), at(600))
        w.session(n, home, f"dev-{n}", at(DAY - 5), at(DAY + 600))
    # t05: the owner plays at home (yesterday too); a helper takes the seat from his own home, on two days
    w.session("t05", "10.5.0.1", "pc-t05", at(-DAY), at(-DAY + 60))
    for day in (0, DAY):
        w.session("t05", "10.5.0.1", "pc-t05", at(day - 5), at(day + cp - GAP))
        w.session("t05", "77.5.1.1", "helper-t05", at(day + cp), at(day + 110))
        w.session("t05", "10.5.0.1", "pc-t05", at(day + 115), at(day + 600))
    # t21: at home on both days; with ``second_place`` his own laptop at a second place of his takes the seat on
    # the first day and later starts his own play
    w.session("t21", "10.21.0.1", "pc-t21", at(-DAY), at(-DAY + 60))
    if second_place:
        w.session("t21", "10.21.0.1", "pc-t21", at(-5), at(cp - GAP))
        w.session("t21", "88.21.3.3", "laptop-t21", at(cp), at(110))
        w.session("t21", "10.21.0.1", "pc-t21", at(115), at(600))
        w.session("t21", "88.21.3.3", "laptop-t21", at(700), at(760))
    else:
        w.session("t21", "10.21.0.1", "pc-t21", at(-5), at(600))
    w.session("t21", "10.21.0.1", "pc-t21", at(DAY - 5), at(DAY + 600))
    for n in special:
        w.styles[n] = OWNER
    order = [n for n in names if n not in special] + list(special)
    w.tournament("900", names, at(0), n_hands=100, every_s=EVERY, bust_order=order,
                 styles_from={"t05": (CP, AFTER), **({"t21": (CP, AFTER)} if second_place else {})})
    w.tournament("901", names, at(120), n_hands=60, every_s=EVERY, bust_order=order)
    w.tournament("902", names, at(DAY), n_hands=100, every_s=EVERY, bust_order=order, styles_from={"t05": (CP, AFTER)})
    return w


@pytest.fixture(scope="module", params=[False, True], ids=["no-second-place", "second-place"])
def world(request):
    return build_repeat_world(request.param)


@pytest.fixture(scope="module")
def run(con):
    d = SeatHandoffDetector()
    return d, d.detect(con)


def test_a_device_counts_its_days_unless_owners_keep_second_places(run):
    d, _ = run
    k, n = d.places_null_
    r = (k + 1) / (n + 1)
    assert (k, n) == (0, 23)
    rows = {t: event_rows(d, t)["t05"] for t in ("900", "902")}
    counted = (2, 2) if d.places_owner_ == (0, 0) else (1, 1)  # the days counted (once where owners keep second places)
    for row in rows.values():
        assert (row["places_days"], row["places_shown"]) == counted
    h = rows["900"]
    if d.places_owner_ == (0, 0):
        # no owner keeps a second place: two days of two at r a day
        assert d.places_owner_p_ == 1.0
        assert math.isclose(h["p_two_places"], r * r)
        t, p = repeated_product_p(np.array([h["p_play"]]), np.array([2]), np.array([2]), r)
        assert math.isclose(h["p_event"], float(p[0]))
        # the repeat is worth more than one day's structure
        assert h["p_event"] < float(product_p(np.array([h["p_play"]]), np.array([r]), r)[0]) / 5
    else:
        # t21's laptop: 1 of 1 owner device-days on another home, a tail of r: owners keep second places here
        assert d.places_owner_ == (1, 1) and math.isclose(d.places_owner_p_, r)
        assert math.isclose(h["p_two_places"], r)
        assert math.isclose(h["p_event"], float(product_p(np.array([h["p_play"]]), np.array([r]), r)[0]))


def test_the_case_tells_the_days_and_the_owners(run):
    d, sigs = run
    s = next(s for s in sigs if s.accounts == ["t05"] and s.tournaments == ["900"])
    ev = next(e for e in s.evidence if e.name == "two places at once")
    assert "owner devices" in ev.text and "device-days" in ev.text
    if d.places_owner_ == (0, 0):
        assert "on 2 days, on 2 of them on another home" in ev.text and "on 2 of the 2 days" in s.benign
    else:
        assert "owners keep second places here, a device's repeats count once" in ev.text


def test_device_repeats_and_owner_homes_count_days():
    t = at(0)
    base = {"device_changed": True, "prev_net": "10.1.0.0/24", "prev_net_accounts": 1, "prev_net_days": 3,
            "net_accounts": 1}
    rows = [
        # the helper: two logins on day 0 (two events), one on day 1, all on another home
        {"account": "a", "device": "h", "login_at": t, "net": "77.0.0.0/24", "dev_own_sessions": 0},
        {"account": "a", "device": "h", "login_at": at(5), "net": "77.0.0.0/24", "dev_own_sessions": 0},
        {"account": "a", "device": "h", "login_at": at(DAY), "net": "77.0.0.0/24", "dev_own_sessions": 0},
        # an owner's laptop at home on day 0, on another home on day 1
        {"account": "b", "device": "l", "login_at": t, "net": "10.1.0.0/24", "dev_own_sessions": 2},
        {"account": "b", "device": "l", "login_at": at(DAY), "net": "66.0.0.0/24", "dev_own_sessions": 2},
        # left from a carrier's network: not from the account's own home
        {"account": "c", "device": "p", "login_at": t, "net": "77.1.0.0/24", "dev_own_sessions": 0,
         "prev_net_accounts": 9},
    ]
    cand = pl.DataFrame([{**base, **r} for r in rows])
    rep = {(x["account"], x["device"]): (x["places_days"], x["places_shown"])
           for x in device_repeats(cand, 4).iter_rows(named=True)}
    assert rep == {("a", "h"): (2, 2), ("b", "l"): (2, 0)}
    assert owner_switch_homes(cand, 4) == (1, 2)
    assert owner_places_p(0, 30, 0.02) == 1.0
    assert math.isclose(owner_places_p(1, 2, 0.02), 1 - 0.98 ** 2)


def test_the_repeated_law_is_valid_and_is_the_two_valued_one_for_one_day():
    rng = np.random.default_rng(5)
    r = 0.03
    for big_m in (1, 2, 4):
        u = rng.uniform(size=100_000)
        m = rng.binomial(big_m, r, size=u.size)  # the structure at its null rate, day by day
        _, p = repeated_product_p(u, m, np.full(u.size, big_m), r)
        for a in (0.001, 0.01, 0.05):
            assert (p <= a).mean() <= a * 1.1 + 2e-4
    u = rng.uniform(size=1000)
    m = (rng.uniform(size=u.size) < 0.5).astype(int)
    t, p = repeated_product_p(u, m, np.ones(u.size), r)
    assert np.allclose(p, product_p(u, np.where(m > 0, r, 1.0), r))
    assert np.allclose(t, np.where(m > 0, r, 1.0))
    # not eligible (no day from the account's own home): the play's p unchanged, no statistic
    t, p = repeated_product_p(u, np.zeros(u.size), np.zeros(u.size), r)
    assert np.isnan(t).all() and np.array_equal(p, u)
