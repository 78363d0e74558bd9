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
