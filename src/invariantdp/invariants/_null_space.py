r"""The null space of the invariants: projections and bases, ``O(n)`` for the structured kinds.

:class:`NullSpace` holds the geometry of :class:`~invariantdp.invariants.Invariants`
(its base class): the projection :math:`\Pi_N` onto :math:`N = \ker C`, an
orthonormal basis :math:`Q_N` applied without forming it, and the
coordinates in that basis.  Group centring for totals and nested totals,
centring along every axis for one-way margins, a thin SVD for a general
``C`` (:mod:`._geometry`); what they derive from ``C`` is computed once
(``_cached``, shared by the copies of one ``C``).

References
----------
Gao, Gong & Yu (2022), Def. 2 and Cor. 11-18 (the projected and extended
mechanisms apply these); Cho & Awan, Algorithm 1.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvariantDPError
from . import _geometry as geo
from ._structure import read_only

__all__ = ["DENSE_LIMIT", "NullSpace"]

#: the kinds whose null space is given by groups of cells
_GROUPED = ("totals", "nested_totals")
#: general sparse matrices with more entries are never densified (SVD, ``dense_matrix``)
DENSE_LIMIT = 20_000_000


class NullSpace:
    """The null-space geometry of :class:`~invariantdp.invariants.Invariants` (its base)."""

    def projector_diagonal(self) -> np.ndarray:
        r"""The diagonal of :math:`\Pi_N` as a flat ``(n,)`` array, without forming ``Pi_N``.

        ``1 - 1/m_g`` for a cell in a group of ``m_g`` cells, ``1 - rank/n``
        for one-way margins, ``1 - ||Q_R e_i||^2`` for a general ``C``.  It is
        the per-cell variance of unit spherical noise projected onto ``N``
        (Gao, Gong & Yu 2022, Cor. 14).

        Examples
        --------
        >>> from invariantdp.invariants import totals
        >>> totals([0, 0, 1, 1, 1]).projector_diagonal().round(4)
        array([0.5   , 0.5   , 0.6667, 0.6667, 0.6667])
        """
        kind = self.kind
        if kind in _GROUPED:
            codes, _ = self.group_codes()
            return 1.0 - 1.0 / self._group_counts()[codes]
        n = self.n_cells
        if kind == "one_way_margins":
            return np.full(n, 1.0 - (1.0 + sum(s - 1.0 for s in self.shape)) / n)
        return 1.0 - np.sum(self._row_basis() ** 2, axis=0)

    def project(self, v, *, out=None) -> np.ndarray:
        r"""Orthogonal projection :math:`\Pi_N v` onto the null space of ``C``.

        ``v`` has shape ``self.shape`` or ``(n,)`` (result has the same shape),
        or ``(m, n)`` for ``m`` vectors at once.  The method is chosen by
        structure: group centring for :func:`totals` and :func:`nested_totals`,
        centring along every axis for :func:`one_way_margins` (double centring
        for a two-way table), all ``O(n)``; a thin SVD of ``C`` (``v - Q_R Q_R^T
        v``) for a general matrix.  ``out``, a float array of the shape of
        ``v`` (``v`` itself allowed), receives the result, as in numpy: a
        projection of 10^7 cells then needs no new array.

        References
        ----------
        Gao, Gong & Yu (2022), Def. 2 and Cor. 11; Cho & Awan, Algorithm 1.

        Examples
        --------
        >>> import numpy as np
        >>> from invariantdp.invariants import totals
        >>> totals([0, 0, 1, 1, 1]).project(np.array([1.0, 3.0, 0.0, 0.0, 3.0]))
        array([-1.,  1., -1., -1.,  2.])
        """
        v = np.asarray(v, dtype=float)
        V = self.as_rows(v)
        target = None if out is None else geo.out_rows(out, v.shape, V.shape)
        kind = self.kind
        if kind in _GROUPED:
            codes, g = self.group_codes()
            res = geo.group_project(codes, g, self._group_counts(), V, out=target)
        elif kind == "one_way_margins":
            res = geo.margins_project(self.shape, V)
        else:
            QR = self._row_basis()
            res = V - (V @ QR.T) @ QR if QR.shape[0] else V.copy()
        if out is None:
            return res.reshape(v.shape)
        if kind not in _GROUPED:  # the grouped centring wrote into `out` itself
            target[...] = res
        return out

    def projector(self) -> np.ndarray:
        """The dense ``n x n`` projector onto ker C (for small ``n`` only)."""
        n = self.n_cells
        if n > 5000:
            raise InvariantDPError(
                f"`projector` forms an n x n matrix; n ({n}) must be <= 5000. "
                "Use `project(v)` instead."
            )
        return self.project(np.eye(n))

    def null_space_basis(self) -> np.ndarray:
        """Orthonormal basis ``Q_N`` of ker C as an ``(n, n - rank)`` array.

        Structured invariants use a Helmert basis (see :meth:`null_space_apply`);
        a general ``C`` uses the SVD, with each column's largest entry
        made positive so the basis is reproducible.
        """
        n, s = self.n_cells, self.n_cells - self.rank
        if n * s > 50_000_000:
            raise InvariantDPError(
                f"`null_space_basis` would hold {n} x {s} numbers; use `null_space_apply`."
            )
        if self.kind == "general":
            return self._null_basis_general().copy()  # the cached basis stays private
        return self.null_space_apply(np.eye(s)).T if s else np.zeros((n, 0))

    def null_space_apply(self, w) -> np.ndarray:
        """``Q_N @ w`` for coordinates ``w`` of shape ``(n - rank,)`` or ``(m, n - rank)``.

        Structured invariants never form ``Q_N``: within each group the basis is
        the Helmert basis (``(1, .., 1, -k, 0, ..)/sqrt(k(k+1))``), and for the
        one-way margins of a table it is the tensor product of per-axis
        Helmert bases over every set of two or more axes (the interaction
        spaces of the table).
        """
        w = np.asarray(w, dtype=float)
        s = self.n_cells - self.rank
        W = w.reshape(1, -1) if w.ndim == 1 else w
        if W.ndim != 2 or W.shape[1] != s:
            raise InvariantDPError(f"`w` must have {s} coordinates per row, got shape {w.shape}.")
        kind = self.kind
        if kind in _GROUPED:
            out = geo.helmert_apply(self._helmert_layout(), W)
        elif kind == "one_way_margins":
            out = geo.margins_apply(self.shape, self._margin_helmert(), W)
        else:
            out = W @ self._null_basis_general().T
        return out[0] if w.ndim == 1 else out

    def null_space_coordinates(self, v) -> np.ndarray:
        """``Q_N.T @ v`` (coordinates of ``v`` in the basis of :meth:`null_space_apply`)."""
        v = np.asarray(v, dtype=float)
        V = self.as_rows(v)
        kind = self.kind
        if kind in _GROUPED:
            out = geo.helmert_coordinates(self._helmert_layout(), V)
        elif kind == "one_way_margins":
            out = geo.margins_coordinates(self.shape, self._margin_helmert(), V)
        else:
            out = V @ self._null_basis_general()
        return out[0] if v.ndim == 1 or v.shape == self.shape else out

    # --- bases derived from C (computed once, shared by the copies) -----------------

    def _helmert_layout(self) -> tuple:
        return self._cached("helmert", lambda: geo.helmert_layout(*self.group_codes()))

    def _margin_helmert(self) -> tuple:
        return self._cached(
            "mhelmert", lambda: tuple(read_only(geo.helmert(s)) for s in self.shape)
        )

    def _row_basis(self) -> np.ndarray:
        """Orthonormal basis of the row space of a general ``C`` (thin SVD, cached)."""
        return self._cached("row_basis", lambda: read_only(geo.row_space_basis(self._svd_input())))

    def _svd_input(self) -> np.ndarray:
        k, n = self.matrix.shape
        if k * n > DENSE_LIMIT:
            raise InvariantDPError(
                f"`matrix` of shape {self.matrix.shape} is too large for a dense SVD; "
                "use the structured constructors totals/nested_totals/one_way_margins."
            )
        return self.dense_matrix()

    def _null_basis_general(self) -> np.ndarray:
        return self._cached("null", lambda: read_only(geo.null_basis(self._svd_input(), self.rank)))
