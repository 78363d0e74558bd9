"""Planted collusion changes behaviour, measured from the world's own records (never a detector)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from itertools import permutations

from test_world_data import blatant_world, small_world


def _labels(w):
    return [json.loads(x) for x in (w.out / "labels.jsonl").read_text().splitlines()]


def _events(w):
    for f in sorted((w.out / "events").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            yield json.loads(line)


def _pair_clashes(hands):
    """For unordered pairs dealt together: hands played, and hands where one bet or raised into the other
    after the other had voluntarily put chips in (and not folded)."""
    together = defaultdict(int)
    clash = defaultdict(int)
    for h in hands:
        dealt = sorted(h.dealt)
        for i, x in enumerate(dealt):
            for y in dealt[i + 1:]:
                together[(x, y)] += 1
        entered: set = set()
        folded: set = set()
        hit = set()
        for seq, street, player, kind, *_ in h.actions:
            if kind == "fold":
                folded.add(player)
            elif kind in ("bet", "raise"):
                for q in entered:
                    if q != player and q not in folded:
                        hit.add(tuple(sorted((player, q))))
                entered.add(player)
            elif kind == "call":
                entered.add(player)
        for pair in hit:
            clash[pair] += 1
    return together, clash


def test_soft_play_partners_attack_each_other_far_less_than_honest_pairs():
    w = blatant_world()
    labels = _labels(w)
    groups = [g for g in labels if g["kind"] == "soft_play"]
    together, clash = _pair_clashes(w.hands)
    in_group = {a for g in labels for a in g["accounts"]}
    partner_pairs = {tuple(sorted(p)) for g in groups for p in permutations(g["accounts"], 2)}
    soft = [clash[p] / together[p] for p in partner_pairs if together[p] >= 60]
    honest = [clash[p] / n for p, n in together.items() if n >= 60 and p[0] not in in_group and p[1] not in in_group]
    assert len(soft) >= 2 and len(honest) >= 30
    assert statistics.mean(soft) < 0.5 * statistics.median(honest), (soft, statistics.median(honest))


def test_chip_dumping_moves_chips_from_feeder_to_receiver():
    w = blatant_world()
    groups = [g for g in _labels(w) if g["kind"] == "chip_dumping"]
    assert groups
    for g in groups:
        feeders = [a for a, r in g["roles"].items() if r == "feeder"]
        receivers = [a for a, r in g["roles"].items() if r == "receiver"]
        moved = 0
        late_folds = 0
        for hid in g["hands"]:
            h = w.by_id[hid]
            for f in feeders:
                if f in h.dealt:
                    moved += sum(h.collected.get(r, 0) for r in receivers if r in h.dealt) and h.put_in[f]
                    late_folds += any(a[2] == f and a[3] == "fold" and a[1] >= 2 for a in h.actions)
        assert len(g["hands"]) >= 20, g["group"]
        assert moved > 0 and late_folds >= 3, (g["group"], moved, late_folds)
    # the feeders lose to their receivers (in big blinds) far more than honest players lose to anyone
    net = defaultdict(float)
    for h in w.hands:
        winners = [p for p in h.dealt if h.collected.get(p, 0) > 0]
        if len(winners) != 1:
            continue
        for p in h.dealt:
            if p != winners[0]:
                lost = h.put_in[p] - (h.uncalled[1] if h.uncalled and h.uncalled[0] == p else 0)
                net[(p, winners[0])] += lost / h.bb
    dump = [sum(net[(f, r)] for f, rf in g["roles"].items() if rf == "feeder"
                for r, rr in g["roles"].items() if rr == "receiver") for g in groups]
    typical = statistics.median(v for v in net.values() if v > 0)
    assert min(dump) > 5 * typical, (dump, typical)


def test_collusion_hands_are_only_hands_where_it_happened():
    w = blatant_world()
    for g in _labels(w):
        for hid in g["hands"]:
            h = w.by_id[hid]
            assert sum(a in h.dealt for a in g["accounts"]) >= 2
    # a soft-play pair at strength 1 never bets into the partner once only partners are left postflop
    groups = [g for g in _labels(w) if g["kind"] == "soft_play"]
    checked = 0
    for g in groups:
        accs = set(g["accounts"])
        for h in w.hands:
            if sum(a in h.dealt for a in accs) < 2:
                continue
            live = set(h.dealt)
            for seq, street, player, kind, amount, to, all_in in h.actions:
                if kind == "fold":
                    live.discard(player)
                elif street >= 1 and live <= accs and len(live) >= 2:
                    checked += 1
                    assert kind not in ("bet", "raise"), (h.hand_id, player, kind)
    assert checked > 0


def test_coordinated_sitouts_start_together():
    w = small_world()
    groups = [g for g in _labels(w) if g["kind"] == "coordinated_sitout" and g["hands"]]
    assert groups
    outs = defaultdict(list)
    for e in _events(w):
        if e["type"] == "sit_out" and e["tournament"]:
            outs[(e["tournament"], e["account"])].append(e["ts"])
    from datetime import datetime

    def t(x):
        return datetime.strptime(x, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()

    for g in groups:
        close = 0
        for tid in g["tournaments"]:
            for a, b in permutations(g["accounts"], 2):
                for ta in outs.get((tid, a), []):
                    if any(abs(t(ta) - t(tb)) < 10 for tb in outs.get((tid, b), [])):
                        close += 1
        assert close >= 1, g["group"]


def test_seat_handoff_brings_a_new_device_and_another_style_of_timing():
    w = small_world()
    groups = [g for g in _labels(w) if g["kind"] == "seat_handoff" and g["hands"]]
    assert groups
    events = list(_events(w))
    compared = 0
    for g in groups:
        acc = g["accounts"][0]
        first = g["hands"][0]
        logins = sorted((e["ts"], e["device"], e["ip"]) for e in events if e["type"] == "login" and e["account"] == acc)
        devices = {d for _, d, _ in logins}
        assert len(devices) >= 2
        after = set(g["hands"])
        ms_after = [e["ms"] for e in events if e["type"] == "decision" and e["account"] == acc and e["hand"] in after]
        ms_before = [e["ms"] for e in events if e["type"] == "decision" and e["account"] == acc
                     and e["hand"] not in after and e["hand"] < first]
        assert ms_after, g["group"]
        # the newcomer's decisions are timed by their own lognormal, not the owner's
        from datasets.generate import plan_world

        world, _, _, _ = plan_world(preset="demo", seed=11, accounts=120, hands=3500)
        grp = next(x for x in world.groups if x.gid == g["group"])
        owner, other = (world.pop.persons[pid].timing for pid in grp.pids)
        if len(ms_after) >= 10 and len(ms_before) >= 10 and not 0.85 < other.median_ms / owner.median_ms < 1.18:
            observed = statistics.median(ms_after) / statistics.median(ms_before)
            expected = other.median_ms / owner.median_ms
            assert (observed > 1) == (expected > 1), (observed, expected)
            compared += 1
    assert compared >= 1


def test_multi_accounts_share_some_identity_and_events():
    w = small_world()
    groups = [g for g in _labels(w) if g["kind"] == "multi_accounting"]
    assert groups
    entries = defaultdict(set)
    for e in _events(w):
        if e["type"] == "register":
            entries[e["tournament"]].add(e["account"])
    together = 0
    for g in groups:
        for tid in g["tournaments"]:
            together += sum(a in entries[tid] for a in g["accounts"]) >= 2
    assert together >= 1


def test_bounty_colluders_gang_up_on_short_stacks():
    w = small_world()
    groups = [g for g in _labels(w) if g["kind"] == "bounty_collusion"]
    assert groups
    hits = 0
    for g in groups:
        for hid in g["hands"]:
            h = w.by_id[hid]
            assert h.bounty_of and sum(a in h.dealt for a in g["accounts"]) >= 2
            hits += 1
    assert hits >= 1
