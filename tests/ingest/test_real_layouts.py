"""Layouts of the real corpus that once cost a hand, each read from its file in ../shared/corpora (never copied).

Each test parses one real file and checks the hand is stored with the money it states, the odd line kept where it
carries no money, and nothing else of the file changed; the hands whose money or structure cannot be trusted stay
quarantined with their reason (the last test).
"""
from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

from pipelines.lib.handhistory import decode_bytes, parse_texts

_CHAZ = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files"


def _parse(corpus_dir, rel: str, edit=None):
    text = decode_bytes((corpus_dir / rel).read_bytes())
    if edit is not None:
        text = edit(text)
    return parse_texts([text], [rel])


def _seats(r) -> dict:
    return {row["player"]: row for row in r.tables["seats"].iter_rows(named=True)}


def test_a_fold_noted_as_a_disconnect_is_a_fold(corpus_dir):
    r = _parse(corpus_dir, f"{_CHAZ}/cash/Stars/Flop/PLO-6max-USD-10-20-201703.converted.disconnected.folds.txt")
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    a = r.tables["actions"].filter(pl.col("player") == "Small Blind")
    assert a["action"].to_list() == ["post_sb", "fold"]
    assert _seats(r)["UTGplus2"]["collected"] == Decimal("50")
    # the same line without the note reads the same hand
    plain = _parse(corpus_dir, f"{_CHAZ}/cash/Stars/Flop/PLO-6max-USD-10-20-201703.converted.disconnected.folds.txt",
                   lambda t: t.replace("folds (disconnect)", "folds"))
    for name in ("seats", "actions", "collections", "pots"):
        assert r.tables[name].equals(plain.tables[name]), name


def test_a_table_deposit_is_a_table_event_outside_the_pot(corpus_dir):
    r = _parse(corpus_dir, f"{_CHAZ}/cash/Stars/Flop/NLHE-6max-USD-3.00-6.00-201310.old.converted.walk.txt")
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    ev = r.tables["table_events"]
    assert ev.select("player", "event", "detail").rows() == [("Small Blind", "other", "Table deposit $347.50")]
    s = _seats(r)
    # the deposit is chips added to the stack after the hand, not money of the pot: the stacks are the hand's own
    assert (s["Small Blind"]["stack_start"], s["Small Blind"]["put_in"], s["Small Blind"]["stack_end"]) == (
        Decimal("252.50"), Decimal("3"), Decimal("249.50"))
    assert s["HOOP"]["collected"] == Decimal("9")


def test_a_deposit_naming_an_amount_out_of_the_pattern_still_quarantines(corpus_dir):
    r = _parse(corpus_dir, f"{_CHAZ}/cash/Stars/Flop/NLHE-6max-USD-3.00-6.00-201310.old.converted.walk.txt",
               lambda t: t.replace("Table deposit $347.50", "Table deposit $347.50 from pot"))
    assert r.tables["hands"].height == 0 and r.quarantine["reason"].to_list() == ["unparsed line"]


def test_a_research_dump_whose_summary_names_another_player_is_stored(corpus_dir):
    r = _parse(corpus_dir, "jejellyroll-fr__fpdb-3/regression-test-files/cash/Stars/Flop/258753941248_anon5.txt")
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    u = r.tables["unknown_lines"]
    assert u.select("kind", "text").rows() == [("other name", "Seat 5: Player6 (didn't bet)")]
    s = _seats(r)
    assert "Player6" not in s and s["Player5"]["put_in"] == 0 and s["Player1"]["collected"] == Decimal("0.94")


def test_a_summary_seat_line_of_another_name_with_money_still_quarantines(corpus_dir):
    rel = "jejellyroll-fr__fpdb-3/regression-test-files/cash/Stars/Flop/258753941248_anon5.txt"
    r = _parse(corpus_dir, rel, lambda t: t.replace("Seat 1: Player1 (button) collected", "Seat 1: Player9 (button) collected"))
    assert r.tables["hands"].height == 0
    assert r.quarantine["reason"].to_list() == ["seat names disagree"]
    assert r.quarantine["detail"].str.starts_with("seat 1 is Player1 in the seat list, the summary says: Seat 1: "
                                                  "Player9 (button) collected").all()


def test_a_header_broken_over_two_lines_is_read_joined(corpus_dir):
    r = _parse(corpus_dir, "cat12079801__pokerstars-analyzer/test/_files/sample1.txt")
    assert r.quarantine.filter(pl.col("input_kind") == "hand").height == 0
    h = r.tables["hands"].row(0, named=True)
    assert (h["hand_id"], h["tournament_id"], h["game"], h["limit_type"]) == ("100000000000", "1000000000", "holdem", "no_limit")
    assert (h["big_blind"], h["total_pot"], h["table_name"]) == (Decimal("20"), Decimal("77"), "1000000000 1")
    assert h["started_at"].isoformat() == "2020-03-22T15:53:09"
    # the same hand with its header on one line: the same tables but for the hash of its text
    one = _parse(corpus_dir, "cat12079801__pokerstars-analyzer/test/_files/sample1.txt",
                 lambda t: t.replace("USD\nHold'em", "USD Hold'em", 1))
    for name in ("seats", "actions", "collections", "pots", "hole_cards"):
        assert r.tables[name].equals(one.tables[name]), name


@pytest.mark.parametrize("rel, hand_id, total, returned", [
    (f"{_CHAZ}/cash/Stars/Flop/NLHE-10max-USD-1.00-2.00-200910.HM1.export.raiseTo.txt", "1003659126", "13", ("Player2", "7.50")),
    (f"{_CHAZ}/cash/Stars/Flop/NLHE-10max-USD-1.00-2.00-200910.HM1.shows.one.txt", "1002775011", "103", ("Player1", "56")),
])
def test_a_holdem_manager_1_export_is_read_with_its_pot_gross_of_rake(corpus_dir, rel, hand_id, total, returned):
    """Holdem Manager 1 writes the total pot net of rake and no uncalled-bet line: the bet nobody called is
    returned, and the pot is the total plus the rake, both exactly (put in = collected + rake + returned)."""
    r = _parse(corpus_dir, rel)
    assert r.quarantine.height == 0
    h = r.tables["hands"].row(0, named=True)
    assert (h["hand_id"], h["total_pot"]) == (hand_id, Decimal(total))
    s = _seats(r)
    assert s[returned[0]]["returned"] == Decimal(returned[1])
    put = sum(row["put_in"] for row in s.values())
    assert put == h["total_pot"] == sum(row["collected"] for row in s.values()) + h["rake"]
    assert r.tables["pots"]["amount"].to_list() == [Decimal(total)]
    # a shown card blanked ("[XX Qs]"): the shown cards are unknown, not stored as a card "XX"
    assert not r.tables["hole_cards"]["cards"].list.contains("XX").any()


def test_a_net_total_that_does_not_add_up_exactly_still_quarantines(corpus_dir):
    r = _parse(corpus_dir, f"{_CHAZ}/cash/Stars/Flop/NLHE-10max-USD-1.00-2.00-200910.HM1.export.raiseTo.txt",
               lambda t: t.replace("Rake $0.65", "Rake $0.60"))
    assert r.tables["hands"].height == 0 and r.quarantine["reason"].to_list() == ["unbalanced"]


def test_a_header_glued_to_a_hand_cut_short_starts_its_own_hand(corpus_dir):
    """Two hands of this file are cut short with the next hand's header written on the same line: the cut hands
    stay quarantined as truncated, the glued hands are read, and the other hands of the file are as before."""
    rel = f"{_CHAZ}/tour/Stars/Flop/NLHE-9max-Freeroll-MTT-201209.concatenated.partial.txt"
    r = _parse(corpus_dir, rel)
    q = r.quarantine.filter(pl.col("input_kind") == "hand")
    assert q.select("hand_id", "reason").rows() == [("86564040647", "truncated hand"), ("86568539580", "truncated hand")]
    h = r.tables["hands"].filter(pl.col("hand_id").is_in(["86564270670", "86568688159"])).sort("hand_id")
    assert h.select("hand_id", "total_pot").rows() == [("86564270670", Decimal("100")), ("86568688159", Decimal("1020"))]
    assert h["source_line"].to_list() == [110, 1436]  # (the line the header was glued to)
    # the same file with the glued headers on lines of their own: the same hands
    apart = _parse(corpus_dir, rel, lambda t: t.replace("JPokerStars Hand #", "J\nPokerStars Hand #").replace(
        "Player25: PokerStars Hand #", "Player25: \nPokerStars Hand #"))
    assert sorted(apart.tables["hands"]["hand_id"].to_list()) == sorted(r.tables["hands"]["hand_id"].to_list())
    glued = pl.col("hand_id").is_in(["86564270670", "86568688159"])
    for name in ("seats", "actions", "collections", "hole_cards"):
        assert apart.tables[name].filter(glued).equals(r.tables[name].filter(glued)), name


@pytest.mark.parametrize("rel, reason", [
    (f"{_CHAZ}/cash/Stars/Flop/LO8-6max-USD-0.05-0.10-20090315.Hand-cancelled.txt", "hand cancelled"),
    (f"{_CHAZ}/cash/Stars/Flop/PLO-6max-USD-2.00-4.00-201403.2.partial.txt", "truncated hand"),
    ("HHSmithy__PokerHandHistoryParser/HandHistories.Parser.UnitTests/SampleHandHistories/PokerStars/CashGame/Limits/"
     "AnteTable.txt", "unbalanced"),
    ("HHSmithy__PokerHandHistoryParser/HandHistories.Parser.UnitTests/SampleHandHistories/PokerStars/CashGame/"
     "PlayerTests/WithSittingOut.txt", "seat names disagree"),
])
def test_hands_whose_money_or_structure_cannot_be_trusted_stay_quarantined(corpus_dir, rel, reason):
    r = _parse(corpus_dir, rel)
    q = r.quarantine.filter(pl.col("input_kind") == "hand")
    assert q.height >= 1 and set(q["reason"].to_list()) == {reason}
    assert not set(q["hand_id"].to_list()) & set(r.tables["hands"]["hand_id"].to_list())


_SMITHY = "HHSmithy__PokerHandHistoryParser/HandHistories.Parser.UnitTests/SampleHandHistories/PokerStars/CashGame"


def test_an_ante_hand_no_reading_of_the_antes_balances_says_so(corpus_dir):
    """AnteTable.txt: $0.90 put in (blinds $0.35, antes $0.30, a raise of $0.25 once $0.25 returned), a $0.50 pot.
    PokerStars counts the antes of its cash ante tables in the pot (BasicHand.txt, the same tables a day apart:
    $1.89 put in, antes included, is its total pot), and leaving them out gives $0.60: the detail says both."""
    q = _parse(corpus_dir, f"{_SMITHY}/Limits/AnteTable.txt").quarantine
    assert q["detail"].to_list()[0].endswith("(antes 0.30 posted: with them 0.90 put in, without them 0.60; neither"
                                             " is the total pot 0.50, so no reading of the antes balances the hand)")
    basic = _parse(corpus_dir, f"{_SMITHY}/HandActionTests/BasicHand.txt")
    assert basic.quarantine.height == 0 and basic.tables["hands"]["total_pot"].to_list() == [Decimal("1.89")]
    # a total pot that leaves the antes out balances under that reading alone, which the detail names
    out = _parse(corpus_dir, f"{_SMITHY}/HandActionTests/BasicHand.txt",
                 lambda t: t.replace("Total pot $1.89", "Total pot $1.77").replace("$1.81", "$1.69"))
    assert out.tables["hands"].height == 0
    assert out.quarantine["detail"].str.ends_with(
        "(the total pot leaves out the 0.12 of antes posted: a layout railbird does not read)").all()


def test_a_seat_list_whose_names_alone_were_edited_names_the_seats_that_disagree(corpus_dir):
    """WithSittingOut.txt: its seat list names neverJa(1)ger and Blahdi:42eblah, every other line neverJager and
    Blahdieblah (the seat list alone edited); the blinds, the returned bet and the pot are paid to names no seat
    holds, so the hand stays quarantined and says which seats disagree."""
    q = _parse(corpus_dir, f"{_SMITHY}/PlayerTests/WithSittingOut.txt").quarantine
    assert q.select("reason").rows() == [("seat names disagree",)]
    assert q["detail"].to_list() == [
        "seat 1 is neverJa(1)ger in the seat list, the summary says: Seat 1: neverJager (button) folded before Flop"
        " (didn't bet); seat 4 is Blahdi:42eblah in the seat list, the summary says: Seat 4: Blahdieblah (big blind)"
        " collected ($0.16) (the money is paid to names no seat holds)"]
