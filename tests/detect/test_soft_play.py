"""SoftPlayDetector on a planted world: the soft pair and ring are found with the hands where it happened;
regulars who meet all the time, and dumpers, are not accused of soft play; player view says what it could not do."""

import networkx as nx

from detectors import graphs
from tests.detect.conftest import build_world, to_player_view

HONEST = {f"p{i:02d}" for i in range(36)} - {"p01", "p02", "p03", "p04", "p05", "p06", "p07", "p20", "p21", "p22", "p23"}


def flagged(signals):
    return [s for s in signals if s.flagged]


def test_soft_pair_found_with_its_hands(planted_world, planted_signals):
    sigs = flagged(planted_signals["soft_play"])
    pair = [s for s in sigs if {"p01", "p02"} <= set(s.accounts)]
    assert pair, [s.accounts for s in sigs]
    s = pair[0]
    assert s.score > 3 and s.p_value < 1e-4
    soft_hands = set(planted_world.soft_hands[frozenset(("p01", "p02"))])
    top = s.hands[:5]
    assert len(set(top) & soft_hands) >= 3, (top, sorted(soft_hands)[:10])
    names = [e.name for e in s.evidence]
    assert any("bets or raises" in n for n in names)
    agg = next(e for e in s.evidence if "bets or raises" in e.name)
    assert agg.value < agg.baseline and agg.n >= 20 and agg.sql
    assert "p01" in s.summary and "p02" in s.summary and "spots" in s.summary


def test_ring_members_are_accused_together(planted_signals):
    ring = {"p03", "p04", "p05"}
    assert any(len(set(s.accounts) & ring) >= 2 for s in flagged(planted_signals["soft_play"]))


def test_honest_lookalikes_not_flagged(planted_world, planted_signals):
    for s in flagged(planted_signals["soft_play"]):
        assert len(set(s.accounts) - HONEST) >= 2, f"honest accounts accused: {s.accounts}"
        assert not {"p10", "p11"} <= set(s.accounts)  # regulars who sit together at every hand
    # the regulars are tested (they meet in many spots) and cleared, not skipped
    import polars as pl

    from detectors.soft_play import SoftPlayDetector

    det = SoftPlayDetector()
    scores = det.fit(planted_world.con).score(planted_world.con)
    reg = scores.filter((pl.col("player") == "p10") & (pl.col("opponent") == "p11"))
    assert reg.height == 1
    row = reg.row(0, named=True)
    assert row["aggr_n"] + row["aggr_n_r"] >= det.min_spots and row["q_value"] > det.alpha


def test_groups_ring_star_pair():
    g = graphs.suspicion_graph([("a", "b", 5), ("b", "c", 4), ("a", "c", 3), ("h", "x", 2), ("h", "y", 2), ("h", "z", 2), ("p", "q", 1)])
    shapes = {g2.shape: g2.accounts for g2 in graphs.groups(g)}
    assert shapes["ring"] == ["a", "b", "c"]
    assert shapes["star"] == ["h", "x", "y", "z"]
    assert shapes["pair"] == ["p", "q"]
    big = nx.barbell_graph(6, 0)
    gg = graphs.suspicion_graph((str(u), str(v), 1.0) for u, v in big.edges())
    rings = [x for x in graphs.groups(gg, max_component=8) if x.shape == "ring"]
    assert sorted(len(r.accounts) for r in rings) == [6, 6]


def test_player_view_runs_and_says_what_is_missing():
    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=16, n_hands=800, soft=[(("p01", "p02"), 0.6)], seed=3)
    to_player_view(w.con)
    det = SoftPlayDetector()
    sigs = det.detect(w.con)
    assert det.missing_ and "card-aware" in det.missing_[0]
    assert all(s.missing for s in sigs)
    assert not any(s.flagged and not ({"p01", "p02"} & set(s.accounts)) for s in sigs)


def _check_instead_of_bet(con, players, *, against=None, share=1.0, seed=0):
    """Turn ``players``' heads-up bets with no bet to call into checks (optionally only against ``against``,
    in a seeded ``share`` of those hands). Returns the hands changed."""
    cond = "AND EXISTS (SELECT 1 FROM seats s WHERE s.hand_id = a.hand_id AND s.player = $other AND s.dealt_in)" if against else ""
    rows = con.execute(f"""SELECT hand_id, seq FROM actions a WHERE list_contains($players, a.player) AND a.action = 'bet'
                           AND a.to_call = 0 AND a.n_active = 2 AND a.street <> 'preflop' {cond}
                           AND hash(a.hand_id || $seed) % 1000 < $share * 1000""",
                       {"players": list(players), "other": against, "seed": str(seed), "share": share} if against else
                       {"players": list(players), "seed": str(seed), "share": share}).fetchall()
    if rows:
        con.execute("CREATE OR REPLACE TEMP TABLE _chg (hand_id VARCHAR, seq INTEGER)")
        con.executemany("INSERT INTO _chg VALUES (?, ?)", rows)
        con.execute("UPDATE actions a SET action = 'check', amount = 0 FROM _chg c WHERE a.hand_id = c.hand_id AND a.seq = c.seq")
    return {h for h, _ in rows}


def test_pair_that_only_stops_betting_into_each_other_found_by_the_check_test():
    """p12 and p13 (honest otherwise) check instead of betting when heads-up with each other in 60 % of the
    hands: found, the check test is the strongest evidence, and the hands are the changed ones; p14, who checks
    instead of betting against everyone, is passive, not soft: not flagged."""
    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=24, n_hands=3000, seed=21)
    changed = _check_instead_of_bet(w.con, ["p12"], against="p13", share=0.6) | _check_instead_of_bet(w.con, ["p13"], against="p12", share=0.6)
    _check_instead_of_bet(w.con, ["p14"])
    assert len(changed) >= 15
    sigs = SoftPlayDetector().detect(w.con)
    fl = flagged(sigs)
    assert [sorted(s.accounts) for s in fl] == [["p12", "p13"]], [(s.accounts, s.score) for s in fl]
    s = fl[0]
    chk = s.evidence[0]
    assert chk.name == "both directions: bet when heads-up with no bet to call"
    assert chk.value < 0.6 * chk.baseline and chk.n >= 20 and chk.p_value < 1e-4
    assert s.summary.split(": ", 1)[1].startswith("bet into each other heads-up")
    assert len(set(s.hands[:10]) & changed) >= 8, s.hands[:10]
    assert not any("p14" in x.accounts for x in fl)


def test_pair_p_value_is_the_check_test_weighted_not_tripled():
    """The pair's p-value is the weighted Bonferroni of the check / raise / fold tests (weights 0.9 / 0.05 / 0.05):
    a pair that shows only in the check test pays x1/0.9, not x3 (the plain Bonferroni cost that left weak pairs
    at q ~ 0.02); a pair found only by the raise or fold test would pay x1/0.05 on that test. The planted pair is
    still found with the changed hands first and the passive look-alike p14 is not flagged."""
    import numpy as np
    import pytest

    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=24, n_hands=3000, seed=21)
    changed = _check_instead_of_bet(w.con, ["p12"], against="p13", share=0.6) | _check_instead_of_bet(w.con, ["p13"], against="p12", share=0.6)
    _check_instead_of_bet(w.con, ["p14"])
    det = SoftPlayDetector().fit(w.con)
    sc = det.score(w.con)
    row = sc.filter((sc["player"].is_in(["p12", "p13"])) & (sc["opponent"].is_in(["p12", "p13"]))).row(0, named=True)
    pc, pr, pf = row["chk_p_value"], row["rse_p_value"], row["fld_p_value"]
    assert None not in (pc, pr, pf)
    assert row["p_value"] == pytest.approx(min(pc / 0.9, pr / 0.05, pf / 0.05, 1.0))
    assert row["p_value"] < 2 * pc  # the plain Bonferroni gave 3 * pc
    # the same pair under equal weights (the old rule) has a larger q: the weighting only moves power to the check test
    old = SoftPlayDetector(test_weights=(1, 1, 1)).fit(w.con).score(w.con)
    orow = old.filter((old["player"].is_in(["p12", "p13"])) & (old["opponent"].is_in(["p12", "p13"]))).row(0, named=True)
    assert orow["p_value"] == pytest.approx(min(3 * min(pc, pr, pf), 1.0))
    assert row["q_value"] < orow["q_value"]
    fl = [s for s in det.detect(w.con) if s.flagged]
    assert [sorted(s.accounts) for s in fl] == [["p12", "p13"]]
    assert len(set(fl[0].hands[:10]) & changed) >= 8
    assert np.isfinite(row["score"]) and row["score"] > orow["score"]


def test_small_sample_tail_power_weights_and_mutual_rule():
    """The planted pair p12/p13 (both check instead of betting into each other in 60 % of their hands):
    the skew-corrected tail gives it a larger p-value than the normal one (never smaller), the power-weighted BH
    a smaller q than plain BH (it met in many spots), both directions show the deficit (z >= 1 each), and the
    mutual rule is what a flag needs: demanding z >= 50 each way flags nobody."""
    import polars as pl

    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=24, n_hands=3000, seed=21)
    _check_instead_of_bet(w.con, ["p12"], against="p13", share=0.6)
    _check_instead_of_bet(w.con, ["p13"], against="p12", share=0.6)

    def pair_row(**kw):
        det = SoftPlayDetector(**kw).fit(w.con)
        s = det.threshold(det.score(w.con))
        return s.filter(pl.col("player").is_in(["p12", "p13"]) & pl.col("opponent").is_in(["p12", "p13"])).row(0, named=True), s

    row, s = pair_row()
    assert row["flagged"] and s.filter(pl.col("flagged"))["accounts"].to_list() == [["p12", "p13"]]
    assert min(row["dir_z"], row["dir_z_r"]) >= 1.0
    normal, _ = pair_row(skew=False)
    assert row["chk_p_value"] > normal["chk_p_value"]
    plain, _ = pair_row(weight_scale=None)
    assert row["q_value"] < plain["q_value"] <= SoftPlayDetector().alpha
    strict, s50 = pair_row(mutual_z=50.0)
    assert not strict["flagged"] and not s50["flagged"].any()
