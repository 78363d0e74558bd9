"""Coordinated sit-outs, the group test: a trio whose every pair sat out together once, each time in another event,
is found as a group (each pair alone stays under the line); a moment shared once and an account that met the group
once are no group; the simulated null keeps each account's sit-outs per event inside its span."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from test_coordinated_sitout import honest_sitouts
from test_identity_features_world import World, at

from detectors.coordinated_sitout import CoordinatedSitoutDetector
from detectors.coordinated_sitout import groups as grp

TRIO = ["c1", "c2", "c3"]
# each pair of the trio sits out together once, each time in another event: no pair repeats
MEET = {"700": ("c1", "c2"), "702": ("c2", "c3"), "705": ("c1", "c3")}


@pytest.fixture(scope="module")
def world():
    w = World(seed=43)
    honest = [f"n{i:02d}" for i in range(45)]
    for n in honest + TRIO:
        w.account(n)
    rng = np.random.default_rng(11)
    for t in range(8):
        tid = str(700 + t)
        players = rng.choice(honest, 24, replace=False).tolist() + TRIO
        so = honest_sitouts(rng, players)
        for c in TRIO:
            so[c] = [(58, 61)] if c in MEET.get(tid, ()) else []
        order = [p for p in players if p not in TRIO] + TRIO
        w.tournament(tid, players, at(90 * t), n_hands=80, every_s=45, sitouts=so, bust_order=order)
    return w


@pytest.fixture(scope="module")
def fits(con):
    """The detector without and with the group test, the lone-coincidence rule off (the group rule alone)."""
    out = []
    for group_null in (0, 100):
        det = CoordinatedSitoutDetector(single_alpha=0.0, group_null=group_null)
        scores = det.fit(con).score(con)
        out.append((det, scores, det.threshold(scores)))
    return out


def test_a_trio_met_pairwise_in_three_events_is_a_group(con, fits):
    (_, _, rows0), (det, _, rows) = fits
    assert rows0.filter(pl.col("flagged")).height == 0  # each pair sat out together once: the pair rule flags none
    flagged = rows.filter(pl.col("flagged"))
    assert [sorted(a) for a in flagged["accounts"].to_list()] == [TRIO]
    g = det.groups_.row(0, named=True)
    assert sorted(g["accounts"]) == TRIO and g["n_events"] == 3 and g["q_group"] <= det.alpha
    sig = det.explain(con, flagged.row(0, named=True))
    ev = next(e for e in sig.evidence if e.name.startswith("group test"))
    assert "simulated populations" in ev.text and ev.sql


def _pairs(rows):
    return pl.DataFrame(rows, schema={"a": pl.Utf8, "b": pl.Utf8, "p": pl.Float64, "events": pl.List(pl.Utf8)},
                        orient="row").with_columns(rep=pl.lit(0, pl.Int64))


def test_one_moment_is_no_group_and_a_chance_meeting_is_left_out():
    one_moment = _pairs([("a", "b", 1e-3, ["e1"]), ("a", "c", 1e-3, ["e1"]), ("b", "c", 1e-3, ["e1"])])
    assert grp.clique_stats(one_moment).height == 0
    assert grp.clique_stats(one_moment, min_events=1).height == 1
    # a, b, c met in three events; h sat out once beside them (one event, the same moment for all three)
    ring = _pairs([("a", "b", 1e-3, ["e1"]), ("b", "c", 1e-3, ["e2"]), ("a", "c", 1e-3, ["e3"]),
                   ("a", "h", 0.2, ["e1"]), ("b", "h", 0.2, ["e1"]), ("c", "h", 0.2, ["e1"])])
    g = grp.clique_stats(ring)
    assert g["accounts"].to_list() == [["a", "b", "c"]] and g["n_events"].to_list() == [3]


def test_empirical_qvalues_count_the_null_groups_beyond_each_statistic():
    # null: four groups over two simulated populations; q = (1 + null >= t) / 3 over observed >= t, monotone
    q = grp.empirical_qvalues(np.array([5.0, 3.0, 1.0]), np.array([4.0, 2.0, 2.0, 0.5]), 2)
    assert np.allclose(q, [1 / 3, (2 / 3) / 2, (4 / 3) / 3])


def test_the_null_keeps_each_accounts_sit_outs_inside_its_span():
    x = pl.DataFrame({"account": ["a", "a", "b", "c"], "tournament_id": ["t", "t", "t", "t"],
                      "t": [100.0, 900.0, 120.0, 5000.0]})
    spans = pl.DataFrame({"account": ["a", "b", "c"], "tournament_id": ["t"] * 3,
                          "t0": [0.0, 0.0, 4000.0], "t1": [1000.0, 2000.0, 6000.0]})
    sim = grp.simulate_starts(x, spans, n_null=50, bandwidth_s=300.0, rng=np.random.default_rng(1))
    assert sim.height == 200
    counts = sim.group_by("rep", "account").len().group_by("account").agg(pl.col("len").unique())
    assert dict(zip(counts["account"], counts["len"].to_list())) == {"a": [2], "b": [1], "c": [1]}
    s = sim.join(spans, on=["account", "tournament_id"])
    assert ((s["t"] >= s["t0"]) & (s["t"] <= s["t1"])).all()
    # b's starts come from the other accounts' times (a's, near 100 and 900 s), not from its own
    b = sim.filter(pl.col("account") == "b")["t"].to_numpy()
    assert np.mean(np.minimum(abs(b - 100), abs(b - 900)) < 900) > 0.9


def test_scores_have_one_schema_with_and_without_groups(fits):
    """The pair q (``q_pair``) and the group columns are there whether or not a group test was made."""
    cols = [set(scores.columns) for _, scores, _ in fits]
    assert cols[0] == cols[1] and {"q_pair", "q_group", "group_accounts"} <= cols[0]
