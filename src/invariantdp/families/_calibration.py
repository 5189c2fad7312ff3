r"""Noise calibrated to privacy parameters: the one home of each formula.

Every mechanism, the congenial targets, the command line and the published
terms of :meth:`NoiseFamily.published_params
<invariantdp.families.NoiseFamily.published_params>` take their noise scale
from here, so that a release's recorded law and guarantee come from one
formula:

* Laplace-type noise of an :math:`\ell_1` sensitivity ``Delta`` is
  epsilon-DP with scale ``Delta / epsilon`` (rate ``epsilon / Delta``);
* Gaussian-type noise of an :math:`\ell_2` sensitivity ``Delta`` with
  ``sigma = Delta / mu`` is mu-GDP (Dong, Roth & Su 2022, Theorem 2.7), and
  with ``sigma = Delta / sqrt(2 rho)`` rho-zCDP (Bun & Steinke 2016,
  Prop. 1.6; the discrete Gaussian: Canonne, Kamath & Steinke 2020,
  Theorem 4), so ``mu = sqrt(2 rho)`` sets the same noise;
* Tulap's ``(b, q)`` come from ``(epsilon, delta)`` by
  :func:`~invariantdp.distributions.tulap_params` (the law's own
  parametrisation, Awan & Slavkovic 2018).

The exact forms (:func:`exact_gaussian_variance`) give the secure samplers
their variance as a rational number, with the same relations.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = [
    "exact_gaussian_variance",
    "gaussian_rho",
    "gaussian_sigma",
    "laplace_rate",
    "laplace_scale",
    "mu_of_rho",
    "rho_of_mu",
]


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """``sensitivity / epsilon``: the epsilon-DP Laplace (or discrete Laplace) scale.

    Examples
    --------
    >>> laplace_scale(2.0, 0.5)
    4.0
    """
    return sensitivity / epsilon


def laplace_rate(sensitivity: float, epsilon: float) -> float:
    """``epsilon / sensitivity``: the rate ``1 / scale`` of :func:`laplace_scale`.

    The congenial samplers work with the rate (``log p(u) = -rate |u|``);
    it is computed in this order, not as ``1 / scale``, so that their draws
    do not move with a rounding.

    Examples
    --------
    >>> laplace_rate(2.0, 0.5)
    0.25
    """
    return epsilon / sensitivity


def gaussian_sigma(sensitivity: float, *, mu: float | None = None, rho: float | None = None):
    """``sigma`` of Gaussian-type noise: ``sensitivity / mu`` or ``sensitivity / sqrt(2 rho)``.

    Exactly one of ``mu`` (mu-GDP) and ``rho`` (rho-zCDP) is given.

    Examples
    --------
    >>> gaussian_sigma(1.0, rho=0.5), gaussian_sigma(2.0, mu=0.5)
    (1.0, 4.0)
    """
    if (mu is None) == (rho is None):
        raise TypeError("give exactly one of `mu` and `rho`.")
    if mu is not None:
        return sensitivity / mu
    return sensitivity / math.sqrt(2.0 * rho)


def gaussian_rho(
    sensitivity: float | None,
    variance: float | None = None,
    *,
    sigma: float | None = None,
    sensitivity_squared: float | None = None,
) -> float:
    """``sensitivity**2 / (2 sigma**2)``: the zCDP of Gaussian-type noise of that variance.

    ``variance`` is the variance parameter ``sigma**2`` (of a discrete
    Gaussian, or the smallest eigenvalue of a covariance); or give ``sigma``
    itself, which is divided out twice so that a sigma whose square leaves
    the doubles (1e200, 5e-324) gives 0 or ``inf`` rather than an overflow or a
    division by zero.  Give the sensitivity, or None and its square
    ``sensitivity_squared`` when that is known exactly (``sqrt(2)**2`` is not
    2 in doubles).

    Examples
    --------
    >>> gaussian_rho(1.0, 4.0), gaussian_rho(None, 1.0, sensitivity_squared=2.0)
    (0.125, 1.0)
    >>> gaussian_rho(1.0, sigma=5e-324), gaussian_rho(1.0, sigma=1e200)
    (inf, 0.0)
    """
    if (sensitivity is None) == (sensitivity_squared is None):
        raise TypeError("give exactly one of `sensitivity` and `sensitivity_squared`.")
    if (variance is None) == (sigma is None):
        raise TypeError("give exactly one of `variance` and `sigma`.")
    if sigma is None:
        d2 = sensitivity * sensitivity if sensitivity_squared is None else sensitivity_squared
        return d2 / (2.0 * variance)
    if sensitivity_squared is None:
        ratio = sensitivity / sigma  # products, not powers: inf instead of OverflowError
        return ratio * ratio / 2.0
    return sensitivity_squared / sigma / sigma / 2.0


def mu_of_rho(rho: float) -> float:
    """``sqrt(2 rho)``: the mu whose ``sigma = Delta / mu`` is the rho-zCDP noise.

    Examples
    --------
    >>> mu_of_rho(0.5)
    1.0
    """
    return math.sqrt(2.0 * rho)


def rho_of_mu(mu: float) -> float:
    """``mu**2 / 2``: the zCDP of the noise ``sigma = Delta / mu``.

    Examples
    --------
    >>> rho_of_mu(1.0)
    0.5
    """
    return mu**2 / 2.0


def exact_gaussian_variance(
    sensitivity_squared: Fraction, *, mu: float | None = None, rho: float | None = None
) -> Fraction:
    """``sigma**2`` as an exact rational: ``Delta**2 / mu**2`` or ``Delta**2 / (2 rho)``.

    ``sensitivity_squared`` is exact (an integer or :class:`~fractions.Fraction`),
    ``mu`` and ``rho`` are taken as the exact rationals of their doubles.

    Examples
    --------
    >>> exact_gaussian_variance(Fraction(2), rho=0.25)
    Fraction(4, 1)
    """
    if (mu is None) == (rho is None):
        raise TypeError("give exactly one of `mu` and `rho`.")
    if mu is not None:
        return Fraction(sensitivity_squared) / Fraction(mu) ** 2
    return Fraction(sensitivity_squared) / (2 * Fraction(rho))
