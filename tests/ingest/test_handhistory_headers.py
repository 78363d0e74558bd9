"""Unit tests of the PokerStars parser on small hand texts written for these tests: headers, blind variants, names
that look like the format's words, parallel batches, tournament seats and files parsed in pieces.

Every expected number below was worked out by hand from the hand text.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest

from pipelines.lib.handhistory import parse_files
from tests.ingest.test_handhistory import CASH, D, PKO, one, row


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
