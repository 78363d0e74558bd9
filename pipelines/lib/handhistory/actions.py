"""Actions: the dealt, verb, showdown and uncalled-bet lines of each hand, and the running values of its
actions (the blinds and running values rules of :mod:`.parse`)."""
from __future__ import annotations

import polars as pl

from . import lines as G
from .checks import issue, unparsed
from .frames import CLASSED_LINE_SCHEMA, cards_or_null, g_cumsum, g_cummax_nonneg, g_index, g_shift, starts
from .names import Names, known

ACTION_CODE = {
    "posts small blind": "post_sb", "posts big blind": "post_bb", "posts the ante": "post_ante",
    "posts ante": "post_ante", "posts small & big blinds": "post_sb_bb", "posts straddle": "post_straddle",
    "posts button blind": "post_bb", "posts dead blind": "post_dead", "folds": "fold", "checks": "check",
    "calls": "call", "bets": "bet", "raises": "raise",
}
NONFLOP_VERBS = {"discards", "stands pat", "draws", "brings in", "brings", "bring-in"}


def impossible_actions(actions: pl.DataFrame) -> pl.DataFrame:
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
    by_line = actions.with_columns(why=why).filter(pl.col("why").is_not_null())
    # after a fold or an all-in: each player's lines of a hand in order (a stable sort on one integer key); the
    # first line after a fold, or a live action right after an all-in, is the impossible one
    voluntary = a.is_in(["fold", "check", "call", "bet", "raise"])
    by_player = actions.filter(voluntary | pl.col("is_all_in")).select(
        "hid", "ln", "t", "action", "is_all_in", voluntary=voluntary,
        kp=pl.col("hid").cast(pl.Int64) * 1024 + pl.col("known_seat").cast(pl.Int64),
    ).sort("kp", maintain_order=True)
    same = pl.col("kp") == pl.col("kp").shift(1)
    after_fold = same & (a.shift(1) == "fold")
    after_all_in = same & pl.col("is_all_in").shift(1) & (a != "fold")
    late = by_player.with_columns(after_fold=after_fold, after_all_in=after_all_in).filter(
        pl.col("voluntary") & (pl.col("after_fold") | pl.col("after_all_in"))
    ).with_columns(why=pl.when(pl.col("after_fold")).then(pl.lit("after folding")).otherwise(pl.lit("after going all-in")))
    bad = pl.concat([by_line.select("hid", "ln", "t", "why"), late.select("hid", "ln", "t", "why")], how="vertical")
    return issue(bad.sort("hid", "ln"), 6, "impossible action",
                  pl.format("line {}: {} ({})", pl.col("ln") + 1, pl.col("t"), pl.col("why")))



def read_dealt(by_kind, names: Names) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The "Dealt to" lines naming a seated player, with their cards (null when blanked); and the other lines
    that start "Dealt to " (another line of a player whose name starts so), as classified lines."""
    t = pl.col("t")
    # dealt
    dealt = by_kind("dealt").with_columns(g=t.str.extract_groups(G.DEALT_RE))
    dealt = dealt.with_columns(player=pl.col("g").struct.field("1"), cards=pl.col("g").struct.field("2"), cards2=pl.col("g").struct.field("3"))
    dealt = known(dealt, names, "player", "known").drop("known_seat")
    # names containing " [": retry the unknown ones with a greedy name
    dealt_retry = dealt.filter(~pl.col("known")).with_columns(g=t.str.extract_groups(r"^Dealt to (.+) \[([^\]]*)\]$")).with_columns(
        player=pl.col("g").struct.field("1"), cards=pl.col("g").struct.field("2"), cards2=pl.lit(None, pl.String)
    ).drop("known")
    dealt = pl.concat([dealt.filter(pl.col("known")).drop("known"), known(dealt_retry, names, "player", "known").drop("known", "known_seat")],
                  how="vertical_relaxed")
    dealt = known(dealt, names, "player", "known")
    # greedy fallback for names containing " [": retry with the whole prefix
    # a line that starts "Dealt to " but names no seated player may be another line of a player whose name starts
    # "Dealt to" ("Dealt to: folds"): it goes on with the other lines
    dealt_other = dealt.filter(~pl.col("known") | pl.col("cards").is_null()).select(list(CLASSED_LINE_SCHEMA))
    # (blanked cards: the player was dealt in, the cards are unknown)
    dealt = dealt.filter(pl.col("known") & pl.col("cards").is_not_null()).with_columns(cards=cards_or_null(pl.col("cards")))
    return dealt, dealt_other


def split_verb_lines(by_kind, dealt_other: pl.DataFrame, names: Names,
                     issues: list[pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Split the verb-or-other lines (and ``dealt_other``) into the verb lines of seated players (player,
    verb, tail, known_seat), the other lines (for :func:`.other_lines.read_other_lines`) and the "sits out"
    lines; draw and stud verbs are appended to ``issues``.

    The name is what precedes the leftmost ": <verb>" followed by a space or the line end
    (``G.VERB_SUFFIX_RE``). Fast path: the text is cut at its first ": " and the rest tested for a verb at its
    start (anchored, capture-free); when it has none, a later ": <verb>" may still be there (a name containing
    ": "), and only those lines run the unanchored pattern, their fields scattered back in place. Lines whose
    name so found is not seated are tried again with the greedy pattern (names that themselves contain
    ": <verb>")."""
    t = pl.col("t")
    verb_or_other = by_kind("x")
    if dealt_other.height:
        verb_or_other = pl.concat([verb_or_other, dealt_other], how="vertical").sort("hid", "ln", maintain_order=True)
    verb_or_other = verb_or_other.with_columns(sp=t.str.splitn(": ", 2)).with_columns(
        player=pl.col("sp").struct.field("field_0"), rest=pl.col("sp").struct.field("field_1")).drop("sp")
    hit = verb_or_other.get_column("rest").str.contains(G.VERB_AT_START_RE).fill_null(False)
    later = (~hit & verb_or_other.get_column("rest").is_not_null()).arg_true()
    if later.len():
        # (a match always removes at least ": " and a verb, so a line matched
        # iff the replace shortened it)
        odd = verb_or_other[later].select(player=t.str.replace(G.VERB_SUFFIX_RE, ""), t="t").with_columns(
            rest=t.str.slice(pl.col("player").str.len_chars() + 2),
            hit=pl.col("player").str.len_bytes() != t.str.len_bytes())
        verb_or_other = verb_or_other.with_columns(verb_or_other.get_column(c).scatter(later, odd.get_column(c)) for c in ("player", "rest"))
        hit = hit.scatter(later, odd.get_column("hit"))
    rest_lines = verb_or_other.filter(~hit).drop("player", "rest")
    verbs = verb_or_other.filter(hit)
    rest = pl.col("rest")
    # one anchored alternation (leftmost-first: longer verbs are listed first)
    verbs = verbs.with_columns(verb=rest.str.extract(G.VERB_PREFIX_RE, 1)).with_columns(tail=rest.str.slice(pl.col("verb").str.len_chars())).drop("rest")
    verbs = known(verbs, names, "player", "known")
    # the unknown ones get the greedy pattern's fields in place (row order kept)
    slow_i = (~verbs.get_column("known")).arg_true()
    if slow_i.len():
        g = verbs.get_column("t").gather(slow_i).str.extract_groups(G.VERB_RE)
        verbs = verbs.with_columns(
            verbs.get_column(c).scatter(slow_i, g.struct.field(str(i))) for i, c in ((1, "player"), (2, "verb"), (3, "tail"))
        )
        # and only they are looked up again
        looked_up = known(verbs[slow_i].select("hid", "player"), names, "player", "known")
        verbs = verbs.with_columns(verbs.get_column(c).scatter(slow_i, looked_up.get_column(c)) for c in ("known", "known_seat"))
    # "NAME: sits out" may come from a player not in the seat list (nothing may follow: "x: is sitting out is
    # connected" is a line of a player named "x: is sitting out")
    sitting = pl.col("verb").is_in(["sits out", "is sitting out"]).fill_null(False)
    sit_outs = verbs.filter(sitting & (pl.col("tail") == ""))
    # (a line the greedy pattern does not read has no verb: it is kept, for the other patterns)
    verbs = verbs.filter(~(sitting & (pl.col("tail") == "")))
    # A verb line whose name is not seated may be another kind of line by a
    # player whose name contains ": <verb>"; it goes on to the other patterns.
    other = ~pl.col("known") | sitting
    rest_lines = pl.concat([rest_lines, verbs.filter(other).select(rest_lines.columns)], how="vertical").sort("hid", "ln")
    verbs = verbs.filter(~other)
    nonflop = verbs.filter(pl.col("verb").is_in(list(NONFLOP_VERBS)))
    issues.append(unparsed(nonflop, " (draw/stud action)"))
    return verbs, rest_lines, sit_outs


def read_actions(verbs: pl.DataFrame, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """The betting actions among the ``verbs`` lines: action code, amt and to (cents), is_all_in; a line
    outside a betting street or whose tail does not read is appended to ``issues``."""
    actions = verbs.filter(pl.col("verb").is_in(list(ACTION_CODE)) & pl.col("sec").is_in(["setup", "preflop", "flop", "turn", "river"]))
    issues.append(unparsed(verbs.filter(pl.col("verb").is_in(list(ACTION_CODE)) & ~pl.col("sec").is_in(["setup", "preflop", "flop", "turn", "river"])), " (action outside a betting street)"))
    actions = actions.with_columns(action=pl.col("verb").replace_strict(ACTION_CODE))
    tail = pl.col("tail")
    is_r = pl.col("action") == "raise"
    # Most tails are plain: "", " $1.50", " $1 to $3" (raises), optionally
    # " and is all-in". Those are cut with literal splits; the others (cards,
    # caps, separators, other currencies) take the general patterns below.
    plain = tail.str.contains(G.PLAIN_ACTION_TAIL_RE) & (is_r | ~tail.str.contains(" to ", literal=True))
    actions = actions.with_columns(
        tail_ok=plain,
        sp=tail.str.strip_suffix(" and is all-in").str.strip_chars().str.split_exact(" to ", 1),
    ).with_columns(
        amt_s=pl.col("sp").struct.field("field_0"), to_s=pl.col("sp").struct.field("field_1"),
    ).drop("sp")
    other = (~actions.get_column("tail_ok")).arg_true()
    if other.len():
        odd = actions[other].lazy()
        core = tail.str.replace(G.TAIL_SUFFIX_RE, "").str.strip_chars()
        odd = odd.with_columns(core=core).with_columns(
            amt_s=pl.when(is_r).then(pl.col("core").str.replace(r" to .*$", "")).otherwise(pl.col("core")),
            to_s=pl.when(is_r & pl.col("core").str.contains(" to ", literal=True))
            .then(pl.col("core").str.replace(r"^.* to ", "")),
            tail_ok=tail.str.contains(G.ACTION_TAIL_RE),
        ).collect()
        actions = actions.with_columns(actions.get_column(c).scatter(other, odd.get_column(c)) for c in ("tail_ok", "amt_s", "to_s"))
    actions = actions.lazy().with_columns(
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
    actions = actions.with_columns(shape_ok=shape_ok.fill_null(False))
    issues.append(unparsed(actions.filter(~pl.col("shape_ok"))))
    actions = actions.filter(pl.col("shape_ok")).drop("tail_ok", "shape_ok")
    return actions


def read_showdown(verbs: pl.DataFrame) -> pl.DataFrame:
    """The show and muck lines among ``verbs``, with their cards (null when none are shown)."""
    showdown = verbs.filter(pl.col("verb").is_in(["shows", "mucks", "mucks hand", "doesn't show hand", "doesn't show"]))
    showdown = showdown.with_columns(cards=cards_or_null(pl.col("tail").str.extract(r"^ \[([^\]]*)\]", 1)))
    return showdown


def read_uncalled(by_kind, names: Names, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """The "Uncalled bet" lines: amt (cents) returned to a seated player; the others are appended to
    ``issues``."""
    t = pl.col("t")
    uncalled = by_kind("uncalled").with_columns(g=t.str.extract_groups(G.UNCALLED_RE))
    uncalled = uncalled.with_columns(amt=G.money_cents(pl.col("g").struct.field("1")), player=pl.col("g").struct.field("2"))
    uncalled = known(uncalled, names, "player", "known")
    issues.append(unparsed(uncalled.filter(~pl.col("known")), " (returned to a name the seat list does not hold)"))
    issues.append(unparsed(uncalled.filter(pl.col("known") & pl.col("amt").is_null())))
    uncalled = uncalled.filter(pl.col("known") & pl.col("amt").is_not_null())
    return uncalled


def fixed_limit_bets(hands: pl.DataFrame) -> pl.DataFrame:
    """``hands`` with ``big_blind`` the small bet of fixed-limit hands and ``small_blind_hdr`` the header's
    small blind."""
    # Fixed limit headers state the bets ("$1/$2"): the big blind is the small
    # bet, the small blind what the hand's small blind posted (else half).
    hands = hands.with_columns(
        big_blind=pl.when(pl.col("limit_type") == "fixed_limit").then(pl.col("small_blind")).otherwise(pl.col("big_blind")),
        small_blind_hdr=pl.col("small_blind"),
    )
    return hands


def running_values(actions: pl.DataFrame, hands: pl.DataFrame, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """``actions`` with street, seq, amount (a raise's increment), pot_before, to_call and folds_before,
    computed over (hand, street, seat) windows; impossible actions are appended to ``issues``."""
    actions = actions.with_columns(street=pl.when(pl.col("sec") == "setup").then(pl.lit("preflop")).otherwise(pl.col("sec").cast(pl.String)))
    # A "posts small blind" after the big blind was posted is a returning
    # player's dead small blind: it goes to the pot but is not a live bet.
    st_h = starts("hid")
    bb_before = g_shift(g_cumsum((pl.col("action") == "post_bb").cast(pl.Int32), st_h), st_h, 0)
    actions = actions.with_columns(action=pl.when((pl.col("action") == "post_sb") & (bb_before > 0))
                       .then(pl.lit("post_dead")).otherwise(pl.col("action")))
    actions = actions.join(hands.select("hid", "big_blind"), on="hid", how="left", maintain_order="left")
    a = pl.col("action")
    live_nonraise = (
        pl.when(a.is_in(["post_ante", "post_dead", "fold", "check", "raise"])).then(pl.lit(0, pl.Int64))
        .when(a == "post_sb_bb").then(pl.min_horizontal(pl.col("amt"), pl.coalesce(pl.col("big_blind"), pl.col("amt"))))
        .otherwise(pl.col("amt").fill_null(0))
    )
    actions = actions.with_columns(
        live_nr=live_nonraise,
        is_raise=a == "raise",
        seq=g_index(starts("hid")).cast(pl.Int32),
    )
    # window keys as single integers: (hand, street) and (hand, street, seat)
    street_i = pl.col("street").replace_strict({"preflop": 0, "flop": 1, "turn": 2, "river": 3}, return_dtype=pl.Int64)
    actions = actions.with_columns(
        k_hs=pl.col("hid").cast(pl.Int64) * 4 + street_i,
    ).with_columns(k_hsp=pl.col("k_hs") * 1024 + pl.col("known_seat").cast(pl.Int64))
    # per player and street: live level after each line = last "raise to" + later live chips
    levels = actions.select(
        row=pl.int_range(pl.len(), dtype=pl.Int64), k="k_hsp", is_raise="is_raise",
        to=pl.col("to").fill_null(0), live_nr="live_nr",
    ).sort("k", maintain_order=True)
    st = starts("k")
    levels = levels.with_columns(
        base=pl.when(pl.col("is_raise")).then(pl.col("to")).when(st).then(pl.lit(0, pl.Int64)).forward_fill(),
        run_live=g_cumsum(pl.col("live_nr"), st | pl.col("is_raise")),
    ).with_columns(level_after=pl.col("base") + pl.col("run_live"))
    levels = levels.with_columns(level_before=g_shift(pl.col("level_after"), st, 0)).sort("row")
    actions = actions.with_columns(level_after=levels["level_after"], level_before=levels["level_before"])
    st_street = starts("k_hs")
    actions = actions.with_columns(
        amount=pl.when(pl.col("is_raise")).then(pl.col("to") - pl.col("level_before")).otherwise(pl.col("amt").fill_null(0)),
        street_max_before=g_shift(g_cummax_nonneg(pl.col("level_after"), st_street), st_street, 0),
    )
    actions = actions.with_columns(
        # preflop a player must call at least the big blind, even when the big
        # blind itself was posted short (all-in)
        to_call=pl.when(a.str.starts_with("post")).then(pl.lit(0, pl.Int64))
        .otherwise(pl.max_horizontal(
            pl.when(pl.col("street") == "preflop")
            .then(pl.max_horizontal(pl.col("street_max_before"), pl.col("big_blind").fill_null(0)))
            .otherwise(pl.col("street_max_before"))
            - pl.col("level_before"),
            pl.lit(0, pl.Int64))),
        pot_before=g_shift(g_cumsum(pl.col("amount"), starts("hid")), starts("hid"), 0),
        folds_before=g_shift(g_cumsum((a == "fold").cast(pl.Int32), starts("hid")), starts("hid"), 0),
    )
    bad_raise = actions.filter(pl.col("amount") < 0)
    issues.append(unparsed(bad_raise, " (raise to less than already committed)"))
    issues.append(impossible_actions(actions))
    return actions
