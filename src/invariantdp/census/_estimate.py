r"""The analyst's side: GLS estimates of every count, with exact standard errors.

:func:`gls` combines all noisy measurements of a hierarchy under the equality
invariants and structural zeros, imposed exactly, into the best linear
unbiased estimate of every unit's detailed histogram (the Gaussian congenial
likelihood's maximiser); :class:`GLSEstimate` answers any marginal query of
any unit, or of a sum of units of one level, with its standard error.

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164; Aitken (1935) (GLS is the best linear unbiased
estimator); Gong & Meng, Section 3 and Subspace DP paper, Section 5.1 (why
not TopDown's post-processed counts: they are biased for small units).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._dask_tasks import check_scheduler
from .._estimates import (
    cell_selection_rows,
    check_clip,
    dg_variances,
    half_widths,
    negative_count,
)
from .._gls import (
    BlockSolution,
    Solution,
    block_path_refusal,
    group_sum_laws,
    laws_variances,
    onto_sole_children,
    query_variances,
    row_weights,
    rows_cov,
    rows_variances,
    slice_cov,
    solve,
    solve_blocks,
    solve_dask,
    sum_law,
    unit_law,
    variance_from,
)
from .._results import Summary, format_table
from .._validation import check_confidence_level, format_value
from ..exceptions import InvariantDPError
from ..release import Release
from ._estimate_frames import UNIDENTIFIED, estimate_frame
from ._measurements import NoisyMeasurements, actual_variances
from ._nmf_parts import NMFParts
from ._slice import (
    census_guarantee,
    check_slice_size,
    slice_index,
    slice_invariants,
    slice_units,
)

__all__ = ["GLSEstimate", "gls"]


def _space_names(schema, spaces) -> str:
    parts = []
    for t in spaces:
        attrs = [schema.names[a] for a in range(len(schema.names)) if t >> a & 1]
        parts.append("total" if not attrs else " x ".join(attrs) + " contrasts")
    return ", ".join(parts)


@dataclass(frozen=True)
class GLSEstimate:
    """GLS estimates of a hierarchy of units; what :func:`gls` returns.

    Attributes
    ----------
    measurements : NoisyMeasurements
        What was combined.
    solution : object
        The arrays of the two passes (internal).

    References
    ----------
    Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, Schema, gls, measure
    >>> counts = pd.DataFrame({"geocode": ["11", "11", "12"], "sex": ["F", "M", "M"],
    ...                        "count": [5, 3, 7]})
    >>> nm = measure(counts, Schema({"sex": ["F", "M"]}), Geography({"A": 1, "B": 2}),
    ...              {"A": {"detailed": 1.0}, "B": {"detailed": 1.0}},
    ...              invariants={"A": ["total"]}, secure=False, rng=3, units=["11", "12"])
    >>> est = gls(nm)
    >>> df = est.estimate("total", "B")
    >>> list(df.columns)
    ['geocode', 'estimate', 'std_error', 'moe', 'ci_lower', 'ci_upper', 'note']
    >>> round(float(df["estimate"].sum()), 9)  # the invariant state total, exactly
    15.0
    >>> both = est.estimate("total", "B", groups={"11": "city", "12": "city"})
    >>> float(both["std_error"].iloc[0])  # the invariant: no error
    0.0
    """

    measurements: NoisyMeasurements
    solution: Solution | BlockSolution = field(repr=False)

    # -- helpers ---------------------------------------------------------------

    @property
    def _blocks(self) -> bool:
        """Whether the solution is the dense-factor one (recoded queries)."""
        return isinstance(self.solution, BlockSolution)

    def _spec(self, query: str):
        """``(attrs, recodes)`` of a query: recoded queries on the dense-factor solution only."""
        if self._blocks:
            return self.measurements.schema.query_spec(query)
        return self.measurements.schema.query(query), {}

    def _cell_index(self, query: str) -> pd.Index:
        """The query's cells labelled for selections: its attributes (or recodes) and the
        recodes of its plain attributes (a cell's group; missing for a level in none)."""
        schema = self.measurements.schema
        frame = schema.cell_frame(query)
        attrs, used = schema.query_spec(query)
        grids = np.indices(schema.query_shape(query)).reshape(len(attrs), -1)
        for name, (attr, _) in schema.recodes.items():
            a = schema.names.index(attr)
            if a not in attrs or a in used or name in frame.columns:
                continue
            group, level = np.nonzero(schema.recode_matrix(name))
            group_of = np.full(schema.shape[a], None, dtype=object)
            group_of[level] = np.asarray(schema.labels(name), dtype=object)[group]
            frame[name] = group_of[grids[attrs.index(a)]]
        if frame.shape[1] == 1:
            return pd.Index(frame.iloc[:, 0], name=frame.columns[0])
        return pd.MultiIndex.from_frame(frame)

    def _selection(self, query: str, cells):
        """``(names, rows)``: the selections of ``cells`` as 0/1 rows over the query's cells."""
        if not self.measurements.schema.query_shape(query):
            raise InvariantDPError(
                f"`cells` selects among the cells of `query`; {query!r} has a single cell: "
                "pass the query of the attributes the selections name (e.g. 'votingage')."
            )
        return cell_selection_rows(self._cell_index(query), cells)

    def _crosswalk(self, level: str, groups):
        """``(labels, unit indices, group of each)`` of a unit-to-area crosswalk.

        ``groups`` is a mapping or Series ``{unit: area}`` or a two-column
        frame (unit, area); units are keyed by their geocode or, at a level
        whose geocodes are longer than 16 digits (the release layout's
        blocks), by the 16-digit tabulation block code that ends them.
        """
        if isinstance(groups, pd.DataFrame):
            if groups.shape[1] != 2:
                raise InvariantDPError(
                    f"`groups` as a DataFrame must have two columns (unit, area); it has "
                    f"{groups.shape[1]}: {format_value(list(groups.columns))}."
                )
            keys = groups.iloc[:, 0].to_numpy(dtype=object)
            areas = groups.iloc[:, 1].to_numpy(dtype=object)
        elif isinstance(groups, pd.Series):
            keys, areas = groups.index.to_numpy(dtype=object), groups.to_numpy(dtype=object)
        elif isinstance(groups, Mapping):
            keys = np.array(list(groups.keys()), dtype=object)
            areas = np.array(list(groups.values()), dtype=object)
        else:
            raise TypeError(
                "`groups` must be a mapping or Series {unit: area} or a two-column DataFrame "
                f"(unit, area), got {type(groups).__name__}."
            )
        if keys.size == 0:
            raise InvariantDPError("`groups` must assign at least one unit to a group.")
        if pd.api.types.infer_dtype(keys, skipna=False) != "string":
            key = next(k for k in keys if not isinstance(k, str))
            raise InvariantDPError(
                f"`groups` keys must be geocodes as strings (their leading zeros matter); "
                f"{format_value(key)} has type {type(key).__name__}."
            )
        missing = pd.isna(areas)
        if np.any(missing):
            raise InvariantDPError(
                f"`groups` gives the unit {keys[missing][0]!r} no area (a missing value)."
            )
        dup = pd.Index(keys).duplicated()
        if np.any(dup):
            raise InvariantDPError(
                f"`groups` lists the unit {keys[dup][0]!r} twice: each unit belongs to one group."
            )
        kind = pd.api.types.infer_dtype(areas, skipna=False)
        if kind.startswith("mixed") and kind != "mixed-integer-float":
            first = type(areas[0])
            other = next(a for a in areas if not isinstance(a, first))
            raise TypeError(
                f"`groups` areas must be of one type (all strings or all numbers), so that "
                f"areas sort and compare by their values; {format_value(areas[0])} has type "
                f"{first.__name__} and {format_value(other)} type {type(other).__name__}."
            )
        try:
            codes, labels = pd.factorize(areas, sort=True)
        except TypeError as exc:  # values of one type that have no order
            raise TypeError(
                f"`groups` areas must be values that sort (strings or numbers); {exc}"
            ) from None
        units = self.measurements.unit_keys(level, keys)
        return np.asarray(labels, dtype=object), units, codes.astype(np.int64)

    def _level(self, level: str) -> int:
        return self.measurements.geography.index(level)

    def _frame(
        self,
        keys: dict,
        est,
        var,
        attrs,
        query,
        confidence_level,
        reasons,
        lattice=None,
        *,
        rows=None,
        clip=False,
        cells=None,
    ):
        """The estimate frame (:func:`~invariantdp.census._estimate_frames.estimate_frame`).

        ``rows`` (unit positions) keeps part of the units; ``cells`` labels
        the columns of ``est`` (a DataFrame, one row each; default: the
        query's cells).
        """
        if cells is None:
            cells = self.measurements.schema.cell_frame(query)
        return estimate_frame(
            keys, est, var, cells, confidence_level, reasons, lattice, rows=rows, clip=clip
        )

    def _exact_intervals(self) -> bool:
        """Whether the noise's linear combinations have a computable exact (lattice) law."""
        family = self.measurements.noise_family
        return family.cell_noise(family.calibrate(variance=1.0)[0]).exact_intervals

    def _lattice(self, li: int, attrs):
        """``f(level, var) -> (half-widths, coverage, method)``: the query's cells at ``li``.

        The error of a unit's estimate is ``a' e`` over every measurement of
        the hierarchy, with ``a_j = Cov(m_j' x, w' x) / v_j`` for measured
        cell ``m_j`` of variance ``v_j`` (the GLS normal equations; between a
        child and its parent the covariance is ``G_child F_parent``).  The
        terms of the unit's own and its children's measurements, which
        dominate it, are taken with their exact discrete Gaussian law; the
        rest, a sum of many small terms of the other units' measurements, of
        variance
        ``Var(w' x) - sum_own a_j^2 v_j``, as Gaussian
        (:func:`invariantdp._estimates._lattice_intervals.half_widths`, which
        :func:`invariantdp.estimate` uses too).  A unit whose error is its
        own measurements alone (a one-unit hierarchy) gets the exact law.
        """
        nm, sol = self.measurements, self.solution
        alg = sol.alg

        def tables(lev):
            return [
                (
                    nm.schema.query(q),
                    t.units,
                    actual_variances(nm.noise_family, t.variance),
                    np.sqrt(np.asarray(t.variance, dtype=float)),
                )
                for (name, q), t in nm.measurements.items()
                if name == nm.levels[lev]
            ]

        n = sol.problem.sizes[li]
        c = int(np.prod([alg.shape[a] for a in attrs], dtype=np.int64))

        def terms_of(lev, cov_rows, units, owner, out):
            """Add to ``out[owner[i]]`` the weights and sigmas of ``units[i]``'s measured cells."""
            pos = {int(u): i for i, u in enumerate(units)}
            for r_attrs, t_units, v, sig in tables(lev):
                n_r = int(np.prod([alg.shape[a] for a in r_attrs], dtype=np.int64))
                for i in np.flatnonzero(np.isin(t_units, units)).tolist():
                    j = pos[int(t_units[i])]
                    a = cov_rows(j, r_attrs) / np.broadcast_to(v[i], (n_r,))
                    out[owner[j]][0].append(a)
                    out[owner[j]][1].append(np.broadcast_to(sig[i], (n_r,)))

        def flat_terms(lev, cols, units, owner):
            """``(owner, weight, sigma)`` of every measured cell of ``units`` (at ``lev``).

            ``cols[i]`` is the covariance of ``units[i]``'s cells with the estimate.
            """
            where = np.full(sol.problem.sizes[lev], -1)
            where[units] = np.arange(units.size)
            out = []
            for r_attrs, t_units, v, sig in tables(lev):
                j = where[t_units]
                sel = j >= 0
                if not sel.any():
                    continue
                block = alg.marginal(cols[j[sel]], r_attrs)
                n_r = block.shape[1]
                vv = np.broadcast_to(v[sel].reshape(int(sel.sum()), -1), block.shape)
                ss = np.broadcast_to(sig[sel].reshape(int(sel.sum()), -1), block.shape)
                out.append(
                    (np.repeat(owner[j[sel]], n_r), (block / vv).reshape(-1), ss.reshape(-1))
                )
            return out

        def intervals(cl, var):
            half = np.full((n, c), np.nan)
            cov = np.full((n, c), np.nan)
            how = np.full((n, c), "", dtype=object)
            ok = np.isfinite(var)
            cache: dict = {}
            general = np.zeros(n, dtype=bool)
            if sol.basis is not None:
                general = sol.anchor[li][:, 0] >= 0
            fast = np.flatnonzero(~general & ok.all(axis=1))
            if fast.size:
                # one cell stands for all: the scalar covariance is symmetric in the levels
                first = np.zeros((1, c))
                first[0, 0] = 1.0
                m = sol.F[li][fast]
                m = np.where(np.isinf(m), 0.0, m)
                probe = np.broadcast_to(alg.spread(first, attrs), (fast.size, *alg.shape))
                cols = alg.apply(probe, m)
                parts = [flat_terms(li, cols, fast, np.arange(fast.size))]
                if li + 1 < sol.n_levels:
                    # the children's measurements: Cov(h_child, h_u) = G_child F_u on each space
                    st = sol.starts[li + 1]
                    counts = np.diff(st)[fast]
                    owner = np.repeat(np.arange(fast.size), counts)
                    kids = np.repeat(st[fast], counts) + (
                        np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
                    )
                    plain = np.ones(kids.size, dtype=bool)
                    if sol.basis is not None:
                        plain = ~sol.affected[li + 1][kids]
                    g = sol.G[li + 1][kids]
                    plain &= ~np.isnan(g).any(axis=1)
                    kids, owner, g = kids[plain], owner[plain], g[plain]
                    if kids.size:
                        kid_cols = alg.apply(probe[owner], g * m[owner])
                        parts.append(flat_terms(li + 1, kid_cols, kids, owner))
                h, p, w = _many(parts, fast.size, var[fast, 0], cl, cache)
                half[fast], cov[fast], how[fast] = h[:, None], p[:, None], w[:, None]
            for u in np.flatnonzero(general | ~ok.all(axis=1)).tolist():
                rows_s = alg.query_rows(attrs)
                m, law = unit_law(sol, li, u)
                blocks = {}

                def cov_rows(_, r_attrs, m=m, law=law, rows_s=rows_s, blocks=blocks):
                    if r_attrs not in blocks:
                        rows = np.vstack([rows_s, alg.query_rows(r_attrs)])
                        blocks[r_attrs] = rows_cov(sol, m, law, rows)[: rows_s.shape[0], c:]
                    return blocks[r_attrs]

                terms = {0: ([], [])}
                terms_of(li, cov_rows, np.array([u]), np.array([0]), terms)
                for j in np.flatnonzero(ok[u]).tolist():
                    cell = ([a[j] for a in terms[0][0]], terms[0][1])
                    half[u, j], cov[u, j], how[u, j] = _one(cell, var[u, j], cl, cache)
            return half, cov, how

        return intervals

    def _reasons(self, fast_vars, attrs) -> list:
        alg = self.solution.alg
        weight = alg.cell_weight(attrs) > 0
        out = []
        for f in np.atleast_2d(fast_vars):
            spaces = np.flatnonzero(np.isinf(f) & weight)
            what = (
                f"the {_space_names(self.measurements.schema, spaces)} of this unit"
                if spaces.size
                else "cells constrained only together with other units"
            )
            out.append(f"not estimable: no measurement or invariant identifies {what}")
        return out

    # -- public ------------------------------------------------------------------

    def estimate(
        self,
        query: str,
        level: str,
        confidence_level=0.95,
        groups=None,
        *,
        geocodes=None,
        clip=False,
        cells=None,
    ):
        """Estimates with standard errors and confidence intervals of a query.

        With Gaussian noise the interval is ``estimate +- z std_error``
        (exact).  With discrete Gaussian noise (the census's) the error of a
        unit's estimate is a combination ``a' e`` of integer noises, and the
        plain interval under-covers (0.883 for a cell measured once at
        variance 1): the interval comes from the exact law of the terms of
        the unit's own and its children's measurements, the rest of the error
        taken as Gaussian (:func:`invariantdp._estimates._lattice_intervals.half_widths`,
        shared with :func:`invariantdp.estimate`).  It is exact where those
        terms are the whole error (a one-unit hierarchy); elsewhere its
        coverage, checked against the exact law of the whole error on the
        tests' hierarchies (tract variances 0.25 and 1, levels 0.9 and 0.95),
        is never below the nominal level less 0.005.  Sums over ``groups``
        and selections of ``cells`` take the Gaussian interval, and so does
        every estimate of a hierarchy with recoded queries (the dense-factor
        solution, as for a persons file in the 2020 release layout, whose
        noise variances are large: its 95% intervals of tract, block-group
        and block totals and voting-age populations covered 0.939-0.956 on
        200 files of the tests' generator of that layout).

        Parameters
        ----------
        query : str
            A query of the schema (``"total"``, ``"sex * age"``, ``"detailed"``).
        level : str
            A geographic level.
        confidence_level : float, optional
            In (0, 1); default 0.95.  It sets the intervals and ``moe``; the
            Census Bureau's users read margins of error at 90% (the American
            Community Survey's convention): pass ``confidence_level=0.9``.
        groups : mapping, pandas.Series or two-column pandas.DataFrame, optional
            A crosswalk ``{unit: area}`` (or rows ``(unit, area)``) over units
            of ``level``: estimates of the query summed over each area's units
            (a voting district or a city from its blocks), with the
            covariances between units (through the tree) accounted for; the
            cost is linear in the number of units listed (units on the
            low-rank path add, per area, the size of their top affected
            family).  Units are named by
            geocode or, at a level whose geocodes are longer than 16 digits
            (the release layout's blocks: their block group's geocode then
            the 16-digit tabulation block code), by that tabulation code; one
            form for every key.  Areas are strings or numbers, all of one type;
            rows are ordered by area (numbers numerically) and column
            ``group`` holds the areas as given.
        geocodes : sequence of str, optional
            The units of ``level`` to report (default all), as in
            :meth:`to_release`; not with ``groups``.
        clip : bool, optional
            Floor the estimates and both ends of their intervals at 0, for
            display only: a clipped estimate is biased upwards (the GLS
            estimate is unbiased, and negative ones are its price).
            ``attrs["negative"]`` counts the negative estimates either way.
        cells : mapping, optional
            Unions of the query's cells named by their labels, estimated
            instead of the cells: ``{"adults": {"age": ["18-64", "65+"]}}``
            is the sum of the cells whose ``age`` is ``18-64`` or ``65+``
            (and every level of the query's other attributes); several
            levels in one selection intersect.  A recode of one of the
            query's attributes names groups of its levels
            (``{"institutional": {"hhinstlevels": ["Institutional
            Facility"]}}`` on ``"hhgq"``).  The standard error is that of the
            sum, from the full covariance of the selected cells' estimates.
            The same selections as :func:`invariantdp.estimate` takes.

        Returns
        -------
        pandas.DataFrame
            ``geocode`` (or ``group``), one column per attribute of the query
            (level labels) or, with ``cells``, a column ``cells`` of the
            selections' names, then the columns of :func:`invariantdp.estimate`
            in its order: ``estimate``, ``std_error``, ``moe`` (the
            half-width of the interval at ``confidence_level``),
            ``ci_lower``, ``ci_upper`` and ``note`` (why a row is not
            estimable, its numbers then NaN; missing where it is
            estimable); ``attrs["interval"]`` and
            ``attrs["coverage"]`` give each row's method and coverage (exact,
            the mixture with the Gaussian remainder, or nominal).

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp.census import Geography, Schema, gls, measure
        >>> counts = pd.DataFrame({"geocode": ["11", "11", "12"],
        ...                        "age": ["0-17", "18-64", "65+"], "count": [5, 3, 7]})
        >>> schema = Schema({"age": ["0-17", "18-64", "65+"]})
        >>> nm = measure(counts, schema, Geography({"A": 1, "B": 2}),
        ...              {"A": {"total": 1.0}, "B": {"detailed": 1.0}}, secure=False, rng=3,
        ...              units=["11", "12"])
        >>> est = gls(nm)
        >>> adults = est.estimate("age", "B", cells={"adults": {"age": ["18-64", "65+"]}})
        >>> adults[["geocode", "cells"]].to_numpy().tolist()
        [['11', 'adults'], ['12', 'adults']]
        >>> cov = est.cov("age", "11").to_numpy()[1:, 1:]   # the two cells' covariance
        >>> bool(abs(adults["std_error"][0] ** 2 - cov.sum()) < 1e-12)
        True
        """
        li = self._level(level)
        clip = check_clip(clip)
        check_confidence_level(confidence_level)
        attrs, recodes = self._spec(query)
        if groups is not None and geocodes is not None:
            raise InvariantDPError(
                "`geocodes` selects units to report; with `groups` list the units in "
                "`groups` instead."
            )
        sel = None if cells is None else self._selection(query, cells)
        walk = None if groups is None else self._crosswalk(level, groups)
        rows = None if geocodes is None else slice_units(self.measurements, level, geocodes)
        labels = None if sel is None else pd.DataFrame({"cells": sel[0].to_numpy(dtype=object)})
        if walk is not None:
            est, var, reasons = self._group_moments(li, attrs, recodes, walk, sel)
            return self._frame(
                {"group": walk[0]}, est, var, attrs, query, confidence_level, reasons,
                clip=clip, cells=labels,
            )  # fmt: skip
        lattice = None
        if sel is not None:
            est, var, reasons = self._selection_moments(li, attrs, recodes, sel[1])
        elif self._blocks:
            est = self.solution.estimates(li, attrs, recodes)
            var = self.solution.query_variances(li, attrs, recodes)
            reasons = [UNIDENTIFIED] * est.shape[0]
        else:
            sol = self.solution
            est = sol.alg.marginal(sol.x[li], attrs)
            var = query_variances(sol, li, attrs)
            reasons = self._reasons(sol.F[li], attrs)
            lattice = self._lattice(li, attrs) if self._exact_intervals() else None
        return self._frame(
            {"geocode": self.measurements.units[li]}, est, var, attrs, query, confidence_level,
            reasons, lattice, rows=rows, clip=clip, cells=labels,
        )  # fmt: skip

    def _selection_moments(self, li, attrs, recodes, rows):
        """``(estimates, variances, reasons)`` of selections of a query's cells, per unit."""
        sol = self.solution
        if self._blocks:
            est = sol.estimates(li, attrs, recodes) @ rows.T
            var = sol.selection_variances(sol.F[li], attrs, recodes, rows)
            exact = sol.exact_query_cells(li, np.arange(est.shape[0]), attrs, recodes)
            reasons = [UNIDENTIFIED] * est.shape[0]
        else:
            est = sol.alg.marginal(sol.x[li], attrs) @ rows.T
            var = rows_variances(sol, li, rows @ sol.alg.query_rows(attrs))
            exact = query_variances(sol, li, attrs) == 0
            reasons = self._reasons(sol.F[li], attrs)
        return est, _exact_selections(var, exact, rows), reasons

    def _group_moments(self, li, attrs, recodes, walk, sel):
        """``(estimates, variances, reasons)`` of a query (or selections) summed over groups."""
        sol = self.solution
        labels, units, codes = walk
        n_groups = labels.size
        if self._blocks:
            q_est = sol.estimates(li, attrs, recodes)[units]
        else:
            q_est = sol.alg.marginal(sol.x[li][units], attrs)
        c = q_est.shape[1]
        rows = np.eye(c) if sel is None else sel[1]
        est = np.zeros((n_groups, c))
        np.add.at(est, codes, q_est)
        est = est @ rows.T
        if self._blocks:
            blocks = sol.group_sum_blocks(li, units, codes, n_groups)
            var = sol.selection_variances(blocks, attrs, recodes, rows)
            free = np.zeros((n_groups, c))
            np.add.at(free, codes, ~sol.exact_query_cells(li, units, attrs, recodes))
            return est, _exact_selections(var, free == 0, rows), [UNIDENTIFIED] * n_groups
        # one recursion for every group; each group's law then gives its variances, with the
        # weights of the query (or the selections' rows) computed once for all groups
        laws = group_sum_laws(sol, li, units, codes, n_groups)
        m_all = np.array([m for m, _ in laws]).reshape(n_groups, -1)
        if sel is None:
            var = laws_variances(sol, laws, attrs)
        else:
            lifted = rows @ sol.alg.query_rows(attrs)
            weights = row_weights(sol, lifted)
            var = np.array([np.diag(rows_cov(sol, m, law, lifted, weights)) for m, law in laws])
        return est, var.reshape(n_groups, rows.shape[0]), self._reasons(m_all, attrs)

    def cov(self, query: str, geocode, level: str | None = None):
        """The covariance matrix of a query at one unit, or summed over units of one level.

        ``geocode`` is one geocode, or a list of geocodes of one level (the
        query summed over them).  Rows and columns are labelled by the
        query's cells; ``inf`` marks cells that are not estimable.
        """

        codes = [geocode] if isinstance(geocode, str) else list(geocode)
        if not codes:
            raise InvariantDPError("`geocode` must name at least one unit.")
        geo = self.measurements.geography
        if level is None:
            widths = {len(str(c)) for c in codes}
            if len(widths) != 1 or widths.pop() not in geo.widths:
                raise InvariantDPError(
                    "`geocode` must name units of one level (geocodes of one width of "
                    f"{geo.widths}); pass `level` to say which."
                )
            level = geo.names[geo.widths.index(len(str(codes[0])))]
        li = self._level(level)
        idx = self.measurements.unit_index(level, codes)
        if np.unique(idx).size != idx.size:
            raise InvariantDPError("`geocode` lists a unit twice: a sum counts each unit once.")
        if self._blocks:
            b_attrs, recodes = self.measurements.schema.query_spec(query)
            if idx.size == 1:
                mat = self.solution.slice_cov(li, idx, b_attrs, recodes)
            else:
                mat = self.solution.sum_cov(li, idx, b_attrs, recodes)[1]
            return self._cov_frame(query, b_attrs, mat)
        attrs = self.measurements.schema.query(query)
        if idx.size == 1:
            m, law = unit_law(self.solution, li, int(idx[0]))
        else:
            m, law = sum_law(self.solution, li, idx)
        mat = variance_from(self.solution, m, law, attrs, full=True)
        return self._cov_frame(query, attrs, mat)

    def _cov_frame(self, query, attrs, mat):
        cells = self.measurements.schema.cell_frame(query)
        if not attrs:
            index = pd.Index(["total"], name="query")
        elif len(attrs) == 1:
            index = pd.Index(cells.iloc[:, 0], name=cells.columns[0])
        else:
            index = pd.MultiIndex.from_frame(cells)
        return pd.DataFrame(mat, index=index, columns=index)

    def to_release(self, query: str, level: str, geocodes=None, *, drop_unidentified=False):
        r"""The estimates of a query over units of one level as a labelled Release.

        The release's value is the GLS estimate of every cell (unit by unit
        in geocode order, each unit's cells in C order) and its noise is the
        Gaussian with the estimates' joint covariance (family
        ``correlated_gaussian``): within a unit and, through their common
        ancestors, between units.  Models and tests of the package then
        account for the measurement error of the estimates
        (:class:`~invariantdp.inference.PrivatizedPoisson`, the Bayes
        ``poisson_regression_model``).

        Parameters
        ----------
        query : str
            A query of the schema (``"total"``, ``"sex"``, ``"detailed"``).
        level : str
            A geographic level.
        geocodes : sequence of str, optional
            The units (default: every unit of ``level``).
        drop_unidentified : bool, optional
            Cells that no measurement or invariant identifies are refused
            (the default) or, with True, left out of the release and listed
            with the reason in ``metadata["not_estimable"]``.

        Returns
        -------
        Release
            Labels ``geocode`` and the query's attributes (level labels where
            the schema has them).  Invariants: the equality facts of the
            measurements that bear on the cells (a state total when the units
            cover the state, a county's invariant margin when they cover the
            county, structural zeros, ...), which the estimates satisfy
            exactly and the covariance keeps.  Guarantee: the measurements'
            zCDP (the estimates are post-processing of them), adjacency
            bounded.

        Raises
        ------
        InvariantDPError
            Before any work: an unknown query, level or geocode, a recoded
            query (its groups of levels are not the cells the invariants
            are stated on: release the attribute's query), a unit
            listed twice, a covariance beyond a release document's
            ``MAX_CELLS`` numbers; then a cell that is not estimable unless
            ``drop_unidentified``.

        Notes
        -----
        Units ``u, v`` with deepest common ancestor ``a`` and children
        ``c, c'`` of ``a`` above them have
        :math:`\operatorname{Cov}(h_u, h_v) = g_u F_a g_v^\top + \Gamma_u
        \operatorname{Cov}(h_c, h_{c'} \mid h_a) \Gamma_v^\top`, with
        :math:`\operatorname{Cov}(h_c, h_{c'} \mid h_a) = -V_c S^{-1} V_{c'}`
        (see :mod:`invariantdp._gls._unit_pair_covariances`); the cost is
        ``O(n^2)`` for ``n`` units plus the size of the release.

        References
        ----------
        Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164; Gao, Gong & Yu
        (2022), Definition 2 (invariants).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from invariantdp import Release
        >>> from invariantdp.census import Geography, Schema, gls, measure
        >>> counts = pd.DataFrame({"geocode": ["11", "11", "12", "13"],
        ...                        "sex": ["F", "M", "M", "F"], "count": [5, 3, 7, 4]})
        >>> nm = measure(counts, Schema({"sex": ["F", "M"]}), Geography({"A": 1, "B": 2}),
        ...              {"A": {"sex": 1.0}, "B": {"detailed": 1.0}},
        ...              invariants={"A": ["total"]}, secure=False, rng=3,
        ...              units=["11", "12", "13"])
        >>> est = gls(nm)
        >>> r = est.to_release("total", "B")
        >>> r.noise.family, r.invariants.names
        ('correlated_gaussian', ('A 1: total',))
        >>> round(float(r.value.sum()), 9)  # the state total, exactly
        19.0
        >>> cov = np.array(r.noise.params["cov"])
        >>> bool(np.isclose(cov[:2, :2].sum(), est.cov("total", ["11", "12"]).iloc[0, 0]))
        True
        >>> Release.from_json(r.to_json()) == r
        True
        """
        nm, sol = self.measurements, self.solution
        if nm.schema.is_recoded(query):
            # the release's invariants (margins, structural zeros, linear facts) are stated on
            # the levels of the query's attributes, which a recode's groups sum over
            attr = nm.schema.names[next(iter(nm.schema.query_spec(query)[1]))]
            raise InvariantDPError(
                f"`query` ({format_value(query)}) uses a recode: to_release takes marginal "
                f"queries (attributes at their own levels), whose cells the invariants are "
                f"stated on; release the recoded attribute's query (e.g. {attr!r}) and sum "
                "its cells, or use `estimate`, which takes recoded queries."
            )
        attrs = nm.schema.query(query)
        li = self._level(level)
        units = slice_units(nm, level, geocodes)
        c = nm.schema.query_cells(query)
        check_slice_size(units.size, c, "covariance")
        if self._blocks:
            est = sol.estimates(li, attrs)[units].reshape(-1)
            cov = sol.query_slice_cov(li, units, attrs)
            zero_cells = self._slice_zero_cells(li, units)
        else:
            est = sol.alg.marginal(sol.x[li][units], attrs).reshape(-1)
            cov = slice_cov(sol, li, units, attrs)
            zero_cells = sol.zero_cells
        ok = np.isfinite(np.diag(cov))
        index = slice_index(nm.schema, query, nm.units[li][units])
        meta = {
            "source": "census GLS estimates",
            "level": level,
            "query": query,
            "estimator": "generalised least squares, invariants imposed exactly "
            "(Cumings-Menon & Zhuravlev 2024)",
        }
        if nm.randomness in ("secure", "simulation"):
            meta["randomness"] = nm.randomness
        if not ok.all():
            # the dense-factor path identifies every cell: only the tree path gets here
            reasons = np.repeat(self._reasons(sol.F[li][units], attrs), c)
            lost = [str(label) for label in index[~ok][:3]]
            if not drop_unidentified:
                raise InvariantDPError(
                    f"{int(np.sum(~ok))} cells of {query!r} at level `{level}` are not "
                    f"estimable ({', '.join(lost)}, ...: {reasons[~ok][0]}); select "
                    "identified units (`geocodes`) or pass `drop_unidentified=True`."
                )
            meta["not_estimable"] = [
                {"cell": [str(v) for v in np.atleast_1d(label)], "reason": str(why)}
                for label, why in zip(index[~ok], reasons[~ok], strict=True)
            ]
        if not ok.any():
            raise InvariantDPError(
                f"no cell of {query!r} at level `{level}` is estimable: nothing to release."
            )
        if not np.any(np.abs(cov[np.ix_(ok, ok)]) > 0):
            raise InvariantDPError(
                f"every cell of {query!r} at level `{level}` is known exactly (the invariants "
                "fix them): there is no noise to describe; `estimate` gives the values."
            )
        facts = slice_invariants(
            sol.problem, zero_cells, nm.schema, (nm.levels, nm.units), li, attrs, units
        )
        keep = np.flatnonzero(ok)
        series = pd.Series(est[keep], index=index[keep], name="estimate")
        return Release.from_published(
            series,
            noise="correlated_gaussian",
            cov=cov[np.ix_(keep, keep)],
            invariants=facts.invariants(ok),
            guarantee=census_guarantee(
                nm.privacy.rho,
                "person records of the units (post-processing of every noisy measurement; "
                "the invariants are published exactly and not covered)",
            ),
            mechanism="census_gls",
            metadata=meta,
        )

    def paths(self):
        """Per level, how many units took each path of the passes (a DataFrame).

        Columns ``level``, ``fast``, ``low-rank``, ``dense`` and
        ``dense-factor``, every one of them whatever the solution (0 for a
        path no unit took), so that files of either kind compare column by
        column.  Marginal queries: ``fast`` (scalars on the eigenspaces),
        ``low-rank`` (a correction on the subspace of constraints that leave
        them) or ``dense``.  Recoded queries (the 2020 release layout): every
        unit takes ``dense-factor`` (a few ``m x m`` blocks per unit).

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp.census import Geography, Schema, gls, measure
        >>> counts = pd.DataFrame({"geocode": ["11", "12"], "sex": [0, 1], "count": [4, 6]})
        >>> nm = measure(counts, Schema({"sex": 2}), Geography({"A": 1, "B": 2}),
        ...              {"A": {"total": 1.0}, "B": {"detailed": 1.0}}, secure=False, rng=0,
        ...              units=["11", "12"])
        >>> gls(nm).paths().to_numpy().tolist()
        [['A', 1, 0, 0, 0], ['B', 2, 0, 0, 0]]
        """
        names = ("fast", "low-rank", "dense", "dense-factor")
        rows = []
        for li, level in enumerate(self.measurements.levels):
            p = self.solution.path(li)
            rows.append((level, *(int(np.sum(p == name)) for name in names)))
        return pd.DataFrame(rows, columns=["level", *names])

    def path(self, level: str):
        """The path each unit of ``level`` took (a Series indexed by geocode)."""
        li = self._level(level)
        return pd.Series(self.solution.path(li), index=self.measurements.units[li], name="path")

    def _slice_zero_cells(self, li: int, units) -> list:
        """Per level down to ``li``: structural-zero cells of the slice's units and ancestors."""
        prob = self.solution.problem
        out = [{} for _ in prob.sizes]
        here = np.asarray(units, dtype=np.int64)
        for lev in range(li, -1, -1):
            out[lev] = self.solution.zero_cells(lev, np.unique(here))
            if lev:
                here = prob.parents[lev][here]
        return out

    def summary(self) -> Summary:
        basis = None if self._blocks else self.solution.basis
        rows = [
            (f"{lev}", f"{len(u)} units, {negative_count(x)} negative cell estimates")
            for lev, u, x in zip(
                self.measurements.levels, self.measurements.units, self.solution.x, strict=True
            )
        ]
        rows += [
            ("invariants imposed exactly", len(self.measurements.invariants)),
            ("structural zero tables", len(self.measurements.zeros)),
            ("low-rank correction dimension", 0 if basis is None else basis.dim),
            ("noise", self.measurements.noise),
        ]
        notes = [
            "Best linear unbiased estimates under the equality invariants (GLS, exact).",
            "Standard errors use the noise law's actual variance; discrete Gaussian intervals",
            "use the exact law of each unit's own and children's noise terms.",
            "Negative cell estimates are kept (the estimates are unbiased); estimate(clip=True)",
            "floors them at 0 for display, which biases them upwards.",
            "Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164.",
        ]
        return format_table("GLS estimates of noisy measurements", rows, notes)


def _exact_selections(var, exact, rows):
    """Selections made only of cells known exactly (structural zeros) have variance 0."""
    loose = (~exact).astype(float) @ (rows != 0).T.astype(float)
    return np.where(loose == 0, 0.0, var)


def _many(parts, n: int, var, confidence_level: float, cache: dict):
    """:func:`_one` for ``n`` errors at once, from flat ``(owner, weight, sigma)`` pieces."""
    pieces = [p for part in parts for p in part]
    if not pieces:
        return half_widths(np.zeros((n, 1)), 1.0, confidence_level, cache, rest=var)
    owner = np.concatenate([p[0] for p in pieces])
    a = np.concatenate([p[1] for p in pieces])
    sig = np.concatenate([p[2] for p in pieces])
    order = np.argsort(owner, kind="stable")
    owner, a, sig = owner[order], a[order], sig[order]
    counts = np.bincount(owner, minlength=n)
    col = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
    weights = np.zeros((n, max(int(counts.max()), 1)))
    sigmas = np.ones_like(weights)
    weights[owner, col], sigmas[owner, col] = a, sig
    own = np.sum(weights**2 * dg_variances(sigmas), axis=1)
    rest = var - own
    # what the own terms do not explain; below rounding of the variances it is none, and
    # units alike but for rounding share one law (the cache's key)
    rest = np.where(rest > 1e-9 * np.maximum(var, 1e-300), rest, 0.0)
    rest = np.array([float(f"{r:.9g}") for r in rest.tolist()])
    return half_widths(weights, sigmas, confidence_level, cache, rest=rest)


def _one(terms, var: float, confidence_level: float, cache: dict):
    """``(half-width, coverage, method)`` of one error: own terms exact, the rest Gaussian."""
    weights, sigmas = terms
    if not weights:  # no measurement of its own: the whole error is the remainder
        h, cov, how = half_widths(np.zeros((1, 1)), 1.0, confidence_level, cache, rest=[var])
        return h[0], cov[0], how[0]
    a = np.concatenate(weights)
    sig = np.concatenate(sigmas)
    own = float(np.sum(a**2 * dg_variances(sig)))
    rest = var - own
    # what the own terms do not explain; below rounding of the variances it is none, and
    # units alike but for rounding share one law (the cache's key)
    rest = float(f"{rest:.9g}") if rest > 1e-9 * max(var, 1e-300) else 0.0
    h, cov, how = half_widths(a[None, :], sig, confidence_level, cache, rest=[rest])
    return h[0], cov[0], how[0]


def gls(measurements, *, scheduler: str = "serial", client=None, queries=None):
    """Generalised least squares on noisy measurements, invariants and zeros imposed exactly.

    Parameters
    ----------
    measurements : NoisyMeasurements or NMFParts
        The measurements, or a file opened with ``NMFParts.open(folder)``:
        it is then solved county by county, each county's rows read and
        dropped in each pass, so that memory is that of the largest county
        plus what the passes keep (the kept estimates of every unit, each
        state's county-level solution between the passes; see :class:`NMFParts`).
    scheduler : {"serial", "dask"}
        With ``"dask"``, the subtrees below the second level (the counties of
        a state) are independent tasks in each pass; the result is identical.
        For an :class:`NMFParts` each state is a task that reads its own
        files on a worker; only the states' summaries pass through the driver.
    client : dask.distributed.Client, optional
        The cluster to use with ``scheduler="dask"``; by default the running
        client, if any, else dask's local threads.
    queries : list of str, optional
        For an :class:`NMFParts` only: the queries whose estimates and
        variances are kept for every unit of every level (default
        ``["total"]``; e.g. ``["total", "votingage"]`` for the voting-age
        population).

    Returns
    -------
    GLSEstimate or PartsEstimate
        A :class:`PartsEstimate` for an :class:`NMFParts`.

    Notes
    -----
    The cost is linear in the number of units: a bottom-up and a top-down
    pass over the tree.  For marginal queries on a product schema each unit
    costs O(k 2^d) for k cells and d attributes (scalars on the 2^d joint
    eigenspaces of the queries); units touched by structural zeros or other
    equality constraints take a low-rank correction (see :meth:`GLSEstimate.paths`).

    References
    ----------
    Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, Schema, gls, measure
    >>> counts = pd.DataFrame({"geocode": ["11", "12", "12"], "sex": [0, 0, 1],
    ...                        "count": [4, 2, 6]})
    >>> nm = measure(counts, Schema({"sex": 2}), Geography({"A": 1, "B": 2}),
    ...              {"A": {"sex": 1.0}, "B": {"detailed": 1.0}}, secure=False, rng=0,
    ...              units=["11", "12"])
    >>> est = gls(nm)
    >>> df = est.estimate("sex", "A")
    >>> bool((df["std_error"] < 1.0).all())  # three measurements of each cell combined
    True
    >>> est.paths()["fast"].tolist()  # every unit in the scalar algebra
    [1, 2]
    """
    check_scheduler(scheduler, client)
    if isinstance(measurements, NMFParts):
        return measurements._solve(queries, scheduler, client)
    if not isinstance(measurements, NoisyMeasurements):
        raise TypeError(
            "`measurements` must be NoisyMeasurements or NMFParts, got "
            f"{type(measurements).__name__}."
        )
    if queries is not None:
        raise InvariantDPError(
            "`queries` applies to a file solved in parts (NMFParts); the estimates of "
            "NoisyMeasurements answer every query."
        )
    names = {i: (lev, measurements.units[i]) for i, lev in enumerate(measurements.levels)}
    problem = measurements.to_problem()
    if problem.recoded():
        # recoded queries (hhinstlevels, nurse_nva_0) leave the eigen-algebra of marginals:
        # the dense-factor passes take them, level-set structural zeros included
        why = block_path_refusal(problem)
        if why is not None:
            raise InvariantDPError(f"gls cannot combine these recoded queries: {why}.")
        if scheduler != "serial":
            raise InvariantDPError(
                f"scheduler={scheduler!r} is not available for measurements read whole with "
                "recoded queries: use scheduler='serial', or open the file with "
                "NMFParts.open(folder), which gls solves state by state on Dask."
            )
        return GLSEstimate(measurements, solve_blocks(onto_sole_children(problem), names))
    if scheduler == "serial":
        return GLSEstimate(measurements, solve(problem, names))
    return GLSEstimate(measurements, solve_dask(problem, client, names))
