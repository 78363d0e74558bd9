"""The PokerStars writer: exact line formats, and the project's parser reads generated hands back exactly."""

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import numpy as np
import pytest

from datasets.cards import card_str, parse_cards
from datasets.engine import play_hand
from datasets.rake import rake_rule_for
from datasets.records import HOLE_CARDS, LIMITS, Action, Finish, GameConfig, SeatState, TournamentInfo
from datasets.hhwriter import et_time, money, ordinal, roman, write_hand, write_hands

T0 = datetime(2026, 3, 4, 21, 15, 20, tzinfo=timezone.utc)


class Script:
    def __init__(self, moves):
        self.moves = {p: list(m) for p, m in moves.items()}

    def act(self, v):
        q = self.moves.get(v.player)
        if q:
            return q.pop(0)
        return Action("call" if v.to_call else "check")


class RandomPolicy:
    def __init__(self, rng):
        self.rng = rng

    def act(self, v):
        r = self.rng.random()
        if r < 0.25:
            return Action("fold", timed_out=bool(self.rng.random() < 0.05))
        if r < 0.7:
            return Action("call" if v.to_call else "check")
        span = max(0, v.max_raise_to - v.min_raise_to)
        return Action("raise", int(v.min_raise_to + self.rng.random() ** 3 * span))


def deck_for(holes, board):
    used = [c for h in holes for c in parse_cards(h)] + parse_cards(board)
    return used + [c for c in range(52) if c not in used]


def test_small_formatters():
    assert [money(5), money(100), money(1050), money(123456)] == ["$0.05", "$1", "$10.50", "$1234.56"]
    assert money(250, "€") == "€2.50"
    assert [ordinal(i) for i in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th"]
    assert [roman(i) for i in (1, 2, 4, 9, 14, 40)] == ["I", "II", "IV", "IX", "XIV", "XL"]
    # Eastern time with daylight saving, hours without a leading zero like the client
    assert et_time(datetime(2026, 3, 4, 21, 15, 20, tzinfo=timezone.utc)) == "2026/03/04 16:15:20 ET"  # EST
    assert et_time(datetime(2026, 7, 4, 13, 5, 9, tzinfo=timezone.utc)) == "2026/07/04 9:05:09 ET"  # EDT
    assert et_time(datetime(2026, 3, 8, 6, 59, 59, tzinfo=timezone.utc)) == "2026/03/08 1:59:59 ET"
    assert et_time(datetime(2026, 3, 8, 7, 0, 0, tzinfo=timezone.utc)) == "2026/03/08 3:00:00 ET"


def test_cash_hand_text_is_pokerstars_format():
    cfg = GameConfig("holdem", "no_limit", 5, 10, rake=rake_rule_for(5, 10))
    seats = [SeatState(1, "amy", 1000), SeatState(3, "bob", 1050), SeatState(5, "cat", 250, sitting_out=True),
             SeatState(6, "dan", 2000)]
    deck = deck_for(["Ah Kd", "7c 2d", "Qs Qh"], "Kc 9h 4s 2c 8d")  # bob (SB), dan (BB), amy (button)
    s = Script({"amy": [Action("raise", 30), Action("bet", 40), Action("bet", 100), Action("check")],
                "bob": [Action("fold")], "dan": [Action("call"), Action("check"), Action("call"), Action("check"), Action("call"),
                                                  Action("check")]})
    rec = play_hand(cfg, seats, 1, {p.player: s for p in seats}, np.random.default_rng(0), "243474633185", T0,
                    "Juno II", 6, deck=deck)
    text = write_hand(rec)
    assert text == "\n".join([
        "PokerStars Hand #243474633185:  Hold'em No Limit ($0.05/$0.10 USD) - 2026/03/04 16:15:20 ET",
        "Table 'Juno II' 6-max Seat #1 is the button",
        "Seat 1: amy ($10 in chips)",
        "Seat 3: bob ($10.50 in chips)",
        "Seat 5: cat ($2.50 in chips) is sitting out",
        "Seat 6: dan ($20 in chips)",
        "bob: posts small blind $0.05",
        "dan: posts big blind $0.10",
        "*** HOLE CARDS ***",
        "Dealt to bob [Ah Kd]",
        "Dealt to dan [7c 2d]",
        "Dealt to amy [Qs Qh]",
        "amy: raises $0.20 to $0.30",
        "bob: folds",
        "dan: calls $0.20",
        "*** FLOP *** [Kc 9h 4s]",
        "dan: checks",
        "amy: bets $0.40",
        "dan: calls $0.40",
        "*** TURN *** [Kc 9h 4s] [2c]",
        "dan: checks",
        "amy: bets $1",
        "dan: calls $1",
        "*** RIVER *** [Kc 9h 4s 2c] [8d]",
        "dan: checks",
        "amy: checks",
        "*** SHOW DOWN ***",
        "dan: shows [7c 2d] (a pair of Deuces)",
        "amy: shows [Qs Qh] (a pair of Queens)",
        "amy collected $3.29 from pot",
        "*** SUMMARY ***",
        "Total pot $3.45 | Rake $0.16",
        "Board [Kc 9h 4s 2c 8d]",
        "Seat 1: amy (button) showed [Qs Qh] and won ($3.29) with a pair of Queens",
        "Seat 3: bob (small blind) folded before Flop",
        "Seat 6: dan (big blind) showed [7c 2d] and lost with a pair of Deuces",
    ])
    # player view: only the hero's cards
    pv = write_hand(rec, view="player", hero="amy")
    assert "Dealt to amy [Qs Qh]" in pv and "Dealt to dan" not in pv and "Dealt to bob" not in pv


def test_tournament_bounty_side_pot_lines():
    cfg = GameConfig("holdem", "no_limit", 50, 100, ante=10)
    tour = TournamentInfo("3456789012", 500, 100, 4, 500, progressive=True)
    seats = [SeatState(1, "amy", 5000, bounty=750), SeatState(2, "bob", 400, bounty=500),
             SeatState(3, "cat", 3000, bounty=500)]
    deck = deck_for(["Ah Ad", "Kc Kd", "7c 2d"], "Qs 9h 4s 3c 8d")  # dealt bob (SB), cat (BB), amy (button)
    s = Script({p: [Action("raise", 10**6)] for p in ("amy", "bob", "cat")})
    rec = play_hand(cfg, seats, 1, {p.player: s for p in seats}, np.random.default_rng(0), "250000000001", T0,
                    "3456789012 1", 9, tournament=tour, deck=deck)
    rec.finishes = [Finish("bob", 3, None)]
    text = write_hand(rec)
    lines = text.split("\n")
    assert lines[0] == ("PokerStars Hand #250000000001: Tournament #3456789012, $5+$5+$1 USD Hold'em No Limit "
                        "- Level IV (50/100) - 2026/03/04 16:15:20 ET")
    assert lines[2] == "Seat 1: amy (5000 in chips, $7.50 bounty)"
    assert "amy: posts the ante 10" in lines and "bob: posts small blind 50" in lines
    # bob (400) all-in, cat (3000) all-in, amy covers: main pot bob's level, side pot cat vs amy
    assert "bob collected 1200 from main pot" in lines
    assert "cat collected 5200 from side pot" in lines
    assert "Uncalled bet (2000) returned to amy" in lines
    assert "Total pot 6400 Main pot 1200. Side pot 5200. | Rake 0" in lines
    assert rec.eliminated == []  # amy covers everyone and survives
    # finish lines are whatever the world puts in the record
    assert lines[lines.index("*** SUMMARY ***") - 1] == "bob finished the tournament in 3rd place"


def test_progressive_bounty_and_win_lines():
    cfg = GameConfig("holdem", "no_limit", 50, 100)
    tour = TournamentInfo("3456789012", 500, 100, 4, 500, progressive=True)
    seats = [SeatState(1, "amy", 5000, bounty=750), SeatState(2, "bob", 400, bounty=501)]
    # heads-up: amy is button and small blind; dealing starts left of the button (bob)
    deck = deck_for(["7c 2d", "Ah Ad"], "Qs 9h 4s 3c 8d")
    s = Script({p: [Action("raise", 10**6)] for p in ("amy", "bob")})
    rec = play_hand(cfg, seats, 1, {p.player: s for p in seats}, np.random.default_rng(0), "250000000002", T0,
                    "3456789012 1", 9, tournament=tour, deck=deck)
    assert rec.hole["amy"] == parse_cards("Ah Ad") and rec.eliminated == ["bob"]
    rec.finishes = [Finish("bob", 2, 1000), Finish("amy", 1, 2500)]
    lines = write_hand(rec).split("\n")
    i = lines.index("*** SUMMARY ***")
    assert lines[i - 3:i] == [
        "amy wins $2.51 for eliminating bob and their own bounty increases by $2.50 to $10",
        "bob finished the tournament in 2nd place and received $10.00.",
        "amy wins the tournament and receives $25.00 - congratulations!",
    ]


def test_split_progressive_bounty_line():
    cfg = GameConfig("holdem", "no_limit", 5, 10)
    tour = TournamentInfo("9", 500, 50, 1, 1000, progressive=True)
    seats = [SeatState(1, "amy", 300, bounty=1000), SeatState(2, "bob", 40, bounty=1001),
             SeatState(3, "cat", 300, bounty=1000)]
    deck = deck_for(["7c 2d", "Ah 3h", "Ac 3d"], "Ts Js Qs Kd 4c")  # bob, cat, amy: cat and amy chop
    s = Script({p: [Action("raise", 10**6)] for p in ("amy", "bob", "cat")})
    rec = play_hand(cfg, seats, 1, {p.player: s for p in seats}, np.random.default_rng(0), "5", T0, "9 1", 9,
                    tournament=tour, deck=deck)
    text = write_hand(rec)
    assert ("cat wins $2.51 for splitting the elimination of bob and their own bounty increases by $2.50 to $12.50"
            in text)
    assert ("amy wins $2.50 for splitting the elimination of bob and their own bounty increases by $2.50 to $12.50"
            in text)


def test_fixed_limit_header_uses_small_and_big_bet():
    cfg = GameConfig("omaha", "fixed_limit", 5, 10, rake=rake_rule_for(5, 10, "fixed_limit"))
    seats = [SeatState(1, "amy", 1000), SeatState(2, "bob", 1000)]
    s = Script({})
    rec = play_hand(cfg, seats, 1, {p.player: s for p in seats}, np.random.default_rng(0), "1", T0, "T", 6)
    assert write_hand(rec).startswith("PokerStars Hand #1:  Omaha Limit ($0.10/$0.20 USD) - ")


# ----------------------------------------------------------------------------- read back by the parser

def _population(seed=7, n_hands=300, tour_sitting_out=False, fl_dead_posts=False):
    rng = np.random.default_rng(seed)
    pol = RandomPolicy(rng)
    recs = []
    combos = [(g, lim) for g in HOLE_CARDS for lim in LIMITS]
    for h in range(n_hands):
        game, limit = combos[int(rng.integers(len(combos)))]
        tour = None
        if h % 3 == 1:
            tour = TournamentInfo(str(3000000000 + h % 4), 500, 50, 1 + h % 10, (500 if h % 2 else None),
                                  progressive=bool(h % 4 == 1))
        sb = int(rng.choice([1, 2, 5, 10, 25, 50]))
        bb = 2 * sb
        ante = int(rng.choice([0, sb // 2])) if tour else 0
        cfg = GameConfig(game, limit, sb, bb, ante, None if tour else rake_rule_for(sb, bb, limit, game),
                         hi_lo=game != "holdem" and rng.random() < 0.3)
        n = int(rng.integers(2, 10))
        max_seats = 9 if n > 6 else int(rng.choice([6, 9]))
        seat_nos = sorted(rng.choice(np.arange(1, max_seats + 1), n, replace=False).tolist())
        seats = []
        for i, s in enumerate(seat_nos):
            stack = int(rng.choice([rng.integers(1, 5 * bb), rng.integers(1, 300 * bb)]))
            dead = None
            if not tour and (limit != "fixed_limit" or fl_dead_posts) and rng.random() < 0.2:
                dead = str(rng.choice(["bb", "sb", "sb_bb"]))
            out = bool(rng.random() < (0.05 if not tour else 0.1 if tour_sitting_out else 0))
            seats.append(SeatState(s, f"u{h}_{i}", stack, sitting_out=out,
                                   bounty=(1000 if tour and tour.bounty else None), posts_dead=dead))
        if sum(1 for s in seats if not s.sitting_out or tour) < 2:
            for s in seats:
                s.sitting_out = False
        button = int(rng.choice(seat_nos))
        rec = play_hand(cfg, seats, button, {s.player: pol for s in seats}, rng, str(250000000000 + h),
                        T0 + timedelta(seconds=41 * h), f"{tour.tournament_id} 1" if tour else "Juno", max_seats,
                        tournament=tour)
        if tour and rec.eliminated:
            left = len(rec.dealt) - len(rec.eliminated)
            rec.finishes = [Finish(p, left + 1 + k, 300 if k == 0 else None) for k, p in enumerate(rec.eliminated)]
            if left == 1:
                rec.finishes.append(Finish(next(p for p, s in rec.final_stacks.items() if s > 0), 1, 900))
        if h % 10 == 0:
            rec.extra_lines.append((-1, f"{rec.dealt[0]} is connected"))
        recs.append(rec)
    return recs


def _d(x):
    return Decimal(x) / 100


def test_parser_reads_generated_hands_back_exactly():
    hh = pytest.importorskip("pipelines.lib.handhistory")
    recs = _population()
    text = write_hands(recs)
    parsed = hh.parse_text(text, "generated.txt")
    q = parsed.quarantine
    bad = [(row["hand_id"], row["reason"], row["detail"]) for row in q.iter_rows(named=True)]
    assert not bad, bad[:3]
    by_id = {r.hand_id: r for r in recs}
    T = parsed.tables
    hands = {row["hand_id"]: row for row in T["hands"].iter_rows(named=True)}
    assert set(by_id) <= set(hands)
    seats = {}
    for row in T["seats"].iter_rows(named=True):
        seats.setdefault(row["hand_id"], {})[row["player"]] = row
    acts = {}
    for row in T["actions"].iter_rows(named=True):
        acts.setdefault(row["hand_id"], []).append(row)
    holes = {}
    for row in T["hole_cards"].iter_rows(named=True):
        holes.setdefault(row["hand_id"], {})[row["player"]] = row["cards"]
    boards = {row["hand_id"]: row["cards"] for row in T["boards"].iter_rows(named=True)}
    colls = {}
    for row in T["collections"].iter_rows(named=True):
        colls.setdefault(row["hand_id"], []).append((row["pot"], row["player"], row["amount"]))
    bounties = {}
    for row in T["bounties"].iter_rows(named=True):
        bounties.setdefault(row["hand_id"], []).append(
            (row["winner"], row["eliminated"], row["amount"], row["increase"], row["new_bounty"]))
    finishes = {}
    for row in T["tournament_finishes"].iter_rows(named=True):
        finishes.setdefault(row["hand_id"], []).append((row["player"], row["place"], row["prize"]))
    kind_code = {"small_blind": "post_sb", "big_blind": "post_bb", "ante": "post_ante",
                 "dead_small_blind": "post_dead", "small_big_blinds": "post_sb_bb"}
    street_name = ["preflop", "flop", "turn", "river"]
    money_game = {}
    for hid, r in by_id.items():
        cash = r.tournament is None
        unit = _d if cash else (lambda x: Decimal(x))
        money_game[hid] = unit
        H = hands[hid]
        assert H["is_tournament"] == (not cash)
        assert H["game"] == r.config.game and H["limit_type"] == r.config.limit
        assert H["hi_lo"] == r.config.hi_lo
        assert H["total_pot"] == unit(r.total_pot) and H["rake"] == unit(r.rake)
        assert H["button_seat"] == r.button_seat and H["max_seats"] == r.max_seats
        assert H["table_name"] == r.table_name and H["n_players"] == len(r.dealt)
        assert H["started_at"] == r.started_at.replace(tzinfo=None)
        if not cash:
            assert H["tournament_id"] == r.tournament.tournament_id
        # seats
        S = seats[hid]
        ret = dict([r.uncalled]) if r.uncalled else {}
        for s in r.seats:
            row = S[s.player]
            assert row["seat"] == s.seat and row["stack_start"] == unit(s.stack)
            assert row["dealt_in"] == s.dealt_in and row["sitting_out"] == s.sitting_out
            if s.dealt_in:
                assert row["put_in"] == unit(r.put_in[s.player] - ret.get(s.player, 0)) or \
                    (row["put_in"] == unit(r.put_in[s.player]) and row["returned"] == unit(ret.get(s.player, 0)))
                assert row["collected"] == unit(r.collected(s.player))
                assert row["stack_end"] == unit(r.final_stacks[s.player])
                assert row["position"] is not None
            if s.bounty is not None:
                assert row["bounty"] == _d(s.bounty)
        # actions with seq numbering
        A = acts.get(hid, [])
        assert [a["seq"] for a in A] == [a.seq for a in r.actions]
        for got, a in zip(A, r.actions):
            want = kind_code.get(a.kind, a.kind)
            assert (got["player"], got["action"], got["street"], got["is_all_in"]) == (
                a.player, want, street_name[a.street], a.all_in), (hid, a)
            assert got["amount"] == unit(a.amount), (hid, a, got)
            if a.kind == "raise":
                assert got["raise_to"] == unit(a.to)
        # cards
        assert {p: [card_str(c) for c in cs] for p, cs in r.hole.items()} == holes[hid]
        if r.board:
            assert boards[hid] == [card_str(c) for c in r.board]
        else:
            assert hid not in boards or not boards[hid]
        # collections per pot
        want_c = sorted((c.pot, c.player, unit(c.amount)) for c in r.collections)  # hi/lo: one row per half
        assert sorted(colls.get(hid, [])) == want_c
        # bounties and finishes
        want_b = [(b.winner, b.eliminated, _d(b.cash), _d(b.increase) if b.new_bounty is not None else None,
                   _d(b.new_bounty) if b.new_bounty is not None else None) for b in r.bounty_awards]
        assert _bounties_equal(want_b, bounties.get(hid, [])), (hid, want_b, bounties.get(hid))
        want_f = sorted((f.player, f.place, _d(f.prize) if f.prize else None) for f in r.finishes)
        assert sorted(finishes.get(hid, []), key=str) == sorted(want_f, key=str)
    # the population exercised what it should
    assert sum(1 for r in by_id.values() if len(r.pots) > 1) >= 20
    assert sum(1 for r in by_id.values() if len(r.pots) > 1 and r.rake) >= 10  # pots listed after rake
    assert sum(1 for r in by_id.values() if r.bounty_awards) >= 5
    assert sum(1 for r in by_id.values() if any(p.low_winners for p in r.pots)) >= 3
    assert sum(1 for r in by_id.values() if any(a.kind == "small_big_blinds" for a in r.actions)) >= 3


def _bounties_equal(want, got):
    """Bounty rows equal, treating a missing increase/new bounty (fixed knockouts) as null or zero."""
    def norm(rows):
        return sorted(((w, e, a, i or None, n or None) for w, e, a, i, n in rows), key=str)
    return norm(want) == norm(got)


def test_parser_counts_sitting_out_tournament_players_as_dealt_in():
    hh = pytest.importorskip("pipelines.lib.handhistory")
    recs = [r for r in _population(seed=10, n_hands=150, tour_sitting_out=True)
            if r.tournament and any(s.sitting_out for s in r.seats)]
    assert recs
    parsed = hh.parse_text(write_hands(recs), "sitting_out.txt")
    n = {row["hand_id"]: row["n_players"] for row in parsed.tables["hands"].iter_rows(named=True)}
    assert all(n[r.hand_id] == len(r.dealt) for r in recs)


def test_parser_reads_fixed_limit_dead_blind_posts():
    hh = pytest.importorskip("pipelines.lib.handhistory")
    recs = [r for r in _population(seed=11, n_hands=300, fl_dead_posts=True)
            if r.config.limit == "fixed_limit" and any(a.kind == "small_big_blinds" for a in r.actions)]
    assert recs
    parsed = hh.parse_text(write_hands(recs), "fl_dead.txt")
    assert parsed.quarantine.height == 0


def test_omaha_hi_lo_lines_like_the_client():
    cfg = GameConfig("omaha", "pot_limit", 1, 2, hi_lo=True)
    seats = [SeatState(2, "ann", 100), SeatState(3, "ben", 100), SeatState(5, "cy", 100)]
    deck = deck_for(["7c 6s 7h As", "Ah 2h Kh 2s", "Ks Qd Kd Kc"], "5h 4d 2d Jd 6h")
    rec = play_hand(cfg, seats, 5, {p.player: Script({}) for p in seats}, np.random.default_rng(0), "7", T0, "T", 6,
                    deck=deck)
    lines = write_hand(rec).split("\n")
    assert lines[0].startswith("PokerStars Hand #7:  Omaha Hi/Lo Pot Limit ($0.01/$0.02 USD) - ")
    i = lines.index("*** SHOW DOWN ***")
    assert lines[i + 1:i + 7] == [
        "ann: shows [7c 6s 7h As] (HI: a pair of Sevens; LO: 6,5,4,2,A)",
        "ben: shows [Ah 2h Kh 2s] (HI: three of a kind, Deuces; LO: 6,5,4,2,A)",
        "cy: shows [Ks Qd Kd Kc] (HI: a flush, King high)",
        "cy collected $0.03 from pot",
        "ann collected $0.02 from pot",
        "ben collected $0.01 from pot",
    ]
    assert lines[-3] == ("Seat 2: ann (small blind) showed [7c 6s 7h As] and won ($0.02) with HI: a pair of Sevens; "
                         "LO: 6,5,4,2,A")
