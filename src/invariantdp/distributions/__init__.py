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

# The 0.1.0 module path tulap is imported first, so that importing it later does not
# rebind the package's `tulap` (bound below) to the module.
from . import tulap as _tulap_module_path  # noqa: F401

# isort: split

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

# isort: split
# Helpers the package's neighbours in invariantdp import from here, since a
# private module is imported only inside its package.  Not public (not in __all__).
from ._arith import exp_neg_bounds as exp_neg_bounds
from ._arith import lazy_less as lazy_less
from ._arith import random_words as random_words
from ._constant import MAX_ROUNDS as MAX_ROUNDS
from ._constant import TIMING_DELTA as TIMING_DELTA
from ._constant import cached_plan as cached_plan
from ._constant import compare as compare
from ._constant import float_up as float_up
from ._constant import timing_delta as timing_delta
from ._constant import too_many_rounds as too_many_rounds
from ._discrete_laws import GRID_RANGE as GRID_RANGE
from ._discrete_laws import MAX_NOISE_SCALE as MAX_NOISE_SCALE
from ._discrete_laws import LatticeLaw as LatticeLaw
from ._discrete_laws import check_noise_scale as check_noise_scale
from ._discrete_laws import discrete_gaussian_log_cf as discrete_gaussian_log_cf
from ._discrete_laws import draw_discrete_laplace as draw_discrete_laplace
from ._discrete_laws import gaussian_plan as gaussian_plan
from ._discrete_laws import laplace_plan as laplace_plan
from ._exact_samplers import tulap_plan as tulap_plan
from ._knorm_law import check_method as check_method
from ._knorm_law import choose_method as choose_method
from ._knorm_law import knorm_from_params as knorm_from_params
from ._subspace_laws import subspace_factory as subspace_factory
from ._tulap import draw_tulap as draw_tulap
from ._tulap_forms import log_b_power as log_b_power
from ._tulap_forms import truncate_logcdf as truncate_logcdf
from ._tulap_forms import tulap_bounds as tulap_bounds
from ._tulap_forms import tulap_logcdf as tulap_logcdf
from ._tulap_forms import tulap_logpdf as tulap_logpdf
from ._tulap_forms import tulap_ppf as tulap_ppf
from ._tulap_forms import tulap_privacy_shapes as tulap_privacy_shapes
from ._tulap_forms import tulap_untruncated_var as tulap_untruncated_var

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
