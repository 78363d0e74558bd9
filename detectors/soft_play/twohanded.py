"""Soft play's hands dealt to two players: the population's own figure for the benign explanation the cell ``two``
answers, and each pair's spots there.

At a table dealt to two players everyone value-bets less than at a table dealt to three or more, even heads-up at
the decision (the range an opponent holds is wider, the pots smaller). Two regulars who meet at such a table play
most of their spots against each other there; read against their own rates at fuller tables they would look as if
they spared each other. The check test therefore reads those spots in a cell of their own (``two``, each player's
rate there shrunk to the population's, :class:`~detectors.soft_play.SoftPlayDetector`'s ``two_tests``), and the
case shows the figure that makes the explanation checkable: how the whole population bets there against its own
rates at fuller tables (:func:`two_handed_factor`), and how many of the pair's spots were there
(:func:`pair_two_spots`).
"""

from __future__ import annotations

import math

import polars as pl

from detectors.stats import WEIGHT

#: the cells a player's rate at fuller tables is read in for :func:`two_handed_factor` (with the player)
FACTOR_CELLS = ["street", "sbin", "tour"]


def _spots(cells: pl.DataFrame, where: pl.Expr) -> pl.DataFrame:
    """The counted cells (:meth:`~detectors.soft_play.cells.WindowDecisions.cells`, with ``two``) of the check
    test's spots ``where``: heads-up at the decision, the strength known."""
    return cells.filter(pl.col("hu") & pl.col("sbin").is_not_null() & where)


def two_handed_factor(cells: pl.DataFrame, where: pl.Expr) -> dict | None:
    """The population's bets in its spots dealt two-handed against each player's own rate at tables dealt to
    three or more.

    Parameters
    ----------
    cells : the window's counted cells with the cell ``two`` (rows of decisions counted in ``_w``, ``aggr``).
    where : the check test's spots (its selection in :meth:`SoftPlayDetector._baseline_args`).

    Returns
    -------
    ``spots`` (decisions dealt two-handed of players with a rate at fuller tables in the same cell), ``players``,
    ``bets``, ``expected``, ``factor`` (bets / expected) and ``z`` ((bets - expected) / sqrt(sum n r (1 - r))), or
    None when there is no such spot (no ``two`` column, or none dealt two-handed).

    Method: per player and cell (street, strength bin, tournament or cash) the rate at fuller tables
    (bets + 0.5) / (spots + 1); its spots dealt two-handed expect n r bets, summed over the population.
    """
    if "two" not in cells.columns:
        return None
    c = _spots(cells, where).with_columns(_k=pl.col("aggr").cast(pl.Int64) * pl.col(WEIGHT))
    g = c.group_by("player", *FACTOR_CELLS, "two").agg(n=pl.col(WEIGHT).sum(), k=pl.col("_k").sum())
    full = g.filter(~pl.col("two")).select(
        "player", *FACTOR_CELLS, r=(pl.col("k").cast(pl.Float64) + 0.5) / (pl.col("n").cast(pl.Float64) + 1.0))
    t = g.filter(pl.col("two")).join(full, on=["player", *FACTOR_CELLS])
    if t.is_empty():
        return None
    s = t.select(spots=pl.col("n").sum(), players=pl.col("player").n_unique(), bets=pl.col("k").sum(),
                 expected=(pl.col("n") * pl.col("r")).sum(),
                 var=(pl.col("n") * pl.col("r") * (1 - pl.col("r"))).sum()).row(0, named=True)
    e, v = float(s["expected"]), float(s["var"])
    return {"spots": int(s["spots"]), "players": int(s["players"]), "bets": int(s["bets"]), "expected": e,
            "factor": s["bets"] / e if e > 0 else None,
            "z": (s["bets"] - e) / math.sqrt(v) if v > 0 else None}


def pair_two_spots(cells: pl.DataFrame, where: pl.Expr) -> pl.DataFrame:
    """Per unordered pair (player < opponent): ``chk_two_n``, the check test's spots between them (both
    directions, ``where``) in hands dealt two-handed; an empty frame without the cell ``two``."""
    if "two" not in cells.columns:
        return pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8, "chk_two_n": pl.Int64})
    c = _spots(cells, where).filter(pl.col("two"))
    return c.group_by(player=pl.min_horizontal("player", "opponent"),
                      opponent=pl.max_horizontal("player", "opponent")).agg(
        chk_two_n=pl.col(WEIGHT).sum().cast(pl.Int64))
