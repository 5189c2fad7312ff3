"""Markov chain diagnostics of the congenial samplers (ArviZ ESS and R-hat).

References
----------
A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and P.-C. Buerkner (2021),
*Rank-normalization, folding, and localization: an improved R-hat for
assessing convergence of MCMC*, Bayesian Analysis 16(2).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..._deprecation import renamed_attribute
from ..._results import Summary, format_table

__all__ = ["SamplerDiagnostics"]


def _arviz_stat(fn, draws: np.ndarray) -> np.ndarray:
    """Per-coordinate ArviZ statistic of draws (chain, draw, d); nan when constant."""
    import arviz as az

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ds = az.convert_to_dataset({"s": draws})
        res = fn(ds)
        out = np.asarray(res["s"].values, dtype=float).reshape(-1)
    const = np.ptp(draws.reshape(-1, draws.shape[-1]), axis=0) == 0
    out[const] = np.nan
    return out


@dataclass(frozen=True)
class SamplerDiagnostics:
    """Markov chain diagnostics returned with the draws.

    Attributes
    ----------
    sampler : str
        ``"mis"``, ``"gibbs"`` or ``"exact"``.
    chains, draws, tune, thin : int
        Chains, retained draws per chain, discarded tuning draws, thinning
        (the old names ``n_chains``, ``n_draws``, ``n_tune`` are deprecated
        aliases).
    acceptance_rate : float
        Accepted proposals (MIS), line updates that moved (Gibbs), or 1 (exact).
    ess : numpy.ndarray
        Bulk effective sample size of each cell (ArviZ ``ess``, all chains);
        nan for cells that never moved.
    rhat : numpy.ndarray
        Rank-normalised split R-hat of each cell (ArviZ ``rhat``).
    elapsed : float
        Wall-clock seconds of sampling.

    ``ess_min``, ``rhat_max``, ``ess_per_second`` and ``ok`` are computed
    once, on first access.

    References
    ----------
    Gong & Meng (2020), Sec. 2.3 and Algorithm 1 (MCMC for the congenial release, whose output
    is only approximately a draw of the target); Vehtari et al. (2021),
    "Rank-normalization, folding, and localization: an improved R-hat",
    Bayesian Analysis 16(2) (bulk ESS and split R-hat).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> from invariantdp.mechanisms import conditional_release
    >>> res = conditional_release([30, 70], "laplace", Invariants(np.ones((1, 2))),
    ...                           epsilon=1.0, sensitivity=2.0, inequalities="nonnegative",
    ...                           sampler="gibbs", draws=200, chains=2, rng=0)
    >>> d = res.diagnostics
    >>> d.sampler, d.chains, d.draws, d.ess.shape, d.ok
    ('gibbs', 2, 200, (2,), True)
    """

    sampler: str
    chains: int
    draws: int
    tune: int
    thin: int
    acceptance_rate: float
    ess: np.ndarray
    rhat: np.ndarray
    elapsed: float

    n_chains = renamed_attribute("n_chains", "chains", "SamplerDiagnostics")
    n_draws = renamed_attribute("n_draws", "draws", "SamplerDiagnostics")
    n_tune = renamed_attribute("n_tune", "tune", "SamplerDiagnostics")

    @cached_property
    def ess_min(self) -> float:
        return float(np.nanmin(self.ess)) if np.any(np.isfinite(self.ess)) else float("nan")

    @cached_property
    def rhat_max(self) -> float:
        return float(np.nanmax(self.rhat)) if np.any(np.isfinite(self.rhat)) else float("nan")

    @cached_property
    def ess_per_second(self) -> float:
        """Smallest per-cell ESS divided by the sampling time."""
        return self.ess_min / self.elapsed if self.elapsed > 0 else float("inf")

    @cached_property
    def ok(self) -> bool:
        """R-hat below 1.01 and every ESS at least 100 (Vehtari et al. 2021)."""
        return bool(self.rhat_max < 1.01 and self.ess_min >= 100)

    def summary(self) -> Summary:
        return format_table(
            f"Sampler diagnostics ({self.sampler})",
            [
                ("chains x draws", f"{self.chains} x {self.draws}"),
                ("tuning draws", self.tune),
                ("thinning", self.thin),
                ("acceptance rate", self.acceptance_rate),
                ("min bulk ESS", self.ess_min),
                ("max R-hat", self.rhat_max),
                ("seconds", self.elapsed),
                ("min ESS per second", self.ess_per_second),
            ],
        )


def diagnose(sampler, draws, accept, elapsed, tune, thin) -> SamplerDiagnostics:
    """Diagnostics of ``draws`` (chain, draw, d); R-hat needs two chains or more."""
    import arviz as az

    C, n, _ = draws.shape
    ess = _arviz_stat(az.ess, draws)
    rhat = _arviz_stat(az.rhat, draws) if C > 1 else np.full(draws.shape[-1], np.nan)
    return SamplerDiagnostics(sampler, C, n, tune, thin, float(accept), ess, rhat, elapsed)
