r"""Noise for real releases: exact integer sampling from a cryptographic source.

Simulations use a ``numpy.random.Generator``: fast, seedable, and fine for
studying a mechanism.  A curator producing an *actual* release needs more:

1. **A cryptographically secure source.**  NumPy's PCG64 is predictable from
   its output; :class:`SecureGenerator` draws every random integer from the
   operating system's CSPRNG through :mod:`secrets`, and cannot be seeded.
2. **No floating-point artefacts.**  Mironov (2012) showed that the textbook
   floating-point Laplace sampler (``-b * log(U)`` with a random sign) leaves
   gaps in the set of attainable doubles that depend on the true value, so a
   single release can reveal it exactly; the same holds for floating-point
   Gaussian samplers.  The secure samplers here use only uniform integers
   and exact rational arithmetic (:class:`fractions.Fraction`): the discrete
   Laplace by CKS Algorithm 2 (Bernoulli(exp(-gamma)) by Algorithm 1), the
   discrete Gaussian by CKS Algorithm 3 (Canonne, Kamath & Steinke 2020).

``secure=True`` on a mechanism switches it to these samplers (``rng`` must
then be ``None``: a secure release cannot be reproduced from a seed):

========================================  ==========================================
mechanism                                 production release
========================================  ==========================================
``discrete_laplace(secure=True)``         safe: exact ``Lap_Z(Delta/epsilon)``
``discrete_gaussian(secure=True)``        safe: exact ``N_Z(0, sigma^2)``
``tulap(secure=True)``,                   safe: integer part exact ``Lap_Z(1/epsilon)``,
``odds_ratio_release(secure=True)``       plus an independent uniform on a 2^-53 grid
``permutation_swap(secure=True)``         safe: exact Bernoulli(p) selection and
                                          uniform derangements from ``secrets``
``laplace``, ``gaussian``, ``lp_mechanism``,  **not safe** (floating-point noise, Mironov
``knorm``, ``semi_dp_*``, ``projected_*``,    2012): for simulation and research; release
``extended_*``, ``conditional_release``      integer data with the discrete mechanisms
========================================  ==========================================

The Tulap release ``x + G + U`` (``G`` exact discrete Laplace, ``U`` uniform
on a grid symmetric about 0) is a post-processing of the exact geometric
mechanism ``x + G`` for ``delta = 0``; for ``delta > 0`` the truncation to the
central ``1 - q`` mass is decided on the double ``G + U`` (an error of at most
one unit in the last place at the bounds).  The shape ``b = exp(-epsilon)`` is
exact in the secure sampler, while the release's ``NoiseLaw`` records the
nearest double.

References
----------
.. [1] Mironov, I. (2012). "On significance of the least significant bits
   for differential privacy", ACM CCS.
.. [2] Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete
   Gaussian for differential privacy", NeurIPS 33, Algorithms 1-3.
"""

from __future__ import annotations

import secrets

from ._rng import as_generator
from ._validation import InvariantDPError

__all__ = ["SecureGenerator", "random_source"]


class SecureGenerator:
    """Uniform integers from the operating system's CSPRNG (:mod:`secrets`).

    Implements the two calls the exact samplers make, ``integers(low, high)``
    (one integer in ``[low, high)``, arbitrary precision) and ``random()``
    (a double in ``[0, 1)`` with 53 random bits).  It has no state and no
    seed.

    Examples
    --------
    >>> from invariantdp.secure import SecureGenerator
    >>> g = SecureGenerator()
    >>> 0 <= g.integers(0, 10) < 10
    True
    >>> 0.0 <= g.random() < 1.0
    True
    """

    def integers(self, low, high=None):
        """One uniform integer in ``[low, high)`` (or ``[0, low)``)."""
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high)
        if high <= low:
            raise InvariantDPError(f"`high` ({high}) must be > `low` ({low}).")
        return low + secrets.randbelow(high - low)

    def randbits(self, k: int) -> int:
        """``k`` random bits as a non-negative integer."""
        return secrets.randbits(k)

    def random(self) -> float:
        """A uniform double in ``[0, 1)``: 53 random bits over ``2**53``."""
        return secrets.randbits(53) / 9007199254740992.0

    def __repr__(self) -> str:
        return "SecureGenerator(secrets)"


def random_source(rng, secure):
    """The source of randomness of a mechanism: ``SecureGenerator`` or a numpy Generator.

    ``secure=True`` with an ``rng`` is refused rather than resolved silently:
    a seeded generator is not secure, and a secure draw cannot be seeded.

    Examples
    --------
    >>> from invariantdp.secure import random_source
    >>> random_source(None, True)
    SecureGenerator(secrets)
    >>> random_source(1, True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    invariantdp._validation.InvariantDPError: `rng` must be None when `secure=True` ...
    """
    if not isinstance(secure, bool):
        raise TypeError(
            f"`secure` must be True or False, got {type(secure).__name__} ({secure!r})."
        )
    if not secure:
        if isinstance(rng, SecureGenerator):
            return rng
        return as_generator(rng)
    if rng is not None:
        raise InvariantDPError(
            "`rng` must be None when `secure=True` (got "
            f"{type(rng).__name__}): secure noise comes from the operating system's CSPRNG "
            "and cannot be seeded; drop `rng`, or use `secure=False` for a reproducible "
            "simulation."
        )
    return SecureGenerator()
