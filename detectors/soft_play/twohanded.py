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


#: the opponent of the rows :func:`with_own_prior` adds (no account's name: a NUL character leads it)
PRIOR_OPPONENT = "\x00two-handed prior"


def with_own_prior(cells: pl.DataFrame, where: pl.Expr, cell_columns: list[str]) -> pl.DataFrame:
    """``cells`` with, per player and cell of the check test's spots at tables dealt to three or more, the same
    cell dealt two-handed against :data:`PRIOR_OPPONENT`: the player's spots there (``n``), of them bets its bets
    there times the population's two-handed factor on that street (:func:`two_handed_factor`), rounded
    cumulatively over the player's rows.

    Parameters
    ----------
    cells : the window's counted cells with the cell ``two``; where : the check test's spots; cell_columns : the
        cell columns of ``cells`` (:attr:`~detectors.soft_play.cells.WindowDecisions.cell_columns`).

    Returns
    -------
    ``cells`` and the added rows (``fold`` and ``commit`` false), or ``cells`` as they are without the cell ``two``.

    Method: the rows act as pseudo-decisions in the player's own baseline in the cell dealt two-handed, so its rate
    there is its own rate at fuller tables times the population's factor, updated by its own two-handed spots
    against others, and the score test's variance carries that rate's uncertainty (the baseline's decisions, with
    the added ones) as it carries any own rate's.
    """
    if "two" not in cells.columns:
        return cells
    c = _spots(cells, where).filter(~pl.col("two"))
    # the check test's cells and the street (its street tests); the others (tournament or cash, the preflop tenth)
    # merged to their first: more spots per row, less rounding
    keys = [k for k in cell_columns if k not in ("opponent", "two", "vs_bet", "tour", "pbin")]
    # the population's factor on each street (its spots at tables of each size, every player's own rates)
    f = pl.DataFrame([{"street": k[0], "_f": (two_handed_factor(part, pl.lit(True)) or {}).get("factor")}
                      for k, part in _spots(cells, where).group_by("street")],
                     schema={"street": pl.Utf8, "_f": pl.Float64})
    g = c.group_by(keys, maintain_order=True).agg(
        pl.col("vs_bet", "tour", "pbin").first(), _n=pl.col(WEIGHT).sum(),
        _k=(pl.col("aggr").cast(pl.Int64) * pl.col(WEIGHT)).sum())
    # rounded cumulatively over each player's rows (each row's bets the step of the rounded running sum): the
    # player's added bets are its bets times the factors to within half a bet, however few each row holds
    g = g.join(f, on="street", how="left", maintain_order="left").with_columns(
        _t=pl.col("_k").cast(pl.Float64) * pl.col("_f").fill_null(1.0).clip(0.0, None))
    g = g.with_columns(_x=pl.col("_t").cum_sum().over("player"))
    g = g.with_columns(_b=(pl.col("_x").round(0) - (pl.col("_x") - pl.col("_t")).round(0)).cast(pl.Int64))
    g = g.with_columns(_b=pl.min_horizontal("_b", "_n"))
    rows = pl.concat([g.filter(pl.col("_b") > 0).with_columns(aggr=pl.lit(True), _c=pl.col("_b")),
                      g.filter(pl.col("_n") > pl.col("_b")).with_columns(aggr=pl.lit(False), _c=pl.col("_n") - pl.col("_b"))])
    rows = rows.with_columns(opponent=pl.lit(PRIOR_OPPONENT), two=pl.lit(True), fold=pl.lit(False),
                             commit=pl.lit(False), **{WEIGHT: pl.col("_c")})
    return pl.concat([cells, rows.select(cells.columns).cast(cells.schema)])
