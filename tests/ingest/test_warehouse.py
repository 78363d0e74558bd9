"""The warehouse loader: idempotence, conflicts, rollback, tournaments, events, comments, snapshot, views."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import polars as pl
import pytest

from pipelines.lib import events as ev
from pipelines.lib import warehouse as wh
from pipelines.lib import warehouse_hands


def _combine(*batches):
    out = wh.Batch()
    for b in batches:
        out.extend(b)
    return out


def test_every_table_and_column_has_a_comment(tmp_warehouse):
    con = wh.connect(tmp_warehouse)
    missing_cols = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main' AND NOT internal "
        "AND comment IS NULL AND table_name IN (SELECT table_name FROM duckdb_tables())"
    ).fetchall()
    missing_tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE comment IS NULL").fetchall()
    missing_views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' AND comment IS NULL").fetchall()
    assert missing_cols == [] and missing_tables == [] and missing_views == []
    assert len(con.execute("SELECT * FROM duckdb_tables()").fetchall()) >= 20


def test_ingesting_twice_adds_nothing_and_counts_duplicates(tmp_warehouse, hand_builder):
    con = wh.connect(tmp_warehouse)
    batch = _combine(hand_builder("1", content_hash="a"), hand_builder("2", content_hash="b"))
    r1 = wh.load(con, batch, run_id="r1")
    assert (r1.hands_stored, r1.duplicates) == (2, 0)
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("hands", "seats", "actions")}
    r2 = wh.load(con, batch, run_id="r2")
    assert (r2.hands_stored, r2.duplicates, r2.quarantined) == (0, 2, 0)
    assert counts == {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("hands", "seats", "actions")}
    assert counts == {"hands": 2, "seats": 4, "actions": 6}


def test_same_id_different_content_is_quarantined_as_conflict(tmp_path, hand_builder):
    src = tmp_path / "b.txt"
    src.write_text("PokerStars Hand #1: Hold'em No Limit ($0.05/$0.10 USD) - 2026/03/04 20:00:00 ET\nTable 'T1' 6-max\n")
    con = wh.connect(tmp_path / "wh.duckdb")
    wh.load(con, hand_builder("1", content_hash="a"), run_id="r1")
    other = hand_builder("1", content_hash="DIFFERENT", table="T9", source_file=str(src), source_line=1)
    r = wh.load(con, other, run_id="r2")
    assert (r.hands_stored, r.duplicates, r.quarantined) == (0, 0, 1)
    assert r.quarantine_reasons == {"conflict": 1}
    row = con.execute("SELECT source_file, position, input_kind, hand_id, reason, raw FROM quarantine").fetchone()
    assert row[:5] == (str(src), 1, "hand", "1", "conflict")
    assert row[5].startswith("PokerStars Hand #1:")
    assert con.execute("SELECT table_name, content_hash FROM hands").fetchall() == [("T1", "a")]
    # re-loading the same conflict does not repeat the quarantine row
    wh.load(con, other, run_id="r3")
    assert con.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 1


def test_a_conflict_does_not_follow_a_link_put_in_place_of_its_source_file(tmp_path, hand_builder):
    """The conflict's raw text is cut from its source file after parsing: a link planted there since (to a file
    outside the landing folder) is not followed, so that file's text never reaches quarantine.raw."""
    outside = tmp_path / "outside.txt"
    outside.write_text("PokerStars Hand #1: SECRET outside the landing folder\nTable 'T9' 6-max\n")
    src = tmp_path / "landing" / "b.txt"
    src.parent.mkdir()
    src.symlink_to(outside)
    con = wh.connect(tmp_path / "wh.duckdb")
    wh.load(con, hand_builder("1", content_hash="a"), run_id="r1")
    r = wh.load(con, hand_builder("1", content_hash="DIFFERENT", table="T9", source_file=str(src), source_line=1),
                run_id="r2")
    assert r.quarantine_reasons == {"conflict": 1}
    assert con.execute("SELECT raw FROM quarantine").fetchone()[0] == ""


def test_conflict_inside_one_batch_keeps_the_first_copy(tmp_path, hand_builder, monkeypatch):
    src = tmp_path / "a.txt"
    src.write_text("PokerStars Hand #7: first copy\nTable 'first'\n\n\nPokerStars Hand #7: second copy\n")
    con = wh.connect(None)
    first = hand_builder("7", content_hash="a", table="first", source_file=str(src))
    second = hand_builder("7", content_hash="b", table="second", source_file=str(src), source_line=5)
    dup = hand_builder("7", content_hash="a", table="first", source_line=80)
    # the first copy's child rows are taken from parsing its own text alone; stand in for the parser here
    seen = []

    def reparse(texts, names):
        seen.append((texts, names))
        return {k: v for k, v in first.tables.items() if k != "hands"}

    monkeypatch.setattr(warehouse_hands, "_reparse_children", reparse)
    r = wh.load(con, _combine(first, second, dup), run_id="r")
    assert seen == [(["PokerStars Hand #7: first copy\nTable 'first'\n"], [str(src)])]
    assert (r.hands_stored, r.duplicates, r.quarantined) == (1, 1, 1)
    assert con.execute("SELECT table_name FROM hands").fetchall() == [("first",)]
    assert con.execute("SELECT count(*) FROM seats").fetchone()[0] == 2
    assert con.execute("SELECT position, reason FROM quarantine").fetchall() == [(5, "conflict")]


def _finish(tournament_id, player, place, hand_id):
    return pl.DataFrame({"tournament_id": [tournament_id], "player": [player], "place": [place],
                         "prize": [None], "hand_id": [hand_id]}, schema_overrides={"prize": pl.Decimal(18, 2)})


def test_reparsed_hands_of_a_run_are_parsed_once_and_keep_the_first_tournament_finish(tmp_path, hand_builder,
                                                                                    monkeypatch):
    """Two batches each hold a hand twice with different content: one parser call for the run, and the
    (tournament, player) finish of the earlier batch's re-parsed hand wins over a later batch's own row."""
    src = tmp_path / "a.txt"
    src.write_text("PokerStars Hand #7: x\n\nPokerStars Hand #8: y\n\nPokerStars Hand #9: z\n")
    calls = []

    def reparse(texts, names):
        calls.append(list(texts))
        seven, eight = hand_builder("7", content_hash="a"), hand_builder("8", content_hash="a")
        return {"seats": pl.concat([seven.tables["seats"], eight.tables["seats"]]),
                "tournament_finishes": pl.concat([_finish("T", "amy", 3, "7"), _finish("T", "bob", 5, "8")])}

    monkeypatch.setattr(warehouse_hands, "_reparse_children", reparse)
    b1 = _combine(hand_builder("7", content_hash="a", source_file=str(src)),
                  hand_builder("7", content_hash="b", source_file=str(src), source_line=3))
    b2 = _combine(hand_builder("8", content_hash="a", source_file=str(src), source_line=3),
                  hand_builder("8", content_hash="b", source_file=str(src), source_line=5),
                  hand_builder("9", content_hash="a", source_file=str(src), source_line=5))
    b2.tables["tournament_finishes"] = pl.concat([_finish("T", "amy", 2, "9"), _finish("T", "cat", 1, "9")])
    con = wh.connect(tmp_path / "wh.duckdb")
    r = wh.load_many(con, [b1, b2], run_id="r")
    assert calls == [["PokerStars Hand #7: x\n", "PokerStars Hand #8: y\n"]]
    assert (r.hands_stored, r.quarantined, r.rows["tournament_finishes"]) == (3, 2, 3)
    assert con.execute("SELECT player, place, hand_id FROM tournament_finishes ORDER BY player").fetchall() == [
        ("amy", 3, "7"), ("bob", 5, "8"), ("cat", 1, "9")]
    assert con.execute("SELECT hand_id, count(*) FROM seats GROUP BY ALL ORDER BY 1").fetchall() == [
        ("7", 2), ("8", 2), ("9", 2)]


def test_a_failure_midway_rolls_the_whole_run_back(tmp_warehouse, hand_builder):
    con = wh.connect(tmp_warehouse)
    wh.load(con, hand_builder("1"), run_id="r1")
    batch = _combine(hand_builder("2"), ev.parse_events_text(
        '{"ts":"2026-03-04T21:00:00Z","type":"transfer","account":"amy","to":"bob","amount":5}\nnot json\n', "e.jsonl"))

    def boom(stage):
        if stage == "events":
            raise RuntimeError("disk on fire")

    before = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in wh.INGEST_TABLES}
    with pytest.raises(RuntimeError, match="disk on fire"):
        wh.load(con, batch, run_id="r2", fail_hook=boom)
    after = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in wh.INGEST_TABLES}
    assert before == after
    assert after["hands"] == 1 and after["transfers"] == 0
    # and the same batch then loads cleanly
    r = wh.load(con, batch, run_id="r3")
    assert (r.hands_stored, r.events_stored, r.quarantined) == (1, 1, 1)


def test_tournaments_merge_first_and_last_hand_times(hand_builder):
    con = wh.connect(None)

    def t(first, last, buy_in):
        return wh.Batch(tables={"tournaments": pl.DataFrame({
            "tournament_id": ["99"], "buy_in": [buy_in], "bounty": [Decimal("0")], "fee": [Decimal("0.10")],
            "currency": ["USD"], "bounty_kind": ["none"], "game": ["holdem"], "limit_type": ["no_limit"],
            "first_hand_at": [dt.datetime.fromisoformat(first)], "last_hand_at": [dt.datetime.fromisoformat(last)],
        }, schema_overrides={"buy_in": pl.Decimal(18, 2), "bounty": pl.Decimal(18, 2), "fee": pl.Decimal(18, 2)})})

    wh.load(con, t("2026-03-04 20:00", "2026-03-04 21:00", None), run_id="a")
    wh.load(con, _combine(t("2026-03-04 19:00", "2026-03-04 20:30", Decimal("1.00")),
                          t("2026-03-04 20:10", "2026-03-04 22:00", Decimal("1.00"))), run_id="b")
    assert con.execute("SELECT first_hand_at, last_hand_at, buy_in FROM tournaments").fetchall() == [
        (dt.datetime(2026, 3, 4, 19), dt.datetime(2026, 3, 4, 22), Decimal("1.00"))]


def test_events_dedupe_and_sessions_pair_across_files_and_order(tmp_warehouse):
    con = wh.connect(tmp_warehouse)
    logout_first = ev.parse_events_text(
        '{"ts":"2026-03-04T23:00:00Z","type":"logout","account":"amy","session":"s1"}\n'
        '{"ts":"2026-03-04T21:00:00Z","type":"sit_out","account":"amy","table":"T1","tournament":null}\n', "a.jsonl")
    login_later = ev.parse_events_text(
        '{"ts":"2026-03-04T20:00:00Z","type":"login","account":"amy","session":"s1","ip":"10.0.0.1","device":"d1"}\n'
        '{"ts":"2026-03-04T20:01:00Z","type":"decision","account":"amy","hand":"5","action":3,"ms":900}\n'
        '{"ts":"2026-03-04T20:02:00Z","type":"mystery","account":"amy","x":1}\n', "b.jsonl")
    r1 = wh.load(con, logout_first, run_id="1")
    assert r1.events_stored == 2
    assert con.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0  # a logout alone is not a session yet
    wh.load(con, login_later, run_id="2")
    assert con.execute("SELECT account, session, ip, device, login_at, logout_at FROM sessions").fetchall() == [
        ("amy", "s1", "10.0.0.1", "d1", dt.datetime(2026, 3, 4, 20), dt.datetime(2026, 3, 4, 23))]
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in wh.EVENT_TABLES}
    r3 = wh.load(con, _combine(logout_first, login_later), run_id="3")
    assert r3.events_stored == 0
    assert counts == {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in wh.EVENT_TABLES}
    assert counts == {"session_events": 2, "sit_events": 1, "registrations": 0, "decisions": 1, "transfers": 0,
                      "other_events": 1}


def test_accounts_upsert_and_count_changes():
    con = wh.connect(None)
    a = ev.parse_accounts_text("account,created_at,country,payment,vip\namy,2026-01-02,DE,,gold\n", "accounts.csv")
    assert wh.load(con, a, run_id="1").accounts_stored == 1
    assert wh.load(con, a, run_id="2").accounts_stored == 0
    b = ev.parse_accounts_text("account,created_at,country,payment,vip\namy,2026-01-02,FR,,gold\n", "accounts.csv")
    assert wh.load(con, b, run_id="3").accounts_stored == 1
    assert con.execute("SELECT country, extra->>'vip' FROM accounts").fetchall() == [("FR", "gold")]


def test_publish_snapshot_is_a_readable_copy(tmp_path, hand_builder):
    live = tmp_path / "live.duckdb"
    con = wh.connect(live)
    wh.load(con, hand_builder("1"), run_id="r")
    snap = wh.publish_snapshot(con, tmp_path / "snap" / "warehouse.duckdb")
    wh.load(con, hand_builder("2"), run_id="r2")
    reader = duckdb.connect(str(snap), read_only=True)
    assert reader.execute("SELECT count(*) FROM hands").fetchone()[0] == 1
    assert reader.execute("SELECT count(*) FROM player_hands").fetchone()[0] == 2
    reader.close()
    wh.publish_snapshot(con, snap)  # replaces the published file
    reader = duckdb.connect(str(snap), read_only=True)
    assert reader.execute("SELECT count(*) FROM hands").fetchone()[0] == 2
    assert not (tmp_path / "snap" / "warehouse.duckdb.tmp").exists()


def test_views_give_vpip_pfr_three_bet_on_a_hand_built_by_hand(hand_builder):
    """UTG raises, CO 3-bets, BTN calls the 3-bet (cold), SB folds, BB folds, UTG calls; flop: UTG folds to CO's bet."""
    con = wh.connect(None)
    seats = [(1, "utg", "100", "3", "0", "UTG"), (2, "co", "100", "3", "7.5", "CO"), (3, "btn", "100", "3", "0", "BTN"),
             (4, "sb", "100", "0.5", "0", "SB"), (5, "bb", "100", "1", "0", "BB")]
    actions = [("preflop", "sb", "post_sb", "0.5"), ("preflop", "bb", "post_bb", "1"),
               ("preflop", "utg", "raise", "1"),   # open raise: PFR, VPIP, no 3-bet
               ("preflop", "co", "raise", "2"),    # 3-bet
               ("preflop", "btn", "call", "3"),    # faced the 3-bet (two raises before): no 3-bet opportunity
               ("preflop", "sb", "fold", "0"),     # faced two raises: no opportunity
               ("preflop", "bb", "fold", "0"),
               ("preflop", "utg", "call", "1"),
               ("flop", "utg", "check", "0"), ("flop", "co", "bet", "4.5"), ("flop", "btn", "fold", "0"),
               ("flop", "utg", "fold", "0")]
    hand = hand_builder("42", big_blind="1", seats=seats, actions=actions, board=["Ah", "7c", "2d"])
    wh.load(con, hand, run_id="r")
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT player, vpip, pfr, three_bet, three_bet_opportunity, saw_flop, went_to_showdown, net_won_bb "
        "FROM player_hands").fetchall()}
    assert rows["utg"] == (True, True, False, False, True, False, -3.0)
    assert rows["co"] == (True, True, True, True, True, False, 4.5)
    assert rows["btn"] == (True, False, False, False, True, False, -3.0)
    assert rows["sb"] == (False, False, False, False, False, False, -0.5)
    assert rows["bb"] == (False, False, False, False, False, False, -1.0)
    stats = dict(con.execute("SELECT player, three_bet_pct FROM player_stats").fetchall())
    assert stats == {"utg": None, "co": 100.0, "btn": None, "sb": None, "bb": None}


def test_views_three_bet_opportunity_and_showdown(hand_builder):
    """BTN opens, SB folds facing one raise (a 3-bet opportunity), BB calls; both check down to showdown."""
    con = wh.connect(None)
    seats = [(1, "btn", "50", "2.5", "5.5", "BTN"), (2, "sb", "50", "0.5", "0", "SB"), (3, "bb", "50", "2.5", "0", "BB")]
    actions = [("preflop", "sb", "post_sb", "0.5"), ("preflop", "bb", "post_bb", "1"),
               ("preflop", "btn", "raise", "2.5"), ("preflop", "sb", "fold", "0"), ("preflop", "bb", "call", "1.5"),
               ("flop", "bb", "check", "0"), ("flop", "btn", "check", "0"),
               ("turn", "bb", "check", "0"), ("turn", "btn", "check", "0"),
               ("river", "bb", "check", "0"), ("river", "btn", "check", "0")]
    wh.load(con, hand_builder("43", big_blind="1", seats=seats, actions=actions,
                              board=["Ah", "7c", "2d", "9s", "Kd"]), run_id="r")
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT player, vpip, pfr, three_bet_opportunity, saw_flop, went_to_showdown, won_at_showdown FROM player_hands"
    ).fetchall()}
    assert rows["btn"] == (True, True, False, True, True, True)
    assert rows["sb"] == (False, False, True, False, False, False)
    assert rows["bb"] == (True, False, True, True, True, False)
    stats = {r[0]: r[1:] for r in con.execute(
        "SELECT player, hands, vpip_pct, pfr_pct, three_bet_pct, wtsd_pct, wsd_pct FROM player_stats").fetchall()}
    assert stats["btn"] == (1, 100.0, 100.0, None, 100.0, 100.0)
    assert stats["bb"] == (1, 100.0, 0.0, 0.0, 100.0, 0.0)


def test_a_decision_repeated_with_other_values_is_a_conflict():
    con = wh.connect(None)
    line = '{"ts":"2026-03-04T20:01:00Z","type":"decision","account":"amy","hand":"5","action":3,"ms":%d}\n'
    wh.load(con, ev.parse_events_text(line % 900, "a.jsonl"), run_id="1")
    r = wh.load(con, ev.parse_events_text(line % 900 + line % 4000 + line % 4000, "b.jsonl"), run_id="2")
    assert (r.events_stored, r.quarantine_reasons) == (0, {"conflict": 2})
    assert con.execute("SELECT ms FROM decisions").fetchall() == [(900,)]
    assert con.execute("SELECT source_file, position, raw FROM quarantine ORDER BY position").fetchall() == [
        ("b.jsonl", 2, (line % 4000).strip()), ("b.jsonl", 3, (line % 4000).strip())]


def test_decisions_keep_one_row_per_key_with_or_without_the_old_primary_key(tmp_path):
    """New warehouses keep (hand_id, seq) unique by the loader; one created with the former primary key loads the same."""
    line = '{"ts":"2026-03-04T20:01:00Z","type":"decision","account":"amy","hand":"5","action":%d,"ms":900}\n'
    old = duckdb.connect(str(tmp_path / "old.duckdb"))
    old.execute("CREATE TABLE decisions (hand_id VARCHAR NOT NULL, seq INTEGER NOT NULL, account VARCHAR NOT NULL, "
                "ms INTEGER NOT NULL, ts TIMESTAMP NOT NULL, PRIMARY KEY (hand_id, seq))")
    old.close()
    for name, has_pk in (("new.duckdb", False), ("old.duckdb", True)):
        con = wh.connect(tmp_path / name)
        assert wh._has_primary_key(con, "decisions") is has_pk
        wh.load(con, ev.parse_events_text(line % 3, "a.jsonl"), run_id="1")
        r = wh.load(con, ev.parse_events_text(line % 3 + line % 4, "b.jsonl"), run_id="2")
        assert r.rows["decisions"] == 1
        assert con.execute("SELECT seq, count(*) FROM decisions GROUP BY seq ORDER BY seq").fetchall() == [(3, 1), (4, 1)]
        con.close()
