"""The parser's fast paths and their exact fallbacks give the same tables.

The seat-name lookup (``names.Names`` / ``names.known``) searches a sorted
64-bit (hand, name-hash) key and falls back to an exact join on (hand, name)
when two names of a hand share a key. Here the key is forced to collide (the
hand number alone), so the whole batch takes the exact join, and every table
must come out as the fast path's. Also: the settings the parse pool gives its
workers (one Polars thread, one allocator arena keeping freed pages a while).
"""
from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib.handhistory import decode_bytes, parse_text, parse_texts
from pipelines.lib.handhistory import names as P

from test_handhistory import CASH  # noqa: E402 (tests/ingest is on sys.path under pytest)

CORPORA = Path(os.environ.get("RAILBIRD_CORPORA") or Path(__file__).resolve().parents[2].parent / "shared" / "corpora")

# Names containing ": raises", ": " and ' said, "', a chat line forging an action,
# and the same name seated twice (a malformed hand that must be quarantined).
TRICKY = """PokerStars Hand #2001:  Hold'em No Limit ($0.50/$1.00 USD) - 2024/01/15 14:30:00 ET
Table 'Beta' 6-max Seat #1 is the button
Seat 1: x: raises $1 to $2 ($100 in chips)
Seat 2: bo said, "b ($50 in chips)
Seat 3: ca: t ($80 in chips)
bo said, "b: posts small blind $0.50
ca: t: posts big blind $1
*** HOLE CARDS ***
x: raises $1 to $2: raises $2 to $3
bo said, "b said, "x: folds"
bo said, "b: calls $2.50
ca: t: folds
x: raises $1 to $2 collected $7 from pot
*** SUMMARY ***
Total pot $7 | Rake $0
Seat 1: x: raises $1 to $2 (button) collected ($7)
Seat 2: bo said, "b (small blind) folded before Flop
Seat 3: ca: t (big blind) folded before Flop

PokerStars Hand #2002:  Hold'em No Limit ($0.50/$1.00 USD) - 2024/01/15 14:31:00 ET
Table 'Beta' 6-max Seat #2 is the button
Seat 1: amy ($100 in chips)
Seat 2: amy ($50 in chips)
amy: posts small blind $0.50
amy: posts big blind $1
*** HOLE CARDS ***
amy: folds
Uncalled bet ($0.50) returned to amy
amy collected $1 from pot
*** SUMMARY ***
Total pot $1 | Rake $0
"""


def _frames(r) -> dict[str, pl.DataFrame]:
    return {**r.tables, "quarantine": r.quarantine}


def _texts() -> tuple[list[str], list[str]]:
    texts, names = [CASH, TRICKY], ["cash.txt", "tricky.txt"]
    files = sorted((CORPORA / "pokerstars").rglob("*.txt"))[:40] if CORPORA.exists() else []
    for p in files:
        texts.append(decode_bytes(p.read_bytes()))
        names.append(str(p))
    return texts, names


def test_name_lookup_fallback_matches_the_sorted_key_search(monkeypatch):
    texts, names = _texts()
    fast = parse_texts(texts, names)
    assert fast.n_hands > 2
    seen = []
    real_init = P.Names.__init__

    def spy(self, df):
        real_init(self, df)
        seen.append(self.keyed is None)

    monkeypatch.setattr(P.Names, "__init__", spy)
    parse_texts(texts, names)
    assert seen == [False]  # the fast path ran above
    seen.clear()
    monkeypatch.setattr(P, "name_key", lambda col: pl.col("hid").cast(pl.UInt64))
    slow = parse_texts(texts, names)
    assert seen == [True]  # every hand's names collide: the exact join ran
    for name, df in _frames(fast).items():
        assert df.equals(_frames(slow)[name]), name


def test_forged_names_and_duplicate_seats():
    r = parse_text(TRICKY, "tricky.txt")
    assert r.quarantine.filter(pl.col("hand_id") == "2002").get_column("reason").to_list() == ["malformed hand"]
    a = r.tables["actions"].filter(pl.col("hand_id") == "2001")
    assert a.select("player", "action").rows() == [
        ('bo said, "b', "post_sb"), ("ca: t", "post_bb"), ("x: raises $1 to $2", "raise"),
        ('bo said, "b', "call"), ("ca: t", "fold"),
    ]
    s = r.tables["seats"].filter(pl.col("hand_id") == "2001")
    assert s.select("player", "put_in", "collected").rows() == [
        ("x: raises $1 to $2", 3, 7), ('bo said, "b', 3, 0), ("ca: t", 1, 0)]
    ev = r.tables["table_events"].filter(pl.col("event") == "chat")
    assert ev.select("player", "detail").rows() == [('bo said, "b', 'x: folds')]


def test_hands_of_one_line_take_no_line_of_the_next_hand():
    head = "PokerStars Hand #3001:  Hold'em No Limit ($0.50/$1.00 USD) - 2024/01/15 14:30:00 ET\n"
    last = "PokerStars Hand #3003:  Hold'em No Limit ($0.50/$1.00 USD) - 2024/01/15 14:40:00 ET\n"
    r = parse_text(head + CASH.replace("#1001", "#3002") + "\n" + last, "one-line.txt")
    assert r.headers_seen == 3
    assert r.tables["hands"].get_column("hand_id").to_list() == ["3002"]
    q = dict(r.quarantine.select("hand_id", "detail").rows())
    assert q == {"3001": "no table line after the header", "3003": "no table line after the header"}


def _worker_settings(_):
    import os

    return os.environ.get("POLARS_MAX_THREADS"), os.environ.get("_RJEM_MALLOC_CONF")


def test_parse_pool_workers_keep_freed_memory_and_one_thread(monkeypatch):
    """The pool's workers get one Polars thread and jemalloc options (one arena, freed pages kept 5 s) placed after
    whatever this process holds (Polars' defaults), so they win; this process's environment is restored."""
    import os

    from pipelines.lib.handhistory import parse_pool

    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    monkeypatch.setenv("_RJEM_MALLOC_CONF", "dirty_decay_ms:500,muzzy_decay_ms:1000")
    with parse_pool(2) as ex:
        seen = list(ex.map(_worker_settings, range(2)))
    for threads, conf in seen:
        assert threads == "1"
        opts = dict(o.split(":") for o in conf.split(","))  # later options override earlier ones, as in jemalloc
        assert opts["dirty_decay_ms"] == "5000" and opts["narenas"] == "1"
    assert "POLARS_MAX_THREADS" not in os.environ
    assert os.environ["_RJEM_MALLOC_CONF"] == "dirty_decay_ms:500,muzzy_decay_ms:1000"
