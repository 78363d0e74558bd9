"""Building blocks shared by the parser's stages: line kinds and sections as small codes, running values
within contiguous groups of rows, and cards as written."""
from __future__ import annotations

import polars as pl

KIND = {k: i for i, k in enumerate(["marker", "chat", "table", "seat", "summary", "dealt", "uncalled", "x"])}
SECTION_NAMES = ["setup", "summary", "showdown", "preflop", "river", "turn", "flop", "other"]
SECTION = pl.Enum(SECTION_NAMES)
# the columns of the classified hand lines (:func:`sections.classify`)
CLASSED_LINE_SCHEMA = {"hid": pl.Int32, "ln": pl.Int32, "t": pl.String, "sec": SECTION, "run": pl.Int32,
                       "kind": pl.UInt8}


def cards_or_null(cards: pl.Expr) -> pl.Expr:
    """Cards as written between brackets, or null when the brackets hold no card (``[ ]``, ``[?? ??]``: an export
    or a research dump that blanks the cards) or a card blanked among others (``[XX Qs]``: which cards the player
    held is then not known)."""
    return pl.when(cards.str.contains(r"[2-9TJQKA][cdhs]")
                   & ~cards.str.contains(r"(?:^|\s)(?:[^2-9TJQKA\s]|[2-9TJQKA][^cdhs\s])")).then(cards)


# Group-wise running values over frames whose groups are contiguous runs of
# rows (``start`` marks each group's first row). These are plain cumulative
# sums with a per-group offset: O(n), no hashing, much faster than ``over``
# on many small groups.

def starts(key: str) -> pl.Expr:
    return (pl.col(key) != pl.col(key).shift(1)).fill_null(True)


def g_cumsum(x: pl.Expr, start: pl.Expr) -> pl.Expr:
    cs = x.cum_sum()
    return cs - pl.when(start).then(cs - x).forward_fill()


def g_shift(x: pl.Expr, start: pl.Expr, fill) -> pl.Expr:
    return pl.when(start).then(pl.lit(fill)).otherwise(x.shift(1))


def g_index(start: pl.Expr) -> pl.Expr:
    i = pl.int_range(pl.len(), dtype=pl.Int64)
    return i - pl.when(start).then(i).forward_fill()


def g_cummax_nonneg(x: pl.Expr, start: pl.Expr) -> pl.Expr:
    """Running max within contiguous groups of values in [0, 2**40)."""
    gi = start.cast(pl.Int64).cum_sum()
    big = 1 << 40
    # (clipped: a value out of range can then not raise the maximum of a later group; lines.MAX_CENTS keeps the
    # amounts of parsed hands inside it)
    return (x.clip(0, big - 1) + gi * big).cum_max() - gi * big
