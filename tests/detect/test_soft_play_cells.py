"""Soft play fits from the window's decisions counted per pair and cell (detectors.soft_play.cells), never from the
decisions held whole: the counts give every own-baseline test exactly what the decisions gave, the whole-hand
test's per-hand sums made by DuckDB equal Polars' over the decisions, and the day files read by DuckDB give the
counts the frame in memory gives."""

import polars as pl
import pytest

from tests.detect.conftest import build_world


@pytest.fixture(scope="module")
def fitted():
    from detectors.soft_play import SoftPlayDetector

    w = build_world(n_players=20, n_hands=2500, seed=31, soft=[(("p03", "p04"), 0.4)])
    det = SoftPlayDetector().fit(w.con)
    return w, det, det.source_.decisions(w.con)


def _sorted(f: pl.DataFrame, keys=("player", "opponent")) -> pl.DataFrame:
    return f.sort(*keys)


def _same(a: pl.DataFrame, b: pl.DataFrame, keys=("player", "opponent")) -> None:
    """Equal frames: the same rows and integers, floats within 1e-9 relative or 1e-12 (Polars' hash group-by adds a pair's
    cells in no fixed order, run to run)."""
    a, b = _sorted(a, keys), _sorted(b, keys)
    assert a.columns == b.columns and a.height == b.height
    for c in a.columns:
        if a[c].dtype.is_float():
            assert a[c].to_numpy() == pytest.approx(b[c].to_numpy(), rel=1e-9, abs=1e-12, nan_ok=True), c
        else:
            assert a[c].equals(b[c]), c


def test_fit_keeps_counts_sized_by_the_pairs_not_the_decisions(fitted):
    """No frame of the fitted detector holds a row per decision: the counted cells add up to the window's decisions
    and are fewer."""
    w, det, dec = fitted
    from detectors.stats import WEIGHT

    assert not hasattr(det, "dec_")
    assert det.cells_[WEIGHT].sum() == dec.height > 1.5 * det.cells_.height
    held = [v for v in vars(det).values() if isinstance(v, pl.DataFrame)]
    assert held and max(f.height for f in held) < dec.height


@pytest.mark.parametrize("name", ["chk", "rse", "fld", "pre"])
def test_counted_cells_give_the_decisions_tests_exactly(fitted, name):
    """Each spot test's robust own baseline and own-rate table from the counts equal those from the decisions
    (the same integers, the same floats: the counts are the decisions' and enter the same sums)."""
    from detectors import stats

    w, det, dec = fitted
    y, kw = det._baseline_args(name)
    side = kw.pop("side")
    a = stats.robust_own_baseline(det.cells_, y, side=side, alpha=det.alpha, also_out=det.outliers_, **kw)
    b = stats.robust_own_baseline(dec, y, side=side, alpha=det.alpha, also_out=det.outliers_, **kw)
    assert a.height > 10
    _same(a, b)
    keys = ["player", "opponent", *(kw.get("bins") or stats.OWN_BASELINE_BINS)]
    ra = stats.own_rate_table(det.cells_, y, alpha=det.alpha, also_out=det.outliers_, posterior=True, **kw)
    rb = stats.own_rate_table(dec, y, alpha=det.alpha, also_out=det.outliers_, posterior=True, **kw)
    _same(ra, rb, keys)


@pytest.mark.parametrize("directed", [False, True])
def test_hand_sums_in_duckdb_equal_polars_over_the_decisions(fitted, directed):
    """The whole-hand test's per-hand bets and log-probabilities, made by DuckDB over the window's decisions from
    the counted cells' rates, equal stats.hand_passivity_sums over the decisions (ordered as Polars keeps a group-by's
    order), and so do the tests."""
    from detectors import stats

    w, det, dec = fitted
    y, kw = det._baseline_args(det.tests[0])
    kw.pop("side")
    rates = stats.own_rate_table(det.cells_, y, alpha=det.alpha, also_out=det.outliers_, **kw)
    rated_cells = stats.own_rates_per_decision(det.cells_, y, rates=rates, **kw).filter(pl.col("hu"))
    rated = stats.own_rates_per_decision(dec, y, rates=rates, **kw).filter(pl.col("hu"))
    got = det.source_.hand_sums(w.con, rated_cells, directed=directed)
    want = stats.hand_passivity_sums(rated.sort("hand_id", "seq"), directed=directed)
    assert got.height == want.height > 100
    keys = ["hand_id", "player", "opponent"]
    j = got.join(want, on=keys, suffix="_w")
    # the same rows, the same sums to the bit (Kahan's summation in decision order, as Polars'), DuckDB's rows in
    # hand order
    assert j.height == got.height and got.select(keys).sort(keys).equals(want.select(keys).sort(keys))
    assert got["hand_id"].is_sorted()
    assert (j["bets"] == j["bets_w"]).all() and (j["logpi"] == j["logpi_w"]).all()
    ta = _sorted(stats.hand_passivity_from_hands(got))
    tb = _sorted(stats.hand_passivity_test(rated, directed=directed))
    assert ta.select("player", "opponent", "hands", "passive").equals(tb.select("player", "opponent", "hands", "passive"))
    for c in ("hp_observed", "hp_expected", "hp_p_value"):
        assert ta[c].to_numpy() == pytest.approx(tb[c].to_numpy(), rel=1e-9)


def test_day_files_read_by_duckdb_give_the_frames_counts(fitted, tmp_path):
    """The window as day files (two days, one with fewer columns typed null, as a day without some rows is stored)
    counted by DuckDB gives the same cells as the window's frame in memory."""
    from detectors.soft_play.cells import SOURCE_COLUMNS, WindowDecisions

    w, det, dec = fitted
    frame = dec.select(SOURCE_COLUMNS)
    half = frame.height // 2
    first, second = tmp_path / "d1.parquet", tmp_path / "d2.parquet"
    frame.head(half).write_parquet(first)
    frame.tail(frame.height - half).with_columns(pl.lit(None).alias("tournament_id")).write_parquet(second)
    files = WindowDecisions([str(first), str(second)], None, det.stage_bb)
    assert files.cells(w.con).equals(det.cells_)
    assert files.summary(w.con) == det.source_.summary(w.con)


def test_evidence_read_once_for_the_pairs_shown_equals_each_pairs_own_read(fitted):
    """The evidence hands and tournaments score() reads at once for every pair threshold() can show equal those
    explain() reads for one pair alone (the fallback, as for rings), and every pair shown has them."""
    w, det, dec = fitted
    shown = det.threshold(det.score(w.con))
    pairs = shown.filter(pl.col("accounts").list.len() == 2)
    assert pairs.height > 20 and pairs["evidence_hands"].is_not_null().all()
    for row in pairs.head(40).iter_rows(named=True):
        hands, tournaments = det._evidence_hands(w.con, list(row["accounts"]), det.EVIDENCE_HANDS)
        assert (row["evidence_hands"], row["evidence_tournaments"]) == (hands, tournaments)
    assert any(row["evidence_hands"] for row in pairs.iter_rows(named=True))


def test_fit_frees_each_selections_memo_once_its_tests_are_made(fitted):
    """After the fit, no own-baseline memo (pair counts, first passes, robust tests) of the counted cells is left:
    each selection's entry was dropped once its tests were made; a test asked for again is made again, the same."""
    from detectors import stats
    from detectors.stats import baselines

    w, det, dec = fitted
    fresh = SoftPlayDetector_fit(w)
    assert not [k for k in baselines._FIRST_CACHE if k[0] == id(fresh.cells_)]
    live = {res[0] for _, res in baselines._FIRST_CACHE.values() if res is not None}
    assert all(k[0] in live for k in baselines._ROBUST_CACHE)
    y, kw = fresh._baseline_args("rse")
    side = kw.pop("side")
    a = stats.robust_own_baseline(fresh.cells_, y, side=side, alpha=fresh.alpha, also_out=fresh.outliers_, **kw)
    assert [k for k in baselines._FIRST_CACHE if k[0] == id(fresh.cells_)]
    baselines.forget_selection(fresh.cells_, y, alpha=fresh.alpha, **kw)
    assert not [k for k in baselines._FIRST_CACHE if k[0] == id(fresh.cells_)]
    b = stats.robust_own_baseline(fresh.cells_, y, side=side, alpha=fresh.alpha, also_out=fresh.outliers_, **kw)
    assert a.equals(b)


def SoftPlayDetector_fit(w):
    """A soft play detector fitted on ``w`` anew (its own counted cells)."""
    from detectors.soft_play import SoftPlayDetector

    return SoftPlayDetector().fit(w.con)
