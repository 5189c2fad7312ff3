"""The :class:`Invariants` class: linear equality invariants ``C s = c``.

Constructors of the structured invariants are in :mod:`._constructors`, the
null-space geometry in :mod:`._geometry`, the label and matrix builders in
:mod:`._structure` and the document readers in :mod:`._document`; the public
names are exported by :mod:`invariantdp.invariants`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from .._validation import (
    MAX_JSON_CHARS,
    InvariantDPError,
    check_finite_array,
    parse_json_document,
    thaw,
)
from . import _geometry as geo
from ._consistency import check_consistent, check_satisfied
from ._document import (
    MAX_DOCUMENT_CELLS,
    invariants_repr,
    read_invariants,
    structure_document,
)
from ._structure import (
    GroupMatrix,
    Structure,
    check_shape,
    checked_matrix,
    checked_names,
    checked_values,
    freeze_matrix,
    group_sums,
    is_structure_matrix,
    make_structure,
    read_only,
    same_matrix,
    structure_groups,
    structure_matrix,
    verified_structure,
)

#: general sparse matrices with more entries are never densified (SVD, :meth:`dense_matrix`)
DENSE_LIMIT = 20_000_000

_GROUPED = ("totals", "nested_totals")


@dataclass(frozen=True, eq=False)
class Invariants:
    """Linear equality invariants ``C @ x.ravel() = values``.

    Parameters
    ----------
    matrix : array_like or scipy.sparse matrix, shape (k, n)
        The linear map ``C`` acting on the flattened (C-order) data.
    values : array_like, shape (k,), optional
        The invariant values ``c``; ``None`` for a structure whose values are
        filled in from data by :meth:`of`.
    shape : tuple of int, optional
        Shape of the data the invariants act on (default ``(n,)``).
    names : list of str, optional
        One label per invariant row, used in summaries.
    structure : dict, optional
        Set by :func:`totals`, :func:`nested_totals` and
        :func:`one_way_margins`: the structure that selects an ``O(n)``
        null-space projection.  It survives :meth:`to_dict`/:meth:`from_dict`.
        Leave it ``None`` for a general ``C`` (dense SVD projection).

    Notes
    -----
    ``C`` may be rank deficient (nested totals repeat information); every
    computation uses ``rank`` = dim of the row space, so the null space has
    dimension ``n - rank`` (``n - n_c`` in Gao, Gong & Yu, Def. 2).

    Everything an instance holds or caches is read-only; the caches (rank,
    group codes, bases) depend on ``C`` only and its copies share them.
    Grouped kinds work from their group codes and build ``matrix`` (a
    canonical CSR matrix) only when it is first read.

    References
    ----------
    Gao, Gong & Yu (2022), Definition 2 and Examples 3-4 (linear equality
    invariants); Cho & Awan, Definition 12 (the invariant ``T(X) = t``) and
    Sec. 5.1 (the one-way margins of a contingency table).

    Examples
    --------
    The number of records with an odd feature (Gao, Gong & Yu, Example 4):

    >>> import numpy as np
    >>> inv = Invariants(np.array([[1, 0, 1, 0]])).of([3, 1, 2, 5])
    >>> inv.values.tolist(), inv.rank, inv.kind
    ([5.0], 1, 'general')
    >>> inv.project(np.ones(4)).round(4)  # onto ker C
    array([0., 1., 0., 1.])
    >>> inv.check([0, 4, 5, 0])  # C x = 5: no error
    """

    matrix: np.ndarray | sparse.sparray
    values: np.ndarray | None = None
    shape: tuple[int, ...] | None = None
    names: tuple[str, ...] | None = field(default=None)
    structure: dict | None = field(default=None, repr=False)

    def __post_init__(self):
        st = self.structure
        C = self.matrix
        # the very matrix a structure was made with is verified and frozen already
        trusted = is_structure_matrix(st, C)
        if not trusted:
            C = checked_matrix(C)
        k, n = C.shape
        shape = (n,) if self.shape is None else check_shape("shape", self.shape)
        if math.prod(shape) != n:
            raise InvariantDPError(
                f"`shape` {shape} has {math.prod(shape)} cells but `matrix` has {n} columns."
            )
        values, names = checked_values(self.values, k), checked_names(self.names, k)
        if st is not None and not (trusted and st.shape_ref == shape):
            st = verified_structure(st, C, shape)
            C = structure_matrix(st)  # equal to C; sharing it lets later copies skip the check
        elif st is None:
            C = freeze_matrix(C)
        object.__setattr__(self, "matrix", C)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "values", None if values is None else read_only(values))
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "structure", st)
        object.__setattr__(self, "_cache", {})

    @classmethod
    def _trusted(cls, C, shape, names, structure: dict) -> Invariants:
        """Build from a structure this package derived itself (no verification needed).

        ``C`` is a matrix or, for grouped kinds, a :class:`GroupMatrix`: then
        ``matrix`` stays out of the instance until :meth:`__getattr__` builds it.
        """
        out = object.__new__(cls)
        if not isinstance(C, GroupMatrix):
            C = freeze_matrix(C)
            object.__setattr__(out, "matrix", C)
        object.__setattr__(out, "values", None)
        object.__setattr__(out, "shape", tuple(shape))
        object.__setattr__(out, "names", None if names is None else tuple(names))
        object.__setattr__(out, "structure", make_structure(structure, C, shape))
        object.__setattr__(out, "_cache", {})
        return out

    def _copy(self, values: np.ndarray | None, names) -> Invariants:
        """Same ``C`` (built or not), shape and structure, and the caches (they depend on ``C``)."""
        out = object.__new__(type(self))
        kept = {k: v for k, v in vars(self).items() if k in ("matrix", "shape", "structure")}
        out.__dict__.update(kept, names=names, values=values, _cache=self._cache)
        return out

    def __getattr__(self, name):
        # only reached for attributes missing from the instance: `matrix` of grouped
        # invariants is built from the codes when first asked for (never by a release)
        st = self.__dict__.get("structure")
        if name != "matrix" or not isinstance(st, Structure):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        C = structure_matrix(st)
        object.__setattr__(self, "matrix", C)
        return C

    def _matrix_shape(self) -> tuple[int, int]:
        C = self.__dict__.get("matrix")
        return C.shape if C is not None else self.structure.matrix_ref.shape

    def _same_matrix(self, other: Invariants) -> bool:
        a, b = (getattr(i.structure, "matrix_ref", None) for i in (self, other))
        if isinstance(a, GroupMatrix) and isinstance(b, GroupMatrix):
            return a.same_groups(b)  # equal codes level by level: no matrix built
        return same_matrix(self.matrix, other.matrix)

    # --- basic properties ------------------------------------------------------

    @property
    def n_invariants(self) -> int:
        """``k``, the number of rows of ``C``."""
        return self._matrix_shape()[0]

    @property
    def n_cells(self) -> int:
        """``n``, the number of cells of the data."""
        return self._matrix_shape()[1]

    @property
    def kind(self) -> str:
        """``"totals"``, ``"nested_totals"``, ``"one_way_margins"`` or ``"general"``."""
        return "general" if self.structure is None else self.structure["kind"]

    @property
    def rank(self) -> int:
        """Dimension of the row space of ``C`` (``n_c``); ``n - rank`` is dim ker C."""
        if "rank" not in self._cache:
            kind = self.kind
            if kind in _GROUPED:
                r = self.group_codes()[1]
            elif kind == "one_way_margins":
                r = 1 + sum(s - 1 for s in self.shape)
            else:
                r = int(self._row_basis().shape[0])
            self._cache["rank"] = r
        return self._cache["rank"]

    # --- structure accessors ---------------------------------------------------

    def dense_matrix(self) -> np.ndarray:
        """``C`` as a dense, read-only ``(k, n)`` float array.

        The matrix itself when it is stored dense, else a new array; refused
        (``InvariantDPError``) above ``DENSE_LIMIT`` (2e7) entries, where
        :meth:`apply` and :meth:`project` still work in ``O(n)`` or sparse.

        Examples
        --------
        >>> from invariantdp.invariants import totals
        >>> C = totals([0, 1, 0]).dense_matrix()
        >>> C
        array([[1., 0., 1.],
               [0., 1., 0.]])
        >>> C.flags.writeable
        False
        """
        C = self.matrix
        if not sparse.issparse(C):
            return C
        k, n = C.shape
        if k * n > DENSE_LIMIT:
            raise InvariantDPError(
                f"`matrix` of shape {C.shape} has {k * n} entries; a dense copy holds at most "
                f"{DENSE_LIMIT}. Use apply/project, or the structured constructors "
                "totals/nested_totals/one_way_margins."
            )
        return read_only(C.toarray())

    def group_codes(self) -> tuple[np.ndarray, int]:
        """``(codes, g)``: the finest group of every cell (read-only, flat) and their number.

        Cells in one finest group have identical columns of ``C`` (the groups
        of :func:`totals`, the finest level of :func:`nested_totals`); the
        codes are ``0 .. g-1`` in the order of the rows of that level.
        Other kinds have no groups and raise.

        Examples
        --------
        >>> from invariantdp.invariants import nested_totals
        >>> codes, g = nested_totals([[0, 0, 1, 1], [0, 1, 0, 0]]).group_codes()
        >>> codes.tolist(), g
        ([0, 1, 2, 2], 3)
        """
        if self.kind not in _GROUPED:
            raise InvariantDPError(
                f"`group_codes` needs totals or nested totals; these invariants are {self.kind}."
            )
        groups = self._groups()
        return groups.codes, groups.sizes[-1]

    def _groups(self) -> GroupMatrix:
        """The groups of grouped invariants (their codes and maps, shared by every copy)."""
        return self._cached("group_matrix", lambda: structure_groups(self.structure))

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

    def as_rows(self, v, *, name: str = "v") -> np.ndarray:
        """``v`` as an ``(m, n)`` array: one vector per row, each flattened in C order.

        ``v`` has shape ``self.shape`` or ``(n,)`` (one row), ``(m, n)`` or
        ``(m,) + self.shape``; any other shape raises, naming ``name``.
        """
        return geo.as_rows(v, self.shape, name)

    def without_values(self) -> Invariants:
        """The same ``C`` (and names) with ``values=None``, sharing every cached structure.

        Examples
        --------
        >>> from invariantdp.invariants import totals
        >>> inv = totals([0, 0, 1]).of([1, 2, 3])
        >>> inv.without_values().values is None, inv.without_values() == totals([0, 0, 1])
        (True, True)
        """
        return self._copy(None, self.names)

    def same_map(self, other: Invariants) -> bool:
        """True if ``other`` has the same matrix ``C`` and data shape (values aside)."""
        if not isinstance(other, Invariants):
            raise TypeError(f"`other` must be an Invariants, got {type(other).__name__}.")
        return self.shape == other.shape and self._same_matrix(other)

    # --- evaluation ------------------------------------------------------------

    def _flat(self, x, name: str = "x") -> np.ndarray:
        """``x`` flat, checked; read only, so a float array is not copied."""
        if isinstance(x, np.ndarray) and x.dtype == np.float64:
            if not np.isfinite(x).all():
                check_finite_array(name, x)  # raises with the standard message
        else:
            x = check_finite_array(name, x)
        if x.shape != self.shape and x.shape != (self.n_cells,):
            raise InvariantDPError(f"`{name}` must have shape {self.shape}, got {x.shape}.")
        return x.reshape(-1)

    def apply(self, x) -> np.ndarray:
        """``C @ x.ravel()`` for data ``x`` of shape ``self.shape``."""
        return self._apply_flat(self._flat(x))

    def _apply_flat(self, flat: np.ndarray) -> np.ndarray:
        if self.kind in _GROUPED:
            codes, g = self.group_codes()
            sums = group_sums(codes, g, flat)
            if self.kind == "totals":
                return sums
            return np.concatenate([np.bincount(m, weights=sums) for m in self._level_maps()])
        return np.asarray(self.matrix @ flat, dtype=float)

    def of(self, x) -> Invariants:
        """The same invariants with their values computed from data ``x``."""
        values = read_only(np.array(self.apply(x), dtype=float, copy=True))
        return self._copy(values, self.names)

    def with_values(self, values) -> Invariants:
        """The same invariants with published ``values`` (one per row of ``C``), checked
        for consistency (margins sharing one total, nested totals adding up).

        >>> from invariantdp.invariants import one_way_margins
        >>> one_way_margins((2, 3)).with_values([40, 60, 30, 30, 40]).values.tolist()
        [40.0, 60.0, 30.0, 30.0, 40.0]
        """
        v = check_finite_array("values", values).astype(float).reshape(-1)
        if v.shape != (self.n_invariants,):
            raise InvariantDPError(f"`values` must hold {self.n_invariants} numbers, got {v.size}.")
        out = self._copy(read_only(v), self.names)
        check_consistent(out, "values")
        return out

    def check(self, x, *, name: str = "x", rtol: float = 1e-9) -> None:
        """Raise ``ValueError`` unless ``x`` satisfies ``C x = c`` to relative accuracy ``rtol``.

        Row ``i`` may be off by ``rtol * (|C| |x| + |c|)_i``: relative to the
        magnitudes summed, so rounding in a sum of large or cancelling terms
        (a projected release with huge noise) is not mistaken for a violation.
        """
        if self.values is None:
            raise InvariantDPError("these invariants carry no values to check against.")
        check_satisfied(self, self._flat(x, name), name, rtol)

    # --- null-space geometry ---------------------------------------------------

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

    # --- cached structure ------------------------------------------------------

    def _cached(self, key: str, compute):
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def _group_counts(self) -> np.ndarray:
        return self._groups().counts

    def _level_maps(self) -> tuple:
        """For nested totals: the level-``j`` code of every finest group."""
        return self._groups().maps

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

    # --- serialisation -----------------------------------------------------------

    def to_dict(self) -> dict:
        """JSON-able description (a new, mutable dict); :meth:`from_dict` reads it back.

        Layout: ``{"matrix", "values", "shape", "names"}`` plus, for structured
        invariants, ``"structure"`` (``{"kind": "one_way_margins"}``,
        ``{"kind": "totals", "labels": nested list}`` or
        ``{"kind": "nested_totals", "levels": [nested list, ...]}``) with
        ``"matrix": {"structured": true}``.  A general ``C`` is written as
        ``{"sparse": false, "data": rows}`` or
        ``{"sparse": true, "shape": [k, n], "row", "col", "data"}``.
        """
        out = thaw(self.structure_dict())
        out["values"] = None if self.values is None else self.values.tolist()
        return out

    def structure_dict(self) -> dict:
        """:meth:`to_dict` without the values, read-only and cached (label lists of
        millions of cells are built once): what a projected noise law names ``C`` by."""

        return self._cached("structure_dict", lambda: structure_document(self))

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as strict JSON (RFC 8259)."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(
        cls, text, *, max_bytes: int = MAX_JSON_CHARS, max_cells: int = MAX_DOCUMENT_CELLS
    ) -> Invariants:
        """Read :meth:`to_json` output (strict JSON of bounded size) with :meth:`from_dict`."""
        return cls.from_dict(parse_json_document(text, max_bytes), max_cells=max_cells)

    @classmethod
    def from_dict(
        cls, d: dict, *, path: str = "invariants", max_cells: int = MAX_DOCUMENT_CELLS
    ) -> Invariants:
        """Rebuild invariants from :meth:`to_dict` output, validating the whole document.

        Every field is checked before anything is allocated: exact key sets
        and types, the data shape (at most ``max_cells`` cells), a structure
        whose label arrays have exactly that shape, a general matrix whose
        rows, indices and entries are finite and in range, and ``values`` and
        ``names`` with one entry per invariant.  The values must be
        consistent (margins sharing one total, nested totals adding up).
        Errors are ``InvariantDPError`` (a ``ValueError``) naming the field,
        e.g. ``invariants.structure.labels[2]``; ``path`` is the prefix.

        Examples
        --------
        >>> from invariantdp.invariants import Invariants, one_way_margins
        >>> inv = one_way_margins((2, 2)).of([[3, 1], [2, 4]])
        >>> Invariants.from_dict(inv.to_dict()) == inv
        True
        """
        return read_invariants(cls, d, path, max_cells)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Invariants):
            return NotImplemented
        a, b = self.values, other.values
        same_values = (a is None and b is None) or (a is not None and np.array_equal(a, b))
        return (
            self.shape == other.shape
            and self._same_matrix(other)
            and same_values
            and self.names == other.names
            and self.kind == other.kind
        )

    __hash__ = None
    __repr__ = invariants_repr  # one line at any size
