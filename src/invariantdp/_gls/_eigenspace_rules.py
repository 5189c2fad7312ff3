r"""The scalar rules of the tree passes on one eigenspace, with exact 0 and infinity.

On each joint eigenspace :math:`E_T` every covariance of the GLS passes is a
scalar in :math:`[0, \infty]`: 0 where an equality invariant pins the space,
:math:`\infty` where nothing measures it.  The rules below are the formulas
of the passes with their limits taken exactly (each is the limit of the
finite formula as the variance concerned tends to 0 or infinity), applied
elementwise to arrays of shape ``(units, 2^d)``.

Bottom-up, node ``p`` with children's subtree variances summing to ``S`` and
own information ``lam`` (:math:`\infty` when pinned):
:math:`V_p = (S^{-1} + \lambda)^{-1}` and the subtree estimate
:math:`z_p = \alpha s + (1 - \alpha) o` with :math:`\alpha = 1/(1 + S\lambda)`
(``s`` the children's sum, ``o`` the node's own estimate).

Top-down, child ``i`` of ``p``: gain :math:`G_i = V_i / S` and conditional
variance :math:`\Omega_i = V_i - V_i^2 / S` (the law of ``h_i`` given ``h_p``
and the subtree data); with one child of infinite variance, that child is
``h_p`` minus its siblings (``G = 1``, :math:`\Omega` the siblings' variance),
with two or more it is not identified.

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares
estimation for hierarchical data", arXiv:2404.13164 (the two passes).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "chain",
    "combine",
    "gains",
    "mul0",
    "segment_max",
    "segment_min",
    "segment_starts",
    "segment_sum",
]


def segment_starts(parents: np.ndarray, n_parents: int) -> np.ndarray:
    """``starts[p]:starts[p+1]`` are the children of ``p`` (``parents`` non-decreasing)."""
    return np.searchsorted(parents, np.arange(n_parents + 1), side="left")


def _reduce(ufunc, x: np.ndarray, starts: np.ndarray, empty) -> np.ndarray:
    n = starts.size - 1
    out = np.full((n, *x.shape[1:]), empty, dtype=np.result_type(x, float))
    full = starts[1:] > starts[:-1]
    if np.any(full):
        out[full] = ufunc.reduceat(x, starts[:-1][full], axis=0)
    return out


def segment_sum(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sum of each parent's children (0 for a parent without children), in child order."""
    return _reduce(np.add, x, starts, 0.0)


def segment_min(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return _reduce(np.minimum, x, starts, np.inf)


def segment_max(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return _reduce(np.maximum, x, starts, -np.inf)


def mul0(a, b) -> np.ndarray:
    """``a * b`` with ``0 * inf = 0`` (a zero gain passes nothing, even an infinite variance)."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    with np.errstate(invalid="ignore"):
        return np.where((a == 0) | (b == 0), 0.0, a * b)


def combine(big_s: np.ndarray, lam: np.ndarray, pinned: np.ndarray):
    """Bottom-up: ``(V, alpha, beta)`` from the children's ``S``, own ``lam`` and pins.

    ``alpha`` weights the children's sum, ``beta = (1 - alpha) / lam`` the
    node's information vector (0 where pinned or unmeasured), and
    ``1 - alpha`` (where pinned) the pinned values.
    """
    s, lam = np.asarray(big_s, float), np.asarray(lam, float)
    s_inf, s_zero, lam_zero = np.isinf(s), s == 0, lam == 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        regular = s / (1.0 + s * lam)
        alpha_reg = 1.0 / (1.0 + s * lam)
        own_var = np.where(lam_zero, np.inf, 1.0 / lam)
    var = np.where(s_zero, 0.0, np.where(s_inf, own_var, np.where(lam_zero, s, regular)))
    alpha = np.where(s_zero | (lam_zero & ~s_inf), 1.0, np.where(s_inf, 0.0, alpha_reg))
    var = np.where(pinned, 0.0, var)
    alpha = np.where(pinned, np.where(s_zero, 1.0, 0.0), alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = np.where(pinned | lam_zero, 0.0, (1.0 - alpha) / np.where(lam_zero, 1.0, lam))
    return var, alpha, beta


def gains(v: np.ndarray, big_s: np.ndarray, n_inf: np.ndarray, rest: np.ndarray):
    """Top-down: ``(G, Omega)`` of each child from its ``V`` and its parent's ``S``.

    ``n_inf`` counts the parent's children of infinite variance and ``rest``
    sums the finite ones (both broadcast to the children).  ``G`` is NaN where
    the child is not identified (two or more infinite siblings); there
    ``Omega`` is infinite.
    """
    v, s = np.asarray(v, float), np.asarray(big_s, float)
    v_inf = np.isinf(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        g_reg = v / s
        om_reg = v - v * v / s
    regular = (s > 0) & np.isfinite(s)
    g = np.where(regular, g_reg, 0.0)
    om = np.where(regular, np.maximum(om_reg, 0.0), np.where(s == 0, 0.0, v))
    lone = np.isinf(s) & v_inf & (n_inf == 1)
    crowd = np.isinf(s) & v_inf & (n_inf > 1)
    g = np.where(lone, 1.0, np.where(crowd, np.nan, g))
    om = np.where(lone, rest, np.where(crowd, np.inf, om))
    return g, om


def chain(g: np.ndarray, om: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``Omega + G^2 upper``: a child's variance from its parent's (NaN gain: infinite)."""
    out = om + mul0(np.where(np.isnan(g), 0.0, g) ** 2, upper)
    return np.where(np.isnan(g), np.inf, out)
