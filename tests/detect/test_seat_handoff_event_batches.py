"""The seat hand-off fit's account-events' hands read a batch of account-events at a time
(detectors/seat_handoff/event_hands.py): the rows by account-event are those of one read of every account-event,
whatever the batches' size, and the scores the same; and a candidate account-event whose login has too few of the
account's hands before or after it to be compared is not read at all (the scores again the same)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_identity_features_world import World, at, regular_style

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import detector as det_mod
from detectors.seat_handoff import event_hands, frames
from detectors.seat_handoff.queries import _HAND_ROWS_SQL, _with_strength, strength_table

EVERY = 45
EARLY, LATE, MID = "k01", "k02", "k03"  # device switches 1 hand into the event, 3 hands before the bust, mid-event
SWITCH = {EARLY: 1, LATE: 85, MID: 50}  # the round of the login (LATE busts at round 88)


@pytest.fixture(scope="module")
def world():
    w = World(seed=91)
    table = [f"t{i}" for i in range(6)] + [EARLY, LATE, MID]
    others = [f"p{i:02d}" for i in range(27)]
    rng = np.random.default_rng(4)
    for n in table + others:
        w.account(n)
        w.styles[n] = regular_style(rng)
    for i, n in enumerate(table + others):
        home = f"10.{i}.0.1"
        if n not in SWITCH:
            w.session(n, home, f"phone-{n}", at(-5), at(900))
            continue
        cp = SWITCH[n] * EVERY / 60
        w.session(n, home, f"phone-{n}", at(-5), at(cp - 0.1))
        w.session(n, f"10.{i}.9.1", f"desk-{n}", at(cp), at(900))
    # one table: six bust first, then EARLY (round 77), LATE (88); MID wins
    w.tournament("900", table, at(0), n_hands=100, every_s=EVERY, bust_order=table)
    for j in range(4):  # the population's other events (the null's account-events), and the switchers' history
        w.tournament(f"90{j + 1}", others + table, at(120 + 80 * j), n_hands=50, every_s=EVERY)
    return w


def _whole(con, at_frame):
    """:data:`_HAND_ROWS_SQL`'s rows of ``at_frame``'s account-events read at once (the read before batches)."""
    con.register("_rb_at", at_frame)
    con.register("_rb_strength", strength_table())
    try:
        return _with_strength(con.sql(_HAND_ROWS_SQL).pl()).sort("account", "tournament_id", "started_at", "hand_id")
    finally:
        con.unregister("_rb_at")
        con.unregister("_rb_strength")


class _Counting:
    """A connection that counts the runs of ``_HAND_ROWS_SQL`` and passes everything else through."""

    def __init__(self, con) -> None:
        self.con, self.runs = con, 0

    def sql(self, query, *args, **kwargs):
        self.runs += query == _HAND_ROWS_SQL
        return self.con.sql(query, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.con, name)


@pytest.mark.parametrize("max_rows", [1, 120, None], ids=["an-event-a-batch", "a-few", "default"])
def test_hands_read_by_batches_are_the_whole_read(con, max_rows):
    at_frame = con.sql("SELECT DISTINCT s.player AS account, h.tournament_id FROM seats s JOIN hands h "
                       "USING (hand_id) WHERE h.tournament_id IS NOT NULL").pl()
    null_ev = at_frame.filter(pl.col("tournament_id") == "901")
    whole = _whole(con, at_frame)
    sizes = event_hands.event_sizes(con, at_frame)
    assert sizes.height == at_frame.height and (sizes["n"] > 0).all()
    assert len(event_hands.event_batches(sizes, 1)) == at_frame.height  # one seat a batch: every account-event alone
    con.register("_rb_strength", strength_table())
    counting = _Counting(con)
    try:
        hands, by_at = frames.read_hands(counting, null_ev, sizes, max_rows)
    finally:
        con.unregister("_rb_strength")
    assert counting.runs == {1: at_frame.height, None: 1}.get(max_rows, len(event_hands.event_batches(sizes, 120)))
    assert max_rows != 120 or 1 < counting.runs < at_frame.height
    want = whole.partition_by(["account", "tournament_id"], as_dict=True)
    assert set(by_at) == set(want)
    for k, g in by_at.items():
        w = want[k].select(frames.HAND_COLS)
        for c in frames.HAND_COLS:
            if c in ("sizes", "hand_id", "started_at"):
                assert g[c].to_list() == w[c].to_list()
            else:
                assert np.array_equal(g[c].to_numpy(), w[c].to_numpy()), c
    null_want = whole.join(null_ev, on=["account", "tournament_id"], how="semi", maintain_order="left")
    assert_frame_equal(hands, null_want.select(hands.columns), check_dtypes=False, check_exact=True)


def test_candidates_too_short_to_compare_are_not_read(con):
    d = SeatHandoffDetector(relogins=True)
    d.has_sessions_ = True
    cand = d._session_candidates(con)
    logins = {r["account"]: r for r in cand.filter(pl.col("tournament_id") == "900").iter_rows(named=True)}
    assert set(SWITCH) <= set(logins)  # all three switches are candidates
    null_ev = d._null_events(con, cand.select("account", "tournament_id"))
    got = event_hands.testable_events(con, cand, null_ev, d.min_before, d.min_segment)
    keys = set(got.select("account", "tournament_id").rows())
    assert (MID, "900") in keys and (EARLY, "900") not in keys and (LATE, "900") not in keys
    assert set(null_ev.rows()) <= keys
    # the seats counted: at least the hands the comparison counts on each side of the login
    whole = _whole(con, cand.select("account", "tournament_id").unique())
    seats = event_hands.login_seats(con, cand.select("account", "tournament_id", "login_at"))
    for r in seats.iter_rows(named=True):
        h = whole.filter((pl.col("account") == r["account"]) & (pl.col("tournament_id") == r["tournament_id"]))
        before = int((h["started_at"] < r["login_at"]).sum())
        assert r["n_before"] >= before and r["n"] - r["n_before"] >= h.height - before


def test_the_scores_are_those_of_every_candidate_read_whatever_the_batches(con, monkeypatch):
    keep_all = event_hands.testable_events
    want_det = SeatHandoffDetector(relogins=True)
    monkeypatch.setattr(det_mod, "testable_events", lambda c, cand, ev, a, b: keep_all(c, cand, ev, 0, 0))
    want = want_det.fit(con).score(con)
    assert {MID, EARLY, LATE} <= set(want_det.cand_["account"].to_list())
    monkeypatch.undo()
    monkeypatch.setattr(event_hands, "HAND_ROWS_PER_READ", 100)  # a few account-events a batch
    counting = _Counting(con)
    d = SeatHandoffDetector(relogins=True)
    got = d.fit(counting).score(con)
    assert counting.runs > 3
    assert want.height > 0 and MID in want["account"].to_list()
    assert_frame_equal(got, want, check_exact=True)
