"""Soft play: the check test's own rates compared stage with stage (tournament effective stack), so an honest pair
that meets only when short-stacked is not taken for a pair sparing each other."""

import polars as pl
import pytest

from tests.detect.conftest import build_world
from tests.detect.test_soft_play import MC_SAMPLES


def _tournament_world(seed: int = 21):
    """The cash world of build_world turned into tournament hands (100 bb deep), with a short-stacked stage: every
    hand where p05 and p06 (who sit together, regulars) end up heads-up and a seeded 20 % of the other hands of either
    (stacks 10 bb). Everyone is tight
    there (as players are near the money and short-stacked): in 75 % of the short hands they check where they would
    bet heads-up with no bet to call. p12 and p13 spare each other (60 % of their hands).
    Returns the world and the short hands."""
    from tests.detect.test_soft_play import _check_instead_of_bet

    w = build_world(n_players=24, n_hands=3000, regulars=[("p05", "p06")], seed=seed)
    con = w.con
    con.execute("UPDATE hands SET is_tournament = true, tournament_id = 'T' || (CAST(hand_id AS BIGINT) // 100)::VARCHAR")
    short = {h for (h,) in con.execute("""
        SELECT hand_id FROM actions WHERE player IN ('p05', 'p06') GROUP BY hand_id
        HAVING count(DISTINCT player) FILTER (WHERE n_active = 2) = 2 OR hash(hand_id || 'short') % 100 < 20""").fetchall()}
    con.execute("CREATE OR REPLACE TEMP TABLE _short AS SELECT unnest($h) AS hand_id", {"h": sorted(short)})
    con.execute("UPDATE seats SET stack_start = 10 WHERE hand_id IN (SELECT hand_id FROM _short)")
    # tight when short: everyone's checks in the short hands only
    rows = con.execute("""SELECT hand_id, seq FROM actions a WHERE a.action = 'bet'
                          AND a.to_call = 0 AND a.n_active = 2 AND a.street <> 'preflop'
                          AND a.hand_id IN (SELECT hand_id FROM _short) AND hash(a.hand_id || 'tight') % 100 < 75""").fetchall()
    con.execute("CREATE OR REPLACE TEMP TABLE _chg (hand_id VARCHAR, seq INTEGER)")
    con.executemany("INSERT INTO _chg VALUES (?, ?)", rows)
    con.execute("UPDATE actions a SET action = 'check', amount = 0 FROM _chg c WHERE a.hand_id = c.hand_id AND a.seq = c.seq")
    soft = _check_instead_of_bet(con, ["p12"], against="p13", share=0.6) | _check_instead_of_bet(con, ["p13"], against="p12", share=0.6)
    assert len(rows) >= 40 and len(soft) >= 15
    return w, short


def _row(sc, a, b):
    return sc.filter(pl.col("player").is_in([a, b]) & pl.col("opponent").is_in([a, b])).row(0, named=True)


def test_honest_pair_met_only_short_stacked_not_flagged_soft_pair_is():
    """p05 / p06 meet heads-up only in the short-stacked stage, where everyone bets less: pooled over the stages
    their own rates over-predict their bets into each other and the pair is flagged (the confounder); with the stage
    as an own-rate bin (tournament effective stack <= 20 bb) each expected count compares like with like and the
    pair is cleared, while the planted pair p12 / p13 stays the one flag."""
    from detectors.soft_play import SoftPlayDetector

    w, short = _tournament_world()
    pooled = SoftPlayDetector(samples=MC_SAMPLES, stage_bb=None).fit(w.con).score(w.con)
    staged_det = SoftPlayDetector(samples=MC_SAMPLES).fit(w.con)
    staged = staged_det.score(w.con)
    assert staged_det.source_.decisions(w.con).filter(pl.col("stage") == 2)["hand_id"].is_in(sorted(short)).all()
    before, after = _row(pooled, "p05", "p06"), _row(staged, "p05", "p06")
    # the confounder: pooled, the honest pair looks like soft play
    assert before["q_value"] <= 0.01 and before["chk_observed"] < 0.6 * before["chk_expected"]
    # stage with stage: their bets into each other are what their own short-stacked rates predict
    assert after["p_value"] > 0.005 and after["q_value"] > 0.5
    assert after["chk_observed"] > 0.8 * after["chk_expected"] and after["chk_expected"] < 0.5 * before["chk_expected"]
    fl = [sorted(a) for a in staged_det.threshold(staged).filter(pl.col("flagged"))["accounts"].to_list()]
    assert fl == [["p12", "p13"]], fl
    # the soft pair plays deep: compared with its deep-stage rates only (everyone's tight short hands no longer dilute
    # them) its evidence is stronger, not weaker
    soft, soft_pooled = _row(staged, "p12", "p13"), _row(pooled, "p12", "p13")
    assert soft["q_value"] < 1e-3 and soft["p_value"] < soft_pooled["p_value"]


def test_stage_bin_changes_nothing_at_cash_tables():
    """Cash decisions are one stage (0): on the cash world the stage bin leaves every pair's p-value as it was."""
    import numpy as np

    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=16, n_hands=1500, soft=[(("p01", "p02"), 0.3)], seed=5)
    a = SoftPlayDetector().fit(w.con)
    b = SoftPlayDetector(stage_bb=None).fit(w.con)
    assert set(a.cells_["stage"].unique().to_list()) == {0}
    sa, sb = a.score(w.con).sort("player", "opponent"), b.score(w.con).sort("player", "opponent")
    np.testing.assert_allclose(sa["p_value"].to_numpy().astype(float), sb["p_value"].to_numpy().astype(float), rtol=1e-9)
