"""The noise families of this package other than Tulap (:mod:`._tulap_family`).

Registered on import by :mod:`invariantdp.families`: each with its law, the
JSON schema of its params (:mod:`._schemas`, documented in
:mod:`invariantdp.release`), its calibration (:mod:`._calibration`), the
check of a recorded guarantee (:mod:`._claims`), and its likelihood
(:mod:`._likelihood`).  Only Tulap, the canonical noise of the DP tests,
gives a test view (:mod:`._tails`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import stats

from .._validation import (
    InvariantDPError,
    check_epsilon,
    check_positive,
    doc_open_unit,
    doc_positive,
    doc_str,
)
from ..distributions import (
    LatticeLaw,
    discrete_gaussian,
    discrete_laplace,
    float_up,
    gaussian_plan,
    knorm_from_params,
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
    subspace_factory,
)
from ..secure import SecureGenerator
from ._calibration import gaussian_rho, gaussian_sigma, laplace_scale, rho_of_mu
from ._cell_noise import CellNoise
from ._claims import (
    check_gaussian,
    check_laplace,
    check_largest_stratum,
    check_permutation,
    check_zcdp,
)
from ._family import register_noise_family
from ._likelihood import (
    DISCRETE_GAUSSIAN_LIKELIHOOD,
    DISCRETE_LAPLACE_LIKELIHOOD,
    GAUSSIAN_LIKELIHOOD,
    LAPLACE_LIKELIHOOD,
    NoiseLikelihood,
)
from ._schemas import grid_schema, knorm_schema, params_schema, subspace_schema

__all__ = ["DISCRETE_GAUSSIAN", "DISCRETE_LAPLACE", "GAUSSIAN", "LAPLACE"]


# ---------------------------------------------------------------------------
# likelihoods of the Bayes models
# ---------------------------------------------------------------------------


def _laplace_likelihood(structure="independent", integer=False, form=LAPLACE_LIKELIHOOD):
    def likelihood(p, congenial):
        s = p["scale"]
        return NoiseLikelihood(form, {"scale": s}, integer, structure, sd=math.sqrt(2.0) * s)

    return likelihood


def _gaussian_likelihood(p, congenial):
    # conditioned on equalities, a Gaussian release is the projected one (GGY Theorem 22)
    return NoiseLikelihood(
        GAUSSIAN_LIKELIHOOD,
        {"sigma": p["scale"]},
        structure="projected" if congenial else "independent",
        sd=p["scale"],
    )


def _projected_gaussian_likelihood(p, congenial):
    return NoiseLikelihood(
        GAUSSIAN_LIKELIHOOD, {"sigma": p["scale"]}, structure="projected", sd=p["scale"]
    )


def _discrete_gaussian_likelihood(p, congenial):
    return NoiseLikelihood(
        DISCRETE_GAUSSIAN_LIKELIHOOD, {"sigma": p["sigma"]}, integer=True, sd=p["sigma"]
    )


def _grid_gaussian_likelihood(p, congenial):
    # grid * N_Z(0, (sigma / grid)^2): with sigma >= grid its mass on the lattice is the Gaussian
    # density times the grid to a relative exp(-2 pi^2 (sigma / grid)^2) <= 3e-9 (Poisson
    # summation), so it is observed as Gaussian noise (the secure Gaussian mechanism's grid is
    # about sigma / 2^20)
    sigma, grid = p["sigma"], p["grid"]
    if sigma < grid:
        raise InvariantDPError(
            f"grid Gaussian noise with sigma ({sigma:.6g}) below its grid ({grid:.6g}) has no "
            "Gaussian likelihood: its law lives on a few lattice points."
        )
    return NoiseLikelihood(
        GAUSSIAN_LIKELIHOOD,
        {"sigma": sigma},
        structure="projected" if congenial else "independent",
        sd=sigma,
    )


def _extended_laplace_likelihood(p, congenial):
    raise InvariantDPError(
        "extended Laplace releases are not supported by the Bayesian models yet: their noise "
        "Q_N w has no closed-form density in the data coordinates."
    )


# ---------------------------------------------------------------------------
# calibration: the params from privacy parameters or an agency's published terms
# ---------------------------------------------------------------------------


def _sensitivity(given):
    v = given.pop("sensitivity", None)
    return None if v is None else check_positive("sensitivity", v)


def _gaussian_terms(key: str, subspace: bool = False):
    """``sigma`` from ``sigma``, ``variance``, or ``rho`` or ``mu`` with the L2 sensitivity.

    ``sigma = sensitivity / sqrt(2 rho)`` gives rho-zCDP for the Gaussian
    (Bun & Steinke 2016, Prop. 1.6) and the discrete Gaussian (CKS 2020,
    Thm. 14), ``sigma = sensitivity / mu`` the same noise with
    ``rho = mu**2 / 2``; the projection onto ``ker C`` is post-processing.
    """

    def terms(given, invariants):
        sens = _sensitivity(given)
        stated = [k for k in dict.fromkeys(("sigma", key, "variance", "rho", "mu")) if k in given]
        if len(stated) != 1:
            raise InvariantDPError(
                "Gaussian noise takes exactly one of `sigma`, `variance`, `rho` or `mu` (with "
                f"`sensitivity`), got {stated or 'none'}."
            )
        k = stated[0]
        v = check_positive(k, given.pop(k))
        if k in ("rho", "mu"):
            if sens is None:
                raise InvariantDPError(f"`{k}` needs the query's L2 `sensitivity` to give sigma.")
            sigma = gaussian_sigma(sens, **{k: v})
            rho = v if k == "rho" else rho_of_mu(v)
        else:
            s2 = v if k == "variance" else v**2
            sigma = math.sqrt(s2)
            rho = None if sens is None else gaussian_rho(sens, s2)
        params = {key: sigma}
        if subspace:
            if invariants is None:
                raise InvariantDPError("a projected or extended release needs its `invariants`.")
            params["invariants"] = invariants.structure_dict()
        if sens is None:
            return params, None
        return params, ("zCDP", {"rho": rho, "sensitivity": sens})

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
        scale = laplace_scale(sens, eps)
    else:
        scale = check_positive("scale", given.pop("scale"))
        eps = None if sens is None else sens / scale
    if sens is None:
        return {"scale": scale}, None
    return {"scale": scale}, ("epsilon-DP", {"epsilon": eps, "sensitivity": sens})


# ---------------------------------------------------------------------------
# exact samplers
# ---------------------------------------------------------------------------


def _laplace_exact(params, size, rng):
    """Exact ``Lap_Z(scale)`` draws, the scale the exact rational of its double."""
    return sample_discrete_laplace_exact(params["scale"], size, rng)


def _gaussian_exact(params, size, rng):
    """Exact ``N_Z(0, sigma**2)`` draws, ``sigma**2`` exact from the double ``sigma``."""
    return sample_discrete_gaussian_exact(Fraction(params["sigma"]) ** 2, size, rng)


# ---------------------------------------------------------------------------
# the noise of each cell, as linear estimators read it
# ---------------------------------------------------------------------------


def _gaussian_cells(p):
    return CellNoise(float(p["scale"]) ** 2)


def _discrete_gaussian_cells(p):
    sigma = float(p["sigma"])
    return CellNoise(float(discrete_gaussian.var(sigma)), step=1.0, lattice_sigma=sigma)


def _grid_gaussian_cells(p):
    # grid * N_Z(0, (sigma / grid)^2), the data rounded to the grid first (the secure Gaussian)
    grid, units = float(p["grid"]), p["sigma"] / p["grid"]
    var = grid**2 * float(discrete_gaussian.var(units))
    return CellNoise(var, step=grid, lattice_sigma=units, rounded=True)


# ---------------------------------------------------------------------------
# census noisy measurements: noise of an exact variance parameter sigma**2
# ---------------------------------------------------------------------------


def _gaussian_measurement(variance, size, rng):
    if isinstance(rng, SecureGenerator):
        raise InvariantDPError(
            "continuous Gaussian noise has no exact sampler: a secure measurement takes "
            "discrete Gaussian noise."
        )
    return rng.normal(0.0, math.sqrt(variance), size)


def _discrete_gaussian_measurement(variance, size, rng):
    """Exact CKS draws with a :class:`SecureGenerator`, the vectorised sampler with numpy."""
    if isinstance(rng, SecureGenerator):
        return sample_discrete_gaussian_exact(variance, size, rng)
    draws = discrete_gaussian.rvs(math.sqrt(variance), size=size, random_state=rng)
    return np.asarray(draws, dtype=np.int64)


def discrete_gaussian_timing_tv(variance: Fraction, size: int) -> float:
    """The ``timing_tv`` of ``size`` secure draws of discrete Gaussian measurement noise.

    The exact sampler does the same work for every draw except on an event
    whose probability its plan bounds per draw; ``size`` draws add them (a
    union bound), rounded up to a double.

    Examples
    --------
    >>> 0 < discrete_gaussian_timing_tv(Fraction(4), 10) < 1e-6
    True
    """
    if size == 0:
        return 0.0
    return float_up(size * gaussian_plan(variance, 1.0, size).tv_per_draw())


# ---------------------------------------------------------------------------
# the families of this package
# ---------------------------------------------------------------------------


def _laplace_law(p):
    return stats.laplace(loc=0.0, scale=p["scale"])


def _gaussian_law(p):
    return stats.norm(loc=0.0, scale=p["scale"])


#: continuous Laplace noise with ``scale``
LAPLACE = register_noise_family(
    "laplace",
    _laplace_law,
    schema=params_schema({"scale": doc_positive}),
    likelihood=_laplace_likelihood(),
    terms=_laplace_terms,
    claim=check_laplace("laplace"),
)
#: continuous Gaussian noise with standard deviation ``scale``
GAUSSIAN = register_noise_family(
    "gaussian",
    _gaussian_law,
    schema=params_schema({"scale": doc_positive}),
    likelihood=_gaussian_likelihood,
    terms=_gaussian_terms("scale"),
    claim=check_gaussian("gaussian"),
    cells=_gaussian_cells,
    measurement=_gaussian_measurement,
)
#: discrete Laplace (double geometric) noise, ``P(k) ∝ exp(-|k| / scale)`` (CKS 2020, Def. 2)
DISCRETE_LAPLACE = register_noise_family(
    "discrete_laplace",
    lambda p: discrete_laplace(p["scale"]),
    schema=params_schema({"scale": doc_positive}),
    integer=True,
    likelihood=_laplace_likelihood(integer=True, form=DISCRETE_LAPLACE_LIKELIHOOD),
    terms=_laplace_terms,
    claim=check_laplace("discrete_laplace"),
    exact_sampler=_laplace_exact,
)
#: discrete Gaussian noise, ``P(k) ∝ exp(-k^2 / (2 sigma^2))`` (CKS 2020, Def. 1)
DISCRETE_GAUSSIAN = register_noise_family(
    "discrete_gaussian",
    lambda p: discrete_gaussian(p["sigma"]),
    schema=params_schema({"sigma": doc_positive}),
    integer=True,
    likelihood=_discrete_gaussian_likelihood,
    terms=_gaussian_terms("sigma"),
    claim=check_zcdp("discrete_gaussian"),
    exact_sampler=_gaussian_exact,
    cells=_discrete_gaussian_cells,
    measurement=_discrete_gaussian_measurement,
)
# the noise of the secure laplace / gaussian: grid * Lap_Z(scale / grid), grid * N_Z(0, .)
register_noise_family(
    "grid_laplace",
    lambda p: LatticeLaw(discrete_laplace(p["scale"] / p["grid"]), p["grid"]),
    schema=grid_schema("scale"),
    claim=check_laplace("grid_laplace"),
)
register_noise_family(
    "grid_gaussian",
    lambda p: LatticeLaw(discrete_gaussian(p["sigma"] / p["grid"]), p["grid"]),
    schema=grid_schema("sigma"),
    likelihood=_grid_gaussian_likelihood,
    claim=check_zcdp("grid_gaussian"),
    cells=_grid_gaussian_cells,
)
register_noise_family("knorm", knorm_from_params, schema=knorm_schema, claim=check_laplace("knorm"))
register_noise_family(
    "projected_gaussian",
    subspace_factory("gaussian", "projected"),
    schema=subspace_schema,
    keeps_invariants=True,
    likelihood=_projected_gaussian_likelihood,
    terms=_gaussian_terms("scale", subspace=True),
    claim=check_gaussian("projected_gaussian"),
    cells=_gaussian_cells,
)
register_noise_family(
    "extended_gaussian",
    subspace_factory("gaussian", "extended"),
    schema=subspace_schema,
    keeps_invariants=True,
    likelihood=_projected_gaussian_likelihood,  # the same law N(0, sigma^2 Pi_N)
    terms=_gaussian_terms("scale", subspace=True),
    claim=check_gaussian("extended_gaussian"),
    cells=_gaussian_cells,
)
register_noise_family(
    "projected_laplace",
    subspace_factory("laplace", "projected"),
    schema=subspace_schema,
    keeps_invariants=True,
    likelihood=_laplace_likelihood(structure="row_space"),
    claim=check_laplace("projected_laplace"),
)
register_noise_family(
    "extended_laplace",
    subspace_factory("laplace", "extended"),
    schema=subspace_schema,
    keeps_invariants=True,
    likelihood=_extended_laplace_likelihood,
    claim=check_laplace("extended_laplace"),
)
# data swapping: a permutation within strata, no distribution object (Bailie et al. 2025)
register_noise_family(
    "permutation",
    None,
    schema=params_schema(
        {"swap_rate": doc_open_unit}, {"selection": doc_str, "permutation": doc_str}
    ),
    integer=True,
    keeps_invariants=True,
    claim=check_permutation,
    value_check=check_largest_stratum,
)
