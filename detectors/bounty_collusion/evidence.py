"""Bounty collusion's case: the evidence of each test with its expectation, the evidence hands (strongest
first) and the signal (:meth:`BountyCase.explain`). A mixin of
:class:`~detectors.bounty_collusion.detector.BountyCollusionDetector`: it reads only the row and the fitted
attributes (``alpha``, ``wide_rate``, ``short_bb``, ``min_events``, ``checkdown_rate_``,
``pop_cont_rate_``)."""

from __future__ import annotations

import json
from typing import Any

import duckdb
from detectors.base import Evidence, Signal
from detectors.bounty_collusion.queries import EVENTS_SQL, SPOTS_EVIDENCE_SQL
from detectors.features import gameplay as gp
from detectors.features.gameplay.bounty_sparing import SPARING_ROWS_SQL


class BountyCase:
    """The case of a bounty-collusion row: evidence, hands and :meth:`explain`."""

    def _evidence_hands(self, row: dict[str, Any]) -> list[str]:
        """The pair's evidence hands, strongest first: the calls their own baseline folds (least likely first), then
        bounty taken and side pot checked down, then bounty taken, then the other joint contests and presence hands;
        the bounty-passing hands (the other's short raise called, shoves with the other in) beside the first calls,
        before them when that family made the flag."""
        # strongest first: bounty taken by the pair and side pot checked down, then bounty, then the rest
        won, cd, allh = set(row.get("won_hands") or []), set(row.get("cd_hands") or []), list(row.get("hands") or [])
        joint_hands = set(allh)
        # then the hands where one of them kept playing against a short bounty target with the other still in
        allh = sorted(joint_hands | set(row.get("pres_hands") or []))
        hands = sorted(allh, key=lambda h: (-(h in won) - (h in cd) - (h in joint_hands), h))
        # first of all: the calls their own baseline folds, least likely first, and the bounty-passing hands (first
        # when that family made the flag)
        passing = [*(row.get("tc_hands") or []), *(row.get("sh_hands") or [])]
        wide = list(row.get("wc_hands") or [])
        first = [*passing, *wide] if self._by_passing(row) else [*wide, *passing]
        spare = list(row.get("spare_hands") or [])
        first = [*spare, *first] if self._by_sparing(row) else first
        return list(dict.fromkeys([*first, *hands, *spare]))

    def _by_passing(self, row: dict[str, Any]) -> bool:
        """Whether the bounty-passing family gave the pair its q-value (see :meth:`family_q`)."""
        qp, qm = row.get("q_pass"), row.get("q_main")
        lp, lm = float(row.get("pass_alpha") or 0.0), float(row.get("main_alpha") or 0.0)
        return qp is not None and lp > 0 and (qm is None or lm <= 0 or qp / lp < qm / lm)

    def _by_sparing(self, row: dict[str, Any]) -> bool:
        """Whether the sparing family gave the pair its q-value (its q over its level the smallest)."""
        qs, ls = row.get("q_spare"), float(row.get("spare_alpha") or 0.0)
        if qs is None or ls <= 0:
            return False
        others = [row.get(q) / float(row.get(a) or 0.0) for q, a in (("q_main", "main_alpha"), ("q_pass", "pass_alpha"))
                  if row.get(q) is not None and float(row.get(a) or 0.0) > 0]
        return all(qs / ls < x for x in others)

    def _call_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The wide calls and the rest of the calls against short bounty targets with the partner in, pooled and per
        player, against their own rates."""
        a, b = row["player"], row["opponent"]
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        return [
            Evidence(
                name="calls against short bounty targets that their own baseline folds",
                value=g("wc_k"), baseline=g("wc_e"), n=int(g("wc_n")), p_value=row.get("p_wide_calls"),
                text=f"with the other still in, they called or raised {int(g('wc_k'))} times in {int(g('wc_n'))} preflop "
                     f"decisions against a short bounty target with a hand and price at which they fold at least "
                     f"{100 * (1 - self.wide_rate):.0f}% of the time without the other; their own rates at the same hand "
                     f"strength (decile), price and position predict {g('wc_e'):.1f}",
                sql=gp.BOUNTY_PRESENCE_SQL,
            ),
            Evidence(
                name="other continuations against short bounty targets with the partner in",
                value=g("nw_k"), baseline=g("nw_e"), n=int(g("nw_n")), p_value=row.get("p_rest_calls"),
                text=f"in the other {int(g('nw_n'))} such decisions (hand and price at which their own baseline continues "
                     f"at least {100 * self.wide_rate:.0f}% of the time) they continued {int(g('nw_k'))} times, "
                     f"{g('nw_e'):.1f} predicted by their own rates; with the calls above (Fisher's method, disjoint "
                     f"decisions) p = {row.get('p_all_calls') if row.get('p_all_calls') is not None else float('nan'):.2g}",
                sql=gp.BOUNTY_PRESENCE_SQL,
            ),
            *(
                Evidence(
                    name=f"{x} calls short bounty targets wide when {y} is in",
                    value=g(f"wc_{k}_k"), baseline=g(f"wc_{k}_e"), n=int(g(f"wc_{k}_n")),
                    text=f"{x}: {int(g(f'wc_{k}_k'))} calls in {int(g(f'wc_{k}_n'))} such decisions with {y} in, "
                         f"{g(f'wc_{k}_e'):.1f} expected from {x}'s own rates",
                )
                for x, y, k in ((a, b, "a"), (b, a, "b"))
            ),
        ]

    def _allin_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The all-in tests: targets contested together, with a weak hand, per player, side pots checked down,
        bounties taken."""
        a, b = row["player"], row["opponent"]
        joint, exp = int(row["joint"]), float(row["expected"])
        return [
            Evidence(
                name="all-in targets contested together", value=float(joint), baseline=exp, n=int(row["spots"]),
                p_value=row.get("p_joint"),
                text=f"{a} and {b} both called {joint} all-in short stacks in {int(row['spots'])} spots where both could; "
                     f"their own calling rates predict {exp:.1f}",
                sql=SPOTS_EVIDENCE_SQL,
            ),
            Evidence(
                name="joint contests with a weak hand", value=float(row.get("weak_joint") or 0),
                baseline=float(row.get("weak_expected") or 0), n=joint, p_value=row.get("p_weak"),
                text=f"{int(row.get('weak_joint') or 0)} of those with one of them holding a bottom-half starting hand; "
                     f"their own weak-call rates predict {row.get('weak_expected') or 0:.1f}",
            ),
            *(
                Evidence(
                    name=f"{x} calls all-ins with a bottom-half hand when {y} is in",
                    value=float(row.get(f"wide_{k}") or 0) / max(1, int(row.get(f"wide_{k}_n") or 0)),
                    baseline=row.get(f"wide_{k}_base"), n=int(row.get(f"wide_{k}_n") or 0), p_value=row.get(f"wide_{k}_p"),
                    text=f"{x} contested with a bottom-half hand in {int(row.get(f'wide_{k}') or 0)} of {int(row.get(f'wide_{k}_n') or 0)} spots "
                         f"with {y} in; {x}'s rate elsewhere {100 * (row.get(f'wide_{k}_base') or 0):.0f}%",
                )
                for x, y, k in ((a, b, "a"), (b, a, "b"))
            ),
            Evidence(
                name="side pots checked down", value=float(row.get("checked_down") or 0),
                baseline=self.checkdown_rate_ * float(row.get("joint_postflop") or 0), n=int(row.get("joint_postflop") or 0),
                p_value=row.get("p_checkdown"),
                text=f"side pot checked down in {int(row.get('checked_down') or 0)} of {int(row.get('joint_postflop') or 0)} that saw a flop; "
                     f"population rate {self.checkdown_rate_:.0%}",
            ),
            Evidence(
                name="bounties taken by the pair", value=float(row.get("bounties_won") or 0), n=joint,
                text=f"one of them took the bounty in {int(row.get('bounties_won') or 0)} of the {joint}",
            ),
        ]

    def _presence_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The presence test: continuations against a short bounty target with the partner still in, pooled and per
        player, against their own rates with other players in."""
        a, b = row["player"], row["opponent"]
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        return [
            Evidence(
                name="preflop continuations against a short bounty target with the partner still in",
                value=g("pres_k"), baseline=g("pres_e"), n=int(g("pres_n")), p_value=row.get("p_presence"),
                text=f"facing a bet with a bounty target of at most {self.short_bb:.0f} big blinds still in, they called or "
                     f"raised {int(g('pres_k'))} times in {int(g('pres_n'))} decisions with the other still in the hand; "
                     f"their own rates with other players still in, at the same hand strength, price and position, predict {g('pres_e'):.1f}",
                sql=gp.BOUNTY_PRESENCE_SQL,
            ),
            *(
                Evidence(
                    name=f"{x} keeps playing against short bounty targets when {y} is still in",
                    value=g(f"{k}_k") / max(1.0, g(f"{k}_n")), baseline=g(f"{k}_e") / max(1.0, g(f"{k}_n")), n=int(g(f"{k}_n")),
                    text=f"{x}: {int(g(f'{k}_k'))} of {int(g(f'{k}_n'))} with {y} in (own rate elsewhere {100 * g(f'{k}_own'):.0f}%, "
                         f"{g(f'{k}_e'):.1f} expected at equal strength and price)",
                )
                for x, y, k in ((a, b, "a"), (b, a, "b"))
            ),
        ]

    def _passing_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The bounty-passing tests: the other's short-stacked raise called, and shoves with the other in, with hands
        at which the player's own baseline (the same hand decile, price and position, without this partner) folds."""
        a, b = row["player"], row["opponent"]
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        fold = f"{100 * (1 - self.wide_rate):.0f}%"
        return [
            Evidence(
                name="calls of the other's short-stacked raise with hands their own baseline folds",
                value=g("tc_k"), baseline=g("tc_e"), n=int(g("tc_n")), p_value=row.get("tc_p"),
                text=f"facing a raise by the other while the other had at most {self.short_bb:.0f} big blinds and a bounty, "
                     f"{a} and {b} called {int(g('tc_k'))} times in {int(g('tc_n'))} decisions with a hand, pot odds and "
                     f"position at which they fold at least {fold} of the time to other short raisers; their own rates "
                     f"predict {g('tc_e'):.1f}. With the shoves below (Fisher's method) p = {self._fmt(row.get('pass_p'))}, "
                     f"q = {self._fmt(row.get('q_pass'))} in the bounty-passing family (false-discovery rate "
                     f"{float(row.get('pass_alpha') or 0.0):g}, over the pairs whose calls could reach it, met in any "
                     f"number of knockout tournaments)",
                sql=gp.BOUNTY_PARTNER_RAISE_SQL,
            ),
            Evidence(
                name="all-in shoves with the other in, with hands their own baseline does not shove",
                value=g("sh_k"), baseline=g("sh_e"), n=int(g("sh_n")), p_value=row.get("sh_p"),
                text=f"short-stacked with a bounty, they moved all in {int(g('sh_k'))} times in {int(g('sh_n'))} first "
                     f"decisions with the other still in and a hand, stack and position at which they do not shove at least "
                     f"{fold} of the time with others in the same tournament; their own rates predict {g('sh_e'):.1f}",
                sql=gp.BOUNTY_SHOVE_SQL,
            ),
        ]

    def _sparing_evidence(self, row: dict[str, Any]) -> list[Evidence]:
        """The sparing test: bets and raises after the flop into each other against each player's own rate in the
        same tournament with other opponents in."""
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        return [Evidence(
            name="bets and raises after the flop into each other",
            value=g("sp_k"), baseline=g("sp_e"), n=int(g("sp_n")), p_value=row.get("sp_p"),
            text=f"after the flop, with the other still in the pot and able to be bet into, {row['player']} and "
                 f"{row['opponent']} bet or raised {int(g('sp_k'))} times in {int(g('sp_n'))} decisions; their own rates "
                 f"in the same tournaments against their other opponents, at the same street, players left, bet faced "
                 f"and table size, predict {g('sp_e'):.1f} (the pair's tournaments' spread from the population's pairs "
                 f"in its null); q = {self._fmt(row.get('q_spare'))} in the sparing family (false-discovery rate "
                 f"{float(row.get('spare_alpha') or 0.0):g}, over the pairs whose decisions could reach it)",
            sql=SPARING_ROWS_SQL,
        )]

    @staticmethod
    def _fmt(x: float | None) -> str:
        """A p- or q-value in two significant digits, "not tested" for none."""
        return "not tested" if x is None or x != x else f"{x:.2g}"

    def _hunter_text(self, row: dict[str, Any]) -> str:
        """The bounty-hunter explanation with its figures: each player's own continuation rate against short
        bounty targets with other players in (the baseline every test holds them to) beside the population's."""
        a, b = row["player"], row["opponent"]
        own = [(x, row.get(c)) for x, c in ((a, "a_own"), (b, "b_own"))]
        rates = ", ".join(f"{x} {r:.0%}" for x, r in own if r is not None and r == r)
        if not rates or self.pop_cont_rate_ != self.pop_cont_rate_:
            return ""
        return (f"Bounty hunters chase bounties against everyone: kept playing against short bounty targets with other "
                f"players in, {rates} (the population {self.pop_cont_rate_:.0%}); each is tested against their own "
                f"rate, so a hunter's looseness with everyone is no evidence against this pair "
                f"(q {float(row.get('q_value') or 1.0):.2g}, flagged at q <= {self.alpha:g}). ")

    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal:
        """The signal of one row of :meth:`threshold`: the joint contests, bounties taken, side pots
        checked down, wide calls and presence continuations against their expectations, the evidence hands
        (the calls the own baseline folds first).

        Parameters
        ----------
        con : the warehouse. row : one row of :meth:`threshold`.

        Returns
        -------
        :class:`~detectors.base.Signal`."""
        a, b = row["player"], row["opponent"]
        accounts = list(row["accounts"])
        joint, exp = int(row["joint"]), float(row["expected"])
        hands = self._evidence_hands(row)
        g = lambda c: float(row.get(c) or 0.0)  # noqa: E731
        ev = [*self._call_evidence(row), *self._passing_evidence(row), *self._allin_evidence(row),
              *self._presence_evidence(row), *self._sparing_evidence(row)]
        ev = [e for e in ev if e.n]  # a test with no decisions or spots for this pair says nothing about it
        ev.append(Evidence(
            name="knockout tournaments at one table", value=g("events"), n=int(g("events_hands")),
            text=f"{a} and {b} were dealt in together in {int(g('events_hands'))} knockout hands of {int(g('events'))} "
                 f"tournaments (pairs sharing tables in fewer than {self.min_events} are not tested); weight "
                 f"{g('bh_weight'):.2f} in the false-discovery control (p-value / weight ranked; pairs seated together "
                 f"in more knockout tournaments get more of the error budget, weights average 1)",
            sql=EVENTS_SQL,
        ))
        who = " and ".join(accounts) if len(accounts) == 2 else f"ring of {len(accounts)} ({', '.join(accounts)})"
        summary = (
            f"{who}: with the other in, called short bounty targets {int(g('wc_k'))} times with hands their own "
            f"baseline folds ({g('wc_e'):.1f} expected) and {int(g('nw_k'))}/{int(g('nw_n'))} times with the rest "
            f"({g('nw_e'):.1f} expected); both called {joint} all-in bounty targets together (expected {exp:.1f} from their own rates), "
            f"{int(row.get('weak_joint') or 0)} with a weak hand, side pot checked down {int(row.get('checked_down') or 0)}/"
            f"{int(row.get('joint_postflop') or 0)}, bounty taken {int(row.get('bounties_won') or 0)} times; "
            f"kept playing against short bounty targets with the other in {int(g('pres_k'))}/{int(g('pres_n'))} "
            f"(expected {g('pres_e'):.1f}); called the other's short-stacked raise {int(g('tc_k'))} times with hands "
            f"their own baseline folds ({g('tc_e'):.1f} expected), shoved with the other in {int(g('sh_k'))} times "
            f"({g('sh_e'):.1f} expected); "
            + (f"bet into each other after the flop {int(g('sp_k'))}/{int(g('sp_n'))} times ({g('sp_e'):.1f} expected "
               f"from their own rates in the same tournaments); " if g("sp_n") else "")
            + f"q = {row.get('q_value') or 1:.2g}"
        )
        return Signal(
            kind=self.kind,
            accounts=accounts,
            score=float(row["score"]),
            flagged=bool(row["flagged"]),
            summary=summary,
            tournaments=list(row.get("tournaments") or []),
            hands=hands[:25],
            evidence=ev,
            benign=(
                self._hunter_text(row)
                + "Dry side pots are checked down by everyone and regulars meet at many final tables: the check-down rate "
                f"is compared with the population's ({self.checkdown_rate_:.0%}) and joint calls with each player's own "
                "calling rate at the same spots. Players loosen up against short stacks with a bounty anyway: "
                "continuations with the partner in are compared with the same player's with other players in, "
                "at the same hand strength, price and position. A bystander in a gang's hands is not accused for them: "
                "the decisions a player's strongest partner was in are not counted for any other pair. A bounty hunter "
                "calls every short stack's shove and a desperate short stack shoves wide with anyone: a call of the "
                "other's raise is compared with the same player's calls of other short raisers, a shove with the "
                "other in with the same player's shoves with others in, at the same hand decile, price and position. "
                "A player shoves wider at one table than at the next (a weak player seated there, a short-handed "
                "table), and a partner yet to act sits at that table: the shoves' tail lets the player's rate move "
                "from table to table as much as the population's does."
                + (" Players bet less into some opponents in a long match (a short-handed table late in a tournament, "
                   "limped pots checked down): bets after the flop into the other are compared with the same player's "
                   "bets in the same tournament against the others, at the same street, players left, bet faced, table "
                   "size and preflop raise, and the pair's tournaments may differ from that as much as the "
                   "population's pairs' do." if g("sp_n") else "")
            ),
            p_value=row.get("p_value"),
            extra={"shape": row.get("shape", "pair"), "edges": json.loads(row["edges"]) if row.get("edges") else [],
                   "q_value": row.get("q_value"), "sql_params": {"player": a, "opponent": b}},
        )
