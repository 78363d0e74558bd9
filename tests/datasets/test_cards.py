"""The evaluator against a brute-force reference, batch == scalar, Omaha's two-card rule, equity."""

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from datasets.cards import (
    card_str,
    cards_str,
    describe,
    evaluate,
    evaluate_batch,
    evaluate_omaha,
    evaluate_omaha_batch,
    hand_class,
    parse_card,
    parse_cards,
    value_ranks,
)
from datasets.equity import equity


def ref5(cards):
    """Straightforward classifier of exactly five cards -> (category, tie-break ranks)."""
    ranks = [c // 4 for c in cards]
    suits = [c % 4 for c in cards]
    cnt = Counter(ranks)
    # ranks ordered by (count, rank) descending, each once
    order = sorted(cnt, key=lambda r: (cnt[r], r), reverse=True)
    shape = sorted(cnt.values(), reverse=True)
    flush = len(set(suits)) == 1
    distinct = sorted(set(ranks))
    straight_top = None
    if len(distinct) == 5:
        if distinct[-1] - distinct[0] == 4:
            straight_top = distinct[-1]
        elif distinct == [0, 1, 2, 3, 12]:
            straight_top = 3
    if straight_top is not None and flush:
        return (8, [straight_top])
    if shape == [4, 1]:
        return (7, order)
    if shape == [3, 2]:
        return (6, order)
    if flush:
        return (5, sorted(ranks, reverse=True))
    if straight_top is not None:
        return (4, [straight_top])
    if shape == [3, 1, 1]:
        return (3, order)
    if shape == [2, 2, 1]:
        return (2, order)
    if shape == [2, 1, 1, 1]:
        return (1, order)
    return (0, order)


def ref_best(cards):
    return max(ref5(list(c)) for c in combinations(cards, 5))


def decode(v):
    cat = v >> 20
    n = {0: 5, 1: 4, 2: 3, 3: 3, 4: 1, 5: 5, 6: 2, 7: 2, 8: 1}[cat]
    return (cat, value_ranks(v)[:n])


def test_card_codes_round_trip():
    assert parse_card("Ah") == 12 * 4 + 2
    assert parse_card("2c") == 0
    assert parse_card("As") == 51
    assert all(parse_card(card_str(c)) == c for c in range(52))
    assert cards_str(parse_cards("[Ah Kd 7c]")) == "Ah Kd 7c"
    with pytest.raises(ValueError):
        parse_card("Xx")


def test_random_seven_card_hands_match_reference():
    rng = np.random.default_rng(11)
    for _ in range(3000):
        hand = rng.permutation(52)[:7].tolist()
        assert decode(evaluate(hand)) == ref_best(hand), cards_str(hand)


def test_random_five_and_six_card_hands_match_reference():
    rng = np.random.default_rng(12)
    for k in (5, 6):
        for _ in range(1500):
            hand = rng.permutation(52)[:k].tolist()
            assert decode(evaluate(hand)) == ref_best(hand), cards_str(hand)


# Every class, with the edge cases a table evaluator gets wrong.
CASES = [
    ("Ah Kh Qh Jh Th 2c 3d", "straight flush", "a Royal Flush"),
    ("5s 4s 3s 2s As Kd Kc", "straight flush", "a straight flush, Ace to Five"),  # steel wheel
    ("9d 8d 7d 6d 5d 4d Ad", "straight flush", "a straight flush, Five to Nine"),
    ("Ac Ad Ah As Kd 2c 3c", "four of a kind", "four of a kind, Aces"),
    ("Kc Kd Kh Qs Qd Qc 2c", "full house", "a full house, Kings full of Queens"),  # two trips
    ("Kc Kd Kh Qs Qd 2c 2d", "full house", "a full house, Kings full of Queens"),
    ("Ah 9h 7h 4h 2h 3c 5d", "flush", "a flush, Ace high"),  # flush beats the wheel
    ("Ah 2c 3d 4s 5h 9c Kd", "straight", "a straight, Ace to Five"),  # wheel
    ("Ah Kc Qd Js Th 9c 8d", "straight", "a straight, Ten to Ace"),
    ("7c 7d 7h As Kd 2c 3d", "three of a kind", "three of a kind, Sevens"),
    ("7c 7d 2h 2s Kd Kc 3d", "two pair", "two pair, Kings and Sevens"),  # three pairs
    ("Jc Jd 2h 5s 9d Kc 3d", "pair", "a pair of Jacks"),
    ("Ac Jd 2h 5s 9d Kc 3d", "high card", "high card Ace"),
]


@pytest.mark.parametrize("text,cls,desc", CASES)
def test_each_hand_class(text, cls, desc):
    cards = parse_cards(text)
    v = evaluate(cards)
    assert hand_class(v) == cls
    assert describe(v) == desc
    assert decode(v) == ref_best(cards)


def test_tie_breaks_and_kickers():
    board = parse_cards("Kd 8c 5h 2s 3d")
    # kicker decides
    assert evaluate(parse_cards("Kc Qd") + board) > evaluate(parse_cards("Ks Jd") + board)
    # both play the board's broadway straight: exact tie
    b2 = parse_cards("Ah Kh Qd Jc Tc")
    assert evaluate(parse_cards("2c 3d") + b2) == evaluate(parse_cards("4c 5d") + b2)
    # full house: trips rank first, then pair
    b3 = parse_cards("9c 9d 9h 4s 4d")
    assert evaluate(parse_cards("Ac Ad") + b3) > evaluate(parse_cards("5c 5d") + b3)
    assert evaluate(parse_cards("4c 2d") + b3) < evaluate(parse_cards("Ac Ad") + b3)  # nines full of fours
    assert evaluate(parse_cards("9s 2d") + b3) > evaluate(parse_cards("Ac Ad") + b3)  # quads
    # wheel loses to six-high straight
    assert evaluate(parse_cards("Ah 2c 3d 4s 5h")) < evaluate(parse_cards("6h 2c 3d 4s 5h"))
    # two pair: fifth card kicker
    b4 = parse_cards("Kc Kd 7h 7s 2d")
    assert evaluate(parse_cards("Ac 3d") + b4) > evaluate(parse_cards("Qc 3h") + b4)


def test_batch_equals_scalar():
    rng = np.random.default_rng(5)
    for k in (5, 6, 7):
        hands = np.array([rng.permutation(52)[:k] for _ in range(4000)])
        batch = evaluate_batch(hands)
        assert batch.tolist() == [evaluate(h) for h in hands.tolist()]
    # flush-rich rows exercise the flush path
    hands = np.array([[s + 4 * r for r in rng.choice(13, 6, replace=False)] + [int(rng.integers(52))]
                      for s in range(4) for _ in range(300)])
    hands = hands[[len(set(h)) == 7 for h in hands.tolist()]]
    assert evaluate_batch(hands).tolist() == [evaluate(h) for h in hands.tolist()]


def ref_omaha(hole, board):
    return max(ref5(list(h) + list(b)) for h in combinations(hole, 2) for b in combinations(board, 3))


def test_omaha_uses_exactly_two_hole_cards():
    # four hearts in hand + three on board is only a flush with exactly two of them
    hole = parse_cards("Ah Kh Qh Jh")
    board = parse_cards("2h 3h 9c 9d 5s")
    v = evaluate_omaha(hole, board)
    assert hand_class(v) == "pair"  # no flush: only 2h 3h + two hole hearts = 4 hearts
    board2 = parse_cards("2h 3h 4h 9d 9s")
    assert hand_class(evaluate_omaha(hole, board2)) == "flush"
    # one ace in hand does not make a straight with AKQJ... needs two
    assert hand_class(evaluate_omaha(parse_cards("As 2c 2d 7h"), parse_cards("Kd Qc Jh Ts 3c"))) == "pair"
    # board quads: holding quads on board, hold'em would play them; Omaha must use two cards
    v3 = evaluate_omaha(parse_cards("2c 3d 7h 8s"), parse_cards("Kd Kc Kh Ks Ac"))
    assert hand_class(v3) == "three of a kind"


def test_omaha_random_against_reference_and_batch():
    rng = np.random.default_rng(8)
    for h in (4, 5):
        holes, boards = [], []
        for _ in range(300 if h == 4 else 150):
            d = rng.permutation(52)
            hole, board = d[:h].tolist(), d[h:h + 5].tolist()
            assert decode(evaluate_omaha(hole, board)) == ref_omaha(hole, board)
            holes.append(hole)
            boards.append(board)
        batch = evaluate_omaha_batch(np.array(holes), np.array(boards))
        assert batch.tolist() == [evaluate_omaha(a, b) for a, b in zip(holes, boards)]


def test_equity_exact_on_river_and_turn():
    board = parse_cards("2c 7d 9s Jh 3c")
    e = equity([parse_cards("Ah Ad"), parse_cards("Kc Kd")], board)
    assert e.tolist() == [1.0, 0.0]
    e = equity([parse_cards("Ah Kd"), parse_cards("As Kc")], board)
    assert e.tolist() == [0.5, 0.5]
    # turn: AA vs KK, KK has two outs among 44 river cards
    e = equity([parse_cards("Ah Ad"), parse_cards("Kc Kd")], board[:4])
    assert e[1] == pytest.approx(2 / 44)


def test_equity_monte_carlo_preflop():
    rng = np.random.default_rng(0)
    e = equity([parse_cards("Ah Ad"), parse_cards("Kc Kd")], [], rng, n=20000)
    assert e.sum() == pytest.approx(1.0)
    assert 0.80 < e[0] < 0.84  # AA vs KK is about 82 %


def test_batch_in_chunks_equals_one_pass(monkeypatch):
    import datasets.cards as C

    rng = np.random.default_rng(3)
    hands = np.array([rng.permutation(52)[:7] for _ in range(5000)], dtype=np.int8)
    whole = C.evaluate_batch(hands)
    monkeypatch.setattr(C, "_CHUNK", 777)
    assert C.evaluate_batch(hands).tolist() == whole.tolist()


def ref_low(five):
    """A qualifying 8-or-better low of exactly five cards as its descending ranks (lower is better), or None."""
    r = sorted({((c // 4) + 1) % 13 for c in five}, reverse=True)
    if len(r) == 5 and r[0] < 8:
        return tuple(r)
    return None


def test_low8_against_reference():
    from datasets.cards import NO_LOW, describe_low, evaluate_low8, evaluate_omaha_low8

    assert describe_low(evaluate_low8(parse_cards("5c 4d 3h 2s Ac Kd Kc"))) == "5,4,3,2,A"
    assert evaluate_low8(parse_cards("9c 9d Th 2s Ac Kd Kc")) == NO_LOW
    assert evaluate_low8(parse_cards("8c 6d 4h 3s 2c")) > evaluate_low8(parse_cards("8c 7d 2h 3s Ac"))
    rng = np.random.default_rng(21)
    for _ in range(800):
        hand = rng.permutation(52)[:7].tolist()
        lows = [x for x in (ref_low(c) for c in combinations(hand, 5)) if x]
        v = evaluate_low8(hand)
        if not lows:
            assert v == NO_LOW
        else:
            assert describe_low(v) == ",".join("A2345678"[r] for r in min(lows))
    for _ in range(400):
        d = rng.permutation(52).tolist()
        hole, board = d[:4], d[4:9]
        lows = [x for x in (ref_low(h + b) for h in combinations(hole, 2) for b in combinations(board, 3)) if x]
        v = evaluate_omaha_low8(hole, board)
        if not lows:
            assert v == NO_LOW
        else:
            assert describe_low(v) == ",".join("A2345678"[r] for r in min(lows))
    # Omaha: a low needs two hole cards; three low board cards + one low hole card is no low
    assert evaluate_omaha_low8(parse_cards("Ac Kd Qh Js"), parse_cards("2c 3d 4h 9s Tc")) == NO_LOW


def test_omaha_equity_on_the_turn_matches_enumeration():
    hole_a, hole_b = parse_cards("Ah Ad Kc Qd"), parse_cards("Js Ts 9h 8h")
    board = parse_cards("2s 7s Jd 3c")
    e = equity([hole_a, hole_b], board)
    seen = set(hole_a + hole_b + board)
    wins = 0.0
    rivers = [c for c in range(52) if c not in seen]
    for r in rivers:
        va, vb = evaluate_omaha(hole_a, board + [r]), evaluate_omaha(hole_b, board + [r])
        wins += 1.0 if va > vb else 0.5 if va == vb else 0.0
    assert e[0] == pytest.approx(wins / len(rivers))


def test_equity_batch_equals_equity_exactly_on_turn_and_river():
    from datasets.equity import equity_batch

    rng = np.random.default_rng(4)
    for b, game, h in ((5, "holdem", 2), (4, "holdem", 2), (4, "omaha", 4), (3, "holdem", 2)):
        holes, boards = [], []
        for _ in range(40):
            d = rng.permutation(52)
            holes.append(d[:3 * h].reshape(3, h))
            boards.append(d[3 * h:3 * h + b])
        holes, boards = np.array(holes), np.array(boards)
        got = equity_batch(holes, boards, game=game, exact_max_cards=2, max_rows=5000)
        for i in range(len(holes)):
            want = equity([x.tolist() for x in holes[i]], boards[i].tolist(), game=game)
            assert got[i] == pytest.approx(want)


def test_equity_batch_monte_carlo_preflop():
    from datasets.equity import equity_batch

    holes = np.array([[parse_cards("Ah Ad"), parse_cards("Kc Kd")]] * 20)
    e = equity_batch(holes, np.empty((20, 0), dtype=int), np.random.default_rng(1), n=1000)
    assert e.shape == (20, 2)
    assert np.allclose(e.sum(axis=1), 1.0)
    assert 0.80 < e[:, 0].mean() < 0.84
