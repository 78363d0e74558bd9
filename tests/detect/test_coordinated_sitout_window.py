"""CoordinatedSitoutDetector on the feature store's window: it reads only the window's days.

A warehouse holds two days of events (a trio that sits out together near the bubble among honest players, as in
``test_coordinated_sitout``) and, a month before, other events in which two honest players sat out together. Judged
over the last three days, the detector gives exactly the signals it gives on a warehouse holding the two days
alone, from the platform's sit-out events and from the hands alone; judged over every day (the default window),
the month-old events are read and change them."""

from __future__ import annotations

import numpy as np
import pytest
from test_coordinated_sitout import PLANTED, TRIO, honest_sitouts
from test_identity_features_world import World, at

from detectors.coordinated_sitout import CoordinatedSitoutDetector
from detectors.features.gameplay import release, store_for
from tests.detect.conftest import window_runs

OLD_PAIR = ["n05", "n06"]
OLD = at(-30 * 24 * 60)  # a month before the two days


def _world(with_old: bool) -> World:
    """The two days (``test_coordinated_sitout``'s world without its frequent sitter and wave), then, with
    ``with_old``, the month-old events: generated after the two days, so the two days' rows are the same in both."""
    w = World(seed=41)
    honest = [f"n{i:02d}" for i in range(45)]
    for n in honest + TRIO:
        w.account(n)
    rng = np.random.default_rng(9)
    for t in range(8):
        tid = str(600 + t)
        players = rng.choice(honest, 24, replace=False).tolist() + TRIO
        so = honest_sitouts(rng, players)
        for c in TRIO:
            so[c] = [(62, 66)] if tid in PLANTED else []
        order = [p for p in players if p not in TRIO] + TRIO
        w.tournament(tid, players, at(90 * t), n_hands=80, every_s=45, sitouts=so, bust_order=order)
    if with_old:
        # a month before: n05 and n06 sit out together near the bubble of five events
        others = [n for n in honest if n not in OLD_PAIR]
        for t in range(5):
            players = rng.choice(others, 20, replace=False).tolist() + OLD_PAIR
            so = honest_sitouts(rng, players)
            so.update({p: [(62, 66)] for p in OLD_PAIR})
            order = [p for p in players if p not in OLD_PAIR] + OLD_PAIR
            w.tournament(str(500 + t), players, OLD + (at(90 * t) - at(0)), n_hands=80, every_s=45, sitouts=so,
                         bust_order=order)
    return w


def _signals(con, window_days: int) -> list[tuple]:
    """The detector's signals on ``con`` judged over ``window_days`` (0: every day), as comparable tuples (the
    window named in the case last)."""
    store_for(con, window_days=window_days)
    try:
        sigs = CoordinatedSitoutDetector(group_null=20).detect(con)
    finally:
        release()
    return [(tuple(s.accounts), s.score, s.p_value, s.flagged, tuple(s.tournaments), tuple(s.hands),
             [(e.name, e.value, e.baseline, e.n, e.p_value, e.text, e.sql) for e in s.evidence], s.benign,
             tuple(s.missing), s.extra["cooccurrences"], s.extra.get("window")) for s in sigs]


@pytest.fixture(scope="module", params=[False, True], ids=["events", "hands only"])
def runs(request):
    return window_runs(_world, _signals, drop_events=request.param)


def test_the_window_reads_only_its_days(runs):
    """Over the last three days the detector's signals are those of a warehouse holding those days alone (the
    window's first and last day named in the case), and the trio is found."""
    windowed = [s[:-1] for s in runs["full window 3"]]
    assert windowed == [s[:-1] for s in runs["recent every day"]]
    assert {tuple(s[-1]) for s in runs["full window 3"]} == {("2026-03-03", "2026-03-05")}
    assert [list(s[0]) for s in runs["full window 3"] if s[3]] == [TRIO]


def test_every_day_reads_the_month_before(runs):
    """The default window (every day) reads the month-old events: the pair that sat out together then is flagged,
    which the three-day window never sees; no window is named in the case."""
    flagged = {frozenset(s[0]) for s in runs["full every day"] if s[3]}
    assert frozenset(OLD_PAIR) in flagged
    assert all(frozenset(OLD_PAIR) != frozenset(s[0]) for s in runs["full window 3"])
    assert all(s[-1] is None for s in runs["full every day"])


def test_the_two_worlds_share_the_two_days():
    """The premise of the comparison: the two days' rows are the same in both worlds (generated first)."""
    a, b = _world(True), _world(False)
    for t in ("hands", "seats", "table_events", "sit_events", "tournament_finishes", "registrations"):
        assert a.rows[t][: len(b.rows[t])] == b.rows[t], t
    assert len(a.rows["sit_events"]) > len(b.rows["sit_events"])
