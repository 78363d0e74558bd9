"""Each planted seat hand-off of a population, as the seat hand-off detector sees it: the fast loop's look at misses.

For every ``seat_handoff`` group of ``pop/labels.jsonl`` and every tournament its account played: each login
in the middle of its play (the switch), the hands the account was dealt before it, the hands it played after it
(dealt in, not sitting out) and those it sat out after it; then the detector's candidate row for that
account-event, if any (the play's p ``p_play``, the identity's ``p_identity``, the days the device took the seat
from the account's own home and those with two places at once, ``places_days`` and ``places_shown``, their
statistic ``p_two_places``, all combined ``p_event``, given the account's switches ``p_value``,
``q_value`` and ``flagged``). A hand-off whose account plays no hand after the switch has nothing for a
behavioural test to see; one without a candidate row was not taken for a hand-over. The warehouse is copied to a
temporary file (never opened in place); the detector runs with its default parameters, as the pipeline calls it.

    python benchmarks/handoff_groups.py --pops /tmp/pops/mixed-1-a-60000 /tmp/pops/subtle-1-a-60000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import duckdb  # noqa: E402
import polars as pl  # noqa: E402

from detectors.seat_handoff import SeatHandoffDetector  # noqa: E402
from kind_bench import populations  # noqa: E402  (a script beside this one)

# per (account, tournament) of the planted accounts: the logins in mid-play and the hands around each
_SWITCHES_SQL = """
WITH acct AS (
  SELECT s.player AS account, h.tournament_id, min(h.started_at) AS t_first, max(h.started_at) AS t_last,
         count(*) AS dealt
  FROM seats s JOIN hands h USING (hand_id)
  WHERE h.is_tournament AND s.player IN (SELECT account FROM _hg_acc)
  GROUP BY ALL
),
sw AS (
  SELECT acct.*, x.login_at, x.device
  FROM acct LEFT JOIN sessions x ON x.account = acct.account AND x.login_at > acct.t_first AND x.login_at <= acct.t_last
)
SELECT sw.account, sw.tournament_id, sw.dealt, sw.login_at, sw.device,
       count(h.hand_id) FILTER (WHERE h.started_at < sw.login_at) AS before,
       count(h.hand_id) FILTER (WHERE h.started_at >= sw.login_at AND NOT s.sitting_out) AS played_after,
       count(h.hand_id) FILTER (WHERE h.started_at >= sw.login_at AND s.sitting_out) AS sat_out_after
FROM sw JOIN seats s ON s.player = sw.account JOIN hands h ON h.hand_id = s.hand_id AND h.tournament_id = sw.tournament_id
GROUP BY ALL
ORDER BY sw.account, min(h.started_at), sw.login_at
"""


def group_rows(con: duckdb.DuckDBPyConnection, labels: list[dict], scores: pl.DataFrame) -> pl.DataFrame:
    """One row per planted hand-off group, tournament and mid-play login, with the detector's row joined."""
    groups = pl.DataFrame([{"group": g["group"], "account": g["accounts"][0], "strength": g["strength"],
                            "labelled": g["tournaments"]} for g in labels if g.get("kind") == "seat_handoff"],
                          schema={"group": pl.Utf8, "account": pl.Utf8, "strength": pl.Float64,
                                  "labelled": pl.List(pl.Utf8)})
    if groups.height == 0:
        return groups
    con.register("_hg_acc", groups.select("account"))
    try:
        sw = con.sql(_SWITCHES_SQL).pl()
    finally:
        con.unregister("_hg_acc")
    cols = ["account", "tournament_id", "since_logout", "p_play", "p_identity", "places_days", "places_shown",
            "p_two_places", "p_event", "p_value", "q_value", "flagged"]
    det = scores.select([c for c in cols if c in scores.columns]) if scores.height else pl.DataFrame(
        schema={"account": pl.Utf8, "tournament_id": pl.Utf8})
    out = (groups.join(sw, on="account", how="left")
           .with_columns(planted=pl.col("labelled").list.contains(pl.col("tournament_id")))
           .join(det, on=["account", "tournament_id"], how="left"))
    return out.drop("labelled").sort("group", "planted", "login_at", descending=[False, True, False])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pops", nargs="+", required=True, type=Path, help="population folders (pop/, home/)")
    ap.add_argument("--all", action="store_true", help="also the tournaments the label does not name")
    args = ap.parse_args(argv)
    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(220)
    pl.Config.set_fmt_str_lengths(20)
    for d, con, labels, _ in populations(args.pops):
        det = SeatHandoffDetector().fit(con)
        scores = det.threshold(det.score(con))
        rows = group_rows(con, labels, scores)
        if not args.all and rows.height:
            rows = rows.filter(pl.col("planted").fill_null(False))
        print(f"{d.name}: {int(scores['flagged'].sum()) if scores.height else 0} flagged of {scores.height} "
              f"candidate rows", flush=True)
        print(rows.drop("planted", strict=False), flush=True)


if __name__ == "__main__":
    main()
