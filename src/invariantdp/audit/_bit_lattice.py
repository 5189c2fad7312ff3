r"""Achievable-output-set tests (Mironov 2012): output classes by low-order bits.

:func:`lattice_classes` maps each double to its sign, binade and finest
dyadic lattice (or its exact bit pattern); :func:`achievable_set_test`
finds, on half of the releases, the classes that occur under one input and
are impossible or rarer under the other, and tests them on the other half
with the threshold tests of :mod:`._threshold`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._validation import InvariantDPError, check_in_open_unit, check_positive_int
from ..privacy import as_tradeoff
from ._threshold import AuditResult, audit_samples

_CLASS_KINDS = ("lattice", "value")
_MANTISSA = (1 << 52) - 1


def _release_matrix(name: str, value) -> np.ndarray:
    if np.iscomplexobj(value):
        raise TypeError(f"`{name}` must be real, got complex values.")
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 0 or a.shape[0] == 0:
        raise InvariantDPError(f"`{name}` must hold at least one release, got shape {a.shape}.")
    return np.ascontiguousarray(a.reshape(a.shape[0], -1))


def lattice_classes(values, *, kind="lattice") -> np.ndarray:
    r"""Class of each double by its low-order bits: the output classes of Mironov's test.

    A floating-point mechanism ``fl(x + noise)`` can only produce the
    doubles that its rounding reaches from ``x``; the low-order bits of an
    output therefore carry information about ``x`` that the noise law does
    not account for (Mironov 2012).  Two class maps expose them:

    * ``kind="lattice"``: the sign of ``y``, its binade (the exponent ``e``
      with ``2**e <= |y| < 2**(e+1)``) and the largest ``v`` such that ``y``
      is a multiple of ``2**v`` (``y = m 2**v`` with ``m`` odd: the finest
      dyadic lattice holding ``y``).  E.g. an odd multiple of ``2**-53`` in
      (-1, 1), which the rounded ``2 * (g + u)`` of a rescaled Tulap
      release reaches only from even data, or a double in (0, 1/4) finer
      than ``2**-53``, which ``fl(1 + noise)`` never produces.
    * ``kind="value"``: the exact 64-bit pattern, so each double is its own
      class; for outputs on a coarse grid (integers) this is the exact
      achievable-set test.

    Parameters
    ----------
    values : array_like of float
        Releases (any shape); integers are converted to float64 (exactly up
        to 2**53).
    kind : {"lattice", "value"}

    Returns
    -------
    numpy.ndarray of int64
        One code per entry, with the shape of ``values``.  For
        ``"lattice"`` and finite nonzero ``y`` the code is
        ``sign(y) * (4096 * (E + 1) + v + 1100)``, with ``E`` the biased
        exponent field of the double (``e + 1023``; 0 for subnormals) and
        ``v`` in [-1074, 1023]; ``+0`` is 0, ``-0`` is 1, ``+inf``/``-inf``
        are 2/-2 and NaN is 3.  For ``"value"``, the bit pattern as int64.

    References
    ----------
    Mironov, I. (2012). "On significance of the least significant bits for
    differential privacy", ACM CCS, Sec. 3 (achievable outputs of
    floating-point Laplace noise).

    Examples
    --------
    ``0.75 = 3 * 2**-2`` and ``0.625 = 5 * 2**-3`` share their binade but not
    their lattice; ``2**-2 + 3 * 2**-53`` is an odd multiple of ``2**-53``:

    >>> from invariantdp.audit import lattice_classes
    >>> c = lattice_classes([0.75, 0.625, -0.75, 0.25 + 3 * 2.0**-53, 0.0])
    >>> [int(abs(k) % 4096) - 1100 for k in c[:4]]  # v
    [-2, -3, -2, -53]
    >>> [int(abs(k) // 4096) - 1024 for k in c[:4]]  # e
    [-1, -1, -1, -2]
    >>> int(c[4]), bool(c[0] == -c[2])
    (0, True)
    """
    if kind not in _CLASS_KINDS:
        raise InvariantDPError(f"`kind` ({kind!r}) must be one of {_CLASS_KINDS}.")
    if np.iscomplexobj(values):
        raise TypeError("`values` must be real, got complex values.")
    y = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    bits = y.view(np.uint64)
    if kind == "value":
        return bits.view(np.int64).copy()
    expo = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    mant = (bits & np.uint64(_MANTISSA)).astype(np.int64)
    negative = (bits >> np.uint64(63)).astype(bool)
    normal = expo > 0
    significand = np.where(normal, mant | (1 << 52), mant)
    lowest = significand & -significand  # the lowest set bit, a power of two
    tz = np.frexp(lowest.astype(np.float64))[1].astype(np.int64) - 1  # exact
    v = np.where(normal, expo - 1075, -1074) + tz
    code = 4096 * (expo + 1) + v + 1100
    code = np.where(negative, -code, code)
    code = np.where(significand == 0, np.where(negative, 1, 0), code)
    special = expo == 0x7FF
    code = np.where(special & (mant == 0), np.where(negative, -2, 2), code)
    code = np.where(special & (mant != 0), 3, code)
    return code.astype(np.int64)


def _class_ids(A: np.ndarray, B: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    r"""Common integer ids of the output classes of the rows of ``A`` and ``B``."""
    codes = lattice_classes(np.concatenate([A, B]), kind=kind)
    if codes.shape[1] == 1:
        _, ids = np.unique(codes[:, 0], return_inverse=True)
    else:
        _, ids = np.unique(codes, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    return ids[: A.shape[0]], ids[A.shape[0] :]


def achievable_set_test(
    sample_x,
    sample_x_prime,
    claimed,
    *,
    classes="lattice",
    significance=0.01,
    max_tests=400,
    epsilon=None,
) -> AuditResult:
    r"""Achievable-output-set test (Mironov 2012): outputs possible under one input only.

    Each release is mapped to an output class (:func:`lattice_classes`;
    for a vector release, the tuple of the classes of its coordinates).
    On the first half of the releases the test estimates, for each class
    ``c``, the log likelihood ratio
    ``log((n'(c) + 1/2) / (n(c) + 1/2))`` of the class counts under the
    two inputs (classes unseen in that half get 0); on the second, held-out
    half it runs the threshold tests of :func:`audit_samples` on this score.
    A class that occurs under ``x'`` and never under ``x`` gets the top
    score, so the test ``reject x when the output is in that class`` has
    type I error 0 and power equal to the class's probability: for a
    pure-DP claim that is a violation with delta equal to that
    probability, which :attr:`AuditResult.delta_lower` bounds from below.

    Because the score is fixed before the held-out releases are looked at,
    and any function of a release is a post-processing of it, a mechanism
    that meets its claim passes with probability at least
    ``1 - significance``; in particular mechanisms whose outputs lie on a
    fixed grid (integers, ``2**-k Z``) reachable from every input pass.

    Parameters
    ----------
    sample_x, sample_x_prime : array_like, shape (n,) or (n, d)
        Independent releases (``n >= 20``) from each input, in the order
        drawn.
    claimed : TradeoffFunction or callable
        The claimed tradeoff function.
    classes : {"lattice", "value"}
        The class map of :func:`lattice_classes`.
    significance, max_tests, epsilon
        As in :func:`audit_samples`.

    Returns
    -------
    AuditResult
        With ``statistic`` equal to ``classes`` and ``n_samples`` the size
        of the held-out half.

    References
    ----------
    Mironov, I. (2012). "On significance of the least significant bits for
    differential privacy", ACM CCS, Sec. 3-5.

    Examples
    --------
    Floating-point Laplace noise, ``x + rng.laplace()``, at ``x = 0`` and
    ``x = 1``: 27% of the outputs at ``x = 0`` (most of those in
    (-1/4, 1/4)) lie on a lattice finer than ``2**-53``, which
    ``fl(1 + noise)`` never reaches.

    >>> import numpy as np
    >>> from invariantdp.audit import achievable_set_test
    >>> from invariantdp.privacy import eps_delta
    >>> rng = np.random.default_rng(0)
    >>> y0, y1 = rng.laplace(0.0, 1.0, 4000), 1.0 + rng.laplace(0.0, 1.0, 4000)
    >>> res = achievable_set_test(y0, y1, eps_delta(1.0))
    >>> res.passed, res.delta_lower > 0.2
    (False, True)

    The same outputs rounded to the integer grid pass:

    >>> achievable_set_test(np.round(y0), np.round(y1), eps_delta(1.0)).passed
    True
    """
    if classes not in _CLASS_KINDS:
        raise InvariantDPError(f"`classes` ({classes!r}) must be one of {_CLASS_KINDS}.")
    f = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    max_tests = check_positive_int("max_tests", max_tests, minimum=2)
    A = _release_matrix("sample_x", sample_x)
    B = _release_matrix("sample_x_prime", sample_x_prime)
    if A.shape != B.shape or A.shape[0] < 20:
        raise InvariantDPError(
            "`sample_x` and `sample_x_prime` must have the same shape with at least 20 "
            f"releases (got {A.shape} and {B.shape})."
        )
    n = A.shape[0]
    m = n // 2
    id0, id1 = _class_ids(A, B, classes)
    k = int(max(id0.max(), id1.max())) + 1
    c0 = np.bincount(id0[:m], minlength=k)
    c1 = np.bincount(id1[:m], minlength=k)
    score = np.log((c1 + 0.5) / (c0 + 0.5))
    res = audit_samples(
        score[id0[m:]],
        score[id1[m:]],
        f,
        significance=significance,
        max_tests=max_tests,
        epsilon=epsilon,
    )
    return _with_statistic(res, classes)


def _with_statistic(res: AuditResult, name: str) -> AuditResult:
    return replace(res, statistic=name)
