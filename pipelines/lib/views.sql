-- railbird analyst views (DuckDB). Re-created on every open of the warehouse.
--
-- Definitions used (the usual tracker ones):
--   VPIP   the player put money in voluntarily preflop: a call, bet or raise (posting blinds is not voluntary);
--   PFR    the player raised preflop;
--   3-bet  a preflop raise made when exactly one raise came before it; the opportunity is any preflop
--          action taken when exactly one raise came before it;
--   saw_flop          dealt in, did not fold preflop, and the hand dealt a flop;
--   went_to_showdown  saw the flop, never folded, and two or more players never folded;
--   won_at_showdown   went to showdown and collected something.

CREATE OR REPLACE VIEW player_hands AS
WITH pre AS (
    SELECT hand_id, player, action, street,
           coalesce(sum(CASE WHEN street = 'preflop' AND action = 'raise' THEN 1 ELSE 0 END)
               OVER (PARTITION BY hand_id ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS raises_before,
           is_all_in
    FROM actions
), per_player AS (
    SELECT hand_id, player,
           bool_or(street = 'preflop' AND action IN ('call', 'bet', 'raise')) AS vpip,
           bool_or(street = 'preflop' AND action = 'raise') AS pfr,
           bool_or(street = 'preflop' AND action = 'raise' AND raises_before = 1) AS three_bet,
           bool_or(street = 'preflop' AND action NOT LIKE 'post%' AND raises_before = 1) AS three_bet_opportunity,
           bool_or(street = 'preflop' AND action = 'fold') AS folded_preflop,
           bool_or(action = 'fold') AS folded,
           bool_or(is_all_in) AS all_in
    FROM pre GROUP BY hand_id, player
), flop AS (
    SELECT hand_id, bool_or(len(cards) >= 3) AS has_flop FROM boards GROUP BY hand_id
), base AS (
    SELECT s.hand_id, h.started_at, h.day, h.table_name, h.tournament_id, h.is_tournament, h.game, h.limit_type,
           h.currency, h.big_blind, s.player, s.seat, s.position, s.stack_start, s.put_in, s.collected,
           s.net AS net_won,
           CASE WHEN h.big_blind > 0 THEN round(s.net::DOUBLE / h.big_blind::DOUBLE, 4) END AS net_won_bb,
           coalesce(p.vpip, false) AS vpip,
           coalesce(p.pfr, false) AS pfr,
           coalesce(p.three_bet, false) AS three_bet,
           coalesce(p.three_bet_opportunity, false) AS three_bet_opportunity,
           NOT coalesce(p.folded_preflop, false) AND coalesce(f.has_flop, false) AS saw_flop,
           NOT coalesce(p.folded, false) AS never_folded,
           coalesce(p.all_in, false) AS all_in,
           s.is_hero, h.all_cards_known
    FROM seats s
    JOIN hands h USING (hand_id)
    LEFT JOIN per_player p ON p.hand_id = s.hand_id AND p.player = s.player
    LEFT JOIN flop f ON f.hand_id = s.hand_id
    WHERE s.dealt_in
)
SELECT hand_id, started_at, day, table_name, tournament_id, is_tournament, game, limit_type, currency, big_blind,
       player, seat, position, stack_start, put_in, collected, net_won, net_won_bb,
       vpip, pfr, three_bet, three_bet_opportunity, saw_flop,
       saw_flop AND never_folded AND count(*) FILTER (WHERE never_folded) OVER (PARTITION BY hand_id) >= 2 AS went_to_showdown,
       saw_flop AND never_folded AND count(*) FILTER (WHERE never_folded) OVER (PARTITION BY hand_id) >= 2
           AND collected > 0 AS won_at_showdown,
       all_in, is_hero, all_cards_known
FROM base;

COMMENT ON VIEW player_hands IS 'One row per player dealt in per hand, with the hand''s context, money (put_in, collected, net_won, net_won_bb) and the usual tracker flags (vpip, pfr, three_bet and its opportunity, saw_flop, went_to_showdown, won_at_showdown, all_in).';

CREATE OR REPLACE VIEW player_stats AS
SELECT player,
       count(*) AS hands,
       count(DISTINCT day) AS days,
       min(started_at) AS first_hand_at,
       max(started_at) AS last_hand_at,
       round(100.0 * avg(vpip::INTEGER), 1) AS vpip_pct,
       round(100.0 * avg(pfr::INTEGER), 1) AS pfr_pct,
       round(100.0 * sum(three_bet::INTEGER) / nullif(sum(three_bet_opportunity::INTEGER), 0), 1) AS three_bet_pct,
       round(100.0 * sum(went_to_showdown::INTEGER) / nullif(sum(saw_flop::INTEGER), 0), 1) AS wtsd_pct,
       round(100.0 * sum(won_at_showdown::INTEGER) / nullif(sum(went_to_showdown::INTEGER), 0), 1) AS wsd_pct,
       round(100.0 * sum(net_won_bb) / nullif(count(net_won_bb), 0), 2) AS bb_per_100,
       sum(net_won) FILTER (WHERE NOT is_tournament) AS cash_net_won,
       count(*) FILTER (WHERE is_tournament) AS tournament_hands
FROM player_hands
GROUP BY player;

COMMENT ON VIEW player_stats IS 'Per player: hands, days played, VPIP %, PFR %, 3-bet % (over 3-bet opportunities), WTSD % (over flops seen), W$SD % (over showdowns), bb/100, net won at cash tables (mixed currencies are summed as numbers: filter by currency in player_hands for money).';

CREATE OR REPLACE VIEW hand_summary AS
SELECT h.hand_id, h.started_at, h.day, h.table_name, h.tournament_id, h.game, h.limit_type, h.currency,
       h.small_blind, h.big_blind, h.n_players, h.total_pot, h.rake,
       (SELECT list(DISTINCT c.player ORDER BY c.player) FROM collections c WHERE c.hand_id = h.hand_id) AS winners,
       (SELECT b.cards FROM boards b WHERE b.hand_id = h.hand_id AND b.run = 1) AS board,
       (SELECT count(*) FROM actions a WHERE a.hand_id = h.hand_id) AS n_actions,
       h.source_file, h.source_line
FROM hands h;

COMMENT ON VIEW hand_summary IS 'One row per hand: when, where, stakes, players, pot, rake, who won, the board, how many action lines, and where it was read from.';

CREATE OR REPLACE VIEW quarantine_summary AS
SELECT input_kind, reason, count(*) AS n, count(DISTINCT source_file) AS files,
       min(quarantined_at) AS first_at, max(quarantined_at) AS last_at
FROM quarantine
GROUP BY input_kind, reason;

COMMENT ON VIEW quarantine_summary IS 'Quarantined input counted by kind and reason: what went wrong how often, in how many files.';

CREATE OR REPLACE VIEW pair_hands AS
SELECT a.player AS player_a, b.player AS player_b, count(*) AS hands_together,
       sum(a.net_won_bb) AS a_net_bb, sum(b.net_won_bb) AS b_net_bb,
       count(DISTINCT a.table_name) AS tables
FROM player_hands a
JOIN player_hands b ON a.hand_id = b.hand_id AND a.player < b.player
GROUP BY a.player, b.player;

COMMENT ON VIEW pair_hands IS 'Every pair of players dealt into the same hands: how many hands together, on how many tables, and each one''s net result in big blinds over those hands.';
