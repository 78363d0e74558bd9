"""Coordinated sit-outs: one sit-out together of two friends who enter the same events is what chance leaves when
the population holds many such pairs. The co-entry selects the pairs a lone coincidence is judged in; it is no
evidence on its own (honest friends co-enter), so the coincidence is held to a Bonferroni over every co-entering pair
that could have sat out together."""

from __future__ import annotations

import numpy as np
import polars as pl
from test_identity_features_world import World, at

from detectors.coordinated_sitout import CoordinatedSitoutDetector

FRIENDS = [(f"f{i}a", f"f{i}b") for i in range(12)]


def _friends_world() -> World:
    """Sixteen events of 20 regulars; twelve honest friend pairs and q1/q2 each enter eight events together (each
    pair its own, q1/q2 every other one), and each friend sits out on its own now and then (as the regulars do); q1/q2 sit out
    together once, in the first event (one back sooner), as one of the friend pairs would by chance."""
    w = World(seed=29)
    honest = [f"k{i:02d}" for i in range(80)]
    friends = [p for pair in FRIENDS for p in pair]
    for p in honest + friends + ["q1", "q2"]:
        w.account(p)
    rng = np.random.default_rng(31)
    events = {pair: set(rng.choice(16, 8, replace=False).tolist()) for pair in FRIENDS}
    for t in range(16):
        mine = [p for pair in FRIENDS if t in events[pair] for p in pair] + (["q1", "q2"] if t % 2 == 0 else [])
        players = rng.choice(honest, 20, replace=False).tolist() + mine
        so: dict[str, list[tuple[int, int]]] = {}
        for p in players:
            if p not in ("q1", "q2") and rng.random() < 0.4:
                r0 = int(rng.integers(2, 60))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        if t == 0:
            so["q1"], so["q2"] = [(50, 54)], [(50, 51)]
        w.tournament(str(700 + t), players, at(120 * t), n_hands=70, every_s=45, sitouts=so,
                     bust_order=[p for p in players if p not in mine] + mine)
    return w


def test_a_lone_coincidence_among_many_co_entering_pairs_is_not_flagged():
    con = _friends_world().build()
    try:
        det = CoordinatedSitoutDetector()
        flagged = [s.accounts for s in det.detect(con) if s.flagged]
        assert ["q1", "q2"] not in flagged
        q = det.scores_.filter((pl.col("a") == "q1") & (pl.col("b") == "q2")).row(0, named=True)
        # the pair sat out together once, unusual on its own, and co-entered far beyond the configuration model
        assert q["n_co"] == 1 and q["p_gap"] <= det.single_p and q["p_coentry"] <= det.single_coentry_p
        # ... as the friend pairs co-enter: every one of them that could have sat out together is in the family
        assert det.n_single_ >= 10
        assert q["p_single"] * det.n_single_ > det.single_alpha
    finally:
        con.close()
