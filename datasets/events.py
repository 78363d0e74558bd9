"""Platform events as a room exports them (``events/*.jsonl``).

Method. Every simulation unit (a cash table, a tournament) and the planner
collect events as compact tuples ``(ts_ms, type, account, fields)`` in an
:class:`EventLog`. On writing, the log is split at random over a few part
files and each event's position is jittered by a small random delay before
sorting, so files hold interleaved, slightly out-of-order streams as a real
export does (the timestamps themselves are the true ones). Formats follow
``inputs.md``: ``ts`` is ISO-8601 UTC with milliseconds and a ``Z``.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone
from pathlib import Path

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def to_ms(dt: datetime) -> int:
    return int((dt - EPOCH).total_seconds() * 1000)


def iso_ms(ms: int) -> str:
    """``2026-03-04T21:15:20.120Z`` for epoch milliseconds."""
    sec, milli = divmod(int(ms), 1000)
    dt = datetime.fromtimestamp(sec, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{milli:03d}Z"


def iso_s(ms: int) -> str:
    """``2026-03-04T21:15:20Z`` (labels' from/to)."""
    return datetime.fromtimestamp(int(ms) // 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventLog:
    """An append-only list of events of one unit or of the planner."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def add(self, ts_ms: int, type_: str, account: str, **fields) -> None:
        self.rows.append((int(ts_ms), type_, account, fields))

    def login(self, ts_ms: int, account: str, session: str, ip: str, device: str) -> None:
        self.rows.append((int(ts_ms), "login", account, {"session": session, "ip": ip, "device": device}))

    def logout(self, ts_ms: int, account: str, session: str) -> None:
        self.rows.append((int(ts_ms), "logout", account, {"session": session}))

    def sit_out(self, ts_ms: int, account: str, table: str, tournament: str | None) -> None:
        self.rows.append((int(ts_ms), "sit_out", account, {"table": table, "tournament": tournament}))

    def sit_in(self, ts_ms: int, account: str, table: str, tournament: str | None) -> None:
        self.rows.append((int(ts_ms), "sit_in", account, {"table": table, "tournament": tournament}))

    def decision(self, ts_ms: int, account: str, hand: str, action: int, ms: int) -> None:
        self.rows.append((int(ts_ms), "decision", account, {"hand": hand, "action": action, "ms": int(ms)}))

    def extend(self, other: "EventLog") -> None:
        self.rows.extend(other.rows)


_DAY_CACHE: dict[int, str] = {}


def _iso_fast(ms: int) -> str:
    """``iso_ms`` with the date part cached per day and the clock computed by integer arithmetic."""
    day, rem = divmod(int(ms), 86_400_000)
    base = _DAY_CACHE.get(day)
    if base is None:
        base = datetime.fromtimestamp(day * 86_400, tz=timezone.utc).strftime("%Y-%m-%dT")
        _DAY_CACHE[day] = base
    sec, milli = divmod(rem, 1000)
    h, sec = divmod(sec, 3600)
    m, sec = divmod(sec, 60)
    return f"{base}{h:02d}:{m:02d}:{sec:02d}.{milli:03d}Z"


def event_line(row: tuple) -> str:
    """One JSON line; decisions (most of the volume) are formatted directly."""
    ts, type_, account, fields = row
    if type_ == "decision":
        return (f'{{"ts":{json.dumps(_iso_fast(ts))},"type":"decision","account":{json.dumps(account)},'
                f'"hand":{json.dumps(str(fields["hand"]))},"action":{int(fields["action"])},"ms":{int(fields["ms"])}}}')
    obj = {"ts": _iso_fast(ts), "type": type_, "account": account}
    obj.update(fields)
    return json.dumps(obj, separators=(",", ":"))


def write_events(rows: list[tuple], out_dir: Path, stem: str, rng: random.Random, parts: int = 2, max_skew_ms: int = 4000) -> list[Path]:
    """Write ``rows`` to ``parts`` files ``<stem>-<k>.jsonl``, shuffled and slightly out of order.

    Each event goes to a random part; within a part, events are ordered by
    ``ts + U(0, max_skew_ms)`` (export batching), so neighbours can swap but
    the stream is roughly chronological. Deterministic for ``rng``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    buckets: list[list[tuple[int, int, tuple]]] = [[] for _ in range(parts)]
    for i, row in enumerate(rows):
        buckets[rng.randrange(parts)].append((row[0] + rng.randrange(max_skew_ms + 1), i, row))
    paths = []
    for k, bucket in enumerate(buckets):
        if not bucket:
            continue
        bucket.sort(key=lambda t: (t[0], t[1]))
        path = out_dir / f"{stem}-{k}.jsonl"
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            for _, _, row in bucket:
                fh.write(event_line(row))
                fh.write("\n")
        paths.append(path)
    return paths


def check_hand(rec) -> None:
    """Raise AssertionError unless the hand balances to the chip.

    ``sum(put in) - uncalled == total pot == sum(collected) + rake``, the pots'
    rakes add up, and every player dealt in ends with
    ``start - put in + returned + collected >= 0`` (players sitting out keep
    their stacks and are not part of the sums).
    """
    ret = rec.uncalled[1] if rec.uncalled else 0
    total = sum(p.amount for p in rec.pots)
    assert sum(rec.put_in.values()) - ret == total, ("put in", rec.hand_id)
    assert sum(c.amount for c in rec.collections) + rec.rake == total, ("collected", rec.hand_id)
    assert sum(p.rake for p in rec.pots) == rec.rake, ("rake", rec.hand_id)
    start = {s.player: s.stack for s in rec.seats}
    won: dict[str, int] = {}
    for c in rec.collections:
        won[c.player] = won.get(c.player, 0) + c.amount
    for p in rec.dealt:
        back = won.get(p, 0) + (ret if rec.uncalled and rec.uncalled[0] == p else 0)
        fin = rec.final_stacks[p]
        assert fin == start[p] - rec.put_in.get(p, 0) + back and fin >= 0, ("stack", rec.hand_id, p)
    assert sum(start[p] for p in rec.dealt) - rec.rake == sum(rec.final_stacks.values()), ("chips", rec.hand_id)


class HandSink:
    """Where one unit's hands go: the text file, the decision events, the label hits.

    :meth:`record` checks each :class:`HandRecord` balances to the chip
    (``check_balance``), writes its PokerStars text (operator view, or the
    player view of one dealt-in player drawn at random), turns the policies'
    decision log into ``decision`` events timed from the hand's start, and
    returns the hand's duration in ms (dealing and street overheads plus the
    players' thinking times).
    """

    def __init__(self, fh, events: EventLog, view: str, rng: random.Random, on_record=None):
        from datasets.hhwriter import write_hand  # the engine engineer's writer

        self._write_hand = write_hand
        self.fh = fh
        self.events = events
        self.view = view
        self.rng = rng
        self.hands = 0
        self.on_record = on_record
        self.hits: dict[str, list[tuple[str, int, str | None]]] = {}
        self.chat = None  # datasets.chat.ChatWriter: adds a hand's chat lines before it is written

    def hit(self, group: str, hand_id: str, ts_ms: int, tournament: str | None) -> None:
        lst = self.hits.setdefault(group, [])
        if not lst or lst[-1][0] != hand_id:
            lst.append((hand_id, ts_ms, tournament))

    def record(self, rec, start_ms: int, decisions: list[tuple[int, str, int]], auto_ms: dict | None = None) -> int:
        check_hand(rec)
        if self.chat is not None:
            self.chat(rec, start_ms, self)
        if self.on_record is not None:
            self.on_record(rec)
        if self.view == "operator":
            text = self._write_hand(rec, view="operator")
        else:
            text = self._write_hand(rec, view="player", hero=self.rng.choice(rec.dealt))
        self.fh.write(text)
        self.fh.write("\n\n\n")
        self.hands += 1
        # timing (client animations included): 12 s to shuffle, deal and post, 4 s per street dealt,
        # the players' ms per decision, 5 s showdown, 6 s to push the pot and start again
        t = start_ms + 12000
        by_seq = {seq: (player, ms) for seq, player, ms in decisions}
        street = 0
        hid = rec.hand_id
        for a in rec.actions:
            if a.street != street:
                t += 4000 * (a.street - street)
                street = a.street
            if a.kind in ("fold", "check", "call", "bet", "raise"):
                pm = by_seq.get(a.seq)
                if pm is None:  # the engine acted for a player sitting out: instant
                    ms = 5 + (a.seq * 7919) % 40
                    player = a.player
                else:
                    player, ms = pm
                t += ms
                self.events.rows.append((t, "decision", player, {"hand": hid, "action": a.seq, "ms": ms}))
        if rec.showdown:
            t += 5000
        return t - start_ms + 6000
