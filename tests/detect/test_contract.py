"""The one detector contract (:class:`detectors.base.Detector`), checked over every kind of
:data:`detectors.kinds.ALL` on one small generated population with every kind planted.

A new detector is held to it by its entry in the list of kinds alone: parameters only in
``__init__``, fitted state only in ``fit``, ``score`` with p and q for every row, one flag rule
in ``threshold``, ``explain`` from the row and the fitted state, a clear error when unfitted or
when the warehouse lacks a table it reads.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from detectors import get_detector
from detectors.base import Detector, GroupDetector, MissingInputError, NotFittedError, PairDetector
from detectors.kinds import ALL

KINDS = [k.name for k in ALL]
SCHEMA = Path(__file__).resolve().parents[2] / "pipelines" / "lib" / "schema.sql"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def con():
    """A warehouse of a small population (~2,000 hands, 100 accounts, every kind planted)."""
    from datasets.generate import generate
    from pipelines.lib.ingest import ingest

    out = Path(tempfile.mkdtemp(prefix="railbird-contract-"))
    try:
        from datasets.presets import PRESETS

        mix = {**PRESETS["demo"].mix, "heads_up_flipping": 1, "hand_chat": 1}  # the presets leave both out
        generate(out / "world", preset="demo", seed=21, accounts=100, hands=2000, progress=False, workers=1, mix=mix)
        ingest([out / "world"], out / "wh.duckdb", growing_seconds=0, progress=False)
        c = duckdb.connect(str(out / "wh.duckdb"), read_only=True)
        yield c
        c.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def fitted(con):
    """kind -> a fitted detector, its ``fit`` attributes' snapshot and a deep copy of it, both taken
    before anything else ran (the copy is a freshly fitted detector that never ran ``threshold``)."""
    out = {}
    for kind in KINDS:
        det = get_detector(kind).fit(con)
        out[kind] = (det, _snapshot(det), copy.deepcopy(det))
    return out


def _snapshot(det: Detector) -> dict:
    """Each attribute's identity and, for frames, arrays and containers, a copy of its content."""
    snap = {}
    for k, v in vars(det).items():
        if isinstance(v, pl.DataFrame):
            content = v.clone()
        elif isinstance(v, np.ndarray):
            content = v.copy()
        elif isinstance(v, (list, dict, set)):
            content = repr(v)
        else:
            content = v
        snap[k] = (id(v), content)
    return snap


def _same(snap: dict, det: Detector) -> list[str]:
    """The attributes that were added, removed, rebound or changed in place since ``snap``."""
    now = vars(det)
    changed = sorted(set(now) ^ set(snap))
    for k, (ident, content) in snap.items():
        if k not in now:
            continue
        v = now[k]
        if id(v) != ident:
            changed.append(k)
        elif isinstance(v, pl.DataFrame) and not v.equals(content):
            changed.append(k)
        elif isinstance(v, np.ndarray) and not np.array_equal(v, content, equal_nan=v.dtype.kind == "f"):
            changed.append(k)
        elif isinstance(v, (list, dict, set)) and repr(v) != content:
            changed.append(k)
    return changed


@pytest.mark.parametrize("kind", KINDS)
def test_init_stores_its_parameters_and_nothing_else(kind):
    det = get_detector(kind)
    assert set(vars(det)) == set(det.param_names())
    assert not det.fitted_attributes()


@pytest.mark.parametrize("kind", KINDS)
def test_params_round_trip(kind):
    det = get_detector(kind)
    params = det.get_params()
    level = det.level_name()  # the flag rule's false-discovery level: ``fdr`` (or ``alpha``, its older name)
    assert {level, "random_state"} <= set(params)
    again = type(det)(**params)
    assert again.get_params() == params
    assert det.set_params(**{level: 0.02}) is det and det.fdr_level == 0.02
    with pytest.raises(ValueError, match="no parameter"):
        det.set_params(no_such_parameter=1)


@pytest.mark.parametrize("kind", KINDS)
def test_unfitted_use_raises_a_clear_error(kind):
    det = get_detector(kind)
    with pytest.raises(NotFittedError, match="not fitted"):
        det.score(duckdb.connect())
    with pytest.raises(NotFittedError, match="not fitted"):
        det.explain(duckdb.connect(), {})


@pytest.mark.parametrize("kind", KINDS)
def test_fit_returns_self_and_sets_only_trailing_underscore_attributes(kind, fitted):
    det, _, _ = fitted[kind]
    fresh = get_detector(kind)
    assert det.get_params() == fresh.get_params()
    new = set(vars(det)) - set(vars(fresh))
    assert new and all(k.endswith("_") for k in new)
    assert isinstance(det.missing_, list)


@pytest.mark.parametrize("kind", KINDS)
def test_score_threshold_and_explain_change_no_attribute(kind, con, fitted):
    det, snap, _ = fitted[kind]
    scored = det.score(con)
    assert _same(snap, det) == []
    out = det.threshold(scored)
    assert _same(snap, det) == []
    for row in out.head(5).iter_rows(named=True):
        det.explain(con, row)
    assert _same(snap, det) == []


@pytest.mark.parametrize("kind", KINDS)
def test_score_gives_p_and_q_for_every_row(kind, con, fitted):
    det, _, _ = fitted[kind]
    scored = det.score(con)
    assert scored.height > 0, "the population plants every kind: each detector has candidates"
    for c in ("accounts", "tournaments", "score", "p_value", "q_value"):
        assert c in scored.columns
    p, q = scored["p_value"].fill_nan(None), scored["q_value"].fill_nan(None)
    assert ((p.is_null()) | ((p >= 0) & (p <= 1))).all()
    # a q-value is never below its p-value (false-discovery control only ever raises it); untested rows have none
    assert ((q.is_null()) | (p.is_null()) | (q >= p - 1e-12)).all()


@pytest.mark.parametrize("kind", KINDS)
def test_threshold_applies_one_flag_rule(kind, con, fitted):
    """``threshold`` is a function of its frame; for pair and group detectors its flagged rows are
    exactly the merged pairs their one flag rule (``flag``) flags."""
    det, _, _ = fitted[kind]
    scored = det.score(con)
    out = det.threshold(scored)
    assert out.equals(det.threshold(scored))
    assert out["flagged"].dtype == pl.Boolean
    # every row, merged or not, carries its q-value (the case's estimated false-discovery rate; null for a
    # candidate left out of the family), never below its p-value (a group: the smallest of each)
    assert "q_value" in out.columns
    p, q = out["p_value"].fill_nan(None), out["q_value"].fill_nan(None)
    assert (q.is_null() | p.is_null() | (q >= p - 1e-12)).all()
    if isinstance(det, PairDetector):
        flagged = det.flag(scored).filter(pl.col("flagged"))
        want = {tuple(sorted(p)) for p in flagged.select("player", "opponent").rows()}
        got = {tuple(sorted(e)) for r in out.filter(pl.col("flagged")).iter_rows(named=True)
               for e in json.loads(r["edges"])}
        assert got == want
    elif isinstance(det, GroupDetector):
        flagged = det.flag(scored).filter(pl.col("pair_flagged"))
        want = set(flagged.select("a", "b").rows())
        got = {(p["a"], p["b"]) for r in out.filter(pl.col("flagged")).iter_rows(named=True) for p in r["pairs"]}
        assert got == want


@pytest.mark.parametrize("kind", KINDS)
def test_explain_needs_no_stored_state(kind, con, fitted):
    """A freshly fitted detector that never ran ``threshold`` explains the rows of another's
    ``threshold`` exactly as that one does."""
    det, _, fresh = fitted[kind]
    rows = list(det.threshold(det.score(con)).sort("score", descending=True).head(8).iter_rows(named=True))
    assert rows
    for row in rows:
        assert fresh.explain(con, row).to_dict() == det.explain(con, row).to_dict()


@pytest.mark.parametrize("kind", KINDS)
def test_detect_names_a_missing_input(kind):
    det = get_detector(kind)
    assert det.inputs, "every detector names the tables it reads"
    table = next(iter(det.inputs))
    c = duckdb.connect()
    c.execute(SCHEMA.read_text())
    c.execute(f'DROP TABLE "{table}"')  # the name comes from the detector's own list, not from input
    with pytest.raises(MissingInputError, match=table):
        det.detect(c)


@pytest.mark.parametrize("kind", KINDS)
def test_the_four_steps_are_documented(kind):
    cls = type(get_detector(kind))
    assert cls.__doc__ and len(cls.__doc__.strip()) > 40
    for step in ("fit", "score", "threshold", "explain"):
        doc = getattr(cls, step).__doc__ or ""
        assert len(doc.strip()) > 40, f"{cls.__name__}.{step} says what it computes"
