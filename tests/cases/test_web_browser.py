"""The web app in a real headless Chromium (Debian's /usr/bin/chromium through Playwright).

uvicorn serves the app from a thread on 127.0.0.1 and a free port, over a
snapshot and review store built from the planted world.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time

import pytest

from cases_world import XSS1, XSS2
from cases_world import PASSWORD
from pipelines.lib.review import ReviewStore

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing: `make browser` installs it"),
]


@pytest.fixture(scope="module")
def server(_published_template, tmp_path_factory):
    import uvicorn

    from pipelines.web.app import WebSettings, create_app

    folder = tmp_path_factory.mktemp("browser") / "pub"
    shutil.copytree(_published_template, folder)
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
    yield f"http://127.0.0.1:{port}", folder
    srv.should_exit = True
    t.join(timeout=10)


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
