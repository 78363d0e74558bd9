"""Graph models over accounts (networkx): value flow, suspicious pairs, rings and stars.

Method
------
Pairwise tests find pairs; collusion is often organised in groups. Following
the graph view of collusion detection (a "collusion graph" whose edges are
pairwise suspicion, e.g. Yampolskiy, "Online poker security: problems and
solutions", 2007; and the value-flow attribution of Mazrooei, Archibald &
Bowling, AAAI 2013, summed per ordered pair), this module builds:

- :func:`value_flow_graph`: a directed graph, edge u -> v weighted by the
  value (big blinds, card-aware) u's decisions gave v beyond u's own baseline;
- :func:`suspicion_graph`: an undirected graph of flagged pairs, weighted by
  the pair score;
- :func:`groups`: the accounts to accuse together. Each connected component
  of the suspicion graph is split into communities by greedy modularity
  maximisation (Clauset, Newman & Moore, Phys. Rev. E 2004) when it is large;
  a community of three or more accounts that is dense (at least half of its
  possible edges flagged, every member tied to two others) is a *ring*; a node with flagged edges to three or
  more accounts that are not connected among themselves is a *star* (one
  account feeding many, or many feeding one); everything else stays a pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx


@dataclass
class Group:
    shape: str  # 'pair' | 'ring' | 'star'
    accounts: list[str]
    edges: list[tuple[str, str]] = field(default_factory=list)
    centre: str | None = None  # the star's hub


def value_flow_graph(rows: Iterable[dict], src: str = "player", dst: str = "opponent", weight: str = "value") -> nx.DiGraph:
    """Directed graph of value given: one edge per ordered pair with positive weight."""
    g = nx.DiGraph()
    for r in rows:
        w = r.get(weight)
        if w is not None and w > 0:
            g.add_edge(r[src], r[dst], weight=float(w))
    return g


def suspicion_graph(pairs: Iterable[tuple[str, str, float]]) -> nx.Graph:
    """Undirected graph of flagged pairs; parallel edges keep the higher score."""
    g = nx.Graph()
    for a, b, s in pairs:
        if a == b:
            continue
        if g.has_edge(a, b):
            g[a][b]["weight"] = max(g[a][b]["weight"], float(s))
        else:
            g.add_edge(a, b, weight=float(s))
    return g


def _density(g: nx.Graph, nodes: list[str]) -> float:
    k = len(nodes)
    if k < 2:
        return 0.0
    return g.subgraph(nodes).number_of_edges() / (k * (k - 1) / 2)


def groups(g: nx.Graph, *, max_component: int = 8, min_ring_density: float = 0.5, min_star_degree: int = 3) -> list[Group]:
    """Rings, stars and pairs from the suspicion graph (see the module docstring)."""
    out: list[Group] = []
    for comp in nx.connected_components(g):
        nodes = sorted(comp)
        if len(nodes) > max_component:
            parts = [sorted(c) for c in nx.community.greedy_modularity_communities(g.subgraph(nodes), weight="weight")]
        else:
            parts = [nodes]
        covered: set[frozenset] = set()
        for part in parts:
            sub = g.subgraph(part)
            ring = (
                len(part) >= 3
                and _density(g, part) >= min_ring_density
                and min(d for _, d in sub.degree()) >= 2  # a star (hub and leaves) is not a ring
            )
            if ring:
                out.append(Group("ring", part, sorted(tuple(sorted(e)) for e in sub.edges())))
                covered |= {frozenset(e) for e in sub.edges()}
                continue
            # stars: hubs whose neighbours are not connected among themselves
            for hub in sorted(part, key=lambda n: -sub.degree(n)):
                nb = [n for n in sub.neighbors(hub) if frozenset((hub, n)) not in covered]
                if len(nb) >= min_star_degree and _density(sub, nb) < min_ring_density:
                    edges = [tuple(sorted((hub, n))) for n in nb]
                    out.append(Group("star", [hub, *sorted(nb)], sorted(edges), centre=hub))
                    covered |= {frozenset(e) for e in edges}
            for a, b in sub.edges():
                if frozenset((a, b)) not in covered:
                    out.append(Group("pair", sorted([a, b]), [tuple(sorted((a, b)))]))
                    covered.add(frozenset((a, b)))
        # edges between communities of a split component stay pairs
        for a, b in g.subgraph(nodes).edges():
            if frozenset((a, b)) not in covered:
                out.append(Group("pair", sorted([a, b]), [tuple(sorted((a, b)))]))
                covered.add(frozenset((a, b)))
    return out
