"""The detectors' shared helpers on names as real rooms have them."""

import json

import polars as pl

from detectors.base import pair_edges_json

HOSTILE = ['"name', 'trail"', 'a\\b', '[x]', 'Seat 1: folds', '  two  ', 'Ünïcödé', '玩家', '🂡 ace', '{"k": 1}']


def test_pair_edges_json_round_trips_any_name():
    frame = pl.DataFrame({"player": HOSTILE, "opponent": list(reversed(HOSTILE))})
    edges = frame.select(pair_edges_json().alias("edges"))["edges"].to_list()
    assert [json.loads(e) for e in edges] == [[[a, b]] for a, b in zip(HOSTILE, reversed(HOSTILE))]


def test_the_one_list_of_kinds_names_each_detector_and_the_worlds_kinds():
    from datasets.collusion import KINDS as WORLD_KINDS
    from detectors import get_detector
    from detectors.kinds import ALL, KINDS

    assert set(KINDS) == set(WORLD_KINDS)  # the world plants what the detectors look for
    for k in ALL:
        assert get_detector(k.name).kind == k.name
        assert k.match in ("pair", "account")


# ---------------------------------------------------------------- q_value: one scale for every kind

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from detectors.base import Detector, GroupDetector, PairDetector, Signal, with_q_values  # noqa: E402
from detectors.stats import bh_qvalues  # noqa: E402

P = [0.001, 0.02, None, 0.5, 0.004]


class _Toy(Detector):
    """A detector whose score frame has p-values and no q-values (the base class must add them)."""

    kind = "soft_play"

    def fit(self, con):
        self.missing_ = []
        return self

    def score(self, con):
        return pl.DataFrame({"accounts": [[f"a{i}", f"b{i}"] for i in range(len(P))], "tournaments": [[]] * len(P),
                             "score": [5.0 - i for i in range(len(P))], "p_value": P},
                            schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                    "score": pl.Float64, "p_value": pl.Float64})

    def threshold(self, scores):
        return scores.with_columns(flagged=pl.col("q_value").fill_null(1.0) <= self.alpha)

    def explain(self, con, row):
        return Signal(kind=self.kind, accounts=row["accounts"], score=row["score"], flagged=row["flagged"],
                      summary="toy", p_value=row["p_value"])


def test_score_without_q_gets_bh_over_the_tested_candidates():
    got = _Toy().fit(None).score(None)
    tested = [p for p in P if p is not None]
    want = dict(zip(tested, bh_qvalues(tested)))
    assert got["q_value"].to_list() == [None if p is None else pytest.approx(want[p]) for p in P]
    assert got["q_value"][0] == pytest.approx(0.001 * 4 / 1)  # 4 tested, not 5: an untested row is no test
    # a detector's own q-values (a weighted BH, a larger family) are kept as they are
    own = pl.DataFrame({"p_value": [0.01], "q_value": [0.3]})
    assert with_q_values(own).equals(own)


def test_detect_gives_each_signal_its_rows_q_value():
    signals = _Toy(alpha=0.01).detect(duckdb.connect())
    by = {tuple(s.accounts): s for s in signals}
    assert by[("a0", "b0")].q_value == pytest.approx(0.004) and by[("a0", "b0")].flagged
    assert by[("a2", "b2")].q_value is None and by[("a2", "b2")].to_dict()["q_value"] is None
    assert by[("a4", "b4")].q_value == pytest.approx(0.008)


class _Pairs(PairDetector):
    kind = "soft_play"
    max_unflagged = 10

    def fit(self, con):
        self.missing_ = []
        return self

    def score(self, con):
        return pl.DataFrame({"player": ["a", "b", "c", "x"], "opponent": ["b", "c", "a", "y"],
                             "accounts": [["a", "b"], ["b", "c"], ["a", "c"], ["x", "y"]], "tournaments": [[]] * 4,
                             "score": [3.0, 2.0, 1.0, 0.5], "p_value": [1e-4, 1e-5, 1e-3, 0.4]})

    def flag(self, scores):
        return scores.with_columns(flagged=pl.col("p_value") < 0.01)

    def explain(self, con, row):
        return Signal(kind=self.kind, accounts=row["accounts"], score=row["score"], flagged=row["flagged"], summary="")


class _Groups(GroupDetector):
    kind = "multi_accounting"
    max_unflagged = 10

    def fit(self, con):
        self.missing_ = []
        return self

    def score(self, con):
        return pl.DataFrame({"a": ["a", "b", "x"], "b": ["b", "c", "y"], "accounts": [["a", "b"], ["b", "c"], ["x", "y"]],
                             "tournaments": [[]] * 3, "score": [3.0, 2.0, 0.5], "p_value": [1e-4, 1e-5, 0.4]})

    def flag(self, scores):
        return scores.with_columns(pair_flagged=pl.col("p_value") < 0.01)

    def explain(self, con, row):
        return Signal(kind=self.kind, accounts=row["accounts"], score=row["score"], flagged=row["flagged"], summary="")


class _Fdr(_Toy):
    """A detector whose level parameter is named ``fdr`` (the flag rule q <= fdr), as the contract asks."""

    def __init__(self, *, fdr: float = 0.05, random_state: int = 0):
        super().__init__(alpha=fdr, random_state=random_state)

    def threshold(self, scores):
        return scores.with_columns(flagged=pl.col("q_value").fill_null(1.0) <= self.fdr)


def test_the_level_is_kept_under_the_name_the_detector_gives_it():
    det = _Fdr(fdr=0.01)
    assert vars(det) == {"fdr": 0.01, "random_state": 0} and det.get_params() == {"fdr": 0.01, "random_state": 0}
    assert det.level_name() == "fdr" and det.fdr_level == 0.01
    assert _Toy(alpha=0.2).fdr_level == 0.2 and _Toy.level_name() == "alpha"
    flagged = {tuple(s.accounts) for s in det.detect(duckdb.connect()) if s.flagged}
    assert flagged == {("a0", "b0"), ("a4", "b4")}


@pytest.mark.parametrize("cls", [_Pairs, _Groups])
def test_a_merged_group_carries_its_smallest_q_value(cls):
    det = cls().fit(None)
    scored = det.score(None)
    q = dict(zip(scored["score"].to_list(), scored["q_value"].to_list()))
    out = det.threshold(scored)
    ring = out.filter(pl.col("flagged")).row(0, named=True)
    assert len(ring["accounts"]) == 3
    assert ring["q_value"] == pytest.approx(min(q[3.0], q[2.0], q.get(1.0, 1.0)))
    alone = out.filter(~pl.col("flagged")).row(0, named=True)
    assert alone["q_value"] == pytest.approx(q[0.5])
    by = {tuple(s.accounts): s.q_value for s in det.detect(duckdb.connect())}
    assert by[tuple(ring["accounts"])] == pytest.approx(ring["q_value"])
