"""The per-day runner (pipelines.lib.cluster): the day layout, the embedded path, and Dask's local mode.

The Dask tests need the cluster extra (``pip install -e '.[cluster]'``, which ``make test`` installs) and skip
without it; the layout and embedded tests always run.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import datasets
from pipelines.lib import cluster
from pipelines.lib import ingest
from pipelines.lib import warehouse as wh

SAMPLE_HANDS = Path(datasets.__file__).parent / "sample" / "hands"


@pytest.fixture(scope="module")
def day_root(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """The committed sample population's hands in a warehouse, and each of its days exported to the layout."""
    tmp = tmp_path_factory.mktemp("cluster")
    db = tmp / "wh.duckdb"
    con = wh.connect(db)
    try:
        ingest.ingest([SAMPLE_HANDS], con, progress=False, workers=1)
        days = [d.isoformat() for (d,) in con.execute("SELECT DISTINCT day FROM hands ORDER BY 1").fetchall()]
        for day in days:
            cluster.export_day(con, tmp / "days", day)
    finally:
        con.close()
    return db, tmp / "days", days


def _inputs(root: Path, days: list[str]) -> dict[str, cluster.DayInput]:
    return {d: cluster.DayInput(str(root), d) for d in days}


def test_layout_holds_each_day_of_the_warehouse(day_root):
    db, root, days = day_root
    assert len(days) >= 2
    assert cluster.days_written(root, "actions") == days
    con = duckdb.connect(str(db), read_only=True)
    try:
        want = con.sql("SELECT * FROM actions ORDER BY hand_id, seq").pl()
        got = cluster.read_days(con, root, "actions").order("hand_id, seq").pl()
        per_day = cluster.read_days(con, root, "hands").aggregate("day, count(*) AS n", "day").order("day").fetchall()
        assert per_day == con.execute("SELECT day, count(*) FROM hands GROUP BY 1 ORDER BY 1").fetchall()
    finally:
        con.close()
    assert_frame_equal(got.drop("day"), want)


def test_a_day_written_again_replaces_it_whole(tmp_path):
    cluster.write_day(tmp_path, "2026-03-02", {"t": pl.DataFrame({"x": [1, 2, 3]})})
    cluster.write_day(tmp_path, "2026-03-03", {"t": pl.DataFrame({"x": [10]})})
    cluster.write_day(tmp_path, dt.date(2026, 3, 2), {"t": pl.DataFrame({"x": [4]})})
    rows = cluster.read_days(duckdb.connect(), tmp_path, "t").order("day").fetchall()
    assert rows == [(4, dt.date(2026, 3, 2)), (10, dt.date(2026, 3, 3))]
    # nothing left behind but one file per day (no temporary file of the rewrite)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "t/day=2026-03-02/part.parquet", "t/day=2026-03-03/part.parquet"]


@pytest.mark.parametrize("table, day", [("../etc", "2026-03-02"), ("t", "2026-03-02/../../x"), ("T", "2026-03-02"),
                                        ("t", "yesterday")])
def test_names_that_are_not_a_table_or_a_day_never_become_paths(tmp_path, table, day):
    with pytest.raises(ValueError):
        cluster.write_day(tmp_path, day, {table: pl.DataFrame({"x": [1]})})
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def embedded(day_root) -> dict[str, dict[str, pl.DataFrame]]:
    """Each sample day's decisions computed in this process (the embedded path)."""
    _, root, days = day_root
    return cluster.run_days(cluster.day_decisions, _inputs(root, days))


def test_embedded_path_gives_each_days_decisions(day_root, embedded):
    _, root, days = day_root
    got = embedded
    assert list(got) == days
    for day in days:
        frame = got[day]["hu_decisions"]
        assert frame.height > 0
        hands = pl.read_parquet(cluster.day_path(root, "hands", day)).get_column("hand_id")
        assert frame.get_column("hand_id").is_in(hands.implode()).all()


def test_unknown_engine_is_refused(day_root):
    _, root, days = day_root
    with pytest.raises(ValueError, match="unknown engine"):
        cluster.run_days(cluster.day_decisions, _inputs(root, days), engine="spark")


def test_written_days_hold_the_frames(day_root, embedded, tmp_path):
    _, root, days = day_root
    written = cluster.run_days(cluster.day_decisions, _inputs(root, days[-1:]), out=tmp_path)
    path = cluster.day_path(tmp_path, "hu_decisions", days[-1])
    assert written == {days[-1]: {"hu_decisions": str(path)}}
    assert_frame_equal(pl.read_parquet(path), embedded[days[-1]]["hu_decisions"])


@pytest.mark.slow
def test_dask_local_cluster_gives_the_embedded_day_features(day_root, embedded):
    pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install -e '.[cluster]')")
    _, root, days = day_root
    on_dask = cluster.run_days(cluster.day_decisions, _inputs(root, days), engine="dask", workers=2)
    assert list(on_dask) == days
    for day in days:
        assert_frame_equal(on_dask[day]["hu_decisions"], embedded[day]["hu_decisions"])
