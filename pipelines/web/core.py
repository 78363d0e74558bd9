"""What every router of the web app shares: the settings, the refusal, and ``Web`` (store, templates, checks).

``create_app`` (``pipelines.web.app``) builds one ``Web`` per app and keeps it
in ``app.state.web``; a handler reaches it with ``web(request)``.
"""

from __future__ import annotations

import hmac
import urllib.parse
from dataclasses import dataclass
from typing import Any

import duckdb
import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from pipelines.lib import paths
from pipelines.lib.readonly_sql import SqlLimits, SqlRunner, open_snapshot
from pipelines.lib.review import SESSION_TTL_SECONDS, ReviewStore
from pipelines.lib.throttle import SignInThrottle, client_address

COOKIE = "rb_session"
LOGIN_COOKIE = "rb_login_csrf"
# failed sign-ins in LOGIN_WINDOW seconds: at most LOGIN_MAX_FAILURES per account, LOGIN_MAX_PER_ADDRESS per address
LOGIN_MAX_FAILURES, LOGIN_MAX_PER_ADDRESS, LOGIN_WINDOW = 5, 20, 300.0
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


@dataclass
class WebSettings:
    snapshot_path: str = str(paths.snapshot_path())
    review_db: str = str(paths.review_store_path())
    sql_row_limit: int = 1000
    sql_timeout: float = 10.0
    sql_workers: int = 2  # SQL page queries at once; one more is refused, never queued
    session_ttl: float = SESSION_TTL_SECONDS
    secure_cookie: bool = False  # set when served behind HTTPS
    trusted_proxies: tuple[str, ...] = ()  # peers whose X-Forwarded-For names the client (addresses or networks)
    login_max_failures: int = LOGIN_MAX_FAILURES  # per account in login_window seconds
    login_max_per_address: int = LOGIN_MAX_PER_ADDRESS
    login_window: float = LOGIN_WINDOW


class Refused(Exception):
    """A request the app answers with ``status`` and ``message`` (401 on a GET redirects to /login)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Web:
    """One app's settings, templates and sign-in throttle, with the checks and helpers its handlers share."""

    def __init__(self, cfg: WebSettings, env: jinja2.Environment) -> None:
        self.cfg = cfg
        self.env = env
        self.throttle = SignInThrottle(cfg.login_max_failures, cfg.login_max_per_address, cfg.login_window)
        self.sql = SqlRunner(cfg.snapshot_path, SqlLimits(rows=cfg.sql_row_limit, seconds=cfg.sql_timeout),
                             workers=cfg.sql_workers)

    def client(self, request: Request) -> str:
        """The client's address: the TCP peer, or X-Forwarded-For's client when the peer is a trusted proxy."""
        return client_address(request.client.host if request.client else "",
                              request.headers.get("x-forwarded-for"), self.cfg.trusted_proxies)

    def store(self) -> ReviewStore:
        return ReviewStore(self.cfg.review_db)

    def snapshot(self) -> duckdb.DuckDBPyConnection | None:
        """A read-only connection to the published snapshot, or None before the first run."""
        return open_snapshot(self.cfg.snapshot_path)

    def render(self, request: Request, name: str, status_code: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.setdefault("user", getattr(request.state, "user", None))
        ctx.setdefault("csrf", getattr(request.state, "csrf", ""))
        ctx.setdefault("msg", request.query_params.get("msg", ""))
        ctx.setdefault("err", request.query_params.get("err", ""))
        return HTMLResponse(self.env.get_template(name).render(**ctx), status_code=status_code)

    def no_run(self, request: Request) -> HTMLResponse:
        return self.render(request, "no_snapshot.html", status_code=503, snapshot=self.cfg.snapshot_path)

    def check_origin(self, request: Request) -> None:
        """Refuse (403) a request whose ``Origin`` (or, without it, ``Referer``) is not the app's own."""
        origin = request.headers.get("origin")
        if origin is None:
            ref = request.headers.get("referer")
            if ref:
                p = urllib.parse.urlsplit(ref)
                origin = f"{p.scheme}://{p.netloc}"
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            raise Refused(403, "cross-site request refused (foreign Origin)")

    def require_user(self, request: Request) -> dict[str, Any]:
        """The request's session (user, role, csrf), or Refused(401)."""
        with self.store() as st:
            sess = st.session(request.cookies.get(COOKIE))
        if sess is None:
            raise Refused(401, "sign in first")
        request.state.user = sess
        request.state.csrf = sess["csrf"]
        return sess

    async def post_form(self, request: Request) -> tuple[dict[str, Any], dict[str, str]]:
        """Session, Origin and CSRF checks of a POST; returns (session, form)."""
        sess = self.require_user(request)
        self.check_origin(request)
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not same(form.get("csrf", ""), sess["csrf"]):
            raise Refused(403, "missing or wrong CSRF token")
        return sess, form


def web(request: Request) -> Web:
    """The ``Web`` of the app serving ``request``."""
    return request.app.state.web


def back(path: str, **params: str) -> RedirectResponse:
    """A 303 to ``path`` with the non-empty ``params`` as its query."""
    q = urllib.parse.urlencode({k: v for k, v in params.items() if v})
    return RedirectResponse(path + (f"?{q}" if q else ""), status_code=303)


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two tokens (bytes, so non-ASCII input cannot raise)."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
