"""The whole-hand passivity test's null, taken from the population's own hands.

:func:`detectors.stats.hand_passivity_test` reads a heads-up hand as passive (no bet from either) with probability
pi_h = prod (1 - r_i) over its decisions, each at the player's own rate, as if the decisions of a hand were
independent and their number fixed in advance. Neither holds in poker: a check lets the hand go on to the next
street (another decision), a bet often ends it, so the hands with many decisions, the ones with the smallest pi_h,
are mostly the hands already checked through; and two weak holdings check down together. On the tuning populations
the hands predicted passive with probability 0.001-0.01 were passive 5-30 % of the time (docs/measurements.md,
2026-12-07), so a pair with four or five such hands reached p 1e-5 on chance alone.

:func:`calibrate_hand_sums` replaces each hand's pi_h by the share of the population's own hands with the same
predicted pi_h (bins of log pi_h, ``width`` wide; the bins at the low end merged until each holds ``min_hands``
hands) that were passive: a histogram-binning calibration (Zadrozny & Elkan, ICML 2001) of the independence model
against the population, in which nearly every pair is honest. A colluding pair's own hands are in it too, which
only raises the calibrated rates (a conservative null); a hand's probability is only ever raised
(:func:`calibrate_hand_sums`). The hands of the pair tested then weigh by how unusual
their passivity is among hands like them in the population, not under a model the game does not follow.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def calibration_table(h: pl.DataFrame, *, width: float = 0.5, min_hands: int = 50) -> pl.DataFrame:
    """The population's passive share per bin of predicted log pi.

    Parameters
    ----------
    h : per hand and pair (:func:`detectors.stats.hand_passivity_sums`' columns): ``bets`` and ``logpi``.
    width : the bins' width in log pi (natural log).
    min_hands : bins at the low end (smallest pi) are merged upwards until each holds at least this many hands.

    Returns
    -------
    ``lo`` (the bin's lower edge in log pi; -inf for the lowest), ``hands``, ``passive``, ``pred`` (the mean
    predicted pi) and ``rate``: (passive + 0.5) / (hands + 1), the calibrated probability of a passive hand
    (Jeffreys' estimate: never 0 or 1), sorted by ``lo``.
    """
    cols = {"lo": pl.Float64, "hands": pl.Int64, "passive": pl.Int64, "pred": pl.Float64, "rate": pl.Float64}
    if h.is_empty():
        return pl.DataFrame(schema=cols)
    b = (h.filter(pl.col("logpi").is_not_null() & pl.col("logpi").is_finite())
         .with_columns(k=(pl.col("logpi") / width).floor().cast(pl.Int64), x=(pl.col("bets") == 0).cast(pl.Int64))
         .group_by("k").agg(hands=pl.len().cast(pl.Int64), passive=pl.col("x").sum().cast(pl.Int64),
                            pisum=pl.col("logpi").exp().sum())
         .sort("k"))
    # merge from the low end: a bin joins the next one up until the running group holds min_hands hands
    k, n = b["k"].to_numpy(), b["hands"].to_numpy()
    group = np.zeros(len(k), dtype=np.int64)
    g, acc = 0, 0
    for i in range(len(k)):  # one step per bin (tens), never per hand
        group[i] = g
        acc += int(n[i])
        if acc >= min_hands:
            g, acc = g + 1, 0
    if acc and g > 0:  # a thin last group at the top joins the one below
        group[group == g] = g - 1
    t = b.with_columns(grp=pl.Series(group)).group_by("grp").agg(
        lo=pl.col("k").min(), hands=pl.col("hands").sum(), passive=pl.col("passive").sum(), pisum=pl.col("pisum").sum())
    t = t.sort("lo").with_columns(
        lo=pl.when(pl.int_range(pl.len()) == 0).then(float("-inf")).otherwise(pl.col("lo").cast(pl.Float64) * width),
        pred=pl.col("pisum") / pl.col("hands"),
        rate=(pl.col("passive").cast(pl.Float64) + 0.5) / (pl.col("hands").cast(pl.Float64) + 1.0))
    return t.select(list(cols))


def calibrate_hand_sums(h: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """``h`` (per hand and pair: ``bets``, ``logpi``) with ``logpi`` raised to the log of the calibrated probability
    of a passive hand (``table``, :func:`calibration_table`) of the bin its predicted log pi falls in, never lowered
    below the product's; the rows' order kept. Unchanged when the table is empty.

    Only raised: where the population's hands like it were passive less often than the product says (the short
    hands: a hand of one rated decision is mostly one that a bet ended), the bin's rate reflects which hands get
    that few decisions, not how surprising a check is, and lowering pi there made passive short hands look
    improbable (new wrong flags on the tuning populations, docs/measurements.md 2026-12-07). A null probability
    at or above the true one keeps the test's tail conservative (the passive count is stochastically larger under
    it)."""
    if h.is_empty() or table.is_empty():
        return h
    lo = table["lo"].to_numpy()
    rate = np.log(table["rate"].to_numpy())
    x = h["logpi"].to_numpy(allow_copy=True).astype(float)
    idx = np.clip(np.searchsorted(lo, np.nan_to_num(x, nan=0.0), side="right") - 1, 0, len(lo) - 1)
    return h.with_columns(logpi=pl.Series(np.where(np.isfinite(x), np.maximum(x, rate[idx]), x)))
