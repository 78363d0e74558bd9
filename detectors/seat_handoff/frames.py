"""The fit's large frames held once: an account's rows as slices of one sorted frame, and the field's action
counts as arrays keyed by tournament with the accounts as integer codes.

The seat hand-off fit reads, for the candidates' and the null's accounts, every tournament hand and every
decision time of their history, and every player's counts in the events they played (the field). Split into one
frame per account (``partition_by``) those rows were held twice, and the field's accounts as one Python string per
row; here each is one frame sorted by its key (a stable sort: the rows of a key keep their order) read through
zero-copy slices, and the field's rows are arrays with the account as an integer.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from detectors.seat_handoff.queries import ACTS


def key_slices(df: pl.DataFrame, key: str) -> tuple[pl.DataFrame, dict]:
    """The rows of each value of ``key`` as a slice of one frame, as ``partition_by(key, as_dict=True)`` gives
    them but without a copy per group.

    Parameters
    ----------
    df : the frame. key : the column to split by.

    Returns
    -------
    ``(sorted, groups)``: ``df`` sorted by ``key`` (stable: each group's rows in their order in ``df``) and a
    dict from each value of ``key`` to its rows, zero-copy slices of ``sorted``, each group's rows in the order
    ``partition_by`` keeps."""
    if df.height == 0:
        return df, {}
    df = df.sort(key, maintain_order=True, nulls_last=True)
    runs = (df.select(pl.col(key)).with_row_index("_i")
            .group_by(key, maintain_order=True).agg(pl.col("_i").first().alias("lo"), pl.len().alias("n")))
    return df, {k: df.slice(lo, n) for k, lo, n in zip(runs[key].to_list(), runs["lo"].to_list(), runs["n"].to_list())}


class FieldCounts:
    """The field of the candidates' events: every player's action counts per hand, by tournament, for
    :meth:`counts` (the other players' counts before and after a time).

    Parameters
    ----------
    field : one row per tournament, hand start and player (``tournament_id``, ``started_at``, ``account`` and the
        action counts ``n_<action>``).

    The rows are kept as arrays (start times, the account as an integer code, the counts as 32-bit integers) and
    each tournament as a range of them; a tournament's rows in ``field``'s order by start time (a stable sort)."""

    def __init__(self, field: pl.DataFrame) -> None:
        field = field.sort("tournament_id", "started_at", maintain_order=True)
        accounts = field["account"].unique().sort().to_list()
        self.codes = {a: i for i, a in enumerate(accounts)}
        self.t = field["started_at"].to_numpy()
        self.acc = field["account"].replace_strict(self.codes, return_dtype=pl.Int32).to_numpy()
        self.X = field.select([pl.col(f"n_{a}").cast(pl.Int32) for a in ACTS]).to_numpy()
        runs = (field.select("tournament_id").with_row_index("_i")
                .group_by("tournament_id", maintain_order=True).agg(pl.col("_i").first().alias("lo"), pl.len().alias("n")))
        self.bounds = {t: (lo, lo + n) for t, lo, n in
                       zip(runs["tournament_id"].to_list(), runs["lo"].to_list(), runs["n"].to_list())}

    def __contains__(self, tid: str) -> bool:
        return tid in self.bounds

    def counts(self, tid: str, account: str, cp_time) -> tuple[np.ndarray, np.ndarray]:
        """The other players' action counts in tournament ``tid`` before / after ``cp_time`` (``account``'s own
        rows left out), as floats; zeros for a tournament not in the field."""
        if tid not in self.bounds:
            return np.zeros(len(ACTS)), np.zeros(len(ACTS))
        lo, hi = self.bounds[tid]
        t, X = self.t[lo:hi], self.X[lo:hi]
        others = self.acc[lo:hi] != self.codes.get(account, -1)
        after = t >= np.datetime64(cp_time, "us")
        return X[others & ~after].sum(axis=0).astype(float), X[others & after].sum(axis=0).astype(float)
