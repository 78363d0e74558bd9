"""Detection quality over several held-out populations, pooled per kind.

One population has five groups per kind: too few for a recall figure to mean
much. This script builds several populations (``railbird generate``, then the
nightly job ``railbird run`` with its own RAILBIRD_HOME), scores each run's
``cases.jsonl`` with the evaluation of ``../shared/spec/evaluation.md``
(``pipelines.lib.evaluation``) and pools the counts per kind: groups found,
flagged cases, false flags, recall by strength, and the mean over the
populations of each kind's average precision (its cases ranked as the queue
ranks them: estimated false-discovery rate first, ties by score;
``pipelines.lib.evaluation.ranking_key``). It also splits recall by
whether a group acted at all (labels list the hands where its behaviour
actually happened; a group whose coin never fell has none), and prints how
recall falls with each strength the labels name (the bands of the scorer
pool several strengths together) and with the number of hands in which the
labels say the group's behaviour happened (a pair that soft-played in one
hand left one hand of evidence, whatever its strength).

    python benchmarks/quality_bench.py --work /tmp/quality --seeds 505 606 1111 --honest 303 404

Seeds used to tune the detectors (mixed 101-103, honest 202) must not be
reported as results. ``--reuse`` keeps populations already generated in
``--work`` (same preset and seed) and runs the pipeline on them again;
``--reuse-runs`` keeps their runs too (scoring only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.lib import evaluation as ev  # noqa: E402

RAILBIRD = [sys.executable, "-m", "pipelines.cli"]


def build(work: Path, preset: str, seed: int, reuse: bool, reuse_runs: bool, hands_only: bool = False,
          hands: int | None = None, gen_args: tuple[str, ...] = (), tag: str = "") -> Path:
    """Generate and run one population; returns its folder (pop/, home/, out/).

    ``hands``: the population's size in hands instead of its preset's (the same accounts playing more;
    ``<preset>-<seed>-<hands>/``). ``gen_args``: more ``railbird generate`` arguments (``--world-seed K``,
    ``--world b``), with ``tag`` naming them in the folder (``<preset>-<seed><tag>...``).

    ``hands_only``: the run reads a copy of the population without its platform events (hand histories,
    accounts and labels only), in ``<preset>-<seed>-hands-only/``: what the detectors do with the hands alone."""
    d = work / (f"{preset}-{seed}{tag}" if hands is None else f"{preset}-{seed}{tag}-{hands}")
    d.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    if not (reuse and (d / "pop" / "labels.jsonl").is_file()):
        size = [] if hands is None else ["--hands", str(hands)]
        subprocess.run([*RAILBIRD, "generate", "--out", str(d / "pop"), "--preset", preset, "--seed", str(seed),
                        "--no-progress", *size, *gen_args], check=True, cwd=ROOT, env={**os.environ, "RAILBIRD_HOME": str(d / "home")},
                       stdout=subprocess.DEVNULL)
    if hands_only:
        full, d = d, d.with_name(d.name + "-hands-only")
        shutil.rmtree(d / "pop", ignore_errors=True)
        (d / "pop").mkdir(parents=True)
        shutil.copytree(full / "pop" / "hands", d / "pop" / "hands")
        for name in ("accounts.csv", "labels.jsonl"):
            shutil.copy2(full / "pop" / name, d / "pop" / name)
    env = {**os.environ, "RAILBIRD_HOME": str(d / "home")}
    if not (reuse_runs and (d / "out" / "cases.jsonl").is_file()):
        shutil.rmtree(d / "home", ignore_errors=True)  # a fresh warehouse: the run ingests everything again
        shutil.rmtree(d / "out", ignore_errors=True)
        subprocess.run([*RAILBIRD, "run", str(d / "pop"), "--out", str(d / "out"), "--top", "0"], check=True,
                       cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    print(f"{d.name} ready in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return d


def score(d: Path) -> tuple[ev.Evaluation, list[dict], list[dict]]:
    cases = ev.read_jsonl(d / "out" / "cases.jsonl", "cases")
    labels = ev.read_jsonl(d / "pop" / "labels.jsonl", "labels")
    seen = ev.accounts_in_warehouse(d / "home" / "snapshot" / "warehouse.duckdb")
    return ev.evaluate(cases, labels, seen), cases, labels


def label_strength(group: dict) -> float | None:
    """The group's strength as the scorer reads it (``ev.group_strength``), rounded to 3 digits for the table."""
    try:
        return round(float(ev.group_strength(group)), 3)
    except (TypeError, ValueError):
        return None


HAND_BANDS = ((0, 0), (1, 4), (5, 19), (20, None))  # hands the labels list for a group
HAND_BAND_NAMES = [f"{lo}" if hi == lo else f"{lo}+" if hi is None else f"{lo}-{hi}" for lo, hi in HAND_BANDS]


def hands_band(group: dict) -> str:
    """The name of the HAND_BANDS band the number of the group's labelled hands falls in."""
    n = len(group.get("hands") or [])
    return next(name for (lo, hi), name in zip(HAND_BANDS, HAND_BAND_NAMES) if n >= lo and (hi is None or n <= hi))


def acted(group: dict) -> bool:
    return bool(group.get("hands")) or (group.get("kind") == "multi_accounting" and bool(group.get("tournaments")))


def _pool(pooled: dict[str, dict], e, cases: list[dict], labels: list[dict]) -> None:
    """Add one population's figures per kind (``e`` from :func:`score`) to ``pooled``."""
    for kind in ev.KINDS:
        p = pooled.setdefault(kind, {"groups": 0, "found": 0, "flagged": 0, "false": 0, "matching_any": 0,
                                     "acted": 0, "acted_found": 0, "ap": [], "by_strength": {},
                                     "innocent": 0, "largest": 0, "by_level": {},
                                     "by_hands": {}})
        f = e.kinds.get(kind)
        if f is None:
            continue
        p["groups"] += f.groups
        p["found"] += f.groups_found
        p["flagged"] += f.flagged
        p["false"] += f.false_flags
        p["matching_any"] += f.flagged_matching_any
        if f.average_precision is not None:
            p["ap"].append(f.average_precision)
        for b, r in f.recall_by_strength.items():
            s = p["by_strength"].setdefault(b, [0, 0])
            s[0] += r["groups"]
            s[1] += r["found"]
        flagged = [c for c in cases if c.get("kind") == kind and c.get("flagged")]
        # the scorer counts a case as right when it holds two of a group's accounts, however many
        # others it accuses: count the accused accounts that belong to no group at all
        planted = {a for g in labels for a in g.get("accounts", [])}
        p["innocent"] += len({a for c in flagged for a in c["accounts"] if a not in planted})
        p["largest"] = max([p["largest"]] + [len(c["accounts"]) for c in flagged])
        for g in labels:
            if g.get("kind") != kind:
                continue
            found = any(ev.matches(c, g) for c in flagged)
            level = p["by_level"].setdefault(label_strength(g), [0, 0])
            level[0] += 1
            level[1] += found
            band = p["by_hands"].setdefault(hands_band(g), [0, 0])
            band[0] += 1
            band[1] += found
            if acted(g):
                p["acted"] += 1
                p["acted_found"] += found


def _print_pooled(pooled: dict[str, dict], markdown: bool) -> None:
    """Print the pooled table per kind, then recall by the labels' strength and by the hands the groups acted in."""
    if markdown:
        print("\n| kind | recall | recall, groups that acted | precision | mean AP | recall by strength | accounts accused outside any group |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
    else:
        print(f"\n{'kind':<20}{'recall':>12}{'acted':>12}{'precision':>12}{'mean AP':>9}{'outside':>8}  recall by strength")
    for kind, p in pooled.items():
        if not p["groups"]:
            continue
        prec = f"{p['matching_any']}/{p['flagged']}" if p["flagged"] else "-"
        ap_ = f"{sum(p['ap']) / len(p['ap']):.2f}" if p["ap"] else "-"
        strength = "; ".join(f"{b}: {k}/{n}" for b, (n, k) in sorted(p["by_strength"].items()))
        if markdown:
            print(f"| {kind} | {p['found']}/{p['groups']} | {p['acted_found']}/{p['acted']} | {prec} | {ap_} | {strength} "
                  f"| {p['innocent']} (largest case {p['largest']}) |")
        else:
            print(f"{kind:<20}{p['found']:>5}/{p['groups']:<6}{p['acted_found']:>5}/{p['acted']:<6}{prec:>12}{ap_:>9}"
                  f"{p['innocent']:>8}  {strength}")
    levels = sorted({lv for p in pooled.values() for lv in p["by_level"] if lv is not None}, reverse=True)
    for title, key, cols in (("the strength the labels name", "by_level", levels),
                             ("the hands in which the labels say the group acted", "by_hands", HAND_BAND_NAMES)):
        if not cols:
            continue
        head = ["kind", *(f"{c:g}" if isinstance(c, float) else c for c in cols)]
        rows = [[kind, *(f"{p[key][c][1]}/{p[key][c][0]}" if c in p[key] else "-" for c in cols)]
                for kind, p in pooled.items() if p["groups"]]
        print(f"\nrecall by {title} (groups found / groups):")
        if markdown:
            print("\n| " + " | ".join(head) + " |\n|" + " --- |" * len(head))
            for r in rows:
                print("| " + " | ".join(r) + " |")
        else:
            for r in [head, *rows]:
                print(f"{r[0]:<20}" + "".join(f"{x:>9}" for x in r[1:]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True, help="folder for the populations and runs")
    ap.add_argument("--preset", default="mixed", help="preset of the populations with collusion (default mixed)")
    ap.add_argument("--seeds", type=int, nargs="+", required=True,
                    help="seeds of the populations with collusion (never seeds the detectors were tuned on)")
    ap.add_argument("--honest", type=int, nargs="*", default=[], help="seeds of honest-only populations (default: none)")
    ap.add_argument("--reuse", action="store_true", help="reuse populations already generated in --work")
    ap.add_argument("--reuse-runs", action="store_true", help="also reuse their runs (cases.jsonl) instead of running again")
    ap.add_argument("--hands", type=int, default=None,
                    help="hands per population instead of the presets' (the same accounts playing more)")
    ap.add_argument("--hands-only", action="store_true",
                    help="run each population without its platform events (hand histories and accounts only)")
    ap.add_argument("--json", action="store_true", help="print the pooled figures as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the pooled table as Markdown (for the README)")
    args = ap.parse_args(argv)
    work = Path(args.work)
    pooled: dict[str, dict] = {}
    for seed in args.seeds:
        d = build(work, args.preset, seed, args.reuse, args.reuse_runs, args.hands_only, args.hands)
        e, cases, labels = score(d)
        _pool(pooled, e, cases, labels)
        print(f"{args.preset} seed {seed}: accounts {e.accounts_seen}, recall " + ", ".join(
            f"{k} {f.groups_found}/{f.groups}" for k, f in e.kinds.items()) + f", false flags {e.false_flags}")
    honest_accounts = honest_false = 0
    for seed in args.honest:
        d = build(work, "honest", seed, args.reuse, args.reuse_runs, args.hands_only, args.hands)
        e, _, _ = score(d)
        honest_accounts += e.accounts_seen
        honest_false += e.false_flags
        print(f"honest seed {seed}: accounts {e.accounts_seen}, flagged cases {e.false_flags}")
    if args.json:
        print(json.dumps({"pooled": pooled, "honest_accounts": honest_accounts, "honest_flags": honest_false}))
        return 0
    _print_pooled(pooled, args.markdown)
    if args.honest:
        rate = 1e4 * honest_false / honest_accounts if honest_accounts else float("nan")
        print(f"honest-only: {honest_false} flagged cases over {honest_accounts} accounts = {rate:.2f} per 10,000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
