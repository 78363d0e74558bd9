"""Bounty collusion: partners ganging up on short stacks in knockout tournaments.

Method
------
House rules forbid agreeing to eliminate a player for the bounty: partners
both call a short stack's all-in (often with hands that could not call
alone), then check the side pot down so that the better of their hands takes
pot and bounty. For each knockout hand and each all-in target, every other
player who could still act is an opportunity
(:func:`detectors.features.gameplay.bounty_spots`). Per unordered pair:

1. *joint contests* of the same target against each player's own contest
   rate (rescaled per spot); Poisson tail;
2. *weak joint contests* (cards known) against each player's weak-call rate;
3. *checked-down side pots* against the population's own check-down rate;
4. *presence*: preflop continuations while a short bounty target and the
   partner are in, against the player's own rate with others in, in the same
   strength, price and position cells: the exact tail of a sum of
   beta-binomials with a logit-normal tournament effect (Breslow & Clayton
   1993; :func:`detectors.features.gameplay.overdispersed_sum_sf`), each
   player's prior centred on their own looseness (Gelman & Hill 2007);
5. *wide calls* (cards known): the calls where the own baseline folds at
   least 70 %, against the Poisson-binomial of the own rates
   (:func:`detectors.features.gameplay.bounty_wide_calls`); and the *rest of
   the calls*, joined to it by Fisher's method;
6. *bounty passing* (:func:`detectors.features.gameplay.bounty_passing`): the
   target is the partner. Calls of the other's short-stacked all-in with hands
   the caller's own baseline folds to other short shovers (hand decile, pot
   odds, own seat and the shover's seat), and shoves with the other yet to
   act with hands the shover's own baseline, in the same tournament, does not
   shove; exact Poisson-binomial tails joined by Fisher's method, the shoves'
   with a random effect per (player, table of the tournament) whose variance
   is the population's own (:func:`detectors.features.gameplay.bounty_passing.table_effect_p`).

7. *sparing* (:func:`detectors.features.gameplay.bounty_sparing.sparing_tested`): bets and raises after the
   flop into the partner still in the pot, against the player's own rate in the same tournament and cell
   (street, players left, bet faced, a check before, preflop raise, table size) with other opponents in, under a
   Beta prior on the player's own rate over the window; a logit-normal effect per (pair, tournament) of the
   population's own variance between pairs; the exact lower tail.

A bystander's decisions with a player's strongest partner in are counted for
that pair only (:func:`detectors.features.gameplay.bounty_unshadowed`). The
four views (wide calls, all calls, presence, the all-in tests) are combined
by a weighted Bonferroni (``test_weights``) into the *main family*; weighted Benjamini–Hochberg
(Genovese, Roeder & Wasserman 2006; weights from the knockout events shared,
:meth:`BountyCollusionDetector.bh_weights`) controls it over the pairs that
could contest at least ``min_spots`` targets or faced ``min_decisions``
decisions together and met in at least ``min_events`` knockout events
(independent filtering, Bourgon, Gentleman & Huber, PNAS 2010) at
``alpha * (1 - pass_share)``. Bounty passing is a second family at
``alpha * pass_share``, with no events filter (a gang that passed bounties in
one tournament is tested): Gilbert's discrete BH (Stat. Probab. Lett. 2005)
over the pairs whose calls could reach significance at all (Tarone,
Biometrics 1990; :func:`detectors.features.gameplay.bounty_passing.tarone_selection`).
Sparing is a third family at ``alpha * spare_share`` (0, off, by default: at 0.25
it flagged an honest pair; docs/measurements.md, 2026-12-08), taken out of the
passing family's level: BH over the pairs of Tarone's selection on the smallest
attainable p (every decision without a bet). The levels sum to ``alpha``, which
bounds the false-discovery rate of the union; a family with no hypothesis
(fixed by the opportunities) leaves its level to the others. The pair's q-value is min(q_main / main level, q_pass /
passing level, q_spare / sparing level) on the scale of ``alpha``
(:meth:`BountyCollusionDetector.family_q`). A pair is flagged
(:meth:`BountyCollusionDetector.flag`) when that q-value is at most ``alpha``,
nothing else. Flagged pairs are grouped into rings
(:mod:`detectors.graphs`). This is the "collusive
opportunity" analysis of Smed, Knuutila & Hakonen (2006) made into a pairwise
own-baseline test.

Benign look-alikes considered, each with its figure in the case: bounty
hunters who chase bounties against everyone (each player's own continuation
rate with other players in, beside the population's: the tests hold each
player to their own; in bounty passing, their calls of other short stacks'
shoves), a desperate short stack shoving wide (the same player's shoves with
others in, in the same tournament, free to move from table to table), dry side pots checked down (the population's rate),
regulars at many final tables (own contest rates), tiny all-ins everyone
calls (per-spot rescaling).

Modules: :mod:`.queries` (the SQL and column lists), :mod:`.detector` (fit,
score, flag), :mod:`.evidence` (the case: evidence, hands, explain).

Score: −log10 q (ties broken by the p-value, at most +0.01), comparable within
the kind. The figures behind each rule are in docs/measurements.md ("Detector
notes moved from docstrings").
"""

from detectors.bounty_collusion.detector import BountyCollusionDetector
from detectors.bounty_collusion.queries import EVENTS_SQL, SPOTS_EVIDENCE_SQL, WIDE_COLS

__all__ = ["BountyCollusionDetector", "EVENTS_SQL", "SPOTS_EVIDENCE_SQL", "WIDE_COLS"]
