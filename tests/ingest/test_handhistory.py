"""Unit tests of the PokerStars parser on small hand texts written for these tests.

Every expected number below was worked out by hand from the hand text.
"""
from __future__ import annotations

import codecs
import datetime as dt
import re
from decimal import Decimal

import duckdb
import polars as pl
import pytest

from pipelines.lib.handhistory import ParsedHands, decode_bytes, parse_files, parse_text
from pipelines.lib.handhistory.parse import QUARANTINE_SCHEMA, TABLE_COLUMNS

D = Decimal

CASH = """PokerStars Hand #1001:  Hold'em No Limit ($0.50/$1.00 USD) - 2024/01/15 20:30:00 CET [2024/01/15 14:30:00 ET]
Table 'Alpha II' 6-max Seat #1 is the button
Seat 1: amy ($100 in chips)
Seat 2: bob ($50 in chips)
Seat 3: cat ($80 in chips)
Seat 4: dan ($20 in chips) is sitting out
bob: posts small blind $0.50
cat: posts big blind $1
*** HOLE CARDS ***
Dealt to amy [Ah Kd]
amy: raises $2 to $3
bob said, "cat: raises $99 to $100"
bob: calls $2.50
cat: folds
*** FLOP *** [2c 7d 9h]
bob: checks
amy: bets $5
bob: raises $10 to $15
amy: calls $10
*** TURN *** [2c 7d 9h] [Js]
bob: bets $32 and is all-in
amy: folds
Uncalled bet ($32) returned to bob
bob collected $36.50 from pot
bob: doesn't show hand
*** SUMMARY ***
Total pot $37 | Rake $0.50
Board [2c 7d 9h Js]
Seat 1: amy (button) folded on the Turn
Seat 2: bob (small blind) collected ($36.50)
Seat 3: cat (big blind) folded before Flop
Seat 4: dan is sitting out
"""


def one(text: str, name: str = "t.txt") -> ParsedHands:
    return parse_text(text, name)


def row(df: pl.DataFrame, **eq) -> dict:
    for k, v in eq.items():
        df = df.filter(pl.col(k) == v)
    assert df.height == 1, (eq, df)
    return df.row(0, named=True)


# ----------------------------------------------------------------------------- basics

def test_cash_hand_tables_and_running_values():
    r = one(CASH)
    assert r.headers_seen == 1 and r.quarantine.height == 0, r.quarantine
    h = r.tables["hands"].row(0, named=True)
    assert h["hand_id"] == "1001" and h["game"] == "holdem" and h["limit_type"] == "no_limit"
    assert h["currency"] == "USD" and not h["is_tournament"] and not h["is_zoom"]
    assert h["small_blind"] == D("0.50") and h["big_blind"] == D("1.00") and h["ante"] is None
    # ET 14:30 in January (EST, UTC-5) = 19:30 UTC; CET 20:30 (UTC+1) agrees.
    assert h["started_at"] == dt.datetime(2024, 1, 15, 19, 30)
    assert h["day"] == dt.date(2024, 1, 15)
    assert h["started_at_local"] == "2024/01/15 20:30:00 CET"
    assert h["table_name"] == "Alpha II" and h["max_seats"] == 6 and h["button_seat"] == 1
    assert h["n_players"] == 3 and h["total_pot"] == D("37.00") and h["rake"] == D("0.50")
    assert h["hero"] == "amy" and not h["all_cards_known"] and not h["run_it_twice"]
    assert h["source_line"] == 1 and len(h["content_hash"]) == 32

    seats = r.tables["seats"]
    amy = row(seats, player="amy")
    bob = row(seats, player="bob")
    cat = row(seats, player="cat")
    dan = row(seats, player="dan")
    assert (amy["put_in"], amy["collected"], amy["net"], amy["stack_end"]) == (D("18"), D("0"), D("-18"), D("82"))
    assert (bob["put_in"], bob["returned"], bob["collected"], bob["stack_end"]) == (D("18"), D("32"), D("36.50"), D("68.50"))
    assert cat["put_in"] == D("1") and cat["stack_end"] == D("79")
    assert dan["sitting_out"] and not dan["dealt_in"] and dan["position"] is None
    assert (amy["position"], bob["position"], cat["position"]) == ("BTN", "SB", "BB")
    assert amy["is_hero"] and not bob["is_hero"]

    a = r.tables["actions"].sort("seq")
    assert a["seq"].to_list() == list(range(11))
    got = [(x["seq"], x["street"], x["player"], x["action"], x["amount"], x["raise_to"], x["pot_before"], x["to_call"], x["n_active"])
           for x in a.iter_rows(named=True)]
    assert got == [
        (0, "preflop", "bob", "post_sb", D("0.50"), None, D("0"), D("0"), 3),
        (1, "preflop", "cat", "post_bb", D("1"), None, D("0.50"), D("0"), 3),
        (2, "preflop", "amy", "raise", D("3"), D("3"), D("1.50"), D("1"), 3),
        (3, "preflop", "bob", "call", D("2.50"), None, D("4.50"), D("2.50"), 3),
        (4, "preflop", "cat", "fold", D("0"), None, D("7"), D("2"), 3),
        (5, "flop", "bob", "check", D("0"), None, D("7"), D("0"), 2),
        (6, "flop", "amy", "bet", D("5"), None, D("7"), D("0"), 2),
        (7, "flop", "bob", "raise", D("15"), D("15"), D("12"), D("5"), 2),
        (8, "flop", "amy", "call", D("10"), None, D("27"), D("10"), 2),
        (9, "turn", "bob", "bet", D("32"), None, D("37"), D("0"), 2),
        (10, "turn", "amy", "fold", D("0"), None, D("69"), D("32"), 2),
    ]
    assert a.height == 11
    assert row(a, seq=9)["is_all_in"] and not row(a, seq=8)["is_all_in"]

    ev = r.tables["table_events"]
    chat = row(ev, event="chat")
    assert chat["player"] == "bob" and chat["detail"] == "cat: raises $99 to $100" and chat["line"] == 11
    assert r.tables["boards"].row(0, named=True)["cards"] == ["2c", "7d", "9h", "Js"]
    assert r.tables["pots"].rows() == [("1001", 0, D("37.00"))]
    assert r.tables["collections"].rows() == [("1001", 1, 0, "bob", D("36.50"), "pot")]
    hc = r.tables["hole_cards"]
    assert hc.rows() == [("1001", "amy", ["Ah", "Kd"], "dealt")]


def test_columns_are_the_schema_columns_and_load_into_duckdb(tmp_path):
    from pathlib import Path

    schema = (Path(__file__).resolve().parents[2] / "pipelines" / "lib" / "schema.sql").read_text()
    r = one(CASH)
    con = duckdb.connect()
    con.execute(schema)
    for name, cols in TABLE_COLUMNS.items():
        db_cols = [c[0] for c in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [name]
        ).fetchall()]
        assert db_cols == cols == r.tables[name].columns, name
        df = r.tables[name]  # noqa: F841 - read by DuckDB's replacement scan
        con.execute(f"INSERT INTO {name} SELECT * FROM df")
    assert con.execute("SELECT total_pot, started_at FROM hands").fetchone() == (D("37.00"), dt.datetime(2024, 1, 15, 19, 30))
    q = r.quarantine
    assert list(q.schema.items()) == list(QUARANTINE_SCHEMA.items())


# ----------------------------------------------------------------------------- encodings

@pytest.mark.parametrize(
    "encode",
    [
        lambda s: s.encode("utf-8"),
        lambda s: codecs.BOM_UTF8 + s.encode("utf-8"),
        lambda s: codecs.BOM_UTF8 + codecs.BOM_UTF8 + s.encode("utf-8"),
        lambda s: codecs.BOM_UTF16_LE + s.encode("utf-16-le"),
        lambda s: codecs.BOM_UTF16_BE + s.encode("utf-16-be"),
        lambda s: s.encode("cp1252"),
        lambda s: s.replace("\n", "\r\n").encode("utf-8"),
        lambda s: s.replace("\n", "\r").encode("utf-8"),
        lambda s: s.replace("\n", "   \n").rstrip().encode("utf-8"),  # trailing spaces, no final newline
    ],
    ids=["utf8", "bom", "double-bom", "utf16le", "utf16be", "cp1252", "crlf", "cr", "trailing-spaces"],
)
def test_encodings_decode_to_the_same_hand(encode):
    text = CASH.replace("amy", "Amélie")
    decoded = decode_bytes(encode(text))
    assert "\r" not in decoded and not decoded.startswith("\ufeff")
    r = one(decoded)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    assert r.tables["hands"]["hero"].to_list() == ["Amélie"]
    assert r.tables["hands"]["content_hash"].to_list() == one(text).tables["hands"]["content_hash"].to_list()


def test_invalid_bytes_in_a_name_are_replaced_not_fatal():
    data = CASH.replace("cat", "c\x00t").encode("utf-8").replace(b"c\x00t", b"c\xff\xfet")
    text = decode_bytes(data)
    r = one(text)
    assert r.headers_seen == 1 and r.tables["hands"].height == 1
    names = r.tables["seats"]["player"].to_list()
    assert any("\ufffd" in n or "ÿ" in n for n in names)


def test_files_roundtrip(tmp_path):
    p1 = tmp_path / "a.txt"
    p2 = tmp_path / "b.txt"
    p1.write_bytes(codecs.BOM_UTF16_LE + (CASH + "\n\n" + CASH.replace("#1001", "#1002")).encode("utf-16-le"))
    p2.write_bytes(("junk before\n\n" + CASH.replace("#1001", "#1003")).encode("cp1252"))
    r = parse_files([p1, p2])
    assert r.headers_seen == 3
    assert sorted(r.tables["hands"]["hand_id"].to_list()) == ["1001", "1002", "1003"]
    assert row(r.tables["hands"], hand_id="1003")["source_line"] == 3
    assert row(r.tables["hands"], hand_id="1003")["source_file"] == str(p2)
    # the same batch split over two processes gives the same tables
    r2 = parse_files([p1, p2], workers=1)
    assert r2.tables["actions"].equals(r.tables["actions"])


# ----------------------------------------------------------------------------- names

@pytest.mark.parametrize("name", ["<script>alert(1)</script>", "a: b", 'x said, "y', "Mr [X] (Y)", "名字 ü", "bob: folds"])
def test_hostile_names(name):
    text = CASH.replace("bob", name)
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    s = row(r.tables["seats"], player=name)
    assert s["collected"] == D("36.50") and s["position"] == "SB"
    assert r.tables["actions"].filter(pl.col("player") == name).height == 5


def test_action_by_a_name_not_seated_is_quarantined():
    text = CASH.replace("cat: folds", "mallory: folds")
    r = one(text)
    assert r.tables["hands"].height == 0
    q = r.quarantine.row(0, named=True)
    assert q["reason"] == "unparsed line" and "mallory: folds" in q["detail"]
    assert q["raw"].startswith("PokerStars Hand #1001") and q["position"] == 1 and q["input_kind"] == "hand"


# ----------------------------------------------------------------------------- pots

SIDE = """PokerStars Hand #2001:  Hold'em No Limit ($1/$2 USD) - 2024/07/04 21:00:00 ET
Table 'Beta' 9-max Seat #3 is the button
Seat 1: p1 ($10 in chips)
Seat 2: p2 ($30 in chips)
Seat 3: p3 ($100 in chips)
p1: posts small blind $1
p2: posts big blind $2
*** HOLE CARDS ***
p3: raises $98 to $100 and is all-in
p1: calls $9 and is all-in
p2: calls $28 and is all-in
Uncalled bet ($70) returned to p3
*** FLOP *** [2c 3c 4c]
*** TURN *** [2c 3c 4c] [5d]
*** RIVER *** [2c 3c 4c 5d] [Kh]
*** SHOW DOWN ***
p1: shows [Ac 7h] (a flush, Ace high)
p2: shows [Kd Ks] (three of a kind, Kings)
p3: shows [Qs Qd] (a pair of Queens)
p2 collected $39 from side pot
p1 collected $29 from main pot
*** SUMMARY ***
Total pot $70 Main pot $29. Side pot $39. | Rake $2
Board [2c 3c 4c 5d Kh]
Seat 1: p1 (small blind) showed [Ac 7h] and won ($29) with a flush, Ace high
Seat 2: p2 (big blind) showed [Kd Ks] and won ($39) with three of a kind, Kings
Seat 3: p3 (button) showed [Qs Qd] and lost with a pair of Queens
"""


def test_side_pots():
    r = one(SIDE)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    assert r.tables["pots"].sort("pot").rows() == [("2001", 0, D("29")), ("2001", 1, D("39"))]
    c = r.tables["collections"].sort("pot")
    assert c.select("pot", "player", "amount").rows() == [(0, "p1", D("29")), (1, "p2", D("39"))]
    s = r.tables["seats"]
    assert row(s, player="p3")["put_in"] == D("30") and row(s, player="p3")["returned"] == D("70")
    assert row(s, player="p3")["stack_end"] == D("70")
    assert row(s, player="p1")["stack_end"] == D("29")
    hc = r.tables["hole_cards"].sort("player")
    assert hc.select("player", "source").rows() == [("p1", "shown"), ("p2", "shown"), ("p3", "shown")]
    # started in July: EDT (UTC-4)
    assert r.tables["hands"]["started_at"].to_list() == [dt.datetime(2024, 7, 5, 1, 0)]
    # 3-handed: button, SB, BB
    assert row(s, player="p3")["position"] == "BTN"


def test_side_pot_amounts_that_do_not_add_up_are_quarantined():
    r = one(SIDE.replace("Side pot $39.", "Side pot $40."))
    assert r.tables["hands"].height == 0
    q = r.quarantine.row(0, named=True)
    assert q["reason"] == "unbalanced" and "main 29.00 + sides 40.00" in q["detail"]


def test_unbalanced_pot_is_quarantined_with_numbers():
    r = one(CASH.replace("bob collected $36.50", "bob collected $40.50"))
    q = r.quarantine.row(0, named=True)
    assert q["reason"] == "unbalanced"
    assert "collected 40.50 + rake 0.50" in q["detail"] and "total pot 37.00" in q["detail"]
    assert r.tables["seats"].height == 0 and r.tables["actions"].height == 0


SPLIT = """PokerStars Hand #3001:  Omaha Hi/Lo Pot Limit ($0.05/$0.10 USD) - 2024/03/01 12:00:00 ET
Table 'Gamma' 6-max Seat #2 is the button
Seat 1: a1 ($5 in chips)
Seat 2: a2 ($5 in chips)
a2: posts small blind $0.05
a1: posts big blind $0.10
*** HOLE CARDS ***
Dealt to a1 [Ah 2h 3c Kd]
Dealt to a2 [As 2s 4c Qd]
a2: calls $0.05
a1: checks
*** FLOP *** [5h 6h Tc]
a1: checks
a2: checks
*** TURN *** [5h 6h Tc] [Jd]
a1: checks
a2: checks
*** RIVER *** [5h 6h Tc Jd] [9s]
a1: checks
a2: checks
*** SHOW DOWN ***
a1: shows [Ah 2h 3c Kd] (HI: a flush; LO: 6,5,3,2,A)
a2: shows [As 2s 4c Qd] (HI: a straight; LO: 6,5,4,2,A)
a1 collected $0.05 from pot
a1 collected $0.03 from pot
a2 collected $0.02 from pot
*** SUMMARY ***
Total pot $0.20 | Rake $0.10
Board [5h 6h Tc Jd 9s]
Seat 1: a1 (big blind) showed [Ah 2h 3c Kd] and won ($0.08) with HI: a flush
Seat 2: a2 (button) (small blind) showed [As 2s 4c Qd] and won ($0.02) with LO: 6,5,4,2,A
"""


def test_split_pot_hi_lo_operator_view_heads_up():
    r = one(SPLIT)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert h["game"] == "omaha" and h["hi_lo"] and h["limit_type"] == "pot_limit"
    assert h["all_cards_known"] and h["hero"] is None
    s = r.tables["seats"]
    assert row(s, player="a1")["collected"] == D("0.08") and row(s, player="a2")["net"] == D("-0.08")
    # heads-up: the button posts the small blind
    assert row(s, player="a2")["position"] == "BTN" and row(s, player="a1")["position"] == "BB"
    hc = r.tables["hole_cards"]
    assert row(hc, player="a1")["cards"] == ["Ah", "2h", "3c", "Kd"] and row(hc, player="a1")["source"] == "dealt"


RIT = """PokerStars Hand #4001:  Hold'em No Limit (€1/€2 EUR) - 2012/12/14 7:59:19 CUST [2012/12/13 19:59:19 ET]
Table 'Mekbuda II' 6-max Seat #1 is the button
Seat 1: Hero (€100 in chips)
Seat 2: Vil (€50 in chips)
Hero: posts small blind €1
Vil: posts big blind €2
*** HOLE CARDS ***
Dealt to Hero [Jc Ac]
Hero: raises €98 to €100 and is all-in
Vil: calls €48 and is all-in
Uncalled bet (€50) returned to Hero
*** FLOP *** [Js 9h Jh]
*** TURN *** [Js 9h Jh] [Qs]
*** FIRST RIVER *** [Js 9h Jh Qs] [2d]
*** SECOND RIVER *** [Js 9h Jh Qs] [5h]
*** FIRST SHOW DOWN ***
Hero: shows [Jc Ac] (three of a kind, Jacks)
Vil: shows [9s 9c] (a full house, Nines full of Jacks)
Vil collected €49.50 from pot
*** SECOND SHOW DOWN ***
Hero: shows [Jc Ac] (three of a kind, Jacks)
Vil: mucks hand
Hero collected €49.50 from pot
*** SUMMARY ***
Total pot €100 | Rake €1
Hand was run twice
FIRST Board [Js 9h Jh Qs 2d]
SECOND Board [Js 9h Jh Qs 5h]
Seat 1: Hero (button) (small blind) showed [Jc Ac] and won (€49.50) with three of a kind, Jacks
Seat 2: Vil (big blind) showed [9s 9c] and won (€49.50) with a full house, Nines full of Jacks
"""


def test_run_it_twice():
    r = one(RIT)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert h["run_it_twice"] and h["currency"] == "EUR"
    # unknown local zone "CUST": the bracketed ET time is used (EST, UTC-5)
    assert h["started_at"] == dt.datetime(2012, 12, 14, 0, 59, 19)
    b = r.tables["boards"].sort("run")
    assert b.rows() == [("4001", 1, ["Js", "9h", "Jh", "Qs", "2d"]), ("4001", 2, ["Js", "9h", "Jh", "Qs", "5h"])]
    c = r.tables["collections"].sort("run")
    assert c.select("run", "player", "amount").rows() == [(1, "Vil", D("49.50")), (2, "Hero", D("49.50"))]
    assert row(r.tables["seats"], player="Hero")["stack_end"] == D("99.50")


CASHOUT = """PokerStars Hand #5001:  6 Card Omaha Pot Limit ($0.05/$0.10 USD) - 2021/11/23 22:30:22 MSK [2021/11/23 14:30:22 ET]
Table 'Aribeda IV' 6-max Seat #2 is the button
Seat 1: w ($10 in chips)
Seat 2: l ($10 in chips)
l: posts small blind $0.05
w: posts big blind $0.10
*** HOLE CARDS ***
l: raises $9.90 to $10 and is all-in
w: calls $9.90 and is all-in
*** FLOP *** [2s 9h 7d]
*** TURN *** [2s 9h 7d] [8s]
*** RIVER *** [2s 9h 7d 8s] [Th]
*** SHOW DOWN ***
w: shows [Ac 6s Ts 4d 8d As] (a straight, Six to Ten)
l: shows [6c Qd Js Ad Kc 8c] (a straight, Eight to Queen)
l cashed out the hand for $15.50 | Cash Out Fee $0.16
*** SUMMARY ***
Total pot $20 | Rake $0.50
Board [2s 9h 7d 8s Th]
Seat 1: w (big blind) showed [Ac 6s Ts 4d 8d As] and lost with a straight, Six to Ten
Seat 2: l (button) (small blind) showed [6c Qd Js Ad Kc 8c] and won ($19.50) with a straight, Eight to Queen (pot not awarded as player cashed out)
"""


def test_cash_out_counts_as_collected_and_the_pot_is_not_awarded():
    r = one(CASHOUT)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    assert r.tables["hands"]["game"].to_list() == ["omaha6"]
    c = r.tables["collections"]
    assert c.select("player", "amount", "kind").rows() == [("l", D("15.50"), "cash_out")]
    s = r.tables["seats"]
    assert row(s, player="l")["stack_end"] == D("15.50") and row(s, player="l")["net"] == D("5.50")
    assert row(r.tables["table_events"], event="cashed_out")["player"] == "l"
    # MSK = UTC+3
    assert r.tables["hands"]["started_at"].to_list() == [dt.datetime(2021, 11, 23, 19, 30, 22)]


# ----------------------------------------------------------------------------- tournaments

PKO = """PokerStars Hand #6001: Tournament #777, $10+$10+$2 USD Hold'em No Limit - Level III (25/50) - 2023/12/29 22:04:22 ET
Table '777 1' 9-max Seat #1 is the button
Seat 1: Kim (3000 in chips, $15 bounty)
Seat 2: Lee (1000 in chips, $10 bounty)
Seat 3: Max (2000 in chips, $10 bounty)
Kim: posts the ante 5
Lee: posts the ante 5
Max: posts the ante 5
Lee: posts small blind 25
Max: posts big blind 50
*** HOLE CARDS ***
Kim: raises 100 to 150
Lee: raises 845 to 995 and is all-in
Max: folds
Kim: calls 845
*** FLOP *** [2c 3d 4h]
*** TURN *** [2c 3d 4h] [5s]
*** RIVER *** [2c 3d 4h 5s] [6d]
*** SHOW DOWN ***
Kim: shows [7c 8c] (a straight, Four to Eight)
Lee: shows [Ah Ad] (a straight, Deuce to Six)
Kim collected 2055 from pot
Kim wins $5 for eliminating Lee and their own bounty increases by $5 to $20
Lee finished the tournament in 3rd place and received $12.50.
*** SUMMARY ***
Total pot 2055 | Rake 0
Board [2c 3d 4h 5s 6d]
Seat 1: Kim (button) showed [7c 8c] and won (2055) with a straight, Four to Eight
Seat 2: Lee (small blind) showed [Ah Ad] and lost with a straight, Deuce to Six
Seat 3: Max (big blind) folded before Flop
"""


def test_progressive_knockout_tournament():
    r = one(PKO)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert h["is_tournament"] and h["tournament_id"] == "777" and h["currency"] == "CHIPS"
    assert h["tournament_level"] == "III" and h["ante"] == D("5") and h["big_blind"] == D("50")
    b = r.tables["bounties"].row(0, named=True)
    assert (b["winner"], b["eliminated"], b["amount"], b["increase"], b["new_bounty"]) == ("Kim", "Lee", D("5"), D("5"), D("20"))
    f = r.tables["tournament_finishes"].row(0, named=True)
    assert (f["player"], f["place"], f["prize"], f["hand_id"]) == ("Lee", 3, D("12.50"), "6001")
    t = r.tables["tournaments"].row(0, named=True)
    assert (t["buy_in"], t["bounty"], t["fee"], t["currency"], t["bounty_kind"]) == (D("10"), D("10"), D("2"), "USD", "progressive")
    assert t["first_hand_at"] == t["last_hand_at"] == dt.datetime(2023, 12, 30, 3, 4, 22)
    s = r.tables["seats"]
    assert row(s, player="Kim")["bounty"] == D("15") and row(s, player="Lee")["stack_end"] == D("0")
    a = r.tables["actions"]
    # antes are not live: Kim's call adds 845 to her 150; Lee's raise to 995 over a 25 blind adds 970
    assert row(a, player="Lee", action="raise")["amount"] == D("970")
    assert row(a, player="Kim", action="call")["to_call"] == D("845")


def test_knockout_line_and_winner():
    text = PKO.replace(
        "Kim wins $5 for eliminating Lee and their own bounty increases by $5 to $20",
        "Kim wins the $10 bounty for eliminating Lee",
    ).replace("Lee finished the tournament in 3rd place and received $12.50.", "Kim wins the tournament and receives $50 - congratulations!")
    r = one(text)
    b = r.tables["bounties"].row(0, named=True)
    assert (b["amount"], b["increase"]) == (D("10"), None)
    assert r.tables["tournament_finishes"].select("player", "place", "prize").rows() == [("Kim", 1, D("50"))]
    assert r.tables["tournaments"]["bounty_kind"].to_list() == ["knockout"]


def test_decimal_comma_amounts():
    import re

    text = CASH.replace("($0.50/$1.00 USD)", "(0,50 €/1 € EUR)")
    text = re.sub(r"\$(\d+)(?:\.(\d+))?", lambda m: m.group(1) + ("," + m.group(2) if m.group(2) else "") + " €", text)
    assert "36,50 €" in text and "$" not in text
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert h["small_blind"] == D("0.50") and h["rake"] == D("0.50") and h["currency"] == "EUR"
    assert row(r.tables["seats"], player="bob")["collected"] == D("36.50")


def test_thousands_separators_and_play_money():
    text = """PokerStars Game #7001:  Hold'em No Limit (1,000/2,000) - 2012/01/01 10:00:00 ET
Table 'Play' 9-max (Play Money) Seat #1 is the button
Seat 1: x (1,250,000 in chips)
Seat 2: y (300,000 in chips)
x: posts small blind 1,000
y: posts big blind 2,000
*** HOLE CARDS ***
x: raises 10,000 to 12,000
y: folds
Uncalled bet (10,000) returned to x
x collected 4,000 from pot
*** SUMMARY ***
Total pot 4,000 | Rake 0
Seat 1: x (button) (small blind) collected (4,000)
Seat 2: y (big blind) folded before Flop
"""
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert h["currency"] == "PLAY" and h["big_blind"] == D("2000")
    assert row(r.tables["seats"], player="x")["stack_end"] == D("1252000")


# ----------------------------------------------------------------------------- quarantine

def test_unsupported_games_are_recognised():
    stud = """PokerStars Game #8001:  7 Card Stud Limit ($0.04/$0.08 USD) - 2009/11/26 10:00:00 ET
Table 'S' 8-max
Seat 1: a ($1 in chips)
Seat 2: b ($1 in chips)
a: posts the ante $0.01
b: posts the ante $0.01
*** 3rd STREET ***
Dealt to a [Ah Kh 2c]
a: brings in for $0.02
b: folds
Uncalled bet ($0.02) returned to a
a collected $0.02 from pot
*** SUMMARY ***
Total pot $0.02 | Rake $0
"""
    mixed = CASH.replace("Hold'em No Limit ($0.50/$1.00 USD)", "HORSE (Razz Limit, $0.50/$1.00 USD)")
    badugi = CASH.replace("Hold'em No Limit", "Badugi Limit")
    mixed_holdem = CASH.replace("Hold'em No Limit ($0.50/$1.00 USD)", "Mixed NLH/PLO (Hold'em No Limit, $0.50/$1.00 USD)")
    r = one("\n\n".join([stud, mixed, badugi, mixed_holdem]))
    assert r.headers_seen == 4
    assert r.quarantine["reason"].to_list() == ["unsupported game"] * 3
    assert r.tables["hands"].height == 1 and r.tables["hands"]["game"].to_list() == ["holdem"]


def test_truncated_cancelled_and_malformed_hands():
    truncated = CASH.split("*** TURN ***")[0]
    cancelled = CASH.replace("#1001", "#1002").split("*** FLOP ***")[0] + "Hand cancelled\n*** SUMMARY ***\nSeat 1: amy\n"
    no_table = CASH.replace("#1001", "#1003").replace("Table 'Alpha II' 6-max Seat #1 is the button\n", "")
    before_deal = (CASH.replace("#1001", "#1005").split("*** HOLE CARDS ***")[0]
                   + "Hand cancelled\n*** SUMMARY ***\nSeat 1: amy collected ($0)\n")
    r = one("\n\n".join([truncated, cancelled, no_table, CASH.replace("#1001", "#1004"), before_deal]), "mix.txt")
    q = {x["hand_id"]: x for x in r.quarantine.iter_rows(named=True)}
    assert q["1001"]["reason"] == "truncated hand"
    assert q["1002"]["reason"] == q["1005"]["reason"] == "hand cancelled"
    # (a hand cancelled before the deal is a header, not a hand: README, the share per corpus)
    assert q["1002"]["detail"] == "cancelled after the deal: the hand text says so"
    assert q["1005"]["detail"] == "cancelled before the deal: no card dealt, no hand played"
    assert q["1003"]["reason"] == "malformed header"
    assert r.tables["hands"]["hand_id"].to_list() == ["1004"]
    assert r.headers_seen == 5 == r.tables["hands"].height + r.quarantine.height
    assert q["1002"]["position"] == truncated.count("\n") + 3  # the cancelled hand's header line in the file


def test_garbage_line_without_money_is_kept_and_with_money_is_quarantined():
    # no money and no action: the balanced hand is stored, the line kept in unknown_lines (issue 31, item 4)
    r = one(CASH.replace("cat: folds\n", "cat: folds\nthis line is not poker\n"))
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    assert r.tables["unknown_lines"].select("kind", "text").rows() == [("unknown", "this line is not poker")]
    r = one(CASH.replace("cat: folds\n", "cat: folds\nthis line is not poker $5\n"))
    q = r.quarantine.row(0, named=True)
    assert q["reason"] == "unparsed line" and "this line is not poker $5" in q["detail"]


@pytest.mark.parametrize("old, new, why", [
    ("amy: raises $2 to $3\n", "amy: raises $2 to $3\namy: raises $2 to $3\n", "amy: raises $2 to $3 (does not raise)"),
    ("bob: calls $2.50\ncat: folds\n*** FLOP *** [2c 7d 9h]\n", "cat: folds\n*** FLOP *** [2c 7d 9h]\nbob: calls $2.50\n",
     "bob: calls $2.50 (nothing to call)"),
    ("bob: calls $2.50\n", "bob: calls $3\n", "bob: calls $3 (more than is owed)"),
    ("bob: checks\namy: bets $5\n", "amy: bets $5\nbob: checks\n", "bob: checks (facing a bet)"),
    ("cat: folds\n", "cat: folds\ncat: folds\n", "cat: folds (after folding)"),
    ("amy: folds\n", "amy: folds\nbob: checks\n", "bob: checks (after going all-in)"),
])
def test_a_lost_doubled_or_moved_action_line_is_quarantined_as_impossible(old, new, why):
    """Each of these hands still adds up or nearly; what betrays the lost, doubled or moved line is the betting."""
    assert old in CASH
    r = one(CASH.replace(old, new, 1))
    assert r.tables["hands"].height == 0 and r.headers_seen == 1
    q = r.quarantine.row(0, named=True)
    assert (q["reason"], q["hand_id"]) == ("impossible action", "1001")
    assert q["detail"].endswith(why), q["detail"]


def test_a_fold_after_posting_all_in_is_not_impossible(corpus_dir):
    """A sitting-out tournament player posts all-in and is then folded by the client (real hand 16652117062)."""
    hits = [p for p in corpus_dir.rglob("*.txt") if b"16652117062" in p.read_bytes()]
    assert hits
    r = parse_files(hits[:1])
    assert "16652117062" in r.tables["hands"]["hand_id"].to_list()
    a = r.tables["actions"].filter((pl.col("hand_id") == "16652117062") & (pl.col("player") == "Player12"))
    assert a["action"].to_list()[-1] == "fold" and a["is_all_in"].any()


def test_duplicates_are_returned_as_read():
    r = one(CASH + "\n\n" + CASH)
    assert r.tables["hands"].height == 2 and r.headers_seen == 2
    assert r.tables["hands"]["content_hash"].n_unique() == 1
    assert r.tables["hands"]["source_line"].to_list()[1] == CASH.count("\n") + 3


def test_operator_view_and_positions_nine_handed():
    seats = "\n".join(f"Seat {i}: p{i} ($100 in chips)" for i in range(1, 10))
    posts = "p2: posts small blind $1\np3: posts big blind $2\n"
    folds = "".join(f"p{i}: folds\n" for i in [4, 5, 6, 7, 8, 9, 1, 2])
    dealt = "".join(f"Dealt to p{i} [Ah Kh]\n" for i in range(1, 10))
    text = (f"PokerStars Hand #9001:  Hold'em No Limit ($1/$2 USD) - 2020/04/01 10:00:00 ET\n"
            f"Table 'Nine' 9-max Seat #1 is the button\n{seats}\n{posts}*** HOLE CARDS ***\n{dealt}{folds}"
            "Uncalled bet ($1) returned to p3\np3 collected $2 from pot\n*** SUMMARY ***\nTotal pot $2 | Rake $0\n")
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    pos = dict(r.tables["seats"].select("player", "position").rows())
    assert pos == {"p1": "BTN", "p2": "SB", "p3": "BB", "p4": "UTG", "p5": "UTG1", "p6": "UTG2",
                   "p7": "LJ", "p8": "HJ", "p9": "CO"}
    h = r.tables["hands"].row(0, named=True)
    assert h["all_cards_known"] and h["hero"] is None and h["n_players"] == 9
    assert r.tables["actions"]["n_active"].to_list() == [9, 9, 9, 8, 7, 6, 5, 4, 3, 2]


def test_old_format_without_uncalled_line_is_repaired_exactly():
    text = CASH.replace("Uncalled bet ($32) returned to bob\n", "").replace("PokerStars Hand", "PokerStars Game")
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    assert row(r.tables["seats"], player="bob")["returned"] == D("32")


def test_empty_and_headerless_input():
    assert one("").headers_seen == 0
    assert one("\n \n\n").quarantine.height == 0
    r = one("PokerStars Tournament #1, No Limit Hold'em\nBuy-In: $1/$0.10\n")  # a tournament summary: no hand, kept
    assert r.headers_seen == 0 and r.tables["hands"].height == 0
    assert r.quarantine.select("position", "input_kind", "hand_id", "reason", "detail", "raw").rows() == [
        (1, "text", None, "text outside any hand", "2 line(s) outside any PokerStars hand",
         "PokerStars Tournament #1, No Limit Hold'em\nBuy-In: $1/$0.10")]


def test_text_outside_hands_and_other_rooms_hands_are_kept_with_their_reason():
    """Before the first hand, after a hand's summary and a blank line: never dropped in silence. Another room's
    hand in PokerStars' layout is a hand of an unsupported site, one row per hand."""
    text = ("exported by some tool\n\n" + CASH + "\n\nnot poker\nat all\n\n"
            "Run It Once Poker Hand #30702949: Hold'em No Limit (€0.02/€0.04) - 2019/02/08 15:19 UTC\nTable 'x'\n\n"
            "MPLPoker Hand #4227871731:  Omaha 5 Cards Pot Limit (₹100/₹200) - 2023/10/17 22:39:01 UTC\n")
    r = one(text)
    assert r.tables["hands"]["hand_id"].to_list() == ["1001"] and r.headers_seen == 3
    q = r.quarantine.select("position", "input_kind", "hand_id", "reason", "detail").rows()
    assert q == [
        (1, "text", None, "text outside any hand", "1 line(s) outside any PokerStars hand"),
        (37, "text", None, "text outside any hand", "2 line(s) outside any PokerStars hand"),
        (40, "hand", "30702949", "unsupported site", "a hand from Run It Once Poker: railbird reads PokerStars hand histories"),
        (43, "hand", "4227871731", "unsupported site", "a hand from MPLPoker: railbird reads PokerStars hand histories"),
    ]
    assert r.quarantine["raw"].to_list()[1] == "not poker\nat all"
    big = one("x" * 25_000 + "\n" + "y\n").quarantine.row(0, named=True)  # a binary file named .txt, say
    assert len(big["raw"]) == 10_000 and big["detail"] == "2 line(s) outside any PokerStars hand (raw cut at 10,000 characters)"


def test_a_double_spaced_hand_reads_as_the_same_hand():
    """A blank line after every line (a copy through a tool that doubled the line ends): the same hand, same hash."""
    single, double = one(CASH), one(CASH.replace("\n", "\n\n"))
    assert double.quarantine.height == 0
    for name in ("hands", "seats", "actions", "pots", "collections"):
        assert double.tables[name].drop("source_line", strict=False).equals(
            single.tables[name].drop("source_line", strict=False)), name


def test_every_single_line_deletion_is_parsed_or_quarantined():
    """Robustness: drop each line of two hands in turn; nothing crashes, nothing vanishes,
    and a stored hand still balances (a deletion that keeps a hand consistent is fine)."""
    texts = []
    for base in (CASH, SIDE, PKO):
        lines = base.split("\n")
        for i in range(len(lines)):
            texts.append("\n".join(lines[:i] + lines[i + 1:]))
    r = one("\n\n".join(texts))
    expected_headers = len(texts) - 3  # deleting a header line removes that hand: its lines are text outside any
    hands_q = r.quarantine.filter(pl.col("input_kind") == "hand")
    assert r.headers_seen == expected_headers == r.tables["hands"].height + hands_q.height
    assert r.quarantine.filter(pl.col("input_kind") == "text").height == 3
    assert r.quarantine["reason"].null_count() == 0
    s = r.tables["seats"]
    assert (s["stack_end"] >= 0).all()


def test_truncated_at_every_line_never_crashes():
    lines = CASH.split("\n")
    pieces = ["\n".join(lines[:i]) for i in range(1, len(lines))]
    r = one("\n\n".join(pieces))
    assert r.headers_seen == len(pieces) == r.tables["hands"].height + r.quarantine.height
    # a hand is complete once its summary has the "Total pot" line (the summary seat lines are optional)
    assert r.tables["hands"].height == sum("Total pot" in p for p in pieces)
    # the header alone has no table line (malformed header); every other cut is a truncated hand
    assert r.quarantine["reason"].value_counts().sort("reason").rows() == [
        ("malformed header", 1), ("truncated hand", len(pieces) - r.tables["hands"].height - 1)]


def test_names_with_brackets_and_said_in_dealt_and_chat_lines():
    text = CASH.replace("amy", "a [b] c").replace("bob", 'bo said, "b')
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    assert r.tables["hole_cards"].rows() == [("1001", "a [b] c", ["Ah", "Kd"], "dealt")]
    chat = row(r.tables["table_events"], event="chat")
    assert chat["player"] == 'bo said, "b' and chat["detail"] == "cat: raises $99 to $100"


def test_a_side_pot_paying_more_than_it_held_is_unbalanced():
    text = SIDE.replace("p2 collected $39 from side pot\np1 collected $29 from main pot",
                        "p2 collected $40 from side pot\np1 collected $28 from main pot")
    r = one(text)
    q = r.quarantine.row(0, named=True)
    assert q["reason"] == "unbalanced" and "pot paid out more" in q["detail"]


HEADER_CASES = [
    # header, game, limit, hi_lo, currency, sb, bb, started_at (UTC), is_zoom, tournament id
    ("PokerStars Zoom Hand #1:  Hold'em No Limit ($0.05/$0.10) - 2020/04/16 9:00:00 ET",
     "holdem", "no_limit", False, "USD", "0.05", "0.10", dt.datetime(2020, 4, 16, 13, 0), True, None),
    ("PokerStars Hand #2:  Hold'em No Limit (£1/£2 GBP) - 2023/06/01 20:00:00 WET [2023/06/01 15:00:00 ET]",
     "holdem", "no_limit", False, "GBP", "1", "2", dt.datetime(2023, 6, 1, 19, 0), False, None),
    ("PokerStars Hand #3:  Hold'em No Limit (₹1/₹2 INR) - 2023/06/01 20:00:00 IST",
     "holdem", "no_limit", False, "INR", "1", "2", dt.datetime(2023, 6, 1, 14, 30), False, None),
    ("PokerStars Hand #4:  5 Card Omaha Hi/Lo Pot Limit ($1/$2 USD) - 2023/01/10 10:00:00 AEST [2023/01/09 18:00:00 ET]",
     "omaha5", "pot_limit", True, "USD", "1", "2", dt.datetime(2023, 1, 9, 23, 0), False, None),
    # fixed limit: the header states the bets (30/60); the big blind is the small bet and the
    # small blind what the hand's small blind posted (the shared test body scaled to a big blind of 30: 15)
    ("PokerStars Game #5: Tournament #42, 90 FPP Hold'em Limit - Level III (30/60) - 2010/07/26 8:19:43 ET",
     "holdem", "fixed_limit", False, "CHIPS", "15", "30", dt.datetime(2010, 7, 26, 12, 19, 43), False, "42"),
    ("PokerStars Game #6: Tournament #43, $5.00+$0.50 Hold'em No Limit - Level IV (50/100) - 2007/10/15 - 06:07:54 (ET)",
     "holdem", "no_limit", False, "CHIPS", "50", "100", dt.datetime(2007, 10, 15, 10, 7, 54), False, "43"),
    ("PokerStars Hand #7:  Mixed NLH/PLO (Omaha Pot Limit, $0.10/$0.20 USD) - 2012/04/01 10:00:00 ET",
     "omaha", "pot_limit", False, "USD", "0.10", "0.20", dt.datetime(2012, 4, 1, 14, 0), False, None),
    ("PokerStars Hand #8:  Hold'em No Limit (1,000/2,000) - 2012/11/04 1:30:00 ET",  # DST fold: earlier (EDT)
     "holdem", "no_limit", False, "PLAY", "1000", "2000", dt.datetime(2012, 11, 4, 5, 30), False, None),
    ("PokerStars Hand #9: Zoom Tournament #44, $2+$0.20 USD 6 Card Omaha Pot Limit - Level II (10/20) - 2021/05/25 19:46:24 MSK [2021/05/25 12:46:24 ET]",
     "omaha6", "pot_limit", False, "CHIPS", "10", "20", dt.datetime(2021, 5, 25, 16, 46, 24), True, "44"),
]


@pytest.mark.parametrize("case", HEADER_CASES, ids=lambda c: c[0].split("#")[1].split(":")[0])
def test_headers(case):
    header, game, limit, hilo, cur, sb, bb, at, zoom, tid = case
    # the cash hand's body (big blind $1) scaled to the header's big blind, so that its betting is sound under
    # the header's blinds (a raise to $3 is no raise where the big blind is 2,000: an impossible action)
    scale = max(1, int(D(bb)))
    body = re.sub(r"\$(\d+(?:\.\d+)?)", lambda m: f"${D(m.group(1)) * scale}", CASH.split("\n", 1)[1])
    r = one(header + "\n" + body)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert (h["game"], h["limit_type"], h["hi_lo"], h["currency"]) == (game, limit, hilo, cur)
    assert (h["small_blind"], h["big_blind"]) == (D(sb), D(bb))
    assert h["started_at"] == at and h["day"] == at.date()
    assert h["is_zoom"] == zoom and h["tournament_id"] == tid and h["is_tournament"] == (tid is not None)


def test_blind_variants_straddle_dead_blind_button_blind():
    text = """PokerStars Hand #9101:  Hold'em No Limit ($1/$2 USD) - 2020/04/01 10:00:00 ET
Table 'V' 6-max Seat #1 is the button
Seat 1: a ($100 in chips)
Seat 2: b ($100 in chips)
Seat 3: c ($100 in chips)
Seat 4: d ($100 in chips)
b: posts small blind $1
c: posts big blind $2
d: posts small & big blinds $3
a: posts straddle $4
*** HOLE CARDS ***
d: calls $2
a: raises $8 to $12
b: folds
c: folds
d: folds
Uncalled bet ($8) returned to a
a collected $12 from pot
*** SUMMARY ***
Total pot $12 | Rake $0
Seat 1: a (button) collected ($12)
"""
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    a = r.tables["actions"]
    assert a["action"].to_list()[:4] == ["post_sb", "post_bb", "post_sb_bb", "post_straddle"]
    # d's live blind is the big blind part ($2) of $3: calling the $4 straddle adds $2
    assert row(a, player="d", action="call")["to_call"] == D("2")
    # a raises to $12 over its own live $4 straddle: adds $8
    assert row(a, player="a", action="raise")["amount"] == D("8")
    s = r.tables["seats"]
    assert row(s, player="d")["put_in"] == D("5") and row(s, player="a")["put_in"] == D("4")
    assert row(s, player="a")["stack_end"] == D("108")


def test_names_that_look_like_markers_or_totals():
    text = CASH.replace("cat", "*** SUMMARY ***").replace("amy", "Total pot $5 | Rake $0")
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    h = r.tables["hands"].row(0, named=True)
    assert h["total_pot"] == D("37") and h["hero"] == "Total pot $5 | Rake $0"
    assert row(r.tables["seats"], player="*** SUMMARY ***")["put_in"] == D("1")


def test_parallel_batches_give_the_same_tables(tmp_path, monkeypatch):
    import pipelines.lib.handhistory as hh

    paths = []
    for i in range(4):
        p = tmp_path / f"f{i}.txt"
        p.write_text(CASH.replace("#1001", f"#10{i}1") + "\n\n" + PKO.replace("#6001", f"#60{i}1"), encoding="utf-8")
        paths.append(p)
    serial = parse_files(paths, workers=1)
    monkeypatch.setattr(hh, "_BATCH_BYTES", 3000)  # about one file per batch
    par = hh.parse_files(paths, workers=2)
    assert par.headers_seen == serial.headers_seen == 8
    for name in serial.tables:
        key = [c for c in ("hand_id", "seq", "seat", "player", "line", "run", "pot") if c in serial.tables[name].columns] or ["tournament_id"]
        assert par.tables[name].sort(key).equals(serial.tables[name].sort(key)), name
    assert par.tables["tournaments"]["tournament_id"].to_list() == ["777"]


def test_short_big_blind_still_sets_the_preflop_call():
    text = """PokerStars Hand #9201: Tournament #9, $1+$0.10 USD Hold'em No Limit - Level V (15/30) - 2020/04/01 10:00:00 ET
Table '9 1' 9-max Seat #1 is the button
Seat 1: a (1000 in chips)
Seat 2: b (1000 in chips)
Seat 3: c (20 in chips)
b: posts small blind 15
c: posts big blind 20 and is all-in
*** HOLE CARDS ***
a: calls 30
b: calls 15
*** FLOP *** [2c 3d 4h]
b: checks
a: checks
*** TURN *** [2c 3d 4h] [5s]
b: checks
a: checks
*** RIVER *** [2c 3d 4h 5s] [Kd]
b: checks
a: checks
*** SHOW DOWN ***
a: shows [Kh Ks] (three of a kind, Kings)
b: shows [2h 2s] (three of a kind, Deuces)
c: shows [Ah 7d] (a straight, Ace to Five)
a collected 20 from side pot
c collected 60 from main pot
*** SUMMARY ***
Total pot 80 Main pot 60. Side pot 20. | Rake 0
Board [2c 3d 4h 5s Kd]
"""
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    a = r.tables["actions"]
    assert row(a, player="a", action="call")["to_call"] == D("30")
    assert row(a, player="b", action="call")["to_call"] == D("15")
    assert r.tables["hands"]["big_blind"].to_list() == [D("30")]


def test_dead_small_blind_of_a_returning_player_is_not_live():
    text = CASH.replace("cat: posts big blind $1\n", "cat: posts big blind $1\namy: posts small blind $0.50\n").replace(
        "amy: raises $2 to $3", "amy: raises $2.50 to $3").replace("Total pot $37 |", "Total pot $37.50 |").replace(
        "bob collected $36.50", "bob collected $37")
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    a = r.tables["actions"]
    assert row(a, seq=2)["action"] == "post_dead"
    # the dead $0.50 does not count toward amy's raise to $3: she adds $3
    assert row(a, player="amy", action="raise")["amount"] == D("3")
    assert row(r.tables["seats"], player="amy")["put_in"] == D("18.50")


def test_sitting_out_tournament_player_who_posts_is_dealt_in():
    text = PKO.replace("Seat 3: Max (2000 in chips, $10 bounty)", "Seat 3: Max (2000 in chips, $10 bounty) is sitting out")
    r = one(text)
    assert r.quarantine.height == 0, r.quarantine["detail"].to_list()
    m = row(r.tables["seats"], player="Max")
    assert m["sitting_out"] and m["dealt_in"] and m["position"] == "BB"
    assert r.tables["hands"]["n_players"].to_list() == [3]


def test_unknown_time_zone_without_et_is_a_malformed_header():
    r = one(CASH.replace("2024/01/15 20:30:00 CET [2024/01/15 14:30:00 ET]", "2024/01/15 20:30:00 XYZ"))
    q = r.quarantine.row(0, named=True)
    assert (q["reason"], q["detail"]) == ("malformed header", "no readable date/time zone")
    # the same with the ET time in brackets is fine
    assert one(CASH.replace(" CET [", " XYZ [")).tables["hands"]["started_at"].to_list() == [dt.datetime(2024, 1, 15, 19, 30)]


def test_a_large_file_is_parsed_in_pieces_with_true_line_numbers(tmp_path, monkeypatch):
    import pipelines.lib.handhistory as hh

    hands = [CASH.replace("#1001", f"#{5000 + i}") for i in range(12)]
    p = tmp_path / "big.txt"
    p.write_text("header junk\n\n" + "\n\n\n".join(hands), encoding="utf-8")
    whole = parse_files([p])
    monkeypatch.setattr(hh, "_BATCH_BYTES", 2500)  # a few hands per piece
    assert len(hh._pieces(p.read_text(encoding="utf-8"), 2500)) > 3
    cut = hh.parse_files([p], workers=1)
    assert cut.headers_seen == whole.headers_seen == 12
    assert cut.tables["hands"].select("hand_id", "source_line").equals(whole.tables["hands"].select("hand_id", "source_line"))
    assert cut.tables["hands"]["source_line"].to_list()[1] == 3 + CASH.count("\n") + 3
    assert cut.tables["actions"].equals(whole.tables["actions"])
