"""The parser's output: the warehouse hand tables (names, columns, types), the batch they come in
(:class:`ParsedHands`) and the last stage, :func:`build_tables`, which keeps the hands no check
rejected and casts every table to its schema."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import polars as pl

from . import lines as G

TABLE_COLUMNS: dict[str, list[str]] = {
    "hands": [
        "hand_id", "site", "is_zoom", "game", "hi_lo", "limit_type", "currency", "is_tournament",
        "tournament_id", "tournament_level", "small_blind", "big_blind", "ante", "started_at",
        "started_at_local", "day", "table_name", "max_seats", "button_seat", "n_players",
        "total_pot", "rake", "run_it_twice", "all_cards_known", "hero", "source_file",
        "source_line", "content_hash",
    ],
    "seats": [
        "hand_id", "seat", "player", "stack_start", "bounty", "sitting_out", "dealt_in", "position",
        "put_in", "returned", "collected", "net", "stack_end", "is_hero",
    ],
    "actions": [
        "hand_id", "seq", "street", "player", "action", "amount", "raise_to", "is_all_in",
        "pot_before", "to_call", "n_active",
    ],
    "hole_cards": ["hand_id", "player", "cards", "source"],
    "boards": ["hand_id", "run", "cards"],
    "pots": ["hand_id", "pot", "amount"],
    "collections": ["hand_id", "run", "pot", "player", "amount", "kind"],
    "table_events": ["hand_id", "line", "player", "event", "detail"],
    "tournaments": [
        "tournament_id", "buy_in", "bounty", "fee", "currency", "bounty_kind", "game", "limit_type",
        "first_hand_at", "last_hand_at",
    ],
    "tournament_finishes": ["tournament_id", "player", "place", "prize", "hand_id"],
    "bounties": ["hand_id", "tournament_id", "winner", "eliminated", "amount", "increase", "new_bounty"],
    "unknown_lines": ["hand_id", "line", "kind", "text"],
}

_DEC = pl.Decimal(18, 2)
_TS = pl.Datetime("us")
TABLE_SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "hands": {
        "hand_id": pl.String, "site": pl.String, "is_zoom": pl.Boolean, "game": pl.String,
        "hi_lo": pl.Boolean, "limit_type": pl.String, "currency": pl.String,
        "is_tournament": pl.Boolean, "tournament_id": pl.String, "tournament_level": pl.String,
        "small_blind": _DEC, "big_blind": _DEC, "ante": _DEC, "started_at": _TS,
        "started_at_local": pl.String, "day": pl.Date, "table_name": pl.String,
        "max_seats": pl.Int32, "button_seat": pl.Int32, "n_players": pl.Int32,
        "total_pot": _DEC, "rake": _DEC, "run_it_twice": pl.Boolean, "all_cards_known": pl.Boolean,
        "hero": pl.String, "source_file": pl.String, "source_line": pl.Int32,
        "content_hash": pl.String,
    },
    "seats": {
        "hand_id": pl.String, "seat": pl.Int32, "player": pl.String, "stack_start": _DEC,
        "bounty": _DEC, "sitting_out": pl.Boolean, "dealt_in": pl.Boolean, "position": pl.String,
        "put_in": _DEC, "returned": _DEC, "collected": _DEC, "net": _DEC, "stack_end": _DEC,
        "is_hero": pl.Boolean,
    },
    "actions": {
        "hand_id": pl.String, "seq": pl.Int32, "street": pl.String, "player": pl.String,
        "action": pl.String, "amount": _DEC, "raise_to": _DEC, "is_all_in": pl.Boolean,
        "pot_before": _DEC, "to_call": _DEC, "n_active": pl.Int32,
    },
    "hole_cards": {"hand_id": pl.String, "player": pl.String, "cards": pl.List(pl.String), "source": pl.String},
    "boards": {"hand_id": pl.String, "run": pl.Int32, "cards": pl.List(pl.String)},
    "pots": {"hand_id": pl.String, "pot": pl.Int32, "amount": _DEC},
    "collections": {
        "hand_id": pl.String, "run": pl.Int32, "pot": pl.Int32, "player": pl.String, "amount": _DEC,
        "kind": pl.String,
    },
    "table_events": {
        "hand_id": pl.String, "line": pl.Int32, "player": pl.String, "event": pl.String,
        "detail": pl.String,
    },
    "tournaments": {
        "tournament_id": pl.String, "buy_in": _DEC, "bounty": _DEC, "fee": _DEC,
        "currency": pl.String, "bounty_kind": pl.String, "game": pl.String,
        "limit_type": pl.String, "first_hand_at": _TS, "last_hand_at": _TS,
    },
    "tournament_finishes": {
        "tournament_id": pl.String, "player": pl.String, "place": pl.Int32, "prize": _DEC,
        "hand_id": pl.String,
    },
    "bounties": {
        "hand_id": pl.String, "tournament_id": pl.String, "winner": pl.String,
        "eliminated": pl.String, "amount": _DEC, "increase": _DEC, "new_bounty": _DEC,
    },
    "unknown_lines": {"hand_id": pl.String, "line": pl.Int32, "kind": pl.String, "text": pl.String},
}
QUARANTINE_SCHEMA: dict[str, pl.DataType] = {
    "source_file": pl.String, "position": pl.Int32, "input_kind": pl.String,
    "hand_id": pl.String, "reason": pl.String, "detail": pl.String, "raw": pl.String,
}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)



@dataclass
class ParsedHands:
    """The hand tables of one batch, the quarantined hands and the header count."""

    tables: dict[str, pl.DataFrame] = field(
        default_factory=lambda: {k: empty(v) for k, v in TABLE_SCHEMAS.items()}
    )
    quarantine: pl.DataFrame = field(default_factory=lambda: empty(QUARANTINE_SCHEMA))
    headers_seen: int = 0

    @property
    def n_hands(self) -> int:
        return self.tables["hands"].height

    @staticmethod
    def concat(others: Iterable["ParsedHands"]) -> "ParsedHands":
        """Merge batches. ``tournaments`` is re-aggregated per tournament id."""
        others = list(others)
        if not others:
            return ParsedHands()
        tables = {}
        for name in TABLE_COLUMNS:
            tables[name] = pl.concat([o.tables[name] for o in others], how="vertical")
        t = tables["tournaments"]
        if t.height:
            tables["tournaments"] = (
                t.group_by("tournament_id", maintain_order=True)
                .agg(
                    pl.col("buy_in").first(), pl.col("bounty").first(), pl.col("fee").first(),
                    pl.col("currency").first(),
                    pl.when((pl.col("bounty_kind") == "progressive").any()).then(pl.lit("progressive"))
                    .when((pl.col("bounty_kind") == "knockout").any()).then(pl.lit("knockout"))
                    .otherwise(pl.lit("none")).alias("bounty_kind"),
                    pl.col("game").first(), pl.col("limit_type").first(),
                    pl.col("first_hand_at").min(), pl.col("last_hand_at").max(),
                )
                .select(TABLE_COLUMNS["tournaments"])
            )
        return ParsedHands(
            tables=tables,
            quarantine=pl.concat([o.quarantine for o in others], how="vertical"),
            headers_seen=sum(o.headers_seen for o in others),
        )

    def reason_counts(self) -> pl.DataFrame:
        return self.quarantine.group_by("reason").len().sort("len", descending=True)


def as_quarantine(df: pl.DataFrame) -> pl.DataFrame:
    """``df``'s quarantine columns, in order and cast to :data:`QUARANTINE_SCHEMA`."""
    return df.select([pl.col(c).cast(QUARANTINE_SCHEMA[c]) for c in QUARANTINE_SCHEMA])


def dec(cols: Iterable[str]) -> list[pl.Expr]:
    return [G.cents_to_decimal(pl.col(c)).alias(c) for c in cols]


def finish(df: pl.DataFrame, name: str) -> pl.DataFrame:
    schema = TABLE_SCHEMAS[name]
    return df.select([pl.col(c).cast(schema[c]) for c in TABLE_COLUMNS[name]])


def build_tables(hands: pl.DataFrame, seats: pl.DataFrame, actions: pl.DataFrame, showdown: pl.DataFrame,
                 summary_seats: pl.DataFrame, dealt: pl.DataFrame, boards: pl.DataFrame, pots: pl.DataFrame,
                 collections: pl.DataFrame, events: pl.DataFrame, unknown: pl.DataFrame,
                 finishes: pl.DataFrame, bounties: pl.DataFrame, bad_hids: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The warehouse tables (:data:`TABLE_COLUMNS`) of the hands whose ``hid`` is not in ``bad_hids``.

    Parameters are the stages' frames keyed by ``hid`` (amounts in cents); returns each table cast to
    :data:`TABLE_SCHEMAS` (amounts as decimals). Hole cards: a hand's dealt cards win over shown ones, and
    among these the longest list."""
    def good(df: pl.DataFrame) -> pl.DataFrame:
        return df.join(bad_hids, on="hid", how="anti")

    # hids are 1..N (a running count of headers, each of which has a row in hands):
    # in hands sorted by hid a hand's row is hid - 1, so the kept hands and their
    # values reach the line tables by a gather instead of a join
    hands_by_hid = hands.sort("hid")
    if hands_by_hid.height and (hands_by_hid.item(0, "hid") != 1 or hands_by_hid.item(-1, "hid") != hands_by_hid.height):
        raise AssertionError("hand numbers are not 1..N")
    good_by_hid = ~hands_by_hid.get_column("hid").is_in(bad_hids.get_column("hid").implode())

    def with_hand(df: pl.DataFrame, *cols: str) -> pl.DataFrame:
        """The rows of kept hands, with the hand's ``cols`` (default: hand_id) added."""
        i = df.get_column("hid").cast(pl.Int64) - 1
        keep = good_by_hid.gather(i)
        i = i.filter(keep)
        return df.filter(keep).with_columns(hands_by_hid.get_column(c).gather(i) for c in (cols or ("hand_id",)))

    hands = good(hands)
    ids = hands.select("hid", "hand_id")

    hand_rows = hands.with_columns(
        site=pl.lit("PokerStars"), day=pl.col("started_at").dt.date(), total_pot=pl.col("total"),
        *dec(["small_blind", "big_blind"]),
    ).with_columns(*dec(["total_pot", "rake", "ante"]))
    tables: dict[str, pl.DataFrame] = {}
    tables["hands"] = finish(hand_rows, "hands")

    # (only the columns the tables need are filtered and carried)
    seat_cols = ["hid", "seat", "player", "stack_start", "bounty", "sitting_out", "dealt_in", "position", "put_in",
                 "returned", "collected", "net", "stack_end"]
    seat_rows = with_hand(seats.select(seat_cols), "hand_id", "hero").with_columns(
        is_hero=(pl.col("player") == pl.col("hero")).fill_null(False),
        *dec(["stack_start", "bounty", "put_in", "returned", "collected", "net", "stack_end"]),
    )
    tables["seats"] = finish(seat_rows, "seats")

    act_cols = ["hid", "seq", "street", "player", "action", "amount", "is_raise", "to", "is_all_in", "pot_before",
                "to_call", "folds_before"]
    acts = with_hand(actions.select(act_cols), "hand_id", "n_players").rename({"n_players": "n"})
    acts = acts.with_columns(
        raise_to=pl.when(pl.col("is_raise")).then(pl.col("to")),
        n_active=(pl.col("n") - pl.col("folds_before")).cast(pl.Int32),
    ).with_columns(*dec(["amount", "raise_to", "pot_before", "to_call"]))
    tables["actions"] = finish(acts, "actions")

    shown = pl.concat([
        showdown.filter(pl.col("cards").is_not_null()).select("hid", "player", "cards", "ln"),
        summary_seats.filter(pl.col("cards").is_not_null()).select("hid", "player", "cards", "ln"),
    ], how="vertical").with_columns(source=pl.lit("shown"), pri=pl.lit(1))
    dealt_cards = dealt.filter(pl.col("cards").is_not_null()).select("hid", "player", "cards", "ln").with_columns(
        source=pl.lit("dealt"), pri=pl.lit(0))
    hole_cards = pl.concat([dealt_cards, shown], how="vertical").with_columns(cards=pl.col("cards").str.strip_chars().str.split(" "))
    hole_cards = hole_cards.with_columns(nc=pl.col("cards").list.len()).sort(["hid", "player", "pri", "nc"], descending=[False, False, False, True])
    hole_cards = hole_cards.unique(["hid", "player"], keep="first", maintain_order=True)
    tables["hole_cards"] = finish(with_hand(hole_cards), "hole_cards")
    tables["boards"] = finish(with_hand(boards), "boards")
    tables["pots"] = finish(with_hand(pots).with_columns(*dec(["amt"])).rename({"amt": "amount"}), "pots")
    colls = with_hand(collections).with_columns(*dec(["amt"])).rename({"amt": "amount"})
    tables["collections"] = finish(colls, "collections")
    tables["table_events"] = finish(with_hand(events.sort(["hid", "ln"])).rename({"ln": "line"}), "table_events")
    tables["unknown_lines"] = finish(with_hand(unknown.sort(["hid", "ln"])).rename({"ln": "line", "t": "text"}),
                                      "unknown_lines")
    _tournament_tables(tables, hands, ids, seats, finishes, bounties)
    return tables


def _tournament_tables(tables: dict[str, pl.DataFrame], hands: pl.DataFrame, ids: pl.DataFrame,
                       seats: pl.DataFrame, finishes: pl.DataFrame, bounties: pl.DataFrame) -> None:
    """Add ``tournament_finishes``, ``bounties`` and ``tournaments`` (one row per tournament, its bounty kind
    from the seat bounties and knockout lines of its hands) to ``tables``, from the kept ``hands``."""
    tid = hands.select("hid", "tournament_id").filter(pl.col("tournament_id").is_not_null())
    finish_rows = finishes.join(tid, on="hid", how="inner").join(ids, on="hid", how="inner").with_columns(*dec(["prize"]))
    tables["tournament_finishes"] = finish(finish_rows, "tournament_finishes")
    bounty_rows = bounties.join(tid, on="hid", how="inner").join(ids, on="hid", how="inner").with_columns(*dec(["amount", "increase", "new_bounty"]))
    tables["bounties"] = finish(bounty_rows, "bounties")

    seat_bounty = seats.filter(pl.col("bounty").is_not_null()).select("hid").unique()
    tourney_hands = hands.filter(pl.col("is_tournament")).with_columns(
        has_seat_bounty=pl.col("hid").is_in(seat_bounty.get_column("hid").implode()),
        has_pko=pl.col("hid").is_in(bounties.filter(pl.col("increase").is_not_null()).get_column("hid").implode()),
        has_ko=pl.col("hid").is_in(bounties.get_column("hid").implode()),
    )
    tours = tourney_hands.group_by("tournament_id", maintain_order=True).agg(
        buy_in=pl.col("t_buy_in").first(), bounty=pl.col("t_bounty").first(), fee=pl.col("t_fee").first(),
        currency=pl.col("t_currency").first(), game=pl.col("game").first(), limit_type=pl.col("limit_type").first(),
        first_hand_at=pl.col("started_at").min(), last_hand_at=pl.col("started_at").max(),
        pko=pl.col("has_pko").any(), ko=(pl.col("has_ko") | pl.col("has_seat_bounty")).any(),
    ).with_columns(
        bounty_kind=pl.when(pl.col("pko")).then(pl.lit("progressive"))
        .when(pl.col("ko") | (pl.col("bounty").fill_null(0) > 0)).then(pl.lit("knockout"))
        .otherwise(pl.lit("none")),
        *dec(["buy_in", "bounty", "fee"]),
    )
    tables["tournaments"] = finish(tours, "tournaments")
