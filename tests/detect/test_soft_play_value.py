"""Honest players bluff less into opponents who do not fold; a pair that spares each other checks its good hands.
Soft play's check test reads, after the flop, the spots where a bet is for value (strength bin at least
``value_bin``): two honest players who stop bluffing each other are not accused, a pair that checks its good hands
to each other still is."""

import polars as pl

from detectors.soft_play import SoftPlayDetector
from tests.detect.conftest import build_world


def _bets(w, players, against, *, weak):
    """(hand_id, seq) of ``players``' heads-up bets after the flop with no bet to call aimed at ``against``, with a
    weak hand (strength bin under 2) or a good one, as the detector's decisions judge them."""
    det = SoftPlayDetector().fit(w.con)
    d = det.source_.decisions(w.con, players=list(players))
    sel = d.filter(pl.col("opponent").is_in(list(against)) & pl.col("aggr") & ~pl.col("facing") & pl.col("hu")
                   & ~pl.col("preflop") & pl.col("sbin").is_not_null()
                   & ((pl.col("sbin") < 2) if weak else (pl.col("sbin") >= 2)))
    return sel.select("hand_id", "seq").rows()


def _to_checks(con, rows):
    con.execute("CREATE OR REPLACE TEMP TABLE _chg (hand_id VARCHAR, seq INTEGER)")
    con.executemany("INSERT INTO _chg VALUES (?, ?)", rows)
    con.execute("UPDATE actions a SET action = 'check', amount = 0 FROM _chg c WHERE a.hand_id = c.hand_id AND a.seq = c.seq")


def _pair(s, a, b):
    return s.filter(pl.col("player").is_in([a, b]) & pl.col("opponent").is_in([a, b])).row(0, named=True)


WORLD = {"n_players": 16, "n_hands": 4000, "regulars": [("p10", "p11")], "seed": 21}


def test_pair_that_stops_bluffing_each_other_reads_no_deficit_in_value_spots():
    """The regulars p10 and p11 never bluff each other (every weak-hand bet between them made a check); their good
    hands are played as against anyone. Read over every strength (``value_bin`` None, the old check test) the check
    test sees the missing bluffs as a deficit; read where a bet is for value (``value_bin`` 2, the default) it sees
    none, and the pair is not flagged either way."""
    rows = _bets(build_world(**WORLD), ["p10", "p11"], ["p10", "p11"], weak=True)
    assert len(rows) >= 20
    w = build_world(**WORLD)
    _to_checks(w.con, rows)
    old = SoftPlayDetector(value_bin=None)
    so = old.threshold(old.fit(w.con).score(w.con))
    det = SoftPlayDetector()
    assert det.value_bin == 2
    s = det.threshold(det.fit(w.con).score(w.con))
    ro, rv = _pair(so, "p10", "p11"), _pair(s, "p10", "p11")
    assert ro["chk_observed"] < ro["chk_expected"] - 10
    assert abs(rv["chk_observed"] - rv["chk_expected"]) < 0.5 * (ro["chk_expected"] - ro["chk_observed"])
    assert rv["chk_p_value"] > ro["chk_p_value"] and rv["chk_p_value"] > 0.05
    assert not s["flagged"].any() and not so["flagged"].any()


def test_pair_that_checks_its_good_hands_to_each_other_is_found_in_value_spots():
    """The same pair checking three in five of its good hands (strength bin 2 and up) to each other instead:
    flagged by the default detector (``value_bin`` 2)."""
    rows = _bets(build_world(**WORLD), ["p10", "p11"], ["p10", "p11"], weak=False)
    w = build_world(**WORLD)
    _to_checks(w.con, rows[: len(rows) * 3 // 5])
    det = SoftPlayDetector()
    s = det.threshold(det.fit(w.con).score(w.con))
    assert s.filter(pl.col("flagged"))["accounts"].to_list() == [["p10", "p11"]]
