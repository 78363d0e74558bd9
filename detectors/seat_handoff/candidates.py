"""Candidate change points: mid-event logins from another device or network (sessions), or the scanned
best split of an account's hands (hand histories only); one login takes one seat; a helper device's
events pooled."""

from __future__ import annotations

import math
from typing import Any

import duckdb
import numpy as np
import polars as pl

from detectors import stats as mt
from detectors.seat_handoff.frames import TEST_ROWS, FieldCounts, range_baseline, time_baseline
from detectors.seat_handoff.queries import _SESSION_CANDIDATES_SQL, ACTS
from detectors.seat_handoff.stage import mix_any
from detectors.seat_handoff.statistics import (
    _chi2_p_vec, _device_time_many, _g2_p, _mwu_p_many, _range_p_many, _strat_mwu_many,
)


class CandidatesMixin:
    """The candidate change points of :class:`~detectors.seat_handoff.SeatHandoffDetector`."""

    # ------------------------------------------------------------------ candidates
    def _session_candidates(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """Logins during an account's play in an event from a device or network other
        than the one it started the event on (the last login before its first hand:
        an account may play several events at once, each with its own session), and with
        ``relogins`` the re-logins on the device and network of a session that logged out
        within ``handover_s`` (neither changed: ``device_changed`` and ``net_changed`` false)."""
        q = _SESSION_CANDIDATES_SQL
        clock = float(self.hand_clock_s)
        return con.sql(q, params=[float(self.handover_s), clock, bool(self.relogins), clock, float(self.quick_s)]).pl()

    def _scan_candidates(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        q = """
        SELECT s.player AS account, h.tournament_id, count(*) AS n_hands
        FROM seats s JOIN hands h USING (hand_id)
        WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND NOT s.sitting_out
        GROUP BY ALL HAVING count(*) >= ?
        """
        return con.sql(q, params=[self.min_scan_hands]).pl()

    def _field_counts(self, tid: str, account: str, cp_time) -> tuple[np.ndarray, np.ndarray]:
        """The other players' action counts in the event before / after a time."""
        if isinstance(self.field_, FieldCounts):
            return self.field_.counts(tid, account, cp_time)
        if tid not in self.field_:
            return np.zeros(len(ACTS)), np.zeros(len(ACTS))
        t, acc, X = self.field_[tid]
        others = acc != account
        after = t >= np.datetime64(cp_time, "us")
        return X[others & ~after].sum(axis=0), X[others & after].sum(axis=0)

    def _best_split(self, counts: np.ndarray) -> tuple[int, int, float]:
        """Split maximising the action-mix chi-square (vectorised over splits)."""
        n = counts.shape[0]
        m = self.min_segment
        cs = np.cumsum(counts, axis=0)
        tot = cs[-1]
        ks = np.arange(m, n - m + 1)
        if ks.size == 0:
            return 0, 1, 0.0
        before = cs[ks - 1]
        after = tot - before
        nb = before.sum(axis=1, keepdims=True)
        na = after.sum(axis=1, keepdims=True)
        col = tot / max(tot.sum(), 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            eb = nb * col
            ea = na * col
            chi = np.nansum(np.where(eb > 0, (before - eb) ** 2 / eb, 0) + np.where(ea > 0, (after - ea) ** 2 / ea, 0), axis=1)
        return int(ks[int(np.argmax(chi))]), int(ks.size), float(np.max(chi))

    @staticmethod
    def _one_seat_per_login(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One login takes one seat while the owner plays on: an account in several events
        at once has its hand-over login fall inside each of them, and where another of its
        sessions stays open (``others_open``) the person logging in takes over the seat that
        was left, the owner plays on in the others. Keep such a login for the event whose
        own play shifts most (Fisher's method over that event's action mix, bet sizes and
        timing, before any pooling), among the events where the device does not hold the
        seat already; counting it in every event would pool the owner's own play into the
        helper's sample and accuse the owner's other events. A login with none of the
        account's other sessions open takes every seat the account holds: no one else is
        logged in to play them."""
        def own_p(r: dict[str, Any]) -> float:
            ps = [p for p in (r["p_mix"], r["p_hist_mix"]) if not math.isnan(p)]
            mix = min(1.0, len(ps) * min(ps)) if ps else float("nan")
            return float(mt.fisher_combine(np.array([[mix, r["p_size"], r["p_time"], r["p_range"]]], dtype=float), untested=1.0)[0])
        best: dict[tuple, dict[str, Any]] = {}
        out = []
        # a device already holding the seat in an event (an earlier take-over there) changes
        # nothing in it when it logs in again: that login took another seat
        holding: dict[tuple, set] = {}
        for r in sorted(rows, key=lambda x: x["cp_time"]):
            if r.get("session") is None:
                out.append(r)
                continue
            held = holding.setdefault((r["account"], r["tournament_id"]), set())
            if r["device"] in held:
                continue
            held.add(r["device"])
            if not int(r.get("others_open") or 0):
                out.append(r)
                continue
            key = (r["account"], r["session"])
            r["_own_p"] = own_p(r)
            if key not in best or r["_own_p"] < best[key]["_own_p"]:
                best[key] = r
        return out + list(best.values())

    def _pool(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Pool the before/after samples of one account's mid-event logins from the
        same device: a helper who takes the seat in several events brings the
        same machine each time, and the pooled test has the power a single
        short event lacks. Per-event figures stay in ``*_event`` columns."""
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for r in rows:
            # a re-login on the seat's own device and network says nothing of who sits at the machine: each
            # such login is judged in its own event, never pooled by its device
            relogin = not (r.get("device_changed") or r.get("net_changed"))
            key = ((r["account"], r["device"]) if self.has_sessions_ and r["device"] is not None and not relogin
                   else (id(r),))
            groups.setdefault(key, []).append(r)
        for g in groups.values():
            for r in g:
                for k in ("p_mix", "p_size", "p_time", "p_range"):
                    r[k + "_event"] = r[k]
                r["n_pooled"] = len(g)
                r["pooled_tournaments"] = sorted({x["tournament_id"] for x in g})
                # a device that also starts play of its own on the account (a login outside its
                # mid-event spans, before or after this one) is its owner's machine, however it
                # first appeared: an owner's desktop first logged in to continue an event begun
                # on the phone, a helper's machine only ever takes the seat
                r["owner_device"] = any(int(x.get("dev_own_sessions") or 0) > 0 for x in g)
                r["group_new_device"] = any(x["new_device"] for x in g) and not r["owner_device"]
                # the device only ever logged in to take this account's seat mid-event: every one
                # of its sessions on the account is one of these hand-overs, each within
                # quick_s of a logout, in two or more events, on a device and a network the
                # account had never used before the first of them
                since = [x["since_logout"] for x in g]
                # (counted over all the device's quick hand-over logins, also those followed by
                # too few hands to be tested: a helper who busts soon after one take-over still
                # brought the same machine)
                n_quick = max(int(x.get("dev_quick_takeovers") or 0) for x in g)
                r["takeover_only"] = bool(
                    self.has_sessions_ and r["device"] is not None
                    and all(v is not None and v <= self.quick_s for v in since)
                    and all(x["device_changed"] for x in g)
                    and r["group_new_device"]
                    and (any(x["new_net"] for x in g) or any(bool(x.get("dev_takeover_new_net")) for x in g))
                    and max(len({x["session"] for x in g}), n_quick) >= max(2, max(x["device_sessions"] for x in g)))
                # two places at once: the seat was left from the account's own home (a network few
                # accounts ever used, one it used on two days or more) and taken seconds later on
                # another home-sized network, by a device that never starts play of its own: the
                # owner cannot be at both homes; an owner's move goes from a carrier's network (used
                # by many) to his home, or keeps a place he uses
                hm = self.household_max
                r["login_two_places"] = bool(
                    r.get("prev_net") is not None and r.get("net") is not None and r["net"] != r["prev_net"]
                    and r.get("prev_net_accounts") is not None and r["prev_net_accounts"] <= hm
                    and int(r.get("prev_net_days") or 0) >= 2
                    and r.get("net_accounts") is not None and r["net_accounts"] <= hm)
                r["two_places"] = bool(r["login_two_places"] and r["device"] is not None and not r["owner_device"])
                # the sample sizes the tests see: actions after the change point (pooled) and in
                # the account's own history under other devices (one baseline for the device)
                r["n_act_after"] = float(sum(x["_ca"].sum() for x in g))
                r["n_act_hist"] = float(max(x["_hc"].sum() for x in g))
        # the pooled tests of each device seen in two or more events, all devices at once
        multi = [g for g in groups.values() if len(g) >= 2]
        for s in range(0, len(multi), TEST_ROWS):  # each device's tests are its own: some devices at a time
            self._pool_devices(multi[s:s + TEST_ROWS])
        for r in rows:
            r.setdefault("p_hist_mix_event", r["p_hist_mix"])
            # the action mix counts if it shifts against the field in the event or against the
            # account's own history: the smaller p, Bonferroni-corrected for the two looks
            r["p_mix_any"] = mix_any(r)
        return rows

    def _pool_devices(self, multi: list[list[dict[str, Any]]]) -> None:
        """The pooled tests of each device seen in two or more events (``multi``: each device's rows), all
        devices at once, written into the rows (the per-event figures kept in ``*_event``)."""
        # events are independent strata: their interaction statistics add up
        p_mix = _g2_p([sum(r["_g2"] for r in g) for g in multi], [sum(r["_dof"] for r in g) for g in multi])
        p_size = _mwu_p_many([np.concatenate([r["_sb"] for r in g]) for g in multi],
                             [np.concatenate([r["_sa"] for r in g]) for g in multi])
        # timing against the account's own decisions under other devices where it has any (the
        # same account and device: one baseline, the largest), else after against before
        has_tb = np.array([any(r["_ntb"] for r in g) for g in multi])
        tb, ctb = map(list, zip(*[time_baseline(max(g, key=lambda r: r["_ntb"])) for g in multi]))
        p_strat = _strat_mwu_many([np.concatenate([r["_ta"] for r in g]) for g in multi],
                                  [np.concatenate([r["_cta"] for r in g]) for g in multi], tb, ctb)
        p_in = _mwu_p_many([np.concatenate([r["_xb"] for r in g]) for g in multi],
                           [np.concatenate([r["_xa"] for r in g]) for g in multi])
        p_time = np.where(has_tb, p_strat, p_in)
        if self.has_sessions_:
            # logins: the device-invariant test (``_test_rows``). The shift (a device's rescaling, and the
            # speed judged against the population's switches) is the pooled sample's; the profile and
            # spread pool each event's segment moved by its own shift: a person's pace differs from day
            # to day, and segments at two paces pooled look like a wider spread than either
            cta = [np.concatenate([r["_cta"] for r in g]) for g in multi]
            speed = not self.use_switch_null_
            raw = _device_time_many([np.concatenate([r["_ta"] for r in g]) for g in multi], cta, tb, ctb,
                                    math.log(self.device_band), speed=speed)
            own = _device_time_many([np.concatenate([r["_ta"] - _own_shift(r) for r in g]) for g in multi], cta,
                                    tb, ctb, math.log(self.device_band), speed=False)
            # (the speed beyond a device, where judged here, is the pooled sample's as it is)
            parts = np.column_stack([own["p_profile"], own["p_spread"]] + ([raw["p_speed"]] if speed else []))
            shift = raw["shift"]
            p_time = np.where(np.isnan(parts).all(axis=1), np.nan, mt.fisher_combine(parts, untested=1.0))
        rb, crb = map(list, zip(*[range_baseline(max(g, key=lambda r: r["_nrb"])) for g in multi]))
        p_range = (_range_p_many([np.concatenate([r["_ra"] for r in g]) for g in multi],
                                 [np.concatenate([r["_cra"] for r in g]) for g in multi], rb, crb)
                   if self.use_range else np.full(len(multi), np.nan))
        hbase = np.stack([max(g, key=lambda r: r["_hc"].sum())["_hc"] for g in multi])
        p_hist_mix = np.where(hbase.sum(axis=1) >= 20,
                              _chi2_p_vec(hbase, np.stack([np.sum([r["_ca"] for r in g], axis=0) for g in multi])),
                              np.nan)
        for i, g in enumerate(multi):
            for r in g:
                r["p_hist_mix_event"] = r["p_hist_mix"]
                r["p_mix"], r["p_size"] = float(p_mix[i]), float(p_size[i])
                r["p_time"], r["p_hist_mix"] = float(p_time[i]), float(p_hist_mix[i])
                if self.has_sessions_:
                    r["time_shift"] = float(shift[i])
                r["p_range"] = float(p_range[i])


def _own_shift(r: dict[str, Any]) -> float:
    """The common shift of one event's after-segment against its own baseline (``time_shift_event``, log ms;
    0 where it was not estimated: too few decisions by class), what :meth:`CandidatesMixin._pool_devices`
    takes off each event's segment before pooling a device's events for the profile and spread."""
    v = r.get("time_shift_event")
    return float(v) if v is not None and math.isfinite(float(v)) else 0.0
