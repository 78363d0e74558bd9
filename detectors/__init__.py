"""railbird's detectors: a plain library (it never imports dagster).

Every detector follows :class:`detectors.base.Detector`: fit on a population,
score, threshold, explain. :func:`all_detectors` builds one of each kind.
"""

from __future__ import annotations

import importlib

from detectors.base import Detector, Evidence, Signal
from detectors.kinds import ALL, KINDS

# kind -> "module:Class"; one module per detector, read from the one list of kinds.
REGISTRY: dict[str, str] = {k.name: k.detector for k in ALL}


def get_detector(kind: str, **params) -> Detector:
    module, cls = REGISTRY[kind].split(":")
    return getattr(importlib.import_module(module), cls)(**params)


def all_detectors(**params) -> list[Detector]:
    return [get_detector(kind, **params) for kind in REGISTRY]


__all__ = ["KINDS", "REGISTRY", "Detector", "Evidence", "Signal", "all_detectors", "get_detector"]
