"""``nightly_schedule``: every night at 03:00 UTC, the whole pipeline over the staged days.

The run covers the span of ``hand_days`` keys that staged batches still hold
(or, when everything is loaded already, the latest day, so detection and
cases are rebuilt every night anyway).  Its ``landing_files`` step stages
whatever landed since the sensor's last look.
"""


import datetime as _dt

import dagster as dg

from pipelines.defs.ingest.assets import HAND_DAYS, day_range, range_tags
from pipelines.defs.jobs import nightly_job
from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import ingest as _ingest


@dg.schedule(job=nightly_job, cron_schedule="0 3 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.STOPPED)
def nightly_schedule(context: dg.ScheduleEvaluationContext, settings: RailbirdSettings):
    """Run ``nightly_job`` over the staged days (or the latest day) once a night."""
    keys = context.instance.get_dynamic_partitions(HAND_DAYS.name)
    if not keys:
        return dg.SkipReason("no hand days yet: nothing has been staged (is the landing_sensor on?)")
    span = day_range(context.instance, _ingest.staged_days(settings.staging_dir)) or (keys[-1], keys[-1])
    when = (context.scheduled_execution_time or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d")
    return dg.RunRequest(run_key=f"nightly-{when}", tags=range_tags(*span))
