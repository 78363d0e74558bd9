"""Cases of one group each: a component of flagged pairs split into the groups that sat out together.

Several groups that sit out at the same moments of the same events (the bubble, a quarter of the field gone)
coincide across groups too, so their flagged pairs join into one connected component, and an account that met
the component by chance can be caught in it. A case should name the accounts that sat out together.

Method
------
Each connected component of the flagged pairs with three or more accounts is split into communities by the
Louvain method (Blondel et al., J. Stat. Mech. 2008; :func:`networkx.community.louvain_communities`, seeded),
each edge weighted by its own evidence times its consistency::

    weight = -log10(p_gap) * n_co / max(n_starts_a, n_starts_b)

``p_gap`` is the pair's coincidence test, ``n_co`` its coincidences and ``n_starts_*`` each account's sit-outs in
the events both sat out in: two members of one group sit out together nearly every time either sits out, two
groups that met at one bubble share a few of their sit-outs only. An account stays in its community only with
evidence of its own there (two events with its other accounts, or a pair flagged on its own: see
:func:`split_components`). A community of two or more accounts is a case; a pair across two communities is
unflagged and keeps its own q and score (``q_pair``, ``score_pair``: the group's it had were the component's); an
account left alone is in no flagged case. The split only attributes: a community is flagged only when its pairs
were (the pair or group rule, :meth:`CoordinatedSitoutDetector.flag`).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import polars as pl


def edge_weights(pairs: pl.DataFrame) -> np.ndarray:
    """The split's edge weight of every pair of ``pairs`` (``p_gap``, ``n_co``, ``n_starts_a``, ``n_starts_b``):
    ``-log10(p_gap)`` times the share of the pair's sit-outs in their shared events that coincided; 0 where a
    figure is missing."""
    p = pairs["p_fisher" if "p_fisher" in pairs.columns else "p_gap"].fill_null(1.0).to_numpy().astype(float)
    co = pairs["n_co"].fill_null(0).to_numpy().astype(float)
    most = np.maximum(pairs["n_starts_a"].fill_null(0).to_numpy(), pairs["n_starts_b"].fill_null(0).to_numpy())
    share = np.where(most > 0, co / np.maximum(most, 1), 0.0)
    return np.clip(-np.log10(np.clip(p, 1e-300, 1.0)), 0.0, None) * np.clip(share, 0.0, 1.0)


def split_components(pairs: pl.DataFrame, own: np.ndarray | None = None, min_events: int = 2,
                     seed: int = 0) -> pl.DataFrame:
    """``pairs`` (with ``pair_flagged``, ``q_value``, ``q_pair``, ``score``, ``score_pair`` and ``tournaments``, the
    events where the pair's sit-outs coincided) with each component of flagged pairs split into communities (the
    module's method): a flagged pair across two communities, or with an account left out, is unflagged and its
    ``q_value`` and ``score`` are its own (``q_pair``, ``score_pair``); ``component`` holds the size of the
    component each flagged pair came from.

    An account of a community split from a component of three or more stays in it only with evidence of its own
    there: it sat out together with the community's other accounts in ``min_events`` distinct events or more (the
    group test's requirement of each member, :func:`detectors.coordinated_sitout.groups.clique_stats`), or one of
    its pairs inside the community is flagged on the pair's own evidence (``own``: the pair rule or the
    corroborated lone coincidence, not the group test). An account that met a group at one moment, the moment other
    groups sat out at too, is no member.

    Parameters
    ----------
    pairs : the scored pairs after the flag rule. own : per pair, flagged on its own evidence (default: every
        flagged pair). min_events : as above. seed : the Louvain method's seed.

    Returns
    -------
    ``pairs`` with ``pair_flagged``, ``q_value`` and ``score`` updated and ``component`` (null for unflagged pairs)."""
    flagged = pairs["pair_flagged"].to_numpy()
    own = flagged if own is None else np.asarray(own, dtype=bool) & flagged
    a, b = pairs["a"].to_list(), pairs["b"].to_list()
    events = pairs["tournaments"].to_list() if "tournaments" in pairs.columns else [None] * pairs.height
    w = edge_weights(pairs)
    g = nx.Graph()
    for i in np.flatnonzero(flagged):
        g.add_edge(a[i], b[i], weight=float(w[i]), events=set(events[i] or []), own=bool(own[i]))
    label: dict[str, int] = {}
    size: dict[str, int] = {}
    for comp in nx.connected_components(g):
        parts = ([comp] if len(comp) <= 2 else
                 [_members(g, part, min_events)
                  for part in nx.community.louvain_communities(g.subgraph(comp), weight="weight", seed=seed)])
        for part in parts:
            if len(part) >= 2:
                k = len(label) + 1
                label.update({x: k for x in part})
                size.update({x: len(comp) for x in part})
    same = np.array([label.get(x, -1) == label.get(y, -2) for x, y in zip(a, b)], dtype=bool)
    keep = flagged & same
    cut = pl.Series(flagged & ~same)
    return pairs.with_columns(
        pair_flagged=pl.Series(keep),
        q_value=pl.when(cut).then(pl.col("q_pair")).otherwise(pl.col("q_value")),
        score=pl.when(cut).then(pl.col("score_pair")).otherwise(pl.col("score")),
        component=pl.Series([size[x] if k else None for x, k in zip(a, keep)], dtype=pl.Int64),
    )


def _members(g: nx.Graph, part: set[str], min_events: int) -> set[str]:
    """The accounts of community ``part`` with evidence of their own in it (:func:`split_components`)."""
    keep = set()
    for m in part:
        edges = [g.edges[m, o] for o in g.neighbors(m) if o in part]
        if any(e["own"] for e in edges) or len(set().union(*(e["events"] for e in edges))) >= min_events:
            keep.add(m)
    return keep
