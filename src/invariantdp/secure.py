r"""Noise for real releases: exact integer sampling from a cryptographic source.

Simulations use a ``numpy.random.Generator``: fast, seedable, and fine for
studying a mechanism.  A curator producing an *actual* release needs more,
and every mechanism records which of the two it used
(``Release.metadata["randomness"]`` is ``"secure"`` or ``"simulation"``,
:attr:`Release.simulation`, printed by :meth:`Release.summary`).

Why a seeded or numpy release is never for publication
-------------------------------------------------------
1. **A seed is a key.**  The noise is a deterministic function of the seed, so
   anyone who knows or guesses it subtracts the noise off.  Worse, two
   releases drawn with the same seed share their noise exactly::

       discrete_laplace([121, 80], epsilon=1, rng=42).value
         - discrete_laplace([120, 80], epsilon=1, rng=42).value   # == [1, 0]

   which is the difference between the two data sets, with no privacy at
   all.  Re-running a pipeline with a fixed seed, or reusing the seed of a
   published example, does exactly this.
2. **PCG64 is not cryptographic.**  Its state can be recovered from its
   output, so even an unseeded numpy release is predictable from other
   draws of the same generator.
3. **Floating-point samplers leak through their low-order bits.**  Mironov
   (2012) showed that the textbook floating-point Laplace sampler
   (``-b * log(U)`` with a random sign) leaves gaps in the set of attainable
   doubles that depend on the true value: most outputs of
   ``laplace(0.0, ...)`` (with ``|y| < 1/2`` and ``y * 2**53`` not an
   integer) cannot occur at ``x = 1``, so one release tells the neighbours
   apart.  The same holds for floating-point Gaussian and Tulap noise.

A ``secure=True`` release avoids all three: :class:`SecureGenerator` draws
every random word from the operating system's CSPRNG through :mod:`secrets`
and cannot be seeded, and the samplers use only uniform integers and exact
integer arithmetic, so the released double is a deterministic function
(post-processing) of an exact draw from the stated mechanism.

What a secure release reveals besides its value
------------------------------------------------
4. **Run time.**  A rejection sampler whose loops run longer for larger
   noise (CKS Algorithm 2 tries about ``|noise| epsilon / Delta``
   Bernoulli(exp(-1)) trials) tells whoever times a release -- a web
   service, a co-located process, a notebook's log -- about ``|z - x|``,
   hence about ``x`` beyond the output ``z`` (Jin et al. 2022: at
   epsilon = 1 a timing attack on the package's earlier sampler bounded the loss of one
   discrete Laplace release from below by 4.1).  Every secure sampler now
   does the same work for every draw
   (:mod:`invariantdp.distributions._constant`): each random choice is a
   comparison of random words with a public fixed-point threshold,
   vectorised over all draws, with no loop whose length depends on the
   value; the discrete Laplace needs no rejection at all (a zero test, a
   sign, and the binary digits of a geometric, which are independent), the
   discrete Gaussian is CKS Algorithm 3 with constant-work trials (rejected
   trials are i.i.d., so their number says nothing about the value kept),
   the Tulap truncation is tested in every trial, and the swap's
   derangement attempts are kept with probability 1/3 whatever the number
   of records selected.  A tie of a threshold test (probability ``2**-B``,
   ``B >= 128``) or a draw from the far tail is completed exactly on a
   slower path, so the *value* keeps exactly the stated law; the
   probability of a slow path, ``timing_tv``, bounds the total variation
   between (value, run time) and a release whose run time carries no
   information.  The guarantee recorded is the one of the pair:
   ``(epsilon, delta + (1 + e**epsilon) timing_tv)``-DP (a pure epsilon
   becomes (epsilon, delta) with delta below ``2**-64``), or rho-zCDP with
   ``timing_tv``, which shifts its tradeoff function
   (:func:`~invariantdp.privacy.zcdp_tradeoff`).
5. **Refusals and messages.**  Whether a secure call releases or raises is
   decided from public parameters (privacy parameters, sensitivity, grid or
   lattice, shape), checked before the data are read; data outside a
   mechanism's declared domain are mapped into it by a rule that does not
   depend on them (:mod:`invariantdp.mechanisms._side_channels`): clamped to
   ``|x| <= 2**52 - 1`` (integer mechanisms) or ``(2**52 - 1) * grid``,
   rounded to the Tulap lattice by ``floor(x / sensitivity + 1/2)``
   computed exactly (neighbours ``|x - x'| <= sensitivity`` stay one step
   apart).  Data no rule can map (non-integers for integer noise, NaN,
   strings) are refused as a whole, and no message, warning or log line of
   a secure path shows a data value.
6. **What the guarantee is for.**  Every release records the norm and the
   sensitivity its guarantee assumes, in its adjacency and metadata; the
   Tulap mechanism, whose sensitivity is per coordinate, records the
   guarantee composed over the coordinates that may change.

What it cannot cover: memory-access patterns and caches (numpy's sorts and
gathers touch memory in an order that depends on the values), the
operating system and the interpreter (a process that can read this one's
memory, or measure its power, reads everything), and the run time of the
work around a release (reading the data, building the output, pandas in
the swap), which depends on the data's size and structure (public) but is
not audited value by value.  :func:`invariantdp.audit.audit_timing` tests
the run time of a mechanism statistically; it cannot prove its absence.

``secure=True`` on a mechanism switches it to these samplers (``rng`` must
then be ``None``, or a :class:`SecureGenerator`: a secure release cannot be
reproduced from a seed); they are also the default of these mechanisms when
neither ``rng`` nor ``secure`` is given (a seed or ``secure=False`` makes a
simulation; the rule is :func:`invariantdp.mechanisms._base.resolve_secure`):

============================================  ==============================================
mechanism                                     production release (``secure=True``)
============================================  ==============================================
``discrete_laplace``                          exact ``Lap_Z(Delta/epsilon)``; (epsilon,
                                              delta)-DP with delta the run time's share
``discrete_gaussian``                         exact ``N_Z(0, sigma^2)``; rho-zCDP (CKS Thm 4)
                                              with ``timing_tv``
``laplace``                                   ``x`` clamped and rounded to a power-of-two
                                              grid ``gamma``, plus ``gamma * Lap_Z(t)``
                                              calibrated to the rounded sensitivity
``gaussian``                                  the same with ``gamma * N_Z(0, s^2)``;
                                              rho-zCDP, calibrated so that the requested
                                              (epsilon, delta) holds with the run time
                                              (CKS Cor. 13, ``delta - 2**-64``)
``tulap``, ``odds_ratio_release``             ``x`` rounded to the lattice
                                              ``sensitivity * k``: ``(k + G) + U`` with
                                              ``G`` exact, ``U`` on a ``2^-53`` grid, the
                                              truncation (``delta > 0``) decided exactly
``permutation_swap``                          exact Bernoulli(p) selection and uniform
                                              derangements, work independent of which
                                              records swap
``lp_mechanism``                              refused (``refuse_secure``): no exact sampler
``knorm``, ``semi_dp_*``, ``projected_*``,    see each docstring: a mechanism without an
``extended_*``, ``conditional_release``       exact sampler refuses ``secure=True``
============================================  ==============================================

Tulap (:func:`~invariantdp.mechanisms.tulap_mechanism`).  With ``x`` rounded
to the lattice ``sensitivity * Z`` (``k = floor(x / sensitivity + 1/2)``,
clamped to ``|k| <= 2**51 - 1``), the release is
``sensitivity * fl((k + G) + U)``: ``G`` is the exact discrete Laplace
``Lap_Z(1/epsilon)`` and ``U`` the centre of the ``2^-53``-wide cell of
``(-1/2, 1/2)`` that holds a continuous uniform ``U_c``.  The cells tile the
integers, so ``(k + G, U)`` is a function of the exact Tulap draw
``k + G + U_c``, and the double released is a function of that: nothing
about ``x`` beyond the Tulap mechanism can leak.  For ``delta > 0`` the
truncation to the central ``1 - q`` mass is decided on ``(G, U_c)`` alone,
exactly: the boundary cell is found in interval arithmetic on
``b = exp(-epsilon)`` (correctly rounded :mod:`decimal` exponentials), and
every trial compares its cell, refined by 64 more random bits, with the
boundary in fixed point (a tie, probability ``2**-117``, is refined bit by
bit until it is provably on one side).  The truncated law is therefore exactly
``Tulap(0, exp(-epsilon), q)`` with the real ``b`` and ``q`` of the
doubles ``epsilon`` and ``delta``; the release's ``NoiseLaw`` records the
nearest doubles.  When ``q > 1/2`` (e.g. ``epsilon = 1e-9, delta = 0.1``,
acceptance ``1 - q ~ 5e-9`` for plain rejection) the integer part is
proposed uniformly on the truncated range and accepted with an exact
``Bernoulli(exp(-epsilon * abs(k)))``; every trial is accepted with
probability above 1/6 and the rounds are capped (an error, never a hang).

Supported ranges.  Integer noise is added exactly while it stays below
``2**52``: noise scales (in grid or integer units) above ``2**46`` are
refused (public parameters), which keeps ``|noise| >= 2**52`` below
probability ``1e-27``; data are clamped as above.  The floating-point
samplers refuse noise scales above ``1e300`` (``inf`` releases).

References
----------
.. [1] Mironov, I. (2012). "On significance of the least significant bits
   for differential privacy", ACM CCS.
.. [2] Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete
   Gaussian for differential privacy", NeurIPS 33, Algorithms 1-3,
   Theorem 4, Corollary 13.
.. [3] Jin, J., McMurtry, E., Rubinstein, B. I. P. and Ohrimenko, O. (2022).
   "Are we there yet? Timing and floating-point attacks on differential
   privacy systems", IEEE S&P.
"""

from __future__ import annotations

import secrets

from ._rng import ExactSource, as_generator
from .exceptions import InvariantDPError

__all__ = ["SecureGenerator", "random_source"]


class SecureGenerator(ExactSource):
    """Uniform integers from the operating system's CSPRNG (:mod:`secrets`).

    Implements the calls the exact samplers make: ``bytes(length)`` (the
    random words of the constant-work samplers), ``randbelow(n)`` and
    ``integers(low, high)`` (uniform integers of arbitrary precision),
    ``randbits(k)`` and ``random()`` (a double in ``[0, 1)`` with 53 random
    bits).  Every call reads fresh bytes from :func:`os.urandom` through
    :mod:`secrets`: there is no state to seed, copy, share between threads or
    inherit across a fork.

    Parameters
    ----------
    None
        ``SecureGenerator()`` takes no arguments: there is no seed, since a
        seeded source would be reproducible, hence predictable.

    References
    ----------
    Mironov (2012), ACM CCS (floating-point samplers leak); Canonne, Kamath &
    Steinke (2020), Algorithms 1-3 (exact samplers from uniform integers).

    Examples
    --------
    >>> from invariantdp.secure import SecureGenerator
    >>> g = SecureGenerator()
    >>> 0 <= g.integers(0, 10) < 10
    True
    >>> 0.0 <= g.random() < 1.0
    True
    """

    __slots__ = ()

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes (:func:`secrets.token_bytes`): the constant-work samplers'
        source, read as 64-bit words."""
        return secrets.token_bytes(length)

    def randbits(self, k: int) -> int:
        """``k`` random bits as a non-negative integer."""
        return secrets.randbits(k)

    def randbelow(self, n: int) -> int:
        """One uniform integer in ``[0, n)``, for any Python int ``n > 0``."""
        return secrets.randbelow(n)

    def integers(self, low, high=None):
        """One uniform integer in ``[low, high)`` (or ``[0, low)``)."""
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high)
        if high <= low:
            raise InvariantDPError(f"`high` ({high}) must be > `low` ({low}).")
        return low + secrets.randbelow(high - low)

    def random(self) -> float:
        """A uniform double in ``[0, 1)``: 53 random bits over ``2**53``."""
        return secrets.randbits(53) / 9007199254740992.0

    def __repr__(self) -> str:
        return "SecureGenerator(secrets)"


def random_source(rng, secure):
    """The source of randomness of a mechanism: ``SecureGenerator`` or a numpy Generator.

    ``secure=True`` takes ``rng=None`` (a fresh :class:`SecureGenerator`) or a
    :class:`SecureGenerator`; a seed or a numpy generator is refused rather
    than resolved silently (a seeded generator is not secure, and a secure
    draw cannot be seeded).  ``secure=False`` takes what
    ``numpy.random.default_rng`` takes and refuses a :class:`SecureGenerator`:
    a release from it would be recorded as a simulation.

    Parameters
    ----------
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator
    secure : bool

    Returns
    -------
    SecureGenerator or numpy.random.Generator

    Raises
    ------
    TypeError
        If ``secure`` is not a bool.
    InvariantDPError
        If ``rng`` does not fit ``secure`` (see above).

    References
    ----------
    Mironov (2012), ACM CCS; Canonne, Kamath & Steinke (2020), Algorithms 1-3.

    Examples
    --------
    >>> from invariantdp.secure import random_source
    >>> random_source(None, True)
    SecureGenerator(secrets)
    >>> random_source(1, True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    invariantdp.exceptions.InvariantDPError: `rng` must be None when `secure=True` ...
    """
    if not isinstance(secure, bool):
        raise TypeError(
            f"`secure` must be True or False, got {type(secure).__name__} ({secure!r})."
        )
    if isinstance(rng, SecureGenerator):
        if secure:
            return rng
        raise InvariantDPError(
            "`rng` is a SecureGenerator but `secure=False`: pass `secure=True` for a "
            "release from the operating system's CSPRNG (recorded as secure), or a seed or "
            "numpy Generator for a simulation."
        )
    if not secure:
        return as_generator(rng)
    if rng is not None:
        raise InvariantDPError(
            "`rng` must be None when `secure=True` (got "
            f"{type(rng).__name__}): secure noise comes from the operating system's CSPRNG "
            "and cannot be seeded; drop `rng`, or use `secure=False` for a reproducible "
            "simulation."
        )
    return SecureGenerator()
