"""Sign-in and sign-out: /login (double-submit CSRF cookie, throttled failures) and /logout."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from pipelines.web.core import COOKIE, LOGIN_COOKIE, Refused, same, web

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/cases") -> HTMLResponse:
    w = web(request)
    token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(32)
    resp = w.render(request, "login.html", csrf=token, next=next, user=None)
    resp.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=w.cfg.secure_cookie, max_age=3600)
    return resp


@router.post("/login")
async def login(request: Request) -> Response:
    w = web(request)
    w.check_origin(request)
    form = {k: str(v) for k, v in (await request.form()).items()}
    cookie = request.cookies.get(LOGIN_COOKIE, "")
    if not cookie or not same(form.get("csrf", ""), cookie):
        raise Refused(403, "missing or wrong CSRF token")
    name, password = form.get("username", ""), form.get("password", "")
    attempt = w.throttle.begin(name, w.client(request))  # reserved before the check: parallel guesses count too
    if attempt is None:
        raise Refused(429, "too many failed sign-ins: wait a few minutes")
    nxt = form.get("next", "/cases")
    if not nxt.startswith("/") or nxt.startswith("//") or "\\" in nxt:
        nxt = "/cases"
    with w.store() as st:
        if not await run_in_threadpool(st.verify_password, name, password):  # scrypt off the event loop
            return w.render(request, "login.html", status_code=401, csrf=cookie, next=nxt, user=None,
                            err="wrong user name or password")
        token, _ = st.create_session(name, ttl=w.cfg.session_ttl)
    w.throttle.succeeded(attempt)
    resp = RedirectResponse(nxt, status_code=303)
    resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=w.cfg.secure_cookie,
                    max_age=int(w.cfg.session_ttl), path="/")
    resp.delete_cookie(LOGIN_COOKIE)
    return resp


@router.post("/logout")
async def logout(request: Request) -> Response:
    w = web(request)
    await w.post_form(request)
    with w.store() as st:
        st.end_session(request.cookies.get(COOKIE))
    resp = RedirectResponse("/login", status_code=303)
    resp.delete_cookie(COOKIE, path="/")
    return resp
