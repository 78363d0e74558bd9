"""Signals -> cases: merging, ids across nights, new evidence, reopening, rings, the export."""

from __future__ import annotations

import json
import shutil

import pytest

from cases_world import XSS1, XSS2
from cases_world import PASSWORD, nightly
from pipelines.defs.cases.checks import export_problems
from pipelines.lib.cases import EXPORT_FIELDS, format_ranked, merge_signals
from pipelines.lib.review import ReviewStore


def sig(kind, accounts, score, hands=(), flagged=True, tournaments=()):
    return {"kind": kind, "accounts": list(accounts), "score": score, "flagged": flagged, "hands": list(hands),
            "tournaments": list(tournaments), "summary": f"{kind} {'/'.join(accounts)}", "p_value": None}


def by_accounts(cases):
    return {(c["kind"], tuple(c["accounts"])): c for c in cases}


def test_merge_joins_a_pair_into_its_ring_but_not_two_pairs_sharing_one_player():
    groups = merge_signals([
        sig("soft_play", ["a", "b"], 0.5, ["1"]),
        sig("soft_play", ["b", "c"], 0.4, ["2"]),
        sig("soft_play", ["x", "y", "z"], 0.9, ["3"]),
        sig("soft_play", ["x", "y"], 0.3, ["4", "3"]),
        sig("chip_dumping", ["a", "b"], 0.7, ["5"]),
        sig("seat_handoff", ["e"], 0.6, ["6"], tournaments=["T1"]),
        sig("seat_handoff", ["e"], 0.8, ["7"], tournaments=["T2"]),
    ])
    got = {(g["kind"], tuple(g["accounts"])): g for g in groups}
    assert set(got) == {("soft_play", ("a", "b")), ("soft_play", ("b", "c")), ("soft_play", ("x", "y", "z")),
                        ("chip_dumping", ("a", "b")), ("seat_handoff", ("e",))}
    ring = got[("soft_play", ("x", "y", "z"))]
    assert ring["score"] == 0.9 and ring["hands"] == ["3", "4"] and len(ring["signals"]) == 2
    handoff = got[("seat_handoff", ("e",))]
    assert handoff["score"] == 0.8 and handoff["tournaments"] == ["T2", "T1"] and handoff["hands"] == ["7", "6"]


def test_two_nights_keep_ids_decisions_notes_and_mark_new_evidence(tmp_path):
    first = by_accounts(nightly(tmp_path, 1, "run1"))
    dump1 = first[("chip_dumping", ("amy", "bob"))]
    soft1 = first[("soft_play", ("carl", "dan"))]
    multi1 = first[("multi_accounting", tuple(sorted([XSS1, XSS2])))]
    assert all(c["is_new"] for c in first.values())
    assert dump1["hands"] == ["1001", "1002"]
    with ReviewStore(tmp_path / "review.sqlite") as st:
        st.add_user("ivy", "investigator", PASSWORD)
        st.set_status(dump1["case"], "in_review", "ivy", "looks like a dump")
        st.assign(dump1["case"], "ivy", "ivy")
        st.set_status(soft1["case"], "dismissed", "ivy", "regulars who play tight")
        st.set_status(multi1["case"], "dismissed", "ivy", "a couple sharing a flat")

    second = nightly(tmp_path, 2, "run2")
    got = by_accounts(second)
    dump2 = got[("chip_dumping", ("amy", "bob"))]
    assert dump2["case"] == dump1["case"] and not dump2["is_new"]
    assert dump2["new_hands"] == ["1007", "1008"] and dump2["hands"][0] == "1007"
    assert dump2["status"] == "in_review"
    # the soft-play pair grew into a three-account ring: same case, reopened because its hands grew 2 -> 3
    soft2 = got[("soft_play", ("carl", "dan", "frank"))]
    assert soft2["case"] == soft1["case"] and soft2["reopened"] and soft2["status"] == "in_review"
    # the multi-accounting case brought nothing new: it stays dismissed
    multi2 = got[("multi_accounting", tuple(sorted([XSS1, XSS2])))]
    assert multi2["case"] == multi1["case"] and not multi2["reopened"] and multi2["status"] == "dismissed"
    bounty = got[("bounty_collusion", ("bob", "dan"))]
    assert bounty["is_new"] and bounty["case"] not in {c["case"] for c in first.values()}
    # bob links the dumping and bounty cases, dan the bounty and soft-play ring: one ring
    assert dump2["ring"] == bounty["ring"] == soft2["ring"]
    assert bounty["case"] in dump2["related"]
    with ReviewStore(tmp_path / "review.sqlite") as st:
        assert st.case(dump1["case"])["assignee"] == "ivy"
        assert [n["body"] for n in st.notes(dump1["case"])] == ["looks like a dump"]
        reopen = [a for a in st.audit(soft1["case"]) if a["action"] == "reopened"]
        assert len(reopen) == 1 and "evidence hands 2 -> 3" in reopen[0]["detail"] and reopen[0]["old"] == "dismissed"
        assert st.case(multi1["case"])["status"] == "dismissed"
        fresh = {c["case_id"]: c["new_hands"] for c in st.queue(flagged=None)}
        assert fresh[dump1["case"]] == 2 and fresh[multi1["case"]] == 0 and fresh[bounty["case"]] == 0
        hands = {h["hand_id"]: h["first_run"] for h in st.case_hands(dump1["case"])}
        assert hands == {"1001": "run1", "1002": "run1", "1007": "run2", "1008": "run2"}


def test_a_run_killed_between_registration_and_publication_leaves_nothing_seen(tmp_path, monkeypatch):
    """kill -9 after the review store registered the night's cases, before the warehouse got them.

    The kill is simulated by copying the store as another connection sees it
    (only what was committed survives a SIGKILL) at the moment the warehouse
    tables would be written, then aborting. The next run on that copy must
    equal a run on a store that never met the killed one.
    """
    import sqlite3

    from pipelines.lib import cases as cases_lib

    killed, clean = tmp_path / "killed", tmp_path / "clean"
    killed.mkdir()
    first = by_accounts(nightly(killed, 1, "run1"))
    with ReviewStore(killed / "review.sqlite") as st:
        st.add_user("ivy", "investigator", PASSWORD)
        st.set_status(first[("soft_play", ("carl", "dan"))]["case"], "dismissed", "ivy", "tight regulars")
    shutil.copytree(killed, clean)

    class Killed(BaseException):
        pass

    def kill(con, cases, run_id):
        src, dst = sqlite3.connect(killed / "review.sqlite"), sqlite3.connect(tmp_path / "at_kill.sqlite")
        src.backup(dst)
        src.close()
        dst.close()
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(cases_lib, "write_tables", kill)
        with pytest.raises(Killed):
            nightly(killed, 2, "run2-killed")
    shutil.copyfile(tmp_path / "at_kill.sqlite", killed / "review.sqlite")

    def novelty(cases):
        return {k: (c["case"], c["is_new"], c["new_hands"], c["reopened"], c["status"]) for k, c in cases.items()}

    after, ref = novelty(by_accounts(nightly(killed, 2, "run2"))), novelty(by_accounts(nightly(clean, 2, "run2")))
    assert after == ref
    assert ref[("bounty_collusion", ("bob", "dan"))][1]  # the reference does show something new
    assert ref[("soft_play", ("carl", "dan", "frank"))][3]  # and a reopened case
    assert ref[("chip_dumping", ("amy", "bob"))][2] == ["1007", "1008"]


def test_score_growth_reopens_a_dismissed_case(tmp_path):
    from pipelines.lib.review import ReviewStore as RS

    with RS(tmp_path / "r.sqlite") as st:
        st.add_user("ivy", "investigator", PASSWORD)
        g = sig("soft_play", ["a", "b"], 0.50, ["1", "2", "3", "4"])
        cid = st.register_run("n1", [g])[0]["case"]
        st.set_status(cid, "dismissed", "ivy")
        small = st.register_run("n2", [sig("soft_play", ["a", "b"], 0.55, ["1", "2", "3", "4", "5"])])[0]
        assert not small["reopened"] and st.case(cid)["status"] == "dismissed"
        big = st.register_run("n3", [sig("soft_play", ["a", "b"], 0.65, ["1", "2", "3", "4", "5"])])[0]
        assert big["reopened"] and big["case"] == cid and st.case(cid)["status"] == "in_review"
        assert "score 0.5 -> 0.65" in [a for a in st.audit(cid) if a["action"] == "reopened"][0]["detail"]


def test_review_store_survives_a_warehouse_rebuild(tmp_path):
    first = by_accounts(nightly(tmp_path, 1, "run1"))
    cid = first[("chip_dumping", ("amy", "bob"))]["case"]
    with ReviewStore(tmp_path / "review.sqlite") as st:
        st.add_user("ivy", "investigator", PASSWORD)
        st.add_user("rex", "reviewer", PASSWORD)
        st.propose_confirmation(cid, "ivy", "aces folded into a partner")
        st.approve_confirmation(cid, "rex", "agreed")
        n_audit = len(st.audit())
    (tmp_path / "warehouse.duckdb").unlink()
    shutil.rmtree(tmp_path / "snapshot")
    again = by_accounts(nightly(tmp_path, 1, "run-after-rebuild"))
    assert again[("chip_dumping", ("amy", "bob"))]["case"] == cid
    assert again[("chip_dumping", ("amy", "bob"))]["status"] == "confirmed"
    assert {c["case"] for c in again.values()} == {c["case"] for c in first.values()}
    with ReviewStore(tmp_path / "review.sqlite") as st:
        assert st.case(cid)["status"] == "confirmed"
        assert [n["body"] for n in st.notes(cid)] == ["aces folded into a partner", "agreed"]
        assert len(st.audit()) >= n_audit


def test_cases_jsonl_has_the_fields_of_evaluation_md_then_q_value(tmp_path):
    nightly(tmp_path, 2, "run1")
    lines = (tmp_path / "out" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8  # the carl-dan pair and the carl-dan-frank ring are one case
    recs = [json.loads(x) for x in lines]
    assert EXPORT_FIELDS == ("case", "kind", "accounts", "tournaments", "score", "flagged", "hands", "summary")
    for r in recs:
        assert list(r) == list(EXPORT_FIELDS) + ["q_value"]
        assert r["q_value"] is None or 0 <= r["q_value"] <= 1
        assert isinstance(r["score"], float) and isinstance(r["flagged"], bool)
        assert all(isinstance(h, str) for h in r["hands"]) and all(isinstance(a, str) for a in r["accounts"])
    handoff = next(r for r in recs if r["kind"] == "seat_handoff")
    assert handoff["accounts"] == ["eve"] and handoff["tournaments"] == ["T1"]
    assert [r["flagged"] for r in recs] == sorted((r["flagged"] for r in recs), reverse=True)
    assert export_problems(tmp_path / "out" / "cases.jsonl") == []


def test_format_ranked_strips_control_characters(tmp_path):
    path = tmp_path / "cases.jsonl"
    rows = [{"case": "c-000002", "kind": "soft_play", "accounts": ["a\x1b[31mred", "b"], "tournaments": [],
             "score": 0.9, "flagged": True, "hands": [], "summary": ""},
            {"case": "c-000001", "kind": "chip_dumping", "accounts": ["c", "d"], "tournaments": [],
             "score": 0.1, "flagged": False, "hands": [], "summary": ""}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = format_ranked(path, limit=1)
    assert "\x1b" not in text and "[31m" not in text and "ared" in text  # the escape sequence goes whole
    lines = text.splitlines()
    assert lines[0] == "2 cases, 1 flagged; the first 1:"
    assert lines[2].split()[:5] == ["1", "c-000002", "soft_play", "–", "0.900"]
    assert "c-000001" not in text
    assert lines[-1].startswith("Open them: railbird serve, then http://127.0.0.1:8765/cases/c-000002")


def test_format_ranked_lists_by_the_estimated_false_discovery_rate_with_names_as_text(tmp_path):
    """The run's list leads with q and orders as the queue does (flagged, then q lowest first; a case
    without q after those with one), whatever the score; a right-to-left override, quotes and emoji in a
    name reach the terminal as text."""
    path = tmp_path / "cases.jsonl"
    rtl = 'נועם "\u202eevil\u202c" O\'Neil 🃏'
    rows = [("c-000001", "chip_dumping", 0.99, True, 0.04, ["a", "b"]),
            ("c-000002", "hand_chat", 0.30, True, 0.0002, [rtl, "b"]),
            ("c-000003", "soft_play", 0.95, True, None, ["c", "d"]),
            ("c-000004", "heads_up_flipping", 0.50, False, 0.001, ["e", "f"]),
            ("c-000005", "multi_accounting", 0.20, True, 0.01, ["g", "h"])]
    path.write_text("".join(json.dumps({"case": c, "kind": k, "accounts": acc, "tournaments": [], "score": sc,
                                        "flagged": fl, "hands": [], "summary": "", "q_value": q}) + "\n"
                            for c, k, sc, fl, q, acc in rows))
    lines = format_ranked(path).splitlines()
    assert lines[1].split()[:5] == ["rank", "case", "kind", "est.", "FDR"]
    assert [ln.split()[1] for ln in lines[2:7]] == ["c-000002", "c-000005", "c-000001", "c-000003", "c-000004"]
    assert lines[2].split()[3:5] == ["0.02", "%"] and lines[5].split()[3] == "–"
    assert "\u202e" not in lines[2] and "\u202c" not in lines[2]
    assert 'נועם "?evil?" O\'Neil 🃏, b' in lines[2]


@pytest.mark.parametrize("missing", ["hands", "flagged"])
def test_export_check_catches_a_missing_field(tmp_path, missing):
    rec = {"case": "c-1", "kind": "soft_play", "accounts": [], "tournaments": [], "score": 1.0, "flagged": True,
           "hands": [], "summary": ""}
    del rec[missing]
    (tmp_path / "c.jsonl").write_text(json.dumps(rec) + "\n")
    assert export_problems(tmp_path / "c.jsonl") == [f"line 1: missing ['{missing}']"]


def test_load_signals_keeps_each_detectors_latest_run_and_known_kinds(tmp_path):
    import datetime as dt

    from cases_world import insert, new_warehouse
    from pipelines.lib.cases import load_signals

    con = new_warehouse(tmp_path / "w.duckdb")
    row = lambda kind, det, acc, run, day: (kind, det, acc, [], 0.5, None, True, ["1"], f"{det} {run}",  # noqa: E731
                                            json.dumps({"extra": {"run": run}}), run, dt.datetime(2026, 3, day), None)
    insert(con, "signals", [row("soft_play", "SoftPlay", ["a", "b"], "old", 1),
                            row("soft_play", "SoftPlay", ["c", "d"], "new", 2),
                            row("chip_dumping", "ChipDumping", ["a", "b"], "old", 1),
                            row("mystery", "Mystery", ["x", "y"], "new", 2)])
    got = sorted((s["kind"], s["summary"], s["extra"]["run"]) for s in load_signals(con))
    assert got == [("chip_dumping", "ChipDumping old", "old"), ("soft_play", "SoftPlay new", "new")]
