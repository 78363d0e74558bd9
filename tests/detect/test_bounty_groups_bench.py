"""benchmarks/bounty_groups.py's starting tables: the pairs started at one table and the exact tail of that count
when each knockout tournament seats its field at random."""

import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
from scipy import stats as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bounty_groups as bg  # noqa: E402  (a script beside the benchmarks, not a package)


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
