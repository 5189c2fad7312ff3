r"""Likelihoods of the scalar additive mechanisms as PyMC distributions.

Each class is the law of a *released value given the confidential one*,
``y = mu + noise``: Tulap, Laplace and Gaussian noise (real releases) and the
double geometric and discrete Gaussian noise (integer releases).  Each is a
thin factory around :class:`pymc.CustomDist` with its log density, its log
cdf where it has a closed form, and a sampler.  The Tulap log density and
log cdf are the closed forms of :mod:`invariantdp.distributions._tulap_forms`
built in PyTensor, the same functions the scipy law evaluates in numpy.
Their table and conventions are in
:mod:`invariantdp.inference.bayes._pymc_likelihoods`, which maps a release to
them.

The names of 0.1.0 (``Tulap``, ``Laplace``, ``Gaussian``,
``DiscreteLaplace``, ``DiscreteGaussian``) stay bound here to the same
classes; :mod:`invariantdp.inference.bayes` warns when they are used.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._rng import as_generator
from ..._validation import check_delta, check_positive
from ...distributions import (
    discrete_gaussian,
    draw_discrete_laplace,
    tulap,
    tulap_bounds,
    tulap_logcdf,
    tulap_logpdf,
)
from ...families import (
    DISCRETE_GAUSSIAN_LIKELIHOOD,
    DISCRETE_LAPLACE_LIKELIHOOD,
    GAUSSIAN_LIKELIHOOD,
    LAPLACE_LIKELIHOOD,
    TULAP_LIKELIHOOD,
)

__all__ = [
    "DiscreteGaussianLikelihood",
    "DiscreteLaplaceLikelihood",
    "FormLikelihood",
    "GaussianLikelihood",
    "LaplaceLikelihood",
    "TulapLikelihood",
]

_LOG_2PI = float(np.log(2.0 * np.pi))


def _check_b_q(b, q):
    return check_delta(b, "b"), check_delta(q, "q")  # each a real in [0, 1)


def _generator(rng):
    """numpy Generator from what PyMC passes to ``random`` (a Generator or None)."""
    return as_generator(rng)


def _shifted(mu, size, noise, dtype=None):
    """``mu + noise(shape)``: ``shape`` is ``mu``'s, or ``size`` when PyMC gives one."""
    mu = np.asarray(mu, dtype=dtype)
    shape = mu.shape if size is None else tuple(np.atleast_1d(size))
    return mu + noise(shape)


class _Likelihood:
    """A factory of :class:`pymc.CustomDist`: the law of ``y`` given ``mu``.

    Calling the class inside a model creates a random variable (usually the
    observed release); ``.dist(...)`` an unnamed distribution.  The keyword
    arguments named in ``_noise_keywords`` are the noise parameters, checked
    by ``_params`` before any graph is built (by default: one positive
    number); the others go to :class:`pymc.CustomDist`.  ``_custom`` takes
    what ``_params`` returns and gives the ``logp``/``logcdf``/``random``
    functions.
    """

    _noise_keywords: tuple[str, ...] = ("scale",)

    def __new__(cls, name, mu, **kwargs):
        return pm.CustomDist(name, mu, **cls._custom_kwargs(kwargs))

    @classmethod
    def dist(cls, mu, **kwargs):
        """The unnamed distribution, for :func:`pymc.logp` and :func:`pymc.draw`."""
        return pm.CustomDist.dist(mu, **cls._custom_kwargs(kwargs))

    @classmethod
    def _custom_kwargs(cls, kwargs):
        noise = {k: kwargs.pop(k) for k in cls._noise_keywords if k in kwargs}
        return {**cls._custom(*cls._params(**noise)), **kwargs}

    @classmethod
    def _params(cls, **noise):
        (name,) = cls._noise_keywords
        if name not in noise:
            raise TypeError(f"{cls.__name__} needs the keyword argument `{name}`.")
        return (check_positive(name, noise[name]),)


# ---------------------------------------------------------------------------
# Tulap
# ---------------------------------------------------------------------------


class TulapLikelihood(_Likelihood):
    r"""Tulap mechanism likelihood: ``y = mu + scale * N``, ``N ~ Tulap(0, b, q)``.

    Parameters
    ----------
    name : str
        Name of the variable in the model (not given to :meth:`dist`).
    mu : tensor_like
        Location (the latent confidential value, e.g. a count).
    b : float
        ``exp(-epsilon)``, in [0, 1); ``b = 0`` is the limit epsilon -> inf,
        the uniform law on ``[-1/2, 1/2]``.
    q : float, optional
        Truncation mass ``2 delta b / (1 - b + 2 delta b)``, in [0, 1).
    scale : float, optional
        The sensitivity the noise was scaled by (default 1).
    **kwargs
        Passed to :class:`pymc.CustomDist` (``observed=``, ``shape=``, ``dims=``).

    Notes
    -----
    Density ``(1-b)/(1+b) b^{|[z]|} / ((1-q) scale)`` with ``z = (y - mu)/scale``
    on the support of the law (``-inf`` outside), and the log cdf of Awan &
    Slavkovic (2018), both evaluated in ``log b`` by
    :func:`~invariantdp.distributions._tulap_forms.tulap_logpdf` and
    :func:`~invariantdp.distributions._tulap_forms.tulap_logcdf` with
    ``xp=pytensor.tensor``.

    References
    ----------
    Awan, J. and Slavkovic, A. (2018), "Differentially private uniformly most
    powerful tests for binomial data", NeurIPS 31, Definition 4.1.

    Examples
    --------
    >>> import pymc as pm
    >>> from invariantdp.inference.bayes import TulapLikelihood
    >>> from invariantdp.distributions import tulap
    >>> d = TulapLikelihood.dist(3.0, b=0.5, q=0.1)
    >>> bool(abs(pm.logp(d, 4.2).eval() - tulap.logpdf(4.2, 0.5, 0.1, loc=3.0)) < 1e-12)
    True
    """

    form = TULAP_LIKELIHOOD

    _noise_keywords = ("b", "q", "scale")

    @staticmethod
    def _params(*, b, q=0.0, scale=1.0):
        b, q = _check_b_q(b, q)
        return b, q, check_positive("scale", scale)

    @staticmethod
    def _custom(b, q, scale):
        with np.errstate(divide="ignore"):  # b = 0: log b = -inf, the uniform limit
            log_b = float(np.log(b))
        qc = 1.0 - q
        lo, hi = (float(v) for v in tulap_bounds(log_b, q, qc))
        log_scale = float(np.log(scale))

        def logp(value, mu, **_):
            z = (value - mu) / scale
            out = tulap_logpdf(z, log_b, qc, xp=pt) - log_scale
            if np.isfinite(hi):  # truncated (q > 0) or uniform (b = 0): a bounded support
                out = pt.switch((z >= lo) & (z <= hi), out, -np.inf)
            return out

        def logcdf(value, mu, **_):
            return tulap_logcdf((value - mu) / scale, log_b, q, qc, xp=pt)

        def random(mu, rng=None, size=None):
            gen = _generator(rng)
            return _shifted(
                mu, size, lambda s: scale * tulap.rvs(b, q, size=s, random_state=gen), float
            )

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "floatX"}


# ---------------------------------------------------------------------------
# Laplace and Gaussian
# ---------------------------------------------------------------------------


class LaplaceLikelihood(_Likelihood):
    r"""Laplace mechanism likelihood: ``y = mu + e``, ``e ~ Laplace(0, scale)``.

    ``scale = sensitivity / epsilon`` (Dwork et al. 2006; Gong & Meng,
    Definition 1.1).  Also the exact likelihood, up to a constant, of the
    congenial Laplace release conditioned on linear *equality* invariants
    (the normaliser of the conditional law does not depend on ``mu`` when
    ``mu`` satisfies the invariants; Gong & Meng, Section 2.3).

    Parameters
    ----------
    name : str
        Name of the variable in the model (not given to :meth:`dist`).
    mu : tensor_like
        The latent confidential value.
    scale : float
        ``sensitivity / epsilon``, > 0.
    **kwargs
        Passed to :class:`pymc.CustomDist`.

    References
    ----------
    Dwork, McSherry, Nissim & Smith (2006); Gong & Meng, "Congenial
    differential privacy under mandated disclosure", Definition 1.1.

    Examples
    --------
    >>> import pymc as pm
    >>> from scipy import stats
    >>> from invariantdp.inference.bayes import LaplaceLikelihood
    >>> v = pm.logp(LaplaceLikelihood.dist(1.0, scale=2.0), 0.3).eval()
    >>> bool(abs(v - stats.laplace.logpdf(0.3, 1.0, 2.0)) < 1e-12)
    True
    """

    form = LAPLACE_LIKELIHOOD

    @staticmethod
    def _custom(scale):
        const = float(-np.log(2.0 * scale))

        def logp(value, mu, **_):
            return const - pt.abs(value - mu) / scale

        def logcdf(value, mu, **_):
            z = (value - mu) / scale
            return pt.switch(z < 0, np.log(0.5) + z, pt.log1p(-0.5 * pt.exp(-pt.maximum(z, 0.0))))

        def random(mu, rng=None, size=None):
            gen = _generator(rng)
            return _shifted(mu, size, lambda s: gen.laplace(0.0, scale, size=s), float)

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "floatX"}


class GaussianLikelihood(_Likelihood):
    r"""Gaussian mechanism likelihood: ``y = mu + e``, ``e ~ N(0, sigma^2)``.

    ``sigma = sensitivity / mu_GDP`` (Dong, Roth & Su 2022) or calibrated from
    ``(epsilon, delta)`` (Balle & Wang 2018); the release records ``sigma``.

    Parameters
    ----------
    name : str
        Name of the variable in the model (not given to :meth:`dist`).
    mu : tensor_like
        The latent confidential value.
    sigma : float
        Standard deviation of the noise, > 0.
    **kwargs
        Passed to :class:`pymc.CustomDist`.

    References
    ----------
    Dong, Roth & Su (2022), "Gaussian differential privacy", Theorem 2.7;
    Balle & Wang (2018), Theorem 8.

    Examples
    --------
    >>> import pymc as pm
    >>> from scipy import stats
    >>> from invariantdp.inference.bayes import GaussianLikelihood
    >>> v = pm.logp(GaussianLikelihood.dist(1.0, sigma=2.0), 0.3).eval()
    >>> bool(abs(v - stats.norm.logpdf(0.3, 1.0, 2.0)) < 1e-12)
    True
    """

    form = GAUSSIAN_LIKELIHOOD

    _noise_keywords = ("sigma",)

    @staticmethod
    def _custom(sigma):
        const = float(-0.5 * _LOG_2PI - np.log(sigma))

        def logp(value, mu, **_):
            return const - 0.5 * ((value - mu) / sigma) ** 2

        def logcdf(value, mu, **_):
            z = (value - mu) / sigma
            # log Phi(z): erfcx in the lower tail keeps full relative accuracy
            tail = np.log(0.5) + pt.log(pt.erfcx(-z / np.sqrt(2.0))) - 0.5 * z**2
            body = pt.log1p(-0.5 * pt.erfc(z / np.sqrt(2.0)))
            return pt.switch(z < -1.0, tail, body)

        def random(mu, rng=None, size=None):
            gen = _generator(rng)
            return _shifted(mu, size, lambda s: sigma * gen.standard_normal(s), float)

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "floatX"}


# ---------------------------------------------------------------------------
# integer noise
# ---------------------------------------------------------------------------


class DiscreteLaplaceLikelihood(_Likelihood):
    r"""Double geometric mechanism likelihood: ``y = mu + k``, ``P(k) = tanh(1/2t) e^{-|k|/t}``.

    ``t = sensitivity / epsilon``; ``a = exp(-1/t)`` in Gong & Meng, Eq. (1.3).
    Integer-valued: ``mu`` is an integer count for the exact likelihood.  With
    a real ``mu`` (the continuous relaxation of :mod:`._latent_samplers`) the same
    formula is the natural continuous interpolation.  Also the exact
    likelihood, up to a constant, of the congenial double geometric release
    conditioned on equality invariants (Gong & Meng, Section 3).

    Parameters
    ----------
    name : str
        Name of the variable in the model (not given to :meth:`dist`).
    mu : tensor_like
        The latent confidential count.
    scale : float
        ``t = sensitivity / epsilon``, > 0.
    **kwargs
        Passed to :class:`pymc.CustomDist`.

    References
    ----------
    Gong & Meng, "Congenial differential privacy under mandated disclosure",
    Eq. (1.3); Canonne, Kamath & Steinke (2020), ``Lap_Z(t)``.

    Examples
    --------
    >>> import pymc as pm
    >>> from invariantdp.distributions._discrete_laws import discrete_laplace
    >>> from invariantdp.inference.bayes import DiscreteLaplaceLikelihood
    >>> v = pm.logp(DiscreteLaplaceLikelihood.dist(4, scale=2.0), 7).eval()
    >>> bool(abs(v - discrete_laplace.logpmf(3, 2.0)) < 1e-12)
    True
    """

    form = DISCRETE_LAPLACE_LIKELIHOOD

    @staticmethod
    def _custom(t):
        const = float(np.log(np.tanh(0.5 / t)))
        log1p_p = float(np.log1p(np.exp(-1.0 / t)))

        def logp(value, mu, **_):
            return const - pt.abs(value - mu) / t

        def logcdf(value, mu, **_):
            k = pt.floor(value - mu)
            low = -pt.abs(k) / t - log1p_p
            high = pt.log1p(-pt.exp(-(pt.maximum(k, -1.0) + 1.0) / t - log1p_p))
            return pt.switch(k < 0, low, high)

        def random(mu, rng=None, size=None):
            gen = _generator(rng)
            return _shifted(mu, size, lambda s: draw_discrete_laplace(gen, t, s))

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "int64"}


class DiscreteGaussianLikelihood(_Likelihood):
    r"""Discrete Gaussian mechanism likelihood: ``P(y = mu + k) ∝ exp(-k^2 / (2 sigma^2))``.

    The normaliser is computed once (it does not depend on ``mu``).  Integer
    ``mu``.

    Parameters
    ----------
    name : str
        Name of the variable in the model (not given to :meth:`dist`).
    mu : tensor_like
        The latent confidential count.
    sigma : float
        The scale parameter of ``N_Z(0, sigma^2)``, > 0.
    **kwargs
        Passed to :class:`pymc.CustomDist`.

    References
    ----------
    Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
    privacy", Definition 1.

    Examples
    --------
    >>> import pymc as pm
    >>> from invariantdp.distributions._discrete_laws import discrete_gaussian
    >>> from invariantdp.inference.bayes import DiscreteGaussianLikelihood
    >>> v = pm.logp(DiscreteGaussianLikelihood.dist(4, sigma=1.5), 6).eval()
    >>> bool(abs(v - discrete_gaussian.logpmf(2, 1.5)) < 1e-12)
    True
    """

    form = DISCRETE_GAUSSIAN_LIKELIHOOD

    _noise_keywords = ("sigma",)

    @staticmethod
    def _custom(sigma):
        log_z = -float(discrete_gaussian.logpmf(0, sigma))

        def logp(value, mu, **_):
            return -((value - mu) ** 2) / (2.0 * sigma**2) - log_z

        def random(mu, rng=None, size=None):
            gen = _generator(rng)
            return _shifted(
                mu,
                size,
                lambda s: np.asarray(
                    discrete_gaussian.rvs(sigma, size=s, random_state=gen), dtype=np.int64
                ),
            )

        return {"logp": logp, "random": random, "dtype": "int64"}


# ---------------------------------------------------------------------------
# the likelihood form of a user family
# ---------------------------------------------------------------------------


class FormLikelihood(_Likelihood):
    r"""The likelihood of a :class:`~invariantdp.families.LikelihoodForm` given by its ``logp``.

    The base of the class :func:`~invariantdp.inference.bayes.likelihood_class`
    builds for a form that is not built in (a user family's): its ``form``
    and its noise keywords (the params of the family's
    :class:`~invariantdp.families.NoiseLikelihood`) are set on the subclass.
    The log density is ``form.logp(y - mu, params, pytensor.tensor)``, the
    log cdf ``form.logcdf`` when given, and draws ``mu + form.draw(gen,
    shape, params)``.

    References
    ----------
    Ju, Awan, Gong & Rao (2022), "Data augmentation MCMC for Bayesian
    inference from privatized data", NeurIPS 35.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from invariantdp.families import LikelihoodForm, NoiseLikelihood
    >>> from invariantdp.inference.bayes import likelihood_class
    >>> form = LikelihoodForm("ExampleLaplaceLikelihood",
    ...                       logp=lambda z, p, xp: -xp.abs(z) / p["s"] - np.log(2 * p["s"]))
    >>> cls = likelihood_class(NoiseLikelihood(form, {"s": 2.0}))
    >>> round(float(pm.logp(cls.dist(1.0, s=2.0), 0.3).eval()), 6)  # Laplace(1, 2) at 0.3
    -1.736294
    """

    form = None
    _noise_keywords: tuple[str, ...] = ()

    @classmethod
    def _params(cls, **noise):
        missing = [k for k in cls._noise_keywords if k not in noise]
        if missing:
            raise TypeError(f"{cls.__name__} needs the keyword arguments {missing}.")
        return (dict(noise),)

    @classmethod
    def _custom(cls, params):
        form = cls.form

        def logp(value, mu, **_):
            return form.logp(value - mu, params, pt)

        out = {"logp": logp, "dtype": "floatX"}
        if form.logcdf is not None:

            def logcdf(value, mu, **_):
                return form.logcdf(value - mu, params, pt)

            out["logcdf"] = logcdf
        if form.draw is not None:

            def random(mu, rng=None, size=None):
                gen = _generator(rng)
                return _shifted(mu, size, lambda s: form.draw(gen, s, params), float)

            out["random"] = random
        return out


# the names of 0.1.0, kept (without a warning) for the modules of this package
Tulap = TulapLikelihood
Laplace = LaplaceLikelihood
Gaussian = GaussianLikelihood
DiscreteLaplace = DiscreteLaplaceLikelihood
DiscreteGaussian = DiscreteGaussianLikelihood
