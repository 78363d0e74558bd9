"""The summary section: total pot, rake, STP, main and side pots, boards, and the summary seat lines."""
from __future__ import annotations

import polars as pl

from . import lines as G
from .checks import issue, unknown_lines, unparsed
from .frames import cards_or_null
from .names import Names

# A summary seat line that states no amount and no cards: the seat folded, did not bet, or sat out.
SUMMARY_IDLE_RE = (r"^Seat \d+: [^$€£\[\]]+? (?:folded (?:before Flop|on the (?:Flop|Turn|River))(?: \(didn't bet\))?"
                   r"|\(didn't bet\)|sat out|is sitting out)$")


def read_summary(summary_lines: pl.DataFrame, seats: pl.DataFrame, names: Names,
                 issues: list[pl.DataFrame]) -> tuple[pl.DataFrame, ...]:
    """Read the ``summary_lines``; returns totals (total, rake, main, stp, side_sum), pots, boards,
    summary seats (cards shown, pots not awarded), the harmless unread lines and the hands run twice.
    Seat lines that do not match the seat list and unread lines that may carry money are appended to
    ``issues``."""
    t = pl.col("t")
    totals = summary_lines.filter(t.str.starts_with("Total pot")).with_columns(g=t.str.extract_groups(G.TOTAL_RE))
    totals = totals.select(
        "hid",
        total=G.money_cents(pl.col("g").struct.field("1")),
        rake=G.money_cents(t.str.extract(r"Rake (" + G.AMT + ")", 1)).fill_null(0),
        mid=t,
    ).unique("hid", keep="first", maintain_order=True)
    totals = totals.with_columns(
        main=G.money_cents(pl.col("mid").str.extract(r"Main pot (" + G.AMT + ")", 1)),
        stp=G.money_cents(pl.col("mid").str.extract(r"STP (" + G.AMT + ")", 1)).fill_null(0),
        sides=pl.col("mid").str.extract_all(r"Side pot(?:-\d+)? " + G.AMT),
    )
    side_pots = totals.select("hid", "sides").explode("sides").drop_nulls("sides").with_columns(
        pot=pl.col("sides").str.extract(r"Side pot-(\d+)", 1).cast(pl.Int32, strict=False),
        amt=G.money_cents(pl.col("sides").str.extract(r"Side pot(?:-\d+)? (" + G.AMT + ")", 1)),
    )
    side_pots = side_pots.with_columns(pot=pl.coalesce(pl.col("pot"), pl.int_range(1, pl.len() + 1).over("hid").cast(pl.Int32)))
    side_sum = side_pots.group_by("hid").agg(side_sum=pl.col("amt").sum())
    totals = totals.join(side_sum, on="hid", how="left").with_columns(pl.col("side_sum").fill_null(0))
    issues.append(issue(totals.filter(pl.col("total").is_null()), 5, "unparsed line",
                         pl.format("{} (no total or an amount out of range)", pl.col("mid"))))
    pots = pl.concat([
        totals.select("hid", pot=pl.lit(0, pl.Int32), amt=pl.coalesce(pl.col("main"), pl.col("total"))),
        side_pots.select("hid", "pot", "amt"),
    ], how="vertical")

    boards = summary_lines.filter(t.str.contains(G.BOARD_RE)).with_columns(g=t.str.extract_groups(G.BOARD_RE)).select(
        "hid",
        run=pl.when(pl.col("g").struct.field("1") == "SECOND").then(pl.lit(2, pl.Int32)).otherwise(pl.lit(1, pl.Int32)),
        cards=pl.col("g").struct.field("2").str.strip_chars().str.split(" "),
    ).unique(["hid", "run"], keep="first", maintain_order=True)

    # summary seat lines, anchored on the seat's own name
    summary_seats = summary_lines.filter(t.str.starts_with("Seat ")).with_columns(seat=t.str.extract(r"^Seat (\d+): ", 1).cast(pl.Int32, strict=False))
    summary_seats = summary_seats.join(seats.select("hid", "seat", "player"), on=["hid", "seat"], how="left", maintain_order="left")
    prefix = pl.format("Seat {}: {}", pl.col("seat"), pl.col("player"))
    summary_seats = summary_seats.with_columns(ok=t.str.starts_with(prefix).fill_null(False))
    summary_seats = summary_seats.with_columns(rest=pl.when(pl.col("ok")).then(t.str.slice(prefix.str.len_chars())))
    # a summary seat line naming someone else than the seat list, of a seat that is in it, that only says the seat
    # folded or did not bet (no amount, no cards: a research dump whose name hashing slipped) changes nothing the
    # hand's money is read from; it is kept in unknown_lines and the hand stored. Any other such line quarantines it.
    idle = ~pl.col("ok") & pl.col("player").is_not_null() & t.str.contains(SUMMARY_IDLE_RE)
    renamed = summary_seats.filter(idle).select("hid", "ln", kind=pl.lit("other name"), t="t")
    issues.append(unparsed(summary_seats.filter(~pl.col("ok") & ~idle), " (summary seat line does not match the seat list)"))
    issues.append(renamed_seats(summary_seats, idle))
    summary_seats = summary_seats.filter(pl.col("ok")).with_columns(
        cards=cards_or_null(pl.col("rest").str.extract(r"(?:showed|mucked) \[([^\]]*)\]", 1)),
        not_awarded=G.money_cents(pl.col("rest").str.extract(r"won \((" + G.AMT + r")\)[^(]*\(pot not awarded as player cashed out\)", 1)),
    )
    summary_other = summary_lines.filter(
        ~t.str.starts_with("Seat ") & ~t.str.starts_with("Total pot") & ~t.str.contains(G.BOARD_RE)
        & ~t.str.contains(G.NEUTRAL_RE)
    )
    unknown = pl.concat([unknown_lines(summary_other, names, issues), renamed], how="vertical")
    hand_run_twice = summary_lines.filter(t.str.contains("run twice", literal=True)).select("hid").unique().with_columns(rit=pl.lit(True))
    return totals, pots, boards, summary_seats, unknown, hand_run_twice


def renamed_seats(summary_seats: pl.DataFrame, idle: pl.Expr) -> pl.DataFrame:
    """The issue of each hand whose summary names a seat of the seat list otherwise, on a line that moves money or
    shows cards (``idle`` false): who won and who paid cannot be given to a seat. Its detail lists every seat so
    named, the seat list's name beside the summary's line, so the quarantine says which names disagree (a file
    whose seat list alone was edited, as one of HHSmithy's test files, is told apart from a line misread)."""
    other = summary_seats.filter(~pl.col("ok") & pl.col("player").is_not_null())
    bad = other.filter(~idle).select("hid").unique()
    per_hand = other.join(bad, on="hid", how="semi").group_by("hid", maintain_order=True).agg(
        seats=pl.format("seat {} is {} in the seat list, the summary says: {}", pl.col("seat"), pl.col("player"),
                        pl.col("t")).str.join("; "))
    return issue(per_hand, 4, "seat names disagree",
                 pl.format("{} (the money is paid to names no seat holds)", pl.col("seats")))
