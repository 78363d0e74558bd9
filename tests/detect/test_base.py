"""The detectors' shared helpers on names as real rooms have them."""

import json

import polars as pl

from detectors.base import pair_edges_json

HOSTILE = ['"name', 'trail"', 'a\\b', '[x]', 'Seat 1: folds', '  two  ', 'Ünïcödé', '玩家', '🂡 ace', '{"k": 1}']


def test_pair_edges_json_round_trips_any_name():
    frame = pl.DataFrame({"player": HOSTILE, "opponent": list(reversed(HOSTILE))})
    edges = frame.select(pair_edges_json().alias("edges"))["edges"].to_list()
    assert [json.loads(e) for e in edges] == [[[a, b]] for a, b in zip(HOSTILE, reversed(HOSTILE))]
