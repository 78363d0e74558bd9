"""The case queue: /cases with its filters and sort links (and / that leads there)."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from detectors.kinds import KINDS
from pipelines.lib.review import STATUSES
from pipelines.web.core import web

router = APIRouter()


@router.get("/")
def index(request: Request) -> Response:
    web(request).require_user(request)
    return RedirectResponse("/cases", status_code=303)


@router.get("/cases", response_class=HTMLResponse)
def queue(request: Request) -> HTMLResponse:
    w = web(request)
    w.require_user(request)
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
    with w.store() as st:
        rows = st.queue(**filters, sort=sort, desc=desc)
        assignees = [u["name"] for u in st.users()]
    snap_exists = Path(w.cfg.snapshot_path).exists()
    shown = {k: q.get(k, "") for k in ("kind", "status", "assignee", "score_min", "score_max", "date_from",
                                        "date_to", "account", "ring", "date_field")}
    base_q = {**{k: v for k, v in shown.items() if v}, "flagged": flagged_q}
    sort_links = {key: "/cases?" + urllib.parse.urlencode(
        {**base_q, "sort": key, "order": "asc" if (sort == key and desc) else "desc"})
        for key in ("case", "kind", "score", "stake", "hands", "status", "last_seen")}
    return w.render(request, "queue.html", rows=rows, q=shown, kinds=KINDS, statuses=STATUSES,
                    assignees=assignees, sort=sort, desc=desc, flagged_q=flagged_q, problems=problems,
                    sort_links=sort_links,
                    snap_exists=snap_exists)
