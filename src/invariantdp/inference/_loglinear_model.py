r"""Log-linear models of a released table: independence and conditional independence.

A table of counts :math:`s_{kij}` (stratum :math:`k`, e.g. a county, by row
:math:`i` and column :math:`j`, e.g. sex by age) released with Gaussian-type
noise (:mod:`._release_observation`).  The saturated log-linear model

.. math:: \log \mu_{kij} = a_k + b_{ki} + c_{kj} + \gamma_{kij}

(treatment coding, the last row and column the reference) holds (conditional)
independence of rows and columns given the stratum when every
:math:`\gamma_{kij} = 0`: the test has :math:`K (r-1)(c-1)` degrees of
freedom.  :class:`PrivatizedLogLinear` fits it in one of two ways:

* **the margins are invariant** (each stratum's row and column totals are
  published exactly, e.g. the semi-DP Gaussian mechanism of Cho & Awan,
  Algorithm 1): the nuisance :math:`a, b, c` are fixed by the margins, the
  table's mean is the IPF fit of :math:`e^\gamma` to them, and the
  likelihood is the Gaussian one of the release given the margins,
  :math:`y \sim N(\mu(\gamma), V(\mu) + \Sigma_e)` with :math:`V` the
  Poisson covariance conditioned on the margins; the parameters are the
  :math:`\gamma` only;
* **otherwise** (a state total, county totals, no invariants): the
  nuisance terms are parameters too, and the model is the Poisson
  regression of :class:`~invariantdp.inference.PrivatizedPoisson` on the
  saturated design, with its likelihood (exact for discrete Gaussian noise
  of small ``sigma``, conditioned on whatever invariants there are).

References
----------
Cho & Awan, Algorithm 1 and Prop. 32 (a table released with fixed one-way
margins); Gao, Gong & Yu, Theorem 22; Gong & Meng (2020), Eq. 2.3;
A. Agresti, *Categorical Data Analysis* (3rd ed., 2013), Sec. 9.2
(conditional independence in three-way tables).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.base.model import LikelihoodResultsWrapper
from statsmodels.tools.numdiff import approx_fprime

from .._linalg import AffineSubspace
from .._results import Summary, format_table
from .._validation import InvariantDPError, check_confidence_level, format_value
from ._invariant_likelihoods import degenerate_gaussian_logpdf
from ._likelihood_models import PrivatizedCountModel, PrivatizedPoisson
from ._release_observation import observe_release
from ._term_tests import PrivatizedResults, score_statistic
from ._tidy import TidyResult

__all__ = ["IndependenceTestResult", "LogLinearResults", "PrivatizedLogLinear"]


@dataclass(frozen=True)
class IndependenceTestResult(TidyResult):
    """Test of (conditional) independence in a table from a privatized release.

    Attributes
    ----------
    statistic : float
        The test statistic, asymptotically chi-squared with ``df`` degrees of
        freedom under independence.
    df : int
        Degrees of freedom, ``K (r - 1) (c - 1)`` for ``K`` strata.
    pvalue : float
        Upper-tail chi-squared p-value of :attr:`statistic`.
    method : str
        ``"pearson"`` (generalised Pearson: the score statistic of the
        interactions at the independence fit, with the release's likelihood;
        Pearson's X^2 when the noise vanishes, for margins conditioned on or
        the exact likelihood) or ``"lr"`` (likelihood ratio; the deviance G^2
        when the noise vanishes, with the exact likelihood).
    sigma : float
        The release's noise standard deviation (of one cell).
    given : str or None
        The stratum (conditional independence given it), or None.
    likelihood : str
        ``"gaussian"`` or ``"exact"``: the likelihood of the release used.

    References
    ----------
    Cho & Awan, Algorithm 1 (the semi-DP Gaussian release of a table with
    fixed margins); Gao, Gong & Yu, Sec. 4 (inference from a projected
    release); Agresti (2013), Sec. 9.2.

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
    given: str | None = None
    likelihood: str = "gaussian"

    def summary(self) -> Summary:
        title = "Independence test on a privatized table"
        if self.given is not None:
            title = f"Conditional independence test given {self.given} on a privatized table"
        return format_table(
            title,
            [
                ("method", self.method),
                ("statistic", self.statistic),
                ("df", self.df),
                ("p-value", self.pvalue),
                ("noise sigma", self.sigma),
                ("likelihood", self.likelihood),
            ],
        )


# ---------------------------------------------------------------------------
# the table: its axes, strata and cells
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Table:
    names: list  # axis names
    levels: list  # labels along each axis (strings)
    index: np.ndarray  # flat release position of each table cell, shape (n_1, ..., n_d)


def _table(release) -> _Table:
    """The release's table: its value's axes, a MultiIndex axis split into its levels."""
    value = np.asarray(release.value)
    labels = release.labels
    names, levels, codes = [], [], []
    grid = np.indices(value.shape).reshape(value.ndim, -1)
    for a, size in enumerate(value.shape):
        ax = None if labels is None else labels[a]
        if ax is not None and isinstance(ax.name, tuple):
            tuples = list(ax.labels)
            for lev, lname in enumerate(ax.name):
                col = [str(t[lev]) for t in tuples]
                c, u = pd.factorize(pd.Index(col), sort=False)
                names.append(lname if lname is not None else f"axis{len(names)}")
                levels.append([str(x) for x in u])
                codes.append(c[grid[a]])
        else:
            names.append(ax.name if ax is not None and ax.name is not None else f"axis{a}")
            levels.append(
                [str(x) for x in ax.labels] if ax is not None else [str(i) for i in range(size)]
            )
            codes.append(grid[a])
    shape = tuple(len(lv) for lv in levels)
    index = np.full(shape, -1, dtype=np.int64)
    index[tuple(codes)] = np.arange(value.size)
    if np.prod(shape) != value.size or np.any(index < 0):
        raise InvariantDPError(
            "`release` must hold a complete table: its labels "
            f"{format_value([str(n) for n in names])} do not give every combination once."
        )
    return _Table([str(n) for n in names], levels, index)


def _axis(table: _Table, a, what: str) -> int:
    if isinstance(a, int | np.integer) and not isinstance(a, bool):
        if 0 <= a < len(table.names):
            return int(a)
    elif a in table.names:
        return table.names.index(a)
    raise InvariantDPError(
        f"`{what}` ({format_value(a)}) must name an axis of the table: one of "
        f"{format_value(table.names)} or its position."
    )


# ---------------------------------------------------------------------------
# margins conditioned on: IPF and the conditional covariance
# ---------------------------------------------------------------------------


def _ipf_means(log_odds: np.ndarray, rows: np.ndarray, cols: np.ndarray, tol=1e-12, it=500):
    """Tables (K, r, c) with margins ``rows`` (K, r), ``cols`` (K, c), interactions ``log_odds``."""
    mu = np.exp(log_odds - log_odds.max(axis=(1, 2), keepdims=True))
    for _ in range(it):
        mu *= (rows / mu.sum(axis=2))[:, :, None]
        mu *= (cols / mu.sum(axis=1))[:, None, :]
        if np.max(np.abs(mu.sum(axis=2) - rows)) < tol * max(1.0, rows.max()):
            break
    return mu


def _conditional_cov(mu: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Cov of Poisson counts with means ``mu`` given ``C s``: ``D - D C^T (C D C^T)^+ C D``."""
    D = np.diag(mu.reshape(-1))
    CD = C @ D
    return D - CD.T @ np.linalg.pinv(CD @ C.T) @ CD


def _margin_matrix(cells: np.ndarray, n: int) -> np.ndarray:
    """Each stratum's row and column totals as rows of a matrix on the release's cells."""
    K, r, c = cells.shape
    M = np.zeros((K * (r + c), n))
    for k in range(K):
        for i in range(r):
            M[k * (r + c) + i, cells[k, i]] = 1.0
        for j in range(c):
            M[k * (r + c) + r + j, cells[k, :, j]] = 1.0
    return M


def _margins_fixed(inv, M: np.ndarray) -> bool:
    """The invariants are exactly the stratum margins (the same row space)."""
    if inv is None:
        return False
    if not np.allclose(inv.project(M), 0.0, atol=1e-8):
        return False
    return inv.rank == np.linalg.matrix_rank(M)


class LogLinearResults(PrivatizedResults):
    """Results of :class:`PrivatizedLogLinear`: those of every count model and the odds ratios.

    Everything of :class:`~invariantdp.inference.PrivatizedResults`
    (labelled ``params``, ``bse``, ``summary()``, ``compare_lr_test``,
    ``wald_test``) plus :meth:`log_odds_ratios`.
    """

    def log_odds_ratios(self, confidence_level: float = 0.95) -> pd.DataFrame:
        r"""The interactions as a labelled frame: each stratum's log odds ratios, se, interval.

        The interaction :math:`\gamma_{kij}` of the saturated model (module
        notes; treatment coding) is the log odds ratio of row level
        :math:`i` against the last row and column level :math:`j` against
        the last column in stratum :math:`k`,
        :math:`\log(\mu_{kij}\mu_{krc} / (\mu_{kic}\mu_{krj}))`: for a
        2 x 2 table in each county, the county's log odds ratio.  Its
        standard error is the fit's (the release's likelihood: noise and
        invariants included) and the interval is Wald's,
        :math:`\hat\gamma \pm z_{(1+\text{level})/2}\,\mathrm{se}`.

        Parameters
        ----------
        confidence_level : float
            In (0, 1).

        Returns
        -------
        pandas.DataFrame
            Indexed by the stratum (named as ``given``; absent without
            strata), the row level and the column level; columns
            ``log_odds_ratio``, ``se``, ``ci_lower``, ``ci_upper``.

        References
        ----------
        Agresti (2013), Sec. 2.4 and 9.2 (odds ratios in a log-linear model;
        conditional independence in a three-way table).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from invariantdp import Release
        >>> from invariantdp.invariants import totals
        >>> idx = pd.MultiIndex.from_product([["C1", "C2"], ["F", "M"], ["0-17", "18+"]],
        ...                                  names=["county", "sex", "age"])
        >>> noisy = pd.Series([52, 148, 49, 151, 81, 120, 79, 118], index=idx, name="count")
        >>> rel = Release.from_published(noisy, noise="discrete_gaussian", sigma=1.0,
        ...                              invariants=totals(np.zeros(8, int)).with_values([800]))
        >>> lor = PrivatizedLogLinear(rel, given="county").fit(disp=0).log_odds_ratios()
        >>> list(lor.index.get_level_values("county")), list(lor.columns)
        (['C1', 'C2'], ['log_odds_ratio', 'se', 'ci_lower', 'ci_upper'])
        """
        level = check_confidence_level(confidence_level)
        model = self.model
        cols = model._gamma_columns
        est = np.asarray(self.params, dtype=float)[cols]
        se = np.asarray(self.bse, dtype=float)[cols]
        z = float(stats.norm.ppf(0.5 + level / 2.0))
        return pd.DataFrame(
            {
                "log_odds_ratio": est,
                "se": se,
                "ci_lower": est - z * se,
                "ci_upper": est + z * se,
            },
            index=model._gamma_index,
        )


class PrivatizedLogLinear(PrivatizedCountModel):
    r"""Log-linear model of a table released with Gaussian-type noise; tests of independence.

    The table (an r x c release, or a table with strata: county x sex x age
    with ``given="county"``) is released with Gaussian-type noise
    (``gaussian``, ``grid_gaussian``, ``discrete_gaussian``,
    ``projected_gaussian``, ``extended_gaussian``, ``correlated_gaussian``) and
    any invariants.  The
    saturated log-linear model (module notes) has the interactions
    :math:`\gamma` of rows and columns within each stratum;
    :meth:`test_independence` tests :math:`\gamma = 0`: independence of an
    r x c table, or conditional independence given the stratum, with
    :math:`K (r-1)(c-1)` degrees of freedom.  When the invariants are the
    stratum margins they are conditioned on and the parameters are the
    :math:`\gamma` alone; otherwise the nuisance terms are estimated with
    them (module notes).  The results test any group of terms with
    ``compare_lr_test`` and ``wald_test``.

    Parameters
    ----------
    release : Release
        A release of a complete table: a 2-D value, a value with more axes,
        or a 1-D value whose labels are a ``MultiIndex`` (its levels are the
        axes).
    given : str, int or list, optional
        The stratum axes (names or positions); the table's other two axes
        are the rows and columns.  Default: none (the table must have two
        axes).
    likelihood : {"auto", "exact", "gaussian"}
        As for :class:`~invariantdp.inference.PrivatizedPoisson` (margins
        conditioned on use the Gaussian likelihood).

    Attributes
    ----------
    table_shape : tuple
        ``(r, c)``, or ``(K, r, c)`` with a stratum.
    conditioned_on_margins : bool
        The margins are invariant and conditioned on (the parameters are the
        interactions only).

    References
    ----------
    Cho & Awan, Algorithm 1 and Prop. 32 (the semi-DP Gaussian release of a
    table with fixed one-way margins); Gao, Gong & Yu, Theorem 22; Gong &
    Meng (2020), Eq. 2.3; Agresti (2013), Sec. 9.2.

    Examples
    --------
    >>> from invariantdp.mechanisms import semi_dp_gaussian
    >>> rel = semi_dp_gaussian([[60, 20], [25, 55]], mu=0.5, rng=3)
    >>> PrivatizedLogLinear(rel).test_independence().pvalue < 0.001
    True

    Sex by age in two counties, released with discrete Gaussian noise and an
    exact total; conditional independence given the county:

    >>> import numpy as np, pandas as pd
    >>> from invariantdp import Release
    >>> from invariantdp.invariants import totals
    >>> idx = pd.MultiIndex.from_product([["C1", "C2"], ["F", "M"], ["0-17", "18+"]],
    ...                                  names=["county", "sex", "age"])
    >>> noisy = pd.Series([52, 148, 49, 151, 81, 120, 79, 118], index=idx)
    >>> rel = Release.from_published(noisy, noise="discrete_gaussian", sigma=1.0,
    ...                              invariants=totals(np.zeros(8, int)).with_values([800]))
    >>> test = PrivatizedLogLinear(rel, given="county").test_independence(method="lr")
    >>> test.df, test.likelihood, bool(test.pvalue > 0.05)
    (2, 'exact', True)
    """

    results_class = LogLinearResults

    def __init__(self, release, *, given=None, likelihood="auto", **kwargs):
        obs = observe_release(release)
        table = _table(release)
        d = len(table.names)
        strata = [] if given is None else [given]
        if isinstance(given, list | tuple):
            strata = list(given)
        strata = [_axis(table, a, "given") for a in strata]
        rest = [a for a in range(d) if a not in strata]
        if len(rest) != 2 or len(set(strata)) != len(strata):
            shown = [table.names[a] for a in strata]
            raise InvariantDPError(
                f"`release` must hold an r x c table (two axes besides `given`); its table has "
                f"axes {format_value(table.names)}"
                + (f" with `given` {format_value(shown)}." if strata else ".")
            )
        cells = table.index.transpose(strata + rest)
        K = int(np.prod([table.index.shape[a] for a in strata])) if strata else 1
        r, c = cells.shape[-2:]
        if min(r, c) < 2:
            raise InvariantDPError(
                f"`release` must hold an r x c table with r, c >= 2, got {r} x {c}."
            )
        cells = cells.reshape(K, r, c)
        self._cells = cells
        self.given = None if not strata else "/".join(table.names[a] for a in strata)
        self.table_shape = (r, c) if not strata else (K, r, c)
        stratum_labels = _stratum_labels(table, strata, K)
        rl, cl = table.levels[rest[0]], table.levels[rest[1]]
        n = obs.n_cells
        M = _margin_matrix(cells, n)
        self.conditioned_on_margins = _margins_fixed(obs.invariants, M)
        gamma, gnames = _interaction_design(cells, n, stratum_labels, rl, cl)
        if self.conditioned_on_margins:
            if likelihood == "exact":
                raise InvariantDPError(
                    "`likelihood` ('exact') does not apply: the release's invariants are the "
                    "table's margins, conditioned on with the Gaussian likelihood."
                )
            inv = obs.invariants
            s0 = AffineSubspace(inv.dense_matrix(), inv.values).point
            marg = (M @ s0).reshape(K, r + c)
            self.rows, self.cols = marg[:, :r], marg[:, r:]
            if not strata:
                self.rows, self.cols = self.rows[0], self.cols[0]
            self._C = M
            self._set_likelihood(obs, _GaussianGivenMargins(self, obs))
            exog, names = gamma, gnames
        else:
            self._set_likelihood(obs, likelihood)
            axes = (self.given, table.names[rest[0]], table.names[rest[1]])
            nuisance, nnames = _nuisance_design(cells, n, stratum_labels, rl, cl, axes)
            exog, names = np.hstack([nuisance, gamma]), nnames + gnames
            self._nuisance = pd.DataFrame(nuisance, columns=nnames)
        self._gamma_columns = np.arange(exog.shape[1] - gamma.shape[1], exog.shape[1])
        self._gamma_index = _interaction_index(
            self.given, table.names, rest, stratum_labels, rl, cl
        )
        self._likelihood_arg = likelihood
        self._release = release
        # pandas in, pandas out: the coefficients named, the response named as the release's values
        name = kwargs.pop("endog_name", None) or release.metadata.get("value_name") or "y"
        endog = pd.Series(obs.counts, name=name)
        super().__init__(endog, pd.DataFrame(exog, columns=names), **kwargs)
        self.exog, self.endog = np.asarray(self.exog, float), np.asarray(self.endog, float)
        self.offset_ = np.zeros(n)
        self.k_extra = 0
        self.k_constant = 0
        self.df_model = exog.shape[1]
        self.df_resid = n - exog.shape[1]

    # --- the mean and the likelihood --------------------------------------------

    def mean(self, params) -> np.ndarray:
        """Expected table under ``params`` (shape ``table_shape``)."""
        params = np.asarray(params, dtype=float)
        K, r, c = self._cells.shape
        if self.conditioned_on_margins:
            g = np.zeros((K, r, c))
            g[:, : r - 1, : c - 1] = params.reshape(K, r - 1, c - 1)
            rows, cols = np.reshape(self.rows, (K, r)), np.reshape(self.cols, (K, c))
            out = _ipf_means(g, rows, cols)
        else:
            out = self._lam(params)[self._cells]
        return out.reshape(self.table_shape)

    def _flat_mean(self, params) -> np.ndarray:
        mu = np.empty(self.observation.n_cells)
        mu[self._cells.reshape(-1)] = self.mean(params).reshape(-1)
        return mu

    def covariance(self, params) -> np.ndarray:
        """Covariance of the release given the margins: conditional Poisson + noise.

        Only when the margins are conditioned on (:attr:`conditioned_on_margins`).
        """
        if not self.conditioned_on_margins:
            raise InvariantDPError(
                "`covariance` is the release's given the margins; the margins of this release "
                "are not invariant."
            )
        return _conditional_cov(self._flat_mean(params), self._C) + self._lik.noise

    def loglike(self, params):
        if self.conditioned_on_margins:
            return self._lik.loglike_params(params)
        return super().loglike(params)

    def score(self, params):
        if self.conditioned_on_margins:
            # the gradient of a scalar: approx_fprime gives one parameter's as a 1 x 1 matrix
            params = np.asarray(params, dtype=float)
            return approx_fprime(params, self.loglike, centered=True).reshape(params.shape)
        return super().score(params)

    def hessian(self, params):
        if self.conditioned_on_margins:
            return approx_fprime(np.asarray(params, dtype=float), self.score, centered=True)
        return super().hessian(params)

    def _start_params(self):
        t = np.maximum(self.endog[self._cells], 0.5)
        lt = np.log(t)
        if self.conditioned_on_margins:
            g = lt - lt[:, :, -1:] - lt[:, -1:, :] + lt[:, -1:, -1:]
            return g[:, :-1, :-1].reshape(-1)
        # the saturated design is square: solve it for the log table
        return np.linalg.solve(self.exog, np.log(np.maximum(self.endog, 0.5)))

    def fit(self, start_params=None, method=None, maxiter=None, **kwargs):
        """Maximum likelihood (BFGS given the margins, else Newton); see the model notes."""
        if self.conditioned_on_margins:
            method, maxiter = method or "bfgs", maxiter or 500
            if start_params is None:
                start_params = self._start_params()
            res = super(PrivatizedCountModel, self).fit(
                start_params=start_params, method=method, maxiter=maxiter, **kwargs
            )
            return LikelihoodResultsWrapper(res)
        return super().fit(
            start_params=start_params, method=method or "newton", maxiter=maxiter or 100, **kwargs
        )

    # --- tests --------------------------------------------------------------------

    def _independence_model(self) -> PrivatizedPoisson:
        """The (conditional) independence model: this release without the interactions."""
        return PrivatizedPoisson(
            self._release,
            self._nuisance,
            likelihood=self._likelihood_arg,
            endog_name=self.endog_names,
        )

    def test_independence(self, method="pearson") -> IndependenceTestResult:
        r"""Test (conditional) independence, :math:`\gamma = 0`, from the privatized table.

        ``"pearson"``: with the margins conditioned on,
        :math:`T = (y - E_0)^\top (V_0 + \Sigma_e)^+ (y - E_0)` with
        :math:`E_0` the independence table on the margins (Pearson's
        statistic at :math:`\sigma = 0`); otherwise Rao's score statistic of
        :math:`\gamma` at the independence fit (with the exact likelihood,
        Pearson's X^2 of the counts as the noise vanishes).  ``"lr"``: twice
        the log-likelihood ratio of the saturated fit against independence
        (then the deviance G^2).  Both are asymptotically
        :math:`\chi^2_{K(r-1)(c-1)}` under independence.
        """
        if method not in ("pearson", "lr"):
            raise InvariantDPError(f"`method` ({method!r}) must be 'pearson' or 'lr'.")
        k = self._gamma_columns.size
        if self.conditioned_on_margins:
            zero = np.zeros(k)
            if method == "pearson":
                stat = self._lik.pearson(zero)
            else:
                res = self.fit(disp=0)
                stat = float(max(2.0 * (res.llf - self.loglike(zero)), 0.0))
        else:
            # the maxima alone (no covariance of the fits): Newton's climb of each model
            null = self._independence_model()
            theta0 = np.zeros(self.exog.shape[1])
            theta0[: theta0.size - k] = null._ascend(null._start_params())
            if method == "pearson":
                stat = score_statistic(self, theta0)
            else:
                full = self._ascend(self._start_params())
                stat = float(max(2.0 * (self.loglike(full) - self.loglike(theta0)), 0.0))
        return IndependenceTestResult(
            stat,
            k,
            float(stats.chi2.sf(stat, k)),
            method,
            self.sigma,
            self.given,
            self.likelihood_method,
        )


class _GaussianGivenMargins:
    """The likelihood of the release given its invariant margins (module notes)."""

    method = "gaussian"
    key = "gaussian given the margins"

    def __init__(self, model: PrivatizedLogLinear, obs):
        self.model = model
        self.noise = obs.noise_cov()

    def loglike_params(self, params) -> float:
        m = self.model
        mu = m._flat_mean(params)
        cov = _conditional_cov(mu, m._C) + self.noise
        return float(degenerate_gaussian_logpdf(m.observation.counts, mu, 0.5 * (cov + cov.T)))

    def pearson(self, params) -> float:
        m = self.model
        e0 = m._flat_mean(params)
        cov = _conditional_cov(e0, m._C) + self.noise
        lam, U = np.linalg.eigh(0.5 * (cov + cov.T))
        keep = lam > 1e-9 * lam.max()
        z = (m.observation.counts - e0) @ U[:, keep]
        return float(np.sum(z * z / lam[keep]))


def _interaction_index(given, names, rest, strata, rl, cl) -> pd.MultiIndex:
    """The interactions' labels: stratum (if any), row level and column level of each."""
    K, r, c = len(strata), len(rl), len(cl)
    rows = [rl[i] for _ in range(K) for i in range(r - 1) for _ in range(c - 1)]
    cols = [cl[j] for _ in range(K) for _ in range(r - 1) for j in range(c - 1)]
    levels, level_names = [rows, cols], [names[rest[0]], names[rest[1]]]
    if given is not None:
        levels.insert(0, [strata[k] for k in range(K) for _ in range((r - 1) * (c - 1))])
        level_names.insert(0, given)
    return pd.MultiIndex.from_arrays(levels, names=level_names)


def _stratum_labels(table: _Table, strata: list, K: int) -> list[str]:
    if not strata:
        return [""]
    grids = np.meshgrid(*[np.arange(table.index.shape[a]) for a in strata], indexing="ij")
    flat = [g.reshape(-1) for g in grids]
    return ["/".join(table.levels[a][flat[t][k]] for t, a in enumerate(strata)) for k in range(K)]


def _interaction_design(cells, n, strata, rl, cl):
    """Indicator columns of the interactions gamma[k, i, j], i < r - 1, j < c - 1."""
    K, r, c = cells.shape
    X = np.zeros((n, K * (r - 1) * (c - 1)))
    names = []
    col = 0
    for k in range(K):
        for i in range(r - 1):
            for j in range(c - 1):
                X[cells[k, i, j], col] = 1.0
                pre = f"{strata[k]}," if strata[k] else ""
                names.append(f"gamma[{pre}{rl[i]},{cl[j]}]")
                col += 1
    return X, names


def _nuisance_design(cells, n, strata, rl, cl, axis_names):
    """Treatment-coded stratum intercepts, row and column effects within each stratum."""
    K, r, c = cells.shape
    cols, names = [], []
    given, row_name, col_name = axis_names

    def add(mask, name):
        x = np.zeros(n)
        x[cells[mask]] = 1.0
        cols.append(x)
        names.append(name)

    for k in range(K):
        s = np.zeros((K, r, c), dtype=bool)
        s[k] = True
        add(s, "const" if not strata[k] else f"{given}[{strata[k]}]")
        pre = f"{strata[k]}," if strata[k] else ""
        for i in range(r - 1):
            m = np.zeros_like(s)
            m[k, i] = True
            add(m, f"{row_name}[{pre}{rl[i]}]")
        for j in range(c - 1):
            m = np.zeros_like(s)
            m[k, :, j] = True
            add(m, f"{col_name}[{pre}{cl[j]}]")
    return np.column_stack(cols), names
