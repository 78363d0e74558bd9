"""railbird finds collusion and cheating in online poker: it reads hand histories, platform events and
accounts into a warehouse, runs the detectors, and opens cases for investigators to review.

Each sub-command lives in its own module with ``configure(parser)`` and
``main(args) -> int``; this file only dispatches. Errors the user can fix
(:class:`RailbirdError`) print as one line; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
from pathlib import Path

from pipelines.lib.errors import RailbirdError
from pipelines.lib.paths import ensure_dagster_home
from pipelines.lib.safe_text import terminal_safe

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("pipelines.commands.run", "the nightly job over a landing folder (default: a generated demo population)"),
    "ingest": ("pipelines.commands.ingest", "read hand histories, events and accounts into the warehouse"),
    "sql": ("pipelines.commands.sql", "run read-only SQL over the published warehouse snapshot"),
    "generate": ("datasets.cli", "write a synthetic population with planted collusion and its labels"),
    "eval": ("pipelines.commands.evaluate", "score a run's cases.jsonl against labels.jsonl"),
    "serve": ("pipelines.commands.serve", "start the investigators' web app on localhost"),
    "users": ("pipelines.commands.users", "manage the web app's investigators, reviewers and admins"),
    "dev": ("pipelines.commands.dev", "start the Dagster UI (dg dev, else dagster dev) with telemetry off"),
}
DESCRIPTION = " ".join(__doc__.split("\n\n")[0].split())  # the docstring's first paragraph, as one line


def version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" when running from an uninstalled tree."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version

    try:
        return _version("railbird")
    except PackageNotFoundError:
        return "unknown"


def command_name() -> str:
    """How to type ``railbird`` again from here: the bare name only when PATH finds this very command.

    Otherwise the path it was started by (``.venv/bin/railbird`` from ``make demo``),
    ``python -m pipelines.cli`` when it was started as a module, else ``railbird``.
    """
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if Path(argv0).name == "cli.py" and Path(argv0).parent.name == "pipelines":
        return f"{sys.executable} -m pipelines.cli"
    if Path(argv0).name != "railbird":  # embedded (tests, notebooks): the command's name
        return "railbird"
    found = shutil.which("railbird")
    try:
        if found and os.path.samefile(found, argv0):
            return "railbird"
    except OSError:
        pass
    return argv0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="railbird", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"railbird {version()}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        importlib.import_module(module).configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    ensure_dagster_home()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 2
    try:
        return int(importlib.import_module(args._module).main(args) or 0)
    except RailbirdError as exc:
        print(f"railbird {args.command}: {terminal_safe(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback for the user, unless asked
        if args.debug:
            raise
        print(f"railbird {args.command}: unexpected error: {type(exc).__name__}: {terminal_safe(exc)} "
              "(run with --debug for details)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
