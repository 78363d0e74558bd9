"""The two-places test of a seat hand-off (detectors/seat_handoff/places.py): a seat left from the account's own
home and taken seconds later on another home-sized network by a device that never starts play of its own, against
this population's own re-logins on one device (how often a home's network label changes with no one travelling).

The world is the one of test_seat_handoff_two_places.py (the helper t05, the honest mover from the carrier t20,
the owner's second place t21, all three with the same weak shift of play), with every other account re-logging in
on its own device at home twenty seconds after a logout, yesterday: 22 re-logins that left a home, none arriving
on another home-sized network. Before the test the helper's p was the play's and the identity's (Fisher); now the
structure is counted, by the exact law of the product of the play's p and the two-places statistic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_identity_features_world import event_rows
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff.places import product_p


@pytest.fixture(scope="module")
def world():
    return build_world(relogins=True)


@pytest.fixture(scope="module")
def runs(con):
    d = SeatHandoffDetector()
    off = SeatHandoffDetector(two_places=False)
    return d, d.detect(con), off, off.detect(con)


def test_the_null_is_the_populations_own_re_logins_on_one_device(runs):
    d, *_ = runs
    # the 22 accounts at home re-logged in on their own device, none on another home-sized network (t05's and
    # t21's return home follows the other device's logout: not a re-login on one device)
    assert d.places_null_ == (0, 22)


def test_the_helpers_two_places_are_counted_the_owners_second_place_and_the_carrier_are_not(runs):
    d, _, off, _ = runs
    k, n = d.places_null_
    r = (k + 1) / (n + 1)
    rows, before = event_rows(d, "900"), event_rows(off, "900")
    h = rows["t05"]
    assert math.isclose(h["p_two_places"], r)
    # the play's p and the structure by their product's exact law, in place of the identity's rank
    assert math.isclose(h["p_event"], float(product_p(np.array([h["p_play"]]), np.array([r]), r)[0]))
    assert h["p_event"] < before["t05"]["p_event"] / 5
    # t21's laptop starts play of its own (the owner's): eligible, no structure; its p as before, times 2 - r
    o = rows["t21"]
    assert o["p_two_places"] == 1.0
    assert math.isclose(o["p_event"], min(1.0, before["t21"]["p_event"] * (2 - r)))
    # t20 left a carrier's network (not a home): not eligible, its p as before
    assert math.isnan(rows["t20"]["p_two_places"])
    assert math.isclose(rows["t20"]["p_event"], before["t20"]["p_event"])


def test_the_case_says_the_structure_is_counted(runs):
    _, sigs, _, _ = runs
    s = next(s for s in sigs if s.accounts == ["t05"] and s.tournaments == ["900"])
    ev = next(e for e in s.evidence if e.name == "two places at once")
    assert "re-logins on the same device" in ev.text and ev.p_value is not None
    assert "counted in the p-value" in s.benign


def test_the_exact_law_of_the_product_is_valid_and_cheap_without_the_structure():
    rng = np.random.default_rng(3)
    r = 0.02
    u = rng.uniform(size=200_000)
    t = np.where(rng.uniform(size=u.size) < r, r, 1.0)  # the structure at its null rate
    p = product_p(u, t, r)
    for a in (0.001, 0.01, 0.05):
        assert (p <= a).mean() <= a * 1.05
    assert np.all(product_p(u, np.ones_like(u), r) <= 2 * u)
    assert np.array_equal(product_p(u, np.full_like(u, np.nan), r), u)
