"""Score a run's cases against ground-truth labels, exactly as ``spec/evaluation.md`` fixes.

Matching (a case against a labelled group):

- ``seat_handoff``: the case's accounts contain the group's account and, where
  the group names tournaments, the case names one of them;
- every other kind: the case's accounts contain at least two of the group's
  accounts (all of them when the group has fewer than two).

Figures per kind, over the flagged cases of that kind: recall (groups of the
kind matched by a flagged case of the kind), precision (flagged cases matching
a group of ANY kind), average precision of the ranking over all cases of the
kind against "matches a group of the same kind" (0 when the kind has groups and
no case matches one; None when it has no group); and false flags per 10,000
accounts seen (flagged cases matching no group).

The ranking (:func:`ranking_key`) is the queue's: the estimated false-discovery
rate (``q_value``, lowest first; railbird's cases.jsonl carries it after the
fields of evaluation.md), ties by score. Cases without a ``q_value`` (another
system's export) are ranked by score alone, as evaluation.md says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from detectors.kinds import KINDS, by_name
from pipelines.lib.errors import RailbirdError

# label fields that grade how blatant a group is (the first one present is used)
STRENGTH_FIELDS = ("strength", "rate", "intensity", "collusion_rate", "p")


def read_jsonl(path: str | Path, what: str) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise RailbirdError(f"{what} file not found: {p}")
    rows = []
    with p.open(encoding="utf-8-sig") as fh:
        for i, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RailbirdError(f"{p}:{i}: not JSON ({exc.msg})") from None
            if not isinstance(obj, dict) or "kind" not in obj or "accounts" not in obj:
                raise RailbirdError(f"{p}:{i}: a {what} line needs 'kind' and 'accounts'")
            rows.append(obj)
    return rows


def matches(case: dict[str, Any], group: dict[str, Any]) -> bool:
    """Does ``case`` match labelled ``group`` (the rule of evaluation.md)?"""
    acc = set(case.get("accounts") or [])
    gacc = set(group.get("accounts") or [])
    if group.get("kind") in KINDS and by_name(group["kind"]).match == "account":
        if not gacc or not gacc <= acc:
            return False
        gt = set(group.get("tournaments") or [])
        return not gt or bool(gt & set(case.get("tournaments") or []))
    need = min(2, len(gacc))
    return need > 0 and len(acc & gacc) >= need


def ranking_key(case: dict[str, Any]) -> tuple[float, float]:
    """A case's place in the ranking, higher = stronger: (minus its ``q_value``, minus infinity without one or
    for a NaN; its score). Sorting by it puts the lowest estimated false-discovery rate first, ties by score."""
    q = case.get("q_value")
    try:
        q = float(q) if q is not None else None
    except (TypeError, ValueError):
        q = None
    return (-q if q is not None and q == q else float("-inf"), float(case.get("score") or 0.0))


def average_precision(scores: list[Any], relevant: list[bool]) -> float | None:
    """Average precision of a ranking by ``scores`` (numbers or tuples such as :func:`ranking_key`'s, higher
    first; equal ones share a threshold, as scikit-learn does)."""
    n_rel = sum(relevant)
    if n_rel == 0:
        return None
    pairs = sorted(zip(scores, relevant), key=lambda t: t[0], reverse=True)
    ap, tp, seen, i = 0.0, 0, 0, 0
    prev_recall = 0.0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        block = pairs[i:j]
        tp += sum(r for _, r in block)
        seen += len(block)
        recall = tp / n_rel
        ap += (recall - prev_recall) * (tp / seen)
        prev_recall = recall
        i = j
    return ap


def group_strength(group: dict[str, Any]) -> Any:
    """How blatant a labelled group is: the first of ``STRENGTH_FIELDS`` its label has (None: none)."""
    return next((group[k] for k in STRENGTH_FIELDS if k in group), None)


def _bucket(value: Any) -> str | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    edges = [0.0, 0.1, 0.25, 0.5, 1.0001]
    for lo, hi in zip(edges, edges[1:]):
        if lo <= v < hi:
            return f"[{lo:g},{min(hi, 1):g}{']' if hi > 1 else ')'}"
    return f">={edges[-2]:g}"


@dataclass
class KindFigures:
    kind: str
    groups: int = 0
    groups_found: int = 0
    cases: int = 0
    flagged: int = 0
    flagged_matching_any: int = 0
    false_flags: int = 0
    recall: float | None = None
    precision: float | None = None
    average_precision: float | None = None
    false_flags_per_10k: float | None = None
    recall_by_strength: dict[str, dict[str, float | int]] = field(default_factory=dict)


@dataclass
class Evaluation:
    accounts_seen: int
    kinds: dict[str, KindFigures]
    false_flags: int
    false_flags_per_10k: float | None
    missed_groups: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "kinds": {k: asdict(v) for k, v in self.kinds.items()}}


def evaluate(
    cases: Iterable[dict[str, Any]],
    labels: Iterable[dict[str, Any]],
    accounts_seen: int,
    kinds: Iterable[str] = KINDS,
) -> Evaluation:
    """All figures of evaluation.md for ``cases`` against ``labels``."""
    cases = list(cases)
    labels = list(labels)
    per10k = (lambda x: 1e4 * x / accounts_seen) if accounts_seen > 0 else (lambda x: None)
    out: dict[str, KindFigures] = {}
    total_false = 0
    missed: list[str] = []
    kinds = list(dict.fromkeys(list(kinds) + [c.get("kind") for c in cases] + [g.get("kind") for g in labels]))
    for kind in kinds:
        f = KindFigures(kind=kind)
        kc = [c for c in cases if c.get("kind") == kind]
        kg = [g for g in labels if g.get("kind") == kind]
        flagged = [c for c in kc if c.get("flagged")]
        f.groups, f.cases, f.flagged = len(kg), len(kc), len(flagged)
        buckets: dict[str, list[int]] = {}
        for g in kg:
            found = any(matches(c, g) for c in flagged)
            f.groups_found += found
            if not found:
                missed.append(str(g.get("group", g.get("accounts"))))
            b = _bucket(group_strength(g))
            if b is not None:
                buckets.setdefault(b, [0, 0])
                buckets[b][0] += 1
                buckets[b][1] += found
        f.recall_by_strength = {
            b: {"groups": n, "found": k, "recall": k / n} for b, (n, k) in sorted(buckets.items())
        }
        f.flagged_matching_any = sum(any(matches(c, g) for g in labels) for c in flagged)
        f.false_flags = f.flagged - f.flagged_matching_any
        total_false += f.false_flags
        f.recall = f.groups_found / f.groups if f.groups else None
        f.precision = f.flagged_matching_any / f.flagged if f.flagged else None
        f.average_precision = average_precision([ranking_key(c) for c in kc], [any(matches(c, g) for g in kg) for c in kc])
        if f.average_precision is None and kg:  # groups to find and no case that finds one: the ranking is worth 0
            f.average_precision = 0.0
        f.false_flags_per_10k = per10k(f.false_flags)
        if f.groups or f.cases:
            out[kind] = f
    return Evaluation(
        accounts_seen=accounts_seen,
        kinds=out,
        false_flags=total_false,
        false_flags_per_10k=per10k(total_false),
        missed_groups=missed,
    )


_SEAT = re.compile(r"^Seat \d+: (.+?) \((?:[^()]*?\d[^()]*?) in chips")


def accounts_in_hand_files(hands_dir: str | Path) -> int:
    """Distinct players on seat lines of every ``*.txt`` under ``hands_dir``."""
    root = Path(hands_dir)
    if not root.exists():
        raise RailbirdError(f"hands folder not found: {root}")
    names: set[str] = set()
    files = [root] if root.is_file() else sorted(root.rglob("*.txt"))
    for p in files:
        with p.open(encoding="utf-8-sig", errors="replace") as fh:
            for line in fh:
                if line.startswith("Seat ") and " in chips" in line:
                    m = _SEAT.match(line.rstrip("\r\n"))
                    if m:
                        names.add(m.group(1))
    return len(names)


def accounts_in_warehouse(path: str | Path) -> int:
    """Distinct players in the warehouse's ``seats`` table (read-only)."""
    import duckdb

    p = Path(path)
    if not p.is_file():
        raise RailbirdError(f"warehouse not found: {p}")
    con = duckdb.connect(str(p), read_only=True)
    try:
        return int(con.execute("SELECT count(DISTINCT player) FROM seats").fetchall()[0][0])
    finally:
        con.close()


def format_table(ev: Evaluation) -> str:
    """The figures as a plain-text table, one line per kind."""

    def fmt(x: float | None, nd: int = 3) -> str:
        return "-" if x is None else f"{x:.{nd}f}"

    lines = [
        f"accounts seen: {ev.accounts_seen}",
        f"{'kind':<20}{'groups':>7}{'found':>7}{'recall':>8}{'flagged':>9}{'precision':>10}{'AP':>7}{'false':>7}{'false/10k':>10}",
    ]
    for k, f in ev.kinds.items():
        lines.append(
            f"{k:<20}{f.groups:>7}{f.groups_found:>7}{fmt(f.recall):>8}{f.flagged:>9}"
            f"{fmt(f.precision):>10}{fmt(f.average_precision):>7}{f.false_flags:>7}{fmt(f.false_flags_per_10k, 2):>10}"
        )
        for b, r in f.recall_by_strength.items():
            lines.append(f"    strength {b:<12} groups {r['groups']:>4}  found {r['found']:>4}  recall {r['recall']:.3f}")
    lines.append(f"false flags: {ev.false_flags} ({fmt(ev.false_flags_per_10k, 2)} per 10,000 accounts)")
    return "\n".join(lines)
