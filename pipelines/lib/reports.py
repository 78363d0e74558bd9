"""Case reports: one self-contained HTML page and its JSON per case.

:func:`build_report` gathers, from a warehouse connection (the live warehouse
in a run, the published snapshot in the web app), everything an
investigator needs to judge one case:

- the accusation in one paragraph (kind, accounts, score, hands, money);
- the accounts (``accounts`` table: created, country, payment hash);
- each signal with its Evidence figures (value against the players' own
  baseline, n, p), the benign explanation considered, the tests not made;
- the evidence hands as replays (:mod:`pipelines.lib.replay`);
- a graph (SVG drawn here: accounts on a circle, edges for the value flow and
  the shared identifiers): chip flow between the accused in the evidence
  hands (each loser's loss shared among the hand's winners pro rata),
  cashier transfers, shared devices / IPs / payment hashes, and any edges a
  detector put in ``Signal.extra["edges"]``;
- a timeline (SVG): the accused accounts' sessions (coloured per device),
  sit-outs / sit-ins, and the evidence hands, over the evidence's time span;
- the SQL that reproduces each figure (Evidence.sql, graph, timeline and
  replay queries);
- for hand chat, the chat lines in their hands; for heads-up flipping, the
  flips in a timeline of the pair's matches (:mod:`pipelines.lib.report_kinds`).

:func:`render_html` renders it with Jinja2 (autoescape on, the JSON embedded
with ``<``, ``>``, ``&`` escaped), inline CSS and SVG, no external request.
"""

from __future__ import annotations

import functools
import json
import math
import os
import urllib.parse
from pathlib import Path
from typing import Any, Iterable

import duckdb
import jinja2
import networkx as nx

from detectors.base import sql_literal
from detectors.kinds import KINDS, by_name
from pipelines.lib.case_story import case_facts, fdr_sentence, fdr_text, figure_chart, lead_figures, plain_sentence
from pipelines.lib.replay import dict_rows, load_replays, table_names
from pipelines.lib.report_kinds import chat_evidence, flip_timeline

TEMPLATES = Path(__file__).resolve().parent.parent / "web" / "templates"
DEVICE_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#9c755f", "#76b7b2", "#edc948", "#ff9da7")


def json_for_html(data: Any) -> str:
    """JSON safe inside an HTML ``<script type="application/json">``: no ``<``, ``>``, ``&``, ``'`` or line separators."""
    text = json.dumps(data, default=str, ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def _fmt_num(x: Any, digits: int = 3) -> str:
    if x is None or x == "":
        return "–"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "–"
    if v == int(v) and abs(v) < 1e12:
        return f"{int(v):,}"
    if abs(v) < 1e-3:
        return f"{v:.2e}"
    return f"{v:,.{digits}g}" if abs(v) < 1 else f"{v:,.{max(digits - 1, 2)}f}"


def _fmt_utc(x: Any) -> str:
    """A UTC time (a naive ``datetime`` or an ISO string, as the warehouse and the review store keep them)
    as ``YYYY-MM-DD HH:MM UTC``; an empty or unreadable value as it is."""
    import datetime as dt

    if isinstance(x, str):
        try:
            x = dt.datetime.fromisoformat(x.replace("Z", "+00:00"))
        except ValueError:
            return x
    if isinstance(x, dt.datetime):
        if x.tzinfo is not None:
            x = x.astimezone(dt.timezone.utc)
        return x.strftime("%Y-%m-%d %H:%M UTC")
    return "–" if x is None else str(x)


@functools.lru_cache(maxsize=2)
def jinja_env(web: bool = False) -> jinja2.Environment:
    """The Jinja environment of the reports (``web=False``) or the web app (links on): autoescape everywhere.

    Cached, so each template is compiled once per process.
    """
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _fmt_num
    env.filters["fdr"] = fdr_text
    env.filters["json_html"] = json_for_html
    env.filters["utc"] = _fmt_utc
    env.filters["kind_title"] = lambda k: by_name(k).title if k in KINDS else str(k)
    env.filters["seg"] = lambda v: urllib.parse.quote(str(v), safe="")
    env.globals["web"] = web
    return env


def case_row(con: duckdb.DuckDBPyConnection, case_id: str, tables: set[str] | None = None) -> dict[str, Any] | None:
    if "cases" not in (tables if tables is not None else table_names(con)):
        return None
    rows = dict_rows(con, "SELECT * FROM cases WHERE case_id = ?", [case_id])
    return rows[0] if rows else None


def case_signals(con: duckdb.DuckDBPyConnection, case_id: str,
                 tables: set[str] | None = None) -> list[dict[str, Any]]:
    if "case_signals" not in (tables if tables is not None else table_names(con)):
        return []
    out = []
    for r in dict_rows(con, "SELECT idx, CAST(payload AS VARCHAR) AS payload FROM case_signals WHERE case_id = ? "
                         "ORDER BY idx", [case_id]):
        try:
            p = json.loads(r["payload"])
        except ValueError:
            p = {}
        out.append(p if isinstance(p, dict) else {})
    return out


# ------------------------------------------------------------------------ graph

def _signal_edges(signals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Edges a detector gave in Signal.extra['edges'] (dicts with src/dst or from/to, or [a, b, w] lists)."""
    out = []
    for s in signals:
        edges = (s.get("extra") or {}).get("edges") or []
        if not isinstance(edges, list):
            continue
        for e in edges[:200]:
            if isinstance(e, dict):
                a = e.get("src", e.get("from", e.get("source", e.get("a"))))
                b = e.get("dst", e.get("to", e.get("target", e.get("b"))))
                w = e.get("amount", e.get("weight", e.get("value")))
                sigs = e.get("signals")
                label = e.get("label") or e.get("via") or (", ".join(map(str, sigs)) if isinstance(sigs, list) else "") \
                    or e.get("kind") or ""
            elif isinstance(e, (list, tuple)) and len(e) >= 2:
                a, b = e[0], e[1]
                w = e[2] if len(e) > 2 else None
                label = "flagged flow" if s.get("kind") == "chip_dumping" else f"flagged {s.get('kind', '')} pair"
            else:
                continue
            if a is None or b is None:
                continue
            try:
                w = float(w) if w is not None else None
            except (TypeError, ValueError):
                w = None
            directed = ("src" in e or "from" in e) if isinstance(e, dict) else s.get("kind") == "chip_dumping"
            out.append({"src": str(a), "dst": str(b), "amount": w, "kind": "signal", "label": str(label),
                        "directed": directed})
    return out


def graph_edges(con: duckdb.DuckDBPyConnection, accounts: list[str], hands: list[str],
                signals: list[dict[str, Any]], tables: set[str] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """All edges between the accused (see module doc) and the SQL that reproduces them."""
    tables = tables if tables is not None else table_names(con)
    edges: list[dict[str, Any]] = []
    sqls: list[str] = []
    acc_lit = "[" + ", ".join(sql_literal(a) for a in accounts) + "]"
    hand_lit = "[" + ", ".join(sql_literal(h) for h in hands) + "]"
    flow_sql = """
        WITH s AS (SELECT hand_id, player, net FROM seats WHERE hand_id IN (SELECT unnest({h}::VARCHAR[]))),
        w AS (SELECT hand_id, sum(net) AS won FROM s WHERE net > 0 GROUP BY hand_id)
        SELECT l.player AS src, g.player AS dst,
               CASE WHEN hh.is_tournament THEN 'chips' ELSE hh.currency END AS unit,
               sum(-l.net * g.net / w.won)::DOUBLE AS amount, count(DISTINCT l.hand_id) AS n
        FROM s l JOIN s g ON g.hand_id = l.hand_id AND g.net > 0 AND l.net < 0
        JOIN w ON w.hand_id = l.hand_id JOIN hands hh ON hh.hand_id = l.hand_id
        WHERE l.player IN (SELECT unnest({a}::VARCHAR[])) AND g.player IN (SELECT unnest({a}::VARCHAR[]))
        GROUP BY 1, 2, 3 ORDER BY 4 DESC"""
    if hands and {"seats", "hands"} <= tables:
        for r in dict_rows(con, flow_sql.format(h="?", a="?"), [hands, accounts, accounts]):
            edges.append({"src": r["src"], "dst": r["dst"], "amount": r["amount"], "kind": "chips",
                          "label": f"{_fmt_num(r['amount'])} {r['unit'] or ''} in {r['n']} hands".replace("  ", " "),
                          "directed": True})
        sqls.append("-- money and chips moved between the accused in the evidence hands (per unit)\n"
                    + flow_sql.format(h=hand_lit, a=acc_lit).strip())
    if "transfers" in tables:
        tr_sql = ("SELECT account AS src, to_account AS dst, sum(amount)::DOUBLE AS amount, count(*) AS n, "
                  "any_value(currency) AS currency FROM transfers WHERE account IN (SELECT unnest({a}::VARCHAR[])) "
                  "AND to_account IN (SELECT unnest({a}::VARCHAR[])) GROUP BY 1, 2")
        for r in dict_rows(con, tr_sql.format(a="?"), [accounts, accounts]):
            edges.append({"src": r["src"], "dst": r["dst"], "amount": r["amount"], "kind": "transfer",
                          "label": f"{r['n']} transfers, {_fmt_num(r['amount'])} {r['currency'] or ''}".strip(),
                          "directed": True})
        sqls.append("-- cashier transfers between the accused\n" + tr_sql.format(a=acc_lit))
    if "sessions" in tables:
        for col in ("device", "ip"):
            id_sql = (f"SELECT a.account AS src, b.account AS dst, a.{col} AS value, count(*) AS n FROM sessions a "
                      f"JOIN sessions b ON b.{col} = a.{col} AND a.account < b.account "
                      "WHERE a.account IN (SELECT unnest({a}::VARCHAR[])) AND b.account IN (SELECT unnest({a}::VARCHAR[])) "
                      "GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 50")
            for r in dict_rows(con, id_sql.format(a="?"), [accounts, accounts]):
                edges.append({"src": r["src"], "dst": r["dst"], "amount": None, "kind": "identity",
                              "label": f"same {col} {r['value']}", "directed": False})
            sqls.append(f"-- shared {col}s between the accused\n" + id_sql.format(a=acc_lit))
    if "accounts" in tables:
        pay_sql = ("SELECT a.account AS src, b.account AS dst, a.payment AS value FROM accounts a "
                   "JOIN accounts b ON b.payment = a.payment AND a.account < b.account "
                   "WHERE a.account IN (SELECT unnest({a}::VARCHAR[])) AND b.account IN (SELECT unnest({a}::VARCHAR[]))")
        for r in dict_rows(con, pay_sql.format(a="?"), [accounts, accounts]):
            edges.append({"src": r["src"], "dst": r["dst"], "amount": None, "kind": "identity",
                          "label": f"same payment {r['value']}", "directed": False})
        sqls.append("-- shared payment instruments between the accused\n" + pay_sql.format(a=acc_lit))
    if len(accounts) == 1 and "sessions" in tables:
        # one account (a seat hand-off): its identity graph, the devices and IPs it used
        own_sql = ("SELECT account, device, ip, count(*) AS n, min(login_at) AS first FROM sessions "
                   "WHERE account = {a} GROUP BY 1, 2, 3 ORDER BY first LIMIT 12")
        for r in dict_rows(con, own_sql.format(a="?"), [accounts[0]]):
            for col in ("device", "ip"):
                if r[col]:
                    edges.append({"src": r["account"], "dst": f"{col} {r[col]}", "amount": None, "kind": "identity",
                                  "label": f"{r['n']}× from {r['first']:%H:%M}", "directed": False})
        sqls.append("-- devices and IPs of the account\n" + own_sql.format(a=sql_literal(accounts[0])))
    edges.extend(_signal_edges(signals))
    seen, unique = set(), []
    for e in edges:
        key = (e["src"], e["dst"], e["kind"], e["label"])
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return unique, sqls


def layout_graph(accounts: list[str], edges: list[dict[str, Any]], size: int = 480,
                 order: list[str] | None = None) -> dict[str, Any]:
    """Accounts on a circle (``order``, else accused first), edges as lines whose width grows with the amount."""
    names = list(dict.fromkeys([*(order or []), *accounts, *(e["src"] for e in edges), *(e["dst"] for e in edges)]))[:24]
    n = len(names)
    c, r = size / 2, size / 2 - 90
    pos = {}
    for i, name in enumerate(names):
        ang = -math.pi / 2 + 2 * math.pi * i / max(n, 1)
        pos[name] = (round(c + (r if n > 1 else 0) * math.cos(ang), 1), round(c + (r if n > 1 else 0) * math.sin(ang), 1))
    amounts = [abs(e["amount"]) for e in edges if e.get("amount")]
    top = max(amounts) if amounts else 1.0
    drawn = []
    pair_seen: dict[tuple[str, str], int] = {}
    for e in edges:
        if e["src"] not in pos or e["dst"] not in pos or e["src"] == e["dst"]:
            continue
        key = tuple(sorted((e["src"], e["dst"])))
        k = pair_seen[key] = pair_seen.get(key, -1) + 1
        (x1, y1), (x2, y2) = pos[e["src"]], pos[e["dst"]]
        dx, dy = x2 - x1, y2 - y1
        d = math.hypot(dx, dy) or 1.0
        off = 10 * k  # parallel edges side by side, their labels staggered along the line
        t = (0.62, 0.42, 0.78, 0.3, 0.88)[k % 5]
        ox, oy = -dy / d * off, dx / d * off
        shrink = 26 / d
        drawn.append({
            **e,
            "x1": round(x1 + dx * shrink + ox, 1), "y1": round(y1 + dy * shrink + oy, 1),
            "x2": round(x2 - dx * shrink + ox, 1), "y2": round(y2 - dy * shrink + oy, 1),
            "lx": round(x1 + t * dx + ox * 1.5, 1), "ly": round(y1 + t * dy + oy * 1.5, 1),
            "width": round(1.5 + 5 * (abs(e["amount"]) / top if e.get("amount") else 0), 1),
        })
    for i, e in enumerate(drawn, 1):
        e["no"] = i  # the picture shows the number, the table under it the label: labels cannot collide
    nodes = []
    for nm in names:
        x, y = pos[nm]
        dx, dy = x - c, y - c
        d = math.hypot(dx, dy)
        ux, uy = (dx / d, dy / d) if d else (0.0, 1.0)
        # the name outside the circle, away from the centre, anchored on the side it sits
        nodes.append({"name": nm, "x": x, "y": y, "accused": nm in accounts,
                      "tx": round(x + ux * 30, 1), "ty": round(y + uy * 30 + 4, 1),
                      "anchor": "middle" if abs(ux) < 0.3 else ("start" if ux > 0 else "end")})
    return {"size": size, "nodes": nodes, "edges": drawn}


def ring_picture(con: duckdb.DuckDBPyConnection, case: dict[str, Any]) -> dict[str, Any] | None:
    """The whole ring a case belongs to as one graph: accounts as nodes, each flagged case of the ring as edges.

    A case over two accounts is one edge; over more, edges join every pair
    (up to five accounts) or go round the group. Returns None for a ring of
    one case.
    """
    if not case.get("ring"):
        return None
    rows = dict_rows(con, "SELECT case_id, kind, accounts, score FROM cases WHERE ring = ? AND flagged ORDER BY rank",
                  [case["ring"]])
    if len(rows) < 2:
        return None
    edges = []
    for r in rows[:60]:
        accs = [str(a) for a in r["accounts"]]
        if len(accs) <= 5:
            pairs = [(a, b) for i, a in enumerate(accs) for b in accs[i + 1:]]
        else:
            pairs = list(zip(accs, accs[1:] + accs[:1]))
        for a, b in pairs:
            edges.append({"src": a, "dst": b, "amount": None, "kind": "case", "directed": False,
                          "label": f"{r['case_id']} {r['kind']}", "case": r["case_id"]})
    g = nx.Graph()
    g.add_edges_from((e["src"], e["dst"]) for e in edges)
    start = case["accounts"][0] if case["accounts"][0] in g else next(iter(g))
    order = list(nx.dfs_preorder_nodes(g, start))  # neighbours side by side on the circle
    labelled: set[str] = set()
    for e in edges:  # one label per case
        if e["case"] in labelled:
            e["label"] = ""
        labelled.add(e["case"])
    pic = layout_graph([a for a in order if a in set(case["accounts"])], edges, size=520, order=order)
    pic["cases"] = [{"case_id": r["case_id"], "kind": r["kind"], "accounts": [str(a) for a in r["accounts"]],
                     "score": r["score"]} for r in rows]
    pic["sql"] = (f"SELECT case_id, kind, accounts, score FROM cases WHERE ring = {sql_literal(case['ring'])} "
                  "AND flagged ORDER BY rank;")
    return pic


# --------------------------------------------------------------------- timeline

def timeline(con: duckdb.DuckDBPyConnection, accounts: list[str], hands: list[str],
             width: int = 900, tables: set[str] | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    """Sessions (by device), sit-outs / sit-ins and evidence hands of the accused over the evidence span."""
    tables = tables if tables is not None else table_names(con)
    if "hands" not in tables or not hands:
        return None, []
    span = con.execute("SELECT min(started_at), max(started_at) FROM hands WHERE hand_id IN (SELECT unnest(?::VARCHAR[]))",
                       [hands]).fetchone()
    if span[0] is None:
        return None, []
    import datetime as dt

    t0, t1 = span[0] - dt.timedelta(minutes=30), span[1] + dt.timedelta(minutes=30)
    total = (t1 - t0).total_seconds() or 1.0
    left, right = 150, 20
    scale = (width - left - right) / total

    def x(t: Any) -> float:
        t = min(max(t, t0), t1)
        return round(left + (t - t0).total_seconds() * scale, 1)

    acc_lit = "[" + ", ".join(sql_literal(a) for a in accounts) + "]"
    sqls = []
    rows = []
    devices: dict[str, str] = {}
    sess = []
    if "sessions" in tables:
        q = ("SELECT account, session, device, ip, login_at, logout_at FROM sessions "
             "WHERE account IN (SELECT unnest({a}::VARCHAR[])) AND login_at <= {t1} AND coalesce(logout_at, {t1}) >= {t0} "
             "ORDER BY account, login_at")
        sess = dict_rows(con, q.format(a="?", t0="?", t1="?"), [accounts, t1, t1, t0])
        sqls.append("-- sessions of the accused over the evidence span\n"
                    + q.format(a=acc_lit, t0=f"TIMESTAMP '{t0}'", t1=f"TIMESTAMP '{t1}'"))
    sits = []
    if "sit_events" in tables:
        q = ("SELECT account, ts, kind, table_name, tournament_id FROM sit_events "
             "WHERE account IN (SELECT unnest({a}::VARCHAR[])) AND ts BETWEEN {t0} AND {t1} ORDER BY ts")
        sits = dict_rows(con, q.format(a="?", t0="?", t1="?"), [accounts, t0, t1])
        sqls.append("-- sit-outs and sit-ins of the accused\n"
                    + q.format(a=acc_lit, t0=f"TIMESTAMP '{t0}'", t1=f"TIMESTAMP '{t1}'"))
    if "table_events" in tables:
        # what the hand histories themselves say: sitting out, time-outs, disconnections, returns
        q = ("SELECT e.player AS account, h.started_at AS ts, e.event AS kind, h.table_name, h.tournament_id "
             "FROM table_events e JOIN hands h ON h.hand_id = e.hand_id "
             "WHERE e.player IN (SELECT unnest({a}::VARCHAR[])) AND h.started_at BETWEEN {t0} AND {t1} "
             "AND e.event IN ('sitting_out', 'timed_out', 'timed_out_disconnected', 'disconnected', 'connected', "
             "'returned') ORDER BY h.started_at LIMIT 2000")
        sits += dict_rows(con, q.format(a="?", t0="?", t1="?"), [accounts, t0, t1])
        sqls.append("-- sitting out, time-outs and disconnections in the hand histories\n"
                    + q.format(a=acc_lit, t0=f"TIMESTAMP '{t0}'", t1=f"TIMESTAMP '{t1}'"))
    hq = ("SELECT h.hand_id, h.started_at, list(s.player ORDER BY s.seat) AS players FROM hands h "
          "JOIN seats s ON s.hand_id = h.hand_id AND s.player IN (SELECT unnest({a}::VARCHAR[])) "
          "WHERE h.hand_id IN (SELECT unnest({h}::VARCHAR[])) GROUP BY 1, 2 ORDER BY 2")
    hrows = dict_rows(con, hq.format(a="?", h="?"), [accounts, hands]) if "seats" in tables else []
    sqls.append("-- the evidence hands in time\n"
                + hq.format(a=acc_lit, h="[" + ", ".join(sql_literal(h) for h in hands) + "]"))
    for i, a in enumerate(accounts[:16]):
        y = 30 + i * 34
        bars = []
        for s in (r for r in sess if r["account"] == a):
            dev = s["device"] or "?"
            colour = devices.setdefault(dev, DEVICE_COLOURS[len(devices) % len(DEVICE_COLOURS)])
            x1, x2 = x(s["login_at"]), x(s["logout_at"] or t1)
            bars.append({"x": x1, "w": max(x2 - x1, 2), "colour": colour,
                         "title": f"session {s['session']} device {dev} ip {s['ip'] or '?'} "
                                  f"{s['login_at']} – {s['logout_at'] or 'no logout seen'}"})
        ticks = [{"x": x(e["ts"]), "kind": e["kind"], "title": f"{e['kind']} {e['ts']} "
                  f"{e['table_name'] or ''} {e['tournament_id'] or ''}".strip()} for e in sits if e["account"] == a]
        dots = [{"x": x(h["started_at"]), "title": f"hand {h['hand_id']} {h['started_at']}"}
                for h in hrows if a in h["players"]]
        rows.append({"label": a, "y": y, "bars": bars, "ticks": ticks, "dots": dots})
    axis = [{"x": round(left + k * (width - left - right) / 4, 1),
             "label": (t0 + dt.timedelta(seconds=total * k / 4)).strftime("%Y-%m-%d %H:%M")} for k in range(5)]
    height = 30 + len(rows) * 34 + 30
    return {"width": width, "height": height, "rows": rows, "axis": axis, "left": left,
            "devices": [{"device": d, "colour": c} for d, c in devices.items()],
            "from": str(t0), "to": str(t1), "sessions": [{k: str(v) if v is not None else "" for k, v in s.items()} for s in sess],
            "sits": [{k: str(v) if v is not None else "" for k, v in s.items()} for s in sits]}, sqls


# ----------------------------------------------------------------------- report

def accusation(case: dict[str, Any], n_signals: int) -> str:
    """The accusation in one paragraph (plain text; templates escape it)."""
    accounts = list(case["accounts"])
    who = accounts[0] if len(accounts) == 1 else ", ".join(accounts[:-1]) + " and " + accounts[-1]
    what = by_name(case["kind"]).description if case["kind"] in KINDS else case["kind"]
    p = case.get("p_value")
    hands = list(case.get("hands") or [])
    summary = str(case["summary"]).strip()
    if summary and summary[-1] not in ".!?":
        summary += "."
    text = (f"{who} {'is' if len(accounts) == 1 else 'are'} suspected of {what}. {summary} "
            f"The case rests on {n_signals} signal{'s' if n_signals != 1 else ''} "
            f"(strongest score {_fmt_num(case['score'])}"
            + (f", p = {_fmt_num(p)}" if p is not None else "")
            + (f", estimated false-discovery rate {fdr_text(case.get('q_value'))}" if case.get("q_value") is not None else "")
            + f") and {len(hands)} evidence hand"
            + ("s" if len(hands) != 1 else ""))
    if case.get("tournaments"):
        text += f" in tournament{'s' if len(case['tournaments']) > 1 else ''} {', '.join(case['tournaments'][:5])}"
    moved, transfers = float(case.get("moved") or 0), float(case.get("transfers") or 0)
    if moved or transfers:
        text += f"; {_fmt_num(moved + transfers)} moved between them ({_fmt_num(moved)} at the tables, " \
                f"{_fmt_num(transfers)} by cashier transfer)"
    if case.get("pot_total"):
        text += f"; {_fmt_num(case['pot_total'])} in play in the evidence hands"
    return text + "."


def _signal_out(s: dict[str, Any]) -> dict[str, Any]:
    """One signal's payload as the report shows it: its fields, Evidence rows and ``extra`` as indented JSON."""
    ev = [{k: e.get(k) for k in ("name", "value", "baseline", "n", "p_value", "text", "sql")}
          for e in s.get("evidence") or [] if isinstance(e, dict)]
    return {
        "kind": s.get("kind", ""), "detector": s.get("detector", ""), "accounts": [str(a) for a in s.get("accounts") or []],
        "tournaments": [str(t) for t in s.get("tournaments") or []], "score": s.get("score"),
        "p_value": s.get("p_value"), "q_value": s.get("q_value"), "flagged": bool(s.get("flagged")),
        "summary": s.get("summary", ""),
        "benign": s.get("benign", ""), "missing": [str(m) for m in s.get("missing") or []], "evidence": ev,
        "n_hands": len(s.get("hands") or []),
        "extra": json.dumps(s.get("extra") or {}, default=str, ensure_ascii=False, indent=1)[:20000],
    }


def _account_rows(con: duckdb.DuckDBPyConnection, accounts: list[str], tables: set[str]) -> list[dict[str, Any]]:
    """Each case account's row: created, country, payment (from ``accounts``), hands and net (from ``seats``)."""
    acc_info = {}
    if "accounts" in tables:
        for r in dict_rows(con, "SELECT account, created_at, country, payment FROM accounts "
                             "WHERE account IN (SELECT unnest(?::VARCHAR[]))", [accounts]):
            acc_info[r["account"]] = {k: (str(v) if v is not None else "") for k, v in r.items()}
    played = {}
    if "seats" in tables:
        for r in dict_rows(con, "SELECT player, count(*) AS hands, sum(net)::DOUBLE AS net FROM seats "
                             "WHERE player IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1", [accounts]):
            played[r["player"]] = r
    return [{"account": a, **acc_info.get(a, {"created_at": "", "country": "", "payment": ""}),
             "hands": int(played.get(a, {}).get("hands") or 0), "net": played.get(a, {}).get("net")}
            for a in accounts]


def build_report(con: duckdb.DuckDBPyConnection, case_id: str, *, max_replays: int = 10) -> dict[str, Any] | None:
    """Everything the report shows about one case (a JSON-able dict), or None if the case is unknown.

    ``story`` is the plain sentence, ``figures`` / ``chart`` the figures that
    carry it and ``facts`` the money, chips and hands played together
    (:mod:`pipelines.lib.case_story`); ``max_replays`` evidence hands are
    replayed, the rest listed in ``more_hands``.
    """
    tables = table_names(con)  # once per report: each information_schema query costs as much as a small scan
    case = case_row(con, case_id, tables)
    if case is None:
        return None
    for k in ("accounts", "tournaments", "hands", "new_hands", "related"):
        case[k] = [str(x) for x in (case.get(k) or [])]
    for k in ("pot_total", "moved", "transfers", "stake"):
        case[k] = float(case[k]) if case.get(k) is not None else 0.0
    case.update(created_at=str(case.get("created_at")), q_value=case.get("q_value"))  # q: none in an older snapshot
    signals = case_signals(con, case_id, tables)
    accounts = case["accounts"]
    acc_rows = _account_rows(con, accounts, tables)
    marks: dict[str, dict[int, str]] = {}
    for s in signals:
        for d in (s.get("extra") or {}).get("decisions") or []:
            if isinstance(d, dict) and d.get("hand") is not None and d.get("seq") is not None:
                try:
                    marks.setdefault(str(d["hand"]), {})[int(d["seq"])] = str(d.get("why") or "marked by the detector")
                except (TypeError, ValueError):
                    continue
    chat_rows, chat_flags = chat_evidence(signals)
    replays = load_replays(con, case["hands"][:max_replays], kind=case["kind"], accused=accounts, marks=marks,
                           tables=tables, chat_flags=chat_flags)
    new = set(case["new_hands"])
    change_points = {str((s.get("extra") or {}).get("change_point_hand")) for s in signals
                     if (s.get("extra") or {}).get("change_point_hand") is not None}
    for r in replays:
        r["new"] = r["hand_id"] in new
        if r["hand_id"] in change_points:  # seat hand-off: the first hand the other person played
            first = next((a for st in r["streets"] for a in st["actions"]
                          if a["accused"] and not a["action"].startswith("post")), None)
            if first is not None and not first["marked"]:
                first["marked"] = True
                first["why"] = "first decision after the change point: the detector's first hand by the other person"
    edges, graph_sql = graph_edges(con, accounts, case["hands"], signals, tables)
    tl, tl_sql = timeline(con, accounts, case["hands"], tables=tables)
    facts = case_facts(con, [case_id]).get(case_id)
    figures = lead_figures(signals)
    return {
        "case": case,
        "story": plain_sentence(case, signals, facts), "fdr": fdr_sentence(case["q_value"], case["kind"]),
        "facts": facts,
        "figures": figures,
        "chart": figure_chart(figures),
        "kind": {"title": by_name(case["kind"]).title, "description": by_name(case["kind"]).description}
        if case["kind"] in KINDS else {"title": case["kind"], "description": ""},
        "accusation": accusation(case, len(signals)),
        "accounts": acc_rows,
        "signals": [_signal_out(s) for s in signals],
        "replays": replays,
        "more_hands": case["hands"][max_replays:],
        "graph": layout_graph(accounts, edges),
        "ring": ring_picture(con, case),
        "graph_edges": [{k: e[k] for k in ("src", "dst", "amount", "kind", "label")} for e in edges],
        "timeline": tl,
        "chat": chat_rows,
        "flips": flip_timeline(con, accounts, tables) if case["kind"] == "heads_up_flipping" else None,
        "sql": {"case": f"SELECT * FROM cases WHERE case_id = {sql_literal(case_id)};\n"
                        f"SELECT idx, detector, score, p_value, q_value, payload FROM case_signals WHERE case_id = "
                        f"{sql_literal(case_id)} ORDER BY idx;",
                "graph": graph_sql, "timeline": tl_sql},
    }


def file_stem(case_id: str) -> str:
    """The case id cut to letters, digits, '-' and '_': safe as a file name and inside a Content-Disposition header."""
    return "".join(ch for ch in case_id if ch.isalnum() or ch in "-_")


def render_html(report: dict[str, Any]) -> str:
    """The standalone report page: inline CSS and SVG, no external request, everything escaped."""
    return jinja_env().get_template("report_standalone.html").render(r=report)


def write_reports(con: duckdb.DuckDBPyConnection, case_ids: Iterable[str], out_dir: str | os.PathLike[str],
                  *, max_replays: int = 10) -> int:
    """Write OUT/reports/<case>.html and .json for each case id (atomic per file); returns how many."""
    folder = Path(out_dir) / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    env = jinja_env()
    tpl = env.get_template("report_standalone.html")
    n = 0
    for cid in case_ids:
        rep = build_report(con, cid, max_replays=max_replays)
        if rep is None:
            continue
        safe = file_stem(cid)
        for suffix, text in ((".json", json.dumps(rep, default=str, indent=1, ensure_ascii=False)),
                             (".html", tpl.render(r=rep))):
            tmp = folder / f"{safe}{suffix}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, folder / f"{safe}{suffix}")
        n += 1
    return n
