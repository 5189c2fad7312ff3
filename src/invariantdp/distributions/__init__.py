"""Noise distributions in scipy.stats style: Tulap and canonical noise."""

from .cnd import CanonicalNoise, canonical_noise
from .tulap import tulap, tulap_from_privacy, tulap_gen, tulap_params

__all__ = [
    "CanonicalNoise",
    "canonical_noise",
    "tulap",
    "tulap_from_privacy",
    "tulap_gen",
    "tulap_params",
]
