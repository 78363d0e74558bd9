"""Real hands damaged at random, as files get damaged: lines lost, doubled, swapped, cut short, a digit changed, a
stray character. Whatever the damage, the parser must not fail, must account for every hand header (stored or
quarantined, once), and every hand it stores must satisfy the invariants of ``conftest.invariant_breaks``: a damaged
hand is either still a sound hand or quarantined. Seeded: the same mutants on every run."""

from __future__ import annotations

import random
import re

import polars as pl
import pytest

from pipelines.lib.handhistory import decode_bytes, parse_texts

MUTANTS = 2500
_HEADER = re.compile(r"PokerStars (?:Zoom |Home Game )?(?:Hand|Game) #")
SEED = 20261203


def _mutate(hand: str, kind: int, rng: random.Random) -> str:
    lines = hand.split("\n")
    i = rng.randrange(1, len(lines))  # never the header: each mutant keeps its id
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(i, lines[i])
    elif kind == 2 and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == 3:
        lines = lines[:i]
    elif kind == 4:
        digits = [j for j, c in enumerate(lines[i]) if c.isdigit()]
        if digits:
            j = rng.choice(digits)
            lines[i] = lines[i][:j] + str(rng.randrange(10)) + lines[i][j + 1:]
    elif kind == 5:
        j = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:j] + rng.choice(["\x00", "\ufffd", "é", "$", ":", " ", "(", ")", "[", "]", "*", "\t", "€", "-"]) + lines[i][j:]
    elif kind == 6:
        lines[i] = lines[i][:rng.randrange(len(lines[i]) + 1)]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def mutants(corpus_dir):
    hands = []
    for p in sorted(corpus_dir.rglob("*")):
        if p.is_file():
            text = decode_bytes(p.read_bytes())
            hands += [h.strip("\n") for h in re.split(r"\n\s*\n(?=PokerStars )", text)
                      if h.startswith("PokerStars") and "*** SUMMARY ***" in h and ("Hold'em" in h or "Omaha" in h)
                      and len(_HEADER.findall(h)) == 1]  # not the partial hands a real file has glued into another
    assert len(hands) > 5000
    rng = random.Random(SEED)
    out = []
    for n in range(MUTANTS):
        hand = _mutate(rng.choice(hands), n % 7, rng)
        out.append(re.sub(r"#\d+", f"#{900_000_000_000 + n}", hand, count=1))  # each mutant its own hand id
    return out


def test_damaged_hands_are_all_accounted_for_and_none_stored_unsound(mutants, hand_invariant_breaks):
    r = parse_texts(["\n\n".join(mutants) + "\n"], ["damaged.txt"])
    # (a line cut to nothing inside a summary ends the hand there: its last lines are text outside any hand)
    stored, quarantined = r.tables["hands"], r.quarantine.filter(pl.col("input_kind") == "hand")
    assert r.headers_seen == stored.height + quarantined.height == MUTANTS
    ids = stored["hand_id"].to_list() + quarantined["hand_id"].to_list()
    assert len(set(ids)) == MUTANTS  # each mutant once, stored or quarantined
    assert set(hand_invariant_breaks(r.tables).values()) == {0}, hand_invariant_breaks(r.tables)
    # the damage is real: most mutants are caught, and every kind of damage leaves some hands sound (a doubled
    # chat line, a digit changed into itself...): neither "store everything" nor "refuse everything"
    assert 0.4 < quarantined.height / MUTANTS < 0.8
    assert quarantined["reason"].n_unique() >= 5
