"""The ingest / sql / run / dev commands through the real ``railbird`` dispatcher."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from pipelines import cli

SAMPLE = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files/cash/Stars/Flop/NLHE-6max-USD-0.05-0.10-200911.txt"


@pytest.fixture
def railbird(monkeypatch, tmp_path):
    """``railbird ARGS`` in-process, with its own RAILBIRD_HOME; only this stage's commands are registered."""
    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cli, "COMMANDS", {k: v for k, v in cli.COMMANDS.items() if k in ("ingest", "run", "sql", "dev")})

    def run(*argv):
        return cli.main([str(a) for a in argv])

    return run


@pytest.fixture
def landing(tmp_path, corpus_dir):
    land = tmp_path / "landing"
    land.mkdir()
    text = (corpus_dir / SAMPLE).read_text(encoding="utf-8")
    hands = [p.strip("\n") for p in re.split(r"\n\s*\n(?=PokerStars )", text) if p.strip()][:4]
    (land / "a.txt").write_text("\n\n".join(hands) + "\n\n", encoding="utf-8")
    (land / "notes.pdf").write_bytes(b"%PDF")
    old = time.time() - 3600
    for p in land.iterdir():
        os.utime(p, (old, old))
    return land


def test_ingest_prints_one_summary_line_and_sql_reads_the_snapshot(railbird, landing, capsys):
    assert railbird("ingest", landing, "--no-progress") == 0
    out = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"hands stored 4 / duplicate 0 / quarantined 0 · events 0 · accounts 0 · [\d,]+ hands/s", out[0])
    assert railbird("ingest", landing, "--no-progress") == 0
    out = capsys.readouterr().out
    assert out.startswith("hands stored 0 / duplicate 0 / quarantined 0")
    assert "2 file(s) skipped" in out

    assert railbird("sql", "SELECT count(*) AS n FROM hands", "--format", "csv") == 0
    assert capsys.readouterr().out == "n\n4\n"
    assert railbird("sql", "SELECT file_kind, status FROM ingest_log ORDER BY 1", "--format", "json") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [{"file_kind": "hands", "status": "done"}, {"file_kind": "ignored", "status": "ignored"}]
    assert railbird("sql", "SELECT player, hands FROM player_stats ORDER BY hands DESC, player", "--limit", "2") == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["player", "|", "hands"] and table[-1] == "(2 rows)"


def test_sql_refuses_writes(railbird, landing, capsys):
    railbird("ingest", landing, "--no-progress")
    capsys.readouterr()
    assert railbird("sql", "DELETE FROM hands") == 2
    err = capsys.readouterr().err
    assert err.startswith("railbird sql: refused: the snapshot is read-only")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    out_file = landing.parent / "exfiltrated.csv"
    for sneaky in (f"COPY (SELECT * FROM hands) TO '{out_file}'", "ATTACH ':memory:' AS m",
                   "SELECT 1; DROP TABLE hands", f"SELECT * FROM read_csv('{landing / 'a.txt'}')"):
        assert railbird("sql", sneaky) == 2, sneaky
        assert capsys.readouterr().err.startswith("railbird sql: "), sneaky
    assert not out_file.exists()
    assert railbird("sql", "SELECT count(*) FROM hands", "--format", "csv") == 0
    assert capsys.readouterr().out.endswith("\n4\n")
    assert railbird("sql", "SELEC count(*) FROM hands") == 2  # a typo is said to be one, not a refused write
    err = capsys.readouterr().err
    assert err.startswith("railbird sql: does not parse: Parser Error") and "Traceback" not in err


def test_errors_are_one_line_without_traceback(railbird, tmp_path, capsys):
    assert railbird("ingest", tmp_path / "nowhere") == 2
    err = capsys.readouterr().err
    assert err.strip() == f"railbird ingest: no such file or folder: {tmp_path / 'nowhere'}"
    assert railbird("sql", "SELECT 1") == 2  # nothing published yet
    err = capsys.readouterr().err
    assert "no published warehouse snapshot" in err and "Traceback" not in err
    assert railbird("run", tmp_path / "missing-landing") == 2
    assert "no such landing folder" in capsys.readouterr().err


def test_sql_reports_a_bad_query_in_one_line(railbird, landing, capsys):
    railbird("ingest", landing, "--no-progress")
    capsys.readouterr()
    assert railbird("sql", "SELECT no_such_column FROM hands") == 2
    err = capsys.readouterr().err
    assert err.startswith("railbird sql: query failed: Binder Error") and len(err.strip().splitlines()) == 1


def test_run_stages_and_runs_the_nightly_job_over_a_landing_folder(monkeypatch, tmp_path, landing, capsys, fresh_dagster_state):
    """``railbird run LANDING`` end to end, on the ingest stage's definitions (other stages are tested by their owners)."""
    import dagster as dg

    from pipelines.commands import run as run_cmd

    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "cases.jsonl").write_text(  # the cases stage writes them ranked; a name tries to drive the terminal
        json.dumps({"case": "c-2", "kind": "chip_dumping", "accounts": ["c", "d\x1b[2J"], "score": 0.9, "flagged": True}) + "\n"
        + json.dumps({"case": "c-1", "kind": "soft_play", "accounts": ["a", "b"], "score": 0.4, "flagged": False}) + "\n")
    (tmp_path / "dagster").mkdir()
    instance = dg.DagsterInstance.ephemeral()
    try:
        with fresh_dagster_state():
            info = run_cmd.execute(str(landing), str(out), instance=instance,
                                   stages=["ingest"])  # its schedule brings nightly_job
    finally:
        instance.dispose()
    assert info["summary"].startswith("hands stored 4 / duplicate 0")
    assert info["span"][0] == "2009-11-25"  # the hands' day, then the staging day of the file-level rows
    import duckdb

    con = duckdb.connect(str(tmp_path / "home" / "snapshot" / "warehouse.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM hands").fetchall()[0][0] == 4
    con.close()
    run_cmd.print_cases(out, top=5)
    text = capsys.readouterr().out
    printed = text.splitlines()
    assert printed[0].startswith("2 cases, 1 flagged")
    assert printed[2].split()[:3] == ["1", "c-2", "chip_dumping"] and "yes" in printed[2]
    assert printed[3].split()[:3] == ["2", "c-1", "soft_play"]
    assert "\x1b" not in text
    assert "railbird serve" in text and "http://127.0.0.1:8765/cases/c-2" in text


def test_dev_execs_dagster_dev_with_the_workspace(railbird, monkeypatch):
    calls = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: calls.append(argv))
    assert railbird("dev", "--port", "3999") == 0
    (argv,) = calls
    assert argv[1:4] == ["dev", "-w", argv[3]] and argv[3].endswith("dagster_workspace.yaml")
    assert "3999" in argv
    assert os.path.exists(os.path.join(os.environ["DAGSTER_HOME"], "dagster.yaml"))


def test_run_reads_a_freshly_written_landing_folder_once(monkeypatch, tmp_path, landing, fresh_dagster_state):
    """Files written moments ago count as growing; one ``railbird run`` must still stage them once, not twice."""
    import dagster as dg

    from pipelines.commands import run as run_cmd

    for p in landing.iterdir():
        os.utime(p, None)  # modified now: still being written, as far as railbird can tell
    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    out.mkdir()
    instance = dg.DagsterInstance.ephemeral()
    try:
        with fresh_dagster_state():
            info = run_cmd.execute(str(landing), str(out), instance=instance, stages=["ingest"])
    finally:
        instance.dispose()
    assert info["summary"].startswith("hands stored 4 / duplicate 0")
    import duckdb

    con = duckdb.connect(str(tmp_path / "home" / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT status, sum(stored), sum(duplicates) FROM ingest_log "
                           "WHERE file_kind = 'hands' GROUP BY ALL").fetchall() == [("growing", 4, 0)]
    finally:
        con.close()
