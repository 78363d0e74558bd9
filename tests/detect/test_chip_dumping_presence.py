"""Chip dumping's presence test (the giver's preflop continuations with the receiver dealt in, against his own
play without him) on hand-made tables: a table-mate explained away by the partner, heads-up play compared with
heads-up play, a loose player judged by his own looseness, the repeated call's reuse."""

import functools


@functools.lru_cache(maxsize=1)
def _table_mate_world(seed: int = 3, rate_with_r: float = 0.6):
    """4,000 six-handed hands: F continues preflop at ``rate_with_r`` with R dealt in (40 % of the hands), 0.3
    otherwise; T sits beside R in 90 % of R's hands and in 30 % of the others; 20 honest players at 0.3 (built
    once, read by two tests)."""
    import random

    import duckdb
    import polars as pl

    rng = random.Random(seed)
    others = [f"h{i:02d}" for i in range(20)]
    seats, dec = [], []
    for h in range(4000):
        hid = f"{h:06d}"
        table = ["F"]
        if rng.random() < 0.4:
            table.append("R")
        if rng.random() < (0.9 if "R" in table else 0.3):
            table.append("T")
        table += rng.sample(others, 6 - len(table))
        seats += [(hid, p) for p in table]
        for p in table:
            rate = (rate_with_r if "R" in table else 0.3) if p == "F" else 0.3
            dec.append({"hand_id": hid, "player": p, "cont": rng.random() < rate, "sbin": rng.randrange(10),
                        "cbin": 1, "short": False, "tour": False, "nbin": 0, "variant": "holdem no_limit"})
    con = duckdb.connect()
    seat_rows = pl.DataFrame(seats, schema=["hand_id", "player"], orient="row")  # noqa: F841 (read by DuckDB)
    con.execute("CREATE TABLE seats AS SELECT hand_id, player, TRUE AS dealt_in FROM seat_rows")
    return con, pl.DataFrame(dec).with_columns(pl.col("sbin", "cbin", "nbin").cast(pl.Int8)), others


def test_a_partner_found_by_the_combined_test_explains_its_table_mate_away():
    """Tuning mixed-275's false case: a real feeder's receiver whose presence test is too weak for the first pass
    (there: a thin baseline, q > alpha) while its heads-up tests are strong did not explain its table-mate away, so
    the table-mate was flagged. Here the first pass finds no partner (alpha 1e-300); R passed as a partner found
    by the combined test puts T's test on the hands without R, where T changes nothing; R keeps its test. The
    detector does this by default."""
    import polars as pl
    import pytest

    from detectors import chip_dumping as cd
    from detectors.chip_dumping import presence

    con, d, others = _table_mate_world()
    one = lambda t, a, b: t.filter((pl.col("player") == a) & (pl.col("partner") == b)).row(0, named=True)  # noqa: E731
    alone = cd.presence_tests(con, d, alpha=1e-300)
    found = pl.DataFrame({"player": ["F"], "partner": ["R"], "p": [1e-9]})
    got = cd.presence_tests(con, d, alpha=1e-300, partners=found)
    assert one(alone, "F", "T")["pres_p"] < 1e-4  # nothing explained: the table-mate inherits R's effect
    assert one(got, "F", "T")["pres_p"] > 0.01 and one(got, "F", "T")["pres_n"] < one(alone, "F", "T")["pres_n"]
    assert one(got, "F", "R")["pres_p"] == pytest.approx(one(alone, "F", "R")["pres_p"], rel=1e-6)
    assert one(got, "F", "R")["pres_p"] < 1e-12
    # honest players untouched: no partner of theirs was passed or found (equal up to DuckDB's parallel sums; F sits
    # in every hand, so the pairs (h, F) have no baseline of h's own and no test: -1 for the missing p-values)
    h = lambda t: t.filter(pl.col("player").is_in(others)).sort("player", "partner")["pres_p"].fill_null(-1.0)  # noqa: E731
    assert len(h(got)) > 400 and h(got).to_list() == pytest.approx(h(alone).to_list(), rel=1e-6)
    assert 0 < (h(got) == -1).sum() == alone.filter(pl.col("player").is_in(others) & (pl.col("partner") == "F")).height
    # ranking: a passed partner is ranked by its own p among the first pass's (strongest first)
    first = pl.DataFrame({"player": ["F", "F"], "partner": ["A", "B"], "pres_p": [1e-8, 1e-6]})
    rk = presence._ranked_partners(first, 0.01, pl.DataFrame({"player": ["F", "F"], "partner": ["B", "C"], "p": [1e-10, 1e-7]}))
    assert rk.sort("rk")["partner"].to_list() == ["B", "A", "C"]


def test_a_repeated_presence_call_reuses_the_first_and_retests_only_changed_players(monkeypatch):
    """fit() makes the presence test twice (the second time with the combined test's partners). With ``state`` the
    second call reuses the first pass and the rows of every player whose ranked S did not change, and makes the
    second pass only for the players whose S changed: its rows equal a full call's (up to DuckDB's parallel sums),
    and it runs no first-pass query, and no query at all when no player's S changed."""
    import polars as pl
    import pytest

    from detectors import chip_dumping as cd
    from detectors.chip_dumping import presence

    con, d, others = _table_mate_world()
    parts: list[str] = []
    sql = presence._presence_sql
    monkeypatch.setattr(presence, "_presence_sql", lambda bins, tag, part: parts.append(part) or sql(bins, tag, part))
    state: dict = {}
    alone = cd.presence_tests(con, d, decisions_per_part=5000, state=state)
    assert "first" in parts and "second" in parts  # F's S (R) is found by the first pass

    def same(a: pl.DataFrame, b: pl.DataFrame) -> None:
        a, b = a.sort("player", "partner"), b.sort("player", "partner")
        assert a.select("player", "partner").equals(b.select("player", "partner")) and len(a) > 400
        for c in ("pres_n", "pres_k", "base_n", "base_k"):
            assert a[c].to_list() == b[c].to_list(), c
        for c in ("pres_e", "pres_p"):
            assert a[c].is_null().to_list() == b[c].is_null().to_list(), c
            assert a[c].fill_null(0).to_list() == pytest.approx(b[c].fill_null(0).to_list(), rel=1e-9), c

    # an honest player's partner passed by the combined test: only that player is tested again
    found = pl.DataFrame({"player": ["h00"], "partner": ["h01"], "p": [1e-9]})
    parts.clear()
    got = cd.presence_tests(con, d, decisions_per_part=5000, partners=found, state=state)
    assert "first" not in parts and "second" in parts
    full = cd.presence_tests(con, d, decisions_per_part=5000, partners=found)
    same(got, full)
    one = lambda t, a, b: t.filter((pl.col("player") == a) & (pl.col("partner") == b)).row(0, named=True)  # noqa: E731
    assert one(got, "h00", "h02")["pres_n"] < one(alone, "h00", "h02")["pres_n"]  # h00 judged without h01 now
    # the same partners again: no player's S changed, nothing is queried, the rows are the previous call's
    parts.clear()
    again = cd.presence_tests(con, d, decisions_per_part=5000, partners=found, state=state)
    assert parts == []
    same(again, full)
    # another decisions frame (or other parameters): the state is not used
    parts.clear()
    other = cd.presence_tests(con, d.head(len(d) - 1), decisions_per_part=5000, partners=found, state=state)
    assert "first" in parts and len(other) > 400


def test_presence_explains_a_receivers_table_mate_away():
    """F continues preflop twice as often when R is dealt in; T sits beside R in 90 % of R's hands (and in 30 % of
    the others) but changes nothing. The first pass sees both; the second judges T only on hands without R, its
    stronger partner, and finds nothing, while R keeps its test. Honest players are tested and never significant."""
    import polars as pl
    import pytest

    from detectors import chip_dumping as cd
    from detectors.chip_dumping import presence

    con, d, others = _table_mate_world()
    first_only = cd.presence_tests(con, d, alpha=0.0)  # alpha 0: no partner found in a first pass, nothing explained
    got = cd.presence_tests(con, d, decisions_per_part=5000)  # several partitions of players: the same counts
    one = lambda t, a, b: t.filter((pl.col("player") == a) & (pl.col("partner") == b)).row(0, named=True)  # noqa: E731
    assert one(first_only, "F", "T")["pres_p"] < 1e-4  # the table-mate inherits R's effect ...
    assert one(got, "F", "T")["pres_p"] > 0.01  # ... and is explained away
    assert one(got, "F", "R")["pres_p"] < 1e-12
    # the strongest partner keeps its first-pass test
    assert one(got, "F", "R")["pres_e"] == pytest.approx(one(first_only, "F", "R")["pres_e"], rel=1e-9)
    assert one(got, "F", "T")["pres_n"] < one(first_only, "F", "T")["pres_n"]  # judged on the hands without R only
    honest = got.filter(pl.col("player").is_in(others))
    assert len(honest) > 400 and honest["pres_p"].min() > 1e-4


def test_presence_compares_heads_up_play_with_heads_up_play(monkeypatch):
    """An honest player who plays much wider heads-up (as everyone should) and meets one opponent mostly
    heads-up (a final table, an emptying cash table) is not a feeder: the presence test compares the
    player's heads-up decisions with their own heads-up decisions. Without the table-size stratum the
    same data gives a tiny p-value (the held-out false flag this stratum was added for)."""
    import random

    import duckdb
    import polars as pl

    from detectors import chip_dumping as cd
    from detectors.chip_dumping import presence

    rng = random.Random(11)
    others = [f"h{i:02d}" for i in range(20)]
    seats, dec = [], []

    def hand(hid: str, table: list[str]) -> None:
        seats.extend((hid, p) for p in table)
        for p in table:
            rate = 0.7 if len(table) == 2 else 0.3  # everyone plays wider heads-up, with whoever
            dec.append({"hand_id": hid, "player": p, "cont": rng.random() < rate, "sbin": rng.randrange(10),
                        "cbin": 1, "short": False, "tour": True, "nbin": int(len(table) == 2), "variant": "holdem no_limit"})

    for h in range(3000):  # full ring: P and Q sometimes together
        table = ["P"] + (["Q"] if rng.random() < 0.1 else []) + rng.sample(others, 5)
        hand(f"a{h:05d}", table[:6])
    for h in range(300):  # P heads-up with Q
        hand(f"b{h:05d}", ["P", "Q"])
    for h in range(150):  # P heads-up with others
        hand(f"c{h:05d}", ["P", rng.choice(others)])
    con = duckdb.connect()
    con.execute("CREATE TABLE seats (hand_id VARCHAR, player VARCHAR, dealt_in BOOLEAN)")
    con.executemany("INSERT INTO seats VALUES (?, ?, TRUE)", seats)
    d = pl.DataFrame(dec).with_columns(pl.col("sbin", "cbin", "nbin").cast(pl.Int8))
    one = lambda t, a, b: t.filter((pl.col("player") == a) & (pl.col("partner") == b)).row(0, named=True)  # noqa: E731
    assert one(cd.presence_tests(con, d), "P", "Q")["pres_p"] > 0.01
    monkeypatch.setattr(presence, "PRESENCE_BINS", tuple(b for b in presence.PRESENCE_BINS if b != "nbin"))
    assert one(cd.presence_tests(con, d), "P", "Q")["pres_p"] < 1e-6


def _presence_world(rng, hands: list[tuple[str, list[str]]], rate) -> tuple:
    """seats and preflop decisions for hand-made tables: ``rate(player, table)`` is the player's continuation
    probability; nbin = heads-up (two dealt in)."""
    import duckdb
    import polars as pl

    seats, dec = [], []
    for hid, table in hands:
        seats.extend((hid, p) for p in table)
        for p in table:
            dec.append({"hand_id": hid, "player": p, "cont": rng.random() < rate(p, table), "sbin": rng.randrange(10),
                        "cbin": 1, "short": False, "tour": True, "nbin": int(len(table) == 2), "variant": "holdem no_limit"})
    con = duckdb.connect()
    con.execute("CREATE TABLE seats (hand_id VARCHAR, player VARCHAR, dealt_in BOOLEAN)")
    con.executemany("INSERT INTO seats VALUES (?, ?, TRUE)", seats)
    return con, pl.DataFrame(dec).with_columns(pl.col("sbin", "cbin", "nbin").cast(pl.Int8))


def test_a_loose_player_who_meets_one_opponent_heads_up_is_judged_by_his_own_looseness():
    """The held-out false flag: an honest loose player L (continues 55 % at a full table where others continue 30 %;
    everyone widens heads-up, L too) meets B mostly heads-up at the end of tournaments, and has almost no heads-up
    hands without B. His own heads-up cell is empty, so the old prior, the population's heads-up rate, predicted a
    tight player's continuations and B looked like L's receiver (p < 1e-4). The prior's mean now carries L's own
    looseness (the log-odds offset of all L's decisions without B): no signal. A feeder F whose looseness is with
    R alone, at full tables, keeps its tiny p-value."""
    import random

    import polars as pl

    from detectors import chip_dumping as cd
    from detectors.chip_dumping import presence

    rng = random.Random(5)
    others = [f"h{i:02d}" for i in range(20)]
    hands = []
    for h in range(2500):  # full tables: L, F, R, B among the others
        hands.append((f"a{h:05d}", rng.sample(["L", "F", "R", "B"], 2) + rng.sample(others, 4)))
    for h in range(160):  # L heads-up with B (the end of tournaments)
        hands.append((f"b{h:05d}", ["L", "B"]))
    for h in range(3):
        hands.append((f"c{h:05d}", ["L", rng.choice(others)]))
    for h in range(600):  # the others heads-up among themselves: the population's heads-up rate
        hands.append((f"d{h:05d}", rng.sample(others, 2)))

    def rate(p: str, table: list[str]) -> float:
        hu = len(table) == 2
        if p == "L":
            return 0.85 if hu else 0.55
        if p == "F" and "R" in table:
            return 0.6
        return 0.6 if hu else 0.3

    con, d = _presence_world(rng, hands, rate)
    one = lambda t, a, b: t.filter((pl.col("player") == a) & (pl.col("partner") == b)).row(0, named=True)  # noqa: E731
    got = cd.presence_tests(con, d)
    assert one(got, "L", "B")["pres_p"] > 0.01
    assert one(got, "F", "R")["pres_p"] < 1e-8
    # without the offset (the population's rate as the prior mean, as before) the same data accuses L
    assert one(cd.presence_tests(con, d, offset_a=None), "L", "B")["pres_p"] < 1e-4
