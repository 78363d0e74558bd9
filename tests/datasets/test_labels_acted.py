"""Labels: a planted group is labelled only where it acted in the data (multi-accounting: always)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from datasets.collusion import Group
from datasets.generate import _write_labels


def test_a_group_that_never_acted_is_not_labelled(tmp_path):
    acted = Group("g1", "seat_handoff", ["owner:1"], 1.0, pids=[1, 2], tournaments=["t1", "t2"])
    idle = Group("g2", "seat_handoff", ["owner\"2"], 1.0, pids=[3, 4], tournaments=["t3"])  # entered, busted early
    quiet = Group("g3", "soft_play", ["a", "b"], 0.5, pids=[5, 6])
    still = Group("g4", "coordinated_sitout", ["c", "d", "e"], 0.5, pids=[7, 8, 9], tournaments=["t4"])
    person = Group("g5", "multi_accounting", ["f", "f2"], 0.5, pids=[10, 11])
    world = SimpleNamespace(groups=[acted, idle, quiet, still, person], chat=None)
    results = [{"hits": {"g1": [("h2", 2_000, "t1"), ("h1", 1_000, "t1")]}}]
    path = tmp_path / "labels.jsonl"
    _write_labels(world, results, path)
    rows = {r["group"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    # the idle hand-off, the soft-play pair that never spared and the sit-out group that never sat out are gone;
    # the multi-accounter's accounts are the act: kept, with no hands
    assert set(rows) == {"g1", "g5"}
    assert rows["g1"]["hands"] == ["h1", "h2"] and rows["g1"]["tournaments"] == ["t1"]
    assert rows["g5"]["hands"] == [] and "from" not in rows["g5"]
