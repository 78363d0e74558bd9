"""``nightly_schedule``: every night at 03:00 UTC, the whole pipeline over the staged days.

The run covers the span of ``hand_days`` keys that staged batches still hold
(or, when everything is loaded already, the latest day, so detection and
cases are rebuilt every night anyway).  Its ``landing_files`` step stages
whatever landed since the sensor's last look.
"""


import datetime as _dt

import dagster as dg

from pipelines.defs.ingest.assets import range_tags, staged_span
from pipelines.defs.jobs import nightly_job
from pipelines.defs.resources import RailbirdSettings


@dg.schedule(job=nightly_job, cron_schedule="0 3 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.STOPPED)
def nightly_schedule(context: dg.ScheduleEvaluationContext, settings: RailbirdSettings):
    """Run ``nightly_job`` over the staged days (or the latest day) once a night."""
    span = staged_span(context.instance, settings.staging_dir)
    if span is None:
        return dg.SkipReason("no hand days yet: nothing has been staged (is the landing_sensor on?)")
    when = (context.scheduled_execution_time or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d")
    return dg.RunRequest(run_key=f"nightly-{when}", tags=range_tags(*span))
