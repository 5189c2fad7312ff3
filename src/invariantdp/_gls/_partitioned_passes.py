r"""The dense-factor passes on a tree cut into parts: one subtree in memory at a time.

The two passes of :mod:`._block_passes` touch a unit only through its parent
and its children, and what a subtree tells its parent bottom-up is its root's
summary :math:`(z_r, V_r)` (its estimate and covariance given the subtree's
measurements); top-down, the subtree needs only its root's final
:math:`(x_r, F_r)`.  So a tree can be solved part by part:

1. bottom-up, each part (a subtree, e.g. a county's tracts, block groups and
   blocks) is solved to its root summary (:func:`partitioned_bottom_up`) and dropped;
2. the levels above the parts are solved from the summaries
   (:func:`partitioned_bottom_up` with ``leaves=``), then top-down (:func:`partitioned_top_down`);
3. each part is solved bottom-up again and top-down from its root's
   :math:`(x_r, F_r)` (:func:`partitioned_top_down` with ``root=``).

The arithmetic is that of :func:`~._block_passes.solve_blocks` on every
unit, in the same algebra (a :class:`~._dense_factors.FactorAlgebra` whose
dense attributes are those of the whole tree, :func:`tree_dense`), so the
estimates agree with the one-piece solve to rounding.  Memory is bounded by
the largest part and the summaries (``2^|C|`` blocks ``m x m`` per part root).

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (the two passes; Section 4, the summaries a subtree
passes to its parent).
"""

from __future__ import annotations

from ..exceptions import InvariantDPError
from ._block_passes import (
    BlockSolution,
    _bottom_up,
    _check_own,
    _own,
    _top_down,
    block_path_refusal,
    empty_solution,
)
from ._dense_factors import FactorAlgebra, dense_attributes
from ._problem import Problem

__all__ = [
    "partitioned_bottom_up",
    "partitioned_top_down",
    "replace_root",
    "tree_dense",
]


def tree_dense(problem: Problem) -> frozenset:
    """The attributes a problem's recodes and zeros keep dense (see :func:`dense_attributes`)."""
    return frozenset(dense_attributes(problem))


def replace_root(problem: Problem, root: Problem) -> Problem:
    """``problem`` with its level-0 measurements, invariants and zeros taken from ``root``.

    ``root`` is a one-level problem over the same units (a
    :meth:`Problem.subtree` of the tree above, whose items may have been
    moved onto these units from their parents); ``problem``'s own level-0
    items are dropped.
    """
    if root.sizes[0] != problem.sizes[0] or len(root.sizes) != 1:
        raise InvariantDPError(
            f"the root problem has {root.sizes} units per level; expected one level of "
            f"{problem.sizes[0]} units."
        )

    def keep(items):
        return [it for it in items if it.level > 0]

    return Problem(
        problem.shape,
        problem.parents,
        keep(problem.measurements) + list(root.measurements),
        keep(problem.equalities) + list(root.equalities),
        keep(problem.zeros) + list(root.zeros),
        [c for c in problem.linear if c.level > 0] + list(root.linear),
    )


def partitioned_bottom_up(problem: Problem, dense, names=None, leaves=None) -> BlockSolution:
    """The bottom-up pass of ``problem`` in the algebra with dense attributes ``dense``.

    Parameters
    ----------
    problem : Problem
        A tree (or forest) of units; see :func:`~._block_passes.solve_blocks`.
    dense : collection of int
        The dense attributes of the whole tree; must include the problem's own.
    names : dict, optional
        ``{level: (level name, geocodes)}`` for error messages.
    leaves : tuple, optional
        ``(z, V, zero)`` of the finest level, the summaries of parts solved
        elsewhere; that level's own items are then not used (they are in
        the parts).

    Returns
    -------
    BlockSolution
        With ``z, V, sinv, zero`` per level; ``x, F, G`` are set by :func:`partitioned_top_down`.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp._gls import Measurement, Problem, solve_blocks
    >>> prob = Problem((2,), [np.array([-1]), np.array([0, 0])],
    ...     measurements=[Measurement(1, (0,), np.arange(2), np.array([[3.0, 1], [2, 2]]),
    ...                               np.ones(2))])
    >>> part = partitioned_bottom_up(prob, dense=())
    >>> np.allclose(part.z[0], solve_blocks(prob).z[0])
    True
    """
    why = block_path_refusal(problem)
    if why is not None:
        raise InvariantDPError(f"the dense-factor path does not apply: {why}.")
    dense = frozenset(int(a) for a in dense)
    if not tree_dense(problem) <= dense:
        raise InvariantDPError(
            f"the problem's dense attributes {sorted(tree_dense(problem))} are not among the "
            f"tree's {sorted(dense)}."
        )
    fa = FactorAlgebra(problem.shape, sorted(dense))
    n_lev = len(problem.sizes)
    sol = empty_solution(problem, fa)
    child, top = None, n_lev - 1
    if leaves is not None:
        z, v, zero = leaves
        if z.shape[0] != problem.sizes[top]:
            raise InvariantDPError(
                f"`leaves` summarise {z.shape[0]} units; the finest level has {problem.sizes[top]}."
            )
        sol.z[top], sol.V[top], sol.zero[top] = z, v, zero
        sol.lent.add(top)
        child, top = (z, v), top - 1
    for lev in range(top, -1, -1):
        own = _own(fa, problem, lev)
        st = sol.starts[lev + 1] if lev + 1 < n_lev else None
        z, v, sinv = _bottom_up(fa, own, st, child, lev, names)
        _check_own(fa, problem, lev, z, own.zero, names)
        sol.z[lev], sol.V[lev], sol.sinv[lev], sol.zero[lev] = z, v, sinv, own.zero
        child = (z, v)
    return sol


def partitioned_top_down(sol: BlockSolution, root=None, consume: bool = False) -> BlockSolution:
    """The top-down pass of a :func:`partitioned_bottom_up` solution, in place; returns it.

    ``root`` is ``(x, F, G)`` of the level-0 units when they are not the
    roots of the whole tree (a part below units solved elsewhere); without
    it the level-0 units are roots (``x = z``, ``F = V``).  The bottom-up
    summaries ``z[0]``, ``V[0]`` are kept: the pass sets ``x``, ``F`` and
    ``G`` only; with ``consume`` the ``z`` of the levels below become their
    ``x`` (no copy of the largest arrays; the solution's ``z`` are then None).
    """
    if root is None:
        _top_down(sol, consume)
        return sol
    x, f, g = root
    z0, v0 = sol.z[0], sol.V[0]
    # the pass starts from x_0 = z_0 and F_0 = V_0: the root's final values stand in for it
    sol.z[0], sol.V[0] = x, f
    try:
        _top_down(sol, consume)
    finally:
        sol.z[0], sol.V[0] = z0, v0
    sol.G[0] = g
    return sol
