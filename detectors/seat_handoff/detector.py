"""The seat hand-off detector: fit (candidates, their tests, the population null), score, threshold."""

from __future__ import annotations

import math
from typing import Any

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.base import HAND_INPUTS, Detector
from detectors import stats as mt
from detectors.features import identity as idf
from detectors.seat_handoff.candidates import CandidatesMixin
from detectors.seat_handoff.history import switch_history
from detectors.seat_handoff.identity import identity_p
from detectors.seat_handoff.event_hands import testable_events
from detectors.seat_handoff.evidence import EvidenceMixin, _aggr, _nint, _share
from detectors.seat_handoff.frames import TEST_ROWS, FramesMixin, hist_base, range_baseline
from detectors.seat_handoff.handover import HandoverMixin
from detectors.seat_handoff.null import NullMixin, _switch_shift_p
from detectors.seat_handoff.places import (
    device_repeats, kept_device_homes, owner_places_p, owner_switch_homes, repeated_product_p, two_places_p,
)
from detectors.seat_handoff.stage import StageMixin
from detectors.seat_handoff.queries import ACTS
from detectors.seat_handoff.statistics import (
    _chi2_p_vec, _device_time_many, _eff_n, _g2_interaction_vec, _g2_p, _mwu_p_many, _own_timing, _range_p_many,
    _strat_mwu_many,
)



class SeatHandoffDetector(CandidatesMixin, NullMixin, StageMixin, HandoverMixin, EvidenceMixin, FramesMixin, Detector):
    """Account, tournament and change-point hand of a mid-event seat hand-off (see the package docstring).

    Parameters
    ----------
    fdr : float
        the false-discovery rate: a candidate is flagged when its q-value (Benjamini-Hochberg over the candidates
        of their p-values given the account's own switches, :mod:`detectors.seat_handoff.history`) is at most this.
    random_state : int
        seed of the population null's simulated moves.
    min_segment, min_before : int
        hands needed after a change point (and each side of a scanned split), and before a login change point
        (the account's own history outside the hand-off is the timing baseline).
    signal_p : float
        the level at which a behavioural test is named in the case as shifted (text only).
    min_scan_hands, max_scan : int
        hands only: the hands an account-event needs to be scanned, and the account-events fully compared
        (strongest splits).
    handover_s, quick_s : float
        a hand-over: the login comes this soon after one of the account's logouts (a seat handed over is
        taken again within minutes, or the room's sit-out rules blind it away); the structures the case
        describes (a take-over-only device, two places at once) need it this soon.
    calibrate : bool
        rank the candidates' combined p against this population's simulated same-player moves.
    null_moves, null_events, null_min_events, null_jitter, null_match : int
        the null: simulated moves (Monte Carlo p-values resolve down to 1 / (1 + N)), account-events sampled to
        place them in, the fewest eligible account-events for a null, the jitter of a move's hand, and the moves
        of the nearest length a candidate is ranked among.
    tail_exceed : int
        fewer simulated moves than this as extreme as a candidate: its p-value from the null's fitted tail
        (:func:`detectors.seat_handoff.null._gpd_tail`).
    device_band : float
        without ``switch_speed``: a device changes a person's speed by at most this factor either way (about
        1.2-1.4 between phone and PC: Antoun & Cernat, Soc. Sci. Comput. Rev. 2019; Andreadis, mda 9(2), 2015).
    switch_speed, min_switch_shifts : bool, int
        the speed shift at a switch tested against the shifts of the other accounts' switches in this population (an
        empirical null of at least ``min_switch_shifts`` of them, :func:`detectors.seat_handoff.null._switch_shift_p`)
        and combined with the calibrated p (Fisher), in place of the band; at a login that kept the device (another
        network only) against the simulated same-player moves' own shifts
        (:meth:`~detectors.seat_handoff.null.NullMixin._kept_device_shift_p`).
    use_range : bool
        the style includes the range of starting hands entered and raised.
    household_max : int
        a home-sized network: at most this many accounts ever used it.
    hand_clock_s : float
        a hand's recorded start is whole seconds: a login this soon after the recorded start of an event's last
        hand is inside the event's span.
    identity : bool
        combine the play's p-value with the identity side of the login (its device ranked among the population's
        switch devices, :mod:`detectors.seat_handoff.identity`; made with at least ``min_switch_shifts`` of them)
        by Fisher's method.
    stage_baseline : bool
        test the action mix after a switch also against the account's own play at the same hand of its events
        without a switch (the benign explanation of stage, :mod:`detectors.seat_handoff.stage`).
    two_places : bool
        a seat left from the account's own home on another device: the two-places test (taken on another home-sized
        network against this population's re-logins on one device, :mod:`detectors.seat_handoff.places`; a device's
        days with the structure counted by their binomial tail, unless the population's owner devices keep second
        places) combined with the play's p in place of the identity's rank.
    slow_handover : bool
        the seconds the seat stood empty before the login against this population's re-logins of the same kind, a
        device counted once by its shortest hand-over (:mod:`detectors.seat_handoff.handover`), combined with the
        row's p; off by default (on the tuning worlds it found as many groups as it lost: docs/measurements.md).
    relogins : bool
        a re-login on the device and network of a session that logged out within ``handover_s`` is a candidate
        (neither changed: the play after it against all the account's other play and its speed shift among the
        simulated same-player moves', as at a login that kept the device, or among the population's other
        re-logins' where there are ``min_switch_shifts`` of them; judged alone in its event, not pooled by the
        device, which says nothing of who sits at it), and flagged by the same rule. Off by default: at a 2.4M-hand
        window the re-login events double the compared events, and the fit's peak and CPU (docs/measurements.md).
    """

    kind = "seat_handoff"
    inputs = {**HAND_INPUTS, "sessions": ("account", "ip", "device", "login_at", "logout_at"),
              "decisions": ("hand_id", "seq", "account", "ms")}

    def __init__(
        self,
        *,
        fdr: float = 0.05,
        random_state: int = 0,
        min_segment: int = 8,
        min_before: int = 3,
        signal_p: float = 0.05,
        min_scan_hands: int = 30,
        max_scan: int = 200,
        handover_s: float = 600.0,
        quick_s: float = 15.0,
        calibrate: bool = True,
        null_moves: int = 20000,
        null_events: int = 300,
        null_min_events: int = 20,
        null_jitter: int = 5,
        null_match: int = 1000,
        tail_exceed: int = 10,
        device_band: float = 1.5,
        switch_speed: bool = True,
        min_switch_shifts: int = 20,
        use_range: bool = True,
        household_max: int = 4,
        hand_clock_s: float = 1.0,
        identity: bool = True,
        stage_baseline: bool = True,
        two_places: bool = True,
        slow_handover: bool = False,
        relogins: bool = False,
    ) -> None:
        # the false-discovery rate is this detector's one level (``fdr``), not the base's ``alpha``
        self.fdr = fdr
        self.random_state = random_state
        self.min_segment = min_segment
        self.min_before = min_before
        self.signal_p = signal_p
        self.min_scan_hands = min_scan_hands
        self.max_scan = max_scan
        self.handover_s = handover_s
        self.quick_s = quick_s
        self.calibrate = calibrate
        self.null_moves = null_moves
        self.null_events = null_events
        self.null_min_events = null_min_events
        self.null_jitter = null_jitter
        self.null_match = null_match
        self.tail_exceed = tail_exceed
        self.device_band = device_band
        self.switch_speed = switch_speed
        self.min_switch_shifts = min_switch_shifts
        self.use_range = use_range
        self.household_max = household_max
        self.hand_clock_s = hand_clock_s
        self.identity = identity
        self.stage_baseline = stage_baseline
        self.two_places = two_places
        self.slow_handover = slow_handover
        self.relogins = relogins

    # ------------------------------------------------------------------ fit
    def fit(self, con: duckdb.DuckDBPyConnection) -> "SeatHandoffDetector":
        """Learn the population's sessions and change points: each candidate change point in an
        account's event (a mid-event login from another device or network, or the scanned best split without
        sessions), its style, range and timing tests against the event's field and the account's own history,
        calibrated against the population's simulated same-player moves (computed here, as PyOD's
        ``decision_scores_``: :meth:`score` returns them).

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``has_sessions_``, ``has_decisions_``, ``has_logouts_``, ``cand_``, ``field_``, ``null_``,
        ``scores_``, ``stage_prior_`` (the population's same-stage dispersions, :mod:`detectors.seat_handoff.stage`)
        and ``missing_``."""
        self.missing_ = []
        self.has_sessions_ = idf.table_rows(con, "sessions") > 0
        self.has_decisions_ = idf.table_rows(con, "decisions") > 0
        self.has_logouts_ = self.has_sessions_ and int(con.execute(
            "SELECT count(*) FROM sessions WHERE logout_at IS NOT NULL").fetchall()[0][0]) > 0
        if not self.has_sessions_:
            self.missing_.append("device and network changes (no sessions): change points scanned from play alone, "
                                 "ranked but never flagged (a player's own stack and table shift play as much)")
        if not self.has_decisions_:
            self.missing_.append("decision timing (no decisions)")
        self.use_switch_null_ = False
        self.stage_prior_ = {}
        self.scores_ = self._candidate_scores(con)
        return self

    # ------------------------------------------------------------------ score
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The candidate change points' scores (computed by :meth:`fit`, as PyOD's ``decision_scores_``).

        Returns one row per account-event (its strongest change point, ``cand`` its index): the tests'
        p-values, their combination ``p_event`` (calibrated against the population's simulated
        same-player moves where sessions allow), the account's switch history and ``p_value``, ``p_event``
        given that history (:func:`~detectors.seat_handoff.history.switch_history`), ``q_value``
        (Benjamini-Hochberg over the rows) and ``score``."""
        return self.scores_.clone()

    def _candidate_scores(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The rows of :meth:`score` (sets ``cand_``, ``field_``, ``null_``, ``null_after_``, ``null_parts_``)."""
        if self.has_sessions_:
            cand = self._session_candidates(con)
        else:
            cand = self._scan_candidates(con)
        self.cand_ = cand
        out_schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64,
                      "p_value": pl.Float64}
        self.null_ = np.zeros(0)
        if cand.height == 0:
            return pl.DataFrame(schema=out_schema)
        # the account-events the population's simulated same-player moves are placed in (their
        # data come with the candidates', one pass over the tables)
        null_ev = (self._null_events(con, cand.select("account", "tournament_id"))
                   if self.has_sessions_ and self.calibrate else pl.DataFrame(schema={"account": pl.Utf8, "tournament_id": pl.Utf8}))
        at = pl.concat([cand.select("account", "tournament_id"), null_ev], how="vertical_relaxed").unique()
        # (the hands and times by event of the candidate events with the hands a comparison needs: event_hands)
        sizes = testable_events(con, cand, null_ev, self.min_before, self.min_segment)
        hands, by_at, dec_at, _, hist_by_acc, hdec_by_acc, field, hist_dec, null_hist = self._read_frames(
            con, cand.join(sizes, on=["account", "tournament_id"], how="semi"), null_ev, at, sizes)

        plans = self._split_plans(cand, by_at)
        if not plans:
            return pl.DataFrame(schema=out_schema)
        # the speed at a switch against this population's switches where there are enough of them to say
        # what a device does to a speed; otherwise against the band of the literature (``device_band``)
        self.use_switch_null_ = bool(self.has_sessions_ and self.switch_speed and len(plans) >= self.min_switch_shifts)
        rows = self._compare_and_test(plans, dec_at, hist_by_acc, hdec_by_acc)
        if self.has_sessions_:
            rows = self._one_seat_per_login(rows)
        rows = self._pool(rows)
        if self.stage_baseline and self.has_sessions_:
            # the benign explanation of stage: the account's own play at the same hand of its events without a switch
            self._stage_baseline(rows, hist_by_acc, cand.select("account", "tournament_id"))
        df = self._combined_rows(rows, plans, null_ev, hands, null_hist, field, hist_dec)
        df = self._with_identity(df, cand)
        df = self._with_places(con, df, cand)
        df = self._with_slow_handover(con, df, cand)
        # the benign explanation: the account's own switches, each event a hypothesis of its family
        df = switch_history(con, cand, df.rename({"p_value": "p_event"}))
        # ranked as flagged: by the p-value the q-value comes from, the tests' own p breaking ties
        df = df.with_columns(score=-pl.col("p_value").clip(1e-300, 1.0).log10()
                             - 1e-3 * pl.col("p_value_raw").clip(1e-300, 1.0).log10())
        return df.select("cand", pl.exclude("cand"))

    def _split_plans(self, cand: pl.DataFrame, by_at: dict) -> list[tuple]:
        """The change points to compare: per candidate (account, event) with enough hands, the login's hand (or, hands
        only, the strongest split of the counts), as ``(stat, candidate, key, hands, k, counts, n_splits)``; hands only,
        the ``max_scan`` strongest."""
        plans = []
        for c in cand.iter_rows(named=True):
            key = (c["account"], c["tournament_id"])
            h = by_at.get(key)
            # a login change point needs min_before hands before it and min_segment after it;
            # a scanned split min_segment on each side
            if h is None or h.height < (self.min_before if self.has_sessions_ else self.min_segment) + self.min_segment:
                continue
            t = h["started_at"].to_numpy()
            counts = h.select([f"n_{a}" for a in ACTS]).to_numpy().astype(float)
            if self.has_sessions_:
                k = int(np.searchsorted(t, np.datetime64(c["login_at"], "us"), side="left"))
                n_splits, stat = 1, 0.0
            else:
                k, n_splits, stat = self._best_split(counts)
            if k < (self.min_before if self.has_sessions_ else self.min_segment) or h.height - k < self.min_segment:
                continue
            plans.append((stat, c, key, h, k, counts, n_splits))
        if not self.has_sessions_:
            # hands only: the full comparison for the strongest splits only
            plans = sorted(plans, key=lambda x: -x[0])[: self.max_scan]
        return plans

    def _with_identity(self, df: pl.DataFrame, cand: pl.DataFrame) -> pl.DataFrame:
        """``df`` with the identity side of each login (:func:`~detectors.seat_handoff.identity.identity_p`: its
        device ranked among the population's switch devices) and, with ``identity``, ``p_value`` the play's
        (kept as ``p_play``) and the identity's combined by Fisher's method."""
        df = df.with_columns(p_play=pl.col("p_value"))
        if not self.has_sessions_ or "device" not in df.columns:
            return df
        ids = identity_p(cand, self.household_max)
        df = df.join(ids, on=["account", "device"], how="left")
        if not self.identity:
            return df
        if ids.height < self.min_switch_shifts:
            # a rank among a handful of switches resolves nothing (p no smaller than 1 / N): not made
            self.missing_.append(f"the identity of the device that took the seat (only {ids.height} switch devices "
                                 f"to rank it among, fewer than {self.min_switch_shifts})")
            return df
        # a login on the device that held the seat (another network only) has no device to rank: untested
        p_id = df["p_identity"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        p = mt.fisher_combine(np.column_stack([df["p_play"].cast(pl.Float64).to_numpy(), p_id]), untested=1.0)
        return df.with_columns(p_value=pl.Series(p))

    def _with_places(self, con: duckdb.DuckDBPyConnection, df: pl.DataFrame, cand: pl.DataFrame) -> pl.DataFrame:
        """``df`` with ``p_two_places`` (the repeated two-places statistic of :mod:`detectors.seat_handoff.places`:
        the device's days with the structure among those it took the seat from the account's own home, ``places_shown``
        of ``places_days``; NaN where not tested) and, where tested, ``p_value`` combined with it by their product's
        exact law: with the structure the play's p, without it the play's and the identity's (Fisher, as for a row
        not tested) (sets ``places_null_``: the population's re-logins on one device that left the account's own home,
        and those that arrived on another home-sized network, ``(k, n)``; ``places_owner_``: the owner devices'
        device-days that took a seat from the account's own home, and those on another home-sized network,
        ``(k_o, n_o)``; ``places_owner_p_``: their binomial tail at the re-logins' rate)."""
        sessions = self.has_sessions_ and "device" in df.columns
        self.places_null_ = kept_device_homes(con, self.handover_s, self.household_max) if sessions else (0, 0)
        self.places_owner_ = owner_switch_homes(cand, self.household_max) if sessions else (0, 0)
        k, n = self.places_null_
        r = (k + 1) / (n + 1)
        self.places_owner_p_ = owner_places_p(*self.places_owner_, r)
        if not (self.two_places and sessions and r <= self.fdr):
            return df.with_columns(p_two_places=pl.lit(float("nan")), places_days=pl.lit(None, pl.Int64),
                                   places_shown=pl.lit(None, pl.Int64))
        eligible = ~np.isnan(two_places_p(df, k, n, self.household_max))
        df = (df.drop("places_days", "places_shown", strict=False).with_row_index("_order")
              .join(device_repeats(cand, self.household_max), on=["account", "device"], how="left")
              .sort("_order").drop("_order")
              .with_columns(
                  places_days=pl.when(pl.Series(eligible)).then(pl.max_horizontal(pl.col("places_days").fill_null(1), 1)),
                  places_shown=pl.when(pl.Series(eligible)).then(pl.col("places_shown").fill_null(0))))
        if self.places_owner_p_ <= self.fdr:
            # this population's owners keep second places (their own devices arrive on another home more often
            # than the re-logins allow): a device's repeats are no evidence beyond one, each row counts its
            # structure once
            df = df.with_columns(pl.col("places_days").clip(upper_bound=1), pl.col("places_shown").clip(upper_bound=1))
        shown = df["places_shown"].fill_null(0).to_numpy() > 0
        # with the structure the play's p alone (the identity's signs are the structure's); without it the play's
        # and the identity's, as before, at the price of the law
        u = np.where(shown, df["p_play"].cast(pl.Float64).to_numpy(), df["p_value"].cast(pl.Float64).to_numpy())
        t, p = repeated_product_p(u, df["places_shown"].to_numpy(), df["places_days"].to_numpy(), r)
        return df.with_columns(p_two_places=pl.Series(t), p_value=pl.Series(p))

    def _combined_rows(self, rows: list[dict[str, Any]], plans: list, null_ev: pl.DataFrame, hands: pl.DataFrame,
                       null_hist: tuple, field: pl.DataFrame, hist_dec: pl.DataFrame | None) -> pl.DataFrame:
        """The tested candidates as score rows: style and timing combined (Fisher), Bonferroni over scanned splits,
        calibrated against the population's simulated moves (sets ``null_``, ``null_after_``), the score, the
        strongest change point per account-event, and BH's ``q_value``."""
        df = pl.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
        p_style = mt.fisher_combine(np.column_stack([df["p_mix_any"].to_numpy(), df["p_size"].to_numpy()]
                                                     + ([df["p_range"].to_numpy()] if self.use_range else [])), untested=1.0)
        # the style as the event's field sees it (no own-history look): what a login from a
        # device the account already used must clear on its own
        p_style_field = mt.fisher_combine(np.column_stack([df["p_mix"].to_numpy(), df["p_size"].to_numpy()]), untested=1.0)
        p_time = df["p_time"].to_numpy().astype(float)
        p_all = mt.fisher_combine(np.column_stack([p_style, p_time]), untested=1.0)
        # scanned split points: Bonferroni over the splits tried
        p_all = np.minimum(1.0, p_all * df["n_splits"].to_numpy())
        p_raw = p_all
        self.null_ = np.zeros(0)
        if self.has_sessions_ and self.calibrate:
            # the tests' p-values are not uniform for a player who carries on (speed and game
            # drift between sessions and stages): each candidate's combined p is ranked against
            # the population's own simulated same-player device moves (Monte Carlo p-value)
            self.null_, self.null_after_ = self._population_null(
                null_ev, np.array([pl_[4] for pl_ in plans], dtype=np.int64), hands, null_hist, field, hist_dec)
            if self.null_.size:
                # the tests' effective sample size (actions after the point against the account's own
                # history, pooled over a device's events): a drift that is no other person grows
                # more significant with more data, so a candidate is ranked among simulated moves
                # with about as much
                after = _eff_n(df["n_act_after"].to_numpy(), df["n_act_hist"].to_numpy())
                # never below the tests' own p: where the tests are conservative for this
                # population (p-values above uniform) the rank alone would make them laxer; the
                # larger of two p-values is valid when either one is
                p_all = np.maximum(p_raw, self._matched_rank(p_raw, after))
            else:
                self.missing_.append("a simulated null (too few account-events without a mid-event login): "
                                     "the tests' own p-values rank the candidates uncalibrated, and none is flagged")
        # the speed at the switch against the speed changes of this population's switches (the
        # simulated moves stay on one device: they cannot say what a device does to a speed)
        p_shift, self.shift_null_ = np.full(df.height, np.nan), (float("nan"), float("nan"))
        p_moves = p_all
        # a login that kept the device: no device to rescale the times, its speed shift is ranked among
        # the simulated same-player moves' (on one machine); a device changed, among the population's
        # switches of device (the other accounts')
        kept = self._kept_device(df)
        if self.use_switch_null_:
            acc = df["account"].to_numpy()
            ev_shift = np.where(kept, np.nan, df["time_shift_event"].to_numpy().astype(float))
            p_shift, *self.shift_null_ = _switch_shift_p(df["time_shift"].to_numpy(), ev_shift,
                                                         self.min_switch_shifts, owner=acc, owner_event=acc)
            self.shift_null_n_ = int(np.isfinite(ev_shift).sum())
            if self.null_.size and kept.any():
                after = _eff_n(df["n_act_after"].to_numpy(), df["n_act_hist"].to_numpy())
                p_shift = np.where(kept, self._kept_device_shift_p(df["time_shift"].to_numpy(), after), p_shift)
            else:
                p_shift = np.where(kept, np.nan, p_shift)
            relog_p, relog = self._relogin_shift_p(df)  # a re-login: among the population's re-logins
            p_shift = np.where(relog & np.isfinite(relog_p), relog_p, p_shift)
            p_all = mt.fisher_combine(np.column_stack([p_all, p_shift]), untested=1.0)
        novelty = (df["new_device"].cast(pl.Int8).to_numpy() + df["new_net"].cast(pl.Int8).to_numpy())
        df = df.with_columns(
            p_style=pl.Series(p_style),
            p_shift=pl.Series(p_shift),
            p_moves=pl.Series(p_moves),
            p_style_field=pl.Series(p_style_field),
            p_value=pl.Series(p_all),
            p_value_raw=pl.Series(p_raw),
            n_null=pl.lit(int(min(self.null_.size, self.null_match))),
            novelty=pl.Series(novelty),
        ).with_columns(
            # ranked by the tests' own p (finer than the calibrated one's 1 / (1 + N) steps)
            score=(-pl.col("p_value_raw").clip(1e-300, 1).log10() + 2.0 * pl.col("novelty")),
            accounts=pl.concat_list("account"),
            tournaments=pl.concat_list("tournament_id"),
        )
        # one row per account-tournament: its strongest change point
        df = df.sort("score", descending=True).unique(["account", "tournament_id"], keep="first", maintain_order=True)
        return df.with_row_index("cand").with_columns(pl.col("cand").cast(pl.Int64))

    def _kept_device(self, df: pl.DataFrame) -> np.ndarray:
        """Whether each row's login kept the device that held the seat (another network only): a known
        device that did not change."""
        if not self.has_sessions_ or "device" not in df.columns:
            return np.zeros(df.height, bool)
        return (df["device"].is_not_null() & ~df["device_changed"].fill_null(True)).to_numpy()

    def _compare(self, c, h: pl.DataFrame, k: int, counts: np.ndarray, dec: pl.DataFrame | None,
                 hist: pl.DataFrame | None, hdec: pl.DataFrame | None) -> dict[str, Any]:
        cp_hand = h["hand_id"][k]
        cp_time = h["started_at"][k]
        before, after = counts[:k].sum(axis=0), counts[k:].sum(axis=0)
        field_b, field_a = self._field_counts(c["tournament_id"], c["account"], cp_time)
        sizes = h["sizes"].to_list()
        sb = np.array([x for s in sizes[:k] for x in (s or []) if x is not None], dtype=float)
        sa = np.array([x for s in sizes[k:] for x in (s or []) if x is not None], dtype=float)
        vpip = h["vpip"].to_numpy()
        ks_d = float("nan")
        med_b = med_a = float("nan")
        n_db = n_da = 0
        xb = xa = np.array([], dtype=float)
        if dec is not None and dec.height:
            after_mask = dec["started_at"].to_numpy() >= np.datetime64(cp_time, "us")
            lm = dec["log_ms"].to_numpy()
            xb, xa = lm[~after_mask], lm[after_mask]
            n_db, n_da = len(xb), len(xa)
            if n_db and n_da:
                ks_d = float(sps.ks_2samp(xb, xa).statistic)
                med_b, med_a = float(np.exp(np.median(xb))), float(np.exp(np.median(xa)))
        # after-segment against the account's tournament hands under its other devices (before the point included);
        # a login that kept the device (another network only) against all the account's other play, as the
        # population's simulated same-player moves are compared
        base_dev = c.get("device") if c.get("device_changed") is not False else None
        # the range of starting hands entered / folded: after the change point against the same history
        st_h, rc_h = h["rstr"].to_numpy().astype(np.int64), h["rcls"].to_numpy().astype(np.int64)
        ra, cra = st_h[k:][rc_h[k:] >= 0], rc_h[k:][rc_h[k:] >= 0]
        codes = self.codes_
        hc, rb, _ = hist_base(hist, codes.of(codes.tournament, c["tournament_id"]), cp_time, codes.of(codes.device, base_dev))
        # the timing baseline is tested in the same pass (_compare_and_test) and dropped there; the range baseline is
        # made again where tested (frames.range_baseline): the row keeps their sizes
        base = (hist, hdec, c["tournament_id"], cp_time, base_dev, codes.of(codes.tournament, c["tournament_id"]),
                codes.of(codes.device, base_dev))
        ta, cta, tb, ctb, n_hist = _own_timing(hdec, base[5], cp_time, base[6])
        return {
            "account": c["account"], "tournament_id": c["tournament_id"],
            "cp_hand": cp_hand, "cp_time": cp_time, "k": k, "n_hands": h.height,
            "hands_after": h["hand_id"].to_list()[k:k + 25],
            "session": c.get("session"), "device": c.get("device"), "ip": c.get("ip"),
            "prev_device": c.get("prev_device"),
            "device_changed": bool(c.get("device_changed") or False), "net_changed": bool(c.get("net_changed") or False),
            "new_device": bool(c.get("new_device") or False), "new_net": bool(c.get("new_net") or False),
            "others_open": int(c.get("others_open") or 0), "since_logout": c.get("since_logout"),
            "device_sessions": int(c.get("device_sessions") or 0),
            "dev_quick_takeovers": int(c.get("dev_quick_takeovers") or 0),
            "dev_takeover_new_net": bool(c.get("dev_takeover_new_net") or False),
            "dev_own_sessions": int(c.get("dev_own_sessions") or 0),
            "net": c.get("net"), "prev_net": c.get("prev_net"),
            "net_accounts": _nint(c.get("net_accounts")), "prev_net_accounts": _nint(c.get("prev_net_accounts")),
            "prev_net_days": int(c.get("prev_net_days") or 0),
            "ks_d": ks_d,
            "vpip_before": float(vpip[:k].mean()), "vpip_after": float(vpip[k:].mean()),
            "aggr_before": _aggr(before), "aggr_after": _aggr(after),
            "fold_before": _share(before, 0), "fold_after": _share(after, 0),
            "size_before": float(np.median(sb)) if sb.size else float("nan"),
            "size_after": float(np.median(sa)) if sa.size else float("nan"),
            "med_ms_before": med_b, "med_ms_after": med_a, "n_dec_before": n_db, "n_dec_after": n_da,
            "n_hist_dec": n_hist, "med_ms_hist": float(np.exp(np.median(tb))) if tb.size else float("nan"),
            "_cb": before, "_ca": after, "_fb": field_b, "_fa": field_a, "_sb": sb, "_sa": sa, "_xb": xb, "_xa": xa,
            "_ta": ta, "_cta": cta, "_hc": hc, "_ra": ra, "_cra": cra, "_base": base, "_ntb": tb.size, "_nrb": rb.size,
            "_tb": tb, "_ctb": ctb,
        }

    def _compare_and_test(self, plans: list[tuple], dec_at: dict, hist_by_acc: dict, hdec_by_acc: dict
                          ) -> list[dict[str, Any]]:
        """Every planned change point compared (:meth:`_compare`) and tested (:meth:`_test_rows`), ``TEST_ROWS``
        at a time: each row's tests are its own, and the timing baseline :meth:`_compare` made (the account's own
        decisions off the login's device, :func:`_own_timing`) is tested in the same pass and then dropped, so it
        is made once per change point and only ``TEST_ROWS`` rows' baselines are held at once.

        Parameters
        ----------
        plans : :meth:`_split_plans`' change points. dec_at : the decision times by (account, event). hist_by_acc,
            hdec_by_acc : the account's tournament hands and decision times, by account.

        Returns
        -------
        The rows, in the plans' order, their tests written into them."""
        rows: list[dict[str, Any]] = []
        for s in range(0, len(plans), TEST_ROWS):
            chunk = []
            for _, c, key, h, k, counts, n_splits in plans[s:s + TEST_ROWS]:
                r = self._compare(c, h, k, counts, dec_at.get(key), hist_by_acc.get(c["account"]),
                                  hdec_by_acc.get(c["account"]))
                r["n_splits"] = n_splits
                chunk.append(r)
            self._test_rows(chunk)
            rows.extend(chunk)
        return rows

    def _test_rows(self, rows: list[dict[str, Any]]) -> None:
        """The tests of some compared change points at once, written into them, by the array forms the
        population's null uses (one implementation): the action mix against the field's
        (G2 interaction), bet sizes and decision times before/after (Mann-Whitney), the
        after-segment's mix and timing against the account's own history (chi-square;
        Mann-Whitney by decision class, Fisher-combined); the before/after mix alone
        (chi-square) is reported. The timing baseline is the one :meth:`_compare` made (``_tb``, ``_ctb``, taken
        out of the row here); the range baseline is made for these rows only
        (:func:`~detectors.seat_handoff.frames.range_baseline`)."""
        tb, ctb = [r.pop("_tb") for r in rows], [r.pop("_ctb") for r in rows]
        g2, dof = _g2_interaction_vec(np.stack([np.array([[r["_cb"], r["_ca"]], [r["_fb"], r["_fa"]]]) for r in rows]))
        p_mix = _g2_p(g2, dof)
        p_size = _mwu_p_many([r["_sb"] for r in rows], [r["_sa"] for r in rows])
        p_time_in = _mwu_p_many([r["_xb"] for r in rows], [r["_xa"] for r in rows])
        hc = np.stack([r["_hc"] for r in rows])
        ca = np.stack([r["_ca"] for r in rows])
        p_hist_mix = np.where(hc.sum(axis=1) >= 20, _chi2_p_vec(hc, ca), np.nan)
        p_hist_time = _strat_mwu_many([r["_ta"] for r in rows], [r["_cta"] for r in rows], list(tb), list(ctb))
        p_mix_raw = _chi2_p_vec(np.stack([r["_cb"] for r in rows]), ca)
        p_range = (_range_p_many([r["_ra"] for r in rows], [r["_cra"] for r in rows],
                                 *map(list, zip(*[range_baseline(r) for r in rows])))
                   if self.use_range else np.full(len(rows), np.nan))
        # at a login (the after-segment played on another device or network, the baseline the
        # account's decisions under its other devices) the timing that counts is the device-
        # invariant test: a device rescales a person's times, another person reshapes them
        dev_t = _device_time_many([r["_ta"] for r in rows], [r["_cta"] for r in rows], list(tb), list(ctb),
                                  math.log(self.device_band), speed=not self.use_switch_null_)
        for i, r in enumerate(rows):
            login = r.get("session") is not None
            r.update({"p_time_plain": float(p_hist_time[i]) if not np.isnan(p_hist_time[i]) else float(p_time_in[i]),
                      "p_time_device": float(dev_t["p"][i]), "p_time_profile": float(dev_t["p_profile"][i]),
                      "p_time_spread": float(dev_t["p_spread"][i]), "p_time_speed": float(dev_t["p_speed"][i]),
                      "time_shift": float(dev_t["shift"][i]), "time_shift_event": float(dev_t["shift"][i])})
            r.update({"_g2": float(g2[i]), "_dof": int(dof[i]), "p_mix": float(p_mix[i]), "p_size": float(p_size[i]),
                      "p_time_in": float(p_time_in[i]),
                      # the timing test that counts: at a login the device-invariant one (NaN where the
                      # account has too little history under other devices: the event's own
                      # decisions before the login are on the device being left, the speed no
                      # evidence); hands only (no device known), the account's own history where it
                      # has one, else after against before in the event
                      "p_time": (float(dev_t["p"][i]) if login else
                                 float(p_hist_time[i]) if not np.isnan(p_hist_time[i]) else float(p_time_in[i])),
                      "p_hist_mix": float(p_hist_mix[i]), "p_hist_time": float(p_hist_time[i]),
                      "p_range": float(p_range[i]),
                      "p_mix_raw": float(p_mix_raw[i])})

    # ------------------------------------------------------------------ threshold
    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``flagged``, the one flag rule: the q-value at most ``fdr`` (the play's shift after
        the switch against the population's own same-player moves, given the account's own history of
        switches: :mod:`detectors.seat_handoff.history`), at a login from a changed device or network (with
        ``relogins`` also a re-login on the same ones) that follows one of the account's logouts within
        ``handover_s`` (a login hours later, the account's other tables still open, is its owner starting a new day elsewhere). Never without sessions, nor without
        the population's simulated moves to calibrate the p-values (then the candidates are ranked only).

        Parameters
        ----------
        scores : the frame of :meth:`score`.

        Returns
        -------
        ``scores`` with the boolean ``flagged``."""
        if scores.height == 0 or not self.has_sessions_ or not getattr(self, "null_", np.zeros(0)).size:
            # hands only: a player's own stack and table change their play as much as a new player
            # would; without logins or timing the scan ranks, never accuses. Without the population's
            # simulated moves the tests' own p-values are liberal (a player drifts between sessions and
            # stages): no false-discovery rate can be claimed for them, so they rank, never accuse
            return scores.with_columns(flagged=pl.lit(False))
        q = scores["q_value"].cast(pl.Float64).fill_nan(1.0).fill_null(1.0).to_numpy()
        changed = (scores["device_changed"] | scores["net_changed"]).fill_null(False).to_numpy() | self.relogins
        # without logout times every login counts as a hand-over
        since = scores["since_logout"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        handover = (since <= self.handover_s) | (np.isnan(since) & (not self.has_logouts_))
        return scores.with_columns(flagged=pl.Series(q <= self.fdr) & pl.Series(changed & handover))

