"""Soft play: two accounts that play less aggressively against each other than against everyone else.

Method
------
Each heads-up decision is judged by the acting player's own cards
(:mod:`detectors.features.gameplay`: strength = share of random holdings
beaten on the current board, so luck cancels). For every ordered pair
(A, B) two own-baseline tests are made, with A's rates *against everyone
else* in the same strength / street / facing-a-bet bins as the null
(empirical-Bayes shrunk, :mod:`detectors.stats`):

1. *passivity*: A bets or raises B less often than A's own rates predict
   (every spot aimed at B, weighted by the score test so a missing raise
   with a hand A nearly always raises counts most);
2. *folding*: A folds to B's bets more often than A's own rates predict.

Both baselines are robust (:func:`detectors.stats.robust_own_baseline`): a
first pass finds the opponents a player treats unlike the rest, in either
direction, and the second leaves them out of that player's baseline, so a
chip-dump receiver who raises its feeders does not look soft against every
honest opponent by contrast.

This is the pairwise "play against this partner vs play against others"
comparison of Mazrooei, Archibald & Bowling (AAAI 2013) reduced to
interpretable counts. The four p-values of a pair (both directions, both
tests) are combined with Fisher's method; Benjamini–Hochberg controls the
false-discovery rate across the pairs with at least ``min_spots`` decisions
aimed at each other (independent filtering: the filter never looks at the
p-values); a pair is flagged
when q <= alpha, they met heads-up at least ``min_hu_hands`` times and the
observed aggression is materially below the expected (``max_ratio``).
Flagged pairs form a suspicion graph whose dense communities are rings
(:mod:`detectors.graphs`): one signal lists the ring.

Benign look-alikes considered: regulars meet often (the test is per
decision, not per meeting); a passive player is passive against everyone
(own baseline); a cautious player folds weak hands (bins by strength); and
everyone checks down when their hand is weak.

Score: −log10 q of the pair (the best pair of a ring), comparable within the
kind.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl

import duckdb
from detectors import graphs, stats
from detectors.base import Detector, Evidence, Signal, with_top_unflagged
from detectors.features import gameplay as gp


class SoftPlayDetector(Detector):
    """Pairs that spare each other: own-baseline passivity and folding tests, BH across pairs."""

    kind = "soft_play"

    def __init__(
        self,
        *,
        alpha: float = 0.01,
        random_state: int = 0,
        min_hu_hands: int = 8,
        max_ratio: float = 0.75,
        samples: int = 16,
        max_unflagged: int = 300,
        min_spots: int = 30,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.min_hu_hands = min_hu_hands
        self.min_spots = min_spots
        self.max_ratio = max_ratio
        self.samples = samples
        self.max_unflagged = max_unflagged

    # ---------------------------------------------------------------- fit / score
    def fit(self, con: duckdb.DuckDBPyConnection) -> "SoftPlayDetector":
        self.dec_, pairs = gp.cached_pair_features(con, samples=self.samples, random_state=self.random_state)
        # own-baseline tests with each player's outlying partners left out of the baseline (stats.robust_own_baseline)
        self.pairs_ = stats.replace_baseline_tests(pairs, self.dec_, alpha=self.alpha) if not pairs.is_empty() else pairs
        self.coverage_ = gp.card_coverage(con) if not self.dec_.is_empty() else 0.0
        self.missing_ = []
        known = self.dec_["strength"].is_not_null().mean() if not self.dec_.is_empty() else 0.0
        if self.coverage_ < 0.5 or (known or 0.0) < 0.5:
            self.missing_.append(
                "card-aware passivity and folding tests: hole cards known only for the hero and showdowns "
                f"({(known or 0.0):.0%} of heads-up decisions judged)"
            )
        if not self.dec_.is_empty() and (self.dec_["game"] != "holdem").any():
            self.missing_.append("Omaha and other non-Hold'em decisions are not judged by the cards")
        return self

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        u = gp.unordered(self.pairs_)
        schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64, "p_value": pl.Float64}
        if u.is_empty():
            return pl.DataFrame(schema=schema)
        for c in ("aggr_p", "aggr_p_r", "fold_p", "fold_p_r", "aggr_obs", "aggr_obs_r", "aggr_exp", "aggr_exp_r",
                  "fold_obs", "fold_obs_r", "fold_exp", "fold_exp_r", "hu_hands", "hu_hands_r", "aggr_n", "aggr_n_r"):
            if c not in u.columns:
                u = u.with_columns(pl.lit(None, pl.Float64).alias(c))
        p = stats.fisher_combine(
            u["aggr_p"].to_numpy(allow_copy=True).astype(float),
            u["aggr_p_r"].to_numpy(allow_copy=True).astype(float),
            u["fold_p"].to_numpy(allow_copy=True).astype(float),
            u["fold_p_r"].to_numpy(allow_copy=True).astype(float),
        )
        u = u.with_columns(pl.Series("p_value", p, nan_to_null=True))
        u = u.with_columns(
            hu=pl.max_horizontal(pl.col("hu_hands").fill_null(0), pl.col("hu_hands_r").fill_null(0)),
            aggr_o=pl.col("aggr_obs").fill_null(0) + pl.col("aggr_obs_r").fill_null(0),
            aggr_e=pl.col("aggr_exp").fill_null(0) + pl.col("aggr_exp_r").fill_null(0),
            fold_o=pl.col("fold_obs").fill_null(0) + pl.col("fold_obs_r").fill_null(0),
            fold_e=pl.col("fold_exp").fill_null(0) + pl.col("fold_exp_r").fill_null(0),
        )
        # independent filtering (Bourgon, Gentleman & Huber, PNAS 2010): only pairs with enough
        # decisions aimed at each other can be tested; the filter ignores the p-values
        spots = (u["aggr_n"].fill_null(0) + u["aggr_n_r"].fill_null(0)).to_numpy()  # decisions aimed at each other
        ptest = np.where(spots >= self.min_spots, u["p_value"].to_numpy(allow_copy=True).astype(float), np.nan)
        q = stats.bh_qvalues(ptest)
        u = u.with_columns(pl.Series("q_value", q, nan_to_null=True))
        u = u.with_columns(
            score=pl.Series(stats.score_from_q(q)),
            accounts=pl.concat_list("player", "opponent"),
            tournaments=pl.lit([], pl.List(pl.Utf8)),
            aggr_ratio=pl.col("aggr_o") / pl.col("aggr_e").clip(1e-9),
            fold_ratio=(pl.col("fold_o") + 1) / (pl.col("fold_e") + 1),
        )
        return u.sort("score", descending=True)

    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame:
        if scores.is_empty():
            return scores.with_columns(pl.lit(False).alias("flagged"), pl.lit("pair").alias("shape"))
        s = scores.with_columns(
            flagged=(pl.col("q_value").fill_null(1.0) <= self.alpha)
            & (pl.col("hu") >= self.min_hu_hands)
            & ((pl.col("aggr_ratio") <= self.max_ratio) | (pl.col("fold_ratio") >= 1 / self.max_ratio)),
            shape=pl.lit("pair"),
            edges=pl.format('[["{}", "{}"]]', "player", "opponent"),
        )
        flagged = s.filter(pl.col("flagged"))
        g = graphs.suspicion_graph(zip(flagged["player"], flagged["opponent"], flagged["score"]))
        rows = []
        by_pair = {tuple(sorted((r["player"], r["opponent"]))): r for r in flagged.iter_rows(named=True)}
        for grp in graphs.groups(g):
            members = [by_pair[e] for e in grp.edges if e in by_pair]
            best = max(members, key=lambda r: r["score"])
            row = dict(best)
            row["accounts"] = grp.accounts
            row["shape"] = grp.shape
            row["edges"] = json.dumps([list(e) for e in grp.edges])
            if grp.shape != "pair":
                row["p_value"] = min(r["p_value"] for r in members)
            rows.append(row)
        return with_top_unflagged(rows, s, self.max_unflagged)

    # ---------------------------------------------------------------- explain
    def _evidence_hands(self, accounts: list[str], limit: int = 25) -> list[str]:
        """Hands where they spared each other, most surprising first.

        Each passive decision (check, call or fold) towards a partner with a
        good hand weighs the player's own probability of betting or raising in
        that spot against everyone else (same street type, facing a bet or not,
        heads-up or not, strength bin); a hand's weight is the sum.
        """
        bins = ["preflop", "facing", "hu", "sbin"]
        d = gp.decisions_of(self.dec_, accounts).filter(pl.col("sbin").is_not_null())
        if d.is_empty():
            return []
        partner = pl.col("opponent").is_in(accounts)
        rates = d.filter(~partner).group_by(["player", *bins]).agg(r=(pl.col("aggr").cast(pl.Float64).sum() + 0.5) / (pl.len() + 1.0))
        x = (
            d.filter(partner & (pl.col("sbin") >= 2) & ~pl.col("aggr"))
            .join(rates, on=["player", *bins], how="left")
            .with_columns(pl.col("r").fill_null(0.3))
        )
        if x.is_empty():
            return []
        h = x.group_by("hand_id").agg(w=pl.col("r").sum()).sort(["w", "hand_id"], descending=[True, False])
        return h["hand_id"].head(limit).to_list()

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        a, b = row["player"], row["opponent"]
        accounts = list(row["accounts"])
        ev: list[Evidence] = []
        texts = []
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
        hands = self._evidence_hands(accounts)
        return Signal(
            kind=self.kind,
            accounts=accounts,
            score=float(row["score"]),
            flagged=bool(row["flagged"]),
            summary=summary,
            tournaments=gp.tournaments_of(self.dec_, hands),
            hands=hands,
            evidence=ev,
            benign=(
                "Regulars who meet often, passive players and weak-hand check-downs: the comparison is per decision, "
                "against each player's own rate versus everyone else holding equally strong cards, so none of these "
                f"explains a deficit (observed {row.get('aggr_o', 0):.0f} aggressive actions vs {row.get('aggr_e', 0):.1f} expected)."
            ),
            p_value=row.get("p_value"),
            extra={"shape": shape, "edges": json.loads(row["edges"]) if row.get("edges") else [], "q_value": row.get("q_value"),
                   "sql_params": {"player": a, "opponent": b}},
        )
