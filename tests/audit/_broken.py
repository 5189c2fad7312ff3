"""Kept broken variants: faithful copies of samplers that leaked (issue 10, section 2).

Each function is the noise path of a released version of ``invariantdp``
(``git show 0b11b27:src/invariantdp/mechanisms/additive.py`` and
``.../distributions/tulap.py``, ``.../distributions/discrete.py``), copied
here so that the audit can be shown to FAIL them long after the package
itself is fixed.  They are written as batched samplers for
:func:`invariantdp.audit.audit_mechanism`: ``sampler(t, n, rng)`` returns
``n`` independent releases of the scalar query value ``t``.

The leaks, measured on the copies (``test_audit_leaks.py`` checks each number):

* :func:`secure_tulap_rescaled` -- the old ``tulap(..., secure=True)`` for
  ``sensitivity != 1`` or non-integer data computed ``x + scale * (g + u)``
  in floating point; with ``sensitivity=2`` about 46% of the outputs at
  ``x = 0`` are odd multiples of ``2**-53`` in (-1, 1), which no output at
  ``x = 2`` is; for ``x = 0.5`` vs ``1.5`` (``sensitivity=1``) about 23%.
* :func:`float_laplace` -- ``x + rng.laplace(0, scale)``: at ``x = 0``, 27%
  of the outputs (most of those in (-1/4, 1/4)) lie on a lattice finer than
  ``2**-53``, which ``fl(1 + noise)`` never reaches.
* :func:`float_tulap` -- the old default ``tulap`` / ``odds_ratio_release``:
  ``x + _draw_tulap(...)`` (floor of exponentials plus ``rng.random()``);
  at ``x = 0``, 11.6% of the outputs are odd multiples of ``2**-53`` in
  (-1/2, 0), which no output at ``x = 1`` is.
* :func:`saturating_discrete_laplace` -- ``rng.geometric`` saturates at
  ``INT64_MAX`` for huge scales, so both geometric counts are equal and the
  release is the data (all of it at ``epsilon = 1e-30``).
* :func:`undernoised_gaussian` -- Gaussian noise with ``sigma = 3.19`` where
  ``(epsilon, delta) = (1, 1e-5)`` needs ``sigma = 3.73``: the true delta at
  ``epsilon = 1`` is ten times the claim.

The secure paths draw their integers from ``rng`` (a numpy ``Generator``
here, a ``SecureGenerator`` in the release): the leak is in the floating-point
arithmetic applied afterwards, not in the source of the bits.

Timing leaks (issue 20): the secure samplers of commit ``af6324e``
(``git show af6324e:src/invariantdp/distributions/_exact.py``,
``.../mechanisms/_grid.py``, ``.../mechanisms/_permutation.py``), copied
below as per-call releases ``release(x) -> value`` drawing from
:mod:`secrets` exactly as the package did, ran longer for larger noise (CKS
Algorithm 2's loop of Bernoulli(exp(-1)) trials, Algorithm 1's loop, the
"-0" redraw) and, for the swap, longer when more records were selected:

* :func:`timed_discrete_laplace` -- ``discrete_laplace_mechanism(secure=True)``:
  the timing audit's 99% lower bound on the loss at epsilon = 1 is about 4
  (issue 20: 4.1, 512 vs 1 events in 20,000 calls), 5.2 at epsilon = 2;
* :func:`timed_grid_laplace` -- ``laplace_mechanism(secure=True)`` (issue 20: 1.56);
* :func:`timed_discrete_gaussian` -- ``discrete_gaussian_mechanism(secure=True)``;
* :func:`timed_tulap` -- ``tulap_mechanism(secure=True)`` at delta = 0 (its
  integer part is the same discrete Laplace sampler);
* :func:`timed_secure_swap` -- the selection and derangement of
  ``permutation_swap(secure=True)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from invariantdp.secure import SecureGenerator

__all__ = [
    "float_laplace",
    "float_tulap",
    "saturating_discrete_laplace",
    "secure_tulap_rescaled",
    "timed_discrete_gaussian",
    "timed_discrete_laplace",
    "timed_grid_laplace",
    "timed_secure_swap",
    "timed_tulap",
    "undernoised_gaussian",
]


# ---------------------------------------------------------------------------
# exact rational discrete Laplace (CKS 2020, Algorithms 1-2), as in 0b11b27
# ---------------------------------------------------------------------------


def _randbelow(d: int, gen) -> int:
    if not isinstance(gen, np.random.Generator):
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
    while gamma > 1:
        if not _bernoulli_exp(Fraction(1), gen):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, gen):
        k += 1
    return k % 2 == 1


def _discrete_laplace_exact_rational(scale: Fraction, gen) -> int:
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


# ---------------------------------------------------------------------------
# Tulap support bounds (untruncated quantiles), as in 0b11b27
# ---------------------------------------------------------------------------


def _ppf0(u, b):
    lo = np.minimum(u, 1.0 - u)
    with np.errstate(divide="ignore", invalid="ignore"):
        logv = np.log(lo) + np.log1p(b)
        logb = np.log(b)
        j = np.floor(logv / logb)
        t = (np.exp(logv - j * logb) - b) / (1.0 - b)
    t = np.clip(t, 0.0, 1.0)
    x = -j + t - 0.5
    x = np.where(lo <= 0.0, -np.inf, x)
    return np.where(u <= 0.5, x, -x)


def _bounds(b, q):
    half = np.asarray(q, dtype=float) / 2.0
    upper = np.where(half > 0, -_ppf0(half, b), np.inf)
    return -upper, upper


def _tulap_params(epsilon, delta):
    b = float(np.exp(-epsilon))
    return b, 2.0 * delta * b / (1.0 - b + 2.0 * delta * b)


_HALF_GRID = 2.0**-53


def draw_tulap_exact(gen, epsilon: float, q: float, size: int):
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


def _draw_untruncated(rng, b: float, shape) -> np.ndarray:
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
    out = _draw_untruncated(rng, b, shape)
    if q > 0:
        lo, hi = (float(v) for v in _bounds(b, q))
        flat = out.reshape(-1)
        bad = np.flatnonzero((flat < lo) | (flat > hi))
        while bad.size:
            flat[bad] = _draw_untruncated(rng, b, (bad.size,))
            bad = bad[(flat[bad] < lo) | (flat[bad] > hi)]
    return out


# ---------------------------------------------------------------------------
# the broken mechanisms, as batched samplers ``(t, n, rng) -> (n,) array``
# ---------------------------------------------------------------------------


def secure_tulap_rescaled(*, epsilon, delta=0.0, sensitivity=1.0):
    """Old ``tulap(x, secure=True)``: exact ``(g, u)``, then float ``x + scale * (g + u)``.

    Only integer data with ``sensitivity == 1`` took the exact
    ``(x + g) + u`` branch; every other call rounded.
    """
    b, q = _tulap_params(epsilon, delta)
    scale = float(sensitivity)

    def sample(t, n, rng):
        xv = np.full(n, float(t))
        g, u = draw_tulap_exact(rng, epsilon, q, n)
        integer = scale == 1.0 and np.all(xv == np.round(xv)) and np.all(np.abs(xv) < 2.0**52)
        return (xv + g) + u if integer else xv + scale * (g + u)

    return sample


def float_laplace(*, epsilon, sensitivity=1.0):
    """Old ``laplace``: ``x + rng.laplace(0, sensitivity / epsilon)``."""
    scale = sensitivity / epsilon

    def sample(t, n, rng):
        xv = np.full(n, float(t))
        return xv + rng.laplace(0.0, scale, size=xv.shape)

    return sample


def float_tulap(*, epsilon, delta=0.0, sensitivity=1.0):
    """Old default ``tulap`` (and ``odds_ratio_release``): ``x + scale * _draw_tulap(...)``."""
    b, q = _tulap_params(epsilon, delta)
    scale = float(sensitivity)

    def sample(t, n, rng):
        xv = np.full(n, float(t))
        return xv + scale * _draw_tulap(rng, b, q, xv.shape)

    return sample


def saturating_discrete_laplace(*, epsilon, sensitivity=1):
    """Old ``discrete_laplace``: ``x + G1 - G2`` with ``rng.geometric``, saturating at INT64_MAX."""
    t = sensitivity / epsilon

    def sample(x, n, rng):
        xv = np.full(n, float(x))
        p = -np.expm1(-1.0 / np.asarray(t, dtype=float))
        return xv + (rng.geometric(p, size=xv.shape) - rng.geometric(p, size=xv.shape))

    return sample


def undernoised_gaussian(*, sigma=3.19):
    """``x + sigma * N(0, 1)`` with a ``sigma`` below the calibrated one."""

    def sample(t, n, rng):
        xv = np.full(n, float(t))
        return xv + sigma * rng.standard_normal(xv.shape)

    return sample


# ---------------------------------------------------------------------------
# the secure samplers of af6324e (CKS Algorithms 1-3, loops whose length depends on the draw)
# ---------------------------------------------------------------------------

_MAX_TRIALS = 10_000


def _af_randbelow(n: int, gen) -> int:
    if not isinstance(gen, np.random.Generator):
        return gen.randbelow(n)
    return int(gen.integers(0, n))


def _af_bernoulli_exp_unit(num: int, den: int, gen) -> bool:
    k = 1
    while _af_randbelow(den * k, gen) < num:
        k += 1
    return k % 2 == 1


def _af_bernoulli_exp(num: int, den: int, gen) -> bool:
    whole, rest = divmod(num, den)
    for _ in range(whole):
        if not _af_bernoulli_exp_unit(1, 1, gen):
            return False
    return _af_bernoulli_exp_unit(rest, den, gen)


def _af_discrete_laplace_int(t: int, s: int, gen) -> int:
    for _ in range(_MAX_TRIALS):
        u = _af_randbelow(t, gen)
        if not _af_bernoulli_exp(u, t, gen):
            continue
        v = 0
        while _af_bernoulli_exp_unit(1, 1, gen):
            v += 1
        y = (u + t * v) // s
        negative = _af_randbelow(2, gen) == 1
        if negative and y == 0:
            continue
        return -y if negative else y
    raise RuntimeError("rejected")


def _af_discrete_gaussian_int(num: int, den: int, gen) -> int:
    t = math.isqrt(num // den) + 1
    two_t2_den_num = 2 * t * t * den * num
    for _ in range(_MAX_TRIALS):
        y = _af_discrete_laplace_int(t, 1, gen)
        a = abs(y) * t * den - num
        if _af_bernoulli_exp(a * a, two_t2_den_num, gen):
            return y
    raise RuntimeError("rejected")


def _af_exact_draws(sampler, ratio: Fraction, shape: tuple, gen) -> np.ndarray:
    n = math.prod(shape)
    draws = [sampler(ratio.numerator, ratio.denominator, gen) for _ in range(n)]
    return np.array(draws, dtype=np.int64).reshape(shape)


def timed_discrete_laplace(*, epsilon, sensitivity=1):
    """``discrete_laplace_mechanism(x, secure=True)`` of af6324e: ``x + Lap_Z(Delta/eps)``."""
    scale = Fraction(sensitivity) / Fraction(epsilon)

    def release(x):
        xv = np.asarray(x, dtype=float)
        gen = SecureGenerator()
        return xv + _af_exact_draws(_af_discrete_laplace_int, scale, xv.shape, gen)

    return release


def timed_discrete_gaussian(*, rho, sensitivity=1):
    """``discrete_gaussian_mechanism(x, rho, secure=True)`` of af6324e (CKS Algorithm 3)."""
    s2 = Fraction(sensitivity) ** 2 / (2 * Fraction(rho))

    def release(x):
        xv = np.asarray(x, dtype=float)
        gen = SecureGenerator()
        return xv + _af_exact_draws(_af_discrete_gaussian_int, s2, xv.shape, gen)

    return release


def timed_grid_laplace(*, epsilon, sensitivity=1.0, grid=2.0**-20):
    """``laplace_mechanism(x, secure=True)`` of af6324e on one coordinate at the default grid
    of scale 1: ``grid * (round(x / grid) + K)``, ``K ~ Lap_Z((Delta/grid + 1) / eps)``."""
    t = Fraction(math.floor(Fraction(sensitivity) / Fraction(grid)) + 1) / Fraction(epsilon)

    def release(x):
        xv = np.asarray(x, dtype=float)
        k = np.rint(xv / grid).astype(np.int64)
        gen = SecureGenerator()
        return grid * (k + _af_exact_draws(_af_discrete_laplace_int, t, xv.shape, gen))

    return release


def timed_tulap(*, epsilon):
    """``tulap_mechanism(x, secure=True)`` of af6324e at delta = 0 on integer data:
    ``(x + G) + U``, ``G`` by CKS Algorithm 2, ``U`` the centre of a random 2**-53 cell."""
    eps = Fraction(epsilon)

    def release(x):
        xv = np.asarray(x, dtype=float).reshape(-1)
        gen = SecureGenerator()
        g = np.array(
            [_af_discrete_laplace_int(eps.denominator, eps.numerator, gen) for _ in xv],
            dtype=np.int64,
        )
        j = np.array([_af_randbelow(1 << 53, gen) for _ in xv], dtype=np.int64)
        u = ((j - (1 << 52)).astype(float) + 0.5) * 2.0**-53
        return (xv.astype(np.int64) + g).astype(float) + u

    return release


def timed_secure_swap(j: np.ndarray, n_strata: int, p: float):
    """The ``sources_secure`` of af6324e: ``src`` of the swap (Fisher-Yates re-drawn while the
    permutation of the selected records has a fixed point)."""
    num, den = Fraction(p).as_integer_ratio()

    def sources():
        gen = SecureGenerator()
        src = np.arange(j.size, dtype=np.int64)
        order = np.argsort(j, kind="stable")
        counts = np.bincount(j, minlength=n_strata)
        bounds = np.concatenate([[0], np.cumsum(counts)])
        for g in np.flatnonzero(counts >= 2):
            rec = order[bounds[g] : bounds[g + 1]]
            while True:
                chosen = [i for i in rec.tolist() if gen.integers(0, den) < num]
                if len(chosen) != 1:
                    break
            m = len(chosen)
            if m == 0:
                continue
            while True:
                perm = list(range(m))
                for i in range(m - 1, 0, -1):
                    k = gen.integers(0, i + 1)
                    perm[i], perm[k] = perm[k], perm[i]
                if all(perm[i] != i for i in range(m)):
                    break
            chosen = np.asarray(chosen, dtype=np.int64)
            src[chosen] = chosen[np.asarray(perm)]
        return src

    return sources
