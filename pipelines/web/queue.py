"""The case queue: /cases (one page, filtered on the server) and /cases.csv (every case the filters keep).

The queue's rows come from the review store (:meth:`ReviewStore.queue`); the
published snapshot adds, for the rows shown, what a case is worth in its own
unit and how many hands its accounts played together (:func:`case_facts`),
and the latest detector runs (:func:`failed_detectors`).
"""

from __future__ import annotations

import csv
import io
import urllib.parse
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from detectors.kinds import KINDS
from pipelines.lib.case_story import case_facts, order_by_stake, stake_table
from pipelines.lib.replay import dict_rows, table_names
from pipelines.lib.review import STATUSES
from pipelines.lib.safe_text import csv_row
from pipelines.web.core import web

router = APIRouter()

PAGE_SIZE = 50
CSV_MAX_ROWS = 100_000
FILTER_KEYS = ("kind", "status", "assignee", "score_min", "score_max", "fdr_max", "date_from", "date_to", "account",
               "ring", "date_field", "q")
STAKE_SORTS = ("money", "chips")
#: how the sort menu names a sort key (the others: the key itself)
SORT_LABELS = {"fdr": "estimated false-discovery rate", "last_seen": "last seen"}
SORTS = ("rank", "fdr", "score", "hands", "last_seen", "case", "status", "kind", *STAKE_SORTS)

def failed_detectors(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Kinds whose latest detector run failed: kind, error, when, and the run its cases still come from.

    Reads ``detector_runs`` (run_id, kind, status, error, finished_at,
    signals_run_id); an empty list when the snapshot has no such table.
    """
    if "detector_runs" not in table_names(con):
        return []
    rows = dict_rows(con, """
        SELECT kind, status, error, finished_at, signals_run_id FROM detector_runs
        QUALIFY row_number() OVER (PARTITION BY kind ORDER BY finished_at DESC) = 1""", [])
    return sorted((r for r in rows if r["status"] == "failed"), key=lambda r: str(r["kind"]))


def _filters(q: Any, problems: list[str]) -> dict[str, Any]:
    """The store's queue filters from the query string; what does not parse is said in ``problems``."""
    def percent(key: str) -> float | None:
        """A percentage as typed ("5", "5 %", "0.5%") as a fraction (0.05); what does not parse is a problem."""
        v = q.get(key, "").strip().rstrip("%").strip()
        if not v:
            return None
        try:
            x = float(v)
        except ValueError:
            problems.append(f"{key} is not a percentage")
            return None
        if not 0 <= x <= 100:
            problems.append(f"{key} is not between 0 and 100 %")
            return None
        return x / 100.0

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

    return {
        "kind": q.get("kind") if q.get("kind") in KINDS else None,
        "status": q.get("status") if q.get("status") in STATUSES else None,
        "assignee": q.get("assignee") or None,
        "score_min": num("score_min"), "score_max": num("score_max"), "q_max": percent("fdr_max"),
        "date_from": day("date_from"), "date_to": day("date_to"),
        "flagged": {"1": True, "0": False}.get(q.get("flagged", "1")),
        "account": q.get("account") or None,
        "ring": q.get("ring") or None,
        "date_field": "first_seen" if q.get("date_field") == "first_seen" else "last_seen",
        "search": q.get("q") or None,
    }


def _page(w: Any, st: Any, filters: dict[str, Any], sort: str, desc: bool, limit: int,
          offset: int) -> list[dict[str, Any]]:
    """``limit`` queue rows from ``offset``: sorted by the store, or for money and chips by the snapshot's
    amounts in that unit (:func:`order_by_stake`), the store then fetching that page's rows."""
    if sort not in STAKE_SORTS:
        return st.queue(**filters, sort=sort, desc=desc, limit=limit, offset=offset)
    ids = st.queue_ids(**filters)
    stakes = _stakes(w)
    ordered = order_by_stake(stakes, ids, sort, desc) if stakes is not None else sorted(ids)
    wanted = ordered[offset:offset + limit]
    rank = {cid: i for i, cid in enumerate(wanted)}
    rows = st.queue(**filters, only=wanted, limit=limit) if wanted else []
    return sorted(rows, key=lambda r: rank[r["case_id"]])


_STAKES: dict[tuple[str, int, int, int], pl.DataFrame] = {}  # the last snapshot's stake_table, by (path, inode, mtime, size)


def _stakes(w: Any) -> pl.DataFrame | None:
    """The published snapshot's :func:`stake_table`, read once per published snapshot (None before one)."""
    path = Path(w.cfg.snapshot_path)
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    key = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    if key not in _STAKES:
        con = w.snapshot()
        if con is None:
            return None
        try:
            table = stake_table(con)
        finally:
            con.close()
        _STAKES.clear()
        _STAKES[key] = table
    return _STAKES[key]


def _with_facts(w: Any, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows with their snapshot facts merged in, and the failed detectors (both empty without a snapshot)."""
    con = w.snapshot()
    if con is None:
        return rows, []
    try:
        facts = case_facts(con, [r["case_id"] for r in rows])
        failed = failed_detectors(con)
    finally:
        con.close()
    blank = {"money": None, "currency": "", "chips": None, "hands_together": None}
    return [r | facts.get(r["case_id"], blank) for r in rows], failed


@router.get("/")
def index(request: Request) -> Response:
    web(request).require_user(request)
    return RedirectResponse("/cases", status_code=303)


@router.get("/cases", response_class=HTMLResponse)
def queue(request: Request) -> HTMLResponse:
    w = web(request)
    w.require_user(request)
    q = request.query_params
    problems: list[str] = []
    filters = _filters(q, problems)
    sort = q.get("sort", "rank") if q.get("sort", "rank") in SORTS else "rank"
    desc = q.get("order", "desc") != "asc"
    try:
        page = max(int(q.get("page", "1")), 1)
    except ValueError:
        page = 1
        problems.append("page is not a number")
    with w.store() as st:
        total = st.queue_count(**filters)
        page = min(page, max((total + PAGE_SIZE - 1) // PAGE_SIZE, 1))
        rows = _page(w, st, filters, sort, desc, PAGE_SIZE, (page - 1) * PAGE_SIZE)
        assignees = [u["name"] for u in st.users()]
    rows, failed = _with_facts(w, rows)
    flagged_q = q.get("flagged", "1")
    shown = {k: q.get(k, "") for k in FILTER_KEYS}
    base_q = {**{k: v for k, v in shown.items() if v}, "flagged": flagged_q}

    def link(**extra: Any) -> str:
        return "/cases?" + urllib.parse.urlencode({**base_q, "sort": sort, "order": "desc" if desc else "asc", **extra})

    sort_links = {key: link(sort=key, order="asc" if (sort == key and desc) else "desc") for key in SORTS}
    last = max((total + PAGE_SIZE - 1) // PAGE_SIZE, 1)
    pages = {"first": link(page=1) if page > 1 else "", "prev": link(page=page - 1) if page > 1 else "",
             "next": link(page=page + 1) if page < last else "", "last": link(page=last) if page < last else "",
             "page": page, "of": last, "start": (page - 1) * PAGE_SIZE + 1 if rows else 0,
             "end": (page - 1) * PAGE_SIZE + len(rows), "total": total}
    csv_link = "/cases.csv?" + urllib.parse.urlencode({**base_q, "sort": sort, "order": "desc" if desc else "asc"})
    return w.render(request, "queue.html", rows=rows, q=shown, kinds=KINDS,
                    statuses=STATUSES, assignees=assignees, sort=sort, desc=desc, flagged_q=flagged_q,
                    problems=problems, sort_links=sort_links, SORT_LABELS=SORT_LABELS, pages=pages, csv_link=csv_link, failed=failed,
                    snap_exists=Path(w.cfg.snapshot_path).exists())


CSV_COLUMNS = ("case", "kind", "accounts", "estimated_false_discovery_rate", "score", "flagged", "money", "currency", "chips", "hands_together",
               "evidence_hands", "status", "assignee", "ring", "ring_cases", "first_seen_utc", "last_seen_utc")


@router.get("/cases.csv")
def queue_csv(request: Request) -> Response:
    """Every case the queue's filters keep (in its order, up to CSV_MAX_ROWS), formula cells escaped."""
    w = web(request)
    w.require_user(request)
    q = request.query_params
    filters = _filters(q, [])
    sort = q.get("sort", "rank") if q.get("sort", "rank") in SORTS else "rank"
    with w.store() as st:
        rows = _page(w, st, filters, sort, q.get("order", "desc") != "asc", CSV_MAX_ROWS, 0)
    rows, _ = _with_facts(w, rows)
    buf = io.StringIO()
    out = csv.writer(buf)
    out.writerow(CSV_COLUMNS)
    for r in rows:
        out.writerow(csv_row([r["case_id"], r["kind"], "; ".join(r["accounts"]), r.get("q_value"), r["score"], r["flagged"],
                              r["money"], r["currency"], r["chips"], r["hands_together"], r["n_hands"],
                              r["status"], r["assignee"] or "", r["ring"] if r["ring_cases"] > 1 else "",
                              r["ring_cases"] if r["ring_cases"] > 1 else "", r["first_seen_at"],
                              r["last_seen_at"]]))
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="railbird-cases.csv"'})
