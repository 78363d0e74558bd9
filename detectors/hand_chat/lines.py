"""Chat lines placed in their hand: in play or not, the action they came before, who was still in.

The warehouse keeps a chat line's 0-based ``line`` within its hand's text
(``table_events``) and the action lines' order (``actions.seq``), not the
action lines' own line numbers. Those follow from the PokerStars layout
(``spec/inputs.md``): the header and table lines, one line per seat, the
posts, ``*** HOLE CARDS ***``, one ``Dealt to`` line per hand dealt in the
text (``hole_cards.source = 'dealt'``), then the decisions with one street
marker before the first decision of each later street; every other line
before the last decision is a table event or an unknown line, both kept with
their line. So the *structural* index of a chat line (its line less the
table-event and unknown lines above it) is compared with each decision's
structural index ``prefix + k + street_rank`` and an as-of join finds the
decision the chat came before.

A chat line is **in play** when it comes after the hole cards and before
the hand's last decision (the house rule: "until all actions for that hand
are complete"). Chat before the posts or among them (between hands) and
after the last decision (the hand is over) is not. Games outside hold'em
and Omaha (draw, stud) have other layouts and are left out.
"""

from __future__ import annotations

import duckdb
import polars as pl

#: games whose text follows the hold'em / Omaha layout
FLOP_GAMES = ("holdem", "omaha", "omaha5", "omaha6", "courchevel")

CHAT_LINES_SQL = """
WITH chat_hands AS (
    SELECT DISTINCT e.hand_id FROM table_events e JOIN hands h USING (hand_id)
    WHERE e.event = 'chat' AND h.game IN (SELECT unnest($games))
), marks AS (
    SELECT hand_id, line FROM table_events WHERE hand_id IN (SELECT hand_id FROM chat_hands)
    UNION ALL SELECT hand_id, line FROM unknown_lines WHERE hand_id IN (SELECT hand_id FROM chat_hands)
), numbered AS (
    SELECT hand_id, line, row_number() OVER (PARTITION BY hand_id ORDER BY line) - 1 AS above FROM marks
), chat AS (
    SELECT e.hand_id, e.line, e.player, e.detail AS text, e.line - n.above AS s
    FROM table_events e JOIN numbered n USING (hand_id, line)
    WHERE e.event = 'chat' AND e.hand_id IN (SELECT hand_id FROM chat_hands)
), prefix AS (
    SELECT c.hand_id,
           2 + (SELECT count(*) FROM seats s WHERE s.hand_id = c.hand_id)
             + (SELECT count(*) FROM actions a WHERE a.hand_id = c.hand_id AND a.action LIKE 'post%')
             + 1 + (SELECT count(*) FROM hole_cards d WHERE d.hand_id = c.hand_id AND d.source = 'dealt') AS prefix
    FROM chat_hands c
), decisions AS (
    SELECT a.hand_id, a.seq, a.player AS actor, a.action AS next_action, a.street AS next_street,
           p.prefix + row_number() OVER w - 1
             + dense_rank() OVER (PARTITION BY a.hand_id ORDER BY CASE a.street WHEN 'preflop' THEN 0
                 WHEN 'flop' THEN 1 WHEN 'turn' THEN 2 ELSE 3 END) - 1 AS pos
    FROM actions a JOIN prefix p USING (hand_id)
    WHERE a.action NOT LIKE 'post%'
    WINDOW w AS (PARTITION BY a.hand_id ORDER BY a.seq)
)
SELECT c.hand_id, c.line, c.player, c.text, d.seq AS next_seq, d.actor AS next_actor, d.next_action, d.next_street,
       (d.seq IS NOT NULL AND c.s >= p.prefix) AS in_play
FROM chat c JOIN prefix p USING (hand_id)
ASOF LEFT JOIN decisions d ON c.hand_id = d.hand_id AND d.pos >= c.s
ORDER BY c.hand_id, c.line
"""


def chat_lines(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every chat line of a hold'em or Omaha hand: ``hand_id``, ``line``, ``player``, ``text``, the
    decision it came before (``next_seq``, ``next_actor``, ``next_action``, ``next_street``; null after the
    last decision) and ``in_play``."""
    return con.sql(CHAT_LINES_SQL, params={"games": list(FLOP_GAMES)}).pl()


def listeners(con: duckdb.DuckDBPyConnection, lines: pl.DataFrame) -> pl.DataFrame:
    """For each in-play line of ``lines`` (``hand_id``, ``line``, ``player``, ``next_seq``), the players still
    in the hand when it was sent other than its speaker (dealt in, not folded before ``next_seq``):
    ``hand_id``, ``line``, ``player`` (the speaker), ``partner``, and ``others`` (how many such players)."""
    con.register("_hc_lines", lines.select("hand_id", "line", "player", "next_seq"))
    try:
        return con.sql("""
            WITH folds AS (SELECT hand_id, player, min(seq) AS fold_seq FROM actions
                           WHERE action = 'fold' AND hand_id IN (SELECT hand_id FROM _hc_lines) GROUP BY ALL)
            SELECT l.hand_id, l.line, l.player, s.player AS partner,
                   count(*) OVER (PARTITION BY l.hand_id, l.line) AS others
            FROM _hc_lines l JOIN seats s ON s.hand_id = l.hand_id AND s.dealt_in AND s.player <> l.player
            LEFT JOIN folds f ON f.hand_id = s.hand_id AND f.player = s.player
            WHERE f.fold_seq IS NULL OR f.fold_seq >= l.next_seq
        """).pl()
    finally:
        con.unregister("_hc_lines")


def presences(con: duckdb.DuckDBPyConnection, watchers: pl.DataFrame, talkers: pl.DataFrame
              ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The players' presences: a player is present in a hand dealt in (``seats.dealt_in``) or, watching, when it
    chatted there (``watchers``: ``hand_id``, ``player``, one row per chatting player and hand).

    Parameters
    ----------
    con : the warehouse. watchers : the chatting players by hand. talkers : ``player``, the players whose
    presences are kept.

    Returns
    -------
    (``player``, ``n``: every player's hands present, sorted by player; ``hand_id``, ``player``: the ``talkers``'
    presences, sorted). Counted in DuckDB: the seats of the window (a row per player dealt in) never reach
    Python."""
    con.register("_hc_watchers", watchers.select("hand_id", "player"))
    con.register("_hc_talkers", talkers.select("player"))
    try:
        counts = con.sql("""
            SELECT player, count(*) AS n FROM (SELECT hand_id, player FROM seats WHERE dealt_in
                                              UNION SELECT hand_id, player FROM _hc_watchers)
            GROUP BY player ORDER BY player""").pl()
        kept = con.sql("""
            SELECT hand_id, player FROM seats WHERE dealt_in AND player IN (SELECT player FROM _hc_talkers)
            UNION SELECT hand_id, player FROM _hc_watchers WHERE player IN (SELECT player FROM _hc_talkers)
            ORDER BY hand_id, player""").pl()
        return counts, kept
    finally:
        con.unregister("_hc_watchers")
        con.unregister("_hc_talkers")


__all__ = ["CHAT_LINES_SQL", "FLOP_GAMES", "chat_lines", "listeners", "presences"]
