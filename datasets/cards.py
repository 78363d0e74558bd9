"""The rules of poker's cards: card codes, hand evaluation, descriptions.

Card codes
----------
A card is an int ``0..51`` equal to ``rank * 4 + suit`` where ``rank`` is
``0 = '2'`` .. ``8 = 'T'``, ``9 = 'J'``, ``10 = 'Q'``, ``11 = 'K'``, ``12 = 'A'``
and ``suit`` is ``0 = 'c'``, ``1 = 'd'``, ``2 = 'h'``, ``3 = 's'`` (the
alphabetical order, which is also the PokerStars tie-break order for high
card draws: clubs < diamonds < hearts < spades). So ``card >> 2`` is the rank
and ``card & 3`` the suit; ``parse_card('Ah') == 50``.

Hand values
-----------
:func:`evaluate` returns an int; a higher value is a better hand, equal values
tie exactly. The value is ``category << 20`` plus up to five 4-bit rank
nibbles (most significant first) that break ties inside the category:

====  ================  ==========================================
cat   class             nibbles
====  ================  ==========================================
0     high card         five ranks, high to low
1     pair              pair rank, three kickers
2     two pair          high pair, low pair, kicker
3     three of a kind   trips rank, two kickers
4     straight          top rank (the wheel A-2-3-4-5 has top '5')
5     flush             five ranks, high to low
6     full house        trips rank, pair rank
7     four of a kind    quads rank, kicker
8     straight flush    top rank
====  ================  ==========================================

Method: two lookup tables built once at import.  Hands without a flush are
valued from the multiset of their ranks alone: the key
``sum(5 ** rank)`` is unique for any multiset with at most four cards of a
rank (base-5 digits), so one dict maps every 5-, 6- and 7-card rank multiset
(74k entries) to its best non-flush value.  Flushes are valued from the
13-bit rank mask of the flush suit through an 8192-entry table (best straight
flush or best five flush cards).  The suit counts are packed in 4-bit nibbles
(``sum(1 << 4 * suit)``); a nibble reaches 5 exactly when
``(counts + 0x3333) & 0x8888`` has that nibble's top bit set.  With at most
seven cards only one suit can hold five, and then the hand is the better of
the flush-table and non-flush values (quads and full houses beat a flush;
a straight flush beats everything), so both tables are consulted and the
maximum taken.  :func:`evaluate_batch` does the same with numpy arrays on
an additive *state* per hand (:func:`hand_state`: the rank key split in two
fields, ranks 2-8 and 9-A, plus the suit counts in one int64, and the cards as
a suit-major bit set in another); the non-flush value is one lookup in a
dense table indexed by the two compacted rank fields (a few MB), the flush
suit's rank mask is a shift of the bit set.  States add, so a board's state is
built once and the cards drawn to it are added (:func:`evaluate_state`).

Also here: Omaha's exactly-two-hole-cards rule (:func:`evaluate_omaha`,
:func:`evaluate_omaha_batch`), eight-or-better lows for Omaha Hi/Lo
(:func:`evaluate_low8`, :func:`evaluate_omaha_low8`), PokerStars' hand
descriptions (:func:`describe`). All-in equity is :mod:`datasets.equity`.
"""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement
from typing import Sequence

import numpy as np

RANKS = "23456789TJQKA"
SUITS = "cdhs"

HAND_CLASSES = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)
HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)

_CARD_STR = [RANKS[c >> 2] + SUITS[c & 3] for c in range(52)]
_CARD_INT = {s: i for i, s in enumerate(_CARD_STR)}


def card_str(c: int) -> str:
    """Text of card ``c``: rank letter then suit letter, e.g. ``'Ah'``."""
    return _CARD_STR[c]


def parse_card(s: str) -> int:
    """Card code of ``'Ah'``-style text (rank ``23456789TJQKA``, suit ``cdhs``; ``10`` accepted for T)."""
    s = s.strip()
    if s[:2] == "10":
        s = "T" + s[2:]
    try:
        return _CARD_INT[s[0].upper() + s[1].lower()]
    except (KeyError, IndexError):
        raise ValueError(f"not a card: {s!r}") from None


def parse_cards(s: str) -> list[int]:
    """Cards of a space-separated text such as ``'Ah Kd 7c'`` (brackets allowed)."""
    return [parse_card(t) for t in s.replace("[", " ").replace("]", " ").split()]


def cards_str(cards: Sequence[int]) -> str:
    """Space-separated text of ``cards``, e.g. ``'Ah Kd'``."""
    return " ".join(_CARD_STR[c] for c in cards)


def hand_class(rank: int) -> str:
    """Class name of a hand value from :func:`evaluate`: ``'high card'`` .. ``'straight flush'``."""
    return HAND_CLASSES[rank >> 20]


def hand_category(rank: int) -> int:
    """Category number 0 (high card) .. 8 (straight flush) of a hand value."""
    return rank >> 20


# ----------------------------------------------------------------------------
# Table construction


def _pack(cat: int, ranks: Sequence[int]) -> int:
    v = cat
    for i in range(5):
        v = (v << 4) | (ranks[i] if i < len(ranks) else 0)
    return v


def _straight_top(mask: int) -> int:
    """Top rank of the best straight inside a 13-bit rank mask, or -1."""
    for top in range(12, 3, -1):
        m = 0b11111 << (top - 4)
        if mask & m == m:
            return top
    if mask & 0b1000000001111 == 0b1000000001111:  # A-2-3-4-5
        return 3
    return -1


def _value_nonflush(counts: Sequence[int]) -> int:
    """Best non-flush value of a rank multiset (counts per rank, 5..7 cards)."""
    present = [r for r in range(12, -1, -1) if counts[r]]
    quads = [r for r in present if counts[r] == 4]
    trips = [r for r in present if counts[r] == 3]
    pairs = [r for r in present if counts[r] == 2]
    if quads:
        q = quads[0]
        return _pack(QUADS, [q, next(r for r in present if r != q)])
    if trips and (len(trips) >= 2 or pairs):
        t = trips[0]
        p = max([r for r in trips[1:]] + pairs)
        return _pack(FULL_HOUSE, [t, p])
    mask = 0
    for r in present:
        mask |= 1 << r
    top = _straight_top(mask)
    if top >= 0:
        return _pack(STRAIGHT, [top])
    if trips:
        t = trips[0]
        return _pack(TRIPS, [t] + [r for r in present if r != t][:2])
    if len(pairs) >= 2:
        p1, p2 = pairs[0], pairs[1]
        return _pack(TWO_PAIR, [p1, p2, next(r for r in present if r != p1 and r != p2)])
    if pairs:
        p = pairs[0]
        return _pack(PAIR, [p] + [r for r in present if r != p][:3])
    return _pack(HIGH_CARD, present[:5])


def _value_flush_mask(mask: int) -> int:
    top = _straight_top(mask)
    if top >= 0:
        return _pack(STRAIGHT_FLUSH, [top])
    return _pack(FLUSH, [r for r in range(12, -1, -1) if mask >> r & 1][:5])


def _build_tables():
    nf: dict[int, int] = {}
    for n in (5, 6, 7):
        for combo in combinations_with_replacement(range(13), n):
            counts = [0] * 13
            for r in combo:
                counts[r] += 1
            if max(counts) > 4:
                continue
            key = sum(5**r for r in combo)
            nf[key] = _value_nonflush(counts)
    fl = [0] * 8192
    for mask in range(8192):
        if mask.bit_count() >= 5:
            fl[mask] = _value_flush_mask(mask)
    return nf, fl


_NF, _FL = _build_tables()
_RK = [5 ** (c >> 2) for c in range(52)]
_SK = [1 << (4 * (c & 3)) for c in range(52)]
_RBIT = [1 << (c >> 2) for c in range(52)]

# numpy versions for the batch evaluator: a hand's *state* is two additive int64 words, so the
# state of a hand plus one card is the sum of the two states (see :func:`hand_state`)
_LO_BITS, _LO_RANKS = 17, 7  # ranks 2..8 in the low field (base-5 key < 5**7 < 2**17), 9..A above
_STATE_SHIFT = 32  # suit-count nibbles above both rank fields
STATE_KEY = np.array(
    [(5 ** (c >> 2) if (c >> 2) < _LO_RANKS else 5 ** ((c >> 2) - _LO_RANKS) << _LO_BITS) + (_SK[c] << _STATE_SHIFT)
     for c in range(52)], dtype=np.int64)
# suit-major card bit (13 * suit + rank): a suit's rank mask is one shift and mask away
STATE_BIT = np.array([1 << (13 * (c & 3) + (c >> 2)) for c in range(52)], dtype=np.int64)


def _nf_table():
    """Non-flush values indexed by (compact low-rank key, compact high-rank key), and the two compactions."""
    keys = np.array(sorted(_NF), dtype=np.int64)
    vals = np.array([_NF[k] for k in keys.tolist()], dtype=np.int32)
    lo, hi = keys % 5 ** _LO_RANKS, keys // 5 ** _LO_RANKS
    lo_u, lo_i = np.unique(lo, return_inverse=True)
    hi_u, hi_i = np.unique(hi, return_inverse=True)
    lo_idx = np.zeros(1 << _LO_BITS, dtype=np.int32)  # the whole field: an impossible state reads 0, never fails
    lo_idx[lo_u] = np.arange(lo_u.size) * hi_u.size
    hi_idx = np.zeros(1 << 15, dtype=np.int32)
    hi_idx[hi_u] = np.arange(hi_u.size)
    table = np.zeros(lo_u.size * hi_u.size, dtype=np.int32)
    table[lo_i * hi_u.size + hi_i] = vals
    return lo_idx, hi_idx, table


_NF_LO, _NF_HI, _NF_TAB = _nf_table()
_FL_ARR = np.array(_FL, dtype=np.int32)
# flag nibbles of (suit counts + 0x3333) & 0x8888, shifted right by 3 -> shift of that suit's 13 rank bits
_FL_SHIFT = np.zeros(0x1001, dtype=np.int64)
_FL_SHIFT[[0x1, 0x10, 0x100, 0x1000]] = [0, 13, 26, 39]


# ----------------------------------------------------------------------------
# Evaluation


def evaluate(cards: Sequence[int]) -> int:
    """Value of the best five-card hold'em hand among 5, 6 or 7 cards (higher is better).

    Two table lookups (see the module docstring); about a microsecond a call.
    """
    k = 0
    s = 0
    for c in cards:
        k += _RK[c]
        s += _SK[c]
    v = _NF[k]
    t = (s + 0x3333) & 0x8888
    if t:
        suit = (t.bit_length() - 4) >> 2
        mask = 0
        for c in cards:
            if c & 3 == suit:
                mask |= _RBIT[c]
        fv = _FL[mask]
        if fv > v:
            v = fv
    return v


_OMAHA_HOLE_IDX = {h: list(combinations(range(h), 2)) for h in (4, 5, 6)}
_BOARD_IDX = {b: list(combinations(range(b), 3)) for b in (3, 4, 5)}


def evaluate_omaha(hole: Sequence[int], board: Sequence[int]) -> int:
    """Value of the best Omaha high hand: exactly two of the 4-6 hole cards and three board cards.

    Enumerates every (2 hole, 3 board) choice (60 for PLO on a full board)
    and takes the best five-card value from :func:`evaluate`.
    """
    best = -1
    hs = [(hole[i], hole[j]) for i, j in _OMAHA_HOLE_IDX[len(hole)]]
    bs = [(board[i], board[j], board[k]) for i, j, k in _BOARD_IDX[len(board)]]
    for a, b in hs:
        ka = _RK[a] + _RK[b]
        sa = _SK[a] + _SK[b]
        for x, y, z in bs:
            k = ka + _RK[x] + _RK[y] + _RK[z]
            s = sa + _SK[x] + _SK[y] + _SK[z]
            v = _NF[k]
            if (s + 0x3333) & 0x8888:
                v = _FL[_RBIT[a] | _RBIT[b] | _RBIT[x] | _RBIT[y] | _RBIT[z]]
            if v > best:
                best = v
    return best


def evaluate_batch(cards: np.ndarray) -> np.ndarray:
    """Hold'em values of many hands at once: ``(n, k)`` card codes, ``k`` in 5..7 -> ``(n,)`` int32.

    Vectorised form of :func:`evaluate`: the row's state (:func:`hand_state`)
    is valued by :func:`evaluate_state`: the rank key in the dense non-flush
    table, and the flush suit's rank mask (if a suit holds five) in the flush
    table, the larger value winning.  Equal to ``evaluate`` row by row.
    """
    cards = np.asarray(cards)
    if cards.ndim != 2 or not 5 <= cards.shape[1] <= 7:
        raise ValueError("evaluate_batch wants an (n, 5..7) array of card codes")
    if cards.shape[0] > _CHUNK:  # bound the temporaries on very large inputs
        return np.concatenate([_evaluate_rows(cards[i:i + _CHUNK]) for i in range(0, cards.shape[0], _CHUNK)])
    return _evaluate_rows(cards)


_CHUNK = 1 << 20


def _evaluate_rows(cards: np.ndarray) -> np.ndarray:
    key, bits = hand_state(cards)
    return evaluate_state(key, bits)


def hand_state(cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The additive state ``(key, bits)`` of ``(n, k)`` card codes (-1 entries count as no card).

    ``key`` packs the base-5 rank key in two fields (ranks 2-8 and 9-A) and the
    suit counts; ``bits`` is the set of cards, suit-major. Both are sums over
    the cards (``STATE_KEY[c]``, ``STATE_BIT[c]``), so the state of a hand plus
    more cards is the sum of the states: a board's state is built once and
    each drawn card added to it. :func:`evaluate_state` values a state of 5-7 cards.
    """
    cards = np.asarray(cards)
    c = cards.astype(np.intp, copy=False)
    absent = c < 0
    key = STATE_KEY[c]
    bits = STATE_BIT[c]
    if absent.any():
        key[absent] = 0
        bits[absent] = 0
    return key.sum(axis=1), bits.sum(axis=1)


def evaluate_state(key: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Hold'em values (as :func:`evaluate`) of hand states from :func:`hand_state` holding 5-7 cards.

    The non-flush value is one lookup in a table indexed by the compacted low-
    and high-rank fields of the key; the flush suit (if any) is read from the
    suit-count nibbles and its 13-bit rank mask from ``bits``, valued in the
    flush table (0 when no suit holds five: fewer than five bits); the larger wins.
    """
    nf = _NF_TAB[_NF_LO[key & ((1 << _LO_BITS) - 1)] + _NF_HI[(key >> _LO_BITS) & ((1 << 15) - 1)]]
    t = (((key >> _STATE_SHIFT) + 0x3333) & 0x8888) >> 3
    fl = _FL_ARR[(bits >> _FL_SHIFT[t]) & 0x1FFF]
    return np.maximum(nf, fl)


def evaluate_omaha_batch(hole: np.ndarray, board: np.ndarray) -> np.ndarray:
    """Omaha high values of many hands: ``hole`` ``(n, 4..6)``, ``board`` ``(n, 3..5)`` -> ``(n,)``.

    For each of the C(h,2) x C(b,3) two-plus-three choices, evaluates the
    five-card hands (sums of the cards' states, :func:`evaluate_state`) and keeps the row maximum.
    """
    hole = np.asarray(hole, dtype=np.intp)
    board = np.asarray(board, dtype=np.intp)
    hk, hb = STATE_KEY[hole], STATE_BIT[hole]
    bk, bb = STATE_KEY[board], STATE_BIT[board]
    best = np.full(hole.shape[0], -1, dtype=np.int32)
    for i, j in _OMAHA_HOLE_IDX[hole.shape[1]]:
        k2, b2 = hk[:, i] + hk[:, j], hb[:, i] + hb[:, j]
        for a, b, c in _BOARD_IDX[board.shape[1]]:
            np.maximum(best, evaluate_state(k2 + bk[:, a] + bk[:, b] + bk[:, c], b2 + bb[:, a] + bb[:, b] + bb[:, c]),
                       out=best)
    return best


# ----------------------------------------------------------------------------
# Eight-or-better low (Omaha Hi/Lo)

NO_LOW = -1
_LOW_RANK = [((c >> 2) + 1) % 13 for c in range(52)]  # A -> 0, 2 -> 1, ..., 8 -> 7, 9.. -> 8..


def _low_value(ranks_desc: Sequence[int]) -> int:
    # lower cards are better: invert each low rank (0..7) so a higher value is a better low
    v = 0
    for r in ranks_desc:
        v = (v << 4) | (7 - r)
    return v


def evaluate_low8(cards: Sequence[int]) -> int:
    """Eight-or-better low value of the best five of 5-7 cards (higher is better), or ``NO_LOW`` (-1).

    A low needs five different ranks from A-8 (aces low; straights and
    flushes do not count against it).  Method: take the distinct low ranks
    present; with five or more, the best low is the five smallest.  Lows
    compare from the highest card down (8-6-4-3-2 beats 8-7-3-2-A).  The
    value packs the inverted ranks
    so that a larger int is a better low; the wheel 5-4-3-2-A is the best.
    """
    m = 0
    for c in cards:
        r = _LOW_RANK[c]
        if r < 8:
            m |= 1 << r
    if m.bit_count() < 5:
        return NO_LOW
    ranks = [r for r in range(8) if m >> r & 1][:5]
    return _low_value(ranks[::-1])


def evaluate_omaha_low8(hole: Sequence[int], board: Sequence[int]) -> int:
    """Omaha eight-or-better low: exactly two hole cards and three board cards, or ``NO_LOW``.

    Enumerates the two-plus-three choices and keeps the best five-distinct
    low (see :func:`evaluate_low8`).
    """
    best = NO_LOW
    lh = [_LOW_RANK[c] for c in hole]
    lb = [_LOW_RANK[c] for c in board]
    for i, j in _OMAHA_HOLE_IDX[len(hole)]:
        a, b = lh[i], lh[j]
        if a >= 8 or b >= 8 or a == b:
            continue
        for x, y, z in _BOARD_IDX[len(board)]:
            rs = {a, b, lb[x], lb[y], lb[z]}
            if len(rs) == 5 and max(rs) < 8:
                v = _low_value(sorted(rs, reverse=True))
                if v > best:
                    best = v
    return best


def describe_low(value: int) -> str:
    """PokerStars' words for a low, e.g. ``'8,6,4,3,A'`` (as in ``shows [..] (Lo: 8,6,4,3,A)``)."""
    names = "A2345678"
    return ",".join(names[7 - r] for r in value_ranks(value))


# ----------------------------------------------------------------------------
# Descriptions in the PokerStars wording

_RANK_NAME = ["Deuce", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
              "Jack", "Queen", "King", "Ace"]
_RANK_PLURAL = ["Deuces", "Threes", "Fours", "Fives", "Sixes", "Sevens", "Eights", "Nines",
                "Tens", "Jacks", "Queens", "Kings", "Aces"]


def value_ranks(rank: int) -> list[int]:
    """The five rank nibbles of a hand value, most significant first."""
    return [(rank >> (16 - 4 * i)) & 15 for i in range(5)]


def _straight_span(top: int) -> str:
    """'Six to Ten' for a straight topped by *top* (the wheel, top Five, starts at the Ace)."""
    low = top - 4 if top != 3 else 12
    return f"{_RANK_NAME[low]} to {_RANK_NAME[top]}"


def describe(rank: int) -> str:
    """PokerStars' words for a hand value, as in ``shows [..] (two pair, Kings and Deuces)``."""
    cat = rank >> 20
    r = value_ranks(rank)
    if cat == HIGH_CARD:
        return f"high card {_RANK_NAME[r[0]]}"
    if cat == PAIR:
        return f"a pair of {_RANK_PLURAL[r[0]]}"
    if cat == TWO_PAIR:
        return f"two pair, {_RANK_PLURAL[r[0]]} and {_RANK_PLURAL[r[1]]}"
    if cat == TRIPS:
        return f"three of a kind, {_RANK_PLURAL[r[0]]}"
    if cat == STRAIGHT:
        return f"a straight, {_straight_span(r[0])}"
    if cat == FLUSH:
        return f"a flush, {_RANK_NAME[r[0]]} high"
    if cat == FULL_HOUSE:
        return f"a full house, {_RANK_PLURAL[r[0]]} full of {_RANK_PLURAL[r[1]]}"
    if cat == QUADS:
        return f"four of a kind, {_RANK_PLURAL[r[0]]}"
    if r[0] == 12:
        return "a Royal Flush"
    return f"a straight flush, {_straight_span(r[0])}"
