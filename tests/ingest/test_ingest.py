"""Landing-folder ingest end to end with the real parser on real PokerStars hands."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from pipelines.lib import ingest
from pipelines.lib import warehouse as wh
from pipelines.lib.handhistory import _pieces
from tests.ingest.conftest import read_chunk

SAMPLE = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files/cash/Stars/Flop/NLHE-6max-USD-0.05-0.10-200911.txt"


@pytest.fixture(scope="module")
def real_hands(corpus_dir):
    """The hands of one real cash-game file, as separate texts (read from the corpus at test time)."""
    text = (corpus_dir / SAMPLE).read_text(encoding="utf-8")
    parts = [p.strip("\n") for p in re.split(r"\n\s*\n(?=PokerStars )", text) if p.strip()]
    assert len(parts) > 10
    return parts


def _old(path, seconds=3600):
    t = time.time() - seconds
    os.utime(path, (t, t))


def _landing(tmp_path, real_hands):
    land = tmp_path / "landing"
    (land / "club" / "day1").mkdir(parents=True)
    (land / "events").mkdir()
    (land / "club" / "day1" / "a.txt").write_text("\n\n\n".join(real_hands[:5]) + "\n\n\n", encoding="utf-8")
    (land / "b.txt").write_bytes(("\ufeff" + "\r\n\r\n".join(real_hands[5:8]).replace("\n", "\r\n") + "\r\n").encode("utf-8"))
    (land / "events" / "platform.jsonl").write_text(
        '{"ts":"2009-11-25T11:00:00Z","type":"login","account":"Hero","session":"s1","ip":"10.0.0.1","device":"d1"}\n'
        "this is not json\n"
        '{"ts":"2009-11-25T11:05:00Z","type":"sit_out","account":"Hero","table":"May IV","tournament":null}\n'
        '{"type":"login","account":"Hero","session":"s2"}\n'
        '{"ts":"2009-11-25T13:00:00Z","type":"logout","account":"Hero","session":"s1"}\n', encoding="utf-8")
    (land / "accounts.csv").write_text("account,created_at,country,payment,vip,referrer\n"
                                       "Hero,2009-01-02,DE,abc,gold,\nGles65,2009-02-03,FR,,silver,Hero\n"
                                       "broken,2009-02-03\n", encoding="utf-8")
    (land / "labels.jsonl").write_text('{"group":"g1","kind":"soft_play","accounts":["a","b"]}\n')
    (land / "README.md").write_text("notes\n")
    for p in land.rglob("*"):
        if p.is_file():
            _old(p)
    return land


def test_landing_folder_ingests_everything_once(tmp_path, real_hands):
    land = _landing(tmp_path, real_hands)
    con = wh.connect(tmp_path / "wh.duckdb")
    r1 = ingest.ingest([land], con, progress=False)
    assert (r1.result.hands_stored, r1.result.duplicates) == (8, 0)
    assert r1.result.events_stored == 3 and r1.result.accounts_stored == 2
    assert r1.result.quarantine_reasons == {"not a JSON object": 1, "missing field": 1, "wrong column count": 1}
    assert re.fullmatch(r"hands stored 8 / duplicate 0 / quarantined 3 \(.*\) · events 3 · accounts 2 · [\d,]+ hands/s",
                        r1.summary())
    log = dict(con.execute("SELECT regexp_extract(source_file, '[^/]+$'), file_kind || '/' || status FROM ingest_log").fetchall())
    assert log == {"a.txt": "hands/done", "b.txt": "hands/done", "platform.jsonl": "events/done",
                   "accounts.csv": "accounts/done", "labels.jsonl": "labels/ignored", "README.md": "ignored/ignored"}
    assert con.execute("SELECT count(*) FROM other_events").fetchall()[0][0] == 0  # labels are never loaded
    # quarantined lines keep file, line number and raw text
    assert con.execute("SELECT regexp_extract(source_file, '[^/]+$'), position, raw FROM quarantine "
                       "WHERE input_kind = 'event' ORDER BY position").fetchall() == [
        ("platform.jsonl", 2, "this is not json"),
        ("platform.jsonl", 4, '{"type":"login","account":"Hero","session":"s2"}')]
    assert con.execute("SELECT position, raw FROM quarantine WHERE input_kind = 'account'").fetchall() == [
        (4, "broken,2009-02-03")]
    assert con.execute("SELECT account, extra FROM accounts ORDER BY account").fetchall() == [
        ("Gles65", '{"vip":"silver","referrer":"Hero"}'), ("Hero", '{"vip":"gold","referrer":""}')]
    assert con.execute("SELECT login_at, logout_at FROM sessions").fetchall()[0][1] is not None
    # the BOM/CRLF file gives the same hands as the plain text does
    assert con.execute("SELECT count(*) FROM hands WHERE source_file LIKE '%b.txt'").fetchall()[0][0] == 3

    before = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in wh.INGEST_TABLES if t != "ingest_log"}
    r2 = ingest.ingest([land], con, progress=False)
    assert r2.files_read == 0 and r2.files_skipped == 6
    assert r2.result.hands_stored == 0 and r2.result.quarantined == 0
    assert before == {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in before}

    # a changed file is read again: its old hands count as duplicates, the new one is stored
    a = land / "club" / "day1" / "a.txt"
    a.write_text(a.read_text(encoding="utf-8") + real_hands[8] + "\n\n\n", encoding="utf-8")
    _old(a, 1800)
    r3 = ingest.ingest([land], con, progress=False)
    assert (r3.files_read, r3.result.hands_stored, r3.result.duplicates) == (1, 1, 5)


def test_growing_file_is_read_up_to_its_last_complete_hand_and_again_later(tmp_path, real_hands):
    land = tmp_path / "landing"
    land.mkdir()
    f = land / "live.txt"
    partial = real_hands[2].split("*** SUMMARY ***")[0]
    f.write_text("\n\n".join(real_hands[:2]) + "\n\n" + partial, encoding="utf-8")
    _old(f)
    con = wh.connect(None)
    r1 = ingest.ingest([land], con, progress=False)
    assert r1.growing == [str(f.resolve())]
    assert (r1.result.hands_stored, r1.result.quarantined) == (2, 0)
    assert con.execute("SELECT status FROM ingest_log").fetchall() == [("growing",)]
    # unchanged but still growing: read again (nothing new)
    r2 = ingest.ingest([land], con, progress=False)
    assert r2.files_read == 1 and r2.result.duplicates == 2 and r2.result.hands_stored == 0
    # the client finishes the hand
    f.write_text("\n\n".join(real_hands[:3]) + "\n\n", encoding="utf-8")
    _old(f)
    r3 = ingest.ingest([land], con, progress=False)
    assert (r3.result.hands_stored, r3.result.duplicates, r3.growing) == (1, 2, [])
    assert con.execute("SELECT status FROM ingest_log ORDER BY started_at DESC LIMIT 1").fetchall() == [("done",)]


INVALID_HAND = "HHSmithy__PokerHandHistoryParser/HandHistories.Parser.UnitTests/SampleHandHistories/PokerStars/CashGame/ValidHandTests/InValidHand.txt"


def test_a_file_cut_short_long_ago_is_done_and_its_last_hand_quarantined(tmp_path, real_hands, corpus_dir):
    """A real file whose only hand stops before its summary (written by a client that died): waited for while it
    may still be written, then, untouched for a day, quarantined as truncated instead of waited for forever."""
    land = tmp_path / "landing"
    land.mkdir()
    cut = land / "cut.txt"
    shutil.copyfile(corpus_dir / INVALID_HAND, cut)
    planted = land / "planted.txt"  # two whole hands, then a third that stops before its summary
    planted.write_text("\n\n".join(real_hands[:2]) + "\n\n" + real_hands[2].split("*** SUMMARY ***")[0],
                       encoding="utf-8")
    for f in (cut, planted):
        _old(f, ingest.ABANDONED_SECONDS - 3600)
    con = wh.connect(None)
    r1 = ingest.ingest([land], con, progress=False)
    assert sorted(r1.growing) == sorted(str(f.resolve()) for f in (cut, planted))
    assert (r1.result.hands_stored, r1.result.quarantined) == (2, 0)
    for f in (cut, planted):
        _old(f, ingest.ABANDONED_SECONDS + 60)
    r2 = ingest.ingest([land], con, progress=False)
    assert r2.growing == [] and (r2.result.hands_stored, r2.result.duplicates) == (0, 2)
    q = con.execute("SELECT source_file, hand_id, reason FROM quarantine ORDER BY hand_id").fetchall()
    assert q == [(str(cut.resolve()), "109681289672", "truncated hand"),
                 (str(planted.resolve()), re.search(r"#(\d+)", real_hands[2]).group(1), "truncated hand")]
    status = con.execute("SELECT source_file, arg_max(status, started_at) FROM ingest_log GROUP BY 1").fetchall()
    assert sorted(s for _, s in status) == ["done", "done"]
    r3 = ingest.ingest([land], con, progress=False)  # done: not read again, nothing doubles
    assert r3.files_read == 0 and con.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 2


def test_a_file_the_parser_fails_on_is_quarantined_and_the_night_goes_on(tmp_path, real_hands, monkeypatch):
    """A parser bug met by one file (here planted) costs that file only: it is quarantined whole with the error and
    logged failed, so the next run reads it again; the other files of its batch are stored."""
    land = tmp_path / "landing"
    land.mkdir()
    (land / "good.txt").write_text("\n\n".join(real_hands[:2]) + "\n\n", encoding="utf-8")
    (land / "bad.txt").write_text(real_hands[3] + "\n\nBOOM\n", encoding="utf-8")
    (land / "accounts.csv").write_text("account,created_at,country,payment\nann,2026-01-02,DE,h\n", encoding="utf-8")
    for f in land.iterdir():
        _old(f)
    real_parse = ingest._parse_texts

    def fragile(texts, names, *args):
        if any("BOOM" in t for t in texts):
            raise ValueError("the parser met BOOM")
        return real_parse(texts, names, *args)

    def broken_accounts(text, name):
        raise RuntimeError("accounts parser bug")

    monkeypatch.setattr(ingest, "_parse_texts", fragile)
    monkeypatch.setattr(ingest._events, "parse_accounts_text", broken_accounts)
    con = wh.connect(None)
    r = ingest.ingest([land], con, progress=False, workers=1)
    assert r.result.hands_stored == 2
    q = con.execute("SELECT regexp_extract(source_file, '[^/]+$'), input_kind, reason, detail, left(raw, 10) "
                    "FROM quarantine ORDER BY 1").fetchall()
    assert q == [("accounts.csv", "file", "parser error", "RuntimeError: accounts parser bug", "account,cr"),
                 ("bad.txt", "file", "parser error", "ValueError: the parser met BOOM", real_hands[3][:10])]
    log = dict(con.execute("SELECT regexp_extract(source_file, '[^/]+$'), status FROM ingest_log").fetchall())
    assert log == {"good.txt": "done", "bad.txt": "failed", "accounts.csv": "failed"}
    monkeypatch.undo()  # the parser fixed: the failed files are read again, the good one is not
    r2 = ingest.ingest([land], con, progress=False, workers=1)
    assert r2.files_read == 2 and r2.result.hands_stored == 1 and r2.result.accounts_stored == 1


def test_recently_modified_file_counts_as_growing(tmp_path, real_hands):
    land = tmp_path / "landing"
    land.mkdir()
    (land / "now.txt").write_text("\n\n".join(real_hands[:2]) + "\n\n", encoding="utf-8")
    con = wh.connect(None)
    r = ingest.ingest([land], con, progress=False, growing_seconds=120)
    assert r.result.hands_stored == 2 and len(r.growing) == 1
    r = ingest.ingest([land], con, progress=False, growing_seconds=0)
    assert r.result.duplicates == 2 and r.growing == []


def test_same_hand_in_two_files_of_one_run(tmp_path, real_hands):
    """A hand in two files of one batch: stored once with its own child rows, the copy counted as duplicate."""
    land = tmp_path / "landing"
    land.mkdir()
    (land / "one.txt").write_text("\n\n".join(real_hands[:3]) + "\n\n", encoding="utf-8")
    (land / "two.txt").write_text("\n\n".join(real_hands[2:4]) + "\n\n", encoding="utf-8")
    con = wh.connect(None)
    r = ingest.ingest([land], con, progress=False, growing_seconds=0)
    assert (r.result.hands_stored, r.result.duplicates) == (4, 1)
    hid = con.execute("SELECT hand_id FROM hands ORDER BY started_at LIMIT 1 OFFSET 2").fetchall()[0][0]
    single = wh.connect(None)
    ingest.ingest([land / "one.txt"], single, progress=False, growing_seconds=0)
    for t in ("seats", "actions", "collections"):
        q = f"SELECT * EXCLUDE (hand_id) FROM {t} WHERE hand_id = ? ORDER BY ALL"
        assert con.execute(q, [hid]).fetchall() == single.execute(q, [hid]).fetchall()


def test_missing_path_is_a_railbird_error(tmp_path):
    from pipelines.lib.errors import RailbirdError

    with pytest.raises(RailbirdError, match="no such file or folder: .*nowhere"):
        ingest.ingest([tmp_path / "nowhere"], wh.connect(None))


def test_whole_corpus_balances_and_reingests_to_nothing(tmp_path, corpus_dir):
    """Every real file: nothing fatal, what is stored balances, a second run adds nothing."""
    con = wh.connect(tmp_path / "wh.duckdb")
    r1 = ingest.ingest([corpus_dir], con, progress=False)
    assert r1.result.hands_stored > 5000
    from pipelines.defs.ingest.checks import BALANCE_SQL

    assert con.execute(BALANCE_SQL).fetchall() == []
    r2 = ingest.ingest([corpus_dir], con, progress=False)
    assert r2.result.hands_stored == 0 and r2.result.quarantined == 0
    assert con.execute("SELECT count(*) FROM hands").fetchall()[0][0] == r1.result.hands_stored


def test_growing_events_file_keeps_its_partial_last_line_for_later(tmp_path):
    land = tmp_path / "landing"
    land.mkdir()
    f = land / "live.jsonl"
    done = '{"ts":"2026-03-04T20:00:00Z","type":"sit_out","account":"amy","table":"T1","tournament":null}\n'
    f.write_text(done + '{"ts":"2026-03-04T20:01:00Z","type":"sit_in","acc', encoding="utf-8")
    con = wh.connect(None)
    r = ingest.ingest([land], con, progress=False, growing_seconds=600)
    assert (r.result.events_stored, r.result.quarantined, len(r.growing)) == (1, 0, 1)
    f.write_text(done + '{"ts":"2026-03-04T20:01:00Z","type":"sit_in","account":"amy","table":"T1","tournament":null}\n',
                 encoding="utf-8")
    _old(f)
    r = ingest.ingest([land], con, progress=False, growing_seconds=600)
    assert (r.result.events_stored, r.result.quarantined, r.growing) == (1, 0, [])
    assert con.execute("SELECT kind FROM sit_events ORDER BY ts").fetchall() == [("sit_out",), ("sit_in",)]


def _file_info(path):
    st = path.stat()
    return ingest.FileInfo(path, "hands", st.st_size, ingest._mtime(st), st.st_mtime)


def test_a_file_larger_than_a_chunk_is_parsed_in_pieces_with_true_line_numbers(tmp_path, real_hands):
    p = tmp_path / "big.txt"
    p.write_text("junk before the first hand\n\n" + "\n\n\n".join(real_hands) + "\n\n", encoding="utf-8")
    _old(p)
    whole = read_chunk([_file_info(p)], growing_seconds=0, now=time.time())
    cut = read_chunk([_file_info(p)], growing_seconds=0, now=time.time(), chunk_bytes=3000)
    assert len(_pieces(p.read_text(encoding="utf-8"), 3000)) > 3
    assert cut.headers_seen == whole.headers_seen == len(real_hands)
    key = ["hand_id", "source_line", "content_hash"]
    assert cut.tables["hands"].select(key).equals(whole.tables["hands"].select(key))
    for name in ("seats", "actions", "collections"):
        assert cut.tables[name].equals(whole.tables[name]), name


def test_a_batch_crosses_the_worker_pipe_unchanged(tmp_path, real_hands):
    """Workers pickle their batch (as Arrow IPC): every table, the quarantine and the file log come back equal,
    column types included (decimals, lists, enums)."""
    import pickle

    p = tmp_path / "f.txt"
    broken = "\n".join(real_hands[0].splitlines()[:6]).replace("Game #", "Game #9")  # a hand cut short
    p.write_text("\n\n\n".join([broken, *real_hands]) + "\n\n", encoding="utf-8")
    _old(p)
    batch = read_chunk([_file_info(p)], growing_seconds=0, now=time.time())
    back = pickle.loads(pickle.dumps(batch))
    assert back.headers_seen == batch.headers_seen == len(real_hands) + 1
    assert batch.quarantine.height == 1 and back.quarantine.equals(batch.quarantine)
    assert set(back.tables) == set(batch.tables)
    for name, df in batch.tables.items():
        assert back.tables[name].schema == df.schema and back.tables[name].equals(df), name
    assert batch.files.height == 1 and back.files.equals(batch.files)  # the file's ingest-log row


def test_staged_child_rows_load_like_direct_inserts_and_roll_back_on_failure(tmp_path, real_hands, monkeypatch):
    """Hands and child rows staged as Parquet end up exactly as direct inserts (one batch per file, a hand
    repeated across batches: the staged hands count for the later batches' dedupe); a failure after staging
    leaves the warehouse as it was and no staging folder behind."""
    land = tmp_path / "landing"
    land.mkdir()
    for i in range(3):
        (land / f"{i}.txt").write_text("\n\n".join(real_hands[4 * i: 4 * i + 5]) + "\n\n", encoding="utf-8")
        _old(land / f"{i}.txt")
    files = ingest.discover([land])

    def run(con, **kw):
        todo, _ = ingest.changed_files(files, {})
        return wh.load_many(con, ingest.iter_batches(todo, growing_seconds=0, workers=1, chunk_bytes=1), run_id="r", **kw)

    direct = wh.connect(None)
    d = run(direct, staged=False)
    folders = []
    real_mkdtemp = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: folders.append(real_mkdtemp(**kw)) or folders[-1])

    def boom(stage):
        if stage == "staged":
            raise RuntimeError("disk on fire")

    staged = wh.connect(None)
    with pytest.raises(RuntimeError, match="disk on fire"):
        run(staged, fail_hook=boom)
    assert folders and not any(os.path.exists(f) for f in folders)
    assert all(staged.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == 0 for t in wh.HAND_TABLES)
    r = run(staged)
    assert r.hands_stored == d.hands_stored == direct.execute("SELECT count(*) FROM hands").fetchone()[0] > 10
    assert r.duplicates == d.duplicates > 0 and r.rows == d.rows
    for t in wh.HAND_TABLES + ["quarantine"]:
        q = f"SELECT * EXCLUDE (quarantined_at) FROM {t} ORDER BY ALL" if t == "quarantine" else f"SELECT * FROM {t} ORDER BY ALL"
        assert staged.execute(q).fetchall() == direct.execute(q).fetchall(), t


def test_child_keys_stay_unique_without_an_index(tmp_path, real_hands):
    """The hand child tables have no primary-key index: the loader alone keeps their keys unique.

    One run sees a hand twice in one file, twice across files and across
    chunks (staged as Parquet and inserted directly); later runs re-read a
    grown file and a changed one. Every key occurs once, and every child row
    belongs to a stored hand."""
    land = tmp_path / "landing"
    land.mkdir()
    lines = real_hands[1].split("\n")
    h1 = "\n".join(lines[:2] + ["Table leave user"] + lines[2:])  # (a client message: a row of unknown_lines)
    (land / "a.txt").write_text("\n\n".join([real_hands[0], h1] + real_hands[2:4] + [h1]) + "\n\n", encoding="utf-8")
    (land / "b.txt").write_text("\n\n".join(real_hands[3:7]) + "\n\n", encoding="utf-8")
    grow = land / "c.txt"
    grow.write_text("\n\n".join(real_hands[6:8]) + "\n\n" + real_hands[8].split("*** SUMMARY ***")[0], encoding="utf-8")
    for p in land.iterdir():
        _old(p)
    con = wh.connect(tmp_path / "w.duckdb")
    keyed = {t: k for t, k in wh.CHILD_TABLES.items() if k and k[0] == "hand_id"}
    assert {t for t, in con.execute(
        "SELECT DISTINCT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'").fetchall()
    }.isdisjoint(set(keyed) | {"hands", "decisions"})

    def run(**kw):
        todo, _ = ingest.changed_files(ingest.discover([land]), ingest.known_files(con))
        return wh.load_many(con, ingest.iter_batches(todo, growing_seconds=0, **kw), run_id="r")

    r1 = run(workers=1, chunk_bytes=1)  # one chunk per file: duplicates across batches of one run
    assert r1.hands_stored == 8 and r1.duplicates == 3
    grow.write_text("\n\n".join(real_hands[6:10]) + "\n\n", encoding="utf-8")
    (land / "b.txt").write_text("\n\n".join(real_hands[3:12]) + "\n\n", encoding="utf-8")
    for p in land.iterdir():
        _old(p)
    r2 = run(workers=1)
    assert r2.hands_stored == 4 and r2.duplicates == 14  # a.txt (touched) 5, b.txt 5, c.txt 4
    assert con.execute("SELECT count(*), count(DISTINCT hand_id) FROM hands").fetchone() == (12, 12)
    for t, key in keyed.items():
        cols = ", ".join(key)
        n, distinct, orphans = con.execute(
            f"SELECT count(*), (SELECT count(*) FROM (SELECT DISTINCT {cols} FROM {t})), "
            f"count(*) FILTER (WHERE hand_id NOT IN (SELECT hand_id FROM hands)) FROM {t}").fetchone()
        assert n == distinct and orphans == 0, t
        assert n > 0 or t in ("table_events", "boards"), t


def test_a_file_read_twice_in_one_staged_run_quarantines_its_bad_hand_once(tmp_path, real_hands):
    """Two batches of one run carry the same file (the Dagster path loads several staged reads of a growing
    file together): the second batch's hands are duplicates of hands staged by the first, and its quarantine
    rows repeat rows staged by the first, so nothing lands twice; staged and direct loads agree."""
    land = tmp_path / "landing"
    land.mkdir()
    bad = real_hands[1].split("*** SUMMARY ***")[0].rstrip("\n")
    (land / "a.txt").write_text("\n\n".join([real_hands[0], bad, real_hands[2]]) + "\n\n", encoding="utf-8")
    _old(land / "a.txt")
    todo, _ = ingest.changed_files(ingest.discover([land]), {})
    results = {}
    for staged in (True, False):
        con = wh.connect(None)
        twice = [b for _ in range(2) for b in ingest.iter_batches(todo, growing_seconds=0, workers=1)]
        r = wh.load_many(con, twice, run_id="r", staged=staged)
        assert (r.hands_stored, r.duplicates, r.quarantined) == (2, 2, 1), staged
        assert con.execute("SELECT count(*), count(DISTINCT hand_id) FROM hands").fetchone() == (2, 2)
        results[staged] = con.execute("SELECT source_file, position, reason, raw FROM quarantine").fetchall()
    assert len(results[True]) == 1 and results[True] == results[False]


def test_hands_repeated_in_one_batch_store_one_copy_of_their_rows(tmp_path, real_hands):
    """A hand three times in one batch (same content) and one hand twice with different content: the stored
    child rows are exactly those of a run that saw each hand once (the first copy, for the conflict)."""
    changed = real_hands[4].replace("*** SUMMARY ***", 'Hero said, "gl"\n*** SUMMARY ***', 1)
    assert changed != real_hands[4]
    land, once = tmp_path / "rep", tmp_path / "once"
    land.mkdir()
    once.mkdir()
    (land / "a.txt").write_text("\n\n".join(real_hands[:4] + real_hands[1:2] + [real_hands[4]]) + "\n\n", encoding="utf-8")
    (land / "b.txt").write_text("\n\n".join([real_hands[1], changed, real_hands[5]]) + "\n\n", encoding="utf-8")
    (once / "a.txt").write_text("\n\n".join(real_hands[:6]) + "\n\n", encoding="utf-8")
    stores = {}
    for label, folder in (("rep", land), ("once", once)):
        for f in folder.iterdir():
            _old(f)
        con = wh.connect(None)
        todo, _ = ingest.changed_files(ingest.discover([folder]), {})
        r = wh.load_many(con, ingest.iter_batches(todo, growing_seconds=0, workers=1), run_id="r")
        stores[label] = (r, con)
    rep = stores["rep"][0]
    assert (rep.hands_stored, rep.duplicates, dict(rep.quarantine_reasons)) == (6, 2, {"conflict": 1})
    for t in wh.CHILD_TABLES:
        q = f"SELECT * FROM {t} ORDER BY ALL"
        assert stores["rep"][1].execute(q).fetchall() == stores["once"][1].execute(q).fetchall(), t


def test_child_rows_spilled_by_the_parser_load_like_rows_sent_to_the_loader(tmp_path, real_hands, monkeypatch):
    """Batch.spill (the parse worker writes the child rows of a batch's single hands to Parquet): every table
    ends exactly as when the loader gets those rows in memory, staged or inserted directly. The runs cover a
    hand repeated in one batch (same content, and a conflict), a hand repeated across batches (new in one
    batch whose other single hands are partly dropped, a duplicate in the next one), a later run
    where a batch's single hands are partly stored already (their rows dropped from its file at the insert),
    all stored already (the file left out), and one run that loads the same spilled batches twice (the second
    time every single hand is stored: left out)."""
    changed = real_hands[4].replace("*** SUMMARY ***", 'Hero said, "gl"\n*** SUMMARY ***', 1)
    def tables(con):
        return {t: con.execute(f"SELECT * EXCLUDE (quarantined_at) FROM {t} ORDER BY ALL" if t == "quarantine"
                               else f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in wh.HAND_TABLES + ["quarantine"]}

    def runs(spill, staged):
        con = wh.connect(None)
        folder, land = tmp_path / f"spill-{spill}-{staged}", tmp_path / "landing"  # one landing path: same rows
        folder.mkdir()
        shutil.rmtree(land, ignore_errors=True)
        land.mkdir()
        (land / "a.txt").write_text("\n\n".join(real_hands[:4] + real_hands[1:2] + [real_hands[4]]) + "\n\n", encoding="utf-8")
        (land / "b.txt").write_text("\n\n".join([real_hands[1], changed] + real_hands[5:7]) + "\n\n", encoding="utf-8")
        (land / "c.txt").write_text("\n\n".join(real_hands[6:9]) + "\n\n", encoding="utf-8")
        out = []

        def run(twice=False, **kw):
            todo, _ = ingest.changed_files(ingest.discover([land]), ingest.known_files(con))
            batches = list(ingest.iter_batches(todo, growing_seconds=0, workers=1,
                                               spill_dir=folder if spill else None, **kw))
            if spill:
                assert all(b.spilled for b in batches if b.tables["hands"].height)
            r = wh.load_many(con, batches * (2 if twice else 1), run_id="r", staged=staged)
            out.append((r.hands_stored, r.duplicates, r.quarantined, r.rows))

        for p in land.iterdir():
            _old(p)
        run(chunk_bytes=1)  # one batch per file: a and b share hands
        (land / "c.txt").write_text("\n\n".join(real_hands[6:12]) + "\n\n", encoding="utf-8")  # 3 stored, 3 new
        (land / "a.txt").write_text("\n\n".join(real_hands[:4]) + "\n\n", encoding="utf-8")  # all stored
        for p in land.iterdir():
            _old(p)
        run(chunk_bytes=1)
        (land / "d.txt").write_text("\n\n".join(real_hands[10:14]) + "\n\n", encoding="utf-8")
        _old(land / "d.txt")
        run(twice=True)
        return out, tables(con)

    ref_counts, ref = runs(False, True)
    assert [c[:3] for c in ref_counts] == [(9, 3, 1), (3, 10, 0), (2, 6, 0)]
    kinds = []
    flush = wh._Stage.flush
    monkeypatch.setattr(wh._Stage, "flush", lambda self, con: kinds.append(
        (sum(map(len, self.spilled.values())), sum(map(len, self.partial.values())))) or flush(self, con))
    for spill, staged in ((True, True), (True, False), (False, False)):
        kinds.clear()
        counts, got = runs(spill, staged)
        if spill and staged:  # files whole in the first run, less dropped hands in the second and third
            assert kinds[0][0] > 0 and kinds[0][1] > 0 and kinds[1] == (0, kinds[1][1]) and kinds[1][1] > 0, kinds
        assert counts == ref_counts, (spill, staged)
        for t in got:
            assert got[t] == ref[t], (t, spill, staged)


def test_ingest_with_parse_workers_spills_and_cleans_up_after_success_and_failure(tmp_path, real_hands, monkeypatch):
    """``ingest`` with a pool of parse workers: they write the child rows as stage files beside the warehouse,
    the run stores what a run without spilling stores, and neither a failed run (rolled back) nor a good one
    leaves a folder behind."""
    land = tmp_path / "landing"
    land.mkdir()
    for i in range(4):
        (land / f"{i}.txt").write_text("\n\n".join(real_hands[3 * i: 3 * i + 5]) + "\n\n", encoding="utf-8")
        _old(land / f"{i}.txt")
    iter_batches = ingest.iter_batches
    monkeypatch.setattr(ingest, "iter_batches", lambda *a, **kw: iter_batches(*a, chunk_bytes=1, **kw))  # pool used
    spilled = []
    load_many = wh.load_many

    def watching(con, batches, **kw):
        def each():
            for b in batches:
                spilled.append(sorted(b.spilled))
                yield b
        return load_many(con, each(), **kw)

    monkeypatch.setattr(wh, "load_many", watching)

    def boom(stage):
        if stage == "staged":
            raise RuntimeError("disk on fire")

    db = tmp_path / "wh" / "w.duckdb"
    with pytest.raises(RuntimeError, match="disk on fire"):
        ingest.ingest([land], db, growing_seconds=0, progress=False, workers=2, fail_hook=boom)
    assert [p.name for p in db.parent.iterdir() if p.name.startswith(".railbird")] == []
    r = ingest.ingest([land], db, growing_seconds=0, progress=False, workers=2)
    assert [p.name for p in db.parent.iterdir() if p.name.startswith(".railbird")] == []
    assert len(spilled) >= 5 and all("actions" in s and "seats" in s for s in spilled)  # 4 good, >= 1 failed
    monkeypatch.setattr(wh, "load_many", load_many)
    ref = wh.connect(None)
    todo, _ = ingest.changed_files(ingest.discover([land]), {})
    rr = wh.load_many(ref, iter_batches(todo, growing_seconds=0, workers=1, chunk_bytes=1), run_id="r")
    assert (r.result.hands_stored, r.result.duplicates, r.result.rows) == (rr.hands_stored, rr.duplicates, rr.rows)
    con = wh.connect(db)
    for t in wh.HAND_TABLES:
        q = f"SELECT * FROM {t} ORDER BY ALL"
        assert con.execute(q).fetchall() == ref.execute(q).fetchall(), t


def test_one_copy_rows_sends_copies_that_parsed_differently_to_a_reparse():
    """Rows whose counts are not a multiple of the copies mark their hand for a re-parse; even ones are halved."""
    import polars as pl

    same = pl.DataFrame({"hand_id": ["1", "2"], "_c": [2, 2]}, schema_overrides={"_c": pl.UInt32})
    ev = pl.DataFrame({"hand_id": ["1", "1", "1", "1", "2", "2", "3"], "line": [5, 7, 5, 7, 5, 6, 1]})
    rows, uneven = wh._one_copy_rows(wh.Batch(tables={"table_events": ev}), same)
    assert uneven.get_column("hand_id").to_list() == ["2"]
    assert sorted(rows["table_events"].filter(pl.col("hand_id") == "1").get_column("line").to_list()) == [5, 7]


def test_discover_lists_what_walking_and_resolving_every_file_lists(tmp_path):
    """discover resolves a folder once and only its symlinked files one by one: the same list as os.walk with
    every file resolved (nested folders, a symlinked file, a broken symlink, a symlinked folder not entered,
    the landing itself reached through a symlink)."""
    tmp_path = tmp_path.resolve()
    real = tmp_path / "real"
    (real / "a" / "b").mkdir(parents=True)
    (real / "a" / "b" / "h1.txt").write_text("x")
    (real / "h0.txt").write_text("x")
    other = tmp_path / "other"
    (other / "d").mkdir(parents=True)
    (other / "target.txt").write_text("x")
    (other / "d" / "inside.txt").write_text("x")
    (real / "a" / "link.txt").symlink_to(other / "target.txt")
    (real / "broken.txt").symlink_to(tmp_path / "missing.txt")
    (real / "dirlink").symlink_to(other / "d", target_is_directory=True)
    (tmp_path / "landing").symlink_to(real, target_is_directory=True)

    def walked(path):
        return sorted({Path(root, f).resolve() for root, _, files in os.walk(path) for f in files})

    got = ingest.discover([tmp_path / "landing"])
    # links out of the landing folder (a file, a broken link, a folder) come back as the links themselves (refused
    # by ingest, never followed), every other file resolved
    refused = [real / "a" / "link.txt", real / "broken.txt", real / "dirlink"]
    assert got == sorted([p for p in walked(tmp_path / "landing") if p.is_relative_to(real)] + refused)
    assert other / "target.txt" not in got and tmp_path / "missing.txt" not in got
    assert all(p.parent != other / "d" for p in got)  # the symlinked folder is not entered
    assert [ingest.file_kind(p) for p in refused] == ["refused"] * 3
    assert ingest.discover([tmp_path / "landing", real / "h0.txt"]) == got


def test_a_file_staged_in_pieces_loads_in_order_with_one_log_row_counting_every_piece(tmp_path, real_hands):
    """The Dagster path stages each Batch of a file larger than a chunk (one per piece, the file's log row with the
    last) as a folder of its own; the folders list in the order staged, and the load logs the file once with every
    piece's hands."""
    p = tmp_path / "big.txt"
    text = "\n\n\n".join(real_hands) + "\n\n"
    p.write_text(text, encoding="utf-8")
    _old(p)
    batches = list(ingest.iter_batches([_file_info(p)], growing_seconds=0, workers=1, chunk_bytes=len(text) // 3))
    assert len(batches) >= 3 and [b.files is not None for b in batches] == [False] * (len(batches) - 1) + [True]
    staging, days, folders = tmp_path / "staging", set(), []
    for b in batches:
        folder, d = ingest.stage(b, staging)
        folders.append(folder)
        days.update(d)
    assert ingest.staged_batches(staging) == folders
    con = wh.connect(tmp_path / "wh.duckdb")
    r = ingest.load_staged(con, staging, days, run_id="r")
    assert r.hands_stored == len(real_hands)
    assert con.execute("SELECT source_file, stored, status FROM ingest_log").fetchall() == [(str(p), len(real_hands), "done")]
