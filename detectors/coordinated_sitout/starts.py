"""Sit-out starts: the hands' and the platform's, timed on each event's consensus clock (the deal order of
hand numbers), merged per account, with the span each player was in the event and each platform sit-out's
length in seconds to its sit_in."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl


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
-- each platform sit_out's end: the account's next platform event in the tournament, when it is a sit_in
ends AS (
  SELECT account, tournament_id, ts,
         CASE WHEN lead(kind) OVER w = 'sit_in' THEN epoch(lead(ts) OVER w) - epoch(ts) END AS dur_s
  FROM sit_events WHERE tournament_id IS NOT NULL AND kind IN ('sit_out', 'sit_in')
  WINDOW w AS (PARTITION BY account, tournament_id ORDER BY ts, kind)
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
                   AND abs(rl.run_t - epoch(x.ts)) <= $merge), 0) AS run_hands,
       -- a platform sit_out's length in seconds, to the platform's sit_in (NULL: seen in the hands, or no sit_in)
       CASE WHEN x.source = 'event' THEN (SELECT any_value(e.dur_s) FROM ends e
                 WHERE e.account = x.account AND e.tournament_id = x.tournament_id AND e.ts = x.ts) END AS dur_s
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
