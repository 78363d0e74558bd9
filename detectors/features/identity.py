"""Identity features: who shares what, who plays like whom, who is online when.

Everything here reads the warehouse (``pipelines/lib/schema.sql``) through one
DuckDB connection and returns Polars frames; all heavy work is SQL. The
detectors ``multi_accounting``, ``seat_handoff`` and ``coordinated_sitout``
build on these frames.

Methods
-------
* **Identifier links.** Each account's identifiers (device fingerprints, exact
  IPs, IP networks (/24 for IPv4, /64 for IPv6), payment-instrument hashes) are
  weighted by rarity with an inverse-document-frequency weight
  ``log(N / n_accounts_sharing)`` (Sparck Jones, "A statistical interpretation
  of term specificity and its application in retrieval", J. Documentation
  28(1), 1972): an IP behind hundreds of accounts (a carrier NAT, a café) is
  weak evidence, a device shared by two is strong. Identifiers shared by more
  than ``max_share`` accounts are dropped, which keeps the candidate graph
  sparse. A link is further weighted by time: shared identifiers whose logins by
  the two accounts fall within ``close_hours`` of each other count in full,
  others at half weight (after the entity-resolution practice of record-linkage
  weights, Fellegi & Sunter, JASA 64(328), 1969).
* **Style fingerprints.** Per account the classic tracker statistics (VPIP, PFR,
  aggression frequency), the distribution of bet sizes as fractions of the pot
  and the distribution of decision times (log milliseconds); the likeness of two
  accounts is a standardised distance whose significance is its rank among
  distances of random account pairs of the same population (an empirical
  null; cf. stylometric authorship attribution, Stamatatos, "A survey of modern
  authorship attribution methods", JASIST 60(3), 2009, and player
  fingerprinting from action logs, e.g. Chen et al., "Game bot identification
  based on manifold learning", NetGames 2008).
* **Patterns of use.** For candidate pairs only: seconds both were online at
  once, hand-overs (one logs in shortly after the other logs out), tournaments
  entered together, with a hypergeometric p-value for that overlap.
"""

from __future__ import annotations

import math
import warnings

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors import stats as _stats

# ------------------------------------------------------------------ helpers

ID_KINDS = ("device", "payment", "ip", "net")

# SQL expression for the network of an IP: a.b.c.0/24 (IPv4) or the first four
# hextets /64 (IPv6); NULL for anything else.
_NET_SQL = """
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


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q-values (``detectors.stats.bh_qvalues``); a test not
    made (NaN) gets q = 1 (Benjamini & Hochberg, JRSS B 57(1), 1995)."""
    q = _stats.bh_qvalues(np.asarray(p, dtype=float))
    return np.where(np.isnan(q), 1.0, q)


def fisher_combine(pvals: np.ndarray) -> np.ndarray:
    """Fisher's method row-wise over a 2-D array of p-values (NaN = test not
    made; a row with no test gets 1). Fisher, *Statistical Methods for Research
    Workers*, 1925, §21.1; via ``detectors.stats.fisher_combine``."""
    P = np.asarray(pvals, dtype=float)
    if P.size == 0:
        return np.ones(P.shape[0])
    out = _stats.fisher_combine(*P.T)
    return np.where(np.isnan(out), 1.0, out)


def population_size(con: duckdb.DuckDBPyConnection) -> int:
    """Accounts known anywhere in the warehouse (accounts, sessions, seats)."""
    q = """
    SELECT count(*) FROM (
      SELECT account FROM accounts
      UNION SELECT account FROM sessions
      UNION SELECT player FROM seats
    )"""
    return int(con.execute(q).fetchall()[0][0])


# ------------------------------------------------------------------ identifiers

IDENTIFIERS_SQL = f"""
WITH raw AS (
  SELECT account, 'device' AS kind, device AS value, login_at, logout_at
    FROM sessions WHERE device IS NOT NULL AND device <> ''
  UNION ALL
  SELECT account, 'ip', ip, login_at, logout_at
    FROM sessions WHERE ip IS NOT NULL AND ip <> ''
  UNION ALL
  SELECT account, 'net', {_NET_SQL}, login_at, logout_at
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
    ``w_net``, ``weight`` (device + payment + max(ip, net)), ``n_shared`` and
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


# ------------------------------------------------------------------ style fingerprints

# bet sizes as a fraction of the pot before the action; bins on that fraction
SIZE_BINS = (0.0, 0.4, 0.6, 0.85, 1.2, 1e9)
# decision times, seconds
TIME_BINS = (0.0, 1.5, 3.0, 6.0, 12.0, 1e9)

STYLE_SQL = """
WITH dealt AS (
  SELECT player AS account, count(*) AS n_hands
  FROM seats WHERE dealt_in GROUP BY 1
),
pf AS (
  SELECT player AS account, hand_id,
         max(CASE WHEN action IN ('call','bet','raise') THEN 1 ELSE 0 END) AS vpip,
         max(CASE WHEN action IN ('bet','raise') THEN 1 ELSE 0 END) AS pfr
  FROM actions WHERE street = 'preflop' GROUP BY ALL
),
pfs AS (SELECT account, sum(vpip) AS n_vpip, sum(pfr) AS n_pfr FROM pf GROUP BY 1),
act AS (
  SELECT player AS account,
         count(*) FILTER (WHERE action IN ('bet','raise')) AS n_aggr,
         count(*) FILTER (WHERE action = 'call') AS n_call,
         count(*) FILTER (WHERE action = 'fold') AS n_fold,
         count(*) FILTER (WHERE action = 'check') AS n_check,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0) AS n_sized,
         avg(ln(amount / pot_before)) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount > 0) AS log_size,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before < ?) AS s1,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ? AND amount / pot_before < ?) AS s2,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ? AND amount / pot_before < ?) AS s3,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ? AND amount / pot_before < ?) AS s4,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ?) AS s5
  FROM actions WHERE action NOT LIKE 'post%' GROUP BY 1
),
tm AS (
  SELECT account, count(*) AS n_decisions,
         avg(ln(greatest(ms, 1))) AS log_ms_mean,
         stddev_samp(ln(greatest(ms, 1))) AS log_ms_sd,
         quantile_cont(ln(greatest(ms, 1)), 0.1) AS log_ms_q10,
         quantile_cont(ln(greatest(ms, 1)), 0.5) AS log_ms_q50,
         quantile_cont(ln(greatest(ms, 1)), 0.9) AS log_ms_q90
  FROM decisions GROUP BY 1
)
SELECT d.account, d.n_hands,
       coalesce(pfs.n_vpip, 0) / d.n_hands AS vpip,
       coalesce(pfs.n_pfr, 0) / d.n_hands AS pfr,
       act.n_aggr / nullif(act.n_aggr + act.n_call, 0) AS aggr_freq,
       act.n_fold / nullif(act.n_fold + act.n_call + act.n_check + act.n_aggr, 0) AS fold_freq,
       act.n_sized, act.log_size,
       act.s1 / nullif(act.n_sized, 0) AS size_1, act.s2 / nullif(act.n_sized, 0) AS size_2,
       act.s3 / nullif(act.n_sized, 0) AS size_3, act.s4 / nullif(act.n_sized, 0) AS size_4,
       act.s5 / nullif(act.n_sized, 0) AS size_5,
       coalesce(tm.n_decisions, 0) AS n_decisions,
       tm.log_ms_mean, tm.log_ms_sd, tm.log_ms_q10, tm.log_ms_q50, tm.log_ms_q90
FROM dealt d
LEFT JOIN pfs USING (account)
LEFT JOIN act USING (account)
LEFT JOIN tm USING (account)
"""

STYLE_COLS = ("vpip", "pfr", "aggr_freq", "fold_freq", "log_size", "size_1", "size_2", "size_3", "size_4", "size_5")
TIMING_COLS = ("log_ms_mean", "log_ms_sd", "log_ms_q10", "log_ms_q50", "log_ms_q90")


def style_fingerprints(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per account: VPIP, PFR, aggression, fold frequency, bet sizes
    (mean log fraction of pot and a 5-bin histogram), decision-time summary."""
    b = SIZE_BINS
    params = [b[1], b[1], b[2], b[2], b[3], b[3], b[4], b[4]]
    return con.sql(STYLE_SQL, params=params).pl()


def _standardise(fp: pl.DataFrame, cols: tuple[str, ...]) -> np.ndarray:
    x = fp.select([pl.col(c).cast(pl.Float64) for c in cols]).to_numpy()
    with warnings.catch_warnings():  # a column with no data (no decisions) stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        mu = np.nanmean(x, axis=0) if x.size else np.zeros(len(cols))
        sd = np.nanstd(x, axis=0) if x.size else np.ones(len(cols))
    sd = np.where((sd > 0) & np.isfinite(sd), sd, 1.0)
    return (x - mu) / sd


def _pair_dist(z: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    d = z[ia] - z[ib]
    ok = ~np.isnan(d)
    k = ok.sum(axis=1)
    ss = np.where(ok, d * d, 0.0).sum(axis=1)
    out = np.full(len(ia), np.nan)
    out[k > 0] = np.sqrt(ss[k > 0] / k[k > 0])
    return out


def likeness(
    fp: pl.DataFrame,
    pairs: pl.DataFrame,
    *,
    min_hands: int = 30,
    min_decisions: int = 30,
    null_pairs: int = 200_000,
    random_state: int = 0,
) -> pl.DataFrame:
    """Style and timing likeness of account pairs against an empirical null.

    For each pair (columns ``a``, ``b``) adds ``style_dist`` and ``timing_dist``
    (root-mean-square of standardised differences) and ``p_style`` /
    ``p_timing``: the share of random pairs of the population (accounts with
    enough hands) at least as close, i.e. the probability that two unrelated
    accounts are this alike. NaN where either account has too little data.
    """
    rng = np.random.default_rng(random_state)
    fp = fp.filter(pl.col("n_hands") >= 1)
    idx = {a: i for i, a in enumerate(fp["account"].to_list())}
    zs = _standardise(fp, STYLE_COLS)
    zt = _standardise(fp, TIMING_COLS)
    enough_s = (fp["n_hands"].to_numpy() >= min_hands)
    enough_t = (fp["n_decisions"].to_numpy() >= min_decisions)

    def null(z: np.ndarray, enough: np.ndarray) -> np.ndarray:
        pool = np.flatnonzero(enough)
        if pool.size < 3:
            return np.array([])
        m = min(null_pairs, pool.size * (pool.size - 1) // 2)
        ia = rng.choice(pool, m)
        ib = rng.choice(pool, m)
        keep = ia != ib
        d = _pair_dist(z, ia[keep], ib[keep])
        return np.sort(d[~np.isnan(d)])

    null_s = null(zs, enough_s)
    null_t = null(zt, enough_t)
    a = pairs["a"].to_list()
    b = pairs["b"].to_list()
    ia = np.array([idx.get(x, -1) for x in a], dtype=int)
    ib = np.array([idx.get(x, -1) for x in b], dtype=int)
    known = (ia >= 0) & (ib >= 0)
    sd = np.full(len(a), np.nan)
    td = np.full(len(a), np.nan)
    if known.any():
        sd[known] = _pair_dist(zs, ia[known], ib[known])
        td[known] = _pair_dist(zt, ia[known], ib[known])
        ok_s = known.copy()
        ok_s[known] = enough_s[ia[known]] & enough_s[ib[known]]
        ok_t = known.copy()
        ok_t[known] = enough_t[ia[known]] & enough_t[ib[known]]
        sd[~ok_s] = np.nan
        td[~ok_t] = np.nan

    def pv(d: np.ndarray, nd: np.ndarray) -> np.ndarray:
        out = np.full(d.shape, np.nan)
        if nd.size == 0:
            return out
        ok = ~np.isnan(d)
        out[ok] = (np.searchsorted(nd, d[ok], side="right") + 1) / (nd.size + 1)
        return out

    return pairs.with_columns(
        style_dist=pl.Series(sd),
        timing_dist=pl.Series(td),
        p_style=pl.Series(pv(sd, null_s)),
        p_timing=pl.Series(pv(td, null_t)),
    )


# ------------------------------------------------------------------ patterns of use


def tournament_entries(con: duckdb.DuckDBPyConnection) -> str:
    """SQL (a sub-query) for (account, tournament_id) entries: registrations not
    withdrawn, and every account seated in a tournament hand."""
    return """
    (SELECT account, tournament_id FROM (
        SELECT account, tournament_id,
               arg_max(kind, ts) AS last_kind
        FROM registrations GROUP BY ALL
     ) WHERE last_kind = 'register'
     UNION
     SELECT s.player AS account, h.tournament_id
     FROM seats s JOIN hands h USING (hand_id)
     WHERE h.is_tournament AND h.tournament_id IS NOT NULL)
    """


def usage_patterns(
    con: duckdb.DuckDBPyConnection,
    pairs: pl.DataFrame,
    *,
    handover_minutes: float = 30.0,
    bucket_minutes: int = 5,
) -> pl.DataFrame:
    """For each pair: online overlap, hand-overs, shared tournaments.

    Adds ``overlap_s`` (seconds both had a session open; from hands' 5-minute
    buckets where there are no sessions), ``concurrency`` (overlap over the
    shorter account's online time), ``handovers`` (sessions of one starting
    within ``handover_minutes`` after the other's ended, on any identifier),
    ``shared_tournaments`` (list), ``n_tourn_a``, ``n_tourn_b``, ``n_shared_t``
    and ``p_coentry`` (hypergeometric upper tail of the shared count given how
    many tournaments each entered out of all tournaments).
    """
    if pairs.height == 0:
        return pairs.with_columns(
            overlap_s=pl.lit(None, pl.Float64), concurrency=pl.lit(None, pl.Float64),
            handovers=pl.lit(0, pl.Int64), shared_tournaments=pl.lit([], pl.List(pl.Utf8)),
            n_tourn_a=pl.lit(0, pl.Int64), n_tourn_b=pl.lit(0, pl.Int64),
            n_shared_t=pl.lit(0, pl.Int64), p_coentry=pl.lit(None, pl.Float64),
        )
    con.register("_rb_pairs", pairs.select("a", "b"))
    has_sessions = table_rows(con, "sessions") > 0
    ho = to_us = int(handover_minutes * 60e6)
    if has_sessions:
        q_use = """
        WITH s AS (SELECT account, login_at AS t0,
                          coalesce(logout_at, login_at + INTERVAL 1 HOUR) AS t1 FROM sessions),
        j AS (
          SELECT p.a, p.b, x.t0 AS a0, x.t1 AS a1, y.t0 AS b0, y.t1 AS b1
          FROM _rb_pairs p JOIN s x ON x.account = p.a JOIN s y ON y.account = p.b
          WHERE x.t0 <= y.t1 + to_microseconds(?) AND y.t0 <= x.t1 + to_microseconds(?)
        ),
        tot AS (
          SELECT account, sum(epoch(t1) - epoch(t0)) AS online_s FROM s GROUP BY 1
        )
        SELECT p.a, p.b,
          coalesce(sum(greatest(0, epoch(least(a1, b1)) - epoch(greatest(a0, b0)))), 0) AS overlap_s,
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
          count(y.bucket) * 60.0 * ? AS overlap_s,
          0 AS handovers,
          least(any_value(ta.nb), any_value(tb.nb)) * 60.0 * ? AS min_online_s
        FROM _rb_pairs p
        LEFT JOIN act x ON x.account = p.a
        LEFT JOIN act y ON y.account = p.b AND y.bucket = x.bucket
        LEFT JOIN tot ta ON ta.account = p.a LEFT JOIN tot tb ON tb.account = p.b
        GROUP BY p.a, p.b
        """
        use = con.sql(q_use, params=[bucket_minutes, bucket_minutes, bucket_minutes]).pl()
    q_t = f"""
    WITH e AS {tournament_entries(con)},
    cnt AS (SELECT account, count(*) AS nt FROM e GROUP BY 1)
    SELECT p.a, p.b,
      list(DISTINCT x.tournament_id ORDER BY x.tournament_id) FILTER (WHERE y.account IS NOT NULL) AS shared_tournaments,
      coalesce(any_value(ca.nt), 0) AS n_tourn_a, coalesce(any_value(cb.nt), 0) AS n_tourn_b,
      count(y.account) AS n_shared_t
    FROM _rb_pairs p
    LEFT JOIN e x ON x.account = p.a
    LEFT JOIN e y ON y.account = p.b AND y.tournament_id = x.tournament_id
    LEFT JOIN cnt ca ON ca.account = p.a LEFT JOIN cnt cb ON cb.account = p.b
    GROUP BY p.a, p.b
    """
    tt = con.sql(q_t).pl()
    n_t = int(con.execute(f"SELECT count(DISTINCT tournament_id) FROM {tournament_entries(con)}").fetchall()[0][0])
    con.unregister("_rb_pairs")
    out = pairs.join(use, on=["a", "b"], how="left").join(tt, on=["a", "b"], how="left")
    k = out["n_shared_t"].fill_null(0).to_numpy()
    na = out["n_tourn_a"].fill_null(0).to_numpy()
    nb = out["n_tourn_b"].fill_null(0).to_numpy()
    p = np.where(
        (n_t > 0) & (na > 0) & (nb > 0),
        sps.hypergeom.sf(k - 1, max(n_t, 1), np.minimum(na, n_t), np.minimum(nb, n_t)),
        np.nan,
    )
    conc = out["overlap_s"].fill_null(0).to_numpy() / np.maximum(out["min_online_s"].fill_null(0).to_numpy(), 1.0)
    return out.with_columns(
        shared_tournaments=pl.col("shared_tournaments").fill_null(pl.lit([], pl.List(pl.Utf8))),
        p_coentry=pl.Series(p),
        concurrency=pl.Series(np.clip(conc, 0, 1)),
    )


def log10p(p: float | None) -> float:
    """-log10 of a p-value, 0 for missing."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return 0.0
    return -math.log10(max(p, 1e-300))
