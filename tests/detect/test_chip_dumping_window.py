"""ChipDumpingDetector on the feature store's window: the presence test and the evidence read only the window's days.

A planted world (a dumper p06 -> p07 among honest players) deals hands over four days. Judged over its last two
days, the detector's preflop decisions, presence tests and dealt-in seats are those of the same warehouse with the
two earlier days deleted, judged over every day; judged over every day (the default window), the earlier days are
read and change them."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from detectors.chip_dumping import ChipDumpingDetector
from detectors.chip_dumping.presence import PRESENCE_BINS, PRESENCE_COLUMNS, _cell_counts, preflop_decisions
from detectors.features.gameplay import release, store_for
from detectors.features.window_views import window_tables
from tests.detect.conftest import build_world, keep_days_from

def _world():
    """The warehouse of a small planted world (about 3,000 hands, 40 s apart: four hand days)."""
    return build_world(n_players=24, n_hands=3000, dump=[(("p06", "p07"), 0.5)], seed=5).con


def _fit(con, window_days: int) -> ChipDumpingDetector:
    """The detector fitted on ``con`` judged over ``window_days`` (0: every day)."""
    store_for(con, window_days=window_days)
    try:
        return ChipDumpingDetector().fit(con)
    finally:
        release()


def _frames(con, det: ChipDumpingDetector) -> dict[str, pl.DataFrame]:
    """The fit's window-read frames, sorted: the preflop decisions read through the fitted window, the presence
    tests, the evidence's files of every player's continuations and dealt-in hands, and the dumper's evidence hands
    as the evidence reads them."""
    with window_tables(con, det.window_) as wcon:
        pdec = preflop_decisions(wcon).select(PRESENCE_COLUMNS)
    dealt = con.read_parquet(det.dealt_in_rows_).pl()
    cont = con.read_parquet(det.continuation_rows_).pl().select("player", "hand_id", "strength")
    return {"pdec": pdec.drop("ts_s").sort(pl.all()), "presence": det.presence_.sort("player", "partner"),
            "dealt": dealt.sort(pl.all()), "cont": cont.sort(pl.all()),
            "evidence": pl.DataFrame({"hand_id": det._evidence_hands(con, [["p06", "p07"]], limit=10**6)})}


@pytest.fixture(scope="module")
def runs():
    full = _world()
    days = [r[0] for r in full.execute("SELECT DISTINCT day FROM hands ORDER BY day").fetchall()]
    assert len(days) >= 3
    recent = _world()
    assert {"seats", "actions", "hole_cards"} <= set(keep_days_from(recent, days[-2]))
    out = {"full window 2": _frames(full, _fit(full, 2)), "full every day": _frames(full, _fit(full, 0)),
           "recent every day": _frames(recent, _fit(recent, 0))}
    full.close()
    recent.close()
    return out


@pytest.mark.parametrize("name", ["pdec", "presence", "dealt", "cont", "evidence"])
def test_the_window_reads_only_its_days(runs, name):
    """Over the last two days the preflop decisions, the presence tests and the evidence's seats and continuations
    are those of a warehouse holding those days alone."""
    got, want = runs["full window 2"][name], runs["recent every day"][name]
    assert not want.is_empty()
    # counts exact; the expected counts and p-values within the last bits (DuckDB's threads order their sums)
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-9, abs_tol=0)


def test_every_day_reads_the_earlier_days(runs):
    """The default window reads every day: more decisions, and other presence counts."""
    assert len(runs["full every day"]["pdec"]) > len(runs["full window 2"]["pdec"])
    assert not runs["full every day"]["presence"].equals(runs["full window 2"]["presence"])
    assert len(runs["full every day"]["dealt"]) > len(runs["full window 2"]["dealt"])


def test_the_fit_keeps_no_preflop_decisions():
    """The fit keeps the presence tests, not the window's preflop decisions nor every player's continuations in
    memory: the evidence reads the continuations of the case it explains from a file of the fit."""
    con = _world()
    det = _fit(con, 0)
    assert not det.presence_.is_empty()
    assert not hasattr(det, "pdec_") and not hasattr(det, "cont_by_")
    con.close()


def test_the_evidence_continuations_are_the_presence_decisions():
    """The fit's file of continuations holds exactly the rows of :func:`preflop_decisions` with ``cont`` true, with
    the same starting-hand strength (null where the cards are unknown)."""
    con = _world()
    con.execute("DELETE FROM hole_cards WHERE player = 'p11'")  # unknown cards: no strength
    want = preflop_decisions(con).filter(pl.col("cont")).select("player", "hand_id", "strength").sort(pl.all())
    det = _fit(con, 0)
    got = con.read_parquet(det.continuation_rows_).pl().select("player", "hand_id", "strength").sort(pl.all())
    assert len(want) > 100 and want["strength"].is_not_null().any() and want["strength"].is_null().any()
    assert_frame_equal(got, want)
    con.close()


def test_the_cell_counts_are_grouped_in_duckdb_in_cell_order():
    """The presence test's per-cell counts (player, window, bins) come from DuckDB: the decisions and continuations
    of each cell, the cells sorted by the cell (so the priors' and ``we``'s float sums add in one order whatever the
    order of the decisions), and per player and window the totals of those cells."""
    con = _world()
    dec = preflop_decisions(con)
    bins = list(PRESENCE_BINS)
    d = dec.select("player", pl.col("cont").cast(pl.Int64).alias("y"), *bins,
                   win=(pl.col("ts_s") // 3600).fill_null(-1).cast(pl.Int64)).with_row_index("did")
    con.register("_pd_t", d)
    try:
        mw, pri, off = _cell_counts(con, "t", bins, 20.0, 3600.0)
    finally:
        con.unregister("_pd_t")
    want = d.group_by(["player", "win", *bins]).agg(tn=pl.len(), tk=pl.col("y").sum()).sort(
        ["player", "win", *bins], nulls_last=True)
    assert len(want) > 100
    assert_frame_equal(mw, want)
    assert set(pri.columns) == {*bins, "pa", "pb"} and len(pri) == len(want.select(bins).unique())
    tot = want.group_by("player", "win").agg(wn=pl.col("tn").sum().cast(pl.Float64), wk=pl.col("tk").sum()
                                             .cast(pl.Float64))
    got = off.select("player", "win", "wn", "wk")
    assert_frame_equal(got.sort("player", "win"), tot.sort("player", "win"))
    assert off["we"].is_between(0, off["wn"]).all() and off["dp"].is_finite().all()
    con.close()


def test_the_preflop_decisions_are_binned_in_duckdb_as_the_cards_say():
    """:func:`preflop_table` bins the preflop decisions inside DuckDB (the starting hand looked up among every pair
    of card texts): its strength and cells are those :func:`detectors.features.gameplay.starting_hand_percentile`
    and the bins' definitions give the decisions read in Polars, and the fit leaves no temporary table behind."""
    from detectors.chip_dumping.presence import PRESENCE_SQL, preflop_table
    from detectors.features import gameplay as gp

    con = _world()
    raw = con.sql(PRESENCE_SQL.replace("{part_tables}", "")).pl()
    want = raw.with_columns(gp.starting_hand_percentile(raw)).with_columns(
        sbin=(pl.col("strength") * 10).floor().clip(0, 9).fill_null(-1).cast(pl.Int8),
        cbin=pl.when(pl.col("to_call_bb") <= 1).then(0).when(pl.col("to_call_bb") <= 2.5).then(1)
        .when(pl.col("to_call_bb") <= 6).then(2).when(pl.col("to_call_bb") <= 15).then(3).otherwise(4).cast(pl.Int8),
        short=pl.col("stack_bb") <= 15, nbin=(pl.col("n_players") <= 2).cast(pl.Int8))
    cols = ["hand_id", "seq", "player", "cont", "ts_s", "strength", *PRESENCE_BINS]
    with preflop_table(con) as t:
        got = t.order("hand_id, seq").pl()
    with preflop_table(con, ("did", "player", "cont")) as t:
        narrow = t.order("did").pl()
    assert len(got) > 1000 and got["strength"].is_not_null().any() and got["sbin"].is_between(-1, 9).all()
    # did: a key of its own per decision (not an order)
    assert sorted(got["did"].to_list()) == list(range(len(got)))
    assert_frame_equal(got.select(cols), want.select(cols).sort("hand_id", "seq"))
    # the columns asked for only, the same rows
    assert narrow.columns == ["did", "player", "cont"] and len(narrow) == len(got)
    temp = "SELECT count(*) FROM duckdb_tables() WHERE temporary"
    assert con.execute(temp).fetchall()[0][0] == 0
    _fit(con, 0)
    assert con.execute(temp).fetchall()[0][0] == 0
    con.close()
