"""ChipDumpingDetector's flag rule (issue 32): the pairs that met heads-up are a false-discovery family of their own,
and where the cards are known the chips must have moved where the giver's play deviates (or as value given), not
merely over all the pair's hands."""

import numpy as np

from tests.detect.test_chip_dumping import _hand_flow, _scored


def test_the_heads_up_pairs_are_a_false_discovery_family_of_their_own():
    """A dump with 23 heads-up hands (p 3.5e-6, the shape of a tuning world's missed 0.25 group) among 1,500 pairs
    that met heads-up and 21,000 seen by the presence test alone. Pooled in one Benjamini-Hochberg family it has
    q 3.5e-6 * 22,500 / 6 = 0.013 (rank 6): the presence-only pairs, fourteen times as many, set its q. As a family
    of its own at half of alpha, rank 5 of 1,500, its q is 3.5e-6 * 1,500 / 5 / 0.5 = 0.0021: flagged.
    A presence-only pair keeps its test at the other half (p 1e-7: q 1e-7 * 21,000 / 0.5 = 0.0042); a pair in
    neither filter has no q. The two families' q are on alpha's scale: each family's discoveries at q <= alpha are
    its BH discoveries at alpha times its share, so the union's false-discovery rate stays at most alpha."""
    from detectors.chip_dumping import ChipDumpingDetector

    rng = np.random.default_rng(3)
    hu_p = np.concatenate([[1e-12, 1e-11, 1e-10, 1e-9, 3.5e-6], rng.uniform(0.001, 1.0, 1495)])
    pres_p = np.concatenate([[1e-7], rng.uniform(0.001, 1.0, 20999)])
    p = np.concatenate([hu_p, pres_p, [1e-9]])
    hu = np.arange(p.size) < 1500
    pres = (np.arange(p.size) >= 1500) & (np.arange(p.size) < p.size - 1)
    new = ChipDumpingDetector(null_tail=None)._family_q(p, hu, pres)
    assert abs(new[4] - 3.5e-6 * 1500 / 5 / 0.5) < 1e-12 and new[4] <= 0.01
    assert abs(new[1500] - 1e-7 * 21000 / 0.5) < 1e-12
    assert np.isnan(new[-1]) and np.all(new[:-1] <= 1.0)
    old = ChipDumpingDetector(heads_up_share=None, null_tail=None)._family_q(p, hu, pres)
    assert old[4] > 0.01 and abs(old[4] - 3.5e-6 * 22500 / 6) < 1e-12
    # all of alpha to the heads-up pairs: the presence-only pairs are not tested
    assert np.isnan(ChipDumpingDetector(heads_up_share=1.0, null_tail=None)._family_q(p, hu, pres)[1500])


def test_a_family_is_read_on_its_own_null_tail():
    """The combined p-values of a population's honest pairs fall below 0.1 about a fifth as often as a uniform null
    says (the presence-only family of the first world's tuning populations: docs/measurements.md, issue 32). Here
    21,000 presence-only pairs whose null CDF is c^1.6 (0.025 at 0.1) and a dump of p 4.5e-7 (the first world's seed
    1051, group g6, a 0.25 tournament dump with 5 heads-up hands): read as uniform, q = 4.5e-7 * 21,001 / 0.5 = 0.019,
    not flagged; on the family's own tail (r = (#p <= 0.1 + 1) / (21,001 * 0.1), about 0.25) q is about 0.005. The
    honest pairs alone keep every q far above alpha, and a family uniform under the null, or conservative in its bulk
    but uniform deeper in its tail, is read as uniform (r = 1)."""
    from detectors.chip_dumping import ChipDumpingDetector
    from detectors.chip_dumping.detector import null_tail_ratio

    rng = np.random.default_rng(5)
    honest = rng.uniform(0.0, 1.0, 21000) ** (1 / 1.6)
    p = np.concatenate([[4.5e-7], honest])
    hu = np.zeros(p.size, dtype=bool)
    pres = np.ones(p.size, dtype=bool)
    r = null_tail_ratio(p, (0.1, 0.01, 0.001))
    assert 0.2 < r < 0.3
    q = ChipDumpingDetector()._family_q(p, hu, pres)
    assert abs(q[0] - 4.5e-7 * r * p.size / 0.5) < 1e-12 and q[0] <= 0.01
    assert ChipDumpingDetector(null_tail=None)._family_q(p, hu, pres)[0] > 0.01
    assert np.nanmin(ChipDumpingDetector()._family_q(honest, hu[1:], pres[1:])) > 0.5
    uniform = np.concatenate([[4.5e-7], rng.uniform(0.0, 1.0, 21000)])
    assert abs(null_tail_ratio(uniform, (0.1, 0.01, 0.001)) - 1.0) < 0.05
    # conservative in its bulk, uniform in its tail (21 of 21,000 below 0.001): read as uniform, the dump not flagged
    tail = np.concatenate([[4.5e-7], honest[:-21], rng.uniform(0.0, 0.001, 21)])
    assert null_tail_ratio(tail, (0.1, 0.01, 0.001)) == 1.0
    assert ChipDumpingDetector()._family_q(tail, hu, pres)[0] > 0.01


def test_chips_won_over_all_hands_do_not_flag_a_pair_whose_cards_are_known():
    """The honest heads-up pair of a tuning world (world b, honest-only, seed 4): K -> L q 1e-7 (L bets into K more
    than into others, K continues more with L), K lost L 88 bb over 275 of 512 hands, but with the cards known the
    value K gave is ordinary (p 0.02) and in the 32 hands where K's play deviated (junk put in, made hands folded
    late) K lost 3 bb against 8 that K's own rate there predicts: the chips moved as a stronger player's edge and
    the cards' luck move them, not where a dump moves them. Not flagged now; flagged before (and with
    ``flow_gate_cards_known``). G -> S, the same flow with the cards unknown (the player view, no value test), is
    flagged on the flow as before (lost about evenly over 275 hands by a giver who breaks even against the others:
    the chips-moved test over every hand in which chips moved between the two); D -> R, whose chips moved in its deviation hands, is
    flagged."""
    import polars as pl

    from detectors.chip_dumping import ChipDumpingDetector

    rows = [("K", "L", 1e-7, 88.0, 275, 0.018, 355, 80.0), ("G", "S", 1e-7, 88.0, 275, None, 0, None),
            ("D", "R", 1e-7, 88.0, 275, 0.3, 355, 80.0)]
    # the deviation flow: K's 32 deviation hands among 364 met (3 bb, squares 258) against 169 hands met with others
    # (3.6 bb, squares 7.6); D lost 90 bb in as many, about 3.75 bb in each of 24
    scored = _scored(rows).with_columns(
        dev_flow_bb=pl.Series([3.0, 0.0, 90.0]), dev_exp_bb=pl.Series([7.8, 0.0, 7.8]),
        dev_loss_hands=pl.Series([24, 0, 24]), dev_hands=pl.Series([32, 0, 32]),
        dev_met_hands=pl.Series([364, 0, 364]), dev_flow_sq=pl.Series([258.0, 0.0, 340.0]),
        dev_met0=pl.Series([169.0, 0.0, 169.0]), dev_flow0=pl.Series([3.6, 0.0, 3.6]),
        dev_sq0=pl.Series([7.6, 0.0, 7.6]))
    scored = _hand_flow(scored, n0=169)
    flagged = lambda det: sorted(  # noqa: E731
        tuple(a) for a in det.threshold(scored).filter(pl.col("flagged"))["accounts"].to_list())
    det = ChipDumpingDetector()
    assert flagged(det) == [("D", "R"), ("G", "S")]
    assert flagged(ChipDumpingDetector(flow_gate_cards_known=True)) == [("D", "R"), ("G", "S"), ("K", "L")]
    k = det.flag(scored).filter(pl.col("player") == "K").row(0, named=True)
    note = det._flow_note(k, "K", "L")
    assert note.startswith(" Not flagged: K lost 88 bb to L over the 275 hands in which chips moved between them")
    assert "but with the cards known a flag needs" in note and "K lost 3 bb to L in the 32 hands" in note
    note = det._flow_note(det.flag(scored).filter(pl.col("player") == "G").row(0, named=True), "G", "S")
    assert note.startswith(" The chips moved from G to S (the cards unknown): G lost 88 bb to S over the 275 hands")
