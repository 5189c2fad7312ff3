r"""Privacy accounting: conversions, group privacy and composition, in one namespace.

The functions live by privacy definition in :mod:`invariantdp.privacy.gdp`,
:mod:`invariantdp.privacy.zcdp` and :mod:`invariantdp.privacy.approximate_dp`;
this module gathers them (``from invariantdp.privacy.accounting import ...``
keeps working).

Three privacy definitions are tracked by a single number each:

* pure :math:`\epsilon`-DP (and approximate :math:`(\epsilon, \delta)`-DP),
* :math:`\mu`-Gaussian DP (GDP, Dong, Roth & Su 2022), the tradeoff function
  :math:`G_\mu`,
* :math:`\rho`-zero-concentrated DP (zCDP, Bun & Steinke 2016), used by the
  2020 Census TopDown algorithm.

The exact link between GDP and :math:`(\epsilon, \delta)`-DP is the relation of
Balle & Wang (2018, Thm. 8), also Dong, Roth & Su (2022, Cor. 2.13):

.. math:: \delta_\mu(\epsilon) = \Phi\!\left(-\frac{\epsilon}{\mu} + \frac{\mu}{2}\right)
          - e^{\epsilon}\,\Phi\!\left(-\frac{\epsilon}{\mu} - \frac{\mu}{2}\right),

a mechanism is :math:`\mu`-GDP if and only if it is
:math:`(\epsilon, \delta_\mu(\epsilon))`-DP for every :math:`\epsilon \ge 0`.
It is evaluated (in :mod:`~invariantdp.privacy.gdp`) in log space, so that
:math:`\delta` far below the smallest double (large :math:`\epsilon`) keeps
full relative accuracy, and inverted in either argument by bracketed root
finding.  zCDP converts to :math:`(\epsilon, \delta)`-DP by the tight bound of
Canonne, Kamath & Steinke (2020, Cor. 13) by default, or by Bun & Steinke's
closed form (``method="bun-steinke"``), which the Census figures use.

Every function gives a finite answer for every finite positive input, or an
:class:`~invariantdp.exceptions.InvariantDPError` when the answer is not a
finite double (``gdp_to_zcdp(1e300)``), or when rounding it would understate
the privacy loss (a ``rho`` that underflows to 0).

References
----------
.. [1] Balle, B. and Wang, Y.-X. (2018). "Improving the Gaussian mechanism for
   differential privacy: analytical calibration and optimal denoising", ICML,
   Theorem 8.
.. [2] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential privacy",
   JRSS-B 84(1), Corollaries 2.13 and 3.3, Theorem 2.14 (group privacy).
.. [3] Bun, M. and Steinke, T. (2016). "Concentrated differential privacy:
   simplifications, extensions, and lower bounds", TCC, Propositions 1.3, 1.4,
   1.6 and 27 and Lemma 2.3.
.. [4] Canonne, C., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
   for differential privacy", NeurIPS, Corollary 13 (tight zCDP conversion).
.. [5] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Section 6 (zCDP group privacy for the 2020 Census).
"""

from __future__ import annotations

from .approximate_dp import (
    approximate_dp_composition,
    approximate_dp_group_privacy,
    pure_dp_composition,
    pure_dp_group_privacy,
)
from .gdp import (
    eps_delta_to_gdp,
    gdp_composition,
    gdp_group_privacy,
    gdp_log_delta,
    gdp_to_eps_delta,
    gdp_to_epsilon,
)
from .zcdp import (
    gdp_to_zcdp,
    pure_dp_to_zcdp,
    zcdp_composition,
    zcdp_group_privacy,
    zcdp_to_eps_delta,
)

__all__ = [
    "approximate_dp_composition",
    "approximate_dp_group_privacy",
    "eps_delta_to_gdp",
    "gdp_composition",
    "gdp_group_privacy",
    "gdp_log_delta",
    "gdp_to_eps_delta",
    "gdp_to_epsilon",
    "gdp_to_zcdp",
    "pure_dp_composition",
    "pure_dp_group_privacy",
    "pure_dp_to_zcdp",
    "zcdp_composition",
    "zcdp_group_privacy",
    "zcdp_to_eps_delta",
]
