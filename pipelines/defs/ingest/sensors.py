"""``landing_sensor``: stage new landing files, then load the staged days.

Each tick fingerprints the landing folder (path, size, mtime; no reading).
The cursor holds the fingerprints acted on last time, so a file is requested
once per change.  New or changed files → a ``landing_job`` run (parse and
stage).  Staged batches whose days are registered → an ``ingest_job`` run
over the span of those ``hand_days`` keys (one transaction), keyed by the
batch folders so each batch is requested once.
"""


import hashlib
import json
import os

import dagster as dg

from pipelines.defs.ingest.assets import day_range, range_tags
from pipelines.defs.ingest.jobs import ingest_job, landing_job
from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import ingest as _ingest


def fingerprint(landing: str) -> dict[str, list[int]]:
    """{path: [size, mtime_ns]} of every file under ``landing`` (empty if it does not exist)."""
    out: dict[str, list[int]] = {}
    if not os.path.isdir(landing):
        return out
    for root, dirs, files in os.walk(landing):
        dirs.sort()
        for f in files:
            p = os.path.join(root, f)
            try:
                st = os.stat(p)
            except OSError:
                continue
            out[p] = [st.st_size, st.st_mtime_ns]
    return out


@dg.sensor(jobs=[landing_job, ingest_job], minimum_interval_seconds=30,
           default_status=dg.DefaultSensorStatus.STOPPED)
def landing_sensor(context: dg.SensorEvaluationContext, settings: RailbirdSettings):
    """New or changed files in the landing folder → stage them; staged days → load them."""
    previous = json.loads(context.cursor) if context.cursor else {}
    current = fingerprint(settings.landing_dir)
    changed = sorted(p for p, fp in current.items() if previous.get(p) != fp)
    requests: list[dg.RunRequest] = []
    if changed:
        key = hashlib.sha256(json.dumps({p: current[p] for p in changed}, sort_keys=True).encode()).hexdigest()[:16]
        requests.append(dg.RunRequest(job_name="landing_job", run_key=f"landing-{key}",
                                      tags={"railbird/changed_files": str(len(changed))}))
    batches = _ingest.staged_batches(settings.staging_dir)
    if batches:
        span = day_range(context.instance, _ingest.staged_days(settings.staging_dir))
        if span:
            key = hashlib.sha256("|".join(b.name for b in batches).encode()).hexdigest()[:16]
            requests.append(dg.RunRequest(job_name="ingest_job", run_key=f"load-{key}", tags=range_tags(*span)))
    if not requests:
        return dg.SkipReason(f"no new or changed files in {settings.landing_dir} and nothing staged")
    return dg.SensorResult(run_requests=requests, cursor=json.dumps(current, sort_keys=True))
