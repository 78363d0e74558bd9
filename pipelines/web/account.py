"""One account: /accounts/{account}, its identity links, results and cases."""

from __future__ import annotations

from typing import Any

import duckdb
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pipelines.lib.replay import dict_rows, table_names
from pipelines.web.core import web

router = APIRouter()


@router.get("/accounts/{account:path}", response_class=HTMLResponse)
def account_page(request: Request, account: str) -> HTMLResponse:
    w = web(request)
    w.require_user(request)
    with w.store() as st:
        cases = st.cases_of_account(account)
    con = w.snapshot()
    if con is None:
        return w.no_run(request)
    try:
        info = _account_facts(con, account)
    finally:
        con.close()
    return w.render(request, "account.html", account=account, cases=cases, **info)


def _account_facts(con: duckdb.DuckDBPyConnection, account: str) -> dict[str, Any]:
    """Identity links (signals and shared identifiers) and results (seats, finishes) of one account."""
    out: dict[str, Any] = {"profile": None, "signals": [], "shared": [], "results": [], "finishes": [], "recent": []}
    tables = table_names(con)  # once: each information_schema query costs as much as a small scan
    if "accounts" in tables:
        prof = dict_rows(con, "SELECT account, created_at, country, payment FROM accounts WHERE account = ?", [account])
        out["profile"] = prof[0] if prof else None
    if "case_signals" in tables:
        out["signals"] = dict_rows(con, "SELECT case_id, kind, detector, accounts, score, flagged, summary FROM case_signals "
                                    "WHERE list_contains(accounts, ?) ORDER BY score DESC LIMIT 200", [account])
    if "sessions" in tables:
        for col in ("device", "ip"):
            out["shared"] += dict_rows(con, f"""
                SELECT '{col}' AS via, b.{col} AS value, b.account AS other, count(*) AS sessions
                FROM sessions a JOIN sessions b ON b.{col} = a.{col} AND b.account <> a.account
                WHERE a.account = ? AND a.{col} IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 100""", [account])
    if "accounts" in tables:
        out["shared"] += dict_rows(con, """
            SELECT 'payment' AS via, b.payment AS value, b.account AS other, 1 AS sessions
            FROM accounts a JOIN accounts b ON b.payment = a.payment AND b.account <> a.account
            WHERE a.account = ? AND a.payment IS NOT NULL LIMIT 100""", [account])
    if "transfers" in tables:
        out["shared"] += dict_rows(con, """
            SELECT CASE WHEN account = ? THEN 'transfer to' ELSE 'transfer from' END AS via,
                   sum(amount)::VARCHAR || ' ' || coalesce(any_value(currency), '') AS value,
                   CASE WHEN account = ? THEN to_account ELSE account END AS other, count(*) AS sessions
            FROM transfers WHERE account = ? OR to_account = ? GROUP BY 1, 3 ORDER BY 4 DESC LIMIT 100""",
            [account, account, account, account])
    if "seats" in tables and "hands" in tables:
        out["results"] = dict_rows(con, """
            SELECT h.currency, h.is_tournament, count(*) AS hands, sum(s.net) AS net, min(h.started_at) AS first,
                   max(h.started_at) AS last
            FROM seats s JOIN hands h ON h.hand_id = s.hand_id WHERE s.player = ? GROUP BY 1, 2 ORDER BY 3 DESC""",
            [account])
        out["recent"] = dict_rows(con, """
            SELECT h.hand_id, h.started_at, h.table_name, s.net FROM seats s JOIN hands h ON h.hand_id = s.hand_id
            WHERE s.player = ? ORDER BY h.started_at DESC LIMIT 50""", [account])
    if "tournament_finishes" in tables:
        out["finishes"] = dict_rows(con, "SELECT tournament_id, place, prize FROM tournament_finishes WHERE player = ? "
                                     "ORDER BY tournament_id", [account])
    return out
