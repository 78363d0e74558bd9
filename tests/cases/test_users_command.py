"""`railbird users` and the ranked terminal listing `railbird run` prints."""

from __future__ import annotations

import io

from cases_world import PASSWORD
from pipelines.cli import main
from pipelines.lib.cases import format_ranked
from pipelines.lib.review import ReviewStore


def test_users_add_from_stdin_and_roles(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "review.sqlite")
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert main(["users", "--review-db", db, "add", "rex", "--role", "reviewer", "--password-stdin"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["users", "--review-db", db, "add", "tim", "--password-stdin"]) == 2
    assert "password too short" in capsys.readouterr().err
    assert main(["users", "role", "rex", "admin", "--review-db", db]) == 0
    with ReviewStore(db) as st:
        assert st.verify_password("rex", PASSWORD) and st.user("rex")["role"] == "admin"
        assert st.user("tim") is None
        assert [a["action"] for a in st.audit()] == ["user_added", "role_set"]


def test_format_ranked_on_a_nightly_export(published):
    text = format_ranked(published / "out" / "cases.jsonl")
    lines = text.splitlines()
    assert lines[0] == "5 cases, 4 flagged; the first 5:"
    assert [ln.split()[1] for ln in lines[2:7]] == ["c-000001", "c-000002", "c-000004", "c-000003", "c-000005"]
    assert "&lt;" not in text and "<script>alert(1)</script>" in text  # a terminal needs no HTML escaping
    assert lines[-1] == ("Open them: railbird serve, then http://127.0.0.1:8765/cases/c-000001 "
                         "(any case: http://127.0.0.1:8765/cases/<id>)")
