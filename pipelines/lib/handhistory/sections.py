"""The parser's first stage: lines -> hands. Headers number the hands, section markers give each line its
street, the summary's end ends the hand; each hand's row (header fields, text hash); the hand lines
classified into kinds; the text outside every hand."""
from __future__ import annotations

import hashlib

import polars as pl

from . import lines as G
from .frames import CLASSED_LINE_SCHEMA, KIND, SECTION, SECTION_NAMES, g_cumsum, g_index, starts
from .header import GAME_RE, parse_headers
from .names import Names, chat_speakers
from .tables import QUARANTINE_SCHEMA, as_quarantine, empty

SUMMARY_GOES_ON_RE = r"^(?:Total pot|Board \[|Seat \d+: |Hand was run|(?:FIRST|SECOND|THIRD) Board \[)"
# Hand headers of other rooms that write PokerStars' layout ("MPLPoker Hand #4227871731: ...", "Run It Once Poker
# Hand #30702949: ..."): recognised so that their hands are quarantined one by one as from an unsupported site.
FOREIGN_HEADER_RE = r"^([^\s:#][^:#]{0,40}?) (?:Hand|Game) #(\d+):"
# the most raw text one quarantine row keeps of input with no natural bound (text outside hands, a broken CSV row)
QUARANTINE_RAW_CHARS = 10_000


def outside_hands(lines: pl.DataFrame, files: list[str]) -> tuple[pl.DataFrame, int]:
    """The non-blank text outside every PokerStars hand, as quarantine rows; and how many foreign hands it holds.

    Lines before a file's first hand, or after a hand's summary and a blank line, are no part of any hand. They
    are kept, never dropped in silence: one row per block of lines between blank lines, at the block's first
    line. A block that starts with another room's hand header is that hand (input kind ``hand``, reason
    ``unsupported site``); any other block is ``text outside any hand`` (input kind ``text``), its raw text cut
    at ``QUARANTINE_RAW_CHARS`` characters."""
    t = pl.col("t")
    outside = lines.lazy().filter(~pl.col("inh")).select("fidx", "lno", "raw", "t").collect()
    if outside.height == 0 or outside.get_column("t").str.len_bytes().max() == 0:
        return empty(QUARANTINE_SCHEMA), 0
    blank = t == ""
    blocks = outside.lazy().with_columns(
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
    rows = blocks.select(
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
    return as_quarantine(rows), int(blocks.get_column("hand_id").is_not_null().sum())


def lines_frame(texts: list[str], files: list[str], line_offsets: list[int] | None = None) -> pl.DataFrame:
    """One row per line of every text: fidx, lno (1-based line in its file), raw.

    ``line_offsets`` (optional) gives, per text, how many lines of its file come
    before it (a large file parsed in pieces)."""
    offsets = line_offsets if line_offsets is not None else [0] * len(texts)
    df = pl.DataFrame({
        "fidx": pl.Series(range(len(texts)), dtype=pl.Int32), "raw": texts,
        "off": pl.Series(offsets, dtype=pl.Int32),
    })
    df = df.with_columns(pl.col("raw").str.split("\n")).explode("raw")
    return df.with_columns(lno=(g_index(starts("fidx")) + 1 + pl.col("off")).cast(pl.Int32)).drop("off")


def mark_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` (:func:`lines_frame`) with t (stripped text), is_hdr, hid (hand number), inh (in a hand),
    ln (line in its hand) and is_mk (a section marker)."""
    t = pl.col("t")
    # No row is dropped until the sections are known: the lines outside any
    # hand (before a file's first header, after a hand's end) are only marked
    # (``inh``), and one filter at the end keeps the hand lines. Dropped lines
    # only ever follow the kept lines of their hand number (or have none), so
    # the per-hand line index, the forward-filled sections and the hand ends
    # of the kept lines are those of the kept lines alone. The raw text stays
    # in ``lines`` and is only gathered for quarantined hands.
    lines = _unglue(lines).with_columns(t=pl.col("raw").str.strip_chars())
    lines = _headers(lines)
    lines = (
        lines.lazy()
        .with_columns(hid=pl.col("is_hdr").cum_sum().cast(pl.Int32))
        .with_columns(
            # (hid is a running count: sorted, which group-bys and joins can use)
            pl.col("hid").set_sorted(),
            inh=((pl.col("hid") > 0) & (pl.when(pl.col("is_hdr")).then(pl.col("fidx")).forward_fill() == pl.col("fidx")))
            .fill_null(False),
            ln=g_index(starts("hid")).cast(pl.Int32),
            # (nothing but cards may follow: "*** FLOP *** collected $1 from pot" is a player named "*** FLOP ***")
            is_mk=t.str.contains(r"^\*\*\* [A-Za-z0-9 '-]+ \*\*\*(?: +\[.*)?$"),
        )
        .collect()
    )
    return lines


# A hand header glued to the end of a line (a hand cut short and the next one written straight after it): the whole
# header, with its date, to the line's end.
GLUED_HEADER_RE = (r".(PokerStars (?:Hand|Game) #\d+: [^\n]* - \d{4}/\d{1,2}/\d{1,2} \d{1,2}:\d{2}:\d{2}"
                   r"(?: [A-Z]+)?(?: \[[^\]]*\])?)\s*$")


def _unglue(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` (:func:`lines_frame`) with a hand header glued to the end of a line, and followed by a table line
    (``Table '``), cut off into a line of its own (with the same line number): the hand before it, cut short, is
    then quarantined as truncated, and the glued hand is read. (Literal tests over every line; the pattern only
    on the few lines holding ``PokerStars `` not at their start.)"""
    raw = lines.get_column("raw")
    at = (raw.str.contains("PokerStars ", literal=True) & ~raw.str.starts_with("PokerStars ")).arg_true()
    if at.len() == 0:
        return lines
    nxt = (at + 1).clip(upper_bound=lines.height - 1)
    fidx = lines.get_column("fidx")
    cut = pl.select(pl.when((nxt != at) & (fidx.gather(nxt) == fidx.gather(at))
                            & raw.gather(nxt).str.strip_chars_start().str.starts_with("Table '"))
                    .then(raw.gather(at).str.find(GLUED_HEADER_RE) + 1)).to_series()
    at, cut = at.filter(cut.is_not_null()), cut.drop_nulls()
    if at.len() == 0:
        return lines
    # (the frame is cut around the few glued lines and put back together: no pass over the other lines)
    parts, prev = [], 0
    for i, c in zip(at.to_list(), cut.to_list()):
        row = lines.slice(i, 1)
        text = row.get_column("raw")[0]
        parts += [lines.slice(prev, i - prev), pl.concat([row, row]).with_columns(raw=pl.Series([text[:c], text[c:]]))]
        prev = i + 1
    return pl.concat([*parts, lines.slice(prev)])


def _headers(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` (with t) with ``is_hdr``: the line starts a hand.

    A line matching the header pattern starts a hand only at a hand boundary: a file's first line, after a blank
    line, after a ``*** SUMMARY ***`` marker since the previous such line, or just before a table line
    (``Table '``). Inside a hand's betting, a line such as ``PokerStars Hand #1: amy: folds`` is a player's line
    (a player named so), not a new hand. (A line rejected merges into the hand before it, whose summary state
    is then that of the lines since the rejected one: the test on the lines since the previous candidate is exact.)

    A header broken over two lines (the game, level and date on the next line: ``PokerStars Hand #1: Tournament
    #2, $1.29+$0.21 USD`` then ``Hold'em No Limit - Level I (10/20) - 2020/03/23 ...``) is read joined: the
    header's ``t`` takes the next line's text and that line's ``t`` is emptied (its raw text stays)."""
    cand = lines.get_column("t").str.contains(G.HEADER_RE)
    at = cand.arg_true().cast(pl.Int64)
    if at.len() == 0:
        return lines.with_columns(is_hdr=cand)
    n = lines.height
    fidx, tt = lines.get_column("fidx"), lines.get_column("t")
    prev_i, next_i = (at - 1).clip(lower_bound=0), (at + 1).clip(upper_bound=n - 1)
    is_summary = tt == "*** SUMMARY ***"  # (the marker alone: a name may begin so)
    seen = is_summary.cast(pl.Int32).cum_sum()
    seen_at = seen.gather(at)
    first_of_file = (at == 0) | (fidx.gather(prev_i) != fidx.gather(at))
    before = lambda s: pl.concat([s.slice(0, 1), s.slice(0, at.len() - 1)])  # noqa: E731  (the previous candidate's)
    summary_since = (seen_at - before(seen_at) > 0) | (fidx.gather(at) != before(fidx.gather(at)))
    same_next = (next_i != at) & (fidx.gather(next_i) == fidx.gather(at))
    boundary = (
        first_of_file | (tt.gather(prev_i) == "") | summary_since
        | (same_next & tt.gather(next_i).str.starts_with("Table '"))
    )
    # the header broken over two lines: no game in it, the game and date opening the next line
    broken = (boundary & same_next & ~tt.gather(at).str.contains(GAME_RE)
              & tt.gather(next_i).str.contains("^" + GAME_RE + r".* - \d{4}/\d{1,2}/\d{1,2}"))
    is_hdr = pl.repeat(False, n, dtype=pl.Boolean, eager=True).scatter(at, boundary)
    if broken.any():
        hi, ni = at.filter(broken), next_i.filter(broken)
        tt = tt.scatter(hi, tt.gather(hi) + " " + tt.gather(ni)).scatter(ni, "")
        return lines.with_columns(t=tt, is_hdr=is_hdr)
    return lines.with_columns(is_hdr=is_hdr)


def hand_sections(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` (:func:`mark_lines`) with sec (section), run (board run) and blank; ``inh`` is false from
    the blank line that ends a hand's summary on."""
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
    # sections as small integer codes set on header/marker rows and
    # forward-filled, then an Enum (a byte per line; comparing with a name is
    # an integer comparison); the run number likewise
    at = (lines.get_column("is_hdr") | lines.get_column("is_mk")).arg_true()
    codes = lines.select("is_hdr", "t")[at].select(sec=sec_code, run=run_code)
    lines = lines.with_columns(
        pl.repeat(None, lines.height, dtype=pl.UInt8, eager=True).scatter(at, codes.get_column("sec")).alias("sec"),
        pl.repeat(None, lines.height, dtype=pl.Int32, eager=True).scatter(at, codes.get_column("run")).alias("run"),
    )
    lines = lines.lazy().with_columns(
        sec=pl.col("sec").forward_fill().replace_strict(list(range(len(SECTION_NAMES))), SECTION_NAMES, return_dtype=SECTION),
        run=pl.col("run").forward_fill(),
        blank=t == "",
    ).collect()
    # The first blank line after the summary ends the hand, unless the summary goes on after it (a file written
    # double-spaced, a blank line after every line): only the few blank summary lines look at their next line.
    cand = (lines.get_column("blank") & (lines.get_column("sec") == "summary")).arg_true()
    ends = pl.repeat(False, lines.height, dtype=pl.Boolean, eager=True)
    if cand.len():
        next_nb = lines.select(pl.when(~pl.col("blank")).then(pl.int_range(pl.len(), dtype=pl.Int64))
                           .shift(-1).backward_fill().fill_null(lines.height - 1)).to_series().gather(cand)
        goes_on = (
            lines.get_column("t").gather(next_nb).str.contains(SUMMARY_GOES_ON_RE)
            & (lines.get_column("hid").gather(next_nb) == lines.get_column("hid").gather(cand))
            & (lines.get_column("fidx").gather(next_nb) == lines.get_column("fidx").gather(cand))
        )
        ends = ends.scatter(cand.filter(~goes_on), True)
    lines = lines.with_columns(inh=pl.col("inh") & (g_cumsum(ends.cast(pl.Int32), starts("hid")) == 0))
    return lines


def hand_frame(hand_lines: pl.DataFrame, files: list[str]) -> pl.DataFrame:
    """One row per hand of the non-blank ``hand_lines``: header fields (:func:`parse_headers`), table line,
    source file and line, summary/total/seat-line counts, cancelled, dealt (cards were dealt), content_hash."""
    t = pl.col("t")
    # Each hand's rows are contiguous and start with its header, so the
    # per-hand firsts are the header rows, the second line is the row after
    # the header (when it is of the same hand), and counts are differences of
    # running sums at the hands' first and last rows: no group-by but the join
    # of each hand's text.
    first = hand_lines.get_column("is_hdr").arg_true()
    last = pl.concat([first.slice(1), pl.Series([hand_lines.height], dtype=first.dtype)]) - 1
    zero = lambda c: pl.lit(0, pl.UInt32).alias(c)  # noqa: E731
    runs = pl.concat([pl.select(zero("summary"), zero("total"), zero("seat")), hand_lines.select(
        summary=(pl.col("sec") == "summary").cast(pl.UInt32).cum_sum(),
        total=t.str.starts_with("Total pot").cast(pl.UInt32).cum_sum(),
        seat=((pl.col("sec") == "setup") & t.str.starts_with("Seat ")).cast(pl.UInt32).cum_sum(),
    )])  # (row i + 1: the running sums up to line i; row 0: none yet)
    before, upto = runs[first], runs[last + 1]
    nxt = first + 1
    second = hand_lines[nxt.clip(upper_bound=hand_lines.height - 1)].select(
        "t", same=(pl.col("hid") == hand_lines.get_column("hid").gather(first)) & (nxt < hand_lines.height))
    hands = hand_lines[first].select(
        "hid", "fidx", source_line="lno", t="t",
        table_t=pl.when(second.get_column("same")).then(second.get_column("t")),
        norm=hand_lines.group_by("hid", maintain_order=True).agg(pl.col("t").str.join("\n")).get_column("t"),
        has_summary=upto.get_column("summary") > before.get_column("summary"),
        has_total=upto.get_column("total") > before.get_column("total"),
        n_seat_lines=upto.get_column("seat") - before.get_column("seat"),
    )
    # MD5 of each hand's normalised text (same digest as DuckDB's md5 of the
    # UTF-8 text): one hashlib call per hand is cheaper than a DuckDB round trip
    # "cancelled": any line of the hand matches; tested once on the hand's
    # joined lines (multi-line mode: ^ and $ at line ends; blank lines never match)
    # ("dealt": a deal marker or a "Dealt to" line: a hand cancelled without one was cancelled before the deal)
    hands = hands.with_columns(cancelled=pl.col("norm").str.contains("(?m)" + G.CANCELLED_RE),
                               dealt=pl.col("norm").str.contains("(?m)" + G.DEALT_MARK_RE))
    md5 = hashlib.md5
    hands = hands.with_columns(content_hash=pl.Series(
        # (bytes straight from the column's UTF-8 buffer: no str objects, no encode)
        [md5(b).hexdigest() for b in hands.get_column("norm").cast(pl.Binary).to_list()], dtype=pl.String,
    )).drop("norm")
    hands = parse_headers(hands)
    hands = hands.with_columns(
        source_file=pl.col("fidx").replace_strict(
            list(range(len(files))), files, return_dtype=pl.String
        )
    )
    return hands


def classify(hand_lines: pl.DataFrame):
    """The hand lines but headers split by kind (:data:`KIND`); returns ``by_kind(name)``, the lines of one
    kind in order (hid, ln, t, sec, run, kind)."""
    t = pl.col("t")
    # line kinds as small integer codes (cheaper to build and compare than strings)
    kind = (
        pl.when(pl.col("is_mk")).then(pl.lit(KIND["marker"], pl.UInt8))
        .when(t.str.ends_with('"') & t.str.contains(' said, "', literal=True)).then(pl.lit(KIND["chat"], pl.UInt8))
        .when(pl.col("second")).then(pl.lit(KIND["table"], pl.UInt8))
        .when((pl.col("sec") == "setup") & t.str.starts_with("Seat ") & t.str.contains(" in chips", literal=True))
        .then(pl.lit(KIND["seat"], pl.UInt8))
        .when(pl.col("sec") == "summary").then(pl.lit(KIND["summary"], pl.UInt8))
        .when(t.str.starts_with("Dealt to ")).then(pl.lit(KIND["dealt"], pl.UInt8))
        .when(t.str.starts_with("Uncalled bet (")).then(pl.lit(KIND["uncalled"], pl.UInt8))
        .otherwise(pl.lit(KIND["x"], pl.UInt8))
    )
    # one pass over the lines: classify, then split by class (order kept within each)
    # (the table line is the hand's second non-blank line: the row after its header)
    body = hand_lines.lazy().with_columns(second=pl.col("is_hdr").shift(1, fill_value=False)).filter(~pl.col("is_hdr")).select(
        "hid", "ln", "t", "sec", "run", kind=kind).collect()
    by_class = body.partition_by("kind", as_dict=True, maintain_order=True)
    del body
    no_lines = pl.DataFrame(schema=CLASSED_LINE_SCHEMA)
    by_kind = lambda k: by_class.get((KIND[k],), no_lines)  # noqa: E731
    return by_kind


# lines that end with a name (which may itself end ' said, "'): read as chat only when a seated player says them
_ENDS_WITH_A_NAME = "|".join(f"(?:{p})" for p in (G.UNCALLED_RE, G.BOUNTY_RE, G.SPLIT_BOUNTY_RE, G.COLLECTED_RE,
                                                   G.VERB_SUFFIX_RE))


def reclassify_chat(by_kind, names: Names):
    """``by_kind`` (:func:`classify`) with the chat lines that no seated player says and that read as a line of
    another kind (``bob wins the $5 bounty for eliminating amy said, "``: the eliminated player's name ends so)
    moved to that kind (``uncalled``, else ``x``): a chat line's speaker is a seated name, a
    prefix before a ``' said, "'`` (:func:`.names.chat_speakers`). Other chat lines stay chat (an observer's words
    are kept as chat)."""
    chat = by_kind("chat")
    if chat.height == 0:
        return by_kind
    move = ~chat_speakers(chat, names).get_column("known") & chat.get_column("t").str.contains(_ENDS_WITH_A_NAME)
    if not move.any():
        return by_kind
    moved = chat.filter(move)
    unc = moved.get_column("t").str.starts_with("Uncalled bet (")
    kinds = {"chat": chat.filter(~move)}
    for k, part in (("uncalled", moved.filter(unc)), ("x", moved.filter(~unc))):
        if part.height:
            kinds[k] = pl.concat([by_kind(k), part.with_columns(kind=pl.lit(KIND[k], pl.UInt8))],
                                 how="vertical").sort("hid", "ln", maintain_order=True)
    return lambda k: kinds[k] if k in kinds else by_kind(k)
