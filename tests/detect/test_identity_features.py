"""Identity features on a small planted warehouse: IDF weights, networks,
payments, style likeness against the population's null, patterns of use."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from test_identity_features_world import Style, World, at

from detectors import stats as stats_mod
from detectors.features import identity as idf


@pytest.fixture(scope="module")
def world():
    w = World(seed=11)
    names = [f"u{i:02d}" for i in range(40)]
    for n in names:
        w.account(n, payment=f"card-{n}")
    twin = Style(vpip=0.21, pfr=0.17, aggr=0.62, size=0.7, log_ms=7.6, sd_ms=0.35)
    w.styles["u01"] = twin
    w.styles["u02"] = twin
    # u01/u02: one person, one laptop, alternating (u02 logs in 10 min after u01 logs out)
    w.session("u01", "81.2.3.4", "laptop-A", at(-60), at(0))
    w.session("u02", "81.2.3.4", "laptop-A", at(10), at(400))
    w.session("u01", "81.2.3.9", "laptop-A", at(410), at(500))
    # u03/u04: housemates on one home IP, own devices, online at once
    w.session("u03", "90.1.1.7", "pc-3", at(0), at(400))
    w.session("u04", "90.1.1.7", "pc-4", at(0), at(400))
    # u05/u06: neighbours in one /24, different addresses
    w.session("u05", "93.4.5.10", "pc-5", at(0), at(400))
    w.session("u06", "93.4.5.77", "pc-6", at(0), at(400))
    # u10..u39: phones behind one carrier NAT address (a crowd)
    for n in names[10:]:
        w.session(n, "100.64.0.1", f"phone-{n}", at(0), at(400))
    # u00/u09: one person on one tablet, both accounts online on it at once (two addresses: a VPN)
    w.session("u00", "83.1.1.1", "tablet-Z", at(100), at(200))
    w.session("u09", "185.9.9.9", "tablet-Z", at(150), at(300))
    # u07/u08: a family card
    w.rows["accounts"] = [r if r[0] != "u08" else (r[0], r[1], r[2], "card-u07", None) for r in w.rows["accounts"]]
    rng = np.random.default_rng(2)
    for t in range(10):
        players = [p for p in rng.choice(names, 24, replace=False).tolist() if p not in ("u01", "u02")]
        if t < 8:
            players += ["u01", "u02"]
        w.tournament(str(500 + t), players, at(40 * t), n_hands=40)
    return w


def _pair(df: pl.DataFrame, a: str, b: str) -> dict:
    a, b = sorted([a, b])
    rows = df.filter((pl.col("a") == a) & (pl.col("b") == b)).to_dicts()
    assert len(rows) == 1, f"no link {a}-{b}"
    return rows[0]


def test_idf_weights_rank_rare_identifiers_above_crowds(con):
    links = idf.identity_links(con, max_share=20)
    n = idf.population_size(con)
    twin = _pair(links, "u01", "u02")
    kinds = {s["kind"]: s for s in twin["shared"]}
    assert kinds["device"]["n_accounts"] == 2 and kinds["device"]["value"] == "laptop-A"
    assert twin["w_device"] == pytest.approx(np.log(n / 2))
    # the carrier NAT address is shared by 30 accounts: above max_share, no link at all
    assert links.filter(pl.col("a").is_in(["u10", "u11"]) & pl.col("b").is_in(["u10", "u11"])).height == 0
    # with a higher cap it links them, but weakly (IDF of a crowd)
    loose = idf.identity_links(con, max_share=100)
    crowd = _pair(loose, "u10", "u11")
    assert crowd["w_ip"] == pytest.approx(np.log(n / 30)) and crowd["w_ip"] < twin["w_device"] / 2


def test_networks_and_payments_link(con):
    links = idf.identity_links(con)
    nb = _pair(links, "u05", "u06")
    assert nb["w_ip"] == 0 and nb["w_net"] > 0
    assert [s["value"] for s in nb["shared"]] == ["93.4.5.0/24"]
    fam = _pair(links, "u07", "u08")
    assert fam["w_payment"] > 0 and fam["w_device"] == 0 and fam["w_ip"] == 0
    house = _pair(links, "u03", "u04")
    assert house["w_ip"] > 0 and house["w_device"] == 0


def test_style_likeness_separates_one_person_from_housemates(con):
    fp = idf.style_fingerprints(con)
    assert set(fp.columns) >= {"vpip", "pfr", "aggr_freq", "size_1", "log_ms_q50", "n_decisions"}
    links = idf.identity_links(con)
    lk = idf.likeness(fp, links, min_hands=20, random_state=0)
    twin = _pair(lk, "u01", "u02")
    house = _pair(lk, "u03", "u04")
    # one player behind both: the homogeneity statistic is near 1, housemates far above
    assert twin["style_dist"] < 2.5 < house["style_dist"]
    assert twin["timing_dist"] < 2.5 < house["timing_dist"]
    # and few random pairs of this small population are as alike
    assert twin["p_style"] < 0.1 and twin["p_timing"] < 0.1
    # seeded: the same population gives the same p-values
    again = idf.likeness(fp, links, min_hands=20, random_state=0)
    assert _pair(again, "u01", "u02")["p_style"] == twin["p_style"]


def test_usage_patterns_handovers_and_co_entries(con):
    links = idf.identity_links(con)
    use = idf.usage_patterns(con, links.select("a", "b"))
    twin = _pair(use, "u01", "u02")
    assert twin["handovers"] == 2  # u02 after u01, then u01 after u02
    assert twin["overlap_s"] == 0
    assert twin["shared_tournaments"] == [str(500 + t) for t in range(8)]
    # configuration-model null per day: E = sum over days of n_a n_b sum(size^2) / sum(size)^2
    rows = con.execute(
        "SELECT h.tournament_id, min(h.started_at)::DATE, count(DISTINCT s.player), "
        "bool_or(s.player = 'u01'), bool_or(s.player = 'u02') "
        "FROM seats s JOIN hands h USING (hand_id) GROUP BY 1").fetchall()
    expected = 0.0
    for day in {r[1] for r in rows}:
        sz = np.array([r[2] for r in rows if r[1] == day], dtype=float)
        na = sum(r[3] for r in rows if r[1] == day)
        nb = sum(r[4] for r in rows if r[1] == day)
        expected += na * nb * (sz**2).sum() / sz.sum() ** 2
    assert twin["exp_shared_t"] == pytest.approx(expected)
    from scipy import stats

    assert twin["p_coentry_poisson"] == pytest.approx(stats.poisson.sf(7, expected))
    # the test that counts is conditional on one account's own events: each of the other's
    # entries on a day lands in one of them with the share of that day's field mass they
    # hold (binomial per day, summed), the larger p of the two directions
    def cond(x: int, y: int) -> float:
        dist = np.array([1.0])
        for day in {r[1] for r in rows}:
            sz = np.array([r[2] for r in rows if r[1] == day], dtype=float)
            mine = np.array([r[x] for r in rows if r[1] == day], dtype=bool)
            n = sum(r[y] for r in rows if r[1] == day)
            if mine.any() and n:
                dist = np.convolve(dist, stats.binom.pmf(np.arange(n + 1), n, sz[mine].sum() / sz.sum()))
        return float(dist[8:].sum())

    assert twin["p_coentry"] == pytest.approx(max(cond(3, 4), cond(4, 3)))
    house = _pair(use, "u03", "u04")
    assert house["concurrency"] == pytest.approx(1.0) and house["handovers"] == 0


def test_untested_one_bh_and_fisher_as_the_identity_detectors_use_them():
    """The identity detectors call detectors.stats' one BH and one Fisher with untested = 1: a test not made
    counts as p = 1, and a 2-D array (a row per candidate) combines like one array per test."""
    p = np.array([0.01, 0.04, np.nan, 0.5])
    q = stats_mod.bh_qvalues(p, untested=1.0)
    assert q[2] == 1.0 and q[0] == pytest.approx(0.03)
    P = np.array([[0.01, 0.01], [np.nan, np.nan]])
    f = stats_mod.fisher_combine(P, untested=1.0)
    assert f[1] == 1.0 and f[0] < 0.01
    assert np.array_equal(f, stats_mod.fisher_combine(P[:, 0], P[:, 1], untested=1.0))


def test_device_used_by_two_accounts_at_once(con):
    """One tablet with both accounts online on it for 50 minutes: device_overlap_s; a laptop
    taken in turns (u01/u02) and housemates online at once on their own machines (u03/u04)
    have none."""
    links = idf.identity_links(con)
    use = idf.usage_patterns(con, links.select("a", "b"))
    assert _pair(use, "u00", "u09")["device_overlap_s"] == pytest.approx(50 * 60)
    assert _pair(use, "u01", "u02")["device_overlap_s"] == 0
    house = _pair(use, "u03", "u04")
    assert house["device_overlap_s"] == 0 and house["overlap_s"] == pytest.approx(400 * 60)


def test_likeness_null_does_not_depend_on_row_order(con):
    """The fingerprints come from a GROUP BY without order; the same seed must draw the same
    null pairs whatever order the rows arrive in (it did not: p-values moved run to run)."""
    fp = idf.style_fingerprints(con)
    links = idf.identity_links(con).select("a", "b")
    one = idf.likeness(fp, links, min_hands=20, null_pairs=500, random_state=0)
    other = idf.likeness(fp.reverse(), links, min_hands=20, null_pairs=500, random_state=0)
    assert one["p_style"].to_list() == other["p_style"].to_list()
    assert one["p_timing"].to_list() == other["p_timing"].to_list()


def test_conditional_coentry_p_is_calibrated_and_sharp():
    """Under independence (each account enters distinct events, drawn in proportion to
    their field sizes, without replacement) the conditional co-entry p rejects at no
    more than the nominal level; two accounts with 7 entries each, all shared, where
    each entry had a 0.566 chance of landing in the other's events, get p 0.566^7."""
    import polars as pl

    from detectors.features.identity.coentry import _conditional_coentry_p

    rng = np.random.default_rng(2)
    sizes = rng.integers(10, 120, 16).astype(float)
    w = sizes / sizes.sum()
    rows, ks = [], []
    for i in range(3000):
        na, nb = int(rng.integers(2, 9)), int(rng.integers(2, 9))
        A = rng.choice(16, na, replace=False, p=w)
        B = rng.choice(16, nb, replace=False, p=w)
        ks.append(len(set(A) & set(B)))
        rows.append({"a": f"a{i}", "b": f"b{i}", "f": "d", "n_a": na, "n_b": nb,
                     "share_a": float(w[A].sum()), "share_b": float(w[B].sum())})
    cells = pl.DataFrame(rows)
    p = _conditional_coentry_p(cells.select("a", "b"), np.array(ks), cells)
    for alpha in (0.01, 0.05, 0.2):
        assert float((p <= alpha).mean()) <= alpha * 1.1 + 0.002, alpha
    one = pl.DataFrame([{"a": "x", "b": "y", "f": "d", "n_a": 7, "n_b": 7, "share_a": 0.566, "share_b": 0.566}])
    assert _conditional_coentry_p(one.select("a", "b"), np.array([7]), one)[0] == pytest.approx(0.566 ** 7)
    none = pl.DataFrame([{"a": "x", "b": "z"}])
    assert np.isnan(_conditional_coentry_p(none, np.array([0]), one.filter(pl.col("b") == "z")))[0]


def _pool_world(pools: tuple[str, ...]) -> World:
    """Ring-fenced markets: the players of each pool only ever enter that pool's events, on the same days."""
    w = World(seed=5)
    rng = np.random.default_rng(8)
    for pool in pools:
        names = [f"{pool}{i:02d}" for i in range(16)]
        for n in names:
            w.account(n)
        for t in range(6):
            players = [p for p in rng.choice(names[2:], 7, replace=False).tolist()]
            if t < 4:
                players += names[:2]  # the pair's 4 shared events
            w.tournament(f"{pool}{t}", players, at(60 * t), n_hands=6)
    return w


def test_co_entry_null_stays_inside_each_pool_of_players():
    # two pools that never share a player: each is a pool of its own, and a pair's co-entry
    # test in one must not count the other pool's events as chances the pair missed
    one, two = _pool_world(("a",)).build(), _pool_world(("a", "b")).build()
    try:
        pools = idf.entry_pools(two)
        assert pools["pool"].n_unique() == 2 and pools.height == 12
        assert pools.filter(pl.col("tournament_id").str.starts_with("a"))["pool"].n_unique() == 1
        pair = pl.DataFrame({"a": ["a00"], "b": ["a01"]})
        alone, beside = _pair(idf.usage_patterns(one, pair), "a00", "a01"), _pair(idf.usage_patterns(two, pair), "a00", "a01")
        assert beside["n_shared_t"] == alone["n_shared_t"] == 4
        assert beside["exp_shared_t"] == pytest.approx(alone["exp_shared_t"])
        assert beside["p_coentry"] == pytest.approx(alone["p_coentry"])
        assert alone["p_coentry"] > 1e-3  # 4 shared of 4 and 4 entries in 6 events of 9 each: not rare
    finally:
        one.close()
        two.close()


HUNTERS, TOGETHER = ("h1", "h2"), ("g1", "g2")


def _taste_world() -> World:
    """Twenty events, every other one a knockout; h1 and h2 are honest bounty hunters who enter every
    knockout (and one freezeout each, not the same); g1 and g2 enter the same eight events, four
    knockouts and four freezeouts; everyone else enters at random."""
    w = World(seed=7)
    names = [f"x{i:02d}" for i in range(40)]
    for n in names + list(HUNTERS + TOGETHER):
        w.account(n)
    rng = np.random.default_rng(4)
    for t in range(20):
        players = rng.choice(names, int(rng.integers(12, 20)), replace=False).tolist()
        if t % 2 == 0 or t == 1:
            players.append("h1")
        if t % 2 == 0 or t == 3:
            players.append("h2")
        if t % 4 in (0, 1) and t < 16:
            players += list(TOGETHER)
        w.tournament(str(700 + t), players, at(45 * t), n_hands=40, bounty_kind="knockout" if t % 2 == 0 else "none")
    return w


def _taste_reference(con, a: str, b: str, pseudo: float | None) -> tuple[float, float, float]:
    """(taste_a, taste_b, p_coentry) of the taste-weighted configuration model, computed plainly: per day,
    field sizes, knockout flags; each account's knockout odds against the null's share, shrunk by
    ``pseudo`` entries; each of one account's entries lands in the other's events with the share of the
    day's taste-weighted mass they hold; the larger p of the two directions."""
    from scipy import stats

    rows = con.execute(
        "SELECT h.tournament_id, min(h.started_at)::DATE, count(DISTINCT s.player), any_value(t.bounty_kind) <> 'none', "
        "bool_or(s.player = ?), bool_or(s.player = ?) "
        "FROM seats s JOIN hands h USING (hand_id) JOIN tournaments t USING (tournament_id) GROUP BY 1",
        [a, b]).fetchall()
    days = sorted({r[1] for r in rows})

    def taste(x: int) -> float:
        if pseudo is None:
            return 1.0
        ko = n = rho_sum = 0.0
        for d in days:
            sz = np.array([r[2] for r in rows if r[1] == d], float)
            isko = np.array([r[3] for r in rows if r[1] == d], bool)
            mine = np.array([r[x] for r in rows if r[1] == d], bool)
            if isko.any() and (~isko).any():
                rho = sz[isko].sum() / sz.sum()
                ko, n, rho_sum = ko + (mine & isko).sum(), n + mine.sum(), rho_sum + mine.sum() * rho
        rho = rho_sum / n
        return ((ko + pseudo * rho) / (n - ko + pseudo * (1 - rho))) / (rho / (1 - rho))

    ta, tb = taste(4), taste(5)
    k = sum(r[4] and r[5] for r in rows)

    def cond(x: int, y: int, t_other: float) -> float:
        dist = np.array([1.0])
        for d in days:
            sz = np.array([r[2] for r in rows if r[1] == d], float)
            wt = sz * np.where([r[3] for r in rows if r[1] == d], t_other, 1.0)
            mine = np.array([r[x] for r in rows if r[1] == d], bool)
            n = sum(r[y] for r in rows if r[1] == d)
            if mine.any() and n:
                dist = np.convolve(dist, stats.binom.pmf(np.arange(n + 1), n, wt[mine].sum() / wt.sum()))
        return float(dist[k:].sum())

    return ta, tb, max(cond(4, 5, tb), cond(5, 4, ta))


def test_co_entry_null_knows_a_taste_for_knockouts():
    """Two honest bounty hunters meet in every knockout: the plain configuration model reads their
    ten shared events as an agreement (p <= 0.05); the taste-weighted one expects most of them (each
    hunter's knockout odds against the null's are read from their own entries) and does not, while a
    pair that enters the same eight events across both kinds keeps its small p. Exact against a plain
    re-computation of the model, with and without the taste."""
    con = _taste_world().build()
    try:
        pairs = pl.DataFrame({"a": [HUNTERS[0], TOGETHER[0]], "b": [HUNTERS[1], TOGETHER[1]]})
        plain = idf.co_entries(con, pairs, taste_pseudo=None)
        taste = idf.co_entries(con, pairs)
        hp, ht = _pair(plain, *HUNTERS), _pair(taste, *HUNTERS)
        gp, gt = _pair(plain, *TOGETHER), _pair(taste, *TOGETHER)
        assert hp["n_shared_t"] == ht["n_shared_t"] == 10 and gt["n_shared_t"] == 8
        assert hp["taste_a"] == hp["taste_b"] == 1.0
        for row, a, b, pseudo in ((hp, *HUNTERS, None), (ht, *HUNTERS, idf.KNOCKOUT_PSEUDO),
                                  (gp, *TOGETHER, None), (gt, *TOGETHER, idf.KNOCKOUT_PSEUDO)):
            ta, tb, p = _taste_reference(con, a, b, pseudo)
            assert row["taste_a"] == pytest.approx(ta) and row["taste_b"] == pytest.approx(tb)
            assert row["p_coentry"] == pytest.approx(p)
        assert ht["taste_a"] > 2 and ht["taste_b"] > 2 and 0.7 < gt["taste_a"] < 1.4 and 0.7 < gt["taste_b"] < 1.4
        assert hp["p_coentry"] <= 0.05 < 0.2 < ht["p_coentry"]
        assert gt["p_coentry"] <= 0.01 and gp["p_coentry"] <= 0.01
        assert ht["exp_shared_t"] > hp["exp_shared_t"]
    finally:
        con.close()
