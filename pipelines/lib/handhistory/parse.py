"""PokerStars hand histories -> the warehouse hand tables, vectorised with Polars.

Method
------
1. All lines of a batch (one or many decoded files) go into one frame
   ``(file, line number, text)``. A line matching the header pattern starts a
   hand; hands are numbered by a cumulative sum over header matches, and a line
   belongs to the hand of the last header *of the same file*.
2. Section markers (``*** HOLE CARDS ***``, ``*** FLOP ***`` ... ``*** SUMMARY
   ***``) are forward-filled to give each line its street; the first blank line
   after the summary ends the hand (text after it and before the next header is
   not part of any hand).
3. Every line is classified once into a small integer class with literal
   prefix/suffix tests (marker, chat, table, seat, summary, dealt, uncalled,
   verb-or-other); each class is then parsed over its own rows only. Within a
   class the common shape is recognised by a capture-free anchored pattern and
   cut with literal splits (seat lines: ``G.PLAIN_SEAT_RE``, split at
   ``" ("``, ``": "``, ``")"``, ``" in chips"``; action tails:
   ``G.PLAIN_ACTION_TAIL_RE``, split at ``" to "``); only the rows that do not
   have it (a name with brackets, cards after a fold, a cap...) run the full
   regular expression with capture groups (``lines.py``), and their fields are
   scattered back into place, so row order never needs re-sorting. Amounts
   ``[$€£]digits[.digits]`` only lose their sign before the decimal cast; the
   others (separators, decimal commas, "Rs.") are cleaned in full
   (``money_cents``). Names taken from lines are checked against the seat list
   of the same hand by a join, so a name that contains ``': '`` or
   ``' said, '`` or brackets cannot forge an action: a verb line whose
   leftmost name is not seated is re-read with the greedy pattern in place.
4. Tables are built with filters, joins and window expressions. Running values
   of ``actions`` (raise increments, ``pot_before``, ``to_call``,
   ``n_active``) are cumulative sums/maxima over (hand, street, player)
   windows: a player's live commitment on a street is the last ``raise ... to
   Y`` plus later calls; antes and the dead part of "small & big blinds" are
   not live.
5. Checks (unsupported game, cancelled, truncated, malformed header, unparsed
   line, impossible action, unbalanced) are group-by aggregates; a hand failing
   any of them goes to the quarantine frame with its raw text, and to no other
   table. Text outside every hand (before a file's first hand, after a hand's
   summary and a blank line) is quarantined too, a block at a time: another
   room's hands as ``unsupported site``, the rest as ``text outside any hand``.

Balance rule: sum(put_in) + STP (splash-the-pot money added by the room) =
Total pot = sum(collected from pots) + rake + pots not awarded because the
winner had cashed out (summary "won ($X) ... (pot not awarded as player
cashed out)"). Cash-out payments are paid by the room, not by the pot: they
count in the seat's ``collected`` and ``stack_end`` but not in the pot
balance. When the summary lists main and side pots, main + sides + STP must
equal the total pot. Every stack_end and put_in must be >= 0.

Blinds: a "posts small blind" after the big blind was posted is a returning
player's dead small blind (``post_dead``, not live); the dead part of "posts
small & big blinds" is the amount above the big blind. Preflop, ``to_call``
is at least the big blind (a short all-in big blind does not lower it).
Fixed-limit headers state the bets ("$1/$2"): ``big_blind`` is the small bet
and ``small_blind`` what the hand's small blind posted (else half the small
bet). Old clients (2007) wrote no "Uncalled bet" line: when the pot falls
short of what was put in by exactly the top contributor's excess over the
second, that excess is recorded as returned.

``content_hash``: MD5 (hex, as DuckDB's ``md5``) of the hand's lines with surrounding
whitespace removed and blank lines dropped, joined by ``\n``: the same hand
written with ``\r\n``, trailing spaces or another encoding has one hash.
(hashlib over the binary view of each hand's joined text: one call per hand.)

Positions: the players dealt in are ordered clockwise from the button seat
(the first seat after the button first, the button seat last). Heads-up: the
button seat is 'BTN' (it posts the small blind) and the other player 'BB'.
With n >= 3: the first two are 'SB', 'BB', the last is 'BTN'; the seats in
between are named from the button backwards 'CO', 'HJ', 'LJ', and any further
early seats from the blinds forwards 'UTG', 'UTG1', 'UTG2', 'UTG3'. When the
button seat is empty (dead button) the last player in that order is still
named 'BTN'.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import hashlib

import polars as pl

from . import lines as G
from .header import parse_headers

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


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


@dataclass
class ParsedHands:
    """The hand tables of one batch, the quarantined hands and the header count."""

    tables: dict[str, pl.DataFrame] = field(
        default_factory=lambda: {k: _empty(v) for k, v in TABLE_SCHEMAS.items()}
    )
    quarantine: pl.DataFrame = field(default_factory=lambda: _empty(QUARANTINE_SCHEMA))
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


# ----------------------------------------------------------------------------- helpers

class _Names:
    """The seat names of each hand, ready for lookups: ``(hid, player) -> seat``
    (the first seat of a name).

    Method: one 64-bit key per (hand, name), the hand number in the high 32
    bits and a 32-bit hash of the name in the low ones, sorted once per batch;
    a lookup is a binary search of the probe keys in that sorted column
    (``Series.search_sorted``; probes come in hand order, so the searches stay
    in a cached stretch of it) and a gather, with no hash table rebuilt per
    lookup as a join would (numpy's searchsorted is faster on the largest
    lookup, but importing numpy in each spawned parse worker costs more CPU
    than it saves on a run of 100k hands). Every hit is verified against the name and hand themselves,
    so a hash collision can only make the lookup fall back to the exact join
    on (hand, name), never change its answer."""

    def __init__(self, names: pl.DataFrame):
        keyed = names.select(_k=_name_key("player"), _h="hid", _p="player", _s="seat").sort("_k", maintain_order=True)
        k = pl.col("_k")
        # the same name seated twice in a hand: the first seat is kept (a stable sort keeps seat-line order)
        keyed = keyed.filter(~((k == k.shift(1)) & pl.col("_p").eq_missing(pl.col("_p").shift(1))
                               & (pl.col("_h") == pl.col("_h").shift(1))).fill_null(False))
        collision = keyed.height == 0 or bool(keyed.select((k == k.shift(1)).any()).item())
        self.keyed = None if collision else keyed
        self.sorted_keys = None if collision else keyed.get_column("_k")
        self.exact = (
            names.select("hid", "player", "seat").unique(["hid", "player"], keep="first", maintain_order=True)
            if collision else None
        )
        # names with spaces at an end, by their stripped form (when no other name of the hand strips to it): a line's
        # own spaces at its ends are stripped, so "Uncalled bet ($1) returned to x " names the seat "x "
        stripped = names.select("hid", _n=pl.col("player").str.strip_chars(), _p="player", _s="seat")
        stripped = stripped.filter(~pl.struct("hid", "_n").is_duplicated())
        self.spaced = stripped.filter(pl.col("_n") != pl.col("_p")).drop_nulls("_n")


def _name_key(col: str) -> pl.Expr:
    return (pl.col("hid").cast(pl.UInt64) * pl.lit(1 << 32, pl.UInt64)) | (pl.col(col).hash(0x5EED) & pl.lit(0xFFFFFFFF, pl.UInt64))


def _known(df: pl.DataFrame, names: _Names, col: str, flag: str) -> pl.DataFrame:
    """Add boolean ``flag``: is ``df[col]`` one of the seat names of the same hand
    (and ``{flag}_seat``, its seat). A name found only as the stripped form of a seat name with spaces at an end
    is that seat's, and ``df[col]`` becomes the seat's name as written."""
    out = _known_exact(df, names, col, flag)
    if names.spaced.height == 0 or bool(out.get_column(flag).all()):
        return out
    miss = (~out.get_column(flag)).arg_true()
    m = out[miss].select("hid", _n=pl.col(col).str.strip_chars()).join(
        names.spaced, on=["hid", "_n"], how="left", maintain_order="left")
    found = m.get_column("_p").is_not_null()
    return out.with_columns(
        out.get_column(col).scatter(miss, pl.select(pl.when(found).then(m.get_column("_p"))
                                                    .otherwise(out.get_column(col).gather(miss))).to_series()),
        out.get_column(f"{flag}_seat").scatter(miss, m.get_column("_s").cast(out.schema[f"{flag}_seat"])),
        out.get_column(flag).scatter(miss, found),
    )


def _known_exact(df: pl.DataFrame, names: _Names, col: str, flag: str) -> pl.DataFrame:
    """:func:`_known` for names as written."""
    if names.keyed is None:
        right = names.exact.select(
            "hid", pl.col("player").alias(col), pl.col("seat").alias(f"{flag}_seat")
        ).with_columns(pl.lit(True).alias(flag))
        return df.join(right, on=["hid", col], how="left", maintain_order="left").with_columns(
            pl.col(flag).fill_null(False)
        )
    probe = df.select(_name_key(col)).to_series()
    i = names.sorted_keys.search_sorted(probe, side="left").clip(upper_bound=names.sorted_keys.len() - 1)
    hit = names.keyed[i]
    ok = ((hit.get_column("_k") == probe) & (hit.get_column("_p") == df.get_column(col))
          & (hit.get_column("_h") == df.get_column("hid"))).fill_null(False)
    return df.with_columns(
        pl.when(ok).then(hit.get_column("_s")).alias(f"{flag}_seat"), ok.alias(flag))


def _issue(df: pl.DataFrame, prio: int, reason: str, detail: pl.Expr) -> pl.DataFrame:
    # (rechunked: Polars 2.1's ``pl.format`` panics on columns whose chunks are
    # laid out differently, e.g. the seats of a normal hand followed by a hand
    # with a name seated twice; the frames here are the few problem rows)
    return df.rechunk().select(
        "hid", pl.lit(prio).alias("prio"), pl.lit(reason).alias("reason"), detail.cast(pl.String).alias("detail")
    )


def _unparsed(df: pl.DataFrame, why: str = "") -> pl.DataFrame:
    return _issue(
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
_LAYOUT_NET_OF_RAKE = (
    pl.when((pl.col("coll_pot") == pl.col("total")) & (pl.col("rake") > 0)
            & (pl.col("sum_put") + pl.col("stp") >= pl.col("total") + pl.col("rake")))
    .then(pl.lit(" (the layout of a Holdem Manager 1 export: total pot written net of rake, no uncalled-bet line;"
                 " not read)"))
    .otherwise(pl.lit(""))
)


def _cards_or_null(cards: pl.Expr) -> pl.Expr:
    """Cards as written between brackets, or null when the brackets hold no card (``[ ]``, ``[?? ??]``: an export
    or a research dump that blanks the cards)."""
    return pl.when(cards.str.contains(r"[2-9TJQKA][cdhs]")).then(cards)


def _unknown_lines(df: pl.DataFrame, names: "_Names", issues: list[pl.DataFrame]) -> pl.DataFrame:
    """Split lines no pattern read (columns hid, ln, t) into harmless ones, returned as unknown-line rows
    (hid, ln, kind, t), and the others, appended to ``issues`` as unparsed lines (the hand is quarantined).

    Harmless: a seated player's name and a colon with nothing after (kind ``blanked show``: an export that blanks
    the cards shown), or a line matching nothing of :data:`MONEY_OR_ACTION_RE` (kind ``unknown``: a client
    message). Such a line changes no amount, so the hand is stored when its money balances (the balance and
    structure checks still apply); the line is kept in ``unknown_lines``, never dropped."""
    df = df.select("hid", "ln", "t")
    blanked = _known(df.with_columns(player=pl.col("t").str.strip_suffix(":")), names, "player", "blank")
    blanked = blanked.get_column("blank") & df.get_column("t").str.ends_with(":")
    harmless = ~df.get_column("t").str.contains(MONEY_OR_ACTION_RE)
    out = df.with_columns(kind=pl.when(blanked).then(pl.lit("blanked show"))
                          .when(harmless).then(pl.lit("unknown")).otherwise(None))
    issues.append(_unparsed(out.filter(pl.col("kind").is_null())))
    return out.filter(pl.col("kind").is_not_null()).select("hid", "ln", "kind", "t")


def _impossible_actions(A: pl.DataFrame) -> pl.DataFrame:
    """Actions no client writes: a check or bet facing a bet, a call of nothing or of more than is owed, a raise
    that does not raise, a voluntary action after the player folded, a check, call, bet or raise after their all-in.

    None occurs in the real corpus or in generated worlds; a line lost, doubled or moved in a file makes them while
    the money may still add up, and such a hand would tell the detectors that someone faced what they did not.
    (A fold after an all-in does occur: a sitting-out tournament player posts all-in and is folded.)"""
    a, owed = pl.col("action"), pl.col("to_call")
    why = (
        pl.when(a.is_in(["check", "bet"]) & (owed > 0)).then(pl.lit("facing a bet"))
        .when((a == "call") & (owed == 0)).then(pl.lit("nothing to call"))
        .when((a == "call") & (pl.col("amount") > owed)).then(pl.lit("more than is owed"))
        .when((a == "raise") & (pl.col("amount") >= 0) & (pl.col("amount") <= owed)).then(pl.lit("does not raise"))
    )
    by_line = A.with_columns(why=why).filter(pl.col("why").is_not_null())
    # after a fold or an all-in: each player's lines of a hand in order (a stable sort on one integer key); the
    # first line after a fold, or a live action right after an all-in, is the impossible one
    voluntary = a.is_in(["fold", "check", "call", "bet", "raise"])
    P = A.filter(voluntary | pl.col("is_all_in")).select(
        "hid", "ln", "t", "action", "is_all_in", voluntary=voluntary,
        kp=pl.col("hid").cast(pl.Int64) * 1024 + pl.col("known_seat").cast(pl.Int64),
    ).sort("kp", maintain_order=True)
    same = pl.col("kp") == pl.col("kp").shift(1)
    after_fold = same & (a.shift(1) == "fold")
    after_all_in = same & pl.col("is_all_in").shift(1) & (a != "fold")
    late = P.with_columns(after_fold=after_fold, after_all_in=after_all_in).filter(
        pl.col("voluntary") & (pl.col("after_fold") | pl.col("after_all_in"))
    ).with_columns(why=pl.when(pl.col("after_fold")).then(pl.lit("after folding")).otherwise(pl.lit("after going all-in")))
    bad = pl.concat([by_line.select("hid", "ln", "t", "why"), late.select("hid", "ln", "t", "why")], how="vertical")
    return _issue(bad.sort("hid", "ln"), 6, "impossible action",
                  pl.format("line {}: {} ({})", pl.col("ln") + 1, pl.col("t"), pl.col("why")))


def _as_quarantine(df: pl.DataFrame) -> pl.DataFrame:
    """``df``'s quarantine columns, in order and cast to :data:`QUARANTINE_SCHEMA`."""
    return df.select([pl.col(c).cast(QUARANTINE_SCHEMA[c]) for c in QUARANTINE_SCHEMA])


def _dec(cols: Iterable[str]) -> list[pl.Expr]:
    return [G.cents_to_decimal(pl.col(c)).alias(c) for c in cols]


def _finish(df: pl.DataFrame, name: str) -> pl.DataFrame:
    schema = TABLE_SCHEMAS[name]
    return df.select([pl.col(c).cast(schema[c]) for c in TABLE_COLUMNS[name]])


_ACTION_CODE = {
    "posts small blind": "post_sb", "posts big blind": "post_bb", "posts the ante": "post_ante",
    "posts ante": "post_ante", "posts small & big blinds": "post_sb_bb", "posts straddle": "post_straddle",
    "posts button blind": "post_bb", "posts dead blind": "post_dead", "folds": "fold", "checks": "check",
    "calls": "call", "bets": "bet", "raises": "raise",
}
_K = {k: i for i, k in enumerate(["marker", "chat", "table", "seat", "summary", "dealt", "uncalled", "x"])}
_SEC_NAMES = ["setup", "summary", "showdown", "preflop", "river", "turn", "flop", "other"]
_SEC = pl.Enum(_SEC_NAMES)
_NONFLOP_VERBS = {"discards", "stands pat", "draws", "brings in", "brings", "bring-in"}



# Group-wise running values over frames whose groups are contiguous runs of
# rows (``start`` marks each group's first row). These are plain cumulative
# sums with a per-group offset: O(n), no hashing, much faster than ``over``
# on many small groups.

def _starts(key: str) -> pl.Expr:
    return (pl.col(key) != pl.col(key).shift(1)).fill_null(True)


def _g_cumsum(x: pl.Expr, start: pl.Expr) -> pl.Expr:
    cs = x.cum_sum()
    return cs - pl.when(start).then(cs - x).forward_fill()


def _g_shift(x: pl.Expr, start: pl.Expr, fill) -> pl.Expr:
    return pl.when(start).then(pl.lit(fill)).otherwise(x.shift(1))


def _g_index(start: pl.Expr) -> pl.Expr:
    i = pl.int_range(pl.len(), dtype=pl.Int64)
    return i - pl.when(start).then(i).forward_fill()


def _g_cummax_nonneg(x: pl.Expr, start: pl.Expr) -> pl.Expr:
    """Running max within contiguous groups of values in [0, 2**40)."""
    gi = start.cast(pl.Int64).cum_sum()
    big = 1 << 40
    # (clipped: a value out of range can then not raise the maximum of a later group; lines.MAX_CENTS keeps the
    # amounts of parsed hands inside it)
    return (x.clip(0, big - 1) + gi * big).cum_max() - gi * big

# The highest seat number read (real tables have at most 10 seats). A seat line above it is unparsed and its hand
# quarantined: keys of the form hand * 1024 + seat (below) then cannot reach another hand.
MAX_SEAT = 100


def _seat_lines(S: pl.DataFrame, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """Setup seat lines -> hid, seat, player, stack_start, bounty, sitting_out.

    ``G.SEAT_RE`` is the grammar. A line that matches the capture-free
    ``G.PLAIN_SEAT_RE`` (one pair of brackets, a numeric seat, one " in
    chips") has exactly one way to match it, and is cut with literal splits
    at " (", ": ", ")" and " in chips"; the other lines (a name with
    brackets...) get the capture groups of ``SEAT_RE``, scattered back in
    place. A line matching neither is an unparsed line."""
    t = pl.col("t")
    S = S.lazy().select(
        "hid", "ln", "t",
        ok=t.str.contains(G.PLAIN_SEAT_RE) & (t.str.count_matches(" in chips", literal=True) == 1),
        a=t.str.split_exact(" (", 1),
    ).unnest("a").select(
        "hid", "ln", "t", "ok",
        nm=pl.col("field_0").str.splitn(": ", 2),
        b=pl.col("field_1").str.split_exact(")", 1),
    ).unnest("b").select(
        "hid", "ln", "t", "ok",
        seat_s=pl.col("nm").struct.field("field_0").str.slice(5),
        player=pl.col("nm").struct.field("field_1"),
        c=pl.col("field_0").str.split_exact(" in chips", 1),
        rest=pl.col("field_1"),
    ).unnest("c").select(
        "hid", "ln", "t", "ok", "seat_s", "player", "rest",
        stack_s=pl.col("field_0"),
        bounty_s=pl.when(pl.col("field_1") != "").then(pl.col("field_1").str.slice(2).str.strip_suffix(" bounty")),
    ).collect()
    other = (~S.get_column("ok")).arg_true()
    if other.len():
        g = S.get_column("t").gather(other).str.extract_groups(G.SEAT_RE)
        S = S.with_columns(
            S.get_column(c).scatter(other, g.struct.field(str(i)))
            for i, c in ((1, "seat_s"), (2, "player"), (3, "stack_s"), (4, "bounty_s"), (5, "rest"))
        )
        bad = pl.col("seat_s").is_null()
        issues.append(_unparsed(S.filter(bad)))
        S = S.filter(~bad)
    S = S.with_columns(
        seat=pl.col("seat_s").cast(pl.Int32, strict=False),
        stack_start=G.money_cents(pl.col("stack_s")),
        bounty=G.money_cents(pl.col("bounty_s")),
    )
    absurd = (~pl.col("seat").is_between(1, MAX_SEAT) | pl.col("seat").is_null() | pl.col("stack_start").is_null()
              | (pl.col("bounty_s").is_not_null() & pl.col("bounty").is_null()))
    issues.append(_unparsed(S.filter(absurd), f" (seat number outside 1..{MAX_SEAT} or an amount out of range)"))
    return S.filter(~absurd).select(
        "hid", "seat", "player", "stack_start", "bounty",
        sitting_out=pl.col("rest").str.contains("sitting out|out of hand"),
    )


# ----------------------------------------------------------------------------- core

# The lines a PokerStars summary holds after "*** SUMMARY ***"
_SUMMARY_GOES_ON_RE = r"^(?:Total pot|Board \[|Seat \d+: |Hand was run|(?:FIRST|SECOND|THIRD) Board \[)"
# Hand headers of other rooms that write PokerStars' layout ("MPLPoker Hand #4227871731: ...", "Run It Once Poker
# Hand #30702949: ..."): recognised so that their hands are quarantined one by one as from an unsupported site.
FOREIGN_HEADER_RE = r"^([^\s:#][^:#]{0,40}?) (?:Hand|Game) #(\d+):"
# the most raw text one quarantine row keeps of input with no natural bound (text outside hands, a broken CSV row)
QUARANTINE_RAW_CHARS = 10_000


def _outside_hands(L: pl.DataFrame, files: list[str]) -> tuple[pl.DataFrame, int]:
    """The non-blank text outside every PokerStars hand, as quarantine rows; and how many foreign hands it holds.

    Lines before a file's first hand, or after a hand's summary and a blank line, are no part of any hand. They
    are kept, never dropped in silence: one row per block of lines between blank lines, at the block's first
    line. A block that starts with another room's hand header is that hand (input kind ``hand``, reason
    ``unsupported site``); any other block is ``text outside any hand`` (input kind ``text``), its raw text cut
    at ``QUARANTINE_RAW_CHARS`` characters."""
    t = pl.col("t")
    O = L.lazy().filter(~pl.col("inh")).select("fidx", "lno", "raw", "t").collect()
    if O.height == 0 or O.get_column("t").str.len_bytes().max() == 0:
        return _empty(QUARANTINE_SCHEMA), 0
    blank = t == ""
    B = O.lazy().with_columns(
        start=~blank & (
            blank.shift(1, fill_value=True) | (pl.col("fidx") != pl.col("fidx").shift(1))
            | (pl.col("lno") != pl.col("lno").shift(1) + 1) | t.str.contains(FOREIGN_HEADER_RE)),
    ).with_columns(block=pl.col("start").cum_sum()).filter(~blank).group_by("block", maintain_order=True).agg(
        pl.col("fidx").first(), pl.col("lno").first(), first=t.first(), n=pl.len(),
        raw=pl.col("raw").str.join("\n"),
    ).with_columns(f=pl.col("first").str.extract_groups(FOREIGN_HEADER_RE)).with_columns(
        site=pl.col("f").struct.field("1"), hand_id=pl.col("f").struct.field("2"),
    ).collect()
    is_foreign = pl.col("hand_id").is_not_null()
    long = pl.col("raw").str.len_chars() > QUARANTINE_RAW_CHARS
    Q = B.select(
        source_file=pl.col("fidx").replace_strict(list(range(len(files))), files, return_dtype=pl.String),
        position=pl.col("lno"),
        input_kind=pl.when(is_foreign).then(pl.lit("hand")).otherwise(pl.lit("text")),
        hand_id="hand_id",
        reason=pl.when(is_foreign).then(pl.lit("unsupported site")).otherwise(pl.lit("text outside any hand")),
        detail=pl.when(is_foreign).then(pl.format("a hand from {}: railbird reads PokerStars hand histories", pl.col("site")))
        .otherwise(pl.format("{} line(s) outside any PokerStars hand{}", pl.col("n"),
                             pl.when(long).then(pl.lit(f" (raw cut at {QUARANTINE_RAW_CHARS:,} characters)")).otherwise(pl.lit("")))),
        raw=pl.when(long).then(pl.col("raw").str.slice(0, QUARANTINE_RAW_CHARS)).otherwise(pl.col("raw")),
    )
    return _as_quarantine(Q), int(B.get_column("hand_id").is_not_null().sum())


def _lines_frame(texts: list[str], files: list[str], line_offsets: list[int] | None = None) -> pl.DataFrame:
    """One row per line of every text: fidx, lno (1-based line in its file), raw.

    ``line_offsets`` (optional) gives, per text, how many lines of its file come
    before it (a large file parsed in pieces)."""
    offsets = line_offsets if line_offsets is not None else [0] * len(texts)
    df = pl.DataFrame({
        "fidx": pl.Series(range(len(texts)), dtype=pl.Int32), "raw": texts,
        "off": pl.Series(offsets, dtype=pl.Int32),
    })
    df = df.with_columns(pl.col("raw").str.split("\n")).explode("raw")
    return df.with_columns(lno=(_g_index(_starts("fidx")) + 1 + pl.col("off")).cast(pl.Int32)).drop("off")


def parse_text(text: str, source_file: str) -> ParsedHands:
    """Parse one decoded text (``decode_bytes`` output or any str) of ``source_file``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return _parse_lines(_lines_frame([text], [source_file]), [source_file])


def _parse_lines(L: pl.DataFrame, files: list[str]) -> ParsedHands:  # noqa: C901 - one pipeline
    t = pl.col("t")
    # A marker line "*** FLOP *** [..]" (a player named "***Ace***" is not one:
    # the words between the stars are checked). Its text without the stars
    # ("FLOP *** [..]") names the section; only its words are tested, and only
    # on the header and marker rows (a few per hand).
    m = t.str.strip_chars_start("* ")
    sec_code = (
        pl.when(pl.col("is_hdr")).then(pl.lit(0, pl.UInt8))
        .when(m.str.contains("SUMMARY")).then(pl.lit(1, pl.UInt8))
        .when(m.str.contains("SHOW ?DOWN")).then(pl.lit(2, pl.UInt8))
        .when(m.str.contains("HOLE CARDS|PRE-FLOP|PREFLOP")).then(pl.lit(3, pl.UInt8))
        .when(m.str.contains("RIVER")).then(pl.lit(4, pl.UInt8))
        .when(m.str.contains("TURN")).then(pl.lit(5, pl.UInt8))
        .when(m.str.contains("FLOP")).then(pl.lit(6, pl.UInt8))
        .otherwise(pl.lit(7, pl.UInt8))
    )
    run_code = (
        pl.when(pl.col("is_hdr")).then(pl.lit(1, pl.Int32))
        .when(m.str.starts_with("SECOND")).then(pl.lit(2, pl.Int32))
        .when(m.str.starts_with("THIRD")).then(pl.lit(3, pl.Int32))
        .when(m.str.starts_with("FIRST")).then(pl.lit(1, pl.Int32))
    )
    # No row is dropped until the sections are known: the lines outside any
    # hand (before a file's first header, after a hand's end) are only marked
    # (``inh``), and one filter at the end keeps the hand lines. Dropped lines
    # only ever follow the kept lines of their hand number (or have none), so
    # the per-hand line index, the forward-filled sections and the hand ends
    # of the kept lines are those of the kept lines alone. The raw text stays
    # in ``L`` and is only gathered for quarantined hands.
    L = (
        L.lazy()
        .with_columns(t=pl.col("raw").str.strip_chars())
        .with_columns(is_hdr=t.str.contains(G.HEADER_RE))
        .with_columns(hid=pl.col("is_hdr").cum_sum().cast(pl.Int32))
        .with_columns(
            # (hid is a running count: sorted, which group-bys and joins can use)
            pl.col("hid").set_sorted(),
            inh=((pl.col("hid") > 0) & (pl.when(pl.col("is_hdr")).then(pl.col("fidx")).forward_fill() == pl.col("fidx")))
            .fill_null(False),
            ln=_g_index(_starts("hid")).cast(pl.Int32),
            # (nothing but cards may follow: "*** FLOP *** collected $1 from pot" is a player named "*** FLOP ***")
            is_mk=t.str.contains(r"^\*\*\* [A-Za-z0-9 '-]+ \*\*\*(?: +\[.*)?$"),
        )
        .collect()
    )
    headers_seen = int(L.get_column("is_hdr").sum())
    if headers_seen == 0:
        outside, foreign = _outside_hands(L, files)  # (no header: no line is in a hand)
        return ParsedHands(quarantine=outside, headers_seen=foreign)
    # sections as small integer codes set on header/marker rows and
    # forward-filled, then an Enum (a byte per line; comparing with a name is
    # an integer comparison); the run number likewise
    at = (L.get_column("is_hdr") | L.get_column("is_mk")).arg_true()
    codes = L.select("is_hdr", "t")[at].select(sec=sec_code, run=run_code)
    L = L.with_columns(
        pl.repeat(None, L.height, dtype=pl.UInt8, eager=True).scatter(at, codes.get_column("sec")).alias("sec"),
        pl.repeat(None, L.height, dtype=pl.Int32, eager=True).scatter(at, codes.get_column("run")).alias("run"),
    )
    L = L.lazy().with_columns(
        sec=pl.col("sec").forward_fill().replace_strict(list(range(len(_SEC_NAMES))), _SEC_NAMES, return_dtype=_SEC),
        run=pl.col("run").forward_fill(),
        blank=t == "",
    ).collect()
    # The first blank line after the summary ends the hand, unless the summary goes on after it (a file written
    # double-spaced, a blank line after every line): only the few blank summary lines look at their next line.
    cand = (L.get_column("blank") & (L.get_column("sec") == "summary")).arg_true()
    ends = pl.repeat(False, L.height, dtype=pl.Boolean, eager=True)
    if cand.len():
        next_nb = L.select(pl.when(~pl.col("blank")).then(pl.int_range(pl.len(), dtype=pl.Int64))
                           .shift(-1).backward_fill().fill_null(L.height - 1)).to_series().gather(cand)
        goes_on = (
            L.get_column("t").gather(next_nb).str.contains(_SUMMARY_GOES_ON_RE)
            & (L.get_column("hid").gather(next_nb) == L.get_column("hid").gather(cand))
            & (L.get_column("fidx").gather(next_nb) == L.get_column("fidx").gather(cand))
        )
        ends = ends.scatter(cand.filter(~goes_on), True)
    L = L.with_columns(inh=pl.col("inh") & (_g_cumsum(ends.cast(pl.Int32), _starts("hid")) == 0))
    outside, foreign = _outside_hands(L, files)

    # --- per-hand text, hash, raw --------------------------------------------------
    # blank lines are dropped once: a hand starts with its (non-blank) header,
    # and no blank line is left in a summary (the first one ended the hand)
    NB = L.lazy().filter(pl.col("inh") & ~pl.col("blank")).select(
        "hid", "fidx", "lno", "ln", "t", "sec", "run", "is_hdr", "is_mk").collect()
    L = L.select("hid", "raw", "inh")  # (kept for the raw text of quarantined hands)
    # Each hand's rows are contiguous and start with its header, so the
    # per-hand firsts are the header rows, the second line is the row after
    # the header (when it is of the same hand), and counts are differences of
    # running sums at the hands' first and last rows: no group-by but the join
    # of each hand's text.
    first = NB.get_column("is_hdr").arg_true()
    last = pl.concat([first.slice(1), pl.Series([NB.height], dtype=first.dtype)]) - 1
    zero = lambda c: pl.lit(0, pl.UInt32).alias(c)  # noqa: E731
    runs = pl.concat([pl.select(zero("summary"), zero("total"), zero("seat")), NB.select(
        summary=(pl.col("sec") == "summary").cast(pl.UInt32).cum_sum(),
        total=t.str.starts_with("Total pot").cast(pl.UInt32).cum_sum(),
        seat=((pl.col("sec") == "setup") & t.str.starts_with("Seat ")).cast(pl.UInt32).cum_sum(),
    )])  # (row i + 1: the running sums up to line i; row 0: none yet)
    before, upto = runs[first], runs[last + 1]
    nxt = first + 1
    second = NB[nxt.clip(upper_bound=NB.height - 1)].select(
        "t", same=(pl.col("hid") == NB.get_column("hid").gather(first)) & (nxt < NB.height))
    H = NB[first].select(
        "hid", "fidx", source_line="lno", t="t",
        table_t=pl.when(second.get_column("same")).then(second.get_column("t")),
        norm=NB.group_by("hid", maintain_order=True).agg(pl.col("t").str.join("\n")).get_column("t"),
        has_summary=upto.get_column("summary") > before.get_column("summary"),
        has_total=upto.get_column("total") > before.get_column("total"),
        n_seat_lines=upto.get_column("seat") - before.get_column("seat"),
    )
    # MD5 of each hand's normalised text (same digest as DuckDB's md5 of the
    # UTF-8 text): one hashlib call per hand is cheaper than a DuckDB round trip
    # "cancelled": any line of the hand matches; tested once on the hand's
    # joined lines (multi-line mode: ^ and $ at line ends; blank lines never match)
    H = H.with_columns(cancelled=pl.col("norm").str.contains("(?m)" + G.CANCELLED_RE))
    md5 = hashlib.md5
    H = H.with_columns(content_hash=pl.Series(
        # (bytes straight from the column's UTF-8 buffer: no str objects, no encode)
        [md5(b).hexdigest() for b in H.get_column("norm").cast(pl.Binary).to_list()], dtype=pl.String,
    )).drop("norm")
    H = parse_headers(H)
    H = H.with_columns(
        source_file=pl.col("fidx").replace_strict(
            list(range(len(files))), files, return_dtype=pl.String
        )
    )


    # --- classify ------------------------------------------------------------------
    # line kinds as small integer codes (cheaper to build and compare than strings)
    kind = (
        pl.when(pl.col("is_mk")).then(pl.lit(_K["marker"], pl.UInt8))
        .when(t.str.ends_with('"') & t.str.contains(' said, "', literal=True)).then(pl.lit(_K["chat"], pl.UInt8))
        .when(pl.col("second")).then(pl.lit(_K["table"], pl.UInt8))
        .when((pl.col("sec") == "setup") & t.str.starts_with("Seat ") & t.str.contains(" in chips", literal=True))
        .then(pl.lit(_K["seat"], pl.UInt8))
        .when(pl.col("sec") == "summary").then(pl.lit(_K["summary"], pl.UInt8))
        .when(t.str.starts_with("Dealt to ")).then(pl.lit(_K["dealt"], pl.UInt8))
        .when(t.str.starts_with("Uncalled bet (")).then(pl.lit(_K["uncalled"], pl.UInt8))
        .otherwise(pl.lit(_K["x"], pl.UInt8))
    )
    # one pass over the lines: classify, then split by class (order kept within each)
    # (the table line is the hand's second non-blank line: the row after its header)
    B = NB.lazy().with_columns(second=pl.col("is_hdr").shift(1, fill_value=False)).filter(~pl.col("is_hdr")).select(
        "hid", "ln", "t", "sec", "run", kind=kind).collect()
    del NB
    BK = B.partition_by("kind", as_dict=True, maintain_order=True)
    del B
    empty_b = pl.DataFrame(schema={"hid": pl.Int32, "ln": pl.Int32, "t": pl.String, "sec": _SEC, "run": pl.Int32,
                                   "kind": pl.UInt8})
    by_kind = lambda k: BK.get((_K[k],), empty_b)  # noqa: E731
    issues: list[pl.DataFrame] = []

    # seats
    S = _seat_lines(by_kind("seat"), issues)
    dup = S.filter(pl.struct("hid", "seat").is_duplicated() | pl.struct("hid", "player").is_duplicated())
    issues.append(_issue(dup, 4, "malformed hand", pl.format("duplicate seat or player: {}", pl.col("player"))))
    names = _Names(S)

    # verb lines. The name is what precedes the leftmost ": <verb>" followed by
    # a space or the line end (``G.VERB_SUFFIX_RE``). Fast path: the text is
    # cut at its first ": " and the rest tested for a verb at its start
    # (anchored, capture-free); when it has none, a later ": <verb>" may still
    # be there (a name containing ": "), and only those lines run the
    # unanchored pattern, their fields scattered back in place. Lines whose
    # name so found is not seated are tried again below with the greedy
    # pattern (names that themselves contain ": <verb>").
    # dealt
    D = by_kind("dealt").with_columns(g=t.str.extract_groups(G.DEALT_RE))
    D = D.with_columns(player=pl.col("g").struct.field("1"), cards=pl.col("g").struct.field("2"), cards2=pl.col("g").struct.field("3"))
    D = _known(D, names, "player", "known").drop("known_seat")
    # names containing " [": retry the unknown ones with a greedy name
    D_retry = D.filter(~pl.col("known")).with_columns(g=t.str.extract_groups(r"^Dealt to (.+) \[([^\]]*)\]$")).with_columns(
        player=pl.col("g").struct.field("1"), cards=pl.col("g").struct.field("2"), cards2=pl.lit(None, pl.String)
    ).drop("known")
    D = pl.concat([D.filter(pl.col("known")).drop("known"), _known(D_retry, names, "player", "known").drop("known", "known_seat")],
                  how="vertical_relaxed")
    D = _known(D, names, "player", "known")
    # greedy fallback for names containing " [": retry with the whole prefix
    # a line that starts "Dealt to " but names no seated player may be another line of a player whose name starts
    # "Dealt to" ("Dealt to: folds"): it goes on with the other lines
    D_other = D.filter(~pl.col("known") | pl.col("cards").is_null()).select(empty_b.columns)
    # (blanked cards: the player was dealt in, the cards are unknown)
    D = D.filter(pl.col("known") & pl.col("cards").is_not_null()).with_columns(cards=_cards_or_null(pl.col("cards")))

    X = by_kind("x")
    if D_other.height:
        X = pl.concat([X, D_other], how="vertical").sort("hid", "ln", maintain_order=True)
    X = X.with_columns(sp=t.str.splitn(": ", 2)).with_columns(
        player=pl.col("sp").struct.field("field_0"), rest=pl.col("sp").struct.field("field_1")).drop("sp")
    hit = X.get_column("rest").str.contains(G.VERB_AT_START_RE).fill_null(False)
    later = (~hit & X.get_column("rest").is_not_null()).arg_true()
    if later.len():
        # (a match always removes at least ": " and a verb, so a line matched
        # iff the replace shortened it)
        O = X[later].select(player=t.str.replace(G.VERB_SUFFIX_RE, ""), t="t").with_columns(
            rest=t.str.slice(pl.col("player").str.len_chars() + 2),
            hit=pl.col("player").str.len_bytes() != t.str.len_bytes())
        X = X.with_columns(X.get_column(c).scatter(later, O.get_column(c)) for c in ("player", "rest"))
        hit = hit.scatter(later, O.get_column("hit"))
    R = X.filter(~hit).drop("player", "rest")
    V = X.filter(hit)
    rest = pl.col("rest")
    # one anchored alternation (leftmost-first: longer verbs are listed first)
    V = V.with_columns(verb=rest.str.extract(G.VERB_PREFIX_RE, 1)).with_columns(tail=rest.str.slice(pl.col("verb").str.len_chars())).drop("rest")
    V = _known(V, names, "player", "known")
    # the unknown ones get the greedy pattern's fields in place (row order kept)
    slow_i = (~V.get_column("known")).arg_true()
    if slow_i.len():
        g = V.get_column("t").gather(slow_i).str.extract_groups(G.VERB_RE)
        V = V.with_columns(
            V.get_column(c).scatter(slow_i, g.struct.field(str(i))) for i, c in ((1, "player"), (2, "verb"), (3, "tail"))
        )
        # and only they are looked up again
        K = _known(V[slow_i].select("hid", "player"), names, "player", "known")
        V = V.with_columns(V.get_column(c).scatter(slow_i, K.get_column(c)) for c in ("known", "known_seat"))
    # "NAME: sits out" may come from a player not in the seat list
    V_sit = V.filter(pl.col("verb").is_in(["sits out", "is sitting out"]))
    V = V.filter(~pl.col("verb").is_in(["sits out", "is sitting out"]))
    # A verb line whose name is not seated may be another kind of line by a
    # player whose name contains ": <verb>"; it goes on to the other patterns.
    R = pl.concat([R, V.filter(~pl.col("known")).select(R.columns)], how="vertical").sort("hid", "ln")
    V = V.filter(pl.col("known"))
    nonflop = V.filter(pl.col("verb").is_in(list(_NONFLOP_VERBS)))
    issues.append(_unparsed(nonflop, " (draw/stud action)"))

    A = V.filter(pl.col("verb").is_in(list(_ACTION_CODE)) & pl.col("sec").is_in(["setup", "preflop", "flop", "turn", "river"]))
    issues.append(_unparsed(V.filter(pl.col("verb").is_in(list(_ACTION_CODE)) & ~pl.col("sec").is_in(["setup", "preflop", "flop", "turn", "river"])), " (action outside a betting street)"))
    A = A.with_columns(action=pl.col("verb").replace_strict(_ACTION_CODE))
    tail = pl.col("tail")
    is_r = pl.col("action") == "raise"
    # Most tails are plain: "", " $1.50", " $1 to $3" (raises), optionally
    # " and is all-in". Those are cut with literal splits; the others (cards,
    # caps, separators, other currencies) take the general patterns below.
    plain = tail.str.contains(G.PLAIN_ACTION_TAIL_RE) & (is_r | ~tail.str.contains(" to ", literal=True))
    A = A.with_columns(
        tail_ok=plain,
        sp=tail.str.strip_suffix(" and is all-in").str.strip_chars().str.split_exact(" to ", 1),
    ).with_columns(
        amt_s=pl.col("sp").struct.field("field_0"), to_s=pl.col("sp").struct.field("field_1"),
    ).drop("sp")
    other = (~A.get_column("tail_ok")).arg_true()
    if other.len():
        O = A[other].lazy()
        core = tail.str.replace(G.TAIL_SUFFIX_RE, "").str.strip_chars()
        O = O.with_columns(core=core).with_columns(
            amt_s=pl.when(is_r).then(pl.col("core").str.replace(r" to .*$", "")).otherwise(pl.col("core")),
            to_s=pl.when(is_r & pl.col("core").str.contains(" to ", literal=True))
            .then(pl.col("core").str.replace(r"^.* to ", "")),
            tail_ok=tail.str.contains(G.ACTION_TAIL_RE),
        ).collect()
        A = A.with_columns(A.get_column(c).scatter(other, O.get_column(c)) for c in ("tail_ok", "amt_s", "to_s"))
    A = A.lazy().with_columns(
        is_all_in=tail.str.contains(" and is all-in", literal=True),
        amt=G.money_cents(pl.col("amt_s")),
        to=G.money_cents(pl.col("to_s")),
    ).collect().drop("amt_s", "to_s")
    a = pl.col("action")
    shape_ok = (
        pl.when(a.is_in(["fold", "check"])).then(pl.col("amt").is_null() & pl.col("tail_ok"))
        .when(a == "raise").then(pl.col("amt").is_not_null() & pl.col("to").is_not_null())
        .otherwise(pl.col("amt").is_not_null() & pl.col("to").is_null())
    ) & pl.col("tail_ok")
    A = A.with_columns(shape_ok=shape_ok.fill_null(False))
    issues.append(_unparsed(A.filter(~pl.col("shape_ok"))))
    A = A.filter(pl.col("shape_ok")).drop("tail_ok", "shape_ok")

    # showdown lines
    SH = V.filter(pl.col("verb").is_in(["shows", "mucks", "mucks hand", "doesn't show hand", "doesn't show"]))
    SH = SH.with_columns(cards=_cards_or_null(pl.col("tail").str.extract(r"^ \[([^\]]*)\]", 1)))

    # uncalled
    U = by_kind("uncalled").with_columns(g=t.str.extract_groups(G.UNCALLED_RE))
    U = U.with_columns(amt=G.money_cents(pl.col("g").struct.field("1")), player=pl.col("g").struct.field("2"))
    U = _known(U, names, "player", "known")
    issues.append(_unparsed(U.filter(~pl.col("known") | pl.col("amt").is_null())))
    U = U.filter(pl.col("known") & pl.col("amt").is_not_null())

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
    rest_t = R.get_column("t")
    rest_i = pl.Series("i", range(R.height), dtype=pl.Int64)
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
    R = R.with_columns(rkind=rk)
    R_ev = []
    for i, (pat, evname) in enumerate(G.EVENT_PATTERNS):
        sub = R.filter(pl.col("rkind") == f"ev{i}")
        if sub.height:
            g = sub.with_columns(gg=t.str.extract_groups(pat))
            fields = g.schema["gg"].fields
            R_ev.append(g.select(
                "hid", "ln", ev_name=pl.col("gg").struct.field("1"), ev_kind=pl.lit(evname),
                ev_detail=pl.col("gg").struct.field("2") if len(fields) > 1 else pl.lit(None, pl.String),
            ))
    R_ev = pl.concat(R_ev, how="vertical") if R_ev else pl.DataFrame(
        schema={"hid": pl.Int32, "ln": pl.Int32, "ev_name": pl.String, "ev_kind": pl.String, "ev_detail": pl.String})
    R = R.with_columns(rkind=pl.when(pl.col("rkind").str.starts_with("ev")).then(pl.lit("event")).otherwise(pl.col("rkind")))
    ext = {"collected": ("coll", G.COLLECTED_RE), "cash_out": ("cash", G.CASHOUT_RE), "finish": ("fin", G.FINISH_RE),
           "win": ("win", G.WINS_TOURNEY_RE), "bounty": ("bty", G.BOUNTY_RE), "split_bounty": ("sbty", G.SPLIT_BOUNTY_RE)}
    sub = {k: R.filter(pl.col("rkind") == k).with_columns(t.str.extract_groups(pat).alias(col)) for k, (col, pat) in ext.items()}
    f = lambda c, i: pl.col(c).struct.field(str(i))  # noqa: E731
    UNK = _unknown_lines(R.filter(pl.col("rkind") == "unknown"), names, issues)

    C = sub["collected"].select(
        "hid", "ln", "run", "t", player=f("coll", 1), amt=G.money_cents(f("coll", 2)),
        pot=pl.when(f("coll", 3).is_not_null()).then(pl.lit(0, pl.Int32))
        .when(f("coll", 4).is_not_null()).then(f("coll", 4).cast(pl.Int32, strict=False))
        .when(pl.col("t").str.contains(" from side pot", literal=True)).then(pl.lit(1, pl.Int32))
        .otherwise(pl.lit(0, pl.Int32)),
        kind=pl.lit("pot"),
    )
    CO = sub["cash_out"].select(
        "hid", "ln", "run", "t", player=f("cash", 1), amt=G.money_cents(f("cash", 2)),
        fee=G.money_cents(f("cash", 3)), pot=pl.lit(0, pl.Int32), kind=pl.lit("cash_out"),
    )
    CC = pl.concat([C, CO.drop("fee")], how="vertical")
    CC = _known(CC, names, "player", "known")
    cc_bad = CC.filter(~pl.col("known"))
    if cc_bad.height:
        issues.append(_unparsed(cc_bad))
    CC = CC.filter(pl.col("known"))

    FIN = pl.concat([
        sub["finish"].select(
            "hid", player=f("fin", 1), place=f("fin", 2).cast(pl.Int32, strict=False), prize=G.money_cents(f("fin", 3))),
        sub["win"].select(
            "hid", player=f("win", 1), place=pl.lit(1, pl.Int32), prize=G.money_cents(f("win", 2))),
    ], how="vertical")
    BTY = sub["bounty"].select(
        "hid", winner=f("bty", 1), amount=G.money_cents(f("bty", 2)), eliminated=f("bty", 3),
        increase=G.money_cents(f("bty", 4)), new_bounty=G.money_cents(f("bty", 5)),
    )
    # "A, B split the $50 bounty for eliminating C": one row per winner with an
    # equal share (cents; the remainder goes to the first named winner).
    SB = sub["split_bounty"].select(
        "hid", winner=f("sbty", 1).str.split(", "), total=G.money_cents(f("sbty", 2)), eliminated=f("sbty", 3),
    ).with_columns(nw=pl.col("winner").list.len()).explode("winner").with_columns(
        i=pl.int_range(pl.len()).over("hid", "eliminated")
    ).select(
        "hid", "winner",
        amount=(pl.col("total") // pl.col("nw")) + pl.when(pl.col("i") == 0).then(pl.col("total") % pl.col("nw")).otherwise(0),
        eliminated="eliminated", increase=pl.lit(None, pl.Int64), new_bounty=pl.lit(None, pl.Int64),
    )
    BTY = pl.concat([BTY, SB], how="vertical")

    # table events
    # chat: the speaker is the shortest prefix before ' said, "' unless only the
    # longest one is a seated name (a name that itself contains ' said, "')
    chat = by_kind("chat").with_columns(
        g=t.str.extract_groups(G.CHAT_RE), g2=t.str.extract_groups(r'^(.+) said, "(.*)"$'))
    chat = chat.with_columns(player=pl.col("g").struct.field("1"))
    chat = _known(chat, names, "player", "k1").with_columns(player=pl.col("g2").struct.field("1"))
    chat = _known(chat, names, "player", "k2")
    use2 = ~pl.col("k1") & pl.col("k2")
    chat = chat.select(
        "hid", "ln",
        player=pl.when(use2).then(pl.col("g2").struct.field("1")).otherwise(pl.col("g").struct.field("1")),
        event=pl.lit("chat"),
        detail=pl.when(use2).then(pl.col("g2").struct.field("2")).otherwise(pl.col("g").struct.field("2")),
    )
    EV = pl.concat([
        chat,
        R_ev.select("hid", "ln", player=pl.col("ev_name"), event=pl.col("ev_kind"), detail=pl.col("ev_detail")),
        R.filter(pl.col("rkind") == "neutral").select("hid", "ln", player=pl.lit(None, pl.String), event=pl.lit("other"), detail=pl.col("t")),
        sub["cash_out"].select("hid", "ln", player=f("cash", 1), event=pl.lit("cashed_out"), detail=f("cash", 2)),
        V_sit.select("hid", "ln", "player", event=pl.lit("sitting_out"), detail=pl.lit(None, pl.String)),
    ], how="vertical")

    # --- summary -----------------------------------------------------------------------
    SM = by_kind("summary")
    TOT = SM.filter(t.str.starts_with("Total pot")).with_columns(g=t.str.extract_groups(G.TOTAL_RE))
    TOT = TOT.select(
        "hid",
        total=G.money_cents(pl.col("g").struct.field("1")),
        rake=G.money_cents(t.str.extract(r"Rake (" + G.AMT + ")", 1)).fill_null(0),
        mid=t,
    ).unique("hid", keep="first", maintain_order=True)
    TOT = TOT.with_columns(
        main=G.money_cents(pl.col("mid").str.extract(r"Main pot (" + G.AMT + ")", 1)),
        stp=G.money_cents(pl.col("mid").str.extract(r"STP (" + G.AMT + ")", 1)).fill_null(0),
        sides=pl.col("mid").str.extract_all(r"Side pot(?:-\d+)? " + G.AMT),
    )
    SIDES = TOT.select("hid", "sides").explode("sides").drop_nulls("sides").with_columns(
        pot=pl.col("sides").str.extract(r"Side pot-(\d+)", 1).cast(pl.Int32, strict=False),
        amt=G.money_cents(pl.col("sides").str.extract(r"Side pot(?:-\d+)? (" + G.AMT + ")", 1)),
    )
    SIDES = SIDES.with_columns(pot=pl.coalesce(pl.col("pot"), pl.int_range(1, pl.len() + 1).over("hid").cast(pl.Int32)))
    side_sum = SIDES.group_by("hid").agg(side_sum=pl.col("amt").sum())
    TOT = TOT.join(side_sum, on="hid", how="left").with_columns(pl.col("side_sum").fill_null(0))
    issues.append(_issue(TOT.filter(pl.col("total").is_null()), 5, "unparsed line",
                         pl.format("{} (no total or an amount out of range)", pl.col("mid"))))
    POTS = pl.concat([
        TOT.select("hid", pot=pl.lit(0, pl.Int32), amt=pl.coalesce(pl.col("main"), pl.col("total"))),
        SIDES.select("hid", "pot", "amt"),
    ], how="vertical")

    BOARD = SM.filter(t.str.contains(G.BOARD_RE)).with_columns(g=t.str.extract_groups(G.BOARD_RE)).select(
        "hid",
        run=pl.when(pl.col("g").struct.field("1") == "SECOND").then(pl.lit(2, pl.Int32)).otherwise(pl.lit(1, pl.Int32)),
        cards=pl.col("g").struct.field("2").str.strip_chars().str.split(" "),
    ).unique(["hid", "run"], keep="first", maintain_order=True)

    # summary seat lines, anchored on the seat's own name
    SS = SM.filter(t.str.starts_with("Seat ")).with_columns(seat=t.str.extract(r"^Seat (\d+): ", 1).cast(pl.Int32, strict=False))
    SS = SS.join(S.select("hid", "seat", "player"), on=["hid", "seat"], how="left", maintain_order="left")
    prefix = pl.format("Seat {}: {}", pl.col("seat"), pl.col("player"))
    SS = SS.with_columns(ok=t.str.starts_with(prefix).fill_null(False))
    SS = SS.with_columns(rest=pl.when(pl.col("ok")).then(t.str.slice(prefix.str.len_chars())))
    issues.append(_unparsed(SS.filter(~pl.col("ok")), " (summary seat line does not match the seat list)"))
    SS = SS.filter(pl.col("ok")).with_columns(
        cards=_cards_or_null(pl.col("rest").str.extract(r"(?:showed|mucked) \[([^\]]*)\]", 1)),
        not_awarded=G.money_cents(pl.col("rest").str.extract(r"won \((" + G.AMT + r")\)[^(]*\(pot not awarded as player cashed out\)", 1)),
    )
    SM_other = SM.filter(
        ~t.str.starts_with("Seat ") & ~t.str.starts_with("Total pot") & ~t.str.contains(G.BOARD_RE)
        & ~t.str.contains(G.NEUTRAL_RE)
    )
    UNK = pl.concat([UNK, _unknown_lines(SM_other, names, issues)], how="vertical")
    hand_run_twice = SM.filter(t.str.contains("run twice", literal=True)).select("hid").unique().with_columns(rit=pl.lit(True))

    # table line problems, markers we do not know
    MK = by_kind("marker").filter(pl.col("sec") == "other")
    issues.append(_unparsed(MK, " (street of a non-flop game)"))

    # --- hand-level issues -----------------------------------------------------------
    issues.append(_issue(H.filter(pl.col("unsupported")), 0, "unsupported game", pl.col("pre")))
    issues.append(_issue(H.filter(pl.col("cancelled")), 1, "hand cancelled", pl.lit("the hand text says it was cancelled")))
    issues.append(_issue(H.filter(pl.col("header_error").is_not_null()), 2, "malformed header", pl.col("header_error")))
    trunc = H.filter(~pl.col("has_summary") | ~pl.col("has_total") | (pl.col("n_seat_lines") == 0))
    issues.append(_issue(trunc, 3, "truncated hand", pl.when(~pl.col("has_summary")).then(pl.lit("no *** SUMMARY *** section"))
                         .when(~pl.col("has_total")).then(pl.lit("no 'Total pot' line")).otherwise(pl.lit("no seat lines"))))

    # --- actions: running values ---------------------------------------------------
    A = A.with_columns(street=pl.when(pl.col("sec") == "setup").then(pl.lit("preflop")).otherwise(pl.col("sec").cast(pl.String)))
    # A "posts small blind" after the big blind was posted is a returning
    # player's dead small blind: it goes to the pot but is not a live bet.
    st_h = _starts("hid")
    bb_before = _g_shift(_g_cumsum((pl.col("action") == "post_bb").cast(pl.Int32), st_h), st_h, 0)
    A = A.with_columns(action=pl.when((pl.col("action") == "post_sb") & (bb_before > 0))
                       .then(pl.lit("post_dead")).otherwise(pl.col("action")))
    # Fixed limit headers state the bets ("$1/$2"): the big blind is the small
    # bet, the small blind what the hand's small blind posted (else half).
    H = H.with_columns(
        big_blind=pl.when(pl.col("limit_type") == "fixed_limit").then(pl.col("small_blind")).otherwise(pl.col("big_blind")),
        small_blind_hdr=pl.col("small_blind"),
    )
    A = A.join(H.select("hid", "big_blind"), on="hid", how="left", maintain_order="left")
    a = pl.col("action")
    live_nonraise = (
        pl.when(a.is_in(["post_ante", "post_dead", "fold", "check", "raise"])).then(pl.lit(0, pl.Int64))
        .when(a == "post_sb_bb").then(pl.min_horizontal(pl.col("amt"), pl.coalesce(pl.col("big_blind"), pl.col("amt"))))
        .otherwise(pl.col("amt").fill_null(0))
    )
    A = A.with_columns(
        live_nr=live_nonraise,
        is_raise=a == "raise",
        seq=_g_index(_starts("hid")).cast(pl.Int32),
    )
    # window keys as single integers: (hand, street) and (hand, street, seat)
    street_i = pl.col("street").replace_strict({"preflop": 0, "flop": 1, "turn": 2, "river": 3}, return_dtype=pl.Int64)
    A = A.with_columns(
        k_hs=pl.col("hid").cast(pl.Int64) * 4 + street_i,
    ).with_columns(k_hsp=pl.col("k_hs") * 1024 + pl.col("known_seat").cast(pl.Int64))
    # per player and street: live level after each line = last "raise to" + later live chips
    P = A.select(
        row=pl.int_range(pl.len(), dtype=pl.Int64), k="k_hsp", is_raise="is_raise",
        to=pl.col("to").fill_null(0), live_nr="live_nr",
    ).sort("k", maintain_order=True)
    st = _starts("k")
    P = P.with_columns(
        base=pl.when(pl.col("is_raise")).then(pl.col("to")).when(st).then(pl.lit(0, pl.Int64)).forward_fill(),
        run_live=_g_cumsum(pl.col("live_nr"), st | pl.col("is_raise")),
    ).with_columns(level_after=pl.col("base") + pl.col("run_live"))
    P = P.with_columns(level_before=_g_shift(pl.col("level_after"), st, 0)).sort("row")
    A = A.with_columns(level_after=P["level_after"], level_before=P["level_before"])
    st_street = _starts("k_hs")
    A = A.with_columns(
        amount=pl.when(pl.col("is_raise")).then(pl.col("to") - pl.col("level_before")).otherwise(pl.col("amt").fill_null(0)),
        street_max_before=_g_shift(_g_cummax_nonneg(pl.col("level_after"), st_street), st_street, 0),
    )
    A = A.with_columns(
        # preflop a player must call at least the big blind, even when the big
        # blind itself was posted short (all-in)
        to_call=pl.when(a.str.starts_with("post")).then(pl.lit(0, pl.Int64))
        .otherwise(pl.max_horizontal(
            pl.when(pl.col("street") == "preflop")
            .then(pl.max_horizontal(pl.col("street_max_before"), pl.col("big_blind").fill_null(0)))
            .otherwise(pl.col("street_max_before"))
            - pl.col("level_before"),
            pl.lit(0, pl.Int64))),
        pot_before=_g_shift(_g_cumsum(pl.col("amount"), _starts("hid")), _starts("hid"), 0),
        folds_before=_g_shift(_g_cumsum((a == "fold").cast(pl.Int32), _starts("hid")), _starts("hid"), 0),
    )
    bad_raise = A.filter(pl.col("amount") < 0)
    issues.append(_unparsed(bad_raise, " (raise to less than already committed)"))
    issues.append(_impossible_actions(A))

    # --- seats -----------------------------------------------------------------------
    # keyed by the seat each name was matched to (integers, not name strings);
    # a name seated twice makes the hand malformed (quarantined) anyway
    # one aggregate over the lines that name a seat, joined to the seats once
    # on a single integer key (hand << 32 | seat)
    z = pl.lit(0, pl.Int64)
    seat_key = lambda seat: (pl.col("hid").cast(pl.Int64) * (1 << 32) + pl.col(seat).cast(pl.Int64)).alias("_k")  # noqa: E731
    per_seat = pl.concat([
        A.select(seat_key("known_seat"), bet=pl.col("amount"), returned=z, collected=z, acted=pl.lit(True)),
        D.select(seat_key("known_seat"), bet=z, returned=z, collected=z, acted=pl.lit(True)),
        SH.select(seat_key("known_seat"), bet=z, returned=z, collected=z, acted=pl.lit(True)),
        U.select(seat_key("known_seat"), bet=z, returned=pl.col("amt"), collected=z, acted=pl.lit(False)),
        CC.select(seat_key("known_seat"), bet=z, returned=z, collected=pl.col("amt"), acted=pl.lit(False)),
    ], how="vertical").group_by("_k").agg(pl.col("bet", "returned", "collected").sum(), pl.col("acted").any())
    S = (
        S.with_columns(seat_key("seat")).join(per_seat, on="_k", how="left", maintain_order="left").drop("_k")
        .with_columns(
            pl.col("bet").fill_null(0), pl.col("returned").fill_null(0), pl.col("collected").fill_null(0),
            # dealt in = has an action, a Dealt to or a showdown line; a tournament
            # player marked "is sitting out" is still dealt in (posts and is folded)
            dealt_in=pl.col("acted").fill_null(False),
        )
        .with_columns(put_in=pl.col("bet") - pl.col("returned"))
        .with_columns(net=pl.col("collected") - pl.col("put_in"), stack_end=pl.col("stack_start") - pl.col("put_in") + pl.col("collected"))
    )
    # Old clients (2007-era) wrote no "Uncalled bet" line: the pot total then
    # falls short of what was put in by exactly the top contributor's excess over
    # the second one, which was returned. Only that exact case is repaired.
    tot_for_implicit = TOT.select("hid", "total", "stp")
    top = (
        S.with_columns(r=pl.col("put_in").rank("ordinal", descending=True).over("hid"))
        .group_by("hid").agg(
            top_player=pl.col("player").filter(pl.col("r") == 1).first(),
            top_put=pl.col("put_in").filter(pl.col("r") == 1).first(),
            second_put=pl.col("put_in").filter(pl.col("r") == 2).first().fill_null(0),
            sum_put0=pl.col("put_in").sum(),
        )
        .join(tot_for_implicit, on="hid", how="inner")
        .with_columns(excess=pl.col("top_put") - pl.col("second_put"))
        .filter((pl.col("excess") > 0) & (pl.col("sum_put0") + pl.col("stp") - pl.col("total") == pl.col("excess")))
        .join(U.select("hid").unique(), on="hid", how="anti")
        .select("hid", player=pl.col("top_player"), implicit=pl.col("excess"))
    )
    S = (
        S.join(top, on=["hid", "player"], how="left", maintain_order="left")
        .with_columns(returned=pl.col("returned") + pl.col("implicit").fill_null(0))
        .with_columns(put_in=pl.col("bet") - pl.col("returned"))
        .with_columns(net=pl.col("collected") - pl.col("put_in"), stack_end=pl.col("stack_start") - pl.col("put_in") + pl.col("collected"))
        .drop("implicit")
    )
    S = S.join(H.select("hid", "button_seat", "max_seats"), on="hid", how="left", maintain_order="left")
    ring = pl.max_horizontal(pl.col("max_seats").fill_null(10), pl.col("seat").max().over("hid"), pl.lit(10))
    dist = (pl.col("seat") - pl.col("button_seat").fill_null(0)) % ring
    S = S.with_columns(okey=pl.when(pl.col("dealt_in")).then(pl.when(dist == 0).then(ring).otherwise(dist)))
    S = S.with_columns(
        k=(pl.col("okey").rank("ordinal").over("hid") - 1).cast(pl.Int32),
        n=pl.col("dealt_in").sum().over("hid").cast(pl.Int32),
    )
    k, n = pl.col("k"), pl.col("n")
    from_btn = n - 1 - k
    position = (
        pl.when(~pl.col("dealt_in")).then(None)
        .when(n == 1).then(pl.lit("BTN"))
        .when(n == 2).then(pl.when(k == 1).then(pl.lit("BTN")).otherwise(pl.lit("BB")))
        .when(from_btn == 0).then(pl.lit("BTN"))
        .when(k == 0).then(pl.lit("SB"))
        .when(k == 1).then(pl.lit("BB"))
        .when(from_btn == 1).then(pl.lit("CO"))
        .when(from_btn == 2).then(pl.lit("HJ"))
        .when(from_btn == 3).then(pl.lit("LJ"))
        .when(k == 2).then(pl.lit("UTG"))
        .otherwise(pl.format("UTG{}", k - 2))
    )
    S = S.with_columns(position=position)

    # hero / all cards known
    dealt_players = D.select("hid", "player").unique()
    dstat = dealt_players.group_by("hid").agg(n_dealt=pl.len(), hero1=pl.col("player").first())
    nstat = S.group_by("hid").agg(n_players=pl.col("dealt_in").sum().cast(pl.Int32),
                                  min_stack_end=pl.col("stack_end").min(), min_put=pl.col("put_in").min(),
                                  sum_put=pl.col("put_in").sum())
    dealt_in_with_cards = S.filter(pl.col("dealt_in")).join(
        D.filter(pl.col("cards").is_not_null()).select("hid", seat=pl.col("known_seat")), on=["hid", "seat"], how="semi").group_by("hid").agg(n_known=pl.len())
    H = (
        H.join(dstat, on="hid", how="left").join(nstat, on="hid", how="left")
        .join(dealt_in_with_cards, on="hid", how="left").join(TOT, on="hid", how="left")
        .join(hand_run_twice, on="hid", how="left")
        .join(A.filter(a == "post_ante").group_by("hid").agg(ante_posted=pl.col("amount").max()), on="hid", how="left")
        .join(A.filter((a == "post_sb") & ~pl.col("is_all_in")).group_by("hid").agg(sb_posted=pl.col("amount").max()),
              on="hid", how="left")
        .join(CC.filter(pl.col("kind") == "pot").group_by("hid").agg(coll_pot=pl.col("amt").sum()), on="hid", how="left")
        .join(SS.group_by("hid").agg(not_awarded=pl.col("not_awarded").sum()), on="hid", how="left")
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
    rit2 = BOARD.filter(pl.col("run") == 2).select("hid").unique().with_columns(rit2=pl.lit(True))
    H = H.join(rit2, on="hid", how="left").with_columns(run_it_twice=pl.col("run_it_twice") | pl.col("rit2").fill_null(False))

    # --- balance -------------------------------------------------------------------------
    bal_checked = H.filter(pl.col("total").is_not_null())
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
        CC.filter(pl.col("kind") == "pot").group_by("hid", "pot").agg(got=pl.col("amt").sum())
        .join(POTS.join(TOT.filter(pl.col("main").is_not_null()).select("hid"), on="hid", how="semi"),
              on=["hid", "pot"], how="inner")
        .filter(pl.col("got") > pl.col("amt"))
    )
    over_paid = H.join(per_pot.select("hid").unique(), on="hid", how="semi")
    issues.append(_issue(over_paid, 6, "unbalanced", pl.lit("a pot paid out more than the summary states it held")))
    fmt = lambda c: G.cents_to_decimal(pl.col(c)).cast(pl.String).fill_null("-")  # noqa: E731  (display only)
    issues.append(_issue(unbalanced, 6, "unbalanced", pl.format(
        "put_in {} + STP {} vs total pot {}; collected {} + rake {} + not awarded {}; main {} + sides {}; min stack_end {}; min put_in {}{}",
        fmt("sum_put"), fmt("stp"), fmt("total"), fmt("coll_pot"), fmt("rake"), fmt("not_awarded"),
        fmt("main"), fmt("side_sum"), fmt("min_stack_end"), fmt("min_put"), _LAYOUT_NET_OF_RAKE)))

    # --- decide --------------------------------------------------------------------------
    ISS = pl.concat([i for i in issues if i.height], how="vertical") if any(i.height for i in issues) else pl.DataFrame(schema={"hid": pl.Int32, "prio": pl.Int32, "reason": pl.String, "detail": pl.String})
    # a hand with several issues reports the most basic (lowest prio), and among equals the first found (stable)
    ISS = ISS.with_columns(pl.col("prio").cast(pl.Int32)).sort(["hid", "prio"], maintain_order=True).unique("hid", keep="first", maintain_order=True)
    bad_hids = ISS.select("hid")
    raw = L.filter(pl.col("inh") & pl.col("hid").is_in(bad_hids.get_column("hid").implode())).group_by("hid", maintain_order=True).agg(
        raw=pl.col("raw").str.join("\n"))
    Q = (
        ISS.join(H.select("hid", "source_file", "source_line", "hand_id"), on="hid", how="left")
        .join(raw, on="hid", how="left")
        .select(
            "source_file", position=pl.col("source_line"), input_kind=pl.lit("hand"), hand_id="hand_id",
            reason="reason", detail="detail", raw=pl.col("raw").str.strip_chars_end(),
        )
    )
    Q = _as_quarantine(Q)

    def good(df: pl.DataFrame) -> pl.DataFrame:
        return df.join(bad_hids, on="hid", how="anti")

    # hids are 1..N (a running count of headers, each of which has a row in H):
    # in H sorted by hid a hand's row is hid - 1, so the kept hands and their
    # values reach the line tables by a gather instead of a join
    HS = H.sort("hid")
    if HS.height and (HS.item(0, "hid") != 1 or HS.item(-1, "hid") != HS.height):
        raise AssertionError("hand numbers are not 1..N")
    good_by_hid = ~HS.get_column("hid").is_in(bad_hids.get_column("hid").implode())

    def with_hand(df: pl.DataFrame, *cols: str) -> pl.DataFrame:
        """The rows of kept hands, with the hand's ``cols`` (default: hand_id) added."""
        i = df.get_column("hid").cast(pl.Int64) - 1
        keep = good_by_hid.gather(i)
        i = i.filter(keep)
        return df.filter(keep).with_columns(HS.get_column(c).gather(i) for c in (cols or ("hand_id",)))

    H = good(H)
    ids = H.select("hid", "hand_id")

    hands = H.with_columns(
        site=pl.lit("PokerStars"), day=pl.col("started_at").dt.date(), total_pot=pl.col("total"),
        *_dec(["small_blind", "big_blind"]),
    ).with_columns(*_dec(["total_pot", "rake", "ante"]))
    tables: dict[str, pl.DataFrame] = {}
    tables["hands"] = _finish(hands, "hands")

    # (only the columns the tables need are filtered and carried)
    seat_cols = ["hid", "seat", "player", "stack_start", "bounty", "sitting_out", "dealt_in", "position", "put_in",
                 "returned", "collected", "net", "stack_end"]
    seats = with_hand(S.select(seat_cols), "hand_id", "hero").with_columns(
        is_hero=(pl.col("player") == pl.col("hero")).fill_null(False),
        *_dec(["stack_start", "bounty", "put_in", "returned", "collected", "net", "stack_end"]),
    )
    tables["seats"] = _finish(seats, "seats")

    act_cols = ["hid", "seq", "street", "player", "action", "amount", "is_raise", "to", "is_all_in", "pot_before",
                "to_call", "folds_before"]
    acts = with_hand(A.select(act_cols), "hand_id", "n_players").rename({"n_players": "n"})
    acts = acts.with_columns(
        raise_to=pl.when(pl.col("is_raise")).then(pl.col("to")),
        n_active=(pl.col("n") - pl.col("folds_before")).cast(pl.Int32),
    ).with_columns(*_dec(["amount", "raise_to", "pot_before", "to_call"]))
    tables["actions"] = _finish(acts, "actions")

    shown = pl.concat([
        SH.filter(pl.col("cards").is_not_null()).select("hid", "player", "cards", "ln"),
        SS.filter(pl.col("cards").is_not_null()).select("hid", "player", "cards", "ln"),
    ], how="vertical").with_columns(source=pl.lit("shown"), pri=pl.lit(1))
    dealt = D.filter(pl.col("cards").is_not_null()).select("hid", "player", "cards", "ln").with_columns(
        source=pl.lit("dealt"), pri=pl.lit(0))
    HC = pl.concat([dealt, shown], how="vertical").with_columns(cards=pl.col("cards").str.strip_chars().str.split(" "))
    HC = HC.with_columns(nc=pl.col("cards").list.len()).sort(["hid", "player", "pri", "nc"], descending=[False, False, False, True])
    HC = HC.unique(["hid", "player"], keep="first", maintain_order=True)
    tables["hole_cards"] = _finish(with_hand(HC), "hole_cards")
    tables["boards"] = _finish(with_hand(BOARD), "boards")
    tables["pots"] = _finish(with_hand(POTS).with_columns(*_dec(["amt"])).rename({"amt": "amount"}), "pots")
    colls = with_hand(CC).with_columns(*_dec(["amt"])).rename({"amt": "amount"})
    tables["collections"] = _finish(colls, "collections")
    tables["table_events"] = _finish(with_hand(EV.sort(["hid", "ln"])).rename({"ln": "line"}), "table_events")
    tables["unknown_lines"] = _finish(with_hand(UNK.sort(["hid", "ln"])).rename({"ln": "line", "t": "text"}),
                                      "unknown_lines")

    tid = H.select("hid", "tournament_id").filter(pl.col("tournament_id").is_not_null())
    fin = FIN.join(tid, on="hid", how="inner").join(ids, on="hid", how="inner").with_columns(*_dec(["prize"]))
    tables["tournament_finishes"] = _finish(fin, "tournament_finishes")
    bty = BTY.join(tid, on="hid", how="inner").join(ids, on="hid", how="inner").with_columns(*_dec(["amount", "increase", "new_bounty"]))
    tables["bounties"] = _finish(bty, "bounties")

    seat_bounty = S.filter(pl.col("bounty").is_not_null()).select("hid").unique()
    TT = H.filter(pl.col("is_tournament")).with_columns(
        has_seat_bounty=pl.col("hid").is_in(seat_bounty.get_column("hid").implode()),
        has_pko=pl.col("hid").is_in(BTY.filter(pl.col("increase").is_not_null()).get_column("hid").implode()),
        has_ko=pl.col("hid").is_in(BTY.get_column("hid").implode()),
    )
    tours = TT.group_by("tournament_id", maintain_order=True).agg(
        buy_in=pl.col("t_buy_in").first(), bounty=pl.col("t_bounty").first(), fee=pl.col("t_fee").first(),
        currency=pl.col("t_currency").first(), game=pl.col("game").first(), limit_type=pl.col("limit_type").first(),
        first_hand_at=pl.col("started_at").min(), last_hand_at=pl.col("started_at").max(),
        pko=pl.col("has_pko").any(), ko=(pl.col("has_ko") | pl.col("has_seat_bounty")).any(),
    ).with_columns(
        bounty_kind=pl.when(pl.col("pko")).then(pl.lit("progressive"))
        .when(pl.col("ko") | (pl.col("bounty").fill_null(0) > 0)).then(pl.lit("knockout"))
        .otherwise(pl.lit("none")),
        *_dec(["buy_in", "bounty", "fee"]),
    )
    tables["tournaments"] = _finish(tours, "tournaments")
    Q = pl.concat([Q, outside], how="vertical") if outside.height else Q
    return ParsedHands(tables=tables, quarantine=Q, headers_seen=headers_seen + foreign)
