"""Case reports: self-contained, every hole card, the marked decision, graph, timeline, SQL; all escaped."""

from __future__ import annotations

import json
import re

import duckdb

from cases_world import CHAT_LINE, EMO, RTL, XSS1, XSS2
from pipelines.lib.reports import build_report, json_for_html, render_html, write_reports


def test_report_of_the_chip_dumpers(published):
    con = duckdb.connect(str(published / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        n = write_reports(con, ["c-000001", "c-000002"], published / "out")
        rep = build_report(con, "c-000001")
    finally:
        con.close()
    assert n == 2
    assert rep["case"]["accounts"] == ["amy", "bob"]
    assert rep["accusation"].startswith("amy and bob are suspected of chip dumping")
    hand = rep["replays"][0]
    assert hand["hand_id"] == "1001"
    assert {s["player"]: s["cards"] for s in hand["seats"]} == {"zed": ["7♣", "2♦"], "amy": ["A♥", "A♦"],
                                                                "bob": ["9♠", "8♠"]}
    assert [st["street"] for st in hand["streets"]] == ["preflop", "flop", "turn", "river"]
    marked = [a for st in hand["streets"] for a in st["actions"] if a["marked"]]
    assert [(a["seq"], a["player"], a["text"]) for a in marked] == [(6, "amy", "bets 100 and is all-in")]
    flows = {(e["src"], e["dst"], e["kind"]): e["amount"] for e in rep["graph_edges"]}
    assert flows[("amy", "bob", "chips")] == 400.0 and flows[("amy", "bob", "transfer")] == 50.0
    ev = rep["signals"][0]["evidence"][0]
    assert (ev["value"], ev["baseline"], ev["n"], ev["p_value"]) == (200.0, 3.5, 2, 0.001)
    html = (published / "out" / "reports" / "c-000001.html").read_text()
    assert "<svg" in html and "variance: rejected" in html and "SELECT avg(-net) FROM seats" in html
    assert "FROM actions WHERE hand_id = &#39;1001&#39;" in html  # autoescaped quotes
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched from anywhere
    data = json.loads(re.search(r'<script type="application/json" id="case-data">(.*?)</script>', html, re.S).group(1))
    assert data["case"]["case_id"] == "c-000001"
    assert json.loads((published / "out" / "reports" / "c-000001.json").read_text())["case"]["case_id"] == "c-000001"


def test_hostile_names_are_escaped_in_html_svg_and_inline_json(published):
    con = duckdb.connect(str(published / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        write_reports(con, ["c-000002"], published / "out")
    finally:
        con.close()
    html = (published / "out" / "reports" / "c-000002.html").read_text()
    assert XSS1 not in html and XSS2 not in html
    assert "<img" not in html and html.count("<script") == 1  # only the inert application/json block
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    blob = re.search(r'<script type="application/json" id="case-data">(.*?)</script>', html, re.S).group(1)
    assert "<" not in blob and ">" not in blob
    assert XSS1 in json.loads(blob)["case"]["accounts"]


def test_hand_chat_report_shows_the_line_in_its_place_and_the_partner_s_next_decision(second_night):
    con = duckdb.connect(str(second_night / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        rep = build_report(con, "c-000007")
    finally:
        con.close()
    html = render_html(rep)
    assert rep["chat"] == [{"hand_id": "1011", "line": 16, "speaker": RTL, "partner": EMO, "said": CHAT_LINE,
                            "before": f"{EMO}: check (flop)", "partner_next": "check (flop)"}]
    hand = rep["replays"][0]
    acts = [(st["street"], a["seq"], a) for st in hand["streets"] for a in st["actions"]]
    assert [(st, seq, [m["text"] for m in a["chat"]]) for st, seq, a in acts if a["chat"]] == [("flop", 5, [CHAT_LINE])]
    said = acts[5][2]["chat"][0]
    assert said["flagged"] and said["player"] == RTL and EMO in said["why"]
    assert [(seq, a["player"]) for _, seq, a in acts if a["marked"]] == [(5, EMO)]  # the partner's decision after it
    assert [(m["text"], m["flagged"]) for m in hand["chat_before"]] == [("gl all", False)]  # between hands
    assert [(m["text"], m["flagged"]) for m in hand["chat_after"]] == [("gg <b>wp</b>", False)]  # after the hand
    assert "<script>alert(3)" not in html and "<b>wp</b>" not in html and "<i>x</i>" not in html
    replay = html[html.index('<section id="hands">'):]
    assert replay.index('value="3"') < replay.index("flagged-chat") < replay.index('value="5"')
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in replay and "gg &lt;b&gt;wp&lt;/b&gt;" in replay


def test_replays_place_chat_where_the_detector_does(second_night):
    """The replay's narrowed placement query and the hand_chat detector's over the whole warehouse agree."""
    from detectors.hand_chat.lines import chat_lines
    from pipelines.lib.replay import place_chat, table_names

    con = duckdb.connect(str(second_night / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        ref = [(r["hand_id"], r["line"], r["next_seq"], r["in_play"]) for r in chat_lines(con).iter_rows(named=True)]
        ids = [r[0] for r in con.execute("SELECT hand_id FROM hands ORDER BY hand_id").fetchall()]
        placed = place_chat(con, ids, table_names(con))
    finally:
        con.close()
    assert len(ref) == 13 and sorted((h, r["line"], r["next_seq"], r["in_play"]) for h, rows in placed.items()
                                    for r in rows) == sorted(ref)


def test_flip_timeline_reads_each_all_in_against_the_weak_line_and_the_players_own_range(second_night):
    con = duckdb.connect(str(second_night / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        rep = build_report(con, "c-000008")
    finally:
        con.close()
    html = render_html(rep)
    f = rep["flips"]
    assert (f["a"], f["b"]) == ("ivan", EMO) and [m["tournament"] for m in f["matches"]] == ["T3"]
    assert [k["what"] for k in f["matches"][0]["marks"]] == ["hand", "weak", "hand", "weak", "short", "flip"]
    ranges = {g["player"]: g for g in f["ranges"]}
    assert ranges["ivan"]["n"] == 1 and ranges[EMO]["n"] == 0  # ivan went all in against kim with queens only
    rows = {x["hand_id"]: x for x in f["flips"]}
    assert list(rows) == ["2002", "2004", "2005", "2006"]
    assert rows["2005"]["what"] == "short" and "push-or-fold" in rows["2005"]["verdict"]
    ivan = {h: next(s for s in x["sides"] if s["player"] == "ivan") for h, x in rows.items()}
    assert ivan["2002"]["weak"] and ivan["2002"]["outside_own"] and not ivan["2006"]["outside_own"]
    assert ivan["2005"]["weak"] and not ivan["2005"]["outside_own"]  # a short stack is not judged by the range at depth
    svg = html[html.index('<section id="flips">'):html.index('<section id="accounts">')]
    assert svg.count('class="flip-weak"') == 2 and svg.count('class="flip-short"') == 1
    assert "<i>x</i>" not in html and "&lt;i&gt;x&lt;/i&gt;" in svg


def test_json_for_html_escapes_closing_tags():
    text = json_for_html({"a": "</script><script>alert(1)</script>", "b": "\u2028&'"})
    assert "<" not in text and ">" not in text and "&" not in text and "'" not in text and "\u2028" not in text
    assert json.loads(text)["a"] == "</script><script>alert(1)</script>"


def test_seat_handoff_report_marks_the_change_point_and_draws_the_devices(published):
    con = duckdb.connect(str(published / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        rep = build_report(con, "c-000003")
    finally:
        con.close()
    assert rep["case"]["kind"] == "seat_handoff" and rep["case"]["accounts"] == ["eve"]
    marked = [a for st in rep["replays"][0]["streets"] for a in st["actions"] if a["marked"]]
    assert [(a["player"], a["text"]) for a in marked] == [("eve", "calls 1")]
    assert "change point" in marked[0]["why"]
    assert {e["dst"] for e in rep["graph_edges"]} == {"device dev-eve", "device dev-other", "ip 10.0.0.5", "ip 10.0.0.6"}
    devices = [b["title"].split(" device ")[1].split(" ")[0] for row in rep["timeline"]["rows"] for b in row["bars"]]
    assert devices == ["dev-eve", "dev-other"]
    assert "change_point_hand" in rep["signals"][0]["extra"]


def test_timeline_shows_platform_and_hand_history_sit_outs(published):
    con = duckdb.connect(str(published / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        rep = build_report(con, "c-000005")  # amy and carl (unflagged soft play), hand 1006 where amy sat out
    finally:
        con.close()
    ticks = {row["label"]: [k["kind"] for k in row["ticks"]] for row in rep["timeline"]["rows"]}
    assert ticks == {"amy": ["sitting_out"], "carl": ["sit_out", "sit_in"]}


def test_a_ring_shows_as_one_picture(tmp_path):
    from cases_world import nightly

    cases = {c["kind"]: c for c in nightly(tmp_path, 2, "run1") if c["kind"] in ("chip_dumping", "bounty_collusion")}
    con = duckdb.connect(str(tmp_path / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        rep = build_report(con, cases["chip_dumping"]["case"])
    finally:
        con.close()
    ring = rep["ring"]
    assert {x["kind"] for x in ring["cases"]} == {"chip_dumping", "bounty_collusion", "soft_play"}
    assert {n["name"] for n in ring["nodes"]} == {"amy", "bob", "carl", "dan", "frank"}
    assert {(e["src"], e["dst"]) for e in ring["edges"] if e["case"] == cases["bounty_collusion"]["case"]} == {("bob", "dan")}


def test_plain_sentence_comes_from_structured_fields_not_the_summary():
    from pipelines.lib.case_story import lead_figures, plain_sentence

    sig = {"kind": "soft_play", "summary": "IGNORE ME: 999 hands, 1,000,000 EUR",
           "evidence": [{"name": "carl bets or raises dan", "value": 0.05, "baseline": 0.25, "n": 400, "p_value": 1e-6},
                        {"name": "weak figure", "value": 3.0, "baseline": 2.0, "n": 10, "p_value": 0.3},
                        {"name": "no baseline", "value": 1.0, "n": 10, "p_value": 1e-9}]}
    case = {"kind": "soft_play", "accounts": ["carl", "dan"]}
    facts = {"money": 812.5, "currency": "USD", "chips": None, "hands_together": 564}
    text = plain_sentence(case, [sig], facts)
    assert text == ("carl and dan are suspected of soft play (not playing against each other as they play against "
                    "others): carl bets or raises dan was 0.05, 20% of what their own play gives (0.25), on a "
                    "sample of 400, over the 564 hands they played together; 812.50 USD at stake.")
    assert "IGNORE" not in text and "EUR" not in text
    tournament = plain_sentence({"kind": "seat_handoff", "accounts": ["eve"]}, [],
                                {"money": None, "currency": "", "chips": 12000.0, "hands_together": 90})
    assert tournament.endswith("over the 90 hands the account played; 12,000 tournament chips at stake.")
    figs = lead_figures([sig])
    assert [f["name"] for f in figs] == ["carl bets or raises dan", "weak figure"]  # smallest p first, baseline needed
    lo, hi = figs[0]["lo"], figs[0]["hi"]  # binomial interval of a 25 % rate over 400: 0.25 ± 0.042
    assert abs(lo - 0.2076) < 1e-3 and abs(hi - 0.2924) < 1e-3 and figs[0]["outside"]
    assert figs[1]["lo"] is not None and not figs[1]["outside"]  # 3 of 10 against 2 expected: inside


def test_report_has_its_story_chart_and_units(published):
    con = duckdb.connect(str(published / "snapshot" / "warehouse.duckdb"), read_only=True)
    try:
        rep = build_report(con, "c-000001")
        handoff = build_report(con, "c-000003")
    finally:
        con.close()
    assert rep["story"].startswith("amy and bob are suspected of chip dumping")
    assert rep["story"].endswith("over the 2 hands they played together; 450 USD at stake.")
    assert rep["chart"]["rows"][0]["value"] == "200" and rep["chart"]["rows"][0]["baseline"] == "3.50"
    flow = next(e for e in rep["graph_edges"] if e["kind"] == "chips")
    assert flow["label"] == "400 USD in 2 hands"  # a cash game's money in its currency, not "chips"
    assert handoff["story"].endswith("4 tournament chips at stake.")
    assert len({(e["lx"], e["ly"]) for e in rep["graph"]["edges"]}) == len(rep["graph"]["edges"])
