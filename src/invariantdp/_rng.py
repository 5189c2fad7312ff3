"""Normalisation of the ``rng`` argument (SPEC 7), and the one rule for a secure source.

Two kinds of source exist: a ``numpy.random.Generator`` (or what
``numpy.random.default_rng`` takes), for simulations and every
floating-point draw, and a :class:`~invariantdp.secure.SecureGenerator`
(an :class:`ExactSource`), which only the exact samplers of a secure release
take.  The rule, everywhere: a function that draws floating point normalises
its ``rng`` with :func:`as_generator`, which refuses an exact source with an
:class:`~invariantdp.exceptions.InvariantDPError` saying so; an exact sampler
takes either through :func:`exact_source`; a mechanism with ``secure=`` picks
between them with :func:`invariantdp.secure.random_source`.
"""

from __future__ import annotations

import numpy as np

from .exceptions import InvariantDPError

__all__ = ["ExactSource", "as_generator", "exact_source"]


class ExactSource:
    """The type of a source of randomness that only the exact samplers take.

    :class:`~invariantdp.secure.SecureGenerator` is one: its words come from
    :mod:`secrets`, and a floating-point draw from it would be neither
    reproducible (a simulation) nor exact (a release).
    """


def as_generator(rng=None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``rng``.

    ``rng`` may be None (fresh OS entropy), an int or a ``SeedSequence`` (a
    seeded generator), or a ``Generator`` (used as is, so its state advances).
    The legacy ``RandomState`` and global state are refused, since they would
    make replicate simulations share streams silently; so is an
    :class:`ExactSource` (a ``SecureGenerator``), which only exact samplers take.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, ExactSource):
        raise InvariantDPError(
            f"`rng` is a {type(rng).__name__}, the source of the exact samplers of a secure "
            "release (`secure=True`); this call draws floating-point noise: pass None, a seed "
            "or a numpy Generator (a simulation)."
        )
    if isinstance(rng, bool):
        raise TypeError(f"`rng` must be None, an int, a SeedSequence or a Generator, got {rng!r}.")
    if rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence):
        if isinstance(rng, int | np.integer) and rng < 0:
            raise ValueError(f"`rng` ({rng}) must be a non-negative seed.")
        return np.random.default_rng(rng)
    raise TypeError(
        "`rng` must be None, an int, a SeedSequence or a numpy.random.Generator, "
        f"got {type(rng).__name__}."
    )


def exact_source(rng=None):
    """``rng`` itself if it is an :class:`ExactSource`, else :func:`as_generator` of it.

    What the exact samplers draw their random words from: a secure source for
    a release, or a numpy generator to test them reproducibly.
    """
    return rng if isinstance(rng, ExactSource) else as_generator(rng)
