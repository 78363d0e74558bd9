"""Named population sizes and collusion mixes for ``railbird generate``.

* ``demo``: small (~300 accounts, ~25k hands), every kind of collusion,
  clear strengths (0.5..1.0); a minute or two.
* ``honest``: the ``mixed`` world's size with no collusion at all, confounders
  included (housemates, regulars, dry side pots, device switches, breaks, big
  losses): the population false flags are counted on.
* ``mixed``: the default for evaluations: 600 accounts, 60k hands, every kind
  at strengths spread evenly from 0.25 to 1.0.
* ``subtle``: as ``mixed`` with strengths from 0.05 to 0.25.
* ``heads_up``: the ``mixed`` world's size with heads-up play (``datasets.flipping``) and 5 heads-up
  flipping pairs at strengths 0.25..1.0 and no other kind.

The presets that plant "every kind" plant :data:`PRESET_KINDS`, the kinds they planted before heads-up
flipping existed: their files stay byte for byte what they were. Heads-up flipping is planted where a mix
names it (``--mix heads_up_flipping=5``; ``=0`` gives the heads-up world with no flippers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datasets.collusion import KINDS

#: the kinds ``demo``, ``mixed`` and ``subtle`` plant: every kind but heads-up flipping and hand chat,
#: which are planted only where a mix names them (``--mix hand_chat=5``, ``--preset heads_up``), so those
#: presets' files are unchanged
PRESET_KINDS = tuple(k for k in KINDS if k not in ("heads_up_flipping", "hand_chat"))


@dataclass(frozen=True)
class Preset:
    accounts: int
    hands: int
    mix: dict[str, int] = field(default_factory=dict)
    strength: tuple[float, float] = (0.5, 1.0)
    shares: tuple[float, float, float] = (0.55, 0.15, 0.30)  # cash, sit-and-go, multi-table hands
    days: int = 1  # at least this many days of play (activity is scaled down to spread the hands)


PRESETS: dict[str, Preset] = {
    "demo": Preset(300, 25_000, {"soft_play": 3, "chip_dumping": 3, "bounty_collusion": 2, "coordinated_sitout": 2,
                                  "multi_accounting": 2, "seat_handoff": 2}, (0.5, 1.0), days=4),
    "honest": Preset(600, 60_000, {}, (0.5, 1.0), days=6),
    "mixed": Preset(600, 60_000, {k: 5 for k in PRESET_KINDS}, (0.25, 1.0), days=6),
    "subtle": Preset(600, 60_000, {k: 5 for k in PRESET_KINDS}, (0.05, 0.25), days=6),
    "heads_up": Preset(600, 60_000, {"heads_up_flipping": 5}, (0.25, 1.0), days=6),
}


def parse_mix(text: str | None) -> dict[str, int] | None:
    """``"soft_play=4,chip_dumping=3"`` -> ``{"soft_play": 4, "chip_dumping": 3}``; ``"none"`` -> ``{}``."""
    if text is None:
        return None
    text = text.strip()
    if text in ("", "none", "0"):
        return {}
    out: dict[str, int] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"--mix: expected kind=count, got {part.strip()!r}")
        k, v = part.split("=", 1)
        k = k.strip()
        if k not in KINDS:
            raise ValueError(f"--mix: unknown kind {k!r} (one of {', '.join(KINDS)})")
        try:
            out[k] = int(v)
        except ValueError:
            raise ValueError(f"--mix: count for {k} must be an integer, got {v.strip()!r}") from None
        if out[k] < 0:
            raise ValueError(f"--mix: count for {k} must be >= 0")
    return out
