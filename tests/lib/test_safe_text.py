"""safe_text: CSV cells a spreadsheet cannot run, terminal text that cannot drive the terminal."""

from __future__ import annotations

import csv
import io
import unicodedata
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.lib.safe_text import CSV_FORMULA_STARTS, csv_cell, csv_row, terminal_safe


@pytest.mark.parametrize("cell", [
    "=HYPERLINK(\"http://evil\",\"x\")", "=1+1", "+1", "-2+3", "@SUM(A1)", "\tcmd", "\r=1",
    "=cmd|' /C calc'!A0",
])
def test_formula_cells_are_quoted(cell):
    out = csv_cell(cell)
    assert out == "'" + cell
    assert not out.startswith(CSV_FORMULA_STARTS)


@pytest.mark.parametrize("cell", ["alice", "a=b", "O'Brien", "", " =1", "\u00e9=", "100"])
def test_plain_cells_unchanged(cell):
    assert csv_cell(cell) == cell


@pytest.mark.parametrize("value", [-3, -0.5, Decimal("-1.25"), None, True, 0])
def test_non_text_cells_unchanged(value):
    assert csv_cell(value) is value


def test_csv_row_through_writer_reads_back_as_text():
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(csv_row(["=1+1", 'say "hi", ok', -4, "@x"]))
    back = next(csv.reader(io.StringIO(buf.getvalue())))
    assert back == ["'=1+1", 'say "hi", ok', "-4", "'@x"]


@given(st.text())
def test_csv_cell_never_starts_a_formula_and_keeps_the_text(s):
    out = csv_cell(s)
    assert not out.startswith(CSV_FORMULA_STARTS)
    assert out in (s, "'" + s)


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred\x1b[0m", "red"),
    ("\x1b]0;pwned title\x07name", "name"),
    ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("a\x1b[2J\x1b[Hb", "ab"),
    ("\x9b31mc1", "c1"),
    ("x\x1bPdcs payload\x1b\\y", "xy"),
    ("bell\x07", "bell?"),
    ("back\x08\x08\x08", "back???"),
    ("cr\rover", "cr?over"),
    ("del\x7f", "del?"),
    ("c1\x85", "c1?"),
    ("rtl\u202eevil", "rtl?evil"),
    ("iso\u2066x\u2069", "iso?x?"),
    ("line\u2028sep", "line?sep"),
    ("tab\there\nnl", "tab?here?nl"),
    ("plain 🃏 Zoë", "plain 🃏 Zoë"),
    (None, ""),
    (12.5, "12.5"),
    ("unterminated \x1b]0;title", "unterminated "),
])
def test_terminal_safe(raw, shown):
    assert terminal_safe(raw) == shown


def test_terminal_safe_keeps_what_it_is_told():
    assert terminal_safe("a\tb\nc\x1b[1md\re", keep="\t\n") == "a\tb\ncd?e"


def test_terminal_safe_width():
    assert terminal_safe("abcdef", width=4) == "abc…"
    assert terminal_safe("abc", width=4) == "abc"
    assert terminal_safe("a\x1b[31mb", width=2) == "ab"


@given(st.text(alphabet=st.characters(codec="utf-8")), st.sampled_from(["", "\n", "\t\n"]))
def test_terminal_safe_leaves_no_control(s, keep):
    out = terminal_safe(s, keep=keep)
    assert "\x1b" not in out
    for ch in out:
        if ch in keep:
            continue
        assert unicodedata.category(ch) != "Cc", repr(out)
        assert ch not in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
