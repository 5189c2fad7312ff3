r"""Regression and log-linear models fitted to projected-Gaussian releases.

The release :math:`y = s + \Pi_N e` of counts :math:`s` keeps linear
invariants exactly (e.g. state totals of county counts, margins of a table).
Treating :math:`y` as the counts ignores the noise and understates standard
errors.  The models here use the marginal likelihood of
:func:`~invariantdp.inference.projected_gaussian_marginal_loglik`,
:math:`y \sim N(\mu(\theta), \Sigma(\theta) + \sigma^2 \Pi_N)`, which accounts
for both the sampling variation of the counts and the (known) privacy noise.

References
----------
J. Gao, R. Gong and F.-Y. Yu, *Subspace differential privacy*, Sec. 4
(statistical intelligibility) and Theorem 22; Cho & Awan, Algorithm 1
(semi-DP Gaussian mechanism for tables with fixed margins).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg, stats
from statsmodels.base.data import PandasData
from statsmodels.base.model import GenericLikelihoodModel, LikelihoodResultsWrapper
from statsmodels.tools.numdiff import approx_fprime

from .._results import Summary, format_table
from .._tidy import TidyResult
from .._validation import InvariantDPError, check_finite_array
from ..invariants import one_way_margins
from ..release import Release
from ._invariant_likelihoods import degenerate_gaussian_logpdf, release_sigma

__all__ = ["IndependenceTestResult", "PrivatizedLogLinear", "PrivatizedPoisson"]

_LOG2PI = np.log(2.0 * np.pi)


class PrivatizedPoisson(GenericLikelihoodModel):
    r"""Poisson log-linear regression of counts released with projected Gaussian noise.

    Model: :math:`s_i \sim \mathrm{Poisson}(\lambda_i)` independently,
    :math:`\log\lambda_i = x_i^\top\beta + \mathrm{offset}_i`; the release is
    :math:`y = s + \Pi_N e`, :math:`e \sim N(0, \sigma^2 I)`, holding the
    invariants :math:`C y = C s`.  The log-likelihood is the Gaussian
    approximation :math:`y \sim N(\lambda, \mathrm{diag}(\lambda) +
    \sigma^2\Pi_N)` (large counts), maximised with an analytic score.

    Parameters
    ----------
    y : Release or array_like or None
        The projected-Gaussian release, whose values are the counts
        (``PrivatizedPoisson(release, exog)``); or the released counts
        (any shape, flattened) with the release as ``release``; ``None``
        takes them from ``release``.
    exog : array_like, shape (n, p)
        Design matrix (include a constant column for an intercept).
    release : Release, optional
        The projected-Gaussian release (gives ``sigma`` and the invariants),
        unless ``y`` is that release.
    offset : array_like, shape (n,), optional

    References
    ----------
    Gao, Gong & Yu, Cor. 14 and Theorem 22 (the projected Gaussian release);
    Cho & Awan, Algorithm 1.

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
    """

    def __init__(self, y, exog, release=None, offset=None, **kwargs):
        y, release = _counts_and_release(y, release)
        sigma, inv = release_sigma(release)
        # a DataFrame (or a formula's design) names the coefficients: statsmodels keeps
        # pandas input as pandas results (params, bse, summary)
        frame = exog if isinstance(exog, pd.DataFrame) else None
        y = check_finite_array("y", y).reshape(-1)
        released = np.asarray(release.value, dtype=float).reshape(-1)
        if y.shape != released.shape or not np.allclose(y, released, rtol=1e-12, atol=0.0):
            # e.g. a formula's response column that is not the released counts
            raise InvariantDPError(
                "`y` must be the release's values (the released counts); with a formula, the "
                "response column must hold them, or use PrivatizedPoisson(release, exog)."
            )
        exog = check_finite_array("exog", exog)
        if exog.ndim == 1:
            exog = exog[:, None]
        if exog.ndim != 2 or exog.shape[0] != y.size:
            raise InvariantDPError(
                f"`exog` must have shape ({y.size}, p) to match `y`, got {exog.shape}."
            )
        if inv.n_cells != y.size:
            raise InvariantDPError(
                f"`y` has {y.size} cells but the release's invariants act on {inv.n_cells}."
            )
        off = np.zeros(y.size) if offset is None else check_finite_array("offset", offset)
        if off.shape != (y.size,):
            raise InvariantDPError(f"`offset` must have shape ({y.size},), got {off.shape}.")
        if frame is not None:
            exog = pd.DataFrame(exog, index=frame.index, columns=frame.columns)
            y = pd.Series(y, index=frame.index, name=kwargs.pop("endog_name", "y"))
        super().__init__(y, exog, **kwargs)
        self.exog, self.endog = np.asarray(self.exog, float), np.asarray(self.endog, float)
        self.sigma = sigma
        self.invariants = inv
        self.offset_ = off
        self._P = sigma**2 * inv.projector()
        self.k_extra = 0
        self.df_model = exog.shape[1] - 1
        self.df_resid = y.size - exog.shape[1]

    def _parts(self, params):
        lam = np.exp(np.clip(self.exog @ params + self.offset_, -700, 700))
        S = self._P + np.diag(lam)
        L = linalg.cholesky(S, lower=True)
        r = self.endog - lam
        return lam, L, r

    def loglike(self, params):
        try:
            lam, L, r = self._parts(np.asarray(params, dtype=float))
        except linalg.LinAlgError:
            return -np.inf
        z = linalg.solve_triangular(L, r, lower=True)
        n = r.size
        return float(-0.5 * (n * _LOG2PI + 2.0 * np.sum(np.log(np.diag(L))) + z @ z))

    def score(self, params):
        lam, L, r = self._parts(np.asarray(params, dtype=float))
        Sinv = linalg.cho_solve((L, True), np.eye(r.size))
        a = Sinv @ r
        dl = a + 0.5 * (a * a - np.diag(Sinv))
        return self.exog.T @ (dl * lam)

    def hessian(self, params):
        return approx_fprime(np.asarray(params, dtype=float), self.score, centered=True)

    def fit(self, start_params=None, method="newton", maxiter=100, **kwargs):
        """Maximum likelihood; ``start_params`` default to a Poisson GLM on ``max(y, 0)``."""
        if start_params is None:
            from statsmodels.genmod.families import Poisson
            from statsmodels.genmod.generalized_linear_model import GLM

            ypos = np.maximum(self.endog, 0.0)
            start_params = GLM(ypos, self.exog, family=Poisson(), offset=self.offset_).fit().params
        res = super().fit(start_params=start_params, method=method, maxiter=maxiter, **kwargs)
        # pandas in, pandas out (named params, bse, ...), as statsmodels' own models do
        return LikelihoodResultsWrapper(res) if isinstance(self.data, PandasData) else res


def _axis_names(release, r, c):
    """Row and column names of a table release: its labels, or positions."""
    labels = getattr(release, "labels", None)
    if labels is None or len(labels) != 2:
        return [str(i) for i in range(r)], [str(j) for j in range(c)]
    return [[str(v) for v in ax.labels] for ax in labels]


def _counts_and_release(y, release):
    """``(y, release)`` of :class:`PrivatizedPoisson`: the counts default to the release's."""
    if isinstance(y, Release):
        if release is not None:
            raise InvariantDPError(
                "`y` is a Release: give the release once, as `PrivatizedPoisson(release, exog)`."
            )
        return y.value, y
    if release is None:
        raise InvariantDPError(
            "`release` is required unless `y` is the Release (`PrivatizedPoisson(release, exog)`)."
        )
    return (release.value if y is None and isinstance(release, Release) else y), release


def _ipf_means(log_odds: np.ndarray, rows: np.ndarray, cols: np.ndarray, tol=1e-12, it=500):
    """Table with margins ``rows, cols`` and interaction ``exp(log_odds)`` (IPF)."""
    mu = np.exp(log_odds - log_odds.max())
    for _ in range(it):
        mu *= (rows / mu.sum(axis=1))[:, None]
        mu *= (cols / mu.sum(axis=0))[None, :]
        if np.max(np.abs(mu.sum(axis=1) - rows)) < tol * max(1.0, rows.max()):
            break
    return mu


def _conditional_cov(mu: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Cov of Poisson counts with means ``mu`` given ``C s``: ``D - D C^T (C D C^T)^+ C D``."""
    D = np.diag(mu.reshape(-1))
    CD = C @ D
    return D - CD.T @ np.linalg.pinv(CD @ C.T) @ CD


@dataclass(frozen=True)
class IndependenceTestResult(TidyResult):
    """Test of independence in an r x c table from a privatized release.

    Attributes
    ----------
    statistic : float
        The test statistic, asymptotically chi-squared with ``df`` degrees of
        freedom under independence.
    df : int
        Degrees of freedom, ``(r - 1) (c - 1)``.
    pvalue : float
        Upper-tail chi-squared p-value of :attr:`statistic`.
    method : str
        ``"pearson"`` (generalised Pearson / score statistic with the
        pseudo-inverse of ``V_0 + sigma^2 Pi_N``) or ``"lr"`` (likelihood ratio).
    sigma : float
        The release's noise standard deviation.

    References
    ----------
    Cho & Awan, Algorithm 1 (the semi-DP Gaussian release of a table with
    fixed margins); Gao, Gong & Yu, Sec. 4 (inference from a projected
    release).

    Examples
    --------
    >>> from invariantdp.mechanisms import semi_dp_gaussian
    >>> rel = semi_dp_gaussian([[60, 20], [25, 55]], mu=0.5, rng=3)
    >>> res = PrivatizedLogLinear(rel).test_independence()
    >>> res.df, res.method, bool(res.pvalue < 0.001)
    (1, 'pearson', True)
    """

    statistic: float
    df: int
    pvalue: float
    method: str
    sigma: float

    def summary(self) -> Summary:
        return format_table(
            "Independence test on a privatized table",
            [
                ("method", self.method),
                ("statistic", self.statistic),
                ("df", self.df),
                ("p-value", self.pvalue),
                ("noise sigma", self.sigma),
            ],
        )


class PrivatizedLogLinear(GenericLikelihoodModel):
    r"""Log-linear model of an r x c table released with invariant one-way margins.

    The table :math:`s` is released by the semi-DP Gaussian mechanism (Cho &
    Awan, Algorithm 1) or any projected Gaussian that fixes the one-way
    margins: :math:`y = s + \Pi_N e`.  Given the margins, the model is
    :math:`\log \mu_{ij} = a_i + b_j + \gamma_{ij}` with :math:`\gamma` the
    ``(r-1)(c-1)`` interaction parameters (last row and column are the
    reference), :math:`a, b` fixed by the margins (IPF).  The likelihood is
    the degenerate Gaussian :math:`y \sim N(\mu, V(\mu) + \sigma^2 \Pi_N)` on
    the affine space of the margins, with :math:`V` the Poisson covariance
    conditioned on the margins.  :meth:`test_independence` tests
    :math:`\gamma = 0`.

    Parameters
    ----------
    release : Release
        A projected-Gaussian release of an r x c table with its one-way margins.

    References
    ----------
    Cho & Awan, Algorithm 1 and Prop. 32 (the semi-DP Gaussian release of a
    table with fixed one-way margins); Gao, Gong & Yu, Theorem 22.

    Examples
    --------
    >>> from invariantdp.mechanisms import semi_dp_gaussian
    >>> rel = semi_dp_gaussian([[60, 20], [25, 55]], mu=0.5, rng=3)
    >>> PrivatizedLogLinear(rel).test_independence().pvalue < 0.001
    True
    """

    def __init__(self, release, **kwargs):
        sigma, inv = release_sigma(release)
        y = np.asarray(release.value, dtype=float)
        if y.ndim != 2 or min(y.shape) < 2:
            raise InvariantDPError(f"`release` must hold an r x c table, got shape {y.shape}.")
        r, c = y.shape
        margins = one_way_margins((r, c))
        C = margins.dense_matrix()
        if inv.n_cells != r * c:
            raise InvariantDPError("`release` invariants do not act on the table's cells.")
        if not np.allclose(inv.project(np.asarray(C, dtype=float)), 0.0, atol=1e-8):
            raise InvariantDPError("`release` must hold the table's one-way margins invariant.")
        self.table_shape = (r, c)
        self.rows = y.sum(axis=1)
        self.cols = y.sum(axis=0)
        self.sigma = sigma
        self._C = np.asarray(C, dtype=float)
        self._P = sigma**2 * margins.projector()
        k = (r - 1) * (c - 1)
        exog = np.zeros((r * c, k))
        # the release's labels name the interactions (gamma[F, yes]); positions without them
        rl, cl = _axis_names(release, r, c)
        names = []
        for i in range(r - 1):
            for j in range(c - 1):
                exog[i * c + j, i * (c - 1) + j] = 1.0
                names.append(f"gamma[{rl[i]},{cl[j]}]")
        super().__init__(y.reshape(-1), exog, **kwargs)
        self.exog_names[:] = names
        self.k_extra = 0
        self.df_model = k

    def mean(self, params) -> np.ndarray:
        """Expected table under interaction ``params`` with the released margins."""
        gamma = self.exog @ np.asarray(params, dtype=float)
        return _ipf_means(gamma.reshape(self.table_shape), self.rows, self.cols)

    def covariance(self, params) -> np.ndarray:
        """Covariance of the release: conditional Poisson covariance + ``sigma^2 Pi_N``."""
        mu = self.mean(params)
        return _conditional_cov(mu, self._C) + self._P

    def loglike(self, params):
        mu = self.mean(params).reshape(-1)
        cov = self.covariance(params)
        return float(degenerate_gaussian_logpdf(self.endog, mu, 0.5 * (cov + cov.T)))

    def fit(self, start_params=None, method="bfgs", maxiter=500, **kwargs):
        if start_params is None:
            t = np.maximum(self.endog.reshape(self.table_shape), 0.5)
            lt = np.log(t)
            g = lt - lt[:, -1:] - lt[-1:, :] + lt[-1, -1]
            start_params = g[:-1, :-1].reshape(-1)
        return super().fit(start_params=start_params, method=method, maxiter=maxiter, **kwargs)

    def test_independence(self, method="pearson") -> IndependenceTestResult:
        r"""Test independence (:math:`\gamma = 0`) from the privatized table.

        ``"pearson"``: :math:`T = (y - E_0)^\top (V_0 + \sigma^2\Pi_N)^+ (y - E_0)`
        with :math:`E_0 = r_i c_j / n`, asymptotically
        :math:`\chi^2_{(r-1)(c-1)}`; at :math:`\sigma = 0` it is the Pearson
        statistic.  ``"lr"``: twice the log-likelihood ratio of the fitted
        model against independence.
        """
        k = self.df_model
        zero = np.zeros(k)
        if method == "pearson":
            e0 = self.mean(zero).reshape(-1)
            cov = self.covariance(zero)
            lam, U = linalg.eigh(0.5 * (cov + cov.T))
            keep = lam > 1e-9 * lam.max()
            z = (self.endog - e0) @ U[:, keep]
            stat = float(np.sum(z * z / lam[keep]))
        elif method == "lr":
            res = self.fit(disp=0)
            stat = float(max(2.0 * (res.llf - self.loglike(zero)), 0.0))
        else:
            raise InvariantDPError(f"`method` ({method!r}) must be 'pearson' or 'lr'.")
        return IndependenceTestResult(stat, k, float(stats.chi2.sf(stat, k)), method, self.sigma)
