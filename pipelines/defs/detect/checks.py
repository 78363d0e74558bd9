"""Asset checks of the detect stage: every kind's signals are well formed.

``<kind>_signals_well_formed``: every row of that kind names accounts, has a
finite score, a p-value and an estimated false-discovery rate (``q_value``)
in [0, 1] (or none), and every flagged row has a
summary and at least one evidence hand (seat hand-offs and sit-outs may rest
on tournaments instead).

``<kind>_detector_ran``: the detector of that kind ran in this run
(``detector_runs``); when it failed, the check fails with its error and the run
whose signals the kind still shows.
"""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.detect.assets import signals_assets

WELL_FORMED_SQL = """
SELECT
    count(*) AS rows,
    count(*) FILTER (WHERE len(accounts) = 0) AS no_accounts,
    count(*) FILTER (WHERE NOT isfinite(score)) AS bad_score,
    count(*) FILTER (WHERE p_value IS NOT NULL AND (p_value < 0 OR p_value > 1)) AS bad_p,
    count(*) FILTER (WHERE q_value IS NOT NULL AND NOT (q_value BETWEEN 0 AND 1)) AS bad_q,
    count(*) FILTER (WHERE flagged AND (summary = '' OR (len(hands) = 0 AND len(tournaments) = 0))) AS flagged_without_evidence
FROM signals WHERE kind = ?
"""


def make_check(asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    kind = asset.key.path[-1].removesuffix("_signals")

    @dg.asset_check(asset=asset, name=f"{kind}_signals_well_formed", blocking=False,
                    description=f"Rows of kind '{kind}' in signals name accounts, have finite scores and valid p- and q-values; flagged rows carry a summary and evidence.")
    def _check(warehouse: DuckDBResource) -> dg.AssetCheckResult:
        with warehouse.get_connection() as con:
            rows, no_acc, bad_score, bad_p, bad_q, no_ev = con.execute(WELL_FORMED_SQL, [kind]).fetchall()[0]
        problems = no_acc + bad_score + bad_p + bad_q + no_ev
        return dg.AssetCheckResult(
            passed=problems == 0,
            metadata={"rows": rows, "no_accounts": no_acc, "bad_score": bad_score, "bad_p_value": bad_p, "bad_q_value": bad_q,
                      "flagged_without_evidence": no_ev},
        )

    return _check


def make_ran_check(asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    kind = asset.key.path[-1].removesuffix("_signals")

    @dg.asset_check(asset=asset, name=f"{kind}_detector_ran", blocking=False,
                    description=f"The {kind} detector ran in this run; if it failed, its kind shows an earlier run's signals.")
    def _check(context: dg.AssetCheckExecutionContext, warehouse: DuckDBResource) -> dg.AssetCheckResult:
        with warehouse.get_connection() as con:
            row = con.execute("SELECT status, error, signals_run_id FROM detector_runs WHERE run_id = ? AND kind = ?",
                              [context.run.run_id, kind]).fetchone()
        status, error, shown = row or ("not recorded", None, None)
        return dg.AssetCheckResult(passed=status == "ok", severity=dg.AssetCheckSeverity.ERROR,
                                   metadata={"status": status, "error": error or "", "signals_run_id": shown or ""})

    return _check


signals_checks = [make_check(a) for a in signals_assets] + [make_ran_check(a) for a in signals_assets]
