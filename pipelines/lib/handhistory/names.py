"""Seat-name lookups: is a name read from a line one of the seat names of the same hand?"""
from __future__ import annotations

import polars as pl

class Names:
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
        keyed = names.select(_k=name_key("player"), _h="hid", _p="player", _s="seat").sort("_k", maintain_order=True)
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


def name_key(col: str) -> pl.Expr:
    return (pl.col("hid").cast(pl.UInt64) * pl.lit(1 << 32, pl.UInt64)) | (pl.col(col).hash(0x5EED) & pl.lit(0xFFFFFFFF, pl.UInt64))


def known(df: pl.DataFrame, names: Names, col: str, flag: str) -> pl.DataFrame:
    """Add boolean ``flag``: is ``df[col]`` one of the seat names of the same hand
    (and ``{flag}_seat``, its seat). A name found only as the stripped form of a seat name with spaces at an end
    is that seat's, and ``df[col]`` becomes the seat's name as written."""
    out = known_exact(df, names, col, flag)
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


def known_exact(df: pl.DataFrame, names: Names, col: str, flag: str) -> pl.DataFrame:
    """:func:`known` for names as written."""
    if names.keyed is None:
        right = names.exact.select(
            "hid", pl.col("player").alias(col), pl.col("seat").alias(f"{flag}_seat")
        ).with_columns(pl.lit(True).alias(flag))
        return df.join(right, on=["hid", col], how="left", maintain_order="left").with_columns(
            pl.col(flag).fill_null(False)
        )
    probe = df.select(name_key(col)).to_series()
    i = names.sorted_keys.search_sorted(probe, side="left").clip(upper_bound=names.sorted_keys.len() - 1)
    hit = names.keyed[i]
    ok = ((hit.get_column("_k") == probe) & (hit.get_column("_p") == df.get_column(col))
          & (hit.get_column("_h") == df.get_column("hid"))).fill_null(False)
    return df.with_columns(
        pl.when(ok).then(hit.get_column("_s")).alias(f"{flag}_seat"), ok.alias(flag))


_SAID = ' said, "'


def chat_speakers(chat: pl.DataFrame, names: Names) -> pl.DataFrame:
    """``chat`` (lines ``NAME said, "TEXT"``: hid, t, ...) with ``player``, ``detail`` and ``known``: the speaker is
    the shortest prefix before a ``' said, "'`` that is a seated name of the hand (a name or the words may
    themselves hold ``' said, "'``); with none seated, the shortest prefix (an observer's words)."""
    t = pl.col("t")
    body = t.str.strip_suffix('"')
    parts = chat.select(p=body.str.split(_SAID)).get_column("p")
    n = int(parts.list.len().max() or 0)
    prefix = chat.select(t.str.extract(r'^(.+?) said, "', 1)).to_series()
    player, found = prefix, pl.repeat(False, chat.height, dtype=pl.Boolean, eager=True)
    for k in range(1, n):
        cand = chat.select("hid", _c=parts.list.slice(0, k).list.join(_SAID))
        got = known(cand, names, "_c", "_k")  # (a name ending in spaces comes back as the seat's name)
        new = got.get_column("_k") & (parts.list.len() > k) & ~found
        if new.any():
            prefix = pl.select(pl.when(new).then(cand.get_column("_c")).otherwise(prefix)).to_series()
            player = pl.select(pl.when(new).then(got.get_column("_c")).otherwise(player)).to_series()
            found = found | new
    return chat.with_columns(player=player, known=found, detail=body.str.slice(prefix.str.len_chars() + len(_SAID)))
