"""Case report speed: the first flagged case of each kind in a run's snapshot, built and rendered.

Prints, per kind, the case, the best of REPEATS wall-clock seconds of
``build_report`` + ``render_html`` (the standalone page; the web page builds
the same report with three replays), the page's size, and what the kind adds
where it has it: for hand chat the flagged lines, the chat lines shown in
place in the replays and how many of them are flagged; for heads-up flipping
the matches drawn, the all-ins preflop read and each player's own range (all-ins at depth
against others). Runs from any checkout (what a checkout's report lacks is
left out), so one snapshot can be timed before and after a change.

Usage: python benchmarks/report_bench.py SNAPSHOT [REPEATS]
(SNAPSHOT: a run's var/snapshot/warehouse.duckdb, e.g. after
``railbird generate --out POP --preset heads_up --hands 20000 --mix hand_chat=3,heads_up_flipping=3``
and ``railbird run POP``).
"""

from __future__ import annotations

import sys
import time

import duckdb

from pipelines.lib.reports import build_report, render_html


def first_of_each_kind(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(kind, case id) of the first flagged case of each kind, in the queue's order."""
    return con.execute("SELECT kind, arg_min(case_id, rank) FROM cases WHERE flagged GROUP BY kind ORDER BY kind").fetchall()


def what_it_adds(rep: dict) -> str:
    """The kind's own part of a report, counted (empty for the other kinds or an older checkout)."""
    if rep.get("chat"):
        shown = [m for h in rep["replays"] for st in h["streets"] for a in st["actions"] for m in a.get("chat", [])]
        return (f"{len(rep['chat'])} flagged lines; {len(shown)} chat lines in place in {len(rep['replays'])} replays, "
                f"{sum(m['flagged'] for m in shown)} flagged")
    if rep.get("flips"):
        f = rep["flips"]
        return (f"{len(f['matches'])} matches, {len(f['flips'])} all-ins preflop; own ranges (all-ins at depth "
                f"against others): {', '.join(str(g['n']) for g in f['ranges'])}")
    return ""


def main(path: str, repeats: int = 3) -> None:
    con = duckdb.connect(path, read_only=True)
    try:
        for kind, case_id in first_of_each_kind(con):
            best, size, rep = float("inf"), 0, {}
            for _ in range(repeats):
                t = time.perf_counter()
                rep = build_report(con, case_id)
                size = len(render_html(rep))
                best = min(best, time.perf_counter() - t)
            print(f"{kind:<20} {case_id}  {best:6.3f} s  {size / 1000:6.0f} kB  {what_it_adds(rep)}")
    finally:
        con.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
