r"""Closed forms of the Tulap law in the parametrisation ``(log b, q, 1 - q)``.

The one home of the Tulap cdf, log-cdf, density and quantile: the scipy
distributions of :mod:`._tulap`, the DP tests (:mod:`invariantdp.inference`)
and the PyMC likelihood (:mod:`invariantdp.inference.bayes`) all evaluate
these functions.  :func:`tulap_logcdf` and :func:`tulap_logpdf` take the
array module ``xp`` (``numpy``, the default, or ``pytensor.tensor``), so the
PyMC likelihood builds its graph from the same formulas; only the bayes code
imports pytensor.

With ``[.]`` rounding to the nearest integer, the untruncated cdf of
``Tulap(0, b, 0)`` for ``x <= 0`` is (Awan & Slavkovic 2018, Def. 4.1)

.. math:: F(x) = \frac{b^{-[x]}}{1+b}\,\big(b + (x - [x] + 1/2)(1-b)\big),

``F(x) = 1 - F(-x)`` above 0, and with ``q > 0`` the law is truncated to its
central ``1 - q`` mass: ``F_q(x) = clip((F(x) - q/2) / (1 - q), 0, 1)``.

**Parametrisation.**  The functions take ``log_b = log b`` in ``[-inf, 0)``
rather than ``b``: for (epsilon, delta)-DP ``log_b = -epsilon`` is exact for
every epsilon, while ``b = exp(-epsilon)`` underflows to 0 above epsilon ~745
and rounds to 1 below epsilon ~1e-16.  ``1 - b`` is ``-expm1(log_b)`` and
``(1 - b) / (1 + b)`` is ``tanh(-log_b / 2)``, both accurate for tiny
epsilon.  ``log_b = -inf`` (b = 0) is the degenerate limit ``G1 = G2 = 0``,
the uniform law on [-1/2, 1/2].  Truncation is given by ``q`` and
``qc = 1 - q`` separately, because for tiny epsilon ``q`` rounds to 1 while
``1 - q`` keeps full precision.  Arguments broadcast; in-range inputs raise
no numpy warnings.

References
----------
.. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly
   most powerful tests for binomial data", NeurIPS 31, Definition 4.1.
.. [2] Cho, J. and Awan, J. "Semi-DP and invariant statistics", Definition 35
   (Tulap as the canonical noise of :math:`f_{\epsilon,\delta}`).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
from scipy import special

from .._bounded_cache import bounded_cache

__all__ = [
    "log_b_power",
    "truncate_logcdf",
    "tulap_bounds",
    "tulap_cdf",
    "tulap_cell_logcdf",
    "tulap_entropy",
    "tulap_even_moment",
    "tulap_logcdf",
    "tulap_logpdf",
    "tulap_pdf",
    "tulap_ppf",
    "tulap_privacy_shapes",
    "tulap_untruncated_var",
]

_LOG_2 = float(np.log(2.0))


def _round(x, xp):
    """Round half to even, numpy's rule, in either array module."""
    return xp.round(x) if xp is np else xp.round(x, mode="half_to_even")


def log_b_power(j, log_b, xp=np):
    """``log(b**j) = j log b`` for integers ``j >= 0``, with ``b**0 = 1`` also at ``b = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> log_b_power(np.array([0.0, 2.0]), -np.inf).tolist()
    [0.0, -inf]
    """
    with np.errstate(invalid="ignore", over="ignore"):  # j log b < -1.8e308 is -inf: b**j = 0
        return xp.where(xp.equal(j, 0), 0.0, j * log_b)


def _split(x, xp):
    """``x <= 0`` as ``j = -[x] >= 0`` and ``frac = x - [x]`` in [-1/2, 1/2]."""
    k = _round(x, xp)
    return -k, x - k


def tulap_cell_logcdf(frac, log_b, xp=np):
    """``log F(frac)`` of the untruncated law in its central cell, ``|frac| <= 1/2``.

    ``F(frac) = (b + (frac + 1/2)(1 - b)) / (1 + b)``; in cell ``-j`` the cdf
    is ``b**j`` times that (Awan & Slavkovic 2018, Def. 4.1), so lattice
    evaluations add :func:`log_b_power` to one value of this function.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(tulap_cell_logcdf(0.0, np.log(0.5))), 12)  # F(0) = 1/2
    -0.69314718056
    """
    b = np.exp(log_b)
    t = frac + 0.5
    with np.errstate(divide="ignore"):  # b = 0: F(-1/2) = 0
        # at the cell edge t = 0 the value is log b itself: PyTensor's canonicalisation
        # re-associates b + (frac + 1/2) into (b + 1/2) + frac, which loses a b < 2**-53
        return xp.where(t > 0, xp.log(b + t * -np.expm1(log_b)), log_b) - np.log1p(b)


def _lower_cdf(x, log_b):
    """``F(x)`` for ``x <= 0``: ``b**j (b + (frac + 1/2)(1 - b)) / (1 + b)``."""
    j, frac = _split(x, np)
    b = np.exp(log_b)
    return np.exp(log_b_power(j, log_b)) * (b + (frac + 0.5) * -np.expm1(log_b)) / (1.0 + b)


def _lower_gap(x, log_b, xp=np):
    """``1/2 - F(x)`` for ``x <= 0``, without cancellation near the median.

    ``1/2 - F(x) = (1 - b**j) / 2 - frac * b**j (1 - b) / (1 + b)``; for
    ``j >= 1`` the second term is at most half the first, so both forms keep
    full relative precision (needed when ``q`` is close to 1).
    """
    j, frac = _split(x, xp)
    jl = log_b_power(j, log_b, xp)
    return 0.5 * -xp.expm1(jl) - frac * xp.exp(jl) * np.tanh(-0.5 * log_b)


def _lower_cdf_q(x, log_b, q, qc):
    """Truncated ``F_q(x)`` for ``x <= 0``, clipped to [0, 1/2].

    ``(F - q/2) / (1 - q)`` loses nothing for ``q <= 1/2``; above, the
    centred form ``1/2 - (1/2 - F) / (1 - q)`` does not divide a rounding
    error of ``F`` by a small ``1 - q``.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = (_lower_cdf(x, log_b) - 0.5 * q) / qc
        centred = 0.5 - _lower_gap(x, log_b) / qc
    return np.clip(np.where(q <= 0.5, direct, centred), 0.0, 0.5)


def truncate_logcdf(logf, q, qc, xp=np):
    """``log((F - q/2) / (1 - q))`` from ``log F``, the direct form (exact for ``q <= 1/2``).

    ``log(F - q/2) = log F + log1p(-q / (2F))``, with ``q / (2F)`` formed in
    log space: ``q/2`` underflows for the smallest subnormal ``q`` and
    ``exp(-log F)`` overflows in the tails.  ``q = 0`` returns ``log F``
    unchanged.  Where ``F <= q/2`` (outside the support) the result is
    ``-inf``.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(np.exp(truncate_logcdf(np.log(0.3), 0.2, 0.8))), 12)  # (0.3 - 0.1) / 0.8
    0.25
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ratio = xp.where(np.asarray(q > 0), xp.exp(np.log(q) - _LOG_2 - logf), 0.0)
        return logf + xp.log1p(-xp.minimum(ratio, 1.0)) - np.log(qc)


def _lower_logcdf_q(x, log_b, q, qc, xp=np):
    """``log F_q(x)`` for ``x <= 0``, at most ``log(1/2)`` (finite far into the tail)."""
    j, frac = _split(x, xp)
    lf = log_b_power(j, log_b, xp) + tulap_cell_logcdf(frac, log_b, xp)
    direct = truncate_logcdf(lf, q, qc, xp)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        gap = 2.0 * _lower_gap(x, log_b, xp) / qc
        centred = xp.log1p(-xp.minimum(gap, 1.0)) - _LOG_2
    return xp.minimum(xp.where(np.asarray(q <= 0.5), direct, centred), -_LOG_2)


def tulap_cdf(x, log_b, q=0.0, qc=1.0):
    """Cdf ``F_q(x)`` of ``Tulap(0, b, q)``; ``F(x) = 1 - F(-x)`` above the median.

    Examples
    --------
    >>> import numpy as np
    >>> tulap_cdf(np.array([-0.5, 0.0, 0.25]), -np.inf).tolist()  # b = 0: uniform
    [0.0, 0.5, 0.75]
    """
    low = _lower_cdf_q(np.minimum(x, -x), log_b, q, qc)
    return np.where(x <= 0, low, 1.0 - low)


def tulap_logcdf(x, log_b, q=0.0, qc=1.0, xp=np):
    """Log-cdf ``log F_q(x)`` of ``Tulap(0, b, q)``, in numpy or PyTensor (``xp``).

    The lower half is evaluated in log space (finite far into the tail), the
    upper half as ``log1p(-F_q(-x))``.  With ``xp=pytensor.tensor`` the
    shapes ``log_b, q, qc`` must be numbers and ``x`` a tensor; the result
    is the same expression graph (agreeing with numpy to rounding).

    Examples
    --------
    >>> import numpy as np
    >>> b = 0.5  # F(-3) = b**3 (b + (1 - b)/2) / (1 + b)
    >>> round(float(np.exp(tulap_logcdf(-3.0, np.log(b)))), 12)
    0.0625
    """
    low = _lower_logcdf_q(xp.minimum(x, -x), log_b, q, qc, xp)
    with np.errstate(divide="ignore"):
        high = xp.log1p(-xp.exp(low))
    return xp.where(x <= 0, low, high)


def _lower_ppf_from_p(p, log_b):
    """``x <= 0`` with ``F(x) = p`` for ``0 < p <= 1/2`` (accurate for small p)."""
    b = np.exp(log_b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logv = np.log(p) + np.log1p(b)
        # on [-j-1/2, -j+1/2] the cdf is b**j/(1+b) (b + t(1-b)), t in [0, 1]
        j = np.maximum(np.floor(logv / log_b), 0.0)
        # in the central cell j = 0 skip the log/exp round trip (exact at b = 0)
        v = np.where(j == 0, p * (1.0 + b), np.exp(logv - log_b_power(j, log_b)))
        t = (v - b) / -np.expm1(log_b)
    return -j + np.clip(t, 0.0, 1.0) - 0.5


def _lower_ppf_from_gap(d, log_b):
    """``x <= 0`` with ``1/2 - F(x) = d`` for ``0 <= d < 1/2`` (accurate near 1/2)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # log(F(1+b)) with F = 1/2 - d, written with log1p for small d and 1 - b
        logv = np.log1p(-2.0 * d) + np.log1p(0.5 * np.expm1(log_b))
        j = np.maximum(np.floor(logv / log_b), 0.0)
        jl = log_b_power(j, log_b)
        # d = (1 - b**j)/2 - frac b**j tanh(-log_b/2) solved for frac
        frac = (0.5 * np.expm1(jl) + d) / (np.exp(jl) * np.tanh(-0.5 * log_b))
    return -j - np.clip(frac, -0.5, 0.5)


def _lower_ppf(p, d, log_b):
    """``x <= 0`` with ``F(x) = p = 1/2 - d``, from whichever form is exact.

    ``p = 0`` gives the lower end of the support: ``-1/2`` for ``b = 0``,
    ``-inf`` otherwise.
    """
    x = np.where(p <= 0.25, _lower_ppf_from_p(p, log_b), _lower_ppf_from_gap(d, log_b))
    return np.where(p <= 0.0, np.where(np.isneginf(log_b), -0.5, -np.inf), x)


def tulap_ppf(u, log_b, q=0.0, qc=1.0):
    """Quantile of ``Tulap(0, b, q)``: ``F^{-1}(q/2 + u (1 - q))`` of the untruncated law.

    Examples
    --------
    >>> import numpy as np
    >>> (tulap_ppf(np.array([0.25, 0.5, 0.75]), -np.inf) + 0.0).tolist()  # b = 0: uniform
    [-0.25, 0.0, 0.25]
    """
    u = np.asarray(u, dtype=float)
    lo = np.minimum(u, 1.0 - u)  # truncated lower-tail probability, <= 1/2
    # untruncated lower-tail probability p and its gap to 1/2, both to full precision
    p = 0.5 * q + lo * qc
    d = qc * (0.5 - lo)
    x = _lower_ppf(p, d, log_b)
    return np.where(u <= 0.5, x, -x)


def tulap_pdf(x, log_b, qc=1.0):
    """Density ``(1 - b)/(1 + b) b**|[x]| / (1 - q)`` inside the support.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(tulap_pdf(1.2, np.log(0.5))), 12)  # (1/3) * 0.5
    0.166666666667
    """
    j = np.abs(np.round(x))
    return np.exp(log_b_power(j, log_b)) * np.tanh(-0.5 * log_b) / qc


def tulap_logpdf(x, log_b, qc=1.0, xp=np):
    """Log density ``log((1 - b)/(1 + b)) + |[x]| log b - log(1 - q)`` inside the support.

    In numpy or PyTensor (``xp``); the support (:func:`tulap_bounds`) is the
    caller's to apply.

    Examples
    --------
    >>> import numpy as np
    >>> float(tulap_logpdf(0.3, -np.inf))  # b = 0: uniform density 1
    0.0
    """
    j = xp.abs(_round(x, xp))
    with np.errstate(divide="ignore"):
        const = np.log(np.tanh(-0.5 * log_b)) - np.log(qc)
    return log_b_power(j, log_b, xp) + const


def tulap_bounds(log_b, q, qc):
    """Support: the untruncated ``q/2`` and ``1 - q/2`` quantiles (±1/2 at b = 0).

    Examples
    --------
    >>> import numpy as np
    >>> [float(v) for v in tulap_bounds(-np.inf, 0.2, 0.8)]  # uniform, central 80%
    [-0.4, 0.4]
    """
    q = np.asarray(q, dtype=float)
    upper = -_lower_ppf(0.5 * q, 0.5 * np.asarray(qc, dtype=float), log_b)
    return -upper, upper


def tulap_untruncated_var(log_b):
    """``2b/(1-b)**2 + 1/12`` (discrete Laplace plus uniform) as ``1/(2 sinh(L/2)**2) + 1/12``.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(tulap_untruncated_var(np.log(0.5))), 12)  # 2 * 0.5 / 0.25 + 1/12
    4.083333333333
    """
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        return 0.5 / np.sinh(0.5 * log_b) ** 2 + 1.0 / 12.0


def tulap_privacy_shapes(epsilon, delta):
    """``(log_b, q, 1 - q)`` of the CND of f_{epsilon,delta}, each to full precision.

    ``q = 2 delta b / (1 - b + 2 delta b) = 2 delta / (expm1(epsilon) + 2 delta)``
    (divide by ``b``), which tends to 1 as epsilon -> 0 for delta > 0 and
    to 0 as epsilon -> inf, with no 0/0 at either end (Cho & Awan, Def. 35).

    Examples
    --------
    >>> [round(float(v), 6) for v in tulap_privacy_shapes(1.0, 0.01)]
    [-1.0, 0.011506, 0.988494]
    """
    epsilon = np.asarray(epsilon, dtype=float)
    delta = np.asarray(delta, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        m = np.expm1(epsilon)
        q = 2.0 * delta / (m + 2.0 * delta)
        qc = np.where(np.isinf(m), 1.0, m / (m + 2.0 * delta))
    return -epsilon, q, qc


# ---------------------------------------------------------------------------
# moments and entropy of the truncated law, in closed form
# ---------------------------------------------------------------------------
#
# The density is c b**|[x]| / (1 - q) on [-T, T], c = (1 - b)/(1 + b), T the
# upper end of the support, in cell J = [T].  By symmetry the odd moments are 0
# and E X**n = 2/(1 - q) * int_0^T x**n f(x) dx for even n, with
#
#   int_0^T x**n f / c = sum_{j<J} b**j cell_n(j) - cell_n(0)/2 + b**J int_{J-1/2}^T x**n,
#
# cell_n(j) = int_{j-1/2}^{j+1/2} x**n dx = sum_{s even} a_s j**s (J >= 1; for J = 0
# the integral is T**(n+1)/(n+1)).  Writing j**s = sum_k S(s, k) k! C(j, k) (Stirling
# numbers of the second kind) leaves sums B_k = sum_{j<J} C(j, k) b**j, which are
# negative-binomial probabilities:
#
#   B_k = b**k / (1 - b)**(k+1) * I_{1-b}(k + 1, J - k)   (0 for J <= k),
#
# I the regularized incomplete beta function.  Every term is positive, so nothing
# cancels, for b near 0, near 1 (tiny epsilon: 1 - b = -expm1(log b) exactly) and for
# every J; B_k tends to b**k / (1 - b)**(k+1) untruncated (q = 0, T infinite).

#: the largest even moment given in closed form (beyond, I_{1-b} can underflow)
MAX_CLOSED_MOMENT = 12
#: below this epsilon * J every b**j, j <= J, is 1 in double precision
_FLAT = 1e-17


@bounded_cache(maxsize=MAX_CLOSED_MOMENT // 2 + 1)
def _moment_weights(n: int) -> tuple[tuple[float, ...], float]:
    """``(w_k)`` with ``sum_k w_k C(j, k) = cell_n(j)``, and ``cell_n(0) = a_0``."""
    half = Fraction(1, 2)
    a = {s: 2 * comb(n + 1, s) * half ** (n + 1 - s) / (n + 1) for s in range(0, n + 1, 2)}
    stirling = [[Fraction(0)] * (n + 1) for _ in range(n + 1)]  # S(s, k)
    stirling[0][0] = Fraction(1)
    for s in range(1, n + 1):
        for k in range(1, s + 1):
            stirling[s][k] = k * stirling[s - 1][k] + stirling[s - 1][k - 1]
    factorial = [Fraction(1)]
    for k in range(1, n + 1):
        factorial.append(factorial[-1] * k)
    w = [sum(a[s] * stirling[s][k] * factorial[k] for s in a if s >= k) for k in range(n + 1)]
    return tuple(float(v) for v in w), float(a[0])


def _cell_sums(k: int, J, log_b, finite):
    """``c B_k(J)`` (see above), ``c = (1 - b)/(1 + b)``; ``J`` infinite where not ``finite``."""
    b = np.exp(log_b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        log_p = np.log(-np.expm1(log_b))  # log(1 - b), exact for b near 1
        upper = np.where(finite, J - k, 1.0)
        tail = np.where(finite & (upper > 0), special.betainc(k + 1.0, upper, np.exp(log_p)), 1.0)
        tail = np.where(finite & (upper <= 0), 0.0, tail)
        log_term = log_b_power(k, log_b) - k * log_p + np.log(tail) - np.log1p(b)
        general = np.exp(log_term)
        # where epsilon J < 1e-17 the weights b**j are 1: B_k = C(J, k + 1)
        flat = special.binom(J, k + 1.0) * np.exp(log_p - np.log1p(b))
    return np.where(finite & (-log_b * J < _FLAT), flat, general)


def _support_cells(log_b, q, qc):
    """``(T, J, finite)``: the upper end of the support, its cell ``[T]``, ``T < inf``."""
    with np.errstate(all="ignore"):
        T = np.asarray(tulap_bounds(log_b, q, qc)[1], dtype=float)
    finite = np.isfinite(T)
    J = np.where(finite, np.round(np.where(finite, T, 0.0)), np.inf)
    return T, J, finite


def tulap_even_moment(n: int, log_b, q=0.0, qc=1.0):
    """``E[X**n]`` of ``Tulap(0, b, q)`` for even ``n <= 12``, in closed form (odd: 0).

    Exact sums over the cells of the truncated support (see the comment
    above this function in the source), evaluated with the regularized
    incomplete beta function: no numerical integration.

    Examples
    --------
    >>> import numpy as np
    >>> b = 0.5  # untruncated: 2b/(1-b)^2 + 1/12
    >>> round(float(tulap_even_moment(2, np.log(b))), 12)
    4.083333333333
    >>> round(float(tulap_even_moment(2, -np.inf, 0.2, 0.8)), 12)  # uniform on [-0.4, 0.4]
    0.053333333333
    """
    if n % 2 or not 0 <= n <= MAX_CLOSED_MOMENT:
        raise ValueError(f"`n` ({n}) must be an even integer in [0, {MAX_CLOSED_MOMENT}].")
    log_b, q, qc = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (log_b, q, qc)))
    T, J, finite = _support_cells(log_b, q, qc)
    weights, a0 = _moment_weights(n)
    c = np.tanh(-0.5 * log_b)
    with np.errstate(invalid="ignore", over="ignore"):
        cells = sum(w * _cell_sums(k, J, log_b, finite) for k, w in enumerate(weights) if w)
        # the partial cell [J - 1/2, T]: (T**(n+1) - a**(n+1))/(n+1) without cancellation
        a = J - 0.5
        powers = sum(T**i * a ** (n - i) for i in range(n + 1))
        edge = np.exp(log_b_power(J, log_b)) * c * ((T - J) + 0.5) * powers / (n + 1)
        half = cells - 0.5 * a0 * c + np.where(finite, edge, 0.0)
        central = c * np.where(finite, T, 0.0) ** (n + 1) / (n + 1)  # J = 0: T <= 1/2
        out = 2.0 * np.where(finite & (J == 0), central, half) / qc
    return out[()] if out.ndim == 0 else out


def tulap_entropy(log_b, q=0.0, qc=1.0):
    """Differential entropy of ``Tulap(0, b, q)``: ``-log(c/(1-q)) - log(b) E|[X]|``.

    ``E|[X]| = 2/(1 - q) (c B_1(J) + J c b**J (T - J + 1/2))``, with the sums
    of :func:`tulap_even_moment`; ``c = (1 - b)/(1 + b)``.

    Examples
    --------
    >>> import numpy as np
    >>> float(tulap_entropy(-np.inf))  # b = 0: uniform on [-1/2, 1/2]
    0.0
    """
    log_b, q, qc = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (log_b, q, qc)))
    T, J, finite = _support_cells(log_b, q, qc)
    c = np.tanh(-0.5 * log_b)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        edge = J * np.exp(log_b_power(J, log_b)) * c * ((T - J) + 0.5)
        rounded = 2.0 * (_cell_sums(1, J, log_b, finite) + np.where(finite, edge, 0.0)) / qc
        rounded = np.where(finite & (J == 0), 0.0, rounded)
        out = np.log(qc) - np.log(c) - np.where(rounded > 0, log_b * rounded, 0.0)
    return out[()] if out.ndim == 0 else out
