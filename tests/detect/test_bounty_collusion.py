"""BountyCollusionDetector: a subtle gang against its closest honest look-alike.

The look-alike is the pair a gang is most easily confused with: two regulars who sit at the same knockout table in
every hand one of them plays (so they share more tournaments than the gang and get at least its weight in the
false-discovery control) and who both call short-stack shoves wider than their cards justify, whoever else is in.
The gang calls wider only while the other member is still in the hand, in a quarter of the hands (one coin per hand
for both members, as the synthetic world's gangs). What tells them apart is the partner-conditioning (each player's
own baseline without the other), not the seating nor the looseness.
"""

from detectors.bounty_collusion import BountyCollusionDetector

GANG = ("k07", "k08")
REGULARS = ("k10", "k11")  # build_ko_world seats k11 beside k10 whenever k10 plays


def _call_instead_of_folding(con, player, share, *, coin, partner=None):
    """Turn ``player``'s preflop folds into calls in ``share`` of the hands; returns the decisions changed.

    ``coin`` salts the hash that decides a hand (the same salt for two players = one coin per hand for both);
    ``partner``: only at decisions where that player had not folded yet. Only the action line changes (the
    detectors read the lines; postflop lines are not rewritten)."""
    cond, params = "", [player]
    if partner is not None:
        cond = """AND EXISTS (SELECT 1 FROM seats s WHERE s.hand_id = a.hand_id AND s.player = ? AND s.dealt_in
                  AND NOT EXISTS (SELECT 1 FROM actions f WHERE f.hand_id = a.hand_id AND f.player = s.player
                                  AND f.action = 'fold' AND f.seq < a.seq))"""
        params.append(partner)
    where = f"""a.player = ? AND a.street = 'preflop' AND a.action = 'fold' {cond}
                AND hash(a.hand_id || ?) % 100 < ?"""
    params += [coin, int(round(share * 100))]
    (n,), = con.execute(f"SELECT count(*) FROM actions a WHERE {where}", params).fetchall()
    con.execute(f"UPDATE actions a SET action = 'call', amount = to_call WHERE {where}", params)
    return n


def _world(*, regulars_with_each_other_only: bool):
    from tests.detect.conftest import build_ko_world

    w = build_ko_world(n_hands=3000, rate=0.0, seed=11)
    # the gang: a quarter of the hands, one coin per hand for both, only while the other member is still in
    changed = sum(_call_instead_of_folding(w.con, a, 0.25, coin="gang", partner=b) for a, b in (GANG, GANG[::-1]))
    # the regulars: 30 % of their folds turned into calls, each with their own coin; whoever is in, or (the
    # positive control) only while the other regular is still in
    for a, b in (REGULARS, REGULARS[::-1]):
        _call_instead_of_folding(w.con, a, 0.3, coin=a, partner=b if regulars_with_each_other_only else None)
    return w, changed


def _pair(sigs, accounts):
    return next(s for s in sigs if set(accounts) <= set(s.accounts))


def test_subtle_gang_flagged_and_loose_regulars_who_always_sit_together_not_flagged():
    w, changed = _world(regulars_with_each_other_only=False)
    assert 10 <= changed <= 40  # a quarter-strength gang: a few dozen decisions changed in 3,000 hands
    sigs = BountyCollusionDetector().detect(w.con)
    assert [s.accounts for s in sigs if s.flagged] == [list(GANG)]
    gang, regs = _pair(sigs, GANG), _pair(sigs, REGULARS)
    wide = gang.evidence[0]
    assert wide.name.startswith("calls against short bounty targets") and wide.p_value < 1e-6
    assert wide.value >= 3 * wide.baseline and gang.extra["q_value"] <= 0.01
    # the look-alike shared more knockout tournaments than the gang (the weighted error budget favours it) ...
    events = {s.accounts[0]: next(e for e in s.evidence if e.name == "knockout tournaments at one table") for s in (gang, regs)}
    assert events[REGULARS[0]].value >= events[GANG[0]].value >= 10
    # ... and called wide as often as its own baseline predicts: nothing for the pair test to see
    rwide = regs.evidence[0]
    assert rwide.n >= 100 and rwide.value <= 1.25 * rwide.baseline
    assert not regs.flagged and (regs.p_value or 1.0) > 1e-3


def test_the_same_regulars_flagged_when_their_wide_calls_wait_for_each_other():
    """Positive control: the same seating and the same share of folds turned into calls, but only while the other
    regular is still in: now the regulars are a gang and are flagged with it (the seating did not hide them)."""
    w, _ = _world(regulars_with_each_other_only=True)
    sigs = BountyCollusionDetector().detect(w.con)
    assert sorted(s.accounts for s in sigs if s.flagged) == sorted([list(GANG), list(REGULARS)])
    regs = _pair(sigs, REGULARS)
    assert regs.evidence[0].value >= 2 * regs.evidence[0].baseline

