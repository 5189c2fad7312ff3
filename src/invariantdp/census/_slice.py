r"""A (level, query) slice of a hierarchy as the cells of one release: labels and invariants.

The cells of a slice are the query's cells of some units of one level, unit
by unit (geocode order), each unit's cells in C order.  The equality facts
of the measurements that bear on them become the release's invariants: a
fact about the histogram of a unit ``w`` is a fact about the slice when it
is a function of the query's cells and the slice holds every unit below
``w`` at its level (with no branch of ``w``'s subtree ending above it):

* an invariant on query ``S'`` at ``w`` fixes the marginal of ``w`` on the
  attributes in both ``S`` and ``S'`` (the range of :math:`Q_S^\top` meets
  that of :math:`Q_{S'}^\top` in the range of :math:`Q_{S \cap S'}^\top`);
  at a level below the slice, a unit of the slice whose every unit below at
  that level carries the invariant has the sum of theirs;
* a structural zero fixes at 0 the query cells made only of zero cells;
* another equality on ``w``'s detailed histogram contributes the linear
  combinations of its rows that are combinations of the query's rows.

References
----------
Gao, Gong & Yu (2022), Definition 2 (linear equality invariants).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import linalg, sparse

from .._gls import EigenAlgebra
from ..exceptions import InvariantDPError
from ..invariants import Invariants
from ..privacy import QueryAdjacency
from ..release import MAX_CELLS, PrivacyGuarantee

__all__ = [
    "census_guarantee",
    "check_slice_size",
    "slice_index",
    "slice_invariants",
    "slice_units",
]


def slice_index(schema, query: str, geocodes):
    """The pandas index of a slice's cells: ``geocode`` and the query's attributes."""

    cells = schema.cell_frame(query)
    codes = np.asarray(geocodes, dtype=object)
    if cells.shape[1] == 0:
        return pd.Index(codes, name="geocode")
    frame = cells.iloc[np.tile(np.arange(len(cells)), codes.size)].reset_index(drop=True)
    frame.insert(0, "geocode", np.repeat(codes, len(cells)))
    return pd.MultiIndex.from_frame(frame)


def _cell_text(schema, attrs, index: int) -> str:
    if not attrs:
        return ""
    shape = tuple(schema.shape[a] for a in attrs)
    pos = np.unravel_index(index, shape)
    parts = [
        f"{schema.names[a]}={schema.labels(schema.names[a])[p]}"
        for a, p in zip(attrs, pos, strict=True)
    ]
    return " " + ", ".join(parts)


def _equality_on_query(shape, schema, eq, attrs):
    """An equality seen on the cells of the query ``attrs`` (plain attributes), or None.

    Returns ``(keep, n_keep, known, to_keep, name, cell_text)``: the
    attributes both share, the number of their cells (a recoded attribute
    of the equality counts its groups), the equality's values summed onto
    them per unit, each query cell's cell among them (-1 for a level in
    no group of a recode) and the names of the facts.  An equality whose
    recode of an attribute the query sums out does not partition its
    levels (nursing facilities alone) is no function of the query's cells:
    None.
    """
    rec = dict(getattr(eq, "recodes", None) or {})
    keep = tuple(a for a in attrs if a in eq.attrs)
    for a, mat in rec.items():
        if a not in keep and not np.array_equal(np.asarray(mat).sum(axis=0), np.ones(shape[a])):
            return None
    sizes = [np.asarray(rec[a]).shape[0] if a in rec else shape[a] for a in eq.attrs]
    keep_sizes = [sizes[eq.attrs.index(a)] for a in keep]
    n_keep = int(np.prod(keep_sizes, dtype=np.int64))
    grid = _grid(sizes)
    marg = (
        np.ravel_multi_index([grid[eq.attrs.index(a)] for a in keep], keep_sizes)
        if keep
        else np.zeros(grid.shape[1], dtype=np.int64)
    )
    known = np.zeros((eq.units.size, n_keep))
    np.add.at(known.T, marg, eq.values.T)
    qgrid = _grid([shape[a] for a in attrs])
    coords, inside = [], np.ones(qgrid.shape[1], dtype=bool)
    for a in keep:
        lev = qgrid[attrs.index(a)]
        if a in rec:
            group_of = np.full(shape[a], -1)
            g, j = np.nonzero(np.asarray(rec[a]))
            group_of[j] = g
            lev = group_of[lev]
            inside &= lev >= 0
            lev = np.maximum(lev, 0)
        coords.append(lev)
    to_keep = (
        np.ravel_multi_index(coords, keep_sizes)
        if keep
        else np.zeros(qgrid.shape[1], dtype=np.int64)
    )
    to_keep = np.where(inside, to_keep, -1)
    names = [_recode_name(schema, a, rec[a]) if a in rec else schema.names[a] for a in keep]
    labels = [
        schema.labels(n) if n is not None else list(range(keep_sizes[i]))
        for i, n in enumerate(names)
    ]
    names = [
        n if n is not None else f"{schema.names[a]} groups"
        for n, a in zip(names, keep, strict=True)
    ]
    what = "total" if not keep else (" * ".join(names) if rec else schema.query_name(keep))

    def cell_text(b: int) -> str:
        if not keep:
            return ""
        pos = np.unravel_index(b, keep_sizes)
        return " " + ", ".join(
            f"{n}={lab[p]}" for n, lab, p in zip(names, labels, pos, strict=True)
        )

    return keep, n_keep, known, to_keep, what, cell_text


def _grid(sizes) -> np.ndarray:
    """Each cell's level per attribute, ``(attributes, cells)`` in C order (one cell if none)."""
    if not len(sizes):
        return np.zeros((0, 1), dtype=np.int64)
    return np.indices(sizes).reshape(len(sizes), -1)


def _recode_name(schema, a: int, mat) -> str | None:
    """The schema's name of the recode ``mat`` (groups x levels) of attribute ``a``, if any."""
    for name, (attr, _) in schema.recodes.items():
        if attr == schema.names[a] and np.array_equal(schema.recode_matrix(name), mat):
            return name
    return None


class _Tree:
    """Ancestors and subtree completeness of the units of a problem."""

    def __init__(self, problem):
        self.parents = problem.parents
        self.sizes = problem.sizes
        self.kids = [
            np.bincount(problem.parents[lev + 1], minlength=n)
            if lev + 1 < len(problem.sizes)
            else np.zeros(n, dtype=np.int64)
            for lev, n in enumerate(problem.sizes)
        ]

    def up(self, units, src: int, dst: int) -> np.ndarray:
        """The ancestors at level ``dst`` of units of level ``src``."""
        out = np.asarray(units, dtype=np.int64)
        for lev in range(src, dst, -1):
            out = self.parents[lev][out]
        return out

    def broken(self, top: int, bottom: int) -> np.ndarray:
        """Units of level ``top`` below which a unit at a level in ``[top, bottom)`` has no
        children (their units at level ``bottom`` do not add up to them)."""
        bad = np.zeros(self.sizes[top], dtype=bool) if bottom <= top else None
        for lev in range(bottom - 1, top - 1, -1):
            here = self.kids[lev] == 0
            if bad is not None:
                np.logical_or.at(here, self.parents[lev + 1], bad)
            bad = here
        return bad


class _Rows:
    """Sparse rows over the slice's cells, with values and names."""

    def __init__(self, n_cols: int):
        self.n_cols = n_cols
        self.row, self.col, self.data, self.values, self.names = [], [], [], [], []

    def add(self, cols, coef, value: float, name: str) -> None:
        r = len(self.values)
        self.row.append(np.full(len(cols), r, dtype=np.int64))
        self.col.append(np.asarray(cols, dtype=np.int64))
        self.data.append(np.broadcast_to(np.asarray(coef, dtype=float), (len(cols),)))
        self.values.append(float(value))
        self.names.append(name)

    def invariants(self, keep=None) -> Invariants | None:
        """The rows as invariants on the cells ``keep`` (all by default), each fact once.

        A fact that touches a cell left out of the release is dropped.
        """
        if not self.values:
            return None
        mat = sparse.csr_array(
            (np.concatenate(self.data), (np.concatenate(self.row), np.concatenate(self.col))),
            shape=(len(self.values), self.n_cols),
        )
        rows = np.arange(len(self.values))
        if keep is not None:
            outside = abs(mat) @ (~keep).astype(float)
            rows = rows[outside == 0]
            mat = mat[rows][:, np.flatnonzero(keep)]
        seen, unique = set(), []
        for i in range(mat.shape[0]):  # the same fact from two invariants: once
            r = mat[[i]].tocoo()
            key = (tuple(r.coords[1].tolist()), tuple(np.round(r.data, 12).tolist()))
            if key not in seen:
                seen.add(key)
                unique.append(i)
        if not unique:
            return None
        names = [self.names[rows[i]] for i in unique]
        values = [self.values[rows[i]] for i in unique]
        return Invariants(sparse.csr_array(mat[unique]), values, names=names)


def slice_invariants(problem, zero_cells, schema, units_by_level, level: int, attrs, units):
    """The equality facts of ``problem`` on a slice, as a :class:`_Rows` builder.

    ``zero_cells[l]`` maps units of level ``l`` to their structural-zero
    detailed cells; ``units_by_level`` holds every level's geocodes (names);
    ``units`` are the slice's units of ``level`` (sorted indices).
    """
    attrs = tuple(attrs)
    alg = EigenAlgebra(problem.shape)
    tree = _Tree(problem)
    c = int(np.prod([problem.shape[a] for a in attrs], dtype=np.int64))
    n = units.size
    out = _Rows(n * c)
    pos = np.full(problem.sizes[level], -1, dtype=np.int64)
    pos[units] = np.arange(n)
    cols = pos[:, None] * c + np.arange(c)[None, :]  # the slice's columns of each unit's cells

    def covered(lev):
        """Units of ``lev`` (at or above the slice's level) whose units below are all in it."""
        below = tree.up(np.arange(problem.sizes[level]), level, lev)
        everyone = np.bincount(below, minlength=problem.sizes[lev])
        mine = np.bincount(below[units], minlength=problem.sizes[lev])
        ok = (everyone > 0) & (mine == everyone)
        return ok & ~tree.broken(lev, level) if lev < level else ok

    def members(lev, w):
        """The slice's positions of the units below ``w`` (a unit of level ``lev``)."""
        return np.flatnonzero(tree.up(units, level, lev) == w)

    for eq in problem.equalities:
        seen = _equality_on_query(problem.shape, schema, eq, attrs)
        if seen is None:
            continue
        keep, n_keep, known, to_keep, what, cell_text = seen
        if eq.level <= level:
            ok = covered(eq.level)
            for i, w in enumerate(eq.units):
                if not ok[w]:
                    continue
                mem = members(eq.level, w)
                for b in range(n_keep):
                    sel = cols[units[mem]][:, to_keep == b].reshape(-1)
                    text = f"{_unit_name(units_by_level, eq.level, w)}: {what}"
                    out.add(sel, 1.0, known[i, b], text + cell_text(b))
        else:
            above = tree.up(np.arange(problem.sizes[eq.level]), eq.level, level)
            everyone = np.bincount(above, minlength=problem.sizes[level])
            held = np.bincount(above[eq.units], minlength=problem.sizes[level])
            whole = (everyone > 0) & (held == everyone) & ~tree.broken(level, eq.level)
            totals = np.zeros((problem.sizes[level], n_keep))
            np.add.at(totals, above[eq.units], known)
            for u in units[whole[units]]:
                for b in range(n_keep):
                    text = (
                        f"{_unit_name(units_by_level, level, u)}: {what}"
                        f"{cell_text(b)} (sum of its "
                        f"{_level_name(units_by_level, eq.level)} invariants)"
                    )
                    out.add(cols[u][to_keep == b], 1.0, totals[u, b], text)
    query_rows = alg.query_rows(attrs).astype(bool)
    for lev in range(level + 1):
        cells_of = zero_cells[lev] if zero_cells else {}
        if not cells_of:
            continue
        ok = covered(lev)
        for w, zc in cells_of.items():
            if not ok[w]:
                continue
            zero = np.zeros(alg.k, dtype=bool)
            zero[zc] = True
            mem = members(lev, w)
            for j in np.flatnonzero(~(query_rows & ~zero[None, :]).any(axis=1)):
                text = f"{_unit_name(units_by_level, lev, w)}: structural zero"
                out.add(cols[units[mem], j], 1.0, 0.0, text + _cell_text(schema, attrs, j))
    q = alg.query_rows(attrs)
    for lin in problem.linear:
        if lin.level > level or not covered(lin.level)[lin.unit]:
            continue
        # combinations a'M = b'Q of the constraint's rows that are combinations of the query's
        # (any basis of them states the same facts: scipy's, not the canonical one)
        both = linalg.null_space(np.hstack([lin.matrix.T, -q.T]), rcond=1e-10)
        mem = members(lin.level, lin.unit)
        for i in range(both.shape[1]):
            a, b = both[: lin.matrix.shape[0], i], both[lin.matrix.shape[0] :, i]
            scale = np.abs(b).max()
            if scale <= 1e-12:
                continue
            scale *= np.sign(b[np.flatnonzero(np.abs(b) > 1e-12 * scale)[0]])  # leading entry > 0
            b, a = b / scale, a / scale
            b[np.abs(b) < 1e-12] = 0.0
            live = np.flatnonzero(b)
            sel = cols[units[mem]][:, live]
            coef = np.broadcast_to(b[live], sel.shape)
            text = f"{_unit_name(units_by_level, lin.level, lin.unit)}: linear constraint"
            out.add(sel.reshape(-1), coef.reshape(-1), float(a @ lin.values), text)
    return out


def _unit_name(units_by_level, lev: int, unit: int) -> str:
    level_names, codes = units_by_level
    return f"{level_names[lev]} {codes[lev][unit]}"


def _level_name(units_by_level, lev: int) -> str:
    return units_by_level[0][lev]


def slice_units(measurements, level: str, geocodes) -> np.ndarray:
    """Sorted unit indices of ``level``: every unit, or those of ``geocodes`` (each once)."""
    if geocodes is None:
        return np.arange(len(measurements.geocodes(level)), dtype=np.int64)
    codes = [geocodes] if isinstance(geocodes, str) else list(geocodes)
    if not codes:
        raise InvariantDPError("`geocodes` must name at least one unit.")
    idx = measurements.unit_index(level, codes)
    if np.unique(idx).size != idx.size:
        raise InvariantDPError("`geocodes` lists a unit twice.")
    return np.sort(idx)


def check_slice_size(n_units: int, n_cells: int, what: str) -> None:
    """Refuse a release whose covariance would exceed the JSON document's limit."""
    size = n_units * n_cells
    if size * size > MAX_CELLS:
        raise InvariantDPError(
            f"`geocodes`: {n_units} units x {n_cells} cells make a {size} x {size} {what}, "
            f"more than the {MAX_CELLS} numbers a release document holds; select fewer units "
            "(`geocodes`) or a query with fewer cells."
        )


def census_guarantee(
    rho: float, what: str, sensitivity: float | None = None, timing_tv: float = 0.0
) -> PrivacyGuarantee:
    """The zCDP guarantee of a slice (bounded neighbours), or an unstated one without noise.

    With the ``sensitivity`` of the measurements (their own slice), the
    neighbours are stated as a structured l2 adjacency; the estimates of
    every measurement (post-processing) state them in words.  A secure
    measurement's ``timing_tv`` is recorded with the zCDP guarantee.
    """
    adjacency = "bounded (one record changed)"
    if not rho > 0:
        return PrivacyGuarantee("unstated", {}, adjacency, None, what)
    if sensitivity is not None:
        adjacency = QueryAdjacency("l2", float(sensitivity), relation=adjacency)
    params = {"rho": float(rho)}
    if timing_tv > 0:
        params["timing_tv"] = float(timing_tv)
    return PrivacyGuarantee("zCDP", params, adjacency, None, what)
