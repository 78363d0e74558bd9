"""Patterns of use of a pair: seconds online at once, hand-overs, and the tournaments they entered together."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from detectors.features.identity.coentry import co_entries
from detectors.features.identity.links import table_rows

def usage_patterns(
    con: duckdb.DuckDBPyConnection,
    pairs: pl.DataFrame,
    *,
    handover_minutes: float = 30.0,
    bucket_minutes: int = 5,
) -> pl.DataFrame:
    """For each pair: online overlap, hand-overs, shared tournaments.

    Adds ``overlap_s`` (seconds both had a session open; from hands' 5-minute
    buckets where there are no sessions), ``device_overlap_s`` (seconds both
    had a session open on one and the same device: one machine used by two
    accounts at once, which housemates taking turns at a family computer never
    are), ``concurrency`` (overlap over the
    shorter account's online time), ``handovers`` (sessions of one starting
    within ``handover_minutes`` after the other's ended, on any identifier),
    and the co-entry columns of :func:`co_entries` (``shared_tournaments``,
    ``n_shared_t``, ``exp_shared_t``, ``p_coentry`` ...).
    """
    if pairs.height == 0:
        return pairs.with_columns(
            overlap_s=pl.lit(None, pl.Float64), concurrency=pl.lit(None, pl.Float64),
            device_overlap_s=pl.lit(None, pl.Float64),
            handovers=pl.lit(0, pl.Int64), shared_tournaments=pl.lit([], pl.List(pl.Utf8)),
            n_tourn_a=pl.lit(0, pl.Int64), n_tourn_b=pl.lit(0, pl.Int64),
            n_shared_t=pl.lit(0, pl.Int64), p_coentry=pl.lit(None, pl.Float64),
        )
    con.register("_rb_pairs", pairs.select("a", "b"))
    has_sessions = table_rows(con, "sessions") > 0
    ho = to_us = int(handover_minutes * 60e6)
    if has_sessions:
        q_use = """
        WITH s AS (SELECT account, login_at AS t0, device,
                          coalesce(logout_at, login_at + INTERVAL 1 HOUR) AS t1 FROM sessions),
        j AS (
          SELECT p.a, p.b, x.t0 AS a0, x.t1 AS a1, y.t0 AS b0, y.t1 AS b1,
                 x.device IS NOT NULL AND x.device <> '' AND x.device = y.device AS same_device
          FROM _rb_pairs p JOIN s x ON x.account = p.a JOIN s y ON y.account = p.b
          WHERE x.t0 <= y.t1 + to_microseconds(?) AND y.t0 <= x.t1 + to_microseconds(?)
        ),
        tot AS (
          SELECT account, sum(epoch(t1) - epoch(t0)) AS online_s FROM s GROUP BY 1
        )
        SELECT p.a, p.b,
          coalesce(sum(greatest(0, epoch(least(a1, b1)) - epoch(greatest(a0, b0)))), 0) AS overlap_s,
          -- online at once on one device: one machine, two accounts, at the same time
          coalesce(sum(greatest(0, epoch(least(a1, b1)) - epoch(greatest(a0, b0))))
                   FILTER (WHERE same_device), 0) AS device_overlap_s,
          coalesce(count(*) FILTER (WHERE (b0 >= a1 AND b0 <= a1 + to_microseconds(?))
                                      OR (a0 >= b1 AND a0 <= b1 + to_microseconds(?))), 0) AS handovers,
          least(any_value(ta.online_s), any_value(tb.online_s)) AS min_online_s
        FROM _rb_pairs p LEFT JOIN j ON j.a = p.a AND j.b = p.b
        LEFT JOIN tot ta ON ta.account = p.a LEFT JOIN tot tb ON tb.account = p.b
        GROUP BY p.a, p.b
        """
        use = con.sql(q_use, params=[ho, ho, to_us, to_us]).pl()
    else:
        q_use = """
        WITH act AS (
          SELECT DISTINCT s.player AS account,
                 time_bucket(to_minutes(CAST(? AS BIGINT)), h.started_at) AS bucket
          FROM seats s JOIN hands h USING (hand_id)
          WHERE s.player IN (SELECT a FROM _rb_pairs UNION SELECT b FROM _rb_pairs)
        ),
        tot AS (SELECT account, count(*) AS nb FROM act GROUP BY 1)
        SELECT p.a, p.b,
          CAST(count(y.bucket) AS DOUBLE) * 60.0 * ? AS overlap_s,
          0 AS handovers, 0.0 AS device_overlap_s,
          CAST(least(any_value(ta.nb), any_value(tb.nb)) AS DOUBLE) * 60.0 * ? AS min_online_s
        FROM _rb_pairs p
        LEFT JOIN act x ON x.account = p.a
        LEFT JOIN act y ON y.account = p.b AND y.bucket = x.bucket
        LEFT JOIN tot ta ON ta.account = p.a LEFT JOIN tot tb ON tb.account = p.b
        GROUP BY p.a, p.b
        """
        use = con.sql(q_use, params=[bucket_minutes, bucket_minutes, bucket_minutes]).pl()
    con.unregister("_rb_pairs")
    out = pairs.join(use, on=["a", "b"], how="left").join(co_entries(con, pairs.select("a", "b")), on=["a", "b"], how="left")
    conc = out["overlap_s"].fill_null(0).to_numpy() / np.maximum(out["min_online_s"].fill_null(0).to_numpy(), 1.0)
    return out.with_columns(concurrency=pl.Series(np.clip(conc, 0, 1)))
