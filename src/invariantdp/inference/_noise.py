"""The noise law a DP test assumes: a CND given by privacy parameters or directly."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._validation import InvariantDPError, check_delta, check_epsilon, check_real
from ..distributions import canonical_noise, tulap, tulap_params
from ..distributions._tulap import tulap_gen, tulap_privacy, tulap_privacy_gen
from ..distributions._tulap_forms import (
    log_b_power,
    truncate_logcdf,
    tulap_cell_logcdf,
    tulap_logcdf,
    tulap_ppf,
    tulap_privacy_shapes,
)
from ..privacy import TradeoffFunction
from ._logconcave_sums import log_expectation

__all__ = [
    "TestNoise",
    "check_estimable",
    "resolve_noise",
    "solve_monotone",
    "tulap_noise",
    "tulap_noise_from_privacy",
    "tulap_noise_from_release",
]


def solve_monotone(g, increasing: bool, *, limit: float = np.inf, xtol: float = 1e-12) -> float:
    """Root of a monotone function ``g`` on the real line, or an infinite end.

    ``g`` must accept ``-inf`` and ``inf`` (its limits).  When ``g`` does not
    change sign the root is the end where ``g`` would cross (``-inf`` or
    ``inf``).  The bracket grows by doubling from ``[-1, 1]`` up to ``limit``.
    """
    sign = 1.0 if increasing else -1.0
    if g(-sign * np.inf) >= 0.0:
        return -sign * np.inf
    if g(sign * np.inf) <= 0.0:
        return sign * np.inf
    lo, hi = -1.0, 1.0
    g_lo, g_hi = g(lo), g(hi)
    while sign * g_lo > 0.0 and lo > -limit:
        lo = max(2.0 * lo, -limit)
        g_lo = g(lo)
    while sign * g_hi < 0.0 and hi < limit:
        hi = min(2.0 * hi, limit)
        g_hi = g(hi)
    if np.sign(g_lo) == np.sign(g_hi):  # crossing beyond the limit
        return lo if sign * g_lo > 0.0 else hi
    return optimize.brentq(g, lo, hi, xtol=xtol, rtol=xtol)


#: the median-unbiased estimate needs the p-value to vary at least this much
_MIN_PVALUE_RANGE = 1e-6


def check_estimable(p_low: float, p_high: float, noise: TestNoise) -> None:
    """Refuse a median-unbiased estimate the p-value cannot resolve.

    ``p_low``, ``p_high`` are the "greater" p-values at the two ends of the
    parameter space.  For tiny epsilon both are ~1/2 and differ by ~epsilon
    times the range of the statistic; below 1e-6 the crossing of 1/2 is lost
    in the rounding of p-values near 1/2 and no estimate is returned.  (Ends
    both clearly above or below 1/2 give the estimate 0 or inf.)
    """
    spread = abs(p_high - p_low)
    near_half = (
        min(p_low, p_high) - _MIN_PVALUE_RANGE <= 0.5 <= max(p_low, p_high) + _MIN_PVALUE_RANGE
    )
    if near_half and not spread >= _MIN_PVALUE_RANGE:
        raise InvariantDPError(
            f"the p-value varies by only {spread:.2g} over the whole parameter space with "
            f"{noise.description} noise: the median-unbiased estimate (where it crosses 1/2) "
            "is not resolvable in double precision at this privacy level."
        )


#: the test function is summed exactly where F is above exp(-_CUT_LOG) and below 1 minus it
_CUT_LOG = 70.0


@dataclass(frozen=True)
class TestNoise:
    """A symmetric continuous noise law ``F`` with fast ``logcdf``.

    Tulap noise (the CND of f_{eps,delta}) is held as ``log_b``, ``q`` and
    ``qc = 1 - q``, the parametrisation of the closed forms in
    :mod:`invariantdp.distributions._tulap_forms`: ``log_b = -epsilon`` is exact for
    every epsilon, where ``b`` underflows to 0 (epsilon > ~745) or rounds to 1
    (epsilon < ~1e-16), and ``qc`` keeps its precision when ``q`` rounds to
    1.  ``b`` and ``q`` are kept for display.  Other laws go through their
    own ``logcdf``.
    """

    __test__ = False  # not a pytest test class despite its name

    _dist: object
    description: str
    epsilon: float | None = None
    delta: float | None = None
    b: float | None = None
    q: float | None = None
    log_b: float | None = None
    qc: float | None = None

    @property
    def is_tulap(self) -> bool:
        return self.log_b is not None

    @property
    def dist(self):
        """The frozen distribution (built on first use: freezing costs ~1 ms)."""
        if self._dist is None:
            if self.epsilon is not None and self.log_b == -self.epsilon:
                law = tulap_privacy(self.epsilon, self.delta)
            else:
                law = tulap(self.b, self.q)
            object.__setattr__(self, "_dist", law)
        return self._dist

    def logcdf(self, x):
        x = np.asarray(x, dtype=float)
        if self.is_tulap:
            return tulap_logcdf(x, self.log_b, self.q, self.qc)
        return np.asarray(self.dist.logcdf(x), dtype=float)

    def _lattice_parts(self, h: np.ndarray, u: float, sign: float):
        """Split ``x = sign * (h - u)`` into its lower-half prefix/suffix.

        For Tulap the fractional part of ``h - u`` is the same for every
        integer ``h``, so the cdf is ``exp(-k log b + c)`` on the lower half
        and ``1 - exp(k log b + c')`` on the upper: no rounding per point.
        Returns ``(k, lower_slice, upper_slice, c_left, c_right)``.
        """
        d0 = sign * (float(h[0]) - u)
        k0 = np.round(d0)
        frac = d0 - k0
        k = (h - h[0]).astype(float)
        k *= sign
        k += k0
        # log F(frac) and log F(-frac) in the central cell: log(1 - F) of the upper half
        c_left = tulap_cell_logcdf(frac, self.log_b)
        c_right = tulap_cell_logcdf(-frac, self.log_b)
        # k is monotone in h, so the lower half (x <= 0) is a prefix or a suffix
        n_low = int(np.count_nonzero((k < 0) | ((k == 0) & (frac <= 0))))
        if sign > 0:
            low, high = slice(0, n_low), slice(n_low, k.size)
        else:
            low, high = slice(k.size - n_low, k.size), slice(0, k.size - n_low)
        return k, low, high, c_left, c_right

    def _k_log_b(self, k: np.ndarray) -> np.ndarray:
        """``|k| log b`` with ``b**0 = 1`` also at ``b = 0``."""
        return log_b_power(np.abs(k), self.log_b)

    def logcdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``log F(sign * (h - u))`` for integers ``h`` (any order for non-Tulap)."""
        if not self.is_tulap or h.size == 0 or self.q > 0.5:
            # q > 1/2 needs the centred form of the truncated cdf (see tulap_forms.py)
            return self.logcdf(sign * (h - u))
        if h.size > 1 and np.any(np.diff(h) <= 0):
            return self.logcdf(sign * (h - u))
        k, low, high, c_left, c_right = self._lattice_parts(h, u, sign)
        out = np.empty(k.size)
        out[low] = self._k_log_b(k[low]) + c_left
        with np.errstate(divide="ignore"):
            out[high] = np.log1p(-np.exp(np.minimum(self._k_log_b(k[high]) + c_right, 0.0)))
        if self.q > 0:
            # the direct form on both halves (q <= 1/2 here); the truncated cdf is 1 above
            # the support
            out = np.minimum(truncate_logcdf(out, self.q, self.qc), 0.0)
        return out

    def cdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``F(sign * (h - u))`` for increasing integers ``h`` (linear scale)."""
        if not self.is_tulap or self.q > 0 or h.size < 2 or np.any(np.diff(h) <= 0):
            return np.exp(self.logcdf_lattice(h, u, sign))
        if self.log_b > -np.inf and h[-1] - h[0] == h.size - 1:
            return self._cdf_run(h, u, sign)
        k, low, high, c_left, c_right = self._lattice_parts(h, u, sign)
        out = np.empty(k.size)
        np.exp(self._k_log_b(k[low]) + c_left, out=out[low])
        np.exp(self._k_log_b(k[high]) + c_right, out=out[high])
        np.subtract(1.0, out[high], out=out[high])
        return out

    def _cdf_run(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """:meth:`cdf_lattice` (q = 0, b > 0) on consecutive integers, scalars in ``math``.

        The same closed forms as :meth:`_lattice_parts`: ``x = sign (h - u)`` is
        ``k + frac`` with one ``frac`` for all; ``F = b**|k| F(frac)`` below 0
        and ``1 - b**|k| F(-frac)`` above.
        """
        log_b = self.log_b
        d0 = sign * (float(h[0]) - u)
        k0 = float(round(d0))
        frac = d0 - k0
        b = math.exp(log_b)
        one_minus_b = -math.expm1(log_b)

        def cell(f: float) -> float:  # tulap_cell_logcdf for a scalar
            t = f + 0.5
            return (math.log(b + t * one_minus_b) if t > 0 else log_b) - math.log1p(b)

        # k = sign * (h - h0) + k0 is monotone; the lower half has k < 0 or k = 0, frac <= 0
        j = np.arange(h.size, dtype=float)
        k = j * sign + k0
        n_low = int(np.count_nonzero((k < 0) | ((k == 0) & (frac <= 0))))
        if sign > 0:
            low, high = slice(0, n_low), slice(n_low, k.size)
        else:
            low, high = slice(k.size - n_low, k.size), slice(0, k.size - n_low)
        np.abs(k, out=k)
        k *= log_b  # |k| log b, with b**0 = 1 (b > 0 here)
        out = np.empty(k.size)
        np.exp(k[low] + cell(frac), out=out[low])
        np.exp(k[high] + cell(-frac), out=out[high])
        np.subtract(1.0, out[high], out=out[high])
        return out

    def log_tail(self, dist, u: float, side: str) -> float:
        """``log E F(H - u)`` ("greater") or ``log E F(u - H)`` ("less"), ``H ~ dist``.

        The p-value of the DP tests (Cho & Awan Eq. 6; Awan & Slavkovic 2018)
        as an expectation over a log-concave lattice law (see ``_lattice``).
        """
        sign = 1.0 if side == "greater" else -1.0
        return log_expectation(
            dist,
            lambda h: self.logcdf_lattice(h, u, sign),
            lambda h: self.cdf_lattice(h, u, sign),
            self._cut(u, sign),
        )

    def _cut(self, u: float, sign: float):
        """Where ``F(sign * (h - u))`` is within ``F(-L)`` of 0 or 1 (``|h - u| >= L``).

        For Tulap ``F(-L) <= b**(L - 1/2)``: with ``L`` about ``_CUT_LOG / epsilon``
        the test function needs evaluating on ``2 L`` points only (see
        ``_lattice._cut_sum``).  None for other laws.
        """
        if not self.is_tulap or not self.log_b < 0.0:
            return None
        half = min(_CUT_LOG / -self.log_b, 1e15) + 1.0
        # F(-x) <= b**(x - 1/2) for x >= 0, also truncated (there F <= 1/2)
        f_edge = math.exp(self.log_b * (half - 0.5))
        return u - half, u + half, sign > 0, f_edge

    def log_point_tail(self, h: float, u: float, side: str) -> float:
        """:meth:`log_tail` for a law that puts all its mass on ``h``."""
        x = h - u if side == "greater" else u - h
        return float(self.logcdf(np.array([x]))[0])

    def cdf(self, x):
        return np.exp(self.logcdf(x))

    def ppf(self, u):
        if self.is_tulap:
            return tulap_ppf(np.asarray(u, dtype=float), self.log_b, self.q, self.qc)
        return np.asarray(self.dist.ppf(u), dtype=float)


def _fmt_tulap(b: float, q: float, qc: float, epsilon: float | None) -> str:
    """``Tulap(b=..., q=...)``, with ``b = exp(-epsilon)`` where b is 0 or 1 to 6 digits."""
    if epsilon is not None and not 1e-6 <= epsilon <= 700.0:
        b_text = f"exp(-{epsilon:.6g})"
    else:
        b_text = f"{b:.6g}"
    q_text = f"{q:.6g}" if q <= 0.5 else f"1-{qc:.6g}"
    return f"Tulap(b={b_text}, q={q_text})"


def tulap_noise(b: float, q: float, epsilon=None, delta=None) -> TestNoise:
    """Tulap noise from its shapes ``(b, q)``, ``0 <= b < 1``, ``0 <= q < 1``.

    ``epsilon``/``delta``, when given, are only reported.
    """
    b = check_real("b", b)
    q = check_real("q", q)
    if not 0.0 <= b < 1.0:
        raise InvariantDPError(f"Tulap `b` ({b}) must be in [0, 1).")
    if not 0.0 <= q < 1.0:
        raise InvariantDPError(f"Tulap `q` ({q}) must be in [0, 1).")
    with np.errstate(divide="ignore"):
        log_b = float(np.log(b))
    desc = _fmt_tulap(b, q, 1.0 - q, None)
    return TestNoise(None, desc, epsilon, delta, b, q, log_b, 1.0 - q)


def tulap_noise_from_privacy(epsilon: float, delta: float) -> TestNoise:
    """Tulap noise of f_{epsilon,delta} with ``log b = -epsilon`` exact (checked arguments)."""
    log_b, q, qc = (float(v) for v in tulap_privacy_shapes(epsilon, delta))
    b = float(np.exp(log_b))
    return TestNoise(None, _fmt_tulap(b, q, qc, epsilon), epsilon, delta, b, q, log_b, qc)


def tulap_noise_from_release(params: dict, guarantee: dict) -> TestNoise:
    """Tulap noise recorded in a Release: its ``(b, q)``, exact from epsilon when they agree.

    A release made by the Tulap mechanism records ``(b, q) = tulap_params(epsilon,
    delta)`` (per coordinate: ``epsilon_per_coordinate`` and ``delta_per_coordinate``
    when recorded); then ``log b = -epsilon`` is used (exact also where ``b``
    underflowed to 0).  Any other ``(b, q)`` is taken as the noise law as recorded.
    """
    scale = params.get("scale", 1.0)
    if scale != 1.0:
        raise InvariantDPError(
            f"the Release's Tulap noise has `scale` ({scale!r}); the test needs scale 1 "
            "(a statistic of sensitivity 1)."
        )
    b, q = params["b"], params["q"]
    # the noise's own (epsilon, delta): per coordinate, before composition and the run time
    eps = guarantee.get("epsilon_per_coordinate", guarantee.get("epsilon"))
    delta = guarantee.get("delta_per_coordinate", guarantee.get("delta", 0.0))
    if eps is not None:
        try:
            eps, delta = check_epsilon(eps), check_delta(delta)
            exact = tulap_params(eps, delta) == (b, q)
        except (InvariantDPError, TypeError):
            exact = False
        if exact:
            return tulap_noise_from_privacy(eps, delta)
    return tulap_noise(b, q, eps, delta)


#: Tulap noise laws by (type, epsilon, type, delta) for plain Python numbers, which
#: validate the same way every time (a TestNoise is immutable)
_PRIVACY_NOISE: dict = {}
_PLAIN = (float, int)


def resolve_noise(epsilon, delta, noise) -> TestNoise:
    """Turn ``epsilon``/``delta`` or an explicit ``noise`` into a :class:`TestNoise`.

    ``noise`` may be a frozen Tulap (``tulap(b, q)`` or
    ``tulap_from_privacy(epsilon, delta)``), any frozen scipy continuous
    distribution symmetric about 0 (used as the CND), or a
    :class:`~invariantdp.privacy.TradeoffFunction` whose CND is built by
    Lemma 36.
    """
    if noise is None:
        if epsilon is None:
            raise InvariantDPError("give `epsilon` (and `delta`), a `noise` law, or a Release.")
        key = (type(epsilon), epsilon, type(delta), delta)
        cached = _PRIVACY_NOISE.get(key) if key[0] in _PLAIN and key[2] in _PLAIN else None
        if cached is not None:
            return cached
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        out = tulap_noise_from_privacy(epsilon, delta)
        if key[0] in _PLAIN and key[2] in _PLAIN:
            if len(_PRIVACY_NOISE) >= 256:
                _PRIVACY_NOISE.clear()
            _PRIVACY_NOISE[key] = out
        return out
    if epsilon is not None:
        raise InvariantDPError("give either `epsilon`/`delta` or `noise`, not both.")
    if isinstance(noise, TestNoise):
        return noise
    if isinstance(noise, TradeoffFunction):
        dist = canonical_noise(noise)
        return TestNoise(dist, f"CND of {noise!r}")
    dist_obj = getattr(noise, "dist", None)
    if isinstance(dist_obj, tulap_gen):
        shapes, loc, scale = dist_obj._parse_args(*noise.args, **noise.kwds)
        if loc != 0.0 or scale != 1.0:
            raise InvariantDPError(
                f"`noise` must be a Tulap with loc=0 and scale=1 (the statistic's sensitivity "
                f"is 1), got loc={loc!r}, scale={scale!r}."
            )
        if isinstance(dist_obj, tulap_privacy_gen):
            eps, dlt = check_epsilon(shapes[0]), check_delta(shapes[1])
            return tulap_noise_from_privacy(eps, dlt)
        return tulap_noise(*shapes)
    if not (hasattr(noise, "logcdf") and hasattr(noise, "ppf")):
        raise TypeError(
            "`noise` must be a frozen scipy.stats distribution or a TradeoffFunction, "
            f"got {type(noise).__name__}."
        )
    med = float(noise.ppf(0.5))
    if abs(med) > 1e-8:
        raise InvariantDPError(f"`noise` must be symmetric about 0, but its median is {med:g}.")
    return TestNoise(noise, f"{getattr(getattr(noise, 'dist', None), 'name', 'custom')} noise")


#: a released statistic this improbable given its support is most likely a wrong input
FAR_LOG_PROBABILITY = math.log(1e-12)


def warn_if_impossible(u: float, low: float, high: float, noise: TestNoise, what: str) -> None:
    """Warn when the released ``u`` lies where the noise almost surely cannot take it.

    ``[low, high]`` is the support of the confidential statistic; the noise
    would have to exceed the distance to it, which has probability below
    1e-12 (``noise.logcdf`` of minus the distance: the noise is symmetric).
    The test's answer is then p = 0 or 1 and an infinite interval, exactly as
    the model says, but a wrong input (a count on another scale, the
    confidential value of another table) is the likelier explanation.
    """
    gap = max(low - u, u - high, 0.0)
    if gap > 0 and float(noise.logcdf(-gap)) < FAR_LOG_PROBABILITY:
        side = "below the smallest" if u < low else "above the largest"
        warnings.warn(
            f"the released statistic ({u:.6g}) is {gap:.6g} {side} possible {what} "
            f"([{low:g}, {high:g}]); noise that large has probability below 1e-12, so check "
            "the statistic and its margins or n: the test answers as if it were possible.",
            UserWarning,
            stacklevel=3,
        )
