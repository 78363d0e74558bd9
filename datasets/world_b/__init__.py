"""World B: a second synthetic poker world, written from ``shared/spec`` and the house rules alone.

Its own engine, players, honest confounders and colluders; shares no code with
the rest of ``datasets/``. Entry point: :func:`generate`.
"""

from .generate import generate

__all__ = ["generate"]
