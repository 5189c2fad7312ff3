"""The noise law a DP test assumes: a CND given by privacy parameters or directly."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._validation import InvariantDPError, check_delta, check_epsilon
from ..distributions import canonical_noise, tulap, tulap_params
from ..privacy.tradeoff import TradeoffFunction
from ._lattice import log_expectation

__all__ = ["TestNoise", "resolve_noise", "solve_monotone"]


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


@dataclass(frozen=True)
class TestNoise:
    """A symmetric continuous noise law ``F`` with fast ``logcdf``.

    ``b`` and ``q`` are set for Tulap noise (the CND of f_{eps,delta}); other
    laws go through their own ``logcdf``.
    """

    __test__ = False  # not a pytest test class despite its name

    _dist: object
    description: str
    epsilon: float | None = None
    delta: float | None = None
    b: float | None = None
    q: float | None = None

    @property
    def dist(self):
        """The frozen distribution (built on first use: freezing costs ~1 ms)."""
        if self._dist is None:
            object.__setattr__(self, "_dist", tulap(self.b, self.q))
        return self._dist

    def logcdf(self, x):
        x = np.asarray(x, dtype=float)
        if self.b is not None:
            return tulap._logcdf(x, self.b, self.q) if self.q > 0 else _tulap_logcdf0(x, self.b)
        return np.asarray(self.dist.logcdf(x), dtype=float)

    def _lattice_parts(self, h: np.ndarray, u: float, sign: float):
        """Split ``x = sign * (h - u)`` into its lower-half prefix/suffix.

        For Tulap the fractional part of ``h - u`` is the same for every
        integer ``h``, so the cdf is ``exp(-k log b + c)`` on the lower half
        and ``1 - exp(k log b + c')`` on the upper: no rounding per point.
        Returns ``(k, lower_slice, upper_slice, c_left, c_right)``.
        """
        b = self.b
        d0 = sign * (float(h[0]) - u)
        k0 = np.round(d0)
        frac = d0 - k0
        k = (h - h[0]).astype(float)
        k *= sign
        k += k0
        log1p_b = np.log1p(b)
        c_left = np.log(b + (frac + 0.5) * (1.0 - b)) - log1p_b
        c_right = np.log(b + (0.5 - frac) * (1.0 - b)) - log1p_b
        # k is monotone in h, so the lower half (x <= 0) is a prefix or a suffix
        n_low = int(np.count_nonzero((k < 0) | ((k == 0) & (frac <= 0))))
        if sign > 0:
            low, high = slice(0, n_low), slice(n_low, k.size)
        else:
            low, high = slice(k.size - n_low, k.size), slice(0, k.size - n_low)
        return k, low, high, c_left, c_right

    def _truncate_log(self, out: np.ndarray) -> np.ndarray:
        q = self.q
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            ratio = (q / 2.0) * np.exp(-out)
            out = out + np.log1p(-np.minimum(ratio, 1.0)) - np.log1p(-q)
        return np.minimum(out, 0.0)  # the truncated cdf is 1 above the support

    def logcdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``log F(sign * (h - u))`` for integers ``h`` (any order for non-Tulap)."""
        if self.b is None or h.size == 0:
            return self.logcdf(sign * (h - u))
        if h.size > 1 and np.any(np.diff(h) <= 0):
            return self.logcdf(sign * (h - u))
        k, low, high, c_left, c_right = self._lattice_parts(h, u, sign)
        log_b = np.log(self.b)
        out = np.empty(k.size)
        out[low] = -log_b * k[low] + c_left
        with np.errstate(divide="ignore"):
            out[high] = np.log1p(-np.exp(np.minimum(log_b * k[high] + c_right, 0.0)))
        return self._truncate_log(out) if self.q > 0 else out

    def cdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``F(sign * (h - u))`` for increasing integers ``h`` (linear scale)."""
        if self.b is None or self.q > 0 or h.size < 2 or np.any(np.diff(h) <= 0):
            return np.exp(self.logcdf_lattice(h, u, sign))
        k, low, high, c_left, c_right = self._lattice_parts(h, u, sign)
        log_b = np.log(self.b)
        out = np.empty(k.size)
        np.exp(-log_b * k[low] + c_left, out=out[low])
        np.exp(log_b * k[high] + c_right, out=out[high])
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
        )

    def log_point_tail(self, h: float, u: float, side: str) -> float:
        """:meth:`log_tail` for a law that puts all its mass on ``h``."""
        x = h - u if side == "greater" else u - h
        return float(self.logcdf(np.array([x]))[0])

    def cdf(self, x):
        return np.exp(self.logcdf(x))

    def ppf(self, u):
        if self.b is not None:
            from ..distributions.tulap import _ppf0

            return _ppf0(self.q / 2.0 + np.asarray(u, dtype=float) * (1.0 - self.q), self.b)
        return np.asarray(self.dist.ppf(u), dtype=float)


def _tulap_logcdf0(x, b):
    from ..distributions.tulap import _logcdf0

    return _logcdf0(x, b)


def tulap_noise(b: float, q: float, epsilon=None, delta=None) -> TestNoise:
    desc = f"Tulap(b={b:.6g}, q={q:.6g})"
    return TestNoise(None, desc, epsilon, delta, float(b), float(q))


def resolve_noise(epsilon, delta, noise) -> TestNoise:
    """Turn ``epsilon``/``delta`` or an explicit ``noise`` into a :class:`TestNoise`.

    ``noise`` may be a frozen Tulap (``tulap(b, q)``), any frozen scipy
    continuous distribution symmetric about 0 (used as the CND), or a
    :class:`~invariantdp.privacy.TradeoffFunction` whose CND is built by
    Lemma 36.
    """
    if noise is None:
        if epsilon is None:
            raise InvariantDPError("give `epsilon` (and `delta`), a `noise` law, or a Release.")
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        b, q = tulap_params(epsilon, delta)
        return tulap_noise(b, q, epsilon, delta)
    if epsilon is not None:
        raise InvariantDPError("give either `epsilon`/`delta` or `noise`, not both.")
    if isinstance(noise, TestNoise):
        return noise
    if isinstance(noise, TradeoffFunction):
        dist = canonical_noise(noise)
        return TestNoise(dist, f"CND of {noise!r}")
    dist_obj = getattr(noise, "dist", None)
    if dist_obj is not None and getattr(dist_obj, "name", "") == "tulap":
        b, q = (float(v) for v in noise.args)
        if noise.kwds.get("loc", 0.0) != 0.0 or noise.kwds.get("scale", 1.0) != 1.0:
            raise InvariantDPError(
                f"`noise` must be a Tulap with loc=0 and scale=1 (the statistic's sensitivity "
                f"is 1), got {noise.kwds}."
            )
        return tulap_noise(b, q)
    if not (hasattr(noise, "logcdf") and hasattr(noise, "ppf")):
        raise TypeError(
            "`noise` must be a frozen scipy.stats distribution or a TradeoffFunction, "
            f"got {type(noise).__name__}."
        )
    med = float(noise.ppf(0.5))
    if abs(med) > 1e-8:
        raise InvariantDPError(f"`noise` must be symmetric about 0, but its median is {med:g}.")
    return TestNoise(noise, f"{getattr(getattr(noise, 'dist', None), 'name', 'custom')} noise")
