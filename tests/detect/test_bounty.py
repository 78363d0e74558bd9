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
