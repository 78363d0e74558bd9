"""``generate`` writes the files of inputs.md, deterministically, and its labels tell the truth."""

from __future__ import annotations

import csv
import filecmp
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_world_data import small_world

from datasets.generate import generate, plan_world
from datasets.presets import PRESET_KINDS as KINDS  # the kinds the presets and the sample plant
from datasets.presets import PRESETS, parse_mix

HEADER = re.compile(r"^PokerStars Hand #(\d+):")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _generate_in_another_process(out: Path, hash_seed: str, **kw) -> Path:
    """``generate(out, **kw)`` run by another Python process whose hash seed is ``hash_seed``."""
    root = Path(__file__).resolve().parents[2]
    code = "import json, sys; from datasets.generate import generate; generate(sys.argv[1], **json.loads(sys.argv[2]))"
    subprocess.run([sys.executable, "-c", code, str(out), json.dumps(kw)], check=True, cwd=root,
                   env=dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(root)))
    return out


def test_same_seed_same_bytes_whatever_the_workers_and_the_hash_seed(tmp_path):
    a = generate(tmp_path / "a", seed=21, accounts=60, hands=900, progress=False, workers=2, chunk_hands=300)
    # one process, another hash seed than this one's (and than the two workers'): sets of names iterate otherwise
    b = _generate_in_another_process(tmp_path / "b", "4321", seed=21, accounts=60, hands=900, progress=False,
                                     workers=1, chunk_hands=300)
    ta, tb = _tree(a), _tree(b)
    assert ta.keys() == tb.keys() and len(ta) > 4
    assert all(ta[k] == tb[k] for k in ta)
    c = generate(tmp_path / "c", seed=22, accounts=60, hands=900, progress=False, workers=2, chunk_hands=300)
    tc = _tree(c)
    assert (tc.get("accounts.csv") != ta["accounts.csv"]) and any(tc.get(k) != v for k, v in ta.items())
    assert not filecmp.cmp(a / "labels.jsonl", c / "labels.jsonl", shallow=False)


def test_files_have_the_input_formats():
    w = small_world()
    out = w.out
    with open(out / "accounts.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["account", "created_at", "country", "payment"]
    accounts = {r[0] for r in rows[1:]}
    assert len(accounts) == len(rows) - 1 >= 100
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", r[1]) for r in rows[1:])
    payments = [r[3] for r in rows[1:] if r[3]]
    assert len(set(payments)) < len(payments)  # family cards and multi-accounters share some
    hands_txt = list((out / "hands").glob("*.txt"))
    assert hands_txt
    ids = []
    for f in hands_txt:
        for line in f.read_text(encoding="utf-8").splitlines():
            m = HEADER.match(line)
            if m:
                ids.append(m.group(1))
    assert len(ids) == len(set(ids)) == len(w.hands)
    types = set()
    for f in (out / "events").glob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            e = json.loads(line)
            assert {"ts", "type", "account"} <= e.keys()
            assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", e["ts"])
            assert e["account"] in accounts
            types.add(e["type"])
    assert {"login", "logout", "sit_out", "sit_in", "register", "decision", "transfer"} <= types


def _events(out: Path):
    for f in sorted((out / "events").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            yield json.loads(line)


def test_decision_events_point_at_real_action_lines():
    w = small_world()
    by_id = w.by_id
    n = 0
    seen = set()
    for e in _events(w.out):
        if e["type"] != "decision":
            continue
        h = by_id[e["hand"]]
        seq, street, player, kind = h.actions[e["action"]][:4]
        assert seq == e["action"] and player == e["account"]
        assert kind in ("fold", "check", "call", "bet", "raise")
        assert 0 < e["ms"] <= 30_000
        seen.add((e["hand"], e["action"]))
        n += 1
    decisions = {(h.hand_id, a[0]) for h in w.hands for a in h.actions if a[3] in ("fold", "check", "call", "bet", "raise")}
    assert seen == decisions and n == len(decisions)


def test_events_are_shuffled_across_files_and_slightly_out_of_order():
    w = small_world()
    files = sorted((w.out / "events").glob("*.jsonl"))
    assert len(files) >= 2
    inversions = 0
    for f in files:
        ts = [json.loads(x)["ts"] for x in f.read_text(encoding="utf-8").splitlines()]
        inversions += sum(1 for a, b in zip(ts, ts[1:]) if b < a)
    assert inversions > 0


def test_sessions_cover_the_hands_played():
    w = small_world()
    sessions = {}
    for e in _events(w.out):
        if e["type"] in ("login", "logout"):
            sessions.setdefault(e["session"], {})[e["type"]] = e
    assert sessions
    for s in sessions.values():
        assert "login" in s and "logout" in s
        assert s["login"]["ts"] < s["logout"]["ts"]
        assert s["login"]["account"] == s["logout"]["account"]


def test_labels_reference_real_accounts_hands_and_tournaments():
    w = small_world()
    accounts = {r.split(",")[0] for r in (w.out / "accounts.csv").read_text().splitlines()[1:]}
    tournaments = {h.tid for h in w.hands if h.tid}
    groups = [json.loads(x) for x in (w.out / "labels.jsonl").read_text().splitlines()]
    assert {g["kind"] for g in groups} == set(KINDS)
    for g in groups:
        assert set(g["accounts"]) <= accounts
        assert set(g.get("tournaments") or []) <= tournaments
        assert 0 < g["strength"] <= 1
        for hid in g["hands"]:
            h = w.by_id[hid]
            if g["kind"] == "seat_handoff":
                assert g["accounts"][0] in h.dealt and h.tid in g["tournaments"]
            elif g["kind"] == "coordinated_sitout":  # partners may sit at different tables of the event
                assert any(p in g["accounts"] and out for _, p, _, out in h.seats) and h.tid in g["tournaments"]
            else:
                assert sum(a in h.dealt or a in {p for _, p, _, _ in h.seats} for a in g["accounts"]) >= 2, g
        if g["hands"] or (g["kind"] == "multi_accounting" and g["tournaments"]):
            assert g["from"] <= g["to"]
        else:
            assert "from" not in g and "to" not in g


def test_presets_sizes_and_mixes():
    for name, lo_accounts in (("demo", 250), ("mixed", 500), ("subtle", 500), ("honest", 500), ("heads_up", 500)):
        world, units, _, _ = plan_world(preset=name, seed=3)
        spec = PRESETS[name]
        assert len(world.pop.accounts) >= lo_accounts
        assert abs(len(world.pop.accounts) - spec.accounts) <= spec.accounts * 0.05
        est = sum(u[3] for u in units)
        assert spec.hands * 0.8 <= est <= spec.hands * 1.6, (name, est)
        kinds = {}
        for g in world.groups:
            kinds.setdefault(g.kind, []).append(g.strength)
        if name == "honest":
            assert kinds == {}
            continue
        assert set(kinds) == set(spec.mix) and set(spec.mix) <= set(KINDS) | {"heads_up_flipping"}
        lo, hi = spec.strength
        for k, ss in kinds.items():
            assert all(lo - 1e-9 <= s <= hi + 1e-9 for s in ss)
            if len(ss) > 1:
                assert min(ss) == pytest.approx(lo, abs=1e-3) and max(ss) == pytest.approx(hi, abs=1e-3)
    assert PRESETS["mixed"].hands >= 50_000 and PRESETS["mixed"].accounts >= 500


def test_mix_overrides_the_kinds():
    assert parse_mix("soft_play=4,chip_dumping=3") == {"soft_play": 4, "chip_dumping": 3}
    assert parse_mix("none") == {}
    with pytest.raises(ValueError):
        parse_mix("soft_play=x")
    with pytest.raises(ValueError):
        parse_mix("cheating=2")
    world, _, _, _ = plan_world(preset="demo", seed=3, mix={"soft_play": 4, "chip_dumping": 3})
    kinds = [g.kind for g in world.groups]
    assert kinds.count("soft_play") == 4 and kinds.count("chip_dumping") == 3 and len(kinds) == 7


def test_cli_writes_a_population(tmp_path, capsys):
    from pipelines.cli import main

    rc = main(["generate", "--out", str(tmp_path / "p"), "--accounts", "40", "--hands", "300", "--seed", "2",
               "--mix", "soft_play=1", "--no-progress", "--workers", "1"])
    assert rc == 0
    assert "hands" in capsys.readouterr().out
    assert (tmp_path / "p" / "labels.jsonl").read_text().count("soft_play") == 1
    assert main(["generate", "--out", str(tmp_path / "q"), "--mix", "nonsense=1"]) == 2


def test_player_view_writes_only_one_hand_per_hand(tmp_path):
    out = generate(tmp_path / "pv", seed=4, accounts=40, hands=300, view="player", progress=False, workers=1,
                   mix={})
    text = "\n".join(f.read_text() for f in (out / "hands").glob("*.txt"))
    hands = text.count("PokerStars Hand #")
    assert hands > 50
    assert text.count("Dealt to ") == hands


def test_the_world_never_imports_its_judges():
    import ast

    root = Path(__file__).resolve().parents[2] / "datasets"
    for f in root.glob("*.py"):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert not n.startswith(("detectors", "pipelines")), (f.name, n)


def test_committed_sample_is_small_and_consistent():
    root = Path(__file__).resolve().parents[2] / "datasets" / "sample"
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files and all(p.stat().st_size < 2_000_000 for p in files)
    ids = set()
    for f in (root / "hands").glob("*.txt"):
        ids.update(m.group(1) for m in map(HEADER.match, f.read_text(encoding="utf-8").splitlines()) if m)
    assert len(ids) >= 2000
    accounts = {r.split(",")[0] for r in (root / "accounts.csv").read_text().splitlines()[1:]}
    groups = [json.loads(x) for x in (root / "labels.jsonl").read_text().splitlines()]
    assert {g["kind"] for g in groups} == set(KINDS)
    for g in groups:
        assert set(g["accounts"]) <= accounts and set(g["hands"]) <= ids


def test_players_are_logged_in_when_they_decide():
    """Every decision falls inside a login..logout session of its account, except those the server
    made: timed-out ones (a disconnected player's session was closed by the server) and the instant
    actions for a player sitting out (an owner moving from the phone to the desktop sits out the
    hands dealt while no session is open)."""
    from datetime import datetime

    w = small_world()

    def t(x):
        return datetime.strptime(x, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()

    sessions: dict = {}
    decisions = []
    for e in _events(w.out):
        if e["type"] in ("login", "logout"):
            sessions.setdefault(e["session"], {})[e["type"]] = e
        elif e["type"] == "decision":
            decisions.append(e)
    spans: dict = {}
    for s in sessions.values():
        spans.setdefault(s["login"]["account"], []).append((t(s["login"]["ts"]), t(s["logout"]["ts"])))
    outside = [e for e in decisions if 250 <= e["ms"] < 15_000
               and not any(a <= t(e["ts"]) <= b for a, b in spans.get(e["account"], []))]
    assert not outside, (len(outside), len(decisions), outside[:3])
