r"""TopDown-like post-processing: the non-negative, integer, consistent histograms published.

The Census Bureau does not publish its noisy measurements as they are: the
TopDown algorithm turns them into histograms that are non-negative, integer
and consistent (every unit the sum of its units below), level by level from
the top.  At the top level each unit's histogram is fitted to its own
measurements under the invariants; below, the children of every unit are
fitted to their own measurements subject to summing to the unit's histogram,
already fixed.  Each fit is a non-negative L2 minimisation followed by an L1
minimisation onto the integers (Gong & Meng, Section 4, Eq. 4.1, on the
TopDown algorithm; Abowd et al. 2022).

:func:`topdown_postprocess` follows that recipe with the package's L2
post-processing (:func:`invariantdp.mechanisms.l2_postprocess`):

1. *Own estimates.*  Each unit's detailed histogram is estimated from its own
   measurements alone by weighted least squares (exact, on the eigenspaces
   of the marginal queries; where they do not identify it, the least-norm
   solution).
2. *L2 step.*  The own estimates are projected, in the Euclidean norm of the
   detailed cells, onto the non-negative histograms that meet the
   constraints (the parent's fixed histogram; invariants; structural zeros).
   Without invariants below the parent the problem separates by cell: the
   children's values of one cell are projected onto the scaled simplex
   :math:`\{x \ge 0, \sum_c x_c = H_{p,j}\}`.
3. *Integer step.*  The integer histograms closest in L1 to the L2 solution
   under the same constraints.  Per cell this is largest-remainder rounding
   (floors, plus one for the children with the largest fractional parts,
   as many as the parent's count needs), which is the exact minimiser; with
   invariants below the parent, a mixed-integer program.

The Bureau's L2 step weighs each query by the inverse of its noise variance
in one optimisation; step 1 then 2 uses the same weights for the own
estimates and the Euclidean norm for the projection, which keeps the problem
separable by cell (and vectorised across units).  Inequality constraints
other than structural zeros are not imposed (as in :func:`gls`).

References
----------
Gong & Meng (2020), "Congenial differential privacy under mandated
disclosure", Section 4 (TopDown: non-negative L2, then L1 onto the integers);
Abowd et al. (2022), "The 2020 Census disclosure avoidance system TopDown
algorithm"; Gao, Gong & Yu, Section 1 and Fig. 1 (the bias this creates).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._gls import EigenAlgebra, own_info, segment_starts, segment_sum
from .._results import Summary, format_table
from ..exceptions import InvariantDPError
from ..invariants import Invariants
from ..mechanisms import l2_postprocess
from ._measurements import NoisyMeasurements

__all__ = ["MAX_COUPLED_CELLS", "TopDownHistograms", "topdown_postprocess"]

#: the largest block of cells fitted together when invariants couple a unit's children
#: (``l2_postprocess`` holds its non-negativity rows as a dense square matrix)
MAX_COUPLED_CELLS = 5000
#: relative agreement required between an invariant and the sum of its children's
_CONSISTENCY = 1e-8


@dataclass(frozen=True)
class TopDownHistograms:
    """Post-processed histograms of every unit; what :func:`topdown_postprocess` returns.

    Attributes
    ----------
    measurements : NoisyMeasurements
        What was post-processed.
    histograms : tuple of numpy.ndarray
        Per level, the detailed histograms of its units, shape
        ``(units, *schema.shape)``: int64 (``integer=True``) or float.
    integer : bool
        Whether the integer step was taken.
    coupled : tuple of int
        Per level, how many units were fitted with invariants or other
        equalities coupling their cells (the slower path).

    References
    ----------
    Gong & Meng (2020), Section 4; Abowd et al. (2022).

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, Schema, measure, topdown_postprocess
    >>> counts = pd.DataFrame({"geocode": ["11", "12"], "sex": ["F", "M"], "count": [4, 9]})
    >>> nm = measure(counts, Schema({"sex": ["F", "M"]}), Geography({"A": 1, "B": 2}),
    ...              {"B": {"detailed": 1.0}}, invariants={"A": ["total"]},
    ...              secure=False, rng=0, units=["11", "12"])
    >>> td = topdown_postprocess(nm)
    >>> df = td.counts("total", "B")
    >>> list(df.columns), int(df["count"].sum())  # the state total, exactly
    (['geocode', 'count'], 13)
    """

    measurements: NoisyMeasurements
    histograms: tuple = field(repr=False)
    integer: bool = True
    coupled: tuple = ()

    def histogram(self, level: str) -> np.ndarray:
        """The detailed histograms of a level's units, shape ``(units, *schema.shape)``."""
        return self.histograms[self.measurements.geography.index(level)]

    def counts(self, query: str, level: str):
        """A query's post-processed answers at a level (a long DataFrame).

        Columns ``geocode``, one per attribute of the query (level labels) and
        ``count``.
        """

        schema = self.measurements.schema
        attrs = schema.query(query)
        li = self.measurements.geography.index(level)
        hist = self.histograms[li]
        answers = EigenAlgebra(schema.shape).marginal(hist, attrs)
        if self.integer:
            answers = np.rint(answers).astype(np.int64)
        n, c = answers.shape
        cells = schema.cell_frame(query)
        out = pd.DataFrame({"geocode": np.repeat(self.measurements.units[li], c)})
        for name in cells.columns:
            out[name] = np.tile(cells[name].to_numpy(), n)
        out["count"] = answers.reshape(-1)
        return out

    def summary(self) -> Summary:
        rows = [
            (f"{lev}", f"{len(u)} units, {c} fitted with coupled constraints")
            for lev, u, c in zip(
                self.measurements.levels, self.measurements.units, self.coupled, strict=True
            )
        ]
        rows += [
            ("integer", self.integer),
            ("invariants imposed", len(self.measurements.invariants)),
            ("structural zero tables", len(self.measurements.zeros)),
        ]
        notes = [
            "Non-negative L2 fit to each unit's own measurements, top level first, each",
            "unit's children summing to it; then L1 onto the integers (TopDown-like).",
            "Biased for small units: use gls() for estimates with standard errors.",
        ]
        return format_table("TopDown-like post-processed histograms", rows, notes)


# -- what constrains each unit ---------------------------------------------------------


def _zero_masks(nm: NoisyMeasurements, alg: EigenAlgebra) -> list:
    """Per level, ``(units, k)`` masks of detailed cells fixed at 0.

    A parent's cell is zero when it is zero in every child (its histogram is
    their sum), so that no parent is fitted a count its children cannot hold.
    """
    masks = [np.zeros((len(u), alg.k), dtype=bool) for u in nm.units]
    for (level, query), t in nm.zeros.items():
        li = nm.geography.index(level)
        attrs, recodes = nm.schema.query_spec(query)
        zero = t.values.astype(float)
        if recodes:
            # a zero group zeroes every level it holds (nursing x under 18: hhgq 3 x
            # votingage 0); the levels outside every group stay free
            sizes = [recodes[a].shape[0] if a in recodes else alg.shape[a] for a in attrs]
            arr = zero.reshape(t.units.size, *sizes)
            for axis, a in enumerate(attrs):
                if a in recodes:
                    arr = np.moveaxis(
                        np.tensordot(arr, recodes[a].astype(float), axes=([axis + 1], [0])),
                        -1,
                        axis + 1,
                    )
            zero = arr.reshape(t.units.size, -1)
        cells = alg.spread(zero, attrs).reshape(t.units.size, alg.k) > 0
        masks[li][t.units] |= cells
    for li in range(len(masks) - 1, 0, -1):
        starts = segment_starts(nm.parents[li], len(nm.units[li - 1]))
        n_children = np.diff(starts)[:, None]
        zero_children = segment_sum(masks[li].astype(float), starts)
        masks[li - 1] |= (n_children > 0) & (zero_children == n_children)
    return masks


def _invariants(nm: NoisyMeasurements) -> list:
    """Per level, ``{attrs: (units, values)}``: each unit's invariants and its children's sums.

    An invariant held by every child of a unit fixes the unit's answer to
    their sum; it is added to the unit (checked against the unit's own), so
    that the unit's fit leaves its children a feasible split.
    """
    schema = nm.schema
    per_level = [{} for _ in nm.levels]
    for (level, query), t in nm.invariants.items():
        per_level[nm.geography.index(level)][schema.query(query)] = (t.units, t.values)
    for li in range(len(per_level) - 1, 0, -1):
        n_par = len(nm.units[li - 1])
        par = nm.parents[li]
        n_children = np.bincount(par, minlength=n_par)
        for attrs, (units, values) in per_level[li].items():
            held = np.bincount(par[units], minlength=n_par)
            covered = np.flatnonzero((n_children > 0) & (held == n_children))
            if not covered.size:
                continue
            sums = np.zeros((n_par, values.shape[1]))
            np.add.at(sums, par[units], values)
            _merge(per_level[li - 1], attrs, covered, sums[covered], nm, li - 1)
    return per_level


def _merge(table: dict, attrs, units, values, nm, li) -> None:
    """Add the children's sums to a level's invariants; where the unit has its own, compare."""
    if attrs not in table:
        table[attrs] = (units, values)
        return
    own_units, own_values = table[attrs]
    pos = np.searchsorted(own_units, units)
    pos = np.minimum(pos, max(own_units.size - 1, 0))
    both = own_units[pos] == units if own_units.size else np.zeros(units.size, dtype=bool)
    diff = np.abs(own_values[pos[both]] - values[both])
    scale = 1.0 + np.abs(values[both])
    bad = np.any(diff > _CONSISTENCY * scale, axis=1)
    if np.any(bad):
        unit = nm.units[li][units[both][np.argmax(bad)]]
        raise InvariantDPError(
            f"the invariant {nm.schema.query_name(attrs)!r} of unit {unit!r} of level "
            f"{nm.levels[li]} is not the sum of its units' invariants below: no consistent "
            "histograms exist."
        )
    keep = ~both
    merged_units = np.concatenate([own_units, units[keep]])
    order = np.argsort(merged_units, kind="stable")
    merged_values = np.concatenate([own_values, values[keep]])[order]
    table[attrs] = (merged_units[order], merged_values)


def _linear(nm: NoisyMeasurements) -> list:
    """Per level, ``{unit: [(matrix, values), ...]}`` of the other equality constraints."""
    per_level = [{} for _ in nm.levels]
    for level, geocode, matrix, values in nm.linear:
        u = int(nm.unit_index(level, [geocode])[0])
        per_level[nm.geography.index(level)].setdefault(u, []).append((matrix, values))
    return per_level


def _unit_rows(alg: EigenAlgebra, invariants: dict, linear: dict, u: int):
    """``(rows over the k cells, values)`` of every equality on unit ``u``."""
    mats, vals = [np.zeros((0, alg.k))], [np.zeros(0)]
    for attrs, (units, values) in invariants.items():
        pos = np.searchsorted(units, u)
        if pos < units.size and units[pos] == u:
            mats.append(alg.query_rows(attrs))
            vals.append(values[pos])
    for matrix, values in linear.get(u, ()):
        mats.append(matrix)
        vals.append(values)
    return np.vstack(mats), np.concatenate(vals)


def _constrained(invariants: dict, linear: dict, n: int) -> np.ndarray:
    """Units with an equality constraint (an invariant or another equality)."""
    out = np.zeros(n, dtype=bool)
    for units, _ in invariants.values():
        out[units] = True
    out[list(linear)] = True
    return out


# -- the fits ------------------------------------------------------------------------------


def _round_to_sum(x: np.ndarray, free: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The integer rows closest in L1 to ``x`` with the row sums ``target`` (largest remainder).

    Each row of ``x`` is non-negative and sums to its integer target; the
    minimiser takes every entry's floor and adds one to the entries with the
    largest fractional parts, as many as the target needs (the L1 cost of an
    entry moved off its floor or ceiling only grows).  Entries that are not
    ``free`` stay 0.
    """
    tol = 1e-9 * np.maximum(1.0, target)[:, None]
    near = np.rint(x)
    x = np.where(np.abs(x - near) <= tol, near, x)
    floor = np.floor(x)
    frac = np.where(free, x - floor, -1.0)
    need = np.rint(target - floor.sum(axis=1)).astype(np.int64)
    order = np.argsort(-frac, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(x.shape[1])[None, :], axis=1)
    return floor + (rank < need[:, None])


def _simplex_fit(values: np.ndarray, free: np.ndarray, target: np.ndarray, integer: bool):
    r"""Rows of non-negative entries summing to ``target``, nearest to ``values`` (L2, then L1).

    The projection onto :math:`\{x \ge 0, \sum x = a\}` is ``a`` times the
    projection of ``values / a`` onto the probability simplex, so one call of
    ``l2_postprocess`` with the invariant ``sum = 1`` serves every row.
    Entries that are not ``free`` are set below the others' largest by 2:
    the projection's threshold exceeds the largest entry less 1, so they come
    out exactly 0, as if they were left out.
    """
    n, m = values.shape
    out = np.zeros((n, m))
    rows = np.flatnonzero(target > 0)
    if rows.size:
        v = values[rows] / target[rows, None]
        f = free[rows]
        if m == 1:
            p = np.ones((rows.size, 1))
        else:
            top = np.where(f, v, -np.inf).max(axis=1, keepdims=True)
            v = np.where(f, v, top - 2.0)
            p = l2_postprocess(v, Invariants(np.ones((1, m)), [1.0]), "nonnegative")
            p = np.where(f, p, 0.0)
            p /= p.sum(axis=1, keepdims=True)  # the projection's sum, to rounding
        out[rows] = p * target[rows, None]
    return _round_to_sum(out, free, target) if integer else out


def _integer_l1(p: np.ndarray, A: np.ndarray, a: np.ndarray, where: str) -> np.ndarray:
    """The non-negative integer ``h`` with ``A h = a`` nearest to ``p`` in L1 (a MILP)."""
    from scipy import optimize, sparse

    n = p.size
    eye = sparse.identity(n, format="csr")
    cons = [
        optimize.LinearConstraint(
            sparse.hstack([sparse.csr_matrix(A), sparse.csr_matrix((A.shape[0], n))]), a, a
        ),
        optimize.LinearConstraint(sparse.hstack([eye, -eye]), -np.inf, p),
        optimize.LinearConstraint(sparse.hstack([-eye, -eye]), -np.inf, -p),
    ]
    res = optimize.milp(
        np.r_[np.zeros(n), np.ones(n)],
        constraints=cons,
        integrality=np.r_[np.ones(n), np.zeros(n)],
        bounds=optimize.Bounds(np.zeros(2 * n), np.full(2 * n, np.inf)),
    )
    if not res.success:
        raise InvariantDPError(
            f"{where}: no non-negative integer histograms meet its constraints "
            f"(integer=True); pass integer=False for the L2 step alone."
        )
    return np.rint(res.x[:n])


def _coupled_fit(x, free, A, a, integer: bool, where: str) -> np.ndarray:
    """Fit cells ``x`` (flattened) under the equalities ``A x = a`` and ``x >= 0``."""
    cols = np.flatnonzero(free.reshape(-1))
    out = np.zeros(free.size)
    A = A[:, cols]
    used = np.any(A != 0, axis=1)
    if np.any(~used & (np.abs(a) > _CONSISTENCY * (1.0 + np.abs(a)))):
        raise InvariantDPError(
            f"{where}: an equality gives a non-zero count to cells fixed at 0 (structural "
            "zeros, or zero in the unit above): no consistent histograms exist."
        )
    A, a = A[used], a[used]
    if cols.size > MAX_COUPLED_CELLS:
        raise InvariantDPError(
            f"{where}: its invariants couple {cols.size} cells, more than the "
            f"{MAX_COUPLED_CELLS} the coupled fit holds (a dense problem); TopDown-like "
            "post-processing of this hierarchy needs invariants at the top level only."
        )
    if not cols.size:
        return out.reshape(free.shape)
    xf = x.reshape(-1)[cols]
    if A.shape[0] == 0:
        p = np.maximum(xf, 0.0)
        h = np.rint(p) if integer else p
    else:
        try:
            p = l2_postprocess(xf, Invariants(A, a), "nonnegative")
        except InvariantDPError:
            raise InvariantDPError(
                f"{where}: no non-negative histograms meet its invariants, its structural "
                "zeros and the fixed histogram of the unit above."
            ) from None
        h = _integer_l1(p, A, a, where) if integer else p
    out[cols] = h
    return out.reshape(free.shape)


def _root_level(own, zero, invariants, linear, alg, nm, integer) -> tuple[np.ndarray, int]:
    """The top level: each unit fitted to its own measurements under its own equalities."""
    n, k = own.shape
    out = np.zeros((n, k))
    constrained = _constrained(invariants, linear, n)
    total = invariants.get(())
    only_total = np.zeros(n, dtype=bool)
    if total is not None:
        only_total[total[0]] = True
        others = [units for attrs, (units, _) in invariants.items() if attrs != ()]
        for units in others:
            only_total[units] = False
        only_total[list(linear)] = False
    free = ~zero
    plain = ~constrained
    fit = np.where(free[plain], np.maximum(own[plain], 0.0), 0.0)
    out[plain] = np.rint(fit) if integer else fit
    if only_total.any():
        units, values = total
        target = np.zeros(n)
        target[units] = values[:, 0]
        rows = np.flatnonzero(only_total)
        empty = (target[rows] > 0) & ~free[rows].any(axis=1)
        if empty.any():
            raise InvariantDPError(
                f"unit {nm.units[0][rows[np.argmax(empty)]]!r} of level {nm.levels[0]}: its "
                "total invariant is not 0 but every cell is a structural zero."
            )
        out[rows] = _simplex_fit(own[rows], free[rows], target[rows], integer)
    coupled = np.flatnonzero(constrained & ~only_total)
    for u in coupled:
        A, a = _unit_rows(alg, invariants, linear, int(u))
        where = f"unit {nm.units[0][u]!r} of level {nm.levels[0]}"
        out[u] = _coupled_fit(own[u], free[u], A, a, integer, where)
    return out, int(coupled.size)


def _child_level(li, parent_hist, own, zero, invariants, linear, alg, nm, integer):
    """Level ``li``: each unit's children fitted to their own measurements, summing to it."""
    n, k = own.shape
    n_par = parent_hist.shape[0]
    starts = segment_starts(nm.parents[li], n_par)
    n_children = np.diff(starts)
    constrained = _constrained(invariants, linear, n)
    coupled = segment_sum(constrained.astype(float), starts) > 0
    out = np.zeros((n, k))
    for c in np.unique(n_children[(n_children > 0) & ~coupled]):
        parents = np.flatnonzero((n_children == c) & ~coupled)
        idx = starts[parents][:, None] + np.arange(c)[None, :]
        # rows (parent, cell), entries the parent's children
        values = own[idx].transpose(0, 2, 1).reshape(-1, c)
        free = ~zero[idx].transpose(0, 2, 1).reshape(-1, c)
        fit = _simplex_fit(values, free, parent_hist[parents].reshape(-1), integer)
        out[idx] = fit.reshape(parents.size, k, c).transpose(0, 2, 1)
    for p in np.flatnonzero(coupled):
        kids = np.arange(starts[p], starts[p + 1])
        c = kids.size
        sum_rows = np.tile(np.eye(k), (1, c))
        blocks = [_unit_rows(alg, invariants, linear, int(u)) for u in kids]
        r = sum(b[0].shape[0] for b in blocks)
        child_rows = np.zeros((r, c * k))
        at = 0
        for i, (mat, _) in enumerate(blocks):
            child_rows[at : at + mat.shape[0], i * k : (i + 1) * k] = mat
            at += mat.shape[0]
        A = np.vstack([sum_rows, child_rows])
        a = np.concatenate([parent_hist[p], *(b[1] for b in blocks)])
        free = ~zero[kids] & (parent_hist[p] > 0)[None, :]
        where = f"the units of level {nm.levels[li]} in {nm.units[li - 1][p]!r}"
        out[kids] = _coupled_fit(own[kids], free, A, a, integer, where)
    return out, int(n_children[coupled].sum())


def _own_estimates(nm: NoisyMeasurements, alg: EigenAlgebra) -> list:
    """Per level, each unit's least-squares estimate from its own measurements, ``(units, k)``."""
    # recoded structural zeros are zero cells (_zero_masks); recoded noisy answers and
    # invariants would need a fit of grouped cells, which this one does not make
    nm.refuse_recoded("topdown_postprocess", allow=("structural zeros",))
    problem = nm.to_problem()
    out = []
    for li, units in enumerate(nm.units):
        own = own_info(alg, problem, li)
        coef = np.divide(1.0, own.lam, out=np.zeros_like(own.lam), where=own.lam > 0)
        out.append(alg.apply(own.eta, coef).reshape(len(units), alg.k))
    return out


def _check_integer_invariants(nm: NoisyMeasurements) -> None:
    for (level, query), t in nm.invariants.items():
        if not np.all(t.values == np.round(t.values)):
            raise InvariantDPError(
                f"the invariant {query!r} of level {level} holds non-integer values: integer "
                "histograms cannot meet it (integer=False keeps the L2 step alone)."
            )


def topdown_postprocess(measurements: NoisyMeasurements, *, integer: bool = True):
    r"""TopDown-like post-processing of noisy measurements into publishable histograms.

    Level by level from the top, every unit's detailed histogram is fitted to
    its own noisy measurements: at the top level under its invariants, below
    subject to the children of each unit summing to the unit's histogram,
    already fixed.  Each fit is a non-negative L2 step then an L1 step onto
    the integers (see the module docstring for the exact problems).  The
    result is non-negative, integer, consistent across levels and meets the
    invariants and structural zeros; it is what an agency publishes, and it
    is biased for small units (estimates with standard errors: :func:`gls`).

    Parameters
    ----------
    measurements : NoisyMeasurements
    integer : bool, optional
        Take the integer step (default).  False: stop after the L2 step
        (non-negative, consistent, real-valued).

    Returns
    -------
    TopDownHistograms

    Raises
    ------
    InvariantDPError
        When no non-negative (integer) histograms meet the invariants and
        structural zeros (invariants of a unit that are not the sum of its
        children's, a non-zero invariant on zero cells, non-integer invariants
        with ``integer=True``), naming the unit; and for noisy answers or
        invariants of recoded queries (the 2020 release's ``hhinstlevels``:
        drop them with :meth:`~NoisyMeasurements.without_queries`).  Recoded
        structural zeros (its ``nurse_nva_0``) are taken: a zero group zeroes
        the detailed cells it holds.

    Notes
    -----
    Cost.  The own estimates take O(N k 2^d) per level (N units, k cells, d
    attributes).  Without invariants below the top level every fit separates
    by cell: one ``l2_postprocess`` call per level and number of children,
    vectorised over all (parent, cell) rows (a semismooth Newton solve,
    O(N k) per iteration), and the rounding sorts each row, O(N k log m) for
    m children.  A unit whose children carry invariants or other equalities
    (and a top-level unit with invariants other than its total) is fitted
    alone, as one dense problem of its free cells: ``l2_postprocess`` then
    holds an n x n matrix for n cells and the integer step is a mixed-integer
    program (:data:`MAX_COUPLED_CELLS` bounds n).

    References
    ----------
    Gong & Meng (2020), Section 4 and Eq. 4.1; Abowd et al. (2022), "The
    2020 Census disclosure avoidance system TopDown algorithm".

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, Schema, measure, topdown_postprocess
    >>> counts = pd.DataFrame({"geocode": ["11", "11", "12", "12"], "sex": [0, 1, 0, 1],
    ...                        "count": [0, 1, 3, 2]})
    >>> nm = measure(counts, Schema({"sex": 2}), Geography({"A": 1, "B": 2}),
    ...              {"A": {"detailed": 1.0}, "B": {"detailed": 0.1}},
    ...              invariants={"A": ["total"]}, secure=False, rng=2, units=["11", "12"])
    >>> td = topdown_postprocess(nm)
    >>> td.histogram("A").sum(), bool((td.histogram("B") >= 0).all())
    (np.int64(6), True)
    >>> (td.histogram("B").sum(axis=0) == td.histogram("A")[0]).all()  # consistent
    np.True_
    """
    if not isinstance(measurements, NoisyMeasurements):
        raise TypeError(
            f"`measurements` must be NoisyMeasurements, got {type(measurements).__name__}."
        )
    integer = bool(integer)
    nm = measurements
    if integer:
        _check_integer_invariants(nm)
    alg = EigenAlgebra(nm.schema.shape)
    zero = _zero_masks(nm, alg)
    invariants = _invariants(nm)
    linear = _linear(nm)
    own = _own_estimates(nm, alg)
    hist, n_coupled = _root_level(own[0], zero[0], invariants[0], linear[0], alg, nm, integer)
    hists, coupled = [hist], [n_coupled]
    for li in range(1, len(nm.levels)):
        hist, n_coupled = _child_level(
            li, hists[-1], own[li], zero[li], invariants[li], linear[li], alg, nm, integer
        )
        hists.append(hist)
        coupled.append(n_coupled)
    shape = nm.schema.shape
    out = tuple((h.astype(np.int64) if integer else h).reshape(h.shape[0], *shape) for h in hists)
    return TopDownHistograms(nm, out, integer, tuple(coupled))
