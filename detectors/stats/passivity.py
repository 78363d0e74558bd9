"""Whole hands played passively between two players: the per-hand tests of sparse soft play."""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.stats._common import _TINY, OWN_BASELINE_BINS

def hand_passivity_test(rated, *, max_weight: float = 10.0, directed: bool = False):
    """Per unordered pair, a test of whole hands played passively between them (sparse soft play).

    ``rated``: decisions from :func:`own_rates_per_decision` where the only
    choice is to bet or check at the opponent (``_y`` = 1 for a bet, own rate
    ``r``). A pair that colludes in a fraction e of its hands checks *every*
    such spot in those hands and plays normally in the rest. Under the null
    each decision follows the player's own rate independently, so hand h is
    passive (no bet by either) with probability pi_h = prod (1 - r_i). The
    locally most powerful statistic for the mixture alternative
    (1 - e) * null + e * "all checks" counts the passive hands weighted by their
    surprise; here the bounded weight w_h = min(-ln pi_h, ``max_weight``) (the
    log-likelihood ratio of a hand that a fully passive partner would have
    played so, capped so that one improbable hand cannot decide the test),
    S = sum 1[passive_h] w_h against its null mean sum pi_h w_h and variance
    sum pi_h (1 - pi_h) w_h^2 (``hp_z``); the p-value is the Chernoff
    bound min over theta of exp(K(theta) - theta S), K the exact cumulant
    generating function of S under the null: valid for pairs that met in one
    hand or in hundreds (a normal or Edgeworth tail is far too thin when one
    improbable hand carries the sum), and conservative. This is the hand-level reading of
    the per-decision comparison of Mazrooei, Archibald & Bowling (AAAI 2013):
    the per-decision score test spreads a sparse deviation over every hand the
    pair played, while this one pools the decisions of each hand first (a
    mixture test in the spirit of higher criticism, Donoho & Jin, Ann. Stat.
    2004). Returns player (<), opponent, hands, passive, hp_observed (S),
    hp_expected, hp_z, hp_p_value.

    ``directed``: the same test on each player's own decisions only (a hand is
    passive for the ordered pair (player, opponent) when the player never bet
    at the opponent), per ordered pair: whether each side of a pair shows it.
    """
    if rated.is_empty():
        return pl.DataFrame(schema=_HP_COLS)
    return hand_passivity_from_hands(hand_passivity_sums(rated, directed=directed), max_weight=max_weight)


_HP_COLS = {"player": pl.Utf8, "opponent": pl.Utf8, "hands": pl.Float64, "passive": pl.Float64,
            "hp_observed": pl.Float64, "hp_expected": pl.Float64, "hp_z": pl.Float64, "hp_p_value": pl.Float64}


def hand_passivity_sums(rated, *, directed: bool = False):
    """Per hand and pair of ``rated`` (:func:`hand_passivity_test`'s input; ``directed``: per ordered pair):
    ``bets`` (decisions with ``_y``) and ``logpi`` (the sum of log(1 - r): the log-probability of no bet under the
    own rates), over the decisions whose rate is known. Returns hand_id, player, opponent, bets, logpi."""
    if directed:
        lo, hi = pl.col("player"), pl.col("opponent")
    else:
        lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
    return rated.filter(pl.col("r").is_not_null()).group_by("hand_id", lo.alias("player"), hi.alias("opponent")).agg(
        bets=pl.col("_y").sum(), logpi=(1 - pl.col("r")).log().sum())


def hand_passivity_from_hands(h, *, max_weight: float = 10.0):
    """:func:`hand_passivity_test` from its per-hand sums ``h`` (:func:`hand_passivity_sums`' columns, or the
    same computed out of core by DuckDB): one row per pair with hands, passive, hp_observed, hp_expected, hp_z and
    hp_p_value."""
    if h.is_empty():
        return pl.DataFrame(schema=_HP_COLS)
    h = h.with_columns(pi=pl.col("logpi").exp(), w=(-pl.col("logpi")).clip(0, max_weight),
                       x=(pl.col("bets") == 0).cast(pl.Float64))
    g = h.group_by("player", "opponent").agg(
        hands=pl.len().cast(pl.Float64), passive=pl.col("x").sum(), hp_observed=(pl.col("x") * pl.col("w")).sum(),
        hp_expected=(pl.col("pi") * pl.col("w")).sum(),
        V=(pl.col("pi") * (1 - pl.col("pi")) * pl.col("w") ** 2).sum(),
        K3=(pl.col("pi") * (1 - pl.col("pi")) * (1 - 2 * pl.col("pi")) * pl.col("w") ** 3).sum())
    v = np.maximum(g["V"].to_numpy(), 1e-9)
    z = (g["hp_observed"].to_numpy() - g["hp_expected"].to_numpy()) / np.sqrt(v)
    # Chernoff bound P(S >= s) <= min_theta exp(K(theta) - theta s), K the cumulant generating function of S (a sum of
    # independent weighted Bernoullis), minimised over a fixed grid of theta: valid for any number of hands, exact
    # in the limit for one hand (the bound tends to pi_h), conservative by a modest factor for many
    gid = h.join(g.select("player", "opponent").with_row_index("_g"), on=["player", "opponent"])
    p = _chernoff_tail(gid["_g"].to_numpy().astype(np.int64), gid["pi"].to_numpy(), gid["w"].to_numpy(),
                       g["hp_observed"].to_numpy(), len(g))
    return g.with_columns(hp_z=pl.Series(z), hp_p_value=pl.Series(np.clip(p, _TINY, 1.0))).select(list(_HP_COLS))


def _chernoff_tail(idx, pi, w, s, groups: int) -> np.ndarray:
    """min over a fixed grid of theta of exp(K(theta) - theta s) per group, K the cumulant generating function of a sum of
    independent Bernoulli(pi) indicators weighted w (one row per indicator, ``idx`` its group): the bound of
    :func:`hand_passivity_test`.

    K(theta) - theta s is convex in theta (a cumulant generating function minus a line), so along the increasing grid
    it falls to its minimum and then only rises, each step by at least the previous rise (the steps grow): a group
    leaves the loop at the first grid point where it rose (from 0 at theta = 0) by more than rounding, and its rows are
    dropped from the remaining, costly log-sum-exp passes (most honest pairs rise from the start). Each remaining
    group's sum runs over its rows in the same order, so its values, and every group's minimum, are the full grid's."""
    pi = np.clip(pi, 1e-300, 1.0)
    best = np.zeros(groups)
    l1 = np.log1p(-np.minimum(pi, 1 - 1e-15))
    lp = np.log(pi)
    prev = np.zeros(groups)  # K(0) - 0 s
    active = np.ones(groups, dtype=bool)
    for theta in np.geomspace(1e-3, 50.0, 64):
        if not active.any():
            break
        k = np.bincount(idx, weights=np.logaddexp(l1, lp + theta * w), minlength=groups)
        f = k - theta * s
        best = np.where(active, np.minimum(best, f), best)
        # risen by more than the sums' rounding (every term of k is >= 0, so its error is a tiny share of k): by
        # convexity every later point is higher still, and the minimum is already the full grid's, bit for bit
        rose = active & (f - prev > 1e-9 * (k + theta * np.abs(s)))
        prev = f
        if rose.any():
            active &= ~rose
            keep = active[idx]
            if np.count_nonzero(keep) < 0.875 * len(idx):
                # drop the finished groups' rows (order kept) once they are an eighth of what is computed
                idx, l1, lp, w = idx[keep], l1[keep], lp[keep], w[keep]
    return np.exp(best)


def hand_passivity_predictive(rated, *, bins: tuple[str, ...] = OWN_BASELINE_BINS,
                              max_weight: float = 10.0, draws: int = 64, random_state: int = 0,
                              max_rate: float = 1 - 1e-6, prior_strength: float | None = None):
    """:func:`hand_passivity_test` with the own rates' uncertainty carried: a predictive p-value per unordered pair.

    ``rated``: decisions from :func:`own_rates_per_decision` with ``posterior=True`` (the plug-in rate ``r`` and its
    Beta posterior ``ra``, ``rb`` from the player's k0 of n0 decisions against everyone else in the bin, with the
    empirical-Bayes prior of the bin). The statistic is the hand test's, fixed by the plug-in rates: S = sum over the
    pair's hands of 1[neither bet] w_h, w_h = min(-ln pi_h, ``max_weight``). Its null distribution is taken under the
    rates the baseline allows rather than the plug-in ones: each (player, opponent, bin) rate is drawn from its
    posterior, the hands are independent given the rates, and the p-value is the average over ``draws`` draws of the
    Chernoff bound of S's tail given the rates: an upper bound of the predictive tail (Box, J. R. Stat. Soc. A 1980)
    whose posterior rests on the decisions against others only, never on the pair's own, so no decision is used twice
    (Bayarri & Berger, JASA 2000); the beta-binomial model of the own-baseline tests, here per hand.
    Where the baseline is deep the posterior is narrow and the p-value that of :func:`hand_passivity_test`; where
    it is thin (a player who plays mostly the partner) the draws include every rate the few decisions against
    others allow, and a pair whose passivity could be that player's style gets the heavier tail it deserves.
    ``prior_strength``: the bin's prior kept at its mean with a + b at most this (None: as fitted), so that the
    player's own few decisions, not the population's spread, say which rates are possible. Seeded
    (``random_state``); the draws are taken ``block`` at a time (memory hands x 32). Returns player (<), opponent,
    hp_pred_p_value.
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "hp_pred_p_value": pl.Float64}
    d = rated.filter(pl.col("r").is_not_null() & pl.col("ra").is_not_null())
    if d.is_empty():
        return pl.DataFrame(schema=cols)
    lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
    cells = d.select("player", "opponent", *bins, "ra", "rb", "k0", "n0").unique(["player", "opponent", *bins],
                                                                                maintain_order=True)
    if prior_strength is not None:
        # the bin's prior kept at its mean but at most this strength (a + b): the rates a player's few decisions
        # against others allow, not the ones the population's spread allows
        a0, b0 = pl.col("ra") - pl.col("k0"), pl.col("rb") - (pl.col("n0") - pl.col("k0"))
        f = (prior_strength / (a0 + b0)).clip(upper_bound=1.0)
        cells = cells.with_columns(ra=pl.col("k0") + a0 * f, rb=pl.col("n0") - pl.col("k0") + b0 * f)
    cells = cells.with_row_index("_c")
    d = d.join(cells.select("player", "opponent", *bins, "_c"), on=["player", "opponent", *bins])
    h = d.group_by("hand_id", lo.alias("pa_"), hi.alias("pb_")).agg(
        bets=pl.col("_y").sum(), logpi=(1 - pl.col("r")).log().sum())
    h = h.with_columns(w=(-pl.col("logpi")).clip(0, max_weight), x=(pl.col("bets") == 0).cast(pl.Float64))
    g = h.group_by("pa_", "pb_").agg(s=(pl.col("x") * pl.col("w")).sum()).sort("pa_", "pb_").with_row_index("_g")
    h = h.join(g.select("pa_", "pb_", "_g"), on=["pa_", "pb_"]).sort("_g", "hand_id").with_row_index("_h")
    hc = d.group_by("hand_id", lo.alias("pa_"), hi.alias("pb_"), "_c").agg(c=pl.len()).join(
        h.select("hand_id", "pa_", "pb_", "_h"), on=["hand_id", "pa_", "pb_"])
    rng = np.random.default_rng(random_state)
    theta = rng.beta(cells["ra"].to_numpy()[:, None], cells["rb"].to_numpy()[:, None], size=(len(cells), draws))
    l1m = np.log1p(-np.clip(theta, 1e-6, max_rate))  # (cells, draws)
    hi_, ci_, cnt = hc["_h"].to_numpy(), hc["_c"].to_numpy(), hc["c"].to_numpy().astype(float)
    nh, ng = len(h), len(g)
    gidx = h["_g"].to_numpy().astype(np.int64)
    total = np.zeros(ng)
    block = 32  # draws at a time: memory (hands x block), not (hands x draws)
    for m0 in range(0, draws, block):
        ms = range(m0, min(m0 + block, draws))
        # log pi_h per draw: sum over the hand's decisions of ln(1 - theta) (draws x hands, flattened draw-major)
        lpi = np.stack([np.bincount(hi_, weights=cnt * l1m[ci_, m], minlength=nh) for m in ms])
        idx = (gidx[None, :] + ng * np.arange(len(ms))[:, None]).ravel()
        w = np.tile(h["w"].to_numpy(), len(ms))
        s = np.tile(g["s"].to_numpy(), len(ms))
        total += _chernoff_tail(idx, np.exp(lpi.ravel()), w, s, ng * len(ms)).reshape(len(ms), ng).sum(axis=0)
    p = np.clip(total / draws, _TINY, 1.0)
    return g.select(pl.col("pa_").alias("player"), pl.col("pb_").alias("opponent"),
                    hp_pred_p_value=pl.Series(p))
