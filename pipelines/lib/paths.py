"""Where railbird keeps its files, in one place.

Everything lives under ``RAILBIRD_HOME`` (default: ``./var`` in the working
directory), which git ignores:

- ``warehouse.duckdb``: the live warehouse; only pipeline runs open it, and
  only one at a time (DuckDB allows one writer process).
- ``snapshot/warehouse.duckdb``: the copy each run publishes when it ends;
  the web app and ``railbird sql`` read this, never the live file.
- ``review.sqlite``: the investigators' review state (statuses, notes, audit
  trail); never rebuilt by a run.
- ``dagster/``: ``DAGSTER_HOME``, with telemetry switched off.
- ``run.lock``: held (``fcntl.flock``) by the one ``railbird run`` at work;
  the kernel frees it when that process dies.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("RAILBIRD_HOME", "var")).resolve()


def warehouse_path() -> Path:
    return Path(os.environ.get("RAILBIRD_WAREHOUSE", home() / "warehouse.duckdb")).resolve()


def snapshot_path() -> Path:
    return Path(os.environ.get("RAILBIRD_SNAPSHOT", home() / "snapshot" / "warehouse.duckdb")).resolve()


def review_store_path() -> Path:
    return Path(os.environ.get("RAILBIRD_REVIEW_DB", home() / "review.sqlite")).resolve()


def run_lock_path() -> Path:
    return home() / "run.lock"


DAGSTER_YAML = """\
# Written by railbird: these machines reach package registries and nothing else.
telemetry:
  enabled: false
concurrency:
  pools:
    default_limit: 1
"""


def ensure_dagster_home() -> Path:
    """Point ``DAGSTER_HOME`` at a folder whose dagster.yaml turns telemetry off.

    An existing ``DAGSTER_HOME`` is kept, but its dagster.yaml is created if it
    has none. Call this before Dagster is imported by anything that runs it.
    """
    dagster_home = Path(os.environ.get("DAGSTER_HOME") or home() / "dagster").resolve()
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    return dagster_home
