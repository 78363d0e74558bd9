"""Coordinated sit-outs: the false-discovery control weighs a pair by the moments at which both could have sat out
together (per shared event the smaller of the two players' sit-outs there), so a pair that sat out twice each in
one event counts two, as a pair that sat out once each in two events."""

from __future__ import annotations

import numpy as np
import polars as pl
from test_identity_features_world import World, at

from detectors.coordinated_sitout import CoordinatedSitoutDetector


def _det(counts: dict[tuple[str, str], tuple[int, int]], **kw) -> CoordinatedSitoutDetector:
    """A detector whose family is ``counts``: per pair (events both sat out in, moments both could meet)."""
    det = CoordinatedSitoutDetector(**kw)
    det.family_pairs_ = pl.DataFrame({"a": [a for a, _ in counts], "b": [b for _, b in counts],
                                      "n_shared": [e for e, _ in counts.values()],
                                      "n_moments": [m for _, m in counts.values()]},
                                     schema_overrides={"n_shared": pl.UInt32, "n_moments": pl.UInt32})
    det.family_ = len(counts)
    return det


def test_two_moments_in_one_event_weigh_as_two_events():
    """Ten pairs; x/y both sat out twice in one shared event (two moments), the nine others once in one. Counted by
    moments, x/y weighs 8 x 10 / 17 = 4.7 and its p 0.008 gives q 0.017; counted by events (``share_count="events"``,
    the default) every pair weighs 1 and q is 0.08. A pair of two events of one moment each weighs the same
    by either count."""
    fam = {("x", "y"): (1, 2), **{(f"a{i}", f"b{i}"): (1, 1) for i in range(9)}}
    s = pl.DataFrame({"a": ["x", "a0"], "b": ["y", "b0"], "p_value": [0.008, 0.5]})
    row = _det(fam, share_count="moments")._with_q(s).filter(pl.col("a") == "x").row(0, named=True)
    assert abs(row["bh_weight"] - 80 / 17) < 1e-9 and row["n_moments"] == 2
    assert abs(row["q_value"] - 0.008 / (80 / 17) * 10) < 1e-9
    old = _det(fam, share_count="events")._with_q(s).filter(pl.col("a") == "x").row(0, named=True)
    assert old["bh_weight"] == 1.0 and abs(old["q_value"] - 0.08) < 1e-9
    two = {("x", "y"): (2, 2), **{(f"a{i}", f"b{i}"): (1, 1) for i in range(9)}}
    w_two = _det(two, share_count="moments")._with_q(s)["bh_weight"][0]
    assert abs(w_two - _det(two, share_count="events")._with_q(s)["bh_weight"][0]) < 1e-12


def _world() -> World:
    """Fourteen events of 22 regulars who sit out now and then; x and y play event 0 only and sit out together twice
    there (the same rounds), and nowhere else."""
    w = World(seed=41)
    honest = [f"k{i:02d}" for i in range(60)]
    for p in honest + ["x", "y"]:
        w.account(p)
    rng = np.random.default_rng(47)
    for t in range(14):
        mine = ["x", "y"] if t == 0 else []
        players = rng.choice(honest, 22, replace=False).tolist() + mine
        so: dict[str, list[tuple[int, int]]] = {}
        for p in players:
            if p not in mine and rng.random() < 0.35:
                r0 = int(rng.integers(2, 60))
                so[p] = [(r0, r0 + int(rng.integers(1, 4)))]
        if mine:
            so["x"] = so["y"] = [(14, 17), (44, 48)]
        w.tournament(str(700 + t), players, at(120 * t), n_hands=70, every_s=45, sitouts=so,
                     bust_order=[p for p in players if p not in mine] + mine)
    return w


def test_a_pair_that_sat_out_together_twice_in_one_event_gets_the_budget_of_two_moments():
    """The fitted family counts x/y's two moments in their one shared event; weighted by them
    (``share_count="moments"``) the pair's q is under the line (0.008 among 343 pairs) and it is flagged; weighted by
    its one event (the default) it is not (0.066)."""
    con = _world().build()
    try:
        det = CoordinatedSitoutDetector(share_count="moments").fit(con)
        fam = det.family_pairs_.filter((pl.col("a") == "x") & (pl.col("b") == "y")).row(0, named=True)
        assert fam["n_shared"] == 1 and fam["n_moments"] == 2
        r = det.scores_.filter((pl.col("a") == "x") & (pl.col("b") == "y")).row(0, named=True)
        assert r["n_co"] == 2 and r["q_value"] <= det.alpha
        flagged = det.threshold(det.scores_)
        assert any(set(a) == {"x", "y"} for a in flagged.filter(pl.col("flagged"))["accounts"].to_list())
        old = CoordinatedSitoutDetector().fit(con)
        assert old.scores_.filter((pl.col("a") == "x") & (pl.col("b") == "y"))["q_value"][0] > old.alpha
    finally:
        con.close()
