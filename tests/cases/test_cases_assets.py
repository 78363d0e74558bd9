"""The cases, warehouse_snapshot and case_reports assets, materialised twice against a temporary DuckDB."""

from __future__ import annotations

import json

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

import cases_world
from pipelines.defs.cases.assets import case_reports, cases, warehouse_snapshot
from pipelines.defs.cases.checks import cases_export_matches_evaluation, snapshot_matches_warehouse
from pipelines.defs.resources import RailbirdSettings
from pipelines.lib.review import ReviewStore


def test_two_nightly_materialisations_keep_ids_and_decisions(tmp_path):
    wh = tmp_path / "warehouse.duckdb"
    settings = RailbirdSettings(landing_dir=str(tmp_path / "landing"), out_dir=str(tmp_path / "out"),
                                snapshot_path=str(tmp_path / "snapshot" / "warehouse.duckdb"),
                                review_db=str(tmp_path / "review.sqlite"))
    resources = {"warehouse": DuckDBResource(database=str(wh)), "settings": settings}
    selection = [cases, warehouse_snapshot, case_reports, cases_export_matches_evaluation, snapshot_matches_warehouse]

    cases_world.build(wh, 1, "detect-1")
    first = dg.materialize(selection, resources=resources)
    assert first.success
    assert all(e.passed for e in first.get_asset_check_evaluations())
    lines1 = [json.loads(x) for x in (tmp_path / "out" / "cases.jsonl").read_text().splitlines()]
    ids1 = {(r["kind"], tuple(r["accounts"])): r["case"] for r in lines1}
    dump = ids1[("chip_dumping", ("amy", "bob"))]
    assert (tmp_path / "out" / "reports" / f"{dump}.html").exists()
    with ReviewStore(settings.review_db) as st:
        st.add_user("ivy", "investigator", "correct horse battery")
        st.set_status(dump, "in_review", "ivy", "watch the aces")

    cases_world.build(wh, 2, "detect-2")
    second = dg.materialize(selection, resources=resources)
    assert second.success
    lines2 = [json.loads(x) for x in (tmp_path / "out" / "cases.jsonl").read_text().splitlines()]
    ids2 = {(r["kind"], tuple(r["accounts"])): r["case"] for r in lines2}
    assert ids2[("chip_dumping", ("amy", "bob"))] == dump
    assert ids2[("seat_handoff", ("eve",))] == ids1[("seat_handoff", ("eve",))]
    meta = second.asset_materializations_for_node("cases")[0].metadata
    assert meta["new_cases"].value == 3 and meta["reopened"].value == 0  # bounty, hand chat, heads-up flipping
    assert meta["new_hands"].value == 3  # 1007, 1008 for the dumpers, 1009 for the soft-play ring
    snap = duckdb.connect(settings.snapshot_path, read_only=True)
    try:
        row = snap.execute("SELECT status, new_hands, is_new FROM cases WHERE case_id = ?", [dump]).fetchone()
        assert row == ("in_review", ["1007", "1008"], False)
        assert snap.execute("SELECT count(*) FROM case_hands WHERE is_new").fetchone()[0] == 7  # + the bounty hand, the chat hand, the two flips
    finally:
        snap.close()
    with ReviewStore(settings.review_db) as st:
        assert [n["body"] for n in st.notes(dump)] == ["watch the aces"]
        assert st.case(dump)["status"] == "in_review"
    html = (tmp_path / "out" / "reports" / f"{dump}.html").read_text()
    assert "1007" in html and "new" in html
