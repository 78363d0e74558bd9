"""Chip dumping: one account losing chips to another on purpose.

Method
------
Chip flow alone cannot tell a dump from a cooler, so every heads-up decision
is valued with the cards known (:mod:`detectors.features.gameplay`, after
Mazrooei, Archibald & Bowling, AAAI 2013): a fold facing a bet gives the
opponent ``equity*(pot+to_call) - to_call``; chips put in give
``amount*(1 - 2*equity)``. For every ordered pair (giver A, receiver B) five
tests are made, each against the tested player's own play towards everyone
else (robust baselines, :func:`detectors.stats.robust_own_baseline`):

1. *value given*: A's mean value given per decision to B against A's to
   others (z-test with A's own variance);
2. *junk commitment*: A calls, bets or raises B with a weak hand more often
   than A's own rate in the same cells (street, facing a bet, heads-up,
   strength, price of a call: :data:`detectors.stats.JUNK_BINS`) predicts; a
   predictive tail for the estimated rare rate (Gelman, Meng & Stern,
   Statistica Sinica 1996);
3. *late folds* (:func:`receiver_tests`): A folds a made hand to B's turn or
   river bets more often than A's own rate;
4. *receiver aggression* (:func:`receiver_tests`): B bets or raises into A
   after the flop more often than B does against everyone else;
5. *presence* (:func:`presence_tests`): A continues preflop more often with B
   dealt in than in A's hands without B, in the same cells, with table-mates
   of a receiver explained away greedily and thin cells shrunk towards the
   population's rate moved by A's own looseness.

A test whose baseline rests on fewer than ``min_value_n`` (presence:
``min_presence_own``) decisions is not made. Fisher's method combines the
p-values; Benjamini–Hochberg controls the false-discovery rate over the
ordered pairs that met often enough (independent filtering, Bourgon,
Gentleman & Huber, PNAS 2010). A pair is flagged
(:meth:`ChipDumpingDetector.flag`) when q <= alpha and the chips moved: a net
flow of at least ``min_flow_bb`` in at least ``min_hu_hands`` hands lost, or
the value given is significant on its own (``value_gate_p``), or A lost that
much more than its own rate predicts in the *deviation hands*, those where it
put chips in with a weak hand or folded a made hand late
(:func:`deviation_flow`). Flagged edges form a value-flow graph
(:mod:`detectors.graphs`): one account feeding many (or many feeding one) is
one *star*.

Benign look-alikes considered: coolers (value with the cards known), loose
players (own baselines), regulars (per-decision tests), aggressive players
(the receiver test is against B's own rate), table-mates of a receiver
(explained away).

Score: −log10 q, comparable within the kind. The figures behind each rule are
in docs/measurements.md ("Detector notes moved from docstrings").
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import polars as pl

import duckdb
from detectors import stats
from detectors.base import HAND_INPUTS, Evidence, PairDetector, Signal
from detectors.features import gameplay as gp


PRESENCE_SQL = """
-- every preflop decision facing a bet (fold / call / raise), with the decider's stack, price and hole cards
-- (read by hand ranges: gameplay.by_hand_ranges)
WITH {part_tables} pre AS (
    SELECT a.hand_id, a.seq, a.player, a.action <> 'fold' AS cont, h.tournament_id, h.game,
           a.to_call::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS to_call_bb,
           s.stack_start::DOUBLE / coalesce(nullif(h.big_blind, 0), 1)::DOUBLE AS stack_bb,
           h.is_tournament AS tour, h.n_players, hc.cards AS hole,
           concat_ws(' ', h.game, h.limit_type, CASE WHEN h.hi_lo THEN 'hi-lo' END) AS variant
    FROM actions a JOIN hands h USING (hand_id)
    JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
    LEFT JOIN hole_cards hc ON hc.hand_id = a.hand_id AND hc.player = a.player
    WHERE a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise') AND a.to_call > 0
)
SELECT * FROM pre
"""

# Reproduces the raw presence counts: $player's preflop continuations facing a bet with $opponent dealt in, and without
PRESENCE_COUNTS_SQL = """
SELECT EXISTS (SELECT 1 FROM seats o WHERE o.hand_id = a.hand_id AND o.player = $opponent AND o.dealt_in) AS partner_dealt_in,
       count(*) AS decisions, avg(CASE WHEN a.action <> 'fold' THEN 1.0 ELSE 0.0 END) AS continue_rate
FROM actions a
WHERE a.player = $player AND a.street = 'preflop' AND a.action IN ('fold', 'call', 'raise') AND a.to_call > 0
GROUP BY ALL ORDER BY partner_dealt_in DESC
"""

# Reproduces the raw counts of the receiver test: $opponent's bets and raises heads-up after the flop, against $player
# and against everyone else; and $player's folds to bets heads-up on the turn and river, against $opponent and the rest
# (every hand strength: the strength the tests bin by is the detector's Monte Carlo, not a warehouse column)
RECEIVER_COUNTS_SQL = """
WITH folds AS (
    SELECT hand_id, player, min(seq) AS fold_seq FROM actions WHERE action = 'fold' GROUP BY ALL
), dec AS (
    SELECT * FROM actions WHERE n_active = 2 AND street <> 'preflop' AND player IN ($player, $opponent)
      AND action IN ('fold', 'check', 'call', 'bet', 'raise')
), opp AS (
    SELECT d.hand_id, d.seq, any_value(s.player) AS other
    FROM dec d JOIN seats s ON s.hand_id = d.hand_id AND s.dealt_in AND s.player <> d.player
    LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
    WHERE coalesce(f.fold_seq, 2147483647) > d.seq GROUP BY d.hand_id, d.seq HAVING count(*) = 1
)
SELECT d.player = $opponent AS receiver_deciding, o.other IN ($player, $opponent) AS against_partner,
       count(*) AS decisions,
       avg(CASE WHEN d.action IN ('bet', 'raise') THEN 1.0 ELSE 0.0 END) AS bet_or_raise_rate,
       avg(CASE WHEN d.action = 'fold' THEN 1.0 ELSE 0.0 END)
           FILTER (WHERE d.to_call > 0 AND d.street IN ('turn', 'river')) AS turn_river_fold_to_bet_rate
FROM dec d JOIN opp o ON o.hand_id = d.hand_id AND o.seq = d.seq
GROUP BY ALL ORDER BY ALL DESC
"""

PRESENCE_BINS = ("sbin", "cbin", "short", "tour", "nbin", "variant")


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
    """
    df = gp.by_hand_ranges(con, PRESENCE_SQL)
    if df.is_empty():
        return df.drop("hole").with_columns(pl.lit(None, pl.Int8).alias("sbin"), pl.lit(None, pl.Int8).alias("cbin"),
                                            pl.lit(None, pl.Boolean).alias("short"), pl.lit(None, pl.Int8).alias("nbin"))
    return df.drop("hole").with_columns(gp.starting_hand_percentile(df)).with_columns(
        sbin=(pl.col("strength") * 10).floor().clip(0, 9).fill_null(-1).cast(pl.Int8),
        cbin=pl.when(pl.col("to_call_bb") <= 1).then(0).when(pl.col("to_call_bb") <= 2.5).then(1)
        .when(pl.col("to_call_bb") <= 6).then(2).when(pl.col("to_call_bb") <= 15).then(3).otherwise(4).cast(pl.Int8),
        short=pl.col("stack_bb") <= 15,
        nbin=(pl.col("n_players") <= 2).cast(pl.Int8),
    )


# rank of "no member of S dealt in" (every rank of S is below it)
_NO_RANK = 2**31 - 1

_PRESENCE_SCORE_SQL = """
, t AS (
    SELECT pc.player, pc.partner, pc.n::DOUBLE AS n, pc.k::DOUBLE AS k, greatest(pc.tn - pc.n, 0)::DOUBLE AS n0,
           greatest(pc.tk - pc.k, 0)::DOUBLE AS k0, p.pa, p.pb,
           least(greatest(p.pa / (p.pa + p.pb), 1e-4), 1 - 1e-4) AS m
    FROM pc JOIN _pri_{tag} p USING ({bb})
), o AS (
    -- the player's own looseness without the partner: observed against the population's rates in the same bins,
    -- over every decision of the player without the partner (totals minus the pair's), smoothed by $off_a decisions
    SELECT t.player, t.partner, greatest(any_value(w.wn) - sum(t.n), 0) AS on0,
           greatest(any_value(w.wk) - sum(t.k), 0) AS ok0, greatest(any_value(w.we) - sum(t.n * t.m), 0) AS oe0
    FROM t JOIN _off_{tag} w USING (player) GROUP BY t.player, t.partner
), o2 AS (
    SELECT player, partner,
           least(greatest(CASE WHEN on0 > 0 THEN oe0 / on0 ELSE 0.5 END, 1e-3), 1 - 1e-3) AS mbar,
           on0, ok0 FROM o
), o3 AS (
    -- the player's smoothed rate without the partner, against mbar, the population's rate at his bins
    SELECT player, partner, mbar,
           least(greatest((ok0 + $off_a * mbar) / (on0 + $off_a), 1e-3), 1 - 1e-3) AS own FROM o2
), o4 AS (
    -- the log-odds offset ($use_off 0: none, the population's rate as the prior mean)
    SELECT o3.player, o3.partner, $use_off * (ln(o3.own / (1 - o3.own)) - ln(o3.mbar / (1 - o3.mbar))) AS delta, o2.on0
    FROM o3 JOIN o2 USING (player, partner)
), t1 AS (
    -- the prior mean of the player's rate in a bin: the population's rate in the bin, moved by the player's offset
    SELECT t.*, 1 / (1 + exp(-(ln(t.m / (1 - t.m)) + o4.delta))) AS m1, o4.on0
    FROM t JOIN o4 USING (player, partner)
), t2 AS (
    SELECT *, least(greatest((k0 + m1 * (pa + pb)) / (n0 + pa + pb), 1e-4), 1 - 1e-4) AS r, n0 + pa + pb AS s FROM t1
)
-- a bin where the player (nearly) always continues cannot show more continuation, and its score-test weight
-- 1/(1-r) would swamp the rest: left out
SELECT player, partner, sum(n) AS pres_n, sum(k) AS pres_k, sum(n * r) AS pres_e, sum((k - n * r) / (1 - r)) AS u,
       sum(n * r / (1 - r) + n * n * r / ((1 - r) * (s + 1))) AS v, sum(n0) AS base_n, sum(k0) AS base_k,
       any_value(on0) AS own_n
FROM t2 WHERE r < 0.98 GROUP BY player, partner
"""


def _presence_sql(bins: list[str], tag: str, part: str) -> str:
    """The presence score test, counted and summed inside DuckDB: one row per ordered pair comes back.

    ``_pd_<tag>``: the decisions (did, hand_id, player, y, bins, part),
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
    b = ", ".join(f"d.{x}" for x in bins)
    cb = ", ".join(f"c.{x}" for x in bins)
    bb = ", ".join(bins)
    same = " AND ".join(f"t.{x} = c.{x}" for x in bins)
    seat = f"JOIN _seat_{tag} s ON s.hand_id = d.hand_id AND s.player <> d.player"
    score = _PRESENCE_SCORE_SQL.format(tag=tag, bb=bb)
    if part == "first":
        return f"""WITH c0 AS (
            SELECT d.player, s.player AS partner, {b}, count(*) AS n, sum(d.y) AS k
            FROM _pd_{tag} d {seat} WHERE d.part = $part GROUP BY ALL
        ), pc AS (
            SELECT c.*, m.tn, m.tk FROM c0 c JOIN _me_{tag} m USING (player, {bb})
            QUALIFY sum(c.n) OVER (PARTITION BY c.player, c.partner) >= $min_n
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


def presence_tests(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame, *, alpha: float = 0.01, min_n: int = 20,
                   min_own: int = 10, decisions_per_part: int = 400_000, offset_a: float | None = 20.0,
                   partners: pl.DataFrame | None = None, state: dict | None = None) -> pl.DataFrame:
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

    Memory: the (decision x other player dealt in) rows exist only inside
    DuckDB, one partition of players at a time (about ``decisions_per_part``
    decisions each), and are counted and summed to one row per pair there
    (:func:`_presence_sql`).

    ``state`` (a dict the caller keeps between calls on the same ``dec``,
    connection and parameters): a repeated call with more ``partners``
    reuses the first pass and the previous call's rows of every player
    whose ranked S is unchanged, and makes the second pass again only for
    the players whose S changed. The test is per player (its baseline,
    strata and partners are the player's own), so the rows are those of a
    full call; this only saves time (on a million hands most players' S
    is unchanged by the combined test's partners).
    """
    bins = list(PRESENCE_BINS)
    cols = {"player": pl.Utf8, "partner": pl.Utf8, "pres_n": pl.Float64, "pres_k": pl.Float64, "pres_e": pl.Float64,
            "base_n": pl.Float64, "base_k": pl.Float64, "own_n": pl.Float64, "pres_p": pl.Float64}
    if dec.is_empty():
        return pl.DataFrame(schema=cols)
    parts = max(1, -(-len(dec) // max(1, int(decisions_per_part))))
    d = dec.select("hand_id", "player", pl.col("cont").cast(pl.Int64).alias("y"), *bins).with_row_index("did")
    d = d.with_columns(part=(pl.col("player").hash(seed=0) % parts).cast(pl.Int64))
    me = d.group_by(["player", *bins]).agg(tn=pl.len(), tk=pl.col("y").sum())
    pri = stats.beta_priors_by_bin(me, bins, "tk", "tn")
    # per player: decisions, continuations and the population's expected continuations at the player's bins
    off = me.join(pri, on=bins).group_by("player").agg(
        wn=pl.col("tn").sum().cast(pl.Float64), wk=pl.col("tk").sum().cast(pl.Float64),
        we=(pl.col("tn") * pl.col("pa") / (pl.col("pa") + pl.col("pb"))).sum())
    tag = f"{os.getpid()}_{id(d)}"
    out_cols = ["player", "partner", "pres_n", "pres_k", "pres_e", "u", "v", "base_n", "base_k", "own_n"]
    key = (con, alpha, min_n, min_own, decisions_per_part, offset_a)
    prev = state if state is not None and state.get("dec") is dec and state.get("key") == key else None
    # DuckDB sees hands and players as integer keys (joins and group-bys on text cost twice as long); the rows that
    # come back are decoded to names, so everything here in Polars keeps the names. Encoded once per ``state``.
    if prev is not None and "keys" in prev:
        seats, pcodes, pd_keyed = prev["keys"]
    else:
        seats, pcodes, hcodes = gp.dealt_in_keys(con, d["player"], d["hand_id"])
        pd_keyed = gp.encode(gp.encode(d.select("did", "hand_id", "player", "y", *bins, "part"), ["player"], pcodes),
                             ["hand_id"], hcodes)

    def keyed(frame: pl.DataFrame, cols: list[str]) -> pl.DataFrame:
        return gp.encode(frame, cols, pcodes)

    def run(part: str) -> pl.DataFrame:
        # offset_a None: no offset (use_off 0; any positive smoothing keeps the unused rate finite)
        off_a = {"off_a": 1.0 if offset_a is None else float(offset_a), "use_off": 0.0 if offset_a is None else 1.0}
        extra = {"min_n": int(min_n), **off_a} if part == "first" else off_a
        got = [con.sql(_presence_sql(bins, tag, part), params={"part": i, **extra}).pl() for i in range(parts)]
        got = [g for g in got if not g.is_empty()]
        if not got:
            return pl.DataFrame(schema={c: (pl.Utf8 if c in ("player", "partner") else pl.Float64) for c in out_cols})
        g = pl.concat(got)
        g = g.with_columns(pcodes.gather(g["player"]).alias("player"), pcodes.gather(g["partner"]).alias("partner"))
        rows = _presence_p(g.select(out_cols).cast({c: pl.Float64 for c in out_cols[2:]}))
        # no own baseline, no test: the population's rate cannot stand in for the player's style
        return rows.with_columns(pres_p=pl.when(pl.col("own_n") >= min_own).then("pres_p"))

    names = [f"_pd_{tag}", f"_me_{tag}", f"_pri_{tag}", f"_off_{tag}", f"_seat_{tag}"]
    con.register(names[0], pd_keyed)
    con.register(names[1], keyed(me, ["player"]))
    con.register(names[2], pri)
    con.register(names[3], keyed(off, ["player"]))
    con.register(names[4], seats)
    try:
        # independent filtering: pairs with at least min_n decisions together (blind to the outcome)
        first = prev["first"] if prev is not None else run("first")
        if state is not None and prev is None:
            state.clear()
            state.update(dec=dec, key=key, first=first, keys=(seats, pcodes, pd_keyed))
        if first.is_empty():
            return pl.DataFrame(schema=cols)
        s_set = _ranked_partners(first, alpha, partners)
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
        if s_set.is_empty():
            return _presence_rows(state, done, first.select(list(cols)))
        touched = s_set.select("player").unique()
        # second pass: the pairs of the players S touches, each partner judged without the stronger members of S
        pp = first.join(touched, on="player", how="semi").select("player", "partner")
        names += [f"_ps_{tag}", f"_pp_{tag}"]
        con.register(names[5], keyed(s_set, ["player", "partner"]))
        con.register(names[6], keyed(pp, ["player", "partner"]))
        second = run("second")
    finally:
        for nm in names:
            con.unregister(nm)
    keep1 = first.join(touched, on="player", how="anti")
    # a partner seen only beside a stronger member of S cannot be told from it: its counts stay, untested
    unseen = first.join(pp, on=["player", "partner"], how="semi").join(second, on=["player", "partner"], how="anti") \
        .with_columns(pl.lit(None, pl.Float64).alias("pres_p"))
    return _presence_rows(state, done, pl.concat([keep1.select(list(cols)), second.select(list(cols)),
                                                  unseen.select(list(cols))], how="vertical"))


def _presence_rows(state: dict | None, done: pl.DataFrame | None, new: pl.DataFrame) -> pl.DataFrame:
    """:func:`presence_tests`' rows: the previous call's rows kept (``done``) and the rows made now; kept in
    ``state`` for the next call."""
    out = new if done is None else pl.concat([done, new], how="vertical")
    if state is not None:
        state["out"] = out
    return out


#: what seat ``a`` lost to seat ``b`` in one hand (``s``/``w`` of gameplay.seat_nets_cte): a loser's loss shared among
#: the winners in proportion to their wins, as gameplay.chip_flow (negative where ``a`` won from ``b``)
PAIR_LOSS_BB = """CASE WHEN a.net_bb < 0 AND b.net_bb > 0 THEN -a.net_bb * b.net_bb / w.won
            WHEN a.net_bb > 0 AND b.net_bb < 0 THEN b.net_bb * a.net_bb / w.won ELSE 0.0 END"""

DEVIATION_FLOW_SQL = """
-- per (giver, receiver, hand) of _dev_{tag}: the chips the giver lost to the receiver in the hand, net of what it won
-- from them (a loser's loss shared among the winners in proportion to their wins, as gameplay.chip_flow)
WITH """ + gp.seat_nets_cte("_dev_{tag}") + f"""
SELECT d.player, d.opponent, d.hand_id, {PAIR_LOSS_BB} AS net_bb
FROM _dev_{{tag}} d JOIN s a ON a.hand_id = d.hand_id AND a.player = d.player
JOIN s b ON b.hand_id = d.hand_id AND b.player = d.opponent JOIN w ON w.hand_id = d.hand_id
"""

# Reproduces the deviation hands' chip flow: $player's hands against $opponent where $player put chips in with a weak
# hand or folded on the turn or river, with the chips $player lost to $opponent in each (net of what it won from
# them); the detector's hands are those of them where the hand strength (its Monte Carlo, not a warehouse column) was
# below 0.3 for the chips put in, at least 0.5 for the fold
DEVIATION_FLOW_COUNTS_SQL = f"""
WITH {gp.seat_nets_cte()}
SELECT a.hand_id, bool_or(x.action = 'fold' AND x.street IN ('turn', 'river')) AS late_fold,
       bool_or(x.action IN ('call', 'bet', 'raise')) AS put_chips_in, any_value({PAIR_LOSS_BB}) AS lost_bb
FROM s a JOIN s b ON b.hand_id = a.hand_id AND b.player = $opponent JOIN w ON w.hand_id = a.hand_id
JOIN actions x ON x.hand_id = a.hand_id AND x.player = $player
WHERE a.player = $player
GROUP BY a.hand_id ORDER BY a.hand_id
"""


def deviation_flow(con: duckdb.DuckDBPyConnection, dec: pl.DataFrame, *,
                   late_fold_min_strength: float | None = 0.5) -> pl.DataFrame:
    """Per ordered pair (giver A, receiver B): the chips that moved A -> B in the hands where A's play deviates.

    The deviation hands are the spots the count tests look at, cards known: A
    puts chips in against B with a weak hand (strength < 0.3, the junk
    commitment test's spots) or folds a made hand (strength at least
    ``late_fold_min_strength``) to B's bet heads-up on the turn or river (the
    late-fold test's). ``dev_flow_bb``: the net chips A lost to B in those
    hands; ``dev_loss_hands``: how many of them A lost to B; ``dev_exp_bb``:
    what A's own rate predicts, the chips A loses in such hands per hand met
    against everyone else (``met_hands``: hands in which A made a decision
    against B) times the hands A met B. A feeder whose honest hands against
    its receiver won back more than it dumped has a negative net flow over
    all their hands but not in these: the dump hands are where the chips
    moved. Where the cards are unknown (player view) there are no such hands.
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8, "met_hands": pl.UInt32, "dev_hands": pl.UInt32,
            "dev_loss_hands": pl.UInt32, "dev_flow_bb": pl.Float64, "dev_exp_bb": pl.Float64}
    if dec.is_empty() or con is None:
        return pl.DataFrame(schema=cols)
    made = pl.col("strength") >= (late_fold_min_strength if late_fold_min_strength is not None else -1.0)
    late = (pl.col("hu") & ~pl.col("preflop") & pl.col("facing") & pl.col("street").is_in(["turn", "river"])
            & pl.col("fold") & made)
    junk = pl.col("commit") & (pl.col("sbin") <= 0)
    per = (dec.filter(pl.col("opponent").is_not_null())
           .group_by("player", "opponent", "hand_id").agg(dev=(junk | late).fill_null(False).any()))
    tag = f"{os.getpid()}_{id(per)}"
    con.register(f"_dev_{tag}", per.filter(pl.col("dev")).select("player", "opponent", "hand_id"))
    try:
        fl = con.sql(DEVIATION_FLOW_SQL.format(tag=tag)).pl()
    finally:
        con.unregister(f"_dev_{tag}")
    per = per.join(fl, on=["player", "opponent", "hand_id"], how="left").with_columns(pl.col("net_bb").fill_null(0.0))
    g = per.group_by("player", "opponent").agg(
        met_hands=pl.len().cast(pl.UInt32), dev_hands=pl.col("dev").sum().cast(pl.UInt32),
        dev_loss_hands=(pl.col("dev") & (pl.col("net_bb") > 0)).sum().cast(pl.UInt32),
        dev_flow_bb=pl.col("net_bb").filter(pl.col("dev")).sum())
    # A's own rate: the chips lost in its deviation hands per hand met, against everyone but B
    tot = g.group_by("player").agg(_n=pl.col("met_hands").sum(), _f=pl.col("dev_flow_bb").sum())
    g = g.join(tot, on="player").with_columns(
        dev_exp_bb=pl.col("met_hands") * (pl.col("_f") - pl.col("dev_flow_bb"))
        / (pl.col("_n") - pl.col("met_hands")).cast(pl.Float64).clip(1.0))
    return g.select(list(cols)).cast(cols)


POSTFLOP_BINS = ("street", "facing", "sbin")


def receiver_tests(dec: pl.DataFrame, *, alpha: float = 0.01,
                   late_fold_min_strength: float | None = 0.5, rare_tail: str = "predictive") -> pl.DataFrame:
    """Two heads-up postflop own-baseline tests per ordered pair (giver A, receiver B), cards known.

    *receiver aggression* (``raggr_*``): B bets or raises into A, heads-up
    after the flop, more often than B does against everyone else on the same
    street, facing a bet or not, with a hand of the same strength (score test
    of :func:`detectors.stats.robust_own_baseline`, one-sided "greater"). A
    dump needs the receiver to put the feeder to a decision; B's baseline is
    B's play against the whole population, so it is rich even when A's is
    not (a feeder who sits almost only with its receivers).

    *late folds* (``lfold_*``): A folds to B's bets heads-up on the turn or
    river more often than A's own rate at the same street and hand strength
    (the feeder folds whatever it holds, strong hands included). The
    all-streets fold test of the pair features mixes in the preflop and flop
    spots where a feeder calls with any two cards, and so points the wrong way.
    The late-fold test's rare-event floor is ``rare_tail`` (see
    :func:`detectors.stats.robust_own_baseline`; "predictive": the own
    rate's uncertainty carried into the tail, as for the junk test).
    Only made hands count (``late_fold_min_strength``, what A knew: the share
    of random holdings A's hand beats on the board; None: every strength): a
    dump in a quarter of the hands is a handful of surrendered strong hands,
    rare events for an honest player, and is found by counting them, while the
    weak hands' folds, frequent for everyone and weighted 1 / (1 - r) by the
    score test, drown them (the sparse-signal argument for tail counts over
    means, e.g. Donoho & Jin, *Ann. Statist.* 32, 2004). On nine tuning
    populations (mixed 224, 225, 270-275; honest 276) the planted feeders'
    late-fold p fell (0.0046 -> 1e-7 on 13 spots, 0.016 -> 0.0027 on 9,
    8e-7 -> 6e-17) and one more group was flagged (37 -> 38 of 40: strength
    0.25, 788 heads-up hands, q 0.014 -> 0.003); the same cases otherwise, no
    unlabelled pair's late-fold p below 1e-3 before or after, the honest
    population still without a flag. At 0.65 the new group was lost again.

    Both follow the own-baseline tests of Mazrooei, Archibald & Bowling (AAAI
    2013): the decision is judged with the cards known against the player's
    own decisions in the same spot. Returns player (A), opponent (B) and for
    each test ``_n``, ``_obs``, ``_exp``, ``_p`` and ``_n0`` (the baseline's
    decisions in the pair's bins).
    """
    cols = {"player": pl.Utf8, "opponent": pl.Utf8}
    if dec.is_empty():
        return pl.DataFrame(schema=cols)
    post = ~pl.col("preflop") & pl.col("hu")
    aggr = stats.robust_own_baseline(dec, "aggr", where=post, bins=POSTFLOP_BINS, side="greater", alpha=alpha)
    # B's decisions towards A: swap the roles so the row is keyed (giver A, receiver B)
    aggr = aggr.rename({"player": "opponent", "opponent": "player"})
    late_spot = post & pl.col("facing") & pl.col("street").is_in(["turn", "river"])
    if late_fold_min_strength is not None:
        # only made hands: the folds of weak hands are what every player does, and their spots (the most frequent,
        # and weighted 1 / (1 - r) in the score test where r is high) only add noise to the feeder's surrendered
        # strong hands
        late_spot = late_spot & (pl.col("strength") >= late_fold_min_strength)
    late = stats.robust_own_baseline(dec, "fold", where=late_spot, bins=("street", "sbin"), side="greater", alpha=alpha,
                                     rare_tail=rare_tail)

    def named(t: pl.DataFrame, name: str) -> pl.DataFrame:
        return t.select("player", "opponent", pl.col("n").alias(f"{name}_n"), pl.col("observed").alias(f"{name}_obs"),
                        pl.col("expected").alias(f"{name}_exp"), pl.col("p_value").alias(f"{name}_p"),
                        pl.col("n0").cast(pl.Float64).alias(f"{name}_n0"))

    return named(aggr, "raggr").join(named(late, "lfold"), on=["player", "opponent"], how="full", coalesce=True)


class ChipDumpingDetector(PairDetector):
    """Ordered pairs where one side gives value to the other, judged by the cards against its own baseline."""

    kind = "chip_dumping"
    inputs = HAND_INPUTS
    directed = True  # giver -> receiver

    def __init__(
        self,
        *,
        alpha: float = 0.01,
        random_state: int = 0,
        min_hu_hands: int = 5,
        min_flow_bb: float = 20.0,
        min_value_n: int = 10,
        min_test_hands: int = 10,
        samples: int = 16,
        max_unflagged: int = 300,
        min_presence_n: int = 20,
        min_presence_own: int = 10,
        value_gate_p: float | None = 1e-3,
        late_fold_min_strength: float | None = 0.5,
        rare_tail: str = "predictive",
        partners_by_combined: bool = True,
        deviation_gate: bool = True,
        junk_bins: tuple[str, ...] = stats.JUNK_BINS,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.junk_bins = junk_bins
        self.deviation_gate = deviation_gate
        self.rare_tail = rare_tail
        self.partners_by_combined = partners_by_combined
        self.late_fold_min_strength = late_fold_min_strength
        self.min_presence_n = min_presence_n
        self.min_presence_own = min_presence_own
        self.value_gate_p = value_gate_p
        self.min_hu_hands = min_hu_hands
        self.min_flow_bb = min_flow_bb
        self.min_value_n = min_value_n
        self.min_test_hands = min_test_hands
        self.samples = samples
        self.max_unflagged = max_unflagged

    def fit(self, con: duckdb.DuckDBPyConnection) -> "ChipDumpingDetector":
        """Learn each player's own play towards everyone else: the card-aware value given, the junk,
        late-fold and receiver tests, the presence test with its explaining away, the chip and deviation flows.

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``dec_``, ``pairs_``, ``recv_``, ``pdec_``, ``presence_``, ``cont_by_``, ``dealt_by_``,
        ``flow_``, ``devflow_`` and ``missing_``."""
        self.dec_, pairs = gp.cached_pair_features(con, samples=self.samples, random_state=self.random_state)
        # own-baseline tests with each player's outlying partners left out of the baseline (stats.robust_own_baseline)
        self.pairs_ = (stats.replace_baseline_tests(pairs, self.dec_, alpha=self.alpha, rare_tail=self.rare_tail,
                                                    junk_bins=self.junk_bins)
                       if not pairs.is_empty() else pairs)
        self.recv_ = receiver_tests(self.dec_, alpha=self.alpha, late_fold_min_strength=self.late_fold_min_strength,
                                    rare_tail=self.rare_tail)
        self.pdec_ = preflop_decisions(con)
        state: dict = {}  # the first call's passes, reused by the second call below (presence_tests)
        self.presence_ = presence_tests(con, self.pdec_, alpha=self.alpha, min_n=self.min_presence_n,
                                        min_own=self.min_presence_own, state=state)
        # per player, for the evidence hands: their preflop continuations, and the hands they were dealt in
        self.cont_by_ = {k[0]: v for k, v in self.pdec_.filter(pl.col("cont")).select("player", "hand_id", "strength")
                         .partition_by("player", as_dict=True).items()} if not self.pdec_.is_empty() else {}
        dealt = con.sql("SELECT player, hand_id FROM seats WHERE dealt_in").pl()
        self.dealt_by_ = {k[0]: v.select("hand_id") for k, v in dealt.partition_by("player", as_dict=True).items()}
        self.flow_ = gp.cached_chip_flow(con)
        # the chips that moved in the hands where the giver's play deviates (the count tests' spots), for the gate
        self.devflow_ = deviation_flow(con, self.dec_, late_fold_min_strength=self.late_fold_min_strength)
        if self.partners_by_combined and not self.presence_.is_empty():
            # explaining away by the strongest evidence: the pairs the combined test finds (all five tests) join
            # the presence test's partners S, ranked by their combined p, and the presence test is made again. A
            # feeder's receiver with a thin presence baseline (not in S on presence alone) but strong heads-up
            # tests otherwise lends its effect to a table-mate (tuning mixed-275: linto_nuts1262, a real feeder,
            # flagged with tansorstar1165, all of whose 56 hands with linto had linto's receiver ranezu536 dealt in)
            t = self._combined(self.presence_)
            if "q_value" in t.columns:
                strong = t.filter(pl.col("q_value") <= self.alpha).select(
                    "player", pl.col("opponent").alias("partner"), p=pl.col("p_value"))
                if not strong.is_empty():
                    self.presence_ = presence_tests(con, self.pdec_, alpha=self.alpha, min_n=self.min_presence_n,
                                                    min_own=self.min_presence_own, partners=strong, state=state)
        self.missing_ = []
        known = self.dec_["equity"].is_not_null().mean() if not self.dec_.is_empty() else 0.0
        if (known or 0.0) < 0.5:
            self.missing_.append(
                "card-aware value given: both players' hole cards known in only "
                f"{(known or 0.0):.0%} of heads-up decisions (player view); chip flow, presence and showdown hands only; "
                "where the chips did not move, the value given cannot stand in for them (that test needs both hands)"
            )
        return self

    def _value_tests(self, pf: pl.DataFrame) -> pl.DataFrame:
        """Value given per heads-up hand to each opponent against the giver's own mean to the others.

        Robust baseline: a first pass (two-sided, BH at ``alpha``) finds the
        opponents a player treats unusually in either direction (a receiver's
        feeders, say); the second pass leaves them out of the player's baseline
        mean and variance, so one partner's planted play does not make every
        honest opponent look odd by contrast.
        """
        def test(t: pl.DataFrame, side: str) -> np.ndarray:
            vn = t["value_n"].fill_null(0).to_numpy()
            return stats.weighted_mean_test(
                t["value_w"].fill_null(0).to_numpy(), t["value_sq"].fill_null(0).to_numpy(),
                np.where(vn >= self.min_value_n, vn, 0), t["mean0"].fill_null(0).to_numpy(),
                t["var0"].fill_null(1).to_numpy(), t["n0"].fill_null(0).to_numpy(), side=side)

        def baseline(t: pl.DataFrame, me: pl.DataFrame) -> pl.DataFrame:
            t = t.drop([c for c in ("S", "S2", "N", "n0", "s0", "q0", "mean0", "var0") if c in t.columns])
            t = t.join(me, on="player", how="left").with_columns(
                n0=pl.col("N") - pl.when(pl.col("_out")).then(0).otherwise(pl.col("value_n")),
                s0=pl.col("S") - pl.when(pl.col("_out")).then(0.0).otherwise(pl.col("value_w")),
                q0=pl.col("S2") - pl.when(pl.col("_out")).then(0.0).otherwise(pl.col("value_sq")),
            )
            t = t.with_columns(mean0=pl.col("s0") / pl.col("n0").clip(1))
            return t.with_columns(var0=(pl.col("q0") / pl.col("n0").clip(1) - pl.col("mean0") ** 2).clip(1e-6))

        t = pf.with_columns(_out=pl.lit(False))
        me = t.group_by("player").agg(S=pl.col("value_w").sum(), S2=pl.col("value_sq").sum(), N=pl.col("value_n").sum())
        t = baseline(t, me)
        p2 = np.fmin(test(t, "greater"), test(t, "less")) * 2
        out = pl.Series(np.nan_to_num(stats.bh_qvalues(np.clip(p2, 0, 1)), nan=1.0) <= self.alpha)
        t = t.with_columns(_out=out)
        me = t.filter(~pl.col("_out")).group_by("player").agg(
            S=pl.col("value_w").sum(), S2=pl.col("value_sq").sum(), N=pl.col("value_n").sum())
        t = baseline(t, me)
        return t.with_columns(pl.Series("value_p", test(t, "greater"), nan_to_null=True)).drop("_out")

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per ordered pair (giver ``player``, receiver ``opponent``): the five tests' p-values
        combined by Fisher's method, Benjamini-Hochberg over the pairs that met often enough (independent
        filtering, Bourgon, Gentleman & Huber, PNAS 2010).

        Returns
        -------
        ``player``, ``opponent``, ``accounts``, ``tournaments``, ``p_value``, ``q_value``, ``score`` (-log10 q),
        the tests' figures, ``net_flow_bb`` and the deviation flow."""
        t = self._combined(self.presence_)
        if "q_value" not in t.columns:
            return t
        # candidates: every direction in which the chips moved, and every tested direction whatever the flow. A
        # feeder whose honest hands against its receiver won back more than it dumped (a small dump in a few
        # tournaments) leaves the flowing row to the receiver's side, whose tests look the wrong way: the dump
        # direction must stay a case (unflagged: a flag still needs the chips to have moved, ``threshold``)
        return t.filter((pl.col("net_flow_bb") > 0) | pl.col("q_value").is_not_null()).sort("score", descending=True)

    def _combined(self, presence: pl.DataFrame) -> pl.DataFrame:
        """Every ordered pair with its tests, chip flow, Fisher-combined ``p_value`` and BH ``q_value``."""
        pf = self.pairs_
        pres = presence.rename({"partner": "opponent"})
        if pf.is_empty() and pres.is_empty():
            return pl.DataFrame(schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                        "score": pl.Float64, "p_value": pl.Float64})
        t = self._value_tests(pf) if not pf.is_empty() else pf
        if not t.is_empty() and not self.recv_.is_empty():
            t = t.join(self.recv_, on=["player", "opponent"], how="left")
        # candidates: ordered pairs that met heads-up, and pairs seen by the presence test
        t = t.join(pres, on=["player", "opponent"], how="full", coalesce=True) if not t.is_empty() else pres
        flow = self.flow_.select("player", "opponent", pl.col("flow_bb").alias("_flow"), pl.col("hands").alias("flow_hands"))
        rev = self.flow_.select(pl.col("opponent").alias("player"), pl.col("player").alias("opponent"),
                                pl.col("flow_bb").alias("flow_back_bb"), pl.col("hands").alias("flow_back_hands"))
        t = t.join(flow, on=["player", "opponent"], how="left").join(rev, on=["player", "opponent"], how="left")
        devflow = getattr(self, "devflow_", None)
        if devflow is not None and not devflow.is_empty():
            t = t.join(devflow.drop("met_hands"), on=["player", "opponent"], how="left")
        for c in ("dev_hands", "dev_loss_hands"):
            t = t.with_columns((pl.col(c).fill_null(0) if c in t.columns else pl.lit(0)).cast(pl.Int64).alias(c))
        for c in ("dev_flow_bb", "dev_exp_bb"):
            t = t.with_columns((pl.col(c).fill_null(0.0) if c in t.columns else pl.lit(0.0)).cast(pl.Float64).alias(c))
        t = t.with_columns(
            net_flow_bb=pl.col("_flow").fill_null(0.0) - pl.col("flow_back_bb").fill_null(0.0),
            flow_hands=pl.col("flow_hands").fill_null(0),
            hu_hands=pl.col("hu_hands").fill_null(0) if "hu_hands" in t.columns else pl.lit(0),
        ).drop("_flow")
        for c in ("value_p", "junk_p", "fold_p", "pres_p", "value_w", "value_n", "mean0"):
            if c not in t.columns:
                t = t.with_columns(pl.lit(None, pl.Float64).alias(c))
        for c in ("n0", "junk_n0", "fold_n0", "base_n", "raggr_p", "raggr_n0", "lfold_p", "lfold_n0"):
            if c not in t.columns:
                t = t.with_columns(pl.lit(None, pl.Float64).alias(c))
        f = lambda c: t[c].to_numpy(allow_copy=True).astype(float)  # noqa: E731
        # a heads-up own-baseline test needs an own baseline: where the giver has (almost) no heads-up hands
        # against others, the "own" rate is the population's prior and a loose player would look like a feeder
        own = lambda p, n0, k: np.where(np.nan_to_num(f(n0)) >= k, f(p), np.nan)  # noqa: E731
        k = self.min_value_n
        p = stats.fisher_combine(own("value_p", "n0", k), own("junk_p", "junk_n0", k), own("lfold_p", "lfold_n0", k),
                                 own("raggr_p", "raggr_n0", k), f("pres_p"))
        # independent filtering (Bourgon, Gentleman & Huber, PNAS 2010): test only ordered pairs that played
        # enough heads-up hands or faced enough preflop decisions together; the filter ignores the p-values
        testable = (t["hu_hands"].to_numpy() >= self.min_test_hands) | (np.nan_to_num(f("pres_n")) >= self.min_presence_n)
        q = stats.bh_qvalues(np.where(testable, p, np.nan))
        t = t.with_columns(
            pl.Series("p_value", p, nan_to_null=True),
            pl.Series("q_value", q, nan_to_null=True),
            pl.Series("score", stats.score_from_q(q)),
            accounts=pl.concat_list("player", "opponent"),
            tournaments=pl.lit([], pl.List(pl.Utf8)),
            value_mean=pl.col("value_w") / pl.col("value_n").clip(1),
        )
        return t

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged``: q <= alpha and the chips moved (net flow at least ``min_flow_bb`` in at
        least ``min_hu_hands`` hands lost), or the value given is significant (:meth:`_value_moved`), or the chips
        moved in the deviation hands (:meth:`_deviation_moved`)."""
        for c, v in (("dev_flow_bb", 0.0), ("dev_exp_bb", 0.0), ("dev_loss_hands", 0)):
            if c not in scores.columns:
                scores = scores.with_columns(pl.lit(v).alias(c))
        moved = ((pl.col("net_flow_bb") >= self.min_flow_bb) & (pl.col("flow_hands") >= self.min_hu_hands)
                 | self._value_moved() | self._deviation_moved())
        return scores.with_columns(flagged=(pl.col("q_value").fill_null(1.0) <= self.alpha) & moved)

    def merge_group(self, best: dict[str, Any], members: list[dict[str, Any]], shape: str) -> dict[str, Any]:
        """A star's or ring's net flow: the sum of its flows."""
        best["net_flow_bb"] = sum(r["net_flow_bb"] for r in members)
        return best

    def _value_moved(self) -> pl.Expr:
        """The card-aware value given is significant at ``value_gate_p`` on enough hands on both sides of the test
        (null where the cards are unknown: never true there)."""
        if self.value_gate_p is None:
            return pl.lit(False)
        return ((pl.col("n0").fill_null(0) >= self.min_value_n) & (pl.col("value_n").fill_null(0) >= self.min_value_n)
                & (pl.col("value_p").fill_null(1.0) <= self.value_gate_p))

    def _deviation_moved(self) -> pl.Expr:
        """The chips moved in the deviation hands (:func:`deviation_flow`): A lost to B at least ``min_flow_bb`` more
        there than A's own rate in such hands against everyone else predicts (a rate below zero, a player who wins
        in such hands, counts as zero: the chips must have moved A -> B), losing to B in at least ``min_hu_hands``
        of them (never true where the columns are missing or the cards unknown)."""
        if not self.deviation_gate:
            return pl.lit(False)
        exp = pl.col("dev_exp_bb").fill_null(0.0).clip(lower_bound=0.0)
        return ((pl.col("dev_flow_bb").fill_null(0.0) - exp >= self.min_flow_bb)
                & (pl.col("dev_loss_hands").fill_null(0) >= self.min_hu_hands))

    def _flow_note(self, row: dict[str, Any], a: str, b: str) -> str:
        """What the chip flow says where it is below the flag's bar: why the case is not flagged, or why it is
        flagged all the same (the chips moved in the deviation hands, or the value given, cards known, is
        significant on its own)."""
        flow, fh = row.get("net_flow_bb") or 0.0, int(row.get("flow_hands") or 0)
        if flow >= self.min_flow_bb and fh >= self.min_hu_hands:
            return ""
        moved = f"the chips did not move from {a} to {b}: net {flow:.0f} bb in {fh} hands where {a} lost to {b}"
        dev, dexp = float(row.get("dev_flow_bb") or 0.0), float(row.get("dev_exp_bb") or 0.0)
        dh, dl = int(row.get("dev_hands") or 0), int(row.get("dev_loss_hands") or 0)
        in_dev = (f"{a} lost {dev:.0f} bb to {b} in the {dh} hands where {a} put chips in with a weak hand or folded a "
                  f"made hand on the turn or river to {b} (lost in {dl} of them; {a}'s own rate in such hands against "
                  f"others predicts {dexp:.0f} bb)")
        if row.get("flagged"):
            if self.deviation_gate and dev - max(dexp, 0.0) >= self.min_flow_bb and dl >= self.min_hu_hands:
                return (f" Flagged although {moved} over all their hands: {in_dev}; the ordinary hands won back what "
                        f"the deviating ones gave.")
            return (f" Flagged although {moved}: the value {a} gave {b} with the cards known is significant on its "
                    f"own (p = {row.get('value_p') or 1:.2g}, {int(row.get('value_n') or 0)} heads-up hands against "
                    f"{a}'s own play towards others); the realised chips carry the luck of the cards, the value does not.")
        gate = (f", or, with the cards known, the value given significant at p <= {self.value_gate_p:g} on at least "
                f"{self.min_value_n} heads-up hands" if self.value_gate_p is not None else "")
        if self.deviation_gate:
            gate += (f", or as much lost in the hands where {a}'s play deviates beyond {a}'s own rate there "
                     f"({in_dev})")
        return (f" Not flagged, {moved}; a flag needs at least {self.min_flow_bb:.0f} bb lost in at least "
                f"{self.min_hu_hands} hands{gate}.")

    def _evidence_hands(self, edges: list[list[str]], limit: int = 25) -> list[str]:
        """The dump hands, strongest first: heads-up hands where the giver handed the receiver at least
        one big blind of value (cards known), by value; then the giver's preflop calls or raises with
        the receiver dealt in, weakest starting hand first (the calls the giver folds elsewhere); then
        the rest of the heads-up hands with positive value."""
        d = None
        for a, b in edges:
            x = gp.decisions_of(self.dec_, [a]).filter(pl.col("opponent") == b)
            d = x if d is None else pl.concat([d, x])
        out: list[str] = []
        small: list[str] = []
        if d is not None and not d.is_empty():
            h = (
                d.filter(pl.col("value_given").is_not_null())
                .group_by("hand_id")
                .agg(v=pl.col("value_given").sum())
                .filter(pl.col("v") > 0)
                .sort(["v", "hand_id"], descending=[True, False])
            )
            out = h.filter(pl.col("v") >= 1.0)["hand_id"].to_list()
            small = h.filter(pl.col("v") < 1.0)["hand_id"].to_list()
        pres = []
        parts = []
        for a, b in edges:
            if a in self.cont_by_ and b in self.dealt_by_:
                x = self.cont_by_[a]
                parts.append(x.join(self.dealt_by_[b], on="hand_id", how="semi"))
        if parts:
            x = pl.concat(parts).sort(["strength", "hand_id"], nulls_last=True)
            pres = x["hand_id"].unique(maintain_order=True).to_list()
        seen: set[str] = set()
        ranked = []
        for hid in [*out, *pres, *small]:
            if hid not in seen:
                seen.add(hid)
                ranked.append(hid)
        return ranked[:limit]

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row of :meth:`threshold`: the value given with the cards known, the chips
        moved (overall and in the deviation hands), the count tests and the presence test, the dump hands
        strongest first; the benign note says why a row is (not) flagged by the flow.

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold`.

        Returns
        -------
        :class:`~detectors.base.Signal` (its ``extra`` holds the shape and the directed edges)."""
        edges = json.loads(row["edges"]) if row.get("edges") else [[row["player"], row["opponent"]]]
        a, b = row["player"], row["opponent"]
        vm, m0, n = row.get("value_mean") or 0.0, row.get("mean0") or 0.0, int(row.get("value_n") or 0)
        ev = [
            Evidence(
                name=f"value {a} gave {b} per heads-up hand (bb, cards known)",
                value=vm, baseline=m0, n=n, p_value=row.get("value_p"),
                text=f"{a} gave {b} {vm:+.2f} bb per hand over {n} heads-up hands (winsorised mean); {a} gives others {m0:+.2f} bb",
                sql=None,
            ),
            Evidence(
                name=f"chips {a} lost to {b} (bb, net)",
                value=float(row.get("net_flow_bb") or 0.0), n=int(row.get("hu_hands") or 0),
                text=f"net {row.get('net_flow_bb') or 0:.0f} bb moved from {a} to {b}",
                sql=gp.CHIP_FLOW_SQL,
            ),
        ]
        if row.get("dev_hands"):
            dev, dexp = float(row.get("dev_flow_bb") or 0.0), float(row.get("dev_exp_bb") or 0.0)
            dh, dl = int(row["dev_hands"]), int(row.get("dev_loss_hands") or 0)
            ev.append(Evidence(
                name=f"chips {a} lost to {b} in the hands where {a}'s play deviates (bb, net)",
                value=dev, baseline=dexp, n=dh,
                text=f"net {dev:.0f} bb moved from {a} to {b} in the {dh} hands where {a} put chips in with a weak "
                     f"hand or folded a made hand to {b} on the turn or river ({a} lost in {dl} of them); {a}'s own "
                     f"rate in such hands against others predicts {dexp:.0f} bb",
                sql=DEVIATION_FLOW_COUNTS_SQL,
            ))
        # the count tests: (column prefix, name, text with {a} {b} {obs} {n} {exp}, the SQL that reproduces the counts);
        # the names are filled in once, by str.format, so braces in an (attacker-chosen) name are never a template
        made = self.late_fold_min_strength
        count_tests = (
            ("junk", "{a} puts chips in against {b} with a weak hand",
             "{a} called/bet/raised {b} {obs} times in {n} weak-hand spots; own rate against others at the same street, "
             "price and hand strength predicts {exp:.1f}",
             gp.HU_COUNTS_SQL),
            ("fold", "{a} folds to {b}'s bets",
             "{a} folded to {b}'s bet {obs} times in {n} spots; own rate predicts {exp:.1f}", gp.HU_COUNTS_SQL),
            ("raggr", "{b} bets or raises into {a} heads-up after the flop",
             "{b} bet or raised {obs} times in {n} heads-up spots against {a} after the flop; {b}'s own rate against "
             "others, same street and hand strength, predicts {exp:.1f}", RECEIVER_COUNTS_SQL),
            ("lfold", "{a} folds to {b}'s turn and river bets" + (" with a made hand" if made else ""),
             "{a} folded to {b}'s bet heads-up on the turn or river {obs} times in {n} spots"
             + (f" holding a made hand (beating at least {made:.0%} of random holdings)" if made else "")
             + "; {a}'s own rate at the same street and hand strength predicts {exp:.1f}", RECEIVER_COUNTS_SQL),
        )
        for key, name, text, sql in count_tests:
            if not row.get(f"{key}_n"):
                continue
            obs, exp, k = float(row.get(f"{key}_obs") or 0), float(row.get(f"{key}_exp") or 0), int(row[f"{key}_n"])
            ev.append(Evidence(name=name.format(a=a, b=b), value=obs, baseline=exp, n=k, p_value=row.get(f"{key}_p"),
                               text=text.format(a=a, b=b, obs=int(obs), n=k, exp=exp), sql=sql))
        no_own_baseline = row.get("pres_p") is None and float(row.get("own_n") or 0) < self.min_presence_own
        if row.get("pres_n"):
            pk, pn, pe = float(row.get("pres_k") or 0), float(row["pres_n"]), float(row.get("pres_e") or 0)
            bn, bk = float(row.get("base_n") or 0), float(row.get("base_k") or 0)
            own = float(row.get("own_n") or 0)
            untested = (f"; not tested: {a} made only {int(own)} such decisions without {b}, too few for a baseline of "
                        f"{a}'s own" if no_own_baseline else "")
            ev.append(Evidence(
                name=f"{a} continues preflop facing a bet with {b} dealt in",
                value=pk / pn, baseline=pe / pn, n=int(pn), p_value=row.get("pres_p"),
                text=f"{a} called or raised {int(pk)} of {int(pn)} preflop bets with {b} dealt in; {a}'s own rate without {b}, "
                     f"at the same hand strength, price and stack ({int(bk)} of {int(bn)} elsewhere; thin bins shrunk towards "
                     f"the population's rate moved by {a}'s own looseness), predicts {pe:.1f}{untested}",
                sql=PRESENCE_COUNTS_SQL,
            ))
        shape = row.get("shape", "pair")
        accounts = list(row["accounts"])
        if shape == "star":
            hub = max(set(x for e in edges for x in e), key=lambda x: sum(x in e for e in edges))
            head = f"star around {hub}: {len(edges)} flagged flows ({', '.join(f'{x}->{y}' for x, y in edges)})"
        elif shape == "ring":
            head = f"ring of {len(accounts)} ({', '.join(accounts)})"
        else:
            head = f"{a} -> {b}"
        summary = (
            f"{head}: "
            + (f"{a} gave {b} {vm:+.2f} bb per heads-up hand with the cards known (own baseline {m0:+.2f}) over {n} hands; "
               if n else "")
            + (f"called/raised {int(row.get('pres_k') or 0)} of {int(row['pres_n'])} preflop bets with {b} dealt in "
               + (f"(no baseline of {a}'s own without {b}: not tested); " if no_own_baseline else
                  f"(own rate without {b} predicts {row.get('pres_e') or 0:.1f}); ") if row.get("pres_n") else "")
            + f"net {row.get('net_flow_bb') or 0:.0f} bb moved; q = {row.get('q_value') or 1:.2g}"
        )
        return Signal(
            kind=self.kind,
            accounts=accounts,
            score=float(row["score"]),
            flagged=bool(row["flagged"]),
            summary=summary,
            tournaments=gp.tournaments_of(self.dec_, hands := self._evidence_hands(edges)),
            hands=hands,
            evidence=ev,
            benign=(
                "Big honest losses (coolers) and loose players: value is judged per decision with the cards known and "
                f"against {a}'s own play versus everyone else, so a strong hand that loses is not a gift."
                + self._flow_note(row, a, b)
            ),
            p_value=row.get("p_value"),
            extra={"shape": shape, "edges": edges, "q_value": row.get("q_value"),
                   "sql_params": {"player": a, "opponent": b}},
        )
