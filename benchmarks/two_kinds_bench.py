"""Heads-up flipping and hand chat over world seeds, strengths and sizes (issue 36, "Done when").

Each population is ``railbird generate --preset P --seed W --world-seed W --mix heads_up_flipping=N,hand_chat=N``
with ``P`` ``mixed`` (strengths 0.25-1.0), ``subtle`` (0.05-0.25) or ``honest`` (``N`` 0: the heads-up world and
the table chat with nothing planted), at the presets' size (600 accounts, 60,000 hands) or a multiple of it
(``--sizes 240000``: four times the accounts and the hands, a room four times as large). It is read into its
own warehouse (``pipelines.lib.ingest``, one worker) under ``--work/<P>-<W>-<hands>/`` in the layout of
``benchmarks/kind_bench.py`` (``pop/``, ``home/warehouse.duckdb``); each kind's detector runs on it as the
pipeline calls it and is scored by ``kind_bench.kind_figures`` (``pipelines.lib.evaluation``, the rule of
``../shared/spec/evaluation.md``).

Printed: one line per population and kind (groups found by strength band, flagged, matching, AP, accounts
in flagged cases), then per size and kind, pooled over the seeds: recall in the scorer's strength bands,
precision, mean AP, and the accounts in flagged cases on the honest-only populations; then issue 36's bars
(recall >= 0.9 in every band >= 0.25, precision >= 0.95, no flagged account on honest-only populations)
with PASS or FAIL each.

Seeds. Tuning seeds (looked at while changing the detectors, never reported as results): 11-13, and the
populations of the earlier sections of docs/measurements.md. Held-out seeds: 3001-3010. The script refuses
a tuning seed unless ``--tuning`` is given and says TUNING in its output. ``--build-only`` generates and
reads the populations without running a detector or reading a label (held-out populations can be built
while tuning goes on); ``--score-only`` scores those already built and builds none.

    nice -n 10 python benchmarks/two_kinds_bench.py --work /tmp/flip/ho --seeds 3001 3002 3003
    nice -n 10 python benchmarks/two_kinds_bench.py --work /tmp/flip/ho --seeds 3004 \\
        --sizes 240000 --presets mixed honest
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import duckdb  # noqa: E402

from kind_bench import kind_figures  # noqa: E402

from pipelines.lib import evaluation as ev  # noqa: E402

KINDS = ("heads_up_flipping", "hand_chat")
TUNING = tuple(range(11, 14))
HELD_OUT = tuple(range(3001, 3011))
PRESET_ACCOUNTS, PRESET_HANDS = 600, 60_000
RECALL_BAR, PRECISION_BAR = 0.9, 0.95
#: the scorer's strength bands (``pipelines.lib.evaluation._bucket``) that issue 36's recall bar applies to
BARRED_BANDS = ("[0.25,0.5)", "[0.5,1]")


def build(work: Path, preset: str, seed: int, hands: int, n: int) -> Path:
    """Generate and read one population (module docstring) unless its warehouse exists; returns its folder."""
    from datasets.generate import generate
    from pipelines.lib.ingest import ingest

    d = work / f"{preset}-{seed}-{hands}"
    db = d / "home" / "warehouse.duckdb"
    if db.is_file():
        return d
    t = time.perf_counter()
    mix = {k: (0 if preset == "honest" else n) for k in KINDS}
    generate(d / "pop", preset=preset, seed=seed, world_seed=seed, hands=hands, mix=mix, workers=1, progress=False,
             accounts=PRESET_ACCOUNTS * hands // PRESET_HANDS)
    db.parent.mkdir(parents=True, exist_ok=True)
    tmp = db.with_suffix(".partial")
    tmp.unlink(missing_ok=True)
    ingest([d / "pop"], tmp, growing_seconds=0, progress=False, workers=1)
    tmp.rename(db)  # a killed build leaves no warehouse that looks finished
    print(f"built {d.name} in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return d


def score(d: Path, pooled: dict, kinds: tuple[str, ...]) -> None:
    """Run each kind's detector on ``d``'s warehouse and add its figures to ``pooled`` (kind -> counts)."""
    labels = ev.read_jsonl(d / "pop" / "labels.jsonl", "labels")
    db = d / "home" / "warehouse.duckdb"
    accounts = ev.accounts_in_warehouse(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        for kind in kinds:
            t = time.perf_counter()
            f = kind_figures(con, kind, labels, accounts)
            f["seconds"] = round(time.perf_counter() - t, 1)
            print(d.name, kind, json.dumps(f), flush=True)
            p = pooled.setdefault(kind, {"bands": {}, "flagged": 0, "matching": 0, "ap": [], "honest": [0, 0]})
            if d.name.startswith("honest-"):
                p["honest"][0] += f["flagged_accounts"]
                p["honest"][1] += f["accounts"]
                continue
            p["flagged"] += f["flagged"]
            p["matching"] += f["matching"]
            if f["ap"] is not None:
                p["ap"].append(f["ap"])
            for band, b in f["by_strength"].items():
                c = p["bands"].setdefault(band, [0, 0])
                c[0] += b["found"]
                c[1] += b["groups"]
    finally:
        con.close()


def _ratio(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "-"


def report(hands: int, pooled: dict) -> list[tuple[str, str]]:
    """Print the pooled table of one size; returns its bars as (PASS/FAIL/NO DATA, line)."""
    bands = sorted({b for p in pooled.values() for b in p["bands"]})
    print(f"\n{hands:,} hands: " + " | ".join(["kind", *[f"recall {b}" for b in bands], "precision", "mean AP",
                                                  "honest flagged accounts"]))
    bars = []
    for kind, p in sorted(pooled.items()):
        ap = sum(p["ap"]) / len(p["ap"]) if p["ap"] else None
        print(" | ".join([kind, *[_ratio(*p["bands"].get(b, [0, 0])) for b in bands], _ratio(p["matching"], p["flagged"]),
                          "-" if ap is None else f"{ap:.3f}", _ratio(*p["honest"])]))
        for b in BARRED_BANDS:
            k, n = p["bands"].get(b, [0, 0])
            bars.append(("NO DATA" if not n else "PASS" if k / n >= RECALL_BAR else "FAIL",
                         f"{hands:,} {kind}: recall at strength {b} {_ratio(k, n)} (bar >= {RECALL_BAR})"))
        prec = p["matching"] / p["flagged"] if p["flagged"] else None
        bars.append(("NO DATA" if prec is None else "PASS" if prec >= PRECISION_BAR else "FAIL",
                     f"{hands:,} {kind}: precision {_ratio(p['matching'], p['flagged'])} (bar >= {PRECISION_BAR})"))
        a, seen = p["honest"]
        bars.append(("NO DATA" if not seen else "PASS" if a == 0 else "FAIL",
                     f"{hands:,} {kind}: honest-only flagged accounts {a} of {seen} (bar: none)"))
    return bars


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="folder of the populations (made if absent)")
    ap.add_argument("--seeds", type=int, nargs="+", required=True, help="world seeds (population seed = world seed)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[PRESET_HANDS], help="hands per population")
    ap.add_argument("--presets", nargs="+", default=["mixed", "subtle", "honest"], choices=["mixed", "subtle", "honest"])
    ap.add_argument("--groups", type=int, default=5, help="planted pairs per kind (mixed, subtle)")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    ap.add_argument("--tuning", action="store_true", help="allow tuning seeds (the output says TUNING)")
    ap.add_argument("--build-only", action="store_true", help="generate and read only: no detector, no label read")
    ap.add_argument("--score-only", action="store_true", help="score the populations already built under --work; "
                    "build none (the others are skipped and named)")
    args = ap.parse_args(argv)
    tuning = sorted(set(args.seeds) - set(HELD_OUT))
    if tuning and not args.tuning and not args.build_only:
        ap.error(f"seeds {tuning} are not held-out seeds ({HELD_OUT[0]}-{HELD_OUT[-1]}): give --tuning to look at them")
    print(f"{'TUNING' if tuning else 'held-out'} seeds {args.seeds}, sizes {args.sizes}, presets {args.presets}")
    bars: list[tuple[str, str]] = []
    for hands in args.sizes:
        pooled: dict = {}
        for preset in args.presets:
            for seed in args.seeds:
                d = args.work / f"{preset}-{seed}-{hands}"
                if args.score_only and not (d / "home" / "warehouse.duckdb").is_file():
                    print(f"{d.name}: not built, skipped (--score-only)", flush=True)
                    continue
                d = build(args.work, preset, seed, hands, args.groups)
                if not args.build_only:
                    score(d, pooled, tuple(args.kinds))
        if not args.build_only:
            bars += report(hands, pooled)
    if bars:
        print("\nissue 36's bars")
        print("\n".join(f"{v:<8}{line}" for v, line in bars))
        print(f"\nALL BARS: {'PASS' if all(v == 'PASS' for v, _ in bars) else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
