"""JSON documents of invariants: the parts :meth:`Invariants.from_dict` validates.

Every reader here checks a field of the document (named by its ``path``,
e.g. ``invariants.structure.labels[2]``) before anything is allocated from
it, and raises :class:`~invariantdp.exceptions.InvariantDPError`.  Internal
to the ``invariants`` package; the layout of the document is described in
:meth:`~invariantdp.invariants.Invariants.to_dict`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from .._validation import (
    LabelArray,
    doc_error,
    doc_int,
    doc_list,
    doc_nested,
    doc_numbers,
    doc_object,
    doc_path,
    doc_shape,
    doc_str,
    freeze,
)
from ._consistency import check_consistent
from ._structure import (
    KINDS,
    margins_structure,
    nested_structure,
    read_only,
    totals_structure,
)

#: :meth:`Invariants.from_dict` refuses documents declaring more cells or entries than this
MAX_DOCUMENT_CELLS = 2**24


def _labels_doc(labels):
    """A structure's flat labels as themselves (listed only when a document is written)."""
    if not isinstance(labels, LabelArray):  # pickled when structures kept label arrays
        labels = LabelArray(labels, copy=False)  # its own read-only array
    if len(labels.shape) == 1 and labels.dtype.kind in "iuU":
        return labels  # the structure's own frozen labels, formed only if written
    return labels.array.tolist()


def structure_to_doc(structure) -> dict:
    """The JSON-able form of a structure: its kind and its label arrays as nested lists."""
    if structure["kind"] == "one_way_margins":
        return {"kind": "one_way_margins"}
    if structure["kind"] == "totals":
        return {"kind": "totals", "labels": _labels_doc(structure["labels"])}
    return {"kind": "nested_totals", "levels": [_labels_doc(lev) for lev in structure["levels"]]}


def matrix_to_doc(C) -> dict:
    """A general matrix as ``{"sparse": false, "data"}`` or sparse COO triplets."""
    if sparse.issparse(C):
        coo = sparse.coo_array(C)
        return {
            "sparse": True,
            "shape": list(coo.shape),
            "row": coo.row.tolist(),
            "col": coo.col.tolist(),
            "data": coo.data.tolist(),
        }
    return {"sparse": False, "data": C.tolist()}


def structure_document(inv) -> dict:
    """``inv.to_dict()`` without the values, frozen (``Invariants.structure_dict``)."""
    out = {"values": None, "shape": list(inv.shape)}
    out["names"] = None if inv.names is None else list(inv.names)
    if inv.structure is not None:  # named by its labels: a grouped C is never built here
        doc = structure_to_doc(inv.structure)
        return freeze({"matrix": {"structured": True}, "structure": doc, **out})
    return freeze({"matrix": matrix_to_doc(inv.matrix), **out})


def _doc_labels(path: str, value, shape) -> np.ndarray:
    """A label array of the exact ``shape``: all integers (int64 range) or all strings."""
    if isinstance(value, LabelArray):  # a cached document of this package: no lists to scan
        a = value.array
        if a.shape != tuple(shape):
            raise doc_error(path, value, f"must have shape {list(shape)}, got {list(a.shape)}.")
        if a.dtype.kind == "U":
            return a
        if a.dtype.kind in "iu" and (a.size == 0 or int(a.max()) < 2**63):
            return a.astype(np.int64, copy=False)
        value = a.tolist()  # the checks (and messages) of a written document
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


def read_structure(path: str, st, shape) -> tuple:
    """``(C, shape, names, structure)`` of a validated ``structure`` document on ``shape``."""
    doc_object(path, st, required=("kind",), optional=("labels", "levels"))
    kind = doc_str(doc_path(path, "kind"), st["kind"], choices=KINDS)
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
        return margins_structure(shape)
    if kind == "totals":
        return totals_structure(_doc_labels(doc_path(path, "labels"), st["labels"], shape))
    lpath = doc_path(path, "levels")
    levels = doc_list(lpath, st["levels"], min_length=1, max_length=64)
    return nested_structure(
        [_doc_labels(doc_path(lpath, j), lev, shape) for j, lev in enumerate(levels)]
    )


def read_general(path: str, m, shape, max_cells: int):
    """The general matrix of a validated ``matrix`` document acting on ``shape`` (C-order).

    ``max_cells`` bounds the rows it may declare; its entries are bounded by
    ``MAX_DOCUMENT_CELLS`` only, since each is written out in the document
    (a swap's invariants hold two entries per cell, more than its cells).
    """
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
        if nnz > MAX_DOCUMENT_CELLS:
            raise doc_error(
                doc_path(path, "data"), data, f"must have at most {MAX_DOCUMENT_CELLS} entries."
            )
        row = doc_numbers(doc_path(path, "row"), m["row"], integer=True, length=nnz)
        col = doc_numbers(doc_path(path, "col"), m["col"], integer=True, length=nnz)
        if nnz and (min(row) < 0 or max(row) >= k):
            raise doc_error(doc_path(path, "row"), row, f"must hold row indices in [0, {k}).")
        if nnz and (min(col) < 0 or max(col) >= n):
            raise doc_error(doc_path(path, "col"), col, f"must hold column indices in [0, {n}).")
        ij = (np.array(row, dtype=np.int64), np.array(col, dtype=np.int64))
        return sparse.csr_array((np.array(data, dtype=float), ij), shape=(k, n))
    doc_object(path, m, required=("sparse", "data"))
    dpath = doc_path(path, "data")
    rows = doc_list(dpath, m["data"])
    if len(rows) * n > MAX_DOCUMENT_CELLS:
        raise doc_error(
            dpath, rows, f"has {len(rows)} x {n} entries; at most {MAX_DOCUMENT_CELLS} are allowed."
        )
    for i, row in enumerate(rows):
        doc_numbers(doc_path(dpath, i), row, length=n)
    return np.array(rows, dtype=float).reshape(len(rows), n)


def read_invariants(cls, d, path: str, max_cells: int):
    """Validate an invariants document and build a ``cls`` (``Invariants.from_dict``)."""
    doc_object(path, d, required=("matrix", "values", "shape", "names"), optional=("structure",))
    shape_path = doc_path(path, "shape")
    shape = doc_shape(shape_path, d["shape"], max_cells=max_cells, minimum=1)
    if not shape:
        raise doc_error(shape_path, d["shape"], "must have at least one dimension.")
    mpath = doc_path(path, "matrix")
    st = d.get("structure")
    if st is not None:
        C, st_shape, _, sd = read_structure(doc_path(path, "structure"), st, shape)
        base = cls._from_structure(C, st_shape, None, sd)
        m = doc_object(mpath, d["matrix"], required=("structured",))
        if m["structured"] is not True:
            raise doc_error(
                doc_path(mpath, "structured"), m["structured"], "must be true with a structure."
            )
    else:
        base = cls(read_general(mpath, d["matrix"], shape, max_cells), None, shape)
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
    out = base._copy(None if values is None else read_only(values), names)
    check_consistent(out, doc_path(path, "values"))
    return out


def invariants_repr(inv) -> str:
    """A one-line repr of any size: kind, shape, number of rows, values abbreviated."""
    values = "None" if inv.values is None else np.array2string(inv.values, threshold=6)
    return (
        f"Invariants(kind={inv.kind!r}, shape={inv.shape}, n_invariants={inv.n_invariants}, "
        f"values={values})"
    )
