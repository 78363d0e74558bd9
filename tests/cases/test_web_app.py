"""The web app over HTTP (no browser): sign-in, sessions, CSRF, Origin, escaping, the SQL page's walls."""

from __future__ import annotations

import re
import urllib.parse

import pytest
from fastapi.testclient import TestClient

from cases_world import EMO, RTL, XSS1, XSS2
from cases_world import PASSWORD
from pipelines.lib.review import ReviewStore
from pipelines.web.app import WebSettings, create_app
from pipelines.lib.readonly_sql import SqlRefused, check_query

BASE = "http://testserver"


def app_for(folder, **kw):
    return create_app(WebSettings(snapshot_path=str(folder / "snapshot" / "warehouse.duckdb"),
                                  review_db=str(folder / "review.sqlite"), **kw))


def signed_in(app, user="ivy"):
    c = TestClient(app, base_url=BASE)
    page = c.get("/login")
    tok = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = c.post("/login", data={"csrf": tok, "username": user, "password": PASSWORD, "next": "/cases"},
               follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/cases"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    return c


def csrf_of(c, path="/cases/c-000001"):
    return re.search(r'name="csrf" value="([^"]+)"', c.get(path).text).group(1)


def test_no_session_is_refused(published):
    c = TestClient(app_for(published), base_url=BASE)
    for path in ("/cases", "/cases/c-000001", "/accounts/amy", "/hands/1001", "/sql"):
        r = c.get(path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
    assert c.post("/cases/c-000001/status", data={"status": "dismissed"}).status_code == 401
    assert c.post("/sql", data={"query": "SELECT 1"}).status_code == 401
    c.cookies.set("rb_session", "forged-token")
    assert c.get("/cases", follow_redirects=False).status_code == 303


def test_wrong_password_and_login_csrf(published):
    c = TestClient(app_for(published), base_url=BASE)
    tok = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)
    r = c.post("/login", data={"csrf": tok, "username": "ivy", "password": "wrong password"})
    assert r.status_code == 401 and "wrong user name or password" in r.text
    r = c.post("/login", data={"csrf": "x" + tok, "username": "ivy", "password": PASSWORD})
    assert r.status_code == 403
    r = c.post("/login", data={"csrf": tok, "username": "ivy", "password": PASSWORD},
               headers={"Origin": "http://evil.example"})
    assert r.status_code == 403


def test_expired_session_is_refused(published):
    app = app_for(published, session_ttl=-1)
    c = TestClient(app, base_url=BASE)
    tok = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)
    c.post("/login", data={"csrf": tok, "username": "ivy", "password": PASSWORD})
    assert c.get("/cases", follow_redirects=False).status_code == 303


def test_forged_forms_are_refused(published):
    c = signed_in(app_for(published))
    tok = csrf_of(c)
    url = "/cases/c-000001/status"
    assert c.post(url, data={"status": "dismissed"}).status_code == 403
    assert c.post(url, data={"status": "dismissed", "csrf": tok[:-1] + ("B" if tok.endswith("A") else "A")}).status_code == 403
    assert c.post(url, data={"status": "dismissed", "csrf": "jeton-volé-é"}).status_code == 403  # non-ASCII
    r = c.post(url, data={"status": "dismissed", "csrf": tok}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    r = c.post(url, data={"status": "dismissed", "csrf": tok}, headers={"Referer": "http://evil.example/x"})
    assert r.status_code == 403
    with ReviewStore(published / "review.sqlite") as st:
        assert st.case("c-000001")["status"] == "new"
    r = c.post(url, data={"status": "dismissed", "csrf": tok, "note": "variance"}, headers={"Origin": BASE},
               follow_redirects=False)
    assert r.status_code == 303
    with ReviewStore(published / "review.sqlite") as st:
        assert st.case("c-000001")["status"] == "dismissed"
        assert st.audit("c-000001")[-1]["actor"] == "ivy"


def test_two_person_rule_through_the_app(published):
    app = app_for(published)
    ivy, rex = signed_in(app, "ivy"), signed_in(app, "rex")
    ivy.post("/cases/c-000001/propose", data={"csrf": csrf_of(ivy), "note": "dump"})
    r = ivy.post("/cases/c-000001/approve", data={"csrf": csrf_of(ivy)})
    assert "only a reviewer can approve" in r.text
    r = rex.post("/cases/c-000001/approve", data={"csrf": csrf_of(rex)})
    assert r.status_code == 200 and "saved" in r.text and 'id="status">confirmed' in r.text


def test_hostile_names_are_escaped_everywhere(published):
    c = signed_in(app_for(published))
    pages = [c.get("/cases"), c.get("/cases/c-000002"), c.get("/hands/1005"), c.get("/accounts/" + XSS1),
             c.get("/accounts/" + XSS2.replace("/", "%2F"))]
    for r in pages:
        assert r.status_code == 200
        assert "<script>alert" not in r.text and "<img src=x" not in r.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text or "&#34;&gt;&lt;img src=x" in r.text
        assert "script-src" not in r.headers["content-security-policy"]  # no script may run at all
    assert "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in pages[1].text


def test_hostile_names_and_chat_are_text_in_the_newer_kinds_pages(second_night):
    """Markup, quotes, a right-to-left override and emoji in names and chat: text in the hand-chat and
    heads-up flipping cases, their hands and their accounts' pages."""
    c = signed_in(app_for(second_night))
    pages = [c.get("/cases"), c.get("/cases/c-000007"), c.get("/cases/c-000008"), c.get("/hands/1011"),
             c.get("/hands/2002"), c.get("/accounts/" + urllib.parse.quote(RTL, safe="")),
             c.get("/accounts/" + urllib.parse.quote(EMO, safe=""))]
    for r in pages:
        assert r.status_code == 200
        assert "<script>alert" not in r.text and "<i>x</i>" not in r.text and "<b>wp</b>" not in r.text
        assert "&lt;i&gt;x&lt;/i&gt;" in r.text
        assert "script-src" not in r.headers["content-security-policy"]
    for r in pages[1], pages[3]:  # the chat line, escaped, in its place in the replay, flagged
        assert "&lt;script&gt;alert(3)&lt;/script&gt;" in r.text and 'class="chat flagged-chat"' in r.text
    assert "O&#39;Neil \\ : end" in pages[1].text and "\u202eevil\u202c" in pages[1].text  # shown as written


def test_queue_filters_the_newer_kinds(second_night):
    c = signed_in(app_for(second_night))
    for kind, case in (("hand_chat", "c-000007"), ("heads_up_flipping", "c-000008")):
        page = c.get("/cases", params={"kind": kind})
        assert rows_of(page) == [case]
        assert f'<option value="{kind}" selected>' in page.text


def test_sql_page_reads_and_cannot_write(published):
    c = signed_in(app_for(published, sql_row_limit=3, sql_timeout=1.0))
    tok = csrf_of(c, "/sql")
    r = c.post("/sql", data={"csrf": tok, "query": "SELECT hand_id FROM hands ORDER BY hand_id"})
    assert r.status_code == 200 and "1001" in r.text and "cut at the limit of 3" in r.text
    r = c.post("/sql", data={"csrf": tok, "query": "WITH x AS (SELECT count(*) AS n FROM cases) SELECT n FROM x"})
    assert r.status_code == 200 and "<td>5</td>" in r.text
    for q in ("CREATE TABLE x(a INT)", "COPY hands TO '/tmp/rb_leak.csv'", "ATTACH '/tmp/rb.duckdb' AS x",
              "INSTALL httpfs", "SELECT 1; DROP TABLE hands", "DELETE FROM cases", "SET threads=4",
              "EXPLAIN ANALYZE CREATE TABLE x AS SELECT 1", "PRAGMA database_list"):
        r = c.post("/sql", data={"csrf": tok, "query": q})
        assert r.status_code == 400 and "refused" in r.text, q
    r = c.post("/sql", data={"csrf": tok, "query": "SELEC 1"})  # a typo: said to be one, not called a refused write
    assert r.status_code == 400 and "does not parse" in r.text and "refused" not in r.text
    r = c.post("/sql", data={"csrf": tok, "query": "SELECT * FROM read_csv('/etc/passwd')"})
    assert r.status_code == 400 and "Permission" in r.text
    r = c.post("/sql", data={"csrf": tok, "query": "SELECT count(*) FROM range(100000000000) a"})
    assert r.status_code == 400 and "time limit" in r.text
    assert c.post("/sql", data={"query": "SELECT 1"}).status_code == 403


@pytest.mark.parametrize("query", ["SELECT 1", "with a as (select 1) select * from a", "EXPLAIN SELECT 1",
                                   "-- note\nselect 2"])
def test_check_query_accepts_reads(query):
    assert check_query(query) == query


@pytest.mark.parametrize("query", ["select 1; select 2", "update hands set rake = 0", "CALL pragma_version()",
                                   "explain copy hands to 'x.csv'", "load httpfs", "detach snap", "not sql at all"])
def test_check_query_refuses_everything_else(query):
    with pytest.raises(SqlRefused):
        check_query(query)


def test_missing_snapshot_says_no_run_published(tmp_path):
    with ReviewStore(tmp_path / "review.sqlite") as st:
        st.add_user("ivy", "investigator", PASSWORD)
    app = app_for(tmp_path)
    c = signed_in(app)
    r = c.get("/sql")
    assert r.status_code == 503 and "No run published yet" in r.text
    assert "No run published yet" in c.get("/cases").text
    assert c.get("/cases/c-000001").status_code == 503


def test_sign_in_is_throttled_after_five_failures(published):
    c = TestClient(app_for(published), base_url=BASE)
    tok = re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)
    codes = [c.post("/login", data={"csrf": tok, "username": "ivy", "password": f"guess {i}"}).status_code
             for i in range(6)]
    assert codes == [401] * 5 + [429]
    assert c.post("/login", data={"csrf": tok, "username": "ivy", "password": PASSWORD}).status_code == 429


def test_queue_filters_by_ring(published):
    c = signed_in(app_for(published))
    with ReviewStore(published / "review.sqlite") as st:
        ring = st.case("c-000001")["ring"]
    page = c.get("/cases", params={"ring": ring, "flagged": ""})
    assert re.findall(r'data-case="([^"]+)"', page.text) == ["c-000001"]


def test_report_downloads(published):
    c = signed_in(app_for(published))
    r = c.get("/cases/c-000002/report.json")
    assert r.status_code == 200 and r.json()["case"]["accounts"] == sorted([XSS1, XSS2])
    r = c.get("/cases/c-000002/report.html")  # opens in the browser; download=1 saves it
    assert r.status_code == 200 and r.headers["content-disposition"].startswith("inline;")
    assert c.get("/cases/c-000002/report.html", params={"download": "1"}).headers["content-disposition"] == \
        'attachment; filename="c-000002.html"'
    assert "<img" not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    assert c.get("/cases/c-000002/report.exe").status_code == 404
    assert TestClient(app_for(published), base_url=BASE).get("/cases/c-000002/report.json",
                                                             follow_redirects=False).status_code == 303


def test_queue_sorts_by_column_links(published):
    c = signed_in(app_for(published))
    page = c.get("/cases", params={"kind": "soft_play", "flagged": ""})
    link = re.search(r'<a href="([^"]+)">score</a>', page.text).group(1).replace("&amp;", "&")
    assert "kind=soft_play" in link and "sort=score" in link and "order=desc" in link
    asc = c.get(link.replace("order=desc", "order=asc"))
    assert re.findall(r'data-case="([^"]+)"', asc.text) == ["c-000005", "c-000004"]
    assert re.findall(r'data-case="([^"]+)"', c.get(link).text) == ["c-000004", "c-000005"]


def test_a_new_snapshot_is_picked_up_without_restart(published):
    from cases_world import nightly

    c = signed_in(app_for(published))
    assert c.get("/hands/1010").status_code == 404  # not played yet on night 1
    with ReviewStore(published / "review.sqlite") as st:
        st.set_status("c-000001", "in_review", "ivy", "night-1 note")
    nightly(published, 2, "run2")  # the next night publishes over the snapshot the app reads
    assert c.get("/hands/1010").status_code == 200
    page = c.get("/cases/c-000001")
    assert "night-1 note" in page.text and 'id="status">in review' in page.text and "1007" in page.text


def rows_of(page):
    return re.findall(r'data-case="([^"]+)"', page.text)


def test_queue_pages_with_the_total(published, monkeypatch):
    from pipelines.web import queue as queue_module

    monkeypatch.setattr(queue_module, "PAGE_SIZE", 2)
    c = signed_in(app_for(published))
    first = c.get("/cases", params={"flagged": ""})
    assert "cases 1–2 of 5" in first.text and rows_of(first) == ["c-000001", "c-000002"]
    nxt = re.search(r'<a href="([^"]+)" rel="next">', first.text).group(1).replace("&amp;", "&")
    second = c.get(nxt)
    assert "cases 3–4 of 5" in second.text and rows_of(second) == ["c-000004", "c-000003"]
    last = c.get("/cases", params={"flagged": "", "page": "99"})  # past the end: the last page
    assert "cases 5–5 of 5" in last.text and rows_of(last) == ["c-000005"]
    assert 'rel="next"' not in last.text


def test_queue_searches_part_of_a_name_a_hand_and_a_case(published):
    c = signed_in(app_for(published))
    assert rows_of(c.get("/cases", params={"flagged": "", "q": "AM"})) == ["c-000001", "c-000005"]
    assert rows_of(c.get("/cases", params={"flagged": "", "q": "1005"})) == ["c-000002"]
    assert rows_of(c.get("/cases", params={"flagged": "", "q": "c-000004"})) == ["c-000004"]
    assert rows_of(c.get("/cases", params={"flagged": "", "q": "script>"})) == ["c-000002"]
    for wildcard in ("%", "_"):  # LIKE's wildcards are searched for, not obeyed
        assert rows_of(c.get("/cases", params={"flagged": "", "q": wildcard})) == []


def test_queue_csv_has_every_case_and_escapes_formulas(published, monkeypatch):
    import csv
    import io

    from pipelines.web import queue as queue_module

    monkeypatch.setattr(queue_module, "PAGE_SIZE", 2)
    bomb = "=HYPERLINK(\"http://evil.example\",\"x\")"
    with ReviewStore(published / "review.sqlite") as st:
        st.register_run("run-x", [{"kind": "soft_play", "accounts": [bomb, "@bob"], "score": 0.5, "flagged": True,
                                   "hands": ["1001"], "summary": ""}])
    c = signed_in(app_for(published))
    r = c.get("/cases.csv", params={"flagged": ""})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(r.text)))
    assert len(table) == 1  # the run above replaced the last run: only its case and worked cases are listed
    assert table[0]["accounts"] == "'" + bomb + "; @bob"
    assert all(not v.startswith(("=", "+", "-", "@")) for row in table for v in row.values())
    assert r.text.count("\n") == 2


def test_queue_keeps_money_and_chips_apart_with_units_and_zone(published):
    c = signed_in(app_for(published))
    page = c.get("/cases", params={"flagged": ""}).text
    row = {cid: re.search(rf'data-case="{cid}".*?<td class="num money">([^<]*)</td>\s*<td class="num chips">([^<]*)</td>',
                          page, flags=re.S).groups() for cid in re.findall(r'data-case="(c-\d+)"', page)}
    assert row["c-000001"] == ("450 USD", "–")  # a cash game: its currency
    assert row["c-000003"] == ("–", "4 chips")  # a tournament: chips, never money
    assert re.search(r"<td>\d{4}-\d\d-\d\d \d\d:\d\d UTC</td></tr>", page)


def test_queue_hands_column_counts_the_hands_played_together(published):
    import duckdb

    snap = published / "snapshot" / "warehouse.duckdb"
    with duckdb.connect(str(snap)) as con:  # amy and bob meet again in a hand no detector kept as evidence
        con.execute("INSERT INTO seats SELECT '9001', * EXCLUDE (hand_id) FROM seats WHERE hand_id = '1001'")
    c = signed_in(app_for(published))
    page = c.get("/cases", params={"kind": "chip_dumping"}).text
    assert re.search(r'<td class="num hands">3 \(2\)', page)


def test_queue_ring_column_names_a_ring_not_a_case_number(published):
    c = signed_in(app_for(published))
    page = c.get("/cases", params={"flagged": ""}).text
    assert "r-0000" not in page.split('id="queue"')[1]  # rings of one case are not rings
    with ReviewStore(published / "review.sqlite") as st:
        st.con.execute("UPDATE cases SET ring = 'r-000001' WHERE case_id IN ('c-000001', 'c-000004')")
    page = c.get("/cases", params={"flagged": ""}).text
    assert page.count(">ring of 2 cases</a>") == 2


def test_queue_says_which_detector_failed(published):
    import duckdb

    c = signed_in(app_for(published))
    assert "failed on its last run" not in c.get("/cases").text  # detector_runs empty: no banner
    with duckdb.connect(str(published / "snapshot" / "warehouse.duckdb")) as con:
        con.execute("INSERT INTO detector_runs VALUES "
                    "('run0', 'chip_dumping', 'ok', NULL, TIMESTAMPTZ '2026-03-04 01:00+00', 'run0'), "
                    "('run1', 'chip_dumping', 'failed', 'MemoryError: <boom>', TIMESTAMPTZ '2026-03-05 01:00+00', 'run0'), "
                    "('run1', 'soft_play', 'ok', NULL, TIMESTAMPTZ '2026-03-05 01:00+00', 'run1'), "
                    "('run0', 'soft_play', 'failed', 'old failure', TIMESTAMPTZ '2026-03-04 01:00+00', 'run-1')")
    page = c.get("/cases").text
    assert ("chip dumping failed on its last run (2026-03-05 01:00 UTC): MemoryError: &lt;boom&gt;; "
            "its cases are from run run0.") in page
    assert "soft play failed" not in page
    with duckdb.connect(str(published / "snapshot" / "warehouse.duckdb")) as con:
        con.execute("DROP TABLE detector_runs")
    assert "failed on its last run" not in c.get("/cases").text  # a snapshot of an older release: the page still works


def test_case_page_offers_only_the_actions_the_role_may_take(published):
    app = app_for(published)
    ivy, rex = signed_in(app, "ivy"), signed_in(app, "rex")
    page = ivy.get("/cases/c-000001").text
    assert 'id="propose-form"' in page and 'id="approve-form"' not in page
    ivy.post("/cases/c-000001/propose", data={"csrf": csrf_of(ivy), "note": "dump"})
    page = ivy.get("/cases/c-000001").text  # the proposer may withdraw, not approve
    assert 'id="approve-form"' not in page and 'id="reject-form"' in page and 'id="propose-form"' not in page
    page = rex.get("/cases/c-000001").text
    assert 'id="approve-form"' in page and 'id="reject-form"' in page
    rex.post("/cases/c-000001/approve", data={"csrf": csrf_of(rex)})
    page = ivy.get("/cases/c-000001").text  # confirmed: only a reviewer may reopen it
    assert 'id="status-form"' not in page and 'id="propose-form"' not in page and 'id="note-form"' in page
    assert 'id="status-form"' in rex.get("/cases/c-000001").text


def test_case_page_reads_top_down(published):
    c = signed_in(app_for(published))
    page = c.get("/cases/c-000001").text
    order = [page.index(marker) for marker in ('id="story"', 'aria-label="observed against expected"',
                                                'id="contents"', 'id="workflow"', 'id="evidence"', 'id="accounts"',
                                                'id="hands"', 'id="graph"', 'id="timeline"', 'id="sql"')]
    assert order == sorted(order)
    for anchor in ("#workflow", "#evidence", "#hands", "#graph", "#timeline", "#sql"):
        assert f'href="{anchor}"' in page
    assert "450 USD at stake" in page.split('id="story"')[1].split("</p>")[0]
    assert page.count('<pre class="sql">') == page.split('id="sql"')[1].count('<pre class="sql">')  # all SQL at the end


def test_case_page_replays_a_few_hands_and_links_the_rest(published, monkeypatch):
    from pipelines.web import case as case_module

    monkeypatch.setattr(case_module, "PAGE_REPLAYS", 1)
    c = signed_in(app_for(published))
    page = c.get("/cases/c-000001").text
    assert page.count('class="hand') == 1 and 'id="hand-1001"' in page
    assert '<a href="/hands/1002">1002</a>' in page


def test_account_page_shows_play_devices_networks_and_pages_hands(published, monkeypatch):
    import duckdb

    from pipelines.lib.warehouse import VIEWS_SQL
    from pipelines.web import account as account_module

    with duckdb.connect(str(published / "snapshot" / "warehouse.duckdb")) as con:
        con.execute(VIEWS_SQL.read_text())  # the views a real run's warehouse has
    monkeypatch.setattr(account_module, "HANDS_PAGE", 2)
    c = signed_in(app_for(published))
    page = c.get("/accounts/amy").text
    stats = re.findall(r'<td class="num">([^<]*)</td>', page.split('id="stats"')[1].split("</table>")[0])
    assert stats[:4] == ["3", "1", "66.70", "66.70"]  # hands, days, VPIP %, PFR %: raised in 1001 and 1002, folded 1006
    assert "bb per 100 hands" in page
    assert "<code>dev-amy</code>" in page.split('id="device-table"')[1].split("</table>")[0]
    assert "<code>10.0.0.1</code>" in page.split('id="network-table"')[1].split("</table>")[0]
    assert "hands 1–2 of 3, newest first" in page and re.findall(r'href="/hands/(\d+)"', page) == ["1006", "1002"]
    older = c.get(re.search(r'<a href="([^"]+)" rel="next">', page).group(1).replace("&amp;", "&")).text
    assert "hands 3–3 of 3" in older and re.findall(r'href="/hands/(\d+)"', older) == ["1001"]
    cases = page.split('id="cases"')[1].split("</table>")[0]
    assert re.search(r'data-case="c-000001">.*?badge flagged">flagged', cases)
    assert re.search(r'data-case="c-000005">.*?below the threshold', cases)  # the score-0.2 case says so


def test_unknown_account_is_404(published):
    c = signed_in(app_for(published))
    assert c.get("/accounts/nobody-at-all").status_code == 404
    assert c.get("/accounts/zed").status_code == 200  # no case, but hands in the snapshot


def test_queue_sorts_money_and_chips_each_in_its_unit(published, monkeypatch):
    from pipelines.web import queue as queue_module

    c = signed_in(app_for(published))
    money = c.get("/cases", params={"flagged": "", "sort": "money"})
    assert rows_of(money) == ["c-000001", "c-000004", "c-000002", "c-000003", "c-000005"]  # 450, 4, 2 USD; then chips
    chips = c.get("/cases", params={"flagged": "", "sort": "chips", "order": "desc"})
    assert rows_of(chips) == ["c-000003", "c-000005", "c-000001", "c-000002", "c-000004"]
    monkeypatch.setattr(queue_module, "PAGE_SIZE", 2)
    second = c.get("/cases", params={"flagged": "", "sort": "money", "page": "2"})
    assert rows_of(second) == ["c-000002", "c-000003"] and "cases 3–4 of 5" in second.text
    up = c.get("/cases", params={"flagged": "", "sort": "money", "order": "asc", "kind": "soft_play"})
    assert rows_of(up) == ["c-000004", "c-000005"]  # the filters hold; a case without money comes last
