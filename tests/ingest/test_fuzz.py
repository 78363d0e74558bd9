"""Seeded fuzz of hostile input at ingest (issue 31): hostile player names, file names of any bytes (files in
UTF-8, with a byte-order mark, or UTF-16), absurd seat numbers, counts of seats and amounts (too large, negative), a
line far longer than any real one, symbolic links (out of the landing folder, in a loop, to nothing, back inside),
event fields of every wrong type and range.

One landing folder is built from real hands of the corpus (edited in memory, never on disk in the corpus): honest
hands with hostile names, hostile hands (a seat number or an amount out of range) among them, in files with hostile
names, with links to a secret file and folder outside, and an events file mixing honest and hostile lines. One
ingest: no crash; every honest hand and event stored as it would be alone; every hostile one quarantined; the
secret text nowhere in the warehouse."""
from __future__ import annotations

import json
import os
import random
import re

import pytest

from pipelines.lib import ingest
from pipelines.lib import warehouse as wh
from pipelines.lib.handhistory import file_name

SEED = 20261206
SAMPLE = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files/cash/Stars/Flop/NLHE-6max-USD-0.05-0.10-200911.txt"
SECRET = "SECRET-7f3a: outside the landing folder"
# names as real rooms have them, and names that look like the format's own words
NAMES = [
    '"quoted', "trailing\"", 'in"side', "back\\slash", "[brackets]", "colon: inside", "a:b", "#$%&<>", "run   of spaces",
    "Ünïcödé", "名前テスト", "игрок", "🂡🃏 ace", "Seat 1:", "folds", "said,", "*** FLOP ***", "Total pot", "x",
    "a" * 30, "O'Brien", "{json}", "Dealt to", "Uncalled bet", "collected", "<script>alert(1)</script>",
    "trailing space ", " leading space", "  both  ",
]
FILE_NAMES = [b"bad\xffname.txt", b"caf\xe9 latin1.txt", b"new\nline.txt", b"tab\tand space .txt", "emoji 🂡.txt".encode(),
              b"-dash.txt", b"..dots.txt", b"back\\slash.txt", b"quote'\".txt"]


@pytest.fixture(scope="module")
def real_hands(corpus_dir):
    text = (corpus_dir / SAMPLE).read_text(encoding="utf-8")
    parts = [p.strip("\n") for p in re.split(r"\n\s*\n(?=PokerStars )", text) if p.strip()]
    assert len(parts) > 20
    return parts


def _players(hand: str) -> list[str]:
    return re.findall(r"(?m)^Seat \d+: (.+?) \(\$[\d.]+ in chips\)", hand)


def _rename(hand: str, rng: random.Random) -> str:
    """The hand with each player renamed to a distinct hostile name (whole-name matches only)."""
    players = sorted(set(_players(hand)), key=len, reverse=True)
    new = rng.sample(NAMES, len(players))
    marks = {p: f"\x00{i}\x00" for i, p in enumerate(players)}
    for p in players:
        hand = re.sub(rf"(?<![\w]){re.escape(p)}(?![\w])", marks[p], hand)
    for p, n in zip(players, new):
        hand = hand.replace(marks[p], n)
    return hand


def _hostile(hand: str, rng: random.Random) -> str:
    """The hand with a seat number, a count of seats or an amount out of range."""
    k = rng.randrange(5)
    if k == 0:
        return re.sub(r"(?m)^Seat \d+:", f"Seat {rng.choice([0, 101, 1025, 4097, 2**31, 10**12])}:", hand, count=1)
    if k == 1:
        return re.sub(r"\(\$[\d.]+ in chips\)", f"(${'9' * rng.randrange(12, 40)} in chips)", hand, count=1)
    if k == 2:  # (a negative stack once read as its absolute value)
        return re.sub(r"\(\$[\d.]+ in chips\)", f"($-{rng.randrange(1, 99)} in chips)", hand, count=1)
    if k == 3:  # thousands of seats on a 6-max table
        extra = "".join(f"Seat {n}: extra {n} ($1 in chips)\n" for n in range(7, rng.randrange(200, 3000)))
        return re.sub(r"(?m)^(\*\*\* HOLE CARDS)", lambda m: extra + m.group(1), hand, count=1)
    return re.sub(r"Total pot \$[\d.]+", f"Total pot ${'9' * rng.randrange(12, 40)}", hand, count=1)


def _events(rng: random.Random) -> tuple[list[str], int]:
    ok = {"ts": "2009-11-25T11:00:00Z", "type": "sit_out", "account": "Hero", "table": "May IV", "tournament": None}
    bad_values = [{"a": 1}, [1], 12, 1.5, True, "x" * 1001]
    lines, honest = [], 0
    for i in range(60):
        e = dict(ok, account=rng.choice(NAMES), ts=f"2009-11-25T11:00:{i:02d}Z")  # (distinct: not deduplicated)
        if i % 3:
            honest += 1
        else:
            field = rng.choice(["account", "ts", "type", "table", "tournament"])
            e[field] = rng.choice([v for v in bad_values if not (field == "tournament" and v == 12)])
            if field == "ts" and isinstance(e[field], str):
                e[field] = "99999-01-01T00:00:00Z"
        lines.append(json.dumps(e, ensure_ascii=rng.random() < 0.5))
    # fields a room never writes, in events of kinds that are stored (each once slipped through)
    lines += ['{"ts":"2009-11-25T11:00:00+25:00","type":"sit_out","account":"a","table":"t"}',
              '{"ts":"2009-11-25T11:00:00Z","type":"sit_out","account":"a","account":"b","table":"t"}',
              '{"ts":"2009-11-25T11:00:00Z","type":"transfer","account":"a","to":"b","amount":-5}',
              '{"ts":"2009-11-25T11:00:00Z","type":"transfer","account":"a","to":"b","amount":-Infinity}']
    lines += ['{"ts":"2009-11-25T11:00:00Z","type":"x","account":"a","n":1e400}',
              '{"ts":"2009-11-25T11:00:00Z","type":"transfer","account":"a","to":"b","amount":NaN}',
              '{"ts":"2009-11-25T11:00:00Z","type":"x","account":"a","d":' + "[" * 5000 + "]" * 5000 + "}"]
    return lines, honest


def test_hostile_landing_folder(tmp_path, real_hands):
    rng = random.Random(SEED)
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (outside / "dir" / "more.txt").write_text(SECRET + "\n", encoding="utf-8")
    land = tmp_path / "landing"
    (land / "sub").mkdir(parents=True)
    honest_ids, hostile_ids = set(), set()
    hands = [_rename(h, rng) for h in real_hands]
    for i, fname in enumerate(FILE_NAMES):
        chosen = rng.sample(range(len(hands)), 6)
        texts = []
        for j in chosen:
            hid = f"{700_000_000_000 + i * 100 + j}"
            text = re.sub(r"#\d+", f"#{hid}", hands[j], count=1)
            if rng.random() < 0.3:
                texts.append(_hostile(text, rng))
                hostile_ids.add(hid)
            else:
                texts.append(text)
                honest_ids.add(hid)
        folder = land if i % 2 else land / "sub"
        with open(os.path.join(os.fsencode(folder), fname), "wb") as fh:
            fh.write(("\n\n\n".join(texts) + "\n\n\n").encode(rng.choice(["utf-8", "utf-8-sig", "utf-16"])))
    # sizes: a line far longer than any real one between honest hands
    plain = [re.sub(r"#\d+", f"#{800_000_000_000 + j}", hands[j], count=1) for j in range(4)]
    honest_ids |= {f"{800_000_000_000 + j}" for j in range(4)}
    (land / "plain.txt").write_text("\n\n\n".join(plain[:2] + ["x" * 300_000] + plain[2:]) + "\n\n\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", land / "leak.txt")
    os.symlink(outside / "dir", land / "sub" / "leakdir")
    os.symlink(outside / "secret.txt", land / "leak.jsonl")
    # links that lead to no file, one back to a file inside (read once, at its target) and one to the folder above
    no_file = [land / "loop_a.txt", land / "loop_b.txt", land / "sub" / "self.txt", land / "dangling.txt",
               land / "sub" / "dangling_out.txt"]
    os.symlink("loop_b.txt", no_file[0])
    os.symlink("loop_a.txt", no_file[1])
    os.symlink("self.txt", no_file[2])
    os.symlink("missing.txt", no_file[3])
    os.symlink(outside / "missing.txt", no_file[4])
    os.symlink("../plain.txt", land / "sub" / "again.txt")
    os.symlink("..", land / "sub" / "up")
    events, honest_events = _events(rng)
    (land / "platform.jsonl").write_text("\n".join(events) + "\n", encoding="utf-8")
    for p in [*land.rglob("*")]:
        if not p.is_symlink():
            os.utime(p, (0, 0))  # nothing is growing

    con = wh.connect(tmp_path / "wh.duckdb")
    try:
        report = ingest.ingest([land], con, progress=False, growing_seconds=0, workers=1)
        stored = {r[0] for r in con.execute("SELECT hand_id FROM hands").fetchall()}
        q = {r[0]: r[1:] for r in con.execute(
            "SELECT hand_id, reason, detail FROM quarantine WHERE input_kind = 'hand'").fetchall()}
        quarantined = set(q)
        players = {r[0] for r in con.execute("SELECT DISTINCT player FROM seats").fetchall()}
        n_events = con.execute("SELECT count(*) FROM sit_events").fetchone()[0]
        n_transfers = con.execute("SELECT count(*) FROM transfers").fetchone()[0]
        refused = dict(con.execute("SELECT source_file, reason FROM quarantine WHERE input_kind = 'file'").fetchall())
        outside_text = con.execute("SELECT raw FROM quarantine WHERE input_kind = 'text' AND source_file = ?",
                                   [file_name(land / "plain.txt")]).fetchall()
        log = dict(con.execute("SELECT source_file, status FROM ingest_log").fetchall())
        leaks = 0
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall():
            cols = [c for c, t in con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?",
                                              [table]).fetchall() if t == "VARCHAR"]
            for c in cols:
                leaks += con.execute(f'SELECT count(*) FROM "{table}" WHERE contains("{c}", ?)', [SECRET[:11]]).fetchone()[0]
    finally:
        con.close()
    assert report.files_read == len(FILE_NAMES) + 4 + 1 + len(no_file)
    assert honest_ids <= stored, [(h, q.get(h)) for h in sorted(honest_ids - stored)[:5]]  # no honest hand lost
    assert hostile_ids <= quarantined and not hostile_ids & stored
    assert players & set(NAMES) and players <= set(NAMES)  # the hostile names read back whole
    assert n_events == honest_events and n_transfers == 0
    # (the long line accounted for, never held: text outside any hand that says what it was)
    assert [r[0][:60] for r in outside_text] == ["[railbird: a line of 300,000 characters was not read; it beg"]
    for link in no_file:
        assert log[file_name(link)] == "refused" and refused[file_name(link)] == "link to no file"
    assert log[file_name(land / "plain.txt")] == "done" and file_name(land / "sub" / "again.txt") not in log
    assert leaks == 0
    for link in (land / "leak.txt", land / "sub" / "leakdir", land / "leak.jsonl"):
        assert log[file_name(link)] == "refused"
    assert all(log[file_name(os.path.join(os.fsencode(land if i % 2 else land / "sub"), f))] == "done"
               for i, f in enumerate(FILE_NAMES))
