"""The presence test: a player's preflop continuations with a partner dealt in against the same player's own
rate without the partner, in like cells of the same hour, thin cells shrunk towards the population moved by the
player's own looseness, table-mates of a partner explained away greedily."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.features import gameplay as gp


PRESENCE_SQL = """
-- every preflop decision facing a bet (fold / call / raise), with the decider's stack, price and hole cards
-- (read by hand ranges: gameplay.by_hand_ranges)
WITH {part_tables} pre AS (
    SELECT a.hand_id, a.seq, a.player, a.action <> 'fold' AS cont, h.tournament_id, h.game,
           a.to_call::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS to_call_bb,
           s.stack_start::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS stack_bb,
           h.is_tournament AS tour, h.n_players, hc.cards AS hole, epoch(h.started_at)::BIGINT AS ts_s,
           concat_ws(' ', h.game, h.limit_type, CASE WHEN h.hi_lo THEN 'hi-lo' END) AS variant
    FROM actions a JOIN hands h USING (hand_id)
    JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
    LEFT JOIN hole_cards hc ON hc.hand_id = a.hand_id AND hc.player = a.player
    WHERE a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise') AND a.to_call > 0
)
SELECT * FROM pre
"""


PRESENCE_BINS = ("sbin", "cbin", "short", "tour", "nbin", "variant")
#: the columns of :func:`preflop_decisions` the presence test (:func:`presence_tests`: the decision, its hour and bins)
#: reads (the detector keeps ``strength`` too: the evidence's continuations are written from the same table)
PRESENCE_COLUMNS = ("hand_id", "player", "cont", "ts_s", *PRESENCE_BINS)


# the decisions of PRESENCE_SQL with their bins (preflop_decisions), each numbered ``did`` (a key, in no particular
# order: numbering them in hand and decision order sorted every decision of the window, the largest part of the
# table's cost); the starting hand's strength looked up in _sh_{tag} (every ordered pair of card texts,
# starting_hand_percentile's value); DuckDB's least and greatest skip a NULL, so a hand of unknown strength is -1 by
# a CASE, not by a coalesce around them
PREFLOP_CELLS_SQL = """
SELECT (row_number() OVER () - 1)::BIGINT AS did, p.hand_id, p.seq, p.player, p.cont,
       p.tournament_id, p.game, p.to_call_bb, p.stack_bb, p.tour, p.n_players, p.ts_s, p.variant, sh.strength,
       (CASE WHEN sh.strength IS NULL THEN -1 ELSE least(greatest(floor(sh.strength * 10), 0), 9) END)::TINYINT AS sbin,
       (CASE WHEN p.to_call_bb <= 1 THEN 0 WHEN p.to_call_bb <= 2.5 THEN 1 WHEN p.to_call_bb <= 6 THEN 2
             WHEN p.to_call_bb <= 15 THEN 3 ELSE 4 END)::TINYINT AS cbin,
       p.stack_bb <= 15 AS short, (p.n_players <= 2)::TINYINT AS nbin
FROM (""" + PRESENCE_SQL.replace("{part_tables}", "") + """) p
LEFT JOIN _sh_{tag} sh ON p.game = 'holdem' AND sh.c1 = p.hole[1] AND sh.c2 = p.hole[2]
"""


def _starting_hands() -> pl.DataFrame:
    """Every ordered pair of card texts (c1, c2) with its Hold'em starting-hand ``strength``
    (:func:`detectors.features.gameplay.starting_hand_percentile`, the one definition), for DuckDB to look up."""
    cards = list(gp.CARD_INDEX)
    f = pl.DataFrame({"c1": [a for a in cards for _ in cards], "c2": [b for _ in cards for b in cards]})
    f = f.with_columns(hole=pl.concat_list("c1", "c2"), game=pl.lit("holdem"))
    return f.select("c1", "c2", gp.starting_hand_percentile(f))


@contextmanager
def preflop_table(con: duckdb.DuckDBPyConnection, columns: tuple[str, ...] | None = None
                  ) -> Iterator[duckdb.DuckDBPyRelation]:
    """Every preflop decision facing a bet, binned, as a DuckDB temporary table on ``con``, dropped on leaving.

    The rows and columns of :func:`preflop_decisions`, computed and held by DuckDB (out of core: nothing per
    decision comes to Python), with ``did``: a number of its own per decision (a key, not an order).

    Parameters
    ----------
    con : the warehouse (read through the window by the caller).
    columns : the columns kept (None: every column; the detector keeps ``did`` and :data:`PRESENCE_COLUMNS`: the
        table the presence test reads several times holds only what it reads).

    Yields
    ------
    The table as a relation on ``con``."""
    tag = f"{os.getpid()}_{id(con)}_{next(_TAGS)}"
    con.register(f"_sh_{tag}", _starting_hands())
    try:
        # column names, each quoted as an identifier (the detector passes this module's constants)
        keep = "*" if columns is None else ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
        con.execute(f"CREATE TEMP TABLE _pf_{tag} AS SELECT {keep} FROM ("
                    + PREFLOP_CELLS_SQL.format(tag=tag) + ")")
        yield con.table(f"_pf_{tag}")
    finally:
        con.execute(f"DROP TABLE IF EXISTS _pf_{tag}")
        con.unregister(f"_sh_{tag}")


def preflop_decisions(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every preflop decision facing a bet, binned by what drives an honest continuation.

    ``sbin``: decile of the starting hand's percentile (Hold'em, cards known; -1
    where they are not: Omaha, player view); ``cbin``: the price in big blinds
    (<= 1, 2.5, 6, 15, more); ``short``: at most 15 big blinds deep; ``tour``:
    tournament hand; ``variant``: game, betting limit and hi/lo split (an
    Omaha Hi/Lo table continues far more often than a Hold'em one at the same
    price); ``nbin``: heads-up (two players dealt in) or not: ranges
    widen heads-up, and a pair that meets mostly heads-up (a final table, an
    emptying cash table) must not be compared with the same player's
    full-table hands (finer table sizes thinned the baselines and cost
    precision on the tuning populations). ``cont``: called or raised rather
    than folded.

    The rows of :func:`preflop_table` in hand and decision order, as a Polars frame (the detector keeps them in
    DuckDB).
    """
    with preflop_table(con) as t:
        return t.order("hand_id, seq").pl()


_TAGS = itertools.count()  # names of temporary tables, never reused within a process

# rank of "no member of S dealt in" (every rank of S is below it)
_NO_RANK = 2**31 - 1


_PRESENCE_SCORE_SQL = """
, t AS (
    SELECT pc.player, pc.partner, pc.win, pc.n::DOUBLE AS n, pc.k::DOUBLE AS k, greatest(pc.tn - pc.n, 0)::DOUBLE AS n0,
           greatest(pc.tk - pc.k, 0)::DOUBLE AS k0, p.pa, p.pb,
           least(greatest(p.pa / (p.pa + p.pb), 1e-4), 1 - 1e-4) AS m
    FROM pc JOIN _pri_{tag} p USING ({bb})
), o AS (
    -- the player's own looseness without the partner in the same time window: observed against the population's
    -- rates in the same bins, over every decision of the player in the window without the partner (the window's totals
    -- minus the pair's), smoothed by $off_a decisions at the player's looseness over all his decisions (dp)
    SELECT t.player, t.partner, t.win, greatest(any_value(w.wn) - sum(t.n), 0) AS on0,
           greatest(any_value(w.wk) - sum(t.k), 0) AS ok0, greatest(any_value(w.we) - sum(t.n * t.m), 0) AS oe0,
           any_value(w.dp) AS dp
    FROM t JOIN _off_{tag} w USING (player, win) GROUP BY t.player, t.partner, t.win
), o2 AS (
    SELECT player, partner, win, dp,
           least(greatest(CASE WHEN on0 > 0 THEN oe0 / on0 ELSE 0.5 END, 1e-3), 1 - 1e-3) AS mbar,
           on0, ok0 FROM o
), o3 AS (
    -- the player's smoothed rate without the partner in the window, against mbar, the population's rate at his bins
    SELECT player, partner, win, mbar,
           least(greatest((ok0 + $off_a / (1 + exp(-(ln(mbar / (1 - mbar)) + dp)))) / (on0 + $off_a), 1e-3), 1 - 1e-3)
           AS own FROM o2
), o4 AS (
    -- the log-odds offset ($use_off 0: none, the population's rate as the prior mean)
    SELECT o3.player, o3.partner, o3.win, $use_off * (ln(o3.own / (1 - o3.own)) - ln(o3.mbar / (1 - o3.mbar))) AS delta,
           o2.on0
    FROM o3 JOIN o2 USING (player, partner, win)
), t1 AS (
    -- the prior mean of the player's rate in a bin and window: the population's rate in the bin, moved by the
    -- player's offset in the window
    SELECT t.*, 1 / (1 + exp(-(ln(t.m / (1 - t.m)) + o4.delta))) AS m1, o4.on0
    FROM t JOIN o4 USING (player, partner, win)
), t2 AS (
    SELECT *, least(greatest((k0 + m1 * (pa + pb)) / (n0 + pa + pb), 1e-4), 1 - 1e-4) AS r, n0 + pa + pb AS s FROM t1
)
-- a bin where the player (nearly) always continues cannot show more continuation, and its score-test weight
-- 1/(1-r) would swamp the rest: left out
SELECT player, partner, sum(n) AS pres_n, sum(k) AS pres_k, sum(n * r) AS pres_e, sum((k - n * r) / (1 - r)) AS u,
       sum(n * r / (1 - r) + n * n * r / ((1 - r) * (s + 1))) AS v, sum(n0) AS base_n, sum(k0) AS base_k,
       any_value(ow.own_n) AS own_n
FROM t2 JOIN (SELECT player, partner, sum(on0) AS own_n FROM o GROUP BY ALL) ow USING (player, partner)
WHERE r < 0.98 GROUP BY player, partner
"""


def _presence_sql(bins: list[str], tag: str, part: str) -> str:
    """The presence score test, counted and summed inside DuckDB: one row per ordered pair comes back.

    ``_pd_<tag>``: the decisions (did, hand_id, player, y, cell: the bins' one key, win, part),
    registered by :func:`presence_tests` with integer keys for hands and
    players, as are ``_seat_<tag>`` (every dealt-in seat: hand_id, player;
    :func:`detectors.features.gameplay.dealt_in_keys`) and the other frames, so
    every join and group-by runs on integers; only the players of partition
    ``$part`` are read (the test is per player, so the partitions are exact
    and the join of decisions with the other players dealt in is never held
    whole). ``_me_<tag>``: the player's decisions per bin (tn, tk; DuckDB's names are case-blind);
    ``_pri_<tag>``: the population's Beta prior per bin.

    ``first``: per pair with at least ``$min_n`` decisions together, the
    decisions n, k per bin against the player's decisions without the
    partner. ``second`` (``_ps_<tag>``: the first pass's pairs S with their
    rank ``rk`` within the player, strongest first): partner X is judged
    only on the decisions where no member of S ranked above X is dealt in,
    against the player's decisions in that same stratum without X
    (``mr``: the best rank of S dealt in at a decision).
    """
    bb = ", ".join(bins)
    score = _PRESENCE_SCORE_SQL.format(tag=tag, bb=bb)  # the priors' bins (no window)
    strata = [*bins, "win"]
    b = ", ".join(f"d.{x}" for x in strata)
    cb = ", ".join(f"c.{x}" for x in strata)
    bb = ", ".join(strata)
    same = " AND ".join(f"t.{x} = c.{x}" for x in strata)
    seat = f"JOIN _seat_{tag} s ON s.hand_id = d.hand_id AND s.player <> d.player"
    if part == "first":
        return f"""WITH c0 AS (
            SELECT d.player, s.player AS partner, {b}, count(*) AS n, sum(d.y) AS k
            FROM _pd_{tag} d {seat} WHERE d.part = $part GROUP BY ALL
        ), c1 AS (
            SELECT c.*, m.tn, m.tk FROM c0 c JOIN _me_{tag} m USING (player, {bb})
        ), met AS (
            SELECT player, partner FROM c1 GROUP BY player, partner HAVING sum(n) >= $min_n
        ), pc AS (
            SELECT * FROM c1 SEMI JOIN met USING (player, partner)
        ) {score}"""
    return f"""WITH dd AS (
        SELECT d.* FROM _pd_{tag} d WHERE d.part = $part AND d.player IN (SELECT player FROM _ps_{tag})
    ), m AS (
        SELECT d.did, min(ps.rk) AS mr
        FROM dd d {seat} JOIN _ps_{tag} ps ON ps.player = d.player AND ps.partner = s.player
        GROUP BY ALL
    ), c0 AS (
        SELECT d.player, s.player AS partner, {b}, coalesce(ps.rk, {_NO_RANK}) AS rk, count(*) AS n, sum(d.y) AS k
        FROM dd d {seat} LEFT JOIN _ps_{tag} ps ON ps.player = d.player AND ps.partner = s.player
        LEFT JOIN m ON m.did = d.did
        WHERE coalesce(m.mr, {_NO_RANK}) >= coalesce(ps.rk, {_NO_RANK})
        GROUP BY ALL
    ), c AS (
        SELECT c0.* FROM c0 SEMI JOIN _pp_{tag} pp USING (player, partner)
    ), tot AS (
        SELECT d.player, {b}, coalesce(m.mr, {_NO_RANK}) AS mrb, count(*) AS tn, sum(d.y) AS tk
        FROM dd d LEFT JOIN m USING (did) GROUP BY ALL
    ), pc AS (
        SELECT c.player, c.partner, {cb}, c.n, c.k, sum(t.tn) AS tn, sum(t.tk) AS tk
        FROM c JOIN tot t ON t.player = c.player AND {same} AND t.mrb >= c.rk
        GROUP BY ALL
    ) {score}"""


def _presence_p(g: pl.DataFrame) -> pl.DataFrame:
    """p-value of the presence score test per pair: the larger of the score test (it carries the baseline's
    uncertainty) and the exact binomial tail at the mean expected rate (exact for few decisions, where the
    normal approximation is too kind)."""
    from scipy.stats import norm

    n, k, e = (g[c].to_numpy().astype(float) for c in ("pres_n", "pres_k", "pres_e"))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = g["u"].to_numpy() / np.sqrt(g["v"].to_numpy())
    p = np.fmax(np.where(np.isfinite(z), norm.sf(z), np.nan),
                stats.binom_tail(k, n, np.clip(e / np.maximum(n, 1e-9), 1e-4, 1 - 1e-4)))
    return g.drop("u", "v").with_columns(pl.Series("pres_p", np.clip(p, 1e-300, 1.0), nan_to_null=True))


def _ranked_partners(first: pl.DataFrame, alpha: float, partners: pl.DataFrame | None = None) -> pl.DataFrame:
    """The first pass's partners S (BH q <= ``alpha``) with their rank ``rk`` within the player, strongest first.

    Ranked by p, ties by name: partners always dealt in together get p-values equal but for the last bits of
    DuckDB's parallel sums, so p is compared to 9 significant digits (else which of them keeps the test, and so
    whether a case is flagged, changed from run to run). ``partners`` (player, partner, p): more members of S,
    found by other tests (the detector's combined test), ranked by their ``p`` in place of the presence p."""
    q = stats.bh_qvalues(first["pres_p"].to_numpy())
    s = first.filter(pl.Series(np.nan_to_num(q, nan=1.0) <= alpha)).select("player", "partner", rp=pl.col("pres_p"))
    if partners is not None and not partners.is_empty():
        s = pl.concat([s.join(partners, on=["player", "partner"], how="anti"),
                       partners.select("player", "partner", rp=pl.col("p").cast(pl.Float64))])
    return (s.sort([pl.col("player"), pl.col("rp").round_sig_figs(9), pl.col("partner")])
            .select("player", "partner", rk=pl.int_range(1, pl.len() + 1).over("player").cast(pl.Int64)))


_PRESENCE_COLS = {"player": pl.Utf8, "partner": pl.Utf8, "pres_n": pl.Float64, "pres_k": pl.Float64,
                  "pres_e": pl.Float64, "base_n": pl.Float64, "base_k": pl.Float64, "own_n": pl.Float64,
                  "pres_p": pl.Float64}
_PRESENCE_OUT = ["player", "partner", "pres_n", "pres_k", "pres_e", "u", "v", "base_n", "base_k", "own_n"]


def presence_tests(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame | duckdb.DuckDBPyRelation, *, alpha: float = 0.01, min_n: int = 20,
                   min_own: int = 10, decisions_per_part: int = 400_000, offset_a: float | None = 20.0,
                   partners: pl.DataFrame | None = None, state: dict | None = None,
                   window_s: float | None = 3600.0) -> pl.DataFrame:
    """Per ordered pair (player, partner): does the player continue preflop more often with the partner dealt in?

    Own baseline: the same player's continuation rate facing a bet, in the same
    bin (:data:`PRESENCE_BINS`: hand-strength decile, price, stack depth, venue, heads-up or not, and the game:
    Omaha Hi/Lo players continue far more often than Hold'em players at the same price),
    in the hands *without* the partner, empirical-Bayes shrunk to a Beta prior
    of the population's strength in the bin whose mean is the population's rate
    in the bin moved by the player's own offset: ``delta = logit((k0 + a m0) /
    (n0 + a)) - logit(m0)`` over all ``n0`` decisions of the player without the
    partner (``k0`` continuations, ``m0`` the population's rate at the same
    bins, ``a = offset_a`` pseudo-decisions; the player-effect logit of
    hierarchical rate models, Gelman & Hill, *Data Analysis Using Regression
    and Multilevel/Hierarchical Models*, 2007, ch. 14). Without it a bin the
    player has (almost) no decisions in fell back to the population's rate,
    and a loose player who meets one opponent where his own bins are thin (late
    in tournaments, at short-handed tables and heads-up) looked like that
    opponent's feeder; ``offset_a=None``: no offset (bounty's tests carry the same player effect, fitted by a
    ridge-penalised Newton step: :func:`detectors.features.gameplay.bounty_offset_priors`; one of the two should
    replace the other once measured on both detectors). One-sided score test for a common multiplier
    on the player's rates (as :func:`detectors.features.gameplay.own_baseline`),
    checked against the exact binomial tail. Seating is independent of the
    cards, so the test stays valid where cards are unknown (bin -1).

    Like with like in time (Mantel & Haenszel's strata, J. Natl. Cancer Inst. 1959): each stratum is also a window of
    ``window_s`` seconds (None: one), its offset the window's looseness shrunk towards the player's overall one (``dp``),
    so a player who loosens or tightens within a session is compared with himself at the time; ``own_n`` counts his
    decisions without the partner in the windows they shared.

    Explaining away: people who sit with the partner (regulars of the same
    table) inherit the partner's effect. A first pass finds each player's
    partners S with BH q <= ``alpha``, ranked by their first-pass p-value; the
    second pass judges every partner X only on the decisions where no member
    of S ranked above X is dealt in, against the player's own decisions in
    that stratum (a greedy forward selection, strongest partner first, in the
    manner of a Mantel-Haenszel stratum: the stratum with a stronger partner
    present, where the baseline is thin and would lend X that partner's
    effect, is not used). The strongest partner keeps its first-pass test. A
    partner X seen only with a stronger member keeps its counts but no test.
    ``partners`` (player, partner, p): more members of S with the p-value
    they are ranked by (the detector passes the pairs its combined test
    finds, :class:`ChipDumpingDetector`): a receiver whose presence test is
    weak on its own (a thin baseline) but whose heads-up tests are strong
    then explains its table-mates away.
    A player with fewer than ``min_own`` decisions without the partner (``own_n``) has no baseline of his own:
    the pair keeps its counts but no test (``pres_p`` null), as the prior alone would test his style.
    Returns player, partner, pres_n, pres_k, pres_e, base_n, base_k, own_n, pres_p
    (pairs with at least ``min_n`` decisions together).
    ``dec``: the decisions (:data:`PRESENCE_COLUMNS`), a Polars frame or the DuckDB table of :func:`preflop_table`
    (numbered by ``did``: the detector's, whose rows never leave DuckDB).
    Memory: :class:`_PresenceRun`. ``state`` (a dict the caller keeps between calls on the same ``dec``,
    connection and parameters): :func:`_changed_players`.
    """
    cols = _PRESENCE_COLS
    if _rows(dec) == 0:
        return pl.DataFrame(schema=cols)
    key = (con, alpha, min_n, min_own, decisions_per_part, offset_a, window_s)
    prev = state if state is not None and state.get("dec") is dec and state.get("key") == key else None
    pr = None
    try:
        # independent filtering: pairs with at least min_n decisions together (blind to the outcome)
        if prev is not None:
            first = prev["first"]
        else:
            pr = _PresenceRun(con, dec, decisions_per_part, min_n, min_own, offset_a, window_s)
            first = pr.run("first")
        if state is not None and prev is None:
            state.clear()
            state.update(dec=dec, key=key, first=first)
        if first.is_empty():
            return pl.DataFrame(schema=cols)
        s_set = _ranked_partners(first, alpha, partners)
        first, s_set, done = _changed_players(state, prev, first, s_set)
        if s_set.is_empty():
            return _presence_rows(state, done, first.select(list(cols)))
        touched = s_set.select("player").unique()
        # second pass: the pairs of the players S touches, each partner judged without the stronger members of S
        pp = first.join(touched, on="player", how="semi").select("player", "partner")
        pr = pr or _PresenceRun(con, dec, decisions_per_part, min_n, min_own, offset_a, window_s)
        pr.register([("_ps_", pr.keyed(s_set, ["player", "partner"])), ("_pp_", pr.keyed(pp, ["player", "partner"]))])
        second = pr.run("second")
    finally:
        if pr is not None:
            pr.unregister()
    return _presence_rows(state, done, _second_pass_rows(first, touched, pp, second))


_CELL_COUNTS_SQL = """
SELECT player, win, {bb}, count(*)::UINTEGER AS tn, sum(y)::BIGINT AS tk
FROM _pd_{tag} GROUP BY ALL ORDER BY player, win, {bb}
"""


def _cell_counts(con: duckdb.DuckDBPyConnection, tag: str, bins: list[str], offset_a: float | None,
                 window_s: float | None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The per-cell counts, Beta priors and per-window looseness of :class:`_PresenceRun`, from its registered
    decisions ``_pd_<tag>`` (player keys).

    The decisions are counted per cell (player, window, bins) by a DuckDB ``GROUP BY``; only those counts come back,
    sorted by the cell (the player's key, the window, the bins), so every later sum of floats over them (the priors,
    ``we``) adds in one order whatever the order of the decisions.

    Parameters
    ----------
    con : the connection holding ``_pd_<tag>``. tag : the registered frames' suffix. bins : the bin columns
    (:data:`PRESENCE_BINS`). offset_a, window_s : as :func:`presence_tests`.

    Returns
    -------
    (mw, pri, off): ``mw`` player, win, bins, tn, tk (decisions, continuations); ``pri`` the population's Beta prior
    per bin (:func:`detectors.stats.beta_priors_by_bin` over the players' cells); ``off`` per player and window the
    decisions ``wn``, continuations ``wk``, the population's expected continuations at the player's bins ``we`` and
    ``dp``, the player's log-odds looseness over all his decisions smoothed by ``offset_a`` decisions at the
    population's rates (the prior of each window's own looseness; 0 without windows or offset)."""
    bb = ", ".join(bins)
    mw = con.sql(_CELL_COUNTS_SQL.format(bb=bb, tag=tag)).pl()
    me = mw.group_by(["player", *bins]).agg(pl.col("tn").sum(), pl.col("tk").sum())
    pri = stats.beta_priors_by_bin(me, bins, "tk", "tn")
    e = pl.col("tn") * pl.col("pa") / (pl.col("pa") + pl.col("pb"))
    off = mw.join(pri, on=bins).group_by("player", "win").agg(
        wn=pl.col("tn").sum().cast(pl.Float64), wk=pl.col("tk").sum().cast(pl.Float64), we=e.sum())
    a = float(offset_a or 1.0)
    allp = off.group_by("player").agg(pl.col("wn").sum(), pl.col("wk").sum(), pl.col("we").sum()).with_columns(
        _m=(pl.col("we") / pl.col("wn").clip(1e-9)).clip(1e-3, 1 - 1e-3))
    allp = allp.with_columns(_o=((pl.col("wk") + a * pl.col("_m")) / (pl.col("wn") + a)).clip(1e-3, 1 - 1e-3))
    # (one window, window_s None: no prior looseness, the population's rate as before windows existed)
    dp = ((pl.col("_o") / (1 - pl.col("_o"))).log() - (pl.col("_m") / (1 - pl.col("_m"))).log()) \
        * (0.0 if offset_a is None or not window_s else 1.0)
    return mw, pri, off.join(allp.select("player", dp=dp), on="player")


# the temporary tables of a _PresenceRun, made in this order from its decisions _in_{tag} (did, hand_id, player, cont,
# ts_s, the bins) and the dealt-in seats: player keys (sorted by name: keys compare as the names do), hand keys, the
# seats, the cells (one integer per combination of the bins that occurs: the passes group and join on it, not on six
# columns; null where a bin is) and the decisions keyed (y: continued; cell; win: the time window, {win}; part: the
# player's partition)
_KEYED_SQL = (
    ("_pk_", """SELECT player, (row_number() OVER (ORDER BY player) - 1)::UINTEGER AS k
        FROM (SELECT player FROM seats WHERE dealt_in UNION SELECT player FROM _in_{tag}) WHERE player IS NOT NULL"""),
    ("_hk_", """SELECT hand_id, (row_number() OVER () - 1)::UINTEGER AS k
        FROM (SELECT hand_id FROM seats WHERE dealt_in UNION SELECT hand_id FROM _in_{tag}) WHERE hand_id IS NOT NULL"""),
    ("_seat_", """SELECT h.k AS hand_id, p.k AS player FROM seats s JOIN _hk_{tag} h USING (hand_id)
        JOIN _pk_{tag} p USING (player) WHERE s.dealt_in"""),
    ("_ck_", """SELECT {bins}, (row_number() OVER (ORDER BY {bins}) - 1)::UINTEGER AS cell
        FROM (SELECT DISTINCT {bins} FROM _in_{tag})"""),
    ("_pd_", """SELECT d.did, h.k AS hand_id, p.k AS player, d.cont::BIGINT AS y, c.cell, ({win})::BIGINT AS win,
        (p.k % $parts)::BIGINT AS part
        FROM _in_{tag} d LEFT JOIN _hk_{tag} h ON h.hand_id = d.hand_id LEFT JOIN _pk_{tag} p ON p.player = d.player
        LEFT JOIN _ck_{tag} c ON {same_cell}"""),
)


def _rows(dec: pl.DataFrame | duckdb.DuckDBPyRelation) -> int:
    """The number of decisions in ``dec`` (a frame or a DuckDB relation)."""
    return len(dec) if isinstance(dec, pl.DataFrame) else dec.aggregate("count(*)").fetchall()[0][0]


class _PresenceRun:
    """The DuckDB side of :func:`presence_tests`: the decisions and dealt-in seats keyed in temporary tables
    (:data:`_KEYED_SQL`), the per-player bins, Beta priors and player offsets registered, all under names tagged by
    process and run, and the two passes of :func:`_presence_sql` run over them.

    Memory: the (decision x other player dealt in) rows exist only inside
    DuckDB, one partition of players at a time (about ``decisions_per_part``
    decisions each), and are counted and summed to one row per pair there
    (:func:`_presence_sql`). DuckDB sees hands and players as integer keys (joins and group-bys on text cost
    twice as long), keyed by DuckDB itself (the decisions and seats never come to Python); the rows that come back
    are decoded to names, so everything in Polars keeps the names. The per-cell counts are grouped there too, only
    they come back (:func:`_cell_counts`).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, dec: pl.DataFrame | duckdb.DuckDBPyRelation,
                 decisions_per_part: int, min_n: int, min_own: int, offset_a: float | None,
                 window_s: float | None = None) -> None:
        self.con, self.min_n, self.min_own, self.offset_a = con, min_n, min_own, offset_a
        # the passes read one cell key for the bins (_KEYED_SQL's _ck_): the same strata, grouped on one integer
        self.bins = bins = ["cell"]
        self.tag = f"{os.getpid()}_{id(self)}_{next(_TAGS)}"
        self.names: list[str] = []
        self.tables: list[str] = []
        # a frame's decisions are numbered in its order; a relation (preflop_table) carries its numbers
        src = dec.with_row_index("did") if isinstance(dec, pl.DataFrame) and "did" not in dec.columns else dec
        self.parts = max(1, -(-_rows(dec) // max(1, int(decisions_per_part))))
        self.register([("_in_", src)])
        # the time window of each decision (one window for all where the hands' times are unknown or window_s is None)
        timed = bool(window_s) and "ts_s" in src.columns
        params = {"parts": self.parts, **({"win_s": int(window_s)} if timed else {})}
        win = "coalesce(floor(d.ts_s / $win_s), -1)" if timed else "0"
        for prefix, sql in _KEYED_SQL:
            self.tables.append(f"{prefix}{self.tag}")
            q = sql.format(tag=self.tag, bins=", ".join(PRESENCE_BINS), win=win,
                           same_cell=" AND ".join(f"c.{b} = d.{b}" for b in PRESENCE_BINS))
            con.execute(f"CREATE TEMP TABLE {self.tables[-1]} AS {q}", params if prefix == "_pd_" else None)
        self.pcodes = con.sql(f"SELECT player FROM _pk_{self.tag} ORDER BY k").pl()["player"]
        mw, pri, off = _cell_counts(con, self.tag, bins, offset_a, window_s)
        self.register([("_me_", mw), ("_pri_", pri), ("_off_", off)])

    def keyed(self, frame: pl.DataFrame, cols: list[str]) -> pl.DataFrame:
        """``frame`` with the player columns ``cols`` encoded to the integer keys DuckDB joins on."""
        return gp.encode(frame, cols, self.pcodes)

    def register(self, frames: list[tuple[str, pl.DataFrame | duckdb.DuckDBPyRelation]]) -> None:
        """Register each (prefix, frame) on the connection as ``prefix + tag``, in order."""
        for prefix, frame in frames:
            self.names.append(f"{prefix}{self.tag}")
            self.con.register(self.names[-1], frame)

    def unregister(self) -> None:
        """Drop every frame :meth:`register` put on the connection and every table the run made."""
        for nm in self.names:
            self.con.unregister(nm)
        for t in self.tables:
            self.con.execute(f"DROP TABLE IF EXISTS {t}")

    def run(self, part: str) -> pl.DataFrame:
        """One pass (``"first"`` or ``"second"``) over every partition of players: the rows of
        :data:`_PRESENCE_OUT` with names decoded and ``pres_p`` (null without an own baseline)."""
        offset_a, bins, tag = self.offset_a, self.bins, self.tag
        # offset_a None: no offset (use_off 0; any positive smoothing keeps the unused rate finite)
        off_a = {"off_a": 1.0 if offset_a is None else float(offset_a), "use_off": 0.0 if offset_a is None else 1.0}
        extra = {"min_n": int(self.min_n), **off_a} if part == "first" else off_a
        got = [self.con.sql(_presence_sql(bins, tag, part), params={"part": i, **extra}).pl()
               for i in range(self.parts)]
        got = [g for g in got if not g.is_empty()]
        if not got:
            return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "partner") else pl.Float64)
                                        for c in _PRESENCE_OUT})
        g = pl.concat(got)
        g = g.with_columns(self.pcodes.gather(g["player"]).alias("player"),
                           self.pcodes.gather(g["partner"]).alias("partner"))
        rows = _presence_p(g.select(_PRESENCE_OUT).cast({c: pl.Float64 for c in _PRESENCE_OUT[2:]}))
        # no own baseline, no test: the population's rate cannot stand in for the player's style
        return rows.with_columns(pres_p=pl.when(pl.col("own_n") >= self.min_own).then("pres_p"))


def _changed_players(state: dict | None, prev: dict | None, first: pl.DataFrame, s_set: pl.DataFrame
                     ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """The first-pass rows and ranked partners S still to judge, and the previous call's rows kept.

    ``state`` (a dict the caller keeps between calls on the same ``dec``,
    connection and parameters; ``prev`` is it when it matches): a repeated call with more ``partners``
    reuses the first pass and the previous call's rows of every player
    whose ranked S is unchanged, and makes the second pass again only for
    the players whose S changed. The test is per player (its baseline,
    strata and partners are the player's own), so the rows are those of a
    full call; this only saves time (on a million hands most players' S
    is unchanged by the combined test's partners). Records ``s_set`` in ``state``.
    Returns (first, s_set, done): both restricted to the changed players when previous rows exist (``done``
    then holds the others' previous rows), else unchanged with ``done`` None.
    """
    done = None
    if prev is not None and "out" in prev:
        # only the players whose ranked S changed are tested again; the others keep the previous call's rows
        changed = pl.concat([s_set.join(prev["s_set"], on=["player", "partner", "rk"], how="anti"),
                             prev["s_set"].join(s_set, on=["player", "partner", "rk"], how="anti")]
                            ).select("player").unique()
        done = prev["out"].join(changed, on="player", how="anti")
        state["s_set"] = s_set
        first = first.join(changed, on="player", how="semi")
        s_set = s_set.join(changed, on="player", how="semi")
    elif state is not None:
        state["s_set"] = s_set
    return first, s_set, done


def _second_pass_rows(first: pl.DataFrame, touched: pl.DataFrame, pp: pl.DataFrame, second: pl.DataFrame
                      ) -> pl.DataFrame:
    """:func:`presence_tests`' rows after the second pass: the first-pass rows of the players S does not touch,
    the second pass's rows, and the pairs ``pp`` the second pass did not see (counts kept, ``pres_p`` null)."""
    cols = list(_PRESENCE_COLS)
    keep1 = first.join(touched, on="player", how="anti")
    # a partner seen only beside a stronger member of S cannot be told from it: its counts stay, untested
    unseen = first.join(pp, on=["player", "partner"], how="semi").join(second, on=["player", "partner"], how="anti") \
        .with_columns(pl.lit(None, pl.Float64).alias("pres_p"))
    return pl.concat([keep1.select(cols), second.select(cols), unseen.select(cols)], how="vertical")


def _presence_rows(state: dict | None, done: pl.DataFrame | None, new: pl.DataFrame) -> pl.DataFrame:
    """:func:`presence_tests`' rows: the previous call's rows kept (``done``) and the rows made now; kept in
    ``state`` for the next call."""
    out = new if done is None else pl.concat([done, new], how="vertical")
    if state is not None:
        state["out"] = out
    return out
