"""Bounty collusion's presence rows counted by DuckDB (:mod:`detectors.features.gameplay.bounty_counts`): the
counts give the tests of the rows frame, and the detector's fit no longer makes that frame."""

from __future__ import annotations

import polars as pl
import pytest

from detectors.bounty_collusion import BountyCollusionDetector
from detectors.features import gameplay as gp
from detectors.features.gameplay.bounty import presence_parts
from detectors.features.gameplay.bounty_counts import bounty_presence_table
from tests.detect.bounty_reference import presence_counts, presence_pairs, presence_unordered
from tests.detect.conftest import build_ko_world


@pytest.fixture(scope="module")
def ko():
    """A knockout world with one gang (k03, k04) whose members loosen up for each other."""
    from tests.detect.test_bounty import _loosen

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _loosen(w.con, "k03", partner="k04")
    _loosen(w.con, "k04", partner="k03")
    yield w.con
    w.con.close()


def _same(a: pl.DataFrame, b: pl.DataFrame, keys: list[str], tol: float = 1e-12) -> None:
    """``a`` and ``b`` equal row for row once sorted by ``keys`` (the columns of ``a``; floats to ``tol``)."""
    a, b = a.sort(keys), b.select(a.columns).sort(keys)
    assert a.height == b.height > 0
    for c in a.columns:
        if a[c].dtype == pl.Float64:
            assert a[c].is_null().to_list() == b[c].is_null().to_list(), c
            assert ((a[c] - b[c]).abs().max() or 0.0) <= tol * max(1.0, b[c].abs().max() or 0.0), c
        else:
            assert a[c].cast(b[c].dtype).to_list() == b[c].to_list(), c


def test_wide_cells_and_presence_from_counts_equal_the_rows(ko):
    """The wide-call cells and the presence pairs made from DuckDB's counts equal those of the rows frame, before
    and after the strongest partners' rows are dropped."""
    rows = gp.bounty_presence(ko)
    # strongest partners: k01 and k05 for each other, k03 and k04 for each other
    wide = pl.DataFrame({"player": ["k01", "k03"], "opponent": ["k05", "k04"], "wc_p": [1e-4, 1e-5]})
    with bounty_presence_table(ko) as t:
        assert t.summary()[1] == pytest.approx(rows["strength"].is_not_null().mean(), abs=1e-15)
        for unshadow in (False, True):
            if unshadow:
                before = rows.height
                t.unshadow(gp.bounty_strongest_partner(wide))
                rows = gp.bounty_unshadowed(rows, wide)
                assert rows.height < before
            keys = ["player", "partner", "sdec", "cbin", "pos"]
            _same(gp.bounty_wide_cells(None, counts=t.wide_counts())[2].select(*keys, "n", "k", "N", "K", "Dn", "Dk", "r"),
                  gp.bounty_wide_cells(rows)[2], keys)
            got = presence_parts(list(t.presence_counts()))[0]
            want = presence_parts(list(presence_counts(rows)))[0]
            cols = ["player", "partner", "n", "observed", "expected", "score_u", "score_var", "sigma2", "tournaments", "hands"]
            _same(got.select(cols), want, ["player", "partner"])


def test_the_fit_makes_no_frame_of_the_presence_rows(ko, monkeypatch):
    """The detector's fit counts the presence rows in DuckDB: the frame of :func:`bounty_presence` is never made,
    and the gang is still flagged."""
    def refuse(*a, **k):
        raise AssertionError("the presence rows were read as a frame")

    monkeypatch.setattr(gp, "bounty_presence", refuse)
    sigs = BountyCollusionDetector().detect(ko)
    assert ["k03", "k04"] in [s.accounts for s in sigs if s.flagged]


def test_bounty_passing_from_counts_equals_the_rows():
    """Bounty passing's two views made from DuckDB's counts (calls of the partner's shove, shoves with the partner
    to act, the table effect) equal those of the rows frames, on a world where a pair calls each other's shoves."""
    from detectors.features.gameplay.bounty_counts import bounty_passing_counted
    from tests.detect.test_bounty_passing import _call_shoves

    w = build_ko_world(n_hands=2000, rate=0.0, seed=11)
    _call_shoves(w.con, "k03", "k04")
    _call_shoves(w.con, "k04", "k03")
    want = gp.bounty_passing(w.con)
    got = bounty_passing_counted(w.con)
    assert want["tc_k"].drop_nulls().sum() > 0  # (this world has no shove with a partner to act: the gate has)
    _same(got.select(want.columns), want, ["player", "opponent"])


def test_the_presence_tail_is_summed_a_chunk_of_pairs_at_a_time(ko, monkeypatch):
    """The presence test's exact tail is summed per chunk of pairs (each call of overdispersed_sum_sf holds a
    chunk's components, not every pair's), with the same pairs and tails as the whole window in one call; the
    detector's fit does so, and still flags the gang."""
    from detectors.features.gameplay import bounty_tests

    calls: list[int] = []
    whole = bounty_tests.overdispersed_sum_sf

    def counted(group, *a, **k):
        calls.append(len(group))
        return whole(group, *a, **k)

    with bounty_presence_table(ko) as t:
        c = t.presence_counts()
        want = presence_unordered(presence_pairs(c))
        monkeypatch.setattr(bounty_tests, "overdispersed_sum_sf", counted)
        got = bounty_tests.bounty_presence_tested(lambda: c, chunk=200)
    assert len(calls) > 3 and max(calls) < sum(calls) / 2
    # (the tails to 1e-9: Polars' threads order the components of a block differently in two calls of one process;
    # with that order fixed the chunks' tails are the whole window's bit for bit, test_bounty_lookalikes.py)
    _same(got, want, ["player", "opponent"], tol=1e-9)
    calls.clear()
    monkeypatch.setattr(bounty_tests, "PRESENCE_TAIL_CHUNK", 200)
    sigs = BountyCollusionDetector().detect(ko)
    assert len(calls) > 3 and max(calls) < sum(calls) / 2
    assert ["k03", "k04"] in [s.accounts for s in sigs if s.flagged]


def test_the_wide_calls_cells_are_freed_before_the_presence_test(ko, monkeypatch):
    """The fit drops the wide calls' cells (a frame per pair and cell of the window) before the presence test
    reads its counts, so the two are never held at once."""
    import gc
    import weakref

    from detectors.bounty_collusion import detector as det

    made, alive = [], []
    cells, tested = gp.bounty_wide_cells, det.bounty_presence_tested

    def tracked(*a, **k):
        out = cells(*a, **k)
        made.extend(weakref.ref(f) for f in (out if isinstance(out, tuple) else ()) if isinstance(f, pl.DataFrame))
        return out

    def checked(*a, **k):
        gc.collect()
        alive.append(sum(r() is not None for r in made))
        return tested(*a, **k)

    monkeypatch.setattr(gp, "bounty_wide_cells", tracked)
    monkeypatch.setattr(det, "bounty_presence_tested", checked)
    BountyCollusionDetector().detect(ko)
    assert made and alive == [0]


def test_the_first_wide_cells_and_tournament_counts_are_freed_before_the_cells_after_unshadowing(ko, monkeypatch):
    """The wide calls before the unshadowing drop their cells and the counts per tournament before the cells of
    the rows left are made (the two windows' frames never held at once), and the tails read the cells narrowed to
    the columns they use."""
    import gc
    import weakref

    from detectors.features.gameplay.bounty_counts import BountyPresenceTable

    made: list[list] = []
    alive, widths = [], []
    cells, counts, calls = gp.bounty_wide_cells, BountyPresenceTable.cell_counts, gp.bounty_wide_calls

    def keep(out):
        made[-1].extend(weakref.ref(f) for f in (out if isinstance(out, tuple) else ()) if isinstance(f, pl.DataFrame))
        return out

    def tracked(*a, **k):
        if made:  # the cells after the unshadowing: what is left of the first cells and counts
            gc.collect()
            alive.append(sum(r() is not None for r in made[0]))
        made.append([])
        return keep(cells(*a, **k))

    def counted(self, keys=()):
        return keep(counts(self, keys)) if keys else counts(self, keys)

    def tested(*a, **k):
        widths.append(sorted(k["cells"][2].columns))
        return calls(*a, **k)

    monkeypatch.setattr(gp, "bounty_wide_cells", tracked)
    monkeypatch.setattr(BountyPresenceTable, "cell_counts", counted)
    monkeypatch.setattr(gp, "bounty_wide_calls", tested)
    BountyCollusionDetector().detect(ko)
    assert len(made) == 2 and len(made[0]) >= 3 and alive == [0]
    assert widths and all(w == sorted(["player", "partner", "sdec", "cbin", "pos", "n", "k", "r"]) for w in widths)
