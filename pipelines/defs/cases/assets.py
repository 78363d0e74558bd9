"""Cases, their reports and the published snapshot: the end of the nightly job.

``cases`` merges the six detectors' signals into cases (``pipelines.lib.cases``),
keeps their ids and the investigators' decisions in the review store, writes
the warehouse tables ``cases``/``case_signals``/``case_hands`` and
``OUT/cases.jsonl``. ``warehouse_snapshot`` publishes the copy readers use.
``case_reports`` writes OUT/reports/<case>.html and .json.
"""


import os
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from detectors.base import KINDS
from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import cases as cases_lib
from pipelines.lib import reports as reports_lib
from pipelines.lib.review import ReviewStore
from pipelines.lib.warehouse import publish_snapshot

SIGNAL_ASSETS = [dg.AssetKey(f"{kind}_signals") for kind in KINDS]
# Reports for every flagged case, and for the strongest unflagged ones up to this many
# (a population yields thousands of unflagged candidates; their rows stay in cases.jsonl).
UNFLAGGED_REPORTS = int(os.environ.get("RAILBIRD_UNFLAGGED_REPORTS", "100"))


@dg.asset(deps=SIGNAL_ASSETS, group_name="cases", pool="duckdb_writer", kinds={"duckdb"})
def cases(context: dg.AssetExecutionContext, warehouse: DuckDBResource, settings: RailbirdSettings) -> dg.MaterializeResult:
    """Merge every detector's signals into ranked cases that keep their ids across runs.

    Signals of one kind whose accounts overlap merge; cases sharing accounts
    form a ring; the review store (SQLite, never rebuilt) keeps case ids,
    statuses, notes and the audit trail, marks new evidence hands and reopens
    a dismissed case only when its evidence grows materially. Writes the
    warehouse tables cases / case_signals / case_hands and OUT/cases.jsonl; the
    store's registration commits only with them (:func:`cases_lib.publish_cases`).
    """
    with ReviewStore(settings.review_db) as store, warehouse.get_connection() as con:
        result, path = cases_lib.publish_cases(con, store, context.run.run_id, Path(settings.out_dir) / "cases.jsonl")
        stale = cases_lib.stale_kinds(con, context.run.run_id)
    for kind, (error, shown) in stale.items():
        context.log.warning(f"{kind}: detector failed ({error}); its cases show the signals of run {shown or 'none'}")
    flagged = [c for c in result if c["flagged"]]
    by_kind = {k: sum(1 for c in flagged if c["kind"] == k) for k in KINDS}
    return dg.MaterializeResult(metadata={
        "cases": len(result),
        "flagged": len(flagged),
        "new_cases": sum(1 for c in result if c["is_new"]),
        "reopened": sum(1 for c in result if c["reopened"]),
        "new_hands": sum(len(c["new_hands"]) for c in result if not c["is_new"]),
        "flagged_by_kind": dg.MetadataValue.json(by_kind),
        "stale_kinds": dg.MetadataValue.json({k: {"error": e, "signals_run_id": r} for k, (e, r) in stale.items()}),
        "cases_jsonl": dg.MetadataValue.path(str(path)),
        "top": dg.MetadataValue.md(cases_lib.format_ranked(path, limit=10).replace("\n", "  \n")),
    })


@dg.asset(deps=[cases], group_name="cases", pool="duckdb_writer", kinds={"duckdb"})
def warehouse_snapshot(context: dg.AssetExecutionContext, warehouse: DuckDBResource,
                       settings: RailbirdSettings) -> dg.MaterializeResult:
    """Publish the warehouse as the read-only snapshot the web app and ``railbird sql`` open.

    Copied with ATTACH / COPY FROM DATABASE / DETACH into a temporary file
    that ``os.replace`` puts over the published one, so readers never see a
    half-written file and never block the next run's writer.
    """
    with warehouse.get_connection() as con:
        path = publish_snapshot(con, settings.snapshot_path)
    return dg.MaterializeResult(metadata={"snapshot": dg.MetadataValue.path(str(path)),
                                          "bytes": os.path.getsize(path)})


@dg.asset(deps=[cases], group_name="cases", pool="duckdb_writer", kinds={"html"})
def case_reports(context: dg.AssetExecutionContext, warehouse: DuckDBResource,
                 settings: RailbirdSettings) -> dg.MaterializeResult:
    """One self-contained HTML report and its JSON per case in OUT/reports/.

    Every flagged case, and the strongest unflagged ones (RAILBIRD_UNFLAGGED_REPORTS,
    default 100): the accusation, the accounts, each signal's evidence against
    the players' own baselines, replays of the evidence hands, the value-flow /
    identity graph, the timeline and the SQL behind every figure.
    """
    with warehouse.get_connection() as con:
        ids = [r[0] for r in con.execute(
            "SELECT case_id FROM cases WHERE flagged UNION ALL "
            "(SELECT case_id FROM cases WHERE NOT flagged ORDER BY rank LIMIT ?)", [UNFLAGGED_REPORTS]).fetchall()]
        n = reports_lib.write_reports(con, ids, settings.out_dir)
    return dg.MaterializeResult(metadata={"reports": n,
                                          "folder": dg.MetadataValue.path(str(Path(settings.out_dir) / "reports"))})
