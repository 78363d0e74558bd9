"""The co-entry prior of soft play's weighted BH: a pair that chose to enter many of the same sit-and-gos and spared
each other a little is found thanks to it; an honest pair that co-enters as much but plays normally is not flagged;
the weights keep the false-discovery rate wherever the prior points."""

import datetime as dt
import random

import numpy as np
import polars as pl
import pytest

from detectors import stats
from tests.detect.conftest import build_world
from tests.detect.test_soft_play import MC_SAMPLES, _check_instead_of_bet

SOFT, FRIENDS = ("p12", "p13"), ("p08", "p09")


def _enter_sit_and_gos(con, pairs, *, n_events=150, together=12, field=6, seed=5):
    """Registrations for ``n_events`` sit-and-gos of ``field`` entrants drawn from the 24 cash players and 100
    tournament-only accounts; each pair of ``pairs`` enters ``together`` events of its own together."""
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(24)] + [f"s{i:03d}" for i in range(100)]
    t0 = dt.datetime(2026, 3, 4, 12, 0)
    rows = []
    for j in range(n_events):
        entrants = rng.sample(names, field)
        k = j // together
        if k < len(pairs):
            entrants = list(pairs[k]) + [p for p in entrants if p not in pairs[k]][: field - 2]
        rows += [(p, t0 + dt.timedelta(minutes=j), "register", f"S{j:03d}") for p in entrants]
    con.executemany("INSERT INTO registrations (account, ts, kind, tournament_id) VALUES (?, ?, ?, ?)", rows)


@pytest.fixture(scope="module")
def coentry_world():
    """p12 and p13 check instead of betting into each other in 35 % of their heads-up hands (too few for the
    play tests alone to clear the pairs' BH) and enter 12 sit-and-gos together; p08 and p09 enter 12 together
    and play honestly."""
    w = build_world(n_players=24, n_hands=3000, seed=21)
    changed = _check_instead_of_bet(w.con, ["p12"], against="p13", share=0.35, seed=1) \
        | _check_instead_of_bet(w.con, ["p13"], against="p12", share=0.35, seed=1)
    _enter_sit_and_gos(w.con, [SOFT, FRIENDS])
    return w, changed


def _scores(con, **kw):
    from detectors.soft_play import SoftPlayDetector

    det = SoftPlayDetector(**{"samples": MC_SAMPLES, **kw}).fit(con)
    return det, det.threshold(det.score(con))


def _row(s, pair):
    return s.filter(pl.col("player").is_in(list(pair)) & pl.col("opponent").is_in(list(pair))).row(0, named=True)


def test_subtle_pair_that_co_enters_found_thanks_to_the_prior(coentry_world):
    w, changed = coentry_world
    assert len(changed) >= 12
    det, s = _scores(w.con)
    assert s.filter(pl.col("flagged"))["accounts"].to_list() == [sorted(SOFT)]
    row = _row(s, SOFT)
    assert row["coentry_shared"] == 12 and row["coentry_expected"] < 3 and row["coentry_p"] < 1e-5
    # the factor: x1 at co-entry p 1e-3, x30 at 1e-8, log-linear between
    lo, hi = det.coentry_range
    x = min(max((-np.log10(row["coentry_p"]) - lo) / (hi - lo), 0.0), 1.0)
    assert row["prior_factor"] == pytest.approx(1 + (det.coentry_prior - 1) * x) and row["prior_factor"] > 10
    # without the prior the same p-value does not clear the BH over the pairs (the old behaviour)
    _, s0 = _scores(w.con, coentry_prior=None)
    row0 = _row(s0, SOFT)
    assert row0["p_value"] == pytest.approx(row["p_value"])
    assert not s0["flagged"].any() and row0["q_value"] > det.alpha >= row["q_value"]
    assert row0["prior_factor"] is None
    # the case says what the weight was, after the play evidence, with a query that lists the shared events
    sig = next(x for x in det.detect(w.con) if x.flagged)
    assert "entered 12 of the same tournaments" in sig.summary and "weight x" in sig.summary
    pe = sig.evidence[-2]
    assert pe.name.startswith("tournaments entered together") and pe.value == 12 and pe.p_value == row["coentry_p"]
    assert sig.evidence[0].name.startswith("both directions") and sig.summary.index("entered 12") > sig.summary.index("p = ")
    shared = w.con.execute(pe.sql, sig.extra["sql_params"]).fetchall()
    assert len(shared) == 12


def test_honest_pair_that_co_enters_as_much_is_not_flagged(coentry_world):
    w, _ = coentry_world
    det, s = _scores(w.con)
    row = _row(s, FRIENDS)
    # tested, weighted up as much as the soft pair, and cleared by the play tests
    assert row["aggr_n"] + row["aggr_n_r"] >= det.min_spots
    assert row["prior_factor"] > 10 and row["coentry_shared"] == 12
    assert not row["flagged"] and row["q_value"] > det.alpha
    assert not any(set(FRIENDS) <= set(a) for a in s.filter(pl.col("flagged"))["accounts"].to_list())


def test_prior_weights_keep_the_level_and_default_to_the_power_weights():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=50)
    power = rng.uniform(0, 2, size=50)
    base = stats.weighted_bh_pvalues(p, power)
    assert stats.weighted_bh_pvalues(p, power, prior=np.ones(50)) == pytest.approx(base)
    assert stats.weighted_bh_pvalues(p, power, prior=np.full(50, np.nan)) == pytest.approx(base)
    # a prior of 30 on five hypotheses: their p / w shrink, everyone else's grow (weights still average 1)
    prior = np.ones(50)
    prior[:5] = 30.0
    out = stats.weighted_bh_pvalues(p, np.ones(50), prior=prior)
    w = prior * 50 / prior.sum()
    assert out == pytest.approx(np.minimum(p / w, 1.0))
    # under the global null with a prior drawn independently of the p-values, BH at 0.05 rejects anything in at
    # most ~5 % of the runs (the false-discovery rate equals that probability here)
    hits = 0
    for _ in range(2000):
        pr = np.where(rng.uniform(size=400) < 0.02, 30.0, 1.0)
        hits += stats.bh_reject(stats.weighted_bh_pvalues(rng.uniform(size=400), rng.uniform(0, 1, 400), prior=pr), 0.05).any()
    assert hits / 2000 <= 0.065
