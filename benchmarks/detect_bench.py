"""Time and peak memory of the six detectors on a large warehouse.

A million-hand warehouse is built by replicating a generated one under new ids:
copy k of every hand gets the hand id ``<id>0<k>``, its tournaments ``<id>0<k>``,
its tables ``<name> #<k>`` and its players ``<name>#<k>`` (so copies never merge
into one population of the same accounts; the replica has k times the accounts).
The platform's events and accounts are copied the same way for the identity
detectors: sessions ``<id>0<k>``, devices and payment hashes ``<hash>#<k>``, and
IPv4 addresses with ``k`` added to the second octet (IPv6: ``x<k>`` appended to
the first group), so no identifier or /24 (/64) network is shared across copies.
Then the three game-play detectors (soft play, chip dumping, bounty collusion)
and the three identity detectors (multi-accounting, seat hand-off, coordinated
sit-out) run one after the other, each timed in wall-clock and CPU seconds
(CPU over all threads, DuckDB's included); the process's peak resident memory
is read from ``getrusage``.

    python benchmarks/detect_bench.py --source /tmp/rb/mixed101.duckdb --hands 1000000 --keep /tmp/rb/replica1m.duckdb

``--keep`` keeps the replica; run again with the same ``--keep`` and ``--reuse``
to time the detectors on it without building it again. Without ``--source`` a
``demo`` population is generated and ingested first (under /tmp, several
minutes). Prints one line per detector and a total. With ``--labels`` (the
source population's ``labels.jsonl``) each line also scores the flagged cases
against the labelled groups renamed as in every copy (the matching rule of
``../shared/spec/evaluation.md``): groups found and wrong cases, so a test
whose error control does not hold at this scale shows here (a detector's
figures on the replica should be its single copy's, times the copies).
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

HAND, PLAYER, TOURNAMENT, TABLE, SUFFIX, IP = "hand", "player", "tournament", "table", "suffix", "ip"
TABLES = {
    # table -> {column: how copy k renames it}; columns not named are copied as they are
    "hands": {"hand_id": HAND, "content_hash": HAND, "hero": PLAYER, "tournament_id": TOURNAMENT, "table_name": TABLE},
    "seats": {"hand_id": HAND, "player": PLAYER},
    "actions": {"hand_id": HAND, "player": PLAYER},
    "hole_cards": {"hand_id": HAND, "player": PLAYER},
    "boards": {"hand_id": HAND},
    "pots": {"hand_id": HAND},
    "collections": {"hand_id": HAND, "player": PLAYER},
    "bounties": {"hand_id": HAND, "winner": PLAYER, "eliminated": PLAYER, "tournament_id": TOURNAMENT},
    "tournaments": {"tournament_id": TOURNAMENT},
    "tournament_finishes": {"tournament_id": TOURNAMENT, "player": PLAYER, "hand_id": HAND},
    "table_events": {"hand_id": HAND, "player": PLAYER},
    # platform events and accounts (the identity detectors)
    "accounts": {"account": PLAYER, "payment": SUFFIX},
    "sessions": {"account": PLAYER, "session": HAND, "ip": IP, "device": SUFFIX},
    "session_events": {"account": PLAYER, "session": HAND, "ip": IP, "device": SUFFIX},
    "sit_events": {"account": PLAYER, "table_name": TABLE, "tournament_id": TOURNAMENT},
    "registrations": {"account": PLAYER, "tournament_id": TOURNAMENT},
    "decisions": {"hand_id": HAND, "account": PLAYER},
    "transfers": {"account": PLAYER, "to_account": PLAYER},
    "other_events": {"account": PLAYER},
}

RENAME = {
    HAND: "{c} || '0' || k::VARCHAR",
    TOURNAMENT: "{c} || '0' || k::VARCHAR",
    PLAYER: "{c} || '#' || k::VARCHAR",
    SUFFIX: "{c} || '#' || k::VARCHAR",
    TABLE: "{c} || ' #' || k::VARCHAR",
    IP: ("CASE WHEN regexp_matches({c}, '^\\d+\\.\\d+\\.\\d+\\.\\d+$') "
         "THEN split_part({c}, '.', 1) || '.' || ((split_part({c}, '.', 2)::INTEGER + k) % 256)::VARCHAR || '.' "
         "|| split_part({c}, '.', 3) || '.' || split_part({c}, '.', 4) "
         "ELSE regexp_replace({c}, '^([^:]*)', '\\1x' || k::VARCHAR) END"),
}


def replicate(source: str, target: str, copies: int) -> int:
    """Write ``copies`` renamed copies of the source's tables into a new ``target``; returns hands."""
    if Path(target).exists():
        raise SystemExit(f"{target} exists: pass --reuse to time the detectors on it, or remove it")
    schema = (ROOT / "pipelines" / "lib" / "schema.sql").read_text()
    con = duckdb.connect(target)
    con.execute(schema)
    con.execute("ATTACH ? AS src (READ_ONLY)", [source])
    for table, renames in TABLES.items():
        cols = [r[0] for r in con.execute(f"DESCRIBE src.{table}").fetchall()]
        exprs = []
        for c in cols:
            if c in renames:
                exprs.append(f"CASE WHEN {c} IS NULL OR {c} = '' THEN {c} ELSE {RENAME[renames[c]].format(c=c)} END")
            else:
                exprs.append(c)
        # fixed SQL built from the schema's own column names and a bound copy count; no user text
        con.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(exprs)} FROM src.{table}, range(?) AS r(k)",
            [copies],
        )
    n = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
    con.execute("DETACH src")
    con.close()
    return n


def replicated_groups(labels: str, copies: int) -> list[dict]:
    """The source population's labelled groups as each copy names them (see the module docstring)."""
    from pipelines.lib import evaluation as ev

    return [{**g, "accounts": [f"{a}#{k}" for a in g.get("accounts") or []],
             "tournaments": [f"{t}0{k}" for t in g.get("tournaments") or []]}
            for k in range(copies) for g in ev.read_jsonl(labels, "labels")]


def scored(kind: str, signals: list, groups: list[dict]) -> str:
    """'found x/y groups, z wrong' for the flagged signals of one kind."""
    from pipelines.lib import evaluation as ev

    cases = [{"accounts": s.accounts, "tournaments": s.tournaments} for s in signals if s.flagged]
    wrong = sum(not any(ev.matches(c, g) for g in groups) for c in cases)
    mine = [g for g in groups if g.get("kind") == kind]
    found = sum(any(ev.matches(c, g) for c in cases) for g in mine)
    return f"  found {found}/{len(mine)}  wrong {wrong}"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="a generated, ingested warehouse to replicate")
    ap.add_argument("--hands", type=int, default=1_000_000, help="hands to reach (default 1,000,000)")
    ap.add_argument("--keep", help="keep the replica at this path")
    ap.add_argument("--reuse", action="store_true", help="time the detectors on the replica at --keep as it is")
    ap.add_argument("--only", help="comma-separated detector kinds to run (default: all six)")
    ap.add_argument("--labels", help="the source population's labels.jsonl: score the flagged cases on the replica")
    args = ap.parse_args(argv)
    if args.reuse and not (args.keep and Path(args.keep).exists()):
        ap.error("--reuse needs --keep naming an existing replica")
    tmp = Path(tempfile.mkdtemp(prefix="rb_detect_bench_"))
    try:
        target = args.keep or str(tmp / "replica.duckdb")
        if args.reuse:
            con = duckdb.connect(target, read_only=True)
            n = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
            con.close()
            print(f"replica: {n:,} hands (reused {target})")
        else:
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
            t = time.perf_counter()
            n = replicate(source, target, copies)
            print(f"replica: {n:,} hands ({copies} copies of {base:,}) built in {time.perf_counter() - t:.1f} s")

        from detectors import get_detector
        from detectors.kinds import KINDS

        kinds = list(KINDS)
        if args.only:
            kinds = [k for k in kinds if k in args.only.split(",")]
        con = duckdb.connect(target, read_only=True)
        con.execute("SET enable_progress_bar = false")
        groups: list[dict] = []
        if args.labels:
            # copies are numbered 0..copies-1 in the accounts' '#<k>' suffix
            copies = con.execute("SELECT max(CAST(regexp_extract(account, '#(\\d+)$', 1) AS INTEGER)) + 1 "
                                 "FROM accounts").fetchall()[0][0] or 1
            groups = replicated_groups(args.labels, int(copies))
        wall = cpu = 0.0
        for kind in kinds:
            t, c = time.perf_counter(), cpu_s()
            signals = get_detector(kind).detect(con)
            dt, dc = time.perf_counter() - t, cpu_s() - c
            wall, cpu = wall + dt, cpu + dc
            print(f"{kind:<19} {dt:7.1f} s wall {dc:7.1f} s CPU  signals {len(signals):5d}  "
                  f"flagged {sum(s.flagged for s in signals):4d}  peak RSS {peak_mb():,.0f} MB"
                  + (scored(kind, signals, groups) if groups else ""), flush=True)
        print(f"{'total':<19} {wall:7.1f} s wall {cpu:7.1f} s CPU  on {n:,} hands, peak RSS {peak_mb():,.0f} MB "
              "(the game-play features are computed once, in the first game-play detector)")
        con.close()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
