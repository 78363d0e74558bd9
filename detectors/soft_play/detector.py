"""The SoftPlayDetector: fit, score, threshold."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl
from scipy.stats import chi2

from detectors import stats
from detectors.base import HAND_INPUTS, PairDetector
from detectors.stats import baselines
from detectors.features import gameplay as gp
from detectors.features import identity
from detectors.soft_play.cells import WindowDecisions
from detectors.soft_play.evidence import EvidenceMixin
from detectors.soft_play.handcal import calibrate_hand_sums, calibration_table
from detectors.soft_play.rings import RingsMixin


class SoftPlayDetector(EvidenceMixin, RingsMixin, PairDetector):
    """Pairs that spare each other: own-baseline passivity and folding tests, BH across pairs (see the package
    docstring).

    Parameters
    ----------
    alpha : float
        false-discovery rate over the tested pairs.
    random_state : int
        seed of the card equities' Monte Carlo and of the predictive hand test's draws.
    min_hu_hands, min_spots : int
        heads-up hands together needed for a flag; decisions aimed at each other needed to be tested.
    max_ratio : float
        a deficit is material when observed / expected is at most this (folds: at least its inverse).
    samples : int
        Monte Carlo samples per card equity.
    max_unflagged : int
        unflagged pairs kept, ranked.
    tests, test_weights : tuple
        the spot tests (names of ``SPECS``, the first the main test) and their weighted-Bonferroni weights (the
        hand test's last).
    mutual_z : float or None
        each direction's z of the main test (or its share of the hand test, or its Stouffer z) at least this
        for a flag (None: off).
    skew : bool
        Edgeworth-corrected tails (:func:`detectors.stats.pool_directions`).
    weight_scale, power_weights : float or None, bool
        weighted BH (None: plain BH). ``power_weights`` (the default): a pair's weight is the power of its main test's
        expected bets to show a material deficit (``max_ratio``) at alpha / m, m the pairs tested
        (:func:`detectors.stats.deficit_power`), so the budget goes where a flag is possible however many pairs the
        window holds; off: min(1, expected bets / ``weight_scale``). Either rescaled to mean 1 over the tested.
    combined : tuple of (name, weight)
        the main test T = w z_main + w' max(z_support, 0) on disjoint decisions (() for the main test alone).
    explain_away : tuple of str
        the tests whose first-pass outliers leave every test's baseline.
    hand_test, hand_max_weight, hand_min_baseline : bool, float, float
        the whole-hand passivity test, its surprise cap, and the baseline (decisions against others per decision
        against the partner) above which the own rates are taken as known.
    hand_thin, hand_draws, hand_prior_strength, thin_weights, thin_check : bool, int, float, tuple, bool
        below ``hand_min_baseline``: the predictive hand test (posterior draws, each bin's prior capped at this many
        decisions) with its weighted-Bonferroni weights, and (``thin_check``, off by default) the check test's z
        divided again by sqrt(1 + n / n0). Off: the score test's variance already carries the own rate's estimation
        error (its beta-binomial term n^2 r / ((1 - r)(s + 1)), s the baseline's decisions plus the prior's), so
        the second division counted it twice; on the honest-only tuning world the thin pairs' p-values stay
        calibrated without it (docs/measurements.md, 2026-12-06).
    hand_mutual, side_stouffer, street_mutual : bool
        the mutual rule may read each side's share of the hand test, each side's Stouffer z, and each side's z on
        the street with the smallest p-value (``st_dz``, ``st_dz_r``; with ``by_street``): a pair sparing each other
        on one street only shows there, not in its z pooled over the streets.
    ring_tau : float or None
        rings: triangles of tested pairs each with p at most this, one combined test (None: off).
    coentry_prior, coentry_range : float or None, (float, float)
        the co-entry prior of the weighted BH: up to this factor, from co-entry p 10**-lo (x1) to 10**-hi.
    stage_bb, stage_tests : tuple
        the tournament stage as an own-rate bin of these tests: effective stack cut at these big blinds, cash
        apart (None: no stage bin).
    by_street : bool
        the main test made on each street apart and Fisher-combined (:func:`detectors.stats.street_tests`) in place
        of the test pooled over the streets: soft play on some streets only is not diluted by the others.
    street_support : bool
        with ``by_street``, the preflop support test (``combined``'s second, continuing facing the partner's open)
        enters the streets' Fisher combination as one more part (its decisions face a bet, the check test's do not:
        disjoint, independent under the null) in place of the support of :func:`detectors.stats.z_sum_with_support`,
        where the main test weighs it a quarter: partners who spare each other preflop only show there alone.
    hand_calibrate, hand_cal_width, hand_cal_min_hands : bool, float, int
        the whole-hand test's probability of a passive hand read from the population's own hands with the same
        predicted probability where that is higher (bins of log pi this wide, the lowest merged to this many hands;
        :mod:`detectors.soft_play.handcal`) in place of the product of the own rates, which treats a hand's decisions
        as independent and their number as fixed (off, the default: the product; on, it clears wrong flags of pairs
        with a handful of checked-through hands and loses a group the product finds, docs/measurements.md,
        2026-12-07). The thin pairs' predictive hand test keeps the product.
    value_bin : int or None
        the check test (and its streets and the hand test built on its decisions) read after the flop only where the
        player's strength bin is at least this (a bet there is for value; honest players bluff less into opponents
        who do not fold, none value-bets less into them; 2: strength at least 0.5, the bin the evidence hands read as
        a good hand); None: every strength. On the tuning worlds it clears a first-world wrong flag (two passive
        players who bluff each other less), finds a first-world tournament pair and loses one whose one side spared
        the other's weak hands only; nothing pooled falls (docs/measurements.md, 2026-12-07).
    """

    kind = "soft_play"
    inputs = {**HAND_INPUTS, "registrations": ("account", "ts", "kind", "tournament_id")}

    def __init__(
        self,
        *,
        alpha: float = 0.01,
        random_state: int = 0,
        min_hu_hands: int = 8,
        max_ratio: float = 0.75,
        samples: int = 16,
        max_unflagged: int = 300,
        min_spots: int = 30,
        test_weights: tuple[float, ...] = (0.45, 0.05, 0.05, 0.45),
        tests: tuple[str, ...] = ("chk", "rse", "fld"),
        mutual_z: float | None = 1.0,
        skew: bool = True,
        weight_scale: float | None = 20.0,
        power_weights: bool = True,
        combined: tuple[tuple[str, float], ...] = (("chk", 4.0), ("pre", 1.0)),
        explain_away: tuple[str, ...] = ("chk", "rse", "fld"),
        hand_test: bool = True,
        hand_max_weight: float = 10.0,
        hand_min_baseline: float = 0.5,
        hand_mutual: bool = True,
        hand_thin: bool = True,
        hand_draws: int = 512,
        hand_prior_strength: float | None = 2.0,
        thin_weights: tuple[float, ...] = (0.8, 0.05, 0.05, 0.1),
        side_stouffer: bool = True,
        street_mutual: bool = True,
        thin_check: bool = False,
        ring_tau: float | None = 0.05,
        coentry_prior: float | None = 30.0,
        coentry_range: tuple[float, float] = (3.0, 8.0),
        stage_bb: tuple[float, ...] | None = (20.0,),
        stage_tests: tuple[str, ...] = ("chk",),
        by_street: bool = True,
        street_support: bool = True,
        hand_calibrate: bool = False,
        hand_cal_width: float = 0.5,
        hand_cal_min_hands: int = 50,
        value_bin: int | None = 2,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.min_hu_hands = min_hu_hands
        self.min_spots = min_spots
        self.test_weights = test_weights
        self.tests = tests
        self.mutual_z = mutual_z
        self.skew = skew
        self.weight_scale = weight_scale
        self.power_weights = power_weights
        self.combined = combined
        self.explain_away = explain_away
        self.hand_test = hand_test
        self.hand_max_weight = hand_max_weight
        self.hand_min_baseline = hand_min_baseline
        self.hand_thin = hand_thin
        self.hand_draws = hand_draws
        self.hand_prior_strength = hand_prior_strength
        self.thin_weights = thin_weights
        self.thin_check = thin_check
        self.hand_mutual = hand_mutual
        self.side_stouffer = side_stouffer
        self.street_mutual = street_mutual
        self.ring_tau = ring_tau
        self.coentry_prior = coentry_prior
        self.coentry_range = coentry_range
        self.stage_bb = stage_bb
        self.stage_tests = stage_tests
        self.by_street = by_street
        self.street_support = street_support
        self.hand_calibrate = hand_calibrate
        self.hand_cal_width = hand_cal_width
        self.hand_cal_min_hands = hand_cal_min_hands
        self.value_bin = value_bin
        self.max_ratio = max_ratio
        self.samples = samples
        self.max_unflagged = max_unflagged

    # ---------------------------------------------------------------- fit / score
    def fit(self, con: duckdb.DuckDBPyConnection) -> "SoftPlayDetector":
        """Learn the population's own rates: every heads-up decision judged by the cards, each pair's
        own-baseline tests (robust baselines, explaining away) and the pooled, whole-hand and ring tests.

        The window's decisions are read by DuckDB from the day files and counted per pair and cell
        (:class:`detectors.soft_play.cells.WindowDecisions`): the tests read the counts (``cells_``), the
        whole-hand test per-hand sums made by DuckDB; no frame of the window's decisions is held.

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``source_`` (where the window's decisions are), ``cells_`` (their counts per pair, cell and
        action, :meth:`~detectors.soft_play.cells.WindowDecisions.cells`), ``pairs_`` (ordered-pair tests),
        ``pooled_`` (unordered-pair tests), ``outliers_``, ``coverage_`` (share of hands with the cards known) and
        ``missing_``."""
        self.source_ = WindowDecisions.of(con, samples=self.samples, random_state=self.random_state,
                                          stage_bb=self.stage_bb)
        pairs = gp.store_for(con).pair_table(con, samples=self.samples, random_state=self.random_state)
        with self.source_.kept(con):  # the decisions' cells joined once, read by each query of the fit
            # per pair, cell and action: the decisions counted (stats.WEIGHT), the cells those of SPECS: preflop the
            # starting hand's tenth (pbin), tournament or cash (tour), facing a real bet (vs_bet), the stage
            self.cells_ = self.source_.cells(con)
            # own-baseline tests with each player's outlying partners left out of the baseline
            # (stats.robust_own_baseline)
            self.pairs_ = (stats.replace_baseline_tests(pairs, self.cells_, alpha=self.alpha) if not pairs.is_empty()
                           else pairs)
            baselines.forget_replaced_tests(self.cells_, alpha=self.alpha)  # their pair counts are done with
            # the three pooled tests (both directions of the pair added up, stats.pool_directions)
            self.pooled_ = self._pooled_tests(con)
        n, known_n, other = self.source_.summary(con)
        self.coverage_ = gp.card_coverage(con) if n else 0.0
        self.missing_ = []
        known = known_n / n if n else 0.0
        if self.coverage_ < 0.5 or known < 0.5:
            self.missing_.append(
                "card-aware passivity and folding tests: hole cards known only for the hero and showdowns "
                f"({known:.0%} of heads-up decisions judged)"
            )
        if other:
            self.missing_.append("Omaha and other non-Hold'em decisions are not judged by the cards")
        return self

    # the own-rate bins of the tests without bins of their own in SPECS (stats.robust_own_baseline's default)
    BINS = ("preflop", "facing", "hu", "sbin")

    SPECS = {
        # no bet to call, heads-up: bet or check
        "chk": ("aggr", ~pl.col("facing"), "less"),
        # facing the other's real bet or raise (not just the blinds): raise or not
        "rse": ("aggr", pl.col("vs_bet"), "less"),
        # facing the other's real bet or raise: fold or not
        "fld": ("fold", pl.col("vs_bet"), "greater"),
        # preflop, facing the other's open or re-raise: continue (call or raise) or fold, by the starting hand's
        # percentile in tenths, heads-up or not, tournament or cash; own rates capped at 0.95 so that no single fold
        # decides the test (on the tuning populations no player's rate in a bin reaches 0.9: the cap changes nothing)
        "pre": ("commit", pl.col("vs_bet") & pl.col("preflop"), "less", ("hu", "tour", "pbin"), 0.95),
    }

    def _baseline_args(self, name: str) -> tuple[str, dict]:
        """The indicator and keyword arguments of :func:`detectors.stats.robust_own_baseline` for test ``name``."""
        y, where, side, *more = self.SPECS[name]
        kw = {"where": where, "side": side, **dict(zip(("bins", "max_rate"), more))}
        if self.stage_bb and name in self.stage_tests and "stage" in getattr(self, "cells_", pl.DataFrame()).columns:
            kw["bins"] = (*(kw.get("bins") or self.BINS), "stage")
        if name == "chk" and self.value_bin is not None:
            # after the flop, the spots where a bet is for value only (strength bin at least value_bin)
            kw["where"] = where & (pl.col("preflop") | (pl.col("sbin") >= self.value_bin))
        return y, kw

    def _pooled_tests(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """Per unordered pair, each test of ``self.tests`` pooled over both directions (``<name>_n``, ``_observed``,
        ``_expected``, ``_p_value``), and per direction the z of the first test (``dir_z``, ``dir_z_r``)."""
        out = None
        also = None
        if self.explain_away:
            also = self.outliers_ = stats.baseline_outliers(
                self.cells_, [self._baseline_args(x) for x in self.explain_away], alpha=self.alpha)
        for name in (self.tests[0], *[x for x in self.SPECS if x != self.tests[0]]):
            y, kw = self._baseline_args(name)
            side = kw["side"]
            d = stats.robust_own_baseline(self.cells_, y, alpha=self.alpha, also_out=also, **kw)
            if name != self.tests[0]:  # done with this selection (the first test's serves the streets, the hand test)
                baselines.forget_selection(self.cells_, y, alpha=self.alpha, **kw)
            t = stats.pool_directions(d, side=side, skew=self.skew).drop("z", "skew", strict=False)
            t = t.rename({c: f"{name}_{c}" for c in ("n", "observed", "expected", "p_value")})
            if self.side_stouffer:
                # this test's z per direction (the side's own decisions), for the side's Stouffer z of the mutual rule
                lo = pl.col("player") < pl.col("opponent")
                dz = d.select("player", "opponent", "z")
                t = t.join(dz.filter(lo).rename({"z": f"{name}_dz"}), on=["player", "opponent"], how="left").join(
                    dz.filter(~lo).select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                                          pl.col("z").alias(f"{name}_dz_r")), on=["player", "opponent"], how="left")
            if out is None:
                first_dir = d
                lo = pl.col("player") < pl.col("opponent")
                dz = d.select("player", "opponent", "z")
                t = t.join(dz.filter(lo).rename({"z": "dir_z"}), on=["player", "opponent"], how="left").join(
                    dz.filter(~lo).select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                                          pl.col("z").alias("dir_z_r")), on=["player", "opponent"], how="left")
                out = t
            else:
                out = out.join(t, on=["player", "opponent"], how="full", coalesce=True)
        if self.side_stouffer and out is not None:
            # each side's evidence from all its decisions aimed at the other: Stouffer's z over the tests made for that
            # direction (sum / sqrt(count)), ``sdir_z`` and ``sdir_z_r``
            for sfx in ("", "_r"):
                zs = [pl.col(f"{x}_dz{sfx}") for x in self.SPECS]
                k = pl.sum_horizontal(*[z.is_not_null().cast(pl.Float64) for z in zs])
                out = out.with_columns(pl.when(k > 0).then(pl.sum_horizontal(*[z.fill_null(0.0) for z in zs]) / k.sqrt())
                                       .alias(f"sdir_z{sfx}"))
            out = out.drop([f"{x}_dz{sfx}" for x in self.SPECS for sfx in ("", "_r")])
        if self.by_street and out is not None:
            # the main test street by street, Fisher-combined (stats.street_tests): partners who spare each other on some
            # streets only
            y, kw = self._baseline_args(self.tests[0])
            # (each street's thin own baselines read as a two-sample comparison, as the pooled check test's: thin_check)
            st = stats.street_tests(self.cells_, y, alpha=self.alpha, also_out=also, skew=self.skew,
                                    thin_below=self.hand_min_baseline if self.thin_check else None, forget=True, **kw)
            out = out.join(st, on=["player", "opponent"], how="left")
        if self.hand_test and out is not None:
            out = self._with_hand_test(con, out, also, first_dir)
        y, kw = self._baseline_args(self.tests[0])
        baselines.forget_selection(self.cells_, y, alpha=self.alpha, **kw)  # the first test's, done with
        return out

    def _with_hand_test(self, con: duckdb.DuckDBPyConnection, out: pl.DataFrame, also: pl.DataFrame | None,
                        first_dir: pl.DataFrame) -> pl.DataFrame:
        """``out`` with the whole-hand passivity test (``hp_*``; :func:`detectors.stats.hand_passivity_test`, its
        predictive form where a baseline is thin) and each side's share of it (``hdir_z``, ``hdir_z_r``).

        The own rates come from the counted cells; the per-hand sums of the test are made by DuckDB over the
        window's decisions (:meth:`~detectors.soft_play.cells.WindowDecisions.hand_sums`), and only the thin pairs'
        decisions are read as rows (the predictive test draws per cell in the order of the decisions)."""
        # whole hands checked through between them (the check test's decisions, heads-up, own rates as its)
        y, kw = self._baseline_args(self.tests[0])
        side = kw.pop("side", "less")
        rates = stats.own_rate_table(self.cells_, y, alpha=self.alpha, also_out=also, posterior=self.hand_thin, **kw)
        rated = stats.own_rates_per_decision(self.cells_, y, alpha=self.alpha, also_out=also, side=side,
                                             rates=rates, **kw).filter(pl.col("hu"))
        hp = stats.hand_passivity_from_hands(self._calibrated(self.source_.hand_sums(con, rated), "pairs"),
                                             max_weight=self.hand_max_weight)
        # the plug-in own rates are trusted only where each player's baseline outweighs the pair's own decisions
        lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
        base = first_dir.group_by(lo.alias("player"), hi.alias("opponent")).agg(
            hp_base=(pl.col("n0").cast(pl.Float64) / pl.col("n").cast(pl.Float64).clip(1.0)).min(),
            hp_dirs=pl.len())
        hp = hp.join(base, on=["player", "opponent"], how="left")
        deep = (pl.col("hp_dirs") == 2) & (pl.col("hp_base") >= self.hand_min_baseline)
        thin = (pl.col("hp_dirs") == 2) & (pl.col("hp_base") < self.hand_min_baseline)
        if self.hand_thin:
            # thinner baselines: the same statistic, its tail averaged over the rates the baseline allows
            tp = hp.filter(thin).select("player", "opponent")
            # the thin pairs' decisions, read as rows (in decision order: the draws are made per cell in that order)
            r = stats.own_rates_per_decision(self.source_.decisions(con, pairs=tp), y, alpha=self.alpha, also_out=also,
                                             side=side, rates=rates, **kw).filter(pl.col("hu"))
            pred = stats.hand_passivity_predictive(r, bins=tuple(kw.get("bins") or self.BINS),
                                                   max_weight=self.hand_max_weight, draws=self.hand_draws,
                                                   random_state=self.random_state,
                                                   prior_strength=self.hand_prior_strength)
            hp = hp.join(pred, on=["player", "opponent"], how="left").with_columns(
                hp_p_value=pl.when(deep).then("hp_p_value").when(thin).then("hp_pred_p_value"),
                hp_predictive=pl.when(thin & pl.col("hp_pred_p_value").is_not_null()).then(True).when(deep).then(False)
            ).drop("hp_pred_p_value")
        else:
            hp = hp.with_columns(hp_p_value=pl.when(deep).then("hp_p_value"))
        out = out.join(hp.drop("hp_dirs"), on=["player", "opponent"], how="left")
        # each side's own share of the passivity (its decisions only): the mutual rule may read it in place of the
        # check test's per-direction z where the hand test was made
        hd = stats.hand_passivity_from_hands(self._calibrated(self.source_.hand_sums(con, rated, directed=True), "sides"),
                                             max_weight=self.hand_max_weight)
        hd = hd.select("player", "opponent", "hp_z")
        lo = pl.col("player") < pl.col("opponent")
        out = out.join(hd.filter(lo).rename({"hp_z": "hdir_z"}), on=["player", "opponent"], how="left").join(
            hd.filter(~lo).select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                                  pl.col("hp_z").alias("hdir_z_r")), on=["player", "opponent"], how="left")
        out = out.with_columns(pl.when(pl.col("hp_p_value").is_not_null()).then(pl.col(c)).alias(c)
                               for c in ("hdir_z", "hdir_z_r"))
        return out

    def _calibrated(self, h: pl.DataFrame, which: str) -> pl.DataFrame:
        """The hand test's per-hand sums ``h`` with each hand's probability of no bet taken from the population's own
        hands (:mod:`detectors.soft_play.handcal`; its table kept in ``hand_calibration_[which]``), or as they are
        when ``hand_calibrate`` is off."""
        if not self.hand_calibrate:
            return h
        table = calibration_table(h, width=self.hand_cal_width, min_hands=self.hand_cal_min_hands)
        self.hand_calibration_ = {**getattr(self, "hand_calibration_", {}), which: table}
        return calibrate_hand_sums(h, table)

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per unordered pair: the weighted-Bonferroni combination of the check (with the preflop
        support), raise, fold and hand tests, weighted Benjamini-Hochberg with the co-entry prior, the ring test.

        Returns
        -------
        ``player``, ``opponent`` (player < opponent), ``accounts``, ``tournaments``, ``p_value``, ``q_value``,
        ``score`` (-log10 q) and each test's observed, expected and p-value; ratios ``*_ratio`` observed/expected.

        Method: own-baseline score tests pooled over both directions (Mazrooei, Archibald & Bowling, AAAI 2013);
        weighted BH (Genovese, Roeder & Wasserman, Biometrika 2006)."""
        u = gp.unordered(self.pairs_)
        schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64, "p_value": pl.Float64}
        if u.is_empty():
            return pl.DataFrame(schema=schema)
        for c in ("aggr_p", "aggr_p_r", "fold_p", "fold_p_r", "aggr_obs", "aggr_obs_r", "aggr_exp", "aggr_exp_r",
                  "fold_obs", "fold_obs_r", "fold_exp", "fold_exp_r", "hu_hands", "hu_hands_r", "aggr_n", "aggr_n_r"):
            if c not in u.columns:
                u = u.with_columns(pl.lit(None, pl.Float64).alias(c))
        u = u.join(self.pooled_, on=["player", "opponent"], how="left")
        u = self._combined_p(u)
        u = u.with_columns(
            hu=pl.max_horizontal(pl.col("hu_hands").fill_null(0), pl.col("hu_hands_r").fill_null(0)),
            aggr_o=pl.col("aggr_obs").fill_null(0) + pl.col("aggr_obs_r").fill_null(0),
            aggr_e=pl.col("aggr_exp").fill_null(0) + pl.col("aggr_exp_r").fill_null(0),
            fold_o=pl.col("fold_obs").fill_null(0) + pl.col("fold_obs_r").fill_null(0),
            fold_e=pl.col("fold_exp").fill_null(0) + pl.col("fold_exp_r").fill_null(0),
        )
        # independent filtering (Bourgon, Gentleman & Huber, PNAS 2010): only pairs with enough
        # decisions aimed at each other can be tested; the filter ignores the p-values
        spots = (u["aggr_n"].fill_null(0) + u["aggr_n_r"].fill_null(0)).to_numpy()  # decisions aimed at each other
        ptest = np.where(spots >= self.min_spots, u["p_value"].to_numpy(allow_copy=True).astype(float), np.nan)
        u, prior = self._with_coentry(con, u, spots >= self.min_spots)
        if self.weight_scale:
            # weighted BH (Genovese, Roeder & Wasserman, Biometrika 2006): a pair's weight grows with the bets the
            # main test expects between them (its power), not with its outcome, times the co-entry prior (decided
            # before any card is dealt); weights average 1 over the tested
            expected = u[f"{self.tests[0]}_expected"].fill_null(0).to_numpy()
            if self.power_weights:
                # the power to show a material deficit at the level the first discovery needs among the m tested
                m = max(int((~np.isnan(ptest)).sum()), 1)
                power = stats.deficit_power(expected, self.max_ratio, self.alpha / m)
            else:
                power = expected / self.weight_scale
            ptest = stats.weighted_bh_pvalues(ptest, power, prior=prior)
        elif prior is not None:
            ptest = stats.weighted_bh_pvalues(ptest, np.ones(len(u)), prior=prior)
        q = stats.bh_qvalues(ptest)
        u = u.with_columns(pl.Series("q_value", q, nan_to_null=True))
        u = u.with_columns(
            score=pl.Series(stats.score_from_q(q)),
            accounts=pl.concat_list("player", "opponent"),
            tournaments=pl.lit([], pl.List(pl.Utf8)),
            aggr_ratio=pl.col("aggr_o") / pl.col("aggr_e").clip(1e-9),
            fold_ratio=(pl.col("fold_o") + 1) / (pl.col("fold_e") + 1),
            chk_ratio=pl.col("chk_observed") / pl.col("chk_expected").clip(1e-9),
            rse_ratio=pl.col("rse_observed") / pl.col("rse_expected").clip(1e-9),
            fld_ratio=(pl.col("fld_observed") + 1) / (pl.col("fld_expected") + 1),
            st_ratio=(pl.col("st_observed") / pl.col("st_expected").clip(1e-9)) if "st_observed" in u.columns
            else pl.lit(None, pl.Float64),
        )
        # the hand test's effect size: surprise-weighted passive hands expected over observed (<= max_ratio: at least
        # 1 / max_ratio times the expected), only where the hand test was made
        hp_cols = {"hp_p_value", "hp_expected", "hp_observed"} <= set(u.columns)
        u = u.with_columns(hp_ratio=pl.when(pl.col("hp_p_value").is_not_null()).then(
            pl.col("hp_expected") / pl.col("hp_observed").clip(1e-9)) if hp_cols else pl.lit(None, pl.Float64))
        if self.ring_tau:
            u = self._with_rings(u)
        return self._with_evidence_hands(con, u.sort("score", descending=True))

    def _combined_p(self, u: pl.DataFrame) -> pl.DataFrame:
        """``u`` (unordered pairs with the pooled tests) with ``main_p_value`` (the check test street by street with
        the preflop test as one more Fisher part, :meth:`_with_street_support`; else the check test with the preflop
        support, :func:`detectors.stats.z_sum_with_support`) and ``p_value``: the weighted-Bonferroni combination
        of the main, raise, fold and hand tests (Genovese, Roeder & Wasserman, Biometrika 2006); thin baselines
        read the check test as a two-sample test and weigh the predictive hand test less (``thin_weights``)."""
        if self.thin_check and "hp_base" in u.columns and f"{self.tests[0]}_p_value" in u.columns:
            # a thin own baseline (under hand_min_baseline decisions against others per decision against the partner):
            # the check test as the two-sample comparison it is (stats.estimated_baseline_pvalue); the plug-in p kept
            c = f"{self.tests[0]}_p_value"
            thin = (u["hp_base"] < self.hand_min_baseline).fill_null(False).to_numpy()
            adj = stats.estimated_baseline_pvalue(u[c].to_numpy(allow_copy=True).astype(float), u["hp_base"].to_numpy(allow_copy=True).astype(float))
            u = u.with_columns(pl.col(c).alias(f"{c}_plugin"),
                               pl.Series(c, np.where(thin, adj, u[c].to_numpy(allow_copy=True).astype(float)), nan_to_null=True))

        f = lambda c: u[c].to_numpy(allow_copy=True).astype(float)  # noqa: E731
        # three views of one deviation on partly shared decisions: the best, weighted-Bonferroni-corrected with
        # the prior weight on the check test (valid under any dependence; a Fisher combination would let the tests
        # that do not move dilute the one that does)
        ps = [f(f"{x}_p_value") for x in self.tests]
        streets = np.zeros(len(u), dtype=bool)
        if self.by_street and "st_p_value" in u.columns:
            # the main test read street by street (Fisher over the streets) where it was made
            streets = ~np.isnan(f("st_p_value"))
            if self.street_support and self.combined:
                u = self._with_street_support(u)
                ps[0] = np.where(streets, f("stp_p_value"), ps[0])
            else:
                ps[0] = np.where(streets, f("st_p_value"), ps[0])
                streets[:] = False
        if len(self.test_weights) > len(ps):
            # the hand test's weight; not made (off, or the baselines too thin): NaN, and weighted_bonferroni spreads
            # its weight over the tests that were made
            ps.append(f("hp_p_value") if self.hand_test and "hp_p_value" in u.columns else np.full(len(u), np.nan))
        if self.combined:
            # the main test: the check test, with the preflop test (disjoint decisions) adding its evidence where
            # it points the same way (stats.z_sum_with_support)
            (m, wm), (x, wx) = self.combined
            zs = stats.z_sum_with_support(ps[0] if m == self.tests[0] else f(f"{m}_p_value"), f(f"{x}_p_value"), wm, wx)
            # (where the support already entered the streets' combination: that combination)
            ps[0] = np.where(streets, ps[0], zs)
        u = u.with_columns(pl.Series("main_p_value", ps[0], nan_to_null=True))
        p = stats.weighted_bonferroni(ps, self.test_weights)
        if "hp_predictive" in u.columns and len(self.thin_weights) == len(ps):
            # pairs judged by the predictive hand test (thin own baselines): its weight is fixed by the decision counts,
            # never by the outcome, so the correction stays valid
            thin = u["hp_predictive"].fill_null(False).to_numpy()
            p = np.where(thin, stats.weighted_bonferroni(ps, self.thin_weights), p)
        u = u.with_columns(pl.Series("p_value", p, nan_to_null=True))
        return u

    def _with_street_support(self, u: pl.DataFrame) -> pl.DataFrame:
        """``u`` with ``stp_p_value``: Fisher's combination of the streets' check tests (``st_k`` parts, their
        combined ``st_p_value``) and the preflop support test (``combined``'s second) as one more part, over
        2 (``st_k`` + 1) degrees of freedom; the streets' p-value alone where the support was not made.

        The parts rest on disjoint decisions (no bet to call on each street; facing the partner's open), so they are
        independent under the null and the flat combination is Fisher's method over all of them (Fisher, 1925,
        §21.1), the streets' statistic recovered from their p-value (chi-square with 2 ``st_k`` degrees of
        freedom). Soft play confined to the preflop (folding to the partner's raises, never raising him when he
        limps) shows in the preflop check test and the support together, and in nothing else."""
        x = self.combined[1][0]
        st = u["st_p_value"].to_numpy(allow_copy=True).astype(float)
        sup = u[f"{x}_p_value"].to_numpy(allow_copy=True).astype(float)
        k = u["st_k"].fill_null(0).to_numpy().astype(float)
        ok = ~np.isnan(st) & ~np.isnan(sup) & (k > 0)
        stat = np.where(ok, chi2.isf(np.clip(np.nan_to_num(st, nan=1.0), 1e-300, 1.0), np.maximum(2 * k, 2))
                        - 2 * np.log(np.clip(np.nan_to_num(sup, nan=1.0), 1e-300, 1.0)), 0.0)
        stp = np.where(ok, np.clip(chi2.sf(stat, 2 * k + 2), 1e-300, 1.0), st)
        return u.with_columns(pl.Series("stp_p_value", stp, nan_to_null=True))

    def _with_coentry(self, con: duckdb.DuckDBPyConnection, u: pl.DataFrame, tested: np.ndarray) -> tuple[pl.DataFrame, np.ndarray | None]:
        """The co-entry prior of each tested pair (``coentry_shared``, ``coentry_expected``, ``coentry_p``,
        ``prior_factor``) and the factor as an array (None when off).

        Colluders choose to play together: a pair that enters many of the same
        tournaments beyond what the configuration model of
        :func:`detectors.features.identity.co_entries` explains (each entry
        lands in an event of its format and day in proportion to the field
        size; the conditional co-entry p-value) is more likely to be sparing
        each other. Who enters with whom is fixed before any card is dealt, so
        under honest play the factor is independent of the play tests'
        p-values: a valid prior weight for the weighted BH (Genovese, Roeder &
        Wasserman, Biometrika 2006; Roeder & Wasserman, Stat. Sci. 2009). It
        is bounded (``coentry_prior``): honest friends who always enter
        together still need the play tests' evidence, at most that many times
        weaker than a pair without the prior, and the false-discovery rate
        stays controlled whatever the prior says. The ring test (Bonferroni
        over triangles) does not use it.
        """
        cols = {"coentry_shared": pl.Int64, "coentry_expected": pl.Float64, "coentry_p": pl.Float64, "prior_factor": pl.Float64}
        if not self.coentry_prior or self.coentry_prior <= 1 or not tested.any():
            return u.with_columns(pl.lit(None, dt).alias(c) for c, dt in cols.items()), None
        pairs = u.filter(pl.Series(tested)).select(a=pl.col("player"), b=pl.col("opponent"))
        co = identity.co_entries(con, pairs).select(
            player=pl.col("a"), opponent=pl.col("b"), coentry_shared=pl.col("n_shared_t").cast(pl.Int64),
            coentry_expected=pl.col("exp_shared_t").cast(pl.Float64), coentry_p=pl.col("p_coentry").cast(pl.Float64).fill_nan(None))
        lo, hi = self.coentry_range
        x = ((-pl.col("coentry_p").clip(1e-300, 1.0).log10() - lo) / (hi - lo)).clip(0.0, 1.0).fill_null(0.0)
        co = co.with_columns(prior_factor=1.0 + (self.coentry_prior - 1.0) * x)
        u = u.join(co, on=["player", "opponent"], how="left")
        return u, u["prior_factor"].fill_null(1.0).to_numpy()

    def _hdir(self, col: str, scores: pl.DataFrame) -> list[pl.Expr]:
        """The hand test's per-direction z, the side's Stouffer z and its z on the pair's best street for the mutual
        rule (none when the rule reads the check test only)."""
        s = "_r" if col.endswith("_r") else ""
        out = [pl.col(col).fill_null(-9)] if self.hand_mutual and col in scores.columns else []
        if self.side_stouffer and f"sdir_z{s}" in scores.columns:
            out.append(pl.col(f"sdir_z{s}").fill_null(-9))
        if self.street_mutual and f"st_dz{s}" in scores.columns:
            out.append(pl.col(f"st_dz{s}").fill_null(-9))
        return out

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged``: q <= alpha, at least ``min_hu_hands`` heads-up hands together, a
        material deficit (overall, check, raise or hand test at most ``max_ratio`` of the expected, or folds
        at least its inverse), and the mutual rule (each side's z at least ``mutual_z``); or a ring found by
        the ring test (its three pairs)."""
        s = scores.with_columns(
            flagged=(pl.col("q_value").fill_null(1.0) <= self.alpha)
            & (pl.col("hu") >= self.min_hu_hands)
            & ((pl.col("aggr_ratio") <= self.max_ratio) | (pl.col("chk_ratio").fill_null(1.0) <= self.max_ratio)
               | (pl.col("rse_ratio").fill_null(1.0) <= self.max_ratio) | (pl.col("fold_ratio") >= 1 / self.max_ratio)
               | (pl.col("fld_ratio").fill_null(1.0) >= 1 / self.max_ratio)
               | (pl.col("hp_ratio").fill_null(1.0) <= self.max_ratio)
               | ((pl.col("st_ratio").fill_null(1.0) <= self.max_ratio) if "st_ratio" in scores.columns else pl.lit(False)))
            & (pl.lit(self.mutual_z is None) | (pl.min_horizontal(
                pl.max_horizontal(pl.col("dir_z").fill_null(-9), *self._hdir("hdir_z", scores)),
                pl.max_horizontal(pl.col("dir_z_r").fill_null(-9), *self._hdir("hdir_z_r", scores))) >= (self.mutual_z or 0.0))),
        )
        if "ring_q_value" in s.columns:
            # the three pairs of a ring found by the ring test (self._with_rings) are flagged with it
            s = s.with_columns(flagged=pl.col("flagged") | (pl.col("ring_q_value").fill_null(1.0) <= self.alpha))
        return s

    def merge_group(self, best: dict[str, Any], members: list[dict[str, Any]], shape: str) -> dict[str, Any]:
        """A ring's or star's p-value: the smallest of its pairs' p-values and ring q-values."""
        if shape != "pair":
            best["p_value"] = min(min(r["p_value"], r.get("ring_q_value") or 1.0) for r in members)
        return best


