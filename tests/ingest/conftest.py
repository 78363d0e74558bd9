"""Shared by the ingest tests: the invariants every stored hand must satisfy."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest


def invariant_breaks(tables: dict[str, pl.DataFrame]) -> dict[str, int]:
    """How many stored hands (or rows) break each invariant; all zero for a sound parse.

    Computed here, in DuckDB, from the parsed tables (not from the parser's own checks): money (what was put in,
    the pot, what was collected plus rake, each stack after the hand), the actions against what each seat put in,
    the running ``seq`` and ``pot_before``, and the betting (nobody checks or bets facing a bet, calls nothing or
    more than is owed, raises without raising, or acts after folding)."""
    con = duckdb.connect()
    for name, df in tables.items():
        con.register(name, df.to_arrow())
    money = con.execute("""
        WITH s AS (SELECT hand_id, sum(put_in) put, min(stack_end) min_end,
                          bool_and(stack_end = stack_start - put_in + collected) ends_ok,
                          bool_and(net = collected - put_in) net_ok
                   FROM seats GROUP BY hand_id),
             c AS (SELECT hand_id, sum(amount) FILTER (WHERE kind = 'pot') coll FROM collections GROUP BY hand_id)
        SELECT count(*) FILTER (WHERE s.put > h.total_pot),
               count(*) FILTER (WHERE coalesce(c.coll, 0) + h.rake > h.total_pot),
               count(*) FILTER (WHERE s.min_end < 0 OR NOT s.ends_ok OR NOT s.net_ok),
               count(*) FILTER (WHERE s.hand_id IS NULL)
        FROM hands h LEFT JOIN s USING (hand_id) LEFT JOIN c USING (hand_id)
    """).fetchone()
    breaks = dict(zip(["put in above the pot", "paid out above the pot", "stack or net off", "no seats"], money))
    breaks["actions differ from put in"] = con.execute("""
        SELECT count(*) FROM (
          SELECT s.hand_id, s.player, s.put_in + s.returned AS bet, coalesce(sum(a.amount), 0) AS acted
          FROM seats s LEFT JOIN actions a ON a.hand_id = s.hand_id AND a.player = s.player
          GROUP BY ALL) WHERE bet <> acted
    """).fetchone()[0]
    breaks["seq or pot_before off"] = con.execute("""
        SELECT count(*) FROM (
          SELECT hand_id, seq, pot_before,
                 row_number() OVER w - 1 AS rn,
                 coalesce(sum(amount) OVER (PARTITION BY hand_id ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS pb
          FROM actions WINDOW w AS (PARTITION BY hand_id ORDER BY seq)) WHERE seq <> rn OR pot_before <> pb
    """).fetchone()[0]
    breaks["impossible betting"] = con.execute("""
        SELECT count(*) FROM actions
        WHERE (action IN ('check', 'bet') AND to_call > 0)
           OR (action = 'call' AND (to_call = 0 OR amount > to_call))
           OR (action = 'raise' AND amount <= to_call)
    """).fetchone()[0]
    breaks["acts after folding"] = con.execute("""
        SELECT count(*) FROM (
          SELECT action, count(*) FILTER (WHERE action = 'fold') OVER (
                     PARTITION BY hand_id, player ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS folds
          FROM actions) WHERE folds > 0
    """).fetchone()[0]
    con.close()
    return breaks


@pytest.fixture(scope="session")
def hand_invariant_breaks():
    """:func:`invariant_breaks`, for the tests that parse hands."""
    return invariant_breaks


def read_chunk(files, growing_seconds, now, chunk_bytes=None):
    """Every Batch ``ingest.chunk_parts`` makes of ``files`` (no spill) merged into one, in order: what one chunk
    brings to the loader."""
    from pipelines.lib import ingest
    from pipelines.lib.warehouse_batch import Batch

    out = Batch()
    for part in ingest.chunk_parts(files, growing_seconds, now, chunk_bytes or ingest.PARSE_BATCH_BYTES):
        out.extend(part)
        if part.files is not None:
            out.files = part.files
    return out
