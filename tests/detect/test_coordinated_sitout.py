"""CoordinatedSitoutDetector on planted events: a trio that sits out together
near the bubble in five events is found with its tournaments and times;
scheduled breaks, a disconnect wave and a player who sits out a lot are not."""

from __future__ import annotations

import numpy as np
import pytest
from test_identity_features_world import World, at

from detectors import get_detector
from detectors.coordinated_sitout import CoordinatedSitoutDetector

TRIO = ["c1", "c2", "c3"]
PLANTED = ["600", "601", "603", "604", "606"]


def honest_sitouts(rng: np.random.Generator, players: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Honest, independent sit-outs of one event: about 0.6 per player, each a few rounds from round 2 to 70."""
    so: dict[str, list[tuple[int, int]]] = {}
    for p in players:
        if rng.random() < 0.6:
            r0 = int(rng.integers(2, 70))
            so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
    return so


@pytest.fixture(scope="module")
def world():
    w = World(seed=41)
    honest = [f"n{i:02d}" for i in range(45)]
    for n in honest + TRIO:
        w.account(n)
    rng = np.random.default_rng(9)
    for t in range(8):
        tid = str(600 + t)
        players = rng.choice(honest, 24, replace=False).tolist() + TRIO
        so = honest_sitouts(rng, players)
        if "n00" in players:  # a player who sits out all the time
            so["n00"] = [(r, r + 1) for r in range(3, 75, 6)]
        for c in TRIO:
            so[c] = []
            if tid in PLANTED:  # the trio near the bubble (few players left, 3 paid)
                so[c] = [(62, 66)]
        for p in players:  # a scheduled break for everyone at round 30
            if not any(a <= 30 < b for a, b in so.get(p, [])):
                so[p] = so.get(p, []) + [(30, 31)]
        # a disconnect wave in event 602: nine players time out at once at round 45
        # (players[15:24] are still in at round 45: the field busts in list order)
        timeouts = {p: [(45, 47)] for p in players[15:24]} if tid == "602" else None
        order = [p for p in players if p not in TRIO] + TRIO
        w.tournament(tid, players, at(90 * t), n_hands=80, every_s=45, sitouts=so,
                     timeouts=timeouts, bust_order=order)
    return w


def test_registered_under_its_kind():
    assert isinstance(get_detector("coordinated_sitout"), CoordinatedSitoutDetector)


def test_trio_found_with_its_events(con):
    sigs = CoordinatedSitoutDetector().detect(con)
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [TRIO]
    s = flagged[0]
    assert s.tournaments == PLANTED
    ev = [e for e in s.evidence if e.name.startswith("sit-outs started together")]
    assert len(ev) == 3  # every pair of the trio
    for e in ev:
        assert e.value == 5 and e.baseline < 1 and e.p_value < 0.01 and e.sql
    times = next(e for e in s.evidence if e.name.startswith("co-occurring"))
    assert all(t in times.text for t in PLANTED)
    # near the bubble: proximity (paid / remaining) counted into the score
    assert "bubble proximity" in ev[0].text and float(ev[0].text.rsplit(" ", 1)[1]) > 0.2
    assert s.hands, "first hands sat out"
    assert "Scheduled breaks" in s.benign


def test_breaks_waves_and_frequent_sitter_not_flagged(con):
    det = CoordinatedSitoutDetector()
    sigs = det.detect(con)
    flagged = {a for s in sigs if s.flagged for a in s.accounts}
    assert flagged == set(TRIO)
    # the breaks and the disconnect wave were recognised as waves and set aside
    waves = det.waves_
    assert set(waves["tournament_id"].unique().to_list()) == {str(600 + t) for t in range(8)}
    timed_out = {r[0] for r in con.execute(
        "SELECT DISTINCT te.player FROM table_events te JOIN hands h USING (hand_id) "
        "WHERE te.event = 'timed_out_disconnected' AND h.tournament_id = '602'").fetchall()}
    assert len(timed_out) >= 5
    assert timed_out <= set(waves.filter(waves["tournament_id"] == "602")["account"].to_list())


def test_seeded(con):
    a = CoordinatedSitoutDetector(random_state=3).detect(con)
    b = CoordinatedSitoutDetector(random_state=3).detect(con)
    assert [(s.accounts, s.p_value) for s in a] == [(s.accounts, s.p_value) for s in b]


def test_hands_only_runs_and_finds_the_trio(world):
    con = world.build(drop_events=True)
    sigs = CoordinatedSitoutDetector().detect(con)
    con.close()
    assert all(any("sit_out/sit_in events" in m for m in s.missing) for s in sigs)
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [TRIO]


def test_coincidence_test_is_calibrated_under_independence():
    """The marked Poisson null (Poisson count of coincidences, uniform closeness): simulated
    independent players reject at no more than the nominal level, and not far below it."""
    from detectors.coordinated_sitout import _marked_poisson_sf

    rng = np.random.default_rng(5)
    for lam in (0.05, 0.3, 1.5):
        k = rng.poisson(lam, 40_000)
        s = np.array([-np.log(rng.uniform(size=n)).sum() for n in k])
        p = _marked_poisson_sf(k, s, np.full(k.size, lam))
        for alpha in (0.01, 0.05):
            rate = float((p <= alpha).mean())
            assert rate <= alpha * 1.15 + 0.002, (lam, alpha, rate)
        # no coincidence at all is no evidence
        assert np.all(p[k == 0] == 1.0)
    assert float((p <= 0.05).mean()) >= 0.04  # lam 1.5: close to nominal, not wasted


def test_every_coincidence_of_an_event_counts():
    """Three sit-outs 1 s apart in one event (windows of 30 s, 0.1 coincidences expected)
    weigh far more than the closest one alone, and more than one coincidence."""
    from detectors.coordinated_sitout import _marked_poisson_sf

    lam, u = 0.1, 1 / 30
    one, three = _marked_poisson_sf(np.array([1, 3]), np.array([-np.log(u), -3 * np.log(u)]), np.array([lam, lam]))
    closest_only = 1 - np.exp(-lam * u)  # the closest of the pairs, as the old test had it
    assert three < 1e-2 * one
    assert three < 1e-2 * closest_only
    assert 0.5 * closest_only < one < 2.5 * closest_only


@pytest.fixture(scope="module")
def late_breaks():
    """Three events of 60 entrants; at round 70 the eight players left take a scheduled
    break together, two regulars (r1, r2) among them every time. Eight players are far
    fewer than a quarter of the entrants, but nearly all of those still in."""
    w = World(seed=43)
    honest = [f"h{i:02d}" for i in range(80)]
    for n in honest + ["r1", "r2"]:
        w.account(n)
    rng = np.random.default_rng(11)
    for t in range(3):
        tid = str(700 + t)
        players = rng.choice(honest, 58, replace=False).tolist() + ["r1", "r2"]
        order = [p for p in players if p not in ("r1", "r2")] + ["r1", "r2"]
        alive_at_70 = order[-8:]
        so = {p: [(70, 71)] for p in alive_at_70}
        w.tournament(tid, players, at(120 * t), n_hands=80, every_s=45, sitouts=so, bust_order=order)
    c = w.build()
    yield c
    c.close()


def test_late_break_of_the_few_left_is_a_wave(late_breaks):
    det = CoordinatedSitoutDetector()
    sigs = det.detect(late_breaks)
    assert not any(s.flagged for s in sigs)
    waves = det.waves_
    assert {"r1", "r2"} <= set(waves["account"].to_list())
    assert set(waves["tournament_id"].unique().to_list()) == {"700", "701", "702"}
    assert waves["field"].max() < 0.25 * 60  # a wave by the players still in, not by the entrants


def _hands_con(rows):
    """A warehouse with just a hands table: (hand_id, tournament_id, table_name, started_at)."""
    import duckdb

    c = duckdb.connect()
    c.execute("CREATE TABLE hands (hand_id VARCHAR, tournament_id VARCHAR, table_name VARCHAR, "
              "started_at TIMESTAMP, is_tournament BOOLEAN)")
    c.executemany("INSERT INTO hands VALUES (?, ?, ?, ?, TRUE)", rows)
    return c


def test_consensus_clock_follows_the_deal_not_the_drifting_tables():
    """Five tables deal round after round; each stamps its hands with its own clock, and
    the clocks drift apart (table k runs 3k s a round slow: 6 minutes apart at round 30),
    while the hand numbers follow the deal. On the consensus clock the hands of one round
    fall within seconds of each other; hands numbered table by table (no deal order) keep
    their stamps. Every table idle for five minutes at round 40 is a break (its first hands
    after it are marked: a break ends for every table at once); one table idle alone (waiting
    for a moved player) is not."""
    import datetime as dt

    from detectors.coordinated_sitout import consensus_clock

    t0 = dt.datetime(2026, 3, 4, 18, 0, 0)
    rows, n = [], 10_000
    for r in range(60):
        for k in range(5):
            n += 1
            if r < 40:  # drifting apart; table 2 waits four minutes at round 20
                s = r * 45 + 3 * k * r + (240 if k == 2 and r >= 20 else 0)
            else:  # the break ends for every table at once, then they drift again
                s = 40 * 45 + 3 * 4 * 39 + 240 + 300 + (r - 40) * (45 + 3 * k)
            rows.append((str(n), "t1", f"t1 {k}", t0 + dt.timedelta(seconds=s)))
    blocked = [(str(50_000 + k * 60 + r), "t2", f"t2 {k}", t0 + dt.timedelta(seconds=r * 45 + 3 * k * r))
               for k in range(5) for r in range(60)]
    c = _hands_con(rows + blocked)
    clk = consensus_clock(c)
    c.close()
    t1 = clk.filter(clk["tournament_id"] == "t1").sort("hand_id")
    secs = (t1["clock"].dt.epoch("ms") / 1000.0).to_numpy().reshape(60, 5)
    stamps = np.array([(r[3] - t0).total_seconds() for r in rows]).reshape(60, 5)
    assert (stamps[30].max() - stamps[30].min()) > 300
    spread = secs.max(axis=1) - secs.min(axis=1)
    # one round spans under a round's time (~50 s), not minutes (the break itself is smoothed over a block)
    assert np.r_[spread[:35], spread[46:]].max() < 50 and spread.max() < 120
    pause = t1["after_pause"].to_numpy().reshape(60, 5)
    assert pause[40].all() and pause.sum() == 5  # the break; not the lone table waiting at round 20
    t2 = clk.filter(clk["tournament_id"] == "t2").sort("hand_id")
    own = np.array([(r[3] - t0).total_seconds() for r in sorted(blocked)])
    assert np.allclose((t2["clock"].dt.epoch("ms") / 1000.0).to_numpy() - (t0 - dt.datetime(1970, 1, 1)).total_seconds(), own)


def test_run_length_mark_and_two_mark_null_are_calibrated():
    """Hands only: the second mark (do two coinciding sit-outs last as many hands?) is a
    valid p-value when the partner's run length is an independent draw from the
    population's; with it, S given k coincidences is Gamma(2k) and the marked Poisson
    test still rejects at no more than the nominal level. A group that sits out five
    hands together scores far below two players of one- and three-hand breaks."""
    from detectors.coordinated_sitout import _length_mark, _marked_poisson_sf

    rng = np.random.default_rng(8)
    pop = rng.choice([1, 1, 1, 2, 2, 3, 4, 5, 6], 5000)
    la, lb = rng.choice(pop, 20_000), rng.choice(pop, 20_000)
    u = _length_mark(la, lb, pop)
    for alpha in (0.05, 0.2, 0.5):
        assert float((u <= alpha).mean()) <= alpha * 1.05
    same5, diff = _length_mark(np.array([5, 1]), np.array([5, 3]), pop)
    assert same5 < 0.2 and diff > 0.5
    assert _length_mark(np.array([0]), np.array([4]), pop)[0] == 1.0  # length unknown: no evidence
    for lam in (0.1, 1.0):
        k = rng.poisson(lam, 40_000)
        s = np.array([-np.log(rng.uniform(size=2 * n)).sum() for n in k])
        p = _marked_poisson_sf(k, s, np.full(k.size, lam), marks=2)
        for alpha in (0.01, 0.05):
            assert float((p <= alpha).mean()) <= alpha * 1.15 + 0.002, (lam, alpha)


def test_a_sit_out_logged_before_a_break_is_not_the_break():
    """d1 and d2 (tables 1 and 2) sit out together at round 20, and again 60 s before a five-minute break at
    round 40, while their own tables were already idle (a table waiting for the others), so each player's
    next hand is the first after the break. That second sit-out was logged long before the break began (the
    last hand dealt ahead of it), so it is a coincidence, not the break: the pair co-occurs twice. The honest
    e1 and e2 sit out 10 and 12 s into the break, as half the room does: those starts are the break and
    are dropped, no pair."""
    import datetime as dt

    import polars as pl

    w = World(seed=5)
    players = [f"h{i:02d}" for i in range(22)] + ["d1", "d2", "e1", "e2"]
    for p in players:
        w.account(p)
    start = at(0)
    # 26 players at 3 tables; round r of the i-th table is dealt at r * 45 + i * 3 s
    order = [p for p in players if p not in ("d1", "d2", "e1", "e2")] + ["d1", "d2", "e1", "e2"]
    w.tournament("900", players, start, n_hands=60, every_s=45, sitouts={"d1": [(20, 23)], "d2": [(20, 23)]},
                 bust_order=order)
    con = w.build()
    tables = dict(con.execute("SELECT DISTINCT s.player, h.table_name FROM seats s JOIN hands h USING (hand_id) "
                              "WHERE s.player IN ('d1', 'd2', 'e1', 'e2')").fetchall())
    assert tables["d1"] != tables["d2"]
    t = lambda r, ti=0: start + dt.timedelta(seconds=r * 45 + ti * 3)  # noqa: E731
    # the break: every hand from round 40 on is dealt five minutes later; d1's and d2's tables idle from round 38
    con.execute("UPDATE hands SET started_at = started_at + INTERVAL 300 SECOND WHERE started_at >= ?", [t(40)])
    con.execute("DELETE FROM hands WHERE table_name IN (?, ?) AND started_at >= ? AND started_at < ?",
                [tables["d1"], tables["d2"], t(38), t(40)])
    con.executemany("INSERT INTO sit_events VALUES (?, ?, 'sit_out', ?, '900')", [
        ("d1", t(38) + dt.timedelta(seconds=20), tables["d1"]), ("d2", t(38) + dt.timedelta(seconds=21), tables["d2"]),
        ("e1", t(39, 2) + dt.timedelta(seconds=10), tables["e1"]), ("e2", t(39, 2) + dt.timedelta(seconds=12), tables["e2"]),
    ])
    det = CoordinatedSitoutDetector()
    det.detect(con)
    near = det.starts_.filter(pl.col("ts") > t(38))
    assert near.filter(pl.col("account").is_in(["e1", "e2"]))["at_break"].to_list() == [True, True]
    assert near.filter(pl.col("account").is_in(["d1", "d2"]))["at_break"].to_list() == [False, False]
    pairs = {(r["a"], r["b"]): r for r in det.scores_.iter_rows(named=True)}
    assert pairs[("d1", "d2")]["n_co"] == 2
    assert ("e1", "e2") not in pairs


def _equal_length_pair_world():
    """q1 and q2, at different tables, sit out together for five hands in two events (950,
    951); 30 honest players step away for one to three hands at random."""
    w = World(seed=12)
    honest = [f"k{i:02d}" for i in range(30)]
    for p in honest + ["q1", "q2"]:
        w.account(p)
    rng = np.random.default_rng(4)
    for t in range(2):
        players = honest + ["q1", "q2"]
        so = {}
        for p in honest:
            if rng.random() < 0.7:
                r0 = int(rng.integers(3, 70))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        r0 = 20 + 25 * t
        so["q1"], so["q2"] = [(r0, r0 + 5)], [(r0, r0 + 5)]
        w.tournament(str(950 + t), players, at(120 * t), n_hands=80, every_s=45, sitouts=so,
                     bust_order=players)
    return w.build()


def test_with_events_coinciding_sit_outs_of_equal_length_count_twice():
    """With platform events, each start is matched to the run of hands it began (nearest run
    start on the consensus clock, so a sit_out logged after the player's first hand sat out
    still finds its run), and the run length is a second mark. Whether a length is known is a
    property of the starts, so in events where the hands show every run of both players the
    two-mark null is used outright (no test chosen after the fact, no Bonferroni x2: the old
    rule reported 2 x min(closeness alone, with length)); the pair's p is the with-length p,
    below half the closeness-only p."""
    import polars as pl

    con = _equal_length_pair_world()
    tables = dict(con.execute("SELECT DISTINCT s.player, h.table_name FROM seats s JOIN hands h USING (hand_id) "
                              "WHERE s.player IN ('q1', 'q2') AND h.tournament_id = '950'").fetchall())
    assert tables["q1"] != tables["q2"]
    # q2's platform clock logs the second sit-out 20 s late, after its first hand sat out
    con.execute("UPDATE sit_events SET ts = ts + INTERVAL 20 SECOND WHERE account = 'q2' AND tournament_id = '951' "
                "AND kind = 'sit_out'")
    det = CoordinatedSitoutDetector()
    det.detect(con)
    q = det.starts_.filter(pl.col("account").is_in(["q1", "q2"]) & (pl.col("source") == "event"))
    assert q.height == 4 and q["run_hands"].to_list() == [5, 5, 5, 5]
    r = det.scores_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2")).row(0, named=True)
    assert r["n_co"] == 2
    assert r["p_with_length"] < r["p_time_only"] / 2
    assert r["n_len_events"] == 2
    assert r["p_value"] == pytest.approx(r["p_with_length"])
    off = CoordinatedSitoutDetector(length_mark=False)
    off.detect(con)
    r_off = off.scores_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2")).row(0, named=True)
    assert r_off["p_value"] == pytest.approx(r["p_time_only"])
    assert r["p_value"] < r_off["p_value"]
    # the honest players' coincidences gain nothing systematic: none is flagged either way
    sigs = det.detect(con)
    assert {a for s in sigs if s.flagged for a in s.accounts} <= {"q1", "q2"}
    # the evidence says both tests and the run lengths of each co-occurrence
    s = next(s for s in sigs if s.accounts == ["q1", "q2"])
    assert "came back together" in s.evidence[0].text
    assert [(c["hands_out_a"], c["hands_out_b"]) for c in s.extra["cooccurrences"]] == [(5, 5), (5, 5)]
    con.close()


def test_an_event_with_a_sit_out_the_hands_do_not_show_is_tested_on_closeness_alone():
    """The two-mark null is exact only where every start of both players has a known length:
    when the hands of event 951 do not show q2 sitting out (the platform logged the sit_out,
    the table did not), a mark of 1 there would count against the pair under two marks, so
    that event is tested on closeness alone and 950 on both marks, combined by the exact law of
    the per-event p-values (:func:`exact_product_sf`); nothing is doubled. (The platform logged no sit_in either: a sit_in would give the
    length in seconds.)"""
    import polars as pl
    from scipy import stats as sps

    con = _equal_length_pair_world()
    con.execute("UPDATE seats SET sitting_out = FALSE WHERE player = 'q2' AND hand_id IN "
                "(SELECT hand_id FROM hands WHERE tournament_id = '951')")
    con.execute("DELETE FROM table_events WHERE player = 'q2' AND hand_id IN "
                "(SELECT hand_id FROM hands WHERE tournament_id = '951')")
    con.execute("DELETE FROM sit_events WHERE account = 'q2' AND tournament_id = '951' AND kind = 'sit_in'")
    det = CoordinatedSitoutDetector()
    det.detect(con)
    pe = {r["tournament_id"]: r for r in det.per_event_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2"))
          .iter_rows(named=True)}
    assert pe["950"]["lengths_known"] and not pe["951"]["lengths_known"]
    assert pe["950"]["p_marked"] == pytest.approx(pe["950"]["p_marked_len"])
    assert pe["951"]["p_marked"] == pytest.approx(pe["951"]["p_marked_time"])
    r = det.scores_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2")).row(0, named=True)
    assert r["n_len_events"] == 1
    from detectors.coordinated_sitout.null import exact_product_sf

    want = exact_product_sf(np.array([pe["950"]["p_marked_len"], pe["951"]["p_marked_time"]]),
                            -np.expm1(-np.array([pe["950"]["lam"], pe["951"]["lam"]])))
    assert r["p_value"] == pytest.approx(want)
    assert r["p_value"] <= sps.chi2.sf(-2 * (np.log(pe["950"]["p_marked_len"]) + np.log(pe["951"]["p_marked_time"])), 4)
    assert r["p_value"] < r["p_time_only"]


def test_a_platform_sit_in_gives_the_length_in_seconds():
    """Where the hands do not show q2's sit-out in event 951 but the platform logged its sit_out and its sit_in,
    the length is known in seconds: the event is tested on both marks, the second one whether the two came back
    together (:func:`_return_mark`: q1 and q2 return within the second, as few of the population's lengths
    would), so the event's p is below its closeness-alone p (before, it was tested on closeness alone)."""
    import polars as pl

    con = _equal_length_pair_world()
    con.execute("UPDATE seats SET sitting_out = FALSE WHERE player = 'q2' AND hand_id IN "
                "(SELECT hand_id FROM hands WHERE tournament_id = '951')")
    con.execute("DELETE FROM table_events WHERE player = 'q2' AND hand_id IN "
                "(SELECT hand_id FROM hands WHERE tournament_id = '951')")
    det = CoordinatedSitoutDetector()
    sig = next(s for s in det.detect(con) if s.accounts == ["q1", "q2"])
    times = next(e.text for e in sig.evidence if e.name.startswith("co-occurring sit-outs"))
    assert "q2" in times and "(back 225 s later)" in times  # the case says how long each was away
    pe = {r["tournament_id"]: r for r in det.per_event_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2"))
          .iter_rows(named=True)}
    assert pe["951"]["lengths_known"]
    assert pe["951"]["p_marked"] == pytest.approx(pe["951"]["p_marked_len"])
    assert pe["951"]["p_marked"] < pe["951"]["p_marked_time"] / 1.5
    co = det.co_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2") & (pl.col("tournament_id") == "951"))
    assert co["dur_a"][0] == pytest.approx(225.0) and co["dur_b"][0] == pytest.approx(225.0)


def test_one_coincidence_is_not_repeated_coordination():
    """Five pairs sit out together in each of four events (strong, so Benjamini-Hochberg
    is generous); o1 and o2 start a sit-out 0.3 s apart once. Their q clears the FDR
    level (both sit out for two hands: a close coincidence of equal runs), but one
    coincidence is not repeated coordination: not flagged (with
    ``min_cooccur=1`` it would be), while the five repeated pairs are."""
    import polars as pl

    w = World(seed=21)
    honest = [f"m{i:02d}" for i in range(6)]
    pairs = [("r1", "r2"), ("s1", "s2"), ("t1", "t2"), ("u1", "u2"), ("v1", "v2")]
    players = honest + [a for p in pairs for a in p] + ["o1", "o2"]
    for p in players:
        w.account(p)
    rng = np.random.default_rng(3)
    for t in range(4):
        so = {}
        for p in honest:
            if rng.random() < 0.25:
                r0 = int(rng.integers(3, 70))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        for i, (a, b) in enumerate(pairs):
            so[a] = so[b] = [(8 + 10 * i + t, 11 + 10 * i + t)]
        if t == 0:
            so["o1"], so["o2"] = [(60, 62)], [(60, 62)]
        w.tournament(str(970 + t), players, at(180 * t), n_hands=160, every_s=45, sitouts=so, bust_order=players)
    con = w.build()
    con.execute("UPDATE sit_events SET ts = (SELECT ts FROM sit_events WHERE account = 'o1' AND kind = 'sit_out') "
                "+ INTERVAL 300 MILLISECOND WHERE account = 'o2' AND kind = 'sit_out'")
    # weights linear in the shared events (with the default cube the five pairs of four events take nearly all
    # of the budget and o1/o2's q no longer clears the level: the rule under test would not be reached)
    det = CoordinatedSitoutDetector(share_power=1.0)
    flagged = sorted(s.accounts for s in det.detect(con) if s.flagged)
    assert flagged == [list(p) for p in pairs]
    o = det.flag(det.scores_).filter((pl.col("a") == "o1") & (pl.col("b") == "o2")).row(0, named=True)
    assert o["n_co"] == 1 and o["q_value"] <= det.alpha and not o["pair_flagged"]
    one = CoordinatedSitoutDetector(min_cooccur=1, share_power=1.0)
    assert ["o1", "o2"] in [s.accounts for s in one.detect(con) if s.flagged]
    con.close()


LONE_SUBTLE, LONE_LOOK = ["q1", "q2"], ["l1", "l2"]


def _lone_world() -> World:
    """Sixteen events; q1/q2 enter the same eight (every other one) and sit out together once,
    in the first; l1/l2 enter like regulars and also sit out together once, in the first."""
    w = World(seed=23)
    honest = [f"k{i:02d}" for i in range(80)]
    subtle, look = LONE_SUBTLE, LONE_LOOK
    for p in honest + subtle + look:
        w.account(p)
    rng = np.random.default_rng(17)
    for t in range(16):
        tid = str(500 + t)
        # the look-alikes enter like regulars (about one event in three each), both in the first;
        # the subtle pair enters every other event, always together
        extra = [p for p in look if t == 0 or rng.random() < 0.33]
        mine = subtle if t % 2 == 0 else []
        players = rng.choice(honest, 20, replace=False).tolist() + mine + extra
        so: dict[str, list[tuple[int, int]]] = {}
        for p in players:
            if p not in subtle + look and rng.random() < 0.4:
                r0 = int(rng.integers(2, 60))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        if t == 0:
            so["q1"] = so["q2"] = [(50, 54)]
            so["l1"] = so["l2"] = [(20, 24)]
        order = [p for p in players if p not in subtle + look] + extra + mine
        w.tournament(tid, players, at(120 * t), n_hands=70, every_s=45, sitouts=so, bust_order=order)
    return w


def test_one_coincidence_corroborated_by_co_entry_is_flagged_its_look_alike_is_not():
    """A subtle pair (q1, q2) sits out together once only, but enters the same eight of
    sixteen events: the lone coincidence is corroborated by co-entry far beyond the
    configuration model and flagged. Its honest look-alike (l1, l2) sits out together
    once just as closely and for as many hands, but the two meet in events no more than
    any two regulars do: one coincidence still, not flagged."""
    import polars as pl

    subtle = LONE_SUBTLE
    w = _lone_world()
    con = w.build()
    det = CoordinatedSitoutDetector()
    sigs = det.detect(con)
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [subtle]
    P = det.scores_
    q = P.filter((pl.col("a") == "q1") & (pl.col("b") == "q2")).row(0, named=True)
    lk = P.filter((pl.col("a") == "l1") & (pl.col("b") == "l2")).row(0, named=True)
    # both sat out together exactly once, each coincidence unusual on its own ...
    assert q["n_co"] == lk["n_co"] == 1
    assert q["p_gap"] <= det.single_p and lk["p_gap"] <= det.single_p
    # ... and neither would pass the pair-level test (the family of every pair)
    assert q["q_value"] > det.alpha
    # what separates them is co-entry: the same eight events against a few
    # (the look-alike's coincidence is even the closer one here: closeness cannot tell them apart)
    assert lk["p_gap"] < q["p_gap"]
    assert q["n_shared_t"] == 8 and q["p_coentry"] <= det.single_coentry_p
    assert lk["p_coentry"] > det.single_coentry_p
    assert q["p_single"] * det.n_single_ <= det.single_alpha
    # the case says so
    ev = flagged[0].evidence[0].text
    assert "sat out together once only: co-entered (8 events entered together" in ev
    con.close()


def test_one_coincidence_corroborated_by_co_entry_hands_only():
    """The same world without platform events: the sit-outs are read from the hands (timed to
    the hand), co-entries from the hands too; the detector says what it lacked and still finds
    the subtle pair, not its look-alike."""
    con = _lone_world().build(drop_events=True)
    sigs = CoordinatedSitoutDetector().detect(con)
    con.close()
    assert sigs and all(any("sit_out/sit_in events" in m for m in s.missing) for s in sigs)
    assert [s.accounts for s in sigs if s.flagged] == [LONE_SUBTLE]


KO_HUNTERS = ["b1", "b2"]


def _hunters_world() -> World:
    """The lone-coincidence world with knockouts: 24 events, every other one a knockout; b1/b2
    are honest bounty hunters who enter every knockout (and one freezeout each, not the same) and
    happen to sit out together once, in the first; q1/q2 enter the same eight of the first sixteen
    events, four of each kind, and sit out together once, in the second."""
    w = World(seed=29)
    honest = [f"k{i:02d}" for i in range(80)]
    for p in honest + LONE_SUBTLE + KO_HUNTERS:
        w.account(p)
    rng = np.random.default_rng(19)
    for t in range(24):
        tid = str(800 + t)
        ko = t % 2 == 0
        mine = LONE_SUBTLE if t % 4 in (0, 1) and t < 16 else []
        hunt = [b for i, b in enumerate(KO_HUNTERS) if ko or t == 1 + 2 * i]
        players = rng.choice(honest, 20, replace=False).tolist() + mine + hunt
        so: dict[str, list[tuple[int, int]]] = {}
        for p in players:
            if p not in LONE_SUBTLE + KO_HUNTERS and rng.random() < 0.4:
                r0 = int(rng.integers(2, 60))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        if t == 0:
            so["b1"] = so["b2"] = [(20, 24)]
        if t == 1:
            so["q1"] = so["q2"] = [(50, 54)]
        order = [p for p in players if p not in LONE_SUBTLE + KO_HUNTERS] + hunt + mine
        w.tournament(tid, players, at(120 * t), n_hands=70, every_s=45, sitouts=so, bust_order=order,
                     bounty_kind="knockout" if ko else "none")
    return w


def test_two_bounty_hunters_sitting_out_together_once_are_not_corroborated():
    """Two honest bounty hunters meet in every knockout: beside their one shared sit-out, the plain
    configuration model reads their twelve shared events as an agreement and the pair is flagged; the
    taste-weighted null (each one's knockout odds read from their own entries) expects most of them,
    and the lone coincidence stays one coincidence. The pair that enters the same events across both
    kinds is corroborated either way."""
    import polars as pl

    con = _hunters_world().build()
    try:
        plain = CoordinatedSitoutDetector(taste_pseudo=None)
        assert sorted(s.accounts for s in plain.detect(con) if s.flagged) == [KO_HUNTERS, LONE_SUBTLE]
        det = CoordinatedSitoutDetector()
        assert [s.accounts for s in det.detect(con) if s.flagged] == [LONE_SUBTLE]
        rows = {r["a"]: r for r in det.scores_.filter(pl.col("n_co") == 1).iter_rows(named=True)}
        before = {r["a"]: r for r in plain.scores_.filter(pl.col("n_co") == 1).iter_rows(named=True)}
        b, q = rows["b1"], rows["q1"]
        assert b["b"] == "b2" and q["b"] == "q2"
        assert b["p_gap"] <= det.single_p and q["p_gap"] <= det.single_p
        assert b["n_shared_t"] == 12 and q["n_shared_t"] == 8
        assert before["b1"]["p_coentry"] <= det.single_coentry_p < b["p_coentry"]
        assert q["p_coentry"] <= 0.01 and q["p_single"] * det.n_single_ <= det.single_alpha
    finally:
        con.close()
