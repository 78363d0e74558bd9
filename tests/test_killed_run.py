"""A ``railbird run`` killed with ``kill -9`` leaves nothing stuck (issue 31, item 5).

On a small generated population, in one home: three ``railbird run``
processes killed (SIGKILL) as soon as a step of each stage starts
(``KILL_AT``: each holds a slot of the ``duckdb_writer`` pool; in ``cases``,
once the review store is locked for the run's registration), then one left
to finish. It must complete (before, it waited forever for the dead run's
slot), and its warehouse tables and cases must equal those of a clean run in
another home, the columns naming a run aside and floats to a relative 1e-9:
the cases' novelty too (``is_new``, ``new_hands``, ``reopened``), since the
review store commits a run's registration only with its publication.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: columns that name a run or a moment: they differ between any two runs
RUN_COLUMNS = {"run_id", "started_at", "finished_at", "quarantined_at", "created_at", "mtime", "first_run",
               "last_run", "signals_run_id"}
#: tables about the runs themselves (logs of what each run did), not about the data
RUN_TABLES = {"ingest_log", "detector_runs"}
TIMEOUT = 300
#: a step of each stage: ingest (a warehouse table), detect (a detector), cases
KILL_AT = ("warehouse_tables", "soft_play_signals", "cases")


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> Path:
    from datasets.generate import generate

    out = tmp_path_factory.mktemp("landing")
    generate(out, preset="demo", seed=11, accounts=24, hands=300, workers=1, progress=False, chunk_hands=200)
    (out / "labels.jsonl").unlink()
    return out


def _start(home: Path, landing: Path, log=subprocess.PIPE) -> subprocess.Popen:
    """``railbird run`` of ``landing`` in a process of its own with ``home`` as its home; output to ``log``."""
    env = dict(os.environ, RAILBIRD_HOME=str(home), DAGSTER_HOME=str(home / "dagster"), PYTHONPATH=str(ROOT),
               RAILBIRD_UNFLAGGED_REPORTS="5")
    for k in ("RAILBIRD_WAREHOUSE", "RAILBIRD_SNAPSHOT", "RAILBIRD_REVIEW_DB"):
        env.pop(k, None)
    return subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", str(landing), "--out", str(home / "out")],
                            env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT, text=True)


def _started(home: Path, step: str, event: str = "STEP_START") -> bool:
    """Whether a run of ``home``'s Dagster instance has logged ``event`` of ``step`` (its event logs, read-only)."""
    for db in (home / "dagster" / "history" / "runs").glob("*.db"):
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            try:
                if con.execute("SELECT 1 FROM event_logs WHERE dagster_event_type = ? AND step_key = ?",
                               [event, step]).fetchone():
                    return True
            finally:
                con.close()
        except sqlite3.Error:  # being created by the run: read again at the next poll
            continue
    return False


def _store_locked(db: Path) -> bool:
    """Whether a writer holds the write lock of the review store, its schema committed: a run registering cases."""
    if not db.exists():
        return False
    con = sqlite3.connect(str(db), timeout=0, isolation_level=None)
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone():
            return False
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        con.close()


def _registered(home: Path) -> set[str]:
    """The run ids whose cases the review store has registered (committed); none while its tables are not
    created yet (a kill can come as the store is first opened)."""
    if not (home / "review.sqlite").exists():
        return set()
    con = sqlite3.connect(f"file:{home / 'review.sqlite'}?mode=ro", uri=True)
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone():
            return set()
        return {r[0] for r in con.execute("SELECT run_id FROM runs")}
    finally:
        con.close()


def _published(home: Path) -> set[str]:
    """The run id whose cases the warehouse holds (none before a cases table is written)."""
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'cases'").fetchone()[0]:
            return set()
        return {r[0] for r in con.execute("SELECT DISTINCT run_id FROM cases").fetchall()}
    finally:
        con.close()


def _kill_when_step_starts(proc: subprocess.Popen, home: Path, step: str) -> bool:
    """SIGKILL ``proc`` as soon as one of its runs has started ``step``; True when the kill came before
    the run published anything of that step.

    In ``cases``, once the run holds the review store's write lock for its registration; then the store
    never holds the run's registration without the warehouse holding its cases. The warehouse commits first
    and the store last (:func:`pipelines.lib.cases.publish_cases`), so a kill between the two leaves the
    warehouse's cases with the store as the last published run left it: the next run replaces those cases
    and its novelty is that of a run that never saw the killed one. (On a loaded machine the poll can miss
    that short lock and the kill land after publication: the caller is told.)
    """
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        if _started(home, step):
            locked = step != "cases"
            while not locked and proc.poll() is None and not _started(home, step, "STEP_SUCCESS"):
                locked = _store_locked(home / "review.sqlite")
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if step != "cases":
                return True
            assert _registered(home) <= _published(home)
            return not _registered(home)
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"step {step} never started; output:\n{proc.communicate()[0][-3000:]}")
    return False


def _finish(proc: subprocess.Popen, log: Path | None = None) -> str:
    """The output of ``proc`` (read from ``log`` where it wrote there) once it has finished successfully."""
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        out = log.read_text(encoding="utf-8", errors="replace") if log is not None else out
        pytest.fail(f"railbird run did not finish in {TIMEOUT} s: {out[-3000:]}")
    out = log.read_text(encoding="utf-8", errors="replace") if log is not None else out
    assert proc.returncode == 0, out[-3000:]
    return out


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: what a case's novelty is told by: a run that published before it was killed rightly made its cases known
NOVELTY = {"is_new", "new_hands", "reopened"}


def _differences(ref: Path, new: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """Every table of the two warehouses whose rows differ (run-naming columns and run logs aside).

    Floats are compared to a relative 1e-9: DuckDB's parallel sums differ in the
    last bits between any two runs (the signals' payload holds the same floats
    as JSON text, so it is compared through its columns).
    """
    from polars.testing import assert_frame_equal

    con = duckdb.connect()
    con.execute("ATTACH ? AS ref (READ_ONLY)", [str(ref)])
    con.execute("ATTACH ? AS new (READ_ONLY)", [str(new)])
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'ref' AND schema_name = 'main' "
        "ORDER BY table_name").fetchall() if r[0] not in RUN_TABLES]
    new_tables = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'new' AND schema_name = 'main'").fetchall()}
    problems = [f"{t}: missing" for t in tables if t not in new_tables]
    for t in (t for t in tables if t in new_tables):
        cols = [(name, typ) for name, typ in con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'ref' AND table_name = ? "
            "ORDER BY column_index", [t]).fetchall()
                if name not in RUN_COLUMNS and name not in skip and name != "payload"]
        collist = ", ".join(_ident(c) for c, _ in cols)  # catalogue names, quoted
        order = ", ".join(f"round({_ident(c)}, 4)" if typ in ("DOUBLE", "FLOAT") else _ident(c) for c, typ in cols)
        frames = [con.sql(f"SELECT {collist} FROM {db}.{_ident(t)} ORDER BY {order}").pl() for db in ("ref", "new")]
        try:
            assert_frame_equal(frames[0], frames[1], check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
        except AssertionError as exc:
            problems.append(f"{t}: {str(exc).splitlines()[0]}")
    con.close()
    return problems


@pytest.mark.slow
def test_a_run_killed_in_detect_and_in_cases_is_followed_by_a_complete_identical_run(tmp_path, landing):
    clean_home, killed_home = tmp_path / "clean", tmp_path / "killed"
    clean_home.mkdir()
    killed_home.mkdir()
    t0 = time.monotonic()
    # the reference: a clean railbird run in a home of its own, on the second core while the others are killed
    # (its output to a file: a pipe nobody reads would stop it once full)
    with open(tmp_path / "clean.log", "w", encoding="utf-8") as log:
        clean = _start(clean_home, landing, log)
    try:
        early = [_kill_when_step_starts(_start(killed_home, landing), killed_home, step) for step in KILL_AT]
        t1 = time.monotonic()
        out = _finish(_start(killed_home, landing))
        t2 = time.monotonic()
    except BaseException:
        clean.kill()
        clean.wait()
        raise
    _finish(clean, tmp_path / "clean.log")
    assert "released" in out
    print(f"three runs killed at {', '.join(KILL_AT)}: {t1 - t0:.1f} s; the run after them: {t2 - t1:.1f} s; "
          f"the clean run, beside them, waited for: {time.monotonic() - t2:.1f} s")

    # novelty equals a clean run's when the cases-stage kill came before publication (the case the fix is
    # for; tests/cases/test_cases.py simulates it without timing); after it, the killed run's cases were known
    skip = frozenset() if early[-1] else frozenset(NOVELTY)
    if skip:
        print("the cases-stage kill landed after publication: novelty not compared")
    assert _differences(clean_home / "warehouse.duckdb", killed_home / "warehouse.duckdb", skip) == []
    ref, new = _cases(clean_home), _cases(killed_home)
    floats = ("score", "q_value")  # computed from the same figures, summed in another order: the last bits differ
    assert [{**r, **dict.fromkeys(floats), **dict.fromkeys(skip)} for r in new] == \
        [{**r, **dict.fromkeys(floats), **dict.fromkeys(skip)} for r in ref]
    for f in floats:  # (a case with no q: None in both)
        assert [r.get(f) is None for r in new] == [r.get(f) is None for r in ref]
        assert [r[f] for r in new if r.get(f) is not None] == \
            pytest.approx([r[f] for r in ref if r.get(f) is not None], rel=1e-9)


def _cases(home: Path) -> list[dict]:
    return [json.loads(x) for x in (home / "out" / "cases.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_second_railbird_run_of_the_same_home_is_refused_in_one_line(tmp_path, monkeypatch):
    from pipelines.commands.run import run_lock
    from pipelines.lib.errors import RailbirdError

    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path))
    with run_lock():
        with pytest.raises(RailbirdError, match=f"pid {os.getpid()}"):
            with run_lock():
                pass
    with run_lock():  # released on exit
        pass


def test_stale_runs_and_their_writer_slots_are_released(tmp_path):
    """A run tagged by railbird run still 'started' and a finished run still holding a slot: both released."""
    from dagster._core.storage.dagster_run import DagsterRun

    from pipelines.commands.run import RUN_TAG, release_stale_runs

    instance = dg.DagsterInstance.local_temp(str(tmp_path))
    storage = instance.event_log_storage
    storage.set_concurrency_slots("duckdb_writer", 1)
    dead = instance.add_run(DagsterRun(job_name="nightly_job", run_id="dead-run", tags=RUN_TAG,
                                       status=dg.DagsterRunStatus.STARTED))
    done = instance.add_run(DagsterRun(job_name="nightly_job", run_id="done-run",
                                       status=dg.DagsterRunStatus.SUCCESS))
    instance.add_run(DagsterRun(job_name="nightly_job", run_id="ui-run",  # not railbird run's: left alone
                                status=dg.DagsterRunStatus.STARTED))
    assert storage.claim_concurrency_slot("duckdb_writer", dead.run_id, "cases").is_claimed
    storage.set_concurrency_slots("duckdb_writer", 2)
    assert storage.claim_concurrency_slot("duckdb_writer", done.run_id, "hands").is_claimed

    assert release_stale_runs(instance) == ["dead-run", "done-run"]
    assert instance.get_run_by_id("dead-run").status == dg.DagsterRunStatus.FAILURE
    assert instance.get_run_by_id("ui-run").status == dg.DagsterRunStatus.STARTED
    assert storage.get_concurrency_info("duckdb_writer").claimed_slots == []
    assert storage.get_concurrency_run_ids() == set()
    instance.dispose()
