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

    Parameters
    ----------
    *args
        As for ``ValueError``: the package passes one message naming the
        argument, echoing its value and stating the rule
        ("`delta` (1.5) must be in [0, 1).").

    See Also
    --------
    ConvergenceWarning, SimulationWarning : the package's warnings.

    References
    ----------
    Python documentation, "Built-in Exceptions" (``ValueError``, and
    ``TypeError`` for arguments of the wrong type).

    Examples
    --------
    Catch it as the package's error, or as any ``ValueError``:

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

    Parameters
    ----------
    *args
        As for any ``Warning``: the message, which gives the max R-hat and
        min ESS found and their targets (< 1.01, >= 100).

    See Also
    --------
    invariantdp.mechanisms.conditional_release : the function that emits it.

    References
    ----------
    Gong & Meng (2020), Sec. 2.3 and Algorithm 1 (the MCMC implementation of
    the congenial release).

    Examples
    --------
    Silence it, e.g. in a simulation study, or turn it into an error:

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", ConvergenceWarning)
    ...     try:
    ...         warnings.warn("max R-hat 1.2 (want < 1.01)", ConvergenceWarning)
    ...     except ConvergenceWarning as w:
    ...         print(w)
    max R-hat 1.2 (want < 1.01)
    >>> issubclass(ConvergenceWarning, UserWarning)
    True
    """


class SimulationWarning(UserWarning):
    """A release was drawn as a simulation that nobody asked for.

    Mechanisms with an exact sampler are secure by default (without
    ``rng``); a mechanism with none (K-norm, semi-DP, projected and
    extended, conditional releases, the swap of a Dask frame) can only make
    a simulation, and warns when it is called with neither ``rng`` (a seed
    or generator) nor ``secure=False`` to say that a simulation is intended
    (:func:`invariantdp.mechanisms._base.resolve_secure`, the rule).
    Whether a release is a simulation is recorded in
    ``metadata["randomness"]`` (:attr:`Release.simulation
    <invariantdp.Release.simulation>`).

    Parameters
    ----------
    *args
        As for any ``Warning``: the message, which names the mechanism and
        what to use for a release to publish.

    See Also
    --------
    invariantdp.secure : why a release drawn from a numpy generator is a
        simulation, and how to draw one fit for publication.

    References
    ----------
    Mironov (2012), "On significance of the least significant bits for
    differential privacy", ACM CCS (floating-point samplers leak); Python
    documentation, :mod:`warnings`, "The Warnings Filter".

    Examples
    --------
    A mechanism without an exact sampler, called without ``rng``:

    >>> import warnings
    >>> from invariantdp.mechanisms import lp_mechanism
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r = lp_mechanism([1.0, 2.0], p=2, epsilon=1.0)
    >>> caught[0].category is SimulationWarning, r.simulation
    (True, True)

    A seed (or ``secure=False``) says a simulation is intended: no warning.

    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", SimulationWarning)
    ...     lp_mechanism([1.0, 2.0], p=2, epsilon=1.0, rng=1).simulation
    True
    >>> issubclass(SimulationWarning, UserWarning)
    True
    """
