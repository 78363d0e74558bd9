"""Day features on Dask's local mode equal the embedded path's (pipelines.lib.cluster).

The Dask test needs the cluster extra (``pip install -e '.[cluster]'``, which ``make test`` installs) and skips
without it; the embedded tests always run.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from polars.testing import assert_frame_equal

import datasets
from detectors.features.days import DAY_TABLES, DayStore, read_day
from pipelines.lib import cluster
from pipelines.lib import ingest
from pipelines.lib import warehouse as wh

SAMPLE = Path(datasets.__file__).parent / "sample"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """The committed sample population (hands, events, accounts: three hand days) in a warehouse file."""
    db = tmp_path_factory.mktemp("cluster") / "wh.duckdb"
    con = wh.connect(db)
    try:
        ingest.ingest([SAMPLE], con, progress=False, workers=1)
    finally:
        con.close()
    return db


@pytest.fixture(scope="module")
def embedded(warehouse, tmp_path_factory) -> DayStore:
    """Every day's features computed in this process (the embedded path) into a store on disk."""
    store = DayStore(tmp_path_factory.mktemp("embedded"))
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert len(cluster.compute_days(con, store)) == 3
    finally:
        con.close()
    return store


def test_run_days_applies_a_day_function_in_order(warehouse, embedded):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        days = embedded.days()
        inputs = {d: cluster.DayRows(d, read_day(con, d)) for d in reversed(days[1:])}
        got = cluster.run_days(cluster.day_features, inputs)
    finally:
        con.close()
    assert list(got) == list(inputs)
    for day, tables in got.items():
        assert set(tables) == set(DAY_TABLES)
        for table, frame in tables.items():
            assert_frame_equal(frame, embedded.read(table, [day]))


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown engine"):
        cluster.run_days(cluster.day_features, {"2026-03-02": None}, engine="spark")


@pytest.mark.slow
def test_dask_local_cluster_gives_the_embedded_day_features(warehouse, embedded, tmp_path):
    pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install -e '.[cluster]')")
    store = DayStore(tmp_path / "features")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        # one day ahead at a time: the results come back one by one while the next day is sent
        done = cluster.compute_days(con, store, engine="dask", workers=2, in_flight=1)
        again = cluster.compute_days(con, store, engine="dask", workers=2)
    finally:
        con.close()
    days = embedded.days()
    assert done == days and again == []
    for day in days:
        assert store.manifest(day) == embedded.manifest(day)
        for table in DAY_TABLES:
            assert_frame_equal(store.read(table, [day]), embedded.read(table, [day]))


def test_the_deployment_chooses_the_engine(monkeypatch):
    monkeypatch.delenv(cluster.SCHEDULER_VAR, raising=False)
    assert cluster.engine_settings() == {"engine": "embedded", "address": None}
    monkeypatch.setenv(cluster.SCHEDULER_VAR, " tcp://scheduler:8786 ")
    assert cluster.engine_settings() == {"engine": "dask", "address": "tcp://scheduler:8786"}
