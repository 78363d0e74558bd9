"""The ingest stage as Dagster assets: landing files → staged batches → warehouse tables by hand day.

Design
------
Hands arrive in files, and one file holds hands of many days; the day of a
hand is only known once the file is parsed.  So ingest runs in two steps:

1. ``landing_files`` (unpartitioned): walks the landing folder, skips files
   already loaded or staged unchanged (path + size + mtime + sha256), parses
   the new and changed ones (hands, events, accounts; growing files are read
   up to their last complete hand), and writes the result as a *staged batch*
   of Parquet files under ``settings.staging_dir``, every row tagged with its
   day: the UTC day of the hand for hand tables, of ``ts`` for events, and the
   day of staging for file-level rows (accounts, quarantine, ingest_log).  The
   days found are registered as keys of the dynamic partitions definition
   ``hand_days``.  It does not write the warehouse.
2. ``warehouse_tables``: one multi-asset whose specs are the warehouse tables
   (asset key = table name), partitioned by ``hand_days`` with a single-run
   backfill policy.  A run for a key range loads the staged rows of exactly
   those days in **one transaction** (dedupe, conflicts → quarantine; see
   :mod:`pipelines.lib.warehouse`), removes them from staging once committed,
   and publishes the read-only snapshot.  A failed run leaves both the
   warehouse and the staged rows as they were, so a retry is safe.

Writes are serialised by the ``duckdb_writer`` pool (DuckDB has one writer).
The ``landing_sensor`` stages new files and then requests a load of the
staged days; ``nightly_job`` (every asset of every stage) is run over the
staged days by the ``nightly_schedule`` and by ``railbird run``.
"""


import re

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import ingest as _ingest
from pipelines.lib import warehouse as wh

HAND_DAYS = dg.DynamicPartitionsDefinition(name="hand_days")

#: the tables the ingest stage writes, each one an asset
TABLE_ASSETS = [t for t in wh.INGEST_TABLES]


def _table_descriptions() -> dict[str, str]:
    text = wh.SCHEMA_SQL.read_text(encoding="utf-8")
    return {m.group(1): m.group(2).replace("''", "'") for m in re.finditer(r"COMMENT ON TABLE (\w+) IS '((?:[^']|'')*)';", text)}


_DESCRIPTIONS = _table_descriptions()


def register_days(instance: dg.DagsterInstance, days: list[str]) -> list[str]:
    """Add the days not yet known as ``hand_days`` partitions (sorted, so key order stays chronological)."""
    known = set(instance.get_dynamic_partitions(HAND_DAYS.name))
    new = sorted(d for d in days if d not in known)
    if new:
        instance.add_dynamic_partitions(HAND_DAYS.name, new)
    return new


def day_range(instance: dg.DagsterInstance, days: list[str]) -> tuple[str, str] | None:
    """The (first, last) ``hand_days`` keys, in key order, spanning ``days``; None if none of them is a key."""
    keys = instance.get_dynamic_partitions(HAND_DAYS.name)
    idx = sorted(keys.index(d) for d in set(days) if d in keys)
    if not idx:
        return None
    return keys[idx[0]], keys[idx[-1]]


def staged_span(instance: dg.DagsterInstance, staging_dir: str) -> tuple[str, str] | None:
    """The span of ``hand_days`` keys the staged batches hold, else the latest day; None while there is no day."""
    span = day_range(instance, _ingest.staged_days(staging_dir))
    if span is None:
        keys = instance.get_dynamic_partitions(HAND_DAYS.name)
        span = (keys[-1], keys[-1]) if keys else None
    return span


def range_tags(first: str, last: str) -> dict[str, str]:
    return {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last}


@dg.asset(group_name="ingest", pool="duckdb_writer", kinds={"python", "parquet"})
def landing_files(context: dg.AssetExecutionContext, warehouse: DuckDBResource,
                  settings: RailbirdSettings) -> dg.MaterializeResult:
    """Raw files of the landing folder: new and changed ones parsed into a staged batch, by day.

    Hand histories (``*.txt``), platform events (``*.jsonl``), ``accounts.csv``;
    ``labels.jsonl`` and anything else are logged and not loaded.  Registers the
    days found as ``hand_days`` partitions.
    """
    landing = settings.landing_dir
    import os

    if not os.path.isdir(landing):
        context.log.warning(f"landing folder {landing} does not exist: nothing to stage")
        return dg.MaterializeResult(metadata={"files_staged": 0, "landing_dir": landing})
    with warehouse.get_connection() as con:
        wh.ensure_schema(con)
        known = _ingest.known_files(con)
    known.update(_ingest.staged_files(settings.staging_dir))
    files = _ingest.discover([landing])
    todo, skipped = _ingest.changed_files(files, known)
    if not todo:
        return dg.MaterializeResult(metadata={"files_seen": len(files), "files_staged": 0, "files_skipped": skipped})
    days: set[str] = set()
    kinds: dict[str, int] = {}
    hands = quarantined = 0
    folders = []
    for batch in _ingest.iter_batches(todo, growing_seconds=settings.growing_seconds, progress=False):
        folder, batch_days = _ingest.stage(batch, settings.staging_dir)  # one staged batch per chunk (per piece of a file larger than one)
        folders.append(folder)
        days.update(batch_days)
        for k, n in (batch.files.group_by("file_kind").len().iter_rows() if batch.files is not None else []):
            kinds[k] = kinds.get(k, 0) + int(n)
        hands += batch.tables["hands"].height if "hands" in batch.tables else 0
        quarantined += batch.quarantine.height
    day_list = sorted(days)
    new = register_days(context.instance, day_list)
    return dg.MaterializeResult(metadata={
        "files_seen": len(files), "files_staged": len(todo), "files_skipped": skipped,
        "files_by_kind": dict(sorted(kinds.items())),
        "hands_parsed": hands,
        "quarantined": quarantined,
        "days": day_list if len(day_list) <= 50 else day_list[:25] + ["…"] + day_list[-24:],
        "new_days": len(new),
        "staged_batches": [str(f) for f in folders],
    })


@dg.multi_asset(
    specs=[dg.AssetSpec(t, deps=["landing_files"], group_name="ingest", description=_DESCRIPTIONS.get(t),
                        kinds={"duckdb"}) for t in TABLE_ASSETS],
    partitions_def=HAND_DAYS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool="duckdb_writer",
    can_subset=False,
)
def warehouse_tables(context: dg.AssetExecutionContext, warehouse: DuckDBResource, settings: RailbirdSettings):
    """Load the staged rows of this run's days into the warehouse in one transaction, then publish the snapshot."""
    days = list(context.partition_keys)
    with warehouse.get_connection() as con:
        wh.ensure_schema(con)
        result = _ingest.load_staged(con, settings.staging_dir, days, run_id=context.run.run_id)
        totals = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in TABLE_ASSETS}
        wh.publish_snapshot(con, settings.snapshot_path)
    context.log.info(result.summary())
    for t in TABLE_ASSETS:
        meta = {"rows_added": int(result.rows.get(t, 0)), "rows_total": int(totals[t]), "days": len(days)}
        if t == "hands":
            meta.update({"duplicates": result.duplicates, "summary": result.summary()})
        if t == "quarantine":
            meta.update({f"reason: {r}": int(n) for r, n in result.quarantine_reasons.most_common(20)})
        yield dg.MaterializeResult(asset_key=t, metadata=meta)
