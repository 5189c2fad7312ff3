"""The noise laws of the projected and extended mechanisms (Gao, Gong & Yu 2022)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._rng import as_generator
from .._validation import InvariantDPError
from ..invariants import Invariants

__all__ = ["SubspaceNoise", "subspace_factory"]


class SubspaceNoise:
    r"""Law of the noise of a projected or extended mechanism.

    ``construction="projected"``: ``Pi_N e`` with ``e`` i.i.d. ``base(scale)``;
    ``construction="extended"``: ``Q_N w`` with ``w`` i.i.d. ``base(scale)`` in
    the ``n - rank`` coordinates of the basis of
    :meth:`Invariants.null_space_apply`.  For Gaussian noise both are
    :math:`N(0, \sigma^2 \Pi_N)`.

    Parameters
    ----------
    base : {"gaussian", "laplace"}
    construction : {"projected", "extended"}
    scale : float
        Gaussian standard deviation or Laplace scale of each coordinate.
    invariants : Invariants
        The invariant structure (values are not used).

    References
    ----------
    Gao, Gong & Yu (2022), "Subspace differential privacy", Cor. 14-15
    (projected mechanisms) and 17-18 (extended mechanisms), Theorem 22.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import one_way_margins
    >>> from invariantdp.distributions import SubspaceNoise
    >>> N = SubspaceNoise("gaussian", "projected", 2.0, one_way_margins((2, 2)))
    >>> np.allclose(N.cov(), 4.0 * one_way_margins((2, 2)).projector())
    True
    """

    def __init__(self, base: str, construction: str, scale: float, invariants: Invariants):
        if base not in _BASES:
            raise InvariantDPError(f"`base` ({base!r}) must be 'gaussian' or 'laplace'.")
        if construction not in ("projected", "extended"):
            raise InvariantDPError(
                f"`construction` ({construction!r}) must be 'projected' or 'extended'."
            )
        self.base = base
        # the coordinate law, and whether it is rotation invariant (its density on N is the
        # same in data coordinates: the Gaussian)
        self._law, self._spherical, self._standard = _BASES[base]
        self.construction = construction
        self.scale = float(scale)
        self.invariants = invariants
        self.dim = invariants.n_cells
        self.intrinsic_dim = invariants.n_cells - invariants.rank

    def _draw(self, gen, m):
        inv = self.invariants
        k = self.dim if self.construction == "projected" else self.intrinsic_dim
        e = self._standard(gen, (m, k) if m > 1 else k)
        e *= self.scale
        if self.construction == "projected":
            return inv.project(e).reshape(m, -1)
        return inv.null_space_apply(e).reshape(m, -1)

    def rvs(self, size=None, random_state=None):
        """Noise draws of shape ``invariants.shape`` or ``(size,) + invariants.shape``."""
        gen = as_generator(random_state)
        m = 1 if size is None else int(size)
        out = self._draw(gen, m)
        shape = self.invariants.shape
        return out.reshape(shape) if size is None else out.reshape((m,) + shape)

    def mean(self) -> np.ndarray:
        return np.zeros(self.invariants.shape)

    def var(self) -> np.ndarray:
        """Per-cell variance ``c * diag(Pi_N)`` (``c`` = sigma^2 or 2 b^2), in O(n)."""
        inv = self.invariants
        c = self.scale**2 * self._law.var()
        return (c * inv.projector_diagonal()).reshape(inv.shape)

    def cov(self) -> np.ndarray:
        """Dense covariance ``c * Pi_N`` (``n <= 5000``), the same for both constructions."""
        c = self.scale**2 * self._law.var()
        return c * self.invariants.projector()

    def expected_squared_error(self) -> float:
        """``E ||noise||^2 = c (n - n_c)`` (Gao, Gong & Yu, Cor. 14 and 15)."""
        c = self.scale**2 * self._law.var()
        return c * self.intrinsic_dim

    def logpdf(self, v) -> np.ndarray:
        r"""Log density on ``N`` (Lebesgue measure of the null space).

        Gaussian: :math:`-\frac{s}{2}\log(2\pi\sigma^2) - \|v\|^2/(2\sigma^2)`;
        extended Laplace: the product Laplace density of ``Q_N^T v``.  Points
        off ``N`` get ``-inf``.  The projected Laplace law has no closed-form
        density and raises.
        """
        if not self._spherical and self.construction == "projected":
            raise InvariantDPError(
                "the projected Laplace noise Pi_N e has no closed-form density; "
                "simulate it with rvs()."
            )
        inv = self.invariants
        v = np.asarray(v, dtype=float)
        V = inv.as_rows(v, name="v")
        off = np.linalg.norm(V - inv.project(V), axis=1)
        ok = off <= 1e-9 * np.maximum(1.0, np.linalg.norm(V, axis=1))
        if self._spherical:
            s = self.intrinsic_dim
            out = -0.5 * s * np.log(2 * np.pi * self.scale**2) - np.sum(V**2, axis=1) / (
                2 * self.scale**2
            )
        else:
            W = inv.null_space_coordinates(V)
            W = W.reshape(V.shape[0], -1)
            out = np.sum(self._law.logpdf(W, scale=self.scale), axis=1)
        out = np.where(ok, out, -np.inf)
        single = v.shape == inv.shape or v.shape == (inv.n_cells,)
        return out[0] if single else out

    def __repr__(self) -> str:
        return (
            f"SubspaceNoise({self.construction} {self.base}, scale={self.scale:g}, "
            f"n={self.dim}, rank={self.dim - self.intrinsic_dim})"
        )


#: the coordinate laws of the subspace mechanisms: the scipy law, whether it is rotation
#: invariant, and its standard draw from a numpy Generator (no extra pass over the noise)
_BASES = {
    "gaussian": (stats.norm, True, lambda gen, size: gen.standard_normal(size)),
    "laplace": (stats.laplace, False, lambda gen, size: gen.laplace(0.0, 1.0, size)),
}


def subspace_factory(base, construction):
    def make(p):
        return SubspaceNoise(base, construction, p["scale"], Invariants.from_dict(p["invariants"]))

    return make
