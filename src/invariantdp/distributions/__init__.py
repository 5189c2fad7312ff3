"""Noise distributions in scipy.stats style.

The laws the mechanisms add and the tests assume: Tulap (:mod:`.tulap`, its
closed forms in :mod:`.tulap_forms`), canonical noise of any symmetric
tradeoff function (:mod:`.cnd`), the discrete Laplace and discrete Gaussian
(:mod:`.discrete`), the K-norm law (:mod:`.knorm`, with the polar sampler
of large polytopes in :mod:`.polar`) and the projected and
extended noise of subspace DP (:mod:`.subspace`).  The exact samplers for
releases are in :mod:`._exact`, re-exported by :mod:`.discrete` and
:mod:`.tulap`.
"""

from .cnd import CanonicalNoise, canonical_noise
from .discrete import (
    discrete_gaussian,
    discrete_gaussian_gen,
    discrete_laplace,
    discrete_laplace_gen,
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
)
from .knorm import KNormNoise
from .subspace import SubspaceNoise
from .tulap import tulap, tulap_from_privacy, tulap_gen, tulap_params

__all__ = [
    "CanonicalNoise",
    "KNormNoise",
    "SubspaceNoise",
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
