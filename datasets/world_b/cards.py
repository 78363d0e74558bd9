"""Cards and seven-card hand evaluation for world B.

A card is an int 0..51: rank index ``c // 4`` (0 = deuce .. 12 = ace) and suit
``c % 4`` (c, d, h, s). :func:`evaluate` scores the best five-card hand of any
five to seven cards as one comparable int; :func:`describe` words it the way
PokerStars' showdown lines do ("a pair of Queens", "two pair, Jacks and Tens").

Method: rank and suit counting (no lookup tables); category in the high bits,
kickers in four-bit fields below, so a bigger int is a better hand.
"""

from __future__ import annotations

RANKS = "23456789TJQKA"
SUITS = "cdhs"
NAMES = ["Deuce", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
         "Jack", "Queen", "King", "Ace"]
PLURAL = ["Deuces", "Threes", "Fours", "Fives", "Sixes", "Sevens", "Eights", "Nines", "Tens",
          "Jacks", "Queens", "Kings", "Aces"]

HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, STRAIGHT_FLUSH = range(9)


def card_str(c: int) -> str:
    """Text of one card, e.g. ``Ah``."""
    return RANKS[c >> 2] + SUITS[c & 3]


def cards_str(cs) -> str:
    """Cards separated by spaces, as inside PokerStars' brackets."""
    return " ".join(RANKS[c >> 2] + SUITS[c & 3] for c in cs)


def _pack(cat: int, ks) -> int:
    v = cat
    for i in range(5):
        v = (v << 4) | (ks[i] if i < len(ks) else 0)
    return v


def _straight_top(mask: int) -> int:
    """Highest rank index topping a straight in the rank bit mask, or -1."""
    m = mask | ((mask >> 12) & 1)  # ace plays low: bit 12 copied below deuce
    m = (m << 1) | ((mask >> 12) & 1)
    for top in range(13, 3, -1):
        if (m >> (top - 4)) & 0x1F == 0x1F:
            return top - 1
    return -1


def evaluate(cards) -> int:
    """Score of the best five-card poker hand within ``cards`` (5-7 ints); bigger is better."""
    counts = [0] * 13
    suits = [0, 0, 0, 0]
    smask = [0, 0, 0, 0]
    mask = 0
    for c in cards:
        r = c >> 2
        s = c & 3
        counts[r] += 1
        suits[s] += 1
        smask[s] |= 1 << r
        mask |= 1 << r
    for s in range(4):
        if suits[s] >= 5:
            top = _straight_top(smask[s])
            if top >= 0:
                return _pack(STRAIGHT_FLUSH, [top])
            ks = [r for r in range(12, -1, -1) if smask[s] >> r & 1][:5]
            flush = _pack(FLUSH, ks)
            break
    else:
        flush = 0
    quads, trips, pairs, singles = [], [], [], []
    for r in range(12, -1, -1):
        n = counts[r]
        if n == 4:
            quads.append(r)
        elif n == 3:
            trips.append(r)
        elif n == 2:
            pairs.append(r)
        elif n == 1:
            singles.append(r)
    if quads:
        rest = [r for r in range(12, -1, -1) if counts[r] and r != quads[0]]
        return _pack(QUADS, [quads[0]] + rest[:1])
    if trips and (len(trips) > 1 or pairs):
        second = max(trips[1] if len(trips) > 1 else -1, pairs[0] if pairs else -1)
        return _pack(FULL, [trips[0], second])
    if flush:
        return flush
    top = _straight_top(mask)
    if top >= 0:
        return _pack(STRAIGHT, [top])
    if trips:
        return _pack(TRIPS, [trips[0]] + singles[:2])
    if len(pairs) >= 2:
        kick = max([p for p in pairs[2:]] + singles[:1] or [0])
        return _pack(TWO_PAIR, [pairs[0], pairs[1], kick])
    if pairs:
        return _pack(PAIR, [pairs[0]] + singles[:3])
    return _pack(HIGH, singles[:5])


def category(score: int) -> int:
    """Hand category (HIGH .. STRAIGHT_FLUSH) of an :func:`evaluate` score."""
    return score >> 20


def describe(score: int) -> str:
    """PokerStars' words for a hand score, e.g. ``a full house, Kings full of Tens``."""
    cat = score >> 20
    k = [(score >> (16 - 4 * i)) & 0xF for i in range(5)]
    if cat == STRAIGHT_FLUSH:
        if k[0] == 12:
            return "a Royal Flush"
        return f"a straight flush, {NAMES[k[0] - 4] if k[0] >= 4 else 'Ace'} to {NAMES[k[0]]}"
    if cat == QUADS:
        return f"four of a kind, {PLURAL[k[0]]}"
    if cat == FULL:
        return f"a full house, {PLURAL[k[0]]} full of {PLURAL[k[1]]}"
    if cat == FLUSH:
        return f"a flush, {NAMES[k[0]]} high"
    if cat == STRAIGHT:
        low = NAMES[k[0] - 4] if k[0] >= 4 else "Ace"
        return f"a straight, {low} to {NAMES[k[0]]}"
    if cat == TRIPS:
        return f"three of a kind, {PLURAL[k[0]]}"
    if cat == TWO_PAIR:
        return f"two pair, {PLURAL[k[0]]} and {PLURAL[k[1]]}"
    if cat == PAIR:
        return f"a pair of {PLURAL[k[0]]}"
    return f"high card {NAMES[k[0]]}"


def _chen(r1: int, r2: int, suited: bool) -> float:
    """Bill Chen's preflop score for two rank indices (Chen & Ankenman, 'The Mathematics of Poker')."""
    hi, lo = max(r1, r2), min(r1, r2)
    base = {12: 10.0, 11: 8.0, 10: 7.0, 9: 6.0}.get(hi, (hi + 2) / 2.0)
    if hi == lo:
        return max(5.0, base * 2)
    s = base + (2.0 if suited else 0.0)
    gap = hi - lo - 1
    s -= [0, 1, 2, 4][gap] if gap < 4 else 5
    if gap <= 1 and hi < 10:
        s += 1
    return s


def _preflop_table():
    """Percentile (0 worst .. 1 best) of every starting hand by Chen score, weighted by combos."""
    rows = []
    for a in range(13):
        for b in range(a, 13):
            if a == b:
                rows.append((_chen(a, b, False), 6, (a, b, False)))
            else:
                rows.append((_chen(a, b, True), 4, (a, b, True)))
                rows.append((_chen(a, b, False), 12, (a, b, False)))
    rows.sort()
    out, done = {}, 0
    for score, w, key in rows:
        out[key] = (done + w / 2) / 1326.0
        done += w
    return out


PREFLOP = _preflop_table()


def preflop_pct(c1: int, c2: int) -> float:
    """Strength percentile of a starting hand (1.0 = aces)."""
    a, b = c1 >> 2, c2 >> 2
    if a > b:
        a, b = b, a
    return PREFLOP[(a, b, (c1 & 3) == (c2 & 3) and a != b)]
