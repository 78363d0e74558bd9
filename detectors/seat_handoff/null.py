"""The population's own null: simulated same-player moves (other accounts' events split at the candidates'
hand positions, through the same tests), a candidate's combined p ranked among moves of about as much data
(an empirical null, Efron, JASA 99, 2004)."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors import stats as mt
from detectors.seat_handoff.frames import FieldCounts
from detectors.seat_handoff.queries import ACTS
from detectors.seat_handoff.statistics import (
    _N_STRATA, _chi2_p_vec, _chi2_stat_vec, _device_time_many, _eff_n, _g2_interaction_vec, _g2_p, _midranks, _mwu_p_vec, _prefix,
    _range_p_counts,
)


class NullMixin:
    """The population null of :class:`~detectors.seat_handoff.SeatHandoffDetector`."""

    # ------------------------------------------------------------------ the population's own null
    def _matched_rank(self, p: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Monte Carlo p-value of each candidate's combined ``p`` among the ``null_match``
        simulated moves nearest to it in (log) effective sample size ``after`` (``_eff_n``):
        (1 + #moves with a combined p at most the candidate's) / (1 + #moves compared). A
        player's drift between days is a fixed shift, so the tests find it the more
        significant the more data they have; ranked against all moves, an honest mover with a
        long event and a long history would look extreme against mostly smaller samples (a
        conditional Monte Carlo test, Davison & Hinkley 1997, ch. 4.2, matched on a nuisance
        statistic). Where fewer than ``tail_exceed`` moves are as extreme, the tail is
        extrapolated (:func:`_gpd_tail`): a rank alone cannot go below 1 / (1 + N), which
        false-discovery control over many candidates needs for a single seat taken."""
        la = np.log(np.maximum(self.null_after_, 1.0))
        o = np.argsort(la, kind="stable")
        la, pn = la[o], self.null_[o]
        n = la.size
        m = int(min(n, self.null_match))
        pos = np.searchsorted(la, np.log(np.maximum(after, 1.0)))
        lo = np.clip(pos - m // 2, 0, n - m)
        out = np.empty(p.size)
        fits: dict[int, tuple | None] = {}  # the tail's fit by the moves compared (the window's start)
        for i in range(p.size):  # one slice per candidate, not per action
            ref = pn[lo[i]:lo[i] + m]
            k = np.count_nonzero(ref <= p[i])
            out[i] = (1.0 + k) / (1.0 + m)
            if k < self.tail_exceed:
                if lo[i] not in fits:
                    fits[lo[i]] = _gpd_fit(ref, self.tail_exceed)
                out[i] = min(out[i], _gpd_sf(fits[lo[i]], p[i]))
        return out

    def _relogin_shift_p(self, df: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The speed shift at each re-login on the seat's own device and network (``relogins``) ranked among the
        shifts of this population's other accounts' re-logins (:func:`_switch_shift_p`): a person back at the same
        machine after a break may be at another pace, which no simulated move (no break) shows. Where fewer than
        ``min_switch_shifts`` re-logins say what a break does to a speed, the caller keeps the simulated moves'
        rank (:meth:`_kept_device_shift_p`), as at a login that kept the device.

        Parameters
        ----------
        df : the scored rows (``device_changed``, ``net_changed``, ``account``, ``time_shift``, ``time_shift_event``).

        Returns
        -------
        The p-values (NaN on the other rows, and on all with fewer than ``min_switch_shifts`` re-logins to rank
        among) and the boolean mask of the re-login rows."""
        relog = (~df["device_changed"].fill_null(True) & ~df["net_changed"].fill_null(True)).to_numpy()
        out = np.full(df.height, np.nan)
        if relog.any():
            acc = df["account"].to_numpy()[relog]
            out[relog] = _switch_shift_p(df["time_shift"].to_numpy().astype(float)[relog],
                                         df["time_shift_event"].to_numpy().astype(float)[relog],
                                         self.min_switch_shifts, owner=acc, owner_event=acc)[0]
        return out, relog

    def _kept_device_shift_p(self, shift: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Two-sided Monte Carlo p-value of each candidate's speed shift (``shift``, log time after the
        login against the account's other decisions) at a login that kept the device (another network
        only, or the same machine again): no device rescales the times there, so the shift is ranked
        among the simulated same-player moves' own shifts (``null_shift_``: a person who plays on, on
        one machine, drifts in speed by this much between the parts of an event and other days), the
        ``null_match`` moves nearest in effective sample size ``after`` as :meth:`_matched_rank`
        compares: (1 + #moves at least as far from the moves' median) / (1 + #moves compared)
        (Davison & Hinkley, *Bootstrap Methods*, 1997, ch. 4), and where fewer than ``tail_exceed``
        moves are as far, their distances' fitted generalised Pareto tail (:func:`_gpd_tail`, as
        :meth:`_matched_rank` extrapolates). NaN without the moves' shifts or without a shift."""
        out = np.full(len(shift), np.nan)
        sh = getattr(self, "null_shift_", np.zeros(0))
        if sh.size == 0 or sh.size != self.null_after_.size or not np.isfinite(sh).any():
            return out
        ok = np.isfinite(sh)
        centre = float(np.median(sh[ok]))
        la = np.log(np.maximum(self.null_after_[ok], 1.0))
        o = np.argsort(la, kind="stable")
        la, dn = la[o], np.abs(sh[ok][o] - centre)
        n = la.size
        m = int(min(n, self.null_match))
        d = np.abs(np.asarray(shift, dtype=float) - centre)
        lo = np.clip(np.searchsorted(la, np.log(np.maximum(after, 1.0))) - m // 2, 0, n - m)
        fits: dict[int, tuple | None] = {}  # the tail's fit by the moves compared (the window's start)
        for i in np.flatnonzero(np.isfinite(d)):  # one slice per candidate, not per action
            ref = dn[lo[i]:lo[i] + m]
            k = np.count_nonzero(ref >= d[i] - 1e-12)
            out[i] = (1.0 + k) / (1.0 + m)
            if k < self.tail_exceed:
                # beyond the moves' range: their fitted tail, as for the play's p (the distance as the
                # statistic: _gpd_tail reads -log of its arguments)
                if lo[i] not in fits:
                    fits[lo[i]] = _gpd_fit(np.exp(-ref), self.tail_exceed, bounded=False)
                out[i] = min(out[i], _gpd_sf(fits[lo[i]], float(np.exp(-d[i]))))
        return out

    def _null_events(self, con: duckdb.DuckDBPyConnection, exclude: pl.DataFrame) -> pl.DataFrame:
        """A seeded sample of account-events (at least min_before + min_segment hands) of
        accounts with no candidate login at all, to place the simulated moves in: an account
        whose seat was taken in another event would carry the helper's play in its own
        history and make its simulated moves look like hand-offs."""
        ev = con.sql(
            """SELECT s.player AS account, h.tournament_id, count(*) AS n_hands
               FROM seats s JOIN hands h USING (hand_id)
               WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND NOT s.sitting_out
               GROUP BY ALL HAVING count(*) >= ? ORDER BY ALL""",
            params=[self.min_before + self.min_segment]).pl()
        ev = ev.join(exclude.select("account").unique(), on="account", how="anti")
        if ev.height < self.null_min_events:
            return ev.clear().select("account", "tournament_id")
        if ev.height > self.null_events:
            rng = np.random.default_rng(self.random_state)
            ev = ev[np.sort(rng.choice(ev.height, self.null_events, replace=False))]
        return ev.select("account", "tournament_id")

    def _population_null(self, ev: pl.DataFrame, ks: np.ndarray, hands: pl.DataFrame, hist: tuple,
                         field: pl.DataFrame, tim: pl.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
        """Combined p-values of simulated same-player device moves in this population
        (an empirical null, Efron, JASA 99, 2004): pseudo change points at seeded random
        hands of account-events without a mid-event login, at the hand positions the real
        candidates have (``ks``), each put through the same tests as a candidate whose
        device the account never used (timing and action mix after the point against all
        the account's other play; action mix against the field; bet sizes before/after),
        vectorised over the points by prefix sums. Under the null the same player plays on,
        so a candidate's rank among these is a Monte Carlo p-value (Davison & Hinkley,
        *Bootstrap Methods and their Application*, 1997, ch. 4): (1 + #null at least as
        extreme) / (1 + N). The tests' own p-values are not uniform here (a player's speed
        and game drift between sessions and stages more than within one), which is what
        this corrects. Returns each simulated move's combined p and its effective sample size
        (actions after the point against those of the account's history: the candidates are
        ranked among the moves of a similar size, ``_matched_rank``). ``hist``: the accounts' tournament hands as
        :func:`~detectors.seat_handoff.frames.null_history` reduces them (action sums, range counts)."""
        rng = np.random.default_rng(self.random_state + 1)
        none = (np.zeros(0), np.zeros(0))
        if ev.height == 0 or ks.size == 0:
            return none
        # (the data come from the candidates' own queries, run once over both sets)
        hands = hands.join(ev, on=["account", "tournament_id"], how="semi")
        field, tim = _null_inputs(ev, field, tim)
        if hands.height == 0:
            return none
        # account-events in a fixed order; each has n_e hands and n_e + 1 bins (bin j + 1: hand j;
        # an element before hand k lies in bins 0..k)
        hands = hands.sort("account", "tournament_id", "started_at", "hand_id")
        evs = hands.select("account", "tournament_id").unique(maintain_order=True).with_row_index("e")
        hands = hands.join(evs, on=["account", "tournament_id"], how="left").with_columns(
            j=pl.int_range(pl.len()).over("e"), ts=pl.col("started_at").dt.epoch("us"))
        n_e = hands.group_by("e").len().sort("e")["len"].to_numpy().astype(np.int64)
        E = evs.height
        boff = np.concatenate([[0], np.cumsum(n_e + 1)[:-1]]).astype(np.int64)
        nb = int((n_e + 1).sum())
        e_h, j_h = hands["e"].to_numpy().astype(np.int64), hands["j"].to_numpy().astype(np.int64)
        hbin = boff[e_h] + j_h + 1
        hoff = np.concatenate([[0], np.cumsum(n_e)[:-1]]).astype(np.int64)  # first hand row of each event
        ts_h = hands["ts"].to_numpy()

        me, kk, width = self._draw_moves(rng, ks, n_e)
        if kk.size == 0:
            return none
        N = kk.size
        cp = ts_h[hoff[me] + kk]

        def before(cs: np.ndarray, k: np.ndarray) -> np.ndarray:
            csz = np.concatenate([[0.0], cs])
            return csz[boff[me] + k + 1] - csz[boff[me]]

        # action counts before / after
        X = hands.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)
        cb = np.column_stack([before(_prefix(hbin, X[:, i], nb), kk) for i in range(len(ACTS))])
        ct = np.column_stack([before(_prefix(hbin, X[:, i], nb), n_e[me]) for i in range(len(ACTS))])
        ca = ct - cb
        p_mix, field, span, t0 = self._null_field_mix(field, evs, me, cb, ca, cp, ts_h)
        # after-segment against the account's own tournament hands outside it
        htot, ranges = hist
        hc = (evs.join(htot, on="account", how="left").sort("e")
              .select([f"n_{a}" for a in ACTS]).fill_null(0).to_numpy().astype(float))[me] - ca
        x2, dh = _chi2_stat_vec(hc, ca)
        p_hist = np.where(hc.sum(axis=1) >= 20, self._stage_null_p("hist", _chi2_p_vec(hc, ca), x2, dh), np.nan)
        p_size = self._null_sizes(hands, boff, nb, before, n_e, me, kk, E)
        p_range = self._null_range(hands, ranges, evs, me, kk, before, hbin, nb, n_e) if self.use_range else np.full(N, np.nan)
        p_time = self._null_timing(tim, evs, e_h, ts_h, hoff, span, t0, me, kk, width)
        # the same combination as the candidates' (score)
        pm = np.column_stack([p_mix, p_hist])
        nm = (~np.isnan(pm)).sum(axis=1)
        p_mix_any = np.where(nm > 0, np.minimum(1.0, nm * np.nanmin(np.where(np.isnan(pm), np.inf, pm), axis=1)), np.nan)
        p_style = mt.fisher_combine(np.column_stack([p_mix_any, p_size] + ([p_range] if self.use_range else [])), untested=1.0)
        p_all = mt.fisher_combine(np.column_stack([p_style, p_time]), untested=1.0)
        self.null_parts_ = {"p_mix": p_mix, "p_hist_mix": p_hist, "p_size": p_size, "p_time": p_time, "p_value": p_all,
                            "p_range": p_range, "p_style": p_style,
                            "account": evs["account"].to_numpy()[me], "tournament_id": evs["tournament_id"].to_numpy()[me],
                            "k": kk, "n_eff": _eff_n(ca.sum(axis=1), hc.sum(axis=1))}
        return p_all, _eff_n(ca.sum(axis=1), hc.sum(axis=1))

    def _draw_moves(self, rng: np.random.Generator, ks: np.ndarray, n_e: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """The simulated moves: hand positions drawn from the real candidates' (``ks``), each moved by up to
        ``null_jitter`` hands and placed in an account-event long enough (``n_e`` hands each); a split drawn twice
        counts once. Returns each move's event and hand position, and the width that keys them."""
        n_moves, E = int(self.null_moves), n_e.size
        kk = np.maximum(rng.choice(ks, n_moves) + rng.integers(-self.null_jitter, self.null_jitter + 1, n_moves),
                        self.min_before)
        order = np.argsort(n_e, kind="stable")
        lo = np.searchsorted(n_e[order], kk + self.min_segment, side="left")
        okm = lo < E
        kk, lo = kk[okm], lo[okm]
        me = order[lo + np.floor(rng.random(kk.size) * (E - lo)).astype(np.int64)]
        width = int(n_e.max()) + 1
        if kk.size == 0:
            return me, kk, width
        pairs = np.unique(me * width + kk)
        return pairs // width, pairs % width, width

    def _null_sizes(self, hands: pl.DataFrame, boff: np.ndarray, nb: int, before, n_e: np.ndarray, me: np.ndarray,
                    kk: np.ndarray, E: int) -> np.ndarray:
        """The simulated moves' bet-size test: Mann-Whitney before / after within the event, by prefix sums of ranks."""
        # bet sizes before / after (within the event)
        sz = hands.select("e", "j", "sizes").explode("sizes").drop_nulls("sizes").filter(pl.col("sizes").is_not_nan())
        e_s, j_s, v_s = sz["e"].to_numpy().astype(np.int64), sz["j"].to_numpy().astype(np.int64), sz["sizes"].to_numpy().astype(float)
        r_s, tie_s = _midranks(e_s, v_s)
        tie_s = np.concatenate([tie_s, np.zeros(max(0, E + 1 - tie_s.size))])
        sbin = boff[e_s] + j_s + 1
        cn, cr = _prefix(sbin, np.ones(e_s.size), nb), _prefix(sbin, r_s, nb)
        na = before(cn, n_e[me]) - before(cn, kk)
        p_size = _mwu_p_vec(before(cn, kk), na, before(cr, kk) - before(cn, kk) * (before(cn, kk) + 1) / 2, tie_s[me])
        return p_size

    def _null_timing(self, tim: pl.DataFrame | None, evs: pl.DataFrame, e_h: np.ndarray, ts_h: np.ndarray,
                     hoff: np.ndarray, span: int, t0: int, me: np.ndarray, kk: np.ndarray, width: int) -> np.ndarray:
        """The simulated moves' timing test: after the point against all the account's other decisions, the
        device-invariant test of a candidate's login (:meth:`_null_device_time`); NaN without decision times."""
        if tim is None or not tim.height:
            self.null_shift_ = np.full(kk.size, np.nan)
            return np.full(kk.size, np.nan)
        # decision timing after the point against all the account's other decisions: the timing
        # test of a candidate's login (the device-invariant one, ``_test_rows``) on each move's own samples
        acc_codes = {a: i for i, a in enumerate(sorted(set(tim["account"].to_list())))}
        # the decisions in the sampled events, placed by the hands before them
        te = tim.with_row_index("row").join(evs, on=["account", "tournament_id"], how="inner")
        e_t = te["e"].to_numpy().astype(np.int64)
        ts_t = te["started_at"].dt.epoch("us").to_numpy()
        # hands of event e are ts_h[hoff[e]:hoff[e]+n_e[e]]; count those at or before each decision
        key_h = e_h.astype(np.int64) * span + (ts_h - t0)
        pos = np.searchsorted(key_h, e_t.astype(np.int64) * span + (ts_t - t0), side="right") - hoff[e_t]
        acc_m = np.array([acc_codes.get(a, -1) for a in evs["account"].to_list()], dtype=np.int64)[me]
        return self._null_device_time(tim, te, e_t, pos, acc_codes, acc_m, me, kk, width)

    def _null_range(self, hands: pl.DataFrame, ranges: pl.DataFrame, evs: pl.DataFrame, me: np.ndarray, kk: np.ndarray,
                    before, hbin: np.ndarray, nb: int, n_e: np.ndarray) -> np.ndarray:
        """The simulated moves' range test: the entry decisions by the cards after each point against all the
        account's other tournament hands (``_range_p_many`` on counts per stratum, by prefix sums; ``ranges``: the
        accounts' hands with an entry decision counted by stratum, :func:`~detectors.seat_handoff.frames.null_history`)."""
        N = kk.size
        S = _N_STRATA
        rs, rc = hands["rstr"].to_numpy().astype(np.int64), hands["rcls"].to_numpy().astype(np.int64)
        a, a1, a2 = np.zeros((N, S)), np.zeros((N, S)), np.zeros((N, S))
        for st_ in np.unique(rs[rs >= 0]):
            for arr, sel in ((a, rs == st_), (a1, (rs == st_) & (rc >= 1)), (a2, (rs == st_) & (rc == 2))):
                cs_ = _prefix(hbin, sel.astype(float), nb)
                arr[:, st_] = before(cs_, n_e[me]) - before(cs_, kk)
        acc_list = evs["account"].to_list()
        acc_codes_r = {x: i for i, x in enumerate(sorted(set(acc_list)))}
        ha = np.array([acc_codes_r.get(x, -1) for x in ranges["account"].to_list()], dtype=np.int64)
        okh = ha >= 0
        nacc = len(acc_codes_r)
        idx = ha[okh] * S + ranges["rstr"].to_numpy().astype(np.int64)[okh]
        T, T1, T2 = (np.bincount(idx, weights=ranges[c].to_numpy().astype(float)[okh], minlength=nacc * S).reshape(nacc, S)
                     for c in ("n", "n1", "n2"))
        am = np.array([acc_codes_r[x] for x in acc_list], dtype=np.int64)[me]
        return _range_p_counts(a, a1, a2, np.maximum(T[am] - a, 0.0), np.maximum(T1[am] - a1, 0.0),
                               np.maximum(T2[am] - a2, 0.0))

    def _null_field_mix(self, field: pl.DataFrame, evs: pl.DataFrame, me: np.ndarray, cb: np.ndarray, ca: np.ndarray,
                        cp: np.ndarray, ts_h: np.ndarray) -> tuple[np.ndarray, pl.DataFrame, int, int]:
        """The simulated moves' action-mix change against the field's over the same two periods (G2 interaction,
        at the population's same-stage dispersion: :meth:`_stage_null_p`); returns the p-values, the keyed field frame, and the time key's span and origin."""
        # the field's counts before / after the point, the account's own left out; each tournament's key its rank
        # among the field's tournaments by name (rows with ``tc``: codes in the names' order, :class:`Codes`)
        if "tc" in field.columns:
            gc, inv = np.unique(field["tc"].to_numpy(), return_inverse=True)
            tid_codes = {self.codes_.tournaments[g]: i for i, g in enumerate(gc.tolist())}
            field = field.with_columns(tc=pl.Series(inv.astype(np.int64)))
        else:
            tid_codes = {t: i for i, t in enumerate(field["tournament_id"].unique().sort().to_list())}
            field = field.with_columns(tc=pl.col("tournament_id").replace_strict(tid_codes, return_dtype=pl.Int64),
                                       ts=pl.col("started_at").dt.epoch("us"))
        t0 = int(min(field["ts"].min(), ts_h.min()))
        span = int(max(field["ts"].max(), ts_h.max())) - t0 + 2
        field = field.with_columns(key=pl.col("tc") * span + (pl.col("ts") - t0)).sort("key")
        fkey = field["key"].to_numpy()
        FX = field.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)
        fcs = np.vstack([np.zeros((1, len(ACTS))), np.cumsum(FX, axis=0)])
        mtc = np.array([tid_codes.get(t, -1) for t in evs["tournament_id"].to_list()], dtype=np.int64)[me]
        i0 = np.searchsorted(fkey, mtc * span, side="left")
        i1 = np.searchsorted(fkey, mtc * span + (cp - t0), side="left")
        i2 = np.searchsorted(fkey, (mtc + 1) * span, side="left")
        fb = fcs[i1] - fcs[i0] - cb
        fa = fcs[i2] - fcs[i1] - ca
        g2, dof = _g2_interaction_vec(np.stack([np.stack([cb, ca], axis=1), np.stack([fb, fa], axis=1)], axis=1))
        # at the population's same-stage dispersion, as a candidate with no own baseline is (``stage``)
        return self._stage_null_p("field", _g2_p(g2, dof), g2, dof), field, span, t0

    def _null_device_time(self, tim: pl.DataFrame, te: pl.DataFrame, e_t: np.ndarray, pos: np.ndarray,
                          acc_codes: dict, acc_m: np.ndarray, me: np.ndarray, kk: np.ndarray, width: int,
                          chunk: int = 500, max_values: int | None = None) -> np.ndarray:
        """``_device_time_many`` for the simulated moves of the population's null: each move's
        decisions after its split (its event, hands from ``kk`` on) against the account's other
        decisions, built as explicit samples a chunk of moves at a time (at most ``chunk`` moves and
        ``max_values`` baseline decisions, default :data:`NULL_TEST_VALUES`: each move's test is its own, so the
        chunks change no figure; the test removes each
        move's own common shift: no prefix sums). NaN where the account has no decisions. Sets
        ``null_shift_``: each move's common shift (log time after the split against the account's
        other decisions), the speed drift of a person who plays on, on the same machine."""
        N = me.size
        out = np.full(N, np.nan)
        if N == 0 or te.height == 0:
            return out
        lm = tim["log_ms"].to_numpy().astype(float)
        cl = tim["cls"].to_numpy().astype(np.int64)
        acc_all = np.array([acc_codes[a] for a in tim["account"].to_list()], dtype=np.int64)
        by_acc = np.argsort(acc_all, kind="stable")
        acc_lo = np.searchsorted(acc_all[by_acc], np.arange(len(acc_codes)), side="left")
        acc_hi = np.searchsorted(acc_all[by_acc], np.arange(len(acc_codes)), side="right")
        # the sampled events' decisions ordered by (event, hands before them)
        W = int(width) + 2
        rows_t = te["row"].to_numpy()
        key = e_t.astype(np.int64) * W + pos.astype(np.int64)
        o = np.argsort(key, kind="stable")
        key, rows_o = key[o], rows_t[o]
        a0 = np.searchsorted(key, me * W + kk, side="right")  # decisions on hands kk.. of the move's event
        a1 = np.searchsorted(key, (me + 1) * W, side="left")
        mask = np.zeros(lm.size, bool)
        shift = np.full(N, np.nan)
        band = math.log(self.device_band)
        sizes = np.where(acc_m >= 0, (acc_hi - acc_lo)[np.maximum(acc_m, 0)], 0)
        for idx in move_chunks(sizes, chunk, NULL_TEST_VALUES if max_values is None else max_values):
            xa, ca, xb, cb, keep = [], [], [], [], []
            for i in idx:
                if acc_m[i] < 0:
                    continue
                after = rows_o[a0[i]:a1[i]]
                own = by_acc[acc_lo[acc_m[i]]:acc_hi[acc_m[i]]]
                mask[after] = True
                base = own[~mask[own]]
                mask[after] = False
                xa.append(lm[after]), ca.append(cl[after]), xb.append(lm[base]), cb.append(cl[base]), keep.append(i)
            if keep:
                res = _device_time_many(xa, ca, xb, cb, band, speed=not self.use_switch_null_)
                out[np.array(keep)], shift[np.array(keep)] = res["p"], res["shift"]
        self.null_shift_ = shift
        return out


def _null_inputs(ev: pl.DataFrame, field, tim) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The field's rows and the decision times of the null's account-events ``ev``.

    Parameters
    ----------
    ev : the account-events (``account``, ``tournament_id``). field : a :class:`FieldCounts` (its rows of ``ev``'s
        tournaments made now, the tournaments as codes) or rows with ``tournament_id``. tim : the decision times
        (``account`` ...), a call that makes them, or None.

    Returns
    -------
    ``(field, tim)``: the rows of ``ev``'s tournaments, and the decision times of ``ev``'s accounts (None for None)."""
    if isinstance(field, FieldCounts):
        field = field.frame(ev["tournament_id"].unique().to_list())
    else:
        field = field.join(ev.select("tournament_id").unique(), on="tournament_id", how="semi")
    tim = tim() if callable(tim) else tim
    if tim is not None:
        tim = tim.join(ev.select("account").unique(), on="account", how="semi")
    return field, tim


#: baseline decisions (the moves' accounts' own) the population null's timing test holds at once: a chunk of 500
#: moves is as large as its accounts' histories are long (the peak of the fit at 240k hands was there)
NULL_TEST_VALUES = 2_000_000


def move_chunks(sizes: np.ndarray, chunk: int, max_values: int) -> list[range]:
    """Consecutive ranges of moves, each of at most ``chunk`` moves and at most ``max_values`` of ``sizes`` summed
    (a move with more alone), covering every move in order.

    Parameters
    ----------
    sizes : each move's baseline size. chunk : the most moves in a range. max_values : the most values in one.

    Returns
    -------
    The ranges of move indices."""
    out, s0, tot = [], 0, 0
    for i, n in enumerate(np.asarray(sizes, dtype=np.int64).tolist()):
        if i > s0 and (i - s0 >= chunk or tot + n > max_values):
            out.append(range(s0, i))
            s0, tot = i, 0
        tot += n
    if s0 < len(sizes):
        out.append(range(s0, len(sizes)))
    return out


def _gpd_tail(null_p: np.ndarray, p: float, n_exc: int, n_fit: int = 250, bounded: bool = True) -> float:
    """Tail p-value of ``p`` among simulated null p-values ``null_p`` beyond their range: the
    statistic -log(p); the ``n_fit`` largest null statistics over the next one (the
    threshold u) fitted by a generalised Pareto distribution (maximum likelihood, location 0),
    P(T >= t) = (n_fit / N) * GPD.sf(t - u) (Knijnenburg, Wessels, Reinders & Shmulevich,
    "Fewer permutations, more accurate P-values", Bioinformatics 25(12), 2009; Pickands,
    Ann. Stat. 3, 1975). A fitted shape of 1 or more (a tail without a finite mean: nothing to
    extrapolate) or too few moves return 1 (the rank stands). ``n_exc``: the fewest moves
    fitted. ``bounded=False``: a fitted shape below 0 (a tail with an end point, beyond which the fit says
    nothing can lie: p = 0) is replaced by the exponential tail (shape 0, scale the exceedances' mean), the
    lightest tail without an end; a p-value of 0 is no figure to put in a case. The fit is
    :func:`_gpd_fit`, the tail :func:`_gpd_sf`."""
    return _gpd_sf(_gpd_fit(null_p, n_exc, n_fit, bounded), p)


def _gpd_fit(null_p: np.ndarray, n_exc: int, n_fit: int = 250, bounded: bool = True) -> tuple | None:
    """The generalised Pareto fit of :func:`_gpd_tail` (which depends on the simulated moves only, not on the p-value
    placed in their tail: one fit serves every candidate ranked among the same moves).

    Parameters
    ----------
    null_p : the simulated moves' p-values. n_exc : the fewest moves fitted. n_fit : the largest statistics fitted.
    bounded : as :func:`_gpd_tail`.

    Returns
    -------
    ``(n_fit / N, u, shape, scale)``, or None where the rank stands (too few moves, no exceedance, or no usable
    fit)."""
    t_null = -np.log(np.clip(null_p, 1e-300, 1.0))
    N = t_null.size
    n_fit = int(min(n_fit, N // 4))
    if n_fit < max(n_exc, 20):
        return None
    srt = np.sort(t_null)[::-1]
    u = srt[n_fit]
    exc = srt[:n_fit] - u
    if not np.any(exc > 0):
        return None
    with np.errstate(all="ignore"):
        shape, _, scale = sps.genpareto.fit(exc, floc=0.0)
    if not bounded and np.isfinite(shape) and shape < 0.0:
        shape, scale = 0.0, float(exc.mean())
    if not np.isfinite(shape) or not np.isfinite(scale) or scale <= 0 or shape >= 1.0:
        return None
    return n_fit / N, u, shape, scale


def _gpd_sf(fit: tuple | None, p: float) -> float:
    """The tail p-value of ``p`` under a fit of :func:`_gpd_fit` (1 where there is none)."""
    if fit is None:
        return 1.0
    share, u, shape, scale = fit
    t = -np.log(max(float(p), 1e-300))
    return float(share * sps.genpareto.sf(t - u, shape, loc=0.0, scale=scale))


def _switch_shift_p(shift: np.ndarray, shift_event: np.ndarray, min_n: int, owner: np.ndarray | None = None,
                    owner_event: np.ndarray | None = None) -> tuple[np.ndarray, float, float]:
    """Two-sided p-value of each candidate's speed shift at its switch (``shift``: the log-time
    shift the device-invariant test removes, pooled over a device's events) against the shifts
    this population's switches show (``shift_event``: one per tested account-event, most of them
    honest device moves): an empirical null (Efron, "Large-scale simultaneous hypothesis testing",
    JASA 99, 2004) read by rank. The distance of a shift from the switches' median is ranked among
    the switches' own distances, p = (1 + #{switches at least as far}) / (1 + N) (the Monte Carlo
    p-value of Davison & Hinkley, *Bootstrap Methods*, 1997, ch. 4, with the switches as the draws):
    how much a device changes a person's speed is what the population's own moves say, in its
    shape as well as its spread. A move between a phone and a desktop rescales a person's times by
    nearly two either way, so a population's switches are a mixture whose tails no normal curve
    fitted to their middle describes; by rank, no p is below 1 / (1 + N) (a candidate's own event
    is one of the switches, counted as at least as far), and a speed change alone is never stronger
    evidence than that. With ``owner`` (each candidate's account) and ``owner_event`` (each
    switch's), a candidate is ranked among the other accounts' switches only, its own event
    standing for itself in the count (p = (1 + #{others' switches at least as far}) / (1 + N
    others)): the null is how other people's speeds move at a switch, and a helper who took the
    seat in several events would otherwise put each of those events into the null it is judged
    against, as far out as itself (leave-one-out, as a cross-validated null: Efron, *Large-Scale
    Inference*, 2010, ch. 6). Returns the p-values (NaN with fewer
    than ``min_n`` shifts to rank among, or no shift), the null's centre (the median) and its
    scale (1.4826 MAD, Hampel, JASA 69, 1974; told in the case)."""
    s = np.asarray(shift_event, dtype=float)
    ok = np.isfinite(s)
    s = s[ok]
    out = np.full(len(shift), np.nan)
    if s.size < min_n:
        return out, float("nan"), float("nan")
    centre = float(np.median(s))
    scale = 1.4826 * float(np.median(np.abs(s - centre)))
    null_d = np.sort(np.abs(s - centre))
    d = np.abs(np.asarray(shift, dtype=float) - centre)
    d_cut = np.nan_to_num(d, nan=np.inf) - 1e-12
    if owner is None or owner_event is None:
        # switches at least as far from the centre (a small tolerance: a candidate's own event is among them)
        far = null_d.size - np.searchsorted(null_d, d_cut, side="left")
        return np.where(np.isfinite(d), (1.0 + far) / (1.0 + null_d.size), np.nan), centre, scale
    # the other accounts' switches: all switches at least as far, less the candidate's own account's
    own_ev = np.asarray(owner_event, dtype=object)[ok]
    ev_d = np.abs(s - centre)
    cand = np.asarray(owner, dtype=object)
    same = cand[:, None] == own_ev[None, :]
    far_all = null_d.size - np.searchsorted(null_d, d_cut, side="left")
    far_own = (same & (ev_d[None, :] >= d_cut[:, None])).sum(axis=1)
    n_other = null_d.size - same.sum(axis=1)
    out = np.where(np.isfinite(d) & (n_other >= min_n), (1.0 + far_all - far_own) / (1.0 + n_other), np.nan)
    return out, centre, scale
