"""BountyCollusionDetector against its closest honest look-alikes: regulars who sit together and call wide, loose
players and players whose looseness varies by tournament; the wide calls judged against each player's own rate at the
same position and the overdispersed tail of the presence count."""

import pytest

from detectors.bounty_collusion import BountyCollusionDetector
from tests.detect.test_bounty import _loosen, _presence_parts


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

    from detectors.features.gameplay.bounty_tests import presence_tail

    for n, r in ((5, 0.05), (6, 0.1), (8, 0.1), (10, 0.2), (12, 0.05), (40, 0.3), (100, 0.1)):
        ks = np.arange(n + 1)
        spec = [(f"a{k:03d}", f"b{k:03d}", [(n, int(k), r, float("inf"))]) for k in ks]
        u = presence_tail(_presence_parts(spec)).sort("pres_k")
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

    from detectors.features.gameplay import bounty_wide_calls
    from detectors.features.gameplay.bounty_tests import bounty_presence_tested
    from tests.detect.bounty_reference import presence_counts

    df = _looseness_rows()

    def p(tau, a, b):
        w = bounty_wide_calls(df, looseness_tau=tau, hands=False).filter((pl.col("player") == a) & (pl.col("opponent") == b))
        # the offset's effect alone: without the tournament effect (all rows here are one tournament, where the
        # players' looseness would read as a tournament effect)
        u = bounty_presence_tested(lambda: presence_counts(df), looseness_tau=tau, tournament_effect=False).filter(
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

    from detectors.features.gameplay.bounty import presence_parts
    from detectors.features.gameplay.bounty_tests import bounty_presence_tested, presence_tail
    from tests.detect.bounty_reference import presence_counts

    rows = _tournament_effect_rows(0.6, 5)
    with_, without = (list(presence_parts(list(presence_counts(rows)), tournament_effect=e)) for e in (True, False))
    assert 0.2 < with_[0]["sigma2"][0] < 0.6 and without[0]["sigma2"][0] == 0.0
    p_with = presence_tail(with_)["pres_p"].to_numpy()
    p_without = presence_tail(without)["pres_p"].to_numpy()
    m = len(p_with)
    assert m > 800
    assert (p_without < 0.01).mean() > 0.03
    for t in (0.01, 0.05):
        assert (p_with < t).mean() <= 1.5 * t, (t, (p_with < t).mean())
    assert (p_with < 0.05).mean() >= 0.5 * 0.05  # not made deaf either

    g = _tournament_effect_rows(0.6, 5, gang=(0, 1, 2.0))
    u = bounty_presence_tested(lambda: presence_counts(g)).filter((pl.col("player") == "p000") & (pl.col("opponent") == "p001"))
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


def test_overdispersed_sum_sf_holds_no_matrix_of_every_block_by_the_largest_count():
    """overdispersed_sum_sf over many small pairs and one pair with a large count: the block functions are kept
    per fold bucket, as wide as that bucket's largest count, not as one (blocks x largest count) matrix (at 2M
    hands that matrix was most of bounty collusion's peak: docs/measurements.md, 2026-12-07). Each group's tail is
    the one computed for that group alone, to the last bit (the groups of one bucket share its width, so the one
    large group is computed alone here too). numpy reports its buffers to tracemalloc."""
    import numpy as np

    from detectors.features.gameplay import overdispersed_sum_sf

    small = 20_000  # pairs of one block with one decision each, observed count 1
    big_n = 4_000  # one pair: one block of 4,000 decisions at rate 0.5, observed 2,100 (width bucket 4096)
    grp = np.r_[np.arange(small), small]
    blk = np.r_[np.arange(small), small]
    n = np.r_[np.ones(small), big_n]
    r = np.r_[np.full(small, 0.2), 0.5]
    s = np.r_[np.full(small, 30.0), np.inf]
    k = np.r_[np.ones(small), 2_100.0]
    got, peak = _traced(overdispersed_sum_sf, grp, blk, n, r, s, k, 0.4)
    # the former matrix alone: 20,001 blocks x 2,101 cells x 8 bytes = 336 MB
    assert peak < 100e6, peak
    alone = overdispersed_sum_sf(np.array([0]), np.array([0]), np.array([float(big_n)]), np.array([0.5]),
                                 np.array([np.inf]), np.array([2_100.0]), 0.4)
    assert got[-1] == alone[0]
    one = overdispersed_sum_sf(np.arange(3), np.arange(3), np.ones(3), np.full(3, 0.2), np.full(3, 30.0), np.ones(3), 0.4)
    assert np.all(got[:small] == one[0])


def _traced(fn, *args):
    """``fn(*args)`` and the peak of the memory tracemalloc traced during the call (numpy reports its buffers)."""
    import tracemalloc

    tracemalloc.start()
    try:
        got = fn(*args)
        return got, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_overdispersed_sum_sf_expands_the_nodes_of_a_few_blocks_at_a_time():
    """overdispersed_sum_sf over 100,000 components (50,000 pairs of two one-decision blocks): the components are
    expanded to their Gauss-Hermite nodes a chunk of whole blocks at a time, the chunk small enough that the
    expansion is not all the window's components at once (at 2.4M hands that expansion held bounty collusion's
    peak: docs/measurements.md, 2026-12-07, issue 33); each pair's tail is the one computed for that pair alone, to
    the last bit. numpy reports its buffers to tracemalloc."""
    import numpy as np

    from detectors.features.gameplay import overdispersed_sum_sf

    m = 100_000
    grp, blk = np.arange(m) // 2, np.arange(m)
    n, r, s, k = np.ones(m), np.full(m, 0.2), np.full(m, 30.0), np.ones(m // 2)
    got, peak = _traced(overdispersed_sum_sf, grp, blk, n, r, s, k, 0.4)
    # all 100,000 components expanded at once: 316 MB traced
    assert peak < 200e6, peak
    alone = overdispersed_sum_sf(np.zeros(2), np.arange(2), np.ones(2), np.full(2, 0.2), np.full(2, 30.0), np.ones(1), 0.4)
    assert np.all(got == alone[0])


def test_overdispersed_sum_sf_of_a_chunk_of_groups_with_the_windows_folds_is_the_whole_call_to_the_last_bit():
    """Groups of several blocks, their counts in several fold buckets, summed two at a time with the whole
    window's folds (sum_sf_folds) give the tails of one call over every group, bit for bit (the presence test
    sums its pairs a chunk at a time: docs/measurements.md, 2026-12-07, issue 33)."""
    import numpy as np

    from detectors.features.gameplay.distributions import overdispersed_sum_sf, sum_sf_folds

    rng = np.random.default_rng(5)
    G, per = 12, 9
    grp = np.repeat(np.arange(G), per)
    blk = grp * 3 + rng.integers(0, 3, len(grp))
    n = rng.integers(1, 6, len(grp)).astype(float)
    r, s = rng.uniform(0.05, 0.6, len(grp)), rng.uniform(5.0, 80.0, len(grp))
    tot = np.bincount(grp, weights=n)
    k = np.floor(tot * rng.uniform(0.1, 0.9, G))
    whole = overdispersed_sum_sf(grp, blk, n, r, s, k, 0.5)
    folds = sum_sf_folds(k, tot)
    assert len(folds) > 1
    for a in range(0, G, 2):
        sel = (grp >= a) & (grp < a + 2)
        part = overdispersed_sum_sf(grp[sel] - a, blk[sel], n[sel], r[sel], s[sel], k[a : a + 2], 0.5, folds=folds)
        assert np.array_equal(part, whole[a : a + 2]), a
