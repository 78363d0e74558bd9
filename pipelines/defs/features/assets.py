"""The features stage: ``day_features``, what the detectors share computed once per hand day and stored by day.

Partitioned by ``hand_days`` (the ingest stage's keys): a run over a span of
days computes, for each day whose warehouse content changed since its features
were stored (or that has none), the day's tables with
:func:`detectors.features.days.compute_day` and writes them as Parquet
partitions under ``$RAILBIRD_HOME/features/<table>/day=YYYY-MM-DD/``
(:class:`detectors.features.days.DayStore`; atomic, a manifest per day). A
night's run covers the new day: its cost grows with that day, not with the
history. A backfill of a past day recomputes that day only. The detectors'
:class:`~detectors.features.gameplay.store.FeatureStore` reads the window's
days from there (and computes any day still missing itself, so the order of the
two in a run does not matter).
"""


import time

import dagster as dg
from dagster_duckdb import DuckDBResource

from detectors.features import days as fd
from pipelines.defs.ingest.assets import HAND_DAYS
from pipelines.lib import cluster
from pipelines.lib import warehouse as _wh

#: the detectors' card-value setting (FeatureStore's default: 16 Monte Carlo draws, seed 0)
SAMPLES, RANDOM_STATE = 16, 0


@dg.multi_asset(  # one asset; multi_asset for the ingest stage's single-run backfill policy (a beta on dg.asset)
    specs=[dg.AssetSpec("day_features", deps=[dg.AssetKey(t) for t in fd.INPUT_TABLES if t in _wh.INGEST_TABLES],
                        group_name="features", kinds={"duckdb", "polars", "parquet"})],
    partitions_def=HAND_DAYS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool="duckdb_writer",
)
def day_features(context: dg.AssetExecutionContext, warehouse: DuckDBResource) -> dg.MaterializeResult:
    """Per hand day: every heads-up decision valued by the cards, per ordered pair the decision counts, value
    given, hands together and chip flow, the own-baseline cell counts per pair and per player, and per account
    the day's sessions, devices, networks, decision timing and sit-outs; Parquet by day under
    ``features/<table>/day=YYYY-MM-DD/``, each day recomputed only when its hands changed."""
    days = list(context.partition_keys)
    start = time.perf_counter()
    with warehouse.get_connection() as con:
        root = fd.feature_root(con)
        store = fd.DayStore(root, samples=SAMPLES, random_state=RANDOM_STATE)
        done = cluster.compute_days(con, store, days, **cluster.engine_settings())  # Dask where configured
    seconds = time.perf_counter() - start
    context.log.info(f"day features: {len(done)} of {len(days)} days computed in {seconds:.1f}s under {root}")
    return dg.MaterializeResult(metadata={
        "days": len(days), "days_computed": len(done), "seconds": round(seconds, 2),
        "computed": [d.isoformat() for d in done][:50], "root": str(root),
    })
