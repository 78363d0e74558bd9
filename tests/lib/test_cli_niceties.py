"""What a newcomer meets first: --version, --help, users add without a terminal, railbird dev, the run's header."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines import cli
from pipelines.commands import dev, run

ROOT = Path(__file__).resolve().parents[2]


def test_version_and_help_open_plainly(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip().startswith("railbird ")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.startswith("railbird finds collusion") and "``" not in out and "The railbird command" not in out


class NoTerminal(io.StringIO):
    def isatty(self):
        return False


def test_users_add_without_a_terminal_says_how(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "review.sqlite")
    monkeypatch.setattr("sys.stdin", NoTerminal("a long enough password\n"))
    assert cli.main(["users", "--review-db", db, "add", "ada", "--role", "admin"]) == 2
    err = capsys.readouterr().err
    assert "no terminal" in err and "--password-stdin" in err and "users add ada --password-stdin" in err
    assert cli.main(["users", "--review-db", db, "add", "ada", "--role", "admin", "--password-stdin"]) == 0
    with pytest.raises(SystemExit):
        cli.main(["users", "add", "--help"])
    assert "--password-stdin" in capsys.readouterr().out


@pytest.mark.slow
def test_users_add_through_a_pipe_as_printed(tmp_path):
    """The command as the error message prints it, in a real process with no terminal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PW": "a long enough password"}
    proc = subprocess.run(f"printf '%s\\n' \"$PW\" | {sys.executable} -m pipelines.cli users "
                          f"--review-db {tmp_path / 'r.sqlite'} add bo --password-stdin",
                          shell=True, env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and "added bo" in proc.stdout, proc.stderr


def test_command_name_is_runnable_as_printed(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "argv", [".venv/bin/railbird", "run"])
    monkeypatch.setenv("PATH", str(tmp_path))  # not on PATH, as after `make demo`
    assert cli.command_name() == ".venv/bin/railbird"
    monkeypatch.setattr(sys, "argv", [str(ROOT / "pipelines" / "cli.py")])
    assert cli.command_name() == f"{sys.executable} -m pipelines.cli"


def test_dev_prefers_dg_and_says_why_not(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: calls.append(argv))
    monkeypatch.setattr(dev, "_exe", lambda name: None if name == "dg" else f"/bin/{name}")
    assert cli.main(["dev"]) == 0
    assert calls[-1][:2] == ["/bin/dagster", "dev"] and "dg` (package dagster-dg-cli) is not installed" in \
        capsys.readouterr().err
    monkeypatch.setattr(dev, "_exe", lambda name: f"/bin/{name}")
    assert cli.main(["dev", "--port", "3999"]) == 0
    assert calls[-1] == ["/bin/dg", "dev", "-p", "3999", "-h", "127.0.0.1"] and "not installed" not in \
        capsys.readouterr().err


def test_run_header_shows_the_days_the_hands_span(tmp_path):
    import polars as pl

    batch = tmp_path / "staging" / "batch-1"
    batch.mkdir(parents=True)
    days = pl.Series("_day", ["2026-03-01", "2026-03-04", "2026-03-02", "2026-03-04"]).str.to_date()
    pl.DataFrame({"_day": days}).write_parquet(batch / "hands.parquet")
    pl.DataFrame({"_day": pl.Series(["2026-12-06"]).str.to_date()}).write_parquet(batch / "events.parquet")
    hd = run.staged_hand_days(str(tmp_path / "staging"))
    assert hd == ("2026-03-01", "2026-03-04", 3)
    line = run.header({"span": ("2026-03-01", "2026-12-06"), "hand_days": hd, "run_id": "r1"})
    assert line.startswith("nightly_job: hands of 3 days, 2026-03-01..2026-03-04 (partitions 2026-03-01..2026-12-06")
