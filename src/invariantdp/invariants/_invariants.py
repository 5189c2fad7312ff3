"""The :class:`Invariants` class: linear equality invariants ``C s = c``.

Constructors of the structured invariants are in :mod:`._constructors`, the
null-space geometry in :mod:`._geometry`, the label and matrix builders in
:mod:`._structure` and the document readers in :mod:`._document`; the public
names are exported by :mod:`invariantdp.invariants`.
"""

from __future__ import annotations

import json
import math

import numpy as np
from scipy import sparse

from .._bounded_cache import BoundedCache
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
from ._null_space import _GROUPED, DENSE_LIMIT, NullSpace
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


class Invariants(NullSpace):
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
    structure : dict or Structure, optional
        Set by :func:`totals`, :func:`nested_totals` and
        :func:`one_way_margins`: the structure that selects an ``O(n)``
        null-space projection (a dict ``{"kind": ..., ...}`` is checked
        against ``matrix`` and kept as a read-only :class:`Structure`).  It
        survives :meth:`to_dict`/:meth:`from_dict`.  Leave it ``None`` for a
        general ``C`` (dense SVD projection).

    Notes
    -----
    ``C`` may be rank deficient (nested totals repeat information); every
    computation uses ``rank`` = dim of the row space, so the null space has
    dimension ``n - rank`` (``n - n_c`` in Gao, Gong & Yu, Def. 2).

    An instance is immutable: its attributes are read-only properties and
    every array it holds or derives is read-only.  What it derives from
    ``C`` (rank, group codes, bases, its document) is computed on first use
    and shared by its copies (:meth:`of`, :meth:`with_values`,
    :meth:`without_values`: same ``C``).  Grouped kinds work from their group
    codes and build :attr:`matrix` (a canonical CSR matrix) only when it is
    first read.

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

    __hash__ = None

    def __init__(self, matrix, values=None, shape=None, names=None, structure=None):
        st = structure
        C = matrix
        # the very matrix a structure was made with is verified and frozen already
        trusted = is_structure_matrix(st, C)
        if not trusted:
            C = checked_matrix(C)
        k, n = C.shape
        shape = (n,) if shape is None else check_shape("shape", shape)
        if math.prod(shape) != n:
            raise InvariantDPError(
                f"`shape` {shape} has {math.prod(shape)} cells but `matrix` has {n} columns."
            )
        values, names = checked_values(values, k), checked_names(names, k)
        if st is not None and not (trusted and st.shape_ref == shape):
            st = verified_structure(st, C, shape)
            C = structure_matrix(st)  # equal to C; sharing it lets later copies skip the check
        elif st is None:
            C = freeze_matrix(C)
        values = None if values is None else read_only(values)
        self._set(C, values, shape, names, st, _derived_cache())

    def _set(self, C, values, shape, names, structure, derived) -> None:
        """The one place an instance's state is written (by its constructors only).

        ``C`` may be the :class:`GroupMatrix` of a grouped structure: then
        :attr:`matrix` is built from it when first read.
        """
        self._matrix = None if isinstance(C, GroupMatrix) else C
        self._values = values
        self._shape = tuple(shape)
        self._names = names
        self._structure = structure
        self._derived = derived

    @classmethod
    def _from_structure(cls, C, shape, names, structure: dict) -> Invariants:
        """Invariants of a structure this package derived itself (no verification needed).

        ``C`` is a matrix or, for grouped kinds, a :class:`GroupMatrix`, which
        :attr:`matrix` turns into a matrix only if it is read.
        """
        if not isinstance(C, GroupMatrix):
            C = freeze_matrix(C)
        out = cls.__new__(cls)
        names = None if names is None else tuple(names)
        out._set(C, None, shape, names, make_structure(structure, C, shape), _derived_cache())
        return out

    def _copy(self, values: np.ndarray | None, names) -> Invariants:
        """Same ``C`` (built or not), shape and structure, and what is derived from ``C``."""
        out = type(self).__new__(type(self))
        C = self._matrix if self._matrix is not None else self._structure.matrix_ref
        out._set(C, values, self._shape, names, self._structure, self._derived)
        return out

    def __getstate__(self) -> dict:
        # what is derived from C is recomputed after unpickling (its cache holds a lock)
        return {k: v for k, v in self.__dict__.items() if k != "_derived"}

    def __setstate__(self, state: dict) -> None:
        if "_shape" not in state:  # a pickle of the former frozen dataclass: public names
            st = state.get("structure")
            C = state.get("matrix", None if st is None else st.matrix_ref)
            state = {"_values": state["values"], "_shape": state["shape"]} | {
                "_matrix": None if isinstance(C, GroupMatrix) else C,
                "_names": state["names"],
                "_structure": st,
            }
        self.__dict__.update(state)
        self._derived = _derived_cache()

    # --- the attributes (read-only) -------------------------------------------

    @property
    def matrix(self) -> np.ndarray | sparse.sparray:
        """The matrix ``C`` (read-only), built from the group codes when first read."""
        if self._matrix is None:
            # grouped invariants: never built by a release, only when asked for
            self._matrix = structure_matrix(self._structure)
        return self._matrix

    @property
    def values(self) -> np.ndarray | None:
        """The invariant values ``c`` (read-only), or None."""
        return self._values

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the data the invariants act on."""
        return self._shape

    @property
    def names(self) -> tuple[str, ...] | None:
        """One label per invariant row, or None."""
        return self._names

    @property
    def structure(self) -> Structure | None:
        """The read-only :class:`Structure` of structured invariants (None: a general ``C``)."""
        return self._structure

    def _matrix_shape(self) -> tuple[int, int]:
        C = self._matrix
        return C.shape if C is not None else self._structure.matrix_ref.shape

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
        return self._cached("rank", self._compute_rank)

    def _compute_rank(self) -> int:
        kind = self.kind
        if kind in _GROUPED:
            return self.group_codes()[1]
        if kind == "one_way_margins":
            return 1 + sum(s - 1 for s in self.shape)
        return int(self._row_basis().shape[0])

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

    # --- cached structure ------------------------------------------------------

    def _cached(self, key: str, compute):
        """What is derived from ``C`` under ``key``, computed once for this ``C``."""
        return self._derived.get(key, compute)

    def _group_counts(self) -> np.ndarray:
        return self._groups().counts

    def _level_maps(self) -> tuple:
        """For nested totals: the level-``j`` code of every finest group."""
        return self._groups().maps

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

    __repr__ = invariants_repr  # one line at any size


def _derived_cache() -> BoundedCache:
    """What one ``C`` derives (rank, group codes, bases, its document), shared by its copies.

    Bounded by the number of things derived; emptied with every other cache
    by :func:`~invariantdp._bounded_cache.clear_caches` (they are recomputed).
    """
    return BoundedCache("derived from one invariants matrix", maxsize=_DERIVED)


#: the number of things an Invariants derives from its C (the keys of _cached)
_DERIVED = 7
