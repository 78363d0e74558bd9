"""The group test: cliques of the co-sit-out graph against the population's own simulated sit-outs.

A group of three or four accounts that sits out together, once in one event and again in another, leaves each
of its pairs only one or two coincidences: evidence that the pair tests split and that the false-discovery
control over thousands of pairs then holds under the line. The group test looks at the group at once.

Method
------
1. **The co-sit-out graph.** Accounts are joined by an edge when two of their starts coincide (within the sum of
   their timing tolerances, as in the pair test); each edge carries the pair's coincidence p-value over every
   event both sat out in (the marked Poisson test per event, Fisher's method over the events:
   :func:`pair_pvalues`, the pair test of the detector recomputed from the start times alone).
2. **Groups and their statistic.** Every maximal clique of three or more accounts (Bron–Kerbosch,
   :func:`networkx.find_cliques`) is a candidate; its statistic is ``-log10`` of Fisher's combination of its
   edges' p-values (``2 m`` degrees of freedom for ``m`` edges). The edges share accounts, so this is a score,
   not a p-value: the null below calibrates it.
3. **The null: the population's own sit-outs at that moment.** Each account keeps its number of sit-outs in each
   event, its span in the event and each sit-out's length in hands; each start is moved to a time drawn from the
   event's other accounts' starts (leave-own-account-out), smoothed by a Gaussian kernel of ``bandwidth_s``
   seconds, within the account's span (uniform over the span where no other start falls in it). A moment of
   the event when many players stepped away (a table break, a disconnect of several players, the bubble) keeps
   its rate in the null, so coincidences there are no evidence; only the same accounts meeting again and again
   beyond that rate are. ``n_null`` populations are drawn and the whole procedure (graph, cliques, statistic)
   is run on each.
4. **Many groups looked at.** The q-value of an observed group is the permutation estimate of the
   false-discovery rate of flagging every group with a statistic at least as large (Storey & Tibshirani,
   PNAS 2003, the SAM estimate with pi0 = 1): the mean count of null groups beyond the threshold (one added, as
   Phipson & Smyth, SAGMB 2010, so that no q is 0) over the count of observed groups beyond it, made monotone.
"""

from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.coordinated_sitout.null import _end_mark, _marked_poisson_sf


def pair_lambdas(x: pl.DataFrame, spans: pl.DataFrame) -> pl.DataFrame:
    """Every pair of accounts with a start in a shared event, per event: the expected number of coincidences
    under each account's own rate (``lam``, as the pair test's) and whether every start of both has a known
    length in hands (``known``).

    Parameters
    ----------
    x : the kept starts (``account``, ``tournament_id``, ``tol``, ``run_hands``, ``dur_s``).
    spans : each account's span in each event (``account``, ``tournament_id``, ``t0``, ``t1`` in epoch seconds).

    Returns
    -------
    One row per (``a``, ``b``, ``tournament_id``), ``a < b``."""
    n = (x.group_by("account", "tournament_id")
         .agg(n=pl.len(), sum_tol=pl.col("tol").sum(),
              known=((pl.col("run_hands") > 0) | pl.col("dur_s").is_not_null()).all())
         .join(spans.select("account", "tournament_id", "t0", "t1"), on=["account", "tournament_id"], how="left"))
    p = n.join(n, on="tournament_id", suffix="_b").filter(pl.col("account") < pl.col("account_b"))
    overlap = pl.max_horizontal(pl.min_horizontal("t1", "t1_b") - pl.max_horizontal("t0", "t0_b"), pl.lit(60.0))
    return p.select(
        a=pl.col("account"), b=pl.col("account_b"), tournament_id=pl.col("tournament_id"),
        lam=(2 * (pl.col("n_b") * pl.col("sum_tol") + pl.col("n") * pl.col("sum_tol_b")) / overlap.fill_null(60.0)),
        known=pl.col("known") & pl.col("known_b"),
    )


def pair_pvalues(x: pl.DataFrame, lam: pl.DataFrame, run_hands: np.ndarray, *, has_events: bool,
                 length_mark: bool, durations: np.ndarray | None = None) -> pl.DataFrame:
    """The pair coincidence test of every pair whose starts coincide, for one or many sets of start times.

    Parameters
    ----------
    x : starts with ``rep`` (the set: 0 the observed, 1.. simulated), ``account``, ``tournament_id``, ``t``
        (epoch seconds), ``tol``, ``res``, ``run_hands`` and ``dur_s`` (a platform sit-out's length in seconds).
    lam : :func:`pair_lambdas` of the starts (it does not depend on their times).
    run_hands : the population's run lengths (the length mark's reference). durations : its platform sit-out
        lengths in seconds (the return mark's reference, :func:`detectors.coordinated_sitout.null._end_mark`).
    has_events, length_mark : as the detector's: two marks (closeness and equal length) where every start of both
        accounts in the event has a known length, or everywhere without platform events.

    Returns
    -------
    One row per (``rep``, ``a``, ``b``) with ``n_co`` (coincidences), ``events`` (where they coincided) and ``p`` (Fisher's combination of the
    per-event marked Poisson p-values over every event both sat out in, p = 1 where they did not coincide)."""
    s = x.select("rep", "account", "tournament_id", "t", "tol", "res", "run_hands", "dur_s")
    # a band join: starts within the widest window fall in the same time bucket or a neighbouring one
    width = 2 * float(s["tol"].max() or 1.0)
    s = s.with_columns(bucket=(pl.col("t") / width).floor().cast(pl.Int64))
    right = s.with_columns(bucket=pl.concat_list(pl.col("bucket") - 1, pl.col("bucket"), pl.col("bucket") + 1)).explode(
        "bucket")
    co = (s.join(right, on=["rep", "tournament_id", "bucket"], suffix="_b")
          .filter((pl.col("account") < pl.col("account_b"))
                  & ((pl.col("t_b") - pl.col("t")).abs() <= pl.col("tol") + pl.col("tol_b")))
          .with_columns(u=(pl.max_horizontal((pl.col("t_b") - pl.col("t")).abs(), pl.col("res"), pl.col("res_b"))
                           / (pl.col("tol") + pl.col("tol_b"))).clip(upper_bound=1.0)))
    if co.height == 0:
        return pl.DataFrame(schema={"rep": pl.Int64, "a": pl.Utf8, "b": pl.Utf8, "n_co": pl.UInt32,
                                    "events": pl.List(pl.Utf8), "p": pl.Float64})
    two = (not has_events) or length_mark
    pop_d = np.array([]) if durations is None else durations
    u_len = _end_mark(co["run_hands"].to_numpy(), co["run_hands_b"].to_numpy(), run_hands,
                      co["t"].to_numpy(), co["dur_s"].cast(pl.Float64).to_numpy(), co["t_b"].to_numpy(),
                      co["dur_s_b"].cast(pl.Float64).to_numpy(), pop_d,
                      np.maximum(co["res"].to_numpy(), co["res_b"].to_numpy())) if two else 1.0
    co = co.with_columns(u_len=pl.Series(np.broadcast_to(u_len, (co.height,)).astype(float)))
    ev = (co.group_by("rep", a="account", b="account_b", tournament_id="tournament_id")
          .agg(x=pl.len(), s1=(-pl.col("u").log()).sum(), s2=(-pl.col("u").log() - pl.col("u_len").log()).sum())
          .join(lam, on=["a", "b", "tournament_id"], how="left"))
    lam_ = ev["lam"].fill_null(1e-12).to_numpy()
    x_ = ev["x"].to_numpy()
    # the Poisson sum's terms beyond mean + 10 sd + 20 are below double precision
    k_max = int(min(200, np.ceil(lam_.max() + 10 * np.sqrt(lam_.max()) + 20)))
    p1 = _marked_poisson_sf(x_, ev["s1"].to_numpy(), lam_, k_max=k_max, marks=1)
    p2 = _marked_poisson_sf(x_, ev["s2"].to_numpy(), lam_, k_max=k_max, marks=2) if two else p1
    known = ev["known"].fill_null(False).to_numpy()
    p_ev = p2 if not has_events else np.where(known, p2, p1)
    n_shared = lam.group_by("a", "b").agg(n_shared=pl.len())
    fish = (ev.with_columns(p_ev=pl.Series(p_ev)).group_by("rep", "a", "b")
            .agg(n_co=pl.col("x").sum().cast(pl.UInt32), stat=-2 * pl.col("p_ev").log().sum(),
                 events=pl.col("tournament_id").sort())
            .join(n_shared, on=["a", "b"], how="left"))
    p = sps.chi2.sf(fish["stat"].to_numpy(), 2 * fish["n_shared"].fill_null(1).to_numpy())
    return fish.select("rep", "a", "b", "n_co", "events").with_columns(p=pl.Series(p))


def simulate_starts(x: pl.DataFrame, spans: pl.DataFrame, *, n_null: int, bandwidth_s: float,
                    rng: np.random.Generator, tries: int = 30) -> pl.DataFrame:
    """``n_null`` simulated sets of the starts ``x`` (``rep`` 1..n_null): each start moved to a time drawn from
    the event's other accounts' starts plus Gaussian noise of ``bandwidth_s`` seconds, within the account's span
    (rejection, ``tries`` rounds; then uniform over the span); counts per account and event, tolerances and run
    lengths kept.

    Parameters
    ----------
    x : the kept starts (``account``, ``tournament_id``, ``t``, ...). spans : as :func:`pair_lambdas`.

    Returns
    -------
    ``x`` stacked ``n_null`` times with ``rep`` and the simulated ``t``."""
    x = x.join(spans.select("account", "tournament_id", "t0", "t1"), on=["account", "tournament_id"], how="left")
    x = x.with_columns(t0=pl.min_horizontal(pl.col("t0").fill_null(pl.col("t")), pl.col("t")),
                       t1=pl.max_horizontal(pl.col("t1").fill_null(pl.col("t")), pl.col("t"))).sort("tournament_id", "t", "account")
    tid = x["tournament_id"].to_numpy()
    acc = x["account"].to_numpy()
    t = x["t"].to_numpy().astype(float)
    t0, t1 = x["t0"].to_numpy().astype(float), x["t1"].to_numpy().astype(float)
    n = x.height
    bounds = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True])
    size = np.diff(bounds)
    first = np.tile(np.repeat(bounds[:-1], size), n_null)
    cnt = np.tile(np.repeat(size, size), n_null)
    row = np.tile(np.arange(n), n_null)  # the start each draw replaces, over every simulated set at once
    new = np.full(row.size, np.nan)
    todo = np.arange(row.size)
    for _ in range(tries):
        if todo.size == 0:
            break
        j = first[todo] + np.floor(rng.random(todo.size) * cnt[todo]).astype(int)
        cand = t[j] + bandwidth_s * rng.standard_normal(todo.size)
        i = row[todo]
        ok = (acc[j] != acc[i]) & (cand >= t0[i]) & (cand <= t1[i])
        new[todo[ok]] = cand[ok]
        todo = todo[~ok]
    i = row[todo]
    new[todo] = t0[i] + rng.random(todo.size) * (t1[i] - t0[i])
    reps = x[row].with_columns(rep=pl.Series(np.repeat(np.arange(1, n_null + 1), n)), t=pl.Series(new))
    return reps.drop("t0", "t1")


def _fisher_stat(ps: np.ndarray) -> float:
    """-log10 of Fisher's combination of ``ps``."""
    chi = -2 * np.log(np.maximum(ps, 1e-300)).sum()
    return float(-np.log10(max(sps.chi2.sf(chi, 2 * ps.size), 1e-300)))


def clique_stats(pairs: pl.DataFrame, min_size: int = 3, min_events: int = 2, max_core: int = 8) -> pl.DataFrame:
    """The groups of each ``rep``'s co-sit-out graph (edges: the pairs of ``pairs``, with their ``p`` and
    ``events``): for every maximal clique of ``min_size`` or more accounts, its core, the sub-clique of at least
    ``min_size`` accounts each of whom coincided with the others in at least ``min_events`` distinct events and whose statistic
    (-log10 of Fisher's combination of its edges' ``p``) is largest. An account that met the group once by chance
    weakens the combination and is left out; a clique met at one moment only (a table break, a disconnect of
    several players) is no group. Cliques above ``max_core`` accounts are taken whole.

    Returns one row per distinct core: ``rep``, ``accounts`` (sorted), ``n_edges``, ``n_events``, ``stat``."""
    rows: dict[tuple[int, tuple[str, ...]], tuple[int, int, float]] = {}
    by_rep: dict[int, dict[tuple[str, str], tuple[float, set[str]]]] = {}
    for rep, a, b, p, ev in zip(*(pairs[c].to_list() for c in ("rep", "a", "b", "p", "events"))):
        by_rep.setdefault(rep, {})[(a, b)] = (p, set(ev))
    for rep, edge in by_rep.items():
        graph = nx.Graph(list(edge))
        for clique in nx.find_cliques(graph):
            if len(clique) < min_size:
                continue
            members = sorted(clique)
            subsets = ([members] if len(members) > max_core else
                       [list(c) for k in range(min_size, len(members) + 1) for c in combinations(members, k)])
            best = None
            for sub in subsets:
                es = [edge[e] for e in combinations(sub, 2)]
                n_ev = len(set().union(*(ev for _, ev in es)))
                # every member met the others in min_events events (the group's own, not one chance meeting)
                if n_ev < min_events or any(len(set().union(*(edge[tuple(sorted((m, o)))][1] for o in sub if o != m)))
                                            < min_events for m in sub):
                    continue
                st = _fisher_stat(np.array([p for p, _ in es]))
                if best is None or st > best[0]:
                    best = (st, sub, n_ev)
            if best is not None:
                m = len(best[1])
                rows[(int(rep), tuple(best[1]))] = (m * (m - 1) // 2, best[2], best[0])
    return pl.DataFrame([(rep, list(acc), n, ne, st) for (rep, acc), (n, ne, st) in rows.items()],
                        schema={"rep": pl.Int64, "accounts": pl.List(pl.Utf8), "n_edges": pl.Int64,
                                "n_events": pl.Int64, "stat": pl.Float64}, orient="row")


def empirical_qvalues(observed: np.ndarray, null: np.ndarray, n_null: int) -> np.ndarray:
    """Permutation estimates of the false-discovery rate of flagging every observed statistic at least as large:
    (1 + null statistics >= t) / (n_null + 1) over the observed ones >= t, made monotone (Storey & Tibshirani 2003,
    pi0 = 1).

    Parameters
    ----------
    observed : the observed groups' statistics. null : every simulated group's statistic, over ``n_null`` sets.

    Returns
    -------
    q-values, aligned with ``observed``, at most 1."""
    obs = np.asarray(observed, dtype=float)
    if obs.size == 0:
        return obs
    nul = np.sort(np.asarray(null, dtype=float))
    order = np.argsort(-obs, kind="stable")
    s = obs[order]
    v = (1 + nul.size - np.searchsorted(nul, s, side="left")) / (n_null + 1)
    # ties: the count of observed statistics >= t is the last index of t's run
    r = np.searchsorted(-s, -s, side="right")
    fdr = np.minimum(1.0, v / r)
    q_sorted = np.minimum.accumulate(fdr[::-1])[::-1]
    q = np.empty_like(q_sorted)
    q[order] = q_sorted
    return q


def null_flag_rate(x: pl.DataFrame, spans: pl.DataFrame, run_hands: np.ndarray, *, n_obs: int, n_null: int,
                   bandwidth_s: float, min_events: int, alpha: float, rng: np.random.Generator, has_events: bool,
                   length_mark: bool, durations: np.ndarray | None = None) -> dict[str, float]:
    """The group test under its own null: ``n_obs + n_null`` simulated populations of the starts ``x``; each of
    the first ``n_obs`` taken as observed and its groups' q-values estimated from the last ``n_null``.

    Returns
    -------
    ``groups_per_population`` (simulated groups, mean), ``populations_flagged`` (the share of the ``n_obs`` with a
    group at q <= ``alpha``: under the global null, the false-discovery rate) and ``groups_flagged`` (their count)."""
    lam = pair_lambdas(x, spans)
    sim = simulate_starts(x, spans, n_null=n_obs + n_null, bandwidth_s=bandwidth_s, rng=rng)
    cs = clique_stats(pair_pvalues(sim, lam, run_hands, has_events=has_events, length_mark=length_mark,
                                   durations=durations),
                      min_events=min_events)
    null = cs.filter(pl.col("rep") > n_obs)["stat"].to_numpy()
    obs = cs.filter(pl.col("rep") <= n_obs)
    flagged = [int((empirical_qvalues(g["stat"].to_numpy(), null, n_null) <= alpha).sum())
               for _, g in obs.group_by("rep")]
    return {"groups_per_population": cs.height / (n_obs + n_null),
            "populations_flagged": sum(f > 0 for f in flagged) / n_obs, "groups_flagged": float(sum(flagged))}
