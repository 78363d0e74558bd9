"""Planted and known data for the gameplay detectors: small warehouses built row by row.

:func:`build_world` plays a small cash-game world straight into a DuckDB
warehouse with the schema of ``pipelines/lib/schema.sql`` (operator view: all
hole cards). Honest players follow a simple card-driven policy with their own
style (tight/loose, passive/aggressive); planted groups deviate only against
their partners and only in a share ``rate`` of their chances:

- ``soft``: pairs/rings who, in soft-mode hands, never bet or raise each other;
- ``dump``: (dumper, receiver) pairs; in dump-mode hands the dumper bets the pot
  with any cards, the receiver raises, the dumper folds;
- ``regulars``: honest pairs seated together at every hand of their table;
- ``pre_fold``: pairs who, in a share ``rate`` of the hands where one would call
  the other's preflop raise, fold instead (the hands: ``pre_fold_hands``).

Everything is seeded; the labels are returned for the assertions. Each world is played once per process
(:func:`_built_once`): a builder called again with the same arguments returns a copy of it.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pytest

from datasets import cards as C
from detectors.features import gameplay as gp

SCHEMA = Path(__file__).resolve().parents[2] / "pipelines" / "lib" / "schema.sql"


def new_warehouse() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute(SCHEMA.read_text())
    return con


@dataclass
class World:
    con: duckdb.DuckDBPyConnection
    soft: list[tuple[str, ...]] = field(default_factory=list)
    dump: list[tuple[str, str]] = field(default_factory=list)
    regulars: list[tuple[str, str]] = field(default_factory=list)
    soft_hands: dict = field(default_factory=dict)  # frozenset(pair) -> hand ids where soft play happened
    dump_hands: dict = field(default_factory=dict)
    pre_fold_hands: dict = field(default_factory=dict)  # frozenset(pair) -> hand ids where a call became a fold


class _Hand:
    def __init__(self, hid, players, start):
        self.hid, self.players, self.start = hid, players, start
        self.actions: list[tuple] = []
        self.put = {p: 0.0 for p in players}
        self.street_put = {p: 0.0 for p in players}
        self.folded: set[str] = set()
        self.pot = 0.0

    def act(self, street, p, action, amount=0.0, to_call=0.0, raise_to=None):
        n_active = len(self.players) - len(self.folded)
        self.actions.append((self.hid, len(self.actions), street, p, action, round(amount, 2), raise_to,
                             False, round(self.pot, 2), round(to_call, 2), n_active))
        self.pot += amount
        self.put[p] += amount
        self.street_put[p] += amount
        if action == "fold":
            self.folded.add(p)


def _play_world(
    *,
    n_players: int = 36,
    n_hands: int = 5000,
    soft: list[tuple[tuple[str, ...], float]] = (),
    dump: list[tuple[tuple[str, str], float]] = (),
    regulars: list[tuple[str, str]] = (),
    seed: int = 7,
    pre_fold: list[tuple[tuple[str, str], float]] = (),
) -> World:
    """The cash-game world of the module docstring, played hand by hand into a new in-memory warehouse (what
    :func:`build_world` copies); ``n_players`` accounts, ``n_hands`` six-handed hands 40 s apart, the planted
    groups with the share of their chances they deviate in, ``seed`` for every draw."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    names = [f"p{i:02d}" for i in range(n_players)]
    style = {p: (rng.uniform(0.42, 0.56), rng.uniform(0.55, 0.75), rng.uniform(0.03, 0.12)) for p in names}
    soft_of: dict[frozenset, float] = {}
    for grp, rate in soft:
        for i, a in enumerate(grp):
            for b in grp[i + 1:]:
                soft_of[frozenset((a, b))] = rate
    dump_of = {(d, r): rate for (d, r), rate in dump}
    pre_fold_of = {frozenset(pr): rate for pr, rate in pre_fold}
    world = World(new_warehouse(), [g for g, _ in soft], [p for p, _ in dump], list(regulars))
    special = sorted({p for g, _ in soft for p in g} | {p for pr, _ in dump for p in pr} | {p for pr in regulars for p in pr}
                     | {p for pr, _ in pre_fold for p in pr})
    t0 = dt.datetime(2026, 3, 4, 18, 0)
    # deal all cards first and value them vectorised (policy input only)
    deals = np.argsort(nrng.random((n_hands, 52)), axis=1)[:, :17].astype(np.int64)  # 6 x 2 hole + 5 board
    hole = deals[:, :12].reshape(n_hands, 6, 2)
    board = deals[:, 12:]
    H = hole.reshape(-1, 2)
    B = np.repeat(board, 6, axis=0)
    strength = {}
    for street, L in (("preflop", 0), ("flop", 3), ("turn", 4), ("river", 5)):
        s, _ = gp.card_values(H, np.full_like(H, -1), B, np.full(len(H), L), samples=16, random_state=seed + L)
        strength[street] = s.reshape(n_hands, 6)
    hands_rows, seat_rows, hole_rows, board_rows = [], [], [], []
    acts = []
    for h in range(n_hands):
        hid = str(100000 + h)
        # table roster: specials sit together often
        if special and rng.random() < 0.5:
            group = rng.sample(special, min(len(special), rng.choice([2, 3])))
            others = [p for p in names if p not in group]
            players = group + rng.sample(others, 6 - len(group))
            rng.shuffle(players)
        else:
            players = rng.sample(names, 6)
        for a, b in regulars:
            if a in players and b not in players:
                players[(players.index(a) + 1) % 6] = b if b not in players else players[(players.index(a) + 1) % 6]
        if len(set(players)) < 6:
            players = list(dict.fromkeys(players)) + [p for p in names if p not in players][: 6 - len(set(players))]
        idx = {p: i for i, p in enumerate(players)}
        st = {k: {p: float(v[h, idx[p]]) for p in players} for k, v in strength.items()}
        hd = _Hand(hid, players, t0 + dt.timedelta(seconds=40 * h))
        hd.act("preflop", players[1], "post_sb", 0.5)
        hd.act("preflop", players[2], "post_bb", 1.0)
        entrants = []
        forced = next(((d, r) for (d, r), rate in dump_of.items() if d in players and r in players and rng.random() < rate), None)
        for p in players[3:] + players[:3]:
            want = (p in forced) if forced else st["preflop"][p] >= style[p][0]
            if want and entrants and not forced and frozenset((p, entrants[0])) in pre_fold_of \
                    and rng.random() < pre_fold_of[frozenset((p, entrants[0]))]:
                want = False  # leaves the partner's raised pot alone
                world.pre_fold_hands.setdefault(frozenset((p, entrants[0])), []).append(hid)
            if want and len(entrants) < 2:
                if not entrants:
                    hd.act("preflop", p, "raise", 3.0 - hd.street_put[p], to_call=1.0 - hd.street_put[p], raise_to=3.0)
                else:
                    hd.act("preflop", p, "call", 3.0 - hd.street_put[p], to_call=3.0 - hd.street_put[p])
                entrants.append(p)
            else:
                if p == players[2] and not entrants:
                    continue  # walk: BB keeps the blinds
                hd.act("preflop", p, "fold", to_call=max(0.0, (3.0 if entrants else 1.0) - hd.street_put[p]))
        winner = None
        reached = 0
        if len(entrants) < 2:
            winner = entrants[0] if entrants else players[2]
        else:
            x, y = sorted(entrants, key=lambda p: (idx[p] - 1) % 6)  # x acts first postflop
            pair = frozenset((x, y))
            soft_mode = pair in soft_of and rng.random() < soft_of[pair]
            dumper = next(((d, r) for (d, r) in dump_of if {d, r} == {x, y}), None)
            dump_mode = dumper is not None and forced == dumper
            if soft_mode:
                world.soft_hands.setdefault(pair, []).append(hid)
            if dump_mode:
                world.dump_hands.setdefault(pair, []).append(hid)
            for street, L in (("flop", 3), ("turn", 4), ("river", 5)):
                reached = L
                hd.street_put = {p: 0.0 for p in players}
                if dump_mode:
                    d, r = dumper
                    first, second = (d, r) if x == d else (r, d)
                    if first == r:
                        hd.act(street, r, "check")
                    bet = round(2 * hd.pot, 2)  # an overbet with any two cards
                    hd.act(street, d, "bet", bet)
                    hd.act(street, r, "raise", 2 * bet, to_call=bet, raise_to=3 * bet)
                    hd.act(street, d, "fold", to_call=2 * bet)
                    winner = r
                    break

                def aggressive(p, q, facing=False):
                    if soft_mode:
                        return False
                    s = st[street][p]
                    thr = style[p][1] + (0.15 if facing else 0.0)
                    return s >= thr and rng.random() < 0.85 or rng.random() < style[p][2]

                def respond(p, bettor, bet):
                    s = st[street][p]
                    odds = bet / (hd.pot + bet)
                    if aggressive(p, bettor, facing=True) and st[street][p] >= 0.8:
                        hd.act(street, p, "raise", 3 * bet, to_call=bet, raise_to=3 * bet)
                        s2 = st[street][bettor]
                        if s2 >= 0.6:
                            hd.act(street, bettor, "call", 2 * bet, to_call=2 * bet)
                            return None
                        hd.act(street, bettor, "fold", to_call=2 * bet)
                        return p
                    if s >= odds + 0.25 or (soft_mode and s >= 0.5):
                        hd.act(street, p, "call", bet, to_call=bet)
                        return None
                    hd.act(street, p, "fold", to_call=bet)
                    return bettor

                if aggressive(x, y):
                    bet = round(0.66 * hd.pot, 2)
                    hd.act(street, x, "bet", bet)
                    winner = respond(y, x, bet)
                else:
                    hd.act(street, x, "check")
                    if aggressive(y, x):
                        bet = round(0.66 * hd.pot, 2)
                        hd.act(street, y, "bet", bet)
                        winner = respond(x, y, bet)
                    else:
                        hd.act(street, y, "check")
                if winner is not None:
                    break
            if winner is None:  # showdown
                vx = C.evaluate(list(hole[h, idx[x]]) + list(board[h]))
                vy = C.evaluate(list(hole[h, idx[y]]) + list(board[h]))
                winner = x if vx > vy else y if vy > vx else None
                if winner is None:
                    winner = (x, y)
        winners = winner if isinstance(winner, tuple) else (winner,)
        collected = {p: 0.0 for p in players}
        for w in winners:
            collected[w] += round(hd.pot / len(winners), 2)
        acts.extend(hd.actions)
        hands_rows.append((hid, "PokerStars", False, "holdem", False, "no_limit", "USD", False, None, None, 0.5, 1.0, None,
                           hd.start, None, hd.start.date(), f"T{h % 7}", 6, 1, 6, round(hd.pot, 2), 0.0, False, True,
                           None, "planted.txt", h + 1, hid))
        for i, p in enumerate(players):
            put = round(hd.put[p], 2)
            seat_rows.append((hid, i + 1, p, 100.0, None, False, True, None, put, 0.0, collected[p],
                              round(collected[p] - put, 2), round(100 - put + collected[p], 2), False))
            hole_rows.append((hid, p, [C.card_str(int(c)) for c in hole[h, i]], "dealt"))
        if reached:
            board_rows.append((hid, 1, [C.card_str(int(c)) for c in board[h, :reached]]))
    con = world.con
    _insert(con, "hands", hands_rows)
    _insert(con, "seats", seat_rows)
    _insert(con, "actions", acts)
    _insert(con, "hole_cards", hole_rows)
    _insert(con, "boards", board_rows)
    return world


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """Bulk insert through an Arrow table (DuckDB's executemany is row by row)."""
    import pyarrow as pa

    if not rows:
        return
    cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    arr = pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)})
    con.register("_rows", arr)
    con.execute(f"INSERT INTO {table} SELECT * FROM _rows")
    con.unregister("_rows")


def to_player_view(con: duckdb.DuckDBPyConnection) -> None:
    """Forget every hole card except the first seat's (the hero) and those at showdown."""
    con.execute("UPDATE hands SET all_cards_known = false")
    con.execute(
        """
        DELETE FROM hole_cards WHERE (hand_id, player) NOT IN (
            SELECT hand_id, player FROM seats WHERE seat = 1
            UNION ALL
            SELECT s.hand_id, s.player FROM seats s
            WHERE s.player NOT IN (SELECT player FROM actions a WHERE a.hand_id = s.hand_id AND a.action = 'fold')
              AND s.hand_id IN (SELECT hand_id FROM boards WHERE len(cards) = 5))
        """
    )


def _copy_world(world: World) -> World:
    """A copy of ``world``: its tables, row for row and in their order, in a new in-memory warehouse, and its
    labels (every other attribute) deep-copied; what a test changes in the copy never reaches ``world``."""
    import copy

    con = new_warehouse()
    for (table,) in world.con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal "
                                      "ORDER BY table_name").fetchall():  # the schema's table names
        rows = world.con.table(table).to_arrow_table()
        if rows.num_rows:
            con.register("_rows", rows)
            con.execute(f"INSERT INTO {table} SELECT * FROM _rows")
            con.unregister("_rows")
    labels = copy.deepcopy({k: v for k, v in vars(world).items() if k != "con"})
    out = World(con)
    out.__dict__.update(labels)
    return out


def _built_once(build):
    """``build`` (a world builder taking keyword arguments only), each world played once per process: a call
    returns a copy (:func:`_copy_world`) of the world its arguments built first.

    Why: many tests build the same seeded world (``build_ko_world(n_hands=2000, rate=0.0, seed=11)`` in nine,
    ``build_world(n_players=24, n_hands=3000, seed=21)`` in five) and then change its rows; the copy holds the
    same rows in the same order as a new build (a seeded build is the same every time) and costs a fraction
    of playing the hands again. Returns the builder with ``build``'s name, signature and docstring.
    """
    import functools

    made: dict[str, World] = {}

    @functools.wraps(build)
    def copy_of_built(**kwargs) -> World:
        key = repr(sorted(kwargs.items()))
        if key not in made:
            made[key] = build(**kwargs)
        return _copy_world(made[key])

    return copy_of_built


build_world = _built_once(_play_world)


@pytest.fixture(scope="module")
def con(world):
    """The test module's own ``world`` fixture built into an in-memory warehouse, once per module."""
    c = world.build()
    yield c
    c.close()


@pytest.fixture(scope="session")
def planted_world() -> World:
    """Soft pair p01-p02 and ring p03-p04-p05 (60 % of their chances), dumper p06 -> p07
    (half the hands they share), a dumping star p20 -> p21, p22, p23, regulars p10-p11."""
    return build_world(
        n_players=36,
        n_hands=5000,
        soft=[(("p01", "p02"), 0.6), (("p03", "p04", "p05"), 0.6)],
        dump=[(("p06", "p07"), 0.5), (("p20", "p21"), 0.5), (("p20", "p22"), 0.5), (("p20", "p23"), 0.5)],
        regulars=[("p10", "p11")],
        seed=11,
    )


@pytest.fixture(scope="session")
def planted_signals(planted_world):
    from detectors.chip_dumping import ChipDumpingDetector
    from detectors.soft_play import SoftPlayDetector

    con = planted_world.con
    return {"soft_play": SoftPlayDetector().detect(con), "chip_dumping": ChipDumpingDetector().detect(con)}


def _play_ko_world(*, n_players: int = 30, n_hands: int = 3000, colluders: tuple[str, str] = ("k01", "k02"),
                   rate: float = 0.5, regulars: tuple[str, str] = ("k10", "k11"), seed: int = 5) -> World:
    """Knockout hands: a short stack shoves; callers contest it; colluders call together and check down.

    Honest callers call the shove with a good hand (preflop equity >= 0.58) and
    check the dry side pot down 70 % of the time; the regulars sit together at
    every hand they play. In a share ``rate`` of the hands where both
    colluders are dealt in, both call whatever they hold and check down.
    """
    rng = random.Random(seed)
    names = [f"k{i:02d}" for i in range(n_players)]
    world = World(new_warehouse(), soft=[], dump=[], regulars=[regulars])
    world.ko = [colluders]
    world.ko_hands = []
    t0 = dt.datetime(2026, 3, 5, 18, 0)
    hands_rows, seat_rows, acts, hole_rows, board_rows, bounty_rows, tour_rows = [], [], [], [], [], [], []
    table = gp.preflop_equity_table()
    for h in range(n_hands):
        hid, tid = str(500000 + h), str(9000 + h // 50)
        if h % 50 == 0:
            tour_rows.append((tid, 10.0, 5.0, 1.0, "USD", "knockout", "holdem", "no_limit", None, None))
        players = rng.sample(names, 6)
        if rng.random() < 0.4 and colluders[0] not in players:
            players[0] = colluders[0]
        if rng.random() < 0.4 and colluders[1] not in players:
            players[1] = colluders[1]
        if regulars[0] in players and regulars[1] not in players:
            players[(players.index(regulars[0]) + 1) % 6] = regulars[1]
        rng.shuffle(players)
        deck = rng.sample(range(52), 17)
        hole = {p: deck[2 * i: 2 * i + 2] for i, p in enumerate(players)}
        board = deck[12:17]

        def eq(p):
            a, b = hole[p]
            hi, lo = max(a >> 2, b >> 2), min(a >> 2, b >> 2)
            return table[lo, hi] if (a & 3) == (b & 3) and hi != lo else table[hi, lo]

        target = next(p for p in players if p not in colluders and p not in regulars)
        stacks = {p: 3000.0 for p in players}
        stacks[target] = 600.0
        hd = _Hand(hid, players, t0 + dt.timedelta(seconds=60 * h))
        hd.act("preflop", players[1], "post_sb", 50.0)
        hd.act("preflop", players[2], "post_bb", 100.0)
        order = players[3:] + players[:3]
        order.remove(target)
        order.insert(0, target)
        hd.actions.append((hid, len(hd.actions), "preflop", target, "raise", 600.0, 600.0, True, hd.pot, 100.0, 6))
        hd.pot += 600.0
        hd.put[target] += 600.0
        gang = colluders[0] in players and colluders[1] in players and rng.random() < rate
        if gang:
            world.ko_hands.append(hid)
        callers = []
        for p in order[1:]:
            owe = 600.0 - hd.put[p]
            if (gang and p in colluders) or (not (gang and p not in colluders) and eq(p) >= 0.58 and len(callers) < 2):
                hd.act("preflop", p, "call", owe, to_call=owe)
                callers.append(p)
            else:
                hd.act("preflop", p, "fold", to_call=owe)
        reached = 0
        live = [target] + callers
        if len(callers) >= 2:
            a, b = callers[:2]
            check_down = gang or rng.random() < 0.7
            for street, L in (("flop", 3), ("turn", 4), ("river", 5)):
                reached = L
                if check_down or a not in live or b not in live:
                    for p in (a, b):
                        if p in live:
                            hd.act(street, p, "check")
                else:
                    strong = a if C.evaluate(hole[a] + board[:L]) >= C.evaluate(hole[b] + board[:L]) else b
                    weak = b if strong == a else a
                    hd.act(street, strong, "bet", 300.0)
                    hd.act(street, weak, "fold", to_call=300.0)
                    live.remove(weak)
        elif callers:
            reached = 5
        else:
            live = [target]
        vals = {p: C.evaluate(hole[p] + board) for p in live}
        best = max(vals.values())
        winners = [p for p in live if vals[p] == best]
        collected = {p: 0.0 for p in players}
        for w in winners:
            collected[w] += round(hd.pot / len(winners), 2)
        if target not in winners:
            bounty_rows.append((hid, tid, winners[0], target, 5.0, None, None))
        acts.extend(hd.actions)
        hands_rows.append((hid, "PokerStars", False, "holdem", False, "no_limit", "CHIPS", True, tid, "I", 50.0, 100.0, None,
                           hd.start, None, hd.start.date(), f"{tid} 1", 6, 1, 6, round(hd.pot, 2), 0.0, False, True,
                           None, "ko.txt", h + 1, hid))
        for i, p in enumerate(players):
            put = round(hd.put[p], 2)
            seat_rows.append((hid, i + 1, p, stacks[p], 5.0, False, True, None, put, 0.0, collected[p],
                              round(collected[p] - put, 2), round(stacks[p] - put + collected[p], 2), False))
            hole_rows.append((hid, p, [C.card_str(c) for c in hole[p]], "dealt"))
        if reached:
            board_rows.append((hid, 1, [C.card_str(c) for c in board[:reached]]))
    con = world.con
    _insert(con, "tournaments", tour_rows)
    _insert(con, "hands", hands_rows)
    _insert(con, "seats", seat_rows)
    _insert(con, "actions", acts)
    _insert(con, "hole_cards", hole_rows)
    _insert(con, "boards", board_rows)
    _insert(con, "bounties", bounty_rows)
    return world


build_ko_world = _built_once(_play_ko_world)


@pytest.fixture(scope="session")
def ko_world() -> World:
    return build_ko_world()


def window_runs(make_world, signals, **build) -> dict[str, list]:
    """The three runs of a window test: a detector's ``signals(con, window_days)`` over the last three days of a
    world with month-old play (``make_world(True)``), over every day of it, and over every day of the same world
    without the old play (``make_world(False)``); ``build``: passed to each world's ``build``."""
    full = make_world(True).build(**build)
    recent = make_world(False).build(**build)
    out = {"full window 3": signals(full, 3), "full every day": signals(full, 0),
           "recent every day": signals(recent, 0)}
    full.close()
    recent.close()
    return out


def keep_days_from(con: duckdb.DuckDBPyConnection, first_day) -> list[str]:
    """Delete the hands of ``con`` before ``first_day`` and the rows of every table keyed by hand (each with a
    ``hand_id`` column) that belong to them, so that ``con`` holds those days alone; the tables keyed by hand."""
    of_hands = [r[0] for r in con.execute("SELECT table_name FROM duckdb_columns() WHERE column_name = 'hand_id' "
                                          "AND table_name <> 'hands' AND NOT internal").fetchall()]
    for t in of_hands:
        name = '"' + t.replace('"', '""') + '"'  # a table name from the catalog, quoted
        con.execute(f"DELETE FROM {name} WHERE hand_id IN (SELECT hand_id FROM hands WHERE day < ?)", [first_day])
    con.execute("DELETE FROM hands WHERE day < ?", [first_day])
    return of_hands
