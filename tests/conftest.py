"""Shared fixtures: every test session gets its own RAILBIRD_HOME and DAGSTER_HOME.

Set before anything imports ``pipelines``, so module-level defaults (the
Dagster resources' folders) point into the temporary home, and Dagster never
writes into the checkout or phones home.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest

_SESSION_HOME = Path(tempfile.mkdtemp(prefix="railbird-test-"))
os.environ["RAILBIRD_HOME"] = str(_SESSION_HOME / "var")
os.environ["DAGSTER_HOME"] = str(_SESSION_HOME / "var" / "dagster")
os.environ["DAGSTER_DISABLE_TELEMETRY"] = "1"
for _k in ("RAILBIRD_WAREHOUSE", "RAILBIRD_SNAPSHOT", "RAILBIRD_REVIEW_DB"):
    os.environ.pop(_k, None)

from pipelines.lib.paths import ensure_dagster_home  # noqa: E402

ensure_dagster_home()

# The real hand histories: RAILBIRD_CORPORA (as benchmarks/corpus.py reads it), else the shared/corpora
# folder beside the checkout; tests that need them skip when neither exists.
CORPUS = Path(os.environ.get("RAILBIRD_CORPORA") or Path(__file__).resolve().parents[2] / "shared" / "corpora") / "pokerstars"


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker (``make test``: ``-n 2 --dist loadfile --no-loadscope-reorder``), the test
    files holding a ``slow`` test are put first, each file's tests kept together and in order.

    Method: xdist hands out whole files (so each module-scoped fixture is built once) in the order the
    workers collected them; a slow file handed out last would leave one core idle at the end, so the slow
    files go first and the many quick ones fill in behind. A serial run keeps pytest's own order.
    Not xdist's ``loadgroup``: with pytest 9.2 its ``xdist_group`` marks are silently ignored
    (pytest-dev/pytest-xdist#1386); session fixtures are built once per worker instead (each a few seconds).
    """
    if not hasattr(config, "workerinput"):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # a stable sort: files stay whole, in order


@pytest.fixture(scope="session")
def railbird_home() -> Path:
    """The session's RAILBIRD_HOME (a temporary folder)."""
    return Path(os.environ["RAILBIRD_HOME"])


@pytest.fixture
def tmp_warehouse(tmp_path) -> Path:
    """Path of a fresh, empty warehouse file (created on first connect)."""
    return tmp_path / "wh.duckdb"


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The real PokerStars hand histories (read-only); tests skip without them."""
    if not CORPUS.exists():
        pytest.skip(f"real PokerStars corpus not found at {CORPUS} (set RAILBIRD_CORPORA to the corpora folder)")
    return CORPUS


def build_hand(hand_id: str, *, content_hash: str = "h", day: str = "2026-03-04", table: str = "T1",
               big_blind: str = "0.10", source_file: str = "/landing/a.txt", source_line: int = 1,
               seats=None, actions=None, board=None, tournament_id: str | None = None):
    """A parsed hand built by hand (a ``Batch`` with hands/seats/actions/boards), columns as schema.sql.

    ``seats``: [(seat, player, stack, put_in, collected, position)];
    ``actions``: [(street, player, action, amount)] in order (seq = index).
    """
    import datetime as dt
    from decimal import Decimal

    import polars as pl

    from pipelines.lib.warehouse import Batch

    seats = seats or [(1, "amy", "10", "0.10", "0.15", "BB"), (2, "bob", "10", "0.05", "0", "SB")]
    actions = actions or [("preflop", "bob", "post_sb", "0.05"), ("preflop", "amy", "post_bb", "0.10"),
                          ("preflop", "bob", "fold", "0")]
    started = dt.datetime.fromisoformat(day + "T20:00:00")
    dec = pl.Decimal(18, 2)
    total = sum(Decimal(s[3]) for s in seats)
    hands = pl.DataFrame({
        "hand_id": [hand_id], "site": ["PokerStars"], "is_zoom": [False], "game": ["holdem"], "hi_lo": [False],
        "limit_type": ["no_limit"], "currency": ["CHIPS" if tournament_id else "USD"],
        "is_tournament": [tournament_id is not None], "tournament_id": [tournament_id], "tournament_level": [None],
        "small_blind": [Decimal(big_blind) / 2], "big_blind": [Decimal(big_blind)], "ante": [None],
        "started_at": [started], "started_at_local": [None], "day": [started.date()], "table_name": [table],
        "max_seats": [6], "button_seat": [2], "n_players": [len(seats)], "total_pot": [total],
        "rake": [Decimal("0")], "run_it_twice": [False], "all_cards_known": [False], "hero": [None],
        "source_file": [source_file], "source_line": [source_line], "content_hash": [content_hash],
    }, schema_overrides={"small_blind": dec, "big_blind": dec, "ante": dec, "total_pot": dec, "rake": dec,
                         "tournament_id": pl.String, "tournament_level": pl.String, "started_at_local": pl.String,
                         "hero": pl.String})
    seat_df = pl.DataFrame({
        "hand_id": [hand_id] * len(seats), "seat": [s[0] for s in seats], "player": [s[1] for s in seats],
        "stack_start": [Decimal(s[2]) for s in seats], "bounty": [None] * len(seats),
        "sitting_out": [False] * len(seats), "dealt_in": [True] * len(seats), "position": [s[5] for s in seats],
        "put_in": [Decimal(s[3]) for s in seats], "returned": [Decimal(0)] * len(seats),
        "collected": [Decimal(s[4]) for s in seats],
        "net": [Decimal(s[4]) - Decimal(s[3]) for s in seats],
        "stack_end": [Decimal(s[2]) - Decimal(s[3]) + Decimal(s[4]) for s in seats], "is_hero": [False] * len(seats),
    }, schema_overrides={"stack_start": dec, "bounty": dec, "put_in": dec, "returned": dec, "collected": dec,
                         "net": dec, "stack_end": dec})
    act_df = pl.DataFrame({
        "hand_id": [hand_id] * len(actions), "seq": list(range(len(actions))), "street": [a[0] for a in actions],
        "player": [a[1] for a in actions], "action": [a[2] for a in actions],
        "amount": [Decimal(a[3]) for a in actions], "raise_to": [None] * len(actions),
        "is_all_in": [False] * len(actions), "pot_before": [Decimal(0)] * len(actions),
        "to_call": [Decimal(0)] * len(actions), "n_active": [len(seats)] * len(actions),
    }, schema_overrides={"amount": dec, "raise_to": dec, "pot_before": dec, "to_call": dec})
    tables = {"hands": hands, "seats": seat_df, "actions": act_df}
    if board:
        tables["boards"] = pl.DataFrame({"hand_id": [hand_id], "run": [1], "cards": [board]})
    return Batch(tables=tables)


@pytest.fixture
def hand_builder():
    """``build_hand`` as a fixture (see its docstring)."""
    return build_hand


def no_stale_defs_state():
    """A context in which no Dagster defs-state storage is current (the reason: :func:`_no_stale_dagster_state_storage`).

    For fixtures wider than one test (module, session), which run before that autouse fixture does.
    """
    from dagster._core.storage.defs_state.base import set_defs_state_storage

    gc.collect()
    return set_defs_state_storage(None)


@pytest.fixture(scope="session")
def fresh_dagster_state():
    """:func:`no_stale_defs_state`, for fixtures and tests that load definitions more than once."""
    return no_stale_defs_state


@pytest.fixture(autouse=True)
def _no_stale_dagster_state_storage():
    """Each test starts with no current Dagster defs-state storage.

    A DagsterInstance puts its storage in a process-wide context variable when
    created; once that instance is gone, loading definitions in a later test
    fails with "undefined DagsterInstance weakref". Clearing it per test keeps
    tests independent of each other's instances. The collector runs first: a
    suspended generator of an earlier run that entered an instance resets the
    variable to that run's (by then dead) storage whenever it is collected,
    which could otherwise happen in the middle of this test.
    """
    with no_stale_defs_state():
        yield
