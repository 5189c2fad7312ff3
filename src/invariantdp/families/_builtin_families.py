"""The noise families of this package: their schemas, likelihoods and published terms.

Registered on import by :mod:`invariantdp.families`; the JSON schema of each
is documented in :mod:`invariantdp.release`.
"""

from __future__ import annotations

import math

from scipy import stats

from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_positive,
    doc_error,
    doc_int,
    doc_list,
    doc_numbers,
    doc_object,
    doc_open_unit,
    doc_path,
    doc_positive,
    doc_probability,
    doc_str,
)
from ..distributions import discrete_gaussian, discrete_laplace, tulap, tulap_params
from ..distributions._discrete_laws import GRID_RANGE, LatticeLaw
from ..distributions._knorm_law import knorm_from_params
from ..distributions._subspace_laws import subspace_factory
from ..invariants import Invariants
from ._family import NoiseLikelihood, register_noise_family

__all__ = ["DISCRETE_GAUSSIAN", "DISCRETE_LAPLACE", "GAUSSIAN", "LAPLACE", "TULAP"]


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------


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


def _grid_schema(scale_key: str):
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


def _knorm_schema(params, path, ctx):
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


def _subspace_schema(params, path, ctx):
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


# ---------------------------------------------------------------------------
# likelihoods of the Bayes models
# ---------------------------------------------------------------------------


def _tulap_likelihood(p, congenial):
    b, q, scale = p["b"], p.get("q", 0.0), p.get("scale", 1.0)
    support = None
    if q > 0:
        support = tuple(float(v) * scale for v in tulap.support(b, q))
    # the untruncated Tulap's standard deviation (Awan & Slavkovic 2018, Def. 4.1)
    sd = scale * math.sqrt(2.0 * b / (1.0 - b) ** 2 + 1.0 / 12.0)
    return NoiseLikelihood(
        "TulapLikelihood", {"b": b, "q": q, "scale": scale}, sd=sd, support=support
    )


def _laplace_likelihood(structure="independent", integer=False, dist="LaplaceLikelihood"):
    def likelihood(p, congenial):
        s = p["scale"]
        return NoiseLikelihood(dist, {"scale": s}, integer, structure, sd=math.sqrt(2.0) * s)

    return likelihood


def _gaussian_likelihood(p, congenial):
    # conditioned on equalities, a Gaussian release is the projected one (GGY Theorem 22)
    return NoiseLikelihood(
        "GaussianLikelihood",
        {"sigma": p["scale"]},
        structure="projected" if congenial else "independent",
        sd=p["scale"],
    )


def _projected_gaussian_likelihood(p, congenial):
    return NoiseLikelihood(
        "GaussianLikelihood", {"sigma": p["scale"]}, structure="projected", sd=p["scale"]
    )


def _discrete_gaussian_likelihood(p, congenial):
    return NoiseLikelihood(
        "DiscreteGaussianLikelihood", {"sigma": p["sigma"]}, integer=True, sd=p["sigma"]
    )


def _extended_laplace_likelihood(p, congenial):
    raise InvariantDPError(
        "extended Laplace releases are not supported by the Bayesian models yet: their noise "
        "Q_N w has no closed-form density in the data coordinates."
    )


# ---------------------------------------------------------------------------
# the terms an agency publishes the noise in (invariantdp.published)
# ---------------------------------------------------------------------------


def _sensitivity(given):
    v = given.pop("sensitivity", None)
    return None if v is None else check_positive("sensitivity", v)


def _gaussian_terms(key: str, subspace: bool = False):
    """``sigma^2`` from ``sigma``, ``variance``, or ``rho`` and the L2 sensitivity.

    ``sigma^2 = sensitivity^2 / (2 rho)`` gives rho-zCDP for the Gaussian
    (Bun & Steinke 2016, Prop. 1.6) and the discrete Gaussian (CKS 2020,
    Thm. 14); the projection onto ``ker C`` is post-processing.
    """

    def terms(given, invariants):
        sens = _sensitivity(given)
        stated = [k for k in dict.fromkeys(("sigma", key, "variance", "rho")) if k in given]
        if len(stated) != 1:
            raise InvariantDPError(
                "Gaussian noise takes exactly one of `sigma`, `variance` or `rho` (with "
                f"`sensitivity`), got {stated or 'none'}."
            )
        k = stated[0]
        v = check_positive(k, given.pop(k))
        if k == "rho":
            if sens is None:
                raise InvariantDPError("`rho` needs the query's L2 `sensitivity` to give sigma.")
            s2 = sens**2 / (2.0 * v)
        else:
            s2 = v if k == "variance" else v**2
        params = {key: math.sqrt(s2)}
        if subspace:
            if invariants is None:
                raise InvariantDPError("a projected or extended release needs its `invariants`.")
            params["invariants"] = invariants.structure_dict()
        if sens is None:
            return params, None
        return params, ("zCDP", {"rho": sens**2 / (2.0 * s2), "sensitivity": sens})

    return terms


def _laplace_terms(given, invariants):
    """``scale`` given, or ``sensitivity / epsilon`` (L1 sensitivity): epsilon-DP."""
    sens = _sensitivity(given)
    stated = [k for k in ("scale", "epsilon") if k in given]
    if len(stated) != 1:
        raise InvariantDPError(
            "Laplace noise takes exactly one of `scale` or `epsilon` (with `sensitivity`), "
            f"got {stated or 'none'}."
        )
    if "epsilon" in given:
        eps = check_epsilon(given.pop("epsilon"))
        if sens is None:
            raise InvariantDPError("`epsilon` needs the query's L1 `sensitivity` to give a scale.")
        scale = sens / eps
    else:
        scale = check_positive("scale", given.pop("scale"))
        eps = None if sens is None else sens / scale
    if sens is None:
        return {"scale": scale}, None
    return {"scale": scale}, ("epsilon-DP", {"epsilon": eps, "sensitivity": sens})


def _tulap_terms(given, invariants):
    """``b, q`` of the canonical noise of ``f_{epsilon, delta}`` (Awan & Slavkovic 2018)."""
    if "epsilon" not in given:
        raise InvariantDPError("Tulap noise takes `epsilon` (and `delta`), or its own `b`, `q`.")
    eps = check_epsilon(given.pop("epsilon"))
    delta = check_delta(given.pop("delta", 0.0))
    sens = _sensitivity(given)
    b, q = tulap_params(eps, delta)
    params = {"b": b, "q": q, "scale": 1.0 if sens is None else sens}
    return params, ("(epsilon, delta)-DP", {"epsilon": eps, "delta": delta})


# ---------------------------------------------------------------------------
# the families of this package
# ---------------------------------------------------------------------------

#: Tulap noise (Awan & Slavkovic 2018, Def. 4.1): ``b`` in [0, 1) (0: the uniform limit
#: epsilon -> inf), truncation ``q`` in [0, 1), optional ``scale``
TULAP = register_noise_family(
    "tulap",
    lambda p: tulap(p["b"], p["q"], loc=0.0, scale=p.get("scale", 1.0)),
    schema=_params_schema({"b": doc_probability, "q": doc_probability}, {"scale": doc_positive}),
    likelihood=_tulap_likelihood,
    terms=_tulap_terms,
)
#: continuous Laplace noise with ``scale``
LAPLACE = register_noise_family(
    "laplace",
    lambda p: stats.laplace(loc=0.0, scale=p["scale"]),
    schema=_params_schema({"scale": doc_positive}),
    likelihood=_laplace_likelihood(),
    terms=_laplace_terms,
)
#: continuous Gaussian noise with standard deviation ``scale``
GAUSSIAN = register_noise_family(
    "gaussian",
    lambda p: stats.norm(loc=0.0, scale=p["scale"]),
    schema=_params_schema({"scale": doc_positive}),
    likelihood=_gaussian_likelihood,
    terms=_gaussian_terms("scale"),
)
#: discrete Laplace (double geometric) noise, ``P(k) ∝ exp(-|k| / scale)`` (CKS 2020, Def. 2)
DISCRETE_LAPLACE = register_noise_family(
    "discrete_laplace",
    lambda p: discrete_laplace(p["scale"]),
    schema=_params_schema({"scale": doc_positive}),
    integer=True,
    likelihood=_laplace_likelihood(integer=True, dist="DiscreteLaplaceLikelihood"),
    terms=_laplace_terms,
)
#: discrete Gaussian noise, ``P(k) ∝ exp(-k^2 / (2 sigma^2))`` (CKS 2020, Def. 1)
DISCRETE_GAUSSIAN = register_noise_family(
    "discrete_gaussian",
    lambda p: discrete_gaussian(p["sigma"]),
    schema=_params_schema({"sigma": doc_positive}),
    integer=True,
    likelihood=_discrete_gaussian_likelihood,
    terms=_gaussian_terms("sigma"),
)
# the noise of the secure laplace / gaussian: grid * Lap_Z(scale / grid), grid * N_Z(0, .)
register_noise_family(
    "grid_laplace",
    lambda p: LatticeLaw(discrete_laplace(p["scale"] / p["grid"]), p["grid"]),
    schema=_grid_schema("scale"),
)
register_noise_family(
    "grid_gaussian",
    lambda p: LatticeLaw(discrete_gaussian(p["sigma"] / p["grid"]), p["grid"]),
    schema=_grid_schema("sigma"),
)
register_noise_family("knorm", knorm_from_params, schema=_knorm_schema)
register_noise_family(
    "projected_gaussian",
    subspace_factory("gaussian", "projected"),
    schema=_subspace_schema,
    keeps_invariants=True,
    likelihood=_projected_gaussian_likelihood,
    terms=_gaussian_terms("scale", subspace=True),
)
register_noise_family(
    "extended_gaussian",
    subspace_factory("gaussian", "extended"),
    schema=_subspace_schema,
    keeps_invariants=True,
    likelihood=_projected_gaussian_likelihood,  # the same law N(0, sigma^2 Pi_N)
    terms=_gaussian_terms("scale", subspace=True),
)
register_noise_family(
    "projected_laplace",
    subspace_factory("laplace", "projected"),
    schema=_subspace_schema,
    keeps_invariants=True,
    likelihood=_laplace_likelihood(structure="row_space"),
)
register_noise_family(
    "extended_laplace",
    subspace_factory("laplace", "extended"),
    schema=_subspace_schema,
    keeps_invariants=True,
    likelihood=_extended_laplace_likelihood,
)
# data swapping: a permutation within strata, no distribution object (Bailie et al. 2025)
register_noise_family(
    "permutation",
    None,
    schema=_params_schema(
        {"swap_rate": doc_open_unit}, {"selection": doc_str, "permutation": doc_str}
    ),
    integer=True,
    keeps_invariants=True,
)
