"""The benign explanation of a seat hand-off candidate: the account's own history of device switches.

A player who moves to another device in the middle of events as a habit gives the detector a switch,
and a test of the play after it, in each of those events; by chance alone one of them will sooner or
later look shifted. The switch is then no evidence, and one shifted event among many is what the
habit predicts. So each account is a family of hypotheses, one per event in which it switched device
or network in mid-event (every such switch, also those followed by too few hands to be tested, which
count as tested with p = 1), and a candidate's p-value is its p-value adjusted within its account's
family by the Benjamini-Hochberg step-up (the family's smallest adjusted p is the Simes p of the
account, Simes, Biometrika 73, 1986). The false-discovery rate is then controlled by Benjamini-Hochberg
over the candidates on those adjusted p-values (families first, then the population: the idea of
Benjamini & Bogomolov, "Selective inference on multiple families of hypotheses", JRSS B 76(1), 2014,
in a simpler, more conservative form: BH over rows of within-family adjusted p-values). An account
with one or two switches keeps nearly its own p-value, so a strong shift after a single hand-over is
enough; an account that switched in many events with no shift after the others needs a shift that
many times stronger; a helper who took the seat in several events (the device's events pooled) keeps
its strength, since several small p-values in one family stay small under the step-up.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

from detectors import stats as mt


_EVENTS_SQL = """
SELECT s.player AS account, count(DISTINCT h.tournament_id) AS events_played
FROM seats s JOIN hands h USING (hand_id)
WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND s.player IN (SELECT account FROM _rb_sw_acc)
GROUP BY ALL
"""


def switch_history(con: duckdb.DuckDBPyConnection, cand: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """The account's switch history of each scored candidate and its p-value given that history.

    Parameters
    ----------
    con : the warehouse (seats, hands).
    cand : every candidate login (``account``, ``tournament_id``): a mid-event switch of device or
        network, tested or not.
    scores : one row per tested account-event with its own p-value ``p_event``.

    Returns
    -------
    ``scores`` with ``events_played`` (tournaments the account was dealt into), ``switch_events``
    (tournaments with a mid-event switch: the family's size), ``other_switches`` (those other than
    this row's), ``other_min_p`` (the smallest ``p_event`` among the account's other tested switch
    events; NaN if none was tested), ``p_value`` (``p_event`` adjusted within the account's family)
    and ``q_value`` (Benjamini-Hochberg over the rows of ``p_value``)."""
    sw = (pl.concat([cand.select("account", "tournament_id"), scores.select("account", "tournament_id")],
                    how="vertical_relaxed").unique().group_by("account").len("switch_events"))
    con.register("_rb_sw_acc", sw.select("account"))
    try:
        played = con.sql(_EVENTS_SQL).pl()
    finally:
        con.unregister("_rb_sw_acc")
    df = (scores.join(sw, on="account", how="left").join(played, on="account", how="left")
          .with_columns(pl.col("switch_events").fill_null(1).cast(pl.Int64),
                        pl.col("events_played").fill_null(0).cast(pl.Int64)))
    return given_switches(df)


def given_switches(df: pl.DataFrame) -> pl.DataFrame:
    """Each row's p-value given its account's switches, and the q-values over the rows.

    Parameters
    ----------
    df : one row per tested account-event: ``account``, ``p_event`` (its own p-value) and
        ``switch_events`` (the account's events with a mid-event switch, tested or not).

    Returns
    -------
    ``df`` in its order with ``other_switches``, ``other_min_p``, ``p_value`` (Benjamini-Hochberg
    within the account's family of ``switch_events`` hypotheses, the untested ones at p = 1) and
    ``q_value`` (Benjamini-Hochberg over the rows of ``p_value``)."""
    df = df.with_columns(pl.col("switch_events").cast(pl.Int64))
    p = df["p_event"].cast(pl.Float64).fill_nan(1.0).fill_null(1.0).to_numpy()
    acc = df["account"].to_numpy()
    n_fam = np.maximum(df["switch_events"].to_numpy(), 1)
    adj = np.ones(df.height)
    other_min = np.full(df.height, np.nan)
    # one family per account (a handful of rows each; candidates, not hands)
    for a in np.unique(acc):
        idx = np.flatnonzero(acc == a)
        fam = np.concatenate([p[idx], np.ones(max(0, int(n_fam[idx].max()) - idx.size))])
        adj[idx] = mt.bh_qvalues(fam)[: idx.size]
        for j in idx:
            rest = p[idx[idx != j]]
            other_min[j] = rest.min() if rest.size else np.nan
    df = df.with_columns(
        other_switches=(pl.max_horizontal(pl.col("switch_events"), pl.len().over("account")) - 1).clip(lower_bound=0),
        other_min_p=pl.Series(other_min),
        p_value=pl.Series(adj),
    )
    return df.with_columns(q_value=pl.Series(mt.bh_qvalues(adj, untested=1.0)))
