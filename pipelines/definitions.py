"""The railbird code location: every definition under ``pipelines/defs``.

``dagster dev -w dagster_workspace.yaml`` (or ``railbird dev``) shows it all.
"""

import dagster as dg

from pipelines.defs import resources as _resources
from pipelines.lib.paths import ensure_dagster_home

ensure_dagster_home()


@dg.definitions
def defs() -> dg.Definitions:
    import pipelines.defs

    return dg.Definitions.merge(
        dg.load_defs(pipelines.defs),
        dg.Definitions(resources=_resources.default_resources()),
    )
