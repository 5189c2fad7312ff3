"""The exceptions and warnings that invariantdp raises.

All value errors derive from :class:`InvariantDPError`, itself a
``ValueError``, so ``except ValueError`` keeps working; wrong types raise the
built-in ``TypeError``.
"""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "InvariantDPError", "SimulationWarning"]


class InvariantDPError(ValueError):
    """Base class of the package's value errors (a ``ValueError``).

    Raised for invalid values (a non-positive epsilon, a table that breaks
    its invariants, a malformed release document); wrong types raise
    ``TypeError`` instead.

    Examples
    --------
    >>> from invariantdp.distributions import tulap_params
    >>> try:
    ...     tulap_params(-1.0)
    ... except InvariantDPError as exc:
    ...     print(isinstance(exc, ValueError), str(exc).startswith("`epsilon` (-1.0) must be > 0"))
    True True
    """


class ConvergenceWarning(UserWarning):
    """The Markov chain diagnostics (R-hat, ESS) indicate poor mixing.

    Emitted by :func:`~invariantdp.mechanisms.conditional_release` when the
    chains' max R-hat or min ESS misses its target; the release is still
    returned, but it is only approximately a draw of the congenial target.

    References
    ----------
    Gong & Meng (2020), Sec. 2.3 and Algorithm 1 (the MCMC implementation of
    the congenial release).

    Examples
    --------
    Silence it, e.g. in a simulation study, with
    ``warnings.simplefilter("ignore", ConvergenceWarning)``.

    >>> issubclass(ConvergenceWarning, UserWarning)
    True
    """


class SimulationWarning(UserWarning):
    """A release made for simulation is about to be used as if it were for publication.

    Part of the public API so that it can be filtered; no function of this
    version emits it.

    Examples
    --------
    >>> issubclass(SimulationWarning, UserWarning)
    True
    """
