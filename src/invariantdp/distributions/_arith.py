r"""Exact arithmetic of the samplers: bounds of ``exp``, lazy comparisons, CKS Algorithm 1.

The constant-work samplers (:mod:`._constant`, :mod:`._exact_samplers`) decide every
draw by comparing random words with public thresholds; what they need to be
*exact* is here: rational bounds on ``exp(-x)`` at any precision
(:func:`exp_neg_bounds`, correctly rounded :mod:`decimal`), the lazy
comparison of a uniform with a number known by such bounds
(:func:`lazy_less`, the slow path of a tie), and ``Bernoulli(exp(-gamma))``
for a rational ``gamma`` by Canonne, Kamath & Steinke (2020), Algorithm 1
(the slow path of a draw from the far tail, whose run time may depend on
the draw: its probability is accounted for as ``timing_tv``).

References
----------
.. [1] Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete
   Gaussian for differential privacy", NeurIPS 33, Algorithm 1.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction

import numpy as np

from .._validation import InvariantDPError

__all__ = ["exp_neg_bounds", "lazy_less", "random_words"]

_WORD = 64


def random_words(gen, shape) -> np.ndarray:
    """Uniform 64-bit words of the given shape from ``gen.bytes`` (secrets or numpy)."""
    n = math.prod(shape)
    return np.frombuffer(gen.bytes(8 * n), dtype="<u8").reshape(shape)


def lazy_less(theta, gen) -> bool:
    """Whether a uniform ``V`` in [0, 1) is below a number known by bounds ``theta(level)``.

    ``V`` is refined a word at a time and the bounds by precision level until
    one side is certain; the number is never exactly dyadic for the
    transcendental probabilities here, so this ends with probability 1.
    """
    j, bits, level = 0, 0, 0
    for _ in range(10_000):
        lo, hi = theta(level)
        scale = 1 << bits
        if (j + 1) * lo.denominator <= lo.numerator * scale:  # V < (j+1)/2**bits <= lo
            return True
        if j * hi.denominator >= hi.numerator * scale:  # V >= j/2**bits >= hi
            return False
        if (hi - lo) * scale < 1:
            j = (j << _WORD) | int(random_words(gen, (1,))[0])
            bits += _WORD
        elif level < 8:
            level += 1
        else:
            break
    raise InvariantDPError("an exact comparison could not be decided at 5000 digits.")


def exp_neg_bounds(x: Fraction, digits: int) -> tuple[Fraction, Fraction]:
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


#: the name the Tulap truncation uses
_exp_neg_bounds = exp_neg_bounds


#: a hard cap on the trials of every rejection loop: each loop here accepts
#: with probability above 1/6, so hitting it means broken parameters, not bad luck
_MAX_TRIALS = 10_000


def _too_many_trials(what: str):
    return InvariantDPError(
        f"the exact {what} sampler rejected {_MAX_TRIALS} proposals in a row (probability "
        "below 1e-1000 for supported parameters): its parameters are outside the supported "
        "range."
    )


def _randbelow(n: int, gen) -> int:
    """Uniform integer in ``[0, n)`` for an arbitrary positive Python int ``n``.

    ``gen`` is a :class:`~invariantdp.secure.SecureGenerator` (its
    ``randbelow``, from :mod:`secrets`) or, for reproducible tests of the
    exact algorithms, a ``numpy.random.Generator``.
    """
    if not isinstance(gen, np.random.Generator):
        return gen.randbelow(n)
    if n < 2**62:
        return int(gen.integers(0, n))
    k = n.bit_length()
    words = (k + 61) // 62
    for _ in range(_MAX_TRIALS):  # accepts with probability > 1/2
        x = 0
        for _ in range(words):
            x = (x << 62) | int(gen.integers(0, 2**62))
        x >>= words * 62 - k
        if x < n:
            return x
    raise _too_many_trials("uniform integer")


def _bernoulli_exp_unit(num: int, den: int, gen) -> bool:
    """``Bernoulli(exp(-num/den))`` for ``0 <= num <= den`` (CKS Algorithm 1, gamma <= 1).

    Draws ``Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first
    failure and returns whether it came at an odd ``k``:
    ``P = sum_k (-1)^(k-1) gamma^(k-1)/(k-1)! ... = exp(-gamma)``.  The loop
    ends after ``k`` steps with probability ``gamma^k / k!``.
    """
    k = 1
    while _randbelow(den * k, gen) < num:
        k += 1
    return k % 2 == 1


def _bernoulli_exp(num: int, den: int, gen) -> bool:
    """``Bernoulli(exp(-num/den))`` for integers ``num >= 0``, ``den > 0`` (CKS Algorithm 1).

    ``exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma)))``: the
    loop over the whole part stops at the first failure (expected length
    below ``e / (e - 1)``), so large ``gamma`` costs nothing.
    """
    whole, rest = divmod(num, den)
    for _ in range(whole):
        if not _bernoulli_exp_unit(1, 1, gen):
            return False
    return _bernoulli_exp_unit(rest, den, gen)
