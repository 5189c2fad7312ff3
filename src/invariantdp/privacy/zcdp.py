r"""Zero-concentrated DP: conversion to (epsilon, delta)-DP, groups, composition, tradeoff.

:math:`\rho`-zCDP (Bun & Steinke 2016) is the accounting of the 2020 Census
TopDown algorithm.  It implies :math:`(\epsilon, \delta)`-DP by two
conversions, chosen with ``method=`` in :func:`zcdp_to_eps_delta`:

* ``"cks"`` (the default): Canonne, Kamath & Steinke (2020, Cor. 13), the
  tight conversion through Renyi DP, the one OpenDP uses;
* ``"bun-steinke"``: Bun & Steinke (2016, Prop. 1.3),
  :math:`\epsilon = \rho + 2\sqrt{\rho\log(1/\delta)}`, the simpler bound the
  Census figures of Cho & Awan (Sec. 6.1) and of the swapping paper
  (Table 6.2) are computed with.

:func:`zcdp_tradeoff` is the tradeoff function implied by :math:`\rho`-zCDP
(the envelope of the CKS conversions), the claim an audit of a zCDP mechanism
checks.

References
----------
.. [1] Bun, M. and Steinke, T. (2016). "Concentrated differential privacy:
   simplifications, extensions, and lower bounds", TCC, Propositions 1.3, 1.4,
   1.6 and 27 and Lemma 2.3.
.. [2] Canonne, C., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
   for differential privacy", NeurIPS, Corollary 13.
.. [3] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Section 6 (zCDP group privacy for the 2020 Census).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import optimize

from .._validation import (
    InvariantDPError,
    check_epsilon,
    check_in_open_unit,
    check_positive,
    check_positive_int,
    format_value,
)
from ._checks import exact_product, finite, fsum, positive, positive_list
from .tradeoff import TradeoffFunction

__all__ = [
    "ZCDP_CONVERSIONS",
    "gdp_to_zcdp",
    "pure_dp_to_zcdp",
    "zcdp_composition",
    "zcdp_group_privacy",
    "zcdp_to_eps_delta",
    "zcdp_tradeoff",
]

#: the conversions of :func:`zcdp_to_eps_delta`, the default first
ZCDP_CONVERSIONS = ("cks", "bun-steinke")


def _check_method(method) -> str:
    if not isinstance(method, str):
        raise TypeError(f"`method` must be a string, got {type(method).__name__}.")
    if method not in ZCDP_CONVERSIONS:
        raise InvariantDPError(
            f"`method` ({method!r}) must be one of {', '.join(map(repr, ZCDP_CONVERSIONS))}."
        )
    return method


def _cks_epsilon(rho: float, log_inv_delta: float) -> float:
    r"""The least epsilon of CKS (2020) Cor. 13 for ``rho`` and ``L = log(1/delta) > 0``.

    Over Renyi orders :math:`\alpha = 1 + t > 1` the bound is
    :math:`\epsilon(\alpha) = \alpha\rho + \log(1 - 1/\alpha) + (L - \log\alpha)/(\alpha - 1)`,
    whose derivative :math:`\rho - (L - \log\alpha)/(\alpha-1)^2` vanishes at the
    one root of :math:`\rho t^2 + \log(1 + t) = L` (increasing in ``t``).  There
    :math:`\epsilon = (1 + 2t)\rho + \log(t / (1 + t))`.  The root is sought in
    ``log t``, so that ``rho t^2`` neither overflows nor underflows for any
    positive double ``rho``.
    """
    log_rho, L = math.log(rho), log_inv_delta

    def g(s: float) -> float:  # rho t^2 + log(1 + t) - L at t = e^s, increasing in s
        return math.exp(min(log_rho + 2.0 * s, 709.0)) + math.log1p(math.exp(s)) - L

    def log_expm1(x: float) -> float:  # log(e^x - 1) without overflow for x > 709
        return x + math.log(-math.expm1(-x))

    # where a term alone reaches L, g >= 0; where each is <= L/2, g < 0 (a margin of
    # 1 in s, i.e. a factor e in t, absorbs the rounding of either end)
    hi = min(0.5 * (math.log(L) - log_rho), log_expm1(L)) + 1.0
    lo = min(0.5 * (math.log(0.5 * L) - log_rho), log_expm1(0.5 * L)) - 1.0
    s = optimize.brentq(g, lo, hi, xtol=1e-300, rtol=4 * 2.0**-52, maxiter=500)
    t = math.exp(s)
    eps = rho + 2.0 * t * rho + (s - math.log1p(t))
    # an epsilon below 0 certifies (0, delta)-DP: delta(epsilon) decreases in epsilon
    return max(eps, 0.0)


def zcdp_to_eps_delta(rho, delta, *, method="cks") -> float:
    r"""The :math:`\epsilon` such that :math:`\rho`-zCDP implies :math:`(\epsilon, \delta)`-DP.

    ``method="cks"`` (default) is the tight conversion of Canonne, Kamath &
    Steinke (2020, Cor. 13):

    .. math:: \epsilon = \min_{\alpha > 1}\; \alpha\rho
              + \frac{\log(1/\delta) + (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha}{\alpha - 1},

    (``0.0`` where the minimum is negative: the mechanism is then
    :math:`(0, \delta)`-DP).  ``method="bun-steinke"`` is Bun & Steinke
    (2016, Prop. 1.3),

    .. math:: \epsilon = \rho + 2\sqrt{\rho \log(1/\delta)},

    always larger; the Census figures of Cho & Awan (Sec. 6.1) use it.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``rho > 0``.
    delta : float
        ``0 < delta < 1``.
    method : {"cks", "bun-steinke"}
        The conversion (see above).

    Returns
    -------
    float
        ``epsilon >= 0``.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Corollary 13; Bun & Steinke (2016),
    Proposition 1.3; Cho & Awan, Section 6.1.

    Examples
    --------
    >>> from invariantdp.privacy import zcdp_to_eps_delta
    >>> round(zcdp_to_eps_delta(rho=2.56, delta=1e-10, method="bun-steinke"), 5)
    17.91528
    >>> round(zcdp_to_eps_delta(rho=2.56, delta=1e-10), 5)
    17.15831
    """
    rho = check_positive("rho", rho)
    delta = check_in_open_unit("delta", delta)
    method = _check_method(method)
    log_inv_delta = -math.log(delta)
    if method == "cks":
        eps = _cks_epsilon(rho, log_inv_delta)
        return finite("epsilon", eps, f"the CKS epsilon for `rho` ({rho:g})")
    # sqrt(rho) sqrt(log(1/delta)): no overflow of the product for huge rho
    eps = rho + 2.0 * math.sqrt(rho) * math.sqrt(log_inv_delta)
    return finite("epsilon", eps, f"rho + 2 sqrt(rho log(1/delta)) for `rho` ({rho:g})")


def zcdp_group_privacy(rho, k) -> float:
    r"""zCDP for groups of size ``k``: :math:`\rho`-zCDP gives :math:`k^2\rho`-zCDP.

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    k : int
        Group size (distance between the data sets), ``k >= 1``.

    Returns
    -------
    float
        ``k**2 * rho``.

    References
    ----------
    Bun & Steinke (2016), Proposition 27; Cho & Awan, Section 6.1 (with
    ``k = a(t)``).

    Examples
    --------
    >>> from invariantdp.privacy import zcdp_group_privacy
    >>> zcdp_group_privacy(rho=2.56, k=2)
    10.24
    """
    rho = check_positive("rho", rho)
    k = check_positive_int("k", k)
    return exact_product(
        k * k, rho, "rho", f"k**2 * rho for `k` ({format_value(k)}) and `rho` ({rho:g})"
    )


def zcdp_composition(rhos: Iterable) -> float:
    r"""Composition of zCDP: the parameters add, :math:`\sum_i \rho_i`.

    References
    ----------
    Bun & Steinke (2016), Lemma 2.3.

    Examples
    --------
    >>> from invariantdp.privacy import zcdp_composition
    >>> zcdp_composition([0.5, 1.0, 1.06])
    2.56
    """
    vals = positive_list("rhos", rhos)
    return fsum("rho", vals, "the sum of `rhos`")


def gdp_to_zcdp(mu) -> float:
    r"""A :math:`\mu`-GDP Gaussian mechanism is :math:`\mu^2/2`-zCDP.

    The Gaussian mechanism with :math:`\ell_2` sensitivity :math:`\Delta` and
    standard deviation :math:`\sigma = \Delta/\mu` is :math:`\mu`-GDP and
    :math:`\Delta^2/(2\sigma^2) = \mu^2/2`-zCDP.

    References
    ----------
    Bun & Steinke (2016), Proposition 1.6; Dong, Roth & Su (2022), Theorem 2.7.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_to_zcdp
    >>> gdp_to_zcdp(mu=2.0)
    2.0
    """
    mu = check_positive("mu", mu)
    return positive("rho", (0.5 * mu) * mu, f"mu**2 / 2 for `mu` ({mu:g})")


def pure_dp_to_zcdp(epsilon) -> float:
    r""":math:`\epsilon`-DP implies :math:`\epsilon^2/2`-zCDP.

    References
    ----------
    Bun & Steinke (2016), Proposition 1.4.

    Examples
    --------
    >>> from invariantdp.privacy import pure_dp_to_zcdp
    >>> pure_dp_to_zcdp(epsilon=1.0)
    0.5
    """
    epsilon = check_epsilon(epsilon)
    return positive("rho", (0.5 * epsilon) * epsilon, f"epsilon**2 / 2 for `epsilon` ({epsilon:g})")


# ---------------------------------------------------------------------------
# the tradeoff function implied by zCDP
# ---------------------------------------------------------------------------


class _ZCDP(TradeoffFunction):
    def __init__(self, rho: float, n_grid: int):
        self.rho = rho
        self.name = f"implied by rho-zCDP: rho={rho:g}"
        # (epsilon, delta(epsilon)) pairs of the CKS conversion on a grid of epsilon
        eps = np.concatenate([[0.0], np.geomspace(1e-3, rho + 40.0 * np.sqrt(rho) + 40.0, n_grid)])
        alpha = np.geomspace(1.0 + 1e-6, 1e6, 4000)[None, :]
        log_delta = (
            (alpha - 1.0) * (alpha * rho - eps[:, None])
            + (alpha - 1.0) * np.log1p(-1.0 / alpha)
            - np.log(alpha)
        )
        delta = np.minimum(np.exp(np.min(log_delta, axis=1)), 1.0)
        keep = delta < 1.0
        self.eps, self.delta = eps[keep], delta[keep]

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=float)
        flat = a.reshape(-1, 1)
        e, d = self.eps[None, :], self.delta[None, :]
        with np.errstate(over="ignore"):
            hi = 1.0 - d - np.exp(e) * (1.0 - flat)
        lo = np.exp(-e) * (flat - d)
        out = np.max(np.maximum(np.maximum(hi, lo), 0.0), axis=1).reshape(a.shape)
        return out[()] if out.ndim == 0 else out

    def __repr__(self) -> str:
        return f"zcdp_tradeoff(rho={self.rho!r})"


def zcdp_tradeoff(rho, *, n_grid=400) -> TradeoffFunction:
    r"""The tradeoff function implied by :math:`\rho`-zCDP.

    :math:`\rho`-zCDP implies :math:`(\epsilon, \delta(\epsilon))`-DP for every
    :math:`\epsilon \ge 0` with (Canonne, Kamath & Steinke 2020, Cor. 13)

    .. math:: \delta(\epsilon) = \inf_{\alpha > 1}
              \frac{e^{(\alpha-1)(\alpha\rho-\epsilon)}}{\alpha}
              \Big(1 - \frac1\alpha\Big)^{\alpha-1},

    so the mechanism is ``f``-DP for the upper envelope
    :math:`f = \max_\epsilon f_{\epsilon,\delta(\epsilon)}` (taken on a grid
    of ``n_grid`` values of epsilon, which only weakens the claim).  This is
    the claim to audit a zCDP mechanism such as the discrete Gaussian, whose
    exact tradeoff curve is *not* :math:`G_{\Delta/\sigma}`.

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    n_grid : int
        Number of epsilon values in the envelope (at least 10).

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
    for differential privacy", NeurIPS 33, Cor. 13.

    Examples
    --------
    >>> from invariantdp.privacy import gaussian_tradeoff, zcdp_tradeoff
    >>> f = zcdp_tradeoff(0.5)  # the Gaussian mechanism with mu = 1 is 0.5-zCDP
    >>> bool(f(0.9) <= gaussian_tradeoff(1.0)(0.9))
    True
    """
    rho = check_positive("rho", rho)
    n_grid = check_positive_int("n_grid", n_grid, minimum=10)
    return _ZCDP(rho, n_grid)
