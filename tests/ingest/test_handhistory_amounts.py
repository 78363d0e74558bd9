"""Unit tests of the PokerStars parser on small hand texts written for these tests: amounts as clients write them,
unsupported games, truncated, cancelled and malformed hands, lines outside hands, lost or moved action lines, and
every single-line deletion or truncation parsed or quarantined, never a crash.

Every expected number below was worked out by hand from the hand text.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

from pipelines.lib.handhistory import parse_files
from tests.ingest.test_handhistory import CASH, D, PKO, SIDE, one, row


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
