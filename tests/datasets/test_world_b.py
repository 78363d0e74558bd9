"""World B (datasets/world_b): determinism, clean ingest, labels, money balance, honest-only.

The money check reads the written text back with its own small reader, not the
engine's figures: every chip put in (posts, calls, bets, raises, less uncalled
bets) equals the summary's total pot, and the pot equals what was collected
plus the rake.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from datasets.world_b import generate
from pipelines.lib import ingest as _ingest
from pipelines.lib import warehouse as wh

KINDS = {"soft_play", "chip_dumping", "coordinated_sitout", "bounty_collusion", "multi_accounting", "seat_handoff"}
HANDS = 1500


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("world_b")
    return out, generate(out, seed=11, hands=HANDS)


def _digest(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _hands(root: Path):
    for p in sorted(root.rglob("*.txt")):
        for block in p.read_text(encoding="utf-8").split("\n\n\n"):
            if block.strip():
                yield block.strip("\n")


def test_same_seed_same_files_other_seed_other_files(world, tmp_path):
    out, summary = world
    env = dict(os.environ, PYTHONHASHSEED="4321")  # another process, another hash order
    run = subprocess.run([sys.executable, "-m", "datasets.world_b", "--out", str(tmp_path / "again"), "--seed", "11",
                          "--hands", str(HANDS)], env=env, capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    again = json.loads(run.stdout)
    assert {k: v for k, v in again.items() if k != "seconds"} == summary
    assert _digest(tmp_path / "again") == _digest(out)
    generate(tmp_path / "other", seed=12, hands=800)
    assert _digest(tmp_path / "other") != _digest(out)


def test_everything_ingests_with_nothing_quarantined(world, tmp_path):
    out, summary = world
    con = wh.connect(str(tmp_path / "w.duckdb"))
    try:
        _ingest.ingest([str(out)], con, growing_seconds=0, progress=False)
        rows = con.execute("SELECT reason, count(*) FROM quarantine GROUP BY ALL").fetchall()
        n = con.execute("SELECT count(*) FROM hands").fetchone()[0]
    finally:
        con.close()
    assert rows == []
    assert n == summary["hands"] > 0


def test_labels_name_accounts_that_exist_and_played(world):
    out, summary = world
    with open(out / "accounts.csv", encoding="utf-8", newline="") as f:
        accounts = {r["account"] for r in csv.DictReader(f)}
    seated, tournaments = set(), set()
    for h in _hands(out / "hh"):
        seated.update(re.findall(r"^Seat \d+: (.+?) \(\$?[\d.]+ in chips", h, flags=re.M))
        tournaments.update(re.findall(r"Tournament #(\d+),", h))
    labels = [json.loads(x) for x in (out / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(labels) == summary["groups"] >= 6
    assert {d["kind"] for d in labels} == KINDS
    assert len({d["group"] for d in labels}) == len(labels)
    for d in labels:
        assert 0.0 < d["strength"] <= 1.0
        assert set(d["accounts"]) <= accounts & seated, d
        assert set(d["tournaments"]) <= tournaments, d
        if d["kind"] == "seat_handoff":
            assert len(d["accounts"]) == 1 and d["tournaments"] and len(d["hands"]) == len(d["tournaments"])
        else:
            assert len(d["accounts"]) >= 2


def test_honest_only_world_has_no_labels(tmp_path):
    s = generate(tmp_path, seed=5, hands=800, honest_only=True)
    assert s["groups"] == 0 and s["hands"] > 0
    assert (tmp_path / "labels.jsonl").read_text(encoding="utf-8") == ""


AMT = r"\$?([\d.]+)"


def _money_in(hand: str) -> Decimal:
    put = Decimal(0)
    street: dict = {}
    for line in hand.splitlines():
        if line.startswith("*** ") and not line.startswith("*** HOLE"):
            street = {}
        m = re.match(r"^(.+?): posts (small blind|big blind|the ante) " + AMT, line)
        if m:
            amt = Decimal(m.group(3))
            put += amt
            if m.group(2) != "the ante":
                street[m.group(1)] = street.get(m.group(1), 0) + amt
            continue
        m = re.match(r"^(.+?): (calls|bets) " + AMT, line)
        if m:
            put += Decimal(m.group(3))
            street[m.group(1)] = street.get(m.group(1), 0) + Decimal(m.group(3))
            continue
        m = re.match(r"^(.+?): raises " + AMT + " to " + AMT, line)
        if m:
            to = Decimal(m.group(3))
            put += to - street.get(m.group(1), 0)
            street[m.group(1)] = to
            continue
        m = re.match(r"^Uncalled bet \(" + AMT + r"\) returned to (.+)$", line)
        if m:
            put -= Decimal(m.group(1))
    return put


def test_money_balances_in_every_hand(world):
    out, summary = world
    assert summary["balance_errors"] == 0
    n = 0
    for h in _hands(out / "hh"):
        total, rake = re.search(r"^Total pot " + AMT + r".*\| Rake " + AMT, h, flags=re.M).groups()
        collected = sum(Decimal(x) for x in re.findall(r"^.+ collected " + AMT + " from ", h, flags=re.M))
        assert _money_in(h) == Decimal(total), h
        assert collected + Decimal(rake) == Decimal(total), h
        n += 1
    assert n == summary["hands"]
