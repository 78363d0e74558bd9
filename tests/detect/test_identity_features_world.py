"""A small hand-built warehouse for the identity, hand-off and sit-out tests.

Not the synthetic world of ``datasets/`` (which must not know how it is
judged): a few dozen accounts with known styles, sessions and tournaments,
written straight into a DuckDB with ``pipelines/lib/schema.sql``, so the tests
can plant a group, plant its honest look-alike and assert exact outcomes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

SCHEMA = Path(__file__).resolve().parents[2] / "pipelines" / "lib" / "schema.sql"
T0 = dt.datetime(2026, 3, 4, 18, 0, 0)


@dataclass
class Style:
    vpip: float = 0.25
    pfr: float = 0.15
    aggr: float = 0.4
    size: float = 0.66  # bet as a fraction of the pot
    log_ms: float = 8.0  # mean log milliseconds per decision
    sd_ms: float = 0.5


def random_style(rng: np.random.Generator) -> Style:
    vpip = rng.uniform(0.12, 0.55)
    return Style(
        vpip=vpip,
        pfr=vpip * rng.uniform(0.2, 0.85),
        aggr=rng.uniform(0.15, 0.75),
        size=float(rng.choice([0.33, 0.5, 0.66, 0.75, 1.0, 1.5])) * rng.uniform(0.9, 1.1),
        log_ms=rng.uniform(7.0, 9.6),
        sd_ms=rng.uniform(0.3, 0.8),
    )


def regular_style(rng: np.random.Generator) -> Style:
    """A regular's style for the seat hand-off worlds: VPIP 0.18-0.32, raise 0.14, aggression 0.35-0.6, a pace
    between 1.6 and 4.4 s (log ms 7.4-8.4)."""
    return Style(vpip=float(rng.uniform(0.18, 0.32)), pfr=0.14, aggr=float(rng.uniform(0.35, 0.6)),
                 size=0.66, log_ms=float(rng.uniform(7.4, 8.4)), sd_ms=0.4)


@dataclass
class World:
    seed: int = 0
    styles: dict[str, Style] = field(default_factory=dict)
    rows: dict[str, list] = field(default_factory=dict)
    _hand_no: int = 100_000

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        for t in ("hands", "seats", "actions", "table_events", "tournaments", "tournament_finishes",
                  "sessions", "sit_events", "registrations", "decisions", "accounts"):
            self.rows[t] = []

    # ---------------------------------------------------------- accounts, sessions
    def account(self, name: str, style: Style | None = None, payment: str | None = None,
                country: str = "DE") -> Style:
        st = style or random_style(self.rng)
        self.styles[name] = st
        self.rows["accounts"].append((name, T0 - dt.timedelta(days=30), country, payment, None))
        return st

    def accounts(self, prefix: str, n: int) -> list[str]:
        """``n`` accounts ``<prefix>00``, ``<prefix>01``, ... with random styles (:meth:`account`); their names."""
        names = [f"{prefix}{i:02d}" for i in range(n)]
        for name in names:
            self.account(name)
        return names

    def session(self, account: str, ip: str | None, device: str | None,
                t0: dt.datetime, t1: dt.datetime | None) -> None:
        n = sum(1 for r in self.rows["sessions"] if r[0] == account)
        self.rows["sessions"].append((account, f"{account}-s{n}", ip, device, t0, t1))

    # ---------------------------------------------------------- tournaments
    def tournament(
        self,
        tid: str,
        players: list[str],
        start: dt.datetime,
        n_hands: int = 60,
        every_s: int = 45,
        paid: int = 3,
        *,
        styles_from: dict[str, tuple[int, Style]] | None = None,
        sitouts: dict[str, list[tuple[int, int]]] | None = None,
        events: bool = True,
        register: bool = True,
        bust_order: list[str] | None = None,
        timeouts: dict[str, list[tuple[int, int]]] | None = None,
        bounty_kind: str = "none",
    ) -> list[str]:
        """Play ``n_hands`` rounds of hands at tables of up to 9; returns hand ids.

        ``styles_from[acc] = (round, style)`` switches the account's play from
        that round on (a seat hand-off); ``sitouts[acc] = [(r0, r1), ...]`` has
        the account sit out rounds r0..r1-1 (events and hand lines);
        ``timeouts`` likewise but seen only in the hands, as
        ``timed_out_disconnected`` lines (a disconnect: no platform event);
        ``bounty_kind`` ('knockout', 'progressive') makes it a knockout event.
        """
        rng = self.rng
        styles_from = styles_from or {}
        sitouts = sitouts or {}
        self._timeouts = timeouts or {}
        order = bust_order or list(rng.permutation(players))
        # bust: the first len-1 of `order` are eliminated evenly over the event
        n = len(players)
        bust_round = {p: int((i + 1) * n_hands / n) for i, p in enumerate(order[:-1])}
        bust_round[order[-1]] = n_hands + 1
        n_tab = -(-n // 9)
        tables = [players[i::n_tab] for i in range(n_tab)]  # balanced tables of at most 9
        hand_ids: list[str] = []
        round_hand: dict[int, str] = {}
        if register:
            for p in players:
                self.rows["registrations"].append((p, start - dt.timedelta(minutes=10), "register", tid))
        first = last = None
        for ti, tab in enumerate(tables):
            for r in range(n_hands):
                live = [p for p in tab if bust_round[p] > r]
                if len(live) < 2:
                    break
                ts = start + dt.timedelta(seconds=r * every_s + ti * 3)
                first = ts if first is None or ts < first else first
                last = ts if last is None or ts > last else last
                self._hand_no += 1
                hid = str(self._hand_no)
                hand_ids.append(hid)
                round_hand.setdefault(r, hid)
                self._hand(hid, tid, f"T{tid} {ti + 1}", ts, live, r, styles_from, sitouts, events)
        # sit events from the planted intervals
        if events:
            for p, ivs in sitouts.items():
                for r0, r1 in ivs:
                    ti = next(i for i, t in enumerate(tables) if p in t)
                    t_out = start + dt.timedelta(seconds=r0 * every_s + ti * 3 - 5)
                    t_in = start + dt.timedelta(seconds=r1 * every_s + ti * 3 - 5)
                    self.rows["sit_events"].append((p, t_out, "sit_out", f"T{tid} {ti + 1}", tid))
                    self.rows["sit_events"].append((p, t_in, "sit_in", f"T{tid} {ti + 1}", tid))
        self.rows["tournaments"].append((tid, 10, 5 if bounty_kind != "none" else 0, 1, "USD", bounty_kind, "holdem",
                                         "no_limit", first, last))
        last_hand = hand_ids[-1]
        for place, p in enumerate(reversed(order), start=1):
            prize = {1: 50, 2: 30, 3: 20}.get(place) if place <= paid else None
            r = min(bust_round[p], n_hands) - 1
            # the hand of the bust: a hand of the last round the player was in
            hid = round_hand.get(r, last_hand) if place > 1 else last_hand
            self.rows["tournament_finishes"].append((tid, p, place, prize, hid))
        return hand_ids

    def _hand(self, hid, tid, table, ts, live, r, styles_from, sitouts, events) -> None:
        rng = self.rng
        k = len(live)
        self.rows["hands"].append((
            hid, "PokerStars", False, "holdem", False, "no_limit", "CHIPS", True, tid, "I",
            10, 20, None, ts, None, ts.date(), table, 9, 1, k, 0, 0, False, True, None, "gen.txt", 1, hid,
        ))
        seq = 0
        pot = 0.0
        line = 0
        acts: list[tuple] = []
        for i, p in enumerate(live):
            out = any(a <= r < b for a, b in sitouts.get(p, []))
            self.rows["seats"].append((hid, i + 1, p, 1500, None, out, True, None, 0, 0, 0, 0, 1500, False))
            if out:
                self.rows["table_events"].append((hid, line, p, "sitting_out", None))
                line += 1
            if any(a <= r < b for a, b in self._timeouts.get(p, [])):
                self.rows["table_events"].append((hid, line, p, "timed_out_disconnected", None))
                line += 1
        # blinds
        for i, (p, amt, a) in enumerate([(live[0], 10, "post_sb"), (live[1], 20, "post_bb")]):
            acts.append((hid, seq, "preflop", p, a, amt, None, False, pot, 0, k))
            pot += amt
            seq += 1
        to_call = 20.0
        in_hand = []
        for p in live[2:] + live[:2]:
            st = self._style(p, r, styles_from)
            out = any(a <= r < b for a, b in sitouts.get(p, []) + self._timeouts.get(p, []))
            u = rng.random()
            if out or u > st.vpip:
                a, amt, rt = "fold", 0.0, None
            elif u < st.pfr:
                rt = to_call * 3
                a, amt = "raise", rt
                to_call = rt
            else:
                a, amt, rt = "call", to_call, None
            acts.append((hid, seq, "preflop", p, a, amt, rt, False, pot, to_call if a != "raise" else 0, k))
            if not out:
                self._decision(hid, seq, p, st, ts, seq)
            pot += amt
            seq += 1
            if a != "fold":
                in_hand.append(p)
        for p in in_hand:
            st = self._style(p, r, styles_from)
            if rng.random() < st.aggr:
                amt = round(pot * st.size * rng.uniform(0.95, 1.05), 2)
                acts.append((hid, seq, "flop", p, "bet", amt, None, False, pot, 0, len(in_hand)))
            else:
                amt = 0.0
                acts.append((hid, seq, "flop", p, "check", 0, None, False, pot, 0, len(in_hand)))
            self._decision(hid, seq, p, st, ts, seq)
            pot += amt
            seq += 1
        self.rows["actions"].extend(acts)

    def _style(self, p, r, styles_from) -> Style:
        if p in styles_from and r >= styles_from[p][0]:
            return styles_from[p][1]
        return self.styles[p]

    def _decision(self, hid, seq, p, st, ts, k) -> None:
        ms = int(np.exp(self.rng.normal(st.log_ms, st.sd_ms)))
        self.rows["decisions"].append((hid, seq, p, ms, ts + dt.timedelta(seconds=2 * k)))

    # ---------------------------------------------------------- write
    def build(self, path: str | None = None, *, drop_events: bool = False) -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(path or ":memory:")
        con.execute(SCHEMA.read_text())
        for table, rows in self.rows.items():
            if not rows or (drop_events and table in ("sessions", "sit_events", "registrations", "decisions")):
                continue
            cols = [c[0] for c in con.execute(f"DESCRIBE {table}").fetchall()]
            df = pl.DataFrame([list(r) for r in rows], schema=cols, orient="row", infer_schema_length=None)
            con.register("_df", df)
            con.execute(f"INSERT INTO {table} SELECT * FROM _df")
            con.unregister("_df")
        return con


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def event_rows(det, tournament_id: str) -> dict:
    """A fitted SeatHandoffDetector's candidate rows of one tournament, by account (its ``scores_``)."""
    return {r["account"]: r for r in det.scores_.iter_rows(named=True) if r["tournament_id"] == tournament_id}
