"""Hostile files cost only themselves (issue 31, item 6): file names of any bytes, seat numbers and amounts out of
range, symbolic links out of the landing folder. Fixtures: real hands of the corpus, written to a temporary folder."""
from __future__ import annotations

import hashlib
import os
import re

import polars as pl
import pytest

from pipelines.lib import ingest
from pipelines.lib import warehouse as wh
from pipelines.lib.handhistory import _pieces, file_name, file_path, parse_texts
from tests.ingest.conftest import read_chunk

SAMPLE = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files/cash/Stars/Flop/NLHE-6max-USD-0.05-0.10-200911.txt"
SECRET = "TOP SECRET: this text lives outside the landing folder"


@pytest.fixture(scope="module")
def real_hands(corpus_dir):
    text = (corpus_dir / SAMPLE).read_text(encoding="utf-8")
    parts = [p.strip("\n") for p in re.split(r"\n\s*\n(?=PokerStars )", text) if p.strip()]
    assert len(parts) > 10
    return parts


def _file(hands) -> str:
    return "\n\n\n".join(hands) + "\n\n\n"


def _ingest(paths, db):
    con = wh.connect(db)
    try:
        ingest.ingest(paths, con, progress=False, growing_seconds=0, workers=1)
        return {t: con.sql(f'SELECT * FROM "{t}"').pl() for t in ("hands", "ingest_log", "quarantine")}
    finally:
        con.close()


def test_file_name_of_any_bytes_is_read_and_logged_escaped(tmp_path, real_hands):
    land = tmp_path / "landing"
    land.mkdir()
    bad = os.path.join(os.fsencode(land), b"bad\xffname \xe9.txt")
    with open(bad, "wb") as fh:
        fh.write(_file(real_hands[:3]).encode())
    (land / "good.txt").write_text(_file(real_hands[3:6]), encoding="utf-8")
    t = _ingest([land], tmp_path / "wh.duckdb")
    assert t["hands"].height == 6
    shown = file_name(bad)
    assert shown.endswith("bad\\xffname \\xe9.txt") and shown.isprintable()
    assert file_path(shown) == bad
    assert shown in t["ingest_log"]["source_file"].to_list()
    assert t["hands"]["source_file"].to_list().count(shown) == 3
    # a second run knows the file by the same name: nothing is read again
    con = wh.connect(tmp_path / "wh.duckdb")
    try:
        r = ingest.ingest([land], con, progress=False, growing_seconds=0, workers=1)
    finally:
        con.close()
    assert r.files_skipped == 2 and r.files_read == 0


def _with_seat(hand: str, old: int, new: int) -> str:
    return re.sub(rf"(?m)^Seat {old}:", f"Seat {new}:", hand)


@pytest.mark.parametrize("damage", [
    lambda h: _with_seat(h, 1, 1025),  # hand * 1024 + seat: the next hand's seat 1
    lambda h: _with_seat(h, 1, 99999999999),  # not an Int32
    lambda h: re.sub(r"\(\$[0-9.]+ in chips\)", "($99999999999999999999999 in chips)", h, count=1),
    lambda h: re.sub(r"Total pot \$[0-9.]+", "Total pot $99999999999999999999", h),
    lambda h: re.sub(r"posts big blind \$[0-9.]+", "posts big blind $99999999999.99", h, count=1),
])
def test_a_hand_with_absurd_seats_or_sizes_costs_only_itself(real_hands, damage):
    honest = parse_texts([_file(real_hands)], ["honest.txt"])
    assert honest.quarantine.height == 0
    hostile = damage(real_hands[0])
    assert hostile != real_hands[0]
    r = parse_texts([_file([hostile] + real_hands[1:])], ["mixed.txt"])
    assert r.tables["hands"]["hand_id"].to_list() == honest.tables["hands"]["hand_id"].to_list()[1:]
    assert r.quarantine.height == 1 and r.quarantine.item(0, "hand_id") == honest.tables["hands"].item(0, "hand_id")
    for name in ("seats", "actions", "collections"):
        assert r.tables[name].equals(honest.tables[name].slice(honest.tables[name]["hand_id"].eq(
            honest.tables["hands"].item(0, "hand_id")).sum())), name


def test_links_out_of_the_landing_folder_are_refused_and_logged(tmp_path, real_hands):
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (outside / "folder" / "more.txt").write_text(SECRET + "\n", encoding="utf-8")
    land = tmp_path / "landing"
    (land / "real").mkdir(parents=True)
    (land / "real" / "a.txt").write_text(_file(real_hands[:2]), encoding="utf-8")
    (land / "b.txt").write_text(_file(real_hands[2:4]), encoding="utf-8")
    os.symlink(outside / "secret.txt", land / "leak.txt")
    os.symlink(outside / "folder", land / "leakdir")
    os.symlink(land / "real", land / "inside")  # a linked folder inside: read (at its target, once)
    os.symlink(land / "b.txt", land / "again.txt")
    t = _ingest([land], tmp_path / "wh.duckdb")
    assert t["hands"].height == 4
    log = dict(zip(t["ingest_log"]["source_file"].to_list(), t["ingest_log"]["status"].to_list()))
    assert log[str(land / "leak.txt")] == "refused" and log[str(land / "leakdir")] == "refused"
    assert log[str(land / "real" / "a.txt")] == "done" and log[str(land / "b.txt")] == "done"
    assert len(log) == 4
    q = t["quarantine"]
    assert sorted(q["reason"].to_list()) == ["link out of the landing folder"] * 2
    again = _ingest([land], tmp_path / "wh.duckdb")  # unchanged links: not logged or quarantined again
    assert again["quarantine"].height == 2 and again["ingest_log"].height == t["ingest_log"].height
    for frame in t.values():
        for col in frame.columns:
            if frame[col].dtype == str or str(frame[col].dtype) == "String":
                assert not frame[col].str.contains("TOP SECRET", literal=True).any(), col


def test_text_without_hands_is_cut_in_pieces_of_bounded_size(real_hands):
    junk = "\n".join(f"junk line {i} " + "x" * 90 for i in range(12_000)) + "\n"  # 1.2 MB, no hand
    text = junk + _file(real_hands[:3]) + junk
    pieces = _pieces(text, 300_000)
    assert "".join(text[a:b] for a, b, _ in pieces) == text
    assert len(pieces) >= 5 and max(b - a for a, b, _ in pieces) <= 1 << 20
    assert all(text[a - 1] == "\n" for a, _, _ in pieces[1:])  # cut at line starts
    assert [n for _, _, n in pieces] == [text.count("\n", 0, a) for a, _, _ in pieces]
    r = parse_texts([text], ["junk.txt"], max_chars=300_000)
    assert r.tables["hands"].height == 3
    q = r.quarantine
    assert set(q["reason"]) == {"text outside any hand"}
    # every junk line is accounted for, each block at its own first line
    assert q["detail"].str.extract(r"^(\d+) line").cast(int).sum() == 24_000
    first = text.split("\n")
    assert all(first[p - 1].startswith("junk line") for p in q["position"])


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_a_link_planted_between_discovery_and_read_is_refused_and_logged(tmp_path, real_hands, monkeypatch, swap):
    """A landing file swapped for a link out of the folder after discovery (the seam: ``changed_files``, which
    runs between discovery and the read) is not read: logged refused, quarantined with the reason, nothing of its
    target stored. ``folder``: the file's folder is swapped for a link to a folder holding a file of that name."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text(SECRET + "\n" + _file(real_hands[:1]).replace("PokerStars Hand #", "PokerStars Hand #9"),
                                   encoding="utf-8")
    land = tmp_path / "landing"
    (land / "sub").mkdir(parents=True)
    (land / "sub" / "a.txt").write_text(_file(real_hands[:2]), encoding="utf-8")
    (land / "b.txt").write_text(_file(real_hands[2:4]), encoding="utf-8")
    real_changed = ingest.changed_files

    def changed_then_swapped(paths, known):
        out = real_changed(paths, known)
        if swap == "file":
            (land / "sub" / "a.txt").unlink()
            os.symlink(outside / "a.txt", land / "sub" / "a.txt")
        else:
            (land / "sub").rename(tmp_path / "moved")
            os.symlink(outside, land / "sub")
        return out

    monkeypatch.setattr(ingest, "changed_files", changed_then_swapped)
    t = _ingest([land], tmp_path / "wh.duckdb")
    log = dict(zip(t["ingest_log"]["source_file"].to_list(), t["ingest_log"]["status"].to_list()))
    assert log == {str(land / "sub" / "a.txt"): "refused", str(land / "b.txt"): "done"}
    assert t["hands"].height == 2
    q = t["quarantine"].row(0, named=True)
    assert t["quarantine"].height == 1 and q["reason"] == "changed after discovery" and q["raw"] == ""
    assert ("symbolic link" in q["detail"]) if swap == "file" else ("another file" in q["detail"])
    for frame in t.values():
        for col in frame.columns:
            if str(frame[col].dtype) == "String":
                assert not frame[col].str.contains("TOP SECRET", literal=True).any(), col


def test_a_file_is_read_in_bounded_pieces_and_a_huge_line_is_cut_as_it_is_read(tmp_path, real_hands):
    """A hand file larger than the chunk is read piece by piece (the same hands, lines and quarantine as read
    whole), and a line longer than the limit never held whole: replaced as read by one saying so, the rest read."""
    from pipelines.lib.handhistory import pieces as reader

    hands = _file(real_hands)
    huge = "PokerStars Hand #1: " + "A" * 300_000
    text = hands + huge + "\n\n" + hands.replace("PokerStars Hand #", "PokerStars Hand #7")
    f = tmp_path / "big.txt"
    f.write_bytes(text.encode("utf-8"))
    with open(f, "rb") as fh:
        pieces = list(reader.read_pieces(fh, 20_000, block_bytes=4096, max_line=50_000))
    assert max(len(p) for p, _ in pieces) < 2 * 20_000 + 4096
    assert [n for _, n in pieces] == [sum(p.count(b"\n") for p, _ in pieces[:i]) for i in range(len(pieces))]
    joined = b"".join(p for p, _ in pieces).decode("utf-8")
    assert joined == text.replace(huge, "[railbird: a line of 300,020 bytes was not read; it began: "
                                  + huge[:reader.KEPT_CHARS] + "]")
    st = os.stat(f)
    info = ingest.FileInfo(f, "hands", st.st_size, ingest._mtime(st), st.st_mtime - 10 ** 6, dev=st.st_dev, ino=st.st_ino)
    batch = read_chunk([info], 0, st.st_mtime, chunk_bytes=20_000)
    whole = parse_texts([joined], [str(f)])
    assert batch.tables["hands"].sort("hand_id").equals(whole.tables["hands"].sort("hand_id"))
    assert batch.tables["hands"].height == 2 * len(real_hands)
    q = batch.quarantine
    assert q.select("position", "reason").rows() == whole.quarantine.select("position", "reason").rows()
    # (here within one 4 MB block: cut when decoded, as ``cap_lines`` does, in characters)
    assert q.filter(pl.col("raw").str.contains(r"a line of 300,020 (?:bytes|characters) was not read")).height == 1
    assert info.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest() and info.size == len(text.encode("utf-8"))
