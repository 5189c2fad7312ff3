r"""Constant-work exact samplers: the run time of a draw says nothing about its value.

A rejection sampler's loops run longer for larger noise: CKS Algorithm 2
tries about ``|noise| * epsilon / Delta`` Bernoulli(exp(-1)) trials, its
Algorithm 1 runs longer when it returns 0, and the noise of a release is
``|z - x|``, so timing a release (a service, a co-located process, a
notebook log) reveals ``x`` beyond the output ``z`` (Jin, McMurtry,
Rubinstein & Ohrimenko, IEEE S&P 2022).  The samplers here make every draw
the same fixed sequence of vectorised operations on a fixed number of random
64-bit words, whatever the noise:

* every random choice is a *threshold test*: a uniform integer ``u`` of
  ``W`` words (``B = 64 W`` bits, from ``gen.bytes``) compared with a public
  fixed-point threshold ``c = floor(pi 2**B)`` of a public probability
  ``pi``; ``u < c`` has probability ``c / 2**B`` and the tie ``u == c``
  (probability ``2**-B``) is resolved by an exact lazy comparison (the *slow
  path*), so the test is exactly ``Bernoulli(pi)``;
* a geometric ``G`` with ``P(G = g) ∝ r**g`` (``r = exp(-1/t)``) is
  ``R + 2**M Q`` with ``R < 2**M`` and ``Q`` independent: the bits of ``R``
  are independent ``Bernoulli(1 / (1 + exp(2**i / t)))`` (a geometric law
  truncated to ``[0, 2**M)`` factorises over the binary digits) and
  ``Q >= 1`` has probability ``omega = exp(-2**M / t)``; ``M`` is chosen so
  that ``omega`` is negligible, and ``Q`` is drawn exactly on the slow path;
* the discrete Laplace ``Lap_Z(t)`` is ``0`` with probability
  ``tanh(1 / (2 t))`` and otherwise ``±(1 + G)``: no rejection at all;
* ``Bernoulli(exp(-N lambda))`` for a data-free integer ``N`` of known bit
  length is the AND over the set bits ``k`` of ``N`` of
  ``Bernoulli(exp(-2**k lambda))``: one threshold test per possible bit
  (a test on an unset bit is drawn and ignored);
* the discrete Gaussian is CKS Algorithm 3 with that acceptance: a
  ``Lap_Z(sigma**2 / c)`` proposal, ``c`` a dyadic rational, kept with
  probability ``exp(-(|Y| - c)**2 / (2 sigma**2))``; rejected trials are
  i.i.d., so their number is independent of the accepted value.

What the run time can still reveal.  Let ``F`` be the event that the trial
a cell keeps took a slow path (a tie, or ``Q >= 1``).  Off ``F`` the run
time of the release has a law that depends on the public parameters only,
independent of the noise, so the pair (release, run time) is within total
variation ``P(F)`` of a release whose run time carries no information
(couple the two off ``F``).  Then an ``(epsilon, delta)``-DP release is
``(epsilon, delta + (1 + e**epsilon) P(F))``-DP with its run time, and a
``rho``-zCDP one satisfies the zCDP tradeoff shifted by ``P(F)``.  Each
plan's ``tv(n)`` is a rigorous upper bound on ``P(F)`` for ``n`` cells, and
:func:`precision` chooses ``W`` and ``M`` so that
``(1 + e**epsilon) P(F) <= 2**-64``.  The released *value* is exactly the
stated law: the slow paths keep it exact.

References
----------
.. [1] Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete
   Gaussian for differential privacy", NeurIPS 33, Algorithms 1-3.
.. [2] Jin, J., McMurtry, E., Rubinstein, B. I. P. and Ohrimenko, O. (2022).
   "Are we there yet? Timing and floating-point attacks on differential
   privacy systems", IEEE S&P.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._bounded_cache import BoundedCache
from .._validation import InvariantDPError
from ._arith import _bernoulli_exp, exp_neg_bounds, lazy_less, random_words

__all__ = [
    "TIMING_DELTA",
    "ExpBits",
    "GaussianPlan",
    "LaplacePlan",
    "cached_plan",
    "float_up",
    "precision",
    "random_words",
    "timing_delta",
    "uniform_below",
]

#: the delta the run time may add to a secure release: ``(1 + e**eps) P(F) <= 2**-64``
TIMING_DELTA = 2.0**-64
_WORD = 64
_MASK = (1 << _WORD) - 1
#: rounds of vectorised trials before a sampler gives up (each accepts w.p. above 1/6)
MAX_ROUNDS = 1000


def too_many_rounds(what: str, rounds: int | None = None) -> InvariantDPError:
    rounds = MAX_ROUNDS if rounds is None else rounds
    return InvariantDPError(
        f"the exact {what} sampler rejected every trial of {rounds} rounds in a row "
        "(probability below 1e-1000 for supported parameters): its source of random bits "
        "is broken or its parameters are outside the supported range."
    )


def uniform_below(gen, k: int, n: int) -> np.ndarray:
    """``n`` uniform integers in ``[0, k)`` (``k <= 2**62``) by masked-word rejection.

    Every element is retried independently until it falls below ``k``: the
    number of retries is independent of the value kept.
    """
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    mask = np.uint64((1 << (k - 1).bit_length()) - 1)
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    for _ in range(MAX_ROUNDS):
        if todo.size == 0:
            return out
        v = random_words(gen, (todo.size,)) & mask
        ok = v < np.uint64(k)
        out[todo[ok]] = v[ok].astype(np.int64)
        todo = todo[~ok]
    raise too_many_rounds("uniform integer")


# ---------------------------------------------------------------------------
# exact bounds of the public probabilities, and their fixed-point thresholds
# ---------------------------------------------------------------------------


def _digits(bits: int) -> int:
    return int(bits * 0.30103) + 12


def _fixed_point(bounds, bits: int) -> int:
    """``floor(pi * 2**bits)`` exactly, from rational bounds ``bounds(digits)`` on ``pi``."""
    digits = _digits(bits)
    for _ in range(8):
        lo, hi = bounds(digits)
        c_lo, c_hi = math.floor(lo * 2**bits), math.floor(hi * 2**bits)
        if c_lo == c_hi:
            return c_lo
        digits *= 2
    raise InvariantDPError("a sampler threshold could not be decided at 5000 digits.")


def _as_words(c: int, words: int) -> list[int]:
    return [(c >> (_WORD * (words - 1 - w))) & _MASK for w in range(words)]


def compare(u: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(u < c, u == c)`` for multi-word integers (last axis: words, most significant first).

    Branch-free: every word of every element is compared, whatever the values.
    """
    less = np.zeros(np.broadcast_shapes(u.shape[:-1], c.shape[:-1]), dtype=bool)
    tie = np.ones_like(less)
    for w in range(u.shape[-1]):
        uw, cw = u[..., w], c[..., w]
        less |= tie & (uw < cw)
        tie &= uw == cw
    return less, tie


class Thresholds:
    """Fixed-point thresholds of public probabilities, with the exact slow path of a tie.

    ``bounds[i](digits)`` gives rational bounds on the ``i``-th probability;
    ``words`` (``B = 64 words`` bits) the precision of the fast test.
    """

    def __init__(self, bounds: list, words: int):
        self.bounds = list(bounds)
        self.words = words
        bits = _WORD * words
        self.ints = [_fixed_point(b, bits) for b in self.bounds]
        table = np.array([_as_words(c, words) for c in self.ints], dtype=np.uint64)
        self.table = table.reshape(len(self.ints), words)

    def test(self, u: np.ndarray, gen, index=None) -> np.ndarray:
        """``Bernoulli(pi)`` for every test: ``u`` of shape ``(..., k, words)``.

        ``index`` (shape ``(..., k)``) picks the threshold of each test (by
        default the ``k`` thresholds in order).  Ties are resolved exactly.
        """
        c = self.table if index is None else self.table[index]
        less, tie = compare(u, c)
        if tie.any():  # probability 2**-B per test: the slow path
            for pos in zip(*np.nonzero(tie), strict=True):
                i = int(pos[-1]) if index is None else int(index[pos])
                less[pos] = self.exact_tie(i, gen)
        return less

    def exact_tie(self, i: int, gen) -> bool:
        """``Bernoulli(pi 2**B - c)``: where in the tied cell the uniform falls, bit by bit."""
        bits = _WORD * self.words
        c = self.ints[i]

        def theta(level):
            lo, hi = self.bounds[i](_digits(bits) << level)
            return lo * 2**bits - c, hi * 2**bits - c

        return lazy_less(theta, gen)


def _bernoulli_bounds(x: Fraction, kind: str):
    """Bounds on ``exp(-x)``, ``1 / (1 + exp(x))`` (``"logistic"``) or ``tanh(x / 2)``."""

    def bounds(digits):
        lo, hi = exp_neg_bounds(x, digits)
        if kind == "exp":
            return lo, hi
        if kind == "logistic":  # e^-x / (1 + e^-x), increasing in e^-x
            return lo / (1 + lo), hi / (1 + hi)
        return (1 - hi) / (1 + hi), (1 - lo) / (1 + lo)  # tanh(x/2), decreasing in e^-x

    return bounds


# ---------------------------------------------------------------------------
# precision: the words and bits that keep the run time's share of delta below 2**-64
# ---------------------------------------------------------------------------


def precision(epsilon: float, n: int, tests: int = 512) -> tuple[int, float]:
    """``(W, k)``: words per threshold test and tail bits of ``n`` draws at ``epsilon``.

    With ``P(F) <= 2**-k`` per draw from the tail and from the ties (at most
    ``tests`` of ``2**-64W`` each), over an acceptance of at least 1/6,
    ``(1 + e**epsilon) n P(F) <= 2**-66``.
    """
    # beyond epsilon = 750 (e**epsilon beyond the doubles) the precision stops growing
    k = 66 + math.log2(max(n, 1)) + _log2_one_plus_exp(min(epsilon, 750.0)) + 4
    return max(2, math.ceil((k + math.log2(tests)) / _WORD)), k


def _log2_one_plus_exp(epsilon: float) -> float:
    return (epsilon + math.log1p(math.exp(-epsilon))) / math.log(2.0)


def timing_delta(epsilon: float, tv: float) -> float:
    """An upper bound (a double) on ``(1 + e**epsilon) tv``: the delta the run time adds."""
    if tv == 0.0:
        return 0.0
    log2_d = math.log2(tv) + _log2_one_plus_exp(epsilon)
    return 2.0 ** min(log2_d, 1.0) * (1.0 + 2.0**-40)


def float_up(x: Fraction) -> float:
    """The smallest double ``>= x`` (for ``x`` in the double range)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


# ---------------------------------------------------------------------------
# the discrete Laplace (two-sided geometric) without rejection
# ---------------------------------------------------------------------------


class LaplacePlan:
    r"""Constant-work exact draws of :math:`\mathrm{Lap}_{\mathbb Z}(t)` for a rational ``t > 0``.

    ``Y = 0`` with probability ``tanh(1 / (2 t))``, else ``S (1 + G)`` with a
    fair sign ``S`` and ``G = R + 2**M Q`` geometric (module docstring):
    ``M + 2`` threshold tests and one sign word per draw, no rejection.  The
    tail ``Q >= 1`` (probability ``omega = exp(-2**M / t)``) is completed
    exactly on the slow path.
    """

    def __init__(self, t: Fraction, words: int, tail_bits: float, min_m: int = 0):
        self.t = t
        self.words = words
        # 2**M / t >= tail_bits ln 2 makes omega <= 2**-tail_bits
        need = float(t) * tail_bits * math.log(2.0)
        self.m = max(0, math.ceil(math.log2(need))) if need > 1 else 0
        self.m = min(max(self.m, min_m), 61)
        inv_t = 1 / t
        bounds = [_bernoulli_bounds(inv_t, "tanh")]
        bounds += [_bernoulli_bounds(2**i * inv_t, "logistic") for i in range(self.m)]
        bounds.append(_bernoulli_bounds(2**self.m * inv_t, "exp"))
        self.thresholds = Thresholds(bounds, words)
        self.tests = self.m + 2
        self.omega_hi = exp_neg_bounds(2**self.m * inv_t, 40)[1]
        self.tie = Fraction(1, 2 ** (_WORD * words))  # probability of a tie, per test
        self._powers = np.left_shift(np.int64(1), np.arange(self.m, dtype=np.int64))

    def tv_per_draw(self) -> Fraction:
        """``P(F)`` of one draw: its tail or a tie among its tests."""
        return self.omega_hi + self.tests * self.tie

    def draw(self, gen, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(Y, tail)``: ``n`` exact draws and whether each took the tail ``Q >= 1``."""
        parts = [self._draw(gen, m) for m in _chunks(n, self.tests * self.words + 1)]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _draw(self, gen, n: int) -> tuple[np.ndarray, np.ndarray]:
        u = random_words(gen, (n, self.tests, self.words))
        sign = random_words(gen, (n,)) >> np.uint64(63)
        bern = self.thresholds.test(u, gen)
        zero, bits, tail = bern[:, 0], bern[:, 1 : self.m + 1], bern[:, self.m + 1] & ~bern[:, 0]
        g = bits.astype(np.int64) @ self._powers if self.m else np.zeros(n, dtype=np.int64)
        if tail.any():  # probability omega: Q = 1 + Geometric(omega), exactly
            for i in np.flatnonzero(tail):
                g[i] += self._tail_q(gen) << self.m
        y = np.where(zero, 0, 1 + g)
        return np.where(sign.astype(bool), -y, y), tail

    def _tail_q(self, gen) -> int:
        """``1 + Geometric(omega)``: count the further successes of ``Bernoulli(omega)``."""
        index = np.array([[self.m + 1]])
        q = 1
        while q < 2**61 >> self.m:
            u = random_words(gen, (1, 1, self.words))
            if not self.thresholds.test(u, gen, index=index)[0, 0]:
                return q
            q += 1
        raise InvariantDPError(
            "the discrete Laplace tail exceeded 2**61 (probability below 1e-1000 for supported "
            "scales)."
        )


#: random words a vectorised step handles at once (memory, not timing: chunks depend on n)
_CHUNK_WORDS = 1 << 20


def _chunks(n: int, words_per_item: int) -> list[int]:
    size = max(1, _CHUNK_WORDS // max(words_per_item, 1))
    return [min(size, n - i) for i in range(0, n, size)] or [0]


# ---------------------------------------------------------------------------
# Bernoulli(exp(-sum_m N_m lambda_m)) by the bits of the integers N_m
# ---------------------------------------------------------------------------


class ExpBits:
    r"""``Bernoulli(exp(-sum_m N_m lambda_m))`` for integers ``0 <= N_m < 2**nbits[m]``.

    ``exp(-N lambda) = prod_k exp(-2**k lambda)**(bit k of N)``: one
    threshold test per possible bit, drawn whatever the bit (an unset bit's
    test is ignored), so the work depends only on ``nbits``.
    """

    def __init__(self, lambdas: list, nbits: list, words: int):
        self.nbits = list(nbits)
        bounds = [
            _bernoulli_bounds(2**k * lam, "exp")
            for lam, nb in zip(lambdas, self.nbits, strict=True)
            for k in range(nb)
        ]
        self.thresholds = Thresholds(bounds, words)
        self.tests = len(bounds)
        self.words = words

    def accept(self, terms: np.ndarray, gen) -> np.ndarray:
        """One Bernoulli per row of ``terms`` (uint64, shape ``(n, len(nbits))``)."""
        n = terms.shape[0]
        parts = [
            (terms[:, m : m + 1] >> np.arange(nb, dtype=np.uint64)) & np.uint64(1)
            for m, nb in enumerate(self.nbits)
        ]
        bits = np.concatenate(parts, axis=1).astype(bool)
        u = random_words(gen, (n, self.tests, self.words))
        c = self.thresholds.table
        less, tie = compare(u, c)
        tie &= bits  # a tie on an unset bit decides nothing
        if tie.any():
            for i, k in zip(*np.nonzero(tie), strict=True):
                less[i, k] = self.thresholds.exact_tie(int(k), gen)
        return np.all(less | ~bits, axis=1)


# ---------------------------------------------------------------------------
# the discrete Gaussian: CKS Algorithm 3 with constant-work trials
# ---------------------------------------------------------------------------

#: limbs of the acceptance's integer ``|a 2**s - p|``: twice a product of two fits in uint64
_LIMB = 31
_LIMB_MASK = (1 << _LIMB) - 1


class GaussianPlan:
    r"""Constant-work exact draws of :math:`N_{\mathbb Z}(0, \sigma^2)` for a rational ``sigma2``.

    Proposal ``Y ~ Lap_Z(sigma**2 / c)`` (:class:`LaplacePlan`) with
    ``c = p / 2**s`` close to CKS's ``sigma**2 / (floor(sigma) + 1)``, kept
    with probability ``exp(-(|Y| - c)**2 / (2 sigma**2))`` (CKS Algorithm 3
    holds for any proposal scale): with ``d = | |Y| 2**s - p |`` the exponent
    is ``d**2 lambda``, ``lambda = 1 / (2**(2s+1) sigma**2)``, decided by the
    bits of the products of the 31-bit limbs of ``d`` (:class:`ExpBits`),
    ``d`` computed limb by limb with borrows.  A proposal from the tail
    (``|Y| > 2**M``) is accepted by CKS Algorithm 1 in exact arithmetic on the
    slow path.
    """

    def __init__(self, sigma2: Fraction, words: int, tail_bits: float):
        self.sigma2 = sigma2
        sigma = math.sqrt(sigma2)
        target = float(sigma2) / (math.floor(sigma) + 1)
        self.s = max(0, 6 - math.floor(math.log2(target)))
        self.p = max(1, math.floor(Fraction(target) * 2**self.s))
        self.c = Fraction(self.p, 2**self.s)
        self.laplace = LaplacePlan(sigma2 / self.c, words, tail_bits)
        self.lam = 1 / (2 ** (2 * self.s + 1) * sigma2)
        # fast-path proposals have |Y| <= 2**M, so d <= max(2**(M + s), p)
        dbits = max(self.laplace.m + self.s + 1, self.p.bit_length())
        self.limbs = [min(_LIMB, dbits - _LIMB * j) for j in range(-(-dbits // _LIMB))]
        self.p_limbs = [(self.p >> (_LIMB * j)) & _LIMB_MASK for j in range(len(self.limbs))]
        self.pairs = [(j, k) for j in range(len(self.limbs)) for k in range(j, len(self.limbs))]
        lambdas = [self.lam * 2 ** (_LIMB * (j + k)) * (1 if j == k else 2) for j, k in self.pairs]
        nbits = [self.limbs[j] + self.limbs[k] for j, k in self.pairs]
        self.accept_bits = ExpBits(lambdas, nbits, words)
        self.tests = self.laplace.tests + self.accept_bits.tests
        self.words = words
        self.p_accept = self._acceptance_lower_bound()

    def _acceptance_lower_bound(self) -> Fraction:
        """A lower bound on a trial's acceptance: ``e**-1/2 P(| |Y| - c | <= sigma)``."""
        sigma = math.sqrt(self.sigma2)
        c = float(self.c)
        lo, hi = max(0, math.ceil(c - sigma)), math.floor(c + sigma)
        r = math.exp(-1 / float(self.laplace.t))
        # P(|Y| = 0) = (1 - r)/(1 + r); P(|Y| in [L, U]) = 2 (r**L - r**(U+1)) / (1 + r), L >= 1
        mass = 2 * (r ** max(lo, 1) - r ** (hi + 1)) / (1 + r) if hi >= max(lo, 1) else 0.0
        if lo == 0:
            mass += (1 - r) / (1 + r)
        return Fraction(math.exp(-0.5) * mass * (1 - 1e-6))

    def tv_per_draw(self) -> Fraction:
        """``P(F)``: the kept trial took the proposal's tail or had a tie, over acceptance."""
        trial = self.laplace.omega_hi + Fraction(self.tests, 2 ** (_WORD * self.words))
        return trial / self.p_accept

    def _terms(self, a: np.ndarray) -> np.ndarray:
        """The products of the limbs of ``d = |a 2**s - p|`` (uint64, one column per pair)."""
        au = a.astype(np.uint64)
        mask = np.uint64(_LIMB_MASK)
        x = []  # limbs of a * 2**s: bits [31 j - s, 31 j - s + 31) of a (0 <= a < 2**62)
        for j in range(len(self.limbs)):
            shift = _LIMB * j - self.s
            if shift >= 62 or shift <= -_LIMB:
                limb = np.zeros(a.shape, dtype=np.uint64)
            elif shift >= 0:
                limb = (au >> np.uint64(shift)) & mask
            else:
                limb = (au << np.uint64(-shift)) & mask
            x.append(limb.astype(np.int64))
        up, down = [], []  # a 2**s - p and p - a 2**s, limb by limb with borrows
        b_up = b_down = np.zeros(a.shape, dtype=np.int64)
        for xj, pj in zip(x, self.p_limbs, strict=True):
            v = xj - pj - b_up
            b_up = (v < 0).astype(np.int64)
            up.append(v + (b_up << _LIMB))
            w = pj - xj - b_down
            b_down = (w < 0).astype(np.int64)
            down.append(w + (b_down << _LIMB))
        below = b_up.astype(bool)  # a 2**s < p
        limb = [np.where(below, dj, uj).astype(np.uint64) for uj, dj in zip(up, down, strict=True)]
        return np.stack([limb[j] * limb[k] for j, k in self.pairs], axis=1)

    def trial(self, gen, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` independent trials: ``(proposal, accepted)``."""
        y, tail = self.laplace.draw(gen, n)
        a = np.where(tail, 0, np.abs(y))
        ok = self.accept_bits.accept(self._terms(a), gen)
        if tail.any():  # the proposal's tail: CKS Algorithm 1, exactly
            num, den = self.sigma2.numerator, self.sigma2.denominator
            for i in np.flatnonzero(tail):
                di = abs(abs(int(y[i])) * 2**self.s - self.p)
                ok[i] = _bernoulli_exp(di * di * den, 2 ** (2 * self.s + 1) * num, gen)
        return y, ok

    def draw(self, gen, n: int) -> np.ndarray:
        """``n`` exact draws: the first accepted of i.i.d. trials."""
        per = 4
        return first_accepted(self.trial, gen, n, per, "discrete Gaussian", self.tests * per)


def first_accepted(trial, gen, n: int, per_round: int, what: str, words: int) -> np.ndarray:
    """``n`` draws, each the first accepted of i.i.d. ``trial(gen, m) -> (value, ok)``.

    Each round gives every unfinished cell ``per_round`` trials (in chunks of
    ``words`` words per cell); the rounds and their sizes depend only on the
    acceptance flags, which are independent of the values kept.
    """
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    for _ in range(MAX_ROUNDS):
        if todo.size == 0:
            return out
        start = 0
        keep = np.zeros(todo.size, dtype=bool)
        for m in _chunks(todo.size, words):
            v, ok = trial(gen, m * per_round)
            v, ok = v.reshape(m, per_round), ok.reshape(m, per_round)
            hit = ok.any(axis=1)
            first = np.argmax(ok, axis=1)
            cells = todo[start : start + m]
            out[cells[hit]] = v[hit, first[hit]]
            keep[start : start + m] = ~hit
            start += m
        todo = todo[keep]
    raise too_many_rounds(what)


_PLANS = BoundedCache("constant-work sampling plans", maxsize=128)


def cached_plan(kind, key, build):
    """The plan of public parameters ``key`` (built once: releases repeat their parameters)."""
    return _PLANS.get((kind, key), build)
