"""The detect stage's Dagster assets, materialised against a temporary DuckDB warehouse."""

import gc
import json
import weakref

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from detectors import REGISTRY
from pipelines.defs.detect import assets as A


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory, planted_world):
    path = tmp_path_factory.mktemp("wh") / "warehouse.duckdb"
    con = planted_world.con
    con.execute("ATTACH ? AS out", [str(path)])
    try:
        con.execute("COPY FROM DATABASE memory TO out")
    finally:
        con.execute("DETACH out")
    return str(path)


def by_name(name):
    return next(a for a in A.signals_assets + [A.pair_features] if a.key == dg.AssetKey(name))


def test_one_asset_per_registry_entry_with_description_and_deps():
    keys = {a.key.to_user_string() for a in A.signals_assets}
    assert keys == {f"{k}_signals" for k in REGISTRY}
    sp = by_name("soft_play_signals")
    assert "soft" in sp.descriptions_by_key[sp.key].lower()
    deps = {d.to_user_string() for d in sp.asset_deps[sp.key]}
    assert {"hands", "seats", "actions", "hole_cards", "boards", "bounties"} <= deps


def test_materialise_writes_and_replaces_signals(warehouse_file):
    assets = [by_name("soft_play_signals"), by_name("chip_dumping_signals"), by_name("pair_features")]
    res = {"warehouse": DuckDBResource(database=warehouse_file)}
    for _ in range(2):  # a second run replaces, never appends
        result = dg.materialize(assets, resources=res)
        assert result.success
    con = duckdb.connect(warehouse_file, read_only=True)
    try:
        rows = con.execute("SELECT kind, count(*), count(DISTINCT run_id), sum(flagged::INT) FROM signals GROUP BY kind ORDER BY kind").fetchall()
        kinds = {r[0]: r for r in rows}
        assert set(kinds) == {"chip_dumping", "soft_play"}
        assert all(r[2] == 1 for r in rows) and all(r[3] >= 1 for r in rows)
        payload, accounts = con.execute(
            "SELECT payload, accounts FROM signals WHERE kind = 'soft_play' AND flagged ORDER BY score DESC LIMIT 1"
        ).fetchall()[0]
        sig = json.loads(payload)
        assert sig["accounts"] == accounts and sig["evidence"] and sig["hands"]
        assert con.execute("SELECT count(*) FROM pair_features").fetchall()[0][0] > 100
        # the published table keeps the own-baseline columns the detectors' cached features leave out, in place
        cols = [r[0] for r in con.execute("DESCRIBE pair_features").fetchall()]
        tests = [f"{t}_{c}" for t in ("aggr", "fold", "junk") for c in ("n", "obs", "exp", "p")]
        assert cols[-len(tests) - 2:] == [*tests, "hands_together", "flow_bb"]
        assert con.execute("SELECT count(aggr_p), count(fold_p) FROM pair_features").fetchall()[0][0] > 100
    finally:
        con.close()


def test_factory_skips_missing_modules_but_raises_real_import_errors(monkeypatch, tmp_path):
    monkeypatch.setitem(REGISTRY, "soft_play", "detectors.not_written_yet:Nope")
    assert "soft_play_signals" not in {a.key.to_user_string() for a in A.build_signals_assets()}
    (tmp_path / "rb_broken_detector.py").write_text("import a_dependency_that_does_not_exist\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(REGISTRY, "soft_play", "rb_broken_detector:X")
    with pytest.raises(ModuleNotFoundError, match="a_dependency_that_does_not_exist"):
        A.build_signals_assets()


def test_well_formed_checks_pass_after_materialisation(warehouse_file):
    from pipelines.defs.detect.checks import signals_checks

    names = {c.check_specs_by_output_name[next(iter(c.check_specs_by_output_name))].name for c in signals_checks}
    assert "soft_play_signals_well_formed" in names
    asset = by_name("chip_dumping_signals")
    check = next(c for c in signals_checks if "chip_dumping_signals_well_formed" in {s.name for s in c.check_specs})
    result = dg.materialize([asset, check], resources={"warehouse": DuckDBResource(database=warehouse_file)})
    evals = result.get_asset_check_evaluations()
    assert evals and all(e.passed for e in evals)


class _HeldDetector:
    """A detector whose detect keeps a large object alive through a reference cycle (as fitted detectors' objects
    can refer to each other), and notes a weak reference to itself."""

    refs: list = []
    missing_: list = []

    def detect(self, con):
        self.cycle_ = {"owner": self, "rows": bytearray(1 << 20)}
        _HeldDetector.refs.append(weakref.ref(self))
        return []


def test_a_finished_kind_gives_back_what_its_detector_held(monkeypatch, tmp_path):
    from pipelines.lib import memory, warehouse as wh

    path = str(tmp_path / "warehouse.duckdb")
    con = duckdb.connect(path)
    wh.ensure_schema(con)
    con.close()
    seen = []
    real = memory.give_back

    def spy():  # the detector must already be unreachable (only its cycle holds it) when the memory is given back
        seen.append(_HeldDetector.refs[-1]() is not None)
        real()
        seen.append(_HeldDetector.refs[-1]() is not None)

    monkeypatch.setattr(memory, "give_back", spy)
    gc.disable()  # the cycle is freed by give_back's collection, not by one that happens to run
    try:
        result = dg.materialize([A.make_signals_asset("held", _HeldDetector)],
                                resources={"warehouse": DuckDBResource(database=path)})
    finally:
        gc.enable()
    assert result.success
    assert seen == [True, False]  # held only by its cycle when the kind ended, collected by give_back
