"""Per-day work on one machine or on a Dask cluster: any per-day function, and the day features of a warehouse.

What is computed
----------------
:func:`run_days` applies a per-day function ``fn(day_input) -> dict[str, pl.DataFrame]`` to every input of a
mapping ``{day: day_input}`` and returns ``{day: {table: frame}}`` in the mapping's order.

:func:`compute_days` brings a :class:`~detectors.features.days.DayStore` up to date from a warehouse, as
:func:`~detectors.features.days.refresh_days` does, with the days' :func:`~detectors.features.days.compute_day`
run on the engine: the driver (the process holding the warehouse) reads each day's rows
(:func:`~detectors.features.days.read_day`, Arrow tables) and sends them to a worker, which computes the day and,
when the store has a folder, writes the day's files there itself (many writers, one per day: the store's layout
needs no coordination between them); an in-memory store is written by the driver.

Engines
-------
``engine="embedded"`` calls the function in this process, day after day (the default: ``make demo`` and
``make test`` need no cluster). ``engine="dask"`` submits one task per day to a Dask cluster: the one at
``address`` (``tcp://scheduler:8786``) or, without one, a local cluster of ``workers`` processes started for
the call and closed after it (Dask's local mode, used by the tests). The function is the same object either
way, unchanged: Dask ships it and its input by pickle (Arrow tables and Polars frames pickle as Arrow
buffers). At most ``in_flight`` days (default twice the workers) are sent ahead of the results, so the driver
holds a few days' rows, not the whole backfill. The store's folder must be one every worker reaches (a shared
file system; docs/scale-out.md).

Reference: Dask distributed, https://distributed.dask.org (``Client.scatter``, ``Client.submit``,
``as_completed``, ``LocalCluster``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import duckdb
import polars as pl

from detectors.features.days import DayStore, as_date, compute_day, day_fingerprints, read_day, refresh_days

DayFn = Callable[[Any], "dict[str, pl.DataFrame]"]
ENGINES = ("embedded", "dask")
#: the Dask scheduler the day features run on (``tcp://host:8786``); unset: embedded
SCHEDULER_VAR = "RAILBIRD_DASK_SCHEDULER"


def engine_settings() -> dict[str, Any]:
    """The ``engine`` and ``address`` keyword arguments of :func:`compute_days` this deployment asks for:
    Dask at ``$RAILBIRD_DASK_SCHEDULER`` when it is set, else embedded."""
    address = os.environ.get(SCHEDULER_VAR, "").strip()
    return {"engine": "dask", "address": address} if address else {"engine": "embedded", "address": None}


@dataclass(frozen=True)
class DayRows:
    """One day's warehouse rows and what to do with them: the input of :func:`day_features` and :func:`store_day`.

    ``frames``: table name -> Arrow table (:func:`~detectors.features.days.read_day`); ``samples``,
    ``random_state``: the card-value setting; ``root`` and ``fingerprint``: where and as what content
    :func:`store_day` stores the day (``root`` None: nowhere)."""

    day: _dt.date
    frames: Mapping[str, Any]
    samples: int = 16
    random_state: int = 0
    root: str | None = None
    fingerprint: tuple[int, ...] = ()


def day_features(rows: DayRows) -> dict[str, pl.DataFrame]:
    """:func:`~detectors.features.days.compute_day` of ``rows``: the day's feature tables."""
    return compute_day(rows.frames, rows.day, samples=rows.samples, random_state=rows.random_state)


def store_day(rows: DayRows) -> dict[str, int]:
    """Compute ``rows``' day and write it into the store at ``rows.root``, its decisions part by part
    (:meth:`~detectors.features.days.DayStore.writing`); return the rows of each table."""
    store = DayStore(Path(rows.root), samples=rows.samples, random_state=rows.random_state)
    with store.writing(rows.day, list(rows.fingerprint)) as w:
        w.put(compute_day(rows.frames, rows.day, samples=rows.samples, random_state=rows.random_state,
                          decisions_to=lambda f: w.append("hu_decisions", f)))
    return w.rows()


def run_days(fn: DayFn, inputs: Mapping[Any, Any], *, engine: str = "embedded", workers: int = 2,
             address: str | None = None, in_flight: int | None = None) -> dict[Any, Any]:
    """Apply ``fn`` to every day's input; return ``{day: fn(input)}`` in the order of ``inputs``.

    Parameters: ``fn`` a picklable module-level function; ``inputs`` ``{day: input}``; ``engine`` ``embedded``
    (this process) or ``dask``; ``workers`` processes of the local Dask cluster (one thread each), ignored with
    ``address``; ``address`` a running Dask scheduler; ``in_flight`` days sent ahead of the results. A day whose
    function raises raises here.
    """
    got = dict(map_days(fn, inputs.items(), engine=engine, workers=workers, address=address, in_flight=in_flight))
    return {d: got[d] for d in inputs}


def map_days(fn: DayFn, items: Iterable[tuple[Any, Any]], *, engine: str = "embedded", workers: int = 2,
             address: str | None = None, in_flight: int | None = None) -> Iterator[tuple[Any, Any]]:
    """``(day, fn(input))`` for each ``(day, input)`` of ``items`` (read lazily), as the days finish.

    Parameters as :func:`run_days`. Embedded, the days finish in order; on Dask in any order."""
    if engine == "embedded":
        for day, x in items:
            yield day, fn(x)
        return
    if engine != "dask":
        raise ValueError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    from distributed import as_completed

    it = iter(items)
    with _dask_client(workers, address) as client:
        ahead = max(1, in_flight or 2 * workers)
        days: dict[str, Any] = {}

        def submit():
            for day, x in it:
                [data] = client.scatter([x], hash=False)  # straight to a worker, not through the scheduler
                fut = client.submit(fn, data, pure=False)
                days[fut.key] = day
                return fut
            return None

        running = as_completed([f for f in (submit() for _ in range(ahead)) if f is not None])
        for fut in running:
            yield days.pop(fut.key), fut.result()
            nxt = submit()
            if nxt is not None:
                running.add(nxt)


def compute_days(con: duckdb.DuckDBPyConnection, store: DayStore, days: list[_dt.date] | None = None, *,
                 engine: str = "embedded", workers: int = 2, address: str | None = None,
                 in_flight: int | None = None) -> list[_dt.date]:
    """:func:`~detectors.features.days.refresh_days` with the days computed on ``engine``; returns the days computed.

    Parameters: ``con`` the warehouse; ``store`` where the day tables go (a folder every worker reaches, or in
    memory); ``days`` the days to bring up to date (default every hand day); the rest as :func:`run_days`.
    Embedded, this is ``refresh_days`` itself."""
    fp = day_fingerprints(con)
    if engine == "embedded":
        return refresh_days(con, store, days, fp)
    todo = sorted(fp) if days is None else sorted(as_date(d) for d in days)
    for d in todo:
        if d not in fp:
            store.drop(d)
    todo = [d for d in todo if d in fp and not store.is_current(d, fp[d])]
    if not todo:
        return []
    root = None if store.root is None else str(store.root)

    def rows():
        for d in todo:
            yield d, DayRows(d, read_day(con, d), store.samples, store.random_state, root, tuple(fp[d]))

    fn = store_day if root is not None else day_features
    for d, result in map_days(fn, rows(), engine=engine, workers=workers, address=address, in_flight=in_flight):
        if root is None:
            store.write(d, result, fp[d])
    return todo


@contextlib.contextmanager
def _dask_client(workers: int, address: str | None) -> Iterator[Any]:
    """A Dask client of the scheduler at ``address``, or of a local cluster of ``workers`` processes it owns."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # the optional extra
        raise ImportError("engine 'dask' needs the cluster extra: pip install 'railbird[cluster]'") from exc
    if address is not None:
        with Client(address) as client:
            yield client
        return
    # one Polars thread per worker process: the cluster already keeps the cores busy
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      worker_dashboard_address=None, silence_logs=logging.ERROR,
                      env={"POLARS_MAX_THREADS": "1"}) as cluster, Client(cluster) as client:
        yield client
