"""The six detectors on real hand histories: ``../shared/corpora/pokerstars`` (read in place, never copied).

The corpus is the player view at its thinnest: each file is one hero's hands,
often one session at one table, so everyone in a file was dealt in with its
hero in every hand, and most players have no hands without their table-mates.
Nobody in it is known to collude (the files are other parsers' regression
samples); what a detector may conclude from such data is what its own
baselines carry, and a player's style against the population's is not that
(a loose player at one table looks like every table-mate's feeder).

Found by running ``railbird run ../shared/corpora``: the bounty detector
failed where no pair had enough decisions for its presence test, and chip
dumping flagged two pairs on the population's rates alone (a loose Hold'em
player who lost to the hero of the only file he is in; an Omaha Hi/Lo
player compared with Hold'em players' preflop calls).
"""
from __future__ import annotations

import duckdb
import polars as pl
import pytest

from detectors import all_detectors
from detectors import chip_dumping as cd
from detectors.chip_dumping import presence
from pipelines.lib.ingest import ingest

#: the module's warehouse (the whole corpus ingested, then every detector over it) takes most of a minute: its
#: file is handed out among the first (tests/conftest.py), never last while the other worker sits idle
pytestmark = pytest.mark.slow

#: a loose player in one cash-game file, dealt in with the file's hero in every one of his hands
FISH, HERO = "Pedro Sorribes", "pokerHero1"
#: an Omaha Hi/Lo knockout sit-and-go, the whole event at one table
O8_PLAYER, O8_OPPONENT = "APTEM-89", "StaKuGorPS"


@pytest.fixture(scope="module")
def real_con(corpus_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("real") / "wh.duckdb"
    report = ingest([corpus_dir], path, growing_seconds=0, progress=False, workers=1)
    assert report.result.hands_stored > 6000
    con = duckdb.connect(str(path), read_only=True)
    yield con
    con.close()


@pytest.fixture(scope="module")
def real_signals(real_con):
    out = {}
    for det in all_detectors():
        out[det.kind] = (det, det.detect(real_con))
    return out


def test_every_detector_runs_and_says_what_the_player_view_lacked(real_signals):
    assert set(real_signals) == {"soft_play", "chip_dumping", "bounty_collusion", "multi_accounting",
                                 "seat_handoff", "coordinated_sitout", "hand_chat", "heads_up_flipping"}
    for kind, (det, signals) in real_signals.items():
        if kind == "heads_up_flipping":  # reads only the hands and the cards shown at the all-ins: nothing lacking
            assert not det.hands_.is_empty() and det.missing_ == [], det.missing_
            continue
        assert det.missing_, kind  # no platform events, few hole cards: every detector names what it could not test
    # the knockout events are there, and the bounty detector scored their pairs (it failed on them before)
    assert real_signals["bounty_collusion"][1]


def test_nobody_is_flagged_on_real_hands(real_signals):
    flagged = {kind: [s.accounts for s in signals if s.flagged] for kind, (_, signals) in real_signals.items()}
    assert not any(flagged.values()), flagged


def test_preflop_decisions_of_unknown_strength_are_their_own_cell(real_con):
    """Where the cards are unknown (the player view: every opponent's hand not shown) a preflop decision's strength
    cell is -1, never the weakest decile 0 (DuckDB's ``greatest(NULL, 0)`` is 0): an unknown hand compared with the
    player's junk would read every unknown continuation as a loose one."""
    dec = cd.preflop_decisions(real_con)
    unknown = dec.filter(pl.col("strength").is_null())
    assert len(unknown) > 1000 and dec["strength"].is_not_null().any()
    assert unknown["sbin"].unique().to_list() == [-1]
    assert dec.filter(pl.col("strength").is_not_null())["sbin"].is_between(0, 9).all()


def test_presence_test_needs_the_players_own_baseline(real_con, real_signals):
    """The fish continued preflop 88 of 129 times with the hero dealt in and was never seen without him: the
    population's rate (about a fifth) is no baseline for his style, so the test is not made, and the pair is not
    flagged; made anyway (``min_presence_own=0``, the previous rule), it accused him of feeding the hero (the
    chips-moved gate where the cards are unknown now declines the accusation too)."""
    counts = real_con.execute(cd.PRESENCE_COUNTS_SQL, {"player": FISH, "opponent": HERO}).fetchall()
    assert [c[0] for c in counts] == [True]  # never a decision without the hero
    dec = cd.preflop_decisions(real_con)
    row = cd.presence_tests(real_con, dec).filter((pl.col("player") == FISH) & (pl.col("partner") == HERO))
    assert row["own_n"].to_list() == [0.0] and row["pres_k"].to_list() == [88.0] and row["pres_n"].to_list() == [129.0]
    assert row["pres_p"].to_list() == [None]
    # (the previous rule with the whole history as one window: within the hour the fish's looseness is his own, with
    # the hero, and no longer the population's)
    old = cd.presence_tests(real_con, dec, min_own=0, window_s=None).filter(
        (pl.col("player") == FISH) & (pl.col("partner") == HERO))
    assert old["pres_p"][0] < 1e-10
    assert cd.presence_tests(real_con, dec, min_own=0).filter(
        (pl.col("player") == FISH) & (pl.col("partner") == HERO))["pres_p"][0] > 0.01
    # made anyway, the combined test finds the pair; the 20 bb chip-flow gate of the cards unknown then let it through
    # (69 bb lost to the hero), the chips-moved tests per hand exchanged do not (16 hands, the fish breaking even
    # against the others: p 0.05 and 0.02 against 0.005, issue 32)
    det = cd.ChipDumpingDetector(min_presence_own=0, presence_window_s=None)
    rows = det.threshold(det.fit(real_con).score(real_con))
    accused = rows.filter((pl.col("player") == FISH) & (pl.col("opponent") == HERO)).row(0, named=True)
    assert accused["q_value"] <= det.alpha and accused["net_flow_bb"] >= 20 and not accused["flagged"]
    assert accused["flow_moved_p"] > det.alpha / 2 and accused["flow_amount_p"] > det.alpha / 2
    # the investigator reads why the test was not made
    # the pair's score is about 0, below the strongest unflagged candidates detect() shows: score all, keep the pair,
    # apply the one flag rule (per row: q-values come from score) and explain it
    det = real_signals["chip_dumping"][0]
    pair = det.score(real_con).filter((pl.col("player") == FISH) & (pl.col("opponent") == HERO))
    sig = det.explain(real_con, det.threshold(pair).row(0, named=True))
    assert not sig.flagged
    ev = next(e for e in sig.evidence if e.name.startswith(f"{FISH} continues preflop"))
    assert ev.p_value is None and f"not tested: {FISH} made only 0 such decisions without {HERO}" in ev.text


def test_presence_baseline_is_the_same_game(real_con, monkeypatch):
    """Omaha Hi/Lo players continue preflop far more often than Hold'em players at the same price: the population's
    rates are taken per game, limit and hi/lo split, so the Omaha player is compared with Omaha players."""
    dec = cd.preflop_decisions(real_con)
    assert set(dec.filter(pl.col("player") == O8_PLAYER)["variant"].unique()) == {"omaha no_limit hi-lo"}

    def expected(bins):
        monkeypatch.setattr(presence, "PRESENCE_BINS", bins)
        # one window: the population's rates per bin are what is compared (within the hour the player's own looseness
        # moves them)
        r = cd.presence_tests(real_con, dec, min_own=0, window_s=None)
        return r.filter((pl.col("player") == O8_PLAYER) & (pl.col("partner") == O8_OPPONENT))["pres_e"][0]

    by_game = expected(presence.PRESENCE_BINS)
    pooled = expected(tuple(b for b in presence.PRESENCE_BINS if b != "variant"))
    # 72 continuations in 72 decisions: Hold'em players' rates predict 16, Omaha Hi/Lo players' more than twice that
    assert pooled < 20 < 30 < by_game
