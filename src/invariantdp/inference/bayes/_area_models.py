r"""Area-level models in PyMC: the Fay-Herriot model with the estimates' full covariance.

The frequentist fit (:class:`~invariantdp.inference.FayHerriot`) plugs in
the REML estimate of :math:`\sigma_u^2` and corrects the MSE for it; the
posterior here integrates over it.  Model:

.. math:: \beta \sim p(\beta), \quad \sigma_u \sim \mathrm{HalfCauchy}(s), \quad
          \theta = X\beta + u,\ u \sim N(0, \sigma_u^2 I), \quad
          y \mid \theta \sim N(\theta, V),

with :math:`V` the release's noise covariance, in full.  The sampler never
sees :math:`\theta`: :math:`y \sim N(X\beta, \sigma_u^2 I + V)` is evaluated
in the eigenbasis of :math:`V = W\,\mathrm{diag}(v)\,W^\top` (no matrix is
factored per step), and :math:`\theta` is drawn from its conditional law

.. math:: \theta \mid y, \beta, \sigma_u \sim N\big(X\beta + \sigma_u^2
          \Sigma^{-1}(y - X\beta),\ \sigma_u^2\Sigma^{-1}V\big),
          \qquad \Sigma = \sigma_u^2 I + V,

as a deterministic function of standard normal innovations that do not
enter the likelihood (so their posterior is their prior and
:math:`\theta`'s draws follow the joint posterior exactly).  A singular
:math:`V` (an invariant total the estimates keep) is allowed: its null
directions have :math:`\theta` equal to :math:`y` there.

References
----------
Fay & Herriot (1979); G. S. Datta and M. Ghosh (1991), *Bayesian
prediction in linear models: applications to small area estimation*, Ann.
Statist. 19, 1748-1770; Rao & Molina (2015), *Small Area Estimation*,
Sec. 10.3 (hierarchical Bayes for the basic area-level model).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._validation import InvariantDPError, check_finite_array, check_positive
from .._release_observation import observe_release
from ._latent import _cell_labels

__all__ = ["fay_herriot_model"]


def fay_herriot_model(
    release, exog, *, prior_sigma=None, prior_sigma_u=None, exog_names=None
) -> pm.Model:
    r"""The Fay-Herriot model of released area estimates, for a full posterior (module notes).

    Parameters
    ----------
    release : Release
        Released estimates, one per area, with Gaussian-type noise (as for
        :class:`~invariantdp.inference.FayHerriot`); the noise covariance
        :math:`V` is used in full.
    exog : array_like or DataFrame, shape (m, p)
        The design (a constant column for an intercept), full column rank.
    prior_sigma : float, optional
        Standard deviation of a normal prior on every coefficient; None
        (default) puts a flat prior on :math:`\beta` (Datta & Ghosh 1991).
    prior_sigma_u : float, optional
        Scale of the half-Cauchy prior on :math:`\sigma_u`; default: the
        standard deviation of the released estimates.
    exog_names : list of str, optional
        Names of the coefficients (dims ``coef``); default: the columns of a
        DataFrame ``exog``, else ``x0, x1, ...``.

    Returns
    -------
    pymc.Model
        Free variables ``beta`` (dims ``coef``), ``sigma_u`` and
        ``area_innovation``; deterministic ``theta`` (dims ``area``, named by
        the release's labels), the areas' true values.  Sample it with
        :func:`~invariantdp.inference.bayes.fit` (NUTS alone) or
        :func:`pymc.sample`.

    References
    ----------
    Fay & Herriot (1979); Datta & Ghosh (1991); Rao & Molina (2015),
    Sec. 10.3.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Release
    >>> from invariantdp.inference.bayes import fay_herriot_model
    >>> y = np.array([12.0, 9.5, 14.1, 11.2, 8.7, 13.3, 10.9, 12.6])
    >>> rel = Release.from_published(y, noise="gaussian", sigma=1.0)
    >>> model = fay_herriot_model(rel, np.ones((8, 1)))
    >>> sorted(v.name for v in model.free_RVs)
    ['area_innovation', 'beta', 'sigma_u']
    >>> idata = fit(model, draws=500, chains=2, rng=1)  # doctest: +SKIP
    """
    obs = observe_release(release)
    y = obs.counts
    m = y.size
    X = check_finite_array("exog", exog)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] != m:
        raise InvariantDPError(
            f"`exog` must have shape ({m}, p): one row per released estimate, got {np.shape(exog)}."
        )
    p = X.shape[1]
    if p >= m or np.linalg.matrix_rank(X) < p:
        raise InvariantDPError(
            f"`exog` must have full column rank and fewer columns than the {m} estimates, got "
            f"shape {X.shape} of rank {np.linalg.matrix_rank(X)}."
        )
    if exog_names is None:
        columns = getattr(exog, "columns", None)
        exog_names = [f"x{j}" for j in range(p)] if columns is None else list(columns)
    names = [str(n) for n in exog_names]
    if len(names) != p:
        raise InvariantDPError(f"`exog_names` must have {p} entries, got {len(names)}.")
    if prior_sigma is not None:
        prior_sigma = check_positive("prior_sigma", prior_sigma)
    if prior_sigma_u is None:
        prior_sigma_u = float(np.std(y)) or 1.0
    else:
        prior_sigma_u = check_positive("prior_sigma_u", prior_sigma_u)
    v, W = np.linalg.eigh(obs.noise_cov())
    top = max(float(np.max(np.abs(v))), 1e-300)
    v = np.where(v < 1e-12 * top, 0.0, v)  # rounding below 0 in a PSD matrix
    Wy, WX = W.T @ y, W.T @ X
    coords = {"coef": names, "area": _cell_labels(release, (m,))}
    with pm.Model(coords=coords) as model:
        if prior_sigma is None:
            beta = pm.Flat("beta", dims="coef")
        else:
            beta = pm.Normal("beta", 0.0, prior_sigma, dims="coef")
        sigma_u = pm.HalfCauchy("sigma_u", beta=prior_sigma_u)
        s2 = sigma_u**2
        lam = s2 + v  # eigenvalues of Sigma = sigma_u^2 I + V
        r = Wy - pt.dot(WX, beta)  # y - X beta in V's eigenbasis
        pm.Potential(
            "release_loglik",
            -0.5 * pt.sum(np.log(2 * np.pi) + pt.log(lam) + r * r / lam),
        )
        # one innovation per eigen-direction of V (not per area)
        xi = pm.Normal("area_innovation", 0.0, 1.0, shape=m)
        # theta | y, beta, sigma_u in V's eigenbasis: mean weights s2 / lam, variances s2 v / lam
        eig = s2 / lam * r + pt.sqrt(s2 * v / lam) * xi
        pm.Deterministic("theta", pt.dot(X, beta) + pt.dot(W, eig), dims="area")
    model.invariantdp = {"release": release, "latent": "marginal", "latent_var": None}
    return model
