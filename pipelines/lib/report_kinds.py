"""What the report shows for the hand_chat and heads_up_flipping kinds beyond every case's sections.

- **Hand chat**: :func:`chat_evidence` reads the lines the detector recorded
  (``Signal.extra["lines"]``: hand, line, what was said, the action it came
  before, the partner's next decision) into a table and into the replay's
  chat flags, so each line is shown in its place in the hand
  (:func:`pipelines.lib.replay.place_chat`), marked, with the partner's
  decision after it marked too.
- **Heads-up flipping**: :func:`flip_timeline` lays every heads-up match of
  the two accounts out hand by hand (the detector's own match query,
  :data:`detectors.heads_up_flipping.spots.HU_HANDS_SQL`, narrowed to their
  tournaments): each all-in preflop marked, each player's starting-hand
  percentile against the detector's line for a weak hand and against the
  weakest hand that player committed with at depth against other opponents
  (its own shove/call range), the short-stack flips (under the detector's
  push-or-fold depth) marked as the benign explanation and the exempt final
  of a scheduled heads-up tournament marked as exempt.

Everything is returned as plain data; the templates escape it.
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from detectors.base import sql_literal  # display only: the query an investigator copies, never executed here
from detectors.features.gameplay import starting_hand_percentile
from detectors.heads_up_flipping import HeadsUpFlippingDetector
from detectors.heads_up_flipping.spots import HU_HANDS_SQL

#: the tables the detector's match query reads, each narrowed to the tournaments ``$t`` by a common table
#: expression of its name (a name inside its own definition is the table itself)
NARROWED = (
    "WITH hands AS (SELECT * FROM hands WHERE tournament_id IN (SELECT unnest($t::VARCHAR[]))), "
    + ", ".join(f"{t} AS (SELECT * FROM {t} WHERE hand_id IN (SELECT hand_id FROM hands))"
                for t in ("seats", "actions", "hole_cards")) + " ")

#: matches drawn in a flip timeline (the most hands first), and hands drawn per match
MAX_MATCHES, MAX_MATCH_HANDS = 20, 400


def chat_evidence(signals: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, dict[int, dict[str, str]]]]:
    """The flagged chat lines of a case's hand_chat signals.

    Parameters
    ----------
    signals : the case's signal payloads (``Signal.to_dict()``).

    Returns
    -------
    (rows: ``hand_id``, ``line``, ``speaker``, ``partner``, ``said``, ``before`` (the action the line came
    before), ``partner_next`` (the partner's next decision); flags for
    :func:`pipelines.lib.replay.load_replays`: {hand: {line: {"why", "partner"}}})."""
    rows: list[dict[str, Any]] = []
    flags: dict[str, dict[int, dict[str, str]]] = {}
    for s in signals:
        extra = s.get("extra") or {}
        if s.get("kind") != "hand_chat" or not isinstance(extra.get("lines"), list):
            continue
        params = extra.get("sql_params") or {}
        accounts = [str(a) for a in s.get("accounts") or []]
        speaker = str(params.get("player") or (accounts[0] if accounts else ""))
        partner = str(params.get("opponent") or (accounts[1] if len(accounts) > 1 else ""))
        for ln in extra["lines"]:
            if not isinstance(ln, dict) or ln.get("hand_id") is None:
                continue
            try:
                line = int(ln.get("line"))
            except (TypeError, ValueError):
                continue
            row = {"hand_id": str(ln["hand_id"]), "line": line, "speaker": speaker, "partner": partner,
                   "said": str(ln.get("said") or ""), "before": str(ln.get("before") or "–"),
                   "partner_next": str(ln.get("partner_next") or "no decision after it")}
            rows.append(row)
            flags.setdefault(row["hand_id"], {})[line] = {
                "partner": partner,
                "why": f"card talk while {partner} was still in the hand; {partner} next: {row['partner_next']}"}
    return rows, flags


def _match_hands(con: duckdb.DuckDBPyConnection, a: str, b: str) -> pl.DataFrame:
    """The heads-up match hands (:data:`HU_HANDS_SQL`) of every tournament in which ``a`` or ``b`` played a
    hand heads-up, with ``pct_a`` / ``pct_b`` the players' starting-hand percentiles (null unknown)."""
    tours = [r[0] for r in con.execute(
        "SELECT DISTINCT h.tournament_id FROM hands h JOIN seats s ON s.hand_id = h.hand_id AND s.dealt_in "
        "WHERE h.is_tournament AND h.n_players = 2 AND s.player IN (?, ?)", [a, b]).fetchall()]
    if not tours:
        return pl.DataFrame()
    df = con.sql(NARROWED + f"SELECT * FROM ({HU_HANDS_SQL})", params={"t": tours}).pl()
    if df.is_empty():
        return df
    pa = starting_hand_percentile(df.select(pl.col("hole_a").alias("hole"), "game"))
    pb = starting_hand_percentile(df.select(pl.col("hole_b").alias("hole"), "game"))
    return df.with_columns(pa.alias("pct_a"), pb.alias("pct_b"))


def _own_range(df: pl.DataFrame, player: str, partner: str, min_depth: float) -> dict[str, Any]:
    """``player``'s all-ins at depth against other opponents: how many, the weakest starting-hand
    percentile committed with (``floor``, None without one) and the median."""
    mine = pl.concat([
        df.filter(pl.col("a") == player).select(other="b", pct="pct_a", flip="flip", eff_bb="eff_bb", exempt="exempt"),
        df.filter(pl.col("b") == player).select(other="a", pct="pct_b", flip="flip", eff_bb="eff_bb", exempt="exempt"),
    ]).filter(pl.col("flip") & ~pl.col("exempt") & (pl.col("other") != partner) & (pl.col("eff_bb") >= min_depth)
              & pl.col("pct").is_not_null())
    return {"player": player, "n": mine.height, "floor": mine["pct"].min() if mine.height else None,
            "median": mine["pct"].median() if mine.height else None}


def flip_timeline(con: duckdb.DuckDBPyConnection, accounts: list[str], tables: set[str],
                  width: int = 900) -> dict[str, Any] | None:
    """The heads-up matches of a pair as a timeline (see the module doc), or None without any.

    Parameters
    ----------
    con : the warehouse or its snapshot. accounts : the case's two accounts.
    tables : the warehouse's tables. width : the SVG's width in pixels.

    Returns
    -------
    ``weak_pct`` / ``min_depth_bb`` (the detector's defaults), ``ranges`` (each player's own range,
    :func:`_own_range`), ``matches`` (tournament, hands, flips, rows of the SVG: ``y`` and ``marks`` with
    ``x``, ``what`` in {"hand", "flip", "weak", "short", "exempt"} and a ``title``), ``flips`` (the table:
    one row per all-in preflop), ``width``, ``height``, ``left``, ``sql`` (the query that reproduces it)."""
    if len(accounts) != 2 or not {"hands", "seats", "actions", "hole_cards"} <= tables:
        return None
    a, b = sorted(accounts)
    det = HeadsUpFlippingDetector()
    df = _match_hands(con, a, b)
    if df.is_empty():
        return None
    ranges = [_own_range(df, a, b, det.min_depth_bb), _own_range(df, b, a, det.min_depth_bb)]
    floor = {r["player"]: r["floor"] for r in ranges}
    pair = df.filter((pl.col("a") == a) & (pl.col("b") == b)).sort("started_at", "hand_id")
    if pair.is_empty():
        return None
    sizes = pair.group_by("tournament_id").agg(n=pl.len(), t0=pl.col("started_at").min()).sort(
        ["n", "t0"], descending=[True, False]).head(MAX_MATCHES).sort("t0")
    longest = min(int(sizes["n"].max()), MAX_MATCH_HANDS)
    left = 170
    step = max(2.0, (width - left - 20) / max(longest, 1))
    matches, flips = [], []
    for i, (tid, n, _) in enumerate(sizes.iter_rows()):
        y = 40 + i * 30
        marks, n_flips = [], 0
        for h in pair.filter(pl.col("tournament_id") == tid).head(MAX_MATCH_HANDS).iter_rows(named=True):
            what = _what(h, det)
            x = round(left + (h["match_hand"] - 0.5) * step, 1)
            title = f"hand {h['match_hand']} of the match ({h['hand_id']}), {h['eff_bb']:.1f} bb effective"
            if h["flip"]:
                row = _flip_row(h, a, b, floor, det, what)
                flips.append(row)
                n_flips += 1
                title += f": all in preflop, {row['text']}"
            marks.append({"x": x, "what": what, "title": title})
        matches.append({"tournament": str(tid), "hands": int(n), "y": y, "marks": marks,
                        "flips": n_flips})
    return {"weak_pct": det.weak_pct, "min_depth_bb": det.min_depth_bb, "ranges": ranges, "matches": matches,
            "flips": flips, "width": width, "height": 40 + len(matches) * 30 + 20, "left": left, "step": step,
            "a": a, "b": b, "sql": _matches_sql([str(t) for t in sizes["tournament_id"].to_list()], a, b)}


def _matches_sql(tours: list[str], a: str, b: str) -> str:
    """The query an investigator copies to see the matches drawn: :data:`NARROWED` with the tournaments
    written in, the detector's match query, the pair's rows."""
    where = "[" + ", ".join(sql_literal(t) for t in tours) + "]"
    return ("-- the heads-up match hands of the tournaments the pair played heads-up, as the detector reads them\n"
            + NARROWED.replace("$t::VARCHAR[]", where) + "\nSELECT * FROM (" + HU_HANDS_SQL.strip()
            + f")\nWHERE a = {sql_literal(a)} AND b = {sql_literal(b)}")


def _what(h: dict[str, Any], det: HeadsUpFlippingDetector) -> str:
    """A match hand's mark: ``exempt`` (a scheduled tournament's final), ``short`` (a flip under the
    push-or-fold depth), ``weak`` (a weak flip at depth, the detector's count), ``flip``, or ``hand``."""
    if h["exempt"]:
        return "exempt"
    if not h["flip"]:
        return "hand"
    if h["eff_bb"] < det.min_depth_bb:
        return "short"
    weakest = min((p for p in (h["pct_a"], h["pct_b"]) if p is not None), default=None)
    return "weak" if weakest is None or weakest < det.weak_pct else "flip"


def _flip_row(h: dict[str, Any], a: str, b: str, floor: dict[str, Any], det: HeadsUpFlippingDetector,
              what: str) -> dict[str, Any]:
    """One all-in preflop of the pair for the table: both hands, their percentiles, each against the
    detector's weak line and (at depth: the range is the player's at depth) its own range, and the verdict."""
    sides = []
    for p, hole, pct in ((a, h["hole_a"], h["pct_a"]), (b, h["hole_b"], h["pct_b"])):
        own = floor.get(p)
        sides.append({"player": p, "cards": " ".join(hole) if hole else "unknown",
                      "pct": pct, "weak": pct is None or pct < det.weak_pct,
                      "outside_own": what in ("weak", "flip") and pct is not None and own is not None and pct < own})
    verdict = {"weak": "weak flip at depth (counted)", "flip": "flip with strong hands (not counted)",
               "short": f"short stack under {det.min_depth_bb:g} bb: push-or-fold, benign (not counted)",
               "exempt": "final of a scheduled heads-up tournament: exempt"}.get(what, what)
    text = "; ".join(f"{s['player']} {s['cards']}"
                     + (f" (percentile {100 * s['pct']:.0f})" if s["pct"] is not None else "") for s in sides)
    return {"tournament": str(h["tournament_id"]), "match_hand": int(h["match_hand"]), "hand_id": str(h["hand_id"]),
            "eff_bb": float(h["eff_bb"]), "sides": sides, "what": what, "verdict": verdict, "text": text}


__all__ = ["MAX_MATCHES", "MAX_MATCH_HANDS", "chat_evidence", "flip_timeline"]
