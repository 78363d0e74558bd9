"""ChipDumpingDetector on a planted world: the dumper and the star are found, giver first, with the dump hands;
soft players, regulars and honest big losers are not."""

from tests.detect.test_soft_play import HONEST, flagged


def test_dump_pair_found_giver_first_with_dump_hands(planted_world, planted_signals):
    sigs = flagged(planted_signals["chip_dumping"])
    pair = [s for s in sigs if {"p06", "p07"} <= set(s.accounts)]
    assert pair, [s.accounts for s in sigs]
    s = pair[0]
    assert s.accounts[0] == "p06"  # the giver
    dump_hands = set(planted_world.dump_hands[frozenset(("p06", "p07"))])
    assert len(set(s.hands[:10]) & dump_hands) >= 8, s.hands[:10]
    value = s.evidence[0]
    assert value.value > value.baseline and value.n >= 20
    flow = next(e for e in s.evidence if e.name.startswith("chips"))
    assert flow.value > 100 and flow.sql
    assert "p06" in s.summary and "bb" in s.summary


def test_star_is_one_signal_around_the_feeder(planted_signals):
    stars = [s for s in flagged(planted_signals["chip_dumping"]) if s.extra.get("shape") == "star"]
    assert stars, [(s.accounts, s.extra.get("shape")) for s in flagged(planted_signals["chip_dumping"])]
    assert set(stars[0].accounts) == {"p20", "p21", "p22", "p23"}
    assert "star around p20" in stars[0].summary


def test_no_honest_or_soft_pair_flagged_as_dumping(planted_signals):
    for s in flagged(planted_signals["chip_dumping"]):
        assert len(set(s.accounts) - HONEST) >= 2, s.accounts
        assert not ({"p01", "p02"} <= set(s.accounts))
    # the biggest honest loser to one opponent is a candidate, not a flag
    honest = [s for s in planted_signals["chip_dumping"] if set(s.accounts) <= HONEST]
    assert honest and not any(s.flagged for s in honest)
