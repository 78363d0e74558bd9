"""The review store: investigators' decisions, kept apart from the warehouse.

The nightly run rebuilds the DuckDB warehouse; nothing an investigator decides
may live there. This module keeps it in its own SQLite file
(``settings.review_db``), opened in WAL mode so the web app can read while a
run registers its cases, with every change made inside one ``BEGIN
IMMEDIATE`` transaction.

Tables:

- ``cases``: the case registry. The run writes the evidence columns (kind,
  accounts, score, hands, ...) and the case id it keeps from run to run; the
  investigators own the workflow columns (status, assignee, the pending
  confirmation). A run never touches the workflow columns except to reopen a
  dismissed case whose evidence grew materially, and then it says so in the
  audit trail.
- ``case_accounts``: one row per (case, account), the index used to match a
  run's groups to known cases by kind and shared accounts.
- ``case_hands``: every evidence hand a case has ever shown, with the run that
  first showed it (what makes a hand ``new``).
- ``notes`` and ``audit``: append-only; triggers abort any UPDATE or DELETE.
  Triggers also forbid deleting a case or an evidence hand: nothing a run
  or a user does can lose a case.
- ``users`` and ``sessions``: sign-in (:mod:`pipelines.lib.signin`). Passwords
  are hashed with scrypt and a per-user random salt; sessions are random
  tokens stored as SHA-256 hashes, with an expiry and a per-session CSRF token.

The two-person rule: ``confirmed`` is never set directly. One user proposes
confirmation (:meth:`ReviewStore.propose_confirmation`); a different user with
the ``reviewer`` (or ``admin``) role approves it
(:meth:`ReviewStore.approve_confirmation`). Every workflow change is checked
by :func:`pipelines.lib.workflow.refusal`, the one statement of the role
rules; :func:`allowed_actions` (re-exported here) is what the app shows.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from pipelines.lib.errors import RailbirdError
from pipelines.lib.signin import SESSION_TTL_SECONDS, SignIn, hash_password, now_iso
from pipelines.lib.workflow import CLOSED_STATUSES, ROLES, STATUSES, allowed_actions, refusal

__all__ = ["CLOSED_STATUSES", "ROLES", "SESSION_TTL_SECONDS", "STATUSES", "STATUS_LABELS", "ReviewStore",
           "allowed_actions", "hash_password", "now_iso", "open_store"]

STATUS_LABELS = {
    "new": "new",
    "in_review": "in review",
    "confirmed": "confirmed",
    "dismissed": "dismissed (false positive)",
    "closed_insufficient_evidence": "closed: insufficient evidence",
}

# A dismissed / closed case is reopened only when its evidence grows materially:
# score up by at least max(REOPEN_SCORE_ABS, REOPEN_SCORE_REL * |old score|), or
# evidence hands up by at least REOPEN_HANDS_GROWTH (50 %).
REOPEN_SCORE_ABS = 0.1
REOPEN_SCORE_REL = 0.1
REOPEN_HANDS_GROWTH = 0.5

#: the store's tables, indexes and triggers (SQLite; idempotent)
SCHEMA = (Path(__file__).with_name("review.sql")).read_text(encoding="utf-8")


def overlaps(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether two account sets of one kind describe the same group.

    They must share at least ``min(2, |a|, |b|)`` accounts: two pairs are the
    same group only when equal, a pair belongs to a ring that contains both
    its accounts, and a one-account case (a seat hand-off) to any case of its
    kind that names the account.
    """
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return False
    return len(sa & sb) >= min(2, len(sa), len(sb))


class ReviewStore(SignIn):
    """One SQLite review store; every public method is one transaction (users and sessions: :class:`SignIn`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
        self.con.row_factory = sqlite3.Row
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA foreign_keys=ON")
        self.con.execute("PRAGMA busy_timeout=30000")
        self.con.executescript(SCHEMA)
        self._add_missing_columns()

    def _add_missing_columns(self) -> None:
        """Bring a store made by an older railbird up to :data:`SCHEMA`: ``cases.q_value`` (the estimated
        false-discovery rate), NULL until the next run registers its cases. Two processes opening the
        store at once may both try: the second finds the column there."""
        cols = {r[1] for r in self.con.execute("PRAGMA table_info(cases)").fetchall()}
        if "q_value" not in cols:
            try:
                self.con.execute("ALTER TABLE cases ADD COLUMN q_value REAL")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):
                    raise

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "ReviewStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error.

        Inside an open transaction of this store it joins that one: the
        outermost ``tx()`` commits or rolls back everything, so a caller can
        make several methods (and work outside the store) one commit, as
        :func:`pipelines.lib.cases.publish_cases` does.
        """
        if self.con.in_transaction:
            yield self.con
            return
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    # ------------------------------------------------------------------ audit

    @staticmethod
    def _audit(con: sqlite3.Connection, actor: str, case_id: str | None, action: str,
               field: str | None = None, old: Any = None, new: Any = None, detail: str | None = None) -> None:
        con.execute(
            "INSERT INTO audit(at, actor, case_id, action, field, old, new, detail) VALUES (?,?,?,?,?,?,?,?)",
            [now_iso(), actor, case_id, action, field,
             None if old is None else str(old), None if new is None else str(new), detail],
        )

    def audit(self, case_id: str | None = None) -> list[dict[str, Any]]:
        if case_id is None:
            rows = self.con.execute("SELECT * FROM audit ORDER BY id").fetchall()
        else:
            rows = self.con.execute("SELECT * FROM audit WHERE case_id = ? ORDER BY id", [case_id]).fetchall()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------------ cases

    def case(self, case_id: str) -> dict[str, Any] | None:
        """One case with its workflow state (``unconfirmed_by`` too: see :func:`allowed_actions`), or None."""
        row = self.con.execute("SELECT * FROM cases WHERE case_id = ?", [case_id]).fetchone()
        if row is None:
            return None
        return {**_case_row(row), "unconfirmed_by": _unconfirmed_by(self.con, case_id)}

    def allowed_actions(self, case_id: str, user: str) -> frozenset[str]:
        """What ``user`` may do to the case now (:func:`pipelines.lib.workflow.allowed_actions`)."""
        case, u = self.case(case_id), self.user(user)
        return frozenset() if case is None or u is None or u["disabled"] else allowed_actions(u["role"], case, user)

    def cases_of_account(self, account: str) -> list[dict[str, Any]]:
        rows = self.con.execute(
            "SELECT c.* FROM cases c JOIN case_accounts a ON a.case_id = c.case_id WHERE a.account = ? "
            "ORDER BY c.score DESC", [account]).fetchall()
        return [_case_row(r) for r in rows]

    def case_hands(self, case_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.con.execute(
            "SELECT hand_id, first_run, first_at FROM case_hands WHERE case_id = ? ORDER BY first_at, hand_id",
            [case_id]).fetchall()]

    def notes(self, case_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.con.execute(
            "SELECT * FROM notes WHERE case_id = ? ORDER BY id", [case_id]).fetchall()]

    @staticmethod
    def _queue_where(*, kind: str | None = None, status: str | None = None, assignee: str | None = None,
                     score_min: float | None = None, score_max: float | None = None,
                     q_max: float | None = None, date_from: str | None = None, date_to: str | None = None, flagged: bool | None = True,
                     account: str | None = None, ring: str | None = None, date_field: str = "last_seen",
                     search: str | None = None, only: list[str] | None = None) -> tuple[str, list[Any]]:
        """The queue's WHERE clause (fixed text) and its bound parameters; see :meth:`queue`."""
        # cases of the last run, and every case someone has worked on even if the last run no longer shows it
        where, params = ["(present = 1 OR status <> 'new' OR assignee IS NOT NULL)"], []
        for col, val in (("kind", kind), ("status", status)):
            if val:
                where.append(f"{col} = ?")
                params.append(val)
        if assignee == "-":
            where.append("assignee IS NULL")
        elif assignee:
            where.append("assignee = ?")
            params.append(assignee)
        if score_min is not None:
            where.append("score >= ?")
            params.append(score_min)
        if score_max is not None:
            where.append("score <= ?")
            params.append(score_max)
        if q_max is not None:
            where.append("q_value <= ?")
            params.append(q_max)
        day_col = "first_seen_at" if date_field == "first_seen" else "last_seen_at"  # a fixed column name
        if date_from:
            where.append(f"substr({day_col}, 1, 10) >= ?")
            params.append(date_from)
        if date_to:
            where.append(f"substr({day_col}, 1, 10) <= ?")
            params.append(date_to)
        if flagged is not None:
            where.append("flagged = ?")
            params.append(int(flagged))
        if account:
            where.append("case_id IN (SELECT case_id FROM case_accounts WHERE account = ?)")
            params.append(account)
        if ring:
            where.append("ring = ?")
            params.append(ring)
        if only is not None:
            where.append("case_id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(only)))
        if search and search.strip():
            # part of an account name (LIKE with its wildcards escaped), a hand id or a case id
            text = search.strip()
            like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            where.append("(case_id IN (SELECT case_id FROM case_accounts WHERE account LIKE ? ESCAPE '\\')"
                         " OR case_id IN (SELECT case_id FROM case_hands WHERE hand_id = ?) OR case_id = ?)")
            params += [like, text, text]
        return " AND ".join(where), params

    def queue(self, *, sort: str = "rank", desc: bool = True, limit: int = 50, offset: int = 0,
              **filters: Any) -> list[dict[str, Any]]:
        """One page of the case queue, filtered and sorted in SQL with bound parameters.

        ``filters``: ``kind``, ``status``, ``assignee`` ("-" for nobody),
        ``score_min`` / ``score_max``, ``q_max`` (estimated false-discovery rate at most; a case
        without one is left out), ``date_from`` / ``date_to``
        (YYYY-MM-DD: the day a case was last seen by a run, or with
        ``date_field="first_seen"`` the day it was opened), ``flagged``
        (True, False or None for both), ``account`` (exact), ``ring``,
        ``search`` (part of an account name, case-insensitive for ASCII, or
        an evidence hand id, or a case id), ``only`` (these case ids). ``sort`` is one of rank (flagged,
        estimated false-discovery rate lowest first, score, stake: the run's rank), fdr (the estimated
        false-discovery rate alone; "desc" = strongest first), score, stake, case, last_seen, status,
        kind, hands;
        ``limit`` rows from ``offset``. :meth:`queue_count` counts the same
        filters.
        """
        where, params = self._queue_where(**filters)
        direction = "DESC" if desc else "ASC"
        against = "ASC" if desc else "DESC"  # a false-discovery rate: lower is stronger
        # a case without a q-value comes after every case with one, whichever way
        fdr = f"q_value IS NULL {'ASC' if desc else 'DESC'}, q_value {against}"
        orders = {
            "rank": f"flagged {direction}, {fdr}, score {direction}, stake {direction}",
            "fdr": fdr,
            "score": f"score {direction}",
            "stake": f"stake {direction}",
            "case": f"case_id {direction}",
            "last_seen": f"last_seen_at {direction}",
            "status": f"status {direction}",
            "kind": f"kind {direction}",
            "hands": f"n_hands {direction}",
        }
        order = orders.get(sort, orders["rank"])  # fixed strings only: never the request's text
        # the page first, then its new evidence hands and ring sizes: per page, not per matching case
        rows = self.con.execute(
            "SELECT *, (SELECT count(*) FROM case_hands h WHERE h.case_id = cases.case_id AND h.first_run = cases.last_run"
            " AND cases.first_run <> cases.last_run) AS new_hands,"
            " (SELECT count(*) FROM main.cases r WHERE r.ring = cases.ring) AS ring_cases"
            f" FROM (SELECT * FROM main.cases WHERE {where} ORDER BY {order}, case_id LIMIT ? OFFSET ?) AS cases"
            f" ORDER BY {order}, case_id",
            [*params, int(limit), max(int(offset), 0)]).fetchall()
        return [_case_row(r) for r in rows]

    def queue_ids(self, **filters: Any) -> list[str]:
        """The ids of every case :meth:`queue` pages through with these ``filters``, unordered."""
        where, params = self._queue_where(**filters)
        return [r[0] for r in self.con.execute(f"SELECT case_id FROM cases WHERE {where}", params).fetchall()]

    def queue_count(self, **filters: Any) -> int:
        """How many cases :meth:`queue` pages through with these ``filters``."""
        where, params = self._queue_where(**filters)
        return int(self.con.execute(f"SELECT count(*) FROM cases WHERE {where}", params).fetchone()[0])

    def assignees(self) -> list[str]:
        return [r[0] for r in self.con.execute(
            "SELECT DISTINCT assignee FROM cases WHERE assignee IS NOT NULL ORDER BY 1").fetchall()]

    # --------------------------------------------------------------- workflow

    def _get_case(self, con: sqlite3.Connection, case_id: str) -> sqlite3.Row:
        row = con.execute("SELECT * FROM cases WHERE case_id = ?", [case_id]).fetchone()
        if row is None:
            raise RailbirdError(f"no case {case_id!r}")
        return row

    def _role(self, con: sqlite3.Connection, user: str) -> str:
        row = con.execute("SELECT role FROM users WHERE name = ?", [user]).fetchone()
        if row is None:
            raise RailbirdError(f"no user {user!r}")
        return row["role"]

    def _check(self, con: sqlite3.Connection, case_id: str, actor: str, action: str) -> sqlite3.Row:
        """The case row, once :func:`refusal` lets ``actor`` take ``action`` on it; else RailbirdError."""
        role = self._role(con, actor)
        row = self._get_case(con, case_id)
        why = refusal(role, {**dict(row), "unconfirmed_by": _unconfirmed_by(con, case_id)}, actor, action)
        if why:
            raise RailbirdError(why)
        return row

    def set_status(self, case_id: str, status: str, actor: str, note: str | None = None) -> None:
        """Move a case to a status other than ``confirmed`` (which needs two people), as the role rules allow."""
        with self.tx() as con:
            row = self._check(con, case_id, actor, f"status:{status}")
            if note:
                self._note(con, case_id, actor, note)
            if row["status"] == status:
                return
            decided = (row["score"], row["n_hands"]) if status in CLOSED_STATUSES else (None, None)
            con.execute("UPDATE cases SET status = ?, confirm_proposed_by = NULL, decided_score = ?, decided_hands = ?, "
                        "reopened = 0 WHERE case_id = ?", [status, *decided, case_id])
            self._audit(con, actor, case_id, "status", "status", row["status"], status, note)
            if row["confirm_proposed_by"]:
                self._audit(con, actor, case_id, "confirmation_withdrawn", "confirm_proposed_by",
                            row["confirm_proposed_by"], None, None)

    def assign(self, case_id: str, assignee: str | None, actor: str) -> None:
        assignee = assignee or None
        with self.tx() as con:
            if assignee is not None:
                self._role(con, assignee)
            row = self._check(con, case_id, actor, "assign")
            if row["assignee"] == assignee:
                return
            con.execute("UPDATE cases SET assignee = ? WHERE case_id = ?", [assignee, case_id])
            self._audit(con, actor, case_id, "assign", "assignee", row["assignee"], assignee)

    def _note(self, con: sqlite3.Connection, case_id: str, actor: str, body: str) -> None:
        body = body.strip()
        if not body:
            return
        con.execute("INSERT INTO notes(case_id, author, at, body) VALUES (?,?,?,?)", [case_id, actor, now_iso(), body])
        self._audit(con, actor, case_id, "note", "notes", None, body[:200])

    def add_note(self, case_id: str, actor: str, body: str) -> None:
        with self.tx() as con:
            self._check(con, case_id, actor, "note")
            self._note(con, case_id, actor, body)

    def propose_confirmation(self, case_id: str, actor: str, note: str | None = None) -> None:
        """First half of the two-person rule: the case waits, in review, for a second reviewer."""
        with self.tx() as con:
            row = self._check(con, case_id, actor, "propose")
            if note:
                self._note(con, case_id, actor, note)
            con.execute("UPDATE cases SET status = 'in_review', confirm_proposed_by = ? WHERE case_id = ?",
                        [actor, case_id])
            if row["status"] != "in_review":
                self._audit(con, actor, case_id, "status", "status", row["status"], "in_review", note)
            self._audit(con, actor, case_id, "confirmation_proposed", "confirm_proposed_by",
                        row["confirm_proposed_by"], actor, note)

    def approve_confirmation(self, case_id: str, actor: str, note: str | None = None) -> None:
        """Second half: a reviewer other than the proposer confirms the case."""
        with self.tx() as con:
            row = self._check(con, case_id, actor, "approve")
            if note:
                self._note(con, case_id, actor, note)
            con.execute("UPDATE cases SET status = 'confirmed', confirm_proposed_by = NULL WHERE case_id = ?", [case_id])
            self._audit(con, actor, case_id, "status", "status", row["status"], "confirmed",
                        f"approved; proposed by {row['confirm_proposed_by']}")

    def reject_confirmation(self, case_id: str, actor: str, note: str | None = None) -> None:
        with self.tx() as con:
            row = self._check(con, case_id, actor, "reject")
            if note:
                self._note(con, case_id, actor, note)
            con.execute("UPDATE cases SET confirm_proposed_by = NULL WHERE case_id = ?", [case_id])
            self._audit(con, actor, case_id, "confirmation_rejected", "confirm_proposed_by",
                        row["confirm_proposed_by"], None, note)

    # ------------------------------------------------------ nightly registration

    def _continue_case(self, con: sqlite3.Connection, actor: str, cid: str, row: sqlite3.Row, g: dict[str, Any],
                       hands: list[str], hands_of: dict[str, set[str]], run_id: str, at: str) -> tuple[str, bool]:
        """Update known case ``cid`` with this run's group ``g``; returns its status and whether it reopened."""
        reopened = False
        old_hands = hands_of.get(cid, set())
        n_total = len(old_hands | set(hands))
        status = row["status"]
        if status in CLOSED_STATUSES and row["decided_score"] is not None:
            reasons = _reopen_reasons(row, float(g["score"]), n_total)
            if reasons:
                reopened = True
                self._audit(con, actor, cid, "reopened", "status", status, "in_review",
                            "evidence grew materially since it was " + STATUS_LABELS[status] + ": "
                            + "; ".join(reasons))
                status = "in_review"
        if set(g["accounts"]) != set(json.loads(row["accounts"])):
            self._audit(con, actor, cid, "accounts", "accounts", row["accounts"],
                        json.dumps(sorted(g["accounts"])), "the group changed between runs")
        con.execute(
            "UPDATE cases SET accounts = ?, tournaments = ?, score = ?, q_value = ?, flagged = ?, stake = ?, n_hands = ?,"
            " summary = ?, ring = ?, present = 1, last_run = ?, last_seen_at = ?, status = ?,"
            " reopened = CASE WHEN ? THEN 1 ELSE reopened END,"
            " decided_score = CASE WHEN ? THEN NULL ELSE decided_score END,"
            " decided_hands = CASE WHEN ? THEN NULL ELSE decided_hands END WHERE case_id = ?",
            [json.dumps(sorted(g["accounts"])), json.dumps(sorted(g.get("tournaments") or [])),
             float(g["score"]), _q(g), int(bool(g["flagged"])), float(g.get("stake") or 0), n_total,
             g.get("summary") or "", g.get("ring"), run_id, at, status,
             reopened, reopened, reopened, cid])
        return status, reopened

    def register_run(self, run_id: str, groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Give each of a run's case groups its lasting case id, in one transaction.

        Each group (``kind``, ``accounts``, ``tournaments``, ``score``,
        ``q_value`` (optional), ``flagged``, ``hands``, ``stake``, ``summary``, ``ring_key``) is
        matched to a known case of the same kind whose accounts overlap
        (:func:`overlaps`); where several match, the pair with the highest
        Jaccard similarity of accounts wins, greedily, so one known case goes
        to one group. Unmatched groups get new ids ``c-000001``, ...

        Returns, per group in input order: ``case`` (id), ``is_new_case``,
        ``new_hands`` (evidence hands no earlier run showed), ``status``,
        ``reopened`` (this run reopened a dismissed case). Cases not seen in
        this run stay in the store with ``present = 0``; decisions, notes and
        audit rows are never touched except to reopen.
        """
        at = now_iso()
        with self.tx() as con:
            if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
                run_id = f"{run_id}#{secrets.token_hex(3)}"  # a run materialised twice: still distinct
            match, rows_of, hands_of = _match_known_cases(con, groups)
            seq = int((con.execute("SELECT value FROM meta WHERE key = 'case_seq'").fetchone() or ["0"])[0])
            con.execute("UPDATE cases SET present = 0")
            out = []
            stale_accounts: list[tuple[str]] = []
            account_rows: list[tuple[str, str]] = []
            hand_rows: list[tuple[str, str, str, str]] = []
            actor = f"run:{run_id}"
            for gi, g in enumerate(groups):
                hands = list(dict.fromkeys(g.get("hands") or []))
                cid = match.get(gi)
                reopened = False
                if cid is None:
                    seq += 1
                    cid = f"c-{seq:06d}"
                    con.execute(
                        "INSERT INTO cases(case_id, kind, accounts, tournaments, score, q_value, flagged, stake, n_hands,"
                        " summary, ring, present, first_run, first_seen_at, last_run, last_seen_at, status) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,1,?,?,?,?,'new')",
                        [cid, g["kind"], json.dumps(sorted(g["accounts"])), json.dumps(sorted(g.get("tournaments") or [])),
                         float(g["score"]), _q(g), int(bool(g["flagged"])), float(g.get("stake") or 0), len(hands),
                         g.get("summary") or "", g.get("ring"), run_id, at, run_id, at])
                    self._audit(con, actor, cid, "opened", "status", None, "new",
                                f"{len(hands)} evidence hands, score {float(g['score']):.4g}")
                    status, is_new = "new", True
                else:
                    status, reopened = self._continue_case(con, actor, cid, rows_of[cid], g, hands, hands_of, run_id, at)
                    is_new = False
                    stale_accounts.append((cid,))
                account_rows.extend((cid, a) for a in sorted(set(g["accounts"])))
                before = hands_of.get(cid, set())
                new_hands = [h for h in hands if h not in before]
                hand_rows.extend((cid, h, run_id, at) for h in new_hands)
                if new_hands and not is_new:
                    self._audit(con, actor, cid, "evidence", "hands", len(before), len(before) + len(new_hands),
                                f"{len(new_hands)} new evidence hands")
                out.append({"case": cid, "is_new_case": is_new, "new_hands": new_hands if not is_new else hands,
                            "status": status, "reopened": reopened})
            con.executemany("DELETE FROM case_accounts WHERE case_id = ?", stale_accounts)
            con.executemany("INSERT INTO case_accounts(case_id, account) VALUES (?, ?)", account_rows)
            con.executemany("INSERT INTO case_hands(case_id, hand_id, first_run, first_at) VALUES (?,?,?,?)", hand_rows)
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('case_seq', ?)", [str(seq)])
            con.execute("INSERT INTO runs(run_id, at, n_cases) VALUES (?,?,?)", [run_id, at, len(groups)])
        return out


def _match_known_cases(con: sqlite3.Connection, groups: list[dict[str, Any]]
                       ) -> tuple[dict[int, str], dict[str, sqlite3.Row], dict[str, set[str]]]:
    """Which known case each of a run's groups continues: ``(match, rows_of, hands_of)``.

    ``match`` maps a group's index to a known case of the same kind whose accounts
    overlap (:func:`overlaps`); where several match, the highest Jaccard similarity of
    accounts wins, greedily, so one known case goes to one group. ``rows_of`` holds the
    known cases' rows and ``hands_of`` their evidence hands.
    """
    by_account: dict[tuple[str, str], set[str]] = {}
    for r in con.execute("SELECT c.case_id, c.kind, a.account FROM cases c "
                         "JOIN case_accounts a ON a.case_id = c.case_id").fetchall():
        by_account.setdefault((r["kind"], r["account"]), set()).add(r["case_id"])
    accounts_of: dict[str, frozenset[str]] = {}
    rows_of: dict[str, sqlite3.Row] = {}
    for r in con.execute("SELECT * FROM cases").fetchall():
        accounts_of[r["case_id"]] = frozenset(json.loads(r["accounts"]))
        rows_of[r["case_id"]] = r
    hands_of: dict[str, set[str]] = {}
    for cid_, hid_ in con.execute("SELECT case_id, hand_id FROM case_hands").fetchall():
        hands_of.setdefault(cid_, set()).add(hid_)
    candidates: list[tuple[float, int, str]] = []
    for gi, g in enumerate(groups):
        acc = frozenset(g["accounts"])
        seen: set[str] = set()
        for a in acc:
            seen |= by_account.get((g["kind"], a), set())
        for cid in seen:
            other = accounts_of[cid]
            if overlaps(acc, other):
                candidates.append((len(acc & other) / len(acc | other), gi, cid))
    candidates.sort(key=lambda t: (-t[0], t[1], t[2]))
    match: dict[int, str] = {}
    taken: set[str] = set()
    for _, gi, cid in candidates:
        if gi not in match and cid not in taken:
            match[gi] = cid
            taken.add(cid)
    return match, rows_of, hands_of


def _reopen_reasons(row: sqlite3.Row, score: float, n_total: int) -> list[str]:
    """Why a closed case's evidence grew materially since its decision (none: it stays closed)."""
    reasons = []
    margin = max(REOPEN_SCORE_ABS, REOPEN_SCORE_REL * abs(row["decided_score"]))
    if score >= row["decided_score"] + margin:
        reasons.append(f"score {row['decided_score']:.4g} -> {score:.4g}")
    if row["decided_hands"] is not None and n_total >= max(
            row["decided_hands"] + 1, row["decided_hands"] * (1 + REOPEN_HANDS_GROWTH)):
        reasons.append(f"evidence hands {row['decided_hands']} -> {n_total}")
    return reasons


def _unconfirmed_by(con: sqlite3.Connection, case_id: str) -> str | None:
    """Who moved the case off ``confirmed``, if no close or confirmation came after; else None."""
    row = con.execute(
        "SELECT actor, old, new FROM audit WHERE case_id = ? AND action = 'status' AND (old = 'confirmed' "
        "OR new IN ('confirmed', 'dismissed', 'closed_insufficient_evidence')) ORDER BY id DESC LIMIT 1",
        [case_id]).fetchone()
    return row["actor"] if row is not None and row["old"] == "confirmed" and row["new"] not in CLOSED_STATUSES else None


def _q(group: dict[str, Any]) -> float | None:
    """A group's ``q_value`` as the store keeps it: a float, or None (none, or NaN)."""
    q = group.get("q_value")
    return None if q is None or q != q else float(q)


def _case_row(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    d["accounts"] = json.loads(d["accounts"])
    d["tournaments"] = json.loads(d["tournaments"])
    d["flagged"] = bool(d["flagged"])
    d["status_label"] = STATUS_LABELS.get(d["status"], d["status"])
    return d


def open_store(path: str | os.PathLike[str]) -> ReviewStore:
    return ReviewStore(path)
