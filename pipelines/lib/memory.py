"""Giving back the memory a finished step freed, so that the next step of the same process does not start on top of it.

``railbird run`` materialises every ``<kind>_signals`` asset one after the other in one process
(``execute_in_process``). What a kind frees is not always given back to the system:

- frames in reference cycles (a fitted detector's objects referring to each other) are freed only by Python's
  cyclic garbage collector, whose oldest generation runs rarely: a few large frames are few objects, and do not
  trigger it;
- glibc's malloc keeps what DuckDB's worker threads and NumPy freed in its arenas (one per thread that allocated)
  until ``malloc_trim`` returns their free pages; the next kind's Polars frames come from another allocator
  (Polars' own jemalloc), so they cannot reuse those pages, and the two add up.

:func:`give_back` does both at the end of a step. Polars' jemalloc needs nothing: Polars sets its decay
(``_RJEM_MALLOC_CONF``: dirty pages purged after 0.5 s, muzzy after 1 s, by a background thread). The figures
(what each step takes back after each kind of a 2M-hand night) are in docs/measurements.md, 2026-12-07, printed by
``benchmarks/kind_peak.py --probe``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library is not glibc (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def give_back() -> bool:
    """Collect Python's reference cycles (every generation), then return glibc's free pages to the system.

    Returns
    -------
    bool
        whether glibc's ``malloc_trim(0)`` ran (False where the C library has none).
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
