"""The seat hand-off detector's warehouse queries: per-hand rows of an account's event, the field's, the
decisions and their timing, the account's own history (bound to the registered frame ``_rb_at``)."""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.features import gameplay as gp
from detectors.features.gameplay.cards import CARD_INDEX
from detectors.features import identity as idf
from detectors.seat_handoff.statistics import _BINS, _DEPTH_BB, _SHORT_MAX

ACTS = ("fold", "check", "call", "bet", "raise")


# per (account, hand), shared by the event's hands and the account's history: the preflop entry
# decision and its situation, and the action counts of the action mix
_PER_HAND_COLS = """
       any_value(h.game) AS game,
       -- the entry decision preflop: 2 entered with a raise, 1 entered without raising (put chips
       -- in voluntarily), 0 folded without entering, -1 neither (a big blind's check, no decision)
       CASE WHEN bool_or(a.street = 'preflop' AND a.action IN ('bet','raise')) THEN 2
            WHEN bool_or(a.street = 'preflop' AND a.action = 'call') THEN 1
            WHEN bool_or(a.street = 'preflop' AND a.action = 'fold') THEN 0 ELSE -1 END AS entry,
       -- the entry decision's situation: facing a raise (more than a big blind to call), the stack in big blinds
       coalesce(arg_min(a.to_call, a.seq) FILTER (WHERE a.street = 'preflop') > any_value(h.big_blind), FALSE) AS facing,
       any_value(s.stack_start) / nullif(any_value(h.big_blind), 0) AS stack_bb,
       -- the players dealt in (short-handed tables widen every range)
       any_value(h.n_players) AS n_dealt,
       -- the cards dealt are known whatever was played (operator view, or the hero's own hand): not
       -- only those shown down, which only entered hands reach
       bool_or(h.all_cards_known OR coalesce(h.hero = a.player, FALSE)) AS dealt_known,
       count(*) FILTER (WHERE a.action = 'fold')  AS n_fold,
       count(*) FILTER (WHERE a.action = 'check') AS n_check,
       count(*) FILTER (WHERE a.action = 'call')  AS n_call,
       count(*) FILTER (WHERE a.action = 'bet')   AS n_bet,
       count(*) FILTER (WHERE a.action = 'raise') AS n_raise"""

# the hole cards of each (hand, player), joined to per-hand rows
_HOLE_JOIN = """LEFT JOIN (SELECT hand_id, player, any_value(cards) AS cards FROM hole_cards GROUP BY ALL) hc"""

# the starting hand's percentile of a Hold'em hand's first two hole cards, from the registered ``_rb_strength``
# (:func:`strength_table`): the cards and the game never reach Python
_STRENGTH_JOIN = """LEFT JOIN _rb_strength st ON x.game = 'holdem' AND st.c1 = hc.cards[1] AND st.c2 = hc.cards[2]"""

# per (account, tournament, hand) action counts and bet sizes of voluntary actions (in the order they were made: the
# same lists whatever batch of account-events a read holds)
_HAND_ROWS_SQL = f"""
SELECT x.* EXCLUDE (game), st.strength FROM (
SELECT h.tournament_id, a.player AS account, a.hand_id, h.started_at,{_PER_HAND_COLS},
       max(CASE WHEN a.street = 'preflop' AND a.action IN ('call','bet','raise') THEN 1 ELSE 0 END) AS vpip,
       list(a.amount / a.pot_before ORDER BY a.seq) FILTER (WHERE a.action IN ('bet','raise') AND a.pot_before > 0
                                             AND NOT a.is_all_in) AS sizes
FROM actions a JOIN hands h USING (hand_id)
JOIN _rb_at t ON t.account = a.player AND t.tournament_id = h.tournament_id
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
GROUP BY ALL
) x {_HOLE_JOIN}
  ON hc.hand_id = x.hand_id AND hc.player = x.account
{_STRENGTH_JOIN}
"""

# (a seat sitting out acts by itself, folding at once: no person's decision, left out here as in the hands)
_DECISIONS_SQL = """
SELECT h.tournament_id, d.account, d.hand_id, h.started_at, ln(greatest(d.ms, 1)) AS log_ms
FROM decisions d JOIN hands h USING (hand_id)
JOIN _rb_at t ON t.account = d.account AND t.tournament_id = h.tournament_id
LEFT JOIN seats s ON s.hand_id = d.hand_id AND s.player = d.account
WHERE NOT coalesce(s.sitting_out, FALSE)
"""

# Every decision time (with its class, statistics.CLASSES: a preflop fold quick, a decision over a third of the
# stack or more slow, the rest in between; a preflop fold to such a bet read as statistics.FOLD_TO_BIG, counted with
# the class its times resemble in the population by statistics.fold_to_big_class) of the accounts of the
# registered ``_rb_ac`` (``account``, ``code``), the account, the tournament and the device coded by DuckDB
# (``acc``; ``tc`` and ``dc`` from ``_rb_tc`` and ``_rb_dc``, -1 for none): no name reaches Python. Coded before the
# as-of join with the sessions (by the account's code), which holds its rows whole: every row it holds is narrow
_TIMING_CODES_SQL = """
WITH _rb_seats AS (SELECT hand_id, player, stack_start, sitting_out FROM seats WHERE player IN (SELECT account FROM _rb_ac)),
d AS (
  SELECT acc.code AS acc, CAST(coalesce(t.tc, -1) AS INTEGER) AS tc, h.started_at, ln(greatest(d.ms, 1)) AS log_ms,
         CASE WHEN a.street = 'preflop' AND a.action = 'fold'
                   THEN CASE WHEN s.stack_start > 0 AND a.to_call * 3 >= s.stack_start THEN 3 ELSE 0 END
              WHEN a.is_all_in OR (s.stack_start > 0 AND (a.to_call * 3 >= s.stack_start
                   OR (a.action IN ('bet', 'raise') AND coalesce(a.raise_to, a.amount) * 3 >= s.stack_start))) THEN 2
              ELSE 1 END AS cls
  FROM decisions d JOIN _rb_ac acc ON acc.account = d.account
  JOIN hands h USING (hand_id)
  JOIN actions a ON a.hand_id = d.hand_id AND a.seq = d.seq
  LEFT JOIN _rb_seats s ON s.hand_id = d.hand_id AND s.player = d.account
  LEFT JOIN _rb_tc t ON t.tournament_id = h.tournament_id
  WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
),
ss AS (SELECT acc.code AS acc, s.login_at, CAST(coalesce(dv.dc, -1) AS INTEGER) AS dc
       FROM sessions s JOIN _rb_ac acc ON acc.account = s.account LEFT JOIN _rb_dc dv ON dv.device = s.device)
SELECT d.acc, d.tc, d.started_at, d.log_ms, d.cls, CAST(coalesce(ss.dc, -1) AS INTEGER) AS dc
FROM d ASOF LEFT JOIN ss ON d.acc = ss.acc AND d.started_at >= ss.login_at
"""

# _HOLE_JOIN's hole cards of the accounts of ``_rb_ac`` only (the rows it joins): not every player's cards grouped for
# each batch of accounts
_HOLE_JOIN_AC = """LEFT JOIN (SELECT hand_id, player, any_value(cards) AS cards FROM hole_cards
           WHERE player IN (SELECT account FROM _rb_ac) GROUP BY ALL) hc"""

# The account's own tournament play, hand by hand, with the device of the session it was played under, for the
# accounts of ``_rb_ac``, coded as _TIMING_CODES_SQL's (no hand, no name returned)
_HISTORY_CODES_SQL = f"""
WITH _rb_seats AS (SELECT hand_id, player, stack_start, sitting_out FROM seats WHERE player IN (SELECT account FROM _rb_ac)),
x AS (
  SELECT acc.code AS acc, a.player AS account, a.hand_id, h.tournament_id, h.started_at,{_PER_HAND_COLS}
  FROM actions a JOIN hands h USING (hand_id) JOIN _rb_ac acc ON acc.account = a.player
  LEFT JOIN _rb_seats s ON s.hand_id = a.hand_id AND s.player = a.player
  WHERE a.action NOT LIKE 'post%' AND h.is_tournament AND NOT coalesce(s.sitting_out, FALSE)
  GROUP BY ALL
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM _rb_ac)),
y AS (SELECT x.*, ss.device FROM x ASOF LEFT JOIN ss ON x.account = ss.account AND x.started_at >= ss.login_at)
SELECT x.* EXCLUDE (game, account, hand_id, tournament_id, device), CAST(coalesce(t.tc, -1) AS INTEGER) AS tc,
       CAST(coalesce(dv.dc, -1) AS INTEGER) AS dc, st.strength FROM y x
{_HOLE_JOIN_AC}
  ON hc.hand_id = x.hand_id AND hc.player = x.account
{_STRENGTH_JOIN}
LEFT JOIN _rb_tc t ON t.tournament_id = x.tournament_id
LEFT JOIN _rb_dc dv ON dv.device = x.device
"""


def _with_strength(df: pl.DataFrame) -> pl.DataFrame:
    """The entry decision of each hand by the starting hand (``_range_p_many``): ``rcls`` 2
    entered with a raise, 1 entered without raising (put chips in voluntarily preflop), 0
    folded preflop without entering, -1 no entry decision or no starting hand known as dealt
    (in the player view other players' cards are known only when shown down, which only
    entered hands reach: a sample chosen by the very decision tested); ``rstr`` its stratum: the starting hand's percentile
    among the 1,326 in bins of 10 (``_BINS``) (``gameplay.starting_hand_percentile``: Hold'em, cards known),
    by stack depth (``_DEPTH_BB``), by facing a raise and by a short-handed table (``n_dealt``, the
    players dealt in, at most ``_SHORT_MAX``); the percentile read from a ``strength`` column where the rows have
    one (the queries' join with :func:`strength_table`), else from the ``hole`` and ``game`` columns; those dropped."""
    drop = ["strength"] if "strength" in df.columns else ["hole", "game"]
    if df.height == 0:
        return df.drop(drop).with_columns(rstr=pl.lit(-1, pl.Int64), rcls=pl.lit(-1, pl.Int64))
    st = (df["strength"] if "strength" in df.columns else gp.starting_hand_percentile(df)).cast(pl.Float64)
    st = st.fill_null(float("nan")).to_numpy()
    entry = df["entry"].to_numpy()
    known = df["dealt_known"].fill_null(False).to_numpy().astype(bool)
    rcls = np.where(np.isnan(st) | (entry < 0) | ~known, -1, entry).astype(np.int64)
    depth = np.searchsorted(_DEPTH_BB, df["stack_bb"].cast(pl.Float64).fill_null(1e9).to_numpy(), side="left")
    facing = df["facing"].fill_null(False).to_numpy().astype(np.int64)
    short = (df["n_dealt"].cast(pl.Float64).fill_null(1e9).to_numpy() <= _SHORT_MAX).astype(np.int64)
    dec = np.clip(np.floor(np.nan_to_num(st) * _BINS), 0, _BINS - 1).astype(np.int64)
    rstr = np.where(rcls >= 0, dec + _BINS * (depth + (len(_DEPTH_BB) + 1) * (facing + 2 * short)), -1)
    return df.drop(drop).with_columns(rstr=pl.Series(rstr), rcls=pl.Series(rcls))


def strength_table() -> pl.DataFrame:
    """Every ordered pair of card texts (``c1``, ``c2``: the first two hole cards as ``hole_cards`` lists them) with
    ``strength``, the Hold'em starting hand's percentile :func:`gameplay.starting_hand_percentile` gives it: the
    queries' ``_rb_strength``, 2,704 rows."""
    texts = list(CARD_INDEX)
    c1, c2 = [a for a in texts for _ in texts], [b for _ in texts for b in texts]
    st = gp.starting_hand_percentile(pl.DataFrame({"hole": [[a, b] for a, b in zip(c1, c2)], "game": ["holdem"] * len(c1)}))
    return pl.DataFrame({"c1": c1, "c2": c2, "strength": st.cast(pl.Float64)})


# logins during an account's play in an event from a device or network other than the one the event began on, with
# the device's and the network's history (SeatHandoffDetector._session_candidates)
_SESSION_CANDIDATES_SQL = ("""
        WITH s AS (
          SELECT account, session, ip, device, login_at, logout_at,
                 """ + idf.NET_SQL + """ AS net
          FROM sessions
        ),
        s2 AS (
          SELECT *,
            login_at = min(login_at) OVER (PARTITION BY account, device) AS new_device,
            login_at = min(login_at) OVER (PARTITION BY account, net) AS new_net,
            count(*) OVER (PARTITION BY account, device) AS device_sessions,
            count(*) OVER (PARTITION BY account) AS account_sessions
          FROM s
        ),
        -- how many distinct accounts ever used each network (a home's few, a carrier's NAT or a
        -- cafe's many), and on how many distinct days each account used each of its networks: the
        -- "two places at once" structure (``_pool``: a seat left from the account's own home-sized
        -- network, taken on another home-sized one)
        net_acc AS (
          SELECT net, count(DISTINCT account) AS net_accounts FROM s WHERE net IS NOT NULL GROUP BY ALL
        ),
        acc_net_days AS (
          SELECT account, net, count(DISTINCT CAST(login_at AS DATE)) AS net_days
          FROM s WHERE net IS NOT NULL AND login_at IS NOT NULL GROUP BY ALL
        ),
        acct AS (
          SELECT s.player AS account, h.tournament_id,
                 min(h.started_at) AS t_first, max(h.started_at) AS t_last, count(*) AS n_hands
          FROM seats s JOIN hands h USING (hand_id)
          WHERE h.is_tournament AND h.tournament_id IS NOT NULL AND s.dealt_in AND NOT s.sitting_out
          GROUP BY ALL
        ),
        init AS (
          SELECT acct.account, acct.tournament_id,
                 arg_max(s2.device, s2.login_at) AS dev0, arg_max(s2.net, s2.login_at) AS net0,
                 arg_max(s2.logout_at, s2.login_at) AS logout0
          FROM acct JOIN s2 ON s2.account = acct.account AND s2.login_at <= acct.t_first
          GROUP BY ALL
        ),
        -- the session of the account that logged out last, at most handover_s before a login:
        -- the one a hand-over replaces (an account in several events at once has several
        -- sessions, and the last login before the event's first hand need not be the one
        -- that played it)
        ho AS (
          SELECT y.account, y.session,
                 arg_max(x.device, x.logout_at) AS ho_dev, arg_max(x.net, x.logout_at) AS ho_net
          FROM s y JOIN s x ON x.account = y.account AND x.session <> y.session
           AND x.logout_at <= y.login_at AND x.logout_at >= y.login_at - to_microseconds(CAST(? * 1e6 AS BIGINT))
          GROUP BY ALL
        ),
        c0 AS (
          SELECT acct.account, acct.tournament_id, s2.session, s2.login_at, s2.device, s2.ip, s2.net,
                 s2.new_device AS first_login_of_device,
                 s2.new_net, s2.device_sessions, s2.account_sessions, acct.n_hands,
                 init.dev0, init.net0, ho.ho_dev, ho.ho_net,
                 -- a hand-over: the session the account started the event on is closed by then (a
                 -- login while it stays open is the owner opening another table elsewhere, not
                 -- someone taking this seat); without logout times every such login counts
                 (init.logout0 IS NULL OR init.logout0 <= s2.login_at + INTERVAL 60 SECOND)
                   AND (s2.device IS DISTINCT FROM init.dev0 OR s2.net IS DISTINCT FROM init.net0) AS from_start,
                 -- ... or it replaces, within handover_s, a session on another device or network
                 -- that has just logged out (the owner's other sessions may stay open)
                 ho.ho_dev IS NOT NULL
                   AND (s2.device IS DISTINCT FROM ho.ho_dev OR s2.net IS DISTINCT FROM ho.ho_net) AS from_logout,
                 -- ... or a re-login on the device and network of that session (``relogins``): the
                 -- owner's own return, or someone at the owner's own machine
                 ho.ho_dev IS NOT NULL AND s2.device IS NOT NULL
                   AND s2.device = ho.ho_dev AND s2.net IS NOT DISTINCT FROM ho.ho_net AS relogin
          FROM acct JOIN init USING (account, tournament_id)
          JOIN s2 ON s2.account = acct.account AND s2.login_at > acct.t_first
           AND (s2.login_at <= acct.t_last OR s2.login_at < acct.t_last + to_microseconds(CAST(? * 1e6 AS BIGINT)))
          LEFT JOIN ho ON ho.account = s2.account AND ho.session = s2.session
        ),
        c AS (
          SELECT account, tournament_id, session, login_at, device, ip,
                 CASE WHEN from_start THEN dev0 ELSE ho_dev END AS prev_device,
                 CASE WHEN from_start THEN net0 ELSE ho_net END AS prev_net, net,
                 device IS DISTINCT FROM CASE WHEN from_start THEN dev0 ELSE ho_dev END AS device_changed,
                 net IS DISTINCT FROM CASE WHEN from_start THEN net0 ELSE ho_net END AS net_changed,
                 first_login_of_device, new_net, device_sessions, account_sessions, n_hands
          FROM c0 WHERE from_start OR from_logout OR (relogin AND ?)
        ),
        -- a device is new to the account when its first login was itself such a take-over (in this
        -- event or an earlier one), not the owner's own start of play
        new_dev AS (
          SELECT DISTINCT account, device FROM c WHERE first_login_of_device
        ),
        -- the account's other sessions still open at the login (its owner still at
        -- another table), and the seconds since its last logout
        oth AS (
          SELECT c.account, c.session,
                 count(*) FILTER (WHERE x.logout_at > c.login_at + INTERVAL 60 SECOND) AS others_open,
                 min(epoch(c.login_at) - epoch(x.logout_at)) FILTER (WHERE x.logout_at <= c.login_at) AS since_logout
          FROM c JOIN s x ON x.account = c.account AND x.session <> c.session AND x.login_at < c.login_at
          GROUP BY ALL
        ),
        -- the sessions of each of the account's devices that start play of its own: logins outside
        -- every span of the account's tournament play (before an event's first hand, for cash
        -- tables), not in mid-event (a take-over, or a reconnect of the device holding the seat)
        dev_own AS (
          SELECT s2.account, s2.device, count(*) AS dev_own_sessions
          FROM s2 LEFT JOIN acct ON acct.account = s2.account AND s2.login_at > acct.t_first
           AND (s2.login_at <= acct.t_last OR s2.login_at < acct.t_last + to_microseconds(CAST(? * 1e6 AS BIGINT)))
          WHERE acct.account IS NULL AND s2.device IS NOT NULL
          GROUP BY ALL
        ),
        -- every quick hand-over login of each of the account's devices (within quick_s of a
        -- logout, from another device), those too short to test included: the structure of
        -- a helper's machine is judged on all its logins, not only on the tested ones
        dev_ho AS (
          SELECT c.account, c.device,
                 count(DISTINCT c.session) AS dev_quick_takeovers,
                 bool_or(c.new_net) AS dev_takeover_new_net
          FROM c JOIN oth o ON o.account = c.account AND o.session = c.session
          WHERE c.device IS NOT NULL AND c.device_changed AND o.since_logout <= ?
          GROUP BY ALL
        )
        SELECT c.*, nd.device IS NOT NULL AS new_device,
               coalesce(o.others_open, 0) AS others_open, o.since_logout,
               coalesce(dh.dev_quick_takeovers, 0) AS dev_quick_takeovers,
               coalesce(dh.dev_takeover_new_net, FALSE) AS dev_takeover_new_net,
               coalesce(dow.dev_own_sessions, 0) AS dev_own_sessions,
               na.net_accounts, pna.net_accounts AS prev_net_accounts, coalesce(pnd.net_days, 0) AS prev_net_days
        FROM c LEFT JOIN new_dev nd ON nd.account = c.account AND nd.device IS NOT DISTINCT FROM c.device
        LEFT JOIN net_acc na ON na.net = c.net
        LEFT JOIN net_acc pna ON pna.net = c.prev_net
        LEFT JOIN acc_net_days pnd ON pnd.account = c.account AND pnd.net = c.prev_net
        LEFT JOIN dev_own dow ON dow.account = c.account AND dow.device = c.device
        LEFT JOIN oth o ON o.account = c.account AND o.session = c.session
        LEFT JOIN dev_ho dh ON dh.account = c.account AND dh.device = c.device
        ORDER BY c.account, c.tournament_id, c.login_at
        """)
