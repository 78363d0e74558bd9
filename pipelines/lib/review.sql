-- The review store (SQLite): users, sign-in sessions, cases and their decisions, notes, the audit trail.
-- Read by pipelines/lib/review.py; every statement is idempotent (IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    name        TEXT PRIMARY KEY,
    role        TEXT NOT NULL CHECK (role IN ('investigator', 'reviewer', 'admin')),
    salt        BLOB NOT NULL,
    pw_hash     BLOB NOT NULL,
    created_at  TEXT NOT NULL,
    disabled    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash  TEXT PRIMARY KEY,
    user        TEXT NOT NULL REFERENCES users(name),
    csrf        TEXT NOT NULL,
    created_at  REAL NOT NULL,
    expires_at  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cases (
    case_id        TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    accounts       TEXT NOT NULL,          -- JSON list
    tournaments    TEXT NOT NULL,          -- JSON list
    score          REAL NOT NULL,
    q_value        REAL,                   -- estimated false-discovery rate (a store made before it: ReviewStore adds it)
    flagged        INTEGER NOT NULL,
    stake          REAL NOT NULL DEFAULT 0,
    n_hands        INTEGER NOT NULL DEFAULT 0,
    summary        TEXT NOT NULL DEFAULT '',
    ring           TEXT,
    present        INTEGER NOT NULL DEFAULT 1, -- seen in the last run
    first_run      TEXT,
    first_seen_at  TEXT NOT NULL,
    last_run       TEXT,
    last_seen_at   TEXT NOT NULL,
    status         TEXT NOT NULL DEFAULT 'new',
    assignee       TEXT,
    confirm_proposed_by TEXT,
    decided_score  REAL,                   -- evidence when dismissed / closed
    decided_hands  INTEGER,
    reopened       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS cases_kind ON cases(kind);
CREATE INDEX IF NOT EXISTS cases_ring ON cases(ring);
CREATE TABLE IF NOT EXISTS case_accounts (
    case_id  TEXT NOT NULL REFERENCES cases(case_id),
    account  TEXT NOT NULL,
    PRIMARY KEY (case_id, account)
);
CREATE INDEX IF NOT EXISTS case_accounts_account ON case_accounts(account);
CREATE TABLE IF NOT EXISTS case_hands (
    case_id    TEXT NOT NULL REFERENCES cases(case_id),
    hand_id    TEXT NOT NULL,
    first_run  TEXT,
    first_at   TEXT NOT NULL,
    PRIMARY KEY (case_id, hand_id)
);
CREATE INDEX IF NOT EXISTS case_hands_hand ON case_hands(hand_id);
CREATE TABLE IF NOT EXISTS runs (
    run_id  TEXT PRIMARY KEY,
    at      TEXT NOT NULL,
    n_cases INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS notes (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id  TEXT NOT NULL,
    author   TEXT NOT NULL,
    at       TEXT NOT NULL,
    body     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TEXT NOT NULL,
    actor    TEXT NOT NULL,
    case_id  TEXT,
    action   TEXT NOT NULL,
    field    TEXT,
    old      TEXT,
    new      TEXT,
    detail   TEXT
);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER IF NOT EXISTS cases_no_delete BEFORE DELETE ON cases
BEGIN SELECT RAISE(ABORT, 'cases are never deleted from the review store'); END;
CREATE TRIGGER IF NOT EXISTS case_hands_no_delete BEFORE DELETE ON case_hands
BEGIN SELECT RAISE(ABORT, 'evidence hands are never deleted from the review store'); END;
CREATE TRIGGER IF NOT EXISTS notes_no_update BEFORE UPDATE ON notes
BEGIN SELECT RAISE(ABORT, 'notes are append-only'); END;
CREATE TRIGGER IF NOT EXISTS notes_no_delete BEFORE DELETE ON notes
BEGIN SELECT RAISE(ABORT, 'notes are append-only'); END;
