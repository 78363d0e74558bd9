"""What a soft-play signal says: each test's counts against the own rates, the ring test, the co-entry
prior, the hands where the pair spared each other most surprisingly first."""

from __future__ import annotations

import json
from typing import Any

import duckdb
import polars as pl

from detectors.base import Evidence, Signal
from detectors.features import gameplay as gp
from detectors.stats import WEIGHT


# an investigator's check of the preflop test's counts: the player's answers to the opponent's preflop raises
PRE_COUNTS_SQL = """
SELECT d.action, count(*) AS decisions
FROM actions d
WHERE d.street = 'preflop' AND d.player = $player AND d.to_call > 0
  AND d.action IN ('fold', 'call', 'raise')
  AND $opponent = (SELECT arg_max(a.player, a.seq) FROM actions a
                   WHERE a.hand_id = d.hand_id AND a.street = 'preflop' AND a.seq < d.seq AND a.action IN ('bet', 'raise'))
GROUP BY d.action ORDER BY d.action
"""


# an investigator's check of the co-entry prior: the tournaments both registered for (and did not withdraw from) or
# were seated in
COENTRY_SQL = """
WITH reg AS (SELECT account, tournament_id FROM registrations GROUP BY ALL HAVING arg_max(kind, ts) = 'register'),
e AS (SELECT account, tournament_id FROM reg
      UNION SELECT s.player, h.tournament_id FROM seats s JOIN hands h USING (hand_id) WHERE h.tournament_id IS NOT NULL)
SELECT x.tournament_id FROM e x JOIN e y USING (tournament_id)
WHERE x.account = $player AND y.account = $opponent ORDER BY 1
"""


class EvidenceMixin:
    """The ``explain`` of :class:`~detectors.soft_play.SoftPlayDetector`."""

    # ---------------------------------------------------------------- explain
    def _evidence_hands(self, con: duckdb.DuckDBPyConnection, accounts: list[str], limit: int = 25
                        ) -> tuple[list[str], list[str]]:
        """Hands where they spared each other, most surprising first, and the tournaments of those hands.

        Each passive decision (check, call or fold) towards a partner with a
        good hand weighs the player's own probability of betting or raising in
        that spot against everyone else (same street type, facing a bet or not,
        heads-up or not, strength bin); a hand's weight is the sum. The own rates
        come from the counted cells; only the decisions between the accounts are
        read (a filtered read of the window's day files,
        :meth:`~detectors.soft_play.cells.WindowDecisions.between`).
        """
        bins = ["preflop", "facing", "hu", "sbin"]
        # each player's own rates against the others, from the counted cells (stats.WEIGHT); the decisions between
        # the accounts, the only rows read, from the window's day files
        c = self.cells_.filter(pl.col("player").is_in(accounts) & pl.col("sbin").is_not_null())
        rates = c.filter(~pl.col("opponent").is_in(accounts)).group_by(["player", *bins]).agg(
            r=((pl.col("aggr").cast(pl.Float64) * pl.col(WEIGHT)).sum() + 0.5) / (pl.col(WEIGHT).sum() + 1.0))
        d = self.source_.between(con, accounts, ["hand_id", "seq", "player", "tournament_id", "aggr", "sbin", *bins])
        x = (
            d.filter(pl.col("sbin").is_not_null() & (pl.col("sbin") >= 2) & ~pl.col("aggr"))
            .join(rates, on=["player", *bins], how="left")
            .with_columns(pl.col("r").fill_null(0.3))
        )
        if x.is_empty():
            return [], []
        h = x.group_by("hand_id").agg(w=pl.col("r").sum()).sort(["w", "hand_id"], descending=[True, False])
        hands = h["hand_id"].head(limit).to_list()
        tour = x.filter(pl.col("hand_id").is_in(hands) & pl.col("tournament_id").is_not_null())["tournament_id"]
        return hands, sorted(set(tour.to_list()))

    #: evidence hands per signal shown
    EVIDENCE_HANDS = 25

    def _with_evidence_hands(self, con: duckdb.DuckDBPyConnection, u: pl.DataFrame) -> pl.DataFrame:
        """``u`` (scored pairs, best first) with ``evidence_hands`` and ``evidence_tournaments`` for the pairs
        :meth:`threshold` can show: every pair with q or ring q at most alpha and the ``max_unflagged`` next (ties
        at the cut included), in one read of the decisions between them; null elsewhere (:meth:`explain` then
        reads the pair's own, as it does for rings).

        For each pair the same figures as :meth:`_evidence_hands` of its two accounts: each player's own rate of
        betting or raising per cell (street type, facing a bet, heads-up, strength bin) against everyone but the
        partner, ((bets or raises) + 0.5) / (decisions + 1), from the counted cells, 0.3 where the player has none;
        a hand's weight the sum of those rates over the passive decisions towards the partner with a good hand
        (strength bin at least 2); the ``EVIDENCE_HANDS`` heaviest hands, then by hand id."""
        cols = {"evidence_hands": pl.List(pl.Utf8), "evidence_tournaments": pl.List(pl.Utf8)}
        if u.is_empty():
            return u.with_columns(pl.lit(None, dt).alias(c) for c, dt in cols.items())
        alpha = pl.lit(self.alpha)
        hit = (pl.col("q_value").fill_null(1.0) <= alpha) | (
            (pl.col("ring_q_value").fill_null(1.0) <= alpha) if "ring_q_value" in u.columns else pl.lit(False))
        k = min(u.height, int(u.select(hit.sum()).item()) + self.max_unflagged)
        cut = u["score"].sort(descending=True)[k - 1] if k else float("inf")
        pairs = u.filter(hit | (pl.col("score") >= cut)).select("player", "opponent")
        bins = ["preflop", "facing", "hu", "sbin"]
        # each player's decisions per cell, in all and against the partner: the rate against everyone else
        c = self.cells_.filter(pl.col("sbin").is_not_null()).with_columns(
            _k=pl.col("aggr").cast(pl.Int64) * pl.col(WEIGHT))
        both = pl.concat([pairs, pairs.select(player="opponent", opponent="player")])
        c = c.join(both.select("player").unique(), on="player", how="semi")
        total = c.group_by("player", *bins).agg(N=pl.col(WEIGHT).sum(), K=pl.col("_k").sum())
        vs = c.join(both, on=["player", "opponent"], how="semi").group_by("player", "opponent", *bins).agg(
            n=pl.col(WEIGHT).sum(), k=pl.col("_k").sum())
        rates = vs.join(total, on=["player", *bins]).filter(pl.col("N") > pl.col("n")).select(
            "player", "opponent", *bins,
            r=((pl.col("K") - pl.col("k")).cast(pl.Float64) + 0.5) / ((pl.col("N") - pl.col("n")).cast(pl.Float64) + 1.0))
        d = self.source_.between_pairs(con, pairs, ["hand_id", "seq", "player", "opponent", "tournament_id", "aggr",
                                                    *bins])
        x = (d.filter(pl.col("sbin").is_not_null() & (pl.col("sbin") >= 2) & ~pl.col("aggr"))
             .join(rates, on=["player", "opponent", *bins], how="left").with_columns(pl.col("r").fill_null(0.3))
             .with_columns(_a=pl.min_horizontal("player", "opponent"), _b=pl.max_horizontal("player", "opponent")))
        h = x.group_by("_a", "_b", "hand_id").agg(w=pl.col("r").sum(), t=pl.col("tournament_id").first())
        h = h.sort(["_a", "_b", "w", "hand_id"], descending=[False, False, True, False]).group_by(
            "_a", "_b").head(self.EVIDENCE_HANDS)
        ev = h.group_by("_a", "_b").agg(evidence_hands=pl.col("hand_id"),
                                        evidence_tournaments=pl.col("t").drop_nulls().unique().sort())
        ev = pairs.join(ev.rename({"_a": "player", "_b": "opponent"}), on=["player", "opponent"], how="left")
        # a pair shown without a hand to show: empty lists (not null: null means "not computed here")
        ev = ev.with_columns(pl.col(c).fill_null(pl.lit([], dt)) for c, dt in cols.items())
        return u.join(ev, on=["player", "opponent"], how="left", maintain_order="left")

    def _direction_evidence(self, row: dict[str, Any], ev: list[Evidence], texts: list[str]) -> None:
        """Each direction's bets and raises aimed at the other and folds to the other's bets, against the own
        rates (appended to ``ev``; the summary's per-direction lines to ``texts``)."""
        a, b = row["player"], row["opponent"]
        for x, y, sfx in ((a, b, ""), (b, a, "_r")):
            n = row.get(f"aggr_n{sfx}")
            if n:
                obs, exp = row.get(f"aggr_obs{sfx}") or 0, row.get(f"aggr_exp{sfx}") or 0
                ev.append(
                    Evidence(
                        name=f"{x} bets or raises {y}",
                        value=obs / n,
                        baseline=exp / n,
                        n=int(n),
                        p_value=row.get(f"aggr_p{sfx}"),
                        text=(
                            f"{x} bet or raised in {int(obs)} of {int(n)} decisions aimed at {y} (facing {y}'s bet, or heads-up); "
                            f"{x}'s own rates against others with equally strong cards predict {exp:.1f} ({exp / n:.0%})"
                        ),
                        sql=gp.HU_COUNTS_SQL,
                    )
                )
                if obs < exp:  # the one-line summary names a direction only where it points the same way as the
                    # deciding test (the all-spots count also holds spots that test leaves out; it stays in evidence)
                    texts.append(f"{x} bet/raised {y} in {int(obs)} of {int(n)} spots (own rate vs others with the same cards {exp / n:.0%})")
            fo, fe = row.get(f"fold_obs{sfx}"), row.get(f"fold_exp{sfx}")
            if fe is not None and (fo or 0) + fe > 0:
                ev.append(
                    Evidence(
                        name=f"{x} folds to {y}'s bets",
                        value=float(fo or 0),
                        baseline=float(fe),
                        n=None,
                        p_value=row.get(f"fold_p{sfx}"),
                        text=f"{x} folded to {y}'s bet {int(fo or 0)} times; own rates with the same cards predict {fe:.1f}",
                        sql=gp.HU_COUNTS_SQL,
                    )
                )

    def _spot_evidence(self, row: dict[str, Any], ev: list[Evidence]) -> None:
        """Both directions pooled, spot by spot (checks, raises, folds, preflop), against the own rates."""
        a, b = row["player"], row["opponent"]
        for name, k, what, side in (("chk", "bet when heads-up with no bet to call", "bet", "fewer"),
                                    ("rse", "raise facing the other's bet", "raised", "fewer"),
                                    ("fld", "fold facing the other's bet", "folded", "more"),
                                    ("pre", "call or raise facing the other's preflop raise", "called or raised", "fewer")):
            n = row.get(f"{name}_n")
            if n:
                obs, exp = float(row.get(f"{name}_observed") or 0), float(row.get(f"{name}_expected") or 0)
                cards = ("in the same spots (starting hand in the same tenth of the 1,326, heads-up or multiway, "
                         "tournament or cash)" if name == "pre" else "with equally strong cards")
                if name == "chk" and getattr(self, "value_bin", None) is not None:
                    # the benign explanation the check test leaves out: fewer bluffs into a player who calls
                    cards += (f" (after the flop only with a hand of strength bin {self.value_bin} or more, where a bet "
                              f"is for value: honest players bluff less into an opponent who calls, none value-bets less)")
                ev.append(Evidence(
                    name=f"both directions: {k}",
                    value=obs / n, baseline=exp / n, n=int(n), p_value=row.get(f"{name}_p_value"),
                    text=f"{a} and {b} {what} against each other in {int(obs)} of {int(n)} such spots; their own rates "
                         f"against others {cards} predict {exp:.1f} ({'one-sided: ' + side})",
                    sql=PRE_COUNTS_SQL if name == "pre" else gp.HU_COUNTS_SQL,
                ))

    def _street_evidence(self, row: dict[str, Any], ev: list[Evidence], texts: list[str]) -> None:
        """The main test street by street (:func:`detectors.stats.street_tests`): its strongest street and the
        streets' Fisher combination, leading the summary where it decided the main test."""
        if row.get("st_p_value") is None or not row.get("st_n"):
            return
        a, b = row["player"], row["opponent"]
        street, n = row.get("st_street"), int(row["st_n"])
        obs, exp = float(row.get("st_observed") or 0), float(row.get("st_expected") or 0)
        ev.append(Evidence(
            name=f"both directions, street by street: bet when heads-up with no bet to call (strongest: {street})",
            value=obs / n, baseline=exp / n, n=n, p_value=row.get("st_p_value"),
            text=f"on the {street} {a} and {b} bet into each other in {int(obs)} of {n} spots with no bet to call where "
                 f"their own rates against others with equally strong cards predict {exp:.1f} (p = {row.get('st_p') or 1:.2g}); "
                 f"the {int(row.get('st_k') or 0)} streets tested apart, combined by Fisher's method: "
                 f"p = {row['st_p_value']:.2g}",
            sql=gp.HU_COUNTS_SQL,
        ))
        if row["st_p_value"] < (row.get("chk_p_value") or 1.0):
            texts.insert(0, f"on the {street} bet into each other {int(obs)} times in {n} spots where their own rates "
                            f"predict {exp:.1f}; streets tested apart, combined p = {row['st_p_value']:.2g}")

    def _lead_texts(self, row: dict[str, Any], texts: list[str]) -> list[tuple[float, str]]:
        """The summary's lead: the strongest spot test, then the combined main test; returns the spot tests made
        as (p-value, name)."""
        labels = {"chk": "bet into each other heads-up (no bet to call)", "rse": "raised each other's bets",
                  "fld": "folded to each other's bets", "pre": "called or raised each other's preflop raises"}
        tests = [(row.get(f"{x}_p_value"), x) for x in labels if row.get(f"{x}_p_value") is not None]
        if tests:
            pbest, xbest = min(tests)
            texts.insert(0, f"{labels[xbest]} {int(row.get(f'{xbest}_observed') or 0)} times in {int(row.get(f'{xbest}_n') or 0)} spots "
                            f"where their own rates with equally strong cards predict {row.get(f'{xbest}_expected') or 0:.1f} "
                            f"(p = {pbest:.2g})")
        parts = [x for x, _ in (self.combined or ()) if row.get(f"{x}_p_value") is not None]
        if len(parts) > 1 and row.get("main_p_value") is not None:
            # the deciding figure: the weighted Z combination of the tests on disjoint decisions
            short = {"chk": "heads-up bets", "rse": "raises", "fld": "folds", "pre": "preflop calls or raises"}
            counts = " and ".join(f"{short[x]} {int(row.get(f'{x}_observed') or 0)} vs "
                                  f"{row.get(f'{x}_expected') or 0:.1f} expected" for x in parts)
            if row.get("stp_p_value") is not None:
                # the support entered the streets' Fisher combination (SoftPlayDetector._with_street_support)
                texts.insert(1, f"{counts}; the heads-up bets street by street ({int(row.get('st_k') or 0)} streets) and the "
                                f"{short[parts[-1]]} combined by Fisher's method: p = {row['main_p_value']:.2g}")
            else:
                texts.insert(1, counts + f" combined ({' + '.join(f'{w:g} z' if i == 0 else f'{w:g} max(z, 0)' for i, (x, w) in enumerate(self.combined))}): "
                                         f"p = {row['main_p_value']:.2g}")
        return tests

    def _hand_evidence(self, row: dict[str, Any], ev: list[Evidence], texts: list[str],
                       tests: list[tuple[float, str]]) -> None:
        """The whole-hand test, leading the summary where it beats every spot test."""
        a, b = row["player"], row["opponent"]
        hp = row.get("hp_p_value")
        if hp is not None and row.get("hands"):
            # the whole-hand test (made only where both players' own baselines are deep enough)
            nh, npass = int(row["hands"]), int(row.get("passive") or 0)
            ev.append(Evidence(
                name="both directions: heads-up hands with no bet from either",
                value=npass / nh, n=nh, p_value=hp,
                text=f"in {npass} of {nh} heads-up hands between {a} and {b} neither bet on any street; weighted by how "
                     f"unlikely each such hand was under their own betting rates against others with the same cards, "
                     f"{row.get('hp_observed') or 0:.1f} against {row.get('hp_expected') or 0:.1f} expected"
                     + (f"; their play against others is thin ({row.get('hp_base') or 0:.2f} decisions against others "
                        f"per decision against each other), so the p-value is averaged over every rate it allows"
                        if row.get("hp_predictive") else ""),
                sql=gp.HU_COUNTS_SQL,
            ))
            if not tests or hp < min(tests)[0]:
                texts.insert(0, f"neither bet in {npass} of {nh} heads-up hands together, surprise-weighted "
                                f"{row.get('hp_observed') or 0:.1f} vs {row.get('hp_expected') or 0:.1f} expected from "
                                f"their own rates (p = {hp:.2g})")

    def _ring_evidence(self, row: dict[str, Any], ev: list[Evidence], texts: list[str]) -> None:
        """The ring test (three pairs each leaning the sparing way), leading the summary where it is the stronger."""
        rq = row.get("ring_q_value")
        if rq is not None and rq <= self.alpha and row.get("ring_accounts"):
            # the ring test: three pairs each leaning the sparing way, combined, Bonferroni over every triangle tested
            ra, rps = list(row["ring_accounts"]), list(row.get("ring_pairs_p") or [])
            pairs = [f"{x}-{y}" for x, y in ((ra[0], ra[1]), (ra[0], ra[2]), (ra[1], ra[2]))]
            ev.append(Evidence(
                name="ring: each pair of three spares the others",
                value=float(row.get("ring_p_value") or 1.0), n=int(row.get("ring_tests") or 0), p_value=rq,
                text=f"{', '.join(ra)}: each of the three pairs' tests leans the sparing way (p "
                     + ", ".join(f"{pr} {pv:.2g}" for pr, pv in zip(pairs, rps))
                     + f", each at most {self.ring_tau:g}); combined p = {row.get('ring_p_value') or 1:.2g}, times "
                       f"{int(row.get('ring_tests') or 0)} triangles of tested pairs: {rq:.2g}",
                sql=gp.HU_COUNTS_SQL,
            ))
            if rq < (row.get("q_value") or 1.0):  # the ring is the stronger evidence: it leads the summary
                texts.insert(0, f"ring of three whose pairs each lean the sparing way (pair p-values "
                                f"{', '.join(f'{pv:.2g}' for pv in rps)}; ring p = {rq:.2g} after {int(row.get('ring_tests') or 0)} "
                                f"triangles tested)")

    def _prior_evidence(self, row: dict[str, Any], texts: list[str]) -> Evidence | None:
        """The co-entry prior's weight in the test over pairs, where it moved the pair (never evidence by itself)."""
        a, b = row["player"], row["opponent"]
        prior_ev = None
        pf = row.get("prior_factor")
        if pf is not None and pf > 1.01 and row.get("coentry_shared") is not None:
            # the co-entry prior (self._with_coentry): fixed before any card was dealt, it weighs the pair up in the
            # test over pairs; it is never evidence of soft play by itself
            k, e = int(row["coentry_shared"]), float(row.get("coentry_expected") or 0.0)
            prior_text = (f"entered {k} of the same tournaments, {e:.1f} expected from their entries' days and field "
                          f"sizes (co-entry p = {row.get('coentry_p') or 1:.2g}): weight x{pf:.3g} in the test over pairs")
            prior_ev = Evidence(
                name="tournaments entered together (prior weight)",
                value=float(k), baseline=e, n=None, p_value=row.get("coentry_p"),
                text=f"{a} and {b} {prior_text}; a prior, not evidence of soft play: the play tests above decide",
                sql=COENTRY_SQL,
            )
            texts.append(prior_text)
        return prior_ev

    def _rule_text(self, row: dict[str, Any]) -> str:
        """The flag rule's benign explanations with this pair's figures: too few hands together, an immaterial
        deficit, one side only (a player who respects one opponent's bets is not a pair sparing each other)."""
        def best(*cols: str) -> float | None:
            got = [row.get(c) for c in cols if row.get(c) is not None and row.get(c) == row.get(c)]
            return max(got) if got else None

        ratios = [row.get(c) for c in ("aggr_ratio", "chk_ratio", "rse_ratio", "hp_ratio", "st_ratio")]
        ratios += [1 / row[c] for c in ("fold_ratio", "fld_ratio") if row.get(c)]
        ratios = [r for r in ratios if r is not None and r == r]
        za, zb = best("dir_z", "hdir_z", "sdir_z"), best("dir_z_r", "hdir_z_r", "sdir_z_r")
        sides = (f"each side's own z {za:.1f} and {zb:.1f} (a flag needs both at least {self.mutual_z:g}: one "
                 f"player's respect for the other's bets is not a pair sparing each other)"
                 if self.mutual_z is not None and za is not None and zb is not None else "")
        return (f" Flag rule: q at most {self.alpha:g} (here {row.get('q_value') or 1:.2g}); heads-up together in "
                f"{int(row.get('hu') or 0)} hands (at least {self.min_hu_hands} needed: a handful of hands is chance); "
                + (f"the strongest deficit, observed at {min(ratios):.2f} of the expected (at most {self.max_ratio:g} needed: a "
                   f"deficit too small to matter is not soft play); " if ratios else "")
                + sides + ".")

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row of :meth:`threshold`: each test's counts against the own rates, the
        ring test and the co-entry prior where they apply, the hands where the pair spared each other most
        surprisingly first.

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold` (a dict).

        Returns
        -------
        :class:`~detectors.base.Signal`, computed from the row and the fitted attributes only."""
        a, b = row["player"], row["opponent"]
        accounts = list(row["accounts"])
        ev: list[Evidence] = []
        texts: list[str] = []
        self._direction_evidence(row, ev, texts)
        self._spot_evidence(row, ev)
        tests = self._lead_texts(row, texts)
        self._street_evidence(row, ev, texts)
        self._hand_evidence(row, ev, texts, tests)
        self._ring_evidence(row, ev, texts)
        prior_ev = self._prior_evidence(row, texts)
        # the strongest test first (the co-entry prior after them: it weighs the pair, it does not accuse it)
        ev.sort(key=lambda e: (e.p_value is None, e.p_value if e.p_value is not None else 1.0))
        if prior_ev is not None:
            ev.append(prior_ev)
        hands_tog = row.get("hands_together") or row.get("hands_together_r") or 0
        ev.append(
            Evidence(
                name="hands together",
                value=float(hands_tog),
                n=int(row.get("hu") or 0),
                text=f"dealt in together {int(hands_tog)} hands, heads-up in {int(row.get('hu') or 0)}",
                sql="SELECT count(*) FROM seats a JOIN seats b USING (hand_id) WHERE a.dealt_in AND b.dealt_in AND a.player = $player AND b.player = $opponent",
            )
        )
        shape = row.get("shape", "pair")
        who = " and ".join(accounts) if len(accounts) == 2 else f"ring of {len(accounts)} ({', '.join(accounts)})"
        summary = f"{who}: " + "; ".join(texts) + f"; q = {row.get('q_value') or 1:.2g}"
        if row.get("evidence_hands") is not None and len(accounts) == 2:
            # read for every pair that could be shown at once (self._with_evidence_hands)
            hands, tournaments = list(row["evidence_hands"]), list(row["evidence_tournaments"])
        else:
            hands, tournaments = self._evidence_hands(con, accounts, self.EVIDENCE_HANDS)
        return Signal(
            kind=self.kind,
            accounts=accounts,
            score=float(row["score"]),
            flagged=bool(row["flagged"]),
            summary=summary,
            tournaments=tournaments,
            hands=hands,
            evidence=ev,
            benign=(
                "Regulars who meet often, passive players and weak-hand check-downs: the comparison is per decision, "
                "against each player's own rate versus everyone else holding equally strong cards, so none of these "
                f"explains a deficit (observed {row.get('aggr_o', 0):.0f} aggressive actions vs {row.get('aggr_e', 0):.1f} expected)."
                + self._rule_text(row)
            ),
            p_value=row.get("p_value"),
            extra={"shape": shape, "edges": json.loads(row["edges"]) if row.get("edges") else [], "q_value": row.get("q_value"),
                   "sql_params": {"player": a, "opponent": b}},
        )
