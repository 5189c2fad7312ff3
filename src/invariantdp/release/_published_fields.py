"""The fields of a :class:`~invariantdp.Release` built from published numbers.

:meth:`Release.from_published <invariantdp.Release.from_published>` (the
public entry, documented there and in :mod:`invariantdp.published`) builds
itself from what :func:`published_fields` returns, so that this module needs
no import of :mod:`invariantdp.release` (the pattern of
:mod:`invariantdp.release._document_schema`).
"""

from __future__ import annotations

import numpy as np

from .._validation import InvariantDPError, check_finite_array, format_value
from ..families import TULAP, SchemaContext, calibration_norm, noise_family
from ..invariants import Invariants
from ..labels import labels_of
from ..privacy import QueryAdjacency

__all__ = ["published_adjacency", "published_fields"]

_PUBLISHER = "as stated by the publisher"


def published_adjacency(family: str, params: dict, implied: tuple):
    """The neighbours of a guarantee the published terms imply: structured when they state a
    sensitivity (Tulap: its law's ``scale``), else the publisher's words."""
    definition, gparams = implied
    if definition == "unstated":
        return _PUBLISHER
    if noise_family(family) is TULAP:
        return QueryAdjacency("linf", float(params.get("scale", 1.0)), 1, relation=_PUBLISHER)
    sens = gparams.get("sensitivity")
    norm = calibration_norm(family)  # the norm an agency's stated sensitivity is in
    if sens is None or norm is None:
        return _PUBLISHER
    return QueryAdjacency(norm, float(sens), relation=_PUBLISHER)


def _check_query(query, data_shape, invariants, value):
    """``(query, data shape)`` of the release: the identity unless a query is given."""
    if query is None:
        if data_shape is not None and tuple(data_shape) != value.shape:
            raise InvariantDPError(
                f"`data_shape` {tuple(data_shape)} differs from the shape of `values` "
                f"{value.shape}; give the `query` that maps the data to the values."
            )
        return None, value.shape
    query = check_finite_array("query", query)
    if data_shape is None:
        if invariants is None:
            raise InvariantDPError("a `query` needs `data_shape` (or invariants on the data).")
        data_shape = invariants.shape
    shape = tuple(int(v) for v in data_shape)
    if query.shape != (value.size, int(np.prod(shape))):
        raise InvariantDPError(
            f"`query` must have shape ({value.size}, {int(np.prod(shape))}): one row per "
            f"value, one column per data cell; got {query.shape}."
        )
    return query, shape


def _check_invariants(invariants, shape, family, value, keeps: bool):
    """Invariants with values, on the data; kept by the value when the noise ``keeps`` them."""
    if invariants is None:
        return
    if not isinstance(invariants, Invariants):
        raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
    if invariants.values is None:
        raise InvariantDPError(
            "`invariants` must carry the published values: use `invariants.with_values(...)` "
            "or Invariants(C, values)."
        )
    if invariants.n_cells != int(np.prod(shape)):
        raise InvariantDPError(
            f"`invariants` act on {invariants.n_cells} cells but the data have "
            f"{int(np.prod(shape))}; give the `query` when the values are not the cells."
        )
    if keeps:
        try:
            invariants.check(value.reshape(-1), name="values", rtol=1e-8)
        except InvariantDPError as exc:
            raise InvariantDPError(
                f"{exc} {family.name} noise keeps the invariants exactly, so the published "
                "values must satisfy them."
            ) from None


def published_fields(
    values, family: str, given: dict, *, own: bool, invariants, query, data_shape, metadata
) -> dict:
    """The fields of the release, and ``"implied"``: the guarantee the terms state (or None).

    ``given`` are the noise terms (``own``: the family's own params, e.g.
    from a NoiseLaw); ``"noise"`` is returned as ``(family, params)``.
    """
    if not isinstance(family, str):
        raise TypeError(
            f"`noise` must be a family name or a NoiseLaw, got {type(family).__name__}."
        )
    spec = noise_family(family)
    labels = labels_of(values)
    raw = np.asarray(values)
    value = check_finite_array("values", raw)
    # the release's own invariants: validated once, never rebuilt from their document
    context = SchemaContext(
        value.size,
        max(SchemaContext.max_cells, value.size),
        invariants,
        None if invariants is None else invariants.structure_dict(),
    )
    if own:
        params, implied = dict(given), None
        info = spec.validate(dict(params), "noise.params", context)
    else:
        params, implied = spec.calibrate(given, invariants=invariants)
        info = spec.validate(params, "noise params", context)
    if spec.integer and not np.all(value == np.round(value)):
        raise InvariantDPError(
            f"`values` must be integers for {family} noise; got {format_value(value)}."
        )
    if spec.integer or raw.dtype.kind in "iu":  # counts stay integers (exact below 2**53)
        value = value.astype(np.int64)
    query, shape = _check_query(query, data_shape, invariants, value)
    keeps = info.get("keeps_invariants", False)
    _check_invariants(invariants, shape, spec, value, keeps and query is None)
    note = {"query": "identity"} if query is None else {}
    return {
        "value": value,
        "noise": (family, params),
        "implied": implied,
        "invariants": invariants,
        "query": query,
        "data_shape": shape,
        "metadata": {"source": "published", **note, **(metadata or {})},
        "labels": labels,
    }
