"""The CoordinatedSitoutDetector: fit, score, threshold."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from scipy import stats as sps

from detectors.base import GroupDetector
from detectors.coordinated_sitout import groups as grp
from detectors.coordinated_sitout.evidence import EvidenceMixin
from detectors.coordinated_sitout.null import _end_mark, _marked_poisson_sf, exact_product_sf, own_closeness
from detectors.coordinated_sitout.split import split_components
from detectors.coordinated_sitout.starts import _SPAN_SQL, _STARTS_SQL, consensus_clock
from detectors import stats as mt
from detectors.features import identity as idf
from detectors.features.window_views import window_span, window_tables


class CoordinatedSitoutDetector(EvidenceMixin, GroupDetector):
    """Pairs/groups of players who sit out together far more than chance allows."""

    kind = "coordinated_sitout"
    inputs = {"hands": ("hand_id", "tournament_id", "started_at", "table_name"),
              "seats": ("hand_id", "player", "sitting_out", "dealt_in"), "table_events": ("hand_id", "player", "event"),
              "sit_events": ("account", "ts", "kind", "table_name", "tournament_id"),
              "tournament_finishes": ("tournament_id", "player", "place", "prize", "hand_id"),
              "registrations": ("account", "ts", "kind", "tournament_id")}
    max_unflagged = 200  # unflagged pairs kept, ranked
    unflagged_inside_groups = True

    def __init__(
        self,
        *,
        alpha: float = 0.05,
        random_state: int = 0,
        tol_event_s: float = 15.0,
        res_event_s: float = 1.0,
        tol_hand_s: float = 60.0,
        res_hand_s: float = 5.0,
        max_perm_pairs: int = 300,
        merge_s: float = 180.0,
        wave_share: float = 0.4,
        wave_min: int = 6,
        min_cooccur: int = 2,
        n_perm: int = 999,
        clock_hands: int = 50,
        pause_s: float = 180.0,
        length_mark: bool = True,
        single_p: float = 0.01,
        single_alpha: float = 0.02,
        single_coentry_p: float = 0.05,
        taste_pseudo: float | None = idf.KNOCKOUT_PSEUDO,
        share_power: float = 3.0,
        share_count: str = "events",
        group_null: int = 100,
        group_bandwidth_s: float = 300.0,
        group_min_events: int = 2,
        own_closeness: bool = False,
        exact_events: bool = True,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)  # the false-discovery rate of the flag: q <= alpha
        self.tol_event_s = tol_event_s  # timing precision of a platform sit_out event
        self.res_event_s = res_event_s  # resolution of event times: closer gaps count as this
        self.tol_hand_s = tol_hand_s  # of a sit-out seen only in the hands (the next hand's start)
        self.res_hand_s = res_hand_s  # resolution of hand times (whole seconds, tables drift)
        self.max_perm_pairs = max_perm_pairs
        self.merge_s = merge_s
        self.wave_share = wave_share
        self.wave_min = wave_min
        self.min_cooccur = min_cooccur
        self.n_perm = n_perm
        self.clock_hands = clock_hands  # hands per block of the consensus clock
        self.pause_s = pause_s  # a table idle this long has been on a break
        self.length_mark = length_mark  # with events too: do coinciding sit-outs end together?
        self.single_p = single_p  # a lone coincidence must itself be this unusual to be corroborated
        self.single_alpha = single_alpha  # family-wise level (Bonferroni) of the corroborated lone coincidences
        self.single_coentry_p = single_coentry_p  # the co-entry must agree on its own below this p
        self.share_power = share_power  # BH weight ~ moments (or events) both sat out in, to this power (0: plain)
        self.share_count = share_count  # what the weight counts: "moments" both could sit out together, or "events"
        self.taste_pseudo = taste_pseudo  # the co-entry null's format taste (identity.co_entries; None: plain)
        self.group_null = group_null  # simulated populations of the group test's null (0: no group test)
        self.group_bandwidth_s = group_bandwidth_s  # the null's kernel: the event's sit-out rate at that moment
        self.group_min_events = group_min_events  # each member of a group met the others in this many events
        self.own_closeness = own_closeness  # closeness against the population's own coincidences (null.own_closeness)
        self.exact_events = exact_events  # shared events combined by the exact law (null.exact_product_sf), else Fisher

    # ------------------------------------------------------------------ fit
    def fit(self, con: duckdb.DuckDBPyConnection) -> "CoordinatedSitoutDetector":
        """Learn the population's sit-outs: each player's sit-out starts (platform events, or the hands on
        the event's consensus clock), the waves and breaks left out, and every pair's coincidence tests
        (computed here, as PyOD's ``decision_scores_``: :meth:`score` returns them).

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``starts_``, ``waves_``, ``kept_``, ``spans_``, ``finishes_``, ``co_`` (the co-occurring
        starts), ``per_event_``, ``family_`` (with ``family_pairs_``: each pair and the events both sat out in),
        ``n_single_``, ``scores_``, ``groups_`` (the group test, :meth:`_with_groups`), ``missing_`` and
        ``window_`` (the days judged, :func:`~detectors.features.window_views.window_span`: None for every day),
        each of the window's rows (:func:`~detectors.features.window_views.window_tables`)."""
        self.window_ = window_span(con)
        with window_tables(con, self.window_) as wcon:
            return self._learn(wcon)

    def _learn(self, con: duckdb.DuckDBPyConnection) -> "CoordinatedSitoutDetector":
        """:meth:`fit` on ``con``, the window's tables."""
        self.missing_ = []
        self.has_events_ = idf.table_rows(con, "sit_events") > 0
        if not self.has_events_:
            self.missing_.append("platform sit_out/sit_in events (sit-outs read from the hands only: timed to the hand "
                                 "on the event's consensus clock, with how many hands each lasted as a second mark)")
        if idf.table_rows(con, "tournament_finishes") == 0:
            self.missing_.append("bubble weighting (no tournament finishes)")
        con.register("_rb_clock", consensus_clock(con, block=self.clock_hands, pause_s=self.pause_s))
        try:
            starts = con.sql(_STARTS_SQL, params={"merge": self.merge_s, "tol": self.tol_event_s}).pl()
        finally:
            con.unregister("_rb_clock")
        spans = con.sql(_SPAN_SQL).pl()
        # field size over time: entrants minus finishers whose finishing hand came earlier
        fin = con.sql("""
          SELECT f.tournament_id, f.player AS account, f.place, f.prize, h.started_at AS out_at
          FROM tournament_finishes f LEFT JOIN hands h USING (hand_id)""").pl()
        self.starts_all_ = starts
        self.spans_ = spans
        self.finishes_ = fin
        # waves: starts shared by a large share of the players still in the event at the time
        # (a break late in an event takes most of the few players left, not a quarter of the entrants)
        starts = starts.join(spans.select("account", "tournament_id"), on=["account", "tournament_id"], how="inner")
        s = starts.with_columns(t=pl.col("ts").dt.epoch("ms") / 1000.0).sort("tournament_id", "t")
        s = s.with_columns(crowd=pl.Series(self._wave_counts(s), dtype=pl.Int64),
                           field=pl.Series(self._active_counts(s, spans), dtype=pl.Int64))
        self.starts_ = s
        is_wave = (pl.col("crowd") >= pl.max_horizontal(pl.lit(self.wave_min), pl.col("field") * self.wave_share)) | pl.col("at_break")
        self.waves_ = s.filter(is_wave)
        self.kept_ = s.filter(~is_wave)
        self.scores_ = self._with_groups(self._with_q(self._pair_scores(con)))
        return self

    def _group_inputs(self) -> tuple[pl.DataFrame, pl.DataFrame, np.ndarray, dict]:
        """The group test's inputs from the fitted starts: the kept starts (epoch seconds, tolerance, resolution,
        run length), the spans in epoch seconds, the population's run lengths and the pair test's options."""
        k = self.kept_
        x = k.select("account", "tournament_id", "t", "run_hands", "dur_s").with_columns(
            tol=pl.when(k["source"] == "event").then(pl.lit(self.tol_event_s)).otherwise(pl.lit(self.tol_hand_s)),
            res=pl.when(k["source"] == "event").then(pl.lit(self.res_event_s)).otherwise(pl.lit(self.res_hand_s)))
        sp = self.spans_.with_columns(t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        return x, sp, k["run_hands"].to_numpy(), {"has_events": self.has_events_, "length_mark": self.length_mark,
                                                  "durations": self._durations()}

    def _durations(self) -> np.ndarray:
        """The population's platform sit-out lengths in seconds (the kept starts with a ``sit_in``): the return
        mark's reference (:func:`detectors.coordinated_sitout.null._end_mark`)."""
        return self.kept_["dur_s"].drop_nulls().cast(pl.Float64).to_numpy()

    def group_null_check(self, n_obs: int = 100, seed: int = 123) -> dict[str, float]:
        """The group test's calibration on this population (after :meth:`fit`): ``n_obs`` simulated populations
        each taken as observed against ``group_null`` others (:func:`groups.null_flag_rate`); under the global null
        the share of them with a flag is the false-discovery rate, at most about ``alpha``."""
        x, sp, runs, kw = self._group_inputs()
        return grp.null_flag_rate(x, sp, runs, n_obs=n_obs, n_null=self.group_null, bandwidth_s=self.group_bandwidth_s,
                                  min_events=self.group_min_events, alpha=self.alpha,
                                  rng=np.random.default_rng(seed), **kw)

    def _with_groups(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with the group test (:mod:`detectors.coordinated_sitout.groups`): ``groups_`` holds every
        observed group (core of a maximal clique of the co-sit-out graph) with its statistic and permutation
        q-value (``q_group``); each pair row of a group gets the smallest ``q_group`` of the groups it is an edge
        of, the group's accounts (``group_accounts``), ``q_value`` = the smaller of its pair q and its group q
        (``q_pair`` keeps the former) and ``score`` = the larger of its own (kept in ``score_pair``) and the group's
        (the group's -log10 of the combined coincidence p, times the same bubble weight)."""
        schema = {"accounts": pl.List(pl.Utf8), "n_edges": pl.Int64, "n_events": pl.Int64, "stat": pl.Float64,
                  "q_group": pl.Float64}
        self.groups_ = pl.DataFrame(schema=schema)
        self.group_null_per_population_ = 0.0
        extra = {"q_pair": pl.col("q_value"), "score_pair": pl.col("score"), "q_group": pl.lit(None, pl.Float64),
                 "group_stat": pl.lit(None, pl.Float64),
                 "group_accounts": pl.lit(None, pl.List(pl.Utf8)), "group_events": pl.lit(None, pl.Int64)}
        if scores.height == 0 or self.group_null <= 0:
            return scores.with_columns(**extra)
        x, sp, runs, kw = self._group_inputs()
        lam = grp.pair_lambdas(x, sp)
        obs = grp.clique_stats(grp.pair_pvalues(x.with_columns(rep=pl.lit(0, pl.Int64)), lam, runs, **kw),
                               min_events=self.group_min_events)
        if obs.height == 0:
            return scores.with_columns(**extra)
        sim = grp.simulate_starts(x, sp, n_null=self.group_null, bandwidth_s=self.group_bandwidth_s,
                                  rng=np.random.default_rng(self.random_state))
        null = grp.clique_stats(grp.pair_pvalues(sim, lam, runs, **kw), min_events=self.group_min_events)
        q = grp.empirical_qvalues(obs["stat"].to_numpy(), null["stat"].to_numpy(), self.group_null)
        self.groups_ = (obs.drop("rep").with_columns(q_group=pl.Series(q), _key=pl.col("accounts").list.join("\x1f"))
                        .sort("q_group", "stat", "_key", descending=[False, True, False]).drop("_key"))
        self.group_null_per_population_ = null.height / self.group_null
        edges = (self.groups_.with_row_index("g").with_columns(a=pl.col("accounts")).explode("a")
                 .join(self.groups_.with_row_index("g").with_columns(b=pl.col("accounts")).explode("b").select("g", "b"),
                       on="g").filter(pl.col("a") < pl.col("b"))
                 .sort("q_group", "stat", "g", descending=[False, True, False])
                 .unique(["a", "b"], keep="first", maintain_order=True)
                 .select("a", "b", "q_group", group_stat=pl.col("stat"), group_accounts=pl.col("accounts"),
                         group_events=pl.col("n_events")))
        return scores.join(edges, on=["a", "b"], how="left").with_columns(
            q_pair=pl.col("q_value"), score_pair=pl.col("score"), q_value=pl.min_horizontal("q_value", "q_group"),
            score=pl.max_horizontal("score", pl.col("group_stat") * (1 + pl.col("bubble").fill_null(0.0))))

    def _active_counts(self, s: pl.DataFrame, spans: pl.DataFrame) -> np.ndarray:
        """Players of the event in play around each start (first hand before it, last hand after it)."""
        out = np.zeros(s.height, dtype=int)
        if s.height == 0:
            return out
        sp = spans.with_columns(t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        by_t = {k[0]: (np.sort(g["t0"].to_numpy()), np.sort(g["t1"].to_numpy()))
                for k, g in sp.partition_by(["tournament_id"], as_dict=True).items()}
        tid = s["tournament_id"].to_numpy()
        t = s["t"].to_numpy()
        bounds = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True])
        w = self.tol_hand_s
        for i0, i1 in zip(bounds[:-1], bounds[1:]):
            t0s, t1s = by_t.get(tid[i0], (np.array([]), np.array([])))
            tt = t[i0:i1]
            out[i0:i1] = np.searchsorted(t0s, tt + w, side="right") - np.searchsorted(t1s, tt - w, side="left")
        return out

    def _wave_counts(self, s: pl.DataFrame) -> np.ndarray:
        """Sit-out starts of the same event that fall together with each start: within the
        same window a coincidence of two starts has (the sum of their timing tolerances)."""
        out = np.zeros(s.height, dtype=int)
        if s.height == 0:
            return out
        tid = s["tournament_id"].to_numpy()
        t = s["t"].to_numpy()
        is_ev = (s["source"] == "event").to_numpy()
        tol = np.where(is_ev, self.tol_event_s, self.tol_hand_s)
        bounds = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1], True])
        for i0, i1 in zip(bounds[:-1], bounds[1:]):
            tt, ee, tl = t[i0:i1], is_ev[i0:i1], tol[i0:i1]
            n = np.zeros(i1 - i0, dtype=int)
            for sub, tol_j in ((np.sort(tt[ee]), self.tol_event_s), (np.sort(tt[~ee]), self.tol_hand_s)):
                w = tl + tol_j
                n += np.searchsorted(sub, tt + w, side="right") - np.searchsorted(sub, tt - w, side="left")
            out[i0:i1] = n  # starts (≈ players; one start per player per merge window), itself included
        return out

    # ------------------------------------------------------------------ score
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The candidate pairs' scores (computed by :meth:`fit`, as PyOD's ``decision_scores_``).

        Returns one row per pair of players with a co-occurring sit-out (``a``, ``b``, ``accounts``,
        ``tournaments``, ``score``, ``p_value``, ``q_value``: BH over every pair with a sit-out in a shared
        event, and the tests' figures)."""
        return self.scores_.clone()

    def _with_q(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``q_value`` and ``bh_weight``: weighted Benjamini-Hochberg over the family of every
        pair of players with a sit-out in a shared event (``family_``; the untested pairs count with p = 1).

        Each pair's weight is ``n ** share_power``, rescaled to mean 1 over the family (Genovese, Roeder &
        Wasserman, Biometrika 2006); ``n`` is, with ``share_count="moments"``, ``n_moments``: the moments at which
        both could have sat out together, per shared event the smaller of the two players' sit-outs there (outside
        waves and breaks), summed over the events both sat out in; with ``"events"``, ``n_shared``: those events.
        A pair that sat out twice each in one event has two such moments, as a pair that sat out once each in two
        events (a family built without ``n_moments`` weighs by events). The coincidence test is conditional on
        each player's sit-outs per event (only their timing is tested), so the weight, a count of opportunities
        fixed before the timing is looked at, is
        independent of the p-value under the null and the false-discovery rate stays controlled for any
        ``share_power``; a group that sits out in several events it shares gets the error budget it needs. The
        power is where the budget goes, not how large it is: pairs of independent players that both sat out in
        k shared events grow rare fast with k (a population's family is nearly all k = 1), so a power above 1
        moves the budget to the few pairs with repeated opportunities; the figures of powers 1-3 are in
        docs/measurements.md ("Coordinated sit-outs in world b")."""
        if scores.height == 0:
            return scores.with_columns(q_value=pl.lit(None, pl.Float64), bh_weight=pl.lit(None, pl.Float64))
        fam = self.family_pairs_
        count = "n_moments" if self.share_count == "moments" and "n_moments" in fam.columns else "n_shared"
        raw = fam[count].to_numpy().astype(float) ** self.share_power
        w = raw * len(raw) / raw.sum()
        fam = fam.with_columns(bh_weight=pl.Series(w))
        s = scores.join(fam.select("a", "b", *(["n_moments"] if "n_moments" in fam.columns else []), "n_shared",
                                   "bh_weight"), on=["a", "b"], how="left").with_columns(
            pl.col("bh_weight").fill_null(1.0))
        p = np.minimum(1.0, s["p_value"].to_numpy() / s["bh_weight"].to_numpy())
        rest = fam.join(s.select("a", "b"), on=["a", "b"], how="anti")["bh_weight"].to_numpy()
        p_rest = np.minimum(1.0, 1.0 / np.maximum(rest, 1e-12))
        q = mt.bh_qvalues(np.r_[p, p_rest], untested=1.0)[: len(p)]
        return s.with_columns(q_value=pl.Series(q))

    def _pair_scores(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64,
                  "p_value": pl.Float64}
        k = self.kept_
        self.family_ = 0
        self.family_pairs_ = pl.DataFrame(schema={"a": pl.Utf8, "b": pl.Utf8, "n_shared": pl.UInt32,
                                                  "n_moments": pl.UInt32})
        self.co_ = pl.DataFrame()
        self.n_single_ = 0
        if k.height == 0:
            return pl.DataFrame(schema=schema)
        x = k.select("account", "tournament_id", "t", "ts", "hand_id", "run_hands", "dur_s", "source").with_columns(
            tol=pl.when(k["source"] == "event").then(pl.lit(self.tol_event_s)).otherwise(pl.lit(self.tol_hand_s)),
            res=pl.when(k["source"] == "event").then(pl.lit(self.res_event_s)).otherwise(pl.lit(self.res_hand_s)),
        )
        # the family tested: every pair of players with a sit-out in a shared event
        # (each player's sit-outs per event: per shared event the smaller of the two is the moments both could meet)
        ka = x.group_by("account", "tournament_id").agg(n=pl.len().cast(pl.UInt32))
        self.family_pairs_ = (ka.join(ka, on="tournament_id", suffix="_b").filter(pl.col("account") < pl.col("account_b"))
                              .group_by(a="account", b="account_b")
                              .agg(n_shared=pl.len().cast(pl.UInt32), n_moments=pl.min_horizontal("n", "n_b").sum())
                              .sort("a", "b"))
        self.family_ = self.family_pairs_.height
        # co-occurring starts of two players in one event (a band join in DuckDB)
        con.register("_rb_starts", x)
        co = con.sql("""
          SELECT a.account AS a, b.account AS b, a.tournament_id, a.ts AS ts_a, b.ts AS ts_b,
                 a.t AS t_a, b.t AS t_b, coalesce(a.hand_id, b.hand_id) AS hand_id,
                 -- the coincidence's closeness: gap over its window, the gap floored at the sources' resolution
                 least(greatest(abs(b.t - a.t), greatest(a.res, b.res)) / (a.tol + b.tol), 1.0) AS u,
                 a.run_hands AS len_a, b.run_hands AS len_b, a.dur_s AS dur_a, b.dur_s AS dur_b,
                 abs(b.t - a.t) AS gap, a.tol + b.tol AS win, greatest(a.res, b.res) AS res,
                 -- the stratum of the population's own closeness null: one table or two, sources
                 (CASE WHEN coalesce(ha.table_name = hb.table_name, FALSE) THEN 3 ELSE 0 END)
                   + (a.source = 'event')::INTEGER + (b.source = 'event')::INTEGER AS stratum
          FROM _rb_starts a JOIN _rb_starts b
            ON a.tournament_id = b.tournament_id AND a.account < b.account
           AND abs(b.t - a.t) <= a.tol + b.tol
          LEFT JOIN hands ha ON ha.hand_id = a.hand_id
          LEFT JOIN hands hb ON hb.hand_id = b.hand_id
        """).pl()
        if self.own_closeness and co.height:
            co = co.with_columns(u=pl.Series(own_closeness(co["gap"].to_numpy(), co["res"].to_numpy(),
                                                           co["win"].to_numpy(), co["stratum"].to_numpy())))
        if co.height == 0:
            con.unregister("_rb_starts")
            return pl.DataFrame(schema=schema)
        cand = co.group_by("a", "b").agg(n_co=pl.len(), n_events=pl.col("tournament_id").n_unique()).sort("a", "b")
        per_event = self._per_event(con, cand)
        co, per_event, fish = self._marked_tests(co, per_event, x, k)
        pairs = cand.join(fish, on=["a", "b"], how="left")
        co = co.join(cand.select("a", "b"), on=["a", "b"], how="inner")
        co = self._bubble(co)
        # a seeded permutation test (co-occurrence counts) for the most suspicious pairs
        pairs = pairs.sort("p_gap", "a", "b")
        perm = self._permutation(x, pairs.head(self.max_perm_pairs).select("a", "b", "shared_events"))
        pairs = pairs.join(perm, on=["a", "b"], how="left")
        bub = co.group_by("a", "b").agg(
            bubble=pl.col("proximity").mean(),
            co_tournaments=pl.col("tournament_id").unique().sort(),
        )
        pairs = pairs.join(bub, on=["a", "b"], how="left").with_columns(
            p_value=pl.max_horizontal(pl.col("p_gap"), pl.lit(1e-300)),
        ).with_columns(
            score=(-pl.col("p_value").log10() * (1 + pl.col("bubble").fill_null(0.0))),
        )
        self.family_ = max(self.family_, pairs.height)
        pairs = self._corroborate(con, pairs)
        self.co_ = co
        self.per_event_ = per_event
        return pairs.with_columns(accounts=pl.concat_list("a", "b"), tournaments=pl.col("co_tournaments"))

    def _per_event(self, con: duckdb.DuckDBPyConnection, cand: pl.DataFrame) -> pl.DataFrame:
        """Per candidate pair and shared event (the starts registered as ``_rb_starts``): the closest gap, each
        player's starts, the span both were in, the closest-pair p (``p_event``) and the expected coincidences
        (``lam``) under each player's own rate."""
        # per candidate pair and shared event: the closest pair of starts (floored at the
        # timing resolution of the sources), each player's number of starts, the span both were in
        sp = self.spans_.with_columns(t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        con.register("_rb_cand", cand.select("a", "b"))
        con.register("_rb_spans", sp.select("account", "tournament_id", "t0", "t1"))
        per_event = con.sql("""
          WITH n AS (SELECT account, tournament_id, count(*) AS n, sum(tol) AS sum_tol FROM _rb_starts GROUP BY ALL)
          SELECT c.a, c.b, x.tournament_id,
                 min(greatest(abs(x.t - y.t), greatest(x.res, y.res))) AS gap,
                 any_value(na.n) AS n_a, any_value(nb.n) AS n_b,
                 any_value(na.sum_tol) AS sum_tol_a, any_value(nb.sum_tol) AS sum_tol_b,
                 greatest(least(any_value(sa.t1), any_value(sb.t1)) - greatest(any_value(sa.t0), any_value(sb.t0)),
                          60.0) AS overlap
          FROM _rb_cand c
          JOIN _rb_starts x ON x.account = c.a
          JOIN _rb_starts y ON y.account = c.b AND y.tournament_id = x.tournament_id
          JOIN n na ON na.account = c.a AND na.tournament_id = x.tournament_id
          JOIN n nb ON nb.account = c.b AND nb.tournament_id = x.tournament_id
          LEFT JOIN _rb_spans sa ON sa.account = c.a AND sa.tournament_id = x.tournament_id
          LEFT JOIN _rb_spans sb ON sb.account = c.b AND sb.tournament_id = x.tournament_id
          GROUP BY ALL
        """).pl()
        for v in ("_rb_starts", "_rb_cand", "_rb_spans"):
            con.unregister(v)
        # P(closest of n_a*n_b independent uniform pairs within gap) under each player's own rate (reported);
        # lam: the expected number of coincidences (start pairs within their window) in the event
        per_event = per_event.with_columns(
            p_event=(1 - (-(pl.col("n_a") * pl.col("n_b") * 2 * pl.col("gap") / pl.col("overlap"))).exp()).clip(1e-300, 1.0),
            lam=2 * (pl.col("n_b") * pl.col("sum_tol_a") + pl.col("n_a") * pl.col("sum_tol_b")) / pl.col("overlap"),
        )
        return per_event

    def _marked_tests(self, co: pl.DataFrame, per_event: pl.DataFrame, x: pl.DataFrame,
                      k: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """The marked Poisson test per event (closeness, and equal run lengths where every length is known) and
        Fisher's combination over the pair's shared events; returns the coincidences (with ``u_len``), the
        per-event frame and the per-pair combination (``p_gap``, ``p_time_only``, ``p_with_length``,
        ``p_closest``)."""
        # per event: every coincidence counts, by its closeness (marked Poisson test)
        # and a second mark: do the two runs last as many hands? (a group comes back
        # together; two players stepping away independently rarely sit out the same
        # number of hands). Without platform events (starts timed only to the hand) both
        # marks always count. With events the start times are precise to the second, and
        # a sit-out the hands do not show has no length (mark 1, no evidence, which a
        # two-mark null would count against the pair): the two-mark null is used in the
        # events where every start of both players has a known length (a property of the
        # starts, not of their timing: no choice after the fact, no Bonferroni), closeness
        # alone elsewhere (``length_mark``; off: closeness alone everywhere). Where both sit-outs are platform
        # sit_outs followed by a sit_in, the second mark is in seconds: do the two come back together
        # (``_end_mark``: the return mark against the population's platform sit-out lengths)? A sit_in makes
        # the length known even where the hands do not show the run.
        two = (not self.has_events_) or self.length_mark
        co = co.with_columns(u_len=pl.Series(_end_mark(
            co["len_a"].to_numpy(), co["len_b"].to_numpy(), k["run_hands"].to_numpy(),
            co["t_a"].to_numpy(), co["dur_a"].cast(pl.Float64).to_numpy(), co["t_b"].to_numpy(),
            co["dur_b"].cast(pl.Float64).to_numpy(), self._durations(), self.res_event_s))
            if two else pl.lit(1.0))
        marks = co.group_by("a", "b", "tournament_id").agg(
            x=pl.len(), s1=(-pl.col("u").log()).sum(), s=(-pl.col("u").log() - pl.col("u_len").log()).sum())
        per_event = per_event.join(marks, on=["a", "b", "tournament_id"], how="left").with_columns(
            pl.col("x").fill_null(0), pl.col("s").fill_null(0.0), pl.col("s1").fill_null(0.0))
        x_, lam_ = per_event["x"].to_numpy(), per_event["lam"].to_numpy()
        p1 = _marked_poisson_sf(x_, per_event["s1"].to_numpy(), lam_, marks=1)
        p2 = _marked_poisson_sf(x_, per_event["s"].to_numpy(), lam_, marks=2) if two else p1
        # every start of both players in the event has a known length (the hands show its run)
        known = x.group_by("account", "tournament_id").agg(
            known=((pl.col("run_hands") > 0) | pl.col("dur_s").is_not_null()).all())
        per_event = (per_event
                     .join(known.rename({"account": "a", "known": "known_a"}), on=["a", "tournament_id"], how="left")
                     .join(known.rename({"account": "b", "known": "known_b"}), on=["b", "tournament_id"], how="left"))
        both_known = (per_event["known_a"].fill_null(False) & per_event["known_b"].fill_null(False)).to_numpy()
        if not self.has_events_:
            p_use = p2
        elif two:
            p_use = np.where(both_known, p2, p1)
        else:
            p_use = p1
        per_event = per_event.with_columns(p_marked=pl.Series(p_use), p_marked_len=pl.Series(p2),
                                           p_marked_time=pl.Series(p1), lengths_known=pl.Series(both_known))
        fish = per_event.group_by("a", "b").agg(
            stat=-2 * pl.col("p_marked").log().sum(), dof=2 * pl.len(),
            stat_len=-2 * pl.col("p_marked_len").log().sum(),
            stat_time=-2 * pl.col("p_marked_time").log().sum(),
            n_len_events=pl.col("lengths_known").sum(),
            stat_closest=-2 * pl.col("p_event").log().sum(),
            shared_events=pl.col("tournament_id").sort(),
            n_starts_a=pl.col("n_a").sum(), n_starts_b=pl.col("n_b").sum(),
            min_gap=pl.col("gap").min(),
            lam=pl.col("lam").sum(),
            lams=pl.col("lam"), p_es=pl.col("p_marked"), p_len_es=pl.col("p_marked_len"),
            p_time_es=pl.col("p_marked_time"),
        )
        fish = self._combine(fish)
        return co, per_event, fish

    def _combine(self, fish: pl.DataFrame) -> pl.DataFrame:
        """Each pair's shared events combined: ``p_gap`` (the test: per event two marks where every length is known,
        closeness alone elsewhere), ``p_time_only`` (closeness alone) and ``p_with_length`` (both marks everywhere),
        by the exact law of the per-event p-values (:func:`~detectors.coordinated_sitout.null.exact_product_sf`: an
        event without a coincidence costs the pair nothing) or, with ``exact_events`` off, Fisher's method, which
        counts it as a uniform p-value of 1 and is kept beside as ``p_fisher``; ``p_closest`` by Fisher's method."""
        lam = [-np.expm1(-np.array(la)) for la in fish["lams"].to_list()]

        def comb(col: str, stat: str) -> np.ndarray:
            if not self.exact_events:
                return sps.chi2.sf(fish[stat].to_numpy(), fish["dof"].to_numpy())
            return np.array([exact_product_sf(np.array(pe), c) for pe, c in zip(fish[col].to_list(), lam)])

        return fish.with_columns(
            p_gap=pl.Series(comb("p_es", "stat")), p_fisher=pl.Series(sps.chi2.sf(fish["stat"].to_numpy(),
                                                                                   fish["dof"].to_numpy())),
            p_time_only=pl.Series(comb("p_time_es", "stat_time")), p_with_length=pl.Series(comb("p_len_es", "stat_len")),
            p_closest=pl.Series(sps.chi2.sf(fish["stat_closest"].to_numpy(), fish["dof"].to_numpy())),
        ).drop("lams", "p_es", "p_len_es", "p_time_es")

    def _corroborate(self, con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame) -> pl.DataFrame:
        """Pairs seen sitting out together once: the co-entry p (configuration-model null,
        :func:`detectors.features.identity.co_entries`) of those whose coincidence is itself unusual
        (p <= ``single_p``), and ``p_single``, the coincidence's own p where the pair co-entered. The co-entry only
        selects: honest friends and housemates co-enter too (the configuration model has none), so it is no evidence
        of a sit-out arranged; the family is every pair that could have sat out together (a sit-out of each in a
        shared event, ``family_pairs_``) and co-entered at p <= ``single_coentry_p``: ``n_single_`` of them, over
        which the flag's Bonferroni runs (the timing alone is the test, within the population's own co-entering
        pairs)."""
        self.n_single_ = 0
        test = pairs.filter((pl.col("n_co") == 1) & (pl.col("p_gap") <= self.single_p)).select("a", "b")
        if test.height == 0:
            return pairs.with_columns(n_shared_t=pl.lit(None, pl.Int64), p_coentry=pl.lit(None, pl.Float64),
                                      p_single=pl.lit(None, pl.Float64))
        fam = pl.concat([self.family_pairs_.select("a", "b"), test]).unique()
        every = idf.co_entries(con, fam, taste_pseudo=self.taste_pseudo).select("a", "b", "n_shared_t", "p_coentry")
        self.n_single_ = int((every["p_coentry"].fill_null(1.0) <= self.single_coentry_p).sum())
        pairs = pairs.join(test.join(every, on=["a", "b"]), on=["a", "b"], how="left")
        # a pair without a co-entry p (not tested) has no corroboration
        return pairs.with_columns(p_single=pl.when(pl.col("p_coentry").is_not_nan()).then(pl.col("p_gap")))

    def _permutation(self, x: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
        """Seeded permutation test: each player's sit-out starts re-drawn uniformly
        within the span they were in the event; statistic = co-occurrences."""
        rng = np.random.default_rng(self.random_state)
        need = set(pairs["a"].to_list()) | set(pairs["b"].to_list())
        xs = x.filter(pl.col("account").is_in(list(need))).sort("account", "tournament_id", "t")
        parts = xs.partition_by(["account", "tournament_id"], as_dict=True)
        starts = {key: g["t"].to_numpy() for key, g in parts.items()}
        tols = {key: g["tol"].to_numpy() for key, g in parts.items()}
        sp = self.spans_.filter(pl.col("account").is_in(list(need))).with_columns(
            t0=pl.col("t0").dt.epoch("ms") / 1000.0, t1=pl.col("t1").dt.epoch("ms") / 1000.0)
        span = {(r[0], r[1]): (r[2], r[3]) for r in sp.select("account", "tournament_id", "t0", "t1").iter_rows()}
        rows = []
        for r in pairs.iter_rows(named=True):
            a, b = r["a"], r["b"]
            null = np.zeros(self.n_perm)
            obs = 0
            for tid in r["shared_events"] or []:
                ta, tb = starts[(a, tid)], starts[(b, tid)]
                win = tols[(a, tid)][:, None] + tols[(b, tid)][None, :]
                obs += int((np.abs(ta[:, None] - tb[None, :]) <= win).sum())
                a0, a1 = span.get((a, tid), (ta.min(), ta.max()))
                b0, b1 = span.get((b, tid), (tb.min(), tb.max()))
                ra = rng.uniform(a0, max(a1, a0 + 1), size=(self.n_perm, ta.size))
                rb = rng.uniform(b0, max(b1, b0 + 1), size=(self.n_perm, tb.size))
                null += (np.abs(ra[:, :, None] - rb[:, None, :]) <= win[None]).sum(axis=(1, 2))
            rows.append({"a": a, "b": b, "n_co_obs": obs, "expected": float(null.mean()),
                         "p_perm": (1 + int((null >= obs).sum())) / (self.n_perm + 1)})
        return pl.DataFrame(rows, schema={"a": pl.Utf8, "b": pl.Utf8, "n_co_obs": pl.Int64, "expected": pl.Float64,
                                          "p_perm": pl.Float64})

    def _bubble(self, co: pl.DataFrame) -> pl.DataFrame:
        """Proximity to the money at each co-occurrence: paid places over players remaining."""
        fin = self.finishes_
        if fin.height == 0:
            return co.with_columns(remaining=pl.lit(None, pl.Int64), paid=pl.lit(None, pl.Int64), proximity=pl.lit(0.0))
        paid = fin.group_by("tournament_id").agg(paid=pl.col("prize").is_not_null().sum().cast(pl.Int64),
                                                 entrants=pl.len())
        fx = fin.filter(pl.col("out_at").is_not_null()).select("tournament_id", "out_at").sort("tournament_id", "out_at")
        co = co.with_columns(t_co=pl.min_horizontal("ts_a", "ts_b")).join(paid, on="tournament_id", how="left")
        # finished before t: count via a join-asof-like aggregation in polars
        gone = (co.select("a", "b", "tournament_id", "t_co").unique()
                .join(fx, on="tournament_id", how="left")
                .group_by("a", "b", "tournament_id", "t_co")
                .agg(gone=(pl.col("out_at") < pl.col("t_co")).sum()))
        co = co.join(gone, on=["a", "b", "tournament_id", "t_co"], how="left").with_columns(
            remaining=(pl.col("entrants").cast(pl.Int64) - pl.col("gone").fill_null(0).cast(pl.Int64)),
        ).with_columns(
            proximity=pl.when(pl.col("remaining") > pl.col("paid"))
            .then((pl.col("paid") / pl.col("remaining")).clip(0, 1))
            .otherwise(0.0).fill_null(0.0),
        )
        return co

    # ------------------------------------------------------------------ threshold
    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``pair_flagged``: q <= ``alpha`` (weighted BH, :meth:`_with_q`) once the benign explanation
        of a lone coincidence was tested: with fewer than ``min_cooccur`` coincidences (one sit-out together is what
        chance, a shared disconnect or two friends leaving at once leave behind) the pair is flagged only when a
        second, independent behaviour agrees: p_gap <= ``single_p``, co-entry p <= ``single_coentry_p``, and their
        combined p, Bonferroni over every single-coincidence pair, at most ``single_alpha``. Every pair of a group
        whose group test (:meth:`_with_groups`) has ``q_group`` <= ``alpha`` is flagged as well: a group each of
        whose members sat out with the others in ``group_min_events`` events, beyond the population's simulated
        sit-outs at those moments. Each component of the flagged pairs is then split into the groups that sat out
        together (:func:`detectors.coordinated_sitout.split.split_components`; an account stays in one only with
        evidence of its own there): a pair across two of them is unflagged, keeps its own q and score (``q_pair``,
        ``score_pair``), and ``component`` names the size of the component split."""
        q_pair = scores["q_pair"] if "q_pair" in scores.columns else scores["q_value"]
        flag = (q_pair.fill_null(1.0).to_numpy() <= self.alpha) & (scores["n_co"].to_numpy() >= self.min_cooccur)
        if "p_single" in scores.columns:
            ps = scores["p_single"].fill_null(np.nan).to_numpy().astype(float)
            pc = scores["p_coentry"].fill_null(np.nan).to_numpy().astype(float)
            lone = ((scores["n_co"].to_numpy() == 1) & (scores["p_gap"].to_numpy() <= self.single_p)
                    & (np.nan_to_num(pc, nan=1.0) <= self.single_coentry_p)
                    & (np.nan_to_num(ps, nan=1.0) * max(self.n_single_, 1) <= self.single_alpha))
            flag |= lone
        own = flag.copy()
        if "q_group" in scores.columns:
            flag |= scores["q_group"].fill_null(1.0).to_numpy() <= self.alpha
        s = scores.with_columns(pair_flagged=pl.Series(flag))
        if "q_pair" not in s.columns:
            s = s.with_columns(q_pair=pl.col("q_value"))
        if "score_pair" not in s.columns:
            s = s.with_columns(score_pair=pl.col("score"))
        return split_components(s, own=own, min_events=self.group_min_events, seed=self.random_state)
