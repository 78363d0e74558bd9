"""Sign-in: the review store's users (roles, scrypt password hashes) and sessions.

:class:`SignIn` is the part of :class:`pipelines.lib.review.ReviewStore`
that the web app's sign-in and ``railbird users`` use; the store inherits
it, so the tables live in the same SQLite file and every change is one
transaction of the store (``self.tx()``) with its audit row
(``self._audit``).

- passwords: scrypt (N=2^14, r=8, p=1; RFC 7914) with a per-user random
  salt; unknown users cost the same time as known ones;
- sessions: random tokens (``secrets.token_urlsafe``) stored only as their
  SHA-256, with an expiry and a per-session CSRF token.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import secrets
import time
from typing import Any

from pipelines.lib.errors import RailbirdError
from pipelines.lib.workflow import ROLES

__all__ = ["SESSION_TTL_SECONDS", "SignIn", "hash_password", "now_iso"]

SESSION_TTL_SECONDS = 8 * 3600
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1


def now_iso() -> str:
    """The time now, UTC, as the store writes it (ISO 8601 with microseconds and Z)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def hash_password(password: str, salt: bytes) -> bytes:
    """scrypt (N=2^14, r=8, p=1) of the UTF-8 password with the user's salt."""
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class SignIn:
    """Users and sessions of a review store (a base of ReviewStore: uses its ``con``, ``tx`` and ``_audit``)."""

    # ------------------------------------------------------------------ users

    def add_user(self, name: str, role: str, password: str, actor: str = "cli") -> None:
        if role not in ROLES:
            raise RailbirdError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
        if not name or len(name) > 64 or any(c.isspace() or ord(c) < 32 for c in name):
            raise RailbirdError(f"bad user name {name!r}: 1-64 characters, no spaces or control characters")
        if len(password) < 8:
            raise RailbirdError("password too short: at least 8 characters")
        salt = secrets.token_bytes(16)
        with self.tx() as con:
            if con.execute("SELECT 1 FROM users WHERE name = ?", [name]).fetchone():
                raise RailbirdError(f"user {name!r} exists")
            con.execute("INSERT INTO users(name, role, salt, pw_hash, created_at) VALUES (?,?,?,?,?)",
                        [name, role, salt, hash_password(password, salt), now_iso()])
            self._audit(con, actor, None, "user_added", "role", None, role, name)

    def set_password(self, name: str, password: str, actor: str = "cli") -> None:
        if len(password) < 8:
            raise RailbirdError("password too short: at least 8 characters")
        salt = secrets.token_bytes(16)
        with self.tx() as con:
            if con.execute("UPDATE users SET salt = ?, pw_hash = ? WHERE name = ?",
                           [salt, hash_password(password, salt), name]).rowcount != 1:
                raise RailbirdError(f"no user {name!r}")
            con.execute("DELETE FROM sessions WHERE user = ?", [name])
            self._audit(con, actor, None, "password_set", None, None, None, name)

    def set_role(self, name: str, role: str, actor: str = "cli") -> None:
        if role not in ROLES:
            raise RailbirdError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
        with self.tx() as con:
            row = con.execute("SELECT role FROM users WHERE name = ?", [name]).fetchone()
            if row is None:
                raise RailbirdError(f"no user {name!r}")
            con.execute("UPDATE users SET role = ? WHERE name = ?", [role, name])
            self._audit(con, actor, None, "role_set", "role", row["role"], role, name)

    def users(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.con.execute(
            "SELECT name, role, created_at, disabled FROM users ORDER BY name").fetchall()]

    def user(self, name: str) -> dict[str, Any] | None:
        row = self.con.execute("SELECT name, role, disabled FROM users WHERE name = ?", [name]).fetchone()
        return dict(row) if row else None

    def verify_password(self, name: str, password: str) -> bool:
        """Constant-time comparison of the scrypt hash; unknown users cost the same."""
        row = self.con.execute("SELECT salt, pw_hash, disabled FROM users WHERE name = ?", [name]).fetchone()
        salt, stored = (row["salt"], row["pw_hash"]) if row else (b"\0" * 16, b"\0" * 32)
        ok = hmac.compare_digest(hash_password(password, salt), stored)
        return bool(row) and ok and not row["disabled"]

    # --------------------------------------------------------------- sessions

    def create_session(self, user: str, ttl: float = SESSION_TTL_SECONDS) -> tuple[str, str]:
        """A new session: returns (token for the cookie, CSRF token for forms)."""
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        t = time.time()
        with self.tx() as con:
            con.execute("DELETE FROM sessions WHERE expires_at < ?", [t])
            con.execute("INSERT INTO sessions(token_hash, user, csrf, created_at, expires_at) VALUES (?,?,?,?,?)",
                        [_token_hash(token), user, csrf, t, t + ttl])
        return token, csrf

    def session(self, token: str | None) -> dict[str, Any] | None:
        """The live session of a cookie token (user, role, csrf), or None."""
        if not token:
            return None
        row = self.con.execute(
            "SELECT s.user, s.csrf, s.expires_at, u.role, u.disabled FROM sessions s JOIN users u ON u.name = s.user "
            "WHERE s.token_hash = ?", [_token_hash(token)]).fetchone()
        if row is None or row["expires_at"] < time.time() or row["disabled"]:
            return None
        return dict(row)

    def end_session(self, token: str | None) -> None:
        if token:
            with self.tx() as con:
                con.execute("DELETE FROM sessions WHERE token_hash = ?", [_token_hash(token)])
