"""Privacy definitions and accounting: tradeoff functions and conversions."""

from . import accounting, census, semi_adjacent, swapping, tradeoff
from .accounting import (
    approximate_dp_composition,
    approximate_dp_group_privacy,
    eps_delta_to_gdp,
    gdp_composition,
    gdp_group_privacy,
    gdp_log_delta,
    gdp_to_eps_delta,
    gdp_to_epsilon,
    gdp_to_zcdp,
    pure_dp_composition,
    pure_dp_group_privacy,
    pure_dp_to_zcdp,
    zcdp_composition,
    zcdp_group_privacy,
    zcdp_to_eps_delta,
)
from .census import (
    CensusSemiDPAnalysis,
    TopDownAccounting,
    census_semi_dp_analysis,
    topdown_privacy_accounting,
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
from .tradeoff import TradeoffFunction, as_tradeoff, eps_delta, gaussian, group

__all__ = [
    "accounting",
    "census",
    "semi_adjacent",
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
    "gaussian",
    "group",
    "tradeoff",
    "MinimumSwappingEpsilon",
    "largest_stratum",
    "min_swapping_epsilon",
    "swap_rate_for_epsilon",
    "swapping",
    "swapping_epsilon",
]
