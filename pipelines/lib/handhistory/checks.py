"""The parser's checks: issue rows (a hand with any issue is quarantined), the lines no pattern read, the
hand-level checks, the balance of the money, and the choice of each rejected hand's reason."""
from __future__ import annotations

import polars as pl

from . import lines as G
from .names import Names, known
from .tables import as_quarantine

def issue(df: pl.DataFrame, prio: int, reason: str, detail: pl.Expr) -> pl.DataFrame:
    # (rechunked: Polars 2.1's ``pl.format`` panics on columns whose chunks are
    # laid out differently, e.g. the seats of a normal hand followed by a hand
    # with a name seated twice; the frames here are the few problem rows)
    return df.rechunk().select(
        "hid", pl.lit(prio).alias("prio"), pl.lit(reason).alias("reason"), detail.cast(pl.String).alias("detail")
    )


def unparsed(df: pl.DataFrame, why: str = "") -> pl.DataFrame:
    return issue(
        df, 5, "unparsed line",
        pl.format("line {}: {}{}", pl.col("ln") + 1, pl.col("t"), pl.lit(why)),
    )


# What makes a line worth a hand's quarantine: a currency sign, a number standing on its own (not the end of a name
# such as "Player6"), or a word of betting, dealing or paying. A line with none of them carries no money and no action.
MONEY_OR_ACTION_RE = (
    r"(?i)[$€£₹¥]|(?:^|[^\w])\d|\b(?:bets?|calls?|raises?|folds?|checks?|posts?|collect(?:s|ed)?|won|wins?|"
    r"returned|pots?|chips|all-in|cash(?:ed|es)?|antes?|blinds?|shows?|showed|mucks?|mucked|dealt|uncalled|rake|"
    r"bounty|board|flop|turn|river|seat|hand|stacks?)\b|\*\*"
)


# A layout railbird does not read, named in the detail of the hands it makes unbalanced: Holdem Manager 1 exports
# write the total pot net of rake (what was collected) and drop the uncalled-bet line.
LAYOUT_NET_OF_RAKE = (
    pl.when((pl.col("coll_pot") == pl.col("total")) & (pl.col("rake") > 0)
            & (pl.col("sum_put") + pl.col("stp") >= pl.col("total") + pl.col("rake")))
    .then(pl.lit(" (the layout of a Holdem Manager 1 export: total pot written net of rake, no uncalled-bet line;"
                 " not read)"))
    .otherwise(pl.lit(""))
)


# The two readings of a hand's antes, named in the detail of the hands whose money put in is not the total pot: the
# antes counted in the pot (PokerStars' layout, on cash ante tables as in tournaments), or left out of it (a layout
# railbird does not read). A hand neither reading balances is said to be so.
ANTE_READINGS = (
    pl.when(pl.col("ante_sum").fill_null(0) == 0).then(pl.lit(""))
    .when(pl.col("sum_put") - pl.col("ante_sum") + pl.col("stp") == pl.col("total"))
    .then(pl.format(" (the total pot leaves out the {} of antes posted: a layout railbird does not read)",
                    G.cents_to_decimal(pl.col("ante_sum")).cast(pl.String)))
    .when(pl.col("sum_put") + pl.col("stp") != pl.col("total"))
    .then(pl.format(" (antes {} posted: with them {} put in, without them {}; neither is the total pot {}, so no"
                    " reading of the antes balances the hand)",
                    *(G.cents_to_decimal(e).cast(pl.String) for e in (
                        pl.col("ante_sum"), pl.col("sum_put") + pl.col("stp"),
                        pl.col("sum_put") - pl.col("ante_sum") + pl.col("stp"), pl.col("total")))))
    .otherwise(pl.lit(""))
)


def unknown_lines(df: pl.DataFrame, names: Names, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """Split lines no pattern read (columns hid, ln, t) into harmless ones, returned as unknown-line rows
    (hid, ln, kind, t), and the others, appended to ``issues`` as unparsed lines (the hand is quarantined).

    Harmless: a seated player's name and a colon with nothing after (kind ``blanked show``: an export that blanks
    the cards shown), or a line matching nothing of :data:`MONEY_OR_ACTION_RE` (kind ``unknown``: a client
    message). Such a line changes no amount, so the hand is stored when its money balances (the balance and
    structure checks still apply); the line is kept in ``unknown_lines``, never dropped."""
    df = df.select("hid", "ln", "t")
    blanked = known(df.with_columns(player=pl.col("t").str.strip_suffix(":")), names, "player", "blank")
    blanked = blanked.get_column("blank") & df.get_column("t").str.ends_with(":")
    harmless = ~df.get_column("t").str.contains(MONEY_OR_ACTION_RE)
    out = df.with_columns(kind=pl.when(blanked).then(pl.lit("blanked show"))
                          .when(harmless).then(pl.lit("unknown")).otherwise(None))
    issues.append(unparsed(out.filter(pl.col("kind").is_null())))
    return out.filter(pl.col("kind").is_not_null()).select("hid", "ln", "kind", "t")


# the detail of a hand cancelled before any card was dealt: a header, not a hand (README: the share per corpus)
CANCELLED_BEFORE_DEAL = "cancelled before the deal: no card dealt, no hand played"


def hand_issues(hands: pl.DataFrame, issues: list[pl.DataFrame]) -> None:
    """Append the hand-level issues of ``hands`` (unsupported game, cancelled, malformed header, truncated)
    to ``issues``."""
    issues.append(issue(hands.filter(pl.col("unsupported")), 0, "unsupported game", pl.col("pre")))
    issues.append(issue(hands.filter(pl.col("cancelled")), 1, "hand cancelled",
                        pl.when(pl.col("dealt")).then(pl.lit("cancelled after the deal: the hand text says so"))
                        .otherwise(pl.lit(CANCELLED_BEFORE_DEAL))))
    issues.append(issue(hands.filter(pl.col("header_error").is_not_null()), 2, "malformed header", pl.col("header_error")))
    trunc = hands.filter(~pl.col("has_summary") | ~pl.col("has_total") | (pl.col("n_seat_lines") == 0))
    issues.append(issue(trunc, 3, "truncated hand", pl.when(~pl.col("has_summary")).then(pl.lit("no *** SUMMARY *** section"))
                         .when(~pl.col("has_total")).then(pl.lit("no 'Total pot' line")).otherwise(pl.lit("no seat lines"))))


def hand_values(hands: pl.DataFrame, seats: pl.DataFrame, dealt: pl.DataFrame, actions: pl.DataFrame,
                collections: pl.DataFrame, summary_seats: pl.DataFrame, totals: pl.DataFrame,
                hand_run_twice: pl.DataFrame, boards: pl.DataFrame) -> pl.DataFrame:
    """``hands`` with the values read from their lines: hero, players dealt in, all cards known, totals and
    pots, posted antes and small blinds, the sums the balance check compares, run it twice."""
    a = pl.col("action")
    dealt_players = dealt.select("hid", "player").unique()
    dstat = dealt_players.group_by("hid").agg(n_dealt=pl.len(), hero1=pl.col("player").first())
    nstat = seats.group_by("hid").agg(n_players=pl.col("dealt_in").sum().cast(pl.Int32),
                                  min_stack_end=pl.col("stack_end").min(), min_put=pl.col("put_in").min(),
                                  sum_put=pl.col("put_in").sum())
    dealt_in_with_cards = seats.filter(pl.col("dealt_in")).join(
        dealt.filter(pl.col("cards").is_not_null()).select("hid", seat=pl.col("known_seat")), on=["hid", "seat"], how="semi").group_by("hid").agg(n_known=pl.len())
    hands = (
        hands.join(dstat, on="hid", how="left").join(nstat, on="hid", how="left")
        .join(dealt_in_with_cards, on="hid", how="left").join(totals, on="hid", how="left")
        .join(hand_run_twice, on="hid", how="left")
        .join(actions.filter(a == "post_ante").group_by("hid").agg(ante_posted=pl.col("amount").max(),
                                                                   ante_sum=pl.col("amount").sum()), on="hid", how="left")
        .join(actions.filter((a == "post_sb") & ~pl.col("is_all_in")).group_by("hid").agg(sb_posted=pl.col("amount").max()),
              on="hid", how="left")
        .join(collections.filter(pl.col("kind") == "pot").group_by("hid").agg(coll_pot=pl.col("amt").sum()), on="hid", how="left")
        .join(summary_seats.group_by("hid").agg(not_awarded=pl.col("not_awarded").sum()), on="hid", how="left")
        .with_columns(
            pl.col("n_players").fill_null(0), pl.col("n_dealt").fill_null(0), pl.col("n_known").fill_null(0),
            pl.col("coll_pot").fill_null(0), pl.col("not_awarded").fill_null(0), pl.col("sum_put").fill_null(0),
        )
        .with_columns(
            hero=pl.when(pl.col("n_dealt") == 1).then(pl.col("hero1")),
            all_cards_known=(pl.col("n_players") > 0) & (pl.col("n_known") == pl.col("n_players")),
            run_it_twice=pl.col("rit").fill_null(False),
            ante=pl.coalesce(pl.col("ante_posted"), pl.col("ante_header")),
            small_blind=pl.when(pl.col("limit_type") == "fixed_limit")
            .then(pl.coalesce(pl.col("sb_posted"), pl.col("small_blind_hdr") // 2))
            .otherwise(pl.col("small_blind")),
        )
    )
    rit2 = boards.filter(pl.col("run") == 2).select("hid").unique().with_columns(rit2=pl.lit(True))
    hands = hands.join(rit2, on="hid", how="left").with_columns(run_it_twice=pl.col("run_it_twice") | pl.col("rit2").fill_null(False))
    return hands


def balance_issues(hands: pl.DataFrame, collections: pl.DataFrame, pots: pl.DataFrame, totals: pl.DataFrame,
                   issues: list[pl.DataFrame]) -> None:
    """Append the unbalanced hands (the balance rule of :mod:`.parse`; a pot paid out beyond what the summary
    states it held) to ``issues``."""
    bal_checked = hands.filter(pl.col("total").is_not_null())
    unbalanced = bal_checked.filter(
        (pl.col("sum_put") + pl.col("stp") != pl.col("total"))
        | (pl.col("coll_pot") + pl.col("rake") + pl.col("not_awarded") != pl.col("total"))
        | (pl.col("main").is_not_null()
           & (pl.col("main") + pl.col("side_sum") + pl.col("stp") != pl.col("total"))
           & (pl.col("main") + pl.col("side_sum") + pl.col("rake") != pl.col("total")))
        | (pl.col("min_stack_end") < 0) | (pl.col("min_put") < 0)
    )
    # per pot, when the summary states the pots and the collect lines name them:
    # no pot pays out more than the summary says it held
    per_pot = (
        collections.filter(pl.col("kind") == "pot").group_by("hid", "pot").agg(got=pl.col("amt").sum())
        .join(pots.join(totals.filter(pl.col("main").is_not_null()).select("hid"), on="hid", how="semi"),
              on=["hid", "pot"], how="inner")
        .filter(pl.col("got") > pl.col("amt"))
    )
    over_paid = hands.join(per_pot.select("hid").unique(), on="hid", how="semi")
    issues.append(issue(over_paid, 6, "unbalanced", pl.lit("a pot paid out more than the summary states it held")))
    fmt = lambda c: G.cents_to_decimal(pl.col(c)).cast(pl.String).fill_null("-")  # noqa: E731  (display only)
    issues.append(issue(unbalanced, 6, "unbalanced", pl.format(
        "put_in {} + STP {} vs total pot {}; collected {} + rake {} + not awarded {}; main {} + sides {}; min stack_end {}; min put_in {}{}{}",
        fmt("sum_put"), fmt("stp"), fmt("total"), fmt("coll_pot"), fmt("rake"), fmt("not_awarded"),
        fmt("main"), fmt("side_sum"), fmt("min_stack_end"), fmt("min_put"), LAYOUT_NET_OF_RAKE, ANTE_READINGS)))


def quarantine_rows(issues: list[pl.DataFrame], hands: pl.DataFrame,
                    lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The quarantine rows of the hands with an issue (one per hand, with its raw text from ``lines``), and
    those hands' ``hid``."""
    worst_issue = pl.concat([i for i in issues if i.height], how="vertical") if any(i.height for i in issues) else pl.DataFrame(schema={"hid": pl.Int32, "prio": pl.Int32, "reason": pl.String, "detail": pl.String})
    # a hand with several issues reports the most basic (lowest prio), and among equals the first found (stable)
    worst_issue = worst_issue.with_columns(pl.col("prio").cast(pl.Int32)).sort(["hid", "prio"], maintain_order=True).unique("hid", keep="first", maintain_order=True)
    bad_hids = worst_issue.select("hid")
    raw = lines.filter(pl.col("inh") & pl.col("hid").is_in(bad_hids.get_column("hid").implode())).group_by("hid", maintain_order=True).agg(
        raw=pl.col("raw").str.join("\n"))
    quarantined = (
        worst_issue.join(hands.select("hid", "source_file", "source_line", "hand_id"), on="hid", how="left")
        .join(raw, on="hid", how="left")
        .select(
            "source_file", position=pl.col("source_line"), input_kind=pl.lit("hand"), hand_id="hand_id",
            reason="reason", detail="detail", raw=pl.col("raw").str.strip_chars_end(),
        )
    )
    quarantined = as_quarantine(quarantined)
    return quarantined, bad_hids
