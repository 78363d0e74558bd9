"""Shared statistics for railbird's detectors: honest uncertainty over many pairs.

Every detector compares an account's behaviour towards one partner with the
same account's behaviour towards everyone else (its own baseline), on samples
that are often small, across thousands of candidate pairs. The pieces they
share, vectorised over numpy arrays or Polars frames (one entry per
candidate), live in one module per concern and are imported from here:

- :mod:`~detectors.stats.multiple_testing`: Benjamini–Hochberg q-values
  (:func:`bh_qvalues`, :func:`bh_reject`), weighted BH
  (:func:`weighted_bh_pvalues`), the comparable score (:func:`score_from_q`).
- :mod:`~detectors.stats.combining`: several p-values of one candidate made one
  (:func:`fisher_combine`, :func:`min_p_bonferroni`, :func:`weighted_bonferroni`,
  :func:`z_sum_with_support`, :func:`all_below_product_pvalue`).
- :mod:`~detectors.stats.shrinkage`: empirical-Bayes beta-binomial shrinkage
  (:func:`fit_beta_prior`, :func:`beta_priors_by_bin`, :func:`shrink_rate`).
- :mod:`~detectors.stats.tails`: tail tests of one count or mean against a
  baseline (:func:`baseline_tail`, :func:`binom_tail`, :func:`fisher_tail`,
  :func:`predictive_count_tail`, :func:`weighted_mean_test`,
  :func:`permutation_pvalue`, :func:`estimated_baseline_pvalue`).
- :mod:`~detectors.stats.baselines`: each player's own baseline, robust to the
  partner tested (:func:`robust_own_baseline`, or :func:`own_baseline_from_counts`
  from counts made elsewhere, :func:`baseline_outliers`,
  :func:`replace_baseline_tests`, :func:`with_baseline_columns`, :func:`pool_directions`,
  :func:`own_rate_table`, :func:`own_rates_per_decision`); a frame of decisions
  may be one of counted cells (:data:`WEIGHT`).
- :mod:`~detectors.stats.passivity`: whole hands played passively between two
  players (:func:`hand_passivity_test`, from per-hand sums :func:`hand_passivity_sums`
  and :func:`hand_passivity_from_hands`; :func:`hand_passivity_predictive`).

A test not made is NaN throughout: it does not count towards a BH family or a
Fisher combination, and where a caller needs a number instead
(``untested=1.0``) it says so.

Example
-------
>>> import numpy as np
>>> from detectors import stats
>>> stats.bh_qvalues([0.01, 0.04, np.nan]).round(3).tolist()
[0.02, 0.04, nan]
"""

from __future__ import annotations

from detectors.stats._common import JUNK_BINS, OWN_BASELINE_BINS, WEIGHT
from detectors.stats.baselines import (
    baseline_outliers,
    own_baseline_from_counts,
    own_rate_table,
    own_rates_per_decision,
    pool_directions,
    replace_baseline_tests,
    robust_own_baseline,
    score_test_pvalues,
    street_tests,
    with_baseline_columns,
)
from detectors.stats.combining import (
    all_below_product_pvalue,
    fisher_combine,
    min_p_bonferroni,
    weighted_bonferroni,
    z_sum_with_support,
)
from detectors.stats.multiple_testing import bh_qvalues, bh_reject, deficit_power, score_from_q, weighted_bh_pvalues
from detectors.stats.passivity import (
    hand_passivity_from_hands,
    hand_passivity_predictive,
    hand_passivity_sums,
    hand_passivity_test,
)
from detectors.stats.shrinkage import beta_priors_by_bin, fit_beta_prior, shrink_rate
from detectors.stats.tails import (
    baseline_tail,
    binom_tail,
    estimated_baseline_pvalue,
    fisher_tail,
    permutation_pvalue,
    predictive_count_tail,
    weighted_mean_test,
)

__all__ = [
    "JUNK_BINS",
    "OWN_BASELINE_BINS",
    "WEIGHT",
    "all_below_product_pvalue",
    "baseline_outliers",
    "baseline_tail",
    "beta_priors_by_bin",
    "bh_qvalues",
    "bh_reject",
    "binom_tail",
    "deficit_power",
    "estimated_baseline_pvalue",
    "fisher_combine",
    "fisher_tail",
    "fit_beta_prior",
    "hand_passivity_from_hands",
    "hand_passivity_predictive",
    "hand_passivity_sums",
    "hand_passivity_test",
    "min_p_bonferroni",
    "own_baseline_from_counts",
    "own_rate_table",
    "own_rates_per_decision",
    "permutation_pvalue",
    "pool_directions",
    "predictive_count_tail",
    "replace_baseline_tests",
    "robust_own_baseline",
    "score_from_q",
    "score_test_pvalues",
    "shrink_rate",
    "weighted_bh_pvalues",
    "weighted_bonferroni",
    "weighted_mean_test",
    "with_baseline_columns",
    "z_sum_with_support",
]
