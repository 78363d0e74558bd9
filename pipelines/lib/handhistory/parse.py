"""PokerStars hand histories -> the warehouse hand tables, vectorised with Polars.

Method
------
1. All lines of a batch (one or many decoded files) go into one frame
   ``(file, line number, text)``. A line matching the header pattern starts a
   hand when it stands at a hand boundary (``sections._headers``: a player's
   line may begin with a name such as ``PokerStars Hand #1``); hands are
   numbered by a cumulative sum over headers, and a line belongs to the hand
   of the last header *of the same file*.
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

Stages (each a module of this package, run in this order by :func:`_parse_lines`; the issues they find are
kept in that order, and among the issues of equal priority a hand reports the first found):
``sections`` (lines -> hands, sections, line kinds, text outside hands), ``seats`` (seat lines, seat
money, positions), ``actions`` (dealt, verb, showdown, uncalled lines; running values), ``other_lines``
(collections, tournament lines, table events), ``summary`` (pots, boards, summary seats), ``checks``
(hand-level checks, balance, quarantine), ``tables`` (the kept hands' tables); ``names`` (seat-name
lookups) and ``frames`` (shared expressions) serve them all.
"""
from __future__ import annotations

import polars as pl

from .actions import (fixed_limit_bets, read_actions, read_dealt, read_showdown, read_uncalled, running_values,
                      split_verb_lines)
from .checks import balance_issues, hand_issues, hand_values, quarantine_rows, unparsed
from .other_lines import read_other_lines
from .seats import gross_totals, positions, read_seats, seat_accounts
from .sections import (QUARANTINE_RAW_CHARS, classify, hand_frame, hand_sections, lines_frame, mark_lines,
                       outside_hands, reclassify_chat)
from .summary import read_summary
from .tables import QUARANTINE_SCHEMA, TABLE_COLUMNS, TABLE_SCHEMAS, ParsedHands, build_tables

__all__ = ["ParsedHands", "QUARANTINE_RAW_CHARS", "QUARANTINE_SCHEMA", "TABLE_COLUMNS", "TABLE_SCHEMAS",
           "lines_frame", "parse_text"]


def parse_text(text: str, source_file: str) -> ParsedHands:
    """Parse one decoded text (``decode_bytes`` output or any str) of ``source_file``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return _parse_lines(lines_frame([text], [source_file]), [source_file])


def _parse_lines(lines: pl.DataFrame, files: list[str]) -> ParsedHands:
    """The hand tables and quarantine of ``lines`` (:func:`lines_frame` of texts of ``files``): the stages
    of the module docstring, in order."""
    lines = mark_lines(lines)
    headers_seen = int(lines.get_column("is_hdr").sum())
    if headers_seen == 0:
        outside, foreign = outside_hands(lines, files)  # (no header: no line is in a hand)
        return ParsedHands(quarantine=outside, headers_seen=foreign)
    lines = hand_sections(lines)
    outside, foreign = outside_hands(lines, files)

    # --- per-hand text, hash, raw --------------------------------------------------
    # blank lines are dropped once: a hand starts with its (non-blank) header,
    # and no blank line is left in a summary (the first one ended the hand)
    hand_lines = lines.lazy().filter(pl.col("inh") & ~pl.col("blank")).select(
        "hid", "fidx", "lno", "ln", "t", "sec", "run", "is_hdr", "is_mk").collect()
    lines = lines.select("hid", "raw", "inh")  # (kept for the raw text of quarantined hands)
    hands = hand_frame(hand_lines, files)
    by_kind = classify(hand_lines)
    del hand_lines
    issues: list[pl.DataFrame] = []

    seats, names = read_seats(by_kind, issues)
    by_kind = reclassify_chat(by_kind, names)
    dealt, dealt_other = read_dealt(by_kind, names)
    verbs, rest_lines, sit_outs = split_verb_lines(by_kind, dealt_other, names, issues)
    actions = read_actions(verbs, issues)
    showdown = read_showdown(verbs)
    uncalled = read_uncalled(by_kind, names, issues)
    unknown, collections, finishes, bounties, events = read_other_lines(rest_lines, by_kind, sit_outs, names, issues)
    totals, pots, boards, summary_seats, unknown_summary, hand_run_twice = read_summary(
        by_kind("summary"), seats, names, issues)
    unknown = pl.concat([unknown, unknown_summary], how="vertical")
    # table line problems, markers we do not know
    odd_markers = by_kind("marker").filter(pl.col("sec") == "other")
    issues.append(unparsed(odd_markers, " (street of a non-flop game)"))
    hand_issues(hands, issues)
    hands = fixed_limit_bets(hands)
    actions = running_values(actions, hands, issues)
    seats, net_of_rake = seat_accounts(seats, actions, dealt, showdown, uncalled, collections, totals)
    totals, pots = gross_totals(totals, pots, net_of_rake)
    seats = positions(seats, hands)
    hands = hand_values(hands, seats, dealt, actions, collections, summary_seats, totals, hand_run_twice, boards)
    balance_issues(hands, collections, pots, totals, issues)

    quarantined, bad_hids = quarantine_rows(issues, hands, lines)
    tables = build_tables(hands, seats, actions, showdown, summary_seats, dealt, boards, pots, collections, events,
                          unknown, finishes, bounties, bad_hids)
    quarantined = pl.concat([quarantined, outside], how="vertical") if outside.height else quarantined
    return ParsedHands(tables=tables, quarantine=quarantined, headers_seen=headers_seen + foreign)
