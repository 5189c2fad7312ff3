r"""Poisson regression of counts released with Gaussian-type noise and invariants.

The counts :math:`s` of a table (county counts, a county x sex x age table)
are released as :math:`y = s + e` with Gaussian-type noise (Gaussian,
discrete Gaussian, projected or correlated Gaussian) and, often, linear
invariants :math:`C s = t` published exactly (state totals, margins).
Treating :math:`y` as the counts ignores the noise and understates standard
errors.  The models here maximise the likelihood of the release instead, the
counts' Poisson variation and the known noise together, conditioned on the
invariants (:mod:`._count_likelihoods`: exact for discrete Gaussian noise of
small ``sigma``, Gaussian otherwise).  Their results test groups of terms
with ``compare_lr_test`` and ``wald_test`` (:mod:`._term_tests`).

References
----------
J. Gao, R. Gong and F.-Y. Yu, *Subspace differential privacy*, Sec. 4
(statistical intelligibility) and Theorem 22; R. Gong and X.-L. Meng (2020),
*Congenial differential privacy under mandated disclosure*, Eq. 2.3; Cho &
Awan, Algorithm 1 (semi-DP Gaussian mechanism for tables with fixed margins).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.base import wrapper as wrap
from statsmodels.base.data import PandasData
from statsmodels.base.model import GenericLikelihoodModel, LikelihoodResultsWrapper
from statsmodels.tools.numdiff import approx_fprime

from .._validation import InvariantDPError, check_finite_array
from ..release import Release
from ._count_likelihoods import GaussianCountLikelihood, count_likelihood
from ._release_observation import observe_release
from ._term_tests import PrivatizedResults

__all__ = ["PrivatizedCountModel", "PrivatizedNegativeBinomial", "PrivatizedPoisson"]


def _likelihood_key(obs, method: str, count_law: str) -> tuple:
    """What two fits must share for their likelihoods to be compared (the same release)."""
    inv = obs.invariants
    values = None if inv is None else np.asarray(inv.values, dtype=float).tobytes()
    return (obs.family, repr(obs.law.params), obs.counts.tobytes(), values, method, count_law)


class PrivatizedCountModel(GenericLikelihoodModel):
    r"""What the privatized count models share: the release's likelihood, fit and results.

    A subclass sets ``exog`` (the design of :math:`\log\lambda`) and calls
    :meth:`_use_release`; the log-likelihood, its analytic score (chained
    from the count likelihood's gradient in :math:`\lambda`) and the
    numerical Hessian of the score follow.
    """

    results_class = PrivatizedResults
    #: the law of the counts given the covariates (fits of two laws are not compared)
    count_law = "poisson"
    #: Newton's steps on the exact likelihood use the Gaussian one's Hessian (close for
    #: Poisson counts; for overdispersed counts it misjudges the dispersion's curvature)
    _surrogate_steps = True
    #: the exact likelihood sums against Gaussian noise too (``count_likelihood``'s
    #: ``continuous``): not for Poisson counts, whose Gaussian likelihood is close
    _exact_gaussian = False

    def _use_release(self, release, likelihood: str) -> None:
        self._set_likelihood(observe_release(release), likelihood)

    def _set_likelihood(self, obs, likelihood) -> None:
        """Observe ``obs`` with the count likelihood ``likelihood`` (a name or an object)."""
        self.observation = obs
        if isinstance(likelihood, str):
            self._lik = count_likelihood(obs, likelihood, continuous=self._exact_gaussian)
        else:
            self._lik = likelihood
        # a likelihood given part of the data (the margins) is compared only with its own kind
        self.likelihood_key = _likelihood_key(
            obs, getattr(self._lik, "key", self._lik.method), self.count_law
        )

    @property
    def likelihood_method(self) -> str:
        """``"exact"`` or ``"gaussian"``: the likelihood the fit maximises (module notes)."""
        return self._lik.method

    @property
    def sigma(self) -> float:
        """Standard deviation of one noise coordinate (the largest, for correlated noise)."""
        return self.observation.sigma

    @property
    def invariants(self):
        """The release's invariants, with their exact values (or None)."""
        return self.observation.invariants

    def _lam(self, params) -> np.ndarray:
        beta = np.asarray(params, dtype=float)[: self.exog.shape[1]]
        eta = self.exog @ beta + self.offset_
        return np.exp(np.clip(eta, -700.0, 700.0))

    def _evaluate(self, lik, params, gradient: bool = True):
        r"""``(loglik, score)`` of ``params`` under the count likelihood ``lik``.

        Poisson counts: the likelihood's gradient in the cell means, chained
        to the coefficients (:math:`\partial\lambda_i/\partial\beta =
        \lambda_i x_i`); the score is None where the likelihood is 0.
        """
        lam = self._lam(params)
        ll, grad = lik.poisson(lam, gradient)
        if not gradient or grad is None:
            return ll, None
        return ll, self.exog.T @ (grad * lam)

    def loglike(self, params):
        return float(self._evaluate(self._lik, params, gradient=False)[0])

    def score(self, params):
        grad = self._evaluate(self._lik, params)[1]
        if grad is None:
            return np.full(len(params), np.nan)
        return grad

    def hessian(self, params):
        return approx_fprime(np.asarray(params, dtype=float), self.score, centered=True)

    def _start_params(self):
        r"""A Poisson GLM on ``max(y, 0)``; for a saturated design, its solution directly.

        A saturated design (as many independent columns as cells: the
        reference model of a likelihood ratio test) fits every cell exactly,
        so the GLM's iterations would divide by zero residual degrees of
        freedom and meet empty cells as perfect separation; its fit is
        :math:`X\beta = \log \max(y, 1/2)` instead, and Newton's method
        climbs from there on the release's likelihood.
        """
        from statsmodels.genmod.families import Poisson
        from statsmodels.genmod.generalized_linear_model import GLM

        X = self.exog
        if X.shape[1] >= X.shape[0] and np.linalg.matrix_rank(X) == X.shape[0]:
            target = np.log(np.maximum(self.endog, 0.5)) - self.offset_
            return np.linalg.lstsq(X, target, rcond=None)[0]
        ypos = np.maximum(self.endog, 0.0)
        return GLM(ypos, X, family=Poisson(), offset=self.offset_).fit().params

    def _newton_hessian(self, params) -> np.ndarray:
        """The Hessian Newton's method steps with: the Gaussian likelihood's for the exact one.

        The exact likelihood's Hessian costs two score evaluations per
        parameter; the Gaussian likelihood's, close to it (module notes of
        ``_count_likelihoods``), is cheap, and the steps stay uphill by the
        exact log-likelihood.  The results' covariance uses the exact Hessian.
        """
        if self._lik.method != "exact" or not self._surrogate_steps:
            return self.hessian(params)
        surrogate = self.__dict__.get("_surrogate")
        if surrogate is None:
            surrogate = self._surrogate = GaussianCountLikelihood(self.observation)

        def score(theta):
            grad = self._evaluate(surrogate, theta)[1]
            return np.full(theta.size, np.nan) if grad is None else grad

        return approx_fprime(np.asarray(params, dtype=float), score, centered=True)

    def _ascend(self, params, maxiter: int = 100) -> np.ndarray:
        """Newton's method with step halving and a Levenberg shift (never a worse fit).

        statsmodels' Newton takes full steps, which can leave the region where
        the Poisson means are of the counts' order when the noise is wide and
        the counts small; this one keeps every step uphill.
        """
        theta = np.asarray(params, dtype=float)
        ll = self.loglike(theta)
        for _ in range(maxiter):
            g = self.score(theta)
            if not np.all(np.isfinite(g)):
                break
            H = self._newton_hessian(theta)
            info = -0.5 * (H + H.T)
            if not np.all(np.isfinite(info)):
                break
            scale = max(float(np.max(np.abs(np.diag(info)))), 1e-12)
            step = None
            for shift in (0.0, *(scale * 4.0**k * 1e-8 for k in range(30))):
                # the smallest Levenberg shift that makes the information positive definite
                try:
                    np.linalg.cholesky(info + shift * np.eye(theta.size))
                except np.linalg.LinAlgError:
                    continue
                step = np.linalg.solve(info + shift * np.eye(theta.size), g)
                break
            if step is None:
                break
            t = 1.0
            while t > 1e-12:
                new = theta + t * step
                ll_new = self.loglike(new)
                if np.isfinite(ll_new) and ll_new >= ll - 1e-12 * (1.0 + abs(ll)):
                    break
                t *= 0.5
            else:
                break
            theta, done = new, abs(ll_new - ll) < 1e-10 * (1.0 + abs(ll))
            ll = ll_new
            if done and np.max(np.abs(t * step)) < 1e-8 * (1.0 + np.max(np.abs(theta))):
                break
        return theta

    def _init_regression(self, y, exog, release, offset, likelihood, kwargs, extra=()):
        """Check and store a regression's counts, design and offset; ``extra``: more params."""
        what = type(self).__name__
        y, release = _counts_and_release(y, release, what)
        name = kwargs.pop("endog_name", None) or _response_name(y, release)
        # a DataFrame (or a formula's design) names the coefficients: statsmodels keeps
        # pandas input as pandas results (params, bse, summary)
        frame = exog if isinstance(exog, pd.DataFrame) else None
        y = check_finite_array("y", y).reshape(-1)
        self._use_release(release, likelihood)
        released = self.observation.counts
        if y.shape != released.shape or not np.allclose(y, released, rtol=1e-12, atol=0.0):
            # e.g. a formula's response column that is not the released counts
            raise InvariantDPError(
                "`y` must be the release's values (the released counts); with a formula, the "
                f"response column must hold them, or use {what}(release, exog)."
            )
        exog = check_finite_array("exog", exog)
        if exog.ndim == 1:
            exog = exog[:, None]
        if exog.ndim != 2 or exog.shape[0] != y.size:
            raise InvariantDPError(
                f"`exog` must have shape ({y.size}, p) to match `y`, got {exog.shape}."
            )
        off = np.zeros(y.size) if offset is None else check_finite_array("offset", offset)
        if off.shape != (y.size,):
            raise InvariantDPError(f"`offset` must have shape ({y.size},), got {off.shape}.")
        if frame is not None:
            exog = pd.DataFrame(exog, index=frame.index, columns=frame.columns)
            y = pd.Series(y, index=frame.index, name=name)
        if extra:
            kwargs["extra_params_names"] = list(extra)
        GenericLikelihoodModel.__init__(self, y, exog, **kwargs)
        self.data.ynames = name
        self.exog, self.endog = np.asarray(self.exog, float), np.asarray(self.endog, float)
        self.offset_ = off
        self.k_extra = len(extra)
        self.df_model = exog.shape[1] - self.k_constant
        self.df_resid = y.size - exog.shape[1] - len(extra)

    def fit(self, start_params=None, method="newton", maxiter=100, **kwargs):
        """Maximum likelihood; ``start_params`` default to a Poisson GLM on ``max(y, 0)``.

        ``method="newton"`` (the default) climbs with step halving first, then
        lets statsmodels' Newton confirm the optimum and build the results.
        """
        if start_params is None:
            start_params = self._start_params()
        if method == "newton":
            start_params = self._ascend(start_params, maxiter)
        try:
            res = super().fit(start_params=start_params, method=method, maxiter=maxiter, **kwargs)
        except np.linalg.LinAlgError:
            raise InvariantDPError(
                "the release carries too little information to estimate these parameters: the "
                "Hessian of its log-likelihood is singular at the fit (noise of sd "
                f"{self.sigma:.4g} against counts this small, or a design of deficient rank)."
            ) from None
        # pandas in, pandas out (named params, bse, ...), as statsmodels' own models do
        wrapper = getattr(self, "_results_wrapper", LikelihoodResultsWrapper)
        return wrapper(res) if isinstance(self.data, PandasData) else res


class PrivatizedPoisson(PrivatizedCountModel):
    r"""Poisson log-linear regression of counts released with Gaussian-type noise.

    Model: :math:`s_i \sim \mathrm{Poisson}(\lambda_i)` independently,
    :math:`\log\lambda_i = x_i^\top\beta + \mathrm{offset}_i`; the release is
    :math:`y = s + e` with noise of any Gaussian-type family (``gaussian``,
    ``grid_gaussian``, ``discrete_gaussian``, ``projected_gaussian``, ``extended_gaussian``,
    ``correlated_gaussian``), with or without invariants :math:`C s = t`
    published exactly, the noise keeping them or not.  The log-likelihood is
    that of the release conditioned on the invariants (Gong & Meng, Eq. 2.3;
    :mod:`invariantdp.inference._count_likelihoods`): exact for discrete
    Gaussian noise with :math:`\sigma \le 5` and invariants that are totals
    (or none), Gaussian otherwise (``likelihood=`` chooses), maximised with an
    analytic score.  The results test groups of terms with
    ``compare_lr_test`` and ``wald_test``.

    Parameters
    ----------
    y : Release or array_like or None
        The release, whose values are the counts
        (``PrivatizedPoisson(release, exog)``); or the released counts
        (any shape, flattened) with the release as ``release``; ``None``
        takes them from ``release``.
    exog : array_like, shape (n, p)
        Design matrix (include a constant column for an intercept).
    release : Release, optional
        The release (gives the noise law and the invariants), unless ``y``
        is that release.
    offset : array_like, shape (n,), optional
    likelihood : {"auto", "exact", "gaussian"}
        The exact likelihood of discrete Gaussian noise, the Gaussian one, or
        the switch of :mod:`invariantdp.inference._count_likelihoods`
        (``"auto"``: exact for ``sigma <= 5`` when the invariants allow it).

    Attributes
    ----------
    likelihood_method : str
        ``"exact"`` or ``"gaussian"``, as chosen.
    sigma : float
        The noise standard deviation of one cell.

    References
    ----------
    Gao, Gong & Yu, Cor. 14 and Theorem 22 (the projected Gaussian release);
    Gong & Meng (2020), Eq. 2.3 (conditioning on the invariants); Canonne,
    Kamath & Steinke (2020), Def. 1 (the discrete Gaussian); Cho & Awan,
    Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import projected_gaussian
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(40), rng.normal(size=40)])
    >>> s = rng.poisson(np.exp(4.0 + 0.5 * X[:, 1]))
    >>> rel = projected_gaussian(s.astype(float), totals(np.repeat([0, 1], 20)), mu=0.1, rng=1)
    >>> res = PrivatizedPoisson(rel, X).fit(disp=0)
    >>> bool(abs(res.params[1] - 0.5) < 0.15)
    True

    A discrete Gaussian release (rho = 0.5 per cell) with an exact total:

    >>> from invariantdp import Release
    >>> from invariantdp.mechanisms import discrete_gaussian_mechanism
    >>> noisy = discrete_gaussian_mechanism(s, rho=0.5, rng=2).value
    >>> rel = Release.from_published(noisy, noise="discrete_gaussian", rho=0.5, sensitivity=1.0,
    ...                              invariants=totals(np.zeros(40, int)).of(s))
    >>> model = PrivatizedPoisson(rel, X)
    >>> model.likelihood_method
    'exact'
    >>> bool(abs(model.fit(disp=0).params[1] - 0.5) < 0.15)
    True
    """

    def __init__(self, y, exog, release=None, offset=None, *, likelihood="auto", **kwargs):
        self._init_regression(y, exog, release, offset, likelihood, kwargs)


def _counts_and_release(y, release, what="PrivatizedPoisson"):
    """``(y, release)`` of a count regression: the counts default to the release's."""
    if isinstance(y, Release):
        if release is not None:
            raise InvariantDPError(
                f"`y` is a Release: give the release once, as `{what}(release, exog)`."
            )
        return y.value, y
    if release is None:
        raise InvariantDPError(
            f"`release` is required unless `y` is the Release (`{what}(release, exog)`)."
        )
    return (release.value if y is None and isinstance(release, Release) else y), release


def _response_name(y, release) -> str:
    """The response's name: a formula's left side, else the name the release records, else y."""
    if isinstance(y, pd.DataFrame) and y.shape[1] == 1:
        return str(y.columns[0])
    if isinstance(y, pd.Series) and y.name is not None:
        return str(y.name)
    recorded = release.metadata.get("value_name") if isinstance(release, Release) else None
    return recorded or "y"


class _NegativeBinomialResults(PrivatizedResults):
    r"""Results of :class:`PrivatizedNegativeBinomial`: the dispersion's interval on the log scale.

    The Wald interval :math:`\hat\alpha \pm q\,\mathrm{se}` of a dispersion
    undercovers at the sample sizes of small-area counts: :math:`\hat\alpha`
    is skewed to the right and biased down, so the symmetric interval misses
    above.  The interval of :math:`\log\alpha`, :math:`\log\hat\alpha \pm
    q\,\mathrm{se}/\hat\alpha` (the delta method), mapped back, is
    asymmetric as the law of :math:`\hat\alpha` is and stays in
    :math:`[0, \infty]`.  Measured over releases of 60 county counts with
    exact state totals (tests/inference/test_negative_binomial.py): the
    log-scale 95% interval covered 0.92-0.94 (three streams of 200
    releases), the symmetric one 0.89 (statsmodels' ``NegativeBinomial`` on
    the noiseless counts 0.90).  The coefficients keep their Wald intervals.
    """

    def conf_int(self, alpha=0.05, cols=None):
        """Intervals of the parameters, the dispersion's on the log scale.

        Parameters
        ----------
        alpha : float, optional
            One minus the confidence level (default 0.05).
        cols : sequence of int, optional
            Positions of the parameters whose rows to return (default all).

        Returns
        -------
        ndarray, shape (len(cols), 2)
            Lower and upper ends.  The quantile is statsmodels' (Student's t
            with ``df_resid`` when the fit used ``use_t``, else normal); an
            estimate of the dispersion so close to 0 that its log-scale
            half-width overflows gives ``[0, inf]``, the interval's limit.
        """
        rows = _parameter_rows(cols, len(self.params))
        ci = np.array(super().conf_int(alpha), dtype=float)
        a = float(self.params[-1])
        if rows is None or len(self.params) - 1 in rows:
            # on the log scale: log a -+ q se / a, with q se the half-width of statsmodels'
            # own interval (its quantile); the exp overflows (to inf, the limit) for an
            # estimate at the boundary; a = 0 exactly is the limit [0, inf] itself
            with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
                half = (ci[-1, 1] - ci[-1, 0]) / (2.0 * a)
                ends = np.exp(np.log(a) + np.array([-half, half]))
            ci[-1] = [0.0, np.inf] if a == 0.0 else ends
        return ci if rows is None else ci[rows]


def _parameter_rows(cols, n: int):
    """``cols`` of :meth:`_NegativeBinomialResults.conf_int`: positions in ``[0, n)``, or None.

    Checked: integer positions only, each in range.
    """
    if cols is None:
        return None
    arr = np.asarray(cols)
    if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(
            f"`cols` ({cols!r}) must be a sequence of integer positions of the parameters."
        )
    bad = (arr < 0) | (arr >= n)
    if np.any(bad):
        raise InvariantDPError(
            f"`cols` ({cols!r}) must hold positions in [0, {n}): {int(arr[bad][0])} is not one."
        )
    return arr.astype(np.int64)


class _NegativeBinomialResultsWrapper(LikelihoodResultsWrapper):
    """pandas results of :class:`PrivatizedNegativeBinomial` (statsmodels' wrapper binds the
    methods of the class it is populated from, so the log-scale interval needs its own)."""


wrap.populate_wrapper(_NegativeBinomialResultsWrapper, _NegativeBinomialResults)


def _wrapped_conf_int(self, alpha=0.05, cols=None):
    # statsmodels names every parameter's row; the rows of ``cols`` keep their names
    results = object.__getattribute__(self, "_results")
    rows = _parameter_rows(cols, len(results.params))
    full = results.model.data.wrap_output(results.conf_int(alpha), how="columns")
    if rows is None:
        return full
    return full.iloc[rows] if isinstance(full, pd.DataFrame) else full[rows]


_wrapped_conf_int.__doc__ = _NegativeBinomialResults.conf_int.__doc__
_NegativeBinomialResultsWrapper.conf_int = _wrapped_conf_int


class PrivatizedNegativeBinomial(PrivatizedCountModel):
    r"""Negative binomial (NB2) regression of counts released with Gaussian-type noise.

    Model: :math:`s_i \sim \mathrm{NB2}(\lambda_i, \alpha)` independently,
    mean :math:`\lambda_i`, variance :math:`\lambda_i + \alpha\lambda_i^2`,
    :math:`\log\lambda_i = x_i^\top\beta + \mathrm{offset}_i`: the Poisson
    model of :class:`PrivatizedPoisson` with overdispersion (counts of areas
    that differ in more than the covariates).  The release, its noise and
    invariants are those :class:`PrivatizedPoisson` takes, and the
    log-likelihood is that of the release conditioned on the invariants
    (:mod:`invariantdp.inference._count_likelihoods`): exact for discrete
    Gaussian noise with :math:`\sigma \le 5` and invariants that are totals
    (the NB2 probabilities convolved with the noise; its gradient by
    Fisher's identity), Gaussian otherwise (the counts as
    :math:`N(\lambda, \mathrm{diag}(\lambda + \alpha\lambda^2))`).  As the
    noise vanishes the exact likelihood is NB2's own, so the fit is that of
    statsmodels' ``NegativeBinomial`` on the counts.  The parameters are
    :math:`\beta` and ``alpha`` (last); the results test groups of terms
    with ``compare_lr_test`` (against another negative binomial fit of the
    same release) and ``wald_test``.

    Parameters
    ----------
    y : Release or array_like or None
        As for :class:`PrivatizedPoisson`.
    exog : array_like, shape (n, p)
        Design matrix (include a constant column for an intercept).
    release : Release, optional
    offset : array_like, shape (n,), optional
    likelihood : {"auto", "exact", "gaussian"}
        As for :class:`PrivatizedPoisson`.

    Attributes
    ----------
    likelihood_method : str
        ``"exact"`` or ``"gaussian"``, as chosen.
    sigma : float
        The noise standard deviation of one cell.

    Notes
    -----
    The dispersion is estimated on :math:`\alpha > 0`; with no
    overdispersion its estimate tends to the boundary and the Poisson model
    is the one to fit (the likelihood ratio of the two has a mixture of
    chi-squared laws there, not chi-squared with one degree of freedom, so
    the two fits are not compared by ``compare_lr_test``).

    ``conf_int`` gives the coefficients Wald intervals and ``alpha`` the
    Wald interval of :math:`\log\alpha` mapped back,
    :math:`\hat\alpha\exp(\pm z\,\mathrm{se}/\hat\alpha)`: the symmetric
    interval of a dispersion misses above (:math:`\hat\alpha` is skewed to
    the right and biased down at small-area sample sizes): over releases of
    60 county counts the symmetric 95% interval covered 0.89, this one
    0.92-0.94 (see the results' ``conf_int``).  Its quantile is
    statsmodels' (Student's t with ``use_t``), and ``cols`` selects rows.

    References
    ----------
    A. C. Cameron and P. K. Trivedi (2013), *Regression Analysis of Count
    Data*, 2nd ed., Sec. 3.3 (NB2); Gong & Meng (2020), Eq. 2.3
    (conditioning on the invariants); Canonne, Kamath & Steinke (2020),
    Def. 1 (the discrete Gaussian); T. A. Louis (1982), *Finding the
    observed information matrix when using the EM algorithm*, JRSS B 44
    (Fisher's identity).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Release
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import discrete_gaussian_mechanism
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(80), rng.normal(size=80)])
    >>> lam = np.exp(3.0 + 0.5 * X[:, 1])
    >>> s = rng.negative_binomial(1 / 0.3, 1 / (1 + 0.3 * lam))   # alpha = 0.3
    >>> noisy = discrete_gaussian_mechanism(s, rho=0.5, rng=2).value
    >>> rel = Release.from_published(noisy, noise="discrete_gaussian", rho=0.5, sensitivity=1.0,
    ...                              invariants=totals(np.zeros(80, int)).of(s))
    >>> res = PrivatizedNegativeBinomial(rel, X).fit(disp=0)
    >>> res.model.exog_names
    ['const', 'x1', 'alpha']
    >>> bool(abs(res.params[1] - 0.5) < 3 * res.bse[1]), bool(0.1 < res.params[2] < 0.6)
    (True, True)
    """

    results_class = _NegativeBinomialResults
    _results_wrapper = _NegativeBinomialResultsWrapper
    count_law = "negative binomial"
    _surrogate_steps = False
    _exact_gaussian = True

    def __init__(self, y, exog, release=None, offset=None, *, likelihood="auto", **kwargs):
        self._init_regression(y, exog, release, offset, likelihood, kwargs, extra=("alpha",))

    def _evaluate(self, lik, params, gradient: bool = True):
        r"""``(loglik, score)``: the gradient in :math:`(\lambda, \alpha)` chained to
        :math:`(\beta, \alpha)`; the log-likelihood is :math:`-\infty` for :math:`\alpha \le 0`."""
        params = np.asarray(params, dtype=float)
        alpha = float(params[-1])
        if not alpha > 0.0:
            return -np.inf, None
        lam = self._lam(params)
        ll, grad = lik.negative_binomial(lam, alpha, gradient)
        if not gradient or grad is None:
            return ll, None
        g_lam, g_alpha = grad
        return ll, np.append(self.exog.T @ (g_lam * lam), g_alpha)

    def _start_params(self):
        r"""The Poisson start of the coefficients; ``alpha`` from the moments beyond the noise.

        :math:`E[(y - \lambda)^2] = \lambda + \alpha\lambda^2 + v` (noise
        variance :math:`v`) gives a moment estimate of ``alpha``; a small
        positive value when the counts show no overdispersion.
        """
        beta = super()._start_params()
        lam = np.exp(np.clip(self.exog @ beta + self.offset_, -700.0, 700.0))
        noise = np.diag(self.observation.noise_cov())
        excess = float(np.sum((self.endog - lam) ** 2 - lam - noise))
        alpha = excess / float(np.sum(lam * lam))
        return np.append(beta, alpha if alpha > 0.01 else 0.01)
