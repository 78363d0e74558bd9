"""Heads-up flipping on small warehouses built row by row: the flipping pair is found, short-stack
shoves, strong-hand coolers and the exempt final of a scheduled heads-up tournament are not."""

from __future__ import annotations

import datetime as dt
import random

from tests.detect.conftest import _insert, new_warehouse

from detectors.heads_up_flipping import HeadsUpFlippingDetector

BB = 20.0
WEAK = (["7c", "2d"], ["9h", "4s"])      # both far below the 60th percentile
STRONG = (["Ah", "As"], ["Kd", "Kc"])    # a cooler: both would commit at any depth
FLIPPERS = ("O'Brien \"flip\"", "🃏 back\\slash")


class _Builder:
    def __init__(self, seed: int = 3):
        self.con = new_warehouse()
        self.rng = random.Random(seed)
        self.hands, self.seats, self.actions, self.holes = [], [], [], []
        self.t = dt.datetime(2026, 3, 4, 12, 0)
        self.n = 0

    def hand(self, tid: str, a: str, b: str, eff_bb: float, flip: bool, cards=None) -> None:
        self.n += 1
        hid = str(500000 + self.n)
        self.t += dt.timedelta(seconds=40)
        stack = eff_bb * BB
        self.hands.append((hid, "PokerStars", False, "holdem", False, "no_limit", "CHIPS", True, tid, "I", BB / 2, BB,
                           None, self.t, None, self.t.date(), f"{tid} 1", 2, 1, 2, 0.0, 0.0, False, True, None, "f",
                           self.n, hid))
        put = {a: stack if flip else BB / 2, b: stack if flip else BB}
        for seat, p in ((1, a), (2, b)):
            net = -put[p] + (sum(put.values()) if p == b else 0.0)
            self.seats.append((hid, seat, p, stack, None, False, True, "BTN" if p == a else "BB", put[p], 0.0,
                               put[p] + net, net, stack + net, False))
        acts = [(a, "post_sb", BB / 2, False), (b, "post_bb", BB, False)]
        acts += [(a, "raise", stack - BB / 2, True), (b, "call", stack - BB, True)] if flip else [(a, "fold", 0.0, False)]
        pot = 0.0
        for seq, (p, act, amt, allin) in enumerate(acts):
            self.actions.append((hid, seq, "preflop", p, act, amt, stack if act == "raise" else None, allin, pot, 0.0, 2))
            pot += amt
        ca, cb = cards or (["8c", "3d"], ["Jh", "5s"])
        self.holes += [(hid, a, ca, "dealt"), (hid, b, cb, "dealt")]

    def match(self, tid: str, a: str, b: str, n: int, eff_bb: float = 75.0, flips=(), cards=WEAK) -> None:
        """``n`` hands between a and b (a < b), the hands numbered in ``flips`` flipped with ``cards``."""
        a, b = sorted((a, b))
        for i in range(n):
            self.hand(tid, a, b, eff_bb, i in flips, cards if i in flips else None)

    def con_(self):
        for t, rows in (("hands", self.hands), ("seats", self.seats), ("actions", self.actions),
                        ("hole_cards", self.holes)):
            _insert(self.con, t, rows)
        return self.con


def _world(*, flipper_matches: int = 6, short_pair: bool = False, cooler_pair: bool = False,
           finals_only: bool = False, gambler: bool = False) -> _Builder:
    w = _Builder()
    regs = [f"reg{i:02d}" for i in range(14)] + list(FLIPPERS)
    tid = 4000
    for _ in range(40):  # honest matches: no weak flip at depth
        a, b = w.rng.sample(regs, 2)
        tid += 1
        w.match(str(tid), a, b, 10)
    if not finals_only:
        for _ in range(flipper_matches):  # the pair flips in the first hand of most of their matches
            tid += 1
            w.match(str(tid), *FLIPPERS, n=3, flips=(0,))
    else:  # the same flips, each in the final of a scheduled bracket of four: exempt
        for _ in range(flipper_matches):
            tid += 1
            others = w.rng.sample([r for r in regs if r not in FLIPPERS], 2)
            w.match(str(tid), FLIPPERS[0], others[0], 5)
            w.match(str(tid), FLIPPERS[1], others[1], 5)
            w.match(str(tid), *FLIPPERS, n=1, flips=(0,))
    if short_pair:  # hyper-turbo rivals at 5 bb: push-or-fold, weak all-ins are forced
        for _ in range(8):
            tid += 1
            w.match(str(tid), "reg00", "reg01", n=4, eff_bb=5.0, flips=(0, 1, 2))
    if gambler:  # reg04 flips with any cards against everyone, and meets reg05 again and again
        for k in range(24):
            tid += 1
            w.match(str(tid), "reg04", "reg05" if k < 8 else f"reg{6 + k % 8:02d}", n=10, flips=(0,))
        for _ in range(100):  # a room large enough for its rate to be the gambler's tenth of his
            tid += 1
            w.match(str(tid), *w.rng.sample(["reg00", "reg01", "reg02", "reg03"], 2), n=10)
    if cooler_pair:  # deep all-ins with hands both would commit
        for _ in range(8):
            tid += 1
            w.match(str(tid), "reg02", "reg03", n=3, flips=(0,), cards=STRONG)
    return w


def _flagged(con, **kw) -> list[list[str]]:
    return [sorted(s.accounts) for s in HeadsUpFlippingDetector(**kw).detect(con) if s.flagged]


def test_the_flipping_pair_is_flagged_with_hostile_names():
    con = _world().con_()
    sig = [s for s in HeadsUpFlippingDetector().detect(con) if s.flagged]
    assert [sorted(s.accounts) for s in sig] == [sorted(FLIPPERS)]
    s = sig[0]
    assert len(s.hands) == 6 and len(s.tournaments) == 6  # the weak flips at depth, one a match
    assert s.evidence[0].value == 6 and s.evidence[0].baseline < 0.5
    assert "$player" in s.evidence[0].sql and FLIPPERS[0] not in s.evidence[0].sql  # bound, never pasted
    shown = con.execute(s.evidence[0].sql, {"player": FLIPPERS[0], "opponent": FLIPPERS[1]}).fetchall()
    assert sorted(r[0] for r in shown) == sorted(s.hands)  # the reproduction query lists the flips
    assert "Short stacks must shove" in s.benign


def test_short_stack_shoves_and_coolers_are_not_flagged():
    con = _world(short_pair=True, cooler_pair=True).con_()
    assert _flagged(con) == [sorted(FLIPPERS)]
    # the depth rule is what spares the short-stack pair: counting every depth flags it
    assert sorted(["reg00", "reg01"]) in _flagged(con, min_depth_bb=0.0, depth_bins=())


def test_the_final_of_a_scheduled_heads_up_tournament_is_exempt():
    assert _flagged(_world(finals_only=True).con_()) == []
    det = HeadsUpFlippingDetector().fit(_world(finals_only=True).con_())
    assert det.exempt_ == 6


def test_two_flips_are_not_enough():
    assert _flagged(_world(flipper_matches=2).con_()) == []


def test_a_gambler_who_flips_with_everyone_is_not_flagged_with_a_rival():
    con = _world(gambler=True).con_()
    assert not any("reg04" in f for f in _flagged(con))
    # the gambler's own rate against other opponents is what explains the rival's eight flips: the room's
    # rate alone (an own baseline of no weight) flags the pair
    assert sorted(["reg04", "reg05"]) in _flagged(con, prior_strength=1e9)


def _crowded_room() -> _Builder:
    """A room of 300 one-off matches (a weak flip at depth in every tenth: gamblers), the two flippers'
    own matches against others (no flip), honest rivals who meet six times and flip once (the room's rate),
    and the flippers, who meet six times and flip in three of their matches."""
    w = _Builder()
    regs = [f"reg{i:02d}" for i in range(60)]
    pairs = [(a, b) for i, a in enumerate(regs) for b in regs[i + 1:]]
    w.rng.shuffle(pairs)
    tid = 6000
    for j in range(300):
        tid += 1
        w.match(str(tid), *pairs[j], n=10, flips=(5,) if j % 10 == 0 else ())
    for f in FLIPPERS:
        for o in regs[:10]:
            tid += 1
            w.match(str(tid), f, o, n=10)
    for j in range(6):
        tid += 1
        w.match(str(tid), "reg00", "reg01", n=10, flips=(5,) if j == 0 else ())
    for j in range(6):
        tid += 1
        w.match(str(tid), *FLIPPERS, n=3, flips=(0,) if j < 3 else ())
    return w


def test_a_pair_that_meets_again_and_again_weighs_more_in_the_false_discovery_control():
    det = HeadsUpFlippingDetector()
    rows = det.threshold(det.fit(_crowded_room().con_()).score(None))
    assert rows.filter(rows["flagged"])["accounts"].to_list() == [sorted(FLIPPERS)]  # not the rivals
    pair = rows.filter(rows["player"] == sorted(FLIPPERS)[0]).row(0, named=True)
    assert pair["k"] == 3 and pair["matches"] == 6 and pair["weight"] > 5
    # unweighted, the 300 one-off pairs dilute the flippers' three flips in six matches past alpha
    from detectors import stats
    plain = stats.bh_qvalues(det.pairs_["p_value"].to_numpy())
    assert plain[(det.pairs_["player"] == sorted(FLIPPERS)[0]).to_numpy()][0] > det.alpha


def test_two_loose_players_flipping_within_one_match_are_not_flagged():
    w = _world()
    w.match("4999", "reg06", "reg07", n=20, flips=(2, 6, 10, 14))  # four weak flips at depth, one match
    con = w.con_()
    assert _flagged(con) == [sorted(FLIPPERS)]
    # the rule that spares them: without it the one match's flips are a flag
    assert sorted(["reg06", "reg07"]) in _flagged(con, min_flip_matches=1)
