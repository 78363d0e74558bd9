"""Bounty collusion's SQL: the knockout events each pair shared, the hands of a pair's joint contests, and the
wide-call columns a pair row carries (:mod:`detectors.bounty_collusion`)."""

EVENTS_SQL = """
-- per unordered pair: the knockout tournaments in which both were dealt in at one table, and the hands
WITH ko AS (SELECT DISTINCT hand_id FROM seats WHERE bounty IS NOT NULL AND bounty > 0),
s AS (SELECT s.hand_id, h.tournament_id, s.player FROM seats s JOIN ko USING (hand_id) JOIN hands h USING (hand_id)
      WHERE s.dealt_in)
SELECT a.player, b.player AS opponent, count(DISTINCT a.tournament_id) AS events, count(*) AS events_hands
FROM s a JOIN s b ON a.hand_id = b.hand_id AND a.player < b.player
GROUP BY ALL
"""

WIDE_COLS = ("wc_n", "wc_k", "wc_e", "wc_p", "wc_a_n", "wc_a_k", "wc_a_e", "wc_b_n", "wc_b_k", "wc_b_e",
             "nw_n", "nw_k", "nw_e", "nw_p")

SPOTS_EVIDENCE_SQL = """
-- knockout hands where $player and $opponent both put chips in against an all-in target
WITH allin AS (
    SELECT a.hand_id, a.player AS target, min(a.seq) AS s_c FROM actions a
    WHERE a.is_all_in AND a.player NOT IN ($player, $opponent) GROUP BY ALL
), vol AS (
    SELECT hand_id, player,
           coalesce(min(seq) FILTER (WHERE action IN ('call', 'bet', 'raise')), 2147483647)
             < coalesce(min(seq) FILTER (WHERE action = 'fold'), 2147483647) AS contested
    FROM actions GROUP BY ALL
)
SELECT ai.hand_id, ai.target, bo.winner AS bounty_winner
FROM allin ai
JOIN vol a ON a.hand_id = ai.hand_id AND a.player = $player AND a.contested
JOIN vol b ON b.hand_id = ai.hand_id AND b.player = $opponent AND b.contested
LEFT JOIN bounties bo ON bo.hand_id = ai.hand_id AND bo.eliminated = ai.target
WHERE ai.hand_id IN (SELECT hand_id FROM seats WHERE bounty > 0)
ORDER BY ai.hand_id
"""
