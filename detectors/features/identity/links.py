"""Identifier links: who shares a device, an IP, a network or a payment instrument, weighted by rarity
(inverse document frequency), and the helpers the identity features share."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl


ID_KINDS = ("device", "payment", "ip", "net")

# SQL expression for the network of an IP: a.b.c.0/24 (IPv4) or the first four
# hextets /64 (IPv6); NULL for anything else.
NET_SQL = """
CASE
  WHEN regexp_matches(ip, '^\\d+\\.\\d+\\.\\d+\\.\\d+$')
    THEN regexp_extract(ip, '^(\\d+\\.\\d+\\.\\d+)\\.', 1) || '.0/24'
  WHEN strpos(ip, ':') > 0
    THEN array_to_string(list_slice(string_split(ip, ':'), 1, 4), ':') || '::/64'
  ELSE NULL
END
"""


def table_rows(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Row count of a warehouse table, 0 when it does not exist."""
    try:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])  # noqa: S608 (fixed names)
    except duckdb.Error:
        return 0


def population_size(con: duckdb.DuckDBPyConnection) -> int:
    """Accounts known anywhere in the warehouse (accounts, sessions, seats)."""
    q = """
    SELECT count(*) FROM (
      SELECT account FROM accounts
      UNION SELECT account FROM sessions
      UNION SELECT player FROM seats
    )"""
    return int(con.execute(q).fetchall()[0][0])



IDENTIFIERS_SQL = f"""
WITH raw AS (
  SELECT account, 'device' AS kind, device AS value, login_at, logout_at
    FROM sessions WHERE device IS NOT NULL AND device <> ''
  UNION ALL
  SELECT account, 'ip', ip, login_at, logout_at
    FROM sessions WHERE ip IS NOT NULL AND ip <> ''
  UNION ALL
  SELECT account, 'net', {NET_SQL}, login_at, logout_at
    FROM sessions WHERE ip IS NOT NULL AND ip <> ''
  UNION ALL
  SELECT account, 'payment', payment, NULL, NULL
    FROM accounts WHERE payment IS NOT NULL AND payment <> ''
)
SELECT account, kind, value, count(login_at) AS n_logins,
       min(login_at) AS first_seen, max(coalesce(logout_at, login_at)) AS last_seen
FROM raw WHERE value IS NOT NULL
GROUP BY ALL
"""


def identifiers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per (account, identifier kind, value) with login counts and span."""
    return con.sql(IDENTIFIERS_SQL).pl()


def identity_links(
    con: duckdb.DuckDBPyConnection,
    *,
    max_share: int = 50,
    close_hours: float = 12.0,
) -> pl.DataFrame:
    """Pairs of accounts sharing at least one identifier, with IDF weights.

    Columns: ``a``, ``b`` (a < b), ``w_device``, ``w_payment``, ``w_ip``,
    ``w_net`` (time-weighted), ``idf_device`` / ``idf_payment`` (the rarest shared
    device / card, unweighted), ``min_share`` (accounts behind the rarest shared
    identifier), ``weight`` (device + payment + max(ip, net)), ``n_shared`` and
    ``shared``: a list of structs (kind, value, n_accounts, weight, close).
    """
    n = max(population_size(con), 2)
    con.execute("CREATE OR REPLACE TEMP TABLE _rb_ids AS " + IDENTIFIERS_SQL)
    q = """
    WITH df AS (
      SELECT kind, value, count(DISTINCT account) AS n_accounts
      FROM _rb_ids GROUP BY ALL
    ),
    ids AS (
      SELECT i.*, df.n_accounts, ln(CAST(? AS DOUBLE) / df.n_accounts) AS idf
      FROM _rb_ids i JOIN df USING (kind, value)
      WHERE df.n_accounts BETWEEN 2 AND ?
    ),
    pairs AS (
      SELECT x.account AS a, y.account AS b, x.kind, x.value, x.n_accounts, x.idf,
             -- logins by both within close_hours of each other (or no times: payment)
             CASE WHEN x.first_seen IS NULL THEN TRUE
                  ELSE x.first_seen <= y.last_seen + to_microseconds(CAST(? * 3600e6 AS BIGINT))
                   AND y.first_seen <= x.last_seen + to_microseconds(CAST(? * 3600e6 AS BIGINT))
             END AS close
      FROM ids x JOIN ids y ON x.kind = y.kind AND x.value = y.value AND x.account < y.account
    )
    SELECT a, b,
      sum(CASE WHEN kind = 'device'  THEN idf * CASE WHEN close THEN 1 ELSE 0.5 END ELSE 0 END) AS w_device,
      sum(CASE WHEN kind = 'payment' THEN idf ELSE 0 END) AS w_payment,
      sum(CASE WHEN kind = 'ip'      THEN idf * CASE WHEN close THEN 1 ELSE 0.5 END ELSE 0 END) AS w_ip,
      max(CASE WHEN kind = 'net'     THEN idf * CASE WHEN close THEN 1 ELSE 0.5 END ELSE 0 END) AS w_net,
      max(CASE WHEN kind = 'device' THEN idf ELSE 0 END) AS idf_device,
      max(CASE WHEN kind = 'payment' THEN idf ELSE 0 END) AS idf_payment,
      min(n_accounts) AS min_share,
      count(*) AS n_shared,
      list({'kind': kind, 'value': value, 'n_accounts': n_accounts,
            'weight': round(idf, 3), 'close': close} ORDER BY idf DESC) AS shared
    FROM pairs GROUP BY a, b
    """
    out = con.sql(q, params=[float(n), int(max_share), close_hours, close_hours]).pl()
    con.execute("DROP TABLE IF EXISTS _rb_ids")
    if out.height == 0:
        return out
    return (
        out.with_columns(
            weight=pl.col("w_device") + pl.col("w_payment") + pl.max_horizontal("w_ip", "w_net")
        )
        .filter(pl.col("weight") > 0)
        .sort("weight", descending=True)
    )
