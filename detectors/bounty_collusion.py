"""Bounty collusion: partners ganging up on short stacks in knockout tournaments.

Method
------
House rules forbid agreeing to eliminate a player for the bounty: partners
both call a short stack's all-in (often with hands that could not call
alone), then check the side pot down so that the better of their hands takes
pot and bounty. For each knockout hand and each all-in target, every other
player who could still act is an opportunity
(:func:`detectors.features.gameplay.bounty_spots`). Per unordered pair:

1. *joint contests* of the same target against each player's own contest
   rate (rescaled per spot); Poisson tail;
2. *weak joint contests* (cards known) against each player's weak-call rate;
3. *checked-down side pots* against the population's own check-down rate;
4. *presence*: preflop continuations while a short bounty target and the
   partner are in, against the player's own rate with others in, in the same
   strength, price and position cells: the exact tail of a sum of
   beta-binomials with a logit-normal tournament effect (Breslow & Clayton
   1993; :func:`detectors.features.gameplay.overdispersed_sum_sf`), each
   player's prior centred on their own looseness (Gelman & Hill 2007);
5. *wide calls* (cards known): the calls where the own baseline folds at
   least 70 %, against the Poisson-binomial of the own rates
   (:func:`detectors.features.gameplay.bounty_wide_calls`); and the *rest of
   the calls*, joined to it by Fisher's method;
6. *bounty passing* (:func:`detectors.features.gameplay.bounty_passing`): the
   target is the partner. Calls of the other's short-stacked all-in with hands
   the caller's own baseline folds to other short shovers (hand decile, pot
   odds, own seat and the shover's seat), and shoves with the other yet to
   act with hands the shover's own baseline, in the same tournament, does not
   shove; exact Poisson-binomial tails joined by Fisher's method.

A bystander's decisions with a player's strongest partner in are counted for
that pair only (:func:`detectors.features.gameplay.bounty_unshadowed`). The
four views (wide calls, all calls, presence, the all-in tests) are combined
by a weighted Bonferroni (``test_weights``) into the *main family*; weighted Benjamini–Hochberg
(Genovese, Roeder & Wasserman 2006; weights from the knockout events shared,
:meth:`BountyCollusionDetector.bh_weights`) controls it over the pairs that
could contest at least ``min_spots`` targets or faced ``min_decisions``
decisions together and met in at least ``min_events`` knockout events
(independent filtering, Bourgon, Gentleman & Huber, PNAS 2010) at
``alpha * (1 - pass_share)``. Bounty passing is a second family at
``alpha * pass_share``, with no events filter (a gang that passed bounties in
one tournament is tested): Gilbert's discrete BH (Stat. Probab. Lett. 2005)
over the pairs whose calls could reach significance at all (Tarone,
Biometrics 1990; :func:`detectors.features.gameplay.discrete_bh`). The two
levels sum to ``alpha``, which bounds the false-discovery rate of the union;
the pair's q-value is min(q_main / (1 - pass_share), q_pass / pass_share)
(:meth:`BountyCollusionDetector._passing_q`). A pair is flagged
(:meth:`BountyCollusionDetector.flag`) when that q-value is at most ``alpha``,
nothing else. Flagged pairs are grouped into rings
(:mod:`detectors.graphs`). This is the "collusive
opportunity" analysis of Smed, Knuutila & Hakonen (2006) made into a pairwise
own-baseline test.

Benign look-alikes considered, each with its figure in the case: bounty
hunters who chase bounties against everyone (each player's own continuation
rate with other players in, beside the population's: the tests hold each
player to their own; in bounty passing, their calls of other short stacks'
shoves), a desperate short stack shoving wide (the same player's shoves with
others in, in the same tournament), dry side pots checked down (the population's rate),
regulars at many final tables (own contest rates), tiny all-ins everyone
calls (per-spot rescaling).

Score: −log10 q (ties broken by the p-value, at most +0.01), comparable within
the kind. The figures behind each rule are in docs/measurements.md ("Detector
notes moved from docstrings").
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl
from scipy import stats as _st

import duckdb
from detectors import stats
from detectors.base import HAND_INPUTS, Evidence, PairDetector, Signal
from detectors.features import gameplay as gp

EVENTS_SQL = """
-- per unordered pair: the knockout tournaments in which both were dealt in at one table, and the hands
WITH ko AS (SELECT DISTINCT hand_id FROM seats WHERE bounty IS NOT NULL AND bounty > 0),
s AS (SELECT s.hand_id, h.tournament_id, s.player FROM seats s JOIN ko USING (hand_id) JOIN hands h USING (hand_id)
      WHERE s.dealt_in)
SELECT a.player, b.player AS opponent, count(DISTINCT a.tournament_id) AS events, count(*) AS events_hands
FROM s a JOIN s b ON a.hand_id = b.hand_id AND a.player < b.player
GROUP BY ALL
"""

WIDE_COLS = ("wc_n", "wc_k", "wc_e", "wc_p", "wc_a_n", "wc_a_k", "wc_a_e", "wc_b_n", "wc_b_k", "wc_b_e",
             "nw_n", "nw_k", "nw_e", "nw_p")

SPOTS_EVIDENCE_SQL = """
-- knockout hands where $player and $opponent both put chips in against an all-in target
WITH allin AS (
    SELECT a.hand_id, a.player AS target, min(a.seq) AS s_c FROM actions a
    WHERE a.is_all_in AND a.player NOT IN ($player, $opponent) GROUP BY ALL
), vol AS (
    SELECT hand_id, player,
           coalesce(min(seq) FILTER (WHERE action IN ('call', 'bet', 'raise')), 2147483647)
             < coalesce(min(seq) FILTER (WHERE action = 'fold'), 2147483647) AS contested
    FROM actions GROUP BY ALL
)
SELECT ai.hand_id, ai.target, bo.winner AS bounty_winner
FROM allin ai
JOIN vol a ON a.hand_id = ai.hand_id AND a.player = $player AND a.contested
JOIN vol b ON b.hand_id = ai.hand_id AND b.player = $opponent AND b.contested
LEFT JOIN bounties bo ON bo.hand_id = ai.hand_id AND bo.eliminated = ai.target
WHERE ai.hand_id IN (SELECT hand_id FROM seats WHERE bounty > 0)
ORDER BY ai.hand_id
"""


class BountyCollusionDetector(PairDetector):
    """Pairs that jointly contest all-in bounty targets beyond chance, weakly, and check the side pot down."""

    kind = "bounty_collusion"
    inputs = {**HAND_INPUTS, "seats": (*HAND_INPUTS["seats"], "bounty"),
              "bounties": ("hand_id", "tournament_id", "winner", "eliminated", "amount")}

    def __init__(self, *, alpha: float = 0.05, random_state: int = 0, max_unflagged: int = 300,
                 min_spots: int = 3, min_decisions: int = 5, short_bb: float = 20.0, min_events: int = 4,
                 wide_rate: float = 0.3, shadow_p: float = 0.01,
                 event_scale: float | None = 40.0, event_power: float = 3.0, test_weights: tuple[float, float, float, float] = (0.45, 0.45, 0.05, 0.05),
                 context_bins: tuple[str, ...] = gp.BOUNTY_CONTEXT_BINS,
                 looseness_tau: float | None = gp.BOUNTY_LOOSENESS_TAU, pass_share: float = 0.5) -> None:
        super().__init__(alpha=alpha, random_state=random_state)  # the false-discovery rate of the flag: q <= alpha
        self.context_bins = tuple(context_bins)
        self.looseness_tau = looseness_tau
        self.test_weights = test_weights
        self.event_scale = event_scale
        self.event_power = event_power
        self.shadow_p = shadow_p
        self.wide_rate = wide_rate
        self.min_events = min_events
        self.min_spots = min_spots
        self.min_decisions = min_decisions
        self.short_bb = short_bb
        self.max_unflagged = max_unflagged
        self.pass_share = pass_share  # the share of alpha spent on the bounty-passing family (see score)

    def fit(self, con: duckdb.DuckDBPyConnection) -> "BountyCollusionDetector":
        """Learn the population's bounty spots: every all-in target's opportunities, the presence and
        wide-call decisions with each player's own rates (looseness priors, tournament effects), the events each
        pair shared and the population's check-down rate.

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``spots_``, ``pairs_``, ``presence_``, ``events_``, ``passing_``, ``cards_known_``,
        ``checkdown_rate_``, ``pop_cont_rate_`` and ``missing_``."""
        rows = gp.bounty_presence(con, max_bb=self.short_bb)
        # the population's continuation rate against short bounty targets (per player and hand): what a bounty
        # hunter's own rate is set beside in the case
        self.pop_cont_rate_ = (float(rows.unique(["hand_id", "player"])["cont"].mean()) if not rows.is_empty()
                               else float("nan"))
        self.spots_ = gp.bounty_spots(con)
        self.missing_ = []
        # player view: the cards known are mostly those shown down, i.e. of the players who did NOT fold; a
        # fold-versus-call test on them would compare calls with calls. The wide-call test needs the cards of
        # (nearly) every decision: without them it is not made (and said so)
        known = rows["strength"].is_not_null().mean() if not rows.is_empty() else 0.0
        self.cards_known_ = float(known or 0.0)
        wide_ok = self.cards_known_ >= 0.5
        # the bystanders of a gang's hands: drop the decisions and spots that each player's strongest partner explains
        ctx, lt = self.context_bins, self.looseness_tau
        wide = gp.bounty_wide_calls(rows if wide_ok else rows.head(0), max_rate=self.wide_rate, hands=False, context=ctx,
                                    looseness_tau=lt, without_partner=True)
        rows = gp.bounty_unshadowed(rows, wide, max_p=self.shadow_p)
        self.pairs_ = gp.bounty_pairs(self.spots_, best=gp.bounty_strongest_partner(wide, max_p=self.shadow_p))
        # the rest of the decisions (own baseline continues at least wide_rate of the time): disjoint from the
        # wide calls', so its p-value is independent of theirs under the null and Fisher's method can join them
        # (the cells of the rows left counted once for both rate ranges)
        src = rows if wide_ok else rows.head(0)
        cells = gp.bounty_wide_cells(src, context=ctx, looseness_tau=lt, without_partner=True)
        rest = gp.bounty_wide_calls(src, min_rate=self.wide_rate, max_rate=1.01, hands=False, cells=cells)
        self.presence_ = gp.bounty_presence_unordered(gp.bounty_presence_pairs(rows, context=ctx, looseness_tau=lt)).join(
            gp.bounty_wide_calls(src, max_rate=self.wide_rate, cells=cells),
            on=["player", "opponent"], how="left").join(
            rest.select("player", "opponent", nw_n="wc_n", nw_k="wc_k", nw_e="wc_e", nw_p="wc_p"),
            on=["player", "opponent"], how="left")
        self.events_ = con.sql(EVENTS_SQL).pl().cast({"events": pl.Int64, "events_hands": pl.Int64})
        # bounty passing: the partner's short-stacked raise called, shoves with the partner in (cards known)
        self.passing_ = (gp.bounty_passing(con, max_bb=self.short_bb, wide_rate=self.wide_rate, context=ctx,
                                           looseness_tau=lt) if wide_ok else pl.DataFrame())
        if not wide_ok and not rows.is_empty():
            self.missing_.append(f"wide-call test (and the rest of the calls joined with it) and bounty-passing tests: hole cards known at only "
                                 f"{self.cards_known_:.0%} of the decisions against short bounty targets (player view)")
        if self.spots_.is_empty():
            self.missing_.append("no knockout hands with an all-in: nothing to test")
        else:
            known = self.spots_["strength"].is_not_null().mean() or 0.0
            if known < 0.5:
                self.missing_.append(
                    f"weak-call test: hole cards known for only {known:.0%} of the players at all-in spots (player view)"
                )
        jp = self.pairs_["joint_postflop"].sum() if not self.pairs_.is_empty() else 0
        cd = self.pairs_["checked_down"].sum() if not self.pairs_.is_empty() else 0
        self.checkdown_rate_ = float((cd + 1) / (jp + 2))
        return self

    def _candidates(self) -> pl.DataFrame:
        """Pairs with a joint all-in contest, outer-joined with pairs with enough decisions together (presence test)."""
        t = self.pairs_.filter(pl.col("joint") > 0) if not self.pairs_.is_empty() else self.pairs_
        pres = self.presence_.filter(pl.col("pres_n") >= self.min_decisions)
        passing = self.passing_.filter(pl.col("tc_n") > 0) if not self.passing_.is_empty() else self.passing_
        if t.is_empty() and pres.is_empty() and passing.is_empty():
            return t
        # one path whichever side is empty: the presence columns exist (null) where no pair has enough decisions
        for extra in (pres, passing):
            if not extra.is_empty():
                t = extra if t.is_empty() else t.join(extra, on=["player", "opponent"], how="full", coalesce=True)
        zeros = ["spots", "joint", "expected", "weak_joint", "weak_expected", "joint_postflop", "checked_down", "bounties_won"]
        lists = ["tournaments", "hands", "won_hands", "cd_hands", "pres_tournaments", "pres_hands", "tc_hands", "sh_hands",
                 "pass_tournaments"]
        t = t.with_columns(
            [pl.col(c).fill_null(0) if c in t.columns else pl.lit(0).alias(c) for c in zeros]
            + [pl.col(c).fill_null(pl.lit([], pl.List(pl.Utf8))) if c in t.columns else pl.lit([], pl.List(pl.Utf8)).alias(c) for c in lists]
            + [pl.lit(None, pl.Float64).alias(c) for c in ("wide_a_p", "wide_b_p", "wide_a", "wide_a_n", "wide_b",
                                                           "wide_b_n", "wide_a_base", "wide_b_base", *gp.PASSING_COLS)
               if c not in t.columns]
        )
        t = t.join(self.events_, on=["player", "opponent"], how="left").with_columns(
            pl.col("events", "events_hands").fill_null(0))
        t = t.with_columns([pl.lit(None, pl.Float64).alias(c) for c in WIDE_COLS if c not in t.columns]
                           + ([] if "wc_hands" in t.columns else [pl.lit([], pl.List(pl.Utf8)).alias("wc_hands")]))
        t = t.with_columns(pl.col("wc_hands").fill_null(pl.lit([], pl.List(pl.Utf8))))
        # the case's tournaments: where they contested together, else where the presence test saw them
        return t.with_columns(tournaments=pl.when(pl.col("tournaments").list.len() > 0).then("tournaments")
                              .when(pl.col("pres_tournaments").list.len() > 0).then("pres_tournaments")
                              .otherwise("pass_tournaments"))

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per unordered pair: the joint-contest, weak-contest, check-down, presence, wide-call
        and rest-of-calls tests combined by a weighted Bonferroni, weighted Benjamini-Hochberg over the pairs
        that met in enough knockout events (weights from the events shared, :meth:`bh_weights`).

        Returns
        -------
        ``player``, ``opponent``, ``accounts``, ``tournaments``, ``p_value``, ``q_value`` (the two families',
        :meth:`_passing_q`; ``q_main`` and ``q_pass`` each family's own), ``score`` and the tests' figures and evidence
        hands."""
        t = self._candidates()
        if t.is_empty():
            return pl.DataFrame(schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                        "score": pl.Float64, "p_value": pl.Float64, "player": pl.Utf8,
                                        "opponent": pl.Utf8, "q_value": pl.Float64, "joint": pl.Int64,
                                        "bounties_won": pl.Int64})
        f = lambda c: (t[c] if c in t.columns else pl.Series([None] * len(t), dtype=pl.Float64)).cast(pl.Float64).to_numpy(allow_copy=True)  # noqa: E731
        p_joint = np.where(f("joint") > 0, np.clip(_st.poisson.sf(f("joint") - 1, np.maximum(f("expected"), 1e-9)), 1e-300, 1), np.nan)
        wj, we = f("weak_joint"), f("weak_expected")
        p_weak = np.where(we > 0, np.clip(_st.poisson.sf(wj - 1, np.maximum(we, 1e-9)), 1e-300, 1), np.nan)
        p_weak = np.where(np.isnan(wj), np.nan, p_weak)
        jp = f("joint_postflop")
        p_cd = np.where(jp > 0, stats.binom_tail(f("checked_down"), jp, self.checkdown_rate_), np.nan)
        p_wide = stats.min_p_bonferroni(f("wide_a_p"), f("wide_b_p"))
        pn = np.nan_to_num(f("pres_n"))
        p_pres = np.where(pn >= self.min_decisions, f("pres_p"), np.nan)
        # the all-in tests (Fisher) and the presence test are two views of one deviation: the better of the two,
        # Bonferroni-corrected (a pair seen only by one of them keeps that one's p-value)
        # wide calls: continuations with the partner in where the player's own baseline folds (cards known)
        p_wc = f("wc_p")
        # every other continuation with the partner in (own baseline continues >= 30 %): disjoint decisions, so
        # Fisher's method joins it with the wide calls (a gang's fold turned into a call is often a middling hand)
        p_nw = f("nw_p")
        p_all = np.where(np.isnan(p_wc) & np.isnan(p_nw), np.nan, stats.fisher_combine(p_wc, p_nw))
        # four views of one deviation, combined by weighted Bonferroni (valid under any dependence): most of the
        # error budget to the wide calls alone and to the wide calls with the rest (cards known); without cards
        # (player view) presence and the all-in tests share it
        p = stats.weighted_bonferroni([p_wc, p_all, p_pres, stats.fisher_combine(p_joint, p_weak, p_cd, p_wide)],
                                      list(self.test_weights))
        # independent filtering: only pairs that could both contest at least min_spots targets, or that
        # faced at least min_decisions preflop decisions with the other still in against a short bounty target,
        # and that shared knockout tables in at least min_events tournaments
        testable = ((f("spots") >= self.min_spots) | (pn >= self.min_decisions)) & (f("events") >= self.min_events)
        pt = np.where(testable, p, np.nan)
        # weighted BH: the error budget goes to the pairs seated together in more knockout tournaments (the
        # opportunity a gang needs, counted before looking at what they did); weights average 1 over the tested
        w = self.bh_weights(f("events"), testable)
        q_main = stats.bh_qvalues(np.where(testable, np.minimum(1.0, pt / np.maximum(w, 1e-300)), np.nan))
        q_pass, q, p = self._passing_q(q_main, p, f("pass_p"), f("tc_min"))
        return t.with_columns(
            pl.Series("p_joint", p_joint), pl.Series("p_weak", p_weak, nan_to_null=True),
            pl.Series("p_checkdown", p_cd, nan_to_null=True), pl.Series("p_wide", p_wide, nan_to_null=True),
            pl.Series("p_presence", p_pres, nan_to_null=True), pl.Series("p_wide_calls", p_wc, nan_to_null=True),
            pl.Series("p_rest_calls", p_nw, nan_to_null=True), pl.Series("p_all_calls", p_all, nan_to_null=True),
            pl.Series("p_value", p, nan_to_null=True), pl.Series("q_value", q, nan_to_null=True),
            pl.Series("bh_weight", np.where(testable, w, np.nan), nan_to_null=True),
            pl.Series("q_main", q_main, nan_to_null=True), pl.Series("q_pass", q_pass, nan_to_null=True),
            # −log10 q, ties (BH q-values saturate at 1) broken by the p-value: at most +0.01
            pl.Series("score", stats.score_from_q(q) + 0.01 * np.nan_to_num(np.minimum(-np.log10(np.clip(p, 1e-30, 1.0)), 30.0)) / 30.0),
            accounts=pl.concat_list("player", "opponent"),
        ).sort("score", descending=True)

    def _passing_q(self, q_main: np.ndarray, p_main: np.ndarray, p_pass: np.ndarray,
                   p_min: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bounty-passing family and the one q-value of a pair.

        The passing tests (:func:`detectors.features.gameplay.bounty_passing`) are a second family with their own
        false-discovery control at ``alpha * pass_share``: Gilbert's discrete BH (:func:`~detectors.features.gameplay.
        discrete_bh`) over the pairs whose calls of the other's short raise could reach it, which needs no
        ``min_events`` (a pair that passed a bounty in one tournament is tested). The main family (``q_main``) keeps
        ``alpha * (1 - pass_share)``. The FDR of the union of two sets of rejections is at most the sum of the two
        levels: flagging when either family's q is within its share controls it at ``alpha``. Returns the passing
        family's q-values, the pair's q-value min(q_main / (1 - pass_share), q_pass / pass_share) (at most 1) and its
        p-value (the family's that gave that q)."""
        s = float(self.pass_share)
        if s <= 0:
            return np.full(len(q_main), np.nan), q_main, p_main
        q_pass = gp.discrete_bh(p_pass, p_min, self.alpha * s)
        a = np.nan_to_num(q_main, nan=np.inf) / max(1.0 - s, 1e-12)
        b = np.nan_to_num(q_pass, nan=np.inf) / s
        q = np.minimum(np.minimum(a, b), 1.0)
        q = np.where(np.isfinite(a) | np.isfinite(b), q, np.nan)
        p = np.where(b < a, p_pass, p_main)
        return q_pass, q, p

    def bh_weights(self, events: np.ndarray, testable: np.ndarray) -> np.ndarray:
        """Prior weights of the weighted Benjamini–Hochberg procedure (Genovese, Roeder & Wasserman 2006).

        ``min(1, (events / event_scale)^event_power)`` rescaled to mean 1 over the tested pairs, where ``events`` is the
        number of knockout tournaments in which the pair was dealt in together at one table: a count of
        opportunities fixed before their play is looked at (as the ``min_events`` filter), so under the null the
        p-values are independent of it and the false-discovery rate stays controlled. ``event_scale=None``: equal
        weights (plain BH).
        """
        ok = testable & np.isfinite(events)
        if self.event_scale is None or not ok.any():
            return np.where(ok, 1.0, 0.0)
        raw = np.where(ok, np.minimum(1.0, (np.nan_to_num(events) / self.event_scale) ** self.event_power), 0.0)
        if raw.sum() <= 0:
            return np.where(ok, 1.0, 0.0)
        return raw * ok.sum() / raw.sum()

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged``: the q-value (weighted Benjamini-Hochberg over the testable pairs,
        :meth:`score`) at most ``alpha``; a pair without a q-value (not testable) is not flagged."""
        return scores.with_columns(flagged=pl.col("q_value").fill_null(1.0) <= self.alpha)

    def merge_group(self, best: dict[str, Any], members: list[dict[str, Any]], shape: str) -> dict[str, Any]:
        """A ring's tournaments and evidence hands: the union of its pairs' (the wide calls strongest pair first)."""
        best["tournaments"] = sorted({x for r in members for x in r["tournaments"]})
        best["hands"] = sorted({x for r in members for x in r["hands"]})
        best["won_hands"] = sorted({x for r in members for x in r["won_hands"]})
        best["cd_hands"] = sorted({x for r in members for x in r["cd_hands"]})
        best["pres_hands"] = sorted({x for r in members for x in (r.get("pres_hands") or [])})
        for c in ("tc_hands", "sh_hands"):
            best[c] = list(dict.fromkeys(x for r in sorted(members, key=lambda r: -r["score"]) for x in (r.get(c) or [])))
        # the wide calls of the ring, strongest pair's first, each pair's least likely first
        best["wc_hands"] = list(dict.fromkeys(x for r in sorted(members, key=lambda r: -r["score"])
                                              for x in (r.get("wc_hands") or [])))
        return best

    def _evidence_hands(self, row: dict[str, Any]) -> list[str]:
        """The pair's evidence hands, strongest first: the calls their own baseline folds (least likely first), then
        bounty taken and side pot checked down, then bounty taken, then the other joint contests and presence hands;
        the bounty-passing hands (the other's short raise called, shoves with the other in) beside the first calls,
        before them when that family made the flag."""
        # strongest first: bounty taken by the pair and side pot checked down, then bounty, then the rest
        won, cd, allh = set(row.get("won_hands") or []), set(row.get("cd_hands") or []), list(row.get("hands") or [])
        joint_hands = set(allh)
        # then the hands where one of them kept playing against a short bounty target with the other still in
        allh = sorted(joint_hands | set(row.get("pres_hands") or []))
        hands = sorted(allh, key=lambda h: (-(h in won) - (h in cd) - (h in joint_hands), h))
        # first of all: the calls their own baseline folds, least likely first, and the bounty-passing hands (first
        # when that family made the flag)
        passing = [*(row.get("tc_hands") or []), *(row.get("sh_hands") or [])]
        wide = list(row.get("wc_hands") or [])
        first = [*passing, *wide] if self._by_passing(row) else [*wide, *passing]
        return list(dict.fromkeys([*first, *hands]))

    def _by_passing(self, row: dict[str, Any]) -> bool:
        """Whether the bounty-passing family gave the pair its q-value (see :meth:`_passing_q`)."""
        qp, qm = row.get("q_pass"), row.get("q_main")
        s = float(self.pass_share)
        return qp is not None and s > 0 and (qm is None or qp / s < qm / max(1.0 - s, 1e-12))

    def _call_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The wide calls and the rest of the calls against short bounty targets with the partner in, pooled and per
        player, against their own rates."""
        a, b = row["player"], row["opponent"]
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        return [
            Evidence(
                name="calls against short bounty targets that their own baseline folds",
                value=g("wc_k"), baseline=g("wc_e"), n=int(g("wc_n")), p_value=row.get("p_wide_calls"),
                text=f"with the other still in, they called or raised {int(g('wc_k'))} times in {int(g('wc_n'))} preflop "
                     f"decisions against a short bounty target with a hand and price at which they fold at least "
                     f"{100 * (1 - self.wide_rate):.0f}% of the time without the other; their own rates at the same hand "
                     f"strength (decile), price and position predict {g('wc_e'):.1f}",
                sql=gp.BOUNTY_PRESENCE_SQL,
            ),
            Evidence(
                name="other continuations against short bounty targets with the partner in",
                value=g("nw_k"), baseline=g("nw_e"), n=int(g("nw_n")), p_value=row.get("p_rest_calls"),
                text=f"in the other {int(g('nw_n'))} such decisions (hand and price at which their own baseline continues "
                     f"at least {100 * self.wide_rate:.0f}% of the time) they continued {int(g('nw_k'))} times, "
                     f"{g('nw_e'):.1f} predicted by their own rates; with the calls above (Fisher's method, disjoint "
                     f"decisions) p = {row.get('p_all_calls') if row.get('p_all_calls') is not None else float('nan'):.2g}",
                sql=gp.BOUNTY_PRESENCE_SQL,
            ),
            *(
                Evidence(
                    name=f"{x} calls short bounty targets wide when {y} is in",
                    value=g(f"wc_{k}_k"), baseline=g(f"wc_{k}_e"), n=int(g(f"wc_{k}_n")),
                    text=f"{x}: {int(g(f'wc_{k}_k'))} calls in {int(g(f'wc_{k}_n'))} such decisions with {y} in, "
                         f"{g(f'wc_{k}_e'):.1f} expected from {x}'s own rates",
                )
                for x, y, k in ((a, b, "a"), (b, a, "b"))
            ),
        ]

    def _allin_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The all-in tests: targets contested together, with a weak hand, per player, side pots checked down,
        bounties taken."""
        a, b = row["player"], row["opponent"]
        joint, exp = int(row["joint"]), float(row["expected"])
        return [
            Evidence(
                name="all-in targets contested together", value=float(joint), baseline=exp, n=int(row["spots"]),
                p_value=row.get("p_joint"),
                text=f"{a} and {b} both called {joint} all-in short stacks in {int(row['spots'])} spots where both could; "
                     f"their own calling rates predict {exp:.1f}",
                sql=SPOTS_EVIDENCE_SQL,
            ),
            Evidence(
                name="joint contests with a weak hand", value=float(row.get("weak_joint") or 0),
                baseline=float(row.get("weak_expected") or 0), n=joint, p_value=row.get("p_weak"),
                text=f"{int(row.get('weak_joint') or 0)} of those with one of them holding a bottom-half starting hand; "
                     f"their own weak-call rates predict {row.get('weak_expected') or 0:.1f}",
            ),
            *(
                Evidence(
                    name=f"{x} calls all-ins with a bottom-half hand when {y} is in",
                    value=float(row.get(f"wide_{k}") or 0) / max(1, int(row.get(f"wide_{k}_n") or 0)),
                    baseline=row.get(f"wide_{k}_base"), n=int(row.get(f"wide_{k}_n") or 0), p_value=row.get(f"wide_{k}_p"),
                    text=f"{x} contested with a bottom-half hand in {int(row.get(f'wide_{k}') or 0)} of {int(row.get(f'wide_{k}_n') or 0)} spots "
                         f"with {y} in; {x}'s rate elsewhere {100 * (row.get(f'wide_{k}_base') or 0):.0f}%",
                )
                for x, y, k in ((a, b, "a"), (b, a, "b"))
            ),
            Evidence(
                name="side pots checked down", value=float(row.get("checked_down") or 0),
                baseline=self.checkdown_rate_ * float(row.get("joint_postflop") or 0), n=int(row.get("joint_postflop") or 0),
                p_value=row.get("p_checkdown"),
                text=f"side pot checked down in {int(row.get('checked_down') or 0)} of {int(row.get('joint_postflop') or 0)} that saw a flop; "
                     f"population rate {self.checkdown_rate_:.0%}",
            ),
            Evidence(
                name="bounties taken by the pair", value=float(row.get("bounties_won") or 0), n=joint,
                text=f"one of them took the bounty in {int(row.get('bounties_won') or 0)} of the {joint}",
            ),
        ]

    def _presence_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The presence test: continuations against a short bounty target with the partner still in, pooled and per
        player, against their own rates with other players in."""
        a, b = row["player"], row["opponent"]
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        return [
            Evidence(
                name="preflop continuations against a short bounty target with the partner still in",
                value=g("pres_k"), baseline=g("pres_e"), n=int(g("pres_n")), p_value=row.get("p_presence"),
                text=f"facing a bet with a bounty target of at most {self.short_bb:.0f} big blinds still in, they called or "
                     f"raised {int(g('pres_k'))} times in {int(g('pres_n'))} decisions with the other still in the hand; "
                     f"their own rates with other players still in, at the same hand strength, price and position, predict {g('pres_e'):.1f}",
                sql=gp.BOUNTY_PRESENCE_SQL,
            ),
            *(
                Evidence(
                    name=f"{x} keeps playing against short bounty targets when {y} is still in",
                    value=g(f"{k}_k") / max(1.0, g(f"{k}_n")), baseline=g(f"{k}_e") / max(1.0, g(f"{k}_n")), n=int(g(f"{k}_n")),
                    text=f"{x}: {int(g(f'{k}_k'))} of {int(g(f'{k}_n'))} with {y} in (own rate elsewhere {100 * g(f'{k}_own'):.0f}%, "
                         f"{g(f'{k}_e'):.1f} expected at equal strength and price)",
                )
                for x, y, k in ((a, b, "a"), (b, a, "b"))
            ),
        ]

    def _passing_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The bounty-passing tests: the other's short-stacked raise called, and shoves with the other in, with hands
        at which the player's own baseline (the same hand decile, price and position, without this partner) folds."""
        a, b = row["player"], row["opponent"]
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        fold = f"{100 * (1 - self.wide_rate):.0f}%"
        return [
            Evidence(
                name="calls of the other's short-stacked raise with hands their own baseline folds",
                value=g("tc_k"), baseline=g("tc_e"), n=int(g("tc_n")), p_value=row.get("tc_p"),
                text=f"facing a raise by the other while the other had at most {self.short_bb:.0f} big blinds and a bounty, "
                     f"{a} and {b} called {int(g('tc_k'))} times in {int(g('tc_n'))} decisions with a hand, pot odds and "
                     f"position at which they fold at least {fold} of the time to other short raisers; their own rates "
                     f"predict {g('tc_e'):.1f}. With the shoves below (Fisher's method) p = {self._fmt(row.get('pass_p'))}, "
                     f"q = {self._fmt(row.get('q_pass'))} in the bounty-passing family (false-discovery rate "
                     f"{self.alpha * self.pass_share:g}, over the pairs whose calls could reach it, met in any number of "
                     f"knockout tournaments)",
                sql=gp.BOUNTY_PARTNER_RAISE_SQL,
            ),
            Evidence(
                name="all-in shoves with the other in, with hands their own baseline does not shove",
                value=g("sh_k"), baseline=g("sh_e"), n=int(g("sh_n")), p_value=row.get("sh_p"),
                text=f"short-stacked with a bounty, they moved all in {int(g('sh_k'))} times in {int(g('sh_n'))} first "
                     f"decisions with the other still in and a hand, stack and position at which they do not shove at least "
                     f"{fold} of the time with others in the same tournament; their own rates predict {g('sh_e'):.1f}",
                sql=gp.BOUNTY_SHOVE_SQL,
            ),
        ]

    @staticmethod
    def _fmt(x: float | None) -> str:
        """A p- or q-value in two significant digits, "not tested" for none."""
        return "not tested" if x is None or x != x else f"{x:.2g}"

    def _hunter_text(self, row: dict[str, Any]) -> str:
        """The bounty-hunter explanation with its figures: each player's own continuation rate against short
        bounty targets with other players in (the baseline every test holds them to) beside the population's."""
        a, b = row["player"], row["opponent"]
        own = [(x, row.get(c)) for x, c in ((a, "a_own"), (b, "b_own"))]
        rates = ", ".join(f"{x} {r:.0%}" for x, r in own if r is not None and r == r)
        if not rates or self.pop_cont_rate_ != self.pop_cont_rate_:
            return ""
        return (f"Bounty hunters chase bounties against everyone: kept playing against short bounty targets with other "
                f"players in, {rates} (the population {self.pop_cont_rate_:.0%}); each is tested against their own "
                f"rate, so a hunter's looseness with everyone is no evidence against this pair "
                f"(q {float(row.get('q_value') or 1.0):.2g}, flagged at q <= {self.alpha:g}). ")

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row of :meth:`threshold`: the joint contests, bounties taken, side pots
        checked down, wide calls and presence continuations against their expectations, the evidence hands
        (the calls the own baseline folds first).

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold`.

        Returns
        -------
        :class:`~detectors.base.Signal`."""
        a, b = row["player"], row["opponent"]
        accounts = list(row["accounts"])
        joint, exp = int(row["joint"]), float(row["expected"])
        hands = self._evidence_hands(row)
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        ev = [*self._call_evidence(row), *self._passing_evidence(row), *self._allin_evidence(row),
              *self._presence_evidence(row)]
        ev = [e for e in ev if e.n]  # a test with no decisions or spots for this pair says nothing about it
        ev.append(Evidence(
            name="knockout tournaments at one table", value=g("events"), n=int(g("events_hands")),
            text=f"{a} and {b} were dealt in together in {int(g('events_hands'))} knockout hands of {int(g('events'))} "
                 f"tournaments (pairs sharing tables in fewer than {self.min_events} are not tested); weight "
                 f"{g('bh_weight'):.2f} in the false-discovery control (p-value / weight ranked; pairs seated together "
                 f"in more knockout tournaments get more of the error budget, weights average 1)",
            sql=EVENTS_SQL,
        ))
        who = " and ".join(accounts) if len(accounts) == 2 else f"ring of {len(accounts)} ({', '.join(accounts)})"
        summary = (
            f"{who}: with the other in, called short bounty targets {int(g('wc_k'))} times with hands their own "
            f"baseline folds ({g('wc_e'):.1f} expected) and {int(g('nw_k'))}/{int(g('nw_n'))} times with the rest "
            f"({g('nw_e'):.1f} expected); both called {joint} all-in bounty targets together (expected {exp:.1f} from their own rates), "
            f"{int(row.get('weak_joint') or 0)} with a weak hand, side pot checked down {int(row.get('checked_down') or 0)}/"
            f"{int(row.get('joint_postflop') or 0)}, bounty taken {int(row.get('bounties_won') or 0)} times; "
            f"kept playing against short bounty targets with the other in {int(g('pres_k'))}/{int(g('pres_n'))} "
            f"(expected {g('pres_e'):.1f}); called the other's short-stacked raise {int(g('tc_k'))} times with hands "
            f"their own baseline folds ({g('tc_e'):.1f} expected), shoved with the other in {int(g('sh_k'))} times "
            f"({g('sh_e'):.1f} expected); q = {row.get('q_value') or 1:.2g}"
        )
        return Signal(
            kind=self.kind,
            accounts=accounts,
            score=float(row["score"]),
            flagged=bool(row["flagged"]),
            summary=summary,
            tournaments=list(row.get("tournaments") or []),
            hands=hands[:25],
            evidence=ev,
            benign=(
                self._hunter_text(row)
                + "Dry side pots are checked down by everyone and regulars meet at many final tables: the check-down rate "
                f"is compared with the population's ({self.checkdown_rate_:.0%}) and joint calls with each player's own "
                "calling rate at the same spots. Players loosen up against short stacks with a bounty anyway: "
                "continuations with the partner in are compared with the same player's with other players in, "
                "at the same hand strength, price and position. A bystander in a gang's hands is not accused for them: "
                "the decisions a player's strongest partner was in are not counted for any other pair. A bounty hunter "
                "calls every short stack's shove and a desperate short stack shoves wide with anyone: a call of the "
                "other's raise is compared with the same player's calls of other short raisers, a shove with the "
                "other in with the same player's shoves with others in, at the same hand decile, price and position."
            ),
            p_value=row.get("p_value"),
            extra={"shape": row.get("shape", "pair"), "edges": json.loads(row["edges"]) if row.get("edges") else [],
                   "q_value": row.get("q_value"), "sql_params": {"player": a, "opponent": b}},
        )
