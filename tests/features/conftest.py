"""One planted world for the day-feature tests, built once per session."""

from __future__ import annotations

import pytest

from tests.detect.conftest import build_world


@pytest.fixture(scope="session")
def days_world():
    """3,000 hands from 2026-03-04 18:00, 40 s apart (three hand days): a soft pair, a dumper, regulars."""
    return build_world(n_players=24, n_hands=3000, soft=[(("p01", "p02"), 0.6)], dump=[(("p06", "p07"), 0.5)],
                       regulars=[("p10", "p11")], seed=3)
