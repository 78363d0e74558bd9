"""MultiAccountingDetector on the feature store's window: it reads only the window's days.

A warehouse holds two days of play (one person on three accounts among honest players) and, a month before,
other play: two honest accounts sharing a machine and entering events together. Judged over the last three
days, the detector gives exactly the signals it gives on a warehouse holding the two days alone; judged over
every day (the default window), the month-old play is read and changes them."""

from __future__ import annotations

import numpy as np
import pytest
from test_identity_features_world import Style, World, at

from detectors.features.gameplay import release, store_for
from tests.detect.conftest import window_runs
from detectors.multi_accounting import MultiAccountingDetector

PERSON = ["m1", "m2", "m3"]
OLD = at(-30 * 24 * 60)  # a month before the two days


def _world(with_old: bool) -> World:
    """The two days (as ``test_multi_accounting``'s world), then, with ``with_old``, the month-old play: generated
    after the two days, so the two days' rows are the same in both worlds."""
    w = World(seed=31)
    names = [f"h{i:02d}" for i in range(37)] + PERSON
    for n in names:
        w.account(n, payment=f"card-{n}")
    me = Style(vpip=0.24, pfr=0.19, aggr=0.66, size=0.72, log_ms=7.4, sd_ms=0.35)
    for n in PERSON:
        w.styles[n] = me
    w.session("m1", "84.10.20.30", "desk-M", at(-200), at(-100))
    w.session("m2", "84.10.20.30", "desk-M", at(-90), at(-10))
    w.session("m3", "84.10.20.30", "phone-M", at(-5), at(900))
    w.session("m1", "151.3.3.3", "phone-M", at(1000), at(1100))
    for i, n in enumerate(names[:37]):
        w.session(n, f"62.{i}.1.1", f"pc-{n}", at(-5), at(900))
    rng = np.random.default_rng(5)
    honest = [n for n in names if n not in PERSON]
    for t in range(12):
        players = rng.choice(honest, 20, replace=False).tolist() + (PERSON if t < 9 else [])
        w.tournament(str(700 + t), players, at(60 * t), n_hands=40)
    if with_old:
        # a month before: h05 and h06 on one machine, entering every event together, with others
        for n in ("h05", "h06"):
            w.session(n, "99.1.1.1", "old-pc", OLD, OLD + (at(600) - at(0)))
        for t in range(6):
            players = rng.choice([n for n in honest if n not in ("h05", "h06")], 12, replace=False).tolist()
            w.tournament(str(600 + t), players + ["h05", "h06"], OLD + (at(60 * t) - at(0)), n_hands=40)
    return w


def _signals(con, window_days: int) -> list[tuple]:
    """The detector's signals on ``con`` judged over ``window_days`` (0: every day), as comparable tuples."""
    store_for(con, window_days=window_days)
    try:
        sigs = MultiAccountingDetector().detect(con)
    finally:
        release()
    # identifiers shared as rarely (and an edge's identifiers) come in no set order: compared as sets
    return [(tuple(s.accounts), s.score, s.p_value, s.flagged, tuple(s.tournaments), tuple(s.hands),
             sorted((e.name, e.value, e.n, e.p_value, e.text, e.sql) for e in s.evidence), s.benign,
             [{**e, "signals": sorted(e["signals"])} for e in s.extra["edges"]], s.extra.get("window")) for s in sigs]


@pytest.fixture(scope="module")
def runs():
    return window_runs(_world, _signals)


def test_the_window_reads_only_its_days(runs):
    """Over the last three days the detector's signals are those of a warehouse holding those days alone (the
    window's first and last day named in the case), and the person is found."""
    windowed = [s[:-1] for s in runs["full window 3"]]
    assert windowed == [s[:-1] for s in runs["recent every day"]]
    assert {tuple(s[-1]) for s in runs["full window 3"]} == {("2026-03-03", "2026-03-05")}
    assert [sorted(s[0]) for s in runs["full window 3"] if s[3]] == [PERSON]


def test_every_day_reads_the_month_before(runs):
    """The default window (every day) reads the month-old play: the machine h05 and h06 shared then makes them a
    candidate pair, which the three-day window never sees; no window is named in the case."""
    def pairs(sigs):
        return {frozenset(s[0]) for s in sigs}

    assert frozenset({"h05", "h06"}) in pairs(runs["full every day"])
    assert frozenset({"h05", "h06"}) not in pairs(runs["full window 3"])
    assert all(s[-1] is None for s in runs["full every day"])


def test_the_two_worlds_share_the_two_days():
    """The premise of the comparison: the two days' rows are the same in both worlds (generated first)."""
    a, b = _world(True), _world(False)
    for t in ("hands", "seats", "actions", "decisions", "registrations"):
        assert a.rows[t][: len(b.rows[t])] == b.rows[t], t
    assert len(a.rows["hands"]) > len(b.rows["hands"])
