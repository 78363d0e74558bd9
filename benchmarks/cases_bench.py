"""Cases stage speed: N synthetic signals (pairs, some trios, one-account hand-offs) over two nights.

Prints, per night: signals -> cases, seconds to merge + register in the review
store (build_cases), to write the warehouse tables, to write cases.jsonl; then
the time of a 500-row queue query. Usage: python benchmarks/cases_bench.py [N]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from detectors.kinds import KINDS, by_name
from pipelines.lib.cases import build_cases, write_jsonl, write_tables
from pipelines.lib.review import ReviewStore


def signals(rng: random.Random, n: int, accounts: list[str]) -> list[dict]:
    out = []
    for _ in range(n):
        kind = rng.choice(KINDS)
        size = 1 if by_name(kind).match == "account" else (3 if rng.random() < 0.05 else 2)
        out.append({"kind": kind, "accounts": rng.sample(accounts, size), "score": rng.random(),
                    "flagged": rng.random() < 0.03, "hands": [str(rng.randrange(10**6)) for _ in range(5)],
                    "tournaments": [], "summary": "synthetic", "p_value": None, "detector": "Bench"})
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rng = random.Random(0)
    accounts = [f"p{i}" for i in range(5000)]
    folder = Path(tempfile.mkdtemp())
    con = duckdb.connect(str(folder / "wh.duckdb"))
    con.execute((Path(__file__).resolve().parents[1] / "pipelines" / "lib" / "schema.sql").read_text())
    with ReviewStore(folder / "review.sqlite") as store:
        for night in (1, 2):
            sigs = signals(rng, n, accounts)
            t0 = time.perf_counter()
            cases = build_cases(con, store, f"night{night}", signals=sigs)
            t1 = time.perf_counter()
            write_tables(con, cases, f"night{night}")
            t2 = time.perf_counter()
            write_jsonl(folder / "cases.jsonl", cases)
            t3 = time.perf_counter()
            print(f"night {night}: {len(sigs)} signals -> {len(cases)} cases; build_cases {t1 - t0:.2f} s, "
                  f"tables {t2 - t1:.2f} s, cases.jsonl {t3 - t2:.2f} s")
        t0 = time.perf_counter()
        store.queue(flagged=None, limit=500)
        print(f"queue (500 rows of {n * 2} registered): {time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
