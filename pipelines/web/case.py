"""One case: its page, its report files, and the workflow's POST actions (status, assign, note, propose...)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from pipelines.lib.errors import RailbirdError
from pipelines.lib.reports import build_report, file_stem, render_html
from pipelines.lib.review import STATUSES, ReviewStore, allowed_actions
from pipelines.web.core import Refused, back, web

router = APIRouter()

PAGE_REPLAYS = 3  # replayed on the case page; every other evidence hand is a link to its replay


@router.get("/cases/{case_id}", response_class=HTMLResponse)
def case_page(request: Request, case_id: str) -> HTMLResponse:
    """The case read top-down: its sentence, the figures that carry it, contents, workflow, then the sections."""
    w = web(request)
    sess = w.require_user(request)
    with w.store() as st:
        review = st.case(case_id)
        notes = st.notes(case_id) if review else []
        audit = st.audit(case_id) if review else []
        users = st.users()
    con = w.snapshot()
    if con is None:
        if review is None:
            return w.no_run(request)
        report = None
    else:
        try:
            report = build_report(con, case_id, max_replays=PAGE_REPLAYS)
        finally:
            con.close()
    if review is None and report is None:
        raise Refused(404, f"no case {case_id}")
    actions = allowed_actions(sess["role"], review, sess["user"]) if review else frozenset()
    return w.render(request, "case.html", case_id=case_id, review=review, report=report, r=report, notes=notes,
                    audit=audit, users=users, statuses=[s for s in STATUSES if s != "confirmed"], actions=actions)


@router.get("/cases/{case_id}/report.{fmt}")
def case_report_file(request: Request, case_id: str, fmt: str) -> Response:
    """The case report as the standalone HTML page or its JSON, built from the published snapshot.

    Shown in the browser; with ``?download=1`` offered as a file."""
    w = web(request)
    w.require_user(request)
    if fmt not in ("html", "json"):
        raise Refused(404, "report.html or report.json")
    con = w.snapshot()
    if con is None:
        return w.no_run(request)
    try:
        report = build_report(con, case_id)
    finally:
        con.close()
    if report is None:
        raise Refused(404, f"no case {case_id} in the published snapshot")
    # opens in the browser (inline); ?download=1 saves it under the case's name
    disposition = "attachment" if request.query_params.get("download") else "inline"
    headers = {"Content-Disposition": f'{disposition}; filename="{file_stem(case_id)}.{fmt}"'}
    if fmt == "json":
        return Response(json.dumps(report, default=str, ensure_ascii=False), media_type="application/json",
                        headers=headers)
    return HTMLResponse(render_html(report), headers=headers)


Action = Callable[[ReviewStore, str, str, dict[str, str]], Any]


def _case_action(act: Action):  # type: ignore[no-untyped-def]
    """A POST handler that runs ``act(store, case_id, user, form)`` and returns to the case page."""
    async def handler(request: Request, case_id: str) -> Response:
        w = web(request)
        sess, form = await w.post_form(request)
        page = f"/cases/{urllib.parse.quote(case_id, safe='')}"
        try:
            with w.store() as st:
                act(st, case_id, sess["user"], form)
        except RailbirdError as exc:
            return back(page, err=str(exc))
        return back(page, msg="saved")
    return handler


ACTIONS: dict[str, Action] = {
    "status": lambda st, cid, user, f: st.set_status(cid, f.get("status", ""), user, f.get("note") or None),
    "assign": lambda st, cid, user, f: st.assign(cid, f.get("assignee") or None, user),
    "note": lambda st, cid, user, f: st.add_note(cid, user, f.get("body", "")),
    "propose": lambda st, cid, user, f: st.propose_confirmation(cid, user, f.get("note") or None),
    "approve": lambda st, cid, user, f: st.approve_confirmation(cid, user, f.get("note") or None),
    "reject": lambda st, cid, user, f: st.reject_confirmation(cid, user, f.get("note") or None),
}
for _name, _act in ACTIONS.items():
    router.post(f"/cases/{{case_id}}/{_name}")(_case_action(_act))
