"""The ingest stage through Dagster: assets materialised against a temporary DuckDB, checks, sensor, schedule."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.ingest import assets, checks, schedules, sensors
from pipelines.defs.resources import RailbirdSettings

SAMPLE = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files/cash/Stars/Flop/NLHE-6max-USD-0.05-0.10-200911.txt"


@pytest.fixture
def setup(tmp_path, corpus_dir):
    """A landing folder with real hands of two days (the second day re-dated with new ids) and a few events."""
    text = (corpus_dir / SAMPLE).read_text(encoding="utf-8")
    hands = [p.strip("\n") for p in re.split(r"\n\s*\n(?=PokerStars )", text) if p.strip()][:6]
    day2 = [re.sub(r"Game #(\d+)", lambda m: f"Game #9{m.group(1)}", h).replace("2009/11/25", "2009/11/27")
            for h in hands[:2]]
    land = tmp_path / "landing"
    land.mkdir()
    (tmp_path / "dagster").mkdir()
    (land / "a.txt").write_text("\n\n".join(hands) + "\n\n", encoding="utf-8")
    (land / "b.txt").write_text("\n\n".join(day2) + "\n\n", encoding="utf-8")
    (land / "e.jsonl").write_text('{"ts":"2009-11-27T12:00:00Z","type":"transfer","account":"Hero","to":"x","amount":3}\n'
                                  "garbage\n", encoding="utf-8")
    old = time.time() - 3600
    for p in land.iterdir():
        os.utime(p, (old, old))
    settings = RailbirdSettings(landing_dir=str(land), out_dir=str(tmp_path / "out"),
                                snapshot_path=str(tmp_path / "snap" / "warehouse.duckdb"),
                                review_db=str(tmp_path / "review.sqlite"), staging_dir=str(tmp_path / "staging"))
    resources = {"warehouse": DuckDBResource(database=str(tmp_path / "wh.duckdb")), "settings": settings}
    instance = dg.DagsterInstance.ephemeral()
    yield {"tmp": tmp_path, "land": land, "settings": settings, "resources": resources, "instance": instance}
    instance.dispose()  # an undisposed instance leaves its storage in a process-wide context variable


def _count(setup, q):
    con = duckdb.connect(str(setup["tmp"] / "wh.duckdb"), read_only=True)
    try:
        return con.execute(q).fetchall()[0][0]
    finally:
        con.close()


def test_stage_then_load_one_day_at_a_time(setup):
    inst = setup["instance"]
    r = dg.materialize([assets.landing_files], resources=setup["resources"], instance=inst)
    assert r.success
    days = inst.get_dynamic_partitions("hand_days")
    assert {"2009-11-25", "2009-11-27"} <= set(days)
    meta = r.asset_materializations_for_node("landing_files")[0].metadata
    assert meta["files_staged"].value == 3 and meta["hands_parsed"].value == 8

    everything = [assets.warehouse_tables, checks.hands_balance, checks.events_stored_once,
                  checks.quarantine_rate_below_threshold]
    r = dg.materialize(everything, resources=setup["resources"], instance=inst, partition_key="2009-11-25")
    assert r.success
    assert _count(setup, "SELECT count(*) FROM hands") == 6  # only that day's hands
    keys = {e.event_specific_data.materialization.asset_key.path[0] for e in r.get_asset_materialization_events()}
    assert {"hands", "seats", "actions", "sessions", "transfers", "quarantine", "ingest_log"} <= keys
    checks_passed = {e.check_name: e.passed for e in r.get_asset_check_evaluations()}
    assert checks_passed["hands_balance"] and checks_passed["events_stored_once"]

    r = dg.materialize(everything, resources=setup["resources"], instance=inst, partition_key="2009-11-27")
    assert r.success
    assert _count(setup, "SELECT count(*) FROM hands") == 8
    assert _count(setup, "SELECT count(*) FROM transfers") == 1
    # the snapshot was published for readers
    snap = duckdb.connect(setup["settings"].snapshot_path, read_only=True)
    assert snap.execute("SELECT count(*) FROM hands").fetchall()[0][0] == 8  # published after the second day's load
    snap.close()
    # file-level rows belong to the staging day: load it and the staging folder is empty
    today = dt.datetime.now(dt.UTC).date().isoformat()
    r = dg.materialize(everything, resources=setup["resources"], instance=inst, partition_key=today)
    assert r.success
    assert _count(setup, "SELECT count(*) FROM ingest_log") == 3
    assert _count(setup, "SELECT count(*) FROM quarantine WHERE reason = 'not a JSON object'") == 1
    assert not list((setup["tmp"] / "staging").glob("*/*.parquet"))
    rate = {e.check_name: e for e in r.get_asset_check_evaluations()}["quarantine_rate_below_threshold"]
    assert rate.metadata["quarantined"].value == 1

    # nothing new: staging again stages nothing
    r = dg.materialize([assets.landing_files], resources=setup["resources"], instance=inst)
    assert r.asset_materializations_for_node("landing_files")[0].metadata["files_staged"].value == 0


def test_sensor_requests_staging_then_loading(setup):
    inst = setup["instance"]
    ctx = dg.build_sensor_context(instance=inst, resources={"settings": setup["settings"]})
    result = sensors.landing_sensor(ctx)
    assert [rr.job_name for rr in result.run_requests] == ["landing_job"]
    cursor = json.loads(result.cursor)
    assert len(cursor) == 3
    # same files, cursor given: nothing to do
    ctx = dg.build_sensor_context(instance=inst, cursor=result.cursor, resources={"settings": setup["settings"]})
    assert isinstance(sensors.landing_sensor(ctx), dg.SkipReason)
    # once staged, the sensor asks for a load over the staged days
    dg.materialize([assets.landing_files], resources=setup["resources"], instance=inst)
    ctx = dg.build_sensor_context(instance=inst, cursor=result.cursor, resources={"settings": setup["settings"]})
    result = sensors.landing_sensor(ctx)
    (load,) = result.run_requests
    assert load.job_name == "ingest_job"
    assert load.tags["dagster/asset_partition_range_start"] == "2009-11-25"
    # a changed file is requested again
    (setup["land"] / "a.txt").write_text("changed\n")
    ctx = dg.build_sensor_context(instance=inst, cursor=result.cursor, resources={"settings": setup["settings"]})
    assert "landing_job" in [rr.job_name for rr in sensors.landing_sensor(ctx).run_requests]


def test_schedule_runs_nightly_job_over_the_staged_days(setup):
    # schedule contexts need a persistent instance; dispose it after (it sets a process-wide context variable)
    with dg.instance_for_test(temp_dir=str(setup["tmp"] / "dagster")) as inst:
        _check_schedule(setup, inst)


def _check_schedule(setup, inst):
    when = dt.datetime(2026, 3, 5, 3, tzinfo=dt.UTC)
    ctx = dg.build_schedule_context(instance=inst, scheduled_execution_time=when, resources={"settings": setup["settings"]})
    assert isinstance(schedules.nightly_schedule(ctx), dg.SkipReason)
    dg.materialize([assets.landing_files], resources=setup["resources"], instance=inst)
    ctx = dg.build_schedule_context(instance=inst, scheduled_execution_time=when, resources={"settings": setup["settings"]})
    req = schedules.nightly_schedule(ctx)
    assert req.run_key == "nightly-2026-03-05"
    keys = inst.get_dynamic_partitions("hand_days")
    assert (req.tags["dagster/asset_partition_range_start"], req.tags["dagster/asset_partition_range_end"]) == (
        keys[0], keys[-1])
    assert schedules.nightly_schedule.job_name == "nightly_job"


def test_nightly_job_selects_every_asset_of_every_stage():
    """Loads the real code location in a fresh process (as ``dagster dev`` does) and compares key sets."""
    import subprocess
    import sys

    script = (
        "import json\n"
        "from pipelines.definitions import defs\n"
        "d = defs()\n"
        "g = d.resolve_asset_graph()\n"
        "job = d.resolve_job_def('nightly_job')\n"
        "print(json.dumps({'all': sorted(k.to_user_string() for k in g.get_all_asset_keys() if g.get(k).is_executable),\n"
        "                  'job': sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr[-2000:]
    keys = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"landing_files", "hands", "quarantine", "ingest_log", "sessions"} <= set(keys["all"])
    assert keys["job"] == keys["all"]


def test_the_code_location_has_one_name_everywhere():
    """dagster_workspace.yaml, [tool.dagster] and the defs loader's pipelines/dg.toml name the location alike
    (Dagster warns on every load where the loader's name differs)."""
    import tomllib

    import yaml

    root = Path(__file__).resolve().parents[2]
    workspace = yaml.safe_load((root / "dagster_workspace.yaml").read_text())
    names = {entry["python_module"]["location_name"] for entry in workspace["load_from"]}
    names.add(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["dagster"]["code_location_name"])
    names.add(tomllib.loads((root / "pipelines" / "dg.toml").read_text())["project"]["code_location_name"])
    assert names == {"railbird"}


def test_hands_balance_finds_a_hand_that_does_not_add_up(tmp_path, hand_builder):
    from pipelines.lib import warehouse as wh

    con = wh.connect(tmp_path / "wh.duckdb")
    wh.load(con, hand_builder("1"), run_id="r")  # balanced: put in 0.15, collected 0.15
    bad = hand_builder("2", seats=[(1, "amy", "10", "0.10", "0.25", "BB"), (2, "bob", "10", "0.05", "0", "SB")])
    wh.load(con, bad, run_id="r")  # collected 0.25 out of a 0.15 pot
    assert [r[0] for r in con.execute(checks.BALANCE_SQL).fetchall()] == ["2"]
    con.close()
    # an instance entered for the whole materialisation: Dagster keeps the entered instance's state storage
    # in a process-wide context variable, which a stale value from an earlier test can otherwise occupy
    with dg.DagsterInstance.ephemeral() as instance:
        res = dg.materialize([dg.AssetSpec("hands"), checks.hands_balance],
                             resources={"warehouse": DuckDBResource(database=str(tmp_path / "wh.duckdb"))},
                             selection=dg.AssetSelection.checks(checks.hands_balance), raise_on_error=False,
                             instance=instance)
        (evaluation,) = res.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.metadata["unbalanced"].value == 1


def test_events_stored_once_finds_a_doubled_transfer(tmp_path):
    from pipelines.lib import warehouse as wh

    con = wh.connect(tmp_path / "wh.duckdb")
    row = ["2026-03-04 21:15:20", "amy", "bob", "25.00", "USD"]
    con.execute("INSERT INTO transfers (ts, account, to_account, amount, currency) VALUES (?, ?, ?, ?, ?)", row)
    con.close()
    resources = {"warehouse": DuckDBResource(database=str(tmp_path / "wh.duckdb"))}

    def evaluations():
        with dg.DagsterInstance.ephemeral() as instance:  # entered around the materialisation (see above)
            res = dg.materialize([*(dg.AssetSpec(t) for t in checks.KEYLESS_EVENT_TABLES), checks.events_stored_once],
                                 resources=resources, selection=dg.AssetSelection.checks(checks.events_stored_once),
                                 raise_on_error=False, instance=instance)
            return {e.asset_key.path[0]: e for e in res.get_asset_check_evaluations()}

    assert all(e.passed for e in evaluations().values())
    con = wh.connect(tmp_path / "wh.duckdb")
    con.execute("INSERT INTO transfers (ts, account, to_account, amount, currency) VALUES (?, ?, ?, ?, ?)", row)
    con.close()
    ev = evaluations()
    assert not ev["transfers"].passed and ev["transfers"].metadata["rows_stored_twice"].value == 1
    assert ev["sit_events"].passed


def test_hand_rows_stored_once_finds_a_doubled_seat(setup):
    """The hand tables keep their keys unique without an index: the check reads it back."""
    inst = setup["instance"]
    assert dg.materialize([assets.landing_files], resources=setup["resources"], instance=inst).success
    for day in inst.get_dynamic_partitions("hand_days"):
        assert dg.materialize([assets.warehouse_tables], resources=setup["resources"], instance=inst,
                              partition_key=day).success

    def evaluations():
        with dg.DagsterInstance.ephemeral() as instance:
            res = dg.materialize([*(dg.AssetSpec(t) for t in checks.HAND_TABLE_KEYS), checks.hand_rows_stored_once],
                                 resources=setup["resources"],
                                 selection=dg.AssetSelection.checks(checks.hand_rows_stored_once),
                                 raise_on_error=False, instance=instance)
            return {e.asset_key.path[0]: e for e in res.get_asset_check_evaluations()}

    ev = evaluations()
    assert set(ev) == set(checks.HAND_TABLE_KEYS) and all(e.passed for e in ev.values())
    con = duckdb.connect(str(setup["tmp"] / "wh.duckdb"))
    # the same seat of one hand again, with every other column changed: still a doubled key
    con.execute("INSERT INTO seats SELECT * REPLACE (stack_start + 1 AS stack_start) FROM seats "
                "WHERE hand_id = (SELECT min(hand_id) FROM seats) AND seat = (SELECT min(seat) FROM seats "
                "WHERE hand_id = (SELECT min(hand_id) FROM seats))")
    con.close()
    ev = evaluations()
    assert not ev["seats"].passed and ev["seats"].metadata["keys_stored_twice"].value == 1
    assert ev["hands"].passed and ev["actions"].passed
