"""Reading a release document: the JSON schema (versions 1-3) of :mod:`invariantdp.release`.

Every reader validates a field, named by its path (``noise.params.b``),
before anything is allocated from it, and raises
:class:`~invariantdp.exceptions.InvariantDPError`.  The schema itself is
documented in the :mod:`invariantdp.release` module docstring.  This module
asks :mod:`invariantdp.families` for the schema of a noise family's params.

The readers return plain fields (``noise_from_doc`` gives ``(family,
params, info)``, ``guarantee_from_doc`` the guarantee's fields,
``release_fields_from_doc`` a dict), so that the classes of
:mod:`invariantdp.release` build themselves from them without an import
cycle.  After the fields, the noise family checks the guarantee against the
noise law (:meth:`NoiseFamily.check_claim
<invariantdp.families.NoiseFamily.check_claim>`).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import (
    EXACT_INT,
    MAX_JSON_CHARS,
    InvariantDPError,
    doc_error,
    doc_int,
    doc_json_value,
    doc_number,
    doc_numbers,
    doc_object,
    doc_open_unit,
    doc_path,
    doc_positive,
    doc_probability,
    doc_shape,
    doc_str,
    format_value,
)
from ..families import (
    STRUCTURED_FAMILIES,
    TULAP,
    SchemaContext,
    calibration_norm,
    noise_families,
    noise_family,
)
from ..invariants import MAX_DOCUMENT_CELLS, Invariants
from ..labels import labels_from_doc
from ..privacy import ADJACENCY_NORMS, QueryAdjacency

#: newest version of the JSON document (2 adds the optional ``labels``, 3 a zCDP guarantee
#: with ``timing_tv``, 4 a structured adjacency; a document is written in the oldest version
#: that holds it)
FORMAT_VERSION = 4
#: default limit on the size of a JSON document, in characters (bytes)
MAX_JSON_BYTES = MAX_JSON_CHARS
#: default limit on the entries of any array, and the cells of any shape, in a document
MAX_CELLS = MAX_DOCUMENT_CELLS
#: nesting limit of free-form JSON (metadata, guarantee params, tradeoff functions)
MAX_DEPTH = 32
#: cells a document may declare without holding an array of that size
_UNBACKED_CELLS = 2**16
#: relative tolerance of ``C value = c`` for a release that keeps its invariants
_INVARIANT_RTOL = 1e-8


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


def noise_from_doc(path: str, d, ctx: SchemaContext) -> tuple[str, dict, dict]:
    """``(family, params, info)`` of a validated noise document; ``info`` as a schema returns."""
    doc_object(path, d, required=("family", "params"))
    fpath = doc_path(path, "family")
    family = doc_str(fpath, d["family"], max_length=200)
    try:
        spec = noise_family(family)  # one lookup; the list of known families only on error
    except InvariantDPError:
        spec = None
    if spec is None or spec.schema is None:
        readable = sorted(n for n, f in noise_families().items() if f.schema is not None)
        raise doc_error(
            fpath, family, f"is not a known noise family; known: {', '.join(readable)}."
        )
    info = spec.validate(d["params"], doc_path(path, "params"), ctx)
    return family, d["params"], info


_DEFINITIONS = {
    "epsilon-DP": ("epsilon",),
    "(epsilon, delta)-DP": ("epsilon", "delta"),
    "GDP": ("mu",),
    "zCDP": ("rho",),
    "f-DP": ("tradeoff",),
    # a published release whose guarantee the analyst cannot state (version 2)
    "unstated": (),
}


def _nonnegative(path, v):
    return doc_number(path, v, low=0.0)


_GUARANTEE_PARAMS = {
    "epsilon": _nonnegative,
    "delta": doc_probability,
    "timing_tv": doc_probability,
    "epsilon_per_coordinate": _nonnegative,
    "delta_per_coordinate": doc_probability,
    "coordinates_changed": lambda path, v: doc_int(path, v, minimum=1),
    "mu": doc_positive,
    "rho": doc_positive,
    "epsilon_unconstrained": _nonnegative,
    "gamma": doc_positive,
    "swap_rate": doc_open_unit,
    "b": lambda path, v: doc_int(path, v, minimum=0),
}


def _group_base_from_doc(path, d, depth):
    doc_int(doc_path(path, "k"), d["k"], minimum=1)
    _tradeoff_from_doc(doc_path(path, "base"), d["base"], depth + 1)


#: the serialisable tradeoff functions: their keys and the check of their values
_TRADEOFF_KINDS = {
    "eps_delta": (
        ("epsilon", "delta"),
        lambda path, d, depth: (
            doc_positive(doc_path(path, "epsilon"), d["epsilon"]),
            doc_probability(doc_path(path, "delta"), d["delta"]),
        ),
    ),
    "gaussian": (("mu",), lambda path, d, depth: doc_positive(doc_path(path, "mu"), d["mu"])),
    "group": (("base", "k"), _group_base_from_doc),
}


def _tradeoff_from_doc(path: str, d, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise InvariantDPError(f"`{path}` is nested more than {MAX_DEPTH} levels deep.")
    doc_object(path, d, required=("kind",), optional=("epsilon", "delta", "mu", "base", "k"))
    kind = doc_str(doc_path(path, "kind"), d["kind"], choices=tuple(_TRADEOFF_KINDS))
    keys, check = _TRADEOFF_KINDS[kind]
    doc_object(path, d, required=("kind", *keys))
    check(path, d, depth)


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
    apath = doc_path(path, "adjacency")
    if isinstance(d["adjacency"], dict):
        adjacency = QueryAdjacency.from_doc(apath, d["adjacency"])
    else:
        adjacency = doc_str(apath, d["adjacency"])
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
        optional=("metadata", "labels"),
    )
    value = array_from_doc("value", d["value"], max_cells=max_cells)
    if "labels" in d and version < 2:
        raise doc_error("labels", "...", "needs a document of version 2 or newer.")
    labels = labels_from_doc("labels", d.get("labels"), value.shape)
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
    meta = d.get("metadata")
    if query is None and isinstance(meta, dict) and meta.get("query") == "identity":
        if data_shape is not None and tuple(data_shape) != value.shape:
            raise doc_error(
                "data_shape",
                list(data_shape),
                f"must be the shape of `value` {list(value.shape)}: the query is the identity "
                "(`metadata.query`), so the value has one entry per data cell.",
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
    ctx = SchemaContext(value_size=value.size, max_cells=limit, max_data=max_cells)
    if invariants is not None:
        doc = invariants
        invariants = Invariants.from_dict(doc, path="invariants", max_cells=limit)
        ctx = SchemaContext(value.size, limit, invariants, {**doc, "values": None}, max_cells)
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
    if isinstance(guarantee[2], QueryAdjacency) and version < 4:
        raise doc_error("guarantee.adjacency", "{...}", "needs a document of version 4.")
    _check_neighbour_fields(metadata, guarantee[1])
    if version < 4:  # words of the previous versions: structured where they render exactly
        adjacency = upgrade_adjacency(guarantee[2], family, params, guarantee[1], metadata)
        guarantee = (guarantee[0], guarantee[1], adjacency, *guarantee[3:])
    _check_neighbours_once(family, guarantee[2], guarantee[1], metadata)
    if guarantee[0] == "unstated" and version < 2:  # version 1 readers do not know it
        raise doc_error("guarantee.definition", "unstated", "needs a document of version 2.")
    if guarantee[0] == "zCDP" and "timing_tv" in guarantee[1] and version < 3:
        # readers of versions 1 and 2 would take the guarantee for plain rho-zCDP
        raise doc_error(
            "guarantee.params.timing_tv",
            guarantee[1]["timing_tv"],
            "needs a document of version 3.",
        )

    doc_json_value("metadata", metadata, max_depth=MAX_DEPTH, budget=[max_cells])
    if "randomness" in metadata:
        doc_str("metadata.randomness", metadata["randomness"], choices=("secure", "simulation"))

    _check_noise_against_value(family, info, value, invariants)
    # the family checks that the guarantee does not claim more than its law gives
    noise_family(family).check_claim(
        params, guarantee[0], guarantee[1], metadata, adjacency_of(guarantee[2])
    )
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
    value_check = noise_family(family).value_check
    if value_check is not None:  # a claim that depends on the released value itself
        value_check(value, metadata, guarantee[1])
    return {
        "value": value,
        "mechanism": mechanism,
        "noise": (family, params),
        "guarantee": guarantee,
        "invariants": invariants,
        "query": query,
        "data_shape": data_shape,
        "metadata": metadata,
        "labels": labels,
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


# ---------------------------------------------------------------------------
# the neighbours: a structured adjacency, its numbers stated once
# ---------------------------------------------------------------------------

#: the adjacency words of version 1-3 documents that named a relation but no number, with
#: the norm their mechanisms calibrated in (the sensitivity was recorded in the metadata)
_OLD_RELATIONS = {
    "semi-adjacent: tables with the released one-way margins at distance a(t) = 3 in the "
    "replace-one-record adjacency (Cho & Awan, Def. 13, Theorem 16)": None,
    "neighbouring data sets (bounded DP); the guarantee is N-subspace DP on the null "
    "space N of the invariants (induced subspace DP, Gao, Gong & Yu Def. 6)": None,
    "invariant-conforming neighbours (Gong & Meng, Theorem 2.1, gamma = 1)": "l1",
    "induced subspace DP: neighbours conforming to the invariants "
    "(Gao, Gong & Yu, Theorem 22 and Corollary 14)": "l2",
    "guarantee of the unconstrained mechanism; conditioning on "
    "inequalities may change it (Gong & Meng, Theorem 2.1)": "l2",
    "data sets whose query values differ by a vector of `sensitivity` * Hull(vertices)": None,
    "bounded (one record changed)": "l2",
}
_OLD_ODDS_RATIO = (
    "semi-adjacent: invariant-conforming tables at distance a(t) in the "
    "replace-one-record adjacency (x11 changes by at most 1)"
)
#: the metadata keys that restate the neighbours (checked against the adjacency)
_NEIGHBOUR_METADATA = ("sensitivity", "norm", "coordinates_changed")


def adjacency_of(adjacency) -> QueryAdjacency | None:
    """The structured neighbours of a guarantee's adjacency field (None for words)."""
    return adjacency if isinstance(adjacency, QueryAdjacency) else None


def _check_neighbour_fields(metadata: dict, gparams: dict) -> None:
    """Type and range of the fields that restate the neighbours, wherever they appear."""
    for where, fields in (("metadata", metadata), ("guarantee.params", gparams)):
        if "sensitivity" in fields:
            doc_number(f"{where}.sensitivity", fields["sensitivity"], low=0.0, low_open=True)
    if "norm" in metadata:
        doc_str("metadata.norm", metadata["norm"], choices=ADJACENCY_NORMS)
    if "coordinates_changed" in metadata:
        doc_int("metadata.coordinates_changed", metadata["coordinates_changed"], minimum=1)


def upgrade_adjacency(adjacency, family: str, noise: dict, gparams: dict, metadata: dict):
    """The structured neighbours of a version 1-3 document, or its words if none render them.

    The words are never read for numbers: a structure is built from the
    recorded norm and sensitivity and kept only if it renders to exactly the
    words the previous version wrote (or the words name one of its fixed
    relations, whose numbers it recorded in the metadata).
    """
    if not isinstance(adjacency, str):
        return adjacency
    sens = metadata.get("sensitivity", gparams.get("sensitivity"))
    norm = metadata.get("norm")
    changed = metadata.get("coordinates_changed")
    if noise_family(family) is TULAP and sens is None:  # the Tulap law's scale is its sensitivity
        sens, norm, changed = noise.get("scale", 1.0), "linf", gparams.get("coordinates_changed", 1)
        if adjacency == _OLD_ODDS_RATIO:
            return QueryAdjacency("linf", float(sens), 1, relation=adjacency)
    if sens is None:
        return adjacency
    if norm is None:
        norm = _OLD_RELATIONS.get(adjacency)
    if norm is None and adjacency == "as stated by the publisher":
        norm = calibration_norm(family)
    if norm is None:
        return adjacency
    for candidate in (
        QueryAdjacency(norm, float(sens), changed if norm == "linf" else None),
        QueryAdjacency(norm, float(sens), changed, space=changed is not None),
    ):
        if candidate.describe() == adjacency:
            return candidate
    if adjacency in _OLD_RELATIONS or adjacency == "as stated by the publisher":
        return QueryAdjacency(norm, float(sens), relation=adjacency)
    return adjacency


def _check_neighbours_once(family: str, adjacency, gparams: dict, metadata: dict) -> None:
    """Numbers that restate the neighbours must agree with the structured adjacency.

    A mechanism's release (its metadata records its source of randomness or
    a sensitivity) of a family whose guarantee is checked against its
    neighbours, or any release whose metadata records a sensitivity for a
    family with a claim check, must state them structured: words alone are
    not checked.
    """
    adj = adjacency_of(adjacency)
    if adj is None:
        restated = [k for k in _NEIGHBOUR_METADATA if k in metadata] + (
            ["randomness"] if "randomness" in metadata else []
        )
        checked = noise_family(family).claim is not None
        if (family in STRUCTURED_FAMILIES and restated) or ("sensitivity" in metadata and checked):
            raise doc_error(
                "guarantee.adjacency",
                adjacency,
                f"must state the neighbours of a {family} release as a structured adjacency "
                "(norm and sensitivity): words are not checked against the noise.",
            )
        if "sensitivity" in gparams and family in STRUCTURED_FAMILIES:
            raise doc_error(
                "guarantee.params.sensitivity",
                gparams["sensitivity"],
                "must be stated in a structured `guarantee.adjacency`, not beside words.",
            )
        return
    stated = {"sensitivity": adj.sensitivity, "norm": adj.norm}
    if adj.coordinates_changed is not None:
        stated["coordinates_changed"] = adj.coordinates_changed
    for where, fields in (("metadata", metadata), ("guarantee.params", gparams)):
        for key, value in stated.items():
            if key in fields and fields[key] != value:
                if key == "norm" and {fields[key], value} == {"K", "polytope"}:
                    continue
                raise doc_error(
                    f"{where}.{key}",
                    fields[key],
                    f"differs from `guarantee.adjacency.{key}` ({format_value(value)}): the "
                    "neighbours are stated once, in the adjacency.",
                )
