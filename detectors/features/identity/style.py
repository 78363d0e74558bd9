"""Style fingerprints: tracker statistics, bet sizes and decision times per account, and how alike two
accounts play against an empirical null of random pairs."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

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
    """The numeric columns of :func:`style_fingerprints` as float arrays (NaN where null), plus ``n_aggr_call``."""
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
    where either account has too little data. The figures of pairs given by
    position: :func:`likeness_by_position`.
    """
    # a fixed row order: the fingerprints come from a GROUP BY (no order), and the null
    # pairs are drawn by position, so without it the same seed drew other pairs run to run
    fp = likeness_order(fp)
    idx = {a: i for i, a in enumerate(fp["account"].to_list())}
    ia = np.array([idx.get(x, -1) for x in pairs["a"].to_list()], dtype=int)
    ib = np.array([idx.get(x, -1) for x in pairs["b"].to_list()], dtype=int)
    known = (ia >= 0) & (ib >= 0)
    out = [np.full(len(ia), np.nan) for _ in range(4)]
    got = likeness_by_position(fp, ia[known], ib[known], min_hands=min_hands, min_decisions=min_decisions,
                               null_pairs=null_pairs, random_state=random_state)
    for o, g in zip(out, got):
        o[known] = g
    sd, td, ps, pt = out
    return pairs.with_columns(
        style_dist=pl.Series(sd),
        timing_dist=pl.Series(td),
        p_style=pl.Series(ps),
        p_timing=pl.Series(pt),
    )


def likeness_order(fp: pl.DataFrame) -> pl.DataFrame:
    """The fingerprints :func:`likeness_by_position` indexes: accounts with a hand, by name."""
    return fp.filter(pl.col("n_hands") >= 1).sort("account")


def likeness_by_position(
    fp: pl.DataFrame,
    ia: np.ndarray,
    ib: np.ndarray,
    *,
    min_hands: int = 30,
    min_decisions: int = 30,
    null_pairs: int = 100_000,
    random_state: int = 0,
    chunk: int = 200_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`likeness` of the pairs (``ia[k]``, ``ib[k]``), rows of ``fp`` ordered by :func:`likeness_order`: the
    arrays ``style_dist``, ``timing_dist``, ``p_style``, ``p_timing`` (no frame of names, and the distances computed
    ``chunk`` pairs at a time: every pair of a population fits in memory)."""
    rng = np.random.default_rng(random_state)
    C = _columns(fp)
    enough_s = C["n_hands"] >= min_hands
    enough_t = C["n_decisions"] >= min_decisions
    style_f = (RATE_FEATURES, SIZE_FEATURES)
    time_f = ((), TIME_FEATURES)

    def null(enough: np.ndarray, feats) -> np.ndarray:
        pool = np.flatnonzero(enough)
        if pool.size < 3:
            return np.array([])
        m = min(null_pairs, pool.size * (pool.size - 1) // 2)
        na = rng.choice(pool, m)
        nb = rng.choice(pool, m)
        keep = na != nb
        d = _z2(C, na[keep], nb[keep], *feats)
        return np.sort(d[~np.isnan(d)])

    null_s = null(enough_s, style_f)
    null_t = null(enough_t, time_f)
    sd = np.full(len(ia), np.nan)
    td = np.full(len(ia), np.nan)
    for c0 in range(0, len(ia), chunk):  # bounded memory: _z2's per-feature arrays, a block of pairs at a time
        xa, xb = ia[c0:c0 + chunk], ib[c0:c0 + chunk]
        sd[c0:c0 + chunk] = np.where(enough_s[xa] & enough_s[xb], _z2(C, xa, xb, *style_f), np.nan)
        td[c0:c0 + chunk] = np.where(enough_t[xa] & enough_t[xb], _z2(C, xa, xb, *time_f), np.nan)

    def pv(d: np.ndarray, nd: np.ndarray) -> np.ndarray:
        out = np.full(d.shape, np.nan)
        if nd.size == 0:
            return out
        ok = ~np.isnan(d)
        out[ok] = (np.searchsorted(nd, d[ok], side="right") + 1) / (nd.size + 1)
        return out

    return sd, td, pv(sd, null_s), pv(td, null_t)
