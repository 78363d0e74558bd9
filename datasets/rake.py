"""The house rules' cash-game rake: a percentage of the pot, rounded, capped by the players dealt in.

:class:`RakeRule` computes one pot's rake; :func:`rake_rule_for` picks the
house rules' USD rule for a stake (``shared/house-rules``, the ring-game rake
tables).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class RakeRule:
    """Cash-game rake: ``percent_bp`` basis points of the pot (450 = 4.5 %), capped.

    ``percent_bp`` is one int, or three for 2, 3-4 and 5+ players dealt in
    (the house rules' fixed-limit table varies the percentage too).
    ``caps`` are the caps in cents for 2, 3-4 and 5+ players dealt in.
    ``rounding`` is ``'half_even'`` (the house rules: "a true percentage
    using the round half to even method") or ``'down'``.
    """

    percent_bp: int | tuple[int, int, int]
    caps: tuple[int, int, int]
    rounding: str = "half_even"
    no_flop_no_drop: bool = True

    @staticmethod
    def _bucket(n_dealt: int) -> int:
        return 0 if n_dealt <= 2 else 1 if n_dealt <= 4 else 2

    def cap_for(self, n_dealt: int) -> int:
        """The cap for a hand with ``n_dealt`` players dealt in."""
        return self.caps[self._bucket(n_dealt)]

    def percent_for(self, n_dealt: int) -> int:
        """The percentage (basis points) for a hand with ``n_dealt`` players dealt in."""
        p = self.percent_bp
        return p if isinstance(p, int) else p[self._bucket(n_dealt)]

    def rake(self, pot: int, n_dealt: int, saw_flop: bool) -> int:
        """Rake in cents of a ``pot`` (cents): percent, rounded, capped; 0 without a flop."""
        if self.no_flop_no_drop and not saw_flop:
            return 0
        q, r = divmod(pot * self.percent_for(n_dealt), 10000)
        if self.rounding == "half_even":
            if 2 * r > 10000 or (2 * r == 10000 and q & 1):
                q += 1
        return min(q, self.cap_for(n_dealt))


# The house rules' USD ring-game rake tables: (small, big) in cents -> (basis
# points, caps for 2 / 3-4 / 5+ players).  No Limit / Pot Limit (first table
# and its $5/$10-and-above continuation):
_NLPL_USD = [
    ((1, 2), 350, (30, 30, 30)),
    ((2, 5), 415, (50, 50, 100)),
    ((5, 10), 450, (50, 100, 150)),
    ((10, 25), 450, (50, 100, 200)),
    ((25, 50), 500, (75, 75, 200)),
    ((50, 100), 500, (100, 100, 250)),
    ((100, 200), 500, (125, 125, 275)),
    ((200, 400), 500, (150, 150, 300)),
    ((250, 500), 500, (150, 150, 300)),
    ((300, 600), 500, (150, 150, 350)),
    ((500, 1000), 450, (150, 150, 300)),
    ((1000, 2000), 450, (175, 175, 300)),
    ((2500, 5000), 450, (225, 200, 300)),
    ((5000, 10000), 450, (250, 300, 500)),
    ((10000, 20000), 450, (300, 500, 500)),
]
# No Limit / Pot Limit Omaha micro stakes (the table the first one excludes):
_PLO_MICRO_USD = [
    ((1, 2), 330, (30, 30, 30)),
    ((2, 5), 390, (50, 50, 100)),
    ((5, 10), 425, (50, 100, 150)),
    ((10, 25), 425, (50, 100, 200)),
]
# Fixed Limit, keyed by small bet / big bet:
_FL_USD = [
    ((2, 4), 450, (1, 1, 1)),
    ((4, 8), 450, (4, 4, 4)),
    ((10, 20), 450, (10, 10, 10)),
    ((25, 50), 450, (16, 16, 16)),
    ((50, 100), 450, (40, 40, 40)),
    ((100, 200), (200, 300, 400), (50, 70, 80)),
    ((200, 400), (200, 300, 300), (50, 70, 125)),
    ((300, 600), (200, 300, 300), (50, 200, 300)),
    ((1000, 2000), (200, 250, 250), (50, 200, 300)),
    ((1500, 3000), (200, 200, 200), (100, 200, 300)),
    ((2000, 4000), 100, (100, 200, 300)),
    ((15000, 30000), 100, (200, 500, 500)),
]


def rake_rule_for(small_blind: int, big_blind: int, limit: str = "no_limit", game: str = "holdem") -> RakeRule:
    """The house rules' USD rake rule for a stake in cents: the listed stake at or below it.

    No-limit and pot-limit games use the NL/PL table (Omaha at the micro
    stakes up to $0.10/$0.25 its own lower percentages); fixed-limit games
    the Fixed Limit table keyed by small bet / big bet (``big_blind``,
    ``2 * big_blind``).  Stakes between two rows take the lower row (e.g.
    $0.06/$0.12 is in the "$0.05/$0.10 to $0.08/$0.16" row).
    """
    if limit == "fixed_limit":
        key = 2 * big_blind
        table = _FL_USD
    else:
        key = big_blind
        table = _PLO_MICRO_USD if game != "holdem" and big_blind <= 25 else _NLPL_USD
    chosen = table[0]
    for row in table:
        if row[0][1] <= key:
            chosen = row
    return RakeRule(chosen[1], chosen[2])


