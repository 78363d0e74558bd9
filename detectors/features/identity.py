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
  entered together, with a p-value for that overlap under a configuration
  model (entries fall into events in proportion to field size; Newman,
  "Networks", 2nd ed., 2018, ch. 12, applied to the account-event bipartite
  graph).
"""

from __future__ import annotations


import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from detectors import stats as _stats

# ------------------------------------------------------------------ helpers

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


# The identity detectors' spelling of the one implementation in detectors.stats, with their NaN rule (a test not
# made reads as p = 1): kept so that their modules run unchanged while they move to stats.bh_qvalues /
# stats.fisher_combine with ``untested=1.0``; nothing else should call these.
def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """:func:`detectors.stats.bh_qvalues` with ``untested=1.0``."""
    return _stats.bh_qvalues(p, untested=1.0)


def fisher_combine(pvals: np.ndarray) -> np.ndarray:
    """:func:`detectors.stats.fisher_combine` of a 2-D array (a row per candidate) with ``untested=1.0``."""
    return _stats.fisher_combine(np.atleast_2d(np.asarray(pvals, dtype=float)), untested=1.0)


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
a AS (
  SELECT x.hand_id, x.seq, x.player, x.street, x.action, x.amount, x.pot_before, x.to_call, x.is_all_in,
         -- facing a raise preflop (a 3-bet spot): more than a big blind to call
         CASE WHEN x.street = 'preflop' AND x.to_call > coalesce(h.big_blind, 0) THEN 1 ELSE 0 END AS raises_before
  FROM actions x JOIN hands h USING (hand_id) WHERE x.action NOT LIKE 'post%'
),
pf AS (
  SELECT player AS account, hand_id,
         max(CASE WHEN action IN ('call','bet','raise') THEN 1 ELSE 0 END) AS vpip,
         max(CASE WHEN action IN ('bet','raise') THEN 1 ELSE 0 END) AS pfr
  FROM a WHERE street = 'preflop' GROUP BY ALL
),
pfs AS (SELECT account, sum(vpip) AS n_vpip, sum(pfr) AS n_pfr FROM pf GROUP BY 1),
act AS (
  SELECT player AS account,
         count(*) FILTER (WHERE action IN ('bet','raise')) AS n_aggr,
         count(*) FILTER (WHERE action = 'call') AS n_call,
         count(*) FILTER (WHERE action = 'fold') AS n_fold,
         count(*) FILTER (WHERE action = 'check') AS n_check,
         count(*) FILTER (WHERE street = 'preflop' AND raises_before > 0) AS n_3b_spot,
         count(*) FILTER (WHERE street = 'preflop' AND raises_before > 0 AND action = 'raise') AS n_3b,
         count(*) FILTER (WHERE street = 'preflop' AND raises_before > 0 AND action = 'fold') AS n_f3b,
         count(*) FILTER (WHERE street <> 'preflop' AND to_call > 0) AS n_facing,
         count(*) FILTER (WHERE street <> 'preflop' AND to_call > 0 AND action = 'fold') AS n_facing_fold,
         count(*) FILTER (WHERE street <> 'preflop' AND to_call > 0 AND action = 'raise') AS n_facing_raise,
         count(*) FILTER (WHERE street <> 'preflop' AND to_call = 0) AS n_open,
         count(*) FILTER (WHERE street <> 'preflop' AND to_call = 0 AND action = 'bet') AS n_open_bet,
         count(*) FILTER (WHERE street = 'river' AND to_call > 0 AND action = 'call') AS n_river_call,
         count(*) FILTER (WHERE street = 'river' AND to_call > 0) AS n_river_facing,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0) AS n_sized,
         avg(ln(amount / pot_before)) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount > 0) AS log_size,
         stddev_samp(ln(amount / pot_before)) FILTER (WHERE action = 'bet' AND pot_before > 0 AND amount > 0) AS log_size_sd,
         stddev_samp(ln(amount / pot_before)) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount > 0) AS log_size_all_sd,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before < ?) AS s1,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ? AND amount / pot_before < ?) AS s2,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ? AND amount / pot_before < ?) AS s3,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ? AND amount / pot_before < ?) AS s4,
         count(*) FILTER (WHERE action IN ('bet','raise') AND pot_before > 0 AND amount / pot_before >= ?) AS s5
  FROM a GROUP BY 1
),
tm AS (
  SELECT d.account, count(*) AS n_decisions,
         avg(ln(greatest(d.ms, 1))) AS log_ms_mean,
         stddev_samp(ln(greatest(d.ms, 1))) AS log_ms_sd,
         median(ln(greatest(d.ms, 1))) AS log_ms_q50,
         -- the person's own shape: fast easy folds, slow big decisions
         avg(ln(greatest(d.ms, 1))) FILTER (WHERE cat = 'fold') AS log_ms_fold,
         stddev_samp(ln(greatest(d.ms, 1))) FILTER (WHERE cat = 'fold') AS log_ms_fold_sd,
         count(*) FILTER (WHERE cat = 'fold') AS n_ms_fold,
         avg(ln(greatest(d.ms, 1))) FILTER (WHERE cat = 'play') AS log_ms_play,
         stddev_samp(ln(greatest(d.ms, 1))) FILTER (WHERE cat = 'play') AS log_ms_play_sd,
         count(*) FILTER (WHERE cat = 'play') AS n_ms_play,
         avg(ln(greatest(d.ms, 1))) FILTER (WHERE cat = 'big') AS log_ms_big,
         stddev_samp(ln(greatest(d.ms, 1))) FILTER (WHERE cat = 'big') AS log_ms_big_sd,
         count(*) FILTER (WHERE cat = 'big') AS n_ms_big
  FROM (
    SELECT d.account, d.ms,
           CASE WHEN x.is_all_in OR x.amount >= greatest(x.pot_before, 1)
                     OR x.to_call >= greatest(x.pot_before, 1) / 2 THEN 'big'
                WHEN x.street = 'preflop' AND x.action = 'fold' THEN 'fold'
                ELSE 'play' END AS cat
    FROM decisions d LEFT JOIN actions x ON x.hand_id = d.hand_id AND x.seq = d.seq
  ) d
  GROUP BY 1
)
SELECT d.account, d.n_hands, act.*  EXCLUDE (account, log_size, log_size_sd, s1, s2, s3, s4, s5, n_sized),
       coalesce(pfs.n_vpip, 0) AS n_vpip, coalesce(pfs.n_pfr, 0) AS n_pfr,
       act.log_size_all_sd,
       coalesce(pfs.n_vpip, 0) / d.n_hands AS vpip,
       coalesce(pfs.n_pfr, 0) / d.n_hands AS pfr,
       act.n_aggr / nullif(act.n_aggr + act.n_call, 0) AS aggr_freq,
       act.n_fold / nullif(act.n_fold + act.n_call + act.n_check + act.n_aggr, 0) AS fold_freq,
       act.n_3b / nullif(act.n_3b_spot, 0) AS three_bet,
       act.n_f3b / nullif(act.n_3b_spot, 0) AS fold_to_raise,
       act.n_facing_fold / nullif(act.n_facing, 0) AS fold_to_bet,
       act.n_facing_raise / nullif(act.n_facing, 0) AS raise_to_bet,
       act.n_open_bet / nullif(act.n_open, 0) AS bet_when_checked,
       act.n_river_call / nullif(act.n_river_facing, 0) AS river_call,
       act.n_sized, act.log_size, act.log_size_sd,
       act.s1 / nullif(act.n_sized, 0) AS size_1, act.s2 / nullif(act.n_sized, 0) AS size_2,
       act.s3 / nullif(act.n_sized, 0) AS size_3, act.s4 / nullif(act.n_sized, 0) AS size_4,
       act.s5 / nullif(act.n_sized, 0) AS size_5,
       coalesce(tm.n_decisions, 0) AS n_decisions,
       tm.log_ms_mean, tm.log_ms_sd, tm.log_ms_q50,
       tm.log_ms_fold, tm.log_ms_play, tm.log_ms_big, tm.log_ms_fold_sd, tm.log_ms_play_sd, tm.log_ms_big_sd,
       tm.n_ms_fold, tm.n_ms_play, tm.n_ms_big,
       tm.log_ms_big - tm.log_ms_play AS log_ms_big_ratio,
       tm.log_ms_fold - tm.log_ms_play AS log_ms_fold_ratio
FROM dealt d
LEFT JOIN pfs USING (account)
LEFT JOIN act USING (account)
LEFT JOIN tm USING (account)
"""



def style_fingerprints(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per account: VPIP, PFR, aggression, fold frequency, 3-bet and
    fold-to-raise preflop, fold/raise facing a bet and betting when checked to
    postflop, river calls, bet sizes (mean and spread of the log fraction of
    pot and a 5-bin histogram) and the decision-time distribution (quantiles,
    and how much slower big decisions and faster easy folds are)."""
    b = SIZE_BINS
    params = [b[1], b[1], b[2], b[2], b[3], b[3], b[4], b[4]]
    return con.sql(STYLE_SQL, params=params).pl()


# rate features: (name, successes, trials)
RATE_FEATURES = (
    ("vpip", "n_vpip", "n_hands"),
    ("pfr", "n_pfr", "n_hands"),
    ("aggr_freq", "n_aggr", "n_aggr_call"),
    ("three_bet", "n_3b", "n_3b_spot"),
    ("fold_to_raise", "n_f3b", "n_3b_spot"),
    ("fold_to_bet", "n_facing_fold", "n_facing"),
    ("raise_to_bet", "n_facing_raise", "n_facing"),
    ("bet_when_checked", "n_open_bet", "n_open"),
    ("river_call", "n_river_call", "n_river_facing"),
)
# continuous style features: (name, mean, sd, n)
SIZE_FEATURES = (("log_size", "log_size", "log_size_all_sd", "n_sized"),)
# decision-time features: (name, mean, sd, n)
TIME_FEATURES = (
    ("time_all", "log_ms_mean", "log_ms_sd", "n_decisions"),
    ("time_fold", "log_ms_fold", "log_ms_fold_sd", "n_ms_fold"),
    ("time_play", "log_ms_play", "log_ms_play_sd", "n_ms_play"),
    ("time_big", "log_ms_big", "log_ms_big_sd", "n_ms_big"),
)


def _columns(fp: pl.DataFrame) -> dict[str, np.ndarray]:
    cols = {c: fp[c].cast(pl.Float64).fill_null(np.nan).to_numpy()
            for c in fp.columns if c != "account" and fp[c].dtype.is_numeric()}
    cols["n_aggr_call"] = np.nan_to_num(cols["n_aggr"]) + np.nan_to_num(cols["n_call"])
    return cols


def _z2(C: dict[str, np.ndarray], ia: np.ndarray, ib: np.ndarray, rates, conts, min_n: int = 8) -> np.ndarray:
    """Mean squared z of per-feature differences between two accounts, each z
    scaled by its own sampling error: about 1 when both accounts are one player
    (same underlying rates), large for two different players."""
    zs = []
    for _, k, n in rates:
        K, N = C[k], C[n]
        ka, na, kb, nb = K[ia], N[ia], K[ib], N[ib]
        with np.errstate(divide="ignore", invalid="ignore"):
            pa, pb = ka / na, kb / nb
            pp = np.clip((ka + kb) / (na + nb), 0.02, 0.98)
            se = np.sqrt(pp * (1 - pp) * (1 / na + 1 / nb))
            z = (pa - pb) / se
        zs.append(np.where((na >= min_n) & (nb >= min_n), z, np.nan))
    for _, m, sd, n in conts:
        M, S, N = C[m], C[sd], C[n]
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.sqrt(np.maximum(S[ia], 0.05) ** 2 / N[ia] + np.maximum(S[ib], 0.05) ** 2 / N[ib])
            z = (M[ia] - M[ib]) / se
        zs.append(np.where((N[ia] >= min_n) & (N[ib] >= min_n), z, np.nan))
    Z = np.column_stack(zs) if zs else np.full((len(ia), 1), np.nan)
    ok = ~np.isnan(Z)
    k = ok.sum(axis=1)
    out = np.full(len(ia), np.nan)
    ss = np.where(ok, Z * Z, 0.0).sum(axis=1)
    out[k > 0] = ss[k > 0] / k[k > 0]
    return out


def likeness(
    fp: pl.DataFrame,
    pairs: pl.DataFrame,
    *,
    min_hands: int = 30,
    min_decisions: int = 30,
    null_pairs: int = 100_000,
    random_state: int = 0,
) -> pl.DataFrame:
    """Style and timing likeness of account pairs against an empirical null.

    For each pair (columns ``a``, ``b``) adds ``style_dist`` and
    ``timing_dist``: the mean squared z of the feature differences, each z
    scaled by its sampling error (a homogeneity statistic: about 1 for one
    player behind both accounts, large for two players); and ``p_style`` /
    ``p_timing``: the share of random pairs of the population (accounts with
    enough data; ``null_pairs`` drawn with ``random_state``) at least as alike,
    i.e. how often two unrelated accounts look this much like one player. NaN
    where either account has too little data.
    """
    rng = np.random.default_rng(random_state)
    # a fixed row order: the fingerprints come from a GROUP BY (no order), and the null
    # pairs are drawn by position, so without it the same seed drew other pairs run to run
    fp = fp.filter(pl.col("n_hands") >= 1).sort("account")
    C = _columns(fp)
    idx = {a: i for i, a in enumerate(fp["account"].to_list())}
    enough_s = C["n_hands"] >= min_hands
    enough_t = C["n_decisions"] >= min_decisions
    style_f = (RATE_FEATURES, SIZE_FEATURES)
    time_f = ((), TIME_FEATURES)

    def null(enough: np.ndarray, feats) -> np.ndarray:
        pool = np.flatnonzero(enough)
        if pool.size < 3:
            return np.array([])
        m = min(null_pairs, pool.size * (pool.size - 1) // 2)
        ia = rng.choice(pool, m)
        ib = rng.choice(pool, m)
        keep = ia != ib
        d = _z2(C, ia[keep], ib[keep], *feats)
        return np.sort(d[~np.isnan(d)])

    null_s = null(enough_s, style_f)
    null_t = null(enough_t, time_f)
    ia = np.array([idx.get(x, -1) for x in pairs["a"].to_list()], dtype=int)
    ib = np.array([idx.get(x, -1) for x in pairs["b"].to_list()], dtype=int)
    known = (ia >= 0) & (ib >= 0)
    sd = np.full(len(ia), np.nan)
    td = np.full(len(ia), np.nan)
    if known.any():
        ka, kb = ia[known], ib[known]
        s_ = _z2(C, ka, kb, *style_f)
        t_ = _z2(C, ka, kb, *time_f)
        s_[~(enough_s[ka] & enough_s[kb])] = np.nan
        t_[~(enough_t[ka] & enough_t[kb])] = np.nan
        sd[known] = s_
        td[known] = t_

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


def entry_pools(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """(tournament_id, pool): the connected components of the bipartite graph of
    accounts and the tournaments they entered (:func:`tournament_entries`).

    Two tournaments are in one pool when a chain of shared entrants links them.
    A ring-fenced market (a country's players who only meet each other, or the
    renamed copies of :mod:`benchmarks.detect_bench`'s replica) is a pool of its
    own: its players could never have entered the other pools' events, so the
    co-entry null must not spread their entries over them. Without pools the
    configuration model of :func:`co_entries` counted the other pools'
    events as chances missed, and on the 17-copy million-hand replica two
    accounts of one copy that shared 5 of their events got co-entry p 7e-6
    instead of the single copy's 0.77. A generated population is one pool.
    Components by :func:`scipy.sparse.csgraph.connected_components`.
    """
    e = con.sql(f"SELECT DISTINCT account, tournament_id FROM {tournament_entries(con)}").pl()
    if e.height == 0:
        return pl.DataFrame(schema={"tournament_id": pl.Utf8, "pool": pl.Int64})
    acc = e["account"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    tid = e["tournament_id"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    na = int(acc.max()) + 1
    n = na + int(tid.max()) + 1
    graph = coo_matrix((np.ones(len(acc)), (acc, na + tid)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    return (e.select("tournament_id").with_columns(pool=pl.Series(label[na + tid], dtype=pl.Int64))
            .unique("tournament_id"))


# pseudo-entries at the null's knockout share that shrink an account's format taste (co_entries). Tuned on
# seeds 270-277 (docs/measurements.md, twenty-first session): two different bounty gangs' accounts, each gang
# entering knockouts only, had co-entry p <= 0.05 in a third of their pairs under the plain model and in none
# with 6 (at 240k hands, mixed-270: 40/40 -> 0/40; 20 pseudo-entries left all 40, 10 left 12); sit-out
# groups' own pairs 34/42 -> 27/42 at that level (fewer pseudo-entries cost them more).
KNOCKOUT_PSEUDO = 6.0


# The co-entry null of :func:`co_entries`: entries ``e``, each tournament's (format, day, pool) cell ``f`` with its
# field size and knockout flag, the cells' moments ``mom``, each account's format taste ``tst`` and the pairs'
# tastes ``tp`` (``$pseudo``: the taste's pseudo-entries; ``{entries}``: :func:`tournament_entries`)
COENTRY_CELLS_SQL = """
    WITH e AS {entries},
    sz AS (SELECT tournament_id, count(*) AS sz FROM e GROUP BY 1),
    tday AS (SELECT tournament_id, min(started_at)::DATE AS day FROM hands
             WHERE tournament_id IS NOT NULL GROUP BY 1),
    kot AS (SELECT tournament_id, bool_or(bounty_kind <> 'none' OR coalesce(bounty, 0) > 0) AS ko
            FROM tournaments GROUP BY 1),
    fmt AS (SELECT sz.tournament_id, sz.sz, CAST(coalesce(kot.ko, false) AS INTEGER) AS ko,
                   (CASE WHEN sz.sz <= 10 THEN 'sng' ELSE 'mtt' END) || coalesce(CAST(tday.day AS VARCHAR), '')
                   || '/' || coalesce(CAST(po.pool AS VARCHAR), '') AS f
            FROM sz LEFT JOIN tday USING (tournament_id) LEFT JOIN _rb_pools po USING (tournament_id)
            LEFT JOIN kot USING (tournament_id)),
    mom AS (SELECT f, sum(sz) FILTER (WHERE ko = 0)::DOUBLE AS s1_fr, sum(sz) FILTER (WHERE ko = 1)::DOUBLE AS s1_ko,
                   sum(sz * sz) FILTER (WHERE ko = 0)::DOUBLE AS s2_fr, sum(sz * sz) FILTER (WHERE ko = 1)::DOUBLE AS s2_ko
            FROM fmt GROUP BY 1),
    -- an account's taste: its knockout share in cells offering both kinds against the null's share rho,
    -- shrunk by $pseudo entries at rho, as an odds ratio (1 without knockouts, or with pseudo < 0)
    tst AS (SELECT account,
                   CASE WHEN $pseudo < 0 OR count(*) = 0 THEN 1.0 ELSE
                   ((sum(ko) + $pseudo * avg(rho)) / (count(*) - sum(ko) + $pseudo * (1 - avg(rho))))
                   / (avg(rho) / (1 - avg(rho))) END AS taste
            FROM (SELECT e.account, fmt.ko, m.s1_ko / (m.s1_ko + m.s1_fr) AS rho
                  FROM e JOIN fmt USING (tournament_id) JOIN mom m USING (f)
                  WHERE m.s1_ko > 0 AND m.s1_fr > 0)
            GROUP BY 1),
    tp AS (SELECT p.a, p.b, coalesce(ta.taste, 1.0) AS taste_a, coalesce(tb.taste, 1.0) AS taste_b
           FROM _rb_pairs p LEFT JOIN tst ta ON ta.account = p.a LEFT JOIN tst tb ON tb.account = p.b),"""

# after COENTRY_CELLS_SQL: per pair the shared tournaments, each one's entries and the expected shared count
COENTRY_COUNTS_SQL = """
    acc AS (SELECT e.account, fmt.f, count(*) AS n FROM e JOIN fmt USING (tournament_id) GROUP BY ALL),
    expct AS (
      SELECT p.a, p.b,
             sum(xa.n * xb.n * (coalesce(m.s2_fr, 0) + p.taste_a * p.taste_b * coalesce(m.s2_ko, 0))
                 / ((coalesce(m.s1_fr, 0) + p.taste_a * coalesce(m.s1_ko, 0))
                    * (coalesce(m.s1_fr, 0) + p.taste_b * coalesce(m.s1_ko, 0)))) AS exp_shared_t
      FROM tp p JOIN acc xa ON xa.account = p.a
      JOIN acc xb ON xb.account = p.b AND xb.f = xa.f JOIN mom m ON m.f = xa.f
      GROUP BY ALL
    ),
    cnt AS (SELECT account, count(*) AS nt FROM e GROUP BY 1),
    shared AS (
      SELECT p.a, p.b,
        list(DISTINCT x.tournament_id ORDER BY x.tournament_id) FILTER (WHERE y.account IS NOT NULL) AS shared_tournaments,
        coalesce(any_value(ca.nt), 0) AS n_tourn_a, coalesce(any_value(cb.nt), 0) AS n_tourn_b,
        count(y.account) AS n_shared_t
      FROM _rb_pairs p
      LEFT JOIN e x ON x.account = p.a
      LEFT JOIN e y ON y.account = p.b AND y.tournament_id = x.tournament_id
      LEFT JOIN cnt ca ON ca.account = p.a LEFT JOIN cnt cb ON cb.account = p.b
      GROUP BY p.a, p.b
    )
    SELECT shared.*, coalesce(expct.exp_shared_t, 0.0) AS exp_shared_t, tp.taste_a, tp.taste_b
    FROM shared LEFT JOIN expct USING (a, b) LEFT JOIN tp USING (a, b)
    """

# after COENTRY_CELLS_SQL: per pair and cell, each account's entries and the taste-weighted share of the
# cell's entry mass its events hold (the conditional test's cells)
COENTRY_SHARES_SQL = """
    acc AS (SELECT e.account, fmt.f, count(*) AS n,
                   coalesce(sum(fmt.sz) FILTER (WHERE fmt.ko = 0), 0)::DOUBLE AS m_fr,
                   coalesce(sum(fmt.sz) FILTER (WHERE fmt.ko = 1), 0)::DOUBLE AS m_ko
            FROM e JOIN fmt USING (tournament_id) GROUP BY ALL)
    SELECT p.a, p.b, xa.f, xa.n AS n_a, xb.n AS n_b,
           least((xa.m_fr + p.taste_b * xa.m_ko)
                 / (coalesce(m.s1_fr, 0) + p.taste_b * coalesce(m.s1_ko, 0)), 1.0) AS share_a,
           least((xb.m_fr + p.taste_a * xb.m_ko)
                 / (coalesce(m.s1_fr, 0) + p.taste_a * coalesce(m.s1_ko, 0)), 1.0) AS share_b
    FROM tp p JOIN acc xa ON xa.account = p.a
    JOIN acc xb ON xb.account = p.b AND xb.f = xa.f JOIN mom m ON m.f = xa.f
    """


def co_entries(con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame, *,
               taste_pseudo: float | None = KNOCKOUT_PSEUDO) -> pl.DataFrame:
    """For each pair (``a``, ``b``): the tournaments both entered and how improbable their number is.

    Adds ``shared_tournaments`` (list), ``n_tourn_a``, ``n_tourn_b``,
    ``n_shared_t``, ``exp_shared_t``, ``p_coentry``, ``taste_a`` and
    ``taste_b``: the shared count under a configuration-model null (entries
    land in events in proportion to their field size, per format, day and
    pool (:func:`entry_pools`)), so regulars of big fields and of the same days
    are expected to meet; conditional on one account's own events
    (:func:`_conditional_coentry_p`: a sum of binomials over the cells, which
    knows the shared count cannot exceed either account's entries), the
    unconditional Poisson tail kept as ``p_coentry_poisson``. NaN where either
    account entered nothing.

    **Format taste.** Honest bounty hunters enter nearly every knockout; two of
    them meet far more often than field sizes alone expect. The null is
    therefore *taste-weighted*: within a cell an account's entry lands in event
    ``j`` with probability proportional to ``size_j * taste ** ko_j`` (``ko_j``:
    the event pays bounties, ``tournaments.bounty_kind``), a degree-corrected
    configuration model with one covariate (Karrer & Newman, Phys. Rev. E 83,
    016107, 2011), the taste a conditional-logit odds ratio (McFadden 1974).
    ``taste`` (``taste_a``, ``taste_b``) is the odds of the account's knockout
    share among its entries in cells that offer both kinds, against the odds of
    the share the untasted null expects there (``rho``, the knockout share of
    those cells' entry mass, averaged over its entries), the share shrunk
    towards ``rho`` by ``taste_pseudo`` pseudo-entries (empirical-Bayes
    shrinkage, Efron & Morris 1975): a handful of entries is no taste, a
    season of knockouts is. With every taste 1 (``taste_pseudo=None``, or no
    knockouts) it is the plain configuration model. The taste is estimated
    from the account's entries, shared ones included, so a pair that always
    meets in freezeouts reads as two freezeout players too: the pseudo-count
    is that price's bound.
    """
    pairs = pairs.select("a", "b")
    if pairs.height == 0:
        return pairs.with_columns(
            shared_tournaments=pl.lit([], pl.List(pl.Utf8)), n_tourn_a=pl.lit(0, pl.Int64),
            n_tourn_b=pl.lit(0, pl.Int64), n_shared_t=pl.lit(0, pl.Int64), exp_shared_t=pl.lit(0.0),
            p_coentry=pl.lit(None, pl.Float64), p_coentry_poisson=pl.lit(None, pl.Float64),
            taste_a=pl.lit(1.0), taste_b=pl.lit(1.0))
    # co-entry null (a configuration model per format, day and pool): an entry
    # of account a on a day lands in tournament j with probability size_j /
    # sum(size) among that day's events of that format in a's pool (sit-and-go:
    # at most 10 entrants, else multi-table; pools: entry_pools), so the
    # expected shared entries are sum over (format, day, pool) of
    # n_a * n_b * sum(size^2) / sum(size)^2: big fields, regulars who enter
    # everything and players of the same days are expected to meet. With format
    # tastes t_a, t_b the knockouts' sizes are weighted by the taste:
    # n_a n_b (s2_fr + t_a t_b s2_ko) / ((s1_fr + t_a s1_ko) (s1_fr + t_b s1_ko)).
    # entries e and each tournament's (format, day) cell f with its field size sz and knockout flag ko
    pseudo = -1.0 if taste_pseudo is None else float(taste_pseudo)
    cells = COENTRY_CELLS_SQL.replace("{entries}", tournament_entries(con))  # fixed SQL, no input text
    q_t = cells + COENTRY_COUNTS_SQL
    con.register("_rb_pairs", pairs)
    con.register("_rb_pools", entry_pools(con))
    tt = con.sql(q_t, params={"pseudo": pseudo}).pl()
    # per pair and (format, day) cell: each account's entries there and the share of the
    # cell's entry mass its events hold, each weighted by the other's taste (the chance one
    # entry of the other lands in them): the conditional co-entry test
    q_cells = cells + COENTRY_SHARES_SQL
    cells = con.sql(q_cells, params={"pseudo": pseudo}).pl()
    con.unregister("_rb_pairs")
    con.unregister("_rb_pools")
    out = pairs.join(tt, on=["a", "b"], how="left")
    k = out["n_shared_t"].fill_null(0).to_numpy()
    lam = out["exp_shared_t"].fill_null(0.0).to_numpy()
    na = out["n_tourn_a"].fill_null(0).to_numpy()
    nb = out["n_tourn_b"].fill_null(0).to_numpy()
    p_pois = np.where((na > 0) & (nb > 0), sps.poisson.sf(k - 1, np.maximum(lam, 1e-9)), np.nan)
    p_cond = _conditional_coentry_p(out.select("a", "b"), k, cells)
    # the conditional test where it could be made (both accounts entered events of one cell)
    p = np.where(np.isnan(p_cond), p_pois, p_cond)
    p = np.where((na > 0) & (nb > 0), p, np.nan)
    return out.with_columns(
        shared_tournaments=pl.col("shared_tournaments").fill_null(pl.lit([], pl.List(pl.Utf8))),
        p_coentry=pl.Series(p), p_coentry_poisson=pl.Series(p_pois),
        taste_a=pl.col("taste_a").fill_null(1.0), taste_b=pl.col("taste_b").fill_null(1.0),
    )


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


def _binom_sum_sf_many(k: np.ndarray, entry_p: list[np.ndarray], chunk: int = 20_000) -> np.ndarray:
    """P(X_i >= k_i) for each i, X_i the number of successes among independent
    Bernoulli trials with probabilities ``entry_p[i]`` (a Poisson-binomial), by the
    textbook recursion over trials, vectorised over i, the states above max(k) merged
    into one (only the tail is needed)."""
    n = len(entry_p)
    out = np.ones(n)
    if n == 0:
        return out
    if n > chunk:  # bounded memory: pairs in blocks
        for c0 in range(0, n, chunk):
            out[c0:c0 + chunk] = _binom_sum_sf_many(np.asarray(k)[c0:c0 + chunk], entry_p[c0:c0 + chunk], chunk)
        return out
    kk = np.asarray(k, dtype=int)
    K = int(max(kk.max(), 1))
    lens = np.array([len(x) for x in entry_p])
    T = int(lens.max()) if n else 0
    P = np.zeros((n, max(T, 1)))
    for i, x in enumerate(entry_p):
        P[i, :len(x)] = x
    dist = np.zeros((n, K + 1))
    dist[:, 0] = 1.0
    for j in range(T):
        q = P[:, j:j + 1]
        top = dist[:, K] + dist[:, K - 1] * q[:, 0]
        dist[:, 1:] = dist[:, 1:] * (1.0 - q) + dist[:, :-1] * q
        dist[:, 0] *= 1.0 - q[:, 0]
        dist[:, K] = top
    cum = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]  # cum[:, m] = P(X >= m), m <= K
    ok = kk > 0
    out[ok] = np.clip(cum[np.flatnonzero(ok), kk[ok]], 0.0, 1.0)
    return out


def _conditional_coentry_p(pairs: pl.DataFrame, k: np.ndarray, cells: pl.DataFrame) -> np.ndarray:
    """Co-entry p-value conditional on one account's own entries.

    Under the configuration model (an entry lands in an event of its format and day in
    proportion to the event's field size) and independence of the two accounts, given
    the events ``a`` entered, each of ``b``'s entries in a (format, day) cell lands in
    one of ``a``'s events with probability ``share_a`` (the share of the cell's entry
    mass that ``a``'s events hold), so the shared count is a sum of binomials over the
    cells (a Poisson-binomial; Wang, Statistica Sinica 3, 1993). Drawing events without
    replacement only lowers the chance of many hits, so the binomial tail is
    conservative. The Poisson tail with the unconditional mean ignores that the shared
    count cannot exceed either account's entries: two accounts with 7 entries each, all
    7 shared, where 4 were expected, have Poisson p 0.11 but conditional p near 0.02.
    Both directions (given ``a``'s events, and given ``b``'s) are valid; the larger p
    is kept, so no correction is needed. NaN where the pair shares no cell."""
    out = np.full(pairs.height, np.nan)
    if cells.height == 0:
        return out
    idx = {(a, b): i for i, (a, b) in enumerate(pairs.iter_rows())}
    c = cells.with_columns(i=pl.Series([idx.get((a, b), -1) for a, b in zip(cells["a"], cells["b"])],
                                       dtype=pl.Int64)).filter(pl.col("i") >= 0).sort("i")
    if c.height == 0:
        return out
    ii = c["i"].to_numpy()
    na, nb = c["n_a"].to_numpy().astype(int), c["n_b"].to_numpy().astype(int)
    sa, sb = c["share_a"].to_numpy(), c["share_b"].to_numpy()
    bounds = np.flatnonzero(np.r_[True, ii[1:] != ii[:-1], True])
    who = ii[bounds[:-1]]
    # one probability per entry: b's entries against a's events, and a's against b's
    b_on_a = [np.repeat(sa[s0:s1], nb[s0:s1]) for s0, s1 in zip(bounds[:-1], bounds[1:])]
    a_on_b = [np.repeat(sb[s0:s1], na[s0:s1]) for s0, s1 in zip(bounds[:-1], bounds[1:])]
    kk = np.asarray(k, dtype=int)[who]
    out[who] = np.maximum(_binom_sum_sf_many(kk, b_on_a), _binom_sum_sf_many(kk, a_on_b))
    return out
