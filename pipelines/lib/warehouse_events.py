"""Loading platform events and accounts: each event table deduped on its normalised row, ``decisions``
on its key, sessions recomputed for the touched pairs (see :mod:`pipelines.lib.warehouse`)."""
from __future__ import annotations

import polars as pl

from pipelines.lib.warehouse_batch import EVENT_TABLES, Batch, LoadResult
from pipelines.lib.warehouse_stage import _insert, table_columns


def _load_decisions(con, df: pl.DataFrame, quarantine: list[pl.DataFrame]) -> int:
    """Decisions are keyed by (hand_id, seq): an identical repeat is a duplicate; a different one is a conflict.

    A conflicting line (same hand and action, other account/ms/ts than the stored
    or first one) is quarantined with its file, line and raw text.
    """
    key = ["hand_id", "seq"]
    d = df.with_row_index("_ord")
    first = d.sort("_ord").unique(subset=key, keep="first", maintain_order=True)
    con.register("_railbird_dk", first.select(key))
    try:
        stored = con.sql("SELECT hand_id, seq, account AS _s_account, ms AS _s_ms, ts AS _s_ts FROM decisions "
                         "SEMI JOIN _railbird_dk USING (hand_id, seq)").pl()
    finally:
        con.unregister("_railbird_dk")
    ref = first.select(*key, pl.col("account").alias("_r_account"), pl.col("ms").alias("_r_ms"), pl.col("ts").alias("_r_ts"))
    if stored.height:
        ref = ref.join(stored.with_columns(pl.col("seq").cast(ref.schema["seq"])), on=key, how="left").select(
            *key, pl.coalesce("_s_account", "_r_account").alias("_r_account"), pl.coalesce("_s_ms", "_r_ms").alias("_r_ms"),
            pl.coalesce("_s_ts", "_r_ts").alias("_r_ts"))
    d = d.join(ref, on=key, how="left")
    # ne_missing: a value on one side and null on the other is a difference too (``!=`` gives null and drops the row)
    differs = pl.any_horizontal(pl.col(c).ne_missing(pl.col(f"_r_{c}")) for c in ("account", "ms", "ts"))
    bad = d.filter(differs)
    if bad.height and "_file" in bad.columns:
        quarantine.append(bad.select(
            pl.col("_file").alias("source_file"), pl.col("_line").alias("position"), pl.lit("event").alias("input_kind"),
            "hand_id", pl.lit("conflict").alias("reason"),
            pl.format("decision for hand {} action {} already known with other values", "hand_id", "seq").alias("detail"),
            pl.col("_raw").fill_null("").alias("raw") if "_raw" in bad.columns else pl.lit("").alias("raw"),
        ))
    cols = [c for c in table_columns(con, "decisions") if c in df.columns]
    # a key already stored keeps its stored row (what ON CONFLICT DO NOTHING did against the primary key that
    # warehouses created before carry; new ones have none): only the keys new to the warehouse go in
    new = first.join(stored.select(key).with_columns(pl.col("seq").cast(first.schema["seq"])), on=key, how="anti") \
        if stored.height else first
    conflict = "ON CONFLICT DO NOTHING" if _has_primary_key(con, "decisions") else ""
    return _insert(con, "decisions", new.select(cols), conflict=conflict)


def _has_primary_key(con, table: str) -> bool:
    """Whether ``table`` carries a primary key (warehouses created before an index was dropped keep theirs)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = ? AND schema_name = 'main' "
                            "AND database_name = current_database() AND constraint_type = 'PRIMARY KEY'",
                            [table]).fetchall()[0][0])


def _load_events(con, batch: Batch, result: LoadResult, quarantine: list[pl.DataFrame] | None = None) -> None:
    quarantine = quarantine if quarantine is not None else []
    for name in EVENT_TABLES:
        df = batch.tables.get(name)
        if df is None or df.height == 0:
            result.rows.setdefault(name, 0)
            continue
        if name == "decisions":
            n = _load_decisions(con, df, quarantine)
        else:
            n = _insert(con, name, df, except_existing=True)
        result.rows[name] = n
        result.events_stored += n
    ev = batch.tables.get("session_events")
    before = con.execute("SELECT count(*) FROM sessions").fetchall()[0][0]
    if ev is not None and ev.height:
        con.register("_railbird_keys", ev.select("account", "session").unique())
        try:
            con.execute(
                """
                INSERT INTO sessions (account, session, ip, device, login_at, logout_at)
                SELECT e.account, e.session,
                       arg_min(e.ip, e.ts) FILTER (WHERE e.kind = 'login'),
                       arg_min(e.device, e.ts) FILTER (WHERE e.kind = 'login'),
                       min(e.ts) FILTER (WHERE e.kind = 'login'),
                       max(e.ts) FILTER (WHERE e.kind = 'logout')
                FROM session_events e SEMI JOIN _railbird_keys k ON e.account = k.account AND e.session = k.session
                GROUP BY e.account, e.session
                HAVING count(*) FILTER (WHERE e.kind = 'login') > 0
                ON CONFLICT (account, session) DO UPDATE SET
                    ip = excluded.ip, device = excluded.device,
                    login_at = excluded.login_at, logout_at = excluded.logout_at
                """
            ).fetchall()
        finally:
            con.unregister("_railbird_keys")
    result.rows["sessions"] = con.execute("SELECT count(*) FROM sessions").fetchall()[0][0] - before


def _load_accounts(con, batch: Batch, result: LoadResult) -> None:
    df = batch.tables.get("accounts")
    if df is None or df.height == 0:
        result.rows.setdefault("accounts", 0)
        return
    cols = [c for c in table_columns(con, "accounts") if c in df.columns]
    df = df.select(cols).unique(subset=["account"], keep="last", maintain_order=True)
    collist = ", ".join(f'"{c}"' for c in cols)
    sets = ", ".join(f'"{c}" = excluded."{c}"' for c in cols if c != "account")
    con.register("_railbird_acc", df)
    try:
        changed = con.execute(
            f"SELECT count(*) FROM (SELECT {collist} FROM _railbird_acc EXCEPT SELECT {collist} FROM accounts)"
        ).fetchall()[0][0]
        con.execute(
            f"INSERT INTO accounts ({collist}) SELECT {collist} FROM _railbird_acc "
            f"ON CONFLICT (account) DO UPDATE SET {sets}"
        ).fetchall()
    finally:
        con.unregister("_railbird_acc")
    result.rows["accounts"] = changed
    result.accounts_stored += changed
