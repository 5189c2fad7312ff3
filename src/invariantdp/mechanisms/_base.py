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

import numpy as np

from .._validation import check_delta, check_epsilon, check_finite_array, check_positive
from ..exceptions import InvariantDPError
from ..release import Release

__all__ = [
    "SECURE",
    "SIMULATION",
    "check_data",
    "gaussian_calibration",
    "make_release",
    "randomness_note",
    "refuse_secure",
    "resolve_sensitivity",
]

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


def check_data(x, name: str = "x") -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        # no defensive copy: mechanisms never write to x (the release is x + noise)
        arr = x
        if not np.isfinite(arr).all():
            check_finite_array(name, x)  # raises with the standard message
    else:
        if np.iscomplexobj(x):  # np.asarray(..., float) would drop the imaginary part
            raise TypeError(f"`{name}` must be real, got complex values.")
        arr = check_finite_array(name, x)
    if arr.size == 0:
        raise InvariantDPError(f"`{name}` must not be empty.")
    return arr


def resolve_sensitivity(sensitivity, p, *, dim: int | None = None, transform=None) -> float:
    """A positive sensitivity: a number, or the largest ``l_p`` norm of a space.

    ``transform`` maps the difference vectors first (e.g. ``Q_N^T`` for the
    extended mechanisms of Gao, Gong & Yu).
    """
    if np.ndim(sensitivity) == 0:
        return check_positive("sensitivity", sensitivity)
    S = check_finite_array("sensitivity", sensitivity)
    if S.ndim != 2 or S.shape[0] == 0:
        raise InvariantDPError(
            "`sensitivity` must be a positive number or a 2-D array of difference "
            f"vectors (one per row), got shape {S.shape}."
        )
    if dim is not None and S.shape[1] != dim:
        raise InvariantDPError(
            f"`sensitivity` vectors must have {dim} coordinates like the data, got {S.shape[1]}."
        )
    if transform is not None:
        S = transform(S)
    value = float(np.max(np.linalg.norm(S, ord=p, axis=1)))
    if not value > 0:
        raise InvariantDPError("`sensitivity` space must contain a nonzero difference vector.")
    return value


def gaussian_calibration(mu, epsilon, delta):
    """``(mu, guarantee params, calibration note)`` from mu or (epsilon, delta)."""
    if mu is not None:
        if epsilon is not None or delta is not None:
            raise InvariantDPError(
                "give either `mu` or (`epsilon`, `delta`), not both; "
                f"got mu={mu}, epsilon={epsilon}, delta={delta}."
            )
        mu = check_positive("mu", mu)
        return mu, {"mu": mu}, "mu-GDP"
    if epsilon is None or delta is None:
        raise InvariantDPError(
            "Gaussian noise needs `mu` (mu-GDP) or both `epsilon` and `delta`; "
            f"got epsilon={epsilon}, delta={delta}."
        )
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvariantDPError(f"`delta` ({delta}) must be in (0, 1) for Gaussian noise.")
    from ..privacy.accounting import eps_delta_to_gdp  # lazy: written concurrently

    mu = float(eps_delta_to_gdp(epsilon, delta))
    return (
        mu,
        {"mu": mu, "epsilon": epsilon, "delta": delta},
        "Balle & Wang (2018) exact: mu-GDP with delta(epsilon) equal to the target",
    )


def make_release(value, mechanism, noise, guarantee, *, data_shape, metadata, invariants=None):
    """A Release of an identity query.

    A release whose ``metadata`` does not say where its noise came from is
    recorded as a simulation (:func:`randomness_note`).
    """
    return Release(
        value=value,
        mechanism=mechanism,
        noise=noise,
        guarantee=guarantee,
        invariants=invariants,
        query=None,
        data_shape=data_shape,
        metadata={"query": "identity", **randomness_note(False), **metadata},
    )
