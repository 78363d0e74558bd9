"""The world's table chat (datasets.chat): it changes no play, plants labelled hand chat, draws its rates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from datasets import chat
from datasets.generate import generate

SAID = re.compile(r'^(.+) said, "(.*)"$')


def _hands(folder: Path) -> list[str]:
    return [h for f in sorted((folder / "hands").glob("*.txt")) for h in f.read_text(encoding="utf-8").split("\n\n\n") if h.strip()]


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    """One small world with hand chat in its mix, and the same world without it (no chat at all)."""
    base = tmp_path_factory.mktemp("chat")
    kw = dict(preset="demo", seed=5, accounts=90, hands=2500, progress=False, workers=1)
    with_chat = generate(base / "with", mix={"soft_play": 1, "chip_dumping": 1, "hand_chat": 2}, **kw)
    without = generate(base / "without", mix={"soft_play": 1, "chip_dumping": 1}, **kw)
    return with_chat, without


pytestmark = pytest.mark.slow


def test_chat_changes_no_hand_event_or_other_label(worlds):
    with_chat, without = worlds
    plain = _hands(without)
    assert len(_hands(with_chat)) == len(plain)
    def n_said(hands):
        return sum(bool(SAID.match(ln)) for h in hands for ln in h.split("\n"))

    assert n_said(_hands(with_chat)) > 50  # there is chat to strip
    assert ["\n".join(ln for ln in h.split("\n") if not SAID.match(ln)) for h in _hands(with_chat)] == \
           ["\n".join(ln for ln in h.split("\n") if not SAID.match(ln)) for h in plain]
    assert n_said(plain) == 0
    for f in sorted((without / "events").glob("*.jsonl")):
        assert f.read_bytes() == (with_chat / "events" / f.name).read_bytes()
    labels = [json.loads(x) for x in (with_chat / "labels.jsonl").read_text().splitlines()]
    other = [x for x in labels if x["kind"] != "hand_chat"]
    assert other == [json.loads(x) for x in (without / "labels.jsonl").read_text().splitlines() if '"hand_chat"' not in x]


def test_planted_lines_are_in_play_before_the_partner_acts(worlds):
    with_chat, _ = worlds
    labels = [json.loads(x) for x in (with_chat / "labels.jsonl").read_text().splitlines()]
    planted = [x for x in labels if x["kind"] == "hand_chat"]
    # two pairs planted; a pair whose partner never played a chatted hand in so small a world never acted: no line
    assert 1 <= len(planted) <= 2 and all(x["hands"] for x in planted)
    by_id = {re.match(r"PokerStars Hand #(\d+)", h).group(1): h.split("\n") for h in _hands(with_chat)}
    for g in planted:
        chatter, partner = g["accounts"]
        assert g["roles"] == {chatter: "chatter", partner: "partner"}
        for hid in g["hands"]:
            lines = by_id[hid]
            hole = lines.index("*** HOLE CARDS ***")
            said = [i for i, ln in enumerate(lines) if ln.startswith(f'{chatter} said, "')]
            # the planted line is after the hole cards and right before one of the partner's decisions
            assert any(i > hole and any(lines[j].startswith(f"{partner}: ") for j in range(i + 1, min(i + 3, len(lines))))
                       for i in said), (hid, said)


def test_world_seeds_draw_the_rates_from_their_ranges():
    drawn = [chat.draw_chat_params(s) for s in range(1, 6)]
    for p in drawn:
        for name, (lo, hi) in chat.RANGES.items():
            assert lo <= getattr(p, name) <= hi
    assert len({p.banter_rate for p in drawn}) == 5
    assert chat.draw_chat_params(None) == chat.ChatParams()
