"""The Bureau's P.L. 94-171 person constraints, derived from facility counts.

The 2020 Census held the number of housing units and of group-quarters
facilities of each type in every block invariant, and constrained the person
histogram with them (``Constraints_PL94.py``, without a total-population
invariant at the block):

* ``hhgq_total_lb`` (``>=``): at least one person per facility of each GQ
  type; households 0 (a housing unit may be vacant);
* ``hhgq_total_ub`` (``<=``): at most 99,999 persons per housing unit or
  facility; 0 where a block has none of a type, which makes that whole hhgq
  slice a structural zero;
* ``nurse_nva_0`` (``=`` 0): no one under 18 in nursing facilities.

Block bounds are summed up the spine, as the invariants they come from are.
Also answers of recoded queries (``hhinstlevels``) for :func:`measure`.

References
----------
``uscensusbureau/DAS_2020_Redistricting_Production_Code``:
``source/programs/constraints/Constraints_PL94.py``,
``source/programs/constraints/querybase_constraints.py``
(``calculateRightHandSideHhgqTotal``), ``source/configs/production/pl94/person_default.ini``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._gls import EigenAlgebra, segment_starts, segment_sum
from .._validation import format_value
from ..exceptions import InvariantDPError
from ._geography import geocode_prefix
from ._table import QueryTable

__all__ = ["MAX_PER_FACILITY", "facility_constraints", "query_answers"]

#: the Bureau's cap on persons per housing unit or facility (``hhgq_cap``)
MAX_PER_FACILITY = 99999
_NURSE = "gqNursingTotal * nonvoting"


def query_answers(alg, hist: np.ndarray, schema, query: str) -> np.ndarray:
    """``(units, cells)`` answers of a query, recoded attributes grouped by their matrices."""
    attrs, recodes = schema.query_spec(query)
    out = alg.marginal(hist, attrs)
    if not recodes:
        return out
    arr = out.reshape(out.shape[0], *[schema.shape[a] for a in attrs])
    for axis, a in enumerate(attrs):
        if a in recodes:  # group the levels: (G, n) applied along the attribute's axis
            arr = np.moveaxis(np.tensordot(arr, recodes[a].T, axes=([axis + 1], [0])), -1, axis + 1)
    return arr.reshape(out.shape[0], -1)


def _facility_table(facilities, schema, geography, units) -> np.ndarray:
    """``(blocks, n_hhgq)`` counts of housing units (level 0) and facilities per block."""
    if not isinstance(facilities, pd.DataFrame):
        raise TypeError(
            f"`facilities` must be a pandas DataFrame, got {type(facilities).__name__}."
        )
    absent = [c for c in ("geocode", "hhgq", "count") if c not in facilities.columns]
    if absent:
        raise InvariantDPError(
            f"`facilities` lacks the column(s) {', '.join(absent)} (needed: geocode of the "
            "finest level, hhgq (0 = housing units, then the group-quarters types), count)."
        )
    finest = geography.names[-1]
    codes = facilities["geocode"].to_numpy(dtype=object)
    bad = geography.check_geocodes(codes, finest)
    if bad.size:
        raise InvariantDPError(
            f"`facilities` row {int(bad[0])}, column `geocode`: must be a string of "
            f"{geography.widths[-1]} ASCII digits (a unit of level {finest})."
        )
    n = facilities["count"].to_numpy()
    if n.dtype.kind not in "iu" or np.any(n < 0):
        raise InvariantDPError(
            "`facilities` column `count` must hold non-negative integers (an integer dtype)."
        )
    level = schema.level_codes("hhgq", facilities["hhgq"].to_numpy())
    where = pd.Index(units).get_indexer(codes.astype(str))
    if np.any(where < 0):
        row = int(np.flatnonzero(where < 0)[0])
        raise InvariantDPError(
            f"`facilities` row {row}: geocode {format_value(codes[row])} is not a unit of the "
            f"level {finest}."
        )
    table = np.zeros((len(units), schema.shape[schema.names.index("hhgq")]), dtype=np.int64)
    np.add.at(table, (where, level), n.astype(np.int64))
    return table


def facility_constraints(facilities, schema, geography, units: list, hists: list) -> tuple:
    """``(zeros, inequalities)`` of the Bureau's constraints at every level below the top.

    ``units[l]`` and ``hists[l]`` are the sorted geocodes and detailed
    histograms of level ``l``.  The confidential counts must satisfy the
    constraints; a violation is refused without naming any unit or count.
    """
    for name in ("hhgq",):
        if name not in schema.names:
            raise InvariantDPError(
                f"`facilities` needs a schema with the attribute {name!r} (the P.L. 94-171 "
                "schema, census.PL94)."
            )
    try:
        schema.query_spec(_NURSE)
    except InvariantDPError:
        raise InvariantDPError(
            "`facilities` needs the recodes gqNursingTotal and nonvoting of the schema "
            "(census.PL94 has them)."
        ) from None
    h = schema.names.index("hhgq")
    table = _facility_table(facilities, schema, geography, units[-1])
    per_level = [table]
    for lev in range(len(geography) - 2, -1, -1):
        prefix = geocode_prefix(units[lev + 1], geography.widths[lev])
        _, parents = np.unique(prefix, return_inverse=True)
        per_level.insert(0, segment_sum(per_level[0], segment_starts(parents, len(units[lev]))))
    alg = EigenAlgebra(schema.shape)
    zeros, ineq = {}, {}
    for li in range(1, len(geography)):
        level = geography.names[li]
        fac = per_level[li]
        persons = alg.marginal(hists[li], (h,))
        nurse = query_answers(alg, hists[li], schema, _NURSE)
        lower = fac.copy()
        lower[:, 0] = 0  # a housing unit may be vacant
        upper = MAX_PER_FACILITY * fac
        if np.any(persons > upper) or np.any(persons < lower) or np.any(nurse != 0):
            raise InvariantDPError(
                "`counts` do not satisfy the constraints that `facilities` imply (persons only "
                "in housing units and facilities that exist, at least one per facility, at "
                "most 99,999 per facility, no one under 18 in nursing facilities): the "
                "Bureau's constraints would be false."
            )
        idx = np.arange(fac.shape[0])
        zero = upper == 0
        some = zero.any(axis=1)
        if some.any():
            zeros[(level, "hhgq")] = QueryTable(idx[some], zero[some])
        bounded = (upper > 0).any(axis=1)
        if bounded.any():
            ineq[(level, "hhgq", "<=")] = QueryTable(idx[bounded], upper[bounded].astype(float))
        low = (lower > 0).any(axis=1)
        if low.any():
            ineq[(level, "hhgq", ">=")] = QueryTable(idx[low], lower[low].astype(float))
        zeros[(level, _NURSE)] = QueryTable(idx, np.ones((idx.size, nurse.shape[1]), dtype=bool))
    return zeros, ineq
