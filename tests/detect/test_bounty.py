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
    it shared tables in; require one more tournament than it shared and the pair is no longer tested (no q-value)."""
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
    assert row["events"] == shared and row["q_value"] is None
    assert not det.threshold(scored)["flagged"].any()


def _presence_pairs(spec):
    """Hand-made bounty_presence_pairs rows: spec = [(player, partner, [(n, k, r, s), ...bins])]."""
    import polars as pl

    rows = []
    for i, (a, b, bins) in enumerate(spec):
        rows.append({"player": a, "partner": b, "n": float(sum(x[0] for x in bins)),
                     "observed": float(sum(x[1] for x in bins)), "expected": float(sum(x[0] * x[2] for x in bins)),
                     "rate_own": bins[0][2], "tournaments": [f"t{i}"], "hands": [f"{i}"],
                     "bin_n": [float(x[0]) for x in bins], "bin_r": [float(x[2]) for x in bins],
                     "bin_s": [float(x[3]) for x in bins]})
    return pl.DataFrame(rows)


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
    from detectors.features.gameplay import bounty_presence_unordered

    gang = [(60, 18, 0.1, float("inf")), (40, 12, 0.1, float("inf"))]
    loose = [(20, 10, 0.5, 30.0), (20, 10, 0.5, 30.0)]
    thin = [(60, 18, 0.1, 5.0), (40, 12, 0.1, 5.0)]
    u = bounty_presence_unordered(_presence_pairs([("a1", "a2", gang[:1]), ("a2", "a1", gang[1:]),
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
        det = _events_3_but(BountyCollusionDetector(min_events=3, alpha=0.01, **kw).fit(w.con), pairs, 8)
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


# --- a subtle gang against its closest honest look-alike ---
# The look-alike is the pair a gang is most easily confused with: two regulars who sit at the same knockout table in
# every hand one of them plays (so they share more tournaments than the gang and get at least its weight in the
# false-discovery control) and who both call short-stack shoves wider than their cards justify, whoever else is in.
# The gang calls wider only while the other member is still in the hand, in a quarter of the hands (one coin per hand
# for both members, as the synthetic world's gangs). What tells them apart is the partner-conditioning (each player's
# own baseline without the other), not the seating nor the looseness.

GANG = ("k07", "k08")
REGULARS = ("k10", "k11")  # build_ko_world seats k11 beside k10 whenever k10 plays


def _world(*, regulars_with_each_other_only: bool):
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=3000, rate=0.0, seed=11)
    # the gang: a quarter of the hands, one coin per hand for both, only while the other member is still in
    changed = sum(len(_loosen(w.con, a, partner=b, share=0.25, coin="gang")) for a, b in (GANG, GANG[::-1]))
    # the regulars: 30 % of their folds turned into calls, each with their own coin; whoever is in, or (the
    # positive control) only while the other regular is still in
    for a, b in (REGULARS, REGULARS[::-1]):
        _loosen(w.con, a, partner=b if regulars_with_each_other_only else None, share=0.3, coin=a)
    return w, changed


def _pair(sigs, accounts):
    return next(s for s in sigs if set(accounts) <= set(s.accounts))


def test_subtle_gang_flagged_and_loose_regulars_who_always_sit_together_not_flagged():
    w, changed = _world(regulars_with_each_other_only=False)
    assert 10 <= changed <= 40  # a quarter-strength gang: a few dozen decisions changed in 3,000 hands
    sigs = BountyCollusionDetector().detect(w.con)
    assert [s.accounts for s in sigs if s.flagged] == [list(GANG)]
    gang, regs = _pair(sigs, GANG), _pair(sigs, REGULARS)
    wide = gang.evidence[0]
    assert wide.name.startswith("calls against short bounty targets") and wide.p_value < 1e-6
    assert wide.value >= 3 * wide.baseline and gang.extra["q_value"] <= 0.01
    # the look-alike shared more knockout tournaments than the gang (the weighted error budget favours it) ...
    events = {s.accounts[0]: next(e for e in s.evidence if e.name == "knockout tournaments at one table") for s in (gang, regs)}
    assert events[REGULARS[0]].value >= events[GANG[0]].value >= 10
    # ... and called wide as often as its own baseline predicts: nothing for the pair test to see
    rwide = regs.evidence[0]
    assert rwide.n >= 100 and rwide.value <= 1.25 * rwide.baseline
    assert not regs.flagged and (regs.p_value or 1.0) > 1e-3


def test_the_same_regulars_flagged_when_their_wide_calls_wait_for_each_other():
    """Positive control: the same seating and the same share of folds turned into calls, but only while the other
    regular is still in: now the regulars are a gang and are flagged with it (the seating did not hide them)."""
    w, _ = _world(regulars_with_each_other_only=True)
    sigs = BountyCollusionDetector().detect(w.con)
    assert sorted(s.accounts for s in sigs if s.flagged) == sorted([list(GANG), list(REGULARS)])
    regs = _pair(sigs, REGULARS)
    assert regs.evidence[0].value >= 2 * regs.evidence[0].baseline



def _old_filters():
    """The filters before this change: presence tests only from 20 decisions together, pairs from 3 tournaments (at
    the false-discovery rate of that time, 0.01)."""
    return BountyCollusionDetector(min_decisions=20, min_events=3, alpha=0.01)


def test_gang_with_few_decisions_together_is_tested_by_its_wide_calls():
    """500 knockout hands: k03 and k04 met in 6 tournaments but faced only 16 preflop decisions with the other in, all with hands their own baseline folds
    (fewer than the former 20 of the presence filter), and called wide in 11 of them. With the filter at 20 their
    wide calls were never tested (p from the joint all-in tests only, a thousand times weaker); at 5 they are
    (p ~ 1e-13) and the pair is flagged, nothing else."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=500, rate=0.0, seed=11)
    assert len(_loosen(w.con, "k03", partner="k04") | _loosen(w.con, "k04", partner="k03")) == 10
    old = _old_filters()
    sc = old.fit(w.con).score(w.con)
    row = sc.filter((sc["player"] == "k03") & (sc["opponent"] == "k04")).row(0, named=True)
    assert row["wc_n"] is None and row["events"] == 6
    sigs = BountyCollusionDetector().detect(w.con)
    assert [s.accounts for s in sigs if s.flagged] == [["k03", "k04"]]
    wide = sigs[0].evidence[0]
    assert wide.name.startswith("calls against short bounty targets")
    assert 5 <= wide.n < 20 and wide.value >= wide.n / 2 and wide.p_value < 1e-10
    # the joint all-in tests alone (the old filters) are far weaker evidence than the wide calls
    assert row["p_value"] > 1e3 * sigs[0].p_value


def test_pairs_that_met_in_only_three_knockouts_are_not_tested():
    """150 hands (3 knockout tournaments): k03 and k04 call together in every hand they share, which three shared
    tables cannot tell from one table's dynamics (a short stack that loosens everyone there). The former filter (3
    tournaments) tested and flagged them; the default (4) leaves them untested and nothing is flagged. On the 42
    tuning populations the honest pairs flagged with a 3-tournament filter had met in exactly 3 tournaments, every
    gang in at least 4 (most 7-10)."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=150, rate=0.0, seed=13)
    _loosen(w.con, "k03", partner="k04")
    _loosen(w.con, "k04", partner="k03")
    assert [s.accounts for s in _old_filters().detect(w.con) if s.flagged] == [["k03", "k04"]]
    det = BountyCollusionDetector()
    sc = det.fit(w.con).score(w.con)
    row = sc.filter((sc["player"] == "k03") & (sc["opponent"] == "k04")).row(0, named=True)
    assert row["events"] == 3 and row["p_value"] < 1e-6 and row["q_value"] is None
    assert not det.threshold(sc)["flagged"].any()


def test_presence_p_is_valid_at_every_level():
    """Under the null (k ~ Bin(n, r), rate known) the probability that the presence p-value falls at or below t must
    not exceed t, for every t down to 1e-6: few decisions at low rates (where the former score test's normal tail was
    off by orders of magnitude: 6 decisions at 0.1, 4 continued, ~4e-6 where P(k >= 4) = 1.3e-3) and the far tail of
    many decisions (where the former min-p was 2x liberal at 1e-5 for 40 at 0.3, 13x at 1e-6 for 100 at 0.1).
    The exact tail meets the bound with equality at its attainable levels."""
    import numpy as np
    from scipy import stats as st

    from detectors.features.gameplay import bounty_presence_unordered

    for n, r in ((5, 0.05), (6, 0.1), (8, 0.1), (10, 0.2), (12, 0.05), (40, 0.3), (100, 0.1)):
        ks = np.arange(n + 1)
        spec = [(f"a{k:03d}", f"b{k:03d}", [(n, int(k), r, float("inf"))]) for k in ks]
        u = bounty_presence_unordered(_presence_pairs(spec)).sort("pres_k")
        assert u["pres_k"].to_list() == list(ks.astype(float))
        p = u["pres_p"].to_numpy()
        pmf = st.binom.pmf(ks, n, r)
        np.testing.assert_allclose(p, np.maximum(st.binom.sf(ks - 1, n, r), 1e-300), rtol=1e-9)
        for t in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
            assert pmf[p <= t].sum() <= t * (1 + 1e-9), (n, r, t)


def _position_rows(pairs):
    """Hand-made bounty_presence rows, weak hands (decile 2) at one price: pairs = [(player, partner, pos, n, calls)]."""
    import polars as pl

    rows = []
    for j, (a, b, pos, n, k) in enumerate(pairs):
        rows += [(f"{a}{b}{pos}_{j}_{i}", 1, a, b, i < k, 0.25, 0, pos) for i in range(n)]
    return pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin", "pos"], orient="row")


def test_wide_calls_compare_a_player_with_their_own_rate_at_the_same_position():
    """a calls weak hands 2 times in 60 in early position (pos 1) and 40 % on the button and cut-off (pos 3). With h
    in, a plays 40 late-position hands at that same late rate (honest); with g in, 20 early-position hands and calls 8
    (a gang's wide calls). Pooled over positions a's rate is ~0.25: the honest pair looks loose (p < 0.05) and the
    gang hides (p > 0.05); per position (the default cells) the honest pair's calls are not wide calls at all and the
    gang's eight are 1e-4-unlikely."""
    import polars as pl

    from detectors.features.gameplay import bounty_wide_calls

    base = [("a", "x", 1, 60, 2), ("a", "x", 3, 60, 24), ("c", "x", 1, 60, 2), ("c", "x", 3, 60, 24)]
    df = _position_rows(base + [("a", "h", 3, 40, 16), ("a", "g", 1, 20, 8)])

    def p(w, b):
        r = w.filter((pl.col("player") == "a") & (pl.col("opponent") == b))
        return (r["wc_p"][0], r["wc_n"][0]) if not r.is_empty() else (1.0, 0.0)

    pooled, by_pos = bounty_wide_calls(df, context=()), bounty_wide_calls(df)
    assert p(pooled, "h")[0] < 0.05 and p(pooled, "g")[0] > 0.05
    assert p(by_pos, "h") == (1.0, 0.0)  # a's late-position rate is 50 %: no wide call there
    assert p(by_pos, "g")[1] == 20.0 and p(by_pos, "g")[0] < 1e-4


def test_presence_rows_carry_the_deciding_players_position(ko_world):
    """bounty_presence reads the deciding player's seat position (seats.position) into four cells: blinds 0, early
    (UTG..UTG2) 1, middle (LJ, HJ) 2, late (CO, BTN) 3; unknown -1 in the tests' cells."""
    import polars as pl

    from detectors.features import gameplay as gp

    src = ko_world.con
    rows = gp.bounty_presence(src)
    assert rows["pos"].is_null().all()  # the planted world writes no positions
    hand, player = rows.row(0, named=True)["hand_id"], rows.row(0, named=True)["player"]
    src.execute("UPDATE seats SET position = 'CO' WHERE hand_id = ? AND player = ?", [hand, player])
    try:
        again = gp.bounty_presence(src).filter((pl.col("hand_id") == hand) & (pl.col("player") == player))
        assert again.height > 0 and (again["pos"] == 3).all()
    finally:
        src.execute("UPDATE seats SET position = NULL WHERE hand_id = ? AND player = ?", [hand, player])


def test_looseness_offset_solves_the_players_logit_shift_with_a_ridge():
    """bounty_offset_priors on hand-made cells: a player whose rate is expit(logit m + 1) in every cell (m the
    population's prior mean) gets delta = 1 without the ridge (tau 0) and less with it; a player at the population's
    rates gets 0; a player with 2 decisions, both continued, stays near the population with the default ridge."""
    import numpy as np
    import polars as pl

    from detectors.features.gameplay import bounty_offset_priors

    m = np.array([0.02, 0.1, 0.3, 0.6])
    pri = pl.DataFrame({"c": [0, 1, 2, 3], "pa": m * 50, "pb": (1 - m) * 50})
    loose = 1 / (1 + np.exp(-(np.log(m / (1 - m)) + 1.0)))
    dec = pl.DataFrame({"player": ["loose"] * 4 + ["avg"] * 4 + ["few"],
                        "c": [0, 1, 2, 3] * 2 + [1], "Dn": [100.0] * 8 + [2.0],
                        "Dk": list(100 * loose) + list(100 * m) + [2.0]})
    free = {r["player"]: r["delta"] for r in bounty_offset_priors(dec, pri, ["c"], tau=0.0, iters=30).iter_rows(named=True)}
    ridge = {r["player"]: r["delta"] for r in bounty_offset_priors(dec, pri, ["c"]).iter_rows(named=True)}
    assert free["loose"] == pytest.approx(1.0, abs=1e-6) and free["avg"] == pytest.approx(0.0, abs=1e-6)
    assert 0.3 < ridge["loose"] < free["loose"] and ridge["avg"] == pytest.approx(0.0, abs=1e-6)
    assert free["few"] > 2.0 and 0 < ridge["few"] < 0.1


def _looseness_rows():
    """Hand-made bounty_presence rows over 64 cells (strength decile 0-3 x price x position), weak hands only: 30
    players continue at 5 %, two loose players (l1, l2) at 20 % whoever is in (honest), two players (g1, g2) at 5 %
    but at 30 % with each other (a gang). Continuations spread evenly (every 1/rate-th decision)."""
    import polars as pl

    cells = [(d, c, p) for d in range(4) for c in range(4) for p in range(4)]
    rows = []

    def play(player, partner, n, rate, tag):
        for i in range(n):
            d, c, p = cells[i % len(cells)]
            rows.append((f"{tag}{player}{partner}{i}", 1, player, partner, int((i + 1) * rate) > int(i * rate),
                         (d + 0.5) / 10, c, p))

    for j in range(30):
        play(f"n{j:02d}", "x", 192, 0.05, "b")
    for who, rate in (("l1", 0.2), ("l2", 0.2), ("g1", 0.05), ("g2", 0.05)):
        play(who, "x", 640, rate, "b")
    for a, b, rate in (("l1", "l2", 0.2), ("l2", "l1", 0.2), ("g1", "g2", 0.3), ("g2", "g1", 0.3)):
        play(a, b, 64, rate, "p")
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin", "pos"], orient="row")
    return df.with_columns(tournament_id=pl.lit("t1"), sbin=(pl.col("strength") * 5).floor().cast(pl.Int8),
                           cbin=pl.col("cbin").cast(pl.Int8), pos=pl.col("pos").cast(pl.Int8))


def test_two_loose_players_are_not_a_gang_with_the_looseness_offset():
    """Two honest loose players who share tables: held to the population's rate in their sparse cells (no offset), the
    presence test finds them p < 0.02; with each player's own looseness (the default) both tests leave them at p > 0.3.
    The gang, tight players who loosen up only with each other, stays far beyond any threshold."""
    import polars as pl

    from detectors.features.gameplay import bounty_presence_pairs, bounty_presence_unordered, bounty_wide_calls

    df = _looseness_rows()

    def p(tau, a, b):
        w = bounty_wide_calls(df, looseness_tau=tau, hands=False).filter((pl.col("player") == a) & (pl.col("opponent") == b))
        # the offset's effect alone: without the tournament effect (all rows here are one tournament, where the
        # players' looseness would read as a tournament effect)
        u = bounty_presence_unordered(bounty_presence_pairs(df, looseness_tau=tau, tournament_effect=False)).filter(
            (pl.col("player") == a) & (pl.col("opponent") == b))
        return w["wc_p"][0], u["pres_p"][0]

    assert p(None, "l1", "l2")[1] < 0.02
    assert min(p(30.0, "l1", "l2")) > 0.3 and min(p(None, "l1", "l2")) < min(p(30.0, "l1", "l2")) / 10
    wide, pres = p(30.0, "g1", "g2")
    assert wide < 1e-10 and pres < 1e-15


def test_offset_priors_index_players_as_sorted_names_and_wide_calls_reuse_the_cells_of_the_same_rows(monkeypatch):
    """bounty_offset_priors numbers the players in sorted order (byte order of the UTF-8 names = code points, as
    numpy's unique), so each player keeps its own offset whatever the names; bounty_wide_calls given the cells of
    bounty_wide_cells for several rate ranges of the same rows (the detector's wide calls, then the rest of its
    calls) fits the offsets once, and every result equals a call made from scratch."""
    import numpy as np
    import polars as pl

    from detectors.features import gameplay as gp

    names = ["b#1", "B", "a#10", "a#2", "é", "zz", "a"]
    rng = np.random.default_rng(5)
    rows = []
    for j, p in enumerate(names):
        loose = 0.15 * (j % 3)
        for i in range(60):
            s = float(rng.random())
            rows.append((f"{p}h{i}", 1, p, names[(j + 1 + i % 3) % len(names)], bool(rng.random() < s / 2 + loose), s,
                         int(i % 2), int(i % 4)))
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin", "pos"], orient="row")
    dec = df.group_by("player", "cbin").agg(Dn=pl.len(), Dk=pl.col("cont").cast(pl.Int64).sum())
    pri = pl.DataFrame({"cbin": [0, 1], "pa": [2.0, 3.0], "pb": [4.0, 3.0]})
    off = gp.bounty_offset_priors(dec, pri, ["cbin"], tau=5.0)
    assert off["player"].to_list() == sorted(names)
    # the reference: numpy's sorted unique names and inverse index, the Newton steps as before
    x = dec.join(pri, on="cbin").with_columns(lm=(pl.col("pa") / (pl.col("pa") + pl.col("pb"))).clip(1e-4, 1 - 1e-4))
    x = x.with_columns(lm=(pl.col("lm") / (1 - pl.col("lm"))).log())
    players, code = np.unique(x["player"].to_numpy(), return_inverse=True)
    n, k, lm = (x[c].cast(pl.Float64).to_numpy() for c in ("Dn", "Dk", "lm"))
    delta = np.zeros(len(players))
    kk = np.bincount(code, weights=k, minlength=len(players))
    for _ in range(8):
        mu = 1.0 / (1.0 + np.exp(-(lm + delta[code])))
        info = np.bincount(code, weights=n * mu * (1 - mu), minlength=len(players)) + 5.0
        delta = np.clip(delta + (kk - np.bincount(code, weights=n * mu, minlength=len(players)) - 5.0 * delta) / info, -6, 6)
    assert players.tolist() == off["player"].to_list()
    np.testing.assert_array_equal(off["delta"].to_numpy(), delta)
    assert np.ptp(delta) > 0.1  # the looser players' offsets differ

    fits = []
    real = gp.bounty_offset_priors  # called inside gp.bounty (its module), so patched there
    monkeypatch.setattr(gp.bounty, "bounty_offset_priors", lambda *a, **kw: fits.append(1) or real(*a, **kw))
    cells = gp.bounty_wide_cells(df)
    wide = gp.bounty_wide_calls(df, hands=False, cells=cells)
    rest = gp.bounty_wide_calls(df, min_rate=0.3, max_rate=1.01, hands=False, cells=cells)
    with_hands = gp.bounty_wide_calls(df, cells=cells)
    assert len(fits) == 1
    for got, kw in ((wide, {"hands": False}), (rest, {"min_rate": 0.3, "max_rate": 1.01, "hands": False}), (with_hands, {})):
        ref = gp.bounty_wide_calls(df, **kw)
        assert not got.is_empty()
        a, b = got.sort("player", "opponent"), ref.sort("player", "opponent")
        assert a.select("player", "opponent", "wc_n", "wc_k", "wc_hands").equals(b.select("player", "opponent", "wc_n", "wc_k", "wc_hands"))
        np.testing.assert_allclose(a.select("wc_e", "wc_p").to_numpy(), b.select("wc_e", "wc_p").to_numpy(), rtol=1e-12)
    assert len(fits) == 4
    # without cells every call counts and fits afresh
    gp.bounty_wide_calls(df, hands=False)
    assert len(fits) == 5
    assert gp.bounty_wide_cells(df.filter(pl.col("strength").is_null())) is None


def test_overdispersed_sum_sf_is_the_exact_tail_without_effect_and_integrates_the_effect_per_block():
    """overdispersed_sum_sf: with sigma = 0 it is betabinom_sum_sf's exact tail; with sigma > 0 it equals an
    independent computation (each block's components convolved at rates shifted by u on a fine grid of the normal
    density, the blocks' distributions convolved by numpy) to 0.1 % relative (fifteen quadrature nodes: 1e-4 at a
    tail of 1e-6; nine gave 0.6 % at 6e-7), down to tails below 1e-6."""
    import numpy as np
    from scipy import stats as st

    from detectors.features.gameplay import betabinom_sum_sf, overdispersed_sum_sf

    rng = np.random.default_rng(11)
    spec = []  # per group: list of blocks, each a list of (n, r, s)
    for g in range(12):
        spec.append([[(int(rng.integers(1, 12)), float(rng.uniform(0.03, 0.8)), float([np.inf, rng.uniform(3, 60)][c % 2]))
                      for c in range(int(rng.integers(1, 4)))] for _ in range(int(rng.integers(1, 4)))])
    grp, blk, n, r, s, b = [], [], [], [], [], 0
    for g, blocks in enumerate(spec):
        for comps in blocks:
            for (ni, ri, si) in comps:
                grp.append(g), blk.append(b), n.append(ni), r.append(ri), s.append(si)
            b += 1
    grp, blk, n, r, s = map(np.array, (grp, blk, n, r, s))
    tot = np.bincount(grp, weights=n)
    k = np.rint(tot * rng.uniform(0.4, 1.0, len(spec)))
    np.testing.assert_allclose(overdispersed_sum_sf(grp, blk, n, r, s, k, 0.0), betabinom_sum_sf(grp, n, r, s, k), rtol=1e-12)

    def comp_pmf(ni, ri, si):
        """One component's pmf at each rate of ``ri`` (a column): rows are the grid's points."""
        x = np.arange(ni + 1)
        return st.binom.pmf(x, ni, ri) if np.isinf(si) else st.betabinom.pmf(x, ni, ri * si, (1 - ri) * si)

    def convolve_rows(a, b):
        """np.convolve of each row of ``a`` with the same row of ``b``."""
        out = np.zeros((a.shape[0], a.shape[1] + b.shape[1] - 1))
        for j in range(b.shape[1]):
            out[:, j:j + a.shape[1]] += a * b[:, j:j + 1]
        return out

    sigma = 0.6
    u = np.linspace(-8 * sigma, 8 * sigma, 4001)
    wu = st.norm.pdf(u, 0, sigma)
    wu /= wu.sum()
    got = overdispersed_sum_sf(grp, blk, n, r, s, k, sigma)
    for g, blocks in enumerate(spec):
        total = np.array([1.0])
        for comps in blocks:
            pm = np.ones((len(u), 1))  # the block's pmf at each grid point: its components convolved
            for (ni, ri, si) in comps:
                pm = convolve_rows(pm, comp_pmf(ni, 1 / (1 + np.exp(-(np.log(ri / (1 - ri)) + u[:, None]))), si))
            total = np.convolve(total, wu @ pm)
        want = float(total[int(k[g]):].sum())
        assert got[g] == pytest.approx(want, rel=1e-3, abs=1e-300), (g, k[g])
    assert (got < 1e-6).any() and (got > got.min() * 1e4).any()


def _tournament_effect_rows(sigma, seed, gang=None):
    """Simulated bounty_presence rows: 120 players in 60 tournaments of one six-seat table (40 hands each, every
    decision with the five others in); each player continues at logistic(cell + own looseness + u) with u ~ N(0,
    sigma^2) drawn per (player, tournament). ``gang`` = (a, b, shift): a and b continue at +shift on the logit
    when they share a table (placed together in the first tournaments)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    P, T, S, H = 120, 60, 6, 40
    base = np.array([-2.5, -1.5, -0.5, 0.5, 2.0])
    loose = rng.normal(0, 0.3, P)
    seats = np.array([rng.choice(P, S, replace=False) for _ in range(T)])
    if gang is not None:
        a, b, _ = gang
        for t in range(4):
            seats[t] = np.r_[[a, b], rng.choice(np.setdiff1d(np.arange(P), [a, b]), S - 2, replace=False)]
    tt, hh, ss = np.meshgrid(np.arange(T), np.arange(H), np.arange(S), indexing="ij")
    tt, hh, ss = tt.ravel(), hh.ravel(), ss.ravel()
    player = seats[tt, ss]
    u = rng.normal(0, sigma, (P, T))
    sbin, cbin, pos = rng.integers(0, 5, len(tt)), rng.integers(0, 4, len(tt)), rng.integers(0, 4, len(tt))
    eta = base[sbin] + 0.2 * cbin - 0.1 * pos + loose[player] + u[player, tt]
    if gang is not None:
        a, b, shift = gang
        together = np.isin(seats[tt], [a]).any(axis=1) & np.isin(seats[tt], [b]).any(axis=1) & np.isin(player, [a, b])
        eta = eta + shift * together
    cont = rng.random(len(tt)) < 1 / (1 + np.exp(-eta))
    dec = pl.DataFrame({"hand_id": [f"t{t}h{h}" for t, h in zip(tt, hh)], "seq": ss, "tournament_id": [f"t{t}" for t in tt],
                        "player": [f"p{p:03d}" for p in player], "cont": cont, "sbin": sbin.astype(np.int8),
                        "cbin": cbin.astype(np.int8), "pos": pos.astype(np.int8), "strength": (sbin + 0.5) / 5, "_t": tt})
    others = pl.DataFrame({"_t": np.repeat(np.arange(T), S), "partner": [f"p{p:03d}" for p in seats.ravel()]})
    return dec.join(others, on="_t").filter(pl.col("partner") != pl.col("player")).drop("_t")


def test_presence_p_calibrated_when_players_looseness_varies_by_tournament():
    """Honest players whose looseness moves from one tournament to the next (logit sd 0.6): pairs that met in one
    tournament share that tournament's draw, and the presence test that ignores it is liberal (7x nominal at p < 0.01
    here, 27x at 0.001). With the tournament effect (estimated from the rows, never from the pairs: 0.32 for a true
    0.36) the share of p below 0.01 and 0.05 stays at most 1.5x nominal (1.3x and 0.85x). A gang that continues at
    +2 on the logit when seated together (four tournaments) is still far beyond any threshold (p ~ 2e-6)."""
    import numpy as np
    import polars as pl

    from detectors.features.gameplay import bounty_presence_pairs, bounty_presence_unordered

    rows = _tournament_effect_rows(0.6, 5)
    with_, without = (bounty_presence_pairs(rows, tournament_effect=e) for e in (True, False))
    assert 0.2 < with_["sigma2"][0] < 0.6 and without["sigma2"][0] == 0.0
    p_with = bounty_presence_unordered(with_)["pres_p"].to_numpy()
    p_without = bounty_presence_unordered(without)["pres_p"].to_numpy()
    m = len(p_with)
    assert m > 800
    assert (p_without < 0.01).mean() > 0.03
    for t in (0.01, 0.05):
        assert (p_with < t).mean() <= 1.5 * t, (t, (p_with < t).mean())
    assert (p_with < 0.05).mean() >= 0.5 * 0.05  # not made deaf either

    g = _tournament_effect_rows(0.6, 5, gang=(0, 1, 2.0))
    u = bounty_presence_unordered(bounty_presence_pairs(g)).filter((pl.col("player") == "p000") & (pl.col("opponent") == "p001"))
    assert u["pres_p"][0] < 1e-5


def test_wide_calls_baseline_counts_each_decision_once_without_the_partner():
    """A partner present in most of a player's decisions, the case the per-row baseline mis-weighs. In one cell
    (weak hand, cheap price, one position) a plays 40 decisions with b, x and y all still in and continues in 16
    (a gang's wide calls: the bounty_presence rows are one per other player still in, three per decision), and 20
    with x alone in, continuing once (y, in the same decisions as b, is the bystander that bounty_unshadowed
    handles). Without b, a continued in 1 of 20 decisions: the new rate of the (a, b) cell
    is (Dk - k + pa) / (Dn - n + pa + pb) = (17 - 16 + pa) / (60 - 40 + pa + pb), well under 0.3, and the 16
    calls are wide calls far beyond chance. The former baseline took a's rows less the pair's, (K - k) = 49 - 16 =
    33 of (N - n) = 140 - 40 = 100 rows, scaled by D / N = 60 / 140: the decisions with b in come back through
    x's and y's rows, the rate is ~0.33 and none of the gang's calls is a wide call."""
    import polars as pl

    from detectors import stats
    from detectors.features.gameplay import bounty_wide_calls, bounty_wide_cells

    rows = []
    for i in range(40):  # a with b, x and y in: one row per other player still in
        rows += [(f"g{i}", 1, "a", o, i < 16, 0.25, 0) for o in ("b", "x", "y")]
    for i in range(20):  # a with x alone in
        rows.append((f"s{i}", 1, "a", "x", i < 1, 0.25, 0))
    for j, rate in enumerate((0.0, 0.05, 0.1, 0.3, 0.5, 0.7)):  # a population with spread in the cell (a weak prior)
        rows += [(f"c{j}_{i}", 1, f"c{j}", "z", i < round(20 * rate), 0.25, 0) for i in range(20)]
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "cont", "strength", "cbin"], orient="row")

    def cell(without_partner):
        _, _, t = bounty_wide_cells(df, looseness_tau=None, without_partner=without_partner)
        return t.filter((pl.col("player") == "a") & (pl.col("partner") == "b")).row(0, named=True)

    new, old = cell(True), cell(False)
    assert (new["n"], new["k"], new["Dn"], new["Dk"], old["N"], old["K"], old["Dn"]) == (40, 16, 60, 17, 140, 49, 60)
    pa, pb = new["pa"], new["pb"]
    assert (pa, pb) == pytest.approx((old["pa"], old["pb"]), rel=1e-12) and 0.2 < pa / (pa + pb) < 0.35 and pa + pb < 10
    assert new["r"] == pytest.approx((1 + pa) / (20 + pa + pb), rel=1e-12)
    assert old["r"] == pytest.approx((33 * 60 / 140 + pa) / (100 * 60 / 140 + pa + pb), rel=1e-12)
    assert new["r"] < 0.12 and old["r"] > 0.3
    # every decision of a had x in: a's baseline without x is the cell's prior alone
    ax = bounty_wide_cells(df, looseness_tau=None)[2].filter((pl.col("player") == "a") & (pl.col("partner") == "x"))
    assert ax["r"][0] == pytest.approx(max(0.02, (0 + pa) / (0 + pa + pb)), rel=1e-12)

    def pair(without_partner):
        w = bounty_wide_calls(df, looseness_tau=None, without_partner=without_partner, hands=False)
        return w.filter((pl.col("player") == "a") & (pl.col("opponent") == "b"))

    w = pair(True).row(0, named=True)
    assert (w["wc_n"], w["wc_k"]) == (40.0, 16.0) and w["wc_e"] == pytest.approx(40 * new["r"], rel=1e-12)
    assert w["wc_p"] == pytest.approx(float(stats.binom_tail(16, 40, new["r"])), rel=1e-9) and w["wc_p"] < 1e-6
    assert pair(False).is_empty()  # the former baseline: no wide call at all
