"""The read-only SQL page: /sql over the published snapshot (the walls are ``pipelines.lib.readonly_sql``)."""

from __future__ import annotations

from pathlib import Path

import duckdb
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from pipelines.lib.readonly_sql import SqlBusy, SqlDoesNotParse, SqlRefused
from pipelines.web.core import web

router = APIRouter()


@router.get("/sql", response_class=HTMLResponse)
def sql_page(request: Request) -> HTMLResponse:
    w = web(request)
    w.require_user(request)
    if not Path(w.cfg.snapshot_path).exists():
        return w.no_run(request)
    return w.render(request, "sql.html", query="SELECT kind, count(*) FROM cases GROUP BY kind", result=None,
                    error="", limit=w.cfg.sql_row_limit, timeout=w.cfg.sql_timeout)


@router.post("/sql", response_class=HTMLResponse)
async def sql_run(request: Request) -> HTMLResponse:
    w = web(request)
    _, form = await w.post_form(request)
    query = form.get("query", "")
    result, error, status = None, "", 200
    try:
        result = await w.sql.run(query)  # on a worker thread: the event loop keeps serving everyone else
    except SqlBusy as exc:
        error, status = str(exc), 429
    except SqlDoesNotParse as exc:
        error, status = str(exc), 400
    except SqlRefused as exc:
        error, status = f"refused: {exc}", 400
    except duckdb.Error as exc:
        error, status = f"{type(exc).__name__}: {exc}", 400
    return w.render(request, "sql.html", status_code=status, query=query, result=result, error=error,
                    limit=w.cfg.sql_row_limit, timeout=w.cfg.sql_timeout)
