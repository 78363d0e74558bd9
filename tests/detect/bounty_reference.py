"""References for bounty collusion's presence test, written for the tests (not collected: no ``test_`` prefix).

The detector counts its presence rows in DuckDB
(:meth:`~detectors.features.gameplay.bounty_counts.BountyPresenceTable.presence_counts`) and sums the exact tail a
chunk of pairs at a time (:func:`~detectors.features.gameplay.bounty_tests.bounty_presence_tested`). The tests
compare that shipped path with what is here: the rows of :func:`~detectors.features.gameplay.bounty_presence`
counted one by one in Polars (:func:`presence_counts`), the pairs with every bin's list (:func:`presence_pairs`)
and the tail of every pair in one call, without the chunks' shared folds (:func:`presence_unordered`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.features.gameplay.bounty import (BOUNTY_CONTEXT_BINS, BOUNTY_LOOSENESS_TAU, PRESENCE_PAIR_COLS,
                                                _cell_counts, presence_parts)
from detectors.features.gameplay.bounty_tests import UNORDERED_SCHEMA, _components, _unordered_sums
from detectors.features.gameplay.distributions import overdispersed_sum_sf


def presence_counts(rows: pl.DataFrame, context: tuple[str, ...] = BOUNTY_CONTEXT_BINS) -> tuple:
    """The four items of ``BountyPresenceTable.presence_counts`` counted from ``rows`` (:func:`bounty_presence`'s
    frame or hand-made rows with ``player``, ``partner``, ``hand_id``, ``seq``, ``cont``, ``sbin``, ``cbin``, the
    ``context`` columns and optionally ``tournament_id``): per (player, partner, tournament, cell) ``n``, ``k``,
    per (player, tournament, cell) the distinct decisions ``Dn``, ``Dk``, per ordered pair the sorted tournaments
    and hands of its continuations, and whether the rows carried tournaments. Method: the decisions with cards
    known, the cells strength x price x ``context`` (a null context cell as -1), counted with ``group_by``."""
    d = rows.filter(pl.col("sbin").is_not_null()) if not rows.is_empty() else rows
    bins = ["sbin", "cbin", *(c for c in context if c in d.columns)]
    d = d.with_columns(pl.col("cont").cast(pl.Int64).alias("_y"), *(pl.col(c).fill_null(-1) for c in bins[2:]))
    tour = "tournament_id" in d.columns
    if not tour:
        d = d.with_columns(tournament_id=pl.lit(""))
    pt, dt = _cell_counts(d, ["tournament_id", *bins])
    where = d.filter(pl.col("cont")).group_by(["player", "partner"]).agg(
        tournaments=pl.col("tournament_id").unique().sort(), hands=pl.col("hand_id").unique().sort())
    return pt, dt, where, tour


def presence_pairs(counts: tuple, *, looseness_tau: float | None = BOUNTY_LOOSENESS_TAU,
                   tournament_effect: bool = True) -> pl.DataFrame:
    """The ordered pairs of :func:`~detectors.features.gameplay.bounty.presence_parts` made from ``counts``, each
    with its components as lists: ``bin_n``, ``bin_r``, ``bin_s``, ``bin_t`` (one entry per tournament and cell)."""
    g, comps = presence_parts(list(counts), looseness_tau=looseness_tau, tournament_effect=tournament_effect)
    comps = comps.group_by(["player", "partner"], maintain_order=True).agg(pl.col("bin_n", "bin_r", "bin_s", "bin_t"))
    return g.join(comps, on=["player", "partner"], how="left").select(*PRESENCE_PAIR_COLS, "bin_n", "bin_r", "bin_s",
                                                                      "bin_t", "sigma2")


def presence_unordered(pairs: pl.DataFrame) -> pl.DataFrame:
    """Both directions of :func:`presence_pairs` summed per unordered pair with the exact tail ``pres_p`` of every
    pair in one call of :func:`overdispersed_sum_sf` (its own folds, no chunks): the columns of
    ``bounty_presence_tested``. Method: the lists exploded, one component per row, a block per (pair, direction,
    tournament); ``sigma2`` the pairs' tournament effect (0 without the column)."""
    if pairs.is_empty():
        return pl.DataFrame(schema=UNORDERED_SCHEMA)
    g = _unordered_sums(pairs)
    d = pairs.with_columns(player=pl.min_horizontal("player", "partner"), opponent=pl.max_horizontal("player", "partner"),
                           dir=pl.col("player"))
    bins = d.select("player", "opponent", "dir", "bin_n", "bin_r", "bin_s", "bin_t").explode(
        ["bin_n", "bin_r", "bin_s", "bin_t"]).drop_nulls().join(g.select("player", "opponent", "_g"),
                                                               on=["player", "opponent"])
    sigma2 = float(pairs["sigma2"].drop_nulls().max() or 0.0) if "sigma2" in pairs.columns else 0.0
    p = overdispersed_sum_sf(*_components(bins.select("_g", "dir", "bin_n", "bin_r", "bin_s", "bin_t")),
                             g["pres_k"].to_numpy(), float(np.sqrt(sigma2)))
    return g.with_columns(pl.Series("pres_p", np.clip(p, 1e-300, 1.0))).select(list(UNORDERED_SCHEMA))
