"""A detector that raises never costs the night (issue 31, item 3).

The detect and cases stages are materialised over the planted warehouse of
``cases_world`` (last night's signals, run ``night-1``) with a fault planted in
one detector: the run succeeds, every other kind's signals are this run's, the
failed kind keeps last night's and its cases are still published, and
``detector_runs``, the asset checks, the run's tags and ``railbird run``'s
summary say which detector failed and why.
"""

from __future__ import annotations

import json

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

import cases_world
from detectors import REGISTRY
from pipelines.commands.run import failure_lines
from pipelines.defs.cases.assets import cases
from pipelines.defs.detect.assets import _load_detector_class, signals_assets
from pipelines.defs.detect.checks import signals_checks
from pipelines.defs.resources import RailbirdSettings

FAULTY = "soft_play"


@pytest.fixture
def night(tmp_path, monkeypatch):
    wh = tmp_path / "warehouse.duckdb"
    cases_world.build(wh, 1, "night-1")
    settings = RailbirdSettings(landing_dir=str(tmp_path / "landing"), out_dir=str(tmp_path / "out"),
                                snapshot_path=str(tmp_path / "snapshot" / "warehouse.duckdb"),
                                review_db=str(tmp_path / "review.sqlite"))
    resources = {"warehouse": DuckDBResource(database=str(wh)), "settings": settings}

    def boom(self, con):
        raise ValueError('planted fault in "O\'Brien"\nsecond line of the message')

    monkeypatch.setattr(_load_detector_class(FAULTY), "detect", boom)
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([*signals_assets, *signals_checks, cases], resources=resources, instance=instance)
    return wh, tmp_path / "out", result, instance


def test_a_failing_detector_leaves_the_other_kinds_published_and_says_so(night):
    wh, out, result, instance = night
    assert result.success
    run_id = result.run_id
    con = duckdb.connect(str(wh), read_only=True)
    try:
        runs = {k: (s, e, r) for k, s, e, r in con.execute(
            "SELECT kind, status, error, signals_run_id FROM detector_runs WHERE run_id = ?", [run_id]).fetchall()}
        by_kind = dict(con.execute("SELECT kind, list(DISTINCT run_id) FROM signals GROUP BY kind").fetchall())
        comments = con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'detector_runs' "
                               "AND comment IS NULL").fetchall()
    finally:
        con.close()
    assert set(runs) == set(REGISTRY)
    assert runs[FAULTY] == ("failed", "ValueError: planted fault in \"O'Brien\"", "night-1")
    assert all(v == ("ok", None, run_id) for k, v in runs.items() if k != FAULTY)
    assert by_kind[FAULTY] == ["night-1"]  # last night's signals kept
    assert comments == []

    published = [json.loads(x) for x in (out / "cases.jsonl").read_text().splitlines()]
    assert FAULTY in {c["kind"] for c in published}  # from the kept signals

    meta = result.asset_materializations_for_node(f"{FAULTY}_signals")[0].metadata
    assert meta["status"].value == "failed" and meta["signals_run_id"].value == "night-1"
    assert "in boom" in meta["traceback"].value  # for whoever mends the detector (the UI, not the terminal)
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks[f"{FAULTY}_detector_ran"] is False
    assert all(checks[f"{k}_detector_ran"] for k in REGISTRY if k != FAULTY)
    assert instance.get_run_by_id(run_id).tags[f"railbird/failed_{FAULTY}"].startswith("ValueError: planted")
    stale = result.asset_materializations_for_node("cases")[0].metadata["stale_kinds"].value
    assert stale == {FAULTY: {"error": runs[FAULTY][1], "signals_run_id": "night-1"}}


def test_the_run_summary_names_the_failed_detector_on_one_line():
    lines = failure_lines({"soft_play": {"error": "ValueError: boom", "signals_run_id": "night-1"},
                           "bounty_collusion": {"error": "KeyError: 'x'", "signals_run_id": ""}})
    assert lines == ["detector bounty_collusion FAILED: KeyError: 'x'; its cases show the signals of no earlier run (none)",
                     "detector soft_play FAILED: ValueError: boom; its cases show the signals of run night-1"]


def test_railbird_run_exits_1_with_one_line_when_a_detector_failed(tmp_path, monkeypatch, capsys):
    from pipelines import cli
    from pipelines.commands import run as run_cmd

    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path))
    monkeypatch.setattr(run_cmd, "execute", lambda landing, out: {
        "span": ("2026-03-02", "2026-03-04"), "summary": None, "run_id": "r2",
        "failed_detectors": {"soft_play": {"error": "ValueError: boom", "signals_run_id": "r1"}}})
    assert cli.main(["run", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    out, err = capsys.readouterr()
    assert "detector soft_play FAILED: ValueError: boom; its cases show the signals of run r1" in out
    assert err.strip().splitlines() == ["railbird run: 1 detector(s) failed (soft_play); the other kinds' cases "
                                        "are published"]
    assert "Traceback" not in out + err
