"""Account names as real rooms have them (issue 31 item 2): the mix, the world it leaves unchanged, the parser."""

from __future__ import annotations

import csv
import dataclasses
import json
import random
import re
import unicodedata
from datetime import timedelta

import numpy as np
import pytest
from test_hhwriter import T0, RandomPolicy

from datasets.engine import play_hand
from datasets.rake import rake_rule_for
from datasets.records import GameConfig, SeatState, TournamentInfo
from datasets.generate import generate, plan_world
from datasets.hhwriter import write_hands
from datasets.names import DRESSED_SHARE, FORMAT_WORDS, FORMS, dress_names, name_key
from datasets.presets import PRESETS

# Names of the mix the project's parser cannot read yet (each hand holding one is quarantined):
# found by `railbird ingest` of `railbird generate --preset mixed --hands 20000 --seed 7` (435 of
# 22,364 hands quarantined) and by writing every form of the mix through the parser. Parser bugs,
# owned by ingest; the names stay in the mix.
#: names the parser once misread (hands holding them were quarantined); each now reads back
ONCE_UNREADABLE = [
    "Seat 1:",            # 'Seat 1:: posts the ante 10': read as a seat line
    "Seat 9: wolf",       # 'Seat 9: wolf: posts small blind $0.02', 'Seat 9: wolf leaves the table'
    "Seat 1:4",
    "*** SUMMARY ***",    # '*** SUMMARY *** collected 40 from pot' ends the hand's action early: unbalanced
    "*** FLOP ***",
    "Dealt to",
    "tigerbear   38 ",    # a run of spaces and a trailing space: 'Uncalled bet (36) returned to tigerbear   38 '
    "Til   tLuck ",
]


def _hands_with(names: list[str], seed: int = 1) -> list:
    """Two hands per name (one cash, one progressive-knockout), the name in seat 1 against two plain players."""
    rng = np.random.default_rng(seed)
    pol = RandomPolicy(rng)
    recs = []
    for h, name in enumerate(names):
        for k in range(2):
            tour = TournamentInfo("3000000001", 500, 50, 2, 500, progressive=True) if k else None
            cfg = GameConfig("holdem", "no_limit", 10, 20, 0,
                             None if tour else rake_rule_for(10, 20, "no_limit", "holdem"))
            bounty = 1000 if tour else None
            seats = [SeatState(1, name, 2000, bounty=bounty), SeatState(3, f"p{h}x", 1500, bounty=bounty),
                     SeatState(5, f"p{h}y", 30, bounty=bounty)]
            rec = play_hand(cfg, seats, (1, 3)[k], {s.player: pol for s in seats}, rng, str(250000000000 + 2 * h + k),
                            T0 + timedelta(seconds=41 * (2 * h + k)), "3000000001 1" if tour else "Juno", 6,
                            tournament=tour)
            rec.extra_lines.append((-1, f"{name} is connected"))
            recs.append(rec)
    return recs


def _unread(names: list[str]) -> list[str]:
    """The names whose hands the parser quarantines or whose seat it stores under another name."""
    hh = pytest.importorskip("pipelines.lib.handhistory")
    recs = _hands_with(names)
    parsed = hh.parse_text(write_hands(recs), "names.txt")
    owner = {r.hand_id: r.seats[0].player for r in recs}
    bad = {owner[h] for h in parsed.quarantine["hand_id"].to_list() if h in owner}
    seats = parsed.tables["seats"].filter(parsed.tables["seats"]["seat"] == 1)
    stored = dict(zip(seats["hand_id"].to_list(), seats["player"].to_list()))
    bad |= {n for h, n in owner.items() if h not in stored or stored[h] != n}
    return sorted(bad)


def test_the_mix_has_every_form_and_stays_unique():
    plain = [f"plain{i}" for i in range(4000)]
    shown = dress_names(plain, random.Random(11))
    dressed = [s for p, s in shown.items() if s != p]
    assert abs(len(dressed) / len(plain) - DRESSED_SHARE) < 0.03
    assert len({name_key(s) for s in shown.values()}) == len(plain)  # one-to-one, even folded and trimmed
    assert all(s and not s[0].isspace() and not re.search(r"[\r\n\t]", s) for s in shown.values())
    assert all(s == unicodedata.normalize("NFC", s) for s in dressed)
    assert min(map(len, dressed)) == 1 and max(map(len, dressed)) >= 30

    def share(pred) -> int:
        return sum(1 for s in dressed if pred(s))

    assert share(lambda s: s[0] in "\"'`") and share(lambda s: s[-1] in "\"'`")
    assert share(lambda s: any(q in s[1:-1] for q in "\"'"))
    assert share(lambda s: "\\" in s) and share(lambda s: "[" in s or "(" in s or "{" in s)
    assert share(lambda s: ": " in s) and share(lambda s: s.endswith(":"))
    assert all(share(lambda s, c=c: c in s) for c in "#$%&<>")
    assert share(lambda s: "  " in s.strip()) and share(lambda s: s.endswith(" "))
    assert share(lambda s: re.search(r"[À-ɏ]", s) is not None)                          # accents
    assert share(lambda s: re.search(r"[\u0400-\u04ff\u4e00-\u9fff\u0600-\u06ff]", s) is not None)  # scripts
    assert share(lambda s: re.search(r"[\U0001F300-\U0001FAFF]", s) is not None)        # emoji
    assert share(lambda s: "\u200d" in s)                                                # joined emoji
    assert share(lambda s: s in FORMAT_WORDS) >= 5
    assert share(lambda s: s.startswith("Seat ")) and share(lambda s: s.startswith("*** "))
    assert {"folds", "said,", "Total pot", "*** FLOP ***", "Seat 1:"} <= set(FORMAT_WORDS)
    assert len(FORMS) >= 10


def test_names_come_from_their_own_stream():
    a = dress_names([f"n{i}" for i in range(300)], random.Random(5))
    b = dress_names([f"n{i}" for i in range(300)], random.Random(5))
    c = dress_names([f"n{i}" for i in range(300)], random.Random(6))
    assert a == b and a != c


def _norm(x, plain: dict[str, str]):
    """``x`` with every shown account name put back to its plain name (dataclasses, containers, text lines)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _norm(getattr(x, f.name), plain) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {_norm(k, plain): _norm(v, plain) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_norm(v, plain) for v in x]
    if isinstance(x, str):
        if x in plain:
            return plain[x]
        for shown in sorted(plain, key=len, reverse=True):  # a table line: 'NAME is connected'
            if x.startswith(shown + " "):
                return plain[shown] + x[len(shown):]
        return x
    return x


@pytest.mark.slow
def test_the_world_is_the_same_but_for_the_names(tmp_path):
    kw = dict(preset="demo", seed=5, accounts=50, hands=500)
    w_plain, *_ = plan_world(**kw, names="plain")
    w_real, *_ = plan_world(**kw, names="realistic")
    plain = w_real.plain
    assert len(plain) >= 8 and not w_plain.plain
    assert [plain.get(a, a) for a in w_real.pop.accounts] == list(w_plain.pop.accounts)
    assert _norm(w_real.groups, plain) == _norm(w_plain.groups, {})
    assert _norm(w_real.pop.persons, plain) == _norm(w_plain.pop.persons, {})
    recs: dict[str, list] = {"plain": [], "realistic": []}
    for mode, out in recs.items():
        generate(tmp_path / mode, **kw, progress=False, names=mode, on_record=out.append)
    assert len(recs["plain"]) == len(recs["realistic"]) > 300
    assert [_norm(r, plain) for r in recs["realistic"]] == [_norm(r, {}) for r in recs["plain"]]
    for f in sorted((tmp_path / "plain" / "events").glob("*.jsonl")):
        want = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        mine = tmp_path / "realistic" / "events" / f.name
        got = [json.loads(line) for line in mine.read_text(encoding="utf-8").splitlines()]
        assert [{k: plain.get(v, v) if k in ("account", "to") else v for k, v in e.items()} for e in got] == want
    rows = list(csv.reader(open(tmp_path / "realistic" / "accounts.csv", newline="", encoding="utf-8")))
    assert {r[0] for r in rows[1:]} == set(w_real.pop.accounts)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_uses_the_mix(preset):
    world, *_ = plan_world(preset=preset, seed=3, accounts=200, hands=400)
    assert len(world.plain) >= 20
    assert all(a in world.pop.accounts for a in world.plain)


@pytest.mark.slow
def test_the_parser_reads_the_whole_mix():
    shown = dress_names([f"plain{i}" for i in range(1500)], random.Random(2), share=1.0)
    assert _unread(list(shown.values())) == []


@pytest.mark.parametrize("name", ONCE_UNREADABLE)
def test_the_parser_reads_names_it_once_misread(name):
    assert _unread([name]) == []
