"""Held-out worlds: detection quality on worlds the detectors were never tuned on (issue 32, "Done when").

For each world: the first world with its mechanisms drawn per world seed
(``railbird generate --world-seed K``, ranges in datasets/README.md) and the
second world written apart (``railbird generate --world b``); at each size
(the presets' 60,000 hands and four times that), populations with collusion
(first world: presets ``mixed``, strengths 0.25-1, and ``subtle``, 0.05-0.25;
world b: its own strengths 0.05-1) and an honest-only one (preset ``honest``:
the same world's confounders, nothing planted). Each runs through the nightly job (``railbird
run``, see ``quality_bench.build``) and is scored by the evaluation of
``../shared/spec/evaluation.md`` (``pipelines.lib.evaluation``). Printed per
world and size, pooled over its seeds, per kind: recall of the groups of
strength >= 0.25, of 0.1-0.25 (and below 0.1 when there are such), precision
(flagged cases matching a group of any kind, over flagged cases), mean average
precision over the populations; and on the honest-only worlds the accounts in
flagged cases per 10,000 accounts seen. The bars (issue 32): recall >= 0.9 at
>= 0.25 and >= 0.7 at 0.1-0.25, precision >= 0.95, AP >= 0.95, at most 1
flagged account per 10,000 honest ones.

Seeds. Tuning seeds, which detector work may look at and which are never
reported as results: first-world world seeds 1-5 (population seed = world
seed), world b seeds 1-5; the first world's fixed-mechanism tuning seeds of
``quality_bench.py`` (mixed 101-103, honest 202) stay tuning seeds. Held-out
seeds, the ones reported: first-world world seeds 1001-1005, world b seeds
2001-2005 (honest-only populations use the same seeds). The script refuses
a tuning seed unless ``--tuning`` is given, and then says so in its output.

    python benchmarks/worlds_bench.py --work /tmp/worlds                     # every held-out seed, both sizes
    python benchmarks/worlds_bench.py --work /tmp/worlds --a-seeds 1001 1002 1003 --b-seeds 2001 \\
        --sizes 60000 --honest-seeds 1001                                   # a small baseline
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from quality_bench import build  # noqa: E402

from pipelines.lib import evaluation as ev  # noqa: E402

TUNING_A = tuple(range(1, 6))
TUNING_B = tuple(range(1, 6))
HELD_OUT_A = tuple(range(1001, 1006))
HELD_OUT_B = tuple(range(2001, 2006))
BANDS = ((">=0.25", 0.25, 9.0), ("0.1-0.25", 0.1, 0.25), ("<0.1", 0.0, 0.1))


def _band(group: dict) -> str | None:
    try:
        s = float(ev.group_strength(group))
    except (TypeError, ValueError):
        return None
    return next((name for name, lo, hi in BANDS if lo <= s < hi), None)


def population(work: Path, world: str, seed: int, hands: int, preset: str, reuse: bool, reuse_runs: bool) -> Path:
    """Generate and run one population of ``world`` ("a": drawn first world, "b") and ``preset``; returns its
    folder."""
    gen_args = ("--world-seed", str(seed)) if world == "a" else ("--world", "b")
    return build(work, preset, seed, reuse, reuse_runs, hands=hands, gen_args=gen_args, tag=f"-{world}")


def tally(d: Path, pooled: dict) -> ev.Evaluation:
    """Score one population with collusion and add its counts to ``pooled`` (kind -> counts)."""
    cases = ev.read_jsonl(d / "out" / "cases.jsonl", "cases")
    labels = ev.read_jsonl(d / "pop" / "labels.jsonl", "labels")
    e = ev.evaluate(cases, labels, ev.accounts_in_warehouse(d / "home" / "snapshot" / "warehouse.duckdb"))
    for kind, f in e.kinds.items():
        p = pooled.setdefault(kind, {"bands": {}, "flagged": 0, "right": 0, "ap": []})
        p["flagged"] += f.flagged
        p["right"] += f.flagged_matching_any
        if f.average_precision is not None:
            p["ap"].append(f.average_precision)
        flagged = [c for c in cases if c.get("kind") == kind and c.get("flagged")]
        for g in labels:
            band = _band(g)
            if g.get("kind") == kind and band is not None:
                b = p["bands"].setdefault(band, [0, 0])
                b[0] += 1
                b[1] += any(ev.matches(c, g) for c in flagged)
    return e


def flagged_accounts(d: Path) -> tuple[int, int]:
    """(accounts in flagged cases, accounts seen) of an honest-only population."""
    cases = ev.read_jsonl(d / "out" / "cases.jsonl", "cases")
    accused = {a for c in cases if c.get("flagged") for a in c.get("accounts") or []}
    return len(accused), ev.accounts_in_warehouse(d / "home" / "snapshot" / "warehouse.duckdb")


def _fmt(k: int, n: int) -> str:
    return f"{k}/{n} = {k / n:.2f}" if n else "-"


def report(title: str, pooled: dict, honest: tuple[int, int] | None) -> list[str]:
    """The printed table of one world and size."""
    lines = [f"\n{title}", f"{'kind':<20}" + "".join(f"{'recall ' + b:>22}" for b, *_ in BANDS)
             + f"{'precision':>18}{'mean AP':>9}"]
    for kind in sorted(pooled):
        p = pooled[kind]
        bands = "".join(f"{_fmt(*p['bands'].get(b, [0, 0])[::-1]):>22}" for b, *_ in BANDS)
        ap = f"{sum(p['ap']) / len(p['ap']):.2f}" if p["ap"] else "-"
        lines.append(f"{kind:<20}{bands}{_fmt(p['right'], p['flagged']):>18}{ap:>9}")
    if honest is not None:
        accused, seen = honest
        rate = f"{1e4 * accused / seen:.1f}" if seen else "-"
        lines.append(f"honest-only: {accused} accounts in flagged cases of {seen} = {rate} per 10,000")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True, help="folder for the populations and runs")
    ap.add_argument("--a-seeds", type=int, nargs="*", default=list(HELD_OUT_A), help="first-world world seeds")
    ap.add_argument("--b-seeds", type=int, nargs="*", default=list(HELD_OUT_B), help="world b seeds")
    ap.add_argument("--a-honest", type=int, nargs="*", default=None,
                    help="first-world seeds of the honest-only populations (default: --a-seeds)")
    ap.add_argument("--b-honest", type=int, nargs="*", default=None,
                    help="world b seeds of the honest-only populations (default: --b-seeds)")
    ap.add_argument("--a-presets", nargs="+", default=["mixed", "subtle"],
                    help="first-world presets with collusion (mixed: strengths 0.25-1; subtle: 0.05-0.25)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[60_000, 240_000], help="hands per population")
    ap.add_argument("--tuning", action="store_true", help="allow tuning seeds (the output says TUNING)")
    ap.add_argument("--reuse", action="store_true", help="reuse populations already generated in --work")
    ap.add_argument("--reuse-runs", action="store_true", help="also reuse their runs (scoring only)")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args(argv)
    a_honest = args.a_seeds if args.a_honest is None else args.a_honest
    b_honest = args.b_seeds if args.b_honest is None else args.b_honest
    tuning = sorted(set(args.a_seeds + a_honest) & set(TUNING_A)) + sorted(set(args.b_seeds + b_honest) & set(TUNING_B))
    if tuning and not args.tuning:
        ap.error(f"seeds {tuning} are tuning seeds: never reported as results (give --tuning to look at them)")
    work = Path(args.work)
    out_lines = [f"{'TUNING' if tuning else 'held-out'} seeds: first world {args.a_seeds}, world b {args.b_seeds}; "
                 f"tuning seeds: first world {list(TUNING_A)}, world b {list(TUNING_B)}"]
    figures = {}
    for world, seeds, honest_seeds in (("a", args.a_seeds, a_honest), ("b", args.b_seeds, b_honest)):
        for hands in args.sizes:
            if not seeds and not honest_seeds:
                continue
            pooled: dict = {}
            for seed, preset in [(s, p) for p in (args.a_presets if world == "a" else ["mixed"]) for s in seeds]:
                e = tally(population(work, world, seed, hands, preset, args.reuse, args.reuse_runs), pooled)
                print(f"world {world} {preset} seed {seed} {hands} hands: " + ", ".join(
                    f"{k} {f.groups_found}/{f.groups}" for k, f in e.kinds.items()), file=sys.stderr)
            accused = seen = 0
            for seed in honest_seeds:
                a, s = flagged_accounts(population(work, world, seed, hands, "honest", args.reuse, args.reuse_runs))
                accused, seen = accused + a, seen + s
            presets = args.a_presets if world == "a" else ["mixed"]
            title = (f"world {world}, {hands:,} hands, {'+'.join(presets)} seeds {seeds}, "
                     f"honest-only seeds {honest_seeds}")
            out_lines += report(title, pooled, (accused, seen) if honest_seeds else None)
            figures[f"{world}-{hands}"] = {"pooled": pooled, "honest": [accused, seen]}
    print("\n".join(out_lines))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
