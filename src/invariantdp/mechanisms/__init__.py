"""Mechanisms that produce a :class:`~invariantdp.Release`."""

from .odds_ratio import odds_ratio_release

__all__ = ["odds_ratio_release"]
