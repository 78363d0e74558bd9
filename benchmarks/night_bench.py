"""Time and peak memory of one night's feature pass, with 1M, 3M, 10M hands of history: flat in the history?

The warehouse is built by replicating a generated, ingested one (``--source``) under new ids, in DuckDB (no
Python loop over rows): copy k of every hand gets the hand id ``<id>0<k>``, its players ``<name>#<k mod c>``
(``c`` copies make one day, so every day is played by the same ``c`` renamed populations, as a room's
regulars play every day), its tables ``<name> #<k>`` and its time moved to one day: copies ``0..c-1`` are
the *new day* D, copies ``c·j..c·(j+1)-1`` the history day D - j. Sessions, decisions and sit-outs follow
their hands' copy and day.

The history's day features are those of one history day computed for real, stored again under each other
history day with that day's warehouse fingerprint (the days are replicas: what differs is their ids and
their Monte Carlo seed, not their size). Then, with 1, 3, ... history days in the warehouse (``--history``,
in hands, rounded to whole days), the new day's features are dropped and the night runs in a process of its
own (``nice``): :func:`detectors.features.days.refresh_days` over the window (default 90 days; it computes
the new day only) and the window's sums (pair features, chip flow), which is what the game-play detectors'
feature store does before they fit. Printed: seconds and peak RSS of that process, the days it computed,
the pairs in the window. ``--read-decisions`` also reads the window's heads-up decisions (what the detectors
take from the store today; it grows with the window, not the night). ``--detectors`` then runs every kind of
:data:`detectors.kinds.ALL` on the window in the night's own process, as the ``<kind>_signals`` assets do
(``detect``: fit, score, threshold, explain; the feature store of the window, :func:`run_detectors`), and prints
each kind's seconds, CPU seconds and peak memory, and the whole night's. Last, a backfill: one hand of the
oldest history day changes and the night recomputes that day only.

    nice -n 10 python benchmarks/night_bench.py --source var/smoke/warehouse.duckdb --day-hands 1000000 \\
        --history 1000000 3000000 10000000 --work /tmp/night [--detectors]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NEW_DAY = dt.date(2027, 1, 1)

# table -> {column: how copy k renames it}; ts columns move to the copy's day
HAND, PLAYER, TABLE, TOURNAMENT, TS = "hand", "player", "table", "tournament", "ts"
TABLES = {
    "hands": {"hand_id": HAND, "content_hash": HAND, "hero": PLAYER, "tournament_id": TOURNAMENT,
              "table_name": TABLE, "started_at": TS},
    "seats": {"hand_id": HAND, "player": PLAYER},
    "actions": {"hand_id": HAND, "player": PLAYER},
    "hole_cards": {"hand_id": HAND, "player": PLAYER},
    "boards": {"hand_id": HAND},
    "sessions": {"account": PLAYER, "session": HAND, "login_at": TS, "logout_at": TS},
    "decisions": {"hand_id": HAND, "account": PLAYER, "ts": TS},
    "sit_events": {"account": PLAYER, "table_name": TABLE, "tournament_id": TOURNAMENT, "ts": TS},
}
RENAME = {
    HAND: "{c} || '0' || k::VARCHAR",
    TOURNAMENT: "{c} || '0' || k::VARCHAR",
    PLAYER: "{c} || '#' || (k % $per)::VARCHAR",
    TABLE: "{c} || ' #' || k::VARCHAR",
    # the same time of day on the copy's day: D - k // per
    TS: "{c} + to_days(CAST(($day - CAST(k // $per AS INTEGER)) - CAST({c} AS DATE) AS INTEGER))",
}


def add_copies(con: duckdb.DuckDBPyConnection, lo: int, hi: int, per: int) -> None:
    """Insert copies ``lo..hi-1`` of the attached source ``src`` (see the module docstring)."""
    for table, renames in TABLES.items():
        cols = [r[0] for r in con.execute(f"DESCRIBE src.{table}").fetchall()]
        exprs = []
        for c in cols:
            if c == "day" and table == "hands":
                exprs.append("$day - CAST(k // $per AS INTEGER)")
            elif c in renames:
                exprs.append(f"CASE WHEN {c} IS NULL OR CAST({c} AS VARCHAR) = '' THEN {c} "
                             f"ELSE {RENAME[renames[c]].format(c=c)} END")
            else:
                exprs.append(c)
        # fixed SQL from the schema's own column names; the copy range, day and copies per day are bound
        sql = (f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(exprs)} "
               f"FROM src.{table}, range($lo, $hi) AS r(k)")
        params = {"lo": lo, "hi": hi, "per": per, "day": NEW_DAY}
        con.execute(sql, {k: v for k, v in params.items() if f"${k}" in sql})


def peak_mb() -> float:
    """Peak resident memory of this process's own address space (``VmHWM``), MB.

    Not ``ru_maxrss``: Linux carries the high-water mark of the address space a process replaces at ``exec`` into
    it, and a night's process is forked from the bench, so its ``ru_maxrss`` was at least the bench's resident
    memory at the fork (4.6 GB right after the bench built the 10M replica in its own process). ``ru_maxrss``
    where ``/proc`` is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cpu_s() -> float:
    """CPU seconds of this process, every thread (DuckDB's and Polars' included)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class PhaseRss:
    """Peak memory of this process per phase of the night, sampled every ``every`` s by a thread from
    ``/proc/self/status``: ``VmRSS`` (what ``VmHWM`` peaks on), ``RssAnon`` (heap: Python, Arrow, Polars,
    DuckDB) and ``RssFile`` (pages of mapped files, e.g. Parquet read through ``mmap``), and at each phase's end
    DuckDB's own accounting of the warehouse connection (``duckdb_memory()``, MB). ``phase(name)`` starts a
    phase; :meth:`table` lists the phases in order with their peaks (MB)."""

    FIELDS = ("VmRSS", "RssAnon", "RssFile")

    def __init__(self, every: float = 0.01) -> None:
        import threading

        self.every, self.name, self.rows = every, "imports", {}
        self._t, self._cpu = time.perf_counter(), cpu_s()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> dict[str, int]:
        out = {}
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                key = line.split(":", 1)[0]
                if key in self.FIELDS:
                    out[key] = int(line.split()[1]) // 1024
        return out

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            s, row = self._sample(), self.rows.setdefault(self.name, {})
            for k, v in s.items():
                row[k] = max(row.get(k, 0), v)

    def phase(self, name: str, con: duckdb.DuckDBPyConnection | None = None) -> None:
        """End the current phase (noting ``con``'s DuckDB memory) and start ``name``."""
        if con is not None:
            mb = con.execute("SELECT sum(memory_usage_bytes) // 1048576 FROM duckdb_memory()").fetchall()[0][0]
            self.rows.setdefault(self.name, {})["duckdb_end"] = int(mb or 0)
        now = time.perf_counter()
        row = self.rows.setdefault(self.name, {})
        row["s"], row["cpu_s"] = round(now - self._t, 2), round(cpu_s() - self._cpu, 2)
        # the process's true peak so far (VmHWM): a spike between two samples still shows in the phase it fell in
        row["maxrss"] = round(peak_mb())
        self._t, self._cpu = now, cpu_s()
        self.name = name if name not in self.rows else f"{name} ({len(self.rows)})"

    def table(self) -> list[dict]:
        self._stop.set()
        self._thread.join()
        return [{"phase": k, **v} for k, v in self.rows.items()]


def _watch(rss: PhaseRss, con: duckdb.DuckDBPyConnection) -> None:
    """Mark the phases of :func:`~detectors.features.days.compute_day` in ``rss`` by wrapping its steps (this
    process only): the account summary, each part's read and valuing, the day's sums, the day's decisions file."""
    from detectors.features.days import compute as fc, storage as fs

    def wrap(mod, name, label):
        fn = getattr(mod, name)

        def run(*a, **k):
            rss.phase(label() if callable(label) else label, con)
            return fn(*a, **k)
        setattr(mod, name, run)

    part = [-2]  # read_day's first call reads the account tables, then one call per part

    def read_label():
        part[0] += 1
        return "accounts read" if part[0] < 0 else f"part {part[0]} read"

    wrap(fc, "account_days", "accounts summarised")
    wrap(fc, "read_day", read_label)
    wrap(fc, "_hand_part", lambda: f"part {part[0]} valued")
    wrap(fc, "_sum_by", "day sums")
    wrap(fs.DayWriter, "finish", "day files")


def _detect(cls, con: duckdb.DuckDBPyConnection) -> dict:
    """A new ``cls`` detector's signals on ``con`` counted (signals, flagged); the detector is dropped on return."""
    signals = cls().detect(con)
    return {"signals": len(signals), "flagged": sum(bool(s.flagged) for s in signals)}


def run_detectors(con: duckdb.DuckDBPyConnection, rss: PhaseRss, window_days: int,
                  only: list[str] | None = None) -> list[dict]:
    """Every kind of :data:`detectors.kinds.ALL` (those named in ``only`` when given) run on ``con``'s window as its ``<kind>_signals`` asset runs it
    (a new detector, ``detect``), the game-play kinds sharing the feature store of the window
    (:func:`detectors.features.gameplay.store_for` with ``window_days``), each kind a phase of ``rss``; a kind
    that raises is recorded with its error and the others still run (as in the pipeline); after each kind what it
    freed is given back (:func:`pipelines.lib.memory.give_back`, as the asset does). Returns per kind:
    seconds, CPU seconds, signals, flagged, the peak of the process so far (``VmHWM``, MB) and the error."""
    import importlib

    from detectors import kinds
    from detectors.features import gameplay as gp
    from pipelines.lib import memory

    gp.store_for(con, window_days=window_days)
    out = []
    for k in kinds.ALL:
        if only and k.name not in only:
            continue
        rss.phase(f"detect {k.name}", con)
        t, c = time.perf_counter(), cpu_s()
        module, name = k.detector.split(":")
        row = {"kind": k.name, "error": None}
        try:
            row.update(_detect(getattr(importlib.import_module(module), name), con))
        except Exception as exc:  # one kind's fault costs only its kind, as in the pipeline
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        finally:  # as the asset does once the kind's detector is gone
            memory.give_back()
        row.update(s=round(time.perf_counter() - t, 1), cpu_s=round(cpu_s() - c, 1), peak_so_far_mb=round(peak_mb()))
        out.append(row)
    rss.phase("detectors done", con)
    gp.release()
    return out


def night(warehouse: str, window_days: int, read_decisions: bool, memory_limit: str | None = None,
          hands_per_part: int | None = None, detectors: list[str] | None = None) -> dict:
    """One night's feature pass over ``warehouse`` (run in its own process): figures as a dict. ``memory_limit``:
    DuckDB's on the warehouse connection (its cache of the blocks it scanned counts in the process's memory);
    None: the pipeline's (:func:`pipelines.lib.warehouse.memory_limit`)."""
    from detectors.features import days as fd
    from pipelines.lib import warehouse as wh

    t0 = time.perf_counter()
    rss = PhaseRss()  # from the start: the warehouse's opening and fingerprints are a phase too
    rss.phase("open, fingerprints")
    memory_limit = wh.memory_limit() if memory_limit is None else memory_limit
    # 'duckdb': DuckDB's own default (80 % of the memory), to compare with
    con = duckdb.connect(warehouse, read_only=True,
                         config={} if memory_limit == "duckdb" else {"memory_limit": memory_limit})
    store = fd.DayStore(fd.feature_root(con))
    fp = fd.day_fingerprints(con)
    window = fd.window_of(sorted(fp), window_days)
    hands_per_part = fd.HANDS_PER_PART if hands_per_part is None else hands_per_part
    rss.phase("window listed", con)
    _watch(rss, con)
    computed = fd.refresh_days(con, store, window, fp, hands_per_part=hands_per_part)
    t1, compute_peak = time.perf_counter(), peak_mb()
    rss.phase("window sums", con)
    pf = fd.window_pair_features(store, window)
    t2 = time.perf_counter()
    rss.phase("end", con)
    out = {"days_in_window": len(window), "computed": [d.isoformat() for d in computed],
           "hands_in_window": sum(fp[d][0] for d in window), "pairs": pf.height,
           "compute_s": round(t1 - t0, 1), "compute_peak_mb": round(compute_peak), "window_sums_s": round(t2 - t1, 1), "night_s": round(t2 - t0, 1),
           "night_cpu_s": round(cpu_s(), 1), "night_peak_mb": round(peak_mb()), "load": os.getloadavg()[0],
           "memory_limit": memory_limit, "hands_per_part": hands_per_part}
    if read_decisions:
        dec = fd.window_decisions(store, window)
        out.update(decisions=dec.height, decisions_s=round(time.perf_counter() - t2, 1),
                   decisions_peak_mb=round(peak_mb()))
    if detectors is not None:  # [] runs every kind
        t3 = time.perf_counter()
        out["detectors"] = run_detectors(con, rss, window_days, detectors)
        out.update(detectors_s=round(time.perf_counter() - t3, 1), night_s=round(time.perf_counter() - t0, 1),
                   night_cpu_s=round(cpu_s(), 1), night_peak_mb=round(peak_mb()), load_end=os.getloadavg()[0])
    out["phases"] = rss.table()
    con.close()
    with open(Path(warehouse).parent / "nights.jsonl", "a", encoding="utf-8") as fh:  # every night's figures
        fh.write(json.dumps(out) + "\n")
    return out


def print_phases(r: dict) -> None:
    """The night's peaks by phase (:class:`PhaseRss`), one line each."""
    for p in r.get("phases", []):
        if not p.get("VmRSS"):
            continue  # a phase shorter than one sample
        print(f"    {p['phase']:<22} VmRSS {p.get('VmRSS', 0):>6,} MB  anon {p.get('RssAnon', 0):>6,}  "
              f"file {p.get('RssFile', 0):>5,}  duckdb at end {p.get('duckdb_end', '-'):>5}  "
              f"{p.get('s', 0):6.1f} s {p.get('cpu_s', 0):6.1f} CPU s  peak so far {p.get('maxrss', 0):>6,} MB", flush=True)


def print_detectors(r: dict) -> None:
    """Each kind's time and memory (:func:`run_detectors`), one line each, then the detectors' total."""
    if "detectors" not in r:
        return
    rss = {p["phase"]: p.get("VmRSS", 0) for p in r.get("phases", [])}
    for d in r["detectors"]:
        what = f"error {d['error']}" if d["error"] else f"{d['signals']:>5} signals, {d['flagged']:>4} flagged"
        print(f"    detect {d['kind']:<20} {d['s']:7.1f} s {d['cpu_s']:7.1f} CPU s  its peak (sampled VmRSS) "
              f"{rss.get('detect ' + d['kind'], 0):>6,} MB, the night's so far {d['peak_so_far_mb']:>6,} MB  {what}",
              flush=True)
    print(f"    detectors: {r['detectors_s']} s; the whole night {r['night_s']} s, {r['night_cpu_s']} CPU s, "
          f"peak {r['night_peak_mb']:,} MB", flush=True)


def run_night(warehouse: Path, args: argparse.Namespace) -> dict:
    """:func:`night` in a child process (its own peak RSS), niced."""
    cmd = ["nice", "-n", "10", sys.executable, __file__, "--night", str(warehouse), "--window-days",
           str(args.window_days)] + (["--read-decisions"] if args.read_decisions else []) \
        + (["--duckdb-memory", args.duckdb_memory] if args.duckdb_memory else []) \
        + (["--hands-per-part", str(args.hands_per_part)] if args.hands_per_part else []) \
        + (["--detectors", *args.detectors] if args.detectors is not None else [])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return json.loads(res.stdout.strip().splitlines()[-1])


def clone_day(store, src: dt.date, day: dt.date, fingerprint: list[int]) -> None:
    """Store ``src``'s day tables again as ``day``'s, under ``day``'s warehouse fingerprint."""
    from detectors.features import days as fd

    store.write(day, {t: store.read(t, [src]) for t in fd.DAY_TABLES}, fingerprint)


def grow_history(con: duckdb.DuckDBPyConnection, store, have: int, want: int, per: int, base: int) -> None:
    """Add history days ``have + 1 .. want`` (copies of the attached source) and their day features: the first
    history day's computed, the others its clones (see the module docstring)."""
    from detectors.features import days as fd

    t = time.perf_counter()
    add_copies(con, per * (have + 1), per * (want + 1), per)
    con.execute("CHECKPOINT")
    print(f"history: {want} days ({want * per * base:,} hands) built in {time.perf_counter() - t:.1f} s", flush=True)
    fp = fd.day_fingerprints(con)
    first = NEW_DAY - dt.timedelta(days=1)
    if not store.is_current(first, fp[first]):
        t = time.perf_counter()
        fd.refresh_days(con, store, [first], fp)
        print(f"history day {first} computed in {time.perf_counter() - t:.1f} s (then cloned)", flush=True)
    for j in range(max(have, 1) + 1, want + 1):
        clone_day(store, first, NEW_DAY - dt.timedelta(days=j), fp[NEW_DAY - dt.timedelta(days=j)])


def _parser() -> argparse.ArgumentParser:
    """The command line of :func:`main`."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="a generated, ingested warehouse to replicate")
    ap.add_argument("--day-hands", type=int, default=1_000_000, help="hands of the new day (default 1,000,000)")
    ap.add_argument("--history", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000],
                    help="hands of history to measure the night with (whole days of --day-hands)")
    ap.add_argument("--window-days", type=int, default=90)
    ap.add_argument("--work", default="/tmp/railbird-night", help="folder of the replica and its features")
    ap.add_argument("--read-decisions", action="store_true", help="also read the window's decisions")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the replica and the stored features of a previous run in --work, add history days only")
    ap.add_argument("--duckdb-memory", help="DuckDB's memory_limit on the night's warehouse connection, e.g. 1GB "
                    "(default: the pipeline's, pipelines.lib.warehouse.memory_limit; 'duckdb': DuckDB's own default)")
    ap.add_argument("--hands-per-part", type=int, default=None,
                    help="compute_day's parts (default detectors.features.days.HANDS_PER_PART)")
    ap.add_argument("--detectors", nargs="*", default=None, metavar="KIND",
                    help="then run the detectors on the window in the night's process, every kind or the kinds named "
                    "(time, peak memory per kind)")
    ap.add_argument("--no-backfill", action="store_true", help="measure the nights only, not the backfill after them")
    ap.add_argument("--night", help=argparse.SUPPRESS)  # internal: run one night on this warehouse, print JSON
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.night:
        print(json.dumps(night(args.night, args.window_days, args.read_decisions, args.duckdb_memory,
                               args.hands_per_part, args.detectors)))
        return 0
    if not args.source:
        ap.error("--source is required")
    from detectors.features import days as fd

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    target = work / "warehouse.duckdb"
    reuse = args.reuse and target.exists()
    if not reuse:
        for stale in (target, Path(str(target) + ".wal")):
            stale.unlink(missing_ok=True)
    con = duckdb.connect(str(target))
    source = str(Path(args.source).resolve())
    con.execute("ATTACH ? AS src (READ_ONLY)", [source])
    base = con.execute("SELECT count(*) FROM src.hands").fetchone()[0]
    per = max(1, math.ceil(args.day_hands / base))
    have = 0  # history days in the warehouse
    if reuse:
        have = con.execute("SELECT count(DISTINCT day) FROM hands").fetchone()[0] - 1
        print(f"reusing {target}: the new day and {have} history days of {per * base:,} hands", flush=True)
    else:
        con.execute((ROOT / "pipelines" / "lib" / "schema.sql").read_text())
        t = time.perf_counter()
        add_copies(con, 0, per, per)
        print(f"new day {NEW_DAY}: {per} copies of {base:,} = {per * base:,} hands, built in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    store = fd.DayStore(work / "features")
    for hist in sorted(args.history):
        want = max(1, round(hist / (per * base)))
        if want > have:
            grow_history(con, store, have, want, per, base)
            have = want
        store.drop(NEW_DAY)  # the night computes the new day
        con.execute("CHECKPOINT")
        con.close()
        r = run_night(target, args)
        print(f"history {have * per * base:>12,} hands: night {r['night_s']:7.1f} s (new day {r['compute_s']} s, "
              f"peak {r['compute_peak_mb']:,} MB after it, "
              f"window sums {r['window_sums_s']} s; {r['night_cpu_s']} CPU s, load {r['load']:.0f}), "
              f"peak RSS {r['night_peak_mb']:,} MB; computed {r['computed']}; "
              f"{r['days_in_window']} days, {r['hands_in_window']:,} hands, {r['pairs']:,} pairs in the window"
              + (f"; window decisions {r['decisions']:,} read in {r['decisions_s']} s, peak {r['decisions_peak_mb']:,} MB"
                 if "decisions" in r else ""), flush=True)
        print_phases(r)
        print_detectors(r)
        con = duckdb.connect(str(target))
        con.execute("ATTACH ? AS src (READ_ONLY)", [source])
    if args.no_backfill:
        con.close()
        return 0
    # a backfill: one hand of the oldest history day changes
    oldest = NEW_DAY - dt.timedelta(days=have)
    con.execute("UPDATE hands SET content_hash = content_hash || '~' WHERE hand_id = "
                "(SELECT min(hand_id) FROM hands WHERE day = ?)", [oldest])
    con.execute("CHECKPOINT")
    con.close()
    r = run_night(target, args)
    print(f"backfill of {oldest}: {r['night_s']} s (day {r['compute_s']} s, window sums {r['window_sums_s']} s; "
          f"{r['night_cpu_s']} CPU s, load {r['load']:.0f}), "
          f"peak RSS {r['night_peak_mb']:,} MB; computed {r['computed']}", flush=True)
    print_phases(r)
    print_detectors(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
