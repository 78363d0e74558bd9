"""The seat hand-off fit's CPU cut without a figure changed (detectors/seat_handoff/ranks.py, null.py, frames.py):
Mann-Whitney's pieces counted in each pair's own sorted samples, the generalised Pareto tail fitted once per
window of simulated moves, an account's hands converted once for its change points. Each must give, to the last
bit, what the code it replaces gave: the references below are that code."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.seat_handoff import SeatHandoffDetector
from detectors.seat_handoff import statistics as st
from detectors.seat_handoff.frames import hist_base
from detectors.seat_handoff.null import _gpd_fit, _gpd_sf, _gpd_tail
from detectors.seat_handoff.queries import ACTS
from detectors.seat_handoff.ranks import u_against


def _ranked_u(xs, ys):
    """The replaced ``statistics._u_against``: every value ranked among all the pairs' values at once."""
    N = len(xs)
    n1 = np.array([x.size for x in xs], dtype=np.int64)
    n2 = np.array([y.size for y in ys], dtype=np.int64)
    gx, gy = np.repeat(np.arange(N), n1), np.repeat(np.arange(N), n2)
    vx = np.concatenate([np.asarray(x, dtype=float) for x in xs] + [np.zeros(0)])
    vy = np.concatenate([np.asarray(y, dtype=float) for y in ys] + [np.zeros(0)])
    _, rank = np.unique(np.concatenate([vx, vy]), return_inverse=True)
    OFF = int(rank.max()) + 1 if rank.size else 1
    kx = np.sort(gx * OFF + rank[: vx.size])
    ky = np.sort(gy * OFF + rank[vx.size:])
    below = np.searchsorted(ky, kx, side="left")
    upto = np.searchsorted(ky, kx, side="right")
    u1 = np.bincount(gx, weights=(below - np.searchsorted(ky, gx * OFF, side="left")) + 0.5 * (upto - below),
                     minlength=N)

    def runs(k, g):
        if k.size == 0:
            return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
        start = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        return k[start], np.diff(np.r_[start, k.size]), g[start]
    gxs = (kx // OFF).astype(np.int64) if kx.size else np.zeros(0, np.int64)
    gys = (ky // OFF).astype(np.int64) if ky.size else np.zeros(0, np.int64)
    rkx, rtx, rgx = runs(kx, gxs)
    _, rty, rgy = runs(ky, gys)
    tie = (np.bincount(rgx, weights=rtx.astype(float) ** 3 - rtx, minlength=N)
           + np.bincount(rgy, weights=rty.astype(float) ** 3 - rty, minlength=N))
    if rkx.size:
        tb = (np.searchsorted(ky, rkx, side="right") - np.searchsorted(ky, rkx, side="left")).astype(float)
        ta = rtx.astype(float)
        tie += np.bincount(rgx, weights=3.0 * ta * tb * (ta + tb), minlength=N)
    return n1, n2, u1, tie


def _samples(rng, n_pairs, big=60):
    """Pairs of samples with ties (values rounded), empties, NaN, -0.0 and infinities among them."""
    xs = [np.round(rng.normal(size=rng.integers(0, 30)), rng.integers(0, 3)) for _ in range(n_pairs)]
    ys = [np.round(rng.normal(size=rng.integers(0, big)), rng.integers(0, 3)) for _ in range(n_pairs)]
    for z in xs + ys:
        for v, share in ((np.nan, 0.3), (-0.0, 0.2), (0.0, 0.2), (np.inf, 0.1), (-np.inf, 0.1)):
            if z.size and rng.random() < share:
                z[rng.integers(0, z.size)] = v
    return xs, ys


def _same(a, b):
    for p, q in zip(a, b):
        np.testing.assert_array_equal(np.asarray(p, dtype=float), np.asarray(q, dtype=float))


def test_counts_in_sorted_samples_equal_the_ranks_to_the_last_bit():
    rng = np.random.default_rng(7)
    for _ in range(300):
        xs, ys = _samples(rng, int(rng.integers(0, 7)))
        _same(u_against(xs, ys), _ranked_u(xs, ys))
        # a second sample already sorted gives the same
        _same(u_against(xs, [np.sort(y) for y in ys]), _ranked_u(xs, ys))


def test_counts_agree_with_scipys_mann_whitney():
    rng = np.random.default_rng(8)
    x, y = np.round(rng.normal(size=40), 1), np.round(rng.normal(0.3, size=70), 1)
    n1, n2, u1, tie = u_against([x], [y])
    assert u1[0] == sps.mannwhitneyu(x, y).statistic
    _, t = np.unique(np.concatenate([x, y]), return_counts=True)
    assert tie[0] == float((t.astype(float) ** 3 - t).sum())


def test_device_time_many_unchanged(monkeypatch):
    """The device-invariant timing test (baselines sorted once, counts in sorted samples) equals the test with the
    ranks of the replaced code, every part, to the last bit."""
    rng = np.random.default_rng(9)
    n = 40
    xa = [np.round(rng.normal(6, 0.5, size=rng.integers(0, 80)), 2) for _ in range(n)]
    xb = [np.round(rng.normal(6.2, 0.6, size=rng.integers(0, 400)), 2) for _ in range(n)]
    ca = [rng.integers(0, 3, size=x.size) for x in xa]
    cb = [rng.integers(0, 3, size=x.size) for x in xb]
    for speed in (True, False):
        new = st._device_time_many(xa, ca, xb, cb, np.log(2.0), speed=speed)
        with monkeypatch.context() as m:
            m.setattr(st, "_u_against", _ranked_u)
            old = st._device_time_many(xa, ca, xb, cb, np.log(2.0), speed=speed)
        assert new.keys() == old.keys()
        for k in new:
            np.testing.assert_array_equal(new[k], old[k])


def _old_gpd_tail(null_p, p, n_exc, n_fit=250, bounded=True):
    """The replaced ``null._gpd_tail``: the fit made for every p-value placed in the tail."""
    t_null = -np.log(np.clip(null_p, 1e-300, 1.0))
    N = t_null.size
    n_fit = int(min(n_fit, N // 4))
    if n_fit < max(n_exc, 20):
        return 1.0
    srt = np.sort(t_null)[::-1]
    u = srt[n_fit]
    exc = srt[:n_fit] - u
    if not np.any(exc > 0):
        return 1.0
    with np.errstate(all="ignore"):
        shape, _, scale = sps.genpareto.fit(exc, floc=0.0)
    if not bounded and np.isfinite(shape) and shape < 0.0:
        shape, scale = 0.0, float(exc.mean())
    if not np.isfinite(shape) or not np.isfinite(scale) or scale <= 0 or shape >= 1.0:
        return 1.0
    t = -np.log(max(float(p), 1e-300))
    return float(n_fit / N * sps.genpareto.sf(t - u, shape, loc=0.0, scale=scale))


def test_one_fit_per_window_gives_the_tail_of_a_fit_per_p():
    rng = np.random.default_rng(10)
    null = rng.uniform(size=1200) ** 1.5
    fit = _gpd_fit(null, 10)
    fit_b = _gpd_fit(null, 10, bounded=False)
    for p in (1e-9, 1e-6, 1e-4, 1e-3, 0.5):
        assert _gpd_sf(fit, p) == _old_gpd_tail(null, p, 10) == _gpd_tail(null, p, 10)
        assert _gpd_sf(fit_b, p) == _old_gpd_tail(null, p, 10, bounded=False)
    assert _gpd_fit(null[:40], 10) is None and _gpd_sf(None, 1e-6) == 1.0


def test_matched_rank_and_kept_shift_with_cached_fits_equal_a_fit_per_candidate():
    rng = np.random.default_rng(11)
    det = SeatHandoffDetector(null_match=300)
    det.null_ = rng.uniform(size=2000)
    det.null_after_ = rng.lognormal(5, 1, size=2000)
    det.null_shift_ = rng.normal(0, 0.2, size=2000)
    # two candidates ranked among the same moves (the smallest samples) and one among the largest
    p = np.r_[rng.uniform(size=8) * 1e-3, 1e-8, 1e-7, 0.5]
    after = np.r_[rng.lognormal(5, 1, size=8), 1.0, 1.0, 1e6]
    shift = np.r_[rng.normal(0, 1.5, size=8), 3.0, np.nan, 2.5]
    got = det._matched_rank(p, after)
    la = np.log(np.maximum(det.null_after_, 1.0))
    o = np.argsort(la, kind="stable")
    la_s, pn = la[o], det.null_[o]
    m = 300
    lo = np.clip(np.searchsorted(la_s, np.log(np.maximum(after, 1.0))) - m // 2, 0, la.size - m)
    for i in range(p.size):
        ref = pn[lo[i]:lo[i] + m]
        k = np.count_nonzero(ref <= p[i])
        want = (1.0 + k) / (1.0 + m)
        if k < det.tail_exceed:
            want = min(want, _old_gpd_tail(ref, p[i], det.tail_exceed))
        assert got[i] == want
    got_s = det._kept_device_shift_p(shift, after)
    centre = float(np.median(det.null_shift_))
    dn = np.abs(det.null_shift_[o] - centre)
    d = np.abs(shift - centre)
    for i in range(p.size):
        if not np.isfinite(d[i]):
            assert np.isnan(got_s[i])
            continue
        ref = dn[lo[i]:lo[i] + m]
        k = np.count_nonzero(ref >= d[i] - 1e-12)
        want = (1.0 + k) / (1.0 + m)
        if k < det.tail_exceed:
            want = min(want, _old_gpd_tail(np.exp(-ref), float(np.exp(-d[i])), det.tail_exceed, bounded=False))
        assert got_s[i] == want


def _hist(seed: int, n: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    t0 = dt.datetime(2026, 1, 1)
    return pl.DataFrame({
        "tc": rng.integers(0, 3, size=n).astype(np.int32),
        "started_at": [t0 + dt.timedelta(minutes=int(m)) for m in np.sort(rng.integers(0, 500, size=n))],
        "dc": rng.integers(-1, 3, size=n).astype(np.int32),
        **{f"n_{a}": rng.integers(0, 4, size=n) for a in ACTS},
        "rstr": rng.integers(-1, 80, size=n), "rcls": rng.integers(-1, 3, size=n)})


def _old_hist_base(hist, tcode, cp_time, dcode):
    """The replaced ``frames.hist_base``: the frame's columns converted at every call."""
    same_event = hist["tc"].to_numpy() == tcode
    after_t = hist["started_at"].to_numpy() >= np.datetime64(cp_time, "us")
    keep = ~(same_event & after_t) & ((hist["dc"].to_numpy() != dcode) if dcode is not None else True)
    hc = hist.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)[keep].sum(axis=0)
    hr, hrc = hist["rstr"].to_numpy().astype(np.int64), hist["rcls"].to_numpy().astype(np.int64)
    kr = keep & (hrc >= 0)
    return hc, hr[kr], hrc[kr]


def test_hist_base_with_an_accounts_arrays_kept_equals_a_conversion_per_call():
    frames = [_hist(s, n) for s, n in ((1, 50), (2, 80), (3, 1))]
    cut = dt.datetime(2026, 1, 1, 4)
    # the same frame several times, then another, then back: each call as if converted afresh
    for h in (frames[0], frames[0], frames[1], frames[0], frames[2], frames[1], frames[1]):
        for tcode, dcode in ((0, None), (1, 2), (2, -1), (5, 0)):
            for a, b in zip(hist_base(h, tcode, cut, dcode), _old_hist_base(h, tcode, cut, dcode)):
                np.testing.assert_array_equal(a, b)
    # a frame made again with other values (a new object) is read afresh
    h2 = frames[0].with_columns(pl.col("n_fold") + 1)
    np.testing.assert_array_equal(hist_base(h2, 0, cut, None)[0], _old_hist_base(h2, 0, cut, None)[0])


def test_hist_base_keeps_no_arrays_once_their_frame_is_gone():
    from detectors.seat_handoff import frames

    h = _hist(4, 30)
    hist_base(h, 0, dt.datetime(2026, 1, 1, 4), None)
    assert frames._HIST_MEMO[1] is not None
    del h
    assert frames._HIST_MEMO == [None, None]
