"""The bounty wide-call test's tail with the players' tournament effect (issue 32): a pair's cells split by
tournament, each (direction, tournament) block sharing one logit-normal draw, as the presence test's null."""

import numpy as np
import polars as pl
import pytest
from scipy import integrate
from scipy import stats as st

from detectors.features.gameplay import wide_tail, wide_tournament_effect


def _tested(r1=0.05, r2=0.15):
    """One pair (a, b), a's two cells at own rates ``r1`` and ``r2``, 12 and 8 decisions, 5 continuations."""
    t = pl.DataFrame({"player": ["a", "a"], "partner": ["b", "b"], "sdec": [1, 2], "n": [12, 8], "r": [r1, r2]})
    g = pl.DataFrame({"player": ["a"], "opponent": ["b"], "wc_k": [5.0], "wc_e": [12 * r1 + 8 * r2]})
    return g, t.with_columns(x=pl.lit("a"), y=pl.lit("b"))


def _tail_one_block(sigma2, k=5, r1=0.05, r2=0.15):
    """P(Bin(12, rho1) + Bin(8, rho2) >= k), rho_i = expit(logit r_i + u), u ~ N(0, sigma2), by quadrature."""
    def given(u):
        q1, q2 = (1 / (1 + np.exp(-(np.log(r / (1 - r)) + u))) for r in (r1, r2))
        pmf = np.convolve(st.binom.pmf(np.arange(13), 12, q1), st.binom.pmf(np.arange(9), 8, q2))
        return pmf[k:].sum() * st.norm.pdf(u, scale=np.sqrt(sigma2))
    return integrate.quad(given, -12 * np.sqrt(sigma2), 12 * np.sqrt(sigma2), limit=200)[0]


def test_wide_tail_integrates_one_effect_per_tournament_block():
    """Both cells in one tournament: the tail is the binomials' sum integrated over one shared effect (quadrature
    here); split over two tournaments (two independent effects) it lies between that and the independent cells'
    tail (sigma2 = 0, the former test, which a player looser in the pair's tournaments passes too easily)."""
    g, t = _tested()
    one = pl.DataFrame({"player": ["a", "a"], "partner": ["b", "b"], "tournament_id": ["T1", "T1"], "sdec": [1, 2],
                        "n": [12, 8]})
    two = one.with_columns(tournament_id=pl.Series(["T1", "T2"]))
    p0 = wide_tail(g, t, ["sdec"])[0]
    p_one = wide_tail(g, t, ["sdec"], (one, 0.5))[0]
    p_two = wide_tail(g, t, ["sdec"], (two, 0.5))[0]
    pmf = np.convolve(st.binom.pmf(np.arange(13), 12, 0.05), st.binom.pmf(np.arange(9), 8, 0.15))
    assert p0 == pytest.approx(pmf[5:].sum(), rel=1e-9)
    assert p_one == pytest.approx(_tail_one_block(0.5), rel=1e-3)
    assert p0 < p_two < p_one
    assert wide_tail(g, t, ["sdec"], (one, 0.0))[0] == pytest.approx(p0, rel=1e-12)


def test_wide_tail_splits_a_cell_over_the_tournaments_it_was_played_in():
    """One cell's 12 decisions split 7 / 5 over two tournaments are two blocks of the same rate: the same tail as
    two cells of that rate, one per tournament; a pair below its mean keeps the Poisson tail."""
    g, t = _tested(0.05, 0.05)
    split = pl.DataFrame({"player": ["a"] * 3, "partner": ["b"] * 3, "tournament_id": ["T1", "T2", "T2"],
                          "sdec": [1, 1, 2], "n": [7, 5, 8]})
    whole = pl.DataFrame({"player": ["a"] * 2, "partner": ["b"] * 2, "tournament_id": ["T1", "T2"],
                          "sdec": [1, 2], "n": [12, 8]})
    p_split, p_whole = (wide_tail(g, t, ["sdec"], (x, 0.5))[0] for x in (split, whole))
    assert p_split != pytest.approx(p_whole, rel=1e-6)  # the blocks follow the tournaments, not the cells
    low = g.with_columns(wc_k=pl.lit(0.0))
    assert wide_tail(low, t, ["sdec"], (split, 0.5))[0] == pytest.approx(1.0)


def test_wide_tournament_effect_is_zero_without_counts_and_positive_for_a_player_loose_in_some_tournaments():
    """The moment estimator over the wide cells: 0 without counts; a player who continues 9 of 10 in one
    tournament and 1 of 10 in three others (the same cell) has a tournament effect, a steady one none."""
    from detectors.features.gameplay import bounty_wide_cells

    assert wide_tournament_effect(None, None) == 0.0
    rows = []
    for who, ks in (("a", [9, 1, 1, 1]), ("c", [3, 3, 3, 3])):
        for j, kk in enumerate(ks):
            rows += [(f"{who}{j}h{i}", 1, who, "x", f"T{j}", i < kk, 0.15, 0) for i in range(10)]
    df = pl.DataFrame(rows, schema=["hand_id", "seq", "player", "partner", "tournament_id", "cont", "strength", "cbin"],
                      orient="row")
    cells = bounty_wide_cells(df, looseness_tau=None)
    d = cells[0]
    keys = ["player", "tournament_id", *cells[1]]
    pt = d.group_by(["player", "partner", "tournament_id", *cells[1]]).agg(n=pl.len(), k=pl.col("_y").sum())
    dt = d.group_by(keys).agg(Dn=pl.len(), Dk=pl.col("_y").sum())
    assert wide_tournament_effect(cells, (pt, dt)) > 0.3
    steady = [r for r in rows if r[2] == "c"]
    df = pl.DataFrame(steady, schema=df.columns, orient="row")
    cells = bounty_wide_cells(df, looseness_tau=None)
    d = cells[0]
    pt = d.group_by(["player", "partner", "tournament_id", *cells[1]]).agg(n=pl.len(), k=pl.col("_y").sum())
    dt = d.group_by(keys).agg(Dn=pl.len(), Dk=pl.col("_y").sum())
    assert wide_tournament_effect(cells, (pt, dt)) == 0.0
