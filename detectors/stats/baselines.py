"""Each player's own baseline, robust to the partners it is tested against (Polars frames of decisions).

:func:`robust_own_baseline`: the own-baseline score test per ordered pair in two passes (outlying
partners left out of the baseline); :func:`baseline_outliers` and :func:`replace_baseline_tests` around
it; :func:`pool_directions`: both directions of a pair pooled; :func:`own_rates_per_decision`: each
decision's own rate, for the per-hand tests of :mod:`detectors.stats.passivity`.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np
import polars as pl
from scipy import stats as _st

from detectors.stats._common import _TINY, OWN_BASELINE_BINS, WEIGHT
from detectors.stats.multiple_testing import bh_reject
from detectors.stats.shrinkage import beta_priors_by_bin
from detectors.stats.tails import estimated_baseline_pvalue, predictive_count_tail

# (selection token, test parameters, also_out's id and length) -> (a weak reference to also_out, the result)
_ROBUST_CACHE: dict[tuple, tuple] = {}


# (id of the frame, selection) -> (a weak reference to the frame: an id is never taken for another frame's, the first pass)
_FIRST_CACHE: dict[tuple, tuple] = {}
_TOKENS = itertools.count()  # names of selected decisions, never reused
# (selection, id of the frame) -> (a weak reference to the frame, the first pass): other frames with the same decisions
# in the selection's columns match it while the frame lives (held weakly: a detector's decisions are freed with it)
_SAME_SELECTION: dict[tuple, tuple] = {}


def _forget_dead_frames() -> None:
    """Drop the memo entries of frames that no longer live: a finalizer of every frame the memos name calls it, so
    a detector's first passes and tests are freed with its decisions, not kept until the memo is next full (after a
    kind, the rest of a night would carry them). A robust test's entry goes with the last frame its selection (the
    first pass's token) was computed from."""
    for memo in (_FIRST_CACHE, _SAME_SELECTION):
        for k in [k for k, (ref, _) in memo.items() if ref() is None]:
            del memo[k]
    live = {res[0] for _, res in _FIRST_CACHE.values() if res is not None}
    for k in [k for k, (ref, _) in _ROBUST_CACHE.items() if k[0] not in live or (ref is not None and ref() is None)]:
        del _ROBUST_CACHE[k]


def _remember(dec: pl.DataFrame, key: tuple, res) -> None:
    """``res`` as the first pass of ``dec`` under ``key``, forgotten when ``dec`` dies."""
    _FIRST_CACHE[key] = (weakref.ref(dec), res)
    weakref.finalize(dec, _forget_dead_frames)


def forget_selection(dec, y: str, *, where=None, bins: tuple[str, ...] = OWN_BASELINE_BINS, alpha: float = 0.01,
                     max_rate: float = 1 - 1e-6, **_) -> None:
    """Drop the memo of one selection of ``dec`` (its pair counts, totals, priors and first pass) and the robust tests
    made from it, once its tests are made: a detector that makes many tests on one frame frees each selection's
    counts when it is done with them instead of keeping all of them until the frame dies.

    Parameters
    ----------
    dec : the frame the selection was made from (decisions or counted cells).
    y, where, bins, alpha, max_rate : the selection, as given to :func:`robust_own_baseline` (its other keyword
        arguments, e.g. ``side``, are accepted and ignored: they do not change the selection).

    Returns
    -------
    None. Nothing is dropped where the selection was never made; a later test on it makes it again, with the same
    result."""
    res = _FIRST_CACHE.pop((id(dec), len(dec), y, str(where), tuple(bins), alpha, max_rate), (None, None))[1]
    if res is None:
        return
    for k in [k for k, (_, r) in _SAME_SELECTION.items() if r is res and k[1] == id(dec)]:
        del _SAME_SELECTION[k]
    if any(r is res for _, r in _FIRST_CACHE.values()):
        return  # another live frame's entry holds the same selection: its robust tests stay
    for k in [k for k in _ROBUST_CACHE if k[0] == res[0]]:
        del _ROBUST_CACHE[k]


def _baseline_pass(pair_o, totals, pri, bins: list[str], max_rate: float):
    """One pass of :func:`robust_own_baseline`: per (player, opponent, bin) rows ``pair_o`` (``n``, ``k``, ``_o``: the
    opponent left out of the baseline), the player's totals per bin and the bins' priors -> the score test's sums per
    ordered pair."""
    t = pair_o.join(totals, on=["player", *bins]).join(pri, on=bins)
    t = t.with_columns(
        n0=(pl.col("N") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("n"))).clip(0),
        k0=(pl.col("K") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("k"))).clip(0))
    t = t.with_columns(r=((pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb"))).clip(1e-6, max_rate),
                       s=pl.col("n0") + pl.col("pa") + pl.col("pb"))
    n, k, r, s = pl.col("n"), pl.col("k"), pl.col("r"), pl.col("s")
    t = t.with_columns(e=n * r, u=(k - n * r) / (1 - r), v=n * r / (1 - r) + n**2 * r / ((1 - r) * (s + 1)),
                       k3=n * r * (2 * r - 1) / (1 - r) ** 2,
                       # log-probabilities of the two extreme outcomes: no decision an event, every decision one
                       l0=n * (1 - r).log(), l1=n * r.log(),
                       # the count's variance beyond the plug-in binomial's (beta-binomial, rate uncertain)
                       ex=n * (n - 1) * r * (1 - r) / (s + 1))
    return t.group_by(["player", "opponent"]).agg(
        n=pl.col("n").sum(), observed=pl.col("k").sum(), expected=pl.col("e").sum(),
        score_u=pl.col("u").sum(), var=pl.col("v").sum(), n0=pl.col("n0").sum(), k3=pl.col("k3").sum(),
        extra_var=pl.col("ex").sum(), l0=pl.col("l0").sum(), l1=pl.col("l1").sum())


_ROBUST_COLUMNS = ["player", "opponent", "n", "observed", "expected", "rate_pair", "rate_own", "z", "p_value",
                   "score_u", "var", "n0", "k3", "l0", "l1"]


def _first_pass_of_counts(pair, bins: list[str], alpha: float, max_rate: float):
    """The first pass of :func:`robust_own_baseline` from the pair counts per bin (player, opponent, bins, n, k):
    (pair, the player's totals per bin, the bins' Beta priors, the two-sided BH outliers at ``alpha`` with ``_o``)."""
    # the player's totals per bin from the pair counts (integer sums: the same counts, from far fewer rows)
    me = pair.group_by(["player", *bins]).agg(N=pl.col("n").sum().cast(pair.schema["n"]), K=pl.col("k").sum())
    pri = beta_priors_by_bin(me, bins, "K", "N")
    first = _baseline_pass(pair.with_columns(_o=pl.lit(False)), me, pri, bins, max_rate)
    z1 = (first["score_u"] / first["var"].clip(1e-9).sqrt()).to_numpy()
    p2 = np.clip(2 * _st.norm.sf(np.abs(z1)), _TINY, 1.0)
    out = first.filter(pl.Series(bh_reject(p2, alpha))).select("player", "opponent", _o=pl.lit(True))
    return pair, me, pri, out


def _second_pass_of_counts(pair, me, pri, out, bins: list[str], side: str, rare_tail: str, max_rate: float):
    """The second pass of :func:`robust_own_baseline`: the outliers ``out`` (player, opponent, ``_o``) left out of
    each player's totals ``me``, the one-sided score test of every pair against the cleaned own rates."""
    pair = pair.join(out, on=["player", "opponent"], how="left").with_columns(pl.col("_o").fill_null(False))
    removed = pair.filter(pl.col("_o")).group_by(["player", *bins]).agg(rn=pl.col("n").sum(), rk=pl.col("k").sum())
    clean = me.join(removed, on=["player", *bins], how="left").with_columns(
        N=pl.col("N") - pl.col("rn").fill_null(0), K=pl.col("K") - pl.col("rk").fill_null(0)).drop("rn", "rk")
    g = _baseline_pass(pair, clean, pri, bins, max_rate)
    g, p = score_test_pvalues(g, side, rare_tail)
    return g.with_columns(pl.col("n", "observed").cast(pl.Float64),
                          p_value=pl.Series(np.clip(p, _TINY, 1.0))).select(_ROBUST_COLUMNS)


def own_baseline_from_counts(pair, bins: tuple[str, ...], *, side: str = "less", alpha: float = 0.01,
                             rare_tail: str = "poisson", max_rate: float = 1 - 1e-6):
    """:func:`robust_own_baseline` from its counts per (player, opponent, cell) already made (for example by
    DuckDB over the day files): the same two passes, method and reference there.

    Parameters
    ----------
    pair : player, opponent, ``bins``, ``n`` (the pair's decisions in the cell), ``k`` (those showing the
        behaviour tested).
    bins : the cell columns.
    side, alpha, rare_tail, max_rate : as :func:`robust_own_baseline`.

    Returns
    -------
    :func:`robust_own_baseline`'s columns, one row per ordered pair with a counted decision.
    """
    if pair.is_empty():
        return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "opponent") else pl.Float64) for c in _ROBUST_COLUMNS})
    bins = list(bins)
    _, me, pri, out = _first_pass_of_counts(pair, bins, alpha, max_rate)
    return _second_pass_of_counts(pair, me, pri, out, bins, side, rare_tail, max_rate)


def with_baseline_columns(out, name: str, t):
    """``out`` (pair features) with test ``name``'s :func:`robust_own_baseline` result ``t`` as the columns
    ``<name>_n``, ``_obs``, ``_exp``, ``_p``, ``_u``, ``_v``, ``_n0`` (replaced where present), joined by ordered pair."""
    out = out.drop([c for c in (f"{name}_n", f"{name}_obs", f"{name}_exp", f"{name}_p", f"{name}_u", f"{name}_v",
                                f"{name}_n0") if c in out.columns])
    return out.join(t.select("player", "opponent", pl.col("n").alias(f"{name}_n"), pl.col("observed").alias(f"{name}_obs"),
                             pl.col("expected").alias(f"{name}_exp"), pl.col("p_value").alias(f"{name}_p"),
                             pl.col("score_u").alias(f"{name}_u"), pl.col("var").alias(f"{name}_v"),
                             pl.col("n0").cast(pl.Float64).alias(f"{name}_n0")),
                    on=["player", "opponent"], how="left")


def _baseline_first_pass(dec, y: str, where, bins: tuple[str, ...], alpha: float, max_rate: float):
    """The counts and first pass of :func:`robust_own_baseline` (and :func:`own_rates_per_decision`), which do not
    depend on the test's side, tail or extra outliers: (a token naming the selected decisions, pair counts per bin,
    the player's totals per bin, the bins' priors, the first pass's outliers with ``_o``), or None when no decision
    is selected. Computed once per selection of the same decisions and reused: the detectors ask for the same
    selection several times (soft play's outliers of the check, raise and fold tests, then the tests themselves),
    and chip dumping and soft play read the same columns of their two decision frames. A frame not seen before is
    matched by the columns the counts read (equal values: the same counts) against the frames seen before that
    still live; only those columns are filtered. A frame with a :data:`~detectors.stats._common.WEIGHT` column is
    one of counted cells: each row counts as that many decisions (the same counts, the same types)."""
    key = (id(dec), len(dec), y, str(where), bins, alpha, max_rate)
    hit = _FIRST_CACHE.get(key)
    if hit is not None and hit[0]() is dec:
        return hit[1]
    weighted = WEIGHT in dec.columns
    need = list(dict.fromkeys(["player", "opponent", y, "sbin", *bins, *([WEIGHT] if weighted else []),
                               *([] if where is None else where.meta.root_names())]))
    narrow = dec.select(need)
    same = (len(dec), tuple(need), y, str(where), bins, alpha, max_rate)
    for k, (ref, res) in _SAME_SELECTION.items():
        frame = ref()
        if k[0] == same and frame is not None and frame.select(need).equals(narrow):
            _remember(dec, key, res)
            return res
    d = narrow.filter(pl.col("sbin").is_not_null())
    if where is not None:
        d = d.filter(where)
    if d.is_empty():
        res = None
    else:
        bins = list(bins)
        d = d.with_columns(pl.col(y).cast(pl.Int64).alias("_y"))
        if weighted:
            # counted cells: n and k as the decisions' pl.len() (UInt32) and sum of _y (Int64) would give them
            pair = d.group_by(["player", "opponent", *bins]).agg(n=pl.col(WEIGHT).sum().cast(pl.UInt32),
                                                                 k=(pl.col("_y") * pl.col(WEIGHT)).sum())
        else:
            pair = d.group_by(["player", "opponent", *bins]).agg(n=pl.len(), k=pl.col("_y").sum())
        res = (next(_TOKENS), *_first_pass_of_counts(pair, bins, alpha, max_rate))
    if len(_FIRST_CACHE) > 32:
        _FIRST_CACHE.clear()
        _SAME_SELECTION.clear()
    _remember(dec, key, res)
    _SAME_SELECTION[(same, id(dec))] = (weakref.ref(dec), res)
    return res


def score_test_pvalues(g: pl.DataFrame, side: str, rare_tail: str = "poisson") -> tuple[pl.DataFrame, np.ndarray]:
    """The own-baseline score test's one-sided p-values, per ordered pair.

    Parameters
    ----------
    g : polars.DataFrame
        per pair: ``n`` decisions, ``observed`` and ``expected`` counts, ``score_u`` and ``var`` (the score
        statistic and its variance); ``extra_var`` when ``rare_tail="predictive"``.
    side : str
        ``"less"`` (fewer than the player's own rates predict) or ``"greater"``.
    rare_tail : str
        for ``"greater"``: the tail that guards rare events, where the normal one is far too small:
        ``"poisson"`` (of the expected count) or ``"predictive"`` (:func:`predictive_count_tail`).

    Returns
    -------
    (polars.DataFrame, numpy.ndarray)
        ``g`` with ``rate_pair``, ``rate_own`` and ``z`` (continuity-corrected), and the p-values.
    """
    sign = -1.0 if side == "less" else 1.0
    g = g.with_columns(
        rate_pair=pl.col("observed") / pl.col("n"),
        rate_own=pl.col("expected") / pl.col("n"),
        z=(sign * pl.col("score_u") - 0.5) / pl.col("var").clip(1e-9).sqrt(),
    )
    p = _st.norm.sf(g["z"].to_numpy())
    if side == "greater":
        expected = np.maximum(g["expected"].to_numpy(), 1e-9)
        if rare_tail == "predictive":
            p = np.maximum(p, predictive_count_tail(g["observed"].to_numpy(), expected, g["extra_var"].to_numpy()))
        else:
            p = np.maximum(p, _st.poisson.sf(g["observed"].to_numpy() - 1, expected))
    return g, p


def robust_own_baseline(dec, y: str, *, where=None, bins: tuple[str, ...] = OWN_BASELINE_BINS,
                        side: str = "less", alpha: float = 0.01, max_rate: float = 1 - 1e-6, also_out=None,
                        outliers_only: bool = False, rare_tail: str = "poisson"):
    """Own-baseline score test of indicator ``y`` per ordered pair, with the player's outlying partners left out.

    As :func:`detectors.features.gameplay.own_baseline` (expected count from
    the player's shrunk rate per bin against everyone else; score test for one
    multiplier on the rates, its variance carrying the rates' uncertainty), in
    two passes. The first pass tests every pair two-sided and takes the pairs
    with BH q <= ``alpha`` as outliers: opponents the player treats unlike the
    rest (a chip-dump receiver raises its feeders, a soft player spares its
    partner). The second pass leaves the outliers' decisions out of the
    player's baseline, so one planted partner does not make every honest
    opponent look soft or favoured by contrast (a robust, trimmed baseline in
    the spirit of Huber's contamination model). Returns player, opponent, n,
    observed, expected, rate_pair, rate_own, z, p_value, and the score test's
    ``score_u`` (sum of (k - n r) / (1 - r)) and ``var``, so that tests of
    several pairs (both directions of one pair) can be pooled, and ``n0``: the
    player's own decisions against others in the pair's bins (the baseline's
    sample; where it is tiny the "own" rate is the population's prior), ``k3`` (the score's third cumulant) and
    ``l0``, ``l1``: the log-probabilities, under the own rates, that none of the pair's decisions is an event and that
    every one is (the two extreme outcomes, for :func:`pool_directions`' exact floor).

    ``also_out`` (player, opponent rows): more opponents to leave out of the player's baseline with the
    first pass's own outliers (for example those found by another test of the same player, see
    :func:`baseline_outliers`). ``outliers_only``: return the first pass's outliers (player, opponent) instead.

    ``max_rate`` caps the own rates: a score weight r / (1 - r) near r = 1 lets one decision decide the test (a
    player who always calls with the nuts folds once), which the normal and Edgeworth tails cannot follow.

    ``rare_tail`` (``side="greater"`` only): the floor under the normal tail for rare events. ``"poisson"``: the
    Poisson tail at the expected count, the rates taken as known; ``"predictive"``:
    :func:`predictive_count_tail`, the rates' Beta posteriors (baseline plus prior, per bin) carried into the
    count's distribution, so a few events where the baseline saw none (a thin baseline, or one whose only events
    went with the first pass's outliers) are not read as impossible.
    """
    if rare_tail not in ("poisson", "predictive"):
        raise ValueError(f"rare_tail must be 'poisson' or 'predictive', not {rare_tail!r}")
    fp = _baseline_first_pass(dec, y, where, tuple(bins), alpha, max_rate)
    if fp is None:
        return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "opponent") else pl.Float64) for c in _ROBUST_COLUMNS})
    token, pair, me, pri, out = fp
    # the same selected decisions (fp's token), whichever frame they came in
    key = (token, y, str(where), bins, side, alpha, max_rate,
           None if also_out is None else (id(also_out), len(also_out)), outliers_only, rare_tail)
    hit = _ROBUST_CACHE.get(key)
    # an ``also_out`` frame is known by its id only while it lives: a new frame may take a dead one's id
    if hit is not None and (also_out is None or hit[0]() is also_out):
        return hit[1]
    bins = list(bins)
    if outliers_only:
        return out.select("player", "opponent")
    if also_out is not None and not also_out.is_empty():
        out = pl.concat([out, also_out.select("player", "opponent", _o=pl.lit(True))]).unique(["player", "opponent"])
    res = _second_pass_of_counts(pair, me, pri, out, bins, side, rare_tail, max_rate)
    # k3: third cumulant of the "fewer than expected" score (sum of (r - y) / (1 - r) over the decisions), for
    # :func:`pool_directions` with ``skew``; the "more" score's is its negative
    if len(_ROBUST_CACHE) > 16:
        _ROBUST_CACHE.clear()
    _ROBUST_CACHE[key] = (None if also_out is None else weakref.ref(also_out), res)
    if also_out is not None:
        weakref.finalize(also_out, _forget_dead_frames)
    return res


def baseline_outliers(dec, specs, *, alpha: float = 0.01):
    """The union over several own-baseline tests of each player's outlying opponents (first pass of
    :func:`robust_own_baseline`, two-sided BH at ``alpha``): (player, opponent) rows.

    ``specs``: (y, keyword arguments of :func:`robust_own_baseline`) per test. A partner a player treats unlike the rest in one respect
    (a chip-dump receiver who hardly ever folds to its feeders) is left out of that player's baseline in
    every test: its hands would otherwise inflate the player's own rates (the receiver's bets into the
    feeders) and make the player look passive against every honest opponent (explaining away).
    """
    parts = [robust_own_baseline(dec, y, alpha=alpha, outliers_only=True, **kw) for y, kw in specs]
    parts = [p for p in parts if not p.is_empty()]
    if not parts:
        return pl.DataFrame(schema={"player": pl.Utf8, "opponent": pl.Utf8})
    return pl.concat(parts).unique(["player", "opponent"]).sort("player", "opponent")


def replace_baseline_tests(pairs, dec, alpha: float = 0.01, rare_tail: str = "poisson",
                           junk_bins: tuple[str, ...] = OWN_BASELINE_BINS):
    """``pairs`` (gameplay pair features) with the aggr / fold / junk own-baseline columns recomputed by
    :func:`robust_own_baseline` (same names: ``<name>_n``, ``_obs``, ``_exp``, ``_p``; and ``_u``, ``_v``:
    the score test's statistic and variance; ``_n0``: the own baseline's decisions in the pair's bins).
    ``rare_tail``: passed to the one-sided "greater" tests (fold, junk), see :func:`robust_own_baseline`.
    ``junk_bins``: the junk test's cells (default :data:`OWN_BASELINE_BINS`, as the other two; chip dumping passes
    :data:`JUNK_BINS`, with the price of a call)."""
    out = pairs
    for name, y, where, side, bins in _replaced_specs(junk_bins):
        t = robust_own_baseline(dec, y, where=where, bins=bins, side=side, alpha=alpha,
                                rare_tail=rare_tail if side == "greater" else "poisson")
        out = with_baseline_columns(out, name, t)
    return out


def _replaced_specs(junk_bins: tuple[str, ...] = OWN_BASELINE_BINS) -> tuple[tuple, ...]:
    """The tests of :func:`replace_baseline_tests`: (name, indicator, filter, side, cells) each."""
    return (("aggr", "aggr", None, "less", OWN_BASELINE_BINS),
            ("fold", "fold", pl.col("facing"), "greater", OWN_BASELINE_BINS),
            ("junk", "commit", pl.col("sbin") <= 0, "greater", tuple(junk_bins)))


def forget_replaced_tests(dec, alpha: float = 0.01, junk_bins: tuple[str, ...] = OWN_BASELINE_BINS) -> None:
    """:func:`forget_selection` of the three selections :func:`replace_baseline_tests` made on ``dec`` (same
    ``alpha`` and ``junk_bins``), once its columns are made."""
    for _, y, where, _, bins in _replaced_specs(junk_bins):
        forget_selection(dec, y, where=where, bins=bins, alpha=alpha)


def pool_directions(t, *, side: str = "less", skew: bool = False):
    """Both directions of an ordered-pair score test (:func:`robust_own_baseline` output) pooled per unordered pair.

    Soft play is mutual: both partners spare each other, so the score
    statistics U and their variances add up (the directions rest on different
    players' decisions, hence independent): z = (±ΣU − 0.5) / sqrt(ΣVar),
    one-sided; for ``side="greater"`` the Poisson tail of the pooled count is
    the floor (rare events). Returns player (< opponent), opponent, n,
    observed, expected, p_value.

    ``skew``: the normal tail corrected for the skewness of the score (one
    Edgeworth term; needs the ``k3`` column). The score of a check where the
    player's own rate of betting is r is r / (1 - r) with probability 1 - r
    and -1 otherwise: for the spots where a player nearly always bets it is
    strongly right-skewed, so with few decisions the normal tail of their sum
    is far too thin and a pair that met in a handful of hands gets a p-value
    it has not earned. The one-term Edgeworth expansion (Hall, *The Bootstrap
    and Edgeworth Expansion*, 1992, ch. 2) P(Z > z) = 1 - Phi(z) + gamma / 6
    (z^2 - 1) phi(z), with gamma = k3 / Var^(3/2) the standardised third
    cumulant summed over both directions, is used only where it makes the
    tail heavier (the correction never makes a p-value smaller). Adds the
    columns ``z`` and ``skew``.

    The exact floor (where the ``l0`` and ``l1`` columns are given): no
    approximation may fall below the probability of the most extreme outcome
    the decisions allow (``side="less"``: none of them an event, the product
    of (1 - r) over the decisions, exp(Σ l0); ``"greater"``: every one,
    exp(Σ l1)). That outcome lies in every tail of the score, so the exact
    p-value is never below it, and where it was observed (a pair with one or
    two decisions, none an event) it *is* the exact p-value: one check where
    the own rate of betting is 0.9 has p = 0.1, where the normal tail, even
    corrected for skew, gives 0.02 (and 4e-4 where the rate is higher).
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "n": pl.Float64, "observed": pl.Float64,
            "expected": pl.Float64, "p_value": pl.Float64}
    if skew:
        cols |= {"z": pl.Float64, "skew": pl.Float64}
    if t.is_empty():
        return pl.DataFrame(schema=cols)
    lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
    ext = "l0" if side == "less" else "l1"
    exact = ext in t.columns
    g = t.group_by(lo.alias("player"), hi.alias("opponent")).agg(
        pl.col("n", "observed", "expected").cast(pl.Float64).sum(), U=pl.col("score_u").sum(), V=pl.col("var").sum(),
        *([pl.col("k3").sum().alias("K3")] if skew else []), *([pl.col(ext).sum().alias("_ext")] if exact else []))
    sign = -1.0 if side == "less" else 1.0
    v = np.maximum(g["V"].to_numpy(), 1e-9)
    z = (sign * g["U"].to_numpy() - 0.5) / np.sqrt(v)
    p = _st.norm.sf(z)
    extra = {}
    if skew:
        gamma = -sign * g["K3"].to_numpy() / v**1.5
        p = np.maximum(p, np.minimum(1.0, p + gamma / 6.0 * (z**2 - 1.0) * _st.norm.pdf(z)))
        extra = {"z": pl.Series(z), "skew": pl.Series(gamma)}
    if side == "greater":
        p = np.maximum(p, _st.poisson.sf(g["observed"].to_numpy() - 1, np.maximum(g["expected"].to_numpy(), 1e-9)))
    if exact:
        # the exact floor: the probability of the most extreme outcome (see above)
        p = np.maximum(p, np.exp(g["_ext"].fill_null(-np.inf).to_numpy()))
    return g.with_columns(p_value=pl.Series(np.clip(p, _TINY, 1.0)), **extra).select(list(cols))


def own_rate_table(dec, y: str, *, where=None, bins: tuple[str, ...] = OWN_BASELINE_BINS, alpha: float = 0.01,
                   max_rate: float = 1 - 1e-6, also_out=None, posterior: bool = False):
    """The own rate ``r`` of ``y`` per (player, opponent, bin) of the decisions of ``dec`` selected by ``where``: the
    rate :func:`robust_own_baseline`'s second pass uses for the pair's expected count (the player's shrunk rate, a
    beta prior per bin, from the decisions against everyone else, the first pass's outlying opponents and
    ``also_out`` left out of the baseline). ``posterior``: also ``ra``, ``rb`` (its Beta posterior), ``k0``, ``n0``
    (see :func:`own_rates_per_decision`). ``dec`` may be counted cells (:data:`~detectors.stats._common.WEIGHT`):
    the table is the same. Returns player, opponent, the bins, r (and the posterior's columns), one row per
    (player, opponent, bin) with a selected decision; None when no decision is selected."""
    fp = _baseline_first_pass(dec, y, where, tuple(bins), alpha, max_rate)
    if fp is None:
        return None
    bins = list(bins)
    # the counts, priors and first-pass outliers of robust_own_baseline's test on the same selection
    _, pair, me, pri, out = fp
    out = out.select("player", "opponent")
    if also_out is not None and not also_out.is_empty():
        out = pl.concat([out, also_out.select("player", "opponent")]).unique(["player", "opponent"])
    out = out.with_columns(_o=pl.lit(True))
    pair = pair.join(out, on=["player", "opponent"], how="left").with_columns(pl.col("_o").fill_null(False))
    removed = pair.filter(pl.col("_o")).group_by(["player", *bins]).agg(rn=pl.col("n").sum(), rk=pl.col("k").sum())
    clean = me.join(removed, on=["player", *bins], how="left").with_columns(
        N=pl.col("N") - pl.col("rn").fill_null(0), K=pl.col("K") - pl.col("rk").fill_null(0)).drop("rn", "rk")
    t = pair.join(clean, on=["player", *bins]).join(pri, on=bins).with_columns(
        n0=(pl.col("N") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("n"))).clip(0),
        k0=(pl.col("K") - pl.when(pl.col("_o")).then(0).otherwise(pl.col("k"))).clip(0))
    return t.select("player", "opponent", *bins,
                    r=((pl.col("k0") + pl.col("pa")) / (pl.col("n0") + pl.col("pa") + pl.col("pb"))).clip(1e-6, max_rate),
                    *([(pl.col("k0") + pl.col("pa")).cast(pl.Float64).alias("ra"),
                       (pl.col("n0") - pl.col("k0") + pl.col("pb")).cast(pl.Float64).alias("rb"),
                       pl.col("k0").cast(pl.Float64), pl.col("n0").cast(pl.Float64)] if posterior else []))


def own_rates_per_decision(dec, y: str, *, where=None, bins: tuple[str, ...] = OWN_BASELINE_BINS,
                           side: str = "less", alpha: float = 0.01, max_rate: float = 1 - 1e-6, also_out=None,
                           posterior: bool = False, rates=None):
    """Each decision of ``dec`` (filtered by ``where``) with the acting player's own rate ``r`` of ``y`` in its bin.

    The rate is the one :func:`robust_own_baseline`'s second pass uses for the
    pair's expected count (:func:`own_rate_table`): the player's shrunk rate (beta prior per bin) from
    the decisions against everyone else, with the first pass's outlying
    opponents (and ``also_out``) left out of the baseline. Returns the
    decision columns with ``_y`` (0/1) and ``r`` added, for tests that need the
    decisions themselves (e.g. :func:`hand_passivity_test`).

    ``posterior``: also the rate's Beta posterior, ``ra`` = prior a + k0 and ``rb`` = prior b + n0 - k0 (``k0`` of
    ``n0`` decisions against everyone else in the bin; ``r`` is its mean), for tests that carry the baseline's uncertainty
    (:func:`hand_passivity_predictive`). ``rates``: the :func:`own_rate_table` of these arguments when already made
    (for example from counted cells, while ``dec`` holds some pairs' decisions only).
    """
    d = dec.filter(pl.col("sbin").is_not_null())
    if where is not None:
        d = d.filter(where)
    if d.is_empty() and rates is None:
        return d.with_columns(_y=pl.lit(0, pl.Int64), r=pl.lit(None, pl.Float64))
    d = d.with_columns(pl.col(y).cast(pl.Int64).alias("_y"))
    t = rates if rates is not None else own_rate_table(dec, y, where=where, bins=bins, alpha=alpha, max_rate=max_rate,
                                                       also_out=also_out, posterior=posterior)
    return d.join(t, on=["player", "opponent", *bins], how="left")


STREETS = ("preflop", "flop", "turn", "river")


def street_tests(dec, y: str, *, where=None, side: str = "less", streets: tuple[str, ...] = STREETS,
                 skew: bool = True, thin_below: float | None = None, forget: bool = False, **kw):
    """Per unordered pair, the own-baseline test of ``y`` made on each street apart, combined across the streets.

    Partners who spare each other on some streets only (the turn and river, say) show a deficit there and none
    elsewhere; one test pooled over every street dilutes it with the streets where they play normally. Here each
    street's decisions get their own test (:func:`robust_own_baseline` with ``where`` and the street, both
    directions pooled by :func:`pool_directions`), and the streets' p-values are combined by Fisher's method: the
    streets rest on disjoint decisions, so the p-values are independent under the null, and Fisher's combination
    keeps its power when the effect sits in one or two of them (Fisher, *Statistical Methods for Research
    Workers*, 1925, §21.1; Loughin, Comput. Stat. Data Anal. 2004, on its power for sparse effects).
    ``thin_below``: a street whose own baselines are thin (the thinner direction's decisions against others per
    decision against the partner, n0 / n, below this) is read as the two-sample comparison it is
    (:func:`detectors.stats.estimated_baseline_pvalue`) before the streets are combined (None: never).
    ``forget``: each street's selection memo dropped once its test is made (:func:`forget_selection`).
    ``kw``: the other arguments of :func:`robust_own_baseline` (bins, alpha, also_out, max_rate, ...).

    Returns player (<), opponent, ``st_p_value`` (Fisher over the streets tested), ``st_k`` (streets tested) and the
    street with the smallest p-value: ``st_street``, ``st_n``, ``st_observed``, ``st_expected``, ``st_p``, and each
    direction's z on that street (``st_dz`` the player's decisions aimed at the opponent, ``st_dz_r`` the
    opponent's; null where that direction was not tested); and each street's p-value, ``st_p_<street>`` (null where
    that street was not tested).
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "st_p_value": pl.Float64, "st_k": pl.UInt32,
            "st_street": pl.Utf8, "st_n": pl.Float64, "st_observed": pl.Float64, "st_expected": pl.Float64,
            "st_p": pl.Float64, "st_dz": pl.Float64, "st_dz_r": pl.Float64}
    parts = []
    for s in streets:
        cond = pl.col("street") == s
        d = robust_own_baseline(dec, y, where=cond if where is None else where & cond, side=side, **kw)
        if forget:
            forget_selection(dec, y, where=cond if where is None else where & cond, **kw)
        if d.is_empty():
            continue
        t = pool_directions(d, side=side, skew=skew)
        if thin_below is not None:
            lo, hi = pl.min_horizontal("player", "opponent"), pl.max_horizontal("player", "opponent")
            base = d.group_by(lo.alias("player"), hi.alias("opponent")).agg(
                _b=(pl.col("n0").cast(pl.Float64) / pl.col("n").cast(pl.Float64).clip(1.0)).min(), _d=pl.len())
            t = t.join(base, on=["player", "opponent"], how="left")
            b, pv = t["_b"].to_numpy().astype(float), t["p_value"].to_numpy().astype(float)
            thin = (t["_d"].fill_null(0).to_numpy() == 2) & (b < thin_below)
            t = t.with_columns(p_value=pl.Series(np.where(thin, estimated_baseline_pvalue(pv, b), pv)))
        # each direction's z on this street (the side's own decisions): the mutual rule may read the best street's
        lo = pl.col("player") < pl.col("opponent")
        dz = d.select("player", "opponent", "z")
        t = t.drop("dz", "dz_r", strict=False).join(dz.filter(lo).rename({"z": "dz"}), on=["player", "opponent"], how="left").join(
            dz.filter(~lo).select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                                  pl.col("z").alias("dz_r")), on=["player", "opponent"], how="left")
        parts.append(t.select("player", "opponent", "n", "observed", "expected", "p_value", "dz", "dz_r",
                              street=pl.lit(s)))
    if not parts:
        return pl.DataFrame(schema={**cols, **{f"st_p_{s}": pl.Float64 for s in streets}})
    long = pl.concat(parts).filter(pl.col("p_value").is_not_null() & pl.col("p_value").is_not_nan())
    g = long.group_by("player", "opponent").agg(
        _x=(-2.0 * pl.col("p_value").clip(_TINY, 1.0).log()).sum(), st_k=pl.len().cast(pl.UInt32),
        st_street=pl.col("street").sort_by("p_value", "street").first(),
        st_n=pl.col("n").sort_by("p_value", "street").first(),
        st_observed=pl.col("observed").sort_by("p_value", "street").first(),
        st_expected=pl.col("expected").sort_by("p_value", "street").first(),
        st_p=pl.col("p_value").min(),
        st_dz=pl.col("dz").sort_by("p_value", "street").first(),
        st_dz_r=pl.col("dz_r").sort_by("p_value", "street").first())
    p = _st.chi2.sf(g["_x"].to_numpy(), 2 * g["st_k"].to_numpy().astype(float))
    g = g.with_columns(st_p_value=pl.Series(np.clip(p, _TINY, 1.0))).select(list(cols))
    # each street's own p-value (``st_p_<street>``, null where that street was not tested): other combinations
    for s in streets:
        one = long.filter(pl.col("street") == s).select("player", "opponent", pl.col("p_value").alias(f"st_p_{s}"))
        g = g.join(one, on=["player", "opponent"], how="left")
    return g.sort("player", "opponent")
