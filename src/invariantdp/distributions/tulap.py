"""The Tulap distribution, canonical noise of (epsilon, delta)-DP.

``Tulap(m, b, q)``: with ``G1, G2`` i.i.d. geometric on {0, 1, ...} with
``P(G = k) = (1 - b) b**k`` and ``U ~ Uniform(-1/2, 1/2)``,
``N = m + G1 - G2 + U`` is *untruncated* Tulap; for ``q > 0`` the law is
truncated to its central ``1 - q`` mass.  The cdf and quantile function are in
closed form, tails are computed in log space, and sampling is exact.

References
----------
.. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly
   most powerful tests for binomial data", NeurIPS 31.  (Definition of Tulap.)
.. [2] Awan, J. and Dong, J. (2022). "Log-concave and multivariate canonical
   noise distributions for differential privacy", NeurIPS 35. (Tulap is the
   unique CND of f_{epsilon,delta}.)
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._validation import check_delta, check_epsilon

__all__ = ["tulap", "tulap_from_privacy", "tulap_gen", "tulap_params"]

try:  # ``_ShapeInfo`` only feeds ``fit``; older scipy versions lack it
    from scipy.stats._distn_infrastructure import _ShapeInfo
except ImportError:  # pragma: no cover
    _ShapeInfo = None


# ---------------------------------------------------------------------------
# Closed forms for the untruncated law with median 0.  They take arrays that
# already broadcast and never raise warnings for in-range inputs.
# ---------------------------------------------------------------------------


def _lower_cdf0(x, b):
    """Untruncated cdf for ``x <= 0``: b**|k| / (1+b) * (b + (x-k+1/2)(1-b))."""
    k = np.round(x)
    frac = x - k
    with np.errstate(over="ignore", under="ignore"):
        return np.power(b, -k) / (1.0 + b) * (b + (frac + 0.5) * (1.0 - b))


def _lower_logcdf0(x, b):
    k = np.round(x)
    frac = x - k
    return -k * np.log(b) - np.log1p(b) + np.log(b + (frac + 0.5) * (1.0 - b))


def _cdf0(x, b):
    neg = np.minimum(x, -x)  # -|x|
    # F(-|x|) <= F(0) = 1/2 exactly; rounding near 0 must not break monotonicity
    low = np.minimum(_lower_cdf0(neg, b), 0.5)
    return np.where(x <= 0, low, 1.0 - low)


def _logcdf0(x, b):
    neg = np.minimum(x, -x)
    low = np.minimum(_lower_logcdf0(neg, b), -np.log(2.0))
    with np.errstate(divide="ignore"):
        high = np.log1p(-np.exp(low))
    return np.where(x <= 0, low, high)


def _ppf0(u, b):
    """Closed-form quantile of the untruncated law (median 0)."""
    lo = np.minimum(u, 1.0 - u)  # <= 1/2
    with np.errstate(divide="ignore", invalid="ignore"):
        logv = np.log(lo) + np.log1p(b)
        logb = np.log(b)
        j = np.floor(logv / logb)
        # on [-j-1/2, -j+1/2] the cdf is b**j/(1+b) (b + t(1-b)), t in [0, 1]
        t = (np.exp(logv - j * logb) - b) / (1.0 - b)
    t = np.clip(t, 0.0, 1.0)
    x = -j + t - 0.5
    x = np.where(lo <= 0.0, -np.inf, x)
    return np.where(u <= 0.5, x, -x)


def _pdf0(x, b):
    k = np.abs(np.round(x))
    with np.errstate(under="ignore"):
        return np.power(b, k) * (1.0 - b) / (1.0 + b)


def _bounds(b, q):
    """Support of the truncated law: the untruncated q/2 and 1-q/2 quantiles."""
    half = np.asarray(q, dtype=float) / 2.0
    upper = np.where(half > 0, -_ppf0(half, b), np.inf)
    return -upper, upper


class tulap_gen(stats.rv_continuous):
    r"""A Tulap (truncated-uniform-Laplace) continuous random variable.

    %(before_notes)s

    Notes
    -----
    The probability density function for `tulap` is, for ``q = 0``,

    .. math:: f(x; b) = \frac{1-b}{1+b}\, b^{|[x]|},

    where :math:`[x]` is ``x`` rounded to the nearest integer, and for
    ``q > 0`` it is :math:`f / (1-q)` on the central interval holding mass
    ``1 - q`` of the untruncated law.  The cdf for :math:`x \le 0` is

    .. math:: F(x) = \frac{b^{-[x]}}{1+b}\,\big(b + (x - [x] + 1/2)(1-b)\big),

    with :math:`F(x) = 1 - F(-x)` above 0, and
    :math:`F_q(x) = \mathrm{clip}((F(x) - q/2)/(1-q), 0, 1)`.

    `tulap` takes ``b`` in (0, 1) and ``q`` in [0, 1) as shape parameters;
    ``loc`` is the median ``m``.  ``Tulap(0, exp(-epsilon), q(epsilon, delta))``
    is the canonical noise distribution of :math:`f_{\epsilon,\delta}`; build
    it with :func:`tulap_from_privacy`.

    Sampling follows the definition: ``G1 - G2 + U`` with geometric
    ``G1, G2`` (drawn as ``floor(E / log(1/b))`` from exponentials ``E``) and
    uniform ``U`` (Awan & Slavkovic 2018, Def. 4.1), with rejection of draws
    outside the central ``1 - q`` interval when ``q > 0``.

    %(after_notes)s

    References
    ----------
    .. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private
       uniformly most powerful tests for binomial data", NeurIPS 31.

    %(example)s
    """

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [
            _ShapeInfo("b", False, (0, 1), (False, False)),
            _ShapeInfo("q", False, (0, 1), (True, False)),
        ]

    def _argcheck(self, b, q):
        return (b > 0) & (b < 1) & (q >= 0) & (q < 1)

    def _get_support(self, b, q):
        return _bounds(b, q)

    def _pdf(self, x, b, q):
        return _pdf0(x, b) / (1.0 - q)

    def _logpdf(self, x, b, q):
        return np.log(b) * np.abs(np.round(x)) + np.log1p(-b) - np.log1p(b) - np.log1p(-q)

    def _cdf(self, x, b, q):
        return np.clip((_cdf0(x, b) - q / 2.0) / (1.0 - q), 0.0, 1.0)

    def _sf(self, x, b, q):
        return self._cdf(-x, b, q)

    def _logcdf(self, x, b, q):
        lf = _logcdf0(x, b)
        # log(F - q/2) = log F + log1p(-q / (2F)); q = 0 keeps the exact tail
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            ratio = np.where(q > 0, (q / 2.0) * np.exp(-lf), 0.0)
            out = lf + np.log1p(-np.minimum(ratio, 1.0)) - np.log1p(-q)
        # above the support F - q/2 > 1 - q: the truncated cdf is 1 there
        return np.minimum(out, 0.0)

    def _logsf(self, x, b, q):
        return self._logcdf(-x, b, q)

    def _ppf(self, u, b, q):
        return _ppf0(q / 2.0 + u * (1.0 - q), b)

    def _isf(self, u, b, q):
        return -self._ppf(u, b, q)

    def _stats(self, b, q):
        # untruncated variance: 2b/(1-b)^2 (discrete Laplace) + 1/12 (uniform);
        # with truncation scipy integrates the moments numerically.
        if np.all(q == 0):
            return 0.0, 2.0 * b / (1.0 - b) ** 2 + 1.0 / 12.0, 0.0, None
        return 0.0, None, 0.0, None

    def _rvs(self, b, q, size=None, random_state=None):
        rng = random_state
        shape = np.broadcast_shapes(np.shape(b), np.shape(q), () if size is None else size)
        b_arr = np.asarray(b, dtype=float)
        q_arr = np.asarray(q, dtype=float)
        scalar = (
            b_arr.size == 1
            and q_arr.size == 1
            or (np.all(b_arr == b_arr.flat[0]) and np.all(q_arr == q_arr.flat[0]))
        )
        if scalar:
            return _draw_tulap(rng, float(b_arr.flat[0]), float(q_arr.flat[0]), shape)
        b_full = np.broadcast_to(b_arr, shape).reshape(-1)
        q_full = np.broadcast_to(q_arr, shape).reshape(-1)
        out = np.empty(b_full.size)
        # one vectorised draw per distinct (b, q) pair
        pairs, inverse = np.unique(np.stack([b_full, q_full], axis=1), axis=0, return_inverse=True)
        for j, (bj, qj) in enumerate(pairs):
            idx = np.flatnonzero(inverse.reshape(-1) == j)
            out[idx] = _draw_tulap(rng, bj, qj, (idx.size,))
        return out.reshape(shape)


def _draw_untruncated(rng, b: float, shape) -> np.ndarray:
    """``G1 - G2 + U`` with ``G = floor(E / log(1/b))``, ``E ~ Exp(1)``.

    ``floor(E / lambda)`` is geometric with ``P(G >= k) = exp(-lambda k) = b**k``,
    so this is the defining construction of Tulap with two exponential draws
    (numpy's ziggurat) instead of two slower geometric draws.
    """
    scale = -1.0 / np.log(b)
    g1 = rng.standard_exponential(shape)
    g1 *= scale
    np.floor(g1, out=g1)
    g2 = rng.standard_exponential(shape)
    g2 *= scale
    np.floor(g2, out=g2)
    g1 -= g2
    g1 += rng.random(shape)
    g1 -= 0.5
    return g1


def _draw_tulap(rng, b: float, q: float, shape) -> np.ndarray:
    """Exact Tulap(0, b, q) draws: untruncated draws, rejecting outside the central 1 - q."""
    out = _draw_untruncated(rng, b, shape)
    if q > 0:
        lo, hi = (float(v) for v in _bounds(b, q))
        flat = out.reshape(-1)
        bad = np.flatnonzero((flat < lo) | (flat > hi))
        while bad.size:
            flat[bad] = _draw_untruncated(rng, b, (bad.size,))
            bad = bad[(flat[bad] < lo) | (flat[bad] > hi)]
    return out


tulap = tulap_gen(name="tulap", shapes="b, q")

_HALF_GRID = 2.0**-53


def _draw_tulap_exact(gen, epsilon: float, q: float, size: int):
    """Tulap(0, exp(-epsilon), q) draws as ``(G, U)``: integer part exact, uniform part.

    ``G = G1 - G2`` is the discrete Laplace ``Lap_Z(1/epsilon)``, drawn in
    exact rational arithmetic (CKS 2020, Algorithm 2) from uniform integers of
    ``gen`` (a :class:`~invariantdp.secure.SecureGenerator` for production);
    ``U`` is uniform on the symmetric grid ``(j + 1/2) 2**-53``,
    ``j = -2**52, ..., 2**52 - 1``, from 53 random bits.  Pairs with ``G + U``
    outside the central ``1 - q`` interval are rejected.  Callers add ``G`` to
    integer data first and ``U`` last, so that the release ``(x + G) + U`` is a
    function of the exact geometric release ``x + G`` and of ``U`` only.
    """
    from fractions import Fraction

    from .discrete import _discrete_laplace_exact_rational

    scale = 1 / Fraction(epsilon)
    b = float(np.exp(-epsilon))
    lo, hi = (float(v) for v in _bounds(b, q)) if q > 0 else (-np.inf, np.inf)
    g_out = np.empty(size, dtype=np.int64)
    u_out = np.empty(size)
    for i in range(size):
        while True:
            g = _discrete_laplace_exact_rational(scale, gen)
            u = (gen.integers(0, 2**53) - 2**52 + 0.5) * _HALF_GRID
            if lo <= g + u <= hi:
                g_out[i], u_out[i] = g, u
                break
    return g_out, u_out


def tulap_params(epsilon, delta=0.0) -> tuple[float, float]:
    r"""Shape parameters ``(b, q)`` of the CND of :math:`f_{\epsilon,\delta}`.

    ``b = exp(-epsilon)`` and ``q = 2 delta b / (1 - b + 2 delta b)``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    b = float(np.exp(-epsilon))
    q = 2.0 * delta * b / (1.0 - b + 2.0 * delta * b)
    return b, q


def tulap_from_privacy(epsilon, delta=0.0, loc=0.0):
    r"""Frozen Tulap law that is the canonical noise of :math:`f_{\epsilon,\delta}`.

    Adding it to a statistic with sensitivity 1 gives an
    (epsilon, delta)-DP release that matches :math:`f_{\epsilon,\delta}`
    exactly (Cho & Awan, Definition 35).

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0``.
    delta : float, optional
        ``0 <= delta < 1``.
    loc : float, optional
        The median ``m``.

    Returns
    -------
    scipy.stats frozen distribution

    References
    ----------
    Awan & Slavkovic (2018); Awan & Dong (2022), uniqueness of the CND.

    Examples
    --------
    >>> from invariantdp.distributions import tulap_from_privacy
    >>> N = tulap_from_privacy(1.0)
    >>> round(float(N.cdf(0.0)), 12)
    0.5
    >>> N.rvs(size=3, random_state=0).shape
    (3,)
    """
    b, q = tulap_params(epsilon, delta)
    return tulap(b, q, loc=loc)
