"""The seat hand-off fit's hands read with their starting hand's percentile joined in DuckDB
(detectors/seat_handoff/queries.py: ``strength_table``, ``_STRENGTH_JOIN``): the hole cards and the game never reach
Python, and the strata and entry classes are those made from the cards in Python."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal
from test_seat_handoff_range import world  # noqa: F401  (the world of dealt cards, for the con fixture)



def test_strength_table_is_the_percentile_of_each_pair():
    from detectors.features import gameplay as gp
    from detectors.seat_handoff.queries import strength_table

    t = strength_table()
    assert t.height == 52 * 52 and t.select("c1", "c2").n_unique() == t.height
    some = t.sample(300, seed=4)
    want = gp.starting_hand_percentile(pl.DataFrame({"hole": [[a, b] for a, b in zip(some["c1"], some["c2"])],
                                                     "game": ["holdem"] * some.height}))
    assert some["strength"].to_list() == want.to_list()


def test_hand_rows_with_the_strength_from_duckdb_are_the_rows_from_the_cards(con):
    """The strata and entry classes of the hands read with the percentile joined in DuckDB equal those made in
    Python from the hole cards and the game (the former read), Omaha and unknown cards included."""
    from detectors.seat_handoff.queries import _HAND_ROWS_SQL, _with_strength, strength_table

    at = con.sql("SELECT DISTINCT s.player AS account, h.tournament_id FROM seats s JOIN hands h USING (hand_id) "
                 "WHERE h.tournament_id IS NOT NULL").pl()
    con.register("_rb_at", at)
    con.register("_rb_strength", strength_table())
    try:
        rows = con.sql(_HAND_ROWS_SQL).pl()
        cards = con.sql("SELECT c.hand_id, c.player AS account, any_value(c.cards) AS hole, any_value(h.game) AS game "
                        "FROM hole_cards c JOIN hands h USING (hand_id) GROUP BY ALL").pl()
    finally:
        con.unregister("_rb_at")
        con.unregister("_rb_strength")
    assert rows["strength"].is_not_null().sum() > 0
    games = con.sql("SELECT hand_id, game FROM hands").pl()
    old = (rows.drop("strength").join(games, on="hand_id", how="left")
           .join(cards.drop("game"), on=["hand_id", "account"], how="left"))
    # an Omaha hand and a row of unknown cards among them
    old = old.with_columns(game=pl.when(pl.int_range(pl.len()) % 7 == 0).then(pl.lit("omaha")).otherwise("game"))
    new = rows.join(old.select("hand_id", "account", "game"), on=["hand_id", "account"], how="left").with_columns(
        strength=pl.when(pl.col("game") == "holdem").then("strength")).drop("game")
    key = ["hand_id", "account"]
    assert_frame_equal(_with_strength(new).sort(key), _with_strength(old.select(*rows.drop("strength").columns,
                                                                                 "hole", "game")).sort(key))
