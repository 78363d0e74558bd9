"""``railbird dev``: start the Dagster UI (``dagster dev -w dagster_workspace.yaml``) with telemetry off.

``DAGSTER_HOME`` is set by :func:`pipelines.lib.paths.ensure_dagster_home`
(a dagster.yaml with telemetry disabled and one ``duckdb_writer`` slot); the
process is replaced by ``dagster dev`` so Ctrl-C stops it directly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from pipelines.lib.errors import RailbirdError
from pipelines.lib.paths import ensure_dagster_home

ROOT = Path(__file__).resolve().parents[2]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=3000, help="web UI port (default: %(default)s)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: %(default)s)")


def command(args: argparse.Namespace) -> list[str]:
    workspace = ROOT / "dagster_workspace.yaml"
    if not workspace.exists():
        raise RailbirdError(f"workspace file not found: {workspace}")
    exe = shutil.which("dagster", path=str(Path(sys.executable).parent)) or shutil.which("dagster")
    if not exe:
        raise RailbirdError("the `dagster` command is not installed in this environment (pip install -e .)")
    return [exe, "dev", "-w", str(workspace), "-p", str(args.port), "-h", args.host]


def main(args: argparse.Namespace) -> int:
    ensure_dagster_home()
    cmd = command(args)
    os.chdir(ROOT)
    os.execv(cmd[0], cmd)
    return 0  # not reached
