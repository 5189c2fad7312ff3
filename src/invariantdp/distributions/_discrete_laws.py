"""Discrete Laplace (double geometric) and discrete Gaussian distributions.

Both are ``scipy.stats.rv_discrete`` distributions on the integers with
closed-form (discrete Laplace) or carefully summed (discrete Gaussian) cdfs
and numpy samplers, for simulation:

* discrete Laplace ``Lap_Z(t)``: ``P(X = k) = tanh(1/(2t)) exp(-|k|/t)``,
  sampled as the difference of two i.i.d. geometric counts;
* discrete Gaussian ``N_Z(0, sigma^2)``:
  ``P(X = k) = exp(-k^2 / (2 sigma^2)) / sum_j exp(-j^2 / (2 sigma^2))``,
  sampled by the rejection sampler of Canonne, Kamath & Steinke (2020),
  Algorithm 3: propose ``Y ~ Lap_Z(t)`` with ``t = floor(sigma) + 1``, accept
  with probability ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``.  The
  vectorised sampler evaluates that probability in double precision;
  :func:`sample_discrete_gaussian_exact` runs CKS Algorithm 3 in exact
  integer arithmetic (no floating point at all), with constant work.

The exact samplers (:func:`sample_discrete_laplace_exact`,
:func:`sample_discrete_gaussian_exact` and the constant-work plans
``laplace_plan``, ``gaussian_plan`` the mechanisms use) are defined in
:mod:`._exact_samplers` and :mod:`._constant` and re-exported here; with a
:class:`~invariantdp.secure.SecureGenerator` they are for production
releases (see :mod:`invariantdp.secure`).  :class:`LatticeLaw` scales
either law to a grid ``gamma Z``.

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

from .._validation import InvariantDPError

# the exact samplers live in ._exact; the mechanisms import their plans from here
from ._arith import _MAX_TRIALS, _too_many_trials
from ._exact_samplers import (  # noqa: F401
    gaussian_plan,
    laplace_plan,
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
)

#: grids gamma of a LatticeLaw with gamma * 2**53 a normal double
GRID_RANGE = (2.0**-960, 2.0**960)

__all__ = [
    "LatticeLaw",
    "discrete_gaussian",
    "discrete_gaussian_gen",
    "discrete_gaussian_log_cf",
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


#: largest noise scale (in integer units) that the samplers add to float64
#: data: ``|noise| >= 2**52`` then has probability below ``exp(-64) < 1e-27``,
#: so ``x + noise`` stays an exact integer for ``|x| < 2**52``
MAX_NOISE_SCALE = 2.0**46


def check_noise_scale(t, what: str, why: str) -> None:
    """Refuse integer noise of a scale above ``MAX_NOISE_SCALE`` (2**46).

    Above it, noise cannot be drawn and added exactly in float64: numpy's
    geometric saturates at 2**63 (a saturated ``G1 - G2`` is 0, the data
    unchanged) and ``|noise| >= 2**52`` loses the data's last digits.  The
    message is ``"{what} (t) must be <= 2**46 (~7.04e13){why}"``.
    """
    # a Fraction (grid units) is compared exactly: rounding it could hide a step past 2**46
    scalar = isinstance(t, Fraction | int | float)
    if (t > MAX_NOISE_SCALE) if scalar else np.any(np.asarray(t, dtype=float) > MAX_NOISE_SCALE):
        t = float(t) if scalar else float(np.max(np.asarray(t, dtype=float)))
        raise InvariantDPError(f"{what} ({t:.6g}) must be <= 2**46 (~7.04e13){why}")


def _check_noise_scale(t, what: str) -> None:
    check_noise_scale(
        t,
        what,
        ": larger integer noise cannot be drawn and added exactly in float64 (numpy's "
        "geometric saturates at 2**63, and |noise| >= 2**52 would lose the data's last digits).",
    )


def draw_discrete_laplace(rng, t, shape):
    """``G1 - G2`` with ``P(G = k) = (1 - p) p^k``, ``p = exp(-1/t)`` (simulation only).

    Refuses ``t > 2**46``: numpy's geometric saturates at ``2**63 - 1``, and
    a saturated ``G1 - G2`` is 0, which would return the data unchanged.
    """
    _check_noise_scale(t, "discrete Laplace scale `t`")
    q = -np.expm1(-1.0 / np.asarray(t, dtype=float))  # 1 - p, accurate for large t
    return rng.geometric(q, size=shape) - rng.geometric(q, size=shape)


class _integer_law_gen(stats.rv_discrete):
    """What the two laws on the integers share: one scale shape, symmetry about 0.

    Subclasses set ``_scale_name`` and define ``_logpmf`` and ``_cdf``; the
    pmf, the support and the survival function ``P(X > x) = P(X <= -x - 1)``
    follow.
    """

    _scale_name = "t"

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [_ShapeInfo(self._scale_name, False, (0, np.inf), (False, False))]

    def _argcheck(self, scale):
        return (scale > 0) & np.isfinite(scale)

    def _get_support(self, scale):
        return -np.inf, np.inf

    def _pmf(self, k, scale):
        return np.exp(self._logpmf(k, scale))

    def _sf(self, x, scale):
        return self._cdf(-np.floor(x) - 1.0, scale)


class discrete_laplace_gen(_integer_law_gen):
    r"""A discrete Laplace (double geometric) random variable on the integers.

    %(before_notes)s

    Parameters
    ----------
    t : float
        Shape parameter of every method: the scale, ``t > 0``.

    Returns
    -------
    scipy.stats.rv_discrete_frozen
        What calling the object returns: ``discrete_laplace(t, loc=0)`` is
        the law frozen at ``t`` (and shifted by ``loc``), whose methods above
        take no shape argument.

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

    Sampling (``rvs``) is the difference of two i.i.d. numpy geometric
    counts, for simulation, with scales up to ``2**46``;
    :func:`sample_discrete_laplace_exact` is the exact sampler for releases.

    %(after_notes)s

    References
    ----------
    Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
    privacy", NeurIPS 33 (the discrete Laplace); Gong & Meng, Definition 1.2
    (the double geometric mechanism).

    Examples
    --------
    >>> from invariantdp.distributions import discrete_laplace
    >>> round(float(discrete_laplace.pmf(0, 2.0)), 4), round(float(np.tanh(0.25)), 4)
    (0.2449, 0.2449)
    >>> discrete_laplace.rvs(2.0, size=5, random_state=0).dtype.kind
    'i'
    >>> X = discrete_laplace(2.0)  # frozen
    >>> round(float(X.cdf(-1)), 4), round(float(X.var()), 4)
    (0.3775, 7.8354)
    """

    def _logpmf(self, k, t):
        return np.log(np.tanh(0.5 / t)) - np.abs(k) / t

    def _cdf(self, x, t):
        k = np.floor(x)
        logp = -1.0 / t
        with np.errstate(under="ignore"):
            low = np.exp(-np.abs(k) * (1.0 / t) - np.log1p(np.exp(logp)))
            high = np.exp((np.maximum(k, -1.0) + 1.0) * logp - np.log1p(np.exp(logp)))
        return np.where(k < 0, low, 1.0 - high)

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
        return draw_discrete_laplace(random_state, t, size)


discrete_laplace = discrete_laplace_gen(name="discrete_laplace", shapes="t")


# ---------------------------------------------------------------------------
# discrete Gaussian
# ---------------------------------------------------------------------------

#: above this sigma, tails are summed by Euler-Maclaurin instead of term by term
_DIRECT_SIGMA = 1000.0


def _log_theta_sum(theta, sigma: float) -> np.ndarray:
    """``log sum_k exp(-sigma^2 (theta - 2 pi k)^2 / 2)`` for ``theta`` in ``[-pi, pi]``.

    The Poisson dual of the discrete Gaussian's weights: ``sum_j
    e^{-j^2 / 2 sigma^2} e^{i theta j} = sigma sqrt(2 pi)`` times this sum.
    Enough images ``2 pi k`` are kept that the omitted terms are below
    ``exp(-40)`` of the kept ones.
    """
    theta = np.asarray(theta, dtype=float)
    kmax = int(math.ceil(9.0 / (2.0 * np.pi * sigma))) + 1
    k = 2.0 * np.pi * np.arange(-kmax, kmax + 1)
    return special.logsumexp(-(sigma**2) * (theta[..., None] - k) ** 2 / 2.0, axis=-1)


def discrete_gaussian_log_cf(theta, sigma: float) -> np.ndarray:
    r"""``log E exp(i theta X)`` of :math:`X \sim N_{\mathbb Z}(0, \sigma^2)`, ``|theta| <= pi``.

    By Poisson summation the characteristic function is real and positive,
    ``phi(theta) = S(theta) / S(0)`` with ``S(theta) = sum_k e^{-sigma^2
    (theta - 2 pi k)^2 / 2}`` (:func:`_log_theta_sum`, whose value at 0 also
    gives the normaliser for ``sigma >= 2``).  Below ``sigma = 0.5`` the
    images that sum needs grow without bound as ``sigma -> 0``, so the pmf's
    own series ``phi(theta) = sum_j p_j cos(j theta)`` is summed instead (its
    terms beyond ``|j| = sigma sqrt(80)`` are below ``e^{-40}``): ``sigma -> 0``
    is exact, the law tending to a point mass.

    Examples
    --------
    >>> round(float(discrete_gaussian_log_cf(0.0, 1.5)), 12)
    0.0
    >>> t = 0.7  # E cos(t X) summed term by term
    >>> k = np.arange(-40, 41)
    >>> w = np.exp(-(k**2) / (2 * 1.5**2))
    >>> bool(abs(np.exp(discrete_gaussian_log_cf(t, 1.5)) - w @ np.cos(t * k) / w.sum()) < 1e-14)
    True
    """
    if sigma < _SIGMA_DIRECT:
        t = np.asarray(theta, dtype=float)
        j = np.arange(1, int(math.ceil(sigma * math.sqrt(80.0))) + 2)
        with np.errstate(over="ignore", divide="ignore", under="ignore"):
            w = np.exp(-0.5 * (j / sigma) ** 2)  # 0 below 1e-308: exact enough
        den = 1.0 + 2.0 * w.sum()
        return np.log1p(2.0 * ((np.cos(np.multiply.outer(t, j)) - 1.0) @ w) / den)
    return _log_theta_sum(theta, sigma) - _log_theta_sum(0.0, sigma)


#: below this sigma the characteristic function is summed over the pmf, not its images
_SIGMA_DIRECT = 0.5


def _log_normaliser(sigma: float) -> float:
    """``log sum_k exp(-k^2 / (2 sigma^2))``.

    Direct summation for small ``sigma``; otherwise the Poisson summation
    identity ``sum_k e^{-k^2/2s^2} = s sqrt(2 pi) S(0)`` (:func:`_log_theta_sum`).
    """
    if sigma < 2.0:
        k = np.arange(1, int(np.ceil(40 * sigma)) + 2)
        return float(np.log1p(2.0 * np.sum(np.exp(-(k**2) / (2 * sigma**2)))))
    return float(np.log(sigma) + 0.5 * np.log(2 * np.pi) + _log_theta_sum(0.0, sigma))


def _variance(sigma: float) -> float:
    """``sum_k k^2 exp(-k^2 / (2 sigma^2)) / Z``, slightly below ``sigma^2``.

    Direct summation for small ``sigma``; otherwise Poisson summation of
    ``k^2 e^{-k^2/2s^2}``, whose Fourier transform is
    ``s^3 sqrt(2 pi) (1 - 4 pi^2 s^2 m^2) e^{-2 pi^2 s^2 m^2}``.
    """
    if sigma < 2.0:
        k = np.arange(1, int(np.ceil(40 * sigma)) + 2)
        w = np.exp(-(k**2) / (2 * sigma**2))
        return float(2.0 * np.sum(k**2 * w) / (1.0 + 2.0 * np.sum(w)))
    m = np.arange(1, 4)
    e = np.exp(-2.0 * np.pi**2 * sigma**2 * m**2)
    num = 1.0 + 2.0 * np.sum((1.0 - 4.0 * np.pi**2 * sigma**2 * m**2) * e)
    return float(sigma**2 * num / (1.0 + 2.0 * np.sum(e)))


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


class discrete_gaussian_gen(_integer_law_gen):
    r"""A discrete Gaussian random variable :math:`N_{\mathbb Z}(0, \sigma^2)`.

    %(before_notes)s

    Parameters
    ----------
    sigma : float
        Shape parameter of every method: the scale, ``sigma > 0``.

    Returns
    -------
    scipy.stats.rv_discrete_frozen
        What calling the object returns: ``discrete_gaussian(sigma, loc=0)``
        is the law frozen at ``sigma`` (and shifted by ``loc``), whose methods
        above take no shape argument.

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

    References
    ----------
    Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
    privacy", NeurIPS 33, Definition 1, Theorem 4 and Algorithm 3.

    Examples
    --------
    >>> from invariantdp.distributions import discrete_gaussian
    >>> round(float(discrete_gaussian.pmf(0, 1.0)), 4)
    0.3989
    >>> bool(discrete_gaussian.var(1.0) < 1.0)
    True
    >>> X = discrete_gaussian(1.0)  # frozen
    >>> round(float(X.pmf(0)), 4), round(float(X.sf(1)), 4)
    (0.3989, 0.0586)
    """

    _scale_name = "sigma"

    def _logpmf(self, k, sigma):
        lz = np.vectorize(_log_normaliser, otypes=[float])(sigma)
        return -(k**2) / (2.0 * sigma**2) - lz

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
        return 0.0, np.vectorize(_variance, otypes=[float])(sigma), 0.0, None

    def _rvs(self, sigma, size=None, random_state=None):
        # The same CKS Algorithm 3 as the exact GaussianPlan, in doubles and vectorised: a
        # simulation draws 1e7 values in a second this way, where the exact plan, in integer
        # arithmetic with constant work per trial for secure releases, is far slower.
        rng = random_state
        sig = np.broadcast_to(np.asarray(sigma, dtype=float), size)
        _check_noise_scale(sig, "discrete Gaussian `sigma`")
        t = np.floor(sig) + 1.0
        out = np.zeros(sig.shape, dtype=np.int64).reshape(-1)
        sflat, tflat = sig.reshape(-1), t.reshape(-1)
        todo = np.arange(out.size)
        for _ in range(_MAX_TRIALS):  # each round accepts a fraction above 0.4
            if not todo.size:
                break
            s, tt = sflat[todo], tflat[todo]
            y = draw_discrete_laplace(rng, tt, todo.shape)
            accept = rng.random(todo.shape) < np.exp(-((np.abs(y) - s**2 / tt) ** 2) / (2.0 * s**2))
            out[todo[accept]] = y[accept]
            todo = todo[~accept]
        if todo.size:
            raise _too_many_trials("discrete Gaussian")
        return out.reshape(sig.shape)


discrete_gaussian = discrete_gaussian_gen(name="discrete_gaussian", shapes="sigma")


# ---------------------------------------------------------------------------
# integer laws scaled to a grid
# ---------------------------------------------------------------------------


class LatticeLaw:
    r"""The law of ``grid * K`` for an integer-valued frozen law ``K``.

    The noise of the grid (snapping-free) Laplace and Gaussian mechanisms,
    ``gamma * Lap_Z(t)`` and ``gamma * N_Z(0, s^2)``, lives on the lattice
    ``gamma Z``.  scipy's discrete distributions take no ``scale``, so this
    wrapper gives the frozen-distribution methods of the scaled law:
    ``pmf(x) = P(K = x / grid)`` (0 off the lattice), ``cdf(x) =
    P(K <= floor(x / grid))``, ``ppf(u) = grid * K.ppf(u)``, moments scaled
    by powers of ``grid``.  ``grid`` should be a power of two, so that
    ``x / grid`` is exact.

    Parameters
    ----------
    base : frozen scipy.stats discrete distribution
        The law of ``K`` on the integers.
    grid : float
        The lattice spacing ``gamma > 0``.

    References
    ----------
    Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
    privacy", Sec. 5 (scaling the integer laws to a finer grid).

    Examples
    --------
    >>> from invariantdp.distributions import discrete_laplace
    >>> from invariantdp.distributions._discrete_laws import LatticeLaw
    >>> law = LatticeLaw(discrete_laplace(2.0), 0.25)
    >>> float(law.pmf(0.5)) == float(discrete_laplace(2.0).pmf(2))
    True
    >>> float(law.pmf(0.3))
    0.0
    >>> float(law.var()) == 0.25**2 * float(discrete_laplace(2.0).var())
    True
    """

    def __init__(self, base, grid: float):
        self.base = base
        self.grid = float(grid)

    def _k(self, x):
        return np.asarray(x, dtype=float) / self.grid

    def pmf(self, x):
        return self.base.pmf(self._k(x))

    def logpmf(self, x):
        return self.base.logpmf(self._k(x))

    def cdf(self, x):
        return self.base.cdf(np.floor(self._k(x)))

    def logcdf(self, x):
        return self.base.logcdf(np.floor(self._k(x)))

    def sf(self, x):
        return self.base.sf(np.floor(self._k(x)))

    def logsf(self, x):
        return self.base.logsf(np.floor(self._k(x)))

    def ppf(self, u):
        return self.grid * self.base.ppf(u)

    def isf(self, u):
        return self.grid * self.base.isf(u)

    def rvs(self, size=None, random_state=None):
        return self.grid * self.base.rvs(size=size, random_state=random_state)

    def mean(self):
        return self.grid * self.base.mean()

    def median(self):
        return self.grid * self.base.median()

    def var(self):
        return self.grid**2 * self.base.var()

    def std(self):
        return self.grid * self.base.std()

    def moment(self, order):
        return self.grid**order * self.base.moment(order)

    def interval(self, confidence):
        lo, hi = self.base.interval(confidence)
        return self.grid * lo, self.grid * hi

    def support(self):
        lo, hi = self.base.support()
        return self.grid * lo, self.grid * hi

    def __repr__(self) -> str:
        return f"LatticeLaw({self.base.dist.name}{self.base.args}, grid={self.grid!r})"
