"""Normalisation of the ``rng`` argument (SPEC 7)."""

from __future__ import annotations

import numpy as np

__all__ = ["as_generator"]


def as_generator(rng=None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``rng``.

    ``rng`` may be None (fresh OS entropy), an int or a ``SeedSequence`` (a
    seeded generator), or a ``Generator`` (used as is, so its state advances).
    The legacy ``RandomState`` and global state are refused, since they would
    make replicate simulations share streams silently.
    """
    if isinstance(rng, np.random.Generator):
        return rng
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
