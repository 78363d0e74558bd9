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


def test_a_family_with_no_hypothesis_leaves_its_budget_to_the_other(passing_world):
    """min_events above every pair's: the main family tests nobody, so the bounty-passing hypotheses carry the whole
    budget: the pair's q is the plain BH q over Tarone's selection (it was twice that: the family kept only
    ``alpha * pass_share`` whether or not the main family tested anyone). The two families alone (``spare_share=0``:
    the sparing family's hypotheses would take their share, tests/detect/test_bounty_sparing.py)."""
    det = BountyCollusionDetector(min_events=10**6, spare_share=0.0)
    sc = det.fit(passing_world.con).score(passing_world.con)
    row = _pair(sc, "k03", "k04")
    p, pmin = (sc[c].cast(pl.Float64).to_numpy() for c in ("pass_p", "tc_min"))
    q = gp.discrete_bh(p, pmin, det.alpha * det.pass_share)
    i = sc.with_row_index("i").filter((pl.col("player") == "k03") & (pl.col("opponent") == "k04"))["i"][0]
    assert 0 < q[i] < 0.5
    assert row["q_main"] is None and row["q_value"] == pytest.approx(q[i], rel=1e-9, abs=0)
    assert row["q_pass"] == pytest.approx(q[i], rel=1e-9, abs=0)
    assert row["p_value"] == pytest.approx(row["pass_p"])
    assert sc["q_main"].is_null().all()


def test_the_families_keep_their_shares_and_an_empty_one_leaves_its_share_to_the_other():
    """Both families with hypotheses: the former split (q_main / (1 - s), q_pass / s). No pair in Tarone's selection
    (a player view, no short shoves): the main family's q is its weighted BH q at the whole alpha (it was twice that)."""
    det = BountyCollusionDetector()
    nan = np.nan
    p_main = np.array([1e-3, 2e-3, 0.018, 0.3, 0.8, nan, nan, nan])
    w = np.array([1.5, 0.5, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    p_pass = np.array([nan, nan, nan, nan, nan, 1e-4, 8e-3, 0.2])
    qm = stats.bh_qvalues(np.where(np.isfinite(p_main), np.minimum(1.0, p_main / w), np.nan))
    q_main, q_pass, q, p, la, lp = det.family_q(p_main, w, p_pass, np.where(np.isfinite(p_pass), 1e-6, nan))
    qp = gp.discrete_bh(p_pass, np.where(np.isfinite(p_pass), 1e-6, nan), det.alpha * det.pass_share)
    assert np.allclose(q, np.fmin(np.fmin(qm / (1 - det.pass_share), qp / det.pass_share), 1.0), rtol=1e-12, atol=0)
    assert (la, lp) == (det.alpha * (1 - det.pass_share), det.alpha * det.pass_share) and p[5] == p_pass[5]
    # the same pairs, none of whose calls could reach significance: the main family at alpha
    q_main, q_pass, q, p, la, lp = det.family_q(p_main, w, p_pass, np.where(np.isfinite(p_pass), 0.9, nan))
    assert np.isnan(q_pass).all() and (la, lp) == (det.alpha, 0.0)
    assert np.allclose(q[:5], qm[:5], rtol=1e-12, atol=0) and np.isnan(q[5:]).all()
    assert (q <= det.alpha).sum() == 3  # 0.018 / 1.0 * 5 / 3 = 0.03: flagged at alpha, not at alpha / 2


def test_the_two_families_control_the_false_discovery_rate_under_the_null():
    """Uniform p-values in both families (no pair colludes): a run flags anything at most alpha of the time."""
    rng = np.random.default_rng(3)
    det = BountyCollusionDetector()
    runs, hits = 4000, 0
    for _ in range(runs):
        w = rng.uniform(0.2, 1.8, size=20)
        q = det.family_q(np.r_[rng.uniform(size=20), np.full(300, np.nan)], np.r_[w / w.mean(), np.zeros(300)],
                         np.r_[np.full(20, np.nan), rng.uniform(size=300)], np.r_[np.full(20, np.nan), np.full(300, 1e-9)])[2]
        hits += bool((np.nan_to_num(q, nan=1.0) <= det.alpha).any())
    assert hits / runs <= det.alpha + 3 * np.sqrt(det.alpha / runs)


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
