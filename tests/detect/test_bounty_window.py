"""BountyCollusionDetector on the feature store's window: the fit reads only the window's days.

Planted knockout hands (a gang k01, k02) are dealt over four days. Judged over its last two days, the detector's
spots, pairs, presence tests, shared events and bounty-passing tests are those of the same warehouse with the two
earlier days deleted, judged over every day; judged over every day (the default window), the earlier days are read
and change them."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from detectors.bounty_collusion import BountyCollusionDetector
from detectors.features.gameplay import release, store_for
from tests.detect.conftest import build_ko_world, keep_days_from

NAMES = ["spots", "pairs", "presence", "events", "passing"]


def _world():
    """The warehouse of a small planted knockout world (3,000 hands, 60 s apart: three hand days)."""
    return build_ko_world(n_hands=3000, rate=0.5, seed=9).con


def _frames(con, window_days: int) -> dict[str, pl.DataFrame]:
    """The fit's window-read attributes on ``con`` judged over ``window_days`` (0: every day), rows sorted."""
    store_for(con, window_days=window_days)
    try:
        det = BountyCollusionDetector().fit(con)
    finally:
        release()
    frames = {"spots": det.spots_, "pairs": det.pairs_, "presence": det.presence_, "events": det.events_,
              "passing": det.passing_}
    # the list columns in a fixed order (their order follows the group-by's), then the rows
    out = {}
    for k, f in frames.items():
        lists = [c for c, t in f.schema.items() if isinstance(t, pl.List) and t.inner in (pl.Utf8, pl.Float64)]
        f = f.with_columns(pl.col(c).list.sort() for c in lists)
        keys = [c for c in ("hand_id", "target", "player", "opponent") if c in f.columns]
        out[k] = f.sort(keys)
    return out


@pytest.fixture(scope="module")
def runs():
    full = _world()
    days = [r[0] for r in full.execute("SELECT DISTINCT day FROM hands ORDER BY day").fetchall()]
    assert len(days) >= 3
    recent = _world()
    assert {"seats", "actions", "hole_cards", "boards", "bounties"} <= set(keep_days_from(recent, days[-2]))
    out = {"full window 2": _frames(full, 2), "full every day": _frames(full, 0), "recent every day": _frames(recent, 0)}
    full.close()
    recent.close()
    return out


@pytest.mark.parametrize("name", NAMES)
def test_the_window_reads_only_its_days(runs, name):
    """Over the last two days the spots, pairs, presence tests, shared events and passing tests are those of a
    warehouse holding those days alone."""
    got, want = runs["full window 2"][name], runs["recent every day"][name]
    assert not want.is_empty()
    # counts exact; the expected counts and p-values within the last bits (the sums' order may differ)
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-9, abs_tol=0)


def test_every_day_reads_the_earlier_days(runs):
    """The default window reads every day: more spots and other shared-event counts."""
    every, recent = runs["full every day"], runs["recent every day"]
    assert every["spots"].height > recent["spots"].height
    assert every["events"]["events_hands"].sum() > recent["events"]["events_hands"].sum()
