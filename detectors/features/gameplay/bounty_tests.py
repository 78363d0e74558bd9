"""The per-pair tests of bounty collusion: continuations with the partner in, wide calls, unshadowed and
strongest-partner tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
from scipy import stats as _st

from detectors import stats
from detectors.features.gameplay.bounty import (BOUNTY_CONTEXT_BINS, BOUNTY_LOOSENESS_TAU, _bounty_cells,
                                                bounty_tournament_effect, presence_parts)
from detectors.features.gameplay.distributions import betabinom_sum_sf, overdispersed_sum_sf, sum_sf_folds

#: the columns of :func:`presence_tail` and :func:`bounty_presence_tested`
UNORDERED_SCHEMA = {"player": pl.Utf8, "opponent": pl.Utf8, "pres_n": pl.Float64, "pres_k": pl.Float64,
                    "pres_e": pl.Float64, "pres_p": pl.Float64, "a_n": pl.Float64, "a_k": pl.Float64,
                    "a_e": pl.Float64, "a_own": pl.Float64, "b_n": pl.Float64, "b_k": pl.Float64, "b_e": pl.Float64,
                    "b_own": pl.Float64, "pres_tournaments": pl.List(pl.Utf8), "pres_hands": pl.List(pl.Utf8)}
#: components of the presence test's exact tail summed at once by :func:`presence_tail` (whole pairs)
PRESENCE_TAIL_CHUNK = 250_000


def _unordered_sums(pairs: pl.DataFrame) -> pl.DataFrame:
    """The sums of :func:`presence_tail` per unordered pair (every column but ``pres_p``), sorted by
    (``player``, ``opponent``) with their row number ``_g``. ``pairs``: the ordered pairs of
    :func:`~detectors.features.gameplay.bounty.presence_parts`."""
    lo = pl.min_horizontal("player", "partner")
    d = pairs.with_columns(x=lo, y=pl.max_horizontal("player", "partner"), fwd=pl.col("player") == lo)
    return d.group_by(pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(
        pres_n=pl.col("n").sum(), pres_k=pl.col("observed").sum(), pres_e=pl.col("expected").sum(),
        a_n=pl.col("n").filter("fwd").sum(), a_k=pl.col("observed").filter("fwd").sum(),
        a_e=pl.col("expected").filter("fwd").sum(), a_own=pl.col("rate_own").filter("fwd").first(),
        b_n=pl.col("n").filter(~pl.col("fwd")).sum(), b_k=pl.col("observed").filter(~pl.col("fwd")).sum(),
        b_e=pl.col("expected").filter(~pl.col("fwd")).sum(), b_own=pl.col("rate_own").filter(~pl.col("fwd")).first(),
        pres_tournaments=pl.col("tournaments").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls().unique().sort(),
        pres_hands=pl.col("hands").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls().unique().sort(),
    ).sort("player", "opponent").with_row_index("_g")


def _components(bins: pl.DataFrame) -> list[np.ndarray]:
    """The arguments of :func:`overdispersed_sum_sf` before the counts for the presence test's exact tail: each
    component's pair, block, decisions, rate and strength.

    ``bins``: one row per component, ``_g`` its pair, ``dir`` the deciding player, ``bin_n``, ``bin_r``, ``bin_s``,
    ``bin_t`` (its tournament). Method: a block is one direction of the pair in one tournament (one draw of the
    player's tournament effect), numbered in the order of (pair, direction, tournament)."""
    block = (pl.struct("_g", "dir", "bin_t").rank("dense") - 1).cast(pl.Int64)
    bins = bins.with_columns(_b=block if not bins.is_empty() else pl.lit(0, pl.Int64))
    return [bins[c].to_numpy() for c in ("_g", "_b", "bin_n", "bin_r", "bin_s")]


def bounty_presence_tested(counts: Callable[[], tuple], *, looseness_tau: float | None = BOUNTY_LOOSENESS_TAU,
                           tournament_effect: bool = True, chunk: int | None = None) -> pl.DataFrame:
    """The presence test per unordered pair from counts: :func:`presence_tail` of
    :func:`~detectors.features.gameplay.bounty.presence_parts`.

    ``counts``: a callable returning the four items of
    :meth:`~detectors.features.gameplay.bounty_counts.BountyPresenceTable.presence_counts`, called once here so
    that no caller holds the per-tournament counts through the test. ``looseness_tau``, ``tournament_effect``: as
    :func:`~detectors.features.gameplay.bounty.presence_parts`; ``chunk``: as :func:`presence_tail`. Returns
    :data:`UNORDERED_SCHEMA`."""
    parts = list(presence_parts(list(counts()), looseness_tau=looseness_tau, tournament_effect=tournament_effect))
    return presence_tail(parts, chunk=chunk)


def presence_tail(parts: list, *, chunk: int | None = None) -> pl.DataFrame:
    """Both directions of the ordered pairs summed per unordered pair (``player`` < ``opponent``), with the exact
    tail of the pair's continuations with the other still in, a chunk of pairs at a time.

    ``parts``: [pairs, components] of :func:`~detectors.features.gameplay.bounty.presence_parts` (the pairs with
    ``sigma2``), as a list emptied here so that the caller holds neither through the tail. ``chunk``: about this
    many components (whole pairs) per call of :func:`overdispersed_sum_sf` (default :data:`PRESENCE_TAIL_CHUNK`).
    Returns :data:`UNORDERED_SCHEMA`: ``pres_k`` observed of ``pres_n`` decisions against ``pres_e`` expected from
    each player's own rates, ``pres_p``, and per direction for the evidence (``a_*``: ``player`` with ``opponent``
    in, ``b_*`` the reverse).

    Method: ``pres_p`` is the exact tail P(K >= ``pres_k``) under the null "each player continues at their own
    rate, at the same hand strength (quintile) and price, whoever is in": in each (direction, strength, price) bin
    the n decisions share the player's own rate, known only through its Beta posterior (mean r, strength s), so
    the bin's count is beta-binomial and K the sum of the pair's bins (:func:`betabinom_sum_sf`: the direct
    convolution, exact in the far tail; with known rates the Poisson-binomial of Hong 2013), the
    posterior-predictive check of :func:`detectors.stats.baseline_tail` over several bins. A normal tail would be
    liberal in the far tail where rates are low (docs/measurements.md, 2026-12-06). A player's looseness in one
    tournament is not their looseness in the next: with ``sigma2`` > 0 each (direction, tournament) block of bins
    shares one draw of a logit-normal effect, integrated exactly per block (:func:`overdispersed_sum_sf`); without
    it an honest pair that meets mostly in one tournament gets a liberal test. Per chunk of pairs the components in
    their order, every chunk with the whole window's folds (:func:`sum_sf_folds`), so each pair's tail is the one
    computed over every pair at once, bit for bit."""
    pairs, comps = parts
    parts.clear()
    if pairs.is_empty():
        return pl.DataFrame(schema=UNORDERED_SCHEMA)
    g = _unordered_sums(pairs)
    sigma2 = float(pairs["sigma2"].drop_nulls().max() or 0.0)
    key = pairs.select("player", "partner", x=pl.min_horizontal("player", "partner"), y=pl.max_horizontal("player", "partner"))
    del pairs
    key = key.join(g.select(x="player", y="opponent", _g="_g"), on=["x", "y"]).select("player", "partner", "_g")
    comps = comps.join(key, on=["player", "partner"], how="left", maintain_order="left").select(
        "_g", dir="player", bin_n="bin_n", bin_r="bin_r", bin_s="bin_s", bin_t="bin_t").drop_nulls()
    k = g["pres_k"].to_numpy()
    gi, n = comps["_g"].to_numpy(), np.rint(comps["bin_n"].to_numpy())
    folds = sum_sf_folds(k, np.bincount(gi, weights=np.where(n > 0, n, 0), minlength=len(k)))
    size = np.bincount(gi, minlength=len(k))
    cut = np.r_[0, np.flatnonzero(np.diff(np.cumsum(size) // (chunk or PRESENCE_TAIL_CHUNK))) + 1, len(k)]
    del gi, n, size
    p = np.ones(len(k))
    for a, b in zip(cut[:-1], cut[1:]):
        comp = _components(comps.filter(pl.col("_g").is_between(int(a), int(b) - 1)).with_columns(pl.col("_g") - int(a)))
        p[a:b] = overdispersed_sum_sf(*comp, k[a:b], float(np.sqrt(sigma2)), folds=folds)
    return g.with_columns(pl.Series("pres_p", np.clip(p, 1e-300, 1.0))).select(list(UNORDERED_SCHEMA))


def bounty_wide_cells(rows: pl.DataFrame, *, floor: float = 0.02, context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                      looseness_tau: float | None = BOUNTY_LOOSENESS_TAU, without_partner: bool = True,
                      counts: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> tuple | None:
    """The cells of :func:`bounty_wide_calls`: (the decisions with cards known, their cell columns, the cells with
    the player's own rate ``r`` without the partner, at least ``floor``), or None without such decisions. Compute
    once and pass as ``cells=`` to test several rate ranges of the same rows (the detector's wide calls and the
    rest of its calls) without counting and fitting the offsets again.

    ``without_partner`` (default): ``r`` is the rate over the player's decisions in the cell at which this partner
    was *not* in, each decision once: the player's distinct decisions in the cell (``Dn``, ``Dk`` continuations)
    minus the distinct decisions with the partner in (the pair's ``n``, ``k``: one row per decision and partner), then shrunk by the cell's Beta prior
    (``pa``, ``pb``): r = (Dk - k + pa) / (Dn - n + pa + pb). ``False``: the former baseline, from the rows per
    (decision, other player still in): the player's rows in the cell less the pair's, (K - k), (N - n), scaled by
    Dn / N back to decisions. There a decision with three others in weighs three times, and the decisions in which
    the partner was in stay in it through the other players' rows: a partner present in most of the player's
    decisions (a gang's usual table) is most of the "without the partner" baseline, and the gang's own wide calls
    raise the rate they are held to. Kept reachable to measure the change (see
    :class:`detectors.bounty_collusion.BountyCollusionDetector`).

    ``counts``: the rows counted elsewhere, (pair counts ``n``, ``k`` per player, partner and cell; distinct
    decisions ``Dn``, ``Dk`` per player and cell), the cells their columns
    (:meth:`detectors.features.gameplay.bounty_counts.BountyPresenceTable.wide_counts`: DuckDB's); ``rows`` and
    ``context`` are then unread and the decisions returned are None (:func:`bounty_wide_calls` with ``hands=False``
    only)."""
    if counts is not None:
        if counts[0].is_empty():
            return None
        d, bins = None, [c for c in counts[0].columns if c not in ("player", "partner", "n", "k")]
    else:
        d = rows.filter(pl.col("strength").is_not_null()) if not rows.is_empty() else rows
        if d.is_empty():
            return None
        bins = ["sdec", "cbin", *(c for c in context if c in d.columns)]
        d = d.with_columns(sdec=(pl.col("strength") * 10).floor().clip(0, 9).cast(pl.Int8), _y=pl.col("cont").cast(pl.Int64),
                           *(pl.col(c).fill_null(-1) for c in bins[2:]))
    t = _bounty_cells(d, bins, looseness_tau, counts=counts)
    if without_partner:
        # the decisions the partner was in, to take out of the player's distinct decisions: the pair's ``n``, ``k``
        # (bounty_presence has one row per (decision, partner), so the pair's rows are its distinct decisions)
        t = t.with_columns(
            r=(((pl.col("Dk") - pl.col("k")).clip(0, None) + pl.col("pa"))
               / ((pl.col("Dn") - pl.col("n")).clip(0, None) + pl.col("pa") + pl.col("pb"))).clip(floor, 1.0))
    else:
        t = t.with_columns(
            r=(((pl.col("K") - pl.col("k")) * pl.col("scale") + pl.col("pa"))
               / ((pl.col("N") - pl.col("n")) * pl.col("scale") + pl.col("pa") + pl.col("pb"))).clip(floor, 1.0))
    return d, bins, t


def bounty_wide_calls(rows: pl.DataFrame, *, max_rate: float = 0.3, floor: float = 0.02, hands: bool = True,
                      min_rate: float = 0.0, context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                      looseness_tau: float | None = BOUNTY_LOOSENESS_TAU, cells: tuple | None = None,
                      without_partner: bool = True, tournaments: tuple[pl.DataFrame, float] | None = None) -> pl.DataFrame:
    """Per unordered pair: continuations against a short bounty target that the player's own baseline folds.

    The deviation of a bounty gang is a fold turned into a call: with a hand
    and a price at which the player, without the partner in, folds nearly
    always. Among the :func:`bounty_presence` decisions (cards known), each
    (player, partner) decision is put in a cell of starting-hand decile x price
    bin x ``context`` (default: the position, as :func:`presence_parts`
    says why); ``r`` is the player's own rate of continuing in that cell when the
    partner was *not* in (empirical-Bayes shrunk to the population's rate in
    the cell, at least ``floor``). Cells with ``r < max_rate`` are the spots
    where the player's own baseline folds at least 70 % of the time. Per
    unordered pair, both directions pooled: ``wc_k`` continuations in
    ``wc_n`` such decisions against ``wc_e`` = sum of r expected. Under H0
    the count is a sum of independent Bernoullis with different rates (a
    Poisson-binomial); at ``wc_k >= wc_e + 1`` ``wc_p`` is its exact upper tail, the
    cells' binomials convolved (:func:`betabinom_sum_sf` with known rates; Hong, CSDA 2013), below that
    point, where nothing is significant, the larger Poisson tail. (It was the binomial tail at the mean
    rate, P(Bin(wc_n, wc_e / wc_n) >= wc_k): Hoeffding, "On the distribution of the number of successes in
    independent trials", Ann. Math. Stat. 1956, showed it an upper bound, valid but loose where the cells'
    rates differ, as they do from decile to decile.) Only the decisions where a call is
    unlikely for this player are counted: a gang's wide calls are not diluted
    by the premium hands everyone plays nor the trash no one does (the
    likelihood-ratio ordering of Neyman–Pearson; the own-baseline idea of
    :func:`own_baseline`). ``wc_hands``: the hands of those continuations, the
    least likely first (the evidence an investigator opens first);
    ``wc_a_*``/``wc_b_*`` per direction (``player`` with ``opponent`` in, and the reverse).
    ``hands=False`` leaves ``wc_hands`` empty (faster, when only the p-values are needed).
    ``min_rate`` (default 0: every cell below ``max_rate``) keeps only the cells with ``min_rate <= r``:
    ``min_rate=0.3, max_rate=1.01`` is the complement of the default, the decisions where the player's own
    baseline continues at least 30 % of the time (disjoint decisions, so a test independent of the default's).
    ``looseness_tau``: the cells' priors centred on the player's own looseness, as :func:`presence_parts`.
    ``cells``: :func:`bounty_wide_cells` of the same ``rows`` (then ``floor``, ``context``, ``looseness_tau`` and
    ``without_partner`` are theirs), to test another rate range without computing them again. ``without_partner``
    (default): ``r`` from the player's distinct decisions without this partner in; False: the former per-row
    baseline (:func:`bounty_wide_cells` says why it changed).
    ``tournaments`` (optional): (the pair counts per tournament, ``n`` per player, partner, ``tournament_id`` and
    cell; ``sigma2``, :func:`wide_tournament_effect`): the tail with the presence test's tournament effect, each
    (direction, tournament) block of the pair's cells sharing one logit-normal draw of variance ``sigma2``
    (:func:`wide_tail`); None or ``sigma2`` 0: the cells independent, as before.
    """
    schema = {"player": pl.Utf8, "opponent": pl.Utf8, "wc_n": pl.Float64, "wc_k": pl.Float64, "wc_e": pl.Float64,
              "wc_p": pl.Float64, "wc_a_n": pl.Float64, "wc_a_k": pl.Float64, "wc_a_e": pl.Float64,
              "wc_b_n": pl.Float64, "wc_b_k": pl.Float64, "wc_b_e": pl.Float64, "wc_hands": pl.List(pl.Utf8)}
    if cells is None:
        cells = bounty_wide_cells(rows, floor=floor, context=context, looseness_tau=looseness_tau,
                                  without_partner=without_partner)
    if cells is None:
        return pl.DataFrame(schema=schema)
    d, bins, t = cells
    t = t.filter((pl.col("r") < max_rate) & (pl.col("r") >= min_rate))
    if t.is_empty():
        return pl.DataFrame(schema=schema)
    lo, hi = pl.min_horizontal("player", "partner"), pl.max_horizontal("player", "partner")
    t = t.with_columns(x=lo, y=hi, fwd=pl.col("player") == lo, e=pl.col("n") * pl.col("r"))
    g = t.group_by(pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(
        wc_n=pl.col("n").sum().cast(pl.Float64), wc_k=pl.col("k").sum().cast(pl.Float64), wc_e=pl.col("e").sum(),
        wc_a_n=pl.col("n").filter("fwd").sum().cast(pl.Float64), wc_a_k=pl.col("k").filter("fwd").sum().cast(pl.Float64),
        wc_a_e=pl.col("e").filter("fwd").sum(),
        wc_b_n=pl.col("n").filter(~pl.col("fwd")).sum().cast(pl.Float64),
        wc_b_k=pl.col("k").filter(~pl.col("fwd")).sum().cast(pl.Float64), wc_b_e=pl.col("e").filter(~pl.col("fwd")).sum(),
    )
    g = g.with_columns(pl.Series("wc_p", wide_tail(g, t, bins, tournaments)))
    if not hands:
        return g.with_columns(pl.lit([], pl.List(pl.Utf8)).alias("wc_hands")).select(list(schema))
    calls = d.filter(pl.col("cont")).join(t.select("player", "partner", *bins, "r"), on=["player", "partner", *bins])
    where = calls.with_columns(x=lo, y=hi).sort("r", "hand_id").group_by(
        pl.col("x").alias("player"), pl.col("y").alias("opponent")).agg(wc_hands=pl.col("hand_id").unique(maintain_order=True))
    return g.join(where, on=["player", "opponent"], how="left").with_columns(
        pl.col("wc_hands").fill_null(pl.lit([], pl.List(pl.Utf8)))).select(list(schema))


def wide_tail(g: pl.DataFrame, t: pl.DataFrame, bins: list[str],
              tournaments: tuple[pl.DataFrame, float] | None = None) -> np.ndarray:
    """``wc_p`` of :func:`bounty_wide_calls` per row of ``g`` (its unordered pairs, ``wc_k``, ``wc_e``).

    ``t``: the cells tested (``player``, ``partner``, ``bins``, ``n``, ``r``, ``x``/``y`` the unordered pair);
    ``tournaments``: as :func:`bounty_wide_calls`. Method: where the count is above its mean, the exact tail of the
    sum of the cells' binomials (each cell's decisions at the cell's own rate; Hong, CSDA 2013); with a tournament
    effect the cells' decisions are split by tournament and each (pair, direction, tournament) block shares one
    draw u ~ N(0, sigma2) on the logit of its rates, integrated exactly (:func:`overdispersed_sum_sf`, the
    presence test's null): a player looser in the tournaments the pair met in than over the window is not read
    as the pair's. Below the mean, the Poisson tail (conservative there, and nothing below the mean is
    significant). Returns the p-values clipped to [1e-300, 1]."""
    k, e = g["wc_k"].to_numpy(), np.maximum(g["wc_e"].to_numpy(), 1e-9)
    p = _st.poisson.sf(k - 1.0, e)
    above = k >= e + 1
    if not above.any():
        return np.clip(p, 1e-300, 1.0)
    key = g.with_row_index("_g").filter(pl.Series(above)).select("_g", x="player", y="opponent")
    c = t.join(key, on=["x", "y"])
    sigma2 = tournaments[1] if tournaments is not None else 0.0
    if sigma2 > 0:
        # the pair's decisions in each cell split by tournament, each at the cell's rate
        c = tournaments[0].select("player", "partner", "tournament_id", *bins, nt="n").join(
            c.select("player", "partner", *bins, "r", "_g"), on=["player", "partner", *bins])
        block = (pl.struct("_g", "player", "tournament_id").rank("dense") - 1).cast(pl.Int64)
        c = c.with_columns(n=pl.col("nt"), _b=block if not c.is_empty() else pl.lit(0, pl.Int64))
        p[above] = overdispersed_sum_sf(c["_g"].to_numpy().astype(np.int64), c["_b"].to_numpy(),
                                        c["n"].to_numpy().astype(float), c["r"].to_numpy(), np.full(len(c), np.inf),
                                        k, float(np.sqrt(sigma2)))[above]
    else:
        p[above] = betabinom_sum_sf(c["_g"].to_numpy().astype(np.int64), c["n"].to_numpy().astype(float),
                                    c["r"].to_numpy(), np.full(len(c), np.inf), k)[above]
    return np.clip(p, 1e-300, 1.0)


def wide_tournament_effect(cells: tuple | None, tour: tuple[pl.DataFrame, pl.DataFrame] | None) -> float:
    """The players' tournament effect (sigma^2, logit scale) over the wide-call test's cells: the moment estimator
    of :func:`~detectors.features.gameplay.bounty.bounty_tournament_effect` (the presence test's) on the cells of
    :func:`bounty_wide_cells` (``cells``; None: 0) and their counts per tournament (``tour``: per (player,
    partner, ``tournament_id``, cell) ``n``, ``k`` and per (player, ``tournament_id``, cell) ``Dn``, ``Dk``).
    Returns sigma^2 (0 without counts)."""
    if cells is None or tour is None or tour[0].is_empty():
        return 0.0
    return bounty_tournament_effect(None, cells[2], list(cells[1]), counts=tour)


def bounty_unshadowed(rows: pl.DataFrame, wide: pl.DataFrame, *, max_p: float = 0.01) -> pl.DataFrame:
    """:func:`bounty_presence` rows without the decisions that a player's strongest partner explains.

    A colluder who calls wide whenever the partner is in also calls wide with
    every third player who happens to be in those hands: pair tests alone
    would accuse the bystander. Each player's *strongest partner* is the one
    of smallest :func:`bounty_wide_calls` p-value (if at most ``max_p``); a
    (decision, partner) row is dropped when the player's strongest partner was
    also still in at that decision and is not this partner. The pair then
    keeps only the decisions that the stronger pair cannot explain (the
    explaining-away of a conditional test: is C's presence informative
    given B's?). The strongest pair itself loses nothing.
    """
    best = bounty_strongest_partner(wide, max_p=max_p)
    if rows.is_empty() or best.is_empty():
        return rows
    shadowed = rows.join(best, on="player").filter(pl.col("partner") == pl.col("best")).select(
        "hand_id", "seq", "player", "best").unique()
    return rows.join(shadowed, on=["hand_id", "seq", "player"], how="left").filter(
        pl.col("best").is_null() | (pl.col("partner") == pl.col("best"))).drop("best")


def bounty_strongest_partner(wide: pl.DataFrame, *, max_p: float = 0.01) -> pl.DataFrame:
    """Each player's partner of smallest :func:`bounty_wide_calls` p-value, where it is at most ``max_p``.

    Returns ``player``, ``best`` (ties: the first name), for :func:`bounty_unshadowed` and ``bounty_pairs(best=)``.
    """
    if wide.is_empty():
        return pl.DataFrame(schema={"player": pl.Utf8, "best": pl.Utf8})
    both = pl.concat([
        wide.select("player", pl.col("opponent").alias("best"), "wc_p"),
        wide.select(pl.col("opponent").alias("player"), pl.col("player").alias("best"), "wc_p"),
    ]).filter(pl.col("wc_p") <= max_p)
    return both.sort("wc_p", "best").group_by("player", maintain_order=True).first().select("player", "best")
