"""Fixtures: a planted warehouse, its cases, a published snapshot and a review store with users."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cases_world  # noqa: E402

from pipelines.lib import cases as cases_lib  # noqa: E402
from pipelines.lib.review import ReviewStore  # noqa: E402

PASSWORD = "correct horse battery"


def nightly(folder: Path, stage: int, run_id: str) -> list[dict]:
    """What the cases and warehouse_snapshot assets do, without Dagster: build cases, write tables, publish."""
    from pipelines.defs.cases.assets import publish

    wh = folder / "warehouse.duckdb"
    cases_world.build(wh, stage, run_id)
    con = duckdb.connect(str(wh))
    try:
        with ReviewStore(folder / "review.sqlite") as store:
            result = cases_lib.build_cases(con, store, run_id)
        cases_lib.write_tables(con, result, run_id)
        cases_lib.write_jsonl(folder / "out" / "cases.jsonl", result)
        publish(con, folder / "snapshot" / "warehouse.duckdb")
    finally:
        con.close()
    return result


@pytest.fixture(scope="session")
def _published_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("published")
    nightly(folder, 1, "run1")
    with ReviewStore(folder / "review.sqlite") as store:
        store.add_user("ivy", "investigator", PASSWORD)
        store.add_user("rex", "reviewer", PASSWORD)
        store.add_user("ada", "admin", PASSWORD)
    return folder


@pytest.fixture
def published(_published_template: Path, tmp_path: Path) -> Path:
    """A folder with a stage-1 warehouse, published snapshot, review store and three users (a fresh copy per test)."""
    dest = tmp_path / "pub"
    shutil.copytree(_published_template, dest)
    return dest
