"""The morning digest: which cases, its text and links, the config, and the sensor against a local webhook."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import dagster as dg
import pytest

from pipelines.defs.cases.sensors import case_digest_sensor
from pipelines.defs.resources import RailbirdSettings
from pipelines.lib import digest as digest_lib
from pipelines.lib.errors import RailbirdError
from pipelines.lib.review import ReviewStore

EVIL = 'eve"\x1b[2J=cmd'


class Receiver:
    """A webhook on 127.0.0.1 that keeps what it is sent."""

    def __init__(self, status: int = 200):
        got = self.got = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                got.append((self.headers["Content-Type"], self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def _group(accounts, score, flagged=True, hands=("1", "2")):
    return {"kind": "chip_dumping", "accounts": accounts, "score": score, "flagged": flagged, "hands": list(hands),
            "summary": ""}


def _two_nights(path, run2):
    """Night 1 opens three cases; one is dismissed; night 2 (run2) opens one more and reopens the dismissed one."""
    with ReviewStore(path) as st:
        st.add_user("ivy", "investigator", "long enough password")
        st.register_run("night1", [_group(["amy", "bob"], 0.9), _group(["cat", "dan"], 0.5),
                                   _group(["fay", "gus"], 0.1, flagged=False)])
        st.set_status("c-000002", "dismissed", "ivy")
        st.register_run(run2, [_group(["amy", "bob"], 0.9), _group(["cat", "dan"], 0.9, hands=("1", "2", "3", "4")),
                               _group([EVIL, "hal"], 0.7), _group(["ida", "jo"], 0.2, flagged=False)])


def test_digest_orders_by_the_estimated_false_discovery_rate(tmp_path):
    with ReviewStore(tmp_path / "review.sqlite") as st:
        st.register_run("n1", [{**_group(["amy", "bob"], 25.0), "q_value": 0.04},
                               {**_group(["cat", "dan"], 2.0), "kind": "coordinated_sitout", "q_value": 0.0002},
                               _group(["eve", "fay"], 30.0)])
        items = digest_lib.digest_cases(st, "n1")
    assert [c["accounts"] for c in items] == [["cat", "dan"], ["amy", "bob"], ["eve", "fay"]]
    text = digest_lib.build_digest(items, "n1", "https://rb.example")["text"]
    assert "estimated false-discovery rate 0.02 %" in text.splitlines()[2]


def test_digest_lists_what_the_night_opened_or_reopened(tmp_path):
    _two_nights(tmp_path / "review.sqlite", "night2")
    with ReviewStore(tmp_path / "review.sqlite") as st:
        items = digest_lib.digest_cases(st, "night2")
        assert [(c["case"], c["reopened"]) for c in items] == [("c-000002", True), ("c-000004", False)]
        assert [c["case"] for c in digest_lib.digest_cases(st, "night1")] == ["c-000001", "c-000002"]
    d = digest_lib.build_digest(items, "night2", "https://rb.example/")
    assert d["subject"] == "railbird: 1 new and 1 reopened flagged cases"
    assert d["cases"][1]["url"] == "https://rb.example/cases/c-000004"
    assert "\x1b" not in d["text"] and "https://rb.example/cases/c-000002" in d["text"]
    assert d["cases"][1]["accounts"] == sorted([EVIL, "hal"])  # the data itself is kept whole


def test_config_file_and_environment(tmp_path):
    cfg_file = tmp_path / "railbird.toml"
    cfg_file.write_text('[digest]\nwebhook_url = "https://hooks.example/x"\nmail_to = ["a@example.org"]\n'
                        'smtp_host = "mail.example.org"\n', encoding="utf-8")
    cfg = digest_lib.load_config(cfg_file, env={})
    assert cfg.enabled and cfg.mail_to == ("a@example.org",) and cfg.smtp_port == 25
    cfg = digest_lib.load_config(cfg_file, env={"RAILBIRD_DIGEST_TO": "b@x.org, c@x.org", "RAILBIRD_DIGEST_SMTP_PORT": "2525"})
    assert cfg.mail_to == ("b@x.org", "c@x.org") and cfg.smtp_port == 2525
    assert not digest_lib.load_config(tmp_path / "none.toml", env={}).enabled
    cfg_file.write_text('[digest]\nwebhook_url = "file:///etc/passwd"\n', encoding="utf-8")
    with pytest.raises(RailbirdError, match="http"):
        digest_lib.load_config(cfg_file, env={})
    cfg_file.write_text('[digest]\nwebhok_url = "https://x"\n', encoding="utf-8")
    with pytest.raises(RailbirdError, match="unknown keys webhok_url"):
        digest_lib.load_config(cfg_file, env={})


def test_mail_is_composed_by_the_email_package(monkeypatch):
    sent = []

    class FakeSMTP:
        def __init__(self, host, port, timeout):
            sent.append((host, port))

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def send_message(self, msg):
            sent.append(msg)

    monkeypatch.setattr(digest_lib.smtplib, "SMTP", FakeSMTP)
    d = digest_lib.build_digest([{"case": "c-1", "kind": "k", "accounts": ["a\r\nBcc: x@evil"], "score": 1.0,
                                  "reopened": False}], "r1", "http://h")
    cfg = digest_lib.DigestConfig(smtp_host="127.0.0.1", smtp_port=2525, mail_to=("t@example.org",))
    assert digest_lib.send_digest(d, cfg) == ["mail: sent to 1 recipient(s)"]
    msg = sent[1]
    assert sent[0] == ("127.0.0.1", 2525) and msg["To"] == "t@example.org" and msg["Bcc"] is None
    assert "http://h/cases/c-1" in msg.get_content()


def _succeeded_run(instance):
    @dg.op
    def noop():
        return 1

    @dg.job
    def tiny_job():
        noop()

    result = tiny_job.execute_in_process(instance=instance)
    return result.dagster_run, result.get_run_success_event()


def _evaluate(instance, run, event, settings):
    ctx = dg.build_run_status_sensor_context(sensor_name="case_digest_sensor", dagster_instance=instance,
                                             dagster_run=run, dagster_event=event, resources={"settings": settings})
    return case_digest_sensor(ctx)


def test_sensor_sends_the_digest_to_a_local_webhook(tmp_path, monkeypatch, receiver):
    instance = dg.DagsterInstance.ephemeral()
    run, event = _succeeded_run(instance)
    _two_nights(tmp_path / "review.sqlite", run.run_id)
    settings = RailbirdSettings(review_db=str(tmp_path / "review.sqlite"), out_dir=str(tmp_path / "out"))
    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path))
    (tmp_path / "railbird.toml").write_text(
        f'[digest]\nwebhook_url = "{receiver.url}"\nbase_url = "http://rb.local:8765"\n', encoding="utf-8")
    _evaluate(instance, run, event, settings)
    [(ctype, body)] = receiver.got
    payload = json.loads(body)
    assert ctype.startswith("application/json")
    assert [c["url"] for c in payload["cases"]] == ["http://rb.local:8765/cases/c-000002",
                                                     "http://rb.local:8765/cases/c-000004"]
    assert payload["cases"][1]["accounts"] == sorted([EVIL, "hal"]) and "reopened" in payload["text"]
    assert json.loads((tmp_path / "out" / "digests" / f"{run.run_id}.json").read_text())["subject"] == payload["subject"]


def test_sensor_sends_nothing_for_a_quiet_night_and_writes_without_config(tmp_path, monkeypatch, receiver):
    instance = dg.DagsterInstance.ephemeral()
    run, event = _succeeded_run(instance)
    monkeypatch.setenv("RAILBIRD_HOME", str(tmp_path))
    monkeypatch.delenv("RAILBIRD_DIGEST_WEBHOOK", raising=False)
    (tmp_path / "railbird.toml").write_text(f'[digest]\nwebhook_url = "{receiver.url}"\n', encoding="utf-8")
    with ReviewStore(tmp_path / "review.sqlite") as st:  # the run saw only what earlier runs opened
        st.register_run("night1", [_group(["amy", "bob"], 0.9)])
        st.register_run(run.run_id, [_group(["amy", "bob"], 0.9)])
    settings = RailbirdSettings(review_db=str(tmp_path / "review.sqlite"), out_dir=str(tmp_path / "out"))
    _evaluate(instance, run, event, settings)
    assert receiver.got == []
    (tmp_path / "railbird.toml").unlink()
    with ReviewStore(tmp_path / "review.sqlite") as st:
        st.register_run(run.run_id, [_group(["amy", "bob"], 0.9), _group(["kim", "lu"], 0.8)])
    _evaluate(instance, run, event, settings)
    assert receiver.got == [] and list((tmp_path / "out" / "digests").iterdir())


@pytest.mark.slow
def test_the_sensor_is_in_the_code_location():
    from pipelines.definitions import defs

    assert "case_digest_sensor" in {s.name for s in defs().sensors}
