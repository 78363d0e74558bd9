"""Signals -> cases: what an investigator opens.

Method, in the order :func:`build_cases` runs it:

1. **Read the signals** every detector wrote into the warehouse's ``signals``
   table (per detector, only the rows of its latest run id).
2. **Merge** signals of one kind into groups: signals with the same account
   set are one group; sets that overlap as :func:`pipelines.lib.review.overlaps`
   says (share ``min(2, |a|, |b|)`` accounts: a pair inside a ring, a
   one-account hand-off inside any group naming the account) are joined with
   a union-find. Two different pairs never merge: a player who sits with two
   colluders is not smeared into one case with them; the ring is shown by
   step 4 instead.
3. **Money at stake**, in one DuckDB query over the evidence hands: the chips
   in play (``hands.total_pot``), the chips moved between the accused
   (per hand ``least(accused losses, accused gains)``) and cashier transfers
   between the accused.
4. **Rings**: connected components (networkx) of the flagged cases that share
   at least one account, whatever their kind; every case lists the flagged
   cases it shares an account with as ``related``.
5. **Case ids** come from the review store (:meth:`ReviewStore.register_run`),
   so the same group keeps its id across nightly runs, new evidence hands are
   marked new, and dismissed cases stay dismissed unless the evidence grows.
   :func:`publish_cases` commits that registration only with the run's
   warehouse tables and ``cases.jsonl``: a killed run leaves nothing "seen".
6. **Rank**: flagged first, then the estimated false-discovery rate
   (``q_value``, lowest first: one scale for every kind, so the queue's order
   and its line are one thing), then score (strength of evidence within the
   kind), then money at stake.

Outputs: the ``cases``, ``case_signals`` and ``case_hands`` tables in the
warehouse (rebuilt each run, for analysts and the web app's snapshot) and
``cases.jsonl`` with the fields of ``evaluation.md`` and then ``q_value``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import networkx as nx
import polars as pl
import pyarrow as pa

from detectors.base import KINDS
from pipelines.lib.case_story import fdr_text
from pipelines.lib.replay import table_names
from pipelines.lib.review import ReviewStore, overlaps
from pipelines.lib.safe_text import terminal_safe

EXPORT_FIELDS = ("case", "kind", "accounts", "tournaments", "score", "flagged", "hands", "summary")
#: fields ``cases.jsonl`` carries after evaluation.md's: the case's estimated false-discovery rate
EXPORT_EXTRA = ("q_value",)

CASES_DDL = """
CREATE OR REPLACE TABLE cases (
    case_id     VARCHAR PRIMARY KEY,
    rank        INTEGER NOT NULL,
    kind        VARCHAR NOT NULL,
    accounts    VARCHAR[] NOT NULL,
    tournaments VARCHAR[] NOT NULL,
    score       DOUBLE NOT NULL,
    p_value     DOUBLE,
    q_value     DOUBLE,
    flagged     BOOLEAN NOT NULL,
    hands       VARCHAR[] NOT NULL,
    new_hands   VARCHAR[] NOT NULL,
    is_new      BOOLEAN NOT NULL,
    reopened    BOOLEAN NOT NULL,
    status      VARCHAR NOT NULL,
    summary     VARCHAR NOT NULL,
    ring        VARCHAR,
    related     VARCHAR[] NOT NULL,
    n_signals   INTEGER NOT NULL,
    pot_total   DECIMAL(18,2) NOT NULL,
    moved       DECIMAL(18,2) NOT NULL,
    transfers   DECIMAL(18,2) NOT NULL,
    stake       DECIMAL(18,2) NOT NULL,
    run_id      VARCHAR,
    created_at  TIMESTAMP NOT NULL
);
CREATE OR REPLACE TABLE case_signals (
    case_id     VARCHAR NOT NULL,
    idx         INTEGER NOT NULL,
    kind        VARCHAR NOT NULL,
    detector    VARCHAR NOT NULL,
    accounts    VARCHAR[] NOT NULL,
    tournaments VARCHAR[] NOT NULL,
    score       DOUBLE NOT NULL,
    p_value     DOUBLE,
    q_value     DOUBLE,
    flagged     BOOLEAN NOT NULL,
    hands       VARCHAR[] NOT NULL,
    summary     VARCHAR NOT NULL,
    payload     JSON NOT NULL
);
CREATE OR REPLACE TABLE case_hands (
    case_id  VARCHAR NOT NULL,
    hand_id  VARCHAR NOT NULL,
    rank     INTEGER NOT NULL,
    is_new   BOOLEAN NOT NULL
);
COMMENT ON TABLE cases IS 'One row per case of this run (signals of one kind about one group of accounts), ranked; rebuilt each run. Review decisions live in the review store; status here is a copy at run time.';
COMMENT ON COLUMN cases.case_id IS 'Case id kept across runs by the review store (c-000123)';
COMMENT ON COLUMN cases.rank IS '1 = first in the queue: flagged first, then estimated false-discovery rate (lowest first), then score, then stake';
COMMENT ON COLUMN cases.kind IS 'One of the six kinds';
COMMENT ON COLUMN cases.accounts IS 'The accused accounts, sorted';
COMMENT ON COLUMN cases.tournaments IS 'Tournaments the case is about (may be empty)';
COMMENT ON COLUMN cases.score IS 'Highest score of its signals; comparable within a kind';
COMMENT ON COLUMN cases.p_value IS 'Lowest p-value of its signals';
COMMENT ON COLUMN cases.q_value IS 'Estimated false-discovery rate: the share of false accusations expected among this case and every case of its kind with a smaller p-value (Benjamini-Hochberg; lowest of its signals). One scale for every kind; NULL where no test was made';
COMMENT ON COLUMN cases.flagged IS 'Put in front of an investigator (any of its signals flagged)';
COMMENT ON COLUMN cases.hands IS 'Evidence hands, strongest first';
COMMENT ON COLUMN cases.new_hands IS 'Evidence hands no earlier run showed for this case';
COMMENT ON COLUMN cases.is_new IS 'The case was opened by this run';
COMMENT ON COLUMN cases.reopened IS 'This run reopened a dismissed / closed case because its evidence grew';
COMMENT ON COLUMN cases.status IS 'Review status at run time (the live one is in the review store)';
COMMENT ON COLUMN cases.summary IS 'The accusation in one sentence, from the strongest signal';
COMMENT ON COLUMN cases.ring IS 'Ring id: the lowest case id among flagged cases connected by shared accounts';
COMMENT ON COLUMN cases.related IS 'Flagged cases sharing at least one account with this one';
COMMENT ON COLUMN cases.n_signals IS 'Signals merged into the case';
COMMENT ON COLUMN cases.pot_total IS 'Sum of total_pot over the evidence hands (money or chips in play)';
COMMENT ON COLUMN cases.moved IS 'Chips or money moved between the accused in the evidence hands: per hand least(accused losses, accused gains)';
COMMENT ON COLUMN cases.transfers IS 'Cashier transfers between the accused';
COMMENT ON COLUMN cases.stake IS 'Money at stake used for ranking: moved + transfers, else pot_total';
COMMENT ON COLUMN cases.run_id IS 'The Dagster run that built the row';
COMMENT ON COLUMN cases.created_at IS 'When the row was built (UTC)';
COMMENT ON TABLE case_signals IS 'The signals merged into each case (payload = detectors.base.Signal as JSON); rebuilt each run';
COMMENT ON COLUMN case_signals.case_id IS 'The case';
COMMENT ON COLUMN case_signals.idx IS '0 = strongest signal of the case';
COMMENT ON COLUMN case_signals.kind IS 'Signal kind';
COMMENT ON COLUMN case_signals.detector IS 'Detector class';
COMMENT ON COLUMN case_signals.accounts IS 'Accounts of the signal';
COMMENT ON COLUMN case_signals.tournaments IS 'Tournaments of the signal';
COMMENT ON COLUMN case_signals.score IS 'Signal score';
COMMENT ON COLUMN case_signals.p_value IS 'Signal p-value';
COMMENT ON COLUMN case_signals.q_value IS 'Signal estimated false-discovery rate (Benjamini-Hochberg q-value)';
COMMENT ON COLUMN case_signals.flagged IS 'Signal flagged by its detector';
COMMENT ON COLUMN case_signals.hands IS 'Evidence hands of the signal, strongest first';
COMMENT ON COLUMN case_signals.summary IS 'Signal summary';
COMMENT ON COLUMN case_signals.payload IS 'The whole Signal.to_dict() as JSON';
COMMENT ON TABLE case_hands IS 'Evidence hands of each case, strongest first; rebuilt each run';
COMMENT ON COLUMN case_hands.case_id IS 'The case';
COMMENT ON COLUMN case_hands.hand_id IS 'Evidence hand';
COMMENT ON COLUMN case_hands.rank IS '0 = strongest';
COMMENT ON COLUMN case_hands.is_new IS 'First shown for this case by this run';
"""


# --------------------------------------------------------------------- signals

def load_signals(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Signals of each detector's latest run, as dicts (the payload merged over the columns, ``q_value`` None
    in a warehouse written before the column); unknown kinds skipped."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'signals'").fetchone()[0]
    if not exists:
        return []
    # every column by name (s.*), so a warehouse written before q_value existed reads with q None
    cur = con.execute(
        """
        WITH latest AS (
            SELECT kind, detector, arg_max(run_id, created_at) AS run_id
            FROM signals GROUP BY kind, detector
        )
        SELECT s.*, CAST(s.payload AS VARCHAR) AS payload_text
        FROM signals s JOIN latest l
          ON l.kind = s.kind AND l.detector = s.detector
         AND (l.run_id IS NOT DISTINCT FROM s.run_id OR l.run_id IS NULL)
        ORDER BY s.kind, s.score DESC
        """)
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    out = []
    for r in rows:
        kind, det, acc, tours, payload = r["kind"], r["detector"], r["accounts"], r["tournaments"], r["payload_text"]
        if kind not in KINDS:  # a kind railbird does not list (detectors.kinds) is not a case
            continue
        try:
            extra = json.loads(payload) if payload else {}
        except ValueError:
            extra = {}
        if not isinstance(extra, dict):
            extra = {}
        sig = dict(extra)
        sig.update(kind=kind, detector=det, accounts=list(acc or []), tournaments=list(tours or []),
                   score=float(r["score"]), p_value=r["p_value"], q_value=r.get("q_value"), flagged=bool(r["flagged"]),
                   hands=[str(h) for h in (r["hands"] or [])], summary=r["summary"] or "")
        out.append(sig)
    return out


def stale_kinds(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, tuple[str | None, str | None]]:
    """The kinds whose detector failed in ``run_id``: kind -> (error, run whose signals the kind still shows).

    Read from ``detector_runs`` (written by the detect stage); an empty dict
    when every detector ran or the table does not exist yet.
    """
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'detector_runs'").fetchone()[0]:
        return {}
    rows = con.execute("SELECT kind, error, signals_run_id FROM detector_runs WHERE run_id = ? AND status = 'failed' "
                       "ORDER BY kind", [run_id]).fetchall()
    return {kind: (error, shown) for kind, error, shown in rows}


def merge_signals(signals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group signals by kind and overlapping account sets (union-find; see module doc).

    Returns groups with kind, accounts (sorted), tournaments (first seen
    first), score (max), p_value (min), q_value (min: the estimated
    false-discovery rate of its strongest test), flagged (any), hands (strongest
    signal's first, no repeats), summary (strongest signal's) and signals
    (strongest first).
    """
    exact: dict[tuple[str, frozenset[str]], list[int]] = {}
    for i, s in enumerate(signals):
        acc = frozenset(str(a) for a in s.get("accounts") or [])
        if acc:
            exact.setdefault((s["kind"], acc), []).append(i)
    keys = list(exact)
    parent = list(range(len(keys)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    index: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, (kind, acc) in enumerate(keys):
        for a in acc:
            index[(kind, a)].append(k)
    for k, (kind, acc) in enumerate(keys):
        if len(acc) == 2:  # two distinct pairs never share two accounts; larger sets reach the pairs
            continue
        cand: set[int] = set()
        for a in acc:
            cand.update(index[(kind, a)])
        for j in cand:
            if j != k and overlaps(acc, keys[j][1]):
                ra, rb = find(k), find(j)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    comps: dict[int, list[int]] = defaultdict(list)
    for k in range(len(keys)):
        comps[find(k)].extend(exact[keys[k]])
    groups = []
    for members in comps.values():
        sigs = sorted((signals[i] for i in members), key=lambda s: (-float(s["score"]), not s.get("flagged")))
        accounts = sorted({str(a) for s in sigs for a in s["accounts"]})
        tournaments = list(dict.fromkeys(str(t) for s in sigs for t in s.get("tournaments") or []))
        hands = list(dict.fromkeys(str(h) for s in sigs for h in s.get("hands") or []))
        ps = [float(s["p_value"]) for s in sigs if s.get("p_value") is not None]
        qs = [float(s["q_value"]) for s in sigs if s.get("q_value") is not None and s["q_value"] == s["q_value"]]
        summary = sigs[0].get("summary") or ""
        if len(sigs) > 1:
            summary += f" (+{len(sigs) - 1} more {sigs[0]['kind']} signal{'s' if len(sigs) > 2 else ''} on these accounts)"
        groups.append({
            "kind": sigs[0]["kind"], "accounts": accounts, "tournaments": tournaments,
            "score": float(sigs[0]["score"]), "p_value": min(ps) if ps else None, "q_value": min(qs) if qs else None,
            "flagged": any(bool(s.get("flagged")) for s in sigs), "hands": hands,
            "summary": summary, "signals": sigs,
        })
    groups.sort(key=lambda g: (g["kind"], -g["score"], g["accounts"]))
    return groups


# ------------------------------------------------------------------ money at stake

def money_at_stake(con: duckdb.DuckDBPyConnection, groups: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Per group: pot_total, moved, transfers and stake, in one vectorised query (see module doc)."""
    zero = [{"pot_total": 0.0, "moved": 0.0, "transfers": 0.0, "stake": 0.0} for _ in groups]
    if not groups:
        return zero
    tables = table_names(con)
    ga = pa.table({"gi": pa.array([i for i, g in enumerate(groups) for _ in g["accounts"]], pa.int64()),
                   "account": pa.array([a for g in groups for a in g["accounts"]], pa.string())})
    gh = pa.table({"gi": pa.array([i for i, g in enumerate(groups) for _ in g["hands"]], pa.int64()),
                   "hand_id": pa.array([h for g in groups for h in g["hands"]], pa.string())})
    parts = []
    if {"hands", "seats"} <= tables:
        parts.append("""
            SELECT gh.gi, sum(h.total_pot) AS pot_total, 0::DECIMAL(18,2) AS moved, 0::DECIMAL(18,2) AS transfers
            FROM (SELECT DISTINCT gi, hand_id FROM rb_gh) gh JOIN hands h ON h.hand_id = gh.hand_id GROUP BY gh.gi
            UNION ALL
            SELECT gi, 0, sum(least(loss, gain)), 0 FROM (
                SELECT gh.gi, gh.hand_id,
                       coalesce(sum(-s.net) FILTER (WHERE s.net < 0), 0) AS loss,
                       coalesce(sum(s.net) FILTER (WHERE s.net > 0), 0) AS gain
                FROM (SELECT DISTINCT gi, hand_id FROM rb_gh) gh JOIN seats s ON s.hand_id = gh.hand_id
                JOIN rb_ga ga ON ga.gi = gh.gi AND ga.account = s.player
                GROUP BY gh.gi, gh.hand_id) GROUP BY gi""")
    if "transfers" in tables:
        parts.append("""
            SELECT a.gi, 0, 0, sum(t.amount)
            FROM transfers t JOIN rb_ga a ON a.account = t.account
            JOIN rb_ga b ON b.gi = a.gi AND b.account = t.to_account GROUP BY a.gi""")
    if not parts:
        return zero
    con.register("rb_ga", ga)
    con.register("rb_gh", gh)
    try:
        res = con.sql(f"""
            SELECT gi, sum(pot_total)::DOUBLE AS pot_total, sum(moved)::DOUBLE AS moved,
                   sum(transfers)::DOUBLE AS transfers
            FROM ({' UNION ALL '.join(parts)}) GROUP BY gi""").pl()
    finally:
        con.unregister("rb_ga")
        con.unregister("rb_gh")
    for gi, pot, moved, tr in res.iter_rows():
        pot, moved, tr = float(pot or 0), float(moved or 0), float(tr or 0)
        zero[gi] = {"pot_total": pot, "moved": moved, "transfers": tr,
                    "stake": moved + tr if moved + tr > 0 else pot}
    return zero


# ------------------------------------------------------------------------ rings

def link_rings(cases: list[dict[str, Any]]) -> None:
    """Set ``ring`` and ``related`` on each case (in place).

    ``ring``: connected components of the graph whose nodes are flagged cases
    and whose edges join cases sharing an account; the ring id is the lowest
    case id of the component (singletons have a ring too, their own id).
    ``related``: flagged cases sharing an account with the case, flagged or not.
    """
    flagged_by_account: dict[str, list[str]] = defaultdict(list)
    for c in cases:
        if c["flagged"]:
            for a in c["accounts"]:
                flagged_by_account[a].append(c["case"])
    g = nx.Graph()
    g.add_nodes_from(c["case"] for c in cases if c["flagged"])
    for ids in flagged_by_account.values():
        g.add_edges_from(zip(ids, ids[1:]))
    ring_of = {}
    for comp in nx.connected_components(g):
        rid = "r-" + min(comp).removeprefix("c-")
        for cid in comp:
            ring_of[cid] = rid
    for c in cases:
        rel = {cid for a in c["accounts"] for cid in flagged_by_account.get(a, ())} - {c["case"]}
        c["related"] = sorted(rel)[:100]
        c["ring"] = ring_of.get(c["case"])


# ------------------------------------------------------------------------ build

def build_cases(con: duckdb.DuckDBPyConnection, store: ReviewStore, run_id: str,
                signals: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The whole method of the module doc; returns the cases ranked (rank 1 first)."""
    return register_cases(store, run_id, case_groups(con, signals))


def case_groups(con: duckdb.DuckDBPyConnection, signals: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Steps 1-3 of the module doc: the signals (``signals``, else the warehouse's) merged, with money at stake."""
    if signals is None:
        signals = load_signals(con)
    groups = merge_signals(signals)
    for g, m in zip(groups, money_at_stake(con, groups)):
        g.update(m)
    return groups


def fdr_key(case: dict[str, Any]) -> tuple:
    """The head of the queue's order: flagged first, then ``q_value`` (the estimated false-discovery rate)
    lowest first, a case without one after every case with one."""
    q = case.get("q_value")
    return (not case["flagged"], q is None, q if q is not None else 0.0)


def rank_key(case: dict[str, Any]) -> tuple:
    """The queue's order (step 6 of the module doc): :func:`fdr_key`, then score, then stake, then case id."""
    return (*fdr_key(case), -case["score"], -case["stake"], case["case"])


def register_cases(store: ReviewStore, run_id: str, groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Steps 4-6 of the module doc on :func:`case_groups`' groups: ids and novelty, rings, rank."""
    registered = store.register_run(run_id, groups)
    cases = []
    for g, r in zip(groups, registered):
        cases.append({**g, "case": r["case"], "is_new": r["is_new_case"], "new_hands": r["new_hands"],
                      "status": r["status"], "reopened": r["reopened"], "n_signals": len(g["signals"])})
    link_rings(cases)
    with store.tx() as scon:
        scon.executemany("UPDATE cases SET ring = ? WHERE case_id = ?", [(c["ring"], c["case"]) for c in cases])
    cases.sort(key=rank_key)
    for i, c in enumerate(cases, 1):
        c["rank"] = i
    return cases


def write_tables(con: duckdb.DuckDBPyConnection, cases: list[dict[str, Any]], run_id: str | None) -> None:
    """Replace the warehouse's ``cases``, ``case_signals`` and ``case_hands`` tables (one transaction)."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    strs, f64 = pa.list_(pa.string()), pa.float64()
    cols = {  # Arrow built column by column: Polars' list construction from Python lists is far slower
        "case_id": (pa.string(), [c["case"] for c in cases]),
        "rank": (pa.int32(), [c["rank"] for c in cases]),
        "kind": (pa.string(), [c["kind"] for c in cases]),
        "accounts": (strs, [c["accounts"] for c in cases]),
        "tournaments": (strs, [c["tournaments"] for c in cases]),
        "score": (f64, [c["score"] for c in cases]),
        "p_value": (f64, [c["p_value"] for c in cases]),
        "q_value": (f64, [c.get("q_value") for c in cases]),
        "flagged": (pa.bool_(), [c["flagged"] for c in cases]),
        "hands": (strs, [c["hands"] for c in cases]),
        "new_hands": (strs, [c["new_hands"] for c in cases]),
        "is_new": (pa.bool_(), [c["is_new"] for c in cases]),
        "reopened": (pa.bool_(), [c["reopened"] for c in cases]),
        "status": (pa.string(), [c["status"] for c in cases]),
        "summary": (pa.string(), [c["summary"] for c in cases]),
        "ring": (pa.string(), [c["ring"] for c in cases]),
        "related": (strs, [c["related"] for c in cases]),
        "n_signals": (pa.int32(), [c["n_signals"] for c in cases]),
        "pot_total": (f64, [c["pot_total"] for c in cases]),
        "moved": (f64, [c["moved"] for c in cases]),
        "transfers": (f64, [c["transfers"] for c in cases]),
        "stake": (f64, [c["stake"] for c in cases]),
    }
    ctab = pa.table({k: pa.array(v, type=t) for k, (t, v) in cols.items()})
    sig_rows = [(c["case"], i, s) for c in cases for i, s in enumerate(c["signals"])]
    scols = {
        "case_id": (pa.string(), [r[0] for r in sig_rows]),
        "idx": (pa.int32(), [r[1] for r in sig_rows]),
        "kind": (pa.string(), [r[2]["kind"] for r in sig_rows]),
        "detector": (pa.string(), [str(r[2].get("detector") or "") for r in sig_rows]),
        "accounts": (strs, [[str(a) for a in r[2]["accounts"]] for r in sig_rows]),
        "tournaments": (strs, [[str(t) for t in r[2].get("tournaments") or []] for r in sig_rows]),
        "score": (f64, [float(r[2]["score"]) for r in sig_rows]),
        "p_value": (f64, [None if r[2].get("p_value") is None else float(r[2]["p_value"]) for r in sig_rows]),
        "q_value": (f64, [None if r[2].get("q_value") is None else float(r[2]["q_value"]) for r in sig_rows]),
        "flagged": (pa.bool_(), [bool(r[2].get("flagged")) for r in sig_rows]),
        "hands": (strs, [[str(h) for h in r[2].get("hands") or []] for r in sig_rows]),
        "summary": (pa.string(), [str(r[2].get("summary") or "") for r in sig_rows]),
        "payload": (pa.string(), [json.dumps(r[2], default=str) for r in sig_rows]),
    }
    stab = pa.table({k: pa.array(v, type=t) for k, (t, v) in scols.items()})
    cdf = pl.from_arrow(ctab.select(["case_id", "hands", "new_hands"]))
    ranked = cdf.select("case_id", "hands").explode("hands").drop_nulls("hands").with_columns(
        pl.int_range(pl.len()).over("case_id").cast(pl.Int32).alias("rank"))
    fresh = cdf.select("case_id", "new_hands").explode("new_hands").drop_nulls("new_hands").unique().with_columns(
        pl.lit(True).alias("is_new"))
    hdf = ranked.join(fresh, left_on=["case_id", "hands"], right_on=["case_id", "new_hands"], how="left").select(
        "case_id", pl.col("hands").alias("hand_id"), "rank", pl.col("is_new").fill_null(False))
    con.register("rb_cases", ctab)
    con.register("rb_case_signals", stab)
    con.register("rb_case_hands", hdf.to_arrow())
    try:
        con.execute("BEGIN TRANSACTION")
        con.execute(CASES_DDL)
        con.execute(
            "INSERT INTO cases SELECT case_id, rank, kind, accounts, tournaments, score, p_value, q_value, flagged, hands,"
            " new_hands, is_new, reopened, status, summary, ring, related, n_signals, pot_total, moved, transfers,"
            " stake, ?, ? FROM rb_cases", [run_id, now])
        con.execute("INSERT INTO case_signals SELECT case_id, idx, kind, detector, accounts, tournaments, score,"
                    " p_value, q_value, flagged, hands, summary, payload::JSON FROM rb_case_signals")
        con.execute("INSERT INTO case_hands SELECT case_id, hand_id, rank, is_new FROM rb_case_hands")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        for t in ("rb_cases", "rb_case_signals", "rb_case_hands"):
            con.unregister(t)


def export_record(case: dict[str, Any]) -> dict[str, Any]:
    """The ``cases.jsonl`` line of one case: the fields of evaluation.md in its order, then ``q_value`` (the
    estimated false-discovery rate, null where no test was made)."""
    return {
        "case": case["case"],
        "kind": case["kind"],
        "accounts": [str(a) for a in case["accounts"]],
        "tournaments": [str(t) for t in case["tournaments"]],
        "score": float(case["score"]),
        "flagged": bool(case["flagged"]),
        "hands": [str(h) for h in case["hands"]],
        "summary": str(case["summary"]),
        "q_value": None if case.get("q_value") is None else float(case["q_value"]),
    }


def write_jsonl(path: str | os.PathLike[str], cases: list[dict[str, Any]]) -> Path:
    """Write ``cases.jsonl`` atomically (temporary file, then ``os.replace``), ranked order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(export_record(c), ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path


def publish_cases(con: duckdb.DuckDBPyConnection, store: ReviewStore, run_id: str,
                  jsonl_path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], Path]:
    """Build a run's cases and publish them: review store, warehouse tables and ``cases.jsonl`` as one step.

    Parameters: the warehouse connection (signals in, the case tables out),
    the review store, the run id and where ``cases.jsonl`` goes. Returns the
    ranked cases (as :func:`build_cases`) and the path written.

    Method: the groups are built first (:func:`case_groups`); their review-store
    registration (case ids, new evidence hands, reopened cases, rings) is made
    inside one SQLite transaction that stays open while :func:`write_tables`
    commits the warehouse tables and :func:`write_jsonl` replaces the file,
    and commits last. A run killed
    before that commit leaves the store as the last published run left it
    (SQLite drops an uncommitted transaction), so the next run's ``is_new``,
    ``new_hands`` and ``reopened`` are those of a run that never saw the
    killed one. Investigators' writes to the store wait for the commit
    (``busy_timeout``); their reads do not (WAL).
    """
    groups = case_groups(con)
    with store.tx():
        cases = register_cases(store, run_id, groups)
        write_tables(con, cases, run_id)
        path = write_jsonl(jsonl_path, cases)
    return cases, path


# --------------------------------------------------------------------- terminal

def format_ranked(cases_jsonl_path: str | os.PathLike[str], limit: int = 20, command: str = "railbird") -> str:
    """The ranked cases of a ``cases.jsonl`` as a terminal table, with how to open them.

    Columns: rank, case id, kind, the estimated false-discovery rate (``q_value`` as a percentage; "–"
    where no test was made), the kind's score, flagged, accounts (control characters, escape sequences
    and bidirectional overrides replaced by :func:`~pipelines.lib.safe_text.terminal_safe`, so a player
    name cannot drive the terminal). Ordered as the queue is (:func:`fdr_key`: flagged first, then the
    estimated false-discovery rate), the file's order (the rank) breaking ties; the last line says how
    to open a case.
    """
    path = Path(cases_jsonl_path)
    recs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                recs.append(json.loads(line))
    n_flagged = sum(bool(r.get("flagged")) for r in recs)
    rows = sorted(recs, key=lambda r: fdr_key({"flagged": bool(r.get("flagged")), "q_value": r.get("q_value")}))[:limit]
    lines = [f"{len(recs)} cases, {n_flagged} flagged" + (f"; the first {len(rows)}:" if rows else ".")]
    if rows:
        lines.append(f"{'rank':>4}  {'case':<9}  {'kind':<18}  {'est. FDR':>10}  {'score':>8}  {'flagged':<7}  accounts")
        for i, r in enumerate(rows, 1):
            accounts = terminal_safe(", ".join(str(a) for a in r.get("accounts", [])), width=60)
            lines.append(f"{i:>4}  {terminal_safe(r.get('case', ''), width=9):<9}  {terminal_safe(r.get('kind', ''), width=18):<18}  "
                         f"{fdr_text(r.get('q_value')):>10}  {float(r.get('score', 0)):>8.3f}  "
                         f"{'yes' if r.get('flagged') else 'no':<7}  {accounts}")
        first = terminal_safe(rows[0].get("case", "<id>"))
        lines.append(f"Open them: {command} serve, then http://127.0.0.1:8765/cases/{first} "
                     f"(any case: http://127.0.0.1:8765/cases/<id>)")
    else:
        lines.append(f"Open the queue: {command} serve, then http://127.0.0.1:8765/cases/<id>")
    return "\n".join(lines)
