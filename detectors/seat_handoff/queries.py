"""The seat hand-off detector's warehouse queries: per-hand rows of an account's event, the field's, the
decisions and their timing, the account's own history (bound to the registered frame ``_rb_at``)."""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.features import gameplay as gp
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

# the hole cards of each (hand, player), joined to per-hand rows as ``hole``
_HOLE_JOIN = """LEFT JOIN (SELECT hand_id, player, any_value(cards) AS cards FROM hole_cards GROUP BY ALL) hc"""

# per (account, tournament, hand) action counts and bet sizes of voluntary actions
_HAND_ROWS_SQL = f"""
SELECT x.*, hc.cards AS hole FROM (
SELECT h.tournament_id, a.player AS account, a.hand_id, h.started_at,{_PER_HAND_COLS},
       max(CASE WHEN a.street = 'preflop' AND a.action IN ('call','bet','raise') THEN 1 ELSE 0 END) AS vpip,
       list(a.amount / a.pot_before) FILTER (WHERE a.action IN ('bet','raise') AND a.pot_before > 0
                                             AND NOT a.is_all_in) AS sizes
FROM actions a JOIN hands h USING (hand_id)
JOIN _rb_at t ON t.account = a.player AND t.tournament_id = h.tournament_id
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
GROUP BY ALL
) x {_HOLE_JOIN}
  ON hc.hand_id = x.hand_id AND hc.player = x.account
"""

# every player's voluntary actions per hand in the candidates' tournaments (the field)
_FIELD_SQL = """
SELECT h.tournament_id, h.started_at, a.player AS account,
       count(*) FILTER (WHERE a.action = 'fold')  AS n_fold,
       count(*) FILTER (WHERE a.action = 'check') AS n_check,
       count(*) FILTER (WHERE a.action = 'call')  AS n_call,
       count(*) FILTER (WHERE a.action = 'bet')   AS n_bet,
       count(*) FILTER (WHERE a.action = 'raise') AS n_raise
FROM actions a JOIN hands h USING (hand_id)
LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
WHERE a.action NOT LIKE 'post%' AND NOT coalesce(s.sitting_out, FALSE)
  AND h.tournament_id IN (SELECT DISTINCT tournament_id FROM _rb_at)
GROUP BY ALL
"""

_DECISIONS_SQL = """
SELECT h.tournament_id, d.account, d.hand_id, h.started_at, ln(greatest(d.ms, 1)) AS log_ms
FROM decisions d JOIN hands h USING (hand_id)
JOIN _rb_at t ON t.account = d.account AND t.tournament_id = h.tournament_id
"""

# every decision time of the candidate accounts (cash and tournaments), with its
# decision class and the device of the session it was played under (the latest
# login of the account before the hand): the account's own timing history.
# Classes follow how decision times are made: a preflop fold is quick, a decision
# over a third of the stack or more (all-in, a big call or bet) is slow, the rest
# in between; the classes are compared separately.
_TIMING_SQL = """
WITH acc AS (SELECT DISTINCT account FROM _rb_at),
d AS (
  SELECT d.account, d.hand_id, h.tournament_id, h.started_at, ln(greatest(d.ms, 1)) AS log_ms,
         CASE WHEN a.street = 'preflop' AND a.action = 'fold' THEN 0
              WHEN a.is_all_in OR (s.stack_start > 0 AND (a.to_call * 3 >= s.stack_start
                   OR (a.action IN ('bet', 'raise') AND coalesce(a.raise_to, a.amount) * 3 >= s.stack_start))) THEN 2
              ELSE 1 END AS cls
  FROM decisions d JOIN acc ON acc.account = d.account
  JOIN hands h USING (hand_id)
  JOIN actions a ON a.hand_id = d.hand_id AND a.seq = d.seq
  LEFT JOIN seats s ON s.hand_id = d.hand_id AND s.player = d.account
  WHERE a.action NOT LIKE 'post%'
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM acc))
SELECT d.*, ss.device FROM d ASOF LEFT JOIN ss ON d.account = ss.account AND d.started_at >= ss.login_at
"""

# the account's own tournament play, hand by hand, with the device of the session
# it was played under: the action-mix history (tournament hands only: cash stacks
# are deeper and change the mix)
_HISTORY_SQL = f"""
WITH acc AS (SELECT DISTINCT account FROM _rb_at),
x AS (
  SELECT a.player AS account, a.hand_id, h.tournament_id, h.started_at,{_PER_HAND_COLS}
  FROM actions a JOIN hands h USING (hand_id) JOIN acc ON acc.account = a.player
  LEFT JOIN seats s ON s.hand_id = a.hand_id AND s.player = a.player
  WHERE a.action NOT LIKE 'post%' AND h.is_tournament AND NOT coalesce(s.sitting_out, FALSE)
  GROUP BY ALL
),
ss AS (SELECT account, login_at, device FROM sessions WHERE account IN (SELECT account FROM acc)),
y AS (SELECT x.*, ss.device FROM x ASOF LEFT JOIN ss ON x.account = ss.account AND x.started_at >= ss.login_at)
SELECT y.*, hc.cards AS hole FROM y
{_HOLE_JOIN}
  ON hc.hand_id = y.hand_id AND hc.player = y.account
"""


def _with_strength(df: pl.DataFrame) -> pl.DataFrame:
    """The entry decision of each hand by the starting hand (``_range_p_many``): ``rcls`` 2
    entered with a raise, 1 entered without raising (put chips in voluntarily preflop), 0
    folded preflop without entering, -1 no entry decision or no starting hand known as dealt
    (in the player view other players' cards are known only when shown down, which only
    entered hands reach: a sample chosen by the very decision tested); ``rstr`` its stratum: the starting hand's percentile
    among the 1,326 in bins of 10 (``_BINS``) (``gameplay.starting_hand_percentile``: Hold'em, cards known),
    by stack depth (``_DEPTH_BB``), by facing a raise and by a short-handed table (``n_dealt``, the
    players dealt in, at most ``_SHORT_MAX``); the ``hole`` and ``game`` columns dropped."""
    if df.height == 0:
        return df.drop("hole", "game").with_columns(rstr=pl.lit(-1, pl.Int64), rcls=pl.lit(-1, pl.Int64))
    st = gp.starting_hand_percentile(df).fill_null(float("nan")).to_numpy()
    entry = df["entry"].to_numpy()
    known = df["dealt_known"].fill_null(False).to_numpy().astype(bool)
    rcls = np.where(np.isnan(st) | (entry < 0) | ~known, -1, entry).astype(np.int64)
    depth = np.searchsorted(_DEPTH_BB, df["stack_bb"].cast(pl.Float64).fill_null(1e9).to_numpy(), side="left")
    facing = df["facing"].fill_null(False).to_numpy().astype(np.int64)
    short = (df["n_dealt"].cast(pl.Float64).fill_null(1e9).to_numpy() <= _SHORT_MAX).astype(np.int64)
    dec = np.clip(np.floor(np.nan_to_num(st) * _BINS), 0, _BINS - 1).astype(np.int64)
    rstr = np.where(rcls >= 0, dec + _BINS * (depth + (len(_DEPTH_BB) + 1) * (facing + 2 * short)), -1)
    return df.drop("hole", "game").with_columns(rstr=pl.Series(rstr), rcls=pl.Series(rcls))
