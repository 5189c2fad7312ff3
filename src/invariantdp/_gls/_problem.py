"""The GLS problem as arrays: a tree of units, their measurements and their constraints.

This is the input of :func:`invariantdp._gls._tree_passes.solve`, built by
:func:`invariantdp.census.gls` from :class:`~invariantdp.census.NoisyMeasurements`
and usable directly for a single release (one unit, a flat geography).

* ``shape``: the product schema ``(n_1, ..., n_d)``; a unit's unknown is its
  detailed histogram of ``k = prod(shape)`` cells, flattened in C order.
* ``parents[l]``: for each unit of level ``l`` the index of its parent in
  level ``l - 1`` (non-decreasing, so siblings are contiguous); level 0 has
  no parents.  A unit's histogram is the sum of its children's; a unit
  without children is a leaf.
* :class:`Measurement`: noisy answers of one marginal query (attribute
  indices ``attrs``, ``()`` for the total) for some units of one level, with
  the noise variance per unit (or per unit and cell).
* :class:`Equality`: a whole marginal query known exactly (an invariant).
* :class:`Zeros`: query cells fixed at 0 by a ``<=`` bound of 0; counts being
  non-negative, every detailed cell of the unit that sums into such a cell is 0.
* :class:`Linear`: any other equality ``C h_u = c`` on one unit's histogram.

A query may group the levels of some attributes (a *recode*):
``recodes[a]`` is a 0/1 integer matrix of shape ``(G, n_a)`` whose row ``g``
marks the levels of attribute ``a`` in group ``g`` (groups disjoint, not
necessarily covering every level).  The query's cells then run in C order
over its factor sizes, ``G`` for a recoded attribute and ``n_a`` for a plain
one; its matrix is the Kronecker product of ``recodes[a]`` (recoded), the
identity (kept) and a row of ones (summed out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InvariantDPError

__all__ = ["Equality", "Linear", "Measurement", "Problem", "Zeros", "onto_sole_children"]


def _cells(shape, attrs, recodes=None) -> int:
    recodes = recodes or {}
    return int(
        np.prod([recodes[a].shape[0] if a in recodes else shape[a] for a in attrs], dtype=np.int64)
    )


def _check_recodes(shape, attrs, recodes, what) -> dict:
    """``{attribute index: (G, n) 0/1 int matrix}`` with disjoint non-empty groups."""
    if recodes is None:
        return {}
    if not hasattr(recodes, "items"):
        raise InvariantDPError(
            f"`{what}.recodes` must map attribute indices to group matrices, got "
            f"{type(recodes).__name__}."
        )
    out = {}
    for a, mat in recodes.items():
        a = int(a)
        if a not in attrs:
            raise InvariantDPError(
                f"`{what}.recodes` recodes attribute {a}, which is not among the query's "
                f"attributes {attrs}."
            )
        m = np.asarray(mat)
        if (
            m.ndim != 2
            or m.shape[1] != shape[a]
            or m.shape[0] < 1
            or m.dtype.kind not in "iub"
            or not np.all((m == 0) | (m == 1))
            or np.any(m.sum(axis=1) == 0)
            or np.any(m.sum(axis=0) > 1)
        ):
            raise InvariantDPError(
                f"`{what}.recodes[{a}]` must be a 0/1 integer matrix of shape (G, {shape[a]}) "
                "whose rows are non-empty, disjoint groups of levels; got shape "
                f"{m.shape}."
            )
        out[a] = m.astype(np.int64)
    return out


def _check_attrs(shape, attrs, what) -> tuple[int, ...]:
    attrs = tuple(int(a) for a in attrs)
    if list(attrs) != sorted(set(attrs)) or any(a < 0 or a >= len(shape) for a in attrs):
        raise InvariantDPError(
            f"`{what}.attrs` ({attrs}) must be increasing attribute indices in [0, {len(shape)})."
        )
    return attrs


def _check_units(units, n, what) -> np.ndarray:
    units = np.asarray(units, dtype=np.int64).reshape(-1)
    if units.size and (units.min() < 0 or units.max() >= n):
        raise InvariantDPError(f"`{what}.units` must index the {n} units of its level.")
    if not (units.size < 2 or np.all(np.diff(units) > 0)) and np.unique(units).size != units.size:
        raise InvariantDPError(f"`{what}.units` must not repeat a unit.")
    return units


@dataclass
class Measurement:
    """Noisy answers ``values[i] = Q_attrs h_{units[i]} + e`` with ``Var(e) = variance[i]``."""

    level: int
    attrs: tuple
    units: np.ndarray
    values: np.ndarray
    variance: np.ndarray
    recodes: dict = field(default_factory=dict)


@dataclass
class Equality:
    """``Q_attrs h_{units[i]} = values[i]`` exactly."""

    level: int
    attrs: tuple
    units: np.ndarray
    values: np.ndarray
    recodes: dict = field(default_factory=dict)


@dataclass
class Zeros:
    """``mask[i, j]``: cell ``j`` of ``Q_S h_{units[i]}`` is 0, and every detailed cell in it."""

    level: int
    attrs: tuple
    units: np.ndarray
    mask: np.ndarray
    recodes: dict = field(default_factory=dict)


@dataclass
class Linear:
    """``matrix @ h_unit = values`` (rows over the ``k`` detailed cells)."""

    level: int
    unit: int
    matrix: np.ndarray
    values: np.ndarray


@dataclass
class Problem:
    """A GLS problem on a tree of units (see the module docstring)."""

    shape: tuple
    parents: list
    measurements: list = field(default_factory=list)
    equalities: list = field(default_factory=list)
    zeros: list = field(default_factory=list)
    linear: list = field(default_factory=list)

    def __post_init__(self):
        self.shape = tuple(int(n) for n in self.shape)
        if not self.shape or min(self.shape) < 1:
            raise InvariantDPError(
                f"`shape` ({self.shape}) must hold at least one level count >= 1."
            )
        self.k = int(np.prod(self.shape, dtype=np.int64))
        self.parents = [np.asarray(p, dtype=np.int64).reshape(-1) for p in self.parents]
        if not self.parents:
            raise InvariantDPError("`parents` must describe at least one level of units.")
        self.sizes = [p.size for p in self.parents]
        for lev in range(1, len(self.parents)):
            p = self.parents[lev]
            if p.size and (p.min() < 0 or p.max() >= self.sizes[lev - 1] or np.any(np.diff(p) < 0)):
                raise InvariantDPError(
                    f"`parents[{lev}]` must be non-decreasing indices into level {lev - 1}."
                )
        for what, items in (("measurement", self.measurements), ("equality", self.equalities)):
            for it in items:
                self._check_block(it, what, "values")
        for it in self.measurements:
            var = np.asarray(it.variance, dtype=float)
            if var.ndim == 1:
                var = var.reshape(-1)
            if var.shape not in ((it.units.size,), it.values.shape) or not np.all(
                np.isfinite(var) & (var > 0)
            ):
                raise InvariantDPError(
                    "`measurement.variance` must be finite and > 0, one per unit or per cell "
                    "(a variance of 0 is an Equality)."
                )
            it.variance = var
        for it in self.zeros:
            self._check_block(it, "zeros", "mask")
            it.mask = np.asarray(it.mask, dtype=bool)
        for it in self.linear:
            self._check_level(it.level, "linear")
            if not 0 <= int(it.unit) < self.sizes[it.level]:
                raise InvariantDPError(f"`linear.unit` ({it.unit}) must index its level's units.")
            it.matrix = np.atleast_2d(np.asarray(it.matrix, dtype=float))
            it.values = np.asarray(it.values, dtype=float).reshape(-1)
            if it.matrix.shape != (it.values.size, self.k) or not np.all(np.isfinite(it.matrix)):
                raise InvariantDPError(
                    f"`linear.matrix` must be finite of shape (rows, {self.k}) with one value "
                    f"per row; got {it.matrix.shape} and {it.values.size} values."
                )

    def _check_level(self, level, what):
        if not 0 <= int(level) < len(self.sizes):
            raise InvariantDPError(f"`{what}.level` ({level}) must be in [0, {len(self.sizes)}).")

    def _check_block(self, it, what, name):
        self._check_level(it.level, what)
        it.attrs = _check_attrs(self.shape, it.attrs, what)
        it.recodes = _check_recodes(self.shape, it.attrs, it.recodes, what)
        it.units = _check_units(it.units, self.sizes[it.level], what)
        arr = np.asarray(getattr(it, name))
        cells = _cells(self.shape, it.attrs, it.recodes)
        if it.units.size and arr.size % it.units.size == 0:
            arr = arr.reshape(it.units.size, -1)
        elif not it.units.size and not arr.size:
            arr = arr.reshape(0, cells)  # an item of no unit: nothing to say, but valid
        if arr.shape != (it.units.size, cells):
            raise InvariantDPError(
                f"`{what}.{name}` must have one row of {cells} cells per "
                f"unit; got shape {np.shape(getattr(it, name))}."
            )
        exact_int = arr.dtype.kind == "i" or (arr.dtype.kind == "u" and arr.itemsize < 8)
        if name == "values" and exact_int:
            # integer answers (a release's) are finite and stay as they are: no float
            # copy of the largest arrays; every product with them is float (uint64 is
            # not: it would wrap in int64)
            arr = arr.astype(np.int64, copy=False)
        elif name == "values":
            arr = arr.astype(float, copy=False)
            if not np.all(np.isfinite(arr)):
                raise InvariantDPError(f"`{what}.values` must be finite.")
        setattr(it, name, arr)

    def subtree(self, first: int, blocks: list) -> Problem:
        """The problem of levels ``first..`` restricted to units ``blocks[i] = (lo, hi)``.

        Unit indices are rebased to the blocks (a subtree of sorted units is a
        contiguous block per level); level ``first`` becomes level 0.
        """
        parents = [np.full(blocks[0][1] - blocks[0][0], -1, dtype=np.int64)]
        for i in range(1, len(blocks)):
            lo, hi = blocks[i]
            parents.append(self.parents[first + i][lo:hi] - blocks[i - 1][0])

        def cut(items, value_names):
            out = []
            for it in items:
                i = it.level - first
                if i < 0:
                    continue
                lo, hi = blocks[i]
                keep = (it.units >= lo) & (it.units < hi)
                if not keep.any():
                    continue
                rows = np.flatnonzero(keep)
                sel = slice(rows[0], rows[-1] + 1) if rows[-1] - rows[0] + 1 == rows.size else rows
                fields = {name: getattr(it, name)[sel] for name in value_names}
                out.append(type(it)(i, it.attrs, it.units[sel] - lo, **fields, recodes=it.recodes))
            return out

        linear = [
            Linear(c.level - first, c.unit - blocks[c.level - first][0], c.matrix, c.values)
            for c in self.linear
            if c.level >= first
            and blocks[c.level - first][0] <= c.unit < blocks[c.level - first][1]
        ]
        return Problem(
            self.shape,
            parents,
            cut(self.measurements, ("values", "variance")),
            cut(self.equalities, ("values",)),
            cut(self.zeros, ("mask",)),
            linear,
        )

    def recoded(self) -> list:
        """The measurements, equalities and zeros whose query groups levels (a recode)."""
        return [it for it in (*self.measurements, *self.equalities, *self.zeros) if it.recodes]

    def at(self, items, level):
        """The items of a list that belong to ``level``."""
        return [it for it in items if it.level == level]


def onto_sole_children(problem: Problem) -> Problem:
    """The same problem, with what bears on a parent of one unmeasured child moved to the child.

    A unit with a single child has the child's histogram (the Bureau's
    bypassed blocks: a block group of one block is measured, its block
    appears only in the constraints).  Its measurements, equalities and
    zeros are then the child's too, exactly (``Linear`` constraints stay on
    the parent, where they bind the same histogram); moved down level by level
    (a chain of sole children ends at the leaf), they leave the GLS
    estimate unchanged and let the dense-factor passes, which identify
    every unit from below, see the leaf identified.
    """
    n_lev = len(problem.sizes)
    items = {
        "m": list(problem.measurements),
        "e": list(problem.equalities),
        "z": list(problem.zeros),
    }
    for lev in range(1, n_lev):
        par = problem.parents[lev]
        counts = np.bincount(par, minlength=problem.sizes[lev - 1])
        measured = np.zeros(problem.sizes[lev], dtype=bool)
        for it in items["m"]:
            if it.level == lev:
                measured[it.units] = True
        sole = np.flatnonzero((counts[par] == 1) & ~measured)
        if not sole.size:
            continue
        child_of = np.full(problem.sizes[lev - 1], -1)
        child_of[par[sole]] = sole
        for kind, lst in items.items():
            out = []
            for it in lst:
                move = (child_of[it.units] >= 0) if it.level == lev - 1 else None
                if move is None or not move.any():
                    out.append(it)
                    continue
                for sel, level, units in (
                    (~move, lev - 1, it.units[~move]),
                    (move, lev, child_of[it.units[move]]),
                ):
                    if not sel.any():
                        continue
                    if kind == "m":
                        var = it.variance[sel]
                        out.append(
                            Measurement(
                                level, it.attrs, units, it.values[sel], var, recodes=it.recodes
                            )
                        )
                    elif kind == "e":
                        out.append(
                            Equality(level, it.attrs, units, it.values[sel], recodes=it.recodes)
                        )
                    else:
                        out.append(Zeros(level, it.attrs, units, it.mask[sel], recodes=it.recodes))
            items[kind] = out
    return Problem(
        problem.shape, problem.parents, items["m"], items["e"], items["z"], problem.linear
    )
