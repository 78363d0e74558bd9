"""Platform events and accounts.csv: per-line quarantine, type mapping, encodings, extra columns."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from pipelines.lib import events as ev

LINES = (
    '{"ts":"2026-03-04T21:15:20.120Z","type":"login","account":"amy","session":"s1","ip":"1.2.3.4","device":"d"}\n'
    "not json\n"
    "[1, 2]\n"
    "\n"
    '{"ts":"yesterday","type":"login","account":"amy","session":"s2"}\n'
    '{"ts":"2026-03-04T22:15:20+01:00","type":"decision","account":"amy","hand":"12","action":3,"ms":1200}\n'
    '{"ts":"2026-03-04T21:15:20Z","type":"weird","account":"amy","x":1}\n'
    '{"ts":"2026-03-04T21:15:20Z","type":"decision","account":"amy"}\n'
    '{"ts":"2026-03-04T21:16:00Z","type":"register","account":"bob","tournament":"99"}\n'
    '{"ts":"2026-03-04T21:17:00Z","type":"transfer","account":"bob","to":"amy","amount":12.5,"currency":"USD"}\n'
    '{"ts":"2026-03-04T21:18:00Z","type":"sit_out","account":"bob","table":"T1","tournament":null}\n'
    '{"ts":"2026-03-04T21:19:00Z","type":"logout","account":"amy"}\n'
)


def test_each_bad_line_is_quarantined_with_its_number_and_text():
    b = ev.parse_events_text(LINES, "/l/e.jsonl")
    q = b.quarantine.sort("position").select("position", "reason", "raw").rows()
    assert q == [(2, "not a JSON object", "not json"), (3, "not a JSON object", "[1, 2]"),
                 (5, "bad ts", '{"ts":"yesterday","type":"login","account":"amy","session":"s2"}'),
                 (8, "missing field", '{"ts":"2026-03-04T21:15:20Z","type":"decision","account":"amy"}'),
                 (12, "missing field", '{"ts":"2026-03-04T21:19:00Z","type":"logout","account":"amy"}')]
    assert set(b.quarantine.get_column("source_file")) == {"/l/e.jsonl"}


def test_types_go_to_their_tables_with_utc_times():
    t = ev.parse_events_text(LINES, "e.jsonl").tables
    assert t["session_events"].select("account", "session", "kind", "ts", "ip", "device").rows() == [
        ("amy", "s1", "login", dt.datetime(2026, 3, 4, 21, 15, 20, 120000), "1.2.3.4", "d")]
    assert t["decisions"].select("hand_id", "seq", "ms", "ts").rows() == [("12", 3, 1200, dt.datetime(2026, 3, 4, 21, 15, 20))]
    assert t["registrations"].select("account", "kind", "tournament_id").rows() == [("bob", "register", "99")]
    assert t["transfers"].select("account", "to_account", "currency").rows() == [("bob", "amy", "USD")]
    assert str(t["transfers"].get_column("amount")[0]) == "12.50"
    assert t["sit_events"].select("kind", "table_name", "tournament_id").rows() == [("sit_out", "T1", None)]
    assert t["other_events"].select("type", "_line").rows() == [("weird", 7)]


def test_encodings_like_hand_histories(tmp_path):
    f = tmp_path / "e.jsonl"
    f.write_bytes(LINES.replace("amy", "Zoë").encode("utf-16"))  # UTF-16 with a byte-order mark
    b = ev.parse_events_file(f)
    assert b.tables["session_events"].get_column("account").to_list() == ["Zoë"]
    a = tmp_path / "accounts.csv"
    a.write_bytes("account,created_at,country,payment\nJosé,2026-01-02,ES,\n".encode("cp1252"))
    assert ev.parse_accounts_file(a).tables["accounts"].get_column("account").to_list() == ["José"]
    a.write_bytes(b"\xef\xbb\xbfaccount,created_at,country,payment\r\nann,2026-01-02T10:00:00Z,DE,h1\r\n")
    acc = ev.parse_accounts_file(a).tables["accounts"]
    assert acc.select("account", "created_at", "payment").rows() == [("ann", dt.datetime(2026, 1, 2, 10), "h1")]


def test_accounts_keep_further_columns_and_quarantine_bad_rows():
    text = ("account,created_at,country,payment,vip,referrer\n"
            "amy,2026-01-02,DE,,gold,\n"
            ",2026-01-02,DE,,x,\n"
            "bob,notadate,FR,h,y,\n"
            "cid,2026-01-02,US\n"
            "amy,2026-01-03,DE,,z,\n"
            '"d,e",2025-12-01 10:00:00,"X",p,q,amy\n')
    b = ev.parse_accounts_text(text, "accounts.csv")
    assert b.tables["accounts"].select("account", "payment", "extra").rows() == [
        ("amy", None, '{"vip":"gold","referrer":""}'), ("d,e", "p", '{"vip":"q","referrer":"amy"}')]
    assert sorted(b.quarantine.select("position", "reason").rows()) == [
        (3, "missing field"), (4, "bad date"), (5, "wrong column count"), (6, "duplicate")]
    assert dict(b.quarantine.select("position", "raw").rows())[5] == "cid,2026-01-02,US"


def test_damaged_event_lines_are_each_stored_or_quarantined_once():
    """Event lines damaged at random (cut, a character added or lost, a field emptied, retyped or dropped): no
    exception, and every non-blank line is either one stored event or one quarantine row. Seeded."""
    good = [
        {"ts": "2026-03-04T21:15:20.120Z", "type": "login", "session": "s1", "ip": "1.2.3.4", "device": "d"},
        {"ts": "2026-03-04T22:15:20+01:00", "type": "decision", "hand": "12", "action": 3, "ms": 1200},
        {"ts": "2026-03-04T21:16:00Z", "type": "register", "tournament": "99"},
        {"ts": "2026-03-04T21:17:00Z", "type": "transfer", "to": "amy", "amount": 12.5, "currency": "USD"},
        {"ts": "2026-03-04T21:18:00Z", "type": "sit_out", "table": "T1", "tournament": None},
        {"ts": "2026-03-04T21:15:20Z", "type": "weird", "x": 1},
    ]
    rng = random.Random(20261203)
    lines = []
    for n in range(3000):
        d = dict(rng.choice(good), account=f"acc{n}")
        kind = n % 6
        if kind == 3:
            d[rng.choice(list(d))] = rng.choice([None, 1, -5, 1.5, "", [], {}, "x" * 300, True, "2026-13-45T99:99:99Z"])
        elif kind == 4:
            d.pop(rng.choice(list(d)))
        line = json.dumps(d)
        j = rng.randrange(len(line) + 1)
        if kind == 0:
            line = line[:j]
        elif kind == 1:
            line = line[:j] + rng.choice(['"', "{", "}", ",", ":", "\\", "null", "1e999", "-", "\x00", "é"]) + line[j:]
        elif kind == 2:
            line = line[:j] + line[j + 1:]
        lines.append(line)
    b = ev.parse_events_text("\n".join(lines) + "\n", "damaged.jsonl")
    stored = sum(df.height for df in b.tables.values())
    assert stored + b.quarantine.height == sum(1 for line in lines if line.strip())
    assert b.quarantine.height > 500 and stored > 1000  # the damage is real, and much of it harmless
    assert b.quarantine["position"].is_unique().all() and b.quarantine["reason"].null_count() == 0


@pytest.mark.parametrize("after", [40, 5000])  # the open quote's field under and over the csv module's field limit
def test_a_quote_left_open_costs_its_own_row_only(after):
    """A stray quote swallows the lines after it into one field: that line is quarantined, the rest are read."""
    rows = [f"acc{i},2026-01-02,DE,h{i}{'x' * 30}" for i in range(after)]
    text = "account,created_at,country,payment\nann,2026-01-02,DE,h\n\"bob,2026-01-02,DE,h\n" + "\n".join(rows) + "\n"
    b = ev.parse_accounts_text(text, "accounts.csv")
    assert b.tables["accounts"].height == after + 1
    (q,) = b.quarantine.select("position", "reason", "raw").rows()
    assert q[0] == 3 and q[2] == '"bob,2026-01-02,DE,h'
    assert q[1] == ("unreadable row" if after > 1000 else "quote left open")


def test_a_header_that_does_not_read_as_csv_is_one_bad_header_row():
    b = ev.parse_accounts_text('"account,created_at\n' + "x" * 200_000 + "\n", "accounts.csv")
    assert b.tables["accounts"].height == 0
    (q,) = b.quarantine.select("position", "reason", "detail", "raw").rows()
    assert q[:2] == (1, "bad header") and "field larger than field limit" in q[2] and q[3] == '"account,created_at'


def test_damaged_account_rows_are_each_stored_or_quarantined_once():
    """accounts.csv rows cut, with a character added (quotes, commas, NUL...) or lost: no exception, and every
    non-blank row is one stored account or one quarantine row. Seeded."""
    rng = random.Random(20261203)
    rows = []
    for n in range(3000):
        row = f"acc{n},2026-01-{rng.randrange(1, 28):02d},DE,h{n},gold"
        j = rng.randrange(len(row) + 1)
        if n % 4 == 0:
            row = row[:j]
        elif n % 4 == 1:
            row = row[:j] + rng.choice(['"', ",", "\\", "\x00", "é", "'"]) + row[j:]
        elif n % 4 == 2:
            row = row[:j] + row[j + 1:]
        rows.append(row)
    b = ev.parse_accounts_text("account,created_at,country,payment,vip\n" + "\n".join(rows) + "\n", "accounts.csv")
    stored, quarantined = b.tables["accounts"].height, b.quarantine.height
    assert stored + quarantined == sum(1 for row in rows if row.strip())
    assert quarantined > 300 and stored > 1500
    assert b.quarantine["position"].is_unique().all()


_OK = '"ts":"2026-03-04T21:17:00Z","account":"bob"'


@pytest.mark.parametrize("line, field, why", [
    ('{"ts":"2026-03-04T21:17:00Z","type":"login","account":{"a":1},"session":"s"}', "account", "a JSON object, not a string"),
    ('{"ts":"2026-03-04T21:17:00Z","type":"login","account":12,"session":"s"}', "account", "a JSON number, not a string"),
    ('{"ts":"2026-03-04T21:17:00Z","type":"login","account":["x"],"session":"s"}', "account", "a JSON array, not a string"),
    ('{"ts":"99999-03-04T21:17:00Z","type":"login","account":"bob","session":"s"}', "ts", "outside 1970-01-01..2100-01-01"),
    ('{' + _OK + ',"type":"transfer","to":"amy","amount":1e400}', "amount", "not a finite number"),
    ('{' + _OK + ',"type":"transfer","to":"amy","amount":NaN}', "amount", "not a finite number"),
    ('{' + _OK + ',"type":"transfer","to":"amy","amount":-Infinity}', "amount", "not a finite number"),
    ('{' + _OK + ',"type":"transfer","to":"amy","amount":true}', "amount", "a JSON boolean, not a number"),
    ('{' + _OK + ',"type":"decision","hand":"1","action":2,"ms":-5}', "ms", "outside 0.."),
    ('{' + _OK + ',"type":"decision","hand":"1","action":2.5,"ms":5}', "action", "a JSON number, not an integer"),
    ('{' + _OK + ',"type":"decision","hand":{"id":1},"action":2,"ms":5}', "hand", "not a string or an integer"),
    ('{' + _OK + ',"type":"sit_out","table":"' + "T" * 1001 + '"}', "table", "longer than 1000 characters"),
    ('{' + _OK + ',"type":"transfer","to":"amy","amount":-5}', "amount", "negative: -5"),
    ('{' + _OK + ',"type":"transfer","to":"amy","amount":"-0.01"}', "amount", "negative: -0.01"),
    ('{"ts":"2026-03-04T21:17:00+25:00","type":"sit_out","account":"bob"}', "ts", "a time zone offset beyond"),
    ('{"ts":"2026-03-04T21:17:00+0599","type":"sit_out","account":"bob"}', "ts", "a time zone offset beyond"),
    ('{' + _OK + ',"type":"sit_out","account":"amy","table":"T1"}', "account", "written twice"),
])
def test_every_event_field_has_a_type_and_a_range_and_the_quarantine_names_it(line, field, why):
    good = '{' + _OK + ',"type":"sit_out","table":"T1","tournament":null}'
    b = ev.parse_events_text(good + "\n" + line + "\n", "/l/e.jsonl")
    assert b.tables["sit_events"].height == 1
    assert sum(t.height for t in b.tables.values()) == 1
    (row,) = b.quarantine.select("position", "reason", "detail").rows()
    assert row[:2] == (2, "bad field") and row[2].startswith(f"field {field}: ") and why in row[2], row


def test_deep_nesting_is_quarantined_and_its_raw_text_cut():
    line = '{' + _OK + ',"type":"weird","x":' + "[" * 100_000 + "]" * 100_000 + "}"
    b = ev.parse_events_text(line + "\n", "/l/e.jsonl")
    assert sum(t.height for t in b.tables.values()) == 0
    (row,) = b.quarantine.select("reason", "raw").rows()
    assert row[0] == "too deeply nested" and len(row[1]) <= 10_000


def test_real_utc_offsets_are_read():
    lines = [f'{{"ts":"2026-03-04T21:17:00{z}","type":"sit_out","account":"bob"}}'
             for z in ("+14:00", "-12:00", "+0530", "-05", ".250-03:30")]
    b = ev.parse_events_text("\n".join(lines) + "\n", "/l/e.jsonl")
    assert b.quarantine.height == 0, b.quarantine["detail"].to_list()
    assert [t.hour for t in b.tables["sit_events"]["ts"].to_list()] == [7, 9, 15, 2, 0]
