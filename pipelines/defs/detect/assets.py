"""The detect stage: one ``<kind>_signals`` asset per detector of ``detectors.REGISTRY``, and ``pair_features``.

Each signals asset opens the warehouse through the ``warehouse`` resource
(dagster-duckdb) after the ingest stage has written its tables, runs the
detector (fit, score, threshold, explain) and replaces that kind's rows of the
``signals`` table with this run's signals. Writes are serialised by the
``duckdb_writer`` pool.

The factory reads the registry: adding a detector there adds its asset. A
registry entry whose module does not exist yet is skipped and logged (so one
engineer's unfinished module does not break the code location); any other
import error is raised.
"""


import datetime as _dt
import importlib
import json
import logging
import traceback
from typing import Any

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from detectors import REGISTRY
from detectors.base import Detector, Signal
from pipelines.lib import memory as _memory
from pipelines.lib import warehouse as _wh

log = logging.getLogger(__name__)

#: the warehouse tables (ingest assets, key = table name) the detectors read
WAREHOUSE_DEPS = [dg.AssetKey(t) for t in _wh.INGEST_TABLES]


def _json_default(o: Any) -> Any:
    if isinstance(o, (_dt.date, _dt.datetime)):
        return o.isoformat()
    if hasattr(o, "item"):
        return o.item()
    return str(o)


def _clean(o: Any) -> Any:
    """NaN and infinities become null (JSON has neither)."""
    if isinstance(o, float):
        return o if o == o and abs(o) != float("inf") else None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def write_signals(con, kind: str, signals: list[Signal], run_id: str | None) -> int:
    """Replace the rows of ``kind`` in ``signals`` with ``signals`` (one transaction, bound parameters);
    ``q_value`` is the signal's estimated false-discovery rate (NaN stored as NULL). Returns the rows written."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    rows = [
        {
            "kind": s.kind,
            "detector": s.detector,
            "accounts": [str(a) for a in s.accounts],
            "tournaments": [str(t) for t in s.tournaments],
            "score": float(s.score),
            "p_value": None if s.p_value is None or s.p_value != s.p_value else float(s.p_value),
            "q_value": None if s.q_value is None or s.q_value != s.q_value else float(s.q_value),
            "flagged": bool(s.flagged),
            "hands": [str(h) for h in s.hands],
            "summary": s.summary,
            "payload": json.dumps(_clean(s.to_dict()), default=_json_default, allow_nan=False),
            "run_id": run_id,
            "created_at": now,
        }
        for s in signals
    ]
    frame = pl.DataFrame(
        rows,
        schema={"kind": pl.Utf8, "detector": pl.Utf8, "accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
                "score": pl.Float64, "p_value": pl.Float64, "q_value": pl.Float64, "flagged": pl.Boolean, "hands": pl.List(pl.Utf8),
                "summary": pl.Utf8, "payload": pl.Utf8, "run_id": pl.Utf8, "created_at": pl.Datetime("us")},
    )
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM signals WHERE kind = ?", [kind])
        con.register("_new_signals", frame.to_arrow())
        con.execute(  # columns by name: a warehouse migrated by ALTER TABLE has them in its own order
            "INSERT INTO signals (kind, detector, accounts, tournaments, score, p_value, q_value, flagged, hands, "
            "summary, payload, run_id, created_at) SELECT kind, detector, accounts, tournaments, score, p_value, "
            "q_value, flagged, hands, summary, CAST(payload AS JSON), run_id, created_at FROM _new_signals"
        )
        con.unregister("_new_signals")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return len(rows)


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``Type: first line of the message`` of an exception, at most ``limit`` characters."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record_detector_run(con, run_id: str, kind: str, status: str, error: str | None = None) -> str | None:
    """Append this run's outcome for ``kind`` to ``detector_runs`` (bound parameters); returns ``signals_run_id``.

    ``signals_run_id`` is the run whose rows of ``kind`` the ``signals`` table
    now holds: this run when ``status`` is 'ok'; when 'failed', the run of the
    newest kept rows (the previous night's), or None when there are none.
    """
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'detector_runs'").fetchone()[0]:
        _wh.ensure_schema(con)
    shown = run_id if status == "ok" else next(iter(con.execute(
        "SELECT run_id FROM signals WHERE kind = ? ORDER BY created_at DESC LIMIT 1", [kind]).fetchone() or []), None)
    con.execute("INSERT OR REPLACE INTO detector_runs VALUES (?, ?, ?, ?, ?, ?)",
                [run_id, kind, status, error, _dt.datetime.now(_dt.timezone.utc), shown])
    return shown


def _failed(context: dg.AssetExecutionContext, con, kind: str, exc: Exception) -> dg.MaterializeResult:
    """A detector raised: keep its previous signals, record and report the failure; the run goes on.

    The terminal and the run's log get one line; the traceback is kept in the
    materialisation's metadata (the Dagster UI) for whoever mends the detector.
    """
    run_id = context.run.run_id
    error = one_line(exc)
    shown = record_detector_run(con, run_id, kind, "failed", error)
    note = f"the {kind} cases show the signals of run {shown}" if shown else f"there are no {kind} signals yet"
    context.log.error(f"detector {kind} failed: {error}; {note}")
    context.instance.add_run_tags(run_id, {f"railbird/failed_{kind}": error[:200]})
    return dg.MaterializeResult(metadata={"status": "failed", "error": error, "signals_run_id": shown or "",
                                          "note": note, "traceback": dg.MetadataValue.text(traceback.format_exc())})


def _load_detector_class(kind: str) -> type[Detector] | None:
    module, cls = REGISTRY[kind].split(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:  # the module itself is not written yet
            log.warning("detector module %s for kind %s does not exist yet: no %s_signals asset", module, kind, kind)
            return None
        raise
    return getattr(mod, cls)


def _first_doc_paragraph(obj: Any) -> str:
    doc = (obj.__doc__ or "").strip()
    return doc.split("\n\n")[0].replace("\n", " ")


def run_kind(context: dg.AssetExecutionContext, warehouse: DuckDBResource, kind: str,
             detector_cls: type[Detector]) -> dg.MaterializeResult:
    """Run ``detector_cls`` over the warehouse (fit, score, threshold, explain), replace the ``kind`` rows of
    ``signals`` with its signals and record the run in ``detector_runs``; a detector that raises is recorded as
    failed and keeps its previous signals (:func:`_failed`). Returns the materialisation's metadata."""
    run_id = context.run.run_id
    with warehouse.get_connection() as con:
        detector = detector_cls()
        try:
            signals = detector.detect(con)
            n = write_signals(con, kind, signals, run_id)
        except Exception as exc:  # one detector's fault must not cost the other kinds their cases
            return _failed(context, con, kind, exc)
        record_detector_run(con, run_id, kind, "ok")
    flagged = [s for s in signals if s.flagged]
    return dg.MaterializeResult(
        metadata={
            "status": "ok",
            "signals": n,
            "flagged": len(flagged),
            "top": dg.MetadataValue.md(
                "\n".join(f"- {s.score:.1f} {', '.join(s.accounts)}: {s.summary[:160]}" for s in flagged[:10]) or "none"
            ),
            "missing": dg.MetadataValue.md("\n".join(f"- {m}" for m in detector.missing_) or "none"),
        }
    )


def make_signals_asset(kind: str, detector_cls: type[Detector]) -> dg.AssetsDefinition:
    """The ``<kind>_signals`` asset running ``detector_cls`` over the warehouse."""
    description = (
        f"{kind} signals: {_first_doc_paragraph(detector_cls)} Runs {detector_cls.__name__} "
        f"(fit on the population, score, threshold with false-discovery control, explain) over the warehouse and "
        f"replaces the '{kind}' rows of the signals table."
    )

    @dg.asset(
        name=f"{kind}_signals",
        deps=WAREHOUSE_DEPS,
        group_name="detect",
        pool="duckdb_writer",
        kinds={"duckdb", "python"},
        description=description,
    )
    def _signals(context: dg.AssetExecutionContext, warehouse: DuckDBResource) -> dg.MaterializeResult:
        try:
            return run_kind(context, warehouse, kind, detector_cls)
        finally:  # the kind's detector is gone: what it freed goes back before the next kind starts
            _memory.give_back()

    return _signals


def build_signals_assets() -> list[dg.AssetsDefinition]:
    out = []
    for kind in REGISTRY:
        cls = _load_detector_class(kind)
        if cls is not None:
            out.append(make_signals_asset(kind, cls))
    return out


signals_assets = build_signals_assets()


@dg.asset(deps=WAREHOUSE_DEPS, group_name="detect", pool="duckdb_writer", kinds={"duckdb", "polars"})
def pair_features(warehouse: DuckDBResource) -> dg.MaterializeResult:
    """Per ordered pair of accounts that met in a targeted decision: hands together, heads-up hands, aggression,
    folds and weak-hand commitments against the player's own baseline (observed, expected, p-value), card-aware
    value given (bb) and chip flow (bb); the table the gameplay detectors test, kept for analysts."""
    from detectors.features import gameplay as gp

    with warehouse.get_connection() as con:
        dec, pf = gp.cached_pair_features(con)
        pf = gp.own_baseline_columns(pf, dec)
        con.register("_pf", pf.to_arrow())
        con.execute("CREATE OR REPLACE TABLE pair_features AS SELECT * FROM _pf")
        con.unregister("_pf")
        con.execute(
            "COMMENT ON TABLE pair_features IS 'Per ordered pair (player -> opponent): heads-up and targeted decisions, "
            "own-baseline aggression/fold/weak-commit tests, card-aware value given and chip flow in big blinds; rebuilt by each run'"
        )
    return dg.MaterializeResult(metadata={"pairs": len(pf)})
