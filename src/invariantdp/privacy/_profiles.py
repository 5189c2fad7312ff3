r"""Exact privacy profiles of the Laplace and discrete Laplace mechanisms.

The privacy profile of a mechanism is :math:`\delta(\epsilon)`, the smallest
delta for which it is :math:`(\epsilon, \delta)`-DP (Balle, Barthe & Gaboardi
2018); for the pair of output laws :math:`P, Q` of two neighbours it is the
hockey-stick divergence :math:`\sum_y (P(y) - e^\epsilon Q(y))_+`, and a claim
``(epsilon, delta)`` holds if and only if ``delta >= delta(epsilon)``.

Laplace noise of scale :math:`s` on a query whose neighbours differ by
:math:`\Delta`, :math:`\epsilon_0 = \Delta / s`:

.. math:: \delta(\epsilon) = 1 - e^{(\epsilon - \epsilon_0)/2},
          \qquad 0 \le \epsilon < \epsilon_0,

and 0 from :math:`\epsilon_0` on: the loss :math:`(|y - \Delta| - |y|)/s`
exceeds :math:`\epsilon` exactly for :math:`y < y^* = (\Delta - \epsilon s)/2`,
and :math:`P(Y < y^*) - e^\epsilon Q(Y < y^*)` is the line above.

Discrete Laplace noise, :math:`P(k) = \frac{1-a}{1+a} a^{|k|}` with
:math:`a = e^{-1/s}`, on integer queries whose neighbours differ by the
integer :math:`d`: the loss is :math:`d/s` for :math:`k \le 0` and
:math:`(d - 2k)/s` for :math:`0 < k < d`, so with
:math:`K = \#\{k \ge 1 : d - 2k > \epsilon s\}` the two geometric sums give

.. math:: \delta(\epsilon) = \frac{1 - e^{\epsilon} a^{d}
          + (1 - a^{K})(a - e^{\epsilon} a^{d-K})}{1 + a},
          \qquad 0 \le \epsilon < d / s.

For vectors with an :math:`\ell_1` bound the one-coordinate shift of the whole
bound is the worst pair: splitting the shift over coordinates only lowers
the profile (the tests check it against the exact sums of split shifts).

References
----------
.. [1] Balle, B., Barthe, G. and Gaboardi, M. (2018). "Privacy amplification
   by subsampling: tight analyses via couplings and divergences", NeurIPS,
   Definition 2 (privacy profile) and Theorem 1.
.. [2] Canonne, C., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
   for differential privacy", NeurIPS, Definition 3 (the discrete Laplace).
.. [3] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential privacy",
   JRSS-B 84(1), Section 2.3 (the Laplace tradeoff function).
"""

from __future__ import annotations

import math

from .._validation import InvariantDPError, check_positive, check_real, format_value

__all__ = ["discrete_laplace_delta", "laplace_delta"]


def _epsilon(value) -> float:
    eps = check_real("epsilon", value)
    if not (eps >= 0 and math.isfinite(eps)):
        raise InvariantDPError(f"`epsilon` ({format_value(value)}) must be finite and >= 0.")
    return eps


def laplace_delta(*, epsilon, scale, sensitivity=1.0) -> float:
    r"""The exact :math:`\delta(\epsilon)` of Laplace noise of ``scale`` (module notes).

    Parameters
    ----------
    epsilon : float
        Where the profile is evaluated, ``epsilon >= 0``.
    scale : float
        The Laplace scale ``s > 0``.
    sensitivity : float
        The :math:`\ell_1` distance between neighbours' query values, ``> 0``.

    Returns
    -------
    float
        ``1 - exp((epsilon - sensitivity / scale) / 2)``, or 0 at and above
        ``sensitivity / scale``.

    References
    ----------
    Balle, Barthe & Gaboardi (2018), Definition 2; Dong, Roth & Su (2022),
    Section 2.3.

    Examples
    --------
    >>> from invariantdp.privacy import laplace_delta
    >>> round(laplace_delta(epsilon=0.0, scale=1.0), 4)  # the total variation
    0.3935
    >>> laplace_delta(epsilon=1.0, scale=1.0)
    0.0
    """
    eps = _epsilon(epsilon)
    s = check_positive("scale", scale)
    delta = check_positive("sensitivity", sensitivity)
    eps0 = delta / s
    if eps >= eps0:
        return 0.0
    return -math.expm1((eps - eps0) / 2.0)


def discrete_laplace_delta(*, epsilon, scale, sensitivity=1) -> float:
    r"""The exact :math:`\delta(\epsilon)` of discrete Laplace noise of ``scale`` (module notes).

    Parameters
    ----------
    epsilon : float
        Where the profile is evaluated, ``epsilon >= 0``.
    scale : float
        The scale ``s > 0`` of :math:`P(k) \propto e^{-|k|/s}`.
    sensitivity : int
        The :math:`\ell_1` distance ``d >= 1`` between neighbours' integer
        query values (a whole number).

    Returns
    -------
    float
        The sum of :math:`(P(k) - e^\epsilon P(k - d))_+` over the integers,
        in closed form; 0 at and above ``d / scale``.

    References
    ----------
    Balle, Barthe & Gaboardi (2018), Definition 2; Canonne, Kamath & Steinke
    (2020), Definition 3.

    Examples
    --------
    >>> from invariantdp.privacy import discrete_laplace_delta
    >>> round(discrete_laplace_delta(epsilon=0.5, scale=1.0), 4)
    0.2876
    """
    eps = _epsilon(epsilon)
    s = check_positive("scale", scale)
    d = check_real("sensitivity", sensitivity)
    if not (d >= 1 and math.isfinite(d) and d == math.floor(d)):
        raise InvariantDPError(
            f"`sensitivity` ({format_value(sensitivity)}) must be a whole number >= 1: "
            "neighbours' integer query values differ by an integer."
        )
    if eps >= d / s:
        return 0.0
    log_a = -1.0 / s
    a = math.exp(log_a)
    # terms 0 < k < d whose loss (d - 2k) / s exceeds epsilon; at equality a term is 0
    k_max = max(0.0, math.ceil((d - eps * s) / 2.0) - 1.0)
    head = -math.expm1(eps + d * log_a)  # 1 - e^eps a^d
    middle = 0.0
    if k_max > 0:  # (k_max * log_a would be nan for a scale so small that log_a is -inf)
        middle = -math.expm1(k_max * log_a) * (a - math.exp(eps + (d - k_max) * log_a))
    return min(1.0, max(0.0, (head + middle) / (1.0 + a)))
