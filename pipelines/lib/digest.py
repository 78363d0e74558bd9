"""The morning digest: the flagged cases a night opened or reopened, sent to the team.

Configured in one place, ``RAILBIRD_HOME/railbird.toml`` (section
``[digest]``), each key overridable by an environment variable::

    [digest]
    base_url = "https://railbird.example.org"   # RAILBIRD_BASE_URL: where the web app answers (links)
    webhook_url = "https://chat.example.org/hooks/abc"  # RAILBIRD_DIGEST_WEBHOOK: JSON POST
    smtp_host = "mail.example.org"              # RAILBIRD_DIGEST_SMTP_HOST
    smtp_port = 25                              # RAILBIRD_DIGEST_SMTP_PORT
    smtp_starttls = false                       # RAILBIRD_DIGEST_SMTP_STARTTLS (1/true)
    smtp_user = "railbird"                      # RAILBIRD_DIGEST_SMTP_USER (password: RAILBIRD_DIGEST_SMTP_PASSWORD only)
    mail_from = "railbird@example.org"          # RAILBIRD_DIGEST_FROM
    mail_to = ["integrity@example.org"]         # RAILBIRD_DIGEST_TO (comma-separated)

Neither a webhook nor a mail recipient: nothing is sent, and the digest is
still written beside the run's output (``OUT/digests/<run>.json``).

The webhook body is JSON (``text``, one line per case, which chat tools
show as is, and ``cases``, one object per case with its link); the mail is
plain text. Both are built by encoders (``json``, ``email.message``), never
by pasting; names in the text are stripped of control characters.
"""

from __future__ import annotations

import json
import os
import smtplib
import tomllib
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from pipelines.lib.case_story import fdr_text
from pipelines.lib import paths
from pipelines.lib.errors import RailbirdError
from pipelines.lib.safe_text import terminal_safe

__all__ = ["DigestConfig", "build_digest", "digest_cases", "load_config", "send_digest", "write_digest"]

_ENV = {
    "base_url": "RAILBIRD_BASE_URL", "webhook_url": "RAILBIRD_DIGEST_WEBHOOK",
    "smtp_host": "RAILBIRD_DIGEST_SMTP_HOST", "smtp_port": "RAILBIRD_DIGEST_SMTP_PORT",
    "smtp_starttls": "RAILBIRD_DIGEST_SMTP_STARTTLS", "smtp_user": "RAILBIRD_DIGEST_SMTP_USER",
    "mail_from": "RAILBIRD_DIGEST_FROM", "mail_to": "RAILBIRD_DIGEST_TO",
}


@dataclass(frozen=True)
class DigestConfig:
    """Where the digest goes; see the module doc for the file and the variables."""
    base_url: str = "http://127.0.0.1:8765"
    webhook_url: str = ""
    smtp_host: str = ""
    smtp_port: int = 25
    smtp_starttls: bool = False
    smtp_user: str = ""
    smtp_password: str = field(default="", repr=False)
    mail_from: str = "railbird@localhost"
    mail_to: tuple[str, ...] = ()
    timeout: float = 10.0

    @property
    def enabled(self) -> bool:
        return bool(self.webhook_url or (self.smtp_host and self.mail_to))


def config_path() -> Path:
    """``RAILBIRD_HOME/railbird.toml``, the deployment's one configuration file."""
    return paths.home() / "railbird.toml"


def load_config(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> DigestConfig:
    """The ``[digest]`` section of ``path`` (default :func:`config_path`), with environment variables over it.

    Raises RailbirdError when the file does not read as TOML or a value has the wrong type.
    """
    env = os.environ if env is None else env
    p = Path(path) if path is not None else config_path()
    values: dict[str, Any] = {}
    if p.exists():
        try:
            values = dict(tomllib.loads(p.read_text(encoding="utf-8")).get("digest", {}))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RailbirdError(f"{p}: not valid TOML: {exc}") from None
    for key, var in _ENV.items():
        if env.get(var):
            values[key] = env[var]
    if env.get("RAILBIRD_DIGEST_SMTP_PASSWORD"):
        values["smtp_password"] = env["RAILBIRD_DIGEST_SMTP_PASSWORD"]
    unknown = set(values) - set(DigestConfig.__dataclass_fields__)
    if unknown:
        raise RailbirdError(f"{p} [digest]: unknown keys {', '.join(sorted(unknown))}")
    try:
        if isinstance(values.get("mail_to"), str):
            values["mail_to"] = [a.strip() for a in values["mail_to"].split(",") if a.strip()]
        if "mail_to" in values:
            values["mail_to"] = tuple(str(a) for a in values["mail_to"])
        if "smtp_port" in values:
            values["smtp_port"] = int(values["smtp_port"])
        if isinstance(values.get("smtp_starttls"), str):
            values["smtp_starttls"] = values["smtp_starttls"].strip().lower() in ("1", "true", "yes")
    except (TypeError, ValueError) as exc:
        raise RailbirdError(f"{p} [digest]: {exc}") from None
    for key in ("webhook_url", "base_url"):
        url = values.get(key)
        if url and urllib.parse.urlsplit(str(url)).scheme not in ("http", "https"):
            raise RailbirdError(f"{p} [digest]: {key} must be an http(s) URL")
    return DigestConfig(**values)


def digest_cases(store, run_id: str) -> list[dict[str, Any]]:
    """The flagged cases run ``run_id`` opened or reopened, strongest first: the queue's order (estimated
    false-discovery rate lowest first, a case without one after those with one, then score).

    ``store`` is a :class:`pipelines.lib.review.ReviewStore`. A run id the
    store had to make distinct (``<run>#<hex>``, a run registered twice) counts
    as the run. Each item: case, kind, accounts, score, q_value, stake, n_hands,
    status, reopened (bool).
    """
    rows = store.con.execute(
        "SELECT * FROM (SELECT c.*, c.case_id IN (SELECT case_id FROM audit WHERE action = 'reopened'"
        "   AND (actor = 'run:' || ?1 OR actor LIKE 'run:' || ?1 || '#%')) AS was_reopened,"
        " (c.first_run = ?1 OR c.first_run LIKE ?1 || '#%') AS was_opened FROM cases c WHERE c.flagged = 1)"
        " WHERE was_opened OR was_reopened ORDER BY q_value IS NULL, q_value, score DESC, case_id", [run_id]).fetchall()
    out = []
    for r in rows:
        out.append({"case": r["case_id"], "kind": r["kind"], "accounts": json.loads(r["accounts"]),
                    "score": r["score"], "q_value": r["q_value"], "stake": r["stake"], "n_hands": r["n_hands"], "status": r["status"],
                    "reopened": bool(r["was_reopened"])})
    return out


def build_digest(items: list[dict[str, Any]], run_id: str, base_url: str) -> dict[str, Any]:
    """The digest of one run: ``subject``, ``text`` (one line per case, with its link) and ``cases`` (with ``url``)."""
    base = base_url.rstrip("/")
    cases = [{**c, "url": f"{base}/cases/{urllib.parse.quote(c['case'], safe='')}"} for c in items]
    n_new = sum(1 for c in cases if not c["reopened"])
    n_re = len(cases) - n_new
    subject = f"railbird: {n_new} new and {n_re} reopened flagged case{'s' if len(cases) != 1 else ''}"
    lines = [f"{subject} (run {run_id}).", ""]
    for c in cases:
        who = terminal_safe(", ".join(c["accounts"]), width=80)
        lines.append(f"{'reopened' if c['reopened'] else 'new':<8} {c['case']}  {c['kind']}  "
                     f"estimated false-discovery rate {fdr_text(c.get('q_value'))}  score {c['score']:.3g}"
                     f"  {who}  {c['url']}")
    lines += ["", f"The queue: {base}/cases"]
    return {"run": run_id, "subject": subject, "text": "\n".join(lines), "cases": cases}


def write_digest(digest: dict[str, Any], folder: str | os.PathLike[str]) -> Path:
    """Write the digest as JSON to ``folder/<run>.json`` (atomically) and return the path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in digest["run"]) or "run"
    path = folder / f"{name}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(digest, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def send_digest(digest: dict[str, Any], cfg: DigestConfig) -> list[str]:
    """Send the digest to the webhook and the mail recipients configured; returns one line per channel.

    A channel that fails is reported in its line ("webhook failed: ...") and
    does not stop the other.
    """
    report = []
    if cfg.webhook_url:
        body = json.dumps({"text": digest["text"], "subject": digest["subject"], "run": digest["run"],
                           "cases": digest["cases"]}, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(cfg.webhook_url, data=body, method="POST",
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(req, timeout=cfg.timeout) as resp:
                report.append(f"webhook: HTTP {resp.status}")
        except (OSError, ValueError) as exc:
            report.append(f"webhook failed: {exc}")
    if cfg.smtp_host and cfg.mail_to:
        msg = EmailMessage()
        msg["Subject"] = digest["subject"]
        msg["From"] = cfg.mail_from
        msg["To"] = ", ".join(cfg.mail_to)
        msg.set_content(digest["text"])
        try:
            with smtplib.SMTP(cfg.smtp_host, cfg.smtp_port, timeout=cfg.timeout) as smtp:
                if cfg.smtp_starttls:
                    smtp.starttls()
                if cfg.smtp_user:
                    smtp.login(cfg.smtp_user, cfg.smtp_password)
                smtp.send_message(msg)
            report.append(f"mail: sent to {len(cfg.mail_to)} recipient(s)")
        except (OSError, smtplib.SMTPException) as exc:
            report.append(f"mail failed: {exc}")
    return report
