"""Mechanisms that produce a :class:`~invariantdp.Release` (or a subclass of it).

Every mechanism returns a :class:`~invariantdp.Release`:
:func:`conditional_release` a :class:`ConditionalRelease` (with its draws and
sampler diagnostics) and :func:`permutation_swap` a :class:`SwapResult` (with
the swapped microdata); both are Releases, and save and load as plain ones.
The one exception is :func:`distributed_privatize`, which returns one agent's
share of a release (Algorithm 4 of Gao, Gong & Yu): the shares together are
the release of the central mechanism.
Every mechanism is listed, with its noise family and calibration, in
:data:`MECHANISMS` (:mod:`._registry`; :func:`find_mechanism` looks one up
by name or alias), the one vocabulary of mechanism names.  The noise laws
:class:`~invariantdp.distributions.KNormNoise` and
:class:`~invariantdp.distributions.SubspaceNoise` live with the other laws
in :mod:`invariantdp.distributions` (their names here are deprecated).
A mechanism named after its noise law has the suffix ``_mechanism``
(:func:`laplace_mechanism`, :func:`tulap_mechanism`, ...): the short name
(``invariantdp.distributions.tulap``) is the law.  The old names ``laplace``,
``gaussian``, ``discrete_laplace``, ``discrete_gaussian`` and ``tulap`` are
deprecated aliases of the mechanisms, kept for one release.

Modules: :mod:`._additive` (Laplace, Gaussian), :mod:`._integer_noise` (discrete
Laplace, discrete Gaussian, Tulap), :mod:`._knorm_mechanisms` (l_p and K-norm),
:mod:`._subspace_mechanisms` (projected and extended, Gao, Gong & Yu), :mod:`._semi_dp`
and :mod:`._odds_ratio_release` (Cho & Awan), :mod:`._congenial` (Gong & Meng),
:mod:`._permutation_swap` (Bailie, Gong & Meng); what they share, including the one
constructor of their releases, is in :mod:`._base`.
"""

# The 0.1.0 module path knorm is imported first, so that importing it later does not
# rebind the package's `knorm` (bound below) to the module.
from . import knorm as _knorm_module_path  # noqa: F401

# isort: split

from .._deprecation import moved_names
from ._additive import gaussian_mechanism, laplace_mechanism
from ._congenial import (
    ConditionalRelease,
    LinearInequalities,
    SamplerDiagnostics,
    conditional_release,
    l1_postprocess,
    l1_privacy_level,
    l2_postprocess,
)
from ._distributed import distributed_privatize
from ._integer_noise import discrete_gaussian_mechanism, discrete_laplace_mechanism, tulap_mechanism
from ._knorm_mechanisms import knorm, lp_mechanism
from ._odds_ratio_release import odds_ratio_release
from ._permutation_swap import (
    SwappingInvariants,
    SwapResult,
    permutation_swap,
    swapping_invariants,
    swapping_mape,
    table_on_release_cells,
)
from ._registry import MECHANISMS, Mechanism, find_mechanism
from ._semi_dp import semi_dp_gaussian, semi_dp_knorm
from ._subspace_mechanisms import (
    extended_gaussian,
    extended_laplace,
    projected_gaussian,
    projected_laplace,
)

# isort: split
# Helpers the package's neighbours in invariantdp import from here, since a
# private module is imported only inside its package.  Not public (not in __all__).
from ._base import SECURE as SECURE
from ._base import SIMULATION as SIMULATION
from ._base import randomness_note as randomness_note
from ._side_channels import INTEGER_LIMIT as INTEGER_LIMIT

__all__ = [
    "ConditionalRelease",
    "LinearInequalities",
    "SamplerDiagnostics",
    "conditional_release",
    "l1_postprocess",
    "l1_privacy_level",
    "l2_postprocess",
    "MECHANISMS",
    "Mechanism",
    "find_mechanism",
    "discrete_gaussian_mechanism",
    "discrete_laplace_mechanism",
    "distributed_privatize",
    "extended_gaussian",
    "extended_laplace",
    "gaussian_mechanism",
    "knorm",
    "laplace_mechanism",
    "lp_mechanism",
    "projected_gaussian",
    "projected_laplace",
    "semi_dp_gaussian",
    "semi_dp_knorm",
    "tulap_mechanism",
    "odds_ratio_release",
    "SwapResult",
    "SwappingInvariants",
    "permutation_swap",
    "swapping_invariants",
    "swapping_mape",
    "table_on_release_cells",
]

# the mechanisms' old names, which the noise laws now own (invariantdp.distributions), and
# the noise laws that lived here
__getattr__ = moved_names(
    __name__,
    {
        "laplace": laplace_mechanism,
        "gaussian": gaussian_mechanism,
        "discrete_laplace": discrete_laplace_mechanism,
        "discrete_gaussian": discrete_gaussian_mechanism,
        "tulap": tulap_mechanism,
        "KNormNoise": "invariantdp.distributions.KNormNoise",
        "SubspaceNoise": "invariantdp.distributions.SubspaceNoise",
        "ConvergenceWarning": "invariantdp.exceptions.ConvergenceWarning",
    },
)
