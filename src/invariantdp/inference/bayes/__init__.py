"""Bayesian models in PyMC for releases with invariants (``pip install invariantdp[bayes]``).

Import explicitly: ``from invariantdp.inference import bayes``.

Modules: :mod:`._pymc_likelihoods` (mechanism likelihoods as PyMC
distributions, the law of a release given the confidential value:
``TulapLikelihood``, ``LaplaceLikelihood``, ``GaussianLikelihood``,
``DiscreteLaplaceLikelihood``, ``DiscreteGaussianLikelihood`` and
``FormLikelihood``, the base of a user family's likelihood, defined in
:mod:`._scalar`, ``ProjectedGaussianLikelihood`` in :mod:`._projected`),
:mod:`._model_builders` (model builders; their shared parts in :mod:`._latent`; the
area-level :func:`fay_herriot_model` in :mod:`._area_models`; and
:func:`fit` in :mod:`._fit`) and :mod:`._latent_samplers` (the lattice sampler of the
latent counts).

The likelihood classes were called ``Tulap``, ``Laplace``, ``Gaussian``,
``DiscreteLaplace``, ``DiscreteGaussian`` and ``ProjectedGaussian`` in 0.1.0;
those names still work here with a ``DeprecationWarning``.
"""

from ..._deprecation import moved_names
from . import _requirements  # noqa: F401 - first: names the extra when PyMC is missing
from ._area_models import fay_herriot_model
from ._latent_samplers import (
    DirichletGibbs,
    LatticeMetropolis,
    LatticeMoves,
    affine_counts,
    fibre_point,
)
from ._model_builders import binomial_model, contingency_table_model, fit, poisson_regression_model
from ._projected import ProjectedGaussianLikelihood
from ._pymc_likelihoods import likelihood_class, mechanism_likelihood, release_noise
from ._scalar import (
    DiscreteGaussianLikelihood,
    DiscreteLaplaceLikelihood,
    FormLikelihood,
    GaussianLikelihood,
    LaplaceLikelihood,
    TulapLikelihood,
)

__all__ = [
    "DirichletGibbs",
    "DiscreteGaussianLikelihood",
    "DiscreteLaplaceLikelihood",
    "FormLikelihood",
    "GaussianLikelihood",
    "LaplaceLikelihood",
    "LatticeMetropolis",
    "LatticeMoves",
    "ProjectedGaussianLikelihood",
    "TulapLikelihood",
    "affine_counts",
    "binomial_model",
    "contingency_table_model",
    "fay_herriot_model",
    "fibre_point",
    "fit",
    "likelihood_class",
    "mechanism_likelihood",
    "poisson_regression_model",
    "release_noise",
]

# the names of 0.1.0: the classes are the law of the release given the
# confidential value, not the noise law (``distributions.tulap``) or the
# mechanism (``mechanisms.tulap_mechanism``)
__getattr__ = moved_names(
    __name__,
    {
        "Tulap": TulapLikelihood,
        "Laplace": LaplaceLikelihood,
        "Gaussian": GaussianLikelihood,
        "DiscreteLaplace": DiscreteLaplaceLikelihood,
        "DiscreteGaussian": DiscreteGaussianLikelihood,
        "ProjectedGaussian": ProjectedGaussianLikelihood,
    },
)
