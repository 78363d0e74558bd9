"""Labels of seat hand-offs: a group is labelled only where a seat was handed over in the data."""

from __future__ import annotations

import json
from types import SimpleNamespace

from datasets.collusion import Group
from datasets.generate import _write_labels


def test_a_handoff_group_that_never_handed_a_seat_over_is_not_labelled(tmp_path):
    acted = Group("g1", "seat_handoff", ["owner:1"], 1.0, pids=[1, 2], tournaments=["t1", "t2"])
    idle = Group("g2", "seat_handoff", ["owner\"2"], 1.0, pids=[3, 4], tournaments=["t3"])  # entered, busted early
    quiet = Group("g3", "soft_play", ["a", "b"], 0.5, pids=[5, 6])
    world = SimpleNamespace(groups=[acted, idle, quiet], chat=None)
    results = [{"hits": {"g1": [("h2", 2_000, "t1"), ("h1", 1_000, "t1")]}}]
    path = tmp_path / "labels.jsonl"
    _write_labels(world, results, path)
    rows = {r["group"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    assert set(rows) == {"g1", "g3"}  # the idle hand-off group is gone, a soft-play group that never acted stays
    assert rows["g1"]["hands"] == ["h1", "h2"] and rows["g1"]["tournaments"] == ["t1"]
    assert rows["g3"]["hands"] == [] and "from" not in rows["g3"]
