"""Identity features: who shares what, who plays like whom, who is online when.

One module per concern (:mod:`~detectors.features.identity.links`, :mod:`~detectors.features.identity.style`,
:mod:`~detectors.features.identity.coentry`, :mod:`~detectors.features.identity.usage`,
:mod:`~detectors.features.identity.behaviour`); every public
name is importable from here (``from detectors.features import identity as idf``).

Everything here reads the warehouse (``pipelines/lib/schema.sql``) through one
DuckDB connection and returns Polars frames; all heavy work is SQL. The
detectors ``multi_accounting``, ``seat_handoff`` and ``coordinated_sitout``
build on these frames.

Methods
-------
* **Identifier links.** Each account's identifiers (device fingerprints, exact
  IPs, IP networks (/24 for IPv4, /64 for IPv6), payment-instrument hashes) are
  weighted by rarity with an inverse-document-frequency weight
  ``log(N / n_accounts_sharing)`` (Sparck Jones, "A statistical interpretation
  of term specificity and its application in retrieval", J. Documentation
  28(1), 1972): an IP behind hundreds of accounts (a carrier NAT, a café) is
  weak evidence, a device shared by two is strong. Identifiers shared by more
  than ``max_share`` accounts are dropped, which keeps the candidate graph
  sparse. A link is further weighted by time: shared identifiers whose logins by
  the two accounts fall within ``close_hours`` of each other count in full,
  others at half weight (after the entity-resolution practice of record-linkage
  weights, Fellegi & Sunter, JASA 64(328), 1969).
* **Style fingerprints.** Per account the classic tracker statistics (VPIP, PFR,
  aggression frequency), the distribution of bet sizes as fractions of the pot
  and the distribution of decision times (log milliseconds); the likeness of two
  accounts is a standardised distance whose significance is its rank among
  distances of random account pairs of the same population (an empirical
  null; cf. stylometric authorship attribution, Stamatatos, "A survey of modern
  authorship attribution methods", JASIST 60(3), 2009, and player
  fingerprinting from action logs, e.g. Chen et al., "Game bot identification
  based on manifold learning", NetGames 2008).
* **Patterns of use.** For candidate pairs only: seconds both were online at
  once, hand-overs (one logs in shortly after the other logs out), tournaments
  entered together, with a p-value for that overlap under a configuration
  model (entries fall into events in proportion to field size; Newman,
  "Networks", 2nd ed., 2018, ch. 12, applied to the account-event bipartite
  graph).
* **Behaviour alone.** Every pair of accounts with enough play, judged without any shared identifier: style,
  decision times, hours online together and how close the accounts were opened, each ranked among the
  population's own pairs, Fisher-combined, Benjamini-Hochberg over every pair
  (:func:`~detectors.features.identity.behaviour.behaviour_pairs`).
"""

from __future__ import annotations

from detectors.features.identity.behaviour import behaviour_pairs, share_at_least
from detectors.features.identity.coentry import (
    COENTRY_CELLS_SQL,
    COENTRY_COUNTS_SQL,
    COENTRY_SHARES_SQL,
    KNOCKOUT_PSEUDO,
    co_entries,
    entry_pools,
    tournament_entries,
)
from detectors.features.identity.links import (
    ID_KINDS,
    IDENTIFIERS_SQL,
    NET_SQL,
    identifiers,
    identity_links,
    population_size,
    table_rows,
)
from detectors.features.identity.style import (
    RATE_FEATURES,
    SIZE_BINS,
    SIZE_FEATURES,
    STYLE_SQL,
    TIME_BINS,
    TIME_FEATURES,
    likeness,
    style_fingerprints,
)
from detectors.features.identity.usage import usage_patterns

__all__ = [
    "COENTRY_CELLS_SQL", "COENTRY_COUNTS_SQL", "COENTRY_SHARES_SQL", "IDENTIFIERS_SQL", "ID_KINDS", "KNOCKOUT_PSEUDO",
    "NET_SQL", "RATE_FEATURES", "SIZE_BINS", "SIZE_FEATURES", "STYLE_SQL", "TIME_BINS", "TIME_FEATURES",
    "behaviour_pairs", "share_at_least", "co_entries", "entry_pools", "identifiers", "identity_links", "likeness",
    "population_size", "style_fingerprints", "table_rows", "tournament_entries", "usage_patterns",
]
