"""The investigators' web app (FastAPI + Jinja, no front-end build, no JavaScript).

It reads the warehouse only through the snapshot the nightly run publishes
(a read-only DuckDB connection per request, so a new snapshot is picked up
by the next request and a run is never blocked) and keeps its own state in
the review store (SQLite).

``create_app`` is the factory: it builds the shared ``Web``
(``pipelines.web.core``), the security headers and error pages, and mounts
one router per area: ``auth`` (sign-in), ``queue`` (/cases), ``case``
(a case, its reports and workflow actions), ``hand``, ``account``, ``sql``.

Security:

- sign-in with a password (scrypt, per-user salt); a server-side session
  (random token in an ``HttpOnly; SameSite=Strict`` cookie, its SHA-256 in
  the ``sessions`` table, expiring after ``session_ttl`` seconds);
- every page but /login needs a session: GET without one redirects to
  /login, anything else is answered 401;
- at most five failed sign-ins per account and twenty per address in five
  minutes (then 429), counted before the password is checked so parallel
  guesses count too; ``X-Forwarded-For`` is read only from a configured
  proxy (``trusted_proxies``);
- SQL page queries run on low-priority worker threads, never on the event
  loop, within row, character and time limits;
- every POST checks the ``Origin`` (and, without it, the ``Referer``)
  against the app's own origin, and a CSRF token: the session's token in
  every form (before sign-in, a double-submit cookie); a mismatch is 403;
- Jinja autoescape on every template, no script in any page, and a
  Content-Security-Policy without ``script-src`` as a second wall.
"""

from __future__ import annotations

import urllib.parse

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipelines.lib.reports import jinja_env
from pipelines.lib.review import STATUS_LABELS
from pipelines.web import account, auth, case, hand, queue, sql
from pipelines.web.core import CSP, Refused, Web, WebSettings

__all__ = ["WebSettings", "create_app", "app_from_env"]


def create_app(settings: WebSettings | None = None) -> FastAPI:
    """Build the app for one snapshot and one review store."""
    app = FastAPI(title="railbird", docs_url=None, redoc_url=None, openapi_url=None)
    env = jinja_env(web=True)
    # "new" is the badge of a case the last run opened; the status says no one has looked yet
    env.globals["STATUS_LABELS"] = {**STATUS_LABELS, "new": "not reviewed"}
    w = app.state.web = Web(settings or WebSettings(), env)

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
        return w.render(request, "error.html", status_code=exc.status, title=str(exc.status), message=exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):  # type: ignore[no-untyped-def]
        return w.render(request, "error.html", status_code=exc.status_code, title=str(exc.status_code),
                        message=str(exc.detail))

    for module in (auth, queue, case, hand, account, sql):
        app.include_router(module.router)

    @app.get("/healthz", response_class=PlainTextResponse)
    def healthz() -> str:
        return "ok"

    return app


def app_from_env() -> FastAPI:
    """The app for uvicorn's factory mode, configured from RAILBIRD_* environment variables."""
    return create_app(WebSettings())
