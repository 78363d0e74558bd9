"""DuckDB's memory_limit on the pipeline's warehouse connections (pipelines.lib.warehouse.memory_limit)."""

from __future__ import annotations

import duckdb

from pipelines.defs.resources import default_resources
from pipelines.lib import warehouse as wh


def _setting(value: str) -> str:
    """How DuckDB shows ``value`` as its memory_limit."""
    con = duckdb.connect(config={"memory_limit": value})
    try:
        return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    finally:
        con.close()


def test_the_default_comes_from_the_machine_and_the_variable_overrides_it(monkeypatch):
    monkeypatch.delenv(wh.MEMORY_VAR, raising=False)
    mb = int(wh.memory_limit().removesuffix("MB"))
    assert 256 <= mb <= 1024 and mb == min(1024, max(256, wh.machine_memory() // (24 * 2**20)))
    monkeypatch.setenv(wh.MEMORY_VAR, "300MB")
    assert wh.memory_limit() == "300MB"


def test_the_pipeline_connections_carry_the_limit(monkeypatch, tmp_path):
    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path))
    monkeypatch.setenv(wh.MEMORY_VAR, "300MB")
    with default_resources()["warehouse"].get_connection() as con:
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == _setting("300MB")
    con = wh.connect(tmp_path / "w.duckdb")
    try:
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == _setting("300MB")
    finally:
        con.close()
