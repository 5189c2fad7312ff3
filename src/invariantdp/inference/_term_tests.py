r"""Tests of groups of terms for the privatized count models.

The fitted results of :class:`~invariantdp.inference.PrivatizedPoisson` and
:class:`~invariantdp.inference.PrivatizedLogLinear` test a group of terms as
statsmodels' results do:

* :meth:`PrivatizedResults.compare_lr_test` -- the likelihood ratio test of a
  nested restricted fit on the same release (statsmodels'
  ``compare_lr_test(restricted)``);
* ``wald_test`` -- statsmodels' own, unchanged: a constraint string
  (``"x1 = 0, x2 = 0"``), a matrix ``R`` (``R beta = 0``) or a pair
  ``(R, q)``, asymptotically chi-squared;
* :func:`score_statistic` -- Rao's score statistic of the restriction at the
  restricted fit (the generalised Pearson statistic of a log-linear model).

All three use the likelihood of the release (noise and invariants included),
so their reference chi-squared law holds for the released counts, not only
for the confidential ones.  Their size and power, by simulation (1,000
releases under the null; ``tests/inference/test_term_tests.py`` and
``test_loglinear.py``), with discrete Gaussian noise at rho = 0.5 and the
state total exact:

* two null covariates of a regression of 40 county counts: size 0.046
  (likelihood ratio) and 0.045 (Wald) at the 5% level; power 0.74 when both
  coefficients are 0.08;
* sex x age given the county (3 counties): size 0.050 (likelihood ratio)
  and 0.047 (score); power 0.86 at an odds ratio of 1.49 in every county.

The p-values are uniform under the null (Kolmogorov-Smirnov p > 0.001).

References
----------
S. S. Wilks (1938), *The large-sample distribution of the likelihood ratio
for testing composite hypotheses*; A. Wald (1943); C. R. Rao (1948) (the
three asymptotic tests); Gong & Meng (2020), Eq. 2.3 (the likelihood of the
release); Gao, Gong & Yu (2022), Theorem 22.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, stats
from statsmodels.base.model import GenericLikelihoodModelResults

from .._results import Summary, format_table
from .._validation import InvariantDPError
from ._tidy import TidyResult

__all__ = ["LikelihoodRatioTestResult", "PrivatizedResults", "score_statistic"]


@dataclass(frozen=True)
class LikelihoodRatioTestResult(TidyResult):
    """The likelihood ratio test of a restricted fit: ``statistic, pvalue, df_diff``.

    Unpacks as statsmodels' ``compare_lr_test`` result does
    (``lr, p, df = full.compare_lr_test(restricted)``).

    Attributes
    ----------
    statistic : float
        ``2 (llf - llf_restricted)``, asymptotically chi-squared with
        ``df_diff`` degrees of freedom under the restriction.
    pvalue : float
        Its upper-tail chi-squared p-value.
    df_diff : int
        Parameters removed by the restriction.
    likelihood : str
        ``"exact"`` or ``"gaussian"``: the likelihood both fits used.

    References
    ----------
    Wilks (1938); Gong & Meng (2020), Eq. 2.3 (the likelihood of the release).

    Examples
    --------
    >>> r = LikelihoodRatioTestResult(3.2, 0.0736, 1, "gaussian")
    >>> lr, p, df = r
    >>> df
    1
    """

    statistic: float
    pvalue: float
    df_diff: int
    likelihood: str

    def __iter__(self):
        return iter((self.statistic, self.pvalue, self.df_diff))

    def __getitem__(self, i):
        return (self.statistic, self.pvalue, self.df_diff)[i]

    def __len__(self) -> int:
        return 3

    def summary(self) -> Summary:
        return format_table(
            "Likelihood ratio test of a restricted fit",
            [
                ("statistic", self.statistic),
                ("df", self.df_diff),
                ("p-value", self.pvalue),
                ("likelihood", self.likelihood),
            ],
        )


def _unwrap(res):
    return getattr(res, "_results", res)


def _nested(full, restricted) -> bool:
    """The restricted design's columns lie in the span of the full one's (same offset)."""
    Xf, Xr = np.asarray(full.exog, float), np.asarray(restricted.exog, float)
    if Xr.shape[1] == 0:
        return True
    coef = np.linalg.lstsq(Xf, Xr, rcond=None)[0]
    scale = 1.0 + np.abs(Xr).max()
    return bool(np.max(np.abs(Xf @ coef - Xr)) <= 1e-8 * scale)


class PrivatizedResults(GenericLikelihoodModelResults):
    """Results of a privatized count model: statsmodels' results with the release's tests.

    Everything of :class:`statsmodels.base.model.GenericLikelihoodModelResults`
    (``params``, ``bse``, ``conf_int``, ``summary``, ``wald_test``, ...) plus
    :meth:`compare_lr_test`.  ``wald_test`` takes statsmodels' arguments
    (a constraint string naming the parameters, a matrix, or ``(R, q)``)
    and uses the chi-squared law.
    """

    def compare_lr_test(self, restricted) -> LikelihoodRatioTestResult:
        """Likelihood ratio test of ``restricted`` against these results (statsmodels' name).

        Parameters
        ----------
        restricted : results
            The fit of a model nested in this one (its design's columns in the
            span of this design's) on the same release, with the same
            likelihood (e.g. the model without the terms to test).

        Returns
        -------
        LikelihoodRatioTestResult
            ``statistic = 2 (llf - restricted.llf)``, chi-squared with
            ``df_diff`` (the difference in parameters) degrees of freedom;
            unpacks as ``(statistic, pvalue, df_diff)``.

        Raises
        ------
        InvariantDPError
            If ``restricted`` is not a fit of the same release with the same
            likelihood, or is not nested in this model.

        References
        ----------
        Wilks (1938); Gong & Meng (2020), Eq. 2.3.

        Examples
        --------
        >>> import numpy as np
        >>> from invariantdp.inference import PrivatizedPoisson
        >>> from invariantdp.invariants import totals
        >>> from invariantdp.mechanisms import projected_gaussian
        >>> rng = np.random.default_rng(0)
        >>> X = np.column_stack([np.ones(40), rng.normal(size=(40, 2))])
        >>> s = rng.poisson(np.exp(4.0 + 0.3 * X[:, 1]))
        >>> rel = projected_gaussian(s.astype(float), totals(np.zeros(40, int)), mu=0.5, rng=1)
        >>> full = PrivatizedPoisson(rel, X).fit(disp=0)
        >>> restricted = PrivatizedPoisson(rel, X[:, :2]).fit(disp=0)
        >>> lr, p, df = full.compare_lr_test(restricted)
        >>> df, bool(p > 0.01)
        (1, True)
        """
        restricted = _unwrap(restricted)
        full_model = self.model
        model = getattr(restricted, "model", None)
        key = getattr(full_model, "likelihood_key", None)
        if key is None or getattr(model, "likelihood_key", None) is None:
            raise InvariantDPError(
                "`restricted` must be the results of a privatized count model (PrivatizedPoisson "
                "or PrivatizedLogLinear) fitted to the same release."
            )
        if model.likelihood_key != key:
            raise InvariantDPError(
                "`restricted` must be fitted to the same release with the same likelihood "
                f"({full_model.likelihood_method}); it uses another release or the "
                f"{model.likelihood_method} likelihood."
            )
        df = int(len(self.params) - len(restricted.params))
        if df <= 0 or not _nested(full_model, model):
            raise InvariantDPError(
                f"`restricted` ({len(restricted.params)} parameters) must be nested in this "
                f"model ({len(self.params)}): its design's columns in the span of this one's."
            )
        stat = max(2.0 * (float(self.llf) - float(restricted.llf)), 0.0)
        return LikelihoodRatioTestResult(
            stat, float(stats.chi2.sf(stat, df)), df, full_model.likelihood_method
        )


def score_statistic(model, params) -> float:
    r"""Rao's score statistic :math:`U^\top I^{-1} U` of ``model`` at ``params``.

    ``params`` are the restricted fit's, embedded in ``model``'s parameters
    (the tested ones at their null values); :math:`U` is the score and
    :math:`I` the observed information (minus the Hessian) there.

    References
    ----------
    C. R. Rao (1948), *Large sample tests of statistical hypotheses
    concerning several parameters*.
    """
    params = np.asarray(params, dtype=float)
    U = np.asarray(model.score(params), dtype=float)
    info = -np.asarray(model.hessian(params), dtype=float)
    info = 0.5 * (info + info.T)
    try:
        return float(max(U @ linalg.solve(info, U, assume_a="sym"), 0.0))
    except (linalg.LinAlgError, ValueError):
        return float(max(U @ np.linalg.pinv(info) @ U, 0.0))
