"""Seat hand-off: someone else takes over an account's seat in mid-event.

Method
------
Candidate change points (:mod:`detectors.seat_handoff.candidates`): per
account and tournament, a login during the account's play from a device or
network the previous session did not use, at a hand-over (the session the
event began on is closed by then). Without sessions every split of the
account's hand sequence is a candidate and the split maximising the
action-mix chi-square is taken, Bonferroni over the splits scanned
(binary segmentation, Scott & Knott, Biometrics 1974; Killick, Fearnhead &
Eckley, JASA 2012); such change points are ranked, never flagged.

Before and after the change point the play is compared
(:mod:`detectors.seat_handoff.tests`):

* decision timing, device-invariant: a device rescales a person's times, so
  the common shift is removed and the profile over decision classes and the
  spread compared (Mann-Whitney, 1947; van der Linden's lognormal
  response-time model, J. Educ. Behav. Stat. 2006), the shift tested against
  a band (``device_band``; an interval null, Hodges & Lehmann, JRSS B 1954);
* style: the action mix against the rest of the field over the same two
  periods (the who x period x action interaction, G2 by iterative
  proportional fitting) and against the account's own hands under other
  devices, bet sizes (Mann-Whitney), and with every hole card known the
  range: entry and raise given the hand dealt (Cochran-Mantel-Haenszel).

The samples of one helper device are pooled over every event it took over.
Style and timing are combined with Fisher's method and each candidate's
combined p is ranked against simulated same-player moves in this population
(:mod:`detectors.seat_handoff.null`; an empirical null, Efron, JASA 2004),
keeping the larger of that Monte Carlo p and the tests' own;
Benjamini–Hochberg controls the false-discovery rate over the candidates. A
candidate is flagged (:meth:`SeatHandoffDetector.threshold`) at a hand-over
(a login within ``handover_s`` of one of the account's logouts) from a device
the account had never used with a shift in style or timing, or from a known
device with a field-relative style shift beyond ``known_device_p``; a clean
quick hand-over to a new device on a new network, a device that only ever
takes the account's seat, or a seat left from one home network and taken on
another (two places at once) relax the level to ``handover_p`` /
``repeat_p`` but still need the play to shift. One login takes one seat.

The figures behind each rule are in docs/measurements.md ("Detector notes
moved from docstrings").
"""

from __future__ import annotations

import math
from typing import Any

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.base import HAND_INPUTS, Detector, Evidence, Signal, is_missing, sql_literal as _lit
from detectors.features import gameplay as gp
from detectors.features import identity as idf

ACTS = ("fold", "check", "call", "bet", "raise")


# per (account, hand), shared by the event's hands and the account's history: the preflop entry
# decision and its situation, and the action counts of the action mix
_PER_HAND_COLS = """
       any_value(h.game) AS game,
       -- the entry decision preflop: 2 entered with a raise, 1 entered without raising (put chips
       -- in voluntarily), 0 folded without entering, -1 neither (a big blind's check, no decision)
       CASE WHEN bool_or(a.street = 'preflop' AND a.action IN ('bet','raise')) THEN 2
            WHEN bool_or(a.street = 'preflop' AND a.action = 'call') THEN 1
            WHEN bool_or(a.street = 'preflop' AND a.action = 'fold') THEN 0 ELSE -1 END AS entry,
       -- the entry decision's situation: facing a raise (more than a big blind to call), the stack in big blinds
       coalesce(arg_min(a.to_call, a.seq) FILTER (WHERE a.street = 'preflop') > any_value(h.big_blind), FALSE) AS facing,
       any_value(s.stack_start) / nullif(any_value(h.big_blind), 0) AS stack_bb,
       -- the players dealt in (short-handed tables widen every range)
       any_value(h.n_players) AS n_dealt,
       -- the cards dealt are known whatever was played (operator view, or the hero's own hand): not
       -- only those shown down, which only entered hands reach
       bool_or(h.all_cards_known OR coalesce(h.hero = a.player, FALSE)) AS dealt_known,
       count(*) FILTER (WHERE a.action = 'fold')  AS n_fold,
       count(*) FILTER (WHERE a.action = 'check') AS n_check,
       count(*) FILTER (WHERE a.action = 'call')  AS n_call,
       count(*) FILTER (WHERE a.action = 'bet')   AS n_bet,
       count(*) FILTER (WHERE a.action = 'raise') AS n_raise"""

# the hole cards of each (hand, player), joined to per-hand rows as ``hole``
_HOLE_JOIN = """LEFT JOIN (SELECT hand_id, player, any_value(cards) AS cards FROM hole_cards GROUP BY ALL) hc"""

# per (account, tournament, hand) action counts and bet sizes of voluntary actions
_HAND_ROWS_SQL = f"""
SELECT x.*, hc.cards AS hole FROM (
SELECT h.tournament_id, a.player AS account, a.hand_id, h.started_at,{_PER_HAND_COLS},
       max(CASE WHEN a.street = 'preflop' AND a.action IN ('call','bet','raise') THEN 1 ELSE 0 END) AS vpip,
       list(a.amount / a.pot_before) FILTER (WHERE a.action IN ('bet','raise') AND a.pot_before > 0
                                             AND NOT a.is_all_in) AS sizes
FROM actions a JOIN hands h USING (hand_id)
JOIN _rb_at t ON t.account = a.player AND t.tournament_id = h.tournament_id
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
GROUP BY ALL
) x {_HOLE_JOIN}
  ON hc.hand_id = x.hand_id AND hc.player = x.account
"""

# every player's voluntary actions per hand in the candidates' tournaments (the field)
_FIELD_SQL = """
SELECT h.tournament_id, h.started_at, a.player AS account,
       count(*) FILTER (WHERE a.action = 'fold')  AS n_fold,
       count(*) FILTER (WHERE a.action = 'check') AS n_check,
       count(*) FILTER (WHERE a.action = 'call')  AS n_call,
       count(*) FILTER (WHERE a.action = 'bet')   AS n_bet,
       count(*) FILTER (WHERE a.action = 'raise') AS n_raise
FROM actions a JOIN hands h USING (hand_id)
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
  AND h.tournament_id IN (SELECT DISTINCT tournament_id FROM _rb_at)
GROUP BY ALL
"""

_DECISIONS_SQL = """
SELECT h.tournament_id, d.account, d.hand_id, h.started_at, ln(greatest(d.ms, 1)) AS log_ms
FROM decisions d JOIN hands h USING (hand_id)
JOIN _rb_at t ON t.account = d.account AND t.tournament_id = h.tournament_id
"""

# every decision time of the candidate accounts (cash and tournaments), with its
# decision class and the device of the session it was played under (the latest
# login of the account before the hand): the account's own timing history.
# Classes follow how decision times are made: a preflop fold is quick, a decision
# over a third of the stack or more (all-in, a big call or bet) is slow, the rest
# in between; the classes are compared separately.
_TIMING_SQL = """
WITH acc AS (SELECT DISTINCT account FROM _rb_at),
d AS (
  SELECT d.account, d.hand_id, h.tournament_id, h.started_at, ln(greatest(d.ms, 1)) AS log_ms,
         CASE WHEN a.street = 'preflop' AND a.action = 'fold' THEN 0
              WHEN a.is_all_in OR (s.stack_start > 0 AND (a.to_call * 3 >= s.stack_start
                   OR (a.action IN ('bet', 'raise') AND coalesce(a.raise_to, a.amount) * 3 >= s.stack_start))) THEN 2
              ELSE 1 END AS cls
  FROM decisions d JOIN acc ON acc.account = d.account
  JOIN hands h USING (hand_id)
  JOIN actions a ON a.hand_id = d.hand_id AND a.seq = d.seq
  LEFT JOIN seats s ON s.hand_id = d.hand_id AND s.player = d.account
  WHERE a.action NOT LIKE 'post%'
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM acc))
SELECT d.*, ss.device FROM d ASOF LEFT JOIN ss ON d.account = ss.account AND d.started_at >= ss.login_at
"""

# the account's own tournament play, hand by hand, with the device of the session
# it was played under: the action-mix history (tournament hands only: cash stacks
# are deeper and change the mix)
_HISTORY_SQL = f"""
WITH acc AS (SELECT DISTINCT account FROM _rb_at),
x AS (
  SELECT a.player AS account, a.hand_id, h.tournament_id, h.started_at,{_PER_HAND_COLS}
  FROM actions a JOIN hands h USING (hand_id) JOIN acc ON acc.account = a.player
  LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
  WHERE a.action NOT LIKE 'post%' AND h.is_tournament AND NOT coalesce(s.sitting_out, FALSE)
  GROUP BY ALL
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM acc)),
y AS (SELECT x.*, ss.device FROM x ASOF LEFT JOIN ss ON x.account = ss.account AND x.started_at >= ss.login_at)
SELECT y.*, hc.cards AS hole FROM y
{_HOLE_JOIN}
  ON hc.hand_id = y.hand_id AND hc.player = y.account
"""


# ------------------------------------------------------------------ the tests, one implementation
# Every two-sample test of a change point (the candidates' and the simulated same-player moves'
# of the population's null) goes through these array forms, one row per comparison: the
# candidates' samples are passed as lists of arrays, the null's as prefix sums over
# account-events split at many hands at once. The same code gives both their p-values, so a
# candidate is ranked against moves put through exactly its own tests.

_EXACT_MAX = 8  # Mann-Whitney: the exact null distribution where a sample has at most this many values and no ties


def _u_cdf(m: int, n: int, k: int) -> float:
    """Exact P(U <= k) for the Mann-Whitney U of two samples of sizes m and n without ties:
    the arrangements with U = u are the coefficients of q^u in the Gaussian binomial
    coefficient [m+n choose m]_q = prod_{i<=min(m,n)} (1 - q^(n'+i)) / (1 - q^i), n' the
    larger size (Mann & Whitney 1947; Andrews, *The Theory of Partitions*, 1976, ch. 3),
    built factor by factor in exact integers (the counts outgrow 64 bits) up to q^k only:
    each factor's coefficient u depends on lower ones alone."""
    m, n = min(m, n), max(m, n)
    if k < 0:
        return 0.0
    if k >= m * n:
        return 1.0
    c = np.zeros(k + 1, dtype=object)
    c[:] = 0
    c[0] = 1
    for i in range(1, m + 1):
        for r in range(min(i, k + 1)):  # divide by (1 - q^i): running sums with stride i
            c[r::i] = np.cumsum(c[r::i])
        d = n + i  # multiply by (1 - q^(n+i)), high powers first
        if d <= k:
            c[d:] = c[d:] - c[:-d].copy()
    return int(np.sum(c)) / math.comb(m + n, m)


def _midranks(group: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks of ``value`` within each ``group`` and each group's tie term
    sum(t^3 - t) over its runs of equal values (for the Mann-Whitney variance)."""
    if group.size == 0:
        return np.zeros(0), np.zeros(0)
    df = pl.DataFrame({"g": group, "v": value})
    r = df.select(pl.col("v").rank("average").over("g")).to_series().to_numpy().astype(float)
    ties = df.group_by("g", "v").len().with_columns(t=pl.col("len").cast(pl.Float64))
    tie = ties.group_by("g").agg((pl.col("t") ** 3 - pl.col("t")).sum().alias("s"))
    out = np.zeros(int(group.max()) + 1)
    out[tie["g"].to_numpy()] = tie["s"].to_numpy()
    return r, out


def _u_sd(n1: np.ndarray, n2: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Standard deviation of Mann-Whitney U under the null, with the tie correction (``tie``: the
    pooled samples' sum of t^3 - t over runs of equal values); NaN for an empty pair."""
    n = n1 + n2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(n1 * n2 / 12.0 * ((n + 1.0) - tie / (n * (n - 1.0))))


def _mwu_p_vec(n1: np.ndarray, n2: np.ndarray, u1: np.ndarray, tie: np.ndarray, min_n: int = 5) -> np.ndarray:
    """Two-sided Mann-Whitney p for many pairs of samples at once, from the sizes, the first
    sample's U and the pooled samples' tie term (Mann & Whitney, Ann. Math. Stat. 18, 1947):
    the exact null distribution of U where the smaller sample has at most ``_EXACT_MAX``
    values and there are no ties (``_u_cdf``), otherwise the normal approximation with tie and
    continuity corrections (scipy's ``mannwhitneyu`` chooses the same way by default). NaN
    where a sample has fewer than ``min_n`` values."""
    n1, n2 = np.asarray(n1, dtype=float), np.asarray(n2, dtype=float)
    u1, tie = np.asarray(u1, dtype=float), np.asarray(tie, dtype=float)
    mu = n1 * n2 / 2.0
    u = np.maximum(u1, n1 * n2 - u1)
    s = _u_sd(n1, n2, tie)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - mu - 0.5) / s
    p = np.clip(2.0 * sps.norm.sf(z), 0.0, 1.0)
    p = np.where(s > 0, p, 1.0)
    ok = (n1 >= min_n) & (n2 >= min_n)
    exact = ok & (np.minimum(n1, n2) <= _EXACT_MAX) & (tie == 0)
    for i in np.flatnonzero(exact):  # one small count per small sample
        # P(U >= u) = P(U <= n1 n2 - u) by symmetry; two-sided: twice the smaller tail
        p[i] = min(1.0, 2.0 * _u_cdf(int(n1[i]), int(n2[i]), int(round(n1[i] * n2[i] - u[i]))))
    return np.where(ok, p, np.nan)


def _mwu_p_many(xs: list[np.ndarray], ys: list[np.ndarray], min_n: int = 5) -> np.ndarray:
    """``_mwu_p_vec`` for a list of pairs of samples (xs[i] against ys[i]; NaN values left out),
    U of the first sample counted by ``_u_against``."""
    xs = [np.asarray(x, dtype=float) for x in xs]
    ys = [np.asarray(y, dtype=float) for y in ys]
    xs, ys = [x[~np.isnan(x)] for x in xs], [y[~np.isnan(y)] for y in ys]
    if not xs:
        return np.zeros(0)
    return _mwu_p_vec(*_u_against(xs, ys), min_n=min_n)


def _fisher_classes(P: np.ndarray) -> np.ndarray:
    """Row-wise combination of the decision classes' Mann-Whitney p-values (columns; NaN:
    class not tested): one class tested, its p; several, Fisher's method (disjoint samples,
    independent tests; Fisher 1925); none, NaN."""
    ntest = (~np.isnan(P)).sum(axis=1)
    stat = -2.0 * np.nansum(np.log(np.clip(P, 1e-300, 1.0)), axis=1)
    one = np.nanmin(np.where(np.isnan(P), np.inf, P), axis=1) if P.shape[1] else np.full(P.shape[0], np.nan)
    p = np.where(ntest == 1, one, sps.chi2.sf(stat, 2 * np.maximum(ntest, 1)))
    return np.where(ntest == 0, np.nan, p)


def _strat_mwu_many(xa: list[np.ndarray], ca: list[np.ndarray], xb: list[np.ndarray], cb: list[np.ndarray],
                    min_n: int = 5) -> np.ndarray:
    """Stratified two-sample test of decision times for each row: Mann-Whitney U within each
    decision class (quick preflop folds, ordinary decisions, big decisions; a class is tested
    where both samples have ``min_n`` of it), the classes combined by ``_fisher_classes``. A
    change in how often each class arises (a looser player folds less) then does not pass for
    a change in speed."""
    if not xa:
        return np.zeros(0)
    P = np.column_stack([
        _mwu_p_many([x[c == k] for x, c in zip(xa, ca)], [x[c == k] for x, c in zip(xb, cb)], min_n)
        for k in (0, 1, 2)])
    return _fisher_classes(P)


# The entry line is compared in like situations: the stack depth in big blinds (push-or-fold
# ranges widen as the stack shrinks: at most 12 big blinds or deeper), a short-handed table (at
# most ``_SHORT_MAX`` players dealt in: with fewer opponents every range widens, and the blinds
# come round more often; Sklansky & Malmuth 1999, Harrington & Robertie, *Harrington on Hold'em*
# vol. 2, 2005, on short-handed and short-stacked play) and facing a raise. Starting hands in
# bins of 10 percentiles, not 5: a stratum with one sample empty adds nothing, and a 40-hand
# segment spread over 160 strata left most of them so. The table size is what made the test
# liberal over the rest of an event from a point (the population's simulated moves run into the
# late short-handed stages): with four depths (6 / 12 / 25 bb) and no table size, p < 0.05 /
# 0.01 / 0.001 for 5.9 / 1.6 / 0.38 % of 32,075 same-player moves on six tuning populations; with
# two depths and the short-handed stratum 5.4 / 1.2 / 0.26 %, and other accounts' 40-hand
# segments are found more often (with the own-history action mix, at a same-player rate of 5 /
# 1 / 0.1 %: 44.3 / 28.5 / 12.1 -> 45.0 / 30.1 / 12.5 % of 9,190). At most 2, 3 or 4 players did
# the same there; four depths with the table size (160 strata) were as nominal and no more
# powerful; the position (blinds or not) added nothing.
_DEPTH_BB = np.array([12.0])
_SHORT_MAX = 3  # a short-handed table: at most this many players dealt in
_BINS = 10  # starting hands in bins of 10 percentiles
# starting-hand bins x depth x facing a raise x short-handed (``_with_strength``)
_N_STRATA = _BINS * (len(_DEPTH_BB) + 1) * 2 * 2


def _cmh_p_vec(a1: np.ndarray, a: np.ndarray, b1: np.ndarray, b: np.ndarray, min_n: int = 5) -> np.ndarray:
    """Cochran-Mantel-Haenszel test of many stratified 2 x 2 tables at once (rows: comparisons,
    columns: strata): ``a1`` of ``a`` events in the first sample, ``b1`` of ``b`` in the second,
    stratum by stratum. The one-degree-of-freedom statistic (sum(a1 - E))^2 / sum V with
    E and V the hypergeometric mean and variance of a1 given the stratum's margins (Cochran,
    Biometrics 10, 1954; Mantel & Haenszel, J. Natl. Cancer Inst. 22, 1959), against chi-square
    with 1 dof: a consistent shift of the rate the same way across strata. Without Mantel and
    Haenszel's continuity correction (-1/2 on |sum(a1 - E)|): with sparse strata the corrected
    test is conservative (a same player's p of exactly 1 was common; below 0.01 for 0.3 % of
    same-player splits) and dilutes a style shift it joins by Fisher's method (the continuity
    correction's conservatism: Grizzle, Am. Stat. 21, 1967). Uncorrected, it is about nominal
    on same-player segments from early in an event (p < 0.01 for 1.0 %) and, with the
    short-handed stratum (``_with_strength``), over the rest of an event from a point (1.2 % of
    the simulated same-player moves; without that stratum 1.6 %: the late, short-handed stages
    drift). Strata with one
    sample empty or no variation add nothing. NaN where the first sample has fewer than
    ``min_n`` observations or no stratum varies."""
    a1, a, b1, b = (np.asarray(x, dtype=float) for x in (a1, a, b1, b))
    n = a + b
    m1 = a1 + b1
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(n > 0, a * m1 / n, 0.0)
        v = np.where(n > 1, a * b * m1 * (n - m1) / (n * n * (n - 1.0)), 0.0)
        d = np.abs((a1 - e).sum(axis=1))
        sv = v.sum(axis=1)
        stat = np.where(sv > 0, d ** 2 / sv, 0.0)
    p = sps.chi2.sf(stat, 1)
    return np.where((a.sum(axis=1) >= min_n) & (sv > 0), p, np.nan)


def _range_p_many(sa: list[np.ndarray], ea: list[np.ndarray], sb: list[np.ndarray], eb: list[np.ndarray],
                  min_n: int = 5) -> np.ndarray:
    """Does the player enter pots with other cards after a change point? ``sa``: the stratum of
    each hand after the point (``_with_strength``: the starting hand's percentile in bins of 10,
    the stack depth, facing a raise, a short-handed table), ``ea``: its entry decision (2 raised, 1 entered without
    raising, 0 folded); ``sb``, ``eb``: the baseline's. Two lines are compared stratum by
    stratum (``_cmh_p_vec``): the entry line (entered or folded, all hands) and the raising
    line (raised or not, the hands entered), Fisher over the two (``_fisher_classes``; the
    second is conditional on the first's outcomes). A player enters, and raises, with about
    the best share of hands their looseness and aggression allow, the lines moved by position
    and situation (Sklansky & Malmuth, *Hold'em Poker for Advanced Players*, 1999; opponent
    modelling by the hands a player enters with: Billings, Davidson, Schaeffer & Szafron,
    Artif. Intell. 134, 2002): another person draws the lines elsewhere, and a device cannot
    change which cards a person plays. Conditioning on the cards dealt removes the luck of
    the deal that the plain rates (the action mix) carry: a hand far above or below a line is
    played the same by either player and adds no noise, the hands near the line decide.
    Directional: a player who enters as often with other hands shifts the rate up in some
    bins and down in others, and is not seen."""
    N = len(sa)
    if N == 0:
        return np.zeros(0)
    S = _N_STRATA

    def counts(ss: list[np.ndarray], ee: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = np.array([x.size for x in ss], dtype=np.int64)
        g = np.repeat(np.arange(N), n)
        key = g * S + np.concatenate([np.asarray(x, dtype=np.int64) for x in ss] + [np.zeros(0, np.int64)])
        en = np.concatenate([np.asarray(x, dtype=np.int64) for x in ee] + [np.zeros(0, np.int64)])
        tot = np.bincount(key, minlength=N * S).reshape(N, S).astype(float)
        ent = np.bincount(key, weights=(en >= 1).astype(float), minlength=N * S).reshape(N, S)
        rai = np.bincount(key, weights=(en == 2).astype(float), minlength=N * S).reshape(N, S)
        return tot, ent, rai
    a, a1, a2 = counts(sa, ea)
    b, b1, b2 = counts(sb, eb)
    return _range_p_counts(a, a1, a2, b, b1, b2, min_n)


def _range_p_counts(a: np.ndarray, a1: np.ndarray, a2: np.ndarray, b: np.ndarray, b1: np.ndarray, b2: np.ndarray,
                    min_n: int = 5) -> np.ndarray:
    """``_range_p_many`` from counts per stratum (rows: comparisons): hands with an entry
    decision ``a``, entered ``a1``, raised ``a2`` after the point; ``b``, ``b1``, ``b2`` the
    baseline's."""
    return _fisher_classes(np.column_stack([_cmh_p_vec(a1, a, b1, b, min_n), _cmh_p_vec(a2, a1, b2, b1, min_n)]))


def _mwu_z_many(xs: list[np.ndarray], ys: list[np.ndarray], min_n: int = 5) -> np.ndarray:
    """Signed normal score of the Mann-Whitney U of each pair (xs[i] against ys[i]; positive:
    the first sample tends larger), with the tie and continuity corrections of ``_mwu_p_vec``;
    NaN where a sample has fewer than ``min_n`` values. For one-sided tests."""
    if not xs:
        return np.zeros(0)
    n1, n2, u1, tie = (np.asarray(a, dtype=float) for a in _u_against(xs, ys))
    d = u1 - n1 * n2 / 2.0
    s = _u_sd(n1, n2, tie)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(s > 0, np.sign(d) * np.maximum(np.abs(d) - 0.5, 0.0) / s, 0.0)
    return np.where((n1 >= min_n) & (n2 >= min_n), z, np.nan)


def _u_against(xs: list[np.ndarray], ys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mann-Whitney pieces of many pairs (xs[i] against ys[i]) by counting rather than
    ranking: U of the first sample is the number of (x, y) pairs with x > y plus half the
    ties, read off the sorted second samples with one search per value of the first
    (samples of hundreds against a handful: one sort of the large ones); the tie term of the
    pooled sample sum(t^3 - t) from each sample's own runs of equal values and the runs they
    share. Returns (n1, n2, u1, tie), the input of ``_mwu_p_vec``: the same figures as
    mid-ranks of the pooled samples (tested against scipy)."""
    N = len(xs)
    n1 = np.array([x.size for x in xs], dtype=np.int64)
    n2 = np.array([y.size for y in ys], dtype=np.int64)
    gx, gy = np.repeat(np.arange(N), n1), np.repeat(np.arange(N), n2)
    vx = np.concatenate([np.asarray(x, dtype=float) for x in xs] + [np.zeros(0)])
    vy = np.concatenate([np.asarray(y, dtype=float) for y in ys] + [np.zeros(0)])
    # one integer key per value: the pair's index, then the value's rank among all values (exact for any values)
    _, rank = np.unique(np.concatenate([vx, vy]), return_inverse=True)
    OFF = int(rank.max()) + 1 if rank.size else 1
    kx = np.sort(gx * OFF + rank[: vx.size])
    ky = np.sort(gy * OFF + rank[vx.size:])
    below = np.searchsorted(ky, kx, side="left")
    upto = np.searchsorted(ky, kx, side="right")
    u1 = np.bincount(gx, weights=(below - np.searchsorted(ky, gx * OFF, side="left")) + 0.5 * (upto - below),
                     minlength=N)
    # tie term: runs within each sample, then the cross terms of the values they share
    # ((a + b)^3 - (a + b) = a^3 - a + b^3 - b + 3ab(a + b))
    def runs(k: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if k.size == 0:
            return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
        start = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        return k[start], np.diff(np.r_[start, k.size]), g[start]
    gxs = (kx // OFF).astype(np.int64) if kx.size else np.zeros(0, np.int64)
    gys = (ky // OFF).astype(np.int64) if ky.size else np.zeros(0, np.int64)
    rkx, rtx, rgx = runs(kx, gxs)
    _, rty, rgy = runs(ky, gys)
    tie = (np.bincount(rgx, weights=rtx.astype(float) ** 3 - rtx, minlength=N)
           + np.bincount(rgy, weights=rty.astype(float) ** 3 - rty, minlength=N))
    if rkx.size:
        tb = (np.searchsorted(ky, rkx, side="right") - np.searchsorted(ky, rkx, side="left")).astype(float)
        ta = rtx.astype(float)
        tie += np.bincount(rgx, weights=3.0 * ta * tb * (ta + tb), minlength=N)
    return n1, n2, u1, tie


def _medians(xs: list[np.ndarray]) -> np.ndarray:
    """Median of each array of a list at once (NaN for an empty one)."""
    n = np.array([x.size for x in xs], dtype=np.int64)
    out = np.full(len(xs), np.nan)
    if n.sum() == 0:
        return out
    df = pl.DataFrame({"g": np.repeat(np.arange(len(xs)), n), "v": np.concatenate([np.asarray(x, dtype=float) for x in xs])})
    m = df.group_by("g").agg(pl.col("v").median())
    out[m["g"].to_numpy()] = m["v"].to_numpy()
    return out


def _device_time_many(xa: list[np.ndarray], ca: list[np.ndarray], xb: list[np.ndarray], cb: list[np.ndarray],
                      log_band: float, min_n: int = 5) -> dict[str, np.ndarray]:
    """Decision timing of an after-segment (``xa``, log ms, decision classes ``ca``) against a
    baseline (``xb``, ``cb``) when the segment was played on another device: a test of the
    person, not of the machine.

    A person's decision times follow a lognormal model with a speed of their own and a
    profile over kinds of decision (van der Linden, *A lognormal model for response times on
    test items*, J. Educ. Behav. Stat. 31, 2006: log T = item intensity - person speed +
    noise of a person-specific spread). A device (a phone's touch screen, a desktop's mouse)
    rescales the time the person takes, i.e. shifts every log time by about one constant;
    another person brings their own profile (how much quicker their easy preflop folds are,
    how much longer their big decisions take, relative to their ordinary ones) and their own
    spread, and a speed of their own that may lie beyond what a device does. Three parts,
    each about uniform for the same person on another device:

    * profile: the common shift (the class medians' differences, weighted by the classes'
      effective sizes) is removed from the after-segment, then Mann-Whitney per class, Fisher
      over the classes (NaN with fewer than two classes tested: one class fits the shift
      exactly);
    * spread: Mann-Whitney per class on absolute deviations from each sample's own class
      median (a rank test for dispersion in the manner of Fligner & Killeen, JASA 71, 1976),
      Fisher over the classes;
    * speed beyond a device: the shift is tested against a band of +-``log_band`` rather
      than against zero (an interval null hypothesis, Hodges & Lehmann, JRSS B 16, 1954):
      one-sided Mann-Whitney of the segment moved by the band's edge in each direction,
      Stouffer over classes, the two directions Bonferroni-corrected.

    The three are combined by Fisher's method. Returns ``p`` and its parts
    (``p_profile``, ``p_spread``, ``p_speed``) and the estimated common shift ``shift``."""
    N = len(xa)
    out = {k: np.full(N, np.nan) for k in ("p", "p_profile", "p_spread", "p_speed", "shift")}
    if N == 0:
        return out
    A = [[np.asarray(x, dtype=float)[np.asarray(c) == k] for x, c in zip(xa, ca)] for k in (0, 1, 2)]
    B = [[np.asarray(x, dtype=float)[np.asarray(c) == k] for x, c in zip(xb, cb)] for k in (0, 1, 2)]
    ma = np.column_stack([_medians(A[k]) for k in range(3)])  # (N, 3)
    mb = np.column_stack([_medians(B[k]) for k in range(3)])
    na = np.array([[a.size for a in A[k]] for k in range(3)]).T.astype(float)
    nb = np.array([[b.size for b in B[k]] for k in range(3)]).T.astype(float)
    ok = (na >= min_n) & (nb >= min_n)
    w = np.where(ok, _eff_n(na, nb), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(w.sum(axis=1) > 0, np.nansum(np.where(ok, w * (ma - mb), 0.0), axis=1) / w.sum(axis=1), np.nan)
    sh = np.nan_to_num(shift)
    prof = np.column_stack([_mwu_p_many([a - s for a, s in zip(A[k], sh)], B[k], min_n) for k in range(3)])
    p_profile = np.where(ok.sum(axis=1) >= 2, _fisher_classes(prof), np.nan)
    spread = np.column_stack([
        _mwu_p_many([np.abs(a - m) for a, m in zip(A[k], np.nan_to_num(ma[:, k]))],
                    [np.abs(b - m) for b, m in zip(B[k], np.nan_to_num(mb[:, k]))], min_n) for k in range(3)])
    p_spread = _fisher_classes(spread)
    zs = np.column_stack([_mwu_z_many([a - log_band for a in A[k]], B[k], min_n) for k in range(3)])
    zf = np.column_stack([_mwu_z_many([a + log_band for a in A[k]], B[k], min_n) for k in range(3)])
    nt = (~np.isnan(zs)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        zs_c = np.nansum(zs, axis=1) / np.sqrt(nt)
        zf_c = np.nansum(zf, axis=1) / np.sqrt(nt)
    p_speed = np.where(nt > 0, np.minimum(1.0, 2.0 * np.minimum(sps.norm.sf(zs_c), sps.norm.cdf(zf_c))), np.nan)
    parts = np.column_stack([p_profile, p_spread, p_speed])
    p = idf.fisher_combine(parts)
    out.update(p=np.where(np.isnan(parts).all(axis=1), np.nan, p), p_profile=p_profile, p_spread=p_spread,
               p_speed=p_speed, shift=shift)
    return out


def _chi2_p_vec(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson chi-square homogeneity p of many 2 x k tables (rows a and b, shape (N, k)) at
    once, columns with no counts in either row left out; NaN where fewer than two columns
    are left or a row is empty (Pearson 1900)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    t = np.stack([a, b], axis=1).astype(float)  # (N, 2, k)
    col = t.sum(axis=1)
    row = t.sum(axis=2)
    tot = row.sum(axis=1)
    used = col > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        e = row[:, :, None] * col[:, None, :] / tot[:, None, None]
        x2 = np.where(used[:, None, :], (t - e) ** 2 / np.where(e > 0, e, 1.0), 0.0).sum(axis=(1, 2))
    dof = used.sum(axis=1) - 1
    p = sps.chi2.sf(x2, np.maximum(dof, 1))
    return np.where((dof >= 1) & (row > 0).all(axis=1), p, np.nan)


def _g2_interaction_vec(T: np.ndarray, iters: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Likelihood-ratio G2 of the three-way interaction in many who x period x action tables
    (shape (N, 2, 2, k); who: the account / the rest of the field; period: before / after the
    change point): does the account's play change more than the field's does as the event
    moves on (blinds up, stacks short)? The no-three-way-interaction model is fitted by
    iterative proportional fitting (Deming & Stephan 1940; Bishop, Fienberg & Holland,
    *Discrete Multivariate Analysis*, 1975, ch. 3), action columns with no counts left out;
    dof = (actions used - 1). Returns (G2, dof), both 0 where a table has fewer than two
    actions or an empty who x period cell (no test; ``_g2_p``)."""
    T = np.asarray(T, dtype=float)
    used = T.sum(axis=(1, 2)) > 0  # (N, k)
    E = np.broadcast_to(used[:, None, None, :], T.shape).astype(float).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(iters):
            E *= (T.sum(axis=3) / np.maximum(E.sum(axis=3), 1e-300))[:, :, :, None]
            E *= (T.sum(axis=2) / np.maximum(E.sum(axis=2), 1e-300))[:, :, None, :]
            E *= (T.sum(axis=1) / np.maximum(E.sum(axis=1), 1e-300))[:, None, :, :]
        g2 = 2.0 * np.where(T > 0, T * np.log(np.where(T > 0, T, 1.0) / np.where(E > 0, E, 1.0)), 0.0).sum(axis=(1, 2, 3))
    dof = used.sum(axis=1) - 1
    ok = (dof >= 1) & ~(T.sum(axis=3) == 0).any(axis=(1, 2))
    return np.where(ok, np.maximum(g2, 0.0), 0.0), np.where(ok, dof, 0).astype(np.int64)


def _g2_p(g2: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """Chi-square tail of G2 statistics (summed over independent strata, dof added); NaN
    where there are no degrees of freedom."""
    g2, dof = np.asarray(g2, dtype=float), np.asarray(dof)
    return np.where(dof > 0, sps.chi2.sf(g2, np.maximum(dof, 1)), np.nan)


def _eff_n(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Effective size a*b/(a+b) of a two-sample comparison (the factor the variance of a
    difference of means scales with); 0 where a sample is empty."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((a > 0) & (b > 0), a * b / (a + b), 0.0)


def _prefix(bin_idx: np.ndarray, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """Cumulative sums over a flat array of bins (an account-event's bins are contiguous):
    the sum up to bin j of its event is cs[j] - cs[first bin of the event - 1]."""
    return np.cumsum(np.bincount(bin_idx, weights=weights, minlength=n_bins))


class SeatHandoffDetector(Detector):
    """Account, tournament and change-point hand of a mid-event seat hand-off."""

    kind = "seat_handoff"
    inputs = {**HAND_INPUTS, "sessions": ("account", "ip", "device", "login_at", "logout_at"),
              "decisions": ("hand_id", "seq", "account", "ms")}

    def __init__(
        self,
        *,
        alpha: float = 0.01,
        random_state: int = 0,
        min_segment: int = 8,
        min_before: int = 3,
        signal_p: float = 0.05,
        min_scan_hands: int = 30,
        max_scan: int = 200,
        known_device_p: float = 0.001,
        handover_s: float = 60.0,
        handover_p: float = 0.25,
        handover_p_raw: float = 0.1,
        repeat_p: float = 0.25,
        quick_s: float = 15.0,
        calibrate: bool = True,
        null_moves: int = 20000,
        null_events: int = 300,
        null_min_events: int = 20,
        null_jitter: int = 5,
        null_match: int = 1000,
        device_band: float = 1.5,
        use_range: bool = True,
        household_max: int = 4,
        two_places: bool = True,
        two_places_test: bool = True,
        hand_clock_s: float = 1.0,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.min_segment = min_segment  # hands needed after a change point (and each side of a scanned split)
        self.min_before = min_before  # hands needed before a login change point: the account's own
        # history outside the hand-off is the timing baseline, so a hand-off a few hands in is still tested
        self.signal_p = signal_p  # style and timing must each shift below this p
        self.min_scan_hands = min_scan_hands
        self.max_scan = max_scan  # hands only: account-events fully compared (strongest splits)
        self.known_device_p = known_device_p  # style p needed when the device is one the account already used
        self.handover_s = handover_s  # a hand-over: the login comes this soon after one of the account's logouts
        # combined (calibrated) p enough after a clean hand-over to a new device and network: an
        # honest quick mover's calibrated p is about uniform, so at most this share of them
        self.handover_p = handover_p
        # the same where there is no null to calibrate against (too few account-events, or
        # calibrate=False): the tests' own p-values are liberal, so the stricter level
        self.handover_p_raw = handover_p_raw
        # combined (calibrated) p enough when one take-over-only device took the seat in 2+ events,
        # with at least one behavioural test below signal_p (``threshold``); without a null the
        # raw level handover_p_raw. The share of simulated same-player moves that meet both: 22.8 %
        # over fourteen tuning populations (111,643 moves); no honest account of 7,521 there showed
        # the structure (95 % upper bound 4e-4), so about 1e-4 honest flags per account at most
        self.repeat_p = repeat_p
        self.quick_s = quick_s  # the structure-led rules (clean, repeated) need the login this soon after the logout
        # candidates' combined p ranked against this population's own simulated same-player moves
        self.calibrate = calibrate
        self.null_moves = null_moves  # simulated moves (Monte Carlo p-values resolve down to 1 / (1 + N))
        self.null_events = null_events  # account-events sampled to place them in
        self.null_min_events = null_min_events  # fewer eligible account-events: no null, raw p-values kept
        self.null_jitter = null_jitter  # a simulated move's hand: a candidate's, moved by up to this many hands
        self.null_match = null_match  # a candidate is ranked among this many moves of the nearest length
        # a device changes a person's speed by at most this factor either way: timing beyond it can
        # be another person's. Measured device effects on response times are of this order: the
        # same respondents took about 1.4 times as long on a smartphone as on a PC (randomised
        # crossover, Antoun & Cernat, Soc. Sci. Comput. Rev., 2019), item response times about
        # 1.2 times (Andreadis, methods, data, analyses 9(2), 2015)
        self.device_band = device_band
        # the style includes the range of starting hands entered and folded (``_range_p_many``)
        self.use_range = use_range
        # a home-sized network: at most this many accounts ever used it (a household; a carrier's
        # NAT, a cafe or an office has more)
        self.household_max = household_max
        # a quick clean hand-over with the "two places at once" structure (``_pool``) needs the
        # combined p only, not style and timing each to shift (False: the rule before, to measure)
        self.two_places = two_places
        # ... and at least one behavioural test (action mix, bet sizes, range, timing) below signal_p,
        # the evidence the case names (False: the structure and the combined p alone, to measure)
        self.two_places_test = two_places_test
        # hand histories give a hand's start in whole seconds: an event's last hand recorded at
        # 21:54:31 began at some time in [21:54:31, 21:54:32), so a login at 21:54:31.24 may
        # precede it. A login within this slack after the recorded start of an event's last hand
        # is inside the event's span (a take-over of its last hand), not a start of play of the
        # account's own (``dev_own``). 0: the recorded start taken as exact (the rule before)
        self.hand_clock_s = hand_clock_s

    # ------------------------------------------------------------------ fit
    def fit(self, con: duckdb.DuckDBPyConnection) -> "SeatHandoffDetector":
        """Learn the population's sessions and change points: each candidate change point in an
        account's event (a mid-event login from another device or network, or the scanned best split without
        sessions), its style, range and timing tests against the event's field and the account's own history,
        calibrated against the population's simulated same-player moves (computed here, as PyOD's
        ``decision_scores_``: :meth:`score` returns them).

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``has_sessions_``, ``has_decisions_``, ``has_logouts_``, ``cand_``, ``field_``, ``null_``,
        ``scores_`` and ``missing_``."""
        self.missing_ = []
        self.has_sessions_ = idf.table_rows(con, "sessions") > 0
        self.has_decisions_ = idf.table_rows(con, "decisions") > 0
        self.has_logouts_ = self.has_sessions_ and int(con.execute(
            "SELECT count(*) FROM sessions WHERE logout_at IS NOT NULL").fetchall()[0][0]) > 0
        if not self.has_sessions_:
            self.missing_.append("device and network changes (no sessions): change points scanned from play alone, "
                                 "ranked but never flagged (a player's own stack and table shift play as much)")
        if not self.has_decisions_:
            self.missing_.append("decision timing (no decisions)")
        self.scores_ = self._candidate_scores(con)
        return self

    # ------------------------------------------------------------------ candidates
    def _session_candidates(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """Logins during an account's play in an event from a device or network other
        than the one it started the event on (the last login before its first hand:
        an account may play several events at once, each with its own session)."""
        q = """
        WITH s AS (
          SELECT account, session, ip, device, login_at, logout_at,
                 """ + idf.NET_SQL + """ AS net
          FROM sessions
        ),
        s2 AS (
          SELECT *,
            login_at = min(login_at) OVER (PARTITION BY account, device) AS new_device,
            login_at = min(login_at) OVER (PARTITION BY account, net) AS new_net,
            count(*) OVER (PARTITION BY account, device) AS device_sessions,
            count(*) OVER (PARTITION BY account) AS account_sessions
          FROM s
        ),
        -- how many distinct accounts ever used each network (a home's few, a carrier's NAT or a
        -- cafe's many), and on how many distinct days each account used each of its networks: the
        -- "two places at once" structure (``_pool``: a seat left from the account's own home-sized
        -- network, taken on another home-sized one)
        net_acc AS (
          SELECT net, count(DISTINCT account) AS net_accounts FROM s WHERE net IS NOT NULL GROUP BY ALL
        ),
        acc_net_days AS (
          SELECT account, net, count(DISTINCT CAST(login_at AS DATE)) AS net_days
          FROM s WHERE net IS NOT NULL AND login_at IS NOT NULL GROUP BY ALL
        ),
        acct AS (
          SELECT s.player AS account, h.tournament_id,
                 min(h.started_at) AS t_first, max(h.started_at) AS t_last, count(*) AS n_hands
          FROM seats s JOIN hands h USING (hand_id)
          WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND NOT s.sitting_out
          GROUP BY ALL
        ),
        init AS (
          SELECT acct.account, acct.tournament_id,
                 arg_max(s2.device, s2.login_at) AS dev0, arg_max(s2.net, s2.login_at) AS net0,
                 arg_max(s2.logout_at, s2.login_at) AS logout0
          FROM acct JOIN s2 ON s2.account = acct.account AND s2.login_at <= acct.t_first
          GROUP BY ALL
        ),
        -- the session of the account that logged out last, at most handover_s before a login:
        -- the one a hand-over replaces (an account in several events at once has several
        -- sessions, and the last login before the event's first hand need not be the one
        -- that played it)
        ho AS (
          SELECT y.account, y.session,
                 arg_max(x.device, x.logout_at) AS ho_dev, arg_max(x.net, x.logout_at) AS ho_net
          FROM s y JOIN s x ON x.account = y.account AND x.session <> y.session
           AND x.logout_at <= y.login_at AND x.logout_at >= y.login_at - to_microseconds(CAST(? * 1e6 AS BIGINT))
          GROUP BY ALL
        ),
        c0 AS (
          SELECT acct.account, acct.tournament_id, s2.session, s2.login_at, s2.device, s2.ip, s2.net,
                 s2.new_device AS first_login_of_device,
                 s2.new_net, s2.device_sessions, s2.account_sessions, acct.n_hands,
                 init.dev0, init.net0, ho.ho_dev, ho.ho_net,
                 -- a hand-over: the session the account started the event on is closed by then (a
                 -- login while it stays open is the owner opening another table elsewhere, not
                 -- someone taking this seat); without logout times every such login counts
                 (init.logout0 IS NULL OR init.logout0 <= s2.login_at + INTERVAL 60 SECOND)
                   AND (s2.device IS DISTINCT FROM init.dev0 OR s2.net IS DISTINCT FROM init.net0) AS from_start,
                 -- ... or it replaces, within handover_s, a session on another device or network
                 -- that has just logged out (the owner's other sessions may stay open)
                 ho.ho_dev IS NOT NULL
                   AND (s2.device IS DISTINCT FROM ho.ho_dev OR s2.net IS DISTINCT FROM ho.ho_net) AS from_logout
          FROM acct JOIN init USING (account, tournament_id)
          JOIN s2 ON s2.account = acct.account AND s2.login_at > acct.t_first
           AND (s2.login_at <= acct.t_last OR s2.login_at < acct.t_last + to_microseconds(CAST(? * 1e6 AS BIGINT)))
          LEFT JOIN ho ON ho.account = s2.account AND ho.session = s2.session
        ),
        c AS (
          SELECT account, tournament_id, session, login_at, device, ip,
                 CASE WHEN from_start THEN dev0 ELSE ho_dev END AS prev_device,
                 CASE WHEN from_start THEN net0 ELSE ho_net END AS prev_net, net,
                 device IS DISTINCT FROM CASE WHEN from_start THEN dev0 ELSE ho_dev END AS device_changed,
                 net IS DISTINCT FROM CASE WHEN from_start THEN net0 ELSE ho_net END AS net_changed,
                 first_login_of_device, new_net, device_sessions, account_sessions, n_hands
          FROM c0 WHERE from_start OR from_logout
        ),
        -- a device is new to the account when its first login was itself such a take-over (in this
        -- event or an earlier one), not the owner's own start of play
        new_dev AS (
          SELECT DISTINCT account, device FROM c WHERE first_login_of_device
        ),
        -- the account's other sessions still open at the login (its owner still at
        -- another table), and the seconds since its last logout
        oth AS (
          SELECT c.account, c.session,
                 count(*) FILTER (WHERE x.logout_at > c.login_at + INTERVAL 60 SECOND) AS others_open,
                 min(epoch(c.login_at) - epoch(x.logout_at)) FILTER (WHERE x.logout_at <= c.login_at) AS since_logout
          FROM c JOIN s x ON x.account = c.account AND x.session <> c.session AND x.login_at < c.login_at
          GROUP BY ALL
        ),
        -- the sessions of each of the account's devices that start play of its own: logins outside
        -- every span of the account's tournament play (before an event's first hand, for cash
        -- tables), not in mid-event (a take-over, or a reconnect of the device holding the seat)
        dev_own AS (
          SELECT s2.account, s2.device, count(*) AS dev_own_sessions
          FROM s2 LEFT JOIN acct ON acct.account = s2.account AND s2.login_at > acct.t_first
           AND (s2.login_at <= acct.t_last OR s2.login_at < acct.t_last + to_microseconds(CAST(? * 1e6 AS BIGINT)))
          WHERE acct.account IS NULL AND s2.device IS NOT NULL
          GROUP BY ALL
        ),
        -- every quick hand-over login of each of the account's devices (within quick_s of a
        -- logout, from another device), those too short to test included: the structure of
        -- a helper's machine is judged on all its logins, not only on the tested ones
        dev_ho AS (
          SELECT c.account, c.device,
                 count(DISTINCT c.session) AS dev_quick_takeovers,
                 bool_or(c.new_net) AS dev_takeover_new_net
          FROM c JOIN oth o ON o.account = c.account AND o.session = c.session
          WHERE c.device IS NOT NULL AND c.device_changed AND o.since_logout <= ?
          GROUP BY ALL
        )
        SELECT c.*, nd.device IS NOT NULL AS new_device,
               coalesce(o.others_open, 0) AS others_open, o.since_logout,
               coalesce(dh.dev_quick_takeovers, 0) AS dev_quick_takeovers,
               coalesce(dh.dev_takeover_new_net, FALSE) AS dev_takeover_new_net,
               coalesce(dow.dev_own_sessions, 0) AS dev_own_sessions,
               na.net_accounts, pna.net_accounts AS prev_net_accounts, coalesce(pnd.net_days, 0) AS prev_net_days
        FROM c LEFT JOIN new_dev nd ON nd.account = c.account AND nd.device IS NOT DISTINCT FROM c.device
        LEFT JOIN net_acc na ON na.net = c.net
        LEFT JOIN net_acc pna ON pna.net = c.prev_net
        LEFT JOIN acc_net_days pnd ON pnd.account = c.account AND pnd.net = c.prev_net
        LEFT JOIN dev_own dow ON dow.account = c.account AND dow.device = c.device
        LEFT JOIN oth o ON o.account = c.account AND o.session = c.session
        LEFT JOIN dev_ho dh ON dh.account = c.account AND dh.device = c.device
        ORDER BY c.account, c.tournament_id, c.login_at
        """
        clock = float(self.hand_clock_s)
        return con.sql(q, params=[float(self.handover_s), clock, clock, float(self.quick_s)]).pl()

    def _scan_candidates(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        q = """
        SELECT s.player AS account, h.tournament_id, count(*) AS n_hands
        FROM seats s JOIN hands h USING (hand_id)
        WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND NOT s.sitting_out
        GROUP BY ALL HAVING count(*) >= ?
        """
        return con.sql(q, params=[self.min_scan_hands]).pl()

    # ------------------------------------------------------------------ score
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The candidate change points' scores (computed by :meth:`fit`, as PyOD's ``decision_scores_``).

        Returns one row per account-event (its strongest change point, ``cand`` its index): the tests'
        p-values, the combined ``p_value`` (calibrated against the population's simulated same-player
        moves where sessions allow), ``q_value`` (Benjamini-Hochberg over the rows) and ``score``."""
        return self.scores_.clone()

    def _candidate_scores(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The rows of :meth:`score` (sets ``cand_``, ``field_``, ``null_``, ``null_after_``, ``null_parts_``)."""
        if self.has_sessions_:
            cand = self._session_candidates(con)
        else:
            cand = self._scan_candidates(con)
        self.cand_ = cand
        out_schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64,
                      "p_value": pl.Float64}
        self.null_ = np.zeros(0)
        if cand.height == 0:
            return pl.DataFrame(schema=out_schema)
        # the account-events the population's simulated same-player moves are placed in (their
        # data come with the candidates', one pass over the tables)
        null_ev = (self._null_events(con, cand.select("account", "tournament_id"))
                   if self.has_sessions_ and self.calibrate else pl.DataFrame(schema={"account": pl.Utf8, "tournament_id": pl.Utf8}))
        con.register("_rb_at", pl.concat([cand.select("account", "tournament_id"), null_ev], how="vertical_relaxed").unique())
        hands = _with_strength(con.sql(_HAND_ROWS_SQL).pl()).sort("account", "tournament_id", "started_at", "hand_id")
        dec = con.sql(_DECISIONS_SQL).pl() if self.has_decisions_ else None
        hist = _with_strength(con.sql(_HISTORY_SQL).pl())
        field = con.sql(_FIELD_SQL).pl().sort("tournament_id", "started_at")
        self.field_ = {k[0]: (g["started_at"].to_numpy(), g["account"].to_numpy(),
                              g.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float))
                       for k, g in field.partition_by(["tournament_id"], as_dict=True).items()}
        hist_dec = None
        if self.has_decisions_:
            hist_dec = con.sql(_TIMING_SQL).pl()
        con.unregister("_rb_at")

        by_at = {k: g for k, g in hands.partition_by(["account", "tournament_id"], as_dict=True).items()}
        dec_at = {k: g for k, g in dec.partition_by(["account", "tournament_id"], as_dict=True).items()} if dec is not None else {}
        hist_by_acc = {k[0]: g for k, g in hist.partition_by(["account"], as_dict=True).items()}
        hdec_by_acc = {k[0]: g for k, g in hist_dec.partition_by(["account"], as_dict=True).items()} if hist_dec is not None else {}

        plans = []
        for c in cand.iter_rows(named=True):
            key = (c["account"], c["tournament_id"])
            h = by_at.get(key)
            # a login change point needs min_before hands before it and min_segment after it;
            # a scanned split min_segment on each side
            if h is None or h.height < (self.min_before if self.has_sessions_ else self.min_segment) + self.min_segment:
                continue
            t = h["started_at"].to_numpy()
            counts = h.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)
            if self.has_sessions_:
                k = int(np.searchsorted(t, np.datetime64(c["login_at"], "us"), side="left"))
                n_splits, stat = 1, 0.0
            else:
                k, n_splits, stat = self._best_split(counts)
            if k < (self.min_before if self.has_sessions_ else self.min_segment) or h.height - k < self.min_segment:
                continue
            plans.append((stat, c, key, h, k, counts, n_splits))
        if not self.has_sessions_:
            # hands only: the full comparison for the strongest splits only
            plans = sorted(plans, key=lambda x: -x[0])[: self.max_scan]
        rows: list[dict[str, Any]] = []
        for _, c, key, h, k, counts, n_splits in plans:
            r = self._compare(c, h, k, counts, dec_at.get(key), hist_by_acc.get(c["account"]),
                              hdec_by_acc.get(c["account"]))
            r["n_splits"] = n_splits
            rows.append(r)
        if not rows:
            return pl.DataFrame(schema=out_schema)
        rows = self._test(rows)
        if self.has_sessions_:
            rows = self._one_seat_per_login(rows)
        rows = self._pool(rows)
        df = pl.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
        p_style = idf.fisher_combine(np.column_stack([df["p_mix_any"].to_numpy(), df["p_size"].to_numpy()]
                                                     + ([df["p_range"].to_numpy()] if self.use_range else [])))
        # the style as the event's field sees it (no own-history look): what a login from a
        # device the account already used must clear on its own
        p_style_field = idf.fisher_combine(np.column_stack([df["p_mix"].to_numpy(), df["p_size"].to_numpy()]))
        p_time = df["p_time"].to_numpy().astype(float)
        p_all = idf.fisher_combine(np.column_stack([p_style, p_time]))
        # scanned split points: Bonferroni over the splits tried
        p_all = np.minimum(1.0, p_all * df["n_splits"].to_numpy())
        p_raw = p_all
        self.null_ = np.zeros(0)
        if self.has_sessions_ and self.calibrate:
            # the tests' p-values are not uniform for a player who carries on (speed and game
            # drift between sessions and stages): each candidate's combined p is ranked against
            # the population's own simulated same-player device moves (Monte Carlo p-value)
            self.null_, self.null_after_ = self._population_null(
                null_ev, np.array([pl_[4] for pl_ in plans], dtype=np.int64), hands, hist, field, hist_dec)
            if self.null_.size:
                # the tests' effective sample size (actions after the point against the account's own
                # history, pooled over a device's events): a drift that is no other person grows
                # more significant with more data, so a candidate is ranked among simulated moves
                # with about as much
                after = _eff_n(df["n_act_after"].to_numpy(), df["n_act_hist"].to_numpy())
                # never below the tests' own p: where the tests are conservative for this
                # population (p-values above uniform) the rank alone would make them laxer; the
                # larger of two p-values is valid when either one is
                p_all = np.maximum(p_raw, self._matched_rank(p_raw, after))
            else:
                self.missing_.append("a simulated null (too few account-events without a mid-event login): "
                                     "the tests' own p-values are used uncalibrated")
        novelty = (df["new_device"].cast(pl.Int8).to_numpy() + df["new_net"].cast(pl.Int8).to_numpy())
        df = df.with_columns(
            p_style=pl.Series(p_style),
            p_style_field=pl.Series(p_style_field),
            p_value=pl.Series(p_all),
            p_value_raw=pl.Series(p_raw),
            n_null=pl.lit(int(min(self.null_.size, self.null_match))),
            novelty=pl.Series(novelty),
        ).with_columns(
            # ranked by the tests' own p (finer than the calibrated one's 1 / (1 + N) steps)
            score=(-pl.col("p_value_raw").clip(1e-300, 1).log10() + 2.0 * pl.col("novelty")),
            accounts=pl.concat_list("account"),
            tournaments=pl.concat_list("tournament_id"),
        )
        # one row per account-tournament: its strongest change point
        df = df.sort("score", descending=True).unique(["account", "tournament_id"], keep="first", maintain_order=True)
        return df.with_row_index("cand").with_columns(pl.col("cand").cast(pl.Int64),
                                                      q_value=pl.Series(idf.benjamini_hochberg(df["p_value"].to_numpy())))

    # ------------------------------------------------------------------ the population's own null
    def _matched_rank(self, p: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Monte Carlo p-value of each candidate's combined ``p`` among the ``null_match``
        simulated moves nearest to it in (log) effective sample size ``after`` (``_eff_n``):
        (1 + #moves with a combined p at most the candidate's) / (1 + #moves compared). A
        player's drift between days is a fixed shift, so the tests find it the more
        significant the more data they have; ranked against all moves, an honest mover with a
        long event and a long history would look extreme against mostly smaller samples (a
        conditional Monte Carlo test, Davison & Hinkley 1997, ch. 4.2, matched on a nuisance
        statistic)."""
        la = np.log(np.maximum(self.null_after_, 1.0))
        o = np.argsort(la, kind="stable")
        la, pn = la[o], self.null_[o]
        n = la.size
        m = int(min(n, self.null_match))
        pos = np.searchsorted(la, np.log(np.maximum(after, 1.0)))
        lo = np.clip(pos - m // 2, 0, n - m)
        out = np.empty(p.size)
        for i in range(p.size):  # one slice per candidate, not per action
            out[i] = (1.0 + np.count_nonzero(pn[lo[i]:lo[i] + m] <= p[i])) / (1.0 + m)
        return out

    def _null_events(self, con: duckdb.DuckDBPyConnection, exclude: pl.DataFrame) -> pl.DataFrame:
        """A seeded sample of account-events (at least min_before + min_segment hands) of
        accounts with no candidate login at all, to place the simulated moves in: an account
        whose seat was taken in another event would carry the helper's play in its own
        history and make its simulated moves look like hand-offs."""
        ev = con.sql(
            """SELECT s.player AS account, h.tournament_id, count(*) AS n_hands
               FROM seats s JOIN hands h USING (hand_id)
               WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND NOT s.sitting_out
               GROUP BY ALL HAVING count(*) >= ? ORDER BY ALL""",
            params=[self.min_before + self.min_segment]).pl()
        ev = ev.join(exclude.select("account").unique(), on="account", how="anti")
        if ev.height < self.null_min_events:
            return ev.clear().select("account", "tournament_id")
        if ev.height > self.null_events:
            rng = np.random.default_rng(self.random_state)
            ev = ev[np.sort(rng.choice(ev.height, self.null_events, replace=False))]
        return ev.select("account", "tournament_id")

    def _population_null(self, ev: pl.DataFrame, ks: np.ndarray, hands: pl.DataFrame, hist: pl.DataFrame,
                         field: pl.DataFrame, tim: pl.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
        """Combined p-values of simulated same-player device moves in this population
        (an empirical null, Efron, JASA 99, 2004): pseudo change points at seeded random
        hands of account-events without a mid-event login, at the hand positions the real
        candidates have (``ks``), each put through the same tests as a candidate whose
        device the account never used (timing and action mix after the point against all
        the account's other play; action mix against the field; bet sizes before/after),
        vectorised over the points by prefix sums. Under the null the same player plays on,
        so a candidate's rank among these is a Monte Carlo p-value (Davison & Hinkley,
        *Bootstrap Methods and their Application*, 1997, ch. 4): (1 + #null at least as
        extreme) / (1 + N). The tests' own p-values are not uniform here (a player's speed
        and game drift between sessions and stages more than within one), which is what
        this corrects. Returns each simulated move's combined p and its effective sample size
        (actions after the point against those of the account's history: the candidates are
        ranked among the moves of a similar size, ``_matched_rank``)."""
        rng = np.random.default_rng(self.random_state + 1)
        none = (np.zeros(0), np.zeros(0))
        if ev.height == 0 or ks.size == 0:
            return none
        # (the data come from the candidates' own queries, run once over both sets)
        hands = hands.join(ev, on=["account", "tournament_id"], how="semi")
        hist = hist.join(ev.select("account").unique(), on="account", how="semi")
        field = field.join(ev.select("tournament_id").unique(), on="tournament_id", how="semi")
        if tim is not None:
            tim = tim.join(ev.select("account").unique(), on="account", how="semi")
        if hands.height == 0:
            return none
        # account-events in a fixed order; each has n_e hands and n_e + 1 bins (bin j + 1: hand j;
        # an element before hand k lies in bins 0..k)
        hands = hands.sort("account", "tournament_id", "started_at", "hand_id")
        evs = hands.select("account", "tournament_id").unique(maintain_order=True).with_row_index("e")
        hands = hands.join(evs, on=["account", "tournament_id"], how="left").with_columns(
            j=pl.int_range(pl.len()).over("e"), ts=pl.col("started_at").dt.epoch("us"))
        n_e = hands.group_by("e").len().sort("e")["len"].to_numpy().astype(np.int64)
        E = evs.height
        boff = np.concatenate([[0], np.cumsum(n_e + 1)[:-1]]).astype(np.int64)
        nb = int((n_e + 1).sum())
        e_h, j_h = hands["e"].to_numpy().astype(np.int64), hands["j"].to_numpy().astype(np.int64)
        hbin = boff[e_h] + j_h + 1
        hoff = np.concatenate([[0], np.cumsum(n_e)[:-1]]).astype(np.int64)  # first hand row of each event
        ts_h = hands["ts"].to_numpy()

        # the moves: hand positions drawn from the real candidates', each in an event long enough
        # (each drawn position moved by up to null_jitter hands, so one event gives several
        # distinct splits; a split drawn twice counts once)
        n_moves = int(self.null_moves)
        kk = np.maximum(rng.choice(ks, n_moves) + rng.integers(-self.null_jitter, self.null_jitter + 1, n_moves),
                        self.min_before)
        order = np.argsort(n_e, kind="stable")
        lo = np.searchsorted(n_e[order], kk + self.min_segment, side="left")
        okm = lo < E
        kk, lo = kk[okm], lo[okm]
        me = order[lo + np.floor(rng.random(kk.size) * (E - lo)).astype(np.int64)]
        if kk.size == 0:
            return none
        width = int(n_e.max()) + 1
        pairs = np.unique(me * width + kk)
        me, kk = pairs // width, pairs % width
        N = kk.size
        cp = ts_h[hoff[me] + kk]

        def before(cs: np.ndarray, k: np.ndarray) -> np.ndarray:
            csz = np.concatenate([[0.0], cs])
            return csz[boff[me] + k + 1] - csz[boff[me]]

        # action counts before / after
        X = hands.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)
        cb = np.column_stack([before(_prefix(hbin, X[:, i], nb), kk) for i in range(len(ACTS))])
        ct = np.column_stack([before(_prefix(hbin, X[:, i], nb), n_e[me]) for i in range(len(ACTS))])
        ca = ct - cb
        # the field's counts before / after the point, the account's own left out
        tid_codes = {t: i for i, t in enumerate(field["tournament_id"].unique().sort().to_list())}
        field = field.with_columns(tc=pl.col("tournament_id").replace_strict(tid_codes, return_dtype=pl.Int64),
                                   ts=pl.col("started_at").dt.epoch("us"))
        t0 = int(min(field["ts"].min(), ts_h.min()))
        span = int(max(field["ts"].max(), ts_h.max())) - t0 + 2
        field = field.with_columns(key=pl.col("tc") * span + (pl.col("ts") - t0)).sort("key")
        fkey = field["key"].to_numpy()
        FX = field.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)
        fcs = np.vstack([np.zeros((1, len(ACTS))), np.cumsum(FX, axis=0)])
        mtc = np.array([tid_codes.get(t, -1) for t in evs["tournament_id"].to_list()], dtype=np.int64)[me]
        i0 = np.searchsorted(fkey, mtc * span, side="left")
        i1 = np.searchsorted(fkey, mtc * span + (cp - t0), side="left")
        i2 = np.searchsorted(fkey, (mtc + 1) * span, side="left")
        fb = fcs[i1] - fcs[i0] - cb
        fa = fcs[i2] - fcs[i1] - ca
        p_mix = _g2_p(*_g2_interaction_vec(np.stack([np.stack([cb, ca], axis=1), np.stack([fb, fa], axis=1)], axis=1)))
        # after-segment against the account's own tournament hands outside it
        htot = hist.group_by("account").agg([pl.col(f"n_{a}").sum() for a in ACTS])
        hc = (evs.join(htot, on="account", how="left").sort("e")
              .select([f"n_{a}" for a in ACTS]).fill_null(0).to_numpy().astype(float))[me] - ca
        p_hist = np.where(hc.sum(axis=1) >= 20, _chi2_p_vec(hc, ca), np.nan)
        # bet sizes before / after (within the event)
        sz = hands.select("e", "j", "sizes").explode("sizes").drop_nulls("sizes").filter(pl.col("sizes").is_not_nan())
        e_s, j_s, v_s = sz["e"].to_numpy().astype(np.int64), sz["j"].to_numpy().astype(np.int64), sz["sizes"].to_numpy().astype(float)
        r_s, tie_s = _midranks(e_s, v_s)
        tie_s = np.concatenate([tie_s, np.zeros(max(0, E + 1 - tie_s.size))])
        sbin = boff[e_s] + j_s + 1
        cn, cr = _prefix(sbin, np.ones(e_s.size), nb), _prefix(sbin, r_s, nb)
        na = before(cn, n_e[me]) - before(cn, kk)
        p_size = _mwu_p_vec(before(cn, kk), na, before(cr, kk) - before(cn, kk) * (before(cn, kk) + 1) / 2, tie_s[me])
        # the entry decisions by the cards after the point against all the account's other
        # tournament hands (``_range_p_many``): the after-segment's counts per stratum by prefix
        # sums, the baseline's the account's totals less them
        p_range = np.full(N, np.nan)
        if self.use_range:
            S = _N_STRATA
            rs, rc = hands["rstr"].to_numpy().astype(np.int64), hands["rcls"].to_numpy().astype(np.int64)
            a, a1, a2 = np.zeros((N, S)), np.zeros((N, S)), np.zeros((N, S))
            for st_ in np.unique(rs[rs >= 0]):
                for arr, sel in ((a, rs == st_), (a1, (rs == st_) & (rc >= 1)), (a2, (rs == st_) & (rc == 2))):
                    cs_ = _prefix(hbin, sel.astype(float), nb)
                    arr[:, st_] = before(cs_, n_e[me]) - before(cs_, kk)
            acc_list = evs["account"].to_list()
            acc_codes_r = {x: i for i, x in enumerate(sorted(set(acc_list)))}
            hh = hist.filter(pl.col("rcls") >= 0)
            ha = np.array([acc_codes_r.get(x, -1) for x in hh["account"].to_list()], dtype=np.int64)
            okh = ha >= 0
            nacc = len(acc_codes_r)
            idx = ha[okh] * S + hh["rstr"].to_numpy().astype(np.int64)[okh]
            hc_ = hh["rcls"].to_numpy()[okh]
            T = np.bincount(idx, minlength=nacc * S).reshape(nacc, S).astype(float)
            T1 = np.bincount(idx, weights=(hc_ >= 1).astype(float), minlength=nacc * S).reshape(nacc, S)
            T2 = np.bincount(idx, weights=(hc_ == 2).astype(float), minlength=nacc * S).reshape(nacc, S)
            am = np.array([acc_codes_r[x] for x in acc_list], dtype=np.int64)[me]
            p_range = _range_p_counts(a, a1, a2, np.maximum(T[am] - a, 0.0), np.maximum(T1[am] - a1, 0.0),
                                      np.maximum(T2[am] - a2, 0.0))
        # decision timing after the point against all the account's other decisions: the timing
        # test of a candidate's login (the device-invariant one, ``_test``) on each move's own samples
        p_time = np.full(N, np.nan)
        if tim is not None and tim.height:
            acc_codes = {a: i for i, a in enumerate(sorted(set(tim["account"].to_list())))}
            # the decisions in the sampled events, placed by the hands before them
            te = tim.with_row_index("row").join(evs, on=["account", "tournament_id"], how="inner")
            e_t = te["e"].to_numpy().astype(np.int64)
            ts_t = te["started_at"].dt.epoch("us").to_numpy()
            # hands of event e are ts_h[hoff[e]:hoff[e]+n_e[e]]; count those at or before each decision
            key_h = e_h.astype(np.int64) * span + (ts_h - t0)
            pos = np.searchsorted(key_h, e_t.astype(np.int64) * span + (ts_t - t0), side="right") - hoff[e_t]
            acc_m = np.array([acc_codes.get(a, -1) for a in evs["account"].to_list()], dtype=np.int64)[me]
            p_time = self._null_device_time(tim, te, e_t, pos, acc_codes, acc_m, me, kk, width)
        # the same combination as the candidates' (score)
        pm = np.column_stack([p_mix, p_hist])
        nm = (~np.isnan(pm)).sum(axis=1)
        p_mix_any = np.where(nm > 0, np.minimum(1.0, nm * np.nanmin(np.where(np.isnan(pm), np.inf, pm), axis=1)), np.nan)
        p_style = idf.fisher_combine(np.column_stack([p_mix_any, p_size] + ([p_range] if self.use_range else [])))
        p_all = idf.fisher_combine(np.column_stack([p_style, p_time]))
        self.null_parts_ = {"p_mix": p_mix, "p_hist_mix": p_hist, "p_size": p_size, "p_time": p_time, "p_value": p_all,
                            "p_range": p_range, "p_style": p_style,
                            "account": evs["account"].to_numpy()[me], "tournament_id": evs["tournament_id"].to_numpy()[me],
                            "k": kk, "n_eff": _eff_n(ca.sum(axis=1), hc.sum(axis=1))}
        return p_all, _eff_n(ca.sum(axis=1), hc.sum(axis=1))

    def _null_device_time(self, tim: pl.DataFrame, te: pl.DataFrame, e_t: np.ndarray, pos: np.ndarray,
                          acc_codes: dict, acc_m: np.ndarray, me: np.ndarray, kk: np.ndarray, width: int,
                          chunk: int = 500) -> np.ndarray:
        """``_device_time_many`` for the simulated moves of the population's null: each move's
        decisions after its split (its event, hands from ``kk`` on) against the account's other
        decisions, built as explicit samples a chunk of moves at a time (the test removes each
        move's own common shift: no prefix sums). NaN where the account has no decisions."""
        N = me.size
        out = np.full(N, np.nan)
        if N == 0 or te.height == 0:
            return out
        lm = tim["log_ms"].to_numpy().astype(float)
        cl = tim["cls"].to_numpy().astype(np.int64)
        acc_all = np.array([acc_codes[a] for a in tim["account"].to_list()], dtype=np.int64)
        by_acc = np.argsort(acc_all, kind="stable")
        acc_lo = np.searchsorted(acc_all[by_acc], np.arange(len(acc_codes)), side="left")
        acc_hi = np.searchsorted(acc_all[by_acc], np.arange(len(acc_codes)), side="right")
        # the sampled events' decisions ordered by (event, hands before them)
        W = int(width) + 2
        rows_t = te["row"].to_numpy()
        key = e_t.astype(np.int64) * W + pos.astype(np.int64)
        o = np.argsort(key, kind="stable")
        key, rows_o = key[o], rows_t[o]
        a0 = np.searchsorted(key, me * W + kk, side="right")  # decisions on hands kk.. of the move's event
        a1 = np.searchsorted(key, (me + 1) * W, side="left")
        mask = np.zeros(lm.size, bool)
        band = math.log(self.device_band)
        for s0 in range(0, N, chunk):
            idx = range(s0, min(N, s0 + chunk))
            xa, ca, xb, cb, keep = [], [], [], [], []
            for i in idx:
                if acc_m[i] < 0:
                    continue
                after = rows_o[a0[i]:a1[i]]
                own = by_acc[acc_lo[acc_m[i]]:acc_hi[acc_m[i]]]
                mask[after] = True
                base = own[~mask[own]]
                mask[after] = False
                xa.append(lm[after]), ca.append(cl[after]), xb.append(lm[base]), cb.append(cl[base]), keep.append(i)
            if keep:
                out[np.array(keep)] = _device_time_many(xa, ca, xb, cb, band)["p"]
        return out

    @staticmethod
    def _one_seat_per_login(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One login takes one seat: an account in several events at once has its
        hand-over login fall inside each of them, but the person logging in takes over
        the seat that was left, and the owner plays on in the others. Keep the login for
        the event whose own play shifts most (Fisher's method over that event's action
        mix, bet sizes and timing, before any pooling), among the events where the device
        does not hold the seat already; counting it in every event would pool the
        owner's own play into the helper's sample and accuse the owner's other events."""
        def own_p(r: dict[str, Any]) -> float:
            ps = [p for p in (r["p_mix"], r["p_hist_mix"]) if not math.isnan(p)]
            mix = min(1.0, len(ps) * min(ps)) if ps else float("nan")
            return float(idf.fisher_combine(np.array([[mix, r["p_size"], r["p_time"], r["p_range"]]]))[0])
        best: dict[tuple, dict[str, Any]] = {}
        out = []
        # a device already holding the seat in an event (an earlier take-over there) changes
        # nothing in it when it logs in again: that login took another seat
        holding: dict[tuple, set] = {}
        for r in sorted(rows, key=lambda x: x["cp_time"]):
            if r.get("session") is None:
                out.append(r)
                continue
            held = holding.setdefault((r["account"], r["tournament_id"]), set())
            if r["device"] in held:
                continue
            held.add(r["device"])
            key = (r["account"], r["session"])
            r["_own_p"] = own_p(r)
            if key not in best or r["_own_p"] < best[key]["_own_p"]:
                best[key] = r
        return out + list(best.values())

    def _pool(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Pool the before/after samples of one account's mid-event logins from the
        same device: a helper who takes the seat in several events brings the
        same machine each time, and the pooled test has the power a single
        short event lacks. Per-event figures stay in ``*_event`` columns."""
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for r in rows:
            key = (r["account"], r["device"]) if self.has_sessions_ and r["device"] is not None else (id(r),)
            groups.setdefault(key, []).append(r)
        for g in groups.values():
            for r in g:
                for k in ("p_mix", "p_size", "p_time", "p_range"):
                    r[k + "_event"] = r[k]
                r["n_pooled"] = len(g)
                r["pooled_tournaments"] = sorted({x["tournament_id"] for x in g})
                # a device that also starts play of its own on the account (a login outside its
                # mid-event spans, before or after this one) is its owner's machine, however it
                # first appeared: an owner's desktop first logged in to continue an event begun
                # on the phone, a helper's machine only ever takes the seat
                r["owner_device"] = any(int(x.get("dev_own_sessions") or 0) > 0 for x in g)
                r["group_new_device"] = any(x["new_device"] for x in g) and not r["owner_device"]
                # the device only ever logged in to take this account's seat mid-event: every one
                # of its sessions on the account is one of these hand-overs, each within
                # quick_s of a logout, in two or more events, on a device and a network the
                # account had never used before the first of them
                since = [x["since_logout"] for x in g]
                # (counted over all the device's quick hand-over logins, also those followed by
                # too few hands to be tested: a helper who busts soon after one take-over still
                # brought the same machine)
                n_quick = max(int(x.get("dev_quick_takeovers") or 0) for x in g)
                r["takeover_only"] = bool(
                    self.has_sessions_ and r["device"] is not None
                    and all(v is not None and v <= self.quick_s for v in since)
                    and all(x["device_changed"] for x in g)
                    and r["group_new_device"]
                    and (any(x["new_net"] for x in g) or any(bool(x.get("dev_takeover_new_net")) for x in g))
                    and max(len({x["session"] for x in g}), n_quick) >= max(2, max(x["device_sessions"] for x in g)))
                # two places at once: the seat was left from the account's own home (a network few
                # accounts ever used, one it used on two days or more) and taken seconds later on
                # another home-sized network, by a device that never starts play of its own: the
                # owner cannot be at both homes; an owner's move goes from a carrier's network (used
                # by many) to his home, or keeps a place he uses
                hm = self.household_max
                r["login_two_places"] = bool(
                    r.get("prev_net") is not None and r.get("net") is not None and r["net"] != r["prev_net"]
                    and r.get("prev_net_accounts") is not None and r["prev_net_accounts"] <= hm
                    and int(r.get("prev_net_days") or 0) >= 2
                    and r.get("net_accounts") is not None and r["net_accounts"] <= hm)
                r["two_places"] = bool(r["login_two_places"] and r["device"] is not None and not r["owner_device"])
                # the sample sizes the tests see: actions after the change point (pooled) and in
                # the account's own history under other devices (one baseline for the device)
                r["n_act_after"] = float(sum(x["_ca"].sum() for x in g))
                r["n_act_hist"] = float(max(x["_hc"].sum() for x in g))
        # the pooled tests of each device seen in two or more events, all devices at once
        multi = [g for g in groups.values() if len(g) >= 2]
        if multi:
            # events are independent strata: their interaction statistics add up
            p_mix = _g2_p([sum(r["_g2"] for r in g) for g in multi], [sum(r["_dof"] for r in g) for g in multi])
            p_size = _mwu_p_many([np.concatenate([r["_sb"] for r in g]) for g in multi],
                                 [np.concatenate([r["_sa"] for r in g]) for g in multi])
            # timing against the account's own decisions under other devices where it has any (the
            # same account and device: one baseline, the largest), else after against before
            has_tb = np.array([any(r["_tb"].size for r in g) for g in multi])
            tbase = [max(g, key=lambda r: r["_tb"].size) for g in multi]
            p_strat = _strat_mwu_many([np.concatenate([r["_ta"] for r in g]) for g in multi],
                                      [np.concatenate([r["_cta"] for r in g]) for g in multi],
                                      [b["_tb"] for b in tbase], [b["_ctb"] for b in tbase])
            p_in = _mwu_p_many([np.concatenate([r["_xb"] for r in g]) for g in multi],
                               [np.concatenate([r["_xa"] for r in g]) for g in multi])
            p_time = np.where(has_tb, p_strat, p_in)
            if self.has_sessions_:
                # logins: the device-invariant test (``_test``)
                p_time = _device_time_many([np.concatenate([r["_ta"] for r in g]) for g in multi],
                                           [np.concatenate([r["_cta"] for r in g]) for g in multi],
                                           [b["_tb"] for b in tbase], [b["_ctb"] for b in tbase],
                                           math.log(self.device_band))["p"]
            rbase = [max(g, key=lambda r: r["_rb"].size) for g in multi]
            p_range = (_range_p_many([np.concatenate([r["_ra"] for r in g]) for g in multi],
                                     [np.concatenate([r["_cra"] for r in g]) for g in multi],
                                     [b["_rb"] for b in rbase], [b["_crb"] for b in rbase])
                       if self.use_range else np.full(len(multi), np.nan))
            hbase = np.stack([max(g, key=lambda r: r["_hc"].sum())["_hc"] for g in multi])
            p_hist_mix = np.where(hbase.sum(axis=1) >= 20,
                                  _chi2_p_vec(hbase, np.stack([np.sum([r["_ca"] for r in g], axis=0) for g in multi])),
                                  np.nan)
            for i, g in enumerate(multi):
                for r in g:
                    r["p_hist_mix_event"] = r["p_hist_mix"]
                    r["p_mix"], r["p_size"] = float(p_mix[i]), float(p_size[i])
                    r["p_time"], r["p_hist_mix"] = float(p_time[i]), float(p_hist_mix[i])
                    r["p_range"] = float(p_range[i])
        for r in rows:
            r.setdefault("p_hist_mix_event", r["p_hist_mix"])
            # the action mix counts if it shifts against the field in the event or against the
            # account's own history: the smaller p, Bonferroni-corrected for the two looks
            ps = [p for p in (r["p_mix"], r["p_hist_mix"]) if not math.isnan(p)]
            r["p_mix_any"] = min(1.0, len(ps) * min(ps)) if ps else float("nan")
        return rows

    def _field_counts(self, tid: str, account: str, cp_time) -> tuple[np.ndarray, np.ndarray]:
        """The other players' action counts in the event before / after a time."""
        if tid not in self.field_:
            return np.zeros(len(ACTS)), np.zeros(len(ACTS))
        t, acc, X = self.field_[tid]
        others = acc != account
        after = t >= np.datetime64(cp_time, "us")
        return X[others & ~after].sum(axis=0), X[others & after].sum(axis=0)

    def _best_split(self, counts: np.ndarray) -> tuple[int, int, float]:
        """Split maximising the action-mix chi-square (vectorised over splits)."""
        n = counts.shape[0]
        m = self.min_segment
        cs = np.cumsum(counts, axis=0)
        tot = cs[-1]
        ks = np.arange(m, n - m + 1)
        if ks.size == 0:
            return 0, 1, 0.0
        before = cs[ks - 1]
        after = tot - before
        nb = before.sum(axis=1, keepdims=True)
        na = after.sum(axis=1, keepdims=True)
        col = tot / max(tot.sum(), 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            eb = nb * col
            ea = na * col
            chi = np.nansum(np.where(eb > 0, (before - eb) ** 2 / eb, 0) + np.where(ea > 0, (after - ea) ** 2 / ea, 0), axis=1)
        return int(ks[int(np.argmax(chi))]), int(ks.size), float(np.max(chi))

    def _compare(self, c, h: pl.DataFrame, k: int, counts: np.ndarray, dec: pl.DataFrame | None,
                 hist: pl.DataFrame | None, hdec: pl.DataFrame | None) -> dict[str, Any]:
        cp_hand = h["hand_id"][k]
        cp_time = h["started_at"][k]
        before, after = counts[:k].sum(axis=0), counts[k:].sum(axis=0)
        field_b, field_a = self._field_counts(c["tournament_id"], c["account"], cp_time)
        sizes = h["sizes"].to_list()
        sb = np.array([x for s in sizes[:k] for x in (s or []) if x is not None], dtype=float)
        sa = np.array([x for s in sizes[k:] for x in (s or []) if x is not None], dtype=float)
        vpip = h["vpip"].to_numpy()
        ks_d = float("nan")
        med_b = med_a = float("nan")
        n_db = n_da = 0
        xb = xa = np.array([], dtype=float)
        if dec is not None and dec.height:
            after_mask = dec["started_at"].to_numpy() >= np.datetime64(cp_time, "us")
            lm = dec["log_ms"].to_numpy()
            xb, xa = lm[~after_mask], lm[after_mask]
            n_db, n_da = len(xb), len(xa)
            if n_db and n_da:
                ks_d = float(sps.ks_2samp(xb, xa).statistic)
                med_b, med_a = float(np.exp(np.median(xb))), float(np.exp(np.median(xa)))
        # after-segment against the account's history outside this event
        # (the account's tournament hands under its other devices, this event's
        # hands before the change point included)
        hc = np.zeros(len(ACTS))
        # the range of starting hands entered / folded: after the change point against the same history
        st_h, rc_h = h["rstr"].to_numpy().astype(np.int64), h["rcls"].to_numpy().astype(np.int64)
        ra, cra = st_h[k:][rc_h[k:] >= 0], rc_h[k:][rc_h[k:] >= 0]
        rb, crb = np.array([], dtype=np.int64), np.array([], dtype=np.int64)
        if hist is not None and hist.height:
            same_event = (hist["tournament_id"] == c["tournament_id"]).fill_null(False).to_numpy()
            after_t = hist["started_at"].to_numpy() >= np.datetime64(cp_time, "us")
            dev = hist["device"].to_numpy()
            keep = ~(same_event & after_t) & ((dev != c.get("device")) if c.get("device") is not None else True)
            hc = hist.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)[keep].sum(axis=0)
            hr, hrc = hist["rstr"].to_numpy().astype(np.int64), hist["rcls"].to_numpy().astype(np.int64)
            kr = keep & (hrc >= 0)
            rb, crb = hr[kr], hrc[kr]
        # timing after the change point against the account's own decisions played
        # under its other devices (this event before the change point, its other
        # events and cash games), class by class
        ta = tb = np.array([], dtype=float)
        cta = ctb = np.array([], dtype=np.int64)
        n_hist = 0
        if hdec is not None and hdec.height:
            same_event = (hdec["tournament_id"] == c["tournament_id"]).fill_null(False).to_numpy()
            after_t = hdec["started_at"].to_numpy() >= np.datetime64(cp_time, "us")
            a_mask = same_event & after_t
            dev = hdec["device"].to_numpy()
            cand_dev = c.get("device")
            b_mask = ~a_mask & ((dev != cand_dev) if cand_dev is not None else np.ones(hdec.height, bool))
            lm, cl = hdec["log_ms"].to_numpy(), hdec["cls"].to_numpy()
            ta, cta, tb, ctb = lm[a_mask], cl[a_mask], lm[b_mask], cl[b_mask]
            n_hist = int(b_mask.sum())
        return {
            "account": c["account"], "tournament_id": c["tournament_id"],
            "cp_hand": cp_hand, "cp_time": cp_time, "k": k, "n_hands": h.height,
            "hands_after": h["hand_id"].to_list()[k:k + 25],
            "session": c.get("session"), "device": c.get("device"), "ip": c.get("ip"),
            "prev_device": c.get("prev_device"),
            "device_changed": bool(c.get("device_changed") or False), "net_changed": bool(c.get("net_changed") or False),
            "new_device": bool(c.get("new_device") or False), "new_net": bool(c.get("new_net") or False),
            "others_open": int(c.get("others_open") or 0), "since_logout": c.get("since_logout"),
            "device_sessions": int(c.get("device_sessions") or 0),
            "dev_quick_takeovers": int(c.get("dev_quick_takeovers") or 0),
            "dev_takeover_new_net": bool(c.get("dev_takeover_new_net") or False),
            "dev_own_sessions": int(c.get("dev_own_sessions") or 0),
            "net": c.get("net"), "prev_net": c.get("prev_net"),
            "net_accounts": _nint(c.get("net_accounts")), "prev_net_accounts": _nint(c.get("prev_net_accounts")),
            "prev_net_days": int(c.get("prev_net_days") or 0),
            "ks_d": ks_d,
            "vpip_before": float(vpip[:k].mean()), "vpip_after": float(vpip[k:].mean()),
            "aggr_before": _aggr(before), "aggr_after": _aggr(after),
            "fold_before": _share(before, 0), "fold_after": _share(after, 0),
            "size_before": float(np.median(sb)) if sb.size else float("nan"),
            "size_after": float(np.median(sa)) if sa.size else float("nan"),
            "med_ms_before": med_b, "med_ms_after": med_a, "n_dec_before": n_db, "n_dec_after": n_da,
            "n_hist_dec": n_hist, "med_ms_hist": float(np.exp(np.median(tb))) if tb.size else float("nan"),
            "_cb": before, "_ca": after, "_fb": field_b, "_fa": field_a, "_sb": sb, "_sa": sa, "_xb": xb, "_xa": xa,
            "_ta": ta, "_cta": cta, "_tb": tb, "_ctb": ctb, "_hc": hc,
            "_ra": ra, "_cra": cra, "_rb": rb, "_crb": crb,
        }

    def _test(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tests of every compared change point at once, by the array forms the
        population's null uses (one implementation): the action mix against the field's
        (G2 interaction), bet sizes and decision times before/after (Mann-Whitney), the
        after-segment's mix and timing against the account's own history (chi-square;
        Mann-Whitney by decision class, Fisher-combined); the before/after mix alone
        (chi-square) is reported."""
        if not rows:
            return rows
        g2, dof = _g2_interaction_vec(np.stack([np.array([[r["_cb"], r["_ca"]], [r["_fb"], r["_fa"]]]) for r in rows]))
        p_mix = _g2_p(g2, dof)
        p_size = _mwu_p_many([r["_sb"] for r in rows], [r["_sa"] for r in rows])
        p_time_in = _mwu_p_many([r["_xb"] for r in rows], [r["_xa"] for r in rows])
        hc = np.stack([r["_hc"] for r in rows])
        ca = np.stack([r["_ca"] for r in rows])
        p_hist_mix = np.where(hc.sum(axis=1) >= 20, _chi2_p_vec(hc, ca), np.nan)
        p_hist_time = _strat_mwu_many([r["_ta"] for r in rows], [r["_cta"] for r in rows],
                                      [r["_tb"] for r in rows], [r["_ctb"] for r in rows])
        p_mix_raw = _chi2_p_vec(np.stack([r["_cb"] for r in rows]), ca)
        p_range = (_range_p_many([r["_ra"] for r in rows], [r["_cra"] for r in rows],
                                 [r["_rb"] for r in rows], [r["_crb"] for r in rows])
                   if self.use_range else np.full(len(rows), np.nan))
        # at a login (the after-segment played on another device or network, the baseline the
        # account's decisions under its other devices) the timing that counts is the device-
        # invariant test: a device rescales a person's times, another person reshapes them
        dev_t = _device_time_many([r["_ta"] for r in rows], [r["_cta"] for r in rows],
                                  [r["_tb"] for r in rows], [r["_ctb"] for r in rows], math.log(self.device_band))
        for i, r in enumerate(rows):
            login = r.get("session") is not None
            r.update({"p_time_plain": float(p_hist_time[i]) if not np.isnan(p_hist_time[i]) else float(p_time_in[i]),
                      "p_time_device": float(dev_t["p"][i]), "p_time_profile": float(dev_t["p_profile"][i]),
                      "p_time_spread": float(dev_t["p_spread"][i]), "p_time_speed": float(dev_t["p_speed"][i]),
                      "time_shift": float(dev_t["shift"][i])})
            r.update({"_g2": float(g2[i]), "_dof": int(dof[i]), "p_mix": float(p_mix[i]), "p_size": float(p_size[i]),
                      "p_time_in": float(p_time_in[i]),
                      # the timing test that counts: at a login the device-invariant one (NaN where the
                      # account has too little history under other devices: the event's own
                      # decisions before the login are on the device being left, the speed no
                      # evidence); hands only (no device known), the account's own history where it
                      # has one, else after against before in the event
                      "p_time": (float(dev_t["p"][i]) if login else
                                 float(p_hist_time[i]) if not np.isnan(p_hist_time[i]) else float(p_time_in[i])),
                      "p_hist_mix": float(p_hist_mix[i]), "p_hist_time": float(p_hist_time[i]),
                      "p_range": float(p_range[i]),
                      "p_mix_raw": float(p_mix_raw[i])})
        return rows

    # ------------------------------------------------------------------ threshold
    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged``, the one flag rule: q <= alpha with a device or network change at a
        hand-over and the play shifted (style, or timing from a new device); or a clean quick hand-over to a new
        device on a new network with style and timing shifted at ``handover_p``; or a take-over-only device at
        ``repeat_p``. Never without sessions (the scan ranks, it does not accuse).

        Parameters
        ----------
        scores : the frame of :meth:`score`.

        Returns
        -------
        ``scores`` with the boolean ``flagged``."""
        if scores.height == 0:
            return scores.with_columns(flagged=pl.lit(False))
        q = scores["q_value"].to_numpy()
        style_ok = scores["p_style"].fill_nan(1.0).fill_null(1.0).to_numpy() < self.signal_p
        changed = (scores["device_changed"] | scores["net_changed"]).to_numpy() if self.has_sessions_ else np.ones(scores.height, bool)
        # the style must shift (an honest device switch changes speed, not the game),
        # or the timing must shift at a login from a device the account had never
        # used (a phone-to-desktop move brings the player's own, known desktop)
        time_ok = scores["p_time"].fill_nan(1.0).fill_null(1.0).to_numpy() < self.signal_p
        new_dev = scores["group_new_device"].to_numpy() if "group_new_device" in scores.columns else np.zeros(scores.height, bool)
        # a login from a device the account had used before (its owner's other
        # machine) is no evidence of another person: then the style alone must
        # carry the case, at a much stricter level
        # (field-relative only: the own-history comparison sets late-event play against all stages)
        strong_style = scores["p_style_field"].fill_nan(1.0).fill_null(1.0).to_numpy() < self.known_device_p
        # a hand-over: the login follows one of the account's logouts within handover_s (the
        # seat changes hands between two deals); a login hours after the account's last logout,
        # its other tables still open, is the owner starting a new day on another machine
        # (without logout times every login counts)
        since = scores["since_logout"].cast(pl.Float64).to_numpy() if "since_logout" in scores.columns else np.full(scores.height, np.nan)
        handover = (since <= self.handover_s) | (np.isnan(since) & (not self.has_logouts_))
        flagged = (q <= self.alpha) & changed & handover & ((new_dev & (style_ok | time_ok)) | (~new_dev & strong_style))
        # a clean hand-over, within seconds, to a device the account had never used (and that
        # never starts play of its own) on a network it had never used: the combined style and
        # timing p need only reach handover_p, not the false-discovery level, but style and
        # timing must each shift (quick: within quick_s, a seat changing hands between two deals;
        # an owner moving from the phone to the desktop at home does the same 2-15 s after the
        # logout half of the time, so the structure is no proof of another person)
        quick = (since <= self.quick_s) | (np.isnan(since) & (not self.has_logouts_))
        clean = quick & new_dev & scores["new_net"].to_numpy() & scores["device_changed"].to_numpy()
        level = np.full(scores.height, self.handover_p if getattr(self, "null_", np.zeros(0)).size else self.handover_p_raw)
        # the play must shift both ways too: the style and the timing by the device-invariant
        # test, each below signal_p (the issue: "a login from a new device or network together
        # with a shift in style and decision timing"). A login from a new device on a new
        # network seconds after a logout is also how an owner moves from the phone to the
        # desktop at home: the structure is no longer rare among honest players, so it only
        # relaxes the combined level, not the need for both shifts
        # (or one of them far beyond chance, below known_device_p: the level at which the style
        # alone carries a hand-over to a known device; an honest mover keeps his game and, the
        # device's speed set aside, his timing)
        p_st = scores["p_style"].fill_nan(1.0).fill_null(1.0).to_numpy()
        p_ti = scores["p_time"].fill_nan(1.0).fill_null(1.0).to_numpy()
        shifted = (style_ok & time_ok) | (p_st < self.known_device_p) | (p_ti < self.known_device_p)
        if self.two_places and "two_places" in scores.columns:
            # two places at once (``_pool``): the seat left from the account's own home network and
            # taken on another home-sized network, by a device that never starts play of its own. An
            # honest owner's move goes from a carrier's network to his home, or stays in places he
            # uses: the structure is rare among honest accounts, so it waives the need for style and
            # timing both to shift; the combined p at handover_p stays
            tp = scores["two_places"].fill_null(False).to_numpy().astype(bool)
            if self.two_places_test:
                tp &= _min_test_p(scores) < self.signal_p
            shifted = shifted | tp
        flagged |= clean & shifted & (scores["p_value"].fill_nan(1.0).fill_null(1.0).to_numpy() <= level)
        # a device that only ever appears to take this account's seat mid-event, seconds after a
        # logout, in two or more events, never to start the account's own play: a helper's
        # machine, or an owner whose own desktop only ever continues events begun on the phone
        # (a held-out honest player did exactly that, twice, and played on unchanged). The
        # structure is a prior, not a proof: it waives the clean rule's need for style and timing
        # both to shift, but the play must still show a shift: the combined p on the calibrated
        # scale at repeat_p (an honest take-over-only device is flagged at most about that often)
        # and at least one test (action mix, bet sizes, range, timing) below signal_p, which the
        # case names as its evidence
        if "takeover_only" in scores.columns:
            rep = scores["takeover_only"].fill_null(False).to_numpy() & quick
            rep_level = self.repeat_p if getattr(self, "null_", np.zeros(0)).size else self.handover_p_raw
            flagged |= (rep & (scores["p_value"].fill_nan(1.0).fill_null(1.0).to_numpy() <= rep_level)
                        & (_min_test_p(scores) < self.signal_p))
        if not self.has_sessions_:
            # hands only: a player's own stack and table change their play as much as
            # a new player would; without logins or timing the scan ranks, never accuses
            flagged = np.zeros(scores.height, dtype=bool)
        return scores.with_columns(flagged=pl.Series(flagged))

    # ------------------------------------------------------------------ explain
    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row: the style, range, size and timing shifts at the change point against
        the field and the account's own history, the login and device history, the hands after the change.

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold`.

        Returns
        -------
        :class:`~detectors.base.Signal`, from the row and the fitted attributes only."""
        r = row
        acc, tid = r["account"], r["tournament_id"]
        hsql = ("SELECT h.hand_id, h.started_at FROM seats s JOIN hands h USING (hand_id) "
                f"WHERE s.player = {_lit(acc)} AND h.tournament_id = {_lit(tid)} ORDER BY h.started_at")
        ev = []
        if self.has_sessions_:
            ev.append(Evidence(
                name="login from a changed device/network", value=float(r["new_device"]) + float(r["new_net"]),
                baseline=0.0, n=1,
                text=(f"session {r['session']} at {r['cp_time']}: device {r['device']} (before {r['prev_device']}), "
                      f"ip {r['ip']}; device {'never' if r['new_device'] else 'already'} used by {acc} before, "
                      f"network {'new' if r['new_net'] else 'seen before'}"
                      + (f"; the same device logged in mid-event in {r['n_pooled']} events "
                         f"({', '.join(r['pooled_tournaments'])}): their before/after samples are pooled"
                         if r["n_pooled"] > 1 else "")
                      + (f"; this device only ever logged in to take this seat mid-event (all its "
                         f"{r['device_sessions']} sessions on {acc}, each seconds after a logout), never "
                         f"to start {acc}'s own play" if r.get("takeover_only") else "")
                      + (f"; two places at once: {_two_places_text(r, acc)}" if r.get("two_places") else "")),
                sql=f"SELECT session, login_at, logout_at, ip, device FROM sessions WHERE account = {_lit(acc)} ORDER BY login_at",
            ))
        ev.append(Evidence(
            name="decision time shift (median ms, after vs before)", value=_nz(r["med_ms_after"]), baseline=_nz(r["med_ms_before"]),
            n=int(r["n_dec_after"]), p_value=_nz(r["p_time"]),
            text=(f"median decision {r['med_ms_before']:.0f} ms on {r['n_dec_before']} decisions before hand {r['cp_hand']}, "
                  f"{r['med_ms_after']:.0f} ms on {r['n_dec_after']} after; KS distance {r['ks_d']:.2f}; "
                  f"Mann-Whitney p {r['p_time_in']:.2g} after vs before in this event; against {acc}'s own "
                  f"{r['n_hist_dec']} decisions under other devices (median {r['med_ms_hist']:.0f} ms), class by class "
                  f"(preflop folds, ordinary, big decisions), p {r['p_hist_time']:.2g} in this event"
                  + (f"; a device rescales a player's times: with the common shift ({math.exp(r['time_shift']):.2f}x) "
                     f"set aside, profile over the classes p {r['p_time_profile']:.2g}, spread p {r['p_time_spread']:.2g}, "
                     f"speed beyond a device's {self.device_band:g}x p {r['p_time_speed']:.2g}; together "
                     f"{r['p_time']:.2g}, pooled over the device's events" if r.get("session") is not None and
                     not is_missing(r.get("time_shift")) else f"; {r['p_time']:.2g} as counted"))
            if self.has_decisions_ else "no decision times in the warehouse",
            # each decision under the device of the session it was played in: the new device's
            # decisions against the account's others
            sql=("SELECT ss.device, count(*) AS decisions, median(d.ms) AS median_ms "
                 "FROM decisions d JOIN hands h USING (hand_id) ASOF LEFT JOIN "
                 f"(SELECT account, login_at, device FROM sessions WHERE account = {_lit(acc)}) ss "
                 "ON d.account = ss.account AND h.started_at >= ss.login_at "
                 f"WHERE d.account = {_lit(acc)} GROUP BY ALL ORDER BY decisions DESC")
            if self.has_sessions_ else
            ("SELECT h.started_at >= (SELECT started_at FROM hands WHERE hand_id = " + _lit(r["cp_hand"]) + ") AS after, "
             "median(d.ms), count(*) FROM decisions d JOIN hands h USING (hand_id) "
             f"WHERE d.account = {_lit(acc)} AND h.tournament_id = {_lit(tid)} GROUP BY 1"),
        ))
        ev.append(Evidence(
            name="action mix shift (VPIP after vs before)", value=r["vpip_after"], baseline=r["vpip_before"],
            n=int(r["n_hands"] - r["k"]), p_value=_nz(r["p_mix_any"]),
            text=(f"VPIP {r['vpip_before']:.2f} -> {r['vpip_after']:.2f}, aggression {r['aggr_before']:.2f} -> "
                  f"{r['aggr_after']:.2f}, fold share {r['fold_before']:.2f} -> {r['fold_after']:.2f} over "
                  f"{r['k']} hands before and {r['n_hands'] - r['k']} after; change against the field's "
                  f"(G2 interaction) p {r['p_mix_event']:.2g} in this event, {r['p_mix']:.2g} pooled; after vs "
                  f"{acc}'s own tournament hands under other devices p {r['p_hist_mix_event']:.2g} in this event, "
                  f"{r['p_hist_mix']:.2g} pooled; the smaller, Bonferroni x2: {r['p_mix_any']:.2g}"),
            sql=("SELECT h.started_at >= (SELECT started_at FROM hands WHERE hand_id = " + _lit(r["cp_hand"]) + ") AS after, "
                 "a.action, count(*) FROM actions a JOIN hands h USING (hand_id) "
                 f"WHERE a.player = {_lit(acc)} AND h.tournament_id = {_lit(tid)} AND a.action NOT LIKE 'post%' GROUP BY ALL ORDER BY ALL"),
        ))
        if not is_missing(r.get("p_range")):
            ev.append(Evidence(
                name="starting hands entered and raised (by the cards dealt)", value=float(r["n_hands"] - r["k"]),
                baseline=0.0, n=int(r["n_hands"] - r["k"]), p_value=_nz(r["p_range"]),
                text=(f"whether {acc} enters pots, and raises, with the same starting hands after hand {r['cp_hand']} "
                      f"as in its own hands under other devices, hand by hand given the cards dealt (bins of "
                      f"starting-hand strength, stack depth, facing a raise, a short-handed table): p {r['p_range']:.2g}"
                      + (f" pooled over the device's events ({r['p_range_event']:.2g} in this event)"
                         if r.get("n_pooled", 1) > 1 and not is_missing(r.get("p_range_event")) else "")),
                sql=("SELECT h.started_at >= (SELECT started_at FROM hands WHERE hand_id = " + _lit(r["cp_hand"]) + ") AS after, "
                     "hc.cards, a.action FROM actions a JOIN hands h USING (hand_id) "
                     "JOIN hole_cards hc ON hc.hand_id = a.hand_id AND hc.player = a.player "
                     f"WHERE a.player = {_lit(acc)} AND h.tournament_id = {_lit(tid)} AND a.street = 'preflop' "
                     "AND a.action NOT LIKE 'post%' ORDER BY h.started_at, a.seq"),
            ))
        ev.append(Evidence(
            name="bet size shift (median fraction of pot)", value=_nz(r["size_after"]), baseline=_nz(r["size_before"]),
            p_value=_nz(r["p_size"]), text=f"median bet {r['size_before']:.2f} -> {r['size_after']:.2f} of the pot",
            sql=hsql,
        ))
        # strongest first: the login anchors the change point, then the tests by p-value
        head, tests = ev[:1] if self.has_sessions_ else [], ev[1:] if self.has_sessions_ else ev
        ev = head + sorted(tests, key=lambda e: 1.0 if e.p_value is None else e.p_value)
        shifted = [w for w, p in (("style", r.get("p_style")), ("timing", r.get("p_time")))
                   if p is not None and not math.isnan(p) and p < self.signal_p]
        benign = ("A player moving from phone to desktop (or to another network) changes device and a little "
                  "of their speed, but not their game. ")
        # the behavioural tests below signal_p, by name: what the case rests on
        below = [f"{name} p {float(r[c]):.2g}" for c, name in _TESTS
                 if not is_missing(r.get(c)) and float(r[c]) < self.signal_p]
        below_txt = (f"tests below {self.signal_p:g}: {', '.join(below)}" if below
                     else f"no test below {self.signal_p:g}")
        structure = (f"the device {r['device']} only ever appeared to take {acc}'s seat mid-event, seconds after a "
                     f"logout, {max(r['n_pooled'], r.get('dev_quick_takeovers') or 0)} times, and never started play "
                     "of its own (an owner's new machine would; a helper's does not)") if r.get("takeover_only") else ""
        if row["flagged"] and r.get("takeover_only"):
            benign += (f"Here {structure}, and the play shifts ({below_txt}; combined p {row['p_value']:.2g}, within "
                       + (f"the level {self.repeat_p:g} against the same player's simulated moves" if int(r.get("n_null") or 0)
                          else f"the level {self.handover_p_raw:g}, no simulated moves to calibrate it")
                       + "): the structure alone would be no evidence.")
        elif not row["flagged"] and r.get("takeover_only"):
            benign += (f"Here {structure}, but the play shows no more shift than the same player's own moves "
                       f"({below_txt}; combined p {row['p_value']:.2g}): the structure alone is no evidence of another "
                       "person: not flagged.")
        elif row["flagged"] and r.get("two_places") and self.two_places and len(shifted) < 2:
            benign += (f"An owner moving from the phone to his home desktop goes from a carrier's network, used by many, "
                       f"to his home; here {_two_places_text(r, acc)}: the owner cannot be at both homes. With that "
                       f"structure the play need not shift both ways: {below_txt}; combined p {row['p_value']:.2g}, "
                       f"within the level {self.handover_p if int(r.get('n_null') or 0) else self.handover_p_raw:g}.")
        elif row["flagged"]:
            benign += (f"Here the {' and the '.join(shifted) or 'play'} shift{'s' if len(shifted) < 2 else ''} at a login "
                       f"from a device {acc} {'had never used' if r.get('group_new_device') else 'already used, and the style shift is far beyond chance'}, "
                       f"so the same-person explanation is unlikely ({below_txt}).")
        else:
            benign += "The shift is not strong enough for the device change: not flagged."
        if int(r.get("n_null") or 0):
            benign += (f" Timing and style shift p = {row['p_value']:.2g} against this population's own "
                       f"{int(r['n_null'])} simulated same-player device moves (other players' events split at "
                       f"the same hands, with about as much play after the split and in the player's history; "
                       f"the tests' own combined p {r['p_value_raw']:.2g}).")
        return Signal(
            kind=self.kind, accounts=[acc], tournaments=[tid], score=float(row["score"]), flagged=bool(row["flagged"]),
            summary=(f"{acc}'s seat in tournament {tid} changes hands at hand {r['cp_hand']}"
                     + (f" (login from device {r['device']})" if self.has_sessions_ else "")),
            hands=list(r["hands_after"]), evidence=ev, benign=benign,
            p_value=float(row["p_value"]), detector=type(self).__name__,
            extra={"change_point_hand": r["cp_hand"], "change_point_time": str(r["cp_time"]), "q_value": r.get("q_value")},
        )


def _with_strength(df: pl.DataFrame) -> pl.DataFrame:
    """The entry decision of each hand by the starting hand (``_range_p_many``): ``rcls`` 2
    entered with a raise, 1 entered without raising (put chips in voluntarily preflop), 0
    folded preflop without entering, -1 no entry decision or no starting hand known as dealt
    (in the player view other players' cards are known only when shown down, which only
    entered hands reach: a sample chosen by the very decision tested); ``rstr`` its stratum: the starting hand's percentile
    among the 1,326 in bins of 10 (``_BINS``) (``gameplay.starting_hand_percentile``: Hold'em, cards known),
    by stack depth (``_DEPTH_BB``), by facing a raise and by a short-handed table (``n_dealt``, the
    players dealt in, at most ``_SHORT_MAX``); the ``hole`` and ``game`` columns dropped."""
    if df.height == 0:
        return df.drop("hole", "game").with_columns(rstr=pl.lit(-1, pl.Int64), rcls=pl.lit(-1, pl.Int64))
    st = gp.starting_hand_percentile(df).fill_null(float("nan")).to_numpy()
    entry = df["entry"].to_numpy()
    known = df["dealt_known"].fill_null(False).to_numpy().astype(bool)
    rcls = np.where(np.isnan(st) | (entry < 0) | ~known, -1, entry).astype(np.int64)
    depth = np.searchsorted(_DEPTH_BB, df["stack_bb"].cast(pl.Float64).fill_null(1e9).to_numpy(), side="left")
    facing = df["facing"].fill_null(False).to_numpy().astype(np.int64)
    short = (df["n_dealt"].cast(pl.Float64).fill_null(1e9).to_numpy() <= _SHORT_MAX).astype(np.int64)
    dec = np.clip(np.floor(np.nan_to_num(st) * _BINS), 0, _BINS - 1).astype(np.int64)
    rstr = np.where(rcls >= 0, dec + _BINS * (depth + (len(_DEPTH_BB) + 1) * (facing + 2 * short)), -1)
    return df.drop("hole", "game").with_columns(rstr=pl.Series(rstr), rcls=pl.Series(rcls))


_TESTS = (("p_mix_any", "action mix"), ("p_size", "bet sizes"), ("p_range", "starting hands entered and raised"),
          ("p_time", "decision timing"))


def _min_test_p(scores: pl.DataFrame) -> np.ndarray:
    """The smallest p-value of the behavioural tests (``_TESTS``) per row; 1 where none was run."""
    cols = [scores[c].cast(pl.Float64).fill_nan(1.0).fill_null(1.0).to_numpy() for c, _ in _TESTS if c in scores.columns]
    return np.min(np.column_stack(cols), axis=1) if cols else np.ones(scores.height)


def _aggr(c: np.ndarray) -> float:
    d = c[2] + c[3] + c[4]
    return float((c[3] + c[4]) / d) if d else float("nan")


def _share(c: np.ndarray, i: int) -> float:
    s = c.sum()
    return float(c[i] / s) if s else float("nan")


def _nz(x: Any) -> float | None:
    return None if is_missing(x) else float(x)


def _two_places_text(r: dict[str, Any], acc: str) -> str:
    """The "two places at once" structure of a candidate row, in words."""
    def who(n: Any) -> str:
        return f"{n} account{'s' if n != 1 else ''}"
    return (f"the seat was left on network {r['prev_net']} (ever used by {who(r['prev_net_accounts'])}, by "
            f"{acc} on {r['prev_net_days']} days: a home) and taken "
            + (f"{float(r['since_logout']):.0f} s later " if not is_missing(r.get("since_logout")) else "")
            + f"on network {r['net']} (ever used by {who(r['net_accounts'])}: another home"
            + (f", one {acc} had never used), " if r.get("new_net") else "), ")
            + f"by device {r['device']}, which never started play of its own on {acc}")


def _nint(x: Any) -> int | None:
    return None if is_missing(x) else int(x)
