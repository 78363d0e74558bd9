"""SoftPlayDetector where some hands are dealt to two players: everyone value-bets less there, so two honest regulars
who meet only at such a table are not read against their rates at fuller tables (the cell ``two``), while a pair
that spares each other at such a table is still found."""

import polars as pl
import pytest

from detectors.soft_play import SoftPlayDetector
from detectors.soft_play.twohanded import two_handed_factor
from tests.detect.conftest import build_world
from tests.detect.test_soft_play import _pair_row

#: the share of the bets with no bet to call after the flop that everyone makes at a table dealt two-handed
TWO_HANDED_BETS = 0.6


def _dealt_two_handed(con, pairs, share_others: float, seed: int) -> int:
    """Marks hands dealt to two players (``hands.n_players`` = 2): every hand where the two players of one of
    ``pairs`` saw the flop heads-up, and a share ``share_others`` of the other hands seen heads-up after the flop;
    in each marked hand every bet with no bet to call after the flop is a check in a share 1 - ``TWO_HANDED_BETS``
    of them (everyone, at random by hand and decision). Returns the hands marked."""
    con.execute("CREATE OR REPLACE TEMP TABLE _pairs (a VARCHAR, b VARCHAR)")
    con.executemany("INSERT INTO _pairs VALUES (?, ?)", [sorted(p) for p in pairs])
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _two AS
        WITH hu AS (SELECT hand_id, min(player) AS a, max(player) AS b FROM actions
                    WHERE street = 'flop' GROUP BY hand_id HAVING count(DISTINCT player) = 2)
        SELECT hand_id FROM hu
        WHERE EXISTS (SELECT 1 FROM _pairs p WHERE p.a = hu.a AND p.b = hu.b)
           OR (NOT EXISTS (SELECT 1 FROM _pairs p WHERE list_has_any([p.a, p.b], [hu.a, hu.b]))
               AND hash(hand_id || $seed) % 1000 < $share * 1000)""", {"seed": str(seed), "share": share_others})
    con.execute("UPDATE hands SET n_players = 2 WHERE hand_id IN (SELECT hand_id FROM _two)")
    con.execute("""UPDATE actions SET action = 'check', amount = 0
                   WHERE hand_id IN (SELECT hand_id FROM _two) AND street <> 'preflop' AND action = 'bet'
                     AND to_call = 0 AND hash(hand_id || $seed || seq) % 1000 >= $keep * 1000""",
                {"seed": str(seed), "keep": TWO_HANDED_BETS})
    return con.execute("SELECT count(*) FROM _two").fetchone()[0]


@pytest.fixture(scope="module")
def world():
    """Regulars p10-p11 (honest, seated together at every hand of their table) and a soft pair p01-p02 (no bet
    into each other in 60 % of their hands), each pair's heads-up hands all dealt two-handed, and a fifth of the
    others' heads-up hands; everyone bets less there (``TWO_HANDED_BETS``)."""
    w = build_world(n_players=24, n_hands=5000, soft=[(("p01", "p02"), 0.6)], regulars=[("p10", "p11")], seed=13)
    w.marked = _dealt_two_handed(w.con, [("p10", "p11"), ("p01", "p02")], 0.2, seed=5)
    return w


def _scores(con, **kw):
    """The fitted detector and its thresholded scores, the cell ``two`` on for the check test unless ``kw`` says."""
    det = SoftPlayDetector(**{"two_tests": ("chk",), **kw}).fit(con)
    return det, det.threshold(det.score(con))


def test_regulars_dealt_two_handed_are_read_against_the_two_handed_cell(world):
    """Read against their rates at fuller tables, the regulars bet into each other about 0.6 of what those rates
    predict and are flagged (the cell off: ``two_tests=()``); with the cell, their rates at the table dealt
    two-handed are shrunk to the population's there, they are not flagged, and the population's figure shown in
    the evidence says how much less everyone bets there."""
    con = world.con
    assert world.marked > 300
    _, old = _scores(con, two_tests=())
    reg = _pair_row(old, "p10", "p11")
    assert reg["flagged"] and reg["chk_ratio"] < 0.8
    det, new = _scores(con)
    reg = _pair_row(new, "p10", "p11")
    assert not reg["flagged"] and reg["p_value"] > 100 * _pair_row(old, "p10", "p11")["p_value"]
    assert reg["chk_two_n"] > 0.9 * reg["chk_n"]
    f = det.two_factor_
    assert f["spots"] > 500 and 0.35 < f["factor"] < 0.7 and f["z"] < -5  # (the soft pair bets less still)
    assert f == pytest.approx(two_handed_factor(det.cells_, det._baseline_args("chk")[1]["where"]), rel=1e-12)
    y, kw = det._baseline_args("chk")
    assert "two" in kw["bins"] and "two" not in det._baseline_args("rse")[1].get("bins", ())
    sig = det.explain(con, reg)
    ev = [e for e in sig.evidence if e.name.startswith("two-handed value spots: population bets")]
    assert len(ev) == 1 and f"{f['factor']:.2f}" in ev[0].name and ev[0].value == pytest.approx(f["factor"])
    assert new.filter(pl.col("flagged")).filter(pl.col("accounts").list.contains("p10"))["accounts"].to_list() == []


def test_a_pair_sparing_each_other_two_handed_is_still_found(world):
    """The soft pair plays all its heads-up hands at the table dealt two-handed; against its own rates at fuller
    tables times the population's factor there (``two_prior="own"``) it still bets far less than predicted and is
    flagged, the only pair flagged. Its rates there shrunk to the population's instead (``"population"``: it has no
    two-handed spot against others, so those rates are the population's, uncertain) leave it near the line."""
    _, new = _scores(world.con)
    soft = _pair_row(new, "p01", "p02")
    assert soft["flagged"] and soft["chk_two_n"] > 0.9 * soft["chk_n"] and soft["chk_observed"] < 0.5 * soft["chk_expected"]
    assert soft["p_value"] < 1e-10
    assert new.filter(pl.col("flagged"))["accounts"].to_list() == [["p01", "p02"]]
    _, pop = _scores(world.con, two_prior="population")
    assert _pair_row(pop, "p01", "p02")["p_value"] > 1e6 * soft["p_value"]
    assert not _pair_row(pop, "p10", "p11")["flagged"]
