"""No JSON or SQL is built by pasting data into text (issue 31, item 1).

An AST walk over the shipped packages (pipelines/, detectors/, datasets/)
finds every f-string, ``%`` format, ``str.format``, ``pl.format`` and ``+``
concatenation whose literal text reads as SQL or JSON, and checks each value
it pastes in:

- into JSON: only constants, numbers (a numeric format spec, ``int()``,
  ``len()``...) and ``json.dumps(...)`` may be pasted; ``pl.format`` pastes
  column values, so a JSON-shaped ``pl.format`` is always a finding;
- into SQL: constants, numbers, the quoting helpers
  (:func:`detectors.base.sql_literal` and its aliases for values, a
  quote-doubling identifier helper for names), module constants
  (``ALL_CAPS``, and ``CONSTANT.format(...)`` of constants), a module's
  private fragment builder called on constants (``_va('ip')``), names a
  comprehension binds to a literal's or a constant's items, and the reviewed
  identifier/fragment expressions of ``IDENTIFIERS`` (table and column names
  from the code itself, SQL fragments built by the project's own functions).
  Anything else, e.g. ``{acc}`` or ``{row["player"]}``, is a finding.

Messages (arguments of ``print``, loggers, ``warnings.warn`` and exception
constructors) are text for people and are not checked. A second test feeds the
checker planted snippets so it is known to fail on what it should.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from detectors.base import sql_literal

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipelines", "detectors", "datasets")

SQL_RE = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bDELETE\s+FROM\b|\bUPDATE\s+\S+\s+SET\b"
    r"|\bCREATE\s+(OR\s+REPLACE\s+)?(TEMP\s+|TEMPORARY\s+)?(TABLE|VIEW|INDEX)\b|\bWHERE\b|\bJOIN\b[\s\S]*\bON\b"
    r"|\bCOPY\b[\s\S]*\b(TO|FROM)\b|\bATTACH\b|\bCOMMENT\s+ON\b|\bVALUES\s*\(|\bIN\s*\(\s*$|\bFROM\s*$")
JSON_RE = re.compile(r'[\[{]\s*"|"\s*:\s*[\[{"\d]|"\s*[\]}]')
HOLE = "\x00"  # stands for a pasted value in the literal text: never mistaken for JSON or SQL

#: helpers whose result is safe to paste into SQL text: value literals and identifier quoting
QUOTERS = {"sql_literal", "_ident"}
#: calls whose result is a number (safe anywhere)
NUMERIC_CALLS = {"int", "float", "len", "round", "abs"}

#: Reviewed interpolations that are identifiers or SQL fragments from the code itself, never data,
#: by file: table and column names from the schema and the code's own lists, CTEs built by the
#: project's functions. Keyed by the expression's source text.
IDENTIFIERS: dict[str, set[str]] = {
    "pipelines/web/app.py": {"col"},
    "detectors/features/days/compute.py": {"t"},  # t: the names of _PART_ROWS_SQL, a module constant
    "pipelines/defs/ingest/assets.py": {"t"},
    "pipelines/defs/ingest/checks.py": {"t", "cols"},
    "pipelines/lib/replay.py": {"table", "sel", "order", "h", "t"},  # t: the names of CHAT_TABLES, sorted
    # t: the detector's table names; the match query and the narrowing CTEs are module constants, the
    # tournaments written in by sql_literal (the query shown to copy, never run)
    "pipelines/lib/report_kinds.py": {"t", "HU_HANDS_SQL.strip()", "NARROWED.replace('$t::VARCHAR[]', where)"},
    "pipelines/lib/review.py": {"' AND '.join(where)", "where", "order"},
    "pipelines/lib/warehouse.py": {"collist", "table", "src", "conflict", "ids_view", "files_view", "tcols", "db",
                                   "sets", "', '.join(aggs)", "', '.join(sets)"},
    "pipelines/lib/reports.py": {"col", "acc_lit", "hand_lit"},
    "pipelines/lib/cases.py": {"' UNION ALL '.join(parts)"},
    "detectors/multi_accounting.py": {"idf.tournament_entries(con)", "accs_sql", "kind"},
    # where: the row filters of the constant WINDOW_VIEWS, bound by the comprehension that makes the window's views
    "detectors/features/window_views.py": {"where"},
    "detectors/chip_dumping.py": {"gp.seat_nets_cte()", "tag", "seat", "b", "bb", "cb", "same", "score"},
    "detectors/features/identity.py": {"tournament_entries(con)", "table", "cells"},
    "detectors/features/gameplay.py": {"seat_nets_cte()", "_card_codes_sql('cards')", "hands_from", "restrict", "t"},
    # the same code, split into modules
    # q: a module constant's query formatted with the run's tag and bin names; self.tables[-1], self.tag: temp table
    # names made of a fixed prefix, the process id and the run's id
    # keep: preflop_table's column names, each quoted as an identifier
    "detectors/chip_dumping/presence.py": {"tag", "seat", "b", "bb", "cb", "same", "score", "q", "self.tables[-1]",
                                           "self.tag", "PRESENCE_SQL.replace('{part_tables}', '')", "keep"},
    # tag: the registered frames' names (process id and the detector's id)
    "detectors/chip_dumping/evidence.py": {"gp.seat_nets_cte()", "tag"},
    "detectors/chip_dumping/flows.py": {"gp.seat_nets_cte('devh')", "gp.seat_nets_cte()"},
    # column lists from the module's constants (KEPT_COLUMNS, SOURCE_COLUMNS, the cells' columns), the join condition
    # over them, least/greatest of two fixed columns, the module's DECISION_CELLS_SQL; accounts are bound ($acc)
    # tag, self.tag: the temporary table's and registered frames' suffix (process id, connection id, a counter);
    # keys, on: the cell columns of the module's own calls and tables; query: a module constant formatted with the
    # tag and another module constant (ROW_KINDS)
    "detectors/features/gameplay/bounty_counts.py": {"tag", "self.tag", "keys", "on", "query"},
    "detectors/soft_play/cells.py": {"keep", "sql", "keys", "hi", "lo", "on", "cols"},
    # keep, keys: the module constants' column lists of cells.py; sql: the module's own query text (those and
    # DECISION_CELLS_SQL), copied to a file whose path is bound ($_out)
    "detectors/soft_play/daycells.py": {"keep", "sql", "keys"},
    "detectors/features/gameplay/decisions.py": {"t"},
    "detectors/features/gameplay/pairs.py": {"seat_nets_cte()", "hands_from", "restrict"},
    "detectors/features/identity/coentry.py": {"tournament_entries(con)"},
    "detectors/features/identity/links.py": {"table"},
    "pipelines/web/account.py": {"col"},
    "pipelines/lib/warehouse_stage.py": {"collist", "table", "src", "conflict", "ids_view", "files_view", "tcols"},
    "pipelines/lib/warehouse_hands.py": {"collist", "table", "sets", "', '.join(aggs)", "', '.join(sets)"},
    "pipelines/lib/warehouse_events.py": {"collist", "table", "sets"},
}

_MESSAGE_FUNCS = {"print", "warn", "debug", "info", "warning", "error", "exception", "critical", "log"}


def _is_message_call(call: ast.Call) -> bool:
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name in _MESSAGE_FUNCS or name.endswith(("Error", "Exception", "Warning"))


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return ""


class _Checker:
    """Findings of one module's source: (line, 'SQL'|'JSON', pasted expression)."""

    def __init__(self, source: str, rel: str = "<snippet>") -> None:
        self.tree = ast.parse(source)
        self.rel = rel
        self.allowed = IDENTIFIERS.get(rel, set())
        self.quoters = set(QUOTERS)
        self.strings: dict[str, str] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                self.quoters |= {a.asname for a in node.names if a.name == "sql_literal" and a.asname}
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                self.strings[node.targets[0].id] = node.value.value
        self.messages: set[int] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and _is_message_call(node):
                for sub in [*node.args, *(k.value for k in node.keywords)]:
                    self.messages |= {id(n) for n in ast.walk(sub)}

    def safe(self, node: ast.AST, kind: str, bound: frozenset[str] = frozenset()) -> bool:
        """Whether pasting ``node``'s value into ``kind`` text is safe (see the module docstring).

        ``bound``: names a comprehension binds to the items of a literal or a module constant.
        """
        if isinstance(node, ast.Constant) or isinstance(node, ast.Name) and node.id in bound:
            return True
        if isinstance(node, ast.FormattedValue):
            spec = node.format_spec
            if spec is not None and any(isinstance(v, ast.Constant) and re.search(r"[dfeg%n]$", v.value)
                                        for v in spec.values):
                return True
            return self.safe(node.value, kind, bound)
        if isinstance(node, ast.JoinedStr):  # a fragment: safe when everything pasted into it is
            return all(self.safe(v, kind, bound) for v in node.values)
        name = _call_name(node)
        if name in NUMERIC_CALLS:
            return True
        if kind == "JSON":
            return name == "dumps"
        if name in self.quoters:
            return True
        if name == "str" and len(node.args) == 1:
            return self.safe(node.args[0], kind, bound)
        if (name == "format" and isinstance(node.func.value, ast.Name) and node.func.value.id.isupper()
                and all(self.safe(a, kind, bound) for a in [*node.args, *(k.value for k in node.keywords)])):
            return True  # a constant SQL template filled with constants
        if name == "join" and node.args and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)):
            comp = node.args[0]
            return self.safe(comp.elt, kind, bound | self._constant_targets(comp))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # '[' + ', '.join(quoted) + ']'
            return self.safe(node.left, kind, bound) and self.safe(node.right, kind, bound)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("_")
                and all(isinstance(a, ast.Constant) or isinstance(a, ast.Name) and a.id in bound for a in node.args)
                and not node.keywords):
            return True  # the module's own fragment builder called on constants: code, not data
        if isinstance(node, ast.Name) and node.id.isupper() or isinstance(node, ast.Attribute) and node.attr.isupper():
            return True
        return ast.unparse(node) in self.allowed

    @staticmethod
    def _constant_targets(comp: ast.GeneratorExp | ast.ListComp) -> frozenset[str]:
        """Names a comprehension binds to the items of a literal or of a module constant (``ALL_CAPS``)."""
        names: set[str] = set()
        for gen in comp.generators:
            it = gen.iter
            try:
                constant = isinstance(it, ast.Name) and it.id.isupper() or ast.literal_eval(it) is not None
            except ValueError:
                constant = False
            if constant:
                names |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        return frozenset(names)

    def _template(self, node: ast.AST) -> tuple[str, list[ast.AST]] | None:
        """The literal text and the pasted values of a formatting expression, or None."""
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
            return text, [v for v in node.values if isinstance(v, ast.FormattedValue)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str):
            right = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            return node.left.value, list(right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            recv = node.func.value
            values = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(recv, ast.Name) and recv.id == "pl" and node.args and isinstance(node.args[0], ast.Constant):
                return node.args[0].value, [ast.Name(id="<column>")] * max(1, len(node.args) - 1)
            if isinstance(recv, ast.Constant) and isinstance(recv.value, str):
                return recv.value, values
            if isinstance(recv, ast.Name) and recv.id in self.strings:
                return self.strings[recv.id], values
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            parts: list[ast.AST] = []

            def flatten(n: ast.AST) -> None:
                if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
                    flatten(n.left)
                    flatten(n.right)
                else:
                    parts.append(n)

            flatten(node)
            self.inner |= {id(n) for n in ast.walk(node) if n is not node and isinstance(n, ast.BinOp)}
            if any(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts):
                text = "".join(p.value if isinstance(p, ast.Constant) else HOLE for p in parts)
                return text, [p for p in parts if not isinstance(p, ast.Constant)]
        return None

    def findings(self) -> list[tuple[int, str, str]]:
        out = []
        self.inner: set[int] = set()  # the inner links of a ``+`` chain, read with the whole chain
        for node in ast.walk(self.tree):
            if id(node) in self.messages or id(node) in self.inner:
                continue
            found = self._template(node)
            if found is None or not found[1]:
                continue
            text, values = found
            kind = "SQL" if SQL_RE.search(text) else "JSON" if JSON_RE.search(text) else None
            if kind is None:
                continue
            out += [(node.lineno, kind, ast.unparse(v.value if isinstance(v, ast.FormattedValue) else v))
                    for v in values if not (isinstance(v, ast.JoinedStr) or self.safe(v, kind))]
        return sorted(set(out))


def _shipped_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_no_data_is_pasted_into_json_or_sql():
    problems = []
    for path in _shipped_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, kind, expr in _Checker(path.read_text(encoding="utf-8"), rel).findings():
            problems.append(f"{rel}:{line}: {{{expr}}} pasted into {kind}")
    assert not problems, "data pasted into structured text:\n" + "\n".join(problems)


@pytest.mark.parametrize("snippet, kind", [
    ("q = f\"SELECT * FROM seats WHERE player = '{acc}'\"", "SQL"),
    ("q = \"SELECT * FROM seats WHERE player = '%s'\" % row['player']", "SQL"),
    ("q = \"DELETE FROM cases WHERE case_id = '{}'\".format(cid)", "SQL"),
    ("q = \"SELECT 1 FROM t WHERE a = '\" + name + \"'\"", "SQL"),
    ("TPL = \"SELECT * FROM t WHERE a = '{a}'\"\nq = TPL.format(a=name)", "SQL"),
    ("e = pl.format('[[\"{}\", \"{}\"]]', 'player', 'opponent')", "JSON"),
    ("s = f'{{\"account\":\"{name}\"}}'", "JSON"),
    ("s = '{\"hand\": \"%s\"}' % hand", "JSON"),
    ("q = f\"SELECT * FROM t WHERE {_cond(name)}\"", "SQL"),
    ("""q = f'''SELECT * FROM t WHERE p IN ({", ".join(f"'{n}'" for n in names)})'''""", "SQL"),
])
def test_the_checker_finds_planted_pastes(snippet, kind):
    found = _Checker(snippet).findings()
    assert found and {k for _, k, _ in found} == {kind}, found


@pytest.mark.parametrize("snippet", [
    "from detectors.base import sql_literal as _lit\nq = f'SELECT * FROM seats WHERE player = {_lit(acc)}'",
    "q = f'SELECT * FROM seats WHERE hand_id IN ({\", \".join(sql_literal(h) for h in hands)})'",
    "q = f'SELECT * FROM hands LIMIT {n:d}'",
    "s = f'{{\"account\":{json.dumps(name)},\"ms\":{int(ms)}}}'",
    "log.warning('SELECT %s FROM %s failed', col, table)",
    "raise RailbirdError(f'only SELECT ... FROM is allowed here: {stmt}')",
    "print(f'the cases of {name}: see the file')",
    "line = f'{name} said, \"{message}\"'",
    "q = f\"SELECT {', '.join(f'{_col(c)} AS {c}' for c in ('ip', 'device'))} FROM sessions\"",
    "q = f\"SELECT * FROM t WHERE k = {str(LIMIT)} AND {TEMPLATE.format(x=OTHER)}\"",
])
def test_the_checker_leaves_safe_and_plain_text_alone(snippet):
    assert _Checker(snippet).findings() == []


HOSTILE = ["O'Brien", "''", "'; DROP TABLE cases; --", "a\\'b", "\"quoted\"", "back\\slash", "emoji 🂡 ♠",
           "名字", "Seat 1: x", "tab\there", "nul?", "'", "a''b", " trailing "]


@pytest.mark.parametrize("name", HOSTILE)
def test_sql_literal_round_trips_hostile_names_through_duckdb(name):
    import duckdb

    con = duckdb.connect()
    assert con.execute("SELECT " + sql_literal(name)).fetchone()[0] == name
    con.execute("CREATE TABLE t (p VARCHAR)")
    con.execute("INSERT INTO t VALUES (?), ('other')", [name])
    assert con.execute("SELECT count(*) FROM t WHERE p = " + sql_literal(name)).fetchone()[0] == 1
