"""The ChipDumpingDetector: fit, score, threshold."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.base import HAND_INPUTS, PairDetector
from detectors.chip_dumping.cells import baseline_tests
from detectors.chip_dumping.evidence import EvidenceMixin
from detectors.chip_dumping.flows import deviation_flow, exchange_flow, receiver_tests
from detectors.chip_dumping.moved import (EXCHANGE_COLUMNS, amount_rank_p, between_pair_variance, deviation_moved_p,
                                          exchange_moved_p, population_variance)
from detectors.chip_dumping.presence import PRESENCE_COLUMNS, preflop_table, presence_tests
from detectors.features import gameplay as gp
from detectors.features.window_views import window_span, window_tables


class ChipDumpingDetector(EvidenceMixin, PairDetector):
    """Ordered pairs where one side gives value to the other, judged by the cards against its own baseline."""

    kind = "chip_dumping"
    inputs = HAND_INPUTS
    directed = True  # giver -> receiver
    unflagged_inside_groups = False  # one case per set of accounts (the queue's cases are sets of accounts)
    def __init__(
        self,
        *,
        alpha: float = 0.01,
        random_state: int = 0,
        min_value_n: int = 10,
        min_test_hands: int = 10,
        samples: int = 16,
        max_unflagged: int = 300,
        min_presence_n: int = 20,
        min_presence_own: int = 10,
        value_gate: bool = True,
        late_fold_min_strength: float | None = 0.5,
        rare_tail: str = "predictive",
        deviation_gate: bool = True,
        junk_bins: tuple[str, ...] = stats.JUNK_BINS,
        presence_window_s: float | None = 3600.0,
        value_prior_df: float = 2.0,
        heads_up_share: float | None = 0.5,
        flow_gate_cards_known: bool = False,
        moved_level: float | None = None,
        value_between: bool = True,
        null_tail: tuple[float, ...] | None = (0.1, 0.01, 0.001),
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.null_tail = null_tail
        self.heads_up_share = heads_up_share
        self.moved_level = moved_level
        self.flow_gate_cards_known = flow_gate_cards_known
        self.presence_window_s = presence_window_s
        self.value_prior_df = value_prior_df
        self.junk_bins = junk_bins
        self.deviation_gate = deviation_gate
        self.rare_tail = rare_tail
        self.late_fold_min_strength = late_fold_min_strength
        self.min_presence_n = min_presence_n
        self.min_presence_own = min_presence_own
        self.value_gate = value_gate
        self.value_between = value_between
        self.min_value_n = min_value_n
        self.min_test_hands = min_test_hands
        self.samples = samples
        self.max_unflagged = max_unflagged

    def fit(self, con: duckdb.DuckDBPyConnection) -> "ChipDumpingDetector":
        """Learn each player's own play towards everyone else: the card-aware value given, the junk,
        late-fold and receiver tests, the presence test with its explaining away, the chip and deviation flows.

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``dec_`` (where the window's heads-up decisions are: a
        :class:`~detectors.features.gameplay.store.DecisionSource` of the day files, None without any),
        ``evidence_dir_`` with the evidence's files ``value_rows_`` (:meth:`_fit_value_rows`), ``continuation_rows_``
        and ``dealt_in_rows_`` (:meth:`_fit_presence_rows`: what ``explain`` reads of each case, written once per
        fit), ``pairs_``, ``recv_``, ``presence_``, ``flow_``, ``devflow_``, ``xflow_`` (:func:`exchange_flow`,
        with ``xch_pop_var_``), ``window_`` (the days judged,
        :func:`~detectors.features.window_views.window_span`: None for every day; the preflop decisions and the
        evidence's seats are the window's) and ``missing_``."""
        # the window's heads-up decisions stay in the day files: DuckDB counts and sums them per pair and cell
        # (detectors.chip_dumping.cells), only frames sized by the pairs come back
        store = gp.store_for(con)
        self._new_evidence_folder()  # this fit's evidence files (the previous fit's removed)
        self.dec_ = store.decision_source(con, samples=self.samples, random_state=self.random_state)
        dec = None if self.dec_ is None else self.dec_.relation(con)
        pairs = store.pair_table(con, samples=self.samples, random_state=self.random_state)
        # own-baseline tests with each player's outlying partners left out of the baseline (stats.robust_own_baseline),
        # on the window's sums of the day tables' counts per pair and cell (the window's decisions are not counted)
        self.pairs_ = (baseline_tests(pairs, dec, alpha=self.alpha, rare_tail=self.rare_tail,
                                      junk_bins=self.junk_bins, cells=lambda test: store.baseline_cells(
                                          con, test, samples=self.samples, random_state=self.random_state))
                       if not pairs.is_empty() else pairs)
        self.recv_ = receiver_tests(dec, alpha=self.alpha, late_fold_min_strength=self.late_fold_min_strength,
                                    rare_tail=self.rare_tail)
        self.flow_ = store.chip_flow(con)
        # the chips that moved in the hands where the giver's play deviates (the count tests' spots), for the gate
        self.devflow_ = deviation_flow(con, dec, late_fold_min_strength=self.late_fold_min_strength)
        self.dev_pop_var_ = population_variance(self.devflow_)  # the chips-moved test's null for a thin own baseline
        self._fit_value_rows(con, dec)  # the evidence's value given per decision, sorted by pair (out of core)
        known = (dec.aggregate("avg(CASE WHEN equity IS NULL THEN 0.0 ELSE 1.0 END)").fetchall()[0][0]
                 if dec is not None else 0.0)
        # the preflop presence test and the evidence's dealt-in seats read the feature store's window only, as the
        # heads-up tests do (detectors.features.window_views: the tables whole with the default window)
        self.window_ = window_span(con)
        with window_tables(con, self.window_) as wcon:
            self._fit_presence(wcon)
            # the chips that moved in every hand the two exchanged chips, for the gate where the cards are unknown
            self.xflow_ = exchange_flow(wcon)
        self.xch_pop_var_ = population_variance(self.xflow_, EXCHANGE_COLUMNS, hands="xch_hands")
        self.missing_ = []
        if (known or 0.0) < 0.5:
            self.missing_.append(
                "card-aware value given: both players' hole cards known in only "
                f"{(known or 0.0):.0%} of heads-up decisions (player view); chip flow, presence and showdown hands only; "
                "where the chips did not move, the value given cannot stand in for them (that test needs both hands)"
            )
        return self

    def _fit_presence(self, con: duckdb.DuckDBPyConnection) -> None:
        """The presence test with its explaining away, and the giver's continuations the evidence reads (``fit``).

        Parameters
        ----------
        con : the warehouse read through the window (:func:`~detectors.features.window_views.window_tables`).

        Sets ``presence_``, and ``continuation_rows_`` and ``dealt_in_rows_`` (the evidence's files,
        :meth:`_fit_presence_rows`: the preflop decisions themselves are not kept)."""
        # the preflop decisions stay in DuckDB (the columns the test reads, and the strength the evidence's
        # continuations are ranked by), dropped when the tests are made
        with preflop_table(con, ("did", *PRESENCE_COLUMNS, "strength")) as pdec:
            self._fit_presence_rows(con, pdec)
            self._presence_passes(con, pdec)

    def _presence_passes(self, con: duckdb.DuckDBPyConnection, pdec: duckdb.DuckDBPyRelation) -> None:
        """The presence test's two calls (:meth:`_fit_presence`) on the preflop decisions ``pdec``
        (:func:`~detectors.chip_dumping.presence.preflop_table`): sets ``presence_``."""
        state: dict = {}  # the first call's passes, reused by the second call below (presence_tests)
        self.presence_ = presence_tests(con, pdec, alpha=self.alpha, min_n=self.min_presence_n,
                                        min_own=self.min_presence_own, state=state,
                                        window_s=self.presence_window_s)
        if self.presence_.is_empty():
            return
        # explaining away by the strongest evidence: the pairs the combined test finds (all five tests) join
        # the presence test's partners S, ranked by their combined p, and the presence test is made again. A
        # feeder's receiver with a thin presence baseline (not in S on presence alone) but strong heads-up
        # tests otherwise lends its effect to a table-mate (tuning mixed-275: linto_nuts1262, a real feeder,
        # flagged with tansorstar1165, all of whose 56 hands with linto had linto's receiver ranezu536 dealt in)
        t = self._combined(self.presence_)
        if "q_value" in t.columns:
            strong = t.filter(pl.col("q_value") <= self.alpha).select(
                "player", pl.col("opponent").alias("partner"), p=pl.col("p_value"))
            if not strong.is_empty():
                self.presence_ = presence_tests(con, pdec, alpha=self.alpha, min_n=self.min_presence_n,
                                                min_own=self.min_presence_own, partners=strong, state=state,
                                                window_s=self.presence_window_s)

    def _value_tests(self, pf: pl.DataFrame) -> pl.DataFrame:
        """Value given per heads-up hand to each opponent against the giver's own mean to the others.

        The test: the pair's mean value per hand against the giver's own mean to everyone else, with the pair's
        own variance (a few big gifts that vary little are strong evidence, however few the hands). The pair's
        variance s^2 over its n hands is read with a scaled inverse-chi-square prior centred on the giver's own
        variance to the others with ``value_prior_df`` degrees of freedom, ((n - 1) s^2 + nu var0) / (n - 1 + nu),
        so that a handful of identical values cannot fake certainty; the statistic (mean - mean0) / sqrt(var / n +
        var0 / n0) is read on Student's t with n - 1 + nu degrees of freedom (the posterior-predictive form of
        the Welch test; Gelman et al., *Bayesian Data Analysis*, 3rd ed., 2013, §3.2). Needs two hands or more.

        Robust baseline: a first pass (two-sided, BH at ``alpha``) finds the
        opponents a player treats unusually in either direction (a receiver's
        feeders, say); the second pass leaves them out of the player's baseline
        mean and variance, so one partner's planted play does not make every
        honest opponent look odd by contrast.

        Between opponents (``value_between``): an honest player gives some opponents more value than others (a
        stronger opponent, a deeper table), a spread that the pair's sampling error does not hold and that a pair of
        several hundred hands makes significant. The second pass adds to the statistic's variance the population's
        between-pair variance tau^2 (:func:`~detectors.chip_dumping.moved.between_pair_variance`, robust: the median
        of the pairs' squared z at its null value), over the pairs with ``min_value_n`` hands on both sides, as a
        random-effects test (DerSimonian & Laird, *Controlled Clinical Trials* 1986); the column ``value_tau2``.
        """
        from scipy import stats as st

        def test(t: pl.DataFrame, side: str, between: bool = False) -> np.ndarray:
            n = t["value_n"].fill_null(0).to_numpy().astype(float)
            n0 = t["n0"].fill_null(0).to_numpy().astype(float)
            m0, v0 = t["mean0"].fill_null(0).to_numpy(), t["var0"].fill_null(1).to_numpy()
            nu = float(self.value_prior_df)
            with np.errstate(divide="ignore", invalid="ignore"):
                m = t["value_w"].fill_null(0).to_numpy() / n
                s2 = np.maximum(t["value_sq"].fill_null(0).to_numpy() / n - m ** 2, 0.0) * n / (n - 1)
                var = ((n - 1) * s2 + nu * v0) / (n - 1 + nu)
                se2 = var / n + v0 / np.maximum(n0, 1.0)
                made = (n >= self.min_value_n) & (n0 >= self.min_value_n)
                # the honest pairs' own spread between opponents (a random effect), read from the pairs tested
                tau2 = between_pair_variance(np.where(made, m - m0, np.nan), se2) if between else 0.0
                z = (m - m0) / np.sqrt(se2 + tau2)
            between_var[side] = tau2
            df = np.maximum(n - 1 + nu, 1.0)
            p = st.t.sf(z, df) if side == "greater" else st.t.cdf(z, df)
            return np.where((n >= 2) & np.isfinite(z), np.clip(p, 1e-300, 1.0), np.nan)

        def baseline(t: pl.DataFrame, me: pl.DataFrame) -> pl.DataFrame:
            t = t.drop([c for c in ("S", "S2", "N", "n0", "s0", "q0", "mean0", "var0") if c in t.columns])
            t = t.join(me, on="player", how="left").with_columns(
                n0=pl.col("N") - pl.when(pl.col("_out")).then(0).otherwise(pl.col("value_n")),
                s0=pl.col("S") - pl.when(pl.col("_out")).then(0.0).otherwise(pl.col("value_w")),
                q0=pl.col("S2") - pl.when(pl.col("_out")).then(0.0).otherwise(pl.col("value_sq")),
            )
            t = t.with_columns(mean0=pl.col("s0") / pl.col("n0").clip(1))
            return t.with_columns(var0=(pl.col("q0") / pl.col("n0").clip(1) - pl.col("mean0") ** 2).clip(1e-6))

        between_var: dict[str, float] = {}  # the tau^2 each call of test() used
        t = pf.with_columns(_out=pl.lit(False))
        me = t.group_by("player").agg(S=pl.col("value_w").sum(), S2=pl.col("value_sq").sum(), N=pl.col("value_n").sum())
        t = baseline(t, me)
        p2 = np.fmin(test(t, "greater"), test(t, "less")) * 2
        out = pl.Series(np.nan_to_num(stats.bh_qvalues(np.clip(p2, 0, 1)), nan=1.0) <= self.alpha)
        t = t.with_columns(_out=out)
        me = t.filter(~pl.col("_out")).group_by("player").agg(
            S=pl.col("value_w").sum(), S2=pl.col("value_sq").sum(), N=pl.col("value_n").sum())
        t = baseline(t, me)
        p = test(t, "greater", self.value_between)
        return t.with_columns(pl.Series("value_p", p, nan_to_null=True),
                              value_tau2=pl.lit(between_var["greater"], pl.Float64)).drop("_out")

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per ordered pair (giver ``player``, receiver ``opponent``): the five tests' p-values
        combined by Fisher's method, Benjamini-Hochberg over the pairs that met often enough (independent
        filtering, Bourgon, Gentleman & Huber, PNAS 2010).

        Returns
        -------
        ``player``, ``opponent``, ``accounts``, ``tournaments``, ``p_value``, ``q_value``, ``score`` (-log10 q),
        the tests' figures, ``net_flow_bb`` and the deviation flow."""
        t = self._combined(self.presence_)
        if "q_value" not in t.columns:
            return t
        # candidates: every direction in which the chips moved, and every tested direction whatever the flow. A
        # feeder whose honest hands against its receiver won back more than it dumped (a small dump in a few
        # tournaments) leaves the flowing row to the receiver's side, whose tests look the wrong way: the dump
        # direction must stay a case (unflagged: a flag still needs the chips to have moved, ``threshold``)
        return t.filter((pl.col("net_flow_bb") > 0) | pl.col("q_value").is_not_null()).sort("score", descending=True)

    def _combined(self, presence: pl.DataFrame) -> pl.DataFrame:
        """Every ordered pair with its tests, chip flow, Fisher-combined ``p_value`` and BH ``q_value``."""
        pf = self.pairs_
        pres = presence.rename({"partner": "opponent"})
        if pf.is_empty() and pres.is_empty():
            return pl.DataFrame(schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                        "score": pl.Float64, "p_value": pl.Float64})
        t = self._value_tests(pf) if not pf.is_empty() else pf
        if not t.is_empty() and not self.recv_.is_empty():
            t = t.join(self.recv_, on=["player", "opponent"], how="left")
        # candidates: ordered pairs that met heads-up, and pairs seen by the presence test
        t = t.join(pres, on=["player", "opponent"], how="full", coalesce=True) if not t.is_empty() else pres
        flow = self.flow_.select("player", "opponent", pl.col("flow_bb").alias("_flow"), pl.col("hands").alias("flow_hands"))
        rev = self.flow_.select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                                pl.col("flow_bb").alias("flow_back_bb"), pl.col("hands").alias("flow_back_hands"))
        t = t.join(flow, on=["player", "opponent"], how="left").join(rev, on=["player", "opponent"], how="left")
        devflow = getattr(self, "devflow_", None)
        if devflow is not None and not devflow.is_empty():
            t = t.join(devflow.rename({"met_hands": "dev_met_hands"}), on=["player", "opponent"], how="left")
        xflow = getattr(self, "xflow_", None)
        if xflow is not None and not xflow.is_empty():
            t = t.join(xflow, on=["player", "opponent"], how="left")
        for c in ("dev_hands", "dev_loss_hands"):
            t = t.with_columns((pl.col(c).fill_null(0) if c in t.columns else pl.lit(0)).cast(pl.Int64).alias(c))
        for c in ("dev_flow_bb", "dev_exp_bb"):
            t = t.with_columns((pl.col(c).fill_null(0.0) if c in t.columns else pl.lit(0.0)).cast(pl.Float64).alias(c))
        t = t.with_columns(
            net_flow_bb=pl.col("_flow").fill_null(0.0) - pl.col("flow_back_bb").fill_null(0.0),
            flow_hands=pl.col("flow_hands").fill_null(0),
            hu_hands=pl.col("hu_hands").fill_null(0) if "hu_hands" in t.columns else pl.lit(0),
        ).drop("_flow")
        for c in ("value_p", "junk_p", "fold_p", "pres_p", "value_w", "value_n", "mean0"):
            if c not in t.columns:
                t = t.with_columns(pl.lit(None, pl.Float64).alias(c))
        for c in ("n0", "junk_n0", "fold_n0", "base_n", "raggr_p", "raggr_n0", "lfold_p", "lfold_n0"):
            if c not in t.columns:
                t = t.with_columns(pl.lit(None, pl.Float64).alias(c))
        f = lambda c: t[c].to_numpy(allow_copy=True).astype(float)  # noqa: E731
        # a heads-up own-baseline test needs an own baseline: where the giver has (almost) no heads-up hands
        # against others, the "own" rate is the population's prior and a loose player would look like a feeder
        own = lambda p, n0, k: np.where(np.nan_to_num(f(n0)) >= k, f(p), np.nan)  # noqa: E731
        k = self.min_value_n
        p = stats.fisher_combine(own("value_p", "n0", k), own("junk_p", "junk_n0", k), own("lfold_p", "lfold_n0", k),
                                 own("raggr_p", "raggr_n0", k), f("pres_p"))
        # independent filtering (Bourgon, Gentleman & Huber, PNAS 2010): test only ordered pairs that played
        # enough heads-up hands or faced enough preflop decisions together; the filter ignores the p-values
        q = self._family_q(p, t["hu_hands"].to_numpy() >= self.min_test_hands,
                           np.nan_to_num(f("pres_n")) >= self.min_presence_n)
        t = t.with_columns(
            pl.Series("p_value", p, nan_to_null=True),
            pl.Series("q_value", q, nan_to_null=True),
            pl.Series("score", stats.score_from_q(q)),
            accounts=pl.concat_list("player", "opponent"),
            tournaments=pl.lit([], pl.List(pl.Utf8)),
            value_mean=pl.col("value_w") / pl.col("value_n").clip(1),
        )
        return t.with_columns(pl.Series("moved_p", self._moved_p(t), nan_to_null=True),
                              pl.Series("flow_moved_p", self._flow_moved_p(t), nan_to_null=True))

    def _moved_p(self, t: pl.DataFrame) -> np.ndarray:
        """The p-value of "the chips did not move" per row of ``t`` (:func:`~detectors.chip_dumping.moved.deviation_moved_p`,
        with this fit's population variance where there is one): NaN where it cannot be made."""
        return deviation_moved_p(t, alpha=self.alpha, prior_df=self.value_prior_df, min_n0=self.min_value_n,
                                 pop_var=getattr(self, "dev_pop_var_", None))

    def _flow_moved_p(self, t: pl.DataFrame) -> np.ndarray:
        """The same over every hand in which chips moved between A and B, the test where the cards are unknown
        (:func:`~detectors.chip_dumping.moved.exchange_moved_p`, with this fit's population variance of such hands)."""
        return exchange_moved_p(t, alpha=self.alpha, prior_df=self.value_prior_df, min_n0=self.min_value_n,
                                pop_var=getattr(self, "xch_pop_var_", None))

    def _family_q(self, p: np.ndarray, hu: np.ndarray, pres: np.ndarray) -> np.ndarray:
        """The false-discovery q-values of the combined p-values ``p``, on the scale of ``alpha``.

        Parameters
        ----------
        p : the pairs' combined p-values. hu : the pairs that met heads-up in at least ``min_test_hands`` hands.
        pres : the pairs with at least ``min_presence_n`` preflop decisions together (the presence test).

        Returns
        -------
        One q per pair, NaN for a pair in neither filter. Method: with ``heads_up_share`` None, Benjamini-Hochberg
        over every pair of either filter. Otherwise two families (the union controlled at ``alpha`` as the sum of
        its parts, as bounty collusion's two families): the pairs that met heads-up, whose four heads-up tests can
        be made, at ``alpha * heads_up_share``, and the pairs seen by the presence test alone at
        ``alpha * (1 - heads_up_share)``; each family's BH q is divided by its share (capped at 1), so that
        ``q <= alpha`` is the flag in either. The presence-only pairs are some fifteen times as many as the
        heads-up ones and, pooled, set the heads-up pairs' q (docs/measurements.md, issue 32). Each family's
        p-values are first read on the family's own null tail (:func:`null_tail_ratio`, ``null_tail``)."""
        pres = pres & ~hu if self.heads_up_share is not None else pres | hu
        if self.heads_up_share is None:
            return stats.bh_qvalues(np.where(pres, p * self._tail_ratio(p, pres), np.nan))
        s = float(self.heads_up_share)
        q_hu = (stats.bh_qvalues(np.where(hu, p * self._tail_ratio(p, hu), np.nan)) / s if s > 0
                else np.full(p.shape, np.nan))
        q_pres = (stats.bh_qvalues(np.where(pres, p * self._tail_ratio(p, pres), np.nan)) / (1.0 - s) if s < 1
                  else np.full(p.shape, np.nan))
        return np.minimum(np.where(hu, q_hu, q_pres), 1.0)

    def _tail_ratio(self, p: np.ndarray, family: np.ndarray) -> float:
        """The factor on a family's p-values (:meth:`_family_q`): :func:`null_tail_ratio` of the family's p-values at
        the bounds ``null_tail``, 1 with ``null_tail`` None (the p-values read as uniform under the null)."""
        if self.null_tail is None:
            return 1.0
        return null_tail_ratio(p[family & np.isfinite(p)], self.null_tail)

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged`` (and ``amount_p``, ``moved_p``, ``flow_amount_p``, ``flow_moved_p`` where
        missing): q <= alpha and the chips moved: in the deviation hands (:meth:`_deviation_moved`), or as value given
        (:meth:`_value_moved`), three tests sharing ``moved_level`` (:meth:`_gate_levels`), or, where the cards are unknown,
        over every hand in which chips moved between them (:meth:`_flow_moved`, the same two tests on those hands)."""
        for c, v in (("dev_flow_bb", 0.0), ("dev_exp_bb", 0.0), ("dev_loss_hands", 0), ("xch_flow_bb", 0.0),
                     ("xch_exp_bb", 0.0), ("xch_hands", 0.0), ("xch_loss_hands", 0.0)):
            if c not in scores.columns:
                scores = scores.with_columns(pl.lit(v).alias(c))
        if "moved_p" not in scores.columns:
            scores = scores.with_columns(pl.Series("moved_p", self._moved_p(scores), pl.Float64, nan_to_null=True))
        if "flow_moved_p" not in scores.columns:
            scores = scores.with_columns(pl.Series("flow_moved_p", self._flow_moved_p(scores), pl.Float64,
                                                   nan_to_null=True))
        # the amount against the population's scored pairs (every row of ``scores``)
        scores = scores.with_columns(pl.Series("amount_p", amount_rank_p(scores), pl.Float64),
                                     pl.Series("flow_amount_p", amount_rank_p(scores, "xch_flow_bb", "xch_exp_bb",
                                                                              "xch_hands"), pl.Float64))
        moved = self._flow_moved() | self._value_moved() | self._deviation_moved()
        return scores.with_columns(flagged=(pl.col("q_value").fill_null(1.0) <= self.alpha) & moved)

    def _flow_moved(self) -> pl.Expr:
        """Where the cards are unknown (the value test not made on ``min_value_n`` heads-up hands; on every row with
        ``flow_gate_cards_known``), the chips moved over every hand A met B: "the chips did not move" rejected by
        either of two tests at half of ``moved_level`` (None: ``alpha``), as :meth:`_deviation_moved` on the
        deviation hands, over every hand in which chips moved between A and B (:func:`exchange_flow`: a dump by
        shoves into a field moves chips without a heads-up decision): A's losses to B per such hand against A's own
        per-hand losses to everyone else, with the pair's variance (``flow_moved_p``,
        :func:`~detectors.chip_dumping.moved.exchange_moved_p`: "A loses to everyone like this"), or the amount
        beyond A's own rate ranked among the population's pairs (``flow_amount_p``,
        :func:`~detectors.chip_dumping.moved.amount_rank_p` on ``xch_flow_bb``: "honest match-ups of this population
        move as much"). Where the cards are known, the chips of a dump moved where A's play deviates
        (:meth:`_deviation_moved`) or as value given (:meth:`_value_moved`); the net flow over all hands also moves
        with a stronger player's edge over a weaker one and with the luck of the cards (an honest heads-up pair of
        a tuning world flagged on 88 bb over 512 hands, 3 bb of them in its deviation hands: docs/measurements.md,
        issue 32)."""
        half = (self.alpha if self.moved_level is None else self.moved_level) / 2
        flow = ((pl.col("flow_moved_p").fill_null(1.0).fill_nan(1.0) <= half)
                | (pl.col("flow_amount_p").fill_null(1.0).fill_nan(1.0) <= half))
        if self.flow_gate_cards_known:
            return flow
        known = pl.col("value_n").fill_null(0) >= self.min_value_n
        return flow & ~known

    def merge_group(self, best: dict[str, Any], members: list[dict[str, Any]], shape: str) -> dict[str, Any]:
        """A star's or ring's net flow: the sum of its flows."""
        best["net_flow_bb"] = sum(r["net_flow_bb"] for r in members)
        return best

    def _value_made(self) -> pl.Expr:
        """Whether the value test can reject "the chips did not move" on a row: the gate's value test on (``value_gate``)
        and made on at least ``min_value_n`` heads-up hands on both sides (the pair's and the giver's against others)."""
        if not self.value_gate:
            return pl.lit(False)
        return (pl.col("n0").fill_null(0) >= self.min_value_n) & (pl.col("value_n").fill_null(0) >= self.min_value_n)

    def _gate_levels(self) -> tuple[float, float, float]:
        """The levels of the three tests of "the chips did not move" where the cards are known (the gate's level
        ``moved_level``, None: ``alpha``, shared so that together they reject at most at it, Bonferroni): the value
        given (a quarter), A's losses in the deviation hands against its own (a quarter, half where the value test
        is not made on the row), the amount ranked among the population's pairs (half). Returns (value, own, amount):
        the giver's own null has half of the level, the population's the other half."""
        level = self.alpha if self.moved_level is None else self.moved_level
        return level / 4, level / 4, level / 2

    def _value_moved(self) -> pl.Expr:
        """The card-aware value given (``value_p``, cards known) rejects "the chips did not move" at a quarter of the
        gate's level (:meth:`_gate_levels`), made on at least ``min_value_n`` hands on both sides (:meth:`_value_made`;
        never true where the cards are unknown): the chips the giver handed over in expectation, whatever the luck
        of the cards gave back (a fixed level, 1e-3, before 2026-12-07: docs/measurements.md, issue 32)."""
        return self._value_made() & (pl.col("value_p").fill_null(1.0).fill_nan(1.0) <= self._gate_levels()[0])

    def _deviation_moved(self) -> pl.Expr:
        """The chips moved in the deviation hands (:func:`deviation_flow`): the benign explanation "the chips did not
        move" is rejected by either of two tests at their shares of the gate's level (:meth:`_gate_levels`, the
        value given taking the third share, :meth:`_value_moved`; Bonferroni, so that together they reject at most
        at ``moved_level``, None: ``alpha``): A's losses to B there against A's own per-hand losses in such hands
        against everyone else, with the pair's variance (``moved_p``,
        :func:`~detectors.chip_dumping.moved.deviation_moved_p`: a small loss in every hand counts, a big pot lost
        once does not), at a quarter of the level where the value test is made on the row and half where it is not,
        or the amount beyond A's own rate against the population's pairs (``amount_p``,
        :func:`~detectors.chip_dumping.moved.amount_rank_p`: what an honest match-up of this population moves) at
        half. Never true where the cards are unknown (no deviation hands)."""
        if not self.deviation_gate:
            return pl.lit(False)
        _, own, amount = self._gate_levels()
        own_level = pl.when(self._value_made()).then(own).otherwise(2 * own)
        return ((pl.col("moved_p").fill_null(1.0).fill_nan(1.0) <= own_level)
                | (pl.col("amount_p").fill_null(1.0).fill_nan(1.0) <= amount))


def null_tail_ratio(p: np.ndarray, tails: tuple[float, ...]) -> float:
    """How much fewer of a family's p-values lie in its lower tail than a uniform null puts there: the factor that
    reads them on the family's own null.

    Parameters
    ----------
    p : the family's p-values (every pair tested in it, the few dumps among them).
    tails : the tail's bounds c (0.1, 0.01, 0.001), from the bulk of the honest pairs into their tail.

    Returns
    -------
    r = min(1, max over c of (#{p <= c} + 1) / ((k + 1) c)) over the family's k p-values: 1 where any bound holds
    its uniform share. Method: Fisher's combination is uniform under the null only if each of its tests is; the
    own-baseline count tests with their predictive tails, and tests of a few decisions, are conservative, and the
    combined p-values of a population's honest pairs fall below c less often than c (the family's null CDF
    F0(c) < c). Where F0(t) / t is at most r below the smallest bound (the null no less conservative deeper in its
    tail than at the bounds, measured on the honest populations: docs/measurements.md, issue 32), F0(t) <= r t, so
    r p is a p-value there (P(r p <= t) <= t) and Benjamini-Hochberg on r p keeps its level. The largest ratio
    over bounds from 0.1 to 0.001 is taken, so a null that is conservative in its bulk but not in its tail is
    read as uniform; r is estimated with the dumps among the pairs, which can only raise it (the conservative
    side), and with one added to each count (a small family's ratio stays near 1)."""
    k = int(p.size)
    if k == 0 or not tails:
        return 1.0
    return float(min(1.0, max((np.count_nonzero(p <= c) + 1.0) / ((k + 1.0) * c) for c in tails)))
