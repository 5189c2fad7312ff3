"""A release's guarantee must not claim more privacy than its noise law gives.

:meth:`invariantdp.Release.from_json` validates every field of a document on
its own, then asks the noise family to check the guarantee against the noise
law (:meth:`NoiseFamily.check_claim
<invariantdp.families.NoiseFamily.check_claim>`), so that a document edited
to overstate its privacy (a smaller ``epsilon``, ``delta`` or ``rho`` than
the noise allows, or a definition the noise does not support) is refused
with both numbers named.  The neighbours are those of the guarantee's
structured adjacency (:class:`~invariantdp.privacy.QueryAdjacency`: norm,
sensitivity, coordinates changed), never the words shown beside them.  Each
family knows its own check (its ``claim``, given to
:func:`~invariantdp.families.register_noise_family`):

========================  ===================================================================
family                    the guarantee must be implied by
========================  ===================================================================
``tulap``                 ``epsilon >= m log(1/b)`` and ``delta >= 1 - (1 - delta_q)**m``
                          with ``delta_q = q (1 - b) / (2 b (1 - q))`` and ``m`` the
                          coordinates changed; the sensitivity at most the law's ``scale``
``laplace``,              ``epsilon_0 = sensitivity / scale`` (``grid_sensitivity * grid /
``discrete_laplace``,     scale`` on a grid, l1 norm); a smaller epsilon needs
``grid_laplace``          ``delta >= delta(epsilon)``, the exact privacy profile
                          (:func:`~invariantdp.privacy.laplace_delta`,
                          :func:`~invariantdp.privacy.discrete_laplace_delta`; the
                          one-coordinate shift is the worst vector of an l1 bound, so a
                          sensitivity space is checked against it too)
``knorm``,                ``epsilon >= sensitivity / scale``: a pure epsilon only (their
``projected_laplace``,    profile below it has no closed form); twice that for a release
``extended_laplace``      conditioned on its invariants (``metadata.congenial``, Gong & Meng,
                          Theorem 2.1 with gamma = 1)
``gaussian``,             ``mu >= sensitivity / scale`` (GDP), ``rho >= mu**2 / 2`` (zCDP), and
``projected_gaussian``,   an (epsilon, delta) at least the Balle-Wang delta of that mu (exact)
``extended_gaussian``
``discrete_gaussian``,    ``rho >= sensitivity**2 / (2 sigma**2)`` (``grid_sensitivity_squared
``grid_gaussian``         grid**2 / (2 sigma**2)`` on a grid); a recorded (epsilon, delta) at
                          least the CKS delta of that rho
``permutation``           ``epsilon >= swapping_epsilon(b, swap_rate)`` (Theorem 5.6)
========================  ===================================================================

A definition the noise does not support is refused: Laplace-type noise
states epsilon-DP or (epsilon, delta)-DP (not GDP, zCDP or a Gaussian
tradeoff), Gaussian noise GDP, zCDP or (epsilon, delta)-DP (never a pure
epsilon), Tulap and swapping epsilon-DP or (epsilon, delta)-DP.  An f-DP
guarantee is converted exactly where it is one of these: the tradeoff
``f_{epsilon, delta}`` is (epsilon, delta)-DP, ``G_mu`` is mu-GDP.  A guarantee with ``timing_tv``
must also carry its share of delta, ``(1 + e**epsilon) timing_tv``, whatever
the family.

A claim the family cannot check is *unchecked*, not refused: an adjacency
in words only (a guarantee a publisher states: nothing to check the scale
against), or a family registered without a ``claim`` (a user family).  The
document is read; :meth:`Release.check_guarantee
<invariantdp.Release.check_guarantee>` says whether its guarantee was
checked.  Comparisons allow a relative ``1e-9`` for the rounding of the
recorded doubles.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import InvariantDPError, doc_error, doc_numbers, format_value
from ..privacy import (
    QueryAdjacency,
    discrete_laplace_delta,
    gdp_log_delta,
    laplace_delta,
    swapping_epsilon,
    zcdp_log_delta,
)
from ._calibration import gaussian_rho

__all__ = [
    "NEIGHBOUR_KEYS",
    "REL",
    "STRUCTURED_FAMILIES",
    "calibration_norm",
    "check_gaussian",
    "check_laplace",
    "check_largest_stratum",
    "check_permutation",
    "check_recorded_eps_delta",
    "check_timing",
    "check_zcdp",
    "eps_delta",
    "neighbour_view",
    "overstated",
    "unsupported",
]

#: the rounding allowed between a recorded guarantee and the noise law's own numbers
REL = 1e-9
#: a delta this close to 1 states no guarantee: nothing to overstate
_VACUOUS = 1.0 - 2.0**-52
#: what a claim reads of the neighbours: only ever from the structured adjacency
NEIGHBOUR_KEYS = ("sensitivity", "norm", "coordinates_changed", "space")
#: built-in families whose mechanisms state structured neighbours (norm and sensitivity)
STRUCTURED_FAMILIES = frozenset(
    {
        "laplace",
        "discrete_laplace",
        "grid_laplace",
        "knorm",
        "gaussian",
        "discrete_gaussian",
        "grid_gaussian",
        "tulap",
        "projected_gaussian",
        "extended_gaussian",
        "projected_laplace",
        "extended_laplace",
    }
)
_NORM = {
    "laplace": ("l1",),
    "discrete_laplace": ("l1",),
    "grid_laplace": ("l1",),
    "projected_laplace": ("l1",),
    "extended_laplace": ("l1",),
    "gaussian": ("l2",),
    "projected_gaussian": ("l2",),
    "extended_gaussian": ("l2",),
    "discrete_gaussian": ("l2",),
    "grid_gaussian": ("l2",),
    "tulap": ("linf",),
}


def calibration_norm(family: str) -> str | None:
    """The norm a family's noise is calibrated in (its sensitivity's), or None if not fixed.

    Examples
    --------
    >>> [calibration_norm(f) for f in ("discrete_laplace", "gaussian", "knorm")]
    ['l1', 'l2', None]
    """
    if family == "correlated_gaussian":  # calibrated to the l2 sensitivity in its metric
        return "l2"
    norms = _NORM.get(family)
    return norms[0] if norms else None


def overstated(field: str, value, rule: str) -> InvariantDPError:
    """The error of a guarantee parameter that claims more privacy than the noise gives.

    Examples
    --------
    >>> str(overstated("epsilon", 0.5, "Laplace noise of scale 1 gives epsilon = 1."))[:48]
    '`guarantee.params.epsilon` (0.5) claims more pri'
    """
    return InvariantDPError(
        f"`guarantee.params.{field}` ({format_value(value)}) claims more privacy than the "
        f"recorded noise law gives: {rule}"
    )


def unsupported(family: str, definition: str, supported: str) -> InvariantDPError:
    """The error of a guarantee stated in a definition the noise does not support.

    Examples
    --------
    >>> str(unsupported("discrete_laplace", "GDP", "epsilon-DP"))[-23:]
    'state it as epsilon-DP.'
    """
    return InvariantDPError(
        f"`guarantee.definition` ({format_value(definition)}) is not a guarantee {family} "
        f"noise is checked for: state it as {supported}."
    )


def neighbour_view(metadata, neighbours: QueryAdjacency | None) -> dict:
    """The metadata a claim reads, its neighbours taken from the structured adjacency only.

    The ``sensitivity``, ``norm``, ``coordinates_changed`` and ``space`` of
    ``metadata`` are dropped; with ``neighbours`` they come from it.  An
    adjacency in words only (``neighbours`` None) states no sensitivity.

    Examples
    --------
    >>> neighbour_view({"sensitivity": 0.01, "grid": 0.5}, QueryAdjacency("l1", 1.0))["sensitivity"]
    1.0
    >>> "sensitivity" in neighbour_view({"sensitivity": 0.01}, None)
    False
    """
    view = {k: v for k, v in dict(metadata or {}).items() if k not in NEIGHBOUR_KEYS}
    if neighbours is not None:
        view.update(
            sensitivity=neighbours.sensitivity,
            norm=neighbours.norm,
            coordinates_changed=neighbours.coordinates_changed,
            space=neighbours.space,
        )
    return view


def eps_delta(definition: str, params: dict):
    """The (epsilon, delta) a guarantee states, or None (GDP, zCDP, other f-DP, unstated).

    An f-DP guarantee whose tradeoff function is ``f_{epsilon, delta}`` is
    exactly (epsilon, delta)-DP (Dong, Roth & Su 2022, Prop. 2.5).
    """
    if definition in ("epsilon-DP", "(epsilon, delta)-DP"):
        return float(params["epsilon"]), float(params.get("delta", 0.0))
    f = params.get("tradeoff") if definition == "f-DP" else None
    if isinstance(f, dict) and f.get("kind") == "eps_delta":
        return float(f["epsilon"]), float(f["delta"])
    return None


def _timing_share(eps: float, params: dict) -> float:
    tv = params.get("timing_tv") or 0.0
    if tv <= 0:
        return 0.0
    log_share = math.log(tv) + eps + math.log1p(math.exp(-eps))
    return math.exp(log_share) if log_share < 700 else math.inf


def check_timing(definition: str, params: dict) -> None:
    """Refuse a delta below the share ``(1 + e**epsilon) timing_tv`` of the run time."""
    tv = params.get("timing_tv")
    claim = eps_delta(definition, params)
    if tv is None or claim is None:
        return
    eps, delta = claim
    log_share = math.log(tv) + eps + math.log1p(math.exp(-eps)) if tv > 0 else -math.inf
    if delta >= _VACUOUS or (delta > 0 and math.log(delta) >= log_share - REL):
        return
    if tv > 0:
        share = math.exp(log_share) if log_share < 700 else math.inf
        raise overstated(
            "delta",
            delta,
            f"`timing_tv` ({tv:.6g}) adds (1 + e**epsilon) * timing_tv = {share:.6g} to delta at "
            f"epsilon = {eps:.6g}.",
        )


def _check_norm(family: str, view: dict, noise: dict) -> None:
    norm = view["norm"]
    allowed = _NORM.get(family)
    if family == "knorm":
        own = noise["norm"]
        allowed = ("polytope", "K") if own == "polytope" else (own,)
    if allowed is not None and norm not in allowed:
        raise InvariantDPError(
            f"`guarantee.adjacency.norm` ({format_value(norm)}) is not the norm {family} noise "
            f"is calibrated in ({' or '.join(allowed)}): its sensitivity does not bound the "
            "privacy loss."
        )


def _neighbours(family: str, noise: dict, view: dict):
    """The sensitivity of the structured neighbours (norm checked), or None without one."""
    sens = view.get("sensitivity")
    if sens is None:
        return None
    _check_norm(family, view, noise)
    return float(sens)


def _grid_steps(view: dict, key: str, sens_steps: float) -> int:
    """A grid sensitivity recorded in the metadata: an integer at least what rounding gives.

    ``sens_steps`` is a float (possibly infinite); the integer must reach its floor.
    """
    v = view.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InvariantDPError(
            f"`metadata.{key}` ({format_value(v)}) must be an integer >= 1: the grid noise's "
            "sensitivity in grid steps."
        )
    if v < sens_steps and v < math.floor(min(sens_steps, 2.0**1000)):
        raise InvariantDPError(
            f"`metadata.{key}` ({v}) is below what the sensitivity gives on the grid "
            f"({sens_steps:.10g}): the noise would protect less than the adjacency states."
        )
    return v


def _laplace_epsilon(family: str, noise: dict, view: dict):
    """``(epsilon_0, profile, what)`` of Laplace-type noise, or None without a sensitivity."""
    scale = float(noise["scale"])
    sens = _neighbours(family, noise, view)
    if sens is None:
        return None
    if family == "grid_laplace":
        grid = float(noise["grid"])
        steps = _grid_steps(view, "grid_sensitivity", sens / grid + 1)
        t = scale / grid
        return (
            steps / t,
            lambda e: discrete_laplace_delta(epsilon=e, scale=t, sensitivity=steps),
            f"grid sensitivity {steps:g} on the grid {noise['grid']!r} with scale {scale:.10g}",
        )
    what = f"sensitivity {sens:.10g} with scale {scale:.10g}"
    if family == "discrete_laplace":
        if sens < 1:
            raise InvariantDPError(
                f"`guarantee.adjacency.sensitivity` ({sens!r}) must be >= 1 for discrete "
                "Laplace noise: neighbours' integer query values differ by at least 1."
            )
        d = math.floor(sens)
        return (
            sens / scale,
            lambda e: discrete_laplace_delta(epsilon=e, scale=scale, sensitivity=d),
            what,
        )
    if family == "laplace":
        return sens / scale, lambda e: laplace_delta(epsilon=e, scale=scale, sensitivity=sens), what
    return sens / scale, None, what  # K-norm, projected, extended: a pure epsilon only


def check_laplace(family: str):
    """The claim check of Laplace-type noise of ``family`` (the table above)."""

    def check(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
        found = _laplace_epsilon(family, noise, metadata)
        if found is None:
            return False
        claim = eps_delta(definition, params)
        if claim is None:
            raise unsupported(family, definition, "epsilon-DP or (epsilon, delta)-DP")
        eps, delta = claim
        eps0, profile, what = found
        if metadata.get("congenial") is True:
            # conditioned on the invariants: twice the loss (Gong & Meng, Theorem 2.1, gamma = 1)
            eps0, profile, what = 2.0 * eps0, None, f"{what}, conditioned on the invariants"
        if eps >= eps0 * (1 - REL):
            return True
        if profile is None:
            raise overstated(
                "epsilon",
                eps,
                f"{family} noise with {what} gives epsilon = {eps0:.10g}; its delta below that "
                "epsilon has no closed form, so only a pure epsilon of at least it is checked.",
            )
        need = profile(eps) + _timing_share(eps, params)
        if delta < need * (1 - REL) and delta < _VACUOUS:
            raise overstated(
                "epsilon",
                eps,
                f"{family} noise with {what} gives epsilon = {eps0:.10g}; at epsilon = "
                f"{eps:.10g} its exact delta is {need:.10g}, but the document records "
                f"delta = {delta!r}.",
            )
        return True

    return check


def check_recorded_eps_delta(params: dict, log_delta_at, what: str) -> bool:
    """Refuse a recorded ``(epsilon, delta)`` below ``log_delta_at(epsilon)``; True if present."""
    eps, delta = params.get("epsilon"), params.get("delta")
    if eps is None or delta is None or eps < 0:
        return False
    # at epsilon = 0 the bound of the smallest normal epsilon (the profile is continuous there)
    log_need = log_delta_at(max(float(eps), 2.2250738585072014e-308))
    if delta <= 0 or math.log(delta) < log_need - 1e-6:
        raise overstated(
            "delta",
            delta,
            f"{what} gives delta = {math.exp(log_need):.10g} at epsilon = {eps:.10g}.",
        )
    return True


def check_gaussian(family: str = "gaussian"):
    """The claim check of Gaussian noise of ``family`` (the table above)."""

    def check(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
        sens = _neighbours(family, noise, metadata)
        if sens is None:
            return False
        mu = sens / float(noise["scale"])
        if not mu < math.inf:
            raise InvariantDPError(
                f"`noise.params.scale` ({noise['scale']!r}) is too small for its sensitivity: "
                "the noise gives no privacy (mu is infinite)."
            )
        what = f"Gaussian noise of scale {noise['scale']!r} with sensitivity {sens:.10g}"
        f = params.get("tradeoff") if definition == "f-DP" else None
        if isinstance(f, dict) and f.get("kind") == "gaussian":  # G_mu: exactly mu-GDP
            if f["mu"] < mu * (1 - REL):
                raise overstated("tradeoff.mu", f["mu"], f"{what} gives mu = {mu:.10g}.")
            return True
        if definition == "GDP":
            if params["mu"] < mu * (1 - REL):
                raise overstated("mu", params["mu"], f"{what} gives mu = {mu:.10g}.")
        elif definition == "zCDP":
            rho = mu * mu / 2
            if params["rho"] < rho * (1 - REL):
                raise overstated("rho", params["rho"], f"{what} gives rho = {rho:.10g}.")
        elif definition != "(epsilon, delta)-DP":
            raise unsupported(family, definition, "GDP, zCDP or (epsilon, delta)-DP")
        if mu > 0:
            check_recorded_eps_delta(params, lambda e: gdp_log_delta(mu, e), f"mu = {mu:.10g}")
        return True

    return check


def check_zcdp(family: str):
    """The claim check of discrete Gaussian noise of ``family`` (the table above)."""

    def check(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
        sigma = float(noise["sigma"])
        sens = _neighbours(family, noise, metadata)
        if sens is None:
            return False
        if family == "grid_gaussian":
            grid = float(noise["grid"])
            steps = sens / grid
            d2 = _grid_steps(metadata, "grid_sensitivity_squared", steps * steps)
            # sigma divided out twice: sigma**2 alone overflows (1e200) or is 0 (5e-324)
            rho = gaussian_rho(None, sigma=sigma / grid, sensitivity_squared=d2)
            what = "grid sensitivity"
        else:
            rho, what = gaussian_rho(sens, sigma=sigma), f"sensitivity {sens:.10g}"
        if not rho < math.inf:
            raise InvariantDPError(
                f"`noise.params.sigma` ({sigma!r}) is too small for its sensitivity: the noise "
                "gives no privacy (rho is infinite)."
            )
        if definition == "zCDP":
            if params["rho"] < rho * (1 - REL):
                raise overstated(
                    "rho",
                    params["rho"],
                    f"discrete Gaussian noise of sigma {sigma!r} with {what} gives "
                    f"rho = {rho:.10g}.",
                )
        elif definition != "(epsilon, delta)-DP":
            raise unsupported(family, definition, "zCDP or (epsilon, delta)-DP")
        if rho > 0:  # a rho that underflowed to 0: every (epsilon, delta) holds
            check_recorded_eps_delta(params, lambda e: zcdp_log_delta(rho, e), f"rho = {rho:.10g}")
        return True

    return check


def check_permutation(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
    """The claim check of data swapping (Bailie, Gong & Meng 2025, Theorem 5.6)."""
    claim = eps_delta(definition, params)
    if claim is None:
        if definition in ("GDP", "zCDP", "f-DP"):
            raise unsupported("permutation", definition, "epsilon-DP")
        return False
    b = params.get("b", metadata.get("b"))
    if "b" in params and "b" in metadata and metadata["b"] != params["b"]:
        raise InvariantDPError(
            f"`guarantee.params.b` ({format_value(params['b'])}) differs from `metadata.b` "
            f"({format_value(metadata['b'])}): the largest stratum is recorded once."
        )
    if not isinstance(b, int) or isinstance(b, bool):
        if "randomness" in metadata:  # the mechanism's release records its b: not dropped
            raise InvariantDPError(
                f"`guarantee.params.b` ({format_value(b)}) must be the integer size of the "
                "largest stratum holding two different records: the swap's epsilon depends "
                "on it (Theorem 5.6)."
            )
        return False
    if b == 1 or b < 0:
        raise InvariantDPError(
            f"`guarantee.params.b` ({b}) must be 0 or >= 2: the size of the largest stratum "
            "holding two different records (Theorem 5.6)."
        )
    eps = swapping_epsilon(b, float(noise["swap_rate"]))
    if claim[0] < eps * (1 - REL):
        raise overstated(
            "epsilon",
            claim[0],
            f"swapping at rate {noise['swap_rate']!r} with b = {b} gives epsilon = {eps:.10g} "
            "(Theorem 5.6).",
        )
    return True


def check_largest_stratum(value, metadata: dict, gparams: dict) -> None:
    """A swap's ``b`` is the largest stratum of the released table with two different records.

    Swapping keeps every stratum's ``n_jk`` and ``n_jl`` margins, so a stratum
    holds two different records exactly when its released counts fill two
    cells or more: ``b`` follows from the value and the strata of its cells
    (``metadata.cells.match``), and a recorded ``b`` must equal it
    (Bailie, Gong & Meng, Theorem 5.6).
    """
    cells = metadata.get("cells")
    if not isinstance(cells, dict) or "match" not in cells:
        return
    strata = np.asarray(
        doc_numbers("metadata.cells.match", cells["match"], integer=True, length=value.size),
        dtype=np.int64,
    )
    if strata.size == 0:
        return
    if strata.min() < 0:
        raise doc_error("metadata.cells.match", cells["match"], "must hold integers >= 0.")
    counts = value.reshape(-1).astype(np.int64)
    size = np.bincount(strata, weights=counts)
    filled = np.bincount(strata, weights=counts > 0)
    two = size[filled >= 2]
    b = int(two.max()) if two.size else 0
    for where, fields in (("guarantee.params", gparams), ("metadata", metadata)):
        if "b" in fields and fields["b"] != b:
            raise doc_error(
                f"{where}.b",
                fields["b"],
                f"must be {b}: the largest stratum of the released table holding two "
                "different records (Theorem 5.6).",
            )
