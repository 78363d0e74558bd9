"""Soft play's main test from its parts: the streets' check tests and the preflop support, combined other than by
Fisher's method (the detector's ``street_combine``)."""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors import stats


def combine_street_parts(u: pl.DataFrame, sup: np.ndarray, st: np.ndarray, how: str, tau: float) -> np.ndarray:
    """The main test's p-value per row of ``u`` from the streets' parts and the support.

    Parameters
    ----------
    u : unordered pairs with each street's p-value (``st_p_<street>``, null where not tested).
    sup : the preflop support test's p-values (NaN where not made).
    st : the streets' Fisher combination (``st_p_value``), returned where no street part was made.
    how : "minp" (:func:`detectors.stats.sidak_min_p` over every part), "tpm"
        (:func:`detectors.stats.truncated_product_pvalue` at ``tau``), "fisher_minp" (twice the smaller of Fisher's
        method and the min-p over every part), "streets_minp" / "streets_tpm" (the streets alone by the min-p / the
        truncated product, then Fisher's method with the support), "streets_alone_fisher" / "streets_alone_minp" (the
        streets alone, the support left out).
    tau : the truncation point of the truncated product.

    Returns
    -------
    numpy.ndarray of p-values (NaN where nothing was made).

    Method: the parts rest on disjoint decisions, independent under the null (the docstring of
    :meth:`~detectors.soft_play.SoftPlayDetector._with_street_support`); the min-p (Šidák, JASA 1967) and the truncated
    product (Zaykin et al., Genet. Epidemiol. 2002) keep a deficit on one street from being diluted by the others, at
    the price of the evidence of several moderate parts (the min-p) or of part of it (the truncated product).
    """
    cols = [c for c in u.columns if c.startswith("st_p_") and c != "st_p_value"]
    P = np.column_stack([u[c].to_numpy(allow_copy=True).astype(float) for c in cols] + [sup])
    made = ~np.isnan(P[:, :-1]).all(axis=1) if cols else np.zeros(len(u), dtype=bool)
    if how in ("streets_minp", "streets_tpm"):
        # the streets alone, then Fisher's method with the support (two independent parts): the support's own
        # extremes stay diluted as in Fisher's combination of every part
        s = stats.sidak_min_p(P[:, :-1]) if how == "streets_minp" else stats.truncated_product_pvalue(P[:, :-1], tau)
        c = np.where(np.isnan(sup), s, stats.fisher_combine(np.column_stack([s, sup])))
    elif how in ("streets_alone_fisher", "streets_alone_minp"):
        # the streets alone, the support left out (its score test's tail the thinnest: docs/measurements.md)
        c = st if how == "streets_alone_fisher" else stats.sidak_min_p(P[:, :-1])
    elif how == "tpm":
        c = stats.truncated_product_pvalue(P, tau)
    elif how in ("minp", "fisher_minp"):
        c = stats.sidak_min_p(P)
        if how == "fisher_minp":
            c = np.minimum(1.0, 2.0 * np.minimum(c, stats.fisher_combine(P)))
    else:
        raise ValueError(f"street_combine {how!r}: see combine_street_parts")
    return np.where(made, c, st)
