"""Expectations under log-concave lattice laws, computed on a window.

The p-values of the DP tests are expectations ``E g(H)`` of a smooth test
function under a binomial or (noncentral) hypergeometric law whose support
can hold 10^8 points.  Both laws are log-concave, so their mass (and that of
``pmf * g`` for a log-concave ``g``) sits in a window a few standard
deviations wide around the peak.  The window is grown until the tail bound
``pmf(end) / (1 - ratio(end))`` is below ``exp(-_TAIL_LOG)`` of the peak, so
truncation never changes a result by more than about 1e-17 relatively.
Inside a window the log pmf is accumulated from the ratio
``pmf(h + 1) / pmf(h)``, which is exact to a few ulps per step.
"""

from __future__ import annotations

import abc
import math

import numpy as np
from scipy import special

__all__ = [
    "Binomial",
    "FisherNoncentralHypergeometric",
    "continuous_mode",
    "log_expectation",
    "tulap_log_p_bound",
]

_TAIL_LOG = 40.0  # neglect mass below exp(-40) ~ 4e-18 of the peak
_FULL = 4096  # supports this small are summed in full


class _Lattice(abc.ABC):
    """A log-concave law on the integers ``lo..hi``."""

    lo: int
    hi: int

    @abc.abstractmethod
    def ratio(self, h: np.ndarray) -> np.ndarray:
        """``pmf(h + 1) / pmf(h)``."""

    def log_ratio(self, h: np.ndarray) -> np.ndarray:
        """``log pmf(h + 1) - log pmf(h)``."""
        return np.log(self.ratio(h))

    @abc.abstractmethod
    def logpmf_abs(self, h: np.ndarray) -> np.ndarray:
        """Unnormalised log pmf with a fixed constant, comparable across windows."""

    @abc.abstractmethod
    def mode(self) -> int:
        """A mode of the law."""

    @abc.abstractmethod
    def sd(self) -> float:
        """Standard deviation, or the normal approximation to it at the mode."""

    def window_logpmf(self, start: int, stop: int, anchor: float | None = None):
        """Unnormalised log pmf on ``start..stop`` (inclusive) by recurrence."""
        h = np.arange(start, stop + 1, dtype=np.int64)
        lp = np.empty(h.size)
        lp[0] = 0.0 if anchor is None else anchor
        if h.size > 1:
            np.cumsum(self.log_ratio(h[:-1]), out=lp[1:])
            lp[1:] += lp[0]
        return h, lp


class FisherNoncentralHypergeometric(_Lattice):
    """Law of ``x11`` given the margins of a 2 x 2 table and the odds ratio.

    ``P(H = h) ∝ C(t1, h) C(t2, c1 - h) w**h`` on
    ``max(0, c1 - t2) <= h <= min(t1, c1)`` (Cho & Awan, Sec. 5.3).
    """

    def __init__(self, t1: int, t2: int, c1: int, log_w: float):
        self.t1, self.t2, self.c1 = int(t1), int(t2), int(c1)
        self.log_w = float(log_w)
        self.lo = max(0, self.c1 - self.t2)
        self.hi = min(self.t1, self.c1)
        self._w = math.exp(min(max(self.log_w, -700.0), 700.0))
        self._mode = None

    def ratio(self, h):
        h = np.asarray(h, dtype=float)
        t1, t2, c1 = self.t1, self.t2, self.c1
        # in place, in the order of ((t1 - h) (c1 - h)) / ((h + 1) (t2 - c1 + h + 1)) w
        num = t1 - h
        num *= c1 - h
        den = h + 1.0
        den *= h + float(t2 - c1 + 1)
        num /= den
        num *= self._w
        return num

    def logpmf_abs(self, h):
        h = np.asarray(h, dtype=float)
        t1, t2, c1 = self.t1, self.t2, self.c1
        return (
            -special.gammaln(h + 1)
            - special.gammaln(t1 - h + 1)
            - special.gammaln(c1 - h + 1)
            - special.gammaln(t2 - c1 + h + 1)
            + h * self.log_w
        )

    def mode(self) -> int:
        if self._mode is None:
            self._mode = self._find_mode()
        return self._mode

    def _find_mode(self) -> int:
        if self.lo == self.hi:
            return self.lo
        h = continuous_mode(self.t1, self.t2, self.c1, self.log_w)
        if not math.isfinite(h):
            h = self.hi if self.log_w > 0 else self.lo
        return int(min(max(round(h), self.lo), self.hi))

    def sd(self) -> float:
        h = float(self.mode())
        t1, t2, c1 = self.t1, self.t2, self.c1
        parts = [h, t1 - h, c1 - h, t2 - c1 + h]
        inv = sum(1.0 / max(p, 0.5) for p in parts)
        return float(np.sqrt(1.0 / inv))


class Binomial(_Lattice):
    """Binomial(n, p) on ``0..n``, with ``0 < p < 1``."""

    def __init__(self, n: int, p: float):
        self.n = int(n)
        self.p = float(p)
        self.lo, self.hi = 0, self.n
        self._logit = float(np.log(p) - np.log1p(-p))
        self._odds = float(np.exp(self._logit))

    def ratio(self, k):
        k = k.astype(float)
        return (self.n - k) / (k + 1.0) * self._odds

    def logpmf_abs(self, k):
        k = np.asarray(k, dtype=float)
        return -special.gammaln(k + 1) - special.gammaln(self.n - k + 1) + k * self._logit

    def mode(self) -> int:
        return int(np.clip(np.floor((self.n + 1) * self.p), 0, self.n))

    def sd(self) -> float:
        return float(np.sqrt(self.n * self.p * (1.0 - self.p)))


def _logsumexp(x: np.ndarray) -> float:
    """log(sum(exp(x))) for a 1-d array (scipy's version costs ~0.3 ms a call)."""
    m = float(np.max(x))
    if not np.isfinite(m):
        return m
    return m + float(np.log(np.sum(np.exp(x - m))))


def _tail_ok(lp_end: float, lp_inner: float, peak: float) -> bool:
    """Whether the mass beyond a window end is negligible next to the peak.

    For a log-concave sequence the terms beyond ``end`` are bounded by a
    geometric series with ratio ``exp(lp_end - lp_inner)``.  A zero at the
    end stays zero beyond it, because the test functions are monotone.
    """
    if lp_end == -np.inf:
        return True
    step = lp_end - lp_inner
    if not step < 0.0:
        return False
    return lp_end - np.log1p(-np.exp(step)) < peak - _TAIL_LOG


def _grow(dist: _Lattice, logf, center: int, half: int, absolute: bool):
    """Window around ``center`` covering the mass of ``pmf * exp(logf)``.

    Returns the log of the (unnormalised) sum.  With ``absolute`` the log pmf
    is anchored on ``logpmf_abs`` so that sums from two windows compare.
    """
    while True:
        start = max(dist.lo, center - half)
        stop = min(dist.hi, center + half)
        anchor = float(dist.logpmf_abs(np.array([start]))[0]) if absolute else None
        h, lp = dist.window_logpmf(start, stop, anchor)
        lg = lp if logf is None else lp + logf(h)
        peak = float(np.max(lg))
        if not np.isfinite(peak):
            return -np.inf
        left_ok = start == dist.lo or (lg.size > 1 and _tail_ok(lg[0], lg[1], peak))
        right_ok = stop == dist.hi or (lg.size > 1 and _tail_ok(lg[-1], lg[-2], peak))
        if left_ok and right_ok:
            return float(_logsumexp(lg))
        half *= 2


#: longest window summed by recurrence in one piece (beyond it two windows are
#: anchored on ``logpmf_abs``, whose log-gamma values at 1e8 carry ~1e-8 of rounding)
_MAX_SPAN = 2**21


def _grow_span(dist: _Lattice, logf, a: int, b: int, half: int) -> float | None:
    """``log E exp(logf(H))`` on one window around ``a..b`` (the mode and the peak).

    Numerator and denominator share the recurrence, so no absolute anchor
    enters.  None when the window would exceed ``_MAX_SPAN`` points.
    """
    while True:
        start, stop = max(dist.lo, a - half), min(dist.hi, b + half)
        if stop - start > _MAX_SPAN:
            return None
        h, lp = dist.window_logpmf(start, stop)
        lg = lp + logf(h)
        peak_p, peak_g = float(np.max(lp)), float(np.max(lg))
        if not np.isfinite(peak_g):
            return -np.inf
        ok = True
        for i, j in ((0, 1), (-1, -2)):
            edge = h[i] in (dist.lo, dist.hi)
            ok = ok and (
                edge or (_tail_ok(lp[i], lp[j], peak_p) and _tail_ok(lg[i], lg[j], peak_g))
            )
        if ok:
            return float(_logsumexp(lg) - _logsumexp(lp))
        half *= 2


def _peak(dist: _Lattice, logf) -> int | None:
    """Argmax of ``logpmf + logf`` by successively finer grids (log-concave).

    Returns None when the integrand is zero on the whole support.
    """

    def score(g):
        return dist.logpmf_abs(g) + (0.0 if logf is None else logf(g))

    a, b = dist.lo, dist.hi
    while True:
        fine = b - a <= 256
        g = (
            np.arange(a, b + 1, dtype=np.int64)
            if fine
            else np.unique(np.rint(np.linspace(a, b, 129)).astype(np.int64))
        )
        vals = score(g)
        if np.any(np.isfinite(vals)):
            i = int(np.argmax(vals))
        else:
            # a monotone test function that is zero on the grid is non-zero
            # (if anywhere) only beyond one of its ends
            ends = score(np.array([a, b], dtype=np.int64))
            if not np.any(np.isfinite(ends)):
                return None
            i = 0 if ends[0] > ends[1] else g.size - 1
        if fine:
            return int(g[i])
        a, b = int(g[max(i - 1, 0)]), int(g[min(i + 1, g.size - 1)])


_LINEAR_TAIL = float(np.exp(-_TAIL_LOG))


def _linear_tail_ok(end: float, inner: float, peak: float) -> bool:
    """:func:`_tail_ok` on the linear scale."""
    if end == 0.0:
        return True
    if not end < inner:
        return False
    return end / (1.0 - end / inner) < peak * _LINEAR_TAIL


def _cut_sum(w: np.ndarray, w_sum: float, h: np.ndarray, f, cut) -> float | None:
    """``sum(w * f(h))`` for a step-like ``f``, evaluated only where it is not 0 or 1.

    ``cut = (a, b, increasing, f_edge)``: ``f`` rises (``increasing``) or falls
    from at most ``f_edge`` below ``a`` to at least ``1 - f_edge`` above ``b``
    (or the mirror image).  Terms where ``f`` is within ``f_edge`` of 1 are
    summed as ``w``; those where it is within ``f_edge`` of 0 are dropped, and
    None is returned when what is dropped could exceed ``exp(-_TAIL_LOG)`` of
    the sum.
    """
    a, b, increasing, f_edge = cut
    i0 = int(min(max(math.ceil(a) - h[0], 0), h.size))
    i1 = int(min(max(math.floor(b) - h[0] + 1, i0), h.size))
    mid = float(np.dot(w[i0:i1], f(h[i0:i1]))) if i1 > i0 else 0.0
    one = float(np.sum(w[i1:] if increasing else w[:i0]))
    total = mid + one
    # what is dropped is at most f_edge times the whole window
    if not (total > 0.0 and f_edge * w_sum <= total * _LINEAR_TAIL):
        return None
    return total


def _linear_window(dist: _Lattice, start: int, stop: int, f, cut=None) -> float | None:
    """The common case on the linear scale (no log or exp for the pmf).

    Returns None when the window misses mass or the scale would overflow;
    the caller then takes the log-scale path.  With ``cut`` (see
    :func:`_cut_sum`) ``f`` is evaluated only where it is neither 0 nor 1.
    """
    h = np.arange(start, stop + 1, dtype=float)  # integers, exact below 2**53
    w = np.empty(h.size)
    w[0] = 1.0
    np.cumprod(dist.ratio(h[:-1]), out=w[1:])
    w_max = float(np.max(w))  # nan if any term is
    if not (np.isfinite(w_max) and w_max < 1e250):
        return None
    for a, b, edge in ((0, 1, dist.lo), (-1, -2, dist.hi)):
        if h[a] != edge and not _linear_tail_ok(w[a], w[b], w_max):
            return None
    if cut is not None:
        w_sum = float(np.sum(w))
        num = _cut_sum(w, w_sum, h, f, cut)
        if num is not None:
            return math.log(num) - math.log(w_sum)
    g = w * f(h)
    g_max = float(np.max(g))
    if not g_max > 0.0:
        return None
    for a, b, edge in ((0, 1, dist.lo), (-1, -2, dist.hi)):
        if h[a] != edge and not _linear_tail_ok(g[a], g[b], g_max):
            return None
    return float(np.log(np.sum(g)) - np.log(np.sum(w)))


def _half_width(sd: float) -> int:
    """Half width of a window around the mode holding all but ``exp(-_TAIL_LOG)``.

    The geometric tail bound of :func:`_tail_ok` at ``z`` standard deviations
    is about ``exp(-z**2 / 2) sd / z``, so ``z`` grows like
    ``sqrt(2 (_TAIL_LOG + log sd))``; at least 9.5 (the former fixed width).
    """
    z = max(9.5, float(np.sqrt(2.0 * (_TAIL_LOG + 2.0 + max(np.log(max(sd, 1.0)), 0.0)))))
    return int(np.ceil(z * sd)) + 8


def log_expectation(dist: _Lattice, logf, f=None, cut=None) -> float:
    """``log E[exp(logf(H))]`` for ``H ~ dist`` with log-concave ``exp(logf)``.

    ``logf`` maps an int64 array of support points to log values in
    ``[-inf, 0]`` (a test function or a cdf); ``f``, optional, is the same
    function on the linear scale, used for speed where nothing underflows;
    ``cut``, optional, says where ``f`` is 0 or 1 to double precision (see
    :func:`_cut_sum`), so that it is evaluated only in between.
    """
    if dist.hi - dist.lo + 1 <= _FULL:
        h, lp = dist.window_logpmf(dist.lo, dist.hi)
        return float(_logsumexp(lp + logf(h)) - _logsumexp(lp))
    mode = dist.mode()
    half = _half_width(dist.sd())
    if f is not None:
        out = _linear_window(dist, max(dist.lo, mode - half), min(dist.hi, mode + half), f, cut)
        if out is not None:
            return out
    # common case: one window around the mode holds both sums
    start, stop = max(dist.lo, mode - half), min(dist.hi, mode + half)
    h, lp = dist.window_logpmf(start, stop)
    lg = lp + logf(h)
    peak_p, peak_g = float(np.max(lp)), float(np.max(lg))
    ok = np.isfinite(peak_g)
    for a, b in ((0, 1), (-1, -2)):
        edge = h[a] in (dist.lo, dist.hi)
        ok = ok and (edge or (_tail_ok(lp[a], lp[b], peak_p) and _tail_ok(lg[a], lg[b], peak_g)))
    if ok:
        return float(_logsumexp(lg) - _logsumexp(lp))
    # general case: the integrand peaks away from the bulk (tiny p-values)
    peak = _peak(dist, logf)
    if peak is None:
        return -np.inf
    out = _grow_span(dist, logf, min(mode, peak), max(mode, peak), half)
    if out is not None:
        return float(min(out, 0.0))
    log_den = _grow(dist, None, mode, half, absolute=True)
    log_num = _grow(dist, logf, peak, half, absolute=True)
    # logf <= 0, so the expectation is at most 1; the two sums are grown over
    # different windows, whose truncation can differ by a few ulps of float32
    # size (seen: 2**-25 at n = 1.6e7), which must not push a p-value above 1
    return float(min(log_num - log_den, 0.0))


def continuous_mode(t1: int, t2: int, c1: int, log_w: float) -> float:
    """Real root of ``h (t2 - c1 + h) = w (t1 - h)(c1 - h)``: where the pmf ratio is 1.

    ``log w`` is clipped to ``[-700, 700]``; the root may be ``inf`` or NaN
    when the quadratic degenerates there (callers clip it to the support).
    """
    w = math.exp(min(max(log_w, -700.0), 700.0))
    a, b, c = 1.0 - w, t2 - c1 + w * (t1 + c1), -w * t1 * c1
    disc = math.sqrt(max(b * b - 4.0 * a * c, 0.0))
    den = b + disc  # plain floats: this is on the p-value's hot path (no numpy overhead)
    if den > 0:
        return -2.0 * c / den
    return (-b + disc) / (2.0 * a) if a != 0.0 else math.nan


def tulap_log_p_bound(
    u: float, t1: int, t2: int, c1: int, log_w: float, eps: float, side: str, limit=math.inf
) -> float:
    """Upper bound on ``log E F(s (H - u))`` for Tulap ``F`` and the noncentral ``H``.

    For Tulap noise ``F(x) <= exp(epsilon (x + 1))`` (also truncated, where
    ``F <= 1/2``), so ``log p <= log(support size) + max_h phi(h)`` with the
    concave ``phi(h) = log pmf(h) + min(0, epsilon (s (h - u) + 1))``
    (``s = 1`` for "greater").  Its maximum is at the mode, at the kink
    ``u - s`` or where ``pmf(h + 1) / pmf(h) = exp(-s epsilon)``, the mode of
    the law with ``log w + s epsilon``; the integers next to those are
    scored.  The log pmf comes from log-gamma values (rounding ~1e-7 at
    n = 1e8), hence a margin of 1.  ``inf`` when no bound applies, or as
    soon as the bound is sure to be above ``limit``.
    """
    s = 1.0 if side == "greater" else -1.0
    lo, hi = max(0, c1 - t2), min(t1, c1)
    if hi - lo < 2 or not (abs(log_w) < 50.0 and abs(log_w + s * eps) < 50.0 and abs(u) < 1e15):
        return math.inf
    mode = min(max(round(continuous_mode(t1, t2, c1, log_w)), lo), hi)
    if eps * (s * (mode - u) + 1.0) >= limit:
        return math.inf
    lg = math.lgamma

    def log_pmf(h: int) -> float:
        return h * log_w - lg(h + 1) - lg(t1 - h + 1) - lg(c1 - h + 1) - lg(t2 - c1 + h + 1)

    # the bound exceeds phi at any point: stop at the first point above the limit
    offset = math.log(hi - lo + 1.0) + 1.0 - log_pmf(mode)
    top = -math.inf
    for c in (u - s, continuous_mode(t1, t2, c1, log_w + s * eps), mode):
        for h in {min(max(math.floor(c) + k, lo), hi) for k in (-1, 0, 1, 2)}:
            top = max(top, log_pmf(h) + min(0.0, eps * (s * (h - u) + 1.0)))
            if top + offset >= limit:
                return math.inf
    return top + offset
