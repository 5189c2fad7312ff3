r"""Exact samplers for releases: uniform integers and exact arithmetic only.

No floating point decides any draw here, so with a
:class:`~invariantdp.secure.SecureGenerator` (bytes from :mod:`secrets`)
the output is fit for a production release; with a seed or a numpy
``Generator`` the same algorithms are reproducible, for testing them.  Every
draw does the same work whatever its value (:mod:`._constant`: the run time
of a release says nothing about its noise):

* :func:`sample_discrete_laplace_exact`: the discrete Laplace ``Lap_Z(t)``
  (:class:`~._constant.LaplacePlan`: a zero test, a sign and the binary
  digits of a geometric, no rejection);
* :func:`sample_discrete_gaussian_exact`: the discrete Gaussian
  ``N_Z(0, sigma^2)`` by Canonne, Kamath & Steinke (2020), Algorithm 3 with
  constant-work trials (:class:`~._constant.GaussianPlan`);
* :func:`draw_tulap_exact`: ``Tulap(0, exp(-epsilon), q(epsilon, delta))``
  as an integer part and one of ``2**53`` cells of the uniform part, with the
  truncation decided in exact arithmetic (:class:`_ExactTruncation`), every
  trial drawing the same words;
* the exact arithmetic they share (rational bounds of ``exp``, lazy
  comparisons, CKS Algorithm 1 for the slow path of a tail draw) is in
  :mod:`._arith`.

The discrete samplers are re-exported by :mod:`._discrete_laws` (and
:mod:`invariantdp.distributions`); the Tulap plan and draw are used from
here by the Tulap mechanism.

References
----------
.. [1] Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete
   Gaussian for differential privacy", NeurIPS 33, Algorithms 1-3.
.. [2] Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly
   most powerful tests for binomial data", NeurIPS 31, Definition 4.1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._bounded_cache import bounded_cache
from .._rng import exact_source
from .._validation import InvariantDPError, check_positive, check_positive_int, format_value
from ._arith import (  # noqa: F401  (_bernoulli_exp: CKS Algorithm 1, tested from here)
    _bernoulli_exp,
    _exp_neg_bounds,
    _idiv_pos,
    _imul,
    lazy_less,
    random_words,
)
from ._constant import (
    MAX_ROUNDS,
    ExpBits,
    GaussianPlan,
    LaplacePlan,
    cached_plan,
    compare,
    precision,
    too_many_rounds,
    uniform_below,
)

__all__ = [
    "TulapPlan",
    "draw_tulap_exact",
    "gaussian_plan",
    "laplace_plan",
    "sample_discrete_gaussian_exact",
    "sample_discrete_laplace_exact",
    "tulap_plan",
]


def laplace_plan(t: Fraction, epsilon: float, n: int) -> LaplacePlan:
    """The (cached) constant-work plan of ``Lap_Z(t)`` for ``n`` draws at ``epsilon``."""
    words, bits = precision(epsilon, n)
    return cached_plan("laplace", (t, words, bits), lambda: LaplacePlan(t, words, bits))


def gaussian_plan(sigma2: Fraction, epsilon: float, n: int) -> GaussianPlan:
    """The (cached) constant-work plan of ``N_Z(0, sigma2)`` for ``n`` draws at ``epsilon``."""
    words, bits = precision(epsilon, n)
    return cached_plan("gaussian", (sigma2, words, bits), lambda: GaussianPlan(sigma2, words, bits))


def _as_fraction(name: str, value) -> Fraction:
    if isinstance(value, Fraction):
        if value <= 0:
            raise InvariantDPError(f"`{name}` ({value}) must be > 0.")
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        if value <= 0:
            raise InvariantDPError(f"`{name}` ({value}) must be > 0.")
        return Fraction(int(value))
    return Fraction(check_positive(name, value))


def _laplace_draws(t: Fraction, gen, m: int) -> np.ndarray:
    return laplace_plan(t, 1.0, max(m, 1)).draw(gen, m)[0]


def _gaussian_draws(sigma2: Fraction, gen, m: int) -> np.ndarray:
    return gaussian_plan(sigma2, 1.0, max(m, 1)).draw(gen, m)


def _exact_draws(draws, name: str, value, bits: int, size, rng):
    """``size`` exact draws ``draws(value, gen, size)`` with the exact rational parameter ``value``.

    All arguments are checked before any draw: ``0 < value <= 2**bits`` (so
    that int64 draws stay exact) and ``size``.  ``size=None`` gives one int.
    """
    exact = _as_fraction(name, value)
    if exact > 2**bits:
        raise InvariantDPError(
            f"`{name}` ({format_value(value)}) must be <= 2**{bits}: int64 draws of a larger "
            f"scale would not be exact (|X| >= 2**62 with probability > 1e-27)."
        )
    m = 1 if size is None else check_positive_int("size", size, minimum=0)
    gen = exact_source(rng)
    out = draws(exact, gen, m)
    return int(out[0]) if size is None else out


def sample_discrete_laplace_exact(scale, size=None, rng=None):
    r"""Exact draws from the discrete Laplace :math:`\mathrm{Lap}_{\mathbb Z}(t)`.

    :math:`P(X = k) \propto e^{-|k|/t}`, sampled exactly with uniform random
    words and exact thresholds only (:class:`~._constant.LaplacePlan`: 0
    with probability ``tanh(1 / (2t))``, else a fair sign times one plus a
    geometric whose binary digits are independent Bernoullis), with the same
    work for every draw, so that the run time does not depend on the value
    (the discrete Laplace of Canonne, Kamath & Steinke 2020, Def. 3).
    ``scale`` is taken as the exact rational value of the float (or
    ``Fraction``) given.  With ``rng=SecureGenerator()``
    (:mod:`invariantdp.secure`) every word comes from :mod:`secrets`, which
    makes the draw fit for a production release; with a seed or numpy
    generator the same algorithm is reproducible (for testing it), not
    secure.

    Parameters
    ----------
    scale : float, int or Fraction
        :math:`0 < t \le 2^{56}`, e.g. ``Fraction(sensitivity) / Fraction(epsilon)``.
    size : int, optional
        Number of draws (``None`` for one integer).
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator

    Returns
    -------
    int or numpy.ndarray of int64
        One draw for ``size=None``, else ``size`` draws.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Def. 3 and Algorithm 1 (the slow path).

    Examples
    --------
    >>> from invariantdp.distributions import sample_discrete_laplace_exact
    >>> sample_discrete_laplace_exact(2.5, size=4, rng=0).dtype
    dtype('int64')
    """
    return _exact_draws(_laplace_draws, "scale", scale, 56, size, rng)


def sample_discrete_gaussian_exact(sigma2, size=None, rng=None):
    r"""Exact draws from :math:`N_{\mathbb Z}(0, \sigma^2)` in integer arithmetic.

    Implements Canonne, Kamath & Steinke (2020), Algorithm 3 with uniform
    random words and exact thresholds only, every trial doing the same work
    (:class:`~._constant.GaussianPlan`): the output law is exactly the
    discrete Gaussian with variance parameter ``sigma2`` (taken as the exact
    rational value of the float or ``Fraction`` given), and the run time does
    not depend on the value drawn.

    Parameters
    ----------
    sigma2 : float, int or Fraction
        :math:`0 < \sigma^2 \le 2^{104}`.
    size : int, optional
        Number of draws (``None`` for one integer).
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator
        With :class:`~invariantdp.secure.SecureGenerator` the draws come from
        :mod:`secrets` (for production releases).

    Returns
    -------
    int or numpy.ndarray of int64
        One draw for ``size=None``, else ``size`` draws.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Definition 1 and Algorithms 1-3.

    Examples
    --------
    >>> from invariantdp.distributions import sample_discrete_gaussian_exact
    >>> sample_discrete_gaussian_exact(4, size=5, rng=1).dtype
    dtype('int64')
    """
    return _exact_draws(_gaussian_draws, "sigma2", sigma2, 104, size, rng)


# ---------------------------------------------------------------------------
# Tulap (Awan & Slavkovic 2018, Def. 4.1) for releases made with secure=True
# ---------------------------------------------------------------------------

#: the uniform part is the centre of one of 2**53 cells of width 2**-53 tiling (-1/2, 1/2)
_CELL_BITS = 53


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

    def threshold(self, bits: int) -> int:
        """``floor(f_c 2**bits)`` exactly: the fixed-point boundary of the fast test."""
        for level in range(8):
            lo, hi = self.fc_bounds(level)
            c_lo, c_hi = math.floor(lo * 2**bits), math.floor(hi * 2**bits)
            if c_lo == c_hi:
                return c_lo
        raise InvariantDPError("the Tulap truncation boundary could not be resolved.")

    def inside(self, j: int, bits: int, gen) -> bool:
        """Whether ``f`` uniform in ``[j, j + 1) / 2**bits`` is ``>= f_c``, refined lazily."""

        def theta(level):  # f < f_c iff the uniform point of the cell is below f_c 2**bits - j
            lo, hi = self.fc_bounds(level)
            return lo * 2**bits - j, hi * 2**bits - j

        return not lazy_less(theta, gen)


@bounded_cache(maxsize=64)
def _truncation(epsilon: float, delta: float) -> _ExactTruncation:
    return _ExactTruncation(epsilon, delta)


def _exact_truncation(epsilon: float, delta: float) -> _ExactTruncation:
    """The (cached) exact truncation of ``(epsilon, delta)``: releases repeat their parameters."""
    return _truncation(float(epsilon), float(delta))


#: the uniform part's cell is refined by one more word in every trial's fast boundary test
_REFINE_BITS = 64


class TulapPlan:
    """Constant-work exact draws of ``Tulap(0, exp(-epsilon), q(epsilon, delta))`` as ``(G, j)``.

    ``G`` is the integer part and ``j`` the ``2**-53``-cell of the uniform
    part.  ``delta = 0``: ``G ~ Lap_Z(1/epsilon)`` (:class:`LaplacePlan`, no
    rejection), ``j`` 53 random bits.  ``delta > 0`` with ``1 - q >= 1/2``:
    the same trial, kept unless ``|G| > m_c`` or ``|G| = m_c`` with the
    uniform part outside the support; the boundary test compares the cell
    and 64 more random bits with ``f_c`` in fixed point *in every trial*,
    a tie (probability ``2**-117``) being resolved exactly
    (:meth:`_ExactTruncation.inside`).  A trial whose ``|G|`` reached the
    Laplace tail (beyond ``2**M >= m_c``) is rejected without needing its
    value.  ``1 - q < 1/2``: ``G`` uniform on ``{-m_c, ..., m_c}`` kept with
    an exact ``Bernoulli(exp(-epsilon |G|))`` (:class:`ExpBits`, one test per
    bit of ``m_c``), then the same boundary test.  Every trial of a regime
    draws the same words and runs the same operations.
    """

    def __init__(self, epsilon: float, delta: float, words: int, bits: float):
        self.eps = Fraction(epsilon)
        self.delta = delta
        self.words = words
        self.trunc = _exact_truncation(epsilon, delta) if delta > 0 else None
        with np.errstate(over="ignore"):
            em1 = float(np.expm1(epsilon))
        # 1 - q = expm1(eps) / (expm1(eps) + 2 delta) < 1/2
        self.uniform = delta > 0 and em1 < 2.0 * delta
        self.laplace = self.exp_bits = None
        if self.uniform:
            m = self.trunc.m_c
            self.exp_bits = ExpBits([self.eps], [m.bit_length()], words)
            self.tests = self.exp_bits.tests
            self.p_accept = Fraction(1, 6)
        else:
            # the tail must lie beyond the truncated support, so that it is rejected outright
            extra = 0 if self.trunc is None else self.trunc.m_c.bit_length()
            self.laplace = LaplacePlan(1 / self.eps, words, bits, min_m=extra)
            self.tests = self.laplace.tests
            self.p_accept = Fraction(49, 100) if self.trunc is not None else Fraction(1)
        if self.trunc is not None:
            t = self.trunc.threshold(_CELL_BITS + _REFINE_BITS)
            self.fc_words = np.array([t >> _REFINE_BITS, t & ((1 << _REFINE_BITS) - 1)], np.uint64)

    def tv_per_draw(self) -> Fraction:
        """``P(F)`` of one kept draw: a tie (or, without truncation, the tail), over acceptance."""
        ties = Fraction(self.tests, 2 ** (64 * self.words))
        if self.trunc is None:
            return self.laplace.omega_hi + ties
        return (ties + Fraction(1, 2 ** (_CELL_BITS + _REFINE_BITS))) / self.p_accept

    def _inside(self, g: np.ndarray, j: np.ndarray, gen) -> np.ndarray:
        """Whether the uniform part of ``(G, j)`` is inside the support at ``|G| = m_c``."""
        # f: distance from the outer edge of the boundary cell, in cells
        cell = np.where(g < 0, j, np.uint64((1 << _CELL_BITS) - 1) - j)
        v = random_words(gen, (g.size,))
        u = np.stack([cell, v], axis=1)
        less, tie = compare(u, self.fc_words[None, :])
        inside = ~less  # (cell, v) >= floor(f_c 2**117): f >= f_c unless tied
        if tie.any():
            for i in np.flatnonzero(tie):
                j_i = (int(cell[i]) << _REFINE_BITS) | int(v[i])
                inside[i] = self.trunc.inside(j_i, _CELL_BITS + _REFINE_BITS, gen)
        return inside

    def trial(self, gen, n: int):
        """``n`` independent trials: ``((G, j), kept)``."""
        m_c = None if self.trunc is None else self.trunc.m_c
        if self.uniform:
            g = uniform_below(gen, 2 * m_c + 1, n) - m_c
            ok = self.exp_bits.accept(np.abs(g).astype(np.uint64)[:, None], gen)
            tail = np.zeros(n, dtype=bool)
        else:
            g, tail = self.laplace.draw(gen, n)
            ok = ~tail
        j = random_words(gen, (n,)) >> np.uint64(64 - _CELL_BITS)
        if m_c is not None:
            a = np.abs(g)
            edge = a == m_c
            ok &= (a < m_c) | (edge & self._inside(g, j, gen))
        return np.stack([g, j.astype(np.int64)], axis=1), ok

    def draw(self, gen, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(G, j)`` of ``n`` exact draws."""
        if self.trunc is None:
            (gj, _ok) = self.trial(gen, n)
            return gj[:, 0], gj[:, 1]
        out = np.empty((n, 2), dtype=np.int64)
        todo = np.arange(n)
        for _ in range(MAX_ROUNDS):
            if todo.size == 0:
                return out[:, 0], out[:, 1]
            per = 4
            gj, ok = self.trial(gen, todo.size * per)
            gj, ok = gj.reshape(todo.size, per, 2), ok.reshape(todo.size, per)
            hit = ok.any(axis=1)
            first = np.argmax(ok, axis=1)
            out[todo[hit]] = gj[hit, first[hit]]
            todo = todo[~hit]
        raise too_many_rounds("Tulap", MAX_ROUNDS)


def tulap_plan(epsilon: float, delta: float, n: int, epsilon_total=None) -> TulapPlan:
    """The (cached) plan of the exact Tulap for ``n`` draws of a release at ``(epsilon, delta)``.

    ``epsilon_total`` (default ``epsilon``) is the epsilon of the whole
    release, where the run time's share of delta is kept below ``2**-64``.
    """
    words, bits = precision(epsilon if epsilon_total is None else epsilon_total, n)
    key = (float(epsilon), float(delta), words, bits)
    return cached_plan("tulap", key, lambda: TulapPlan(epsilon, delta, words, bits))


def draw_tulap_exact(gen, epsilon: float, delta: float, size: int):
    """Exact ``Tulap(0, exp(-epsilon), q(epsilon, delta))`` draws as ``(G, U)``.

    ``G`` is the integer part ``[N]`` (int64) and ``U`` the centre
    ``(j + 1/2) 2**-53 - 1/2`` of the cell of ``(-1/2, 1/2)`` holding the
    uniform part ``N - G``: ``(G, U)`` is a function of the exact Tulap
    draw ``N`` (the cells tile the integers), drawn with uniform random words
    of ``gen`` only (a :class:`~invariantdp.secure.SecureGenerator` for
    releases), every trial doing the same work (:class:`TulapPlan`).
    Callers add ``G`` to the integer data first and ``U`` last.

    * ``delta = 0``: ``G ~ Lap_Z(1/epsilon)`` exactly, ``j`` uniform on 53 bits.
    * ``delta > 0``, ``1 - q >= 1/2``: the same, rejecting ``|G| > m_c``;
      at ``|G| = m_c`` the uniform part is inside the support or not,
      decided exactly (:class:`_ExactTruncation`).
    * ``1 - q < 1/2`` (e.g. tiny epsilon): ``G`` proposed uniformly on
      ``{-m_c, ..., m_c}`` and kept with an exact Bernoulli(exp(-epsilon |G|)),
      then the same boundary check.  The joint law of ``(G, N - G)`` given
      acceptance is proportional to ``b**|G|`` on the support: the truncated
      Tulap.

    Both regimes accept a trial with probability above 1/6 whatever
    (epsilon, delta) (the second because ``b**(m_c - 1) >= q > 1/2``) and are
    capped at ``MAX_ROUNDS`` rounds.  The truncation never depends on the
    data: it is decided on ``(G, N - G)`` alone.

    References
    ----------
    Awan & Slavkovic (2018), Def. 4.1; Canonne, Kamath & Steinke (2020),
    Algorithm 1.
    """
    g, j = tulap_plan(epsilon, delta, max(size, 1)).draw(gen, size)
    half = 1 << (_CELL_BITS - 1)
    u = ((j - half).astype(float) + 0.5) * 2.0**-_CELL_BITS
    return g, u
