"""The three structured invariants as plain arrays: matrices, names, group codes.

:func:`margins_structure`, :func:`totals_structure` and
:func:`nested_structure` build the matrix ``C`` of the one-way margins of a
table, of group totals and of nested totals (Gao, Gong & Yu 2022, Example 3
and Sec. 5.1; Cho & Awan, Prop. 32), together with the row names and the
structure dict that selects the ``O(n)`` projections of
:class:`~invariantdp.invariants.Invariants`.  Nothing here depends on that
class, so the class and the document reader can both use these builders.

The helpers :func:`read_only`, :func:`freeze_matrix`, :func:`check_shape`,
the ``checked_*`` validators and :func:`same_matrix` are internal to the
``invariants`` package (public names so that its modules can share them;
not part of the package API).
"""

from __future__ import annotations

import copy
import math
import operator

import numpy as np
import pandas as pd
from scipy import sparse

from .._frames import CHUNK, dense_codes, remap, small_int_range
from .._validation import (
    EXACT_INT,
    FrozenDict,
    InvariantDPError,
    LabelArray,
    check_finite_array,
    format_value,
    freeze,
)

#: the kinds of structure that select an O(n) projection
KINDS = ("totals", "nested_totals", "one_way_margins")

#: one-way margins are stored dense while ``k * n`` is at most this
_DENSE_MARGINS = 1_000_000


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` itself, made read-only (cached arrays are shared by every copy)."""
    a.setflags(write=False)
    return a


def group_sums(codes: np.ndarray, g: int, weights=None) -> np.ndarray:
    """``np.bincount(codes, weights, minlength=g)``, reading read-only ``codes`` in place.

    ``np.bincount`` copies an index array it may not write to (the frozen
    codes of a structure: 80 MB at 10^7 cells, as long as the sums); ``np.add.at``
    reads it as it is and adds in the same order, so the sums are the same numbers.
    """
    if weights is None:
        out = np.zeros(g, dtype=np.intp)
        np.add.at(out, codes, 1)
        return out
    out = np.zeros(g)
    np.add.at(out, codes, np.asarray(weights, dtype=float))
    return out


def freeze_matrix(C):
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


class Structure(FrozenDict):
    """A verified, immutable structure, remembering the matrix and shape it was built with.

    The :attr:`Invariants.structure <invariantdp.invariants.Invariants.structure>`
    of structured invariants: a read-only mapping with ``"kind"``
    (``"totals"``, ``"nested_totals"`` or ``"one_way_margins"``) and the
    labels or group codes of that kind, which select the ``O(n)``
    projections.  An :class:`~invariantdp.invariants.Invariants` built from
    this very matrix and shape needs no verification; any other combination
    is checked against the structure.

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> st = totals([0, 0, 1]).structure
    >>> isinstance(st, Structure), st["kind"]
    (True, 'totals')
    """

    __slots__ = ("matrix_ref", "shape_ref")

    def __reduce__(self):
        return (make_structure, (dict(self), self.matrix_ref, self.shape_ref))

    def __deepcopy__(self, memo):
        matrix = copy.deepcopy(self.matrix_ref, memo)
        return make_structure(copy.deepcopy(dict(self), memo), matrix, self.shape_ref)


def make_structure(d: dict, matrix, shape) -> Structure:
    """A frozen :class:`Structure` of ``d`` for the (frozen) ``matrix`` and ``shape``."""
    out = Structure(freeze(d))
    out.matrix_ref = matrix
    out.shape_ref = tuple(shape)
    return out


def check_shape(name: str, shape) -> tuple[int, ...]:
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


def checked_matrix(C):
    """A 2-D finite matrix of float (a private CSR copy when ``C`` is sparse)."""
    if sparse.issparse(C):
        C = sparse.csr_array(C, dtype=float, copy=True)
        if C.ndim != 2:
            raise InvariantDPError(f"`matrix` must be 2-D, got {C.ndim} dimension(s).")
        if C.nnz and not np.all(np.isfinite(C.data)):
            raise InvariantDPError("`matrix` must contain only finite values.")
        return C
    C = check_finite_array("matrix", C, allow_bool=True)
    if C.ndim != 2:
        raise InvariantDPError(f"`matrix` must be 2-D, got {C.ndim} dimension(s).")
    return C


def checked_values(values, k: int) -> np.ndarray | None:
    """``k`` finite invariant values as an array, or None."""
    if values is None:
        return None
    out = check_finite_array("values", values)
    if out.shape != (k,):
        raise InvariantDPError(f"`values` must have shape ({k},), got {out.shape}.")
    return out


def checked_names(names, k: int) -> tuple[str, ...] | None:
    """``k`` row labels as a tuple of strings, or None."""
    if names is None:
        return None
    if isinstance(names, str | bytes):
        raise TypeError(f"`names` must be a sequence of labels, got {type(names).__name__}.")
    out = tuple(str(s) for s in names)
    if len(out) != k:
        raise InvariantDPError(f"`names` must have {k} entries, got {len(out)}.")
    return out


def same_matrix(a, b) -> bool:
    """True if the matrices ``a`` and ``b`` (dense or sparse) are equal entry by entry."""
    if a.shape != b.shape:
        return False
    if sparse.issparse(a) or sparse.issparse(b):
        return (sparse.csr_array(a) != sparse.csr_array(b)).nnz == 0
    return bool(np.array_equal(a, b))


class GroupMatrix:
    """The groups of grouped invariants, and their indicator matrix, built on first use only.

    The ``O(n)`` paths of grouped invariants work from the codes, so a
    release never needs ``C`` (``n`` nonzeros per level, about a third of
    the first release of 10^7 cells to build).  This holds what they need --
    the finest group of every cell, the group of every level each finest
    group lies in, the number of cells of each finest group -- and builds,
    freezes and remembers the matrix when :attr:`matrix` is first read;
    copies of an invariants object share one instance and so one matrix.

    Parameters
    ----------
    codes : ndarray
        Flat, read-only code of the finest group of every cell.
    maps : sequence of ndarray
        For every level, coarsest first, the code at that level of each
        finest group (read-only; the last one is the identity).
    sizes : sequence of int
        The number of groups of every level.
    counts : ndarray, optional
        The number of cells of each finest group, when known already.
    """

    __slots__ = ("codes", "maps", "sizes", "shape", "built", "_counts")

    def __init__(self, codes, maps, sizes, counts=None):
        self.codes = codes
        self.maps = tuple(maps)
        self.sizes = tuple(int(s) for s in sizes)
        self.shape = (sum(self.sizes), int(codes.size))
        self.built = None
        self._counts = None if counts is None else read_only(counts.astype(float))

    @classmethod
    def from_level_codes(cls, level_codes, sizes) -> GroupMatrix:
        """The groups of the per-cell codes of every level (coarsest first; nested)."""
        codes = read_only(np.asarray(level_codes[-1], dtype=np.intp).reshape(-1))
        g = int(sizes[-1])
        maps = []
        for lev in level_codes[:-1]:
            m = np.zeros(g, dtype=np.intp)
            m[codes] = np.asarray(lev, dtype=np.intp).reshape(-1)  # one group of each per cell
            maps.append(read_only(m))
        return cls(codes, [*maps, read_only(np.arange(g))], sizes)

    @property
    def counts(self) -> np.ndarray:
        """The number of cells of each finest group, as read-only floats (counted once)."""
        if self._counts is None:
            self._counts = read_only(group_sums(self.codes, self.sizes[-1]).astype(float))
        return self._counts

    def level_codes(self) -> list:
        """The group of every cell at every level (new arrays but the finest)."""
        return [m[self.codes] for m in self.maps[:-1]] + [self.codes]

    @property
    def matrix(self) -> sparse.csr_array:
        """``C``, canonical CSR with read-only storage (built once)."""
        if self.built is None:
            self.built = freeze_matrix(group_matrix(self.level_codes(), list(self.sizes)))
        return self.built

    def same_groups(self, other: GroupMatrix) -> bool:
        """True if both describe the same matrix, compared by their codes (``O(n)``).

        The row of a cell in a level's block is the level's map of its
        finest group, and every cell has one entry per level, so equal finest
        codes and equal maps are equivalent to equal matrices.
        """
        if self is other:
            return True
        return (
            self.shape == other.shape
            and self.sizes == other.sizes
            and np.array_equal(self.codes, other.codes)
            and all(np.array_equal(a, b) for a, b in zip(self.maps, other.maps, strict=True))
        )

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
        if "maps" not in state:  # pickled when the codes of every level were kept
            fresh = GroupMatrix.from_level_codes(state["codes"], state["sizes"])
            state = {**fresh.__getstate__(), "built": state["built"]}
        # unpickled arrays are writable: freeze them again, they are shared by every copy
        for name, value in state.items():
            object.__setattr__(self, name, value)
        for a in (self.codes, *self.maps):
            a.setflags(write=False)
        if self._counts is not None:
            self._counts.setflags(write=False)
        if self.built is not None:
            freeze_matrix(self.built)


def structure_groups(st: Structure) -> GroupMatrix:
    """The :class:`GroupMatrix` of a grouped structure (made from its codes if it has none)."""
    ref = st.matrix_ref
    if isinstance(ref, GroupMatrix):
        return ref
    # a structure pickled before the groups were kept beside it: its per-level codes
    level_codes = [st["codes"]] if st["kind"] == "totals" else list(st["codes"])
    level_codes = [np.asarray(c, dtype=np.intp).reshape(-1) for c in level_codes]
    return GroupMatrix.from_level_codes(level_codes, [int(c.max()) + 1 for c in level_codes])


def structure_matrix(st: Structure):
    """The matrix a :class:`Structure` was made with (built now if it is a :class:`GroupMatrix`)."""
    ref = st.matrix_ref
    return ref.matrix if isinstance(ref, GroupMatrix) else ref


def is_structure_matrix(st, C) -> bool:
    """True if ``C`` is the very matrix ``st`` was made with (so it needs no verification)."""
    if not isinstance(st, Structure):
        return False
    ref = st.matrix_ref
    if isinstance(ref, GroupMatrix):
        ref = ref.built  # None until built: then no matrix passed in can be it
    return ref is not None and C is ref


def group_matrix(codes, g) -> sparse.csr_array:
    """Sparse indicator matrix of group membership (groups x cells), built in O(n).

    ``codes`` is one array of group codes ``0..g-1``, or a list of them, one
    per level of a hierarchy from coarsest to finest, with ``g`` the list of
    their numbers of groups; the levels' matrices are stacked.  Every level
    must be a function of the finest (nested groups, with codes that sort
    like the finest codes, as :func:`nested_structure` makes them): then one
    stable ordering of the cells by their finest code lists the cells of
    every group of every level in increasing order, and no other sort is
    needed.
    """
    blocks = [codes] if isinstance(codes, np.ndarray) else list(codes)
    sizes = [g] if isinstance(codes, np.ndarray) else list(g)
    n = blocks[0].size
    itype = np.int32 if n < 2**31 else np.int64
    order = np.argsort(blocks[-1], kind="stable").astype(itype, copy=False)
    counts = np.concatenate(
        [np.bincount(c, minlength=s) for c, s in zip(blocks, sizes, strict=True)]
    )
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if indptr[-1] < 2**31:
        indptr = indptr.astype(itype)
    C = sparse.csr_array(
        (np.ones(n * len(blocks)), np.tile(order, len(blocks)), indptr), shape=(sum(sizes), n)
    )
    C.has_sorted_indices = True
    return C


def sorted_codes(values: np.ndarray, *, counts: bool = False) -> tuple:
    """``(uniques, codes)`` like ``np.unique(values, return_inverse=True)``, in O(n).

    The uniques are sorted as numpy sorts them.  Integer labels of a small
    range (census geography codes) are coded by counting, others by hashing;
    ``np.unique`` sorts all n values (about 20x slower for 10^7 labels).
    With ``counts=True`` a third entry is the number of each unique, or None
    when hashing found the codes (count them if they are needed).
    """
    small = small_int_range(values, values.size)
    if small is not None:
        keys, low, size = small
        out = None if np.may_share_memory(keys, values) else keys  # shifted keys are ours
        codes, present, _, *tally = dense_codes(keys, size, counts=counts, out=out)
        out = (present + low).astype(values.dtype), codes
    else:
        codes, uniq = pd.factorize(values, sort=True)
        out = np.asarray(uniq, dtype=values.dtype), codes.astype(np.int64, copy=False)
        tally = [None] if counts else []
    return (*out, *tally)


def _refining_codes(parent: np.ndarray, own: np.ndarray, n_own: int):
    """Path codes of ``(parent, own)`` pairs when every ``own`` label has one parent.

    Census levels nest (a tract code names one county), so the path code is
    the own label's code reordered by parent; this avoids hashing n keys.
    Returns ``(parent_of_group, own_of_group, codes)``, or None when some
    label appears under two parents (the caller then hashes the pairs).
    """
    first = np.empty(n_own, dtype=parent.dtype)
    first[own] = parent  # the last parent seen for each label
    if not np.array_equal(first[own], parent):
        return None
    order = np.lexsort((np.arange(n_own), first))  # by parent, then own label
    rank = np.empty(n_own, dtype=np.int64)
    rank[order] = np.arange(n_own)
    return first[order], order, rank[own]


def label_values(name: str, labels) -> np.ndarray:
    """The labels as an array to read: integers, strings or whole-number floats up to 2**53.

    Not a copy when ``labels`` is an integer or string array already: the
    structures keep only codes and the labels of their groups, never this
    array (the caller may change it afterwards).
    """
    try:
        arr = np.asarray(labels)
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
    elif arr.dtype.kind == "b":
        arr = arr.astype(np.int64)  # JSON has no boolean labels: written and read as 0/1
    elif arr.dtype.kind not in "iuUS":
        raise InvariantDPError(
            f"`{name}` must hold integer or string labels, got dtype {arr.dtype}."
        )
    return arr


def margins_structure(shape) -> tuple:
    """``(C, shape, names, structure)`` of the one-way margins of a table of ``shape``."""
    shape = check_shape("shape", shape)
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
    if n * offset <= _DENSE_MARGINS:
        C = C.toarray()
    return C, shape, names, {"kind": "one_way_margins"}


def totals_structure(labels) -> tuple:
    """``(C, shape, names, structure)`` of the totals of the groups labelled by ``labels``."""
    arr = label_values("labels", labels)
    uniq, codes, counts = sorted_codes(arr.reshape(-1), counts=True)
    codes = read_only(codes)  # ours: the structure and the matrix builder share it
    C = GroupMatrix(codes, [read_only(np.arange(uniq.size))], [uniq.size], counts)
    names = tuple(f"total[{u}]" for u in uniq.tolist())
    st = {
        "kind": "totals",
        "labels": LabelArray.expand(uniq, codes.reshape(arr.shape)),
        "codes": LabelArray(codes, copy=False),
    }
    return C, arr.shape, names, st


def _path_codes(levels: list) -> tuple[list, list, list]:
    """``(codes, names, sizes)`` of the groups of every level of flat label arrays.

    A group at level ``j`` is a path ``(levels[0], ..., levels[j])``; its
    code orders the groups by parent group, then by own label (so by path).
    """
    codes_per_level, names, sizes = [], [], []
    prev = np.zeros(levels[0].size, dtype=np.int64)
    for j, lev in enumerate(levels):
        uniq, lc = sorted_codes(lev)
        refined = None if j == 0 else _refining_codes(prev, lc, uniq.size)
        if j == 0:
            parent, own, codes = np.zeros(uniq.size, dtype=np.int64), uniq, lc
        elif refined is not None:
            parent, own_code, codes = refined
            own = uniq[own_code]
        else:
            key = prev * uniq.size + lc  # path code: parent code then own label
            ukey, codes = sorted_codes(key)
            parent = ukey // uniq.size
            own = uniq[ukey % uniq.size]
        if j == 0:
            names += [f"level[0][{u}]" for u in own.tolist()]
        else:
            pairs = zip(parent.tolist(), own.tolist(), strict=True)
            names += [f"level[{j}][{p}/{u}]" for p, u in pairs]
        codes_per_level.append(codes)
        sizes.append(own.size)
        prev = codes
    return codes_per_level, names, sizes


def _finest_label_groups(levels: list):
    """``(codes, labels, counts)`` when the finest label names its whole path, else None.

    Census labels usually do (a tract code belongs to one county of one
    state): then the finest groups are the distinct finest labels, coded in
    one counting pass, and every coarser level only has to be checked to
    agree, cell by cell, with the label of the cell's group.  ``codes`` is
    the finest-label code of every cell, ``labels[j]`` the level-``j``
    label of every finest label (in code order), ``counts`` the number of
    cells of each (None if they were not counted on the way).
    """
    uniq, codes, counts = sorted_codes(levels[-1], counts=True)
    labels = []
    for lev in levels[:-1]:
        mine = np.empty(uniq.size, dtype=lev.dtype)
        mine[codes] = lev  # any one cell's label: equal in every cell, or refused below
        for start in range(0, codes.size, CHUNK):
            part = slice(start, start + CHUNK)
            if not np.array_equal(lev[part], mine.take(codes[part])):
                return None
        labels.append(mine)
    return codes, labels + [uniq], counts


def nested_structure(levels) -> tuple:
    """``(C, shape, names, structure)`` of the totals at every level of a hierarchy.

    The groups are found on one representative per finest group (when the
    finest label names its path, :func:`_finest_label_groups`) or on every
    cell; the structure keeps the finest group of every cell, the group of
    every level of each finest group and the labels of the finest groups,
    so it holds no per-cell copy of any label array.
    """
    if isinstance(levels, np.ndarray) and levels.ndim == 1:
        levels = [levels]
    levels = [label_values(f"levels[{j}]", lev) for j, lev in enumerate(levels)]
    if not levels:
        raise InvariantDPError("`levels` must hold at least one label array.")
    shape = levels[0].shape
    for j, lev in enumerate(levels):
        if lev.shape != shape:
            raise InvariantDPError(
                f"`levels[{j}]` must have shape {shape} like `levels[0]`, got {lev.shape}."
            )
    flat = [lev.reshape(-1) for lev in levels]
    found = _finest_label_groups(flat)
    if found is not None:
        label_codes, group_labels, counts = found
        path, names, sizes = _path_codes(group_labels)  # one representative per group
        rank = path[-1]  # the finest group of each finest label
        g = rank.size
        if np.array_equal(rank, np.arange(g)):
            codes = label_codes
        else:  # finest labels in another order than their paths: renumber in place
            codes = remap(rank, label_codes, label_codes)
            order = np.empty(g, dtype=np.int64)
            order[rank] = np.arange(g)
            path = [p[order] for p in path]
            group_labels = [lab[order] for lab in group_labels]
            counts = None if counts is None else counts[order]
        C = GroupMatrix(read_only(codes), [read_only(p) for p in path], sizes, counts)
    else:
        path, names, sizes = _path_codes(flat)
        C = GroupMatrix.from_level_codes(path, sizes)
        group_labels = []
        for lev in flat:
            mine = np.empty(sizes[-1], dtype=lev.dtype)
            mine[C.codes] = lev  # every cell of a finest group has its labels
            group_labels.append(mine)
    codes, maps = C.codes, C.maps
    cells = codes.reshape(shape)
    structure = {
        "kind": "nested_totals",
        "levels": [LabelArray.expand(lab, cells) for lab in group_labels],
        "codes": [LabelArray.expand(m, codes) for m in maps[:-1]] + [LabelArray(codes, copy=False)],
    }
    return C, shape, names, structure


def verified_structure(structure, C, shape) -> Structure:
    """The canonical structure of ``structure``, after checking ``C`` is its matrix.

    A structure selects the O(n) projections, so a matrix that is not the one
    the structure describes would be projected wrongly without any error.
    """
    kind = structure.get("kind") if isinstance(structure, dict) else None
    if kind not in KINDS:
        raise InvariantDPError(
            f"`structure` kind ({format_value(kind)}) must be 'totals', 'nested_totals' or "
            "'one_way_margins'."
        )
    if kind == "one_way_margins":
        built = margins_structure(shape)
    elif kind == "totals":
        if "labels" not in structure:
            raise InvariantDPError("`structure` of kind 'totals' needs its 'labels'.")
        built = totals_structure(structure["labels"])
    else:
        if "levels" not in structure:
            raise InvariantDPError("`structure` of kind 'nested_totals' needs its 'levels'.")
        built = nested_structure(list(structure["levels"]))
    canon, canon_shape, _, st = built
    if isinstance(canon, GroupMatrix):
        canon_matrix = canon.matrix  # an explicit matrix is compared entry by entry
    else:
        canon = canon_matrix = freeze_matrix(canon)
    if canon_shape != tuple(shape) or not same_matrix(C, canon_matrix):
        raise InvariantDPError(
            f"`matrix` (shape {C.shape}) is not the matrix of the `structure` ({kind} on data "
            f"of shape {canon_shape}); pass structure=None for a general matrix."
        )
    return make_structure(st, canon, canon_shape)
