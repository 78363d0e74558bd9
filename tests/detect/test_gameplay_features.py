"""The card values behind the gameplay detectors: exact where the method says exact, unbiased elsewhere.

``card_values`` values hands as additive states (``datasets.cards.hand_state``);
these tests hold it to the plain reference (``datasets.equity.equity``, which
enumerates every run-out on the flop, turn and river) and hold the SQL that
turns card texts into codes to ``CARD_INDEX``.
"""

from __future__ import annotations

from itertools import combinations

import duckdb
import numpy as np
import polars as pl
import pytest

from datasets import cards as C
from datasets.equity import equity
from detectors.features import gameplay as gp


def _deals(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n random deals: player's two cards, opponent's two, five board cards (all distinct)."""
    d = np.argsort(np.random.default_rng(seed).random((n, 52)), axis=1)[:, :9].astype(np.int64)
    return d[:, :2], d[:, 2:4], d[:, 4:]


def test_hand_states_add_up_and_value_as_evaluate():
    hole, opp, board = _deals(400, 1)
    for L in (3, 4, 5):
        hk, hb = C.hand_state(hole)
        bk, bb = C.hand_state(np.where(np.arange(5) < L, board, -1))
        whole = np.concatenate([hole, board[:, :L]], axis=1)
        k, b = C.hand_state(whole)
        assert (hk + bk == k).all() and (hb + bb == b).all()
        assert C.evaluate_state(k, b).tolist() == [C.evaluate(r) for r in whole.tolist()]


@pytest.mark.parametrize("L", [5, 4])
def test_equity_exact_on_the_river_and_turn(L):
    hole, opp, board = _deals(300, 2 + L)
    _, eq = gp.card_values(hole, opp, board, np.full(len(hole), L), samples=16, random_state=0)
    ref = [equity([h, o], b[:L])[0] for h, o, b in zip(hole.tolist(), opp.tolist(), board.tolist())]
    assert eq == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("L", [3, 0])
def test_equity_monte_carlo_is_unbiased_on_the_flop_and_preflop(L):
    hole, opp, board = _deals(600, 10 + L)
    _, eq = gp.card_values(hole, opp, board, np.full(len(hole), L), samples=16, random_state=3)
    rng = np.random.default_rng(0)
    ref = np.array([equity([h, o], b[:L], rng, n=1500)[0] for h, o, b in zip(hole.tolist(), opp.tolist(), board.tolist())])
    err = eq - ref
    assert abs(err.mean()) < 0.015  # no bias: the mean error of 600 rows (sd about 0.005)
    assert np.abs(err).mean() < 0.12  # 16 run-outs: sd about 0.1 a row


def test_river_strength_estimates_the_share_of_holdings_beaten():
    hole, _, board = _deals(200, 4)
    s, eq = gp.card_values(hole, np.full_like(hole, -1), board, np.full(len(hole), 5), samples=16, random_state=5)
    assert np.isnan(eq).all()  # opponent unknown: no equity
    exact = []
    for h, b in zip(hole.tolist(), board.tolist()):
        me = C.evaluate(h + b)
        rest = [c for c in range(52) if c not in h and c not in b]
        vals = [C.evaluate([x, y] + b) for x, y in combinations(rest, 2)]
        exact.append(np.mean([1.0 if me > v else 0.5 if me == v else 0.0 for v in vals]))
    err = s - np.array(exact)
    assert abs(err.mean()) < 0.03 and np.abs(err).mean() < 0.12


def test_card_values_are_seeded_and_unknown_cards_stay_nan():
    hole, opp, board = _deals(500, 6)
    bl = np.random.default_rng(1).choice([0, 3, 4, 5], size=len(hole))
    opp[:50] = -1
    hole[450:, 1] = -1
    a = gp.card_values(hole, opp, board, bl, samples=16, random_state=7)
    b = gp.card_values(hole, opp, board, bl, samples=16, random_state=7)
    for x, y in zip(a, b):
        assert np.array_equal(x, y, equal_nan=True)
    s, eq = a
    assert np.isnan(s[450:]).all() and np.isnan(eq[450:]).all() and np.isnan(eq[:50]).all()
    assert not np.isnan(s[:450]).any() and not np.isnan(eq[50:450]).any()
    assert ((s[:450] >= 0) & (s[:450] <= 1)).all() and ((eq[50:450] >= 0) & (eq[50:450] <= 1)).all()


def test_sql_card_codes_match_card_index():
    con = duckdb.connect(":memory:")
    texts = list(gp.CARD_INDEX) + ["10h", "Xx", "", "hA", "ah", "A", "Ahh"]
    got = con.execute(f"SELECT {gp.cards._card_codes_sql('$cards')}", {"cards": texts}).fetchall()[0][0]
    assert got == [gp.CARD_INDEX.get(t, -1) for t in texts]


def test_decisions_of_and_tournaments_of_equal_the_plain_filters():
    dec = pl.DataFrame({
        "hand_id": ["h1", "h1", "h2", "h3", "h3", "h4"],
        "player": ["a", "b", "a", "c", "a", "b"],
        "tournament_id": ["t1", "t1", None, "t2", "t2", "t3"],
        "x": [1, 2, 3, 4, 5, 6],
    })
    for players in (["a"], ["b", "c"], ["zz"], ["c", "zz", "a"]):
        assert gp.decisions_of(dec, players).equals(dec.filter(pl.col("player").is_in(players)))
    assert gp.tournaments_of(dec, ["h1", "h2", "h3", "h9"]) == ["t1", "t2"]
    assert gp.tournaments_of(dec, []) == [] and gp.tournaments_of(dec, ["h2"]) == []
    other = dec.with_columns(pl.col("player").reverse())  # a new frame gets its own index
    assert gp.decisions_of(other, ["a"])["x"].to_list() == [2, 4, 6]


def test_decisions_read_in_hand_id_ranges_equal_one_query(planted_world):
    con = planted_world.con
    whole = gp.hu_decisions(con)
    assert len(whole) > 1000
    parts = gp.hu_decisions(con, hands_per_query=700)  # 5,000 hands in 8 ranges
    assert parts.equals(whole)
    # the price cell of a call: -1 with nothing to call, else to call / (pot + to call) against 0.2, 0.3, 0.4
    price = whole["to_call"] / (whole["pot_before"] + whole["to_call"])
    want = [-1 if tc <= 0 else sum(x > t for t in (0.2, 0.3, 0.4)) for tc, x in zip(whole["to_call"], price)]
    assert whole["pbin"].to_list() == want and len(set(want) - {-1}) >= 2


def test_preflop_decisions_read_in_hand_id_ranges_equal_one_query(planted_world):
    """by_hand_ranges on chip dumping's preflop decisions: the same rows as the query made whole."""
    from detectors.chip_dumping.presence import PRESENCE_SQL

    con = planted_world.con
    whole = gp.by_hand_ranges(con, PRESENCE_SQL, hands_per_query=10**9)
    parts = gp.by_hand_ranges(con, PRESENCE_SQL, hands_per_query=700)
    assert len(whole) > 1000 and parts.schema == whole.schema
    assert parts.sort("hand_id", "seq").equals(whole.sort("hand_id", "seq"))


def test_with_bet_faced_counts_the_blinds_as_nobodys_bet():
    """Preflop, chips to call before the first raise are the blinds (an open or a limp answers nobody's bet);
    after the first raise and on every later street, chips to call are someone's bet. The last preflop raiser
    is kept; a hand nobody raised has none."""
    from detectors.features.gameplay import with_bet_faced

    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE actions (hand_id VARCHAR, seq INTEGER, street VARCHAR, player VARCHAR, action VARCHAR)")
    con.executemany("INSERT INTO actions VALUES (?, ?, ?, ?, ?)", [
        ("h1", 0, "preflop", "sb", "post_sb"), ("h1", 1, "preflop", "bb", "post_bb"),
        ("h1", 2, "preflop", "utg", "call"),   # limps: faces only the big blind
        ("h1", 3, "preflop", "btn", "raise"),  # opens: faces only the blinds and a limp
        ("h1", 4, "preflop", "sb", "fold"),    # faces btn's raise
        ("h1", 5, "preflop", "bb", "raise"),   # faces btn's raise (3-bet)
        ("h1", 6, "preflop", "btn", "call"),   # faces bb's 3-bet
        ("h1", 7, "flop", "bb", "bet"), ("h1", 8, "flop", "btn", "call"),
        ("h2", 0, "preflop", "sb", "post_sb"), ("h2", 1, "preflop", "bb", "post_bb"),
        ("h2", 2, "preflop", "sb", "call"),    # completes: nobody's bet
        ("h2", 3, "preflop", "bb", "check"), ("h2", 4, "flop", "sb", "bet"), ("h2", 5, "flop", "bb", "fold"),
    ])
    dec = pl.DataFrame({
        "hand_id": ["h1"] * 5 + ["h2"] * 2,
        "seq": [2, 3, 4, 5, 8, 2, 5],
        "player": ["utg", "btn", "sb", "bb", "btn", "sb", "bb"],
        "facing": [True, True, True, True, True, True, True],
        "preflop": [True, True, True, True, False, True, False],
    })
    out = with_bet_faced(con, dec)
    assert out.columns[: len(dec.columns)] == dec.columns and out.height == dec.height
    assert out["vs_bet"].to_list() == [False, False, True, True, True, False, True]
    assert out["preflop_aggressor"].to_list() == ["bb"] * 5 + [None] * 2
    # a decision with nothing to call never faces a bet
    assert not with_bet_faced(con, dec.with_columns(facing=pl.lit(False)))["vs_bet"].any()


def test_integer_keys_round_trip_and_sort_as_the_names():
    """name_codes/encode: every value comes back from its key, rows keep their order, unknown values get null,
    and ordered keys compare and sort as the names do (the presence test's SQL joins and groups on them)."""
    rng = np.random.default_rng(3)
    names = np.array(["b#1", "a#10", "a#2", "Zed", "zed", "é", "", "a"])
    df = pl.DataFrame({"player": names[rng.integers(0, len(names), 500)],
                       "partner": names[rng.integers(0, len(names), 500)], "i": np.arange(500)})
    codes = gp.name_codes(df["player"], df["partner"])
    keyed = gp.encode(df, ["player", "partner"], codes)
    assert keyed.columns == df.columns and keyed["i"].to_list() == list(range(500))
    assert keyed.schema["player"] == pl.UInt32
    assert codes.gather(keyed["player"]).to_list() == df["player"].to_list()
    assert codes.gather(keyed["partner"]).to_list() == df["partner"].to_list()
    assert ((keyed["player"] < keyed["partner"]) == (df["player"] < df["partner"])).all()
    assert keyed.sort("player", "partner", "i")["i"].to_list() == df.sort("player", "partner", "i")["i"].to_list()
    unknown = gp.encode(pl.DataFrame({"player": ["a", "nobody"]}), ["player"], codes)
    assert unknown["player"].to_list()[1] is None and codes[unknown["player"][0]] == "a"
    # join keys only: any order, still a round trip
    loose = gp.name_codes(df["player"], ordered=False)
    assert loose.gather(gp.encode(df, ["player"], loose)["player"]).to_list() == df["player"].to_list()


def _warehouse(path=None) -> duckdb.DuckDBPyConnection:
    """The tables a store's identity reads, with two hands (the rest of the schema plays no part)."""
    con = duckdb.connect(str(path) if path else ":memory:")
    con.execute("CREATE TABLE hands (hand_id VARCHAR, content_hash VARCHAR); CREATE TABLE actions (hand_id VARCHAR); "
                "CREATE TABLE hole_cards (hand_id VARCHAR)")
    con.execute("INSERT INTO hands VALUES ('h1', 'a'), ('h2', 'b'); INSERT INTO actions VALUES ('h1'), ('h2')")
    return con


def test_feature_store_is_one_warehouse_state(tmp_path):
    """The store is keyed on the warehouse and its content, not on row counts: the same counts with other
    content, or another warehouse in memory with the very same rows, never reuse a store's features."""
    con = _warehouse(tmp_path / "w.duckdb")
    store = gp.store_for(con)
    assert gp.store_for(con) is store
    con2 = duckdb.connect(str(tmp_path / "w.duckdb"))
    assert gp.store_for(con2) is gp.store_for(con)  # two connections to one file share it
    con2.close()
    con.execute("UPDATE hands SET content_hash = 'c' WHERE hand_id = 'h2'")  # same counts, same last hand
    assert not gp.store_for(con).serves(con, store.identity) and gp.store_for(con) is not store
    mem_a, mem_b = _warehouse(), _warehouse()
    a = gp.store_for(mem_a)
    assert gp.store_for(mem_b) is not a  # identical rows, another database
    gp.release(mem_b)
    assert gp.store_for(mem_b) is not None
    con.close()


def test_chip_flow_sums_in_one_order_whatever_the_threads():
    """A pair's flow is a float sum over many hands: DuckDB's threads hand the rows over in another order from
    run to run, and an unordered sum then differs in its last bits (a 9.5 bb flow read 9 in one run, 10 in the
    next). Many hands, few pairs, four threads: the unordered sum gave five different answers in five runs."""
    con = duckdb.connect()
    con.sql("SET threads = 4")
    con.sql("""CREATE TABLE hands AS SELECT 'h' || lpad(i::VARCHAR, 7, '0') AS hand_id, 2 AS big_blind
               FROM range(200000) t(i)""")
    con.sql("""CREATE TABLE seats AS
               SELECT hand_id, p AS player, TRUE AS dealt_in,
                      (CASE WHEN p = 'a' THEN -1 ELSE 1 END) * (1 + (hash(hand_id) % 97)::INTEGER) / 7.0 AS net
               FROM hands, (VALUES ('a'), ('b')) v(p)""")
    runs = {tuple(gp.chip_flow(con).sort("player", "opponent")["flow_bb"].to_list()) for _ in range(4)}
    assert len(runs) == 1
