"""The seat hand-off fit's frames by account-event (detectors/seat_handoff/frames.py, ``read_hands`` and
``read_event_decisions``): the hands and decision times held through the change points' tests and the null keep no
name per row and no column nothing reads, the decision times only for the candidates' account-events (the null
reads its decision times by account), and the hands with their names only for the null's account-events. Their
rows and values are those the whole frames gave, and the scores the same."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_seat_handoff_two_places import build_world

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import frames
from detectors.seat_handoff.queries import _DECISIONS_SQL, _HAND_ROWS_SQL, _with_strength, strength_table


@pytest.fixture(scope="module")
def world():
    return build_world()


def _frames(con):
    """The fit's inputs as ``_read_frames`` reads them: ``(detector, cand, null_ev, frames)``."""
    det = SeatHandoffDetector()
    det.missing_, det.has_sessions_, det.has_decisions_, det.has_logouts_ = [], True, True, True
    det.use_switch_null_, det.stage_prior_ = False, {}
    cand = det._session_candidates(con)
    null_ev = det._null_events(con, cand.select("account", "tournament_id"))
    at = pl.concat([cand.select("account", "tournament_id"), null_ev], how="vertical_relaxed").unique()
    return det, cand, null_ev, at, det._read_frames(con, cand, null_ev, at)


def _whole(con, sql, at):
    """``sql``'s rows read whole with their names (the reads before this change)."""
    con.register("_rb_at", at)
    con.register("_rb_strength", strength_table())
    try:
        return con.sql(sql).pl()
    finally:
        con.unregister("_rb_at")
        con.unregister("_rb_strength")


def test_event_frames_hold_no_names_and_only_what_is_read(con):
    _, cand, null_ev, at, (hands, by_at, dec_at, *_) = _frames(con)
    cand_keys = set(cand.select("account", "tournament_id").unique().rows())
    null_keys = set(null_ev.rows())
    assert cand_keys and null_keys and not cand_keys & null_keys
    # the decision times: the candidates' account-events only, their times and nothing else
    assert set(dec_at) == cand_keys & set(dec_at) and set(dec_at)
    assert all(g.columns == ["started_at", "log_ms"] for g in dec_at.values())
    # the hands by account-event: no name per row, no situation column (read into rstr, rcls only)
    assert all(g.columns == list(frames.HAND_COLS) for g in by_at.values())
    # the hands with names: the null's account-events only
    assert set(hands.select("account", "tournament_id").unique().rows()) == null_keys
    assert set(hands.columns) == {"account", "tournament_id", *frames.HAND_COLS}


def test_event_frames_are_the_whole_reads(con):
    _, cand, null_ev, at, (hands, by_at, dec_at, *_) = _frames(con)
    whole = _with_strength(_whole(con, _HAND_ROWS_SQL, at)).sort("account", "tournament_id", "started_at", "hand_id")
    want = {k: g for k, g in whole.partition_by(["account", "tournament_id"], as_dict=True).items()}
    assert set(by_at) == set(want)
    for k, g in by_at.items():
        w = want[k].select(frames.HAND_COLS)
        assert g.height == w.height
        for c in frames.HAND_COLS:
            if c in ("sizes", "hand_id", "started_at"):
                assert g[c].to_list() == w[c].to_list()
            else:  # the same values (the counts and codes as 32-bit integers)
                assert np.array_equal(g[c].to_numpy(), w[c].to_numpy()), c
    null_want = whole.join(null_ev, on=["account", "tournament_id"], how="semi", maintain_order="left")
    assert_frame_equal(hands, null_want.select(hands.columns), check_dtypes=False, check_exact=True)
    dec = _whole(con, _DECISIONS_SQL, cand.select("account", "tournament_id").unique())
    dwant = dec.partition_by(["account", "tournament_id"], as_dict=True)
    assert set(dec_at) == set(dwant)
    for k, g in dec_at.items():
        w = dwant[k].sort("started_at", "log_ms")
        assert_frame_equal(g.sort("started_at", "log_ms"), w.select("started_at", "log_ms"), check_exact=True)
