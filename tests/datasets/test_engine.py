"""The rules engine: balance to the chip, side pots, odd chips, raise rules, caps, blinds, rake, bounties."""

from datetime import datetime, timezone

import numpy as np
import pytest

from datasets.cards import NO_LOW, evaluate, evaluate_omaha, evaluate_omaha_low8, parse_cards
from datasets.engine import play_hand
from datasets.rake import RakeRule, rake_rule_for
from datasets.records import HOLE_CARDS, LIMITS, Action, GameConfig, SeatState, TournamentInfo

T0 = datetime(2026, 3, 4, 21, 15, 20, tzinfo=timezone.utc)


class RandomPolicy:
    """Folds, checks/calls, bets/raises at random; raise sizes anywhere in [min, max] and beyond."""

    def __init__(self, rng):
        self.rng = rng

    def act(self, v):
        r = self.rng.random()
        if r < 0.2:
            return Action("fold")
        if r < 0.6:
            return Action("call" if v.to_call else "check")
        if r < 0.65:  # deliberately illegal or odd choices: the engine must correct them
            return Action(str(self.rng.choice(["check", "call", "bet", "raise"])), int(self.rng.integers(-5, 10**6)))
        span = max(0, v.max_raise_to - v.min_raise_to)
        return Action("raise", int(v.min_raise_to + self.rng.random() ** 3 * span))


class Script:
    """Plays a fixed list of actions per player, then checks/calls; records every view."""

    def __init__(self, moves):
        self.moves = {p: list(m) for p, m in moves.items()}
        self.views = []

    def act(self, v):
        self.views.append(v)
        q = self.moves.get(v.player)
        if q:
            return q.pop(0)
        return Action("call" if v.to_call else "check")


def deck_for(holes, board):
    """A deck that deals ``holes`` (in dealing order) and then ``board``."""
    used = [c for h in holes for c in parse_cards(h)] + parse_cards(board)
    rest = [c for c in range(52) if c not in used]
    return used + rest


def seats_of(stacks, first_seat=1, **kw):
    return [SeatState(first_seat + i, f"p{first_seat + i}", s, **kw) for i, s in enumerate(stacks)]


def play(cfg, seats, button, policy, deck=None, tournament=None, rng=None, **kw):
    rng = rng or np.random.default_rng(0)
    pols = {s.player: policy for s in seats}
    return play_hand(cfg, seats, button, pols, rng, "1", T0, "T", 9, tournament=tournament, deck=deck, **kw)


# ----------------------------------------------------------------------------- random hands


def independent_pots(rec):
    """Main/side pots by distinct contribution levels of the players still in (a second method)."""
    contrib = dict(rec.put_in)
    if rec.uncalled:
        contrib[rec.uncalled[0]] -= rec.uncalled[1]
    alive = [p for p in rec.dealt if p not in rec.folded_street]
    levels = sorted({contrib[p] for p in alive if contrib[p] > 0})
    pots, prev = [], 0
    for lv in levels:
        amt = sum(max(0, min(c, lv) - prev) for c in contrib.values())
        pots.append((amt, sorted(p for p in alive if contrib[p] >= lv)))
        prev = lv
    over = sum(max(0, c - prev) for c in contrib.values())  # folded money above every live level
    if over and pots:
        pots[-1] = (pots[-1][0] + over, pots[-1][1])
    elif over:  # only dead money in the pot (the survivor's whole bet came back)
        pots = [(over, sorted(alive))]
    return pots


def check_legal(rec):
    """Replay the action lines and check every bet size against the limit rules."""
    cfg = rec.config
    stack = {s.player: s.stack for s in rec.seats}
    bet = {p: 0 for p in rec.dealt}
    street = 0
    current = cfg.big_blind  # pre-flop everyone owes a full big blind, even if the blind was short
    last_inc = cfg.big_blind
    n_bets = 1
    cap = cfg.fl_cap_heads_up if len(rec.dealt) == 2 else cfg.fl_cap
    pot = 0
    acted_at = {}  # player -> bet level they last acted on this street
    for a in rec.actions:
        if a.street != street:
            street = a.street
            bet = {p: 0 for p in rec.dealt}
            current, last_inc, n_bets = 0, cfg.big_blind, 0
            acted_at = {}
        if a.kind in ("ante", "dead_small_blind"):
            assert a.amount == min(cfg.ante if a.kind == "ante" else cfg.small_blind, stack[a.player])
        elif a.kind in ("small_blind", "big_blind", "small_big_blinds"):
            live = a.amount if a.kind != "small_big_blinds" else min(a.amount, cfg.big_blind)
            bet[a.player] += live
        elif a.kind == "call":
            assert a.amount == min(current - bet[a.player], stack[a.player]) and a.amount > 0
            bet[a.player] += a.amount
            acted_at[a.player] = current
        elif a.kind == "check":
            assert bet[a.player] == current
            acted_at[a.player] = current
        elif a.kind in ("bet", "raise"):
            unit = cfg.big_blind if street < 2 else 2 * cfg.big_blind
            full_size = unit if cfg.limit == "fixed_limit" else last_inc
            if a.player in acted_at:  # may raise again only facing a full raise over what they acted on
                assert current - acted_at[a.player] >= full_size, "raised although the betting was not reopened"
            assert (a.kind == "bet") == (current == 0)
            inc = a.to - current
            assert a.to - bet[a.player] == a.amount
            if cfg.limit == "fixed_limit":
                assert inc == unit or (a.all_in and inc < unit)
                assert n_bets < cap
            else:
                assert inc >= last_inc or a.all_in
                if cfg.limit == "pot_limit":
                    assert a.to <= current + pot + (current - bet[a.player])
            if inc >= full_size:
                n_bets += 1
                if cfg.limit != "fixed_limit":
                    last_inc = inc
            bet[a.player] = a.to
            current = a.to
            acted_at[a.player] = current
        stack[a.player] -= a.amount
        pot += a.amount
        assert stack[a.player] >= 0
        assert a.all_in == (stack[a.player] == 0 and a.kind != "fold" and a.kind != "check")


COMBOS = [(g, lim, False) for g in HOLE_CARDS for lim in LIMITS] + [
    ("omaha", "pot_limit", True), ("omaha5", "no_limit", True), ("omaha", "fixed_limit", True)]


@pytest.mark.parametrize("game,limit,hi_lo", COMBOS)
def test_random_hands_balance_and_follow_the_rules(game, limit, hi_lo):
    rng = np.random.default_rng(abs(hash((game, limit, hi_lo))) % 2**32)
    pol = RandomPolicy(rng)
    for h in range(400):
        tour = h % 3 == 0
        sb = int(rng.choice([1, 2, 5, 25]))
        bb = 2 * sb
        ante = int(rng.choice([0, 0, sb // 2 or 1])) if tour else 0
        rake = None if tour else rake_rule_for(sb, bb, limit)
        cfg = GameConfig(game, limit, sb, bb, ante, rake, hi_lo=hi_lo)
        n = int(rng.integers(2, 10))
        stacks = [int(rng.choice([rng.integers(1, 4 * bb), rng.integers(1, 200 * bb)])) for _ in range(n)]
        seat_nos = sorted(rng.choice(np.arange(1, 10), n, replace=False).tolist())
        seats = [SeatState(s, f"p{s}", st, bounty=(100 if tour else None),
                           posts_dead=None if tour or rng.random() < 0.85 else str(rng.choice(["bb", "sb", "sb_bb"])))
                 for s, st in zip(seat_nos, stacks)]
        for seat in seats:  # some sit out: not dealt in cash, dealt and folded in tournaments
            seat.sitting_out = bool(rng.random() < 0.08)
        if sum(not x.sitting_out for x in seats) < 2:
            for seat in seats:
                seat.sitting_out = False
        button = int(rng.choice(seat_nos))
        ti = TournamentInfo("77", 500, 50, 1, 100, bool(h % 2)) if tour else None
        blinds = None  # sometimes the world places the blinds (dead button: maybe no small blind)
        dealt = sorted((x for x in seats if (tour or not x.sitting_out) and x.stack > 0),
                       key=lambda x: (x.seat - button - 1) % 9)
        if len(dealt) >= 3 and rng.random() < 0.2:
            blinds = (None if rng.random() < 0.5 else dealt[0].seat, dealt[1].seat)
        before = [(x.seat, x.player, x.stack, x.sitting_out, x.bounty, x.posts_dead) for x in seats]
        rec = play(cfg, seats, button, pol, tournament=ti, rng=rng, blinds=blinds)
        assert before == [(x.seat, x.player, x.stack, x.sitting_out, x.bounty, x.posts_dead) for x in seats]
        rec.check_balance()
        check_legal(rec)
        got = [(p.amount, sorted(p.eligible)) for p in rec.pots]
        assert got == independent_pots(rec)
        if rec.showdown:
            for p in rec.pots:
                vals = {q: rec.values[q] for q in p.eligible}
                best = max(vals.values())
                assert sorted(p.winners) == sorted(q for q in p.eligible if vals[q] == best)
                assert max(p.shares) - min(p.shares) <= 1
                net = p.amount - p.rake
                if hi_lo:
                    lows = {q: evaluate_omaha_low8(rec.hole[q], rec.board) for q in p.eligible}
                    best_low = max(lows.values())
                    if best_low == NO_LOW:
                        assert not p.low_winners and sum(p.shares) == net
                    else:
                        assert sorted(p.low_winners) == sorted(q for q in p.eligible if lows[q] == best_low)
                        assert sum(p.low_shares) == net // 2 and sum(p.shares) == net - net // 2
                else:
                    assert sum(p.shares) == net and not p.low_winners
                assert p.shares == sorted(p.shares, reverse=True)  # odd chips to the earliest seats
                order = [rec.dealt.index(q) for q in p.winners]
                assert order == sorted(order)
            for q, v in rec.values.items():
                hole = rec.hole[q]
                assert v == (evaluate(hole + rec.board) if game == "holdem" else evaluate_omaha(hole, rec.board))
        else:
            assert len(rec.dealt) - len(rec.folded_street) == 1
        if tour:
            assert rec.rake == 0
            assert set(rec.eliminated) == {p for p, s in rec.final_stacks.items() if s == 0}
            for b in rec.bounty_awards:
                assert b.winner not in rec.eliminated
            # each elimination pays exactly the eliminated player's bounty
            for e in rec.eliminated:
                paid = sum(b.cash + b.increase for b in rec.bounty_awards if b.eliminated == e)
                assert paid == 100


# ----------------------------------------------------------------------------- scripted rules

NL = GameConfig("holdem", "no_limit", 1, 2)


def test_heads_up_button_posts_small_blind_and_acts_first_preflop_last_after():
    s = Script({})
    seats = seats_of([200, 200], first_seat=3)
    rec = play(NL, seats, 4, s)
    assert rec.sb_seat == 4 and rec.bb_seat == 3
    posts = [(a.player, a.kind) for a in rec.actions[:2]]
    assert posts == [("p4", "small_blind"), ("p3", "big_blind")]
    pre = [a.player for a in rec.actions[2:] if a.street == 0]
    flop = [a.player for a in rec.actions if a.street == 1]
    assert pre[0] == "p4" and flop[0] == "p3" and flop[-1] == "p4"


def test_blinds_and_order_three_handed_and_dead_button():
    s = Script({})
    rec = play(NL, seats_of([100, 100, 100]), 1, s)
    assert (rec.sb_seat, rec.bb_seat) == (2, 3)
    assert [a.player for a in rec.actions[2:5]] == ["p1", "p2", "p3"]
    # dead button: the world passes an empty button seat and no small blind
    s = Script({})
    rec = play(NL, seats_of([100, 100, 100], first_seat=2), 1, s, blinds=(None, 3))
    assert rec.sb_seat is None and rec.bb_seat == 3
    assert [a.kind for a in rec.actions[:1]] == ["big_blind"]
    assert rec.actions[1].player == "p4"  # first after the big blind


def test_min_raise_is_the_last_raise_size():
    # 1/2: p4 raises to 6 (a raise of 4); p1 tries to raise to 8 -> must be at least 10
    s = Script({"p4": [Action("raise", 6)], "p1": [Action("raise", 8)], "p2": [Action("fold")],
                "p3": [Action("fold")]})
    rec = play(NL, seats_of([100, 100, 100, 100]), 1, s)
    raises = [(a.player, a.to, a.raise_by) for a in rec.actions if a.kind == "raise"]
    assert raises == [("p4", 6, 4), ("p1", 10, 4)]
    v = next(v for v in s.views if v.player == "p1")
    assert v.min_raise_to == 10 and v.max_raise_to == 100
    # an opening bet below the big blind is raised to it
    s = Script({"p2": [Action("call"), Action("bet", 1)]})
    rec = play(NL, seats_of([100, 100, 100]), 1, s)
    assert next(a for a in rec.actions if a.kind == "bet").to == 2


def test_short_all_in_does_not_reopen_betting():
    # 1/2, button p3 (32 chips), SB p1, BB p2. Flop: p1 checks, p2 bets 20, p3 all-in for 30
    # (a raise of 10, short of 20). p1 has not acted since the bet and may raise; p2 may only call.
    s = Script({
        "p3": [Action("call"), Action("raise", 1000)],
        "p1": [Action("call"), Action("check"), Action("call")],
        "p2": [Action("check"), Action("bet", 20), Action("raise", 200)],
    })
    rec = play(NL, seats_of([200, 200, 32]), 3, s)
    flop = [(a.player, a.kind, a.to, a.all_in) for a in rec.actions if a.street == 1]
    assert flop == [("p1", "check", 0, False), ("p2", "bet", 20, False), ("p3", "raise", 30, True),
                    ("p1", "call", 30, False), ("p2", "call", 30, False)]
    v1 = next(v for v in s.views if v.player == "p1" and v.street == 1 and v.current_bet == 30)
    v2 = next(v for v in s.views if v.player == "p2" and v.street == 1 and v.current_bet == 30)
    assert v1.can_raise and not v2.can_raise
    assert v1.min_raise_to == 50  # the short all-in did not change the minimum raise size (20)
    rec.check_balance()


@pytest.mark.parametrize("p3_stack,reopened", [(22, True), (20, False)])
def test_short_all_ins_that_add_up_to_a_full_raise_reopen(p3_stack, reopened):
    # 1/2, button p4; everyone limps. Flop: p1 bets 10, p2 all-in 15 (short), p3 all-in for
    # 20 (two short raises adding up to a full raise over p1's 10) or 18 (not a full raise).
    s = Script({"p1": [Action("call"), Action("bet", 10), Action("raise", 100)],
                "p2": [Action("check"), Action("raise", 100)], "p3": [Action("call"), Action("raise", 100)],
                "p4": [Action("call"), Action("call")]})
    rec = play(NL, seats_of([200, 17, p3_stack, 200]), 4, s)
    v1 = [v for v in s.views if v.player == "p1" and v.street == 1]
    assert v1[-1].current_bet == p3_stack - 2
    assert v1[-1].can_raise == reopened
    last = [a for a in rec.actions if a.player == "p1" and a.street == 1][-1]
    assert last.kind == ("raise" if reopened else "call")
    rec.check_balance()
    check_legal(rec)


def test_short_all_in_lets_players_yet_to_act_raise():
    # 4 players, 1/2. p4 (UTG) raises to 10; p1 (btn) all-in 14 (short); p2 (SB) may still re-raise
    s = Script({"p4": [Action("raise", 10)], "p1": [Action("raise", 14)], "p2": [Action("raise", 40)],
                "p3": [Action("fold")]})
    rec = play(NL, seats_of([14, 200, 200, 200]), 1, s)
    kinds = [(a.player, a.kind, a.to) for a in rec.actions if a.kind == "raise"]
    assert ("p2", "raise", 40) in kinds
    v4 = [v for v in s.views if v.player == "p4" and v.street == 0]
    assert len(v4) == 2 and v4[1].can_raise  # p2's full raise reopened the betting for p4


def test_pot_limit_maximum():
    pl = GameConfig("omaha", "pot_limit", 1, 2)
    s = Script({"p4": [Action("raise", 10**6)]})
    rec = play(pl, seats_of([500, 500, 500, 500]), 1, s)
    # pot 3, call 2 -> raise to 2 + (3 + 2) = 7
    assert next(a for a in rec.actions if a.kind == "raise").to == 7
    v = s.views[0]
    assert (v.min_raise_to, v.max_raise_to) == (4, 7)


def test_fixed_limit_caps_multiway_and_heads_up():
    fl = GameConfig("holdem", "fixed_limit", 1, 2)
    always = {p: [Action("raise", 10**6)] * 20 for p in ("p1", "p2", "p3", "p4")}
    rec = play(fl, seats_of([10**4] * 4), 1, Script(always))
    pre = [a for a in rec.actions if a.street == 0 and a.kind == "raise"]
    assert [a.to for a in pre] == [4, 6, 8]  # BB + three raises = four bets
    turn = [a for a in rec.actions if a.street == 2 and a.kind in ("bet", "raise")]
    assert [a.to for a in turn] == [4, 8, 12, 16]
    rec = play(fl, seats_of([10**4] * 2), 1, Script({p: [Action("raise", 10**6)] * 20 for p in ("p1", "p2")}))
    pre = [a for a in rec.actions if a.street == 0 and a.kind == "raise"]
    assert [a.to for a in pre] == [4, 6, 8, 10, 12]  # six bets heads-up


def test_uncalled_bet_is_returned():
    s = Script({"p4": [Action("raise", 50)], "p1": [Action("fold")], "p2": [Action("fold")], "p3": [Action("fold")]})
    rec = play(NL, seats_of([100] * 4), 1, s)
    assert rec.uncalled == ("p4", 48)
    assert rec.final_stacks["p4"] == 103
    rec.check_balance()
    # all-in for less: the excess of the bigger stack comes back
    s = Script({"p2": [Action("raise", 1000)], "p1": [Action("call")]})
    rec = play(NL, seats_of([30, 80]), 1, s)  # heads-up: p1 button/SB 30, p2 BB 80
    assert rec.uncalled == ("p2", 50)


def test_side_pots_and_who_wins_them():
    # p1 short all-in with the best hand wins the main pot; p2 beats p3 for the side pot
    deck = deck_for(["Ah Ad", "Kh Kd", "Qh Qd"], "2c 7s 9d 3h 4c")  # dealing order p2(SB) p3(BB) p1(btn)
    s = Script({p: [Action("raise", 10**6)] for p in ("p1", "p2", "p3")})
    rec = play(NL, seats_of([50, 200, 300]), 1, s, deck=deck)
    # p2 holds AA, p3 KK, p1 QQ
    assert [p.amount for p in rec.pots] == [150, 300]
    assert sorted(rec.pots[0].eligible) == ["p1", "p2", "p3"] and sorted(rec.pots[1].eligible) == ["p2", "p3"]
    assert rec.pots[0].winners == ["p2"] and rec.pots[1].winners == ["p2"]
    # p3 cannot raise when everyone else is all-in: it just calls
    assert rec.uncalled is None and rec.final_stacks["p3"] == 100
    rec.check_balance()


def test_split_pot_odd_chip_goes_left_of_button():
    # three players chop with the board's straight; pot of 3 * 7 + dead ante... use antes to make it odd
    cfg = GameConfig("holdem", "no_limit", 1, 2, ante=1)
    deck = deck_for(["2c 3d", "2d 3c", "2h 3s", "4d 5d"], "Ts Js Qh Kc Ad")
    s = Script({"p4": [Action("fold")]})
    rec = play(cfg, seats_of([100, 100, 100, 100]), 4, s, deck=deck, tournament=TournamentInfo("1", 100, 10))
    # dealing order from the button (seat 4): p1 (SB), p2 (BB), p3, p4
    pot = rec.pots[0]
    assert pot.amount == 4 + 2 + 2 + 2  # antes + three calls of 2
    assert pot.winners == ["p1", "p2", "p3"]
    assert pot.shares == [4, 3, 3]
    assert rec.collected("p1") == 4


def test_rake_percent_caps_and_no_flop_no_drop():
    rule = RakeRule(450, (50, 100, 150))
    assert rule.rake(1000, 6, True) == 45
    assert rule.rake(10**6, 2, True) == 50 and rule.rake(10**6, 4, True) == 100 and rule.rake(10**6, 9, True) == 150
    assert rule.rake(10**6, 9, False) == 0
    assert rule.rake(10, 9, True) == 0  # 0.45 cents rounds to 0
    assert RakeRule(500, (100, 100, 100)).rake(30, 3, True) == 2  # 1.5 -> 2 (half to even)
    assert RakeRule(500, (100, 100, 100)).rake(50, 3, True) == 2  # 2.5 -> 2 (half to even)
    assert RakeRule(500, (100, 100, 100), rounding="down").rake(30, 3, True) == 1
    cfg = GameConfig("holdem", "no_limit", 5, 10, rake=rule)
    s = Script({"p4": [Action("raise", 30)], "p1": [Action("fold")], "p2": [Action("fold")], "p3": [Action("fold")]})
    rec = play(cfg, seats_of([1000] * 4), 1, s)
    assert rec.uncalled == ("p4", 20)
    assert rec.rake == 0 and rec.collected("p4") == 25  # no flop, no drop
    s = Script({"p4": [Action("raise", 30)], "p1": [Action("call")], "p2": [Action("fold")],
                "p3": [Action("fold")]})
    rec = play(cfg, seats_of([1000] * 4), 1, s)
    total = 30 + 30 + 5 + 10
    assert rec.total_pot == total and rec.rake == 3  # 4.5 % of 75 = 3.375 -> 3
    rec.check_balance()


def test_house_rake_table_lookup():
    r = rake_rule_for(5, 10)
    assert (r.percent_bp, r.caps) == (450, (50, 100, 150))
    r = rake_rule_for(100, 200)
    assert (r.percent_bp, r.caps) == (500, (125, 125, 275))
    assert rake_rule_for(8, 16).caps == (50, 100, 150)  # "$0.05/$0.10 to $0.08/$0.16"
    assert rake_rule_for(5, 10, "pot_limit", "omaha").percent_bp == 425  # Omaha micro stakes table
    assert rake_rule_for(50, 100, "pot_limit", "omaha").percent_bp == 500
    fl = rake_rule_for(50, 100, "fixed_limit")  # $1/$2 limit: 2 % / 3 % / 4 % with caps 0.50 / 0.70 / 0.80
    assert [fl.rake(5000, n, True) for n in (2, 3, 9)] == [50, 70, 80]
    assert [fl.rake(1000, n, True) for n in (2, 4, 5)] == [20, 30, 40]


def test_missed_blinds_posts():
    s = Script({})
    seats = seats_of([100, 100, 100, 100])
    seats[3].posts_dead = "sb_bb"
    rec = play(NL, seats, 1, s)
    post = next(a for a in rec.actions if a.kind == "small_big_blinds")
    assert post.player == "p4" and post.amount == 3 and post.to == 2  # live big blind, dead small
    # p4 only needs to check (its live 2 matches the big blind)
    assert next(a for a in rec.actions if a.player == "p4" and a.street == 0 and a.kind not in
                ("small_big_blinds",)).kind == "check"
    rec.check_balance()
    seats = seats_of([100, 100, 100, 100])
    seats[3].posts_dead = "sb"
    rec = play(NL, seats, 1, Script({}))
    post = next(a for a in rec.actions if a.kind == "dead_small_blind")
    assert post.amount == 1 and post.to == 0
    assert next(a for a in rec.actions if a.player == "p4" and a.kind == "call").amount == 2
    rec.check_balance()


def test_tiny_stacks_post_all_in():
    rec = play(GameConfig("holdem", "no_limit", 5, 10, ante=3), seats_of([2, 7, 100]), 1, Script({}),
               tournament=TournamentInfo("1", 100, 10))
    assert rec.actions[0].all_in and rec.actions[0].amount == 2
    rec.check_balance()


def test_sitting_out_cash_not_dealt_tournament_auto_folds():
    seats = seats_of([100, 100, 100])
    seats[2].sitting_out = True
    rec = play(NL, seats, 1, Script({}))
    assert "p3" not in rec.dealt and len(rec.dealt) == 2
    seats = seats_of([100, 100, 100])
    seats[0].sitting_out = True
    rec = play(NL, seats, 3, Script({"p2": [Action("raise", 10)]}), tournament=TournamentInfo("1", 100, 10))
    assert "p1" in rec.dealt
    assert next(a for a in rec.actions if a.player == "p1" and a.street == 0 and a.kind not in
                ("small_blind", "big_blind")).kind == "fold"


def test_bounty_to_winner_of_the_relevant_pot_split_progressive():
    cfg = GameConfig("holdem", "no_limit", 5, 10)
    # p2 (SB) short all-in; p3 and p1 chop with the board; p2 busts in the main pot
    deck = deck_for(["7c 2d", "Ah 3h", "Ac 3d"], "Ts Js Qs Kd 4c")  # order: p2 p3 p1 (button p1)
    seats = seats_of([300, 40, 300], bounty=1001)
    s = Script({p: [Action("raise", 10**6)] for p in ("p1", "p2", "p3")})
    tour = TournamentInfo("9", 500, 50, 1, 1000, progressive=True)
    rec = play(cfg, seats, 1, s, deck=deck, tournament=tour)
    assert rec.eliminated == ["p2"]
    aw = sorted((b.winner, b.cash, b.increase, b.new_bounty, b.split) for b in rec.bounty_awards)
    # 1001: cash half rounded up = 501 split 251/250, bounty half 500 split 250/250; p3 is first left of button
    assert aw == [("p1", 250, 250, 1251, 2), ("p3", 251, 250, 1251, 2)]


def test_eliminations_ordered_by_starting_stack():
    cfg = GameConfig("holdem", "no_limit", 5, 10)
    deck = deck_for(["7c 2d", "8h 3h", "Ac Ad"], "Ts 9s 4d Kd 6c")
    seats = seats_of([300, 40, 60])
    s = Script({p: [Action("raise", 10**6)] for p in ("p1", "p2", "p3")})
    rec = play(cfg, seats, 1, s, deck=deck, tournament=TournamentInfo("9", 500, 50))
    assert rec.eliminated == ["p3", "p2"]  # p3 started with more chips, finishes higher


def test_illegal_actions_are_corrected_not_raised():
    s = Script({"p4": [Action("check")], "p1": [Action("bet", 3)], "p2": [Action("call")],
                "p3": [Action("dance")]})
    rec = play(NL, seats_of([100] * 4), 1, s)
    kinds = {a.player: a.kind for a in rec.actions if a.street == 0 and a.seq >= 2}
    assert rec.actions[2].kind == "fold"  # p4 check facing the big blind -> fold
    assert next(a for a in rec.actions if a.player == "p1" and a.seq >= 2).kind == "raise"
    assert kinds["p3"] in ("check", "fold")
    rec.check_balance()


def test_odd_amount_types_are_corrected():
    s = Script({"p4": [Action("raise", None)], "p1": [Action("raise", 7.9)], "p2": [Action("raise", "lots")],
                "p3": [Action("fold")]})
    rec = play(NL, seats_of([100] * 4), 1, s)
    raises = [(a.player, a.to) for a in rec.actions if a.kind == "raise"]
    assert raises[0] == ("p4", 4)  # None -> the minimum raise
    assert raises[1] == ("p1", 7)  # 7.9 -> 7 (truncated, at least the minimum 6)
    assert raises[2][0] == "p2" and raises[2][1] == 10  # unreadable -> minimum (7 + 3)
    rec.check_balance()


def test_omaha_hi_lo_splits_high_and_low_halves():
    cfg = GameConfig("omaha", "pot_limit", 1, 2, hi_lo=True)
    seats = [SeatState(2, "ann", 100), SeatState(3, "ben", 100), SeatState(5, "cy", 100)]
    # dealt ann, ben, cy (button cy); ann and ben tie for the low 6-5-4-2-A, cy has the flush
    deck = deck_for(["7c 6s 7h As", "Ah 2h Kh 2s", "Ks Qd Kd Kc"], "5h 4d 2d Jd 6h")
    rec = play(cfg, seats, 5, Script({}), deck=deck)
    pot = rec.pots[0]
    assert pot.amount == 6
    assert (pot.winners, pot.shares) == (["cy"], [3])
    assert (pot.low_winners, pot.low_shares) == (["ann", "ben"], [2, 1])  # odd chip left of the button
    assert [(c.player, c.amount, c.low) for c in rec.collections] == [("cy", 3, False), ("ann", 2, True),
                                                                     ("ben", 1, True)]
    rec.check_balance()
    # no qualifying low: the high hand scoops
    deck = deck_for(["7c 6s 7h As", "Ah 2h Kh 2s", "Ks Qd Kd Kc"], "Th 9d 2d Jd Qh")
    rec = play(cfg, seats, 5, Script({}), deck=deck)
    assert not rec.pots[0].low_winners and sum(rec.pots[0].shares) == 6


def test_too_many_players_for_five_card_omaha_is_refused():
    with pytest.raises(ValueError):
        play(GameConfig("omaha5", "pot_limit", 1, 2), seats_of([100] * 10), 1, Script({}))
