"""Mechanism likelihoods as PyMC distributions.

Each class is a thin factory around :class:`pymc.CustomDist`: calling it inside
a model creates a random variable, usually the *observed* node of a released
value given the latent confidential value ``mu``; ``.dist(...)`` creates an
unnamed distribution (for :func:`pymc.logp` and :func:`pymc.draw`).  The noise
parameters are public constants of the release (the mechanism is public:
Gong & Meng, Section 1.4, "statistical intelligibility"), so they are Python
floats, not random variables; only the location ``mu`` may be a tensor.

==================================  ===========================================  ======
class                               density of the release ``y`` given ``mu``    logcdf
==================================  ===========================================  ======
:class:`TulapLikelihood`            Tulap(mu, b, q) with ``scale``               yes
:class:`LaplaceLikelihood`          Laplace(mu, scale)                           yes
:class:`DiscreteLaplaceLikelihood`  double geometric, ``P(k) ∝ exp(-|k-mu|/t)``  yes
:class:`DiscreteGaussianLikelihood` ``P(k) ∝ exp(-(k-mu)^2 / (2 sigma^2))``      no
:class:`GaussianLikelihood`         Normal(mu, sigma)                            yes
:class:`ProjectedGaussianLikelihood` ``mu + Pi_N e``, ``e ~ N(0, sigma^2 I)``    no
==================================  ===========================================  ======

:class:`ProjectedGaussianLikelihood` is the degenerate multivariate normal of the
projected (equivalently, by Gao, Gong & Yu, Theorem 22, the conditioned)
Gaussian mechanism: its log density is taken with respect to Lebesgue measure
on the affine space ``mu + ker C`` and evaluated in null-space coordinates,
``z = Q_N^T (y - mu) ~ N(0, sigma^2 I_{n - rank C})``; it is ``-inf`` off the
space.

:func:`mechanism_likelihood` builds the right one from a
:class:`~invariantdp.Release`.  The scalar classes are defined in
:mod:`._scalar`, :class:`ProjectedGaussianLikelihood` in :mod:`._projected`; this
module maps a release's noise law to them through its noise family
(:meth:`NoiseFamily.likelihood <invariantdp.families.NoiseFamily.likelihood>`):
each class holds the :class:`~invariantdp.families.LikelihoodForm` it
implements, and the form of a user family, which carries its own ``logp``,
gets a :class:`~._scalar.FormLikelihood` built from it.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._bounded_cache import bounded_cache
from ..._validation import InvariantDPError
from ...families import LikelihoodForm, NoiseLikelihood
from ...release import Release
from ._projected import ProjectedGaussianLikelihood
from ._scalar import (
    DiscreteGaussianLikelihood,
    DiscreteLaplaceLikelihood,
    FormLikelihood,
    GaussianLikelihood,
    LaplaceLikelihood,
    TulapLikelihood,
)

__all__ = [
    "DiscreteGaussianLikelihood",
    "DiscreteLaplaceLikelihood",
    "GaussianLikelihood",
    "LaplaceLikelihood",
    "ProjectedGaussianLikelihood",
    "TulapLikelihood",
    "likelihood_class",
    "mechanism_likelihood",
    "release_noise",
]


def release_noise(release) -> NoiseLikelihood:
    """How the models observe ``release``: its noise family's :class:`NoiseLikelihood`.

    The PyMC distribution, its parameters and the structure of the noise come
    from :meth:`NoiseFamily.likelihood <invariantdp.families.NoiseFamily.likelihood>`
    of the release's noise family.  Congenial releases (Gong & Meng)
    conditioned on equality invariants map to the likelihood of their
    unconstrained noise (its normaliser is constant on the fibre), and a
    conditioned Gaussian maps to the projected Gaussian (Gao, Gong & Yu,
    Theorem 22).  A release conditioned on *inequalities* has a normaliser
    that depends on the confidential value; see :func:`mechanism_likelihood`.

    Parameters
    ----------
    release : Release

    Returns
    -------
    NoiseLikelihood

    Raises
    ------
    TypeError
        If ``release`` is not a :class:`~invariantdp.Release`.

    References
    ----------
    Gong & Meng (2020), Theorem 2.1; Gao, Gong & Yu, Theorem 22.

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_laplace_mechanism
    >>> from invariantdp.inference.bayes import release_noise
    >>> spec = release_noise(discrete_laplace_mechanism([3, 4], epsilon=1.0, rng=0))
    >>> spec.form.name, spec.integer, spec.structure
    ('DiscreteLaplaceLikelihood', True, 'independent')
    """
    if not isinstance(release, Release):
        raise TypeError(f"`release` must be a Release, got {type(release).__name__}.")
    congenial = bool(release.metadata.get("congenial", False))
    spec = release.noise.spec.likelihood(release.noise.params, congenial=congenial)
    if spec.structure == "correlated":
        # one n-dimensional Gaussian: no per-cell term for the latent-count samplers
        raise InvariantDPError(
            f"the Bayes models observe a release cell by cell; its noise family "
            f"{release.noise.family!r} correlates the cells. Fit it with "
            "invariantdp.inference.PrivatizedPoisson or PrivatizedLogLinear."
        )
    return spec


def likelihood_class(spec: NoiseLikelihood):
    """The PyMC distribution class of a :class:`~invariantdp.families.NoiseLikelihood`.

    A built-in :class:`~invariantdp.families.LikelihoodForm` has its class
    here (``TulapLikelihood``, ...; each class holds its ``form``); any other
    form (a user family's) gets a class built from its ``logp``, ``logcdf``
    and ``draw`` (:class:`FormLikelihood`).

    Parameters
    ----------
    spec : NoiseLikelihood
        E.g. ``release.noise.spec.likelihood(release.noise.params)``.

    Returns
    -------
    type
        A PyMC distribution class: calling it inside a model (or its
        ``.dist``) with the confidential value and ``**spec.params``.

    Raises
    ------
    InvariantDPError
        If the form is not built in and has no ``logp``.

    References
    ----------
    Gao, Gong & Yu, Sec. 4 and Theorem 22 (the likelihood of a projected
    release); Awan & Slavkovic (2018), Def. 4.1 (Tulap).

    Examples
    --------
    >>> from invariantdp.families import noise_family
    >>> likelihood_class(noise_family("laplace").likelihood({"scale": 2.0})).__name__
    'LaplaceLikelihood'
    """
    cls = _CLASSES.get(spec.form)
    if cls is not None:
        return cls
    if spec.form.logp is None:
        raise InvariantDPError(
            f"the likelihood form {spec.form.name!r} has no `logp`: give its LikelihoodForm a "
            "logp(z, params, xp) so that PyMC can observe the release."
        )
    return _form_class(spec.form, tuple(spec.params))


@bounded_cache(maxsize=64)
def _form_class(form: LikelihoodForm, keywords: tuple[str, ...]) -> type:
    """The :class:`FormLikelihood` of ``form`` with the noise parameters ``keywords``."""
    return type(form.name, (FormLikelihood,), {"form": form, "_noise_keywords": keywords})


def mechanism_likelihood(name, release, confidential, *, flatten=False, **kwargs):
    """The observed node of ``release`` given the latent ``confidential`` value.

    Parameters
    ----------
    name : str
        Name of the observed variable.
    release : Release
        A release of a linear (identity) query; ``release.value`` is observed.
    confidential : tensor_like
        The latent confidential value, of the shape of ``release.value`` (or
        flattened: a table is always observed flattened in C order).
    flatten : bool, optional
        Observe a scalar release as a vector of length one.
    **kwargs
        Passed to the distribution (e.g. ``dims=``).

    Returns
    -------
    TensorVariable
        The observed random variable, with ``observed=release.value.ravel()``.

    Notes
    -----
    The projected Laplace mechanism has no closed-form density; its exact
    likelihood needs an auxiliary row-space variable and is built by the model
    builders of :mod:`invariantdp.inference.bayes._model_builders`.  A congenial
    release conditioned on inequalities (e.g. non-negativity) has the density
    of the unconstrained noise divided by ``P(M(s) in S* | s)``, which depends
    on ``s``; that factor is not computed, and a warning says so.

    References
    ----------
    Ju, Awan, Gong & Rao (2022), "Data augmentation MCMC for Bayesian
    inference from privatized data", NeurIPS 35; Gao, Gong & Yu, Theorem 22.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from invariantdp.mechanisms import tulap_mechanism
    >>> from invariantdp.inference.bayes import mechanism_likelihood
    >>> r = tulap_mechanism(7, epsilon=1.0, rng=0)
    >>> with pm.Model():
    ...     x = pm.Flat("x")
    ...     y = mechanism_likelihood("y", r, x)
    """
    spec = release_noise(release)
    if release.metadata.get("inequalities") is not None:
        warnings.warn(
            "the release was conditioned on inequalities: its normaliser P(M(s) in S* | s) "
            "depends on the confidential value and is ignored; the likelihood is approximate "
            "where the inequalities bind (Gong & Meng, Section 2.3).",
            UserWarning,
            stacklevel=2,
        )
    y = np.asarray(release.value)
    obs = y.reshape(-1) if (y.ndim > 1 or flatten) else y
    if spec.integer:
        obs = np.round(obs).astype(np.int64)
    if spec.structure == "projected":
        inv = release.invariants
        if inv is None:
            raise InvariantDPError("a projected Gaussian release must carry its `invariants`.")
        return ProjectedGaussianLikelihood(
            name, confidential, invariants=inv, observed=obs, **spec.params, **kwargs
        )
    if spec.structure != "independent":
        raise InvariantDPError(
            f"the {release.noise.family} release has no closed-form density; use a model "
            "builder of invariantdp.inference.bayes._model_builders, which augments it with the "
            "row-space noise."
        )
    return likelihood_class(spec)(name, confidential, observed=obs, **spec.params, **kwargs)


#: the PyMC class of each built-in likelihood form (invariantdp.families)
_CLASSES = {
    cls.form: cls
    for cls in (
        TulapLikelihood,
        LaplaceLikelihood,
        GaussianLikelihood,
        DiscreteLaplaceLikelihood,
        DiscreteGaussianLikelihood,
        ProjectedGaussianLikelihood,
    )
}
