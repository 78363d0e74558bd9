"""The record of one world B run: hand files, platform events, play intervals.

:class:`World` hands out hand and table ids, buffers each table's hands until
the table closes and writes them as PokerStars text, keeps the platform
events (decisions, sit-outs, registrations, transfers), and the intervals in
which each account played, from which :func:`sessions_to_events` makes the
login/logout events: overlapping or close intervals are one client session
on one device; a ``switch`` (a device change or a seat hand-off) ends one
session and starts another on the given device and network.
"""

from __future__ import annotations

import json
from pathlib import Path

from .text import iso_utc


class World:
    """Ids, buffers and event log of one generated population."""

    def __init__(self, rng, out: Path, t0: float, accts):
        self.rng, self.out, self.t0, self.accts = rng, out, t0, accts
        self.events: list = []
        self.intervals: dict = {}
        self.switches: dict = {}
        self.n_hands = 0
        self.balance_errors = 0
        self.serial = 0
        self.files: dict = {}
        self.handoff_first: dict = {}
        self.sitlog: list = []
        self.hid_base = 230_000_000_000 + rng.randint(0, 9_000_000) * 1000

    def day_of(self, ts: float) -> str:
        """UTC date of ``ts`` as ``YYYY-MM-DD``."""
        return iso_utc(ts)[:10]

    def table_serial(self) -> int:
        """A small number unique to a table, folded into its hand ids."""
        self.serial += 1
        return self.serial % 997

    def hand_id(self, ts: float, serial: int) -> int:
        """Hand number rising with time, unique per table second: ``base + seconds*1000 + serial``."""
        return self.hid_base + int(ts - self.t0) * 1000 + serial

    def write_hand(self, key: str, lines: list) -> None:
        """Append one hand's lines to file ``key`` (a relative path)."""
        self.files.setdefault(key, []).append("\n".join(lines))
        self.n_hands += 1

    def flush(self, key: str) -> None:
        """Write file ``key`` now and forget its buffer."""
        hands = self.files.pop(key, None)
        if not hands:
            return
        p = self.out / key
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "a", encoding="utf-8", newline="\n") as f:
            f.write("\n\n\n".join(hands) + "\n\n\n")

    def event(self, ts: float, typ: str, account: str, **kw) -> None:
        """One platform event (``ts`` unix seconds)."""
        d = {"ts": iso_utc(ts), "type": typ, "account": account}
        d.update(kw)
        self.events.append((ts, json.dumps(d, ensure_ascii=False)))

    def decisions(self, ts: float, hid: int, names, agents, decs, rng) -> None:
        """Decision events of one hand, a few seconds apart from ``ts``."""
        t = ts
        for idx, i, code in decs:
            ms = 15000 + rng.randint(0, 14000) if code == "timeout" else agents[i].ms(rng, code)
            t += ms / 1000.0
            self.events.append((t, json.dumps({"ts": iso_utc(t), "type": "decision", "account": names[i],
                                               "hand": str(hid), "action": idx, "ms": ms}, ensure_ascii=False)))

    def interval(self, acct, a: float, b: float) -> None:
        """Account ``acct`` played from ``a`` to ``b`` (unix seconds)."""
        self.intervals.setdefault(acct.name, []).append((a, b))

    def switch(self, acct, ts: float, device: str, ip: str, gap: float) -> None:
        """The account's client logs out at ``ts - gap`` and in again at ``ts`` on ``device`` from ``ip``."""
        self.switches.setdefault(acct.name, []).append((ts, device, ip, gap))


def sessions_to_events(w: World) -> None:
    """Login/logout events from each account's play intervals and switches."""
    rng = w.rng
    by_name = {a.name: a for a in w.accts}
    for name, iv in sorted(w.intervals.items()):
        a = by_name[name]
        iv.sort()
        merged = []
        for s, e in iv:
            if merged and s - merged[-1][1] < 1200:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        sw = sorted(w.switches.get(name, []))
        for s, e in merged:
            dev = a.devices[0] if rng.random() < 0.7 else rng.choice(a.devices)
            ip = a.ip
            start = s - rng.uniform(20, 400)
            for ts, d2, ip2, gap in sw:
                if s <= ts <= e:
                    _session(w, a, start, ts - gap, dev, ip)
                    start, dev, ip = ts, d2, ip2
            _session(w, a, start, e + rng.uniform(10, 300), dev, ip)


def _session(w: World, a, start: float, end: float, dev: str, ip: str) -> None:
    sid = f"s{w.rng.getrandbits(40):010x}"
    w.event(start, "login", a.name, session=sid, ip=ip, device=dev)
    w.event(end, "logout", a.name, session=sid)


def write_events(w: World) -> int:
    """Events as JSON lines, one file per UTC day, in time order; returns the count.

    Events are held as (unix seconds, encoded line) pairs: a quarter of the
    memory of dicts at a million events.
    """
    w.events.sort(key=lambda e: e[0])
    files: dict = {}
    for ts, line in w.events:
        files.setdefault(line[8:18], []).append(line)
    for day, lines in files.items():
        p = w.out / "events" / f"events-{day}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(w.events)
