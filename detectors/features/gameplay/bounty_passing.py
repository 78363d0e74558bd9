"""Bounty passing: a pair keeping a short stack's bounty between them, seen in the two decisions that pass it.

A partner who is about to bust pushes into the other rather than fold, and the other calls the partner's shove
with a hand that folds to anyone else's: the chips and the bounty stay with the pair. The knockout tests of
:mod:`~detectors.features.gameplay.bounty` look at a third player's all-in (both partners in against a short
target); here the target *is* the partner. Two own-baseline views, each a player's decisions with this partner
against the same player's decisions with everyone else, in the same cells:

- *calls of the partner's shove* (:data:`BOUNTY_PARTNER_RAISE_SQL`): a preflop decision facing an all-in raise
  by a short-stacked bounty player, the partner being that shover; cells of starting-hand decile, pot odds (the
  share of the pot after calling that the call is, the price a caller weighs), the caller's seat and the
  shover's seat (:data:`SEAT_BIN`: a small blind's shove at the big blind is wide and called wide). A short
  stack's min-raise called by its neighbour is ordinary play and is not counted;
- *shoves with the partner to act* (:data:`BOUNTY_SHOVE_SQL`): a short-stacked bounty player's first preflop
  decision (all-in raise or not), with each player yet to act after it (the ones who could call); cells of
  starting-hand decile, stack depth, seat and the tournament: a shover is held to their own shoves in the same
  tournament, as one tournament's looseness (or a gang member's wide shoves at its mates) would otherwise make
  every player at that table look like a partner. Within a tournament a player's shoving still moves from table
  to table (who sits there), and the partner yet to act sits at the player's table: the tail allows a random
  effect per (player, table) whose variance the population's own decisions give (:func:`table_effect_p`).

Both use :func:`~detectors.features.gameplay.bounty_tests.bounty_wide_cells` (each player's own rate without this
partner, empirical-Bayes shrunk, the looseness offsets) and the exact Poisson-binomial tail of
:func:`~detectors.features.gameplay.bounty_tests.bounty_wide_calls`.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.features.gameplay.bounty import (BOUNTY_CONTEXT_BINS, BOUNTY_LOOSENESS_TAU, POSITION_BIN,
                                                bounty_tournament_effect)
from detectors.features.gameplay.bounty_tests import bounty_wide_calls, bounty_wide_cells
from detectors.features.gameplay.cards import starting_hand_percentile
from detectors.features.gameplay.distributions import overdispersed_sum_sf

BOUNTY_PARTNER_RAISE_SQL = """
-- preflop decisions (fold, call, raise) facing a raise in knockout hands whose last raise was an all-in by (the
-- 'partner') a bounty player of at most $max_bb big blinds at the start of the hand; the pot odds of the call
WITH ko AS (SELECT DISTINCT hand_id FROM seats WHERE bounty IS NOT NULL AND bounty > 0),
raises AS (
    SELECT a.hand_id, a.seq, a.player AS raiser, a.is_all_in AS shove FROM actions a SEMI JOIN ko USING (hand_id)
    WHERE a.street = 'preflop' AND a.action IN ('bet', 'raise')
), dec AS (
    SELECT a.hand_id, h.tournament_id, a.seq, a.player, a.action <> 'fold' AS cont, h.big_blind, h.game,
           a.to_call::DOUBLE / nullif(a.pot_before + a.to_call, 0)::DOUBLE AS odds, ps.position
    FROM actions a SEMI JOIN ko USING (hand_id) JOIN hands h USING (hand_id)
    LEFT JOIN seats ps ON ps.hand_id = a.hand_id AND ps.player = a.player
    WHERE a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise') AND a.to_call > 0
)
SELECT d.hand_id, d.tournament_id, d.seq, d.player, r.raiser AS partner, d.cont, d.odds, d.game, d.position,
       ts.position AS raiser_position, hc.cards AS hole
FROM dec d ASOF JOIN raises r ON r.hand_id = d.hand_id AND d.seq > r.seq
JOIN seats ts ON ts.hand_id = d.hand_id AND ts.player = r.raiser
LEFT JOIN hole_cards hc ON hc.hand_id = d.hand_id AND hc.player = d.player
WHERE r.raiser <> d.player AND r.shove AND ts.bounty > 0 AND ts.stack_start <= $max_bb * d.big_blind
"""

BOUNTY_SHOVE_SQL = """
-- the first preflop decision (not a check) of a bounty player of at most $max_bb big blinds: all in or not, one row
-- per other player dealt in who has yet to act after it (the 'partner': the one who could call); the stack in big blinds
WITH ko AS (SELECT DISTINCT hand_id FROM seats WHERE bounty IS NOT NULL AND bounty > 0),
first AS (
    SELECT a.hand_id, a.player, min(a.seq) AS seq FROM actions a SEMI JOIN ko USING (hand_id)
    WHERE a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise', 'check') GROUP BY ALL
), dec AS (
    SELECT f.hand_id, h.tournament_id, h.table_name, f.seq, f.player, (a.is_all_in AND a.action = 'raise') AS cont,
           h.game, s.stack_start::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS stack_bb, s.position
    FROM first f JOIN actions a ON a.hand_id = f.hand_id AND a.seq = f.seq JOIN hands h ON h.hand_id = f.hand_id
    JOIN seats s ON s.hand_id = f.hand_id AND s.player = f.player
    WHERE s.bounty > 0 AND s.stack_start <= $max_bb * h.big_blind AND a.action <> 'check'
)
SELECT d.hand_id, d.tournament_id, d.table_name, d.seq, d.player, o.player AS partner, d.cont, d.stack_bb, d.game,
       d.position, hc.cards AS hole
FROM dec d JOIN first o ON o.hand_id = d.hand_id AND o.player <> d.player AND o.seq > d.seq
LEFT JOIN hole_cards hc ON hc.hand_id = d.hand_id AND hc.player = d.player
"""

# the seat in six cells: small blind, big blind, early (UTG-UTG2), middle (LJ, HJ), cut-off, button. Who is left
# to act after a short stack's shove (the big blind alone, after a small-blind shove) sets the ranges of both the
# shove and the call, so the blinds and the late seats are not pooled here as in POSITION_BIN
SEAT_BIN = {"SB": 0, "BB": 1, "UTG": 2, "UTG1": 2, "UTG2": 2, "LJ": 3, "HJ": 3, "CO": 4, "BTN": 5}

PASSING_COLS = ("tc_n", "tc_k", "tc_e", "tc_p", "tc_min", "sh_n", "sh_k", "sh_e", "sh_p", "pass_p")


def _rows(con: duckdb.DuckDBPyConnection, sql: str, max_bb: float, price: str, edges: tuple[float, ...]) -> pl.DataFrame:
    """The decisions of ``sql`` with ``strength`` (starting-hand percentile), ``cbin`` (``price`` cut at ``edges``)
    and ``pos`` (:data:`POSITION_BIN`), the columns :func:`bounty_wide_cells` reads."""
    df = con.sql(sql, params={"max_bb": float(max_bb)}).pl()
    if df.is_empty():
        return df.drop("hole").with_columns(pl.lit(None, pl.Float64).alias("strength"), pl.lit(None, pl.Int8).alias("cbin"),
                                            pl.lit(None, pl.Int8).alias("pos"))
    return df.drop("hole").with_columns(starting_hand_percentile(df)).with_columns(
        cbin=pl.when(pl.col(price).is_null()).then(-1)
        .otherwise(pl.sum_horizontal(*((pl.col(price) > e).cast(pl.Int8) for e in edges))).cast(pl.Int8),
        pos=pl.col("position").replace_strict(SEAT_BIN, default=None, return_dtype=pl.Int8),
        rpos=(pl.col("raiser_position").replace_strict(SEAT_BIN, default=None, return_dtype=pl.Int8)
              if "raiser_position" in df.columns else pl.lit(None, pl.Int8)),
        tix=pl.col("tournament_id").rank("dense").cast(pl.Int64),
    )


def bounty_partner_raises(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0) -> pl.DataFrame:
    """One row per (preflop decision facing a raise, the short bounty player who made the last raise: ``partner``).

    ``cont``: called or raised; ``cbin``: pot odds (to call / (pot + to call)) at most 0.2, 0.3, 0.4, more;
    ``strength``, ``pos`` as :func:`~detectors.features.gameplay.bounty_presence`."""
    return _rows(con, BOUNTY_PARTNER_RAISE_SQL, max_bb, "odds", (0.2, 0.3, 0.4))


def bounty_shoves(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0) -> pl.DataFrame:
    """One row per (short bounty player's first preflop decision, other player not yet folded: ``partner``).

    ``cont``: the decision was an all-in raise; ``cbin``: the stack at most 5, 10, 15, more big blinds."""
    return _rows(con, BOUNTY_SHOVE_SQL, max_bb, "stack_bb", (5.0, 10.0, 15.0))


def table_effect_p(wide: pl.DataFrame, cells: tuple, wide_rate: float,
                   unit_counts: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> pl.DataFrame:
    """``wide`` (:func:`bounty_wide_calls` of ``cells``) with ``wc_p`` allowing a player's rate to move from one
    table of a tournament to the next, and ``sigma2`` (the population's spread of it).

    A player's rate is not the same at every table of a tournament: who else sits there moves it (a regular
    loosens against weak players; a short-handed final table). A partner yet to act after the player's decision
    sits at the player's table, so a pair's decisions lie at one table of a tournament and the player's own rate in
    the same tournament comes from the others: an honest player who shoves wider at that table than before makes
    every player to their left look like a partner. The model is the random intercept of
    :func:`~detectors.features.gameplay.bounty.bounty_tournament_effect` with units (player, tournament, table),
    its variance ``sigma2`` estimated by moments from the population's own decisions (never from pairs or
    labels), integrated exactly per (pair, direction, tournament) block by :func:`overdispersed_sum_sf`. Returns
    ``wide`` with ``wc_p`` the larger of the independent tail and the overdispersed one. ``unit_counts``: the
    rows' counts per (player, tournament and table, cell) when they were counted elsewhere
    (:meth:`detectors.features.gameplay.bounty_counts.BountyPresenceTable.unit_counts`), the cells' rows unread."""
    d, bins, t = cells
    if wide.is_empty() or (unit_counts is None and "table_name" not in d.columns):
        return wide.with_columns(sigma2=pl.lit(0.0))
    unit = (None if unit_counts is not None
            else d.with_columns(tournament_id=pl.concat_str("tournament_id", "table_name", separator="|")))
    sigma2 = bounty_tournament_effect(unit, t, bins, counts=unit_counts)
    if sigma2 <= 0:
        return wide.with_columns(sigma2=pl.lit(0.0))
    g = wide.select("player", "opponent").with_row_index("_g")
    c = t.filter(pl.col("r") < wide_rate).with_columns(
        x=pl.min_horizontal("player", "partner"), y=pl.max_horizontal("player", "partner")).join(
        g.select("_g", x="player", y="opponent"), on=["x", "y"])
    block = (pl.struct("_g", "player", "tix").rank("dense") - 1).cast(pl.Int64) if "tix" in c.columns else pl.col("_g")
    c = c.with_columns(_b=block if not c.is_empty() else pl.lit(0, pl.Int64))
    p = overdispersed_sum_sf(c["_g"].to_numpy().astype(np.int64), c["_b"].to_numpy().astype(np.int64),
                             c["n"].to_numpy().astype(float), c["r"].to_numpy(), np.full(len(c), np.inf),
                             wide["wc_k"].to_numpy(), float(np.sqrt(sigma2)))
    return wide.with_columns(wc_p=pl.max_horizontal("wc_p", pl.Series(np.clip(p, 1e-300, 1.0))), sigma2=pl.lit(sigma2))


def _view(rows: pl.DataFrame, prefix: str, wide_rate: float, context: tuple[str, ...],
          looseness_tau: float | None, table_effect: bool = False) -> pl.DataFrame:
    """Per unordered pair, both directions pooled: ``{prefix}_n`` decisions in the cells where the player's own
    rate without this partner is below ``wide_rate``, ``_k`` continuations there, ``_e`` expected, ``_p`` the exact
    Poisson-binomial tail (:func:`bounty_wide_calls`; with ``table_effect``, the rate free to move from table to
    table: :func:`table_effect_p`), ``_min`` the smallest p-value those decisions could give
    (every one a continuation: the product of the own rates) and ``_hands`` (the continuations, least likely
    first)."""
    schema = {"player": pl.Utf8, "opponent": pl.Utf8, **{f"{prefix}_{c}": pl.Float64 for c in ("n", "k", "e", "p", "min")},
              f"{prefix}_hands": pl.List(pl.Utf8), f"{prefix}_tournaments": pl.List(pl.Utf8)}
    cells = bounty_wide_cells(rows, context=context, looseness_tau=looseness_tau) if not rows.is_empty() else None
    if cells is None:
        return pl.DataFrame(schema=schema)
    wide = bounty_wide_calls(rows, max_rate=wide_rate, cells=cells)
    if table_effect:
        wide = table_effect_p(wide, cells, wide_rate).drop("sigma2")
    tours = rows.group_by(pl.min_horizontal("player", "partner").alias("player"),
                          pl.max_horizontal("player", "partner").alias("opponent")).agg(
        tournaments=pl.col("tournament_id").unique().sort())
    return view_columns(wide, cells, tours, prefix, wide_rate)


def view_columns(wide: pl.DataFrame, cells: tuple, tours: pl.DataFrame, prefix: str, wide_rate: float) -> pl.DataFrame:
    """A view's rows (``_view``'s, the columns named by ``prefix``) from its wide calls (``wide``), their cells
    (:func:`bounty_wide_cells`) and each unordered pair's tournaments (``tours``)."""
    schema = {"player": pl.Utf8, "opponent": pl.Utf8, **{f"{prefix}_{c}": pl.Float64 for c in ("n", "k", "e", "p", "min")},
              f"{prefix}_hands": pl.List(pl.Utf8), f"{prefix}_tournaments": pl.List(pl.Utf8)}
    least = cells[2].filter(pl.col("r") < wide_rate).group_by(
        pl.min_horizontal("player", "partner").alias("player"), pl.max_horizontal("player", "partner").alias("opponent"),
    ).agg(lmin=(pl.col("n") * pl.col("r").log()).sum())
    return wide.join(least, on=["player", "opponent"], how="left").join(tours, on=["player", "opponent"], how="left").select(
        "player", "opponent", pl.col("wc_n").alias(f"{prefix}_n"), pl.col("wc_k").alias(f"{prefix}_k"),
        pl.col("wc_e").alias(f"{prefix}_e"), pl.col("wc_p").alias(f"{prefix}_p"), pl.col("lmin").exp().alias(f"{prefix}_min"),
        pl.col("wc_hands").alias(f"{prefix}_hands"), pl.col("tournaments").alias(f"{prefix}_tournaments"),
    ).cast(schema)


def bounty_passing(con: duckdb.DuckDBPyConnection, *, max_bb: float = 20.0, wide_rate: float = 0.3,
                   context: tuple[str, ...] = BOUNTY_CONTEXT_BINS,
                   looseness_tau: float | None = BOUNTY_LOOSENESS_TAU) -> pl.DataFrame:
    """Per unordered pair: the two views of bounty passing and their combination.

    ``tc_*``: calls of the other's short-stacked raise (:func:`bounty_partner_raises`); ``sh_*``: all-in shoves
    with the other in (:func:`bounty_shoves`); each ``_n`` decisions in the cells where the player's own rate
    without this partner is below ``wide_rate`` (a fold turned into a call or a shove: the deviation that passes a
    bounty; the hands a player plays anyway say nothing), ``_k`` continuations there, ``_e`` expected, ``_p`` the
    exact tail (see ``_view``); ``tc_min``
    the smallest p-value the calls' wide decisions could give (all of them calls: the product of the own rates),
    fixed by the opportunities alone (the filter of :func:`discrete_bh`). ``pass_p``: the two views joined by
    Fisher's method: under no collusion a caller's decision and the shover's are different players' decisions,
    each against that player's own rate, independent given the cells. Only the decisions with the hole cards known are
    tested (a player view knows the cards shown: the detector says when too few are)."""
    tc = _view(bounty_partner_raises(con, max_bb=max_bb), "tc", wide_rate, (*context, "rpos"), looseness_tau)
    sh = _view(bounty_shoves(con, max_bb=max_bb), "sh", wide_rate, (*context, "tix"), looseness_tau,
               table_effect=True).drop("sh_min")
    return passing_combined(tc, sh)


def passing_combined(tc: pl.DataFrame, sh: pl.DataFrame) -> pl.DataFrame:
    """The rows of :func:`bounty_passing` from its two views (``tc``: the calls', ``sh``: the shoves' without
    ``sh_min``): joined per unordered pair, the tournaments of both, ``pass_p`` by Fisher's method."""
    out = tc.join(sh, on=["player", "opponent"], how="full", coalesce=True).with_columns(
        pass_tournaments=pl.concat_list(pl.col("tc_tournaments").fill_null(pl.lit([], pl.List(pl.Utf8))),
                                        pl.col("sh_tournaments").fill_null(pl.lit([], pl.List(pl.Utf8))))
        .list.unique().list.sort()).drop("tc_tournaments", "sh_tournaments")
    p = stats.fisher_combine(out["tc_p"].cast(pl.Float64).to_numpy(), out["sh_p"].cast(pl.Float64).to_numpy())
    return out.with_columns(pl.Series("pass_p", p, nan_to_null=True),
                            *(pl.col(c).fill_null(pl.lit([], pl.List(pl.Utf8))) for c in ("tc_hands", "sh_hands")))


def tarone_selection(p_min: np.ndarray, alpha: float) -> np.ndarray:
    """The hypotheses a discrete family at level ``alpha`` can count: Tarone's (Biometrics 1990) filter.

    A test on a handful of decisions cannot give every p-value: its smallest attainable one, ``p_min`` (every
    wide decision a continuation), is fixed by the opportunities before their outcome is looked at. With K the
    smallest integer such that at most K hypotheses have ``p_min <= alpha / K``, the selected hypotheses are those
    M(K) <= K with ``p_min <= alpha / K``. Returns the boolean mask (False where ``p_min`` is NaN)."""
    p_min = np.asarray(p_min, dtype=float)
    ok = np.isfinite(p_min)
    if not ok.any():
        return ok
    m = np.sort(p_min[ok])
    ks = np.arange(1, len(m) + 1)
    # M(K) = number of p_min <= alpha / K, non-increasing in K; the smallest K with M(K) <= K
    counts = np.searchsorted(m, alpha / ks, side="right")
    k = int(ks[np.argmax(counts <= ks)]) if (counts <= ks).any() else len(m)
    return ok & (p_min <= alpha / k)


def discrete_bh(p: np.ndarray, p_min: np.ndarray, alpha: float) -> np.ndarray:
    """Benjamini–Hochberg q-values over the hypotheses that can reach significance: Gilbert's (2005) procedure.

    BH runs over the hypotheses of :func:`tarone_selection` at ``alpha`` only (Gilbert, "A modified false
    discovery rate multiple-comparisons procedure for discrete data", Stat. Probab. Lett. 2005), which controls
    the false-discovery rate at ``alpha``. Returns the q-values, NaN outside the tested set (and where ``p`` or
    ``p_min`` is NaN)."""
    p = np.asarray(p, dtype=float)
    sel = np.isfinite(p) & tarone_selection(np.where(np.isfinite(p), p_min, np.nan), alpha)
    q = np.full(len(p), np.nan)
    if sel.any():
        q[sel] = stats.bh_qvalues(p[sel])
    return q
