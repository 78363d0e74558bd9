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
from detectors.chip_dumping.presence import preflop_continuations
from detectors.features import gameplay as gp
from detectors.features.window_views import window_tables


# The value $player gave $opponent in each heads-up decision, cards known (_cdv_: the fit's value rows, sorted by the
# pair: the scan reads that pair's row groups only), in hand and decision order
VALUE_ROWS_SQL = """
SELECT hand_id, value_given FROM _cdv_{tag} WHERE player = $player AND opponent = $opponent ORDER BY hand_id, seq
"""
#: rows per row group of the value rows' file (a pair's rows are found by the row groups' min and max)
VALUE_ROW_GROUP = 16_384


# The tournaments of the hands $hands among the window's heads-up decisions (_cdt_; the day files are in hand order:
# DuckDB skips the row groups outside the hands' range)
TOURNAMENTS_SQL = """
SELECT DISTINCT tournament_id FROM _cdt_{tag}
WHERE tournament_id IS NOT NULL AND list_contains($hands, hand_id) ORDER BY tournament_id
"""


# The hands the players $players were dealt into (the evidence's presence hands: the giver's continuations among them)
DEALT_IN_SQL = "SELECT player, hand_id FROM seats WHERE dealt_in AND list_contains($players, player)"


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
        """What the chip flow says where it is below the flag's bar: why the case is not flagged, or why it is
        flagged all the same (the chips moved in the deviation hands, or the value given, cards known, is
        significant on its own)."""
        flow, fh = row.get("net_flow_bb") or 0.0, int(row.get("flow_hands") or 0)
        known = int(row.get("value_n") or 0) >= self.min_value_n and not getattr(self, "flow_gate_cards_known", True)
        if flow >= self.min_flow_bb and fh >= self.min_hu_hands and (row.get("flagged") or not known):
            return ""
        moved = f"the chips did not move from {a} to {b}: net {flow:.0f} bb in {fh} hands where {a} lost to {b}"
        dev, dexp = float(row.get("dev_flow_bb") or 0.0), float(row.get("dev_exp_bb") or 0.0)
        dh, dl = int(row.get("dev_hands") or 0), int(row.get("dev_loss_hands") or 0)
        in_dev = (f"{a} lost {dev:.0f} bb to {b} in the {dh} hands where {a} put chips in with a weak hand or folded a "
                  f"made hand on the turn or river to {b} (lost in {dl} of them; {a}'s own rate in such hands against "
                  f"others predicts {dexp:.0f} bb)")
        if flow >= self.min_flow_bb and fh >= self.min_hu_hands:  # the cards known: the flow over all hands is no gate
            return (f" Not flagged: {a} lost {flow:.0f} bb to {b} over all their hands, but with the cards known a "
                    f"flag needs the chips to have moved where {a}'s play deviates ({in_dev}: at least "
                    f"{self.min_flow_bb:.0f} bb beyond that rate) or the value given significant (p = "
                    f"{row.get('value_p') or 1:.2g}); over all hands a stronger player's edge and the cards' luck "
                    f"move chips too.")
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
        if known:  # the flow over all hands is no gate with the cards known (ChipDumpingDetector._flow_moved)
            return (f" Not flagged, {moved}; with the cards known a flag needs at least {self.min_flow_bb:.0f} bb lost "
                    f"where {a}'s play deviates beyond {a}'s own rate there ({in_dev}), or the value given significant.")
        return (f" Not flagged, {moved}; a flag needs at least {self.min_flow_bb:.0f} bb lost in at least "
                f"{self.min_hu_hands} hands{gate}.")

    def _evidence_hands(self, con: duckdb.DuckDBPyConnection, edges: list[list[str]], limit: int = 25) -> list[str]:
        """The dump hands, strongest first: heads-up hands where the giver handed the receiver at least
        one big blind of value (cards known), by value; then the giver's preflop calls or raises with
        the receiver dealt in, weakest starting hand first (the calls the giver folds elsewhere); then
        the rest of the heads-up hands with positive value.

        Parameters
        ----------
        con : the warehouse; the receivers' dealt-in seats are read from it through the fitted window
        (:func:`~detectors.features.window_views.window_tables`), for these edges only. edges : (giver, receiver)
        pairs. limit : the number of hands returned.

        Returns
        -------
        hand ids, strongest first."""
        vh = self._value_hands(con, edges)
        out = vh.filter(pl.col("v") >= 1.0)["hand_id"].to_list()
        small = vh.filter(pl.col("v") < 1.0)["hand_id"].to_list()
        pres = []
        parts = []
        # the givers' continuations and the receivers' dealt-in hands, read through the fitted window for these edges
        with window_tables(con, self.window_) as wcon:
            cont = preflop_continuations(wcon, sorted({a for a, _ in edges}))
        givers = set(cont["player"].unique().to_list())
        dealt = self._dealt_in(con, sorted({b for a, b in edges if a in givers}))
        for a, b in edges:
            if a in givers:
                parts.append(cont.filter(pl.col("player") == a).select("hand_id", "strength")
                             .join(dealt.filter(pl.col("player") == b), on="hand_id", how="semi"))
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

    def _fit_value_rows(self, con: duckdb.DuckDBPyConnection, dec: duckdb.DuckDBPyRelation | None) -> None:
        """Sets ``value_rows_``: the path of a Parquet file of the value given in each heads-up decision of the
        window ``dec`` (cards known: player, opponent, hand_id, seq, value_given), written by DuckDB sorted by giver
        and receiver (out of core; in a temporary folder removed when the detector is collected or refitted), so
        that the evidence of one pair reads the few row groups of that pair (None without decisions)."""
        if getattr(self, "value_rows_", None) is not None:
            shutil.rmtree(Path(self.value_rows_).parent, ignore_errors=True)  # a refit: the previous fit's file goes
        self.value_rows_ = None
        if dec is None:
            return
        folder = tempfile.mkdtemp(prefix="railbird-chip-dumping-")
        weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)  # the registry keeps the finalizer
        path = str(Path(folder) / "value_rows.parquet")
        dec.filter("value_given IS NOT NULL").select("player, opponent, hand_id, seq, value_given") \
            .order("player, opponent, hand_id, seq").write_parquet(path, row_group_size=VALUE_ROW_GROUP)
        self.value_rows_ = path

    def _value_hands(self, con: duckdb.DuckDBPyConnection, edges: list[list[str]]) -> pl.DataFrame:
        """The heads-up hands where the givers of ``edges`` gave their receivers value (cards known), most first.

        Parameters
        ----------
        con : the warehouse. edges : (giver, receiver) pairs.

        Returns
        -------
        hand_id, ``v`` (the value given in the hand over the edges, positive), by ``v`` descending then hand id:
        each edge's rows read by DuckDB from ``value_rows_`` (:data:`VALUE_ROWS_SQL`: the row groups of that pair
        only), summed per hand in the order of the edges and of the decisions."""
        empty = pl.DataFrame(schema={"hand_id": pl.Utf8, "v": pl.Float64})
        if self.value_rows_ is None or not edges:
            return empty
        tag = f"{os.getpid()}_{id(self)}"
        con.register(f"_cdv_{tag}", con.read_parquet(self.value_rows_))
        try:
            rows = [con.sql(VALUE_ROWS_SQL.format(tag=tag), params={"player": a, "opponent": b}).pl() for a, b in edges]
        finally:
            con.unregister(f"_cdv_{tag}")
        d = pl.concat(rows)
        if d.is_empty():
            return empty
        h = d.group_by("hand_id", maintain_order=True).agg(v=pl.col("value_given").sum())
        return h.filter(pl.col("v") > 0).sort(["v", "hand_id"], descending=[True, False])

    def _tournaments(self, con: duckdb.DuckDBPyConnection, hands: list[str]) -> list[str]:
        """The tournaments of ``hands`` among the window's heads-up decisions (``dec_``; none for cash games or
        hands without such a decision), sorted."""
        if self.dec_ is None or not hands:
            return []
        tag = f"{os.getpid()}_{id(self)}"
        con.register(f"_cdt_{tag}", self.dec_.relation(con))
        try:
            got = con.sql(TOURNAMENTS_SQL.format(tag=tag), params={"hands": list(hands)}).fetchall()
        finally:
            con.unregister(f"_cdt_{tag}")
        return [r[0] for r in got]

    def _flow_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The value given with the cards known, the net chips moved and, where there are any, the chips moved in
        the deviation hands."""
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

    def _dealt_in(self, con: duckdb.DuckDBPyConnection, players: list[str]) -> pl.DataFrame:
        """The hands each of ``players`` was dealt into, within the fitted window (``window_``).

        Parameters
        ----------
        con : the warehouse. players : account names.

        Returns
        -------
        player, hand_id (no rows without players)."""
        if not players:
            return pl.DataFrame(schema={"player": pl.Utf8, "hand_id": pl.Utf8})
        with window_tables(con, self.window_) as wcon:
            return wcon.sql(DEALT_IN_SQL, params={"players": players}).pl()

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
            tournaments=self._tournaments(con, hands := self._evidence_hands(con, edges)),
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
