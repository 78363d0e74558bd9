"""The bounty-collusion flag is the calibrated q-value rule (issue 32): flagged iff q <= alpha (the false-discovery rate), with no hidden gate on
joint contests or excess continuations; the bounty-hunter explanation is stated in the case with its figures."""

import polars as pl

from detectors.bounty_collusion import BountyCollusionDetector


def _scores(rows):
    """Hand-made score rows: (player, opponent, q_value, joint, bounties_won, pres_k, pres_e, wc_k, wc_e)."""
    cols = ["player", "opponent", "q_value", "joint", "bounties_won", "pres_k", "pres_e", "wc_k", "wc_e"]
    return pl.DataFrame([dict(zip(cols, r)) for r in rows],
                        schema={c: (pl.Utf8 if c in ("player", "opponent") else pl.Float64) for c in cols})


def test_flag_is_q_at_most_alpha_whatever_the_counts():
    """A gang that calls rarely (no joint all-in contest, one continuation more than expected) but whose q is below
    the level is flagged; a pair with many joint contests and a q above it is not; an untested pair (no q) never is.
    The old rule wanted three joint contests with a bounty taken or three continuations more than expected."""
    s = _scores([
        ("a", "b", 0.02, 0, 0, 6, 5.0, 2, 1.2),     # rare caller, q below 0.05
        ("c", "d", 0.20, 9, 4, 40, 20.0, 9, 2.0),   # many contests, q above
        ("e", "f", None, 5, 2, 30, 10.0, 8, 1.0),   # not testable
        ("g", "h", 0.049, 3, 1, 10, 5.0, 5, 1.0),
    ])
    det = BountyCollusionDetector(alpha=0.05)
    assert det.flag(s)["flagged"].to_list() == [True, False, False, True]
    assert BountyCollusionDetector(alpha=0.01).flag(s)["flagged"].to_list() == [False, False, False, False]


def test_case_states_the_bounty_hunter_explanation_with_its_figures(ko_world):
    """Every bounty case says that bounty hunters are loose with everyone, with each player's own continuation rate
    with other players in beside the population's, and the q-value against the level."""
    det = BountyCollusionDetector()
    sigs = det.detect(ko_world.con)
    s = next(x for x in sigs if x.flagged)
    a, b = s.accounts[:2]
    assert "Bounty hunters chase bounties against everyone" in s.benign
    assert f"(the population {det.pop_cont_rate_:.0%})" in s.benign
    assert 0.0 < det.pop_cont_rate_ < 1.0
    assert f"flagged at q <= {det.alpha:g}" in s.benign
