"""Mechanism likelihoods as PyMC distributions.

Each class is a thin factory around :class:`pymc.CustomDist`: calling it inside
a model creates a random variable, usually the *observed* node of a released
value given the latent confidential value ``mu``; ``.dist(...)`` creates an
unnamed distribution (for :func:`pymc.logp` and :func:`pymc.draw`).  The noise
parameters are public constants of the release (the mechanism is public:
Gong & Meng, Section 1.4, "statistical intelligibility"), so they are Python
floats, not random variables; only the location ``mu`` may be a tensor.

========================  ===========================================  =========
class                     density of the release ``y`` given ``mu``    logcdf
========================  ===========================================  =========
:class:`Tulap`            Tulap(mu, b, q) with ``scale``               yes
:class:`Laplace`          Laplace(mu, scale)                           yes
:class:`DiscreteLaplace`  double geometric, ``P(k) ∝ exp(-|k-mu|/t)``  yes
:class:`DiscreteGaussian` ``P(k) ∝ exp(-(k-mu)^2 / (2 sigma^2))``      no
:class:`Gaussian`         Normal(mu, sigma)                            yes
:class:`ProjectedGaussian`  ``mu + Pi_N e``, ``e ~ N(0, sigma^2 I)``   no
========================  ===========================================  =========

:class:`ProjectedGaussian` is the degenerate multivariate normal of the
projected (equivalently, by Gao, Gong & Yu, Theorem 22, the conditioned)
Gaussian mechanism: its log density is taken with respect to Lebesgue measure
on the affine space ``mu + ker C`` and evaluated in null-space coordinates,
``z = Q_N^T (y - mu) ~ N(0, sigma^2 I_{n - rank C})``; it is ``-inf`` off the
space.

:func:`mechanism_likelihood` builds the right one from a
:class:`~invariantdp.Release`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._rng import as_generator
from ..._validation import InvariantDPError, check_positive, check_real
from ...distributions.tulap import _bounds as _tulap_bounds
from ...distributions.tulap import _draw_tulap
from ...invariants import Invariants

__all__ = [
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Gaussian",
    "Laplace",
    "ProjectedGaussian",
    "Tulap",
    "mechanism_likelihood",
    "release_noise",
]

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
        lo, hi = (float(v) for v in _tulap_bounds(b, q))
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
            return mu + scale * _draw_tulap(_generator(rng), b, q, shape)

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
        from ...distributions.discrete import _log_normaliser, discrete_gaussian

        log_z = float(_log_normaliser(sigma))

        def logp(value, mu, **_):
            return -((value - mu) ** 2) / (2.0 * sigma**2) - log_z

        def random(mu, rng=None, size=None):
            mu = np.asarray(mu)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size))
            k = discrete_gaussian.rvs(sigma, size=shape, random_state=_generator(rng))
            return mu + np.asarray(k, dtype=np.int64)

        return {"logp": logp, "random": random, "dtype": "int64"}


# ---------------------------------------------------------------------------
# projected Gaussian
# ---------------------------------------------------------------------------


class ProjectedGaussian:
    r"""Projected Gaussian mechanism likelihood: ``y = mu + Pi_N e``, ``e ~ N(0, sigma^2 I_n)``.

    A degenerate multivariate normal on the affine space ``mu + N``,
    ``N = ker C``.  Its log density with respect to Lebesgue measure on that
    space is evaluated in null-space coordinates ``z = Q_N^T (y - mu)``:

    .. math:: \log p(y \mid \mu) = -\frac{d}{2}\log(2\pi\sigma^2)
              - \frac{\|z\|^2}{2\sigma^2}, \qquad d = n - \operatorname{rank} C,

    and ``-inf`` when ``y - mu`` leaves ``N`` (the tolerance of
    :func:`invariantdp.inference.likelihood.projected_gaussian_logpdf`).  By Theorem 22 of Gao,
    Gong & Yu (2022) this is also the law of the unconstrained Gaussian
    mechanism conditioned on the invariants, so the same likelihood serves a
    congenial (conditioned) Gaussian release.

    Parameters
    ----------
    name : str
    mu : tensor_like, shape (n,)
        The latent confidential vector (flattened in C order).
    sigma : float
        Standard deviation of the unprojected noise.
    invariants : Invariants
        The invariants ``C`` (only the matrix is used).

    References
    ----------
    Gao, Gong & Yu (2022), "Subspace differential privacy", Cor. 11 and 14,
    Theorem 22.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes import ProjectedGaussian
    >>> inv = totals([0, 0, 1, 1])
    >>> d = ProjectedGaussian.dist(np.zeros(4), sigma=1.0, invariants=inv)
    >>> round(float(pm.logp(d, np.array([1.0, -1.0, 0.5, -0.5])).eval()), 6)
    -3.087877
    """

    def __new__(cls, name, mu, *, sigma, invariants, **kwargs):
        return pm.CustomDist(name, mu, **cls._custom(sigma, invariants), **kwargs)

    @classmethod
    def dist(cls, mu, *, sigma, invariants, **kwargs):
        return pm.CustomDist.dist(mu, **cls._custom(sigma, invariants), **kwargs)

    @staticmethod
    def _custom(sigma, invariants):
        sigma = check_positive("sigma", sigma)
        if not isinstance(invariants, Invariants):
            raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
        n, d = invariants.n_cells, invariants.n_cells - invariants.rank
        if d == 0:
            raise InvariantDPError(
                f"`invariants` have rank {invariants.rank} = n: the release carries no noise."
            )
        QN = np.ascontiguousarray(invariants.null_space_basis())  # (n, d)
        QR = _row_basis(QN)  # (rank, n)
        const = float(-0.5 * d * (_LOG_2PI + 2.0 * np.log(sigma)))

        def logp(value, mu, **_):
            v = value - mu
            z = pt.dot(v, QN)
            out = const - 0.5 * pt.sum(z**2, axis=-1) / sigma**2
            if QR.shape[0]:
                # Squared distance to the space against the squared tolerance, never
                # sqrt(sum(r**2)): with one invariant the sum has one term and PyTensor's
                # `local_sqrt_sqr` rewrites sqrt(r**2) to switch(r >= 0, r, nan), which
                # put every point with a negative rounding residual off the space.
                off2 = pt.sum(pt.dot(v, QR.T) ** 2, axis=-1)
                tol = 1e-9 * (1.0 + pt.max(pt.abs(value), axis=-1) + pt.max(pt.abs(mu), axis=-1))
                tol = pt.maximum(tol, 1e-7 * sigma)
                out = pt.switch(off2 <= tol**2, out, -np.inf)
            return out

        def random(mu, rng=None, size=None):
            mu = np.asarray(mu, dtype=float)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size)) + (n,)
            e = sigma * _generator(rng).standard_normal(shape)
            return mu + e @ QN @ QN.T

        return {
            "logp": logp,
            "random": random,
            "dtype": "floatX",
            "signature": "(n)->(n)",
        }


def _row_basis(QN: np.ndarray) -> np.ndarray:
    """Orthonormal basis (as rows) of the orthogonal complement of span(QN)."""
    n, d = QN.shape
    if d == n:
        return np.zeros((0, n))
    u, _, _ = np.linalg.svd(np.eye(n) - QN @ QN.T)
    return np.ascontiguousarray(u[:, : n - d].T)


# ---------------------------------------------------------------------------
# from a Release
# ---------------------------------------------------------------------------

#: families whose likelihood is a product over cells of one scalar law
_SCALAR_FAMILIES = ("tulap", "laplace", "gaussian", "discrete_laplace", "double_geometric")


def release_noise(release) -> dict:
    """The noise law of ``release`` as ``{"kind": ..., params}`` for the likelihood.

    ``kind`` is one of ``"tulap"``, ``"laplace"``, ``"gaussian"``,
    ``"discrete_laplace"``, ``"discrete_gaussian"``, ``"projected_gaussian"``,
    ``"projected_laplace"``, ``"extended_laplace"``.  Congenial releases
    (Gong & Meng) conditioned on equality invariants map to the likelihood of
    their unconstrained noise (its normaliser is constant on the fibre), and a
    conditioned Gaussian maps to the projected Gaussian (Gao, Gong & Yu,
    Theorem 22).  A release conditioned on *inequalities* has a normaliser
    that depends on the confidential value; it is refused unless
    ``release.metadata`` says otherwise, see :func:`mechanism_likelihood`.
    """
    from ...release import Release

    if not isinstance(release, Release):
        raise TypeError(f"`release` must be a Release, got {type(release).__name__}.")
    fam, p = release.noise.family, release.noise.params
    congenial = bool(release.metadata.get("congenial", False))
    if fam == "tulap":
        return {"kind": "tulap", "b": p["b"], "q": p.get("q", 0.0), "scale": p.get("scale", 1.0)}
    if fam == "laplace":
        return {"kind": "laplace", "scale": p["scale"], "congenial": congenial}
    if fam == "double_geometric":
        return {"kind": "discrete_laplace", "scale": -1.0 / np.log(p["a"]), "congenial": congenial}
    if fam == "discrete_laplace":
        return {"kind": "discrete_laplace", "scale": p["scale"], "congenial": congenial}
    if fam == "discrete_gaussian":
        return {"kind": "discrete_gaussian", "sigma": p.get("sigma", p.get("scale"))}
    if fam == "gaussian":
        if congenial:  # conditioned on equalities = projected (Theorem 22)
            return {"kind": "projected_gaussian", "sigma": p["scale"], "congenial": True}
        return {"kind": "gaussian", "sigma": p["scale"]}
    if fam in ("projected_gaussian", "extended_gaussian"):
        return {"kind": "projected_gaussian", "sigma": p["scale"]}
    if fam in ("projected_laplace", "extended_laplace"):
        return {"kind": fam, "scale": p["scale"]}
    raise InvariantDPError(
        f"noise family {fam!r} of the release has no PyMC likelihood; known: "
        "tulap, laplace, gaussian, discrete_laplace, double_geometric, discrete_gaussian, "
        "projected_gaussian, extended_gaussian, projected_laplace, extended_laplace."
    )


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
    builders of :mod:`invariantdp.inference.bayes.models`.  A congenial
    release conditioned on inequalities (e.g. non-negativity) has the density
    of the unconstrained noise divided by ``P(M(s) in S* | s)``, which depends
    on ``s``; that factor is not computed, and a warning says so.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from invariantdp.mechanisms.additive import tulap
    >>> from invariantdp.inference.bayes import mechanism_likelihood
    >>> r = tulap(7, epsilon=1.0, rng=0)
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
    kind = spec["kind"]
    if kind == "tulap":
        return Tulap(
            name,
            confidential,
            b=spec["b"],
            q=spec["q"],
            scale=spec["scale"],
            observed=obs,
            **kwargs,
        )
    if kind == "laplace":
        return Laplace(name, confidential, scale=spec["scale"], observed=obs, **kwargs)
    if kind == "gaussian":
        return Gaussian(name, confidential, sigma=spec["sigma"], observed=obs, **kwargs)
    if kind == "discrete_laplace":
        return DiscreteLaplace(
            name,
            confidential,
            scale=spec["scale"],
            observed=np.round(obs).astype(np.int64),
            **kwargs,
        )
    if kind == "discrete_gaussian":
        return DiscreteGaussian(
            name,
            confidential,
            sigma=spec["sigma"],
            observed=np.round(obs).astype(np.int64),
            **kwargs,
        )
    if kind == "projected_gaussian":
        inv = release.invariants
        if inv is None:
            raise InvariantDPError("a projected Gaussian release must carry its `invariants`.")
        return ProjectedGaussian(
            name, confidential, sigma=spec["sigma"], invariants=inv, observed=obs, **kwargs
        )
    raise InvariantDPError(
        f"the {kind} release has no closed-form density; use a model builder of "
        "invariantdp.inference.bayes.models, which augments it with the row-space noise."
    )
