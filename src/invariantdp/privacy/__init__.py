"""Privacy definitions and accounting: tradeoff functions and conversions.

One module per concept: :mod:`.tradeoff` (tradeoff functions of f-DP),
:mod:`.gdp` (Gaussian DP and its exact link to (epsilon, delta)-DP),
:mod:`.zcdp` (zero-concentrated DP), :mod:`.approximate_dp` (pure and
approximate DP), gathered again in :mod:`.accounting`; :mod:`.semi_adjacent`
(the semi-adjacent parameter of invariants), :mod:`.census` (the 2020 Census
analyses) and :mod:`.swapping` (the epsilon of data swapping).

A tradeoff function is named for what it is: the short name of a law denotes
the law, its tradeoff function is ``<law>_tradeoff`` (``gaussian_tradeoff``;
``gaussian`` is a deprecated alias).
"""

from . import (
    accounting,
    approximate_dp,
    census,
    gdp,
    semi_adjacent,
    swapping,
    tradeoff,
    zcdp,
)
from .approximate_dp import (
    approximate_dp_composition,
    approximate_dp_group_privacy,
    pure_dp_composition,
    pure_dp_group_privacy,
)
from .census import (
    CensusSemiDPAnalysis,
    TopDownAccounting,
    census_semi_dp_analysis,
    topdown_privacy_accounting,
)
from .gdp import (
    eps_delta_to_gdp,
    gdp_composition,
    gdp_group_privacy,
    gdp_log_delta,
    gdp_to_eps_delta,
    gdp_to_epsilon,
)
from .semi_adjacent import (
    one_way_margins_semi_adjacent_parameter,
    semi_adjacent_parameter,
    semi_adjacent_upper_bound,
)
from .swapping import (
    MinimumSwappingEpsilon,
    largest_stratum,
    min_swapping_epsilon,
    swap_rate_for_epsilon,
    swapping_epsilon,
)
from .tradeoff import TradeoffFunction, as_tradeoff, eps_delta, gaussian_tradeoff, group
from .tradeoff import gaussian as gaussian  # deprecated alias, not in __all__
from .zcdp import (
    ZCDP_CONVERSIONS,
    gdp_to_zcdp,
    pure_dp_to_zcdp,
    zcdp_composition,
    zcdp_group_privacy,
    zcdp_log_delta,
    zcdp_to_eps_delta,
    zcdp_tradeoff,
)

__all__ = [
    "accounting",
    "approximate_dp",
    "census",
    "gdp",
    "semi_adjacent",
    "tradeoff",
    "swapping",
    "zcdp",
    "approximate_dp_composition",
    "approximate_dp_group_privacy",
    "pure_dp_composition",
    "pure_dp_group_privacy",
    "eps_delta_to_gdp",
    "gdp_composition",
    "gdp_group_privacy",
    "gdp_log_delta",
    "gdp_to_eps_delta",
    "gdp_to_epsilon",
    "ZCDP_CONVERSIONS",
    "gdp_to_zcdp",
    "pure_dp_to_zcdp",
    "zcdp_composition",
    "zcdp_group_privacy",
    "zcdp_log_delta",
    "zcdp_to_eps_delta",
    "zcdp_tradeoff",
    "CensusSemiDPAnalysis",
    "TopDownAccounting",
    "census_semi_dp_analysis",
    "topdown_privacy_accounting",
    "one_way_margins_semi_adjacent_parameter",
    "semi_adjacent_parameter",
    "semi_adjacent_upper_bound",
    "TradeoffFunction",
    "as_tradeoff",
    "eps_delta",
    "gaussian_tradeoff",
    "group",
    "MinimumSwappingEpsilon",
    "largest_stratum",
    "min_swapping_epsilon",
    "swap_rate_for_epsilon",
    "swapping_epsilon",
]
