"""The HeadsUpFlippingDetector: fit, score, flag, explain."""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from detectors import stats
from detectors.base import HAND_INPUTS, Evidence, PairDetector, Signal
from detectors.heads_up_flipping.spots import hu_hands, pair_qvalues, pair_tests, pair_weights

#: the reproduction query of a pair's flips, deepest first, with both players' cards ($player and $opponent
#: bound by the reader); the weak ones at ``min_depth_bb`` or deeper are the evidence count
FLIPS_SQL = (
    "WITH d AS (SELECT h.hand_id, h.tournament_id, h.big_blind, min(s.stack_start) AS eff FROM hands h "
    "JOIN seats s ON s.hand_id = h.hand_id AND s.dealt_in WHERE h.is_tournament GROUP BY ALL "
    "HAVING count(*) = 2 AND bool_or(s.player = $player) AND bool_or(s.player = $opponent)), "
    "p AS (SELECT a.hand_id, a.player, sum(a.amount) AS put FROM actions a "
    "WHERE a.street = 'preflop' AND a.hand_id IN (SELECT hand_id FROM d) GROUP BY ALL), "
    "c AS (SELECT hand_id, list(player || ' ' || array_to_string(cards, ' ') ORDER BY player) AS cards "
    "FROM hole_cards WHERE hand_id IN (SELECT hand_id FROM d) GROUP BY ALL) "
    "SELECT d.hand_id, d.tournament_id, round(d.eff / d.big_blind, 1) AS eff_bb, c.cards FROM d "
    "JOIN p ON p.hand_id = d.hand_id LEFT JOIN c ON c.hand_id = d.hand_id "
    "GROUP BY ALL HAVING count(*) = 2 AND min(p.put) >= d.eff ORDER BY eff_bb DESC, d.hand_id"
)


class HeadsUpFlippingDetector(PairDetector):
    """Pairs of accounts who flip their heads-up matches: both all in preflop with hands neither would
    commit with at that depth, far more often than either does against other opponents.

    The final match of a scheduled heads-up tournament is exempt (house rules 003). Short stacks that
    must shove are the benign explanation: the null is conditioned on the effective stack's depth, so
    push-or-fold play in hyper-turbos and late levels is expected, not accused.

    Parameters
    ----------
    alpha : float
        the false-discovery rate (Benjamini–Hochberg) across the pairs that played heads-up.
    random_state : int
        unused (no random draw); kept by the contract.
    weak_pct : float
        a flip is weak when the weaker starting hand's percentile is below this.
    min_depth_bb : float
        hands with a smaller effective stack (big blinds) are push-or-fold: left out of the test.
    depth_bins : tuple of float
        the effective-stack edges (big blinds) of the depth bins the null is conditioned on.
    prior_strength : float
        hands of the population's rate in each bin's prior of a player's own rate.
    min_flips : int
        the fewest weak flips between the two a flag needs.
    min_flip_matches : int
        the fewest of their matches with a weak flip a flag needs: flips within one match are two loose
        players meeting once (their own rates against others cannot say how two of them play each other),
        not an agreement to settle match after match.
    max_unflagged : int
        unflagged pairs kept in :meth:`threshold`'s frame (the strongest).
    """

    kind = "heads_up_flipping"
    inputs = HAND_INPUTS

    def __init__(self, *, alpha: float = 0.01, random_state: int = 0, weak_pct: float = 0.85,
                 min_depth_bb: float = 12.0, depth_bins: tuple[float, ...] = (20.0, 35.0, 50.0),
                 prior_strength: float = 50.0,
                 min_flips: int = 3, min_flip_matches: int = 2, max_unflagged: int = 100) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.weak_pct = weak_pct
        self.min_depth_bb = min_depth_bb
        self.depth_bins = depth_bins
        self.prior_strength = prior_strength
        self.min_flips = min_flips
        self.min_flip_matches = min_flip_matches
        self.max_unflagged = max_unflagged

    def fit(self, con: duckdb.DuckDBPyConnection) -> "HeadsUpFlippingDetector":
        """Collect every heads-up match hand (:func:`~detectors.heads_up_flipping.spots.hu_hands`) and
        test every pair's weak flips against both players' own rate and the population's
        (:func:`~detectors.heads_up_flipping.spots.pair_tests`).

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``hands_`` (the heads-up hands), ``pairs_`` (one row per pair), ``population_``
        (weak-flip rate per depth bin), ``short_rate_`` (under ``min_depth_bb``), ``exempt_`` (exempt final
        hands) and ``missing_``."""
        self.hands_ = hu_hands(con, weak_pct=self.weak_pct, depth_bins=self.depth_bins)
        self.exempt_ = int(self.hands_["exempt"].sum()) if not self.hands_.is_empty() else 0
        shallow = self.hands_.filter(~pl.col("exempt") & (pl.col("eff_bb") < self.min_depth_bb))
        self.short_rate_ = float(shallow["weak"].mean()) if shallow.height else 0.0
        if self.hands_.is_empty():
            self.pairs_ = pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8, "n": pl.UInt32,
                                               "k": pl.UInt32, "p_value": pl.Float64})
            self.population_ = pl.DataFrame(schema={"bin": pl.Int32, "K": pl.UInt32, "N": pl.UInt32,
                                                    "rate": pl.Float64})
        else:
            self.pairs_, self.population_ = pair_tests(self.hands_, prior_strength=self.prior_strength, alpha=self.alpha,
                                                       min_depth_bb=self.min_depth_bb)
        unknown = self.hands_.filter(pl.col("flip") & pl.col("strength_min").is_null()).height
        self.missing_ = ["heads-up matches"] if self.hands_.is_empty() else (
            ["hole cards of some flips (counted as weak)"] if unknown else [])
        return self

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per pair that played a heads-up match: the weak-flip count ``k`` in ``n`` hands, its
        ``expected`` count under the pair's own rates, ``p_value``, the pair's ``weight`` (its matches together,
        mean 1, :func:`~detectors.heads_up_flipping.spots.pair_weights`), the weighted BH ``q_value`` and
        ``score`` = −log10 q.

        Parameters
        ----------
        con : the warehouse (unused: fitted state only).

        Returns
        -------
        the pairs, strongest first, with ``accounts`` and ``tournaments`` (of the weak flips)."""
        p = self.pairs_
        if p.is_empty():
            return p.with_columns(accounts=pl.lit([], pl.List(pl.Utf8)), tournaments=pl.lit([], pl.List(pl.Utf8)),
                                  q_value=pl.lit(None, pl.Float64), score=pl.lit(None, pl.Float64))
        q = pair_qvalues(p)
        return p.with_columns(accounts=pl.concat_list("player", "opponent"), weight=pl.Series(pair_weights(p)),
                              q_value=pl.Series(q), score=pl.Series(stats.score_from_q(q))).sort("score", descending=True)

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """Flagged iff q <= ``alpha``, at least ``min_flips`` weak flips between the two, and weak flips in at least
        ``min_flip_matches`` of their matches."""
        return scores.with_columns(flagged=(pl.col("q_value") <= self.alpha) & (pl.col("k") >= self.min_flips)
                                   & (pl.col("flip_matches") >= self.min_flip_matches))

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row of :meth:`threshold`: the weak flips against the expected count, the
        matches they fell in, how early in the match, and the short-stack flips left out (the benign test).

        Parameters
        ----------
        con : the warehouse (unused). row : one row of :meth:`threshold`.

        Returns
        -------
        :class:`~detectors.base.Signal`; its hands are the pair's weak flips at depth, deepest first."""
        a, b = row["player"], row["opponent"]
        k, n, e = int(row.get("k") or 0), int(row.get("n") or 0), float(row.get("expected") or 0.0)
        short, n_short = int(row.get("short") or 0), int(row.get("n_short") or 0)
        fm, matches = int(row.get("flip_matches") or 0), int(row.get("matches") or 0)
        h = self.hands_.filter((pl.col("a") == a) & (pl.col("b") == b) & pl.col("weak") & ~pl.col("exempt")
                               & (pl.col("eff_bb") >= self.min_depth_bb))
        hands = h.sort(["eff_bb", "hand_id"], descending=[True, False])["hand_id"].to_list()
        sql = FLIPS_SQL
        ev = [
            Evidence("weak flips at depth", float(k), e, n, row.get("p_value"),
                     f"{k} weak flips (both all in preflop, the weaker hand outside the top {1 - self.weak_pct:.0%} of "
                     f"starting hands) in {n} heads-up hands at {self.min_depth_bb:g} bb or deeper; their own rates "
                     f"against other opponents (and the room's) predict {e:.3g}", sql),
            Evidence("matches flipped", float(fm), None, matches, None,
                     f"weak flips in {fm} of their {matches} matches; the matches together weigh the pair's test "
                     f"{float(row.get('weight') or 1.0):.2f} times the average pair's in the false-discovery control"),
            Evidence("median match hand of a flip", row.get("early"), None, k, None,
                     "the hand of the match the weak flips at depth came at (1 = the first)"),
            Evidence("short-stack flips (not counted)", float(short), self.short_rate_, n_short, None,
                     f"{short} weak flips in {n_short} hands under {self.min_depth_bb:g} bb, where push-or-fold "
                     f"forces all-ins (the room's rate there: {self.short_rate_:.3f} a hand)"),
        ]
        benign = (f"Short stacks must shove: hands under {self.min_depth_bb:g} big blinds ({short} of the pair's weak "
                  f"flips) are not counted, and the expected count is conditioned on the depth (bins at "
                  f"{', '.join(f'{x:g}' for x in self.depth_bins)} bb), so hyper-turbo and late-level all-ins are "
                  f"expected, not accused; {k} weak flips came at {self.min_depth_bb:g} bb or deeper where "
                  f"{e:.3g} were expected. Two loose players who flip again and again in one match are not an "
                  f"agreement: a flag needs weak flips in at least {self.min_flip_matches} of the pair's matches "
                  f"(here {fm} of {matches}). The final match of a scheduled heads-up tournament is exempt and "
                  f"not counted ({self.exempt_} hands in the warehouse).")
        return Signal(
            kind=self.kind, accounts=list(row["accounts"]), score=float(row["score"] or 0.0), flagged=bool(row["flagged"]),
            summary=(f"{a} and {b}: {k} weak flips in {n} heads-up hands over {matches} matches "
                     f"(expected {e:.3g}); q = {row.get('q_value') if row.get('q_value') is not None else 1:.2g}"),
            tournaments=list(row.get("tournaments") or []), hands=hands, evidence=ev, benign=benign,
            p_value=row.get("p_value"),
            extra={"shape": row.get("shape", "pair"), "edges": [[a, b]], "q_value": row.get("q_value"),
                   "sql_params": {"player": a, "opponent": b}},
        )


__all__ = ["HeadsUpFlippingDetector", "FLIPS_SQL"]
