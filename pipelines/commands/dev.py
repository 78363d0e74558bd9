"""``railbird dev``: start the Dagster UI with telemetry off.

``dg dev`` (package ``dagster-dg-cli``) when it is installed: it reads the
project from pyproject.toml. Otherwise ``dagster dev -w
dagster_workspace.yaml``, which prints that it is superseded by ``dg dev``;
railbird says first why it uses it, and that the warning is harmless.

``DAGSTER_HOME`` is set by :func:`pipelines.lib.paths.ensure_dagster_home`
(a dagster.yaml with telemetry disabled and one ``duckdb_writer`` slot); the
process is replaced by the command so Ctrl-C stops it directly.
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


def _exe(name: str) -> str | None:
    """``name`` beside this Python (the venv's bin), else on PATH."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def command(args: argparse.Namespace) -> list[str]:
    """The command line to exec: ``dg dev`` if installed, else ``dagster dev`` on the workspace file."""
    dg = _exe("dg")
    if dg:
        return [dg, "dev", "-p", str(args.port), "-h", args.host]
    workspace = ROOT / "dagster_workspace.yaml"
    if not workspace.exists():
        raise RailbirdError(f"workspace file not found: {workspace}")
    exe = _exe("dagster")
    if not exe:
        raise RailbirdError("the `dagster` command is not installed in this environment (pip install -e .)")
    return [exe, "dev", "-w", str(workspace), "-p", str(args.port), "-h", args.host]


def main(args: argparse.Namespace) -> int:
    ensure_dagster_home()
    cmd = command(args)
    if Path(cmd[0]).name != "dg":
        print("railbird dev: `dg` (package dagster-dg-cli) is not installed here, so this runs `dagster dev`; "
              "its warning that `dg dev` supersedes it is harmless.", file=sys.stderr, flush=True)
    print(f"railbird dev: the Dagster UI at http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    os.chdir(ROOT)
    os.execv(cmd[0], cmd)
    return 0  # not reached
