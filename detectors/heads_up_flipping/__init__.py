"""Heads-up flipping: two accounts settling their heads-up matches by an all-in coin flip.

House rules 003: "Players are obligated to play out their heads-up matches in
a normal way, regardless of the identity of their opponent. Any 'flipping' ...
is prohibited. ... This rule does not apply to the final match of a scheduled
heads-up tournament."

Method
------
The hands of heads-up matches (tournaments played two-handed throughout) are
collected with each hand's effective stack in big blinds, the hand's number in
its match, and whether it was a **weak flip**: both players committed the
effective stack preflop and the weaker starting hand lies below ``weak_pct``
(:mod:`detectors.heads_up_flipping.spots`). The final match of a scheduled
heads-up tournament is left out. For each pair, the weak flips between them
are counted and tested, depth bin by depth bin, against the two players' own
weak-flip rate against other opponents, shrunk towards the population's rate
in that bin (a Beta prior of ``prior_strength`` hands); the count's predictive
tail (a negative binomial: the rates are estimates) is the p-value, and
Benjamini–Hochberg across the pairs, each pair weighted by the matches the two
played together (flipping is settled again and again between the same two
accounts; the schedule, not the flips, fixes that number), gives the q-value.
A pair is flagged iff q <= ``alpha``, it flipped at least ``min_flips`` times
and in at least ``min_flip_matches`` of its matches (flips within one match are two
loose players meeting once, not an agreement).

Conditioning on depth is the test of the benign explanation: under
``min_depth_bb`` big blinds push-or-fold forces all-ins with wide ranges, and
hyper-turbo structures get there in a few hands; those hands are left out of the
count (the case shows how many of the pair's weak flips came there, against the
room's short-stack rate), and at depth the null is conditioned on the depth bin.
The case also says how early in the match the flips came.

References: Benjamini & Hochberg, JRSS B 1995 (false discovery rate); Genovese,
Roeder & Wasserman, Biometrika 2006 (weighted BH,
:func:`detectors.stats.weighted_bh_pvalues`); the predictive tail is
:func:`detectors.stats.predictive_count_tail`.
"""

from detectors.heads_up_flipping.detector import HeadsUpFlippingDetector

__all__ = ["HeadsUpFlippingDetector"]
