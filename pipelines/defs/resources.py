"""Resources every stage shares.

- ``warehouse``: the live DuckDB warehouse (dagster-duckdb's resource); only
  pipeline runs open it, one process at a time. Its connections carry DuckDB's
  ``memory_limit`` from :func:`pipelines.lib.warehouse.memory_limit`
  (``RAILBIRD_DUCKDB_MEMORY``, default from the machine's memory).
- ``settings``: where this run reads and writes (landing folder, output folder,
  published snapshot, review store, the ingest staging folder) and the ingest
  knobs (seconds after which a file counts as finished, the quarantine rate a
  healthy landing stays below).
"""

from __future__ import annotations

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib import paths, warehouse


class RailbirdSettings(dg.ConfigurableResource):
    """Folders and files of one deployment; defaults come from ``RAILBIRD_HOME``."""

    landing_dir: str = str(paths.home() / "landing")
    out_dir: str = str(paths.home() / "out")
    snapshot_path: str = str(paths.snapshot_path())
    review_db: str = str(paths.review_store_path())
    staging_dir: str = str(paths.home() / "staging")
    growing_seconds: float = 120.0
    quarantine_threshold: float = 0.05


def default_resources(**settings: object) -> dict[str, object]:
    """``warehouse`` and ``settings`` for ``RAILBIRD_HOME`` as it is now (not when this module was imported).

    Keyword arguments override single settings, e.g. ``landing_dir`` and
    ``out_dir`` for one ``railbird run``.
    """
    home = paths.home()
    values: dict[str, object] = {
        "landing_dir": str(home / "landing"),
        "out_dir": str(home / "out"),
        "snapshot_path": str(paths.snapshot_path()),
        "review_db": str(paths.review_store_path()),
        "staging_dir": str(home / "staging"),
    }
    values.update(settings)
    return {
        "warehouse": DuckDBResource(database=str(paths.warehouse_path()),
                                    connection_config={"memory_limit": warehouse.memory_limit()}),
        "settings": RailbirdSettings(**values),
    }
