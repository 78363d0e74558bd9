"""Same warehouse, two checkouts of railbird: do their detectors say the same?

The correctness gate for changes to the detect stage (detectors, features,
statistics) that must not change behaviour: build one warehouse (generate a
seeded population with ``--preset``, or read real files with ``--input``, and
ingest it once with the head checkout), then run every detector of
``detectors.kinds.ALL`` over it with each checkout, each in its own process
(``python -c`` with ``PYTHONPATH`` set to the checkout, run from its folder,
so that checkout's code is imported; the warehouse opened read-only), and
compare the signals field by field: kind, accounts, tournaments, score,
p_value, flagged, hands, summary, benign, missing, detector, the evidence rows
(every field) and ``extra``, and the order of the signals.  Exit status 0
only when every kind is identical.

Everything but floats must be equal (texts, counts, flags, accounts, hands,
the order of lists).  Floats are equal within ``--rel-tol`` relative,
default 1e-12 (NaN equals NaN); ``--rel-tol 0`` asks for the same bits.  Why
a tolerance: the same code run twice does not add its floating-point sums in
the same order (see below), and a change that reorders a sum (a split of one
aggregation in two) changes the last bits, not the method.  Signals are
matched by (accounts, tournaments); their order must agree except between
signals of equal score.

The detectors are not reproducible bit for bit across processes as they stand
(docs/measurements.md, 2026-12-06): DuckDB's threads, Polars' threads and
Polars' hash group-by (its hasher is seeded per process, so groups, unique
rows and joins come out in a different order each run) reorder sums and
lists.  The detector processes of the gate therefore run with one DuckDB
thread, ``POLARS_MAX_THREADS=1``, ``PYTHONHASHSEED=0`` and Polars' group-by,
unique and join keeping their input order (set in the runner, not in the
shipped code).  What is left is a difference in the last bit of some soft
play p-values, within the default tolerance.  Run the gate head against head
first to see that floor on a new input.

    .venv/bin/python tests/detect/compare_signals.py --base /work/main --head . --preset mixed --hands 20000 --seed 7
    .venv/bin/python tests/detect/compare_signals.py --base /work/main --head . --input /work/shared/corpora
    .venv/bin/python tests/detect/compare_signals.py --base /work/main --head . --added q_value ...

``--added FIELD`` names a field of the signal the head adds (a new column of the contract): where the base
lacks it, it is no difference; every other field must still be identical, and the number of the head's
signals that carry a value in it is printed.

Prints per kind the signals and flagged signals of each checkout and the
number of differences, then the first differences in full.  ``--work`` keeps
the population, the warehouse and both checkouts' signals (JSON) there;
``--warehouse`` compares on an existing warehouse instead of building one;
``--parallel`` runs the two checkouts' detector processes at once.

Not collected by pytest as a test (not named ``test_*``); ``test_compare_signals.py``
runs it head against head on a small population.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]

#: run in each checkout's own process: every detector of that checkout over the warehouse, signals as JSON
RUNNER = r"""
import json, sys, time
import duckdb
import polars as pl
from detectors import get_detector
from detectors.kinds import KINDS

def plain(x):
    if hasattr(x, "item") and getattr(x, "ndim", 0) == 0:
        return x.item()
    if hasattr(x, "tolist"):
        return x.tolist()
    if hasattr(x, "isoformat"):
        return x.isoformat()
    return str(x)

def ordered(method, name, value):
    def wrapper(*args, **kw):
        if kw.get(name) is None:
            kw[name] = value
        return method(*args, **kw)
    return wrapper

# groups, unique rows and joins in the order of their input, not of a per-process hash seed
for cls in (pl.DataFrame, pl.LazyFrame):
    cls.group_by = ordered(cls.group_by, "maintain_order", True)
    cls.unique = ordered(cls.unique, "maintain_order", True)
    cls.join = ordered(cls.join, "maintain_order", "left_right")
for cls in (pl.Expr, pl.Series):
    cls.unique = ordered(cls.unique, "maintain_order", True)

db, out, only = sys.argv[1], sys.argv[2], [k for k in sys.argv[3].split(",") if k]
con = duckdb.connect(db, read_only=True)
con.execute("SET enable_progress_bar = false")
con.execute("SET threads = 1")
with open(out, "w", encoding="utf-8") as fh:
    for kind in KINDS:
        if only and kind not in only:
            continue
        t = time.perf_counter()
        signals = get_detector(kind).detect(con)
        rec = {"kind": kind, "seconds": time.perf_counter() - t, "signals": [s.to_dict() for s in signals]}
        fh.write(json.dumps(rec, default=plain, ensure_ascii=False) + "\n")
con.close()
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run ``cmd`` in ``cwd``; a failure stops the comparison with the command's own output shown."""
    subprocess.run(cmd, cwd=cwd, env=env, check=True)


def checkout_env(checkout: Path) -> dict[str, str]:
    """The environment that makes ``checkout``'s packages the ones imported (no bytecode written into it: the
    base is often someone else's checkout), with the orders pinned (see the module docstring)."""
    return dict(os.environ, PYTHONPATH=str(checkout), POLARS_MAX_THREADS="1", PYTHONHASHSEED="0",
                PYTHONDONTWRITEBYTECODE="1")


def build_warehouse(args: argparse.Namespace, work: Path, head: Path) -> Path:
    """Generate (``--preset``) or take (``--input``) the files and ingest them with ``head``; the warehouse path."""
    db = work / "warehouse.duckdb"
    for stale in (db, Path(str(db) + ".wal")):
        stale.unlink(missing_ok=True)
    env = checkout_env(head)
    if args.input:
        paths = [str(Path(p).resolve()) for p in args.input]
    else:
        pop = work / "population"
        gen = [args.python, "-m", "pipelines.cli", "generate", "--out", str(pop), "--preset", args.preset,
               "--seed", str(args.seed), "--no-progress"]
        if args.hands:
            gen += ["--hands", str(args.hands)]
        if args.accounts:
            gen += ["--accounts", str(args.accounts)]
        run(gen, head, env)
        paths = [str(pop)]
    run([args.python, "-m", "pipelines.cli", "ingest", *paths, "--warehouse", str(db), "--no-snapshot",
         "--no-progress", "--growing-seconds", "0"], head, env)
    return db


def signals_of(checkout: Path, db: Path, out: Path, kinds: list[str], python: str) -> dict[str, dict[str, Any]]:
    """Run ``checkout``'s detectors over ``db`` in a process of their own; kind -> {seconds, signals}."""
    run([python, "-c", RUNNER, str(db), str(out), ",".join(kinds)], checkout, checkout_env(checkout))
    with open(out, encoding="utf-8") as fh:
        return {r["kind"]: r for r in map(json.loads, fh)}


def same_value(a: Any, b: Any, rel_tol: float) -> bool:
    """Equal as values: numbers as floats (exactly, or within ``rel_tol`` relative; NaN equals NaN;
    a bool is not a number), containers element by element, anything else by ``==``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return fa == fb or (rel_tol > 0 and math.isclose(fa, fb, rel_tol=rel_tol, abs_tol=0.0))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], rel_tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y, rel_tol) for x, y in zip(a, b))
    return a == b


def first_difference(a: Any, b: Any, rel_tol: float, path: str = "") -> str:
    """Where ``a`` and ``b`` first differ (``same_value``'s rules), as ``path: base ... head ...``."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return next((first_difference(a[k], b[k], rel_tol, f"{path}.{k}") for k in a
                     if not same_value(a[k], b[k], rel_tol)), "")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((first_difference(x, y, rel_tol, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b))
                     if not same_value(x, y, rel_tol)), "")
    return f"{path}: base {a!r:.300} head {b!r:.300}"


def _keyed(signals: list[dict]) -> dict[tuple, dict]:
    """Signals by (accounts, tournaments, occurrence): the candidate each one is about."""
    seen: dict[tuple, int] = {}
    out = {}
    for s in signals:
        k = (tuple(s.get("accounts") or ()), tuple(s.get("tournaments") or ()))
        seen[k] = seen.get(k, 0) + 1
        out[k + (seen[k],)] = s
    return out


def differences(base: list[dict], head: list[dict], rel_tol: float, added: tuple[str, ...] = ()) -> list[str]:
    """What differs between two checkouts' signals of one kind: one line per signal only one has, per field
    that differs in a signal both have (matched by accounts and tournaments), and per place where the
    order differs between signals whose scores are not equal (within ``rel_tol``). A field of ``added``
    that only the head has is no difference."""
    out = []
    kb, kh = _keyed(base), _keyed(head)
    for k in kb.keys() - kh.keys():
        out.append(f"{list(k[0])} {list(k[1])}: only in base")
    for k in kh.keys() - kb.keys():
        out.append(f"{list(k[0])} {list(k[1])}: only in head")
    for k in kb.keys() & kh.keys():
        b, h = kb[k], kh[k]
        for field in sorted(set(b) | set(h)):
            if field in added and field in h and field not in b:
                continue
            if field not in b or field not in h:
                out.append(f"{list(k[0])} {field}: only in {'head' if field in h else 'base'}")
            elif not same_value(b[field], h[field], rel_tol):
                out.append(f"{list(k[0])} {first_difference(b[field], h[field], rel_tol, field)}")
    if not out:
        for i, (b, h) in enumerate(zip(base, head)):
            if (b["accounts"], b["tournaments"]) != (h["accounts"], h["tournaments"]) \
                    and not same_value(b["score"], h["score"], rel_tol):
                out.append(f"order #{i}: base {b['accounts']} head {h['accounts']}")
    return sorted(out)


def compare(base: dict[str, dict], head: dict[str, dict], rel_tol: float,
            added: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """kind -> its differences, for every kind either checkout knows (``added``: see :func:`differences`)."""
    return {kind: (differences(base[kind]["signals"], head[kind]["signals"], rel_tol, added)
                   if kind in base and kind in head else [f"kind only in {'head' if kind in head else 'base'}"])
            for kind in sorted(set(base) | set(head))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the reference checkout (its folder)")
    ap.add_argument("--head", type=Path, default=HERE, help="the checkout under test (default: this one)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--input", nargs="+", help="hand-history files or folders to ingest (e.g. the real corpus)")
    src.add_argument("--warehouse", type=Path, help="an existing warehouse to compare on (opened read-only)")
    ap.add_argument("--preset", default="mixed", help="population preset when generating (default: mixed)")
    ap.add_argument("--hands", type=int, default=20000, help="hands to generate (default: 20000)")
    ap.add_argument("--accounts", type=int, default=None, help="accounts to generate (default: the preset's)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--kinds", default="", help="comma-separated kinds to compare (default: every kind)")
    ap.add_argument("--rel-tol", type=float, default=1e-12, help="relative tolerance for floats (default: 1e-12; 0: exact)")
    ap.add_argument("--parallel", action="store_true", help="run the two checkouts' detectors at once (2 cores)")
    ap.add_argument("--work", type=Path, help="folder for the population, warehouse and signals (default: temporary)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--added", nargs="*", default=[], metavar="FIELD",
                    help="signal fields the head adds: not a difference where the base lacks them")
    args = ap.parse_args(argv)
    work = (args.work or Path(tempfile.mkdtemp(prefix="railbird-signals-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    base_dir, head_dir = args.base.resolve(), args.head.resolve()
    kinds = [k for k in args.kinds.split(",") if k]
    t = time.perf_counter()
    db = args.warehouse.resolve() if args.warehouse else build_warehouse(args, work, head_dir)
    print(f"warehouse: {db} ({time.perf_counter() - t:.1f} s)", flush=True)
    runs = {}
    sides = (("base", base_dir), ("head", head_dir))
    if args.parallel:  # both checkouts at once (the warehouse is opened read-only by both)
        t = time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            futures = {label: pool.submit(signals_of, checkout, db, work / f"signals-{label}.jsonl", kinds, args.python)
                       for label, checkout in sides}
            runs = {label: f.result() for label, f in futures.items()}
        print(f"base and head at once: {time.perf_counter() - t:.1f} s", flush=True)
    else:
        for label, checkout in sides:
            t = time.perf_counter()
            runs[label] = signals_of(checkout, db, work / f"signals-{label}.jsonl", kinds, args.python)
            print(f"{label}: {checkout}  {time.perf_counter() - t:.1f} s", flush=True)
    added = tuple(args.added)
    diffs = compare(runs["base"], runs["head"], args.rel_tol, added)
    for kind, d in diffs.items():
        b, h = runs["base"].get(kind, {}).get("signals", []), runs["head"].get(kind, {}).get("signals", [])
        print(f"{'same' if not d else 'DIFF'}  {kind:19s} signals {len(b):5d}/{len(h):5d}  "
              f"flagged {sum(s['flagged'] for s in b):4d}/{sum(s['flagged'] for s in h):4d}  differences {len(d)}"
              + "".join(f"  {f} set on {sum(s.get(f) is not None for s in h)}" for f in added))
    for kind, d in diffs.items():
        for line in d[:10]:
            print(f"  {kind}: {line}")
    same = not any(diffs.values())
    print(("IDENTICAL" + (f" (floats within {args.rel_tol:g} relative)" if args.rel_tol else " (floats exact)"))
          if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
