"""Seats: the setup seat lines, and each seat's money (put in, returned, collected, net, stack at the end)
and position."""
from __future__ import annotations

import polars as pl

from . import lines as G
from .checks import issue, unparsed
from .names import Names

# The highest seat number read (real tables have at most 10 seats). A seat line above it is unparsed and its hand
# quarantined: keys of the form hand * 1024 + seat (below) then cannot reach another hand.
MAX_SEAT = 100


def seat_lines(seats: pl.DataFrame, issues: list[pl.DataFrame]) -> pl.DataFrame:
    """Setup seat lines -> hid, seat, player, stack_start, bounty, sitting_out.

    ``G.SEAT_RE`` is the grammar. A line that matches the capture-free
    ``G.PLAIN_SEAT_RE`` (one pair of brackets, a numeric seat, one " in
    chips") has exactly one way to match it, and is cut with literal splits
    at " (", ": ", ")" and " in chips"; the other lines (a name with
    brackets...) get the capture groups of ``SEAT_RE``, scattered back in
    place. A line matching neither is an unparsed line."""
    t = pl.col("t")
    seats = seats.lazy().select(
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
    other = (~seats.get_column("ok")).arg_true()
    if other.len():
        g = seats.get_column("t").gather(other).str.extract_groups(G.SEAT_RE)
        seats = seats.with_columns(
            seats.get_column(c).scatter(other, g.struct.field(str(i)))
            for i, c in ((1, "seat_s"), (2, "player"), (3, "stack_s"), (4, "bounty_s"), (5, "rest"))
        )
        bad = pl.col("seat_s").is_null()
        issues.append(unparsed(seats.filter(bad)))
        seats = seats.filter(~bad)
    seats = seats.with_columns(
        seat=pl.col("seat_s").cast(pl.Int32, strict=False),
        stack_start=G.money_cents(pl.col("stack_s")),
        bounty=G.money_cents(pl.col("bounty_s")),
    )
    absurd = (~pl.col("seat").is_between(1, MAX_SEAT) | pl.col("seat").is_null() | pl.col("stack_start").is_null()
              | (pl.col("bounty_s").is_not_null() & pl.col("bounty").is_null()))
    issues.append(unparsed(seats.filter(absurd), f" (seat number outside 1..{MAX_SEAT} or an amount out of range)"))
    return seats.filter(~absurd).select(
        "hid", "seat", "player", "stack_start", "bounty",
        sitting_out=pl.col("rest").str.contains("sitting out|out of hand"),
    )


def read_seats(by_kind, issues: list[pl.DataFrame]) -> tuple[pl.DataFrame, Names]:
    """The seats of each hand (:func:`seat_lines` of the seat lines ``by_kind("seat")``), a name or seat
    seated twice appended to ``issues``, and the hands' seat names for lookups."""
    seats = seat_lines(by_kind("seat"), issues)
    dup = seats.filter(pl.struct("hid", "seat").is_duplicated() | pl.struct("hid", "player").is_duplicated())
    # a hand whose every seat holds one name: an export that masked the names (Holdem Manager 3's replayer and
    # viewer offer "Mask Player Names", every name replaced by "Player"), a layout in which no line can be given
    # to a seat; its detail names it
    masked = seats.group_by("hid").agg(masked=(pl.len() > 1) & (pl.col("player").n_unique() == 1))
    dup = dup.join(masked, on="hid", how="left")
    issues.append(issue(dup, 4, "malformed hand", pl.when(pl.col("masked")).then(pl.format(
        "every seat is named {}: the layout of an export with the names masked (as Holdem Manager 3's"
        " 'Mask Player Names'), whose lines cannot be given to a seat; not read", pl.col("player")))
        .otherwise(pl.format("duplicate seat or player: {}", pl.col("player")))))
    names = Names(seats)
    return seats, names


def seat_accounts(seats: pl.DataFrame, actions: pl.DataFrame, dealt: pl.DataFrame, showdown: pl.DataFrame,
                  uncalled: pl.DataFrame, collections: pl.DataFrame, totals: pl.DataFrame) -> pl.DataFrame:
    """``seats`` with bet, returned, collected, put_in, net, stack_end and dealt_in, summed from the lines
    that name each seat; an uncalled bet an old client (or a Holdem Manager 1 export) did not write is recorded as
    returned. Also returns the hands whose total pot is written net of rake (see :func:`gross_totals`)."""
    # keyed by the seat each name was matched to (integers, not name strings);
    # a name seated twice makes the hand malformed (quarantined) anyway
    # one aggregate over the lines that name a seat, joined to the seats once
    # on a single integer key (hand << 32 | seat)
    z = pl.lit(0, pl.Int64)
    seat_key = lambda seat: (pl.col("hid").cast(pl.Int64) * (1 << 32) + pl.col(seat).cast(pl.Int64)).alias("_k")  # noqa: E731
    per_seat = pl.concat([
        actions.select(seat_key("known_seat"), bet=pl.col("amount"), returned=z, collected=z, acted=pl.lit(True)),
        dealt.select(seat_key("known_seat"), bet=z, returned=z, collected=z, acted=pl.lit(True)),
        showdown.select(seat_key("known_seat"), bet=z, returned=z, collected=z, acted=pl.lit(True)),
        uncalled.select(seat_key("known_seat"), bet=z, returned=pl.col("amt"), collected=z, acted=pl.lit(False)),
        collections.select(seat_key("known_seat"), bet=z, returned=z, collected=pl.col("amt"), acted=pl.lit(False)),
    ], how="vertical").group_by("_k").agg(pl.col("bet", "returned", "collected").sum(), pl.col("acted").any())
    seats = (
        seats.with_columns(seat_key("seat")).join(per_seat, on="_k", how="left", maintain_order="left").drop("_k")
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
    # Holdem Manager 1 exports write no "Uncalled bet" line either, and write the total pot net of rake (it equals
    # what was collected): for them the excess is what falls short of the total plus the rake, exactly.
    coll_pot = collections.filter(pl.col("kind") == "pot").group_by("hid").agg(coll_pot=pl.col("amt").sum())
    tot_for_implicit = totals.select("hid", "total", "stp", "rake").join(coll_pot, on="hid", how="left").with_columns(
        net=(pl.col("rake") > 0) & (pl.col("coll_pot") == pl.col("total")))
    top = (
        seats.with_columns(r=pl.col("put_in").rank("ordinal", descending=True).over("hid"))
        .group_by("hid").agg(
            top_player=pl.col("player").filter(pl.col("r") == 1).first(),
            top_put=pl.col("put_in").filter(pl.col("r") == 1).first(),
            second_put=pl.col("put_in").filter(pl.col("r") == 2).first().fill_null(0),
            sum_put0=pl.col("put_in").sum(),
        )
        .join(tot_for_implicit, on="hid", how="inner")
        .with_columns(excess=pl.col("top_put") - pl.col("second_put"))
        .with_columns(short=pl.col("sum_put0") + pl.col("stp") - pl.col("total"))
        .with_columns(net=pl.col("net").fill_null(False) & (pl.col("short") != pl.col("excess"))
                      & (pl.col("short") - pl.col("rake") == pl.col("excess")))
        .filter((pl.col("excess") > 0) & ((pl.col("short") == pl.col("excess")) | pl.col("net")))
        .join(uncalled.select("hid").unique(), on="hid", how="anti")
        .select("hid", "net", player=pl.col("top_player"), implicit=pl.col("excess"))
    )
    net_of_rake = top.filter(pl.col("net")).select("hid")
    top = top.drop("net")
    seats = (
        seats.join(top, on=["hid", "player"], how="left", maintain_order="left")
        .with_columns(returned=pl.col("returned") + pl.col("implicit").fill_null(0))
        .with_columns(put_in=pl.col("bet") - pl.col("returned"))
        .with_columns(net=pl.col("collected") - pl.col("put_in"), stack_end=pl.col("stack_start") - pl.col("put_in") + pl.col("collected"))
        .drop("implicit")
    )
    return seats, net_of_rake


def gross_totals(totals: pl.DataFrame, pots: pl.DataFrame, net_of_rake: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``totals`` and ``pots`` with the total pot of the hands written net of rake (``net_of_rake``, from
    :func:`seat_accounts`) read as the pot it was: the total plus the rake (and the main pot, when the summary
    names no pots, likewise)."""
    if net_of_rake.height == 0:
        return totals, pots
    net = pl.col("hid").is_in(net_of_rake.get_column("hid").implode())
    totals = totals.with_columns(total=pl.when(net).then(pl.col("total") + pl.col("rake")).otherwise(pl.col("total")))
    gross = totals.filter(net & pl.col("main").is_null()).select("hid", pot=pl.lit(0, pl.Int32), gross="total")
    pots = pots.join(gross, on=["hid", "pot"], how="left", maintain_order="left").with_columns(
        amt=pl.coalesce(pl.col("gross"), pl.col("amt"))).drop("gross")
    return totals, pots


def positions(seats: pl.DataFrame, hands: pl.DataFrame) -> pl.DataFrame:
    """``seats`` with ``position`` (the positions rule of :mod:`.parse`) from each hand's button seat."""
    seats = seats.join(hands.select("hid", "button_seat", "max_seats"), on="hid", how="left", maintain_order="left")
    ring = pl.max_horizontal(pl.col("max_seats").fill_null(10), pl.col("seat").max().over("hid"), pl.lit(10))
    dist = (pl.col("seat") - pl.col("button_seat").fill_null(0)) % ring
    seats = seats.with_columns(okey=pl.when(pl.col("dealt_in")).then(pl.when(dist == 0).then(ring).otherwise(dist)))
    seats = seats.with_columns(
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
    seats = seats.with_columns(position=position)
    return seats
