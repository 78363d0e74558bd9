"""The fit's large frames held once: an account's rows as slices of one sorted frame, and the field's action
counts as arrays keyed by tournament with the accounts as integer codes.

The seat hand-off fit reads, for the candidates' and the null's accounts, every tournament hand and every
decision time of their history, and every player's counts in the events they played (the field). Split into one
frame per account (``partition_by``) those rows were held twice, and the field's accounts as one Python string per
row; here each is one frame sorted by its key (a stable sort: the rows of a key keep their order) read through
zero-copy slices, and the field's rows are arrays with the account as an integer.
"""

from __future__ import annotations

import functools
import weakref
from typing import Callable

import duckdb
import numpy as np
import polars as pl

from detectors.seat_handoff.event_hands import event_sizes, read_hand_rows
from detectors.seat_handoff.one_pass import read_coded_once
from detectors.seat_handoff.queries import (
    ACTS, _DECISIONS_SQL, _HISTORY_CODES_SQL, _TIMING_CODES_SQL, _with_strength, strength_table,
)
from detectors.seat_handoff.statistics import _own_timing, fold_to_big_class


def key_slices(df: pl.DataFrame, key: str | list[str], keep: list[str] | None = None) -> tuple[pl.DataFrame, dict]:
    """The rows of each value of ``key`` as a slice of one frame, as ``partition_by(key, as_dict=True)`` gives
    them but without a copy per group.

    Parameters
    ----------
    df : the frame. key : the column to split by, or a list of columns (the dict's keys then tuples, as
    ``partition_by`` gives them). keep : the columns of the slices (default every column): the others, the
    key's names among them, are not held by the slices.

    Returns
    -------
    ``(sorted, groups)``: ``df`` sorted by ``key`` (stable: each group's rows in their order in ``df``) and a
    dict from each value of ``key`` to its rows, zero-copy slices of ``sorted`` (of its ``keep`` columns), each
    group's rows in the order ``partition_by`` keeps."""
    if df.height == 0:
        return df, {}
    keys = [key] if isinstance(key, str) else list(key)
    df = df.sort(keys, maintain_order=True, nulls_last=True)
    runs = (df.select(keys).with_row_index("_i")
            .group_by(keys, maintain_order=True).agg(pl.col("_i").first().alias("lo"), pl.len().alias("n")))
    names = runs[key].to_list() if isinstance(key, str) else list(zip(*(runs[k].to_list() for k in keys)))
    part = df if keep is None else df.select(keep)
    return df, {k: part.slice(lo, n) for k, lo, n in zip(names, runs["lo"].to_list(), runs["n"].to_list())}


class FieldCounts:
    """The field of the candidates' events: every player's action counts per hand, by tournament, for
    :meth:`counts` (the other players' counts before and after a time).

    Parameters
    ----------
    field : one row per tournament, hand start and player (``tournament_id``, ``started_at``, ``account`` and the
        action counts ``n_<action>``); or None for an empty field (:meth:`read` fills one from the warehouse).

    The rows are kept as arrays (start times, the account as an integer code, the counts as 16-bit integers where
    they fit) and each tournament as a range of them; a tournament's rows in ``field``'s order by start time (a
    stable sort). The counts are integers: a sum of some rows is the same whatever their order."""

    def __init__(self, field: pl.DataFrame | None = None) -> None:
        self.codes: dict = {}
        self.t = np.zeros(0, "datetime64[us]")
        self.acc = np.zeros(0, np.int32)
        self.X = np.zeros((0, len(ACTS)), np.int16)
        self.tc = np.zeros(0, np.int32)
        self.bounds: dict = {}
        if field is None:
            return
        field = field.sort("tournament_id", "started_at", maintain_order=True)
        accounts = field["account"].unique().sort().to_list()
        self.codes = {a: i for i, a in enumerate(accounts)}
        self.t = field["started_at"].to_numpy()
        self.acc = field["account"].replace_strict(self.codes, return_dtype=pl.Int32).to_numpy()
        self.X = _small_counts(field.select([f"n_{a}" for a in ACTS]).to_numpy())
        runs = (field.select("tournament_id").with_row_index("_i")
                .group_by("tournament_id", maintain_order=True).agg(pl.col("_i").first().alias("lo"), pl.len().alias("n")))
        names = runs["tournament_id"].to_list()
        self.tournaments = names
        self.tc = np.repeat(np.arange(len(names), dtype=np.int32), runs["n"].to_numpy())
        self.bounds = {t: (lo, lo + n) for t, lo, n in zip(names, runs["lo"].to_list(), runs["n"].to_list())}

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection, tournaments: list[str], codes: "Codes",
             max_hands: int | None = None) -> "FieldCounts":
        """The field of ``tournaments`` read from the warehouse a batch of events at a time (at most ``max_hands``
        hands a batch, default :data:`FIELD_HANDS_PER_READ`; an event with more is a batch of its own), each batch
        with the tournament, the start time and the player as integers from DuckDB (no name reaches Python) and
        kept as arrays before the next is read: the rows, counts and ranges of ``FieldCounts(field)`` on every
        player's voluntary actions per hand of those events read at once with the names.

        Parameters
        ----------
        con : the warehouse (``actions``, ``hands``, ``seats``). tournaments : the events' names.
        codes : the warehouse's tournament codes (:class:`Codes`). max_hands : the hands of a batch.

        Returns
        -------
        The field (its accounts' codes in the order of their names, every player of ``actions`` coded)."""
        max_hands = FIELD_HANDS_PER_READ if max_hands is None else max_hands
        self = cls()
        tcs = sorted({codes.tournament[t] for t in tournaments if t in codes.tournament})
        players = con.sql("SELECT DISTINCT player FROM actions").pl()["player"].sort()
        self.codes = {a: i for i, a in enumerate(players.to_list())}
        con.register("_rb_ft", pl.DataFrame({"tournament_id": [codes.tournaments[c] for c in tcs],
                                             "tc": pl.Series(tcs, dtype=pl.Int32)}))
        con.register("_rb_fp", pl.DataFrame({"account": players, "code": pl.int_range(players.len(), dtype=pl.Int32,
                                                                                        eager=True)}))
        parts = []
        try:
            sizes = con.sql(_EVENT_HANDS_SQL).pl()
            for lo, hi in _code_ranges(sizes["tc"].to_numpy(), sizes["n"].to_numpy(), max_hands):
                b = con.sql(_FIELD_CODES_SQL, params=[lo, hi]).pl()
                o = np.lexsort((b["ts"].to_numpy(), b["tc"].to_numpy()))
                parts.append((b["tc"].to_numpy().astype(np.int32)[o], b["ts"].to_numpy().astype(np.int64)[o],
                              b["acc"].to_numpy().astype(np.int32)[o],
                              _small_counts(b.select([f"n_{a}" for a in ACTS]).to_numpy())[o]))
                del b
        finally:
            con.unregister("_rb_ft")
            con.unregister("_rb_fp")
        if parts:
            self.tc, ts, self.acc, self.X = (np.concatenate([p[i] for p in parts]) for i in range(4))
            self.t = ts.view("datetime64[us]")
        self.tournaments = codes.tournaments
        u, lo, n = np.unique(self.tc, return_index=True, return_counts=True)
        self.bounds = {codes.tournaments[c]: (s, s + k) for c, s, k in zip(u.tolist(), lo.tolist(), n.tolist())}
        return self

    def __contains__(self, tid: str) -> bool:
        """Whether tournament ``tid`` has rows in the field."""
        return tid in self.bounds

    def counts(self, tid: str, account: str, cp_time) -> tuple[np.ndarray, np.ndarray]:
        """The other players' action counts in tournament ``tid`` before / after ``cp_time`` (``account``'s own
        rows left out), as floats; zeros for a tournament not in the field."""
        if tid not in self.bounds:
            return np.zeros(len(ACTS)), np.zeros(len(ACTS))
        lo, hi = self.bounds[tid]
        t, X = self.t[lo:hi], self.X[lo:hi]
        others = self.acc[lo:hi] != self.codes.get(account, -1)
        after = t >= np.datetime64(cp_time, "us")
        return (X[others & ~after].sum(axis=0, dtype=np.int64).astype(float),
                X[others & after].sum(axis=0, dtype=np.int64).astype(float))

    def frame(self, tournaments) -> pl.DataFrame:
        """The rows of ``tournaments`` (those in the field) without their accounts, as the population's null reads
        them: ``tc`` (the tournament's code, :class:`Codes`; for a field made from a frame, its index in
        :attr:`tournaments`), ``ts`` (the hand's start, microseconds) and the action counts ``n_<action>``."""
        spans = [self.bounds[t] for t in sorted(set(tournaments)) if t in self.bounds]
        idx = np.concatenate([np.arange(lo, hi) for lo, hi in spans] + [np.zeros(0, np.int64)])
        return pl.DataFrame({"tc": self.tc[idx], "ts": self.t[idx].astype(np.int64),
                             **{f"n_{a}": self.X[idx, i] for i, a in enumerate(ACTS)}})


def _small_counts(X: np.ndarray) -> np.ndarray:
    """Action counts as 16-bit integers where every count fits (32-bit otherwise): the same sums, a quarter of the
    memory of 64-bit rows."""
    X = np.asarray(X)
    small = X.size == 0 or (int(X.min()) >= 0 and int(X.max()) <= np.iinfo(np.int16).max)
    return X.astype(np.int16 if small else np.int32)


def _code_ranges(codes: np.ndarray, sizes: np.ndarray, max_size: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``(lo, hi)`` (inclusive) of the sorted ``codes``, each of at most ``max_size`` of
    ``sizes`` summed (a code with more alone), covering every code."""
    out: list[tuple[int, int]] = []
    lo = hi = None
    tot = 0
    for c, n in zip(np.asarray(codes).tolist(), np.asarray(sizes).tolist()):
        if lo is not None and tot + n > max_size:
            out.append((lo, hi))
            lo, tot = None, 0
        lo = c if lo is None else lo
        hi, tot = c, tot + n
    return out + ([(lo, hi)] if lo is not None else [])


#: hands of the events whose field one query reads (their players' counts by hand): the field of every candidate
#: account's events read at once, with the names, was the fit's peak at 2.4M hands
FIELD_HANDS_PER_READ = 300_000

_EVENT_HANDS_SQL = """
SELECT t.tc, count(*) AS n FROM hands h JOIN _rb_ft t ON t.tournament_id = h.tournament_id GROUP BY ALL ORDER BY ALL
"""

# every player's voluntary actions per hand of the events with codes lo..hi (the field), the tournament, the start
# (microseconds) and the player coded
_FIELD_CODES_SQL = """
SELECT t.tc, epoch_us(h.started_at) AS ts, p.code AS acc,
       count(*) FILTER (WHERE a.action = 'fold')  AS n_fold,
       count(*) FILTER (WHERE a.action = 'check') AS n_check,
       count(*) FILTER (WHERE a.action = 'call')  AS n_call,
       count(*) FILTER (WHERE a.action = 'bet')   AS n_bet,
       count(*) FILTER (WHERE a.action = 'raise') AS n_raise
FROM actions a JOIN hands h USING (hand_id)
JOIN _rb_ft t ON t.tournament_id = h.tournament_id
JOIN _rb_fp p ON p.account = a.player
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE) AND t.tc BETWEEN ? AND ?
GROUP BY ALL
"""


#: rows one read of the accounts' tournament hands or decision times returns at most (counted before the read:
#: :data:`HIST_ROWS_SQL`): each batch's raw result stayed resident after it was reduced
ROWS_PER_READ = 500_000

_SEATS_SQL = """
SELECT player AS account, count(*) AS n FROM seats WHERE player IN (SELECT account FROM _rb_acc)
GROUP BY ALL ORDER BY ALL
"""

#: the rows :data:`_HISTORY_CODES_SQL` can return for each account (at most one a tournament seat)
HIST_ROWS_SQL = """
SELECT s.player AS account, count(*) AS n FROM seats s JOIN hands h USING (hand_id)
WHERE h.is_tournament AND s.player IN (SELECT account FROM _rb_acc)
GROUP BY ALL ORDER BY ALL
"""


def account_batches(con: duckdb.DuckDBPyConnection, accounts: pl.Series, max_rows: int,
                    sizes_sql: str = _SEATS_SQL) -> list[list[str]]:
    """``accounts`` in batches of at most ``max_rows`` rows of ``sizes_sql`` each (an account with more is a batch
    of its own), in the order of their names.

    Parameters
    ----------
    con : the warehouse (``seats``). accounts : the accounts. max_rows : the rows of a batch (every candidate
    account's history read at once held more than the pipeline's 1 GB DuckDB limit at 2.4M hands). sizes_sql : each account's rows (``account``, ``n``; the accounts of the registered
    ``_rb_acc``, ordered by name): its seats by default, or :data:`HIST_ROWS_SQL`.

    Returns
    -------
    The batches, each a list of account names; every account in one (those without a row in the last)."""
    con.register("_rb_acc", pl.DataFrame({"account": accounts.unique().cast(pl.Utf8)}))
    try:
        seats = con.sql(sizes_sql).pl()
    finally:
        con.unregister("_rb_acc")
    batches: list[list[str]] = []
    cur: list[str] = []
    size = 0
    for a, n in zip(seats["account"].to_list(), seats["n"].to_list()):
        if cur and size + n > max_rows:
            batches.append(cur)
            cur, size = [], 0
        cur.append(a)
        size += n
    seen = set(seats["account"].to_list())
    cur += sorted(a for a in accounts.unique().to_list() if a not in seen)
    return batches + [cur] if cur or not batches else batches


def read_coded(con: duckdb.DuckDBPyConnection, sql: str, names: list[str], sizes_sql: str,
               transform: Callable[[pl.DataFrame], pl.DataFrame], max_rows: int | None = None) -> pl.DataFrame:
    """``sql`` (a query of the accounts in the registered ``_rb_ac``: ``account``, ``code``) run once per batch of
    accounts (:func:`account_batches` by the rows of ``sizes_sql``, at most ``max_rows``, default
    :data:`ROWS_PER_READ`), each result reduced by ``transform`` before the next is read.

    Parameters
    ----------
    con : the warehouse (with the :class:`Codes` frames registered, :meth:`Codes.registered`). sql : the query.
    names : the accounts, sorted: an account's code is its index here. sizes_sql : the rows of each account.
    transform : what is kept of a batch's rows. max_rows : the rows of a batch.

    Returns
    -------
    The batches' kept rows, one frame."""
    code = {a: i for i, a in enumerate(names)}
    parts = []
    for b in account_batches(con, pl.Series(names, dtype=pl.Utf8), ROWS_PER_READ if max_rows is None else max_rows,
                             sizes_sql):
        con.register("_rb_ac", pl.DataFrame({"account": pl.Series(b, dtype=pl.Utf8),
                                             "code": pl.Series([code[a] for a in b], dtype=pl.Int32)}))
        try:
            parts.append(transform(con.sql(sql).pl()))
        finally:
            con.unregister("_rb_ac")
    return pl.concat(parts, how="vertical_relaxed")


class Codes:
    """Integer codes of the warehouse's tournaments and devices (in the order of their names), for frames that
    keep a code per row in place of the name: :attr:`tournament` and :attr:`device` map a name to its code, -1
    standing for none (a cash hand, a decision before any known login); a name not in the warehouse gets
    :meth:`of`'s ``missing``.

    Parameters
    ----------
    con : the warehouse (``hands``, ``sessions``)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        tids = con.sql("SELECT DISTINCT tournament_id FROM hands WHERE tournament_id IS NOT NULL").pl()
        devs = con.sql("SELECT DISTINCT device FROM sessions WHERE device IS NOT NULL ORDER BY ALL").pl()
        # (sorted here, not by DuckDB: a frame sorted by the codes is then in the order polars sorts the names)
        self.tournaments = tids["tournament_id"].cast(pl.Utf8).sort().to_list()
        self.tournament = {t: i for i, t in enumerate(self.tournaments)}
        self.device = {d: i for i, d in enumerate(devs["device"].to_list())}

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        """Register the codes for the queries that code in DuckDB: ``_rb_tc`` (``tournament_id``, ``tc``) and
        ``_rb_dc`` (``device``, ``dc``); :meth:`unregister` takes them back."""
        con.register("_rb_tc", pl.DataFrame({"tournament_id": pl.Series(self.tournaments, dtype=pl.Utf8),
                                             "tc": pl.Series(range(len(self.tournaments)), dtype=pl.Int32)}))
        con.register("_rb_dc", pl.DataFrame({"device": pl.Series(list(self.device), dtype=pl.Utf8),
                                             "dc": pl.Series(list(self.device.values()), dtype=pl.Int32)}))

    @staticmethod
    def unregister(con: duckdb.DuckDBPyConnection) -> None:
        """Take back what :meth:`register` registered."""
        con.unregister("_rb_tc")
        con.unregister("_rb_dc")

    @staticmethod
    def of(codes: dict, name: str | None, missing: int = -2) -> int | None:
        """The code of ``name`` in ``codes`` (``missing`` for a name without one; None for None)."""
        return None if name is None else codes.get(name, missing)

    def decode_timing(self, by_acc: dict, accounts: list[str]) -> pl.DataFrame:
        """The decision-time rows of ``accounts`` (slices of ``by_acc`` without their account) with their names
        again: ``account``, ``tournament_id`` (null for a cash hand), ``started_at``, ``log_ms``, ``cls``."""
        names = pl.Series(self.tournaments, dtype=pl.Utf8)
        parts = [by_acc[a].select(account=pl.lit(a, dtype=pl.Utf8), tc="tc", started_at="started_at",
                                  log_ms="log_ms", cls="cls")
                 for a in accounts if a in by_acc]
        if not parts:
            return pl.DataFrame(schema={"account": pl.Utf8, "tournament_id": pl.Utf8, "started_at": pl.Datetime("us"),
                                        "log_ms": pl.Float64, "cls": pl.Int32})
        df = pl.concat(parts, how="vertical_relaxed")
        tid = (names.gather(df["tc"].clip(lower_bound=0).cast(pl.UInt32)) if names.len()
               else pl.Series([None] * df.height, dtype=pl.Utf8))
        return df.with_columns(tournament_id=pl.when(pl.col("tc") >= 0).then(tid)).select(
            "account", "tournament_id", "started_at", "log_ms", "cls")


def null_history(hist: pl.DataFrame, key: str = "account") -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the population's null reads of its accounts' tournament hands (:mod:`detectors.seat_handoff.null`),
    taken from their rows so that the rows need not be held: the action counts summed by account, and the hands
    with an entry decision counted by account and range stratum.

    Parameters
    ----------
    hist : tournament-hand rows (``account``, the action counts ``n_<action>``, ``rstr``, ``rcls``).
    key : the column of the account (``account``, or a code of it).

    Returns
    -------
    ``(sums, ranges)``: ``sums`` one row per account (``key``, the counts summed); ``ranges`` one row per
    account and stratum with ``rcls >= 0`` (``key``, ``rstr``, ``n`` hands, ``n1`` of them entered, ``n2``
    entered with a raise)."""
    sums = hist.group_by(key).agg([pl.col(f"n_{a}").sum() for a in ACTS])
    ranges = (hist.filter(pl.col("rcls") >= 0).group_by(key, "rstr")
              .agg(n=pl.len(), n1=(pl.col("rcls") >= 1).sum(), n2=(pl.col("rcls") == 2).sum()))
    return sums, ranges


#: the columns :func:`read_hands` keeps of the hands by account-event (the per-hand situation columns are read
#: only into the range stratum ``rstr`` and class ``rcls``); the action counts, strata and classes as 32-bit
#: integers (their values are small counts and codes; every reader converts them to floats or 64-bit integers)
HAND_COLS = ("hand_id", "started_at", *[f"n_{a}" for a in ACTS], "vpip", "sizes", "rstr", "rcls")


def read_hands(con: duckdb.DuckDBPyConnection, null_ev: pl.DataFrame, sizes: pl.DataFrame,
               max_rows: int | None = None) -> tuple[pl.DataFrame, dict]:
    """The hands of the account-events of ``sizes`` (:data:`_HAND_ROWS_SQL`, their range strata made:
    :func:`_with_strength`), read a batch of account-events at a time, each batch reduced before the next
    (:func:`~detectors.seat_handoff.event_hands.read_hand_rows`), by account-event and, with their names, those of
    the null's account-events.

    Parameters
    ----------
    con : the warehouse, ``_rb_strength`` registered. null_ev : the null's account-events (``account``,
        ``tournament_id``). sizes : the account-events (``account``, ``tournament_id``, ``n`` their seats: the
        batches' sizes). max_rows : a batch's seats (default :data:`~detectors.seat_handoff.event_hands.HAND_ROWS_PER_READ`).

    Returns
    -------
    ``(null_hands, by_at)``: ``null_hands`` the rows of ``null_ev``'s account-events (``tournament_id``,
    ``account`` and :data:`HAND_COLS`), sorted by account, tournament, start and hand; ``by_at`` from each
    account-event to its rows in that order (:data:`HAND_COLS` only: no name per row), slices of one frame."""
    ints = [f"n_{a}" for a in ACTS] + ["rstr", "rcls"]

    def keep(df: pl.DataFrame) -> pl.DataFrame:
        return _with_strength(df).select("tournament_id", "account", *HAND_COLS).with_columns(pl.col(ints).cast(pl.Int32))

    hands = read_hand_rows(con, sizes, keep, max_rows).sort("account", "tournament_id", "started_at", "hand_id")
    # (slices of the sorted hands, no copy per account-event)
    hands, by_at = key_slices(hands, ["account", "tournament_id"], keep=list(HAND_COLS))
    return hands.join(null_ev.select("account", "tournament_id").unique(), on=["account", "tournament_id"],
                      how="semi", maintain_order="left"), by_at


def read_event_decisions(con: duckdb.DuckDBPyConnection) -> dict:
    """The decision times of the registered account-events ``_rb_at`` (:data:`_DECISIONS_SQL`, its hand left in
    DuckDB), by account-event.

    Parameters
    ----------
    con : the warehouse, ``_rb_at`` registered.

    Returns
    -------
    From each account-event (``(account, tournament_id)``) to its decisions (``started_at``, ``log_ms``: no name
    per row), slices of one frame."""
    dec = con.sql(_DECISIONS_SQL).select("account", "tournament_id", "started_at", "log_ms").pl()
    return key_slices(dec, ["account", "tournament_id"], keep=["started_at", "log_ms"])[1]


class FramesMixin:
    """The frames the fit of :class:`~detectors.seat_handoff.SeatHandoffDetector` reads from the warehouse."""

    def _read_frames(self, con: duckdb.DuckDBPyConnection, cand: pl.DataFrame, null_ev: pl.DataFrame,
                     at: pl.DataFrame, sizes: pl.DataFrame | None = None) -> tuple:
        """The candidates' and the null's account-events ``at`` read: their hands (``hands`` and by account-event),
        their decision times by account-event, the candidate accounts' own tournament hands (``hist``, tournament
        and device as codes, :class:`Codes`, set as ``codes_``; and by account), the null accounts' reduced as the
        null reads them (:func:`null_history`, a batch at a time: their rows are not held), their decision times by
        account (codes), the field (set as ``field_``, :class:`FieldCounts`, and returned: the null makes its events'
        rows from it) and the null accounts' decision times with their names (a call that makes them: the null's). An
        account's history is read a batch of accounts at a time, batches sized by the rows they return
        (:func:`read_coded`), the decision times by one pass over every account (:func:`read_coded_once`), the
        account, tournament and device coded by DuckDB, and kept as slices of one frame (:func:`key_slices`).

        Returns
        -------
        ``(hands, by_at, dec_at, hist, hist_by_acc, hdec_by_acc, field, tim_null, null_hist)``: ``hands`` the null's
        account-events' hands (:func:`read_hands`), ``by_at`` every account-event's without names, ``dec_at`` the
        candidates' account-events' decision times (:func:`read_event_decisions`)."""
        self.codes_ = Codes(con)
        con.register("_rb_strength", strength_table())
        self.codes_.register(con)
        try:
            # (a batch of account-events at a time, sized by their seats: :mod:`detectors.seat_handoff.event_hands`)
            hands, by_at = read_hands(con, null_ev, event_sizes(con, at) if sizes is None else sizes)
            con.register("_rb_at", at)
            if self.has_decisions_:
                # (the candidates' account-events only: the null reads the decision times by account, ``tim_null``)
                con.unregister("_rb_at")
                con.register("_rb_at", cand.select("account", "tournament_id").unique())
                dec_at = read_event_decisions(con)
                con.unregister("_rb_at")
                con.register("_rb_at", at)
            else:
                dec_at = {}
            names = sorted(set(at["account"].to_list()))
            hist, null_hist = self._read_history(con, names, null_ev)
            if self.stage_baseline and self.has_sessions_:
                # the candidate accounts' own other tournament events: the field is read for them too (their
                # same-stage baseline, :mod:`detectors.seat_handoff.stage`)
                tnames = pl.Series(self.codes_.tournaments, dtype=pl.Utf8)
                own = hist.select("acc", "tc").unique()
                accs = pl.Series(names, dtype=pl.Utf8)
                at = pl.concat([at, own.select(account=accs.gather(own["acc"].cast(pl.UInt32)),
                                               tournament_id=tnames.gather(own["tc"].cast(pl.UInt32)))],
                               how="vertical_relaxed").unique()
                con.unregister("_rb_at")
                con.register("_rb_at", at)
            # (a batch of events at a time, the names coded by DuckDB); the null reads the field of its own events,
            # made from it when the null is drawn (:meth:`FieldCounts.frame`)
            self.field_ = FieldCounts.read(con, at["tournament_id"].unique().to_list(), self.codes_)
            hist, hist_by_acc = key_slices(hist, "acc")
            hist_by_acc = {names[c]: g for c, g in hist_by_acc.items()}
            hdec_by_acc: dict = {}
            tim_null = None
            if self.has_decisions_:
                # (the accounts of the history's read: the candidates' and the null's; one scan of the tables)
                tim = read_coded_once(con, _TIMING_CODES_SQL, names, lambda df: df)
                # (a fold to a big bet counted with the class its times resemble here: statistics.fold_to_big_class)
                tim = tim.with_columns(cls=pl.Series(fold_to_big_class(tim["log_ms"].to_numpy(),
                                                                       tim["cls"].to_numpy())))
                _, hdec_by_acc = key_slices(tim, "acc")
                del tim
                hdec_by_acc = {names[c]: g.drop("acc") for c, g in hdec_by_acc.items()}
                # (with their names when the null is drawn, not held beside the codes until then)
                tim_null = functools.partial(self.codes_.decode_timing, hdec_by_acc,
                                             sorted(set(null_ev["account"].to_list())))
        finally:
            con.unregister("_rb_at")
            con.unregister("_rb_strength")
            Codes.unregister(con)
        return hands, by_at, dec_at, hist, hist_by_acc, hdec_by_acc, self.field_, tim_null, null_hist

    def _read_history(self, con: duckdb.DuckDBPyConnection, names: list[str], null_ev: pl.DataFrame
                      ) -> tuple[pl.DataFrame, tuple]:
        """The tournament hands of ``names`` (sorted; the codes of :class:`Codes` registered) read by batches of rows,
        coded by DuckDB: the candidate accounts' kept (``acc``: the index in ``names``; ``tc``, ``started_at``, the
        action counts, ``dc``, ``rstr``, ``rcls``), the null accounts' (those of ``null_ev``) reduced as the null
        reads them (:func:`null_history`, by account name) as each batch is read.

        Returns
        -------
        ``(hist, null_hist)``."""
        null_acc = set(null_ev["account"].to_list())
        null_codes = pl.Series([i for i, a in enumerate(names) if a in null_acc], dtype=pl.Int32)
        accs = pl.Series(names, dtype=pl.Utf8)
        null_parts: list[tuple[pl.DataFrame, pl.DataFrame]] = []

        def keep(df: pl.DataFrame) -> pl.DataFrame:
            # (the columns the tests read: the entry decision's situation is in rstr and rcls); the null
            # accounts' rows reduced to what the null reads
            df = _with_strength(df).select("acc", "tc", "started_at", *[f"n_{a}" for a in ACTS], "dc", "rstr", "rcls")
            is_null = pl.col("acc").is_in(null_codes.implode())
            sums, ranges = null_history(df.filter(is_null), "acc")
            null_parts.append(tuple(x.with_columns(account=accs.gather(x["acc"].cast(pl.UInt32))).select(
                "account", pl.exclude("account", "acc")) for x in (sums, ranges)))
            return df.filter(~is_null)

        hist = read_coded(con, _HISTORY_CODES_SQL, names, HIST_ROWS_SQL, keep)
        return hist, (pl.concat([p[0] for p in null_parts], how="vertical_relaxed"),
                      pl.concat([p[1] for p in null_parts], how="vertical_relaxed"))


#: rows (compared change points) tested at once: each row's baseline samples (the account's own decisions and
#: hands outside the event's after-segment) are made for those rows only, then dropped
TEST_ROWS = 1000


def hist_base(hist: pl.DataFrame | None, tcode: int | None, cp_time, dcode: int | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The account's own tournament hands a change point's after-segment is compared with: all but the event's
    hands from ``cp_time`` on, and (``dcode`` not None) but those played on that device.

    Parameters
    ----------
    hist : the account's tournament hands (``tc``, ``started_at``, ``dc``, the action counts, ``rstr``, ``rcls``;
        tournament and device as :class:`Codes`). tcode : the event's code. cp_time : the change point. dcode : the
        code of the device left out, or None.

    Returns
    -------
    ``(hc, rb, crb)``: the action counts summed (floats), and the range strata and entry classes of the hands
    with an entry decision."""
    if hist is None or not hist.height:
        return np.zeros(len(ACTS)), np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    tc, started, dc, X, hr, hrc = _hist_arrays(hist)
    same_event = tc == tcode
    after_t = started >= np.datetime64(cp_time, "us")
    keep = ~(same_event & after_t) & ((dc != dcode) if dcode is not None else True)
    hc = X[keep].sum(axis=0)
    kr = keep & (hrc >= 0)
    return hc, hr[kr], hrc[kr]


#: the columns of the last account's hands :func:`hist_base` read, by a weak reference to their frame (emptied
#: when the frame goes)
_HIST_MEMO: list = [None, None]


def _hist_arrays(hist: pl.DataFrame) -> tuple[np.ndarray, ...]:
    """The columns :func:`hist_base` reads, as arrays: an account's change points are compared one after the
    other, each with the same frame of its hands, which is converted once (the last frame's arrays kept while the
    frame lives).

    Parameters
    ----------
    hist : an account's tournament hands (as :func:`hist_base`).

    Returns
    -------
    ``(tc, started_at, dc, counts, rstr, rcls)``: the codes, the start times, the action counts as floats (one
    column per action) and the range strata and entry classes as integers."""
    ref, arrays = _HIST_MEMO
    if ref is not None and ref() is hist:
        return arrays
    arrays = (hist["tc"].to_numpy(), hist["started_at"].to_numpy(), hist["dc"].to_numpy(),
              hist.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float),
              hist["rstr"].to_numpy().astype(np.int64), hist["rcls"].to_numpy().astype(np.int64))
    _HIST_MEMO[:] = [weakref.ref(hist, _forget), arrays]
    return arrays


def _forget(ref: weakref.ref) -> None:
    """Drop :func:`_hist_arrays`' arrays once their frame is gone (they may be views of its buffers: none is kept
    beyond the fit). ``ref``: the weak reference whose frame went."""
    if _HIST_MEMO[0] is ref:
        _HIST_MEMO[:] = [None, None]


def time_baseline(r: dict) -> tuple[np.ndarray, np.ndarray]:
    """A compared row's timing baseline made again from what it keeps (``_base``, :func:`_own_timing`): the account's
    own log decision times and their classes off the login's device, outside the event's after-segment."""
    _, hdec, _, cp_time, _, tcode, dcode = r["_base"]
    _, _, tb, ctb, _ = _own_timing(hdec, tcode, cp_time, dcode)
    return tb, ctb


def range_baseline(r: dict) -> tuple[np.ndarray, np.ndarray]:
    """A compared row's range baseline made again from what it keeps (``_base``, :func:`hist_base`): the strata and
    entry classes of the account's own hands it is compared with."""
    hist, _, _, cp_time, _, tcode, dcode = r["_base"]
    _, rb, crb = hist_base(hist, tcode, cp_time, dcode)
    return rb, crb
