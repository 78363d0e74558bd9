"""Bounty collusion's starting-tables family (detectors/bounty_collusion/seating.py): the pairs started at one
table and the exact tail of that count when each knockout tournament seats its field at random, each direction's
bets after the flop against the own rates, and the family's share of alpha."""

import duckdb
import numpy as np
import pytest
from scipy import stats as st

from detectors.bounty_collusion import BountyCollusionDetector
from detectors.bounty_collusion import seating as bg


def test_the_tail_is_the_binomial_where_every_tournament_has_one_chance():
    for n, k, q in ((5, 3, 0.15), (1, 1, 0.2), (8, 0, 0.1), (4, 4, 0.5)):
        assert bg.poisson_binomial_sf(k, [q] * n) == pytest.approx(st.binom.sf(k - 1, n, q), rel=1e-12)


def test_the_tail_of_unequal_chances_by_enumeration():
    q = [0.1, 0.3, 0.25]
    outcomes = np.array(np.meshgrid(*[[0, 1]] * 3)).reshape(3, -1).T
    prob = np.prod(np.where(outcomes == 1, q, 1 - np.array(q)), axis=1)
    assert bg.poisson_binomial_sf(2, q) == pytest.approx(prob[outcomes.sum(axis=1) >= 2].sum(), rel=1e-12)


def _warehouse() -> duckdb.DuckDBPyConnection:
    """Two knockout tournaments of six entrants at two starting tables of three (a, b start together in both,
    c with a in the first only), a tournament without bounties and one of a single table (never counted)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE tournaments (tournament_id VARCHAR, bounty_kind VARCHAR)")
    con.execute("CREATE TABLE hands (hand_id VARCHAR, tournament_id VARCHAR, table_name VARCHAR, started_at TIMESTAMP)")
    con.execute("CREATE TABLE seats (hand_id VARCHAR, player VARCHAR, dealt_in BOOLEAN)")
    con.execute("CREATE TABLE actions (hand_id VARCHAR, seq INTEGER, street VARCHAR, player VARCHAR, action VARCHAR, "
                "to_call DOUBLE, n_active INTEGER)")
    con.executemany("INSERT INTO tournaments VALUES (?, ?)",
                    [("t1", "knockout"), ("t2", "progressive"), ("t3", "none"), ("t4", "knockout")])
    tables = {"t1": (["a", "b", "c"], ["d", "e", "f"]), "t2": (["a", "b", "d"], ["c", "e", "f"]),
              "t3": (["a", "b", "c"], ["d", "e", "f"]), "t4": (["a", "c", "d", "e", "f", "b"], [])}
    for t, (x, y) in tables.items():
        for tab, players in (("1", x), ("2", y)):
            if not players:
                continue
            h = f"{t}-{tab}"
            con.execute("INSERT INTO hands VALUES (?, ?, ?, TIMESTAMP '2026-01-01 10:00:00')", [h, t, f"{t} {tab}"])
            con.executemany("INSERT INTO seats VALUES (?, ?, true)", [(h, p) for p in players])
            # a later hand at the other table (a move) does not change the starting table
            con.execute("INSERT INTO hands VALUES (?, ?, ?, TIMESTAMP '2026-01-01 11:00:00')", [h + "x", t, f"{t} 9"])
            con.executemany("INSERT INTO seats VALUES (?, ?, true)", [(h + "x", p) for p in players])
    return con


def test_starting_tables_counts_pairs_and_their_tail():
    s = bg.starting_tables(_warehouse())
    row = {(r["player"], r["opponent"]): r for r in s.iter_rows(named=True)}
    q = 2 * 3 * 2 / (6 * 5)  # two tables of three among six: 0.4
    assert (row[("a", "b")]["cs_n"], row[("a", "b")]["cs_k"]) == (2, 2)
    assert row[("a", "b")]["cs_p"] == pytest.approx(q * q)
    assert (row[("a", "c")]["cs_n"], row[("a", "c")]["cs_k"]) == (2, 1)
    assert row[("a", "c")]["cs_p"] == pytest.approx(1 - (1 - q) ** 2)
    assert row[("d", "f")]["cs_k"] == 1 and row[("a", "e")]["cs_k"] == 0 and row[("a", "e")]["cs_p"] == 1.0
    assert s.height == 15  # every pair of six, the tournament without bounties and the one-table one left out


def test_the_smallest_attainable_is_every_tournament_at_one_table():
    s = bg.starting_tables(_warehouse())
    row = {(r["player"], r["opponent"]): r for r in s.iter_rows(named=True)}
    assert row[("a", "e")]["cs_min"] == pytest.approx(0.4 * 0.4) and row[("a", "b")]["cs_p"] == pytest.approx(0.16)


def test_three_families_split_alpha_and_an_empty_one_leaves_its_share():
    """Main, passing and starting tables at alpha x (0.5, 0.25, 0.25); without a starting-tables hypothesis the
    other two keep their ratio (2 : 1); a pair's q is the smallest q / share."""
    det = BountyCollusionDetector()
    nan = np.nan
    p_main = np.array([1e-3, 0.3, nan, nan, nan])
    p_pass = np.array([nan, nan, 1e-4, 0.5, nan])
    p_seat = np.array([nan, nan, nan, nan, 1e-5])
    pmin = np.where(np.isfinite(p_pass), 1e-9, nan)
    qm, qp, q, p, la, lp, qs, ls = det.family_levels(p_main, np.ones(5), p_pass, pmin, p_seat=p_seat)
    assert (la, lp, ls) == pytest.approx((0.025, 0.0125, 0.0125))
    assert q[4] == pytest.approx(1e-5 / 0.25) and p[4] == 1e-5 and qs[4] == pytest.approx(1e-5)
    assert q[2] == pytest.approx(2e-4 / 0.25) and q[0] == pytest.approx(2e-3 / 0.5)
    qm, qp, q, p, la, lp, qs, ls = det.family_levels(p_main, np.ones(5), p_pass, pmin)
    assert (la, lp, ls) == pytest.approx((0.05 * 2 / 3, 0.05 / 3, 0.0)) and np.isnan(q[4])


def test_the_starting_tables_family_under_the_null_flags_at_most_alpha_of_the_time():
    """Random seats (exact tails of random draws) and uniform p-values elsewhere: a run flags anyone at most alpha
    of the time (the union's bound)."""
    rng = np.random.default_rng(5)
    det = BountyCollusionDetector()
    runs, hits = 2000, 0
    for _ in range(runs):
        n = rng.integers(2, 8, size=200)
        k = rng.binomial(n, 0.15)
        ps = np.array([bg.poisson_binomial_sf(int(x), [0.15] * int(m)) if x else 1.0 for x, m in zip(k, n)])
        q = det.family_q(np.r_[rng.uniform(size=20), np.full(200, nan := np.nan)], np.r_[np.ones(20), np.zeros(200)],
                         np.full(220, nan), np.full(220, nan), p_seat=np.r_[np.full(20, nan), ps])[2]
        hits += bool((np.nan_to_num(q, nan=1.0) <= det.alpha).any())
    assert hits / runs <= det.alpha + 3 * np.sqrt(det.alpha / runs)


def test_a_player_view_is_not_tested_for_starting_tables():
    """Hands seen from a hero's seat: who starts at one table is the hero's table, not the site's draw; the family
    is empty and ``missing_`` says why."""
    con = _warehouse()
    con.execute("ALTER TABLE hands ADD COLUMN hero VARCHAR")
    det = BountyCollusionDetector()
    det.missing_ = []
    det._fit_seated(con)
    assert det.missing_ == [] and bg.seated_pairs(con).height == 15
    con.execute("UPDATE hands SET hero = 'a' WHERE hand_id = 't1-1'")
    det.missing_ = []
    det._fit_seated(con)
    assert det.seated_.is_empty() and any("starting-tables" in m for m in det.missing_)
