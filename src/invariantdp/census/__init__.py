r"""Census noisy measurements: read them, simulate them, turn them into estimates.

The 2020 Census's differentially private output in the form that keeps the
noise analysable is the Bureau's *noisy measurement file*: for every unit of
every geographic level, marginal queries of its detailed histogram with
discrete Gaussian noise, and the constraints (invariants, structural zeros).

* Data model: :class:`Schema` (:data:`PL94` and :data:`PL94_UNITS` built
  in, with the Bureau's recodes), :class:`Geography`,
  :class:`NoisyMeasurements` (with its :class:`CensusPrivacy`).
* Curator: :func:`measure` -- noisy measurements of confidential counts;
  :data:`PL94_2020_STRATEGY` -- the 2020 production budgets
  (:class:`CensusStrategy`, :class:`ReleaseStrategy`).
* Files: :func:`read_nmf`, :meth:`NoisyMeasurements.to_nmf` (the layout of
  the Bureau's 2020 release: products, state partitions, named constraints);
  :class:`NMFParts` -- a file read lazily, solved county by county or state
  by state on Dask (:class:`PartsEstimate`).
* Analyst: :func:`gls` -- best linear unbiased estimates of every count with
  exact standard errors (:class:`GLSEstimate`), invariants imposed exactly,
  in time linear in the number of units.
* Publication: :func:`topdown_postprocess` -- the non-negative, integer,
  consistent histograms a TopDown-like post-processing makes of the
  measurements (:class:`TopDownHistograms`), for comparison.
* Accounting: :func:`topdown_privacy_accounting` (the 2020 Census TopDown
  budgets, Bailie, Gong & Meng Table 6.2) and :func:`census_semi_dp_analysis`
  (Cho & Awan Sec. 6.1).

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164; Abowd et al. (2022), "The 2020 Census disclosure
avoidance system TopDown algorithm".
"""

from ._curator import measure
from ._estimate import GLSEstimate, gls
from ._geography import Geography
from ._measurements import NoisyMeasurements
from ._nmf_parts import NMFParts, PartsEstimate
from ._nmf_read import read_nmf
from ._privacy import CensusPrivacy
from ._schema import PL94, PL94_UNITS, Schema
from ._strategy import PL94_2020_STRATEGY, CensusStrategy, ReleaseStrategy
from ._topdown import MAX_COUPLED_CELLS, TopDownHistograms, topdown_postprocess
from ._topdown_accounting import (
    TOPDOWN_RHO,
    CensusSemiDPAnalysis,
    TopDownAccounting,
    census_semi_dp_analysis,
    topdown_privacy_accounting,
)

__all__ = [
    "MAX_COUPLED_CELLS",
    "TOPDOWN_RHO",
    "CensusSemiDPAnalysis",
    "TopDownAccounting",
    "census_semi_dp_analysis",
    "topdown_privacy_accounting",
    "PL94",
    "PL94_UNITS",
    "PL94_2020_STRATEGY",
    "CensusStrategy",
    "ReleaseStrategy",
    "CensusPrivacy",
    "GLSEstimate",
    "Geography",
    "NMFParts",
    "NoisyMeasurements",
    "PartsEstimate",
    "Schema",
    "TopDownHistograms",
    "gls",
    "measure",
    "read_nmf",
    "topdown_postprocess",
]
