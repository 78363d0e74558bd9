"""Exact tails of sums of beta-binomial counts (with and without a shared per-block effect)."""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

def _sum_sf_components(group, n, r, s, *extra: np.ndarray) -> tuple[np.ndarray, ...]:
    """The components of an exact sum tail as arrays: counts rounded to integers, rates kept inside (0, 1), and
    components with no decision dropped (from ``extra`` too, row for row)."""
    n = np.rint(np.asarray(n, dtype=float)).astype(np.int64)
    keep = n > 0
    r = np.clip(np.asarray(r, dtype=float), 1e-12, 1 - 1e-12)
    arrays = (np.asarray(group, dtype=np.int64), n, r, np.asarray(s, dtype=float), *extra)
    return tuple(a[keep] for a in arrays)


def betabinom_sum_sf(group: np.ndarray, n: np.ndarray, r: np.ndarray, s: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Exact upper tail P(X_1 + ... + X_m >= k_g) of a sum of independent beta-binomials, per group g.

    Row i of ``group``/``n``/``r``/``s`` is one component of group ``group[i]`` (0 .. G-1):
    X_i ~ BetaBinomial(n_i, r_i s_i, (1 - r_i) s_i), a count of n_i decisions whose common rate is uncertain
    with mean r_i and Beta posterior strength s_i (``s = inf``: the rate is known, X_i ~ Bin(n_i, r_i), and the
    sum is the Poisson-binomial distribution). ``k`` holds one observed count per group. The distribution of
    the sum is the convolution of the components' probability functions, computed exactly (the direct
    convolution of the recursive method; Hong, "On computing the distribution function for the Poisson
    binomial distribution", CSDA 2013, compares it with his DFT-CF method: same result, and the direct sums of
    non-negative terms keep their relative accuracy in the far tail, where an inverse Fourier transform's
    rounding (~1e-16 absolute) swamps tails below ~1e-13). Vectorised: groups are bucketed by their total
    count (power-of-two widths) and the convolution runs over the components' ranks and values, never over
    groups in Python. Counts ``n`` are rounded to integers; groups with no component or ``k <= 0`` get 1.
    """
    k = np.asarray(k, dtype=float)
    G = len(k)
    out = np.ones(G)
    if G == 0 or len(group) == 0:
        return out
    group, n, r, s = _sum_sf_components(group, n, r, s)
    tot = np.bincount(group, weights=n, minlength=G).astype(np.int64)
    big = np.zeros(G, dtype=np.int64)
    np.maximum.at(big, group, n)
    kint = np.maximum(k, 0).astype(np.int64)
    # the support kept: 0 .. k, the last cell holding P(S >= k) (mass at or beyond k is folded into it after each
    # component), plus room for one component's counts before the fold
    width = np.maximum(8, 2 ** np.ceil(np.log2(np.minimum(tot, kint + big) + 1)).astype(np.int64))
    order = np.lexsort((s, r, n, group))  # a fixed order of the components: the same sums in every run
    group, n, r, s = group[order], n[order], r[order], s[order]
    first = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    rank = np.arange(len(group)) - np.repeat(first, np.diff(np.r_[first, len(group)]))
    todo = (k > 0) & (tot >= k)
    out[(k > 0) & (tot < k)] = 0.0
    for L in np.unique(width[todo]):
        gs = np.flatnonzero(todo & (width == L))
        slot = np.full(G, -1)
        slot[gs] = np.arange(len(gs))
        acc = np.zeros((len(gs), L))
        acc[:, 0] = 1.0
        rows = slot[group] >= 0
        for m in range(int(rank[rows].max()) + 1 if rows.any() else 0):
            sel = rows & (rank == m)
            if not sel.any():
                continue
            gi, ni, ri, si = slot[group[sel]], n[sel], r[sel], s[sel]
            x = np.arange(int(ni.max()) + 1)
            pmf = _component_pmf(x[None, :], ni[:, None], ri[:, None], si[:, None])
            cur = acc[gi]
            new = np.zeros_like(cur)
            for j in x:
                new[:, j:] += cur[:, : L - j] * pmf[:, j : j + 1]
            acc[gi] = _fold(new, kint[gs[gi]])
        out[gs] = acc[np.arange(len(gs)), kint[gs]]
    return np.clip(out, 0.0, 1.0)


def _component_pmf(x: np.ndarray, n: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P(X = x) for X ~ BetaBinomial(n, r s, (1 - r) s) (binomial where s is infinite), 0 for x > n."""
    finite = np.broadcast_to(np.isfinite(s), np.broadcast_shapes(x.shape, n.shape, r.shape, s.shape))
    n, r, s, x = (np.broadcast_to(v, finite.shape) for v in (n, r, s, x))
    out = np.zeros(finite.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        if finite.any():
            out[finite] = _st.betabinom.pmf(x[finite], n[finite], r[finite] * s[finite], (1 - r[finite]) * s[finite])
        if (~finite).any():
            out[~finite] = _st.binom.pmf(x[~finite], n[~finite], r[~finite])
    return np.where(x <= n, np.nan_to_num(out), 0.0)


def _convolve_groups(group: np.ndarray, comp, kfold: np.ndarray, size: np.ndarray | None = None,
                     width: int | None = None) -> np.ndarray:
    """The probability function of per-group sums of independent components, folded at ``kfold``.

    ``group`` (R,): each component's group (0 .. G-1); ``comp(idx)``: the probability functions of components
    ``idx`` as a (len(idx), X) matrix over 0 .. X-1; ``kfold`` (G,): per group the cell that receives the mass at or
    beyond it. Returns (G, max(kfold) + 1): cell j < kfold[g] is P(S_g = j), cell kfold[g] is P(S_g >= kfold[g]),
    cells beyond are 0. The convolution runs over the components' ranks within their group and their values (the
    direct sums of non-negative terms of :func:`betabinom_sum_sf`), never over groups in Python. ``size``: the
    components' support sizes; the largest of each group come first, so later ranks compute narrow functions.
    ``width`` (at least max(kfold) + 1; default that): the columns of the result, so that the groups of one bucket
    computed in several calls are computed alike."""
    G = len(kfold)
    L = width if width is not None else (int(kfold.max()) + 1 if G else 1)
    acc = np.zeros((G, L))
    acc[:, 0] = 1.0
    if len(group) == 0:
        return _fold(acc, kfold)
    order = np.lexsort((-np.asarray(size), group)) if size is not None else np.argsort(group, kind="stable")
    g = group[order]
    first = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
    rank = np.empty(len(g), dtype=np.int64)
    rank[order] = np.arange(len(g)) - np.repeat(first, np.diff(np.r_[first, len(g)]))
    for m in range(int(rank.max()) + 1):
        idx = np.flatnonzero(rank == m)
        gi = group[idx]
        pmf = comp(idx)
        cur = acc[gi]
        new = np.zeros_like(cur)
        for j in range(min(pmf.shape[1], L + 1)):
            pj = pmf[:, j : j + 1]
            new[:, j:] += cur[:, : L - j] * pj
            if j > 0:  # sums beyond the last cell: into the last cell (folded below at kfold anyway)
                new[:, L - 1] += cur[:, L - j :].sum(axis=1) * pj[:, 0]
        if pmf.shape[1] > L + 1:  # values beyond L: every outcome lands beyond the fold
            new[:, L - 1] += cur.sum(axis=1) * pmf[:, L + 1 :].sum(axis=1)
        acc[gi] = _fold(new, kfold[gi])
    return acc


def _fold(a: np.ndarray, kfold: np.ndarray) -> np.ndarray:
    """Move each row's mass at or beyond ``kfold`` into cell ``kfold`` (right to left: the small terms added first).

    The fold of :func:`betabinom_sum_sf` and :func:`_convolve_groups` after each component."""
    cols = np.arange(a.shape[1])[None, :]
    beyond = cols >= kfold[:, None]
    over = np.cumsum(np.where(beyond, a, 0.0)[:, ::-1], axis=1)[:, -1]
    a = np.where(beyond, 0.0, a)
    a[np.arange(len(a)), kfold] = over
    return a


def sum_sf_folds(k: np.ndarray, tot: np.ndarray) -> dict[int, int]:
    """The columns of each fold bucket in :func:`overdispersed_sum_sf`: per bucket (the power of two above k + 1)
    the largest k + 1 of its groups that are computed (0 < k <= ``tot``, each group's decisions, its components'
    ``n`` rounded, those above 0, summed).

    A group's tail depends on its bucket's columns in the last bits (the mass beyond the fold is summed over them),
    so groups summed a chunk at a time are given the whole window's (``folds=``) and come out as they would all at
    once. Returns {bucket: columns}."""
    kint = np.maximum(np.asarray(k, dtype=float), 0).astype(np.int64)
    todo = (kint > 0) & (np.asarray(tot) >= kint)
    width = 2 ** np.ceil(np.log2(kint + 1)).astype(np.int64)
    return {int(w): int(kint[todo & (width == w)].max()) + 1 for w in np.unique(width[todo])}


def overdispersed_sum_sf(group: np.ndarray, block: np.ndarray, n: np.ndarray, r: np.ndarray, s: np.ndarray,
                         k: np.ndarray, sigma: float, nodes: int = 15, folds: dict[int, int] | None = None) -> np.ndarray:
    """Upper tail P(S_g >= k_g) of a count whose components share a random effect within blocks, per group g.

    Row i is one component of group ``group[i]`` (0 .. G-1) and block ``block[i]`` (a block lies in one group):
    given its block's effect u ~ N(0, sigma^2), independent between blocks, X_i ~ BetaBinomial(n_i, rho_i s_i,
    (1 - rho_i) s_i) with rho_i = expit(logit r_i + u) (binomial where s_i is infinite); S_g is the sum of its
    components. This is the logistic-normal random-intercept model (Breslow & Clayton, JASA 1993) around the
    beta-binomial posterior-predictive components of :func:`betabinom_sum_sf`: the effect integrated by
    Gauss-Hermite quadrature (``nodes`` points) within each block, the blocks' distributions then convolved
    exactly. ``sigma = 0``: the components are independent and the result is :func:`betabinom_sum_sf`'s.
    Groups with ``k <= 0`` or no component get 1. ``folds``: :func:`sum_sf_folds` of a larger set of groups that
    this call computes a part of (default: this call's groups'), the same tails bit for bit as in one call.
    """
    if not sigma or sigma <= 0:
        return betabinom_sum_sf(group, n, r, s, k)
    k = np.asarray(k, dtype=float)
    G = len(k)
    out = np.ones(G)
    if G == 0 or len(group) == 0:
        return out
    group, n, r, s, block = _sum_sf_components(group, n, r, s, np.asarray(block, dtype=np.int64))
    kint = np.maximum(k, 0).astype(np.int64)
    tot = np.bincount(group, weights=n, minlength=G).astype(np.int64)
    todo = (kint > 0) & (tot >= kint)
    out[(kint > 0) & (tot < kint)] = 0.0
    sel = todo[group]
    group, block, n, r, s = group[sel], block[sel], n[sel], r[sel], s[sel]
    if not len(group):
        return out
    # blocks renumbered 0 .. B-1, each with its group's fold
    ub, bidx = np.unique(block, return_inverse=True)
    bgroup = np.zeros(len(ub), dtype=np.int64)
    bgroup[bidx] = group
    # bucket by the fold (power-of-two widths), as betabinom_sum_sf
    width = 2 ** np.ceil(np.log2(kint + 1)).astype(np.int64)
    folds = folds or sum_sf_folds(kint, tot)
    blockpmf = _block_pmfs(bidx, bgroup, width, kint, n, r, s, sigma, nodes, folds)
    # the blocks of each group convolved (independent effects), folded at k
    gs = np.flatnonzero(todo)
    gslot = np.full(G, -1)
    gslot[gs] = np.arange(len(gs))
    for Lw in np.unique(width[gs]):
        sub = gs[width[gs] == Lw]
        bsel = np.flatnonzero(np.isin(bgroup, sub))
        ssl = np.full(G, -1)
        ssl[sub] = np.arange(len(sub))
        # the bucket's blocks are ``bsel`` in the order of its first loop (ascending), each row its own function
        pmf = blockpmf.pop(int(Lw))
        acc = _convolve_groups(ssl[bgroup[bsel]], lambda i, pmf=pmf: pmf[i], kint[sub], width=folds[int(Lw)])
        out[sub] = acc[np.arange(len(sub)), kint[sub]]
    return np.clip(out, 0.0, 1.0)


def _block_pmfs(bidx: np.ndarray, bgroup: np.ndarray, width: np.ndarray, kint: np.ndarray, n: np.ndarray,
                r: np.ndarray, s: np.ndarray, sigma: float, nodes: int, folds: dict[int, int],
                chunk: int = 50_000) -> dict[int, np.ndarray]:
    """Each block's probability function for :func:`overdispersed_sum_sf`, its effect integrated out, per fold bucket.

    ``bidx``: each component's block (0 .. B-1); ``bgroup``: each block's group; ``width``: each group's bucket (the
    power of two above its fold); ``kint``: each group's fold; ``folds``: each bucket's columns
    (:func:`sum_sf_folds`). Per block and Gauss-Hermite node (``nodes`` points of
    N(0, sigma^2)) the block's components are convolved at rates shifted by the node's effect
    (:func:`_convolve_groups`), then the nodes averaged with their weights. Returns, per bucket, a (blocks of the
    bucket in ascending order, the bucket's columns) matrix. The components are expanded to their
    (component, node) rows ``chunk`` components at a time (whole blocks, in their order; every chunk of a bucket as
    wide as the bucket), so memory follows the chunk, not the window: the result does not depend on ``chunk``."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    Q = len(x)
    lr = np.log(r / (1 - r))
    size = np.bincount(bidx, minlength=len(bgroup))  # components per block
    out: dict[int, np.ndarray] = {}
    for Lw in np.unique(width[bgroup]):
        bs = np.flatnonzero(width[bgroup] == Lw)  # blocks in this bucket
        L = folds[int(Lw)]
        res = out[int(Lw)] = np.empty((len(bs), L))
        # whole blocks per chunk, about ``chunk`` components each
        cut = np.r_[0, np.flatnonzero(np.diff(np.cumsum(size[bs]) // chunk)) + 1, len(bs)]
        for a, b in zip(cut[:-1], cut[1:]):
            cb = bs[a:b]
            inb = np.zeros(len(bgroup), dtype=bool)
            inb[cb] = True
            ci = np.flatnonzero(inb[bidx])  # the chunk's components, in their order
            qg = (np.searchsorted(cb, bidx[ci])[:, None] * Q + np.arange(Q)[None, :]).ravel()
            qn, qs = np.repeat(n[ci], Q), np.repeat(s[ci], Q)
            qr = (1.0 / (1.0 + np.exp(-(lr[ci][:, None] + sigma * x[None, :])))).ravel()

            def comp(idx, qn=qn, qr=qr, qs=qs):
                xs = np.arange(int(qn[idx].max()) + 1)
                one = qn[idx] == 1  # one decision: Bernoulli at its mean rate, whatever the rate's uncertainty
                pm = np.zeros((len(idx), len(xs)))
                pm[one, 0], pm[one, 1] = 1 - qr[idx][one], qr[idx][one]
                if (~one).any():
                    j = idx[~one]
                    pm[~one] = _component_pmf(xs[None, :], qn[j][:, None], qr[j][:, None], qs[j][:, None])
                return pm

            kf = np.repeat(kint[bgroup[cb]], Q)
            mix = _convolve_groups(qg, comp, kf, size=qn, width=L)
            res[a:b] = (mix.reshape(len(cb), Q, -1) * w[None, :, None]).sum(axis=1)
    return out
