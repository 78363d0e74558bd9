"""What a seat hand-off signal says: the evidence of one candidate row, in numbers an investigator can check."""

from __future__ import annotations

import math
from typing import Any

import duckdb
import numpy as np

from detectors.base import Evidence, Signal, is_missing, sql_literal as _lit


class EvidenceMixin:
    """The ``explain`` of :class:`~detectors.seat_handoff.SeatHandoffDetector`."""

    # ------------------------------------------------------------------ explain
    def _login_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The login that anchors the change point: device and network, new or known, pooled events, the
        take-over-only and two-places structures (none without sessions)."""
        r = row
        acc, tid = r["account"], r["tournament_id"]
        ev: list[Evidence] = []
        if self.has_sessions_:
            ev.append(Evidence(
                name="login from a changed device/network", value=float(r["new_device"]) + float(r["new_net"]),
                baseline=0.0, n=1,
                text=(f"session {r['session']} at {r['cp_time']}: device {r['device']} (before {r['prev_device']}), "
                      f"ip {r['ip']}; device {'never' if r['new_device'] else 'already'} used by {acc} before, "
                      f"network {'new' if r['new_net'] else 'seen before'}"
                      + (f"; a re-login on the device and network that held the seat, "
                         f"{float(r.get('since_logout') or 0):.0f} s after its logout: nothing of the login "
                         f"changed, the play after it is judged alone, in this event"
                         if not r.get("device_changed") and not r.get("net_changed") else "")
                      + (f"; the same device logged in mid-event in {r['n_pooled']} events "
                         f"({', '.join(r['pooled_tournaments'])}): their before/after samples are pooled"
                         if r["n_pooled"] > 1 else "")
                      + (f"; this device only ever logged in to take this seat mid-event (all its "
                         f"{r['device_sessions']} sessions on {acc}, each seconds after a logout), never "
                         f"to start {acc}'s own play" if r.get("takeover_only") else "")
                      + (f"; two places at once: {_two_places_text(r, acc)}" if r.get("two_places") else "")),
                sql=f"SELECT session, login_at, logout_at, ip, device FROM sessions WHERE account = {_lit(acc)} ORDER BY login_at",
            ))
            if not is_missing(r.get("p_identity")):
                signs = [t for k, t in (("id_takeover_only", "never starts play of its own on the account"),
                                        ("id_new_net", "came from a network the account had not used"),
                                        ("id_home_net", "a home-sized network")) if r.get(k)]
                ev.append(Evidence(
                    name="identity of the device that took the seat", value=float(r.get("id_signs") or 0),
                    baseline=0.0, n=int(r.get("id_n") or 0), p_value=_nz(r.get("p_identity")),
                    text=(f"device {r['device']}: {'; '.join(signs) if signs else 'no foreign sign'}; among this "
                          f"population's {int(r.get('id_n') or 0)} devices that took a seat mid-event, the share with "
                          f"as many signs: p {_p(r.get('p_identity'))}"
                          + (f"; with the play's p {_p(r.get('p_play'))} (Fisher): {_p(r.get('p_event'))}"
                             if self.identity and int(r.get("id_n") or 0) >= self.min_switch_shifts
                             else "; not counted (too few switch devices to rank among)")),
                    sql=("SELECT account, device, count(*) AS sessions, min(login_at) AS first_login FROM sessions "
                         f"WHERE device = (SELECT device FROM sessions WHERE account = {_lit(acc)} AND session = "
                         f"{_lit(r['session'])}) GROUP BY ALL ORDER BY first_login"),
                ))
            if not is_missing(r.get("p_two_places")):
                ev.append(self._places_evidence(r))
            if not is_missing(r.get("p_slow")):
                ev.append(self._slow_evidence(r))
            n_other = int(r.get("other_switches") or 0)
            ev.append(Evidence(
                name="switches of device or network in other tournaments", value=float(n_other),
                baseline=float(max(int(r.get("events_played") or 0) - 1, 0)), n=n_other + 1, p_value=_nz(r.get("p_value")),
                text=(f"{acc} switched in mid-event in {n_other} of its other tournaments"
                      + ("" if not n_other or is_missing(r.get("other_min_p"))
                         else f" (the play after them shifted at most to p {float(r['other_min_p']):.2g})")
                      + f"; this switch's p {_p(r.get('p_event'))} within the account's {n_other + 1} switches: "
                      f"{_p(r.get('p_value'))}"),
                sql=("SELECT h.tournament_id, min(h.started_at) AS first_hand, max(h.started_at) AS last_hand, "
                     "(SELECT list(DISTINCT x.device) FROM sessions x WHERE x.account = s.player AND x.login_at "
                     "BETWEEN min(h.started_at) AND max(h.started_at)) AS devices_logged_in_mid_event "
                     "FROM seats s JOIN hands h USING (hand_id) "
                     f"WHERE s.player = {_lit(acc)} AND h.is_tournament GROUP BY h.tournament_id, s.player ORDER BY first_hand"),
            ))
        return ev

    def _places_evidence(self, r: dict[str, Any]) -> Evidence:
        """The two-places test of a row that left the account's own home on another device
        (:mod:`detectors.seat_handoff.places`): the structure or its absence, the population's own re-logins on one
        device it is judged against, and the p-value it gives with the play's."""
        acc = r["account"]
        k, n = getattr(self, "places_null_", (0, 0))
        shown = float(r["p_two_places"]) < 1.0
        return Evidence(
            name="two places at once", value=float(shown), baseline=0.0, n=n, p_value=float(r["p_two_places"]),
            text=((_two_places_text(r, acc) if shown else
                   f"the seat was left on {acc}'s own home network {r['prev_net']} and not taken on another home "
                   f"by a device foreign to {acc}")
                  + f"; of this population's {n} re-logins on the same device within {self.handover_s:g} s of a "
                  f"logout that left the account's own home, {k} arrived on another home-sized network (no one "
                  f"travels that fast: a network label that changed)"
                  + _repeat_text(r, k, n) + f": {_p(r['p_two_places'])}; "
                  + (f"with the play's p {_p(r.get('p_play'))} (their product's exact law; the identity's rank not "
                     f"added, its signs are this structure): {_p(r.get('p_event'))}" if shown else
                     f"the play's and the identity's p at the price of that law: {_p(r.get('p_event'))}")
                  + _owner_text(getattr(self, "places_owner_", (0, 0)), getattr(self, "places_owner_p_", 1.0),
                                self.fdr)),
            sql=("SELECT session, login_at, logout_at, ip, device FROM sessions WHERE account = "
                 f"{_lit(acc)} ORDER BY login_at"),
        )

    def _slow_evidence(self, r: dict[str, Any]) -> Evidence:
        """The slow hand-over test of a row (:mod:`detectors.seat_handoff.handover`): the device's hand-over logins
        and the slow ones, the population's re-logins of the kind they are judged against, and the p-value it
        gives with the row's."""
        acc = r["account"]
        big_m, m = int(r.get("slow_logins") or 0), int(r.get("slow_shown") or 0)
        n, j = int(r.get("slow_null") or 0), int(r.get("slow_rank") or 0)
        kind = "on another device" if r.get("device_changed") else "on the same device"
        k_o, n_o, _ = getattr(self, "slow_owner_", (0, 0, 1.0))
        return Evidence(
            name="slow hand-over", value=float(m), baseline=float(big_m) * j / (n + 1), n=big_m,
            p_value=float(r["p_slow"]),
            text=(f"device {r['device']} took {acc}'s seat {big_m} time(s) within {self.handover_s:g} s of a logout, "
                  f"{m} of them after the seat stood empty longer than {float(r.get('slow_line') or 0):.0f} s (this "
                  f"login: {float(r.get('since_logout') or 0):.0f} s); of this population's {n} other re-logins "
                  f"{kind} within {self.handover_s:g} s of a logout, {j - 1} took longer: a device slow every time "
                  f"is a chance of {j}/{n + 1} (counted once, by its shortest hand-over: a person's own pace "
                  f"repeats), {_p(r['p_slow'])}; with the row's p (their product's exact law): {_p(r.get('p_event'))}"
                  f"; the owners' own devices came back that slowly in {k_o} of their {n_o} hand-overs"),
            sql=("SELECT session, login_at, logout_at, ip, device FROM sessions WHERE account = "
                 f"{_lit(acc)} ORDER BY login_at"),
        )

    def _timing_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The decision-time shift: within the event, against the account's own decisions under other devices,
        device-invariant (profile, spread, speed beyond a device's band)."""
        r = row
        acc, tid = r["account"], r["tournament_id"]
        ev: list[Evidence] = []
        ev.append(Evidence(
            name="decision time shift (median ms, after vs before)", value=_nz(r["med_ms_after"]), baseline=_nz(r["med_ms_before"]),
            n=int(r["n_dec_after"]), p_value=_nz(r["p_time"]),
            text=(f"median decision {r['med_ms_before']:.0f} ms on {r['n_dec_before']} decisions before hand {r['cp_hand']}, "
                  f"{r['med_ms_after']:.0f} ms on {r['n_dec_after']} after; KS distance {r['ks_d']:.2f}; "
                  f"Mann-Whitney p {r['p_time_in']:.2g} after vs before in this event; against {acc}'s own "
                  f"{r['n_hist_dec']} decisions under other devices (median {r['med_ms_hist']:.0f} ms), class by class "
                  f"(preflop folds, ordinary, big decisions), p {r['p_hist_time']:.2g} in this event"
                  + (f"; a device rescales a player's times: with the common shift ({math.exp(r['time_shift']):.2f}x) "
                     f"set aside, profile over the classes p {r['p_time_profile']:.2g}, spread p {r['p_time_spread']:.2g}"
                     + (f", together {r['p_time']:.2g}, pooled over the device's events; the shift itself against "
                        + (f"the speed drifts of this population's simulated same-player moves (the device was "
                           f"kept: nothing rescales the times), {self._kept_null_text()}: p {_p(r.get('p_shift'))}"
                           if r.get("device_changed") is False else
                           f"the speed changes of this population's switches ({self._shift_null_text()}): p "
                           f"{_p(r.get('p_shift'))}") if getattr(self, "use_switch_null_", False) else
                        f", speed beyond a device's {self.device_band:g}x p {r['p_time_speed']:.2g}; together "
                        f"{r['p_time']:.2g}, pooled over the device's events")
                     if r.get("session") is not None and not is_missing(r.get("time_shift"))
                     else f"; {r['p_time']:.2g} as counted"))
            if self.has_decisions_ else "no decision times in the warehouse",
            # each decision under the device of the session it was played in: the new device's
            # decisions against the account's others
            sql=("SELECT ss.device, count(*) AS decisions, median(d.ms) AS median_ms "
                 "FROM decisions d JOIN hands h USING (hand_id) ASOF LEFT JOIN "
                 f"(SELECT account, login_at, device FROM sessions WHERE account = {_lit(acc)}) ss "
                 "ON d.account = ss.account AND h.started_at >= ss.login_at "
                 f"WHERE d.account = {_lit(acc)} GROUP BY ALL ORDER BY decisions DESC")
            if self.has_sessions_ else
            ("SELECT h.started_at >= (SELECT started_at FROM hands WHERE hand_id = " + _lit(r["cp_hand"]) + ") AS after, "
             "median(d.ms), count(*) FROM decisions d JOIN hands h USING (hand_id) "
             f"WHERE d.account = {_lit(acc)} AND h.tournament_id = {_lit(tid)} GROUP BY 1"),
        ))
        return ev

    def _kept_null_text(self) -> str:
        """How many simulated same-player moves a kept device's speed shift was ranked among, in words."""
        n = int(min(getattr(self, "null_", np.zeros(0)).size, self.null_match))
        return f"ranked among the {n} moves of about as much play" if n else "no moves to rank among"

    def _shift_null_text(self) -> str:
        """The population's switch speed null in words (centre and scale as factors)."""
        c, sc = getattr(self, "shift_null_", (float("nan"), float("nan")))
        if is_missing(c) or is_missing(sc):
            return "too few switches to estimate it"
        n = getattr(self, "shift_null_n_", 0)
        return f"ranked among {n} switches: median {math.exp(c):.2f}x, robust spread {math.exp(sc):.2f}x"

    def _style_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The style shift: the action mix against the field and the own history, the starting hands entered and
        raised given the cards dealt, the bet sizes."""
        r = row
        acc, tid = r["account"], r["tournament_id"]
        hsql = ("SELECT h.hand_id, h.started_at FROM seats s JOIN hands h USING (hand_id) "
                f"WHERE s.player = {_lit(acc)} AND h.tournament_id = {_lit(tid)} ORDER BY h.started_at")
        ev: list[Evidence] = []
        ev.append(Evidence(
            name="action mix shift (VPIP after vs before)", value=r["vpip_after"], baseline=r["vpip_before"],
            n=int(r["n_hands"] - r["k"]), p_value=_nz(r["p_mix_any"]),
            text=(f"VPIP {r['vpip_before']:.2f} -> {r['vpip_after']:.2f}, aggression {r['aggr_before']:.2f} -> "
                  f"{r['aggr_after']:.2f}, fold share {r['fold_before']:.2f} -> {r['fold_after']:.2f} over "
                  f"{r['k']} hands before and {r['n_hands'] - r['k']} after; change against the field's "
                  f"(G2 interaction) p {r['p_mix_event']:.2g} in this event, {r['p_mix']:.2g} pooled; after vs "
                  f"{acc}'s own tournament hands under other devices p {r['p_hist_mix_event']:.2g} in this event, "
                  f"{r['p_hist_mix']:.2g} pooled; the smaller, Bonferroni x2: {r['p_mix_any']:.2g}"),
            sql=("SELECT h.started_at >= (SELECT started_at FROM hands WHERE hand_id = " + _lit(r["cp_hand"]) + ") AS after, "
                 "a.action, count(*) FROM actions a JOIN hands h USING (hand_id) "
                 f"WHERE a.player = {_lit(acc)} AND h.tournament_id = {_lit(tid)} AND a.action NOT LIKE 'post%' GROUP BY ALL ORDER BY ALL"),
        ))
        if not is_missing(r.get("p_range")):
            ev.append(Evidence(
                name="starting hands entered and raised (by the cards dealt)", value=float(r["n_hands"] - r["k"]),
                baseline=0.0, n=int(r["n_hands"] - r["k"]), p_value=_nz(r["p_range"]),
                text=(f"whether {acc} enters pots, and raises, with the same starting hands after hand {r['cp_hand']} "
                      f"as in its own hands under other devices, hand by hand given the cards dealt (bins of "
                      f"starting-hand strength, stack depth, facing a raise, a short-handed table): p {r['p_range']:.2g}"
                      + (f" pooled over the device's events ({r['p_range_event']:.2g} in this event)"
                         if r.get("n_pooled", 1) > 1 and not is_missing(r.get("p_range_event")) else "")),
                sql=("SELECT h.started_at >= (SELECT started_at FROM hands WHERE hand_id = " + _lit(r["cp_hand"]) + ") AS after, "
                     "hc.cards, a.action FROM actions a JOIN hands h USING (hand_id) "
                     "JOIN hole_cards hc ON hc.hand_id = a.hand_id AND hc.player = a.player "
                     f"WHERE a.player = {_lit(acc)} AND h.tournament_id = {_lit(tid)} AND a.street = 'preflop' "
                     "AND a.action NOT LIKE 'post%' ORDER BY h.started_at, a.seq"),
            ))
        ev.append(Evidence(
            name="bet size shift (median fraction of pot)", value=_nz(r["size_after"]), baseline=_nz(r["size_before"]),
            p_value=_nz(r["p_size"]), text=f"median bet {r['size_before']:.2f} -> {r['size_after']:.2f} of the pot",
            sql=hsql,
        ))
        return ev

    def _benign(self, row: dict[str, Any]) -> str:
        """The same-person explanations, each with its figure: a device move (the play tested against the
        population's simulated same-player moves) and a habit of switching (the account's other switches)."""
        r = row
        acc = r["account"]
        below = [f"{name} p {float(r[c]):.2g}" for c, name in _TESTS
                 if not is_missing(r.get(c)) and float(r[c]) < self.signal_p]
        below_txt = (f"tests below {self.signal_p:g}: {', '.join(below)}" if below
                     else f"no test below {self.signal_p:g}")
        text = ("A player moving from phone to desktop (or to another network) changes device and a little "
                "of their speed, but not their game. ")
        if int(r.get("n_null") or 0):
            text += (f"The play after the login ({below_txt}) against this population's own {int(r['n_null'])} "
                     f"simulated same-player moves (other players' events split at the same hands, with about as "
                     f"much play after the split and in the player's history): p {_p(r.get('p_event'))} (the tests' "
                     f"own combined p {_p(r.get('p_value_raw'))}). ")
        else:
            text += f"The play after the login ({below_txt}): combined p {_p(r.get('p_event'))}, not calibrated. "
        text += self._stage_text(r)
        n_other = int(r.get("other_switches") or 0)
        n_played = max(int(r.get("events_played") or 0) - 1, 0)
        if n_other:
            other = ("none of them followed by enough hands to test" if is_missing(r.get("other_min_p")) else
                     f"the play after those switches shifted at most to p {_p(r.get('other_min_p'))}")
            text += (f"A habit of switching: {acc} switched devices or networks in mid-event in {n_other} of its "
                     f"{n_played} other tournaments, {other}; with this one, {n_other + 1} switches, each a chance "
                     f"to look shifted: p {_p(r.get('p_value'))} given them (Benjamini-Hochberg within the "
                     f"account's switches). ")
        else:
            text += (f"A habit of switching: {acc} switched in none of its {n_played} other tournaments, so this "
                     f"switch is not explained by one. ")
        verdict = "flagged" if row["flagged"] else "not flagged"
        text += (f"q-value {_p(r.get('q_value'))} over the {self.kind.replace('_', ' ')} candidates against the "
                 f"false-discovery rate {self.fdr:g}: {verdict}.")
        structure = []
        if r.get("takeover_only"):
            structure.append(f"the device {r['device']} only ever appeared to take {acc}'s seat mid-event, seconds "
                             f"after a logout, and never started play of its own")
        counted = not is_missing(r.get("p_two_places"))
        if r.get("two_places") and not counted:
            structure.append(f"two places at once: {_two_places_text(r, acc)}")
        if structure:
            text += " Structure (described, not counted in the p-value): " + "; ".join(structure) + "."
        if counted and float(r["p_two_places"]) < 1.0:
            days = int(r.get("places_days") or 1)
            text += (f" Two places at once (counted in the p-value, against this population's re-logins on one "
                     f"device: {_p(r['p_two_places'])}"
                     + (f"; on {int(r.get('places_shown') or 0)} of the {days} days this device took the seat from "
                        f"{acc}'s own home" if days > 1 else "")
                     + f"): {_two_places_text(r, acc)}.")
        if not is_missing(r.get("p_slow")) and float(r["p_slow"]) < 1.0:
            k_o, n_o, _ = getattr(self, "slow_owner_", (0, 0, 1.0))
            text += (f" A slow hand-over (counted in the p-value, against this population's re-logins of the kind: "
                     f"{_p(r['p_slow'])}): every one of the {int(r.get('slow_logins') or 0)} times device "
                     f"{r['device']} took the seat it had stood empty longer than {float(r.get('slow_line') or 0):.0f} "
                     f"s; an owner slow to come back would show it on the owners' own devices, slow in {k_o} of their "
                     f"{n_o} hand-overs.")
        return text

    def _stage_text(self, r: dict[str, Any]) -> str:
        """The benign explanation of stage in words (:mod:`detectors.seat_handoff.stage`): the account's own
        same-stage dispersion, the one the style tests were judged at, and their p-values before and after; empty
        where it was not computed."""
        if is_missing(r.get("stage_mod_field")) and is_missing(r.get("stage_mod_hist")):
            return ""
        n_own = int(r.get("stage_events") or 0)
        own = (f"in the {n_own} events it played without a switch, split at the same hand ({int(r['stage_k'])}), its "
               f"action mix moved against the field {_p(r.get('stage_disp_field'))} times and against its own "
               f"history {_p(r.get('stage_disp_hist'))} times as much as chance allows" if n_own else
               f"it has no event without a switch that lasted past hand {int(r.get('stage_k') or 0)}")
        return (f"The stage of the event: a player's game moves as an event goes on; {own}. Taken at "
                f"{_p(r.get('stage_mod_field'))} and {_p(r.get('stage_mod_hist'))} times chance (its own moderated "
                f"by the population's switchers at the same stage), the shift against the field is p "
                f"{_p(r.get('p_mix_stage'))} (chance alone {_p(r.get('p_mix_chi2'))}) and against its own history p "
                f"{_p(r.get('p_hist_mix_stage'))} (chance alone {_p(r.get('p_hist_mix_chi2'))}); the larger of each "
                f"pair counts. ")

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row: the style, range, size and timing shifts at the change point against
        the field and the account's own history, the login and device history, the hands after the change.

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold`.

        Returns
        -------
        :class:`~detectors.base.Signal`, from the row and the fitted attributes only."""
        r = row
        acc, tid = r["account"], r["tournament_id"]
        ev = [*self._login_evidence(row), *self._timing_evidence(row), *self._style_evidence(row)]
        # strongest first: the login anchors the change point, then the tests by p-value
        head, tests = ev[:1] if self.has_sessions_ else [], ev[1:] if self.has_sessions_ else ev
        ev = head + sorted(tests, key=lambda e: 1.0 if e.p_value is None else e.p_value)
        benign = self._benign(row)
        return Signal(
            kind=self.kind, accounts=[acc], tournaments=[tid], score=float(row["score"]), flagged=bool(row["flagged"]),
            summary=(f"{acc}'s seat in tournament {tid} changes hands at hand {r['cp_hand']}"
                     + (f" (login from device {r['device']})" if self.has_sessions_ else "")),
            hands=list(r["hands_after"]), evidence=ev, benign=benign,
            p_value=float(row["p_value"]), detector=type(self).__name__,
            extra={"change_point_hand": r["cp_hand"], "change_point_time": str(r["cp_time"]), "q_value": r.get("q_value")},
        )


_TESTS = (("p_mix_any", "action mix"), ("p_size", "bet sizes"), ("p_range", "starting hands entered and raised"),
          ("p_time", "decision timing"))


def _aggr(c: np.ndarray) -> float:
    d = c[2] + c[3] + c[4]
    return float((c[3] + c[4]) / d) if d else float("nan")


def _share(c: np.ndarray, i: int) -> float:
    s = c.sum()
    return float(c[i] / s) if s else float("nan")


def _p(x: Any) -> str:
    """A p- or q-value for the case's text ("n/a" when the test was not made)."""
    return "n/a" if is_missing(x) else f"{float(x):.2g}"


def _nz(x: Any) -> float | None:
    return None if is_missing(x) else float(x)


def _repeat_text(r: dict[str, Any], k: int, n: int) -> str:
    """The repeats of the two-places structure by one device, in words (empty for one day)."""
    days, shown = int(r.get("places_days") or 1), int(r.get("places_shown") or 0)
    if days <= 1:
        return ""
    return (f"; this device took the seat from the account's own home on {days} days, on {shown} of them on another "
            f"home: the chance of as many at the rate {(k + 1) / (n + 1):.2g} a day (binomial tail)")


def _owner_text(owner: tuple[int, int], owner_p: float, fdr: float) -> str:
    """The owner devices' own second places (the benign explanation the repeats are checked against), in words."""
    k_o, n_o = owner
    return (f"; this population's owner devices (that also start play of their own) that took a seat from the "
            f"account's own home arrived on another home on {k_o} of {n_o} device-days, the chance of as many at the "
            f"re-logins' rate {_p(owner_p)}"
            + (": owners keep second places here, a device's repeats count once" if owner_p <= fdr and k_o else ""))


def _two_places_text(r: dict[str, Any], acc: str) -> str:
    """The "two places at once" structure of a candidate row, in words."""
    def who(n: Any) -> str:
        return f"{n} account{'s' if n != 1 else ''}"
    return (f"the seat was left on network {r['prev_net']} (ever used by {who(r['prev_net_accounts'])}, by "
            f"{acc} on {r['prev_net_days']} days: a home) and taken "
            + (f"{float(r['since_logout']):.0f} s later " if not is_missing(r.get("since_logout")) else "")
            + f"on network {r['net']} (ever used by {who(r['net_accounts'])}: another home"
            + (f", one {acc} had never used), " if r.get("new_net") else "), ")
            + f"by device {r['device']}, which never started play of its own on {acc}")


def _nint(x: Any) -> int | None:
    return None if is_missing(x) else int(x)
