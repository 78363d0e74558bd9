"""The benign explanation of stage: the account's own play at the same stage of its events without a switch.

A player's game moves as an event goes on (blinds up, stacks short, tables broken): the action mix after a
point late in an event differs from the same player's early play, and from the field's change over the same
time, by more than the multinomial chance the chi-square and G2 tests assume. A player who habitually switches
devices late in events carries that drift into every switch, and pooling the device's events adds it up. The
like-with-like baseline is the account's own play at the same stage in the events where it did NOT switch: each
such event is split at the same hand position (the switch events' median hand at the switch, ``k``), and the
same two statistics the style test uses are computed there (the who x period x action G2 interaction against
the event's field over the same times, and the after-segment's chi-square against the rest of the account's
tournament hands). Their sum over those events divided by their degrees of freedom is the account's own
dispersion at that stage (quasi-likelihood: McCullagh & Nelder, *Generalized Linear Models*, 2nd ed., 1989,
ch. 4.5 and 9.2), moderated by the population's (the candidate accounts' dispersions' common value and prior
degrees of freedom, by the moments of their logs: Smyth, Stat. Appl. Genet. Mol. Biol. 3(1), 2004). Under
"the same player plays on" the switch's statistic per degree of freedom, divided by that dispersion, is
F-distributed (switch dof, the dispersion's dof). A device's events pooled are read at their account's own
moderated dispersion; a single event, like the population's simulated moves it is ranked among (single
events split at the same hands, :mod:`detectors.seat_handoff.null`), at the population's. Where that
dispersion is above 1 (a drift beyond chance) the style test's p is the larger of its chi-square p and this
F p (the larger of two valid p-values is valid), never smaller than before.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
from scipy import optimize as sps_optimize, special as sps_special
from scipy import stats as sps

from detectors.seat_handoff.frames import key_slices
from detectors.seat_handoff.queries import ACTS
from detectors.seat_handoff.statistics import _chi2_stat_vec, _g2_interaction_vec


def mix_any(r: dict[str, Any]) -> float:
    """The action-mix look that counts: the smaller of the field (``p_mix``) and own-history (``p_hist_mix``)
    p-values, Bonferroni-corrected for the two looks; NaN with neither."""
    ps = [p for p in (r["p_mix"], r["p_hist_mix"]) if not math.isnan(p)]
    return min(1.0, len(ps) * min(ps)) if ps else float("nan")


def _f_p(stat: np.ndarray, dof: np.ndarray, disp: np.ndarray, dof_disp: np.ndarray) -> np.ndarray:
    """Upper tail of ``(stat / dof) / disp`` in F(dof, dof_disp) (the chi-square over ``dof`` where ``dof_disp`` is
    infinite): a statistic against a dispersion estimated with ``dof_disp`` degrees of freedom; NaN without
    degrees of freedom or dispersion."""
    stat, dof, disp, dd = (np.asarray(x, dtype=float) for x in (stat, dof, disp, dof_disp))
    ok = (dof > 0) & (dd > 0) & np.isfinite(disp) & (disp > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ok, stat / np.where(dof > 0, dof, 1.0) / np.where(ok, disp, 1.0), 0.0)
        p_f = sps.f.sf(ratio, np.maximum(dof, 1), np.where(np.isfinite(dd), np.maximum(dd, 1e-9), 1.0))
        p_c = sps.chi2.sf(ratio * dof, np.maximum(dof, 1))
    return np.where(ok, np.where(np.isfinite(dd), p_f, p_c), np.nan)


def prior_dispersion(disp: np.ndarray, dof: np.ndarray) -> tuple[float, float]:
    """The population's dispersion and its prior degrees of freedom from per-account dispersions ``disp`` on
    ``dof`` degrees of freedom, by the moments of their logs (Smyth, "Linear models and empirical Bayes methods
    for assessing differential expression", Stat. Appl. Genet. Mol. Biol. 3(1), 2004, section 6.2): with
    e = log disp - digamma(dof/2) + log(dof/2), trigamma(d0/2) = var(e) - mean trigamma(dof/2) and
    s0 = exp(mean e + digamma(d0/2) - log(d0/2)); d0 infinite where the spread is no more than sampling.
    Returns (s0, d0); (NaN, NaN) with fewer than three accounts."""
    disp, dof = np.asarray(disp, dtype=float), np.asarray(dof, dtype=float)
    ok = np.isfinite(disp) & (disp > 0) & (dof > 0)
    if ok.sum() < 3:
        return float("nan"), float("nan")
    d, v = dof[ok], disp[ok]
    e = np.log(v) - sps_special.digamma(d / 2) + np.log(d / 2)
    extra = float(np.var(e, ddof=1) - np.mean(sps_special.polygamma(1, d / 2)))
    if extra <= 0:
        return float(np.exp(e.mean())), float("inf")
    # trigamma is decreasing on (0, inf): its inverse by Brent's method on the log scale
    lo, hi = math.log(1e-6), math.log(1e8)
    gap = lambda u: float(sps_special.polygamma(1, math.exp(u))) - extra  # noqa: E731
    x = hi if gap(hi) > 0 else sps_optimize.brentq(gap, lo, hi, xtol=1e-13)
    d0 = 2.0 * math.exp(x)
    return float(np.exp(e.mean() + sps_special.digamma(d0 / 2) - math.log(d0 / 2))), d0


class StageMixin:
    """The same-stage own baseline of :class:`~detectors.seat_handoff.SeatHandoffDetector`."""

    def _stage_baseline(self, rows: list[dict[str, Any]], hist: pl.DataFrame | dict,
                        switch_events: pl.DataFrame) -> None:
        """Each row's style tests given the account's own play at the same stage of its events without a
        switch (the module's method), written into the rows: ``stage_events`` (own events split), ``stage_k``
        (the hand position), ``stage_disp_field`` / ``stage_disp_hist`` (the own dispersions, NaN if
        untested), ``p_mix_chi2`` / ``p_hist_mix_chi2`` (the tests' own p), ``p_mix`` / ``p_hist_mix`` (the
        larger of those and the F p where the dispersion is above 1) and ``p_mix_any``.

        Parameters
        ----------
        rows : the tested rows after pooling (``_g2``/``_dof`` and the pooled ``p_mix``; ``_ca``/``_hc``).
        hist : the accounts' own tournament hands (``account``, ``tournament_id``, ``started_at``, action counts),
            or a dict from each account to its rows (the tournament as ``tc``, a code of ``codes_``: the fit's
            :func:`~detectors.seat_handoff.frames.key_slices`); read an account at a time, no copy of the whole.
        switch_events : every (``account``, ``tournament_id``) with a mid-event switch, tested or not."""
        fams: dict[tuple, list[dict[str, Any]]] = {}
        for r in rows:
            key = (r["account"], r["device"]) if r.get("device") is not None else (id(r),)
            fams.setdefault(key, []).append(r)
        by_acc = hist if isinstance(hist, dict) else key_slices(hist, "account")[1]
        sw = switch_events.select("account", "tournament_id").unique()
        switched = {a: g["tournament_id"].to_list()
                    for (a,), g in sw.partition_by(["account"], as_dict=True).items()}
        groups = list(fams.values())
        # per family: [own field G2, its dof, own history X2, its dof, switch G2, dof, switch X2, dof, own events, k]
        st = np.zeros((len(groups), 10))
        for i, g in enumerate(groups):  # one family of candidates at a time (not hands)
            k = int(np.median([x["k"] for x in g]))
            # (the account's own events made for its family only, then dropped: no copy of the whole history)
            own, total = self._own_events(by_acc.get(g[0]["account"]), switched.get(g[0]["account"], []))
            tables, after_own, base_own = self._stage_tables(own, g[0]["account"], k, total)
            if tables:
                g2, dof = _g2_interaction_vec(np.stack(tables))
                x2, dh = _chi2_stat_vec(np.stack(base_own), np.stack(after_own))
                st[i, :4] = g2.sum(), dof.sum(), x2.sum(), dh.sum()
            # the switch's own statistics: the device's events' G2 added up (as pooled), the after-segment's
            # chi-square against the account's history (pooled: the largest baseline against the summed after)
            hb = max(g, key=lambda x: x["_hc"].sum())["_hc"]
            x2_s, dh_s = _chi2_stat_vec(hb[None, :], np.sum([x["_ca"] for x in g], axis=0)[None, :])
            st[i, 4:] = (sum(x["_g2"] for x in g), sum(x["_dof"] for x in g), x2_s[0],
                         dh_s[0] if hb.sum() >= 20 else 0, len(tables), k)
        with np.errstate(divide="ignore", invalid="ignore"):
            disp_f, disp_h = st[:, 0] / st[:, 1], st[:, 2] / st[:, 3]
        # the population's same-stage dispersion (the prior) and each account's moderated by it (Smyth 2004)
        self.stage_prior_ = {"field": prior_dispersion(disp_f, st[:, 1]), "hist": prior_dispersion(disp_h, st[:, 3])}
        # a single event is judged as the simulated moves (single events at the same hands) are, at the population's
        # dispersion; a device's events pooled add up its account's own drift: at the account's, moderated
        pooled = np.array([len(g) >= 2 for g in groups], dtype=bool)
        out = {}
        for name, disp, dof, stat, sdof in (("field", disp_f, st[:, 1], st[:, 4], st[:, 5]),
                                           ("hist", disp_h, st[:, 3], st[:, 6], st[:, 7])):
            s0, d0 = self.stage_prior_[name]
            own_d = np.where(np.isfinite(disp) & pooled, dof, 0.0)
            if math.isnan(s0):
                # too few accounts for a prior: a pooled device's own dispersion alone
                post, post_d = np.where(pooled, disp, np.nan), own_d
            elif math.isinf(d0):
                # the accounts' dispersions spread no more than sampling: the population's for all
                post, post_d = np.full(len(groups), s0), np.full(len(groups), np.inf)
            else:
                post_d = d0 + own_d
                post = (d0 * s0 + own_d * np.nan_to_num(disp)) / post_d
            # a drift beyond chance discounts the switch; a dispersion at or below chance leaves the test's own p
            p_stage = np.where(post > 1.0, _f_p(stat, sdof, post, post_d), np.nan)
            out[name] = (np.where(np.isfinite(disp), disp, np.nan), post, post_d, p_stage)
        for i, g in enumerate(groups):
            for r in g:
                r.update(stage_events=int(st[i, 8]), stage_k=int(st[i, 9]),
                         stage_disp_field=float(out["field"][0][i]), stage_disp_hist=float(out["hist"][0][i]),
                         stage_mod_field=float(out["field"][1][i]), stage_mod_hist=float(out["hist"][1][i]),
                         p_mix_chi2=r["p_mix"], p_hist_mix_chi2=r["p_hist_mix"],
                         p_mix_stage=float(out["field"][3][i]), p_hist_mix_stage=float(out["hist"][3][i]))
                if not math.isnan(r["p_mix_stage"]) and not math.isnan(r["p_mix"]):
                    r["p_mix"] = max(r["p_mix"], r["p_mix_stage"])
                if not math.isnan(r["p_hist_mix_stage"]) and not math.isnan(r["p_hist_mix"]):
                    r["p_hist_mix"] = max(r["p_hist_mix"], r["p_hist_mix_stage"])
                r["p_mix_any"] = mix_any(r)

    def _own_events(self, hist: pl.DataFrame | None, switched: list[str]) -> tuple[pl.DataFrame | None, np.ndarray]:
        """One account's tournament hands in its events without a switch, sorted by event (its name, or its code:
        the codes are in the names' order) and time, and all its tournament hands' action counts summed.

        Parameters
        ----------
        hist : the account's tournament hands (the event as ``tournament_id``, or as ``tc`` a code of ``codes_``),
            or None. switched : the names of the account's events with a mid-event switch.

        Returns
        -------
        ``(own, total)``: the rows (None without any) and the summed counts (floats; zeros without rows)."""
        if hist is None or hist.height == 0:
            return None, np.zeros(len(ACTS))
        total = hist.select([pl.col(f"n_{a}").sum() for a in ACTS]).to_numpy().astype(float)[0]
        if "tc" in hist.columns:
            col, out = "tc", pl.Series([self.codes_.of(self.codes_.tournament, t) for t in switched], dtype=pl.Int32)
        else:
            col, out = "tournament_id", pl.Series(switched, dtype=pl.Utf8)
        return hist.filter(~pl.col(col).is_in(out.implode())).sort(col, "started_at"), total

    def _stage_tables(self, own: pl.DataFrame | None, account: str, k: int, total: np.ndarray
                      ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        """The account's events without a switch (``own``, :meth:`_own_events`) split at hand ``k`` (those with
        ``min_segment`` hands after it): each split's who x period x action table against the event's field at the
        same times, its after-segment counts and the rest of the account's tournament hands (``total`` less the
        after-segment)."""
        tables: list[np.ndarray] = []
        after_own: list[np.ndarray] = []
        base_own: list[np.ndarray] = []
        if own is None or own.height == 0 or k < self.min_before:
            return tables, after_own, base_own
        cols = [f"n_{a}" for a in ACTS]
        col = "tc" if "tc" in own.columns else "tournament_id"
        for (tid,), e in own.partition_by([col], as_dict=True, maintain_order=True).items():
            if e.height < k + self.min_segment:
                continue
            c = e.select(cols).to_numpy().astype(float)
            cb, ca = c[:k].sum(axis=0), c[k:].sum(axis=0)
            if col == "tc":
                tid = self.codes_.tournaments[tid]
            fb, fa = self._field_counts(tid, account, e["started_at"][k])
            if fb.sum() == 0 or fa.sum() == 0:
                continue
            tables.append(np.array([[cb, ca], [fb, fa]]))
            after_own.append(ca)
            base_own.append(total - ca)
        return tables, after_own, base_own

    def _stage_null_p(self, name: str, p: np.ndarray, stat: np.ndarray, dof: np.ndarray) -> np.ndarray:
        """The simulated moves' style p-values (``p``, statistics ``stat`` on ``dof``) as a candidate's with no own
        baseline: the larger of the test's p and its F p at the population's same-stage dispersion
        (``stage_prior_[name]``, ``"field"`` or ``"hist"``); ``p`` unchanged without that prior."""
        s0, d0 = getattr(self, "stage_prior_", {}).get(name, (float("nan"), float("nan")))
        if math.isnan(s0):
            return p
        if s0 <= 1.0:
            return p
        pf = _f_p(stat, dof, np.full(len(p), s0), np.full(len(p), d0))
        return np.where(np.isnan(pf) | np.isnan(p), p, np.maximum(p, pf))

