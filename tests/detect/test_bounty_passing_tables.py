"""Bounty passing's shove view under the honest null of a player whose shoving moves from table to table: a regular
who shoves wider at one table of a tournament (a weak player there, a short-handed final table) does not make the
players to their left look like partners, and a pair that shoves into each other at every table still stands out.
The shove rows are generated here and handed to :func:`detectors.features.gameplay.bounty_passing` in place of the
warehouse's (its two row readers replaced), so the test runs the function's own path."""

import importlib

import numpy as np
import polars as pl

from detectors.features import gameplay as gp

bp = importlib.import_module("detectors.features.gameplay.bounty_passing")


def _shove_rows(seed: int, *, sigma: float, gang: tuple[str, str] | None = None, n_players: int = 96,
                tournaments: int = 12, hands: int = 20) -> pl.DataFrame:
    """Short stacks' first decisions in ``tournaments`` knockout tournaments of ``n_players``, each tournament
    played at two stints of tables of six (``hands`` each), so that most pairs meet at one or two tables; per
    (player, stint) a logit-normal table effect of spread ``sigma``; one row per decision and player yet to act
    after it. ``gang``: the first shoves with any cards when the second is to act."""
    rng = np.random.default_rng(seed)
    players = [f"p{i:02d}" for i in range(n_players)]
    looseness = dict(zip(players, rng.normal(0.0, 0.5, len(players))))
    out: dict[str, list] = {c: [] for c in ("hand_id", "tournament_id", "table_name", "seq", "player", "partner", "cont",
                                            "stack_bb", "game", "position", "strength", "cbin", "pos", "rpos", "tix")}
    hand = 0
    for t in range(tournaments):
        for stint in range(2):
            seating = list(rng.permutation(players))
            if gang is not None:  # the gang sits together, the shover right before the partner
                for name in gang:
                    seating.remove(name)
                seating[0:0] = list(gang)
            for j in range(n_players // 6):
                table = seating[6 * j:6 * j + 6]
                effect = {p: rng.normal(0.0, sigma) for p in table}
                for h in range(hands):
                    hand += 1
                    order = table[h % 6:] + table[:h % 6]
                    for i, p in enumerate(order[:-1]):
                        s = float(rng.random())
                        logit = -4.0 + 6.0 * s + looseness[p] + effect[p]
                        cont = bool(rng.random() < 1.0 / (1.0 + np.exp(-logit)))
                        if gang is not None and p == gang[0] and gang[1] in order[i + 1:]:
                            cont = True
                        for q in order[i + 1:]:
                            for c, v in (("hand_id", f"h{hand}"), ("tournament_id", f"t{t}"),
                                         ("table_name", f"t{t}-{stint}-{j}"), ("seq", i), ("player", p),
                                         ("partner", q), ("cont", cont), ("stack_bb", 8.0), ("game", "holdem"),
                                         ("position", str(i)), ("strength", s), ("cbin", 1), ("pos", i),
                                         ("rpos", None), ("tix", t)):
                                out[c].append(v)
    return pl.DataFrame(out, schema_overrides={"cbin": pl.Int8, "pos": pl.Int8, "rpos": pl.Int8, "tix": pl.Int64})


def _passing(monkeypatch, rows: pl.DataFrame) -> pl.DataFrame:
    """:func:`bounty_passing` with ``rows`` as its shove rows and no calls of a partner's shove."""
    monkeypatch.setattr(bp, "bounty_shoves", lambda con, max_bb=20.0: rows)
    monkeypatch.setattr(bp, "bounty_partner_raises", lambda con, max_bb=20.0: pl.DataFrame())
    return gp.bounty_passing(None)


def test_an_honest_population_whose_shoving_moves_between_tables_gives_no_small_shove_p_values(monkeypatch):
    """Under the null (no pair acts together) with a table effect of spread 1.5 on the logit: the tail allowing for
    it keeps the pairs below 0.001 near 0.1 % of them and none below 1e-5; the independent tail (the former shove
    view) gives ten times as many, the smallest near 1e-8."""
    p = _passing(monkeypatch, _shove_rows(3, sigma=1.5))["sh_p"].drop_nulls().to_numpy()
    assert len(p) > 1000
    assert (p < 1e-3).sum() <= max(3, int(2e-3 * len(p)))
    assert (p < 1e-2).mean() < 0.01 and p.min() > 1e-5


def test_a_pair_shoving_into_each_other_at_every_table_still_stands_out(monkeypatch):
    """The same population with a gang whose first member shoves any two cards when the second is to act, seated
    together in every tournament: its shove p-value stays far below everyone else's."""
    out = _passing(monkeypatch, _shove_rows(3, sigma=1.5, gang=("p00", "p01")))
    gang = out.filter((pl.col("player") == "p00") & (pl.col("opponent") == "p01")).row(0, named=True)
    others = out.filter(~((pl.col("player") == "p00") & (pl.col("opponent") == "p01")))["sh_p"].drop_nulls()
    assert gang["sh_p"] < 1e-8
    assert gang["sh_p"] < others.min() * 1e-3
