r"""The Fay-Herriot area-level model on released estimates with their full covariance.

Direct estimates :math:`y_i` of small areas (the tract totals of a GLS
estimate, :meth:`GLSEstimate.to_release
<invariantdp.census.GLSEstimate.to_release>`) are modelled as

.. math:: y = X\beta + u + e, \qquad u \sim N(0, \sigma_u^2 I), \qquad
          e \sim N(0, V),

the area effects :math:`u` independent of the sampling (here: measurement)
errors :math:`e`, whose covariance :math:`V` is the release's noise
covariance, **in full**: tracts of a county share measurement error through
the county's measurements, and an invariant total makes :math:`V` singular
(the estimates add up to it exactly).  Fay & Herriot (1979) took :math:`V`
diagonal; everything below holds for any positive semi-definite :math:`V`.
The target is :math:`\theta_i = x_i^\top\beta + u_i` (the area's true value).

**REML.**  With :math:`K` an orthonormal basis of the orthogonal complement
of the columns of :math:`X` (:math:`K^\top X = 0`), the error contrasts
:math:`K^\top y \sim N(0, \sigma_u^2 I + K^\top V K)` are free of
:math:`\beta`; in the eigenbasis :math:`K^\top V K = Q\,\mathrm{diag}(d)\,Q^\top`,
:math:`z = Q^\top K^\top y`, the restricted log-likelihood and its score are

.. math:: \ell_R(\sigma^2) = -\tfrac12 \sum_j \Big[\log 2\pi + \log(\sigma^2 + d_j)
          + \frac{z_j^2}{\sigma^2 + d_j}\Big], \qquad
          \frac{\partial \ell_R}{\partial\sigma^2} = \tfrac12 \sum_j
          \frac{z_j^2 - \sigma^2 - d_j}{(\sigma^2 + d_j)^2}

(Harville 1977, Sec. 4; Rao & Molina 2015, Sec. 6.1.2), maximised over
:math:`\sigma_u^2 \ge 0`: the score is negative beyond
:math:`\max_j z_j^2`, so every stationary point lies in
:math:`[0, \max_j z_j^2]`, where its sign changes are bracketed on a grid
and solved by Brent's method; the largest of them and the boundary
:math:`\sigma_u^2 = 0` wins.  For :math:`V = vI` this is
:math:`\hat\sigma_u^2 = \max(0, \mathrm{RSS}/(m - p) - v)`.

**EBLUP.**  With :math:`\Sigma = \hat\sigma_u^2 I + V`,
:math:`\hat\beta = (X^\top\Sigma^{-1}X)^{-1}X^\top\Sigma^{-1}y` and

.. math:: \hat\theta = X\hat\beta + \hat\sigma_u^2\,\Sigma^{-1}(y - X\hat\beta),

which for diagonal :math:`V` is :math:`\gamma_i y_i + (1-\gamma_i)
x_i^\top\hat\beta`, :math:`\gamma_i = \sigma_u^2/(\sigma_u^2 + V_{ii})`.
With full :math:`V` an area borrows from the residuals of the areas its
error is correlated with, not only from the regression.

**MSE** (Prasad & Rao 1990, generalised to full :math:`V`; the REML form of
Datta & Lahiri 2000).  Writing :math:`b_i^\top = \sigma^2 e_i^\top\Sigma^{-1}`
for the weights of the residuals in :math:`\hat\theta_i`,

.. math:: \mathrm{mse}_i = g_{1i}(\hat\sigma_u^2) + g_{2i}(\hat\sigma_u^2)
          + 2\,g_{3i}(\hat\sigma_u^2),

* :math:`g_{1i} = [\sigma^2 I - \sigma^4\Sigma^{-1}]_{ii}
  = \sigma^2[\Sigma^{-1}V]_{ii}`, the MSE of the BLUP with :math:`\beta`
  known;
* :math:`g_{2i} = d_i^\top (X^\top\Sigma^{-1}X)^{-1} d_i` with
  :math:`d_i^\top = x_i^\top - \sigma^2 e_i^\top\Sigma^{-1}X`, the row
  :math:`i` of :math:`V\Sigma^{-1}X`: the estimation of :math:`\beta`;
* :math:`g_{3i} = \mathrm{tr}[(\partial b_i^\top/\partial\sigma^2)\,\Sigma\,
  (\partial b_i^\top/\partial\sigma^2)^\top]\,\bar V(\hat\sigma_u^2)
  = [\Sigma^{-1}V\Sigma^{-1}V\Sigma^{-1}]_{ii}\,\bar V(\hat\sigma_u^2)`,
  since :math:`\partial b_i^\top/\partial\sigma^2 = e_i^\top\Sigma^{-1}V\Sigma^{-1}`:
  the estimation of :math:`\sigma_u^2`, with :math:`\bar V` the inverse of
  the REML information :math:`\tfrac12\sum_j (\sigma^2 + d_j)^{-2}
  = \tfrac12\mathrm{tr}(P^2)`, :math:`P = K(K^\top\Sigma K)^{-1}K^\top`.

For diagonal :math:`V` these are Rao & Molina's (2015) Eq. 6.2.5-6.2.8:
:math:`g_1 = \gamma_i V_{ii}`, :math:`g_2 = (1-\gamma_i)^2 x_i^\top
(X^\top\Sigma^{-1}X)^{-1}x_i`, :math:`g_3 = V_{ii}^2 (\sigma^2 + V_{ii})^{-3}
\bar V`.  The REML estimator is unbiased to second order, so the estimator
of the MSE adds :math:`g_3` twice and needs no bias correction (Datta &
Lahiri 2000, Theorem 2.1).  The interval is :math:`\hat\theta_i \pm
z_{(1+\text{level})/2}\sqrt{\mathrm{mse}_i}`.

When :math:`\hat\sigma_u^2 = 0` and :math:`V` is singular (an invariant
the estimates keep), :math:`\Sigma` is singular; the quantities above are
then their limits as :math:`\sigma_u^2 \downarrow 0`, computed at
:math:`\sigma_u^2 = 10^{-9}\max\mathrm{eig}(V)` (the estimates keep the
invariant: :math:`\sigma^2\Sigma^{-1}` tends to the projector on the null
space of :math:`V`).

References
----------
R. E. Fay and R. A. Herriot (1979), *Estimates of income for small places:
an application of James-Stein procedures to census data*, JASA 74, 269-277;
D. A. Harville (1977), *Maximum likelihood approaches to variance component
estimation and to related problems*, JASA 72, 320-338; N. G. N. Prasad and
J. N. K. Rao (1990), *The estimation of the mean squared error of
small-area estimators*, JASA 85, 163-171; G. S. Datta and P. Lahiri (2000),
*A unified measure of uncertainty of estimated best linear unbiased
predictors in small area estimation problems*, Statistica Sinica 10,
613-627; J. N. K. Rao and I. Molina (2015), *Small Area Estimation*, 2nd
ed., Wiley, Ch. 6.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import linalg, optimize, stats

from .._results import Summary
from .._validation import InvariantDPError, check_confidence_level, check_finite_array
from ..release import Release
from ._release_observation import observe_release

__all__ = ["FayHerriot", "FayHerriotResults"]

#: grid points on which the sign changes of the REML score are bracketed
_GRID = 400


class FayHerriot:
    r"""Fay-Herriot model of released area estimates with their full covariance.

    :math:`y = X\beta + u + e`, :math:`u \sim N(0, \sigma_u^2 I)`,
    :math:`e \sim N(0, V)` with :math:`V` the covariance of the release's
    noise: the GLS covariance of the estimates from
    :meth:`GLSEstimate.to_release <invariantdp.census.GLSEstimate.to_release>`
    (correlated within a county, singular along an invariant total), the
    diagonal :math:`vI` of an independent Gaussian or discrete Gaussian
    release.  Fitted by REML; :meth:`FayHerriotResults.eblup` gives the
    empirical best linear unbiased predictors of the areas' true values with
    their Prasad-Rao MSE (module notes).

    Parameters
    ----------
    release : Release
        Released estimates, one per area (any shape, flattened in C order),
        with Gaussian-type noise (``gaussian``, ``grid_gaussian``,
        ``discrete_gaussian``, ``projected_gaussian``, ``extended_gaussian``,
        ``correlated_gaussian``).  Invariants the noise keeps enter through
        :math:`V`; values published beside a release whose noise does not
        keep them are not used.
    exog : array_like or DataFrame, shape (m, p)
        The design (include a constant column for an intercept), of full
        column rank with ``p < m``; a DataFrame names the coefficients.
    endog_name : str, optional
        The response's name in the summary (default: the name the release
        records for its values, else ``"y"``).

    Attributes
    ----------
    endog : numpy.ndarray
        The released estimates :math:`y`.
    exog : numpy.ndarray
        :math:`X`.
    cov : numpy.ndarray
        :math:`V`, the covariance of the estimates' errors.
    exog_names : list of str

    References
    ----------
    Fay & Herriot (1979); Harville (1977); Prasad & Rao (1990); Datta &
    Lahiri (2000); Rao & Molina (2015), Ch. 6.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Release
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(0, 1, 60)
    >>> theta = 10 + 5 * x + rng.normal(0, 2.0, 60)     # sigma2_u = 4
    >>> v = rng.uniform(0.5, 2.0, 60)
    >>> y = theta + rng.normal(0, np.sqrt(v))
    >>> rel = Release.from_published(y, noise="correlated_gaussian", cov=np.diag(v))
    >>> res = FayHerriot(rel, np.column_stack([np.ones(60), x])).fit()
    >>> round(res.sigma2_u, 2), res.params.round(2).tolist()
    (2.32, [8.93, 6.41])
    >>> res.eblup().columns.tolist()
    ['estimate', 'mse', 'ci_lower', 'ci_upper']
    """

    def __init__(self, release, exog, *, endog_name=None):
        obs = observe_release(release)
        y = obs.counts
        m = y.size
        names = None
        if isinstance(exog, pd.DataFrame):
            names = [str(c) for c in exog.columns]
        X = check_finite_array("exog", exog)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2 or X.shape[0] != m:
            raise InvariantDPError(
                f"`exog` must have shape ({m}, p): one row per released estimate, got "
                f"{np.shape(exog)}."
            )
        p = X.shape[1]
        if p >= m:
            raise InvariantDPError(
                f"`exog` must have fewer columns than the release has estimates ({m}), got {p}."
            )
        rank = np.linalg.matrix_rank(X)
        if rank < p:
            raise InvariantDPError(
                f"`exog` must have full column rank ({p}), got rank {rank}: a column is a "
                "combination of the others."
            )
        self.release = release
        self.endog = y
        self.exog = X
        self.exog_names = names if names is not None else [f"x{j}" for j in range(p)]
        if endog_name is None:
            endog_name = release.metadata.get("value_name") or "y"
        self.endog_name = str(endog_name)
        self.cov = obs.noise_cov()
        self.index = release.to_series().index

    @classmethod
    def from_formula(cls, formula: str, release, data) -> FayHerriot:
        """The model with the design of ``formula``'s right side evaluated on ``data``.

        Parameters
        ----------
        formula : str
            ``"~ x + C(region)"`` or ``"name ~ x + ..."`` (patsy syntax, an
            intercept unless ``- 1``); the left side, if any, only names the
            response: the response is always the release's values.
        release : Release
            As for :class:`FayHerriot`.
        data : DataFrame
            The covariates, one row per area: indexed by the release's labels
            (rows are matched to the areas by them, in any order, extra rows
            ignored), or, for a release without labels, in the release's order.

        Returns
        -------
        FayHerriot

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from invariantdp import Release
        >>> areas = pd.Index([f"A{i}" for i in range(30)], name="area")
        >>> x = pd.DataFrame({"x": np.linspace(0, 1, 30)}, index=areas)
        >>> y = pd.Series(10 + 5 * x["x"] + np.sin(np.arange(30)), index=areas, name="income")
        >>> rel = Release.from_published(y, noise="gaussian", sigma=0.5)
        >>> model = FayHerriot.from_formula("~ x", rel, x[::-1])
        >>> model.exog_names, model.endog_name
        (['Intercept', 'x'], 'income')
        """
        import patsy

        if not isinstance(formula, str) or "~" not in formula:
            raise InvariantDPError(
                f"`formula` ({formula!r}) must be a string of the form '~ x + z' or 'y ~ x + z'."
            )
        if not isinstance(release, Release):
            raise TypeError(f"`release` must be an invariantdp.Release, got {type(release)}.")
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"`data` must be a pandas DataFrame, got {type(data).__name__}.")
        lhs, _, rhs = formula.partition("~")
        lhs = lhs.strip()
        if lhs and not lhs.isidentifier():
            raise InvariantDPError(
                f"`formula` ({formula!r}): its left side must be a plain name or empty (the "
                "response is always the release's values), not an expression."
            )
        rows = _rows_of_release(release, data)
        try:
            design = patsy.dmatrix(rhs, rows, return_type="dataframe", NA_action="raise")
        except patsy.PatsyError as exc:
            raise InvariantDPError(
                f"`formula` ({formula!r}) cannot be evaluated on `data`: {exc}"
            ) from None
        return cls(release, design, endog_name=lhs or None)

    def reml_loglike(self, sigma2_u: float) -> float:
        r"""The restricted log-likelihood :math:`\ell_R(\sigma_u^2)` (module notes)."""
        d, z = self._contrasts()
        s = sigma2_u + d
        if np.any(s <= 0):
            return -np.inf
        return float(-0.5 * np.sum(math.log(2 * math.pi) + np.log(s) + z * z / s))

    def _contrasts(self):
        """``(d, z)``: the eigenvalues of ``K'VK`` and the contrasts in its eigenbasis."""
        cached = self.__dict__.get("_contrast_cache")
        if cached is not None:
            return cached
        X, V = self.exog, self.cov
        Q, _ = np.linalg.qr(X, mode="complete")
        K = Q[:, X.shape[1] :]
        d, U = linalg.eigh(K.T @ V @ K)
        scale = max(float(np.max(np.abs(d))), 1e-300)
        # rounding leaves eigenvalues of a PSD matrix a few ulps below zero
        d = np.where(d < 1e-12 * scale, 0.0, d)
        z = U.T @ (K.T @ self.endog)
        self._contrast_cache = (d, z)
        return d, z

    def _reml(self) -> float:
        """The REML estimate of sigma2_u over sigma2_u >= 0 (module notes)."""
        d, z = self._contrasts()
        zz = z * z
        top = float(zz.max()) if zz.size else 0.0
        if top == 0.0:
            return 0.0

        def score(s):
            w = s + d
            return float(0.5 * np.sum((zz - w) / (w * w)))

        # a contrast without error variance (an invariant the design does not span) keeps
        # sigma2_u away from 0: its density there is degenerate
        zero_ok = not np.any(d <= 0)
        lo = 0.0 if zero_ok else top * 1e-14
        grid = np.concatenate([[lo], np.geomspace(max(lo, top * 1e-12), top, _GRID)])
        w = grid[:, None] + d[None, :]
        S = 0.5 * np.sum((zz[None, :] - w) / (w * w), axis=1)
        candidates = [0.0] if zero_ok else []
        for k in np.flatnonzero((S[:-1] > 0) & (S[1:] <= 0)):
            candidates.append(optimize.brentq(score, grid[k], grid[k + 1], xtol=1e-14 * top))
        if not candidates:
            # the score is positive up to the grid's first point: the maximum is there
            candidates.append(float(grid[0]))
        values = [self.reml_loglike(c) for c in candidates]
        return float(candidates[int(np.argmax(values))])

    def fit(self) -> FayHerriotResults:
        r"""Fit by REML; the GLS coefficients at the estimated :math:`\sigma_u^2` (module notes).

        Returns
        -------
        FayHerriotResults
        """
        return FayHerriotResults(self, self._reml())


class FayHerriotResults:
    r"""A fitted :class:`FayHerriot` model: coefficients, :math:`\sigma_u^2`, EBLUPs.

    Attributes
    ----------
    params : pandas.Series
        :math:`\hat\beta`, the GLS coefficients at :math:`\hat\sigma_u^2`.
    bse : pandas.Series
        Their standard errors, from :math:`(X^\top\Sigma^{-1}X)^{-1}`.
    cov_params : pandas.DataFrame
        :math:`(X^\top\Sigma^{-1}X)^{-1}`.
    sigma2_u : float
        The REML estimate of the area effects' variance (0 on the boundary).
    sigma2_u_var : float
        Its asymptotic variance :math:`\bar V`, the inverse of the REML information.
    sigma2_u_se : float
        :math:`\sqrt{\bar V}`.
    llf : float
        The restricted log-likelihood at :math:`\hat\sigma_u^2`.

    References
    ----------
    Fay & Herriot (1979); Prasad & Rao (1990); Datta & Lahiri (2000);
    Rao & Molina (2015), Sec. 6.1-6.2.
    """

    def __init__(self, model: FayHerriot, sigma2_u: float):
        self.model = model
        self.sigma2_u = float(sigma2_u)
        self.llf = model.reml_loglike(self.sigma2_u)
        X, y, V = model.exog, model.endog, model.cov
        v, W = linalg.eigh(V)
        top = max(float(np.max(np.abs(v))), 1e-300)
        v = np.where(v < 1e-12 * top, 0.0, v)
        s = self.sigma2_u
        if s == 0.0 and np.any(v == 0.0):
            # Sigma = V is singular: the limits as sigma2_u -> 0 (module notes)
            s = 1e-9 * top
        self._s = s
        self._v, self._W = v, W
        lam = s + v  # eigenvalues of Sigma
        WX = W.T @ X
        info = WX.T @ (WX / lam[:, None])
        cov = linalg.inv(0.5 * (info + info.T))
        beta = cov @ (WX.T @ ((W.T @ y) / lam))
        names = model.exog_names
        self.params = pd.Series(beta, index=names)
        self.cov_params = pd.DataFrame(cov, index=names, columns=names)
        self.bse = pd.Series(np.sqrt(np.diag(cov)), index=names)
        d, _ = model._contrasts()
        reml_info = 0.5 * float(np.sum(1.0 / (s + d) ** 2))
        self.sigma2_u_var = 1.0 / reml_info
        self.sigma2_u_se = math.sqrt(self.sigma2_u_var)
        self._beta_cov = cov

    @property
    def fittedvalues(self) -> pd.Series:
        r"""The synthetic estimates :math:`X\hat\beta`, indexed like the release."""
        return pd.Series(self.model.exog @ self.params.to_numpy(), index=self.model.index)

    def direct_weight(self) -> pd.Series:
        r"""The weight of each area's own direct estimate in its EBLUP: :math:`[\hat\sigma_u^2
        \Sigma^{-1}]_{ii}`.

        For diagonal :math:`V` it is :math:`\gamma_i = \hat\sigma_u^2 /
        (\hat\sigma_u^2 + V_{ii})` and the EBLUP is
        :math:`\gamma_i y_i + (1 - \gamma_i) x_i^\top\hat\beta`; with full
        :math:`V` the EBLUP also weighs the other areas' residuals, and
        :math:`1 - w_i` is the area's shrinkage away from its own estimate.

        Returns
        -------
        pandas.Series
            Indexed like the release, in [0, 1].
        """
        s, v, W = self._s, self._v, self._W
        return pd.Series((W * W) @ (s / (s + v)), index=self.model.index, name="direct_weight")

    def mse_components(self) -> pd.DataFrame:
        r""":math:`g_1, g_2, g_3` of every area at :math:`\hat\sigma_u^2` (module notes).

        Returns
        -------
        pandas.DataFrame
            Columns ``g1``, ``g2``, ``g3``, indexed like the release; the
            estimated MSE is ``g1 + g2 + 2 g3``.
        """
        X = self.model.exog
        s, v, W = self._s, self._v, self._W
        lam = s + v
        W2 = W * W
        g1 = W2 @ (s * v / lam)
        D = W @ ((v / lam)[:, None] * (W.T @ X))  # V Sigma^-1 X
        g2 = np.einsum("ij,jk,ik->i", D, self._beta_cov, D)
        g3 = (W2 @ (v * v / lam**3)) * self.sigma2_u_var
        return pd.DataFrame({"g1": g1, "g2": g2, "g3": g3}, index=self.model.index)

    def eblup(self, confidence_level: float = 0.95) -> pd.DataFrame:
        r"""The areas' EBLUPs with their Prasad-Rao MSE and intervals (module notes).

        Parameters
        ----------
        confidence_level : float
            In (0, 1).

        Returns
        -------
        pandas.DataFrame
            Indexed like the release: ``estimate`` (:math:`\hat\theta_i`),
            ``mse`` (:math:`g_1 + g_2 + 2 g_3`), ``ci_lower``, ``ci_upper``
            (:math:`\hat\theta_i \pm z\sqrt{\mathrm{mse}_i}`).

        References
        ----------
        Prasad & Rao (1990), Eq. 3.2 and 3.3; Datta & Lahiri (2000),
        Theorem 2.1; Rao & Molina (2015), Eq. 6.2.3 and 6.2.11.

        Examples
        --------
        >>> import numpy as np
        >>> from invariantdp import Release
        >>> y = np.array([12.0, 9.5, 14.1, 11.2, 8.7, 13.3, 10.9, 12.6])
        >>> rel = Release.from_published(y, noise="gaussian", sigma=1.0)
        >>> res = FayHerriot(rel, np.ones((8, 1))).fit()
        >>> e = res.eblup()
        >>> bool((e["mse"] < 1.0).all())     # below the direct estimates' variance
        True
        """
        level = check_confidence_level(confidence_level)
        X, y = self.model.exog, self.model.endog
        s, v, W = self._s, self._v, self._W
        synthetic = X @ self.params.to_numpy()
        # sigma2 Sigma^-1 (y - X beta): weights s / (s + v) in V's eigenbasis
        theta = synthetic + W @ ((s / (s + v)) * (W.T @ (y - synthetic)))
        g = self.mse_components()
        mse = (g["g1"] + g["g2"] + 2.0 * g["g3"]).to_numpy()
        half = float(stats.norm.ppf(0.5 + level / 2.0)) * np.sqrt(mse)
        return pd.DataFrame(
            {"estimate": theta, "mse": mse, "ci_lower": theta - half, "ci_upper": theta + half},
            index=self.model.index,
        )

    def conf_int(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """Wald intervals of the coefficients, columns ``lower`` and ``upper``."""
        level = check_confidence_level(confidence_level)
        z = float(stats.norm.ppf(0.5 + level / 2.0))
        return pd.DataFrame(
            {"lower": self.params - z * self.bse, "upper": self.params + z * self.bse}
        )

    def summary(self) -> Summary:
        r"""The fit: :math:`\hat\sigma_u^2`, the REML log-likelihood and the coefficients."""
        m = self.model
        n, p = m.exog.shape
        off = m.cov - np.diag(np.diag(m.cov))
        kind = "full (correlated errors)" if np.any(off != 0) else "diagonal"
        z = self.params / self.bse
        ci = self.conf_int()
        table = pd.DataFrame(
            {
                "coef": self.params,
                "std err": self.bse,
                "z": z,
                "P>|z|": 2 * stats.norm.sf(np.abs(z)),
                "[0.025": ci["lower"],
                "0.975]": ci["upper"],
            }
        )
        return Summary(
            "Fay-Herriot model (REML)",
            [
                ("Dep. Variable", m.endog_name),
                ("No. Observations", n),
                ("Df Residuals", n - p),
                ("sigma2_u", self.sigma2_u),
                ("sigma2_u std err", self.sigma2_u_se),
                ("REML log-likelihood", self.llf),
                ("covariance of the estimates", kind),
            ],
            [
                "EBLUPs with Prasad-Rao MSE (Datta-Lahiri for REML): .eblup().",
            ],
            parts=(table.to_string(float_format=lambda x: f"{x:.4g}"),),
        )

    def __repr__(self) -> str:
        return (
            f"FayHerriotResults(sigma2_u={self.sigma2_u:.6g}, params={dict(self.params.round(6))})"
        )


def _rows_of_release(release: Release, data: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``data`` of the release's areas, in the release's order."""
    n = int(np.size(release.value))
    if release.labels is None:
        if len(data) != n:
            raise InvariantDPError(
                f"`data` must have one row per released estimate ({n}) when the release has "
                f"no labels to match them by, got {len(data)} rows."
            )
        return data.reset_index(drop=True)
    index = release.to_series().index
    pos = data.index.get_indexer(index) if data.index.is_unique else None
    if pos is None:
        raise InvariantDPError("`data` must have a unique index (the release's labels).")
    if np.any(pos < 0):
        missing = index[pos < 0]
        raise InvariantDPError(
            f"`data` must be indexed by the release's labels; it has no row for "
            f"{missing[0]!r} ({int(np.sum(pos < 0))} of {n} areas missing)."
        )
    return data.iloc[pos].reset_index(drop=True)
