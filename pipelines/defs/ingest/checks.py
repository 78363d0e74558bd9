"""Asset checks of the ingest stage, named as predicates.

- ``hands_balance``: re-verifies every stored hand in SQL, independently of
  the parser: the chips put in by the seats equal the total pot, the pot
  equals what was collected plus the rake, and each seat's end stack is
  ``stack_start - put_in + collected`` and never negative.  Hands where a
  player cashed out (run-it-once insurance: the room pays the cash-out and
  settles the pot itself) are exempt from the collected + rake rule only.
- ``events_stored_once``: no row of the key-less event tables (session events,
  sit-outs, registrations, transfers) is stored twice.
- ``hand_rows_stored_once``: no key of the hand tables (a hand id in ``hands``,
  a seat, an action, a decision ... of one hand) is stored twice.  These tables
  carry no primary-key index (it costs more to load than it ever saves: the
  loader keeps the keys unique), so this check is what proves it.
- ``quarantine_rate_below_threshold``: quarantined inputs (hands, event lines,
  account rows) over all inputs seen stays below ``settings.quarantine_threshold``;
  a failure is a warning (bad input is kept, not lost).
"""


import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import warehouse as wh

BALANCE_SQL = """
WITH s AS (
    SELECT hand_id, sum(put_in) AS put_in, sum(collected) AS collected,
           bool_or(stack_end <> stack_start - put_in + collected) AS stack_mismatch,
           bool_or(stack_end < 0) AS negative_stack
    FROM seats GROUP BY hand_id
), c AS (
    SELECT hand_id, bool_or(kind = 'cash_out') AS cash_out FROM collections GROUP BY hand_id
)
SELECT h.hand_id, h.total_pot, h.rake, s.put_in, s.collected, s.stack_mismatch, s.negative_stack
FROM hands h LEFT JOIN s USING (hand_id) LEFT JOIN c USING (hand_id)
WHERE s.hand_id IS NULL
   OR s.put_in <> h.total_pot
   OR (s.collected + h.rake <> h.total_pot AND NOT coalesce(c.cash_out, false))
   OR s.stack_mismatch OR s.negative_stack
ORDER BY h.hand_id
"""


@dg.asset_check(asset="hands", blocking=False,
                description="Every stored hand balances: put in = total pot = collected + rake; end stacks follow.")
def hands_balance(warehouse: DuckDBResource) -> dg.AssetCheckResult:
    with warehouse.get_connection() as con:
        wh.ensure_schema(con)
        bad = con.execute(BALANCE_SQL).fetchall()
        total = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
    return dg.AssetCheckResult(
        passed=not bad,
        metadata={"hands_checked": int(total), "unbalanced": len(bad),
                  "examples": [str(r[0]) for r in bad[:20]]},
    )


def _doubled_sql(distinct: dict[str, str]) -> str:
    """Per table, its rows minus its distinct values of ``distinct[table]`` (columns, or ``*``
    for the whole row): how many rows are stored twice. Table and column names are this
    module's constants, never input."""
    return " UNION ALL ".join(
        f"SELECT '{t}' AS tbl, count(*) - (SELECT count(*) FROM (SELECT DISTINCT {cols} FROM {t})) AS extra FROM {t}"
        for t, cols in distinct.items())


def _doubled(warehouse: DuckDBResource, sql: str) -> dict[str, int]:
    with warehouse.get_connection() as con:
        wh.ensure_schema(con)
        return {t: int(n) for t, n in con.execute(sql).fetchall()}


# Event tables without a key: the loader dedupes each event on its whole content, so a row
# stored twice means a load doubled it.
KEYLESS_EVENT_TABLES = ("session_events", "sit_events", "registrations", "transfers")
STORED_ONCE_SQL = _doubled_sql({t: "*" for t in KEYLESS_EVENT_TABLES})


@dg.multi_asset_check(
    specs=[dg.AssetCheckSpec("events_stored_once", asset=t, blocking=False,
                             description="No event row of this key-less table is stored twice.")
           for t in KEYLESS_EVENT_TABLES],
)
def events_stored_once(warehouse: DuckDBResource):
    extra = _doubled(warehouse, STORED_ONCE_SQL)
    for t in KEYLESS_EVENT_TABLES:
        yield dg.AssetCheckResult(asset_key=t, check_name="events_stored_once", passed=extra[t] == 0,
                                  metadata={"rows_stored_twice": extra[t]})


# Hand tables and the key the loader keeps unique in each (no index enforces it).
HAND_TABLE_KEYS = {
    "hands": ("hand_id",), "seats": ("hand_id", "seat"), "actions": ("hand_id", "seq"),
    "hole_cards": ("hand_id", "player"), "boards": ("hand_id", "run"), "pots": ("hand_id", "pot"),
    "table_events": ("hand_id", "line"), "decisions": ("hand_id", "seq"),
}
KEYS_ONCE_SQL = _doubled_sql({t: ", ".join(k) for t, k in HAND_TABLE_KEYS.items()})


@dg.multi_asset_check(
    specs=[dg.AssetCheckSpec("hand_rows_stored_once", asset=t, blocking=False,
                             description=f"No key ({', '.join(k)}) of this hand table is stored twice.")
           for t, k in HAND_TABLE_KEYS.items()],
)
def hand_rows_stored_once(warehouse: DuckDBResource):
    extra = _doubled(warehouse, KEYS_ONCE_SQL)
    for t in HAND_TABLE_KEYS:
        yield dg.AssetCheckResult(asset_key=t, check_name="hand_rows_stored_once", passed=extra[t] == 0,
                                  metadata={"keys_stored_twice": extra[t]})


@dg.asset_check(asset="quarantine", blocking=False,
                description="Quarantined inputs stay below settings.quarantine_threshold of all inputs seen.")
def quarantine_rate_below_threshold(warehouse: DuckDBResource, settings: RailbirdSettings) -> dg.AssetCheckResult:
    with warehouse.get_connection() as con:
        wh.ensure_schema(con)
        q = con.execute("SELECT count(*) FROM quarantine").fetchall()[0][0]
        by_reason = con.execute(
            "SELECT reason, count(*) FROM quarantine GROUP BY reason ORDER BY 2 DESC LIMIT 15").fetchall()
        stored = con.execute(
            "SELECT (SELECT count(*) FROM hands) + (SELECT count(*) FROM session_events) + (SELECT count(*) FROM sit_events)"
            " + (SELECT count(*) FROM registrations) + (SELECT count(*) FROM decisions) + (SELECT count(*) FROM transfers)"
            " + (SELECT count(*) FROM other_events) + (SELECT count(*) FROM accounts)").fetchall()[0][0]
    total = q + stored
    rate = q / total if total else 0.0
    return dg.AssetCheckResult(
        passed=rate < settings.quarantine_threshold,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"quarantined": int(q), "inputs": int(total), "rate": float(round(rate, 6)),
                  "threshold": float(settings.quarantine_threshold),
                  **{f"reason: {r}": int(n) for r, n in by_reason}},
    )
