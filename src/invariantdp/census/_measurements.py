r"""Noisy measurements of a hierarchy of units: the content of a noisy measurement file.

Per geographic level and marginal query, the noisy answers of the units
measured, with the variance parameter of their noise; the equality
invariants (queries published exactly); the structural zeros; the other
inequality constraints (kept and reported, not used by the linear
estimator); and any further linear equality constraints.  Everything is held
as arrays per (level, query), never as per-unit objects.

References
----------
US Census Bureau, 2020 Census noisy measurement files (P.L. 94-171, DHC);
Abowd et al. (2022), "The 2020 Census disclosure avoidance system TopDown
algorithm".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pandas as pd

from .._gls import EigenAlgebra, Equality, Linear, Measurement, Problem, Zeros, constraints_of
from .._results import Summary, format_table
from .._validation import format_value
from ..exceptions import InvariantDPError
from ..families import DISCRETE_GAUSSIAN, NoiseFamily, noise_families, noise_family
from ..release import Release
from ._geography import Geography
from ._ingest import Chunk, assemble
from ._nmf_write import write_nmf
from ._privacy import BOUNDED_SENSITIVITY, CensusPrivacy
from ._schema import Schema
from ._slice import census_guarantee, slice_index, slice_invariants, slice_units
from ._table import QueryTable

#: the tabulation block code that ends a release-layout Block geocode (state to block)
_TAB_WIDTH = 16

__all__ = ["NoisyMeasurements", "QueryTable", "actual_variances"]


def actual_variances(family: NoiseFamily, sigma2) -> np.ndarray:
    r"""The variance of ``family``'s noise of variance parameter ``sigma2``, entry by entry.

    For the discrete Gaussian :math:`N_{\mathbb Z}(0, \sigma^2)` it is
    slightly below :math:`\sigma^2` when :math:`\sigma` is small
    (Canonne, Kamath & Steinke 2020, Fact 18); the family says
    (:meth:`~invariantdp.families.NoiseFamily.cell_noise`).
    """
    sigma2 = np.asarray(sigma2, dtype=float)
    uniq, inv = np.unique(sigma2, return_inverse=True)
    # one law per distinct variance parameter (one per query and level in the Bureau's files)
    var = [family.cell_noise(family.calibrate(variance=float(s))[0]).variance for s in uniq]
    return np.asarray(var, dtype=float)[inv].reshape(sigma2.shape)


def _levels_in(d: dict) -> set:
    return {key[0] for key in d}


@dataclass(frozen=True)
class NoisyMeasurements:
    r"""Noisy measurements and constraints of a hierarchy of geographic units.

    Build one with :func:`~invariantdp.census.measure` (a curator),
    :func:`~invariantdp.census.read_nmf` (a noisy measurement file) or
    :meth:`from_frames` (DataFrames in the file layout).

    Parameters
    ----------
    schema : Schema
    geography : Geography
        The levels held, coarse to fine (contiguous).
    units : tuple of numpy.ndarray
        Sorted geocodes of each level's units.
    measurements : dict
        ``{(level, query): QueryTable}`` of noisy answers with their noise
        variance parameters :math:`\sigma^2` (> 0).
    invariants : dict
        ``{(level, query): QueryTable}`` of exact answers.
    zeros : dict
        ``{(level, query): QueryTable}`` whose ``values`` are boolean masks of
        query cells fixed at 0 (structural zeros).
    inequalities : dict
        ``{(level, query, sign): QueryTable}`` of other bounds, kept and
        reported (:meth:`inequality_report`), not used by the estimator.
    linear : tuple
        ``(level, geocode, matrix, values)`` equality constraints on a unit's
        detailed histogram (rows over its ``k`` cells).
    noise : str
        Family of the noise law, ``"discrete_gaussian"`` (the Bureau's) or
        another family set by its variance parameter (``"gaussian"``; see
        :meth:`NoiseFamily.measurement_noise
        <invariantdp.families.NoiseFamily.measurement_noise>`).
    randomness : str
        ``"secure"``, ``"simulation"`` (from :func:`measure`) or ``"unknown"``.
    timing_tv : float
        For secure measurements, the bound on the total variation between
        their run time and one independent of the data (:mod:`invariantdp.secure`);
        :meth:`to_release` records it with the guarantee.  0 otherwise.

    References
    ----------
    The Bureau's 2020 noisy measurement files; Canonne, Kamath & Steinke (2020)
    (the discrete Gaussian noise).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from invariantdp.census import Geography, NoisyMeasurements, Schema
    >>> dpq = pd.DataFrame({
    ...     "geocode": ["1", "11", "12"],
    ...     "query_name": ["total_dpq", "detailed_dpq", "detailed_dpq"],
    ...     "value": [[30.0], [9.0, 11.0], [4.0, 7.0]],
    ...     "variance": [1.0, 2.0, 2.0],
    ... })
    >>> geo = Geography({"A": 1, "B": 2})
    >>> nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), geo)
    >>> nm.levels, nm.geocodes("B").tolist(), nm.queries("B")
    (('A', 'B'), ['11', '12'], ['detailed'])
    >>> round(nm.privacy.rho, 6)  # 1/1 + 1/2 (sensitivity sqrt(2))
    1.5
    """

    schema: Schema
    geography: Geography
    units: tuple
    measurements: dict = field(default_factory=dict)
    invariants: dict = field(default_factory=dict)
    zeros: dict = field(default_factory=dict)
    inequalities: dict = field(default_factory=dict)
    linear: tuple = ()
    noise: str = DISCRETE_GAUSSIAN.name
    randomness: str = "unknown"
    timing_tv: float = 0.0

    def __post_init__(self):
        if not isinstance(self.schema, Schema):
            raise TypeError(f"`schema` must be a Schema, got {type(self.schema).__name__}.")
        if not isinstance(self.geography, Geography):
            raise TypeError(
                f"`geography` must be a Geography, got {type(self.geography).__name__}."
            )
        tv = self.timing_tv
        if isinstance(tv, bool) or not isinstance(tv, int | float) or not 0 <= tv < 1:
            raise InvariantDPError(f"`timing_tv` ({format_value(tv)}) must be a number in [0, 1).")
        by_variance = [n for n, f in noise_families().items() if f.measurement is not None]
        if not isinstance(self.noise, str) or self.noise not in by_variance:
            raise InvariantDPError(
                f"`noise` ({format_value(self.noise)}) must name a noise family set by its "
                f"variance parameter: one of {', '.join(by_variance)}."
            )
        if len(self.units) != len(self.geography):
            raise InvariantDPError(
                f"`units` must hold one array per level of the geography ({len(self.geography)})."
            )
        object.__setattr__(self, "units", tuple(np.asarray(u, dtype=object) for u in self.units))
        for d in (self.measurements, self.invariants, self.zeros, self.inequalities):
            unknown = _levels_in(d) - set(self.geography.names)
            if unknown:
                raise InvariantDPError(f"levels {sorted(unknown)} are not levels of the geography.")
        object.__setattr__(self, "parents", self.geography.tree(list(self.units)))

    # -- description ---------------------------------------------------------

    @property
    def levels(self) -> tuple:
        return self.geography.names

    @property
    def noise_family(self) -> NoiseFamily:
        """The :class:`~invariantdp.families.NoiseFamily` of the measurements' noise."""
        return noise_family(self.noise)

    def geocodes(self, level: str) -> np.ndarray:
        """The sorted geocodes of a level's units."""
        return self.units[self.geography.index(level)]

    def unit_index(self, level: str, geocodes) -> np.ndarray:
        """Positions of ``geocodes`` among the level's units; unknown geocodes are refused."""
        units = self.geocodes(level).astype(str)
        codes = np.atleast_1d(np.asarray(geocodes, dtype=object)).astype(str)
        pos = np.minimum(np.searchsorted(units, codes), max(units.size - 1, 0))
        bad = units[pos] != codes if units.size else np.ones(codes.size, dtype=bool)
        if np.any(bad):
            raise InvariantDPError(
                f"`geocodes` holds {format_value(codes[bad][:3].tolist())}, not units of "
                f"level `{level}`."
            )
        return pos.astype(np.int64)

    def unit_keys(self, level: str, keys) -> np.ndarray:
        """Positions of units of ``level`` named by geocode or by tabulation block code.

        Every key is a geocode of the level or, at a level whose geocodes are
        longer than 16 digits (the 2020 release layout's blocks: their block
        group's geocode, then the 16-digit tabulation block code of state,
        county, tract and block), every key is the 16-digit code that ends
        one unit's geocode.  The form is the first key's; a key of the other
        form, of neither, or a code that ends several geocodes is refused,
        naming the first such key.
        """
        keys = np.atleast_1d(np.asarray(keys, dtype=object))
        if keys.size == 0:
            raise InvariantDPError("a crosswalk must name at least one unit.")
        codes = self.geocodes(level).astype(str)
        spine = pd.Index(codes).get_indexer(keys)
        width = len(codes[0]) if codes.size else 0
        if spine[0] >= 0 or width <= _TAB_WIDTH:
            bad = spine < 0
            if np.any(bad):
                mixed = (
                    " (the first key is a geocode, so every key must be one: 16-digit "
                    "tabulation block codes and geocodes cannot be mixed)"
                    if width > _TAB_WIDTH
                    else ""
                )
                raise InvariantDPError(
                    f"crosswalk key {keys[bad][0]!r} is not a geocode of level `{level}`{mixed}."
                )
            return spine.astype(np.int64)
        tails = pd.Series(np.arange(codes.size), index=pd.Series(codes).str[-_TAB_WIDTH:])
        shared = tails.index[tails.index.duplicated()]
        amb = np.isin(keys, shared.to_numpy())
        if np.any(amb):
            key = keys[amb][0]
            which = codes[tails.index == key][:2].tolist()
            raise InvariantDPError(
                f"crosswalk key {key!r} is the tabulation block code of several units of level "
                f"`{level}` ({', '.join(which)}): ambiguous; key the crosswalk by geocode."
            )
        # the unambiguous codes only: a shared one was refused above if a key named it
        lookup = tails[~tails.index.duplicated(keep=False)]
        found = lookup.index.get_indexer(keys)
        tab = np.where(found >= 0, lookup.to_numpy()[np.maximum(found, 0)], -1)
        bad = tab < 0
        if np.any(bad):
            raise InvariantDPError(
                f"crosswalk key {keys[bad][0]!r} is neither a geocode of level `{level}` nor the "
                f"{_TAB_WIDTH}-digit tabulation block code (the last {_TAB_WIDTH} digits of a "
                "geocode) of one of its units."
            )
        return tab.astype(np.int64)

    def queries(self, level: str) -> list:
        """The queries measured at ``level`` (schema order; recoded queries last)."""
        have = {q for (lev, q) in self.measurements if lev == level}
        plain = [q for q in self.schema.queries if q in have]
        return plain + sorted(have - set(plain))

    def answers(self, level: str, query: str):
        """The noisy answers of one (level, query) as a long DataFrame.

        Columns ``geocode``, one per attribute of the query (level labels),
        ``value`` and ``variance`` (the noise variance parameter).
        """
        table = self.measurements.get((level, query))
        if table is None:
            raise InvariantDPError(f"query {query!r} is not measured at level `{level}`.")
        cells = self.schema.cell_frame(query)
        n, c = table.values.shape
        out = cells.iloc[np.tile(np.arange(c), n)].reset_index(drop=True)
        out.insert(0, "geocode", np.repeat(self.geocodes(level)[table.units], c))
        out["value"] = table.values.reshape(-1)
        out["variance"] = np.repeat(table.variance, c)
        return out

    def to_release(self, level: str, query: str, geocodes=None):
        r"""The noisy answers of one (level, query) as a labelled :class:`~invariantdp.Release`.

        Parameters
        ----------
        level : str
            A geographic level.
        query : str
            A query measured at ``level``.
        geocodes : sequence of str, optional
            The units (default: every unit measured); each must be measured.

        Returns
        -------
        Release
            Value: the noisy answers, unit by unit in geocode order, each
            unit's cells in C order; labels ``geocode`` and the query's
            attributes.  Noise: the measurements' (``discrete_gaussian`` with
            ``sigma`` the square root of the variance parameter, or
            ``gaussian``); ``metadata["variance"]`` is the noise's actual
            variance per cell.  Invariants: the equality facts that bear on
            the cells (see :meth:`GLSEstimate.to_release
            <invariantdp.census.GLSEstimate.to_release>`), about the
            confidential counts: the noise does not keep them.  Guarantee:
            the query's own zCDP ``rho`` at this level, with the sensitivity
            ``sqrt 2`` of bounded neighbours recorded (so it is checked).

        Raises
        ------
        InvariantDPError
            A query not measured at ``level``, an unknown or unmeasured
            geocode, or units whose noise variances differ (a release has
            one noise law: select units that share one).

        References
        ----------
        Canonne, Kamath & Steinke (2020), Theorem 4 (the discrete Gaussian's
        zCDP).

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp.census import Geography, Schema, measure
        >>> counts = pd.DataFrame({"geocode": ["11", "12"], "sex": ["F", "M"],
        ...                        "age": [0, 1], "count": [5, 3]})
        >>> nm = measure(counts, Schema({"sex": ["F", "M"], "age": 2}),
        ...              Geography({"A": 1, "B": 2}), {"B": {"sex": 0.5}}, secure=False, rng=1,
        ...              units=["11", "12"])
        >>> r = nm.to_release("B", "sex")
        >>> r.noise.family, dict(r.noise.params), r.guarantee.describe()
        ('discrete_gaussian', {'sigma': 1.4142135623730951}, 'zCDP (rho=0.5)')
        >>> r.to_series().index.names
        FrozenList(['geocode', 'sex'])
        >>> r.check_guarantee()
        True
        """

        li = self.geography.index(level)
        attrs = self.schema.query(query)
        query = self.schema.query_name(attrs)  # "sex" of a one-attribute schema is "detailed"
        table = self.measurements.get((level, query))
        if table is None:
            raise InvariantDPError(f"query {query!r} is not measured at level `{level}`.")
        units = slice_units(self, level, geocodes)
        self.refuse_recoded("to_release")
        order = np.argsort(table.units)
        found = np.searchsorted(table.units[order], units)
        found = np.minimum(found, max(table.units.size - 1, 0))
        measured = table.units.size > 0 and np.array_equal(table.units[order][found], units)
        if not measured:
            missing = np.setdiff1d(units, table.units)
            raise InvariantDPError(
                f"`geocodes`: {format_value(self.units[li][missing][:3].tolist())} are not "
                f"measured by {query!r} at level `{level}`."
            )
        rows = order[found]
        sigma2 = np.unique(table.variance[rows])
        if sigma2.size != 1:
            raise InvariantDPError(
                f"`geocodes`: the units' measurements of {query!r} at level `{level}` have "
                f"{sigma2.size} different noise variances ({format_value(sigma2[:4].tolist())}); "
                "a release has one noise law: select units that share one."
            )
        values = table.values[rows].reshape(-1)
        index = slice_index(self.schema, query, self.units[li][units])
        problem = self.to_problem()
        alg = EigenAlgebra(self.schema.shape)
        zeros = [constraints_of(alg, problem, lev).zero_cells for lev in range(len(self.levels))]
        facts = slice_invariants(
            problem, zeros, self.schema, (self.levels, self.units), li, attrs, units
        )
        sigma = float(np.sqrt(sigma2[0]))
        meta = {
            "source": "census noisy measurements",
            "level": level,
            "query": query,
            "variance": float(actual_variances(self.noise_family, sigma2)[0]),
            "sensitivity": BOUNDED_SENSITIVITY,
        }
        if self.randomness in ("secure", "simulation"):
            meta["randomness"] = self.randomness
        return Release.from_published(
            pd.Series(values, index=index, name="value"),
            noise=self.noise,
            sigma=sigma,
            invariants=facts.invariants(),
            guarantee=census_guarantee(
                self.privacy.rho_by_query[(level, query)],
                f"person records of the units of level {level} (this query's measurements "
                "alone; the invariants are published exactly and not covered)",
                sensitivity=BOUNDED_SENSITIVITY,
                timing_tv=self.timing_tv,
            ),
            mechanism="census_noisy_measurement",
            metadata=meta,
        )

    @cached_property
    def privacy(self) -> CensusPrivacy:
        """The zCDP guarantee (bounded neighbours, sensitivity sqrt 2): see :mod:`._privacy`."""
        return CensusPrivacy.from_variances(
            {key: t.variance for key, t in self.measurements.items()}, noise=self.noise
        )

    def inequality_report(self):
        """The inequality constraints kept but not used by the linear estimator (a DataFrame)."""

        rows = [
            (lev, q, sign, t.units.size, int(np.sum(t.values != 0)))
            for (lev, q, sign), t in self.inequalities.items()
        ]
        return pd.DataFrame(rows, columns=["level", "query", "sign", "units", "nonzero_bounds"])

    def summary(self) -> Summary:
        rows = [
            (
                f"{lev}",
                f"{len(units)} units; measured: {', '.join(self.queries(lev)) or '-'}",
            )
            for lev, units in zip(self.levels, self.units, strict=True)
        ]
        rows += [
            ("invariants", ", ".join(f"{lev}: {q}" for lev, q in self.invariants) or "none"),
            ("structural zeros (units)", sum(t.units.size for t in self.zeros.values())),
            ("other equality constraints", len(self.linear)),
            ("inequalities kept, not used", sum(t.units.size for t in self.inequalities.values())),
            ("noise", self.noise),
            ("randomness", self.randomness),
            ("zCDP rho (bounded neighbours)", self.privacy.rho),
        ]
        notes = [f"schema {self.schema!r}", f"geography {self.geography!r}"]
        if self.randomness == "simulation":
            notes.append("SIMULATION: the noise came from numpy, not fit for publication.")
        return format_table("Noisy measurements", rows, notes)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{lev}={len(u)}" for lev, u in zip(self.levels, self.units, strict=True))
        return f"NoisyMeasurements({sizes}; {len(self.measurements)} queries, {self.randomness})"

    # -- changes -------------------------------------------------------------

    def with_constraint(self, level: str, geocode: str, matrix, values) -> NoisyMeasurements:
        """A copy with the equality ``matrix @ h = values`` on one unit's detailed histogram."""
        self.unit_index(level, [geocode])
        mat = np.atleast_2d(np.asarray(matrix, dtype=float))
        vals = np.asarray(values, dtype=float).reshape(-1)
        if mat.shape != (vals.size, self.schema.k) or not np.all(np.isfinite(mat)):
            raise InvariantDPError(
                f"`matrix` must be finite with {self.schema.k} columns (the detailed cells) and "
                f"one row per value; got shape {mat.shape} and {vals.size} values."
            )
        if not np.all(np.isfinite(vals)):
            raise InvariantDPError("`values` must be finite.")

        return replace(self, linear=(*self.linear, (level, str(geocode), mat, vals)))

    # -- the estimator's input -------------------------------------------------

    def recoded_queries(self) -> list:
        """``(level, query, kind)`` of the measurements and constraints whose query uses a
        recode (a grouping of an attribute's levels)."""
        out = []
        for kind, d in (
            ("noisy answers", self.measurements),
            ("invariant", self.invariants),
            ("structural zeros", self.zeros),
        ):
            out += [(lev, q, kind) for (lev, q) in d if self.schema.is_recoded(q)]
        return out

    def refuse_recoded(self, operation: str, *, allow=()) -> None:
        """Raise, naming the query, if a measurement or constraint uses a recode.

        The estimators take marginal queries of the detailed histogram; a
        recoded query is refused rather than read as something it is not.
        ``allow`` names the kinds (``"structural zeros"``, ...) the operation
        takes recoded.
        """
        recoded = [r for r in self.recoded_queries() if r[2] not in allow]
        if recoded:
            lev, q, kind = recoded[0]
            raise InvariantDPError(
                f"{operation} does not support recoded {_kinds_except(allow)}: the {kind} of "
                f"{q!r} at level {lev} group the levels of an attribute"
                + (f" (and {len(recoded) - 1} more recoded tables)" if len(recoded) > 1 else "")
                + f". Drop them with without_queries({q!r}) to use the other measurements."
            )

    def without_queries(self, queries) -> NoisyMeasurements:
        """A copy without the measurements and constraints of the named queries (all levels)."""

        queries = [queries] if isinstance(queries, str) else list(queries)
        names = {self.schema.canonical(q) for q in queries}
        return replace(
            self,
            measurements={k: t for k, t in self.measurements.items() if k[1] not in names},
            invariants={k: t for k, t in self.invariants.items() if k[1] not in names},
            zeros={k: t for k, t in self.zeros.items() if k[1] not in names},
            inequalities={k: t for k, t in self.inequalities.items() if k[1] not in names},
        )

    def to_problem(self) -> Problem:
        """The GLS problem (:class:`invariantdp._gls.Problem`), with the actual noise variances.

        A recoded query is passed with its group matrices (``recodes``).
        """
        lev_of = self.geography.index
        spec = self.schema.query_spec
        meas = [
            Measurement(
                lev_of(lev),
                spec(q)[0],
                t.units,
                t.values,
                actual_variances(self.noise_family, t.variance),
                recodes=spec(q)[1],
            )
            for (lev, q), t in self.measurements.items()
        ]
        eqs = [
            Equality(lev_of(lev), spec(q)[0], t.units, t.values, recodes=spec(q)[1])
            for (lev, q), t in self.invariants.items()
        ]
        zeros = [
            Zeros(lev_of(lev), spec(q)[0], t.units, t.values, recodes=spec(q)[1])
            for (lev, q), t in self.zeros.items()
        ]
        lin = [
            Linear(lev_of(lev), int(self.unit_index(lev, [g])[0]), mat, vals)
            for lev, g, mat, vals in self.linear
        ]
        return Problem(self.schema.shape, self.parents, meas, eqs, zeros, lin)

    # -- constructors and files ------------------------------------------------

    @classmethod
    def from_frames(cls, dpquery, constraints, schema, geography=None) -> NoisyMeasurements:
        """From DataFrames in the noisy measurement file layout (see :func:`read_nmf`).

        ``dpquery`` has columns ``geocode``, ``query_name`` (query + ``"_dpq"``),
        ``value`` (a list per row) and ``variance``; ``constraints`` (or None)
        ``geocode``, ``query_name`` (query + ``"_con"``), ``sign`` and ``value``.
        The level of a row is the one whose geocode width it has.
        """
        geography = Geography() if geography is None else geography
        chunks = [Chunk.from_frame("dpquery", dpquery, "DPQuery")]
        if constraints is not None:
            chunks.append(Chunk.from_frame("constraints", constraints, "Constraint"))
        return cls(**assemble(chunks, schema, geography))

    def to_nmf(self, path) -> None:
        """Write the measurements in the Bureau's 2020 noisy measurement file layout.

        The layout, and what is written where, is the user guide's page "The
        2020 noisy measurement files: layout reference"
        (``docs/guide/nmf_layout.md``); :func:`read_nmf` reads it back.
        """
        write_nmf(self, path)


def _kinds_except(allow) -> str:
    """The recoded tables an operation refuses, in words."""
    words = {
        "noisy answers": "noisy answers",
        "invariant": "invariants",
        "structural zeros": "structural zeros",
    }
    kinds = [w for k, w in words.items() if k not in allow]
    return "queries" if len(kinds) == len(words) else " or ".join(kinds)
