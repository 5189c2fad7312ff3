r"""Likelihoods of the scalar additive mechanisms as PyMC distributions.

Tulap, Laplace and Gaussian noise (real releases) and the double geometric
and discrete Gaussian noise (integer releases), each a thin factory around
:class:`pymc.CustomDist` with its log density, its log cdf where it has a
closed form, and a sampler.  Their table and conventions are in
:mod:`invariantdp.inference.bayes.distributions`, which exports them.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._rng import as_generator
from ..._validation import InvariantDPError, check_positive, check_real
from ...distributions import tulap

_LOG_2PI = float(np.log(2.0 * np.pi))


def _check_b_q(b, q):
    b = check_real("b", b)
    if not 0.0 < b < 1.0:
        raise InvariantDPError(f"`b` ({b}) must be in (0, 1).")
    q = check_real("q", q)
    if not 0.0 <= q < 1.0:
        raise InvariantDPError(f"`q` ({q}) must be in [0, 1).")
    return b, q


def _generator(rng):
    """numpy Generator from what PyMC passes to ``random`` (a Generator or None)."""
    return as_generator(rng) if not isinstance(rng, np.random.Generator) else rng


# ---------------------------------------------------------------------------
# Tulap
# ---------------------------------------------------------------------------


def _tulap_lower_logcdf0(x, b):
    """log F0(x) for x <= 0 (untruncated, median 0); DESIGN.md closed form."""
    k = pt.round(x, mode="half_to_even")
    return -k * np.log(b) - np.log1p(b) + pt.log(b + (x - k + 0.5) * (1.0 - b))


class Tulap:
    r"""Tulap mechanism likelihood: ``y = mu + scale * N``, ``N ~ Tulap(0, b, q)``.

    Parameters
    ----------
    name : str
        Name of the variable in the model.
    mu : tensor_like
        Location (the latent confidential value, e.g. a count).
    b : float
        ``exp(-epsilon)``, in (0, 1).
    q : float, optional
        Truncation mass ``2 delta b / (1 - b + 2 delta b)``, in [0, 1).
    scale : float, optional
        The sensitivity the noise was scaled by (default 1).
    **kwargs
        Passed to :class:`pymc.CustomDist` (``observed=``, ``shape=``, ``dims=``).

    Notes
    -----
    Density ``(1-b)/(1+b) b^{|[z]|} / ((1-q) scale)`` with ``z = (y - mu)/scale``
    on the central ``1 - q`` interval of the untruncated law (``-inf`` outside);
    logcdf from the closed form of Awan & Slavkovic (2018) given in DESIGN.md.

    References
    ----------
    Awan, J. and Slavkovic, A. (2018), "Differentially private uniformly most
    powerful tests for binomial data", NeurIPS 31, Definition 4.1.

    Examples
    --------
    >>> import pymc as pm
    >>> from invariantdp.inference.bayes import Tulap
    >>> from invariantdp.distributions import tulap
    >>> d = Tulap.dist(3.0, b=0.5, q=0.1)
    >>> bool(abs(pm.logp(d, 4.2).eval() - tulap.logpdf(4.2, 0.5, 0.1, loc=3.0)) < 1e-12)
    True
    """

    def __new__(cls, name, mu, *, b, q=0.0, scale=1.0, **kwargs):
        b, q, scale = cls._params(b, q, scale)
        return pm.CustomDist(name, mu, **cls._custom(b, q, scale), **kwargs)

    @classmethod
    def dist(cls, mu, *, b, q=0.0, scale=1.0, **kwargs):
        b, q, scale = cls._params(b, q, scale)
        return pm.CustomDist.dist(mu, **cls._custom(b, q, scale), **kwargs)

    @staticmethod
    def _params(b, q, scale):
        b, q = _check_b_q(b, q)
        return b, q, check_positive("scale", scale)

    @staticmethod
    def _custom(b, q, scale):
        lo, hi = (float(v) for v in tulap.support(b, q))
        const = float(np.log1p(-b) - np.log1p(b) - np.log1p(-q) - np.log(scale))

        def logp(value, mu, **_):
            z = (value - mu) / scale
            out = np.log(b) * pt.abs(pt.round(z, mode="half_to_even")) + const
            if q > 0:
                out = pt.switch((z >= lo) & (z <= hi), out, -np.inf)
            return out

        def logcdf(value, mu, **_):
            z = (value - mu) / scale
            low = _tulap_lower_logcdf0(-pt.abs(z), b)
            logf = pt.switch(z <= 0, low, pt.log1p(-pt.exp(low)))
            if q > 0:
                ratio = pt.minimum((q / 2.0) * pt.exp(-logf), 1.0)
                logf = pt.minimum(logf + pt.log1p(-ratio) - np.log1p(-q), 0.0)
            return logf

        def random(mu, rng=None, size=None):
            mu = np.asarray(mu, dtype=float)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size))
            return mu + scale * tulap.rvs(b, q, size=shape, random_state=_generator(rng))

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "floatX"}


# ---------------------------------------------------------------------------
# Laplace and Gaussian
# ---------------------------------------------------------------------------


class Laplace:
    r"""Laplace mechanism likelihood: ``y = mu + e``, ``e ~ Laplace(0, scale)``.

    ``scale = sensitivity / epsilon`` (Dwork et al. 2006; Gong & Meng,
    Definition 1.1).  Also the exact likelihood, up to a constant, of the
    congenial Laplace release conditioned on linear *equality* invariants
    (the normaliser of the conditional law does not depend on ``mu`` when
    ``mu`` satisfies the invariants; Gong & Meng, Section 2.3).

    Examples
    --------
    >>> import pymc as pm
    >>> from scipy import stats
    >>> from invariantdp.inference.bayes import Laplace
    >>> v = pm.logp(Laplace.dist(1.0, scale=2.0), 0.3).eval()
    >>> bool(abs(v - stats.laplace.logpdf(0.3, 1.0, 2.0)) < 1e-12)
    True
    """

    def __new__(cls, name, mu, *, scale, **kwargs):
        scale = check_positive("scale", scale)
        return pm.CustomDist(name, mu, **cls._custom(scale), **kwargs)

    @classmethod
    def dist(cls, mu, *, scale, **kwargs):
        scale = check_positive("scale", scale)
        return pm.CustomDist.dist(mu, **cls._custom(scale), **kwargs)

    @staticmethod
    def _custom(scale):
        const = float(-np.log(2.0 * scale))

        def logp(value, mu, **_):
            return const - pt.abs(value - mu) / scale

        def logcdf(value, mu, **_):
            z = (value - mu) / scale
            return pt.switch(z < 0, np.log(0.5) + z, pt.log1p(-0.5 * pt.exp(-pt.maximum(z, 0.0))))

        def random(mu, rng=None, size=None):
            mu = np.asarray(mu, dtype=float)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size))
            return mu + _generator(rng).laplace(0.0, scale, size=shape)

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "floatX"}


class Gaussian:
    r"""Gaussian mechanism likelihood: ``y = mu + e``, ``e ~ N(0, sigma^2)``.

    ``sigma = sensitivity / mu_GDP`` (Dong, Roth & Su 2022) or calibrated from
    ``(epsilon, delta)`` (Balle & Wang 2018); the release records ``sigma``.

    Examples
    --------
    >>> import pymc as pm
    >>> from scipy import stats
    >>> from invariantdp.inference.bayes import Gaussian
    >>> v = pm.logp(Gaussian.dist(1.0, sigma=2.0), 0.3).eval()
    >>> bool(abs(v - stats.norm.logpdf(0.3, 1.0, 2.0)) < 1e-12)
    True
    """

    def __new__(cls, name, mu, *, sigma, **kwargs):
        sigma = check_positive("sigma", sigma)
        return pm.CustomDist(name, mu, **cls._custom(sigma), **kwargs)

    @classmethod
    def dist(cls, mu, *, sigma, **kwargs):
        sigma = check_positive("sigma", sigma)
        return pm.CustomDist.dist(mu, **cls._custom(sigma), **kwargs)

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
            mu = np.asarray(mu, dtype=float)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size))
            return mu + sigma * _generator(rng).standard_normal(shape)

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "floatX"}


# ---------------------------------------------------------------------------
# integer noise
# ---------------------------------------------------------------------------


class DiscreteLaplace:
    r"""Double geometric mechanism likelihood: ``y = mu + k``, ``P(k) = tanh(1/2t) e^{-|k|/t}``.

    ``t = sensitivity / epsilon``; ``a = exp(-1/t)`` in Gong & Meng, Eq. (1.3).
    Integer-valued: ``mu`` is an integer count for the exact likelihood.  With
    a real ``mu`` (the continuous relaxation of :mod:`.sampler`) the same
    formula is the natural continuous interpolation.  Also the exact
    likelihood, up to a constant, of the congenial double geometric release
    conditioned on equality invariants (Gong & Meng, Section 3).

    Examples
    --------
    >>> import pymc as pm
    >>> from invariantdp.distributions.discrete import discrete_laplace
    >>> from invariantdp.inference.bayes import DiscreteLaplace
    >>> v = pm.logp(DiscreteLaplace.dist(4, scale=2.0), 7).eval()
    >>> bool(abs(v - discrete_laplace.logpmf(3, 2.0)) < 1e-12)
    True
    """

    def __new__(cls, name, mu, *, scale, **kwargs):
        scale = check_positive("scale", scale)
        return pm.CustomDist(name, mu, **cls._custom(scale), **kwargs)

    @classmethod
    def dist(cls, mu, *, scale, **kwargs):
        scale = check_positive("scale", scale)
        return pm.CustomDist.dist(mu, **cls._custom(scale), **kwargs)

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
            mu = np.asarray(mu)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size))
            gen = _generator(rng)
            p = -np.expm1(-1.0 / t)
            return mu + gen.geometric(p, size=shape) - gen.geometric(p, size=shape)

        return {"logp": logp, "logcdf": logcdf, "random": random, "dtype": "int64"}


class DiscreteGaussian:
    r"""Discrete Gaussian mechanism likelihood: ``P(y = mu + k) ∝ exp(-k^2 / (2 sigma^2))``.

    Canonne, Kamath & Steinke (2020), Definition 1; the normaliser is computed
    once (it does not depend on ``mu``).  Integer ``mu``.

    Examples
    --------
    >>> import pymc as pm
    >>> from invariantdp.distributions.discrete import discrete_gaussian
    >>> from invariantdp.inference.bayes import DiscreteGaussian
    >>> v = pm.logp(DiscreteGaussian.dist(4, sigma=1.5), 6).eval()
    >>> bool(abs(v - discrete_gaussian.logpmf(2, 1.5)) < 1e-12)
    True
    """

    def __new__(cls, name, mu, *, sigma, **kwargs):
        sigma = check_positive("sigma", sigma)
        return pm.CustomDist(name, mu, **cls._custom(sigma), **kwargs)

    @classmethod
    def dist(cls, mu, *, sigma, **kwargs):
        sigma = check_positive("sigma", sigma)
        return pm.CustomDist.dist(mu, **cls._custom(sigma), **kwargs)

    @staticmethod
    def _custom(sigma):
        from ...distributions.discrete import discrete_gaussian

        log_z = -float(discrete_gaussian.logpmf(0, sigma))

        def logp(value, mu, **_):
            return -((value - mu) ** 2) / (2.0 * sigma**2) - log_z

        def random(mu, rng=None, size=None):
            mu = np.asarray(mu)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size))
            k = discrete_gaussian.rvs(sigma, size=shape, random_state=_generator(rng))
            return mu + np.asarray(k, dtype=np.int64)

        return {"logp": logp, "random": random, "dtype": "int64"}
