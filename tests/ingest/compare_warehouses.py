"""Same input, two checkouts of railbird: are the warehouses they build identical?

The correctness gate for changes to the ingest stage (parser, loader): ingest
the same paths with a reference checkout (``--reference``, e.g. a
``git worktree add /tmp/ref main``) and with
this one, each in its own process (``python -m pipelines.cli ingest`` run from
the checkout's folder, so that checkout's code is imported), into two fresh
DuckDB files; then compare every table written by the ingest stage row for
row, order-independently: ``EXCEPT ALL`` both ways over all columns except
the ones that name the run (``run_id``, ``started_at``, ``finished_at``,
``quarantined_at``), plus the row counts.  Exit status 0 only when every
table is identical.

    .venv/bin/python tests/ingest/compare_warehouses.py PATH... --reference CHECKOUT [--work DIR]

Not collected by pytest (not named ``test_*``): it runs two full ingests.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parents[2]
RUN_COLUMNS = {"run_id", "started_at", "finished_at", "quarantined_at"}


def ingest_with(checkout: Path, paths: list[str], db: Path, python: str) -> float:
    """Run ``checkout``'s ingest on ``paths`` into ``db``; return the CPU seconds of the run."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    before = os.times()
    subprocess.run([python, "-m", "pipelines.cli", "ingest", *paths, "--warehouse", str(db), "--no-snapshot",
                    "--no-progress", "--growing-seconds", "0"], cwd=checkout, env=env, check=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def compare(ref_db: Path, new_db: Path) -> list[tuple[str, int, int, int, int]]:
    """(table, rows in ref, rows in new, rows only in ref, rows only in new) for every ingest table."""
    con = duckdb.connect()
    con.execute("ATTACH ? AS ref (READ_ONLY)", [str(ref_db)])
    con.execute("ATTACH ? AS new (READ_ONLY)", [str(new_db)])
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'ref' AND schema_name = 'main' "
        "AND table_name <> 'signals' ORDER BY table_name").fetchall()]
    out = []
    for t in tables:
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = 'ref' AND table_name = ? "
            "ORDER BY column_index", [t]).fetchall() if r[0] not in RUN_COLUMNS]
        collist = ", ".join(f'"{c}"' for c in cols)  # names come from the catalogue, not from input
        n_ref = con.execute(f'SELECT count(*) FROM ref."{t}"').fetchall()[0][0]
        n_new = con.execute(f'SELECT count(*) FROM new."{t}"').fetchall()[0][0]
        only_ref = con.execute(
            f'SELECT count(*) FROM (SELECT {collist} FROM ref."{t}" EXCEPT ALL SELECT {collist} FROM new."{t}")').fetchall()[0][0]
        only_new = con.execute(
            f'SELECT count(*) FROM (SELECT {collist} FROM new."{t}" EXCEPT ALL SELECT {collist} FROM ref."{t}")').fetchall()[0][0]
        out.append((t, n_ref, n_new, only_ref, only_new))
    con.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--reference", type=Path, required=True, help="the reference checkout (its folder)")
    ap.add_argument("--work", type=Path, help="folder for the two warehouses (default: a temporary one)")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="railbird-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    paths = [str(Path(p).resolve()) for p in args.paths]
    dbs = {}
    for label, checkout in (("ref", args.reference.resolve()), ("new", HERE)):
        db = work / f"{label}.duckdb"
        for stale in (db, Path(str(db) + ".wal")):
            stale.unlink(missing_ok=True)
        t0 = time.perf_counter()
        cpu = ingest_with(checkout, paths, db, args.python)
        print(f"{label}: {checkout}  {time.perf_counter() - t0:.1f} s wall, {cpu:.1f} CPU-s", flush=True)
        dbs[label] = db
    rows = compare(dbs["ref"], dbs["new"])
    same = True
    for t, n_ref, n_new, only_ref, only_new in rows:
        ok = n_ref == n_new and only_ref == 0 and only_new == 0
        same &= ok
        print(f"{'same' if ok else 'DIFF'}  {t:22s} ref {n_ref:9,d}  new {n_new:9,d}  only-ref {only_ref:,d}  only-new {only_new:,d}")
    print("IDENTICAL" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
