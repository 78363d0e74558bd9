"""railbird's detectors: a plain library (it never imports dagster).

Every detector follows :class:`detectors.base.Detector`: fit on a population,
score, threshold, explain. :func:`all_detectors` builds one of each kind.
"""

from __future__ import annotations

import importlib

from detectors.base import KINDS, Detector, Evidence, Signal

# kind -> "module:Class"; one module per detector.
REGISTRY: dict[str, str] = {
    "soft_play": "detectors.soft_play:SoftPlayDetector",
    "chip_dumping": "detectors.chip_dumping:ChipDumpingDetector",
    "bounty_collusion": "detectors.bounty_collusion:BountyCollusionDetector",
    "multi_accounting": "detectors.multi_accounting:MultiAccountingDetector",
    "seat_handoff": "detectors.seat_handoff:SeatHandoffDetector",
    "coordinated_sitout": "detectors.coordinated_sitout:CoordinatedSitoutDetector",
}


def get_detector(kind: str, **params) -> Detector:
    module, cls = REGISTRY[kind].split(":")
    return getattr(importlib.import_module(module), cls)(**params)


def all_detectors(**params) -> list[Detector]:
    return [get_detector(kind, **params) for kind in REGISTRY]


__all__ = ["KINDS", "REGISTRY", "Detector", "Evidence", "Signal", "all_detectors", "get_detector"]
