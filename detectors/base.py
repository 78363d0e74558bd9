"""The one contract every railbird detector follows.

A detector is an estimator in the scikit-learn sense, but its input is the
warehouse (a DuckDB connection with the tables of ``pipelines/lib/schema.sql``)
rather than a matrix:

``fit(con)``
    learn what the detector needs from the population itself: each player's own
    baselines, the population's rates, the null distributions. Never labels.
``score(con)``
    a Polars frame, one row per candidate (a pair, a group, an account-event),
    with at least the columns ``accounts`` (list[str]), ``tournaments``
    (list[str]), ``score`` (float) and ``p_value`` (float or null).
``threshold(scores)``
    the same frame with a boolean ``flagged`` column: the detector's own
    decision rule (false-discovery control across candidates, a floor on the
    evidence, ...).
``explain(con, row)``
    one :class:`Signal` for one candidate row: the evidence in numbers an
    investigator can check, the evidence hands strongest first, the benign
    explanation considered.
``detect(con)``
    all of the above in order; what the pipeline calls.

Sign convention (one for the whole package): **higher score = more
suspicious**, and scores are comparable within one kind. Randomness (e.g.
permutation tests) is seeded through ``random_state``.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import duckdb
import polars as pl

from detectors.kinds import KINDS  # re-exported: the one list of kinds


def sql_literal(s: str) -> str:
    """A SQL string literal for the reproduction queries shown to investigators
    (quotes doubled; the detectors themselves never run these)."""
    return "'" + str(s).replace("'", "''") + "'"


def is_missing(x: Any) -> bool:
    """A figure a row lacks: None (a test not made) or a float NaN."""
    return x is None or (isinstance(x, float) and x != x)


def pair_edges_json(a: str = "player", b: str = "opponent") -> pl.Expr:
    """Each row's pair as the JSON text ``[[a, b]]`` (the edges of a pair case), encoded by Polars'
    JSON encoder: names hold quotes, backslashes and emoji, so they are never pasted into JSON."""
    return pl.struct(e=pl.concat_list(a, b).reshape((-1, 1, 2))).struct.json_encode().str.json_path_match("$.e")


def with_top_unflagged(flagged_rows: list[dict[str, Any]], scored: pl.DataFrame, max_unflagged: int) -> pl.DataFrame:
    """The (grouped) flagged rows and the ``max_unflagged`` strongest unflagged
    candidates of ``scored``, one frame by score: what ``threshold`` returns."""
    rest = scored.filter(~pl.col("flagged")).sort(["score", "p_value"], descending=[True, False], nulls_last=True).head(max_unflagged)
    parts = [rest]
    if flagged_rows:
        parts.insert(0, pl.DataFrame(flagged_rows, schema=rest.schema))
    return pl.concat(parts, how="vertical").sort("score", descending=True)


def groups_frame(groups: list[dict[str, Any]]) -> pl.DataFrame:
    """``threshold``'s frame for detectors that keep their groups aside (``self.groups_``):
    one row per group, ``group`` its index, with accounts, tournaments, score, p_value and flagged."""
    return pl.DataFrame({
        "group": list(range(len(groups))),
        "accounts": [g["accounts"] for g in groups],
        "tournaments": [g["tournaments"] for g in groups],
        "score": [g["score"] for g in groups],
        "p_value": [g["p_value"] for g in groups],
        "flagged": [g["flagged"] for g in groups],
    }, schema={"group": pl.Int64, "accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
               "score": pl.Float64, "p_value": pl.Float64, "flagged": pl.Boolean})


@dataclass(frozen=True)
class Evidence:
    """One checkable figure behind a signal.

    ``value`` is what the accused did, ``baseline`` what the same player (or the
    population, where said) does otherwise, ``n`` the sample it rests on, ``sql``
    a query over the warehouse that reproduces ``value``.
    """

    name: str
    value: float | None
    baseline: float | None = None
    n: int | None = None
    p_value: float | None = None
    text: str = ""
    sql: str | None = None


@dataclass
class Signal:
    """What a detector says about one group of accounts."""

    kind: str
    accounts: list[str]
    score: float
    flagged: bool
    summary: str
    tournaments: list[str] = field(default_factory=list)
    hands: list[str] = field(default_factory=list)  # evidence hands, strongest first
    evidence: list[Evidence] = field(default_factory=list)
    benign: str = ""  # the innocent explanation considered, and why it does or does not hold
    missing: list[str] = field(default_factory=list)  # tests not made for lack of data
    p_value: float | None = None
    detector: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. graph edges for the report

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Detector(abc.ABC):
    """Base class: subclasses set ``kind`` and implement the four steps."""

    kind: ClassVar[str]

    def __init__(self, *, alpha: float = 0.01, random_state: int = 0) -> None:
        self.alpha = alpha  # false-discovery rate across candidates
        self.random_state = random_state
        self.missing_: list[str] = []  # filled by fit: tests the data does not allow

    @abc.abstractmethod
    def fit(self, con: duckdb.DuckDBPyConnection) -> "Detector": ...

    @abc.abstractmethod
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame: ...

    @abc.abstractmethod
    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame: ...

    @abc.abstractmethod
    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal: ...

    def detect(self, con: duckdb.DuckDBPyConnection) -> list[Signal]:
        """Fit, score, threshold and explain every candidate, flagged or not."""
        scored = self.threshold(self.fit(con).score(con))
        signals = [self.explain(con, row) for row in scored.iter_rows(named=True)]
        for s in signals:
            s.detector = s.detector or type(self).__name__
            s.missing = sorted(set(s.missing) | set(self.missing_))
        # ties (capped scores) in a fixed order, so that two runs on the same warehouse list the same signals alike
        return sorted(signals, key=lambda s: (-s.score, s.accounts, s.tournaments))
