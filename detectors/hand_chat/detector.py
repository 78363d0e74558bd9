"""The HandChatDetector: fit, score, threshold, explain."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl

from detectors import stats
from detectors.base import Evidence, PairDetector, Signal
from detectors.hand_chat.lines import chat_lines, listeners, presences
from detectors.hand_chat.text import card_talk_model, card_talk_rules

# Reproduces the lines behind a case: $player's chat in hands $opponent was dealt in, with the action each came before
# (the detector's in-play test and card-talk model are not SQL; its lines are those before a decision, after the hole
# cards, that speak of cards)
CHAT_SQL = """
SELECT e.hand_id, e.line, e.detail AS said
FROM table_events e JOIN seats s ON s.hand_id = e.hand_id AND s.player = $opponent AND s.dealt_in
WHERE e.event = 'chat' AND e.player = $player
ORDER BY e.hand_id, e.line
"""


class HandChatDetector(PairDetector):
    """Ordered pairs (chatter, partner): chat about the hand in play that the partner, still in the hand
    against someone else, could use, far more often than the chatter's own rate with everyone else."""

    kind = "hand_chat"
    inputs = {
        "hands": ("hand_id", "game"),
        "seats": ("hand_id", "player", "dealt_in"),
        "actions": ("hand_id", "seq", "street", "player", "action"),
        "hole_cards": ("hand_id", "player", "source"),
        "table_events": ("hand_id", "line", "player", "event", "detail"),
        "unknown_lines": ("hand_id", "line"),
    }
    directed = True  # chatter -> partner

    def __init__(self, *, alpha: float = 0.01, random_state: int = 0, min_hands: int = 3, card_talk_p: float = 0.5,
                 text_model: str = "tfidf", train_size: int = 3000, prior_strength: float = 50.0,
                 max_unflagged: int = 100) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.prior_strength = prior_strength
        self.min_hands = min_hands
        self.card_talk_p = card_talk_p
        self.text_model = text_model
        self.train_size = train_size
        self.max_unflagged = max_unflagged

    # ------------------------------------------------------------------ fit
    def card_talk(self, texts: list[str]) -> np.ndarray:
        """The probability (rules: 0 or 1) that each text speaks of cards or hands (``text_model``:
        ``"tfidf"`` the fitted model ``model_``, ``"rules"`` :func:`~detectors.hand_chat.text.card_talk_rules`)."""
        if not texts:
            return np.zeros(0)
        if self.text_model == "rules":
            return card_talk_rules(texts)
        return self.model_.predict_proba(texts)[:, 1]

    def fit(self, con: duckdb.DuckDBPyConnection) -> "HandChatDetector":
        """Place every chat line in its hand, judge its text, find who could use it, count presences.

        Method: the text model is fitted on the detector's own grammar
        (:func:`~detectors.hand_chat.text.card_talk_model`); each chat line is placed before the
        decision it preceded (:func:`~detectors.hand_chat.lines.chat_lines`). A line is *usable* when it
        is in play, speaks of cards (probability >= ``card_talk_p``) and at least two players other
        than its speaker are still in the hand: one to be helped, one to be harmed (heads-up table
        talk reaches only the opponent). A player is *present* in a hand dealt in or, watching, when it
        chats there. The players' rates of usable card talk per presence, less the hands heard by each
        one's most frequent listener (talk aimed at no one partner), give an empirical-Bayes beta prior
        (:func:`detectors.stats.fit_beta_prior`) of strength at most ``prior_strength`` (a room with no
        such talk: mean 1 %, that strength).

        Returns
        -------
        self, with ``model_``, ``lines_`` (every chat line with ``in_play``, ``card_talk``),
        ``usable_`` (usable line x partner), ``presence_`` (player, hand), ``prior_`` and ``missing_``."""
        if self.text_model not in ("tfidf", "rules"):
            raise ValueError(f"text_model must be 'tfidf' or 'rules', not {self.text_model!r}")
        self.model_ = card_talk_model(self.random_state, self.train_size) if self.text_model == "tfidf" else None
        lines = chat_lines(con)
        self.lines_ = lines.with_columns(card_talk=pl.Series(self.card_talk(lines["text"].fill_null("").to_list()),
                                                             dtype=pl.Float64))
        talk = self.lines_.filter(pl.col("in_play") & (pl.col("card_talk") >= self.card_talk_p))
        lis = listeners(con, talk) if not talk.is_empty() else pl.DataFrame(
            schema={"hand_id": pl.String, "line": pl.Int32, "player": pl.String, "partner": pl.String,
                    "others": pl.Int64})
        self.usable_ = lis.filter(pl.col("others") >= 2).join(
            talk.select("hand_id", "line", "text", "next_seq", "next_actor", "next_action", "next_street"),
            on=["hand_id", "line"], how="left")
        # every player's presences (dealt in; watching: chatting unseated), counted for the room's prior, and the
        # talkers' presences kept: in DuckDB, so the window's seats (a row per player dealt in) never reach Python
        counts, self.presence_ = presences(con, self.lines_.select("hand_id", "player").unique(),
                                           self.usable_.select("player").unique())
        # each player's usable card-talk hands, less those heard by its most frequent listener: the room's
        # rate of talk aimed at no one partner (a planted chatter's own rate is not the room's)
        top = (self.usable_.group_by("player", "partner").agg(kp=pl.col("hand_id").n_unique())
               .group_by("player").agg(top=pl.col("kp").max()))
        per = (counts.join(self.usable_.select("player", "hand_id").unique().group_by("player").agg(k=pl.len()),
                           on="player", how="left").join(top, on="player", how="left")
               .with_columns(k=(pl.col("k").fill_null(0) - pl.col("top").fill_null(0)).clip(0)))
        # the beta prior of a player's rate of usable card talk per presence: fitted on every player's rate
        # (empirical Bayes, :func:`detectors.stats.fit_beta_prior`)
        if per.height >= 5 and int(per["k"].sum()) > 0:
            self.prior_ = stats.fit_beta_prior(per["k"].to_numpy(), per["n"].to_numpy(), max_strength=self.prior_strength)
        else:
            self.prior_ = (0.01 * self.prior_strength, 0.99 * self.prior_strength)
        self.room_rate_ = float(per["k"].sum()) / max(1, float(per["n"].sum()))
        inplay = self.lines_.filter(pl.col("in_play"))
        self.banter_share_ = float((inplay["card_talk"] < self.card_talk_p).mean()) if inplay.height else None
        # hand histories show a watcher only when it chats, and no platform event records watching
        self.missing_ = ["silent watching: a watcher's presence is known only in the hands it chatted in or played, "
                         "so its own rate counts those hands alone"]
        if self.lines_.is_empty():
            self.missing_.append("hand chat: no chat lines in hold'em or Omaha hands")
        return self

    # ------------------------------------------------------------------ score
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per ordered pair (chatter ``player``, ``opponent`` the partner) with at least one usable line.

        Method: ``k`` hands with usable card talk by the chatter while the partner was in the hand, in
        ``n`` hands both were present; the chatter's own rate from its other ``k0`` of ``n0`` presences
        under the room's beta prior; the beta-binomial tail P(X >= k | X >= 1)
        (:func:`detectors.stats.baseline_tail`, conditioned on the pair being a candidate at all).
        Explaining away: the players at the partner's table hear the same lines, so a chatter's other
        partners are tested again without the hands its strongest significant partner (q <= ``alpha``) was
        dealt in (``explained_by``: of its significant partners, the one its lines came right before most
        often, ``k_next``). Benjamini-Hochberg q over the candidates, score -log10 q.

        Returns
        -------
        ``player``, ``opponent``, ``accounts``, ``tournaments``, ``k``, ``k_next``, ``n``, ``k0``, ``n0``, ``explained_by``,
        ``p_value``, ``q_value``, ``score``."""
        schema = {"player": pl.String, "opponent": pl.String, "accounts": pl.List(pl.String),
                  "tournaments": pl.List(pl.String), "k": pl.Int64, "k_next": pl.Int64, "n": pl.Int64,
                  "k0": pl.Int64, "n0": pl.Int64, "explained_by": pl.String, "p_value": pl.Float64, "q_value": pl.Float64, "score": pl.Float64}
        if self.usable_.is_empty():
            return pl.DataFrame(schema=schema)
        t = self._tested(con, self.usable_, self.presence_)
        # the explainer: of the chatter's significant partners, the one its lines came right before most often
        best = (t.filter(pl.col("q_value") <= self.alpha).sort(["k_next", "p_value", "opponent"],
                                                                 descending=[True, False, False])
                .group_by("player", maintain_order=True).first().select("player", explained_by=pl.col("opponent")))
        if not best.is_empty():
            con.register("_hc_best", best)
            try:
                gone = con.sql("SELECT b.player, s.hand_id FROM _hc_best b JOIN seats s "
                               "ON s.player = b.explained_by AND s.dealt_in").pl()
            finally:
                con.unregister("_hc_best")
            usable = self.usable_.join(gone, on=["player", "hand_id"], how="anti")
            again = self._tested(con, usable.filter(pl.col("player").is_in(best["player"].implode())),
                                 self.presence_.join(gone, on=["player", "hand_id"], how="anti"))
            # every other partner of an explained chatter takes its figures without those hands (none left: p = 1)
            redo = t.select("player", "opponent").join(best, on="player").filter(
                pl.col("opponent") != pl.col("explained_by"))
            again = redo.join(again.drop("q_value"), on=["player", "opponent"], how="left").with_columns(
                pl.col("k", "k_next", "n", "k0", "n0").fill_null(0), pl.col("p_value").fill_null(1.0))
            t = pl.concat([t.join(redo, on=["player", "opponent"], how="anti")
                           .with_columns(explained_by=pl.lit(None, pl.String)), again], how="diagonal_relaxed")
        else:
            t = t.with_columns(explained_by=pl.lit(None, pl.String))
        q = stats.bh_qvalues(t["p_value"].to_numpy())
        t = t.with_columns(q_value=pl.Series(q), score=pl.Series(stats.score_from_q(q)),
                           accounts=pl.concat_list("player", "opponent"),
                           tournaments=pl.lit([], dtype=pl.List(pl.String)))
        return t.select(list(schema)).sort(["score", "k", "player", "opponent"], descending=[True, True, False, False])

    def _tested(self, con: duckdb.DuckDBPyConnection, usable: pl.DataFrame, presence: pl.DataFrame) -> pl.DataFrame:
        """The pairs of ``usable`` with ``k``, ``n``, ``k0``, ``n0``, the conditional tail ``p_value`` and its BH
        ``q_value``, counted over the hands of ``usable`` and ``presence`` (see :meth:`score`)."""
        pairs = usable.group_by("player", "partner").agg(
            k=pl.col("hand_id").n_unique(),
            k_next=pl.col("hand_id").filter(pl.col("next_actor") == pl.col("partner")).n_unique(),
        ).rename({"partner": "opponent"})
        con.register("_hc_pairs", pairs.select("player", "opponent"))
        con.register("_hc_presence", presence)
        try:
            together = con.sql("""
                SELECT q.player, q.opponent, count(*) AS n
                FROM _hc_pairs q JOIN _hc_presence c ON c.player = q.player
                JOIN seats s ON s.hand_id = c.hand_id AND s.player = q.opponent AND s.dealt_in
                GROUP BY ALL""").pl()
        finally:
            con.unregister("_hc_pairs")
            con.unregister("_hc_presence")
        tot = usable.select("player", "hand_id").unique().group_by("player").agg(K=pl.len()).join(
            presence.group_by("player").agg(N=pl.len()), on="player", how="left")
        t = (pairs.join(together, on=["player", "opponent"], how="left").join(tot, on="player", how="left")
             .with_columns(n=pl.max_horizontal("n", "k").cast(pl.Int64)))
        t = t.with_columns(k0=(pl.col("K") - pl.col("k")).clip(0).cast(pl.Int64),
                           n0=(pl.col("N") - pl.col("n")).clip(0).cast(pl.Int64), k=pl.col("k").cast(pl.Int64))
        a, b = self.prior_
        k, n, k0, n0 = (t[c].to_numpy().astype(float) for c in ("k", "n", "k0", "n0"))
        p = stats.baseline_tail(k, n, k0, n0, a, b) / stats.baseline_tail(np.ones_like(k), n, k0, n0, a, b)
        p = np.clip(np.nan_to_num(p, nan=1.0), 0.0, 1.0)
        return t.drop("K", "N").with_columns(p_value=pl.Series(p), q_value=pl.Series(stats.bh_qvalues(p)))

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """Flagged iff q <= ``alpha`` and the chat came in at least ``min_hands`` hands."""
        return scores.with_columns(flagged=(pl.col("q_value") <= self.alpha) & (pl.col("k") >= self.min_hands))

    # ------------------------------------------------------------------ explain
    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row of :meth:`threshold`: the chat lines beside the action each came before and
        the partner's decision after it, the counts against the chatter's own rate, the benign figures
        (the room's banter, the chatter's talk outside play, heads-up talk that reaches only the opponent).

        Returns
        -------
        :class:`~detectors.base.Signal`; ``extra["lines"]`` the lines shown (hand, line, text, the action
        it came before, the partner's next decision)."""
        a, b = row["player"], row["opponent"]
        mine = self.usable_.filter((pl.col("player") == a) & (pl.col("partner") == b)).sort("hand_id", "line")
        shown = []
        for r in mine.head(20).iter_rows(named=True):
            shown.append({"hand_id": r["hand_id"], "line": r["line"], "said": r["text"],
                          "before": f"{r['next_actor']}: {r['next_action']} ({r['next_street']})",
                          "partner_next": self._partner_next(con, r["hand_id"], b, r["next_seq"])})
        own = self.lines_.filter(pl.col("player") == a)
        outside = own.filter(~pl.col("in_play"))
        out_talk = int((outside["card_talk"] >= self.card_talk_p).sum()) if outside.height else 0
        heads_up = int(own.filter(pl.col("in_play") & (pl.col("card_talk") >= self.card_talk_p)).height - mine.height)
        k, n, k0, n0 = (int(row.get(c) or 0) for c in ("k", "n", "k0", "n0"))
        a0, b0 = self.prior_
        own_rate = (k0 + a0) / (n0 + a0 + b0)
        hands = list(dict.fromkeys(mine["hand_id"].to_list()))
        ev = [
            Evidence("hands with card talk in play the partner could use", float(k), baseline=own_rate * n, n=n,
                     p_value=row.get("p_value"),
                     text=f"{a} spoke of cards in {k} of {n} hands with {b} still in against others; its own rate "
                          f"elsewhere ({k0} of {n0}) predicts {own_rate * n:.2f}", sql=CHAT_SQL),
            Evidence("card talk outside play (post-hand, between hands)", float(out_talk), n=int(outside.height),
                     text=f"{a}'s chat lines outside play: {outside.height}, of them card talk: {out_talk} (allowed)"),
            Evidence("room's in-play chat that is banter", self.banter_share_, n=int(self.lines_["in_play"].sum()),
                     text="share of all in-play chat lines that do not speak of cards"),
        ]
        summary = (f"{a} -> {b}: chat about the hand in play in {k} hands {b} was still in against others "
                   f"(own rate predicts {own_rate * n:.2f} of {n}); q = {row.get('q_value') or 1:.2g}")
        benign = (f"Banter, talk after the hand and between hands are allowed and not counted ({outside.height} of "
                  f"{a}'s lines were outside play); in-play card talk with no partner in the hand (heads-up, to the "
                  f"opponent) is not counted either ({max(heads_up, 0)} other in-play card-talk lines of {a}). "
                  f"A chatty player's talk is judged against its own rate with everyone else ({k0} of {n0}).")
        return Signal(kind=self.kind, accounts=[a, b], score=float(row["score"]), flagged=bool(row["flagged"]),
                      summary=summary, tournaments=[], hands=hands, evidence=ev, benign=benign,
                      p_value=row.get("p_value"),
                      extra={"q_value": row.get("q_value"), "lines": shown, "sql_params": {"player": a, "opponent": b},
                             "shape": row.get("shape", "pair"), "edges": [[a, b]]})

    @staticmethod
    def _partner_next(con: duckdb.DuckDBPyConnection, hand_id: str, partner: str, seq: int | None) -> str | None:
        """The partner's first decision at or after action ``seq`` (``"call (turn)"``), bound parameters."""
        r = con.execute("SELECT action, street FROM actions WHERE hand_id = ? AND player = ? AND seq >= ? "
                        "AND action NOT LIKE 'post%' ORDER BY seq LIMIT 1", [hand_id, partner, seq or 0]).fetchall()
        return f"{r[0][0]} ({r[0][1]})" if r else None


__all__ = ["CHAT_SQL", "HandChatDetector"]
