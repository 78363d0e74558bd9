"""Chip dumping: one account losing chips to another on purpose.

Method
------
Chip flow alone cannot tell a dump from a cooler, so every heads-up decision
is valued with the cards known (:mod:`detectors.features.gameplay`, after
Mazrooei, Archibald & Bowling, AAAI 2013): a fold facing a bet gives the
opponent ``equity*(pot+to_call) - to_call``; chips put in give
``amount*(1 - 2*equity)``. For every ordered pair (giver A, receiver B) three
own-baseline tests are made against A's play towards everyone else:

1. *value given*: A's mean value given per decision to B against A's mean
   value given to others (z-test with A's own variance, so big honest
   swings, which A also has against others, do not count);
2. *junk commitment*: A calls, bets or raises B with a weak hand (strength
   < 0.3) more than A's own rate in the same bins predicts;
3. *folding to the receiver*: A folds to B's bets more than A's own rates
   with the same cards predict.

The p-values are combined with Fisher's method, Benjamini–Hochberg controls
the false-discovery rate over the ordered pairs with at least
``min_test_hands`` heads-up hands (independent filtering, blind to the
p-values), and a pair is flagged when
q <= alpha, the chips actually moved (net flow A -> B of at least
``min_flow_bb`` big blinds) and they met heads-up at least ``min_hu_hands``
times. Flagged edges form a directed value-flow graph
(:mod:`detectors.graphs`): one account feeding many (or many feeding one) is
reported as one *star* signal, dense groups as a ring.

Benign look-alikes considered: big honest losses (coolers: strong hands that
lose are not junk commitments and give no value in expectation over many
decisions), a loose player who loses to everyone (own baseline), and a
regular who happens to be the opponent often (per-decision tests).

Score: −log10 q, comparable within the kind.
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


class ChipDumpingDetector(Detector):
    """Ordered pairs where one side gives value to the other, judged by the cards against its own baseline."""

    kind = "chip_dumping"

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
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.min_hu_hands = min_hu_hands
        self.min_flow_bb = min_flow_bb
        self.min_value_n = min_value_n
        self.min_test_hands = min_test_hands
        self.samples = samples
        self.max_unflagged = max_unflagged

    def fit(self, con: duckdb.DuckDBPyConnection) -> "ChipDumpingDetector":
        self.dec_, self.pairs_ = gp.cached_pair_features(con, samples=self.samples, random_state=self.random_state)
        self.missing_ = []
        known = self.dec_["equity"].is_not_null().mean() if not self.dec_.is_empty() else 0.0
        if (known or 0.0) < 0.5:
            self.missing_.append(
                "card-aware value given: both players' hole cards known in only "
                f"{(known or 0.0):.0%} of heads-up decisions (player view); chip flow and showdown hands only"
            )
        return self

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        pf = self.pairs_
        if pf.is_empty():
            return pl.DataFrame(schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                        "score": pl.Float64, "p_value": pl.Float64})
        me = pf.group_by("player").agg(
            S=pl.col("value_w").sum(), S2=pl.col("value_sq").sum(), N=pl.col("value_n").sum()
        )
        rev = pf.select(
            pl.col("opponent").alias("player"), pl.col("player").alias("opponent"), pl.col("flow_bb").alias("flow_back_bb")
        )
        t = pf.join(me, on="player", how="left").join(rev, on=["player", "opponent"], how="left")
        t = t.with_columns(
            n0=pl.col("N") - pl.col("value_n"),
            s0=pl.col("S") - pl.col("value_w"),
            q0=pl.col("S2") - pl.col("value_sq"),
            net_flow_bb=pl.col("flow_bb") - pl.col("flow_back_bb").fill_null(0.0),
        )
        t = t.with_columns(mean0=pl.col("s0") / pl.col("n0").clip(1))
        t = t.with_columns(var0=(pl.col("q0") / pl.col("n0").clip(1) - pl.col("mean0") ** 2).clip(1e-6))
        p_val = stats.weighted_mean_test(
            t["value_w"].fill_null(0).to_numpy(), t["value_sq"].fill_null(0).to_numpy(),
            np.where(t["value_n"].fill_null(0).to_numpy() >= self.min_value_n, t["value_n"].fill_null(0).to_numpy(), 0), t["mean0"].fill_null(0).to_numpy(),
            t["var0"].fill_null(1).to_numpy(), t["n0"].fill_null(0).to_numpy(), side="greater",
        )
        t = t.with_columns(pl.Series("value_p", p_val, nan_to_null=True))
        f = lambda c: t[c].to_numpy(allow_copy=True).astype(float)  # noqa: E731
        p = stats.fisher_combine(f("value_p"), f("junk_p"), f("fold_p"))
        # independent filtering (Bourgon, Gentleman & Huber, PNAS 2010): test only ordered pairs
        # that played enough heads-up hands; the filter ignores the p-values
        testable = t["hu_hands"].fill_null(0).to_numpy() >= self.min_test_hands
        q = stats.bh_qvalues(np.where(testable, p, np.nan))
        t = t.with_columns(
            pl.Series("p_value", p, nan_to_null=True),
            pl.Series("q_value", q, nan_to_null=True),
            pl.Series("score", stats.score_from_q(q)),
            accounts=pl.concat_list("player", "opponent"),
            tournaments=pl.lit([], pl.List(pl.Utf8)),
            value_mean=pl.col("value_w") / pl.col("value_n").clip(1),
        )
        # a direction in which the chips did not move is no candidate (the reverse row carries the pair)
        return t.filter(pl.col("net_flow_bb") > 0).sort("score", descending=True)

    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame:
        if scores.is_empty():
            return scores.with_columns(pl.lit(False).alias("flagged"))
        s = scores.with_columns(
            flagged=(pl.col("q_value").fill_null(1.0) <= self.alpha)
            & (pl.col("net_flow_bb") >= self.min_flow_bb)
            & (pl.col("hu_hands") >= self.min_hu_hands),
            shape=pl.lit("pair"),
            edges=pl.format('[["{}", "{}"]]', "player", "opponent"),
        )
        flagged = s.filter(pl.col("flagged"))
        by_edge = {(r["player"], r["opponent"]): r for r in flagged.iter_rows(named=True)}
        g = graphs.suspicion_graph((a, b, r["score"]) for (a, b), r in by_edge.items())
        rows = []
        for grp in graphs.groups(g):
            members = [r for (a, b), r in by_edge.items() if tuple(sorted((a, b))) in grp.edges]
            best = dict(max(members, key=lambda r: r["score"]))
            best["accounts"] = grp.accounts if grp.shape != "pair" else [best["player"], best["opponent"]]
            best["shape"] = grp.shape
            best["edges"] = json.dumps([[r["player"], r["opponent"]] for r in members])
            best["p_value"] = min(r["p_value"] for r in members)
            best["net_flow_bb"] = sum(r["net_flow_bb"] for r in members)
            rows.append(best)
        return with_top_unflagged(rows, s, self.max_unflagged)

    def _evidence_hands(self, edges: list[list[str]], limit: int = 25) -> list[str]:
        d = None
        for a, b in edges:
            x = self.dec_.filter((pl.col("player") == a) & (pl.col("opponent") == b))
            d = x if d is None else pl.concat([d, x])
        if d is None or d.is_empty():
            return []
        h = (
            d.filter(pl.col("value_given").is_not_null())
            .group_by("hand_id")
            .agg(v=pl.col("value_given").sum())
            .filter(pl.col("v") > 0)
            .sort(["v", "hand_id"], descending=[True, False])
        )
        return h["hand_id"].head(limit).to_list()

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
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
        if row.get("junk_n"):
            ev.append(Evidence(
                name=f"{a} puts chips in against {b} with a weak hand",
                value=float(row.get("junk_obs") or 0), baseline=float(row.get("junk_exp") or 0),
                n=int(row["junk_n"]), p_value=row.get("junk_p"),
                text=f"{a} called/bet/raised {b} {int(row.get('junk_obs') or 0)} times in {int(row['junk_n'])} weak-hand spots; "
                     f"own rate against others predicts {row.get('junk_exp') or 0:.1f}",
                sql=gp.HU_COUNTS_SQL,
            ))
        if row.get("fold_n"):
            ev.append(Evidence(
                name=f"{a} folds to {b}'s bets",
                value=float(row.get("fold_obs") or 0), baseline=float(row.get("fold_exp") or 0),
                n=int(row["fold_n"]), p_value=row.get("fold_p"),
                text=f"{a} folded to {b}'s bet {int(row.get('fold_obs') or 0)} times in {int(row['fold_n'])} spots; "
                     f"own rate predicts {row.get('fold_exp') or 0:.1f}",
                sql=gp.HU_COUNTS_SQL,
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
            f"{head}: {a} gave {b} {vm:+.2f} bb per heads-up hand with the cards known "
            f"(own baseline {m0:+.2f}) over {n} hands; net {row.get('net_flow_bb') or 0:.0f} bb moved; q = {row.get('q_value') or 1:.2g}"
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
            ),
            p_value=row.get("p_value"),
            extra={"shape": shape, "edges": edges, "q_value": row.get("q_value"),
                   "sql_params": {"player": a, "opponent": b}},
        )
