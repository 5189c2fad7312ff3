"""The one place where the census subpackage draws noise.

Every noisy measurement of :func:`~invariantdp.census.measure` comes from
:func:`discrete_gaussian_noise`, so that the sampler can be swapped in one
place.  With a :class:`~invariantdp.secure.SecureGenerator` the draws are the
exact CKS sampler in integer arithmetic from :mod:`secrets` (for
publication); with a numpy ``Generator`` they are the vectorised rejection
sampler of :data:`invariantdp.distributions.discrete_gaussian` (a simulation).

References
----------
Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
privacy", Algorithms 1-3.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..distributions import discrete_gaussian, sample_discrete_gaussian_exact
from ..distributions._constant import float_up
from ..distributions._exact_samplers import gaussian_plan
from ..secure import SecureGenerator

__all__ = ["discrete_gaussian_noise", "discrete_gaussian_timing_tv"]


def discrete_gaussian_timing_tv(sigma2: Fraction, size: int) -> float:
    """The ``timing_tv`` of ``size`` secure draws of :func:`discrete_gaussian_noise`.

    The exact sampler does the same work for every draw except on an event
    whose probability its plan bounds per draw; ``size`` draws add them (a
    union bound), rounded up to a double.
    """
    if size == 0:
        return 0.0
    return float_up(size * gaussian_plan(sigma2, 1.0, size).tv_per_draw())


def discrete_gaussian_noise(sigma2: Fraction, size: int, gen) -> np.ndarray:
    r"""``size`` draws of :math:`N_{\mathbb Z}(0, \sigma^2)` as int64.

    ``sigma2`` is the exact rational variance parameter; ``gen`` a
    :class:`~invariantdp.secure.SecureGenerator` (exact, secure) or a numpy
    ``Generator`` (simulation).
    """
    if isinstance(gen, SecureGenerator):
        return sample_discrete_gaussian_exact(sigma2, size=size, rng=gen)
    sigma = math.sqrt(sigma2)
    return np.asarray(discrete_gaussian.rvs(sigma, size=size, random_state=gen), dtype=np.int64)
