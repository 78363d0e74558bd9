"""Bounty passing (detectors.features.gameplay.bounty_passing): a pair that calls each other's short-stacked shoves
with hands it folds to anyone else's is found without the events filter; a bounty hunter who calls everyone's
shoves is not; the discrete false-discovery control counts only the pairs that could reach significance."""

import numpy as np
import polars as pl
import pytest

from detectors import stats
from detectors.bounty_collusion import BountyCollusionDetector
from detectors.features import gameplay as gp


def _call_shoves(con, caller, shover=None):
    """Turn ``caller``'s preflop folds facing an all-in raise (by ``shover``, or anyone) into calls; returns how many.

    Only the action lines change (the detectors read the action lines, not the chip accounting)."""
    last = """(SELECT r.player || CASE WHEN r.is_all_in THEN '!' ELSE '' END FROM actions r
               WHERE r.hand_id = a.hand_id AND r.street = 'preflop' AND r.action IN ('bet', 'raise') AND r.seq < a.seq
               ORDER BY r.seq DESC LIMIT 1)"""
    where = f"a.player = ? AND a.street = 'preflop' AND a.action = 'fold' AND {last} LIKE ?"
    params = [caller, "%!" if shover is None else shover + "!"]
    (n,), = con.execute(f"SELECT count(*) FROM actions a WHERE {where}", params).fetchall()
    con.execute(f"UPDATE actions a SET action = 'call', amount = to_call WHERE {where}", params)
    return n


def _pair(frame, a, b):
    return frame.filter((pl.col("player") == min(a, b)) & (pl.col("opponent") == max(a, b))).row(0, named=True)


@pytest.fixture(scope="module")
def passing_world():
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    w.passed = _call_shoves(w.con, "k03", "k04") + _call_shoves(w.con, "k04", "k03")
    w.hunted = _call_shoves(w.con, "k05")
    return w


def test_calls_of_the_partners_shoves_counted_against_the_callers_own_rate(passing_world):
    w = passing_world
    assert w.passed >= 8 and w.hunted >= 30
    p = gp.bounty_passing(w.con)
    gang = _pair(p, "k03", "k04")
    # every fold turned into a call sits in a cell the caller's own baseline folds (honest callers call at >= 0.58)
    assert gang["tc_k"] >= w.passed - 1 and gang["tc_e"] < 0.3 * gang["tc_k"]
    assert gang["tc_p"] < 1e-6 and gang["pass_p"] < 1e-6
    # every wide decision a call: the pair's p-value is the smallest it could give
    assert gang["tc_min"] == pytest.approx(gang["tc_p"], rel=1e-9)
    # the hunter calls every shove with anything: with each shover as with the others, nothing stands out
    hunter = p.filter((pl.col("player") == "k05") | (pl.col("opponent") == "k05"))
    assert hunter.height > 10 and hunter["tc_p"].drop_nulls().min() > 0.01


def test_a_gang_that_shared_too_few_events_for_the_main_family_is_flagged_by_its_bounty_passing(passing_world):
    """min_events above every pair's: the main family tests nobody (as a world b gang meeting in one or two knockout
    events); the bounty-passing family has no events filter and flags the pair, with the calls first in the case;
    without it (pass_share=0, the former detector) nothing is flagged. The hunter is not flagged."""
    w = passing_world
    sigs = BountyCollusionDetector(min_events=10**6).detect(w.con)
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [["k03", "k04"]]
    s = flagged[0]
    ev = next(e for e in s.evidence if e.name.startswith("calls of the other's short-stacked raise"))
    assert ev.value >= w.passed - 1 and ev.p_value < 1e-6 and ev.sql == gp.BOUNTY_PARTNER_RAISE_SQL
    assert "in the bounty-passing family" in ev.text and "q = not tested" not in ev.text
    assert "A bounty hunter calls every short stack's shove" in s.benign
    assert s.tournaments
    assert not any(x.flagged for x in BountyCollusionDetector(min_events=10**6, pass_share=0.0).detect(w.con))


def test_q_value_is_the_better_family_at_its_share_of_alpha(passing_world):
    det = BountyCollusionDetector(min_events=10**6)
    sc = det.fit(passing_world.con).score(passing_world.con)
    row = _pair(sc, "k03", "k04")
    assert row["q_main"] is None and row["q_value"] == pytest.approx(min(1.0, row["q_pass"] / det.pass_share))
    assert row["p_value"] == pytest.approx(row["pass_p"])
    assert sc["q_main"].is_null().all()


def test_discrete_bh_counts_only_the_hypotheses_that_can_reach_significance():
    """Tarone's K: with alpha 0.05, p_min = (1e-4, 1e-3, 0.02, 0.3, 0.5): K = 1 leaves three at p_min <= 0.05,
    K = 2 two at <= 0.025, K = 2 is the first with M(K) <= K, so BH runs over the first two only."""
    p = np.array([2e-4, 0.02, 0.03, 0.4, 1.0])
    p_min = np.array([1e-4, 1e-3, 0.02, 0.3, 0.5])
    q = gp.discrete_bh(p, p_min, 0.05)
    assert np.isnan(q[2:]).all()
    assert q[:2] == pytest.approx(stats.bh_qvalues(p[:2]))
    # tiny p_min everywhere: plain BH over all
    q_all = gp.discrete_bh(p, np.full(5, 1e-12), 0.05)
    assert q_all == pytest.approx(stats.bh_qvalues(p))
    # untested (NaN) hypotheses stay out
    q_nan = gp.discrete_bh(np.array([np.nan, 0.01]), np.array([1e-6, 1e-6]), 0.05)
    assert np.isnan(q_nan[0]) and q_nan[1] == pytest.approx(0.01)


def test_discrete_bh_controls_the_false_discovery_rate_under_the_null():
    """Many pairs with one to three Bernoulli decisions at their own rates, none colluding: the discrete family's
    rejections at alpha 0.05 are rare (each rejection is a false one; FDR = P(any) under the global null)."""
    rng = np.random.default_rng(3)
    runs, any_flag = 300, 0
    for _ in range(runs):
        m = 400
        n = rng.integers(1, 4, m)
        r = rng.uniform(0.02, 0.3, (m, 3))
        x = rng.random((m, 3)) < r
        used = np.arange(3)[None, :] < n[:, None]
        k = (x & used).sum(1)
        # exact tail of each pair's Poisson-binomial, by enumeration of the 2^n outcomes
        p = np.ones(m)
        for i in range(m):
            ri = r[i, : n[i]]
            out = np.array(np.meshgrid(*[[0, 1]] * n[i])).reshape(n[i], -1).T
            prob = np.prod(np.where(out == 1, ri, 1 - ri), axis=1)
            p[i] = prob[out.sum(1) >= k[i]].sum()
        p_min = np.where(used, r, 1.0).prod(1)
        any_flag += int((gp.discrete_bh(p, p_min, 0.05) <= 0.05).any())
    assert any_flag / runs <= 0.08
