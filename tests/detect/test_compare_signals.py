"""The signal-equality gate (tests/detect/compare_signals.py) itself: its comparison and one run."""

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_signals as cs  # noqa: E402  (a script beside the tests, not a package)

ROOT = Path(__file__).resolve().parents[2]


def _signal(accounts, score=1.5, p=0.01, **kw):
    return {"kind": "soft_play", "accounts": accounts, "tournaments": [], "score": score, "p_value": p,
            "flagged": False, "hands": ["1"], "summary": "s", "evidence": [{"name": "e", "value": 0.25, "p_value": None}],
            "extra": {"q_value": 0.5}, **kw}


def test_same_value_exact_nan_and_tolerance():
    assert cs.same_value(float("nan"), float("nan"), 0.0)
    assert not cs.same_value(float("nan"), 1.0, 0.0)
    assert cs.same_value(1, 1.0, 0.0)
    assert not cs.same_value(True, 1, 0.0)
    x = 0.1 + 0.2
    assert not cs.same_value(x, 0.3, 0.0)
    assert cs.same_value(x, 0.3, 1e-12)
    assert not cs.same_value(1.0, 1.0 + 1e-9, 1e-12)
    assert cs.same_value({"a": [1.0, None]}, {"a": [1.0, None]}, 0.0)
    assert not cs.same_value({"a": [1.0]}, {"a": [1.0, 2.0]}, 0.0)


def test_differences_name_every_kind_of_change():
    base = [_signal(["a", "b"], score=2.0), _signal(["c", "d"])]
    assert cs.differences(base, json.loads(json.dumps(base)), 0.0) == []
    changed = json.loads(json.dumps(base))
    changed[1]["evidence"][0]["value"] = math.nextafter(0.25, 1.0)
    assert [d.split(":")[0] for d in cs.differences(base, changed, 0.0)] == ["['c', 'd'] evidence[0].value"]
    assert cs.differences(base, changed, 1e-12) == []
    gone = [base[0], _signal(["c", "e"])]
    assert sorted(d.split(":")[1].strip() for d in cs.differences(base, gone, 0.0)) == ["only in base", "only in head"]
    swapped = [base[1], base[0]]
    assert cs.differences(base, swapped, 0.0) == ["order #0: base ['a', 'b'] head ['c', 'd']", "order #1: base ['c', 'd'] head ['a', 'b']"]
    tied = [_signal(["a", "b"]), _signal(["c", "d"])]
    assert cs.differences(tied, tied[::-1], 0.0) == []  # equal scores: either order is the detector's


def test_compare_reports_a_kind_only_one_checkout_has():
    run = {"soft_play": {"signals": []}}
    assert cs.compare(run, {}, 0.0) == {"soft_play": ["kind only in base"]}
    assert cs.compare(run, run, 0.0) == {"soft_play": []}


@pytest.mark.slow
def test_head_against_head_on_a_small_population(tmp_path, capsys):
    """One whole run of the gate, this checkout against itself: generate, ingest once, two detector processes.
    Every kind must come out identical: the gate fixes the orders that differ from process to process."""
    rc = cs.main(["--base", str(ROOT), "--head", str(ROOT), "--preset", "mixed", "--hands", "1000", "--accounts", "40",
                  "--seed", "5", "--parallel", "--work", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "IDENTICAL" in out
    assert (tmp_path / "signals-base.jsonl").exists() and (tmp_path / "signals-head.jsonl").exists()


def test_a_field_the_head_adds_is_no_difference_only_when_named():
    base = [_signal(["a", "b"])]
    head = [dict(base[0], q_value=0.02)]
    assert cs.differences(base, head, 0.0) == ["['a', 'b'] q_value: only in head"]
    assert cs.differences(base, head, 0.0, ("q_value",)) == []
    assert cs.differences(head, base, 0.0, ("q_value",)) == ["['a', 'b'] q_value: only in base"]  # a loss still is
    changed = [dict(head[0], score=9.0)]
    assert [d.split(":")[0] for d in cs.differences(base, changed, 0.0, ("q_value",))] == ["['a', 'b'] score"]
