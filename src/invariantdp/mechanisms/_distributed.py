"""One agent's share of a distributed subspace-DP release (Gao, Gong & Yu 2022, Algorithm 4).

The noise of the projected and extended mechanisms (:mod:`._subspace_mechanisms`) never
depends on the data, so agents holding parts of ``x`` and a common seed
reproduce the central release exactly.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvariantDPError
from ..invariants import Invariants
from ._base import check_data, resolve_secure
from ._registry import find_mechanism

__all__ = ["distributed_privatize"]

_SECURE_ALTERNATIVES = (
    "discrete_laplace_mechanism(x, ..., secure=True) or discrete_gaussian_mechanism(x, ..., "
    "secure=True) on integer counts (exact integer noise; the invariants are not kept)"
)


def distributed_privatize(x_local, cells, invariants, *, mechanism, seed, secure=None, **params):
    r"""One agent's share of a distributed release (Gao, Gong & Yu, Algorithm 4).

    Agent ``l`` holds the entries ``x_local`` of the cells ``cells`` (flat,
    C-order indices).  It simulates the mechanism's noise ``e`` from the
    common ``seed`` -- by running the mechanism on zero data with the
    invariant *structure* (the noise of an additive mechanism does not depend
    on the data) -- and outputs ``x_local + e[cells]``.  Concatenating the
    agents' outputs gives exactly (bit for bit) the central release
    ``mechanism(x, invariants, rng=seed, **params).value``.

    The common seed is the point of the algorithm, and it makes the noise
    reproducible by every agent: the shares are a **simulation, not for
    publication** (as are the central float mechanisms, module notes), and
    ``secure=True`` is refused.

    Parameters
    ----------
    x_local : array_like, shape (k,)
        The agent's confidential entries.
    cells : array_like of int, shape (k,)
        Their flat indices in the full data.
    invariants : Invariants
        The invariant structure (values are ignored: agents need not know them).
    mechanism : {"projected_gaussian", "projected_laplace", "extended_gaussian", "extended_laplace"}
    seed : int or SeedSequence
        The common seed (a ``Generator`` is refused: its state is not shared).
    secure : None or bool, optional
        A simulation in any case (a shared seed cannot be secure): None (the
        default) or False; ``secure=True`` raises and names the mechanisms
        with an exact sampler.  The required ``seed`` says the simulation is
        intended, so no :class:`~invariantdp.exceptions.SimulationWarning` is
        given (the rule: :func:`~invariantdp.mechanisms._base.resolve_secure`).
    **params
        Privacy parameters and ``sensitivity`` of the mechanism.

    Returns
    -------
    numpy.ndarray, shape (k,)
        The agent's share, not a :class:`~invariantdp.Release`: its noise
        ``e[cells]`` is a marginal of the central noise law, which no noise
        family describes on its own.  The release is the concatenation of
        the shares, equal to the central ``mechanism(x, invariants,
        rng=seed, **params)``, whose Release records the law and guarantee.

    References
    ----------
    Gao, Gong & Yu (2022), Algorithm 4.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import distributed_privatize, projected_gaussian
    >>> x = np.array([4.0, 6.0, 1.0, 9.0]); inv = totals([0, 0, 1, 1])
    >>> a = distributed_privatize(x[:2], [0, 1], inv, mechanism="projected_gaussian", seed=5, mu=1)
    >>> b = distributed_privatize(x[2:], [2, 3], inv, mechanism="projected_gaussian", seed=5, mu=1)
    >>> bool(np.array_equal(np.concatenate([a, b]), projected_gaussian(x, inv, mu=1, rng=5).value))
    True
    """
    resolve_secure(
        secure,
        seed,
        "distributed_privatize (its noise comes from a seed shared by all agents)",
        exact=False,
        alternatives=_SECURE_ALTERNATIVES,
    )
    # the four mechanisms of this module, by their names in invariantdp.mechanisms.MECHANISMS
    run = find_mechanism(mechanism, kinds=("subspace",)).function
    if isinstance(seed, np.random.Generator) or seed is None:
        raise InvariantDPError(
            "`seed` must be an int or SeedSequence shared by all agents, "
            f"got {type(seed).__name__}."
        )
    if not isinstance(invariants, Invariants):
        raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
    xl = check_data(x_local, "x_local").reshape(-1)
    idx = np.asarray(cells)
    if idx.dtype.kind not in "iu" or idx.shape != xl.shape:
        raise InvariantDPError(
            f"`cells` must be integer indices, one per entry of `x_local` ({xl.size}), "
            f"got {idx.dtype} of shape {idx.shape}."
        )
    if idx.size and (idx.min() < 0 or idx.max() >= invariants.n_cells):
        raise InvariantDPError(f"`cells` must lie in [0, {invariants.n_cells}).")
    # values dropped (agents need not know them); the cached projection structure is shared
    e = run(
        np.zeros(invariants.shape), invariants.without_values(), rng=seed, **params
    ).value.reshape(-1)
    return xl + e[idx]
