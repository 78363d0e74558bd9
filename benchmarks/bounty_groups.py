"""Each planted bounty gang of a population, as bounty collusion sees it, beside what else its pairs leave: the fast
loop's look at misses, and the population's own tails of the same statistics.

For every ``bounty_collusion`` group of ``pop/labels.jsonl`` at strength >= ``--min-strength``, each pair of its
accounts: the knockout events shared (``events``: the main family tests a pair from ``min_events``), the main
family's p and q (``p_value``, ``q_main``), the presence test's p (``p_presence``, a tournament effect in its null),
the wide calls' (``p_wide_calls``, own rates only), bounty passing's p and q (``pass_p``, ``q_pass``; its calls
``tc_k`` of ``tc_n``); then two things the detector does not test:

- *starting tables*: the knockout tournaments both started (``cs_n``), those where their first hands were dealt at
  one table (``cs_k``) and the exact tail of ``cs_k`` when each tournament seats its field at random (``cs_p``: a
  Poisson-binomial of each tournament's chance that two of its entrants start at one table, sum over its starting
  tables of k (k - 1) over N (N - 1));
- *postflop passivity*: each player's bets and raises after the flop with the other still in the pot (``pa_k`` of
  ``pa_n``) against the player's own rate in the same cell (street, players left, a bet faced) with everyone else
  in (leave-this-pair-out, shrunk to the population's cell rate), the better direction's normal-approximation tail
  (``pa_p``; a diagnostic, no test of the detector);
- the two joined by Fisher's method (``cs_pa_p``), a missing one counted as 1;
- the detector's sparing test of every pair (``sp_p``, ``sp_k`` bets of ``sp_n`` against ``sp_e``; ``q_spare`` where
  its family tested the pair), and its tail over every pair in no labelled group, the honest pairs' calibration.

Then, per statistic, the population's tail: over the pairs below ``min_events`` and at it or above, how many have
a p under 1e-2 .. 1e-5 against the count a uniform null expects (m x t): the calibration a test of those pairs would
need before it could flag. The warehouse is copied to a temporary file (never opened in place); the detector runs
with its default parameters, as the pipeline calls it.

    python benchmarks/bounty_groups.py --pops /work/pops/tune-seen-b-2047 /work/pops/tune-seen-h-b-2047
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from scipy import stats as st  # noqa: E402

from detectors.bounty_collusion import BountyCollusionDetector  # noqa: E402
from detectors.features.gameplay.bounty_sparing import sparing_counts, sparing_tested  # noqa: E402
from kind_bench import populations  # noqa: E402  (a script beside this one)

# each player's first hand's table in every knockout tournament (the starting table), with the tournament's chance
# that two of its entrants start at one table
_STARTS_SQL = """
WITH s AS (SELECT s.player, h.tournament_id, arg_min(h.table_name, h.started_at) AS tab
           FROM seats s JOIN hands h USING (hand_id) JOIN tournaments t USING (tournament_id)
           WHERE s.dealt_in AND t.bounty_kind <> 'none' GROUP BY ALL),
k AS (SELECT tournament_id, tab, count(*) AS k FROM s GROUP BY ALL),
q AS (SELECT tournament_id, sum(k * (k - 1)) / (sum(k) * (sum(k) - 1)) AS q FROM k GROUP BY ALL)
SELECT s.*, q.q FROM s JOIN q USING (tournament_id) WHERE q.q < 1
"""

# postflop decisions in knockout tournaments (no post) with each other player still in the pot at that decision
_POSTFLOP_SQL = """
WITH a AS (SELECT a.* FROM actions a JOIN hands h USING (hand_id) JOIN tournaments t USING (tournament_id)
           WHERE t.bounty_kind <> 'none' AND a.action NOT LIKE 'post%'),
f AS (SELECT hand_id, player, min(seq) AS fseq FROM a WHERE action = 'fold' GROUP BY ALL),
inh AS (SELECT DISTINCT hand_id, player FROM a)
SELECT d.hand_id, d.seq, d.player, o.player AS opponent,
       (d.action IN ('bet', 'raise'))::INT AS aggr,
       d.street || least(greatest(d.n_active, 2), 4)::VARCHAR || (d.to_call > 0)::VARCHAR AS cell
FROM a d JOIN inh o ON o.hand_id = d.hand_id AND o.player <> d.player
LEFT JOIN f ON f.hand_id = o.hand_id AND f.player = o.player
WHERE d.street <> 'preflop' AND d.action IN ('check', 'bet', 'call', 'raise', 'fold')
  AND (f.fseq IS NULL OR f.fseq > d.seq)
"""

STAT_COLUMNS = ("p_presence", "p_wide_calls", "p_value", "pass_p", "cs_p", "pa_p", "cs_pa_p", "sp_p")
THRESHOLDS = (1e-2, 1e-3, 1e-4, 1e-5)


def poisson_binomial_sf(k: int, q: list[float]) -> float:
    """P(K >= k) for K a sum of independent Bernoulli(q_i), by the exact convolution."""
    dist = np.zeros(len(q) + 1)
    dist[0] = 1.0
    for x in q:
        dist[1:] = dist[1:] * (1.0 - x) + dist[:-1] * x
        dist[0] *= 1.0 - x
    return float(min(1.0, dist[k:].sum()))


def starting_tables(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per unordered pair (``player`` < ``opponent``): knockout tournaments both started ``cs_n``, those started
    at one table ``cs_k`` and ``cs_p``, the exact tail of ``cs_k`` under random seating (tournaments of one
    starting table left out)."""
    s = con.sql(_STARTS_SQL).pl()
    pairs = s.join(s.select("tournament_id", "player", "tab"), on="tournament_id", suffix="_o").filter(
        pl.col("player") < pl.col("player_o"))
    agg = pairs.group_by(pl.col("player"), pl.col("player_o").alias("opponent")).agg(
        cs_n=pl.len(), cs_k=(pl.col("tab") == pl.col("tab_o")).sum(), qs=pl.col("q"))
    p = [1.0 if k == 0 else poisson_binomial_sf(k, qs) for k, qs in zip(agg["cs_k"].to_list(), agg["qs"].to_list())]
    return agg.drop("qs").with_columns(cs_p=pl.Series(p, dtype=pl.Float64))


def postflop_passivity(con: duckdb.DuckDBPyConnection, tau: float = 5.0) -> pl.DataFrame:
    """Per unordered pair: ``pa_n``, ``pa_k`` (decisions and bets or raises of the direction with the smaller
    tail) and ``pa_p``, that direction's normal-approximation lower tail against the own rate per cell with the
    pair left out, shrunk by ``tau`` decisions to the population's cell rate (module docstring)."""
    d = con.sql(_POSTFLOP_SQL).pl()
    one = d.unique(["hand_id", "seq"])
    own = one.group_by("player", "cell").agg(n=pl.len(), k=pl.col("aggr").sum())
    cell = one.group_by("cell").agg(pr=pl.col("aggr").mean())
    pc = d.group_by("player", "opponent", "cell").agg(pn=pl.len(), pk=pl.col("aggr").sum())
    d = d.join(own, on=["player", "cell"]).join(pc, on=["player", "opponent", "cell"]).join(cell, on="cell")
    r = ((pl.col("k") - pl.col("pk") + tau * pl.col("pr")) / (pl.col("n") - pl.col("pn") + tau)).clip(0.001, 0.99)
    a = d.with_columns(r=r).group_by("player", "opponent").agg(
        pa_n=pl.len(), pa_k=pl.col("aggr").sum(), e=pl.col("r").sum(), v=(pl.col("r") * (1 - pl.col("r"))).sum())
    z = (a["pa_k"].cast(pl.Float64) + 0.5 - a["e"]) / np.sqrt(np.maximum(a["v"].to_numpy(), 1e-9))
    a = a.with_columns(pa_p=pl.Series(st.norm.cdf(z.to_numpy())), x=pl.min_horizontal("player", "opponent"),
                       y=pl.max_horizontal("player", "opponent"))
    return a.sort("pa_p").unique(["x", "y"], keep="first").select(
        pl.col("x").alias("player"), pl.col("y").alias("opponent"), "pa_n", "pa_k", "pa_p")


def pair_table(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, int]:
    """The detector's scored pairs (default parameters) joined with :func:`starting_tables` and
    :func:`postflop_passivity`; and the detector's ``min_events``."""
    det = BountyCollusionDetector()
    rows = det.fit(con).score(con)
    keep = ["player", "opponent", "events", "p_value", "q_main", "q_pass", "q_spare", "q_value", "p_presence",
            "p_wide_calls", "pass_p", "tc_n", "tc_k"]
    t = rows.select([c for c in keep if c in rows.columns])
    # the sparing test of every pair (the detector's rows hold the pairs of its Tarone selection only)
    t = t.join(sparing_test(con).select("player", "opponent", "sp_n", "sp_k", "sp_e", "sp_p"),
               on=["player", "opponent"], how="left")
    t = t.join(starting_tables(con), on=["player", "opponent"], how="left").join(
        postflop_passivity(con), on=["player", "opponent"], how="left")
    # the two by Fisher's method (seats drawn at random are independent of the play under the null)
    x = -2.0 * (np.log(t["cs_p"].fill_null(1.0).to_numpy()) + np.log(t["pa_p"].fill_null(1.0).to_numpy()))
    return t.with_columns(cs_pa_p=pl.Series(st.chi2.sf(x, 4))), det.min_events


def sparing_test(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The detector's sparing test (:func:`~detectors.features.gameplay.bounty_sparing.sparing_tested`) of every
    pair with a decision after the flop with the other in, not only those the family selects."""
    return sparing_tested(*sparing_counts(con))


def sparing_tail(con: duckdb.DuckDBPyConnection, labels: list[dict]) -> list[str]:
    """The sparing test's tail over every pair in no labelled group (of any kind), and over those of them whose
    smallest attainable p is under 1e-4 (the pairs the family can reach): m and, per threshold, the pairs under
    it against m x threshold (the calibration of the family's null on the population's own pairs)."""
    s = sparing_test(con)
    grouped = {(a, b) for g in labels for a in g["accounts"] for b in g["accounts"]}
    keep = pl.Series([(a, b) not in grouped for a, b in zip(s["player"], s["opponent"])], dtype=pl.Boolean)
    out = []
    for name, sel in (("every pair in no labelled group", keep), ("those with sp_min < 1e-4", keep & (s["sp_min"] < 1e-4))):
        v = s.filter(sel)["sp_p"].to_numpy()
        counts = ", ".join(f"<{x:g}: {int((v < x).sum())} ({len(v) * x:.2g})" for x in (0.05, *THRESHOLDS))
        out.append(f"  tail sp_p, {name}: m {len(v)}; {counts}")
    return out


def tails(t: pl.DataFrame, min_events: int) -> list[str]:
    """Per statistic and side of ``min_events``: the pairs with it (m) and, per threshold, the pairs under it
    against m x threshold."""
    out = []
    for col in STAT_COLUMNS:
        for name, sel in (("below", pl.col("events") < min_events), ("at or above", pl.col("events") >= min_events)):
            v = t.filter(sel & pl.col(col).is_not_null())[col].to_numpy()
            counts = ", ".join(f"<{x:g}: {int((v < x).sum())} ({len(v) * x:.2g})" for x in THRESHOLDS)
            out.append(f"  tail {col} events {name} {min_events}: m {len(v)}; {counts}")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    ap.add_argument("--min-strength", type=float, default=0.25, help="the groups printed: at least this strength")
    args = ap.parse_args(argv)
    for d, con, labels, _ in populations(args.pops):
        t, min_events = pair_table(con)
        ranked = t.with_columns(rank=pl.col("p_value").rank("min"), cs_rank=pl.col("cs_p").rank("min"),
                                pa_rank=pl.col("pa_p").rank("min"), cs_pa_rank=pl.col("cs_pa_p").rank("min"))
        print(d.name, "pairs", t.height, "main family", t["q_main"].is_not_null().sum(), "passing family",
              t["q_pass"].is_not_null().sum(), flush=True)
        for g in labels:
            if g["kind"] != "bounty_collusion" or g["strength"] < args.min_strength:
                continue
            print(f" {g['group']} strength {g['strength']} tournaments {len(g['tournaments'])}")
            acc = list(g["accounts"])
            for r in ranked.filter(pl.col("player").is_in(acc) & pl.col("opponent").is_in(acc)).iter_rows(named=True):
                print("   ", {k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in r.items()})
        for line in tails(t, min_events):
            print(line)
        for line in sparing_tail(con, labels):
            print(line, flush=True)


if __name__ == "__main__":
    main()
