"""Mann-Whitney pieces of many pairs of samples, counted in each pair's own sorted samples.

The seat hand-offs' two-sample tests (:mod:`detectors.seat_handoff.statistics`) compare, for every change point
and every simulated move of the population's null, a short after-segment with a long baseline (the account's
other decisions). U and the tie term need only where each value of the first sample falls among the sorted
second sample: each pair's samples are sorted on their own (small sorts that stay in the processor's cache; a
sample already sorted costs one pass), and each value of the first is placed by binary search. The figures are
those of mid-ranks of the pooled samples, to the last bit: every count is an integer (or a half) and every sum of
them exact in floating point."""

from __future__ import annotations

import numpy as np


def _runs(v: np.ndarray, sizes: np.ndarray, nan: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of equal values in ``v``: the rows' samples one after the other (``sizes``), each sorted.

    Parameters
    ----------
    v : the values. sizes : each row's count. nan : whether a row holds a NaN (NaN equal to NaN, as
        :func:`numpy.unique` counts it; a sorted row's NaNs are at its end).

    Returns
    -------
    ``(start, length, row)`` of each run: a new run where the row or the value changes."""
    n = v.size
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    brk = np.empty(n, bool)
    brk[0] = True
    np.not_equal(v[1:], v[:-1], out=brk[1:])
    if nan:
        brk[1:] &= ~(np.isnan(v[1:]) & np.isnan(v[:-1]))
    ends = np.cumsum(sizes)
    brk[(ends - sizes)[sizes > 0]] = True
    start = np.flatnonzero(brk)
    return start, np.diff(np.append(start, n)), np.searchsorted(ends, start, side="right")


def u_against(xs: list[np.ndarray], ys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mann-Whitney pieces of many pairs (xs[i] against ys[i]).

    Parameters
    ----------
    xs, ys : the first and the second sample of each pair (arrays of floats; a NaN counts as one value above every
        other, as :func:`numpy.unique` ranks it).

    Returns
    -------
    ``(n1, n2, u1, tie)``: the sizes, U of the first sample (the pairs (x, y) with x > y plus half the ties) and the
    pooled sample's tie term sum(t^3 - t) over its runs of equal values, the input of ``_mwu_p_vec``.

    Method: each sample sorted on its own (``np.sort``, stable: a sample already sorted is one pass); for each value
    of the first sample the values of the second below it and equal to it by binary search (``np.searchsorted``);
    U the sum of below plus half of equal; the tie term from each sample's runs of equal values and, for the values
    both samples hold, the cross term ((a + b)^3 - (a + b) = a^3 - a + b^3 - b + 3ab(a + b))."""
    N = len(xs)
    n1 = np.array([np.size(x) for x in xs], dtype=np.int64)
    n2 = np.array([np.size(y) for y in ys], dtype=np.int64)
    X = [np.sort(np.asarray(x, dtype=float), kind="stable") for x in xs]
    Y = [np.sort(np.asarray(y, dtype=float), kind="stable") for y in ys]
    below = [np.searchsorted(y, x, side="left") for x, y in zip(X, Y)]
    upto = [np.searchsorted(y, x, side="right") for x, y in zip(X, Y)]
    empty_i = [np.zeros(0, np.int64)]
    below = np.concatenate(below + empty_i)
    eq = np.concatenate(upto + empty_i) - below
    gx = np.repeat(np.arange(N), n1)
    u1 = np.bincount(gx, weights=below + 0.5 * eq, minlength=N)
    nan = any(x.size and np.isnan(x[-1]) for x in X) or any(y.size and np.isnan(y[-1]) for y in Y)
    sx, rtx, rgx = _runs(np.concatenate(X + [np.zeros(0)]), n1, nan)
    _, rty, rgy = _runs(np.concatenate(Y + [np.zeros(0)]), n2, nan)
    tie = (np.bincount(rgx, weights=rtx.astype(float) ** 3 - rtx, minlength=N)
           + np.bincount(rgy, weights=rty.astype(float) ** 3 - rty, minlength=N))
    if sx.size:
        ta, tb = rtx.astype(float), eq[sx].astype(float)
        tie += np.bincount(rgx, weights=3.0 * ta * tb * (ta + tb), minlength=N)
    return n1, n2, u1, tie
