"""Pairs of accounts judged on behaviour alone: one person behind two accounts that share no identifier.

Every pair of accounts with enough play is a hypothesis. Its evidence is five p-values, each the chance that two
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

import itertools

import duckdb
import numpy as np
import polars as pl

from detectors import stats as mt
from detectors.features.identity.style import likeness

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

ACCOUNTS_SQL = """
SELECT account, nullif(trim(country), '') AS country, epoch(created_at) / 86400.0 AS opened_day FROM accounts
"""


def _share_at_least(x: np.ndarray, cls: np.ndarray) -> np.ndarray:
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


def behaviour_pairs(
    con: duckdb.DuckDBPyConnection,
    fingerprints: pl.DataFrame,
    *,
    min_hands: int = 30,
    max_pairs: int = 3_000_000,
    random_state: int = 0,
) -> pl.DataFrame | None:
    """Every pair of accounts with at least ``min_hands`` hands, with the behaviour-only evidence of the module
    docstring.

    Parameters
    ----------
    con : the warehouse (``sessions``, ``accounts``). fingerprints : :func:`style_fingerprints` of ``con``.
    min_hands : hands an account needs to be paired. max_pairs : above this many pairs, None (not run).
    random_state : the seed of the likeness null's random pairs.

    Returns
    -------
    ``a``, ``b`` (a < b), ``p_style``, ``p_timing``, ``p_hours``, ``p_opened``, ``p_country``, ``concurrency``,
    ``opened_days`` (days between the openings), ``same_country``, ``p_solo`` (Fisher) and ``q_solo`` (BH over all
    the pairs); None when there are more than ``max_pairs`` pairs; an empty frame with fewer than two accounts.
    """
    accs = sorted(fingerprints.filter(pl.col("n_hands") >= min_hands)["account"].to_list())
    n_pairs = len(accs) * (len(accs) - 1) // 2
    if n_pairs > max_pairs:
        return None
    if n_pairs == 0:
        return pl.DataFrame(schema={"a": pl.Utf8, "b": pl.Utf8, "p_solo": pl.Float64, "q_solo": pl.Float64})
    idx = np.array(list(itertools.combinations(range(len(accs)), 2)), dtype=np.int64)
    names = np.array(accs, dtype=object)
    pairs = pl.DataFrame({"a": names[idx[:, 0]].tolist(), "b": names[idx[:, 1]].tolist()},
                         schema={"a": pl.Utf8, "b": pl.Utf8})
    pairs = likeness(fingerprints, pairs, min_hands=min_hands, random_state=random_state)
    acc = con.sql(ACCOUNTS_SQL).pl()
    pairs = (pairs
             .join(acc.rename({"account": "a", "country": "country_a", "opened_day": "opened_a"}), on="a", how="left")
             .join(acc.rename({"account": "b", "country": "country_b", "opened_day": "opened_b"}), on="b", how="left")
             .join(con.sql(OVERLAP_SQL).pl(), on=["a", "b"], how="left"))
    online = con.sql("SELECT DISTINCT account FROM sessions").pl()["account"].to_list()
    has_s = pairs["a"].is_in(online).to_numpy() & pairs["b"].is_in(online).to_numpy()
    same = (pairs["country_a"] == pairs["country_b"]).fill_null(False).to_numpy()
    conc = np.where(has_s, np.clip(pairs["overlap_s"].fill_null(0.0).to_numpy()
                                   / np.maximum(pairs["min_online_s"].fill_null(0.0).to_numpy(), 1.0), 0, 1), np.nan)
    gap = (pairs["opened_a"] - pairs["opened_b"]).abs().cast(pl.Float64).fill_null(np.nan).to_numpy()
    # the country's share of the population: the chance an unrelated account matches the pair's country
    share = acc.filter(pl.col("country").is_not_null()).group_by("country").len()
    n_acc = max(int(share["len"].sum()), 1)
    pc = dict(zip(share["country"].to_list(), (share["len"] / n_acc).to_list()))
    p_country = np.where(same, np.array([pc.get(c, 1.0) for c in pairs["country_a"].to_list()]), 1.0)
    p_country = np.where(pairs["country_a"].is_null().to_numpy() | pairs["country_b"].is_null().to_numpy(),
                         np.nan, p_country)
    p_hours = _share_at_least(conc, same)
    p_opened = _share_at_least(-gap, same)
    P = np.column_stack([pairs["p_style"].to_numpy(), pairs["p_timing"].to_numpy(), p_hours, p_opened, p_country])
    p_solo = mt.fisher_combine(P, untested=1.0)
    return pairs.select("a", "b", "p_style", "p_timing").with_columns(
        p_hours=pl.Series(p_hours), p_opened=pl.Series(p_opened), p_country=pl.Series(p_country),
        concurrency=pl.Series(conc), opened_days=pl.Series(gap), same_country=pl.Series(same),
        p_solo=pl.Series(p_solo), q_solo=pl.Series(mt.bh_qvalues(p_solo, untested=1.0)),
    )
