"""benchmarks/real_play_check.py: the figures a flagged case is checked with against the honest confounders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb

from cases_world import XSS1, XSS2, nightly
from pipelines.lib.warehouse import VIEWS_SQL

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import real_play_check as rpc  # noqa: E402  (a script beside the benchmarks, not a package)


def test_flagged_cases_with_the_figures_of_the_check(tmp_path, capsys):
    nightly(tmp_path, 2, "run1")
    con = duckdb.connect(str(tmp_path / "snapshot" / "warehouse.duckdb"))
    con.execute(VIEWS_SQL.read_text(encoding="utf-8"))  # a pipeline's warehouse has its analyst views
    con.close()
    argv = ["--run", str(tmp_path / "out"), "--warehouse", str(tmp_path / "snapshot" / "warehouse.duckdb"), "--top", "1"]
    assert rpc.main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cases"] == 8 and len(out["checked"]) == out["flagged"] + 1
    dump = next(c for c in out["checked"] if c["kind"] == "chip_dumping")
    amy = next(a for a in dump["account_figures"] if a["player"] == "amy")
    # amy: four dumps to bob (raised each: VPIP), one hand at another table without him (folded)
    assert (amy["hands"], amy["vpip"], amy["devices"], amy["tables"]) == (5, 0.8, 1, 2)
    pair = next(p for p in dump["pair_figures"] if (p["a"], p["b"]) == ("amy", "bob"))
    assert (pair["hands_together"], pair["tables_together"], pair["vpip_with"], pair["vpip_without"]) == (4, 1, 1.0, 0.0)
    # the hand without bob falls inside their window together: a like-with-like baseline exists
    assert pair["hands_without_same_window"] == 1 and pair["b_bb_together"] > 0 > pair["a_bb_together"]
    assert dump["evidence"][0]["name"] == "chips lost to partner per hand"
    multi = next(c for c in out["checked"] if c["kind"] == "multi_accounting")
    assert {a["player"] for a in multi["account_figures"]} == {XSS1, XSS2}
    assert rpc.main(argv) == 0
    text = capsys.readouterr().out
    assert "8 cases" in text and "estimated false-discovery rate" in text and "pair amy -> bob: 4 hands together" in text
    assert "\x1b" not in text
