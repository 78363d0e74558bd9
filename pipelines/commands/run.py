"""``railbird run [LANDING] --out DIR``: the nightly job over a landing folder, in-process through Dagster.

With no LANDING, a demo population is generated (``datasets.generate``) into
``$RAILBIRD_HOME/landing/demo`` (once; re-used while it exists) and used.

Method: the same definitions ``dagster dev`` shows, on the persistent
instance in ``DAGSTER_HOME`` (so the runs appear in the UI), executed in two
in-process runs: ``landing_job`` parses new files into a staged batch and
registers their days; then ``nightly_job`` (every asset of every stage:
ingest tables, detectors, cases) runs over the span of the staged days.
Afterwards the ranked cases of ``DIR/cases.jsonl`` are printed if the cases
stage wrote one. A detector that raised does not stop the run: the other kinds'
cases are published, the failed kind keeps its previous signals, and the
command names it and exits 1.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pipelines.lib import paths
from pipelines.lib.errors import RailbirdError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("landing", nargs="?", metavar="LANDING",
                        help="landing folder (default: generate a demo population into $RAILBIRD_HOME/landing/demo)")
    parser.add_argument("--out", metavar="DIR", help="output folder for cases.jsonl and reports "
                                                     "(default: $RAILBIRD_HOME/out)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated demo population (default: 7)")
    parser.add_argument("--top", type=int, default=15, help="how many cases to print (default: 15)")


def demo_landing(seed: int = 7) -> Path:
    """The embedded default landing folder: a generated demo population (generated once)."""
    target = paths.home() / "landing" / "demo"
    if target.exists() and any(target.rglob("*.txt")):
        return target
    try:
        from datasets.generate import generate
    except ImportError as exc:
        raise RailbirdError(f"no LANDING given and the demo generator is not available ({exc}); "
                            "pass a landing folder: railbird run PATH") from None
    target.mkdir(parents=True, exist_ok=True)
    print(f"generating the demo population into {target} …", file=sys.stderr)
    generate(target, preset="demo", seed=seed, progress=sys.stderr.isatty())
    return target


def build_definitions(landing: str, out_dir: str, stages=None):
    """Every stage's definitions (or those of the ``stages`` named, e.g. ``["ingest"]``) with the settings of this run."""
    import dagster as dg

    import pipelines.defs
    from pipelines.defs.resources import default_resources

    paths.warehouse_path().parent.mkdir(parents=True, exist_ok=True)
    resources = default_resources(landing_dir=landing, out_dir=out_dir)
    defs_folder = Path(pipelines.defs.__file__).parent
    if stages:  # the same loader as pipelines/definitions.py, one sub-folder of defs/ at a time
        with warnings.catch_warnings():  # as load_from_defs_folder does: its tree calls Dagster's preview helpers
            warnings.simplefilter("ignore", dg.PreviewWarning)
            tree = dg.ComponentTree.for_project(defs_folder)
            loaded = [tree.build_defs_at_path(Path(stage)) for stage in stages]
    else:
        loaded = [dg.load_from_defs_folder(path_within_project=defs_folder)]
    return dg.Definitions.merge(*loaded, dg.Definitions(resources=resources)), resources["settings"]


def _failure(result) -> str:
    for event in result.all_events:
        if event.is_step_failure:
            err = event.event_specific_data.error
            while err.cause is not None:  # the user's error is the innermost one
                err = err.cause
            msg = (err.message or "").strip().splitlines()
            return f"step {event.step_key} failed: {msg[-1] if msg else err.cls_name}"
    return "the run failed"


#: tag on every run ``railbird run`` starts: runs of a dead ``railbird run`` are found by it
RUN_TAG = {"railbird/command": "run"}


@contextmanager
def run_lock() -> Iterator[Path]:
    """Hold ``$RAILBIRD_HOME/run.lock`` (an exclusive ``fcntl.flock``) while a ``railbird run`` works.

    The kernel frees the lock when its process dies, even by ``kill -9``: a
    free lock proves that no other ``railbird run`` of this home is alive.
    Raises :class:`RailbirdError` (one line, with the holder's pid) when it is held.
    """
    path = paths.run_lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        raise RailbirdError(f"another railbird run is working on {paths.home()} (pid {holder}); "
                            "wait for it to finish") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock


def release_stale_runs(instance) -> list[str]:
    """Free what dead runs hold; call with :func:`run_lock` held. Returns the run ids released.

    Runs tagged :data:`RUN_TAG` that are still marked queued, starting, started
    or canceling belong to a ``railbird run`` that died (the lock was free): they
    are marked failed. Every slot of the ``duckdb_writer`` pool (any Dagster
    concurrency slot) held by a run that is not in progress is freed; before,
    such a slot made the next run wait for it forever.
    """
    import dagster as dg

    in_progress = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
                   dg.DagsterRunStatus.CANCELING]
    released = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=in_progress, tags=RUN_TAG)):
        instance.report_run_failed(run, "the railbird run process died; released by the next railbird run")
        released.append(run.run_id)
    storage = instance.event_log_storage
    for run_id in storage.get_concurrency_run_ids():
        run = instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            storage.free_concurrency_slots_for_run(run_id)
            released.append(run_id)
    return sorted(set(released))


# Dagster's console logger prints every step event at DEBUG; the terminal gets warnings and our summary.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def execute(landing: str, out_dir: str, *, instance=None, stages=None) -> dict:
    """Stage ``landing`` and run ``nightly_job`` over the staged days; returns what happened.

    Holds :func:`run_lock` throughout and first releases what a dead run left
    (:func:`release_stale_runs`), so a run killed in any stage never blocks the next.
    """
    import dagster as dg

    defs, settings = build_definitions(landing, out_dir, stages)
    instance = instance or dg.DagsterInstance.get()
    with run_lock():
        released = release_stale_runs(instance)
        if released:
            print(f"released {len(released)} run(s) of a railbird run that died: {', '.join(released)}",
                  file=sys.stderr)
        return _execute_locked(defs, settings, instance, landing)


def _execute_locked(defs, settings, instance, landing: str) -> dict:
    """:func:`execute` once the lock is held: ``landing_job``, then ``nightly_job`` over the staged span."""
    import dagster as dg

    from pipelines.defs.ingest.assets import range_tags, staged_span

    staged = defs.resolve_job_def("landing_job").execute_in_process(instance=instance, raise_on_error=False,
                                                                    run_config=QUIET, tags=RUN_TAG)
    if not staged.success:
        raise RailbirdError(f"staging {landing}: {_failure(staged)}")
    span = staged_span(instance, settings.staging_dir)
    hand_days = staged_hand_days(settings.staging_dir)
    if span is None:
        raise RailbirdError(f"nothing to load: no hand histories, events or accounts found in {landing}")
    # landing_job has just staged the folder: the rest of nightly_job runs without staging it again
    # (freshly written files still count as growing and would be read twice)
    nightly = defs.resolve_job_def("nightly_job")
    rest = [k for k in nightly.asset_layer.asset_graph.get_all_asset_keys()
            if k != dg.AssetKey("landing_files") and nightly.asset_layer.asset_graph.get(k).is_executable]
    result = nightly.execute_in_process(
        instance=instance, tags={**range_tags(*span), **RUN_TAG}, raise_on_error=False, run_config=QUIET, asset_selection=rest)
    if not result.success:
        raise RailbirdError(f"nightly_job over {span[0]}..{span[1]}: {_failure(result)}")
    summary = None
    failed: dict[str, dict[str, str]] = {}
    for m in result.get_asset_materialization_events():
        mat = m.event_specific_data.materialization
        if mat.asset_key.path == ["hands"] and "summary" in mat.metadata:
            summary = mat.metadata["summary"].value
        status = mat.metadata.get("status")
        if status is not None and status.value == "failed":
            failed[mat.asset_key.path[-1].removesuffix("_signals")] = {
                "error": mat.metadata["error"].value, "signals_run_id": mat.metadata["signals_run_id"].value}
    return {"span": span, "summary": summary, "run_id": result.run_id, "hand_days": hand_days,
            "failed_detectors": failed}


def staged_hand_days(staging_dir: str) -> tuple[str, str, int] | None:
    """(first, last, number of days) of the hands in the staged batches; None when no hands are staged.

    The run's partition span can be wider (events and accounts register days
    too, and the span runs over every key between), so the header says this.
    """
    import polars as pl

    from pipelines.lib.ingest import staged_batches

    files = [f for b in staged_batches(staging_dir) for f in [b / "hands.parquet"] if f.exists()]
    if not files:
        return None
    row = pl.scan_parquet(files).select(pl.col("_day").min().alias("a"), pl.col("_day").max().alias("b"),
                                        pl.col("_day").n_unique().alias("n")).collect().row(0)
    return None if row[0] is None else (str(row[0]), str(row[1]), int(row[2]))


def header(info: dict) -> str:
    """The run's first line: the days its hands span (and the job's partition span when wider)."""
    first, last = info["span"]
    days = info.get("hand_days")
    if not days:
        return f"nightly_job over {first}..{last} (no hands staged; run {info['run_id']})"
    text = f"nightly_job: hands of {days[2]} day{'s' if days[2] != 1 else ''}, {days[0]}..{days[1]}"
    if (first, last) != (days[0], days[1]):
        text += f" (partitions {first}..{last}, events and accounts included)"
    return f"{text} (run {info['run_id']})"


def failure_lines(failed: dict[str, dict[str, str]]) -> list[str]:
    """One line per failed detector: the kind, its error, and whose signals the kind shows instead."""
    from pipelines.lib.safe_text import terminal_safe

    return [f"detector {kind} FAILED: {terminal_safe(f['error'])}; its cases show the signals of "
            + (f"run {f['signals_run_id']}" if f["signals_run_id"] else "no earlier run (none)")
            for kind, f in sorted(failed.items())]


def print_cases(out_dir: Path, top: int) -> None:
    """The ranked cases (the cases stage's own formatting, control characters stripped) or why there are none."""
    from pipelines.lib.cases import format_ranked

    cases_file = out_dir / "cases.jsonl"
    if not cases_file.exists():
        print(f"no cases.jsonl in {out_dir} (the cases stage has not run)")
        return
    from pipelines.cli import command_name

    cmd = command_name()
    print(format_ranked(cases_file, limit=top, command=cmd))
    print(f"First time? Create a sign-in: {cmd} users add NAME --role admin "
          "(asks for the password; without a terminal, pipe it in with --password-stdin)")


def main(args: argparse.Namespace) -> int:
    landing = Path(args.landing) if args.landing else demo_landing(args.seed)
    if not landing.exists():
        raise RailbirdError(f"no such landing folder: {landing}")
    out_dir = Path(args.out or paths.home() / "out").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    info = execute(str(landing.resolve()), str(out_dir))
    print(header(info))
    if info["summary"]:
        print(info["summary"])
    from pipelines.cli import command_name

    print(f"warehouse snapshot: {paths.snapshot_path()}  "
          f"(query it: {command_name()} sql \"SELECT * FROM player_stats LIMIT 10\")")
    failed = info["failed_detectors"]
    for line in failure_lines(failed):
        print(line)
    print_cases(out_dir, args.top)
    if failed:
        print(f"railbird run: {len(failed)} detector(s) failed ({', '.join(sorted(failed))}); the other kinds' cases "
              "are published", file=sys.stderr)
        return 1
    return 0
