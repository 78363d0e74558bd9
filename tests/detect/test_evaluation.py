"""The scorer of spec/evaluation.md on hand-made cases and labels with known figures."""

import json

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from pipelines.lib import evaluation as E

LABELS = [
    {"group": "g1", "kind": "soft_play", "accounts": ["amy", "bob"]},
    {"group": "g2", "kind": "soft_play", "accounts": ["cat", "dan", "eve"], "strength": 0.3},
    {"group": "g3", "kind": "chip_dumping", "accounts": ["fay", "gus"]},
    {"group": "g4", "kind": "seat_handoff", "accounts": ["hal"], "tournaments": ["T1"]},
]


def case(kind, accounts, score, flagged=True, tournaments=()):
    return {"kind": kind, "accounts": list(accounts), "score": score, "flagged": flagged, "tournaments": list(tournaments)}


def test_matching_rules():
    assert E.matches(case("soft_play", ["bob", "amy", "zed"], 1), LABELS[0])
    assert not E.matches(case("soft_play", ["amy", "zed"], 1), LABELS[0])
    assert E.matches(case("soft_play", ["dan", "eve"], 1), LABELS[1])  # two of three suffice
    assert E.matches(case("seat_handoff", ["hal"], 1, tournaments=["T1", "T9"]), LABELS[3])
    assert not E.matches(case("seat_handoff", ["hal"], 1, tournaments=["T2"]), LABELS[3])


def test_figures_per_kind():
    cases = [
        case("soft_play", ["amy", "bob"], 9.0),
        case("soft_play", ["fay", "gus"], 8.0),  # right people, wrong kind: precise, not recall
        case("soft_play", ["zed", "yan"], 7.0),  # a false flag
        case("soft_play", ["cat", "dan"], 2.0, flagged=False),  # found only unflagged
        case("chip_dumping", ["gus", "fay"], 5.0),
    ]
    ev = E.evaluate(cases, LABELS, accounts_seen=2000)
    sp = ev.kinds["soft_play"]
    assert (sp.groups, sp.groups_found, sp.flagged) == (2, 1, 3)
    assert sp.recall == pytest.approx(0.5)
    assert sp.precision == pytest.approx(2 / 3)
    assert sp.false_flags == 1
    # AP over all soft_play cases vs same-kind matches: relevant = [1,0,0,1] by score
    ref = average_precision_score([1, 0, 0, 1], [9, 8, 7, 2])
    assert sp.average_precision == pytest.approx(ref)
    assert sp.recall_by_strength["[0.25,0.5)"] == {"groups": 1, "found": 0, "recall": 0.0}
    cd = ev.kinds["chip_dumping"]
    assert (cd.recall, cd.precision, cd.false_flags) == (1.0, 1.0, 0)
    assert ev.false_flags == 1 and ev.false_flags_per_10k == pytest.approx(5.0)
    assert ev.kinds["seat_handoff"].recall == 0.0


def test_average_precision_with_ties_matches_sklearn():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 5, size=200).astype(float)
    r = rng.uniform(size=200) < 0.3
    assert E.average_precision(list(s), list(r)) == pytest.approx(average_precision_score(r, s))


def test_average_precision_ranks_by_q_value_then_score():
    lab = [{"group": "g", "kind": "soft_play", "accounts": ["amy", "bob"]}]
    right, wrong = case("soft_play", ["amy", "bob"], 2.0), case("soft_play", ["zed", "yan"], 9.0)
    # no q-values (another system's export): by score, as evaluation.md says
    assert E.evaluate([right, wrong], lab, 100).kinds["soft_play"].average_precision == pytest.approx(0.5)
    # the queue's order: the lower estimated false-discovery rate first, whatever the score
    q = [dict(right, q_value=0.001), dict(wrong, q_value=0.2)]
    assert E.evaluate(q, lab, 100).kinds["soft_play"].average_precision == pytest.approx(1.0)
    # equal q-values: the score breaks the tie; a case without one comes after every case with one
    tied = [dict(right, q_value=0.01), dict(wrong, q_value=0.01)]
    assert E.evaluate(tied, lab, 100).kinds["soft_play"].average_precision == pytest.approx(0.5)
    last = [dict(right, q_value=0.3), dict(wrong, q_value=None)]
    assert E.evaluate(last, lab, 100).kinds["soft_play"].average_precision == pytest.approx(1.0)
    # groups to find and no case that finds one: 0, not "no figure" (a mean over populations must count it)
    assert E.evaluate([wrong], lab, 100).kinds["soft_play"].average_precision == 0.0
    assert E.evaluate([wrong], [], 100).kinds["soft_play"].average_precision is None


def test_cli_prints_figures(tmp_path, capsys):
    import argparse

    from pipelines.commands import evaluate
    from pipelines.lib.errors import RailbirdError

    def main(argv):
        parser = argparse.ArgumentParser()
        evaluate.configure(parser)
        try:
            return evaluate.main(parser.parse_args(argv[1:]))
        except RailbirdError:
            return 2

    cpath, lpath = tmp_path / "cases.jsonl", tmp_path / "labels.jsonl"
    cpath.write_text("\n".join(json.dumps(c) for c in [case("soft_play", ["amy", "bob"], 3.0)]) + "\n")
    lpath.write_text("\n".join(json.dumps(g) for g in LABELS) + "\n")
    hands = tmp_path / "hands"
    hands.mkdir()
    (hands / "a.txt").write_text(
        "PokerStars Hand #1: Hold'em No Limit ($0.05/$0.10 USD) - 2026/03/04 20:00:00 ET\n"
        "Table 'T' 6-max Seat #1 is the button\n"
        "Seat 1: amy ($10 in chips)\nSeat 2: bob ($10.50 in chips)\nSeat 3: o(d)d name ($3 in chips) is sitting out\n"
    )
    assert main(["eval", "--cases", str(cpath), "--labels", str(lpath), "--hands-dir", str(hands), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accounts_seen"] == 3
    assert out["kinds"]["soft_play"]["recall"] == 0.5
    assert main(["eval", "--cases", str(tmp_path / "nope.jsonl"), "--labels", str(lpath), "--accounts", "5"]) == 2
