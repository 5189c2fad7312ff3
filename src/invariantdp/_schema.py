"""Reading a release document: the JSON schema (version 1) of :mod:`invariantdp.release`.

Every reader validates a field, named by its path (``noise.params.b``),
before anything is allocated from it, and raises
:class:`~invariantdp.exceptions.InvariantDPError`.  The schema itself is
documented in the :mod:`invariantdp.release` module docstring.  This module
also holds the registry of noise families (:func:`register_noise_family`,
re-exported by :mod:`invariantdp.release`): the distribution factory of each
family and, for families of other modules, their schema.

The readers return plain fields (``noise_from_doc`` gives ``(family,
params, info)``, ``guarantee_from_doc`` the guarantee's fields,
``release_fields_from_doc`` a dict), so that the classes of
:mod:`invariantdp.release` build themselves from them without an import
cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._validation import (
    EXACT_INT,
    MAX_JSON_CHARS,
    InvariantDPError,
    doc_error,
    doc_int,
    doc_json_value,
    doc_list,
    doc_number,
    doc_numbers,
    doc_object,
    doc_path,
    doc_shape,
    doc_str,
    format_value,
)
from .invariants import Invariants

#: version of the JSON document written by :meth:`Release.to_json`
FORMAT_VERSION = 1
#: default limit on the size of a JSON document, in characters (bytes)
MAX_JSON_BYTES = MAX_JSON_CHARS
#: default limit on the entries of any array, and the cells of any shape, in a document
MAX_CELLS = 2**24
#: nesting limit of free-form JSON (metadata, guarantee params, tradeoff functions)
MAX_DEPTH = 32
#: cells a document may declare without holding an array of that size
_UNBACKED_CELLS = 2**16
#: relative tolerance of ``C value = c`` for a release that keeps its invariants
_INVARIANT_RTOL = 1e-8


# ---------------------------------------------------------------------------
# the registry of noise families
# ---------------------------------------------------------------------------

_NOISE_FAMILIES: dict[str, Callable[[dict], object]] = {}
_NOISE_SCHEMAS: dict[str, Callable] = {}


def register_noise_family(name: str, factory: Callable[[dict], object], *, schema=None) -> None:
    """Register ``factory(params) -> frozen distribution`` for a noise family.

    Mechanism modules call this so that :meth:`NoiseLaw.distribution` can
    rebuild the law of a release loaded from JSON.  ``schema(params, path,
    context)`` validates the params of a document, raising
    ``InvariantDPError`` that names ``path`` (the helpers ``doc_object``,
    ``doc_number``, ... of :mod:`invariantdp._validation` do); ``context``
    has ``value_size`` and ``max_cells`` (the allocation bound).  It may
    return a dict of cross-checks for the release: ``"dim"`` (the value must
    have that many entries), ``"integer": True`` (an integer-valued value),
    ``"keeps_invariants": True`` (the value must satisfy the invariants).
    The families of this package have built-in schemas (see the module
    docstring); a family without one cannot be read from JSON.
    """
    _NOISE_FAMILIES[name] = factory
    if schema is not None:
        _NOISE_SCHEMAS[name] = schema


def noise_factory(family: str) -> Callable[[dict], object]:
    """The registered ``factory(params)`` of ``family``; refused if none is registered."""
    try:
        return _NOISE_FAMILIES[family]
    except KeyError:
        raise InvariantDPError(
            f"noise family {format_value(family)} has no registered distribution; "
            f"known: {sorted(_NOISE_FAMILIES)}."
        ) from None


# ---------------------------------------------------------------------------
# arrays in JSON: exact (Python floats serialise by repr, which round-trips)
# ---------------------------------------------------------------------------

#: the dtypes a document may use: real integer and float types of at most 8 bytes
_DTYPES = {
    np.dtype(f"{order}{kind}{size}").str
    for order in "<>"
    for kind in "iuf"
    for size in (1, 2, 4, 8)
    if not (kind == "f" and size == 1)
}


def array_to_json(a: np.ndarray) -> dict:
    a = np.asarray(a)
    return {
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "data": a.reshape(-1).tolist(),
    }


def array_from_doc(path: str, d, *, max_cells: int) -> np.ndarray:
    doc_object(path, d, required=("dtype", "shape", "data"))
    dtype_str = doc_str(doc_path(path, "dtype"), d["dtype"])
    if dtype_str not in _DTYPES:
        raise doc_error(
            doc_path(path, "dtype"),
            dtype_str,
            "must be a real integer or float dtype of at most 8 bytes, such as '<f8' or '<i8'.",
        )
    dtype = np.dtype(dtype_str)
    shape = doc_shape(doc_path(path, "shape"), d["shape"], max_cells=max_cells)
    size = math.prod(shape)
    dpath = doc_path(path, "data")
    data = doc_numbers(dpath, d["data"], integer=dtype.kind in "iu", length=size)
    if dtype.kind in "iu" and data:
        info = np.iinfo(dtype)
        if min(data) < info.min or max(data) > info.max:
            raise doc_error(
                dpath, data, f"must hold integers in [{info.min}, {info.max}] ({dtype})."
            )
    with np.errstate(over="ignore"):
        arr = np.array(data, dtype=dtype).reshape(shape)
    if dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise doc_error(dpath, data, f"must hold numbers within the range of {dtype}.")
    return arr


# ---------------------------------------------------------------------------
# schemas of the noise families and guarantees
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """What a family schema may need to know about the document."""

    value_size: int | None
    max_cells: int
    #: the release's invariants and their document (a noise law naming the same C reuses them)
    invariants: Invariants | None = None
    invariants_doc: dict | None = None


def _positive(path, v):
    return doc_number(path, v, low=0.0, low_open=True)


def _open_unit(path, v):
    return doc_number(path, v, low=0.0, high=1.0, low_open=True, high_open=True)


def _half_open_unit(path, v):
    return doc_number(path, v, low=0.0, high=1.0, high_open=True)


def _text(path, v):
    return doc_str(path, v)


def _params_schema(required: dict, optional: dict | None = None):
    """A schema: exactly the ``required`` keys, some ``optional`` ones, each checked."""
    optional = optional or {}

    def schema(params, path, ctx):
        doc_object(path, params, required=tuple(required), optional=tuple(optional))
        for key, check in {**required, **optional}.items():
            if key in params:
                check(doc_path(path, key), params[key])
        return {}

    return schema


def _knorm_schema(params, path, ctx):
    doc_object(path, params, required=("norm", "dim", "scale"), optional=("space", "vertices"))
    norm = doc_str(doc_path(path, "norm"), params["norm"], choices=("l1", "l2", "linf", "polytope"))
    dim = doc_int(doc_path(path, "dim"), params["dim"], minimum=1, maximum=ctx.max_cells)
    _positive(doc_path(path, "scale"), params["scale"])
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
        return {"dim": dim, "keeps_invariants": True}
    vpath = doc_path(path, "vertices")
    rows = doc_list(vpath, params["vertices"], min_length=1)
    if len(rows) * dim > ctx.max_cells:
        raise doc_error(vpath, rows, f"hold more than {ctx.max_cells} numbers.")
    for i, row in enumerate(rows):
        doc_numbers(doc_path(vpath, i), row, length=dim)
    return {"dim": dim}


def _subspace_schema(params, path, ctx):
    doc_object(path, params, required=("scale", "invariants"))
    _positive(doc_path(path, "scale"), params["scale"])
    ipath = doc_path(path, "invariants")
    d = params["invariants"]
    if ctx.invariants is not None and isinstance(d, dict) and d == ctx.invariants_doc:
        inv = ctx.invariants  # the release's own C, already validated: no second build
        return {"dim": inv.n_cells, "keeps_invariants": True}
    inv = Invariants.from_dict(d, path=ipath, max_cells=ctx.max_cells)
    if inv.values is not None:  # the law needs only C; values here could contradict the release
        raise doc_error(doc_path(ipath, "values"), params["invariants"]["values"], "must be null.")
    return {"invariants": inv, "dim": inv.n_cells, "keeps_invariants": True}


def _permutation_schema(params, path, ctx):
    _params_schema({"swap_rate": _open_unit}, {"selection": _text, "permutation": _text})(
        params, path, ctx
    )
    return {"keeps_invariants": True, "integer": True}


_BUILTIN_SCHEMAS = {
    "laplace": _params_schema({"scale": _positive}),
    "gaussian": _params_schema({"scale": _positive}),
    "discrete_laplace": _params_schema({"scale": _positive}),
    "discrete_gaussian": _params_schema({"sigma": _positive}),
    # b = 0 is the epsilon -> inf limit (uniform noise), which the tulap distribution supports
    "tulap": _params_schema({"b": _half_open_unit, "q": _half_open_unit}, {"scale": _positive}),
    "knorm": _knorm_schema,
    "permutation": _permutation_schema,
    **{
        f"{c}_{b}": _subspace_schema
        for c in ("projected", "extended")
        for b in ("gaussian", "laplace")
    },
}
_INTEGER_FAMILIES = frozenset({"discrete_laplace", "discrete_gaussian", "permutation"})


def noise_from_doc(path: str, d, ctx: Context) -> tuple[str, dict, dict]:
    """``(family, params, info)`` of a validated noise document; ``info`` as a schema returns."""
    doc_object(path, d, required=("family", "params"))
    fpath = doc_path(path, "family")
    family = doc_str(fpath, d["family"], max_length=200)
    schema = _NOISE_SCHEMAS.get(family, _BUILTIN_SCHEMAS.get(family))
    if schema is None:
        known = sorted(set(_BUILTIN_SCHEMAS) | set(_NOISE_SCHEMAS))
        raise doc_error(fpath, family, f"is not a known noise family; known: {', '.join(known)}.")
    info = dict(schema(d["params"], doc_path(path, "params"), ctx) or {})
    if family in _INTEGER_FAMILIES:
        info["integer"] = True
    return family, d["params"], info


_DEFINITIONS = {
    "epsilon-DP": ("epsilon",),
    "(epsilon, delta)-DP": ("epsilon", "delta"),
    "GDP": ("mu",),
    "zCDP": ("rho",),
    "f-DP": ("tradeoff",),
}


def _nonnegative(path, v):
    return doc_number(path, v, low=0.0)


_GUARANTEE_PARAMS = {
    "epsilon": _nonnegative,
    "delta": _half_open_unit,
    "mu": _positive,
    "rho": _positive,
    "epsilon_unconstrained": _nonnegative,
    "gamma": _positive,
    "swap_rate": _open_unit,
    "b": lambda path, v: doc_int(path, v, minimum=0),
}


def _tradeoff_from_doc(path: str, d, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise InvariantDPError(f"`{path}` is nested more than {MAX_DEPTH} levels deep.")
    doc_object(path, d, required=("kind",), optional=("epsilon", "delta", "mu", "base", "k"))
    kind = doc_str(doc_path(path, "kind"), d["kind"], choices=("eps_delta", "gaussian", "group"))
    keys = {"eps_delta": ("epsilon", "delta"), "gaussian": ("mu",), "group": ("base", "k")}[kind]
    doc_object(path, d, required=("kind", *keys))
    if kind == "eps_delta":
        _positive(doc_path(path, "epsilon"), d["epsilon"])
        _half_open_unit(doc_path(path, "delta"), d["delta"])
    elif kind == "gaussian":
        _positive(doc_path(path, "mu"), d["mu"])
    else:
        doc_int(doc_path(path, "k"), d["k"], minimum=1)
        _tradeoff_from_doc(doc_path(path, "base"), d["base"], depth + 1)


def guarantee_from_doc(path: str, d) -> tuple:
    """The fields of :class:`~invariantdp.release.PrivacyGuarantee`, validated, in order."""
    doc_object(
        path,
        d,
        required=("definition", "params", "adjacency", "semi_adjacent_parameter", "dataspace"),
    )
    definition = doc_str(doc_path(path, "definition"), d["definition"], choices=tuple(_DEFINITIONS))
    ppath = doc_path(path, "params")
    params = doc_object(ppath, d["params"], required=_DEFINITIONS[definition], extra=True)
    budget = [MAX_CELLS]
    for key, v in params.items():
        kpath = doc_path(ppath, key)
        if key == "tradeoff":
            if definition != "f-DP":
                raise doc_error(kpath, v, "is only meaningful for an f-DP guarantee.")
            _tradeoff_from_doc(kpath, v)
        elif key in _GUARANTEE_PARAMS:
            _GUARANTEE_PARAMS[key](kpath, v)
        elif isinstance(v, dict | list | tuple):
            raise doc_error(kpath, v, "must be a number, string, boolean or null.")
        else:
            doc_json_value(kpath, v, max_depth=0, budget=budget)
    if definition == "epsilon-DP" and params.get("delta", 0.0) != 0:
        raise doc_error(doc_path(ppath, "delta"), params["delta"], "must be 0 for epsilon-DP.")
    adjacency = doc_str(doc_path(path, "adjacency"), d["adjacency"])
    sap = d["semi_adjacent_parameter"]
    if sap is not None:
        sap = doc_int(doc_path(path, "semi_adjacent_parameter"), sap, minimum=1)
    dataspace = doc_str(doc_path(path, "dataspace"), d["dataspace"])
    return definition, params, adjacency, sap, dataspace


# ---------------------------------------------------------------------------
# the whole document
# ---------------------------------------------------------------------------


def release_fields_from_doc(d, max_cells: int) -> dict:
    """The fields of a :class:`~invariantdp.release.Release`, validated (module docstring).

    ``noise`` is ``(family, params)`` and ``guarantee`` the tuple of
    :func:`guarantee_from_doc`: the classes are built by the caller.
    """
    if not isinstance(d, dict):
        raise InvariantDPError(
            f"not an invariantdp release: the document must be a JSON object, got "
            f"{type(d).__name__ if not isinstance(d, list) else 'an array'}."
        )
    if d.get("format") != "invariantdp.Release":
        raise InvariantDPError(
            f"not an invariantdp release: `format` is {format_value(d.get('format'))}."
        )
    version = doc_int("version", d.get("version"), minimum=1)
    if version > FORMAT_VERSION:
        raise InvariantDPError(
            f"release format version {format_value(version)} is newer than this package reads "
            f"({FORMAT_VERSION}); upgrade invariantdp."
        )
    doc_object(
        "",
        d,
        required=(
            "format",
            "version",
            "value",
            "mechanism",
            "noise",
            "guarantee",
            "invariants",
            "query",
            "data_shape",
        ),
        optional=("metadata",),
    )
    value = array_from_doc("value", d["value"], max_cells=max_cells)
    mechanism = doc_str("mechanism", d["mechanism"], max_length=200)
    if not mechanism:
        raise doc_error("mechanism", mechanism, "must not be empty.")

    data_shape = d["data_shape"]
    n_data = None
    if data_shape is not None:
        data_shape = doc_shape("data_shape", data_shape, max_cells=max_cells)
        n_data = math.prod(data_shape)
    query = d["query"]
    if query is not None:
        query = array_from_doc("query", query, max_cells=max_cells)
        if query.dtype.kind != "f" or query.ndim != 2:
            raise doc_error("query", d["query"], "must be a 2-D float array.")
        if n_data is None:
            raise doc_error("data_shape", None, "must be given with a `query`.")
        if query.shape != (value.size, n_data):
            raise doc_error(
                "query.shape",
                list(query.shape),
                f"must be [{value.size}, {n_data}]: one row per value entry, one column per "
                "data cell.",
            )
    # a document may declare only as many cells as it holds data for (or a few)
    backed = max(_UNBACKED_CELLS, value.size, 0 if query is None else query.shape[1])
    if n_data is not None and n_data > backed:
        raise doc_error(
            "data_shape",
            list(data_shape),
            f"declares {n_data} cells but the release holds {value.size} values; a release "
            f"without a query may declare at most {backed} cells.",
        )
    limit = min(max_cells, backed)
    invariants = d["invariants"]
    ctx = Context(value_size=value.size, max_cells=limit)
    if invariants is not None:
        doc = invariants
        invariants = Invariants.from_dict(doc, path="invariants", max_cells=limit)
        ctx = Context(value.size, limit, invariants, {**doc, "values": None})
        if n_data is None:
            raise doc_error("data_shape", None, "must be given with `invariants`.")
        if invariants.n_cells != n_data:
            raise doc_error(
                "invariants.shape",
                list(invariants.shape),
                f"has {invariants.n_cells} cells but `data_shape` {list(data_shape)} has {n_data}.",
            )
    family, params, info = noise_from_doc("noise", d["noise"], ctx)
    guarantee = guarantee_from_doc("guarantee", d["guarantee"])

    metadata = d.get("metadata", {})
    doc_object("metadata", metadata, extra=True)
    doc_json_value("metadata", metadata, max_depth=MAX_DEPTH, budget=[max_cells])
    if "randomness" in metadata:
        doc_str("metadata.randomness", metadata["randomness"], choices=("secure", "simulation"))

    _check_noise_against_value(family, info, value, invariants)
    keeps = info.get("keeps_invariants", False) or metadata.get("congenial") is True
    if keeps and query is None and invariants is not None and invariants.values is not None:
        if value.size != invariants.n_cells:
            raise doc_error(
                "value.shape",
                list(value.shape),
                f"must have {invariants.n_cells} entries: the noise keeps the invariants, so "
                "the value lives on the data cells.",
            )
        try:
            invariants.check(value.reshape(-1), name="value", rtol=_INVARIANT_RTOL)
        except InvariantDPError as exc:
            raise InvariantDPError(
                f"{exc} The noise family {family!r} keeps the invariants exactly, so the "
                "document is inconsistent."
            ) from None
    return {
        "value": value,
        "mechanism": mechanism,
        "noise": (family, params),
        "guarantee": guarantee,
        "invariants": invariants,
        "query": query,
        "data_shape": data_shape,
        "metadata": metadata,
    }


def _check_noise_against_value(family: str, info: dict, value, invariants) -> None:
    """Cross-field checks: dimensions, integer support, the noise's own invariants."""
    dim = info.get("dim")
    if dim is not None and dim != value.size:
        raise doc_error(
            "noise.params",
            family,
            f"describes noise on {dim} coordinates but `value` has {value.size} entries.",
        )
    if info.get("integer") and value.size and not np.all(value == np.round(value)):
        raise doc_error(
            "value.data", value, f"must be integer-valued for the {family!r} noise family."
        )
    if info.get("integer") and value.size and np.max(np.abs(value)) > EXACT_INT:
        raise doc_error("value.data", value, "must be at most 2**53 in magnitude.")
    own = info.get("invariants")
    if own is not None and invariants is not None:
        if not own.same_map(invariants):
            raise doc_error(
                "noise.params.invariants",
                family,
                "must describe the same linear map C as the release's `invariants`.",
            )
