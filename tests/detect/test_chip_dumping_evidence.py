"""Chip dumping's evidence hands and tournaments come from files written once per fit, not from scans per signal.

A planted world (a dumper with a hostile name feeding p07, a dumping star p20 -> p21, p22, p23, explained also as
one signal of three edges), the hands of three of its seven tables dealt
in 120 tournaments and an eighth of its hole cards unknown, is fitted once. Every row of ``threshold`` is explained from the fit's files; the same
rows' hands and tournaments are then read the way the evidence read them per signal before (the giver's preflop
continuations and the receiver's dealt-in seats scanned from the warehouse, the value given and the tournaments
from the window's heads-up decisions), and must be the same lists in the same order. With the warehouse's actions,
seats, hole cards and hands gone after the fit, every signal is explained exactly as before: ``explain`` reads none
of them."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest

from detectors.chip_dumping import ChipDumpingDetector
from detectors.features import gameplay as gp
from detectors.features.gameplay import release
from tests.detect.conftest import build_world

HOSTILE = "o'dump\"er\\ \U0001F0A1"


def _world() -> duckdb.DuckDBPyConnection:
    """The planted world's warehouse: p06 renamed to a hostile name, the hands of three tables in 120 tournaments,
    an eighth of the hole cards unknown."""
    con = build_world(n_players=30, n_hands=3000, seed=9,
                      dump=[(("p06", "p07"), 0.5), (("p20", "p21"), 0.5), (("p20", "p22"), 0.5),
                            (("p20", "p23"), 0.5)]).con
    for t in ("seats", "actions", "hole_cards"):
        con.execute(f"UPDATE {t} SET player = $1 WHERE player = 'p06'", [HOSTILE])
    con.execute("UPDATE hands SET is_tournament = true, tournament_id = concat_ws(' ', 'tour', table_name, "
                "hash(hand_id) % 40) WHERE table_name IN ('T0', 'T3', 'T5')")
    con.execute("DELETE FROM hole_cards WHERE hash(hand_id, player) % 8 = 0")  # unknown cards: no strength
    return con


# the per-signal reads of the evidence before the fit wrote its files (the reference: scans of the warehouse)
_SCAN_VALUE = """SELECT hand_id, value_given FROM _dec WHERE player = $player AND opponent = $opponent
                 AND value_given IS NOT NULL ORDER BY hand_id, seq"""
_SCAN_CONT = """SELECT a.player, a.hand_id, h.game, hc.cards AS hole
FROM actions a JOIN hands h USING (hand_id) JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
LEFT JOIN hole_cards hc ON hc.hand_id = a.hand_id AND hc.player = a.player
WHERE a.street = 'preflop' AND a.action IN ('call', 'raise') AND a.to_call > 0 AND a.player = $player"""
_SCAN_DEALT = "SELECT hand_id FROM seats WHERE dealt_in AND player = $player"
_SCAN_TOURNAMENTS = """SELECT DISTINCT tournament_id FROM _dec WHERE tournament_id IS NOT NULL
                       AND list_contains($hands, hand_id) ORDER BY tournament_id"""


def _scanned(con: duckdb.DuckDBPyConnection, det: ChipDumpingDetector, edges: list[list[str]], limit: int = 25
             ) -> tuple[list[str], list[str]]:
    """The evidence hands and tournaments of ``edges`` by scans of the warehouse per signal (the method the fit's
    files replace): value hands by value, the givers' continuations with the receiver dealt in by strength, the
    rest of the positive value hands; the tournaments of those hands among the heads-up decisions."""
    con.register("_dec", det.dec_.relation(con))
    try:
        d = pl.concat([con.sql(_SCAN_VALUE, params={"player": a, "opponent": b}).pl() for a, b in edges])
        vh = (d.group_by("hand_id", maintain_order=True).agg(v=pl.col("value_given").sum())
              .filter(pl.col("v") > 0).sort(["v", "hand_id"], descending=[True, False]))
        parts = []
        for a, b in edges:
            cont = con.sql(_SCAN_CONT, params={"player": a}).pl()
            cont = cont.select("hand_id", gp.starting_hand_percentile(cont))
            parts.append(cont.join(con.sql(_SCAN_DEALT, params={"player": b}).pl(), on="hand_id", how="semi"))
        pres = pl.concat(parts).sort(["strength", "hand_id"], nulls_last=True)["hand_id"].unique(maintain_order=True)
        ranked = list(dict.fromkeys([*vh.filter(pl.col("v") >= 1)["hand_id"], *pres,
                                     *vh.filter(pl.col("v") < 1)["hand_id"]]))[:limit]
        tours = [r[0] for r in con.sql(_SCAN_TOURNAMENTS, params={"hands": ranked}).fetchall()]
    finally:
        con.unregister("_dec")
    return ranked, tours


@pytest.fixture(scope="module")
def explained():
    """The fitted detector, its rows, each row's signal, the scanned reference and the signals explained again
    once the warehouse's hand tables are gone."""
    con = _world()
    try:
        # the value test without the spread between opponents: this small world's pairs are mostly its planted ones
        det = ChipDumpingDetector(value_between=False).fit(con)
        rows = list(det.threshold(det.score(con)).iter_rows(named=True))
        # the star p20 -> p21, p22, p23 as one signal of three edges (this world flags its strongest edge alone)
        star = dict(next(r for r in rows if (r["player"], r["opponent"]) == ("p20", "p21")))
        star.update(shape="star", accounts=["p20", "p21", "p22", "p23"],
                    edges=json.dumps([["p20", "p21"], ["p20", "p22"], ["p20", "p23"]]))
        rows.append(star)
        signals = [det.explain(con, r).to_dict() for r in rows]
        scanned = [_scanned(con, det, json.loads(r["edges"]) if r.get("edges") else [[r["player"], r["opponent"]]])
                   for r in rows]
        for t in ("actions", "seats", "hole_cards", "hands"):
            con.execute(f"DROP TABLE {t}")
        again = [det.explain(con, r).to_dict() for r in rows]
        yield {"det": det, "rows": rows, "signals": signals, "scanned": scanned, "again": again}
    finally:
        release()
        con.close()


def test_the_fitted_evidence_is_the_scanned_evidence(explained):
    """Every row's hands and tournaments from the fit's files are those of the scans per signal, in order."""
    rows, signals, scanned = explained["rows"], explained["signals"], explained["scanned"]
    assert len(rows) > 20 and any(r["flagged"] for r in rows)
    assert any(r["shape"] == "star" for r in rows)  # several edges in one signal
    assert any(HOSTILE in r["accounts"] for r in rows if r["flagged"])
    assert sum(len(t) > 1 for _, t in scanned) > 5  # several tournaments per signal
    for s, (hands, tours) in zip(signals, scanned):
        assert (s["hands"], s["tournaments"]) == (hands, tours)


def test_explain_reads_no_table_of_the_window(explained):
    """With actions, seats, hole cards and hands dropped after the fit, every signal is explained the same."""
    assert explained["again"] == explained["signals"]


def test_the_files_are_sorted_by_player(explained):
    """The value rows, continuations and dealt-in seats are sorted by player: a signal reads its players' row
    groups."""
    det = explained["det"]
    con = duckdb.connect()
    for path in (det.continuation_rows_, det.dealt_in_rows_, det.value_rows_):
        f = con.read_parquet(path).pl()
        assert len(f) > 1000 and f["player"].is_sorted()
    con.close()
