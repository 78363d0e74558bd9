"""SoftPlayDetector on built warehouses: sparing one way in any spot (the mutual rule reads each side's share) and
a pair that spares each other mostly preflop, found by the streets' combination with the preflop part."""

import pytest

from tests.detect.conftest import build_world
from tests.detect.test_soft_play import MC_SAMPLES, _check_instead_of_bet, _pair_row


def _spare_one_way(con, player, against, *, check=0.0, raises=0.0, calls=0.0, seed=0):
    """``player`` spares ``against`` only: checks instead of betting when heads-up with it (share ``check`` of those
    bets), calls instead of raising its bets or raises (share ``raises``) and folds instead of calling its preflop
    raise (share ``calls``; the player's later actions in that hand are removed). Returns the hands changed."""
    last_aggr = ("$o = (SELECT arg_max(b.player, b.seq) FROM actions b WHERE b.hand_id = a.hand_id AND b.seq < a.seq "
                 "AND b.action IN ('bet', 'raise'))")
    pick = "hash(a.hand_id || $seed || a.seq) % 1000 < $share * 1000"
    args = {"p": player, "o": against, "seed": str(seed)}
    heads_up_with = ("a.n_active = 2 AND EXISTS (SELECT 1 FROM actions b WHERE b.hand_id = a.hand_id AND b.player = $o) "
                     "AND NOT EXISTS (SELECT 1 FROM actions b WHERE b.hand_id = a.hand_id AND b.player = $o "
                     "AND b.action = 'fold' AND b.seq < a.seq)")
    chk = con.execute(f"""SELECT a.hand_id, a.seq FROM actions a WHERE a.player = $p AND a.action = 'bet' AND a.to_call = 0
                          AND a.street <> 'preflop' AND {heads_up_with} AND {pick}""", {**args, "share": check}).fetchall()
    rse = con.execute(f"SELECT a.hand_id, a.seq FROM actions a WHERE a.player = $p AND a.action = 'raise' AND {last_aggr} AND {pick}",
                      {**args, "share": raises}).fetchall()
    fld = con.execute(f"""SELECT a.hand_id, a.seq FROM actions a WHERE a.player = $p AND a.action = 'call' AND a.street = 'preflop'
                          AND {last_aggr} AND {pick}""", {**args, "share": calls}).fetchall()
    for rows, sql in ((chk, "UPDATE actions a SET action = 'check', amount = 0 FROM _one c WHERE a.hand_id = c.hand_id AND a.seq = c.seq"),
                      (rse, "UPDATE actions a SET action = 'call' FROM _one c WHERE a.hand_id = c.hand_id AND a.seq = c.seq"),
                      (fld, "DELETE FROM actions a USING _one c WHERE a.hand_id = c.hand_id AND a.player = $p AND a.seq > c.seq")):
        if not rows:
            continue
        con.execute("CREATE OR REPLACE TEMP TABLE _one (hand_id VARCHAR, seq INTEGER)")
        con.executemany("INSERT INTO _one VALUES (?, ?)", rows)
        con.execute(sql, {"p": player} if "$p" in sql else {})
        if rows is fld:
            con.execute("UPDATE actions a SET action = 'fold', amount = 0 FROM _one c WHERE a.hand_id = c.hand_id AND a.seq = c.seq")
    return {h for h, _ in chk + rse + fld}


def test_mutual_rule_reads_each_sides_sparing_in_any_spot():
    """p12 checks instead of betting into p13; p13 never checks p12 less than its own rates say, but calls instead of
    raising p12's bets and folds to p12's preflop raises in 60 % of those spots (the two halves of the planted
    deviation: each side spares the other where it has the chance). The pair's q is far below alpha, yet the
    mutual rule that reads only the check and hand tests per side blocks it (p13's check-test z and hand share stay
    below 1): with each side's Stouffer z over all its tests (``sdir_z``: (z_chk + z_rse + z_fld + z_pre) / 2,
    recomputed here from the per-direction tests) p13's side shows it and the pair is flagged, nobody else is."""
    import numpy as np
    import polars as pl
    import pytest

    from detectors import stats
    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=24, n_hands=3000, seed=23, soft=[(("p12", "p13"), 0.0)])  # seated together, honest play
    a = _spare_one_way(w.con, "p12", "p13", check=0.8, seed=3)
    b = _spare_one_way(w.con, "p13", "p12", raises=1.0, calls=0.6, seed=4)
    assert len(a) >= 40 and len(b) >= 25
    det = SoftPlayDetector().fit(w.con)
    s = det.threshold(det.score(w.con))
    row = _pair_row(s, "p12", "p13")
    assert row["q_value"] < 1e-6 and row["player"] == "p12"
    assert max(row["dir_z_r"], row["hdir_z_r"]) < 1.0 <= row["sdir_z_r"] and row["sdir_z"] >= 1.0
    zs = []
    for name in det.SPECS:
        y, kw = det._baseline_args(name)
        d = stats.robust_own_baseline(det.cells_, y, alpha=det.alpha, also_out=det.outliers_, **kw)
        zs += d.filter((pl.col("player") == "p13") & (pl.col("opponent") == "p12"))["z"].to_list()
    assert len(zs) == 4 and row["sdir_z_r"] == pytest.approx(np.sum(zs) / 2.0)
    assert s.filter(pl.col("flagged"))["accounts"].to_list() == [["p12", "p13"]]
    old = SoftPlayDetector(side_stouffer=False).fit(w.con)
    os_ = old.threshold(old.score(w.con))
    assert _pair_row(os_, "p12", "p13")["q_value"] == pytest.approx(row["q_value"]) and not os_["flagged"].any()


def test_mutual_rule_side_stouffer_needs_each_side():
    """The side's Stouffer z is one more way for a side to show it, never a way around the other side: a pair at
    q <= alpha with one side at z >= 1 (by any of the check, hand or Stouffer z) and the other below 1 on all three
    is not flagged; lifting that side's Stouffer z to 1 flags it; without the column the rule is the old one."""
    import polars as pl

    from detectors.soft_play import SoftPlayDetector

    base = {"q_value": 1e-4, "hu": 300, "aggr_ratio": 0.6, "chk_ratio": 0.6, "rse_ratio": 1.0, "fold_ratio": 1.0,
            "fld_ratio": 1.0, "hp_ratio": 0.5, "dir_z": 3.0, "dir_z_r": 0.2, "hdir_z": 3.0, "hdir_z_r": 0.5,
            "sdir_z": 2.0, "score": 4.0, "p_value": 1e-6}
    rows = [{**base, "player": x, "opponent": y, "accounts": [x, y], "sdir_z_r": z}
            for x, y, z in (("a", "b", 0.9), ("c", "d", 1.0), ("e", "f", None))]
    t = SoftPlayDetector().threshold(pl.DataFrame(rows))
    assert t.filter(pl.col("flagged"))["accounts"].to_list() == [["c", "d"]]
    t = SoftPlayDetector().threshold(pl.DataFrame(rows).drop("sdir_z", "sdir_z_r"))
    assert not t["flagged"].any()
    t = SoftPlayDetector(side_stouffer=False).threshold(pl.DataFrame(rows))
    assert not t["flagged"].any()


@pytest.mark.slow
def test_pair_that_spares_each_other_mostly_preflop_found_by_the_streets_combination():
    """p12 and p13 fold instead of calling each other's preflop raise in half the hands where they would call and
    check instead of betting into each other after the flop in only a quarter of their heads-up hands: the check
    test street by street shows little (p > 0.1). With the preflop test as a support of the check test (T = 4 z_check
    + max(z_preflop, 0), ``street_support=False``, the old rule) the preflop folds weigh a quarter and the pair stays
    under the line; as one more part of the streets' Fisher combination (disjoint decisions) it is flagged. p14 and
    p15, who only fold to each other's raises and bet into each other as usual, are flagged by neither rule."""
    import polars as pl

    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=24, n_hands=3000, seed=21, pre_fold=[(("p12", "p13"), 0.5), (("p14", "p15"), 0.5)])
    _check_instead_of_bet(w.con, ["p12"], against="p13", share=0.25)
    _check_instead_of_bet(w.con, ["p13"], against="p12", share=0.25)
    new = SoftPlayDetector(samples=MC_SAMPLES).fit(w.con)
    s = new.threshold(new.score(w.con))
    row = _pair_row(s, "p12", "p13")
    assert row["st_p_value"] > 0.1 and row["pre_p_value"] < 1e-5
    assert row["q_value"] <= new.alpha
    assert s.filter(pl.col("flagged"))["accounts"].to_list() == [["p12", "p13"]]
    old = SoftPlayDetector(samples=MC_SAMPLES, street_support=False).fit(w.con)
    o = old.threshold(old.score(w.con))
    assert _pair_row(o, "p12", "p13")["q_value"] > old.alpha and not o["flagged"].any()


def test_streets_combination_with_the_preflop_part_keeps_the_level_and_falls_back():
    """SoftPlayDetector._combined_p with ``street_support``: under the null (each street's check test and the preflop
    test uniform and independent) the main p-value is uniform (level 0.05 / 0.01 / 0.001 within Monte Carlo error,
    200,000 pairs); a pair without the preflop test keeps the streets' p-value, one without the streets' test the
    check test with the preflop support (T = 4 z + max(z, 0))."""
    import numpy as np
    import polars as pl
    from scipy.stats import chi2

    from detectors import stats
    from detectors.soft_play import SoftPlayDetector

    rng = np.random.default_rng(3)
    n = 200_000
    k = rng.integers(1, 5, n)
    parts = rng.uniform(size=(n, 4))
    st = chi2.sf((-2 * np.log(parts) * (np.arange(4) < k[:, None])).sum(axis=1), 2 * k)
    pre, chk = rng.uniform(size=n), rng.uniform(size=n)
    st[:2], pre[2] = [np.nan, np.nan], np.nan
    u = pl.DataFrame({"st_p_value": st, "st_k": k, "pre_p_value": pre, "chk_p_value": chk, "rse_p_value": np.ones(n),
                      "fld_p_value": np.ones(n)}).with_columns(pl.col(c).fill_nan(None) for c in ("st_p_value", "pre_p_value"))
    main = SoftPlayDetector(hand_test=False, test_weights=(0.9, 0.05, 0.05))._combined_p(u)["main_p_value"].to_numpy()
    for a in (0.05, 0.01, 0.001):
        assert abs((main[3:] <= a).mean() - a) < 4 * np.sqrt(a * (1 - a) / n)
    assert main[2] == st[2]
    assert np.allclose(main[:2], stats.z_sum_with_support(chk[:2], pre[:2], 4.0, 1.0), rtol=1e-3)  # (its tail grid)
