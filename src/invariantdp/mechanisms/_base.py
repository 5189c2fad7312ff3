"""What every mechanism shares: how its source of randomness is recorded.

A release drawn from a ``numpy.random.Generator`` (seeded or not) is a
*simulation*: PCG64 is predictable from its output, a user seed makes the
noise reproducible (two releases of neighbouring data with the same seed
differ by exactly the change in the data), and the floating-point samplers
leave value-dependent gaps in the output (Mironov 2012).  Only the
``secure=True`` path, exact integer sampling from :mod:`secrets`, makes a
release fit for publication.  Every mechanism records which of the two it
used in ``Release.metadata["randomness"]``; :attr:`Release.simulation` reads
it back and :meth:`Release.summary` prints it.
"""

from __future__ import annotations

from ..exceptions import InvariantDPError

__all__ = ["SECURE", "SIMULATION", "randomness_note", "refuse_secure"]

SECURE = "secure"
SIMULATION = "simulation"


def randomness_note(secure: bool) -> dict:
    """The ``metadata`` entries that record the source of a release's noise."""
    if secure:
        return {
            "randomness": SECURE,
            "sampler": "exact integer sampling from secrets (invariantdp.secure)",
        }
    return {
        "randomness": SIMULATION,
        "sampler": "numpy.random.Generator: a simulation, not for publication",
    }


def refuse_secure(mechanism: str, secure, *, alternatives: str) -> None:
    """Raise if ``secure=True`` is asked of a mechanism with no exact sampler.

    A floating-point mechanism cannot be made exact, so a production release
    through it is refused rather than produced with noise that may leak.
    """
    if not isinstance(secure, bool):
        raise TypeError(f"`secure` must be True or False, got {type(secure).__name__}.")
    if secure:
        raise InvariantDPError(
            f"`secure=True`: {mechanism} has no exact sampler (its floating-point noise "
            f"is attackable, Mironov 2012), so it cannot make a release for publication; "
            f"use {alternatives}, or `secure=False` for a simulation."
        )
