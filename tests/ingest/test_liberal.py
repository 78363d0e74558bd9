"""Liberal where the money is sound: lines that carry no money and no action do not cost a balanced hand.

Fixtures are real hands of the corpus edited in memory (the corpus is never edited): shown cards blanked the way
some exports write them (``name:`` and nothing after), a client message no pattern knows, a UTF-8 byte-order mark
on a file that is not valid UTF-8 as a whole. Lines that could change an amount or a street still quarantine.
"""
from __future__ import annotations

import codecs
import hashlib
import re

import polars as pl
import pytest

from pipelines.lib.handhistory import decode_bytes, parse_texts

_FILE = "pokerregion__poker/tests/handhistory/data/PokerStars/HH20200419 Hypatia III - $0,01-$0,02 - USD No Limit Hold'em.txt"
_SHOW = re.compile(r"^(\S+): shows \[[^\]]*\].*$", re.M)


@pytest.fixture(scope="module")
def showdown_hand(corpus_dir) -> str:
    """A real cash hand with a showdown of two players (all-in on the flop)."""
    text = decode_bytes((corpus_dir / _FILE).read_bytes())
    hands = [h.strip("\n") for h in re.split(r"\n\s*\n(?=PokerStars )", text) if h.startswith("PokerStars")]
    hand = next(h for h in hands if len(_SHOW.findall(h)) == 2 and "and is all-in" in h)
    return hand + "\n"


def _parse(text: str, name: str = "x.txt"):
    return parse_texts([text], [name])


def test_the_real_hand_is_stored_as_it_is(showdown_hand):
    r = _parse(showdown_hand)
    assert r.tables["hands"].height == 1 and r.quarantine.height == 0
    assert r.tables["hole_cards"].filter(pl.col("source") == "shown").height == 2
    assert r.tables["unknown_lines"].height == 0


def test_blanked_shown_cards_store_the_hand_with_those_cards_unknown(showdown_hand):
    blanked = _SHOW.sub(lambda m: f"{m.group(1)}:  ", showdown_hand)
    blanked = re.sub(r"showed \[[^\]]*\]", "showed [  ]", blanked)
    assert blanked != showdown_hand
    whole, r = _parse(showdown_hand), _parse(blanked)
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    # the money and the actions are those of the hand with its cards; only the shown cards are missing
    for t in ("seats", "actions", "collections", "pots", "boards"):
        assert r.tables[t].equals(whole.tables[t]), t
    assert r.tables["hole_cards"].filter(pl.col("source") == "shown").height == 0
    u = r.tables["unknown_lines"]
    assert u["kind"].to_list() == ["blanked show", "blanked show"]
    assert u["text"].str.ends_with(":").all()
    assert sorted(u["text"].str.strip_suffix(":").to_list()) == sorted(_SHOW.findall(showdown_hand))


def test_an_unknown_client_message_is_kept_and_the_hand_stored(showdown_hand):
    lines = showdown_hand.split("\n")
    lines.insert(2, "Table leave user")
    r = _parse("\n".join(lines))
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    assert r.tables["unknown_lines"].select("line", "kind", "text").rows() == [(2, "unknown", "Table leave user")]


@pytest.mark.parametrize("line", [
    "Small Blind: Table deposit $347.50",  # money
    "somebody: raises it all",  # a betting word
    "*** FLO",  # a street marker cut short: the street of the lines after it would be wrong
    "Bonus 25 paid",  # a number on its own
])
def test_a_line_that_may_carry_money_or_structure_still_quarantines(showdown_hand, line):
    lines = showdown_hand.split("\n")
    lines.insert(3, line)
    r = _parse("\n".join(lines))
    assert r.tables["hands"].height == 0 and r.tables["unknown_lines"].height == 0
    assert r.quarantine.select("reason").to_series().to_list() == ["unparsed line"]
    assert line in r.quarantine.item(0, "detail")


def test_a_harmless_line_in_a_hand_whose_money_does_not_balance_is_no_excuse(showdown_hand):
    blanked = _SHOW.sub(lambda m: f"{m.group(1)}:  ", showdown_hand)
    bad = re.sub(r"^Total pot \$4\.29", "Total pot $5.29", blanked, flags=re.M)
    assert bad != blanked
    r = _parse(bad)
    assert r.tables["hands"].height == 0 and r.tables["unknown_lines"].height == 0
    assert r.quarantine.item(0, "reason") == "unbalanced"


def test_a_byte_order_mark_on_a_file_decoded_as_windows_1252_is_stripped(showdown_hand):
    # a player name in Windows-1252 makes the file invalid UTF-8 as a whole; the mark must not stay as "ï»¿"
    text = showdown_hand.replace("mosenz", "Jos\u00e9")
    data = codecs.BOM_UTF8 + text.encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    decoded = decode_bytes(data)
    assert decoded.startswith("PokerStars Hand #") and "Jos\u00e9" in decoded
    r = _parse(decoded)
    assert r.tables["hands"].height == 1 and r.quarantine.height == 0
    assert "Jos\u00e9" in r.tables["seats"]["player"].to_list()


def test_a_research_dump_with_hashed_names_and_blanked_cards_is_stored_with_the_cards_unknown(showdown_hand):
    names = re.findall(r"(?m)^Seat \d+: (.+?) \(\$[\d.]+ in chips\)", showdown_hand)
    dump = showdown_hand
    for n in sorted(names, key=len, reverse=True):
        dump = re.sub(rf"(?<!\w){re.escape(n)}(?!\w)", hashlib.md5(n.encode()).hexdigest(), dump)
    dump = re.sub(r"(?m)^(Dealt to \S+) \[[^\]]*\]$", r"\1 [?? ??]", dump)
    dump = re.sub(r"(shows|showed) \[[^\]]*\]", r"\1 [?? ??]", dump)
    assert "[?? ??]" in dump and "Dealt to" in dump
    whole, r = _parse(showdown_hand), _parse(dump)
    assert r.quarantine.height == 0 and r.tables["hands"].height == 1
    assert r.tables["hole_cards"].height == 0  # every card blanked: none stored, none made up
    h = r.tables["hands"].row(0, named=True)
    assert h["n_players"] == whole.tables["hands"].item(0, "n_players") and not h["all_cards_known"]
    assert r.tables["seats"].drop("player").equals(whole.tables["seats"].drop("player"))
    assert r.tables["actions"].drop("player").equals(whole.tables["actions"].drop("player"))


def _free_seat(hand: str) -> int:
    used = {int(n) for n in re.findall(r"(?m)^Seat (\d+): ", hand)}
    return min(set(range(1, 11)) - used)


def test_a_pokertracker_4_export_is_read_as_the_hand_itself(showdown_hand):
    """PokerTracker 4's export of a PokerStars hand (the layout of public PT4 exports): a seat sitting out is
    listed first, out of seat order, its summary line is its name alone, and no line keeps a trailing space. The
    hand is stored with the tables of the hand as PokerStars wrote it, the seat sitting out dealt no cards."""
    n = _free_seat(showdown_hand)
    table_line = re.search(r"(?m)^Table .*\n", showdown_hand)
    native = (showdown_hand[:table_line.end()] + showdown_hand[table_line.end():].replace(
        "*** HOLE CARDS ***", f"Seat {n}: Sleeper Z ($5 in chips) is sitting out\n*** HOLE CARDS ***", 1))
    native = re.sub(r"(?m)^(Seat \d+: [^\n]*)\Z", rf"\1\nSeat {n}: Sleeper Z folded before Flop (didn't bet)",
                    native.rstrip("\n")) + "\n"
    pt4 = (showdown_hand[:table_line.end()] + f"Seat {n}: Sleeper Z ($5 in chips) is sitting out\n"
           + showdown_hand[table_line.end():])
    pt4 = re.sub(r"(?m)^(Board \[[^\]]*\])$", rf"\1\nSeat {n}: Sleeper Z", pt4)
    pt4 = re.sub(r"(?m)[ \t]+$", "", pt4)
    assert pt4 != native and f"\nSeat {n}: Sleeper Z\n" in pt4
    want, got = _parse(native), _parse(pt4)
    assert want.quarantine.height == 0 and got.quarantine.height == 0 and got.tables["hands"].height == 1
    key = ["hand_id", "seat"]
    assert got.tables["seats"].sort(key).equals(want.tables["seats"].sort(key))
    sleeper = got.tables["seats"].filter(pl.col("player") == "Sleeper Z").row(0, named=True)
    assert (sleeper["seat"], sleeper["dealt_in"], sleeper["put_in"]) == (n, False, 0)
    for name in ("actions", "collections", "pots", "hole_cards", "boards"):
        assert got.tables[name].equals(want.tables[name]), name


def test_an_export_with_every_name_masked_is_quarantined_naming_its_layout(showdown_hand):
    """An export whose names are all masked alike (Holdem Manager 3's "Mask Player Names": every name becomes
    "Player") cannot give a line to a seat: the hand is quarantined and the detail names the layout."""
    names = re.findall(r"(?m)^Seat \d+: (.+?) \(\$[\d.]+ in chips\)", showdown_hand)
    masked = showdown_hand
    for name in sorted(names, key=len, reverse=True):
        masked = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", "Player", masked)
    r = _parse(masked)
    assert r.tables["hands"].height == 0
    assert r.quarantine.select("reason").rows() == [("malformed hand",)]
    assert r.quarantine["detail"].to_list()[0].startswith(
        "every seat is named Player: the layout of an export with the names masked (as Holdem Manager 3's")
    # one name seated twice among others is still told as such
    twice = showdown_hand.replace(f"{names[1]} (", f"{names[0]} (", 1)
    assert _parse(twice).quarantine["detail"].to_list() == [f"duplicate seat or player: {names[0]}"]
