"""The day_features asset: one hand day's partition materialised against a warehouse file."""

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from detectors.features import days as fd
from pipelines.defs.features.assets import day_features
from pipelines.defs.ingest.assets import HAND_DAYS


def test_a_day_partition_computes_that_day_once(days_world, tmp_path):
    path = tmp_path / "warehouse.duckdb"
    con = days_world.con
    con.execute("ATTACH ? AS out", [str(path)])
    try:
        con.execute("COPY FROM DATABASE memory TO out")
    finally:
        con.execute("DETACH out")
    days = sorted(r[0].isoformat() for r in con.execute("SELECT DISTINCT day FROM hands").fetchall())
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(HAND_DAYS.name, days)
    res = {"warehouse": DuckDBResource(database=str(path))}
    runs = [dg.materialize([day_features], partition_key=days[1], instance=instance, resources=res) for _ in range(2)]
    assert all(r.success for r in runs)
    meta = [r.asset_materializations_for_node("day_features")[0].metadata for r in runs]
    assert [m["days_computed"].value for m in meta] == [1, 0]  # the second run finds the day unchanged
    store = fd.DayStore(tmp_path / "features")
    assert [d.isoformat() for d in store.days()] == [days[1]]
    with duckdb.connect(str(path), read_only=True) as wh:
        n = wh.execute("SELECT count(DISTINCT hand_id) FROM hands WHERE day = ?", [days[1]]).fetchone()[0]
    dec = store.read("hu_decisions", store.days())
    assert 0 < dec["hand_id"].n_unique() <= n
