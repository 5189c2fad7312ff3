"""The semi-DP UMPU test for the odds ratio of a 2 x 2 table (Cho & Awan, Thm 37).

The null odds ratio is ``null_odds_ratio`` in the test, its critical value,
its power and the result (the package's convention, ``null_<parameter>``);
the power function takes the alternative as ``odds_ratio``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .._deprecation import renamed_attribute, renamed_keywords
from .._label_text import two_by_two_text
from .._results import (
    ConfidenceInterval,
    Summary,
    cached_interval,
    format_table,
    hypothesis_test_rows,
)
from .._validation import (
    InvariantDPError,
    check_alternative,
    check_counts,
    check_finite_array,
    check_in_open_unit,
    check_not_table,
    check_positive,
    check_real,
)
from ..families import NoiseTails
from ..release import Release
from ._logconcave_sums import FisherNoncentralHypergeometric, continuous_mode, tulap_log_p_bound
from ._noise import (
    check_estimable,
    log_point_tail,
    log_tail,
    release_tails,
    resolve_noise,
    solve_monotone,
    warn_if_impossible,
)
from ._roots import bracketed_root
from ._tidy import TidyResult

__all__ = [
    "OddsRatioTestResult",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_test",
]

_LOG_W_MAX = 700.0  # beyond this the noncentral law sits on an end of its support
#: largest table total accepted (counts up to 1e8 per cell are tested)
MAX_TOTAL = 5 * 10**8


def _check_margins(margins) -> tuple[int, int, int, int]:
    m = check_counts("margins", margins)
    if m.shape != (4,):
        raise InvariantDPError(
            f"`margins` must be the four one-way margins (t1., t2., t.1, t.2), got shape {m.shape}."
        )
    t1, t2, c1, c2 = (int(v) for v in m)
    if t1 + t2 != c1 + c2:
        raise InvariantDPError(
            f"`margins` ({t1}, {t2}, {c1}, {c2}) do not add up: row total t1.+t2. = {t1 + t2} "
            f"but column total t.1+t.2 = {c1 + c2}."
        )
    if t1 + t2 == 0:
        raise InvariantDPError(f"`margins` ({t1}, {t2}, {c1}, {c2}) describe an empty table.")
    if t1 + t2 > MAX_TOTAL:
        raise InvariantDPError(
            f"`margins` ({t1}, {t2}, {c1}, {c2}) describe a table of {t1 + t2} records, above "
            f"{MAX_TOTAL:.0e}: the exact conditional p-value is not supported for tables this "
            "large (its summation window would not fit in memory)."
        )
    return t1, t2, c1, c2


#: what makes a release this test can read, in the library and on the command line
_MAKE_ONE = (
    "make one with `invariantdp.mechanisms.odds_ratio_release(table, epsilon=...)` "
    "(command line: `invariantdp release odds-ratio TABLE.csv --epsilon E -o release.json`)"
)


def _from_release(release, epsilon, delta, noise):
    """Statistic, margins, noise and table labels taken from an ``odds_ratio_release``."""
    if release.invariants is None or release.invariants.values is None:
        raise InvariantDPError(
            f"the Release (mechanism {release.mechanism!r}) has no invariant margins to "
            "condition on: the test needs the release of x11 of a 2 x 2 table with its "
            f"one-way margins published exactly; {_MAKE_ONE}."
        )
    if release.invariants.shape != (2, 2) or release.value.size != 1:
        raise InvariantDPError(
            f"the Release must hold one statistic of a 2 x 2 table (mechanism "
            f"{release.mechanism!r} released shape {release.value.shape}); {_MAKE_ONE}."
        )
    tn = release_tails(release, epsilon, delta, noise, "UMPU test")
    margins = _check_margins(release.invariants.values)
    labels = release.data_labels if release.data_shape == (2, 2) else None
    return float(release.value.reshape(())), margins, tn, labels


def _design(margins, epsilon, delta, noise):
    """Margins and noise of a test being planned: given, or those of a Release."""
    if isinstance(margins, Release):
        _, margins, tn, _ = _from_release(margins, epsilon, delta, noise)
        return margins, tn
    return _check_margins(margins), resolve_noise(epsilon, delta, noise)


def _parse(statistic, margins, epsilon, delta, noise):
    if isinstance(statistic, Release):
        if margins is not None:
            raise InvariantDPError("a Release carries its margins: do not also give `margins`.")
        return _from_release(statistic, epsilon, delta, noise)
    release_with = "mechanisms.odds_ratio_release(table, epsilon=...)"
    check_not_table("statistic", statistic, release_with)
    if margins is None:
        if np.ndim(statistic) == 1 and np.size(statistic) == 4:
            # the table as x11, x12, x21, x22: the message shows no count (confidential data)
            raise TypeError(
                "`statistic` must be the released value (a number) or a Release, got 4 numbers "
                "and no `margins`: to test a confidential 2 x 2 table, release it first with "
                f"`invariantdp.{release_with}` and test that Release."
            )
        raise InvariantDPError(
            "`margins` (t1., t2., t.1, t.2) is required with a released statistic; a Release "
            f"carries its own ({_MAKE_ONE})."
        )
    u = check_real("statistic", statistic)
    if not np.isfinite(u):
        raise InvariantDPError(f"`statistic` ({u}) must be finite.")
    return u, _check_margins(margins), resolve_noise(epsilon, delta, noise), None


# ---------------------------------------------------------------------------
# the p-value as a function of the odds ratio
# ---------------------------------------------------------------------------


def _law(margins, log_w) -> FisherNoncentralHypergeometric:
    t1, t2, c1, _ = margins
    return FisherNoncentralHypergeometric(t1, t2, c1, log_w)


def _log_p_one_sided(u: float, margins, log_w: float, noise: NoiseTails, side: str) -> float:
    """log of Eq. 6: ``E F(H - u)`` ("greater") or ``E F(u - H)`` ("less")."""
    dist = _law(margins, min(max(log_w, -_LOG_W_MAX), _LOG_W_MAX))
    if math.isinf(log_w):  # the law sits on an end of its support
        return log_point_tail(noise, dist.hi if log_w > 0 else dist.lo, u, side)
    return log_tail(noise, dist, u, side)


#: one-sided p-values provably below exp(_LOG_ZERO) ~ 1e-310 are returned as 0, and
#: those whose mirror image is below exp(_LOG_ONE) ~ 1e-17 as 1 (the nearest double)
_LOG_ZERO, _LOG_ONE = -713.0, -39.0
_LOG_HALF = math.log(0.5) - 1e-6  # margin: sums near 1/2 may differ by rounding


def _log_p_bound(u, margins, log_w, noise: NoiseTails, side, limit=math.inf) -> float:
    """:func:`~._logconcave_sums.tulap_log_p_bound` for noise with ``F(x) <= exp(eps (x + 1))``.

    Tulap's (``eps = -log b``, its ``tail_rate``); ``inf`` for other laws.
    """
    rate = noise.tail_rate
    if rate is None or not rate > 0.0:
        return math.inf
    t1, t2, c1, _ = margins
    return tulap_log_p_bound(u, t1, t2, c1, log_w, rate, side, limit)


def _pvalue(u, margins, log_w, noise, alternative) -> float:
    sides = ("greater", "less") if alternative == "two-sided" else (alternative,)
    for side in sides:  # a p-value that underflows: no sum needed
        if _log_p_bound(u, margins, log_w, noise, side, _LOG_ZERO) < _LOG_ZERO:
            return 0.0
    if alternative != "two-sided":
        mirror = "less" if alternative == "greater" else "greater"
        if _log_p_bound(u, margins, log_w, noise, mirror, _LOG_ONE) < _LOG_ONE:
            return 1.0
    if alternative == "two-sided":
        # u's side of the mode usually has the smaller p-value; below 1/2 the other
        # (1 minus it: Tulap is exactly symmetric) cannot be smaller
        t1, t2, c1, _ = margins
        above = abs(log_w) < _LOG_W_MAX and u >= continuous_mode(t1, t2, c1, log_w)
        first, second = ("greater", "less") if above else ("less", "greater")
        lf = _log_p_one_sided(u, margins, log_w, noise, first)
        if lf < _LOG_HALF and noise.exactly_symmetric:
            return float(min(1.0, 2.0 * math.exp(lf)))
        ls = _log_p_one_sided(u, margins, log_w, noise, second)
        return float(min(1.0, 2.0 * np.exp(min(lf, ls))))
    return float(np.exp(_log_p_one_sided(u, margins, log_w, noise, alternative)))


def _solve_log_w(u, margins, noise, side: str, target: float) -> float:
    """The log odds ratio at which the one-sided p-value equals ``target``.

    The "greater" p-value increases with the odds ratio and the "less"
    p-value decreases; where the target lies beyond the p-value's limit at
    ``w -> 0`` or ``w -> inf`` the answer is that end (``-inf`` or ``inf``).
    """
    log_t = np.log(target)

    def g(theta):
        return _log_p_one_sided(u, margins, theta, noise, side) - log_t

    return solve_monotone(g, side == "greater", limit=_LOG_W_MAX)


# ---------------------------------------------------------------------------
# result
# ---------------------------------------------------------------------------


_UNLABELLED = two_by_two_text(None)


@dataclass(frozen=True)
class OddsRatioTestResult(TidyResult):
    """Result of :func:`umpu_odds_ratio_test`.

    Attributes
    ----------
    statistic : float
        The released statistic ``U = x11 + N``.
    pvalue : float
        The p-value (Eq. 6 of Cho & Awan for ``alternative="greater"``).
    alternative : str
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    null_odds_ratio : float
        The odds ratio ``w0`` under the null hypothesis (``odds_ratio`` is a
        deprecated alias).
    margins : tuple of int
        The invariant one-way margins ``(t1., t2., t.1, t.2)``.
    epsilon, delta : float or None
        Privacy parameters of the Tulap noise, when it was given by them.
    noise : str
        Description of the noise law ``F``.
    method : str
        Name of the test.
    x11_cell : str
        The cell x11 on the table's labels (``"men, admitted"``; ``"row 1,
        column 1"`` for a table without labels).
    compares : str
        What the odds ratio ``(x11 x22) / (x12 x21)`` compares: the odds of
        the first column in the first row against the second row (``"odds
        of admitted, men vs women"``).
    margin_names : tuple of str
        The labels of ``(t1., t2., t.1, t.2)``.
    estimate : float
        Median-unbiased private estimate of the odds ratio: the odds ratio
        at which the "greater" p-value is 1/2 (computed on first access).
        Raises :class:`~invariantdp.exceptions.InvariantDPError` when the
        p-value varies by less than 1e-6 over all odds ratios (epsilon below
        ~1e-6 / table size), where that crossing is lost in rounding.

    References
    ----------
    Cho & Awan, Theorem 37 and Eq. 6 (the estimate and interval invert it).

    Examples
    --------
    >>> from invariantdp import umpu_odds_ratio_test
    >>> res = umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0)
    >>> res.alternative, round(res.pvalue, 4), round(res.estimate, 2)
    ('two-sided', 0.0456, 5.92)
    >>> ci = res.confidence_interval(0.95)
    >>> round(ci.low, 3), round(ci.high, 1)
    (1.039, 55.8)
    """

    statistic: float
    pvalue: float
    alternative: str
    null_odds_ratio: float
    margins: tuple[int, int, int, int]
    epsilon: float | None
    delta: float | None
    noise: str
    method: str = "semi-DP UMPU odds-ratio test (Cho & Awan, Thm 37)"
    x11_cell: str = _UNLABELLED.x11
    compares: str = _UNLABELLED.odds_ratio
    margin_names: tuple[str, str, str, str] = _UNLABELLED.margins
    _noise: NoiseTails = field(default=None, repr=False, compare=False)

    odds_ratio = renamed_attribute("odds_ratio", "null_odds_ratio", "OddsRatioTestResult")

    @cached_property
    def estimate(self) -> float:
        u, m, nz = self.statistic, self.margins, self._noise
        ends = [np.exp(_log_p_one_sided(u, m, lw, nz, "greater")) for lw in (-np.inf, np.inf)]
        check_estimable(*ends, nz)
        theta = _solve_log_w(u, m, nz, "greater", 0.5)
        return float(np.exp(theta))

    @cached_interval
    def confidence_interval(self, confidence_level=0.95) -> ConfidenceInterval:
        """Confidence interval for the odds ratio by inverting the test.

        For ``alternative="two-sided"`` each end is the odds ratio at which a
        one-sided p-value equals ``(1 - confidence_level) / 2``; one-sided
        alternatives give a one-sided interval.  An end is 0 or ``inf`` when
        the data cannot bound the odds ratio on that side.
        """
        alpha = 1.0 - confidence_level  # checked by @cached_interval
        u, m, nz = self.statistic, self.margins, self._noise
        if self.alternative == "two-sided":
            low = _solve_log_w(u, m, nz, "greater", alpha / 2.0)
            high = _solve_log_w(u, m, nz, "less", alpha / 2.0)
        elif self.alternative == "greater":
            low, high = _solve_log_w(u, m, nz, "greater", alpha), np.inf
        else:
            low, high = -np.inf, _solve_log_w(u, m, nz, "less", alpha)
        return ConfidenceInterval(float(np.exp(low)), float(np.exp(high)))

    def summary(self, confidence_level=0.95) -> Summary:
        t1, t2, c1, c2 = self.margins
        r1, r2, k1, k2 = self.margin_names
        rows = [
            ("released statistic U", self.statistic),
            ("x11 (U = x11 + noise)", self.x11_cell),
            ("margins (t1., t2., t.1, t.2)", f"({t1}, {t2}, {c1}, {c2})"),
            ("margins by label", f"{r1}: {t1}, {r2}: {t2}; {k1}: {c1}, {k2}: {c2}"),
            ("noise", self.noise),
        ]
        if self.epsilon is not None:
            rows.append(
                (
                    "privacy",
                    f"epsilon={self.epsilon:g}, delta={self.delta:g}, semi-DP a(t)=3",
                )
            )
        rows.append(("odds ratio", self.compares))
        rows.append(("null odds ratio", self.null_odds_ratio))
        estimate = "odds-ratio estimate (median-unbiased)"
        rows += hypothesis_test_rows(self, confidence_level, estimate)
        return format_table(self.method, rows)

    def __str__(self) -> str:
        return str(self.summary())


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------


@renamed_keywords(odds_ratio="null_odds_ratio")
def umpu_odds_ratio_test(
    statistic,
    margins=None,
    *,
    epsilon=None,
    delta=0.0,
    alternative="two-sided",
    null_odds_ratio=1.0,
    noise=None,
) -> OddsRatioTestResult:
    r"""Semi-DP uniformly most powerful unbiased test of the odds ratio.

    A 2 x 2 table ``(x11, x12, x21, x22)`` is released as ``U = x11 + N``
    with ``N`` drawn from the canonical noise distribution ``F`` of the
    privacy guarantee (Tulap for (epsilon, delta)-DP), while its one-way
    margins are published exactly.  Conditionally on the margins, ``x11`` is
    Fisher's noncentral hypergeometric with the odds ratio ``w``, and

    .. math:: p = E_{H \sim \mathrm{Hyper}(t, w_0)}\, F(H - U)

    is the p-value of the UMPU test of ``H0: w <= w0`` against ``w > w0``
    (Cho & Awan, Theorem 37, Eq. 6): ``P(p <= alpha | x) = F(x11 - m(t))``.
    That one-sided test is ``alternative="greater"``; the default,
    ``"two-sided"``, combines it with its mirror image.

    Parameters
    ----------
    statistic : float or Release
        The released ``U``, or the :class:`~invariantdp.Release` made by
        :func:`~invariantdp.mechanisms.odds_ratio_release` (then ``margins``,
        ``epsilon``, ``delta`` and ``noise`` come from it, and the labels of
        a table released as a ``DataFrame`` name x11 and the odds ratio in
        the result).  Not the confidential table: release it first.
    margins : sequence of 4 int
        The invariant one-way margins ``(t1., t2., t.1, t.2)``, with a
        released ``U``.
    epsilon, delta : float
        Privacy parameters of the Tulap noise, ``epsilon > 0``,
        ``0 <= delta < 1``.  The release is semi-DP with ``a(t) = 3``.
    alternative : {"two-sided", "greater", "less"}
        Default ``"two-sided"``, as in :func:`scipy.stats.fisher_exact`.
        ``"greater"`` (the one-sided UMPU test of Theorem 37) tests
        ``w <= w0`` against ``w > w0``; ``"less"`` the mirror image;
        ``"two-sided"`` doubles the smaller one-sided p-value
        (capped at 1), which matches the equal-tailed confidence interval.
    null_odds_ratio : float
        The null odds ratio ``w0 > 0``.  (Formerly ``odds_ratio``, deprecated:
        in :func:`umpu_odds_ratio_power` ``odds_ratio`` is the alternative.)
    noise : frozen distribution or TradeoffFunction, optional
        The noise law instead of ``epsilon``/``delta``: a Tulap given by
        ``(b, q)`` directly (``tulap(b, q)``), another symmetric CND, or a
        tradeoff function whose CND is used (Lemma 36).

    Returns
    -------
    OddsRatioTestResult
        With ``statistic``, ``pvalue``, ``estimate``,
        ``confidence_interval()`` and ``summary()``; ``x11_cell`` and
        ``compares`` say which cell x11 is and which way the odds ratio
        points.

    Raises
    ------
    TypeError
        If ``statistic`` is a table (2 x 2, or four counts without
        ``margins``): the message says to release it with
        :func:`~invariantdp.mechanisms.odds_ratio_release` first.
    InvariantDPError
        A released ``U`` without ``margins``, margins that do not add up, or
        a Release that is not of the x11 of a 2 x 2 table with invariant
        margins (the message names the function and the command that make one).

    Notes
    -----
    The conditional law of ``x11`` is summed on a window of its support that
    grows until the neglected mass is below 1e-17 of the total, so the cost
    grows like the square root of the table total (about 1 ms at 1e8); F is
    evaluated only within ~70/epsilon of ``U``, and a p-value bounded below
    1e-310 (or its mirror below 1e-17) is 0 (or 1) without a sum.  As
    ``epsilon -> inf`` the p-value for ``U = x11`` tends to Fisher's
    one-sided mid-p value.

    References
    ----------
    Cho, J. and Awan, J. "Formal privacy guarantees with invariant
    statistics", Sec. 5.3, Theorem 37, Eq. 5-6; Awan, J. and Vadhan, S.
    (2023), Lemma 47 (Theorem 4.8 there).

    Examples
    --------
    >>> from invariantdp import umpu_odds_ratio_test
    >>> res = umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0)
    >>> round(res.pvalue, 4)  # two-sided
    0.0456
    >>> res = umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0, alternative="greater")
    >>> round(res.pvalue, 4)  # the one-sided test of Eq. 6
    0.0228
    >>> res.confidence_interval().low > 1
    True
    """
    alternative = check_alternative(alternative)
    w0 = check_positive("null_odds_ratio", null_odds_ratio)
    u, margins, tn, labels = _parse(statistic, margins, epsilon, delta, noise)
    text = two_by_two_text(labels)
    t1, _, c1, c2 = margins
    warn_if_impossible(u, max(0, t1 - c2), min(t1, c1), tn, "x11 given the margins")
    p = _pvalue(u, margins, float(np.log(w0)), tn, alternative)
    return OddsRatioTestResult(
        statistic=u,
        pvalue=p,
        alternative=alternative,
        null_odds_ratio=w0,
        margins=margins,
        epsilon=tn.epsilon,
        delta=tn.delta,
        noise=tn.description,
        x11_cell=text.x11,
        compares=text.odds_ratio,
        margin_names=text.margins,
        _noise=tn,
    )


def _size(m, margins, log_w, noise, side):
    """Rejection probability ``E F(H - m)`` ("greater") or ``E F(m - H)``."""
    return float(np.exp(_log_p_one_sided(m, margins, log_w, noise, side)))


def _critical(margins, log_w0, noise, side, alpha) -> float:
    """``m`` with ``E_{w0} F(H - m) = alpha`` (or the mirror for "less")."""
    dist = _law(margins, log_w0)
    q = float(noise.ppf(alpha))  # F(q) = alpha
    if side == "greater":
        lo, hi = dist.lo - q - 1.0, dist.hi - q + 1.0  # size >= alpha at lo, <= at hi
    else:
        lo, hi = dist.lo + q - 1.0, dist.hi + q + 1.0

    def g(m):
        return _size(m, margins, log_w0, noise, side) - alpha

    return bracketed_root(g, lo, hi, decreasing=side == "greater")


def _thresholds(margins, lw0, noise, alternative, alpha):
    """``m(t)`` of the one-sided test, or ``(m_low, m_high)`` of the two at ``alpha / 2``."""
    if alternative == "two-sided":
        return (
            _critical(margins, lw0, noise, "less", alpha / 2.0),
            _critical(margins, lw0, noise, "greater", alpha / 2.0),
        )
    return _critical(margins, lw0, noise, alternative, alpha)


def umpu_odds_ratio_critical_value(
    margins,
    *,
    epsilon=None,
    alpha=0.05,
    delta=0.0,
    alternative="two-sided",
    null_odds_ratio=1.0,
    noise=None,
):
    r"""The threshold ``m(t)`` of the level-``alpha`` UMPU test (Eq. 5).

    The test rejects with probability :math:`\phi^*(x) = F(x_{11} - m(t))`
    for ``alternative="greater"``; equivalently it rejects when the released
    ``U >= m(t)``.  ``m(t)`` solves :math:`E_{H \sim \mathrm{Hyper}(t, w_0)}
    F(H - m) = \alpha` exactly.  For ``"less"`` the test is
    :math:`F(m - x_{11})`; for ``"two-sided"`` the pair ``(m_low, m_high)``
    of the two one-sided tests at ``alpha / 2``.

    Parameters
    ----------
    margins : sequence of 4 int or Release
        ``(t1., t2., t.1, t.2)``, or a Release of
        :func:`~invariantdp.mechanisms.odds_ratio_release` whose margins and
        noise law are used (then give neither ``epsilon``, ``delta`` nor
        ``noise``).
    epsilon, delta : float
        Privacy parameters of the Tulap noise (or give ``noise``).
    alpha : float
        Level, in (0, 1).
    alternative : {"two-sided", "greater", "less"}
        Default "two-sided", as in :func:`umpu_odds_ratio_test`.
    null_odds_ratio : float
        ``w0`` of the null hypothesis.
    noise : frozen distribution or TradeoffFunction, optional
        As in :func:`umpu_odds_ratio_test`.

    Returns
    -------
    float or tuple of float
        ``m(t)``, or ``(m_low, m_high)`` for ``"two-sided"``.

    References
    ----------
    Cho, J. and Awan, J. "Formal privacy guarantees with invariant
    statistics", Theorem 37, Eq. 5.

    Examples
    --------
    >>> from invariantdp import umpu_odds_ratio_critical_value
    >>> m = umpu_odds_ratio_critical_value((20, 20, 20, 20), epsilon=1.0, alternative="greater")
    >>> round(m, 3)
    13.417
    >>> low, high = umpu_odds_ratio_critical_value((20, 20, 20, 20), epsilon=1.0)  # two-sided
    >>> round(low, 3), round(high, 3)
    (5.78, 14.22)
    """
    alpha = check_in_open_unit("alpha", alpha)
    alternative = check_alternative(alternative)
    w0 = check_positive("null_odds_ratio", null_odds_ratio)
    margins, tn = _design(margins, epsilon, delta, noise)
    return _thresholds(margins, float(np.log(w0)), tn, alternative, alpha)


def umpu_odds_ratio_power(
    margins,
    *,
    epsilon=None,
    odds_ratio,
    alpha=0.05,
    delta=0.0,
    alternative="two-sided",
    null_odds_ratio=1.0,
    noise=None,
):
    r"""Exact power of the level-``alpha`` semi-DP UMPU odds-ratio test.

    The power at odds ratio ``w`` given the invariant margins ``t`` is
    :math:`E_{H \sim \mathrm{Hyper}(t, w)} F(H - m(t))` with ``m(t)`` chosen
    so that the size at ``null_odds_ratio`` is exactly ``alpha``
    (Cho & Awan, Theorem 37).  The randomness is that of the confidential
    table given its margins and of the privacy noise.

    Parameters
    ----------
    margins : sequence of 4 int or Release
        ``(t1., t2., t.1, t.2)``, or a Release of
        :func:`~invariantdp.mechanisms.odds_ratio_release` whose margins and
        noise law are used.
    epsilon, delta : float
        Privacy parameters (or give ``noise``).
    odds_ratio : float or array_like
        Odds ratio(s) of the alternative at which to evaluate the power.
    alpha : float
        Level, in (0, 1).
    alternative : {"two-sided", "greater", "less"}
        Default "two-sided", as in :func:`umpu_odds_ratio_test`.
    null_odds_ratio : float
        ``w0`` of the null hypothesis.
    noise : frozen distribution or TradeoffFunction, optional
        As in :func:`umpu_odds_ratio_test`.

    Returns
    -------
    float or numpy.ndarray
        Power, with the shape of ``odds_ratio``.

    References
    ----------
    Cho & Awan, Theorem 37 and Eq. 5 (the threshold whose power this is).

    Examples
    --------
    >>> from invariantdp import umpu_odds_ratio_power
    >>> round(umpu_odds_ratio_power((20, 20, 20, 20), epsilon=1.0, odds_ratio=1.0), 10)
    0.05
    """
    alpha = check_in_open_unit("alpha", alpha)
    alternative = check_alternative(alternative)
    w0 = check_positive("null_odds_ratio", null_odds_ratio)
    margins, tn = _design(margins, epsilon, delta, noise)
    if isinstance(odds_ratio, bool) or (
        isinstance(odds_ratio, np.ndarray) and odds_ratio.dtype == bool
    ):
        raise TypeError(f"`odds_ratio` must hold real numbers, got {odds_ratio!r}.")
    w = check_finite_array("odds_ratio", odds_ratio)
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise InvariantDPError(f"`odds_ratio` ({odds_ratio}) must be finite and > 0.")
    m = _thresholds(margins, float(np.log(w0)), tn, alternative, alpha)
    if alternative == "two-sided":
        m_lo, m_hi = m
        power = [
            _size(m_hi, margins, lw, tn, "greater") + _size(m_lo, margins, lw, tn, "less")
            for lw in np.log(w).ravel()
        ]
    else:
        power = [_size(m, margins, lw, tn, alternative) for lw in np.log(w).ravel()]
    out = np.asarray(power).reshape(w.shape)
    return float(out) if out.ndim == 0 else out
