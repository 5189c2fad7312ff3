r"""The curator's side: noisy measurements of confidential counts, as the Bureau makes them.

:func:`measure` aggregates counts up a geographic hierarchy, answers the
workload's marginal queries at every level, and adds discrete Gaussian noise
with :math:`\sigma^2 = 1/\rho` to each cell (a marginal query has
:math:`\ell_2` sensitivity :math:`\sqrt 2` under bounded neighbours, so the
query is :math:`\rho`-zCDP); the invariants are published exactly.  The units
measured are public input (``units=``), never read from the data: a set of
units taken from the records' geocodes would change when the only person of a
block moves, and remove that block from every table.

References
----------
Abowd et al. (2022), "The 2020 Census disclosure avoidance system TopDown
algorithm" (the noisy measurements); Canonne, Kamath & Steinke (2020),
Theorem 4.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import pandas as pd

from .._gls import EigenAlgebra, segment_starts, segment_sum
from .._validation import NOT_SHOWN, check_positive, format_value, read_confidential
from ..exceptions import InvariantDPError
from ..families import DISCRETE_GAUSSIAN, discrete_gaussian_timing_tv, exact_gaussian_variance
from ..mechanisms import INTEGER_LIMIT
from ..secure import SecureGenerator, random_source
from ._facility_constraints import facility_constraints, query_answers
from ._geography import Geography
from ._measurements import NoisyMeasurements
from ._privacy import SENSITIVITY_SQUARED
from ._schema import Schema
from ._table import QueryTable

__all__ = ["histograms", "measure"]


def _check_workload(workload, schema: Schema, geography: Geography) -> dict:
    if not hasattr(workload, "items") or not workload:
        raise InvariantDPError(
            "`workload` must map geographic levels to {query: rho} (e.g. "
            "{'County': {'total': 0.5}}), and name at least one."
        )
    out = {}
    for level, queries in workload.items():
        geography.index(level)
        if not hasattr(queries, "items") or not queries:
            raise InvariantDPError(
                f"`workload[{level!r}]` ({format_value(queries)}) must map queries to rho."
            )
        for query, rho in queries.items():
            name = f"workload[{level!r}][{query!r}]"
            if isinstance(rho, Fraction):  # exact, as the Bureau's shares: kept exact
                if rho <= 0:
                    raise InvariantDPError(f"`{name}` ({rho}) must be > 0.")
            else:
                rho = check_positive(name, rho)
            if rho < _MIN_RHO:
                raise InvariantDPError(
                    f"`{name}` ({rho!r}) must be at least 2**-92: the noise's sigma = "
                    "1/sqrt(rho) at most 2**46, so that a count plus its noise is an exact double."
                )
            out[(level, schema.canonical(query))] = rho
    return out


def _check_invariants(invariants, schema: Schema, geography: Geography) -> list:
    if invariants is None:
        return []
    if not hasattr(invariants, "items"):
        raise InvariantDPError(
            f"`invariants` ({format_value(invariants)}) must map levels to lists of queries "
            "published exactly (e.g. {'State': ['total']})."
        )
    out = []
    for level, queries in invariants.items():
        geography.index(level)
        for q in [queries] if isinstance(queries, str) else list(queries):
            out.append((level, schema.canonical(q)))
    return out


#: every answer (noisy or exact) is clamped to this count: answer + noise stays an exact double
COUNT_LIMIT = INTEGER_LIMIT
#: the smallest rho of a query: sigma = 1/sqrt(rho) at most 2**46, as for the integer mechanisms
_MIN_RHO = 2.0**-92


def declared_units(units, geography: Geography) -> list:
    """Per level the sorted geocodes of the declared units (public input, checked).

    ``units`` lists the finest level's geocodes (the levels above are their
    parents: geocode prefixes), or maps levels to geocodes; a level it does
    not name is derived from the level below, and it must name the finest.
    Messages show the geocodes: they are public.
    """
    if units is None:
        raise TypeError(
            "`units` must be given: the geocodes of the finest level's units (or {level: "
            "geocodes}), public input such as the Bureau's list of blocks. The set of units "
            "is never read from the data: which units hold records is confidential."
        )
    # a mapping names levels; anything else (a list, an array, a pandas Series) the finest's units
    given = dict(units) if isinstance(units, Mapping) else {geography.names[-1]: units}
    for level in given:
        geography.index(level)
    finest = geography.names[-1]
    if finest not in given:
        raise InvariantDPError(
            f"`units` must list the units of the finest level `{finest}`, got levels "
            f"{', '.join(map(str, given))}."
        )
    out = [None] * len(geography)
    for li in range(len(geography) - 1, -1, -1):
        level = geography.names[li]
        if level not in given:  # the parents of the level below: prefixes of its width
            below = out[li + 1]
            width = geography.widths[li]
            out[li] = np.unique(below.astype(f"U{width}")) if width else np.array([""])
            continue
        raw = given[level]
        try:
            ndim = np.ndim(raw)
        except (TypeError, ValueError):
            ndim = -1
        if isinstance(raw, str) or ndim != 1:
            raise InvariantDPError(
                f"`units[{level!r}]` must be a one-dimensional list of geocodes (strings), got "
                f"{format_value(raw)}."
            )
        codes = np.asarray(list(raw), dtype=object)
        if codes.size == 0:
            raise InvariantDPError(f"`units[{level!r}]` must list at least one unit.")
        bad = geography.check_geocodes(codes, level)
        if bad.size:
            raise InvariantDPError(
                f"`units[{level!r}]` holds {format_value(codes[bad[0]])}, not a string of "
                f"{geography.width(level)} digits (a geocode of level `{level}`)."
            )
        text = codes.astype(str)
        sorted_codes, counts = np.unique(text, return_counts=True)
        if np.any(counts > 1):
            raise InvariantDPError(
                f"`units[{level!r}]` lists {str(sorted_codes[counts > 1][0])!r} more than once."
            )
        out[li] = sorted_codes
    for li in range(1, len(out)):  # every unit's parent (its geocode's prefix) is a unit above
        width = geography.widths[li - 1]
        prefix = out[li].astype(f"U{width}") if width else np.full(out[li].size, "")
        orphan = ~np.isin(prefix, out[li - 1])
        if orphan.any():
            first = int(np.flatnonzero(orphan)[0])
            raise InvariantDPError(
                f"`units`: unit {str(out[li][first])!r} of level `{geography.names[li]}` has no "
                f"parent: {str(prefix[first])!r} is not a unit of level "
                f"`{geography.names[li - 1]}`."
            )
    return out


def _rows_outside(codes: np.ndarray, finest: np.ndarray) -> np.ndarray:
    """Whether each record's geocode is not a declared unit of the finest level.

    The same vectorised operations for every record: the positions come from
    a binary search on the fixed-width strings, and the exact comparison of
    the Python objects refuses what the conversion would have made equal (a
    number, a string with trailing NULs, a missing value).
    """
    if codes.size == 0:
        return np.zeros(0, dtype=bool)
    width = finest.dtype.itemsize // 4
    text = codes.astype(f"U{width}")
    pos = np.minimum(np.searchsorted(finest, text), finest.size - 1)
    return ~np.asarray(finest.astype(object)[pos] == codes, dtype=bool)


def histograms(counts, schema: Schema, geography: Geography, units, secure: bool = True):
    """Units and detailed histograms of every level from counts at the finest level.

    ``counts`` is a long DataFrame (``geocode`` of the finest level, one
    column per attribute, ``count``) or microdata (the same without
    ``count``: one row per person); ``units`` the declared units
    (:func:`declared_units`).  Returns ``(units, hists)``: per level the
    sorted geocodes and an array ``(units, *schema.shape)`` of floats.  A
    record outside the declared units, of a level outside the schema, or a
    count that is not a non-negative integer refuses the call as a whole;
    messages name columns (and, for a simulation, the first row refused),
    never a value.  Counts are clamped to :data:`COUNT_LIMIT` per row, so that
    every sum of them is exact or at least ``2**53`` (then clamped again).
    """

    if not isinstance(counts, pd.DataFrame):
        raise TypeError(f"`counts` must be a pandas DataFrame, got {type(counts).__name__}.")
    needed = ["geocode", *schema.names]
    absent = [c for c in needed if c not in counts.columns]
    if absent:
        raise InvariantDPError(
            f"`counts` lacks the column(s) {', '.join(absent)} (needed: geocode, one column "
            "per attribute, and count unless each row is one person)."
        )
    finest = geography.names[-1]
    all_units = declared_units(units, geography)
    codes = counts["geocode"].to_numpy(dtype=object, na_value=None)
    outside = _rows_outside(codes, all_units[-1])
    if outside.any():
        where = "" if secure else f" row {int(np.flatnonzero(outside)[0])},"
        raise InvariantDPError(
            f"`counts`{where} column `geocode` must hold geocodes (strings) of the declared "
            f"`units` of level `{finest}`: a record outside them is outside the declared "
            f"domain, and the whole call is refused; {NOT_SHOWN}."
        )
    if "count" in counts.columns and len(counts):
        rule = (
            "`counts` column `count` must hold non-negative integers (the declared domain: the "
            f"whole call is refused); {NOT_SHOWN}."
        )
        try:
            n = read_confidential("count", counts["count"])
        except (TypeError, InvariantDPError):
            raise InvariantDPError(rule) from None
        if not (np.all(n >= 0) and np.all(n == np.round(n))):
            raise InvariantDPError(rule)
        weight = np.minimum(n, float(COUNT_LIMIT))
    else:
        weight = np.ones(len(counts))
    cells = np.zeros(len(counts), dtype=np.int64)
    for a, name in enumerate(schema.names):
        try:
            idx = schema.level_codes(name, counts[name].to_numpy())
        except InvariantDPError:
            raise InvariantDPError(
                f"`counts` column `{name}` must hold levels of the schema "
                f"({'its labels' if schema.has_labels(name) else f'0..{schema.shape[a] - 1}'})."
            ) from None
        cells = cells * schema.shape[a] + idx
    unit_idx = np.searchsorted(all_units[-1], codes.astype(all_units[-1].dtype))
    n_units = all_units[-1].size
    flat = np.bincount(unit_idx * schema.k + cells, weights=weight, minlength=n_units * schema.k)
    hists = [flat.reshape(n_units, *schema.shape)]
    parents = geography.tree(all_units)
    for lev in range(len(geography) - 2, -1, -1):
        starts = segment_starts(parents[lev + 1], all_units[lev].size)
        hists.insert(0, segment_sum(hists[0], starts))
    return all_units, hists


def measure(
    counts,
    schema,
    geography,
    workload,
    invariants=None,
    secure=None,
    rng=None,
    *,
    units=None,
    facilities=None,
) -> NoisyMeasurements:
    r"""Noisy measurements of confidential counts: discrete Gaussian noise on marginal queries.

    Parameters
    ----------
    counts : pandas.DataFrame
        Finest-level counts: ``geocode``, one column per attribute of
        ``schema`` (level labels or indices) and ``count``; or microdata (no
        ``count`` column: one row per person).  A unit without rows has
        count 0.
    schema : Schema
    geography : Geography
        The levels measured; ``counts`` holds units of its finest level.
    workload : dict
        ``{level: {query: rho}}``: each query of a level gets discrete
        Gaussian noise with :math:`\sigma^2 = 1/\rho` in every cell, which
        makes it :math:`\rho`-zCDP under bounded neighbours (sensitivity
        :math:`\sqrt 2`); ``rho`` at least ``2**-92`` (``sigma <= 2**46``).
        Queries may use the schema's recodes; a ``fractions.Fraction`` rho
        is kept exact.  The 2020 production strategy is
        :data:`~invariantdp.census.PL94_2020_STRATEGY` (``.persons`` with
        :data:`~invariantdp.census.PL94`, ``.units`` with
        :data:`~invariantdp.census.PL94_UNITS`).
    invariants : dict, optional
        ``{level: [query, ...]}`` published exactly (e.g. ``{"State": ["total"]}``).
    secure : None or bool, optional
        The rule of the mechanisms (:mod:`invariantdp.secure`).  None
        (default): exact noise from :mod:`secrets` (CKS Algorithm 3), for
        publication, unless ``rng`` is a seed or a numpy generator, which
        asks for a simulation.  True: the exact noise (``rng`` must then be
        None or a :class:`~invariantdp.secure.SecureGenerator`).  False: a
        numpy simulation from ``rng``, recorded as such.
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator, optional
        The simulation's randomness: passing a seed or a generator makes
        the measurements a simulation (``randomness`` ``"simulation"``).
    units : array_like of str or dict, keyword-only, required
        The units measured, public input (e.g. the Bureau's list of
        blocks): the geocodes of the finest level's units, the levels above
        being their parents (geocode prefixes); or ``{level: geocodes}``
        (the finest level required; a level not named is derived from the
        one below).  Every declared unit is measured, with or without
        records; the set is never read from the data, which would disclose
        which units hold records.  A record outside the declared units is
        outside the declared domain: the call is refused before any noise
        is drawn, with a message that shows no value.
    facilities : pandas.DataFrame, keyword-only, optional
        Invariant counts of housing units and group-quarters facilities per
        finest-level unit: ``geocode``, ``hhgq`` (level 0 = housing units,
        then the GQ types) and ``count``.  Adds the Bureau's constraints at
        every level below the top: ``hhgq_total_lb`` (at least one person
        per facility), ``hhgq_total_ub`` (at most 99,999 per housing unit or
        facility; a type absent from a unit is a structural zero) and
        ``nurse_nva_0`` (no one under 18 in nursing facilities); counts that
        violate them are refused (without naming a unit or a count).  Needs a
        schema with ``hhgq`` and the recodes ``gqNursingTotal`` and
        ``nonvoting`` (:data:`~invariantdp.census.PL94`).

    Returns
    -------
    NoisyMeasurements
        With ``randomness`` ``"secure"`` or ``"simulation"``.

    Notes
    -----
    Every answer, noisy or exact, is the query's count clamped to
    ``2**52 - 1`` (a rule that does not depend on the data and never widens
    the sensitivity), so that answer plus noise is an exact double: counts
    that large would otherwise lose their noise to rounding.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Theorem 4 and Algorithm 3; Abowd et
    al. (2022) (the TopDown noisy measurements).

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, Schema, measure
    >>> counts = pd.DataFrame({"geocode": ["11", "12"], "sex": [0, 1], "count": [5, 7]})
    >>> nm = measure(counts, Schema({"sex": 2}), Geography({"A": 1, "B": 2}),
    ...              {"A": {"total": 1.0}, "B": {"detailed": 0.5}},
    ...              invariants={"A": ["total"]}, secure=False, rng=1,
    ...              units=["11", "12", "13"])
    >>> nm.invariants[("A", "total")].values.tolist(), nm.randomness
    ([[12.0]], 'simulation')
    >>> nm.geocodes("B").tolist()  # the declared units, "13" without records
    ['11', '12', '13']
    >>> float(nm.measurements[("B", "detailed")].variance[0])  # sigma^2 = 1/rho
    2.0
    """
    if not isinstance(schema, Schema):
        raise TypeError(f"`schema` must be a Schema, got {type(schema).__name__}.")
    if not isinstance(geography, Geography):
        raise TypeError(f"`geography` must be a Geography, got {type(geography).__name__}.")
    plan = _check_workload(workload, schema, geography)
    exact = _check_invariants(invariants, schema, geography)
    if secure is not None and not isinstance(secure, bool):
        raise TypeError(
            f"`secure` must be None, True or False, got {type(secure).__name__} ({secure!r})."
        )
    if secure is None:  # a seed or a numpy generator asks for a simulation
        secure = rng is None or isinstance(rng, SecureGenerator)
    gen = random_source(rng, secure)
    # the declared units (public) are checked before the data are read
    units, hists = histograms(counts, schema, geography, units, secure=bool(secure))
    zeros, ineq = {}, {}
    if facilities is not None:  # checked against the counts before any noise is drawn
        zeros, ineq = facility_constraints(facilities, schema, geography, units, hists)
    alg = EigenAlgebra(schema.shape)

    def answer(level, query):
        # clamped: 1-Lipschitz per cell, and exact (a float sum of counts at most 2**52 - 1
        # each is exact up to 2**53 and at least 2**53 beyond)
        out = query_answers(alg, hists[geography.index(level)], schema, query)
        return np.minimum(out, float(COUNT_LIMIT))

    measurements, inv, tv = {}, {}, 0.0
    for (level, query), rho in plan.items():
        answers = answer(level, query)
        # sigma^2 = 2 / (2 rho) = 1 / rho, exact: rho as a rational
        sigma2 = exact_gaussian_variance(SENSITIVITY_SQUARED, rho=rho)
        # the Bureau's noise, drawn by its family (exact and secure with a SecureGenerator)
        noise = DISCRETE_GAUSSIAN.measurement_noise(sigma2, answers.size, gen)
        noise = noise.reshape(answers.shape)
        if secure:  # the run time's share of the guarantee (invariantdp.secure)
            tv += discrete_gaussian_timing_tv(sigma2, answers.size)
        n = answers.shape[0]
        measurements[(level, query)] = QueryTable(
            np.arange(n), answers + noise, np.full(n, float(sigma2))
        )
    for level, query in exact:
        answers = answer(level, query)
        inv[(level, query)] = QueryTable(np.arange(answers.shape[0]), answers)
    return NoisyMeasurements(
        schema,
        geography,
        tuple(units),
        measurements,
        inv,
        zeros=zeros,
        inequalities=ineq,
        noise=DISCRETE_GAUSSIAN.name,
        randomness="secure" if secure else "simulation",
        timing_tv=min(tv, 1.0 - 2.0**-53),
    )
