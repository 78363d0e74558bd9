"""Chip dumping where the cards are unknown (the player view, issue 32): the chips a giver lost to a receiver per hand
in which chips moved between them are tested against the giver's own losses per such hand against everyone else, with
the pair's variance, and ranked among the population's pairs, instead of a net flow of 20 bb in 5 hands."""

import polars as pl

from tests.detect.test_chip_dumping import _scored

#: per row: the hands in which chips moved between the two, those the giver lost, the chips lost over them, their
#: squares, the same hands with others, the chips lost to them, their squares
MET = ("xch_hands", "xch_loss_hands", "xch_flow_bb", "xch_flow_sq", "xch_hands0", "xch_flow0", "xch_sq0")


def _with_met(rows, met):
    """``_scored(rows)`` with the flow per hand exchanged per row (:data:`MET`) and the giver's own rate's
    prediction ``xch_exp_bb``."""
    t = _scored(rows)
    order = {(r[0], r[1]): i for i, r in enumerate(rows)}
    idx = [order[(a, b)] for a, b in zip(t["player"], t["opponent"])]
    t = t.with_columns([pl.Series(c, [float(met[i][k]) for i in idx]) for k, c in enumerate(MET)])
    return t.with_columns(xch_exp_bb=pl.col("xch_hands") * pl.col("xch_flow0") / pl.col("xch_hands0").clip(1.0))


def _world():
    """Rows at q 1e-6 whose cards are unknown (no value test), and 300 honest pairs (q 0.5) whose flows over 50 hands
    exchanged (hands in which one lost chips to the other) run from -100 to +195 bb (the population's pairs the
    amount is ranked among):

    A -> B, a small consistent dump: 1.5 bb lost in each of 12 hands (18 bb), A breaks even against others;
    W -> X, one big pot: 150 bb lost once and 1 bb in 5 more of 30 hands (155 bb), W's others 0.05 bb a hand;
    H -> S, a weak player against a stronger one: 80 bb lost over 200 hands, 0.4 bb a hand, as H loses to
    everyone (800 such hands with others);
    L -> M, a large dump over many hands: 400 bb over 200 hands (2 bb a hand), L breaks even against others;
    K -> N, L's figures with the cards known (the value test made on 30 hands, not significant): the flow over
    every hand is no gate there (the chips must have moved where K's play deviates)."""
    rows = [("A", "B", 1e-6, 18.0, 12, None, 0, None), ("W", "X", 1e-6, 155.0, 6, None, 0, None),
            ("H", "S", 1e-6, 80.0, 100, None, 0, None), ("L", "M", 1e-6, 400.0, 150, None, 0, None),
            ("K", "N", 1e-6, 400.0, 150, 0.2, 30, 300.0)]
    met = [(12, 12, 18.0, 12 * 1.5 ** 2, 300, 0.0, 300 * 4.0), (30, 6, 155.0, 150.0 ** 2 + 5, 300, 15.0, 150.0),
           (200, 100, 80.0, 200 * 25.16, 800, 320.0, 800 * 25.16), (200, 150, 400.0, 200 * 29.0, 300, 0.0, 300 * 25.0),
           (200, 150, 400.0, 200 * 29.0, 300, 0.0, 300 * 25.0)]
    for i in range(300):
        flow = (i % 60) * 5.0 - 100.0
        rows.append((f"x{i:03d}", f"y{i:03d}", 0.5, flow, 25, None, 0, None))
        met.append((50, 25, flow, 50 * 25.0 + flow ** 2 / 50, 200, 0.0, 200 * 25.0))
    return _with_met(rows, met)


def _flagged(det, t):
    return sorted(tuple(a) for a in det.threshold(t).filter(pl.col("flagged"))["accounts"].to_list())


def test_where_the_cards_are_unknown_the_chips_moved_is_tested_per_hand_exchanged():
    """Flagged: A -> B (18 bb: under the old 20 bb bar; against A's own break-even play, with the pair's small
    variance, p < 1e-3) and L -> M (400 bb over 200 hands, flagged before and now). Not flagged: W -> X (one pot of
    150 bb, the pair's own variance: p > 0.05, and 153 bb beyond W's own rate is no more than the population's pairs
    move; the old gate flagged it, 155 bb in 6 hands lost), H -> S (80 bb is what H loses to everyone per hand met:
    the old gate flagged it) and K -> N (the cards known)."""
    from detectors.chip_dumping import ChipDumpingDetector

    t = _world()
    det = ChipDumpingDetector()
    out = det.flag(t)
    p = {(r["player"], r["opponent"]): r for r in out.iter_rows(named=True)}
    assert p[("A", "B")]["flow_moved_p"] < 1e-3 and p[("L", "M")]["flow_moved_p"] < 1e-3
    assert p[("W", "X")]["flow_moved_p"] > 0.05 and p[("W", "X")]["flow_amount_p"] > 0.05
    assert p[("H", "S")]["flow_moved_p"] > 0.3 and p[("H", "S")]["flow_amount_p"] > 0.3
    assert p[("L", "M")]["flow_amount_p"] < 0.01  # with K -> N, the top two of the population's 305 pairs
    assert _flagged(det, t) == [("A", "B"), ("L", "M")]


def test_the_case_states_the_test_where_the_cards_are_unknown():
    """The flagged A -> B says the chips moved with its figures and both p; the unflagged H -> S says the chips did
    not move, in numbers, and what a flag needs where the cards are unknown; the evidence carries the flow over every
    hand met with the own-null test's p where the cards are unknown, not where they are known."""
    from detectors.chip_dumping import ChipDumpingDetector

    det = ChipDumpingDetector()
    out = det.threshold(_world())
    row = lambda a: out.filter(pl.col("player") == a).row(0, named=True)  # noqa: E731
    note = det._flow_note(row("A"), "A", "B")
    assert note.startswith(" The chips moved from A to B (the cards unknown): A lost 18 bb to B over the 12 hands in "
                           "which chips moved between them")
    assert "A's own rate in such hands against others predicts 0 bb" in note and "at most 0.005" in note
    note = det._flow_note(row("H"), "H", "S")
    assert note.startswith(" Not flagged, the chips did not move from H to S: net 80 bb")
    assert "where the cards are unknown a flag needs the chips to have moved in the hands in which chips moved" in note
    assert "H's own rate in such hands against others predicts 80 bb" in note
    ev = {e.name: e for e in det._flow_evidence(row("A"))}
    met = ev["chips A lost to B per hand in which chips moved between them (bb, net)"]
    assert (met.value, met.baseline, met.n) == (18.0, 0.0, 12) and met.p_value < 1e-3
    assert not any("per hand in which" in e.name for e in det._flow_evidence(row("K")))


def test_the_flow_per_hand_exchanged_sums_both_directions_and_the_givers_others():
    """exchange_flow on the built world of test_chip_dumping_flows (big blind 2): F lost 10 bb to R in 8 hands and won
    100 bb back in 32 (-20 bb over 40 hands exchanged, 8 lost), never exchanging chips with its ten others (0 hands
    against others); L lost 10 bb to M in 8 hands (the other 32 broke even: no exchange), and 10 bb in 4 of 20 hands
    to each of its ten others (40 such hands, 400 bb: its own rate predicts 80 bb for M's 8 hands); M's row is L's
    reversed."""
    from detectors.chip_dumping.flows import exchange_flow
    from tests.detect.test_chip_dumping_flows import _deviation_world

    con, _ = _deviation_world()
    x = exchange_flow(con)
    one = lambda a, b: x.filter((pl.col("player") == a) & (pl.col("opponent") == b)).row(0, named=True)  # noqa: E731
    f = one("F", "R")
    assert (f["xch_hands"], f["xch_loss_hands"], f["xch_hands0"]) == (40.0, 8.0, 0.0)
    assert abs(f["xch_flow_bb"] + 20.0) < 1e-9 and abs(f["xch_flow_sq"] - (8 * 100.0 + 32 * (100 / 32) ** 2)) < 1e-9
    lm = one("L", "M")
    assert (lm["xch_hands"], lm["xch_loss_hands"], lm["xch_flow_bb"]) == (8.0, 8.0, 80.0)
    assert (lm["xch_hands0"], lm["xch_flow0"], lm["xch_sq0"]) == (40.0, 400.0, 4000.0) and lm["xch_exp_bb"] == 80.0
    ml = one("M", "L")
    assert (ml["xch_hands"], ml["xch_loss_hands"], ml["xch_flow_bb"]) == (8.0, 0.0, -80.0)
