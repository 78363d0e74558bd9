"""The hand_chat detector on hand texts written line by line, parsed by the real parser.

Each hand is a five-player hold'em hand at one table: three players see a
flop, one folds on it; chat lines are put where a test needs them (between
hands, among the posts, after a fold in play, after the last action). The
names are hostile (quotes, a backslash, emoji, a name that contains
``said, "``).
"""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import polars as pl
import pytest

from detectors.hand_chat import HandChatDetector, card_talk_model, chat_lines
from pipelines.lib.handhistory.parse import parse_text

SCHEMA = Path(__file__).resolve().parents[2] / "pipelines" / "lib" / "schema.sql"
CHATTER, PARTNER = 'O\'Neil "the \\ rock"', "🍀 said, \"hi"
OTHERS = ["villain_1", "villain_2", "villain_3", "villain_4", "chatty", "rail_watcher"]


def hand_text(hid: int, players: list[str], chat: dict[str, list[tuple[str, str]]]) -> str:
    """One hand: players[0] and [1] post, players[2] folds preflop, [0], [1], [3] and [4] see the flop... (the
    layout below); ``chat[place]`` are (speaker, text) lines put at ``place``: 'between' (before the posts),
    'posts' (between the posts), 'fold' (after players[2] folds), 'flop' (after the flop bet, before the
    calls), 'after' (after the last action)."""
    a, b, c, d, e = players
    said = {k: [f'{who} said, "{txt}"' for who, txt in v] for k, v in chat.items()}
    out = [f"PokerStars Hand #{hid}:  Hold'em No Limit ($0.05/$0.10 USD) - 2026/03/02 15:{hid % 60:02d}:00 ET",
           "Table 'Aludra II' 6-max Seat #5 is the button"]
    out += [f"Seat {i + 1}: {p} ($10 in chips)" for i, p in enumerate(players)]
    out += said.get("between", [])
    out += [f"{a}: posts small blind $0.05", *said.get("posts", []), f"{b}: posts big blind $0.10", "*** HOLE CARDS ***"]
    cards = ["Ah Kd", "7c 2d", "9s 9h", "Qs Jh", "5c 5d"]
    out += [f"Dealt to {p} [{cs}]" for p, cs in zip(players, cards)]
    out += [f"{c}: folds", *said.get("fold", []), f"{d}: calls $0.10", f"{e}: calls $0.10", f"{a}: calls $0.05",
            f"{b}: checks", "*** FLOP *** [2c 8d Th]", f"{a}: checks", f"{b}: checks", f"{d}: bets $0.30",
            *said.get("flop", []), f"{e}: calls $0.30", f"{a}: calls $0.30", f"{b}: folds",
            "*** TURN *** [2c 8d Th] [3s]", f"{a}: checks", f"{d}: checks", f"{e}: checks",
            "*** RIVER *** [2c 8d Th 3s] [Kc]", f"{a}: bets $1", f"{d}: folds", f"{e}: folds",
            *said.get("after", []),
            f"Uncalled bet ($1) returned to {a}", f"{a} collected $1.30 from pot", "*** SUMMARY ***",
            "Total pot $1.30 | Rake $0", "Board [2c 8d Th 3s Kc]", f"Seat 1: {a} (small blind) collected ($1.30)"]
    return "\n".join(out) + "\n\n\n"


def warehouse(texts: list[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute(SCHEMA.read_text())
    parsed = parse_text("".join(texts), "chat.txt")
    assert parsed.quarantine.is_empty(), parsed.quarantine
    for name, frame in parsed.tables.items():
        if not frame.is_empty():
            con.register("_f", frame)
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _f")
            con.unregister("_f")
    return con


def test_lines_in_play_and_the_action_they_came_before():
    chat = {"between": [("chatty", "gl all")], "posts": [(CHATTER, "hi")], "fold": [(CHATTER, "he has nothing")],
            "flop": [("rail_watcher", 'folded "AK" \\ lol')], "after": [(PARTNER, "nh, had KK")]}
    con = warehouse([hand_text(1, ["villain_1", "villain_2", CHATTER, PARTNER, "villain_3"], chat)])
    got = chat_lines(con).select("player", "text", "in_play", "next_actor", "next_action").to_dicts()
    assert got == [
        {"player": "chatty", "text": "gl all", "in_play": False, "next_actor": CHATTER, "next_action": "fold"},
        {"player": CHATTER, "text": "hi", "in_play": False, "next_actor": CHATTER, "next_action": "fold"},
        {"player": CHATTER, "text": "he has nothing", "in_play": True, "next_actor": PARTNER, "next_action": "call"},
        {"player": "rail_watcher", "text": 'folded "AK" \\ lol', "in_play": True, "next_actor": "villain_3",
         "next_action": "call"},
        {"player": PARTNER, "text": "nh, had KK", "in_play": False, "next_actor": None, "next_action": None},
    ]


def test_text_model_reads_card_talk_it_was_not_trained_on():
    model = card_talk_model(0)
    talk = ["he holds AJ", "folded QQ", "у него флеш", "tenía rey dama", "er hat nur 4 Outs", "call, he is bluffing"]
    other = ["good luck everyone", "hahaha", "👍", "ciao a tutti", "brb coffee", "спасибо"]
    p_talk, p_other = model.predict_proba(talk)[:, 1], model.predict_proba(other)[:, 1]
    assert (p_talk >= 0.5).all(), dict(zip(talk, p_talk))
    assert (p_other < 0.5).all(), dict(zip(other, p_other))


def population(n: int = 900, seed: int = 3, planted: int = 15, after: int = 0, chatty: float = 0.0,
               regular: str | None = None) -> duckdb.DuckDBPyConnection:
    """``n`` hands among seventeen players at one table; the chatter and the partner sit together in every
    sixth hand and wherever the draw seats them. In ``planted`` of the sixth hands the chatter, having
    folded, tells the partner (still in against two) about the hand; in ``after`` others it says the same
    after the last action; ``chatty`` reads every hand it plays aloud on the flop with that probability;
    ``regular`` sits in every one of the pair's sixth hands too."""
    rng = random.Random(seed)
    others = [*OTHERS[:5], *(f"reg_{i}:" for i in range(10))]
    pool = [CHATTER, PARTNER, *others]
    texts, plant_left, after_left = [], planted, after
    for hid in range(1, n + 1):
        chat: dict[str, list[tuple[str, str]]] = {}
        if hid % 6 == 0:
            rest = rng.sample([o for o in others if o != regular], 3)
            players = [rest[0], rest[1], CHATTER, PARTNER, regular or rest[2]]
            if plant_left > 0 and rng.random() < 0.5:
                chat["fold"] = [(CHATTER, rng.choice(["he has nothing", "folded AK", "he has QQ"]))]
                plant_left -= 1
            elif after_left > 0:
                chat["after"] = [(CHATTER, "folded AK, he had nothing")]
                after_left -= 1
        else:
            players = rng.sample(pool, 5)
        if "chatty" in players[3:] and rng.random() < chatty:
            chat.setdefault("flop", []).append(("chatty", rng.choice(["he has nothing", "i had AK", "he has a set"])))
        if rng.random() < 0.2:
            chat.setdefault("between", []).append((rng.choice(players), rng.choice(["gl", "ty", "lol", "😂"])))
        texts.append(hand_text(1000 + hid, players, chat))
    return warehouse(texts)


@pytest.fixture(scope="module")
def planted():
    return HandChatDetector().detect(population(chatty=0.3))


@pytest.mark.slow
def test_planted_chatter_and_partner_are_flagged(planted):
    flagged = [s for s in planted if s.flagged]
    assert [s.accounts for s in flagged] == [[CHATTER, PARTNER]]
    s = flagged[0]
    assert len(s.hands) == 15
    assert s.extra["lines"][0]["before"].endswith("call (preflop)")
    assert "$player" in s.evidence[0].sql and CHATTER not in s.evidence[0].sql


@pytest.mark.slow
def test_chatty_player_is_judged_against_its_own_rate(planted):
    assert not any(s.flagged and "chatty" in s.accounts for s in planted)


@pytest.mark.slow
def test_a_regular_at_the_partners_table_is_explained_away():
    """The regular hears every planted line too (it is still in the hand); once the partner explains the
    chatter's talk, the regular's hands without the partner hold none of it."""
    scored = HandChatDetector().fit(con := population(regular="villain_1"))
    rows = scored.score(con)
    assert [s.accounts for s in scored.detect(con) if s.flagged] == [[CHATTER, PARTNER]]
    reg = rows.filter(pl.col("opponent") == "villain_1").row(0, named=True)
    assert reg["explained_by"] == PARTNER and reg["k"] == 0 and reg["p_value"] == 1.0


@pytest.mark.slow
def test_talk_after_the_hand_does_not_flag():
    assert not any(s.flagged for s in HandChatDetector().detect(population(planted=0, after=15, chatty=0.3)))


def test_no_partner_in_the_hand_does_not_flag():
    """Heads-up on the river (the two others folded), the chatter tells its only opponent what it holds, again
    and again: no third player is in the hand to be harmed. Counting a line with one listener would flag it."""
    texts = []
    for hid in range(1, 61):
        players = [PARTNER, "villain_1", "villain_2", "villain_3", CHATTER]
        text = hand_text(hid, players, {})
        if hid % 3 == 0:
            text = text.replace("villain_3: folds\n", f'villain_3: folds\n{CHATTER} said, "i have AK, you have nothing"\n')
        texts.append(text)
    con = warehouse(texts)
    lines = chat_lines(con)
    assert lines.height == 20 and lines["in_play"].all()
    det = HandChatDetector().fit(con)
    assert det.usable_.is_empty()
    assert not any(s.flagged for s in det.detect(con))


@pytest.mark.slow
def test_rules_model_is_selectable_and_unknown_model_refused():
    con = population()
    assert [s.accounts for s in HandChatDetector(text_model="rules").detect(con) if s.flagged] == [[CHATTER, PARTNER]]
    with pytest.raises(ValueError):
        HandChatDetector(text_model="bert").fit(con)
    assert isinstance(chat_lines(con), pl.DataFrame)


def test_presences_counted_in_duckdb_equal_the_seats_and_watchers_joined():
    """The room's presences (a player dealt in, or chatting in a hand it did not play) counted by DuckDB equal the
    same read whole into Polars and made unique (the former computation), and the talkers' presences likewise: the
    seats of the window never have to reach Python."""
    from detectors.hand_chat.lines import chat_lines, presences

    con = population(n=300, chatty=0.3)
    lines = chat_lines(con)
    watchers = lines.select("hand_id", "player").unique()
    talkers = pl.DataFrame({"player": [CHATTER, "chatty"]})
    counts, kept = presences(con, watchers, talkers)
    seated = con.sql("SELECT hand_id, player FROM seats WHERE dealt_in").pl()
    both = pl.concat([seated, watchers], how="vertical").unique()
    expected = both.group_by("player").agg(n=pl.len()).sort("player")
    assert counts["player"].to_list() == expected["player"].to_list()
    assert counts["n"].to_list() == expected["n"].to_list() and watchers.height > 0
    assert kept.equals(both.filter(pl.col("player").is_in(talkers["player"].implode())).sort("hand_id", "player"))
    assert kept.height > 0
