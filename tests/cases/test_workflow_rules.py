"""The role rules in one place: what the app offers (allowed_actions) is exactly what the store accepts."""

from __future__ import annotations

import sqlite3

import pytest

from cases_world import PASSWORD
from pipelines.lib.errors import RailbirdError
from pipelines.lib.review import ReviewStore, allowed_actions
from pipelines.lib.workflow import ACTIONS

USERS = {"ivy": "investigator", "ian": "investigator", "rex": "reviewer", "roy": "reviewer", "ada": "admin"}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A store with five users and one fresh case (built once: scrypt is slow on purpose)."""
    path = tmp_path_factory.mktemp("wf") / "review.sqlite"
    st = ReviewStore(path)
    for name, role in USERS.items():
        st.add_user(name, role, PASSWORD)
    st.register_run("run1", [{"kind": "chip_dumping", "accounts": ["amy", "bob"], "score": 0.9,
                              "flagged": True, "hands": ["1", "2"], "summary": "s"}])
    yield st
    st.close()


def _copy(base: ReviewStore, path) -> ReviewStore:
    """A copy of a store, not synced to disk (a throwaway: fsync would dominate the test's time)."""
    dst = sqlite3.connect(str(path))
    dst.execute("PRAGMA synchronous=OFF")
    base.con.backup(dst)
    dst.close()
    st = ReviewStore(path)
    st.con.execute("PRAGMA synchronous=OFF")
    return st


STATES = {
    "new": [],
    "proposed by a reviewer": [("propose", "rex")],
    "proposed by an investigator": [("propose", "ivy")],
    "confirmed": [("propose", "ivy"), ("approve", "rex")],
    "reopened after confirmation": [("propose", "ivy"), ("approve", "rex"), ("status:in_review", "roy")],
    "dismissed": [("status:dismissed", "ivy")],
}


def _do(st: ReviewStore, cid: str, action: str, user: str) -> None:
    if action == "note":
        st.add_note(cid, user, "a note")
    elif action == "assign":
        st.assign(cid, "ian", user)
    elif action == "propose":
        st.propose_confirmation(cid, user)
    elif action == "approve":
        st.approve_confirmation(cid, user)
    elif action == "reject":
        st.reject_confirmation(cid, user)
    else:
        st.set_status(cid, action.removeprefix("status:"), user)


@pytest.mark.parametrize("state", list(STATES))
def test_offered_is_accepted_and_nothing_else(base, tmp_path, state):
    cid = "c-000001"
    st0 = _copy(base, tmp_path / "state.sqlite")
    for action, user in STATES[state]:
        _do(st0, cid, action, user)
    st0.close()
    for user, role in USERS.items():
        probe = ReviewStore(tmp_path / "state.sqlite")
        case = probe.case(cid)
        offered = allowed_actions(role, case, user)
        assert offered == probe.allowed_actions(cid, user)
        probe.close()
        for action in ACTIONS:
            if action == f"status:{case['status']}":
                continue
            st = _copy(ReviewStore(tmp_path / "state.sqlite"), tmp_path / f"{user}-{action}.sqlite")
            try:
                _do(st, cid, action, user)
                accepted = True
            except RailbirdError:
                accepted = False
            finally:
                st.close()
            assert accepted == (action in offered), (state, user, action)


def test_a_status_change_cannot_withdraw_a_proposal_the_role_may_not_reject(base, tmp_path):
    st = _copy(base, tmp_path / "s.sqlite")
    st.propose_confirmation("c-000001", "rex", "clear dump")
    with pytest.raises(RailbirdError, match="withdraw"):
        st.reject_confirmation("c-000001", "ivy")
    with pytest.raises(RailbirdError, match="withdraw rex's confirmation proposal"):
        st.set_status("c-000001", "new", "ivy")
    with pytest.raises(RailbirdError, match="already proposed"):
        st.propose_confirmation("c-000001", "ivy")  # a second proposal would replace rex's
    case = st.case("c-000001")
    assert case["confirm_proposed_by"] == "rex" and case["status"] == "in_review"
    st.set_status("c-000001", "in_review", "ivy", "still looking")  # same status: a note, the proposal stays
    assert st.case("c-000001")["confirm_proposed_by"] == "rex"
    st.set_status("c-000001", "new", "roy")  # a reviewer may
    assert st.case("c-000001")["confirm_proposed_by"] is None


def test_one_reviewer_alone_cannot_dismiss_a_confirmed_case(base, tmp_path):
    st = _copy(base, tmp_path / "s.sqlite")
    st.propose_confirmation("c-000001", "ivy")
    st.approve_confirmation("c-000001", "rex")
    with pytest.raises(RailbirdError, match="first reopened"):
        st.set_status("c-000001", "dismissed", "rex")
    st.set_status("c-000001", "in_review", "rex", "new facts")
    assert st.case("c-000001")["unconfirmed_by"] == "rex"
    for user in ("rex", "ivy"):
        with pytest.raises(RailbirdError, match="different reviewer"):
            st.set_status("c-000001", "dismissed", user)
    st.set_status("c-000001", "new", "rex")  # moving around does not launder it
    with pytest.raises(RailbirdError, match="different reviewer"):
        st.set_status("c-000001", "closed_insufficient_evidence", "rex")
    st.set_status("c-000001", "dismissed", "roy")
    case = st.case("c-000001")
    assert case["status"] == "dismissed" and case["unconfirmed_by"] is None
    trail = [(a["actor"], a["old"], a["new"]) for a in st.audit("c-000001") if a["action"] == "status"]
    assert trail[-3:] == [("rex", "confirmed", "in_review"), ("rex", "in_review", "new"), ("roy", "new", "dismissed")]
