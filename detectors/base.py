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
    (list[str]), ``score`` (float), ``p_value`` (float or null: null for a
    candidate not tested) and ``q_value`` (float or null): the estimated
    false-discovery rate of flagging this candidate and every one of its kind
    with a smaller p-value, Benjamini-Hochberg over the kind's tested
    candidates. A detector whose frame lacks ``q_value`` gets it from
    ``p_value`` (:func:`with_q_values`); one that computes its own (a weighted
    BH, a family larger than its rows) keeps it.
``threshold(scores)``
    the same frame with a boolean ``flagged`` column: the detector's own
    decision rule (false-discovery control across candidates, a floor on the
    evidence, ...); a row that merges several candidates (a ring, a group)
    carries the smallest ``p_value`` and ``q_value`` of its members.
``explain(con, row)``
    one :class:`Signal` for one candidate row: the evidence in numbers an
    investigator can check, the evidence hands strongest first, the benign
    explanation considered.
``detect(con)``
    all of the above in order; what the pipeline calls.

Sign convention (one for the whole package): **higher score = more
suspicious**, and scores are comparable within one kind; ``q_value`` is on
one scale for every kind (a false-discovery rate: lower is more suspicious),
so cases of different kinds are ranked by it. Randomness (e.g. permutation
tests) is seeded through ``random_state``.
"""

from __future__ import annotations

import abc
import functools
import inspect
import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import duckdb
import networkx as nx
import polars as pl

from detectors import graphs
from detectors.kinds import KINDS  # re-exported: the one list of kinds
from detectors.stats.multiple_testing import bh_qvalues


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


def with_q_values(scores: pl.DataFrame) -> pl.DataFrame:
    """``scores`` with ``q_value`` (Float64, null where ``p_value`` is null or NaN) when it lacks one.

    Parameters
    ----------
    scores : a score frame with a ``p_value`` column (a frame without one, or with ``q_value``
        already, is returned as it is).

    Returns
    -------
    The frame with ``q_value``: Benjamini-Hochberg adjusted p-values over the rows that have a
    p-value (:func:`detectors.stats.bh_qvalues`; Benjamini & Hochberg, JRSS B 1995), that is the
    estimated false-discovery rate of flagging the row and every row with a smaller p-value.
    """
    if "q_value" in scores.columns or "p_value" not in scores.columns:
        return scores
    p = scores["p_value"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    return scores.with_columns(pl.Series("q_value", bh_qvalues(p), dtype=pl.Float64, nan_to_null=True))


def min_present(values: Any) -> float | None:
    """The smallest of ``values`` that is a number (None and NaN skipped), or None: a group's p- or q-value."""
    xs = [float(v) for v in values if not is_missing(v)]
    return min(xs) if xs else None


def with_top_unflagged(flagged_rows: list[dict[str, Any]], scored: pl.DataFrame, max_unflagged: int) -> pl.DataFrame:
    """The (grouped) flagged rows and the ``max_unflagged`` strongest unflagged
    candidates of ``scored``, one frame by score: what ``threshold`` returns."""
    rest = scored.filter(~pl.col("flagged")).sort(["score", "p_value"], descending=[True, False], nulls_last=True).head(max_unflagged)
    parts = [rest]
    if flagged_rows:
        parts.insert(0, pl.DataFrame(flagged_rows, schema=rest.schema))
    return pl.concat(parts, how="vertical").sort("score", descending=True)


def one_case_per_accounts(out: pl.DataFrame) -> pl.DataFrame:
    """``threshold``'s rows without the unflagged ones whose accounts a flagged row or a stronger row already
    holds: an unflagged pair of two accounts joined by flagged pairs (a flagged dump's receiver -> giver
    direction, two feeders of one receiver) is dropped, as :class:`GroupDetector` drops an unflagged pair inside
    a group, and of the two directions of an unflagged pair only the stronger stays."""
    if out.is_empty() or "flagged" not in out.columns:
        return out
    g = nx.Graph()
    for acc in out.filter(pl.col("flagged"))["accounts"].to_list():
        g.add_edges_from((acc[0], x) for x in acc[1:])
    comp = {x: i for i, c in enumerate(nx.connected_components(g)) for x in c}
    a, b = pl.col("accounts").list.get(0), pl.col("accounts").list.get(1)
    grp = lambda e: e.replace_strict(comp, default=None, return_dtype=pl.Int64)  # noqa: E731
    inside = ~pl.col("flagged") & (pl.col("accounts").list.len() == 2) & (grp(a) == grp(b)).fill_null(False)
    out = out.filter(~inside).with_columns(_key=pl.when(pl.col("flagged")).then(pl.int_range(pl.len()).cast(pl.Utf8))
                                           .otherwise(pl.concat_str(pl.min_horizontal(a, b), pl.lit("\x00"),
                                                                    pl.max_horizontal(a, b))))
    return (out.sort(["score", "p_value"], descending=[True, False], nulls_last=True)
            .unique("_key", keep="first", maintain_order=True).drop("_key"))

def groups_frame(groups: list[dict[str, Any]]) -> pl.DataFrame:
    """``threshold``'s frame for detectors that keep their groups aside (``self.groups_``):
    one row per group, ``group`` its index, with accounts, tournaments, score, p_value, q_value (None
    where a group has none) and flagged."""
    return pl.DataFrame({
        "group": list(range(len(groups))),
        "accounts": [g["accounts"] for g in groups],
        "tournaments": [g["tournaments"] for g in groups],
        "score": [g["score"] for g in groups],
        "p_value": [g["p_value"] for g in groups],
        "q_value": [g.get("q_value") for g in groups],
        "flagged": [g["flagged"] for g in groups],
    }, schema={"group": pl.Int64, "accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8),
               "score": pl.Float64, "p_value": pl.Float64, "q_value": pl.Float64, "flagged": pl.Boolean})


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
    """What a detector says about one group of accounts.

    ``score``: higher is more suspicious, comparable within the kind. ``p_value``: the candidate's
    test against the population's own null (the smallest of a group's pairs). ``q_value``: the
    estimated false-discovery rate of flagging it and everything of its kind with a smaller p-value
    (Benjamini-Hochberg over the kind's tested candidates; a group's smallest), one scale for every
    kind; None where no test was made.
    """

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
    #: the estimated false-discovery rate of flagging this signal and every stronger one of its kind
    #: (Benjamini-Hochberg over the kind's tested candidates); None where no test was made
    q_value: float | None = None
    detector: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. graph edges for the report

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: the hand-history tables every gameplay detector reads (table -> the columns it needs)
HAND_INPUTS: dict[str, tuple[str, ...]] = {
    "hands": ("hand_id", "game", "is_tournament", "tournament_id", "big_blind", "started_at", "n_players"),
    "seats": ("hand_id", "player", "stack_start", "dealt_in", "net"),
    "actions": ("hand_id", "seq", "street", "player", "action", "amount", "is_all_in", "pot_before", "to_call",
                "n_active"),
    "hole_cards": ("hand_id", "player", "cards"),
    "boards": ("hand_id", "run", "cards"),
}


class NotFittedError(ValueError, AttributeError):
    """A detector was asked to score or explain before :meth:`Detector.fit` ran
    (as scikit-learn's ``NotFittedError``)."""


class MissingInputError(ValueError):
    """The warehouse lacks a table or column the detector reads (:attr:`Detector.inputs`)."""


_CHECKED = ("score", "explain")


def _fitted_first(method):
    """``method`` preceded by the fitted check (:meth:`Detector.check_fitted`); for ``score``, its frame
    completed with ``q_value`` where the detector did not compute one (:func:`with_q_values`)."""

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        self.check_fitted()
        out = method(self, *args, **kwargs)
        return with_q_values(out) if method.__name__ == "score" and isinstance(out, pl.DataFrame) else out

    checked.__fitted_check__ = True
    return checked


class Detector(abc.ABC):
    """Base class of every detector: parameters in, fitted state out, one flag rule.

    The contract, in the manner of scikit-learn's estimators and PyOD's
    detectors (Buitinck et al., "API design for machine learning software",
    2013; Zhao, Nasrullah & Li, JMLR 2019):

    - ``__init__`` stores its keyword parameters under their own names and
      nothing else (:meth:`get_params` reads them back, :meth:`set_params`
      sets them);
    - :meth:`fit` sets every fitted attribute (names ending in ``_``, among
      them ``missing_``: the tests the data does not allow) and returns
      ``self``;
    - :meth:`score` returns one row per candidate with ``p_value`` and
      ``q_value`` (the false-discovery control is in score; a frame without
      ``q_value`` gets Benjamini-Hochberg's from ``p_value``, see
      :func:`with_q_values`); it changes no attribute;
    - :meth:`threshold` adds the boolean ``flagged`` column by the detector's
      one flag rule and merges flagged rows into groups (:class:`PairDetector`,
      :class:`GroupDetector`); it changes no attribute;
    - :meth:`explain` turns one row of :meth:`threshold` into a :class:`Signal`
      from the row and the fitted attributes alone;
    - :meth:`detect` checks the warehouse's tables (:attr:`inputs`), then
      runs the four in order.

    ``score`` and ``explain`` raise :class:`NotFittedError` before ``fit``.

    Parameters
    ----------
    alpha : float
        the false-discovery level of the flag rule (flagged only where the q-value is at most
        it); kept under the name ``fdr`` where the subclass's ``__init__`` names its parameter
        so (:meth:`level_name`; :attr:`fdr_level` reads it under either name).
    random_state : int
        the seed of every random draw (permutations, Monte Carlo).
    """

    kind: ClassVar[str]
    #: warehouse table -> the columns of it the detector reads (checked by :meth:`detect`)
    inputs: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(self, *, alpha: float = 0.01, random_state: int = 0) -> None:
        setattr(self, self.level_name(), alpha)
        self.random_state = random_state

    @classmethod
    def level_name(cls) -> str:
        """The name of the false-discovery level parameter: ``fdr`` where ``__init__`` takes one, else ``alpha``."""
        return "fdr" if "fdr" in cls.param_names() else "alpha"

    @property
    def fdr_level(self) -> float:
        """The false-discovery level of the flag rule, under whichever name the detector's parameter has."""
        return getattr(self, self.level_name())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _CHECKED:  # also a step a mixin defines (detectors.seat_handoff.evidence)
            m = getattr(cls, name, None)
            if m is not None and not getattr(m, "__isabstractmethod__", False) and not getattr(m, "__fitted_check__", False):
                setattr(cls, name, _fitted_first(m))

    # ------------------------------------------------------------------ parameters
    @classmethod
    def param_names(cls) -> list[str]:
        """The keyword parameters of ``__init__``, in order."""
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY]

    def get_params(self) -> dict[str, Any]:
        """The detector's parameters by name (``type(det)(**det.get_params())`` is an equal, unfitted detector)."""
        return {k: getattr(self, k) for k in self.param_names()}

    def set_params(self, **params: Any) -> "Detector":
        """Set parameters by name (an unknown name raises ``ValueError``); returns ``self``."""
        known = set(self.param_names())
        for k, v in params.items():
            if k not in known:
                raise ValueError(f"{type(self).__name__} has no parameter {k!r}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    # ------------------------------------------------------------------ checks
    def fitted_attributes(self) -> list[str]:
        """The names of the attributes :meth:`fit` set (trailing underscore)."""
        return sorted(k for k in vars(self) if k.endswith("_") and not k.startswith("_"))

    def check_fitted(self) -> None:
        """Raise :class:`NotFittedError` unless :meth:`fit` ran."""
        if not self.fitted_attributes():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(con) before score or explain")

    def check_input(self, con: duckdb.DuckDBPyConnection) -> None:
        """Raise :class:`MissingInputError` naming every table and column of :attr:`inputs` the warehouse lacks."""
        if not self.inputs:
            return
        have: dict[str, set[str]] = {}
        for t, c in con.execute("SELECT table_name, column_name FROM duckdb_columns() "
                                "WHERE schema_name = 'main' AND database_name = current_database()").fetchall():
            have.setdefault(t, set()).add(c)
        lacking = [f"{t}.{c}" if t in have else t for t, cols in self.inputs.items()
                   for c in (cols if t in have else cols[:1]) if t not in have or c not in have[t]]
        if lacking:
            raise MissingInputError(f"{type(self).__name__} needs {', '.join(lacking)}: not in the warehouse")

    # ------------------------------------------------------------------ the four steps
    @abc.abstractmethod
    def fit(self, con: duckdb.DuckDBPyConnection) -> "Detector": ...

    @abc.abstractmethod
    def score(self, con: duckdb.DuckDBPyConnection) -> pl.DataFrame: ...

    @abc.abstractmethod
    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame: ...

    @abc.abstractmethod
    def explain(self, con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> Signal: ...

    def detect(self, con: duckdb.DuckDBPyConnection) -> list[Signal]:
        """Check the inputs, then fit, score, threshold and explain every candidate, flagged or not.

        Returns the signals strongest first (ties in a fixed order, so that two runs on the same
        warehouse list the same signals alike); a signal whose :meth:`explain` left ``q_value`` unset
        takes its row's ``q_value``."""
        self.check_input(con)
        scored = self.threshold(self.fit(con).score(con))
        rows = list(scored.iter_rows(named=True))
        signals = [self.explain(con, row) for row in rows]
        for s, row in zip(signals, rows):
            s.detector = s.detector or type(self).__name__
            s.missing = sorted(set(s.missing) | set(self.missing_))
            if s.q_value is None and not is_missing(row.get("q_value")):
                s.q_value = float(row["q_value"])
        return sorted(signals, key=lambda s: (-s.score, s.accounts, s.tournaments))


class PairDetector(Detector):
    """A detector whose candidates are pairs of accounts (``player``, ``opponent``) and whose flagged
    pairs are merged into rings and stars (:func:`detectors.graphs.groups`).

    A subclass writes its one flag rule in :meth:`flag` and, where a group carries more than the
    strongest pair's figures, :meth:`merge_group`. ``directed`` says whether a candidate is an ordered
    pair (giver -> receiver: both directions of a pair may be flagged) or an unordered one.
    """

    directed: ClassVar[bool] = False
    #: whether an unflagged candidate of two accounts already joined by flagged pairs still makes a row, and both
    #: directions of an unflagged pair (False: one case per set of accounts, :func:`one_case_per_accounts`)
    unflagged_inside_groups: ClassVar[bool] = True
    max_unflagged: int

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with the boolean column ``flagged``: the detector's one flag rule."""
        raise NotImplementedError

    def merge_group(self, best: dict[str, Any], members: list[dict[str, Any]], shape: str) -> dict[str, Any]:
        """The row of a group of flagged pairs: ``best`` (a copy of its strongest pair's row, with the
        group's accounts, shape, edges and smallest p- and q-value) completed from its ``members``."""
        return best

    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame:
        """Flag candidates by :meth:`flag`, merge flagged pairs into groups.

        Returns one row per group of flagged pairs (``shape`` 'pair', 'ring' or 'star', ``edges`` the
        JSON list of its pairs, ``accounts`` its members) and the ``max_unflagged`` strongest
        unflagged candidates, by score (without those :attr:`unflagged_inside_groups` leaves out)."""
        if scores.is_empty():
            return scores.with_columns(pl.lit(False).alias("flagged"), pl.lit("pair").alias("shape"),
                                       pl.lit("[]").alias("edges"))
        s = self.flag(scores).with_columns(shape=pl.lit("pair"), edges=pair_edges_json())
        out = with_top_unflagged(self._merge_flagged(s.filter(pl.col("flagged"))), s, self.max_unflagged)
        return out if self.unflagged_inside_groups else one_case_per_accounts(out)

    def _merge_flagged(self, flagged: pl.DataFrame) -> list[dict[str, Any]]:
        """One row per group (:func:`detectors.graphs.groups`) of the flagged pairs."""
        key = (lambda a, b: (a, b)) if self.directed else (lambda a, b: tuple(sorted((a, b))))
        by_edge = {key(r["player"], r["opponent"]): r for r in flagged.iter_rows(named=True)}
        g = graphs.suspicion_graph((a, b, r["score"]) for (a, b), r in by_edge.items())
        rows = []
        for grp in graphs.groups(g):
            if self.directed:
                edges = set(grp.edges)
                members = [r for (a, b), r in by_edge.items() if tuple(sorted((a, b))) in edges]
            else:
                members = [by_edge[e] for e in grp.edges if e in by_edge]
            best = dict(max(members, key=lambda r: r["score"]))
            best["accounts"] = grp.accounts if grp.shape != "pair" else [best["player"], best["opponent"]]
            best["shape"] = grp.shape
            best["edges"] = json.dumps([[r["player"], r["opponent"]] for r in members])
            best["p_value"] = min(r["p_value"] for r in members)
            if "q_value" in best:
                best["q_value"] = min_present(r["q_value"] for r in members)
            rows.append(self.merge_group(best, members, grp.shape))
        return rows


class GroupDetector(Detector):
    """A detector whose candidates are pairs of accounts (``a``, ``b``) and whose cases are the
    connected components of its flagged pairs (the accounts one person or one team plays).

    A subclass writes its one pair flag rule in :meth:`flag`. Each row of :meth:`threshold` carries
    its pairs (``pairs``, a list of the pair rows), so :meth:`explain` needs no stored state.
    """

    max_unflagged: int
    #: whether an unflagged pair of two accounts already joined by flagged pairs still makes a row
    unflagged_inside_groups: ClassVar[bool] = False

    def flag(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with the boolean column ``pair_flagged``: the detector's one flag rule."""
        raise NotImplementedError

    def threshold(self, scores: pl.DataFrame) -> pl.DataFrame:
        """Flag pairs by :meth:`flag`; each connected component of flagged pairs is one row
        (accounts, tournaments entered by its pairs, best score, smallest p-value and q-value, flagged), then
        the ``max_unflagged`` strongest unflagged pairs, one row each; ``pairs`` holds each row's pairs."""
        schema = {"accounts": pl.List(pl.Utf8), "tournaments": pl.List(pl.Utf8), "score": pl.Float64,
                  "p_value": pl.Float64, "q_value": pl.Float64, "flagged": pl.Boolean}
        if scores.height == 0:
            return pl.DataFrame(schema={"group": pl.Int64, **schema, "pairs": pl.List(pl.Struct(scores.schema))})
        pairs = self.flag(scores)
        g = nx.Graph()
        for r in pairs.filter(pl.col("pair_flagged")).iter_rows(named=True):
            g.add_edge(r["a"], r["b"])
        groups: list[tuple[list[str], pl.DataFrame, bool]] = []
        for comp in nx.connected_components(g):
            sub = pairs.filter(pl.col("pair_flagged") & pl.col("a").is_in(list(comp)) & pl.col("b").is_in(list(comp)))
            groups.append((sorted(comp), sub, True))
        for r in (pairs.filter(~pl.col("pair_flagged")).sort("score", descending=True).head(self.max_unflagged)
                  .iter_rows(named=True)):
            if not self.unflagged_inside_groups and r["a"] in g and r["b"] in g and nx.has_path(g, r["a"], r["b"]):
                continue
            groups.append(([r["a"], r["b"]], pairs.filter((pl.col("a") == r["a"]) & (pl.col("b") == r["b"])), False))
        return pl.DataFrame({
            "group": list(range(len(groups))),
            "accounts": [acc for acc, _, _ in groups],
            "tournaments": [sorted({t for ts in sub["tournaments"].to_list() for t in (ts or [])}) for _, sub, _ in groups],
            "score": [float(sub["score"].max()) for _, sub, _ in groups],
            "p_value": [float(sub["p_value"].min()) for _, sub, _ in groups],
            "q_value": [min_present(sub["q_value"].to_list()) if "q_value" in sub.columns else None
                        for _, sub, _ in groups],
            "flagged": [f for _, _, f in groups],
            "pairs": [sub.to_dicts() for _, sub, _ in groups],
        }, schema={"group": pl.Int64, **schema, "pairs": pl.List(pl.Struct(pairs.schema))})

    @staticmethod
    def pairs_of(row: dict[str, Any]) -> pl.DataFrame:
        """The pair rows of one :meth:`threshold` row, as a frame."""
        return pl.from_dicts(row["pairs"], infer_schema_length=None)
