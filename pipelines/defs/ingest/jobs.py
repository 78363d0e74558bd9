"""Jobs of the ingest stage: stage the landing folder; load staged days (with the ingest checks)."""

from __future__ import annotations

import dagster as dg

landing_job = dg.define_asset_job(
    "landing_job", selection=dg.AssetSelection.assets("landing_files"),
    description="Parse new and changed landing files into a staged batch and register their days.")

ingest_job = dg.define_asset_job(
    "ingest_job", selection=dg.AssetSelection.groups("ingest") - dg.AssetSelection.assets("landing_files"),
    description="Load staged days into the warehouse (one transaction) and run the ingest checks.")
