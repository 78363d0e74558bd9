"""Small generated worlds shared by the world, generate and collusion tests (built once per session).

Each world is generated in-process with a record hook that keeps compact
copies of the engine's hand records, so the tests measure what the world
actually did, not what a detector thinks of it.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from datasets.presets import Preset


@dataclass
class Hand:
    hand_id: str
    tid: str | None
    level: int | None
    sb: int
    bb: int
    ante: int
    game: str
    limit: str
    dealt: list
    seats: list            # (seat, player, stack, sitting_out)
    actions: list          # (seq, street, player, kind, amount, to, all_in)
    button: int
    final: dict
    put_in: dict
    collected: dict
    rake: int
    total_pot: int
    uncalled: tuple | None
    finishes: list         # (player, place, prize)
    awards: list           # (winner, eliminated, cash, increase, new_bounty)
    bounty_of: dict
    eliminated: list
    hole: dict
    streets_seen: int
    table: str


@dataclass
class World:
    out: Path
    hands: list = field(default_factory=list)
    results: list = field(default_factory=list)

    @functools.cached_property
    def by_id(self) -> dict:
        return {h.hand_id: h for h in self.hands}


def _keep(world: World):
    def on_record(rec):
        won: dict = {}
        for c in rec.collections:
            won[c.player] = won.get(c.player, 0) + c.amount
        t = rec.tournament
        world.hands.append(Hand(
            hand_id=rec.hand_id, tid=t.tournament_id if t else None, level=t.level if t else None,
            sb=rec.config.small_blind, bb=rec.config.big_blind, ante=rec.config.ante, game=rec.config.game,
            limit=rec.config.limit, dealt=list(rec.dealt),
            seats=[(s.seat, s.player, s.stack, s.sitting_out) for s in rec.seats],
            actions=[(a.seq, a.street, a.player, a.kind, a.amount, a.to, a.all_in) for a in rec.actions],
            button=rec.button_seat, final=dict(rec.final_stacks), put_in=dict(rec.put_in), collected=won,
            rake=rec.rake, total_pot=sum(p.amount for p in rec.pots), uncalled=rec.uncalled,
            finishes=[(f.player, f.place, f.prize) for f in rec.finishes],
            awards=[(b.winner, b.eliminated, b.cash, b.increase, b.new_bounty) for b in rec.bounty_awards],
            bounty_of={s.player: s.bounty for s in rec.seats}, eliminated=list(rec.eliminated),
            hole={k: list(v) for k, v in rec.hole.items()}, streets_seen=rec.streets_seen, table=rec.table_name,
        ))
    return on_record


def _build(name: str, **kw) -> World:
    from datasets.generate import generate

    out = Path(tempfile.mkdtemp(prefix=f"railbird-world-{name}-"))
    atexit.register(shutil.rmtree, out, True)  # cached for the session, removed when pytest exits
    w = World(out)
    generate(out, progress=False, on_record=_keep(w), results_out=w.results, **kw)
    return w


@functools.lru_cache(maxsize=None)
def small_world() -> World:
    """Every kind planted, clear strengths: ~4k hands, 120 accounts."""
    return _build("small", preset="demo", seed=11, accounts=120, hands=3500)


@functools.lru_cache(maxsize=None)
def blatant_world() -> World:
    """Only soft play and chip dumping, at strength 1, in a busy cash world."""
    p = Preset(90, 5000, {"soft_play": 3, "chip_dumping": 2}, (1.0, 1.0), (0.85, 0.15, 0.0))
    return _build("blatant", preset=p, seed=5)


def test_world_data_builds_records():
    w = small_world()
    assert len(w.hands) > 1000
    assert any(h.tid for h in w.hands) and any(h.tid is None for h in w.hands)
