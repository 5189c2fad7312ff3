"""Discrete Laplace (double geometric) and discrete Gaussian distributions.

Both are ``scipy.stats.rv_discrete`` distributions on the integers with
closed-form (discrete Laplace) or carefully summed (discrete Gaussian) cdfs,
and exact samplers:

* discrete Laplace ``Lap_Z(t)``: ``P(X = k) = tanh(1/(2t)) exp(-|k|/t)``,
  sampled as the difference of two i.i.d. geometric counts;
* discrete Gaussian ``N_Z(0, sigma^2)``:
  ``P(X = k) = exp(-k^2 / (2 sigma^2)) / sum_j exp(-j^2 / (2 sigma^2))``,
  sampled by the rejection sampler of Canonne, Kamath & Steinke (2020),
  Algorithm 3: propose ``Y ~ Lap_Z(t)`` with ``t = floor(sigma) + 1``, accept
  with probability ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``.  The
  vectorised sampler evaluates that probability in double precision;
  :func:`sample_discrete_gaussian_exact` runs CKS Algorithms 1-3 in exact
  rational arithmetic (no floating point at all).

References
----------
.. [1] Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete
   Gaussian for differential privacy", NeurIPS 33.  (Def. 1, Algorithms 1-3,
   Theorem 4: ``N_Z(0, sigma^2)`` gives ``Delta^2 / (2 sigma^2)``-zCDP.)
.. [2] Ghosh, A., Roughgarden, T. and Sundararajan, M. (2012). "Universally
   utility-maximizing privacy mechanisms" (the geometric mechanism).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special, stats

from .._rng import as_generator
from .._validation import InvariantDPError, check_positive, check_positive_int

__all__ = [
    "discrete_gaussian",
    "discrete_gaussian_gen",
    "discrete_laplace",
    "discrete_laplace_gen",
    "sample_discrete_gaussian_exact",
    "sample_discrete_laplace_exact",
]

try:  # ``_ShapeInfo`` only feeds ``fit``
    from scipy.stats._distn_infrastructure import _ShapeInfo
except ImportError:  # pragma: no cover
    _ShapeInfo = None


# ---------------------------------------------------------------------------
# discrete Laplace
# ---------------------------------------------------------------------------


def _draw_discrete_laplace(rng, t, shape):
    """``G1 - G2`` with ``P(G = k) = (1 - p) p^k``, ``p = exp(-1/t)``."""
    q = -np.expm1(-1.0 / np.asarray(t, dtype=float))  # 1 - p, accurate for large t
    return rng.geometric(q, size=shape) - rng.geometric(q, size=shape)


class discrete_laplace_gen(stats.rv_discrete):
    r"""A discrete Laplace (double geometric) random variable on the integers.

    %(before_notes)s

    Notes
    -----
    The probability mass function is

    .. math:: f(k; t) = \tanh\!\Big(\frac{1}{2t}\Big)\, e^{-|k|/t},
              \qquad k \in \mathbb{Z},

    for the scale ``t > 0`` (``Lap_Z(t)`` of Canonne, Kamath & Steinke 2020,
    the "double geometric" law with ``p = exp(-1/t)`` of Gong & Meng).  The
    cdf is :math:`p^{|k|}/(1+p)` for ``k < 0`` and
    :math:`1 - p^{k+1}/(1+p)` for ``k >= 0``.  Adding ``Lap_Z(Delta/epsilon)``
    to an integer query of sensitivity ``Delta`` is epsilon-DP.

    Sampling is exact: the difference of two i.i.d. geometric counts.

    %(after_notes)s

    %(example)s
    """

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [_ShapeInfo("t", False, (0, np.inf), (False, False))]

    def _argcheck(self, t):
        return (t > 0) & np.isfinite(t)

    def _get_support(self, t):
        return -np.inf, np.inf

    def _logpmf(self, k, t):
        return np.log(np.tanh(0.5 / t)) - np.abs(k) / t

    def _pmf(self, k, t):
        return np.exp(self._logpmf(k, t))

    def _cdf(self, x, t):
        k = np.floor(x)
        logp = -1.0 / t
        with np.errstate(under="ignore"):
            low = np.exp(-np.abs(k) * (1.0 / t) - np.log1p(np.exp(logp)))
            high = np.exp((np.maximum(k, -1.0) + 1.0) * logp - np.log1p(np.exp(logp)))
        return np.where(k < 0, low, 1.0 - high)

    def _sf(self, x, t):
        return self._cdf(-np.floor(x) - 1.0, t)

    def _ppf(self, u, t):
        logp = -1.0 / t
        l1p = np.log1p(np.exp(logp))
        with np.errstate(divide="ignore", invalid="ignore"):
            neg = -np.floor((np.log(u) + l1p) / logp)
            pos = np.ceil((np.log1p(-u) + l1p) / logp) - 1.0
        k = np.where(u <= np.exp(logp - l1p), neg, pos)
        # guard against rounding at the jumps: smallest k with cdf(k) >= u
        k = np.where(self._cdf(k - 1.0, t) >= u, k - 1.0, k)
        k = np.where(self._cdf(k, t) < u, k + 1.0, k)
        return k

    def _stats(self, t):
        p = np.exp(-1.0 / t)
        var = 2.0 * p / (-np.expm1(-1.0 / t)) ** 2
        return 0.0, var, 0.0, None

    def _rvs(self, t, size=None, random_state=None):
        return _draw_discrete_laplace(random_state, t, size)


discrete_laplace = discrete_laplace_gen(name="discrete_laplace", shapes="t")


# ---------------------------------------------------------------------------
# discrete Gaussian
# ---------------------------------------------------------------------------

#: above this sigma, tails are summed by Euler-Maclaurin instead of term by term
_DIRECT_SIGMA = 1000.0


def _log_normaliser(sigma: float) -> float:
    """``log sum_k exp(-k^2 / (2 sigma^2))``.

    Direct summation for small ``sigma``; otherwise the Poisson summation
    identity ``sum_k e^{-k^2/2s^2} = s sqrt(2 pi) (1 + 2 sum_m e^{-2 pi^2 s^2 m^2})``.
    """
    if sigma < 2.0:
        k = np.arange(1, int(np.ceil(40 * sigma)) + 2)
        return float(np.log1p(2.0 * np.sum(np.exp(-(k**2) / (2 * sigma**2)))))
    m = np.arange(1, 4)
    corr = 2.0 * np.sum(np.exp(-2.0 * np.pi**2 * sigma**2 * m**2))
    return float(np.log(sigma) + 0.5 * np.log(2 * np.pi) + np.log1p(corr))


def _upper_tail(m, sigma):
    """``sum_{j >= m} exp(-j^2 / (2 sigma^2))`` for integers ``m >= 0`` (array)."""
    m = np.asarray(m, dtype=float)
    out = np.empty_like(m)
    s2 = 2.0 * sigma**2
    if sigma <= _DIRECT_SIGMA:
        width = int(np.ceil(40 * sigma)) + 2
        j = np.arange(width, dtype=float)
        for val in np.unique(m):
            out[m == val] = np.sum(np.exp(-((val + j) ** 2) / s2))
        return out
    # Euler-Maclaurin: int_m^inf f + f(m)/2 - f'(m)/12 + f'''(m)/720; the next
    # term is O(sigma^-6) relative to f(m).
    f = np.exp(-(m**2) / s2)
    integral = sigma * np.sqrt(np.pi / 2.0) * special.erfc(m / (sigma * np.sqrt(2.0)))
    d1 = -m / sigma**2 * f
    d3 = (-(m**3) / sigma**6 + 3.0 * m / sigma**4) * f
    return integral + f / 2.0 - d1 / 12.0 + d3 / 720.0


class discrete_gaussian_gen(stats.rv_discrete):
    r"""A discrete Gaussian random variable :math:`N_{\mathbb Z}(0, \sigma^2)`.

    %(before_notes)s

    Notes
    -----
    The probability mass function is

    .. math:: f(k; \sigma) = \frac{e^{-k^2/(2\sigma^2)}}
              {\sum_{j\in\mathbb Z} e^{-j^2/(2\sigma^2)}}, \qquad k\in\mathbb Z,

    for ``sigma > 0`` (Canonne, Kamath & Steinke 2020, Def. 1).  Its variance
    is slightly below :math:`\sigma^2`.  Adding it to an integer query of
    :math:`\ell_2` sensitivity ``Delta`` is :math:`\Delta^2/(2\sigma^2)`-zCDP
    (CKS Theorem 4).

    Sampling follows CKS Algorithm 3: a discrete Laplace proposal with scale
    ``floor(sigma) + 1`` and acceptance probability
    :math:`\exp(-(|Y| - \sigma^2/t)^2 / (2\sigma^2))`; see
    :func:`sample_discrete_gaussian_exact` for the fully rational version.

    %(after_notes)s

    %(example)s
    """

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [_ShapeInfo("sigma", False, (0, np.inf), (False, False))]

    def _argcheck(self, sigma):
        return (sigma > 0) & np.isfinite(sigma)

    def _get_support(self, sigma):
        return -np.inf, np.inf

    def _logpmf(self, k, sigma):
        lz = np.vectorize(_log_normaliser, otypes=[float])(sigma)
        return -(k**2) / (2.0 * sigma**2) - lz

    def _pmf(self, k, sigma):
        return np.exp(self._logpmf(k, sigma))

    def _tail_prob(self, m, sigma):
        """P(X >= m) for integers m >= 0, elementwise over broadcast arrays."""
        m, sigma = np.broadcast_arrays(np.asarray(m, float), np.asarray(sigma, float))
        out = np.empty(m.shape)
        for s in np.unique(sigma):
            sel = sigma == s
            out[sel] = _upper_tail(m[sel], float(s)) / np.exp(_log_normaliser(float(s)))
        return out

    def _cdf(self, x, sigma):
        k = np.floor(x)
        neg = self._tail_prob(np.abs(np.minimum(k, -1.0)), sigma)  # P(X <= k), k < 0
        pos = 1.0 - self._tail_prob(np.maximum(k, -1.0) + 1.0, sigma)
        return np.where(k < 0, neg, pos)

    def _sf(self, x, sigma):
        return self._cdf(-np.floor(x) - 1.0, sigma)

    def _ppf(self, u, sigma):
        u, sigma = np.broadcast_arrays(np.asarray(u, float), np.asarray(sigma, float))
        k = np.round(sigma * special.ndtri(u))
        for _ in range(200):  # walk to the smallest k with cdf(k) >= u
            up = self._cdf(k, sigma) < u
            down = ~up & (self._cdf(k - 1.0, sigma) >= u)
            if not (np.any(up) or np.any(down)):
                break
            k = k + up - down
        return k

    def _stats(self, sigma):
        return 0.0, None, 0.0, None

    def _rvs(self, sigma, size=None, random_state=None):
        rng = random_state
        sig = np.broadcast_to(np.asarray(sigma, dtype=float), size)
        t = np.floor(sig) + 1.0
        out = np.zeros(sig.shape, dtype=np.int64).reshape(-1)
        sflat, tflat = sig.reshape(-1), t.reshape(-1)
        todo = np.arange(out.size)
        while todo.size:
            s, tt = sflat[todo], tflat[todo]
            y = _draw_discrete_laplace(rng, tt, todo.shape)
            accept = rng.random(todo.shape) < np.exp(-((np.abs(y) - s**2 / tt) ** 2) / (2.0 * s**2))
            out[todo[accept]] = y[accept]
            todo = todo[~accept]
        return out.reshape(sig.shape)


discrete_gaussian = discrete_gaussian_gen(name="discrete_gaussian", shapes="sigma")


# ---------------------------------------------------------------------------
# exact rational sampler (CKS 2020, Algorithms 1-3)
# ---------------------------------------------------------------------------


def _randbelow(d: int, gen) -> int:
    """Uniform integer in ``[0, d)`` for an arbitrary positive Python int."""
    if not isinstance(gen, np.random.Generator):  # SecureGenerator: arbitrary precision
        return gen.integers(0, d)
    if d < 2**62:
        return int(gen.integers(0, d))
    k = d.bit_length()
    words = (k + 61) // 62
    while True:
        x = 0
        for _ in range(words):
            x = (x << 62) | int(gen.integers(0, 2**62))
        x >>= words * 62 - k
        if x < d:
            return x


def _bernoulli(q: Fraction, gen) -> bool:
    return _randbelow(q.denominator, gen) < q.numerator


def _bernoulli_exp(gamma: Fraction, gen) -> bool:
    """``Bernoulli(exp(-gamma))`` for rational ``gamma >= 0`` (CKS Algorithm 1)."""
    while gamma > 1:
        if not _bernoulli_exp(Fraction(1), gen):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, gen):
        k += 1
    return k % 2 == 1


def _discrete_laplace_exact(t: int, gen) -> int:
    """``Lap_Z(t)`` for an integer scale ``t`` (CKS Algorithm 2 with s = 1)."""
    while True:
        u = _randbelow(t, gen)
        if not _bernoulli_exp(Fraction(u, t), gen):
            continue
        v = 0
        while _bernoulli_exp(Fraction(1), gen):
            v += 1
        x = u + t * v
        negative = _bernoulli(Fraction(1, 2), gen)
        if negative and x == 0:
            continue
        return -x if negative else x


def _discrete_laplace_exact_rational(scale: Fraction, gen) -> int:
    """``Lap_Z(scale)`` for a rational scale ``t / s`` (CKS Algorithm 2)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = _randbelow(t, gen)
        if not _bernoulli_exp(Fraction(u, t), gen):
            continue
        v = 0
        while _bernoulli_exp(Fraction(1), gen):
            v += 1
        y = (u + t * v) // s
        negative = _bernoulli(Fraction(1, 2), gen)
        if negative and y == 0:
            continue
        return -y if negative else y


def _exact_source(rng):
    from ..secure import SecureGenerator

    return rng if isinstance(rng, SecureGenerator) else as_generator(rng)


def _as_fraction(name: str, value) -> Fraction:
    if isinstance(value, Fraction):
        if value <= 0:
            raise InvariantDPError(f"`{name}` ({value}) must be > 0.")
        return value
    return Fraction(check_positive(name, value))


def sample_discrete_laplace_exact(scale, size=None, rng=None):
    r"""Exact draws from the discrete Laplace :math:`\mathrm{Lap}_{\mathbb Z}(t)`.

    :math:`P(X = k) \propto e^{-|k|/t}`, sampled by Canonne, Kamath & Steinke
    (2020), Algorithm 2 (with Algorithm 1 for Bernoulli(exp(-gamma))), in
    exact rational arithmetic with uniform integers only: ``scale`` is taken
    as the exact rational value of the float (or ``Fraction``) given.  With
    ``rng=SecureGenerator()`` (:mod:`invariantdp.secure`) every integer comes
    from :mod:`secrets`, which makes the draw fit for a production release.

    Parameters
    ----------
    scale : float, int or Fraction
        :math:`t > 0`, e.g. ``Fraction(sensitivity) / Fraction(epsilon)``.
    size : int, optional
        Number of draws (``None`` for one integer).
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator

    References
    ----------
    Canonne, Kamath & Steinke (2020), Algorithms 1-2.

    Examples
    --------
    >>> from invariantdp.distributions import sample_discrete_laplace_exact
    >>> sample_discrete_laplace_exact(2.5, size=4, rng=0).dtype
    dtype('int64')
    """
    t = _as_fraction("scale", scale)
    gen = _exact_source(rng)
    m = 1 if size is None else check_positive_int("size", size, minimum=0)
    out = np.empty(m, dtype=np.int64)
    for i in range(m):  # exact arithmetic: one draw at a time by design
        out[i] = _discrete_laplace_exact_rational(t, gen)
    return int(out[0]) if size is None else out


def sample_discrete_gaussian_exact(sigma2, size=None, rng=None):
    r"""Exact draws from :math:`N_{\mathbb Z}(0, \sigma^2)` in rational arithmetic.

    Implements Canonne, Kamath & Steinke (2020), Algorithms 1-3 with Python
    :class:`fractions.Fraction` and uniform integers only: the output law
    is exactly the discrete Gaussian with variance parameter ``sigma2`` (taken
    as the exact rational value of the float or ``Fraction`` given).  About
    ten times slower per draw than the vectorised ``discrete_gaussian.rvs``,
    which evaluates the same acceptance probability in double precision.

    Parameters
    ----------
    sigma2 : float, int or Fraction
        :math:`\sigma^2 > 0`.
    size : int, optional
        Number of draws (``None`` for one integer).
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator
        With :class:`~invariantdp.secure.SecureGenerator` the draws come from
        :mod:`secrets` (for production releases).

    Examples
    --------
    >>> from invariantdp.distributions import sample_discrete_gaussian_exact
    >>> sample_discrete_gaussian_exact(4, size=5, rng=1).dtype
    dtype('int64')
    """
    s2 = _as_fraction("sigma2", sigma2)
    gen = _exact_source(rng)
    m = 1 if size is None else check_positive_int("size", size, minimum=0)
    t = math.isqrt(s2.numerator // s2.denominator) + 1  # floor(sigma) + 1
    out = np.empty(m, dtype=np.int64)
    for i in range(m):  # exact arithmetic: one draw at a time by design
        while True:
            y = _discrete_laplace_exact(t, gen)
            gamma = (abs(y) - s2 / t) ** 2 / (2 * s2)
            if _bernoulli_exp(gamma, gen):
                out[i] = y
                break
    return int(out[0]) if size is None else out
