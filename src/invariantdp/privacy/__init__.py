"""Privacy definitions and accounting: tradeoff functions and conversions.

Everything is imported from here (``from invariantdp.privacy import ...``);
the private modules hold one concept each: tradeoff functions of f-DP
(``_tradeoff``), Gaussian DP and its exact link to (epsilon, delta)-DP
(``_gdp``), zero-concentrated DP (``_zcdp``), pure and approximate DP
(``_approximate_dp``), the exact privacy profiles of Laplace noise
(``_profiles``), the neighbours a guarantee is for (``_adjacency``), the
semi-adjacent parameter of invariants (``_semi_adjacent``) and the epsilon of
data swapping (``_swapping_epsilon``).
The 2020 Census accounting lives in :mod:`invariantdp.census`.

A tradeoff function is named for what it is: the short name of a law denotes
the law, its tradeoff function is ``<law>_tradeoff`` (``gaussian_tradeoff``;
``gaussian`` is a deprecated alias).
"""

from .._deprecation import moved_names
from ._adjacency import ADJACENCY_NORMS, QueryAdjacency
from ._approximate_dp import (
    approximate_dp_composition,
    approximate_dp_group_privacy,
    pure_dp_composition,
    pure_dp_group_privacy,
)
from ._gdp import (
    eps_delta_to_gdp,
    gdp_composition,
    gdp_group_privacy,
    gdp_log_delta,
    gdp_to_eps_delta,
    gdp_to_epsilon,
)
from ._profiles import discrete_laplace_delta, laplace_delta
from ._semi_adjacent import (
    one_way_margins_semi_adjacent_parameter,
    semi_adjacent_parameter,
    semi_adjacent_upper_bound,
)
from ._swapping_epsilon import (
    MinimumSwappingEpsilon,
    largest_stratum,
    min_swapping_epsilon,
    swap_rate_for_epsilon,
    swapping_epsilon,
)
from ._tradeoff import TradeoffFunction, as_tradeoff, eps_delta, gaussian_tradeoff, group
from ._tradeoff import gaussian as gaussian  # deprecated alias, not in __all__
from ._zcdp import (
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
    "ADJACENCY_NORMS",
    "QueryAdjacency",
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
    "discrete_laplace_delta",
    "laplace_delta",
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

# the 2020 Census accounting moved to invariantdp.census (one home per concept)
__getattr__ = moved_names(
    __name__,
    {
        name: f"invariantdp.census.{name}"
        for name in (
            "CensusSemiDPAnalysis",
            "TopDownAccounting",
            "census_semi_dp_analysis",
            "topdown_privacy_accounting",
        )
    },
)
