"""BountyCollusionDetector on planted knockout hands: the gang is found with its tournaments and the hands where
it happened; regulars and everyone's dry side-pot check-downs are not collusion."""

import pytest

from detectors.bounty_collusion import BountyCollusionDetector


@pytest.fixture(scope="module")
def ko_signals(ko_world):
    det = BountyCollusionDetector()
    return det, det.detect(ko_world.con)


def test_gang_found_with_hands_and_tournaments(ko_world, ko_signals):
    det, sigs = ko_signals
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [["k01", "k02"]]
    s = flagged[0]
    gang = set(ko_world.ko_hands)
    assert len(set(s.hands[:10]) & gang) == 10
    assert s.tournaments and all(t.startswith("9") for t in s.tournaments)
    joint = s.evidence[0]
    assert joint.value > 2 * joint.baseline and joint.sql
    assert "checked down" in s.summary and "bounty taken" in s.summary
    assert "Dry side pots" in s.benign


def test_all_in_tests_alone_where_no_pair_has_enough_presence_decisions(ko_world):
    """No pair reaches ``min_decisions`` (as in the real corpus's knockout files): the presence columns stay empty
    and the joint all-in tests still find the gang (the detector failed on ``pres_k`` here before)."""
    det = BountyCollusionDetector(min_decisions=10**9)
    sigs = det.detect(ko_world.con)
    assert det.presence_.height and not (det.presence_["pres_n"] >= det.min_decisions).any()
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [["k01", "k02"]]
    assert not any("short bounty target" in e.name for e in flagged[0].evidence)  # no decisions: no presence evidence


def test_regulars_and_check_downs_not_flagged(ko_signals):
    det, sigs = ko_signals
    assert 0.5 < det.checkdown_rate_ < 0.95  # honest players check dry side pots down too
    for s in sigs:
        if {"k10", "k11"} <= set(s.accounts):
            assert not s.flagged


def test_subtle_gang_ranks_first_even_when_rare():
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=1500, rate=0.25, seed=9)
    sigs = BountyCollusionDetector().detect(w.con)
    assert sigs[0].accounts == ["k01", "k02"]
    assert not any(s.flagged and s.accounts != ["k01", "k02"] for s in sigs)


def _loosen(con, player, *, partner=None, share=1.0, coin="coin"):
    """Turn ``player``'s preflop folds into calls; returns the hands changed (one preflop fold per hand at most).

    ``partner``: only at decisions where that player, dealt in, had not folded yet. ``share``: only in that share
    of the hands, decided by a hash of the hand id salted with ``coin`` (the same salt for two players = one coin
    per hand for both, as the generator's gangs). Only the action lines change (the detectors read the action
    lines, not the chip accounting; postflop lines are not rewritten)."""
    cond, params = "", [player]
    if partner is not None:
        cond = """AND EXISTS (SELECT 1 FROM seats s WHERE s.hand_id = a.hand_id AND s.player = ? AND s.dealt_in
                  AND NOT EXISTS (SELECT 1 FROM actions f WHERE f.hand_id = a.hand_id AND f.player = s.player
                                  AND f.action = 'fold' AND f.seq < a.seq))"""
        params.append(partner)
    where = f"""a.player = ? AND a.street = 'preflop' AND a.action = 'fold' {cond}
                AND hash(a.hand_id || ?) % 100 < ?"""
    params += [coin, int(round(share * 100))]
    hands = {h for (h,) in con.execute(f"SELECT DISTINCT hand_id FROM actions a WHERE {where}", params).fetchall()}
    con.execute(f"UPDATE actions a SET action = 'call', amount = to_call WHERE {where}", params)
    return hands


def _gang(con, a, b, share):
    """A gang of strength ``share``: ``a`` and ``b`` each stop folding preflop while the other is still in, with
    one coin per hand for both. Returns the decisions changed."""
    return len(_loosen(con, a, partner=b, share=share)) + len(_loosen(con, b, partner=a, share=share))


def test_gang_that_loosens_up_with_the_partner_in_found_with_its_hands():
    """No planted joint calls: k03 and k04 only stop folding to short-stack shoves while the other is still in."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    changed = _loosen(w.con, "k03", partner="k04") | _loosen(w.con, "k04", partner="k03")
    sigs = BountyCollusionDetector().detect(w.con)
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [["k03", "k04"]]
    s = flagged[0]
    assert set(s.hands[:10]) <= changed
    pres = next(e for e in s.evidence if e.name.startswith("preflop continuations"))
    assert pres.value > 1.5 * pres.baseline and pres.n >= 20 and pres.p_value < 1e-3 and pres.sql
    assert "kept playing against short bounty targets" in s.summary
    assert "same hand strength, price and position" in s.benign


def test_loose_bounty_callers_with_everyone_not_flagged():
    """Two honest maniacs who call every short-stack shove, whoever else is in: their own baseline absorbs it."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    for p in ("k05", "k06"):
        _loosen(w.con, p)
    sigs = BountyCollusionDetector().detect(w.con)
    assert not any(s.flagged for s in sigs)
    top = next(s for s in sigs if {"k05", "k06"} <= set(s.accounts))
    pres = next(e for e in top.evidence if e.name.startswith("preflop continuations"))
    assert pres.value <= pres.baseline + 3



def test_pairs_sharing_tables_in_fewer_than_min_events_tournaments_are_not_tested():
    """The events filter: the loosening gang is tested, flagged and its evidence counts the knockout tournaments
    it shared tables in; require one more tournament than it shared and the main family no longer tests the pair
    (without the bounty-passing family, which has no events filter, it has no q-value)."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _loosen(w.con, "k03", partner="k04")
    _loosen(w.con, "k04", partner="k03")
    (shared, hands), = w.con.execute("""SELECT count(DISTINCT h.tournament_id), count(*) FROM seats a JOIN seats b USING (hand_id)
                                       JOIN hands h USING (hand_id)
                                       WHERE a.player = 'k03' AND b.player = 'k04' AND a.dealt_in AND b.dealt_in""").fetchall()
    assert shared >= 5
    s = next(s for s in BountyCollusionDetector().detect(w.con) if s.flagged)
    ev = next(e for e in s.evidence if e.name == "knockout tournaments at one table")
    assert (ev.value, ev.n) == (shared, hands) and ev.sql
    det = BountyCollusionDetector(min_events=shared + 1)
    scored = det.fit(w.con).score(w.con)
    row = scored.filter((scored["player"] == "k03") & (scored["opponent"] == "k04")).row(0, named=True)
    # the main family no longer tests it; the bounty-passing family needs no events (it calls the other's shoves)
    assert row["events"] == shared and row["q_main"] is None and row["q_pass"] is not None
    det = BountyCollusionDetector(min_events=shared + 1, pass_share=0.0, seat_share=0.0)
    scored = det.fit(w.con).score(w.con)
    row = scored.filter((scored["player"] == "k03") & (scored["opponent"] == "k04")).row(0, named=True)
    assert row["events"] == shared and row["q_value"] is None
    assert not det.threshold(scored)["flagged"].any()


def _presence_parts(spec):
    """Hand-made [pairs, components] of presence_parts for presence_tail: spec = [(player, partner, [(n, k, r, s),
    ...bins])], every bin in one tournament, no tournament effect."""
    import polars as pl

    pairs, comps = [], []
    for i, (a, b, bins) in enumerate(spec):
        pairs.append({"player": a, "partner": b, "n": float(sum(x[0] for x in bins)),
                      "observed": float(sum(x[1] for x in bins)), "expected": float(sum(x[0] * x[2] for x in bins)),
                      "rate_own": bins[0][2], "tournaments": [f"t{i}"], "hands": [f"{i}"], "sigma2": 0.0})
        comps += [{"player": a, "partner": b, "bin_n": float(n), "bin_r": float(r), "bin_s": float(s), "bin_t": ""}
                  for n, _k, r, s in bins]
    return [pl.DataFrame(pairs), pl.DataFrame(comps)]


def _convolved_tail(bins, k):
    """P(sum of the bins' counts >= k) by numpy's convolution of scipy's probability functions (independent code)."""
    import numpy as np
    from scipy import stats as st

    pmf = np.array([1.0])
    for n, _k, r, s in bins:
        x = np.arange(n + 1)
        pmf = np.convolve(pmf, st.binom.pmf(x, n, r) if np.isinf(s) else st.betabinom.pmf(x, n, r * s, (1 - r) * s))
    return float(pmf[int(k):].sum())


def test_betabinom_sum_sf_matches_enumeration_and_scipy():
    """The exact tail of a sum of independent beta-binomials / binomials against brute force: every outcome of 9
    Bernoulli decisions at three rates enumerated (Poisson-binomial), scipy's beta-binomial for one component, and
    numpy's convolution for random groups of up to five components, to 1e-9 relative down to tails below 1e-10."""
    import itertools

    import numpy as np
    from scipy import stats as st

    from detectors.features.gameplay import betabinom_sum_sf

    rates = [0.05] * 3 + [0.3] * 4 + [0.8] * 2
    dist = np.zeros(10)
    for ys in itertools.product((0, 1), repeat=9):
        dist[sum(ys)] += np.prod([r if y else 1 - r for r, y in zip(rates, ys)])
    for k in range(11):
        g = betabinom_sum_sf(np.zeros(3, int), np.array([3, 4, 2]), np.array([0.05, 0.3, 0.8]), np.full(3, np.inf),
                             np.array([float(k)]))
        assert g.shape == (1,)
        assert g[0] == pytest.approx(dist[k:].sum(), rel=1e-12, abs=1e-300)
    one = betabinom_sum_sf(np.zeros(1, int), np.array([30]), np.array([0.2]), np.array([12.0]), np.array([25.0]))[0]
    assert one == pytest.approx(st.betabinom.sf(24, 30, 2.4, 9.6), rel=1e-9)
    rng = np.random.default_rng(7)
    spec, k = [], []
    for g in range(60):
        bins = [(int(rng.integers(0, 40)), 0, float(rng.uniform(0.01, 0.9)), float([np.inf, rng.uniform(2, 80)][g % 2]))
                for _ in range(int(rng.integers(1, 6)))]
        spec.append(bins)
        k.append(float(rng.integers(0, sum(b[0] for b in bins) + 2)))
    grp = np.array([g for g, bins in enumerate(spec) for _ in bins])
    n, r, s = (np.array([b[i] for bins in spec for b in bins], dtype=float) for i in (0, 2, 3))
    got = betabinom_sum_sf(grp, n, r, s, np.array(k))
    for g, bins in enumerate(spec):
        want = _convolved_tail(bins, k[g]) if k[g] > 0 else 1.0
        assert got[g] == pytest.approx(want, rel=1e-9, abs=1e-300), (g, bins, k[g])
    assert (got < 1e-10).any()


def test_presence_p_is_the_exact_tail_of_the_count():
    """pres_p is P(K >= pres_k) for K the pair's continuations summed over both directions and every bin, each bin
    beta-binomial (own rate uncertain with its Beta posterior). The former min-p of the score test's normal tail and a
    binomial tail (x2) was liberal in the far tail: 100 decisions at rate 0.1 (known), 30 continued: it gave 2.6e-11
    where the exact tail is 2.4e-8; here the feature equals the exact tail. A pair continuing at its
    expected rate is far from significance; an uncertain baseline (s = 5) weakens the same count."""
    from detectors.features.gameplay.bounty_tests import presence_tail

    gang = [(60, 18, 0.1, float("inf")), (40, 12, 0.1, float("inf"))]
    loose = [(20, 10, 0.5, 30.0), (20, 10, 0.5, 30.0)]
    thin = [(60, 18, 0.1, 5.0), (40, 12, 0.1, 5.0)]
    u = presence_tail(_presence_parts([("a1", "a2", gang[:1]), ("a2", "a1", gang[1:]),
                                       ("h1", "h2", loose[:1]), ("h2", "h1", loose[1:]),
                                       ("t1", "t2", thin[:1]), ("t2", "t1", thin[1:])]))
    row = {r["player"]: r for r in u.iter_rows(named=True)}
    assert (row["a1"]["pres_n"], row["a1"]["pres_k"], row["a1"]["pres_e"]) == (100.0, 30.0, 10.0)
    want = _convolved_tail(gang, 30)
    assert 1e-8 < want < 1e-7
    assert row["a1"]["pres_p"] == pytest.approx(want, rel=1e-9)
    assert row["h1"]["pres_p"] == pytest.approx(_convolved_tail(loose, 20), rel=1e-9) and row["h1"]["pres_p"] > 0.3
    assert row["t1"]["pres_p"] == pytest.approx(_convolved_tail(thin, 30), rel=1e-9)
    assert row["t1"]["pres_p"] > 100 * row["a1"]["pres_p"]
    assert sorted(row["a1"]["pres_hands"]) == ["0", "1"]


def test_wide_calls_count_only_the_calls_the_own_baseline_folds():
    """bounty_wide_calls on hand-made decisions: a folds weak hands (decile 2, cheap price) 38 times in 40 without b,
    and calls 6 of 10 with b in; a's strong hands (decile 9), called with b in as always, are not counted. The
    p-value is the binomial tail at a's own rate (one cell: the exact tail is the binomial), the hands are the 6 calls."""
    import polars as pl

    from detectors import stats
    from detectors.features.gameplay import bounty_wide_calls

    rows = []
    for i in range(40):  # a's baseline: partner x, weak hand, folds 38
        rows.append((f"w{i}", 1, "a", "x", i < 2, 0.25, 0))
        rows.append((f"s{i}", 1, "a", "x", i < 38, 0.95, 0))  # strong: calls 38
    for i in range(10):  # with b in
        rows.append((f"p{i}", 1, "a", "b", i < 6, 0.25, 0))
        rows.append((f"q{i}", 1, "a", "b", True, 0.95, 0))
    for i in range(30):  # another player, to fit the population prior per cell
        rows.append((f"o{i}", 1, "c", "x", i % 10 == 0, 0.22, 0))
        rows.append((f"o{i}", 1, "c", "x", i % 10 != 0, 0.97, 0))
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin"], orient="row")
    w = bounty_wide_calls(df)
    row = w.filter((pl.col("player") == "a") & (pl.col("opponent") == "b")).row(0, named=True)
    assert (row["wc_n"], row["wc_k"], row["wc_a_n"], row["wc_a_k"], row["wc_b_n"]) == (10.0, 6.0, 10.0, 6.0, 0.0)
    r = row["wc_e"] / 10
    assert 0.02 <= r < 0.15  # a's own rate, shrunk a little towards the population's
    assert row["wc_p"] == pytest.approx(float(stats.binom_tail(6, 10, r)))
    assert row["wc_p"] < 2e-3
    assert sorted(row["wc_hands"]) == [f"p{i}" for i in range(6)]
    # a's decisions with x are a's own baseline: nothing unusual there
    ax = w.filter((pl.col("player") == "a") & (pl.col("opponent") == "x"))
    assert ax.is_empty() or ax["wc_p"][0] > 0.1


def test_wide_calls_tail_is_the_exact_sum_over_cells_at_their_own_rates():
    """Two cells at different own rates (a folds decile-1 hands 39 of 40 and decile-2 hands 34 of 40 without b) and
    a's calls with b in (3 of 12 and 4 of 8): the p-value is the exact tail of Bin(12, r1) + Bin(8, r2), convolved
    here with scipy's binomial probabilities, and below the binomial tail at the pooled mean rate (Hoeffding's bound,
    the former p-value: valid, but loose when the rates differ). Below its mean the count's p-value is the Poisson
    tail (nothing there is significant)."""
    import numpy as np
    import polars as pl
    from scipy import stats as st

    from detectors import stats
    from detectors.features.gameplay import bounty_wide_calls, bounty_wide_cells

    rows = []
    for i in range(40):  # a's baseline with x
        rows.append((f"u{i}", 1, "a", "x", i < 1, 0.15, 0))
        rows.append((f"v{i}", 1, "a", "x", i < 6, 0.25, 0))
    for i in range(12):
        rows.append((f"p{i}", 1, "a", "b", i < 3, 0.15, 0))
    for i in range(8):
        rows.append((f"q{i}", 1, "a", "b", i < 4, 0.25, 0))
    for i in range(10):  # c: with b in, calls 0 of 10 (below the mean)
        rows.append((f"c{i}", 1, "c", "x", i < 3, 0.25, 0))
        rows.append((f"d{i}", 1, "c", "b", False, 0.25, 0))
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin"], orient="row")
    w = bounty_wide_calls(df, hands=False, looseness_tau=None)
    _, bins, t = bounty_wide_cells(df, looseness_tau=None)
    rate = {r["sdec"]: r["r"] for r in t.filter((pl.col("player") == "a") & (pl.col("partner") == "b")).iter_rows(named=True)}
    r1, r2 = rate[1], rate[2]
    assert r1 < 0.1 < r2 < 0.3  # two different own rates, both below the wide-call line
    pmf = np.convolve(st.binom.pmf(np.arange(13), 12, r1), st.binom.pmf(np.arange(9), 8, r2))
    row = w.filter((pl.col("player") == "a") & (pl.col("opponent") == "b")).row(0, named=True)
    assert (row["wc_n"], row["wc_k"]) == (20.0, 7.0) and row["wc_e"] == pytest.approx(12 * r1 + 8 * r2)
    assert row["wc_p"] == pytest.approx(pmf[7:].sum(), rel=1e-9)
    assert row["wc_p"] < 0.9 * float(stats.binom_tail(7, 20, row["wc_e"] / 20))
    low = w.filter((pl.col("player") == "b") & (pl.col("opponent") == "c")).row(0, named=True)
    assert low["wc_k"] == 0 and low["wc_p"] == pytest.approx(1.0)


def test_unshadowed_drops_a_bystanders_rows_only_where_the_strongest_partner_was_in():
    """a's strongest partner is b (wide-call p 1e-6): a's rows with c at decisions where b was also in go, a's rows
    with c alone and every row with b stay; c's own rows are untouched (c has no strongest partner)."""
    import polars as pl

    from detectors.features.gameplay import bounty_unshadowed

    rows = pl.DataFrame({
        "hand_id": ["1", "1", "2", "3", "3"], "seq": [4, 4, 4, 5, 5],
        "player": ["a", "a", "a", "c", "c"], "partner": ["b", "c", "c", "a", "b"],
        "cont": [True, True, True, False, False],
    })
    wide = pl.DataFrame({"player": ["a", "a"], "opponent": ["b", "c"], "wc_p": [1e-6, 0.2]})
    out = bounty_unshadowed(rows, wide).sort("hand_id", "partner")
    assert out.select("hand_id", "player", "partner").rows() == [("1", "a", "b"), ("2", "a", "c"), ("3", "c", "a"),
                                                                  ("3", "c", "b")]
    assert bounty_unshadowed(rows, wide, max_p=1e-7).height == rows.height  # no strongest partner: nothing dropped


def test_bystander_of_a_gang_not_accused():
    """k05 sits next to k04 whenever k04 plays, so k05 is in every hand where k03 calls wide for k04. Without the
    explaining-away (shadow_p=0) the bystander pair k03-k05 is flagged too at alpha 0.05 (q ~ 0.015); with it only
    the gang is, at that alpha and at the default (the bystander pair's p-value goes up to ~0.8)."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11, regulars=("k04", "k05"))
    _loosen(w.con, "k03", partner="k04")
    _loosen(w.con, "k04", partner="k03")
    naive = [s.accounts for s in BountyCollusionDetector(shadow_p=0.0, alpha=0.05).detect(w.con) if s.flagged]
    assert ["k03", "k05"] in naive
    assert [s.accounts for s in BountyCollusionDetector(alpha=0.05).detect(w.con) if s.flagged] == [["k03", "k04"]]
    sigs = BountyCollusionDetector().detect(w.con)
    assert [s.accounts for s in sigs if s.flagged] == [["k03", "k04"]]
    s = sigs[0]
    wide = s.evidence[0]
    assert wide.name.startswith("calls against short bounty targets") and wide.sql
    assert wide.value >= 20 and wide.value > 5 * wide.baseline and wide.p_value < 1e-10
    assert "own baseline folds" in s.summary and "bystander" in s.benign


def test_quality_floor_gangs_of_strength_025_to_1_found_among_lookalikes():
    """Three gangs that call wide with the partner in, in all, half and a quarter of the hands, among honest
    look-alikes: two maniacs who call every short stack whoever is in, a bystander who sits next to one gang member,
    the regulars and everyone's dry check-downs. Every gang is found and nothing else is flagged."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=3000, rate=0.0, seed=11, regulars=("k05", "k09"))
    changed = {(a, b): _gang(w.con, a, b, s) for a, b, s in (("k03", "k04", 1.0), ("k05", "k06", 0.5),
                                                                      ("k07", "k08", 0.25))}
    assert min(changed.values()) >= 10  # the quarter-strength gang acted in a handful of spots only
    for p in ("k14", "k16"):
        _loosen(w.con, p)
    sigs = BountyCollusionDetector().detect(w.con)
    assert sorted(s.accounts for s in sigs if s.flagged) == [["k03", "k04"], ["k05", "k06"], ["k07", "k08"]]
    top = next(s for s in sigs if s.accounts == ["k07", "k08"])
    assert top.evidence[0].p_value < 1e-4 and top.extra["q_value"] <= 0.01


def test_player_view_runs_and_says_the_wide_call_test_was_not_made():
    """Player view (only the hero's and the shown-down cards): the wide-call test would compare calls with calls
    (the cards of folders are unknown), so it is not made and every signal says so; the gang's joint calls and
    presence are still tested and no one else is flagged."""
    from tests.detect.conftest import build_ko_world, to_player_view

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _loosen(w.con, "k03", partner="k04")
    _loosen(w.con, "k04", partner="k03")
    to_player_view(w.con)
    det = BountyCollusionDetector()
    sigs = det.detect(w.con)
    assert det.cards_known_ < 0.5
    assert any("wide-call test" in m and "player view" in m for m in det.missing_)
    assert all(any("wide-call test" in m for m in s.missing) for s in sigs)
    # no evidence row for a test not made (its counts would read "0 of 0"), nor for the rest of the calls that
    # Fisher's method would join with them
    assert not any(e.name.startswith(("calls against short bounty targets", "other continuations"))
                   for s in sigs for e in s.evidence)
    assert all(e.n > 0 for s in sigs for e in s.evidence)
    assert any("rest of the calls" in m for m in det.missing_)
    assert not any(s.flagged and s.accounts != ["k03", "k04"] for s in sigs)


def _events_3_but(det, pairs, n):
    """A population where most pairs shared knockout tables in 3 tournaments and ``pairs`` in ``n`` (the flagging
    rule reads only these counts)."""
    import polars as pl

    keys = [{"player": a, "opponent": b} for a, b in pairs]
    det.events_ = det.events_.with_columns(
        events=pl.when(pl.struct("player", "opponent").is_in(keys)).then(n).otherwise(3))
    return det


def test_pairs_seated_together_in_more_tournaments_get_more_of_the_error_budget():
    """Weighted BH: k03-k04 turned 7 folds into calls (a twentieth of their hands with the other in), just short of
    the cut under plain BH (q ~ 0.011; a tenth, 9 folds, was at q ~ 0.011 with the former presence p-value, and at
    3e-5 with its exact tail). Seated together in 8 knockout tournaments where the other pairs met in 3, the
    gang's weight is min(1, 0.8^3) * m / (2 * 0.512 + (m - 2) * 0.3^3) ~ 17.5 and it is flagged; the regulars
    k10-k11, seated together as often but playing honestly, get the same weight and are not flagged. The p-values
    are the same either way: only the share of the error budget moves."""
    import polars as pl

    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    assert _gang(w.con, "k03", "k04", 0.05) == 7
    pairs = [("k03", "k04"), ("k10", "k11")]
    out = {}
    for name, kw in (("plain", {"event_scale": None}), ("weighted", {})):
        # min_events=3: the fabricated counts put most pairs at 3 tournaments, which the default (4) does not test
        # (pass_share=0: the main family's weights alone; the bounty-passing family would take half its budget)
        det = _events_3_but(BountyCollusionDetector(min_events=3, alpha=0.01, pass_share=0.0, seat_share=0.0, **kw).fit(w.con), pairs, 8)
        sc = det.score(w.con)
        out[name] = (sc, det.threshold(sc))
    row = {k: sc.filter((pl.col("player") == "k03") & (pl.col("opponent") == "k04")).row(0, named=True)
           for k, (sc, _) in out.items()}
    m = out["weighted"][0]["q_value"].is_not_null().sum()
    assert m > 400
    # the same p-value (to the last bits of the population prior's float sums, whose order polars does not fix)
    assert row["plain"]["p_value"] == pytest.approx(row["weighted"]["p_value"], rel=1e-9) and row["plain"]["p_value"] < 1e-4
    assert row["plain"]["bh_weight"] == 1.0 and 0.01 < row["plain"]["q_value"] < 0.02
    assert row["weighted"]["bh_weight"] == pytest.approx(0.512 * m / (2 * 0.512 + (m - 2) * 0.027))
    assert row["weighted"]["q_value"] <= 0.001
    assert out["plain"][1].filter("flagged").is_empty()
    assert out["weighted"][1].filter("flagged")["accounts"].to_list() == [["k03", "k04"]]
    reg = out["weighted"][0].filter((pl.col("player") == "k10") & (pl.col("opponent") == "k11")).row(0, named=True)
    assert reg["bh_weight"] == row["weighted"]["bh_weight"] and reg["q_value"] == 1.0
    # the real counts: every pair met in at least 10 tournaments, all weighed alike under a cap at 10
    sig = next(s for s in BountyCollusionDetector(event_scale=10).detect(w.con) if s.accounts == ["k03", "k04"])
    ev = next(e for e in sig.evidence if e.name == "knockout tournaments at one table")
    assert "weight 1.00 in the false-discovery control" in ev.text


def test_bh_weights_average_one_over_the_tested_and_equal_without_a_scale():
    import numpy as np

    ev = np.array([3.0, 3.0, 8.0, 12.0, 20.0])
    tested = np.array([True, True, True, True, False])
    w = BountyCollusionDetector(event_scale=10).bh_weights(ev, tested)
    raw = np.array([0.027, 0.027, 0.512, 1.0])  # capped at the scale: 12 tournaments weigh as 10
    assert w[:4] == pytest.approx(raw * 4 / raw.sum()) and w[4] == 0.0 and w[:4].mean() == pytest.approx(1.0)
    # the default scale (40) caps nothing below 40 tournaments: a pair that met in 12 weighs (12/8)^3 one that met in 8
    w = BountyCollusionDetector().bh_weights(ev, tested)
    assert w[3] / w[2] == pytest.approx(1.5**3) and w[2] / w[0] == pytest.approx((8 / 3) ** 3) and w[4] == 0.0
    assert w[:4].mean() == pytest.approx(1.0)
    w = BountyCollusionDetector().bh_weights(np.array([3.0, 40.0, 60.0]), np.array([True, True, True]))
    assert w[1] == w[2]  # the cap, where a pair met in 40 or more
    assert list(BountyCollusionDetector(event_scale=None).bh_weights(ev, tested)) == [1.0, 1.0, 1.0, 1.0, 0.0]


def test_rest_of_the_calls_is_the_complement_of_the_wide_calls_and_joins_them_by_fisher():
    """bounty_wide_calls(min_rate=0.3, max_rate=1.01) counts the decisions the default leaves out: a calls 3 of 10
    weak hands with b in (folds 38 of 40 without) and 16 of 20 middling hands (calls 16 of 40 without). Neither
    part alone is below 1e-3; the two parts are disjoint decisions, so Fisher's method joins them and the pair is
    below 1e-3. h, who calls middling hands with everyone (36 of 40 without b, 18 of 20 with), is unremarkable."""
    import numpy as np
    import polars as pl
    from scipy import stats as st

    from detectors import stats
    from detectors.features.gameplay import bounty_wide_calls

    rows = []
    for i in range(40):  # own baselines, partner x
        rows.append((f"aw{i}", 1, "a", "x", i < 2, 0.25, 0))
        rows.append((f"am{i}", 1, "a", "x", i < 16, 0.55, 0))
        rows.append((f"hm{i}", 1, "h", "x", i < 36, 0.55, 0))
        rows.append((f"hw{i}", 1, "h", "x", i < 2, 0.25, 0))
    for i in range(10):
        rows.append((f"pw{i}", 1, "a", "b", i < 3, 0.25, 0))
    for i in range(20):
        rows.append((f"pm{i}", 1, "a", "b", i < 16, 0.55, 0))
        rows.append((f"qm{i}", 1, "h", "b", i < 18, 0.55, 0))
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin"], orient="row")
    pick = lambda t, x, y: t.filter((pl.col("player") == x) & (pl.col("opponent") == y)).row(0, named=True)  # noqa: E731
    # the cells' priors as fitted on the population (no looseness offset: two players are no population to centre a
    # player's looseness on; the offset has its own tests below)
    wide = bounty_wide_calls(df, hands=False, looseness_tau=None)
    rest = bounty_wide_calls(df, min_rate=0.3, max_rate=1.01, hands=False, looseness_tau=None)
    w, r = pick(wide, "a", "b"), pick(rest, "a", "b")
    assert (w["wc_n"], w["wc_k"], r["wc_n"], r["wc_k"]) == (10.0, 3.0, 20.0, 16.0)  # disjoint, all 30 decisions
    assert 0.3 <= r["wc_e"] / 20 < 0.5 and w["wc_e"] / 10 < 0.1
    assert r["wc_p"] == pytest.approx(float(stats.binom_tail(16, 20, r["wc_e"] / 20)))
    assert w["wc_p"] > 1e-3 and r["wc_p"] > 1e-3
    both = float(stats.fisher_combine(np.array([w["wc_p"]]), np.array([r["wc_p"]]))[0])
    assert both == pytest.approx(float(st.chi2.sf(-2 * np.log(w["wc_p"] * r["wc_p"]), 4))) and both < 1e-3
    assert pick(rest, "b", "h")["wc_p"] > 0.2  # h's 18 of 20 against a baseline of 36 of 40
    assert wide.filter((pl.col("player") == "b") & (pl.col("opponent") == "h")).is_empty()  # h's weak hands: never with b


def test_detector_joins_wide_and_rest_calls_and_weights_the_four_views():
    """On the knockout world with a loosening gang: the pair's all-calls p-value is Fisher's of the wide and rest
    calls, and its p-value the weighted Bonferroni of wide, all, presence and the all-in tests (0.45/0.45/0.05/0.05);
    the evidence names the rest of the continuations with their counts."""
    import numpy as np
    import polars as pl

    from detectors import stats
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _loosen(w.con, "k03", partner="k04")
    _loosen(w.con, "k04", partner="k03")
    det = BountyCollusionDetector()
    sc = det.fit(w.con).score(w.con)
    r = sc.filter((pl.col("player") == "k03") & (pl.col("opponent") == "k04")).row(0, named=True)
    g = lambda c: np.array([np.nan if r[c] is None else r[c]], dtype=float)  # noqa: E731
    assert r["nw_n"] > 0 and r["p_rest_calls"] is not None
    assert r["p_all_calls"] == pytest.approx(float(stats.fisher_combine(g("p_wide_calls"), g("p_rest_calls"))[0]))
    allin = stats.fisher_combine(g("p_joint"), g("p_weak"), g("p_checkdown"), g("p_wide"))
    p = stats.weighted_bonferroni([g("p_wide_calls"), g("p_all_calls"), g("p_presence"), allin], [0.45, 0.45, 0.05, 0.05])
    assert r["p_value"] == pytest.approx(float(p[0]))
    s = next(s for s in det.detect(w.con) if s.accounts == ["k03", "k04"])
    ev = next(e for e in s.evidence if e.name == "other continuations against short bounty targets with the partner in")
    assert (ev.value, ev.n) == (r["nw_k"], int(r["nw_n"])) and ev.sql and "Fisher" in ev.text
