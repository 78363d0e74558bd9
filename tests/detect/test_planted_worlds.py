"""The planted worlds of tests/detect/conftest.py are played once per process and handed out as copies.

Many tests build the same seeded world and then change its rows; a copy must hold exactly what a new
build would (every table row for row, in order, and the labels), and what one test changes must never
reach the next caller.
"""

from __future__ import annotations

from tests.detect.conftest import _built_once, _play_ko_world, _play_world

SOFT = dict(n_players=12, n_hands=200, seed=4, soft=[(("p01", "p02"), 0.6)], dump=[(("p03", "p04"), 0.5)])
KO = dict(n_hands=150, rate=0.5, seed=13)


def _tables(world) -> dict:
    """Every table of the world's warehouse as an Arrow table, by name."""
    names = [r[0] for r in world.con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal "
                                             "ORDER BY table_name").fetchall()]
    return {t: world.con.table(t).to_arrow_table() for t in names}


def _same(a, b) -> None:
    ta, tb = _tables(a), _tables(b)
    assert ta.keys() == tb.keys()
    for t in ta:
        assert ta[t].schema.equals(tb[t].schema) and ta[t].equals(tb[t]), t
    assert {k: v for k, v in vars(a).items() if k != "con"} == {k: v for k, v in vars(b).items() if k != "con"}


def test_a_world_is_played_once_and_each_caller_gets_a_copy_of_a_new_build():
    for play, kwargs in ((_play_world, SOFT), (_play_ko_world, KO)):
        played = []
        build = _built_once(lambda **kw: played.append(kw) or play(**kw))  # noqa: B023 (called in this loop)
        first = build(**kwargs)
        _same(first, play(**kwargs))
        # a test changes its copy: rows and labels
        first.con.execute("DELETE FROM actions WHERE seq > 2")
        first.con.execute("UPDATE seats SET net = 0")
        for v in vars(first).values():
            if isinstance(v, (list, dict)):
                v.clear()
        second = build(**kwargs)
        assert len(played) == 1
        _same(second, play(**kwargs))
        assert second.con is not first.con
