"""One hand: /hands/{hand_id}, its replay and the cases it is evidence in."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pipelines.lib.replay import load_replays, table_names
from pipelines.lib.report_kinds import chat_evidence
from pipelines.lib.reports import case_signals
from pipelines.web.core import Refused, web

router = APIRouter()


@router.get("/hands/{hand_id}", response_class=HTMLResponse)
def hand_page(request: Request, hand_id: str) -> HTMLResponse:
    w = web(request)
    w.require_user(request)
    con = w.snapshot()
    if con is None:
        return w.no_run(request)
    try:
        tables = table_names(con)
        in_cases = con.execute(
            "SELECT c.case_id, c.kind, c.accounts FROM case_hands h JOIN cases c ON c.case_id = h.case_id "
            "WHERE h.hand_id = ? ORDER BY c.rank", [hand_id]).fetchall() if "case_hands" in tables else []
        accused = {a for _, _, accs in in_cases for a in accs}
        kind = in_cases[0][1] if in_cases else ""
        # the chat lines a hand-chat case flagged in this hand, marked in place as on the case's page
        _, chat_flags = chat_evidence([sig for cid, k, _ in in_cases if k == "hand_chat"
                                       for sig in case_signals(con, cid, tables)])
        replays = load_replays(con, [hand_id], kind=kind, accused=accused, tables=tables, chat_flags=chat_flags)
    finally:
        con.close()
    if not replays:
        raise Refused(404, f"no hand {hand_id} in the published snapshot")
    return w.render(request, "hand.html", h=replays[0] | {"new": False}, in_cases=in_cases)
