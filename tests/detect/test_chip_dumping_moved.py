"""Chip dumping's chips-moved gate (issue 32): the chips a giver lost to a receiver in the hands where its play
deviates are tested against the giver's own losses in such hands against everyone else, with the pair's variance,
instead of a fixed number of big blinds."""

import numpy as np
import polars as pl

from tests.detect.test_chip_dumping import _scored


def _with_flow(rows, dev):
    """``_scored(rows)`` with the deviation flow per row: (hands met, deviation hands, hands lost, chips lost, their
    squares, hands met with others, chips lost to them, their squares)."""
    cols = ("dev_met_hands", "dev_hands", "dev_loss_hands", "dev_flow_bb", "dev_flow_sq", "dev_met0", "dev_flow0",
            "dev_sq0")
    t = _scored(rows)
    order = {(r[0], r[1]): i for i, r in enumerate(rows)}
    idx = [order[(a, b)] for a, b in zip(t["player"], t["opponent"])]
    t = t.with_columns([pl.Series(c, [float(dev[i][k]) for i in idx]) for k, c in enumerate(cols)])
    return t.with_columns(dev_exp_bb=pl.col("dev_met_hands") * pl.col("dev_flow0") / pl.col("dev_met0").clip(1.0))


def _flagged(det, t):
    return sorted(tuple(a) for a in det.threshold(t).filter(pl.col("flagged"))["accounts"].to_list())


def test_a_small_consistent_dump_counts_and_a_big_swing_does_not():
    """Three pairs at q 1e-6, cards known, the value given not significant on its own (p 0.02):
    S -> T, a small dump: 14 hands met, in 8 of them S put chips in with junk and lost 2 bb each (16 bb in all)
    where S loses 0.05 bb per hand met in such hands against others: under the old 20 bb bar, flagged now (p < 1e-3);
    W -> X, one big pot: 30 hands met, 150 bb lost in one deviation hand and 1 bb in each of 5 more (155 bb), the
    pair's own variance is that one pot: the old gate flagged it (155 bb, 6 hands lost), now not (p > 0.05);
    L -> M, a large dump over many hands (40 of 200 hands met, 5 bb each): flagged before and now."""
    from detectors.chip_dumping import ChipDumpingDetector

    rows = [("S", "T", 1e-6, -5.0, 3, 0.02, 14, 300.0), ("W", "X", 1e-6, 150.0, 6, 0.02, 30, 300.0),
            ("L", "M", 1e-6, 200.0, 40, 0.02, 200, 300.0)]
    dev = [(14, 8, 8, 16.0, 8 * 2.0 ** 2, 300, 15.0, 300 * 0.5), (30, 6, 6, 155.0, 150.0 ** 2 + 5, 300, 15.0, 150.0),
           (200, 40, 40, 200.0, 40 * 25.0, 300, 15.0, 150.0)]
    t = _with_flow(rows, dev)
    det = ChipDumpingDetector()
    p = dict(zip(t["player"], det._moved_p(t)))
    assert p["S"] < 1e-3 and p["W"] > 0.05 and p["L"] < 1e-6
    assert _flagged(det, t) == [("L", "M"), ("S", "T")]
    note = det._flow_note(det.flag(t).filter(pl.col("player") == "W").row(0, named=True), "W", "X")
    assert "p = " in note and "(a flag needs at most 0.0025)" in note and "(at most 0.005)" in note


def test_a_feeders_other_receivers_leave_its_baseline():
    """F feeds R1 and R2 (q <= alpha both): 10 bb lost in 12 of 40 hands met with R1 and in 40 of 100 with R2,
    where F lost 1 bb in 100 hands met with everyone else. With R2 in F's baseline, F's own rate is mostly the dump
    (2 bb per hand met) and F -> R1 is ordinary (p > 0.05); without it (a partner the combined test already finds),
    F -> R1's p is below 1e-3. A giver with no own baseline (G: 2 hands with others) is tested against no loss
    with the population's spread."""
    from detectors.chip_dumping.moved import deviation_moved_p

    t = pl.DataFrame({
        "player": ["F", "F", "G"], "opponent": ["R1", "R2", "H"], "q_value": [1e-6, 1e-6, 1e-6],
        "dev_met_hands": [40.0, 100.0, 20.0], "dev_flow_bb": [120.0, 400.0, 60.0],
        "dev_flow_sq": [1200.0, 4000.0, 180.0],
        "dev_met0": [200.0, 140.0, 2.0], "dev_flow0": [401.0, 121.0, 0.0], "dev_sq0": [4010.0, 1210.0, 0.0]})
    p = deviation_moved_p(t, alpha=0.01, prior_df=2.0, min_n0=10, pop_var=4.0)
    assert p[0] < 1e-3 and p[1] < 1e-3 and p[2] < 1e-3
    loose = deviation_moved_p(t.with_columns(q_value=pl.lit(0.5)), alpha=0.01, prior_df=2.0, min_n0=10)
    assert loose[0] > 0.05
    assert np.isnan(deviation_moved_p(t.drop("dev_flow_sq"), alpha=0.01, prior_df=2.0, min_n0=10)).all()


def test_the_amount_is_ranked_against_the_population_of_pairs():
    """600 pairs (q 0.5) whose excess in the deviation hands is -10 to 40 bb, and two at q 1e-6: B1 -> B2 lost 300 bb
    beyond its own rate, the largest excess of the population (p = (1 + 1) / (602 + 1) <= alpha / 2), in hands whose pair variance
    leaves the per-hand test at p > 0.05 (world b's dumps in a few deep pots): flagged on the amount. H1 -> H2, the
    honest shape of a tuning world (honest-b-6: 24 bb lost in 28 of 199 hands met, 9 bb predicted, per-hand p 0.03):
    its 16 bb rank among the population's ordinary excesses and its per-hand p is above alpha/2: not flagged."""
    from detectors.chip_dumping import ChipDumpingDetector
    from detectors.chip_dumping.moved import amount_rank_p

    rng = np.random.default_rng(7)
    exc = rng.uniform(-10.0, 40.0, 600)
    t = pl.DataFrame({
        "player": [f"x{i}" for i in range(600)] + ["B1", "H1"], "opponent": [f"y{i}" for i in range(600)] + ["B2", "H2"],
        "q_value": [0.5] * 600 + [1e-6, 1e-6], "dev_met_hands": [50.0] * 600 + [220.0, 199.0],
        "dev_flow_bb": list(exc) + [310.0, 24.4], "dev_flow_sq": [200.0] * 600 + [3.0e5, 44.3],
        "dev_exp_bb": [0.0] * 600 + [10.0, 8.8], "dev_met0": [300.0] * 600 + [237.0, 394.0],
        "dev_flow0": [0.0] * 600 + [10.8, 17.4], "dev_sq0": [900.0] * 600 + [2300.0, 105.1],
    }).with_columns(accounts=pl.concat_list("player", "opponent"), tournaments=pl.lit([], pl.List(pl.Utf8)),
                    p_value=pl.col("q_value") / 10, score=-pl.col("q_value").log10(), net_flow_bb=pl.lit(0.0),
                    flow_hands=pl.lit(0), value_p=pl.lit(0.5), value_n=pl.lit(50), n0=pl.lit(300.0))
    p = amount_rank_p(t)
    assert abs(p[600] - 2 / 603) < 1e-12 and p[601] > 0.01
    det = ChipDumpingDetector()
    moved = dict(zip(t["player"], det._moved_p(t)))
    assert moved["B1"] > 0.05 and 0.005 < moved["H1"] < 0.05
    flagged = det.flag(t).filter(pl.col("flagged"))
    assert flagged["player"].to_list() == ["B1"]


def test_the_value_given_is_a_test_of_the_chips_moved_gate_at_its_share_of_the_level():
    """The value given (cards known) rejects "the chips did not move" at a quarter of the gate's level, as one of its
    three tests (Bonferroni with the deviation hands' two), no longer at a fixed 1e-3 outside it. Four pairs at
    q 1e-6 whose deviation hands moved nothing (no chips lost there): V -> R, value p 0.002 over 30 heads-up hands
    against 300 of V's own, flagged at alpha 0.01 (0.0025; the old fixed level left it); U -> S, p 0.004, not
    flagged. At alpha 0.001 the gate's value level is 2.5e-4: K -> L at p 5e-4, which the old 1e-3 flagged whatever
    the level, is not; M -> N at p 1e-4 is."""
    from detectors.chip_dumping import ChipDumpingDetector

    rows = [("V", "R", 1e-6, -3.0, 4, 0.002, 30, 300.0), ("U", "S", 1e-6, -3.0, 4, 0.004, 30, 300.0),
            ("K", "L", 1e-6, -3.0, 4, 5e-4, 30, 300.0), ("M", "N", 1e-6, -3.0, 4, 1e-4, 30, 300.0)]
    none = (30, 0, 0, 0.0, 0.0, 300, 15.0, 150.0)  # 30 hands met, no deviation hand; 15 bb lost to others in 300
    t = _with_flow(rows, [none] * 4)
    det = ChipDumpingDetector()
    assert _flagged(det, t.filter(pl.col("player").is_in(["V", "U"]))) == [("V", "R")]
    assert det._gate_levels() == (0.0025, 0.0025, 0.005)
    # the share follows the level: at alpha 0.001 the value test's is 2.5e-4
    assert _flagged(ChipDumpingDetector(alpha=0.001), t.filter(pl.col("player").is_in(["K", "M"]))) == [("M", "N")]
    note = det._flow_note(det.flag(t).filter(pl.col("player") == "V").row(0, named=True), "V", "R")
    assert "against at most 0.0025, a quarter of the chips-moved gate's level" in note
