"""Cases stage and queue speed: N synthetic signals (pairs, some trios, one-account hand-offs) over two nights.

The warehouse holds HANDS synthetic hands (cash and tournament, six seats
each, players drawn from 5,000 accounts) that the signals' evidence hands
are drawn from. Prints, per night: signals -> cases, seconds to merge +
register in the review store (build_cases: groups, then registration), to
write the warehouse tables, to write cases.jsonl, and how long the review
store stays locked for writers (registration to commit, as publish_cases);
then the web app's queue over the 2 N registered cases: seconds per page
(first, deep, filtered, searched, sorted) and for the CSV of a filter. Usage: python benchmarks/cases_bench.py [N]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from detectors.kinds import KINDS, by_name
from pipelines.lib.cases import case_groups, register_cases, write_jsonl, write_tables
from pipelines.lib.review import ReviewStore


HANDS = 200_000


def fill_hands(con: duckdb.DuckDBPyConnection, n_hands: int, n_accounts: int) -> None:
    """``n_hands`` hands (every tenth a tournament hand in chips, the rest USD cash) of six seats each."""
    con.execute(f"""
        INSERT INTO hands (hand_id, site, is_zoom, game, hi_lo, limit_type, currency, is_tournament, tournament_id,
                           started_at, day, table_name, n_players, total_pot, rake, run_it_twice, all_cards_known,
                           source_file, source_line, content_hash)
        SELECT i::VARCHAR, 'PokerStars', false, 'holdem', false, 'no_limit', CASE WHEN i % 10 = 0 THEN 'CHIPS' ELSE 'USD' END,
               i % 10 = 0, CASE WHEN i % 10 = 0 THEN 'T' || (i // 1000)::VARCHAR END,
               TIMESTAMP '2026-03-01' + INTERVAL (i) SECOND, DATE '2026-03-01', 't' || (i % 500)::VARCHAR, 6,
               (i % 97 + 1)::DECIMAL(18,2), 0, false, true, 'bench.txt', i, 'h' || i::VARCHAR
        FROM range({n_hands}) r(i)""")
    con.execute(f"""
        INSERT INTO seats (hand_id, seat, player, stack_start, sitting_out, dealt_in, put_in, returned, collected, net,
                           stack_end, is_hero)
        SELECT i::VARCHAR, s, 'p' || ((hash(i * 7 + s) % {n_accounts}))::VARCHAR, 100, false, true, 1, 0,
               CASE WHEN s = 1 THEN 6 ELSE 0 END, CASE WHEN s = 1 THEN 5 ELSE -1 END, 100, false
        FROM range({n_hands}) r(i), range(1, 7) t(s)""")


def signals(rng: random.Random, n: int, accounts: list[str]) -> list[dict]:
    out = []
    for _ in range(n):
        kind = rng.choice(KINDS)
        size = 1 if by_name(kind).match == "account" else (3 if rng.random() < 0.05 else 2)
        out.append({"kind": kind, "accounts": rng.sample(accounts, size), "score": rng.random(),
                    "flagged": rng.random() < 0.03, "hands": [str(rng.randrange(HANDS)) for _ in range(5)],
                    "tournaments": [], "summary": "synthetic", "p_value": None, "detector": "Bench"})
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rng = random.Random(0)
    accounts = [f"p{i}" for i in range(5000)]
    folder = Path(tempfile.mkdtemp())
    con = duckdb.connect(str(folder / "wh.duckdb"))
    con.execute((Path(__file__).resolve().parents[1] / "pipelines" / "lib" / "schema.sql").read_text())
    fill_hands(con, HANDS, len(accounts))
    with ReviewStore(folder / "review.sqlite") as store:
        for night in (1, 2):
            sigs = signals(rng, n, accounts)
            t0 = time.perf_counter()
            groups = case_groups(con, sigs)
            tg = time.perf_counter()
            with store.tx():  # as publish_cases: registration commits with the tables and the file
                cases = register_cases(store, f"night{night}", groups)
                t1 = time.perf_counter()
                write_tables(con, cases, f"night{night}")
                t2 = time.perf_counter()
                write_jsonl(folder / "cases.jsonl", cases)
                t3 = time.perf_counter()
            t4 = time.perf_counter()
            print(f"night {night}: {len(sigs)} signals -> {len(cases)} cases; build_cases {t1 - t0:.2f} s "
                  f"(groups {tg - t0:.2f} s, registration {t1 - tg:.2f} s), tables {t2 - t1:.2f} s, "
                  f"cases.jsonl {t3 - t2:.2f} s; review store locked {t4 - tg:.2f} s")
        store.add_user("bench", "investigator", "bench password")
    con.close()
    time_queue(folder, n * 2)


def time_queue(folder: Path, registered: int) -> None:
    """Seconds per queue page through the web app (HTTP in process), over the bench's store and warehouse."""
    import re

    from fastapi.testclient import TestClient

    from pipelines.web.app import WebSettings, create_app

    app = create_app(WebSettings(snapshot_path=str(folder / "wh.duckdb"), review_db=str(folder / "review.sqlite")))
    c = TestClient(app, base_url="http://bench")
    tok = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)
    c.post("/login", data={"csrf": tok, "username": "bench", "password": "bench password"})
    pages = {"first page, all cases": {"flagged": ""}, "page 300": {"flagged": "", "page": "300"},
             "kind + score filter": {"flagged": "", "kind": "chip_dumping", "score_min": "0.5"},
             "search part of a name": {"flagged": "", "q": "p12"}, "search a hand id": {"flagged": "", "q": "4242"},
             "sorted by score, ascending, page 100": {"flagged": "", "sort": "score", "order": "asc", "page": "100"},
             "sorted by money, page 50": {"flagged": "", "sort": "money", "page": "50"},
             "sorted by chips, one kind": {"flagged": "", "sort": "chips", "kind": "bounty_collusion"}}
    for label, params in pages.items():
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            r = c.get("/cases", params=params)
            times.append(time.perf_counter() - t0)
        total = re.search(r"cases [\d–]+ of (\d+)|no cases match", r.text).group(0)
        print(f"queue {label}: best {min(times):.3f} s, worst {max(times):.3f} s ({total}; {registered} registered)")
    t0 = time.perf_counter()
    r = c.get("/cases.csv", params={"flagged": "", "kind": "soft_play"})
    print(f"queue CSV of one kind: {time.perf_counter() - t0:.3f} s ({r.text.count(chr(10)) - 1} rows)")

if __name__ == "__main__":
    main()
