"""benchmarks/worlds_bench.py's bars of issue 32: each figure against its bar, and what the verdict needs."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import worlds_bench as wb  # noqa: E402  (a script beside the benchmarks, not a package)


def _kind(found_hi, n_hi, found_mid, n_mid, right, flagged, aps):
    return {"bands": {">=0.25": [n_hi, found_hi], "0.1-0.25": [n_mid, found_mid]}, "flagged": flagged, "right": right,
            "ap": aps, "ranked": []}


def test_each_bar_passes_or_fails_on_its_own_figure():
    pooled = {"soft_play": _kind(9, 10, 7, 10, 19, 20, [0.97, 0.95]),  # 0.9, 0.7, 0.95, mean AP 0.96: all pass
              "chip_dumping": _kind(8, 10, 6, 10, 18, 20, [0.5])}       # 0.8, 0.6, 0.9, 0.5: all fail
    lines = wb.bar_lines("w", pooled, (1, 10_000), ["soft_play", "chip_dumping", "seat_handoff"])
    assert [v for v, line in lines if line.startswith("w soft_play")] == ["PASS"] * 4
    assert [v for v, line in lines if line.startswith("w chip_dumping")] == ["FAIL"] * 4
    assert [v for v, line in lines if line.startswith("w seat_handoff")] == ["NO DATA"] * 4  # nothing to measure
    assert lines[-1][0] == "PASS" and "1.00 per 10,000" in lines[-1][1]  # at most 1: the bar itself passes
    assert wb.bar_lines("w", {}, (3, 10_000), [])[-1][0] == "FAIL"
    assert wb.bar_lines("w", {}, None, [])[-1][0] == "NO DATA"


def test_the_verdict_needs_held_out_seeds_five_per_world_and_both_sizes():
    ok = wb.conditions([], [1001, 1002, 1003, 1004, 1005], [2001, 2002, 2003, 2004, 2005], [60_000, 240_000])
    assert [v for v, _ in ok] == ["PASS"] * 5
    bad = wb.conditions([1], [1, 1002], [2001] * 5, [60_000])
    assert [v for v, _ in bad] == ["FAIL", "FAIL", "FAIL", "PASS", "FAIL"]
