r"""Privacy accounting of the 2020 US Census products.

* :func:`census_semi_dp_analysis` -- the Semi-DP analysis of Cho & Awan,
  Section 6.1: the Census person tables are :math:`\rho`-zCDP with
  :math:`\rho = 2.56`, but with the state populations invariant the
  semi-adjacent parameter is :math:`a(t) = 2` (Theorem 16), so the release is
  only :math:`(D_t, A_2, a^2\rho = 10.24)`-zCDP (Lemma 39); at
  :math:`\delta = 10^{-10}` that is :math:`\epsilon = 40.95057` instead of the
  advertised :math:`17.91528` (Lemma 40).
* :func:`topdown_privacy_accounting` -- the zCDP budgets of the TopDown
  algorithm's noisy measurements for the P.L. 94-171 and DHC files and their
  :math:`(\epsilon, \delta)` conversion, Table 6.2 of Bailie, Gong & Meng.

References
----------
.. [1] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Section 6, Lemmas 39-40.
.. [2] Bailie, J., Gong, R. and Meng, X.-L. "Can swapping be differentially
   private? A refreshment stirred, not shaken", Section 6.1, Table 6.2.
.. [3] Abowd, J. et al. (2022). "The 2020 Census disclosure avoidance system
   TopDown algorithm", Harvard Data Science Review.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._results import Summary, format_table
from .._validation import (
    InvariantDPError,
    check_in_open_unit,
    check_positive,
    check_positive_int,
)
from ..privacy import zcdp_composition, zcdp_group_privacy, zcdp_to_eps_delta

#: the conversion of the papers' tables (Bun & Steinke 2016, Prop. 1.3), kept so that
#: the figures reproduce; zcdp_to_eps_delta defaults to the tighter CKS bound
_PAPERS_CONVERSION = "bun-steinke"

__all__ = [
    "TOPDOWN_RHO",
    "CensusSemiDPAnalysis",
    "TopDownAccounting",
    "census_semi_dp_analysis",
    "topdown_privacy_accounting",
]


@dataclass(frozen=True)
class CensusSemiDPAnalysis:
    r"""Result of :func:`census_semi_dp_analysis`.

    Attributes
    ----------
    rho : float
        Advertised zCDP parameter, :math:`(D, A_1, \rho)`-zCDP.
    a : int
        Semi-adjacent parameter a(t) of the invariant.
    delta : float
        ``delta`` of the :math:`(\epsilon, \delta)` conversion.
    semi_dp_rho : float
        :math:`a^2 \rho`, the :math:`(D_t, A_a, \cdot)`-zCDP parameter (Lemma 39).
    epsilon : float
        Advertised :math:`\epsilon = \rho + 2\sqrt{\rho \log(1/\delta)}` (Lemma 40).
    semi_dp_epsilon : float
        The same conversion applied to ``semi_dp_rho``.

    References
    ----------
    Cho & Awan, Section 6.1, Lemmas 39 and 40.

    Examples
    --------
    >>> res = census_semi_dp_analysis(rho=2.56, a=2, delta=1e-10)
    >>> res.a, round(res.semi_dp_rho, 9), round(res.semi_dp_epsilon, 2)
    (2, 10.24, 40.95)
    """

    rho: float
    a: int
    delta: float
    semi_dp_rho: float
    epsilon: float
    semi_dp_epsilon: float

    def summary(self) -> Summary:
        rows = [
            ("advertised rho-zCDP (D, A_1)", self.rho),
            ("semi-adjacent parameter a(t)", self.a),
            ("semi-DP rho = a^2 rho (D_t, A_a)", self.semi_dp_rho),
            ("delta", self.delta),
            ("advertised epsilon", f"{self.epsilon:.5f}"),
            ("semi-DP epsilon", f"{self.semi_dp_epsilon:.5f}"),
        ]
        notes = [
            "zCDP group privacy (Lemma 39): groups of size a pay a^2 rho.",
            "epsilon = rho + 2 sqrt(rho log(1/delta)) (Lemma 40, Bun & Steinke 2016).",
            "Cho & Awan, Section 6.1.",
        ]
        return format_table("Semi-DP analysis of a zCDP release with invariants", rows, notes)


def census_semi_dp_analysis(rho=2.56, a=2, delta=1e-10) -> CensusSemiDPAnalysis:
    r"""Semi-DP guarantee of a :math:`\rho`-zCDP release with invariants (Section 6.1).

    A mechanism that is :math:`\rho`-zCDP under the usual adjacency is, once
    invariant statistics with semi-adjacent parameter ``a`` are published,
    :math:`(D_t, A_a, a^2\rho)`-zCDP (Proposition 15 with zCDP group privacy,
    Lemma 39).  Both guarantees are converted to :math:`(\epsilon, \delta)`-DP
    by Lemma 40.  The defaults are the paper's: the person tables of the 2020
    Census Redistricting Data (:math:`\rho = 2.56`), the state population
    totals invariant (a single count per state, so :math:`a(t) = 2` by
    Theorem 16), :math:`\delta = 10^{-10}`.

    Parameters
    ----------
    rho : float, optional
        Advertised zCDP parameter, ``rho > 0``.
    a : int, optional
        Semi-adjacent parameter, ``a >= 1`` (see
        :mod:`invariantdp.privacy._semi_adjacent`).
    delta : float, optional
        ``0 < delta < 1``.

    Returns
    -------
    CensusSemiDPAnalysis

    References
    ----------
    Cho & Awan, Section 6.1, Lemmas 39 and 40; Abowd et al. (2022).

    Examples
    --------
    >>> from invariantdp.census._topdown_accounting import census_semi_dp_analysis
    >>> res = census_semi_dp_analysis(rho=2.56, a=2, delta=1e-10)
    >>> round(res.semi_dp_rho, 9), round(res.epsilon, 5), round(res.semi_dp_epsilon, 5)
    (10.24, 17.91528, 40.95057)
    """
    rho = check_positive("rho", rho)
    a = check_positive_int("a", a)
    delta = check_in_open_unit("delta", delta)
    semi_rho = zcdp_group_privacy(rho, a)
    return CensusSemiDPAnalysis(
        rho=rho,
        a=a,
        delta=delta,
        semi_dp_rho=semi_rho,
        epsilon=zcdp_to_eps_delta(rho, delta, method=_PAPERS_CONVERSION),
        semi_dp_epsilon=zcdp_to_eps_delta(semi_rho, delta, method=_PAPERS_CONVERSION),
    )


#: zCDP budgets of the TopDown noisy measurements, (file, privacy unit) -> rho,
#: as published (rounded to 2 decimals) in Bailie, Gong & Meng, Table 6.2,
#: from US Census Bureau (2023c).
TOPDOWN_RHO: dict[tuple[str, str], float] = {
    ("PL", "Household"): 0.07,
    ("PL", "Person"): 2.56,
    ("DHC", "Household"): 7.70,
    ("DHC", "Person"): 4.96,
}


@dataclass(frozen=True)
class TopDownAccounting:
    r"""Result of :func:`topdown_privacy_accounting`.

    Attributes
    ----------
    rows : tuple of (str, str, float, float)
        ``(file, unit, rho, epsilon)`` per mechanism.
    total_rho : float
        zCDP composition of all mechanisms, the sum of the ``rho``.
    total_epsilon : float
        ``total_rho`` converted at ``delta``.
    delta : float
        The ``delta`` of the :math:`(\epsilon, \delta)` conversions.

    References
    ----------
    Bailie, Gong & Meng, Section 6.1 and Table 6.2; Bun & Steinke (2016),
    Lemma 2.3 and Proposition 1.3.

    Examples
    --------
    >>> acc = topdown_privacy_accounting()
    >>> len(acc.rows), round(acc.total_rho, 2), round(acc.total_epsilon, 2)
    (4, 15.29, 52.82)
    """

    rows: tuple[tuple[str, str, float, float], ...]
    total_rho: float
    total_epsilon: float
    delta: float

    def summary(self) -> Summary:
        rows = []
        for file, unit, rho, eps in self.rows:
            rows.append((f"{file} {unit}: rho", rho))
            rows.append((f"{file} {unit}: epsilon", f"{eps:.2f}"))
        rows += [("Total: rho", self.total_rho), ("Total: epsilon", f"{self.total_epsilon:.2f}")]
        rows.append(("delta", self.delta))
        notes = [
            "rho add under composition (Bun & Steinke 2016, Lemma 2.3);",
            "epsilon = rho + 2 sqrt(rho log(1/delta)) (Prop. 1.3).",
            "Bailie, Gong & Meng, Table 6.2 (US Census Bureau 2023c).",
        ]
        return format_table("TopDown algorithm privacy-loss budget (zCDP)", rows, notes)


def topdown_privacy_accounting(rho=None, delta=1e-10) -> TopDownAccounting:
    r"""zCDP accounting of the 2020 Census TopDown algorithm (swapping paper, Table 6.2).

    Each noisy-measurement mechanism of TopDown is :math:`\rho`-zCDP
    (discrete Gaussian noise); the budgets compose by addition and every
    :math:`\rho` converts to :math:`(\epsilon, \delta)`-DP by
    :math:`\epsilon = \rho + 2\sqrt{\rho\log(1/\delta)}`.

    The published :math:`\rho` are rounded to two decimals, so the
    recomputed :math:`\epsilon` match the table up to that rounding (e.g.
    :math:`\rho = 0.07` gives 2.61 where the table, computed from the
    unrounded budget, prints 2.70).

    Parameters
    ----------
    rho : dict, optional
        ``{(file, unit): rho}``; defaults to :data:`TOPDOWN_RHO`.
    delta : float, optional
        ``0 < delta < 1``; the table uses ``1e-10``.

    Returns
    -------
    TopDownAccounting

    References
    ----------
    Bailie, Gong & Meng, Section 6.1 and Table 6.2; Bun & Steinke (2016),
    Lemma 2.3 and Proposition 1.3.

    Examples
    --------
    >>> from invariantdp.census._topdown_accounting import topdown_privacy_accounting
    >>> acc = topdown_privacy_accounting()
    >>> round(acc.total_rho, 2), round(acc.total_epsilon, 2)
    (15.29, 52.82)
    """
    budgets = dict(TOPDOWN_RHO if rho is None else rho)
    if not budgets:
        raise InvariantDPError("`rho` ({}) must name at least one mechanism.")
    delta = check_in_open_unit("delta", delta)
    rows = []
    for key, r in budgets.items():
        file, unit = key if isinstance(key, tuple) else (str(key), "")
        r = check_positive(f"rho[{key!r}]", r)
        rows.append((file, unit, r, zcdp_to_eps_delta(r, delta, method=_PAPERS_CONVERSION)))
    total = zcdp_composition([r for _, _, r, _ in rows])
    return TopDownAccounting(
        rows=tuple(rows),
        total_rho=total,
        total_epsilon=zcdp_to_eps_delta(total, delta, method=_PAPERS_CONVERSION),
        delta=delta,
    )
