"""Coordinated sit-outs: players of one event who agree to sit out together.

Method
------
1. **Sit-out starts** per account and tournament, from the platform events
   (``sit_events``) and from the hands (``seats.sitting_out`` and the table
   events), starts of one account closer than ``merge_s`` merged; starts seen
   only in the hands are timed on the event's consensus clock
   (:func:`consensus_clock`: the deal order of hand numbers, since each
   table's own clock drifts).
2. **Waves are not coordination.** A start shared by ``wave_share`` of the
   players still in the event (and at least ``wave_min``), or in the first
   hand after a scheduled break, is a break or a disconnect wave and is
   dropped before testing.
3. **Co-occurrence.** Two players' starts co-occur when they fall within the
   sum of their timing tolerances (``tol_event_s``, ``tol_hand_s``). A pair is
   flagged (:meth:`CoordinatedSitoutDetector.flag`) when it co-occurs at
   least ``min_cooccur`` times with q <= alpha, or once when a second,
   independent behaviour agrees: co-entry far beyond the configuration model
   (:func:`detectors.features.identity.co_entries`), the coincidence and the
   co-entry each unusual on their own and their Fisher combination under a
   Bonferroni bound at ``single_alpha`` over every single-coincidence pair
   (family-wise control, Holm 1979).
4. **Null: each player's own sit-out rate in the event.** Under independence
   coincidences fall as a Poisson count with mean
   ``lam = sum over start pairs of 2 w / T`` and each gap over its window is
   uniform; per event the statistic ``S = sum of -log(gap / w)`` is a marked
   Poisson variable with an exact tail, and where the hands show every run of
   both players a second mark, whether the two runs last as many hands
   (:func:`_length_mark`). Per-event p-values are combined over the shared
   events with Fisher's method; Benjamini–Hochberg (1995) controls the
   false-discovery rate over every pair of players with a sit-out in a
   shared event. A seeded permutation test (Phipson & Smyth, SAGMB 2010) is
   reported for the most suspicious pairs.
5. **Bubble weight.** The score is -log10(p) times (1 + the mean proximity to
   the money at the co-occurrences); flagged pairs join into groups
   (connected components, :class:`detectors.base.GroupDetector`).

The test of near-coincident point events against each unit's own rate follows
the spike-train synchrony literature (Grün, Diesmann & Aertsen, "Unitary event
analysis", Neural Computation 14, 2002). The figures behind each rule are in
docs/measurements.md ("Detector notes moved from docstrings").
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl
from scipy import special as _sp
from scipy import stats as sps

from detectors.base import Evidence, GroupDetector, Signal, is_missing, sql_literal as _lit
from detectors.features import identity as idf


_HANDS_SQL = """
-- every tournament hand in the room's deal order (hand numbers are issued by one
-- sequence for every table), and whether it is the first at its table after the
-- event's break: the table paused (no hand for ``pause`` seconds) while at least
-- half of the event's tables dealing around then paused across the same moment
-- (a scheduled break stops every table at once; one slow table waiting for a
-- moved player does not)
WITH h AS (
  SELECT hand_id, tournament_id, table_name, started_at, epoch(started_at) AS t,
         epoch(started_at) - epoch(lag(started_at) OVER (
           PARTITION BY tournament_id, table_name ORDER BY started_at, hand_id)) AS gap
  FROM hands WHERE is_tournament AND tournament_id IS NOT NULL
),
p AS (SELECT hand_id, tournament_id, table_name, t - gap AS g0, t AS g1 FROM h WHERE gap >= $pause),
brk AS (
  SELECT p.hand_id,
         count(DISTINCT q.table_name) AS paused,
         max(q.g0) AS brk_g0,
         (SELECT count(DISTINCT x.table_name) FROM h x
           WHERE x.tournament_id = p.tournament_id AND x.t BETWEEN p.g0 - 600 AND p.g1 + 600) AS running
  FROM p JOIN p q ON q.tournament_id = p.tournament_id AND q.g0 <= p.g1 - 60 AND q.g1 >= p.g1 - 60
  GROUP BY p.hand_id, p.tournament_id, p.g0, p.g1
)
SELECT h.hand_id, h.tournament_id, h.t,
       row_number() OVER (PARTITION BY h.tournament_id
                          ORDER BY TRY_CAST(h.hand_id AS HUGEINT) NULLS LAST, h.started_at, h.hand_id) - 1 AS r,
       coalesce(brk.paused * 2 >= brk.running, FALSE) AS after_pause,
       -- when the break began: the last hand dealt before it, over the tables that paused
       CASE WHEN brk.paused * 2 >= brk.running THEN brk.brk_g0 END AS break_from
FROM h LEFT JOIN brk USING (hand_id)
"""


def consensus_clock(con: duckdb.DuckDBPyConnection, *, block: int = 50, pause_s: float = 180.0,
                    min_agreement: float = 0.9) -> pl.DataFrame:
    """The event's consensus clock for every tournament hand: ``hand_id``,
    ``tournament_id``, ``clock`` (TIMESTAMP), ``after_pause`` and ``break_from``
    (for a hand after a break: when the break began, epoch seconds, the last
    hand dealt ahead of it over the tables that paused).

    Each table stamps its hands with its own clock, and tables drift apart with
    their players' speed (minutes, late in an event), so two tables dealing their
    next hand at the same moment can stamp it minutes apart. Hand numbers come
    from one sequence for the whole room, so the deal order is common to all
    tables: the clock is the deal rank mapped to time through the median start
    time of each block of ``block`` consecutive hands (kept non-decreasing) and
    interpolated linearly between block centres (a running-median smoother,
    Tukey, *Exploratory Data Analysis*, 1977, ch. 7). Where hand numbers agree
    with the stamps, as in most exports, this changes the times by a few seconds;
    where they do not follow the deal at all (rank correlation of number and stamp
    in the event below ``min_agreement``: numbered table by table, anonymised) the
    stamps are kept."""
    h = con.sql(_HANDS_SQL, params={"pause": float(pause_s)}).pl()
    if h.height == 0:
        return pl.DataFrame(schema={"hand_id": pl.Utf8, "tournament_id": pl.Utf8, "clock": pl.Datetime("us"),
                                    "after_pause": pl.Boolean, "break_from": pl.Float64})
    h = h.with_columns(b=pl.col("r") // block).sort("tournament_id", "r")
    blocks = h.group_by("tournament_id", "b").agg(c=pl.col("r").mean(), m=pl.col("t").median()).sort("tournament_id", "b")
    tid_b = blocks["tournament_id"].to_numpy()
    c_b, m_b = blocks["c"].to_numpy(), blocks["m"].to_numpy()
    tid_h = h["tournament_id"].to_numpy()
    r_h = h["r"].to_numpy().astype(float)
    clock = np.empty(h.height)
    bb = np.flatnonzero(np.r_[True, tid_b[1:] != tid_b[:-1], True])
    hb = np.flatnonzero(np.r_[True, tid_h[1:] != tid_h[:-1], True])
    # both frames are sorted by tournament: the i-th run of one is the i-th of the other
    for (i0, i1), (j0, j1) in zip(zip(bb[:-1], bb[1:]), zip(hb[:-1], hb[1:])):
        cc, mm = c_b[i0:i1], np.maximum.accumulate(m_b[i0:i1])
        if cc.size == 1:
            clock[j0:j1] = mm[0]
        else:
            clock[j0:j1] = np.interp(r_h[j0:j1], cc, mm)
    # hand numbers that do not follow the deal (an export numbering each table's hands
    # in a block, anonymised ids): their order says nothing about time, keep the stamps
    h = h.with_columns(clock_t=pl.Series(clock), rank_t=pl.col("t").rank().over("tournament_id"))
    agree = h.group_by("tournament_id").agg(rho=pl.corr("r", "rank_t"))
    h = h.join(agree, on="tournament_id", how="left").with_columns(
        clock_t=pl.when(pl.col("rho").fill_nan(0.0).fill_null(0.0) >= min_agreement)
        .then(pl.col("clock_t")).otherwise(pl.col("t")))
    return h.select("hand_id", "tournament_id", "after_pause", pl.col("break_from").cast(pl.Float64)).with_columns(
        clock=pl.from_epoch((h["clock_t"] * 1e6).round().cast(pl.Int64), time_unit="us"))


_STARTS_SQL = """
WITH ev AS (
  SELECT account, tournament_id, ts, 'event' AS source, NULL AS hand_id
  FROM sit_events WHERE kind = 'sit_out' AND tournament_id IS NOT NULL
),
flag AS (
  SELECT s.player AS account, h.tournament_id, hx.started_at, h.clock, h.after_pause, s.hand_id,
         s.sitting_out OR coalesce(te.out, FALSE) AS is_out
  FROM seats s JOIN _rb_clock h USING (hand_id) JOIN hands hx USING (hand_id)
  LEFT JOIN (SELECT hand_id, player, TRUE AS out FROM table_events
             WHERE event IN ('sitting_out', 'timed_out', 'timed_out_disconnected')
             GROUP BY ALL) te ON te.hand_id = s.hand_id AND te.player = s.player
),
runs AS (
  SELECT *, lag(is_out) OVER (PARTITION BY account, tournament_id ORDER BY started_at, hand_id) AS prev_out
  FROM flag
),
-- each hand's run of hands sat out (gaps and islands): its length in hands
isl AS (
  SELECT *, sum(CASE WHEN is_out AND NOT coalesce(prev_out, FALSE) THEN 1 ELSE 0 END)
              OVER (PARTITION BY account, tournament_id ORDER BY started_at, hand_id) AS run_no
  FROM runs
),
run_len AS (
  SELECT account, tournament_id, run_no, arg_min(hand_id, started_at) AS hand_id,
         epoch(arg_min(clock, started_at)) AS run_t, count(*) AS n_out
  FROM isl WHERE is_out GROUP BY ALL
),
-- a start seen in the hands, on the event's consensus clock
hs AS (
  SELECT account, tournament_id, clock AS ts, 'hands' AS source, hand_id
  FROM runs WHERE is_out AND NOT coalesce(prev_out, FALSE)
),
-- a start seen in the hands is dropped when the platform logged that sit-out
-- (an event of the same player and event within merge_s: the event time is the precise one)
hs_only AS (
  SELECT hs.* FROM hs
  WHERE NOT EXISTS (
    SELECT 1 FROM ev WHERE ev.account = hs.account AND ev.tournament_id = hs.tournament_id
      AND abs(epoch(ev.ts) - epoch(hs.ts)) <= $merge)
),
allx AS (SELECT * FROM ev UNION ALL SELECT * FROM hs_only),
ordered AS (
  SELECT *, lag(ts) OVER (PARTITION BY account, tournament_id ORDER BY ts, source) AS prev_ts
  FROM allx
),
kept AS (
  SELECT account, tournament_id, ts, source, hand_id
  FROM ordered WHERE prev_ts IS NULL OR epoch(ts) - epoch(prev_ts) > $merge
),
hh AS (
  SELECT s.player AS account, h.tournament_id, h.started_at, h.hand_id
  FROM seats s JOIN hands h USING (hand_id) WHERE h.is_tournament AND h.tournament_id IS NOT NULL
)
-- the first hand the player sat out (events carry no hand: the next hand of that player),
-- and whether it is the first at its table after a pause: a scheduled break (away with
-- everyone, or back late from it), not a sit-out
-- a platform sit_out logged before the break began (more than the event tolerance before the last
-- hand dealt ahead of it) was not taken at the break, even if the player's next hand is the first after it
SELECT x.*, coalesce(c.after_pause AND NOT (x.source = 'event' AND epoch(x.ts) < c.break_from - $tol), FALSE) AS at_break,
       -- the run of hands sat out that this start began: the account's run in the event whose first
       -- hand is nearest on the consensus clock (within merge_s: a platform sit_out is logged on the
       -- platform's clock, its first hand sat out on the table's, which drifts; the next hand of the
       -- player may fall inside the run); 0 when the hands show none
       coalesce((SELECT arg_min(rl.n_out, abs(rl.run_t - epoch(x.ts))) FROM run_len rl
                 WHERE rl.account = x.account AND rl.tournament_id = x.tournament_id
                   AND abs(rl.run_t - epoch(x.ts)) <= $merge), 0) AS run_hands
FROM (
  SELECT k.account, k.tournament_id, k.ts, k.source, coalesce(k.hand_id, hh.hand_id) AS hand_id
  FROM kept k ASOF LEFT JOIN hh
    ON k.account = hh.account AND k.tournament_id = hh.tournament_id AND hh.started_at >= k.ts
) x LEFT JOIN _rb_clock c USING (hand_id)
"""

_SPAN_SQL = """
SELECT s.player AS account, h.tournament_id, min(h.started_at) AS t0, max(h.started_at) AS t1,
       count(*) AS n_hands
FROM seats s JOIN hands h USING (hand_id)
WHERE h.is_tournament AND h.tournament_id IS NOT NULL
GROUP BY ALL
"""


class CoordinatedSitoutDetector(GroupDetector):
    """Pairs/groups of players who sit out together far more than chance allows."""

    kind = "coordinated_sitout"
    inputs = {"hands": ("hand_id", "tournament_id", "started_at", "table_name"),
              "seats": ("hand_id", "player", "sitting_out", "dealt_in"), "table_events": ("hand_id", "player", "event"),
              "sit_events": ("account", "ts", "kind", "table_name", "tournament_id"),
              "tournament_finishes": ("tournament_id", "player", "place", "prize", "hand_id"),
              "registrations": ("account", "ts", "kind", "tournament_id")}
    max_unflagged = 200  # unflagged pairs kept, ranked
    unflagged_inside_groups = True

    def __init__(
        self,
        *,
        alpha: float = 0.05,
        random_state: int = 0,
        tol_event_s: float = 15.0,
        res_event_s: float = 1.0,
        tol_hand_s: float = 60.0,
        res_hand_s: float = 5.0,
        max_perm_pairs: int = 300,
        merge_s: float = 180.0,
        wave_share: float = 0.4,
        wave_min: int = 6,
        min_cooccur: int = 2,
        n_perm: int = 999,
        clock_hands: int = 50,
        pause_s: float = 180.0,
        length_mark: bool = True,
        single_p: float = 0.01,
        single_alpha: float = 0.02,
        single_coentry_p: float = 0.05,
        taste_pseudo: float | None = idf.KNOCKOUT_PSEUDO,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.tol_event_s = tol_event_s  # timing precision of a platform sit_out event
        self.res_event_s = res_event_s  # resolution of event times: closer gaps count as this
        self.tol_hand_s = tol_hand_s  # of a sit-out seen only in the hands (the next hand's start)
        self.res_hand_s = res_hand_s  # resolution of hand times (whole seconds, tables drift)
        self.max_perm_pairs = max_perm_pairs
        self.merge_s = merge_s
        self.wave_share = wave_share
        self.wave_min = wave_min
        self.min_cooccur = min_cooccur
        self.n_perm = n_perm
        self.clock_hands = clock_hands  # hands per block of the consensus clock
        self.pause_s = pause_s  # a table idle this long has been on a break
        self.length_mark = length_mark  # with events too: do coinciding sit-outs last as many hands?
        self.single_p = single_p  # a lone coincidence must itself be this unusual to be corroborated
        self.single_alpha = single_alpha  # family-wise level (Bonferroni) of the corroborated lone coincidences
        self.single_coentry_p = single_coentry_p  # the co-entry must agree on its own below this p
        self.taste_pseudo = taste_pseudo  # the co-entry null's format taste (identity.co_entries; None: plain)

    # ------------------------------------------------------------------ fit
    def fit(self, con: duckdb.DuckDBPyConnection) -> "CoordinatedSitoutDetector":
        """Learn the population's sit-outs: each player's sit-out starts (platform events, or the hands on
        the event's consensus clock), the waves and breaks left out, and every pair's coincidence tests
        (computed here, as PyOD's ``decision_scores_``: :meth:`score` returns them).

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``starts_``, ``waves_``, ``kept_``, ``spans_``, ``finishes_``, ``co_`` (the co-occurring
        starts), ``per_event_``, ``family_``, ``n_single_``, ``scores_`` and ``missing_``."""
        self.missing_ = []
        self.has_events_ = idf.table_rows(con, "sit_events") > 0
        if not self.has_events_:
            self.missing_.append("platform sit_out/sit_in events (sit-outs read from the hands only: timed to the hand "
                                 "on the event's consensus clock, with how many hands each lasted as a second mark)")
        if idf.table_rows(con, "tournament_finishes") == 0:
            self.missing_.append("bubble weighting (no tournament finishes)")
        con.register("_rb_clock", consensus_clock(con, block=self.clock_hands, pause_s=self.pause_s))
        try:
            starts = con.sql(_STARTS_SQL, params={"merge": self.merge_s, "tol": self.tol_event_s}).pl()
        finally:
            con.unregister("_rb_clock")
        spans = con.sql(_SPAN_SQL).pl()
        # field size over time: entrants minus finishers whose finishing hand came earlier
        fin = con.sql("""
          SELECT f.tournament_id, f.player AS account, f.place, f.prize, h.started_at AS out_at
          FROM tournament_finishes f LEFT JOIN hands h USING (hand_id)""").pl()
        self.starts_all_ = starts
        self.spans_ = spans
        self.finishes_ = fin
        # waves: starts shared by a large share of the players still in the event at the time
        # (a break late in an event takes most of the few players left, not a quarter of the entrants)
        starts = starts.join(spans.select("account", "tournament_id"), on=["account", "tournament_id"], how="inner")
        s = starts.with_columns(t=pl.col("ts").dt.epoch("ms") / 1000.0).sort("tournament_id", "t")
        s = s.with_columns(crowd=pl.Series(self._wave_counts(s), dtype=pl.Int64),
                           field=pl.Series(self._active_counts(s, spans), dtype=pl.Int64))
        self.starts_ = s
        is_wave = (pl.col("crowd") >= pl.max_horizontal(pl.lit(self.wave_min), pl.col("field") * self.wave_share)) | pl.col("at_break")
        self.waves_ = s.filter(is_wave)
        self.kept_ = s.filter(~is_wave)
        self.scores_ = self._with_q(self._pair_scores(con))
        return self

    def _active_counts(self, s: pl.DataFrame, spans: pl.DataFrame) -> np.ndarray:
        """Players of the event in play around each start (first hand before it, last hand after it)."""
        out = np.zeros(s.height, dtype=int)
        if s.height == 0:
            return out
        sp = spans.with_columns(t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        by_t = {k[0]: (np.sort(g["t0"].to_numpy()), np.sort(g["t1"].to_numpy()))
                for k, g in sp.partition_by(["tournament_id"], as_dict=True).items()}
        tid = s["tournament_id"].to_numpy()
        t = s["t"].to_numpy()
        bounds = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True])
        w = self.tol_hand_s
        for i0, i1 in zip(bounds[:-1], bounds[1:]):
            t0s, t1s = by_t.get(tid[i0], (np.array([]), np.array([])))
            tt = t[i0:i1]
            out[i0:i1] = np.searchsorted(t0s, tt + w, side="right") - np.searchsorted(t1s, tt - w, side="left")
        return out

    def _wave_counts(self, s: pl.DataFrame) -> np.ndarray:
        """Sit-out starts of the same event that fall together with each start: within the
        same window a coincidence of two starts has (the sum of their timing tolerances)."""
        out = np.zeros(s.height, dtype=int)
        if s.height == 0:
            return out
        tid = s["tournament_id"].to_numpy()
        t = s["t"].to_numpy()
        is_ev = (s["source"] == "event").to_numpy()
        tol = np.where(is_ev, self.tol_event_s, self.tol_hand_s)
        bounds = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True])
        for i0, i1 in zip(bounds[:-1], bounds[1:]):
            tt, ee, tl = t[i0:i1], is_ev[i0:i1], tol[i0:i1]
            n = np.zeros(i1 - i0, dtype=int)
            for sub, tol_j in ((np.sort(tt[ee]), self.tol_event_s), (np.sort(tt[~ee]), self.tol_hand_s)):
                w = tl + tol_j
                n += np.searchsorted(sub, tt + w, side="right") - np.searchsorted(sub, tt - w, side="left")
            out[i0:i1] = n  # starts (≈ players; one start per player per merge window), itself included
        return out

    # ------------------------------------------------------------------ score
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The candidate pairs' scores (computed by :meth:`fit`, as PyOD's ``decision_scores_``).

        Returns one row per pair of players with a co-occurring sit-out (``a``, ``b``, ``accounts``,
        ``tournaments``, ``score``, ``p_value``, ``q_value``: BH over every pair with a sit-out in a shared
        event, and the tests' figures)."""
        return self.scores_.clone()

    def _with_q(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``q_value``: Benjamini-Hochberg over the family of every pair of players with a
        sit-out in a shared event (``family_``; the untested pairs count with p = 1)."""
        if scores.height == 0:
            return scores.with_columns(q_value=pl.lit(None, pl.Float64))
        p = scores["p_value"].to_numpy()
        q = idf.benjamini_hochberg(np.r_[p, np.ones(max(self.family_ - len(p), 0))])[: len(p)]
        return scores.with_columns(q_value=pl.Series(q))

    def _pair_scores(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64,
                  "p_value": pl.Float64}
        k = self.kept_
        self.family_ = 0
        self.co_ = pl.DataFrame()
        self.n_single_ = 0
        if k.height == 0:
            return pl.DataFrame(schema=schema)
        x = k.select("account", "tournament_id", "t", "ts", "hand_id", "run_hands").with_columns(
            tol=pl.when(k["source"] == "event").then(pl.lit(self.tol_event_s)).otherwise(pl.lit(self.tol_hand_s)),
            res=pl.when(k["source"] == "event").then(pl.lit(self.res_event_s)).otherwise(pl.lit(self.res_hand_s)),
        )
        # the family tested: every pair of players with a sit-out in a shared event
        k_t = x.group_by("tournament_id").agg(k=pl.col("account").n_unique())["k"].to_numpy()
        self.family_ = int((k_t * (k_t - 1) // 2).sum())
        # co-occurring starts of two players in one event (a band join in DuckDB)
        con.register("_rb_starts", x)
        co = con.sql("""
          SELECT a.account AS a, b.account AS b, a.tournament_id, a.ts AS ts_a, b.ts AS ts_b,
                 a.t AS t_a, b.t AS t_b, coalesce(a.hand_id, b.hand_id) AS hand_id,
                 -- the coincidence's closeness: gap over its window, the gap floored at the sources' resolution
                 least(greatest(abs(b.t - a.t), greatest(a.res, b.res)) / (a.tol + b.tol), 1.0) AS u,
                 a.run_hands AS len_a, b.run_hands AS len_b
          FROM _rb_starts a JOIN _rb_starts b
            ON a.tournament_id = b.tournament_id AND a.account < b.account
           AND abs(b.t - a.t) <= a.tol + b.tol
        """).pl()
        if co.height == 0:
            con.unregister("_rb_starts")
            return pl.DataFrame(schema=schema)
        cand = co.group_by("a", "b").agg(n_co=pl.len(), n_events=pl.col("tournament_id").n_unique()).sort("a", "b")
        # per candidate pair and shared event: the closest pair of starts (floored at the
        # timing resolution of the sources), each player's number of starts, the span both were in
        sp = self.spans_.with_columns(t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        con.register("_rb_cand", cand.select("a", "b"))
        con.register("_rb_spans", sp.select("account", "tournament_id", "t0", "t1"))
        per_event = con.sql("""
          WITH n AS (SELECT account, tournament_id, count(*) AS n, sum(tol) AS sum_tol FROM _rb_starts GROUP BY ALL)
          SELECT c.a, c.b, x.tournament_id,
                 min(greatest(abs(x.t - y.t), greatest(x.res, y.res))) AS gap,
                 any_value(na.n) AS n_a, any_value(nb.n) AS n_b,
                 any_value(na.sum_tol) AS sum_tol_a, any_value(nb.sum_tol) AS sum_tol_b,
                 greatest(least(any_value(sa.t1), any_value(sb.t1)) - greatest(any_value(sa.t0), any_value(sb.t0)),
                          60.0) AS overlap
          FROM _rb_cand c
          JOIN _rb_starts x ON x.account = c.a
          JOIN _rb_starts y ON y.account = c.b AND y.tournament_id = x.tournament_id
          JOIN n na ON na.account = c.a AND na.tournament_id = x.tournament_id
          JOIN n nb ON nb.account = c.b AND nb.tournament_id = x.tournament_id
          LEFT JOIN _rb_spans sa ON sa.account = c.a AND sa.tournament_id = x.tournament_id
          LEFT JOIN _rb_spans sb ON sb.account = c.b AND sb.tournament_id = x.tournament_id
          GROUP BY ALL
        """).pl()
        for v in ("_rb_starts", "_rb_cand", "_rb_spans"):
            con.unregister(v)
        # P(closest of n_a*n_b independent uniform pairs within gap) under each player's own rate (reported);
        # lam: the expected number of coincidences (start pairs within their window) in the event
        per_event = per_event.with_columns(
            p_event=(1 - (-(pl.col("n_a") * pl.col("n_b") * 2 * pl.col("gap") / pl.col("overlap"))).exp()).clip(1e-300, 1.0),
            lam=2 * (pl.col("n_b") * pl.col("sum_tol_a") + pl.col("n_a") * pl.col("sum_tol_b")) / pl.col("overlap"),
        )
        # per event: every coincidence counts, by its closeness (marked Poisson test)
        # and a second mark: do the two runs last as many hands? (a group comes back
        # together; two players stepping away independently rarely sit out the same
        # number of hands). Without platform events (starts timed only to the hand) both
        # marks always count. With events the start times are precise to the second, and
        # a sit-out the hands do not show has no length (mark 1, no evidence, which a
        # two-mark null would count against the pair): the two-mark null is used in the
        # events where every start of both players has a known length (a property of the
        # starts, not of their timing: no choice after the fact, no Bonferroni), closeness
        # alone elsewhere (``length_mark``; off: closeness alone everywhere).
        two = (not self.has_events_) or self.length_mark
        co = co.with_columns(u_len=pl.Series(_length_mark(
            co["len_a"].to_numpy(), co["len_b"].to_numpy(), k["run_hands"].to_numpy()))
            if two else pl.lit(1.0))
        marks = co.group_by("a", "b", "tournament_id").agg(
            x=pl.len(), s1=(-pl.col("u").log()).sum(), s=(-pl.col("u").log() - pl.col("u_len").log()).sum())
        per_event = per_event.join(marks, on=["a", "b", "tournament_id"], how="left").with_columns(
            pl.col("x").fill_null(0), pl.col("s").fill_null(0.0), pl.col("s1").fill_null(0.0))
        x_, lam_ = per_event["x"].to_numpy(), per_event["lam"].to_numpy()
        p1 = _marked_poisson_sf(x_, per_event["s1"].to_numpy(), lam_, marks=1)
        p2 = _marked_poisson_sf(x_, per_event["s"].to_numpy(), lam_, marks=2) if two else p1
        # every start of both players in the event has a known length (the hands show its run)
        known = x.group_by("account", "tournament_id").agg(known=(pl.col("run_hands") > 0).all())
        per_event = (per_event
                     .join(known.rename({"account": "a", "known": "known_a"}), on=["a", "tournament_id"], how="left")
                     .join(known.rename({"account": "b", "known": "known_b"}), on=["b", "tournament_id"], how="left"))
        both_known = (per_event["known_a"].fill_null(False) & per_event["known_b"].fill_null(False)).to_numpy()
        if not self.has_events_:
            p_use = p2
        elif two:
            p_use = np.where(both_known, p2, p1)
        else:
            p_use = p1
        per_event = per_event.with_columns(p_marked=pl.Series(p_use), p_marked_len=pl.Series(p2),
                                           p_marked_time=pl.Series(p1), lengths_known=pl.Series(both_known))
        fish = per_event.group_by("a", "b").agg(
            stat=-2 * pl.col("p_marked").log().sum(), dof=2 * pl.len(),
            stat_len=-2 * pl.col("p_marked_len").log().sum(),
            stat_time=-2 * pl.col("p_marked_time").log().sum(),
            n_len_events=pl.col("lengths_known").sum(),
            stat_closest=-2 * pl.col("p_event").log().sum(),
            shared_events=pl.col("tournament_id").sort(),
            n_starts_a=pl.col("n_a").sum(), n_starts_b=pl.col("n_b").sum(),
            min_gap=pl.col("gap").min(),
            lam=pl.col("lam").sum(),
        )
        # the test (per event: two marks where every length is known, closeness alone elsewhere);
        # closeness alone and with length over every event are reported beside it
        p_gap = sps.chi2.sf(fish["stat"].to_numpy(), fish["dof"].to_numpy())
        p_one = sps.chi2.sf(fish["stat_time"].to_numpy(), fish["dof"].to_numpy())
        p_len = sps.chi2.sf(fish["stat_len"].to_numpy(), fish["dof"].to_numpy())
        fish = fish.with_columns(
            p_gap=pl.Series(p_gap), p_time_only=pl.Series(p_one), p_with_length=pl.Series(p_len),
            p_closest=pl.Series(sps.chi2.sf(fish["stat_closest"].to_numpy(), fish["dof"].to_numpy())),
        )
        pairs = cand.join(fish, on=["a", "b"], how="left")
        co = co.join(cand.select("a", "b"), on=["a", "b"], how="inner")
        co = self._bubble(co)
        # a seeded permutation test (co-occurrence counts) for the most suspicious pairs
        pairs = pairs.sort("p_gap", "a", "b")
        perm = self._permutation(x, pairs.head(self.max_perm_pairs).select("a", "b", "shared_events"))
        pairs = pairs.join(perm, on=["a", "b"], how="left")
        bub = co.group_by("a", "b").agg(
            bubble=pl.col("proximity").mean(),
            co_tournaments=pl.col("tournament_id").unique().sort(),
        )
        pairs = pairs.join(bub, on=["a", "b"], how="left").with_columns(
            p_value=pl.max_horizontal(pl.col("p_gap"), pl.lit(1e-300)),
        ).with_columns(
            score=(-pl.col("p_value").log10() * (1 + pl.col("bubble").fill_null(0.0))),
        )
        self.family_ = max(self.family_, pairs.height)
        pairs = self._corroborate(con, pairs)
        self.co_ = co
        self.per_event_ = per_event
        return pairs.with_columns(accounts=pl.concat_list("a", "b"), tournaments=pl.col("co_tournaments"))

    def _corroborate(self, con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame) -> pl.DataFrame:
        """Pairs seen sitting out together once: the co-entry p (configuration-model null,
        :func:`detectors.features.identity.co_entries`) of those whose coincidence is
        itself unusual (p <= ``single_p``), and its Fisher combination with the coincidence
        p (``p_single``); ``n_single`` is the family (every pair with one coincidence)."""
        one = pairs["n_co"].to_numpy() == 1
        self.n_single_ = int(one.sum())
        test = pairs.filter((pl.col("n_co") == 1) & (pl.col("p_gap") <= self.single_p)).select("a", "b")
        if test.height == 0:
            return pairs.with_columns(n_shared_t=pl.lit(None, pl.Int64), p_coentry=pl.lit(None, pl.Float64),
                                      p_single=pl.lit(None, pl.Float64))
        use = idf.co_entries(con, test, taste_pseudo=self.taste_pseudo).select("a", "b", "n_shared_t", "p_coentry")
        pairs = pairs.join(use, on=["a", "b"], how="left")
        both = np.column_stack([pairs["p_gap"].to_numpy().astype(float),
                                pairs["p_coentry"].fill_null(np.nan).to_numpy().astype(float)])
        p_single = idf.fisher_combine(both)
        # a pair without a co-entry p (not tested) has no corroboration
        p_single = np.where(np.isnan(both[:, 1]), np.nan, p_single)
        return pairs.with_columns(p_single=pl.Series(p_single))

    def _permutation(self, x: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
        """Seeded permutation test: each player's sit-out starts re-drawn uniformly
        within the span they were in the event; statistic = co-occurrences."""
        rng = np.random.default_rng(self.random_state)
        need = set(pairs["a"].to_list()) | set(pairs["b"].to_list())
        xs = x.filter(pl.col("account").is_in(list(need))).sort("account", "tournament_id", "t")
        parts = xs.partition_by(["account", "tournament_id"], as_dict=True)
        starts = {key: g["t"].to_numpy() for key, g in parts.items()}
        tols = {key: g["tol"].to_numpy() for key, g in parts.items()}
        sp = self.spans_.filter(pl.col("account").is_in(list(need))).with_columns(
            t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        span = {(r[0], r[1]): (r[2], r[3]) for r in sp.select("account", "tournament_id", "t0", "t1").iter_rows()}
        rows = []
        for r in pairs.iter_rows(named=True):
            a, b = r["a"], r["b"]
            null = np.zeros(self.n_perm)
            obs = 0
            for tid in r["shared_events"] or []:
                ta, tb = starts[(a, tid)], starts[(b, tid)]
                win = tols[(a, tid)][:, None] + tols[(b, tid)][None, :]
                obs += int((np.abs(ta[:, None] - tb[None, :]) <= win).sum())
                a0, a1 = span.get((a, tid), (ta.min(), ta.max()))
                b0, b1 = span.get((b, tid), (tb.min(), tb.max()))
                ra = rng.uniform(a0, max(a1, a0 + 1), size=(self.n_perm, ta.size))
                rb = rng.uniform(b0, max(b1, b0 + 1), size=(self.n_perm, tb.size))
                null += (np.abs(ra[:, :, None] - rb[:, None, :]) <= win[None]).sum(axis=(1, 2))
            rows.append({"a": a, "b": b, "n_co_obs": obs, "expected": float(null.mean()),
                         "p_perm": (1 + int((null >= obs).sum())) / (self.n_perm + 1)})
        return pl.DataFrame(rows, schema={"a": pl.Utf8, "b": pl.Utf8, "n_co_obs": pl.Int64, "expected": pl.Float64,
                                          "p_perm": pl.Float64})

    def _bubble(self, co: pl.DataFrame) -> pl.DataFrame:
        """Proximity to the money at each co-occurrence: paid places over players remaining."""
        fin = self.finishes_
        if fin.height == 0:
            return co.with_columns(remaining=pl.lit(None, pl.Int64), paid=pl.lit(None, pl.Int64), proximity=pl.lit(0.0))
        paid = fin.group_by("tournament_id").agg(paid=pl.col("prize").is_not_null().sum().cast(pl.Int64),
                                                 entrants=pl.len())
        fx = fin.filter(pl.col("out_at").is_not_null()).select("tournament_id", "out_at").sort("tournament_id", "out_at")
        co = co.with_columns(t_co=pl.min_horizontal("ts_a", "ts_b")).join(paid, on="tournament_id", how="left")
        # finished before t: count via a join-asof-like aggregation in polars
        gone = (co.select("a", "b", "tournament_id", "t_co").unique()
                .join(fx, on="tournament_id", how="left")
                .group_by("a", "b", "tournament_id", "t_co")
                .agg(gone=(pl.col("out_at") < pl.col("t_co")).sum()))
        co = co.join(gone, on=["a", "b", "tournament_id", "t_co"], how="left").with_columns(
            remaining=(pl.col("entrants").cast(pl.Int64) - pl.col("gone").fill_null(0).cast(pl.Int64)),
        ).with_columns(
            proximity=pl.when(pl.col("remaining") > pl.col("paid"))
            .then((pl.col("paid") / pl.col("remaining")).clip(0, 1))
            .otherwise(0.0).fill_null(0.0),
        )
        return co

    # ------------------------------------------------------------------ threshold
    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``pair_flagged``: q <= alpha with at least ``min_cooccur`` coincidences, or one
        coincidence with p_gap <= ``single_p`` corroborated by co-entry (p <= ``single_coentry_p``) whose
        combined p, Bonferroni over every single-coincidence pair, is at most ``single_alpha``."""
        flag = (scores["q_value"].to_numpy() <= self.alpha) & (scores["n_co"].to_numpy() >= self.min_cooccur)
        if "p_single" in scores.columns:
            ps = scores["p_single"].fill_null(np.nan).to_numpy().astype(float)
            pc = scores["p_coentry"].fill_null(np.nan).to_numpy().astype(float)
            lone = ((scores["n_co"].to_numpy() == 1) & (scores["p_gap"].to_numpy() <= self.single_p)
                    & (np.nan_to_num(pc, nan=1.0) <= self.single_coentry_p)
                    & (np.nan_to_num(ps, nan=1.0) * max(self.n_single_, 1) <= self.single_alpha))
            flag |= lone
        return scores.with_columns(pair_flagged=pl.Series(flag))

    def _single_text(self, r: dict[str, Any]) -> str:
        """A lone coincidence's corroboration (co-entry), in words."""
        if r.get("n_co") != 1 or is_missing(r.get("p_single")):
            return ""
        n_fam = max(self.n_single_, 1)
        return (f"; sat out together once only: corroborated by co-entry ({r['n_shared_t']} events entered together, "
                f"co-entry p {r['p_coentry']:.3g} under the configuration model, needed <= {self.single_coentry_p:g}), combined p {r['p_single']:.3g}, "
                f"x {n_fam} single-coincidence pairs (Bonferroni) = {min(1.0, r['p_single'] * n_fam):.3g}, "
                f"needed <= {self.single_alpha:g}")

    # ------------------------------------------------------------------ explain
    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one group row of :meth:`threshold`: each pair's coincidences against its own
        sit-out rates (count, closeness, lengths, permutation test), the co-occurring sit-outs by event, the
        waves left out.

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold` (its ``pairs`` hold the group's pairs).

        Returns
        -------
        :class:`~detectors.base.Signal` (``extra["cooccurrences"]``)."""
        accs = list(row["accounts"])
        pairs = self.pairs_of(row)
        co = self.co_.filter(pl.col("a").is_in(accs) & pl.col("b").is_in(accs)).sort("ts_a")
        ev: list[Evidence] = []
        for r in pairs.sort("score", descending=True).iter_rows(named=True):
            a, b = r["a"], r["b"]
            perm = ("" if r.get("p_perm") is None else
                    f"; {r['expected']:.2f} co-occurrences expected when each player's sit-outs are shuffled "
                    f"within the event ({self.n_perm} permutations, seed {self.random_state}), permutation p "
                    f"{r['p_perm']:.3g}")
            ev.append(Evidence(
                name=f"sit-outs started together: {a} & {b}", value=float(r["n_co"]),
                baseline=None if r.get("expected") is None else round(float(r["expected"]), 3),
                n=int(min(r["n_starts_a"], r["n_starts_b"])),
                p_value=float(r["p_value"]),
                text=(f"{a} ({r['n_starts_a']} sit-outs) and {b} ({r['n_starts_b']}) in {len(r['shared_events'])} "
                      f"shared events started sitting out together {r['n_co']} times in {len(r['co_tournaments'])} "
                      f"tournaments, closest {r['min_gap']:.1f} s apart; {r['lam']:.3g} coincidences expected from "
                      f"each player's own sit-out rate, coincidence test (count and closeness, events combined) p "
                      f"{r['p_gap']:.3g} (q {r['q_value']:.3g} over {self.family_} pairs), closest-pair test p "
                      f"{r['p_closest']:.3g}{perm}; "
                      + (f"closeness alone p {r['p_time_only']:.3g}, with whether the runs last as many hands "
                         f"p {r['p_with_length']:.3g} (the hands show every run of both players in "
                         f"{r['n_len_events']} of the {len(r['shared_events'])} events: there the test counts both, "
                         f"elsewhere closeness alone); " if self.has_events_ and self.length_mark else "")
                      + f"mean bubble proximity {(r['bubble'] or 0):.2f}" + self._single_text(r)),
                sql=(f"SELECT x.tournament_id, x.ts AS {_ident('ts_' + a)}, y.ts AS {_ident('ts_' + b)} FROM sit_events x "
                     f"JOIN sit_events y ON x.tournament_id = y.tournament_id AND y.kind = 'sit_out' "
                     f"AND abs(epoch(y.ts) - epoch(x.ts)) <= {2 * self.tol_event_s:.0f} "
                     f"WHERE x.kind = 'sit_out' AND x.account = {_lit(a)} AND y.account = {_lit(b)} ORDER BY x.ts"),
            ))
        per_event = (
            pl.concat([co.select(pl.col("tournament_id"), pl.col("a").alias("acc"), pl.col("ts_a").alias("ts")),
                       co.select(pl.col("tournament_id"), pl.col("b").alias("acc"), pl.col("ts_b").alias("ts"))])
            .unique().sort("tournament_id", "ts")
            .group_by("tournament_id", maintain_order=True)
            .agg(txt=pl.format("{} {}", pl.col("acc"), pl.col("ts").dt.strftime("%H:%M:%S")))
        )
        times = [f"{r['tournament_id']}: " + ", ".join(r["txt"]) for r in per_event.iter_rows(named=True)]
        ev.append(Evidence(
            name="co-occurring sit-outs (tournament, times)", value=float(per_event.height), n=co.height,
            text="; ".join(times),
            sql=("SELECT account, tournament_id, kind, ts FROM sit_events WHERE account IN ("
                 + ", ".join(_lit(a) for a in accs) + ") ORDER BY tournament_id, ts"),
        ))
        n_waves = self.waves_.filter(pl.col("account").is_in(accs)).height
        tourns = sorted(set(co["tournament_id"].to_list()))
        benign = (f"Scheduled breaks and disconnect waves take many players out at once: {n_waves} sit-outs of these "
                  f"accounts fell in such waves (≥{self.wave_share:.0%} of the players still in and "
                  f"≥{self.wave_min} players) and "
                  "were left out. ")
        benign += ("The remaining co-occurrences are far beyond what each player's own sit-out rate explains."
                   if row["flagged"] else "What remains is within chance: not flagged.")
        hands = [h for h in co.sort("proximity", descending=True)["hand_id"].to_list() if h][:20]
        return Signal(
            kind=self.kind, accounts=accs, tournaments=tourns, score=float(row["score"]), flagged=bool(row["flagged"]),
            summary=f"{', '.join(accs)} sat out together {co.height} times in {len(tourns)} tournaments",
            hands=hands, evidence=ev, benign=benign, p_value=float(row["p_value"]), detector=type(self).__name__,
            extra={"cooccurrences": [
                {"tournament": r["tournament_id"], "a": r["a"], "b": r["b"], "ts_a": str(r["ts_a"]), "ts_b": str(r["ts_b"]),
                 "hands_out_a": r["len_a"], "hands_out_b": r["len_b"],
                 "remaining": r["remaining"], "paid": r["paid"]} for r in co.head(100).iter_rows(named=True)]},
        )


def _length_mark(len_a: np.ndarray, len_b: np.ndarray, population: np.ndarray) -> np.ndarray:
    """How unusual it is that two coinciding sit-outs last as long as each other: under
    independence the partner's run length (hands sat out) is a draw from the
    population's run lengths, so ``P(|L - L_a| <= |L_b - L_a|)`` is a p-value (discrete,
    hence conservative); the larger of the two directions is kept (still valid). A
    length unknown (0: the hands show no sitting out) gives 1, no evidence."""
    pop = np.asarray(population, dtype=float)
    pop = np.sort(pop[pop > 0])
    la, lb = np.asarray(len_a, dtype=float), np.asarray(len_b, dtype=float)
    out = np.ones(la.shape)
    if pop.size == 0:
        return out
    d = np.abs(la - lb)

    def within(center: np.ndarray) -> np.ndarray:
        return (np.searchsorted(pop, center + d, side="right") - np.searchsorted(pop, center - d, side="left")) / pop.size

    ok = (la > 0) & (lb > 0)
    out[ok] = np.maximum(within(la), within(lb))[ok]
    return np.clip(out, 1.0 / (pop.size + 1), 1.0)


def _marked_poisson_sf(x: np.ndarray, s: np.ndarray, lam: np.ndarray, k_max: int = 200, marks: int = 1) -> np.ndarray:
    """P(S >= s) for S = sum of -log(U_i) over a Poisson(lam) number of
    coincidences with independent uniform closeness U_i (gap over window): the
    null of two players sitting out independently at their own rates, where
    coincidences fall as a Poisson process and, given one, its gap is uniform
    within the window. Given K = k, S ~ Gamma(k, 1), so
    P(S >= s) = sum_k Pois(k; lam) Gamma_sf(s; k) (s > 0), and 1 - exp(-lam) when
    all coincidences sit at the window's edge (s = 0, x >= 1); 1 with none.
    Counts and closeness both count: three sit-outs 1 s apart in a window of 30 s
    are far rarer than one. With ``marks`` independent uniform marks per
    coincidence (closeness, and run length where starts are known only to the
    hand) S given K = k is Gamma(marks * k, 1)."""
    x = np.asarray(x, dtype=float)
    s = np.asarray(s, dtype=float)
    lam = np.maximum(np.asarray(lam, dtype=float), 1e-12)
    ks = np.arange(1, k_max + 1, dtype=float)
    logpois = ks[None, :] * np.log(lam)[:, None] - lam[:, None] - _sp.gammaln(ks + 1)[None, :]
    gsf = _sp.gammaincc(marks * ks[None, :], np.maximum(s, 0.0)[:, None])
    with np.errstate(divide="ignore"):
        p = np.exp(logpois + np.log(np.maximum(gsf, 1e-300))).sum(axis=1)
    p = np.where(x < 1, 1.0, np.clip(p, 1e-300, 1.0))
    return p


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'
