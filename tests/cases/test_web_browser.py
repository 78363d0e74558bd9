"""The web app in a real headless Chromium (Debian's /usr/bin/chromium through Playwright).

uvicorn serves the app from a thread on 127.0.0.1 and a free port, over a
snapshot and review store built from the planted world.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from cases_world import CHAT_LINE, EMO, RTL, XSS1, XSS2
from cases_world import PASSWORD
from pipelines.lib.review import ReviewStore

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing: `make browser` installs it"),
]


@contextlib.contextmanager
def serving(folder):
    """uvicorn serving the app over ``folder``'s snapshot and review store from a thread; yields the base URL."""
    import uvicorn

    from pipelines.web.app import WebSettings, create_app

    app = create_app(WebSettings(snapshot_path=str(folder / "snapshot" / "warehouse.duckdb"),
                                 review_db=str(folder / "review.sqlite"), sql_timeout=2.0))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    deadline = time.time() + 20
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        t.join(timeout=10)


@pytest.fixture(scope="module")
def server(_published_template, tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser") / "pub"
    shutil.copytree(_published_template, folder)
    with serving(folder) as base:
        yield base, folder


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def sign_in(page, base, user="ivy"):
    page.goto(f"{base}/cases")
    assert "/login" in page.url
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", PASSWORD)
    page.click("button:has-text('sign in')")
    page.wait_for_url(f"{base}/cases")


def signed_in_page(browser, base, user="ivy"):
    """A fresh browser context signed in as ``user``; every JavaScript dialog is dismissed and recorded."""
    ctx = browser.new_context()
    page = ctx.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sign_in(page, base, user)
    return ctx, page, dialogs


def test_investigator_works_a_case(server, browser):
    base, folder = server
    ctx, page, dialogs = signed_in_page(browser, base)
    assert page.locator("tr.case-row").count() == 4

    page.select_option("#filters select[name=kind]", "chip_dumping")
    page.click("#filters button")
    page.wait_for_url("**kind=chip_dumping**")
    rows = page.locator("tr.case-row")
    assert rows.count() == 1 and "amy" in rows.first.inner_text()

    rows.first.locator("a").first.click()
    page.wait_for_url(f"{base}/cases/c-000001")
    hand = page.locator("#hand-1001")
    assert hand.is_visible()
    assert "A♥ A♦" in hand.inner_text() and "9♠ 8♠" in hand.inner_text() and "7♣ 2♦" in hand.inner_text()
    marked = hand.locator("li.marked")
    assert marked.count() == 1 and "amy bets 100 and is all-in" in marked.inner_text()
    assert page.locator("svg[aria-label='graph of the accounts']").is_visible()

    page.select_option("#status-form select[name=status]", "in_review")
    page.fill("#status-form input[name=note]", "aces folded into bob: checking")
    page.click("#status-form button")
    page.wait_for_selector("text=saved")
    assert page.locator("#status").inner_text() == "in review"
    assert "aces folded into bob: checking" in page.locator("#notes").inner_text()
    page.click("#audit-trail summary")  # the audit trail is folded under the workflow
    last = page.locator("#audit tr").last.inner_text()
    assert "ivy" in last and "not reviewed" in last and "in review" in last and "in_review" not in last

    page.goto(f"{base}/hands/1002")
    assert "amy bets 100 and is all-in" in page.locator("li.marked").inner_text()
    assert dialogs == []
    ctx.close()


def test_hostile_player_names_render_as_text(server, browser):
    base, _ = server
    ctx, page, dialogs = signed_in_page(browser, base)
    for path in ("/cases?kind=multi_accounting", "/cases/c-000002", "/hands/1005"):
        page.goto(base + path)
        page.wait_for_load_state("load")
        assert page.get_by_text(XSS1, exact=False).first.is_visible()
        assert page.get_by_text(XSS2, exact=False).first.is_visible()
        assert page.locator("img").count() == 0
        assert page.locator("script").count() <= 0
    page.get_by_role("link", name=XSS1).first.click()
    page.wait_for_load_state("load")
    assert page.locator("#account-name").inner_text() == XSS1
    page.wait_for_timeout(200)
    assert dialogs == []
    ctx.close()


def test_requests_without_session_or_with_forged_forms_are_refused(server, browser):
    base, folder = server
    anon = browser.new_context()
    page = anon.new_page()
    page.goto(f"{base}/cases/c-000003")
    assert "/login?next=" in page.url
    r = anon.request.post(f"{base}/cases/c-000003/status", form={"status": "dismissed"}, max_redirects=0)
    assert r.status == 401
    anon.close()

    ctx, page, _ = signed_in_page(browser, base)
    page.goto(f"{base}/cases/c-000003")
    token = page.locator("#status-form input[name=csrf]").get_attribute("value")
    url = f"{base}/cases/c-000003/status"
    assert ctx.request.post(url, form={"status": "dismissed"}, max_redirects=0).status == 403
    assert ctx.request.post(url, form={"status": "dismissed", "csrf": "guess"}, max_redirects=0).status == 403
    r = ctx.request.post(url, form={"status": "dismissed", "csrf": token}, headers={"Origin": "http://evil.test"},
                         max_redirects=0)
    assert r.status == 403

    # an attacker's page on another site submitting a form at the app
    evil = (f'<html><body><form id="f" method="post" action="{url}">'
            '<input name="status" value="dismissed"><input name="csrf" value="guess">'
            '<button id="go" type="submit">win a prize</button></form></body></html>')
    ctx.route("http://evil.test/**", lambda route: route.fulfill(status=200, content_type="text/html", body=evil))
    page.goto("http://evil.test/prize")
    with page.expect_response(url) as resp:
        page.click("#go")
    assert resp.value.status in (401, 403)
    with ReviewStore(folder / "review.sqlite") as st:
        assert st.case("c-000003")["status"] == "new"
    ctx.close()


def test_sql_page_cannot_write(server, browser):
    base, _ = server
    ctx, page, _ = signed_in_page(browser, base)
    page.goto(f"{base}/sql")
    for q in ("CREATE TABLE pwned(a INT)", "COPY hands TO '/tmp/rb_pwned.csv'", "ATTACH '/tmp/rb_pwned.duckdb' AS p",
              "INSTALL httpfs", "SELECT 1; CREATE TABLE pwned(a INT)"):
        page.fill("textarea[name=query]", q)
        page.click("#sql-form button")
        assert "refused" in page.locator("#sql-error").inner_text(), q
    page.fill("textarea[name=query]", "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'pwned'")
    page.click("#sql-form button")
    assert page.locator("#sql-result td").inner_text() == "0"
    assert not os.path.exists("/tmp/rb_pwned.csv")
    ctx.close()


def test_queue_pages_and_searches(server, browser, monkeypatch):
    from pipelines.web import queue as queue_module

    monkeypatch.setattr(queue_module, "PAGE_SIZE", 2)
    base, _ = server
    ctx, page, dialogs = signed_in_page(browser, base)
    assert "cases 1–2 of 4" in page.locator("#paging").inner_text()
    page.click("#paging a[rel=next]")
    page.wait_for_url("**page=2**")
    assert "cases 3–4 of 4" in page.locator("#paging").inner_text()
    assert page.locator("tr.case-row").count() == 2
    page.fill("#filters input[name=q]", "AM")  # part of a name, any case
    page.click("#filters button")
    page.wait_for_url("**q=AM**")
    assert [r.get_attribute("data-case") for r in page.locator("tr.case-row").all()] == ["c-000001"]
    assert "cases 1–1 of 1" in page.locator("#paging").inner_text()
    page.fill("#filters input[name=q]", "1005")  # a hand id
    page.click("#filters button")
    page.wait_for_url("**q=1005**")
    assert [r.get_attribute("data-case") for r in page.locator("tr.case-row").all()] == ["c-000002"]
    assert dialogs == []
    ctx.close()


def test_case_page_reads_top_down_in_the_browser(server, browser):
    base, _ = server
    ctx, page, _ = signed_in_page(browser, base)
    page.goto(f"{base}/cases/c-000001")
    story = page.locator("#story")
    assert story.is_visible() and "450 USD at stake" in story.inner_text()
    chart = page.locator("svg[aria-label='observed against expected']")
    tops = [story.bounding_box()["y"], chart.bounding_box()["y"], page.locator("#contents").bounding_box()["y"],
            page.locator("#evidence").bounding_box()["y"], page.locator("#hands").bounding_box()["y"]]
    assert tops == sorted(tops) and tops[1] < 700  # the sentence and its chart on the first screen
    page.click("#contents a[href='#graph']")
    assert page.url.endswith("#graph")
    assert page.locator("details.replay[open]").count() == 1 and page.locator("#hand-1001").is_visible()
    assert not page.locator("#hand-1002").is_visible()  # folded until asked for
    page.click("#hands details.replay:nth-of-type(2) summary")
    assert page.locator("#hand-1002").is_visible()
    ctx.close()


def test_account_page_in_the_browser(server, browser):
    base, _ = server
    ctx, page, _ = signed_in_page(browser, base)
    page.goto(f"{base}/accounts/amy")
    assert page.locator("#account-name").inner_text() == "amy"
    assert "dev-amy" in page.locator("#device-table").inner_text()
    assert "10.0.0.1" in page.locator("#network-table").inner_text()
    assert "hands 1–3 of 3" in page.locator("#hand-paging").inner_text()
    assert "flagged" in page.locator("#cases tr[data-case='c-000001']").inner_text()
    r = page.goto(f"{base}/accounts/nobody-at-all")
    assert r.status == 404
    ctx.close()


SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _every_kind_signals(stage, original):
    """The planted world's signals (``original(stage)``: its second night has a hand chat and a heads-up
    flipping case) with evidence rows for each kind and a coordinated sit-out: a case of every kind."""
    from detectors.base import Evidence, Signal

    sigs = original(stage)
    figures = {
        "soft_play": [Evidence("carl bets or raises dan", 0.04, 0.31, 212, 2e-7, "4% of spots against dan, 31% against others"),
                      Evidence("carl folds to dan's bets", 0.62, 0.35, 88, 1e-4, "folds to dan far more than to others")],
        "multi_accounting": [Evidence("tournaments entered together", 14.0, 1.2, 20, 1e-9, "14 of 20 entries together"),
                             Evidence("style likeness", 0.08, 0.5, 400, 1e-3, "VPIP and PFR nearly identical")],
        "seat_handoff": [Evidence("action mix shift (VPIP after vs before)", 0.48, 0.21, 140, 1e-5, "VPIP 0.21 -> 0.48")],
        "bounty_collusion": [Evidence("all-in targets contested together", 9.0, 2.1, 31, 1e-4, "both called 9 all-ins")],
    }
    for s in sigs:
        if not s.evidence and s.kind in figures:
            s.evidence = figures[s.kind]
    sigs.append(Signal(kind="coordinated_sitout", accounts=["carl", "zed"], score=0.66, flagged=True, p_value=1e-5, q_value=4e-4,
                       summary="carl and zed sat out together six times", hands=["1003", "1004"],
                       detector="CoordinatedSitout",
                       evidence=[Evidence("sit-outs started together: carl & zed", 6.0, 0.4, 9, 1e-5,
                                          "6 of 9 sit-outs began within a minute of each other")]))
    return sigs


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    """A published world with a case of each of the six kinds (the planted world's second night plus a sit-out)."""
    import duckdb

    import cases_world
    from pipelines.lib.warehouse import VIEWS_SQL

    folder = tmp_path_factory.mktemp("kinds")
    original = cases_world.signals
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cases_world, "signals", lambda stage: _every_kind_signals(stage, original))
        cases_world.nightly(folder, 2, "run2")
    with duckdb.connect(str(folder / "snapshot" / "warehouse.duckdb")) as con:
        con.execute(VIEWS_SQL.read_text())
    with ReviewStore(folder / "review.sqlite") as st:
        st.add_user("ivy", "investigator", PASSWORD)
    with serving(folder) as base:
        yield base, folder


def test_the_newer_kinds_show_names_and_chat_as_text(every_kind, browser):
    """The hand-chat and heads-up flipping cases of the planted world: a right-to-left override, emoji and
    markup in names and in the chat line show as text; the chat line stands in its place, marked."""
    base, folder = every_kind
    with ReviewStore(folder / "review.sqlite") as st:
        ids = {c["kind"]: c["case_id"] for c in st.queue(flagged=None, limit=100)
               if EMO in c["accounts"] and c["kind"] in ("hand_chat", "heads_up_flipping")}
    ctx, page, dialogs = signed_in_page(browser, base)
    for path, shows in ((f"/cases/{ids['hand_chat']}", "chat"), ("/hands/1011", "chat"),
                        (f"/cases/{ids['heads_up_flipping']}", "flips")):
        page.goto(base + path)
        assert page.get_by_text(EMO, exact=False).first.is_visible()
        assert page.locator("main i, main b, main script").count() == 0
        if shows == "chat":
            flagged = page.locator("li.flagged-chat").first
            assert CHAT_LINE in flagged.inner_text() and RTL in flagged.inner_text()
        else:
            assert page.locator("#flips circle.flip-weak").count() == 2
    page.wait_for_timeout(200)
    assert dialogs == []
    ctx.close()


@pytest.mark.slow
def test_screenshots_of_the_queue_each_kind_and_an_account(every_kind, browser):
    from detectors.kinds import KINDS

    base, folder = every_kind
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    sign_in(page, base)
    page.goto(f"{base}/cases?flagged=")
    page.screenshot(path=str(SCREENSHOTS / "queue.png"))
    with ReviewStore(folder / "review.sqlite") as st:
        first_of = {}
        for c in st.queue(flagged=None, limit=100):
            first_of.setdefault(c["kind"], c["case_id"])
    assert set(first_of) == set(KINDS)
    for kind, case_id in first_of.items():
        page.goto(f"{base}/cases/{case_id}")
        assert page.locator("#story").is_visible()
        section = {"hand_chat": "#chat", "heads_up_flipping": "#flips"}.get(kind)
        if section:  # what these kinds add: the chat lines (and the first replay), the matches hand by hand
            page.goto(f"{base}/cases/{case_id}{section}")
            assert page.locator(section).is_visible()
        page.screenshot(path=str(SCREENSHOTS / f"case-{kind.replace('_', '-')}.png"))
    page.goto(f"{base}/accounts/amy")
    page.screenshot(path=str(SCREENSHOTS / "account.png"), full_page=True)
    ctx.close()
    shots = sorted(SCREENSHOTS.glob("*.png"))
    assert len(shots) == len(KINDS) + 2 and sum(p.stat().st_size for p in shots) < 1_500_000
