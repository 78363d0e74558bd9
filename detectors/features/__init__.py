"""Warehouse -> feature frames (DuckDB SQL / Polars, vectorised).

- :mod:`detectors.features.gameplay`: heads-up decisions judged by the cards,
  own-baseline tests and per-pair tables (soft play, chip dumping, bounties).
- :mod:`detectors.features.identity`: account-identity features.
"""
