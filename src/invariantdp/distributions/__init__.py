"""Noise distributions in scipy.stats style.

The laws the mechanisms add and the tests assume: Tulap (:mod:`.tulap`, its
closed forms in :mod:`.tulap_forms`), canonical noise of any symmetric
tradeoff function (:mod:`.cnd`), the discrete Laplace and discrete Gaussian
(:mod:`.discrete`), the K-norm law (:class:`KNormNoise`, with the polar
sampler of large polytopes in :mod:`.polar`) and the projected and extended
noise of subspace DP (:class:`SubspaceNoise`).  The exact samplers for
releases are in :mod:`._exact` (the discrete ones exported here).  What the
package knows of each law beyond it (calibration, JSON schema, claim check,
test view, likelihood) is its noise family, :mod:`invariantdp.families`.
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
