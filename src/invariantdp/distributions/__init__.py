"""Noise distributions in scipy.stats style.

The laws the mechanisms add and the tests assume: Tulap (:mod:`._tulap`, its
closed forms in :mod:`._tulap_forms`), canonical noise of any symmetric
tradeoff function (:mod:`._cnd`), the discrete Laplace and discrete Gaussian
(:mod:`._discrete_laws`), the K-norm law (:class:`KNormNoise`, with the polar
sampler of large polytopes in :mod:`._polar_sampler`) and the projected and extended
noise of subspace DP (:class:`SubspaceNoise`).  The exact samplers for
releases are in :mod:`._exact_samplers` (the discrete ones exported here).  What the
package knows of each law beyond it (calibration, JSON schema, claim check,
test view, likelihood) is its noise family, :mod:`invariantdp.families`.
"""

from .._deprecation import moved_names
from ._cnd import CanonicalNoise, canonical_noise
from ._discrete_laws import (
    discrete_gaussian,
    discrete_gaussian_gen,
    discrete_laplace,
    discrete_laplace_gen,
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
)
from ._knorm_law import KNormNoise
from ._polar_sampler import MAX_POLAR_DIM, LPHullNorm
from ._subspace_laws import SubspaceNoise
from ._tulap import (
    tulap,
    tulap_from_privacy,
    tulap_gen,
    tulap_params,
    tulap_privacy,
    tulap_privacy_gen,
)

__all__ = [
    "MAX_POLAR_DIM",
    "CanonicalNoise",
    "KNormNoise",
    "LPHullNorm",
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
    "tulap_privacy",
    "tulap_privacy_gen",
]

# old submodules of this package import with a DeprecationWarning (invariantdp._old_module_paths)
__getattr__ = moved_names(__name__, {})
