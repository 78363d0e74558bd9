"""The other lines of a hand: collections, cash-outs, tournament finishes and bounties, table events and
chat, and the lines no pattern reads."""
from __future__ import annotations

import polars as pl

from . import lines as G
from .checks import unknown_lines, unparsed
from .names import Names, chat_speakers, known


def _field(c: str, i: int) -> pl.Expr:
    """Capture group ``i`` of the struct column ``c``."""
    return pl.col(c).struct.field(str(i))


def read_other_lines(rest_lines: pl.DataFrame, by_kind, sit_outs: pl.DataFrame, names: Names,
                     issues: list[pl.DataFrame]) -> tuple[pl.DataFrame, ...]:
    """Read the lines that are neither seats, dealt, verb, uncalled nor summary lines; returns unknown
    (harmless unread lines), collections, finishes, bounties and events. Unread lines that may carry money
    and collections by unseated names are appended to ``issues``."""
    t = pl.col("t")
    rest_lines = _line_kinds(rest_lines)
    event_lines = _event_lines(rest_lines)
    # a table deposit names money: read only for a seated player, otherwise its hand is quarantined
    ev_deposit = f"ev{next(i for i, (pat, _) in enumerate(G.EVENT_PATTERNS) if pat == G.DEPOSIT_RE)}"
    deposit = rest_lines.filter(pl.col("rkind") == ev_deposit).select("hid", "ln", "t")
    if deposit.height:
        deposit = known(deposit.join(event_lines.select("hid", "ln", player="ev_name"), on=["hid", "ln"]),
                        names, "player", "known").filter(~pl.col("known"))
        issues.append(unparsed(deposit))
        event_lines = event_lines.join(deposit.select("hid", "ln"), on=["hid", "ln"], how="anti")
    rest_lines = rest_lines.with_columns(rkind=pl.when(pl.col("rkind").str.starts_with("ev")).then(pl.lit("event")).otherwise(pl.col("rkind")))
    ext = {"collected": ("coll", G.COLLECTED_RE), "cash_out": ("cash", G.CASHOUT_RE), "finish": ("fin", G.FINISH_RE),
           "win": ("win", G.WINS_TOURNEY_RE), "bounty": ("bty", G.BOUNTY_RE), "split_bounty": ("sbty", G.SPLIT_BOUNTY_RE)}
    sub = {k: rest_lines.filter(pl.col("rkind") == k).with_columns(t.str.extract_groups(pat).alias(col)) for k, (col, pat) in ext.items()}
    unknown = unknown_lines(rest_lines.filter(pl.col("rkind") == "unknown"), names, issues)
    collections = _collections(sub, names, issues)
    finishes, bounties = _tournament_lines(sub)
    for col in ("winner", "eliminated"):  # (a name ending in spaces: the line's own were stripped)
        bounties = known(bounties, names, col, "_k").drop("_k", "_k_seat")
    events = _table_events(by_kind, event_lines, rest_lines, sub, sit_outs, names)
    return unknown, collections, finishes, bounties, events


def _line_kinds(rest_lines: pl.DataFrame) -> pl.DataFrame:
    """``rest_lines`` with ``rkind``: the first of the line patterns that matches (else "unknown")."""
    # the rest: collections, cash-outs, tournament lines, table events.
    # Classified with capture-free tests first; groups are extracted only from
    # the lines of each class.
    kinds = [
        ("collected", G.COLLECTED_RE), ("cash_out", G.CASHOUT_RE), ("finish", G.FINISH_RE),
        ("win", G.WINS_TOURNEY_RE), ("bounty", G.BOUNTY_RE), ("split_bounty", G.SPLIT_BOUNTY_RE),
    ] + [(f"ev{i}", pat) for i, (pat, _) in enumerate(G.EVENT_PATTERNS)] + [
        ("neutral", G.NEUTRAL_RE), ("cancel", G.CANCELLED_RE),
    ]
    # first matching pattern wins; each pattern only runs on the lines that no
    # earlier pattern matched
    rest_t = rest_lines.get_column("t")
    rest_i = pl.Series("i", range(rest_lines.height), dtype=pl.Int64)
    got_i, got_k = [], []
    for name, pat in kinds:
        if not rest_t.len():
            break
        m = rest_t.str.contains(pat)
        got_i.append(rest_i.filter(m))
        got_k.append(pl.repeat(name, int(m.sum()), dtype=pl.String, eager=True))
        rest_t, rest_i = rest_t.filter(~m), rest_i.filter(~m)
    got_i.append(rest_i)
    got_k.append(pl.repeat("unknown", rest_i.len(), dtype=pl.String, eager=True))
    rk = pl.DataFrame({"i": pl.concat(got_i), "rkind": pl.concat(got_k)}).sort("i").get_column("rkind")
    rest_lines = rest_lines.with_columns(rkind=rk)
    return rest_lines


def _event_lines(rest_lines: pl.DataFrame) -> pl.DataFrame:
    """The table-event lines (``G.EVENT_PATTERNS``): hid, ln, ev_name, ev_kind, ev_detail."""
    t = pl.col("t")
    event_lines = []
    for i, (pat, evname) in enumerate(G.EVENT_PATTERNS):
        sub = rest_lines.filter(pl.col("rkind") == f"ev{i}")
        if sub.height:
            g = sub.with_columns(gg=t.str.extract_groups(pat))
            fields = g.schema["gg"].fields
            event_lines.append(g.select(
                "hid", "ln", ev_name=pl.col("gg").struct.field("1"), ev_kind=pl.lit(evname),
                ev_detail=pl.col("gg").struct.field("2") if len(fields) > 1 else pl.lit(None, pl.String),
            ))
    event_lines = pl.concat(event_lines, how="vertical") if event_lines else pl.DataFrame(
        schema={"hid": pl.Int32, "ln": pl.Int32, "ev_name": pl.String, "ev_kind": pl.String, "ev_detail": pl.String})
    return event_lines


def _collections(sub: dict[str, pl.DataFrame], names: Names, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """Pot collections and cash-outs (amt in cents, pot number, kind) by seated players; the others are
    appended to ``issues``."""
    pot_collects = sub["collected"].select(
        "hid", "ln", "run", "t", player=_field("coll", 1), amt=G.money_cents(_field("coll", 2)),
        pot=pl.when(_field("coll", 3).is_not_null()).then(pl.lit(0, pl.Int32))
        .when(_field("coll", 4).is_not_null()).then(_field("coll", 4).cast(pl.Int32, strict=False))
        .when(pl.col("t").str.contains(" from side pot", literal=True)).then(pl.lit(1, pl.Int32))
        .otherwise(pl.lit(0, pl.Int32)),
        kind=pl.lit("pot"),
    )
    cash_outs = sub["cash_out"].select(
        "hid", "ln", "run", "t", player=_field("cash", 1), amt=G.money_cents(_field("cash", 2)),
        fee=G.money_cents(_field("cash", 3)), pot=pl.lit(0, pl.Int32), kind=pl.lit("cash_out"),
    )
    collections = pl.concat([pot_collects, cash_outs.drop("fee")], how="vertical")
    collections = known(collections, names, "player", "known")
    cc_bad = collections.filter(~pl.col("known"))
    if cc_bad.height:
        issues.append(unparsed(cc_bad))
    collections = collections.filter(pl.col("known"))
    return collections


def _tournament_lines(sub: dict[str, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Tournament finishes (player, place, prize) and bounties (winner, amount, eliminated, increase,
    new_bounty; a split bounty as one row per winner)."""
    finishes = pl.concat([
        sub["finish"].select(
            "hid", player=_field("fin", 1), place=_field("fin", 2).cast(pl.Int32, strict=False), prize=G.money_cents(_field("fin", 3))),
        sub["win"].select(
            "hid", player=_field("win", 1), place=pl.lit(1, pl.Int32), prize=G.money_cents(_field("win", 2))),
    ], how="vertical")
    bounties = sub["bounty"].select(
        "hid", winner=_field("bty", 1), amount=G.money_cents(_field("bty", 2)), eliminated=_field("bty", 3),
        increase=G.money_cents(_field("bty", 4)), new_bounty=G.money_cents(_field("bty", 5)),
    )
    # "A, B split the $50 bounty for eliminating C": one row per winner with an
    # equal share (cents; the remainder goes to the first named winner).
    split_bounties = sub["split_bounty"].select(
        "hid", winner=_field("sbty", 1).str.split(", "), total=G.money_cents(_field("sbty", 2)), eliminated=_field("sbty", 3),
    ).with_columns(nw=pl.col("winner").list.len()).explode("winner").with_columns(
        i=pl.int_range(pl.len()).over("hid", "eliminated")
    ).select(
        "hid", "winner",
        amount=(pl.col("total") // pl.col("nw")) + pl.when(pl.col("i") == 0).then(pl.col("total") % pl.col("nw")).otherwise(0),
        eliminated="eliminated", increase=pl.lit(None, pl.Int64), new_bounty=pl.lit(None, pl.Int64),
    )
    bounties = pl.concat([bounties, split_bounties], how="vertical")
    return finishes, bounties


def _table_events(by_kind, event_lines: pl.DataFrame, rest_lines: pl.DataFrame, sub: dict[str, pl.DataFrame],
                  sit_outs: pl.DataFrame, names: Names) -> pl.DataFrame:
    """The table events: chat, the event lines, neutral lines, cash-outs and sitting out (hid, ln, player,
    event, detail)."""
    t = pl.col("t")
    # table events
    # chat: the speaker is the shortest prefix before ' said, "' unless only the
    # longest one is a seated name (a name that itself contains ' said, "')
    chat = chat_speakers(by_kind("chat"), names).select("hid", "ln", "player", event=pl.lit("chat"), detail="detail")
    events = pl.concat([
        chat,
        event_lines.select("hid", "ln", player=pl.col("ev_name"), event=pl.col("ev_kind"), detail=pl.col("ev_detail")),
        rest_lines.filter(pl.col("rkind") == "neutral").select("hid", "ln", player=pl.lit(None, pl.String), event=pl.lit("other"), detail=pl.col("t")),
        sub["cash_out"].select("hid", "ln", player=_field("cash", 1), event=pl.lit("cashed_out"), detail=_field("cash", 2)),
        sit_outs.select("hid", "ln", "player", event=pl.lit("sitting_out"), detail=pl.lit(None, pl.String)),
    ], how="vertical")
    return events
