"""Coordinated sit-outs, one group per case: two groups that sat out at the same moments of some events join
into one component of flagged pairs; the split names each group on its own and lists the pairs across them on
their own, with their own q."""

from __future__ import annotations

from itertools import combinations

import polars as pl

from detectors.coordinated_sitout import CoordinatedSitoutDetector
from detectors.coordinated_sitout.split import edge_weights

G1, G2 = ["a1", "a2", "a3"], ["b1", "b2", "b3"]


def _scores() -> pl.DataFrame:
    """Each group's pairs sat out together in every one of their 6 sit-outs, in three events (p 1e-6); the pairs
    across the two groups met at the bubbles of two of them (2 of 6 sit-outs, p 1e-3); ``h``, an honest account, sat
    out once at the moment all six did in a fourth event (p 0.01 with each); the group test flagged all seven at
    once."""
    rows = []
    for a, b in combinations(sorted(G1 + G2 + ["h"]), 2):
        inside = (a in G1 and b in G1) or (a in G2 and b in G2)
        honest = "h" in (a, b)
        p, n_co, ev = (1e-6, 6, ["t1", "t2", "t3"]) if inside else (0.01, 1, ["t9"]) if honest else (1e-3, 2, ["t1", "t2"])
        rows.append({"a": a, "b": b, "n_co": n_co, "n_starts_a": 6, "n_starts_b": 6, "p_gap": p, "p_value": p,
                     "q_pair": 1e-3 if inside else 1.0 if honest else 0.5, "q_value": 1e-4, "q_group": 1e-4,
                     "score": 5.0, "score_pair": 6.0 if inside else 3.0, "accounts": [a, b], "tournaments": ev})
    return pl.DataFrame(rows)


def test_two_groups_met_at_the_same_moments_are_two_cases_and_a_chance_meeting_is_no_member():
    det = CoordinatedSitoutDetector()
    scores = _scores()
    rows = det.threshold(scores)
    flagged = sorted(sorted(a) for a in rows.filter(pl.col("flagged"))["accounts"].to_list())
    assert flagged == [G1, G2]  # the component of all seven accounts was one case before the split
    across = rows.filter(~pl.col("flagged"))
    # each pair across the groups, and each of h's, keeps its own q and score, not the component's
    assert across.height == 15 and (across["q_value"] >= 0.5).all() and (across["score"] == 3.0).all()
    pairs = det.flag(scores)
    assert pairs.filter(pl.col("pair_flagged"))["component"].to_list() == [7] * 6


def test_edge_weight_is_evidence_times_the_share_that_coincided():
    s = pl.DataFrame({"p_gap": [1e-4, 1e-4, None], "n_co": [4, 2, 1], "n_starts_a": [4, 4, 0],
                      "n_starts_b": [2, 8, 0]})
    assert edge_weights(s).round(6).tolist() == [4.0, 1.0, 0.0]
