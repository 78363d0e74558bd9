"""The "two places at once" test of a seat hand-off: the seat left from the account's own home network and taken
seconds later on another home-sized network, by a device that never starts play of its own on the account.

One person cannot be at two homes within seconds: under the null (the owner moved to another device) the two
sessions are at two homes only if the network's label changed without anyone travelling (a home's address moved
to another range, a VPN switched on, a second line in the house) or the owner travelled within ``handover_s``.
How often that happens is read from this population's own re-logins that need no second person: an account's
login within ``handover_s`` of its previous logout on the same device, which left the account's own home
network (home-sized: at most ``household_max`` accounts ever used it; used by the account on two days or more).
Of those ``n`` re-logins, ``k`` arrived on another home-sized network. A candidate that left its own home on
another device is *eligible*; its test statistic ``T`` is ``(k + 1) / (n + 1)`` when it shows the structure
(another home-sized network, a device not the owner's) and 1 when it does not: the Monte Carlo p-value of a
count among the population's own draws (Davison & Hinkley, *Bootstrap Methods and their Application*, 1997,
ch. 4). A device that starts play of its own on the account is the owner's (no second person): its rows are
eligible with ``T = 1``.

``T`` takes two values, so Fisher's method (which needs a continuous p) would cost a row without the structure
as much as a row with it gains. The play's p ``U`` and ``T`` are combined by their product's exact law instead:
with ``r = (k + 1) / (n + 1)``, ``P(T U <= c) = r min(1, c / r) + (1 - r) c`` (``T = r`` with probability at
most ``r``; the law grows with that probability, so the bound is valid, and ``U`` uniform). A row without the
structure pays a factor below 2; one with it gains ``1 / (2 r)``. With the structure ``U`` is the play's p alone:
the identity's signs (:mod:`detectors.seat_handoff.identity`: a take-over-only device, a new home-sized network)
are the structure ``T`` tests, and they would be counted twice. Without it ``U`` is the play's and the identity's
p combined as for a row not tested (the larger given no structure, so the bound holds): such a row's p is never
below what it was without the test.

The test is made only where it can reach the false-discovery level on its own (``r <= fdr``): where the
population's own devices change homes as often as not (addresses drawn afresh at every login), ``T`` says
nothing, and the rows keep the play and identity p-values.

**Repeated hand-offs of one device** (:func:`device_repeats`, :func:`repeated_product_p`). A helper brings the same
machine each time; the owner's home label changing at a switch is a chance of at most ``r`` on each day, so a
device that took the seat with the structure on ``m`` of the ``M`` days it took it from the owner's own home has
``T = P(Bin(M, r) >= m)`` (1 for ``m = 0``): days, not logins, as a label that changed once stays changed for
the day. ``T`` is combined with the play's p by the exact law of the product under ``T``'s least favourable law
(``P(T <= G(j)) = G(j)`` at each of its values ``G(j)``, :func:`repeated_product_p`); ``M = 1`` is the two-valued
law above.

**The owner's own switches** (:func:`owner_switch_homes`). The re-logins measure a label that changes on one device;
they say nothing of an owner's second device that keeps a network of its own (a laptop on a VPN, a tablet at
another home): its switches would show the structure at every login. The population's own owner devices (devices
that also start play of their own on the account) that took a seat mid-event from the account's own home measure
it: ``k_o`` of those ``n_o`` device-days arrived on another home-sized network. Where that is more than the
re-logins' rate allows (the binomial tail ``P(Bin(n_o, r) >= k_o)`` at most ``fdr``: this population's owners
keep second places), a device's repeats count as one (``M = 1``, the two-valued law above): a second place shows
the structure at every login, so its repeats are no evidence beyond the first. (The single login's law assumes
the owners' rate no larger than ``r`` too; the tail is printed in the case, the single login is not refused on it.)
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.features import identity as idf

# every login within ? seconds of the account's latest logout before it, the device kept: the network left
# (the account's days on it, the accounts that ever used it) and the one arrived on
_KEPT_RELOGIN_SQL = ("""
WITH s AS (SELECT account, session, device, login_at, logout_at, """ + idf.NET_SQL + """ AS net FROM sessions),
net_acc AS (SELECT net, count(DISTINCT account) AS net_accounts FROM s WHERE net IS NOT NULL GROUP BY ALL),
acc_days AS (
  SELECT account, net, count(DISTINCT CAST(login_at AS DATE)) AS net_days FROM s WHERE net IS NOT NULL GROUP BY ALL
),
prev AS (
  SELECT y.account, y.session, any_value(y.device) AS device, any_value(y.net) AS net,
         arg_max(x.device, x.logout_at) AS prev_device, arg_max(x.net, x.logout_at) AS prev_net
  FROM s y JOIN s x ON x.account = y.account AND x.session <> y.session AND x.logout_at <= y.login_at
   AND x.logout_at >= y.login_at - to_microseconds(CAST(? * 1e6 AS BIGINT))
  GROUP BY y.account, y.session
)
SELECT count(*) FILTER (WHERE p.net IS DISTINCT FROM p.prev_net AND na.net_accounts <= ?) AS k, count(*) AS n
FROM prev p
JOIN net_acc pa ON pa.net = p.prev_net
JOIN acc_days d ON d.account = p.account AND d.net = p.prev_net
LEFT JOIN net_acc na ON na.net = p.net
WHERE p.device = p.prev_device AND pa.net_accounts <= ? AND d.net_days >= 2
""")


def kept_device_homes(con: duckdb.DuckDBPyConnection, handover_s: float, household_max: int) -> tuple[int, int]:
    """The population's null of the two-places test: its re-logins on the same device that left the account's
    own home network, and how many of them arrived on another home-sized network.

    Parameters
    ----------
    con : the warehouse (``sessions``).
    handover_s : a re-login counts when it comes this many seconds or fewer after the account's latest logout.
    household_max : a home-sized network: at most this many accounts ever used it.

    Returns
    -------
    ``(k, n)``: of ``n`` such re-logins, ``k`` arrived on another home-sized network."""
    k, n = con.execute(_KEPT_RELOGIN_SQL, [float(handover_s), int(household_max), int(household_max)]).fetchall()[0]
    return int(k or 0), int(n or 0)


def two_places_p(df: pl.DataFrame, k: int, n: int, household_max: int) -> np.ndarray:
    """Each row's two-places statistic ``T``.

    Parameters
    ----------
    df : the scored rows (``device_changed``, ``prev_net``, ``prev_net_accounts``, ``prev_net_days``, ``net``,
        ``net_accounts``, ``owner_device``).
    k, n : the null of :func:`kept_device_homes`.
    household_max : a home-sized network: at most this many accounts ever used it.

    Returns
    -------
    ``T`` per row: ``(k + 1) / (n + 1)`` for a seat left from the account's own home on another device and taken
    on another home-sized network by a device not the owner's, 1 for another row that left its own home on
    another device, NaN for the rest (not eligible: no test)."""
    def col(name: str, fill) -> pl.Expr:
        return pl.col(name).fill_null(fill) if name in df.columns else pl.lit(fill)
    own_home = (col("device_changed", False) & pl.col("prev_net").is_not_null()
                & (col("prev_net_accounts", household_max + 1) <= household_max) & (col("prev_net_days", 0) >= 2))
    sign = (own_home & pl.col("net").is_not_null() & (pl.col("net") != pl.col("prev_net")).fill_null(False)
            & (col("net_accounts", household_max + 1) <= household_max) & ~col("owner_device", False))
    flags = df.select(own_home.alias("e"), sign.alias("s"))
    r = (k + 1) / (n + 1)
    return np.where(flags["s"].to_numpy(), r, np.where(flags["e"].to_numpy(), 1.0, np.nan))


def product_p(u: np.ndarray, t: np.ndarray, r: float) -> np.ndarray:
    """The p-value of the product ``T U`` of a uniform p ``U`` and a two-valued ``T`` (``r`` with probability at most
    ``r``, else 1): ``P(T U <= c) = r min(1, c / r) + (1 - r) c`` at ``c`` the observed product; ``u`` where ``t`` is
    NaN (no test).

    >>> product_p(np.array([0.01, 0.01, 0.01]), np.array([1.0, 0.02, np.nan]), 0.02).round(6).tolist()
    [0.0198, 0.000396, 0.01]
    """
    u = np.asarray(u, dtype=float)
    t = np.asarray(t, dtype=float)
    c = u * np.where(np.isnan(t), 1.0, t)
    p = r * np.minimum(1.0, c / r) + (1.0 - r) * c
    return np.where(np.isnan(t), u, np.clip(p, 0.0, 1.0))


def _own_home(household_max: int) -> pl.Expr:
    """A login that left the account's own home on another device (home-sized network, used on two days or more)."""
    return (pl.col("device_changed").fill_null(False) & pl.col("prev_net").is_not_null()
            & (pl.col("prev_net_accounts").fill_null(household_max + 1) <= household_max)
            & (pl.col("prev_net_days").fill_null(0) >= 2) & pl.col("device").is_not_null())


def _other_home(household_max: int) -> pl.Expr:
    """A login that arrived on another home-sized network than the one left."""
    return (pl.col("net").is_not_null() & (pl.col("net") != pl.col("prev_net")).fill_null(False)
            & (pl.col("net_accounts").fill_null(household_max + 1) <= household_max))


def device_repeats(cand: pl.DataFrame, household_max: int) -> pl.DataFrame:
    """Per account and device that took a seat mid-event from the account's own home: on how many days, and on
    how many of them with the two-places structure (another home-sized network, a device that never starts play
    of its own on the account).

    Parameters
    ----------
    cand : every candidate login (``account``, ``device``, ``login_at``, ``device_changed``, ``prev_net``,
        ``prev_net_accounts``, ``prev_net_days``, ``net``, ``net_accounts``, ``dev_own_sessions``), tested or not.
    household_max : a home-sized network: at most this many accounts ever used it.

    Returns
    -------
    One row per (``account``, ``device``): ``places_days`` (days with such a login) and ``places_shown`` (days
    with the structure; 0 for a device that starts play of its own: the owner's)."""
    own = pl.col("dev_own_sessions").fill_null(0) > 0
    day = pl.col("login_at").cast(pl.Date)
    return (cand.filter(_own_home(household_max))
            .group_by("account", "device")
            .agg(places_days=day.n_unique().cast(pl.Int64),
                 places_shown=day.filter(_other_home(household_max) & ~own).n_unique().cast(pl.Int64)))


def owner_switch_homes(cand: pl.DataFrame, household_max: int) -> tuple[int, int]:
    """The owner's second places: the population's owner devices (devices that also start play of their own on the
    account) that took a seat mid-event from the account's own home, counted by device and day, and those that
    arrived on another home-sized network.

    Parameters
    ----------
    cand : every candidate login (as :func:`device_repeats`).
    household_max : a home-sized network: at most this many accounts ever used it.

    Returns
    -------
    ``(k_o, n_o)``: of ``n_o`` device-days, ``k_o`` arrived on another home-sized network."""
    sw = cand.filter(_own_home(household_max) & (pl.col("dev_own_sessions").fill_null(0) > 0))
    if sw.height == 0:
        return 0, 0
    d = (sw.with_columns(day=pl.col("login_at").cast(pl.Date))
         .group_by("account", "device", "day").agg(shown=_other_home(household_max).any()))
    return int(d["shown"].sum()), int(d.height)


def owner_places_p(k_o: int, n_o: int, r: float) -> float:
    """The binomial tail ``P(Bin(n_o, r) >= k_o)``: how surprising the owner devices' ``k_o`` arrivals on another
    home are at the re-logins' rate ``r`` (1 for ``k_o = 0``)."""
    return 1.0 if k_o <= 0 else float(sps.binom.sf(k_o - 1, n_o, r))


def repeated_product_p(u: np.ndarray, m: np.ndarray, big_m: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    """The repeated two-places statistic and its p-value with the play's.

    Parameters
    ----------
    u : the play's p-value of each row (uniform under the null).
    m, big_m : days with the structure and days the device took the seat from the account's own home (``big_m``
        NaN or 0: not eligible, no test).
    r : the structure's null rate on one day.

    Returns
    -------
    ``(t, p)``: ``T = P(Bin(M, r) >= m)`` (1 for ``m = 0``, NaN where not eligible) and the p-value of ``T U``
    under ``T``'s least favourable law, ``sum_j (G(j) - G(j + 1)) min(1, c / G(j))`` with ``G(j) = P(Bin(M, r) >=
    j)``, ``G(M + 1) = 0`` and ``c = T u`` (``u`` where not eligible). With ``M = 1`` it is :func:`product_p`.

    >>> t, p = repeated_product_p(np.array([0.5, 0.5]), np.array([1, 3]), np.array([1, 3]), 0.02)
    >>> t.round(6).tolist(), p.round(8).tolist()
    ([0.02, 8e-06], [0.0198, 1.566e-05])
    """
    u = np.asarray(u, dtype=float)
    big_m = np.nan_to_num(np.asarray(big_m, dtype=float), nan=0.0).astype(np.int64)
    m = np.minimum(np.nan_to_num(np.asarray(m, dtype=float), nan=0.0).astype(np.int64), big_m)
    ok = big_m > 0
    t = np.where(ok, np.where(m > 0, sps.binom.sf(m - 1, np.maximum(big_m, 1), r), 1.0), np.nan)
    p = u.copy()
    for i in np.flatnonzero(ok):
        g = np.append(sps.binom.sf(np.arange(big_m[i] + 1) - 1, big_m[i], r), 0.0)  # G(0) = 1, ..., G(M + 1) = 0
        g[0] = 1.0
        c = u[i] * t[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            p[i] = min(1.0, float(np.sum((g[:-1] - g[1:]) * np.minimum(1.0, np.where(g[:-1] > 0, c / g[:-1], 1.0)))))
    return t, p
