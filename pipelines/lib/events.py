"""Platform events (``*.jsonl``) and ``accounts.csv`` → warehouse frames + quarantine.

Method
------
Events: the file is decoded like a hand history (BOMs, UTF-16, cp1252 →
text with ``\\n`` ends), split into lines, and the lines go into DuckDB as one
column; everything after that is set-based SQL: ``json_valid`` and
``json_type = 'OBJECT'`` pick the JSON objects, ``->>`` extracts the fields,
``TRY_CAST(ts AS TIMESTAMPTZ)`` parses ISO-8601 (``Z`` or an offset) to UTC.
Every field has a type and a range (``_TEXT_FIELDS``, ``_ID_FIELDS``,
``_INT_FIELDS``, ``amount`` a finite DECIMAL(18,2) not below zero, ``ts`` in
1970..2100 with a UTC offset within 14 hours, no key written twice, at most
``MAX_BRACKETS`` brackets in a line): the first field that breaks them
quarantines the line as ``bad field`` with the field and the reason named.
A line that is not a JSON object, lacks a non-empty ``ts``/``type``/``account``,
has a ``ts`` that does not parse, or lacks the fields its type needs
(``session`` for login/logout, ``tournament`` for register/unregister,
``hand``/``action``/``ms`` as integers for decision, ``to``/``amount`` for
transfer) is quarantined with its file, 1-based line number, raw text and a
reason.  Blank lines are skipped.  Types map to tables: login/logout →
``session_events`` (paired into ``sessions`` by the loader), sit_out/sit_in →
``sit_events``, register/unregister → ``registrations``, decision →
``decisions``, transfer → ``transfers``, anything else → ``other_events``
with the whole event kept as JSON.

Accounts: the header names the columns; ``account, created_at, country,
payment`` are stored, further columns go to ``extra`` as a JSON object.  A row
with the wrong number of fields, an empty account, an unparseable
``created_at`` or an account already seen earlier in the file is quarantined
with its line.  Rows are split with the C ``csv`` reader (quoted fields may
hold commas); the checks and the JSON of ``extra`` are vectorised in Polars.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import duckdb
import polars as pl

from pipelines.lib.handhistory import decode_bytes
from pipelines.lib.handhistory.parse import QUARANTINE_RAW_CHARS as RAW_CHARS
from pipelines.lib.warehouse import Batch, empty_quarantine


# Every field an event may carry: its JSON types and, for numbers, its range. A field absent or JSON null is
# "missing" (required or not by the type of event, below); a field of another type or out of range makes the event
# "bad field" with the field named. Text fields hold at most MAX_TEXT characters; ts lies in [TS_MIN, TS_MAX).
_TEXT_FIELDS = ["ts", "type", "account", "session", "ip", "device", "table", "currency", "to"]
_ID_FIELDS = ["tournament", "hand"]  # a string, or an integer written as a number
_INT_FIELDS = {"action": (0, 100_000), "ms": (0, 7 * 24 * 3600 * 1000)}
MAX_TEXT = 1000
MAX_BRACKETS = 64
TS_MIN, TS_MAX = "1970-01-01", "2100-01-01"
# a ts's UTC offset after its time of day (hours, minutes); none goes beyond 14 hours (Kiribati, +14:00)
_TS_OFFSET = r"\d:\d{2}(?::\d{2}(?:\.\d+)?)?\s*[+-](\d{1,2})(?::?(\d{2}))?$"
MAX_OFFSET_MINUTES = 14 * 60


_FIELDS = _TEXT_FIELDS + _ID_FIELDS + list(_INT_FIELDS) + ["amount"]
# the JSON types and the text of every field, each a list read with one parse of the line (a path list)
_PATHS = "[" + ", ".join(f"'$.{f}'" for f in _FIELDS) + "]"


def _ty(f: str) -> str:
    return f"coalesce(ty[{_FIELDS.index(f) + 1}], 'NULL')"


def _va(f: str) -> str:
    return f"va[{_FIELDS.index(f) + 1}]"


def _json_kind(f: str) -> str:
    """SQL: the JSON type of field ``f`` in plain words (a number, not 'ubigint')."""
    return (f"replace(replace(replace(lower({_ty(f)}), 'ubigint', 'number'), 'bigint', 'number'), "
            f"'double', 'number')")


def _field_checks() -> str:
    """SQL CASE branches: (field, why) of the first field that breaks its type or range."""
    out = []
    for f in _TEXT_FIELDS:
        out.append(f"WHEN {_ty(f)} NOT IN ('VARCHAR', 'NULL') THEN ['{f}', 'a JSON ' || {_json_kind(f)} || "
                   f"', not a string']")
        out.append(f"WHEN length({_va(f)}) > {MAX_TEXT} THEN ['{f}', 'longer than {MAX_TEXT} characters']")
    for f in _ID_FIELDS:
        out.append(f"WHEN {_ty(f)} NOT IN ('VARCHAR', 'NULL', 'BIGINT', 'UBIGINT') THEN ['{f}', "
                   f"'a JSON ' || {_json_kind(f)} || ', not a string or an integer']")
        out.append(f"WHEN length({_va(f)}) > {MAX_TEXT} THEN ['{f}', 'longer than {MAX_TEXT} characters']")
    for f, (lo, hi) in _INT_FIELDS.items():
        out.append(f"WHEN {_ty(f)} NOT IN ('BIGINT', 'UBIGINT', 'NULL') THEN ['{f}', 'a JSON ' || {_json_kind(f)} || "
                   f"', not an integer']")
        out.append(f"WHEN {_ty(f)} <> 'NULL' AND NOT coalesce(TRY_CAST({_va(f)} AS BIGINT) "
                   f"BETWEEN {lo} AND {hi}, false) THEN ['{f}', 'outside {lo}..{hi:,}']")
    out.append(f"WHEN {_ty('amount')} NOT IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'VARCHAR', 'NULL') THEN "
               f"['amount', 'a JSON ' || {_json_kind('amount')} || ', not a number']")
    out.append(f"WHEN {_ty('amount')} <> 'NULL' AND TRY_CAST({_va('amount')} AS DECIMAL(18,2)) IS NULL THEN "
               f"['amount', 'not a finite number within DECIMAL(18,2): ' || left({_va('amount')}, 40)]")
    out.append(f"WHEN {_ty('amount')} <> 'NULL' AND TRY_CAST({_va('amount')} AS DECIMAL(18,2)) < 0 THEN "
               f"['amount', 'negative: ' || left({_va('amount')}, 40)]")
    out.append(f"WHEN ts IS NOT NULL AND NOT (ts >= TIMESTAMP '{TS_MIN}' AND ts < TIMESTAMP '{TS_MAX}') THEN "
               f"['ts', 'outside {TS_MIN}..{TS_MAX}: ' || left(ts_raw, 40)]")
    hours, minutes = (f"TRY_CAST(NULLIF(regexp_extract(ts_raw, '{_TS_OFFSET}', {k}), '') AS INTEGER)" for k in (1, 2))
    out.append(f"WHEN ts IS NOT NULL AND ({hours} * 60 + coalesce({minutes}, 0) > {MAX_OFFSET_MINUTES} "
               f"OR {minutes} > 59) THEN ['ts', 'a time zone offset beyond +-14:00: ' || left(ts_raw, 40)]")
    # (readers disagree on a key written twice, DuckDB's ->> reads the first, Python's json the last: no event)
    out.append("WHEN len(json_keys(j)) <> len(list_distinct(json_keys(j))) THEN "
               "[list_filter(json_keys(j), lambda k, i: list_position(json_keys(j), k) < i)[1], 'written twice']")
    return "\n           ".join(out)


_EVENTS_SQL = r"""
WITH src AS (
    SELECT line_no, raw,
           length(raw) - length(replace(replace(raw, '[', ''), '{', '')) AS brackets
    FROM _railbird_lines WHERE trim(raw) <> ''
), obj AS (
    SELECT line_no, raw, brackets,
           brackets <= """ + str(MAX_BRACKETS) + r""" AND coalesce(CASE WHEN json_valid(raw) THEN json_type(raw) = 'OBJECT' END, false) AS is_obj
    FROM src
), f0 AS (
    SELECT line_no, raw, brackets, is_obj, CASE WHEN is_obj THEN raw::JSON END AS j
    FROM obj
), f AS (
    SELECT line_no, raw, brackets, is_obj, j,
           j->>'ts' AS ts_raw, j->>'type' AS type, j->>'account' AS account,
           TRY_CAST(j->>'ts' AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS ts,
           json_type(j, """ + _PATHS + r""") AS ty, json_extract_string(j, """ + _PATHS + r""") AS va
    FROM f0
), c AS (
    SELECT *, CASE """ + _field_checks() + r""" END AS bad
    FROM f
)
SELECT line_no, raw, j::VARCHAR AS payload, ts, type, account,
       """ + ", ".join(f"{_va(f)} AS {a}" for f, a in [("session", "session"), ("ip", "ip"), ("device", "device"),
       ("table", "table_name"), ("tournament", "tournament_id"), ("hand", "hand_id"), ("to", "to_account"),
       ("currency", "currency")]) + r""",
       TRY_CAST(""" + _va("action") + r""" AS INTEGER) AS seq, TRY_CAST(""" + _va("ms") + r""" AS INTEGER) AS ms,
       TRY_CAST(""" + _va("amount") + r""" AS DECIMAL(18,2)) AS amount,
       CASE
         WHEN brackets > """ + str(MAX_BRACKETS) + r""" THEN 'too deeply nested'
         WHEN NOT is_obj THEN 'not a JSON object'
         WHEN bad IS NOT NULL THEN 'bad field'
         WHEN coalesce(trim(ts_raw), '') = '' OR coalesce(trim(type), '') = '' OR coalesce(trim(account), '') = ''
              THEN 'missing field'
         WHEN ts IS NULL THEN 'bad ts'
         WHEN type IN ('login', 'logout') AND coalesce(j->>'session', '') = '' THEN 'missing field'
         WHEN type IN ('register', 'unregister') AND coalesce(j->>'tournament', '') = '' THEN 'missing field'
         WHEN type = 'decision' AND (coalesce(j->>'hand', '') = '' OR TRY_CAST(j->>'action' AS INTEGER) IS NULL
                                     OR TRY_CAST(j->>'ms' AS INTEGER) IS NULL) THEN 'missing field'
         WHEN type = 'transfer' AND (coalesce(j->>'to', '') = '' OR TRY_CAST(j->>'amount' AS DECIMAL(18,2)) IS NULL)
              THEN 'missing field'
       END AS reason,
       CASE
         WHEN brackets > """ + str(MAX_BRACKETS) + r""" THEN 'more than """ + str(MAX_BRACKETS) + r""" brackets: nesting that deep is no event'
         WHEN NOT is_obj THEN 'line is not a JSON object'
         WHEN bad IS NOT NULL THEN 'field ' || bad[1] || ': ' || bad[2]
         WHEN coalesce(trim(ts_raw), '') = '' OR coalesce(trim(type), '') = '' OR coalesce(trim(account), '') = ''
              THEN 'an event needs ts, type and account'
         WHEN ts IS NULL THEN 'ts is not an ISO-8601 timestamp: ' || ts_raw
         ELSE 'a ' || type || ' event lacks a field it needs'
       END AS detail
FROM c
"""


def parse_events_text(text: str, source_file: str) -> Batch:
    """Parse the text of one ``*.jsonl`` events file into event frames + quarantine."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    frame = pl.DataFrame({"line_no": pl.int_range(1, len(lines) + 1, eager=True, dtype=pl.Int64),
                          "raw": pl.Series(lines, dtype=pl.String)})
    con = duckdb.connect()
    try:
        con.register("_railbird_lines", frame)
        ev = con.sql(_EVENTS_SQL).pl()
    finally:
        con.close()
    ev = ev.with_columns(pl.lit(source_file).alias("_file"), pl.col("line_no").alias("_line"))
    bad = ev.filter(pl.col("reason").is_not_null())
    good = ev.filter(pl.col("reason").is_null())
    quarantine = bad.select(
        pl.lit(source_file).alias("source_file"), pl.col("line_no").alias("position"), pl.lit("event").alias("input_kind"),
        pl.lit(None, dtype=pl.String).alias("hand_id"), "reason", "detail", pl.col("raw").str.slice(0, RAW_CHARS),
    )
    t = pl.col("type")
    tables = {
        "session_events": good.filter(t.is_in(["login", "logout"])).select(
            "account", "session", pl.col("type").alias("kind"), "ts", "ip", "device", "_file", "_line"),
        "sit_events": good.filter(t.is_in(["sit_out", "sit_in"])).select(
            "account", "ts", pl.col("type").alias("kind"), "table_name", "tournament_id", "_file", "_line"),
        "registrations": good.filter(t.is_in(["register", "unregister"])).select(
            "account", "ts", pl.col("type").alias("kind"), "tournament_id", "_file", "_line"),
        "decisions": good.filter(t == "decision").select("hand_id", "seq", "account", "ms", "ts", "_file", "_line",
                                                         pl.col("raw").alias("_raw")),
        "transfers": good.filter(t == "transfer").select("ts", "account", "to_account", "amount", "currency", "_file", "_line"),
        "other_events": good.filter(~t.is_in(["login", "logout", "sit_out", "sit_in", "register", "unregister",
                                              "decision", "transfer"])).select("ts", "type", "account", "payload", "_file", "_line"),
    }
    return Batch(tables=tables, quarantine=quarantine)


def parse_events_file(path: str | Path) -> Batch:
    path = Path(path)
    return parse_events_text(decode_bytes(path.read_bytes()), str(path))


ACCOUNT_COLUMNS = ["account", "created_at", "country", "payment"]


def _account_quarantine(source_file: str, rows: list[tuple[int, str, str, str]]) -> pl.DataFrame:
    if not rows:
        return empty_quarantine()
    pos, reason, detail, raw = zip(*rows)
    return pl.DataFrame({
        "source_file": [source_file] * len(rows), "position": list(pos), "input_kind": ["account"] * len(rows),
        "hand_id": [None] * len(rows), "reason": list(reason), "detail": list(detail), "raw": list(raw),
    }, schema=empty_quarantine().schema)


def parse_accounts_text(text: str, source_file: str) -> Batch:
    """Parse ``accounts.csv`` text into an ``accounts`` frame (extra columns as JSON) + quarantine.

    Rows are read by :func:`_account_rows`, checked by :func:`_account_checks` (rejects: :func:`_account_rejects`)
    and stored by :func:`_accepted_accounts`."""
    # the file's lines as the csv reader counts them (its line_num), for each row's raw text; a reader can start
    # again after any line (a quote left open, below)
    lines = [line.rstrip("\r\n") for line in io.StringIO(text, newline="")]
    reader = _reader_from(lines, 0)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        return Batch(tables={"accounts": pl.DataFrame()}, quarantine=empty_quarantine())
    except csv.Error as exc:
        header, why = [], f"accounts.csv header does not read as CSV: {exc}"
    else:
        why = "accounts.csv header has no 'account' column"
    bad: list[tuple[int, str, str, str]] = []
    if "account" not in header:
        bad.append((1, "bad header", why, lines[0][:RAW_CHARS]))
        return Batch(tables={"accounts": pl.DataFrame()}, quarantine=_account_quarantine(source_file, bad))
    rows, line_nos = _account_rows(lines, reader, len(header), bad)
    names = [h if h else f"column_{i + 1}" for i, h in enumerate(header)]
    df = _account_checks(lines, rows, line_nos, names)
    quarantine = pl.concat([_account_quarantine(source_file, bad),
                            _account_rejects(df, source_file).cast(empty_quarantine().schema)], how="vertical_relaxed")
    return Batch(tables={"accounts": _accepted_accounts(df, names, source_file)}, quarantine=quarantine)


def _reader_from(lines: list[str], k: int):
    """A ``csv.reader`` over the physical ``lines`` after the first ``k``."""
    return csv.reader(lines[i] + "\n" for i in range(k, len(lines)))


def _account_rows(lines: list[str], reader, width: int, bad: list[tuple[int, str, str, str]]
                  ) -> tuple[list[list[str]], list[int]]:
    """The rows of ``width`` fields that ``reader`` (past the header) yields from ``lines``, with their 1-based line.

    Blank rows are skipped; an unreadable row, a quote left open (the row runs past its line: the lines after it are
    read again as rows of their own) and a row of another width are appended to ``bad`` as (line, reason, detail,
    raw). The C reader yields the rows; the per-row work here is one length check."""
    rows: list[list[str]] = []
    line_nos: list[int] = []
    base = 0  # physical lines before the current reader's first
    while True:
        line = base + reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # a quote left open ran past the field limit: that line is bad, read on after it
            bad.append((line, "unreadable row", str(exc), lines[line - 1][:RAW_CHARS]))
            base, reader = line, _reader_from(lines, line)
            continue
        end = base + reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if end > line:  # a quote left open swallowed the lines after it (whatever the count of fields that made):
            # that line is bad, the lines after it are read again as rows of their own
            bad.append((line, "quote left open", f"a quote opened on line {line} runs on to line {end}",
                        lines[line - 1][:RAW_CHARS]))
            base, reader = line, _reader_from(lines, line)
            continue
        if len(row) != width:
            bad.append((line, "wrong column count", f"expected {width} fields, found {len(row)}", lines[line - 1]))
            continue
        rows.append(row)
        line_nos.append(line)
    return rows, line_nos


def _account_checks(lines: list[str], rows: list[list[str]], line_nos: list[int], names: list[str]) -> pl.DataFrame:
    """The rows as a frame of text columns ``names`` (plus any of :data:`ACCOUNT_COLUMNS` missing, null), with
    ``_line``, ``_raw``, ``_created`` (``created_at`` parsed to UTC, ISO-8601 with ``Z``, an offset or none, or a
    date) and ``_reason`` (null, or why the row is rejected: missing field, bad date, duplicate of an earlier row)."""
    df = pl.DataFrame(rows, schema={n: pl.String for n in names}, orient="row") if rows else pl.DataFrame(
        schema={n: pl.String for n in names})
    df = df.with_columns(pl.Series("_line", line_nos, dtype=pl.Int64),
                         pl.Series("_raw", [lines[i - 1] for i in line_nos], dtype=pl.String))
    for c in ACCOUNT_COLUMNS:
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=pl.String).alias(c))
    created = pl.col("created_at").str.strip_chars()
    df = df.with_columns(
        pl.col("account").str.strip_chars(),
        pl.coalesce(
            created.str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", strict=False, time_unit="us"),
            created.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%z", strict=False, time_unit="us").dt.convert_time_zone("UTC").dt.replace_time_zone(None),
            created.str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us"),
            created.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us"),
            created.str.to_date("%Y-%m-%d", strict=False).cast(pl.Datetime("us")),
        ).alias("_created"),
    )
    reason = (
        pl.when(pl.col("account").fill_null("") == "").then(pl.lit("missing field"))
        .when(created.fill_null("").ne("") & pl.col("_created").is_null()).then(pl.lit("bad date"))
        .when(pl.col("account").is_duplicated() & (pl.int_range(pl.len()).over("account") > 0)).then(pl.lit("duplicate"))
    )
    return df.with_columns(reason.alias("_reason"))


def _account_rejects(df: pl.DataFrame, source_file: str) -> pl.DataFrame:
    """The quarantine rows of the rows :func:`_account_checks` rejected, each with its line, reason and detail."""
    return df.filter(pl.col("_reason").is_not_null()).select(
        pl.lit(source_file).alias("source_file"), pl.col("_line").alias("position"), pl.lit("account").alias("input_kind"),
        pl.lit(None, dtype=pl.String).alias("hand_id"), pl.col("_reason").alias("reason"),
        pl.when(pl.col("_reason") == "bad date").then(pl.format("created_at is not a date: {}", "created_at"))
        .when(pl.col("_reason") == "duplicate").then(pl.format("account {} appears earlier in the file", "account"))
        .otherwise(pl.lit("empty account")).alias("detail"),
        pl.col("_raw").alias("raw"),
    )


def _accepted_accounts(df: pl.DataFrame, names: list[str], source_file: str) -> pl.DataFrame:
    """The ``accounts`` rows of the rows :func:`_account_checks` kept: the stored columns trimmed (empty country or
    payment null) and every other column of ``names`` in ``extra`` as one JSON object (null without such columns)."""
    good = df.filter(pl.col("_reason").is_null())
    extra_cols = [c for c in names if c not in ACCOUNT_COLUMNS]
    extra = (pl.struct(extra_cols).struct.json_encode() if extra_cols else pl.lit(None, dtype=pl.String)).alias("extra")
    return good.select(
        "account",
        pl.col("_created").alias("created_at"),
        pl.col("country").str.strip_chars().replace("", None),
        pl.col("payment").str.strip_chars().replace("", None),
        extra,
        pl.lit(source_file).alias("_file"),
        pl.col("_line"),
    )


def parse_accounts_file(path: str | Path) -> Batch:
    path = Path(path)
    return parse_accounts_text(decode_bytes(path.read_bytes()), str(path))
