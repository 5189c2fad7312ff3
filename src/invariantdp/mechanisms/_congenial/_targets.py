r"""The target :math:`M(x) \mid M(x) \in S^*` and the inequalities that define :math:`S^*`.

:math:`S^* = \{s : A s = a,\ B s \ge b\}` (Gong & Meng 2020, Eq. 2.3): the
equality invariants of an :class:`~invariantdp.Invariants` and the
:class:`LinearInequalities`.  :func:`build_target` checks the arguments of
:func:`~invariantdp.mechanisms.conditional_release` and returns the
unnormalised target density of an additive mechanism with independent cells,

.. math:: p^*(s) \propto \prod_i p_i(s_i - s^*_i)\, \mathbf 1(s \in S^*),

with single-cell inequality rows turned into cell bounds and the others kept
as coupled rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse

from ..._linalg import independent_columns
from ..._validation import (
    InvariantDPError,
    check_counts,
    check_finite_array,
    check_positive,
    check_positive_int,
)
from ...families import gaussian_sigma, laplace_rate
from ...invariants import Invariants
from .._registry import MECHANISMS as REGISTRY
from .._registry import find_mechanism

__all__ = ["LinearInequalities"]


@dataclass(frozen=True)
class Unconstrained:
    """What the congenial mechanism needs to know of its unconstrained mechanism ``M``."""

    name: str  # its name in the registry (invariantdp.mechanisms.MECHANISMS)
    integer: bool  # integer-valued noise
    laplace_type: bool  # log p(u) = -rate |u|; else -u^2 / (2 sigma^2)
    parameter: str  # the privacy parameter that calibrates it
    family: str  # the noise law's family in the release
    scale_key: str  # and its scale parameter (1 / rate or sigma)

    @classmethod
    def of(cls, name: str, parameter: str) -> Unconstrained:
        m = find_mechanism(name)
        return cls(m.name, m.noise_family.integer, m.norm == "l1", parameter, m.family, m.scale)


#: the ``mechanism`` argument of conditional_release and the privacy parameter it is
#: calibrated by, as the registry states them (Gong & Meng, Definitions 1.1-1.2: their
#: double geometric mechanism is the discrete Laplace of scale 1 / rate)
MECHANISMS = {
    m.name: Unconstrained.of(m.name, m.congenial) for m in REGISTRY.values() if m.congenial
}

#: privacy parameter -> (what it is, (rate, sigma) of the noise from it and the sensitivity)
_CALIBRATION = {
    "epsilon": ("DP", lambda v, s: (laplace_rate(s, v), np.nan)),
    "mu": ("Gaussian DP", lambda v, s: (np.nan, gaussian_sigma(s, mu=v))),
    "rho": ("zCDP", lambda v, s: (np.nan, gaussian_sigma(s, rho=v))),
}


@dataclass(frozen=True, eq=False)
class LinearInequalities:
    r"""Linear inequalities ``B @ s.ravel() >= lower`` on a release.

    Parameters
    ----------
    matrix : array_like, shape (m, n)
        ``B``.
    lower : array_like, shape (m,)
        ``b``.

    References
    ----------
    Gong & Meng (2020), Eq. 2.3 (:math:`B s \ge b`, e.g. non-negative counts).

    Examples
    --------
    >>> LinearInequalities.nonnegative(3).lower
    array([0., 0., 0.])
    """

    matrix: np.ndarray
    lower: np.ndarray

    def __post_init__(self):
        B = self.matrix.toarray() if sparse.issparse(self.matrix) else self.matrix
        B = check_finite_array("inequalities.matrix", B)
        if B.ndim != 2:
            raise InvariantDPError(f"`inequalities.matrix` must be 2-D, got {B.ndim} dimension(s).")
        b = check_finite_array("inequalities.lower", self.lower)
        if b.shape != (B.shape[0],):
            raise InvariantDPError(
                f"`inequalities.lower` must have shape ({B.shape[0]},), got {b.shape}."
            )
        object.__setattr__(self, "matrix", B)
        object.__setattr__(self, "lower", b)

    @classmethod
    def nonnegative(cls, n: int) -> LinearInequalities:
        """``s >= 0`` for ``n`` cells (counts)."""
        n = check_positive_int("n", n)
        return cls(np.eye(n), np.zeros(n))

    def to_dict(self) -> dict:
        return {"matrix": self.matrix.tolist(), "lower": self.lower.tolist()}


def cell_bounds(ineq: LinearInequalities) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lower, upper, coupled)``: the cell bounds implied by the single-cell rows.

    ``coupled`` is the mask of the rows with two or more cells, which bounds
    cannot express.
    """
    B, b = ineq.matrix, ineq.lower
    n = B.shape[1]
    lb, ub = np.full(n, -np.inf), np.full(n, np.inf)
    nnz = np.count_nonzero(B, axis=1)
    for i in np.flatnonzero(nnz == 1):
        k = int(np.flatnonzero(B[i])[0])
        coef = B[i, k]
        if coef > 0:
            lb[k] = max(lb[k], b[i] / coef)
        else:
            ub[k] = min(ub[k], b[i] / coef)
    return lb, ub, nnz >= 2


def as_inequalities(inequalities, n: int) -> LinearInequalities | None:
    """``None``, ``"nonnegative"``, a :class:`LinearInequalities` or ``(B, b)`` on ``n`` cells."""
    if inequalities is None:
        return None
    if isinstance(inequalities, str):
        if inequalities != "nonnegative":
            raise InvariantDPError(
                f"`inequalities` ({inequalities!r}) must be 'nonnegative', a "
                "LinearInequalities or a pair (B, b)."
            )
        return LinearInequalities.nonnegative(n)
    if isinstance(inequalities, LinearInequalities):
        ineq = inequalities
    elif isinstance(inequalities, tuple | list) and len(inequalities) == 2:
        ineq = LinearInequalities(*inequalities)
    else:
        raise TypeError(
            "`inequalities` must be None, 'nonnegative', a LinearInequalities or a pair "
            f"(B, b), got {type(inequalities).__name__}."
        )
    if ineq.matrix.shape[1] != n:
        raise InvariantDPError(
            f"`inequalities` act on {ineq.matrix.shape[1]} cells but the data have {n}."
        )
    return ineq


def check_invariants(invariants) -> Invariants:
    if not isinstance(invariants, Invariants):
        raise TypeError(
            f"`invariants` must be an invariantdp.Invariants, got {type(invariants).__name__}."
        )
    return invariants


def dense_invariants(invariants: Invariants) -> np.ndarray:
    """The matrix of the invariants as a dense, read-only float array."""
    return invariants.dense_matrix()


def independent_rows(A: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first linearly independent rows of ``A s = a``, in their original order.

    The first ones, not a pivoted QR's: its ties between equal rows are broken
    by rounding, so the rows kept (and the moves built from them) would change
    with the BLAS build.
    """
    if A.shape[0] == 0:
        return A, a
    keep = independent_columns(A.T)
    return A[keep], a[keep]


# ---------------------------------------------------------------------------
# the target M(x) | M(x) in S*
# ---------------------------------------------------------------------------


@dataclass
class Target:
    """Unnormalised target of the samplers; see the module docstring."""

    kind: Unconstrained
    rate: float  # laplace-type: log p(u) = -rate |u|
    sigma: float  # gaussian-type: log p(u) = -u^2 / (2 sigma^2)
    s_star: np.ndarray
    A: np.ndarray  # independent rows
    a: np.ndarray
    lb: np.ndarray  # cell bounds from single-cell inequality rows
    ub: np.ndarray
    Bc: np.ndarray  # coupled inequality rows (two or more cells)
    bc: np.ndarray

    @property
    def d(self) -> int:
        return self.s_star.size

    @property
    def integer(self) -> bool:
        return self.kind.integer

    @property
    def laplace_type(self) -> bool:
        return self.kind.laplace_type

    @property
    def spherical_gaussian(self) -> bool:
        """Continuous Gaussian noise: conditioning on ``A s = a`` is projection (Theorem 22)."""
        return not self.laplace_type and not self.integer

    @property
    def noise_scale(self) -> float:
        """The scale parameter of the noise law: ``1 / rate`` or ``sigma``."""
        return 1.0 / self.rate if self.laplace_type else float(self.sigma)

    @property
    def unconstrained(self) -> bool:
        """No inequality: the target lives on the whole affine space ``A s = a``."""
        return (
            not np.any(np.isfinite(self.lb))
            and not np.any(np.isfinite(self.ub))
            and self.Bc.shape[0] == 0
        )

    def cell_logp(self, u: np.ndarray) -> np.ndarray:
        """Per-cell unnormalised log density of the noise ``u``."""
        if self.laplace_type:
            return -self.rate * np.abs(u)
        return -0.5 * (u * u) / self.sigma**2

    def logp(self, s: np.ndarray) -> np.ndarray:
        """Unnormalised log target of rows of ``s`` (without the constraints)."""
        u = s - self.s_star
        if self.laplace_type:
            return -self.rate * np.abs(u).sum(axis=-1)
        return -0.5 * (u * u).sum(axis=-1) / self.sigma**2

    def feasible(self, s: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        ok = np.all((s >= self.lb - tol) & (s <= self.ub + tol), axis=-1)
        if self.Bc.shape[0]:
            ok &= np.all(s @ self.Bc.T >= self.bc - tol, axis=-1)
        return ok


def _noise_parameters(mechanism, privacy, sensitivity):
    """``(kind, rate, sigma, {parameter: value})`` of the unconstrained mechanism."""
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise InvariantDPError(
            f"`mechanism` ({mechanism!r}) must be one of {', '.join(map(repr, MECHANISMS))}."
        )
    kind = MECHANISMS[mechanism]
    sensitivity = check_positive("sensitivity", sensitivity)
    what, calibrate = _CALIBRATION[kind.parameter]
    value = privacy[kind.parameter]
    if value is None:
        raise InvariantDPError(
            f"`{kind.parameter}` ({what}) is required for the {mechanism} mechanism."
        )
    value = check_positive(kind.parameter, value)
    rate, sigma = calibrate(value, sensitivity)
    return kind, rate, sigma, {kind.parameter: value}


def _check_x(x, mechanism: str, integer: bool, shape) -> np.ndarray:
    if integer:
        x_arr = check_counts("x", x) if np.all(np.asarray(x) >= 0) else None
        if x_arr is None:
            x_arr = check_finite_array("x", x)
            if not np.all(x_arr == np.round(x_arr)):
                raise InvariantDPError(f"`x` must hold integers for the {mechanism} mechanism.")
    else:
        x_arr = check_finite_array("x", x)
    if x_arr.shape != shape:
        raise InvariantDPError(
            f"`x` must have the shape of the invariants' data {shape}, got {x_arr.shape}."
        )
    return x_arr


def build_target(x, mechanism, invariants, inequalities, epsilon, mu, rho, sensitivity):
    """Check the arguments of ``conditional_release`` and build its :class:`Target`.

    Returns ``(target, privacy, inequalities, values)``: the privacy
    parameters of the unconstrained mechanism, the normalised inequalities and
    the values of the invariants (those of ``x`` by default).
    """
    check_invariants(invariants)
    kind, rate, sigma, privacy = _noise_parameters(
        mechanism, {"epsilon": epsilon, "mu": mu, "rho": rho}, sensitivity
    )
    integer = kind.integer
    x_arr = _check_x(x, mechanism, integer, invariants.shape)
    C = dense_invariants(invariants)
    s_star = x_arr.astype(float).reshape(-1)
    if invariants.values is None:
        values = C @ s_star
    else:
        invariants.check(x_arr, name="x")
        values = np.asarray(invariants.values, dtype=float)
    if integer and not np.all(C == np.round(C)):
        raise InvariantDPError(
            "`invariants` must have an integer-valued matrix for integer-valued noise "
            f"({mechanism})."
        )
    A, a = independent_rows(C, values)
    d = s_star.size
    if A.shape[0] >= d:
        raise InvariantDPError(
            f"`invariants` determine all {d} cells (rank {A.shape[0]}); nothing is "
            "left to privatize."
        )
    ineq = as_inequalities(inequalities, d)
    lb, ub = np.full(d, -np.inf), np.full(d, np.inf)
    Bc, bc = np.zeros((0, d)), np.zeros(0)
    if ineq is not None:
        B, b = ineq.matrix, ineq.lower
        empty = np.flatnonzero((np.count_nonzero(B, axis=1) == 0) & (b > 0))
        if empty.size:
            raise InvariantDPError(
                f"`inequalities` are infeasible: row {empty[0]} reads 0 >= {b[empty[0]]:g}."
            )
        lb, ub, coupled = cell_bounds(ineq)
        Bc, bc = B[coupled], b[coupled]
        _check_feasible(s_star, A, a, ineq, lb, ub, Bc, bc)
    target = Target(
        kind=kind,
        rate=rate,
        sigma=sigma,
        s_star=s_star,
        A=A,
        a=a,
        lb=lb,
        ub=ub,
        Bc=Bc,
        bc=bc,
    )
    return target, privacy, ineq, values


def _check_feasible(s_star, A, a, ineq, lb, ub, Bc, bc):
    tol = 1e-9 * np.maximum(1.0, np.abs(s_star))
    viol_cell = (s_star < lb - tol) | (s_star > ub + tol)
    viol_rows = (Bc @ s_star < bc - 1e-9 * np.maximum(1.0, np.abs(bc))) if Bc.size else []
    if not (np.any(viol_cell) or np.any(viol_rows)):
        return
    # is S* empty, or is it only the confidential data that violates it?
    res = optimize.linprog(
        np.zeros(s_star.size),
        A_ub=-ineq.matrix,
        b_ub=-ineq.lower,
        A_eq=A if A.size else None,
        b_eq=a if A.size else None,
        bounds=[(None, None)] * s_star.size,
        method="highs",
    )
    if res.status == 2:
        raise InvariantDPError(
            "`inequalities` are infeasible together with the invariants: the set "
            "{A s = a, B s >= b} is empty."
        )
    where = (
        f"cell {int(np.flatnonzero(viol_cell)[0])}"
        if np.any(viol_cell)
        else f"coupled row {int(np.flatnonzero(viol_rows)[0])}"
    )
    raise InvariantDPError(
        f"`x` violates `inequalities` ({where}); the confidential data must lie in S*."
    )
