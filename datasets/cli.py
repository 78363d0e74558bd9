"""``railbird generate``: write a synthetic population with planted collusion and its labels.

Deterministic for a seed: the same arguments write byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    from datasets.presets import PRESETS

    parser.add_argument("--out", required=True, type=Path, help="output folder (hands/, events/, accounts.csv, labels.jsonl)")
    parser.add_argument("--preset", default="demo", choices=sorted(PRESETS), help="population size and collusion mix (default: demo)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default: 7)")
    parser.add_argument("--accounts", type=int, default=None, help="number of accounts (default: the preset's)")
    parser.add_argument("--hands", type=int, default=None, help="approximate number of hands (default: the preset's)")
    parser.add_argument("--mix", default=None,
                        help="collusion groups per kind, e.g. soft_play=4,chip_dumping=3 ('none' for an honest world)")
    parser.add_argument("--view", default="operator", choices=["operator", "player"],
                        help="operator: every player's hole cards; player: one player's client view per hand")
    parser.add_argument("--names", default="realistic", choices=["realistic", "plain"],
                        help="realistic: a share of names with quotes, backslashes, colons, spaces, scripts, emoji "
                             "and the format's own words (default); plain: letters and digits only")
    parser.add_argument("--world-seed", type=int, default=None,
                        help="draw every colluder mechanism and honest confounder from the documented ranges "
                             "(datasets/README.md) with this seed (default: the first world's fixed mechanisms)")
    parser.add_argument("--world", default="a", choices=["a", "b"],
                        help="a: this generator (default); b: the second world written apart (datasets.world_b)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument("--chunk-hands", type=int, default=4000,
                        help="about this many hands per hands/*.txt file (default: 4000)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _fail(msg: str) -> int:
    """A mistake the user can fix: one line, exit status 2 (as the dispatcher does for its own errors;
    ``datasets`` never imports ``pipelines``)."""
    print(f"railbird generate: {msg}", file=sys.stderr)
    return 2


def _world_b(out: Path, args: argparse.Namespace, mix: dict | None) -> str | None:
    """Write the second world (``datasets.world_b.generate``, imported only here); returns an error or None.

    World b takes a seed, a size in hands and whether to plant collusion (``honest_only``: the ``honest``
    preset or ``--mix none``); its own mix, names and mechanisms are its own, so the first world's
    ``--accounts``, ``--mix`` counts, ``--view``, ``--names`` and ``--world-seed`` do not apply.
    """
    try:
        from datasets import world_b
    except ImportError:
        return "--world b: datasets.world_b is not in this checkout"
    from datasets.presets import PRESETS

    honest_only = args.preset == "honest" or mix == {}
    hands = args.hands if args.hands is not None else PRESETS[args.preset].hands
    out.mkdir(parents=True, exist_ok=True)
    world_b.generate(out, seed=args.seed, hands=hands, honest_only=honest_only)
    return None


def main(args: argparse.Namespace) -> int:
    from datasets.generate import generate
    from datasets.presets import parse_mix

    try:
        mix = parse_mix(args.mix)
    except ValueError as exc:
        return _fail(str(exc))
    if args.accounts is not None and args.accounts < 20:
        return _fail("--accounts must be at least 20")
    if args.hands is not None and args.hands < 100:
        return _fail("--hands must be at least 100")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return _fail(f"--out {out} exists and is not a folder")
    t0 = time.perf_counter()
    if args.world == "b":
        err = _world_b(out, args, mix)
        if err:
            return _fail(err)
    else:
        generate(out, preset=args.preset, seed=args.seed, accounts=args.accounts, hands=args.hands, mix=mix,
                 view=args.view, progress=not args.no_progress, workers=max(1, args.workers),
                 chunk_hands=max(100, args.chunk_hands), names=args.names, world_seed=args.world_seed)
    dt = time.perf_counter() - t0
    n_hands = 0
    for f in sorted(out.rglob("*.txt")):  # hands/ here, world b's own layout there
        with open(f, encoding="utf-8", errors="replace") as fh:
            n_hands += sum(1 for line in fh if line.startswith(("PokerStars Hand #", "PokerStars Game #")))
    groups = 0
    with open(out / "labels.jsonl", encoding="utf-8") as fh:
        kinds: dict[str, int] = {}
        for line in fh:
            g = json.loads(line)
            kinds[g["kind"]] = kinds.get(g["kind"], 0) + 1
            groups += 1
    with open(out / "accounts.csv", encoding="utf-8") as fh:
        n_acc = sum(1 for _ in fh) - 1
    mix_txt = ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())) or "none"
    print(f"wrote {out}: {n_hands} hands, {n_acc} accounts, {groups} collusion groups ({mix_txt}) in {dt:.1f}s")
    return 0
