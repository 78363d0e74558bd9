"""What a coordinated sit-out signal says: each pair's coincidences against its own sit-out rates, the
co-occurring sit-outs by event, the waves left out."""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from detectors.base import Evidence, Signal, is_missing, sql_literal as _lit


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _times_evidence(co: pl.DataFrame, accs: list[str]) -> Evidence:
    """The co-occurring sit-outs of a case by event: each account's start time and, where the platform logged its
    sit_in, how long it was away (the return mark's figure)."""
    per_event = (
        pl.concat([co.select(pl.col("tournament_id"), pl.col("a").alias("acc"), pl.col("ts_a").alias("ts"),
                             pl.col("dur_a").cast(pl.Float64).alias("dur")),
                   co.select(pl.col("tournament_id"), pl.col("b").alias("acc"), pl.col("ts_b").alias("ts"),
                             pl.col("dur_b").cast(pl.Float64).alias("dur"))])
        .unique().sort("tournament_id", "ts", "acc")  # starts of one second in account order (unique keeps none)
        .group_by("tournament_id", maintain_order=True)
        # the platform's sit_in, where logged: how long each was away (the return mark's figure)
        .agg(txt=pl.when(pl.col("dur").is_not_null())
             .then(pl.format("{} {} (back {} s later)", pl.col("acc"), pl.col("ts").dt.strftime("%H:%M:%S"),
                             pl.col("dur").round(0).cast(pl.Int64)))
             .otherwise(pl.format("{} {}", pl.col("acc"), pl.col("ts").dt.strftime("%H:%M:%S"))))
    )
    times = [f"{r['tournament_id']}: " + ", ".join(r["txt"]) for r in per_event.iter_rows(named=True)]
    return Evidence(
        name="co-occurring sit-outs (tournament, times)", value=float(per_event.height), n=co.height,
        text="; ".join(times),
        sql=("SELECT account, tournament_id, kind, ts FROM sit_events WHERE account IN ("
             + ", ".join(_lit(a) for a in accs) + ") ORDER BY tournament_id, ts"),
    )


class EvidenceMixin:
    """The ``explain`` of :class:`~detectors.coordinated_sitout.CoordinatedSitoutDetector`."""

    def _single_text(self, r: dict[str, Any]) -> str:
        """A lone coincidence's corroboration (co-entry), in words."""
        if r.get("n_co") != 1 or is_missing(r.get("p_single")):
            return ""
        n_fam = max(self.n_single_, 1)
        return (f"; sat out together once only: co-entered ({r['n_shared_t']} events entered together, "
                f"co-entry p {r['p_coentry']:.3g} under the configuration model, needed <= {self.single_coentry_p:g}), "
                f"coincidence p {r['p_single']:.3g} x {n_fam} co-entering pairs that could have sat out together "
                f"(Bonferroni) = {min(1.0, r['p_single'] * n_fam):.3g}, needed <= {self.single_alpha:g}")

    def _friends_text(self, pairs: pl.DataFrame, co: pl.DataFrame) -> str:
        """Friends who play the same events and take the same breaks, in words with their figures: the events the
        pair's players both sat out in, the sit-outs of the event starting at the same moments."""
        if co.height == 0:
            return ""
        crowd = co.join(self.starts_.select(pl.col("account").alias("a"), "tournament_id", pl.col("ts").alias("ts_a"),
                                            "crowd"), on=["a", "tournament_id", "ts_a"], how="left")["crowd"]
        crowd_max = int(crowd.fill_null(2).max())
        shared = int(pairs["n_shared"].max()) if "n_shared" in pairs.columns else len(pairs["shared_events"][0] or [])
        return (f"Friends who play the same events and take the same breaks: both sat out, outside breaks and waves, "
                f"in {shared} events they both entered; the test holds each player to their own sit-outs in each "
                f"event, so playing and pausing in the same events is no evidence, only the timing is; at the "
                f"co-occurrences at most {crowd_max} sit-outs of the event (these accounts' included) started within "
                f"the same window, too few of the players still in for a break or a wave. ")

    def _split_text(self, pairs: pl.DataFrame, accs: list[str]) -> str:
        """Groups that sat out at the same moments as another group, in words: the size of the component of flagged
        pairs this case was split from (:mod:`detectors.coordinated_sitout.split`); empty when it was not."""
        if "component" not in pairs.columns or pairs["component"].is_null().all():
            return ""
        whole = int(pairs["component"].max())
        if whole <= len(accs):
            return ""
        return (f"Other groups sitting out at the same moments (a bubble, a stage of the field) join with this one: "
                f"its flagged pairs joined {whole} accounts, split by the pairs' own evidence (-log10 p times the "
                f"share of their sit-outs that coincided, Louvain communities) into the groups that sat out "
                f"together; these {len(accs)} are one, the pairs across groups are listed on their own. ")

    def _group_evidence(self, pairs: pl.DataFrame) -> list[Evidence]:
        """One row per group test among ``pairs`` (the groups their edges belong to, lowest q first; none where no
        pair is an edge of a group)."""
        if "q_group" not in pairs.columns or pairs["q_group"].is_null().all():
            return []
        groups = (pairs.filter(pl.col("q_group").is_not_null())
                  .sort("q_group", "group_stat", descending=[False, True])
                  .unique("group_accounts", keep="first", maintain_order=True))
        per_pop = float(getattr(self, "group_null_per_population_", 0.0))
        out = []
        for g in groups.iter_rows(named=True):
            accs = list(g["group_accounts"])
            out.append(Evidence(
                name="group test: " + ", ".join(accs), value=float(g["group_stat"]), baseline=round(per_pop, 3),
                n=int(g["group_events"]), p_value=None,
                text=(f"{len(accs)} accounts, every pair of them sat out together and each of them with the others "
                      f"in at least {self.group_min_events} events ({g['group_events']} events in all); Fisher's "
                      f"combination of their pairs' coincidence tests: -log10 p {g['group_stat']:.2f}. Against "
                      f"{self.group_null} simulated populations (each start moved to a time drawn from the event's "
                      f"other players' sit-outs, within {self.group_bandwidth_s:.0f} s, inside the player's span: the "
                      f"event's own rate at that moment, so a table break or a disconnect of several players is no "
                      f"evidence), {g['q_group']:.3g} is the estimated false-discovery rate of flagging every group "
                      f"this strong; such groups in a simulated population: {per_pop:.2f} on average (the "
                      f"baseline)"),
                sql=("SELECT account, tournament_id, kind, ts FROM sit_events WHERE kind = 'sit_out' AND account IN ("
                     + ", ".join(_lit(a) for a in accs) + ") ORDER BY tournament_id, ts"),
            ))
        return out

    # ------------------------------------------------------------------ explain
    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one group row of :meth:`threshold`: each pair's coincidences against its own
        sit-out rates (count, closeness, lengths, permutation test), the co-occurring sit-outs by event, the
        waves left out.

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold` (its ``pairs`` hold the group's pairs).

        Returns
        -------
        :class:`~detectors.base.Signal` (``extra["cooccurrences"]``; ``extra["window"]``: the first and last day
        judged, when the window is not every day). The evidence SQL shown to copy reads ``sit_events`` whole: it
        names the case's accounts only."""
        accs = list(row["accounts"])
        pairs = self.pairs_of(row)
        co = self.co_.filter(pl.col("a").is_in(accs) & pl.col("b").is_in(accs)).sort("ts_a")
        ev: list[Evidence] = []
        for r in pairs.sort("score", descending=True).iter_rows(named=True):
            a, b = r["a"], r["b"]
            perm = ("" if r.get("p_perm") is None else
                    f"; {r['expected']:.2f} co-occurrences expected when each player's sit-outs are shuffled "
                    f"within the event ({self.n_perm} permutations, seed {self.random_state}), permutation p "
                    f"{r['p_perm']:.3g}")
            ev.append(Evidence(
                name=f"sit-outs started together: {a} & {b}", value=float(r["n_co"]),
                baseline=None if r.get("expected") is None else round(float(r["expected"]), 3),
                n=int(min(r["n_starts_a"], r["n_starts_b"])),
                p_value=float(r["p_value"]),
                text=(f"{a} ({r['n_starts_a']} sit-outs) and {b} ({r['n_starts_b']}) in {len(r['shared_events'])} "
                      f"shared events started sitting out together {r['n_co']} times in {len(r['co_tournaments'])} "
                      f"tournaments, closest {r['min_gap']:.1f} s apart; {r['lam']:.3g} coincidences expected from "
                      f"each player's own sit-out rate, coincidence test (count and closeness, "
                      + ("the events combined by their exact law: an event without a coincidence costs nothing"
                         if self.exact_events else "the events combined by Fisher's method")
                      + f") p {r['p_gap']:.3g}"
                      + ("" if is_missing(r.get("p_fisher")) or not self.exact_events
                         else f" (Fisher's method {r['p_fisher']:.3g})")
                      + f" (q {r['q_value']:.3g} over {self.family_} pairs, weight "
                      f"{(r.get('bh_weight') or 1.0):.2f} in the false-discovery control: both sat out in "
                      f"{r.get('n_shared') or len(r['shared_events'])} shared events"
                      + ("" if is_missing(r.get("n_moments")) else
                         f", {r['n_moments']} moments at which both could have sat out together")
                      + f"), closest-pair test p "
                      f"{r['p_closest']:.3g}{perm}; "
                      + (f"closeness alone p {r['p_time_only']:.3g}, with whether the two came back together "
                         f"p {r['p_with_length']:.3g} (seconds from each platform sit_out to its sit_in where both "
                         f"logged one, else the hands sat out; every sit-out of both players has a known length in "
                         f"{r['n_len_events']} of the {len(r['shared_events'])} events: there the test counts both, "
                         f"elsewhere closeness alone); " if self.has_events_ and self.length_mark else "")
                      + f"mean bubble proximity {(r['bubble'] or 0):.2f}" + self._single_text(r)),
                sql=(f"SELECT x.tournament_id, x.ts AS {_ident('ts_' + a)}, y.ts AS {_ident('ts_' + b)} FROM sit_events x "
                     f"JOIN sit_events y ON x.tournament_id = y.tournament_id AND y.kind = 'sit_out' "
                     f"AND abs(epoch(y.ts) - epoch(x.ts)) <= {2 * self.tol_event_s:.0f} "
                     f"WHERE x.kind = 'sit_out' AND x.account = {_lit(a)} AND y.account = {_lit(b)} ORDER BY x.ts"),
            ))
        ev.extend(self._group_evidence(pairs))
        ev.append(_times_evidence(co, accs))
        n_waves = self.waves_.filter(pl.col("account").is_in(accs)).height
        tourns = sorted(set(co["tournament_id"].to_list()))
        benign = (f"Scheduled breaks and disconnect waves take many players out at once: {n_waves} sit-outs of these "
                  f"accounts fell in such waves (≥{self.wave_share:.0%} of the players still in and "
                  f"≥{self.wave_min} players) and "
                  "were left out. ")
        benign += self._friends_text(pairs, co)
        benign += self._split_text(pairs, accs)
        benign += ("The remaining co-occurrences are far beyond what each player's own sit-out rate explains."
                   if row["flagged"] else "What remains is within chance: not flagged.")
        hands = [h for h in co.sort("proximity", descending=True)["hand_id"].to_list() if h][:20]
        return Signal(
            kind=self.kind, accounts=accs, tournaments=tourns, score=float(row["score"]), flagged=bool(row["flagged"]),
            summary=f"{', '.join(accs)} sat out together {co.height} times in {len(tourns)} tournaments",
            hands=hands, evidence=ev, benign=benign, p_value=float(row["p_value"]), detector=type(self).__name__,
            extra={"cooccurrences": [
                {"tournament": r["tournament_id"], "a": r["a"], "b": r["b"], "ts_a": str(r["ts_a"]), "ts_b": str(r["ts_b"]),
                 "hands_out_a": r["len_a"], "hands_out_b": r["len_b"],
                 "seconds_out_a": r.get("dur_a"), "seconds_out_b": r.get("dur_b"), "end_mark": r.get("u_len"),
                 "remaining": r["remaining"], "paid": r["paid"]} for r in co.head(100).iter_rows(named=True)],
                   **({"window": [d.isoformat() for d in self.window_]} if self.window_ is not None else {})},
        )
