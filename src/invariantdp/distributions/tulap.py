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

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction

import numpy as np
from scipy import stats

from .._validation import InvariantDPError, check_delta, check_epsilon, check_real
from .discrete import _randbelow

__all__ = [
    "tulap",
    "tulap_from_privacy",
    "tulap_gen",
    "tulap_params",
    "tulap_privacy",
    "tulap_privacy_gen",
]

try:  # ``_ShapeInfo`` only feeds ``fit``; older scipy versions lack it
    from scipy.stats._distn_infrastructure import _ShapeInfo
except ImportError:  # pragma: no cover
    _ShapeInfo = None


# ---------------------------------------------------------------------------
# Closed forms for the untruncated law with median 0.
#
# The core functions (suffix ``_L``) take ``log_b = log b`` in [-inf, 0) rather
# than ``b``: for (epsilon, delta)-DP ``log_b = -epsilon`` is exact for every
# epsilon, while ``b = exp(-epsilon)`` underflows to 0 above epsilon ~ 745 and
# rounds to 1 below epsilon ~ 1e-16.  ``1 - b`` is ``-expm1(log_b)`` and
# ``(1 - b) / (1 + b)`` is ``tanh(-log_b / 2)``, both accurate for tiny
# epsilon.  ``log_b = -inf`` (b = 0) is the degenerate limit G1 = G2 = 0, the
# uniform law on [-1/2, 1/2].  Truncation is given by ``q`` and ``qc = 1 - q``
# separately, because for tiny epsilon ``q`` rounds to 1 while ``1 - q`` keeps
# full precision.  The functions take arrays that already broadcast and raise
# no warnings for in-range inputs.
# ---------------------------------------------------------------------------


def _log_of_b(b):
    """``log b``, ``-inf`` at ``b = 0`` (the uniform limit)."""
    with np.errstate(divide="ignore"):
        return np.log(b)


def _jl(j, log_b):
    """``j * log b`` for integers ``j >= 0``: ``b**0 = 1`` also at ``b = 0``."""
    with np.errstate(invalid="ignore", over="ignore"):  # j log b < -1.8e308 is -inf: b**j = 0
        return np.where(j == 0, 0.0, j * log_b)


def _split(x):
    """``x <= 0`` as ``j = -[x] >= 0`` and ``frac = x - [x]`` in [-1/2, 1/2]."""
    k = np.round(x)
    return -k, x - k


def _lower_cdf_L(x, log_b):
    """``F(x)`` for ``x <= 0``: ``b**j (b + (frac + 1/2)(1 - b)) / (1 + b)``."""
    j, frac = _split(x)
    b = np.exp(log_b)
    return np.exp(_jl(j, log_b)) * (b + (frac + 0.5) * -np.expm1(log_b)) / (1.0 + b)


def _lower_logcdf_L(x, log_b):
    """``log F(x)`` for ``x <= 0`` (finite far into the tail)."""
    j, frac = _split(x)
    b = np.exp(log_b)
    with np.errstate(divide="ignore"):
        inner = np.log(b + (frac + 0.5) * -np.expm1(log_b))
    return _jl(j, log_b) + inner - np.log1p(b)


def _lower_gap_L(x, log_b):
    """``1/2 - F(x)`` for ``x <= 0``, without cancellation near the median.

    ``1/2 - F(x) = (1 - b**j) / 2 - frac * b**j (1 - b) / (1 + b)``; for
    ``j >= 1`` the second term is at most half the first, so both forms keep
    full relative precision (needed when ``q`` is close to 1).
    """
    j, frac = _split(x)
    jl = _jl(j, log_b)
    return 0.5 * -np.expm1(jl) - frac * np.exp(jl) * np.tanh(-0.5 * log_b)


def _lower_cdf_q(x, log_b, q, qc):
    """Truncated ``F_q(x)`` for ``x <= 0``, clipped to [0, 1/2].

    ``(F - q/2) / (1 - q)`` loses nothing for ``q <= 1/2``; above, the
    centred form ``1/2 - (1/2 - F) / (1 - q)`` does not divide a rounding
    error of ``F`` by a small ``1 - q``.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = (_lower_cdf_L(x, log_b) - 0.5 * q) / qc
        centred = 0.5 - _lower_gap_L(x, log_b) / qc
    return np.clip(np.where(q <= 0.5, direct, centred), 0.0, 0.5)


def _lower_logcdf_q(x, log_b, q, qc):
    """``log F_q(x)`` for ``x <= 0``, at most ``log(1/2)``."""
    lf = _lower_logcdf_L(x, log_b)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # log(F - q/2) = log F + log1p(-q / (2F)); q = 0 keeps the exact tail
        # q/(2F) in log space: q/2 underflows for the smallest subnormal q, exp(-lf) overflows
        ratio = np.where(q > 0, np.exp(np.log(q) - np.log(2.0) - lf), 0.0)
        direct = lf + np.log1p(-np.minimum(ratio, 1.0)) - np.log(qc)
        gap = 2.0 * _lower_gap_L(x, log_b) / qc
        centred = np.log1p(-np.minimum(gap, 1.0)) - np.log(2.0)
    return np.minimum(np.where(q <= 0.5, direct, centred), -np.log(2.0))


def _cdf_L(x, log_b, q=0.0, qc=1.0):
    """Truncated cdf; ``F(x) = 1 - F(-x)`` above the median."""
    low = _lower_cdf_q(np.minimum(x, -x), log_b, q, qc)
    return np.where(x <= 0, low, 1.0 - low)


def _logcdf_L(x, log_b, q=0.0, qc=1.0):
    low = _lower_logcdf_q(np.minimum(x, -x), log_b, q, qc)
    with np.errstate(divide="ignore"):
        high = np.log1p(-np.exp(low))
    return np.where(x <= 0, low, high)


def _lower_ppf_from_p(p, log_b):
    """``x <= 0`` with ``F(x) = p`` for ``0 < p <= 1/2`` (accurate for small p)."""
    b = np.exp(log_b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logv = np.log(p) + np.log1p(b)
        # on [-j-1/2, -j+1/2] the cdf is b**j/(1+b) (b + t(1-b)), t in [0, 1]
        j = np.maximum(np.floor(logv / log_b), 0.0)
        # in the central cell j = 0 skip the log/exp round trip (exact at b = 0)
        v = np.where(j == 0, p * (1.0 + b), np.exp(logv - _jl(j, log_b)))
        t = (v - b) / -np.expm1(log_b)
    return -j + np.clip(t, 0.0, 1.0) - 0.5


def _lower_ppf_from_gap(d, log_b):
    """``x <= 0`` with ``1/2 - F(x) = d`` for ``0 <= d < 1/2`` (accurate near 1/2)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # log(F(1+b)) with F = 1/2 - d, written with log1p for small d and 1 - b
        logv = np.log1p(-2.0 * d) + np.log1p(0.5 * np.expm1(log_b))
        j = np.maximum(np.floor(logv / log_b), 0.0)
        jl = _jl(j, log_b)
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


def _ppf_L(u, log_b, q=0.0, qc=1.0):
    """Quantile of the truncated law: ``F^{-1}(q/2 + u (1 - q))``."""
    u = np.asarray(u, dtype=float)
    lo = np.minimum(u, 1.0 - u)  # truncated lower-tail probability, <= 1/2
    # untruncated lower-tail probability p and its gap to 1/2, both to full precision
    p = 0.5 * q + lo * qc
    d = qc * (0.5 - lo)
    x = _lower_ppf(p, d, log_b)
    return np.where(u <= 0.5, x, -x)


def _pdf_L(x, log_b, qc=1.0):
    """Density ``(1 - b)/(1 + b) b**|[x]| / (1 - q)`` inside the support."""
    j = np.abs(np.round(x))
    return np.exp(_jl(j, log_b)) * np.tanh(-0.5 * log_b) / qc


def _logpdf_L(x, log_b, qc=1.0):
    j = np.abs(np.round(x))
    return _jl(j, log_b) + np.log(np.tanh(-0.5 * log_b)) - np.log(qc)


def tulap_bounds(log_b, q, qc):
    """Support: the untruncated ``q/2`` and ``1 - q/2`` quantiles (±1/2 at b = 0)."""
    q = np.asarray(q, dtype=float)
    upper = -_lower_ppf(0.5 * q, 0.5 * np.asarray(qc, dtype=float), log_b)
    return -upper, upper


def _untruncated_var_L(log_b):
    """``2b/(1-b)**2 + 1/12`` (discrete Laplace plus uniform) as ``1/(2 sinh(L/2)**2) + 1/12``."""
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        return 0.5 / np.sinh(0.5 * log_b) ** 2 + 1.0 / 12.0


#: below this epsilon, b = exp(-epsilon) rounds to 1 in double precision
_EPS_MIN_B = 2.0**-54 * (1.0 + 2.0**-52)


def tulap_privacy_shapes(epsilon, delta):
    """``(log_b, q, 1 - q)`` of the CND of f_{epsilon,delta}, each to full precision.

    ``q = 2 delta b / (1 - b + 2 delta b) = 2 delta / (expm1(epsilon) + 2 delta)``
    (divide by ``b``), which tends to 1 as epsilon -> 0 for delta > 0 and
    to 0 as epsilon -> inf, with no 0/0 at either end.
    """
    epsilon = np.asarray(epsilon, dtype=float)
    delta = np.asarray(delta, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        m = np.expm1(epsilon)
        q = 2.0 * delta / (m + 2.0 * delta)
        qc = np.where(np.isinf(m), 1.0, m / (m + 2.0 * delta))
    return -epsilon, q, qc


# The b-parametrised forms (b in [0, 1)), kept for callers that hold (b, q).


def _lower_cdf0(x, b):
    """Untruncated cdf for ``x <= 0``: b**|k| / (1+b) * (b + (x-k+1/2)(1-b))."""
    return _lower_cdf_L(x, _log_of_b(b))


def _lower_logcdf0(x, b):
    return _lower_logcdf_L(x, _log_of_b(b))


def _cdf0(x, b):
    return _cdf_L(x, _log_of_b(b))


def _logcdf0(x, b):
    return _logcdf_L(x, _log_of_b(b))


def _ppf0(u, b):
    """Closed-form quantile of the untruncated law (median 0)."""
    return _ppf_L(u, _log_of_b(b))


def _pdf0(x, b):
    return _pdf_L(x, _log_of_b(b))


def _bounds(b, q):
    """Support of the truncated law: the untruncated q/2 and 1-q/2 quantiles."""
    q = np.asarray(q, dtype=float)
    return tulap_bounds(_log_of_b(b), q, 1.0 - q)


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

    `tulap` takes ``b`` in [0, 1) and ``q`` in [0, 1) as shape parameters;
    ``loc`` is the median ``m``.  ``b = 0`` is the limit ``epsilon -> inf``,
    where ``G1 = G2 = 0`` and the untruncated law is uniform on [-1/2, 1/2].
    ``Tulap(0, exp(-epsilon), q(epsilon, delta))`` is the canonical noise
    distribution of :math:`f_{\epsilon,\delta}`; build it with
    :func:`tulap_from_privacy`, which keeps ``epsilon`` itself (``b`` rounds
    to 1 for epsilon below ~1e-16 and underflows to 0 above ~745).

    Sampling (a numpy simulation) follows the definition: ``G1 - G2 + U``
    with geometric ``G1, G2`` (drawn as ``floor(E / log(1/b))`` from
    exponentials ``E``) and uniform ``U`` (Awan & Slavkovic 2018, Def. 4.1),
    redrawing those outside the central ``1 - q`` interval when
    ``0 < q <= 1/2``; for ``q > 1/2``, where that acceptance ``1 - q`` can be
    tiny, uniform draws on the support kept with probability ``b**|[z]|``
    (above 1/4).  Releases use the exact sampler of
    :func:`~invariantdp.mechanisms.tulap` with ``secure=True``.

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
            _ShapeInfo("b", False, (0, 1), (True, False)),
            _ShapeInfo("q", False, (0, 1), (True, False)),
        ]

    def _shapes(self, b, q):
        """``(log b, q, 1 - q)``: the parametrisation of the closed forms."""
        return _log_of_b(b), q, 1.0 - q

    def _argcheck(self, b, q):
        # b = 0 is the limit epsilon -> inf: G1 = G2 = 0, N uniform on [-1/2, 1/2]
        return (b >= 0) & (b < 1) & (q >= 0) & (q < 1)

    def _get_support(self, *shapes):
        # scipy asks for the support before it masks invalid shapes (nan there)
        with np.errstate(all="ignore"):
            return tulap_bounds(*self._shapes(*shapes))

    def _pdf(self, x, *shapes):
        log_b, _, qc = self._shapes(*shapes)
        return _pdf_L(x, log_b, qc)

    def _logpdf(self, x, *shapes):
        log_b, _, qc = self._shapes(*shapes)
        with np.errstate(divide="ignore"):
            return _logpdf_L(x, log_b, qc)

    def _cdf(self, x, *shapes):
        return _cdf_L(x, *self._shapes(*shapes))

    def _sf(self, x, *shapes):
        return self._cdf(-x, *shapes)

    def _logcdf(self, x, *shapes):
        return _logcdf_L(x, *self._shapes(*shapes))

    def _logsf(self, x, *shapes):
        return self._logcdf(-x, *shapes)

    def _ppf(self, u, *shapes):
        return _ppf_L(u, *self._shapes(*shapes))

    def _isf(self, u, *shapes):
        return -self._ppf(u, *shapes)

    def _stats(self, *shapes):
        # untruncated variance: 2b/(1-b)^2 (discrete Laplace) + 1/12 (uniform);
        # with truncation scipy integrates the moments numerically.
        log_b, q, _ = self._shapes(*shapes)
        if np.all(q == 0):
            return 0.0, _untruncated_var_L(log_b), 0.0, None
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


def _draw_untruncated(rng, log_b, shape) -> np.ndarray:
    """``G1 - G2 + U`` with ``G = floor(E / log(1/b))``, ``E ~ Exp(1)`` (simulation).

    ``floor(E / lambda)`` is geometric with ``P(G >= k) = exp(-lambda k) = b**k``,
    so this is the defining construction of Tulap with two exponential draws
    (numpy's ziggurat) instead of two slower geometric draws.  ``log_b = -inf``
    (``b = 0``) gives ``G1 = G2 = 0``.
    """
    scale = -1.0 / log_b
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


#: hard cap on the rounds of the rejection samplers; every round accepts with
#: probability >= 1/6, so the cap is only reached for broken parameters
_MAX_ROUNDS = 10_000


def _rejection_cap_error(what: str) -> InvariantDPError:
    return InvariantDPError(
        f"the {what} Tulap sampler rejected {_MAX_ROUNDS} proposals in a row (probability "
        "below 1e-1000 for valid shapes): the shapes (b, q) are outside the supported range."
    )


def draw_tulap(rng, log_b: float, q: float, qc: float, shape) -> np.ndarray:
    """Tulap(0, b, q) draws from a numpy generator (simulation only), ``log_b = log b``.

    For ``q <= 1/2``: untruncated draws, redrawing those outside the central
    ``1 - q`` interval (acceptance ``1 - q >= 1/2``).  For ``q > 1/2`` that
    acceptance can be tiny (``1 - q ~ epsilon / (2 delta)``), so the draw is
    instead uniform on the support ``[-c, c]``, kept with probability
    ``b**|[z]|`` (the density ratio to its maximum): the support lies within
    ``|[z]| <= m`` with ``b**m >= q (1 + b) / 2 > 1/4``, so every round keeps
    more than a quarter of the draws.  Rounds are capped at ``_MAX_ROUNDS``.
    """
    if q <= 0.5:
        out = _draw_untruncated(rng, log_b, shape)
        if q > 0:
            lo, hi = (float(v) for v in tulap_bounds(log_b, q, qc))
            flat = out.reshape(-1)
            bad = np.flatnonzero((flat < lo) | (flat > hi))
            for _ in range(_MAX_ROUNDS):
                if not bad.size:
                    break
                flat[bad] = _draw_untruncated(rng, log_b, (bad.size,))
                bad = bad[(flat[bad] < lo) | (flat[bad] > hi)]
            if bad.size:
                raise _rejection_cap_error("rejection")
        return out
    c = float(tulap_bounds(log_b, q, qc)[1])
    out = np.empty(shape)
    flat = out.reshape(-1)
    todo = np.arange(flat.size)
    for _ in range(_MAX_ROUNDS):
        if not todo.size:
            return out
        z = c * (2.0 * rng.random(todo.size) - 1.0)
        keep = rng.random(todo.size) < np.exp(_jl(np.abs(np.round(z)), log_b))
        flat[todo[keep]] = z[keep]
        todo = todo[~keep]
    raise _rejection_cap_error("uniform-proposal")


def _draw_tulap(rng, b: float, q: float, shape) -> np.ndarray:
    """Tulap(0, b, q) draws from a numpy generator (simulation only); see :func:`draw_tulap`."""
    return draw_tulap(rng, float(_log_of_b(b)), q, 1.0 - q, shape)


tulap = tulap_gen(name="tulap", shapes="b, q")


# ---------------------------------------------------------------------------
# Exact sampling for releases (secure=True): integers and exact arithmetic only
# ---------------------------------------------------------------------------

#: the uniform part is the centre of one of 2**53 cells of width 2**-53 tiling (-1/2, 1/2)
_CELL_BITS = 53


def _exp_neg_bounds(x: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    """Rational bounds ``lo <= exp(-x) <= hi`` for a rational ``x >= 0``.

    The argument is rounded outwards to ``digits + 10`` significant digits
    and the exponential evaluated by :mod:`decimal` at ``digits`` digits,
    which is correctly rounded; the bounds allow 100 units in the last place
    on top.
    """
    if x > 10_000:  # exp(-x) < 10**-4342: far below anything compared with it
        return Fraction(0), Fraction(1, 10**4000)
    num, den = Decimal(-x.numerator), Decimal(x.denominator)
    # -x rounded down and up (operands of decimal operations are used exactly)
    arg_lo = Context(prec=digits + 10, rounding=ROUND_FLOOR).divide(num, den)
    arg_hi = Context(prec=digits + 10, rounding=ROUND_CEILING).divide(num, den)
    ctx = Context(prec=digits, Emin=-(10**6), Emax=10**6)
    slack = 1 + Fraction(1, 10 ** (digits - 3))
    lo = Fraction(ctx.exp(arg_lo)) / slack
    hi = Fraction(ctx.exp(arg_hi)) * slack
    return lo, min(hi, Fraction(1))


def _imul(a, b):
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(p), max(p)


def _idiv_pos(a, d):
    """``a / d`` for an interval ``d`` of positive numbers."""
    return _imul(a, (1 / d[1], 1 / d[0]))


class _ExactTruncation:
    r"""The truncation of ``Tulap(0, exp(-epsilon), q)`` decided in exact arithmetic.

    With ``b = exp(-epsilon)`` the real number (``epsilon``, ``delta`` the
    exact rationals of the doubles given), ``q = 2 delta b / (1 - b + 2 delta b)``
    and the untruncated cdf at the outer edge of cell ``|[z]| = m`` equal to
    ``b**(m+1) / (1 + b)``, the cell is entirely inside the central ``1 - q``
    mass iff ``r(m) = b**m (1 - b + 2 delta b) - delta (1 + b) >= 0``.
    ``r`` decreases in ``m`` and ``r(0) = (1 - delta)(1 - b) > 0``, so the
    boundary cell is ``m_c = min{m : r(m) < 0} >= 1``.  In it, at distance
    ``f`` in [0, 1) from its outer edge, a point is inside iff ``f >= f_c``
    with ``f_c = (delta (1 + b) / (b**(m_c-1) (1 - b + 2 delta b)) - b) / (1 - b)``.

    ``r(m)`` and ``f_c`` are evaluated in interval arithmetic on rational
    bounds of ``b**m`` (:func:`_exp_neg_bounds`), at increasing precision
    until decided.  Neither is ever exactly 0 at a dyadic ``f``: that would
    make ``b``, a transcendental number (Lindemann), a root of a nonzero
    polynomial with rational coefficients (constant term ``-delta``).
    """

    def __init__(self, epsilon: float, delta: float):
        self.eps = Fraction(epsilon)
        self.delta = Fraction(delta)
        # float estimate: r(m) < 0 iff m > A / epsilon - 1 with A = log(2 / (q (1 + b)))
        # = log1p(tanh(epsilon / 2) + expm1(epsilon) / (delta (1 + b))), so m_c ~ A / epsilon
        with np.errstate(over="ignore"):
            ratio = np.expm1(epsilon) / (delta * (1.0 + math.exp(-epsilon)))
        est = math.log1p(math.tanh(epsilon / 2) + float(ratio)) / epsilon
        self.digits0 = 40 + max(0, math.ceil(-math.log10(epsilon)))
        self.m_c = self._find_boundary(int(est) if math.isfinite(est) and est < 2**60 else 1)
        self._fc = {}

    def _b_bounds(self, m: int, digits: int):
        return _exp_neg_bounds(m * self.eps, digits)

    def _c_bounds(self, b):
        """``1 - b + 2 delta b = 1 - (1 - 2 delta) b`` over the interval ``b``."""
        ends = (1 - b[0] * (1 - 2 * self.delta), 1 - b[1] * (1 - 2 * self.delta))
        return min(ends), max(ends)

    def _r_sign(self, m: int) -> int:
        """Sign of ``r(m)``, at increasing precision until decided."""
        d = self.delta
        for level in range(8):
            digits = self.digits0 << level
            b = self._b_bounds(1, digits)
            bm = self._b_bounds(m, digits)
            prod = _imul(bm, self._c_bounds(b))
            r = (prod[0] - d * (1 + b[1]), prod[1] - d * (1 + b[0]))
            if r[0] > 0:
                return 1
            if r[1] < 0:
                return -1
        raise InvariantDPError(
            "the Tulap truncation boundary could not be decided at 5000 digits; "
            f"epsilon={float(self.eps)!r}, delta={float(self.delta)!r}."
        )

    def _find_boundary(self, guess: int) -> int:
        m = max(1, guess)
        for _ in range(1000):  # the float estimate is within a step or two
            if self._r_sign(m) >= 0:
                m += 1
            elif m > 1 and self._r_sign(m - 1) < 0:
                m -= 1
            else:
                return m
        raise InvariantDPError(
            f"the Tulap truncation boundary was not found near m = {guess}; "
            f"epsilon={float(self.eps)!r}, delta={float(self.delta)!r}."
        )

    def fc_bounds(self, level: int) -> tuple[Fraction, Fraction]:
        """Rational bounds on ``f_c`` at precision ``digits0 * 2**level``."""
        if level not in self._fc:
            if level >= 8:
                raise InvariantDPError(
                    "the Tulap truncation boundary could not be resolved at 5000 digits."
                )
            digits = self.digits0 << level
            d = self.delta
            b = self._b_bounds(1, digits)
            bm1 = self._b_bounds(self.m_c - 1, digits)
            w = _idiv_pos((d * (1 + b[0]), d * (1 + b[1])), _imul(bm1, self._c_bounds(b)))
            self._fc[level] = _idiv_pos((w[0] - b[1], w[1] - b[0]), (1 - b[1], 1 - b[0]))
        return self._fc[level]

    def inside(self, cell: int, gen) -> bool:
        """Whether ``f`` in ``[cell, cell + 1) / 2**53`` is ``>= f_c``, refined bit by bit."""
        j, bits, level = cell, _CELL_BITS, 0
        for _ in range(_MAX_ROUNDS):
            lo, hi = self.fc_bounds(level)
            scale = 1 << bits
            if j * hi.denominator >= hi.numerator * scale:  # f >= j / 2**bits >= hi
                return True
            if (j + 1) * lo.denominator <= lo.numerator * scale:  # f < (j+1) / 2**bits <= lo
                return False
            if (hi - lo) * scale < 1:  # the cell is wider than the bounds: refine it
                j, bits = 2 * j + _randbelow(2, gen), bits + 1
            else:
                level += 1
        raise _rejection_cap_error("exact truncation")


_TRUNCATIONS: dict[tuple[float, float], _ExactTruncation] = {}


def _exact_truncation(epsilon: float, delta: float) -> _ExactTruncation:
    """The (cached) exact truncation of ``(epsilon, delta)``: releases repeat their parameters."""
    key = (float(epsilon), float(delta))
    if key not in _TRUNCATIONS:
        if len(_TRUNCATIONS) >= 64:
            _TRUNCATIONS.clear()
        _TRUNCATIONS[key] = _ExactTruncation(*key)
    return _TRUNCATIONS[key]


def draw_tulap_exact(gen, epsilon: float, delta: float, size: int):
    """Exact ``Tulap(0, exp(-epsilon), q(epsilon, delta))`` draws as ``(G, U)``.

    ``G`` is the integer part ``[N]`` (int64) and ``U`` the centre
    ``(j + 1/2) 2**-53 - 1/2`` of the cell of ``(-1/2, 1/2)`` holding the
    uniform part ``N - G``: ``(G, U)`` is a function of the exact Tulap
    draw ``N`` (the cells tile the integers), drawn with uniform integers of
    ``gen`` only (a :class:`~invariantdp.secure.SecureGenerator` for
    releases).  Callers add ``G`` to the integer data first and ``U`` last.

    * ``delta = 0``: ``G ~ Lap_Z(1/epsilon)`` exactly (CKS 2020,
      Algorithm 2), ``j`` uniform on 53 bits.
    * ``delta > 0``, ``1 - q >= 1/2``: the same, rejecting ``|G| > m_c``;
      at ``|G| = m_c`` the uniform part is refined bit by bit until it is
      provably inside or outside the support (:class:`_ExactTruncation`).
    * ``1 - q < 1/2`` (e.g. tiny epsilon): ``G`` proposed uniformly on
      ``{-m_c, ..., m_c}`` and kept with an exact Bernoulli(exp(-epsilon |G|))
      (CKS Algorithm 1), then the same boundary check.  The joint law of
      ``(G, N - G)`` given acceptance is proportional to
      ``b**|G|`` on the support: the truncated Tulap.

    Both loops accept with probability above 1/6 whatever (epsilon, delta)
    (the second because ``b**(m_c - 1) >= q > 1/2``) and are capped at
    ``_MAX_ROUNDS`` trials.  The truncation never depends
    on the data: it is decided on ``(G, N - G)`` alone.

    References
    ----------
    Awan & Slavkovic (2018), Def. 4.1; Canonne, Kamath & Steinke (2020),
    Algorithms 1-2.
    """
    from .discrete import _bernoulli_exp, discrete_laplace_int

    eps = Fraction(epsilon)
    trunc = _exact_truncation(epsilon, delta) if delta > 0 else None
    with np.errstate(over="ignore"):
        em1 = float(np.expm1(epsilon))
    uniform = delta > 0 and em1 < 2.0 * delta  # 1 - q = expm1(eps) / (expm1(eps) + 2 delta) < 1/2
    half = 1 << (_CELL_BITS - 1)
    g_out = np.empty(size, dtype=np.int64)
    j_out = np.empty(size, dtype=np.int64)
    for i in range(size):
        for _ in range(_MAX_ROUNDS):
            if uniform:
                m = trunc.m_c
                g = _randbelow(2 * m + 1, gen) - m
                if not _bernoulli_exp(abs(g) * eps.numerator, eps.denominator, gen):
                    continue
            else:
                g = discrete_laplace_int(eps.denominator, eps.numerator, gen)
            j = _randbelow(1 << _CELL_BITS, gen)
            if trunc is not None and abs(g) >= trunc.m_c:
                if abs(g) > trunc.m_c:
                    continue
                # f: distance from the outer edge of the boundary cell, in cells
                cell = j if g < 0 else (1 << _CELL_BITS) - 1 - j
                if not trunc.inside(cell, gen):
                    continue
            g_out[i], j_out[i] = g, j
            break
        else:
            raise _rejection_cap_error("exact")
    u = ((j_out - half).astype(float) + 0.5) * 2.0**-_CELL_BITS
    return g_out, u


class tulap_privacy_gen(tulap_gen):
    r"""Tulap law given by its privacy parameters: shapes ``epsilon, delta``.

    The canonical noise distribution of :math:`f_{\epsilon,\delta}`, the same
    law as ``tulap(exp(-epsilon), q)`` with
    ``q = 2 delta b / (1 - b + 2 delta b)``, but the closed forms receive
    ``log b = -epsilon`` and ``1 - q`` exactly: it stays accurate where
    ``b`` underflows to 0 (epsilon above ~745, the uniform limit) and where
    ``b`` rounds to 1 (epsilon below ~1e-16, scale ~1/epsilon).  Build it
    with :func:`tulap_from_privacy`.

    Draws invert the closed-form quantile on the lower half with a random
    sign; the lower-tail probability is ``exp(-E) / 2`` with ``E``
    exponential, so neither the far tail nor the centre is limited by the
    2**-53 grid of a uniform draw (a simulation sampler; the mechanisms
    sample exactly).

    References
    ----------
    .. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private
       uniformly most powerful tests for binomial data", NeurIPS 31.
    .. [2] Awan, J. and Dong, J. (2022). "Log-concave and multivariate
       canonical noise distributions for differential privacy", NeurIPS 35.
    """

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [
            _ShapeInfo("epsilon", False, (0, np.inf), (False, True)),
            _ShapeInfo("delta", False, (0, 1), (True, False)),
        ]

    def _shapes(self, epsilon, delta):
        return tulap_privacy_shapes(epsilon, delta)

    def _argcheck(self, epsilon, delta):
        # epsilon = inf is the uniform limit b = 0
        return (epsilon > 0) & (delta >= 0) & (delta < 1)

    def _rvs(self, epsilon, delta, size=None, random_state=None):
        return _draw_by_inversion(random_state, *self._shapes(epsilon, delta), size)


def _draw_by_inversion(rng, log_b, q, qc, size) -> np.ndarray:
    """Tulap draws: a random sign times the lower-half quantile.

    For ``q <= 1/2`` the untruncated lower-tail probability is
    ``p = exp(-E) / 2`` (gap to 1/2: ``-expm1(-E) / 2``), ``E ~ Exp(1)``,
    kept when ``p >= q/2``: at least half the draws are kept each round.
    For ``q > 1/2`` (and for the at most ``2**-64``-rare draws still
    rejected after 64 rounds) ``p = q/2 + V (1 - q)/2``, ``V ~ U[0, 1)``,
    whose resolution is ample because then ``p >= 1/4``.
    """
    shape = () if size is None else tuple(np.atleast_1d(size))
    n = int(np.prod(shape, dtype=np.int64))
    log_b, q, qc = (
        np.broadcast_to(np.asarray(a, dtype=float), shape).reshape(n) for a in (log_b, q, qc)
    )
    e = rng.standard_exponential(n)
    with np.errstate(divide="ignore"):
        limit = -np.log(q)  # p >= q/2 iff E <= -log q
    bad = (q <= 0.5) & (e > limit)
    for _ in range(64):
        if not bad.any():
            break
        e[bad] = rng.standard_exponential(int(bad.sum()))
        bad &= e > limit
    v = rng.random(n)
    use_v = (q > 0.5) | bad
    p = np.where(use_v, 0.5 * q + 0.5 * qc * v, 0.5 * np.exp(-e))
    d = np.where(use_v, 0.5 * qc * (1.0 - v), -0.5 * np.expm1(-e))
    x = _lower_ppf(p, d, log_b)
    x = np.where(rng.random(n) < 0.5, x, -x)
    return x.reshape(shape)


tulap_privacy = tulap_privacy_gen(name="tulap_privacy", shapes="epsilon, delta")


def tulap_params(epsilon, delta=0.0) -> tuple[float, float]:
    r"""Shape parameters ``(b, q)`` of the CND of :math:`f_{\epsilon,\delta}`.

    ``b = exp(-epsilon)`` and ``q = 2 delta b / (1 - b + 2 delta b)``,
    evaluated as ``q = 2 delta / (expm1(epsilon) + 2 delta)`` (no 0/0 as
    epsilon -> 0 or inf).  ``b`` is the double nearest ``exp(-epsilon)``:
    above epsilon ~745 it is 0 (``tulap(0, 0)``, the uniform law, whose cdf
    is the CND's to within 1e-300), and below epsilon ~1e-16 it would be 1,
    which is no Tulap law: that range, and a ``q`` that rounds to 1, are
    refused.  :func:`tulap_from_privacy` keeps ``epsilon`` itself and works
    for every epsilon > 0.

    Raises
    ------
    InvariantDPError
        If ``b`` or ``q`` rounds to 1 in double precision.

    References
    ----------
    Awan & Slavkovic (2018), Def. 4.1 and Thm 4.3; Cho & Awan, Def. 35.

    Examples
    --------
    >>> from invariantdp.distributions import tulap_params
    >>> b, q = tulap_params(1.0, 0.01)
    >>> round(b, 6), round(q, 6)
    (0.367879, 0.011506)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    b = math.exp(-epsilon)
    if b == 1.0:
        raise InvariantDPError(
            f"`epsilon` ({epsilon:.6g}) must be >= {_EPS_MIN_B:.3g} for the Tulap shapes (b, q): "
            "b = exp(-epsilon) rounds to 1 below that. tulap_from_privacy(epsilon, delta) and "
            "the tests accept any epsilon > 0."
        )
    _, q, _ = (float(v) for v in tulap_privacy_shapes(epsilon, delta))
    if q == 1.0:
        raise InvariantDPError(
            f"`delta` ({delta:.6g}) is too large for `epsilon` ({epsilon:.6g}) for the Tulap "
            "shapes (b, q): q = 2 delta / (expm1(epsilon) + 2 delta) rounds to 1, so epsilon "
            "must be >= ~1e-16 * delta. tulap_from_privacy(epsilon, delta) and the tests keep "
            "1 - q exactly."
        )
    return b, q


def tulap_from_privacy(epsilon, delta=0.0, loc=0.0):
    r"""Frozen Tulap law that is the canonical noise of :math:`f_{\epsilon,\delta}`.

    Adding it to a statistic with sensitivity 1 gives an
    (epsilon, delta)-DP release that matches :math:`f_{\epsilon,\delta}`
    exactly (Cho & Awan, Definition 35).  The law is parametrised by
    ``epsilon`` and ``delta`` themselves (:class:`tulap_privacy_gen`), so
    it is accurate for every epsilon > 0: as epsilon -> inf it tends to the
    uniform law on [-1/2, 1/2] and for tiny epsilon its scale is ~1/epsilon.

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
        Of :class:`tulap_privacy_gen`, with ``args == (epsilon, delta)``.

    References
    ----------
    Awan & Slavkovic (2018); Awan & Dong (2022), uniqueness of the CND.

    Examples
    --------
    >>> from invariantdp.distributions import tulap_from_privacy
    >>> N = tulap_from_privacy(1.0)
    >>> round(float(N.cdf(0.0)), 12)
    0.5
    >>> round(float(tulap_from_privacy(1e-20).cdf(1e20)), 5)  # 1 - exp(-1)/2: scale 1/epsilon
    0.81606
    >>> N.rvs(size=3, random_state=0).shape
    (3,)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    loc = check_real("loc", loc)
    if not math.isfinite(loc):
        raise InvariantDPError(f"`loc` ({loc}) must be finite.")
    return tulap_privacy(epsilon, delta, loc=loc)
