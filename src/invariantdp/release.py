"""The :class:`Release`: what a curator publishes and an analyst consumes.

A release carries the noisy value, the invariants published exactly with it,
the exact noise law and the privacy guarantee, so that inference functions
never need to be told the noise again.  It round-trips through JSON exactly,
and it is immutable: its arrays are read-only, its parameter and metadata
dicts refuse mutation.

The JSON document (schema version 1)
------------------------------------
A release is read by :meth:`Release.from_json` (or :meth:`Release.from_dict`,
:meth:`Release.load`) only after the *whole* document has been validated
against the schema below; every error is an
:class:`~invariantdp.exceptions.InvariantDPError` (a ``ValueError``) naming
the field, e.g. ``ValueError: `noise.params.b` (2.0) must be in [0, 1).``
Nothing is allocated from a size the document merely declares.

Strict JSON (RFC 8259): ``NaN`` and ``Infinity`` are refused, as are
duplicate keys and numbers that overflow a float (``1e999``, refused with the
path of the field that holds them).  Limits: at most
``max_bytes`` of text (default :data:`MAX_JSON_BYTES`, 256 MiB), at most
``max_cells`` (default :data:`MAX_CELLS`, 2**24) entries in any array or
declared shape, nesting at most :data:`MAX_DEPTH` (32) levels in free-form
fields.  Every key listed is required unless marked optional; no other key is
allowed except inside ``metadata`` and guarantee ``params``.

``format``
    ``"invariantdp.Release"``.
``version``
    Integer, 1 to :data:`FORMAT_VERSION`; a newer version is refused.
``value``, ``query`` (``query`` may be ``null``)
    An array: ``{"dtype", "shape", "data"}`` with ``dtype`` a little- or
    big-endian integer or float type of at most 8 bytes (``"<f8"``,
    ``"<i8"``, ...), ``shape`` a list of non-negative integers and ``data``
    the C-order flat list of ``prod(shape)`` finite numbers (integers within
    the dtype's range for an integer dtype; integers up to 2**53 for a float
    one).  ``query`` is 2-D float, of shape ``(value.size, prod(data_shape))``.
``mechanism``
    Non-empty string of at most 200 characters.
``data_shape``
    ``null`` or a shape.  Required with ``query`` or ``invariants``.  Without
    a ``query`` it may declare at most ``max(value.size, 65536)`` cells, so a
    small document cannot ask for large allocations.
``noise``
    ``{"family", "params"}``; the family must be known, with exactly these
    params (all numbers finite):

    ============================  =================================================
    family                        params
    ============================  =================================================
    ``laplace``, ``gaussian``     ``scale > 0``
    ``discrete_laplace``          ``scale > 0``
    ``discrete_gaussian``         ``sigma > 0``
    ``tulap``                     ``0 <= b < 1`` (0: the uniform limit of
                                  epsilon -> inf), ``0 <= q < 1``, optional
                                  ``scale > 0``
    ``knorm``                     ``norm`` in ``l1, l2, linf, polytope``, ``dim``
                                  (= ``value.size``), ``scale > 0``; a polytope
                                  has either ``space = {"kind": "contingency",
                                  "r", "c"}`` (``r, c >= 2``, ``r c = dim``) or
                                  ``vertices`` (``m x dim`` numbers)
    ``projected_gaussian``,       ``scale > 0``, ``invariants`` (an invariants
    ``projected_laplace``,        object with ``values`` null, acting on
    ``extended_gaussian``,        ``value.size`` cells, with the same ``C`` as
    ``extended_laplace``          the release's invariants)
    ``permutation``               ``0 < swap_rate < 1``, optional ``selection``
                                  and ``permutation`` (strings)
    ============================  =================================================

    Families that mechanism modules register with :func:`register_noise_family`
    bring their own ``schema`` (e.g. ``grid_laplace`` and ``grid_gaussian``
    of the secure Laplace and Gaussian mechanisms); any other family is
    refused.  The integer families (``discrete_*``, ``permutation``) need an
    integer-valued ``value``.
``guarantee``
    ``{"definition", "params", "adjacency", "semi_adjacent_parameter",
    "dataspace"}``: ``definition`` one of ``"epsilon-DP"`` (``epsilon``; a
    ``delta``, if present, is 0), ``"(epsilon, delta)-DP"`` (``epsilon``,
    ``delta``), ``"GDP"`` (``mu``), ``"zCDP"`` (``rho``), ``"f-DP"``
    (``tradeoff``: ``{"kind": "eps_delta", "epsilon" > 0, "delta"}``,
    ``{"kind": "gaussian", "mu" > 0}`` or ``{"kind": "group", "base", "k" >= 1}``).
    Known params must be in range (``epsilon >= 0``, ``0 <= delta < 1``,
    ``mu, rho, gamma > 0``, ``0 < swap_rate < 1``, ``b`` an integer >= 0);
    other params must be JSON scalars.  ``adjacency`` and ``dataspace`` are
    strings, ``semi_adjacent_parameter`` ``null`` or an integer >= 1.
``invariants``
    ``null`` or an invariants object (:meth:`Invariants.from_dict
    <invariantdp.invariants.Invariants.from_dict>`): a structure must describe
    labels of exactly the stated shape, a general matrix must have in-range
    indices, values and names one entry per invariant, and the values must be
    consistent (margins sharing one total, nested totals adding up).  They act
    on ``prod(data_shape)`` cells.
``metadata`` (optional)
    A JSON object, free-form; ``randomness``, if present, is ``"secure"`` or
    ``"simulation"``.

A release whose noise keeps the invariants (``projected_*``, ``extended_*``,
``permutation``, the contingency K-norm of ``semi_dp_knorm``, and the
conditional releases marked ``metadata.congenial``) must have a value that
satisfies them: ``|C value - c| <= 1e-8 (|C| |value| + |c|)`` row by row.
"""

from __future__ import annotations

import json
import math
import operator
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

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
    freeze,
    parse_json_document,
    thaw,
)
from .invariants import Invariants, _same_matrix
from .privacy.tradeoff import TradeoffFunction, eps_delta, gaussian

__all__ = ["NoiseLaw", "PrivacyGuarantee", "Release", "register_noise_family"]

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
# noise laws
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


def _tulap_factory(p):
    from .distributions import tulap

    return tulap(p["b"], p["q"], loc=0.0, scale=p.get("scale", 1.0))


register_noise_family("tulap", _tulap_factory)
register_noise_family("laplace", lambda p: stats.laplace(loc=0.0, scale=p["scale"]))
register_noise_family("gaussian", lambda p: stats.norm(loc=0.0, scale=p["scale"]))


@dataclass(frozen=True)
class NoiseLaw:
    """The exact law of the noise a mechanism added.

    Attributes
    ----------
    family : str
        Name of the family (``"tulap"``, ``"laplace"``, ``"gaussian"``, ...).
    params : dict
        Its parameters, JSON-able (e.g. ``{"b": 0.37, "q": 0.0}``); kept as a
        read-only deep copy.
    """

    family: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.family, str):
            raise TypeError(f"`family` must be a string, got {type(self.family).__name__}.")
        if not isinstance(self.params, dict):
            raise TypeError(f"`params` must be a dict, got {type(self.params).__name__}.")
        object.__setattr__(self, "params", freeze(self.params))

    def distribution(self):
        """The frozen scipy.stats-style distribution of one noise coordinate."""
        try:
            factory = _NOISE_FAMILIES[self.family]
        except KeyError:
            raise InvariantDPError(
                f"noise family {format_value(self.family)} has no registered distribution; "
                f"known: {sorted(_NOISE_FAMILIES)}."
            ) from None
        return factory(self.params)

    def to_dict(self) -> dict:
        return {"family": self.family, "params": thaw(self.params)}

    @classmethod
    def from_dict(cls, d: dict, *, path: str = "noise", max_cells: int = MAX_CELLS) -> NoiseLaw:
        """Rebuild from :meth:`to_dict` output after validating it (see the module docstring)."""
        law, _ = _noise_from_doc(path, d, _Context(value_size=None, max_cells=max_cells))
        return law


# ---------------------------------------------------------------------------
# privacy guarantees
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivacyGuarantee:
    """A privacy guarantee ``(D, A, f)``: dataspace, adjacency, privacy level.

    Attributes
    ----------
    definition : str
        ``"f-DP"`` (with ``params["tradeoff"]``), ``"(epsilon, delta)-DP"``,
        ``"GDP"``, ``"zCDP"`` or ``"epsilon-DP"``.
    params : dict
        The privacy parameters (``epsilon``, ``delta``, ``mu``, ``rho``, ...);
        kept as a read-only deep copy.
    adjacency : str
        The adjacency relation, in words (e.g. ``"semi-adjacent"``).
    semi_adjacent_parameter : int or None
        ``a(t)`` of Cho & Awan (Def. 13) when the guarantee is semi-DP: the
        guarantee holds for invariant-conforming data sets at distance
        ``a(t)`` in the base adjacency.
    dataspace : str
        The data space, in words (e.g. ``"2x2 tables with these one-way margins"``).
    """

    definition: str
    params: dict = field(default_factory=dict)
    adjacency: str = "add/remove or replace one record"
    semi_adjacent_parameter: int | None = None
    dataspace: str = ""

    def __post_init__(self):
        if not isinstance(self.params, dict):
            raise TypeError(f"`params` must be a dict, got {type(self.params).__name__}.")
        object.__setattr__(self, "params", freeze(self.params))

    def tradeoff(self) -> TradeoffFunction:
        """The tradeoff function ``f`` that the guarantee asserts."""
        p = self.params
        if self.definition == "f-DP":
            return TradeoffFunction.from_dict(p["tradeoff"])
        if self.definition in ("(epsilon, delta)-DP", "epsilon-DP"):
            return eps_delta(p["epsilon"], p.get("delta", 0.0))
        if self.definition == "GDP":
            return gaussian(p["mu"])
        raise InvariantDPError(
            f"a {self.definition} guarantee has no single tradeoff function; "
            "convert it with invariantdp.privacy first."
        )

    def to_dict(self) -> dict:
        return {
            "definition": self.definition,
            "params": thaw(self.params),
            "adjacency": self.adjacency,
            "semi_adjacent_parameter": self.semi_adjacent_parameter,
            "dataspace": self.dataspace,
        }

    @classmethod
    def from_dict(cls, d: dict, *, path: str = "guarantee") -> PrivacyGuarantee:
        """Rebuild from :meth:`to_dict` output after validating it (see the module docstring)."""
        return _guarantee_from_doc(path, d)

    def describe(self) -> str:
        params = ", ".join(f"{k}={v:g}" for k, v in self.params.items() if _is_num(v))
        out = f"{self.definition} ({params})" if params else self.definition
        if self.semi_adjacent_parameter is not None:
            out += f", semi-DP with a(t)={self.semi_adjacent_parameter}"
        return out


def _is_num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


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


def _array_to_json(a: np.ndarray) -> dict:
    a = np.asarray(a)
    return {
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "data": a.reshape(-1).tolist(),
    }


def _array_from_doc(path: str, d, *, max_cells: int) -> np.ndarray:
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
class _Context:
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


def _noise_from_doc(path: str, d, ctx: _Context) -> tuple[NoiseLaw, dict]:
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
    return NoiseLaw(family, d["params"]), info


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


def _guarantee_from_doc(path: str, d) -> PrivacyGuarantee:
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
    return PrivacyGuarantee(definition, params, adjacency, sap, dataspace)


# ---------------------------------------------------------------------------
# the release
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Release:
    """A differentially private release with its invariants.

    Attributes
    ----------
    value : numpy.ndarray
        The noisy released value (0-d for a scalar statistic); read-only.
    mechanism : str
        Name of the mechanism that produced it (e.g. ``"odds_ratio_release"``).
    noise : NoiseLaw
        Exact law of the noise added to the query.
    guarantee : PrivacyGuarantee
        The privacy guarantee, including the data space and adjacency.
    invariants : Invariants or None
        Statistics of the confidential data published exactly, with values.
    query : numpy.ndarray or None
        Matrix of the linear query of the flattened confidential data that was
        privatized (``value = query @ x.ravel() + noise``), if linear; read-only.
    data_shape : tuple of int or None
        Shape of the confidential data.
    metadata : dict
        Free-form JSON-able information (mechanism parameters, provenance),
        kept as a read-only deep copy.  ``metadata["randomness"]`` records
        the source of the noise (``"secure"`` or ``"simulation"``).

    Examples
    --------
    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> r = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=1)
    >>> Release.from_json(r.to_json()) == r
    True
    """

    value: np.ndarray
    mechanism: str
    noise: NoiseLaw
    guarantee: PrivacyGuarantee
    invariants: Invariants | None = None
    query: np.ndarray | None = None
    data_shape: tuple[int, ...] | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.noise, NoiseLaw):
            raise TypeError(f"`noise` must be a NoiseLaw, got {type(self.noise).__name__}.")
        if not isinstance(self.guarantee, PrivacyGuarantee):
            raise TypeError(
                f"`guarantee` must be a PrivacyGuarantee, got {type(self.guarantee).__name__}."
            )
        if self.invariants is not None and not isinstance(self.invariants, Invariants):
            raise TypeError(
                f"`invariants` must be an Invariants or None, got {type(self.invariants).__name__}."
            )
        if not isinstance(self.metadata, dict):
            raise TypeError(f"`metadata` must be a dict, got {type(self.metadata).__name__}.")
        value = np.array(self.value, copy=True)
        value.setflags(write=False)
        object.__setattr__(self, "value", value)
        if self.query is not None:
            q = np.array(self.query, dtype=float, copy=True)
            q.setflags(write=False)
            object.__setattr__(self, "query", q)
        if self.data_shape is not None:
            try:  # no int() coercion: a shape of 2.5 is an error, not 2
                shape = tuple(operator.index(s) for s in self.data_shape)
            except TypeError:
                shown = format_value(self.data_shape)
                raise TypeError(f"`data_shape` must be a tuple of integers, got {shown}.") from None
            object.__setattr__(self, "data_shape", shape)
        object.__setattr__(self, "metadata", freeze(self.metadata))

    # --- serialisation -----------------------------------------------------

    def to_dict(self) -> dict:
        """The JSON document as a new, mutable dict (see the module docstring)."""
        return {
            "format": "invariantdp.Release",
            "version": FORMAT_VERSION,
            "value": _array_to_json(self.value),
            "mechanism": self.mechanism,
            "noise": self.noise.to_dict(),
            "guarantee": self.guarantee.to_dict(),
            "invariants": None if self.invariants is None else self.invariants.to_dict(),
            "query": None if self.query is None else _array_to_json(self.query),
            "data_shape": None if self.data_shape is None else list(self.data_shape),
            "metadata": thaw(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: dict, *, max_cells: int = MAX_CELLS) -> Release:
        """Rebuild a release from :meth:`to_dict` output, validating the whole document.

        Raises ``InvariantDPError`` (a ``ValueError``) naming the first field
        that breaks the schema of the module docstring; the input is never
        modified.  ``max_cells`` bounds every array and declared shape.
        """
        return _release_from_doc(d, max_cells)

    def to_json(self, **kwargs) -> str:
        """Serialise to a strict JSON string (RFC 8259); floats are written exactly."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(
        cls, text, *, max_bytes: int = MAX_JSON_BYTES, max_cells: int = MAX_CELLS
    ) -> Release:
        """Rebuild a release from :meth:`to_json` output (strict JSON, validated).

        ``text`` is refused if longer than ``max_bytes`` before it is parsed;
        ``NaN``/``Infinity``, overflowing numbers, duplicate keys and deep
        nesting are refused while parsing; the document is then validated as by
        :meth:`from_dict`.
        """
        return cls.from_dict(parse_json_document(text, max_bytes), max_cells=max_cells)

    def save(self, path) -> Path:
        """Write the JSON to ``path`` atomically (temporary file + rename)."""
        path = Path(path)
        text = self.to_json(indent=1)
        fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def load(cls, path, *, max_bytes: int = MAX_JSON_BYTES, max_cells: int = MAX_CELLS) -> Release:
        """Read a release saved by :meth:`save`, refusing files over ``max_bytes`` unread.

        Only regular files are read (a FIFO or device could stream forever);
        a missing or unreadable file raises ``OSError``.
        """
        path = Path(path)
        # stat before opening: opening a FIFO blocks until someone writes to it
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise InvariantDPError(f"`path` ({format_value(str(path))}) is not a regular file.")
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise InvariantDPError(
                    f"`path` ({format_value(str(path))}) has {size} bytes; at most "
                    f"{max_bytes} are allowed (`max_bytes`)."
                )
            data = fh.read(max_bytes + 1)  # the file may have grown since
        return cls.from_json(data, max_bytes=max_bytes, max_cells=max_cells)

    # --- provenance -----------------------------------------------------------

    @property
    def simulation(self) -> bool:
        """True if the noise came from a ``numpy.random.Generator`` (not for publication).

        Mechanisms record their source of randomness in
        ``metadata["randomness"]`` (``"secure"`` or ``"simulation"``); see
        :mod:`invariantdp.mechanisms._base` for why a seeded or numpy-drawn
        release must never be published.
        """
        return self.metadata.get("randomness") == "simulation"

    # --- comparison and display ---------------------------------------------

    def __eq__(self, other) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def summary(self) -> str:
        """A short table: one line per field, arrays and long parameters abbreviated."""
        from ._results import format_table

        rows = [
            ("mechanism", _short(self.mechanism)),
            (
                "randomness",
                "SIMULATION (numpy generator): not for publication"
                if self.simulation
                else _short(self.metadata.get("randomness", "not recorded")),
            ),
            ("value", np.array2string(self.value, precision=4, threshold=12)),
            ("noise", f"{self.noise.family} {_summarise_params(self.noise.params)}"),
            ("guarantee", self.guarantee.describe()),
            ("adjacency", _short(self.guarantee.adjacency, 200)),
        ]
        if self.invariants is not None and self.invariants.values is not None:
            rows.append(
                (
                    "invariants",
                    np.array2string(self.invariants.values, precision=6, threshold=12),
                )
            )
        return format_table("Differentially private release", rows)

    def __repr__(self) -> str:
        return (
            f"Release(mechanism={self.mechanism!r}, "
            f"value={np.array2string(self.value, threshold=6)}, "
            f"noise={self.noise.family}, guarantee={self.guarantee.describe()!r})"
        )


def _short(v, limit: int = 80) -> str:
    """A string shown as is (cut to ``limit``), anything else as :func:`format_value` echoes it."""
    if isinstance(v, str):
        return v if len(v) <= limit else v[: limit - 3] + "..."
    return format_value(v, limit)


def _summarise(v) -> str:
    if _is_num(v):
        return f"{v:.6g}"
    if isinstance(v, str):
        return format_value(v, 40)
    if isinstance(v, dict):
        if "matrix" in v and "shape" in v:  # an invariants object
            kind = (v.get("structure") or {}).get("kind", "general")
            return f"<{kind} invariants on shape {tuple(v.get('shape', ()))}>"
        if len(v) <= 4 and all(_is_num(x) or isinstance(x, str) for x in v.values()):
            return "{" + ", ".join(f"{k}: {_summarise(x)}" for k, x in v.items()) + "}"
        return f"<object with {len(v)} keys>"
    if isinstance(v, list | tuple):
        return f"<list of {len(v)}>"
    return format_value(v, 40)


def _summarise_params(params: dict) -> str:
    """``{k: v}`` with arrays and nested objects abbreviated: one short line at any size."""
    text = "{" + ", ".join(f"{k}: {_summarise(v)}" for k, v in params.items()) + "}"
    return text if len(text) <= 160 else text[:157] + "..."


def _release_from_doc(d, max_cells: int) -> Release:
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
    value = _array_from_doc("value", d["value"], max_cells=max_cells)
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
        query = _array_from_doc("query", query, max_cells=max_cells)
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
    ctx = _Context(value_size=value.size, max_cells=limit)
    if invariants is not None:
        doc = invariants
        invariants = Invariants.from_dict(doc, path="invariants", max_cells=limit)
        ctx = _Context(value.size, limit, invariants, {**doc, "values": None})
        if n_data is None:
            raise doc_error("data_shape", None, "must be given with `invariants`.")
        if invariants.n_cells != n_data:
            raise doc_error(
                "invariants.shape",
                list(invariants.shape),
                f"has {invariants.n_cells} cells but `data_shape` {list(data_shape)} has {n_data}.",
            )
    noise, info = _noise_from_doc("noise", d["noise"], ctx)
    guarantee = _guarantee_from_doc("guarantee", d["guarantee"])

    metadata = d.get("metadata", {})
    doc_object("metadata", metadata, extra=True)
    doc_json_value("metadata", metadata, max_depth=MAX_DEPTH, budget=[max_cells])
    if "randomness" in metadata:
        doc_str("metadata.randomness", metadata["randomness"], choices=("secure", "simulation"))

    _check_noise_against_value(noise, info, value, invariants)
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
                f"{exc} The noise family {noise.family!r} keeps the invariants exactly, so the "
                "document is inconsistent."
            ) from None
    return Release(
        value=value,
        mechanism=mechanism,
        noise=noise,
        guarantee=guarantee,
        invariants=invariants,
        query=query,
        data_shape=data_shape,
        metadata=metadata,
    )


def _check_noise_against_value(noise: NoiseLaw, info: dict, value, invariants) -> None:
    """Cross-field checks: dimensions, integer support, the noise's own invariants."""
    dim = info.get("dim")
    if dim is not None and dim != value.size:
        raise doc_error(
            "noise.params",
            noise.family,
            f"describes noise on {dim} coordinates but `value` has {value.size} entries.",
        )
    if info.get("integer") and value.size and not np.all(value == np.round(value)):
        raise doc_error(
            "value.data", value, f"must be integer-valued for the {noise.family!r} noise family."
        )
    if info.get("integer") and value.size and np.max(np.abs(value)) > EXACT_INT:
        raise doc_error("value.data", value, "must be at most 2**53 in magnitude.")
    own = info.get("invariants")
    if own is not None and invariants is not None:
        if own.shape != invariants.shape or not _same_matrix(own.matrix, invariants.matrix):
            raise doc_error(
                "noise.params.invariants",
                noise.family,
                "must describe the same linear map C as the release's `invariants`.",
            )
