"""Bayesian models in PyMC for releases with invariants (``pip install invariantdp[bayes]``).

Import explicitly: ``from invariantdp.inference import bayes``.

Modules: :mod:`.distributions` (mechanism likelihoods as PyMC
distributions, defined in :mod:`._scalar` and :mod:`._projected`),
:mod:`.models` (model builders; their shared parts in :mod:`._latent`, and
:func:`fit` in :mod:`._fit`) and :mod:`.sampler` (the lattice sampler of the
latent counts).
"""

from .distributions import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    ProjectedGaussian,
    Tulap,
    mechanism_likelihood,
    release_noise,
)
from .models import binomial_model, contingency_table_model, fit, poisson_regression_model
from .sampler import LatticeMetropolis, LatticeMoves, affine_counts, fibre_point

__all__ = [
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Gaussian",
    "Laplace",
    "ProjectedGaussian",
    "LatticeMetropolis",
    "LatticeMoves",
    "Tulap",
    "affine_counts",
    "binomial_model",
    "contingency_table_model",
    "fibre_point",
    "fit",
    "mechanism_likelihood",
    "poisson_regression_model",
    "release_noise",
]
