"""How many parse processes ingest starts when none are asked for (pipelines.lib.ingest.default_workers)."""

from __future__ import annotations

import os

import pytest

from pipelines.lib import ingest


@pytest.fixture
def machine(monkeypatch):
    """Pretend to run on ``cores`` usable cores and ``gb`` GB of memory."""
    monkeypatch.delenv("RAILBIRD_PARSE_WORKERS", raising=False)

    def set_machine(cores: int, gb: float) -> None:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
        pages = int(gb * (1 << 30)) // 4096
        monkeypatch.setattr(os, "sysconf", lambda name: {"SC_PHYS_PAGES": pages, "SC_PAGE_SIZE": 4096}[name])

    return set_machine


def test_one_worker_per_usable_core(machine):
    machine(cores=6, gb=64)
    assert ingest.default_workers() == 6
    machine(cores=1, gb=64)
    assert ingest.default_workers() == 1


def test_memory_caps_the_workers(machine):
    machine(cores=16, gb=4.5)
    assert ingest.default_workers() == 4
    machine(cores=16, gb=0.5)
    assert ingest.default_workers() == 1


def test_the_environment_wins(machine, monkeypatch):
    machine(cores=8, gb=64)
    monkeypatch.setenv("RAILBIRD_PARSE_WORKERS", "3")
    assert ingest.default_workers() == 3
