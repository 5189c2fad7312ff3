"""A release document must not claim more privacy than its recorded noise law gives.

:meth:`invariantdp.Release.from_json` validates every field of a document on
its own; :func:`check_claim` then checks the guarantee against the noise
law, so that a document edited to overstate its privacy (a smaller
``epsilon``, ``delta`` or ``rho`` than the noise allows) is refused with both
numbers named.  The checks, per noise family:

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
``(1 + e**epsilon) timing_tv``.  The sensitivity is read from
``metadata["sensitivity"]`` (and the grid's from ``metadata``); a document
without it (a release built from published numbers) states nothing to
check the scale against, and only its internal consistency is checked.
Comparisons allow a relative ``1e-9`` for the rounding of the recorded
doubles.
"""

from __future__ import annotations

import math

from ._validation import InvariantDPError, format_value
from .privacy import gdp_log_delta, swapping_epsilon, zcdp_log_delta

__all__ = ["check_claim"]

#: the rounding allowed between a recorded guarantee and the noise law's own numbers
_REL = 1e-9
#: -log of the smallest positive double: a Tulap b that underflowed to 0 means epsilon above it
_LOG_TINY = 744.4400719213812
#: a delta this close to 1 states no guarantee: nothing to overstate
_VACUOUS = 1.0 - 2.0**-52


def _refuse(field: str, value, rule: str) -> InvariantDPError:
    return InvariantDPError(
        f"`guarantee.params.{field}` ({format_value(value)}) claims more privacy than the "
        f"recorded noise law gives: {rule}"
    )


def _eps_delta(definition: str, params: dict):
    """The (epsilon, delta) a guarantee states, or None (GDP, zCDP, f-DP, unstated)."""
    if definition in ("epsilon-DP", "(epsilon, delta)-DP"):
        return float(params["epsilon"]), float(params.get("delta", 0.0))
    return None


def _number(metadata: dict, key: str):
    v = metadata.get(key)
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
    return float(v) if ok else None


def _check_timing(definition: str, params: dict) -> None:
    tv = params.get("timing_tv")
    claim = _eps_delta(definition, params)
    if tv is None or claim is None:
        return
    eps, delta = claim
    log_share = math.log(tv) + eps + math.log1p(math.exp(-eps)) if tv > 0 else -math.inf
    if delta >= _VACUOUS or (delta > 0 and math.log(delta) >= log_share - _REL):
        return
    if tv > 0:
        share = math.exp(log_share) if log_share < 700 else math.inf
        raise _refuse(
            "delta",
            delta,
            f"`timing_tv` ({tv:.6g}) adds (1 + e**epsilon) * timing_tv = {share:.6g} to delta at "
            f"epsilon = {eps:.6g}.",
        )


def _check_tulap(noise: dict, definition: str, params: dict, metadata: dict) -> None:
    claim = _eps_delta(definition, params)
    if claim is None:
        return
    eps, delta = claim
    b, q = float(noise["b"]), float(noise["q"])
    m = int(params.get("coordinates_changed", 1))
    eps_noise = -math.log(b) if b > 0 else _LOG_TINY
    if eps < m * eps_noise * (1 - _REL):
        raise _refuse(
            "epsilon",
            eps,
            f"Tulap noise with b = {b!r} gives epsilon = {eps_noise:.10g} per coordinate, so "
            f"{m} changed coordinate(s) need epsilon >= {m * eps_noise:.10g}.",
        )
    if "epsilon_per_coordinate" in params and params["epsilon_per_coordinate"] < eps_noise * (
        1 - _REL
    ):
        raise _refuse(
            "epsilon_per_coordinate",
            params["epsilon_per_coordinate"],
            f"Tulap noise with b = {b!r} gives epsilon = {eps_noise:.10g} per coordinate.",
        )
    if b > 0 and q > 0:
        delta_q = q * (1 - b) / (2 * b * (1 - q))
        need = -math.expm1(m * math.log1p(-min(delta_q, 1.0 - 2.0**-53)))
        if delta < need * (1 - _REL):
            raise _refuse(
                "delta",
                delta,
                f"Tulap noise with b = {b!r} and q = {q!r} gives delta = {delta_q:.10g} per "
                f"coordinate, so {m} changed coordinate(s) need delta >= {need:.10g}.",
            )
        per = params.get("delta_per_coordinate")
        if per is not None and per < delta_q * (1 - _REL):
            raise _refuse(
                "delta_per_coordinate",
                per,
                f"Tulap noise with b = {b!r} and q = {q!r} gives delta = {delta_q:.10g}.",
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


def _check_laplace(family: str, noise: dict, definition: str, params: dict, metadata: dict):
    claim = _eps_delta(definition, params)
    found = _laplace_epsilon(family, noise, metadata)
    if claim is None or found is None:
        return
    eps, delta = claim
    eps0, what = found
    if eps >= eps0 * (1 - _REL):
        return
    # neighbours that differ in k coordinates by the whole sensitivity: the loss is eps0 where
    # every changed coordinate's noise lies beyond both inputs (probability >= 2**-k), so the
    # true delta at eps is at least 2**-k (1 - e^(eps - eps0)); k = 1 for a sensitivity
    # bound, the support of the worst vector for a sensitivity space.  For K-norm noise the
    # loss reaches eps0 on a null set: only a pure epsilon is checked.
    k = metadata.get("coordinates_changed", 1)
    k = k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else 1
    need = 0.0 if family == "knorm" else -(0.5**k) * math.expm1(eps - eps0)
    if delta <= need or (family == "knorm" and delta == 0):
        raise _refuse(
            "epsilon",
            eps,
            f"{family} noise with {what} gives epsilon = {eps0:.10g}; a smaller epsilon needs "
            f"delta >= {need:.10g}, but the document records delta = {delta!r}.",
        )


def _check_gaussian(noise: dict, definition: str, params: dict, metadata: dict):
    sens = _number(metadata, "sensitivity")
    if sens is None:
        return
    mu = sens / float(noise["scale"])
    if definition == "GDP" and params["mu"] < mu * (1 - _REL):
        raise _refuse(
            "mu",
            params["mu"],
            f"Gaussian noise of scale {noise['scale']!r} with sensitivity {sens:.10g} gives "
            f"mu = {mu:.10g}.",
        )
    _check_recorded_eps_delta(params, lambda e: gdp_log_delta(mu, e), f"mu = {mu:.10g}")


def _check_recorded_eps_delta(params: dict, log_delta_at, what: str) -> None:
    eps, delta = params.get("epsilon"), params.get("delta")
    if eps is None or delta is None or eps <= 0:
        return
    log_need = log_delta_at(float(eps))
    if delta <= 0 or math.log(delta) < log_need - 1e-6:
        raise _refuse(
            "delta",
            delta,
            f"{what} gives delta = {math.exp(log_need):.10g} at epsilon = {eps:.10g}.",
        )


def _check_zcdp(family: str, noise: dict, definition: str, params: dict, metadata: dict):
    sigma = float(noise["sigma"])
    if family == "grid_gaussian":
        d2 = _number(metadata, "grid_sensitivity_squared")
        if d2 is None:
            return
        rho, what = d2 * float(noise["grid"]) ** 2 / (2 * sigma**2), "grid sensitivity"
    else:
        sens = _number(metadata, "sensitivity")
        if sens is None:
            return
        rho, what = sens**2 / (2 * sigma**2), f"sensitivity {sens:.10g}"
    if definition != "zCDP":
        return
    if params["rho"] < rho * (1 - _REL):
        raise _refuse(
            "rho",
            params["rho"],
            f"discrete Gaussian noise of sigma {sigma!r} with {what} gives rho = {rho:.10g}.",
        )
    _check_recorded_eps_delta(params, lambda e: zcdp_log_delta(rho, e), f"rho = {rho:.10g}")


def _check_permutation(noise: dict, definition: str, params: dict, metadata: dict):
    claim = _eps_delta(definition, params)
    b = params.get("b", metadata.get("b"))
    if claim is None or not isinstance(b, int) or isinstance(b, bool):
        return
    eps = swapping_epsilon(b, float(noise["swap_rate"]))
    if claim[0] < eps * (1 - _REL):
        raise _refuse(
            "epsilon",
            claim[0],
            f"swapping at rate {noise['swap_rate']!r} with b = {b} gives epsilon = {eps:.10g} "
            "(Theorem 5.6).",
        )


def check_claim(family: str, noise: dict, guarantee: tuple, metadata: dict) -> None:
    """Refuse a guarantee that the noise law of the document does not imply (module docstring).

    ``guarantee`` is ``(definition, params, ...)`` as read from the document.
    """
    definition, params = guarantee[0], guarantee[1]
    _check_timing(definition, params)
    if family == "tulap":
        _check_tulap(noise, definition, params, metadata)
    elif family in ("laplace", "discrete_laplace", "grid_laplace", "knorm"):
        _check_laplace(family, noise, definition, params, metadata)
    elif family == "gaussian":
        _check_gaussian(noise, definition, params, metadata)
    elif family in ("discrete_gaussian", "grid_gaussian"):
        _check_zcdp(family, noise, definition, params, metadata)
    elif family == "permutation":
        _check_permutation(noise, definition, params, metadata)
