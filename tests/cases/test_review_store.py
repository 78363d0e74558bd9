"""The review store: append-only audit, passwords, sessions, the two-person rule, WAL."""

from __future__ import annotations

import sqlite3

import pytest

from cases_world import PASSWORD
from pipelines.lib.errors import RailbirdError
from pipelines.lib.review import ReviewStore


@pytest.fixture
def store(tmp_path):
    st = ReviewStore(tmp_path / "review.sqlite")
    st.add_user("ivy", "investigator", PASSWORD)
    st.add_user("rex", "reviewer", PASSWORD)
    st.add_user("roy", "reviewer", PASSWORD)
    [r] = st.register_run("run1", [{"kind": "chip_dumping", "accounts": ["amy", "bob"], "score": 0.9,
                                     "flagged": True, "hands": ["1", "2"], "summary": "s"}])
    st.cid = r["case"]
    yield st
    st.close()


def test_store_is_wal_and_audit_and_notes_are_append_only(store):
    assert store.con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.add_note(store.cid, "ivy", "first look")
    for sql in ("UPDATE audit SET actor = 'mallory'", "DELETE FROM audit",
                "UPDATE notes SET body = 'nothing here'", "DELETE FROM notes"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.con.execute(sql)
    for sql in ("DELETE FROM cases", "DELETE FROM case_hands"):
        with pytest.raises(sqlite3.DatabaseError, match="never deleted"):
            store.con.execute(sql)
    assert store.notes(store.cid)[0]["body"] == "first look"
    assert [a["action"] for a in store.audit(store.cid)] == ["opened", "note"]


def test_passwords_are_salted_scrypt_hashes(store):
    rows = store.con.execute("SELECT name, salt, pw_hash FROM users ORDER BY name").fetchall()
    assert len({r["salt"] for r in rows}) == 3 and len({r["pw_hash"] for r in rows}) == 3  # same password
    assert all(PASSWORD.encode() not in r["pw_hash"] for r in rows)
    assert store.verify_password("ivy", PASSWORD)
    assert not store.verify_password("ivy", PASSWORD + "x")
    assert not store.verify_password("nobody", PASSWORD)
    with pytest.raises(RailbirdError, match="too short"):
        store.add_user("tim", "investigator", "short")
    with pytest.raises(RailbirdError, match="unknown role"):
        store.add_user("tim", "owner", PASSWORD)


def test_sessions_are_hashed_and_expire(store):
    token, csrf = store.create_session("ivy")
    assert store.session(token)["user"] == "ivy" and store.session(token)["csrf"] == csrf
    assert store.con.execute("SELECT count(*) FROM sessions WHERE token_hash = ?", [token]).fetchone()[0] == 0
    old, _ = store.create_session("ivy", ttl=-1)
    assert store.session(old) is None
    assert store.session("forged") is None and store.session(None) is None
    store.end_session(token)
    assert store.session(token) is None


def test_two_person_rule(store):
    cid = store.cid
    with pytest.raises(RailbirdError, match="second reviewer"):
        store.set_status(cid, "confirmed", "rex")
    with pytest.raises(RailbirdError, match="nobody has proposed"):
        store.approve_confirmation(cid, "rex")
    store.propose_confirmation(cid, "rex", "clear dump")
    with pytest.raises(RailbirdError, match="must not be the proposer"):
        store.approve_confirmation(cid, "rex")
    with pytest.raises(RailbirdError, match="only a reviewer"):
        store.approve_confirmation(cid, "ivy")
    assert store.case(cid)["status"] == "in_review" and store.case(cid)["confirm_proposed_by"] == "rex"
    store.approve_confirmation(cid, "roy", "agree")
    case = store.case(cid)
    assert case["status"] == "confirmed" and case["confirm_proposed_by"] is None
    trail = [(a["actor"], a["action"], a["old"], a["new"]) for a in store.audit(cid)]
    assert ("rex", "status", "new", "in_review") in trail
    assert ("rex", "confirmation_proposed", None, "rex") in trail
    assert trail[-1] == ("roy", "status", "in_review", "confirmed")
    with pytest.raises(RailbirdError, match="only a reviewer can reopen"):
        store.set_status(cid, "in_review", "ivy")


def test_every_change_is_audited_with_old_and_new(store):
    cid = store.cid
    store.assign(cid, "ivy", "rex")
    store.set_status(cid, "dismissed", "ivy", "variance")
    store.set_status(cid, "in_review", "ivy")
    trail = [(a["actor"], a["action"], a["field"], a["old"], a["new"]) for a in store.audit(cid)]
    assert trail[1:] == [("rex", "assign", "assignee", None, "ivy"),
                         ("ivy", "note", "notes", None, "variance"),
                         ("ivy", "status", "status", "new", "dismissed"),
                         ("ivy", "status", "status", "dismissed", "in_review")]
    with pytest.raises(RailbirdError, match="no user"):
        store.assign(cid, "mallory", "rex")
    with pytest.raises(RailbirdError, match="unknown status"):
        store.set_status(cid, "deleted", "rex")


def test_queue_filters_and_sorts_with_bound_parameters(store):
    store.register_run("run2", [
        {"kind": "chip_dumping", "accounts": ["amy", "bob"], "score": 0.9, "flagged": True, "hands": ["1"], "summary": ""},
        {"kind": "soft_play", "accounts": ["c", "d"], "score": 0.4, "flagged": True, "hands": [], "summary": "",
         "stake": 10},
        {"kind": "soft_play", "accounts": ["e", "f"], "score": 0.6, "flagged": False, "hands": [], "summary": ""},
    ])
    assert [c["kind"] for c in store.queue()] == ["chip_dumping", "soft_play"]
    assert [c["score"] for c in store.queue(flagged=None, sort="score", desc=False)] == [0.4, 0.6, 0.9]
    assert [c["accounts"] for c in store.queue(kind="soft_play", flagged=None, score_min=0.5)] == [["e", "f"]]
    assert store.queue(kind="x' OR '1'='1") == []
    assert len(store.queue(sort="score; DROP TABLE cases")) == 2  # unknown sort keys fall back to the rank
    store.assign(store.cid, "ivy", "rex")
    assert [c["case_id"] for c in store.queue(assignee="ivy")] == [store.cid]
    assert [c["kind"] for c in store.queue(assignee="-")] == ["soft_play"]
    assert [c["case_id"] for c in store.queue(account="amy")] == [store.cid]
    today = store.case(store.cid)["last_seen_at"][:10]
    assert len(store.queue(date_from=today, date_to=today)) == 2
    assert store.queue(date_to="2000-01-01") == [] and store.queue(date_from="2999-01-01") == []
    assert len(store.queue(date_field="first_seen", date_from=today)) == 2
