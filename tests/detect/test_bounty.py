"""BountyCollusionDetector on planted knockout hands: the gang is found with its tournaments and the hands where
it happened; regulars and everyone's dry side-pot check-downs are not collusion."""

import pytest

from detectors.bounty_collusion import BountyCollusionDetector


@pytest.fixture(scope="module")
def ko_signals(ko_world):
    det = BountyCollusionDetector()
    return det, det.detect(ko_world.con)


def test_gang_found_with_hands_and_tournaments(ko_world, ko_signals):
    det, sigs = ko_signals
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [["k01", "k02"]]
    s = flagged[0]
    gang = set(ko_world.ko_hands)
    assert len(set(s.hands[:10]) & gang) == 10
    assert s.tournaments and all(t.startswith("9") for t in s.tournaments)
    joint = s.evidence[0]
    assert joint.value > 2 * joint.baseline and joint.sql
    assert "checked down" in s.summary and "bounty taken" in s.summary
    assert "Dry side pots" in s.benign


def test_regulars_and_check_downs_not_flagged(ko_signals):
    det, sigs = ko_signals
    assert 0.5 < det.checkdown_rate_ < 0.95  # honest players check dry side pots down too
    for s in sigs:
        if {"k10", "k11"} <= set(s.accounts):
            assert not s.flagged


def test_subtle_gang_ranks_first_even_when_rare():
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=1500, rate=0.25, seed=9)
    sigs = BountyCollusionDetector().detect(w.con)
    assert sigs[0].accounts == ["k01", "k02"]
    assert not any(s.flagged and s.accounts != ["k01", "k02"] for s in sigs)


def _loosen(con, players, *, only_with=None):
    """Turn the preflop folds of ``players`` into calls (optionally only while ``only_with`` is still in the hand).

    Returns the hands changed. The detectors read the action lines, not the chip accounting.
    """
    cond = ""
    params = [list(players)]
    if only_with is not None:
        cond = """AND EXISTS (SELECT 1 FROM seats s WHERE s.hand_id = a.hand_id AND s.player = ? AND s.player <> a.player
                  AND NOT EXISTS (SELECT 1 FROM actions f WHERE f.hand_id = a.hand_id AND f.player = s.player
                                  AND f.action = 'fold' AND f.seq < a.seq))"""
        params.append(only_with)
    hands = con.execute(f"""SELECT DISTINCT hand_id FROM actions a WHERE list_contains(?, a.player)
                            AND a.street = 'preflop' AND a.action = 'fold' {cond}""", params).fetchall()
    con.execute(f"""UPDATE actions a SET action = 'call', amount = to_call WHERE list_contains(?, a.player)
                    AND a.street = 'preflop' AND a.action = 'fold' {cond}""", params)
    return {h for (h,) in hands}


def test_gang_that_loosens_up_with_the_partner_in_found_with_its_hands():
    """No planted joint calls: k03 and k04 only stop folding to short-stack shoves while the other is still in."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    changed = _loosen(w.con, ["k03"], only_with="k04") | _loosen(w.con, ["k04"], only_with="k03")
    sigs = BountyCollusionDetector().detect(w.con)
    flagged = [s for s in sigs if s.flagged]
    assert [s.accounts for s in flagged] == [["k03", "k04"]]
    s = flagged[0]
    assert set(s.hands[:10]) <= changed
    pres = next(e for e in s.evidence if e.name.startswith("preflop continuations"))
    assert pres.value > 1.5 * pres.baseline and pres.n >= 20 and pres.p_value < 1e-3 and pres.sql
    assert "kept playing against short bounty targets" in s.summary
    assert "same hand strength and price" in s.benign


def test_loose_bounty_callers_with_everyone_not_flagged():
    """Two honest maniacs who call every short-stack shove, whoever else is in: their own baseline absorbs it."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _loosen(w.con, ["k05", "k06"])
    sigs = BountyCollusionDetector().detect(w.con)
    assert not any(s.flagged for s in sigs)
    top = next(s for s in sigs if {"k05", "k06"} <= set(s.accounts))
    pres = next(e for e in top.evidence if e.name.startswith("preflop continuations"))
    assert pres.value <= pres.baseline + 3



def test_pairs_sharing_tables_in_fewer_than_min_events_tournaments_are_not_tested():
    """The events filter: the loosening gang is tested, flagged and its evidence counts the knockout tournaments
    it shared tables in; require one more tournament than it shared and the pair is no longer tested (no q-value)."""
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _loosen(w.con, ["k03"], only_with="k04")
    _loosen(w.con, ["k04"], only_with="k03")
    (shared, hands), = w.con.execute("""SELECT count(DISTINCT h.tournament_id), count(*) FROM seats a JOIN seats b USING (hand_id)
                                       JOIN hands h USING (hand_id)
                                       WHERE a.player = 'k03' AND b.player = 'k04' AND a.dealt_in AND b.dealt_in""").fetchall()
    assert shared >= 5
    s = next(s for s in BountyCollusionDetector().detect(w.con) if s.flagged)
    ev = next(e for e in s.evidence if e.name == "knockout tournaments at one table")
    assert (ev.value, ev.n) == (shared, hands) and ev.sql
    det = BountyCollusionDetector(min_events=shared + 1)
    scored = det.fit(w.con).score(w.con)
    row = scored.filter((scored["player"] == "k03") & (scored["opponent"] == "k04")).row(0, named=True)
    assert row["events"] == shared and row["q_value"] is None
    assert not det.threshold(scored)["flagged"].any()


def test_presence_p_is_min_p_bonferroni_of_score_and_exact_tests():
    """A pair with twice its expected continuations in 40 decisions, whose own baselines are uncertain (large score
    variance): the exact binomial tail sees it, the score test hardly does. The presence p-value is the smaller of the
    two, Bonferroni x2 (the former larger-of-the-two left this pair at p ~ 0.1); a loose pair at its expected rate
    stays far from significance under either test."""
    import numpy as np
    import polars as pl

    from detectors import stats
    from detectors.features.gameplay import bounty_presence_unordered

    rows = pl.DataFrame({
        "player": ["a1", "a2", "h1", "h2"], "partner": ["a2", "a1", "h2", "h1"],
        "n": [20.0, 20.0, 40.0, 40.0], "observed": [10.0, 10.0, 21.0, 20.0], "expected": [5.0, 5.0, 20.0, 20.0],
        "score_u": [5.0, 5.0, 1.0, 0.0], "score_var": [30.0, 30.0, 25.0, 25.0], "rate_own": [0.25, 0.25, 0.5, 0.5],
        "tournaments": [["t1"], ["t2"], ["t1"], ["t2"]], "hands": [["1", "2"], ["3"], ["4"], ["5"]],
    })
    u = bounty_presence_unordered(rows)
    gang = u.filter(pl.col("player") == "a1").row(0, named=True)
    honest = u.filter(pl.col("player") == "h1").row(0, named=True)
    assert (gang["pres_n"], gang["pres_k"], gang["pres_e"]) == (40.0, 20.0, 10.0)
    assert gang["pres_p_score"] > 0.05 and gang["pres_p_binom"] < 1e-3
    assert gang["pres_p"] == pytest.approx(min(1.0, 2 * min(gang["pres_p_score"], gang["pres_p_binom"])))
    assert gang["pres_p"] < 2e-3
    assert float(stats.binom_tail(np.array([20.0]), np.array([40.0]), np.array([0.25]))[0]) == pytest.approx(gang["pres_p_binom"])
    assert honest["pres_p"] > 0.3
    assert sorted(gang["pres_hands"]) == ["1", "2", "3"]
