"""The heads-up world (datasets/flipping.py): added after every other unit without moving them, matches
two-handed, brackets with an exempt final, flippers labelled where they flipped."""

from __future__ import annotations

import re
from pathlib import Path

from datasets.flipping import KIND, FlipParams, draw_flip_params
from datasets.generate import plan_world


def _key(u):
    kind, no, plan, est = u
    return kind, no, getattr(plan, "tid", getattr(plan, "name", "")), plan.start_ms, est


def test_heads_up_units_come_after_the_others_which_do_not_move():
    base = plan_world(preset="demo", seed=5, accounts=80, hands=1500)
    with_hu = plan_world(preset="demo", seed=5, accounts=80, hands=1500, mix={**{"soft_play": 1}, KIND: 2})
    plain = plan_world(preset="demo", seed=5, accounts=80, hands=1500, mix={"soft_play": 1})
    assert base[1]  # the demo mix plans units
    old = [u for u in with_hu[1] if u[0] != "hu"]
    assert [_key(u) for u in old] == [_key(u) for u in plain[1]]
    hu = [u for u in with_hu[1] if u[0] == "hu"]
    assert hu and min(u[1] for u in hu) == len(old)
    sizes = sorted({len(u[2].entries) for u in hu})
    assert 2 in sizes and set(sizes) - {2} <= {4, 8} and len(sizes) > 1  # sit-and-gos and brackets
    flippers = [g for g in with_hu[0].groups if g.kind == KIND]
    assert len(flippers) == 2 and all(len(g.accounts) == 2 for g in flippers)
    pair = set(flippers[0].accounts)
    assert sum(set(e.account for e in u[2].entries) == pair for u in hu) >= 6  # again and again
    # an honest world with heads-up play: the same matches, no flippers
    honest = plan_world(preset="demo", seed=5, accounts=80, hands=1500, mix={KIND: 0})
    assert any(u[0] == "hu" for u in honest[1]) and not honest[0].groups


def test_world_seeds_draw_the_heads_up_mechanisms():
    assert draw_flip_params(None) == FlipParams()
    a, b = draw_flip_params(1001), draw_flip_params(1002)
    assert a != b and a == draw_flip_params(1001)
    assert 0.1 <= a.hyper_share <= 0.6 and 4 <= a.early_hands <= 15 and a.pair_matches[0] < a.pair_matches[1]


def test_flippers_flip_and_their_flips_are_labelled(tmp_path: Path):
    """The pair's own matches played alone (datasets.units.run_chunk): every hand a flipper's action was
    changed in is a two-handed hand where both went all in preflop."""
    from datasets.units import run_chunk, set_world

    world, units, _, _ = plan_world(preset="demo", seed=8, accounts=60, hands=800, mix={KIND: 1})
    g = next(g for g in world.groups if g.kind == KIND)
    mine = [(k, no, plan) for k, no, plan, _ in units if k == "hu" and {e.account for e in plan.entries} == set(g.accounts)]
    for sub in ("hands", "events"):
        (tmp_path / sub).mkdir()
    set_world(world)
    try:
        res = run_chunk((0, mine[:3], str(tmp_path), None))
    finally:
        set_world(None)
    text = (tmp_path / "hands" / "chunk-0000.txt").read_text(encoding="utf-8")
    hands = {m.group(1): m.group(0) for m in re.finditer(r"PokerStars Hand #(\d+):.*?(?=\n\n\n|\Z)", text, re.S)}
    hits = {hid for hid, _, _ in res["hits"].get(g.gid, [])}
    assert hits, "a pair at strength >= 0.5 flips in three matches"
    for hid in hits:
        h = hands[hid]
        assert "2-max" in h and h.count("and is all-in") == 2  # both all in, preflop
        assert "*** FLOP ***" not in h.split("and is all-in")[0]
        assert all(a in h for a in g.accounts)
