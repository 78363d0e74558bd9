"""Multi-accounting: one person behind several accounts.

Method
------
1. **Identity graph.** Accounts are linked through shared identifiers (device
   fingerprints, exact IPs, /24 or /64 networks, payment hashes), each weighted
   by its rarity, ``log(N / accounts sharing it)`` (an IDF weight, Sparck Jones
   1972), and by time (:func:`detectors.features.identity.identity_links`);
   identifiers shared by a crowd are dropped. Without sessions candidates are
   also pairs that keep entering the same events far beyond the
   configuration model. Pairs that share nothing are candidates when behaviour
   alone (style, decision times, hours online together, hands at one table,
   accounts opened close together in one country, each ranked among all the
   population's pairs) is beyond what that many pairs of strangers give by
   chance: Benjamini-Hochberg over every pair (:func:`idf.behaviour_pairs`).
2. **Evidence per linked pair**, each as a p-value: a shared device or card
   (``n_sharing / N``), the style fingerprint and the decision-time
   distribution (each ranked among random pairs of the same population), and
   co-entry into tournaments (a configuration-model null per format and day).
   Patterns of use (online at once, hand-overs) are reported as evidence.
3. **Decision.** Fisher's method combines the p-values; weighted
   Benjamini–Hochberg (Genovese, Roeder & Wasserman, Biometrika 2006: the
   identity link is the prior weight) controls the false-discovery rate. A
   pair is flagged (:meth:`MultiAccountingDetector.flag`) when it survives,
   is strongly linked and at least ``min_signals`` of device / style /
   timing / co-entry agree on their own (p < ``signal_p``); a shared card or
   a device used by both at once counts beside a shared device. A pair found on
   behaviour alone also needs its q among all pairs at most alpha, and the
   signals that agree are then its play (style, timing, co-entry): friends who
   opened accounts together and keep the same hours play as two people. Households
   (a home address, own devices) need the behaviour alone significant across
   all household-shaped pairs of the population (Benjamini-Hochberg over that
   family: its line moves with the number of households); that behaviour is
   style, timing, co-entry, the hands both were dealt into (ranked among the
   household-shaped pairs themselves: housemates who play together are that
   family's null) and how close the accounts were opened. The
   case's rate (``q_value``) is the largest of these conditions on the
   false-discovery scale (an intersection-union rule, Berger 1982), so a
   pair is flagged exactly when it is at most alpha and the queue's order
   agrees with its line. Flagged pairs join into groups (connected components,
   :class:`detectors.base.GroupDetector`): one case per person.

The detector judges the feature store's window (``store_for(con).window_days``: every day by default, else the
last that many hand days): every table it reads holds only the window's rows
(:func:`detectors.features.window_views.window_tables`), so a night
over a long history reads the window, and a case names the window's first and last day.

This follows the record-linkage view of account matching (Fellegi & Sunter,
JASA 1969: independent agreement weights on several fields are summed) with
behavioural fields taken from player-fingerprinting work (e.g. Chen et al.,
NetGames 2008). The figures behind each rule are in docs/measurements.md
("Detector notes moved from docstrings").
"""

from __future__ import annotations

import math
from typing import Any

import duckdb
import numpy as np
import polars as pl

from detectors.base import Evidence, GroupDetector, Signal, is_missing, sql_literal as _lit
from detectors import stats as mt
from detectors.features import identity as idf
from detectors.features.window_views import window_span, window_tables


# the behaviour-only figures a pair found there carries (idf.behaviour_pairs)
SOLO_COLUMNS = ("q_solo", "p_solo", "p_hours", "p_opened", "p_country", "opened_days", "p_seated", "hands_together")


class MultiAccountingDetector(GroupDetector):
    """Groups of accounts run by one person (see the module docstring)."""

    kind = "multi_accounting"
    inputs = {"hands": ("hand_id", "tournament_id", "started_at"), "seats": ("hand_id", "player", "dealt_in"),
              "actions": ("hand_id", "street", "player", "action"), "accounts": ("account", "payment"),
              "sessions": ("account", "ip", "device", "login_at", "logout_at"), "decisions": ("account", "ms"),
              "registrations": ("account", "ts", "kind", "tournament_id")}

    def __init__(
        self,
        *,
        alpha: float = 0.05,
        random_state: int = 0,
        max_share: int = 50,
        max_link_share: int = 10,
        signal_p: float = 0.1,
        min_signals: int = 2,
        min_hands: int = 30,
        coentry_p: float = 1e-3,
        device_weight: float = 4.0,
        card_weight: float = 2.0,
        max_unflagged: int = 50,
        co_device_s: float = 300.0,
        solo_max_pairs: int = 3_000_000,
    ) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.max_share = max_share
        self.max_link_share = max_link_share  # a candidate shares an identifier with at most this many accounts
        self.signal_p = signal_p  # a behavioural family "agrees" below this p
        self.min_signals = min_signals
        self.min_hands = min_hands
        self.coentry_p = coentry_p  # hands-only populations: co-entry needed to be a candidate
        self.device_weight = device_weight  # weighted-BH prior for pairs sharing a device
        self.card_weight = card_weight  # ... and a payment card
        self.max_unflagged = max_unflagged  # unflagged candidates kept (ranked) for the AP
        self.co_device_s = co_device_s  # seconds online at once on the shared device to count as co-use
        self.solo_max_pairs = solo_max_pairs  # pairs judged on behaviour alone: at most this many, else not run

    # ------------------------------------------------------------------ fit
    def fit(self, con: duckdb.DuckDBPyConnection) -> "MultiAccountingDetector":
        """Learn what the population offers: whether sessions, payment hashes and decision times exist,
        each account's style fingerprint, the number of accounts and tournaments (the IDF weights' base).

        Parameters
        ----------
        con : the warehouse (``inputs`` names the tables read).

        Returns
        -------
        self, with ``window_`` (the days judged, :func:`window_span`: None for every day), ``has_sessions_``,
        ``has_payment_``, ``has_decisions_``, ``fingerprints_``, ``n_accounts_``, ``n_tournaments_``, ``solo_``
        (the behaviour-only path runs: at most ``solo_max_pairs`` pairs of accounts with ``min_hands``) and
        ``missing_``, each of the window's rows (:func:`window_tables`)."""
        self.window_ = window_span(con)
        with window_tables(con, self.window_) as wcon:
            return self._learn(wcon)

    def _learn(self, con: duckdb.DuckDBPyConnection) -> "MultiAccountingDetector":
        """:meth:`fit` on ``con``, the window's tables."""
        self.missing_ = []
        self.has_sessions_ = idf.table_rows(con, "sessions") > 0
        self.has_payment_ = int(con.execute(
            "SELECT count(*) FROM accounts WHERE payment IS NOT NULL AND payment <> ''").fetchall()[0][0]) > 0
        self.has_decisions_ = idf.table_rows(con, "decisions") > 0
        if not self.has_sessions_:
            self.missing_ += ["device and IP links (no sessions)", "online overlap and hand-overs (no sessions)"]
        if not self.has_payment_:
            self.missing_.append("payment links (no payment hashes)")
        if not self.has_decisions_:
            self.missing_.append("decision-time likeness (no decisions)")
        self.fingerprints_ = idf.style_fingerprints(con)
        self.n_accounts_ = max(idf.population_size(con), 2)
        self.n_tournaments_ = _n_tournaments(con)
        n_play = int((self.fingerprints_["n_hands"] >= self.min_hands).sum()) if self.fingerprints_.height else 0
        self.solo_ = n_play * (n_play - 1) // 2 <= self.solo_max_pairs
        if not self.solo_:
            self.missing_.append(f"behaviour-only pairs (more than {self.solo_max_pairs:,} pairs of accounts)")
        return self

    # ------------------------------------------------------------------ score
    def _candidates(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """The pairs judged: identifier links, pairs that keep entering the same events (without sessions), and
        pairs that behaviour alone makes one person (:meth:`_solo`); ``q_solo`` null on the pairs not from there."""
        links = idf.identity_links(con, max_share=self.max_share)
        if links.height:
            links = links.filter(pl.col("min_share") <= self.max_link_share)
        if not self.has_sessions_:
            links = _with_unlinked(links, self._coentered(con))
        # one row order whatever order the joins left (the likeness sums run over the rows in that order)
        return self._solo(con, links).sort("a", "b")

    def _coentered(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """Without sessions (hand histories, perhaps with the accounts' payment hashes): pairs that keep entering the
        same tournaments (3+ together) beyond the configuration model (``p_coentry`` <= ``coentry_p``,
        :func:`idf.co_entries`), since no device or address can link them; a payment hash links some pairs, never
        the accounts of one person who pays with several cards. Returns ``a``, ``b``."""
        q = f"""
        WITH e AS {idf.tournament_entries(con)}
        SELECT x.account AS a, y.account AS b, count(*) AS n
        FROM e x JOIN e y ON x.tournament_id = y.tournament_id AND x.account < y.account
        GROUP BY ALL HAVING count(*) >= 3
        """
        co = con.sql(q).pl()
        if co.height == 0:
            return pl.DataFrame(schema={"a": pl.Utf8, "b": pl.Utf8})
        use = idf.co_entries(con, co.select("a", "b"))
        return use.filter(pl.col("p_coentry") <= self.coentry_p).select("a", "b")

    def _solo(self, con: duckdb.DuckDBPyConnection, cand: pl.DataFrame) -> pl.DataFrame:
        """``cand`` with the pairs that share no identifier but whose behaviour alone is beyond the null of all the
        population's pairs (:func:`idf.behaviour_pairs`: ``q_solo`` <= alpha, Benjamini-Hochberg over every pair),
        and ``q_solo`` (null where the pair was not judged on behaviour alone, or is linked). Every pair, linked or
        not, also carries the behaviour-only fields the household test reads (``p_seated``, ``p_opened``,
        ``hands_together``, ``opened_days``: each ranked among all the population's pairs). Without the path (more
        than ``solo_max_pairs`` pairs: ``solo_`` false at fit) no pair is added, those fields are null and
        ``missing_`` says so."""
        solo = (idf.behaviour_pairs(con, self.fingerprints_, min_hands=self.min_hands, max_pairs=self.solo_max_pairs,
                                    keep_q=self.alpha, also=cand.select("a", "b") if cand.height else None,
                                    random_state=self.random_state) if self.solo_ else None)
        if solo is None:
            solo = pl.DataFrame(schema={"a": pl.Utf8, "b": pl.Utf8, "q_solo": pl.Float64})
        cols = [c for c in SOLO_COLUMNS if c in solo.columns]
        found = solo.filter(pl.col("q_solo") <= self.alpha).select("a", "b")
        if cand.height:
            found = found.join(cand.select("a", "b"), on=["a", "b"], how="anti")
        out = _with_unlinked(cand, found).join(solo.select("a", "b", *cols), on=["a", "b"], how="left",
                                               maintain_order="left")
        # q_solo and p_solo belong to the pairs found on behaviour alone: a linked pair is judged in its own family
        out = out.join(found.with_columns(_solo=pl.lit(True)), on=["a", "b"], how="left", maintain_order="left")
        return out.with_columns(**{c: pl.when(pl.col("_solo")).then(pl.col(c)).otherwise(None)
                                   for c in ("q_solo", "p_solo") if c in out.columns}).drop("_solo")

    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """One row per candidate pair (shared identifiers, or co-entries where there are no sessions):
        identifier, style, timing and co-entry p-values, Fisher's combination (``p_value``), weighted
        Benjamini-Hochberg (``q_value``; Genovese, Roeder & Wasserman 2006) and the household-shaped pairs'
        own BH (``q_household``).

        Returns
        -------
        ``a``, ``b``, ``accounts``, ``tournaments``, ``score``, ``p_value``, ``q_value`` and the tests' figures,
        of the fitted window's rows (:func:`window_tables`)."""
        with window_tables(con, self.window_) as wcon:
            return self._score(wcon)

    def _score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        """:meth:`score` on ``con``, the window's tables."""
        cand = self._candidates(con)
        empty = pl.DataFrame(schema={"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                                     "score": pl.Float64, "p_value": pl.Float64})
        if cand.height == 0:
            return empty
        pairs = idf.likeness(self.fingerprints_, cand, min_hands=self.min_hands,
                             random_state=self.random_state)
        pairs = idf.usage_patterns(con, pairs)
        # identifier p-values: the chance that an unrelated account carries this
        # device / card, n_sharing / N (the IDF weight is -log of it). A shared
        # device separates one person from housemates (who keep their own
        # devices); a card does not (families share one), so it adds evidence
        # but never counts as an agreeing signal on its own, and on a
        # household-shaped pair (a home address shared, no device) it is
        # household-grade: left out of the p-value (it stays in the BH prior).
        p_dev = np.where(pairs["idf_device"].to_numpy() > 0, np.exp(-pairs["idf_device"].to_numpy()), np.nan)
        p_pay = np.where(pairs["idf_payment"].to_numpy() > 0, np.exp(-pairs["idf_payment"].to_numpy()), np.nan)
        household = np.isnan(p_dev) & ((pairs["w_ip"].fill_null(0).to_numpy() > 0)
                                       | (pairs["w_net"].fill_null(0).to_numpy() > 0))
        # the shared device was used by both accounts at the same time: one machine, two
        # accounts online at once, which housemates taking turns at a family computer never
        # are; it counts as a second agreeing fact beside the device (not in the p-value:
        # it is the device's own evidence, sharpened)
        co_device = ((np.nan_to_num(p_dev, nan=1.0) < self.signal_p)
                     & (pairs["device_overlap_s"].fill_null(0).to_numpy() >= self.co_device_s))
        behav = np.column_stack([
            pairs["p_style"].to_numpy(), pairs["p_timing"].to_numpy(), pairs["p_coentry"].to_numpy(),
        ]).astype(float)
        B = np.column_stack([p_dev, behav])
        # what housemates do not share, read on household-shaped pairs (where no identifier tells one person from
        # housemates): hands at one table, ranked among the population's household-shaped pairs (its own null:
        # housemates who play together sit at one table more often than strangers as much online together, so the
        # rank among all pairs would read them as one person), and accounts opened close together, ranked among all
        # the population's pairs (:func:`idf.behaviour_pairs`); NaN where the path did not run: untested. A pair
        # linked by a device is not asked them: one person who switches accounts on one machine never sits both at
        # one table, and a p of 1 there would only dilute its evidence
        together = _floats(pairs, "hands_together")
        seated_hh = np.full(pairs.height, np.nan)
        fam = household & ~np.isnan(together)
        seated_hh[fam] = idf.share_at_least(together[fam], np.zeros(int(fam.sum()), dtype=np.int64))
        apart = np.column_stack([seated_hh, np.where(household, _floats(pairs, "p_opened"), np.nan)])
        # the facts that may agree: device, style, timing, co-entry; a card beside a shared device; the device used by
        # both at once (the device's p once more: its own evidence, sharpened)
        agreeing = np.column_stack([B, np.where(np.isnan(p_dev), np.nan, p_pay), np.where(co_device, p_dev, np.nan)])
        pairs = pairs.with_columns(
            p_device=pl.Series(p_dev),
            p_payment=pl.Series(p_pay),
            p_behaviour=pl.Series(mt.fisher_combine(np.column_stack([B, apart, np.where(household, np.nan, p_pay)]),
                                                    untested=1.0)),
            p_conduct=pl.Series(mt.fisher_combine(np.column_stack([behav, apart]), untested=1.0)),
            household=pl.Series(household),
            # a card counts as agreeing only beside a shared device: two identifiers, each
            # held by these accounts alone, that no household pattern explains (housemates
            # keep their own devices); beside an address alone it is a family's card
            n_agree=pl.Series((np.nan_to_num(agreeing, nan=1.0) < self.signal_p).sum(axis=1)),
            # the min_signals-th smallest of them: at most signal_p when min_signals signals agree
            p_agree=pl.Series(np.zeros(pairs.height) if self.min_signals <= 0
                              else np.sort(np.nan_to_num(agreeing, nan=1.0), axis=1)[:, self.min_signals - 1]
                              if agreeing.shape[1] >= self.min_signals else np.ones(pairs.height)),
            co_device=pl.Series(co_device),
            p_seated_household=pl.Series(seated_hh),
            id_strong=(pl.col("min_share") <= self.max_link_share).fill_null(False),
        )
        # the score: -log10 of the combined p-value, plus the IP/network link as
        # a tie-breaker (the one identifier left out of the p-value)
        pairs = pairs.with_columns(
            score=(-pl.col("p_behaviour").clip(1e-300, 1).log10()
                   + 0.1 * pl.max_horizontal("w_ip", "w_net")),
        )
        return self._with_q(pairs.with_columns(
            accounts=pl.concat_list("a", "b"),
            tournaments=pl.col("shared_tournaments"),
            p_value=pl.col("p_behaviour"),
        ))

    def _with_q(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``q_value`` (the flag rule's rate, :meth:`_flag_rate`), ``q_combined`` (weighted BH over
        the pairs picked by identifiers or co-entries; a pair found on behaviour alone keeps its ``q_solo``, BH over
        every pair of the population), ``q_household`` (plain BH over the household-shaped pairs' combined conduct
        p-values; 1 elsewhere) and ``n_household`` (the number of household-shaped pairs, that family's size)."""
        # weighted BH (Genovese, Roeder & Wasserman, Biometrika 93(3), 2006): the
        # identity link is a prior, not a test: pairs bound by a shared device or
        # card get more of the error budget than pairs bound by an address alone;
        # weights average 1, so the FDR stays at alpha.
        w = (1.0 + self.device_weight * (scores["idf_device"].fill_null(0).to_numpy() > 0)
             + self.card_weight * (scores["idf_payment"].fill_null(0).to_numpy() > 0))
        # ... and by how specific the rarest shared identifier is (2 accounts: full
        # weight; an address behind 9 accounts is a café or a carrier, not a home)
        w = w * 2.0 / np.maximum(scores["min_share"].fill_null(2).to_numpy().astype(float), 2.0)
        # pairs found on behaviour alone were picked by that behaviour among every pair: their test is that family's
        # (q_solo), not this one's, which stays the family of the pairs picked by identifiers and co-entries
        q_solo = scores["q_solo"].to_numpy().astype(float) if "q_solo" in scores.columns else np.full(len(w), np.nan)
        fam = np.isnan(q_solo)
        q = q_solo.copy()
        if fam.any():
            w = w[fam] / w[fam].mean()
            q[fam] = mt.bh_qvalues(np.minimum(1.0, scores["p_value"].to_numpy()[fam] / w), untested=1.0)
        # housemates: the behaviour must say one person across all household-shaped pairs of the
        # population (BH over them, Benjamini & Hochberg 1995): among a hundred honest pairs one
        # reaches p ~ 1/100 by chance, among ten p ~ 1/10, and the line follows that count
        hh = scores["household"].to_numpy().astype(bool)
        q_hh = np.ones(scores.height)
        if hh.any():
            q_hh[hh] = mt.bh_qvalues(scores["p_conduct"].to_numpy().astype(float)[hh], untested=1.0)
        return scores.with_columns(q_combined=pl.Series(q), q_household=pl.Series(q_hh),
                                   n_household=pl.lit(int(hh.sum()), pl.Int64),
                                   q_value=pl.Series(self._flag_rate(scores, q, q_hh)))

    def _flag_rate(self, scores: pl.DataFrame, q: np.ndarray, q_hh: np.ndarray) -> np.ndarray:
        """The rate of the flag rule: the largest of its conditions, each on the false-discovery scale (the
        intersection-union rule, Berger, *Technometrics* 24, 1982: a case passes when every condition does, so its
        p-value is the largest of theirs). The conditions: the combined evidence's weighted BH q (``q``; for a pair
        found on behaviour alone its ``q_solo``, Benjamini-Hochberg over every pair, :func:`idf.behaviour_pairs`); the
        ``min_signals``-th strongest agreeing signal's p at most ``signal_p``, as ``p * alpha / signal_p``; for a
        household-shaped pair its conduct's q among the population's household-shaped pairs (``q_hh``: the benign
        explanation "housemates" tested within its own family, whose size sets the line); a
        strong identity link (the rarest shared identifier held by at most ``max_link_share`` accounts) or none needed
        (co-entry and behaviour-only candidates), else 1. A pair is flagged exactly when the rate is at most alpha, and a case that one condition clears is never
        ranked above the flagged ones."""
        a = self.alpha
        rate = np.maximum(np.nan_to_num(q, nan=1.0), scores["p_agree"].to_numpy().astype(float) * a / self.signal_p)
        hh = scores["household"].to_numpy().astype(bool)
        rate = np.where(hh, np.maximum(rate, q_hh), rate)
        linked = scores["id_strong"].to_numpy() | (scores["weight"].to_numpy() == 0)
        return np.minimum(np.where(linked, rate, 1.0), 1.0)

    # ------------------------------------------------------------------ threshold
    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``pair_flagged``: the rate of the flag rule (``q_value``, :meth:`_flag_rate`) at most alpha:
        the combined evidence significant, at least ``min_signals`` signals agreeing, a strong identity link, and
        for a household-shaped pair (home address, own devices) the conduct alone telling one person."""
        return scores.with_columns(pair_flagged=pl.col("q_value").fill_null(1.0) <= self.alpha)

    # ------------------------------------------------------------------ explain
    def _identifier_evidence(self, pairs: pl.DataFrame) -> tuple[list[Evidence], dict[tuple[str, str], int]]:
        """The identifiers the group's pairs share, rarest first, each with its IDF weight and the SQL that lists its
        accounts; returns the evidence and (kind, value) -> accounts sharing it."""
        ev: list[Evidence] = []
        ids_seen: dict[tuple[str, str], int] = {}
        for r in pairs.iter_rows(named=True):
            for s in r["shared"] or []:
                ids_seen[(s["kind"], s["value"])] = s["n_accounts"]
        for (kind, value), n in sorted(ids_seen.items(), key=lambda kv: kv[1]):
            if kind == "payment":
                sql = f"SELECT account FROM accounts WHERE payment = {_lit(value)}"
            elif kind == "net":
                sql = f"SELECT DISTINCT account, ip FROM sessions WHERE ip LIKE {_lit(value.split('.0/24')[0].split('::/64')[0] + '%')}"
            else:
                sql = f"SELECT DISTINCT account FROM sessions WHERE {kind} = {_lit(value)}"
            ev.append(Evidence(
                name=f"shared {kind}", value=float(n), baseline=2.0, n=n,
                text=f"{kind} {value} is used by {n} accounts (IDF weight {math.log(self.n_accounts_ / n):.2f})",
                sql=sql,
            ))
        return ev, ids_seen

    def _likeness_evidence(self, best: dict[str, Any], accs_sql: str) -> list[Evidence]:
        """The style, decision-time and co-entry likeness of the group's strongest pair, and its online overlap."""
        a, b = best["a"], best["b"]
        fp = self.fingerprints_.filter(pl.col("account").is_in([a, b]))
        ev: list[Evidence] = []
        fpd = {r["account"]: r for r in fp.iter_rows(named=True)}
        if not is_missing(best.get("p_style")):
            ev.append(Evidence(
                name="style likeness", value=float(best["style_dist"]), baseline=None,
                n=int(min(fpd[a]["n_hands"], fpd[b]["n_hands"])), p_value=float(best["p_style"]),
                text=(f"{a}: VPIP {fpd[a]['vpip']:.2f} PFR {fpd[a]['pfr']:.2f} aggr {_f(fpd[a]['aggr_freq'])}; "
                      f"{b}: VPIP {fpd[b]['vpip']:.2f} PFR {fpd[b]['pfr']:.2f} aggr {_f(fpd[b]['aggr_freq'])}; "
                      f"distance {best['style_dist']:.2f}, share of random pairs as close: {best['p_style']:.4f}"),
                sql=("SELECT s.player, count(DISTINCT s.hand_id) AS hands, "
                     "count(DISTINCT a.hand_id) FILTER (WHERE a.street='preflop' AND a.action IN ('call','bet','raise')) "
                     "/ count(DISTINCT s.hand_id) AS vpip FROM seats s LEFT JOIN actions a "
                     "ON a.hand_id = s.hand_id AND a.player = s.player WHERE s.dealt_in AND s.player IN "
                     f"({_lit(a)}, {_lit(b)}) GROUP BY 1"),
            ))
        if not is_missing(best.get("p_timing")):
            ev.append(Evidence(
                name="decision-time likeness", value=float(best["timing_dist"]), n=int(min(fpd[a]["n_decisions"], fpd[b]["n_decisions"])),
                p_value=float(best["p_timing"]),
                text=(f"median decision {math.exp(fpd[a]['log_ms_q50']):.0f} ms vs {math.exp(fpd[b]['log_ms_q50']):.0f} ms; "
                      f"share of random pairs as close: {best['p_timing']:.4f}"),
                sql=(f"SELECT account, median(ms), quantile_cont(ms, 0.9) FROM decisions WHERE account IN "
                     f"({_lit(a)}, {_lit(b)}) GROUP BY 1"),
            ))
        if not is_missing(best.get("p_coentry")):
            ev.append(Evidence(
                name="tournaments entered together", value=float(best["n_shared_t"]),
                baseline=float(best["n_tourn_a"] * best["n_tourn_b"]) / max(1, self.n_tournaments_),
                n=int(min(best["n_tourn_a"], best["n_tourn_b"])), p_value=float(best["p_coentry"]),
                text=f"{a} and {b} both entered {best['n_shared_t']} tournaments ({best['n_tourn_a']} and {best['n_tourn_b']} each)",
                sql=("SELECT DISTINCT h.tournament_id FROM seats x JOIN seats y ON x.hand_id = y.hand_id "
                     f"JOIN hands h ON h.hand_id = x.hand_id WHERE x.player = {_lit(a)} AND y.player = {_lit(b)}"),
            ))
        if not is_missing(best.get("q_solo")):
            ev.append(_solo_evidence(best, accs_sql))
        if self.has_sessions_:
            ev.append(Evidence(
                name="online at once", value=float(best.get("concurrency") or 0.0), n=int(best.get("handovers") or 0),
                text=(f"online together {float(best.get('overlap_s') or 0) / 60:.0f} min "
                      f"({100 * float(best.get('concurrency') or 0):.0f}% of the shorter account's time); "
                      f"{int(best.get('handovers') or 0)} hand-overs (one logs in within 30 min of the other logging out)"
                      + (f"; online at once on the same device for {float(best.get('device_overlap_s') or 0) / 60:.0f} min "
                         "(one machine, two accounts at the same time: not housemates taking turns)"
                         if best.get("co_device") else "")),
                sql=f"SELECT account, login_at, logout_at, ip, device FROM sessions WHERE account IN ({accs_sql}) ORDER BY login_at",
            ))
        return ev

    def _benign(self, row: dict[str, Any], best: dict[str, Any], kinds: list[str]) -> str:
        """The household and shared-network explanation, and whether the behaviour excludes it."""
        strong_ids = [k for k in kinds if k in ("device", "payment")]
        benign = (
            "Housemates or a shared café/carrier network share an IP honestly; they differ in device, style "
            "and timing, play at once and enter separately. "
        )
        if row["flagged"]:
            benign += (f"Here the accounts share {', '.join(kinds) or 'no identifier'}"
                       f"{' (strong identifiers)' if strong_ids else ''} and {int(best['n_agree'])} behavioural "
                       "signals agree beyond chance, so the household explanation is unlikely.")
        else:
            benign += "The behavioural signals do not exclude it: not flagged."
        if best.get("household"):
            benign += (" The pair shares a home address but no device (household-shaped): a shared card there is "
                       "a family's, so the behaviour alone must say one person (style, decision times, co-entry, "
                       f"{float(best.get('hands_together') or 0):.0f} hands at one table: share of the household-shaped "
                       f"pairs with as many {_g(best.get('p_seated_household'))}, "
                       f"openings {_g(best.get('opened_days'))} days apart: share of pairs as close "
                       f"{_g(best.get('p_opened'))}): combined p "
                       f"{float(best['p_conduct']):.2g}, q {float(best['q_household']):.2g} among the population's "
                       f"{int(best['n_household'])} household-shaped pairs (Benjamini-Hochberg), "
                       f"needed <= {self.alpha:g}.")
        return benign

    def _edges(self, pairs: pl.DataFrame) -> list[dict[str, Any]]:
        """Each pair of the group with its weight, score, q-value and the signals that agree, strongest pair first
        (ties by name: the order does not depend on how the pairs were grouped)."""
        return [
            {"a": r["a"], "b": r["b"], "weight": float(r["weight"]), "score": float(r["score"]),
             "q_value": float(r["q_value"]),
             "signals": [k for k, p in (("device", r["p_device"]), ("style", r["p_style"]), ("timing", r["p_timing"]),
                                        ("co-entry", r["p_coentry"])) if not is_missing(p) and p < self.signal_p]
             + (["device at once"] if r.get("co_device") else [])
             + [s["kind"] for s in (r["shared"] or []) if s["weight"] > 0]}
            for r in pairs.sort(["score", "a", "b"], descending=[True, False, False]).iter_rows(named=True)
        ]

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one group row of :meth:`threshold`: the shared identifiers with their IDF
        weights, the style, timing and co-entry likeness of its strongest pair, the online overlap, the evidence
        hands (two of its accounts at one table first).

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold` (its ``pairs`` hold the group's pairs).

        Returns
        -------
        :class:`~detectors.base.Signal` (``extra["edges"]``: each pair's signals; ``extra["window"]``: the first and
        last day judged, when the window is not every day)."""
        pairs = self.pairs_of(row)
        accs = list(row["accounts"])
        ev, ids_seen = self._identifier_evidence(pairs)
        accs_sql = ", ".join(_lit(a) for a in accs)
        best = pairs.sort("score", descending=True).row(0, named=True)
        ev += self._likeness_evidence(best, accs_sql)
        kinds = sorted({k for k, _ in ids_seen})
        benign = self._benign(row, best, kinds)
        with window_tables(con, self.window_) as wcon:
            hands = _evidence_hands(wcon, [row]).get(0, [])
        link = ", ".join(kinds) or ("behaviour alone" if not is_missing(best.get("q_solo")) else "co-entries")
        summary = (f"{', '.join(accs)} look like one person: linked by {link}; "
                   f"{len(row['tournaments'])} tournaments entered together")
        return Signal(
            kind=self.kind, accounts=accs, score=float(row["score"]), flagged=bool(row["flagged"]),
            summary=summary, tournaments=list(row["tournaments"]), hands=hands, evidence=ev, benign=benign,
            p_value=float(row["p_value"]) if row["p_value"] is not None else None,
            detector=type(self).__name__,
            extra={"edges": self._edges(pairs),
                   **({"window": [d.isoformat() for d in self.window_]} if self.window_ is not None else {})},
        )


def _with_unlinked(links: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """``links`` (:func:`idf.identity_links`) with the rows of ``pairs`` (``a``, ``b``) that no identifier links: every
    identifier column zero or empty, ``weight`` 0 (the flag rule needs no link for them)."""
    if pairs.height == 0:
        return links
    shared_t = links.schema.get("shared", pl.List(pl.Struct({"kind": pl.Utf8})))
    rows = pairs.select("a", "b").with_columns(
        w_device=pl.lit(0.0), w_payment=pl.lit(0.0), w_ip=pl.lit(0.0), w_net=pl.lit(0.0),
        idf_device=pl.lit(0.0), idf_payment=pl.lit(0.0), min_share=pl.lit(None, pl.Int64),
        n_shared=pl.lit(0, pl.Int64), shared=pl.lit(None, shared_t), weight=pl.lit(0.0),
    )
    if links.height == 0:
        return rows
    rows = rows.join(links.select("a", "b"), on=["a", "b"], how="anti")
    return pl.concat([links, rows.select(links.columns)], how="vertical_relaxed")


def _solo_evidence(best: dict[str, Any], accs_sql: str) -> Evidence:
    """The behaviour-only figures of a pair that shares no identifier (:func:`idf.behaviour_pairs`)."""
    return Evidence(
        name="one person on behaviour alone", value=float(best["p_solo"]), p_value=float(best["p_solo"]),
        text=(f"{best['a']} and {best['b']} share no device, address or card; their style, decision times, hours "
              f"online together (share of pairs as concurrent {_g(best.get('p_hours'))}), "
              f"{float(best.get('hands_together') or 0):.0f} hands at one table (share of pairs as much online "
              f"together with as many {_g(best.get('p_seated'))}) and openings "
              f"{_g(best.get('opened_days'))} days apart (share of pairs as close {_g(best.get('p_opened'))}; "
              f"country match {_g(best.get('p_country'))}) combine to p {float(best['p_solo']):.2g}, "
              f"q {float(best['q_solo']):.2g} among all the population's pairs (Benjamini-Hochberg)"),
        sql=f"SELECT account, country, created_at FROM accounts WHERE account IN ({accs_sql})",
    )


def _floats(frame: pl.DataFrame, col: str) -> np.ndarray:
    """``frame[col]`` as floats, NaN where null or where the column is absent."""
    if col not in frame.columns:
        return np.full(frame.height, np.nan)
    return frame[col].cast(pl.Float64).fill_null(np.nan).to_numpy()


def _f(x: Any) -> str:
    return "n/a" if is_missing(x) else f"{x:.2f}"


def _g(x: Any) -> str:
    return "n/a" if is_missing(x) else f"{x:.2g}"


def _n_tournaments(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute(f"SELECT count(DISTINCT tournament_id) FROM {idf.tournament_entries(con)}").fetchall()[0][0])


def _evidence_hands(con: duckdb.DuckDBPyConnection, groups: list[dict[str, Any]], limit: int = 20) -> dict[int, list[str]]:
    """Evidence hands of the given groups (their ``accounts`` and ``tournaments``) in one query: hands where two
    of a group's accounts sat at one table (one person at two seats) first, then each account's first hand in
    every tournament the group entered together; by time, hands of the same second by hand id."""
    ga = pl.DataFrame({"g": [i for i, g in enumerate(groups) for _ in g["accounts"]],
                       "account": [a for g in groups for a in g["accounts"]]},
                      schema={"g": pl.Int64, "account": pl.Utf8})
    gt = pl.DataFrame({"g": [i for i, g in enumerate(groups) for _ in g["tournaments"]],
                       "tournament_id": [t for g in groups for t in g["tournaments"]]},
                      schema={"g": pl.Int64, "tournament_id": pl.Utf8})
    con.register("_rb_ga", ga)
    con.register("_rb_gt", gt)
    q = """
    WITH mine AS (
      SELECT ga.g, s.hand_id, s.player, h.started_at, h.tournament_id
      FROM seats s JOIN _rb_ga ga ON ga.account = s.player JOIN hands h USING (hand_id)
    ),
    together AS (
      SELECT g, hand_id, min(started_at) AS t, 0 AS rank FROM mine GROUP BY g, hand_id HAVING count(*) >= 2
    ),
    firsts AS (
      SELECT m.g, arg_min(m.hand_id, m.started_at) AS hand_id, min(m.started_at) AS t, 1 AS rank
      FROM mine m JOIN _rb_gt gt ON gt.g = m.g AND gt.tournament_id = m.tournament_id
      GROUP BY m.g, m.player, m.tournament_id
    ),
    ranked AS (
      SELECT g, hand_id, min(rank) AS rank, min(t) AS t FROM (SELECT * FROM together UNION ALL SELECT * FROM firsts)
      GROUP BY g, hand_id
    )
    SELECT g, list(hand_id ORDER BY rank, t, hand_id)[1:?] AS hands FROM ranked GROUP BY g
    """
    rows = con.execute(q, [limit]).fetchall()
    con.unregister("_rb_ga")
    con.unregister("_rb_gt")
    return {int(g): list(h) for g, h in rows}
