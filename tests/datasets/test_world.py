"""The synthetic world plays by the house rules (measured from its own hand records)."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from test_world_data import small_world

from datasets.population import make_population
from datasets.tournaments import (SNG_LEVELS, Entry, TourTable, first_button_by_high_card, mtt_payouts, sng_payouts,
                                  split_prizes)


def test_every_hand_balances():
    w = small_world()
    for h in w.hands:
        ret = h.uncalled[1] if h.uncalled else 0
        assert sum(h.put_in.values()) - ret == h.total_pot, h.hand_id
        assert sum(h.collected.values()) + h.rake == h.total_pot, h.hand_id
        start = {p: st for _, p, st, _ in h.seats}
        for p in h.dealt:
            back = h.collected.get(p, 0) + (ret if h.uncalled and h.uncalled[0] == p else 0)
            assert h.final[p] == start[p] - h.put_in[p] + back >= 0
        if h.tid:
            assert h.rake == 0
    cash = [h for h in w.hands if h.tid is None]
    assert any(h.rake > 0 for h in cash)
    # no flop, no drop
    assert all(h.rake == 0 for h in cash if h.streets_seen == 0)


def test_sng_structure_follows_the_house_rules():
    w = small_world()
    by_t = defaultdict(list)
    for h in w.hands:
        if h.tid:
            by_t[h.tid].append(h)
    sngs = {t: hs for t, hs in by_t.items() if len(hs[0].seats) == 9 and hs[0].table.endswith(" 1")
            and len({x.table for x in hs}) == 1 and all(x.ante == 0 for x in hs) and hs[0].awards == []
            and hs[0].bounty_of[hs[0].seats[0][1]] is None}
    assert len(sngs) >= 3
    pools = {r[1]: r[3] * r[4] for r in w.results if r[0] == "tournament"}
    for tid, hs in sngs.items():
        assert {st for _, _, st, _ in hs[0].seats} == {1500}
        for k, h in enumerate(hs):
            lvl = min(k // 10, 7)
            assert (h.sb, h.bb) == SNG_LEVELS[lvl], (tid, k)
            assert h.level == lvl + 1
        fin = [f for h in hs for f in h.finishes]
        assert len(fin) == 9 and len({p for p, _, _ in fin}) == 9
        pool = pools[tid]
        assert sum(prize or 0 for _, _, prize in fin) == pool
        paid = {place: prize for _, place, prize in fin if prize}
        if sorted(paid) == [1, 2, 3]:  # no tie for a paid place
            assert (paid[1], paid[2], paid[3]) == (pool // 2, pool * 3 // 10, pool // 5)
        # heads-up: the button posts the small blind
        for h in hs:
            if len(h.dealt) == 2:
                sb_post = [a for a in h.actions if a[3] == "small_blind"]
                btn_player = {s: p for s, p, _, _ in h.seats}.get(h.button)
                assert sb_post and sb_post[0][2] == btn_player


def test_first_button_by_high_card_uses_suit_order():
    rng = random.Random(3)
    for _ in range(50):
        seats = [1, 2, 3, 4, 5, 6, 7, 8, 9]
        button, drawn = first_button_by_high_card(seats, rng)
        best = max(drawn.values())
        assert drawn[button] == best
        # the card code orders rank first then clubs < diamonds < hearts < spades
        assert all((c >> 2, c & 3) <= (best >> 2, best & 3) for c in drawn.values())


def test_dead_button_rule():
    t = TourTable("t", 9)
    t.seats = {1: "a", 3: "b", 5: "c", 7: "d", 9: "e"}
    t.button = 1
    assert t.next_blinds(random.Random(1)) == (1, (3, 5))
    assert t.next_blinds(random.Random(1)) == (3, (5, 7))
    # the small blind (seat 5) busts: the big blind moves on, last hand's big blind posts the
    # small blind and the button goes to the empty seat 5 (dead button)
    del t.seats[5]
    assert t.next_blinds(random.Random(1)) == (5, (7, 9))
    # the big blind (seat 9) busts: the big blind moves to seat 1, no small blind this hand
    del t.seats[9]
    assert t.next_blinds(random.Random(1)) == (7, (None, 1))
    # then play goes on normally
    assert t.next_blinds(random.Random(1)) == (9, (1, 3))
    # heads-up: the engine places the blinds (button on the small blind)
    del t.seats[7]
    btn, blinds = t.next_blinds(random.Random(1))
    assert blinds is None and btn in (1, 3)


def test_prize_tables_and_ties():
    assert sng_payouts(9000) == {1: 4500, 2: 2700, 3: 1800}
    p = mtt_payouts(100, 100_000)
    assert sum(p.values()) == 100_000 and len(p) == 15
    assert all(p[k] >= p[k + 1] for k in range(1, 15))
    assert split_prizes([2, 3], {1: 5, 2: 3, 3: 2}) == [3, 2]


def test_mtt_bounties_conserve_money():
    w = small_world()
    tours = [r for r in w.results if r[0] == "tournament" and r[2] == "mtt" and r[5]]
    assert tours, "the small world has knockout events"
    for _, tid, kind, n, buy_in, bounty, progressive, paid in tours:
        assert paid == n * bounty, (tid, paid, n * bounty)
    # progressive knockouts: half in cash, half onto the winner's head
    pko = [h for h in w.hands if any(a[4] is not None for a in h.awards)]
    for h in pko:
        for winner, elim, cash, inc, new in h.awards:
            assert new == h.bounty_of[winner] + inc or new >= inc
            assert abs(cash - inc) <= 1 or len([a for a in h.awards if a[1] == elim]) > 1


def test_mtt_tables_balance_and_finish():
    w = small_world()
    by_t = defaultdict(list)
    for h in w.hands:
        if h.tid:
            by_t[h.tid].append(h)
    mtts = {t: hs for t, hs in by_t.items() if len({h.table for h in hs}) > 1}
    assert mtts
    for tid, hs in mtts.items():
        places = Counter(place for h in hs for _, place, _ in h.finishes)
        entrants = {p for h in hs for _, p, _, _ in h.seats}
        assert places[1] == 1
        assert sum(places.values()) == len(entrants)
        # at most 9 at a table, and the last hands are played at a single final table
        assert all(len(h.seats) <= 9 for h in hs)
        assert len({h.table for h in hs[-5:]}) == 1


def _cash_table_run(breaks_for: int, minutes: int = 60, wave: tuple[int, int] | None = None, fh=None):
    """Play one crafted 6-max table: five players for ``minutes``, player ``breaks_for`` away 10 minutes
    (``-1``: nobody); ``wave``: (start, end) minutes of a disconnect wave that hits every network; ``fh``: where
    the hand text goes."""
    import io

    from datasets.cash import Bucket, CashTablePlan, SeatPlan, play_cash_table
    from datasets.events import EventLog, HandSink
    from datasets.generate import plan_world
    from datasets.units import UnitContext

    world, _, _, _ = plan_world(preset="honest", seed=2, accounts=40, hands=300)
    people = [p for p in world.pop.persons if p.accounts][:5]
    t0 = world.t0_ms + 20 * 3_600_000
    if wave is not None:
        world.waves = [(t0 + wave[0] * 60_000, t0 + wave[1] * 60_000, "")]  # every address starts with ""
    plan = CashTablePlan(unit=0, name="Test", bucket=Bucket("holdem", "NL", 6, 2), day=0)
    for k, p in enumerate(people):
        brk = [(t0 + 20 * 60_000, t0 + 30 * 60_000)] if k == breaks_for else []
        plan.seats.append(SeatPlan(p.accounts[0], p.pid, t0, t0 + minutes * 60_000, 100, False, brk, False, k + 1))
    records = []
    events = EventLog()
    sink = HandSink(io.StringIO() if fh is None else fh, events, "operator", random.Random(1), on_record=records.append)
    ctx = UnitContext(world, sink, events)
    ctx.start_unit(0)
    play_cash_table(plan, ctx)
    return people[breaks_for].accounts[0], records, events


def wave_table_text() -> str:
    """The hand text and events (JSON) of a crafted table whose five players lose the connection at once."""
    import io
    import json

    fh = io.StringIO()
    _, _, events = _cash_table_run(breaks_for=-1, minutes=20, wave=(5, 8), fh=fh)
    return json.dumps({"hands": fh.getvalue(), "events": events.rows}, ensure_ascii=False)


def test_a_wave_reads_the_same_whatever_the_hash_seed():
    """Several players disconnected by one wave: their lines, logouts and logins come in the seats' order, not in
    a set's (whose order of names follows the process's hash seed)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    code = "import sys; from test_world import wave_table_text; sys.stdout.write(wave_table_text())"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=here.parents[1],
                              env=dict(os.environ, PYTHONHASHSEED=seed, PYTHONIOENCODING="utf-8",
                                       PYTHONPATH=os.pathsep.join([str(here.parents[1]), str(here)])))
             for seed in ("1", "2")]  # both at once: one a core
    runs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    hands = json.loads(runs[0])["hands"].split("\n\n\n")
    assert max(sum(line.endswith(" is disconnected") for line in h.splitlines()) for h in hands) >= 3
    assert runs[0] == runs[1]


def test_cash_break_sits_out_and_posts_missed_blinds_on_return():
    who, records, events = _cash_table_run(breaks_for=2)
    assert len(records) > 40
    kinds = [r[1] for r in events.rows if r[2] == who]
    assert "sit_out" in kinds and "sit_in" in kinds
    away = [r for r in records if any(s.player == who and s.sitting_out for s in r.seats)]
    assert away and all(who not in r.dealt for r in away)
    back = records[records.index(away[-1]) + 1]
    first_posts = [a.kind for a in back.actions if a.player == who and a.kind in
                   ("small_blind", "big_blind", "dead_small_blind", "small_big_blinds")]
    # missed both blinds while away: posts small & big blinds unless the big blind is theirs anyway
    assert first_posts in (["small_big_blinds"], ["big_blind"], ["small_blind"]), first_posts
    assert first_posts == ["small_big_blinds"] or who in (back.dealt[0], back.dealt[1])
    # every new player posted a big blind or waited for it; nobody was dealt in without a post
    assert sum(1 for r in records for a in r.actions if a.kind == "big_blind") >= len(records)


def test_cash_tables_rake_and_seat_sizes():
    w = small_world()
    sizes = Counter(len(h.seats) for h in w.hands if h.tid is None)
    assert max(sizes) >= 4
    assert {h.limit for h in w.hands if h.tid is None} >= {"no_limit", "pot_limit"}


def test_styles_are_varied_and_persistent():
    w = small_world()
    vp = defaultdict(lambda: [0, 0])
    for h in w.hands:
        if h.tid is not None:
            continue
        vol = {a[2] for a in h.actions if a[1] == 0 and a[3] in ("call", "raise", "bet")}
        for p in h.dealt:
            vp[p][0] += 1
            vp[p][1] += p in vol
    rates = sorted(v / n for n, v in vp.values() if n >= 150)
    assert len(rates) >= 10
    assert rates[-1] - rates[0] > 0.15  # tight and loose players


def test_households_share_an_ip_but_not_devices():
    pop = make_population(400, random.Random(4))
    houses = defaultdict(list)
    for p in pop.persons:
        if p.household is not None:
            houses[p.household].append(p)
    assert houses
    for members in houses.values():
        assert len({m.home_ip for m in members}) == 1
        devs = [d.fingerprint for m in members for d in m.devices]
        assert len(devs) == len(set(devs))
    assert len({a for a in pop.accounts}) == len(pop.accounts)


def test_sng_raise_cap():
    """House rule: at most three raises (four bets) a round in a sit-and-go, five raises heads-up."""
    w = small_world()
    sng_tids = {r[1] for r in w.results if r[0] == "tournament" and r[2] == "sng"}
    assert sng_tids
    worst = 0
    for h in w.hands:
        if h.tid not in sng_tids:
            continue
        for street in range(4):
            bets = sum(1 for a in h.actions if a[1] == street and a[3] in ("bet", "raise"))
            bets += 1 if street == 0 else 0  # the big blind is the first bet
            limit = 6 if len(h.dealt) == 2 else 4
            assert bets <= limit, (h.hand_id, street, bets)
            worst = max(worst, bets)
    assert worst >= 3


def test_planted_groups_get_enough_opportunities():
    """Colluders play regularly: tournament groups enter several events of their venue together, so a
    group's strength (its share of opportunities taken) is measurable, not lost to a lack of chances."""
    from datasets.generate import plan_world

    world, units, _, _ = plan_world(preset="mixed", seed=3)
    plans = {u[2].tid: u[2] for u in units if u[0] in ("sng", "mtt")}
    entered = defaultdict(int)
    for plan in plans.values():
        accs = {e.account for e in plan.entries}
        for g in world.groups:
            if sum(a in accs for a in g.accounts) >= min(2, len(g.accounts)):
                entered[g.gid] += 1
    floors = {"bounty_collusion": 5, "coordinated_sitout": 5, "seat_handoff": 4}
    for g in world.groups:
        if g.kind in floors:
            assert entered[g.gid] >= floors[g.kind], (g.gid, g.kind, entered[g.gid])
            assert all(plans[t].kind == "mtt" for t in g.tournaments)
        if g.kind in ("soft_play", "chip_dumping") and g.venue == "sng":
            assert entered[g.gid] >= 10, (g.gid, entered[g.gid])
    # sit-out groups are handed to the tournaments they entered, with their strength
    for g in world.groups:
        if g.kind == "coordinated_sitout":
            with_group = [p for p in plans.values() if any(gid == g.gid for gid, _, _ in p.sitout_groups)]
            assert len(with_group) == len(g.tournaments) >= 5


def test_groups_play_more_events_in_a_world_with_more_play():
    """The groups' event counts are for a world of the preset's size: the same accounts with four times
    the hands give each tournament group about four times the events (the counts' floors scale), while
    the preset's own size, and a smaller world, keep the preset's ranges (bounty gangs 5-10 events entered,
    sit-out groups 5-9, hand-offs 4-7)."""
    from datasets.generate import plan_world

    base, _, _, _ = plan_world(preset="mixed", seed=3)
    small, _, _, _ = plan_world(preset="mixed", seed=3, hands=30_000)
    ranges = {"bounty_collusion": (5, 10), "coordinated_sitout": (5, 9), "seat_handoff": (4, 7)}
    for g in base.groups + small.groups:
        if g.kind in ranges:
            lo, hi = ranges[g.kind]
            assert lo <= len(g.tournaments) <= hi, (g.gid, g.kind, len(g.tournaments))
    big, _, _, _ = plan_world(preset="mixed", seed=3, hands=240_000)
    floors = {"bounty_collusion": 21, "coordinated_sitout": 18, "seat_handoff": 12}  # 3x the preset's least
    for g, b in zip(big.groups, base.groups):
        assert g.kind == b.kind and g.accounts == b.accounts
        if g.kind in floors:
            assert len(g.tournaments) >= floors[g.kind], (g.gid, g.kind, len(g.tournaments))
    n_base = sum(len(g.tournaments) for g in base.groups)
    assert 3 * n_base <= sum(len(g.tournaments) for g in big.groups) <= 5 * n_base


def test_no_account_holds_two_seats_at_one_cash_table():
    """A partner joining the lead's table while already seated there by its own session kept one seat
    (mixed seed 101 once seated an account twice and the hand it played could not balance)."""
    from datasets.generate import plan_world

    world, units, _, _ = plan_world(preset="mixed", seed=101)
    tables = [u[2] for u in units if u[0] == "cash"]
    assert tables
    for t in tables:
        by_acc = defaultdict(list)
        for s in t.seats:
            by_acc[s.account].append((s.start_ms, s.end_ms))
        for acc, spans in by_acc.items():
            spans.sort()
            assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:])), (t.name, acc, spans)


def _play_one_mtt(accounts: int, players: int, tid: str):
    """Play one multi-table event of ``players`` honest entrants at 20:00 on the first day of a small world."""
    import io

    from datasets.events import EventLog, HandSink
    from datasets.generate import plan_world
    from datasets.units import UnitContext
    from datasets.tournaments import TournamentPlan, play_tournament

    world, _, _, _ = plan_world(preset="honest", seed=4, accounts=accounts, hands=300)
    people = [p for p in world.pop.persons if p.accounts][:players]
    t0 = world.t0_ms + 20 * 3_600_000
    plan = TournamentPlan(unit=0, tid=tid, kind="mtt", start_ms=t0, buy_in=1000, fee=100, stack=3000, name=tid)
    plan.entries = [Entry(p.accounts[0], p.pid, t0 - 60_000) for p in people]
    events = EventLog()
    sink = HandSink(io.StringIO(), events, "operator", random.Random(1), on_record=lambda r: None)
    ctx = UnitContext(world, sink, events)
    ctx.start_unit(0)
    play_tournament(plan, ctx)
    return world, plan, t0, events


def test_mtt_scheduled_breaks_every_hour_until_the_end():
    """Synchronised breaks at 55 past each hour for as long as the event runs, also after tables are
    broken (a broken table's stopped clock once held the break back for the rest of the event)."""
    _, _, t0, events = _play_one_mtt(accounts=120, players=80, tid="991")
    minutes = (max(r[0] for r in events.rows) - t0) / 60_000
    assert minutes > 150, minutes  # long enough for several breaks, tables broken along the way
    sitouts = sorted(r[0] for r in events.rows if r[1] == "sit_out")
    # a break: several players sit out within one minute (honest single sit-outs are rare)
    starts = []
    for t in sitouts:
        if (not starts or t - starts[-1] > 20 * 60_000) and sum(t <= u < t + 60_000 for u in sitouts) >= 4:
            starts.append(t)
    # one at 55 past each hour the event ran (10 minutes' slack: tables finish their hands first)
    expected = int((minutes - 55 - 10) // 60) + 1
    assert len(starts) >= expected >= 2, (minutes, [(s - t0) / 60_000 for s in starts])


def test_mtt_honest_owners_move_from_phone_to_desktop_mid_event():
    """The honest look-alike of a seat hand-off: an owner who started a multi-table event on the phone
    logs out and carries on from the desktop at home seconds later (a new session, the person's own
    desktop and home network), about one mobile entry in six."""
    world, plan, t0, events = _play_one_mtt(accounts=400, players=150, tid="992")
    mobile = [e for e in plan.entries if e.mobile]
    by_acc = defaultdict(list)
    for ts, kind, acc, data in sorted(events.rows, key=lambda r: r[0]):
        if kind in ("login", "logout"):
            by_acc[acc].append((ts, kind, data))
    moves = []
    for e in plan.entries:
        rows = by_acc[e.account]
        for (t1, k1, _), (t2, k2, d2) in zip(rows, rows[1:]):
            if k1 == "logout" and k2 == "login" and t1 > t0 and d2["device"] != rows[0][2]["device"]:
                moves.append((e, t2 - t1, d2))
    assert mobile and 0 < len(moves) <= len(mobile) / 2, (len(mobile), len(moves))
    for e, gap, d in moves:
        assert e.mobile and e.handoff_pid < 0
        assert 2_000 <= gap <= 40_000
        assert (d["ip"], d["device"]) == world.devices.desktop(e.pid)



def _knockout_counts(world, units) -> tuple[int, int, int, int]:
    """Multi-table entries of the bounty hunters (knockouts, freezeouts) and of the other multi-table players."""
    hunters = {p.pid for p in world.pop.persons if p.knockout > 1}
    others = {p.pid for p in world.pop.persons if p.favourite == "mtt" and p.knockout == 1}
    c = [0, 0, 0, 0]
    for kind, _, plan, _ in units:
        if kind == "mtt":
            for e in plan.entries:
                if e.pid in hunters or e.pid in others:
                    c[(0 if e.pid in hunters else 2) + (plan.bounty is None)] += 1
    return tuple(c)


def test_bounty_hunters_fill_the_knockouts(monkeypatch):
    """About one multi-table player in six is a bounty hunter who weights knockout and PKO events 3-6
    times a freezeout: the odds that a hunter's entry is a knockout are well above the other multi-table
    players' (Mantel-Haenszel odds ratio over four worlds; diluted from the taste's 3-6 because a
    regular enters nearly every event of either kind). Without the taste the same persons' odds are the
    others', and the persons and groups of a seed do not depend on it."""
    from datasets import generate
    from datasets.population import BOUNTY_HUNTER_TASTE

    mh = {True: [0.0, 0.0], False: [0.0, 0.0]}
    for seed in (3, 5, 7, 9):
        world, units, _, _ = generate.plan_world(preset="mixed", seed=seed)
        mtt = [p for p in world.pop.persons if p.favourite == "mtt"]
        hunters = [p for p in world.pop.persons if p.knockout != 1.0]
        assert all(p.favourite == "mtt" and BOUNTY_HUNTER_TASTE[0] <= p.knockout <= BOUNTY_HUNTER_TASTE[1]
                   for p in hunters)
        assert 0.08 * len(mtt) <= len(hunters) <= 0.28 * len(mtt), (len(hunters), len(mtt))
        monkeypatch.setattr(generate, "draw_format_taste", lambda pop, rng, *taste: [])
        plain, plain_units, _, _ = generate.plan_world(preset="mixed", seed=seed)
        monkeypatch.undo()
        assert [g.accounts for g in plain.groups] == [g.accounts for g in world.groups]
        assert ([(p.style, p.favourite, p.activity) for p in plain.pop.persons]
                == [(p.style, p.favourite, p.activity) for p in world.pop.persons])
        for p in plain.pop.persons:
            p.knockout = world.pop.persons[p.pid].knockout  # who would have been a hunter
        for taste, (w, u) in ((True, (world, units)), (False, (plain, plain_units))):
            hk, hf, ok, of = _knockout_counts(w, u)
            n = hk + hf + ok + of
            mh[taste][0] += hk * of / n
            mh[taste][1] += hf * ok / n
    assert mh[True][0] / mh[True][1] >= 1.6, mh
    assert mh[False][0] / mh[False][1] <= 1.25, mh
