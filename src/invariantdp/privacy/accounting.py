r"""Privacy accounting: conversions, group privacy and composition, in one namespace.

Three privacy definitions are tracked by a single number each, one module
per definition:

* :mod:`invariantdp.privacy.gdp` -- :math:`\mu`-Gaussian DP (Dong, Roth &
  Su 2022) and its exact link to :math:`(\epsilon, \delta)`-DP (Balle & Wang
  2018, Thm. 8), evaluated in log space;
* :mod:`invariantdp.privacy.zcdp` -- :math:`\rho`-zero-concentrated DP (Bun &
  Steinke 2016), used by the 2020 Census TopDown algorithm, with the tight
  conversion of Canonne, Kamath & Steinke (2020, Cor. 13) by default and Bun &
  Steinke's closed form on request (``method="bun-steinke"``);
* :mod:`invariantdp.privacy.approximate_dp` -- pure :math:`\epsilon`-DP and
  approximate :math:`(\epsilon, \delta)`-DP.

This module gathers their functions, so that
``from invariantdp.privacy.accounting import ...`` keeps working.  Every
function gives a finite answer for every finite positive input, or an
:class:`~invariantdp.exceptions.InvariantDPError` when the answer is not a
finite double (``gdp_to_zcdp(1e300)``), or when rounding it would understate
the privacy loss (a ``rho`` that underflows to 0).
"""

from __future__ import annotations

from . import approximate_dp, gdp, zcdp
from .approximate_dp import *  # noqa: F403 - a namespace gathering the three modules
from .gdp import *  # noqa: F403
from .zcdp import *  # noqa: F403

__all__ = sorted({*approximate_dp.__all__, *gdp.__all__, *zcdp.__all__})
