r"""Gaussian noise with a full covariance: the family ``correlated_gaussian``.

The noise of a release whose coordinates are correlated: ``N(0, Sigma)`` on
the ``n`` entries of the value, ``Sigma`` given in full (``params["cov"]``,
an ``n x n`` symmetric positive semi-definite matrix).  Estimates computed
from noisy measurements (the GLS estimates of census counts) carry such
noise; a ``Sigma`` whose range lies in the null space of the release's
invariants keeps them exactly (the schema checks ``Pi_N Sigma = Sigma``).

With an :math:`\ell_2` sensitivity ``Delta`` (any change of the query within
that ball), the mechanism is rho-zCDP with
``rho = Delta**2 / (2 lambda_min(Sigma))`` and mu-GDP with
``mu = Delta / sqrt(lambda_min(Sigma))``: the Renyi divergence of
``N(a, Sigma)`` from ``N(b, Sigma)`` is ``alpha (a - b)' Sigma^{-1} (a - b) / 2``,
largest along the eigenvector of the smallest eigenvalue (Bun & Steinke 2016,
Prop. 1.6; Dong, Roth & Su 2022, Theorem 2.7 in the Mahalanobis norm).  A
singular ``Sigma`` protects only changes within its range, which the
document does not state: its claim is read unchecked.

The log density is scipy's (:class:`scipy.stats.multivariate_normal`,
pseudo-determinant and pseudo-inverse for a singular ``Sigma``).  Its
likelihood (:meth:`~invariantdp.families.NoiseFamily.likelihood`) is the
Gaussian form with the structure ``"correlated"``: the whole release is
observed at once, ``y ~ N(x, Sigma)``, as the likelihood models of
:mod:`invariantdp.inference` do.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .._validation import InvariantDPError, doc_error, doc_list, doc_numbers, doc_object, doc_path
from ..privacy import zcdp_log_delta
from ._calibration import gaussian_rho
from ._cell_noise import CellNoise
from ._claims import REL, check_recorded_eps_delta, overstated
from ._family import register_noise_family
from ._likelihood import GAUSSIAN_LIKELIHOOD, NoiseLikelihood

__all__ = ["CORRELATED_GAUSSIAN"]

#: relative tolerance of the symmetry and of a zero eigenvalue of ``Sigma``
_TOL = 1e-10


def _matrix(cov) -> np.ndarray:
    return np.asarray(cov, dtype=float)


def _smallest_eigenvalue(cov: np.ndarray) -> tuple[float, float]:
    lam = np.linalg.eigvalsh(cov)
    return float(lam[0]), float(lam[-1])


def _schema(params, path, ctx):
    doc_object(path, params, required=("cov",))
    cpath = doc_path(path, "cov")
    rows = doc_list(cpath, params["cov"], min_length=1)
    n = len(rows)
    if n * n > ctx.max_data:  # the entries are in the document: its size bounds them
        raise doc_error(cpath, f"{n} x {n}", f"holds more than {ctx.max_data} numbers.")
    for i, row in enumerate(rows):
        doc_numbers(doc_path(cpath, i), row, length=n)
    cov = _matrix(rows)
    scale = float(np.max(np.abs(cov)))
    if not np.all(np.abs(cov - cov.T) <= _TOL * scale):
        raise doc_error(cpath, f"{n} x {n}", "must be symmetric.")
    lo, hi = _smallest_eigenvalue(cov)
    if lo < -_TOL * max(hi, 0.0) or not hi > 0.0:
        raise doc_error(
            cpath,
            f"{n} x {n}",
            f"must be positive semi-definite with a positive eigenvalue "
            f"(smallest eigenvalue {lo:.6g}).",
        )
    info = {"dim": n}
    inv = ctx.invariants
    if inv is not None and inv.n_cells == n and lo <= _TOL * hi:
        # noise in the null space of C: the release keeps its invariants exactly
        kept = inv.project(cov)
        if np.all(np.abs(kept - cov) <= 1e-8 * scale):
            info["keeps_invariants"] = True
    return info


def _law(p):
    cov = _matrix(p["cov"])
    return stats.multivariate_normal(
        mean=np.zeros(cov.shape[0]), cov=0.5 * (cov + cov.T), allow_singular=True
    )


def _terms(given, invariants):
    """``cov`` as published (an array), and with an L2 ``sensitivity`` the zCDP it implies."""
    if "cov" not in given:
        raise InvariantDPError("correlated Gaussian noise takes its covariance `cov` (n x n).")
    cov = _matrix(given.pop("cov"))
    sens = given.pop("sensitivity", None)
    params = {"cov": cov.tolist()}
    if sens is None or cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        return params, None
    lo, hi = _smallest_eigenvalue(0.5 * (cov + cov.T))
    if not lo > _TOL * hi:
        return params, None  # singular: the changes it protects are not stated
    return params, ("zCDP", {"rho": gaussian_rho(sens, lo), "sensitivity": float(sens)})


def _claim(noise, definition, params, metadata) -> bool:
    """``rho >= Delta**2 / (2 lambda_min)``, ``mu >= Delta / sqrt(lambda_min)`` (module notes)."""
    sens = params.get("sensitivity", metadata.get("sensitivity"))
    ok = isinstance(sens, int | float) and not isinstance(sens, bool) and sens > 0
    if not ok or definition not in ("zCDP", "GDP"):
        return False
    lo, hi = _smallest_eigenvalue(_matrix(noise["cov"]))
    if not lo > _TOL * hi:
        return False
    if definition == "GDP":
        mu = sens / math.sqrt(lo)
        if params["mu"] < mu * (1 - REL):
            raise overstated(
                "mu",
                params["mu"],
                f"Gaussian noise of smallest variance {lo:.10g} with "
                f"sensitivity {sens:.10g} gives mu = {mu:.10g}.",
            )
        return True
    rho = gaussian_rho(sens, lo)  # a product inside: inf, not OverflowError, for a huge sens
    if params["rho"] < rho * (1 - REL):
        raise overstated(
            "rho",
            params["rho"],
            f"Gaussian noise of smallest variance {lo:.10g} with "
            f"sensitivity {sens:.10g} gives rho = {rho:.10g}.",
        )
    check_recorded_eps_delta(params, lambda e: zcdp_log_delta(rho, e), f"rho = {rho:.10g}")
    return True


def _likelihood(p, congenial):
    # the release is one correlated vector: observed whole, never coordinate by coordinate
    cov = _matrix(p["cov"])
    sd = math.sqrt(max(float(np.max(np.diag(cov))), 0.0))
    return NoiseLikelihood(GAUSSIAN_LIKELIHOOD, {"cov": cov}, structure="correlated", sd=sd)


def _cells(p):
    return CellNoise(None, covariance=_matrix(p["cov"]))


#: Gaussian noise ``N(0, Sigma)`` with the full covariance ``cov`` (module notes)
CORRELATED_GAUSSIAN = register_noise_family(
    "correlated_gaussian",
    _law,
    schema=_schema,
    terms=_terms,
    claim=_claim,
    likelihood=_likelihood,
    cells=_cells,
)
