"""``nightly_job``: every asset of every stage (ingest, features, detect, cases) in one run.

Selecting everything means assets added under ``pipelines/defs/detect`` and
``pipelines/defs/cases`` join the nightly run without touching this file.
Run it over a span of ``hand_days`` keys (partition range tags); unpartitioned
assets (landing_files, detection, cases) run once per run. ``day_features``
shares the ``hand_days`` keys: a night's run computes the features of the days
it loaded (docs/scale.md).
"""

from __future__ import annotations

import dagster as dg

nightly_job = dg.define_asset_job(
    "nightly_job", selection=dg.AssetSelection.all(),
    description="The whole pipeline: stage landing files, load staged days, compute their day features, detect, "
                "build cases.")
