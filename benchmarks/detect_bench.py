"""Time and peak memory of the gameplay detectors on a large warehouse.

A million-hand warehouse is built by replicating a generated one under new ids:
copy k of every hand gets the hand id ``<id>0<k>``, its tournaments ``<id>0<k>``
and its players ``<name>#<k>`` (so copies never merge into one population of
the same accounts; the replica has k times the accounts). Then soft play,
chip dumping and bounty collusion run one after the other, each timed; the
process's peak resident memory is read from ``getrusage``.

    python benchmarks/detect_bench.py --source /tmp/rb/mixed101.duckdb --hands 1000000

Without ``--source`` a ``demo`` population is generated and ingested first
(under /tmp, several minutes). Prints one line per detector and a total.
"""

from __future__ import annotations

import argparse
import math
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TABLES = {
    # table -> (columns holding a hand id, columns holding a player, columns holding a tournament id)
    "hands": (["hand_id", "content_hash"], ["hero"], ["tournament_id"]),
    "seats": (["hand_id"], ["player"], []),
    "actions": (["hand_id"], ["player"], []),
    "hole_cards": (["hand_id"], ["player"], []),
    "boards": (["hand_id"], [], []),
    "pots": (["hand_id"], [], []),
    "collections": (["hand_id"], ["player"], []),
    "bounties": (["hand_id"], ["winner", "eliminated"], ["tournament_id"]),
    "tournaments": ([], [], ["tournament_id"]),
}


def replicate(source: str, target: str, copies: int) -> int:
    """Write ``copies`` renamed copies of the source's gameplay tables into ``target``; returns hands."""
    schema = (ROOT / "pipelines" / "lib" / "schema.sql").read_text()
    con = duckdb.connect(target)
    con.execute(schema)
    con.execute("ATTACH ? AS src (READ_ONLY)", [source])
    for table, (hand_cols, player_cols, tour_cols) in TABLES.items():
        cols = [r[0] for r in con.execute(f"DESCRIBE src.{table}").fetchall()]
        exprs = []
        for c in cols:
            if c in hand_cols or c in tour_cols:
                exprs.append(f"CASE WHEN {c} IS NULL THEN NULL ELSE {c} || '0' || k::VARCHAR END")
            elif c in player_cols:
                exprs.append(f"CASE WHEN {c} IS NULL THEN NULL ELSE {c} || '#' || k::VARCHAR END")
            else:
                exprs.append(c)
        # fixed SQL built from the schema's own column names and a bound copy count; no user text
        con.execute(
            f"INSERT INTO {table} SELECT {', '.join(exprs)} FROM src.{table}, range(?) AS r(k)", [copies]
        )
    n = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
    con.execute("DETACH src")
    con.close()
    return n


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="a generated, ingested warehouse to replicate")
    ap.add_argument("--hands", type=int, default=1_000_000, help="hands to reach (default 1,000,000)")
    ap.add_argument("--keep", help="keep the replica at this path")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="rb_detect_bench_"))
    try:
        source = args.source
        if not source:
            from datasets.generate import generate

            generate(tmp / "pop", preset="demo", seed=1, progress=False)
            source = str(tmp / "src.duckdb")
            subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", str(tmp / "pop"), "--warehouse", source,
                            "--no-progress", "--growing-seconds", "0"], check=True, cwd=ROOT)
        src = duckdb.connect(source, read_only=True)
        base = src.execute("SELECT count(*) FROM hands").fetchall()[0][0]
        src.close()
        copies = max(1, math.ceil(args.hands / base))
        target = args.keep or str(tmp / "replica.duckdb")
        t = time.perf_counter()
        n = replicate(source, target, copies)
        print(f"replica: {n:,} hands ({copies} copies of {base:,}) built in {time.perf_counter() - t:.1f} s")

        from detectors.bounty_collusion import BountyCollusionDetector
        from detectors.chip_dumping import ChipDumpingDetector
        from detectors.soft_play import SoftPlayDetector

        con = duckdb.connect(target, read_only=True)
        con.execute("SET enable_progress_bar = false")
        total = 0.0
        for cls in (SoftPlayDetector, ChipDumpingDetector, BountyCollusionDetector):
            t = time.perf_counter()
            signals = cls().detect(con)
            dt = time.perf_counter() - t
            total += dt
            print(f"{cls.kind:<18} {dt:8.1f} s  signals {len(signals):5d}  flagged {sum(s.flagged for s in signals):4d}  "
                  f"peak RSS {peak_mb():,.0f} MB")
        print(f"{'total':<18} {total:8.1f} s  on {n:,} hands  (the gameplay features are computed once, in the first detector)")
        con.close()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
