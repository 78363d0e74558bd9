"""The investigators' web app (FastAPI + Jinja, no front-end build, no JavaScript).

It reads the warehouse only through the snapshot the nightly run publishes
(a read-only DuckDB connection per request, so a new snapshot is picked up
by the next request and a run is never blocked) and keeps its own state in
the review store (SQLite).

Security:

- sign-in with a password (scrypt, per-user salt); a server-side session
  (random token in an ``HttpOnly; SameSite=Strict`` cookie, its SHA-256 in
  the ``sessions`` table, expiring after ``session_ttl`` seconds);
- every page but /login needs a session: GET without one redirects to
  /login, anything else is answered 401;
- at most five failed sign-ins per user and client in five minutes (then 429);
- every POST checks the ``Origin`` (and, without it, the ``Referer``)
  against the app's own origin, and a CSRF token: the session's token in
  every form (before sign-in, a double-submit cookie); a mismatch is 403;
- Jinja autoescape on every template, no script in any page, and a
  Content-Security-Policy without ``script-src`` as a second wall.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from detectors.kinds import KINDS
from pipelines.lib import paths
from pipelines.lib.errors import RailbirdError
from pipelines.lib.replay import dict_rows, load_replays, table_names
from pipelines.lib.reports import build_report, file_stem, jinja_env, render_html
from pipelines.lib.review import SESSION_TTL_SECONDS, STATUS_LABELS, STATUSES, ReviewStore
from pipelines.lib.readonly_sql import SqlDoesNotParse, SqlRefused, open_snapshot, run_query

COOKIE = "rb_session"
LOGIN_COOKIE = "rb_login_csrf"
LOGIN_MAX_FAILURES, LOGIN_WINDOW = 5, 300.0  # at most 5 failed sign-ins per user and client in 5 minutes
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


@dataclass
class WebSettings:
    snapshot_path: str = str(paths.snapshot_path())
    review_db: str = str(paths.review_store_path())
    sql_row_limit: int = 1000
    sql_timeout: float = 10.0
    session_ttl: float = SESSION_TTL_SECONDS
    secure_cookie: bool = False  # set when served behind HTTPS


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(settings: WebSettings | None = None) -> FastAPI:
    """Build the app for one snapshot and one review store."""
    cfg = settings or WebSettings()
    app = FastAPI(title="railbird", docs_url=None, redoc_url=None, openapi_url=None)
    env = jinja_env(web=True)
    env.globals["STATUS_LABELS"] = STATUS_LABELS

    failures: dict[tuple[str, str], list[float]] = {}  # failed sign-ins per (user, client), for throttling

    def store() -> ReviewStore:
        return ReviewStore(cfg.review_db)

    def render(request: Request, name: str, status_code: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.setdefault("user", getattr(request.state, "user", None))
        ctx.setdefault("csrf", getattr(request.state, "csrf", ""))
        ctx.setdefault("msg", request.query_params.get("msg", ""))
        ctx.setdefault("err", request.query_params.get("err", ""))
        return HTMLResponse(env.get_template(name).render(**ctx), status_code=status_code)

    @app.middleware("http")
    async def headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused):  # type: ignore[no-untyped-def]
        if exc.status == 401 and request.method == "GET":
            nxt = urllib.parse.quote(request.url.path + (f"?{request.url.query}" if request.url.query else ""), safe="")
            return RedirectResponse(f"/login?next={nxt}", status_code=303)
        return render(request, "error.html", status_code=exc.status, title=str(exc.status), message=exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):  # type: ignore[no-untyped-def]
        return render(request, "error.html", status_code=exc.status_code, title=str(exc.status_code),
                      message=str(exc.detail))

    # ------------------------------------------------------------ helpers

    def own_origin(request: Request) -> str:
        return f"{request.url.scheme}://{request.headers.get('host', '')}"

    def check_origin(request: Request) -> None:
        origin = request.headers.get("origin")
        if origin is None:
            ref = request.headers.get("referer")
            if ref:
                p = urllib.parse.urlsplit(ref)
                origin = f"{p.scheme}://{p.netloc}"
        if origin is not None and origin != own_origin(request):
            raise Refused(403, "cross-site request refused (foreign Origin)")

    def require_user(request: Request) -> dict[str, Any]:
        with store() as st:
            sess = st.session(request.cookies.get(COOKIE))
        if sess is None:
            raise Refused(401, "sign in first")
        request.state.user = sess
        request.state.csrf = sess["csrf"]
        return sess

    async def post_form(request: Request) -> tuple[dict[str, Any], dict[str, str]]:
        """Session, Origin and CSRF checks of a POST; returns (session, form)."""
        sess = require_user(request)
        check_origin(request)
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not _same(form.get("csrf", ""), sess["csrf"]):
            raise Refused(403, "missing or wrong CSRF token")
        return sess, form

    def snapshot() -> duckdb.DuckDBPyConnection | None:
        return open_snapshot(cfg.snapshot_path)

    def no_run(request: Request) -> HTMLResponse:
        return render(request, "no_snapshot.html", status_code=503, snapshot=cfg.snapshot_path)

    def back(path: str, **params: str) -> RedirectResponse:
        q = urllib.parse.urlencode({k: v for k, v in params.items() if v})
        return RedirectResponse(path + (f"?{q}" if q else ""), status_code=303)

    # ------------------------------------------------------------- sign-in

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request, next: str = "/cases") -> HTMLResponse:
        token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(32)
        resp = render(request, "login.html", csrf=token, next=next, user=None)
        resp.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=cfg.secure_cookie, max_age=3600)
        return resp

    @app.post("/login")
    async def login(request: Request) -> Response:
        check_origin(request)
        form = {k: str(v) for k, v in (await request.form()).items()}
        cookie = request.cookies.get(LOGIN_COOKIE, "")
        if not cookie or not _same(form.get("csrf", ""), cookie):
            raise Refused(403, "missing or wrong CSRF token")
        name, password = form.get("username", ""), form.get("password", "")
        key = (name, request.client.host if request.client else "")
        now = time.monotonic()
        recent = [t for t in failures.get(key, []) if now - t < LOGIN_WINDOW]
        if len(recent) >= LOGIN_MAX_FAILURES:
            raise Refused(429, "too many failed sign-ins: wait a few minutes")
        nxt = form.get("next", "/cases")
        if not nxt.startswith("/") or nxt.startswith("//") or "\\" in nxt:
            nxt = "/cases"
        with store() as st:
            if not await run_in_threadpool(st.verify_password, name, password):  # scrypt off the event loop
                failures[key] = [*recent, now]
                return render(request, "login.html", status_code=401, csrf=cookie, next=nxt, user=None,
                              err="wrong user name or password")
            token, _ = st.create_session(name, ttl=cfg.session_ttl)
        failures.pop(key, None)
        resp = RedirectResponse(nxt, status_code=303)
        resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=cfg.secure_cookie,
                        max_age=int(cfg.session_ttl), path="/")
        resp.delete_cookie(LOGIN_COOKIE)
        return resp

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        await post_form(request)
        with store() as st:
            st.end_session(request.cookies.get(COOKIE))
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(COOKIE, path="/")
        return resp

    # --------------------------------------------------------------- queue

    @app.get("/")
    def index(request: Request) -> Response:
        require_user(request)
        return RedirectResponse("/cases", status_code=303)

    @app.get("/cases", response_class=HTMLResponse)
    def queue(request: Request) -> HTMLResponse:
        require_user(request)
        q = request.query_params
        problems = []

        def num(key: str) -> float | None:
            v = q.get(key, "").strip()
            if not v:
                return None
            try:
                return float(v)
            except ValueError:
                problems.append(f"{key} is not a number")
                return None

        def day(key: str) -> str | None:
            v = q.get(key, "").strip()
            if v and (len(v) != 10 or not v.replace("-", "").isdigit()):
                problems.append(f"{key} is not a date (YYYY-MM-DD)")
                return None
            return v or None

        flagged_q = q.get("flagged", "1")
        filters = {
            "kind": q.get("kind") if q.get("kind") in KINDS else None,
            "status": q.get("status") if q.get("status") in STATUSES else None,
            "assignee": q.get("assignee") or None,
            "score_min": num("score_min"), "score_max": num("score_max"),
            "date_from": day("date_from"), "date_to": day("date_to"),
            "flagged": {"1": True, "0": False}.get(flagged_q),
            "account": q.get("account") or None,
            "ring": q.get("ring") or None,
            "date_field": "first_seen" if q.get("date_field") == "first_seen" else "last_seen",
        }
        sort = q.get("sort", "rank")
        desc = q.get("order", "desc") != "asc"
        with store() as st:
            rows = st.queue(**filters, sort=sort, desc=desc)
            assignees = [u["name"] for u in st.users()]
        snap_exists = Path(cfg.snapshot_path).exists()
        shown = {k: q.get(k, "") for k in ("kind", "status", "assignee", "score_min", "score_max", "date_from",
                                            "date_to", "account", "ring", "date_field")}
        base_q = {**{k: v for k, v in shown.items() if v}, "flagged": flagged_q}
        sort_links = {key: "/cases?" + urllib.parse.urlencode(
            {**base_q, "sort": key, "order": "asc" if (sort == key and desc) else "desc"})
            for key in ("case", "kind", "score", "stake", "hands", "status", "last_seen")}
        return render(request, "queue.html", rows=rows, q=shown, kinds=KINDS, statuses=STATUSES,
                      assignees=assignees, sort=sort, desc=desc, flagged_q=flagged_q, problems=problems,
                      sort_links=sort_links,
                      snap_exists=snap_exists)

    # ---------------------------------------------------------------- case

    @app.get("/cases/{case_id}", response_class=HTMLResponse)
    def case_page(request: Request, case_id: str) -> HTMLResponse:
        require_user(request)
        with store() as st:
            review = st.case(case_id)
            notes = st.notes(case_id) if review else []
            audit = st.audit(case_id) if review else []
            users = st.users()
        con = snapshot()
        if con is None:
            if review is None:
                return no_run(request)
            report = None
        else:
            try:
                report = build_report(con, case_id)
            finally:
                con.close()
        if review is None and report is None:
            raise Refused(404, f"no case {case_id}")
        return render(request, "case.html", case_id=case_id, review=review, report=report, r=report, notes=notes,
                      audit=audit, users=users, statuses=[s for s in STATUSES if s != "confirmed"])

    @app.get("/cases/{case_id}/report.{fmt}")
    def case_report_file(request: Request, case_id: str, fmt: str) -> Response:
        """The case report as the standalone HTML page or its JSON, built from the published snapshot."""
        require_user(request)
        if fmt not in ("html", "json"):
            raise Refused(404, "report.html or report.json")
        con = snapshot()
        if con is None:
            return no_run(request)
        try:
            report = build_report(con, case_id)
        finally:
            con.close()
        if report is None:
            raise Refused(404, f"no case {case_id} in the published snapshot")
        headers = {"Content-Disposition": f'attachment; filename="{file_stem(case_id)}.{fmt}"'}
        if fmt == "json":
            return Response(json.dumps(report, default=str, ensure_ascii=False), media_type="application/json",
                            headers=headers)
        return HTMLResponse(render_html(report), headers=headers)

    def _case_action(path_fn):  # type: ignore[no-untyped-def]
        async def handler(request: Request, case_id: str) -> Response:
            sess, form = await post_form(request)
            try:
                with store() as st:
                    path_fn(st, case_id, sess["user"], form)
            except RailbirdError as exc:
                return back(f"/cases/{urllib.parse.quote(case_id, safe='')}", err=str(exc))
            return back(f"/cases/{urllib.parse.quote(case_id, safe='')}", msg="saved")
        return handler

    app.post("/cases/{case_id}/status")(_case_action(
        lambda st, cid, user, f: st.set_status(cid, f.get("status", ""), user, f.get("note") or None)))
    app.post("/cases/{case_id}/assign")(_case_action(
        lambda st, cid, user, f: st.assign(cid, f.get("assignee") or None, user)))
    app.post("/cases/{case_id}/note")(_case_action(
        lambda st, cid, user, f: st.add_note(cid, user, f.get("body", ""))))
    app.post("/cases/{case_id}/propose")(_case_action(
        lambda st, cid, user, f: st.propose_confirmation(cid, user, f.get("note") or None)))
    app.post("/cases/{case_id}/approve")(_case_action(
        lambda st, cid, user, f: st.approve_confirmation(cid, user, f.get("note") or None)))
    app.post("/cases/{case_id}/reject")(_case_action(
        lambda st, cid, user, f: st.reject_confirmation(cid, user, f.get("note") or None)))

    # ---------------------------------------------------------- hand, account

    @app.get("/hands/{hand_id}", response_class=HTMLResponse)
    def hand_page(request: Request, hand_id: str) -> HTMLResponse:
        require_user(request)
        con = snapshot()
        if con is None:
            return no_run(request)
        try:
            tables = table_names(con)
            in_cases = con.execute(
                "SELECT c.case_id, c.kind, c.accounts FROM case_hands h JOIN cases c ON c.case_id = h.case_id "
                "WHERE h.hand_id = ? ORDER BY c.rank", [hand_id]).fetchall() if "case_hands" in tables else []
            accused = {a for _, _, accs in in_cases for a in accs}
            kind = in_cases[0][1] if in_cases else ""
            replays = load_replays(con, [hand_id], kind=kind, accused=accused, tables=tables)
        finally:
            con.close()
        if not replays:
            raise Refused(404, f"no hand {hand_id} in the published snapshot")
        return render(request, "hand.html", h=replays[0] | {"new": False}, in_cases=in_cases)

    @app.get("/accounts/{account:path}", response_class=HTMLResponse)
    def account_page(request: Request, account: str) -> HTMLResponse:
        require_user(request)
        with store() as st:
            cases = st.cases_of_account(account)
        con = snapshot()
        if con is None:
            return no_run(request)
        try:
            info = _account_facts(con, account)
        finally:
            con.close()
        return render(request, "account.html", account=account, cases=cases, **info)

    # ----------------------------------------------------------------- SQL

    @app.get("/sql", response_class=HTMLResponse)
    def sql_page(request: Request) -> HTMLResponse:
        require_user(request)
        if not Path(cfg.snapshot_path).exists():
            return no_run(request)
        return render(request, "sql.html", query="SELECT kind, count(*) FROM cases GROUP BY kind", result=None,
                      error="", limit=cfg.sql_row_limit, timeout=cfg.sql_timeout)

    @app.post("/sql", response_class=HTMLResponse)
    async def sql_run(request: Request) -> HTMLResponse:
        _, form = await post_form(request)
        query = form.get("query", "")
        result, error, status = None, "", 200
        try:
            result = run_query(cfg.snapshot_path, query, limit=cfg.sql_row_limit, timeout=cfg.sql_timeout)
        except SqlDoesNotParse as exc:
            error, status = str(exc), 400
        except SqlRefused as exc:
            error, status = f"refused: {exc}", 400
        except duckdb.Error as exc:
            error, status = f"{type(exc).__name__}: {exc}", 400
        return render(request, "sql.html", status_code=status, query=query, result=result, error=error,
                      limit=cfg.sql_row_limit, timeout=cfg.sql_timeout)

    @app.get("/healthz", response_class=PlainTextResponse)
    def healthz() -> str:
        return "ok"

    return app


def _same(a: str, b: str) -> bool:
    """Constant-time comparison of two tokens (bytes, so non-ASCII input cannot raise)."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


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


def app_from_env() -> FastAPI:
    """The app for uvicorn's factory mode, configured from RAILBIRD_* environment variables."""
    return create_app(WebSettings())
