"""The estimated false-discovery rate (``q_value``) from the signals table to the queue: one scale for every
kind, stored, migrated into older warehouses and review stores, shown in plain words and ranked by."""

from __future__ import annotations

import csv
import datetime as dt
import io
import sqlite3

import duckdb
import pytest

from cases_world import SCHEMA, new_warehouse
from detectors.base import Signal
from pipelines.lib.case_story import fdr_sentence, fdr_text
from pipelines.lib.cases import load_signals, merge_signals, rank_key
from pipelines.lib.review import ReviewStore
from pipelines.lib.warehouse import ensure_schema

OLD_SIGNALS = """CREATE TABLE signals (kind VARCHAR NOT NULL, detector VARCHAR NOT NULL, accounts VARCHAR[] NOT NULL,
    tournaments VARCHAR[] NOT NULL, score DOUBLE NOT NULL, p_value DOUBLE, flagged BOOLEAN NOT NULL,
    hands VARCHAR[] NOT NULL, summary VARCHAR NOT NULL, payload JSON NOT NULL, run_id VARCHAR,
    created_at TIMESTAMP NOT NULL)"""


def _case(kind, score, q, flagged=True, stake=0.0, case="c-1"):
    return {"kind": kind, "score": score, "q_value": q, "flagged": flagged, "stake": stake, "case": case}


def test_the_queue_order_is_the_false_discovery_rate_across_kinds():
    # bounty scores run to 30, sit-out scores to 5: the score would put the weaker bounty case first
    cases = [_case("bounty_collusion", 25.0, 0.04, case="c-1"), _case("coordinated_sitout", 3.0, 0.001, case="c-2"),
             _case("soft_play", 9.0, None, case="c-3"), _case("chip_dumping", 1.0, 0.0001, flagged=False, case="c-4"),
             _case("coordinated_sitout", 4.0, 0.001, case="c-5")]
    assert [c["case"] for c in sorted(cases, key=rank_key)] == ["c-5", "c-2", "c-1", "c-3", "c-4"]


def test_a_merged_case_takes_its_smallest_q_value():
    sig = lambda acc, score, q: {"kind": "soft_play", "accounts": acc, "score": score, "q_value": q,  # noqa: E731
                                 "p_value": None, "flagged": True, "hands": [], "tournaments": [], "summary": ""}
    (g,) = merge_signals([sig(["a", "b", "c"], 5.0, 0.02), sig(["a", "b"], 4.0, 0.003), sig(["b", "c"], 3.0, None)])
    assert g["q_value"] == 0.003 and g["score"] == 5.0


def test_an_old_warehouse_gains_the_column_and_keeps_its_signals(tmp_path):
    from pipelines.defs.detect.assets import write_signals

    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute(OLD_SIGNALS)
    con.execute("INSERT INTO signals VALUES ('chip_dumping', 'ChipDumping', ['x', 'y'], [], 2.0, 0.01, true, [], "
                "'old', '{}', 'r0', ?)", [dt.datetime(2026, 1, 1)])
    ensure_schema(con)
    ensure_schema(con)  # idempotent
    assert [s["q_value"] for s in load_signals(con)] == [None]
    write_signals(con, "soft_play", [Signal(kind="soft_play", accounts=["a'\"", "b"], score=3.0, flagged=True,
                                            summary="s", p_value=1e-4, q_value=float("nan")),
                                     Signal(kind="soft_play", accounts=["c", "d"], score=2.0, flagged=True,
                                            summary="t", p_value=1e-3, q_value=0.004)], "r1")
    got = {tuple(s["accounts"]): s for s in load_signals(con)}
    assert got[("a'\"", "b")]["q_value"] is None and got[("c", "d")]["q_value"] == 0.004
    assert got[("c", "d")]["p_value"] == 1e-3 and got[("x", "y")]["summary"] == "old"
    comment = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'signals' "
                          "AND column_name = 'q_value'").fetchone()[0]
    assert "false-discovery rate" in comment


def test_a_new_warehouse_puts_q_value_where_a_migrated_one_has_it(tmp_path):
    new = new_warehouse(tmp_path / "new.duckdb")
    old = duckdb.connect(str(tmp_path / "old.duckdb"))
    old.execute(OLD_SIGNALS)
    old.execute(SCHEMA.read_text())
    cols = "SELECT column_name FROM duckdb_columns() WHERE table_name = 'signals' ORDER BY column_index"
    assert new.execute(cols).fetchall() == old.execute(cols).fetchall()


def test_an_old_review_store_gains_the_column_and_ranks_by_it(tmp_path):
    path = tmp_path / "review.sqlite"
    with ReviewStore(path) as st:
        pass
    raw = sqlite3.connect(str(path))
    raw.execute("ALTER TABLE cases DROP COLUMN q_value")  # the store as railbird made it before the column
    raw.commit()
    assert "q_value" not in [r[1] for r in raw.execute("PRAGMA table_info(cases)")]
    raw.close()
    with ReviewStore(path) as st:
        st.register_run("r1", [
            {"kind": "bounty_collusion", "accounts": ["a", "b"], "score": 20.0, "q_value": 0.04, "flagged": True,
             "hands": ["1"], "summary": ""},
            {"kind": "coordinated_sitout", "accounts": ["c", "d"], "score": 2.0, "q_value": 0.0005, "flagged": True,
             "hands": ["2"], "summary": ""},
            {"kind": "soft_play", "accounts": ["e", "f"], "score": 9.0, "flagged": True, "hands": ["3"], "summary": ""}])
        ranked = [(r["kind"], r["q_value"]) for r in st.queue()]
        assert ranked == [("coordinated_sitout", 0.0005), ("bounty_collusion", 0.04), ("soft_play", None)]
        assert [r["kind"] for r in st.queue(sort="rank", desc=False)] == ["soft_play", "bounty_collusion",
                                                                           "coordinated_sitout"]
        assert [r["kind"] for r in st.queue(q_max=0.01)] == ["coordinated_sitout"]
    ReviewStore(path).close()  # opening it again adds nothing


def test_the_rate_in_plain_words():
    assert [fdr_text(q) for q in (None, float("nan"), 0.5, 0.034, 0.00041, 1e-9)] == \
        ["–", "–", "50 %", "3.4 %", "0.041 %", "< 0.0001 %"]
    assert "about 3.4 % are expected to accuse players who did nothing wrong" in fdr_sentence(0.034, "soft_play")
    assert "not made" in fdr_sentence(None, "chip_dumping")


@pytest.fixture
def web_with_q(published):
    """The published world with q-values in its store: the weakest-scored flagged case has the lowest rate."""
    with ReviewStore(published / "review.sqlite") as st:
        with st.tx() as con:
            con.execute("UPDATE cases SET q_value = 0.2 WHERE flagged = 1")
            weakest = con.execute("SELECT case_id FROM cases WHERE flagged = 1 ORDER BY score LIMIT 1").fetchone()[0]
            con.execute("UPDATE cases SET q_value = 0.0004 WHERE case_id = ?", [weakest])
    return published, weakest


def test_the_web_queue_shows_sorts_filters_and_exports_the_rate(web_with_q):
    from test_web_app import app_for, rows_of, signed_in

    folder, weakest = web_with_q
    c = signed_in(app_for(folder))
    page = c.get("/cases")
    assert rows_of(page)[0] == weakest
    assert "estimated false-discovery rate" in page.text and "0.04 %" in page.text and "20 %" in page.text
    assert rows_of(c.get("/cases", params={"fdr_max": "1 %"})) == [weakest]
    assert rows_of(c.get("/cases", params={"sort": "fdr", "order": "asc"}))[-1] == weakest
    assert "fdr_max is not a percentage" in c.get("/cases", params={"fdr_max": "x<b>"}).text
    table = list(csv.DictReader(io.StringIO(c.get("/cases.csv").text)))
    assert table[0]["case"] == weakest and float(table[0]["estimated_false_discovery_rate"]) == 0.0004


def test_the_report_says_the_rate_in_plain_words(published):
    from pipelines.lib.reports import build_report, render_html

    con = duckdb.connect(str(published / "snapshot" / "warehouse.duckdb"))
    try:
        con.execute("UPDATE cases SET q_value = 0.0004 WHERE case_id = 'c-000001'")
        rep = build_report(con, "c-000001")
        other = build_report(con, "c-000002")
    finally:
        con.close()
    assert rep["fdr"].startswith("Estimated false-discovery rate 0.04 %") and "0.04 %" in rep["accusation"]
    assert "Estimated false-discovery rate 0.04 %" in render_html(rep)
    assert other["case"]["q_value"] is None and other["fdr"].startswith("No estimated false-discovery rate")


def test_the_well_formed_check_catches_a_rate_outside_0_1(tmp_path):
    from pipelines.defs.detect.assets import write_signals
    from pipelines.defs.detect.checks import WELL_FORMED_SQL

    con = new_warehouse(tmp_path / "w.duckdb")
    sig = lambda acc, q: Signal(kind="soft_play", accounts=acc, score=1.0, flagged=False, summary="", q_value=q)  # noqa: E731
    write_signals(con, "soft_play", [sig(["a", "b"], 0.5), sig(["c", "d"], None), sig(["e", "f"], 1.5)], "r1")
    rows, _, _, bad_p, bad_q, _ = con.execute(WELL_FORMED_SQL, ["soft_play"]).fetchall()[0]
    assert (rows, bad_p, bad_q) == (3, 0, 1)
