"""Hand replays from the warehouse: every hole card, street by street.

:func:`load_replays` reads a batch of hands with one query per table
(``hands``, ``seats``, ``hole_cards``, ``actions``, ``boards``,
``collections``, ``table_events``), each bound to the list of hand ids, and
assembles one dict per hand for the report and the web page.

The suspicious decision of a hand is marked by :func:`mark_decisions`: the
detector's own marks where its Signal gave them (``extra["decisions"]``:
``[{"hand", "seq", "why"}]``), otherwise a rule per kind over the accused
accounts' actions, which says that it is a rule:

- ``soft_play``: an accused player checks or folds after the flop while only
  accused players remain in the hand;
- ``chip_dumping``: the largest chip commitment of an accused player who lost
  the hand while another accused player won it;
- ``bounty_collusion``: the all-in (or the last chips in) of an accused
  player eliminated by another accused player;
- other kinds judge accounts and sessions, not decisions: the accused seats
  are highlighted, no action is marked.

Chat is shown in its place (:func:`place_chat`): each line of a hold'em or
Omaha hand before the decision it came before, as the hand_chat detector
places it; a line the caller flags (``chat_flags``) is marked, with the
decision its partner made next.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any, Iterable

import duckdb

from detectors.base import sql_literal  # display only: the queries an investigator copies, never executed here
from detectors.hand_chat.lines import CHAT_LINES_SQL, FLOP_GAMES

STREETS = ("preflop", "flop", "turn", "river")
ACTION_WORDS = {
    "post_sb": "posts small blind", "post_bb": "posts big blind", "post_ante": "posts the ante",
    "post_dead": "posts a dead blind", "post_sb_bb": "posts small & big blinds", "post_straddle": "posts a straddle",
    "fold": "folds", "check": "checks", "call": "calls", "bet": "bets", "raise": "raises",
}
SUITS = {"h": "♥", "d": "♦", "c": "♣", "s": "♠"}


def replay_sql(hand_id: str) -> str:
    """The queries that reproduce a replay from the warehouse."""
    h = sql_literal(hand_id)
    return (
        f"SELECT * FROM hands WHERE hand_id = {h};\n"
        f"SELECT seat, player, position, stack_start, net FROM seats WHERE hand_id = {h} ORDER BY seat;\n"
        f"SELECT player, cards, source FROM hole_cards WHERE hand_id = {h};\n"
        f"SELECT seq, street, player, action, amount, raise_to, is_all_in, pot_before FROM actions "
        f"WHERE hand_id = {h} ORDER BY seq;\n"
        f"SELECT run, cards FROM boards WHERE hand_id = {h} ORDER BY run;\n"
        f"SELECT run, pot, player, amount, kind FROM collections WHERE hand_id = {h};"
    )


def card_text(card: str) -> str:
    """'Ah' -> 'A♥' (anything unexpected is returned as given; templates escape it)."""
    card = str(card)
    if len(card) == 2 and card[1] in SUITS:
        return card[0].replace("T", "10") + SUITS[card[1]]
    return card


def _num(x: Any) -> float | None:
    if x is None:
        return None
    return float(x) if isinstance(x, Decimal) else x


def _fmt(x: Any) -> str:
    if x is None:
        return ""
    v = float(x)
    return f"{v:,.0f}" if v == int(v) else f"{v:,.2f}"


def dict_rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a parameterised query as dicts keyed by column name."""
    cur = con.execute(sql, params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables and views of the warehouse (one information_schema query; callers pass the set along)."""
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


#: the tables the chat placement reads (those of the hand_chat detector's placement query)
CHAT_TABLES = {"hands", "seats", "actions", "hole_cards", "table_events", "unknown_lines"}


def place_chat(con: duckdb.DuckDBPyConnection, ids: list[str], tables: set[str]) -> dict[str, list[dict[str, Any]]]:
    """The chat lines of the hands ``ids``, each placed as the hand_chat detector places it.

    Method: the detector's own placement query
    (:data:`detectors.hand_chat.lines.CHAT_LINES_SQL`) with each table it reads
    narrowed to ``ids`` by a common table expression of the table's name (inside
    its own definition the name is the table), so the page and the detector
    cannot disagree on where a line was sent.

    Returns
    -------
    {hand id: [{``line``, ``player``, ``text``, ``next_seq`` (the decision the line came before; None
    after the last one), ``in_play``}]}, by line; hands outside hold'em and Omaha are absent."""
    if not ids or not CHAT_TABLES <= tables:
        return {}
    sql = ("WITH " + ", ".join(f"{t} AS (SELECT * FROM {t} WHERE hand_id IN (SELECT unnest($ids::VARCHAR[])))"
                              for t in sorted(CHAT_TABLES)) + f" SELECT * FROM ({CHAT_LINES_SQL})")
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in dict_rows(con, sql, {"ids": ids, "games": list(FLOP_GAMES)}):
        out[r["hand_id"]].append(r)
    return out


def _chat_in_place(chat: list[dict[str, Any]], flags: dict[int, dict[str, str]], actions: list[dict[str, Any]],
                   accused: set[str], marked: dict[int, str]) -> tuple[dict[int, list[dict[str, Any]]], list, list]:
    """One hand's placed chat (:func:`place_chat`) as the replay shows it: the lines before each decision
    ({seq: lines}), those before the cards and those after the last decision. A flagged line (``flags``:
    {line: {"why", "partner"}}) marks, in ``marked``, the first decision its partner made at or after it."""
    before: dict[int, list[dict[str, Any]]] = defaultdict(list)
    pre: list[dict[str, Any]] = []
    post: list[dict[str, Any]] = []
    for c in chat:
        f = flags.get(int(c["line"]))
        item = {"player": c["player"], "text": c["text"] or "", "accused": c["player"] in accused,
                "flagged": f is not None, "why": (f or {}).get("why", "")}
        if c["next_seq"] is None:
            post.append(item)
        elif not c["in_play"]:
            pre.append(item)
        else:
            before[int(c["next_seq"])].append(item)
            partner = (f or {}).get("partner")
            nxt = next((a for a in actions if partner and a["player"] == partner and a["seq"] >= c["next_seq"]
                        and not a["action"].startswith("post")), None)
            if nxt is not None:
                marked.setdefault(nxt["seq"], f"{partner}'s decision after the chat line of {c['player']}")
    return before, pre, post


def load_replays(con: duckdb.DuckDBPyConnection, hand_ids: Iterable[str], *, kind: str = "",
                 accused: Iterable[str] = (), marks: dict[str, dict[int, str]] | None = None,
                 tables: set[str] | None = None,
                 chat_flags: dict[str, dict[int, dict[str, str]]] | None = None) -> list[dict[str, Any]]:
    """Replays of the given hands, in the order given (hands missing from the warehouse are skipped).

    ``marks`` ({hand: {seq: why}}) are the detector's marked decisions; ``chat_flags`` ({hand: {line:
    {"why", "partner"}}}) its flagged chat lines (see :func:`place_chat`)."""
    ids = list(dict.fromkeys(str(h) for h in hand_ids))
    tables = tables if tables is not None else table_names(con)
    if not ids or "hands" not in tables:
        return []
    sel = "WHERE hand_id IN (SELECT unnest(?::VARCHAR[]))"
    hands = {r["hand_id"]: r for r in dict_rows(con, f"SELECT * FROM hands {sel}", [ids])}
    per: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for table, order in (("seats", "seat"), ("hole_cards", "player"), ("actions", "seq"), ("boards", "run"),
                         ("collections", "run, pot"), ("table_events", "line")):
        for r in dict_rows(con, f"SELECT * FROM {table} {sel} ORDER BY hand_id, {order}", [ids]):
            per[r["hand_id"]][table].append(r)
    placed = place_chat(con, ids, tables)
    accused = set(accused)
    out = []
    for hid in ids:
        h = hands.get(hid)
        if h is None:
            continue
        t = per[hid]
        cards = {r["player"]: r for r in t["hole_cards"]}
        seats = [{
            "seat": s["seat"], "player": s["player"], "position": s["position"] or "",
            "stack": _fmt(s["stack_start"]), "net": _num(s["net"]), "net_text": _fmt(s["net"]),
            "cards": [card_text(c) for c in (cards.get(s["player"], {}).get("cards") or [])],
            "cards_source": cards.get(s["player"], {}).get("source", ""),
            "accused": s["player"] in accused, "sitting_out": s["sitting_out"], "dealt_in": s["dealt_in"],
        } for s in t["seats"]]
        board = list(t["boards"][0]["cards"]) if t["boards"] else []
        marked = dict((marks or {}).get(hid, {}))
        rule = False
        if not marked:
            marked = mark_decisions(kind, accused, t["actions"], t["seats"], t["collections"])
            rule = bool(marked)
        chat, chat_pre, chat_post = _chat_in_place(placed.get(hid, []), (chat_flags or {}).get(hid, {}),
                                                   t["actions"], accused, marked)
        streets = _streets(t["actions"], board, accused, marked, chat)
        out.append({
            "hand_id": hid,
            "started_at": str(h["started_at"]),
            "table": h["table_name"],
            "game": f"{h['game']} {h['limit_type'].replace('_', ' ')}",
            "stakes": (f"level {h['tournament_level']} " if h.get("tournament_level") else "")
                      + f"{_fmt(h['small_blind'])}/{_fmt(h['big_blind'])}"
                      + (f" ante {_fmt(h['ante'])}" if h.get("ante") else "") + f" {h['currency']}",
            "tournament": h.get("tournament_id"),
            "button": h.get("button_seat"),
            "total_pot": _fmt(h["total_pot"]), "rake": _fmt(h["rake"]),
            "all_cards_known": bool(h["all_cards_known"]),
            "seats": seats,
            "streets": streets,
            "boards": [[card_text(c) for c in b["cards"]] for b in t["boards"]],
            "collections": [{"player": c["player"], "amount": _fmt(c["amount"]), "pot": c["pot"], "run": c["run"],
                             "kind": c["kind"]} for c in t["collections"]],
            "events": [{"player": e["player"], "event": e["event"], "detail": e["detail"]} for e in t["table_events"]],
            "marked_by_rule": rule,
            "chat_before": chat_pre, "chat_after": chat_post,
            "sql": replay_sql(hid),
        })
    return out


def _streets(actions: list[dict[str, Any]], board: list[str], accused: set[str], marked: dict[int, str],
             chat: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A hand's streets as the replay shows them: the board dealt on each, each action with its mark
    (``marked``: {seq: why}) and the chat lines sent before it (``chat``: {seq: lines})."""
    streets = []
    for st in STREETS:
        acts = [a for a in actions if a["street"] == st]
        shown = {"preflop": [], "flop": board[:3], "turn": board[3:4], "river": board[4:5]}[st]
        if not acts and not shown:
            continue
        streets.append({
            "street": st,
            "board": [card_text(c) for c in shown],
            "actions": [{
                "seq": a["seq"], "player": a["player"], "accused": a["player"] in accused, "action": a["action"],
                "text": _action_text(a), "pot_before": _fmt(a["pot_before"]),
                "marked": a["seq"] in marked, "why": marked.get(a["seq"], ""), "chat": chat.get(a["seq"], []),
            } for a in acts],
        })
    return streets


def _action_text(a: dict[str, Any]) -> str:
    word = ACTION_WORDS.get(a["action"], a["action"])
    if a["action"] == "raise":
        text = f"{word} {_fmt(a['amount'])} to {_fmt(a['raise_to'])}"
    elif a["action"] in ("fold", "check"):
        text = word
    else:
        text = f"{word} {_fmt(a['amount'])}"
    return text + (" and is all-in" if a["is_all_in"] else "")


def mark_decisions(kind: str, accused: set[str], actions: list[dict[str, Any]], seats: list[dict[str, Any]],
                   collections: list[dict[str, Any]]) -> dict[int, str]:
    """The rule-based marks of the module doc: {action seq: why}."""
    if not accused or not actions:
        return {}
    marks: dict[int, str] = {}
    net = {s["player"]: _num(s["net"]) or 0.0 for s in seats}
    winners = {c["player"] for c in collections}
    if kind == "soft_play":
        active = {s["player"] for s in seats if s["dealt_in"]}
        for a in actions:
            if (a["street"] != "preflop" and a["player"] in accused and a["action"] in ("check", "fold")
                    and len(active) >= 2 and active <= accused):
                marks[a["seq"]] = ("checks" if a["action"] == "check" else "folds") + \
                    " with only accused players left in the hand (rule)"
            if a["action"] == "fold":
                active.discard(a["player"])
    elif kind == "chip_dumping":
        if winners & accused:
            losers = [a for a in actions if a["player"] in accused and net.get(a["player"], 0) < 0
                      and a["player"] not in winners and a["action"] in ("call", "bet", "raise")]
            if losers:
                top = max(losers, key=lambda a: float(a["amount"]))
                marks[top["seq"]] = "largest commitment of an accused player who lost to another accused (rule)"
    elif kind == "bounty_collusion":
        if winners & accused:
            busted = [a for a in actions if a["player"] in accused and a["player"] not in winners
                      and (a["is_all_in"] or a["action"] in ("call", "bet", "raise"))]
            if busted:
                top = next((a for a in reversed(busted) if a["is_all_in"]), busted[-1])
                marks[top["seq"]] = "accused player's chips go in against another accused player (rule)"
    return marks
