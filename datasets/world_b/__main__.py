"""``python -m datasets.world_b --out DIR --seed S --hands N [--honest-only]``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from .generate import generate


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m datasets.world_b", description=__doc__)
    p.add_argument("--out", required=True, type=Path, help="folder to write the population into")
    p.add_argument("--seed", required=True, type=int)
    p.add_argument("--hands", type=int, default=60_000, help="approximate number of hands (default 60000)")
    p.add_argument("--honest-only", action="store_true", help="plant no colluders")
    a = p.parse_args(argv)
    t = time.perf_counter()
    summary = generate(a.out, seed=a.seed, hands=a.hands, honest_only=a.honest_only)
    summary["seconds"] = round(time.perf_counter() - t, 1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
