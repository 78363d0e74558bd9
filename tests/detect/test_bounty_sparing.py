"""Bounty collusion's sparing family (issue 32): bets after the flop into a partner still in the pot against each
player's own rate in the same tournament with other opponents in, a pair's tournaments spread as the population's
pairs' are, and the family's share of alpha."""

import duckdb
import numpy as np
import polars as pl
import pytest
from scipy import stats as st

from detectors.bounty_collusion import BountyCollusionDetector
from detectors.features.gameplay.bounty_sparing import (SPARING_ROWS_SQL, _icc, sparing_counts, sparing_rates,
                                                        sparing_tested)


def _own(rows):
    """The player's own counts per hand from (player, tournament, hand, cell, hn, hk) tuples."""
    return pl.DataFrame(rows, schema=["player", "tournament_id", "hand_id", "cell", "hn", "hk"], orient="row")


def _pairs(rows):
    """The pair counts from (player, partner, tournament, hand, cell, n, k) tuples."""
    return pl.DataFrame(rows, schema=["player", "partner", "tournament_id", "hand_id", "cell", "n", "k"], orient="row")


def _world(passive_tournament: bool):
    """Player a: 400 decisions of one cell in tournament T2 at 40 % bets (other opponents), and 40 in tournament T1
    with other opponents at 10 % (``passive_tournament``) or 40 %; a and b: 30 decisions in T1, 3 bets. Four other
    players, each at 10 % in one tournament and 70 % in another, give the population its spread between
    tournaments."""
    own = [("a", "T2", f"h2{i}", "c", 1, int(i % 5 < 2)) for i in range(400)]
    rate = 1 if passive_tournament else 4
    own += [("a", "T1", f"h1{i}", "c", 1, int(i % 10 < rate)) for i in range(40)]
    own += [("a", "T1", f"hp{i}", "c", 1, int(i < 3)) for i in range(30)]
    own += [(x, t, f"h{x}{t}{i}", "c", 1, int(i % 10 < r)) for x in "defg" for t, r in (("T3", 1), ("T4", 7))
            for i in range(100)]
    pairs = [("a", "b", "T1", f"hp{i}", "c", 1, int(i < 3)) for i in range(30)]
    # the other players' pairs, at their rates, so that the population's pair spread has units
    pairs += [(x, y, t, f"h{x}{t}{i}", "c", 1, int(i % 10 < r)) for x, y in (("d", "e"), ("f", "g"))
              for t, r in (("T3", 1), ("T4", 7)) for i in range(100)]
    return _pairs(pairs), _own(own)


def test_a_pair_is_held_to_the_players_rate_in_the_same_tournament():
    """3 bets in 30 decisions into b: far below a's 40 % over the window, but a bet 10 % of the time in that
    tournament against the others too: not significant there; the same count where a bet 40 % in that tournament
    is (the rates alone: no pair effect)."""
    p_passive, p_steady = (sparing_tested(*_world(x), pair_effect=False).filter(pl.col("opponent") == "b")["sp_p"][0] for x in (True, False))
    assert p_passive > 0.05
    assert p_steady < 1e-3
    t, _ = sparing_rates(*_world(True))
    r = t.filter((pl.col("player") == "a") & (pl.col("partner") == "b"))["r"][0]
    assert r < 0.2  # the tournament's own rate, not the window's 0.36


def test_the_tail_is_the_exact_lower_tail_of_the_bets():
    """One component whose rate is known (a strength far above its decisions) and no pair effect: the p-value is
    the binomial lower tail P(Bin(n, r) <= k); the smallest attainable value is P(Bin(n, r) = 0)."""
    pairs = _pairs([("a", "b", "T1", "h1", "c", 20, 2)])
    t = pl.DataFrame({"player": ["a"], "partner": ["b"], "tournament_id": ["T1"], "hand_id": ["h1"], "cell": ["c"],
                      "n": [20], "k": [2], "r": [0.3], "s": [np.inf], "x": ["a"], "y": ["b"]})
    from detectors.features.gameplay import bounty_sparing as bs
    orig = bs.sparing_rates
    try:
        bs.sparing_rates = lambda p, o: (t.drop("x", "y"), {})
        out = bs.sparing_tested(pairs, _own([("a", "T1", "h1", "c", 20, 2)]), pair_effect=False)
    finally:
        bs.sparing_rates = orig
    assert out["sp_p"][0] == pytest.approx(st.binom.cdf(2, 20, 0.3), rel=1e-6)
    assert out["sp_min"][0] == pytest.approx(0.7 ** 20, rel=1e-6)
    assert out["sp_e"][0] == pytest.approx(6.0)


def test_the_pair_effect_widens_the_tail_and_is_estimated_from_the_pairs_spread():
    """Pairs whose tournaments are spread beyond their binomials give a positive effect, and the tail of a
    passive pair is larger with it than without; pairs at their binomials give none."""
    rng = np.random.default_rng(0)
    pairs, own = [], []
    for j in range(60):
        rate = rng.choice([0.1, 0.7])  # each (pair, tournament) far from the player's 0.4
        for i in range(20):
            y = int(rng.random() < rate)
            pairs.append((f"p{j}", f"q{j}", f"T{j}", f"h{j}_{i}", "c", 1, y))
            own.append((f"p{j}", f"T{j}", f"h{j}_{i}", "c", 1, y))
        own += [(f"p{j}", f"U{j}", f"u{j}_{i}", "c", 1, int(i % 5 < 2)) for i in range(40)]
        own += [(f"p{j}", f"T{j}", f"o{j}_{i}", "c", 1, int(i % 5 < 2)) for i in range(40)]
    pairs.append(("a", "b", "T1", "hab", "c", 20, 1))
    own.append(("a", "T1", "hab", "c", 20, 1))
    own += [("a", "T1", f"oa{i}", "c", 1, int(i % 5 < 2)) for i in range(60)]
    P, O = _pairs(pairs), _own(own)
    with_effect = sparing_tested(P, O).filter(pl.col("player") == "a")["sp_p"][0]
    without = sparing_tested(P, O, pair_effect=False).filter(pl.col("player") == "a")["sp_p"][0]
    assert without < with_effect < 1.0
    assert _icc(np.full(500, 10.0), rng.binomial(10, 0.3, 500).astype(float), np.full(500, 0.3)) < 0.02
    assert _icc(np.full(500, 10.0), 10.0 * (rng.random(500) < 0.3), np.full(500, 0.3)) > 0.5 - 1e-9


def _small_warehouse(hero=None):
    """Three knockout hands (one dealt two-handed) and one without bounties, every hand's hero ``hero``."""
    con = duckdb.connect()
    hands = pl.DataFrame({"hand_id": ["h1", "h2", "h3"], "tournament_id": ["T", "T", "N"], "n_players": [3, 2, 3],
                          "hero": [hero] * 3}, schema_overrides={"hero": pl.Utf8})
    tours = pl.DataFrame({"tournament_id": ["T", "N"], "bounty_kind": ["ko", "none"]})
    acts = [("h1", 1, "preflop", "a", "call", False, 0, 3), ("h1", 2, "preflop", "b", "call", False, 0, 3),
            ("h1", 3, "preflop", "c", "call", False, 0, 3), ("h1", 4, "flop", "c", "fold", False, 0, 3),
            ("h1", 5, "flop", "a", "bet", False, 0, 2), ("h1", 6, "flop", "b", "raise", True, 10, 2),
            ("h1", 7, "flop", "a", "call", False, 10, 2)]
    acts += [(h, s, st_, p, a, al, tc, na) for h in ("h2", "h3") for (_, s, st_, p, a, al, tc, na) in acts[:2] + acts[4:5]]
    actions = pl.DataFrame(acts, schema=["hand_id", "seq", "street", "player", "action", "is_all_in", "to_call", "n_active"],
                           orient="row")
    for name, df in (("hands", hands), ("tournaments", tours), ("actions", actions)):
        con.register(name + "_df", df)
        con.execute("CREATE TABLE " + name + " AS SELECT * FROM " + name + "_df")
    return con


def test_a_players_view_makes_no_sparing_test():
    """Hands seen from a hero's seat: the family tests nobody and says why (the site's view: no such line; its two
    pairs have too few decisions for Tarone's selection, so no row either way)."""
    for hero, tested in ((None, True), ("a", False)):
        det = BountyCollusionDetector(spare_share=0.25)
        det.missing_ = []
        det._fit_sparing(_small_warehouse(hero))
        assert det.sparing_.is_empty()
        assert any("sparing test" in m for m in det.missing_) == (not tested)
    det = BountyCollusionDetector(alpha=1.0, spare_share=0.25)  # every pair selected: the site's view tests them
    det.missing_ = []
    det._fit_sparing(_small_warehouse())
    assert det.sparing_.height >= 1 and not det.missing_


def test_the_rows_skip_a_partner_who_folded_or_is_all_in_and_two_handed_tables():
    """The rows of :data:`SPARING_ROWS_SQL`: c's fold on the flop counts for (c, a) and (c, b); a's bet after c
    folded for (a, b) only; b's all-in raise for (b, a); a's call after b went all in for nobody; a hand dealt
    two-handed and a tournament without bounties give none."""
    con = _small_warehouse()
    rows = con.sql(SPARING_ROWS_SQL).pl().sort("seq")
    assert rows.sort("seq", "partner").select("hand_id", "seq", "player", "partner", "y").rows() == [
        ("h1", 4, "c", "a", 0), ("h1", 4, "c", "b", 0), ("h1", 5, "a", "b", 1), ("h1", 6, "b", "a", 1)]
    pairs, own = sparing_counts(con)
    assert pairs["n"].sum() == 4 and own["hn"].sum() == 3


def test_three_families_share_alpha_and_an_empty_sparing_family_leaves_the_former_two():
    """Levels (1 - pass_share, pass_share - spare_share, spare_share) x alpha with a sparing hypothesis; without one
    the former two families' levels and q-values, bit for bit; without a passing hypothesis the sparing family takes
    the passing family's whole share (the family at the share measured, 0.25; off by default)."""
    det = BountyCollusionDetector(spare_share=0.25)
    nan = np.nan
    p_main = np.array([1e-3, 0.3, nan, nan, nan])
    w = np.array([1.0, 1.0, 0.0, 0.0, 0.0])
    p_pass = np.array([nan, nan, 1e-4, nan, nan])
    p_min = np.where(np.isfinite(p_pass), 1e-6, nan)
    p_spare = np.array([nan, nan, nan, 2e-4, 0.5])
    q_main, q_pass, q, p, la, lp, q_spare, ls = det.family_levels(p_main, w, p_pass, p_min, p_spare=p_spare)
    a = det.alpha
    assert (la, lp, ls) == pytest.approx((a * 0.5, a * 0.25, a * 0.25), rel=1e-12)
    assert q_spare[3] == pytest.approx(4e-4, rel=1e-12)
    assert q[3] == pytest.approx(min(1.0, 4e-4 / 0.25), rel=1e-12) and p[3] == 2e-4
    two = det.family_q(p_main, w, p_pass, p_min)
    former = BountyCollusionDetector().family_q(p_main, w, p_pass, p_min)  # off by default: the two families
    assert two[4:] == former[4:] == (a * 0.5, a * 0.5)
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(two[:4], former[:4]))
    _, _, q, _, la, lp, _, ls = det.family_levels(p_main, w, np.full(5, nan), np.full(5, nan), p_spare=p_spare)
    assert (la, lp, ls) == pytest.approx((a * 0.5, 0.0, a * 0.5), rel=1e-12)
    assert q[3] == pytest.approx(4e-4 / 0.5, rel=1e-12)


def test_the_three_families_control_the_false_discovery_rate_under_the_null():
    """Uniform p-values in the three families (no pair colludes): a run flags anything at most alpha of the time."""
    rng = np.random.default_rng(5)
    det = BountyCollusionDetector(spare_share=0.25)
    runs, hits, nan = 3000, 0, np.nan
    for _ in range(runs):
        w = rng.uniform(0.2, 1.8, size=20)
        q = det.family_q(np.r_[rng.uniform(size=20), np.full(100, nan), np.full(60, nan)],
                         np.r_[w / w.mean(), np.zeros(160)],
                         np.r_[np.full(20, nan), rng.uniform(size=100), np.full(60, nan)],
                         np.r_[np.full(20, nan), np.full(100, 1e-9), np.full(60, nan)],
                         p_spare=np.r_[np.full(120, nan), rng.uniform(size=60)])[2]
        hits += bool((np.nan_to_num(q, nan=1.0) <= det.alpha).any())
    assert hits / runs <= det.alpha + 3 * np.sqrt(det.alpha / runs)


def test_the_per_hand_variant_counts_hands_with_a_bet_at_their_chance():
    """``per_hand``: two hands without a bet, of 2 decisions at 0.3 and 1 at 0.5: the p-value is the chance that
    neither hand has a bet, 0.7^2 x 0.5, and the pair has 2 hands, none with a bet."""
    from detectors.features.gameplay import bounty_sparing as bs
    t = pl.DataFrame({"player": ["a", "b"], "partner": ["b", "a"], "tournament_id": ["T1", "T1"],
                      "hand_id": ["h1", "h2"], "cell": ["c", "c"], "n": [2, 1], "k": [0, 0], "r": [0.3, 0.5],
                      "s": [np.inf, np.inf]})
    orig = bs.sparing_rates
    try:
        bs.sparing_rates = lambda p, o: (t, {})
        out = bs.sparing_tested(t.drop("r", "s"), _own([("a", "T1", "h1", "c", 2, 0)]), pair_effect=False,
                                per_hand=True)
    finally:
        bs.sparing_rates = orig
    assert (out["sp_n"][0], out["sp_k"][0]) == (2.0, 0.0)
    assert out["sp_p"][0] == pytest.approx(0.7 ** 2 * 0.5, rel=1e-6)
