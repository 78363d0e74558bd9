"""One hand day's features: :func:`compute_day`, the unit of work of the nightly pass.

Every feature the game-play detectors share is a function of one hand's rows
(the heads-up decisions valued by the cards, a hand's chip flow, the pairs
dealt in together) and every per-pair or per-cell statistic they test is a sum
over hands. So a day's hands give a day's tables, and a window's statistics are
the sums of its days' (:mod:`detectors.features.days.window`): a night computes
one day, never the history.

:func:`compute_day` takes the day's input as plain frames (Arrow or Polars, one
per warehouse table: :data:`INPUT_TABLES`), or a DuckDB warehouse and the day
(:func:`read_day` selects its rows), and returns the day's tables
(:data:`DAY_TABLES`) as Polars frames. It imports nothing of Dagster and holds
no state, so any engine that can call a Python function on a day's frames can
run it (one day per task).

Monte Carlo card values (strength, equity) are drawn with a seed made of
``random_state`` and the day (:func:`day_seed`): a day's values do not depend on
which other days are computed with it, or in which order, so the features of a
history computed night after night equal those computed in one go.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.features.gameplay.decisions import hu_decisions
from detectors.features.gameplay.pairs import chip_flow, hands_together, pair_decisions

#: the warehouse tables a day's features read: hand tables (the day's hands) and account tables (rows of that UTC day)
HAND_TABLES = ("hands", "seats", "actions", "hole_cards", "boards")
ACCOUNT_TABLES = ("sessions", "decisions", "sit_events")
INPUT_TABLES = HAND_TABLES + ACCOUNT_TABLES

#: the tables :func:`compute_day` returns, each keyed by its columns before the counts
DAY_TABLES = {
    "hu_decisions": "every heads-up decision of the day's hands valued by the cards (hu_decisions' columns)",
    "pair_decisions": "per ordered pair: heads-up hands, hands targeted, decisions, value given (sum, winsorised "
                      "sum, sum of squares, hands)",
    "hands_together": "per ordered pair: hands both were dealt into",
    "chip_flow": "per ordered pair (loser, winner): chips lost in big blinds, hands",
    "baseline_pair_cells": "per test, ordered pair and cell: decisions n and the tested behaviour k",
    "baseline_player_cells": "per test, player and cell: the player's own counts N, K (the own baseline)",
    "account_days": "per account: sessions, devices, networks, decisions timed (count, sum and sum of squares of "
                    "log ms), sit-outs",
}

#: the own-baseline tests (:func:`detectors.features.gameplay.pairs.own_baseline_columns`): indicator, filter, cells
BASELINE_TESTS = {
    "aggr": ("aggr", pl.lit(True), stats.OWN_BASELINE_BINS),
    "fold": ("fold", pl.col("facing"), stats.OWN_BASELINE_BINS),
    "junk": ("commit", pl.col("sbin") <= 0, stats.JUNK_BINS),
}
CELL_COLS = tuple(dict.fromkeys(stats.JUNK_BINS))  # every cell column of every test (pbin null where unused)

#: how many leading columns of each aggregate table are its key (the rows are stored in key order)
DAY_KEYS = {"pair_decisions": 2, "hands_together": 2, "chip_flow": 2, "baseline_pair_cells": 3 + len(CELL_COLS),
            "baseline_player_cells": 2 + len(CELL_COLS), "account_days": 1}

# the rows of one part of a day, $lo <= hand_id < $hi: hand tables through the day's hand ids; account tables
# (the whole day) through their own timestamps. The id range lets DuckDB skip the row groups of other days and
# parts where ids grow with time, as a room's do. Every query orders its rows (ORDER BY ALL): the warehouse's
# physical order differs between a clean run and one resumed after a kill, and float sums follow the input order.
_HAND_ROWS_SQL = """SELECT t.* FROM {t} t
SEMI JOIN (SELECT hand_id FROM hands WHERE day = $day AND hand_id >= $lo AND hand_id < $hi) d USING (hand_id)
WHERE t.hand_id >= $lo AND t.hand_id < $hi ORDER BY ALL"""
_PART_ROWS_SQL = {
    "hands": "SELECT * FROM hands WHERE day = $day AND hand_id >= $lo AND hand_id < $hi ORDER BY ALL",
    "seats": _HAND_ROWS_SQL.format(t="seats"),
    "actions": _HAND_ROWS_SQL.format(t="actions"),
    "hole_cards": _HAND_ROWS_SQL.format(t="hole_cards"),
    "boards": _HAND_ROWS_SQL.format(t="boards"),
}
_ACCOUNT_ROWS_SQL = {
    "sessions": "SELECT * FROM sessions WHERE CAST(login_at AS DATE) = $day ORDER BY ALL",
    "decisions": "SELECT * FROM decisions WHERE CAST(ts AS DATE) = $day ORDER BY ALL",
    "sit_events": "SELECT * FROM sit_events WHERE CAST(ts AS DATE) = $day ORDER BY ALL",
}
_TOP = chr(0x10FFFF)  # sorts after every character of a hand id

#: hands valued together in one part of a day (:func:`compute_day`): what a night holds at once besides DuckDB's
#: cache (docs/scale.md, "Memory of the night"); the parts seed the card values, so it is part of a day's result
HANDS_PER_PART = 125_000


def day_seed(random_state: int, day: dt.date, part: int = 0) -> int:
    """The Monte Carlo seed of one part of a day: ``random_state``, the day's ordinal and the part's number mixed
    by NumPy's SeedSequence."""
    return int(np.random.SeedSequence([int(random_state), day.toordinal(), int(part)]).generate_state(1)[0])


def as_date(day: str | dt.date) -> dt.date:
    """``day`` as a date ('YYYY-MM-DD' accepted)."""
    return day if isinstance(day, dt.date) else dt.date.fromisoformat(str(day))


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}


def read_day(con: duckdb.DuckDBPyConnection, day: str | dt.date, lo: str = "", hi: str = _TOP,
             spilled: Mapping[str, list[str]] | None = None, accounts: bool = True) -> dict[str, object]:
    """The rows of ``day`` in warehouse ``con``, as Arrow tables keyed by table name (:data:`INPUT_TABLES`).

    Hand tables hold the rows of the hands whose ``day`` (UTC day of ``started_at``) is ``day`` and whose id is in
    ``lo <= hand_id < hi`` (default: all); the account tables the rows stamped that UTC day. A table the warehouse
    lacks is left out. ``spilled``: one part's files written by :func:`spill_day` (table -> Parquet files): the
    hand tables are read from them, the same rows in the same order as from the warehouse with that part's
    ``lo``, ``hi``. ``accounts``: False leaves the account tables out (a part of the day needs none).
    """
    d, have = as_date(day), _tables(con)
    if spilled is None:
        out = {t: con.sql(sql, params={"day": d, "lo": lo, "hi": hi}).to_arrow_table()
               for t, sql in _PART_ROWS_SQL.items() if t in have}
    else:
        # the part's own files (their paths bound, never pasted into the SQL); none: the table's empty rows
        out = {t: (con.sql("SELECT * FROM read_parquet($f, hive_partitioning = false) ORDER BY ALL",
                           params={"f": spilled[t]}) if spilled.get(t) else con.sql(f"SELECT * FROM {t} LIMIT 0")
                   ).to_arrow_table() for t in _PART_ROWS_SQL if t in have}
    if accounts:
        out.update({t: con.sql(sql, params={"day": d}).to_arrow_table()
                    for t, sql in _ACCOUNT_ROWS_SQL.items() if t in have})
    return out


def spill_day(con: duckdb.DuckDBPyConnection, day: dt.date, parts: list[tuple[str, str]], folder: Path
              ) -> list[dict[str, list[str]]]:
    """Write the hand tables' rows of ``day`` to Parquet under ``folder``, split by the id ranges ``parts``
    (:func:`day_parts`); returns per part its files (table -> Parquet files), :func:`read_day`'s ``spilled``.

    Method: each warehouse table is scanned once for the whole day (joined to the day's hand ids, each tagged
    with its part, and written partitioned by part) instead of once per part: over a warehouse whose hand ids
    interleave across days (late files, replicas), a part's id range skips no row group, so each part rescanned
    the history's rows.
    """
    ids = con.sql("SELECT hand_id FROM hands WHERE day = $day", params={"day": day}).pl()["hand_id"]
    cuts = pl.Series([hi for _, hi in parts[:-1]], dtype=pl.Utf8)
    tagged = pl.DataFrame({"hand_id": ids, "part": cuts.search_sorted(ids, side="right").cast(pl.Int32)})
    del ids
    have = _tables(con)
    folder.mkdir(parents=True, exist_ok=True)
    view = con.cursor()  # the day's ids as a view of this cursor only
    try:
        view.register("_day_parts", tagged.to_arrow())
        for t in _PART_ROWS_SQL:
            if t in have:
                # a fixed table name of _PART_ROWS_SQL; the path goes through the API, not the SQL
                view.sql(f"SELECT p.part, t.* FROM {t} t JOIN _day_parts p USING (hand_id)").write_parquet(
                    str(folder / t), partition_by=["part"], write_partition_columns=False, overwrite=True)
    finally:
        view.close()
    # the files of each part and table (DuckDB names them within part=<i>/; a part without rows has none)
    return [{t: sorted(str(f) for f in (folder / t / f"part={i}").glob("*.parquet")) for t in _PART_ROWS_SQL
             if t in have} for i in range(len(parts))]


def day_parts(hand_ids: pl.Series, hands_per_part: int) -> list[tuple[str, str]]:
    """``(lo, hi)`` id ranges of about ``hands_per_part`` hands each covering ``hand_ids`` (one day's), in order:
    the same ranges wherever the day's rows come from, so the parts' seeds (:func:`day_seed`) are too."""
    ids = hand_ids.sort()
    if ids.is_empty():
        return [("", _TOP)]
    cuts = ids.gather(list(range(hands_per_part, ids.len(), hands_per_part))).to_list()
    return list(zip(["", *cuts], [*cuts, _TOP]))


def compute_day(source: duckdb.DuckDBPyConnection | Mapping[str, object], day: str | dt.date, *,
                samples: int = 16, random_state: int = 0, hands_per_part: int = HANDS_PER_PART,
                decisions_to: Callable[[pl.DataFrame], None] | None = None) -> dict[str, pl.DataFrame]:
    """The feature tables of one hand day (:data:`DAY_TABLES`).

    Parameters
    ----------
    source : a warehouse connection (the day's rows are read with :func:`read_day`, one part at a time), or the
        day's rows already selected: a mapping table name -> Arrow table or Polars frame with the warehouse's
        columns (:data:`INPUT_TABLES`; the hand tables are required, an account table missing counts as empty).
    day : the UTC hand day.
    samples, random_state : Monte Carlo draws per decision and the seed (:func:`day_seed` makes each part's).
    hands_per_part : the day's hands are valued in parts of about this many (:func:`day_parts`), which bounds the
        memory of a large day; the parts are a function of the day's hand ids only.
    decisions_to : called with each part's ``hu_decisions``, in part (hand id) order, which are then not kept
        (:meth:`~detectors.features.days.storage.DayStore.writing` writes them to the day's file part by part);
        without it they are concatenated into the returned ``hu_decisions``.

    Returns
    -------
    dict
        table name -> Polars frame (``hu_decisions`` left out when ``decisions_to`` is given); the per-pair and
        per-cell tables are sums over the day's hands, so a window's are their sums
        (:mod:`detectors.features.days.window`).

    Method
    ------
    Each part is valued on its own (:func:`_hand_part`, in a DuckDB held to the warehouse connection's
    ``memory_limit``) and reduced at once to its per-pair and per-cell sums;
    a hand lies in one part, so the day's sums are the parts' sums (counts exactly, floats added in part order)
    and at most one part's decisions are held at a time.
    """
    d = as_date(day)
    decs: list[pl.DataFrame] = []
    sink = decs.append if decisions_to is None else decisions_to
    with tempfile.TemporaryDirectory(prefix="railbird-day-") as tmp:
        if isinstance(source, duckdb.DuckDBPyConnection):
            ids = source.sql("SELECT hand_id FROM hands WHERE day = $day", params={"day": d}).pl()["hand_id"]
            parts = day_parts(ids, hands_per_part)
            del ids
            # the account tables (no hand is in an empty range), summarised before the parts and let go
            accounts = account_days(read_day(source, d, _TOP, _TOP))
            # a day of several parts: its hand rows read from the warehouse once, then part by part from Parquet
            files = spill_day(source, d, parts, Path(tmp) / "rows") if len(parts) > 1 else [None]
            rows = (read_day(source, d, lo, hi, spilled=f, accounts=False) for (lo, hi), f in zip(parts, files))
            # the parts' own DuckDB joins are held to the warehouse connection's memory limit too
            config = {"memory_limit": source.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]}
        else:
            given = {t: pl.DataFrame(f) if not isinstance(f, pl.DataFrame) else f for t, f in source.items()}
            parts, config = day_parts(given["hands"]["hand_id"], hands_per_part), {}
            accounts = account_days(given)
            rows = ({t: given[t].filter((pl.col("hand_id") >= lo) & (pl.col("hand_id") < hi)) for t in HAND_TABLES}
                    for lo, hi in parts)
        sums = Path(tmp) / "sums"
        sums.mkdir()
        out = _part_sums(rows, sink, samples=samples, seeds=[day_seed(random_state, d, i) for i in range(len(parts))],
                         config=config, spill=sums if len(parts) > 1 else None)
    out["baseline_player_cells"] = baseline_player_cells(out["baseline_pair_cells"])
    if decisions_to is None:
        out = {"hu_decisions": pl.concat(decs, how="vertical_relaxed") if len(decs) > 1 else decs[0], **out}
    out["account_days"] = accounts
    # in key order: a day's files are the same whatever process computed them (hash group-bys are not)
    return {t: f if t == "hu_decisions" else f.sort(f.columns[:DAY_KEYS[t]], nulls_last=True)
            for t, f in out.items()}


_SUM_TABLES = ("pair_decisions", "hands_together", "chip_flow", "baseline_pair_cells")


def _part_sums(rows, sink: Callable[[pl.DataFrame], None], *, samples: int, seeds: list[int],
               config: Mapping[str, str], spill: Path | None) -> dict[str, pl.DataFrame]:
    """Value each part of ``rows`` (:func:`_hand_part`), hand its decisions to ``sink`` and return the day's sums
    (:data:`_SUM_TABLES`: the parts' sums added per key, :func:`_sum_by`). With a ``spill`` folder each part's
    sums wait there as Parquet until the last part is done, so the parts' sums are not held while the next part
    is valued."""
    sums: dict[str, list] = {t: [] for t in _SUM_TABLES}
    for i, frames in enumerate(rows):
        dec, ht, fl = _hand_part(frames, samples=samples, seed=seeds[i], config=config)
        del frames  # the part's rows: only its sums and decisions go on
        for t, f in zip(_SUM_TABLES, (pair_decisions(dec), ht, fl, baseline_pair_cells(dec))):
            if spill is not None:
                path = spill / f"{t}-{i}.parquet"
                f.write_parquet(path, statistics=False)
                f = path
            sums[t].append(f)
        sink(dec)
        del dec, ht, fl, f  # nothing of this part is held while the next is read
    return {t: _sum_by([pl.read_parquet(f) if isinstance(f, Path) else f for f in fs], DAY_KEYS[t])
            for t, fs in sums.items()}


def _hand_part(frames: Mapping[str, object], *, samples: int, seed: int, config: Mapping[str, str] | None = None
               ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(hu_decisions, hands_together, chip_flow) of one part's hand tables, in a DuckDB of their own (``config``:
    its settings, e.g. ``memory_limit``)."""
    con = duckdb.connect(config=dict(config or {}))  # these rows alone: every query below reads only them
    try:
        for t in HAND_TABLES:
            f = frames[t]
            con.register(t, f.to_arrow() if isinstance(f, pl.DataFrame) else f)
        return hu_decisions(con, samples=samples, random_state=seed), hands_together(con), chip_flow(con)
    finally:
        con.close()


def _sum_by(frames: list[pl.DataFrame], keys: int) -> pl.DataFrame:
    """The parts' rows summed per key (the first ``keys`` columns): hands lie in one part, so the sums are exact."""
    if len(frames) == 1:
        return frames[0]
    f = pl.concat(frames, how="vertical_relaxed")
    key = f.columns[:keys]
    # float sums taken in part order within each key (one order whatever the process); integer counts add exactly
    # in any order, and the day's tables are sorted by key after (compute_day)
    floats = any(f.schema[c].is_float() for c in f.columns[keys:])
    return f.group_by(key, maintain_order=floats).agg(pl.col(c).sum() for c in f.columns[keys:]).select(f.columns)


def baseline_cells(dec: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The own-baseline sufficient statistics of the decisions ``dec`` (:data:`BASELINE_TESTS`):
    ``baseline_pair_cells`` (:func:`baseline_pair_cells`) and ``baseline_player_cells``
    (:func:`baseline_player_cells`)."""
    pair = baseline_pair_cells(dec)
    return {"baseline_pair_cells": pair, "baseline_player_cells": baseline_player_cells(pair)}


def baseline_pair_cells(dec: pl.DataFrame) -> pl.DataFrame:
    """Per test (:data:`BASELINE_TESTS`), ordered pair and cell (:data:`CELL_COLS`; ``pbin`` null for the tests
    that do not bin by price): the decisions ``n`` with known strength that the test selects and ``k`` showing
    the behaviour. Counts over decisions, so the tables of disjoint sets of hands add."""
    parts = []
    known = dec.filter(pl.col("sbin").is_not_null())
    for test, (y, where, bins) in BASELINE_TESTS.items():
        g = known.filter(where).group_by(["player", "opponent", *bins]).agg(
            n=pl.len().cast(pl.Int64), k=pl.col(y).cast(pl.Int64).sum())
        parts.append(g.with_columns(pl.lit(test).alias("test"), *[pl.lit(None, known.schema[c]).alias(c)
                                                                 for c in CELL_COLS if c not in bins]))
    cols = ["test", "player", "opponent", *CELL_COLS, "n", "k"]
    return pl.concat([p.select(cols) for p in parts])


def baseline_player_cells(pair: pl.DataFrame) -> pl.DataFrame:
    """:func:`baseline_pair_cells` summed over opponents: per test, player and cell the player's own counts
    ``N``, ``K``, what :func:`~detectors.features.gameplay.decisions.own_baseline` fits the player's own rates on."""
    return pair.group_by(["test", "player", *CELL_COLS]).agg(N=pl.col("n").sum(), K=pl.col("k").sum())


ACCOUNT_DAY_SQL = """
WITH acc AS (
    SELECT account FROM sessions UNION SELECT account FROM decisions UNION SELECT account FROM sit_events
), s AS (
    SELECT account, count(*)::BIGINT AS sessions, list_sort(list_distinct(list(device))) AS devices,
           list_sort(list_distinct(list(ip))) AS networks,
           sum(epoch(coalesce(logout_at, login_at) - login_at))::DOUBLE AS online_s
    FROM sessions GROUP BY account
), d AS (
    SELECT account, count(*)::BIGINT AS decisions_timed, sum(ln(greatest(ms, 1)))::DOUBLE AS log_ms_sum,
           sum(ln(greatest(ms, 1)) ^ 2)::DOUBLE AS log_ms_sq
    FROM decisions GROUP BY account
), o AS (
    SELECT account, count(*) FILTER (WHERE kind = 'sit_out')::BIGINT AS sit_outs,
           count(*) FILTER (WHERE kind = 'sit_in')::BIGINT AS sit_ins
    FROM sit_events GROUP BY account
)
SELECT acc.account, coalesce(s.sessions, 0) AS sessions, coalesce(s.devices, []) AS devices,
       coalesce(s.networks, []) AS networks, coalesce(s.online_s, 0) AS online_s,
       coalesce(d.decisions_timed, 0) AS decisions_timed, coalesce(d.log_ms_sum, 0) AS log_ms_sum,
       coalesce(d.log_ms_sq, 0) AS log_ms_sq, coalesce(o.sit_outs, 0) AS sit_outs, coalesce(o.sit_ins, 0) AS sit_ins
FROM acc LEFT JOIN s USING (account) LEFT JOIN d USING (account) LEFT JOIN o USING (account)
ORDER BY acc.account
"""

# an account table the day's input lacks is read as empty, with the warehouse's columns
_ACCOUNT_SCHEMAS = {
    "sessions": {"account": pl.Utf8, "session": pl.Utf8, "ip": pl.Utf8, "device": pl.Utf8,
                 "login_at": pl.Datetime("us"), "logout_at": pl.Datetime("us")},
    "decisions": {"hand_id": pl.Utf8, "seq": pl.Int32, "account": pl.Utf8, "ms": pl.Int32, "ts": pl.Datetime("us")},
    "sit_events": {"account": pl.Utf8, "ts": pl.Datetime("us"), "kind": pl.Utf8, "table_name": pl.Utf8,
                   "tournament_id": pl.Utf8},
}


def account_days(frames: Mapping[str, object]) -> pl.DataFrame:
    """Per account, the day's identity observations (the ``account_days`` table, :data:`DAY_TABLES`).

    ``devices`` and ``networks`` (distinct device ids and addresses of the day's sessions, sorted; null dropped
    by the window's union), ``online_s`` (seconds of the sessions with a logout), ``decisions_timed``,
    ``log_ms_sum``, ``log_ms_sq`` (the timing summary: count, sum and sum of squares of ln ms, from which a
    window's mean and spread of decision times follow), ``sit_outs``, ``sit_ins``.
    """
    con = duckdb.connect()
    try:
        for t in ACCOUNT_TABLES:
            f = frames.get(t)
            f = pl.DataFrame(schema=_ACCOUNT_SCHEMAS[t]) if f is None else f
            con.register(t, f.to_arrow() if isinstance(f, pl.DataFrame) else f)
        return con.sql(ACCOUNT_DAY_SQL).pl()
    finally:
        con.close()
