"""Linear equality invariants ``C s = c`` published exactly with a release."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ._validation import InvariantDPError, check_finite_array

__all__ = ["Invariants", "one_way_margins"]


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
    """

    matrix: np.ndarray | sparse.sparray
    values: np.ndarray | None = None
    shape: tuple[int, ...] | None = None
    names: tuple[str, ...] | None = field(default=None)

    def __post_init__(self):
        C = self.matrix
        if sparse.issparse(C):
            C = sparse.csr_array(C, dtype=float)
        else:
            C = check_finite_array("matrix", C)
            if C.ndim != 2:
                raise InvariantDPError(f"`matrix` must be 2-D, got {C.ndim} dimension(s).")
        object.__setattr__(self, "matrix", C)
        k, n = C.shape
        shape = (n,) if self.shape is None else tuple(int(s) for s in self.shape)
        if int(np.prod(shape)) != n:
            raise InvariantDPError(
                f"`shape` {shape} has {int(np.prod(shape))} cells but `matrix` has {n} columns."
            )
        object.__setattr__(self, "shape", shape)
        if self.values is not None:
            v = check_finite_array("values", self.values)
            if v.shape != (k,):
                raise InvariantDPError(f"`values` must have shape ({k},), got {v.shape}.")
            object.__setattr__(self, "values", v)
        if self.names is not None:
            names = tuple(str(s) for s in self.names)
            if len(names) != k:
                raise InvariantDPError(f"`names` must have {k} entries, got {len(names)}.")
            object.__setattr__(self, "names", names)

    @property
    def n_invariants(self) -> int:
        return self.matrix.shape[0]

    def apply(self, x) -> np.ndarray:
        """``C @ x.ravel()`` for data ``x`` of shape ``self.shape``."""
        x = check_finite_array("x", x)
        if x.shape != self.shape and x.size != int(np.prod(self.shape)):
            raise InvariantDPError(f"`x` must have shape {self.shape}, got {x.shape}.")
        return np.asarray(self.matrix @ x.reshape(-1), dtype=float)

    def of(self, x) -> Invariants:
        """The same invariants with their values computed from data ``x``."""
        return Invariants(self.matrix, self.apply(x), self.shape, self.names)

    def check(self, x, *, name: str = "x", rtol: float = 1e-9) -> None:
        """Raise ``ValueError`` unless ``x`` satisfies ``C x = c``."""
        if self.values is None:
            raise InvariantDPError("these invariants carry no values to check against.")
        got = self.apply(x)
        tol = rtol * np.maximum(1.0, np.abs(self.values))
        bad = np.flatnonzero(np.abs(got - self.values) > tol)
        if bad.size:
            i = bad[0]
            label = self.names[i] if self.names else f"row {i}"
            raise InvariantDPError(
                f"`{name}` does not satisfy the invariants: {label} is {got[i]:g}, "
                f"the invariant value is {self.values[i]:g}."
            )

    def to_dict(self) -> dict:
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
        return {
            "matrix": mat,
            "values": None if self.values is None else self.values.tolist(),
            "shape": list(self.shape),
            "names": None if self.names is None else list(self.names),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Invariants:
        m = d["matrix"]
        if m["sparse"]:
            C = sparse.csr_array((m["data"], (m["row"], m["col"])), shape=tuple(m["shape"]))
        else:
            C = np.array(m["data"], dtype=float).reshape(-1, int(np.prod(d["shape"])))
        return cls(C, d["values"], tuple(d["shape"]), d["names"])

    def __eq__(self, other) -> bool:
        if not isinstance(other, Invariants):
            return NotImplemented
        a = self.matrix.toarray() if sparse.issparse(self.matrix) else self.matrix
        b = other.matrix.toarray() if sparse.issparse(other.matrix) else other.matrix
        same_values = (self.values is None and other.values is None) or (
            self.values is not None
            and other.values is not None
            and np.array_equal(self.values, other.values)
        )
        return (
            a.shape == b.shape
            and np.array_equal(a, b)
            and same_values
            and self.shape == other.shape
            and self.names == other.names
        )

    __hash__ = None


def one_way_margins(shape) -> Invariants:
    """Invariants fixing every one-way margin of a table of the given shape.

    For an ``r x c`` table the rows are the ``r`` row sums followed by the
    ``c`` column sums, so a 2 x 2 table gives ``(t1., t2., t.1, t.2)``.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import one_way_margins
    >>> one_way_margins((2, 2)).apply(np.array([[3, 1], [2, 4]]))
    array([4., 6., 5., 5.])
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) < 1 or any(s < 1 for s in shape):
        raise InvariantDPError(f"`shape` {shape} must be a tuple of positive sizes.")
    n = int(np.prod(shape))
    idx = np.indices(shape).reshape(len(shape), n)
    rows, names, offset = [], [], 0
    for axis, size in enumerate(shape):
        rows.append(offset + idx[axis])
        names.extend(f"margin[axis={axis}][{j}]" for j in range(size))
        offset += size
    row = np.concatenate(rows)
    col = np.tile(np.arange(n), len(shape))
    C = sparse.csr_array((np.ones(row.size), (row, col)), shape=(offset, n)).toarray()
    return Invariants(C, None, shape, tuple(names))
