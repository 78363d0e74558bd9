"""A case told plainly: what it is worth in its own unit, its one-sentence story and the figures that carry it.

- :func:`case_facts`: per case, the money (in its currency) and the
  tournament chips at stake, never added together, and the hands its
  accounts played together.
- :func:`lead_figures`: the two or three Evidence rows that carry a case
  (an observed value against the players' own baseline, the smallest p
  first), each with the 95 % interval of what their own play would give.
- :func:`plain_sentence`: who is suspected of what (the kind's description
  from :mod:`detectors.kinds`), the lead figure against their own play, over
  how many hands, and what was at stake, built from the signals' structured
  fields (never from their summary text).
- :func:`figure_chart`: the lead figures as an SVG layout (observed dot,
  expected tick, interval band) for the templates.
- :func:`fdr_text` / :func:`fdr_sentence`: a case's estimated false-discovery
  rate (its ``q_value``) as a percentage and in plain words.
"""

from __future__ import annotations

import math
from typing import Any

import duckdb
import polars as pl

from detectors.kinds import KINDS, by_name
from pipelines.lib.replay import dict_rows, table_names

Z95 = 1.959964  # two-sided 95 % normal quantile


def fdr_text(q: Any) -> str:
    """An estimated false-discovery rate (a q-value in [0, 1]) as a percentage: "12 %", "3.4 %", "0.041 %",
    "< 0.0001 %"; "–" for none (None, NaN or not a number)."""
    try:
        v = float(q)
    except (TypeError, ValueError):
        return "–"
    if v != v:
        return "–"
    pct = 100.0 * min(max(v, 0.0), 1.0)
    if pct < 1e-4:
        return "< 0.0001 %"
    return f"{pct:.0f} %" if pct >= 10 else f"{pct:.2g} %"


def fdr_sentence(q: Any, kind: str) -> str:
    """The estimated false-discovery rate of a case in plain words (plain text; templates escape it):
    what share of the cases of its kind this strong or stronger are expected to accuse honest players."""
    title = by_name(kind).title if kind in KINDS else str(kind)
    if fdr_text(q) == "–":
        return f"No estimated false-discovery rate: the {title} test was not made for these accounts."
    return (f"Estimated false-discovery rate {fdr_text(q)}: of the {title} cases as strong as this one or "
            f"stronger, about {fdr_text(q)} are expected to accuse players who did nothing wrong.")

# the cases of a page, by a scan: IN would take the key's index (0.25 s per fresh connection)
FEW_CASES = "FROM cases WHERE list_position(?::VARCHAR[], case_id) > 0"

STAKE_SQL = """
WITH c AS (SELECT case_id, accounts, len(accounts) AS n_acc, hands, moved::DOUBLE AS moved,
                  transfers::DOUBLE AS transfers {cases}),
eh AS (SELECT x.case_id, h.currency, h.is_tournament, h.total_pot::DOUBLE AS pot
       FROM (SELECT case_id, unnest(hands) AS hand_id FROM c) x JOIN hands h ON h.hand_id = x.hand_id),
units AS (SELECT case_id, any_value(currency) FILTER (WHERE NOT is_tournament) AS currency,
                 count(*) FILTER (WHERE NOT is_tournament) AS cash, count(*) FILTER (WHERE is_tournament) AS chip,
                 coalesce(sum(pot) FILTER (WHERE NOT is_tournament), 0) AS pot_cash,
                 coalesce(sum(pot) FILTER (WHERE is_tournament), 0) AS pot_chips
          FROM eh GROUP BY 1),
stake AS (SELECT c.case_id, u.currency,
                 CASE WHEN u.cash > 0 AND u.chip = 0 THEN coalesce(nullif(c.moved + c.transfers, 0), u.pot_cash)
                      WHEN u.cash > 0 AND u.chip > 0 THEN u.pot_cash + c.transfers
                      ELSE nullif(c.transfers, 0) END AS money,
                 CASE WHEN u.chip > 0 AND u.cash = 0 THEN coalesce(nullif(c.moved, 0), u.pot_chips)
                      WHEN u.chip > 0 AND u.cash > 0 THEN u.pot_chips END AS chips
          FROM c LEFT JOIN units u USING (case_id))
"""

FACTS_SQL = STAKE_SQL.format(cases=FEW_CASES) + """,
together AS (SELECT case_id, count(*) AS hands_together FROM (
                 SELECT a.case_id, s.hand_id FROM (SELECT case_id, n_acc, unnest(accounts) AS player FROM c) a
                 JOIN seats s ON s.player = a.player GROUP BY 1, 2 HAVING count(*) >= least(2, max(a.n_acc)))
             GROUP BY 1)
SELECT s.case_id, s.currency, s.money, s.chips, coalesce(t.hands_together, 0) AS hands_together
FROM stake s LEFT JOIN together t USING (case_id)
"""


def case_facts(con: duckdb.DuckDBPyConnection, case_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per case id: ``money`` (with ``currency``), ``chips`` and ``hands_together``, from the published snapshot.

    Method: one DuckDB query over the cases' evidence hands and seats
    (:data:`STAKE_SQL`). Money is cash-game money and cashier transfers, in
    the cash hands' currency (the transfers' where there are no cash hands);
    chips are tournament chips. A case with hands of one unit takes its
    ``stake`` parts (moved between the accused, else the pots in play) in
    that unit; a case with both shows each unit's pots. The two are never
    added. ``hands_together``: hands in which at least two of the case's
    accounts were seated (every hand of the account for a one-account case):
    what the pair played, not the evidence hands the detector kept.
    """
    tables = table_names(con)
    if not case_ids or not {"cases", "hands", "seats"} <= tables:
        return {}
    rows = dict_rows(con, FACTS_SQL, [case_ids])
    tcur: dict[str, str] = {}
    if "transfers" in tables:
        tcur = {r["case_id"]: r["currency"] for r in dict_rows(con, """
            SELECT c.case_id, any_value(t.currency) AS currency FROM cases c JOIN transfers t
              ON list_contains(c.accounts, t.account) AND list_contains(c.accounts, t.to_account)
            WHERE list_position(?::VARCHAR[], c.case_id) > 0 GROUP BY 1""", [case_ids])}
    return {r["case_id"]: {"money": r["money"], "currency": r["currency"] or tcur.get(r["case_id"]) or "",
                           "chips": r["chips"], "hands_together": int(r["hands_together"])} for r in rows}


def stake_table(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every case's ``money`` and ``chips`` at stake (:data:`STAKE_SQL`, the amounts :func:`case_facts`
    shows): case_id, money, chips; empty when the snapshot lacks the tables."""
    if not {"cases", "hands"} <= table_names(con):
        return pl.DataFrame(schema={"case_id": pl.String, "money": pl.Float64, "chips": pl.Float64})
    return con.sql(STAKE_SQL.format(cases="FROM cases") + "SELECT case_id, money, chips FROM stake").pl()


def order_by_stake(stakes: pl.DataFrame, case_ids: list[str], unit: str, desc: bool) -> list[str]:
    """``case_ids`` ordered by their money (``unit="money"``) or chips (``"chips"``) in ``stakes``
    (:func:`stake_table`): cases without any in that unit come after, then those ``stakes`` lacks,
    each by case id."""
    col = "chips" if unit == "chips" else "money"
    ordered = (stakes.filter(pl.col("case_id").is_in(case_ids))
               .sort([col, "case_id"], descending=[desc, False], nulls_last=True)["case_id"].to_list())
    return ordered + sorted(set(case_ids) - set(ordered))


def _fmt(x: float) -> str:
    if x == int(x) and abs(x) < 1e12:
        return f"{int(x):,}"
    return f"{x:,.2f}" if abs(x) >= 0.01 else f"{x:.2g}"


def stake_text(facts: dict[str, Any] | None) -> str:
    """'450 USD at stake', '12,000 chips at stake', both for a case of both units, or ''."""
    if not facts:
        return ""
    parts = []
    if facts.get("money"):
        parts.append(f"{_fmt(facts['money'])} {facts.get('currency') or ''}".strip())
    if facts.get("chips"):
        parts.append(f"{_fmt(facts['chips'])} tournament chips")
    return " and ".join(parts) + " at stake" if parts else ""


def expected_interval(value: float, baseline: float, n: int | None) -> tuple[float, float, str] | None:
    """The 95 % interval of what the players' own baseline would give over ``n``, and how it was computed.

    A proportion (value and baseline in [0, 1], ``n`` trials): the normal
    approximation of the binomial, ``b ± z sqrt(b (1 - b) / n)`` clipped to
    [0, 1]. A count of events among ``n`` chances (a whole value above 1 and
    at most ``n``, the baseline read as the expected count): the normal
    approximation of the Poisson, ``b ± z sqrt(b)``, clipped at 0. Anything
    else (means per hand, distances): None, no interval claimed.
    """
    if n and 0 <= value <= 1 and 0 <= baseline <= 1 and not (value == 1 and baseline == 1):
        half = Z95 * math.sqrt(baseline * (1 - baseline) / n)
        return max(baseline - half, 0.0), min(baseline + half, 1.0), f"binomial, n = {n}"
    if n and baseline >= 0 and float(value).is_integer() and 1 < value <= n:
        half = Z95 * math.sqrt(baseline)
        return max(baseline - half, 0.0), baseline + half, "Poisson count"
    return None


def lead_figures(signals: list[dict[str, Any]], k: int = 3) -> list[dict[str, Any]]:
    """The ``k`` Evidence rows (of all the case's signals) with a value and a baseline, smallest p first.

    Each: name, value, baseline, n, p_value, ``lo``/``hi``/``method`` of
    :func:`expected_interval` (None without one), and ``outside`` (the value
    lies outside that interval).
    """
    rows = []
    for s in signals:
        for order, e in enumerate(s.get("evidence") or []):
            if not isinstance(e, dict):
                continue
            try:
                v, b = float(e["value"]), float(e["baseline"])
            except (KeyError, TypeError, ValueError):
                continue
            if math.isnan(v) or math.isnan(b):
                continue
            p = e.get("p_value")
            n = e.get("n")
            iv = expected_interval(v, b, int(n) if isinstance(n, (int, float)) and n > 0 else None)
            rows.append({"name": str(e.get("name") or ""), "value": v, "baseline": b, "n": n, "p_value": p,
                         "lo": iv[0] if iv else None, "hi": iv[1] if iv else None, "method": iv[2] if iv else "",
                         "outside": bool(iv) and not (iv[0] <= v <= iv[1]),
                         "_key": (p if isinstance(p, (int, float)) else 2.0, order)})
    rows.sort(key=lambda r: r["_key"])
    out, seen = [], set()
    for r in rows:  # two signals of one case may report the same figure: show it once
        del r["_key"]
        key = (r["name"], r["value"], r["baseline"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out[:k]


def compare(value: float, baseline: float) -> str:
    """How ``value`` stands against ``baseline``, in words: a ratio where one of at least 1.5 (or at most
    1 / 1.5) is meaningful, else the difference."""
    if baseline > 0 and value >= 0:
        ratio = value / baseline
        if ratio >= 1.5:
            return f"{ratio:.1f} times what their own play gives ({_fmt(baseline)})"
        if ratio <= 1 / 1.5:
            return f"{100 * ratio:.0f}% of what their own play gives ({_fmt(baseline)})"
    diff = value - baseline
    return f"{_fmt(abs(diff))} {'more' if diff >= 0 else 'less'} than their own play gives ({_fmt(baseline)})"


def plain_sentence(case: dict[str, Any], signals: list[dict[str, Any]], facts: dict[str, Any] | None) -> str:
    """One plain sentence: who is suspected of what, the lead figure against their own play, over how many
    hands, and what was at stake in the game's unit. Built from the case's kind and accounts, the signals'
    Evidence rows and :func:`case_facts`; plain text (the templates escape it)."""
    accounts = [str(a) for a in case.get("accounts") or []]
    who = accounts[0] if len(accounts) == 1 else ", ".join(accounts[:-1]) + " and " + accounts[-1]
    kind = str(case.get("kind") or "")
    what = by_name(kind).description if kind in KINDS else kind
    text = f"{who} {'is' if len(accounts) == 1 else 'are'} suspected of {what}"
    lead = lead_figures(signals, k=1)
    if lead:
        f = lead[0]
        text += f": {f['name']} was {_fmt(f['value'])}, {compare(f['value'], f['baseline'])}"
        if f["n"]:
            text += f", on a sample of {_fmt(float(f['n']))}"
    together = (facts or {}).get("hands_together")
    if together:
        hands = "the one hand" if together == 1 else f"the {_fmt(together)} hands"
        text += (f", over {hands} they played together" if len(accounts) > 1
                 else f", over {hands} the account played")
    stake = stake_text(facts)
    return text + (f"; {stake}." if stake else ".")


def figure_chart(figures: list[dict[str, Any]], width: int = 640) -> dict[str, Any] | None:
    """An SVG layout of the lead figures: one row each, its own scale (0 to the largest of value, baseline
    and interval), the interval as a band, the baseline as a tick, the observed value as a dot."""
    if not figures:
        return None
    left, right, row_h = 10, 110, 54
    rows = []
    for i, f in enumerate(figures):
        top = max(f["value"], f["baseline"], f["hi"] or 0.0, 1e-12)
        low = min(0.0, f["value"], f["baseline"])
        span = (top - low) * 1.08 or 1.0

        def x(v: float, low: float = low, span: float = span) -> float:
            return round(left + (v - low) / span * (width - left - right), 1)

        y = 34 + i * row_h
        rows.append({"label": f["name"], "y": y, "x0": x(low), "x1": x(low + span), "obs": x(f["value"]),
                     "exp": x(f["baseline"]), "band": (x(f["lo"]), x(f["hi"])) if f["lo"] is not None else None,
                     "value": _fmt(f["value"]), "baseline": _fmt(f["baseline"]), "method": f["method"],
                     "outside": f["outside"]})
    return {"width": width, "height": 34 + (len(rows) - 1) * row_h + 14, "rows": rows, "label_x": width - right + 8}
