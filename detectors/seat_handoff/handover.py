"""The "slow hand-over" test of a seat hand-off: how long the seat stood empty between the account's logout and the
login that took it, against this population's own re-logins of the same kind.

A helper is sent for, or told, and logs in on their own machine; an owner who moves to another device, or comes
back on the same one, does so at the pace of this population's own re-logins. Under the null (no second person)
a candidate login's gap since the account's latest logout is one more draw among the population's re-logins of
its kind: every login within ``handover_s`` of the account's latest logout, split by whether it kept the device
of that logout (a reconnect, a move of network) or not (a move to another device). The other accounts' and
devices' re-logins of the kind are the null (the device's own are left out: a helper's repeated long gaps would
otherwise fill the tail they are judged against); of those ``n`` gaps the ``j``-th longest is the line, ``j`` the
largest count with ``j / (n + 1) <= fdr``: a gap beyond it is *slow*, a chance of at most ``j / (n + 1)`` for a
login exchangeable with the null's (the rank of one value among ``n + 1``).

**A device's hand-overs together** (:func:`slow_counts`). A helper brings the same machine, and the same pace,
each time; so does a person. A device's logins are not independent draws (a person's own pace repeats, and an
honest device just beyond the line once is beyond it again), so they are not multiplied: the device counts once,
by its shortest hand-over. ``T = j / (n + 1)`` where every one of its ``M`` hand-overs is
slow (its shortest beyond the line: a chance of at most that of any one login, whatever ties them together), 1
otherwise. (:func:`slow_law` gives the exact law of ``m`` slow of ``M`` when the logins are exchangeable with the
null's; the detector uses it at ``M = 1``.)

``T`` and the row's p ``U`` (the play's, with the identity's) are combined by the exact law of their product,
``r min(1, c / r) + (1 - r) c`` with ``r = j / (n + 1)`` and ``c = T U`` (as
:func:`detectors.seat_handoff.places.product_p`): a row whose device was not slow every time pays a factor below 2,
one that was gains about ``1 / (2 r)``.

**The benign explanation** (:func:`owner_slow`): an owner who always takes minutes to come back (a slow machine
to start, a walk to another room). A device that also starts play of its own on the account is the owner's (no
second person): its rows are not tested (a helper on the owner's own machine is not told from an owner's habit by
the clock). The population's owner devices measure the habit: of their ``n_o`` hand-over logins ``k_o`` are slow;
where the binomial tail ``P(Bin(n_o, fdr) >= k_o)`` is at most ``fdr`` (this population's owners come back slower
than its re-logins: a take-over-only device is then no longer a draw like the null's), the test is not made.

The test is made where the null has at least ``1 / fdr - 1`` re-logins of the kind (``j >= 1``: one slow login
can reach the level) and the two-places test (:mod:`detectors.seat_handoff.places`) is
not: where the population's homes keep their labels, where the seat was taken is the login's structure, and a
second structure would charge its price (a factor below 2) to every row, the helpers who come back within seconds
included. Elsewhere, and at a login more than ``handover_s`` after a logout,
the row keeps its p.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

# every login within ? seconds of the account's latest logout before it: its device, whether it kept the device of
# that logout, and the gap in seconds
_RELOGIN_GAPS_SQL = """
SELECT y.account, any_value(y.device) AS device,
       any_value(y.device) IS NOT DISTINCT FROM arg_max(x.device, x.logout_at) AS kept,
       epoch(any_value(y.login_at)) - epoch(max(x.logout_at)) AS gap
FROM sessions y JOIN sessions x ON x.account = y.account AND x.session <> y.session AND x.logout_at <= y.login_at
 AND x.logout_at >= y.login_at - to_microseconds(CAST(? * 1e6 AS BIGINT))
GROUP BY y.account, y.session
"""


def relogin_gaps(con: duckdb.DuckDBPyConnection, handover_s: float) -> pl.DataFrame:
    """The population's re-logins: every login within ``handover_s`` of the account's latest logout before it.

    Parameters
    ----------
    con : the warehouse (``sessions``).
    handover_s : a re-login counts when it comes this many seconds or fewer after the account's latest logout.

    Returns
    -------
    One row per re-login: ``account``, ``device``, ``kept`` (the device of that logout) and ``gap`` (seconds)."""
    df = con.sql(_RELOGIN_GAPS_SQL, params=[float(handover_s)]).pl()
    return df.with_columns(pl.col("kept").fill_null(False), pl.col("gap").cast(pl.Float64))


def slow_counts(cand: pl.DataFrame, gaps: pl.DataFrame, handover_s: float, fdr: float) -> pl.DataFrame:
    """Per account, device and kind of login (``device_changed``): the hand-over logins and the slow ones.

    Parameters
    ----------
    cand : every candidate login (``account``, ``session``, ``device``, ``device_changed``, ``since_logout``,
        ``dev_own_sessions``), tested or not.
    gaps : the population's re-logins (:func:`relogin_gaps`).
    handover_s, fdr : a hand-over login comes at most ``handover_s`` after a logout; the line's level.

    Returns
    -------
    One row per (``account``, ``device``, ``device_changed``) with hand-over logins where the null can reach the
    level: ``slow_logins`` (``M``), ``slow_shown`` (``m``), ``slow_null`` (``n``: the other accounts' and
    devices' re-logins of the kind), ``slow_rank`` (``j``), ``slow_line`` (the ``j``-th longest of their gaps,
    seconds), ``slow_owner`` (a device that also starts play of its own on the account)."""
    schema = {"account": pl.Utf8, "device": pl.Utf8, "device_changed": pl.Boolean, "slow_logins": pl.Int64,
              "slow_shown": pl.Int64, "slow_null": pl.Int64, "slow_rank": pl.Int64, "slow_line": pl.Float64,
              "slow_owner": pl.Boolean}
    c = (cand.filter(pl.col("device").is_not_null() & pl.col("since_logout").is_not_null()
                     & (pl.col("since_logout") <= handover_s))
         .with_columns(pl.col("device_changed").fill_null(True))
         .unique(["account", "session"]))
    rows = []
    acc_g, dev_g = gaps["account"].to_numpy(), gaps["device"].to_numpy()
    kept_g, gap_g = gaps["kept"].to_numpy(), gaps["gap"].to_numpy()
    for (acc, dev, changed), g in c.group_by(["account", "device", "device_changed"]):
        others = np.sort(gap_g[(kept_g == (not changed)) & ~((acc_g == acc) & (dev_g == dev))])
        n = int(others.size)
        j = int(np.floor(fdr * (n + 1) + 1e-9))
        if j < 1:
            # too few re-logins of the kind for one slow login to reach the level: not made (a helper who comes
            # back within seconds would pay the law's price for a test that cannot find him)
            continue
        line = float(others[-j])
        x = g["since_logout"].to_numpy().astype(float)
        rows.append({"account": acc, "device": dev, "device_changed": bool(changed), "slow_logins": int(x.size),
                     "slow_shown": int((x > line).sum()), "slow_null": n, "slow_rank": j, "slow_line": line,
                     "slow_owner": bool((g["dev_own_sessions"].fill_null(0) > 0).any())})
    return pl.DataFrame(rows, schema=schema)


def owner_slow(counts: pl.DataFrame, fdr: float) -> tuple[int, int, float]:
    """The owners' slow hand-overs: the population's owner devices' hand-over logins and the slow ones.

    Parameters
    ----------
    counts : the frame of :func:`slow_counts`.
    fdr : the line's level (each login's chance of a slow gap under the null is at most this).

    Returns
    -------
    ``(k_o, n_o, p)``: ``k_o`` slow of ``n_o`` logins, and the binomial tail ``P(Bin(n_o, fdr) >= k_o)``."""
    o = counts.filter(pl.col("slow_owner"))
    k_o, n_o = int(o["slow_shown"].sum()), int(o["slow_logins"].sum())
    return k_o, n_o, 1.0 if k_o <= 0 else float(sps.binom.sf(k_o - 1, n_o, fdr))


def slow_law(big_m: int, n: int, j: int) -> np.ndarray:
    """``G(k) = P(X >= k)`` for ``k = 0 .. M + 1``: ``X`` the number of a device's ``M`` gaps beyond the ``j``-th
    longest of ``n`` others, all ``n + M`` exchangeable (at least ``k`` of the ``k + j - 1`` longest are the
    device's: a hypergeometric tail); ``G(0) = 1``, ``G(M + 1) = 0``.

    >>> slow_law(1, 39, 2).round(6).tolist()
    [1.0, 0.05, 0.0]
    """
    ks = np.arange(1, big_m + 1)
    tail = sps.hypergeom.sf(ks - 1, n + big_m, big_m, ks + j - 1) if big_m else np.zeros(0)
    return np.concatenate([[1.0], np.clip(tail, 0.0, 1.0), [0.0]])


def slow_product_p(u: np.ndarray, m: np.ndarray, big_m: np.ndarray, n: np.ndarray, j: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The slow hand-over statistic and its p-value with the row's.

    Parameters
    ----------
    u : each row's p-value (uniform under the null).
    m, big_m : the device's slow hand-over logins and all its hand-over logins (``big_m`` NaN or 0: no test).
    n, j : the null's size and the line's rank (:func:`slow_counts`).

    Returns
    -------
    ``(t, p)``: ``T = G(m)`` (:func:`slow_law`; NaN where not tested) and the p-value of ``T U`` under ``T``'s
    least favourable law, ``sum_k (G(k) - G(k + 1)) min(1, c / G(k))``, ``c = T u`` (``u`` where not tested).

    >>> t, p = slow_product_p(np.array([0.5, 0.5]), np.array([1, 0]), np.array([1, 1]), np.array([39, 39]),
    ...                       np.array([2, 2]))
    >>> t.round(6).tolist(), p.round(6).tolist()
    ([0.05, 1.0], [0.04875, 0.525])
    """
    u = np.asarray(u, dtype=float)
    big_m = np.nan_to_num(np.asarray(big_m, dtype=float), nan=0.0).astype(np.int64)
    m = np.minimum(np.nan_to_num(np.asarray(m, dtype=float), nan=0.0).astype(np.int64), big_m)
    n = np.nan_to_num(np.asarray(n, dtype=float), nan=0.0).astype(np.int64)
    j = np.nan_to_num(np.asarray(j, dtype=float), nan=0.0).astype(np.int64)
    t, p = np.full(u.size, np.nan), u.copy()
    for i in np.flatnonzero((big_m > 0) & (j > 0)):
        g = slow_law(int(big_m[i]), int(n[i]), int(j[i]))
        t[i] = g[m[i]]
        c = u[i] * t[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            p[i] = min(1.0, float(np.sum((g[:-1] - g[1:]) * np.minimum(1.0, np.where(g[:-1] > 0, c / g[:-1], 1.0)))))
    return t, p


class HandoverMixin:
    """The slow hand-over test of :class:`~detectors.seat_handoff.SeatHandoffDetector`."""

    def _with_slow_handover(self, con: duckdb.DuckDBPyConnection, df: pl.DataFrame, cand: pl.DataFrame
                            ) -> pl.DataFrame:
        """``df`` with the slow hand-over test (module docstring): ``p_slow`` (``T``; NaN where not tested), the
        device's ``slow_logins`` and ``slow_shown``, the null's ``slow_null``, ``slow_rank`` and ``slow_line``, and
        ``p_value`` combined with ``T`` by their product's exact law where tested (sets ``slow_owner_``: the owner
        devices' slow hand-over logins, all of them, and their binomial tail, ``(k_o, n_o, p)``).

        Parameters
        ----------
        con : the warehouse (``sessions``).
        df : the scored rows (``account``, ``device``, ``device_changed``, ``p_value``).
        cand : every candidate login (:func:`slow_counts`).

        Returns
        -------
        ``df`` with the columns above."""
        cols = ("slow_logins", "slow_shown", "slow_null", "slow_rank", "slow_line", "slow_owner")
        self.slow_owner_ = (0, 0, 1.0)
        k, n = getattr(self, "places_null_", (0, 0))
        places_made = self.two_places and (k + 1) / (n + 1) <= self.fdr
        if places_made or not (self.slow_handover and self.has_sessions_ and self.has_logouts_ and "device" in df.columns):
            # where the two-places test is made (the account's homes keep their labels), it is the structure of
            # the login; the slow hand-over would add its price to every row
            return df.with_columns(p_slow=pl.lit(float("nan")))
        counts = slow_counts(cand, relogin_gaps(con, self.handover_s), self.handover_s, self.fdr)
        self.slow_owner_ = owner_slow(counts, self.fdr)
        df = (df.drop(*cols, strict=False).with_row_index("_order")
              .join(counts, on=["account", "device", "device_changed"], how="left").sort("_order").drop("_order"))
        # an owner's own device (it starts play of its own) slow to come back is the owner's habit, not evidence
        owner = df["slow_owner"].fill_null(False)
        df = df.with_columns(pl.when(~owner).then(pl.col("slow_logins")).alias("slow_logins"))
        if self.slow_owner_[2] <= self.fdr:
            # this population's owners come back slowly more often than its re-logins allow: not made
            return df.with_columns(p_slow=pl.lit(float("nan")))
        # the device's shortest hand-over beyond the line (every one of its hand-overs slow): one chance of j / (n + 1)
        # whatever ties its logins together (a person's own pace is the same at every login)
        big_m = df["slow_logins"].to_numpy()
        tested = ~np.isnan(np.asarray(big_m, dtype=float))
        every = tested & (df["slow_shown"].fill_null(0).to_numpy() >= np.nan_to_num(np.asarray(big_m, dtype=float)))
        t, p = slow_product_p(df["p_value"].cast(pl.Float64).to_numpy(), every.astype(np.int64),
                              tested.astype(np.int64), df["slow_null"].to_numpy(), df["slow_rank"].to_numpy())
        return df.with_columns(p_slow=pl.Series(t), p_value=pl.Series(p))
