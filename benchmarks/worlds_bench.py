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
(flagged cases matching a group of any kind, over flagged cases), average
precision per kind (the mean over the populations, each ranking its cases as
the queue does: estimated false-discovery rate first, ties by score, see
``pipelines.lib.evaluation.ranking_key``; and pooled: every population's cases
of the kind in one ranking, which the one scale of the false-discovery rate
allows); and on the honest-only worlds the accounts in flagged cases per 10,000
accounts seen.

Then the bars of issue 32's "Done when", one line each with PASS or FAIL (NO
DATA where no group or case could test it): per world, size and kind, recall
>= 0.9 at strength >= 0.25 and >= 0.7 at 0.1-0.25, precision >= 0.95, mean AP
>= 0.95; per world and size, at most 1 flagged account per 10,000 on the
honest-only worlds; and the conditions of the measure itself: held-out seeds
only, at least five world seeds per world, both the presets' size (60,000
hands) and four times it. The last line is the verdict: PASS only when every
line passes. (That the figures on today's presets do not fall is
``quality_bench.py``'s, on its own seeds.)

Seeds. A seed once looked at is a tuning seed from then on: detector work may
look at it and it is never reported as a result again. Looked at so far
(docs/measurements.md has each measurement): first-world world seeds 1-1063
(population seed = world seed; 1-99 built for tuning, 1001-1063 measured once
and then tuned on), world b seeds 1-2061; the first world's fixed-mechanism
tuning seeds of ``quality_bench.py`` (mixed 101-103, honest 202) stay tuning
seeds. Held-out seeds, the ones the next measurement reports: first-world world
seeds 1064-1068, world b seeds 2062-2066 (honest-only populations use the same
seeds); after it, raise ``TUNING_A`` and ``TUNING_B`` past them. The script refuses a
looked-at seed unless ``--tuning`` is given, and then says so in its output.

    python benchmarks/worlds_bench.py --work /tmp/worlds                     # every held-out seed, both sizes
    python benchmarks/worlds_bench.py --work /tmp/worlds --a-seeds 1 2 3 --b-seeds 1 \\
        --sizes 60000 --tuning                                              # a small run on tuning seeds
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

TUNING_A = range(1, 1064)  # every seed looked at: see "Seeds" above
TUNING_B = range(1, 2062)
HELD_OUT_A = tuple(range(1064, 1069))
HELD_OUT_B = tuple(range(2062, 2067))
BANDS = ((">=0.25", 0.25, 9.0), ("0.1-0.25", 0.1, 0.25), ("<0.1", 0.0, 0.1))
#: issue 32's bars: recall per strength band, precision, mean AP (at least), flagged honest accounts per 10,000 (at most)
RECALL_BARS = {">=0.25": 0.9, "0.1-0.25": 0.7}
PRECISION_BAR = 0.95
AP_BAR = 0.95
HONEST_BAR = 1.0
MIN_SEEDS = 5
PRESET_HANDS = 60_000


def _band(group: dict) -> str | None:
    try:
        s = float(ev.group_strength(group))
    except (TypeError, ValueError):
        return None
    return next((name for name, lo, hi in BANDS if lo <= s < hi), None)


def population(work: Path, world: str, seed: int, hands: int, preset: str, reuse: bool, reuse_runs: bool,
               score_only: bool = False) -> Path | None:
    """Generate and run one population of ``world`` ("a": drawn first world, "b") and ``preset``; returns its
    folder. ``score_only``: never generate nor run (a folder others build or read stays untouched): the folder
    when its run is complete (``out/cases.jsonl`` and the snapshot), else None."""
    gen_args = ("--world-seed", str(seed)) if world == "a" else ("--world", "b")
    if score_only:
        d = work / f"{preset}-{seed}-{world}-{hands}"
        done = (d / "out" / "cases.jsonl").is_file() and (d / "home" / "snapshot" / "warehouse.duckdb").is_file()
        if not done:
            print(f"{d.name}: no finished run, skipped (--score-only)", file=sys.stderr)
        return d if done else None
    return build(work, preset, seed, reuse, reuse_runs, hands=hands, gen_args=gen_args, tag=f"-{world}")


def tally(d: Path, pooled: dict) -> ev.Evaluation:
    """Score one population with collusion and add its counts to ``pooled`` (kind -> counts)."""
    cases = ev.read_jsonl(d / "out" / "cases.jsonl", "cases")
    labels = ev.read_jsonl(d / "pop" / "labels.jsonl", "labels")
    e = ev.evaluate(cases, labels, ev.accounts_in_warehouse(d / "home" / "snapshot" / "warehouse.duckdb"))
    for kind, f in e.kinds.items():
        p = pooled.setdefault(kind, {"bands": {}, "flagged": 0, "right": 0, "ap": [], "ranked": []})
        p["flagged"] += f.flagged
        p["right"] += f.flagged_matching_any
        if f.average_precision is not None:
            p["ap"].append(f.average_precision)
        kg = [g for g in labels if g.get("kind") == kind]
        p["ranked"] += [(ev.ranking_key(c), any(ev.matches(c, g) for g in kg)) for c in cases if c.get("kind") == kind]
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


def mean_ap(p: dict) -> float | None:
    """The mean of the populations' average precisions of one kind (None: no population had a group)."""
    return sum(p["ap"]) / len(p["ap"]) if p["ap"] else None


def pooled_ap(p: dict) -> float | None:
    """Average precision of every population's cases of one kind in one ranking (by ``ev.ranking_key``)."""
    return ev.average_precision([k for k, _ in p["ranked"]], [r for _, r in p["ranked"]]) if p["ranked"] else None


def report(title: str, pooled: dict, honest: tuple[int, int] | None) -> list[str]:
    """The printed table of one world and size."""
    lines = [f"\n{title}", f"{'kind':<20}" + "".join(f"{'recall ' + b:>22}" for b, *_ in BANDS)
             + f"{'precision':>18}{'mean AP':>9}{'pooled AP':>11}"]
    for kind in sorted(pooled):
        p = pooled[kind]
        bands = "".join(f"{_fmt(*p['bands'].get(b, [0, 0])[::-1]):>22}" for b, *_ in BANDS)
        ap, pap = mean_ap(p), pooled_ap(p)
        lines.append(f"{kind:<20}{bands}{_fmt(p['right'], p['flagged']):>18}"
                     f"{'-' if ap is None else f'{ap:.2f}':>9}{'-' if pap is None else f'{pap:.2f}':>11}")
    if honest is not None:
        accused, seen = honest
        rate = f"{1e4 * accused / seen:.1f}" if seen else "-"
        lines.append(f"honest-only: {accused} accounts in flagged cases of {seen} = {rate} per 10,000")
    return lines


def _verdict(value: float | None, bar: float, at_most: bool = False) -> str:
    if value is None:
        return "NO DATA"
    return "PASS" if (value <= bar if at_most else value >= bar) else "FAIL"


def bar_lines(where: str, pooled: dict, honest: tuple[int, int] | None, kinds: list[str]) -> list[tuple[str, str]]:
    """The bars of one world and size: (verdict, the line that says the figure against its bar), one per bar.

    ``kinds``: every kind that must be measured (a kind with no group in a band has NO DATA there)."""
    out = []
    for kind in kinds:
        p = pooled.get(kind, {"bands": {}, "flagged": 0, "right": 0, "ap": [], "ranked": []})
        for band, bar in RECALL_BARS.items():
            n, k = p["bands"].get(band, [0, 0])
            v = _verdict(k / n if n else None, bar)
            out.append((v, f"{where} {kind}: recall at strength {band} {_fmt(k, n)} (bar >= {bar})"))
        prec = p["right"] / p["flagged"] if p["flagged"] else None
        out.append((_verdict(prec, PRECISION_BAR),
                    f"{where} {kind}: precision {_fmt(p['right'], p['flagged'])} (bar >= {PRECISION_BAR})"))
        ap = mean_ap(p)
        out.append((_verdict(ap, AP_BAR), f"{where} {kind}: mean AP {'-' if ap is None else f'{ap:.3f}'} "
                                          f"over {len(p['ap'])} populations (bar >= {AP_BAR})"))
    accused, seen = honest or (0, 0)
    rate = 1e4 * accused / seen if seen else None
    out.append((_verdict(rate, HONEST_BAR, at_most=True),
                f"{where} honest-only: {accused} flagged accounts of {seen} = "
                f"{'-' if rate is None else f'{rate:.2f}'} per 10,000 (bar <= {HONEST_BAR:g})"))
    return out


def conditions(tuning: list[int], a_seeds: list[int], b_seeds: list[int], sizes: list[int]) -> list[tuple[str, str]]:
    """The conditions under which the bars may be read as issue 32's "Done when": (verdict, line) each."""
    return [
        ("FAIL" if tuning else "PASS", f"held-out seeds only (tuning seeds given: {tuning or 'none'})"),
        *[("PASS" if len(set(seeds)) >= MIN_SEEDS else "FAIL",
           f"world {w}: {len(set(seeds))} world seeds (bar >= {MIN_SEEDS})") for w, seeds in (("a", a_seeds), ("b", b_seeds))],
        *[("PASS" if h in sizes else "FAIL", f"size {h:,} hands measured") for h in (PRESET_HANDS, 4 * PRESET_HANDS)],
    ]


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
    ap.add_argument("--reuse-runs", action="store_true", help="also reuse their runs (a population without a "
                    "finished run is run again: never on a folder another process is building)")
    ap.add_argument("--score-only", action="store_true", help="only score the runs already finished in --work; "
                    "never generate nor run (safe on a shared folder); a missing run is skipped and said")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args(argv)
    a_honest = args.a_seeds if args.a_honest is None else args.a_honest
    b_honest = args.b_seeds if args.b_honest is None else args.b_honest
    tuning = sorted(set(args.a_seeds + a_honest) & set(TUNING_A)) + sorted(set(args.b_seeds + b_honest) & set(TUNING_B))
    if tuning and not args.tuning:
        ap.error(f"seeds {tuning} are tuning seeds: never reported as results (give --tuning to look at them)")
    work = Path(args.work)
    out_lines = [f"{'TUNING' if tuning else 'held-out'} seeds: first world {args.a_seeds}, world b {args.b_seeds}; "
                 f"tuning seeds: first world {TUNING_A.start}-{TUNING_A.stop - 1}, world b {TUNING_B.start}-{TUNING_B.stop - 1}"]
    figures = {}
    checks = conditions(tuning, args.a_seeds, args.b_seeds, args.sizes)
    missing: list[str] = []
    for world, seeds, honest_seeds in (("a", args.a_seeds, a_honest), ("b", args.b_seeds, b_honest)):
        for hands in args.sizes:
            if not seeds and not honest_seeds:
                continue
            pooled: dict = {}
            for seed, preset in [(s, p) for p in (args.a_presets if world == "a" else ["mixed"]) for s in seeds]:
                d = population(work, world, seed, hands, preset, args.reuse, args.reuse_runs, args.score_only)
                if d is None:
                    missing.append(f"{preset}-{seed}-{world}-{hands}")
                    continue
                e = tally(d, pooled)
                print(f"world {world} {preset} seed {seed} {hands} hands: " + ", ".join(
                    f"{k} {f.groups_found}/{f.groups}" for k, f in e.kinds.items()), file=sys.stderr)
            accused = seen = 0
            for seed in honest_seeds:
                d = population(work, world, seed, hands, "honest", args.reuse, args.reuse_runs, args.score_only)
                if d is None:
                    missing.append(f"honest-{seed}-{world}-{hands}")
                    continue
                a, s = flagged_accounts(d)
                accused, seen = accused + a, seen + s
            presets = args.a_presets if world == "a" else ["mixed"]
            title = (f"world {world}, {hands:,} hands, {'+'.join(presets)} seeds {seeds}, "
                     f"honest-only seeds {honest_seeds}")
            out_lines += report(title, pooled, (accused, seen) if honest_seeds else None)
            # the kinds the world plants (a kind with no labelled group cannot be measured there: it is named)
            planted = sorted(k for k, p in pooled.items() if any(n for n, _ in p["bands"].values()))
            unplanted = [k for k in ev.KINDS if k not in planted]
            if unplanted:
                out_lines.append(f"(world {world} plants no group of {', '.join(unplanted)}: not measured here)")
            checks += bar_lines(f"world {world} {hands:,}:", pooled, (accused, seen) if honest_seeds else None, planted)
            figures[f"{world}-{hands}"] = {"pooled": {k: {**v, "ranked": None, "mean_ap": mean_ap(v),
                                                          "pooled_ap": pooled_ap(v)} for k, v in pooled.items()},
                                           "honest": [accused, seen]}
    checks.insert(0, ("FAIL" if missing else "PASS", f"every population measured (not run: {', '.join(missing) or 'none'})"))
    out_lines.append("\nThe bars of issue 32 (Done when)")
    out_lines += [f"{v:<8}{line}" for v, line in checks]
    passed = all(v == "PASS" for v, _ in checks)
    out_lines.append(f"\nDONE WHEN: {'PASS' if passed else 'FAIL'} ({sum(v == 'PASS' for v, _ in checks)} of "
                     f"{len(checks)} lines pass)")
    print("\n".join(out_lines))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
