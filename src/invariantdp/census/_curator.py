r"""The curator's side: noisy measurements of confidential counts, as the Bureau makes them.

:func:`measure` aggregates counts up a geographic hierarchy, answers the
workload's marginal queries at every level, and adds discrete Gaussian noise
with :math:`\sigma^2 = 1/\rho` to each cell (a marginal query has
:math:`\ell_2` sensitivity :math:`\sqrt 2` under bounded neighbours, so the
query is :math:`\rho`-zCDP); the invariants are published exactly.

References
----------
Abowd et al. (2022), "The 2020 Census disclosure avoidance system TopDown
algorithm" (the noisy measurements); Canonne, Kamath & Steinke (2020),
Theorem 4; issue 19.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._validation import check_positive, format_value
from ..exceptions import InvariantDPError
from ..secure import random_source
from ._census_schema import Schema
from ._eigen import EigenAlgebra
from ._fast import segment_starts, segment_sum
from ._geography import Geography
from ._measurement_noise import discrete_gaussian_noise, discrete_gaussian_timing_tv
from ._measurements import NoisyMeasurements
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
            schema.query(query)
            out[(level, schema.query_name(schema.query(query)))] = check_positive(
                f"workload[{level!r}][{query!r}]", rho
            )
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
            out.append((level, schema.query_name(schema.query(q))))
    return out


def histograms(counts, schema: Schema, geography: Geography) -> tuple[list, list]:
    """Units and detailed histograms of every level from counts at the finest level.

    ``counts`` is a long DataFrame (``geocode`` of the finest level, one
    column per attribute, ``count``) or microdata (the same without
    ``count``: one row per person).  Returns ``(units, hists)``: per level
    the sorted geocodes and an array ``(units, *schema.shape)``.  Error
    messages name columns and rows, never confidential values.
    """
    import pandas as pd

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
    codes = counts["geocode"].to_numpy(dtype=object)
    bad = geography.check_geocodes(codes, finest)
    if bad.size:
        raise InvariantDPError(
            f"`counts` row {int(bad[0])}, column `geocode`: must be a string of "
            f"{geography.widths[-1]} digits (a unit of level {finest})."
        )
    if "count" in counts.columns:
        n = counts["count"].to_numpy()
        if (
            n.dtype.kind not in "iuf"
            or not np.all(np.isfinite(n))
            or np.any(n < 0)
            or np.any(n != np.round(n))
        ):
            raise InvariantDPError("`counts` column `count` must hold non-negative integers.")
        weight = n.astype(float)
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
    unit_idx, units = pd.factorize(codes, sort=True)  # hashing: faster than sorting strings
    units = np.asarray(units, dtype=str)
    flat = np.bincount(unit_idx * schema.k + cells, weights=weight, minlength=units.size * schema.k)
    hists = [flat.reshape(units.size, *schema.shape)]
    all_units = [units]
    for lev in range(len(geography) - 2, -1, -1):
        prefix = all_units[0].astype(f"U{geography.widths[lev]}")  # truncation: the prefix
        above, parents = np.unique(prefix, return_inverse=True)
        hists.insert(0, segment_sum(hists[0], segment_starts(parents, above.size)))
        all_units.insert(0, above)
    return all_units, hists


def measure(
    counts,
    schema,
    geography,
    workload,
    invariants=None,
    secure=True,
    rng=None,
) -> NoisyMeasurements:
    r"""Noisy measurements of confidential counts: discrete Gaussian noise on marginal queries.

    Parameters
    ----------
    counts : pandas.DataFrame
        Finest-level counts: ``geocode``, one column per attribute of
        ``schema`` (level labels or indices) and ``count``; or microdata (no
        ``count`` column: one row per person).  Units absent from ``counts``
        are not measured: give zero-count rows for empty units.
    schema : Schema
    geography : Geography
        The levels measured; ``counts`` holds units of its finest level.
    workload : dict
        ``{level: {query: rho}}``: each query of a level gets discrete
        Gaussian noise with :math:`\sigma^2 = 1/\rho` in every cell, which
        makes it :math:`\rho`-zCDP under bounded neighbours (sensitivity
        :math:`\sqrt 2`).
    invariants : dict, optional
        ``{level: [query, ...]}`` published exactly (e.g. ``{"State": ["total"]}``).
    secure : bool, optional
        True (default): exact noise from :mod:`secrets` (CKS Algorithm 3),
        for publication; ``rng`` must then be None.  False: a numpy
        simulation from ``rng``, recorded as such.
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        The simulation's randomness (with ``secure=False``).

    Returns
    -------
    NoisyMeasurements
        With ``randomness`` ``"secure"`` or ``"simulation"``.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Theorem 4 and Algorithm 3; Abowd et
    al. (2022) (the TopDown noisy measurements); issue 19.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, Schema, measure
    >>> counts = pd.DataFrame({"geocode": ["11", "12"], "sex": [0, 1], "count": [5, 7]})
    >>> nm = measure(counts, Schema({"sex": 2}), Geography({"A": 1, "B": 2}),
    ...              {"A": {"total": 1.0}, "B": {"detailed": 0.5}},
    ...              invariants={"A": ["total"]}, secure=False, rng=1)
    >>> nm.invariants[("A", "total")].values.tolist(), nm.randomness
    ([[12.0]], 'simulation')
    >>> float(nm.measurements[("B", "detailed")].variance[0])  # sigma^2 = 1/rho
    2.0
    """
    if not isinstance(schema, Schema):
        raise TypeError(f"`schema` must be a Schema, got {type(schema).__name__}.")
    if not isinstance(geography, Geography):
        raise TypeError(f"`geography` must be a Geography, got {type(geography).__name__}.")
    plan = _check_workload(workload, schema, geography)
    exact = _check_invariants(invariants, schema, geography)
    gen = random_source(rng, secure)
    units, hists = histograms(counts, schema, geography)
    alg = EigenAlgebra(schema.shape)
    measurements, inv, tv = {}, {}, 0.0
    for (level, query), rho in plan.items():
        li = geography.index(level)
        answers = alg.marginal(hists[li], schema.query(query))
        sigma2 = 1 / Fraction(rho)  # exact: the float rho as a rational
        noise = discrete_gaussian_noise(sigma2, answers.size, gen).reshape(answers.shape)
        if secure:  # the run time's share of the guarantee (invariantdp.secure)
            tv += discrete_gaussian_timing_tv(sigma2, answers.size)
        n = answers.shape[0]
        measurements[(level, query)] = QueryTable(
            np.arange(n), answers + noise, np.full(n, float(sigma2))
        )
    for level, query in exact:
        li = geography.index(level)
        answers = alg.marginal(hists[li], schema.query(query))
        inv[(level, query)] = QueryTable(np.arange(answers.shape[0]), answers)
    return NoisyMeasurements(
        schema,
        geography,
        tuple(units),
        measurements,
        inv,
        randomness="secure" if secure else "simulation",
        timing_tv=min(tv, 1.0 - 2.0**-53),
    )
