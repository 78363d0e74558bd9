"""One account: /accounts/{account}: its play (VPIP, PFR, bb/100), cases, sessions, devices, networks,
identity links, results and its hands page by page; 404 for an account railbird has never seen."""

from __future__ import annotations

import urllib.parse
from typing import Any

import duckdb
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pipelines.lib.replay import dict_rows, table_names
from pipelines.web.core import Refused, web

router = APIRouter()

HANDS_PAGE = 50


@router.get("/accounts/{account:path}", response_class=HTMLResponse)
def account_page(request: Request, account: str) -> HTMLResponse:
    w = web(request)
    w.require_user(request)
    try:
        page = max(int(request.query_params.get("page", "1")), 1)
    except ValueError:
        page = 1
    with w.store() as st:
        cases = st.cases_of_account(account)
    con = w.snapshot()
    if con is None:
        return w.no_run(request)
    try:
        info = _account_facts(con, account)
        info |= _account_play(con, account, page)
    finally:
        con.close()
    if info["profile"] is None and not info["n_hands"] and not cases and not info["sessions"]:
        raise Refused(404, f"no account {account} in the published snapshot or the cases")
    last = max((info["n_hands"] + HANDS_PAGE - 1) // HANDS_PAGE, 1)
    page = min(page, last)
    here = "/accounts/" + urllib.parse.quote(account, safe="")
    pages = {"page": page, "of": last, "total": info["n_hands"],
             "start": (page - 1) * HANDS_PAGE + 1 if info["hands"] else 0,
             "end": (page - 1) * HANDS_PAGE + len(info["hands"]),
             "prev": f"{here}?page={page - 1}#hands" if page > 1 else "",
             "next": f"{here}?page={page + 1}#hands" if page < last else ""}
    return w.render(request, "account.html", account=account, cases=cases, pages=pages, **info)


def _account_play(con: duckdb.DuckDBPyConnection, account: str, page: int) -> dict[str, Any]:
    """The account's tracker stats (the ``player_stats`` view), sessions, devices, networks and one page of hands.

    ``devices`` / ``networks``: per device (IP), its sessions, first and last
    login and how many other accounts used it; ``hands``: HANDS_PAGE hands
    from ``page``, newest first, with ``n_hands`` the total.
    """
    tables = table_names(con)
    out: dict[str, Any] = {"stats": None, "sessions": [], "devices": [], "networks": [], "hands": [], "n_hands": 0}
    if "player_stats" in tables:
        rows = dict_rows(con, "SELECT * FROM player_stats WHERE player = ?", [account])
        out["stats"] = rows[0] if rows else None
    if "sessions" in tables:
        out["sessions"] = dict_rows(con, "SELECT session, device, ip, login_at, logout_at FROM sessions "
                                         "WHERE account = ? ORDER BY login_at DESC LIMIT 100", [account])
        for col, key in (("device", "devices"), ("ip", "networks")):  # col: a fixed column name
            out[key] = dict_rows(con, f"""
                SELECT a.{col} AS value, count(DISTINCT a.session) AS sessions, min(a.login_at) AS first,
                       max(a.login_at) AS last, count(DISTINCT b.account) AS others
                FROM sessions a LEFT JOIN sessions b ON b.{col} = a.{col} AND b.account <> a.account
                WHERE a.account = ? AND a.{col} IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 100""", [account])
    if "seats" in tables and "hands" in tables:
        out["n_hands"] = con.execute("SELECT count(*) FROM seats WHERE player = ?", [account]).fetchone()[0]
        out["hands"] = dict_rows(con, """
            SELECT h.hand_id, h.started_at, h.table_name, h.tournament_id, h.is_tournament, h.currency, s.net
            FROM seats s JOIN hands h ON h.hand_id = s.hand_id WHERE s.player = ?
            ORDER BY h.started_at DESC, h.hand_id LIMIT ? OFFSET ?""", [account, HANDS_PAGE, (page - 1) * HANDS_PAGE])
    return out


def _account_facts(con: duckdb.DuckDBPyConnection, account: str) -> dict[str, Any]:
    """Identity links (signals and shared identifiers) and results (seats, finishes) of one account."""
    out: dict[str, Any] = {"profile": None, "signals": [], "shared": [], "results": [], "finishes": []}
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
    if "tournament_finishes" in tables:
        out["finishes"] = dict_rows(con, "SELECT tournament_id, place, prize FROM tournament_finishes WHERE player = ? "
                                     "ORDER BY tournament_id", [account])
    return out
