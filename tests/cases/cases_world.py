"""A small planted warehouse for the cases / reports / web tests.

Stage 1 and stage 2 are two nights over growing data: stage 2 adds hands and
signals (more evidence for the chip dumpers, a third account in the soft-play
ring, a new bounty case, a hand-chat case, a heads-up flipping case), so tests
can follow ids, decisions and new hands. Four accounts carry hostile names: two markup (XSS1, XSS2), one with Hebrew, a
right-to-left override, quotes, a backslash and a colon (RTL) and one with emoji
and markup (EMO). In the second night RTL talks about a hand EMO is still in
(a hand-chat case); EMO and ivan flip their heads-up match (a heads-up
flipping case), ivan's match against kim shows his own range.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb

from detectors.base import Evidence, Signal
from pipelines.lib import cases as cases_lib
from pipelines.lib.review import ReviewStore

SCHEMA = Path(__file__).resolve().parents[2] / "pipelines" / "lib" / "schema.sql"
XSS1 = "<script>alert(1)</script>"
XSS2 = '"><img src=x onerror=alert(2)>'
RTL = 'נועם "\u202eevil\u202c" O\'Neil \\ : end'
EMO = "🃏 Joker <i>x</i> 😀"
CHAT_LINE = f"he has A♠K♠ <script>alert(3)</script> {EMO} fold!"
T0 = dt.datetime(2026, 3, 4, 20, 0, 0)


def new_warehouse(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path))
    con.execute(SCHEMA.read_text())
    return con


def _hand(hid: str, minute: int, table: str, loser: str, winner: str, other: str, *, style: str,
          tournament: str | None = None) -> dict[str, list[tuple]]:
    """One three-handed hold'em hand: `loser` SB, `winner` BB, `other` BTN folds.

    style 'dump': loser raises, bets the flop and is called down, loses 200;
    style 'checkdown': both check every street after the flop, winner takes 4.
    """
    t = T0 + dt.timedelta(minutes=minute)
    cur = "CHIPS" if tournament else "USD"
    seats = [(1, other), (2, loser), (3, winner)]
    acts = [  # seq, street, player, action, amount, raise_to, all_in, pot_before, to_call, n_active
        (0, "preflop", loser, "post_sb", 1, None, False, 0, 0, 3),
        (1, "preflop", winner, "post_bb", 2, None, False, 1, 0, 3),
        (2, "preflop", other, "fold", 0, None, False, 3, 2, 3),
    ]
    if style == "dump":
        acts += [(3, "preflop", loser, "raise", 99, 100, False, 3, 1, 2),
                 (4, "preflop", winner, "call", 98, None, False, 102, 98, 2),
                 (5, "flop", winner, "check", 0, None, False, 200, 0, 2),
                 (6, "flop", loser, "bet", 100, None, True, 200, 0, 2),
                 (7, "flop", winner, "call", 100, None, False, 300, 100, 2)]
        put = {loser: 200, winner: 200, other: 0}
    else:
        acts += [(3, "preflop", loser, "call", 1, None, False, 3, 1, 2),
                 (4, "preflop", winner, "check", 0, None, False, 4, 0, 2),
                 (5, "flop", loser, "check", 0, None, False, 4, 0, 2),
                 (6, "flop", winner, "check", 0, None, False, 4, 0, 2),
                 (7, "turn", loser, "check", 0, None, False, 4, 0, 2),
                 (8, "turn", winner, "check", 0, None, False, 4, 0, 2),
                 (9, "river", loser, "check", 0, None, False, 4, 0, 2),
                 (10, "river", winner, "check", 0, None, False, 4, 0, 2)]
        put = {loser: 2, winner: 2, other: 0}
    pot = sum(put.values())
    return {
        "hands": [(hid, "PokerStars", False, "holdem", False, "no_limit", cur, tournament is not None, tournament,
                   "I" if tournament else None, 1, 2, None, t, str(t), t.date(), table, 6, 1, 3, pot, 0, False, True,
                   None, "planted.txt", int(hid) % 1000, f"h{hid}")],
        "seats": [(hid, s, p, 1000, None, False, True, pos, put[p], 0, pot if p == winner else 0,
                   (pot if p == winner else 0) - put[p], 1000 - put[p] + (pot if p == winner else 0), False)
                  for (s, p), pos in zip(seats, ("BTN", "SB", "BB"))],
        "actions": [(hid, *a) for a in acts],
        "hole_cards": [(hid, other, ["7c", "2d"], "dealt"), (hid, loser, ["Ah", "Ad"], "dealt"),
                       (hid, winner, ["9s", "8s"], "dealt")],
        "boards": [(hid, 1, ["Ks", "Qs", "2s", "3h", "4d"])],
        "collections": [(hid, 1, 0, winner, pot, "pot")],
        "table_events": [(hid, 20, other, "chat", f"gl {XSS1}"), (hid, 21, other, "sitting_out", None)],
    }


def _chat_hand() -> dict[str, list[tuple]]:
    """Hand 1011: RTL (button) folds, then chats before the cards, on the flop before EMO's check (the
    line a partner could use) and after the hand; EMO and ivan check it down."""
    rows = _hand("1011", 60, "Orion", EMO, "ivan", RTL, style="checkdown")
    rows["table_events"] = [("1011", 3, RTL, "chat", "gl all"), ("1011", 16, RTL, "chat", CHAT_LINE),
                            ("1011", 30, RTL, "chat", "gg <b>wp</b>")]
    return rows


#: heads-up matches: (hand, tournament, small blind, big blind, stack each, small blind's cards, big blind's or None:
#: the small blind folds). T3: EMO and ivan flip; T4: ivan plays kim and commits only queens.
HU_MATCH = [("2001", "T3", EMO, "ivan", 1500, ["Kc", "Qd"], None),
            ("2002", "T3", EMO, "ivan", 1500, ["7c", "2d"], ["8h", "3s"]),
            ("2003", "T3", EMO, "ivan", 1500, ["Jc", "Td"], None),
            ("2004", "T3", EMO, "ivan", 1500, ["9c", "4d"], ["6h", "2s"]),
            ("2005", "T3", EMO, "ivan", 150, ["5c", "3d"], ["Th", "2s"]),
            ("2006", "T3", EMO, "ivan", 1500, ["Ac", "Ad"], ["Kh", "Ks"]),
            ("2101", "T4", "kim", "ivan", 1500, ["Ah", "Kh"], ["Qc", "Qs"])]


def _hu_hand(i: int, hid: str, tour: str, sb: str, bb: str, stack: int, sb_cards: list[str],
             bb_cards: list[str] | None) -> dict[str, list[tuple]]:
    """One heads-up hand (blinds 10/20): the small blind folds, or shoves and the big blind calls all in and wins."""
    t = T0 + dt.timedelta(hours=4, minutes=i)
    acts = [(0, "preflop", sb, "post_sb", 10, None, False, 0, 0, 2), (1, "preflop", bb, "post_bb", 20, None, False, 10, 0, 2)]
    if bb_cards is None:
        acts.append((2, "preflop", sb, "fold", 0, None, False, 30, 10, 2))
        put, won = {sb: 10, bb: 10}, 20
    else:
        acts += [(2, "preflop", sb, "raise", stack - 10, stack, True, 30, 10, 2),
                 (3, "preflop", bb, "call", stack - 20, None, True, stack + 20, stack - 20, 2)]
        put, won = {sb: stack, bb: stack}, 2 * stack
    seats = [(hid, 1, sb, stack, None, False, True, "SB", put[sb], 0, 0, -put[sb], stack - put[sb], False),
             (hid, 2, bb, stack, None, False, True, "BB", put[bb], 0, won, won - put[bb], stack - put[bb] + won, False)]
    return {
        "hands": [(hid, "PokerStars", False, "holdem", False, "no_limit", "CHIPS", True, tour, "I", 10, 20, None, t,
                   str(t), t.date(), f"{tour} 1", 2, 1, 2, won, 0, False, True, None, "planted.txt", int(hid) % 1000,
                   f"h{hid}")],
        "seats": seats, "actions": [(hid, *a) for a in acts],
        "hole_cards": [(hid, sb, sb_cards, "dealt")] + ([(hid, bb, bb_cards, "dealt")] if bb_cards else []),
        "boards": [(hid, 1, ["Qs", "Js", "2c", "3h", "4s"])] if bb_cards else [],
        "collections": [(hid, 0, 0, bb, won, "pot")],
    }


HANDS_STAGE1 = [
    ("1001", 0, "Ursa", "amy", "bob", "zed", "dump", None),
    ("1002", 10, "Ursa", "amy", "bob", "zed", "dump", None),
    ("1003", 20, "Vega", "carl", "dan", "zed", "checkdown", None),
    ("1004", 30, "Vega", "dan", "carl", "zed", "checkdown", None),
    ("1005", 40, XSS2, XSS1, XSS2, "zed", "checkdown", None),
    ("1006", 50, "Lyra", "eve", "carl", "amy", "checkdown", "T1"),
]
HANDS_STAGE2 = [
    ("1007", 120, "Ursa", "amy", "bob", "zed", "dump", None),
    ("1008", 130, "Ursa", "amy", "bob", "zed", "dump", None),
    ("1009", 140, "Vega", "frank", "carl", "dan", "checkdown", None),
    ("1010", 150, "Lyra", "dan", "bob", "zed", "dump", "T2"),
]


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """One multi-row INSERT with bound parameters (DuckDB's executemany is slow row by row)."""
    one = "(" + ", ".join("?" for _ in rows[0]) + ")"
    con.execute(f"INSERT INTO {table} VALUES " + ", ".join(one for _ in rows), [v for r in rows for v in r])


def fill(con: duckdb.DuckDBPyConnection, stage: int) -> None:
    """Insert the hands, platform events and accounts of a stage (stage 2 includes stage 1)."""
    specs = HANDS_STAGE1 + (HANDS_STAGE2 if stage >= 2 else [])
    have = {r[0] for r in con.execute("SELECT hand_id FROM hands").fetchall()}
    for hid, minute, table, loser, winner, other, style, tour in specs:
        if hid in have:
            continue
        rows = _hand(hid, minute, table, loser, winner, other, style=style, tournament=tour)
        for tbl, vals in rows.items():
            insert(con, tbl, vals)
    if stage >= 2 and "1011" not in have:
        for rows in [_chat_hand()] + [_hu_hand(i, *h) for i, h in enumerate(HU_MATCH)]:
            for tbl, vals in rows.items():
                if vals:
                    insert(con, tbl, vals)
    if not con.execute("SELECT count(*) FROM accounts").fetchone()[0]:
        names = ["amy", "bob", "carl", "dan", "eve", "frank", "zed", XSS1, XSS2, RTL, EMO, "ivan", "kim"]
        insert(con, "accounts", [(a, T0 - dt.timedelta(days=30), "MT", "pay-shared" if a in (XSS1, XSS2) else f"pay-{i}",
                                  None) for i, a in enumerate(names)])
        insert(con, "sessions", [
            ("amy", "s1", "10.0.0.1", "dev-amy", T0 - dt.timedelta(minutes=5), T0 + dt.timedelta(hours=3)),
            ("bob", "s2", "10.0.0.1", "dev-bob", T0 - dt.timedelta(minutes=3), T0 + dt.timedelta(hours=3)),
            (XSS1, "s3", "10.0.0.9", "dev-x", T0, T0 + dt.timedelta(hours=1)),
            (XSS2, "s4", "10.0.0.9", "dev-x", T0 + dt.timedelta(minutes=1), T0 + dt.timedelta(hours=1)),
            ("eve", "s5", "10.0.0.5", "dev-eve", T0, T0 + dt.timedelta(minutes=45)),
            ("eve", "s6", "10.0.0.6", "dev-other", T0 + dt.timedelta(minutes=46), T0 + dt.timedelta(hours=2)),
        ])
        insert(con, "sit_events", [
            ("carl", T0 + dt.timedelta(minutes=25), "sit_out", "Vega", None),
            ("carl", T0 + dt.timedelta(minutes=28), "sit_in", "Vega", None),
        ])
        insert(con, "transfers", [(T0 + dt.timedelta(hours=2), "amy", "bob", 50, "USD")])


def signals(stage: int) -> list[Signal]:
    """The detectors' output on each night (all six kinds' assets write into `signals`)."""
    ev = lambda v, b, n, p: Evidence(  # noqa: E731
        name="chips lost to partner per hand", value=v, baseline=b, n=n, p_value=p,
        text="chips amy lost to bob per hand against amy's loss per hand to everyone else",
        sql="SELECT avg(-net) FROM seats WHERE player = 'amy'")
    s = [
        Signal(kind="chip_dumping", accounts=["amy", "bob"], score=0.90, flagged=True, p_value=0.001,
               summary="amy lost 400 chips to bob in 2 hands with aces", hands=["1001", "1002"],
               evidence=[ev(200.0, 3.5, 2, 0.001)], benign="variance: rejected, p = 0.001", detector="ChipDumping",
               extra={"edges": [{"src": "amy", "dst": "bob", "amount": 400, "label": "dumped"}]}),
        Signal(kind="soft_play", accounts=["carl", "dan"], score=0.70, flagged=True, p_value=0.01,
               summary="carl and dan check down every hand against each other", hands=["1003", "1004"],
               benign="cautious players: both bet 60% of flops against others", detector="SoftPlay"),
        Signal(kind="soft_play", accounts=["amy", "carl"], score=0.20, flagged=False, p_value=0.4,
               summary="amy and carl rarely raise each other", hands=["1006"], detector="SoftPlay"),
        Signal(kind="multi_accounting", accounts=[XSS1, XSS2], score=0.80, flagged=True, p_value=0.002,
               summary=f"{XSS1} and {XSS2} share device dev-x", hands=["1005"], detector="MultiAccounting",
               extra={"edges": [[XSS1, XSS2, 1]]}),
        Signal(kind="seat_handoff", accounts=["eve"], tournaments=["T1"], score=0.60, flagged=True,
               summary="eve's seat changed device mid-event in T1", hands=["1006"], detector="SeatHandoff",
               extra={"change_point_hand": "1006"}),
    ]
    if stage >= 2:
        s[0] = Signal(kind="chip_dumping", accounts=["amy", "bob"], score=0.95, flagged=True, p_value=0.0001,
                      summary="amy lost 800 chips to bob in 4 hands with aces", hands=["1007", "1001", "1002", "1008"],
                      evidence=[ev(200.0, 3.5, 4, 0.0001)], benign="variance: rejected", detector="ChipDumping")
        s.append(Signal(kind="soft_play", accounts=["carl", "dan", "frank"], score=0.72, flagged=True, p_value=0.01,
                        summary="carl, dan and frank never bet into each other", hands=["1009", "1003"],
                        detector="SoftPlay"))
        s.append(Signal(kind="bounty_collusion", accounts=["bob", "dan"], tournaments=["T2"], score=0.65,
                        flagged=True, summary="dan shipped his stack and bounty to bob", hands=["1010"],
                        detector="BountyCollusion"))
        s += [
            Signal(kind="hand_chat", accounts=[RTL, EMO], score=0.3, flagged=True, p_value=0.004,
                   summary=f"{RTL} -> {EMO}: chat about the hand in play in 1 hand", hands=["1011"], detector="HandChat",
                   evidence=[Evidence("hands with card talk in play the partner could use", 1.0, 0.01, 3, 0.004,
                                      f"{RTL} spoke of cards with {EMO} still in")],
                   extra={"lines": [{"hand_id": "1011", "line": 16, "said": CHAT_LINE,
                                     "before": f"{EMO}: check (flop)", "partner_next": "check (flop)"}],
                          "sql_params": {"player": RTL, "opponent": EMO}, "edges": [[RTL, EMO]]}),
            Signal(kind="heads_up_flipping", accounts=sorted([EMO, "ivan"]), tournaments=["T3"], score=0.25,
                   flagged=True, p_value=0.005, summary=f"{EMO} and ivan: 2 weak flips in 5 heads-up hands",
                   hands=["2002", "2004"], detector="HeadsUpFlipping", extra={"edges": [[EMO, "ivan"]]}),
        ]
    return s


def write_signals(con: duckdb.DuckDBPyConnection, sigs: list[Signal], run_id: str) -> None:
    """What each `<kind>_signals` asset does: replace its kind's rows in `signals`."""
    now = dt.datetime(2026, 3, 5)
    con.execute("DELETE FROM signals")
    insert(
        con, "signals",
        [(s.kind, s.detector, s.accounts, s.tournaments, s.score, s.p_value, s.flagged, s.hands, s.summary,
          json.dumps(s.to_dict()), run_id, now, s.q_value) for s in sigs])


def build(path: Path, stage: int, run_id: str = "run1") -> None:
    con = new_warehouse(path) if not path.exists() else duckdb.connect(str(path))
    try:
        fill(con, 1)
        if stage >= 2:
            fill(con, 2)
        write_signals(con, signals(stage), run_id)
    finally:
        con.close()


PASSWORD = "correct horse battery"


def nightly(folder: Path, stage: int, run_id: str) -> list[dict]:
    """What the cases and warehouse_snapshot assets do, without Dagster: build cases, write tables, publish."""
    from pipelines.lib.warehouse import publish_snapshot as publish

    wh = folder / "warehouse.duckdb"
    build(wh, stage, run_id)
    con = duckdb.connect(str(wh))
    try:
        with ReviewStore(folder / "review.sqlite") as store:
            result, _ = cases_lib.publish_cases(con, store, run_id, folder / "out" / "cases.jsonl")
        publish(con, folder / "snapshot" / "warehouse.duckdb")
    finally:
        con.close()
    return result
