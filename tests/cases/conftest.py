"""Fixtures: a planted warehouse, its cases, a published snapshot and a review store with users."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases_world import PASSWORD, nightly  # noqa: E402,F401

from pipelines.lib.review import ReviewStore  # noqa: E402


@pytest.fixture(scope="session")
def _published_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("published")
    nightly(folder, 1, "run1")
    with ReviewStore(folder / "review.sqlite") as store:
        store.add_user("ivy", "investigator", PASSWORD)
        store.add_user("rex", "reviewer", PASSWORD)
        store.add_user("ada", "admin", PASSWORD)
    return folder


@pytest.fixture(scope="session")
def second_night(_published_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published folder after the second night (the hand-chat and heads-up flipping cases among others);
    shared by the tests that only read it."""
    dest = tmp_path_factory.mktemp("second") / "pub"
    shutil.copytree(_published_template, dest)
    nightly(dest, 2, "run2")
    return dest


@pytest.fixture
def published(_published_template: Path, tmp_path: Path) -> Path:
    """A folder with a stage-1 warehouse, published snapshot, review store and three users (a fresh copy per test)."""
    dest = tmp_path / "pub"
    shutil.copytree(_published_template, dest)
    return dest
