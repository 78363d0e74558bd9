"""The cases a run flagged on real hand histories, with the figures that test them against the honest confounders.

Real play is railbird's honest reference (issue 32, item 4): every case flagged on
``../shared/corpora`` must be defensible, and docs/real-play-checks.md keeps the
written check of each against the confounders real rooms have. This script prints,
for the flagged cases of one run (and, with ``--top N``, the N strongest unflagged
ones: what stands nearest the line), what that check needs:

- the case: kind, accounts, estimated false-discovery rate (``q_value``), score,
  summary, and its signals' evidence rows (value against baseline, n, p);
- per account (tilt, fatigue, regulars, short-handed, bounty hunters, device
  switchers): hands, days, tables, time span, VPIP overall and in the three
  thirds of the account's hands in time order, net big blinds per third, the
  biggest single-hand loss and VPIP before and after it, players dealt in on
  average, tournament hands, knockouts won, devices seen in the sessions;
- per ordered pair of the case's accounts (friends by chance, like with like):
  hands, tables and days together, the first player's VPIP with the second
  dealt in, without, and without within the time window of their hands
  together (a baseline from another hour of the session is not like with like),
  players dealt in with and without, each one's net big blinds over the hands
  together, and the knockouts between them.

Everything is computed in DuckDB over the run's published warehouse (the
``player_hands`` view), names bound as parameters.

    railbird run ../shared/corpora --out /tmp/real          # RAILBIRD_HOME=/tmp/real-home
    python benchmarks/real_play_check.py --run /tmp/real --warehouse /tmp/real-home/snapshot/warehouse.duckdb
    python benchmarks/real_play_check.py --run /work/tune/corpus/out --top 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from itertools import permutations
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.lib import evaluation as ev  # noqa: E402
from pipelines.lib.case_story import fdr_text  # noqa: E402
from pipelines.lib.safe_text import terminal_safe  # noqa: E402

MAX_ACCOUNTS = 4  # ordered pairs of a larger group: its first four accounts only

ACCOUNT_SQL = """
WITH ph AS (SELECT p.*, h.n_players FROM player_hands p JOIN hands h USING (hand_id)
            WHERE p.player IN (SELECT account FROM rb_acc)),
r AS (SELECT *, ntile(3) OVER (PARTITION BY player ORDER BY started_at, hand_id) AS third,
             arg_min(started_at, net_won_bb) OVER (PARTITION BY player) AS worst_at FROM ph)
SELECT player, count(*) AS hands, count(DISTINCT day) AS days, count(DISTINCT table_name) AS tables,
       min(started_at) AS first_at, max(started_at) AS last_at, avg(vpip::INT) AS vpip,
       avg(vpip::INT) FILTER (WHERE third = 1) AS vpip_1, avg(vpip::INT) FILTER (WHERE third = 2) AS vpip_2,
       avg(vpip::INT) FILTER (WHERE third = 3) AS vpip_3,
       sum(net_won_bb) FILTER (WHERE third = 1) AS bb_1, sum(net_won_bb) FILTER (WHERE third = 2) AS bb_2,
       sum(net_won_bb) FILTER (WHERE third = 3) AS bb_3, min(net_won_bb) AS worst_bb,
       avg(vpip::INT) FILTER (WHERE started_at < worst_at) AS vpip_before_worst,
       avg(vpip::INT) FILTER (WHERE started_at > worst_at) AS vpip_after_worst,
       avg(n_players) AS avg_dealt_in, count(*) FILTER (WHERE is_tournament) AS tournament_hands,
       (SELECT count(*) FROM bounties b WHERE b.winner = r.player) AS knockouts_won
FROM r GROUP BY player
"""

PAIR_SQL = """
WITH ph AS (SELECT p.*, h.n_players FROM player_hands p JOIN hands h USING (hand_id)
            WHERE p.player IN (SELECT a FROM rb_pairs UNION SELECT b FROM rb_pairs)),
x AS (SELECT pr.a, pr.b, pa.hand_id, pa.started_at, pa.day, pa.table_name, pa.vpip, pa.n_players,
             pa.net_won_bb AS a_bb, pb.net_won_bb AS b_bb, pb.player IS NOT NULL AS together
      FROM rb_pairs pr JOIN ph pa ON pa.player = pr.a LEFT JOIN ph pb ON pb.hand_id = pa.hand_id AND pb.player = pr.b),
w AS (SELECT *, min(started_at) FILTER (WHERE together) OVER (PARTITION BY a, b) AS lo,
             max(started_at) FILTER (WHERE together) OVER (PARTITION BY a, b) AS hi FROM x)
SELECT a, b, count(*) FILTER (WHERE together) AS hands_together,
       count(DISTINCT table_name) FILTER (WHERE together) AS tables_together,
       count(DISTINCT day) FILTER (WHERE together) AS days_together,
       avg(vpip::INT) FILTER (WHERE together) AS vpip_with,
       avg(vpip::INT) FILTER (WHERE NOT together) AS vpip_without,
       count(*) FILTER (WHERE NOT together) AS hands_without,
       avg(vpip::INT) FILTER (WHERE NOT together AND started_at BETWEEN lo AND hi) AS vpip_without_same_window,
       count(*) FILTER (WHERE NOT together AND started_at BETWEEN lo AND hi) AS hands_without_same_window,
       avg(n_players) FILTER (WHERE together) AS dealt_in_with, avg(n_players) FILTER (WHERE NOT together) AS dealt_in_without,
       sum(a_bb) FILTER (WHERE together) AS a_bb_together, sum(b_bb) FILTER (WHERE together) AS b_bb_together,
       (SELECT count(*) FROM bounties k WHERE k.winner = w.a AND k.eliminated = w.b) AS knockouts_a_of_b
FROM w GROUP BY a, b
"""


def rows(con: duckdb.DuckDBPyConnection, sql: str, tables: dict[str, pa.Table]) -> list[dict[str, Any]]:
    """``sql`` over the registered Arrow ``tables``, as dicts."""
    for name, t in tables.items():
        con.register(name, t)
    try:
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        for name in tables:
            con.unregister(name)


def evidence_of(con: duckdb.DuckDBPyConnection, case_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per case id: its signals' evidence rows (name, value, baseline, n, p_value, text), strongest signal first."""
    out: dict[str, list[dict[str, Any]]] = {}
    got = con.execute("SELECT case_id, CAST(payload AS VARCHAR) FROM case_signals "
                      "WHERE list_contains(?::VARCHAR[], case_id) ORDER BY case_id, idx", [case_ids]).fetchall()
    for cid, payload in got:
        try:
            sig = json.loads(payload)
        except ValueError:
            continue
        for e in sig.get("evidence") or []:
            if isinstance(e, dict):
                out.setdefault(cid, []).append({k: e.get(k) for k in ("name", "value", "baseline", "n", "p_value", "text")})
        if sig.get("benign"):
            out.setdefault(cid, []).append({"name": "benign explanation considered", "text": sig["benign"]})
    return out


def check(con: duckdb.DuckDBPyConnection, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The figures of the module doc for ``cases`` (dicts of cases.jsonl), one dict per case."""
    accounts = sorted({str(a) for c in cases for a in c["accounts"]})
    pairs = sorted({(a, b) for c in cases for a, b in permutations([str(x) for x in c["accounts"][:MAX_ACCOUNTS]], 2)})
    acc = {r["player"]: r for r in rows(con, ACCOUNT_SQL, {"rb_acc": pa.table({"account": pa.array(accounts, pa.string())})})}
    pr = {(r["a"], r["b"]): r for r in rows(con, PAIR_SQL, {"rb_pairs": pa.table({
        "a": pa.array([a for a, _ in pairs], pa.string()), "b": pa.array([b for _, b in pairs], pa.string())})})}
    devices: dict[str, int] = {}
    if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'sessions'").fetchall()[0][0]:
        devices = dict(con.execute("SELECT account, count(DISTINCT device) FROM sessions "
                                   "WHERE list_contains(?::VARCHAR[], account) GROUP BY 1", [accounts]).fetchall())
    has_signals = bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'case_signals'").fetchall()[0][0])
    evidence = evidence_of(con, [c["case"] for c in cases]) if has_signals else {}
    out = []
    for c in cases:
        names = [str(a) for a in c["accounts"]]
        out.append({
            **{k: c.get(k) for k in ("case", "kind", "accounts", "tournaments", "score", "q_value", "flagged", "summary")},
            "evidence": evidence.get(c["case"], []),
            "account_figures": [{**acc.get(a, {"player": a}), "devices": devices.get(a)} for a in names],
            "pair_figures": [pr[p] for p in permutations(names[:MAX_ACCOUNTS], 2) if p in pr],
        })
    return out


def _f(x: Any, nd: int = 2, pct: bool = False) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{100 * x:.0f} %" if pct else f"{x:.{nd}f}"
    return str(x)


def render(checked: list[dict[str, Any]]) -> str:
    """The figures as plain text, one block per case (names made safe for a terminal)."""
    lines = []
    for c in checked:
        t = terminal_safe
        lines += ["", f"{t(c['case'])}  {c['kind']}  {'FLAGGED' if c['flagged'] else 'not flagged'}  "
                      f"estimated false-discovery rate {fdr_text(c.get('q_value'))}  score {_f(c['score'])}",
                  f"  accounts: {t(', '.join(c['accounts']))}", f"  summary: {t(str(c['summary']))}"]
        for e in c["evidence"]:
            lines.append(f"  evidence {t(str(e.get('name')))}: {_f(e.get('value'))} vs {_f(e.get('baseline'))}, "
                         f"n {_f(e.get('n'))}, p {_f(e.get('p_value'), 4)}; {t(str(e.get('text') or ''), width=200)}")
        for a in c["account_figures"]:
            lines.append(
                f"  account {t(str(a['player']))}: {_f(a.get('hands'))} hands, {_f(a.get('days'))} days, "
                f"{_f(a.get('tables'))} tables, {a.get('first_at')} - {a.get('last_at')}; VPIP {_f(a.get('vpip'), pct=True)} "
                f"(thirds {_f(a.get('vpip_1'), pct=True)} / {_f(a.get('vpip_2'), pct=True)} / {_f(a.get('vpip_3'), pct=True)}; "
                f"net bb {_f(a.get('bb_1'), 1)} / {_f(a.get('bb_2'), 1)} / {_f(a.get('bb_3'), 1)}); worst hand "
                f"{_f(a.get('worst_bb'), 1)} bb, VPIP before {_f(a.get('vpip_before_worst'), pct=True)} after "
                f"{_f(a.get('vpip_after_worst'), pct=True)}; {_f(a.get('avg_dealt_in'), 1)} dealt in on average; "
                f"{_f(a.get('tournament_hands'))} tournament hands, {_f(a.get('knockouts_won'))} knockouts; "
                f"devices {_f(a.get('devices'))}")
        for p in c["pair_figures"]:
            lines.append(
                f"  pair {t(str(p['a']))} -> {t(str(p['b']))}: {p['hands_together']} hands together on "
                f"{p['tables_together']} tables, {p['days_together']} days; VPIP with {_f(p['vpip_with'], pct=True)}, "
                f"without {_f(p['vpip_without'], pct=True)} ({p['hands_without']} hands), without in the same window "
                f"{_f(p['vpip_without_same_window'], pct=True)} ({p['hands_without_same_window']} hands); dealt in with "
                f"{_f(p['dealt_in_with'], 1)}, without {_f(p['dealt_in_without'], 1)}; net bb together "
                f"{_f(p['a_bb_together'], 1)} / {_f(p['b_bb_together'], 1)}; knockouts {p['knockouts_a_of_b']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True, help="the run's output folder (its cases.jsonl)")
    ap.add_argument("--warehouse", type=Path, default=None, help="the run's published warehouse (default: "
                    "<run>/../home/snapshot/warehouse.duckdb, else $RAILBIRD_HOME/snapshot/warehouse.duckdb)")
    ap.add_argument("--top", type=int, default=0, help="also the N strongest unflagged cases (in the run's order)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON instead of text")
    args = ap.parse_args(argv)
    cases = ev.read_jsonl(args.run / "cases.jsonl", "cases")
    chosen = [c for c in cases if c.get("flagged")] + [c for c in cases if not c.get("flagged")][: max(args.top, 0)]
    wh = args.warehouse or next((p for p in (args.run.parent / "home" / "snapshot" / "warehouse.duckdb",
                                             Path(os.environ.get("RAILBIRD_HOME", "var")) / "snapshot" / "warehouse.duckdb")
                                 if p.is_file()), None)
    if wh is None or not Path(wh).is_file():
        ap.error("no published warehouse found: give --warehouse")
    con = duckdb.connect(str(wh), read_only=True)
    try:
        if not con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'player_hands'").fetchall()[0][0]:
            ap.error(f"{wh} has no player_hands view: give the warehouse a run published (its snapshot)")
        checked = check(con, chosen)
    finally:
        con.close()
    n_flagged = sum(bool(c.get("flagged")) for c in cases)
    if args.json:
        print(json.dumps({"cases": len(cases), "flagged": n_flagged, "checked": checked}, default=str, ensure_ascii=False))
    else:
        print(f"{args.run / 'cases.jsonl'}: {len(cases)} cases, {n_flagged} flagged; listed: {len(chosen)}")
        print(render(checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
