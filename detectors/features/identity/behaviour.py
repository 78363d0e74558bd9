"""Pairs of accounts judged on behaviour alone: one person behind two accounts that share no identifier.

Every pair of accounts with enough play is a hypothesis. Its evidence is six p-values, each the chance that two
different people look this much alike on one count, read from the population's own pairs (an empirical null):

* ``p_style`` and ``p_timing``: the style and decision-time likeness of :func:`~detectors.features.identity.likeness`
  (the share of random pairs at least as alike).
* ``p_hours``: the share of the time the less-online account was online that the other was online too (one person's
  hours), as the share of pairs at least as concurrent, among pairs of the same kind (both accounts of one country,
  or not): players of one country keep one time zone's hours, so the rank is taken within that class, which makes
  it independent of ``p_country`` under the null.
* ``p_opened``: how close in time the two accounts were opened, as the share of pairs (of the same class) opened at
  least as close together (a second account is opened soon after the first).
* ``p_country``: for two accounts of one country, the share of the population registered there (the chance that
  an unrelated account matches); 1 otherwise.
* ``p_seated``: the hands both were dealt into (one person who runs both sits them at one table), as the share of
  pairs with at least as many, among pairs as much online together (deciles of the concurrency of the pairs online
  together at all, and the pairs never online together): two people who keep the same hours meet at tables by
  that alone, so the rank is taken like with like.

Fisher's method combines them (a test not made, for lack of data, adds nothing) and Benjamini-Hochberg over
**every pair tested** gives ``q_solo``: the family is the whole population's pairs, since any of them could have
been picked, so a pair is a discovery only beyond what that many pairs of strangers produce by chance (Benjamini &
Hochberg, JRSS B 57, 1995). The ranks are of the pair's own population (no constant of any world), ties counted
against the pair (the share at least as extreme, so a tie never helps). This follows record linkage without a
shared key (Fellegi & Sunter, JASA 64(328), 1969: agreement weights of independent fields summed), with the
behavioural fields of player fingerprinting (Chen et al., NetGames 2008).

Limits: the style and hours of one player type are alike for strangers too, and the fields are assumed
independent under the null beyond the country class; both are measured in docs/measurements.md (2026-12-07).
The pair count grows with the square of the accounts: above ``max_pairs`` the path is not run (the caller says so).
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

from detectors import stats as mt
from detectors.features.identity.style import likeness_by_position, likeness_order

# seconds both accounts had a session open, and each account's online seconds (sessions without a logout: one hour)
OVERLAP_SQL = """
WITH s AS (SELECT account, epoch(login_at) AS t0,
                  epoch(coalesce(logout_at, login_at + INTERVAL 1 HOUR)) AS t1 FROM sessions),
tot AS (SELECT account, sum(t1 - t0) AS online_s FROM s GROUP BY 1)
SELECT x.account AS a, y.account AS b, sum(least(x.t1, y.t1) - greatest(x.t0, y.t0)) AS overlap_s,
       least(any_value(ta.online_s), any_value(tb.online_s)) AS min_online_s
FROM s x JOIN s y ON x.account < y.account AND x.t0 < y.t1 AND y.t0 < x.t1
JOIN tot ta ON ta.account = x.account JOIN tot tb ON tb.account = y.account
GROUP BY x.account, y.account
"""

# hands both accounts were dealt into (one table: one person at two seats, or two people who sit together)
TOGETHER_SQL = """
SELECT x.player AS a, y.player AS b, count(*) AS n_together
FROM seats x JOIN seats y ON x.hand_id = y.hand_id AND x.player < y.player
WHERE x.dealt_in AND y.dealt_in
GROUP BY x.player, y.player
"""

ACCOUNTS_SQL = """
SELECT account, nullif(trim(country), '') AS country, epoch(created_at) / 86400.0 AS opened_day FROM accounts
"""


def share_at_least(x: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """For each entry, the share of entries of its class (``cls``) whose value is at least ``x`` (NaN stays NaN):
    an empirical upper-tail p-value, ties counted against the entry."""
    out = np.full(x.shape, np.nan)
    for c in np.unique(cls):
        m = (cls == c) & ~np.isnan(x)
        if not m.any():
            continue
        v = np.sort(x[m])
        out[m] = (v.size - np.searchsorted(v, x[m], side="left")) / v.size
    return out


def _by_position(rows: pl.DataFrame, who: pl.DataFrame, n: int) -> tuple[np.ndarray, pl.DataFrame]:
    """``rows`` of pairs (``a``, ``b``: names) of the accounts ``who`` (``account``, ``k``: its position), with each
    kept row's index in the order of ``np.triu_indices(n, 1)``; rows naming other accounts dropped."""
    rows = (rows.join(who.rename({"account": "a", "k": "ka"}), on="a")
            .join(who.rename({"account": "b", "k": "kb"}), on="b"))
    ka = np.minimum(rows["ka"].to_numpy(), rows["kb"].to_numpy())
    kb = np.maximum(rows["ka"].to_numpy(), rows["kb"].to_numpy())
    return ka * n - ka * (ka + 1) // 2 + (kb - ka - 1), rows


def _use(con: duckdb.DuckDBPyConnection, who: pl.DataFrame, i: np.ndarray, j: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the pairs (``i``, ``j``) of the accounts ``who``: the concurrency (NaN where either account has no
    session), the hands dealt in together and their p-value among pairs as much online together: deciles of the
    concurrency of pairs online together at all (class 0: never online together, or no sessions), so two people who
    keep the same hours are not read as sitting together by choice."""
    n = who.height
    online = who.join(con.sql("SELECT DISTINCT account FROM sessions").pl(), on="account", how="semi")["k"].to_numpy()
    has_s = np.zeros(n, dtype=bool)
    has_s[online] = True
    conc = np.where(has_s[i] & has_s[j], 0.0, np.nan)
    at, ov = _by_position(con.sql(OVERLAP_SQL).pl(), who, n)
    conc[at] = np.clip(ov["overlap_s"].to_numpy() / np.maximum(ov["min_online_s"].to_numpy(), 1.0), 0, 1)
    at, tg = _by_position(con.sql(TOGETHER_SQL).pl(), who, n)
    seated = np.zeros(len(i))
    seated[at] = tg["n_together"].to_numpy()
    on = np.nan_to_num(conc) > 0
    edges = np.quantile(conc[on], np.linspace(0, 1, 11)[1:-1]) if on.any() else np.array([])
    return conc, seated, share_at_least(seated, np.where(on, 1 + np.searchsorted(edges, np.nan_to_num(conc)), 0))


def _country(country: list[str | None], i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the pairs (``i``, ``j``) of accounts whose countries are ``country``: whether both are of one country,
    and its p-value, the country's share of these accounts (the chance an unrelated account matches; 1 for two
    countries, NaN where either is unknown)."""
    known = np.array([c is not None for c in country], dtype=bool)
    counts = pl.Series("country", country, dtype=pl.Utf8).drop_nulls().value_counts()
    code = {c: k for k, c in enumerate(counts["country"].to_list())}
    codes = np.array([code.get(c, -1) for c in country], dtype=np.int64)
    same = known[i] & known[j] & (codes[i] == codes[j])
    share = np.r_[(counts["count"] / max(int(known.sum()), 1)).to_numpy(), 1.0]  # code -1 (no country): 1
    return same, np.where(known[i] & known[j], np.where(same, share[codes][i], 1.0), np.nan)


def behaviour_pairs(
    con: duckdb.DuckDBPyConnection,
    fingerprints: pl.DataFrame,
    *,
    min_hands: int = 30,
    max_pairs: int = 3_000_000,
    keep_q: float = 1.0,
    also: pl.DataFrame | None = None,
    random_state: int = 0,
) -> pl.DataFrame | None:
    """Every pair of accounts with at least ``min_hands`` hands, with the behaviour-only evidence of the module
    docstring; the pairs are held as positions until the end, so only the kept rows carry names.

    Parameters
    ----------
    con : the warehouse (``sessions``, ``accounts``). fingerprints : :func:`style_fingerprints` of ``con``.
    min_hands : hands an account needs to be paired. max_pairs : above this many pairs, None (not run).
    keep_q : the rows returned: ``q_solo`` at most this (1: every pair). also : pairs (``a``, ``b``) returned
    whatever their ``q_solo`` (the pairs an identifier already links, whose household test reads ``p_seated`` and
    ``p_opened``); pairs of accounts without ``min_hands`` are not among them. random_state : the likeness null's seed.

    Returns
    -------
    ``a``, ``b`` (a < b), ``p_style``, ``p_timing``, ``p_hours``, ``p_opened``, ``p_country``, ``p_seated``,
    ``hands_together``, ``concurrency``, ``opened_days`` (days between the openings), ``same_country``, ``p_solo`` (Fisher) and ``q_solo`` (BH over all
    the pairs); None when there are more than ``max_pairs`` pairs.
    """
    fp = likeness_order(fingerprints)
    pos = np.flatnonzero(fp["n_hands"].to_numpy() >= min_hands)
    n = pos.size
    if n * (n - 1) // 2 > max_pairs:
        return None
    i, j = np.triu_indices(n, 1)
    names = fp["account"].gather(pos)
    _, _, p_style, p_timing = likeness_by_position(fp, pos[i], pos[j], min_hands=min_hands,
                                                   random_state=random_state)
    who = pl.DataFrame({"account": names, "k": np.arange(n)})
    acc = who.join(con.sql(ACCOUNTS_SQL).pl(), on="account", how="left").sort("k")
    opened = acc["opened_day"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    conc, seated, p_seated = _use(con, who, i, j)
    same, p_country = _country(acc["country"].to_list(), i, j)
    gap = np.abs(opened[i] - opened[j])
    p_hours = share_at_least(conc, same)
    p_opened = share_at_least(-gap, same)
    p_solo = mt.fisher_combine(np.column_stack([p_style, p_timing, p_hours, p_opened, p_country, p_seated]),
                               untested=1.0)
    q_solo = mt.bh_qvalues(p_solo, untested=1.0)
    keep = q_solo <= keep_q
    if also is not None and also.height:
        at, _ = _by_position(also.select("a", "b"), who, n)
        keep[at] = True
    keep = np.flatnonzero(keep)
    return pl.DataFrame({
        "a": names.gather(i[keep]), "b": names.gather(j[keep]),
        "p_style": p_style[keep], "p_timing": p_timing[keep], "p_hours": p_hours[keep], "p_opened": p_opened[keep],
        "p_country": p_country[keep], "p_seated": p_seated[keep], "hands_together": seated[keep],
        "concurrency": conc[keep], "opened_days": gap[keep], "same_country": same[keep],
        "p_solo": p_solo[keep], "q_solo": q_solo[keep],
    })
