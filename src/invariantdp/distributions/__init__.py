"""Noise distributions in scipy.stats style: Tulap and canonical noise."""

from .cnd import CanonicalNoise, canonical_noise
from .discrete import (
    discrete_gaussian,
    discrete_gaussian_gen,
    discrete_laplace,
    discrete_laplace_gen,
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
)
from .tulap import tulap, tulap_from_privacy, tulap_gen, tulap_params

__all__ = [
    "CanonicalNoise",
    "canonical_noise",
    "discrete_gaussian",
    "discrete_gaussian_gen",
    "discrete_laplace",
    "discrete_laplace_gen",
    "sample_discrete_gaussian_exact",
    "sample_discrete_laplace_exact",
    "tulap",
    "tulap_from_privacy",
    "tulap_gen",
    "tulap_params",
]
