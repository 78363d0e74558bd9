"""``case_digest_sensor``: the morning after a run, the team hears of the flagged cases it opened or reopened.

A run-status sensor: each run that succeeds (the nightly job, or any job
that builds ``cases``) is looked up in the review store
(:func:`pipelines.lib.digest.digest_cases`). If it opened or reopened
flagged cases, the digest (:func:`pipelines.lib.digest.build_digest`, with
links to the web app's cases) is written to ``OUT/digests/<run>.json`` and
sent to the webhook and/or mail recipients of ``RAILBIRD_HOME/railbird.toml``
(or the ``RAILBIRD_DIGEST_*`` variables). The sensor runs by default; with
nothing configured it only writes the file.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import digest as digest_lib
from pipelines.lib.errors import RailbirdError
from pipelines.lib.review import ReviewStore


@dg.run_status_sensor(run_status=dg.DagsterRunStatus.SUCCESS, name="case_digest_sensor",
                      default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=60,
                      description="After a successful run: a digest of the flagged cases it opened or reopened, "
                                  "to the webhook / mail of railbird.toml")
def case_digest_sensor(context: dg.RunStatusSensorContext, settings: RailbirdSettings):
    """Write and send the digest of the run that just succeeded (module doc)."""
    run_id = context.dagster_run.run_id
    if not Path(settings.review_db).exists():
        return dg.SkipReason("no review store yet")
    with ReviewStore(settings.review_db) as store:
        items = digest_lib.digest_cases(store, run_id)
    if not items:
        return dg.SkipReason(f"run {run_id} opened or reopened no flagged case")
    try:
        cfg = digest_lib.load_config()
    except RailbirdError as exc:
        cfg = digest_lib.DigestConfig()
        context.log.error(f"digest not sent: {exc}")
    digest = digest_lib.build_digest(items, run_id, cfg.base_url)
    path = digest_lib.write_digest(digest, Path(settings.out_dir) / "digests")
    if not cfg.enabled:
        return dg.SkipReason(f"{digest['subject']}: written to {path}; no webhook or mail configured "
                             f"({digest_lib.config_path()})")
    report = digest_lib.send_digest(digest, cfg)
    for line in report:
        (context.log.error if "failed" in line else context.log.info)(line)
    if any("failed" in line for line in report):
        return dg.SkipReason(f"{digest['subject']}: written to {path}; " + "; ".join(report))
    return None
