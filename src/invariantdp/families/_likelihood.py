"""How a PyMC model observes a release: :class:`LikelihoodForm` and :class:`NoiseLikelihood`.

A noise family's :meth:`~invariantdp.families.NoiseFamily.likelihood` names
the law of one released coordinate given the confidential one by a
:class:`LikelihoodForm` object, not by a string: the PyMC layer
(:mod:`invariantdp.inference.bayes`, which sits above this package) keeps
one distribution class per built-in form, and builds one from the
``logp`` of any other form (a user family's).  The built-in forms are the
constants of this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .._deprecation import deprecated
from .._validation import InvariantDPError

__all__ = [
    "DISCRETE_GAUSSIAN_LIKELIHOOD",
    "DISCRETE_LAPLACE_LIKELIHOOD",
    "GAUSSIAN_LIKELIHOOD",
    "LAPLACE_LIKELIHOOD",
    "PROJECTED_GAUSSIAN_LIKELIHOOD",
    "TULAP_LIKELIHOOD",
    "LikelihoodForm",
    "NoiseLikelihood",
]


@dataclass(frozen=True, eq=False)
class LikelihoodForm:
    """The law of a released coordinate ``y`` given the confidential ``mu``: ``y - mu`` is noise.

    Parameters
    ----------
    name : str
        The name of its PyMC distribution (``"TulapLikelihood"``, ...).
    logp : callable, optional
        ``logp(z, params, xp)``: the log density (or mass) of the noise at
        ``z = y - mu``, written with the array module ``xp`` (``numpy`` or
        ``pytensor.tensor``), as the closed forms of
        :mod:`invariantdp.distributions._tulap_forms` are.  Required for a
        form of a user family; the built-in forms are implemented by the
        classes of :mod:`invariantdp.inference.bayes`.
    logcdf : callable, optional
        ``logcdf(z, params, xp)``, the log cdf of the noise.
    draw : callable, optional
        ``draw(gen, shape, params)``: noise draws from a numpy ``Generator``
        (for prior and posterior predictive sampling).

    References
    ----------
    Ju, Awan, Gong & Rao (2022), "Data augmentation MCMC for Bayesian
    inference from privatized data", NeurIPS 35 (the likelihood of a
    release given the confidential data).

    Examples
    --------
    >>> import numpy as np
    >>> logistic = LikelihoodForm(
    ...     "LogisticLikelihood",
    ...     logp=lambda z, p, xp: -z / p["s"] - 2 * xp.log1p(xp.exp(-z / p["s"])) - np.log(p["s"]),
    ... )
    >>> round(float(logistic.logp(0.0, {"s": 1.0}, np)), 6)  # log(1/4)
    -1.386294
    """

    name: str
    logp: Callable | None = field(default=None, repr=False)
    logcdf: Callable | None = field(default=None, repr=False)
    draw: Callable | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InvariantDPError(f"`name` ({self.name!r}) must be a non-empty string.")

    def __repr__(self) -> str:
        return f"LikelihoodForm({self.name!r})"


#: Tulap mechanism: ``y = mu + scale * N``, ``N ~ Tulap(0, b, q)`` (params ``b, q, scale``)
TULAP_LIKELIHOOD = LikelihoodForm("TulapLikelihood")
#: Laplace noise of ``scale``
LAPLACE_LIKELIHOOD = LikelihoodForm("LaplaceLikelihood")
#: Gaussian noise of standard deviation ``sigma``
GAUSSIAN_LIKELIHOOD = LikelihoodForm("GaussianLikelihood")
#: discrete Laplace (double geometric) noise of ``scale`` on the integers
DISCRETE_LAPLACE_LIKELIHOOD = LikelihoodForm("DiscreteLaplaceLikelihood")
#: discrete Gaussian noise of ``sigma`` on the integers
DISCRETE_GAUSSIAN_LIKELIHOOD = LikelihoodForm("DiscreteGaussianLikelihood")
#: ``mu + Pi_N e``, ``e ~ N(0, sigma^2 I)`` (the whole release: ``invariants`` and ``sigma``)
PROJECTED_GAUSSIAN_LIKELIHOOD = LikelihoodForm("ProjectedGaussianLikelihood")

_BUILT_IN = {
    f.name: f
    for f in (
        TULAP_LIKELIHOOD,
        LAPLACE_LIKELIHOOD,
        GAUSSIAN_LIKELIHOOD,
        DISCRETE_LAPLACE_LIKELIHOOD,
        DISCRETE_GAUSSIAN_LIKELIHOOD,
        PROJECTED_GAUSSIAN_LIKELIHOOD,
    )
}
_BY_NAME = deprecated(
    "a NoiseLikelihood naming its distribution by a string",
    "a LikelihoodForm (invariantdp.families.TULAP_LIKELIHOOD, ..., or your own)",
)


@dataclass(frozen=True, init=False)
class NoiseLikelihood:
    """How a PyMC model observes a release with a given noise law.

    Attributes
    ----------
    form : LikelihoodForm
        The law of one coordinate (``TULAP_LIKELIHOOD``, ...), implemented in
        :mod:`invariantdp.inference.bayes` (the PyMC layer sits above this
        package).  The name of a built-in form (``"TulapLikelihood"``) is
        still accepted, with a ``DeprecationWarning``.
    params : dict
        Its keyword arguments (the noise parameters, public constants).
    integer : bool
        The release is integer-valued (observed as integers).
    structure : {"independent", "projected", "row_space", "correlated"}
        ``"independent"``: coordinates are independent given the confidential
        value; ``"projected"``: the degenerate normal ``N(0, sigma^2 Pi_N)`` of
        the projected (or conditioned) Gaussian mechanism, whose log density on
        the fibre is the sum of the scalar Gaussian terms up to a constant;
        ``"row_space"``: the projected Laplace mechanism, observed through the
        scalar law after adding its row-space noise as a latent variable;
        ``"correlated"``: the Gaussian ``N(0, cov)`` with the full covariance
        ``params["cov"]`` (an ``n x n`` array), observed as one vector.
    sd : float
        Standard deviation of one noise coordinate (sets the first lattice
        step of the exact sampler).
    support : tuple of float or None
        Bounds ``(lo, hi)`` of a noise coordinate when they are finite (the
        truncated Tulap), else None.

    References
    ----------
    Gao, Gong & Yu, Sec. 4 (the likelihood of a projected release);
    Awan & Slavkovic (2018), Def. 4.1 (the Tulap distribution).

    Examples
    --------
    >>> from invariantdp.families import noise_family
    >>> lik = noise_family("laplace").likelihood({"scale": 2.0})
    >>> lik.form is LAPLACE_LIKELIHOOD, lik.structure, round(lik.sd, 4)
    (True, 'independent', 2.8284)
    """

    form: LikelihoodForm
    params: Mapping
    integer: bool = False
    structure: str = "independent"
    sd: float = 1.0
    support: tuple[float, float] | None = None

    def __init__(
        self,
        form=None,
        params=None,
        integer=False,
        structure="independent",
        sd=1.0,
        support=None,
        *,
        distribution=None,
    ):
        if distribution is not None:
            if form is not None:
                raise TypeError("give the `form` only (`distribution` is its deprecated name).")
            form = distribution
        if isinstance(form, str):
            if form not in _BUILT_IN:
                raise InvariantDPError(
                    f"`form` ({form!r}) names no built-in likelihood; give a LikelihoodForm."
                )
            _BY_NAME.warn()
            form = _BUILT_IN[form]
        if not isinstance(form, LikelihoodForm):
            raise TypeError(f"`form` must be a LikelihoodForm, got {type(form).__name__}.")
        values = (form, dict(params or {}), bool(integer), structure, float(sd), support)
        for name, value in zip(
            ("form", "params", "integer", "structure", "sd", "support"), values, strict=True
        ):
            object.__setattr__(self, name, value)

    @property
    def distribution(self) -> str:
        """The name of the PyMC distribution (``form.name``)."""
        return self.form.name
