"""The railbird code location: every definition under ``pipelines/defs``.

``dagster dev -w dagster_workspace.yaml`` (or ``railbird dev``) shows it all.
"""

from pathlib import Path

import dagster as dg

from pipelines.defs import resources as _resources
from pipelines.lib.paths import ensure_dagster_home

ensure_dagster_home()


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions.merge(
        dg.load_from_defs_folder(path_within_project=Path(__file__).parent),  # reads pipelines/dg.toml
        dg.Definitions(resources=_resources.default_resources()),
    )
