"""What a chip-dumping signal says: the value given with the cards known, the chips moved (overall and in the
deviation hands), the count and presence tests, the dump hands strongest first."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from detectors.base import Evidence, Signal
from detectors.chip_dumping.flows import PAIR_LOSS_BB
from detectors.features import gameplay as gp


# The value $player gave $opponent in each heads-up decision, cards known, and the hand's tournament (the fit's value
# rows, the file $path, sorted by the pair: the scan reads that pair's row groups only), in hand and decision order
VALUE_ROWS_SQL = """
SELECT hand_id, value_given, tournament_id FROM read_parquet($path) WHERE player = $player AND opponent = $opponent
ORDER BY hand_id, seq
"""
#: rows per row group of the evidence's files (a player's rows are found by the row groups' min and max)
VALUE_ROW_GROUP = 16_384


# The evidence's presence hands of one edge: $player's preflop continuations facing a bet (the fit's continuation
# rows, the file $continuations, sorted by player) in the hands $opponent was dealt into (the fit's dealt-in seats, the
# file $dealt, sorted by player), with the starting hand's strength and the tournament of a hand among the heads-up
# decisions; each file's scan reads the row groups of its player only
PRESENCE_HANDS_SQL = """
SELECT c.hand_id, c.strength, c.tournament_id FROM read_parquet($continuations) c
WHERE c.player = $player AND c.hand_id IN (SELECT hand_id FROM read_parquet($dealt) WHERE player = $opponent)
"""


# The fit's continuation rows: every preflop continuation facing a bet of the window (_cdp_: the preflop table,
# presence.preflop_table, with its strength) and, where the hand is among the window's heads-up decisions (_cdh_) in
# a tournament, that tournament (the tournaments a signal lists are those of its hands among the heads-up decisions)
CONTINUATION_ROWS_SQL = """
SELECT p.player, p.hand_id, p.strength, t.tournament_id
FROM _cdp_{tag} p LEFT JOIN (SELECT hand_id, any_value(tournament_id) AS tournament_id FROM _cdh_{tag}
                             WHERE tournament_id IS NOT NULL GROUP BY hand_id) t USING (hand_id)
WHERE p.cont
"""
#: the same without heads-up decisions (no tournament)
CONTINUATION_ROWS_NO_HU_SQL = """
SELECT player, hand_id, strength, NULL::VARCHAR AS tournament_id FROM _cdp_{tag} WHERE cont
"""


# The fit's dealt-in seats: who was dealt into which hand of the window (the evidence's presence hands)
DEALT_IN_SQL = "SELECT player, hand_id FROM seats WHERE dealt_in"


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


class EvidenceMixin:
    """The ``explain`` of :class:`~detectors.chip_dumping.ChipDumpingDetector`."""

    def _flow_note(self, row: dict[str, Any], a: str, b: str) -> str:
        """What the chips that moved say of the case: why it is not flagged, or why it is flagged all the same (the
        chips moved in the deviation hands, or the value given, cards known, is significant on its own), or, where the
        cards are unknown, the chips-moved test over every hand in which chips moved between the two, with its figures. The benign explanation "the
        chips did not move" is stated with its two tests' p (:func:`~detectors.chip_dumping.moved.deviation_moved_p`,
        :func:`~detectors.chip_dumping.moved.exchange_moved_p`, :func:`~detectors.chip_dumping.moved.amount_rank_p`)."""
        flow, fh = row.get("net_flow_bb") or 0.0, int(row.get("flow_hands") or 0)
        known = not self.flow_gate_cards_known and int(row.get("value_n") or 0) >= self.min_value_n  # as _flow_moved
        half = (self.alpha if self.moved_level is None else self.moved_level) / 2
        ok = lambda x: x is not None and x == x  # noqa: E731  (a p that was made)
        fmp, fap = row.get("flow_moved_p"), row.get("flow_amount_p")
        flow_moved = ok(fmp) and min(fmp, fap if ok(fap) else 1.0) <= half
        met = self._exchange_words(row, a, b, half)
        if not known and flow_moved:
            return f" The chips moved from {a} to {b} (the cards unknown): {met}."
        moved = f"the chips did not move from {a} to {b}: net {flow:.0f} bb in {fh} hands where {a} lost to {b}"
        dev, dexp = float(row.get("dev_flow_bb") or 0.0), float(row.get("dev_exp_bb") or 0.0)
        dh, dl = int(row.get("dev_hands") or 0), int(row.get("dev_loss_hands") or 0)
        mp, ap = row.get("moved_p"), row.get("amount_p")
        lv_value, lv_own, lv_amount = self._gate_levels()
        value_made = (self.value_gate and int(row.get("value_n") or 0) >= self.min_value_n
                      and int(row.get("n0") or 0) >= self.min_value_n)  # as ChipDumpingDetector._value_made
        lv_own = lv_own if value_made else 2 * lv_own
        test = ("too few hands to test whether they moved" if not ok(mp) else
                f"that {a} lost no more to {b} there than its own losses in such hands allow: p = {mp:.2g} (a flag "
                f"needs at most {lv_own:g}); that no more moved than between the population's pairs: p = "
                f"{ap if ap is not None else 1.0:.2g} (at most {lv_amount:g})")
        in_dev = (f"{a} lost {dev:.0f} bb to {b} in the {dh} hands where {a} put chips in with a weak hand or folded a "
                  f"made hand on the turn or river to {b} (lost in {dl} of them; {a}'s own rate in such hands against "
                  f"others predicts {dexp:.0f} bb; {test})")
        if row.get("flagged"):
            if flow_moved:  # the cards known, and the chips moved over every hand exchanged as well
                return ""
            if self.deviation_gate and ((mp if ok(mp) else 1.0) <= lv_own or (ap or 1.0) <= lv_amount):
                return (f" Flagged although {moved} over all their hands: {in_dev}; the ordinary hands won back what "
                        f"the deviating ones gave.")
            return (f" Flagged although {moved}: the value {a} gave {b} with the cards known is significant on its "
                    f"own (p = {row.get('value_p') or 1:.2g} against at most {lv_value:g}, a quarter of the chips-moved "
                    f"gate's level, {int(row.get('value_n') or 0)} heads-up hands against {a}'s own play towards "
                    f"others); the realised chips carry the luck of the cards, the value does not.")
        if known and flow_moved:  # the cards known: the flow over every hand exchanged is no gate
            return (f" Not flagged: {met}, but with the cards known a flag needs the chips to have moved where {a}'s "
                    f"play deviates ({in_dev}) or the value given significant (p = {row.get('value_p') or 1:.2g}); "
                    f"over all hands a stronger player's edge and the cards' luck move chips too.")
        if known:  # the flow over all hands is no gate with the cards known (ChipDumpingDetector._flow_moved)
            return (f" Not flagged, {moved}; with the cards known a flag needs the chips to have moved where {a}'s "
                    f"play deviates ({in_dev}), or the value given significant.")
        gate = (f", or, with the cards known, the value given significant at p <= {lv_value:g} on at least "
                f"{self.min_value_n} heads-up hands" if self.value_gate else "")
        if self.deviation_gate:
            gate += f", or the chips moved where {a}'s play deviates ({in_dev})"
        return (f" Not flagged, {moved}; where the cards are unknown a flag needs the chips to have moved in the "
                f"hands in which chips moved between them ({met}){gate}.")

    def _exchange_words(self, row: dict[str, Any], a: str, b: str, half: float) -> str:
        """The chips-moved test over every hand in which chips moved between A and B (the cards unknown) in words: the
        chips, A's own rate, the two tests' p and the level a flag needs (``half``)."""
        mf, me = float(row.get("xch_flow_bb") or 0.0), float(row.get("xch_exp_bb") or 0.0)
        mh, ml = int(row.get("xch_hands") or 0), int(row.get("xch_loss_hands") or 0)
        fmp, fap = row.get("flow_moved_p"), row.get("flow_amount_p")
        test = ("too few hands to test whether they moved" if fmp is None or fmp != fmp else
                f"that {a} lost no more to {b} than its own losses per such hand against others allow, with the pair's own "
                f"variance: p = {fmp:.2g}; that no more moved than between the population's pairs: p = "
                f"{fap if fap is not None else 1.0:.2g}; a flag needs either at most {half:g}")
        return (f"{a} lost {mf:.0f} bb to {b} over the {mh} hands in which chips moved between them ({a} lost in {ml} "
                f"of them; {a}'s own rate in such hands against others predicts {me:.0f} bb; {test})")

    def _evidence_hands(self, con: duckdb.DuckDBPyConnection, edges: list[list[str]], limit: int = 25) -> list[str]:
        """The dump hands of ``edges``, strongest first (:meth:`_evidence`'s hands)."""
        return self._evidence(con, edges, limit)[0]

    def _evidence(self, con: duckdb.DuckDBPyConnection, edges: list[list[str]], limit: int = 25
                  ) -> tuple[list[str], list[str]]:
        """The dump hands, strongest first: heads-up hands where the giver handed the receiver at least
        one big blind of value (cards known), by value; then the giver's preflop calls or raises with
        the receiver dealt in, weakest starting hand first (the calls the giver folds elsewhere); then
        the rest of the heads-up hands with positive value; and their tournaments.

        Parameters
        ----------
        con : the connection the fit's evidence files are read on (the rows of these edges only: each file is
        sorted by player, and DuckDB reads the row groups of these players; nothing of the window is scanned).
        edges : (giver, receiver) pairs. limit : the number of hands returned.

        Returns
        -------
        (hand ids strongest first, the sorted tournaments of those hands among the window's heads-up decisions:
        none for cash games or hands without such a decision)."""
        vh = self._value_hands(con, edges)
        out = vh.filter(pl.col("v") >= 1.0)["hand_id"].to_list()
        small = vh.filter(pl.col("v") < 1.0)["hand_id"].to_list()
        pres = self._presence_hands(con, edges)
        seen: set[str] = set()
        ranked = []
        for hid in [*out, *pres["hand_id"].to_list(), *small]:
            if hid not in seen:
                seen.add(hid)
                ranked.append(hid)
        ranked = ranked[:limit]
        # a hand's tournament is the same in both sources (the hand's own), null outside the heads-up decisions
        tours = pl.concat([vh.select("hand_id", "tournament_id"), pres.select("hand_id", "tournament_id")])
        return ranked, sorted(set(tours.filter(pl.col("hand_id").is_in(ranked))["tournament_id"].drop_nulls()))

    def _presence_hands(self, con: duckdb.DuckDBPyConnection, edges: list[list[str]]) -> pl.DataFrame:
        """The givers' preflop continuations facing a bet with their receivers dealt in, weakest starting hand first.

        Parameters
        ----------
        con : the connection the files are read on. edges : (giver, receiver) pairs.

        Returns
        -------
        hand_id (each once, at its weakest strength over the edges; unknown strength last), tournament_id (the
        hand's among the window's heads-up decisions, else null): each edge's rows read by DuckDB from
        ``continuation_rows_`` and ``dealt_in_rows_`` (:data:`PRESENCE_HANDS_SQL`)."""
        empty = pl.DataFrame(schema={"hand_id": pl.Utf8, "tournament_id": pl.Utf8})
        if getattr(self, "continuation_rows_", None) is None or not edges:
            return empty
        files = {"continuations": self.continuation_rows_, "dealt": self.dealt_in_rows_}
        parts = [con.sql(PRESENCE_HANDS_SQL, params={**files, "player": a, "opponent": b}).pl() for a, b in edges]
        x = pl.concat(parts).sort(["strength", "hand_id"], nulls_last=True)
        return x.unique("hand_id", keep="first", maintain_order=True).select("hand_id", "tournament_id")

    def _new_evidence_folder(self) -> None:
        """Sets ``evidence_dir_``: a new temporary folder for this fit's evidence files (removed when the detector is
        collected or refitted: the previous fit's folder goes now), and clears the files' attributes."""
        if getattr(self, "evidence_dir_", None) is not None:
            shutil.rmtree(self.evidence_dir_, ignore_errors=True)
        self.evidence_dir_ = tempfile.mkdtemp(prefix="railbird-chip-dumping-")
        weakref.finalize(self, shutil.rmtree, self.evidence_dir_, ignore_errors=True)  # the registry keeps it
        self.value_rows_ = self.continuation_rows_ = self.dealt_in_rows_ = None

    def _fit_value_rows(self, con: duckdb.DuckDBPyConnection, dec: duckdb.DuckDBPyRelation | None) -> None:
        """Sets ``value_rows_``: the path of a Parquet file of the value given in each heads-up decision of the
        window ``dec`` (cards known: player, opponent, hand_id, seq, value_given, tournament_id), written by DuckDB
        sorted by giver and receiver (out of core; in ``evidence_dir_``), so that the evidence of one pair reads the
        few row groups of that pair (None without decisions)."""
        self.value_rows_ = None
        if dec is None:
            return
        path = str(Path(self.evidence_dir_) / "value_rows.parquet")
        dec.filter("value_given IS NOT NULL").select("player, opponent, hand_id, seq, value_given, tournament_id") \
            .order("player, opponent, hand_id, seq").write_parquet(path, row_group_size=VALUE_ROW_GROUP)
        self.value_rows_ = path

    def _fit_presence_rows(self, con: duckdb.DuckDBPyConnection, pdec: duckdb.DuckDBPyRelation) -> None:
        """Sets ``continuation_rows_`` and ``dealt_in_rows_``: the paths of two Parquet files the evidence's presence
        hands are read from, once per fit instead of a scan of the window's actions and seats per signal.

        Parameters
        ----------
        con : the warehouse read through the fitted window (:func:`~detectors.features.window_views.window_tables`).
        pdec : the window's preflop decisions facing a bet with their starting-hand ``strength``
            (:func:`~detectors.chip_dumping.presence.preflop_table`, a relation on ``con``).

        The continuations (player, hand_id, strength, tournament_id: :data:`CONTINUATION_ROWS_SQL`) and the dealt-in
        seats (player, hand_id: :data:`DEALT_IN_SQL`), each written by DuckDB sorted by player and hand (out of core,
        in ``evidence_dir_``), so that one signal reads the row groups of its players only."""
        tag = f"{os.getpid()}_{id(self)}"
        con.register(f"_cdp_{tag}", pdec)
        if self.dec_ is not None:
            con.register(f"_cdh_{tag}", self.dec_.relation(con))
        try:
            sql = CONTINUATION_ROWS_SQL if self.dec_ is not None else CONTINUATION_ROWS_NO_HU_SQL
            path = str(Path(self.evidence_dir_) / "continuations.parquet")
            con.sql(sql.format(tag=tag)).order("player, hand_id").write_parquet(path, row_group_size=VALUE_ROW_GROUP)
            self.continuation_rows_ = path
        finally:
            con.unregister(f"_cdp_{tag}")
            if self.dec_ is not None:
                con.unregister(f"_cdh_{tag}")
        path = str(Path(self.evidence_dir_) / "dealt_in.parquet")
        con.sql(DEALT_IN_SQL).order("player, hand_id").write_parquet(path, row_group_size=VALUE_ROW_GROUP)
        self.dealt_in_rows_ = path

    def _value_hands(self, con: duckdb.DuckDBPyConnection, edges: list[list[str]]) -> pl.DataFrame:
        """The heads-up hands where the givers of ``edges`` gave their receivers value (cards known), most first.

        Parameters
        ----------
        con : the warehouse. edges : (giver, receiver) pairs.

        Returns
        -------
        hand_id, ``v`` (the value given in the hand over the edges, positive), tournament_id (the hand's, null in
        cash games), by ``v`` descending then hand id: each edge's rows read by DuckDB from ``value_rows_``
        (:data:`VALUE_ROWS_SQL`: the row groups of that pair only), summed per hand in the order of the edges and of
        the decisions."""
        empty = pl.DataFrame(schema={"hand_id": pl.Utf8, "v": pl.Float64, "tournament_id": pl.Utf8})
        if self.value_rows_ is None or not edges:
            return empty
        rows = [con.sql(VALUE_ROWS_SQL, params={"path": self.value_rows_, "player": a, "opponent": b}).pl()
                for a, b in edges]
        d = pl.concat(rows)
        if d.is_empty():
            return empty
        h = d.group_by("hand_id", maintain_order=True).agg(v=pl.col("value_given").sum(),
                                                           tournament_id=pl.col("tournament_id").first())
        return h.filter(pl.col("v") > 0).sort(["v", "hand_id"], descending=[True, False])

    def _flow_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The value given with the cards known, the net chips moved, where the cards are unknown the chips moved per
        hand in which they moved between the two (the flag's test there), and, where there are any, the chips moved
        in the deviation hands."""
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
        known = not self.flow_gate_cards_known and n >= self.min_value_n  # as ChipDumpingDetector._flow_moved
        if not known and row.get("xch_hands"):  # the cards unknown: the chips of every hand exchanged are the gate
            fmp = row.get("flow_moved_p")
            half = (self.alpha if self.moved_level is None else self.moved_level) / 2
            ev.append(Evidence(
                name=f"chips {a} lost to {b} per hand in which chips moved between them (bb, net)",
                value=float(row.get("xch_flow_bb") or 0.0), baseline=float(row.get("xch_exp_bb") or 0.0),
                n=int(row["xch_hands"]), p_value=None if fmp is None or fmp != fmp else float(fmp),
                text=self._exchange_words(row, a, b, half),
                sql=gp.CHIP_FLOW_SQL,
            ))
        if row.get("dev_hands"):
            dev, dexp = float(row.get("dev_flow_bb") or 0.0), float(row.get("dev_exp_bb") or 0.0)
            dh, dl = int(row["dev_hands"]), int(row.get("dev_loss_hands") or 0)
            mp, ap = row.get("moved_p"), row.get("amount_p")
            ev.append(Evidence(
                name=f"chips {a} lost to {b} in the hands where {a}'s play deviates (bb, net)",
                value=dev, baseline=dexp, n=dh, p_value=None if mp is None or mp != mp else float(mp),
                text=f"net {dev:.0f} bb moved from {a} to {b} in the {dh} hands where {a} put chips in with a weak "
                     f"hand or folded a made hand to {b} on the turn or river ({a} lost in {dl} of them); {a}'s own "
                     f"rate in such hands against others predicts {dexp:.0f} bb"
                     + ("" if mp is None or mp != mp else
                        f"; that the chips did not move (no more lost to {b} there than {a}'s own losses in such "
                        f"hands allow, per hand met, with the pair's own variance): p = {mp:.2g}")
                     + ("" if ap is None else f"; that no more moved than between the population's pairs: p = {ap:.2g}"),
                sql=DEVIATION_FLOW_COUNTS_SQL,
            ))
        return ev

    def _count_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The count tests (junk commitments, folds, receiver aggression, late folds) against the own rates."""
        a, b = row["player"], row["opponent"]
        ev: list[Evidence] = []
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
        return ev

    def _presence_evidence(self, row: dict[str, Any], no_own_baseline: bool) -> list[Evidence]:
        """The presence test: continuations with the receiver dealt in against the giver's own rate without it."""
        a, b = row["player"], row["opponent"]
        ev: list[Evidence] = []
        if row.get("pres_n"):
            pk, pn, pe = float(row.get("pres_k") or 0), float(row["pres_n"]), float(row.get("pres_e") or 0)
            bn, bk = float(row.get("base_n") or 0), float(row.get("base_k") or 0)
            own = float(row.get("own_n") or 0)
            untested = (f"; not tested: {a} made only {int(own)} such decisions without {b} in the hours they shared, too "
                        f"few for a baseline of {a}'s own" if no_own_baseline else "")
            ev.append(Evidence(
                name=f"{a} continues preflop facing a bet with {b} dealt in",
                value=pk / pn, baseline=pe / pn, n=int(pn), p_value=row.get("pres_p"),
                text=f"{a} called or raised {int(pk)} of {int(pn)} preflop bets with {b} dealt in; {a}'s own rate without {b}, "
                     f"in the same hour and at the same hand strength, price and stack ({int(bk)} of {int(bn)}; thin bins shrunk towards "
                     f"the population's rate moved by {a}'s own looseness in that hour), predicts {pe:.1f}{untested}",
                sql=PRESENCE_COUNTS_SQL,
            ))
        return ev

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
        hands, tournaments = self._evidence(con, edges)
        a, b = row["player"], row["opponent"]
        vm, m0, n = row.get("value_mean") or 0.0, row.get("mean0") or 0.0, int(row.get("value_n") or 0)
        no_own_baseline = row.get("pres_p") is None and float(row.get("own_n") or 0) < self.min_presence_own
        ev = [*self._flow_evidence(row), *self._count_evidence(row), *self._presence_evidence(row, no_own_baseline)]
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
            tournaments=tournaments,
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
