"""Bounty collusion's detector: fit (the population's bounty spots and tests), score (the two false-discovery
families), flag and the ring merge; the case is :mod:`detectors.bounty_collusion.evidence`'s."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from scipy import stats as _st

import duckdb
from detectors import stats
from detectors.base import HAND_INPUTS, PairDetector
from detectors.bounty_collusion.evidence import BountyCase
from detectors.bounty_collusion.queries import EVENTS_SQL, WIDE_COLS
from detectors.features import gameplay as gp
from detectors.features.gameplay.bounty_counts import (BountyPresenceTable, bounty_passing_counted,
                                                      bounty_presence_table)
from detectors.features.gameplay.bounty_passing import tarone_selection
from detectors.features.gameplay.bounty_sparing import HERO_HANDS_SQL, SPARING_SCHEMA, sparing_counts, sparing_tested
from detectors.features.gameplay.bounty_tests import bounty_presence_tested
from detectors.features.window_views import window_span, window_tables


class BountyCollusionDetector(BountyCase, PairDetector):
    """Pairs that jointly contest all-in bounty targets beyond chance, weakly, and check the side pot down."""

    kind = "bounty_collusion"
    inputs = {**HAND_INPUTS, "seats": (*HAND_INPUTS["seats"], "bounty"),
              "bounties": ("hand_id", "tournament_id", "winner", "eliminated", "amount")}

    def __init__(self, *, alpha: float = 0.05, random_state: int = 0, max_unflagged: int = 300,
                 min_spots: int = 3, min_decisions: int = 5, short_bb: float = 20.0, min_events: int = 4,
                 wide_rate: float = 0.3, shadow_p: float = 0.01,
                 event_scale: float | None = 40.0, event_power: float = 3.0, test_weights: tuple[float, float, float, float] = (0.45, 0.45, 0.05, 0.05),
                 context_bins: tuple[str, ...] = gp.BOUNTY_CONTEXT_BINS,
                 looseness_tau: float | None = gp.BOUNTY_LOOSENESS_TAU, pass_share: float = 0.5,
                 wide_tournament_effect: bool = True, spare_share: float = 0.0) -> None:
        super().__init__(alpha=alpha, random_state=random_state)  # the false-discovery rate of the flag: q <= alpha
        self.context_bins = tuple(context_bins)
        self.looseness_tau = looseness_tau
        self.test_weights = test_weights
        self.event_scale = event_scale
        self.event_power = event_power
        self.shadow_p = shadow_p
        self.wide_rate = wide_rate
        self.min_events = min_events
        self.min_spots = min_spots
        self.min_decisions = min_decisions
        self.short_bb = short_bb
        self.max_unflagged = max_unflagged
        self.pass_share = pass_share  # the bounty-passing family's share of alpha (family_q)
        # the wide calls' tails with the players' tournament effect (the presence test's null); False: the cells
        # independent, the former test (kept reachable to measure the change)
        self.wide_tournament_effect = wide_tournament_effect
        # the sparing family's share of alpha, taken out of the bounty-passing family's (family_q); 0 (off) by
        # default: measured at 0.25, it flagged an honest pair of an honest-only population (docs/measurements.md,
        # 2026-12-08)
        self.spare_share = spare_share

    def fit(self, con: duckdb.DuckDBPyConnection) -> "BountyCollusionDetector":
        """Learn the population's bounty spots over the feature store's window: every all-in target's opportunities,
        the presence and wide-call decisions with each player's own rates (looseness priors, tournament effects),
        the events each pair shared and the population's check-down rate.

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read), read through the window's views
            (:func:`~detectors.features.window_views.window_tables`: the tables whole with the default window).

        Returns
        -------
        self, with ``window_`` (the days judged, :func:`~detectors.features.window_views.window_span`: None for
        every day), ``spots_``, ``pairs_``, ``presence_``, ``events_``, ``passing_``, ``cards_known_``,
        ``checkdown_rate_``, ``pop_cont_rate_`` and ``missing_``."""
        self.window_ = window_span(con)
        with window_tables(con, self.window_) as wcon:
            self._fit_window(wcon)
        return self

    def _fit_window(self, con: duckdb.DuckDBPyConnection) -> None:
        """The body of :meth:`fit` on ``con``, the warehouse read through the window. Sets the attributes
        :meth:`fit` lists but ``window_``."""
        self.spots_ = gp.bounty_spots(con)
        self.missing_ = []
        with bounty_presence_table(con, max_bb=self.short_bb) as rows:
            self._fit_presence(rows)
        self.events_ = con.sql(EVENTS_SQL).pl().cast({"events": pl.Int64, "events_hands": pl.Int64})
        # bounty passing: the partner's short-stacked raise called, shoves with the partner in (cards known), each
        # view's rows held and counted by DuckDB
        self.passing_ = (bounty_passing_counted(con, max_bb=self.short_bb, wide_rate=self.wide_rate, context=self.context_bins,
                                           looseness_tau=self.looseness_tau) if self.passing_ok_ else pl.DataFrame())
        if not self.passing_ok_ and self.rows_:
            self.missing_.append(f"wide-call test (and the rest of the calls joined with it) and bounty-passing tests: hole cards known at only "
                                 f"{self.cards_known_:.0%} of the decisions against short bounty targets (player view)")
        self._fit_sparing(con)
        if self.spots_.is_empty():
            self.missing_.append("no knockout hands with an all-in: nothing to test")
        else:
            known = self.spots_["strength"].is_not_null().mean() or 0.0
            if known < 0.5:
                self.missing_.append(
                    f"weak-call test: hole cards known for only {known:.0%} of the players at all-in spots (player view)"
                )
        jp = self.pairs_["joint_postflop"].sum() if not self.pairs_.is_empty() else 0
        cd = self.pairs_["checked_down"].sum() if not self.pairs_.is_empty() else 0
        self.checkdown_rate_ = float((cd + 1) / (jp + 2))

    def _fit_sparing(self, con: duckdb.DuckDBPyConnection) -> None:
        """Sets ``sparing_``: the pairs the sparing family tests (bets after the flop into each other against each
        player's own rate in the same tournament with other opponents in,
        :func:`~detectors.features.gameplay.bounty_sparing.sparing_tested`), Tarone's selection at ``alpha *``
        the family's share on ``sp_min`` (fixed by the decisions and rates, never by the bets); empty when the share
        is 0 or when a hand of the window is a player's view (a hero's tables only: a player's rate in a tournament
        against the others and the population's spread between pairs are then the hero's table-mates', a handful of
        tables; said in ``missing_``)."""
        share = min(float(self.spare_share), float(self.pass_share))
        if share > 0 and con.execute(HERO_HANDS_SQL).fetchall()[0][0]:
            share = 0.0
            self.missing_.append("sparing test: hands seen from a player's seat (a hero's tables), not every table "
                                 "of the site")
        s = sparing_tested(*sparing_counts(con)) if share > 0 else pl.DataFrame(schema=SPARING_SCHEMA)
        keep = tarone_selection(s["sp_min"].to_numpy(), self.alpha * share) if not s.is_empty() else []
        self.sparing_ = s.filter(pl.Series(keep, dtype=pl.Boolean)) if not s.is_empty() else s

    def _fit_presence(self, rows: BountyPresenceTable) -> None:
        """The presence and wide-call tests of :meth:`fit` from the presence rows held by DuckDB (``rows``), counted
        there per (player, partner, cell): sets ``pop_cont_rate_``, ``cards_known_``, ``pairs_``, ``presence_`` (the
        spots ``spots_`` read before), ``rows_`` (any row) and ``passing_ok_`` (the cards known enough for the wide
        calls and bounty passing)."""
        # the population's continuation rate against short bounty targets (per player and hand): what a bounty
        # hunter's own rate is set beside in the case
        self.pop_cont_rate_, self.cards_known_ = rows.summary()
        self.rows_ = self.pop_cont_rate_ == self.pop_cont_rate_
        # player view: the cards known are mostly those shown down, i.e. of the players who did NOT fold; a
        # fold-versus-call test on them would compare calls with calls. The wide-call test needs the cards of
        # (nearly) every decision: without them it is not made (and said so)
        wide_ok = self.passing_ok_ = self.cards_known_ >= 0.5
        if tuple(self.context_bins) != ("pos",):
            raise ValueError(f"the presence rows are counted by the position only, not {self.context_bins}")
        # the bystanders of a gang's hands: drop the decisions and spots that each player's strongest partner
        # explains (the wide calls before that, with every row)
        wide, sigma2 = self._wide_before(rows, wide_ok)
        self.wide_sigma2_ = sigma2
        best = gp.bounty_strongest_partner(wide, max_p=self.shadow_p)
        del wide
        rows.unshadow(best)
        self.pairs_ = gp.bounty_pairs(self.spots_, best=best)
        rest, calls = self._wide_after(rows, wide_ok, sigma2)
        # the presence test's exact tail a chunk of pairs at a time (the per-tournament counts read and freed inside)
        self.presence_ = bounty_presence_tested(rows.presence_counts, looseness_tau=self.looseness_tau).join(calls, on=["player", "opponent"], how="left").join(
            rest.select("player", "opponent", nw_n="wc_n", nw_k="wc_k", nw_e="wc_e", nw_p="wc_p"),
            on=["player", "opponent"], how="left")

    def _wide_cells(self, rows: BountyPresenceTable, wide_ok: bool, full: bool = False) -> tuple | None:
        """:func:`~detectors.features.gameplay.bounty_wide_cells` of the rows as they are now (None without the
        cards known), with the columns :func:`~detectors.features.gameplay.bounty_wide_calls` reads (player,
        partner, the cells, ``n``, ``k``, ``r``) unless ``full`` (every column: the tournament effect's)."""
        if not wide_ok:
            return None
        cells = gp.bounty_wide_cells(None, context=self.context_bins, looseness_tau=self.looseness_tau,
                                     without_partner=True, counts=rows.wide_counts())
        return cells if full else self._narrow(cells)

    @staticmethod
    def _narrow(cells: tuple | None) -> tuple | None:
        """``cells`` (:func:`~detectors.features.gameplay.bounty_wide_cells`) with the columns
        :func:`~detectors.features.gameplay.bounty_wide_calls` reads: player, partner, the cells, ``n``, ``k``,
        ``r`` (None stays None)."""
        if cells is None:
            return None
        d, bins, t = cells
        return d, bins, t.select("player", "partner", *bins, "n", "k", "r")

    def _wide_before(self, rows: BountyPresenceTable, wide_ok: bool) -> tuple[pl.DataFrame, float]:
        """The wide calls of every row (before the unshadowing: what picks each player's strongest partner) and the
        players' tournament effect over the wide calls' cells (sigma2, once over every row; 0 without it).
        The decisions per tournament are dropped once sigma2 is made and the cells narrowed to the columns the
        test reads before it runs; every frame is freed on return."""
        cells = self._wide_cells(rows, wide_ok, full=True)
        tour = rows.cell_counts(("tournament_id",)) if cells is not None and self.wide_tournament_effect else None
        sigma2 = gp.wide_tournament_effect(cells, tour)
        tour = tour[0] if tour is not None and sigma2 > 0 else None  # the pair counts per tournament alone
        cells = self._narrow(cells)
        tours = (tour, sigma2) if tour is not None else None
        return gp.bounty_wide_calls(pl.DataFrame(), max_rate=self.wide_rate, hands=False, cells=cells,
                                    tournaments=tours), sigma2

    def _wide_after(self, rows: BountyPresenceTable, wide_ok: bool, sigma2: float) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The wide calls (with their evidence hands) and the rest of the calls of the rows left by the unshadowing,
        with the tournament effect ``sigma2`` (the counts per tournament read only where it is positive): the cells
        counted once for both rate ranges, freed on return. Returns (rest, calls)."""
        # the rest of the decisions (own baseline continues at least wide_rate of the time): disjoint from the
        # wide calls', so its p-value is independent of theirs under the null and Fisher's method can join them
        none = pl.DataFrame()  # the rows are counted: cells=None stands for no row (no cards known)
        cells = self._wide_cells(rows, wide_ok)
        tours = ((rows.pair_counts(("tournament_id",)), sigma2)
                 if cells is not None and self.wide_tournament_effect and sigma2 > 0 else None)
        rest = gp.bounty_wide_calls(none, min_rate=self.wide_rate, max_rate=1.01, hands=False, cells=cells,
                                    tournaments=tours)
        calls = gp.bounty_wide_calls(none, max_rate=self.wide_rate, hands=False, cells=cells, tournaments=tours)
        tours = None
        if cells is not None and not calls.is_empty():
            tested = cells[2].filter(pl.col("r") < self.wide_rate)
            calls = calls.drop("wc_hands").join(rows.call_hands(tested), on=["player", "opponent"], how="left").with_columns(
                pl.col("wc_hands").fill_null(pl.lit([], pl.List(pl.Utf8)))).select(calls.columns)
        return rest, calls

    def _candidates(self) -> pl.DataFrame:
        """Pairs with a joint all-in contest, outer-joined with pairs with enough decisions together (presence test)."""
        t = self.pairs_.filter(pl.col("joint") > 0) if not self.pairs_.is_empty() else self.pairs_
        pres = self.presence_.filter(pl.col("pres_n") >= self.min_decisions)
        passing = self.passing_.filter(pl.col("tc_n") > 0) if not self.passing_.is_empty() else self.passing_
        spare = getattr(self, "sparing_", pl.DataFrame())
        if t.is_empty() and pres.is_empty() and passing.is_empty() and spare.is_empty():
            return t
        # one path whichever side is empty: the presence columns exist (null) where no pair has enough decisions
        for extra in (pres, passing, spare):
            if not extra.is_empty():
                t = extra if t.is_empty() else t.join(extra, on=["player", "opponent"], how="full", coalesce=True)
        zeros = ["spots", "joint", "expected", "weak_joint", "weak_expected", "joint_postflop", "checked_down", "bounties_won"]
        lists = ["tournaments", "hands", "won_hands", "cd_hands", "pres_tournaments", "pres_hands", "tc_hands", "sh_hands",
                 "pass_tournaments", "spare_hands"]
        t = t.with_columns(
            [pl.col(c).fill_null(0) if c in t.columns else pl.lit(0).alias(c) for c in zeros]
            + [pl.col(c).fill_null(pl.lit([], pl.List(pl.Utf8))) if c in t.columns else pl.lit([], pl.List(pl.Utf8)).alias(c) for c in lists]
            + [pl.lit(None, pl.Float64).alias(c) for c in ("wide_a_p", "wide_b_p", "wide_a", "wide_a_n", "wide_b",
                                                           "wide_b_n", "wide_a_base", "wide_b_base", *gp.PASSING_COLS,
                                                           "sp_n", "sp_k", "sp_e", "sp_p", "sp_min")
               if c not in t.columns]
        )
        t = t.join(self.events_, on=["player", "opponent"], how="left").with_columns(
            pl.col("events", "events_hands").fill_null(0))
        t = t.with_columns([pl.lit(None, pl.Float64).alias(c) for c in WIDE_COLS if c not in t.columns]
                           + ([] if "wc_hands" in t.columns else [pl.lit([], pl.List(pl.Utf8)).alias("wc_hands")]))
        t = t.with_columns(pl.col("wc_hands").fill_null(pl.lit([], pl.List(pl.Utf8))))
        # the case's tournaments: where they contested together, else where the presence test saw them
        return t.with_columns(tournaments=pl.when(pl.col("tournaments").list.len() > 0).then("tournaments")
                              .when(pl.col("pres_tournaments").list.len() > 0).then("pres_tournaments")
                              .otherwise("pass_tournaments"))

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per unordered pair: the joint-contest, weak-contest, check-down, presence, wide-call
        and rest-of-calls tests combined by a weighted Bonferroni, weighted Benjamini-Hochberg over the pairs
        that met in enough knockout events (weights from the events shared, :meth:`bh_weights`).

        Returns
        -------
        ``player``, ``opponent``, ``accounts``, ``tournaments``, ``p_value``, ``q_value`` (the two families',
        :meth:`family_q`; ``q_main`` and ``q_pass`` each family's own, ``main_alpha`` and ``pass_alpha`` their levels),
        ``score`` and the tests' figures and evidence
        hands."""
        t = self._candidates()
        if t.is_empty():
            return pl.DataFrame(schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                        "score": pl.Float64, "p_value": pl.Float64, "player": pl.Utf8,
                                        "opponent": pl.Utf8, "q_value": pl.Float64, "joint": pl.Int64,
                                        "bounties_won": pl.Int64})
        f = lambda c: (t[c] if c in t.columns else pl.Series([None] * len(t), dtype=pl.Float64)).cast(pl.Float64).to_numpy(allow_copy=True)  # noqa: E731
        p_joint = np.where(f("joint") > 0, np.clip(_st.poisson.sf(f("joint") - 1, np.maximum(f("expected"), 1e-9)), 1e-300, 1), np.nan)
        wj, we = f("weak_joint"), f("weak_expected")
        p_weak = np.where(we > 0, np.clip(_st.poisson.sf(wj - 1, np.maximum(we, 1e-9)), 1e-300, 1), np.nan)
        p_weak = np.where(np.isnan(wj), np.nan, p_weak)
        jp = f("joint_postflop")
        p_cd = np.where(jp > 0, stats.binom_tail(f("checked_down"), jp, self.checkdown_rate_), np.nan)
        p_wide = stats.min_p_bonferroni(f("wide_a_p"), f("wide_b_p"))
        pn = np.nan_to_num(f("pres_n"))
        p_pres = np.where(pn >= self.min_decisions, f("pres_p"), np.nan)
        # the all-in tests (Fisher) and the presence test are two views of one deviation: the better of the two,
        # Bonferroni-corrected (a pair seen only by one of them keeps that one's p-value)
        # wide calls: continuations with the partner in where the player's own baseline folds (cards known)
        p_wc = f("wc_p")
        # every other continuation with the partner in (own baseline continues >= 30 %): disjoint decisions, so
        # Fisher's method joins it with the wide calls (a gang's fold turned into a call is often a middling hand)
        p_nw = f("nw_p")
        p_all = np.where(np.isnan(p_wc) & np.isnan(p_nw), np.nan, stats.fisher_combine(p_wc, p_nw))
        # four views of one deviation, combined by weighted Bonferroni (valid under any dependence): most of the
        # error budget to the wide calls alone and to the wide calls with the rest (cards known); without cards
        # (player view) presence and the all-in tests share it
        p = stats.weighted_bonferroni([p_wc, p_all, p_pres, stats.fisher_combine(p_joint, p_weak, p_cd, p_wide)],
                                      list(self.test_weights))
        # independent filtering: only pairs that could both contest at least min_spots targets, or that
        # faced at least min_decisions preflop decisions with the other still in against a short bounty target,
        # and that shared knockout tables in at least min_events tournaments
        testable = ((f("spots") >= self.min_spots) | (pn >= self.min_decisions)) & (f("events") >= self.min_events)
        pt = np.where(testable, p, np.nan)
        # weighted BH: the error budget goes to the pairs seated together in more knockout tournaments (the
        # opportunity a gang needs, counted before looking at what they did); weights average 1 over the tested
        w = self.bh_weights(f("events"), testable)
        q_main, q_pass, q, p, main_alpha, pass_alpha, q_spare, spare_alpha = self.family_levels(
            pt, w, f("pass_p"), f("tc_min"), p, p_spare=f("sp_p"))
        return t.with_columns(
            pl.Series("p_joint", p_joint), pl.Series("p_weak", p_weak, nan_to_null=True),
            pl.Series("p_checkdown", p_cd, nan_to_null=True), pl.Series("p_wide", p_wide, nan_to_null=True),
            pl.Series("p_presence", p_pres, nan_to_null=True), pl.Series("p_wide_calls", p_wc, nan_to_null=True),
            pl.Series("p_rest_calls", p_nw, nan_to_null=True), pl.Series("p_all_calls", p_all, nan_to_null=True),
            pl.Series("p_value", p, nan_to_null=True), pl.Series("q_value", q, nan_to_null=True),
            pl.Series("bh_weight", np.where(testable, w, np.nan), nan_to_null=True),
            pl.Series("q_main", q_main, nan_to_null=True), pl.Series("q_pass", q_pass, nan_to_null=True),
            pl.lit(main_alpha).alias("main_alpha"), pl.lit(pass_alpha).alias("pass_alpha"),
            pl.Series("q_spare", q_spare, nan_to_null=True), pl.lit(spare_alpha).alias("spare_alpha"),
            # −log10 q, ties (BH q-values saturate at 1) broken by the p-value: at most +0.01
            pl.Series("score", stats.score_from_q(q) + 0.01 * np.nan_to_num(np.minimum(-np.log10(np.clip(p, 1e-30, 1.0)), 30.0)) / 30.0),
            accounts=pl.concat_list("player", "opponent"),
        ).sort("score", descending=True)

    def family_q(self, p_main: np.ndarray, w_main: np.ndarray, p_pass: np.ndarray, p_min: np.ndarray,
                 p_report: np.ndarray | None = None, *, p_spare: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]:
        """The first six values of :meth:`family_levels` (the sparing family's q-values and level left out)."""
        return self.family_levels(p_main, w_main, p_pass, p_min, p_report, p_spare=p_spare)[:6]

    def family_levels(self, p_main: np.ndarray, w_main: np.ndarray, p_pass: np.ndarray, p_min: np.ndarray,
                      p_report: np.ndarray | None = None, *, p_spare: np.ndarray | None = None) -> tuple:
        """The q-values of the three families and the one q-value of a pair.

        The main family (``p_main``, NaN for a pair not testable there) is weighted BH with the knockout-event weights
        ``w_main`` (:meth:`bh_weights`). The bounty-passing family is Gilbert's discrete BH (:func:`~detectors.features.
        gameplay.discrete_bh`) over the pairs of :func:`~detectors.features.gameplay.bounty_passing.tarone_selection`
        at its level (the pairs whose calls of the other's short raise could reach significance, fixed by the
        opportunities; no ``min_events``: a pair that passed a bounty in one tournament is tested). The sparing family
        (``p_spare``, finite for the pairs :meth:`_fit_sparing` selected by Tarone's rule) is BH over those pairs. The
        main family runs at ``alpha * (1 - pass_share)``; the passing and sparing families share ``alpha *
        pass_share``, the sparing family ``alpha * spare_share`` of it: the false-discovery rate of the union of the
        rejections is at most the sum of the levels, ``alpha``. A family with no hypothesis (which pairs are tested
        depends on the opportunities only) leaves its share: the sparing family's to the passing family and the
        reverse, the two's to the main family and the main family's to the two. Without a sparing hypothesis the
        levels are those of the two families alone. Returns each family's own q-values (main, passing), the pair's
        q-value min over the families of q / level x alpha (at most 1), its p-value (``p_pass`` or ``p_spare`` where
        that family gave the q, else ``p_report``, the pair's main p-value also where the main family did not test
        it; default ``p_main``), the main and passing levels, then the sparing family's q-values and level."""
        n = len(p_main)
        sp = np.full(n, np.nan) if p_spare is None else np.asarray(p_spare, dtype=float)
        s = float(self.pass_share)
        e = min(float(self.spare_share), s)
        main, spare = np.isfinite(p_main), np.isfinite(sp) & (e > 0)
        ok, lp = np.isfinite(p_pass), s - e if spare.any() else s
        pas = (ok & tarone_selection(np.where(ok, p_min, np.nan), self.alpha * lp)) if lp > 0 else np.zeros(n, bool)
        # the passing and sparing families' shares of pass_share, an empty one's given to the other
        sh = np.array([(s - e) * pas.any(), e * spare.any()])
        sh = sh / sh.sum() * s if sh.sum() > 0 else sh
        raw = np.array([(1.0 - s) * main.any(), *sh])
        shares = raw / raw.sum() if raw.sum() > 0 else np.array([1.0, 0.0, 0.0])
        pw = np.minimum(1.0, np.nan_to_num(p_main, nan=1.0) / np.maximum(w_main, 1e-300))
        q_main = stats.bh_qvalues(np.where(main, pw, np.nan))
        q_pass, q_spare = np.full(n, np.nan), np.full(n, np.nan)
        if pas.any():
            q_pass[pas] = stats.bh_qvalues(np.asarray(p_pass, dtype=float)[pas])
        if spare.any():
            q_spare[spare] = stats.bh_qvalues(sp[spare])
        scaled = [np.nan_to_num(x, nan=np.inf) / max(h, 1e-12) for x, h in zip((q_main, q_pass, q_spare), shares)]
        best = np.minimum(np.minimum(scaled[0], scaled[1]), scaled[2])
        q = np.where(np.isfinite(best), np.minimum(best, 1.0), np.nan)
        p = np.where(scaled[1] < np.minimum(scaled[0], scaled[2]), p_pass,
                     np.where(scaled[2] < scaled[0], sp, p_main if p_report is None else p_report))
        return (q_main, q_pass, q, p, self.alpha * float(shares[0]), self.alpha * float(shares[1]), q_spare,
                self.alpha * float(shares[2]))

    def bh_weights(self, events: np.ndarray, testable: np.ndarray) -> np.ndarray:
        """Prior weights of the weighted Benjamini–Hochberg procedure (Genovese, Roeder & Wasserman 2006).

        ``min(1, (events / event_scale)^event_power)`` rescaled to mean 1 over the tested pairs, where ``events`` is the
        number of knockout tournaments in which the pair was dealt in together at one table: a count of
        opportunities fixed before their play is looked at (as the ``min_events`` filter), so under the null the
        p-values are independent of it and the false-discovery rate stays controlled. ``event_scale=None``: equal
        weights (plain BH).
        """
        ok = testable & np.isfinite(events)
        if self.event_scale is None or not ok.any():
            return np.where(ok, 1.0, 0.0)
        raw = np.where(ok, np.minimum(1.0, (np.nan_to_num(events) / self.event_scale) ** self.event_power), 0.0)
        if raw.sum() <= 0:
            return np.where(ok, 1.0, 0.0)
        return raw * ok.sum() / raw.sum()

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged``: the q-value (weighted Benjamini-Hochberg over the testable pairs,
        :meth:`score`) at most ``alpha``; a pair without a q-value (not testable) is not flagged."""
        return scores.with_columns(flagged=pl.col("q_value").fill_null(1.0) <= self.alpha)

    def merge_group(self, best: dict[str, Any], members: list[dict[str, Any]], shape: str) -> dict[str, Any]:
        """A ring's tournaments and evidence hands: the union of its pairs' (the wide calls strongest pair first)."""
        best["tournaments"] = sorted({x for r in members for x in r["tournaments"]})
        best["hands"] = sorted({x for r in members for x in r["hands"]})
        best["won_hands"] = sorted({x for r in members for x in r["won_hands"]})
        best["cd_hands"] = sorted({x for r in members for x in r["cd_hands"]})
        best["pres_hands"] = sorted({x for r in members for x in (r.get("pres_hands") or [])})
        for c in ("tc_hands", "sh_hands", "spare_hands"):
            best[c] = list(dict.fromkeys(x for r in sorted(members, key=lambda r: -r["score"]) for x in (r.get(c) or [])))
        # the wide calls of the ring, strongest pair's first, each pair's least likely first
        best["wc_hands"] = list(dict.fromkeys(x for r in sorted(members, key=lambda r: -r["score"])
                                              for x in (r.get("wc_hands") or [])))
        return best
