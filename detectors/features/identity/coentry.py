"""Tournaments entered together: the shared count against a taste-weighted configuration-model null."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


def tournament_entries(con: duckdb.DuckDBPyConnection) -> str:
    """SQL (a sub-query) for (account, tournament_id) entries: registrations not
    withdrawn, and every account seated in a tournament hand."""
    return """
    (SELECT account, tournament_id FROM (
        SELECT account, tournament_id,
               arg_max(kind, ts) AS last_kind
        FROM registrations GROUP BY ALL
     ) WHERE last_kind = 'register'
     UNION
     SELECT s.player AS account, h.tournament_id
     FROM seats s JOIN hands h USING (hand_id)
     WHERE h.is_tournament AND h.tournament_id IS NOT NULL)
    """


def entry_pools(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """(tournament_id, pool): the connected components of the bipartite graph of
    accounts and the tournaments they entered (:func:`tournament_entries`).

    Two tournaments are in one pool when a chain of shared entrants links them.
    A ring-fenced market (a country's players who only meet each other, or the
    renamed copies of :mod:`benchmarks.detect_bench`'s replica) is a pool of its
    own: its players could never have entered the other pools' events, so the
    co-entry null must not spread their entries over them. Without pools the
    configuration model of :func:`co_entries` counts the other pools'
    events as chances missed (docs/measurements.md, 2026-12-06). A generated population is one pool.
    Components by :func:`scipy.sparse.csgraph.connected_components`.
    """
    e = con.sql(f"SELECT DISTINCT account, tournament_id FROM {tournament_entries(con)}").pl()
    if e.height == 0:
        return pl.DataFrame(schema={"tournament_id": pl.Utf8, "pool": pl.Int64})
    acc = e["account"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    tid = e["tournament_id"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    na = int(acc.max()) + 1
    n = na + int(tid.max()) + 1
    graph = coo_matrix((np.ones(len(acc)), (acc, na + tid)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    return (e.select("tournament_id").with_columns(pool=pl.Series(label[na + tid], dtype=pl.Int64))
            .unique("tournament_id"))


# pseudo-entries at the null's knockout share that shrink an account's format taste (co_entries); how the value
# was chosen: docs/measurements.md, 2026-12-06
KNOCKOUT_PSEUDO = 6.0


# The co-entry null of :func:`co_entries`: entries ``e``, each tournament's (format, day, pool) cell ``f`` with its
# field size and knockout flag, the cells' moments ``mom``, each account's format taste ``tst`` and the pairs'
# tastes ``tp`` (``$pseudo``: the taste's pseudo-entries; ``{entries}``: :func:`tournament_entries`)
COENTRY_CELLS_SQL = """
    WITH e AS {entries},
    sz AS (SELECT tournament_id, count(*) AS sz FROM e GROUP BY 1),
    tday AS (SELECT tournament_id, min(started_at)::DATE AS day FROM hands
             WHERE tournament_id IS NOT NULL GROUP BY 1),
    kot AS (SELECT tournament_id, bool_or(bounty_kind <> 'none' OR coalesce(bounty, 0) > 0) AS ko
            FROM tournaments GROUP BY 1),
    fmt AS (SELECT sz.tournament_id, sz.sz, CAST(coalesce(kot.ko, false) AS INTEGER) AS ko,
                   (CASE WHEN sz.sz <= 10 THEN 'sng' ELSE 'mtt' END) || coalesce(CAST(tday.day AS VARCHAR), '')
                   || '/' || coalesce(CAST(po.pool AS VARCHAR), '') AS f
            FROM sz LEFT JOIN tday USING (tournament_id) LEFT JOIN _rb_pools po USING (tournament_id)
            LEFT JOIN kot USING (tournament_id)),
    mom AS (SELECT f, sum(sz) FILTER (WHERE ko = 0)::DOUBLE AS s1_fr, sum(sz) FILTER (WHERE ko = 1)::DOUBLE AS s1_ko,
                   sum(sz * sz) FILTER (WHERE ko = 0)::DOUBLE AS s2_fr, sum(sz * sz) FILTER (WHERE ko = 1)::DOUBLE AS s2_ko
            FROM fmt GROUP BY 1),
    -- an account's taste: its knockout share in cells offering both kinds against the null's share rho,
    -- shrunk by $pseudo entries at rho, as an odds ratio (1 without knockouts, or with pseudo < 0)
    tst AS (SELECT account,
                   CASE WHEN $pseudo < 0 OR count(*) = 0 THEN 1.0 ELSE
                   ((sum(ko) + $pseudo * avg(rho)) / (count(*) - sum(ko) + $pseudo * (1 - avg(rho))))
                   / (avg(rho) / (1 - avg(rho))) END AS taste
            FROM (SELECT e.account, fmt.ko, m.s1_ko / (m.s1_ko + m.s1_fr) AS rho
                  FROM e JOIN fmt USING (tournament_id) JOIN mom m USING (f)
                  WHERE m.s1_ko > 0 AND m.s1_fr > 0)
            GROUP BY 1),
    tp AS (SELECT p.a, p.b, coalesce(ta.taste, 1.0) AS taste_a, coalesce(tb.taste, 1.0) AS taste_b
           FROM _rb_pairs p LEFT JOIN tst ta ON ta.account = p.a LEFT JOIN tst tb ON tb.account = p.b),"""

# after COENTRY_CELLS_SQL: per pair the shared tournaments, each one's entries and the expected shared count
COENTRY_COUNTS_SQL = """
    acc AS (SELECT e.account, fmt.f, count(*) AS n FROM e JOIN fmt USING (tournament_id) GROUP BY ALL),
    expct AS (
      SELECT p.a, p.b,
             sum(xa.n * xb.n * (coalesce(m.s2_fr, 0) + p.taste_a * p.taste_b * coalesce(m.s2_ko, 0))
                 / ((coalesce(m.s1_fr, 0) + p.taste_a * coalesce(m.s1_ko, 0))
                    * (coalesce(m.s1_fr, 0) + p.taste_b * coalesce(m.s1_ko, 0)))) AS exp_shared_t
      FROM tp p JOIN acc xa ON xa.account = p.a
      JOIN acc xb ON xb.account = p.b AND xb.f = xa.f JOIN mom m ON m.f = xa.f
      GROUP BY ALL
    ),
    cnt AS (SELECT account, count(*) AS nt FROM e GROUP BY 1),
    shared AS (
      SELECT p.a, p.b,
        list(DISTINCT x.tournament_id ORDER BY x.tournament_id) FILTER (WHERE y.account IS NOT NULL) AS shared_tournaments,
        coalesce(any_value(ca.nt), 0) AS n_tourn_a, coalesce(any_value(cb.nt), 0) AS n_tourn_b,
        count(y.account) AS n_shared_t
      FROM _rb_pairs p
      LEFT JOIN e x ON x.account = p.a
      LEFT JOIN e y ON y.account = p.b AND y.tournament_id = x.tournament_id
      LEFT JOIN cnt ca ON ca.account = p.a LEFT JOIN cnt cb ON cb.account = p.b
      GROUP BY p.a, p.b
    )
    SELECT shared.*, coalesce(expct.exp_shared_t, 0.0) AS exp_shared_t, tp.taste_a, tp.taste_b
    FROM shared LEFT JOIN expct USING (a, b) LEFT JOIN tp USING (a, b)
    """

# after COENTRY_CELLS_SQL: per pair and cell, each account's entries and the taste-weighted share of the
# cell's entry mass its events hold (the conditional test's cells)
COENTRY_SHARES_SQL = """
    acc AS (SELECT e.account, fmt.f, count(*) AS n,
                   coalesce(sum(fmt.sz) FILTER (WHERE fmt.ko = 0), 0)::DOUBLE AS m_fr,
                   coalesce(sum(fmt.sz) FILTER (WHERE fmt.ko = 1), 0)::DOUBLE AS m_ko
            FROM e JOIN fmt USING (tournament_id) GROUP BY ALL)
    SELECT p.a, p.b, xa.f, xa.n AS n_a, xb.n AS n_b,
           least((xa.m_fr + p.taste_b * xa.m_ko)
                 / (coalesce(m.s1_fr, 0) + p.taste_b * coalesce(m.s1_ko, 0)), 1.0) AS share_a,
           least((xb.m_fr + p.taste_a * xb.m_ko)
                 / (coalesce(m.s1_fr, 0) + p.taste_a * coalesce(m.s1_ko, 0)), 1.0) AS share_b
    FROM tp p JOIN acc xa ON xa.account = p.a
    JOIN acc xb ON xb.account = p.b AND xb.f = xa.f JOIN mom m ON m.f = xa.f
    """


def co_entries(con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame, *,
               taste_pseudo: float | None = KNOCKOUT_PSEUDO) -> pl.DataFrame:
    """For each pair (``a``, ``b``): the tournaments both entered and how improbable their number is.

    Adds ``shared_tournaments`` (list), ``n_tourn_a``, ``n_tourn_b``,
    ``n_shared_t``, ``exp_shared_t``, ``p_coentry``, ``taste_a`` and
    ``taste_b``: the shared count under a configuration-model null (entries
    land in events in proportion to their field size, per format, day and
    pool (:func:`entry_pools`)), so regulars of big fields and of the same days
    are expected to meet; conditional on one account's own events
    (:func:`_conditional_coentry_p`: a sum of binomials over the cells, which
    knows the shared count cannot exceed either account's entries), the
    unconditional Poisson tail kept as ``p_coentry_poisson``. NaN where either
    account entered nothing.

    **Format taste.** Honest bounty hunters enter nearly every knockout; two of
    them meet far more often than field sizes alone expect. The null is
    therefore *taste-weighted*: within a cell an account's entry lands in event
    ``j`` with probability proportional to ``size_j * taste ** ko_j`` (``ko_j``:
    the event pays bounties, ``tournaments.bounty_kind``), a degree-corrected
    configuration model with one covariate (Karrer & Newman, Phys. Rev. E 83,
    016107, 2011), the taste a conditional-logit odds ratio (McFadden 1974).
    ``taste`` (``taste_a``, ``taste_b``) is the odds of the account's knockout
    share among its entries in cells that offer both kinds, against the odds of
    the share the untasted null expects there (``rho``, the knockout share of
    those cells' entry mass, averaged over its entries), the share shrunk
    towards ``rho`` by ``taste_pseudo`` pseudo-entries (empirical-Bayes
    shrinkage, Efron & Morris 1975): a handful of entries is no taste, a
    season of knockouts is. With every taste 1 (``taste_pseudo=None``, or no
    knockouts) it is the plain configuration model. The taste is estimated
    from the account's entries, shared ones included, so a pair that always
    meets in freezeouts reads as two freezeout players too: the pseudo-count
    is that price's bound.
    """
    pairs = pairs.select("a", "b")
    if pairs.height == 0:
        return pairs.with_columns(
            shared_tournaments=pl.lit([], pl.List(pl.Utf8)), n_tourn_a=pl.lit(0, pl.Int64),
            n_tourn_b=pl.lit(0, pl.Int64), n_shared_t=pl.lit(0, pl.Int64), exp_shared_t=pl.lit(0.0),
            p_coentry=pl.lit(None, pl.Float64), p_coentry_poisson=pl.lit(None, pl.Float64),
            taste_a=pl.lit(1.0), taste_b=pl.lit(1.0))
    # co-entry null (a configuration model per format, day and pool): an entry
    # of account a on a day lands in tournament j with probability size_j /
    # sum(size) among that day's events of that format in a's pool (sit-and-go:
    # at most 10 entrants, else multi-table; pools: entry_pools), so the
    # expected shared entries are sum over (format, day, pool) of
    # n_a * n_b * sum(size^2) / sum(size)^2: big fields, regulars who enter
    # everything and players of the same days are expected to meet. With format
    # tastes t_a, t_b the knockouts' sizes are weighted by the taste:
    # n_a n_b (s2_fr + t_a t_b s2_ko) / ((s1_fr + t_a s1_ko) (s1_fr + t_b s1_ko)).
    # entries e and each tournament's (format, day) cell f with its field size sz and knockout flag ko
    pseudo = -1.0 if taste_pseudo is None else float(taste_pseudo)
    cells = COENTRY_CELLS_SQL.replace("{entries}", tournament_entries(con))  # fixed SQL, no input text
    q_t = cells + COENTRY_COUNTS_SQL
    con.register("_rb_pairs", pairs)
    con.register("_rb_pools", entry_pools(con))
    tt = con.sql(q_t, params={"pseudo": pseudo}).pl()
    # per pair and (format, day) cell: each account's entries there and the share of the
    # cell's entry mass its events hold, each weighted by the other's taste (the chance one
    # entry of the other lands in them): the conditional co-entry test
    q_cells = cells + COENTRY_SHARES_SQL
    cells = con.sql(q_cells, params={"pseudo": pseudo}).pl()
    con.unregister("_rb_pairs")
    con.unregister("_rb_pools")
    out = pairs.join(tt, on=["a", "b"], how="left")
    k = out["n_shared_t"].fill_null(0).to_numpy()
    lam = out["exp_shared_t"].fill_null(0.0).to_numpy()
    na = out["n_tourn_a"].fill_null(0).to_numpy()
    nb = out["n_tourn_b"].fill_null(0).to_numpy()
    p_pois = np.where((na > 0) & (nb > 0), sps.poisson.sf(k - 1, np.maximum(lam, 1e-9)), np.nan)
    p_cond = _conditional_coentry_p(out.select("a", "b"), k, cells)
    # the conditional test where it could be made (both accounts entered events of one cell)
    p = np.where(np.isnan(p_cond), p_pois, p_cond)
    p = np.where((na > 0) & (nb > 0), p, np.nan)
    return out.with_columns(
        shared_tournaments=pl.col("shared_tournaments").fill_null(pl.lit([], pl.List(pl.Utf8))),
        p_coentry=pl.Series(p), p_coentry_poisson=pl.Series(p_pois),
        taste_a=pl.col("taste_a").fill_null(1.0), taste_b=pl.col("taste_b").fill_null(1.0),
    )


def _binom_sum_sf_many(k: np.ndarray, entry_p: list[np.ndarray], chunk: int = 20_000) -> np.ndarray:
    """P(X_i >= k_i) for each i, X_i the number of successes among independent
    Bernoulli trials with probabilities ``entry_p[i]`` (a Poisson-binomial), by the
    textbook recursion over trials, vectorised over i, the states above max(k) merged
    into one (only the tail is needed)."""
    n = len(entry_p)
    out = np.ones(n)
    if n == 0:
        return out
    if n > chunk:  # bounded memory: pairs in blocks
        for c0 in range(0, n, chunk):
            out[c0:c0 + chunk] = _binom_sum_sf_many(np.asarray(k)[c0:c0 + chunk], entry_p[c0:c0 + chunk], chunk)
        return out
    kk = np.asarray(k, dtype=int)
    K = int(max(kk.max(), 1))
    lens = np.array([len(x) for x in entry_p])
    T = int(lens.max()) if n else 0
    P = np.zeros((n, max(T, 1)))
    for i, x in enumerate(entry_p):
        P[i, :len(x)] = x
    dist = np.zeros((n, K + 1))
    dist[:, 0] = 1.0
    for j in range(T):
        q = P[:, j:j + 1]
        top = dist[:, K] + dist[:, K - 1] * q[:, 0]
        dist[:, 1:] = dist[:, 1:] * (1.0 - q) + dist[:, :-1] * q
        dist[:, 0] *= 1.0 - q[:, 0]
        dist[:, K] = top
    cum = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]  # cum[:, m] = P(X >= m), m <= K
    ok = kk > 0
    out[ok] = np.clip(cum[np.flatnonzero(ok), kk[ok]], 0.0, 1.0)
    return out


def _conditional_coentry_p(pairs: pl.DataFrame, k: np.ndarray, cells: pl.DataFrame) -> np.ndarray:
    """Co-entry p-value conditional on one account's own entries.

    Under the configuration model (an entry lands in an event of its format and day in
    proportion to the event's field size) and independence of the two accounts, given
    the events ``a`` entered, each of ``b``'s entries in a (format, day) cell lands in
    one of ``a``'s events with probability ``share_a`` (the share of the cell's entry
    mass that ``a``'s events hold), so the shared count is a sum of binomials over the
    cells (a Poisson-binomial; Wang, Statistica Sinica 3, 1993). Drawing events without
    replacement only lowers the chance of many hits, so the binomial tail is
    conservative. The Poisson tail with the unconditional mean ignores that the shared
    count cannot exceed either account's entries: two accounts with 7 entries each, all
    7 shared, where 4 were expected, have Poisson p 0.11 but conditional p near 0.02.
    Both directions (given ``a``'s events, and given ``b``'s) are valid; the larger p
    is kept, so no correction is needed. NaN where the pair shares no cell."""
    out = np.full(pairs.height, np.nan)
    if cells.height == 0:
        return out
    idx = {(a, b): i for i, (a, b) in enumerate(pairs.iter_rows())}
    c = cells.with_columns(i=pl.Series([idx.get((a, b), -1) for a, b in zip(cells["a"], cells["b"])],
                                       dtype=pl.Int64)).filter(pl.col("i") >= 0).sort("i")
    if c.height == 0:
        return out
    ii = c["i"].to_numpy()
    na, nb = c["n_a"].to_numpy().astype(int), c["n_b"].to_numpy().astype(int)
    sa, sb = c["share_a"].to_numpy(), c["share_b"].to_numpy()
    bounds = np.flatnonzero(np.r_[True, ii[1:] != ii[:-1], True])
    who = ii[bounds[:-1]]
    # one probability per entry: b's entries against a's events, and a's against b's
    b_on_a = [np.repeat(sa[s0:s1], nb[s0:s1]) for s0, s1 in zip(bounds[:-1], bounds[1:])]
    a_on_b = [np.repeat(sb[s0:s1], na[s0:s1]) for s0, s1 in zip(bounds[:-1], bounds[1:])]
    kk = np.asarray(k, dtype=int)[who]
    out[who] = np.maximum(_binom_sum_sf_many(kk, b_on_a), _binom_sum_sf_many(kk, a_on_b))
    return out
