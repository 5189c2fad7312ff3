"""Linear equality invariants ``C s = c`` published exactly with a release.

Besides the general linear map, three structures have constructors and an
``O(n)`` projection onto the null space of ``C`` that never forms an ``n x n``
(or even a dense ``k x n``) matrix:

* :func:`totals` -- group totals (one label per cell);
* :func:`nested_totals` -- totals at every level of a hierarchy
  (e.g. state, county, tract of every block);
* :func:`one_way_margins` -- the one-way margins of a table (for two axes the
  projection is double centring).

The projection ``Pi_N`` onto ``N = ker C`` is what the subspace-DP mechanisms
of Gao, Gong & Yu (2022), Cor. 11 and 14-18, and the semi-DP Gaussian
mechanism of Cho & Awan (Algorithm 1) apply to the noise.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import operator
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, sparse
from scipy.sparse import linalg as splinalg

from ._validation import (
    EXACT_INT,
    MAX_JSON_CHARS,
    FrozenDict,
    InvariantDPError,
    check_finite_array,
    doc_error,
    doc_int,
    doc_list,
    doc_nested,
    doc_numbers,
    doc_object,
    doc_path,
    doc_shape,
    doc_str,
    format_value,
    freeze,
    parse_json_document,
    thaw,
)

__all__ = [
    "Invariants",
    "nested_totals",
    "null_space_projector",
    "one_way_margins",
    "totals",
]

#: general sparse matrices with at most this many entries are densified for the SVD
_DENSE_LIMIT = 20_000_000

#: general matrices with more entries are not checked for consistency by an SVD
_CONSISTENCY_LIMIT = 1_000_000

#: :meth:`Invariants.from_dict` refuses documents declaring more cells or entries than this
MAX_DOCUMENT_CELLS = 2**24

_KINDS = ("totals", "nested_totals", "one_way_margins")


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _freeze_matrix(C):
    """``C`` with its storage made read-only (the object is shared by every copy)."""
    if sparse.issparse(C):
        # canonical format first: later in-place canonicalisation would fail on frozen arrays
        C.sum_duplicates()
        C.sort_indices()
        for a in (C.data, C.indices, C.indptr):
            a.setflags(write=False)
    else:
        C.setflags(write=False)
    return C


class _Structure(FrozenDict):
    """A verified, immutable structure, remembering the matrix and shape it was built with.

    An :class:`Invariants` built from this very matrix and shape needs no
    verification; any other combination is checked against the structure.
    """

    __slots__ = ("matrix_ref", "shape_ref")

    def __reduce__(self):
        return (_make_structure, (dict(self), self.matrix_ref, self.shape_ref))

    def __deepcopy__(self, memo):
        matrix = copy.deepcopy(self.matrix_ref, memo)
        return _make_structure(copy.deepcopy(dict(self), memo), matrix, self.shape_ref)


def _make_structure(d: dict, matrix, shape) -> _Structure:
    out = _Structure(freeze(d))
    out.matrix_ref = matrix
    out.shape_ref = tuple(shape)
    return out


def _check_shape(name: str, shape) -> tuple[int, ...]:
    """A data shape: a non-empty tuple of positive integers (no silent ``int()`` coercion)."""
    if isinstance(shape, str | bytes) or not np.iterable(shape):
        raise TypeError(
            f"`{name}` must be a tuple of positive integers, got {type(shape).__name__} "
            f"({format_value(shape)})."
        )
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(
            f"`{name}` ({format_value(shape)}) must be a tuple of positive integers."
        ) from None
    if len(out) < 1 or any(s < 1 for s in out):
        raise InvariantDPError(f"`{name}` {format_value(out)} must be a tuple of positive sizes.")
    return out


def _same_matrix(a, b) -> bool:
    if a.shape != b.shape:
        return False
    if sparse.issparse(a) or sparse.issparse(b):
        return (sparse.csr_array(a) != sparse.csr_array(b)).nnz == 0
    return bool(np.array_equal(a, b))


def _verified_structure(structure, C, shape) -> _Structure:
    """The canonical structure of ``structure``, after checking ``C`` is its matrix.

    A structure selects the O(n) projections, so a matrix that is not the one
    the structure describes would be projected wrongly without any error.
    """
    kind = structure.get("kind") if isinstance(structure, dict) else None
    if kind not in _KINDS:
        raise InvariantDPError(
            f"`structure` kind ({format_value(kind)}) must be 'totals', 'nested_totals' or "
            "'one_way_margins'."
        )
    if kind == "one_way_margins":
        canon = one_way_margins(shape)
    elif kind == "totals":
        if "labels" not in structure:
            raise InvariantDPError("`structure` of kind 'totals' needs its 'labels'.")
        canon = totals(structure["labels"])
    else:
        if "levels" not in structure:
            raise InvariantDPError("`structure` of kind 'nested_totals' needs its 'levels'.")
        canon = nested_totals(list(structure["levels"]))
    if canon.shape != tuple(shape) or not _same_matrix(C, canon.matrix):
        raise InvariantDPError(
            f"`matrix` (shape {C.shape}) is not the matrix of the `structure` ({kind} on data "
            f"of shape {canon.shape}); pass structure=None for a general matrix."
        )
    return canon.structure


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
    """

    matrix: np.ndarray | sparse.sparray
    values: np.ndarray | None = None
    shape: tuple[int, ...] | None = None
    names: tuple[str, ...] | None = field(default=None)
    structure: dict | None = field(default=None, repr=False)

    def __post_init__(self):
        st = self.structure
        trusted = isinstance(st, _Structure) and self.matrix is st.matrix_ref
        C = self.matrix
        if trusted:
            pass  # verified and frozen when the structure was made
        elif sparse.issparse(C):
            C = sparse.csr_array(C, dtype=float, copy=True)
            if C.ndim != 2:
                raise InvariantDPError(f"`matrix` must be 2-D, got {C.ndim} dimension(s).")
            if C.nnz and not np.all(np.isfinite(C.data)):
                raise InvariantDPError("`matrix` must contain only finite values.")
        else:
            C = check_finite_array("matrix", C, allow_bool=True)
            if C.ndim != 2:
                raise InvariantDPError(f"`matrix` must be 2-D, got {C.ndim} dimension(s).")
        k, n = C.shape
        shape = (n,) if self.shape is None else _check_shape("shape", self.shape)
        if math.prod(shape) != n:
            raise InvariantDPError(
                f"`shape` {shape} has {math.prod(shape)} cells but `matrix` has {n} columns."
            )
        values = None
        if self.values is not None:
            values = check_finite_array("values", self.values)
            if values.shape != (k,):
                raise InvariantDPError(f"`values` must have shape ({k},), got {values.shape}.")
        names = None
        if self.names is not None:
            if isinstance(self.names, str | bytes):
                raise TypeError(
                    f"`names` must be a sequence of labels, got {type(self.names).__name__}."
                )
            names = tuple(str(s) for s in self.names)
            if len(names) != k:
                raise InvariantDPError(f"`names` must have {k} entries, got {len(names)}.")
        if st is not None and not (trusted and st.shape_ref == shape):
            st = _verified_structure(st, C, shape)
            C = st.matrix_ref  # equal to C; sharing it lets later copies skip the check
        elif st is None:
            C = _freeze_matrix(C)
        object.__setattr__(self, "matrix", C)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "values", None if values is None else _read_only(values))
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "structure", st)
        object.__setattr__(self, "_cache", {})

    @classmethod
    def _trusted(cls, C, shape, names, structure: dict) -> Invariants:
        """Build from a structure this module derived itself (no verification needed)."""
        out = object.__new__(cls)
        C = _freeze_matrix(C)
        object.__setattr__(out, "matrix", C)
        object.__setattr__(out, "values", None)
        object.__setattr__(out, "shape", tuple(shape))
        object.__setattr__(out, "names", None if names is None else tuple(names))
        object.__setattr__(out, "structure", _make_structure(structure, C, shape))
        object.__setattr__(out, "_cache", {})
        return out

    # --- basic properties ------------------------------------------------------

    @property
    def n_invariants(self) -> int:
        return self.matrix.shape[0]

    @property
    def n_cells(self) -> int:
        """``n``, the number of cells of the data."""
        return self.matrix.shape[1]

    @property
    def kind(self) -> str:
        """``"totals"``, ``"nested_totals"``, ``"one_way_margins"`` or ``"general"``."""
        return "general" if self.structure is None else self.structure["kind"]

    @property
    def rank(self) -> int:
        """Dimension of the row space of ``C`` (``n_c``); ``n - rank`` is dim ker C."""
        if "rank" not in self._cache:
            kind = self.kind
            if kind in ("totals", "nested_totals"):
                r = int(self._groups()[1])
            elif kind == "one_way_margins":
                r = 1 + sum(s - 1 for s in self.shape)
            else:
                r = int(self._dense_svd()[0].shape[0])
            self._cache["rank"] = r
        return self._cache["rank"]

    # --- evaluation ------------------------------------------------------------

    def _flat(self, x, name: str = "x") -> np.ndarray:
        x = check_finite_array(name, x)
        if x.shape != self.shape and x.shape != (self.n_cells,):
            raise InvariantDPError(f"`{name}` must have shape {self.shape}, got {x.shape}.")
        return x.reshape(-1)

    def apply(self, x) -> np.ndarray:
        """``C @ x.ravel()`` for data ``x`` of shape ``self.shape``."""
        return self._apply_flat(self._flat(x))

    def _apply_flat(self, flat: np.ndarray) -> np.ndarray:
        if self.kind in ("totals", "nested_totals"):
            codes, g = self._groups()
            sums = np.bincount(codes, weights=flat, minlength=g)
            if self.kind == "totals":
                return sums
            return np.concatenate([np.bincount(m, weights=sums) for m in self._level_maps()])
        return np.asarray(self.matrix @ flat, dtype=float)

    def of(self, x) -> Invariants:
        """The same invariants with their values computed from data ``x``."""
        return self._with_values(self.apply(x))

    def _with_values(self, values: np.ndarray) -> Invariants:
        """Copy with validated ``values`` (finite, shape (k,)), sharing the structure caches."""
        out = object.__new__(Invariants)
        for name in ("matrix", "shape", "names", "structure"):
            object.__setattr__(out, name, getattr(self, name))
        object.__setattr__(out, "values", _read_only(np.array(values, dtype=float, copy=True)))
        object.__setattr__(out, "_cache", dict(self._cache))
        return out

    def check(self, x, *, name: str = "x", rtol: float = 1e-9) -> None:
        """Raise ``ValueError`` unless ``x`` satisfies ``C x = c`` to relative accuracy ``rtol``.

        Row ``i`` may be off by ``rtol * (|C| |x| + |c|)_i``: relative to the
        magnitudes summed, so rounding in a sum of large or cancelling terms
        (a projected release with huge noise) is not mistaken for a violation.
        """
        if self.values is None:
            raise InvariantDPError("these invariants carry no values to check against.")
        flat = self._flat(x, name)
        got = self._apply_flat(flat)
        tol = rtol * (self._magnitude(np.abs(flat)) + np.abs(self.values))
        bad = np.flatnonzero(~(np.abs(got - self.values) <= tol))
        if bad.size:
            i = bad[0]
            label = self.names[i] if self.names else f"row {i}"
            raise InvariantDPError(
                f"`{name}` does not satisfy the invariants: {label} is {got[i]:.17g}, "
                f"the invariant value is {self.values[i]:.17g} (relative tolerance {rtol:g})."
            )

    def _magnitude(self, flat_abs: np.ndarray) -> np.ndarray:
        """``|C| @ |x|``, the scale of every invariant sum (for relative tolerances)."""
        if self.kind != "general":
            return self._apply_flat(flat_abs)  # structured C has 0/1 entries
        return np.asarray(abs(self.matrix) @ flat_abs, dtype=float)

    def _check_consistent(self, name: str = "values", rtol: float = 1e-9) -> None:
        """Raise unless some data satisfy ``C x = c``, i.e. ``c`` lies in the range of ``C``.

        Margins must share one grand total, nested totals must add up to their
        parents; a general ``C`` of full row rank is always consistent, a
        rank-deficient one is checked by projecting ``c`` on the range of ``C``
        when it has at most ``_CONSISTENCY_LIMIT`` entries (for larger ones a
        release whose value satisfies ``C value = c`` shows consistency).
        """
        if self.values is None:
            return
        c = self.values
        kind = self.kind
        if kind == "totals":
            return
        if kind == "one_way_margins":
            sums, start = [], 0
            for size in self.shape:
                part = c[start : start + size]
                sums.append((float(np.sum(part)), float(np.sum(np.abs(part)))))
                start += size
            scale = max(m for _, m in sums)
            low, high = min(t for t, _ in sums), max(t for t, _ in sums)
            if not high - low <= rtol * scale:
                raise InvariantDPError(
                    f"`{name}` are not the margins of any table: the margins along the "
                    f"axes add up to different totals ({low:.17g} and {high:.17g})."
                )
            return
        if kind == "nested_totals":
            codes = [np.asarray(cd, dtype=np.intp).reshape(-1) for cd in self.structure["codes"]]
            sizes = [int(cd.max()) + 1 for cd in codes]
            starts = np.concatenate([[0], np.cumsum(sizes)])
            for j in range(1, len(codes)):
                parent = np.zeros(sizes[j], dtype=np.intp)
                parent[codes[j]] = codes[j - 1]
                child = c[starts[j] : starts[j + 1]]
                own = c[starts[j - 1] : starts[j]]
                got = np.bincount(parent, weights=child, minlength=sizes[j - 1])
                mag = np.bincount(parent, weights=np.abs(child), minlength=sizes[j - 1])
                bad = np.flatnonzero(~(np.abs(got - own) <= rtol * (mag + np.abs(own))))
                if bad.size:
                    i = int(starts[j - 1] + bad[0])
                    label = self.names[i] if self.names else f"row {i}"
                    raise InvariantDPError(
                        f"`{name}` are not consistent: {label} is {own[bad[0]]:.17g} but the "
                        f"totals of level {j} inside it add up to {got[bad[0]]:.17g}."
                    )
            return
        k, n = self.matrix.shape
        if k * n > _CONSISTENCY_LIMIT:
            return  # an SVD would take too long; a release's value still checks C value = c
        if self.rank == k:
            return
        C = self._dense_matrix()
        M = C @ self._row_basis().T  # spans the range of C
        Q = linalg.orth(M) if M.size else np.zeros((C.shape[0], 0))
        resid = c - Q @ (Q.T @ c)
        if not np.linalg.norm(resid) <= 1e3 * rtol * np.linalg.norm(c):
            raise InvariantDPError(
                f"`{name}` are not consistent: no data satisfy C x = values (the values are "
                f"off the range of C by {np.linalg.norm(resid):.3g} in norm)."
            )

    # --- null-space geometry ---------------------------------------------------

    def project(self, v) -> np.ndarray:
        r"""Orthogonal projection :math:`\Pi_N v` onto the null space of ``C``.

        ``v`` has shape ``self.shape`` or ``(n,)`` (result has the same shape),
        or ``(m, n)`` for ``m`` vectors at once.  The method is chosen by
        structure: group centring for :func:`totals` and :func:`nested_totals`,
        centring along every axis for :func:`one_way_margins` (double centring
        for a two-way table), all ``O(n)``; a thin SVD of ``C`` (``v - Q_R Q_R^T
        v``) for a general matrix.

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
        out_shape = v.shape
        V = self._batch(v, "v")
        kind = self.kind
        if kind in ("totals", "nested_totals"):
            codes, g = self._groups()
            counts = self._group_counts()
            m = V.shape[0]
            if m == 1:  # fast path: one vector
                means = np.bincount(codes, weights=V[0], minlength=g) / counts
                return (V[0] - means[codes]).reshape(out_shape)
            offs = (np.arange(m)[:, None] * g + codes[None, :]).reshape(-1)
            sums = np.bincount(offs, weights=V.reshape(-1), minlength=m * g).reshape(m, g)
            means = sums / counts
            out = V - np.take_along_axis(means, np.broadcast_to(codes, V.shape), axis=1)
        elif kind == "one_way_margins":
            T = V.reshape((V.shape[0],) + self.shape)
            d = len(self.shape)
            out = T.copy()
            for axis in range(1, d + 1):
                others = tuple(a for a in range(1, d + 1) if a != axis)
                out -= T.mean(axis=others, keepdims=True)
            out += (d - 1) * T.mean(axis=tuple(range(1, d + 1)), keepdims=True)
            out = out.reshape(V.shape)
        else:
            QR = self._row_basis()
            out = V - (V @ QR.T) @ QR if QR.shape[0] else V.copy()
        return out.reshape(out_shape)

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
        if kind in ("totals", "nested_totals"):
            out = self._helmert_groups_apply(W)
        elif kind == "one_way_margins":
            out = self._margins_apply(W)
        else:
            out = W @ self._null_basis_general().T
        return out[0] if w.ndim == 1 else out

    def null_space_coordinates(self, v) -> np.ndarray:
        """``Q_N.T @ v`` (coordinates of ``v`` in the basis of :meth:`null_space_apply`)."""
        v = np.asarray(v, dtype=float)
        V = self._batch(v, "v")
        kind = self.kind
        if kind in ("totals", "nested_totals"):
            out = self._helmert_groups_coords(V)
        elif kind == "one_way_margins":
            out = self._margins_coords(V)
        else:
            out = V @ self._null_basis_general()
        return out[0] if v.ndim == 1 or v.shape == self.shape else out

    # --- helpers ---------------------------------------------------------------

    def _batch(self, v, name):
        n = self.n_cells
        if v.shape == self.shape or v.shape == (n,):
            return v.reshape(1, n)
        if v.ndim == 2 and v.shape[1] == n:
            return v
        if v.shape[1:] == self.shape:
            return v.reshape(v.shape[0], n)
        raise InvariantDPError(
            f"`{name}` must have shape {self.shape}, ({n},) or (m, {n}), got {v.shape}."
        )

    def _groups(self):
        """(finest group code of every cell, number of finest groups)."""
        if "groups" not in self._cache:
            st = self.structure
            if self.kind == "totals":
                codes = np.asarray(st["codes"], dtype=np.intp).reshape(-1)
            else:
                codes = np.asarray(st["codes"][-1], dtype=np.intp).reshape(-1)
            codes = _read_only(codes.copy())
            self._cache["groups"] = (codes, int(codes.max()) + 1 if codes.size else 0)
        return self._cache["groups"]

    def _group_counts(self):
        if "counts" not in self._cache:
            codes, g = self._groups()
            self._cache["counts"] = _read_only(np.bincount(codes, minlength=g).astype(float))
        return self._cache["counts"]

    def _level_maps(self):
        """For nested totals: the level-``j`` code of every finest group."""
        if "level_maps" not in self._cache:
            codes, g = self._groups()
            maps = []
            for lev in self.structure["codes"]:
                m = np.zeros(g, dtype=np.intp)
                m[codes] = np.asarray(lev, dtype=np.intp).reshape(-1)
                maps.append(_read_only(m))
            self._cache["level_maps"] = tuple(maps)
        return self._cache["level_maps"]

    def _helmert_layout(self):
        """Cells sorted by group; position of each cell within its group."""
        if "helmert" not in self._cache:
            codes, g = self._groups()
            order = np.argsort(codes, kind="stable")
            counts = np.bincount(codes, minlength=g)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            pos = np.arange(codes.size) - np.repeat(starts, counts)  # position in sorted order
            # coordinate index of (group, k >= 1): groups in order, k = 1..m_g-1
            coord_start = starts - np.arange(g)  # sum over previous groups of (m - 1)
            self._cache["helmert"] = tuple(
                _read_only(a) for a in (order, pos, np.repeat(coord_start, counts), counts)
            )
        return self._cache["helmert"]

    def _helmert_groups_apply(self, W):
        order, pos, cstart, counts = self._helmert_layout()
        m, n = W.shape[0], order.size
        k = pos.astype(float)
        has = pos >= 1
        idx = np.where(has, cstart + pos - 1, 0)
        wk = np.where(has, W[:, idx], 0.0)  # coefficient of h_k for k = pos
        with np.errstate(divide="ignore", invalid="ignore"):
            norm = np.where(has, 1.0 / np.sqrt(k * (k + 1.0)), 0.0)
        a = wk * norm  # a_k = w_k / sqrt(k(k+1))
        # out[p] = sum_{k > p} a_k - p * a_p  (within the group, sorted order)
        grp_end = np.repeat(np.cumsum(counts), counts)
        csum = np.concatenate([np.zeros((m, 1)), np.cumsum(a, axis=1)], axis=1)
        tail = csum[:, grp_end] - csum[:, np.arange(n) + 1]
        sorted_out = tail - k * a
        out = np.empty_like(sorted_out)
        out[:, order] = sorted_out
        return out

    def _helmert_groups_coords(self, V):
        order, pos, cstart, counts = self._helmert_layout()
        m = V.shape[0]
        Vs = V[:, order]
        k = pos.astype(float)
        grp_start = np.repeat(np.cumsum(counts) - counts, counts)
        csum = np.concatenate([np.zeros((m, 1)), np.cumsum(Vs, axis=1)], axis=1)
        before = csum[:, np.arange(order.size)] - csum[:, grp_start]  # sum_{p < k} v_p
        has = pos >= 1
        with np.errstate(divide="ignore", invalid="ignore"):
            coef = np.where(has, (before - k * Vs) / np.sqrt(k * (k + 1.0)), 0.0)
        return coef[:, has]

    def _margin_helmert(self):
        if "mhelmert" not in self._cache:
            self._cache["mhelmert"] = tuple(_read_only(_helmert(s)) for s in self.shape)
        return self._cache["mhelmert"]

    def _margin_subsets(self):
        d = len(self.shape)
        return [A for size in range(2, d + 1) for A in itertools.combinations(range(d), size)]

    def _margins_apply(self, W):
        H = self._margin_helmert()
        m = W.shape[0]
        out = np.zeros((m,) + self.shape)
        start = 0
        for A in self._margin_subsets():
            bshape = tuple(self.shape[a] - 1 for a in A)
            size = int(np.prod(bshape))
            block = W[:, start : start + size].reshape((m,) + bshape)
            start += size
            for j, a in enumerate(A):  # contract axis j+1 of block with H_a
                block = np.moveaxis(np.tensordot(block, H[a], axes=([j + 1], [1])), -1, j + 1)
            full = block
            for a in range(len(self.shape)):
                if a not in A:
                    full = np.expand_dims(full, a + 1) / np.sqrt(self.shape[a])
            out += full
        return out.reshape(m, -1)

    def _margins_coords(self, V):
        H = self._margin_helmert()
        m = V.shape[0]
        T = V.reshape((m,) + self.shape)
        parts = []
        for A in self._margin_subsets():
            block = T
            for a in range(len(self.shape)):
                if a not in A:
                    block = block.sum(axis=a + 1, keepdims=True) / np.sqrt(self.shape[a])
            block = block.reshape((m,) + tuple(self.shape[a] for a in A))
            for j, a in enumerate(A):
                block = np.moveaxis(np.tensordot(block, H[a], axes=([j + 1], [0])), -1, j + 1)
            parts.append(block.reshape(m, -1))
        return np.concatenate(parts, axis=1) if parts else np.zeros((m, 0))

    def _dense_matrix(self):
        C = self.matrix
        if sparse.issparse(C):
            if C.shape[0] * C.shape[1] > _DENSE_LIMIT:
                return None
            return C.toarray()
        return C

    def _dense_svd(self):
        """(row-space basis Q_R, full V^T or None) of a general C."""
        if "svd" not in self._cache:
            C = self._dense_matrix()
            if C is None:
                self._cache["svd"] = (None, None)
                raise InvariantDPError(
                    f"`matrix` of shape {self.matrix.shape} is too large for a dense SVD; "
                    "use the structured constructors totals/nested_totals/one_way_margins."
                )
            if C.shape[0] == 0:
                QR = np.zeros((0, C.shape[1]))
            else:
                _, s, Vt = linalg.svd(C, full_matrices=False)
                tol = max(C.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0)
                QR = Vt[: int(np.sum(s > tol))]
            self._cache["svd"] = (_read_only(QR), None)
        QR = self._cache["svd"][0]
        if QR is None:
            raise InvariantDPError(f"`matrix` of shape {self.matrix.shape} is too large.")
        return self._cache["svd"]

    def _row_basis(self):
        return self._dense_svd()[0]

    def _null_basis_general(self):
        if "null" not in self._cache:
            C = self._dense_matrix()
            Q = linalg.null_space(C) if C.shape[0] else np.eye(C.shape[1])
            if Q.shape[1] != self.n_cells - self.rank:  # rcond differences: use SVD rank
                _, _, Vt = linalg.svd(C, full_matrices=True)
                Q = Vt[self.rank :].T
            i = np.argmax(np.abs(Q), axis=0)
            Q = Q * np.sign(Q[i, np.arange(Q.shape[1])])
            self._cache["null"] = _read_only(Q)
        return self._cache["null"]

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
        out = {
            "values": None if self.values is None else self.values.tolist(),
            "shape": list(self.shape),
            "names": None if self.names is None else list(self.names),
        }
        if self.structure is not None:
            sd = thaw(self._structure_dict())  # the cached dict stays private
            return {"matrix": {"structured": True}, "structure": sd, **out}
        C = self.matrix
        if sparse.issparse(C):
            coo = sparse.coo_array(C)
            mat = {
                "sparse": True,
                "shape": list(coo.shape),
                "row": coo.row.tolist(),
                "col": coo.col.tolist(),
                "data": coo.data.tolist(),
            }
        else:
            mat = {"sparse": False, "data": C.tolist()}
        return {"matrix": mat, **out}

    def _structure_dict(self) -> dict:
        """JSON-able structure, cached frozen (label arrays can hold millions of cells)."""
        if "structure_dict" not in self._cache:
            st = self.structure
            if st["kind"] == "one_way_margins":
                sd = {"kind": "one_way_margins"}
            elif st["kind"] == "totals":
                sd = {"kind": "totals", "labels": np.asarray(st["labels"]).tolist()}
            else:
                sd = {
                    "kind": "nested_totals",
                    "levels": [np.asarray(lev).tolist() for lev in st["levels"]],
                }
            self._cache["structure_dict"] = freeze(sd)
        return self._cache["structure_dict"]

    def structure_dict(self) -> dict:
        """:meth:`to_dict` without the values: enough to rebuild ``C`` and its projection."""
        d = self.to_dict()
        d["values"] = None
        return d

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as strict JSON (RFC 8259)."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(
        cls, text, *, max_bytes: int = MAX_JSON_CHARS, max_cells: int = MAX_DOCUMENT_CELLS
    ) -> Invariants:
        """Read :meth:`to_json` output: strict JSON of bounded size, checked by :meth:`from_dict`.

        Examples
        --------
        >>> inv = totals([0, 0, 1]).of([1, 2, 3])
        >>> Invariants.from_json(inv.to_json()) == inv
        True
        """
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
        >>> inv = one_way_margins((2, 2)).of([[3, 1], [2, 4]])
        >>> Invariants.from_dict(inv.to_dict()) == inv
        True
        >>> bad = inv.to_dict()
        >>> bad["values"] = [4.0, 6.0, 5.0, 6.0]
        >>> Invariants.from_dict(bad)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        invariantdp.exceptions.InvariantDPError: `invariants.values` are not the margins ...
        """
        doc_object(
            path, d, required=("matrix", "values", "shape", "names"), optional=("structure",)
        )
        shape_path = doc_path(path, "shape")
        shape = doc_shape(shape_path, d["shape"], max_cells=max_cells, minimum=1)
        if not shape:
            raise doc_error(shape_path, d["shape"], "must have at least one dimension.")
        mpath = doc_path(path, "matrix")
        st = d.get("structure")
        if st is not None:
            base = _structured_from_doc(doc_path(path, "structure"), st, shape, max_cells)
            m = doc_object(mpath, d["matrix"], required=("structured",))
            if m["structured"] is not True:
                raise doc_error(
                    doc_path(mpath, "structured"), m["structured"], "must be true with a structure."
                )
        else:
            base = _general_from_doc(mpath, d["matrix"], shape, max_cells)
        k = base.n_invariants
        values = d["values"]
        if values is not None:
            values = np.array(doc_numbers(doc_path(path, "values"), values, length=k), dtype=float)
        names = d["names"]
        if names is not None:
            npath = doc_path(path, "names")
            doc_list(npath, names)
            if len(names) != k:
                raise doc_error(npath, names, f"must have {k} entries (one per invariant).")
            names = tuple(doc_str(doc_path(npath, i), s) for i, s in enumerate(names))
        out = object.__new__(cls)
        object.__setattr__(out, "matrix", base.matrix)
        object.__setattr__(out, "values", None if values is None else _read_only(values))
        object.__setattr__(out, "shape", base.shape)
        object.__setattr__(out, "names", names)
        object.__setattr__(out, "structure", base.structure)
        object.__setattr__(out, "_cache", dict(base._cache))
        out._check_consistent(f"{doc_path(path, 'values')}")
        return out

    def __eq__(self, other) -> bool:
        if not isinstance(other, Invariants):
            return NotImplemented
        a, b = self.matrix, other.matrix
        if a.shape != b.shape:
            return False
        if sparse.issparse(a) or sparse.issparse(b):
            same_matrix = sparse.csr_array(a).__ne__(sparse.csr_array(b)).nnz == 0
        else:
            same_matrix = np.array_equal(a, b)
        same_values = (self.values is None and other.values is None) or (
            self.values is not None
            and other.values is not None
            and np.array_equal(self.values, other.values)
        )
        return (
            same_matrix
            and same_values
            and self.shape == other.shape
            and self.names == other.names
            and self.kind == other.kind
        )

    __hash__ = None


def _doc_labels(path: str, value, shape) -> np.ndarray:
    """A label array of the exact ``shape``: all integers (int64 range) or all strings."""
    flat = doc_nested(path, value, shape)
    types = set(map(type, flat))
    if types <= {int}:
        if max(flat) >= 2**63 or min(flat) < -(2**63):
            raise doc_error(path, value, "must hold labels in the int64 range.")
        return np.array(flat, dtype=np.int64).reshape(shape)
    if types <= {str}:
        return np.array(flat, dtype=str).reshape(shape)
    odd = [v for v in flat if type(v) not in (int, str)]
    if odd:
        raise doc_error(
            path, odd[0], f"must hold integer or string labels, got {type(odd[0]).__name__}."
        )
    raise doc_error(path, value, "must not mix integer and string labels.")


def _structured_from_doc(path: str, st, shape, max_cells) -> Invariants:
    doc_object(path, st, required=("kind",), optional=("labels", "levels"))
    kind = doc_str(doc_path(path, "kind"), st["kind"], choices=_KINDS)
    expected = {"one_way_margins": set(), "totals": {"labels"}, "nested_totals": {"levels"}}[kind]
    extra = set(st) - {"kind"}
    if extra != expected:
        wrong = sorted(extra ^ expected)
        raise doc_error(
            path,
            st,
            f"of kind {kind!r} must have exactly the keys "
            f"{sorted({'kind'} | expected)} (check {', '.join(map(repr, wrong))}).",
        )
    if kind == "one_way_margins":
        return one_way_margins(shape)
    if kind == "totals":
        return totals(_doc_labels(doc_path(path, "labels"), st["labels"], shape))
    lpath = doc_path(path, "levels")
    levels = doc_list(lpath, st["levels"], min_length=1, max_length=64)
    return nested_totals(
        [_doc_labels(doc_path(lpath, j), lev, shape) for j, lev in enumerate(levels)]
    )


def _general_from_doc(path: str, m, shape, max_cells) -> Invariants:
    doc_object(path, m, required=("sparse", "data"), optional=("shape", "row", "col"))
    flag = m["sparse"]
    if not isinstance(flag, bool):
        raise doc_error(doc_path(path, "sparse"), flag, "must be true or false.")
    n = math.prod(shape)
    if flag:
        doc_object(path, m, required=("sparse", "shape", "row", "col", "data"))
        mshape = doc_list(doc_path(path, "shape"), m["shape"], min_length=2, max_length=2)
        k = doc_int(doc_path(path, "shape[0]"), mshape[0], minimum=0, maximum=max_cells)
        doc_int(doc_path(path, "shape[1]"), mshape[1], minimum=n, maximum=n)
        data = doc_numbers(doc_path(path, "data"), m["data"])
        nnz = len(data)
        if nnz > max_cells:
            raise doc_error(doc_path(path, "data"), data, f"must have at most {max_cells} entries.")
        row = doc_numbers(doc_path(path, "row"), m["row"], integer=True, length=nnz)
        col = doc_numbers(doc_path(path, "col"), m["col"], integer=True, length=nnz)
        if nnz and (min(row) < 0 or max(row) >= k):
            raise doc_error(doc_path(path, "row"), row, f"must hold row indices in [0, {k}).")
        if nnz and (min(col) < 0 or max(col) >= n):
            raise doc_error(doc_path(path, "col"), col, f"must hold column indices in [0, {n}).")
        ij = (np.array(row, dtype=np.int64), np.array(col, dtype=np.int64))
        C = sparse.csr_array((np.array(data, dtype=float), ij), shape=(k, n))
    else:
        doc_object(path, m, required=("sparse", "data"))
        dpath = doc_path(path, "data")
        rows = doc_list(dpath, m["data"])
        if len(rows) * n > max_cells:
            raise doc_error(
                dpath, rows, f"has {len(rows)} x {n} entries; at most {max_cells} are allowed."
            )
        for i, row in enumerate(rows):
            doc_numbers(doc_path(dpath, i), row, length=n)
        C = np.array(rows, dtype=float).reshape(len(rows), n)
    return Invariants(C, None, shape, None)


def _helmert(s: int) -> np.ndarray:
    """``s x (s-1)`` orthonormal basis of the vectors summing to 0 (Helmert)."""
    H = np.zeros((s, s - 1))
    for k in range(1, s):
        H[:k, k - 1] = 1.0
        H[k, k - 1] = -float(k)
        H[:, k - 1] /= np.sqrt(k * (k + 1.0))
    return H


def _group_matrix(codes: np.ndarray, g: int) -> sparse.csr_array:
    """Sparse ``g x n`` indicator matrix of group membership, built in O(n)."""
    n = codes.size
    order = np.argsort(codes, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=g))])
    return sparse.csr_array((np.ones(n), order, indptr), shape=(g, n))


def one_way_margins(shape) -> Invariants:
    """Invariants fixing every one-way margin of a table of the given shape.

    For an ``r x c`` table the rows are the ``r`` row sums followed by the
    ``c`` column sums, so a 2 x 2 table gives ``(t1., t2., t.1, t.2)``.  The
    null space is the space of interactions; :meth:`Invariants.project`
    centres along every axis (double centring for two axes), in ``O(n)``.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import one_way_margins
    >>> one_way_margins((2, 2)).apply(np.array([[3, 1], [2, 4]]))
    array([4., 6., 5., 5.])
    >>> one_way_margins((2, 2)).projector() * 4
    array([[ 1., -1., -1.,  1.],
           [-1.,  1.,  1., -1.],
           [-1.,  1.,  1., -1.],
           [ 1., -1., -1.,  1.]])
    """
    shape = _check_shape("shape", shape)
    n = math.prod(shape)
    idx = np.indices(shape).reshape(len(shape), n)
    rows, names, offset = [], [], 0
    for axis, size in enumerate(shape):
        rows.append(offset + idx[axis])
        names.extend(f"margin[axis={axis}][{j}]" for j in range(size))
        offset += size
    row = np.concatenate(rows)
    col = np.tile(np.arange(n), len(shape))
    C = sparse.csr_array((np.ones(row.size), (row, col)), shape=(offset, n))
    if n * offset <= 1_000_000:
        C = C.toarray()
    return Invariants._trusted(C, shape, names, {"kind": "one_way_margins"})


def _labels_array(name: str, labels) -> np.ndarray:
    """A private copy of the labels: integers, strings or whole-number floats up to 2**53."""
    try:
        arr = np.array(labels, copy=True)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(
            f"`{name}` must be an array of labels, got {type(labels).__name__} "
            f"({format_value(labels)})."
        ) from None
    if arr.ndim == 0 or arr.size == 0:
        raise InvariantDPError(f"`{name}` must be a non-empty array of labels, one per cell.")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise InvariantDPError(f"`{name}` must hold integer (or string) labels.")
        if np.max(np.abs(arr)) > EXACT_INT:
            raise InvariantDPError(
                f"`{name}` holds float labels above 2**53, which a float cannot hold exactly; "
                "pass integer or string labels."
            )
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iuUSb":
        raise InvariantDPError(
            f"`{name}` must hold integer or string labels, got dtype {arr.dtype}."
        )
    return arr


def totals(labels) -> Invariants:
    """Invariants fixing the total of every group of cells.

    Parameters
    ----------
    labels : array_like of int or str
        One group label per cell; its shape is the data shape.  Row ``g`` of
        ``C`` is the indicator of the ``g``-th smallest label.

    Returns
    -------
    Invariants
        With ``structure`` ``{"kind": "totals"}``, so projection onto the null
        space is within-group centring, ``O(n)``.

    References
    ----------
    Gao, Gong & Yu (2022), Example 3 (a single total) and Sec. 5.1 (state
    totals of county counts).

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> inv = totals([1, 1, 2, 2, 2])
    >>> inv.apply([3, 4, 1, 1, 1])
    array([7., 3.])
    >>> inv.rank
    2
    """
    arr = _labels_array("labels", labels)
    uniq, codes = np.unique(arr.reshape(-1), return_inverse=True)
    g = uniq.size
    C = _group_matrix(codes, g)
    names = tuple(f"total[{u}]" for u in uniq.tolist())
    st = {"kind": "totals", "labels": arr, "codes": codes}
    return Invariants._trusted(C, arr.shape, names, st)


def nested_totals(levels) -> Invariants:
    """Invariants fixing the totals at every level of a hierarchy.

    Parameters
    ----------
    levels : sequence of array_like
        Label arrays, coarsest first, each with one label per cell (e.g.
        state, county and tract of every block).  A group at level ``j`` is
        a path ``(levels[0], ..., levels[j])``, so labels may repeat across
        parents (county ``001`` of two states are two counties).

    Returns
    -------
    Invariants
        Rows: the totals of level 0, then level 1, ...  ``C`` is rank
        deficient (coarse totals are sums of fine ones): ``rank`` is the number
        of finest groups, and the projection onto the null space is centring
        within the finest groups, ``O(n)``.

    Examples
    --------
    >>> from invariantdp.invariants import nested_totals
    >>> state = [0, 0, 0, 1, 1]
    >>> county = [0, 0, 1, 0, 0]
    >>> inv = nested_totals([state, county])
    >>> inv.apply([1, 2, 3, 4, 5])
    array([6., 9., 3., 3., 9.])
    >>> inv.rank
    3
    """
    if isinstance(levels, np.ndarray) and levels.ndim == 1:
        levels = [levels]
    levels = [_labels_array(f"levels[{j}]", lev) for j, lev in enumerate(levels)]
    if not levels:
        raise InvariantDPError("`levels` must hold at least one label array.")
    shape = levels[0].shape
    for j, lev in enumerate(levels):
        if lev.shape != shape:
            raise InvariantDPError(
                f"`levels[{j}]` must have shape {shape} like `levels[0]`, got {lev.shape}."
            )
    codes_per_level, names, mats = [], [], []
    prev = np.zeros(int(np.prod(shape)), dtype=np.int64)
    for j, lev in enumerate(levels):
        uniq, lc = np.unique(lev.reshape(-1), return_inverse=True)
        key = prev * uniq.size + lc  # path code: parent code then own label
        ukey, codes = np.unique(key, return_inverse=True)
        g = ukey.size
        parent = ukey // uniq.size
        own = uniq[ukey % uniq.size]
        if j == 0:
            names.extend(f"level[0][{u}]" for u in own.tolist())
        else:
            names.extend(
                f"level[{j}][{p}/{u}]" for p, u in zip(parent.tolist(), own.tolist(), strict=True)
            )
        codes_per_level.append(codes)
        mats.append(_group_matrix(codes, g))
        prev = codes.astype(np.int64)
    C = sparse.vstack(mats, format="csr")
    st = {"kind": "nested_totals", "levels": levels, "codes": codes_per_level}
    return Invariants._trusted(C, shape, names, st)


def null_space_projector(invariants: Invariants) -> splinalg.LinearOperator:
    """The projector onto ker C as a ``scipy.sparse.linalg.LinearOperator``.

    It applies :meth:`Invariants.project`, so it costs ``O(n)`` per product for
    structured invariants and never stores an ``n x n`` matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import null_space_projector, one_way_margins
    >>> P = null_space_projector(one_way_margins((2, 3)))
    >>> np.allclose(P @ (P @ np.arange(6.0)), P @ np.arange(6.0))
    True
    """
    if not isinstance(invariants, Invariants):
        raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
    n = invariants.n_cells

    def mv(v):
        return invariants.project(np.asarray(v, dtype=float).reshape(-1))

    def mm(V):
        return invariants.project(np.asarray(V, dtype=float).T).T

    return splinalg.LinearOperator((n, n), matvec=mv, rmatvec=mv, matmat=mm, dtype=float)
