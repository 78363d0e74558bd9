"""Unit tests of the PokerStars parser on small hand texts written for these tests.

Every expected number below was worked out by hand from the hand text.
"""
from __future__ import annotations

import codecs
import datetime as dt
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
