"""The exceptions and warnings that invariantdp raises.

All value errors derive from :class:`InvariantDPError`, itself a
``ValueError``, so ``except ValueError`` keeps working; wrong types raise the
built-in ``TypeError``.
"""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "InvariantDPError", "SimulationWarning"]


class InvariantDPError(ValueError):
    """Base class of the package's value errors (a ``ValueError``)."""


class ConvergenceWarning(UserWarning):
    """The Markov chain diagnostics (R-hat, ESS) indicate poor mixing."""


class SimulationWarning(UserWarning):
    """A release made for simulation is about to be used as if it were for publication."""
