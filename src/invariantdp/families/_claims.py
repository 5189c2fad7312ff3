"""A release's guarantee must not claim more privacy than its noise law gives.

:meth:`invariantdp.Release.from_json` validates every field of a document on
its own, then asks the noise family to check the guarantee against the noise
law (:meth:`NoiseFamily.check_claim
<invariantdp.families.NoiseFamily.check_claim>`), so that a document edited
to overstate its privacy (a smaller ``epsilon``, ``delta`` or ``rho`` than
the noise allows) is refused with both numbers named.  Each family knows its
own check (its ``claim``, given to
:func:`~invariantdp.families.register_noise_family`):

========================  ===================================================================
family                    the guarantee must be implied by
========================  ===================================================================
``tulap``                 ``epsilon >= m log(1/b)`` and ``delta >= 1 - (1 - delta_q)**m``
                          with ``delta_q = q (1 - b) / (2 b (1 - q))`` and ``m`` the
                          ``coordinates_changed`` (1 if not recorded)
``laplace``,              ``epsilon_0 = sensitivity / scale`` (``grid_sensitivity * grid /
``discrete_laplace``,     scale`` on a grid); a smaller epsilon needs at least
``grid_laplace``,         ``delta >= 2**-k (1 - exp(epsilon - epsilon_0))``, a lower bound on
``knorm``                 the mechanism's delta there (``k`` the ``coordinates_changed`` of a
                          sensitivity space, else 1; K-norm: a pure epsilon only)
``gaussian``              ``mu >= sensitivity / scale``; a recorded (epsilon, delta) at least
                          the Balle-Wang delta of that mu
``discrete_gaussian``,    ``rho >= sensitivity**2 / (2 sigma**2)`` (``grid_sensitivity_squared
``grid_gaussian``         grid**2 / (2 sigma**2)`` on a grid); a recorded (epsilon, delta) at
                          least the CKS delta of that rho
``permutation``           ``epsilon >= swapping_epsilon(b, swap_rate)`` (Theorem 5.6)
========================  ===================================================================

A guarantee with ``timing_tv`` must also carry its share of delta,
``(1 + e**epsilon) timing_tv``, whatever the family.  The sensitivity is
read from ``metadata["sensitivity"]`` (and the grid's from ``metadata``).

A claim the family cannot check is *unchecked*, not refused: a document
without a sensitivity (a release built from published numbers states
nothing to check the scale against), a guarantee stated in another
definition than the family's check (an f-DP claim of Laplace noise), or a
family registered without a ``claim`` (a user family).  The document is
read; :meth:`Release.check_guarantee <invariantdp.Release.check_guarantee>`
says whether its guarantee was checked.  Comparisons allow a relative
``1e-9`` for the rounding of the recorded doubles.
"""

from __future__ import annotations

import math

from .._validation import InvariantDPError, format_value
from ..privacy import gdp_log_delta, swapping_epsilon, zcdp_log_delta
from ._calibration import gaussian_rho

__all__ = [
    "REL",
    "check_gaussian",
    "check_laplace",
    "check_permutation",
    "check_recorded_eps_delta",
    "check_timing",
    "check_zcdp",
    "eps_delta",
    "overstated",
]

#: the rounding allowed between a recorded guarantee and the noise law's own numbers
REL = 1e-9
#: a delta this close to 1 states no guarantee: nothing to overstate
_VACUOUS = 1.0 - 2.0**-52


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


def eps_delta(definition: str, params: dict):
    """The (epsilon, delta) a guarantee states, or None (GDP, zCDP, f-DP, unstated)."""
    if definition in ("epsilon-DP", "(epsilon, delta)-DP"):
        return float(params["epsilon"]), float(params.get("delta", 0.0))
    return None


def _number(metadata: dict, key: str):
    v = metadata.get(key)
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
    return float(v) if ok else None


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


def _laplace_epsilon(family: str, noise: dict, metadata: dict):
    """``(epsilon_0, what)`` of Laplace-type noise, or None without the sensitivity."""
    scale = float(noise["scale"])
    if family == "grid_laplace":
        sens = _number(metadata, "grid_sensitivity")
        if sens is None:
            return None
        return sens * float(noise["grid"]) / scale, (
            f"grid sensitivity {sens:g} on the grid {noise['grid']!r} with scale {scale:.10g}"
        )
    sens = _number(metadata, "sensitivity")
    if sens is None:
        return None
    return sens / scale, f"sensitivity {sens:.10g} with scale {scale:.10g}"


def check_laplace(family: str):
    """The claim check of Laplace-type noise of ``family`` (the table above)."""

    def check(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
        claim = eps_delta(definition, params)
        found = _laplace_epsilon(family, noise, metadata)
        if claim is None or found is None:
            return False
        eps, delta = claim
        eps0, what = found
        if eps >= eps0 * (1 - REL):
            return True
        # neighbours that differ in k coordinates by the whole sensitivity: the loss is eps0
        # where every changed coordinate's noise lies beyond both inputs (probability
        # >= 2**-k), so the true delta at eps is at least 2**-k (1 - e^(eps - eps0)); k = 1
        # for a sensitivity bound, the support of the worst vector for a sensitivity space.
        # For K-norm noise the loss reaches eps0 on a null set: only a pure epsilon is checked.
        k = metadata.get("coordinates_changed", 1)
        k = k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else 1
        need = 0.0 if family == "knorm" else -(0.5**k) * math.expm1(eps - eps0)
        if delta <= need or (family == "knorm" and delta == 0):
            raise overstated(
                "epsilon",
                eps,
                f"{family} noise with {what} gives epsilon = {eps0:.10g}; a smaller epsilon "
                f"needs delta >= {need:.10g}, but the document records delta = {delta!r}.",
            )
        return True

    return check


def check_recorded_eps_delta(params: dict, log_delta_at, what: str) -> bool:
    """Refuse a recorded ``(epsilon, delta)`` below ``log_delta_at(epsilon)``; True if present."""
    eps, delta = params.get("epsilon"), params.get("delta")
    if eps is None or delta is None or eps <= 0:
        return False
    log_need = log_delta_at(float(eps))
    if delta <= 0 or math.log(delta) < log_need - 1e-6:
        raise overstated(
            "delta",
            delta,
            f"{what} gives delta = {math.exp(log_need):.10g} at epsilon = {eps:.10g}.",
        )
    return True


def check_gaussian(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
    """The claim check of Gaussian noise (the table above)."""
    sens = _number(metadata, "sensitivity")
    if sens is None:
        return False
    mu = sens / float(noise["scale"])
    checked = definition == "GDP"
    if checked and params["mu"] < mu * (1 - REL):
        raise overstated(
            "mu",
            params["mu"],
            f"Gaussian noise of scale {noise['scale']!r} with sensitivity {sens:.10g} gives "
            f"mu = {mu:.10g}.",
        )
    recorded = check_recorded_eps_delta(params, lambda e: gdp_log_delta(mu, e), f"mu = {mu:.10g}")
    return checked or recorded


def check_zcdp(family: str):
    """The claim check of discrete Gaussian noise of ``family`` (the table above)."""

    def check(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
        sigma = float(noise["sigma"])
        if family == "grid_gaussian":
            d2 = _number(metadata, "grid_sensitivity_squared")
            if d2 is None:
                return False
            d2 = d2 * float(noise["grid"]) ** 2
            rho, what = gaussian_rho(None, sigma**2, sensitivity_squared=d2), "grid sensitivity"
        else:
            sens = _number(metadata, "sensitivity")
            if sens is None:
                return False
            rho, what = gaussian_rho(sens, sigma**2), f"sensitivity {sens:.10g}"
        if definition != "zCDP":
            return False
        if params["rho"] < rho * (1 - REL):
            raise overstated(
                "rho",
                params["rho"],
                f"discrete Gaussian noise of sigma {sigma!r} with {what} gives rho = {rho:.10g}.",
            )
        check_recorded_eps_delta(params, lambda e: zcdp_log_delta(rho, e), f"rho = {rho:.10g}")
        return True

    return check


def check_permutation(noise: dict, definition: str, params: dict, metadata: dict) -> bool:
    """The claim check of data swapping (Bailie, Gong & Meng 2025, Theorem 5.6)."""
    claim = eps_delta(definition, params)
    b = params.get("b", metadata.get("b"))
    if claim is None or not isinstance(b, int) or isinstance(b, bool):
        return False
    eps = swapping_epsilon(b, float(noise["swap_rate"]))
    if claim[0] < eps * (1 - REL):
        raise overstated(
            "epsilon",
            claim[0],
            f"swapping at rate {noise['swap_rate']!r} with b = {b} gives epsilon = {eps:.10g} "
            "(Theorem 5.6).",
        )
    return True
