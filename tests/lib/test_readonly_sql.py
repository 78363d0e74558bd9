"""The SQL limits (rows, characters, cells, seconds) in the library, the web runner and ``railbird sql``."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import resource
import threading
import time

import duckdb
import pytest

from pipelines import cli
from pipelines.lib.readonly_sql import SqlBusy, SqlLimits, SqlRefused, SqlRunner, run_query

BOMB = "SELECT count(*) FROM range(1000000000000)"
HOSTILE = ["=HYPERLINK(\"http://evil.example\",\"x\")", "bob\x1b]0;owned\x07\x1b[2J", "+1", "plain"]


@pytest.fixture
def snapshot(tmp_path):
    path = tmp_path / "snapshot.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE players(name VARCHAR, n INTEGER)")
    con.executemany("INSERT INTO players VALUES (?, ?)", [[name, i] for i, name in enumerate(HOSTILE)])
    con.close()
    return path


def test_rows_chars_and_cells_are_limited(snapshot):
    r = run_query(snapshot, "SELECT i, 'p' || i AS name FROM range(5000) t(i)", limits=SqlLimits(rows=100))
    assert len(r.rows) == 100 and r.truncated and "100 rows" in r.cut_reason
    r = run_query(snapshot, "SELECT repeat('y', 5000) AS y FROM range(1000)", limits=SqlLimits(chars=50_000))
    assert len(r.rows) == 10 and r.truncated and "50,000 characters" in r.cut_reason
    r = run_query(snapshot, "SELECT [repeat('z', 20)] AS l, {'k': repeat('z', 20)} AS s, 7 AS n",
                  limits=SqlLimits(cell_chars=10))
    assert r.rows == [["[zzzzzzzzz…", "{'k': zzzz…", "7"]] and "2 cells cut" in r.cut_reason
    r = run_query(snapshot, "SELECT 1 AS a, 2 AS a, NULL AS n")  # duplicate names keep their names
    assert r.columns == ["a", "a", "n"] and r.rows == [["1", "2", "NULL"]] and not r.truncated


def test_huge_cells_never_reach_python_whole(snapshot):
    """80 cells of 10 MB: the answer holds 80 x 10,000 characters, and the process does not grow by 800 MB."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = run_query(snapshot, "SELECT repeat('x', 10000000) AS s FROM range(80)")
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(r.rows) == 80 and all(len(row[0]) == 10_001 for row in r.rows)
    assert grew_mb < 400, grew_mb


def test_a_bomb_is_stopped_at_the_time_limit(snapshot):
    t0 = time.monotonic()
    with pytest.raises(SqlRefused, match="time limit of 0.5 s"):
        run_query(snapshot, BOMB, timeout=0.5)
    assert time.monotonic() - t0 < 10


def test_runner_keeps_the_event_loop_free_and_refuses_beyond_its_workers(snapshot):
    """Three bombs at once: two run on workers, the third is refused; the loop keeps ticking meanwhile."""
    runner = SqlRunner(snapshot, SqlLimits(seconds=1.5), workers=2)

    async def scenario():
        gaps, stop = [], asyncio.Event()

        async def ticker():
            last = time.monotonic()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        outcomes = await asyncio.gather(*(runner.run(BOMB) for _ in range(3)), return_exceptions=True)
        ok = await runner.run("SELECT count(*) AS n FROM players")
        stop.set()
        await tick
        return outcomes, ok, gaps

    try:
        outcomes, ok, gaps = asyncio.run(scenario())
    finally:
        runner.close()
    assert sorted(type(o).__name__ for o in outcomes) == ["SqlBusy", "SqlRefused", "SqlRefused"]
    assert sum(isinstance(o, SqlBusy) for o in outcomes) == 1
    assert ok.rows == [["4"]]
    # the loop was never held for the bombs' 1.5 s (generous: the machine is shared)
    assert max(gaps) < 1.0, max(gaps)


def test_runner_threads_run_at_a_lower_priority(snapshot):
    import os

    runner = SqlRunner(snapshot, SqlLimits(), workers=1, niceness=7)
    try:
        seen = runner._pool.submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
    finally:
        runner.close()
    assert seen >= os.getpriority(os.PRIO_PROCESS, 0) + 1 or seen == 19


def _railbird(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_table_cannot_drive_the_terminal(snapshot, capsys):
    code, out, err = _railbird(capsys, "sql", "SELECT name FROM players ORDER BY n", "--database", snapshot)
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "bob" in out and "(4 rows)" in out


def test_cli_csv_escapes_formulas_and_json_escapes_controls(snapshot, capsys):
    code, out, _ = _railbird(capsys, "sql", "SELECT name, n FROM players ORDER BY n", "--format", "csv",
                             "--database", snapshot)
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0] == ["name", "n"]
    assert rows[1][0] == "'" + HOSTILE[0] and rows[3][0] == "'+1" and rows[4] == ["plain", "3"]
    code, out, _ = _railbird(capsys, "sql", "SELECT name FROM players ORDER BY n", "--format", "json",
                             "--database", snapshot)
    assert "\x1b" not in out and [json.loads(x)["name"] for x in out.splitlines()] == HOSTILE


def test_cli_has_the_same_limits(snapshot, capsys):
    code, out, err = _railbird(capsys, "sql", "SELECT i FROM range(5000) t(i)", "--format", "csv", "--database", snapshot)
    assert code == 0 and len(out.splitlines()) == 1 + 1000 and "limit of 1000 rows" in err
    code, out, err = _railbird(capsys, "sql", BOMB, "--timeout", "0.5", "--database", snapshot)
    assert code == 2 and "time limit of 0.5 s" in err
    code, out, err = _railbird(capsys, "sql", "SELECT repeat('x', 10000000) AS s", "--database", snapshot)
    assert code == 0 and len(out) < 30_000 and "cells cut" in err
