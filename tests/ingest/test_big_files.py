"""Large hand files are read in bounded pieces (issue 31, item 6): UTF-16 files as UTF-8 ones, and text holding
no hand a small piece at a time; what is read in pieces is what is read whole. Real hands of the corpus, written to
a temporary folder in each encoding."""
from __future__ import annotations

import codecs
import hashlib
import os
import re

import polars as pl
import pytest

from pipelines.lib import ingest
from pipelines.lib.handhistory import decode_bytes, parse_files, parse_texts
from pipelines.lib.handhistory import pieces
from tests.ingest.conftest import read_chunk

SAMPLE = "ChazDazzle__fpdb-chaz/pyfpdb/regression-test-files/cash/Stars/Flop/NLHE-6max-USD-0.05-0.10-200911.txt"


@pytest.fixture(scope="module")
def hand_text(corpus_dir):
    text = (corpus_dir / SAMPLE).read_text(encoding="utf-8")
    parts = [p.strip("\n") for p in re.split(r"\n\s*\n(?=PokerStars )", text) if p.strip()]
    assert len(parts) > 10
    # a player named in Greek and with an emoji: characters of two and four UTF-8 bytes, two and four UTF-16 bytes
    return ("junk before the first hand\r\n\r\n" + "\r\n\r\n\r\n".join(parts[:16]).replace("Gles65", "Πλ🂡Gles65")
            + "\r\n\r\n")


def _info(path):
    st = os.stat(path)
    return ingest.FileInfo(path, "hands", st.st_size, ingest._mtime(st), st.st_mtime - 10 ** 6, dev=st.st_dev,
                           ino=st.st_ino)


@pytest.mark.parametrize("encode", [
    lambda s: codecs.BOM_UTF16_LE + s.encode("utf-16-le"),
    lambda s: codecs.BOM_UTF16_BE + s.encode("utf-16-be"),
    lambda s: s.encode("utf-16-le"),  # no byte-order mark: told by its zero bytes
], ids=["utf16le-bom", "utf16be-bom", "utf16le"])
def test_a_utf16_file_is_read_in_bounded_pieces_as_read_whole(tmp_path, hand_text, encode):
    data = encode(hand_text)
    f = tmp_path / "wide.txt"
    f.write_bytes(data)
    with open(f, "rb") as fh:
        sha = hashlib.sha256()
        got = list(pieces.text_pieces(fh, 4_000, sha))
        assert fh.tell() == len(data) and sha.hexdigest() == hashlib.sha256(data).hexdigest()
    assert len(got) > 3 and [last for _, _, last in got] == [False] * (len(got) - 1) + [True]
    assert max(len(t.encode("utf-8")) for t, _, _ in got) < 2 * 4_000  # (a piece, never the file)
    whole = "".join(t for t, _, _ in got)
    assert whole == hand_text.replace("\r\n", "\n")
    assert [b for _, b, _ in got] == [whole.count("\n", 0, whole.index(t)) for t, _, _ in got]



def test_ingest_reads_a_large_utf16_file_as_it_reads_it_whole(tmp_path, hand_text):
    data = codecs.BOM_UTF16_LE + hand_text.encode("utf-16-le")
    f = tmp_path / "wide.txt"
    f.write_bytes(data)
    info = _info(f)
    batch = read_chunk([info], 0, os.stat(f).st_mtime, chunk_bytes=8_000)
    ref = parse_texts([hand_text.replace("\r\n", "\n")], [str(f)])
    assert batch.tables["hands"].height == ref.tables["hands"].height == 16
    for name in ("hands", "seats", "actions"):
        assert batch.tables[name].sort("hand_id").equals(ref.tables[name].sort("hand_id")), name
    assert batch.quarantine.select("position", "reason").rows() == ref.quarantine.select("position", "reason").rows()
    assert info.sha256 == hashlib.sha256(data).hexdigest() and info.size == len(data)
    assert "Πλ🂡Gles65" in batch.tables["seats"]["player"].to_list()


def test_parse_files_reads_a_large_utf16_file_in_pieces(tmp_path, hand_text, monkeypatch):
    import pipelines.lib.handhistory as hh

    f = tmp_path / "wide.txt"
    f.write_bytes(codecs.BOM_UTF16_LE + hand_text.encode("utf-16-le"))
    whole = parse_files([f], workers=1)
    seen = []
    real = hh.parse_texts
    monkeypatch.setattr(hh, "_BATCH_BYTES", 4_000)
    monkeypatch.setattr(hh, "parse_texts", lambda texts, *a, **k: seen.append(max(map(len, texts))) or real(texts, *a, **k))
    cut = hh.parse_files([f], workers=1)
    assert len(seen) > 3 and max(seen) < 2 * 4_000
    assert cut.tables["hands"].select("hand_id", "source_line").equals(whole.tables["hands"].select("hand_id", "source_line"))
    assert cut.tables["actions"].equals(whole.tables["actions"])


def test_text_with_no_hand_is_read_a_small_piece_at_a_time_and_every_line_is_kept(tmp_path):
    lines = [f"line {i} " + "x" * (i % 300) for i in range(6_000)]
    f = tmp_path / "lines.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open(f, "rb") as fh:
        got = list(pieces.read_pieces(fh, 200_000, block_bytes=4096, headerless_bytes=20_000))
    assert len(got) > 20 and max(len(p) for p, _ in got) < 2 * 20_000  # (not the piece of 200,000)
    assert b"".join(p for p, _ in got) == f.read_bytes()
    # read through ingest, every line is in the quarantine, as text outside any hand, at its true position
    batch = read_chunk([_info(f)], 0, os.stat(f).st_mtime, chunk_bytes=200_000)
    q = batch.quarantine
    assert q.height > 3 and q["reason"].unique().to_list() == ["text outside any hand"]
    counts = q["detail"].str.extract(r"^(\d+) line").cast(pl.Int64)
    assert counts.sum() == len(lines)
    assert q["position"].to_list() == [1 + int(c) for c in counts.cum_sum().shift(1, fill_value=0).to_list()]
    assert q["raw"].str.split("\n").list.first().to_list() == [lines[p - 1] for p in q["position"].to_list()]


@pytest.mark.parametrize("end", ["\r", "\r\n"], ids=["cr", "crlf"])
def test_line_ends_of_old_clients_are_line_breaks_in_pieces(tmp_path, hand_text, end):
    """A file whose lines end in a lone carriage return (old Mac clients) or in CR LF, read in pieces, is the file
    read whole: once every line of such a file was one line, and the file one piece (or one line too long)."""
    data = hand_text.replace("\r\n", "\n").replace("\n", end).encode("utf-8")
    f = tmp_path / "old.txt"
    f.write_bytes(data)
    with open(f, "rb") as fh:
        got = list(pieces.text_pieces(fh, 4_000))
    assert len(got) > 3 and "".join(t for t, _, _ in got) == decode_bytes(data)
    with open(f, "rb") as fh:  # (blocks of 7 bytes: a CR LF split between two blocks is one line break)
        small = list(pieces.read_pieces(fh, 4_000, block_bytes=7))
    assert b"".join(p for p, _ in small) == decode_bytes(data).encode("utf-8")


def _load(files, tmp_path, name, chunk_bytes):
    """The warehouse ``files`` load into when read in chunks of ``chunk_bytes`` (``chunk_parts``), and the Batches."""
    from pipelines.lib import warehouse as wh

    con = wh.connect(tmp_path / f"{name}.duckdb")
    spill = wh.stage_folder(con)
    parts = list(ingest.chunk_parts(files, 0, os.stat(files[0].path).st_mtime, chunk_bytes, str(spill)))
    wh.load_many(con, parts, run_id=name)
    return con, parts


@pytest.mark.slow
def test_a_file_larger_than_a_chunk_is_loaded_a_piece_at_a_time_as_it_loads_whole(tmp_path, hand_text):
    """Each piece of a large file is one Batch of its own, handed to the loader before the next piece is read,
    and the warehouse is the one the file read whole gives: every table, and the file's log row counting every
    piece's hands (once it counted only the last piece's)."""
    f = tmp_path / "wide.txt"
    f.write_bytes(codecs.BOM_UTF16_LE + hand_text.encode("utf-16-le"))
    whole, one = _load([_info(f)], tmp_path, "whole", 10_000_000)
    assert len(one) == 1
    cut, parts = _load([_info(f)], tmp_path, "cut", len(hand_text) // 3)
    hands = [0 if p.tables.get("hands") is None else p.tables["hands"].height for p in parts]
    assert len(parts) >= 3 and sum(hands) == 16 and max(hands) < 10, hands
    for t in ("hands", "seats", "actions", "collections", "quarantine", "ingest_log"):
        cols = [c for c, in whole.execute(f"SELECT column_name FROM duckdb_columns() WHERE table_name = '{t}'")
                .fetchall() if c not in ("run_id", "started_at", "finished_at", "quarantined_at")]
        sql = f"SELECT {', '.join(cols)} FROM {t} ORDER BY ALL"
        assert cut.execute(sql).fetchall() == whole.execute(sql).fetchall(), t
    assert cut.execute("SELECT stored, duplicates, quarantined FROM ingest_log").fetchall() == [(16, 0, 1)]


def test_a_conflict_is_cut_from_the_piece_that_holds_it(tmp_path, hand_text):
    """The raw text of a conflict (or of a hand to re-parse) is cut from its file read in pieces: the same text as
    from the file read whole, in UTF-16 too, each hand asked for found in one pass over the file."""
    from pipelines.lib.warehouse_hands import _RawText

    f = tmp_path / "wide.txt"
    f.write_bytes(codecs.BOM_UTF16_LE + hand_text.encode("utf-16-le"))
    ref = parse_texts([hand_text.replace("\r\n", "\n")], [str(f)]).tables["hands"]
    lines = hand_text.replace("\r\n", "\n").split("\n")
    wanted = [(str(f), n) for n in ref["source_line"].to_list()[::-1]] + [(str(f), 10 ** 6), ("/no/such.txt", 1)]
    got = _RawText(piece_bytes=4_000).hands(wanted)
    assert got[-2:] == ["", ""]
    for (_, n), text in zip(wanted, got[:-2]):
        assert text.startswith("PokerStars ") and text == "\n".join(lines[n - 1:n - 1 + text.count("\n") + 1])
        assert not lines[n - 1 + text.count("\n") + 1].startswith("PokerStars")
    assert got[:-2] == _RawText().hands(wanted[:-2])  # (the file whole, as one piece)


@pytest.mark.slow
def test_parse_workers_park_the_pieces_of_a_large_file_and_leave_no_folder(tmp_path, hand_text, monkeypatch):
    """In the process pool, a worker parks every Batch of a chunk but the last in a folder of the run (a
    temporary one when the caller gives none to spill into), removed at the end; the Batches come in the order
    the file is read and hold what the one process reads."""
    import tempfile as _tempfile

    folders = []
    real_mkdtemp = _tempfile.mkdtemp
    monkeypatch.setattr(ingest.tempfile, "mkdtemp", lambda **k: folders.append(real_mkdtemp(**k)) or folders[-1])
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    big.write_bytes(codecs.BOM_UTF16_LE + hand_text.encode("utf-16-le"))
    small.write_text(hand_text.replace("Game #", "Game #7"), encoding="utf-8")
    files = [_info(big), _info(small)]
    chunk = len(hand_text) // 3
    one = list(ingest.iter_batches(files, growing_seconds=0, now=os.stat(big).st_mtime, workers=1, chunk_bytes=chunk))
    two = list(ingest.iter_batches(files, growing_seconds=0, now=os.stat(big).st_mtime, workers=2, chunk_bytes=chunk))
    assert len(two) == len(one) >= 4 and len(folders) == 1 and not os.path.exists(folders[0])
    for a, b in zip(one, two):
        assert set(a.tables) == set(b.tables)
        for name, df in a.tables.items():
            assert b.tables[name].equals(df), name
        assert (a.files is None) == (b.files is None)
