"""Hand header and table line: game, stakes, tournament, time (vectorised).

The header names the game anywhere in its text ("Hold'em No Limit",
"5 Card Omaha Pot Limit", or inside a mixed-game wrapper such as
"8-Game (Razz Limit)" or "Mixed NLH/PLO (Hold'em No Limit, $0.10/$0.20 USD)"):
the first ``<game> [Hi/Lo] <limit>`` phrase is the game of the hand. Games
other than Hold'em and the Omaha family are reported as unsupported.

Time: the header carries a local time with its zone and, for non-ET zones, the
same instant in ET between brackets. The ET time is preferred (America/New_York
with DST rules, via the IANA database that Polars uses); otherwise the local
zone is mapped to an IANA zone. Ambiguous times at the autumn DST change take
the earlier instant; non-existent ones (spring gap) make the time unknown and
the hand is quarantined as a malformed header.
"""
from __future__ import annotations

import polars as pl

from .lines import money_cents

ZONES: dict[str, str] = {
    "ET": "America/New_York", "EST": "America/New_York", "EDT": "America/New_York",
    "CT": "America/Chicago", "MT": "America/Denver", "PT": "America/Los_Angeles",
    "AT": "America/Halifax", "NT": "America/St_Johns", "AKT": "America/Anchorage",
    "HT": "Pacific/Honolulu", "BRT": "America/Sao_Paulo", "BRST": "America/Sao_Paulo",
    "ART": "America/Argentina/Buenos_Aires",
    "UTC": "UTC", "GMT": "UTC", "WET": "Europe/Lisbon", "WEST": "Europe/Lisbon",
    "CET": "Europe/Paris", "CEST": "Europe/Paris", "EET": "Europe/Helsinki",
    "EEST": "Europe/Helsinki", "MSK": "Europe/Moscow", "IST": "Asia/Kolkata",
    "CCT": "Asia/Shanghai", "JST": "Asia/Tokyo", "AEST": "Australia/Sydney",
    "AEDT": "Australia/Sydney", "ACST": "Australia/Adelaide", "AWST": "Australia/Perth",
    "NZT": "Pacific/Auckland", "NZST": "Pacific/Auckland", "NZDT": "Pacific/Auckland",
}

GAME_RE = (
    r"(?i)(6\+ Hold'em|Split Hold'em|6 Card Omaha|5 Card Omaha|Courchevel|Omaha|Hold'em|"
    r"7 Card Stud|5 Card Stud|Stud|Razz|5 Card Draw|Single Draw 2-7 Lowball|"
    r"Triple Draw 2-7 Lowball|Triple Draw A-5 Lowball|Badugi|Badeucey|Badacey|2-7 Triple Draw|"
    r"Draw)( Hi/Lo)? (Pot Limit Pre-Flop, No Limit Post-Flop|No Limit|Pot Limit|Fixed Limit|Limit)"
)

_GAME_MAP = {
    "hold'em": "holdem", "6+ hold'em": "holdem_6plus", "split hold'em": "holdem_split",
    "omaha": "omaha", "5 card omaha": "omaha5", "6 card omaha": "omaha6",
    "courchevel": "courchevel",
}
_LIMIT_MAP = {
    "no limit": "no_limit", "pot limit": "pot_limit", "fixed limit": "fixed_limit",
    "limit": "fixed_limit",
    "pot limit pre-flop, no limit post-flop": "pot_limit_preflop_no_limit_postflop",
}
_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "₹": "INR", "Rs.": "INR", "¥": "CNY"}

_DT = r"(\d{4})/(\d{1,2})/(\d{1,2})[ -]+(\d{1,2}):(\d{2}):(\d{2})"


def _naive(prefix: str) -> pl.Expr:
    return pl.datetime(
        pl.col(f"{prefix}_y").cast(pl.Int32, strict=False),
        pl.col(f"{prefix}_mo").cast(pl.Int32, strict=False),
        pl.col(f"{prefix}_d").cast(pl.Int32, strict=False),
        pl.col(f"{prefix}_h").cast(pl.Int32, strict=False),
        pl.col(f"{prefix}_mi").cast(pl.Int32, strict=False),
        pl.col(f"{prefix}_s").cast(pl.Int32, strict=False),
    )


def _to_utc(naive: pl.Expr, zone: pl.Expr, zones_present: list[str]) -> pl.Expr:
    """Local naive datetime + zone abbreviation -> naive UTC datetime (vectorised per zone)."""
    out = pl.lit(None, dtype=pl.Datetime("us"))
    for z in zones_present:
        iana = ZONES.get(z)
        if iana is None:
            continue
        conv = (
            naive.dt.replace_time_zone(iana, ambiguous="earliest", non_existent="null")
            .dt.convert_time_zone("UTC")
            .dt.replace_time_zone(None)
        )
        out = pl.when(zone == z).then(conv).otherwise(out)
    return out


def parse_headers(hands: pl.DataFrame) -> pl.DataFrame:
    """``hands`` has columns hid, t (header text), table_t (the next line, may be null).

    Returns one row per hid with the hand's header fields (amounts in cents)
    and ``header_error`` (null when the header is usable).
    """
    t = pl.col("t")
    # the text before the first " - <date>" (all of it when there is none);
    # a capture-free replace is several times cheaper than a lazy extract
    pre = t.str.replace(r" - \d{4}/\d{1,2}/\d{1,2}.*$", "")
    # per hand: ids and times
    hands = hands.lazy().with_columns(
        hand_id=t.str.extract(r"#(\d+)", 1),
        is_zoom=t.str.contains(r"^PokerStars Zoom |Zoom Tournament #"),
        pre=pre,
        tournament_id=t.str.extract(r"(?i)Tournament #(\d+)", 1),
        l_g=t.str.extract_groups(_DT + r"(?: \(?([A-Za-z]+)\)?)?"),
        e_g=t.str.extract_groups(r"\[" + _DT + r" ET\]"),
        local_s=t.str.extract(r"(" + _DT + r"(?: \(?[A-Za-z]+\)?)?)", 1),
    ).with_columns(key=pl.col("pre").str.replace_all(r"#\d+", "#")).collect()
    hands = hands.with_columns(
        **{f"l_{k}": pl.col("l_g").struct.field(str(i)) for i, k in enumerate(["y", "mo", "d", "h", "mi", "s", "z"], start=1)},
        **{f"e_{k}": pl.col("e_g").struct.field(str(i)) for i, k in enumerate(["y", "mo", "d", "h", "mi", "s"], start=1)},
    ).drop("l_g", "e_g")
    kinds = _buy_ins(_header_kinds(hands))
    hands = hands.join(kinds.drop("pre", "game_m", "blinds"), on="key", how="left", maintain_order="left").drop("key")
    hands = hands.with_columns(
        is_tournament=pl.col("tournament_id").is_not_null(),
        currency=pl.when(pl.col("tournament_id").is_not_null()).then(pl.lit("CHIPS")).otherwise(pl.col("cash_currency")),
    )
    hands = _start_times(hands)
    hands = _table_lines(hands)
    hands = hands.lazy().with_columns(
        currency=pl.when((pl.col("currency") == "PLAY") | pl.col("table_extra").str.contains("Play Money", literal=True))
        .then(pl.when(pl.col("is_tournament")).then(pl.lit("CHIPS")).otherwise(pl.lit("PLAY")))
        .otherwise(pl.col("currency")),
        unsupported=pl.col("game_name").is_not_null() & (pl.col("game").is_null() | pl.col("limit_type").is_null()),
        header_error=pl.when(pl.col("hand_id").is_null()).then(pl.lit("no hand id"))
        .when(pl.col("game_name").is_null() & pl.col("table_t").str.contains(GAME_RE).fill_null(False))
        .then(pl.lit("no game named in the header: the header is broken over two lines (the game on the next one),"
                     " a layout railbird does not read"))
        .when(pl.col("game_name").is_null()).then(pl.lit("no game named in the header"))
        .when(pl.col("started_at").is_null()).then(pl.lit("no readable date/time zone"))
        .when(pl.col("table_name").is_null()).then(pl.lit("no table line after the header"))
        .otherwise(None),
    ).collect()
    return hands


def _header_kinds(hands: pl.DataFrame) -> pl.DataFrame:
    """One row per distinct header text (``key``: ids blanked) of ``hands``: game, hi_lo, limit, stakes
    and ante (cents), cash currency, tournament level and the buy-in as written (``buyin_s``)."""
    # per distinct header text (ids blanked): game, stakes, buy-in. A session's
    # hands share a handful of these, so the heavy patterns run once per kind.
    kinds = hands.select("key", "pre").unique("key", keep="first", maintain_order=True)
    pre_text = pl.col("pre")
    kinds = kinds.lazy().with_columns(
        tournament_level=pre_text.str.extract(r"Level ([IVXLCDM]+|\d+)", 1),
        buyin_s=pre_text.str.extract(
            r"(?i)Tournament #\d+,?\s+((?:\S*\d[\d.,]*\S*\+)*\S*\d[\d.,]*[^\s+]*(?: [A-Z]{3})?|Freeroll)", 1
        ),
        game_m=pre_text.str.extract_groups(GAME_RE),
        blinds=pre_text.str.extract_groups(r"\(([^\d(]*?)(\d[\d.,]*)[^/()]*/[^\d/()]*?(\d[\d.,]*)"),
        bb_button=pre_text.str.extract(r"Button Blind\D*?(\d[\d.,]*)", 1),
        ante_hdr=pre_text.str.extract(r"Ante\D*?(\d[\d.,]*)", 1),
        cur_code=pre_text.str.extract(r"\b([A-Z]{3})\s*\)", 1),
    ).collect()
    kinds = kinds.lazy().with_columns(
        game_name=pl.col("game_m").struct.field("1").str.to_lowercase(),
        hi_lo=pl.col("game_m").struct.field("2").is_not_null(),
        limit_name=pl.col("game_m").struct.field("3").str.to_lowercase(),
        small_blind=money_cents(pl.col("blinds").struct.field("2")),
        big_blind=money_cents(pl.coalesce(pl.col("blinds").struct.field("3"), pl.col("bb_button"))),
        ante_header=money_cents(pl.col("ante_hdr")),
        cash_currency=pl.coalesce(
            pl.col("cur_code"),
            pl.when(pre_text.str.contains("$", literal=True)).then(pl.lit("USD"))
            .when(pre_text.str.contains("€", literal=True)).then(pl.lit("EUR"))
            .when(pre_text.str.contains("£", literal=True)).then(pl.lit("GBP"))
            .when(pre_text.str.contains("₹", literal=True) | pre_text.str.contains("Rs.", literal=True)).then(pl.lit("INR"))
            .when(pre_text.str.contains("¥", literal=True)).then(pl.lit("CNY"))
            .when(pre_text.str.contains(r"\d SC\b")).then(pl.lit("SC"))
            .otherwise(pl.lit("PLAY")),
        ),
    ).collect()
    kinds = kinds.with_columns(
        game=pl.col("game_name").replace_strict(_GAME_MAP, default=None),
        limit_type=pl.col("limit_name").replace_strict(_LIMIT_MAP, default=None),
    )
    return kinds


def _buy_ins(kinds: pl.DataFrame) -> pl.DataFrame:
    """``kinds`` with the tournament buy-in, bounty and fee (cents) and its currency, read from ``buyin_s``."""
    # Tournament buy-in: "$0.98+$0.02 USD", "$10+$10+$2 USD", "100+10", "90 FPP",
    # "250 SC", "Freeroll". Three parts = prize pool + bounty + fee.
    b = pl.col("buyin_s")
    parts = b.str.replace(r" [A-Z]{3}$", "").str.split("+")
    nparts = parts.list.len()
    kinds = kinds.lazy().with_columns(
        t_buy_in=pl.when(b == "Freeroll").then(pl.lit(0, pl.Int64)).otherwise(money_cents(parts.list.get(0, null_on_oob=True))),
        t_bounty=pl.when(nparts == 3).then(money_cents(parts.list.get(1, null_on_oob=True))).otherwise(pl.lit(0, pl.Int64)),
        t_fee=pl.when(nparts == 3).then(money_cents(parts.list.get(2, null_on_oob=True)))
        .when(nparts == 2).then(money_cents(parts.list.get(1, null_on_oob=True)))
        .otherwise(pl.lit(0, pl.Int64)),
        t_currency=pl.when(b.is_null()).then(None)
        .when(b == "Freeroll").then(pl.lit(None, pl.String))
        .when(b.str.contains(r"\b([A-Z]{3})$")).then(b.str.extract(r"\b([A-Z]{3})$", 1))
        .when(b.str.contains("FPP", literal=True)).then(pl.lit("FPP"))
        .when(b.str.contains(r"\bSC\b")).then(pl.lit("SC"))
        .when(b.str.contains("$", literal=True)).then(pl.lit("USD"))
        .when(b.str.contains("€", literal=True)).then(pl.lit("EUR"))
        .when(b.str.contains("£", literal=True)).then(pl.lit("GBP"))
        .when(b.str.contains("₹", literal=True)).then(pl.lit("INR"))
        .otherwise(pl.lit("PLAY")),
    ).collect()
    return kinds


def _start_times(hands: pl.DataFrame) -> pl.DataFrame:
    """``hands`` with started_at (UTC: the ET time when written, else the local time in its zone) and
    started_at_local (as written)."""
    zones = [z for z in hands.get_column("l_z").unique().drop_nulls().to_list()]
    et = _naive("e")
    local = _naive("l")
    hands = hands.lazy().with_columns(
        started_at=pl.coalesce(
            _to_utc(et, pl.lit("ET"), ["ET"]),
            _to_utc(local, pl.col("l_z").fill_null("ET"), zones + ["ET"]),
        ),
        started_at_local=pl.col("local_s"),
    ).collect()
    return hands


def _table_lines(hands: pl.DataFrame) -> pl.DataFrame:
    """``hands`` with table_name, max_seats, button_seat and table_extra read from the table line (each distinct
    line once)."""
    # Table line: "Table 'name' 6-max (Play Money) Seat #3 is the button"
    table_groups = pl.col("table_t").str.extract_groups(r"^Table '(.*)'(?: (\d+)-max)?(.*?)(?: Seat #(\d+) is the button)?$")
    # a table's line repeats from hand to hand: parse each distinct line once
    tables = hands.select("table_t").unique(maintain_order=True).drop_nulls().lazy().with_columns(
        table_name=table_groups.struct.field("1"),
        max_seats=table_groups.struct.field("2").cast(pl.Int32, strict=False),
        button_seat=table_groups.struct.field("4").cast(pl.Int32, strict=False),
        table_extra=table_groups.struct.field("3"),
    ).collect()
    hands = hands.join(tables, on="table_t", how="left", maintain_order="left")
    return hands
