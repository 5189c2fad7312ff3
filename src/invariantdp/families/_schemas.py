"""The JSON schemas of the built-in noise families' params (see :mod:`invariantdp.release`).

A schema is ``schema(params, path, context)``: it validates a document's
params, raising :class:`~invariantdp.exceptions.InvariantDPError` that names
``path``, and returns the cross-checks of the release (``"dim"``,
``"keeps_invariants"``, ``"invariants"``); see
:func:`~invariantdp.families.register_noise_family`.
"""

from __future__ import annotations

import math

from .._validation import (
    doc_error,
    doc_int,
    doc_list,
    doc_numbers,
    doc_object,
    doc_path,
    doc_positive,
    doc_str,
)
from ..distributions import GRID_RANGE
from ..invariants import Invariants

__all__ = ["grid_schema", "knorm_schema", "params_schema", "subspace_schema"]


def params_schema(required: dict, optional: dict | None = None):
    """A schema: exactly the ``required`` keys, some ``optional`` ones, each checked."""
    optional = optional or {}

    def schema(params, path, ctx):
        doc_object(path, params, required=tuple(required), optional=tuple(optional))
        for key, check in {**required, **optional}.items():
            if key in params:
                check(doc_path(path, key), params[key])
        return {}

    return schema


def grid_schema(scale_key: str):
    """A grid family: ``grid`` a power of two within :data:`GRID_RANGE`, ``scale_key`` > 0."""

    def schema(params, path, ctx):
        doc_object(path, params, required=("grid", scale_key))
        gpath = doc_path(path, "grid")
        g = doc_positive(gpath, params["grid"])
        if math.frexp(g)[0] != 0.5 or not GRID_RANGE[0] <= g <= GRID_RANGE[1]:
            raise doc_error(gpath, params["grid"], "must be a power of two in [2**-960, 2**960].")
        doc_positive(doc_path(path, scale_key), params[scale_key])
        return {}

    return schema


def knorm_schema(params, path, ctx):
    doc_object(path, params, required=("norm", "dim", "scale"), optional=("space", "vertices"))
    norm = doc_str(doc_path(path, "norm"), params["norm"], choices=("l1", "l2", "linf", "polytope"))
    dim = doc_int(doc_path(path, "dim"), params["dim"], minimum=1, maximum=ctx.max_cells)
    doc_positive(doc_path(path, "scale"), params["scale"])
    given = [k for k in ("space", "vertices") if k in params]
    if norm != "polytope":
        if given:
            raise doc_error(doc_path(path, given[0]), params[given[0]], f"is not used by {norm!r}.")
        return {"dim": dim}
    if len(given) != 1:
        raise doc_error(
            path, params, "of a polytope norm must give exactly one of space, vertices."
        )
    if "space" in params:
        spath = doc_path(path, "space")
        space = doc_object(spath, params["space"], required=("kind", "r", "c"))
        doc_str(doc_path(spath, "kind"), space["kind"], choices=("contingency",))
        r = doc_int(doc_path(spath, "r"), space["r"], minimum=2)
        c = doc_int(doc_path(spath, "c"), space["c"], minimum=2)
        if r * c != dim:
            raise doc_error(spath, space, f"describes {r} x {c} tables, but `dim` is {dim}.")
        # the contingency K-norm noise lies in the kernel of the margins (semi_dp_knorm)
        return {"dim": dim, "keeps_invariants": True}
    vpath = doc_path(path, "vertices")
    rows = doc_list(vpath, params["vertices"], min_length=1)
    if len(rows) * dim > ctx.max_cells:
        raise doc_error(vpath, rows, f"hold more than {ctx.max_cells} numbers.")
    for i, row in enumerate(rows):
        doc_numbers(doc_path(vpath, i), row, length=dim)
    return {"dim": dim}


def subspace_schema(params, path, ctx):
    doc_object(path, params, required=("scale", "invariants"))
    doc_positive(doc_path(path, "scale"), params["scale"])
    ipath = doc_path(path, "invariants")
    d = params["invariants"]
    if ctx.invariants is not None and isinstance(d, dict) and d == ctx.invariants_doc:
        return {"dim": ctx.invariants.n_cells}  # the release's own C: no second build
    inv = Invariants.from_dict(d, path=ipath, max_cells=ctx.max_cells)
    if inv.values is not None:  # the law needs only C; values here could contradict the release
        raise doc_error(doc_path(ipath, "values"), params["invariants"]["values"], "must be null.")
    return {"invariants": inv, "dim": inv.n_cells}
