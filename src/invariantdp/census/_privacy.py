r"""The privacy guarantee of a set of noisy measurements (zCDP, bounded neighbours).

A person is counted in one unit per geographic level and, within it, in one
cell of every marginal query.  Under *bounded* adjacency (one record changed,
the Bureau's choice) a marginal query's :math:`\ell_2` sensitivity is
:math:`\sqrt 2` (one cell loses a person, another gains one), so discrete
Gaussian noise of variance parameter :math:`\sigma^2` on it is
:math:`\rho = \Delta_2^2 / (2\sigma^2) = 1/\sigma^2`-zCDP (Canonne, Kamath &
Steinke 2020, Theorem 4).  Units of one level hold disjoint persons (parallel
composition: the largest :math:`\rho` of the level's units counts); queries
and levels compose by adding :math:`\rho`.

The equality invariants are published exactly and are *not* covered by this
guarantee: with invariants the guarantee holds only among data sets that share
them (Cho & Awan, Section 6; :func:`invariantdp.census.census_semi_dp_analysis`).

References
----------
Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
privacy", Theorem 4; Bun & Steinke (2016), Lemma 2.3 (composition);
Bailie, Gong & Meng, Section 6.1 (the 2020 Census budgets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._results import Summary, format_table
from ..families import gaussian_rho
from ..privacy import zcdp_composition, zcdp_to_eps_delta

__all__ = ["BOUNDED_SENSITIVITY", "SENSITIVITY_SQUARED", "CensusPrivacy"]

#: squared l2 sensitivity of a marginal query when one record changes (bounded neighbours)
SENSITIVITY_SQUARED = 2.0
#: l2 sensitivity of a marginal query when one record changes (bounded neighbours)
BOUNDED_SENSITIVITY = float(np.sqrt(SENSITIVITY_SQUARED))


@dataclass(frozen=True)
class CensusPrivacy:
    r"""zCDP guarantee of noisy measurements: ``rho`` composed over levels and queries.

    Attributes
    ----------
    rho : float
        Total zCDP parameter.
    rho_by_query : dict
        ``{(level, query): rho}``, the largest over the level's units.
    adjacency : str
        ``"bounded (one record changed)"``.
    sensitivity : float
        :math:`\ell_2` sensitivity of every marginal query, :math:`\sqrt 2`.
    noise : str
        The noise law's family name (``"discrete_gaussian"``).

    References
    ----------
    Canonne, Kamath & Steinke (2020), Theorem 4; Bun & Steinke (2016), Lemma 2.3.

    Examples
    --------
    >>> p = CensusPrivacy.from_variances({("State", "total"): [1.0], ("County", "total"): [4.0]})
    >>> p.rho
    1.25
    >>> round(p.epsilon(1e-10), 4) == round(zcdp_to_eps_delta(1.25, 1e-10), 4)
    True
    """

    rho: float
    rho_by_query: dict
    adjacency: str = "bounded (one record changed)"
    sensitivity: float = BOUNDED_SENSITIVITY
    noise: str = "discrete_gaussian"

    @classmethod
    def from_variances(cls, variances: dict, noise: str = "discrete_gaussian") -> CensusPrivacy:
        """From ``{(level, query): variance parameters sigma^2 of its units}``."""
        by_query = {}
        for key, var in variances.items():
            var = np.asarray(var, dtype=float)
            if var.size:  # variances are > 0: a variance of 0 is an invariant, not a measurement
                by_query[key] = gaussian_rho(
                    None, float(var.min()), sensitivity_squared=SENSITIVITY_SQUARED
                )
        total = zcdp_composition(list(by_query.values())) if by_query else 0.0
        return cls(rho=float(total), rho_by_query=by_query, noise=noise)

    def epsilon(self, delta: float, *, method: str = "cks") -> float:
        r"""The :math:`(\epsilon, \delta)`-DP conversion of :attr:`rho` (the package's)."""
        return zcdp_to_eps_delta(self.rho, delta, method=method)

    def summary(self, delta: float = 1e-10) -> Summary:
        rows = [(f"rho: {lev}, {q}", r) for (lev, q), r in self.rho_by_query.items()]
        rows += [
            ("total rho (zCDP)", self.rho),
            (f"epsilon at delta={delta:g}", self.epsilon(delta)),
            ("adjacency", self.adjacency),
            ("l2 sensitivity of a marginal query", self.sensitivity),
        ]
        notes = [
            "rho = sensitivity^2 / (2 sigma^2) per query (CKS 2020, Thm 4); levels and",
            "queries add, units of one level are disjoint (Bun & Steinke 2016).",
            "Invariants are published exactly and are not covered (Cho & Awan, Sec. 6).",
        ]
        return format_table("Privacy of the noisy measurements", rows, notes)
