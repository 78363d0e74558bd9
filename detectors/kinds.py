"""The kinds of collusion railbird finds: the one list every other place reads.

Each :class:`Kind` names the detector class that finds it, how a person says
it, and how ``spec/evaluation.md`` matches a case of it to a labelled group.
The detect assets, the cases, the reports, the web app, ``railbird eval`` and
the benchmarks all read :data:`ALL`; a new detector is its module, one entry
here and its tests (docs/adding-a-detector.md).

Example
-------
>>> from detectors.kinds import KINDS, by_name
>>> KINDS[0]
'soft_play'
>>> by_name("seat_handoff").match
'account'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One forbidden practice and the detector that looks for it.

    Parameters
    ----------
    name:
        the kind as the inputs and labels spell it (``spec/inputs.md``).
    detector:
        ``"module:Class"`` of its detector, imported on demand.
    title:
        the plain name an investigator reads in a list ("soft play").
    description:
        what the accounts are suspected of, as the case report's sentence says it.
    match:
        how a case matches a labelled group (``spec/evaluation.md``):
        ``"pair"``: the case names at least two of the group's accounts (all of
        them when it has fewer); ``"account"``: the case names the group's
        account and, where the group names tournaments, one of them.
    """

    name: str
    detector: str
    title: str
    description: str
    match: str = "pair"


ALL: tuple[Kind, ...] = (
    Kind("soft_play", "detectors.soft_play:SoftPlayDetector", "soft play",
         "soft play (not playing against each other as they play against others)"),
    Kind("chip_dumping", "detectors.chip_dumping:ChipDumpingDetector", "chip dumping",
         "chip dumping (deliberately losing chips to a partner)"),
    Kind("coordinated_sitout", "detectors.coordinated_sitout:CoordinatedSitoutDetector", "coordinated sit-out",
         "coordinated sitting out (agreeing to sit out together)"),
    Kind("bounty_collusion", "detectors.bounty_collusion:BountyCollusionDetector", "bounty collusion",
         "bounty collusion (ganging up for, or passing, bounties)"),
    Kind("multi_accounting", "detectors.multi_accounting:MultiAccountingDetector", "multi-accounting",
         "multi-accounting (one person playing several accounts)"),
    Kind("seat_handoff", "detectors.seat_handoff:SeatHandoffDetector", "seat hand-off",
         "seat hand-off (another person playing the account's seat mid-event)", match="account"),
    Kind("heads_up_flipping", "detectors.heads_up_flipping:HeadsUpFlippingDetector", "heads-up flipping",
         "heads-up flipping (both all in preflop with any cards instead of playing the match out)"),
    Kind("hand_chat", "detectors.hand_chat:HandChatDetector", "hand chat",
         "hand chat (telling a partner about a hand while it is in play)"),
)

#: the kinds' names, in the order lists show them
KINDS: tuple[str, ...] = tuple(k.name for k in ALL)


def by_name(name: str) -> Kind:
    """The :class:`Kind` called ``name`` (``KeyError`` for a kind railbird does not know)."""
    for k in ALL:
        if k.name == name:
            return k
    raise KeyError(name)


__all__ = ["ALL", "KINDS", "Kind", "by_name"]
